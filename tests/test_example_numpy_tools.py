"""examples/numpy's tools, without numpy: the sdist's download, the dump of a build's CPU configuration.

The sdist is the file the index's PEP 691 page lists (here a local index on loopback), downloaded
as it is and checked against the pin; it is cached; a wrong file or a stalled server ends in one line
saying what to do. compare_builds.py reads a (made-up) configured build dir into its dump and names
each difference of two dumps.
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from .conftest import ROOT, need
from .helpers import clean_env

sys.path.insert(0, str(ROOT / "examples" / "numpy"))
import compare_builds  # noqa: E402
import configure_numpy  # noqa: E402
import prepare_numpy  # noqa: E402
import run_emulated  # noqa: E402
import toolchain  # noqa: E402

SDIST = b"not really a tarball, but bytes with a known hash"


class Index(http.server.BaseHTTPRequestHandler):
    """numpy's JSON page and the one file it lists; ``stall`` makes the file never finish, ``endless`` never end."""

    served: list[str] = []
    stall = False
    endless = False
    page: bytes | None = None  # numpy's page as sent, when not the one listing the file by its full address
    listed_sha = hashlib.sha256(SDIST).hexdigest()

    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        Index.served.append(self.path)
        port = self.server.server_address[1]
        if self.path == "/simple/numpy/" and Index.page is not None:
            body = Index.page
        elif self.path == "/simple/numpy/":
            body = json.dumps({"files": [{"filename": "numpy-9.9.9.tar.gz", "hashes": {"sha256": Index.listed_sha},
                                          "url": f"http://127.0.0.1:{port}/files/numpy-9.9.9.tar.gz"}]}).encode()
        elif self.path == "/files/numpy-9.9.9.tar.gz" and Index.endless:
            self.send_endless()
            return
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

    def send_endless(self) -> None:
        """A body without a length that goes on until the client hangs up (256 MiB at most)."""
        self.send_response(200)
        self.end_headers()
        try:
            for _ in range(4096):
                self.wfile.write(b"\0" * (1 << 16))
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Index.served, Index.stall, Index.endless, Index.page = [], False, False, None
    Index.listed_sha = hashlib.sha256(SDIST).hexdigest()
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


def page(*files: object) -> bytes:
    return json.dumps({"meta": {"api-version": "1.0"}, "name": "numpy", "files": list(files)}).encode()


def test_a_relative_file_url_is_resolved_against_the_index(index: str, tmp_path: Path) -> None:
    Index.page = page({"filename": "numpy-9.9.9.tar.gz", "url": "../../files/numpy-9.9.9.tar.gz",
                       "hashes": {"sha256": Index.listed_sha}})  # was handed to urlopen as it is: a traceback
    assert prepare_numpy.fetch("9.9.9").read_bytes() == SDIST
    assert Index.served == ["/simple/numpy/", "/files/numpy-9.9.9.tar.gz"]


NOT_A_PAGE = r"is not a PEP 691 JSON page \(a table whose 'files' is a list of tables\)"
UNEXPECTED_PAGES = {
    "files-a-number": (json.dumps({"files": 5}).encode(), NOT_A_PAGE),
    "a-file-not-a-table": (page("numpy-9.9.9.tar.gz"), NOT_A_PAGE),
    "nested-100000-deep": (b"[" * 100_000 + b"]" * 100_000, NOT_A_PAGE),
    "not-json": (b"<html>", NOT_A_PAGE),
    "hashes-a-list": (page({"filename": "numpy-9.9.9.tar.gz", "url": "x", "hashes": ["sha256"]}),
                      "lists numpy-9.9.9.tar.gz with 'hashes' of type list, not a table of hash names to hex digests"),
    "no-url": (page({"filename": "numpy-9.9.9.tar.gz", "hashes": {}}),
               "lists numpy-9.9.9.tar.gz without a 'url' string"),
}


@pytest.mark.parametrize("body, message", UNEXPECTED_PAGES.values(), ids=UNEXPECTED_PAGES.keys())
def test_index_pages_of_unexpected_shape_are_one_line_each(index: str, body: bytes, message: str) -> None:
    Index.page = body
    with pytest.raises(SystemExit, match=rf"^prepare_numpy: http://\S+/simple/numpy/ {message}") as e:
        prepare_numpy.fetch("9.9.9")
    assert "\n" not in str(e.value)
    assert Index.served == ["/simple/numpy/"]


def test_an_endless_download_ends_at_the_size_bound_with_one_line(index: str, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prepare_numpy, "MAX_SDIST", 1 << 20)
    Index.endless = True  # was read into memory until a MemoryError
    with pytest.raises(SystemExit, match=r"^prepare_numpy: http://\S+/numpy-9.9.9.tar.gz sent more than 1,048,576 "
                                         "bytes, more than the file it should be; check PIP_INDEX_URL$"):
        prepare_numpy.fetch("9.9.9")
    assert not any((tmp_path / "cache").iterdir())  # streamed to a temporary file, and that is gone


def port_of_9_9_9(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, applies: bool) -> Path:
    """A port of numpy 9.9.9 (a patch that applies, or not) and its sdist, which fetch() returns; DEST."""
    here = tmp_path / "repo" / "examples" / "numpy"
    (here / "9.9.9").mkdir(parents=True)
    (here / "9.9.9" / "numpy-ccopt.patch").write_text(
        f"--- a/meson_cpu/meson.build\n+++ b/meson_cpu/meson.build\n@@ -1 +1 @@\n-{'old' if applies else 'other'}\n"
        "+ported\n")
    (here / "9.9.9" / "ccopt-numpy.json").write_text("{}\n")
    monkeypatch.setattr(prepare_numpy, "HERE", here)
    monkeypatch.setattr(prepare_numpy, "REPO", tmp_path / "repo")
    sdist = tmp_path / "numpy-9.9.9.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        info = tarfile.TarInfo("numpy-9.9.9/meson_cpu/meson.build")
        info.size = 4
        tar.addfile(info, io.BytesIO(b"old\n"))
    monkeypatch.setattr(prepare_numpy, "fetch", lambda version: sdist)
    monkeypatch.setitem(prepare_numpy.RELEASES, "9.9.9", prepare_numpy.Release("0" * 64, "3.9"))
    dest = tmp_path / "dest"
    (dest / "numpy-9.9.9").mkdir(parents=True)
    (dest / "numpy-9.9.9" / "previous run").write_text("")
    return dest


@pytest.mark.skipif(shutil.which("git") is None, reason="the port is applied with git")
def test_a_port_that_fails_leaves_no_unported_tree_under_the_ported_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dest = port_of_9_9_9(tmp_path, monkeypatch, applies=False)
    with pytest.raises(SystemExit, match=r"^prepare_numpy: examples/numpy/9.9.9/numpy-ccopt.patch does not apply "
                                         r"\(error: patch failed: meson_cpu/meson.build:1; [^\n]*\)$"):
        prepare_numpy.prepare(dest, "9.9.9")
    assert [p.name for p in dest.iterdir()] == ["numpy-9.9.9"]  # the previous tree, and no scratch left
    assert [p.name for p in (dest / "numpy-9.9.9").iterdir()] == ["previous run"]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(SystemExit, match=r"^prepare_numpy: git is not on PATH; install git \(the port's patch is "
                                         r"applied with 'git apply'\), or prepare the tree as released with --fork$"):
        prepare_numpy.prepare(dest, "9.9.9")  # was a FileNotFoundError traceback, after the unpack
    assert [p.name for p in (dest / "numpy-9.9.9").iterdir()] == ["previous run"]


@pytest.mark.skipif(shutil.which("git") is None, reason="the port is applied with git")
def test_a_port_that_succeeds_replaces_the_previous_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dest = port_of_9_9_9(tmp_path, monkeypatch, applies=True)
    monkeypatch.setattr(prepare_numpy, "copy_checkout", lambda where: where.mkdir(parents=True))
    tree = prepare_numpy.prepare(dest, "9.9.9")
    assert tree == dest / "numpy-9.9.9" and [p.name for p in dest.iterdir()] == ["numpy-9.9.9"]
    assert (tree / "meson_cpu" / "meson.build").read_text() == "ported\n"
    assert (tree / "meson_cpu" / "ccopt-numpy.json").is_file() and (tree / "subprojects" / "ccopt-meson").is_dir()
    assert not (tree / "previous run").exists()


def killed_in_scratch(parent: Path) -> int:
    """The pid of a run SIGKILLed inside scratch(parent), which leaves its directory there."""
    code = ("import os, signal, sys; from pathlib import Path; import prepare_numpy\n"
            "with prepare_numpy.scratch(Path(sys.argv[1])): os.kill(os.getpid(), signal.SIGKILL)")
    r = subprocess.run([sys.executable, "-c", code, str(parent)], cwd=ROOT / "examples" / "numpy", timeout=60,
                       env=clean_env(PYTHONPATH=str(ROOT / "examples" / "numpy")))
    assert r.returncode == -9
    (left,) = [p for p in parent.iterdir() if p.name.startswith(".prepare_numpy-")]
    return int(left.name.split("-")[1])


def test_a_later_run_sweeps_what_a_killed_run_left_and_nothing_else(index: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    dead = killed_in_scratch(cache)
    (cache / f".prepare_numpy-{dead}-abc.tmp").mkdir()
    (cache / f".prepare_numpy-{dead}-abc.tmp" / "half.tar.gz").write_bytes(b"half")
    (tmp_path / "target").mkdir()
    not_ours = [f".prepare_numpy-{os.getpid()}-live.tmp", f".prepare_numpy-{dead}-file.tmp",  # running; a file
                f".prepare_numpy-{dead}-link.tmp", f"prepare_numpy-{dead}-abc.tmp", f".prepare_numpy-{dead}-abc"]
    (cache / not_ours[0]).mkdir()
    (cache / not_ours[1]).write_text("mine\n")
    (cache / not_ours[2]).symlink_to(tmp_path / "target")
    (cache / not_ours[3]).mkdir()
    (cache / not_ours[4]).mkdir()
    prepare_numpy.fetch("9.9.9")
    assert sorted(p.name for p in cache.iterdir()) == sorted([*not_ours, "numpy-9.9.9.tar.gz"])
    assert (tmp_path / "target").is_dir()


def test_unknown_versions_and_missing_ports_are_named(index: str, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no pinned sdist for numpy '1.0'; pinned: 2.5.5, 2.2.6"):
        prepare_numpy.prepare(tmp_path, "1.0")
    with pytest.raises(SystemExit, match=r"no port of numpy 9.9.9 here \(examples/numpy/9.9.9/numpy-ccopt.patch"):
        prepare_numpy.prepare(tmp_path, "9.9.9")
    assert Index.served == []  # refused before any download


def test_a_bad_timeout_a_cache_that_is_a_file_and_a_linked_destination_are_one_line_each(
        index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for timeout in ("abc", "nan", "inf", "0", "-5"):  # nan disabled the limit
        monkeypatch.setenv("CCOPT_NUMPY_FETCH_TIMEOUT", timeout)  # read when a download starts, not at import
        with pytest.raises(SystemExit, match=rf"^prepare_numpy: CCOPT_NUMPY_FETCH_TIMEOUT='{timeout}' is not a "
                                             r"number of seconds > 0 \(e.g. 600\)$"):
            prepare_numpy.fetch("9.9.9")
    monkeypatch.setenv("CCOPT_NUMPY_FETCH_TIMEOUT", "30")
    (tmp_path / "file").write_text("mine\n")
    monkeypatch.setenv("CCOPT_NUMPY_CACHE", str(tmp_path / "file"))
    with pytest.raises(SystemExit, match=r"^prepare_numpy: the cache \S+/file cannot be a directory \(File exists\); "
                                         r"set CCOPT_NUMPY_CACHE to a directory$"):
        prepare_numpy.fetch("9.9.9")
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "dest").symlink_to(target)
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "kept").write_text("mine\n")
    (target / "numpy-9.9.9-fork").symlink_to(tmp_path / "tree")
    for dest in (tmp_path / "dest", target):  # DEST a link; DEST/numpy-9.9.9-fork a link
        with pytest.raises(SystemExit, match=r"^prepare_numpy: \S+ is a symbolic link \(to \S+\); refusing to write "
                                             "through it: name a directory that is not a link$"):
            prepare_numpy.prepare(dest, "9.9.9", fork=True)
    assert (tmp_path / "tree" / "kept").read_text() == "mine\n" and Index.served == []
    assert (tmp_path / "file").read_text() == "mine\n"


def fake_python(root: Path, name: str, minor: str, executable: bool = True) -> Path:
    """pyenv's ``versions/<name>/bin/python<minor>``: a script that answers as CPython ``minor``."""
    python = root / "versions" / name / "bin" / f"python{minor}"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\necho {minor}\n")
    python.chmod(0o755 if executable else 0o644)
    return python


def test_pyenv_pre_releases_rank_below_releases_and_non_executables_are_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("3.12.0rc1", "3.12.3rc1", "3.12-dev"):
        fake_python(tmp_path, name, "3.12")
    chosen = fake_python(tmp_path, "3.12.1", "3.12")
    fake_python(tmp_path, "3.12.2", "3.12", executable=False)  # a PermissionError when run
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no python3.12 on PATH
    assert toolchain.find_python("3.12") == chosen
    chosen.chmod(0o644)
    assert toolchain.find_python("3.12") == tmp_path / "versions" / "3.12.3rc1" / "bin" / "python3.12"


HEADER = """/* made up */
#undef NPY_MTARGETS_CONF_BASELINE
#define NPY_MTARGETS_CONF_BASELINE(EXEC_CB, ...) NPY__MTARGETS_EXPAND(EXEC_CB(__VA_ARGS__))
#undef NPY_MTARGETS_CONF_DISPATCH
#define NPY_MTARGETS_CONF_DISPATCH(TEST_CB, EXEC_CB, ...) \\
NPY__MTARGETS_EXPAND(EXEC_CB((TEST_CB(X86_V2)&&TEST_CB(X86_V3)&&TEST_CB(X86_V4)), X86_V4, __VA_ARGS__)) \\
NPY__MTARGETS_EXPAND(EXEC_CB((TEST_CB(X86_V2)&&TEST_CB(X86_V3)), X86_V3, __VA_ARGS__))
"""
CONFIG = '#define NPY_WITH_CPU_BASELINE "X86_V2"\n\n#define NPY_WITH_CPU_DISPATCH "X86_V3 X86_V4"\n'


def fake_build(root: Path, v4_flags: str = "-mavx512f", header: str = HEADER) -> Path:
    """A build dir as ``meson setup`` leaves it, as far as the dump reads it."""
    (root / "numpy" / "_core").mkdir(parents=True)
    (root / "meson_cpu").mkdir()
    line = "gcc -I../numpy/_core -O2 -msse4.2 -DNPY_HAVE_X86_V2 {} -o x.o -c ../numpy/_core/src/k.dispatch.c"
    commands = [{"file": "../numpy/_core/src/k.dispatch.c", "command": line.format(t)} for t in
                ["-DNPY_MTARGETS_BASELINE", "-mavx2 -DNPY_HAVE_X86_V3 -DNPY_MTARGETS_CURRENT=X86_V3",
                 f"{v4_flags} -DNPY_HAVE_X86_V4 -DNPY_MTARGETS_CURRENT=X86_V4"]]
    commands.append({"file": "../numpy/_core/src/plain.c", "command": "gcc -msse4.2 -DNPY_HAVE_X86_V2 -c plain.c"})
    (root / "compile_commands.json").write_text(json.dumps(commands))
    (root / "numpy" / "_core" / "k.dispatch.h").write_text(header)
    (root / "meson_cpu" / "npy_cpu_dispatch_config.h").write_text(CONFIG)
    return root


def test_a_dump_holds_each_objects_flags_each_headers_tests_and_the_config(tmp_path: Path) -> None:
    log = "meson_cpu/meson.build:203: WARNING: CPU Feature \"SSE41\" is redirected\nnumpy/meson.build:1: WARNING: BLAS"
    d = compare_builds.dump(fake_build(tmp_path), log)
    assert d["objects"]["k.dispatch.c:X86_V4"] == ["-DNPY_HAVE_X86_V2", "-DNPY_HAVE_X86_V4",
                                                   "-DNPY_MTARGETS_CURRENT=X86_V4", "-mavx512f", "-msse4.2"]
    assert sorted(d["objects"]) == ["k.dispatch.c:X86_V3", "k.dispatch.c:X86_V4", "k.dispatch.c:baseline"]
    assert d["sources"] == {"numpy/_core/src/plain.c": ["-DNPY_HAVE_X86_V2", "-msse4.2"]}
    assert d["headers"]["k.dispatch.h"] == {"baseline": True, "dispatch": [
        ["X86_V4", ["X86_V2", "X86_V3", "X86_V4"]], ["X86_V3", ["X86_V2", "X86_V3"]]]}
    assert compare_builds.config_names(d["config"]) == {"BASELINE": ["X86_V2"], "DISPATCH": ["X86_V3", "X86_V4"]}
    assert d["messages"] == ['WARNING: CPU Feature "SSE41" is redirected']  # numpy's own BLAS warning is not CPU's
    assert compare_builds.differences(d, d) == []


def test_each_difference_is_named(tmp_path: Path) -> None:
    fork = compare_builds.dump(fake_build(tmp_path / "a"))
    ccopt = compare_builds.dump(fake_build(tmp_path / "b", "-mavx512f -mavx512bw",
                                           HEADER.replace("TEST_CB(X86_V2)&&", "")))
    assert compare_builds.differences(fork, ccopt) == [
        "object k.dispatch.c:X86_V4: fork only [], ccopt only ['-mavx512bw']",
        'header k.dispatch.h: fork {"baseline": true, "dispatch": [["X86_V4", ["X86_V2", "X86_V3", "X86_V4"]], '
        '["X86_V3", ["X86_V2", "X86_V3"]]]}, ccopt {"baseline": true, "dispatch": [["X86_V4", ["X86_V3", "X86_V4"]], '
        '["X86_V3", ["X86_V3"]]]}']
    refused = compare_builds.dump(tmp_path / "c", "meson_cpu/meson.build:212:8: ERROR: Invalid token", False)
    assert compare_builds.differences(fork, refused) == [
        "setup: fork configured [], ccopt refused ['ERROR: Invalid token']"]


def test_a_cross_file_names_the_target_and_answers_numpys_run_check(tmp_path: Path) -> None:
    text = configure_numpy.cross_file(configure_numpy.PLATFORMS["s390x"], tmp_path / "s390x.ini").read_text()
    assert "c = 's390x-linux-gnu-gcc'" in text and "endian = 'big'" in text
    assert "longdouble_format = 'IEEE_QUAD_BE'" in text and "skip_sanity_check" not in text
    assert configure_numpy.Case("2.5.5", "i686", ("-Dc_args=-march=haswell", "-Dcpu-baseline-detect=auto")).id == (
        "2.5.5-i686-c_args--march-haswell_cpu-baseline-detect-auto")


# run_emulated.py: numpy's report on an emulated CPU against what the model has (made-up reports)

def report(features: dict[str, bool], current: str, available: str) -> dict[str, object]:
    return {"test_dispatch": "func_AVX2", "features": features, "baseline": ["X86_V2"],
            "dispatch": ["X86_V3", "X86_V4"],
            "funcs": {"add": {"f": {"current": current, "available": available}},
                      "sqrt": {"d": {"current": "baseline(X86_V2)", "available": "baseline(X86_V2)"}}}}


HASWELL = run_emulated.Cpu("x86_64", "Haswell", ("X86_V3",))


def test_report_matching_the_model_has_no_problem() -> None:
    detected, chosen, problems = run_emulated.check(
        HASWELL, report({"X86_V3": True, "X86_V4": False}, "X86_V3", "X86_V4 X86_V3 baseline(X86_V2)"))
    assert (detected, chosen, problems) == (["X86_V3"], {"X86_V3": 1, "baseline(X86_V2)": 1}, [])
    row = run_emulated.Row("port", HASWELL, detected, "func_AVX2", chosen, problems, {"passed": 3, "skipped": 1},
                           12.0, {})
    assert "| port | x86_64 | Haswell | X86_V3 | func_AVX2 | X86_V3 1, baseline(X86_V2) 1 | matches the model | " \
        "3 passed, 1 skipped |" in run_emulated.table([row])


def test_a_baseline_of_several_names_is_one_target() -> None:
    cpu = run_emulated.Cpu("aarch64", "cortex-a57", ())
    base = "baseline(NEON NEON_FP16 NEON_VFPV4 ASIMD)"
    found = report({"X86_V3": False, "X86_V4": False}, base, f"SVE ASIMDHP {base}")
    assert run_emulated.check(cpu, found)[2] == []


@pytest.mark.parametrize("features, current, why", [
    ({"X86_V3": True, "X86_V4": True}, "X86_V4", "detects ['X86_V3', 'X86_V4'], the model has ['X86_V3']"),
    ({"X86_V3": True, "X86_V4": False}, "baseline(X86_V2)", "add[f] runs baseline(X86_V2), expected X86_V3"),
])
def test_report_beyond_or_below_the_model_is_named(features: dict[str, bool], current: str, why: str) -> None:
    problems = run_emulated.check(HASWELL, report(features, current, "X86_V4 X86_V3 baseline(X86_V2)"))[2]
    assert why in problems


def test_cross_file_runs_the_target_python_under_qemu(tmp_path: Path) -> None:
    need("qemu-aarch64-static")
    text = run_emulated.cross_file(tmp_path, Path("/sysroot"), Path("/venv/bin/python")).read_text()
    assert f"python = '{tmp_path}/python3'" in text and "cython = '/venv/bin/cython'" in text
    assert "cpu_family = 'aarch64'" in text and "c_args = ['-idirafter', '/sysroot/usr/include']" in text
    assert "-L /sysroot /sysroot/usr/bin/python3.13" in (tmp_path / "python3").read_text()


def test_side_by_side_says_whether_the_fork_s_report_is_the_port_s() -> None:
    same = report({"X86_V3": True, "X86_V4": False}, "X86_V3", "X86_V4 X86_V3 baseline(X86_V2)")
    other = {**same, "dispatch": ["X86_V3"]}

    def row(build: str, found: dict[str, object]) -> run_emulated.Row:
        return run_emulated.Row(build, HASWELL, [], "", {}, [], {}, 1.0, found)

    assert run_emulated.side_by_side([row("port", same), row("fork", same)]) == [
        "x86_64 -cpu Haswell: the fork's and the port's reports are identical (2 functions, 2 loops)"]
    assert run_emulated.side_by_side([row("port", same), row("fork", other)]) == [
        "x86_64 -cpu Haswell: the fork's and the port's reports are different in dispatch"]
    assert run_emulated.side_by_side([row("port", same)]) == []


def test_configure_numpy_takes_numpy_s_options_after_the_separator() -> None:
    args, options = configure_numpy.parse(["/tmp/np", "--compare", "--platform", "aarch64", "--",
                                           "-Dcpu-baseline=asimdhp", "-Dcpu-dispatch=none"])
    assert (args.dest, args.compare, args.platform) == (Path("/tmp/np"), True, "aarch64")
    assert options == ("-Dcpu-baseline=asimdhp", "-Dcpu-dispatch=none")
    assert configure_numpy.parse(["/tmp/np", "--fork"])[1] == ()


def test_record_writes_what_does_not_match_and_names_what_it_could_not(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [configure_numpy.Case("2.5.5", "x86_64-gcc"), configure_numpy.Case("2.5.5", "s390x"),
             configure_numpy.Case("2.5.5", "x86_64-gcc", ("-Dcpu-baseline=native",))]
    configured: list[str] = []

    def configure_fork(case: configure_numpy.Case, dest: Path) -> dict[str, object]:
        assert dest.parent == tmp_path and dest.name.startswith("record-")  # fresh trees, not DEST's
        configured.append(case.id)
        return {"configured": True, "messages": []}

    monkeypatch.setattr(configure_numpy, "CASES", cases)
    monkeypatch.setattr(configure_numpy, "RECORDED", tmp_path / "fork-dumps")
    monkeypatch.setattr(configure_numpy, "configure_fork", configure_fork)
    monkeypatch.setattr(configure_numpy, "made_with", lambda case: {"case": case.id})
    monkeypatch.setattr(configure_numpy, "missing_tools", lambda case: ["s390x-linux-gnu-gcc"]
                        if case.platform == "s390x" else [])

    assert configure_numpy.record(tmp_path) == (["2.5.5-x86_64-gcc-defaults"], ["2.5.5-s390x-defaults"])
    written = tmp_path / "fork-dumps" / "2.5.5-x86_64-gcc-defaults.json.gz"
    assert configure_numpy.read_record(written) == {"made_with": {"case": "2.5.5-x86_64-gcc-defaults"},
                                                    "dump": {"configured": True, "messages": []}}
    assert configure_numpy.recorded(cases[0], {"case": "2.5.5-x86_64-gcc-defaults"}) is not None
    assert configure_numpy.recorded(cases[0], {"case": "other compilers"}) is None
    first = written.read_bytes()
    assert configure_numpy.record(tmp_path) == ([], ["2.5.5-s390x-defaults"])  # matches now: not remade
    assert configured == ["2.5.5-x86_64-gcc-defaults"] and written.read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fork-dumps"]  # the scratch trees are gone


@pytest.mark.parametrize("damage", ["truncated", "not gzip", "not a record"])
def test_a_damaged_fork_record_is_one_line_naming_the_command_that_remakes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    """A truncated record gave an EOFError traceback, also from --record, the command meant to remake it."""
    case = configure_numpy.Case("2.5.5", "x86_64-gcc")
    monkeypatch.setattr(configure_numpy, "CASES", [case])
    monkeypatch.setattr(configure_numpy, "RECORDED", tmp_path / "fork-dumps")
    monkeypatch.setattr(configure_numpy, "made_with", lambda case: {"case": case.id})
    monkeypatch.setattr(configure_numpy, "missing_tools", lambda case: [])
    monkeypatch.setattr(configure_numpy, "configure_fork", lambda case, dest: {"configured": True})
    path = tmp_path / "fork-dumps" / f"{case.id}.json.gz"
    path.parent.mkdir()
    good = gzip.compress(json.dumps({"made_with": {"case": case.id}, "dump": {"configured": True}}).encode())
    path.write_bytes({"truncated": good[:len(good) // 2], "not gzip": b"version https://git-lfs\n",
                      "not a record": gzip.compress(b"[1, 2]")}[damage])
    with pytest.raises(SystemExit) as exc:
        configure_numpy.main([str(tmp_path / "np"), "--fork"])
    line = str(exc.value.code)
    assert len(line.splitlines()) == 1 and line.startswith(f"configure_numpy: the fork record {path.name} ")
    assert line.endswith("; remake it with configure_numpy.py DEST --record"), line
    assert configure_numpy.main([str(tmp_path / "np"), "--record"]) == 0  # remade, not a traceback
    assert configure_numpy.read_record(path)["dump"] == {"configured": True}


def test_fork_dump_says_when_no_record_matches_and_caches_what_it_configured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setenv("CCOPT_NUMPY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(configure_numpy, "RECORDED", tmp_path / "fork-dumps")
    monkeypatch.setattr(configure_numpy, "made_with", lambda case: {"case": case.id})
    monkeypatch.setattr(configure_numpy, "configure_fork",
                        lambda case, dest: calls.append(case.id) or {"configured": True, "messages": []})
    case = configure_numpy.Case("2.5.5", "s390x")
    with pytest.warns(UserWarning, match="2.5.5-s390x-defaults: no fork dump recorded"):
        assert configure_numpy.fork_dump(case, tmp_path)["configured"]
    with pytest.warns(UserWarning):
        configure_numpy.fork_dump(case, tmp_path)  # from the cache now
    assert calls == ["2.5.5-s390x-defaults"]


def test_the_example_uses_only_what_a_user_may_import() -> None:
    """An example is a user: examples/numpy imports no module of the package but its public one (``__all__``),
    and nothing of the repository's bench/ or tests/; it reaches the rest through the command line."""
    import ast

    import ccopt_meson

    for path in sorted((ROOT / "examples" / "numpy").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [(node.module, a.name) for a in node.names]
            else:
                continue
            for module, name in names:
                top = module.split(".")[0]
                assert top not in ("bench", "tests"), f"{path.name}:{node.lineno} imports {module}"
                if top == "ccopt_meson":
                    assert module == "ccopt_meson" and name in ccopt_meson.__all__, \
                        f"{path.name}:{node.lineno} imports {module}.{name}, not the public API"
