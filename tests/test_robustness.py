"""Robustness (issue 6): bad input, broken caches, broken compilers, races, fuzzing, determinism.

Everything a user can get wrong, or that can go wrong around the helper, must end
in either a correct answer or exactly one ``ccopt-meson: error: ...`` line (exit
1) that names the culprit: never a traceback, never a wrong answer.  Most cases
run the real CLI in a subprocess; the compilers of section 4 are real
executables in ``tests/fakecc/``.  ``docs/robustness.md`` lists every case.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccopt_meson import Request, cache, host, pipeline, tables
from ccopt_meson.dispatch import parse_file, parse_text
from ccopt_meson.dispatch import render_statement as render
from ccopt_meson.errors import CcoptError, CompilerError, InputError, TableError
from ccopt_meson.resolve import SPECIAL, tokenize
from ccopt_meson.resolve import render_tokens as render_expr

from .conftest import ROOT, FakeCompiler, detect_doc, need

FAKECC = Path(__file__).resolve().parent / "fakecc"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
ROOT_REASON = "runs as root: permission bits do not stop root (CI runs as root)"
CACHE = "ccopt-features.json"


# --------------------------------------------------------------------------- helpers


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m ccopt_meson ARGS`` in a clean environment (no CCOPT_* leaking in)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CCOPT_", "FAKECC_", "MESON_"))}
    full["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "ccopt_meson", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=full, timeout=timeout)


def one_error(r: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit 1 and exactly one stderr line, ``ccopt-meson: error: ...``, holding every fragment."""
    assert r.returncode == 1, f"exit {r.returncode}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and r.stderr.endswith("\n"), f"not one line: {r.stderr!r}"
    assert lines[0].startswith("ccopt-meson: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    assert len(lines[0]) < 600, "messages quote long input shortened"
    return lines[0]


def kv(stdout: str) -> dict[str, list[str]]:
    """The ``key<TAB>values`` lines ``configure`` prints for meson.build."""
    return {k: v.split() for k, v in (line.split("\t", 1) for line in stdout.splitlines())}


def x86_gcc() -> str:
    if host.machine_name() != "x86_64":
        pytest.skip("the expected feature names are those of an x86_64 host")
    return need("gcc")


def fake(name: str) -> str:
    path = FAKECC / name
    assert path.is_file(), path
    return str(path)


def configure_args(out: Path, cc: str, *extra: str) -> list[str]:
    """The arguments meson.build passes (option values as separate words, compiler via --cc-arg=)."""
    return ["configure", "--lang", "c", "--output-dir", str(out), "--compiler-id", "gcc",
            "--cpu-family", "x86_64", "--cross", "no", *extra, f"--cc-arg={cc}"]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


# =========================================================================== 1. option expressions

EXPRESSIONS = [
    pytest.param("--baseline", "avx3", ["cpu-baseline: unknown feature 'avx3' (did you mean 'AVX'",
                                        "; 'ccopt-meson features' lists them"], id="unknown-name"),
    pytest.param("--dispatch", "max avx512_skxx", ["cpu-dispatch: unknown feature 'avx512_skxx' (did you mean "
                                                   "'AVX512_SKX'"], id="unknown-name-did-you-mean"),
    # an empty value, separators only, a lone '+' or '-': "nothing", like numpy (tests/test_consumer.py)
    pytest.param("--baseline", "min +", ["cpu-baseline: '+' at the end"], id="trailing-plus"),
    pytest.param("--dispatch", "max - -xop", ["cpu-dispatch: '-' must be followed by a feature name, got '-'"],
                 id="double-minus"),
    pytest.param("--dispatch", "max -+xop", ["cpu-dispatch: '-' must be followed by a feature name, got '+'"],
                 id="minus-plus"),
    pytest.param("--baseline", "-avx3", ["cpu-baseline: unknown feature 'avx3'"], id="leading-dash-word"),
    pytest.param("--dispatch", "$maxopt", ["cpu-dispatch: invalid token '$maxopt'; expected feature names, min, max"],
                 id="policy-syntax"),
    pytest.param("--baseline", "avx\u00e9", ["cpu-baseline: invalid token 'avx\u00e9'"], id="latin-1-letter"),
    pytest.param("--baseline", "\uff21\uff36\uff38\uff12", ["cpu-baseline: invalid token '\uff21\uff36\uff38\uff12'"],
                 id="fullwidth"),
    pytest.param("--dispatch", "avx2 \U0001f680", ["cpu-dispatch: invalid token '\U0001f680'"], id="emoji"),
    pytest.param("--dispatch", "avx2\u200b", ["cpu-dispatch: invalid token 'avx2\\u200b'"], id="zero-width-space"),
    pytest.param("--dispatch", "avx2\u2028avx3", ["cpu-dispatch: unknown feature 'avx3'"], id="unicode-line-separator"),
    pytest.param("--baseline", "x" * 10240, ["cpu-baseline: unknown feature '" + "x" * 37 + "...'"], id="10kB-name"),
    pytest.param("--dispatch", "avx2 " * 2048 + "avx3", ["cpu-dispatch: unknown feature 'avx3'"],
                 id="10kB-valid-then-bad"),
    pytest.param("--baseline", "\u00e9" * 5120, ["cpu-baseline: invalid token '" + "\u00e9" * 37 + "...'"],
                 id="10kB-unicode"),
]


# The configure subcommand (what meson.build runs) goes through the same code: a representative subset.
THROUGH_CONFIGURE = ("unknown-name", "empty", "separators-with-line-breaks", "minus", "leading-dash-word", "emoji",
                     "10kB-valid-then-bad")


@pytest.mark.parametrize("option,value,fragments", EXPRESSIONS)
def test_bad_expression_is_one_error_line(option: str, value: str, fragments: list[str]) -> None:
    """The compiler is never reached: expressions are checked before anything runs."""
    one_error(cli("detect", "--cc", "gcc", option, value), *fragments)


@pytest.mark.parametrize("option,value,fragments", [p for p in EXPRESSIONS if p.id in THROUGH_CONFIGURE])
def test_bad_expression_through_configure(tmp_path: Path, option: str, value: str, fragments: list[str]) -> None:
    one_error(cli(*configure_args(tmp_path, "gcc", option, value, "--write-config")), *fragments)
    assert list(tmp_path.iterdir()) == []


def test_bad_explain_name_is_one_error_line() -> None:
    one_error(cli("explain", "avx3", "--cc", "gcc"), "explain: unknown feature 'avx3' (did you mean 'AVX'")


def test_undecodable_argument_is_quoted_escaped() -> None:
    """A byte that is not UTF-8 (surrogate-escaped by Python) is shown escaped, on one line."""
    one_error(cli("detect", "--cc", "gcc", "--baseline", os.fsdecode(b"avx\xff")),
              "cpu-baseline: invalid token 'avx\\udcff'")


def test_foreign_names_are_ignored_with_a_note(tmp_path: Path) -> None:
    cc = x86_gcc()
    r = cli("detect", "--cc", cc, "--baseline", "min neon", "--dispatch", "max vsx2 asimd")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "cpu-baseline: ignored NEON: not features of x86_64" in r.stdout
    assert "cpu-dispatch: ignored VSX2, ASIMD: not features of x86_64" in r.stdout
    r = cli(*configure_args(tmp_path, cc, "--baseline", "min neon", "--dispatch", "max vsx2 asimd"))
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == ["ccopt-meson: note: cpu-baseline: ignored NEON: not features of x86_64",
                                     "ccopt-meson: note: cpu-dispatch: ignored VSX2, ASIMD: not features of x86_64"]
    out = kv(r.stdout)
    assert out["baseline_names"] == ["SSE", "SSE2", "SSE3"] and "AVX2" in out["dispatch_names"]
    assert not {"VSX2", "ASIMD", "NEON"} & set(out["dispatch_names"] + out["baseline_names"])


@pytest.mark.parametrize("option,name", [("--baseline", "cpu-baseline"), ("--dispatch", "cpu-dispatch")])
def test_native_when_cross_compiling(tmp_path: Path, option: str, name: str) -> None:
    cc = need("aarch64-linux-gnu-gcc")
    expected = (f"{name}: 'native' cannot be used when cross-compiling", "aarch64 target's",
                "name the target's features instead")
    one_error(cli("detect", "--cc", cc, option, "max native" if name == "cpu-dispatch" else "native"), *expected)
    args = configure_args(tmp_path, cc, option, "native")
    args[args.index("--cpu-family") + 1], args[args.index("--cross") + 1] = "aarch64", "yes"
    one_error(cli(*args), *expected)


@pytest.mark.parametrize("option,value,name", [("--baseline", "avx2", "cpu-baseline"),
                                               ("--dispatch", "avx512f, AVX2", "cpu-dispatch")])
def test_disable_optimization_with_explicit_targets(tmp_path: Path, option: str, value: str, name: str) -> None:
    expected = (f"{name}: '{value.replace(',', '').lower()}' conflicts with disable-optimization=true",
                "unset one of the two")
    one_error(cli("detect", "--cc", "gcc", "--disable-optimization", option, value), *expected)
    one_error(cli(*configure_args(tmp_path, "gcc", option, value, "--disable-optimization")), *expected)


def test_disable_optimization_with_defaults_or_none_is_fine(tmp_path: Path) -> None:
    cc = x86_gcc()
    r = cli(*configure_args(tmp_path, cc, "--baseline", "none", "--dispatch", "max", "--disable-optimization",
                            "--write-config"))
    assert r.returncode == 0, r.stderr
    out = kv(r.stdout)
    assert out["baseline_names"] == [] and out["dispatch_names"] == [] and out["baseline_args"] == []
    assert "#define CCOPT_DISABLE_OPTIMIZATION 1" in (tmp_path / "ccopt_config.h").read_text()


def _meson_project(tmp_path: Path) -> Path:
    src = tmp_path / "tiny"
    sub = src / "subprojects" / "ccopt-meson"
    sub.mkdir(parents=True)
    for part in ("meson.build", "meson_options.txt", "tools", "ccopt_meson"):
        if (ROOT / part).is_dir():
            shutil.copytree(ROOT / part, sub / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / part, sub / part)
    (src / "meson.build").write_text("project('tiny', 'c')\nccopt = subproject('ccopt-meson')\n")
    return src


@pytest.mark.slow
def test_meson_shows_the_error_line(tmp_path: Path) -> None:
    need("gcc")
    src = _meson_project(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCOPT_")}
    r = subprocess.run([sys.executable, "-m", "mesonbuild.mesonmain", "setup", str(tmp_path / "build"),
                        "-Dccopt-meson:cpu-baseline=avx3"], cwd=src, env=env, capture_output=True, text=True)
    line = ("ccopt-meson: error: cpu-baseline: unknown feature 'avx3' (did you mean 'AVX' or 'VSX3' or 'AVX2'?); "
            "'ccopt-meson features' lists them")
    assert r.returncode != 0
    output = r.stdout + r.stderr
    assert "Traceback" not in output
    errors = [ln for ln in output.splitlines() if "ERROR:" in ln]
    assert len(errors) == 1 and errors[0].endswith(line), output[-3000:]


# =========================================================================== 2. dispatch sources


@pytest.fixture(scope="module")
def feature_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real feature file, written by an in-process detection with the scripted FakeCompiler."""
    build = tmp_path_factory.mktemp("features")
    detect_doc(Request(command=("fakecc",), dispatch="max -xop -fma4"), build_dir=build, runner=FakeCompiler())
    return build / CACHE


def run_targets(source: Path, feature: Path, out: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    # from the source's directory, as Meson runs it: messages name the source relative to it
    kw.setdefault("cwd", source.parent if source.parent.is_dir() else None)
    return cli("targets", str(source), "--feature-file", str(feature), "--output-dir", str(out), **kw)


BAD_TARGETS = [
    pytest.param("$maxopt (avx2 fma3 avx512f", "'(' is not closed in @targets", id="unbalanced-open"),
    pytest.param("avx2 fma3) avx512f", "')' without a matching '('", id="unbalanced-close"),
    pytest.param("$maxopt $fastest avx2", "unknown policy '$fastest'; valid: $keep_baseline", id="unknown-policy"),
    pytest.param("avx2 avx1024", "unknown target 'avx1024' (did you mean", id="unknown-target"),
    pytest.param("avx2 () avx512f", "empty group '()' in @targets", id="empty-group"),
    pytest.param("", "the @targets statement is empty", id="empty-statement"),
    pytest.param("avx2 fma3;", "invalid token 'fma3;' in @targets", id="invalid-token"),
]


@pytest.mark.parametrize("body,message", BAD_TARGETS)
def test_malformed_targets_give_file_line_message(tmp_path: Path, feature_file: Path, body: str,
                                                  message: str) -> None:
    src = tmp_path / "kern.dispatch.c"
    src.write_text(f"#include <stddef.h>\n\n/*@targets {body} */\nint k(void);\n")
    one_error(run_targets(src, feature_file, tmp_path), f"ccopt-meson: error: kern.dispatch.c:3: {message}")
    assert not (tmp_path / "kern.dispatch.h").exists()


@pytest.mark.parametrize("text,message", [
    pytest.param("int k(void) { return 0; }\n", "kern.dispatch.c:1: no '@targets' statement found in a comment "
                 "of the first 1000 lines", id="statement-missing"),
    pytest.param("int a;\n/*@targets avx2\nint k(void);\n", "kern.dispatch.c:2: the @targets comment is not closed "
                 "with '*/'", id="comment-not-closed"),
    pytest.param("int a;\f\n/*@targets avx3 */\n", "kern.dispatch.c:2: unknown target 'avx3'",
                 id="form-feed-does-not-shift-lines"),
    pytest.param("int a;\r\n/*@targets avx3 */\r\n", "kern.dispatch.c:2: unknown target 'avx3'", id="crlf"),
])
def test_source_without_a_usable_statement(tmp_path: Path, feature_file: Path, text: str, message: str) -> None:
    src = tmp_path / "kern.dispatch.c"
    src.write_bytes(text.encode())
    one_error(run_targets(src, feature_file, tmp_path), message)


def test_binary_source(tmp_path: Path, feature_file: Path) -> None:
    src = tmp_path / "blob.dispatch.c"
    src.write_bytes(bytes(random.Random(6).randrange(256) for _ in range(4096)).replace(b"@", b"."))
    one_error(run_targets(src, feature_file, tmp_path), "blob.dispatch.c:1: no '@targets' statement found")


@pytest.mark.parametrize("name", ["two\nlines.c", "a\t-fplugin=evil.so\tb.c"])
def test_source_names_the_line_protocol_cannot_carry_are_refused(tmp_path: Path, feature_file: Path,
                                                                  name: str) -> None:
    src = tmp_path / name
    src.write_text("/*@targets avx2 */\n")
    r = run_targets(src, feature_file, tmp_path)
    one_error(r, "which the lines meson.build reads cannot carry; rename it")
    assert "fplugin" not in r.stdout


def test_missing_source(tmp_path: Path, feature_file: Path) -> None:
    one_error(run_targets(tmp_path / "nope.dispatch.c", feature_file, tmp_path),
              f"dispatch source '{tmp_path / 'nope.dispatch.c'}' does not exist")


def test_directory_as_source(tmp_path: Path, feature_file: Path) -> None:
    (tmp_path / "dir.dispatch.c").mkdir()
    one_error(run_targets(tmp_path / "dir.dispatch.c", feature_file, tmp_path),
              f"dispatch source '{tmp_path / 'dir.dispatch.c'}' is not a regular file; name a file")


@pytest.mark.skipif(IS_ROOT, reason=ROOT_REASON)
def test_unreadable_source(tmp_path: Path, feature_file: Path) -> None:
    src = tmp_path / "locked.dispatch.c"
    src.write_text("/*@targets avx2 */\n")
    src.chmod(0)
    try:
        one_error(run_targets(src, feature_file, tmp_path),
                  f"cannot read dispatch source '{src}': Permission denied")
    finally:
        src.chmod(0o644)


def _good_source(tmp_path: Path) -> Path:
    src = tmp_path / "kern.dispatch.c"
    src.write_text("/*@targets $maxopt baseline sse42 avx2 avx512_skx */\n")
    return src


def _edited(doc: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    doc["dispatch"]["names"].append("AVX512_MADE_UP")
    return doc


FEATURE_FAULTS: list[Any] = [
    pytest.param(lambda good: b"", "is unreadable or corrupt (", id="empty"),
    pytest.param(lambda good: good[: len(good) // 2], "is unreadable or corrupt (", id="truncated"),
    pytest.param(lambda good: b"\xff\xfe\x00\x81" * 64, "is unreadable or corrupt (", id="binary"),
    pytest.param(lambda good: b"[" * 100000, "is unreadable or corrupt (", id="nested-too-deep"),
    pytest.param(lambda good: b"[]", "was written by another version of ccopt-meson", id="wrong-shape-list"),
    pytest.param(lambda good: b'{"schema_version": 1}', "was modified after it was written",
                 id="wrong-shape-skeleton"),
    pytest.param(lambda good: json.dumps({**json.loads(good), "schema_version": 2}).encode(),
                 "was written by another version of ccopt-meson", id="future-schema"),
    pytest.param(lambda good: json.dumps(_edited(json.loads(good))).encode(), "was modified after it was written",
                 id="edited-by-hand"),
]


@pytest.mark.parametrize("corrupt,message", FEATURE_FAULTS)
def test_corrupt_feature_file(tmp_path: Path, feature_file: Path, corrupt: Callable[[bytes], bytes],
                              message: str) -> None:
    bad = tmp_path / "build" / CACHE
    bad.parent.mkdir()
    bad.write_bytes(corrupt(feature_file.read_bytes()))
    line = one_error(run_targets(_good_source(tmp_path), bad, tmp_path), f"{bad} {message}")
    assert f"run 'ccopt-meson flush {bad.parent}'" in line
    assert not (tmp_path / "kern.dispatch.h").exists()


def test_missing_feature_file(tmp_path: Path) -> None:
    missing = tmp_path / "build" / CACHE
    one_error(run_targets(_good_source(tmp_path), missing, tmp_path),
              f"{missing} does not exist; run 'ccopt-meson detect --build-dir {missing.parent}' or configure first")


def test_directory_as_feature_file(tmp_path: Path) -> None:
    path = tmp_path / CACHE
    path.mkdir()
    one_error(run_targets(_good_source(tmp_path), path, tmp_path), f"{path} is unreadable or corrupt (",
              "Is a directory")


def test_feature_file_of_another_name(tmp_path: Path, feature_file: Path) -> None:
    other = tmp_path / "features.json"
    shutil.copy(feature_file, other)
    one_error(run_targets(_good_source(tmp_path), other, tmp_path),
              f"--feature-file: '{other}' is not a ccopt feature file (ccopt-features.json)")


def test_targets_output_dir(tmp_path: Path, feature_file: Path) -> None:
    src = _good_source(tmp_path)
    one_error(cli("targets", str(src), "--feature-file", str(feature_file)),
              "--output-dir is required outside Meson (MESON_BUILD_ROOT is not set)")
    (tmp_path / "file").write_text("")
    one_error(run_targets(src, feature_file, tmp_path / "file" / "sub"),
              f"cannot write {tmp_path / 'file' / 'sub' / 'kern.dispatch.h'}: Not a directory")
    r = cli("targets", str(src), "--feature-file", str(feature_file),
            env={"MESON_BUILD_ROOT": str(tmp_path / "mb"), "MESON_SUBDIR": "sub"})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]  # library, args, sources
    assert [row[0] for row in rows] == [f"ccopt_{t}_maxopt" for t in ("AVX512_SKX", "AVX2", "SSE42", "BASELINE")]
    assert {row[2] for row in rows} == {str(src)}
    assert (tmp_path / "mb" / "sub" / "kern.dispatch.h").is_file()


def test_targets_usage_error_is_one_line(tmp_path: Path) -> None:
    r = cli("targets", str(_good_source(tmp_path)))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("ccopt-meson: error: the following arguments are required: --feature-file")


# =========================================================================== 3. cache faults


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], bytes]:
    """A clean detection with the host gcc: the document and the cache file's bytes."""
    cc = x86_gcc()
    build = tmp_path_factory.mktemp("reference")
    r = cli("detect", "--cc", cc, *NARROW, "--json", "--build-dir", str(build))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout), (build / CACHE).read_bytes()


@pytest.fixture(scope="module")
def reference_full() -> dict[str, Any]:
    """A clean detection with the host gcc and the default request (what the fake compilers are compared to)."""
    r = cli("detect", "--cc", x86_gcc(), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


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
    pytest.param(lambda good: b"null", "unexpected content", False, id="json-null"),
    pytest.param(lambda good: b'{"schema_version": 1, "cache": []}', "unexpected content", False,
                 id="cache-not-an-object"),
    pytest.param(lambda good: json.dumps({"schema_version": 1, "cache": json.loads(good)["cache"]}).encode(),
                 "its content was modified after it was written", False, id="key-matches-body-missing"),
    pytest.param(lambda good: json.dumps({**json.loads(good), "schema_version": 2}).encode(),
                 "schema version 2, this helper writes 1", False, id="future-schema-key-matches"),
]


@pytest.mark.parametrize("corrupt,warning,again", CACHE_FAULTS)
def test_corrupt_cache_is_a_miss_with_one_warning(tmp_path: Path, reference: tuple[dict[str, Any], bytes],
                                                  corrupt: Callable[[bytes], bytes], warning: str,
                                                  again: bool) -> None:
    ref, good = reference
    (tmp_path / CACHE).write_bytes(corrupt(good))
    r = detect_json(tmp_path)
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("ccopt-meson: warning: ignoring ") and warning in r.stderr
    assert r.stderr.rstrip().endswith("detecting again")
    assert_correct_miss(r, tmp_path, ref, again=again)


def test_cache_behind_a_symlink_loop_is_unreadable(tmp_path: Path, reference: tuple[dict[str, Any], bytes]) -> None:
    """Unreadable even for root: a symlink pointing at itself; the link is replaced by a real file."""
    (tmp_path / CACHE).symlink_to(CACHE)
    r = detect_json(tmp_path)
    assert r.stderr == f"ccopt-meson: warning: ignoring unreadable cache {CACHE}: Too many levels of symbolic " \
                       "links; detecting again\n"
    assert_correct_miss(r, tmp_path, reference[0], again=True)
    assert not (tmp_path / CACHE).is_symlink()


def test_dangling_symlink_is_a_plain_miss(tmp_path: Path, reference: tuple[dict[str, Any], bytes]) -> None:
    (tmp_path / CACHE).symlink_to(tmp_path / "gone.json")
    r = detect_json(tmp_path)
    assert r.stderr == ""
    assert_correct_miss(r, tmp_path, reference[0])


@pytest.mark.skipif(IS_ROOT, reason=ROOT_REASON)
def test_unreadable_cache_file(tmp_path: Path, reference: tuple[dict[str, Any], bytes]) -> None:
    (tmp_path / CACHE).write_bytes(reference[1])
    (tmp_path / CACHE).chmod(0)
    r = detect_json(tmp_path)
    assert r.stderr == f"ccopt-meson: warning: ignoring unreadable cache {CACHE}: Permission denied; detecting again\n"
    assert_correct_miss(r, tmp_path, reference[0])


def test_directory_in_place_of_the_cache(tmp_path: Path) -> None:
    (tmp_path / CACHE).mkdir()
    r = detect_json(tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    warning, error = r.stderr.splitlines()
    assert warning == f"ccopt-meson: warning: ignoring unreadable cache {CACHE}: Is a directory; detecting again"
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


def test_directory_in_place_of_the_config_header(tmp_path: Path) -> None:
    (tmp_path / "ccopt_config.h").mkdir()
    one_error(cli(*configure_args(tmp_path, x86_gcc(), "--write-config")),
              f"cannot write {tmp_path / 'ccopt_config.h'}: Is a directory")


def test_flush_that_cannot_delete(tmp_path: Path) -> None:
    (tmp_path / "sub" / CACHE).mkdir(parents=True)
    (tmp_path / "sub" / CACHE / "x").write_text("")
    one_error(cli("flush", str(tmp_path)), f"cannot delete {tmp_path / 'sub' / CACHE}: Is a directory")


# =========================================================================== 4. compiler faults


def test_compiler_not_found(tmp_path: Path) -> None:
    one_error(cli(*configure_args(tmp_path, "/nonexistent/bin/cc")),
              "compiler not found: '/nonexistent/bin/cc' (No such file or directory); set CC or pass --cc")
    one_error(cli("detect", "--cc", "no-such-compiler-ccopt"), "compiler not found: 'no-such-compiler-ccopt'")


def test_compiler_not_found_behind_a_launcher() -> None:
    one_error(cli("detect", "--cc-arg", fake("launcher"), "--cc-arg", "/nonexistent/bin/cc"),
              f"compiler '{fake('launcher')} /nonexistent/bin/cc' failed on an empty file (exit status 127): ",
              "/nonexistent/bin/cc")


def test_compiler_not_executable(tmp_path: Path) -> None:
    cc = tmp_path / "noexec"
    shutil.copy(FAKECC / "noexec", cc)
    cc.chmod(0o644)  # whatever the checkout did to the mode
    one_error(cli("detect", "--cc-arg", str(cc)), f"compiler '{cc}' is not executable (Permission denied)")


def test_compiler_not_a_program() -> None:
    one_error(cli("detect", "--cc-arg", fake("not-a-program")),
              f"cannot run compiler '{fake('not-a-program')}': Exec format error; check that it is a program")


def test_compiler_failing_on_everything() -> None:
    one_error(cli("detect", "--cc-arg", fake("fail")),
              f"compiler '{fake('fail')}' failed on an empty file (exit status 3): "
              "fakecc: fatal error: licence server 'lic.example' unreachable")


def test_compiler_killed_by_a_signal() -> None:
    one_error(cli("detect", "--cc-arg", fake("segv")),
              f"compiler '{fake('segv')}' failed on an empty file (killed by signal SIGSEGV)")


def test_compiler_that_cannot_compile_anything() -> None:
    need("gcc")
    one_error(cli("detect", "--cc-arg", fake("nocompile")),
              f"compiler '{fake('nocompile')}' cannot compile a trivial C file (exit status 4): "
              "fakecc: internal compiler error: out of cheese")


def test_hanging_compiler_times_out_and_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    start = time.monotonic()
    r = cli("detect", "--cc-arg", fake("hang"), env={"CCOPT_PROBE_TIMEOUT": "2", "FAKECC_PIDFILE": str(pidfile)})
    assert time.monotonic() - start < 20
    one_error(r, f"compiler '{fake('hang')}' did not finish within 2 s; check that it works, or raise "
                 "CCOPT_PROBE_TIMEOUT")
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids), "the compiler's children must die with it"


def test_interrupt_kills_the_compiler(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCOPT_")}
    env.update(PYTHONPATH=str(ROOT), FAKECC_PIDFILE=str(pidfile))
    # A parent (a test runner worker) may ignore SIGINT, which the child would inherit: restore Python's handler.
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from ccopt_meson.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.Popen([sys.executable, "-c", code, "detect", "--cc-arg", fake("hang")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 1 and err == "ccopt-meson: error: interrupted\n"
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)


@pytest.mark.parametrize("value", ["abc", "-1", "inf"])
def test_bad_probe_timeout(value: str) -> None:
    one_error(cli("detect", "--cc", "gcc", env={"CCOPT_PROBE_TIMEOUT": value}),
              f"CCOPT_PROBE_TIMEOUT: '{value}' is not a positive, finite number of seconds; unset it to use the "
              "default (120)")


def test_non_utf8_output_is_harmless(reference_full: dict[str, Any]) -> None:
    r = cli("detect", "--cc-arg", fake("nonutf8"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["baseline"], doc["dispatch"]) == (reference_full["baseline"], reference_full["dispatch"])


def test_non_utf8_error_is_one_line() -> None:
    one_error(cli("detect", "--cc-arg", fake("nonutf8"), env={"FAKECC_FAIL": "1"}),
              f"compiler '{fake('nonutf8')}' failed on an empty file (exit status 1): fakecc: fatal error: "
              "caf\ufffd \ufffd\ufffd ne marche pas")


def test_compiler_accepting_every_flag_with_a_warning() -> None:
    x86_gcc()
    r = cli("detect", "--cc-arg", fake("warn-all"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["baseline"]["names"] == [] and doc["dispatch"]["names"] == []
    table = tables.table_for("x86_64", "gcc")
    for name, feat in doc["features"].items():
        assert feat["supported"] is False, name
        own = table.features[name].flags
        if own:
            assert feat["reason"].startswith("fakecc: warning: option '-m"), (name, feat["reason"])
            assert any(f"'{flag}'" in feat["reason"] for flag in own), (name, feat["reason"])
        else:
            assert feat["reason"].startswith("requires "), (name, feat["reason"])


def test_compiler_refusing_some_flags(reference_full: dict[str, Any]) -> None:
    r = cli("detect", "--cc-arg", fake("refuse-avx512f"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    feats = doc["features"]
    assert feats["AVX512F"] == {**feats["AVX512F"], "supported": False,
                                "reason": "fakecc: error: unrecognized command-line option '-mavx512f'"}
    table = tables.table_for("x86_64", "gcc")
    above = {n for n in table.features if "AVX512F" in table.closure([n])}
    assert {"AVX512_SKX", "AVX512_SPR", "X86_V4"} <= above
    for name in above - {"AVX512F"}:
        assert feats[name]["supported"] is False and feats[name]["reason"] == "requires AVX512F, which is unsupported"
    assert feats["AVX2"]["supported"] is True and feats["X86_V3"]["supported"] is True
    assert doc["dispatch"]["names"] == [n for n in reference_full["dispatch"]["names"] if n not in above]
    assert doc["baseline"] == reference_full["baseline"]


@pytest.mark.parametrize("how", ["--cc", "--cc-arg"])
def test_launcher_in_front(tmp_path: Path, reference_full: dict[str, Any], how: str) -> None:
    cc = x86_gcc()
    if how == "--cc":
        args = ["--cc", f"{fake('launcher')} {cc}"]
    else:
        args = ["--cc-arg", fake("launcher"), "--cc-arg", cc]
    r = cli("detect", *args, "--json", "--build-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["compiler"]["command"] == [fake("launcher"), cc]
    assert (doc["baseline"], doc["dispatch"]) == (reference_full["baseline"], reference_full["dispatch"])


def test_spaces_quotes_and_no_shell(tmp_path: Path) -> None:
    """Compiler path and arguments reach the compiler verbatim, as argv elements: no shell anywhere."""
    x86_gcc()
    odd = tmp_path / "dir with space; $(touch pwned1) `touch pwned2` 'q' \"dq\"" / "my cc"
    odd.parent.mkdir()
    shutil.copy(FAKECC / "record", odd)
    odd.chmod(0o755)
    log = tmp_path / "argv.log"
    tricky = ['-DX="a b"', "-DP=$(touch pwned3)", "-DQ=1;touch pwned4", "-DR=`touch pwned5`", "-DS=a\\ b|touch pwned6"]
    r = cli(*configure_args(tmp_path / "build", str(odd), *[f"--arg={a}" for a in tricky]),
            env={"FAKECC_LOG": str(log)}, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls and all(c[0] == str(odd) and c[1:1 + len(tricky)] == tricky for c in calls)
    r = cli("detect", "--cc", f"{shlex.quote(str(odd))} '-DY=c d'", "--args", "-DX=\"a b\" -DZ=1",
            env={"FAKECC_LOG": str(log)},
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    last = json.loads(log.read_text().splitlines()[-1])
    assert last[:4] == [str(odd), "-DY=c d", "-DX=a b", "-DZ=1"]
    assert not list(tmp_path.rglob("pwned*")) and not list(ROOT.glob("pwned*"))


@pytest.mark.parametrize("args,env,message", [
    (["--cc", "gcc 'oops"], {}, "--cc: cannot split 'gcc 'oops': No closing quotation; balance the quotes"),
    (["--cc", "gcc", "--args", "-DX='a"], {}, "--args: cannot split '-DX='a': No closing quotation"),
    (["--cc", "gcc"], {"CFLAGS": "-O2 \"-DX"}, "CFLAGS: cannot split '-O2 \"-DX': No closing quotation"),
    ([], {"CC": "gcc 'x"}, "CC: cannot split 'gcc 'x': No closing quotation"),
    (["--cc", ""], {}, "the compiler command is empty; pass --cc or set CC"),
    (["--cc-arg", ""], {}, "the compiler command is empty; pass --cc or set CC"),
])
def test_bad_compiler_command_text(args: list[str], env: dict[str, str], message: str) -> None:
    one_error(cli("detect", *args, env=env), message)


# =========================================================================== 5. concurrency


def _watch(path: Path, check: Callable[[bytes], None], stop: threading.Event, seen: list[int]) -> None:
    """Read ``path`` in a tight loop until ``stop``; every complete read must pass ``check``."""
    while not stop.is_set():
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            time.sleep(0.001)
            continue
        check(data)
        seen.append(len(data))
        time.sleep(0.001)


def _race(commands: Sequence[Sequence[str]], watched: Path, check: Callable[[bytes], None]) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCOPT_")}
    env["PYTHONPATH"] = str(ROOT)
    stop, seen, errors = threading.Event(), [], []

    def guarded() -> None:
        try:
            _watch(watched, check, stop, seen)
        except AssertionError as exc:  # report from the main thread
            errors.append(exc)

    reader = threading.Thread(target=guarded)
    reader.start()
    try:
        procs = [subprocess.Popen([sys.executable, "-m", "ccopt_meson", *c], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for c in commands]
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 and "Traceback" not in err, err
            outs.append(out)
    finally:
        stop.set()
        reader.join()
    assert not errors, errors[0]
    return outs


def test_two_helpers_on_one_build_dir_never_tear_the_cache(tmp_path: Path) -> None:
    cc = fake("instant")  # the compiler does not matter here; a fast one makes the writes collide more often
    build = tmp_path / "build"
    requests = (["--dispatch", "sse41 sse42 avx"], ["--dispatch", "sse41 avx2"])

    def whole(data: bytes) -> None:
        cache.parse(data)  # a torn file fails here

    for _ in range(5):
        outs = _race([["detect", "--cc", cc, "--json", "--flush", "--build-dir", str(build), *req]
                      for req in requests], build / CACHE, whole)
        docs = [json.loads(o) for o in outs]
        final = cache.load(build / CACHE)
        assert final is not None
        match = [d for d in docs if d["cache"]["key"] == final.key]
        assert len(match) == 1 and match[0]["dispatch"] == pipeline.read(build).to_json()["dispatch"]
        assert not [p for p in build.iterdir() if p.name.endswith(".tmp")], "temporary files left behind"


def test_two_helpers_never_tear_the_config_header(tmp_path: Path) -> None:
    cc = fake("instant")
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
        _race([configure_args(out, cc, *req, "--write-config", "--flush") for req in requests],
              out / "ccopt_config.h", whole)
        assert (out / "ccopt_config.h").read_bytes() in expected
        assert cache.load(out / CACHE) is not None


def test_two_build_dirs_do_not_interfere(tmp_path: Path) -> None:
    cc = fake("instant")
    a, b = tmp_path / "a", tmp_path / "b"
    outs = _race([["detect", "--cc", cc, "--json", "--build-dir", str(a), "--dispatch", "sse41 sse42"],
                  ["detect", "--cc", cc, "--json", "--build-dir", str(b), "--dispatch", "avx2"]],
                 tmp_path / "unused", lambda data: None)
    for build, out, names in ((a, outs[0], ["SSE42", "SSE41"]), (b, outs[1], ["AVX2"])):
        doc = json.loads(out)
        stored = json.loads((build / CACHE).read_text())
        assert doc["dispatch"]["names"] == names == stored["dispatch"]["names"]
        assert stored["cache"]["key"] == doc["cache"]["key"]
        assert sorted(p.name for p in build.iterdir()) == [CACHE]


# =========================================================================== 6. property tests

NAMES = sorted(tables.all_feature_names())
EXPR_WORDS = st.one_of(
    st.sampled_from([*NAMES, *SPECIAL, *(n.lower() for n in SPECIAL)]),
    st.sampled_from(["+", "-", ",", " ", "\t", "\n", "\u2028", "$", "(", ")"]),
    st.text(max_size=4),
)


def _one_line_message(exc: CcoptError) -> str:
    text = str(exc)
    assert len(text.splitlines()) == 1, repr(text)
    return text


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(EXPR_WORDS, max_size=10).map("".join)))
def test_any_expression_text_parses_or_raises_our_error(text: str) -> None:
    try:
        toks = tokenize(text, "cpu-dispatch")
    except CcoptError as exc:
        assert isinstance(exc, InputError)
        assert _one_line_message(exc).startswith("cpu-dispatch: ")
        return
    assert tokenize(render_expr(toks), "cpu-dispatch") == toks
    assert tokenize(render_expr(toks).lower(), "cpu-dispatch") == toks


TARGET_WORDS = st.one_of(
    st.sampled_from([*NAMES, *(n.lower() for n in NAMES), "baseline", "$maxopt", "$keep_sort", "$werror",
                     "$keep_baseline", "$autovec"]),
    st.sampled_from(["(", ")", " ", ",", "*", "/", "\n", "\n * ", "$", "#", "+", "-"]),
    st.text(max_size=4),
)


def _check_statement(text: str) -> None:
    try:
        parsed = parse_text(text, "src.c")
    except CcoptError as exc:
        assert _one_line_message(exc).startswith("src.c:")
        return
    again = parse_text(f"/*@targets {render(parsed)} */", "src.c")
    assert (again.baseline, again.targets, again.policies) == (parsed.baseline, parsed.targets, parsed.policies)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(TARGET_WORDS, max_size=12).map(lambda w: "/*@targets " + " ".join(w) + " */")))
def test_any_source_text_parses_or_raises_our_error(text: str) -> None:
    _check_statement(text)


@settings(max_examples=100, deadline=None)
@given(st.text(), st.lists(TARGET_WORDS, max_size=12).map(" ".join), st.sampled_from(["/*@targets ", "// @targets "]))
def test_statement_anywhere_in_arbitrary_text(before: str, body: str, opener: str) -> None:
    closer = " */" if opener.startswith("/*") else "\n"
    _check_statement(before + "\n" + opener + body.replace("\n", " ") + closer)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=512))
def test_any_source_bytes_parse_or_raise_our_error(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.dispatch.c"
        path.write_bytes(b"/*@targets " + data + b" */")
        try:
            parse_file(path)
        except CcoptError as exc:
            assert _one_line_message(exc).startswith(f"{path}:")  # the path as given, directory kept


# =========================================================================== 7. determinism


def test_same_inputs_give_byte_identical_files(tmp_path: Path) -> None:
    """Two build dirs, two processes with different hash seeds: the same bytes, no absolute paths."""
    cc = x86_gcc()
    compiler = fake("refuse-avx512f")  # failures with reasons are part of the files too
    src = tmp_path / "src" / "kern.dispatch.c"
    src.parent.mkdir()
    src.write_text("/*@targets $maxopt baseline sse42 (avx2 fma3) avx512_skx x86_v3 asimd vsx2 */\n")
    files: dict[str, list[bytes]] = {}
    stdout: list[str] = []
    for i, seed in enumerate(("1", "2")):
        out = tmp_path / f"build{i}"
        env = {"PYTHONHASHSEED": seed, "FAKECC_CC": cc}
        r = cli(*configure_args(out, compiler, "--dispatch", "max -xop", "--write-config"), env=env, cwd=out.parent)
        assert r.returncode == 0, r.stderr
        r = cli("targets", str(src), "--feature-file", str(out / CACHE), "--output-dir", str(out / "gen"), env=env)
        assert r.returncode == 0, r.stderr
        stdout.append(r.stdout)
        for name in (CACHE, "ccopt_config.h", "gen/kern.dispatch.h"):
            files.setdefault(name, []).append((out / name).read_bytes())
    assert stdout[0] == stdout[1] and "AVX512_SKX" not in stdout[0] and "FMA3__AVX2" in stdout[0]
    for name, (first, second) in files.items():
        assert first == second, f"{name} differs between build dirs / runs"
        text = first.decode()
        if name == CACHE:  # only the compiler command may be absolute
            assert json.loads(text)["compiler"]["command"] == [compiler]
            text = text.replace(json.dumps(compiler)[1:-1], "")
        assert str(tmp_path) not in text and "/tmp/" not in text and str(ROOT) not in text, name
    assert "ccopt-" not in files[CACHE][0].decode().replace("ccopt-meson", ""), "scratch paths leaked into reasons"


# =========================================================================== every remaining message


def test_expression_must_be_a_string() -> None:
    with pytest.raises(InputError, match="^cpu-baseline: expected a string, got NoneType$"):
        tokenize(None, "cpu-baseline")  # type: ignore[arg-type]


def test_unknown_language_through_the_api() -> None:
    with pytest.raises(InputError, match="^unknown language 'fortran'; use 'c' or 'cpp'$"):
        detect_doc(Request(command=("fakecc",), lang="fortran"), runner=FakeCompiler())


def test_native_unsupported_by_the_compiler() -> None:
    req = Request(command=("fakecc",), compiler_id="msvc", cpu_family="aarch64", baseline="native", cross=False)
    with pytest.raises(InputError, match="^cpu-baseline: 'native' is not supported by msvc on aarch64; "
                                         "name the features instead$"):
        detect_doc(req, runner=FakeCompiler())


def test_native_refused_by_the_compiler() -> None:
    req = Request(command=("fakecc",), dispatch="max native", cross=False)
    with pytest.raises(InputError) as exc:
        detect_doc(req, runner=FakeCompiler(reject_flags=["-march=native"]))
    assert str(exc.value) == ("cpu-dispatch: 'native' (-march=native) was refused by gcc: "
                              "gcc: error: unrecognized command-line option '-march=native'")


def test_probe_timeout_reaches_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float] = []

    def runner(argv: Sequence[str], timeout: float) -> Any:
        seen.append(timeout)
        raise CompilerError("stop")

    monkeypatch.setenv("CCOPT_PROBE_TIMEOUT", " 7.5 ")
    with pytest.raises(CompilerError):
        detect_doc(Request(command=("fakecc",)), runner=runner)
    assert seen == [7.5]


def test_report_of_a_corrupt_build_dir(tmp_path: Path) -> None:
    (tmp_path / CACHE).write_text("{")
    one_error(cli("report", str(tmp_path)), f"{tmp_path / CACHE} is unreadable or corrupt (",
              f"run 'ccopt-meson flush {tmp_path}'")


def test_table_errors(tmp_path: Path) -> None:
    with pytest.raises(TableError, match=r"^cannot read feature table nope\.json: "):
        tables._read_json(tmp_path / "nope.json")
    schema = json.loads((tables.DATA_DIR / "schema.json").read_text())
    defs = schema["definitions"]

    def fails(edit: Callable[[dict[str, Any]], None], message: str) -> None:
        raw = json.loads((tables.FEATURES_DIR / "s390x.json").read_text())
        edit(raw)
        with pytest.raises(TableError) as exc:
            tables.validate_schema(raw, schema, defs, "s390x.json")
        assert str(exc.value) == message

    fails(lambda r: r["features"][0].update(interest="10"),
          's390x.json.features[0].interest: expected integer, got "10"')
    fails(lambda r: r["features"][0].update(interest=0), "s390x.json.features[0].interest: 0 is below 1")
    fails(lambda r: r["features"][0].update(name="vx"),
          "s390x.json.features[0].name: 'vx' does not match ^[A-Z][A-Z0-9_]*$")
    fails(lambda r: r["features"][0].pop("macros"), "s390x.json.features[0]: missing required key 'macros'")


def test_fakecc_scripts_are_executable() -> None:
    """The scripts must be committed with their executable bit (noexec on purpose without it)."""
    for path in FAKECC.iterdir():
        if path.name in ("README.md", "noexec"):
            continue
        assert path.stat().st_mode & stat.S_IXUSR, f"{path.name} lost its executable bit"
        assert path.read_bytes().startswith(b"#!") or path.name == "not-a-program"


def test_runtime_table_generator_refuses_bad_data() -> None:
    """Maintainer-facing: ``python -m ccopt_meson.emit_runtime`` checks the runtime recipes it turns into C."""
    from ccopt_meson import emit_runtime as er

    with pytest.raises(ValueError, match=r"^refusing to emit 'a\"b' as a C string literal$"):
        er._c_string('a"b')
    with pytest.raises(ValueError, match=r"^x86_64: AVX2: bad cpuid entry \[7, 0, 'exx', 5\]$"):
        er._cpuid_bits({"cpuid": [[7, 0, "exx", 5]]}, "x86_64: AVX2")
    with pytest.raises(ValueError, match="^aarch64: SVE: hwcap bit 64 out of range$"):
        er._mask([3, 64], "aarch64: SVE")
    with pytest.raises(ValueError, match="^x86_64: AVX2: win_pf must be positive$"):
        er._MachineData("x86_64").add_feature("AVX2", {"win_pf": 0}, [], False)
