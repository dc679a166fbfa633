"""CLI exit codes, one-line errors and the JSON shape."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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


def test_detect_in_a_meson_build_dir_reads_that_builds_detection(gcc: str, tmp_path: Path) -> None:
    """detect --build-dir of a configured Meson build answers for that build: it probes no other compiler and
    leaves no second cache file for report to list first; --flush there is refused with the way to flush."""
    build = tmp_path / "build"
    (build / "meson-private").mkdir(parents=True)
    (build / "meson-private" / "coredata.dat").write_bytes(b"")
    sub = build / "subprojects" / "ccopt-meson"
    assert cli("detect", "--cc", gcc, "--dispatch", "avx2 sse41", "--build-dir", str(sub)).returncode == 0
    r = cli("detect", "--build-dir", str(build), "--json", env={"CC": str(tmp_path / "no-such-compiler")})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["dispatch"]["names"] == ["AVX2", "SSE41"]
    assert sorted(build.rglob(CACHE)) == [sub / CACHE]
    one_error(cli("detect", "--build-dir", str(build), "--flush"), f"'{build}' is a Meson build directory; "
              f"flush it with 'ccopt-meson flush {build}'")


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
    assert os.path.isabs(lines["cache_file"])
    assert lines["feature_file"] == lines["cache_file"], "its old name, printed beside it for a minor release"


def test_targets_refuses_two_sources_with_one_header_name(tmp_path: Path, gcc: str) -> None:
    assert main(["detect", "--cc", gcc, "--build-dir", str(tmp_path)]) == 0
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "k.dispatch.c").write_text("/*@targets avx2 */\n")
    r = cli("targets", str(tmp_path / "a" / "k.dispatch.c"), str(tmp_path / "b" / "k.dispatch.c"),
            "--cache-file", str(tmp_path / "ccopt-features.json"), "--output-dir", str(tmp_path / "out"))
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
    assert r.stderr.startswith("ccopt-meson: error: one of the arguments --cache-file is required")


def test_the_cache_files_old_option_name_still_works_with_a_warning(tmp_path: Path) -> None:
    """--feature-file (the cache) was one letter from --features-file (the project's JSON): it is --cache-file now,
    and the old spelling is kept for a minor release with a warning, as the deprecation policy says."""
    r = cli("targets", str(good_source(tmp_path)), "--feature-file", str(tmp_path / "missing.json"))
    assert "ccopt-meson: warning: targets: --feature-file is deprecated, use --cache-file" in r.stderr
    assert "--cache-file: " in r.stderr and r.returncode == 1


# --------------------------------------------------------------------------- what a cache hit imports
# Not a timing test: a hit of the commands Meson runs starts no compiler, so it loads no probe stage.

FAKE_CC = ROOT / "tests" / "fakecc"
HEAVY = {"subprocess", "threading", "tempfile", "ccopt_meson.probe"}


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
    out, modules = _run(["targets", str(source), "--cache-file", str(tmp_path / "ccopt-features.json"),
                         "--output-dir", str(tmp_path)])
    assert out.startswith("ccopt_BASELINE_maxopt\t") and "ccopt_FMA3__AVX2_maxopt\t" in out
    assert not modules & HEAVY


@pytest.mark.parametrize("columns", ["", "abc", "-5", "0", "99999999999999999999", "٣٣"])
def test_an_invalid_columns_is_ignored(columns: str) -> None:
    """An empty or non-numeric COLUMNS crashed every command, meson setup included."""
    r = cli("features", "--arch", "x86_64", env={"COLUMNS": columns})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    r = cli("--help", env={"COLUMNS": columns})
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def test_without_features_file_the_cache_s_own_is_used_or_named(tmp_path: Path) -> None:
    """'targets' without --features-file refused '#carry' and ADX, names of the build's own features file, though
    its feature cache records that file: the names are read with it.  'explain --build-dir' on a directory that is
    not a Meson build dir (detect's cache) answers for the options given: a name of the features file its cache
    was made with, not given, is one line naming that file, not "unknown feature 'adx' (did you mean 'MAX')"."""
    import shutil

    from ccopt_meson import Request, project
    from ccopt_meson.pipeline import detect

    from .conftest import FakeCompiler

    shutil.copytree(ROOT / "tests" / "projects" / "project_features" / "features", tmp_path / "features")
    features = tmp_path / "features" / "ccopt.json"
    build = tmp_path / "build"
    (build / "meson-private").mkdir(parents=True)
    (build / "meson-private" / "coredata.dat").write_bytes(b"")
    sub = build / "subprojects" / "ccopt-meson"
    detect(Request(command=("fakecc",), project=project.load(features)), build_dir=sub, runner=FakeCompiler())
    source = tmp_path / "add.dispatch.c"
    source.write_text("/*@targets baseline #carry */\n")
    r = cli("targets", str(source), "--cache-file", str(sub / CACHE), "--output-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert [line.split("\t")[-1] for line in r.stdout.splitlines()] == ["BASELINE", "ADX", "BMI2__ADX"]
    r = cli("explain", "adx", "--build-dir", str(build), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)[0]["status"] == "dispatch", r.stderr
    plain = tmp_path / "plain"
    detect(Request(command=("fakecc",), project=project.load(features)), build_dir=plain, runner=FakeCompiler())
    one_error(cli("explain", "adx", "--build-dir", str(plain)),
              f"explain: 'adx' names a feature of features file '{features}', which the feature cache in '{plain}' "
              f"was made with; '{plain}' is not a Meson build directory, so explain answers for the options given: "
              f"pass --features-file '{features}'")
    one_error(cli("explain", "nosuch", "--build-dir", str(plain)), "explain: unknown feature 'nosuch'")
