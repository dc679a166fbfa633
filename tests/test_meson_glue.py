"""The commands meson.build runs (``configure``, ``targets``): the line protocol, the feature file, determinism."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from ccopt_meson import cache, fsio

from .conftest import ROOT, need
from .helpers import CACHE, cli, configure_args, fakecc, future_schema, good_source, one_error, run_targets, x86_gcc
from .test_meson import copy_repo


def _meson_project(tmp_path: Path) -> Path:
    src = tmp_path / "tiny"
    copy_repo(src / "subprojects" / "ccopt-meson")
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


@pytest.mark.parametrize("name", ["two\nlines.c", "a\t-fplugin=evil.so\tb.c"])
def test_source_names_the_line_protocol_cannot_carry_are_refused(tmp_path: Path, gcc12_x86_64_feature_file: Path,
                                                                  name: str) -> None:
    src = tmp_path / name
    src.write_text("/*@targets avx2 */\n")
    r = run_targets(src, gcc12_x86_64_feature_file, tmp_path)
    one_error(r, "which the lines meson.build reads cannot carry; rename it")
    assert "fplugin" not in r.stdout


def _edited(doc: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    doc["probed"]["outcomes"]["AVX512_MADE_UP"] = [True, ""]
    return doc


FEATURE_FAULTS: list[Any] = [
    pytest.param(lambda good: b"", "not valid JSON", id="empty"),
    pytest.param(lambda good: good[: len(good) // 2], "not valid JSON", id="truncated"),
    pytest.param(lambda good: b"\xff\xfe\x00\x81" * 64, "not valid JSON", id="binary"),
    pytest.param(lambda good: b"[" * 100000, "not valid JSON", id="nested-too-deep"),
    pytest.param(lambda good: b"[]", "not written by ccopt-meson", id="wrong-shape-list"),
    pytest.param(lambda good: b'{"schema_version": 1}', "not written by ccopt-meson", id="wrong-shape-skeleton"),
    pytest.param(lambda good: json.dumps({"generator": fsio.MARK, "schema_version": cache.SCHEMA_VERSION}).encode(),
                 "cache: missing required key 'key'", id="marked-skeleton"),
    pytest.param(future_schema, f"schema version {cache.SCHEMA_VERSION + 1}, this helper reads {cache.SCHEMA_VERSION}",
                 id="future-schema"),
    pytest.param(lambda good: json.dumps(_edited(json.loads(good))).encode(),
                 "'AVX512_MADE_UP' is not a feature of x86_64", id="edited-by-hand"),
]


@pytest.mark.parametrize("corrupt,message", FEATURE_FAULTS)
def test_corrupt_feature_file(tmp_path: Path, gcc12_x86_64_feature_file: Path, corrupt: Callable[[bytes], bytes],
                              message: str) -> None:
    bad = tmp_path / "build" / CACHE
    bad.parent.mkdir()
    bad.write_bytes(corrupt(gcc12_x86_64_feature_file.read_bytes()))
    line = one_error(run_targets(good_source(tmp_path), bad, tmp_path), f"error: {CACHE}: {message}; ")
    assert line.endswith(f"; run 'ccopt-meson flush {bad.parent}' and configure again")
    assert not (tmp_path / "kern.dispatch.h").exists()


def test_missing_feature_file(tmp_path: Path) -> None:
    missing = tmp_path / "build" / CACHE
    one_error(run_targets(good_source(tmp_path), missing, tmp_path),
              f"{missing} does not exist; run 'ccopt-meson detect --build-dir {missing.parent}' or configure first")


def test_directory_as_feature_file(tmp_path: Path) -> None:
    path = tmp_path / CACHE
    path.mkdir()
    one_error(run_targets(good_source(tmp_path), path, tmp_path), f"feature cache {CACHE} is a directory, not a regular file",
              f"run 'ccopt-meson flush {tmp_path}'")


def test_feature_file_of_another_name(tmp_path: Path, gcc12_x86_64_feature_file: Path) -> None:
    other = tmp_path / "features.json"
    shutil.copy(gcc12_x86_64_feature_file, other)
    one_error(run_targets(good_source(tmp_path), other, tmp_path),
              f"--feature-file: '{other}' is not a ccopt feature file (ccopt-features.json)")


def test_targets_output_dir(tmp_path: Path, gcc12_x86_64_feature_file: Path) -> None:
    src = good_source(tmp_path)
    one_error(cli("targets", str(src), "--feature-file", str(gcc12_x86_64_feature_file)),
              "--output-dir is required outside Meson (MESON_BUILD_ROOT is not set)")
    (tmp_path / "file").write_text("")
    one_error(run_targets(src, gcc12_x86_64_feature_file, tmp_path / "file" / "sub"),
              f"cannot write {tmp_path / 'file' / 'sub' / 'kern.dispatch.h'}: Not a directory")
    r = cli("targets", str(src), "--feature-file", str(gcc12_x86_64_feature_file),
            env={"MESON_BUILD_ROOT": str(tmp_path / "mb"), "MESON_SUBDIR": "sub"})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert [row[0] for row in rows] == [f"kern_dispatch_c_{t}" for t in ("AVX512_SKX", "AVX2", "SSE42", "BASELINE")]
    assert {row[1] for row in rows} == {str(src)}
    assert (tmp_path / "mb" / "sub" / "kern.dispatch.h").is_file()


def test_same_inputs_give_byte_identical_files(tmp_path: Path) -> None:
    """Two build dirs, two processes with different hash seeds: the same bytes, no absolute paths."""
    cc = x86_gcc()
    compiler = fakecc("refuse-avx512f")  # failures with reasons are part of the files too
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
            assert json.loads(text)["request"]["command"] == [compiler]
            text = text.replace(json.dumps(compiler)[1:-1], "")
        assert str(tmp_path) not in text and "/tmp/" not in text and str(ROOT) not in text, name
    assert "ccopt-" not in files[CACHE][0].decode().replace("ccopt-meson", ""), "scratch paths leaked into reasons"
