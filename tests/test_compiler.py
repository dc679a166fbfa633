"""Who the compiler is: identification from its macro dump, launchers, and a compiler that fails on an empty file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccopt_meson.compiler import identify_id, machine_from_macros, parse_macro_dump, version_from_macros

from .conftest import recorded
from .helpers import cli, fakecc, one_error, x86_gcc


def test_compiler_not_found_behind_a_launcher() -> None:
    one_error(cli("detect", "--cc-arg", fakecc("launcher"), "--cc-arg", "/nonexistent/bin/cc"),
              f"compiler '{fakecc('launcher')} /nonexistent/bin/cc' failed on an empty file (exit status 127): ",
              "/nonexistent/bin/cc")


def test_compiler_failing_on_everything() -> None:
    one_error(cli("detect", "--cc-arg", fakecc("fail")),
              f"compiler '{fakecc('fail')}' failed on an empty file (exit status 3): "
              "fakecc: fatal error: licence server 'lic.example' unreachable")


def test_compiler_killed_by_a_signal() -> None:
    one_error(cli("detect", "--cc-arg", fakecc("segv")),
              f"compiler '{fakecc('segv')}' failed on an empty file (killed by signal SIGSEGV)")


def test_non_utf8_error_is_one_line() -> None:
    one_error(cli("detect", "--cc-arg", fakecc("nonutf8"), env={"FAKECC_FAIL": "1"}),
              f"compiler '{fakecc('nonutf8')}' failed on an empty file (exit status 1): fakecc: fatal error: "
              "caf\ufffd \ufffd\ufffd ne marche pas")


@pytest.mark.parametrize("how", ["--cc", "--cc-arg"])
def test_launcher_in_front(tmp_path: Path, host_gcc_default: dict[str, Any], how: str) -> None:
    cc = x86_gcc()
    if how == "--cc":
        args = ["--cc", f"{fakecc('launcher')} {cc}"]
    else:
        args = ["--cc-arg", fakecc("launcher"), "--cc-arg", cc]
    r = cli("detect", *args, "--json", "--build-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["compiler"]["command"] == [fakecc("launcher"), cc]
    assert (doc["baseline"], doc["dispatch"]) == (host_gcc_default["baseline"], host_gcc_default["dispatch"])


@pytest.mark.parametrize("recording,cid,version,machine", [
    ("gcc12-x86_64-macros", "gcc", "12.2.0", "x86_64"),
    ("clang14-x86_64-macros", "clang", "14.0.6", "x86_64"),
    ("gcc12-aarch64-macros", "gcc", "12.2.0", "aarch64"),
    ("gcc12-riscv64-macros", "gcc", "12.2.0", "riscv64"),
    ("gcc12-s390x-macros", "gcc", "12.2.0", "s390x"),
])
def test_identified_from_a_recorded_macro_dump(recording: str, cid: str, version: str, machine: str) -> None:
    """clang also defines __GNUC__ (4.2.1): the id table must look at __clang__ first."""
    macros = parse_macro_dump(recorded(recording).output)
    assert identify_id(macros) == cid
    assert version_from_macros(cid, macros) == version
    found = machine_from_macros(macros)
    assert found is not None and found.name == machine

