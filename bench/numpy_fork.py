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
import tarfile
from pathlib import Path
from types import ModuleType

from bench.timing import ROOT, BenchError

VERSION = "2.2.6"
PARTS = ("vendored-meson/meson/meson.py", "vendored-meson/meson/mesonbuild/", "meson_cpu/",
         "numpy/distutils/checks/")


def _prepare_numpy() -> ModuleType:
    sys.path.insert(0, str(ROOT / "examples" / "numpy"))
    try:
        import prepare_numpy  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    return prepare_numpy  # type: ignore[no-any-return]


def fetch(cache: Path, env: dict[str, str]) -> Path:
    """The unpacked parts (``<cache>/numpy-2.2.6``), unpacked once from the pinned, cached sdist."""
    del env  # the fetcher reads $PIP_INDEX_URL and the cache location from this process's environment
    tree = cache / f"numpy-{VERSION}"
    prepare = _prepare_numpy()
    pin = prepare.release(VERSION).sha256
    done = tree / ".complete"
    if done.is_file() and done.read_text().strip() == pin:
        return tree
    try:
        sdist = prepare.fetch(VERSION)
    except SystemExit as exc:  # prepare_numpy's one-line FetchError
        raise BenchError(str(exc)) from exc
    tmp = cache / f".numpy-{VERSION}.partial"
    for old in (tmp, tree):
        if old.exists():
            shutil.rmtree(old)
    cache.mkdir(parents=True, exist_ok=True)
    prefix = f"numpy-{VERSION}/"
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers()
                   if m.name.startswith(prefix) and m.name[len(prefix):].startswith(PARTS)]
        for m in members:
            m.name = m.name[len(prefix):]
        if hasattr(tarfile, "data_filter"):  # Python >= 3.9.17 / 3.11.4: refuse links and paths out of the tree
            tar.extractall(tmp, members=members, filter="data")
        else:
            tar.extractall(tmp, members=members)
    (tmp / ".complete").write_text(pin + "\n")
    tmp.rename(tree)
    return tree


def meson_command(tree: Path) -> list[str]:
    """The fork as numpy runs it (``[tool.meson-python] meson = 'vendored-meson/meson/meson.py'``)."""
    return [sys.executable, str(tree / "vendored-meson" / "meson" / "meson.py")]
