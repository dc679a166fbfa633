"""Detection end to end (``pipeline.detect``): request checks, 'native', disable-optimization; recorded compilers."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from ccopt_meson import Detection, Request, host, pipeline
from ccopt_meson.errors import InputError

from .conftest import RECORDED, ROOT, FakeCompiler, Recording, detect_doc, need
from .helpers import CACHE, clean_env, cli, configure_args, kv, one_error, x86_gcc


@pytest.mark.parametrize("option,name", [("--baseline", "cpu-baseline"), ("--dispatch", "cpu-dispatch")])
def test_native_when_cross_compiling(tmp_path: Path, option: str, name: str) -> None:
    cc = need("aarch64-linux-gnu-gcc")
    expected = (f"{name}: 'native' cannot be used when cross-compiling", "aarch64 target's",
                "name the target's features instead")
    one_error(cli("detect", "--cc", cc, option, "max native" if name == "cpu-dispatch" else "native"), *expected)
    args = configure_args(tmp_path, cc, option, "native")
    args[args.index("--cpu-family") + 1], args[args.index("--cross") + 1] = "aarch64", "yes"
    one_error(cli(*args), *expected)


@pytest.mark.parametrize("option,value,name", [("--baseline", "avx2", "cpu-baseline"),
                                               ("--dispatch", "avx512f, AVX2", "cpu-dispatch")])
def test_disable_optimization_with_explicit_targets(tmp_path: Path, option: str, value: str, name: str) -> None:
    expected = (f"{name}: '{value.replace(',', '').lower()}' conflicts with disable-optimization=true",
                "unset one of the two")
    one_error(cli("detect", "--cc", "gcc", "--disable-optimization", option, value), *expected)
    one_error(cli(*configure_args(tmp_path, "gcc", option, value, "--disable-optimization")), *expected)


def test_disable_optimization_with_defaults_or_none_is_fine(tmp_path: Path) -> None:
    cc = x86_gcc()
    r = cli(*configure_args(tmp_path, cc, "--baseline", "none", "--dispatch", "max", "--disable-optimization",
                            "--write-config"))
    assert r.returncode == 0, r.stderr
    out = kv(r.stdout)
    assert out["baseline_names"] == [] and out["dispatch_names"] == [] and out["baseline_args"] == []
    assert "#define CCOPT_DISABLE_OPTIMIZATION 1" in (tmp_path / "ccopt_kernel.h").read_text()  # via ccopt_config.h


def test_unknown_language_through_the_api() -> None:
    with pytest.raises(InputError, match="^unknown language 'fortran'; use 'c' or 'cpp'$"):
        detect_doc(Request(command=("fakecc",), lang="fortran"), runner=FakeCompiler())


def test_native_unsupported_by_the_compiler() -> None:
    req = Request(command=("fakecc",), compiler_id="msvc", cpu_family="aarch64", baseline="native", cross=False)
    with pytest.raises(InputError, match="^cpu-baseline: 'native' is not supported by msvc on aarch64; "
                                         "name the features instead$"):
        detect_doc(req, runner=FakeCompiler())


def test_native_refused_by_the_compiler() -> None:
    req = Request(command=("fakecc",), dispatch="max native", cross=False)
    with pytest.raises(InputError) as exc:
        detect_doc(req, runner=FakeCompiler(reject_flags=["-march=native"]))
    assert str(exc.value) == ("cpu-dispatch: 'native' (-march=native) was refused by gcc: "
                              "gcc: error: unrecognized command-line option '-march=native'")


# --------------------------------------------------------------------------- recorded compilers
# Each case replays real compiler output (tests/data/recorded, written by tests/data/record.py) through the
# whole pipeline.  The expected answers are what the real compilers give (test_replay_agrees_with_the_real_compiler).

ALL_X86_BUT_FMA4_XOP_FIRST = ["AVX512_SPR", "AVX512_ICL", "AVX512_CNL", "AVX512_CLX", "X86_V4", "AVX512_SKX"]
AARCH64_MIN = ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]


class Replay(NamedTuple):
    scenario: str  # the FakeCompiler scenario: compiler and target
    fake: dict[str, Any]  # what else FakeCompiler replays
    args: tuple[str, ...]  # the user's compile args
    compiler: tuple[str, str, str]  # id, version, arch
    baseline: list[str]
    dispatch_head: list[str]  # the first dispatch targets, highest first
    unsupported: dict[str, str]  # feature -> reason, for the features the request probes (others must pass)
    real: str  # the real compiler the recording came from


REPLAYS = [
    pytest.param(Replay("gcc12-x86_64", {}, (), ("gcc", "12.2.0", "x86_64"), ["SSE", "SSE2"],
                        ALL_X86_BUT_FMA4_XOP_FIRST, {}, "gcc"), id="gcc12-x86_64-macros"),
    pytest.param(Replay("clang14-x86_64", {"reject_flags": ["-mavx5124fmaps"]}, (), ("clang", "14.0.6", "x86_64"),
                        ["SSE", "SSE2"], ALL_X86_BUT_FMA4_XOP_FIRST[:-1] + ["AVX512_SKX", "AVX512_KNL"],
                        {"AVX512_KNM": "clang: error: unknown argument: '-mavx5124fmaps'"}, "clang"),
                 id="clang14-x86_64-macros+clang14-unknown-flag"),
    pytest.param(Replay("gcc12-aarch64", {}, (), ("gcc", "12.2.0", "aarch64"), AARCH64_MIN,
                        ["SVE", "ASIMDFHM", "ASIMDDP", "ASIMDHP"], {}, "aarch64-linux-gnu-gcc"),
                 id="gcc12-aarch64-macros"),
    pytest.param(Replay("gcc12-aarch64", {}, ("-march=armv8.2-a+dotprod",), ("gcc", "12.2.0", "aarch64"),
                        [*AARCH64_MIN, "ASIMDDP"], ["SVE", "ASIMDFHM", "ASIMDHP"], {}, "aarch64-linux-gnu-gcc"),
                 id="gcc12-aarch64-armv8.2-a+dotprod-macros"),
    pytest.param(Replay("gcc12-aarch64", {}, ("-march=armv8.2-a+fp16+sve",), ("gcc", "12.2.0", "aarch64"),
                        [*AARCH64_MIN, "ASIMDHP", "SVE"], ["ASIMDFHM", "ASIMDDP"], {}, "aarch64-linux-gnu-gcc"),
                 id="gcc12-aarch64-armv8.2-a+fp16+sve-macros"),
    pytest.param(Replay("gcc12-riscv64", {"broken_probes": ["rvv.c"]}, (), ("gcc", "12.2.0", "riscv64"), [], [],
                        {"RVV": "probes/riscv64/rvv.c:2:10: fatal error: riscv_vector.h: No such file or directory"},
                        "riscv64-linux-gnu-gcc"), id="gcc12-riscv64-macros+gcc12-riscv64-rvv-unsupported"),
    pytest.param(Replay("gcc12-s390x", {}, (), ("gcc", "12.2.0", "s390x"), [], ["VXE2", "VXE", "VX"], {},
                        "s390x-linux-gnu-gcc"), id="gcc12-s390x-macros"),
]


def _replayed(r: Replay) -> Detection:
    fake = FakeCompiler(scenario=r.scenario, **r.fake)
    return pipeline.detect(Request(command=("fakecc",), args=r.args), runner=fake)


# numpy's level names (and X86_V*): the heads above list these; the fine-grained features sit beside them
LEVELS = {key.split()[2] for key in json.loads((ROOT / "tests" / "data" / "numpy_levels.json").read_text())
          if not key.startswith("_")} | {"X86_V2", "X86_V3", "X86_V4"}


@pytest.mark.parametrize("r", REPLAYS)
def test_recorded_compiler(r: Replay) -> None:
    det = _replayed(r)
    assert (det.compiler.id, det.compiler.version, det.arch) == r.compiler
    assert [n for n in det.baseline if n in LEVELS] == r.baseline
    assert [n for n in det.dispatch if n in LEVELS][:len(r.dispatch_head)] == r.dispatch_head
    failed = {n: o.reason for n, o in det.outcomes.items() if not o.supported}
    assert failed == r.unsupported


@pytest.mark.parametrize("r", REPLAYS)
def test_replay_agrees_with_the_real_compiler(r: Replay) -> None:
    """The recordings are current: the compiler they came from gives the same answer (CI installs them all)."""
    if r.real in ("gcc", "clang") and host.machine_name() != "x86_64":
        pytest.skip("the recording is of an x86_64 compiler")
    real = pipeline.detect(Request(command=(need(r.real),), args=r.args))
    replayed = _replayed(r)
    assert (real.compiler.id, real.arch, real.baseline, real.dispatch) == \
           (replayed.compiler.id, replayed.arch, replayed.baseline, replayed.dispatch)
    assert real.compiler.version.split(".")[0] == replayed.compiler.version.split(".")[0]
    assert {n: o.reason for n, o in real.outcomes.items() if not o.supported} == r.unsupported


DIAGNOSTICS = [
    pytest.param({"broken_probes": ["avx512f.c"]}, "AVX512F",
                 "probes/x86/avx512f.c:7:12: warning: AVX512F vector return without AVX512F enabled changes the ABI "
                 "[-Wpsabi]", id="gcc12-x86_64-avx512f-unsupported"),
    pytest.param({"reject_flags": ["-mavx512fp16"]}, "AVX512_FP16 AVX512_SPR",  # both spell the flag
                 "gcc: error: unrecognized command-line option '-mavx512fp16'", id="gcc12-unknown-flag"),
    pytest.param({"warn_flags": ["-mxop"]}, "XOP",
                 "cc1: warning: command-line option '-mxop' is valid for C++/D/ObjC++ but not for C",
                 id="gcc12-flag-warning"),
    pytest.param({"warn_flags": ["-mxop"], "scenario": "clang14-x86_64"}, "XOP",
                 "clang: warning: argument unused during compilation: '-mxop' [-Wunused-command-line-argument]",
                 id="clang14-flag-warning"),
    pytest.param({"header_warning": True}, None, None, id="gcc12-x86_64-avx512_knl-header-warning"),
]


def _diagnosed(fake: dict[str, Any]) -> Detection:
    return pipeline.detect(Request(command=("fakecc",)), runner=FakeCompiler(**fake))


@pytest.mark.parametrize("fake,name,reason", DIAGNOSTICS)
def test_recorded_diagnostic(fake: dict[str, Any], name: str | None, reason: str | None) -> None:
    """A recorded diagnostic replayed where gcc 12 (or clang 14) prints it: who fails, and why."""
    det = _diagnosed(fake)
    assert det.table is not None
    names = name.split() if name else []
    failed = {n: o.reason for n, o in det.outcomes.items() if not o.supported and o.reason == reason}
    assert failed == {n: reason for n in names}
    everything_else = [n for n in det.table.features if not det.table.closure([n]) & set(names)]
    assert all(det.supported(n) for n in everything_else)


def test_every_recording_is_recordable_and_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file of tests/data/recorded has its scenario in tests/data/record.py, and some test above reads it."""
    import runpy

    from . import conftest

    scenarios = runpy.run_path(str(ROOT / "tests" / "data" / "record.py"), run_name="recorder")["SCENARIOS"]
    files = {p.stem for p in RECORDED.glob("*.txt")}
    assert files == set(scenarios)
    read: set[str] = set()
    original = conftest.recorded

    def tracking(name: str) -> Recording:
        read.add(name)
        return original(name)

    monkeypatch.setattr(conftest, "recorded", tracking)
    for r in REPLAYS:
        _replayed(r.values[0])
    for d in DIAGNOSTICS:
        _diagnosed(d.values[0])
    assert files - read == set()


# --- untrusted input, bounds and processes (docs/explanation/robustness.md section 9)


@pytest.fixture(scope="module")
def reference() -> dict[str, object]:
    r = cli("detect", "--cc", x86_gcc(), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- a compiler must prove it is one


def test_true_is_not_a_compiler(tmp_path: Path) -> None:
    r = cli("detect", "--cc", "true", "--build-dir", str(tmp_path))
    one_error(r, "'true' printed no predefined macros for an empty file, so it is not a C compiler")
    assert not (tmp_path / CACHE).exists(), "nothing is cached"


def test_the_users_output_name_does_not_redirect_probes(tmp_path: Path, reference: dict[str, object]) -> None:
    """CFLAGS="-o /tmp/f": the probes keep their own -o, the answer is gcc's, and /tmp/f is never written."""
    out = tmp_path / "f"
    for flags in (f"-o {out}", f"-o{out}"):
        r = cli("detect", "--cc", x86_gcc(), "--json", env={"CFLAGS": flags})
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert (doc["baseline"], doc["dispatch"]) == (reference["baseline"], reference["dispatch"])
        assert not out.exists()


@pytest.mark.parametrize("odd", ['a"b', "a'b", "a$b", "a b", "a\\b", "\u00e4\u00df\u00e7"])
def test_the_package_path_changes_no_verdict(tmp_path: Path, odd: str) -> None:
    """gcc writes every file's path into its assembly's ``# line`` markers, and gas stops at a '"' there:
    probes are compiled from the scratch directory, so where the package lives changes nothing, not even
    the process count.  Run from another directory, so the copy (not the checkout) is what is imported."""
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    docs = {}
    for name in ("plain", odd):
        checkout = tmp_path / name
        shutil.copytree(ROOT / "ccopt_meson", checkout / "ccopt_meson", ignore=shutil.ignore_patterns("__pycache__"))
        where = subprocess.run([sys.executable, "-c", "import ccopt_meson; print(ccopt_meson.__file__)"],
                               capture_output=True, text=True, cwd=elsewhere,
                               env=clean_env(PYTHONPATH=str(checkout)))
        assert where.stdout.strip() == str(checkout / "ccopt_meson" / "__init__.py")
        r = cli("detect", "--cc", x86_gcc(), "--dispatch", "max", "--json", pythonpath=checkout, cwd=elsewhere)
        assert r.returncode == 0, r.stderr
        docs[name] = json.loads(r.stdout)
    plain, quoted = docs["plain"], docs[odd]
    verdicts = {n: f["supported"] for n, f in plain["features"].items()}
    assert {n: f["supported"] for n, f in quoted["features"].items()} == verdicts
    assert (quoted["baseline"], quoted["dispatch"], quoted["probes"]) == (plain["baseline"], plain["dispatch"],
                                                                         plain["probes"])
    assert quoted["probes"] <= 3


# --------------------------------------------------------------------------- explain's names


@pytest.mark.parametrize("names,expected", [
    (["avx2 "], ["AVX2"]),
    (["avx2,sse41"], ["AVX2", "SSE41"]),
    (["avx2", " AVX2,"], ["AVX2"]),
])
def test_explain_names_with_separators(names: list[str], expected: list[str]) -> None:
    r = cli("explain", *names, "--cc", x86_gcc(), "--json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    answers = json.loads(r.stdout)
    assert [a["name"] for a in answers] == expected
    assert all(a["status"] in ("baseline", "dispatch") for a in answers)
    text = cli("explain", *names, "--cc", x86_gcc()).stdout
    assert "None" not in text and "feature;" not in text


@pytest.mark.parametrize("name", ["+avx2", "avx2,-sse41", "avx2+sse41", "max", "avx2 min"])
def test_explain_refuses_what_is_not_a_feature_name(name: str) -> None:
    one_error(cli("explain", name, "--cc", "gcc"), f"explain: '{name}' is not a feature name; "
              "'ccopt-meson features' lists them")


def test_explain_of_a_foreign_feature_names_its_architecture() -> None:
    r = cli("explain", "asimd", "--cc", x86_gcc())
    assert r.returncode == 0
    assert r.stdout == "ASIMD: not available: ASIMD is an arm feature; this compiler targets x86_64\n"


# --------------------------------------------------------------------------- global state


def test_detect_changes_no_umask_and_files_get_it(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        detect_doc(Request(command=("fakecc",)), build_dir=tmp_path, runner=FakeCompiler())
        assert os.umask(0o027) == 0o027, "the process umask is left alone"
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / CACHE).stat().st_mode) == 0o640


# --------------------------------------------------------------------------- the batch started ahead of the dump


def _applies(req: Request) -> bool:
    return pipeline._Ahead.applies(req, pipeline.expressions(req), None)


def test_the_batch_started_ahead_is_used_when_the_dump_agrees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gcc = x86_gcc()
    # min: a baseline the guess can select before the dump (detect needs the dump's macros)
    req = Request(command=(gcc,), compiler_id="gcc", cpu_family="x86_64", cross=False, baseline="min",
                  dispatch="avx2 avx512_skx")
    assert _applies(req)
    taken: list[object] = []
    take = pipeline._Ahead.take
    monkeypatch.setattr(pipeline._Ahead, "take", lambda self, *a: taken.append(take(self, *a)) or taken[-1])
    det = pipeline.detect(req)
    assert len(taken) == 1 and taken[0], "the verdicts of the batch begun beside the dump were used"
    plain = pipeline.detect(req._replace(cpu_family=None))  # no guess to make: dump, then batch
    assert det.probes == plain.probes == 2
    assert (det.baseline, det.dispatch, det.outcomes) == (plain.baseline, plain.dispatch, plain.outcomes)


def test_a_wrong_guess_is_thrown_away(tmp_path: Path) -> None:
    """Meson's word is only a guess: a compiler that targets another machine gets that machine's answer."""
    cross = need("aarch64-linux-gnu-gcc")
    req = Request(command=(cross,), compiler_id="gcc", cpu_family="x86_64", cross=False, dispatch="max")
    assert _applies(req)
    det = pipeline.detect(req)
    right = pipeline.detect(req._replace(cpu_family="aarch64", cross=True))
    assert det.arch == "aarch64" and (det.baseline, det.dispatch) == (right.baseline, right.dispatch)
    # and the one batch begun for x86_64, thrown away (stopped before its compiler started, or after)
    assert right.probes <= det.probes <= right.probes + 1


def test_no_guess_where_meson_names_no_single_machine() -> None:
    base = Request(command=("cc",), compiler_id="gcc", cpu_family="x86_64", cross=False)
    assert not _applies(base._replace(cross=True))
    assert not _applies(base._replace(cross=None))
    assert not _applies(base._replace(compiler_id=None))
    assert not _applies(base._replace(baseline="native"))
    assert not _applies(base._replace(args=("-march=native",)))
    ppc = [m for m in pipeline.machines() if m.meson_cpu_family == "ppc64"]
    if len(ppc) > 1:  # big- and little-endian POWER share Meson's cpu_family
        assert not _applies(base._replace(cpu_family="ppc64"))


def test_no_probe_ahead_where_targets_need_flag_checks_of_their_own() -> None:
    """ARM's merged '-march=...+ext' flags get one check per target after the batch: a probe ahead,
    which may run one process, would be thrown away each time."""
    arm = pipeline._table(Request(command=("cc",)), pipeline.Probed("aarch64", "gcc", "", {}))
    x86 = pipeline._table(Request(command=("cc",)), pipeline.Probed("x86_64", "gcc", "", {}))
    assert arm is not None and x86 is not None
    assert pipeline._merges_flags(arm, {"ASIMDDP"}) and not pipeline._merges_flags(x86, set(x86.features))


def test_a_listed_name_the_compiler_cannot_build_is_one_note_with_its_reason(tmp_path: Path) -> None:
    """clang 14 has no AVX512_KNM flags: a cpu-dispatch naming it says so at configure time (once, with the
    compiler's words), instead of dropping it without a word; a name under 'max' stays with explain."""
    if host.machine_name() != "x86_64":
        pytest.skip("x86 names")
    clang = need("clang")
    det = pipeline.detect(Request(command=(clang,), dispatch="avx512_knm avx2 avx512_knm"), build_dir=tmp_path)
    if det.supported("AVX512_KNM"):
        pytest.skip("this clang builds AVX512_KNM")
    dropped = [n for n in det.notes if "dropped" in n]
    assert len(dropped) == 1 and dropped[0].startswith("cpu-dispatch: AVX512_KNM dropped: the compiler cannot "
                                                       "build it (") and "-mavx5124fmaps" in dropped[0], det.notes
    again = pipeline.detect(Request(command=(clang,), dispatch="avx512_knm avx2"), build_dir=tmp_path)
    assert again.probes == 0 and [n for n in again.notes if "dropped" in n] == dropped
    assert not [n for n in pipeline.detect(Request(command=(clang,)), build_dir=tmp_path / "max").notes
                if "dropped" in n]


def test_a_cpu_picked_in_the_compiler_command_counts_as_in_the_args(tmp_path: Path) -> None:
    """CC="gcc -march=haswell": every object is compiled with -march=haswell, but the baseline was 'min' (SSE3)
    and 50 dispatch versions were built below it; the same flag in c_args was detected.  The command's own
    arguments (Meson's cc.cmd_array() past its programs) count as the args do: the same baseline, request text,
    flags and dispatch, in-process (a recorded aarch64 -march=) and with the real gcc, as Meson passes it."""
    in_command = detect_doc(Request(command=("fakecc", "-march=armv8.2-a+dotprod")),
                            runner=FakeCompiler(scenario="gcc12-aarch64"))
    in_args = detect_doc(Request(command=("fakecc",), args=("-march=armv8.2-a+dotprod",)),
                         runner=FakeCompiler(scenario="gcc12-aarch64"))
    assert "ASIMDDP" in in_args["baseline"]["names"]
    for part in ("baseline", "dispatch"):
        assert in_command[part] == in_args[part]
    gcc = x86_gcc()
    configure = [*configure_args(tmp_path / "cmd", gcc), "--cc-arg=-march=haswell"]
    (tmp_path / "cmd").mkdir()
    r = cli(*configure)
    assert r.returncode == 0, r.stderr
    lines = kv(r.stdout)
    assert {"AVX2", "FMA3", "X86_V3"} <= set(lines["baseline_names"]), lines["baseline_names"]
    assert "AVX2" not in lines["dispatch_names"]
    assert " ".join(lines["baseline_request"]) == "'detect' + what -march=haswell enables"
    (tmp_path / "args").mkdir()
    r = cli(*configure_args(tmp_path / "args", gcc), "--arg=-march=haswell")
    assert r.returncode == 0, r.stderr
    same = ("baseline_names", "baseline_args", "dispatch_names", "baseline_request", "target:BASELINE")
    assert {k: v for k, v in kv(r.stdout).items() if k in same} == {k: v for k, v in lines.items() if k in same}


def test_the_warning_about_a_min_feature_names_its_real_reason_and_the_baseline(tmp_path: Path) -> None:
    """A 'min' row that failed for the project's own disable or a rejected flag got the missing-SDK warning,
    "so no SIMD is used", beside an SSE SSE2 baseline: now the disable's reason, the rejected flag or the
    failed probe, and the baseline actually used."""
    from ccopt_meson import project

    features = tmp_path / "ccopt.json"
    features.write_text(json.dumps({"override": {"x86": [{"name": "SSE3", "disable": "not in our kernels"}]}}))
    det = pipeline.detect(Request(command=("fakecc",), project=project.load(features)), runner=FakeCompiler())
    [warning] = [n for n in det.notes if n.startswith("warning: ")]
    assert det.baseline == ("SSE", "SSE2")
    assert warning == ("warning: SSE3, which every x86_64 CPU has, is disabled (not in our kernels), so the "
                       "baseline is SSE SSE2 (-msse -msse2)")
    det = pipeline.detect(Request(command=("fakecc",)), runner=FakeCompiler(reject_flags=["-msse3"]))
    [warning] = [n for n in det.notes if n.startswith("warning: ")]
    assert det.baseline == ("SSE", "SSE2")
    assert warning.startswith("warning: compiler 'fakecc' rejects -msse3, the flag of SSE3, which every x86_64 CPU "
                              "has (") and "so the baseline is SSE SSE2 (-msse -msse2): give SSE3 flags" in warning
    assert "SDK" not in warning and "no SIMD" not in warning
    r = cli("detect", "--json", "--cc", f"{need('clang')} --target=arm64-apple-macos11")  # no macOS SDK here
    [warning] = [n for n in json.loads(r.stdout)["notes"] if n.startswith("warning: ")]
    assert "cannot compile NEON, which every aarch64 CPU has (" in warning and "macOS SDK" in warning
    assert "so the baseline is none (no SIMD is used): " in warning


# --------------------------------------------------------------------------- a target the user's CPU choice keeps out


def test_a_target_the_users_march_keeps_from_building_is_named_with_its_cause() -> None:
    """-mcpu=cortex-a72 names an armv8.0 CPU: gcc 12 warns that -march=armv8.2-a conflicts with it, so ASIMDHP's
    +fp16 goes onto that -mcpu, where arm_neon.h's fp16 intrinsics fail.  The target is not built, and one warning
    names it, the user's flag, the flags it became and the compiler's reason; with -march=armv8-a (which
    armv8.2-a keeps) it is built on the fork's line."""
    cc = need("aarch64-linux-gnu-gcc")
    det = pipeline.detect(Request(command=(cc,), args=("-mcpu=cortex-a72",), dispatch="asimdhp", cross=True))
    assert det.dispatch == () and not det.outcomes["ASIMDHP"].supported
    warned = [n for n in det.notes if n.startswith("warning: ")]
    assert len(warned) == 1, det.notes
    assert warned[0].startswith("warning: ASIMDHP cannot be built under the compile args' -mcpu=cortex-a72: its "
                                "flags become -mcpu=cortex-a72+fp16 (")
    assert "target specific option mismatch" in warned[0] and "later CPU or architecture" in warned[0]
    det = pipeline.detect(Request(command=(cc,), args=("-march=armv8-a",), dispatch="asimdhp", cross=True))
    assert det.dispatch == ("ASIMDHP",) and det.target_flags("ASIMDHP") == ["-march=armv8.2-a+fp16"]
    assert not [n for n in det.notes if n.startswith("warning: ")]
