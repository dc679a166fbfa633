"""examples/numpy/prepare_numpy.py's download of a pinned sdist, against a local index on loopback.

The sdist is the file the index's PEP 691 page lists, downloaded as it is and checked against the
pin; it is cached; a wrong file or a stalled server ends in one line saying what to do.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "examples" / "numpy"))
import prepare_numpy  # noqa: E402

SDIST = b"not really a tarball, but bytes with a known hash"


class Index(http.server.BaseHTTPRequestHandler):
    """numpy's JSON page and the one file it lists; ``stall`` makes the file never finish."""

    served: list[str] = []
    stall = False
    listed_sha = hashlib.sha256(SDIST).hexdigest()

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        Index.served.append(self.path)
        port = self.server.server_address[1]
        if self.path == "/simple/numpy/":
            body = json.dumps({"files": [{"filename": "numpy-9.9.9.tar.gz", "hashes": {"sha256": Index.listed_sha},
                                          "url": f"http://127.0.0.1:{port}/files/numpy-9.9.9.tar.gz"}]}).encode()
        elif self.path == "/files/numpy-9.9.9.tar.gz":
            body = SDIST
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if Index.stall:
            self.wfile.write(body[:5])
            self.wfile.flush()
            time.sleep(3)
            return
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Index.served, Index.stall, Index.listed_sha = [], False, hashlib.sha256(SDIST).hexdigest()
    url = f"http://127.0.0.1:{server.server_address[1]}/simple"
    monkeypatch.setenv("PIP_INDEX_URL", url)
    monkeypatch.setenv("CCOPT_NUMPY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(prepare_numpy.RELEASES, "9.9.9",
                        prepare_numpy.Release(hashlib.sha256(SDIST).hexdigest(), "3.9"))
    yield url
    server.shutdown()
    server.server_close()


def test_the_sdist_is_downloaded_checked_and_cached(index: str, tmp_path: Path) -> None:
    got = prepare_numpy.fetch("9.9.9")
    assert got == tmp_path / "cache" / "numpy-9.9.9.tar.gz" and got.read_bytes() == SDIST
    assert Index.served == ["/simple/numpy/", "/files/numpy-9.9.9.tar.gz"]
    assert prepare_numpy.fetch("9.9.9") == got and len(Index.served) == 2  # the cache answers
    assert [p.name for p in got.parent.iterdir()] == [got.name]  # no temporary file left


def test_a_file_other_than_the_pinned_one_is_refused(index: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(prepare_numpy.RELEASES, "9.9.9", prepare_numpy.Release("0" * 64, "3.9"))
    Index.listed_sha = "0" * 64  # the index agrees with the pin, the bytes do not
    with pytest.raises(SystemExit, match=r"^prepare_numpy: http://\S+ has sha256 [0-9a-f]{64}, pinned 0{64}$"):
        prepare_numpy.fetch("9.9.9")
    assert not any((tmp_path / "cache").iterdir())  # nothing half-written stays
    Index.listed_sha = "1" * 64
    with pytest.raises(SystemExit, match=r"the index lists numpy-9.9.9.tar.gz with sha256 1{64}, pinned 0{64}$"):
        prepare_numpy.fetch("9.9.9")


def test_a_stalled_download_times_out_with_one_line(index: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prepare_numpy, "STALL_TIMEOUT", 0.5)
    Index.stall = True
    with pytest.raises(SystemExit) as e:
        prepare_numpy.fetch("9.9.9")
    assert "\n" not in str(e.value) and "timed out" in str(e.value), e.value


def test_unknown_versions_and_missing_ports_are_named(index: str, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no pinned sdist for numpy '1.0'; pinned: 2.5.5, 2.2.6"):
        prepare_numpy.prepare(tmp_path, "1.0")
    with pytest.raises(SystemExit, match=r"no port of numpy 9.9.9 here \(examples/numpy/9.9.9/numpy-ccopt.patch"):
        prepare_numpy.prepare(tmp_path, "9.9.9")
    assert Index.served == []  # refused before any download
