"""glibc-hwcaps variants (ccopt_meson/hwcaps.py): each machine's levels, a variant made from the one probe with
its baseline raised, and what configure and ``targets --hwcaps`` hand meson.build."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from ccopt_meson import hwcaps, pipeline, tables
from ccopt_meson.errors import InputError
from ccopt_meson.records import Outcome, Probed, Request

from .conftest import ROOT, need, need_module
from .helpers import clean_env, cli, configure_args, kv, one_error, x86_gcc
from .snippets import snippet
from .test_meson import Build, project

MACHINES = [m.name for m in tables.machines()]
# glibc's own spellings (sysdeps/*/dl-hwcaps-subdirs.c, 2.33 and later)
GLIBC_LEVELS = {"x86_64": ["x86-64-v2", "x86-64-v3", "x86-64-v4"], "ppc64le": ["power9", "power10"],
                "s390x": ["z13", "z14", "z15", "z16"]}


def _detection(machine: str, baseline: str = "min", dispatch: str = "max", unsupported: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    """A detection of gcc on ``machine`` where the compiler builds everything but ``unsupported`` (no compiler runs)."""
    table = tables.table_for(machine, "gcc")
    outcomes = {n: Outcome(n not in unsupported, "rejected" if n in unsupported else "") for n in table.features}
    req = Request(("gcc",), baseline=baseline, dispatch=dispatch, compiler_id="gcc")
    return pipeline.document(req, Probed(machine, "gcc", "12.2.0", outcomes))


@pytest.mark.parametrize("machine", MACHINES)
def test_every_level_is_a_glibc_directory_and_a_feature_of_its_machine(machine: str) -> None:
    table = tables.table_for(machine, "gcc")
    assert [lv.name for lv in hwcaps.levels(table)] == GLIBC_LEVELS.get(machine, [])
    for lv in hwcaps.levels(table):
        assert lv.feature in table.features and not table.features[lv.feature].disabled
    features = [lv.feature for lv in hwcaps.levels(table)]
    assert features == table.sort(features), "levels are listed lowest first, as their features rank"


@pytest.mark.parametrize("machine", sorted(GLIBC_LEVELS))
def test_a_variant_raises_the_baseline_and_dispatches_only_above_it(machine: str) -> None:
    det = _detection(machine)
    for lv in hwcaps.buildable(det):
        var = hwcaps.variant(det, lv)
        below = det.table.closure([lv.feature])  # type: ignore[union-attr]
        assert set(var.baseline) >= below | set(det.baseline)
        assert not set(var.dispatch) & below and set(var.dispatch) == set(det.dispatch) - below
        assert var.probes == 0 and var.outcomes == det.outcomes, "made from the verdicts already given"


def test_a_level_the_compiler_cannot_build_or_the_baseline_holds_gets_no_variant() -> None:
    det = _detection("x86_64", baseline="min x86_v2", unsupported=("X86_V4",))
    assert [lv.name for lv in hwcaps.buildable(det)] == ["x86-64-v3"]
    v2, v4 = hwcaps.level(det, "x86-64-v2"), hwcaps.level(det, "x86-64-v4")
    assert "baseline already holds X86_V2" in str(hwcaps.why_not(det, v2))
    assert "cannot build X86_V4 (rejected)" in str(hwcaps.why_not(det, v4))
    with pytest.raises(InputError, match="no x86-64-v4 variant"):
        hwcaps.variant(det, v4)


def test_an_unknown_level_names_those_of_the_machine() -> None:
    with pytest.raises(InputError, match="'power9' is not a glibc-hwcaps level of x86_64; its levels are x86-64-v2"):
        hwcaps.level(_detection("x86_64"), "power9")
    with pytest.raises(InputError, match="glibc's loader has none there"):
        hwcaps.level(_detection("aarch64"), "x86-64-v3")


def test_the_probe_covers_every_level_whatever_the_dispatch_list() -> None:
    table = tables.table_for("x86_64", "gcc")
    det = _detection("x86_64", dispatch="none")
    assert hwcaps.probed(table) == {"X86_V2", "X86_V3", "X86_V4"}
    selected = pipeline._selected(det.request, det.expressions, table, Probed("x86_64", "gcc", "12.2.0", {}))
    assert hwcaps.probed(table) <= selected


def test_configure_hands_meson_each_level_and_writes_its_headers(tmp_path: Path) -> None:
    gcc = x86_gcc()
    r = cli(*configure_args(tmp_path, gcc, "--dispatch", "none", "--write-config"))
    assert r.returncode == 0, r.stderr
    lines = kv(r.stdout)
    assert lines["hwcaps_levels"] == ["x86-64-v2", "x86-64-v3", "x86-64-v4"]
    assert lines["hwcaps_features"] == ["X86_V2", "X86_V3", "X86_V4"]
    args = dict(line.split("=", 1) for line in (tmp_path / "ccopt-configure-c-hwcaps.txt").read_text().splitlines()
                if not line.startswith("#"))
    assert "-mavx2" in args["x86-64-v3"].split() and "-DCCOPT_HAVE_X86_V3=1" in args["x86-64-v3"].split()
    assert "-mavx512f" not in args["x86-64-v3"].split() and "-mavx512f" in args["x86-64-v4"].split()
    kernel = (tmp_path / "glibc-hwcaps" / "x86-64-v4" / "ccopt_kernel.h").read_text()
    assert re.search(r'#define CCOPT_WITH_CPU_BASELINE ".*\bX86_V4\b', kernel)
    assert "X86_V3" not in (tmp_path / "ccopt_kernel.h").read_text().split("CCOPT_WITH_CPU_BASELINE_N")[0]


def test_targets_of_a_variant_build_only_above_its_level(tmp_path: Path) -> None:
    gcc = x86_gcc()
    assert cli(*configure_args(tmp_path, gcc, "--write-config")).returncode == 0
    src = tmp_path / "k.dispatch.c"
    src.write_text("/*@targets baseline sse41 avx2 avx512_skx */\n")
    only_low = tmp_path / "low.dispatch.c"
    only_low.write_text("/*@targets sse41 avx2 */\n")
    cache = str(tmp_path / "ccopt-features.json")
    r = cli("targets", str(src), str(only_low), "--cache-file", cache, "--hwcaps", "x86-64-v3",
            "--output-dir", str(tmp_path / "v3"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert [line.split("\t")[3] for line in r.stdout.splitlines()] == ["BASELINE", "AVX512_SKX"]
    assert "low.dispatch.c: no version at x86-64-v3: every target (SSE41, AVX2) is at or below it" in r.stderr
    assert '"AVX512_SKX BASELINE"' in (tmp_path / "v3" / "k.dispatch.h").read_text()
    base = cli("targets", str(only_low), "--cache-file", cache, "--output-dir", str(tmp_path), cwd=tmp_path)
    assert base.returncode == 0 and len(base.stdout.splitlines()) == 2, base.stderr
    one_error(cli("targets", str(src), "--cache-file", cache, "--hwcaps", "z15", "--output-dir", str(tmp_path),
                  cwd=tmp_path), "'z15' is not a glibc-hwcaps level of x86_64")


def test_one_targets_call_answers_for_the_library_and_every_variant(tmp_path: Path) -> None:
    """--variants: the library's own lines, then each level's ending in the level, and their headers: what a call
    per level gives, from one helper run (a configure with variants runs no more helpers than one without)."""
    gcc = x86_gcc()
    assert cli(*configure_args(tmp_path, gcc, "--write-config")).returncode == 0
    src = tmp_path / "k.dispatch.c"
    src.write_text("/*@targets baseline sse41 avx2 avx512_skx */\n")
    cache = str(tmp_path / "ccopt-features.json")
    one = cli("targets", str(src), "--cache-file", cache, "--variants", "x86-64-v3,x86-64-v4",
              "--output-dir", str(tmp_path / "all"), cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    expected = cli("targets", str(src), "--cache-file", cache, "--output-dir", str(tmp_path / "base"),
                   cwd=tmp_path).stdout
    for level in ("x86-64-v3", "x86-64-v4"):
        alone = cli("targets", str(src), "--cache-file", cache, "--hwcaps", level, "--output-dir",
                    str(tmp_path / level), cwd=tmp_path)
        expected += "".join(f"{line}\t{level}\n" for line in alone.stdout.splitlines())
        assert ((tmp_path / "all" / "glibc-hwcaps" / level / "k.dispatch.h").read_text()
                == (tmp_path / level / "k.dispatch.h").read_text())
        assert f"compiled versions at {level}: " in one.stderr
    assert one.stdout == expected
    assert (tmp_path / "all" / "k.dispatch.h").read_text() == (tmp_path / "base" / "k.dispatch.h").read_text()
    assert cli("targets", str(src), "--cache-file", cache, "--variants", "", "--output-dir", str(tmp_path / "base"),
               cwd=tmp_path).stdout == cli("targets", str(src), "--cache-file", cache, "--output-dir",
                                           str(tmp_path / "base"), cwd=tmp_path).stdout
    one_error(cli("targets", str(src), "--cache-file", cache, "--variants", "x86-64-v3,z15", "--output-dir",
                  str(tmp_path / "bad"), cwd=tmp_path), "'z15' is not a glibc-hwcaps level of x86_64")
    assert not (tmp_path / "bad").exists(), "nothing is written before every level is known"


# --------------------------------------------------------------------------- a real library (slow)

AVX512_V4 = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}  # what glibc checks for x86-64-v4


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return set(next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), []))


def _loaded(run: list[str], libdir: Path) -> tuple[str, str]:
    """(the libhw.so.1 the loader picked, the program's output), from LD_DEBUG=libs."""
    r = subprocess.run(run, capture_output=True, text=True, env=clean_env("LD_", LD_DEBUG="libs"), timeout=120,
                       cwd=libdir.parent)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    inits = re.findall(r"calling init: (\S*libhw\.so\.1)", r.stderr)
    assert len(inits) == 1, r.stderr[-3000:]
    return os.path.relpath(inits[0], libdir), r.stdout


def _vector_registers(lib: Path) -> set[str]:
    """The vector register widths hw_scale (a loop the compiler vectorises) uses in ``lib``."""
    out = subprocess.run([need("objdump"), "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    body = out.split("<hw_scale>:", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"%([xyz]mm)\d+", body))


@pytest.mark.slow
def _helper_runs(b: Build) -> int:
    """The helper processes Meson started in the last configure (its log names each run_command)."""
    log = (b.dir / "meson-logs" / "meson-log.txt").read_text()
    return len(re.findall(r"^Running command: .*ccopt-meson-helper\.py ", log, re.M))


def test_one_configure_installs_a_build_per_level_and_the_loader_picks_by_cpu(tmp_path: Path) -> None:
    x86_gcc()
    qemu = need("qemu-x86_64-static")
    (tmp_path / "plain").mkdir()
    plain = Build(tmp_path / "plain", project(tmp_path / "plain", "hwcaps"))
    plain.meson_cmd("setup", str(plain.dir))
    b = Build(tmp_path, project(tmp_path, "hwcaps"))
    inst = tmp_path / "inst"
    out = b.meson_cmd("setup", str(b.dir), "-Dhwcaps=x86-64-v3,x86-64-v4,power9", f"--prefix={inst}", "--libdir=lib")
    assert b.probes() == plain.probes() >= 1, "the variants need no compiler process of their own"
    assert _helper_runs(b) == _helper_runs(plain) >= 2, "nor a helper run: one targets call answers for every build"
    assert re.search(r"hwcaps\s*: x86-64-v2 x86-64-v3 x86-64-v4", out)
    assert "WARNING: no power9 build: not a level here" in out
    b.ninja()
    b.meson_cmd("install", "-C", str(b.dir), "--quiet")
    libdir = inst / "lib"
    libs = {lv: libdir / lv / "libhw.so.1.0.0" for lv in ("", "glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v4")}
    for lib in libs.values():
        dyn = subprocess.run([need("readelf"), "-d", str(lib)], capture_output=True, text=True, check=True).stdout
        assert "Library soname: [libhw.so.1]" in dyn
    # each build compiled at its level: the vectorised loop's registers
    assert [_vector_registers(lib) for lib in libs.values()] == [{"xmm"}, {"xmm", "ymm"}, {"xmm", "ymm", "zmm"}]
    # and the ISA audit: each build's manifest declares its level, and it passes at it, not at the level below
    need_module("elftools", "the package's 'audit' extra")
    for below, level in (("x86-64-v2", "x86-64-v3"), ("x86-64-v3", "x86-64-v4")):
        lib = str(libs[f"glibc-hwcaps/{level}"])
        r = cli("audit", "--baseline", level, lib)
        assert r.returncode == 0 and re.search(rf"declared baseline [A-Z0-9_ ]*\bX86_V{level[-1]}\b", r.stdout), r
        assert cli("audit", "--baseline", below, lib).returncode == 1
    assert cli("audit", str(libs[""])).returncode == 0

    host = tmp_path / "host"
    subprocess.run([need("gcc"), str(b.src / "host.c"), "-o", str(host), f"-L{libdir}", "-lhw",
                    f"-Wl,-rpath,{libdir}"], check=True)
    where, said = _loaded([qemu, "-cpu", "Nehalem", str(host)], libdir)
    assert where == "libhw.so.1" and "baseline: SSE SSE2\npick: BASELINE\nscale: ok" in said
    where, said = _loaded([qemu, "-cpu", "Haswell", str(host)], libdir)
    assert where == "glibc-hwcaps/x86-64-v3/libhw.so.1"
    assert re.search(r"baseline: .*\bX86_V3\npick: BASELINE\nscale: ok", said), said
    if AVX512_V4 <= _cpu_flags():
        where, said = _loaded([str(host)], libdir)
        assert where == "glibc-hwcaps/x86-64-v4/libhw.so.1"
        assert re.search(r"baseline: .*\bX86_V4\npick: BASELINE\nscale: ok", said), said


def test_the_how_to_snippets_are_the_fixture_s_code() -> None:
    """docs/how-to/hwcaps-variants.md shows tests/projects/hwcaps (built above): its lines, in order."""
    fixture = Path(__file__).parent / "projects" / "hwcaps"
    lines = iter((fixture / "meson.build").read_text().splitlines())
    for line in snippet("hwcaps/meson.build").splitlines():
        assert line in lines, line
    assert snippet("hwcaps/option") == (fixture / "meson_options.txt").read_text()


# cross file -> (levels asked for, qemu, its sysroot, [(CPU model, the build the loader picks, its level features)]).
# qemu 7.2's s390x models all have the vector facility and none has more (no model loads the base or a z14 build).
CROSS = {
    "ppc64le": ("power9,power10", "qemu-ppc64le-static", "/usr/powerpc64le-linux-gnu",
                [("power8", "libhw.so.1", set()), ("power9", "glibc-hwcaps/power9/libhw.so.1", {"VSX3"}),
                 ("power10", "glibc-hwcaps/power10/libhw.so.1", {"VSX3", "VSX4"})]),
    "s390x": ("z13,z14,z15,z16", "qemu-s390x-static", "/usr/s390x-linux-gnu",
              [("max", "glibc-hwcaps/z13/libhw.so.1", {"VX"})]),
}


@pytest.mark.slow
@pytest.mark.parametrize("machine", sorted(CROSS))
def test_a_cross_build_s_levels_are_built_and_picked_under_qemu(tmp_path: Path, machine: str) -> None:
    levels, qemu_name, sysroot, cpus = CROSS[machine]
    cc = need({"ppc64le": "powerpc64le-linux-gnu-gcc", "s390x": "s390x-linux-gnu-gcc"}[machine])
    qemu = need(qemu_name)
    b = Build(tmp_path, project(tmp_path, "hwcaps"))
    b.env.pop("CC")
    b.env.pop("CXX")
    inst = tmp_path / "inst"
    out = b.meson_cmd("setup", "--cross-file", str(ROOT / "tests" / "cross" / f"{machine}.ini"), str(b.dir),
                      f"-Dhwcaps={levels}", f"--prefix={inst}", "--libdir=lib")
    assert re.search(rf"hwcaps\s*: {levels.replace(',', ' ')}\n", out), out
    b.ninja()
    b.meson_cmd("install", "-C", str(b.dir), "--quiet")
    libdir = inst / "lib"
    for level in levels.split(","):
        assert (libdir / "glibc-hwcaps" / level / "libhw.so.1.0.0").is_file()
    host = tmp_path / "host"
    subprocess.run([cc, str(b.src / "host.c"), "-o", str(host), f"-L{libdir}", "-lhw", f"-Wl,-rpath,{libdir}"],
                   check=True)
    features = {lv.feature for lv in hwcaps.levels(tables.table_for(machine, "gcc"))}
    for cpu, where, declared in cpus:
        picked, said = _loaded([qemu, "-L", sysroot, "-cpu", cpu, str(host)], libdir)
        baseline = set(said.splitlines()[0].split()[1:])
        assert picked == where and baseline & features == declared and "scale: ok" in said, (cpu, said)


@pytest.mark.slow
def test_a_windows_build_offers_no_level_and_says_why(tmp_path: Path) -> None:
    need("x86_64-w64-mingw32-gcc")
    b = Build(tmp_path, project(tmp_path, "hwcaps"))
    b.env.pop("CC")
    b.env.pop("CXX")
    out = b.meson_cmd("setup", "--cross-file", str(ROOT / "tests" / "cross" / "x86_64-w64-mingw32.ini"), str(b.dir),
                      "-Dhwcaps=x86-64-v3")
    assert re.search(r"hwcaps\s*: none", out), out
    assert "no x86-64-v3 build: only glibc's loader picks a build by level, and the host system is windows" in out
