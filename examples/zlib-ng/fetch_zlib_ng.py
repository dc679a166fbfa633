#!/usr/bin/env python3
"""Fetch zlib-ng's C sources (the sdist of the PyPI package ``zlib-ng``), check its sha256, unpack, cache.

Prints the directory to pass as ``-Dzlib-ng-src=``.  Nothing is written into this repository:
the cache is ``$CCOPT_ZLIB_NG_CACHE``, else ``$XDG_CACHE_HOME/ccopt-meson``, else
``~/.cache/ccopt-meson``.  A second run only checks that the unpacked tree is there.

    python3 examples/zlib-ng/fetch_zlib_ng.py            # -> .../zlib-ng-2.3.3
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

# The Python binding python-zlib-ng 1.1.0 vendors zlib-ng 2.3.3 (zlib license) under
# src/zlib_ng/zlib-ng/: the complete C library, its CMake build and its tests.
PACKAGE = "zlib-ng==1.1.0"
SDIST = "zlib_ng-1.1.0.tar.gz"
SHA256 = "08a3a8468d4f130e3dc80d28ec42fcc7a878a57dfed616233e791066327d78a3"
INNER = "zlib_ng-1.1.0/src/zlib_ng/zlib-ng/"
UNPACKED = "zlib-ng-2.3.3"
STAMP = ".ccopt-sha256"


def cache_dir() -> Path:
    if os.environ.get("CCOPT_ZLIB_NG_CACHE"):
        return Path(os.environ["CCOPT_ZLIB_NG_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ccopt-meson"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def download(dest: Path) -> None:
    """pip's ordinary download of the sdist; its build-metadata step needs no network beyond PyPI."""
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", tmp, PACKAGE]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:  # the metadata step can fail in a bare environment: skip isolation
            r = subprocess.run([*cmd, "--no-build-isolation"], capture_output=True, text=True)
        got = Path(tmp) / SDIST
        if r.returncode != 0 or not got.is_file():
            raise SystemExit(f"fetch_zlib_ng: '{' '.join(cmd)}' failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        if sha256(got) != SHA256:
            raise SystemExit(f"fetch_zlib_ng: {SDIST} has sha256 {sha256(got)}, expected {SHA256}")
        os.replace(got, dest)


def unpack(sdist: Path, dest: Path) -> None:
    """Only the zlib-ng tree, into a temporary directory renamed into place (a crash leaves no half tree)."""
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=".unpack-"))
    try:
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(INNER) and (m.isfile() or m.isdir())]
            for m in members:
                m.name = m.name[len(INNER):] or "."
            kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(tmp, members=members, **kwargs)  # "data" refuses absolute paths and links out
        (tmp / STAMP).write_text(SHA256 + "\n")
        tmp.chmod(0o755)  # mkdtemp's 0700 would hide the tree from other users of the cache
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def locked(root: Path) -> Iterator[None]:
    """One fetch at a time per cache (parallel test workers share it); no lock where fcntl is missing."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(root / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def fetch(root: Path | None = None) -> Path:
    root = root or cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    dest = root / UNPACKED
    stamp = dest / STAMP
    with locked(root):
        if stamp.is_file() and stamp.read_text().strip() == SHA256 and (dest / "zlib-ng.h.in").is_file():
            return dest
        sdist = root / SDIST
        if not sdist.is_file() or sha256(sdist) != SHA256:
            download(sdist)
        unpack(sdist, dest)
    return dest


if __name__ == "__main__":
    print(fetch(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
