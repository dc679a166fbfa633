"""CLI exit codes, one-line errors and the JSON shape."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccopt_meson import cli as cli_module
from ccopt_meson.cli import main

from .conftest import ROOT
from .helpers import CACHE, cli, good_source, one_error


def test_detect_json_shape(gcc: str, tmp_path: Path) -> None:
    r = cli("detect", "--cc", gcc, "--json", "--build-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    for key in ("schema_version", "arch", "compiler", "baseline", "dispatch", "features", "cache", "probes"):
        assert key in doc
    assert set(doc["compiler"]) >= {"id", "version", "command"}
    assert set(doc["baseline"]) >= {"names", "args"} and isinstance(doc["dispatch"]["args"], dict)
    assert set(doc["features"]["AVX2"]) >= {"supported", "implies", "args", "reason"}
    assert set(doc["cache"]) == {"hit", "key"} and isinstance(doc["probes"], int)
    assert json.loads((tmp_path / "ccopt-features.json").read_text())["key"] == doc["cache"]["key"]


def test_report_mentions_cache_state(gcc: str, tmp_path: Path) -> None:
    first = cli("detect", "--cc", gcc, "--build-dir", str(tmp_path))
    second = cli("detect", "--cc", gcc, "--build-dir", str(tmp_path))
    assert "Cache        : miss" in first.stdout and "Cache        : hit" in second.stdout
    assert "CPU dispatch" in second.stdout and "Architecture : x86_64" in second.stdout


@pytest.mark.parametrize("args,code,message", [
    (["detect", "--baseline", "avx3"], 1, "ccopt-meson: error: cpu-baseline: unknown feature 'avx3'"),
    (["detect", "--cc", "/nonexistent/cc"], 1, "ccopt-meson: error: compiler not found: '/nonexistent/cc'"),
    (["detect", "--cc", "gcc", "--disable-optimization", "--dispatch", "avx2"], 1,
     "ccopt-meson: error: cpu-dispatch: 'avx2' conflicts with disable-optimization=true"),
    (["detecc"], 2, "ccopt-meson: error: argument command: invalid choice: 'detecc'"),
    (["features", "--arch", "sparc"], 1, "ccopt-meson: error: unknown architecture 'sparc'"),
    (["report", "/nonexistent"], 1, "ccopt-meson: error: build directory '/nonexistent' does not exist"),
    (["flush", "/nonexistent"], 1, "ccopt-meson: error: build directory '/nonexistent' does not exist"),
])
def test_errors_are_one_line_with_exit_codes(args: list[str], code: int, message: str) -> None:
    r = cli(*args)
    assert r.returncode == code
    assert r.stderr.startswith(message), r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_features_lists_table(capsys: Any) -> None:
    assert main(["features", "--arch", "aarch64", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["min"] == ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
    assert doc["features"]["ASIMDDP"]["flags"] == ["-march=armv8.2-a+dotprod"]
    assert doc["features"]["ASIMDDP"]["flags_by_compiler"]["msvc"] is None  # a table entry with a reason


def test_explain(gcc: str, capsys: Any) -> None:
    assert main(["explain", "avx2", "vsx", "--cc", gcc]) == 0
    out = capsys.readouterr().out
    assert "AVX2: a dispatch target" in out and "VSX: not available: VSX is a ppc64 feature" in out


def test_flush_command(gcc: str, tmp_path: Path, capsys: Any) -> None:
    assert main(["detect", "--cc", gcc, "--build-dir", str(tmp_path)]) == 0
    assert main(["flush", str(tmp_path)]) == 0
    assert not (tmp_path / "ccopt-features.json").exists()
    assert "flushed 1 cache file(s)" in capsys.readouterr().out


def test_configure_prints_a_line_for_every_dispatch_target(tmp_path: Path, capsys: Any) -> None:
    """Even where @targets' tie rule would fold targets (Intel: FMA3 and AVX2 share one flag)."""

    fake = str(ROOT / "tests" / "fakecc" / "instant")
    assert main(["configure", "--output-dir", str(tmp_path), "--compiler-id", "intel", "--cc-arg=" + fake]) == 0
    lines = dict(line.split("\t", 1) for line in capsys.readouterr().out.splitlines())
    for name in lines["dispatch_names"].split() + ["BASELINE"]:
        assert f"target:{name}" in lines
    assert os.path.isabs(lines["feature_file"])


def test_targets_refuses_two_sources_with_one_header_name(tmp_path: Path, gcc: str) -> None:
    assert main(["detect", "--cc", gcc, "--build-dir", str(tmp_path)]) == 0
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "k.dispatch.c").write_text("/*@targets avx2 */\n")
    r = cli("targets", str(tmp_path / "a" / "k.dispatch.c"), str(tmp_path / "b" / "k.dispatch.c"),
            "--feature-file", str(tmp_path / "ccopt-features.json"), "--output-dir", str(tmp_path / "out"))
    assert r.returncode == 1
    assert r.stderr.startswith("ccopt-meson: error: two dispatch sources would share the generated header k.dispatch.h")


def test_explain_refuses_keywords(capsys: Any) -> None:
    assert main(["explain", "max", "--cc", "gcc"]) == 1
    assert capsys.readouterr().err == "ccopt-meson: error: explain: 'max' is not a feature name; " \
                                      "'ccopt-meson features' lists them\n"


# --------------------------------------------------------------------------- one-line errors


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


def test_report_of_a_corrupt_build_dir(tmp_path: Path) -> None:
    (tmp_path / CACHE).write_text("{")
    one_error(cli("report", str(tmp_path)), f"error: {CACHE}: not valid JSON; run 'ccopt-meson flush {tmp_path}'")


def test_targets_usage_error_is_one_line(tmp_path: Path) -> None:
    r = cli("targets", str(good_source(tmp_path)))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("ccopt-meson: error: the following arguments are required: --feature-file")


# --------------------------------------------------------------------------- the quick option reader
# It reads a command line of the cache-hit path exactly as argparse does, or not at all.

WORDS = ["--cc", "--cc-arg", "--args", "--arg", "--lang", "--compiler-id", "--compiler-version", "--cpu-family",
         "--cross", "--baseline", "--dispatch", "--disable-optimization", "--debug-build", "--build-dir", "--flush",
         "--json", "--output-dir", "--write-config", "--feature-file", "--arch", "--help", "--", "--comp", "-h",
         "--cc=gcc", "--lang=cpp", "--lang=fortran", "--cross=yes", "--cross=maybe", "--json=1", "--arg=-O2",
         "--baseline=", "--cc=--", "c", "cpp", "yes", "auto", "gcc", "-O2", "-avx2", "max -xop", "a.c", "b.dispatch.c",
         "build", "avx2", "", " ", "-", "--baseline", "--arg"]
COMMANDS = ["detect", "explain", "configure", "targets", "report", "flush", "features"]


def _argparse(args: list[str]) -> dict[str, object] | None:
    """What argparse makes of ``args``: the options, or None when it exits (usage error, --help)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return vars(cli_module.build_parser(args[0]).parse_args(cli_module._attach_values(args)))
    except SystemExit:
        return None


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(COMMANDS), st.lists(st.sampled_from(WORDS), max_size=8))
def test_the_quick_reader_agrees_with_argparse(command: str, words: list[str]) -> None:
    args = [command, *words]
    quick = cli_module._quick_parse(args)
    if quick is not None:
        assert vars(quick) == _argparse(args)


@pytest.mark.parametrize("args", [
    ["configure", "--lang", "c", "--output-dir", "/b/sub", "--compiler-id", "gcc", "--compiler-version", "12.2.0",
     "--cpu-family", "x86_64", "--cross", "no", "--baseline", "min", "--dispatch", "max -xop -fma4",
     "--write-config", "--cc-arg=ccache", "--cc-arg=cc", "--arg=-O2", "--arg=-march=x86-64-v2"],
    ["configure", "--output-dir", "o", "--baseline", "-avx2", "--arg", "-O2", "--disable-optimization"],
    ["targets", "a.dispatch.c", "b.dispatch.c", "--feature-file", "/b/ccopt-features.json", "--output-dir", "/b"],
    ["targets", "--feature-file", "f.json", "a.c"],
    ["detect", "--cc", "gcc -m32", "--json", "--build-dir", "build"],
    ["explain", "avx2", "sse41", "--cc", "gcc"],
    ["report", "build", "--json"],
    ["features", "--arch", "aarch64"],
])
def test_meson_and_scripted_command_lines_take_the_quick_path(args: list[str]) -> None:
    quick = cli_module._quick_parse(args)
    assert quick is not None
    assert vars(quick) == _argparse(args)


@pytest.mark.parametrize("args", [
    ["configure", "--lang", "c"],  # --output-dir is required: argparse says so
    ["targets", "--feature-file", "f"],  # no source
    ["detect", "--help"], ["detect", "--lang", "fortran"], ["detect", "--comp", "gcc"], ["detect", "x"],
    ["targets", "a.c", "--feature-file", "f", "b.c"], ["setup", "build"], ["nonsense"], [],
])
def test_anything_else_goes_to_argparse(args: list[str]) -> None:
    assert cli_module._quick_parse(args) is None


# --------------------------------------------------------------------------- what a cache hit imports
# Not a timing test: it pins the modules a hit of the commands Meson runs loads (its cost is about one
# Python start-up), so a stray import of typing or pathlib shows up as a failure, not as a slower README.

FAKE_CC = ROOT / "tests" / "fakecc"
# Each costs a good part of a Python start-up on this path (pathlib brings urllib.parse and ipaddress; signal
# builds enums), or starts processes (probe).  re and json (with enum, functools, collections) are allowed: the
# data's patterns and the cache are read with them.
HEAVY = {"typing", "pathlib", "urllib", "ipaddress", "argparse", "shlex", "signal", "hashlib", "subprocess",
         "threading", "tempfile", "ccopt_meson.probe"}


def _run(args: list[str]) -> tuple[str, set[str]]:
    """``main(args)`` in a fresh ``python -S`` (as Meson runs the helper): its output and the modules it loaded."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from ccopt_meson.cli import main; rc = main(sys.argv[2:]); "
            "sys.stdout.flush(); sys.stderr.write('\\n'.join(['MODULES', *sys.modules])); sys.exit(rc)")
    r = subprocess.run([sys.executable, "-S", "-c", code, str(ROOT), *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout, set(r.stderr.split("MODULES\n", 1)[1].splitlines())


@pytest.fixture
def configured(tmp_path: Path) -> list[str]:
    args = ["configure", "--lang", "c", "--output-dir", str(tmp_path), "--compiler-id", "gcc", "--compiler-version",
            "12.2.0", "--cpu-family", "x86_64", "--cross", "no", "--baseline", "min", "--dispatch", "max -xop",
            "--write-config", f"--cc-arg={FAKE_CC / 'instant'}", "--arg=-O2"]
    out, _ = _run(args)
    assert "cache_hit\tfalse" in out
    return args


def test_a_configure_hit_imports_nothing_heavy(configured: list[str]) -> None:
    out, modules = _run(configured)
    assert "cache_hit\ttrue" in out
    assert not modules & HEAVY


def test_targets_imports_nothing_heavy(configured: list[str], tmp_path: Path) -> None:
    source = tmp_path / "kern.dispatch.c"
    source.write_text("/*@targets $maxopt baseline avx2 (avx2 fma3) */\n", encoding="utf-8")
    out, modules = _run(["targets", str(source), "--feature-file", str(tmp_path / "ccopt-features.json"),
                         "--output-dir", str(tmp_path)])
    assert out.startswith("ccopt_FMA3__AVX2_maxopt\t")
    assert not modules & HEAVY
