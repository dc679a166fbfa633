"""Detection with real compilers: gcc and clang natively, GCC cross compilers for other arches."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccopt_meson import Request
from ccopt_meson.errors import InputError

from .conftest import detect_doc, need

# What numpy 1.26.4's CCompilerOpt finds with gcc 12 for baseline "SSE SSE2 SSE3", dispatch "max -xop -fma4".
NUMPY_DISPATCH = ("SSSE3 SSE41 POPCNT SSE42 AVX F16C FMA3 AVX2 AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL "
                  "AVX512_ICL AVX512_SPR").split()
NUMPY_FLAGS = {  # CCompilerOpt.feature_flags() for the legacy names, gcc
    "SSSE3": "-msse -msse2 -msse3 -mssse3",
    "SSE42": "-msse -msse2 -msse3 -mssse3 -msse4.1 -mpopcnt -msse4.2",
    "AVX2": "-msse -msse2 -msse3 -mssse3 -msse4.1 -mpopcnt -msse4.2 -mavx -mf16c -mavx2",
    "AVX512_SKX": "-msse -msse2 -msse3 -mssse3 -msse4.1 -mpopcnt -msse4.2 -mavx -mf16c -mfma -mavx2 -mavx512f "
                  "-mno-mmx -mavx512cd -mavx512vl -mavx512bw -mavx512dq",
}


def test_gcc_covers_everything_ccompileropt_finds(gcc: str) -> None:
    doc = detect_doc(Request(command=(gcc,), baseline="SSE SSE2 SSE3", dispatch="max -xop -fma4"))
    assert doc["arch"] == "x86_64" and doc["compiler"]["id"] == "gcc"
    assert doc["baseline"] == {"names": ["SSE", "SSE2", "SSE3"], "args": ["-msse", "-msse2", "-msse3"]}
    assert set(NUMPY_DISPATCH) <= set(doc["dispatch"]["names"])
    for name, flags in NUMPY_FLAGS.items():
        assert set(doc["dispatch"]["args"][name]) == set(flags.split()), name
    assert doc["probes"] <= 3


def test_clang(clang: str) -> None:
    doc = detect_doc(Request(command=(clang,), baseline="min", dispatch="max"))
    assert doc["compiler"]["id"] == "clang"
    assert {"AVX2", "AVX512_SKX", "X86_V3"} <= set(doc["dispatch"]["names"])
    for name, feat in doc["features"].items():
        if feat["supported"] is False:
            assert feat["reason"], name


def test_user_march_joins_the_baseline(gcc: str) -> None:
    doc = detect_doc(Request(command=(gcc,), args=("-march=haswell",)))
    assert {"AVX2", "FMA3", "X86_V3"} <= set(doc["baseline"]["names"])
    assert "AVX2" not in doc["dispatch"]["names"]


def test_native_baseline_matches_the_compiler(gcc: str) -> None:
    doc = detect_doc(Request(command=(gcc,), baseline="native"))
    cpu = Path("/proc/cpuinfo").read_text()
    assert ("AVX2" in doc["baseline"]["names"]) == (" avx2" in cpu)
    assert not set(doc["baseline"]["names"]) & set(doc["dispatch"]["names"])


CROSS = [
    ("aarch64-linux-gnu-gcc", "aarch64", ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"], {"ASIMDHP", "ASIMDDP", "SVE"}),
    ("powerpc64le-linux-gnu-gcc", "ppc64le", ["VSX", "VSX2", "PPC_CRYPTO"], {"VSX3", "VSX4"}),  # POWER8 has crypto
    ("s390x-linux-gnu-gcc", "s390x", [], {"VX", "VXE", "VXE2"}),
    ("riscv64-linux-gnu-gcc", "riscv64", [], set()),
]


def test_armhf_gcc_12_builds_asimd() -> None:
    """gcc 12's AArch32 arm_neon.h lacks vcvtnq_s32_f32; the ASIMD probe tests ARMv8's directed rounding
    with what that header has, so armhf builds get their ASIMD level."""
    doc = detect_doc(Request(command=(need("arm-linux-gnueabihf-gcc"),)))
    assert doc["arch"] == "armhf" and doc["features"]["ASIMD"]["supported"], doc["features"]["ASIMD"]["reason"]
    assert "ASIMD" in doc["dispatch"]["names"]


@pytest.mark.parametrize("cc,arch,baseline,dispatch", CROSS, ids=[c[1] for c in CROSS])
def test_cross_compilers_report_their_target(cc: str, arch: str, baseline: list[str], dispatch: set[str]) -> None:
    doc = detect_doc(Request(command=(need(cc),)))
    assert doc["arch"] == arch
    assert doc["baseline"]["names"] == baseline
    assert dispatch <= set(doc["dispatch"]["names"])
    assert not any(a.startswith("-mfpu") for args in doc["dispatch"]["args"].values() for a in args)
    with pytest.raises(InputError, match="'native' cannot be used when cross-compiling"):
        detect_doc(Request(command=(cc,), baseline="native"))


def test_riscv_gcc12_lacks_rvv_intrinsics_with_a_reason() -> None:
    doc = detect_doc(Request(command=(need("riscv64-linux-gnu-gcc"),)))
    rvv = doc["features"]["RVV"]
    assert rvv["supported"] is False and rvv["reason"]


def test_users_warning_options_cost_no_feature(gcc: str) -> None:
    plain = detect_doc(Request(command=(gcc,)))
    noisy = detect_doc(Request(command=(gcc,), args=("-Wall", "-Wextra", "-Wconversion", "-Werror", "-pedantic")))
    assert noisy["dispatch"]["names"] == plain["dispatch"]["names"]


def test_aarch64_user_mcpu_does_not_conflict_with_table_march() -> None:
    doc = detect_doc(Request(command=(need("aarch64-linux-gnu-gcc"),), args=("-mcpu=neoverse-v1",)))
    assert {"ASIMDHP", "ASIMDDP", "SVE"} <= set(doc["baseline"]["names"])  # detected, and probed without a warning
    assert all(not a.startswith("-march=") for a in doc["baseline"]["args"])
