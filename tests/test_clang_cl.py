"""The MSVC-style driver path, driven by clang-cl (a symlink named clang-cl to clang is a clang-cl).

No Windows SDK is installed here, so probes are compiled with ``/clang:-ffreestanding`` (clang's
``mm_malloc.h`` otherwise wants ``stdlib.h``), and the runtime is compiled against the C library
stand-ins in ``tests/data/crt-stub``; the clang-cl object is linked by mingw-w64 and run under wine,
which runs the runtime's ``_MSC_VER`` branch (``__cpuidex``, ``_xgetbv``) for real.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ccopt_meson.tables import table_for

from .conftest import ROOT, need
from .helpers import cli, kv, one_error
from .test_windows import MINGW64, cpuinfo_flags, expected_from_cpuinfo, wine, wine_run

__all__ = ["wine"]  # the module-scoped wine prefix, shared with test_windows

RUNTIME = ROOT / "ccopt_meson" / "runtime"
STUB = ROOT / "tests" / "data" / "crt-stub"
TARGET = "--target=x86_64-pc-windows-msvc"
FREESTANDING = "/clang:-ffreestanding"


@pytest.fixture(scope="module")
def clang_cl(tmp_path_factory: pytest.TempPathFactory) -> str:
    """clang-cl: Debian's clang ships no file of that name; the driver mode comes from argv[0]."""
    link = tmp_path_factory.mktemp("bin") / "clang-cl"
    link.symlink_to(os.path.realpath(need("clang")))
    return str(link)


def detect(*args: str) -> dict:  # type: ignore[type-arg]
    r = cli("detect", "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def test_detection_through_the_msvc_style_driver(clang_cl: str) -> None:
    doc = detect("--cc", clang_cl, "--compiler-id", "clang-cl", "--cpu-family", "x86_64",
                 f"--arg={TARGET}", f"--arg={FREESTANDING}")
    assert doc["arch"] == "x86_64" and doc["probes"] <= 3  # the macro dump and the batch (and one retry)
    clang_version = subprocess.run([need("clang"), "-dumpversion"], capture_output=True, text=True).stdout.strip()
    assert doc["compiler"]["id"] == "clang-cl" and doc["compiler"]["version"] == clang_version  # from its macros
    assert doc["baseline"] == {"names": ["SSE", "SSE2"], "args": ["-msse", "-msse2"]}  # detect: its own floor
    t = table_for("x86_64", "clang-cl")
    for name in ("AVX2", "AVX512_SKX", "FMA4", "XOP"):  # FMA4/XOP: the probes once took clang-cl for MSVC
        assert doc["features"][name]["supported"] is True, (name, doc["features"][name]["reason"])
        assert doc["dispatch"]["args"][name] == t.flags_for([name])  # the clang-cl table's gnu spelling
    assert not doc["notes"]


def test_clang_cl_without_an_id_is_driven_as_clang_cl(clang_cl: str) -> None:
    """Without --compiler-id the program name picks the driver: the gnu one's -dM used to fail at once."""
    doc = detect("--cc", clang_cl, f"--arg={TARGET}", f"--arg={FREESTANDING}")
    assert doc["compiler"]["id"] == "clang-cl" and doc["compiler"]["version"] != "unknown"
    assert doc["baseline"]["names"] == ["SSE", "SSE2"] and "AVX2" in doc["dispatch"]["names"]


def test_cl_without_a_cpu_family_is_told_to_name_one(tmp_path: Path) -> None:
    """An MSVC-style driver that prints no macros (cl, icx-cl) names no architecture: the CLI asks for it
    (Meson always passes it), instead of answering 'unsupported architecture' for a plain x86_64 cl."""
    cl = tmp_path / "cl.exe"
    cl.write_text("#!/bin/sh\nexit 0\n")
    cl.chmod(0o755)
    one_error(cli("detect", "--cc", str(cl)), f"compiler '{cl}' (msvc) prints no predefined macros",
              "pass --cpu-family (x86_64, x86 or aarch64)")


def test_compiler_without_its_headers_gets_one_warning(clang_cl: str, tmp_path: Path) -> None:
    """No SDK and no -ffreestanding: every probe fails on stdlib.h; that is said once, with what to do."""
    doc = detect("--cc", clang_cl, "--compiler-id", "clang-cl", "--cpu-family", "x86_64", f"--arg={TARGET}")
    assert doc["baseline"]["names"] == [] and doc["dispatch"]["names"] == []
    [warning] = [n for n in doc["notes"] if n.startswith("warning: ")]
    assert "cannot compile SSE, which every x86_64 CPU has" in warning and "'stdlib.h' file not found" in warning
    assert "/clang:-ffreestanding" in warning and "Windows SDK" in warning
    r = cli("configure", "--lang", "c", "--output-dir", str(tmp_path), "--compiler-id", "clang-cl",
            "--cpu-family", "x86_64", "--cross", "yes", f"--cc-arg={clang_cl}", f"--cc-arg={TARGET}")
    assert r.returncode == 0, r.stderr
    assert "'stdlib.h' file not found" in " ".join(kv(r.stdout)["warning"])  # meson.build shows it with warning()


@pytest.mark.parametrize("driver", ["clang-cl", "msvc"])
def test_a_unix_path_argument_is_not_taken_for_a_warning_option(driver: str) -> None:
    """Warning options are left out of probes; /w (no warnings) once also matched any path under /work,
    so '-imsvc /work/sdk/include' lost its value and the macro dump its first option."""
    from ccopt_meson.probe import Scratch, Session
    from ccopt_meson.tables import compiler_spec

    args = ["-imsvc", "/work/sdk/include", "/W4", "/wd4996", "/w14996", "/w", "/WX", "/wo4311"]
    with Scratch() as scratch:
        session = Session(scratch, ["clang-cl"], args, "c", compiler_spec(driver).driver)
    assert session.args == ["-imsvc", "/work/sdk/include"]


def test_a_working_compiler_gets_no_such_warning(clang_cl: str) -> None:
    doc = detect("--cc", need("gcc"))
    assert not any(n.startswith("warning: ") for n in doc["notes"])


def test_icx_cl_entries_are_the_clang_based_ones(clang_cl: str) -> None:
    """icx-cl reports an error for an intrinsic whose feature the target lacks (Intel's /Qintrinsic-promote
    page), as clang-cl does, so classic icl's flag-less entries cannot serve it: it gets clang-cl's flags.
    Driven here through clang-cl (the same driver family; icx-cl itself is not available)."""
    icx, clang = table_for("x86_64", "intel-llvm-cl"), table_for("x86_64", "clang-cl")
    for name in ("AES", "SHA", "BMI2", "AVX512VL", "AVX512_FP16", "AMX_TILE"):
        assert icx.flags_for([name]) == clang.flags_for([name]) and not icx.get(name).disabled, name
    doc = detect("--cc", clang_cl, "--compiler-id", "intel-llvm-cl", "--cpu-family", "x86_64", "--baseline", "min",
                 f"--arg={TARGET}", f"--arg={FREESTANDING}")
    assert doc["baseline"]["names"] == ["SSE", "SSE2", "SSE3"] and {"AES", "AVX2", "AVX512_SKX"} <= set(
        doc["dispatch"]["names"])


SVE_ERRORS = """In file included from {unit}:1:
In file included from {probes}/arm/sve.c:2:
{inc}/arm_sve.h(329,1): error: cannot mangle this built-in __SVInt8_t type yet
__aio svint8_t svreinterpret_s8(svint8_t op) {{
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
{inc}/arm_sve.h(137,15): note: expanded from macro '__aio'
{inc}/arm_sve.h(333,1): error: cannot mangle this built-in __SVInt16_t type yet
__aio svint8_t svreinterpret_s8(svint16_t op) {{
^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
"""


def test_a_headers_later_diagnostics_count_against_the_probe_its_first_one_named() -> None:
    """clang prints an include chain only when it changes: the second error in arm_sve.h names no probe.
    (clang-cl 14 for aarch64-pc-windows-msvc cannot mangle SVE types; every later error once sent the
    whole ARM plan to one process per feature, 28 processes.)"""
    from ccopt_meson.probe import diagnose

    out = SVE_ERRORS.format(unit="/tmp/s/p2.c", probes="/src/ccopt_meson/data/probes", inc="/usr/lib/clang/include")
    diag = diagnose(out, 1, {"arm/sve.c": "SVE", "arm/neon.c": "NEON"}, {})
    assert diag.unattributed == [] and set(diag.attributed) == {"SVE"} and diag.suspects == {"SVE"}


def test_arm64_windows_detection_places_the_sve_failure(clang_cl: str) -> None:
    doc = detect("--cc", clang_cl, "--arg=--target=aarch64-pc-windows-msvc", f"--arg={FREESTANDING}")
    assert doc["arch"] == "aarch64" and doc["baseline"]["names"] == ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
    assert "ASIMDDP" in doc["dispatch"]["names"]
    assert doc["probes"] <= 14, doc["probes"]  # the dump, the batches and the ARM targets' own flag checks


def compile_runtime(clang_cl: str, target: str, out: Path, gen: Path, source: str = "ccopt_cpu.c") -> Path:
    obj = out / f"{source}-{target}.obj"
    cmd = [clang_cl, f"--target={target}", "/nologo", "/c", "/O2", "/GS-", "/Zl", "/W4", "/WX",
           "-imsvc", str(STUB), f"/I{gen}", f"/I{RUNTIME}", f"/Tc{RUNTIME / source}", f"/Fo{obj}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), r.stdout + r.stderr
    return obj


def test_runtime_msvc_branch_compiled_by_clang_cl_runs_under_wine(clang_cl: str, table_dir: Path, tmp_path: Path,
                                                                  wine: dict[str, str]) -> None:
    """ccopt_cpu.c and ccopt_cpu_info.c as MSVC would see them (_MSC_VER: __cpuidex, _xgetbv, _Interlocked*;
    _putenv_s, _spawnvp), linked by mingw-w64 with its C runtime: under wine the program reports exactly
    what /proc/cpuinfo shows, the masks apply, and --run-as hands its arguments over intact."""
    if os.uname().machine != "x86_64":
        pytest.skip("wine runs x86 Windows programs on x86_64 only")
    obj = compile_runtime(clang_cl, "x86_64-pc-windows-msvc", tmp_path, table_dir)
    symbols = subprocess.run([need("llvm-nm"), str(obj)], capture_output=True, text=True, check=True).stdout
    assert "__get_cpuid" not in symbols and "__acrt_iob_func" in symbols  # the MSVC branch, the UCRT's stderr
    main = compile_runtime(clang_cl, "x86_64-pc-windows-msvc", tmp_path, table_dir, "ccopt_cpu_info.c")
    gcc = need(f"{MINGW64}-gcc")
    exe = tmp_path / "info.exe"
    subprocess.run([gcc, str(main), str(obj), "-o", str(exe)], check=True, timeout=120, capture_output=True)
    r = wine_run(wine, exe, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["features"] == expected_from_cpuinfo(cpuinfo_flags())
    if doc["features"].get("AVX512F"):
        masked = json.loads(wine_run(wine, exe, "--json", CCOPT_DISABLE_CPU_FEATURES="AVX512F").stdout)
        assert masked["features"]["AVX512F"] is False and masked["level"] == "X86_V3"
    child = tmp_path / "with space" / "child.exe"
    child.parent.mkdir()
    shutil.copy(exe, child)  # itself, as the child: --json after the program's path
    r = wine_run(wine, exe, "--run-as", "BASELINE", child, "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["arch"] == "x86_64", r.stdout + r.stderr
    r = wine_run(wine, exe, "--run-as", "BASELINE", child, "a b")
    assert r.returncode == 2 and "unknown argument 'a b'" in r.stderr, r.stderr  # one argument, space and all


def test_runtime_arm64_windows_branch_compiles_clean(clang_cl: str, table_dir: Path, tmp_path: Path) -> None:
    """Windows on ARM reads IsProcessorFeaturePresent(): compiled only (nothing runs ARM64 Windows here)."""
    obj = compile_runtime(clang_cl, "aarch64-pc-windows-msvc", tmp_path, table_dir)
    relocs = subprocess.run([need("llvm-objdump"), "-r", str(obj)], capture_output=True, text=True, check=True).stdout
    assert "__imp_IsProcessorFeaturePresent" in relocs


def clang_cl_cross_file(path: Path, clang_cl: str, c_args: str) -> Path:
    path.write_text(f"""[binaries]
c = ['{clang_cl}', '{TARGET}']
c_ld = '{need("lld-link")}'
ar = '{need("llvm-lib")}'

[built-in options]
c_args = [{c_args}]

[host_machine]
system = 'windows'
cpu_family = 'x86_64'
cpu = 'x86_64'
endian = 'little'
""")
    return path


@pytest.mark.slow
def test_meson_shows_the_no_headers_warning(clang_cl: str, tmp_path: Path) -> None:
    """Without an SDK and without -ffreestanding, the configure goes on (no SIMD) with one Meson warning."""
    from .test_meson import Build, project

    cross = clang_cl_cross_file(tmp_path / "clang-cl.ini", clang_cl, "")
    b = Build(tmp_path, project(tmp_path, "fine_targets"))
    for var in ("CC", "CXX"):
        b.env.pop(var)
    out = b.meson_cmd("setup", "--cross-file", str(cross), str(b.dir))
    warnings = [line for line in out.splitlines() if "cannot compile SSE" in line]
    assert len(warnings) == 1 and "WARNING: compiler '" in warnings[0], out[-3000:]
    assert "'stdlib.h' file not found" in warnings[0] and "/clang:-ffreestanding" in warnings[0]
    assert "Baseline    : none" in out


@pytest.mark.slow
def test_meson_configures_a_consumer_with_clang_cl_as_cross_compiler(clang_cl: str, tmp_path: Path) -> None:
    """Meson's own clang-cl support (its id, /FI, /D, /O2), the helper's msvc-style driver under it, and the
    dispatch static libraries built (the C library stand-ins for headers): programs cannot be linked without
    the MSVC C runtime."""
    from .test_meson import Build, project

    # the stand-ins joined to -imsvc: a separate /work/... would read as a /w option
    cross = clang_cl_cross_file(tmp_path / "clang-cl.ini", clang_cl, f"'{FREESTANDING}', '-imsvc{STUB}'")
    b = Build(tmp_path, project(tmp_path, "fine_targets"))
    for var in ("CC", "CXX"):
        b.env.pop(var)
    out = b.meson_cmd("setup", "--cross-file", str(cross), str(b.dir))
    assert "Compiler    : clang-cl-" in out and "Baseline    : SSE SSE2\n" in out  # detect: the x64 target's own
    targets = json.loads(b.meson_cmd("introspect", "--targets", str(b.dir)))
    statics = [t for t in targets if t["type"] == "static library"]
    assert "ccopt_cpu" in [t["name"] for t in statics] and len(statics) > 2  # the runtime and the dispatch libraries
    b.ninja(*(os.path.relpath(f, b.dir) for t in statics for f in t["filename"]))
    for t in statics:
        assert all(Path(f).is_file() for f in t["filename"]), t["name"]
    shutil.rmtree(b.dir)
