"""numpy's Meson fork and its ``meson_cpu/``, taken from the numpy 2.2.6 sdist on PyPI at run time.

Nothing of it is committed: the sdist comes from the one fetcher of numpy's sdists,
``examples/numpy/prepare_numpy.py`` (the file the package index lists, checked against its pinned
sha256 and cached in ``~/.cache/ccopt-meson``; nothing of numpy is built to get it), and the three
parts a consumer needs are unpacked into a cache directory beside the results:

- ``vendored-meson/meson/``: Meson 1.5.2 with the ``features`` module (numpy runs its builds
  with this copy, never with a stock Meson);
- ``meson_cpu/``: numpy's feature definitions and option parsing, used unchanged;
- ``numpy/distutils/checks/``: the test programs ``meson_cpu/`` points at.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from types import ModuleType

from bench.timing import ROOT, BenchError

VERSION = "2.2.6"
PARTS = ("vendored-meson/meson/meson.py", "vendored-meson/meson/mesonbuild/", "meson_cpu/",
         "numpy/distutils/checks/")


def _prepare_numpy() -> ModuleType:
    """examples/numpy/prepare_numpy.py, the one fetcher and unpacker of numpy's sdists."""
    path = str(ROOT / "examples" / "numpy")
    sys.path.insert(0, path)
    try:
        import prepare_numpy  # type: ignore[import-not-found]
    finally:
        sys.path.remove(path)
    return prepare_numpy  # type: ignore[no-any-return]


def fetch(cache: Path) -> Path:
    """The unpacked parts (``<cache>/numpy-2.2.6``), unpacked once from the pinned, cached sdist."""
    tree = cache / f"numpy-{VERSION}"
    prepare = _prepare_numpy()
    pin = prepare.release(VERSION).sha256
    done = tree / ".complete"
    if done.is_file() and done.read_text().strip() == pin:
        return tree
    try:
        sdist = prepare.fetch(VERSION)
        cache.mkdir(parents=True, exist_ok=True)
        if tree.exists():
            shutil.rmtree(tree)
        prepare.unpack(sdist, f"numpy-{VERSION}", tree, PARTS)
        done.write_text(pin + "\n")
    except (prepare.FetchError, OSError) as exc:
        raise BenchError(f"numpy {VERSION}'s sdist for the fork variant: {exc}") from exc
    return tree


def meson_command(tree: Path) -> list[str]:
    """The fork as numpy runs it (``[tool.meson-python] meson = 'vendored-meson/meson/meson.py'``)."""
    return [sys.executable, str(tree / "vendored-meson" / "meson" / "meson.py")]
