"""Probing with a scripted fake compiler: batching, attribution, pruning, warnings."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

from ccopt_meson import Request, fsio, tables
from ccopt_meson.errors import CompilerError, InputError
from ccopt_meson.probe import (
    MAX_TIMEOUT,
    SCRATCH_MARK,
    STALE_AFTER,
    ProcResult,
    Scratch,
    diagnose,
    run_process,
    timeout_from_env,
)
from ccopt_meson.tables import PROBES_DIR

from .conftest import ROOT, FakeCompiler, detect_doc, need
from .helpers import FAKECC, alive, clean_env, cli, configure_args, fakecc, one_error, x86_gcc


def run(fake: Any, **kw: Any) -> dict[str, Any]:
    req = Request(command=("fakecc",), baseline=kw.pop("baseline", "min"), dispatch=kw.pop("dispatch", "max"),
                  cpu_family=kw.pop("cpu_family", None))
    return detect_doc(req, runner=fake, **kw)


def test_all_pass_in_one_batch(fake: Callable[..., Any]) -> None:
    cc = fake()
    doc = run(cc)
    assert doc["arch"] == "x86_64" and doc["compiler"]["id"] == "gcc" and doc["compiler"]["version"] == "12.2.0"
    assert doc["baseline"]["names"] == ["SSE", "SSE2", "SSE3"]
    highest = tables.table_for("x86_64", "gcc").sort(tables.table_for("x86_64", "gcc").features)[-1]
    assert doc["dispatch"]["names"][0] == highest and "AVX512_SPR" in doc["dispatch"]["names"]
    assert doc["probes"] == 2 == len(cc.calls)  # one macro dump, one batched compile


def test_broken_probe_is_attributed_and_pruned_upwards(fake: Callable[..., Any]) -> None:
    cc = fake(broken_probes=["avx512f.c"])
    doc = run(cc)
    f = doc["features"]
    # gcc 12's first word on AVX512F intrinsics without -mavx512f is a -Wpsabi warning located in the probe
    assert f["AVX512F"]["supported"] is False and f["AVX512F"]["reason"] == (
        "probes/x86/avx512f.c:7:12: warning: AVX512F vector return without AVX512F enabled changes the ABI [-Wpsabi]")
    assert f["AVX512_SKX"]["reason"] == "requires AVX512F, which is unsupported"
    assert f["AVX2"]["supported"] is True
    # dump, batch, the suspect alone (its error is also located in gcc's avx512fintrin.h), batch without it
    assert doc["probes"] == 4


def test_rejected_flag_is_attributed_to_its_feature(fake: Callable[..., Any]) -> None:
    doc = run(fake(reject_flags=["-mavx512fp16"]))
    spr = doc["features"]["AVX512_SPR"]
    assert spr["supported"] is False and "-mavx512fp16" in spr["reason"]
    assert "AVX512_ICL" in doc["dispatch"]["names"]


def test_flag_accepted_with_a_warning_counts_as_unsupported(fake: Callable[..., Any]) -> None:
    doc = run(fake(warn_flags=["-mxop"]))
    assert doc["features"]["XOP"]["supported"] is False
    assert doc["features"]["XOP"]["reason"] == ("cc1: warning: command-line option '-mxop' is valid for "
                                                "C++/D/ObjC++ but not for C")


def test_warning_inside_a_compiler_header_costs_nothing(fake: Callable[..., Any]) -> None:
    doc = run(fake(header_warning=True))
    assert doc["features"]["AVX512_KNL"]["supported"] is True


def test_unknown_arch_from_meson_gives_no_features_not_an_error(fake: Callable[..., Any]) -> None:
    # Meson vouches for the compiler (cpu_family given): the project configures, without SIMD
    doc = run(fake(macros="#define __GNUC__ 12\n#define __sparc__ 1\n"), cpu_family="sparc64")
    assert doc["arch"] == "unknown" and doc["baseline"]["names"] == [] and doc["dispatch"]["names"] == []


def test_unknown_arch_without_meson_is_an_error_naming_the_macros(fake: Callable[..., Any]) -> None:
    with pytest.raises(CompilerError, match=r"targets an architecture no feature table knows .*__sparc__"):
        run(fake(macros="#define __GNUC__ 12\n#define __sparc__ 1\n"))


def test_aarch64_cross_compiler_is_detected_from_macros(fake: Callable[..., Any]) -> None:
    doc = run(fake(scenario="gcc12-aarch64"), dispatch="asimdhp asimddp asimdfhm sve")
    assert doc["arch"] == "aarch64"
    assert doc["baseline"]["names"] == ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
    assert doc["baseline"]["args"] == []
    assert doc["dispatch"]["names"] == ["SVE", "ASIMDFHM", "ASIMDDP", "ASIMDHP"]


def test_an_aarch64_cross_probe_is_three_processes(fake: Callable[..., Any]) -> None:
    """Each target's merged -march=armv8.2-a+ext was checked by a macro dump of its own (14 processes cold); one
    compile of '#pragma GCC target' sections reads them all: the dump, the batch, that compile."""
    cc = fake(scenario="gcc12-aarch64")
    doc = run(cc)
    assert doc["probes"] == 3 == len(cc.calls) and sum("-dM" in c for c in cc.calls) == 1
    assert {"SVE", "ASIMDFHM", "ASIMDDP", "ASIMDHP"} <= set(doc["dispatch"]["names"])


# --------------------------------------------------------------------------- what flags enable, from the compiler

LIKE_ROWS = [  # (like, flags, built-in features the flags enable that the inherited test does not check)
    ("AVX2", ["-march=haswell"], ["FMA3", "BMI1", "BMI2"]),
    ("AVX2", ["-march=x86-64-v3"], ["FMA3", "BMI1", "BMI2"]),
    ("SSE41", ["-msse4"], ["SSE42"]),
]


def _one_row(tmp_path: Path, like: str, flags: Sequence[str], **fields: Any) -> Any:
    from ccopt_meson import project

    row = {"name": "L3", "like": like, "interest": 1, "implies": [], "flags": {"gnu": list(flags)}, **fields}
    (tmp_path / "f.json").write_text(json.dumps({"feature_set": {"x86": {"features": [row]}}}))
    return project.load(tmp_path / "f.json")


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the rows are x86_64 ones, for the host's compilers")
@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize(("like", "flags", "named"), LIKE_ROWS)
def test_a_rows_flags_enable_what_the_compiler_says(tmp_path: Path, compiler: str, like: str, flags: list[str],
                                                    named: list[str]) -> None:
    """L3 like AVX2 with -march=haswell kept AVX2's one CPUID bit (only -m switches were read): picked under
    Haswell,-fma, its FMA code died.  The compiler's predefined macros under the row's flags name what they
    enable; a row whose test misses one is not built, with the reason (and in at most 3 processes: gcc reads
    every flag set in one compile, clang in a dump per set)."""
    from ccopt_meson import detect

    # as Meson asks: the batch starts beside the dump (gcc: with one process more, for the reading)
    det = detect(Request(command=(need(compiler),), baseline="none", dispatch="l3", compiler_id=compiler,
                         cpu_family="x86_64", cross=False, project=_one_row(tmp_path, like, flags)))
    out = det.outcomes["L3"]
    assert not out.supported and "predefined macros say" in out.reason, out
    assert all(re.search(rf"\b{n}\b", out.reason.split("(")[0]) for n in named), out.reason
    assert det.dispatch == () and any(n.startswith("cpu-dispatch: L3 dropped") for n in det.notes)
    assert any(n.startswith("warning: L3 is not built: L3's flags") for n in det.notes)
    assert det.probes <= 3


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the rows are x86_64 ones, for the host's compilers")
def test_a_row_is_judged_beyond_what_the_users_args_enable(tmp_path: Path, gcc: str) -> None:
    """With -march=haswell in the user's args every CPU the build runs on has SSE4.2: -msse4 adds nothing."""
    from ccopt_meson import detect

    det = detect(Request(command=(gcc,), args=("-march=haswell",), baseline="none", dispatch="l3",
                         project=_one_row(tmp_path, "SSE41", ["-msse4"])))
    assert det.outcomes["L3"].supported and "L3" in det.baseline  # the user's -march= covers it: detect


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the rows are x86_64 ones, for the host's compilers")
def test_a_clang_only_override_is_read_under_clang(tmp_path: Path, gcc: str, clang: str) -> None:
    """The same row is built by gcc (its -m switches widened its test) and not by clang (-march=haswell)."""
    from ccopt_meson import detect

    proj = _one_row(tmp_path, "AVX2", ["-mavx2"],
                    overrides=[{"when": {"compiler": "clang"}, "flags": ["-march=haswell"]}])
    for cc, built in ((gcc, True), (clang, False)):
        det = detect(Request(command=(cc,), baseline="none", dispatch="l3", project=proj))
        assert det.outcomes["L3"].supported is built, (cc, det.outcomes["L3"])


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="an x86_64 row, for the host's gcc")
def test_a_macro_the_pragma_leaves_alone_is_read_by_a_dump_where_it_decides(tmp_path: Path, gcc: str) -> None:
    """GCC defines __GCC_HAVE_SYNC_COMPARE_AND_SWAP_16 (cmpxchg16b, one of X86_V2's macros) at start-up only: a
    '#pragma GCC target("arch=x86-64-v2")' section never showed it, and a row like POPCNT with -march=x86-64-v2
    was built with a test that checks neither cx16 nor lahf.  Its set is read by a dump of its own; -msse4.2
    -mpopcnt, which cannot enable X86_V2 (no lahf), costs none."""
    from ccopt_meson import detect

    sse42 = {"*": {"cpuid": [[1, 0, "ecx", bit] for bit in (0, 9, 19, 20, 23)], "xcr0": 0}}  # to SSE4.2, POPCNT
    det = detect(Request(command=(gcc,), baseline="none", dispatch="l3",
                         project=_one_row(tmp_path, "POPCNT", ["-march=x86-64-v2"], runtime=sse42)))
    assert not det.outcomes["L3"].supported and "enable X86_V2 (gcc's" in det.outcomes["L3"].reason
    assert det.probes == 4  # the user's args, the batch, the folded reading, the dump of L3's set
    det = detect(Request(command=(gcc,), baseline="none", dispatch="l3",
                         project=_one_row(tmp_path, "POPCNT", ["-msse4.2", "-mpopcnt"], runtime=sse42)))
    assert det.outcomes["L3"].supported and det.probes <= 3


def test_a_section_the_pragma_cannot_state_or_gcc_refuses_gets_a_dump(tmp_path: Path) -> None:
    """read_macros: one compile for the flag sets GCC's target pragma states; a set it refuses (an unknown
    +extension) and a set the pragma cannot hold (-fno-...) are read by a dump each, the refusal with its line."""
    from ccopt_meson.probe import Session, read_macros

    cc = need("aarch64-linux-gnu-gcc")
    wanted = {("-march=armv8.2-a+dotprod",): ["__ARM_FEATURE_DOTPROD", "__ARM_FEATURE_SVE"],
              ("-march=armv8.2-a+nonsense",): ["__ARM_FEATURE_DOTPROD"],
              ("-fno-strict-aliasing", "-march=armv8.2-a+sve"): ["__ARM_FEATURE_SVE", "__ARM_ARCH>=8"],
              ("-DSOMETHING=3", "-march=armv8.2-a"): ["SOMETHING>=3", "__ARM_FEATURE_DOTPROD"]}
    with Scratch() as scratch:
        session = Session(scratch, [cc], [], "c", tables.compiler_spec("gcc").driver)
        facts = read_macros(session, wanted)
        assert scratch.processes == 3  # the sections, then a dump for each set left
    assert facts[("-march=armv8.2-a+dotprod",)] == (frozenset({"__ARM_FEATURE_DOTPROD"}), "")
    assert facts[("-march=armv8.2-a+nonsense",)][0] is None and "nonsense" in facts[("-march=armv8.2-a+nonsense",)][1]
    assert facts[("-fno-strict-aliasing", "-march=armv8.2-a+sve")][0] == {"__ARM_FEATURE_SVE", "__ARM_ARCH>=8"}
    assert facts[("-DSOMETHING=3", "-march=armv8.2-a")][0] == {"SOMETHING>=3"}


def test_native_is_refused_when_cross_compiling(fake: Callable[..., Any]) -> None:
    with pytest.raises(Exception, match="'native' cannot be used when cross-compiling"):
        run(fake(scenario="gcc12-aarch64"), baseline="native")


def test_broken_compiler_is_an_error_naming_it(fake: Callable[..., Any]) -> None:
    cc = fake(reject_flags=["-dM"])
    with pytest.raises(CompilerError, match="compiler 'fakecc' failed on an empty file"):
        run(cc)


def test_diagnose_classifies_lines() -> None:
    owners = {"/p/avx2.c": "AVX2"}
    d = diagnose("/usr/include/x.h:3:1: warning: meh\n", 0, owners, {})
    assert not d.bad
    d = diagnose("clang: warning: argument unused during compilation: '-mavx2'\n", 0, owners, {"-mavx2": ["AVX2"]})
    assert d.bad and d.attributed == {"AVX2": "clang: warning: argument unused during compilation: '-mavx2'"}
    d = diagnose("cl : Command line warning D9002 : ignoring unknown option '/arch:AVX9'\n", 0, owners, {})
    assert d.bad and d.unattributed
    d = diagnose("", -11, owners, {})
    assert d.bad and "signal" in d.unattributed[0]


def test_a_compiler_that_writes_nothing_is_an_error(fake: Callable[..., Any]) -> None:
    """Like `true`: exit 0 without an object file must not make every feature "supported"."""

    cc = fake()

    def lazy(argv: Any, timeout: float) -> ProcResult:
        res: ProcResult = cc(argv, timeout)
        if "-o" in argv:
            Path(argv[argv.index("-o") + 1]).unlink()
        return res

    with pytest.raises(CompilerError, match="cannot compile a trivial C file.*exited 0 but wrote no object file"):
        run(lazy)


def test_msvc_style_driver_checks_conflicting_arch_flags_by_compiling(tmp_path: Path) -> None:
    """/arch: flags conflict, so each feature's own /arch:X is verified with a compile, not a macro dump."""
    from ccopt_meson.probe import ProcResult

    calls: list[list[str]] = []

    def cl(argv: Any, timeout: float) -> ProcResult:
        argv = list(argv)
        calls.append(argv)
        out = next(a[3:] for a in argv if a.startswith("/Fo"))
        Path(out).write_bytes(b"")
        return ProcResult(0, "")

    doc = detect_doc(Request(command=("cl",), compiler_id="msvc", cpu_family="x86_64", cross=False), runner=cl)
    assert {"AVX", "AVX2", "AVX512_SKX", "SSE42"} <= set(doc["dispatch"]["names"])
    assert doc["features"]["AVX512_SPR"]["supported"] is False  # a table entry with a reason
    assert any("/arch:AVX2" in a for a in calls[-1] + sum(calls, []))


# --------------------------------------------------------------------------- compilers that misbehave (tests/fakecc)


def test_compiler_not_found(tmp_path: Path) -> None:
    one_error(cli(*configure_args(tmp_path, "/nonexistent/bin/cc")),
              "compiler not found: '/nonexistent/bin/cc' (No such file or directory); set CC or pass --cc")
    one_error(cli("detect", "--cc", "no-such-compiler-ccopt"), "compiler not found: 'no-such-compiler-ccopt'")


def test_compiler_not_executable(tmp_path: Path) -> None:
    cc = tmp_path / "noexec"
    shutil.copy(FAKECC / "noexec", cc)
    cc.chmod(0o644)  # whatever the checkout did to the mode
    one_error(cli("detect", "--cc-arg", str(cc)), f"compiler '{cc}' is not executable (Permission denied)")


def test_compiler_not_a_program() -> None:
    one_error(cli("detect", "--cc-arg", fakecc("not-a-program")),
              f"cannot run compiler '{fakecc('not-a-program')}': Exec format error; check that it is a program")


def test_compiler_that_cannot_compile_anything() -> None:
    need("gcc")
    one_error(cli("detect", "--cc-arg", fakecc("nocompile")),
              f"compiler '{fakecc('nocompile')}' cannot compile a trivial C file (exit status 4): "
              "fakecc: internal compiler error: out of cheese")


def test_hanging_compiler_times_out_and_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    # The fake compiler never ends: cli()'s own timeout fails the test if the helper waited for it.
    r = cli("detect", "--cc-arg", fakecc("hang"), env={"CCOPT_PROBE_TIMEOUT": "2", "FAKECC_PIDFILE": str(pidfile)})
    one_error(r, f"compiler '{fakecc('hang')}' did not finish within 2 s; check that it works, or raise "
                 "CCOPT_PROBE_TIMEOUT")
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids), "the compiler's children must die with it"


def test_interrupt_kills_the_compiler(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    env = clean_env()
    env.update(PYTHONPATH=str(ROOT), FAKECC_PIDFILE=str(pidfile))
    # A parent (a test runner worker) may ignore SIGINT, which the child would inherit: restore Python's handler.
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "signal.signal(signal.SIGHUP, signal.SIG_DFL); signal.signal(signal.SIGTERM, signal.SIG_DFL); "
            "from ccopt_meson.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.Popen([sys.executable, "-c", code, "detect", "--cc-arg", fakecc("hang")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        kill_everything(proc, pidfile)
    assert proc.returncode == 1 and err == "ccopt-meson: error: interrupted\n"
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)


@pytest.mark.parametrize("value", ["abc", "-1", "inf"])
def test_bad_probe_timeout(value: str) -> None:
    one_error(cli("detect", "--cc", "gcc", env={"CCOPT_PROBE_TIMEOUT": value}),
              f"CCOPT_PROBE_TIMEOUT: '{value}' is not a positive, finite number of seconds; unset it to use the "
              "default (120)")


def test_probe_timeout_reaches_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float] = []

    def runner(argv: Sequence[str], timeout: float) -> Any:
        seen.append(timeout)
        raise CompilerError("stop")

    monkeypatch.setenv("CCOPT_PROBE_TIMEOUT", " 7.5 ")
    with pytest.raises(CompilerError):
        detect_doc(Request(command=("fakecc",)), runner=runner)
    assert seen == [7.5]


def test_non_utf8_output_is_harmless(host_gcc_default: dict[str, Any]) -> None:
    r = cli("detect", "--cc-arg", fakecc("nonutf8"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["baseline"], doc["dispatch"]) == (host_gcc_default["baseline"], host_gcc_default["dispatch"])


def test_compiler_accepting_every_flag_with_a_warning() -> None:
    x86_gcc()
    r = cli("detect", "--cc-arg", fakecc("warn-all"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["baseline"]["names"] == [] and doc["dispatch"]["names"] == []
    table = tables.table_for("x86_64", "gcc")
    for name, feat in doc["features"].items():
        assert feat["supported"] is False, name
        own = table.features[name].flags
        if own:
            assert feat["reason"].startswith("fakecc: warning: option '-m"), (name, feat["reason"])
            assert any(f"'{flag}'" in feat["reason"] for flag in own), (name, feat["reason"])
        else:
            assert feat["reason"].startswith("requires "), (name, feat["reason"])


def test_compiler_refusing_some_flags(host_gcc_default: dict[str, Any]) -> None:
    r = cli("detect", "--cc-arg", fakecc("refuse-avx512f"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    feats = doc["features"]
    assert feats["AVX512F"] == {**feats["AVX512F"], "supported": False,
                                "reason": "fakecc: error: unrecognized command-line option '-mavx512f'"}
    table = tables.table_for("x86_64", "gcc")
    above = {n for n in table.features if "AVX512F" in table.closure([n])}
    assert {"AVX512_SKX", "AVX512_SPR", "X86_V4"} <= above
    for name in above - {"AVX512F"}:
        assert feats[name]["supported"] is False and feats[name]["reason"] == "requires AVX512F, which is unsupported"
    assert feats["AVX2"]["supported"] is True and feats["X86_V3"]["supported"] is True
    assert doc["dispatch"]["names"] == [n for n in host_gcc_default["dispatch"]["names"] if n not in above]
    assert doc["baseline"] == host_gcc_default["baseline"]


def test_spaces_quotes_and_no_shell(tmp_path: Path) -> None:
    """Compiler path and arguments reach the compiler verbatim, as argv elements: no shell anywhere."""
    x86_gcc()
    odd = tmp_path / "dir with space; $(touch pwned1) `touch pwned2` 'q' \"dq\"" / "my cc"
    odd.parent.mkdir()
    shutil.copy(FAKECC / "record", odd)
    odd.chmod(0o755)
    log = tmp_path / "argv.log"
    tricky = ['-DX="a b"', "-DP=$(touch pwned3)", "-DQ=1;touch pwned4", "-DR=`touch pwned5`", "-DS=a\\ b|touch pwned6"]
    r = cli(*configure_args(tmp_path / "build", str(odd), *[f"--arg={a}" for a in tricky]),
            env={"FAKECC_LOG": str(log)}, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls and all(c[0] == str(odd) and c[1:1 + len(tricky)] == tricky for c in calls)
    r = cli("detect", "--cc", f"{shlex.quote(str(odd))} '-DY=c d'", "--args", "-DX=\"a b\" -DZ=1",
            env={"FAKECC_LOG": str(log)},
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    last = json.loads(log.read_text().splitlines()[-1])
    assert last[:4] == [str(odd), "-DY=c d", "-DX=a b", "-DZ=1"]
    assert not list(tmp_path.rglob("pwned*")) and not list(ROOT.glob("pwned*"))


def test_fakecc_scripts_are_executable() -> None:
    """The scripts must be committed with their executable bit (noexec on purpose without it)."""
    for path in FAKECC.iterdir():
        if path.name in ("README.md", "noexec"):
            continue
        assert path.stat().st_mode & stat.S_IXUSR, f"{path.name} lost its executable bit"
        assert path.read_bytes().startswith(b"#!") or path.name == "not-a-program"


# --- untrusted input, bounds and processes (docs/explanation/robustness.md section 9)
AARCH64_MACROS = "#define __aarch64__ 1\n#define __GNUC__ 12\n#define __ARM_NEON 1\n"
ARM_NEON_H = "/usr/lib/gcc-cross/aarch64-linux-gnu/12/include/arm_neon.h"


# --------------------------------------------------------------------------- helpers


def script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def wait_for(predicate: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# --------------------------------------------------------------------------- blame


class SharedHeaderFailure(FakeCompiler):
    """gcc 12 on aarch64 when one feature's probe calls an intrinsic its flags do not enable.

    The error is located in arm_neon.h and its include chain names the FIRST probe that included
    the header (NEON's), whatever feature's code failed; the culprit appears only in a note.
    Recorded from aarch64-linux-gnu-gcc 12.2 (a PMULL probe compiled without +crypto); here the
    culprit is ASIMDDP's probe.
    """

    def __init__(self, culprit: str = "asimddp.c") -> None:
        super().__init__(macros=AARCH64_MACROS)
        self.culprit = PROBES_DIR / "arm" / culprit

    def _error(self, included_from: str) -> str:
        return (f"In file included from {included_from},\n"
                f"{ARM_NEON_H}: In function 'ccopt_probe_asimddp':\n"
                f"{ARM_NEON_H}:23601:1: error: inlining failed in call to 'always_inline' 'vdotq_u32': "
                "target specific option mismatch\n"
                "23601 | vdotq_u32 (uint32x4_t __r, uint8x16_t __a, uint8x16_t __b)\n"
                "      | ^~~~~~~~~\n"
                f"{self.culprit}:7:19: note: called from here\n"
                "    7 |     uint32x4_t d = vdotq_u32(a, b, c);\n")

    def __call__(self, argv: Sequence[str], timeout: float) -> ProcResult:
        if "-c" in argv:
            src = Path(argv[list(argv).index("-c") + 3])
            if src.parts[-2:] == ("arm", self.culprit.name):  # the probe alone (its copy in the scratch)
                self.calls.append(list(argv))
                return ProcResult(1, self._error(f"{self.culprit}:2"))
            if "arm/asimddp.c" in src.read_text() and src.parent.name != "arm":  # the batch
                self.calls.append(list(argv))
                return ProcResult(1, self._error(f"{PROBES_DIR}/arm/neon.c:2,\n                 from {src}:1"))
        return super().__call__(argv, timeout)


def test_a_failure_inside_a_shared_header_costs_only_the_feature_that_fails_alone() -> None:
    doc = detect_doc(Request(command=("fakecc",), dispatch="asimdhp asimddp asimdfhm sve"),
                     runner=SharedHeaderFailure())
    f = doc["features"]
    assert doc["baseline"]["names"] == ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
    assert f["NEON"]["supported"] is True and f["NEON"]["reason"] == ""
    assert f["ASIMDDP"]["supported"] is False and "inlining failed" in f["ASIMDDP"]["reason"]
    assert doc["dispatch"]["names"] == ["SVE", "ASIMDFHM", "ASIMDHP"]


def test_a_header_failure_no_suspect_fails_alone_falls_back_to_one_by_one() -> None:
    """The chain names NEON, NEON compiles alone, and the note names no probe: nobody is blamed
    on the batch's word; each feature is probed alone, and only the real culprit fails."""

    class Anonymous(SharedHeaderFailure):
        def _error(self, included_from: str) -> str:
            return super()._error(included_from).replace(f"{self.culprit}:7:19: note", "<inlined>: note")

    cc = Anonymous()
    doc = detect_doc(Request(command=("fakecc",)), runner=cc)
    assert doc["baseline"]["names"] == ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
    assert doc["features"]["ASIMDDP"]["supported"] is False
    assert doc["features"]["SVE"]["supported"] is True


# --------------------------------------------------------------------------- output and status


def test_compiler_output_is_capped(tmp_path: Path) -> None:
    """200 MB of output: the first LIMITS.compiler_output bytes are kept, the rest is read and dropped."""
    res = run_process(["sh", "-c", "head -c 200000000 /dev/zero | tr '\\0' w; exit 3"], 60)
    assert res.returncode == 3
    cap = fsio.LIMITS.compiler_output
    assert cap <= len(res.output) < cap + 200
    assert res.output.endswith(f"[{200_000_000 - cap} more bytes of compiler output were dropped]\n")


def test_a_noisy_compiler_costs_no_memory(tmp_path: Path) -> None:
    """A compiler printing 200 MB of warnings on the batched compile: a correct answer, a small helper."""
    gcc = need("gcc")
    noisy = script(tmp_path / "noisy", f"""case "$*" in
  *-I*) head -c 200000000 /dev/zero | tr '\\0' w >&2; echo >&2; echo "fakecc: warning: noise" >&2 ;;
esac
exec {gcc} "$@"
""")
    code = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    env = clean_env()
    env["PYTHONPATH"] = str(ROOT)
    r = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "ccopt_meson", "detect", "--cc-arg", noisy],
                       capture_output=True, text=True, env=env, timeout=600)
    rc, max_rss_kib = map(int, r.stdout.split())
    assert rc == 0
    assert max_rss_kib < 400 * 1024, f"{max_rss_kib} KiB"  # was 2 GB


def test_exit_zero_with_a_warning_keeps_its_real_status(tmp_path: Path) -> None:
    gcc = need("gcc")
    cc = script(tmp_path / "nagging", f'echo "fakecc: warning: licence expires in 3 days" >&2\nexec {gcc} "$@"\n')
    r = cli("detect", "--cc-arg", cc)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr == (f"ccopt-meson: error: compiler '{cc}' printed a diagnostic for an empty file (exit status 0): "
                        "fakecc: warning: licence expires in 3 days\n")


# --------------------------------------------------------------------------- timeout


def test_huge_probe_timeout_is_clamped_with_a_message(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setenv("CCOPT_PROBE_TIMEOUT", "99999999")
    assert timeout_from_env() == MAX_TIMEOUT
    assert capsys.readouterr().err == ("ccopt-meson: warning: CCOPT_PROBE_TIMEOUT: '99999999' seconds is more than "
                                       "the maximum, 86400 (a day); using 86400\n")


def test_huge_probe_timeout_through_the_cli() -> None:
    need("gcc")
    r = cli("detect", "--cc", "gcc", env={"CCOPT_PROBE_TIMEOUT": "99999999"})
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == ["ccopt-meson: warning: CCOPT_PROBE_TIMEOUT: '99999999' seconds is more than "
                                     "the maximum, 86400 (a day); using 86400"]


# --------------------------------------------------------------------------- processes


def start_helper(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """The CLI with Python's own SIGINT handler and the default SIGTERM/SIGHUP (a test runner may ignore
    SIGINT, a run under nohup ignores SIGHUP, and children inherit that: the helper leaves an ignored signal
    ignored, as it must for a caller that chose so)."""
    full = clean_env("FAKECC_")
    full.update(PYTHONPATH=str(ROOT), TMPDIR=str(tmp_path / "tmp"), **env)
    (tmp_path / "tmp").mkdir()
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "signal.signal(signal.SIGHUP, signal.SIG_DFL); signal.signal(signal.SIGTERM, signal.SIG_DFL); "
            "from ccopt_meson.cli import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.Popen([sys.executable, "-c", code, *args], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def kill_everything(proc: subprocess.Popen[str], pidfile: Path) -> None:
    """For a test's ``finally``: the helper's process group, then each fake compiler's own group (the
    helper starts every compiler in a session of its own), found by the ``sleep`` pids the fakes
    recorded, so a failing test leaves no process behind.  A pid is killed only while it still is a
    ``sleep``: a pid the system reused belongs to someone else."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.kill()
    proc.wait()
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    for pid in (int(p) for p in pidfile.read_text().split()) if pidfile.exists() else ():
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].rsplit(b"/", 1)[-1] != b"sleep":
                continue
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except (OSError, IndexError):
            pass


def pids_of(pidfile: Path, count: int = 1) -> list[int]:
    assert wait_for(lambda: pidfile.exists() and len(pidfile.read_text().split()) >= count, 30), "no compiler started"
    return [int(p) for p in pidfile.read_text().split()]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_termination_kills_the_compiler_group_and_removes_scratch(tmp_path: Path, sig: signal.Signals) -> None:
    pidfile = tmp_path / "pids"
    hang = str(ROOT / "tests" / "fakecc" / "hang")
    proc = start_helper(tmp_path, "detect", "--cc-arg", hang, env={"FAKECC_PIDFILE": str(pidfile)})
    try:
        pids = pids_of(pidfile)
        assert list((tmp_path / "tmp").glob("ccopt-*")), "the scratch directory exists while the compiler runs"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        kill_everything(proc, pidfile)
    assert (proc.returncode, err) == (128 + sig, f"ccopt-meson: error: terminated by {sig.name}\n")
    assert wait_for(lambda: not any(alive(p) for p in pids), 5), "the compiler's children must die with it"
    assert list((tmp_path / "tmp").iterdir()) == [], "scratch directories are removed"


def test_ctrl_c_ends_the_parallel_fallback_at_once(tmp_path: Path) -> None:
    """The batch fails without naming a file, so every feature is probed alone, in parallel; those
    compiles hang for an hour and the probe timeout is an hour too.  Ctrl-C must end the helper and
    kill every compile: the helper ending at all (within the generous bound) shows it did not wait."""
    gcc = need("gcc")
    pidfile = tmp_path / "pids"
    cc = script(tmp_path / "stuck", f"""case "$*" in
  *-I*) echo "fakecc: error: out of licences"; exit 1 ;;
  *probes/*) sleep 3600 & echo $! >> "{pidfile}"; wait; exit 1 ;;
esac
exec {gcc} "$@"
""")
    proc = start_helper(tmp_path, "detect", "--cc-arg", cc, env={"CCOPT_PROBE_TIMEOUT": "3600"})
    try:
        pids_of(pidfile)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=300)  # a bound for a loaded machine, far below the hour
    finally:
        kill_everything(proc, pidfile)
    assert proc.returncode == 1 and err == "ccopt-meson: error: interrupted\n", err
    pids = [int(p) for p in pidfile.read_text().split()]
    assert wait_for(lambda: not any(alive(p) for p in pids), 60), "every compile is killed with the helper"
    assert list((tmp_path / "tmp").iterdir()) == []


def test_the_cleanup_of_a_failed_test_leaves_no_compiler_behind(tmp_path: Path) -> None:
    """What the ``finally`` of the tests above does when a test fails before the helper has cleaned
    up (here: the helper is never interrupted): every hanging compile and its ``sleep`` die."""
    pidfile = tmp_path / "pids"
    proc = start_helper(tmp_path, "detect", "--cc-arg", str(FAKECC / "hang"),
                        env={"FAKECC_PIDFILE": str(pidfile), "CCOPT_PROBE_TIMEOUT": "3600"})
    try:
        pids = pids_of(pidfile)
    finally:
        kill_everything(proc, pidfile)
    assert wait_for(lambda: not any(alive(p) for p in pids), 60)


def test_scratch_left_by_a_killed_helper_is_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL cannot be caught; the next helper removes what a dead one left, and nothing else."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    old = time.time() - STALE_AFTER - 60
    stale = tmp_path / f"ccopt-{dead.pid}-abc123xy"
    young = tmp_path / f"ccopt-{dead.pid}-young123"
    running = tmp_path / f"ccopt-{os.getpid()}-mine1234"
    other = tmp_path / "ccopt-notapid"
    for d in (stale, young, running, other):
        (d / "sub").mkdir(parents=True)
        (d / "sub" / "p1.c").write_text("int x;\n")
        (d / SCRATCH_MARK).write_text(fsio.MARK)
    for d in (stale, running, other):
        os.utime(d, (old, old))
    with Scratch(runner=lambda argv, timeout: ProcResult(0, "")) as scratch:
        assert scratch.dir.name.startswith(f"ccopt-{os.getpid()}-")
        left = sorted(p.name for p in tmp_path.iterdir())
    assert not stale.exists()
    assert left == sorted([young.name, running.name, other.name, scratch.dir.name])


@pytest.mark.parametrize("name", ["ccopt-2024-release-notes", "ccopt-{pid}-abcdefgh", "ccopt-{pid}-notes"])
def test_a_directory_without_ccopts_mark_is_never_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           name: str) -> None:
    """Every probing run deleted any $TMPDIR/ccopt-<digits>-* directory two days old whose 'pid' was not
    running, e.g. a user's ccopt-2024-release-notes/: only mkdtemp's names holding our mark are ours."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    mine = tmp_path / name.format(pid=dead.pid)
    (mine / "notes.txt").parent.mkdir()
    (mine / "notes.txt").write_text("a user's file\n")
    old = time.time() - STALE_AFTER - 60
    os.utime(mine, (old, old))
    with Scratch(runner=lambda argv, timeout: ProcResult(0, "")):
        pass
    assert (mine / "notes.txt").read_text() == "a user's file\n"


@pytest.mark.parametrize("args", [("-MD", "-MF", "deps.d"), ("-MMD", "-MFdeps.d"), ("-Wp,-MD,deps.d",),
                                  ("-save-temps=cwd",), ("--save-temps",), ("-aux-info", "deps.d")])
def test_probes_never_write_the_users_output_files(tmp_path: Path, args: tuple[str, ...]) -> None:
    """Probes kept the user's output-naming options: -MD -MF deps.d overwrote the user's deps.d, -save-temps=cwd
    left .i/.s files in the directory the helper ran in."""
    gcc = x86_gcc()
    (tmp_path / "deps.d").write_text("the user's\n")
    r = cli("detect", "--cc", gcc, "--json", *(f"--arg={a}" for a in args), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deps.d"]
    assert (tmp_path / "deps.d").read_text() == "the user's\n"
    assert json.loads(r.stdout)["features"]["SSE2"]["supported"] is True


def test_a_full_scratch_disk_is_one_line(tmp_path: Path) -> None:
    """A temp dir with a few KiB free was an OSError traceback: every write of the scratch is one line."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    scratch = Scratch(runner=lambda argv, timeout: ProcResult(0, ""))
    with pytest.raises(CompilerError, match=r"cannot write the probes' scratch directory .*: No space left on device; "
                                            "free space there or point TMPDIR at another directory"):
        scratch.write(Path("/dev/full"), b"int x;\n" * 10000)
    assert not scratch.dir.exists()  # closed: nothing left behind


def test_a_nearly_full_temp_dir_through_the_cli(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", str(tiny)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root in a mount namespace)")
    try:
        (tiny / "fill").write_bytes(b"\0" * 8192)
        r = cli("detect", "--cc", need("gcc"), env={"TMPDIR": str(tiny)})
        one_error(r, "No space left on device")
    finally:
        subprocess.run(["umount", str(tiny)], check=False)


def test_a_probe_source_is_read_bounded_like_every_input(tmp_path: Path) -> None:
    """Staging a probe into the scratch directory reads it through fsio.read_bounded: a FIFO put where a
    project's probe was is one error line, not a hang, and a probe that went away says so."""
    from ccopt_meson.probe import Session
    from ccopt_meson.tables import compiler_spec

    fifo = tmp_path / "fifo_probe.c"
    os.mkfifo(fifo)
    with Scratch(runner=lambda argv, timeout: ProcResult(0, "")) as scratch:
        session = Session(scratch, ["gcc"], [], "c", compiler_spec("gcc").driver)
        with pytest.raises(InputError, match="probe source .*fifo_probe.c.* FIFO"):
            session.stage(fifo)
        with pytest.raises(InputError, match="probe source .*gone.c' does not exist"):
            session.stage(tmp_path / "gone.c")
        real = tmp_path / "real.c"
        real.write_text("int ccopt_probe_real(void) { return 0; }\n")
        assert session.stage(real).read_text() == real.read_text()


F23_FILE_WRITERS = [  # (compiler, its words; "F" is the user's file)
    ("clang", ("-MJ", "F")), ("clang", ("-MJF",)), ("clang", ("-foptimization-record-file=F",)),
    ("clang", ("-ftime-trace",)), ("clang", ("-ftime-trace=.",)), ("clang", ("-fsave-optimization-record",)),
    ("clang", ("--serialize-diagnostics", "F")), ("clang", ("-fproc-stat-report=F",)),
    ("gcc", ("--coverage", "-fprofile-note=F")),
]


@pytest.mark.parametrize("where", ["args", "command"])
@pytest.mark.parametrize(("compiler", "words"), F23_FILE_WRITERS, ids=[" ".join(w) for _, w in F23_FILE_WRITERS])
def test_probes_never_write_the_users_files_nor_where_they_run(tmp_path: Path, compiler: str,
                                                                   words: tuple[str, ...], where: str) -> None:
    """clang's -MJ F, -foptimization-record-file=F and gcc's -fprofile-note=F overwrote the user's F; clang's
    -ftime-trace and -fsave-optimization-record wrote '-.json' (named after the macro dump's stdout) into the
    directory the helper ran in, which under Meson is the subproject's source.  In c_args or in CC alike."""
    cc = need(compiler)
    (tmp_path / "F").write_text("the user's\n")
    given = [f"--arg={w}" for w in words] if where == "args" else ["--arg=-O2"]
    command = [cc] if where == "args" else [cc, *words]
    r = cli("detect", "--json", *(f"--cc-arg={w}" for w in command), *given, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["F"]
    assert (tmp_path / "F").read_text() == "the user's\n"
    assert json.loads(r.stdout)["baseline"]["names"], "the probes still pass"


@pytest.mark.parametrize(("driver", "words", "kept"), [
    ("gnu", ["-MJ", "F", "-MJF", "-O2", "-ftime-trace-granularity=1", "-fdiagnostics-format=sarif-file"], ["-O2"]),
    ("gnu", ["-fdiagnostics-add-output=sarif:file=F", "--serialize-diagnostics", "F", "-mavx2"], ["-mavx2"]),
    ("clang-cl", ["/clang:-MJ", "/clang:F", "/clang:-MJF", "-ftime-trace", "/clang:-fsave-optimization-record",
                  "/clang:-foptimization-record-file=F", "/clang:--serialize-diagnostics", "/clang:F", "/O2"], ["/O2"]),
    ("msvc", ["/clang:-MJ", "/clang:F", "/clang:-ftime-trace=.", "/arch:AVX2"], ["/arch:AVX2"]),
])
def test_the_data_drops_every_file_writing_spelling(driver: str, words: list[str], kept: list[str]) -> None:
    """What no compiler here can run (gcc 13's sarif-file, gcc 15's add-output, clang-cl), checked on the data:
    each value-taking form drops its value too, from the args and from the command's own words."""
    from ccopt_meson.probe import Session

    spec = tables.compilers_data()["drivers"][driver]
    with Scratch(runner=lambda argv, timeout: ProcResult(0, "")) as scratch:
        assert Session(scratch, ["cc"], words, "c", spec).args == kept
        in_command = Session(scratch, ["ccache", "cc", *words], [], "c", spec)
        assert (in_command.programs, in_command.args) == (["ccache", "cc"], kept)
