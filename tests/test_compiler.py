"""Who the compiler is: identification from its macro dump, launchers, and a compiler that fails on an empty file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
