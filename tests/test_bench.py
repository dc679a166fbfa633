"""Smoke test of the benchmark: ``python -m bench --reps 1 --quick`` and the shape of its JSON record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, need

pytestmark = pytest.mark.slow

FIGURES = (
    ["ccopt_cold", "ccopt_cold_native", "ccopt_warm", "python_pass", "call_ns_direct", "call_ns_dispatched"]
    + [f"meson_{phase}_{p}" for phase in ("setup", "reconfigure", "regen") for p in ("ccopt", "plain", "simd")]
)
TARGETS = ["cold_detect", "cached_detect", "regen_overhead", "setup_overhead", "avx2_speedup"]


def test_quick_benchmark_writes_its_record(tmp_path: Path) -> None:
    need("gcc")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "bench", "--reps", "1", "--quick", "--out", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    doc = json.loads((out / "results.json").read_text())

    assert doc["schema_version"] == 1 and doc["reps"] == 1 and doc["warmup"] == 1 and doc["quick"] is True
    assert doc["elapsed_s"] < 150  # about 25 s on an idle 2-core machine; the bound leaves room for a busy CI
    for key in ("cpu", "cores", "gcc", "meson", "ninja", "python"):
        assert doc["machine"][key], key
    for key in FIGURES:
        fig = doc["figures"][key]
        assert len(fig["runs"]) == 1 and fig["min"] <= fig["median"] <= fig["max"] and fig["median"] > 0, key
    assert not any(k.startswith("numpy_") for k in doc["figures"])  # --quick skips the numpy venv
    assert "numpy" in doc["skipped"]

    assert [t["key"] for t in doc["targets"]] == TARGETS
    results = {t["key"]: t["result"] for t in doc["targets"]}
    assert results["cold_detect"] == "SKIP"
    assert all(results[k] in ("PASS", "MISS") for k in TARGETS[1:])
    for t in doc["targets"]:
        assert t["passed"] is {"PASS": True, "MISS": False, "SKIP": None}[t["result"]]

    assert doc["counts"]["ccopt_cold_processes"] == doc["counts"]["ccopt_cold_reported"] >= 1
    assert doc["counts"]["ccopt_regen_from_cache"] is True
    for kernel in ("dot", "poly"):
        entry = doc["dispatch"][kernel]
        assert entry["picked"] in entry["targets"] and "BASELINE" in entry["targets"]
        for t in entry["targets"].values():
            assert t["kernel"] and t["gflops"]["median"] > 0 and t["ns_per_call"]["median"] > 0
    assert "regen_overhead_pct" in doc["ratios"] and "setup_overhead_s" in doc["ratios"]

    md = (out / "results.md").read_text()
    assert "| Measurement | ccopt-meson |" in md and "| Target | Measured | Result |" in md
    assert md in r.stdout
