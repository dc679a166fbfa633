"""Compiler versions and the version ranges of a row's ``when``: semantic comparison, and rows whose flags, implies,
disable reason and run-time test follow the compiler's version (the tables, a features file, a detection)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccopt_meson import Request, detect, project, tables
from ccopt_meson.cli import main
from ccopt_meson.errors import InputError
from ccopt_meson.versions import boundaries, in_range, parse_version, why_empty

from .conftest import ROOT
from .helpers import cli, one_error

NUMPY25 = ROOT / "examples" / "numpy" / "2.5.5" / "ccopt-numpy.json"
HWY = ["-DHWY_WANT_SSE4", "-DHWY_DISABLE_PCLMUL_AES"]


@pytest.mark.parametrize(("text", "expected"), [
    ("19.40.33811", (19, 40, 33811)), ("12.2.0", (12, 2)), ("10", (10,)), ("10.0", (10,)), ("12.2.0-14", (12, 2)),
    (" 14.0.6 ", (14, 0, 6)), ("unknown", None), ("", None), (None, None)])
def test_a_version_is_its_leading_numbers(text: str | None, expected: tuple[int, ...] | None) -> None:
    assert parse_version(text) == expected


@pytest.mark.parametrize(("version", "text", "holds"), [
    ("19.29.30133", ">=19.30", False), ("19.30", ">=19.30", True), ("19.30.30705", ">=19.30 <19.40", True),
    ("19.40.33811", "<19.40", False), ("9.4.0", "<10", True), ("10", "<10", False), ("10.0", "==10", True),
    ("10.0.1", "==10", False), ("10.0.1", "!=10", True), ("13", ">12.9", True), ("12.9", "<=12.9.0", True),
    ("unknown", "<100", False), ("unknown", "!=1", False)])
def test_versions_compare_as_numbers(version: str, text: str, holds: bool) -> None:
    """19.29 < 19.30 and 9 < 10 (as text, '9' > '10'); missing components are 0; an unknown version is in no range."""
    assert in_range(parse_version(version), text) is holds


@pytest.mark.parametrize(("text", "empty"), [
    (">=19.40 <19.30", True), (">=10 <10", True), ("==10 !=10.0", True), (">10 <10.0.5", False),
    (">=10 <=10", False), ("<0", True), ("<=0", False), ("!=3", False)])
def test_a_range_that_holds_for_no_version_is_found(text: str, empty: bool) -> None:
    assert bool(why_empty(text)) is empty


def test_boundaries_give_one_version_of_each_stretch() -> None:
    found = boundaries([">=19.30", "<19.40"])
    answers = {(in_range(v, ">=19.30"), in_range(v, "<19.40")) for v in found}
    assert answers == {(False, True), (True, True), (True, False)}


# --------------------------------------------------------------------------- numpy's MSVC X86_V2, per version


@pytest.mark.parametrize(("machine", "version", "flags"), [
    ("x86_64", "19.29.30133", HWY),  # numpy's meson_cpu/x86: nothing before 19.30
    ("x86_64", "19.30.30705", ["/fp:contract", *HWY]),
    ("x86_64", "19.39.33523", ["/fp:contract", *HWY]),
    ("x86_64", "19.40.33811", ["/arch:SSE4.2", "/fp:contract", *HWY]),
    ("x86_64", None, ["/arch:SSE4.2", "/fp:contract", *HWY]),  # no version known: the newest's
    ("x86", "19.29.30133", ["/arch:SSE2", *HWY]),  # 32-bit MSVC has no /arch:SSE4.2
    ("x86", "19.30.30705", ["/arch:SSE2", "/fp:contract", *HWY]),
    ("x86", "19.44.35207", ["/arch:SSE2", "/fp:contract", *HWY])])
def test_numpys_msvc_x86_v2_flags_follow_the_version(machine: str, version: str | None, flags: list[str]) -> None:
    proj = project.load(NUMPY25)
    assert list(tables.table_for(machine, "msvc", proj, version).get("X86_V2").flags) == flags
    assert tables.table_for(machine, "msvc", proj, version).get("X86_V3").flags == ("/arch:AVX2",)


def test_the_features_command_shows_a_versions_view(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["features", "--arch", "x86_64", "--json", "--compiler-id", "msvc", "--compiler-version", "19.29",
                 "--features-file", str(NUMPY25)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["compiler_version"] == "19.29" and doc["features"]["X86_V2"]["flags"] == HWY
    assert doc["features"]["X86_V2"]["flags_by_compiler"]["msvc"] == HWY


# --------------------------------------------------------------------------- a features file's version conditions

def _doc() -> dict[str, Any]:
    """Three x86 levels whose flags, implies, disable reason and run-time test depend on gcc's or clang's version
    (the versions are the test's, not facts about those compilers)."""
    return {"feature_set": {"x86": {"min": {"x86_64": ["LEVEL2"]}, "features": [
        {"name": "LEVEL2", "like": "SSE42", "interest": 1, "implies": [], "flags": {"gnu": ["-msse4.2", "-mpopcnt"]},
         "detect": ["LEVEL2"]},
        {"name": "LEVEL3", "like": "AVX2", "interest": 10, "implies": ["LEVEL2"], "flags": {"gnu": ["-mavx2"]},
         "detect": ["LEVEL3"],
         "overrides": [{"when": {"compiler": "gcc", "version": ">=11"}, "flags": ["-mavx2", "-mfma"]},
                       {"when": {"compiler": "gcc", "version": "<9"}, "disable": "gcc before 9 cannot build it"},
                       {"when": {"compiler": "gcc", "version": ">=12 <13"},
                        "detect": [{"name": "LEVEL3", "replaces": "LEVEL2"}]},
                       {"when": {"compiler": "gcc", "version": ">=11.2"}, "flags": ["-mavx2", "-mfma", "-mf16c"]}]},
        {"name": "LEVEL4", "like": "AVX512F", "interest": 20, "implies": ["LEVEL3"], "flags": {"gnu": ["-mavx512f"]},
         "overrides": [{"when": {"compiler": "clang", "version": "<14"}, "implies": ["LEVEL2"]}]}]}}}


def _load(tmp_path: Path, doc: Any) -> tables.Project:
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    loaded = project.load(path)
    assert loaded is not None
    return loaded


@pytest.mark.parametrize(("cid", "version", "flags", "disabled"), [
    ("gcc", "8.5.0", ("-mavx2",), "gcc before 9 cannot build it"),
    ("gcc", "10.3.0", ("-mavx2",), None),
    ("gcc", "11.1.0", ("-mavx2", "-mfma"), None),
    ("gcc", "11.2", ("-mavx2", "-mfma", "-mf16c"), None),  # two ranges hold: the later override wins
    ("gcc", "13.2.0", ("-mavx2", "-mfma", "-mf16c"), None),
    ("gcc", None, ("-mavx2",), None),  # an unknown version is in no range
    ("clang", "8.0", ("-mavx2",), None)])  # a range is one compiler's: clang 8 is not gcc 8
def test_flags_and_disable_reason_follow_the_version(tmp_path: Path, cid: str, version: str | None,
                                                       flags: tuple[str, ...], disabled: str | None) -> None:
    level3 = tables.table_for("x86_64", cid, _load(tmp_path, _doc()), version).get("LEVEL3")
    assert (level3.flags, level3.disabled) == (flags, disabled)


def test_implies_and_run_time_test_follow_the_version(tmp_path: Path) -> None:
    proj = _load(tmp_path, _doc())
    assert tables.table_for("x86_64", "clang", proj, "13.0.1").closure(["LEVEL4"]) == {"LEVEL2", "LEVEL4"}
    assert tables.table_for("x86_64", "clang", proj, "14.0.6").closure(["LEVEL4"]) == {"LEVEL2", "LEVEL3", "LEVEL4"}
    assert tables.table_for("x86_64", "gcc", proj, "12.2.0").detect_of(["LEVEL3"]) == ["LEVEL3"]
    assert tables.table_for("x86_64", "gcc", proj, "13.1").detect_of(["LEVEL3"]) == ["LEVEL2", "LEVEL3"]


def test_a_run_time_test_covers_what_any_version_enables(tmp_path: Path) -> None:
    """The coverage rule reads each version's flags: LEVEL3 inherits AVX2's test, which gcc 11's -mfma and gcc
    11.2's -mf16c widen (on every version: a row has one run-time recipe)."""
    level3 = _load(tmp_path, _doc()).rows["x86"][1]
    assert level3.runtime_of == "AVX2" and {"FMA3", "F16C"} <= set(level3.widened_by)
    doc = _doc()
    doc["feature_set"]["x86"]["features"][1]["runtime"] = {"*": {"cpuid": [[7, 0, "ebx", 5]], "xcr0": 6}}
    with pytest.raises(InputError, match=r"LEVEL3's flags enable FMA3, FMA3_ISA, F16C \(-mfma -mf16c\) on x86_64"):
        _load(tmp_path, doc)


@pytest.mark.parametrize(("when", "message"), [
    ({"compiler": "gcc", "version": ">=11 <9"}, "LEVEL3's version range '>=11 <9' matches no version"),
    ({"compiler": "gcc", "version": ">= 11"}, r"when.version: '>= 11' is not a compiler version range"),
    ({"compiler": "gcc", "version": "~11"}, r"when.version: '~11' is not a compiler version range"),
    ({"compiler": "gcc", "version": "<11.x"}, r"when.version: '<11.x' is not a compiler version range"),
    ({"style": "gnu", "version": ">=11"}, r"when: 'version' needs 'compiler' beside it"),
    ({"compiler": "gcc", "version": 11}, r"when.version: expected string, got 11")])
def test_a_bad_range_is_one_line(tmp_path: Path, when: dict[str, Any], message: str) -> None:
    doc = _doc()
    doc["feature_set"]["x86"]["features"][1]["overrides"][0]["when"] = when
    with pytest.raises(InputError, match=message) as exc:
        _load(tmp_path, doc)
    assert len(str(exc.value).splitlines()) == 1


def test_a_bad_range_through_the_cli(tmp_path: Path) -> None:
    doc = _doc()
    doc["feature_set"]["x86"]["features"][1]["overrides"][0]["when"]["version"] = ">=11,<13"
    (tmp_path / "f.json").write_text(json.dumps(doc))
    one_error(cli("features", "--arch", "x86_64", "--features-file", str(tmp_path / "f.json")),
              "'>=11,<13' is not a compiler version range", "'>=19.30 <19.40'")


@pytest.mark.parametrize(("version", "level3"), [
    (None, ["-msse4.2", "-mpopcnt", "-mavx2", "-mfma", "-mf16c"]),  # the recorded gcc 12.2's own macros
    ("10.3.0", ["-msse4.2", "-mpopcnt", "-mavx2"]),  # Meson's cc.version() wins over the macros
    ("8.5.0", None)])
def test_a_detection_uses_the_compilers_version(tmp_path: Path, fake: Any, version: str | None,
                                                level3: list[str] | None) -> None:
    proj = _load(tmp_path, _doc())
    doc = detect(Request(command=("fakecc",), dispatch="LEVEL3 LEVEL4", compiler_version=version, project=proj),
                 runner=fake()).to_json()
    assert doc["dispatch"]["args"].get("LEVEL3") == level3
    if level3 is None:
        assert doc["features"]["LEVEL3"]["reason"] == "gcc before 9 cannot build it"


def test_the_docs_snippet_says_what_the_page_says(tmp_path: Path) -> None:
    """docs/reference/features-file.md: 19.44 the row's own flags, 19.35 the first override's, 19.29 the second's."""
    from .snippets import snippet

    proj = _load(tmp_path, json.loads(snippet("features-file/version")))
    flags = {v: tables.table_for("x86_64", "msvc", proj, v).get("X86_V2").flags for v in ("19.44", "19.35", "19.29")}
    assert flags == {"19.44": ("/arch:SSE4.2", "/fp:contract", *HWY), "19.35": ("/fp:contract", *HWY),
                     "19.29": tuple(HWY)}


@pytest.mark.parametrize("version", ["19.29.30133", "14.0.6", None])
def test_a_range_is_only_its_compilers(version: str | None) -> None:
    """numpy's ranges are MSVC's: clang-cl (Meson's id for clang's MSVC-style driver, versioned as clang) keeps its
    own flags at any version, even one that reads like MSVC's (tests/test_clang_cl.py drives the real one)."""
    proj = project.load(NUMPY25)
    assert tables.table_for("x86_64", "clang-cl", proj, version).get("X86_V2") == \
        tables.table_for("x86_64", "clang-cl", proj).get("X86_V2")


@pytest.mark.parametrize(("version", "implied", "args"), [
    (None, ["LEVEL2", "LEVEL3"], ["-msse4.2", "-mpopcnt", "-mavx2", "-mavx512f"]),  # the recorded clang 14.0.6's
    ("13.0.1", ["LEVEL2"], ["-msse4.2", "-mpopcnt", "-mavx512f"])])  # Meson's version of an older clang
def test_a_clang_detection_follows_its_version(tmp_path: Path, fake: Any, version: str | None, implied: list[str],
                                               args: list[str]) -> None:
    proj = _load(tmp_path, _doc())
    doc = detect(Request(command=("fakecc",), compiler_id="clang", dispatch="LEVEL4", compiler_version=version,
                         project=proj), runner=fake(scenario="clang14-x86_64")).to_json()
    assert doc["compiler"]["version"] == (version or "14.0.6")
    assert doc["features"]["LEVEL4"]["implies"] == implied and doc["dispatch"]["args"]["LEVEL4"] == args


def test_a_range_read_without_the_schema_is_still_refused() -> None:
    """The built-in tables are loaded without the schema check (the tests run it): a bad range is a TableError."""
    from ccopt_meson.errors import TableError

    with pytest.raises(TableError, match="'>=x' is not a compiler version range"):
        in_range((1,), ">=x")
