#!/usr/bin/env python3
"""The Python a numpy release is configured, built and tested with: a pinned venv in the cache.

    python3 examples/numpy/toolchain.py [--version 2.5.5]     # prints the venv's python

numpy 2.5 needs CPython >= 3.12 (its ``requires-python``; under an older one its meson.build
looks for numpy.distutils, which 2.5 no longer ships), meson >= 1.8.3 and Cython >= 3.1. Each
release gets a venv with the pinned tools below, made once in the cache of prepare_numpy.py
(``venv-py<X.Y.Z>-<hash of the interpreter and the pins>``) from the Python running this when it
is new enough (2.2.6 with CI's 3.11), else from ``python3.12`` on PATH or pyenv's
``$PYENV_ROOT/versions/3.12.*``. Its ``bin`` holds ``meson``, ``ninja`` and ``cython``, which
numpy's meson.build and meson-python run; the fork runs under it too.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import prepare_numpy

# the build and test tools of numpy 2.5.5 (requirements/build_requirements.txt, test_requirements.txt:
# pytest and hypothesis are its own pins), pinned so a fresh machine gets what this example was checked with
TOOLS = ["meson==1.12.1", "meson-python==0.22.1", "Cython==3.3.1", "ninja==1.13.2", "pytest==9.1.0",
         "hypothesis==6.152.1", "pytest-xdist==3.8.0", "tzdata"]


# pyenv's names of CPython releases: 3.12.1, 3.12.0rc1 (pre-releases: a, b, rc)
PYENV_VERSION = re.compile(r"\d+\.\d+\.(\d+)(?:(a|b|rc)(\d+))?")
STAGES = {"a": 0, "b": 1, "rc": 2, None: 3}


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def pyenv_rank(name: str) -> tuple[int, ...] | None:
    """Where pyenv's ``versions/<name>`` of one minor ranks: releases above pre-releases, newer above older;
    None for a name that is not a CPython release (``3.12-dev``)."""
    m = PYENV_VERSION.fullmatch(name.split("-")[0])
    if m is None:
        return None
    micro, stage, n = m.groups()
    return int(stage is None), int(micro), STAGES[stage], int(n or 0)


def pyenv_pythons(pattern: str) -> list[str]:
    """The interpreters ``pattern`` finds in pyenv's versions, best first."""
    ranked = [(rank, p) for p in glob.glob(pattern) if (rank := pyenv_rank(Path(p).parents[1].name)) is not None]
    return [p for _, p in sorted(ranked, reverse=True)]


def runs_as(python: str, minor: str) -> bool:
    """Whether ``python`` starts and is CPython ``minor`` (a pyenv shim on PATH may only say it is not there;
    a file without the execute bit, or one that hangs, is not one)."""
    code = "import sys; print('%d.%d' % sys.version_info[:2])"
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and r.stdout.strip() == minor


def find_python(minor: str) -> Path:
    """A CPython ``minor`` (``3.12``) interpreter; one line saying where it was looked for when none is."""
    root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    pattern = str(Path(root) / "versions" / f"{minor}.*" / "bin" / f"python{minor}")
    for candidate in [shutil.which(f"python{minor}"), *pyenv_pythons(pattern)]:
        if candidate and runs_as(candidate, minor):
            return Path(candidate)
    raise SystemExit(f"toolchain: no python{minor} on PATH nor at {pattern}; install CPython {minor} "
                     f"(e.g. 'pyenv install {minor}')")


def base_python(version: str) -> Path:
    """The interpreter the venv of ``version`` is made from: this one when it is new enough."""
    minor = prepare_numpy.release(version).python
    if sys.version_info[:2] >= version_tuple(minor):
        return Path(getattr(sys, "_base_executable", sys.executable))
    return find_python(minor)


def python_version(python: Path) -> str:
    r = subprocess.run([str(python), "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                       capture_output=True, text=True, timeout=60)
    return r.stdout.strip()


def venv_dir(base: Path) -> Path:
    key = hashlib.sha256("\n".join([str(base), python_version(base), *TOOLS]).encode()).hexdigest()[:10]
    return prepare_numpy.cache_root() / f"venv-py{python_version(base)}-{key}"


def make_venv(base: Path, where: Path, packages: list[str]) -> None:
    """A venv at ``where``, made by ``base``, with ``packages``; ``.complete`` marks it done."""
    if where.exists():
        shutil.rmtree(where)  # an unfinished venv of ours (no .complete)
    steps = [[str(base), "-m", "venv", str(where)],
             [str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages]]
    for cmd in steps:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            raise SystemExit(f"toolchain: '{' '.join(cmd)}' failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    (where / ".complete").write_text("\n".join(packages) + "\n")


def python_for(version: str = prepare_numpy.CURRENT) -> Path:
    """The interpreter that configures, builds and tests numpy ``version``: a venv with TOOLS, made once."""
    base = base_python(version)
    where = venv_dir(base)
    with open(where.parent / f"{where.name}.lock", "w") as lock:  # pytest workers make it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (where / ".complete").is_file():
            make_venv(base, where, TOOLS)
    return where / "bin" / "python"


def tool_env(python: Path) -> dict[str, str]:
    """PATH with the interpreter's bin first: numpy's meson.build finds ``cython``, meson-python ``meson``."""
    return {"PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default=prepare_numpy.CURRENT, choices=sorted(prepare_numpy.RELEASES))
    print(python_for(parser.parse_args().version))
