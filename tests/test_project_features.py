"""A project's own features file: features beside the built-in tables, #target groups, errors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ccopt_meson import Request, detect, project, tables
from ccopt_meson.cli import main
from ccopt_meson.digest import data_digest
from ccopt_meson.dispatch import parse_text
from ccopt_meson.emit_runtime import runtime_table_header
from ccopt_meson.errors import DispatchSourceError, InputError
from ccopt_meson.fsio import LIMITS

from .conftest import NUMPY22, ROOT
from .helpers import cli, one_error

FIXTURE = ROOT / "tests" / "projects" / "project_features" / "features" / "ccopt.json"


@pytest.fixture
def proj() -> tables.Project:
    loaded = project.load(FIXTURE)
    assert loaded is not None
    return loaded


def test_project_features_join_the_tables(proj: tables.Project) -> None:
    t = tables.table_for("x86_64", "gcc", proj)
    adx = t.get("ADX")
    assert adx.probe == FIXTURE.parent / "adx.c" and adx.flags == ("-madx",)
    assert tables.families_of("ADX", proj) == ("x86",)
    assert "ADX" not in tables.table_for("aarch64", "gcc", proj).features
    assert "CCOPT_CPU_F_ADX = " in runtime_table_header(project=proj)
    st = parse_text("/*@targets baseline #carry (avx2 fma3) */", project=proj)
    assert st.targets == (("ADX",), ("ADX", "BMI2"), ("AVX2", "FMA3"))
    assert ("AVX2", "FMA3") in parse_text("/*@targets #simd_test */", project=proj).targets  # numpy 1.26.4's


def test_nothing_is_process_wide_state(proj: tables.Project) -> None:
    """Loading a features file changes no answer for a request that does not carry it."""
    assert "ADX" not in tables.table_for("x86_64", "gcc").features and not tables.families_of("ADX")
    assert "CCOPT_CPU_F_ADX" not in runtime_table_header()
    with pytest.raises(DispatchSourceError, match="unknown target"):
        parse_text("/*@targets adx */")


def test_the_file_is_part_of_the_cache_key(proj: tables.Project, tmp_path: Path) -> None:
    assert data_digest(proj) != data_digest(None)
    assert data_digest(project.load(FIXTURE)) == data_digest(proj)
    copy = tmp_path / "ccopt.json"
    copy.write_text(FIXTURE.read_text() + "\n")
    (tmp_path / "adx.c").write_text((FIXTURE.parent / "adx.c").read_text())
    assert data_digest(project.load(copy)) != data_digest(proj)


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="ADX is an x86 feature")
def test_detect_probes_a_project_feature(proj: tables.Project, gcc: str) -> None:
    doc = detect(Request(command=(gcc,), dispatch="max", project=proj)).to_json()
    assert doc["features"]["ADX"]["supported"] is True and "ADX" in doc["dispatch"]["names"]


def test_cli_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["features", "--arch", "x86_64", "--json", "--features-file", str(FIXTURE)]) == 0
    assert "ADX" in json.loads(capsys.readouterr().out)["features"]
    assert main(["features", "--arch", "x86_64", "--json"]) == 0
    assert "ADX" not in json.loads(capsys.readouterr().out)["features"]


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
    ({"features": {"x86": [_feature(probe="missing.c")]}}, "probe of ZZ '.*missing.c' does not exist"),
    ({"features": {"x86": [_feature(flagz=[])]}}, "unknown key 'flagz'"),
    ({"features": {"x86": [_feature(implies=["SSE5"])]}}, r"features.x86: ZZ implies 'SSE5', which x86 does not state"),
    ({"features": {"x86": [_feature(interest=130)]}}, "ZZ: interest 130 is AVX2's; pick another"),
    ({"groups": {"g": ["AVX2", "AVX512VLL"]}}, r"group 'g': unknown feature 'AVX512VLL' \(did you mean 'AVX512VL'"),
    ({"groups": {"g": []}}, "groups.g: expected at least 1 item, got 0"),
    ({"groups": {"g h": ["AVX2"]}}, r"groups.g h \(a key\): 'g h' does not match"),
    ({"groups": {"g": [[]]}}, r"groups.g\[0\]: expected at least 1 item, got 0"),
    ({"groups": {"g": [3]}}, r"groups.g\[0\]: expected string or array, got 3"),
    ({"group": {}}, r"unknown key 'group' \(did you mean 'groups'\?\)"),
    ("{", "not valid JSON"),
]


@pytest.mark.parametrize(("doc", "message"), BAD, ids=[m[:30] for _, m in BAD])
def test_mistakes_are_input_errors_naming_the_file(tmp_path: Path, doc: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        project.load(_write(tmp_path, doc))


@pytest.mark.parametrize("text,key", [
    ('{"max": {"x86": ["AVX2"]}, "max": {"x86": ["SSE2"]}}', '"max"'),
    ('{"override": {"x86": [{"name": "AVX2", "flags": {"gnu": ["-mavx2"]}, "flags": {"gnu": ["-mavx"]}}]}}', '"flags"'),
])
def test_a_key_given_twice_in_one_object_is_one_error_line_naming_it(tmp_path: Path, text: str, key: str) -> None:
    """json.loads keeps the last of two equal keys without a word: the second "flags" won in silence."""
    one_error(cli("features", "--features-file", str(_write(tmp_path, text))),
              f"features file '{tmp_path / 'f.json'}': the key {key} appears twice in one object; keep one of them")


@pytest.mark.parametrize("where,doc", [
    ("feature_set.x86.features[0].flags.gnu[1]", {"feature_set": {"x86": {"features": [
        {"name": "L3", "like": "AVX2", "interest": 1, "implies": [],
         "flags": {"gnu": ["-march=haswell", "-mfma "]}}]}}}),
    ("override.x86[0].overrides[0].flags[0]", {"override": {"x86": [
        {"name": "AVX2", "overrides": [{"when": {"style": "gnu"}, "flags": ["-mavx2 -mfma"]}]}]}}),
    ("features.x86[0].flags.gnu[0]", {"features": {"x86": [_feature(flags={"gnu": ["-mzz\t"]})]}}),
])
def test_a_flag_element_holding_whitespace_is_one_error_line(tmp_path: Path, where: str, doc: Any) -> None:
    """A flag with a space reached the compiler as one argument: its probe failed, and cpu-dispatch=max then
    dropped the row without a word."""
    one_error(cli("features", "--features-file", str(_write(tmp_path, doc))),
              f"{where}: ", "is not one compiler argument (no whitespace: give each argument an element of its own)")


def test_unknown_target_group(proj: tables.Project) -> None:
    with pytest.raises(DispatchSourceError, match=r"unknown target group '#simd_tst' \(did you mean '#SIMD_TEST'\?\)"):
        parse_text("/*@targets #simd_tst */", project=proj)
    with pytest.raises(DispatchSourceError, match="groups are defined in the project's features file"):
        parse_text("/*@targets #simd_test */")


# --------------------------------------------------------------------------- an untrusted input, like sources


@pytest.mark.parametrize("name", ["BASELINE", "NONE", "MAX", "MIN", "NATIVE", "DETECT"])
def test_a_keyword_is_no_feature_name(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match=f"'{name}' is a keyword of cpu-baseline/cpu-dispatch or @targets"):
        project.load(_write(tmp_path, {"features": {"x86": [_feature(name=name)]}}))


def test_groups_that_differ_only_in_case_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="groups 'fast' and 'FAST' differ only in case"):
        project.load(_write(tmp_path, {"groups": {"fast": ["AVX2"], "FAST": ["SSE41"]}}))


@pytest.mark.parametrize("header", ["immintrin.h>\n#define malloc evil //", "x.h\n", "a\"b.h", "../x.h", "x.c", ""])
def test_a_header_is_a_plain_file_name(tmp_path: Path, header: str) -> None:
    with pytest.raises(InputError, match=r"headers\[0\]: .* does not match"):
        project.load(_write(tmp_path, {"features": {"x86": [_feature(headers=[header])]}}))


def test_a_name_with_a_trailing_line_break_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"name: 'ZZ\\n' is not a feature name"):
        project.load(_write(tmp_path, {"features": {"x86": [_feature(name="ZZ\n")]}}))


def test_plain_headers_are_accepted(tmp_path: Path) -> None:
    loaded = project.load(_write(tmp_path, {"features": {"x86": [_feature(headers=["immintrin.h", "sys/x-y.h"])]}}))
    assert loaded is not None and loaded.rows["x86"][-1].fields["headers"] == ["immintrin.h", "sys/x-y.h"]


@pytest.mark.parametrize("kind", ["device", "fifo", "directory", "huge"])
@pytest.mark.parametrize("which", ["file", "probe"])
def test_the_file_and_its_probes_are_read_bounded(tmp_path: Path, kind: str, which: str) -> None:
    """/dev/zero, a FIFO, a directory or a file over the cap: one line naming it, never a hang or a MemoryError."""
    good = _write(tmp_path, {"features": {"x86": [_feature(probe="q.c")]}}, probe=False)
    target = good if which == "file" else tmp_path / "q.c"
    cap = LIMITS.features_file if which == "file" else LIMITS.probe_source
    if kind == "device":
        target.unlink(missing_ok=True)
        target.symlink_to("/dev/zero")
    elif kind == "fifo":
        target.unlink(missing_ok=True)
        os.mkfifo(target)
    elif kind == "directory":
        target.unlink(missing_ok=True)
        target.mkdir()
    else:
        with open(target, "ab") as fh:
            fh.write(b" " * (cap + 1))
    expected = {"device": "is a device, not a regular file", "fifo": "is a FIFO, not a regular file",
                "directory": "is a directory, not a regular file",
                "huge": f"more than the {cap} this tool reads"}
    with pytest.raises(InputError, match=expected[kind]) as exc:
        project.load(good)
    assert "\n" not in str(exc.value)


# --------------------------------------------------------------------------- overrides of built-in rows, a limited max


def test_an_override_redefines_a_built_in_row_style_by_style(tmp_path: Path) -> None:
    """The fields given replace the table's, flags style by style; the probe stays the table's."""
    doc = {"override": {"x86": [{"name": "AVX2", "implies": ["FMA3"], "flags": {"gnu": ["-mavx2", "-mbmi2"]}}]}}
    loaded = project.load(_write(tmp_path, doc))
    t, stock = tables.table_for("x86_64", "gcc", loaded), tables.table_for("x86_64", "gcc")
    assert t.get("AVX2").implies == ("FMA3",) and "FMA3" in t.closure(["AVX2"])
    assert t.flags_for(["AVX2"])[-3:] == ["-mfma", "-mavx2", "-mbmi2"]
    assert t.get("AVX2").probe == stock.get("AVX2").probe  # the row, not the probe
    assert tables.table_for("x86_64", "msvc", loaded).flags_for(["AVX2"])[-1] == "/arch:AVX2"  # other styles kept
    assert "FMA3" not in stock.get("AVX2").implies  # nothing process-wide


def test_max_is_limited_to_the_names_a_project_runtime_knows(tmp_path: Path) -> None:
    limited = ["SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2"]
    det = _numpy_detection(project.load(_write(tmp_path, {"max": {"x86": limited}})))
    assert set(det.dispatch) <= set(limited) and "AVX2" in det.dispatch and "AVX2_ISA" not in det.dispatch
    assert "AVX2_ISA" in _numpy_detection(None).dispatch  # the stock tables' max: every feature
    assert "-DCCOPT_HAVE_AVX2_ISA=1" in det.defines(["AVX2"])  # ccopt's own run-time knows every name


@pytest.fixture
def numpy22() -> tables.Project:
    loaded = project.load(NUMPY22)
    assert loaded is not None
    return loaded


def _numpy_detection(proj: tables.Project | None) -> Any:
    from ccopt_meson import pipeline

    from .conftest import FakeCompiler

    req = Request(command=("fakecc",), dispatch="max -xop -fma4", project=proj)
    return pipeline.detect(req, runner=FakeCompiler())


def test_numpy_22s_avx2_row_is_the_forks(numpy22: tables.Project) -> None:
    """numpy 2.2's AVX2 ('match this to HWY_AVX2'): the fork's flags, in the fork's order, and FMA3 implied."""
    t = tables.table_for("x86_64", "gcc", numpy22)
    assert t.get("AVX2").implies == ("FMA3",) and "FMA3" in t.closure(["AVX2"])
    assert t.flags_for(["AVX2"]) == ["-msse", "-msse2", "-msse3", "-mssse3", "-msse4.1", "-mpopcnt", "-msse4.2",
                                     "-mavx", "-mf16c", "-mfma", "-mavx2", "-maes", "-mpclmul", "-mbmi", "-mbmi2"]
    assert t.get("AVX2").probe == tables.table_for("x86_64", "gcc").get("AVX2").probe  # 'like' brings the probe
    assert tables.table_for("x86_64", "msvc", numpy22).flags_for(["AVX2"])[-1] == "/arch:AVX2"


def test_max_selects_only_numpy_22s_names(numpy22: tables.Project) -> None:
    """numpy's NPY_CPU_FEATURE_* enum has 22 x86 names; ccopt's own max would add AVX2_ISA, X86_V3, ..."""
    names = tables.table_for("x86_64", "gcc", numpy22).features
    det = _numpy_detection(numpy22)
    assert len(names) == 22 and set(det.dispatch) <= set(names) and "AVX2_ISA" not in det.dispatch
    assert "-DCCOPT_HAVE_FMA3=1" in det.defines(["AVX2"])


def test_numpys_target_lists_name_avx2_as_the_fork_does(numpy22: tables.Project) -> None:
    """With the AVX2 row, every '(AVX2 FMA3)' of numpy 2.2.6's 22 recorded lists is the target AVX2 (the fork's
    name), never FMA3__AVX2, and every target is one of numpy's names."""
    from ccopt_meson.dispatch import parse_targets, select

    det = _numpy_detection(numpy22)
    lists = json.loads((ROOT / "bench" / "data" / "numpy-2.2.6-multi-targets.json").read_text())["sources"]
    seen = set()
    for src in lists:
        words = ["baseline"] if src["baseline"] else []
        words += ["(" + " ".join(t) + ")" if isinstance(t, list) else t for t in src["dispatch"]]
        names = [t.name for t in select(parse_targets(" ".join(words), src["header"], numpy22), det)]
        assert len(names) == len(set(names)), src["header"]
        seen |= set(names)
    assert "AVX2" in seen and "FMA3__AVX2" not in seen
    assert seen <= {*tables.table_for("x86_64", "gcc", numpy22).features, "BASELINE"}


def test_dispatch_implied_closes_cpu_dispatch_as_numpy_2_does(tmp_path: Path) -> None:
    """numpy 2's -Dcpu-dispatch=avx2 dispatches POPCNT SSE42 AVX F16C FMA3 AVX2 (the fork's implicit_c), so that
    its '(AVX2 FMA3)' targets exist; within numpy's names (no X86_V2) and above the baseline."""
    from ccopt_meson import pipeline

    from .conftest import FakeCompiler

    req = Request(command=("fakecc",), baseline="sse41", dispatch="avx2", project=project.load(NUMPY22))
    assert pipeline.detect(req, runner=FakeCompiler()).dispatch == ("AVX2", "FMA3", "F16C", "AVX", "SSE42", "POPCNT")
    as_named = project.load(_write(tmp_path, {**json.loads(NUMPY22.read_text()), "dispatch_implied": False}))
    assert pipeline.detect(req._replace(project=as_named), runner=FakeCompiler()).dispatch == ("AVX2",)


OVERRIDE_BAD = [
    ({"override": {"x86": [{"name": "AVX3"}]}}, r"'AVX3' is not a built-in feature of x86 \(did you mean 'AVX"),
    ({"override": {"x86": [{"name": "AVX2", "flagz": {}}]}}, "unknown key 'flagz'"),
    ({"override": {"x86": [{"name": "AVX2", "implies": ["FMA5"]}]}}, r"override.x86: AVX2 implies 'FMA5', which x86"),
    ({"override": {"x86": [{"name": "AVX2"}, {"name": "AVX2"}]}}, "AVX2 is redefined twice"),
    ({"override": {"x68": []}}, r"override: unknown family 'x68' \(did you mean 'x86'\?\)"),
    ({"override": []}, r"override: expected object, got \[\]"),
    ({"max": {"x86": ["AVX2", "AVX9"]}}, r"max.x86: unknown feature 'AVX9'"),
    ({"overide": {}}, r"unknown key 'overide' \(did you mean 'override'\?\)"),
    ({"dispatch_implied": "yes"}, r"dispatch_implied: expected boolean, got \"yes\""),
    ({"max": {"x86": [3]}}, r"max.x86\[0\]: expected string, got 3"),
    ([], r"expected object, got \[\]"),
]


@pytest.mark.parametrize(("doc", "message"), OVERRIDE_BAD, ids=[m[:30] for _, m in OVERRIDE_BAD])
def test_override_and_max_mistakes_name_the_file(tmp_path: Path, doc: Any, message: str) -> None:
    with pytest.raises(InputError, match=message) as exc:
        project.load(_write(tmp_path, doc))
    assert "f.json" in str(exc.value) and "\n" not in str(exc.value)


def test_an_override_may_disable_a_feature(tmp_path: Path) -> None:
    loaded = project.load(_write(tmp_path, {"override": {"x86": [{"name": "AVX512_SPR", "disable": "not yet"}]}}))
    assert tables.table_for("x86_64", "gcc", loaded).get("AVX512_SPR").disabled == "not yet"


# --------------------------------------------------------------------------- found in review


def test_two_probes_of_one_file_name_are_two_probes(tmp_path: Path, gcc: str) -> None:
    """a/check.c compiles, b/check.c does not: each feature gets its own verdict (staged apart)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "check.c").write_text("int ccopt_probe_goodx(void);\nint ccopt_probe_goodx(void) { return 0; }\n")
    (tmp_path / "b" / "check.c").write_text("#error not this one\n")
    feats = [_feature(name="GOODX", interest=5000, probe="a/check.c"),
             _feature(name="BADX", interest=5001, probe="b/check.c")]
    loaded = project.load(_write(tmp_path, {"features": {"x86": feats}}, probe=False))
    if os.uname().machine != "x86_64":
        pytest.skip("the features are x86 ones")
    doc = detect(Request(command=(gcc,), baseline="min", dispatch="goodx badx", project=loaded)).to_json()
    assert doc["features"]["GOODX"]["supported"] is True
    assert doc["features"]["BADX"]["supported"] is False and "not this one" in doc["features"]["BADX"]["reason"]


def test_a_probe_file_name_is_plain(tmp_path: Path) -> None:
    (tmp_path / 'a"b.c').write_text("int x;\n")
    with pytest.raises(InputError, match="probe 'a\"b.c' must be a C file named with letters"):
        project.load(_write(tmp_path, {"features": {"x86": [_feature(probe='a"b.c')]}}, probe=False))


def test_an_override_checks_its_per_compiler_implies(tmp_path: Path) -> None:
    doc = {"override": {"x86": [{"name": "SSE3", "overrides": [{"when": {"style": "gnu"}, "implies": ["NOPE"]}]}]}}
    with pytest.raises(InputError, match="override.x86: SSE3 implies 'NOPE', which x86 does not state"):
        project.load(_write(tmp_path, doc))


def test_explain_and_report_know_the_projects_features(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       gcc: str) -> None:
    if os.uname().machine != "x86_64":
        pytest.skip("ADX is an x86 feature")
    assert main(["explain", "ADX", "--cc", gcc, "--json", "--features-file", str(FIXTURE)]) == 0
    assert json.loads(capsys.readouterr().out)[0]["name"] == "ADX"
    assert main(["detect", "--cc", gcc, "--build-dir", str(tmp_path), "--features-file", str(FIXTURE)]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path), "--json", "--features-file", str(FIXTURE)]) == 0
    assert "ADX" in json.loads(capsys.readouterr().out)["features"]
    assert main(["report", str(tmp_path), "--json"]) == 0  # the features file the cache records
    assert "ADX" in json.loads(capsys.readouterr().out)["features"]


# --------------------------------------------------------------------------- findings of the fourth hardening pass


def test_an_overrides_per_compiler_implies_follows_the_one_rule(tmp_path: Path) -> None:
    """Per-compiler implies in an override skipped the check every other implies had.  One rule now holds for every
    row, whichever key stated it: an implication names a row of the family, in either direction (numpy's rings),
    and 'min' shows what it closes over."""
    doc = {"override": {"x86": [{"name": "SSE2", "overrides": [{"when": {"style": "gnu"}, "implies": ["AVX5"]}]}]}}
    with pytest.raises(InputError, match=r"override.x86: SSE2 implies 'AVX5', which x86 does not state"):
        project.load(_write(tmp_path, doc))
    doc = {"override": {"x86": [{"name": "SSE2", "implies": ["SSE3"]}, {"name": "SSE3", "implies": ["SSE2"]}]}}
    proj = project.load(_write(tmp_path, doc))
    t = tables.table_for("x86_64", "gcc", proj)
    assert t.closure(["SSE2"]) == t.closure(["SSE3"]) >= {"SSE2", "SSE3"}


def test_a_feature_defined_twice_is_refused(tmp_path: Path) -> None:
    """Duplicate feature names were accepted, the last one winning."""
    doc = {"features": {"x86": [_feature(), _feature(interest=5001)]}}
    with pytest.raises(InputError, match="features.x86: ZZ is stated twice; merge the two rows"):
        project.load(_write(tmp_path, doc))


@pytest.mark.parametrize("name", ["FMA3__AVX2", "ZZ_", "A__B"])
def test_a_feature_name_cannot_spell_a_targets_name(tmp_path: Path, name: str) -> None:
    """A feature named FMA3__AVX2 merged with the (FMA3 AVX2) target: '__' joins a target's members."""
    with pytest.raises(InputError, match=r"features.x86\[0\].name: '.*' is not a feature name"):
        project.load(_write(tmp_path, {"features": {"x86": [_feature(name=name)]}}))


@pytest.mark.parametrize(("recipe", "message"), [
    ({"xcr0": 1 << 40}, r"xcr0: 1099511627776 is above 4294967295"),
    ({"win_pf": 1 << 40}, r"win_pf: 1099511627776 is above 2147483647"),
    ({"win_pf": 0}, r"win_pf: 0 is below 1"),
    ({"hwcap": [64]}, r"hwcap\[0\]: 64 is above 63"),
    ({"xcomp_perm": 64}, r"xcomp_perm: 64 is above 63"),
])
def test_runtime_recipe_values_the_c_table_cannot_hold_are_refused(tmp_path: Path, recipe: dict[str, Any],
                                                                      message: str) -> None:
    """Huge xcr0/win_pf values were truncated in the C table with only compiler warnings."""
    with pytest.raises(InputError, match=message):
        project.load(_write(tmp_path, {"features": {"x86": [_feature(runtime={"*": recipe})]}}))


@pytest.mark.parametrize("entry", [[1, 0, "edx"], ["1", 0, "edx", 26], [1, 0, "exx", 26], [1, 0, "edx", 32],
                                   [1, 0, "edx", 26, 0], 7])
def test_a_malformed_cpuid_entry_is_one_line(tmp_path: Path, entry: Any) -> None:
    """A malformed cpuid entry crashed every setup (a traceback while the run-time table was written)."""
    with pytest.raises(InputError, match=r"features file '.*f.json': features.x86\[0\].runtime.\*.cpuid\[0\]"):
        project.load(_write(tmp_path, {"features": {"x86": [_feature(runtime={"*": {"cpuid": [entry]}})]}}))


@pytest.mark.parametrize("probe", ["a\u0000b/p.c", "\ud800/p.c", "dir\n/p.c"])
def test_a_nul_or_lone_surrogate_in_a_probe_path_is_one_line(tmp_path: Path, probe: str) -> None:
    """A NUL or a lone surrogate in a probe path was a traceback (ValueError, UnicodeEncodeError)."""
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"features": {"x86": [_feature(probe=probe)]}}))
    with pytest.raises(InputError, match=r"probe: '.*' is not a file path \(no control character, valid Unicode\)"):
        project.load(path)


def test_the_bounded_reader_refuses_such_a_path_in_one_line() -> None:
    from ccopt_meson import fsio

    for bad in ("a\0b", "\ud800"):
        with pytest.raises(InputError, match="the path holds a NUL or is not valid Unicode"):
            fsio.read_bounded(bad, 10, "probe")


def test_explain_of_a_configured_build_knows_the_features_file_its_cache_records(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The request stored whole: explain --build-dir of a Meson build made with a features file takes its
    names without being told the file again."""
    from ccopt_meson import pipeline

    from .conftest import FakeCompiler

    build = tmp_path / "build"
    (build / "meson-private").mkdir(parents=True)
    (build / "meson-private" / "coredata.dat").write_bytes(b"")
    pipeline.detect(Request(command=("fakecc",), project=project.load(FIXTURE)), build_dir=build,
                    runner=FakeCompiler())
    assert main(["explain", "ADX", "--build-dir", str(build), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["name"] == "ADX"
