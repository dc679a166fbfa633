"""Windows, for real: mingw-w64 cross builds of the example and the fixture projects, run under wine.

Every build here is configured by Meson with ``tests/cross/x86_64-w64-mingw32.ini`` (wine as the
``exe_wrapper``), so detection runs with the mingw compiler at configure time and the runtime's
``_WIN32`` branches run in a Windows process.  On this machine's CPU, ``ccopt-cpu-info.exe``
under wine must report what ``/proc/cpuinfo`` shows, and the environment masks must steer the
pick.  The i686 build is compiled and linked only: without 32-bit wine (i386 multiarch), wine
prints "wine32 is missing" and exits 0, so a run proves nothing unless its output says it ran.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from ccopt_meson import Request
from ccopt_meson.probe import ProcResult
from ccopt_meson.tables import table_for

from .conftest import ROOT, X86_MACROS, detect_doc, need
from .helpers import clean_env
from .test_fine_features import PICKS
from .test_meson import Build, project

CROSS_DIR = ROOT / "tests" / "cross"
MINGW64 = "x86_64-w64-mingw32"
ON_X86_64 = pytest.mark.skipif(os.uname().machine != "x86_64", reason="wine runs x86 Windows programs on x86_64 only")


# --------------------------------------------------------------------------- the assembler's diagnostics (fast)

ASM_ERROR = ("{tmp}/ccAbCdEf.s: Assembler messages:\n"
             "{tmp}/ccAbCdEf.s:{line}: Error: `(%rax,%edx,1)' is not a valid base/index expression\n")


class MingwAmx:
    """gcc 12 for x86_64-w64-mingw32 as far as AMX goes: cc1 accepts the tile intrinsics (inline asm), the
    assembler refuses the 32-bit stride register and names only its temporary .s file; ``-S`` writes the
    assembly, and so does the listing GNU as writes for ``-Wa,-aln=FILE`` (``listing``: else the assembler
    refuses that option, as Apple's does), where each failing line lies below its probe's function label
    (``at`` moves the lines the assembler names)."""

    def __init__(self, at: int | None = None, listing: bool = True) -> None:
        self.calls: list[list[str]] = []
        self.at = at
        self.listing = listing

    @staticmethod
    def _assembly(amx: list[str]) -> list[str]:
        asm = ["\t.file\t\"p.c\"", "\t.text"]
        for name in ["sse", *amx]:
            asm += [f"\t.def\tccopt_probe_{name};", f"ccopt_probe_{name}:", "\tpushq\t%rbp",
                    "\ttileloadd\t(%rax,%edx,1), %tmm1"]
        return asm

    def __call__(self, argv: Any, timeout: float) -> ProcResult:
        argv = list(argv)
        self.calls.append(argv)
        if "-dM" in argv:
            return ProcResult(0, X86_MACROS.replace("#define __linux__ 1\n", "") + "#define _WIN32 1\n")
        out = Path(argv[argv.index("-o") + 1])
        unit = Path(argv[argv.index("-o") - 1])  # a batch including probes, or one probe alone
        amx = [name for name in ("amx_tile", "amx_int8", "amx_bf16")
               if f"x86/{name}.c" in unit.read_text() or unit.name == f"{name}.c"]
        if "-S" in argv:
            out.write_text("\n".join(self._assembly(amx)) + "\n")
            return ProcResult(0, "")
        listing = next((a[len("-Wa,-aln="):] for a in argv if a.startswith("-Wa,-aln=")), None)
        if listing is not None and not self.listing:
            return ProcResult(1, f"as: unrecognized option '-aln={listing}'\n")
        if listing is not None:  # GNU as' listing: line number, address and bytes, a tab, the line
            Path(listing).write_text("".join(f"{n:4} 0000 00\t{line}\n"
                                             for n, line in enumerate(self._assembly(amx), 1)))
        if amx:  # each one's tileloadd in the assembly above: lines 10, 14, 18
            lines = [self.at or 6 + 4 * i for i in range(1, len(amx) + 1)]
            return ProcResult(1, "".join(ASM_ERROR.format(tmp="/tmp", line=n) for n in lines))
        out.write_bytes(b"")
        return ProcResult(0, "")


@pytest.mark.parametrize(("listing", "processes"), [(True, 3), (False, 5)])
def test_an_assembler_failure_is_placed_by_its_function_and_the_batch_goes_on(listing: bool, processes: int) -> None:
    """Bug: mingw's assembler refuses GCC 12's AMX tile loads naming only /tmp/ccX.s, so every cold configure
    fell back to one compiler process per feature (57, ~11 s).  Placed through the assembler's listing of the
    batch itself, the batch goes on: dump, batch, batch without AMX.  An assembler without GNU as' listing option
    refuses it: the batch is compiled without it and placed through -S (dump, 2 batches, -S, batch)."""
    cc = MingwAmx(listing=listing)
    doc = detect_doc(Request(command=(f"{MINGW64}-gcc",)), runner=cc)
    reason = doc["features"]["AMX_TILE"]["reason"]
    assert reason == "the assembler refused ccopt_probe_amx_tile: `(%rax,%edx,1)' is not a valid base/index expression"
    assert doc["features"]["AMX_BF16"]["supported"] is False and doc["features"]["AVX512_SPR"]["supported"] is True
    assert doc["probes"] == processes == len(cc.calls)
    assert sum("-S" in c for c in cc.calls) == (0 if listing else 1)


def test_an_assembler_failure_above_every_probe_function_stays_unplaced() -> None:
    """A line in the compiler's own preamble names no probe: each feature is then probed alone, as before."""
    cc = MingwAmx(at=1)
    doc = detect_doc(Request(command=(f"{MINGW64}-gcc",), dispatch="avx2 amx_tile"), runner=cc)
    assert doc["probes"] > 4 and doc["features"]["AVX2"]["supported"] is True
    assert doc["features"]["AMX_TILE"]["supported"] is False


# --------------------------------------------------------------------------- wine


@pytest.fixture(scope="module")
def wine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """An environment with a fresh 64-bit wine prefix (``wineboot --init``), and no CCOPT_* masks."""
    need("wine")
    need(f"{MINGW64}-gcc")
    prefix = tmp_path_factory.mktemp("wineprefix")
    env = clean_env()
    env.update(WINEPREFIX=str(prefix), WINEDEBUG="-all", WINEARCH="win64", WINEDLLOVERRIDES="mscoree,mshtml=")
    subprocess.run([need("wineboot"), "--init"], env=env, capture_output=True, timeout=300, check=True)
    yield env
    subprocess.run([need("wineserver"), "-k"], env=env, capture_output=True, timeout=60)


def wine_run(env: dict[str, str], *argv: str | Path, **masks: str) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["wine", *map(str, argv)], env={**env, **masks}, capture_output=True, text=True, timeout=300)
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.replace("\r\n", "\n"), r.stderr)


def cross_build(tmp_path: Path, name: str, wine: dict[str, str]) -> tuple[Build, str]:
    """The project configured as an x86_64 Windows cross build (wine as exe_wrapper); Meson's setup output."""
    b = Build(tmp_path, project(tmp_path, name))
    for var in ("CC", "CXX"):
        b.env.pop(var)
    b.env.update(wine)
    return b, b.meson_cmd("setup", "--cross-file", str(CROSS_DIR / f"{MINGW64}.ini"), str(b.dir))


@pytest.fixture(scope="module")
def dot_setup(tmp_path_factory: pytest.TempPathFactory, wine: dict[str, str]) -> tuple[Build, str]:
    """examples/dot, cross-built for x86_64 Windows, every target built (bench_dot.exe included)."""
    b, out = cross_build(tmp_path_factory.mktemp("dot-win64"), "dot", wine)
    b.ninja()
    return b, out


@pytest.fixture
def dot(dot_setup: tuple[Build, str]) -> Build:
    return dot_setup[0]


def cpuinfo_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    pytest.skip("/proc/cpuinfo has no flags line")


def expected_from_cpuinfo(flags: set[str]) -> dict[str, bool]:
    """Each feature's recipe names the flags it shows as in /proc/cpuinfo; it counts when its closure's do."""
    t = table_for("x86_64", "gcc")
    shown = {n: set(f.runtime.get("cpuinfo", ())) for n, f in t.features.items()}
    return {n: all(shown[d] <= flags for d in t.closure([n])) for n in t.features}


@ON_X86_64
@pytest.mark.slow
def test_example_configures_with_the_mingw_compiler_in_few_processes(dot_setup: tuple[Build, str]) -> None:
    dot, out = dot_setup
    assert "Architecture: x86_64" in out and "Compiler    : gcc-" in out
    m = re.search(r"From cache\s*: no \((\d+) compiler processes\)", out)
    assert m and int(m.group(1)) <= 3, out  # was 57 before the assembler's failures were placed, 4 before listings
    assert (dot.dir / "bench_dot.exe").is_file()  # bench_dot.c once used clock_gettime, which mingw's -win32 gcc lacks


@ON_X86_64
@pytest.mark.slow
def test_example_meson_test_under_wine_runs_every_target(dot: Build) -> None:
    """``meson test`` through the exe_wrapper, including the per-target ``--run-as`` loop (the example lets a
    Windows cross build through its guard): a target passes where /proc/cpuinfo shows all it needs, and is
    SKIP (exit 77) where it does not; the canary proves wine ran the programs."""
    out = dot.meson_cmd("test", "-C", str(dot.dir), "-v")
    summary = dict(re.findall(r"^(Ok|Fail|Skipped|Expected Fail|Unexpected Pass|Timeout):\s+(\d+)", out, re.M))
    counts = tuple(summary.get(k, "0") for k in ("Fail", "Unexpected Pass", "Expected Fail"))  # 0s left out
    assert counts == ("0", "0", "1"), out[-3000:]
    status = dict(re.findall(r"dot:dot on (\w+)\s+(OK|SKIP)\b", out))
    have = {**expected_from_cpuinfo(cpuinfo_flags()), "BASELINE": True}
    assert status and "BASELINE" in status
    assert status == {t: "OK" if have[t] else "SKIP" for t in status}
    assert "dispatch picked: BASELINE" in out and "WRONG" not in out


@ON_X86_64
@pytest.mark.slow
def test_cpu_info_under_wine_agrees_with_proc_cpuinfo(dot: Build, wine: dict[str, str]) -> None:
    r = wine_run(wine, dot.dir / "subprojects" / "ccopt-meson" / "ccopt-cpu-info.exe", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["arch"] == "x86_64" and doc["baseline_missing"] == []
    assert doc["features"] == expected_from_cpuinfo(cpuinfo_flags())


@ON_X86_64
@pytest.mark.slow
def test_masks_steer_the_pick_under_wine(dot: Build, wine: dict[str, str]) -> None:
    """wine hands the Unix environment to the Windows process: CCOPT_DISABLE_CPU_FEATURES lowers the pick."""
    exe = dot.dir / "test_dot.exe"

    def picked(**masks: str) -> str:
        r = wine_run(wine, exe, **masks)
        assert r.returncode == 0 and "WRONG" not in r.stdout, r.stdout + r.stderr
        return r.stdout.strip().splitlines()[-1].removeprefix("dispatch picked: ")

    flags = cpuinfo_flags()
    top = picked()
    assert top != "BASELINE" or "avx2" not in flags
    if "avx2" in flags:
        assert picked(CCOPT_DISABLE_CPU_FEATURES="AVX2") == "X86_V2"
    assert picked(CCOPT_DISABLE_CPU_FEATURES="SSE41") == "BASELINE"
    assert picked(CCOPT_ENABLE_CPU_FEATURES="BASELINE") == "BASELINE"
    r = wine_run(wine, exe, CCOPT_DISABLE_CPU_FEATURES="SSE2")
    assert "SSE2 is in the baseline this build requires and cannot be disabled; ignored" in r.stderr + r.stdout


ARGS_C = r"""#include <stdio.h>
int main(int argc, char **argv)
{
    int i;
    for (i = 0; i < argc; i++)
        printf("[%s]", argv[i]);
    printf("\n");
    return 3;
}
"""


@ON_X86_64
@pytest.mark.slow
def test_run_as_passes_arguments_and_a_spaced_program_path_intact(dot: Build, wine: dict[str, str],
                                                                   tmp_path: Path) -> None:
    """Bug: _spawnvp joins argv with spaces, so "a b" reached the child as two arguments and c"d as cd."""
    spaced = tmp_path / "Jane Doe"
    spaced.mkdir()
    (tmp_path / "args.c").write_text(ARGS_C)
    exe = spaced / "args.exe"
    subprocess.run([need(f"{MINGW64}-gcc"), str(tmp_path / "args.c"), "-o", str(exe)], check=True, timeout=120)
    cases = ["a b", 'c"d', "e\\", "", 'f\\"g', "x\\y", "tab\there", "plain"]
    info = dot.dir / "subprojects" / "ccopt-meson" / "ccopt-cpu-info.exe"
    r = wine_run(wine, info, "--run-as", "BASELINE", exe, *cases)
    assert r.returncode == 3, r.stderr  # the child's own exit status
    assert r.stdout.strip() == "".join(f"[{a}]" for a in [str(exe), *cases])


@ON_X86_64
@pytest.mark.slow
@pytest.mark.parametrize("name", ["consumer", "cxx_only", "fine_targets", "libc_names", "project_features"])
def test_fixture_projects_cross_build_and_pass_under_wine(tmp_path: Path, wine: dict[str, str], name: str) -> None:
    need(f"{MINGW64}-g++")
    b, _ = cross_build(tmp_path, name, wine)
    b.ninja()
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert re.search(r"^Ok:\s+[1-9]", out, re.M) and re.search(r"^Fail:\s+0", out, re.M), out[-3000:]
    assert "WRONG" not in out


FINE_PICKS = PICKS  # what the same masks pick natively


@ON_X86_64
@pytest.mark.slow
def test_fine_grained_targets_dispatch_under_masks_in_wine(tmp_path: Path, wine: dict[str, str]) -> None:
    """Each version runs its own instructions, so a wrong pick dies with an illegal instruction under wine too."""
    if not {"avx512vl", "avx512vbmi", "vpclmulqdq", "avx512bw"} <= cpuinfo_flags():
        pytest.skip("this CPU lacks AVX512VBMI or VPCLMULQDQ")
    b, _ = cross_build(tmp_path, "fine_targets", wine)
    b.ninja()
    for masked, expected in FINE_PICKS:
        r = wine_run(wine, b.dir / "fine.exe", CCOPT_DISABLE_CPU_FEATURES=masked)
        assert (r.returncode, r.stdout.split()) == (0, ["picked", expected]), (masked, r.stderr)


# --------------------------------------------------------------------------- i686: built, run only if wine can


@pytest.mark.slow
def test_i686_build_is_compiled_and_linked(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """32-bit Windows: detection with the i686 compiler, every program linked as PE32.  Run only where wine
    really runs it: without wine32, wine says "wine32 is missing" and exits 0, running nothing, and then
    the example's canary test (an exit status that only a program that ran gives) fails the suite."""
    need("i686-w64-mingw32-gcc")
    b = Build(tmp_path, project(tmp_path, "dot"))
    for var in ("CC", "CXX"):
        b.env.pop(var)
    cross = tmp_path / "i686-wine.ini"  # the repository's file has no exe_wrapper; this one tries wine
    text = (CROSS_DIR / "i686-w64-mingw32.ini").read_text()
    cross.write_text(text.replace("[host_machine]", "exe_wrapper = 'wine'\n\n[host_machine]"))
    out = b.meson_cmd("setup", "--cross-file", str(cross), str(b.dir))
    # the default baseline, detect, is the compiler's own: mingw-w64's i686 gcc enables no SSE
    assert "Architecture: x86\n" in out and "Baseline    : none\n" in out
    b.ninja()
    info = b.dir / "subprojects" / "ccopt-meson" / "ccopt-cpu-info.exe"
    for exe in (b.dir / "test_dot.exe", b.dir / "bench_dot.exe", info):
        head = exe.read_bytes()[:4096]
        pe = int.from_bytes(head[0x3C:0x40], "little")
        assert head[pe:pe + 6] == b"PE\0\0" + (0x14C).to_bytes(2, "little"), exe  # IMAGE_FILE_MACHINE_I386
    if shutil.which("wine") is None or os.uname().machine != "x86_64":
        return
    env = request.getfixturevalue("wine")
    b.env.update(env)
    ran = wine_run(env, info, "--json").stdout.startswith("{")
    r = subprocess.run([*b.meson, "test", "-C", str(b.dir)], cwd=b.src, env=b.env, capture_output=True, text=True)
    if ran:  # 32-bit wine is there: the suite must pass, and ccopt-cpu-info report x86
        assert r.returncode == 0, r.stdout[-3000:]
        assert json.loads(wine_run(env, info, "--json").stdout)["arch"] == "x86"
    else:  # nothing ran: the suite must not pass, and the canary says why
        assert r.returncode != 0 and re.search(r"ccopt-cpu-info runs\s+UNEXPECTEDPASS", r.stdout), r.stdout[-3000:]


@ON_X86_64
@pytest.mark.slow
@pytest.mark.parametrize("program", ["x.bat", "X.CMD", "noext"])
def test_run_as_refuses_what_cmd_exe_would_run(dot: Build, wine: dict[str, str], tmp_path: Path,
                                                    program: str) -> None:
    """--run-as with a .bat program let cmd.exe run '&ver' (seen under wine): _spawnvp hands batch files, and
    names it completes with .bat or .cmd, to cmd.exe, which reads & | < > ^ in the arguments as commands."""
    script = tmp_path / program
    script.write_text("@echo off\r\necho batch ran %*\r\n")
    info = dot.dir / "subprojects" / "ccopt-meson" / "ccopt-cpu-info.exe"
    r = wine_run(wine, info, "--run-as", "BASELINE", script, "&ver")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "runs programs only (NAME.exe)" in r.stderr and "batch ran" not in r.stdout and "Wine" not in r.stdout


@ON_X86_64
@pytest.mark.slow
def test_a_dll_with_c_and_cxx_kernels_exports_only_its_api(tmp_path: Path, wine: dict[str, str]) -> None:
    """The library maintainers' C and C++ pattern as a mingw-w64 DLL: its export table is the three functions
    its header marks __declspec(dllexport), and its host runs under wine through meson test."""
    need(f"{MINGW64}-g++")
    b, _ = cross_build(tmp_path, "mixed_shared", wine)
    b.ninja()
    dump = subprocess.run([need(f"{MINGW64}-objdump"), "-p", str(b.dir / "libmixed.dll")], capture_output=True,
                          text=True, check=True).stdout
    table = dump.split("[Ordinal/Name Pointer] Table", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r"\]\s+(\S+)", table) == ["mixed_scale_sum", "mixed_sum", "mixed_unsupported"]
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert "sum 4950, scaled 9900" in out and re.search(r"^Fail:\s+0", out, re.M), out[-3000:]
