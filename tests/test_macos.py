"""macOS, as far as it compiles here: clang's Apple targets without the macOS SDK (nothing runs Mach-O).

Probes are compiled with ``-ffreestanding`` (no SDK: clang's ``mm_malloc.h`` and ``arm_neon.h``
are fine without one, ``stdlib.h`` is not); the runtime's sysctl branch is compiled against the C
library stand-ins in ``tests/data/crt-stub``.  What runs on a Mac (which ``hw.optional`` names
exist from which macOS version) is not checked here: see docs/project/platforms.md.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, need
from .helpers import cli, one_error

RUNTIME = ROOT / "ccopt_meson" / "runtime"
STUB = ROOT / "tests" / "data" / "crt-stub"
APPLE = {"arm64-apple-macos11": "aarch64", "x86_64-apple-macos10.13": "x86_64"}


def detect(*args: str) -> dict:  # type: ignore[type-arg]
    r = cli("detect", "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("target", list(APPLE))
def test_probes_compile_for_apple_targets(target: str) -> None:
    # min: the tables' floor (detect is the Apple target's own, higher: SSE4.1 on macOS 10.13, the M1's crypto)
    doc = detect("--cc", f"{need('clang')} --target={target}", "--arg=-ffreestanding", "--baseline", "min")
    assert doc["arch"] == APPLE[target] and not doc["notes"]
    if APPLE[target] == "aarch64":
        assert doc["baseline"]["names"] == ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
        assert {"ASIMDDP", "ASIMDHP", "AES", "SHA2", "CRC32", "SVE"} <= set(doc["dispatch"]["names"])
    else:
        assert doc["baseline"]["names"] == ["SSE", "SSE2", "SSE3"]
        assert {"AVX2", "AVX512_SKX", "AVX512_ICL"} <= set(doc["dispatch"]["names"])


def test_apple_target_without_the_sdk_gets_the_warning() -> None:
    doc = detect("--cc", f"{need('clang')} --target=arm64-apple-macos11")
    [warning] = [n for n in doc["notes"] if n.startswith("warning: ")]
    assert "which every aarch64 CPU has" in warning and "macOS SDK" in warning and "-ffreestanding" in warning


@pytest.mark.parametrize("target", list(APPLE))
def test_runtime_sysctl_branch_compiles_clean(target: str, table_dir: Path, tmp_path: Path) -> None:
    """The __APPLE__ branch: sysctlbyname() for arm64's features and x86_64's lazily enabled AVX-512."""
    obj = tmp_path / "ccopt_cpu.o"
    cmd = [need("clang"), f"--target={target}", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O2",
           "-nostdlibinc", "-isystem", str(STUB), f"-I{table_dir}", f"-I{RUNTIME}", "-c", str(RUNTIME / "ccopt_cpu.c"),
           "-o", str(obj)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    symbols = subprocess.run([need("llvm-nm"), str(obj)], capture_output=True, text=True, check=True).stdout
    assert "U _sysctlbyname" in symbols
    assert subprocess.run([need("llvm-objdump"), "--macho", "--private-headers", str(obj)], capture_output=True,
                          text=True).returncode == 0  # a Mach-O object


def test_universal2_is_refused_with_the_way_out() -> None:
    """Two -arch options: no one set of CPU features; one build per architecture, fused afterwards."""
    r = cli("detect", "--cc", need("clang"), "--arg=-arch", "--arg=x86_64", "--arg=-arch", "--arg=arm64")
    one_error(r, "'-arch x86_64 -arch arm64' build for 2 architectures at once (universal2)",
              "configure one build per architecture", "lipo")


def test_one_arch_option_is_fine() -> None:
    doc = detect("--cc", f"{need('clang')} --target=arm64-apple-macos11", "--arg=-arch", "--arg=arm64",
                 "--arg=-ffreestanding")
    assert doc["arch"] == "aarch64"
