"""Detection end to end (issue 11): compilers that are none, paths that are odd, explain's names.

Each reproduction of the issue is one test; most run the real CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ccopt_meson import Request, host

from .conftest import ROOT, FakeCompiler, detect_doc, need

CACHE = "ccopt-features.json"


def cli(*args: str, env: dict[str, str] | None = None, pythonpath: Path = ROOT,
        cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("CCOPT_", "FAKECC_", "MESON_")) and k not in ("CFLAGS", "CPPFLAGS")}
    full.update(PYTHONPATH=str(pythonpath), **(env or {}))
    return subprocess.run([sys.executable, "-m", "ccopt_meson", *args], capture_output=True, text=True,
                          env=full, timeout=300, cwd=cwd)


def one_error(r: subprocess.CompletedProcess[str], *fragments: str) -> str:
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccopt-meson: error: "), r.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


def x86_gcc() -> str:
    if host.machine_name() != "x86_64":
        pytest.skip("the expected feature names are those of an x86_64 host")
    return need("gcc")


@pytest.fixture(scope="module")
def reference() -> dict[str, object]:
    r = cli("detect", "--cc", x86_gcc(), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- a compiler must prove it is one


def test_true_is_not_a_compiler(tmp_path: Path) -> None:
    r = cli("detect", "--cc", "true", "--build-dir", str(tmp_path))
    one_error(r, "'true' printed no predefined macros for an empty file, so it is not a C compiler")
    assert not (tmp_path / CACHE).exists(), "nothing is cached"


def test_the_users_output_name_does_not_redirect_probes(tmp_path: Path, reference: dict[str, object]) -> None:
    """CFLAGS="-o /tmp/f": the probes keep their own -o, the answer is gcc's, and /tmp/f is never written."""
    out = tmp_path / "f"
    for flags in (f"-o {out}", f"-o{out}"):
        r = cli("detect", "--cc", x86_gcc(), "--json", env={"CFLAGS": flags})
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert (doc["baseline"], doc["dispatch"]) == (reference["baseline"], reference["dispatch"])
        assert not out.exists()


def test_a_quote_in_the_checkout_path_costs_no_feature(tmp_path: Path, reference: dict[str, object]) -> None:
    """The batched probe includes each probe by name with -I<probes dir>: no path is quoted into C."""
    checkout = tmp_path / 'a"b\\c \'d'
    checkout.mkdir()
    shutil.copytree(ROOT / "ccopt_meson", checkout / "ccopt_meson", ignore=shutil.ignore_patterns("__pycache__"))
    r = cli("detect", "--cc", x86_gcc(), "--json", pythonpath=checkout)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["baseline"], doc["dispatch"]) == (reference["baseline"], reference["dispatch"])
    assert all(f["supported"] is not False for n, f in doc["features"].items() if n in ("SSE", "AVX2"))


# --------------------------------------------------------------------------- explain's names


@pytest.mark.parametrize("names,expected", [
    (["avx2 "], ["AVX2"]),
    (["avx2,sse41"], ["AVX2", "SSE41"]),
    (["avx2", " AVX2,"], ["AVX2"]),
])
def test_explain_names_with_separators(names: list[str], expected: list[str]) -> None:
    r = cli("explain", *names, "--cc", x86_gcc(), "--json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    answers = json.loads(r.stdout)
    assert [a["name"] for a in answers] == expected
    assert all(a["status"] in ("baseline", "dispatch") for a in answers)
    text = cli("explain", *names, "--cc", x86_gcc()).stdout
    assert "None" not in text and "feature;" not in text


@pytest.mark.parametrize("name", ["+avx2", "avx2,-sse41", "avx2+sse41", "max", "avx2 min"])
def test_explain_refuses_what_is_not_a_feature_name(name: str) -> None:
    one_error(cli("explain", name, "--cc", "gcc"), f"explain: '{name}' is not a feature name; "
              "'ccopt-meson features' lists them")


def test_explain_of_a_foreign_feature_names_its_architecture() -> None:
    r = cli("explain", "asimd", "--cc", x86_gcc())
    assert r.returncode == 0
    assert r.stdout == "ASIMD: not available: ASIMD is an arm feature; this compiler targets x86_64\n"


# --------------------------------------------------------------------------- global state


def test_detect_changes_no_umask_and_files_get_it(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        detect_doc(Request(command=("fakecc",)), build_dir=tmp_path, runner=FakeCompiler())
        assert os.umask(0o027) == 0o027, "the process umask is left alone"
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / CACHE).stat().st_mode) == 0o640
