"""The C runtime's environment parser is bounded and escapes what it echoes (issue 11).

``CCOPT_DISABLE_CPU_FEATURES`` / ``CCOPT_ENABLE_CPU_FEATURES`` come from whoever starts the
program: 1 MB of names must not print megabytes, and no byte of them may reach the terminal
raw (an ESC starts a terminal command).  Built natively with the strictest warnings; a small
driver sets the variable from a file with ``setenv`` (execve refuses one string over 128 KiB).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, need

RUNTIME = ROOT / "ccopt_meson" / "runtime"
WARNINGS = ("-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1")


DRIVER = r"""
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include "ccopt_cpu.h"

int main(int argc, char **argv)
{
    static char value[4 << 20];
    size_t n = 0;
    FILE *fh;
    if (argc == 3) {
        fh = fopen(argv[2], "rb");
        if (fh == NULL)
            return 2;
        n = fread(value, 1, sizeof value - 1, fh);
        fclose(fh);
        value[n] = '\0';
        setenv(argv[1], value, 1);
    }
    ccopt_cpu_init();
    printf("%s\n", ccopt_cpu_have(ccopt_cpu_id("SSE2")) ? "SSE2" : "-");
    return 0;
}
"""


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("rt")
    (d / "driver.c").write_text(DRIVER)
    exe = d / "driver"
    subprocess.run([need("gcc"), *WARNINGS, f"-I{RUNTIME}", str(RUNTIME / "ccopt_cpu.c"), str(d / "driver.c"),
                    "-o", str(exe)], check=True)
    return exe


def run(exe: Path, var: str, value: bytes, tmp: Path) -> bytes:
    (tmp / "value").write_bytes(value)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCOPT_")}
    r = subprocess.run([str(exe), var, str(tmp / "value")], env=env, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stderr


@pytest.mark.parametrize("var", ["CCOPT_DISABLE_CPU_FEATURES", "CCOPT_ENABLE_CPU_FEATURES"])
def test_a_megabyte_of_unknown_names_prints_a_few_lines(driver: Path, tmp_path: Path, var: str) -> None:
    names = b" ".join(b"nosuch%d" % i for i in range(120_000))  # ~1 MB
    err = run(driver, var, names, tmp_path)
    lines = err.decode().splitlines()
    assert len(err) < 4096, f"{len(err)} bytes printed"
    assert len(lines) == 9 and lines[-1] == f"ccopt: {var}: 119992 more ignored names not shown"
    assert lines[0].startswith(f"ccopt: {var}: unknown CPU feature 'nosuch0'; ignored (known on ")
    assert lines[1] == f"ccopt: {var}: unknown CPU feature 'nosuch1'; ignored"  # the known list once


def test_one_huge_name_is_cut(driver: Path, tmp_path: Path) -> None:
    err = run(driver, "CCOPT_DISABLE_CPU_FEATURES", b"x" * 1_000_000, tmp_path)
    assert len(err) < 2048
    assert err.startswith(b"ccopt: CCOPT_DISABLE_CPU_FEATURES: unknown CPU feature '" + b"x" * 37 + b"...'")


def test_control_bytes_are_escaped(driver: Path, tmp_path: Path) -> None:
    err = run(driver, "CCOPT_DISABLE_CPU_FEATURES", b"\x1b[31mred\x07\xff\\x", tmp_path)
    assert all(b >= 0x20 or b == 0x0A for b in err) and b"\xff" not in err
    assert b"unknown CPU feature '\\x1b[31mred\\x07\\xff\\\\x'" in err


def test_repeated_baseline_names_are_bounded(driver: Path, tmp_path: Path) -> None:
    """A name the runtime knows, repeated: its message too is said a few times only."""
    if b"SSE2" not in subprocess.run([str(driver)], capture_output=True).stdout:
        pytest.skip("the expected feature names are those of an x86_64 host")
    err = run(driver, "CCOPT_ENABLE_CPU_FEATURES", b"ASIMD " * 100_000, tmp_path)
    lines = err.decode().splitlines()
    assert len(lines) == 9
    assert lines[0] == "ccopt: CCOPT_ENABLE_CPU_FEATURES: ASIMD is not a CPU feature of x86_64; ignored"
