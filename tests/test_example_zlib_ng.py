"""examples/zlib-ng: a real library's kernels built with ccopt targets and picked by ccopt's runtime.

zlib-ng 2.3.3 (from the sdist of the PyPI package zlib-ng 1.1.0, fetched and sha256-checked by the
example's fetch_zlib_ng.py into a cache outside the repository) is built by the example's
meson.build.  Every setting runs zlib-ng's own tests (its googletest suite, ``example`` and
``infcover``) and ``zng-kernels``, which prints the kernel in each slot of zlib-ng's function table;
the expected kernels follow from the kernel groups the CPU can run, in functable.c's order.

Two builds serve all settings: a static x86_64 build (run natively, with
CCOPT_DISABLE_CPU_FEATURES masking each group in turn, and under qemu-x86_64-static CPU models)
and an aarch64 cross build run under qemu-aarch64-static CPU models.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Sequence

import pytest

from .conftest import IN_CI, ROOT, need, need_module
from .helpers import clean_env
from .test_meson import Build, copy_repo

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "zlib-ng"
IS_X86_64 = platform.machine().lower() in ("x86_64", "amd64")

# Each slot of zlib-ng's function table: (kernel group, kernel) from the lowest to the highest, in
# functable.c's order (later assignments win).  "" is the generic C code.
SLOTS: dict[str, list[tuple[str, str]]] = {
    "adler32": [("", "adler32_c"), ("X86_SSSE3", "adler32_ssse3"), ("X86_AVX2", "adler32_avx2"),
                ("X86_AVX512", "adler32_avx512"), ("X86_AVX512VNNI", "adler32_avx512_vnni"),
                ("ARM_NEON", "adler32_neon")],
    "adler32_fold_copy": [("", "adler32_fold_copy_c"), ("X86_SSE42", "adler32_fold_copy_sse42"),
                          ("X86_AVX2", "adler32_fold_copy_avx2"), ("X86_AVX512", "adler32_fold_copy_avx512"),
                          ("X86_AVX512VNNI", "adler32_fold_copy_avx512_vnni"), ("ARM_NEON", "adler32_fold_copy_neon")],
    "chunkmemset_safe": [("X86_SSE2", "chunkmemset_safe_sse2"), ("X86_SSSE3", "chunkmemset_safe_ssse3"),
                         ("X86_AVX2", "chunkmemset_safe_avx2"), ("X86_AVX512", "chunkmemset_safe_avx512"),
                         ("ARM_NEON", "chunkmemset_safe_neon")],
    "compare256": [("X86_SSE2", "compare256_sse2"), ("X86_AVX2", "compare256_avx2"),
                   ("X86_AVX512", "compare256_avx512"), ("ARM_NEON", "compare256_neon")],
    "crc32": [("", "crc32_chorba"), ("X86_SSE2", "crc32_chorba_sse2"), ("X86_SSE41", "crc32_chorba_sse41"),
              ("X86_PCLMULQDQ_CRC", "crc32_pclmulqdq"), ("X86_VPCLMULQDQ_CRC", "crc32_vpclmulqdq"),
              ("ARM_CRC32", "crc32_armv8")],
    "crc32_fold": [("", "crc32_fold_c"), ("X86_PCLMULQDQ_CRC", "crc32_fold_pclmulqdq"),
                   ("X86_VPCLMULQDQ_CRC", "crc32_fold_vpclmulqdq"), ("ARM_CRC32", "crc32_fold_armv8")],
    "crc32_fold_copy": [("", "crc32_fold_copy_c"), ("X86_PCLMULQDQ_CRC", "crc32_fold_pclmulqdq_copy"),
                        ("X86_VPCLMULQDQ_CRC", "crc32_fold_vpclmulqdq_copy"), ("ARM_CRC32", "crc32_fold_copy_armv8")],
    "inflate_fast": [("X86_SSE2", "inflate_fast_sse2"), ("X86_SSSE3", "inflate_fast_ssse3"),
                     ("X86_AVX2", "inflate_fast_avx2"), ("X86_AVX512", "inflate_fast_avx512"),
                     ("ARM_NEON", "inflate_fast_neon")],
    "longest_match": [("X86_SSE2", "longest_match_sse2"), ("X86_AVX2", "longest_match_avx2"),
                      ("X86_AVX512", "longest_match_avx512"), ("ARM_NEON", "longest_match_neon")],
    "slide_hash": [("X86_SSE2", "slide_hash_sse2"), ("X86_AVX2", "slide_hash_avx2"), ("ARM_NEON", "slide_hash_neon")],
}

# functable.c picks the VPCLMULQDQ kernels only when the PCLMULQDQ and AVX-512 groups may run too.
ALSO_NEEDS = {"X86_VPCLMULQDQ_CRC": ("X86_PCLMULQDQ_CRC", "X86_AVX512")}

# x86 kernel groups, lowest first: the ccopt name that masks the group in CCOPT_DISABLE_CPU_FEATURES,
# and the /proc/cpuinfo flags the group's code needs (an oracle independent of ccopt's cpuid code,
# what zlib-ng's own x86_features.c asks for).
X86_GROUPS: list[tuple[str, str, tuple[str, ...]]] = [
    ("X86_SSE2", "", ("sse2",)),
    ("X86_SSSE3", "SSSE3", ("ssse3",)),
    ("X86_SSE41", "SSE41", ("sse4_1",)),
    ("X86_SSE42", "SSE42_ISA", ("sse4_2",)),
    ("X86_PCLMULQDQ_CRC", "PCLMULQDQ", ("sse4_2", "pclmulqdq")),
    ("X86_AVX2", "AVX2_ISA", ("avx2", "bmi2")),
    ("X86_AVX512", "AVX512F", ("avx512f", "avx512dq", "avx512bw", "avx512vl", "bmi2")),
    ("X86_AVX512VNNI", "AVX512VNNI", ("avx512f", "avx512dq", "avx512bw", "avx512vl", "bmi2", "avx512_vnni")),
    ("X86_VPCLMULQDQ_CRC", "VPCLMULQDQ", ("avx512f", "avx512dq", "avx512bw", "avx512vl", "bmi2", "vpclmulqdq",
                                          "pclmulqdq")),
]
X86_NAMES = [g for g, _, _ in X86_GROUPS]

# What qemu 7.2's CPU models run: Nehalem SSE4.2 without PCLMULQDQ, SandyBridge adds PCLMULQDQ
# (and AVX), Haswell AVX2 and BMI2; none has AVX-512.
QEMU_X86 = {
    "Nehalem": X86_NAMES[:4],
    "SandyBridge": X86_NAMES[:5],
    "Haswell": X86_NAMES[:6],
}
# AArch64: NEON is the baseline; all three models report CRC32 (HWCAP_CRC32).
QEMU_AARCH64 = {
    "cortex-a53": ["ARM_NEON", "ARM_CRC32"],
    "neoverse-n1": ["ARM_NEON", "ARM_CRC32"],
    "max": ["ARM_NEON", "ARM_CRC32"],
}


def expected_kernels(usable: Sequence[str]) -> dict[str, str]:
    """The kernel functable.c puts in each slot when exactly the groups ``usable`` may run."""
    picks = {}
    for slot, ladder in SLOTS.items():
        fitting = [kernel for group, kernel in ladder
                   if group == "" or (group in usable and all(g in usable for g in ALSO_NEEDS.get(group, ())))]
        picks[slot] = fitting[-1]
    return picks


def fail_or_skip(message: str) -> None:
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def zlib_ng_src() -> Path:
    """zlib-ng's unpacked sources from the cache (downloaded once, sha256-checked)."""
    r = subprocess.run([sys.executable, str(EXAMPLE / "fetch_zlib_ng.py")], capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        fail_or_skip(f"cannot fetch zlib-ng's sources (network?):\n{r.stdout[-1500:]}{r.stderr[-1500:]}")
    return Path(r.stdout.strip().splitlines()[-1])


def example_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "zlib-ng"
    shutil.copytree(EXAMPLE, dest, symlinks=True, ignore=shutil.ignore_patterns("ccopt-meson", "__pycache__"))
    copy_repo(dest / "subprojects" / "ccopt-meson")
    return dest


def run(cmd: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path | None = None) -> str:
    full_env = clean_env("QEMU_")
    full_env.update(env or {})
    r = subprocess.run(list(cmd), capture_output=True, text=True, env=full_env, cwd=cwd, timeout=600)
    assert r.returncode == 0, (f"{shlex.join(cmd)} {dict(env or {})} exited {r.returncode} "
                               f"(a negative code is a signal: SIGILL=-4)\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r.stdout


def kernels(build: Path, prefix: Sequence[str] = (), env: Mapping[str, str] | None = None) -> dict[str, str]:
    lines = run([*prefix, str(build / "zng-kernels")], env).split("\n")
    return dict(line.split(" ", 1) for line in lines if line)


def zlib_ng_tests(build: Path, prefix: Sequence[str] = (), env: Mapping[str, str] | None = None) -> None:
    """zlib-ng's own test programs: all must pass."""
    out = run([*prefix, str(build / "gtest_zlib"), "--gtest_brief=1"], env, cwd=build)
    assert "FAILED" not in out, out[-3000:]
    run([*prefix, str(build / "example")], env, cwd=build)
    run([*prefix, str(build / "infcover")], env, cwd=build)


def setup_and_build(tmp_path: Path, src: Path, *args: str) -> Build:
    b = Build(tmp_path, example_copy(tmp_path))
    out = b.meson_cmd("setup", f"-Dzlib-ng-src={src}", "-Dgtest=enabled", *args, str(b.dir))
    assert re.search(r"kernel groups\s*:", out), out
    b.ninja()
    return b


def audit_clean(build: Path, *options: str) -> None:
    """The ISA audit: every object uses only what it may (the kernels their group's test, the rest the baseline)."""
    need_module("elftools", "the package's 'audit' extra")
    r = subprocess.run([sys.executable, "-m", "ccopt_meson", "audit", *options, str(build)], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-1000:])


def cpuinfo_flags() -> set[str]:
    text = Path("/proc/cpuinfo").read_text()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.partition(":")[2].split())


@pytest.mark.skipif(not IS_X86_64, reason="the host is not x86_64")
def test_x86_64_native_masked_and_emulated(tmp_path: Path, zlib_ng_src: Path) -> None:
    need("g++")
    if not Path("/usr/src/googletest/googletest/src/gtest-all.cc").is_file():
        fail_or_skip("googletest's sources are not installed (Debian package googletest)")
    b = setup_and_build(tmp_path, zlib_ng_src, "-Dc_link_args=-static", "-Dcpp_link_args=-static", "-Dshared=false")
    run([*b.meson, "test", "-C", str(b.dir), "--print-errorlogs"], b.env)
    audit_clean(b.dir)

    # natively, then with each group masked in turn (highest first): the next lower group takes over
    flags = cpuinfo_flags()
    host = [g for g, _, need_flags in X86_GROUPS if set(need_flags) <= flags]
    assert kernels(b.dir) == expected_kernels(host)
    zlib_ng_tests(b.dir)
    for i in range(len(X86_GROUPS) - 1, 0, -1):
        if X86_NAMES[i] not in host:
            continue
        # this group and every higher one (a name masks what implies it: AVX2_ISA also hides the
        # AVX-512 groups, but not the lower ones)
        env = {"CCOPT_DISABLE_CPU_FEATURES": " ".join(mask for _, mask, _ in X86_GROUPS[i:])}
        assert kernels(b.dir, env=env) == expected_kernels([g for g in host if X86_NAMES.index(g) < i]), env
        zlib_ng_tests(b.dir, env=env)

    # emulated CPUs: the static binaries need nothing from this machine
    qemu = need("qemu-x86_64-static")
    for model, usable in QEMU_X86.items():
        prefix = [qemu, "-cpu", model]
        assert kernels(b.dir, prefix) == expected_kernels(usable), model
        zlib_ng_tests(b.dir, prefix)


def _loaded(cmd: Sequence[str], libdir: Path) -> str:
    """The libz-ng.so.2 the loader picked for ``cmd`` (LD_LIBRARY_PATH at ``libdir``), relative to it, from
    LD_DEBUG=libs; the program must pass.  It runs in ``libdir``'s parent: zlib-ng's example writes foo.gz."""
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=600, cwd=libdir.parent,
                       env=clean_env("QEMU_", "LD_", LD_LIBRARY_PATH=str(libdir), LD_DEBUG="libs"))
    assert r.returncode == 0, (cmd, r.stdout[-2000:], r.stderr[-3000:])
    picked = [line.split("calling init: ", 1)[1].strip() for line in r.stderr.splitlines()
              if "calling init: " in line and "libz-ng.so.2" in line]
    assert len(picked) == 1, r.stderr[-3000:]
    return os.path.relpath(picked[0], libdir)


def _vector_registers(objects: Path) -> set[str]:
    """The vector register kinds the library's own objects (zlib-ng's generic code, no kernel) use."""
    found: set[str] = set()
    for obj in sorted(objects.glob("*.o")):
        text = run([need("objdump"), "-d", "--no-show-raw-insn", str(obj)])
        found |= {kind for kind in ("xmm", "ymm", "zmm") if f"%{kind}" in text}
    return found


@pytest.mark.skipif(not IS_X86_64, reason="the host is not x86_64")
def test_hwcaps_builds_install_one_soname_and_the_loader_picks_by_cpu(tmp_path: Path, zlib_ng_src: Path) -> None:
    """-Dhwcaps=x86-64-v3,x86-64-v4: three libz-ng.so.2 from one configure; zlib-ng's tests pass with each
    build's objects (meson test, natively); its example.c, linked with the shared library, loads the base
    build under qemu's Nehalem, the x86-64-v3 build under Haswell and the x86-64-v4 build natively on an
    AVX-512 CPU, and passes."""
    need("g++")
    qemu = need("qemu-x86_64-static")
    if not Path("/usr/src/googletest/googletest/src/gtest-all.cc").is_file():
        fail_or_skip("googletest's sources are not installed (Debian package googletest)")
    inst = tmp_path / "inst"
    b = setup_and_build(tmp_path, zlib_ng_src, "-Dhwcaps=x86-64-v3,x86-64-v4", f"--prefix={inst}", "--libdir=lib")
    out = run([*b.meson, "test", "-C", str(b.dir), "--print-errorlogs"], b.env)
    v4 = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= cpuinfo_flags()
    for level in ("x86-64-v3", "x86-64-v4"):
        for name in ("gtest_zlib", "example", "infcover"):
            verdict = "OK" if level == "x86-64-v3" or v4 else "SKIP"
            assert re.search(rf"{name} {level}\s+{verdict}", out), out[-3000:]
    # the build directory's audit knows each target's level: every object and every linked file, each build
    # at its own level, passes
    audit_clean(b.dir, "--linked")
    run([*b.meson, "install", "-C", str(b.dir), "--quiet"], b.env)
    libdir = inst / "lib"
    for sub in ("", "glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v4"):
        dyn = run([need("readelf"), "-d", str(libdir / sub / "libz-ng.so.2.3.3")])
        assert "Library soname: [libz-ng.so.2]" in dyn, sub
    # zlib-ng's own code (its kernels are zlib-ng's functions, not ccopt versions) of each build passes the ISA
    # audit at the build's level, and not at the level below
    need_module("elftools", "the package's 'audit' extra")
    for below, level in (("x86-64-v2", "x86-64-v3"), ("x86-64-v3", "x86-64-v4")):
        objects = [str(o) for o in sorted((b.dir / "glibc-hwcaps" / level / "libz-ng.a.p").glob("*.o"))]
        for baseline, status in ((level, 0), (below, 1)):
            r = subprocess.run([sys.executable, "-m", "ccopt_meson", "audit", "--baseline", baseline, *objects],
                               capture_output=True, text=True, cwd=ROOT)
            assert r.returncode == status, (level, baseline, r.stdout[-3000:], r.stderr[-1000:])
    # zlib-ng's own code (not a kernel) compiled at each level: the vectoriser's registers
    assert _vector_registers(b.dir / "libz-ng.a.p") == {"xmm"}
    assert _vector_registers(b.dir / "glibc-hwcaps" / "x86-64-v3" / "libz-ng.a.p") == {"xmm", "ymm"}
    assert "zmm" in _vector_registers(b.dir / "glibc-hwcaps" / "x86-64-v4" / "libz-ng.a.p")

    example = str(b.dir / "example-shared")
    assert _loaded([qemu, "-cpu", "Nehalem", example], libdir) == "libz-ng.so.2"
    assert _loaded([qemu, "-cpu", "Haswell", example], libdir) == "glibc-hwcaps/x86-64-v3/libz-ng.so.2"
    if v4:
        assert _loaded([example], libdir) == "glibc-hwcaps/x86-64-v4/libz-ng.so.2"
    # each build's own test programs on the emulated CPU of its level
    for model, sub in (("Nehalem", ""), ("Haswell", "glibc-hwcaps/x86-64-v3")):
        for name in ("example", "infcover"):
            run([qemu, "-cpu", model, str(b.dir / sub / name)], cwd=b.dir)


def test_aarch64_cross_build_under_qemu(tmp_path: Path, zlib_ng_src: Path) -> None:
    need("aarch64-linux-gnu-gcc")
    need("aarch64-linux-gnu-g++")
    qemu = need("qemu-aarch64-static")
    if not Path("/usr/src/googletest/googletest/src/gtest-all.cc").is_file():
        fail_or_skip("googletest's sources are not installed (Debian package googletest)")
    b = Build(tmp_path, example_copy(tmp_path))
    b.env.pop("CC")
    b.env.pop("CXX")
    out = b.meson_cmd("setup", "--cross-file", str(ROOT / "tests" / "cross" / "aarch64.ini"),
                      f"-Dzlib-ng-src={zlib_ng_src}", "-Dgtest=enabled", str(b.dir))
    assert "Architecture: aarch64" in out and "kernel groups: ARM_NEON" in out, out
    b.ninja()
    run([*b.meson, "test", "-C", str(b.dir), "--print-errorlogs"], b.env)  # the cross file's exe_wrapper
    audit_clean(b.dir)
    for model, usable in QEMU_AARCH64.items():
        prefix = [qemu, "-L", "/usr/aarch64-linux-gnu", "-cpu", model]
        assert kernels(b.dir, prefix) == expected_kernels(usable), model
        zlib_ng_tests(b.dir, prefix)
    masked = {"CCOPT_DISABLE_CPU_FEATURES": "CRC32"}
    assert kernels(b.dir, prefix, masked) == expected_kernels(["ARM_NEON"])
    zlib_ng_tests(b.dir, prefix, masked)


# --------------------------------------------------------------------------- flags against zlib-ng's CMake


# The predefined macros ccopt's flags add to those of zlib-ng's CMake flags, and those they lack,
# per source; examples/zlib-ng/README.md explains each difference.  All other kernels (the SSE2 ones and
# the generic C code too: the default baseline, detect, is the compiler's own), and every aarch64 one
# (NEON and CRC32), get exactly zlib-ng's macros.
AVX512_LEVEL = (["__F16C__", "__FMA__"], ["__MMX__", "__tune_cascadelake__"])  # numpy's AVX512F; -mtune


def expected_difference(arch: str, source: str) -> tuple[list[str], list[str]]:
    name = Path(source).stem
    if "avx512" in name or "vpclmulqdq" in name:
        return AVX512_LEVEL
    return ([], [])


def target_flags(command: str) -> list[str]:
    """The flags of a compile command that choose instructions: -m... (no defines, no -O)."""
    return [a for a in shlex.split(command) if a.startswith("-m")]


def macros(cc: str, flags: Sequence[str]) -> set[str]:
    out = run([cc, "-dM", "-E", "-x", "c", "-", *flags])
    return {line.split()[1] for line in out.splitlines() if line.startswith("#define ")}


def compile_flags(build: Path, root: str) -> dict[str, list[str]]:
    """Source path below ``root`` -> its instruction-set flags, from a build dir's compile_commands.json."""
    found: dict[str, list[str]] = {}
    for entry in json.loads((build / "compile_commands.json").read_text()):
        path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
        if path.startswith(root + os.sep) and "/arch/" in path:
            found[os.path.relpath(path, root)] = target_flags(entry["command"])
    return found


# (compiler, CMake cache entries, Meson setup arguments) of each build compared
COMPARED = {
    "x86_64": ("gcc", [], []),
    "aarch64": ("aarch64-linux-gnu-gcc", ["-DCMAKE_SYSTEM_NAME=Linux", "-DCMAKE_SYSTEM_PROCESSOR=aarch64"],
                ["--cross-file", str(ROOT / "tests" / "cross" / "aarch64.ini")]),
}


@pytest.mark.parametrize("arch", list(COMPARED))
def test_kernel_macros_match_zlib_ngs_cmake(tmp_path: Path, zlib_ng_src: Path, arch: str) -> None:
    compiler, cmake_args, meson_args = COMPARED[arch]
    if arch == "x86_64" and not IS_X86_64:
        pytest.skip("the host is not x86_64")
    cmake = need("cmake")
    cc = need(compiler)
    cm = tmp_path / "cmake"
    run([cmake, "-S", str(zlib_ng_src), "-B", str(cm), "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", "-DBUILD_TESTING=OFF",
         "-DZLIB_COMPAT=OFF", f"-DCMAKE_C_COMPILER={cc}", *cmake_args])
    b = Build(tmp_path, example_copy(tmp_path))
    if meson_args:
        b.env.pop("CC")
    b.meson_cmd("setup", f"-Dzlib-ng-src={zlib_ng_src}", "-Dgtest=disabled", *meson_args, str(b.dir))
    theirs = compile_flags(cm, str(zlib_ng_src))
    ours = compile_flags(b.dir, str(zlib_ng_src))
    base = macros(cc, [])
    report = {}
    for source in sorted(ours):
        if source not in theirs:
            continue
        a, c = macros(cc, ours[source]), macros(cc, theirs[source])
        report[source] = (sorted((a - c) - base), sorted(c - a))
    kernels = {s for s in theirs if s.startswith(("arch/x86/", "arch/arm/")) and not s.endswith("_features.c")}
    assert kernels, theirs
    assert kernels <= set(report), f"kernels zlib-ng's CMake builds and the example does not: {kernels - set(report)}"
    unexplained = {s: d for s, d in report.items() if d != expected_difference(arch, s)}
    assert not unexplained, f"(ccopt adds, ccopt lacks) not explained in the README: {unexplained}"
