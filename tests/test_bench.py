"""Smoke test of the benchmark: ``python -m bench --reps 1 --quick`` and the shape of its JSON record;
the scale part's generated consumers and its targets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import call_cost, consumers
from bench.report import avx2_goal, scale_goals
from bench.timing import Bench

from .conftest import ROOT, need

FIGURES = (
    ["ccopt_cold", "ccopt_cold_native", "ccopt_warm", "python_pass", "call_ns_direct", "call_ns_dispatched",
     "call_ns_trace_unset", "call_ns_trace_on", "call_ns_picked"]
    + [f"meson_{phase}_{p}" for phase in ("setup", "reconfigure", "regen") for p in ("ccopt", "plain", "simd")]
)
TARGETS = ["cold_detect", "regen_overhead", "setup_overhead", "avx2_speedup", "scale_regen_simd2", "scale_regen_simd60",
           "scale_regen_simd200", "scale_setup_simd2", "scale_setup_simd", "scale_reconfigure_simd2",
           "scale_setup_fork", "scale_vs_fork", "trace_unset_cost"]
SCALE_FIGURES = [f"scale2_{phase}_{v}" for phase in ("setup", "reconfigure", "regen", "noop")
                 for v in ("ccopt", "simd", "plain")]


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
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    doc = json.loads((out / "results.json").read_text())

    assert doc["schema_version"] == 2 and doc["reps"] == 1 and doc["warmup"] == 1 and doc["quick"] is True
    assert isinstance(doc["elapsed_s"], float) and doc["elapsed_s"] > 0  # reported, never bounded: load is no failure
    for key in ("cpu", "cores", "gcc", "meson", "ninja", "python"):
        assert doc["machine"][key], key
    for key in FIGURES + SCALE_FIGURES + ["helper_configure_hit", "helper_targets_hit", "python_S_pass"]:
        fig = doc["figures"][key]
        assert len(fig["runs"]) == 1 and fig["min"] <= fig["median"] <= fig["max"] and fig["median"] > 0, key
    assert not any(k.startswith("numpy_") for k in doc["figures"])  # --quick skips the numpy venv
    assert "numpy" in doc["skipped"]

    assert [t["key"] for t in doc["targets"]] == TARGETS
    results = {t["key"]: t["result"] for t in doc["targets"]}
    measured = ("regen_overhead", "setup_overhead", "avx2_speedup", "scale_regen_simd2", "scale_setup_simd2",
                "scale_reconfigure_simd2", "trace_unset_cost")
    assert all(results[k] in ("PASS", "MISS") for k in measured)
    assert all(results[k] == "SKIP" for k in TARGETS if k not in measured)  # numpy, N=60 and 200, the fork
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

    scale = doc["scale"]
    assert scale["sizes"] == [2] and scale["variants"] == ["ccopt", "simd", "plain"]  # --quick: no fork
    counts = scale["counts"]["2"]
    assert len({c["output"] for c in counts.values()}) == 1  # every variant computes the same sums
    assert counts["ccopt"]["regen_recompiled"] == 0  # headers rewritten only when they change
    assert counts["ccopt"]["regen_helper_processes"] == 2 and counts["ccopt"]["setup_processes"] >= 1
    assert counts["plain"]["objects"] == 3  # two kernels and main.c, once
    assert counts["ccopt"]["objects"] > counts["simd"]["objects"] > counts["plain"]["objects"]
    # Meson's model: the subproject's options and run-time targets are ccopt's alone
    assert counts["ccopt"]["subproject_options"] > 0 == counts["simd"]["subproject_options"]
    assert counts["ccopt"]["meson_targets"] > counts["plain"]["meson_targets"] >= 2
    assert counts["ccopt"]["ninja_edges"] > counts["plain"]["ninja_edges"] > 0
    prof = scale["profiles"]["2"]["ccopt"]
    assert prof["total_s"] > 0 and any("interpreting" in k for k in prof["spots_s"])
    parts = scale["regen_parts"]["2"]  # Meson's parts of a regeneration: only ccopt runs a helper
    helper = "run_command(): the helper runs"
    assert parts["ccopt"][helper] > 0 and helper not in parts["simd"]
    assert all(p["regeneration (interpreting, backend, saving)"] > 0 for p in parts.values())
    assert "numpy_fork" in doc["skipped"]

    md = (out / "results.md").read_text()
    assert "### Meson at numpy scale" in md and "### Cache hits against" in md
    assert "| Measurement | ccopt-meson |" in md and "| Target | Measured | Result |" in md
    assert "| i8dot (int8 dot product into int32, compute-bound): " in md
    assert md in r.stdout


@pytest.mark.slow
def test_call_cost_part_times_the_dispatcher_with_and_without_trace(tmp_path: Path) -> None:
    """``--parts calls``: the three variants, paired, their two ratios and the goal; the run with
    CCOPT_TRACE=1 printed the line naming the picked version in a release build (NDEBUG), the others
    nothing (behaviour, not timing)."""
    need("gcc")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "bench", "--reps", "2", "--quick", "--parts", "calls", "--out",
                        str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    doc = json.loads((out / "results.json").read_text())
    for key in ("call_ns_trace_unset", "call_ns_trace_on", "call_ns_picked"):
        fig = doc["figures"][key]
        assert fig["unit"] == "ns" and len(fig["runs"]) == 2 and 0 < fig["min"] <= fig["median"] <= fig["max"], key
    for name in ("trace_unset_over_on", "trace_unset_over_picked"):
        lo, hi = doc["ratio_ranges"][name]
        assert lo <= doc["ratios"][name] <= hi and lo > 0, name
    entry = doc["dispatch"]["call_cost"]
    assert entry["calls"] == call_cost.QUICK_CALLS
    assert entry["trace_line"] == f"ccopt: step: {entry['picked']} ({trace_reason(entry['picked'])})"
    goal = next(t for t in doc["targets"] if t["key"] == "trace_unset_cost")
    assert goal["result"] in ("PASS", "MISS") and goal["value"] == doc["ratios"]["trace_unset_over_on"]
    md = (out / "results.md").read_text()
    assert "| (a) step() through the dispatcher, CCOPT_TRACE unset, ns per call |" in md
    assert "(c) the picked version through a pointer (the floor)" in md


def trace_reason(target: str) -> str:
    """What ccopt_cpu_trace says after a target's name: its members present, or the baseline's reason."""
    if target == "BASELINE":
        return "no compiled version above the baseline runs on this CPU"
    return target.replace("__", " ") + " present"


def test_scale_sources_cycle_through_numpys_lists() -> None:
    lists = consumers.numpy_lists()
    assert len(lists) == 22
    srcs = consumers.sources(45)
    assert [s.origin for s in srcs[:22]] == [str(x["header"]) for x in lists]
    assert srcs[22].dispatch == srcs[0].dispatch and srcs[44].origin == srcs[0].origin
    arithm_fp = next(s for s in srcs if s.origin == "loops_arithm_fp.dispatch.h")
    assert consumers.ccopt_statement(arithm_fp) == "baseline (AVX2 FMA3) SSE2 ASIMD NEON VSX3 VSX2 VXE VX"
    assert consumers.fork_target(["AVX2", "FMA3"]) == "[AVX2, FMA3]"
    argsort = next(s for s in srcs if s.origin == "x86_simd_argsort.dispatch.h")
    assert not argsort.baseline and consumers.ccopt_statement(argsort) == "AVX512_SKX AVX2"


def test_every_recorded_feature_name_is_in_the_tables() -> None:
    from ccopt_meson.tables import all_feature_names

    known = set(all_feature_names())
    names = {n for s in consumers.numpy_lists() for t in s["dispatch"] for n in (t if isinstance(t, list) else [t])}
    assert names <= known, sorted(names - known)


def test_unstable_simd_keeps_only_what_it_can_express() -> None:
    src = consumers.Source(0, "x", True, ("AVX512_SKX", ["AVX2", "FMA3"], "AVX2", "SSE42", "SSE2", "XOP", "AVX2"))
    assert consumers.simd_isets(src) == ["avx2", "sse42"]  # no AVX-512, FMA3 group, XOP; SSE2 is baseline


def test_scale_goals_say_by_how_much(tmp_path: Path) -> None:
    b = Bench(reps=1, quick=True, out=tmp_path, work=tmp_path, env={}, meson=[], ninja="ninja")
    b.scale = {"sizes": [2, 60, 200]}
    ratios = {"scale2_regen_ccopt_over_simd": 0.98, "scale60_regen_ccopt_over_simd": 1.1,
              "scale200_regen_ccopt_over_simd": 1.05, "scale2_setup_ccopt_over_simd": 1.25,
              "scale60_setup_ccopt_over_simd": 1.8, "scale2_reconfigure_ccopt_over_simd": 1.2,
              "scale60_setup_ccopt_over_fork": 0.2, "scale60_reconfigure_ccopt_over_fork": 0.9,
              "scale60_regen_ccopt_over_fork": 0.8, "scale200_regen_ccopt_over_fork": 1.1,
              "scale2_regen_ccopt_over_fork": 0.5}
    ranges = {k: [v, v] for k, v in ratios.items()}
    regen2, regen60, regen200, setup2, setup60, reconf2, setup_fork, fork = scale_goals(b, ratios, ranges)
    assert regen2["result"] == "PASS" and reconf2["result"] == "PASS" and setup_fork["result"] == "PASS"
    assert regen60["result"] == "MISS" and "1.10x over the target" in regen60["measured"]
    assert regen200["result"] == "MISS" and "1.05x over the target" in regen200["measured"]
    assert setup2["result"] == "MISS" and "1.04x over the target" in setup2["measured"]
    assert setup60["result"] == "MISS" and "1.38x over the target" in setup60["measured"]
    assert fork["result"] == "MISS" and fork["value"] == 1.1 and "N=2 regen 0.50x" in fork["measured"]


def test_the_fork_comes_from_the_one_numpy_fetcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench.numpy_fork takes the sdist from examples/numpy/prepare_numpy.py's fetch (the index's file,
    sha256-pinned, nothing built), unpacks only the parts a consumer needs, once, and never half."""
    import io
    import tarfile

    from bench import numpy_fork

    prepare = numpy_fork._prepare_numpy()
    sdist = tmp_path / "numpy-2.2.6.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        for name in ("meson_cpu/meson.build", "vendored-meson/meson/meson.py", "numpy/_core/meson.build"):
            data = b"# part\n"
            info = tarfile.TarInfo(f"numpy-2.2.6/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    calls: list[str] = []
    monkeypatch.setattr(prepare, "fetch", lambda version: calls.append(version) or sdist)
    cache = tmp_path / "cache"
    tree = numpy_fork.fetch(cache)
    assert calls == ["2.2.6"] and (tree / "meson_cpu" / "meson.build").is_file()
    assert not (tree / "numpy" / "_core").exists()  # only the parts
    assert (tree / ".complete").read_text().strip() == prepare.release("2.2.6").sha256
    assert numpy_fork.fetch(cache) == tree and calls == ["2.2.6"]  # unpacked once
    assert [p.name for p in cache.iterdir()] == ["numpy-2.2.6"]  # no partial tree left beside it

    def offline(version: str) -> Path:
        raise prepare.FetchError("cannot reach the index")

    monkeypatch.setattr(prepare, "fetch", offline)
    from bench.timing import BenchError

    with pytest.raises(BenchError, match="cannot reach the index"):  # the bench skips the fork, one line
        numpy_fork.fetch(tmp_path / "other")
