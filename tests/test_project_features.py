"""A project's own features file: features beside the built-in tables, #target groups, errors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from ccopt_meson import Request, detect, tables
from ccopt_meson.cli import main
from ccopt_meson.dispatch import parse_text
from ccopt_meson.emit_runtime import runtime_table_header
from ccopt_meson.errors import DispatchSourceError, InputError

from .conftest import ROOT

FIXTURE = ROOT / "tests" / "projects" / "project_features" / "features" / "ccopt.json"


@pytest.fixture
def project() -> Iterator[Path]:
    tables.use_project_file(FIXTURE)
    try:
        yield FIXTURE
    finally:
        tables.use_project_file(None)


def test_project_features_join_the_tables(project: Path) -> None:
    t = tables.table_for("x86_64", "gcc")
    adx = t.get("ADX")
    assert adx.probe == project.parent / "adx.c" and adx.flags == ("-madx",)
    assert tables.families_of("ADX") == ("x86",) and "ADX" not in tables.table_for("aarch64", "gcc").features
    assert "CCOPT_CPU_ADX = " in runtime_table_header()
    st = parse_text("/*@targets baseline #carry (avx2 fma3) */")
    assert st.targets == (("ADX",), ("ADX", "BMI2"), ("AVX2", "FMA3"))
    assert ("AVX2", "FMA3") in parse_text("/*@targets #simd_test */").targets  # numpy 1.26.4's statement


def test_the_file_is_part_of_the_cache_key(project: Path) -> None:
    with_project = tables.data_digest()
    tables.use_project_file(None)
    assert tables.data_digest() != with_project
    tables.use_project_file(project)
    assert tables.data_digest() == with_project


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="ADX is an x86 feature")
def test_detect_probes_a_project_feature(project: Path, gcc: str) -> None:
    doc = detect(Request(command=(gcc,), dispatch="max"))
    assert doc["features"]["ADX"]["supported"] is True and "ADX" in doc["dispatch"]["names"]


def test_cli_option(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        assert main(["features", "--arch", "x86_64", "--json", "--features-file", str(FIXTURE)]) == 0
        assert "ADX" in json.loads(capsys.readouterr().out)["features"]
    finally:
        tables.use_project_file(None)


def _write(tmp_path: Path, doc: Any, probe: bool = True) -> Path:
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    if probe:
        (tmp_path / "p.c").write_text("int ccopt_probe_zz(void);\nint ccopt_probe_zz(void) { return 0; }\n")
    return path


def _feature(**kw: Any) -> dict[str, Any]:
    return {"name": "ZZ", "interest": 5000, "implies": ["SSE2"], "headers": [], "macros": [], "flags": {"gnu": []},
            "probe": "p.c", "runtime": {"*": {"cpuid": [[1, 0, "edx", 26]]}}, **kw}


BAD = [
    ({"features": {"x68": [_feature()]}}, r"unknown family 'x68' \(did you mean 'x86'\?\)"),
    ({"features": {"x86": [_feature(name="AVX2")]}}, "AVX2 is already a feature of x86"),
    ({"features": {"x86": [_feature(probe="missing.c")]}}, "ZZ: cannot read probe 'missing.c'"),
    ({"features": {"x86": [_feature(flagz=[])]}}, "unknown key 'flagz'"),
    ({"groups": {"g": ["AVX2", "AVX512VLL"]}}, r"group 'g': unknown feature 'AVX512VLL' \(did you mean 'AVX512VL'"),
    ({"groups": {"g": []}}, "group 'g' must be a name holding a non-empty list of targets"),
    ({"group": {}}, r"unknown key 'group' \(did you mean 'groups'\?\)"),
    ("{", "not valid JSON"),
]


@pytest.mark.parametrize(("doc", "message"), BAD, ids=[m[:30] for _, m in BAD])
def test_mistakes_are_input_errors_naming_the_file(tmp_path: Path, doc: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        tables.use_project_file(_write(tmp_path, doc))
    tables.use_project_file(None)


def test_unknown_target_group(project: Path) -> None:
    with pytest.raises(DispatchSourceError, match=r"unknown target group '#simd_tst' \(did you mean '#SIMD_TEST'\?\)"):
        parse_text("/*@targets #simd_tst */")
    tables.use_project_file(None)
    with pytest.raises(DispatchSourceError, match="groups are defined in the project's features file"):
        parse_text("/*@targets #simd_test */")
