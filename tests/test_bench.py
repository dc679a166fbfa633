"""Smoke test of the benchmark: ``python -m bench --reps 1 --quick`` and the shape of its JSON record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.report import avx2_goal

from .conftest import ROOT, need

FIGURES = (
    ["ccopt_cold", "ccopt_cold_native", "ccopt_warm", "python_pass", "call_ns_direct", "call_ns_dispatched"]
    + [f"meson_{phase}_{p}" for phase in ("setup", "reconfigure", "regen") for p in ("ccopt", "plain", "simd")]
)
TARGETS = ["cold_detect", "cached_detect", "regen_overhead", "setup_overhead", "avx2_speedup"]


def test_avx2_goal_names_both_compute_bound_kernels() -> None:
    ranges = {"i8dot_X86_V3_speedup": [3.1, 3.4], "poly_X86_V3_speedup": [2.8, 2.9]}
    met = avx2_goal({"i8dot_X86_V3_speedup": 3.25, "poly_X86_V3_speedup": 2.85}, ranges)
    assert met["result"] == "PASS" and met["passed"] is True and met["value"] == 3.25
    assert "i8dot (int8) 3.25x" in met["measured"] and "poly (float) 2.85x" in met["measured"]
    assert "met by i8dot" in met["measured"] and "rounds 2.80–2.90x" in met["measured"]
    assert met["kernels"] == {"i8dot": 3.25, "poly": 2.85}

    missed = avx2_goal({"i8dot_X86_V3_speedup": 2.6, "poly_X86_V3_speedup": 2.85}, {})
    assert missed["result"] == "MISS" and missed["value"] == 2.6
    assert "i8dot (int8) 2.60x" in missed["measured"] and "poly (float) 2.85x" in missed["measured"]
    assert "met by neither" in missed["measured"]

    assert avx2_goal({"poly_X86_V3_speedup": 3.1}, {})["result"] == "PASS"  # a record from before i8dot
    skipped = avx2_goal({}, {})
    assert skipped["result"] == "SKIP" and skipped["passed"] is None and skipped["value"] is None


@pytest.mark.slow
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
    for kernel in ("dot", "poly", "i8dot"):
        entry = doc["dispatch"][kernel]
        assert entry["picked"] in entry["targets"] and "BASELINE" in entry["targets"]
        for t in entry["targets"].values():
            assert t["kernel"] and t["gflops"]["median"] > 0 and t["ns_per_call"]["median"] > 0
    assert doc["figures"]["i8dot_gflops_BASELINE"]["unit"] == "GOP/s"
    goal = next(t for t in doc["targets"] if t["key"] == "avx2_speedup")
    if "X86_V3" in doc["dispatch"]["i8dot"]["targets"]:  # both compute-bound kernels, each with its ratio
        assert "i8dot (int8)" in goal["measured"] and "poly (float)" in goal["measured"]
        assert goal["value"] == doc["ratios"]["i8dot_X86_V3_speedup"]
    assert "regen_overhead_pct" in doc["ratios"] and "setup_overhead_s" in doc["ratios"]

    md = (out / "results.md").read_text()
    assert "| Measurement | ccopt-meson |" in md and "| Target | Measured | Result |" in md
    assert "| i8dot (int8 dot product into int32, compute-bound): " in md
    assert md in r.stdout
