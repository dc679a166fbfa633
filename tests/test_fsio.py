"""Files at the edge: bounded reads of regular files only, atomic writes that no reader ever sees torn."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from ccopt_meson import cache, fsio, pipeline
from ccopt_meson.errors import CacheError, InputError

from .helpers import CACHE, cli, configure_args, fakecc, race


def test_every_size_cap_is_a_field_of_limits() -> None:
    """One table of caps (fsio.LIMITS): no other module writes a size of a megabyte or more (a read loop's
    chunk, ``1 << 16``, is no cap)."""
    from .conftest import ROOT

    written = {p.name: re.findall(r"\b\d+ *<< *(?:2\d|3\d)\b|\b\d{7,}\b", p.read_text())
               for p in (ROOT / "ccopt_meson").glob("*.py") if p.name != "fsio.py"}
    assert {name: found for name, found in written.items() if found} == {}
    assert all(isinstance(size, int) and size >= 1 << 20 for size in fsio.LIMITS)


def test_read_bounded_reads_a_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert fsio.read_bounded(path, 100, "thing") == b"x" * 100


def test_read_bounded_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    """A FIFO must not block waiting for a writer, a directory must not be read as empty."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), (tmp_path, "a directory")):
        with pytest.raises(InputError, match=f"^thing '{re.escape(str(path))}' is {kind}, not a regular file$"):
            fsio.read_bounded(path, 100, "thing")


def test_read_bounded_refuses_a_file_over_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 101)
    with pytest.raises(InputError, match=r"^thing '.*big' is 101 bytes, more than the 100 this tool reads$"):
        fsio.read_bounded(path, 100, "thing")


def test_read_bounded_lets_missing_pass_through(tmp_path: Path) -> None:
    """Callers decide what "missing" means (a cache miss, "does not exist"); below a regular file is missing too."""
    (tmp_path / "file").write_text("")
    with pytest.raises(FileNotFoundError):
        fsio.read_bounded(tmp_path / "nope", 100, "thing")
    with pytest.raises(NotADirectoryError):
        fsio.read_bounded(tmp_path / "file" / "sub", 100, "thing")


def test_generated_by_us(tmp_path: Path) -> None:
    (tmp_path / "ours.h").write_text(f"/* {fsio.MARK} 0.1 */\n")
    (tmp_path / "theirs.h").write_text("/* hand written */\n")
    assert fsio.generated_by_us(tmp_path / "ours.h") and not fsio.generated_by_us(tmp_path / "theirs.h")
    assert fsio.generated_by_us(tmp_path / "missing.h")  # nothing to lose by writing it
    assert fsio.generated_by_us(tmp_path / "ours.h" / "below-a-file.h")  # writing it reports the real problem


def test_atomic_write_writes_once_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "out.txt"
    assert fsio.atomic_write(path, "one\n") is True
    assert fsio.atomic_write(path, "one\n") is False
    assert fsio.atomic_write(path, "two\n") is True and path.read_text() == "two\n"
    assert os.listdir(path.parent) == ["out.txt"]


def test_atomic_write_below_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    path = tmp_path / "file" / "out.txt"
    with pytest.raises(CacheError, match=f"^cannot write {re.escape(str(path))}: Not a directory; check that the "):
        fsio.atomic_write(path, "text")


def test_two_helpers_on_one_build_dir_never_tear_the_cache(tmp_path: Path) -> None:
    cc = fakecc("instant")  # the compiler does not matter here; a fast one makes the writes collide more often
    build = tmp_path / "build"
    requests = (["--dispatch", "sse41 sse42 avx"], ["--dispatch", "sse41 avx2"])

    def whole(data: bytes) -> None:
        cache.parse(data)  # a torn file fails here

    for _ in range(5):
        outs = race([["detect", "--cc", cc, "--json", "--flush", "--build-dir", str(build), *req]
                     for req in requests], build / CACHE, whole)
        docs = [json.loads(o) for o in outs]
        final = cache.load(build / CACHE)
        assert final is not None
        match = [d for d in docs if d["cache"]["key"] == final.key]
        assert len(match) == 1 and match[0]["dispatch"] == pipeline.read(build).to_json()["dispatch"]
        assert not [p for p in build.iterdir() if p.name.endswith(".tmp")], "temporary files left behind"


def test_two_helpers_never_tear_the_config_header(tmp_path: Path) -> None:
    cc = fakecc("instant")
    requests = (["--dispatch", "sse41 sse42 avx"], ["--dispatch", "sse41 avx2"])
    expected = set()
    for i, req in enumerate(requests):
        r = cli(*configure_args(tmp_path / f"alone{i}", cc, *req, "--write-config"))
        assert r.returncode == 0, r.stderr
        expected.add((tmp_path / f"alone{i}" / "ccopt_config.h").read_bytes())
    assert len(expected) == 2

    def whole(data: bytes) -> None:
        assert data in expected, "a torn or foreign ccopt_config.h"

    out = tmp_path / "shared"
    for _ in range(4):
        race([configure_args(out, cc, *req, "--write-config", "--flush") for req in requests],
             out / "ccopt_config.h", whole)
        assert (out / "ccopt_config.h").read_bytes() in expected
        assert cache.load(out / CACHE) is not None
