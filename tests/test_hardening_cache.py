"""The cache and the build dir as untrusted data (issue 11): forged content, odd files, flush and report.

The cache stores verdicts, never instructions: a forged file is a miss with one warning line
(``detect``, ``configure``) or one error line (``report``, ``targets``), and no forgery puts a
flag or a line of code into what the helper prints for meson.build or into a generated header.
Everything runs the real CLI with the ``instant`` fake compiler (an x86_64 "gcc" that accepts
every compile), so each case costs one Python start.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccopt_meson import Request, cache, dispatch, fsio, pipeline
from ccopt_meson.errors import CacheError, CcoptError, InputError
from ccopt_meson.pipeline import detect
from ccopt_meson.records import Probed

from .conftest import ROOT, FakeCompiler

INSTANT = str(ROOT / "tests" / "fakecc" / "instant")
CACHE = "ccopt-features.json"
EVIL = "-fplugin=/tmp/evil.so"
SOURCE = "/*@targets $maxopt baseline avx2 (fma3 avx2) avx512_skx sse41 */\n"


# --------------------------------------------------------------------------- helpers


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CCOPT_", "FAKECC_", "MESON_"))}
    full["PYTHONPATH"] = str(ROOT)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "ccopt_meson", *args], capture_output=True, text=True,
                          env=full, timeout=120, cwd=cwd or ROOT)


def configure(out: Path) -> subprocess.CompletedProcess[str]:
    """What meson.build runs, with the instant compiler."""
    return cli("configure", "--lang", "c", "--output-dir", str(out), "--compiler-id", "gcc", "--cpu-family",
               "x86_64", "--cross", "no", "--write-config", f"--cc-arg={INSTANT}")


def targets(feature: Path, out: Path) -> subprocess.CompletedProcess[str]:
    src = out / "kern.dispatch.c"
    src.write_text(SOURCE)
    return cli("targets", str(src), "--feature-file", str(feature), "--output-dir", str(out))


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
    return {k: v for k, v in lines.items() if k not in ("cache_hit", "probes", "feature_file")}


class Reference:
    """One clean configure + targets run: what every forgery is compared to."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "ref"
        r = configure(self.dir)
        assert r.returncode == 0, r.stderr
        self.lines = build_lines(r.stdout)
        self.config = (self.dir / "ccopt_config.h").read_text()
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
        (build / CACHE).write_text(json.dumps(doc) if not isinstance(doc, bytes) else doc.decode())
        return build

    def check_unchanged(self, build: Path, configured: subprocess.CompletedProcess[str], shown: str = "") -> None:
        """configure and targets print and write what the reference did (``shown``: a line for people only)."""
        assert configured.returncode == 0, configured.stderr
        lines = build_lines(configured.stdout)
        assert {k: v for k, v in lines.items() if k != shown} == {k: v for k, v in self.lines.items() if k != shown}
        assert (build / "ccopt_config.h").read_text() == self.config
        t = targets(build / CACHE, build)
        assert t.returncode == 0, t.stderr
        assert t.stdout.replace(str(build), "<dir>") == self.targets
        assert (build / "kern.dispatch.h").read_text() == self.header


@pytest.fixture(scope="module")
def ref(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return Reference(tmp_path_factory.mktemp("cache"))


# --------------------------------------------------------------------------- forged content


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    node = doc
    for p in parents:
        node = node[p]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return doc


# Wrong types and shapes behind a valid-looking file (the key kept): every one fails the schema.
WRONG_SHAPES = {
    "baseline.names=5": lambda d: {**d, "baseline": {"names": 5}},
    "features=[]": lambda d: {**d, "features": []},
    "compiler-missing": lambda d: _set(d, "probed.compiler_id", KeyError),
    "request=null": lambda d: _set(d, "request", None),
    "probed=null": lambda d: _set(d, "probed", None),
    "outcomes=[]": lambda d: _set(d, "probed.outcomes", []),
    "verdict-not-a-pair": lambda d: _set(d, "probed.outcomes", {"AVX2": [True]}),
    "verdict-of-strings": lambda d: _set(d, "probed.outcomes", {"AVX2": ["yes", ""]}),
    "arch=5": lambda d: _set(d, "probed.arch", 5),
    "unknown-arch": lambda d: _set(d, "probed.arch", "sparc"),
    "unknown-feature": lambda d: _set(d, "probed.detected", ["NOSUCH"]),
    "args-a-string": lambda d: _set(d, "request.args", EVIL),
    "command-empty": lambda d: _set(d, "request.command", []),
    "key=5": lambda d: _set(d, "key", 5),
    "schema-as-text": lambda d: _set(d, "schema_version", "2"),
    "headers-entry": lambda d: _set(d, "probed.headers", ['immintrin.h>\n#error pwned\n#include <x.h']),
    "flags-entry": lambda d: _set(d, "probed.baseline_args", [EVIL]),
    "tab-in-reason": lambda d: _set(d, "probed.outcomes", {"AVX2": [False, "a\nb"]}),
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
    forgeries = {p: _set(ref.doc, p, EVIL) for p in _string_leaves(ref.doc)}
    forgeries |= {f"{p}[]": _set(ref.doc, p, [*ref.doc[p.split('.')[0]][p.split('.')[1]], EVIL])
                  for p in ("request.command", "request.args", "request.explain", "probed.detected")}
    forgeries["outcome-reason"] = _set(ref.doc, "probed.outcomes", {
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
        assert EVIL not in (build / "ccopt_config.h").read_text() + (build / "kern.dispatch.h").read_text()


def test_a_request_edited_behind_a_copied_key_does_not_survive(tmp_path: Path, ref: Reference) -> None:
    """The key is a plain digest, so it can be copied; 'targets' reads the request back from the file
    (a user -march there would join the flags on ARM), so a hit writes the caller's own request."""
    doc = _set(ref.doc, "request.args", ["-march=-fplugin=/tmp/evil.so+x"])
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
        path.write_bytes(b" " * (5 << 20))
    start = time.monotonic()
    r = cli("report", str(build))
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
    assert time.monotonic() - start < 60


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
    probed = Probed(det.arch, det.compiler.id, det.compiler.version, det.outcomes, ("SSE", "SSE2"), ())
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
