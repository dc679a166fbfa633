"""Staging a source checkout of ccopt-meson as a consumer's subproject (the benchmark's projects and
tests/test_meson.py use the same copy)."""

from __future__ import annotations

import shutil
from pathlib import Path

from bench.timing import ROOT

REPO_PARTS = ("meson.build", "meson_options.txt", "tools", "ccopt_meson")


def copy_repo(dest: Path, bytecode: bool = True) -> None:
    """The parts of this checkout a consumer needs in ``subprojects/ccopt-meson``.

    With ``bytecode``, also the ``__pycache__`` an installed package has (what timings need); a
    release tarball has none.
    """
    dest.mkdir(parents=True)
    for part in REPO_PARTS:
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / part)
    if bytecode:
        precompile(dest / "ccopt_meson")


def precompile(package: Path) -> None:
    """Write the bytecode a first run (or pip install) writes; PYTHONDONTWRITEBYTECODE may forbid it."""
    import compileall

    compileall.compile_dir(str(package), quiet=1)


def make_ccopt_project(dest: Path) -> Path:
    """examples/dot with the repo parts in subprojects/ccopt-meson, as tests/test_meson.py builds it."""
    shutil.copytree(ROOT / "examples" / "dot", dest, symlinks=True,
                    ignore=shutil.ignore_patterns("ccopt-meson", "build*", "__pycache__"))
    copy_repo(dest / "subprojects" / "ccopt-meson")
    return dest
