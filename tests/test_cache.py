"""The feature cache: hit starts no compiler, misses and corruption are warnings, flush."""

from __future__ import annotations

import copy
import json
import os
import random
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccopt_meson import Request, cache, dispatch, flush, fsio, pipeline
from ccopt_meson.cache import cache_path
from ccopt_meson.errors import CacheError, CcoptError, InputError
from ccopt_meson.pipeline import detect
from ccopt_meson.records import Probed

from .conftest import NUMPY22, ROOT, FakeCompiler, detect_doc
from .helpers import (
    CACHE,
    IS_ROOT,
    ROOT_REASON,
    cli,
    configure_args,
    fakecc,
    future_schema,
    one_error,
    race,
    set_path,
    x86_gcc,
)

REQ = Request(command=("fakecc",))


def test_hit_starts_no_process(fake: Callable[..., Any], tmp_path: Path) -> None:
    first = detect_doc(REQ, build_dir=tmp_path, runner=fake())
    cc = fake()
    second = detect_doc(REQ, build_dir=tmp_path, runner=cc)
    assert first["cache"]["hit"] is False and second["cache"]["hit"] is True
    assert cc.calls == [] and second["probes"] == 0
    assert second["dispatch"] == first["dispatch"]


@pytest.mark.parametrize("change", [
    {"args": ("-O2",)}, {"lang": "cpp"}, {"command": ("ccache", "fakecc")},
])
def test_key_covers_the_compiler_and_its_args(fake: Callable[..., Any], tmp_path: Path,
                                              change: dict[str, Any]) -> None:
    detect_doc(REQ, build_dir=tmp_path, runner=fake())
    cc = fake()
    doc = detect_doc(REQ._replace(**change), build_dir=tmp_path, runner=cc)
    assert doc["cache"]["hit"] is False and cc.calls


def _program(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_a_compiler_rewritten_in_place_with_its_old_size_and_mtime_is_a_miss(fake: Callable[..., Any],
                                                                             tmp_path: Path) -> None:
    """``cp -p``, ``rsync -a``, ``tar x``: same path, size and mtime; the change time (or inode) tells."""
    cc = _program(tmp_path / "cc", "#!/bin/sh\nexec gcc-12 \"$@\"\n")
    req = Request(command=(str(cc),))
    build = tmp_path / "build"
    detect_doc(req, build_dir=build, runner=fake())
    before = cc.stat()
    new = _program(tmp_path / "cc.new", "#!/bin/sh\nexec gcc-13 \"$@\"\n")
    os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(new, cc)
    assert (cc.stat().st_size, cc.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    runner = fake()
    assert detect_doc(req, build_dir=build, runner=runner)["cache"]["hit"] is False and runner.calls


def test_a_wrapper_script_is_known_by_its_text(fake: Callable[..., Any], tmp_path: Path) -> None:
    """Repointing the compiler a wrapper runs changes the key, even where the file's stat could not tell."""
    from ccopt_meson.compiler import binary_identity

    one = _program(tmp_path / "one", "#!/bin/sh\nexec gcc-12 \"$@\"\n")
    two = _program(tmp_path / "two", "#!/bin/sh\nexec gcc-13 \"$@\"\n")
    (a,), (b,) = binary_identity([str(one)]), binary_identity([str(two)])
    assert len(a) == len(b) == 6 and a[-1] != b[-1]
    binary = binary_identity(["/bin/true"])[0]
    assert len(binary) == 5  # a binary: its stat only


@pytest.mark.parametrize("name", ["CPATH", "C_INCLUDE_PATH", "COMPILER_PATH", "GCC_EXEC_PREFIX",
                                  "CCC_OVERRIDE_OPTIONS"])
def test_the_environment_a_compiler_reads_is_in_the_key(fake: Callable[..., Any], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.delenv(name, raising=False)
    detect_doc(REQ, build_dir=tmp_path, runner=fake())
    assert detect_doc(REQ, build_dir=tmp_path, runner=fake())["cache"]["hit"] is True
    monkeypatch.setenv(name, str(tmp_path / "elsewhere"))
    cc = fake()
    assert detect_doc(REQ, build_dir=tmp_path, runner=cc)["cache"]["hit"] is False and cc.calls


@pytest.mark.parametrize("change", [
    {"baseline": "avx2"}, {"dispatch": "max -xop"}, {"disable_optimization": True}, {"debug_build": True},
])
def test_a_new_request_reuses_what_was_probed(fake: Callable[..., Any], tmp_path: Path,
                                              change: dict[str, Any]) -> None:
    first = detect_doc(REQ, build_dir=tmp_path, runner=fake())
    cc = fake()
    doc = detect_doc(REQ._replace(**change), build_dir=tmp_path, runner=cc)
    assert doc["cache"]["hit"] is False and doc["cache"]["key"] != first["cache"]["key"]
    assert cc.calls == [] and doc["probes"] == 0  # every outcome it needs is known already
    if "baseline" in change:
        assert doc["baseline"]["names"][-1] == "AVX2"


def test_a_new_request_probes_only_what_it_adds(fake: Callable[..., Any], tmp_path: Path) -> None:
    detect_doc(Request(command=("fakecc",), dispatch="avx2"), build_dir=tmp_path, runner=fake())
    cc = fake()
    # (AVX512_SKX was probed with the first request: x86-64-v4, a glibc-hwcaps level, implies it)
    doc = detect_doc(Request(command=("fakecc",), dispatch="avx2 avx512_icl"), build_dir=tmp_path, runner=cc)
    assert doc["dispatch"]["names"] == ["AVX512_ICL", "AVX2"]
    assert len(cc.calls) == 1 and "-mavx512vbmi2" in cc.calls[0]  # one batch of the new features, no macro dump


def test_request_is_normalised_in_the_key(fake: Callable[..., Any], tmp_path: Path) -> None:
    detect_doc(Request(command=("fakecc",), dispatch="MAX,-XOP"), build_dir=tmp_path, runner=fake())
    doc = detect_doc(Request(command=("fakecc",), dispatch="max -xop"), build_dir=tmp_path, runner=fake())
    assert doc["cache"]["hit"] is True


@pytest.mark.parametrize("content,warning", [
    (b"", "not valid JSON"), (b'{"generator": "Generated by ccopt-meson", "schema_version": 2', "not valid JSON"),
    (b'{"generator": "Generated by ccopt-meson", "schema_version": 99}', "schema version 99"),
    (b'{"generator": "Generated by ccopt-meson", "schema_version": 2, "key": 5}', "missing required key"),
])
def test_corrupt_cache_is_a_miss_with_a_warning(fake: Callable[..., Any], tmp_path: Path, capsys: Any,
                                                content: bytes, warning: str) -> None:
    cache_path(tmp_path).write_bytes(content)
    doc = detect_doc(REQ, build_dir=tmp_path, runner=fake())
    assert doc["cache"]["hit"] is False
    err = capsys.readouterr().err
    assert err.startswith("ccopt-meson: warning: ") and warning in err and err.count("\n") == 1
    assert json.loads(cache_path(tmp_path).read_text())["key"] == doc["cache"]["key"]


def test_cache_names_outside_the_tables_are_a_miss(fake: Callable[..., Any], tmp_path: Path, capsys: Any) -> None:
    detect_doc(REQ, build_dir=tmp_path, runner=fake())
    path = cache_path(tmp_path)
    doc = json.loads(path.read_text())
    doc["probed"]["outcomes"]["MADE_UP"] = [True, ""]
    path.write_text(json.dumps(doc))
    again = detect_doc(REQ, build_dir=tmp_path, runner=fake())
    assert again["cache"]["hit"] is False and "MADE_UP" not in again["dispatch"]["names"]
    assert "'MADE_UP' is not a feature of x86_64" in capsys.readouterr().err


def test_flush_deletes_and_next_run_probes(fake: Callable[..., Any], tmp_path: Path) -> None:
    detect_doc(REQ, build_dir=tmp_path, runner=fake())
    assert flush(tmp_path) == [cache_path(tmp_path)]
    cc = fake()
    assert detect_doc(REQ, build_dir=tmp_path, runner=cc)["cache"]["hit"] is False and cc.calls


def test_cache_file_is_deterministic(fake: Callable[..., Any], tmp_path: Path) -> None:
    detect_doc(REQ, build_dir=tmp_path / "a", runner=fake())
    detect_doc(REQ, build_dir=tmp_path / "b", runner=fake())
    a, b = (cache_path(tmp_path / d).read_bytes() for d in "ab")
    assert a == b and str(tmp_path).encode() not in a


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into read-only directories")
def test_read_only_build_dir_is_a_clear_error(fake: Callable[..., Any], tmp_path: Path) -> None:
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(Exception, match="check that the build directory is writable"):
            detect_doc(REQ, build_dir=tmp_path, runner=fake())
    finally:
        tmp_path.chmod(0o755)


def test_native_answers_are_keyed_by_the_host_cpu(fake: Callable[..., Any], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from ccopt_meson import host

    req = Request(command=("fakecc",), baseline="native", cross=False)
    detect_doc(req, build_dir=tmp_path, runner=fake())
    assert detect_doc(req, build_dir=tmp_path, runner=fake())["cache"]["hit"] is True
    monkeypatch.setattr(host, "cpu_identity", lambda: "another CPU")
    assert detect_doc(req, build_dir=tmp_path, runner=fake())["cache"]["hit"] is False


# --------------------------------------------------------------------------- the data in the key


@pytest.fixture
def own_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private copy of the package data that a test may edit (the tables' caches see only it)."""
    import shutil

    from ccopt_meson import digest, probe, tables

    data = tmp_path / "data"
    shutil.copytree(tables.DATA_DIR, data)
    monkeypatch.setattr(probe, "DATA_DIR", data)
    monkeypatch.setattr(probe, "PROBES_DIR", data / "probes")
    monkeypatch.setattr(tables, "_DATA", str(data))
    monkeypatch.setattr(tables, "_FEATURES", str(data / "features"))
    monkeypatch.setattr(tables, "_PROBES", str(data / "probes"))
    caches = [f for mod in (tables, digest) for f in vars(mod).values() if hasattr(f, "cache_clear")]
    for f in caches:
        f.cache_clear()
    yield data
    for f in caches:
        f.cache_clear()


def _edit(path: Path, same_size: bool) -> None:
    text = path.read_text(encoding="utf-8")
    if same_size:  # one character for another: size, inode and (within a clock tick) mtime can stay the same
        i = text.rindex("}")
        path.write_text(text[:i] + "}" + text[i + 1:].replace("\n", " ", 1) if text.endswith("}\n") else
                        text[:-1] + (" " if text[-1] == "\n" else "\n"), encoding="utf-8")
    else:
        path.write_text(text + "\n", encoding="utf-8")


EDITS = ["features/x86.json", "probes/x86/avx2.c", "compilers.json"]


@pytest.mark.parametrize("same_size", [False, True])
@pytest.mark.parametrize("name", EDITS)
def test_editing_the_data_misses(fake: Callable[..., Any], tmp_path: Path, own_data: Path, name: str,
                                 same_size: bool) -> None:
    """The key hashes the data's content: an edit that keeps size and mtime is still a miss."""
    from ccopt_meson import digest

    build = tmp_path / "build"
    detect_doc(REQ, build_dir=build, runner=fake())
    assert detect_doc(REQ, build_dir=build, runner=fake())["cache"]["hit"] is True
    before = (own_data / name).stat()
    _edit(own_data / name, same_size=same_size)
    if same_size:
        os.utime(own_data / name, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert (own_data / name).stat().st_size == before.st_size
    digest.package_digest.cache_clear()  # a new helper process
    cc = fake()
    assert detect_doc(REQ, build_dir=build, runner=cc)["cache"]["hit"] is False and cc.calls
    assert detect_doc(REQ, build_dir=build, runner=fake())["cache"]["hit"] is True


# --------------------------------------------------------------------------- files of earlier releases

LEGACY = ["ccopt-replay-configure-00000000deadbeef.txt", "ccopt-replay-targets-0123456789abcdef.txt",
          "ccopt-data-digest.json"]


def test_files_of_earlier_releases_are_removed_by_the_next_run(fake: Callable[..., Any], tmp_path: Path) -> None:
    for name in LEGACY:
        (tmp_path / name).write_text(f"# {fsio.MARK}: a record\n")
    foreign = tmp_path / "ccopt-replay-mine.txt"
    foreign.write_text("not ours\n")
    target = tmp_path / "elsewhere.txt"
    target.write_text(f"# {fsio.MARK}\n")
    link = tmp_path / "ccopt-replay-link.txt"
    link.symlink_to(target)
    detect_doc(REQ, build_dir=tmp_path, runner=fake())
    assert not any((tmp_path / n).exists() for n in LEGACY)
    assert foreign.read_text() == "not ours\n" and link.is_symlink() and target.is_file()


def test_a_flush_removes_files_of_earlier_releases(fake: Callable[..., Any], tmp_path: Path) -> None:
    detect_doc(REQ, build_dir=tmp_path, runner=fake())
    for name in LEGACY:
        (tmp_path / name).write_text(f"# {fsio.MARK}: a record\n")
    assert flush(tmp_path) == [cache_path(tmp_path)]
    assert not any((tmp_path / n).exists() for n in LEGACY)


def test_a_flush_with_the_same_verdicts_leaves_the_file_as_it_was(fake: Callable[..., Any], tmp_path: Path) -> None:
    """What was made from the cache ('targets') stays valid after a reconfigure
    that probes again and finds what it found before."""
    detect(REQ, build_dir=tmp_path, runner=fake())
    before = os.stat(cache_path(tmp_path))
    det = detect(REQ, build_dir=tmp_path, flush_first=True, runner=fake())
    after = os.stat(cache_path(tmp_path))
    assert det.cache_hit is False and det.probes > 0
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)


def test_a_flush_whose_probe_fails_leaves_no_cache(fake: Callable[..., Any], tmp_path: Path) -> None:
    detect(REQ, build_dir=tmp_path, runner=fake())

    def broken(argv: Any, timeout: float) -> Any:
        raise CcoptError("the compiler broke")

    with pytest.raises(CcoptError):
        detect(REQ, build_dir=tmp_path, flush_first=True, runner=broken)
    assert not cache_path(tmp_path).exists()  # the flush asked for holds: the next run probes


# --------------------------------------------------------------------------- faults of the cache file, through the CLI


@pytest.fixture(scope="module")
def host_gcc_narrow(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], bytes]:
    """A clean detection with the host gcc: the document and the cache file's bytes."""
    cc = x86_gcc()
    build = tmp_path_factory.mktemp("host_gcc_narrow")
    r = cli("detect", "--cc", cc, *NARROW, "--json", "--build-dir", str(build))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), (build / CACHE).read_bytes()


# A narrow request keeps each run cheap; the cache logic does not depend on it.
NARROW = ("--baseline", "sse sse2", "--dispatch", "sse41 sse42")


def detect_json(build: Path) -> subprocess.CompletedProcess[str]:
    return cli("detect", "--cc", x86_gcc(), *NARROW, "--json", "--build-dir", str(build))


def assert_correct_miss(r: subprocess.CompletedProcess[str], build: Path, ref: dict[str, Any],
                        again: bool = False) -> None:
    """A miss that gives the clean answer and leaves a valid cache behind (``again``: the next run hits)."""
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["cache"]["hit"] is False
    assert (doc["baseline"], doc["dispatch"], doc["features"]) == (ref["baseline"], ref["dispatch"], ref["features"])
    stored = cache.load(build / CACHE)
    assert stored is not None and stored.key == ref["cache"]["key"]
    if again:
        second = detect_json(build)
        assert second.returncode == 0 and second.stderr == "" and json.loads(second.stdout)["cache"]["hit"] is True


# Cases tests/test_cache.py does not have (it covers empty, a synthetic truncation, garbage, [1, 2], schema 99
# and a hand-edited file in-process); these run the real CLI and compare with a clean detection.
CACHE_FAULTS: list[Any] = [
    pytest.param(lambda good: good[:1], "not valid JSON", False, id="truncated-to-1-byte"),
    pytest.param(lambda good: good[: len(good) // 2], "not valid JSON", True, id="truncated-in-half"),
    pytest.param(lambda good: good[:-2], "not valid JSON", False, id="truncated-last-brace"),
    pytest.param(lambda good: bytes(random.Random(3).randrange(256) for _ in range(2048)), "not valid JSON", False,
                 id="random-bytes"),
    pytest.param(lambda good: b"[" * 100000, "not valid JSON", False, id="nested-too-deep"),
    pytest.param(lambda good: b'{"schema_version": 0, ' + good.lstrip()[1:],
                 'not valid JSON: the key "schema_version" appears twice in one object', False, id="key-given-twice"),
    pytest.param(lambda good: b"null", "not written by ccopt-meson", False, id="json-null"),
    pytest.param(lambda good: b'{"schema_version": 2, "cache": []}', "not written by ccopt-meson", False,
                 id="unmarked-object"),
    pytest.param(lambda good: json.dumps({k: v for k, v in json.loads(good).items() if k != "probed"}).encode(),
                 "cache: missing required key 'probed'", False, id="key-matches-body-missing"),
    pytest.param(lambda good: json.dumps({**json.loads(good), "request": []}).encode(),
                 "cache.request: expected object", False, id="key-matches-body-of-the-wrong-shape"),
    pytest.param(future_schema, f"schema version {cache.SCHEMA_VERSION + 1}, this helper reads {cache.SCHEMA_VERSION}",
                 False, id="future-schema-key-matches"),
]


@pytest.mark.parametrize("corrupt,warning,again", CACHE_FAULTS)
def test_corrupt_cache_is_a_miss_with_one_warning(tmp_path: Path, host_gcc_narrow: tuple[dict[str, Any], bytes],
                                                  corrupt: Callable[[bytes], bytes], warning: str,
                                                  again: bool) -> None:
    ref, good = host_gcc_narrow
    (tmp_path / CACHE).write_bytes(corrupt(good))
    r = detect_json(tmp_path)
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"ccopt-meson: warning: ignoring the feature cache: {CACHE}: ") and warning in r.stderr
    assert r.stderr.rstrip().endswith("detecting again")
    assert_correct_miss(r, tmp_path, ref, again=again)


def test_cache_behind_a_symlink_loop_is_unreadable(tmp_path: Path,
                                                   host_gcc_narrow: tuple[dict[str, Any], bytes]) -> None:
    """Unreadable even for root: a symlink pointing at itself; the link is replaced by a real file."""
    (tmp_path / CACHE).symlink_to(CACHE)
    r = detect_json(tmp_path)
    assert r.stderr == f"ccopt-meson: warning: ignoring the feature cache: cannot read feature cache {CACHE}: " \
                       "Too many levels of symbolic links; detecting again\n"
    assert_correct_miss(r, tmp_path, host_gcc_narrow[0], again=True)
    assert not (tmp_path / CACHE).is_symlink()


def test_dangling_symlink_is_a_plain_miss(tmp_path: Path, host_gcc_narrow: tuple[dict[str, Any], bytes]) -> None:
    (tmp_path / CACHE).symlink_to(tmp_path / "gone.json")
    r = detect_json(tmp_path)
    assert r.stderr == ""
    assert_correct_miss(r, tmp_path, host_gcc_narrow[0])


@pytest.mark.skipif(IS_ROOT, reason=ROOT_REASON)
def test_unreadable_cache_file(tmp_path: Path, host_gcc_narrow: tuple[dict[str, Any], bytes]) -> None:
    (tmp_path / CACHE).write_bytes(host_gcc_narrow[1])
    (tmp_path / CACHE).chmod(0)
    r = detect_json(tmp_path)
    assert r.stderr == (f"ccopt-meson: warning: ignoring the feature cache: cannot read feature cache {CACHE}: "
                        "Permission denied; detecting again\n")
    assert_correct_miss(r, tmp_path, host_gcc_narrow[0])


def test_directory_in_place_of_the_cache(tmp_path: Path) -> None:
    (tmp_path / CACHE).mkdir()
    r = detect_json(tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    warning, error = r.stderr.splitlines()
    assert warning.startswith(f"ccopt-meson: warning: ignoring the feature cache: feature cache {CACHE} is a "
                              "directory, not a regular file")
    assert warning.endswith("; detecting again")
    assert error == (f"ccopt-meson: error: cannot write {tmp_path / CACHE}: Is a directory; check that the build "
                     f"directory is writable and that {CACHE} is a regular file")


@pytest.mark.parametrize("command", ["detect", "configure"])
def test_build_dir_that_cannot_be_created(tmp_path: Path, command: str) -> None:
    """Works as root too: the build dir would have to live under a regular file."""
    cc = x86_gcc()
    (tmp_path / "file").write_text("")
    build = tmp_path / "file" / "sub"
    args = ["detect", "--cc", cc, "--build-dir", str(build)] if command == "detect" else configure_args(build, cc)
    one_error(cli(*args), f"cannot write {build / CACHE}: Not a directory; check that the build directory is writable")


@pytest.mark.skipif(IS_ROOT, reason=ROOT_REASON)
def test_read_only_build_dir_through_the_cli(tmp_path: Path) -> None:
    build = tmp_path / "ro"
    build.mkdir(mode=0o555)
    try:
        one_error(cli("detect", "--cc", x86_gcc(), "--build-dir", str(build)),
                  f"cannot write {build / CACHE}: Permission denied; check that the build directory is writable")
    finally:
        build.chmod(0o755)


def test_flush_leaves_what_is_not_ours(tmp_path: Path) -> None:
    """A directory (or a foreign file) under a cache file's name is not deleted; configure then names it."""
    (tmp_path / "meson-private").mkdir()
    (tmp_path / "meson-private" / "coredata.dat").write_bytes(b"")
    (tmp_path / "sub" / CACHE).mkdir(parents=True)
    (tmp_path / "sub" / CACHE / "x").write_text("")
    (tmp_path / CACHE).write_text('{"mine": true}\n')
    r = cli("flush", str(tmp_path))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout == f"flushed 0 cache file(s) in {tmp_path}\n"
    assert (tmp_path / "sub" / CACHE / "x").is_file() and (tmp_path / CACHE).read_text() == '{"mine": true}\n'


def test_flush_that_cannot_delete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root can delete anything in a directory it owns: the refusal is simulated."""
    path = cache.cache_path(tmp_path)
    path.write_text("")

    def refuse(target: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache.os, "unlink", refuse)  # cache deletes through os (no pathlib on the hit path)
    with pytest.raises(CacheError, match=f"^cannot delete {re.escape(str(path))}: Permission denied$"):
        cache.flush(tmp_path)


def test_two_build_dirs_do_not_interfere(tmp_path: Path) -> None:
    cc = fakecc("instant")
    a, b = tmp_path / "a", tmp_path / "b"
    outs = race([["detect", "--cc", cc, "--json", "--build-dir", str(a), "--dispatch", "sse41 sse42"],
                 ["detect", "--cc", cc, "--json", "--build-dir", str(b), "--dispatch", "avx2"]],
                tmp_path / "unused", lambda data: None)
    for build, out, names in ((a, outs[0], ["SSE42", "SSE41"]), (b, outs[1], ["AVX2"])):
        doc = json.loads(out)
        stored = json.loads((build / CACHE).read_text())
        assert doc["dispatch"]["names"] == names == list(pipeline.read(build).dispatch)
        assert stored["key"] == doc["cache"]["key"]
        assert sorted(p.name for p in build.iterdir()) == [CACHE]


# --- untrusted input, bounds and processes (docs/explanation/robustness.md section 9)
INSTANT = str(ROOT / "tests" / "fakecc" / "instant")
EVIL = "-fplugin=/tmp/evil.so"
SOURCE = "/*@targets $maxopt baseline avx2 (fma3 avx2) avx512_skx sse41 */\n"


# --------------------------------------------------------------------------- helpers


def configure(out: Path) -> subprocess.CompletedProcess[str]:
    """What meson.build runs, with the instant compiler."""
    return cli("configure", "--lang", "c", "--output-dir", str(out), "--compiler-id", "gcc", "--cpu-family",
               "x86_64", "--cross", "no", "--write-config", f"--cc-arg={INSTANT}")


def targets(feature: Path, out: Path) -> subprocess.CompletedProcess[str]:
    src = out / "kern.dispatch.c"
    src.write_text(SOURCE)
    return cli("targets", str(src), "--cache-file", str(feature), "--output-dir", str(out))


def one_line(r: subprocess.CompletedProcess[str], kind: str, *fragments: str) -> str:
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ccopt-meson: {kind}: "), r.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


def build_lines(stdout: str) -> dict[str, str]:
    """The configure lines that reach build.ninja (everything but the cache state)."""
    lines = dict(line.split("\t", 1) for line in stdout.splitlines())
    return {k: v for k, v in lines.items() if k not in ("cache_hit", "probes", "cache_file", "feature_file")}


class Reference:
    """One clean configure + targets run: what every forgery is compared to."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "ref"
        r = configure(self.dir)
        assert r.returncode == 0, r.stderr
        self.lines = build_lines(r.stdout)
        self.config = (self.dir / "ccopt_config.h").read_text()
        self.kernel = (self.dir / "ccopt_kernel.h").read_text()
        self.doc: dict[str, Any] = json.loads((self.dir / CACHE).read_text())
        t = targets(self.dir / CACHE, self.dir)
        assert t.returncode == 0, t.stderr
        self.targets = t.stdout.replace(str(self.dir), "<dir>")
        self.header = (self.dir / "kern.dispatch.h").read_text()

    def forged(self, tmp: Path, doc: Any) -> Path:
        """A build dir (copied from the reference) whose cache holds ``doc``."""
        build = tmp / "build"
        build.mkdir(parents=True)
        (build / "ccopt_config.h").write_text(self.config)
        (build / "ccopt_kernel.h").write_text(self.kernel)
        (build / CACHE).write_text(json.dumps(doc) if not isinstance(doc, bytes) else doc.decode())
        return build

    def check_unchanged(self, build: Path, configured: subprocess.CompletedProcess[str], shown: str = "") -> None:
        """configure and targets print and write what the reference did (``shown``: a line for people only)."""
        assert configured.returncode == 0, configured.stderr
        lines = build_lines(configured.stdout)
        assert {k: v for k, v in lines.items() if k != shown} == {k: v for k, v in self.lines.items() if k != shown}
        assert (build / "ccopt_config.h").read_text() == self.config
        assert (build / "ccopt_kernel.h").read_text() == self.kernel
        t = targets(build / CACHE, build)
        assert t.returncode == 0, t.stderr
        assert t.stdout.replace(str(build), "<dir>") == self.targets
        assert (build / "kern.dispatch.h").read_text() == self.header


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return Reference(tmp_path_factory.mktemp("cache"))


# --------------------------------------------------------------------------- forged content


# Wrong types and shapes behind a valid-looking file (the key kept): every one fails the schema.
WRONG_SHAPES = {
    "baseline.names=5": lambda d: {**d, "baseline": {"names": 5}},
    "features=[]": lambda d: {**d, "features": []},
    "compiler-missing": lambda d: set_path(d, "probed.compiler_id", KeyError),
    "request=null": lambda d: set_path(d, "request", None),
    "probed=null": lambda d: set_path(d, "probed", None),
    "outcomes=[]": lambda d: set_path(d, "probed.outcomes", []),
    "verdict-not-a-pair": lambda d: set_path(d, "probed.outcomes", {"AVX2": [True]}),
    "verdict-of-strings": lambda d: set_path(d, "probed.outcomes", {"AVX2": ["yes", ""]}),
    "arch=5": lambda d: set_path(d, "probed.arch", 5),
    "unknown-arch": lambda d: set_path(d, "probed.arch", "sparc"),
    "unknown-feature": lambda d: set_path(d, "probed.detected", ["NOSUCH"]),
    "args-a-string": lambda d: set_path(d, "request.args", EVIL),
    "command-empty": lambda d: set_path(d, "request.command", []),
    "key=5": lambda d: set_path(d, "key", 5),
    "schema-as-text": lambda d: set_path(d, "schema_version", "2"),
    "headers-entry": lambda d: set_path(d, "probed.headers", ['immintrin.h>\n#error pwned\n#include <x.h']),
    "flags-entry": lambda d: set_path(d, "probed.baseline_args", [EVIL]),
    "tab-in-reason": lambda d: set_path(d, "probed.outcomes", {"AVX2": [False, "a\nb"]}),
}


@pytest.mark.parametrize("forge", WRONG_SHAPES.values(), ids=WRONG_SHAPES.keys())
def test_a_forged_cache_of_the_wrong_shape_is_a_clean_miss(tmp_path: Path, ref: Reference,
                                                           forge: Callable[[dict[str, Any]], Any]) -> None:
    build = ref.forged(tmp_path, forge(ref.doc))
    r = cli("report", str(build))
    one_line(r, "error", f"{CACHE}:", f"run 'ccopt-meson flush {build}' and configure again")
    t = targets(build / CACHE, build)
    assert t.returncode == 1 and t.stdout == ""
    one_line(t, "error", f"{CACHE}:")
    d = cli("detect", "--cc-arg", INSTANT, "--json", "--build-dir", str(build))
    assert d.returncode == 0
    one_line(d, "warning", "ignoring the feature cache: ", "; detecting again")
    assert json.loads(d.stdout)["cache"]["hit"] is False
    (build / CACHE).write_text(json.dumps(forge(ref.doc)))
    c = configure(build)
    one_line(c, "warning", "ignoring the feature cache: ")
    ref.check_unchanged(build, c)


def _string_leaves(node: Any, path: str = "") -> Iterator[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _string_leaves(v, f"{path}.{k}" if path else k)
    elif isinstance(node, str) or node is None:
        yield path


def test_fplugin_in_any_field_never_reaches_the_build(tmp_path: Path, ref: Reference) -> None:
    """``-fplugin=...`` in every string field of the file, one at a time, and added to every list, with the
    key kept: configure (a hit or a miss) and targets print and write exactly what a clean run does."""
    forgeries = {p: set_path(ref.doc, p, EVIL) for p in _string_leaves(ref.doc)}
    forgeries |= {f"{p}[]": set_path(ref.doc, p, [*ref.doc[p.split('.')[0]][p.split('.')[1]], EVIL])
                  for p in ("request.command", "request.args", "request.explain", "probed.detected")}
    forgeries["outcome-reason"] = set_path(ref.doc, "probed.outcomes", {
        **ref.doc["probed"]["outcomes"], "AVX2": [False, EVIL]})
    for i, (name, doc) in enumerate(forgeries.items()):
        build = ref.forged(tmp_path / str(i), doc)
        c = configure(build)
        assert EVIL not in json.dumps(build_lines(c.stdout)) or name == "probed.compiler_version", name
        if name == "outcome-reason":  # a verdict, not an instruction: AVX2 is gone, and nothing else changes
            assert "AVX2" not in build_lines(c.stdout)["dispatch_names"].split()
            continue
        shown = ""
        if name == "probed.compiler_version":  # shown as the compiler's version (Meson's summary), never an arg
            assert build_lines(c.stdout)["compiler"] == f"gcc-{EVIL}"
            shown = "compiler"
        ref.check_unchanged(build, c, shown)
        headers = ("ccopt_config.h", "ccopt_kernel.h", "kern.dispatch.h")
        assert not any(EVIL in (build / h).read_text() for h in headers), name


def test_a_request_edited_behind_a_copied_key_does_not_survive(tmp_path: Path, ref: Reference) -> None:
    """The key is a plain digest, so it can be copied; 'targets' reads the request back from the file
    (a user -march there would join the flags on ARM), so a hit writes the caller's own request."""
    doc = set_path(ref.doc, "request.args", ["-march=-fplugin=/tmp/evil.so+x"])
    build = ref.forged(tmp_path, doc)
    c = configure(build)
    assert build_lines(c.stdout) == ref.lines and "cache_hit\ttrue" in c.stdout
    assert json.loads((build / CACHE).read_text())["request"]["args"] == []
    ref.check_unchanged(build, c)


# --------------------------------------------------------------------------- odd files in the cache's place


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "too-big"])
def test_a_cache_that_is_not_a_small_regular_file_never_hangs(tmp_path: Path, ref: Reference, kind: str) -> None:
    build = tmp_path / "build"
    (build / "meson-private").mkdir(parents=True)
    (build / "meson-private" / "coredata.dat").write_bytes(b"")  # a Meson build dir: report looks inside
    path = build / CACHE
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_bytes(b" " * (fsio.LIMITS.cache + (1 << 20)))
    r = cli("report", str(build))  # each command has cli()'s timeout: a hang fails there
    one_line(r, "error", CACHE)
    t = targets(path, build)
    one_line(t, "error", CACHE)
    f = cli("flush", str(build))  # not ours: left alone, without blocking on the FIFO
    assert f.returncode == 0 and f.stdout == f"flushed 0 cache file(s) in {build}\n"
    assert path.is_symlink() or not path.is_file() or kind == "too-big"
    d = cli("detect", "--flush", "--cc-arg", INSTANT, "--build-dir", str(tmp_path / "other"))
    assert d.returncode == 0
    c = configure(build)
    one_line(c, "warning", "ignoring the feature cache: ")
    ref.check_unchanged(build, c)
    assert path.is_file() and not path.is_symlink()  # replaced by a real cache file


def test_read_bounded_refuses_devices_fifos_and_big_files(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    cases = ((Path("/dev/zero"), "is a device, not a regular file"), (fifo, "is a FIFO, not a regular file"),
             (tmp_path, "is a directory, not a regular file"), (big, "is 101 bytes, more than the 100 this tool reads"))
    for path, message in cases:
        with pytest.raises(InputError, match=message):
            fsio.read_bounded(path, 100, "thing")
    with pytest.raises(FileNotFoundError):
        fsio.read_bounded(tmp_path / "missing", 100, "thing")
    assert fsio.read_bounded(big, 101, "thing") == b"x" * 101


# --------------------------------------------------------------------------- report and flush


def test_report_ignores_a_stray_backup_file(tmp_path: Path, ref: Reference) -> None:
    build = ref.forged(tmp_path, ref.doc)
    (build / "ccopt-features-backup.json").write_text(json.dumps(ref.doc))
    (build / "ccopt-features.json.bak").write_text("{}")
    r = cli("report", str(build))
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.count(f"hit ({build / CACHE})") == 1 and "backup" not in r.stdout
    j = cli("report", str(build), "--json")
    assert isinstance(json.loads(j.stdout), dict)  # one file: one document, not a list


@pytest.mark.parametrize("where", [".", "~"])
def test_flush_refuses_a_directory_that_is_no_build_dir(tmp_path: Path, ref: Reference, where: str) -> None:
    home = tmp_path / "home"
    stray = home / "project" / CACHE
    stray.parent.mkdir(parents=True)
    stray.write_text(json.dumps(ref.doc))
    target = "." if where == "." else str(home)
    r = cli("flush", target, cwd=home, env={"HOME": str(home)})
    one_line(r, "error", "is not a Meson build directory and holds no ccopt feature cache")
    assert stray.exists()


def test_flush_deletes_only_the_files_it_wrote(tmp_path: Path, ref: Reference) -> None:
    build = ref.forged(tmp_path, ref.doc)
    (build / "meson-private").mkdir()
    (build / "meson-private" / "coredata.dat").write_bytes(b"")
    (build / "sub").mkdir()
    (build / "sub" / CACHE).write_text(json.dumps(ref.doc))
    theirs = build / "other" / CACHE
    theirs.parent.mkdir()
    theirs.write_text('{"my": "own data"}\n')
    backup = build / "ccopt-features-backup.json"
    backup.write_text(json.dumps(ref.doc))
    r = cli("flush", str(build))
    assert r.returncode == 0 and r.stdout == f"flushed 2 cache file(s) in {build}\n"
    assert not (build / CACHE).exists() and not (build / "sub" / CACHE).exists()
    assert theirs.read_text() == '{"my": "own data"}\n' and backup.exists()


def _deep(root: Path) -> Path:
    """A directory under ``root`` whose path is longer than PATH_MAX (4096), made with relative steps."""
    here = os.getcwd()
    os.chdir(root)
    try:
        for _ in range(25):
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        Path(CACHE).write_text("{}")
    finally:
        os.chdir(here)
    return root


def test_a_tree_deeper_than_path_max_is_no_traceback(tmp_path: Path, ref: Reference) -> None:
    build = ref.forged(tmp_path, ref.doc)
    (build / "meson-private").mkdir()
    (build / "meson-private" / "coredata.dat").write_bytes(b"")
    _deep(build)
    r = cli("report", str(build))
    assert r.returncode == 0 and "Traceback" not in r.stderr and r.stdout.count("Platform") == 1
    f = cli("flush", str(build))
    assert f.returncode == 0 and f.stdout == f"flushed 1 cache file(s) in {build}\n" and f.stderr == ""


# --------------------------------------------------------------------------- names that are not UTF-8


def test_a_build_dir_that_is_not_utf8(tmp_path: Path) -> None:
    """detect works; report and flush print the name escaped (never a UnicodeEncodeError, even with a
    strict stdout); configure, whose lines meson.build reads, refuses it in one line."""
    build = os.fsencode(tmp_path) + b"/b\xfe"
    strict = {"PYTHONIOENCODING": "utf-8"}
    for _ in range(2):  # the second run is a hit, and names the file
        d = cli("detect", "--cc-arg", INSTANT, "--build-dir", os.fsdecode(build), env=strict)
    assert d.returncode == 0 and d.stderr == "" and "b\\udcfe" in d.stdout
    r = cli("report", os.fsdecode(build), env=strict)
    assert r.returncode == 0 and r.stderr == "" and "b\\udcfe" in r.stdout
    f = cli("configure", "--output-dir", os.fsdecode(build), f"--cc-arg={INSTANT}", env=strict)
    one_line(f, "error", "is not valid UTF-8; rename it")
    f = cli("flush", os.fsdecode(build), env=strict)
    assert f.returncode == 0 and f.stderr == "" and f.stdout.endswith("b\\udcfe\n")


def test_fifos_in_place_of_generated_headers_never_hang(tmp_path: Path, ref: Reference) -> None:
    build = ref.forged(tmp_path, ref.doc)
    os.mkfifo(build / "kern.dispatch.h")
    t = targets(build / CACHE, build)
    one_line(t, "error", "kern.dispatch.h exists and was not generated by ccopt-meson")
    (build / "ccopt_config.h").unlink()
    os.mkfifo(build / "ccopt_config.h")
    c = configure(build)  # ccopt_config.h is the helper's own name in its own build dir: replaced
    assert c.returncode == 0 and (build / "ccopt_config.h").read_text() == ref.config


# --------------------------------------------------------------------------- fuzz: the cache reader


def _valid_document() -> dict[str, Any]:
    """A cache document as the helper writes it (FakeCompiler: some features fail, with reasons)."""
    det = detect(Request(command=("fakecc",), dispatch="max -xop"), runner=FakeCompiler(reject_flags=["-mavx512fp16"]))
    probed = Probed(det.arch, det.compiler.id, det.compiler.version, det.outcomes, ("SSE", "SSE2"), (),
                    ("-march=armv8.2-a",))
    return json.loads(cache._encode(cache.Stored("a" * 64, "b" * 64, det.request, probed)))  # type: ignore[no-any-return]


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*path, i))


def _mutate(doc: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for p in path[:-1]:
        node = node[p]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


VALID = _valid_document()
PATHS = list(_paths(VALID))
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
                   st.sampled_from([EVIL, "AVX2", "x86_64", "aarch64", "gcc", "msvc", "-march=native", "min", "max",
                                    "a" * 64, "\n", "\x1b[2J", "\udcff"]),
                   st.sampled_from([[True, ""], [False, EVIL], [], {}, [EVIL], {"AVX2": [True, ""]}]))
JSON_VALUES = st.recursive(LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                           max_leaves=8)
MUTATION = st.tuples(st.sampled_from(PATHS), JSON_VALUES, st.booleans())


def _check_parse(raw: bytes) -> None:
    try:
        stored = cache.parse(raw)
    except CacheError as exc:
        assert len(str(exc).splitlines()) == 1
        return
    try:
        det = pipeline.document(stored.request, stored.probed, hit=True)
    except CcoptError as exc:  # e.g. a stored expression that is no longer valid: one line, never a traceback
        assert len(str(exc).splitlines()) == 1
        return
    if det.table is None:
        assert det.baseline == det.dispatch == ()
        return
    known = {f for feat in det.table.features.values() for f in feat.flags}
    args = [*det.baseline_args(), *(a for n in det.dispatch for a in dispatch.make_target(det, [n]).args)]
    for a in args:
        assert "fplugin" not in a and "\n" not in a
        assert a in known or a.startswith(("-DCCOPT_", "/DCCOPT_", "-march=", "-mcpu=")), a


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MUTATION, min_size=1, max_size=3))
def test_fuzz_mutated_cache_documents_parse_or_are_a_clean_miss(mutations: list[tuple[Any, Any, bool]]) -> None:
    doc: Any = VALID
    for path, value, delete in mutations:
        if not any(path == p[:len(path)] for p in _paths(doc)):
            continue  # an earlier mutation removed this path
        doc = _mutate(doc, path, value, delete and bool(path))
    _check_parse(json.dumps(doc).encode())


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.binary(max_size=256), st.text(max_size=256).map(str.encode),
                 JSON_VALUES.map(lambda v: json.dumps(v).encode())))
def test_fuzz_arbitrary_cache_bytes_are_a_clean_miss(raw: bytes) -> None:
    _check_parse(raw)


# --------------------------------------------------------------------------- the request stored whole

def _built_with(tmp_path: Path, features: Path) -> tuple[Path, Path]:
    """A build dir whose cache was made with a copy of ``features`` (returned, to be edited)."""
    from ccopt_meson import project

    copy_ = tmp_path / "features.json"
    copy_.write_text(features.read_text())
    build = tmp_path / "build"
    detect(Request(command=("fakecc",), dispatch="max -xop -fma4", project=project.load(copy_)), build_dir=build,
           runner=FakeCompiler())
    return build, copy_


def test_the_cache_records_the_features_file_and_readers_use_it(tmp_path: Path) -> None:
    """'report BUILD' without --features-file showed 31 targets and the built-in AVX2 flags for a build made
    with numpy's file (19 targets, numpy's flags): the cache now records the file (path and digest)."""
    build, features = _built_with(tmp_path, NUMPY22)
    doc = json.loads((build / CACHE).read_text())
    assert doc["request"]["project"]["path"] == os.path.realpath(features)
    det = pipeline.read(build)
    assert det.request.project is not None and det.request.project.path == os.path.realpath(features)
    assert len(det.table.features) == 22 and "AVX2_ISA" not in det.dispatch  # numpy's names, not the stock tables'
    r = cli("report", str(build), "--json")
    assert r.returncode == 0, r.stderr
    assert set(json.loads(r.stdout)["dispatch"]["names"]) == set(det.dispatch)


def test_a_features_file_changed_since_configure_is_refused_by_its_readers(tmp_path: Path) -> None:
    build, features = _built_with(tmp_path, NUMPY22)
    features.write_text(features.read_text() + "\n")  # the same features, another digest
    with pytest.raises(InputError, match=r"features file '.*features.json' or one of its probes changed since "
                                         "this build was configured; configure the build again"):
        pipeline.read(build)
    one_error(cli("report", str(build)), "changed since this build was configured")
    features.unlink()
    one_error(cli("report", str(build)), "the features file this build was configured with cannot be read")


def test_another_features_file_than_the_builds_is_refused(tmp_path: Path) -> None:
    from ccopt_meson import project

    build, _ = _built_with(tmp_path, NUMPY22)
    other = project.load(ROOT / "tests" / "projects" / "project_features" / "features" / "ccopt.json")
    with pytest.raises(InputError, match="is not the features file this build was configured with"):
        pipeline.read(build, project=other)
    plain = tmp_path / "plain"
    detect(REQ, build_dir=plain, runner=FakeCompiler())
    with pytest.raises(InputError, match=r"is not the features file this build was configured with \(none\)"):
        pipeline.read(plain, project=other)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("compiler_version", "12.2\n", "--compiler-version: '12.2\\n' is not at most 80 printable ASCII characters"),
    ("compiler_id", "", "--compiler-id: '' is not 1 to 40 letters"),
    ("args", ("-O2", "x" * 70000), "a compile argument (args[1]): 'xxxx"),
    ("args", ("-DA=\x01",), "a compile argument (args[0]): '-DA=\\x01' is not"),
    ("dispatch", "avx2 " * 14000, "cpu-dispatch: 'avx2 avx2 avx2 avx2 avx2 avx2 avx2 avx2 ' is not at most 65536"),
])
def test_a_value_the_cache_cannot_hold_is_refused_before_it_is_answered(
        tmp_path: Path, field: str, value: Any, message: str) -> None:
    """It was answered, then written to a cache its own reader refused: every later run probed again and
    'targets' said 'run flush', which could not fix it."""
    runner = FakeCompiler()
    with pytest.raises(InputError) as exc:
        detect(REQ._replace(**{field: value}), build_dir=tmp_path, runner=runner)
    assert message in str(exc.value) and "\n" not in str(exc.value)
    assert not (tmp_path / CACHE).exists()


@pytest.mark.parametrize("expression", ["min\tavx2", "min\navx2\r\n", "avx2 " * 2000])
def test_an_expression_the_grammar_takes_is_one_the_cache_holds(tmp_path: Path, expression: str) -> None:
    detect(REQ._replace(dispatch=expression), build_dir=tmp_path, runner=FakeCompiler())
    assert cache.load(tmp_path / CACHE) is not None
    second = detect(REQ._replace(dispatch=expression), build_dir=tmp_path, runner=FakeCompiler())
    assert second.cache_hit


def test_a_temporary_file_a_killed_write_left_is_removed_by_the_next_run_and_flush(tmp_path: Path) -> None:
    """A kill at rename() left a .tmp that no later run or flush removed."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    detect(REQ, build_dir=tmp_path, runner=FakeCompiler())
    old = time.time() - 3600
    left = tmp_path / f".{CACHE}.{dead.pid}.0.tmp"
    left.write_text('{"generator": "' + fsio.MARK + '", "sch')
    theirs = tmp_path / f".notes.txt.{dead.pid}.0.tmp"  # our name pattern, not our content
    theirs.write_text("a user's file\n")
    live = tmp_path / f".{CACHE}.{os.getppid()}.0.tmp"  # a writer that is still running
    live.write_text(fsio.MARK)
    for p in (left, theirs, live):
        os.utime(p, (old, old))
    assert detect(REQ, build_dir=tmp_path, runner=FakeCompiler()).cache_hit
    assert not left.exists() and theirs.exists() and live.exists()
    left.write_text("")
    os.utime(left, (old, old))
    flush(tmp_path)
    assert not left.exists() and theirs.exists()


def test_another_assembler_first_on_path_probes_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 'as' gcc finds on PATH was not in the key: a stale hit kept 0 AVX512F targets after the PATH
    was fixed (or the other way round)."""
    build = tmp_path / "build"
    detect(REQ, build_dir=build, runner=FakeCompiler())
    assert detect(REQ, build_dir=build, runner=FakeCompiler()).cache_hit
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "as").write_text("#!/bin/sh\nexec /usr/bin/as \"$@\"\n")
    (bin_dir / "as").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert not detect(REQ, build_dir=build, runner=FakeCompiler()).cache_hit
    assert detect(REQ, build_dir=build, runner=FakeCompiler()).cache_hit


def test_a_probe_edited_after_configure_is_named_with_the_command_that_configures_again(tmp_path: Path) -> None:
    """A probe edited after configure: 'targets' said "--features-file 'F' is not the features file this build was
    configured with (F)", the same path twice, and 'report' advised a reconfigure "ninja does", which ninja does
    not do for a probe (meson.build reads the features file only).  Both now say what changed and the command
    that configures that build again, with the Meson build dir a subproject's cache is under."""
    import shutil

    from ccopt_meson import project

    shutil.copytree(ROOT / "tests" / "projects" / "project_features" / "features", tmp_path / "features")
    features = tmp_path / "features" / "ccopt.json"
    build = tmp_path / "build"
    (build / "meson-private").mkdir(parents=True)
    (build / "meson-private" / "coredata.dat").write_bytes(b"")  # what makes it a Meson build dir
    sub = build / "subprojects" / "ccopt-meson"
    detect(Request(command=("fakecc",), project=project.load(features)), build_dir=sub, runner=FakeCompiler())
    assert cli("report", str(build)).returncode == 0
    with open(tmp_path / "features" / "adx.c", "a") as fh:
        fh.write("/* edited after configure */\n")
    expected = (f"features file '{features}' or one of its probes changed since this build was configured; configure "
                f"the build again (the probes run again): 'ninja -C {build} reconfigure' (ninja alone does it when "
                "the features file changes, not when a probe does), or 'meson setup --reconfigure "
                f"{build}' from the source directory, which also flushes the feature cache")
    source = tmp_path / "k.dispatch.c"
    source.write_text("/*@targets baseline adx */\n")
    for r in (cli("targets", str(source), "--cache-file", str(sub / CACHE), "--features-file", str(features),
                  "--output-dir", str(tmp_path)),
              cli("targets", str(source), "--cache-file", str(sub / CACHE), "--output-dir", str(tmp_path)),
              cli("report", str(build)), cli("explain", "adx", "--build-dir", str(build))):
        assert one_error(r) == f"ccopt-meson: error: {expected}"
    detect(Request(command=("fakecc",), project=project.load(features)), build_dir=sub, runner=FakeCompiler())
    assert cli("report", str(build)).returncode == 0  # what a reconfigure does: a miss, probed again


def test_the_request_has_one_list_of_fields() -> None:
    """The cache stores, checks and reads every field of ``Request`` from ``Request._fields``: a new field cannot
    be forgotten by one of them (the fields were listed in six places)."""
    from ccopt_meson.records import REQUEST_OPTIONS, Macros

    stored = schema_request_properties()
    assert set(stored) == set(Request._fields) and set(REQUEST_OPTIONS) <= set(Request._fields)
    r = Request(command=("cc", "-m64"), args=("-O2",), baseline="sse41", dispatch="avx2", lang="cpp",
                compiler_id="clang", compiler_version="14.0.6", cpu_family="x86_64", cross=True,
                disable_optimization=True, debug_build=True, explain=("AVX2",), macros=Macros("NPY_", "numpy"),
                baseline_detect="enabled")
    assert cache._request(json.loads(json.dumps(cache._request_doc(r))), None) == r


def schema_request_properties() -> dict[str, Any]:
    from ccopt_meson import schema

    return dict(schema.schema_file("cache.schema.json")["properties"]["request"]["properties"])
