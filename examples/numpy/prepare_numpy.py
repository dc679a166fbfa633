#!/usr/bin/env python3
"""A pinned numpy sdist, unpacked and (unless --fork) ported onto ccopt-meson.

    python3 examples/numpy/prepare_numpy.py DEST                    # -> DEST/numpy-2.5.5, patched
    python3 examples/numpy/prepare_numpy.py DEST --fork             # -> DEST/numpy-2.5.5-fork, as released
    python3 examples/numpy/prepare_numpy.py DEST --version 2.2.6    # -> DEST/numpy-2.2.6, patched

The default is numpy's current release. The sdist is the file the package index lists for
``numpy-VERSION.tar.gz``, downloaded as it is (nothing of numpy is built to get it: pip's
``download`` would run numpy's build backend for the metadata, a whole build of numpy), checked
against the sha256 pinned below and cached in ``$CCOPT_NUMPY_CACHE``, else
``$XDG_CACHE_HOME/ccopt-meson``, else ``~/.cache/ccopt-meson``; nothing of numpy is written into
this repository. The index is ``$PIP_INDEX_URL`` when set (any index with PEP 691's JSON pages).
Temporary files live in ``.prepare_numpy-PID-*.tmp`` directories beside what they become (in the
cache, in DEST); a run removes those of runs that are no longer running (killed before cleaning up).

The port of VERSION is the directory ``examples/numpy/VERSION/``: ``numpy-ccopt.patch`` is applied
with ``git apply``, ``ccopt-numpy.json`` (numpy's feature data) goes to ``meson_cpu/ccopt-numpy.json``
and this checkout to ``subprojects/ccopt-meson``. Then, with stock Meson and Cython from PyPI:

    cd DEST/numpy-2.5.5 && CC=gcc meson setup build -Dallow-noblas=true -Dblas=none -Dlapack=none && ninja -C build
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import hashlib
import http.client
import io
import json
import math
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
import urllib.response
from pathlib import Path
from typing import IO, Iterator, NamedTuple, Union

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEFAULT_INDEX = "https://pypi.org/simple"

SCRATCH = re.compile(r"\.prepare_numpy-(\d+)-[a-z0-9_]+\.tmp")  # the names scratch() gives: .prepare_numpy-PID-X.tmp


class Release(NamedTuple):
    sha256: str
    python: str  # the oldest CPython the release builds and runs with (its requires-python)


RELEASES = {
    "2.5.5": Release("5cddc243c75114ba845f01b1f87aca1572dbf7b6c2d88636ed3e1d2bccd7f1bf", "3.12"),
    "2.2.6": Release("e29554e2bef54a90aa5cc07da6ce955accb83f21ab5de01a62c8478897b264fd", "3.10"),
}
CURRENT = "2.5.5"  # numpy's current release
FETCH_TIMEOUT = 600.0  # seconds for the whole download unless $CCOPT_NUMPY_FETCH_TIMEOUT says otherwise
STALL_TIMEOUT = 60.0  # seconds without a byte
MAX_PAGE = 64 << 20  # bytes of the index's page for numpy: PyPI's lists every file of every release, a few MB
MAX_SDIST = 100 << 20  # bytes of an sdist: numpy's are about 20 MB (2.2.6: 20.3 MB); a longer body is none of them


class FetchError(SystemExit):
    """One line: what went wrong with getting the sdist, and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(f"prepare_numpy: {message}")


class Deadline(NamedTuple):
    at: float  # time.monotonic() by which the download has to end
    seconds: float  # the limit it was set from, for the message


def fetch_deadline() -> Deadline:
    """Now plus ``$CCOPT_NUMPY_FETCH_TIMEOUT`` (a finite number of seconds > 0), else plus FETCH_TIMEOUT."""
    text = os.environ.get("CCOPT_NUMPY_FETCH_TIMEOUT", "")
    try:
        seconds = float(text) if text else FETCH_TIMEOUT
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):  # a deadline of nan never passes: no limit at all
        raise FetchError(f"CCOPT_NUMPY_FETCH_TIMEOUT={text!r} is not a number of seconds > 0 (e.g. 600)")
    return Deadline(time.monotonic() + seconds, seconds)


def cache_dir() -> Path:
    if os.environ.get("CCOPT_NUMPY_CACHE"):
        return Path(os.environ["CCOPT_NUMPY_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ccopt-meson"


def cache_root() -> Path:
    """cache_dir(), made when it is missing; one line when it cannot be a directory."""
    root = cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # a file in its place (FileExistsError) or on its path (NotADirectoryError), no permission
        raise FetchError(f"the cache {root} cannot be a directory ({e.strerror}); set CCOPT_NUMPY_CACHE "
                         "to a directory") from None
    return root


def running(pid: int) -> bool:
    """Is a process with this id running (or might it be: never guessed on Windows)? Its scratch stays."""
    if os.name != "posix":  # os.kill(pid, 0) would terminate the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, but belongs to someone else
        return True
    except (OSError, OverflowError):  # no process can have that id
        return False
    return True


def sweep(parent: Path) -> None:
    """Remove what runs killed before their cleanup (SIGKILL) left in ``parent``: only directories (never a
    link) with a name scratch() gives, never one of a process that may still be running."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        m = SCRATCH.fullmatch(name)
        if m is None or running(int(m.group(1))):
            continue
        try:
            mode = os.lstat(parent / name).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            shutil.rmtree(parent / name, ignore_errors=True)


@contextlib.contextmanager
def scratch(parent: Path) -> Iterator[Path]:
    """A new directory in ``parent`` named after this process, removed after use (after a sweep of those that
    killed runs left there)."""
    sweep(parent)
    path = Path(tempfile.mkdtemp(prefix=f".prepare_numpy-{os.getpid()}-", suffix=".tmp", dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sdist_name(version: str) -> str:
    return f"numpy-{version}.tar.gz"


def release(version: str) -> Release:
    if version not in RELEASES:
        raise FetchError(f"no pinned sdist for numpy {version!r}; pinned: {', '.join(RELEASES)}")
    return RELEASES[version]


Response = Union[http.client.HTTPResponse, urllib.response.addinfourl]  # what urlopen returns


def network_error(url: str, e: Exception, deadline: Deadline) -> FetchError:
    timed_out = isinstance(e, TimeoutError) or isinstance(getattr(e, "reason", None), TimeoutError)
    if timed_out:  # socket.timeout is a TimeoutError; URLError carries it as its reason
        return FetchError(f"{url} timed out (limit {deadline.seconds:g} s, CCOPT_NUMPY_FETCH_TIMEOUT; "
                          f"{STALL_TIMEOUT:.0f} s without data); check the network and retry")
    return FetchError(f"cannot read {url}: {e}; check the network or PIP_INDEX_URL")


def open_url(url: str, deadline: Deadline, accept: str) -> Response:
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "ccopt-meson-examples"})
    try:
        response: Response = urllib.request.urlopen(request, timeout=STALL_TIMEOUT)
    except (OSError, http.client.HTTPException, ValueError) as e:  # URLError is an OSError; ValueError: no scheme
        raise network_error(url, e, deadline) from None
    return response


def read_block(response: Response, url: str, deadline: Deadline) -> bytes:
    try:
        block = response.read(1 << 16)
    except (OSError, http.client.HTTPException) as e:  # IncompleteRead is an HTTPException
        raise network_error(url, e, deadline) from None
    if time.monotonic() > deadline.at:
        raise network_error(url, TimeoutError(), deadline)
    return block


def copy_url(url: str, out: IO[bytes], limit: int, deadline: Deadline, accept: str = "*/*") -> str:
    """The body at ``url`` written to ``out``, at most ``limit`` bytes, and the address it came from (after
    redirects); a stalled, slow or endless transfer ends with FetchError, never hangs or fills memory."""
    size = 0
    with open_url(url, deadline, accept) as response:
        while block := read_block(response, url, deadline):
            size += len(block)
            if size > limit:
                raise FetchError(f"{url} sent more than {limit:,} bytes, more than the file it should be; "
                                 "check PIP_INDEX_URL")
            out.write(block)
        return response.url


def index_files(page: bytes, where: str) -> list[dict[str, object]]:
    """The ``files`` of a PEP 691 JSON page, each a table; one line when the page is not such a page."""
    try:
        doc = json.loads(page)
    except (ValueError, RecursionError):  # not JSON (UnicodeDecodeError is a ValueError); nested past the stack
        doc = None
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, list) or not all(isinstance(entry, dict) for entry in files):
        raise FetchError(f"{where} is not a PEP 691 JSON page (a table whose 'files' is a list of tables); "
                         "set PIP_INDEX_URL to an index that serves one")
    checked: list[dict[str, object]] = files
    return checked


def file_url(entry: dict[str, object], where: str, base: str, pin: str) -> str:
    """The address of the file ``entry`` of the page ``where`` lists, a relative one resolved against the
    page's address ``base`` (PEP 691 allows both), its listed sha256 checked against the pin."""
    name, url, hashes = entry["filename"], entry.get("url"), entry.get("hashes", {})
    if not isinstance(url, str) or not url:
        raise FetchError(f"{where} lists {name} without a 'url' string (PEP 691); set PIP_INDEX_URL to an "
                         "index that serves PEP 691 pages")
    if not isinstance(hashes, dict) or not all(isinstance(h, str) for h in hashes.values()):
        raise FetchError(f"{where} lists {name} with 'hashes' of type {type(hashes).__name__}, not a table of "
                         "hash names to hex digests (PEP 691); set PIP_INDEX_URL to an index that serves one")
    listed = hashes.get("sha256")
    if listed not in (None, pin):
        raise FetchError(f"the index lists {name} with sha256 {listed}, pinned {pin}")
    return urllib.parse.urljoin(base, url)


def sdist_url(version: str, deadline: Deadline) -> str:
    """The sdist's address from the index's JSON page for numpy (PEP 691), checked against the pin."""
    where = os.environ.get("PIP_INDEX_URL", DEFAULT_INDEX).rstrip("/") + "/numpy/"
    page = io.BytesIO()
    base = copy_url(where, page, MAX_PAGE, deadline, accept="application/vnd.pypi.simple.v1+json")
    name = sdist_name(version)
    for entry in index_files(page.getvalue(), where):
        if entry.get("filename") == name:
            return file_url(entry, where, base, release(version).sha256)
    raise FetchError(f"{where} lists no {name}")


def fetch(version: str = CURRENT) -> Path:
    """The cached sdist of ``version``; downloaded (and checked) when it is missing."""
    pin = release(version).sha256
    root = cache_root()
    sdist = root / sdist_name(version)
    if sdist.is_file() and sha256(sdist) == pin:
        return sdist
    deadline = fetch_deadline()
    url = sdist_url(version, deadline)
    with scratch(root) as tmp:
        got = tmp / sdist.name
        with got.open("wb") as out:
            copy_url(url, out, MAX_SDIST, deadline)
        if sha256(got) != pin:
            raise FetchError(f"{url} has sha256 {sha256(got)}, pinned {pin}")
        os.replace(got, sdist)
    return sdist


def extract(sdist: Path, top: str, into: Path, parts: tuple[str, ...] = ()) -> Path:
    """``into/top``: ``top/`` of the sdist, whole or only the paths under it starting with one of ``parts``."""
    with tarfile.open(sdist) as tar:
        members = None
        if parts:
            members = [m for m in tar.getmembers() if m.name.startswith(f"{top}/")
                       and m.name[len(top) + 1:].startswith(parts)]
        if hasattr(tarfile, "data_filter"):  # "data" refuses absolute paths and links out of the tree
            tar.extractall(into, members=members, filter="data")
        else:
            tar.extractall(into, members=members)
    return into / top


def unpack(sdist: Path, top: str, dest: Path, parts: tuple[str, ...] = ()) -> None:
    """``top/`` of the sdist as ``dest``, whole or only the paths under it starting with one of ``parts``;
    ``dest`` appears complete or not at all."""
    with scratch(dest.parent) as tmp:
        os.replace(extract(sdist, top, tmp, parts), dest)


def port_files(version: str) -> tuple[Path, Path]:
    """The patch and numpy's feature data of ``version``'s port."""
    patch, data = HERE / version / "numpy-ccopt.patch", HERE / version / "ccopt-numpy.json"
    for path in (patch, data):
        if not path.is_file():
            raise SystemExit(f"prepare_numpy: no port of numpy {version} here ({path.relative_to(REPO)} is "
                             "missing); --fork prepares the tree as released")
    return patch, data


def git() -> str:
    """git, which applies the port's patch; one line naming what to install when it is not on PATH."""
    found = shutil.which("git")
    if found is None:
        raise SystemExit("prepare_numpy: git is not on PATH; install git (the port's patch is applied with "
                         "'git apply'), or prepare the tree as released with --fork")
    return found


def apply(patch: Path, tree: Path) -> None:
    """``patch`` applied to ``tree``; one line with git's first complaints when it does not apply."""
    try:
        r = subprocess.run([git(), "apply", "--whitespace=nowarn", str(patch)], cwd=tree, capture_output=True,
                           text=True)
    except OSError as e:
        raise SystemExit(f"prepare_numpy: cannot run git: {e}; install git, or use --fork") from None
    if r.returncode != 0:
        said = "; ".join(r.stderr.splitlines()[:3])
        raise SystemExit(f"prepare_numpy: {patch.relative_to(REPO)} does not apply ({said})")


def port(tree: Path, version: str) -> None:
    """The patch, numpy's features file, and this checkout as the subproject."""
    patch, data = port_files(version)
    apply(patch, tree)
    shutil.copy2(data, tree / "meson_cpu" / "ccopt-numpy.json")
    copy_checkout(tree / "subprojects" / "ccopt-meson")


def copy_checkout(dest: Path) -> None:
    """This checkout as a user puts it in ``subprojects/`` (docs/tutorial/use-from-meson.md: "copy it there"):
    the files Git tracks and the new ones it does not ignore, as the work tree has them, and the bytecode of
    the package, which an installed package has (time_configure.py times a configure)."""
    r = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"prepare_numpy: cannot list this checkout's files ({r.stderr.strip()[:200]})")
    for name in sorted(set(filter(None, r.stdout.split("\0")))):
        src = REPO / name
        if src.is_file():  # a tracked file deleted in the work tree is not part of it
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    compileall.compile_dir(str(dest / "ccopt_meson"), quiet=1)


def refuse_links(dest: Path, tree: Path) -> None:
    """One line when DEST or the tree's place is a symbolic link (the tree would be written, or the old one
    removed, through it) or the tree's place holds something other than a directory."""
    for path in (dest, tree):
        if path.is_symlink():
            raise SystemExit(f"prepare_numpy: {path} is a symbolic link (to {path.resolve()}); refusing to write "
                             "through it: name a directory that is not a link")
    if tree.exists() and not tree.is_dir():
        raise SystemExit(f"prepare_numpy: {tree} is not a directory; remove it or choose another DEST")


def make_dest(dest: Path) -> None:
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SystemExit(f"prepare_numpy: DEST {dest} cannot be a directory ({e.strerror})") from None


def put_in_place(made: Path, tree: Path, tmp: Path) -> None:
    """``made`` as ``tree``; a tree made before moves into ``tmp`` first, to be removed with it."""
    refuse_links(tree.parent, tree)  # again: the download and the port took a while
    if tree.exists():
        os.replace(tree, tmp / "previous")
    os.replace(made, tree)


def prepare(dest: Path, version: str = CURRENT, fork: bool = False) -> Path:
    """DEST/numpy-VERSION (ported) or DEST/numpy-VERSION-fork (as released), made anew: unpacked and ported
    in a scratch directory in DEST and put in place only when complete (a failed port leaves the old tree)."""
    release(version)
    if not fork:
        port_files(version)  # before any download
        git()
    top = f"numpy-{version}"
    tree = dest / (top + "-fork" if fork else top)
    refuse_links(dest, tree)
    sdist = fetch(version)
    make_dest(dest)
    with scratch(dest) as tmp:
        made = extract(sdist, top, tmp)
        if not fork:
            port(made, version)
        put_in_place(made, tree, tmp)
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path, help="where to put the tree")
    parser.add_argument("--fork", action="store_true", help="the sdist as released (numpy's Meson fork)")
    parser.add_argument("--version", default=CURRENT, choices=sorted(RELEASES), help=f"default {CURRENT}")
    args = parser.parse_args(argv)
    print(prepare(args.dest.absolute(), args.version, args.fork))  # absolute, not resolved: a link is refused
    return 0


if __name__ == "__main__":
    sys.exit(main())
