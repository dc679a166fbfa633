"""The traps real ports met, each built as the pattern the docs give (tests/projects/traps): a C++ kernel
with a C caller and the reverse, a private dispatcher in a shared library, a vendored file's versions renamed
by per-target args; and the tutorial's meson.build cross-built for aarch64, where its --run-as loop is guarded."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, need
from .snippets import snippet
from .test_meson import Build, project

FIXTURE = ROOT / "tests" / "projects" / "traps"


def _symbols(lib: Path, *flags: str) -> dict[str, str]:
    out = subprocess.run([need("nm"), *flags, "--defined-only", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    return {parts[-1]: parts[-2] for parts in (line.split() for line in out.splitlines()) if len(parts) >= 2}


@pytest.mark.slow
def test_each_pattern_builds_links_and_runs(tmp_path: Path) -> None:
    b = Build(tmp_path, project(tmp_path, "traps"))
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert re.search(r"sum_cxx = 10 \(\w+\)", out) and re.search(r"sum_c = 10 \(\w+\)", out)
    assert re.search(r"ksw_extz2_sse = 42 \(\w+\)", out)

    # the vendored file's versions carry the target in their names; the dispatcher has the file's own name
    ksw = _symbols(b.dir / "ksw_caller")
    assert {"ksw_extz2_sse", "ksw_extz2_sse_BASELINE"} <= set(ksw)
    # C linkage on both sides, whatever the caller's language: no mangled version names
    assert not [s for s in _symbols(b.dir / "cxx_caller") if s.startswith("_Z") and "sum_c_" in s]

    lib = b.dir / "libpriv.so"
    exported = _symbols(lib, "-D")
    assert "priv_total" in exported and not [s for s in exported if "priv_sum" in s], exported
    assert _symbols(lib)["priv_sum"] == "t"  # a local symbol: 'static' before CCOPT_DISPATCH_DEFINE


def test_the_library_maintainers_snippets_are_the_fixture_s_code() -> None:
    assert snippet("library/rename") in (FIXTURE / "meson.build").read_text()
    assert snippet("library/extern-c") in (FIXTURE / "cxx_kernel.dispatch.cpp").read_text()
    page = (ROOT / "docs" / "how-to" / "library-maintainers.md").read_text()
    assert "static CCOPT_DISPATCH_DEFINE(priv_dispatch, int, priv_sum, (const int *v, int n), (v, n))" in page
    assert "static CCOPT_DISPATCH_DEFINE(priv_dispatch, int, priv_sum, (const int *v, int n), (v, n))" in (
        FIXTURE / "priv.c").read_text()


@pytest.mark.slow
def test_the_tutorial_meson_build_cross_built_for_aarch64(tmp_path: Path) -> None:
    """The README's project as it stands, cross-built with the cross file of the how-to: its tests pass
    (the --run-as loop, which no exe_wrapper can wrap, is left out of a cross build)."""
    need("aarch64-linux-gnu-gcc")
    need("qemu-aarch64-static")
    src = tmp_path / "fresh"
    (src / "subprojects").mkdir(parents=True)
    from .test_meson import copy_repo

    copy_repo(src / "subprojects" / "ccopt-meson")
    (src / "meson.build").write_text(snippet("consumer/meson.build"))
    for name in ("dot.dispatch.c", "main.c"):
        (src / name).write_text(snippet(f"consumer/{name}"))
    b = Build(tmp_path, src)
    b.env.pop("CC")
    b.env.pop("CXX")
    b.meson_cmd("setup", "--cross-file", str(ROOT / "tests" / "cross" / "aarch64.ini"), str(b.dir))
    out = b.meson_cmd("test", "-C", str(b.dir))
    assert re.search(r"1/1 \S*app\s+OK", out) and "app on" not in out, out


def test_a_caller_without_the_generated_header_gets_the_message_troubleshooting_quotes(tmp_path: Path) -> None:
    gcc = need("gcc")
    caller = tmp_path / "main.c"
    caller.write_text(snippet("consumer/main.c").replace('#include "dot.dispatch.h"\n', ""))
    r = subprocess.run([gcc, "-fsyntax-only", str(caller)], capture_output=True, text=True)
    page = (ROOT / "docs" / "how-to" / "troubleshooting.md").read_text()
    quoted = re.search(r"^\| `error: (expected [^`]+)` on a `CCOPT_DISPATCH_DECLARE` line", page, re.M)
    assert r.returncode != 0 and quoted
    def plain(text: str) -> str:  # gcc quotes with ' or with U+2018/U+2019, by locale
        return re.sub("['\u2018\u2019]", "", text)

    assert plain(quoted.group(1)) in plain(r.stderr), r.stderr
