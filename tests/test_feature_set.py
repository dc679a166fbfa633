"""A project's own feature set (a features file's ``feature_set``): the project's universe of names, rows reusing
built-in ones by reference, its own min, retired names, its ``-NAME`` and target-list rules, its run-time test."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ccopt_meson import Request, detect, project, rules, tables
from ccopt_meson.dispatch import parse_targets, select
from ccopt_meson.emit import numpy_dispatch_header
from ccopt_meson.errors import DispatchSourceError, InputError
from ccopt_meson.records import Macros
from ccopt_meson.resolve import tokenize

from .conftest import ROOT, need

FIXTURE = ROOT / "tests" / "projects" / "feature_set" / "features.json"
NUMPY = Macros("NPY_", "numpy")
x86_only = pytest.mark.skipif(os.uname().machine != "x86_64", reason="the fixture's levels are x86 features")


@pytest.fixture
def proj() -> tables.Project:
    loaded = project.load(FIXTURE)
    assert loaded is not None and loaded.policies.own_detect
    return loaded


def test_the_set_is_the_whole_universe(proj: tables.Project) -> None:
    t = tables.table_for("x86_64", "gcc", proj)
    assert list(t.features) == ["LEVEL2", "LEVEL3", "LEVEL4"] and t.machine.min == ("LEVEL2",)
    assert set(tables.all_feature_names(proj)) == {"LEVEL2", "LEVEL3", "LEVEL4", "NEON", "ASIMD"}
    assert list(tables.table_for("aarch64", "gcc", proj).features) == ["NEON", "ASIMD"]
    assert not tables.table_for("ppc64le", "gcc", proj).features  # a family the set does not name: no names
    assert tables.table_for("ppc64le", "gcc", proj).machine.min == ()
    assert "AVX2" in tables.table_for("x86_64", "gcc").features  # nothing is process-wide state


def test_rows_reuse_built_in_rows_by_reference(proj: tables.Project) -> None:
    t = tables.table_for("x86_64", "gcc", proj)
    builtin = tables.table_for("x86_64", "gcc")
    level3 = t.get("LEVEL3")
    assert level3.probe == builtin.get("AVX2").probe and level3.headers == builtin.get("AVX2").headers
    assert level3.implies == ("LEVEL2",) and level3.flags[:2] == ("-mavx", "-mavx2")
    assert tables.table_for("x86_64", "msvc", proj).get("LEVEL3").flags == ("/arch:AVX2",)  # an inherited style
    assert tables.table_for("x86_64", "msvc", proj).get("LEVEL4").disabled == "broken on MSVC"
    # extra checks follow the row that lists them (LEVEL4 is like AVX512_SKX)
    assert {e.feature for e in t.extra_checks.values()} == {"LEVEL4"}


def test_word_size_rows(proj: tables.Project) -> None:
    t = tables.table_for("x86", "gcc", proj)
    assert "-mfpmath=sse" in t.get("LEVEL2").flags and "CX16" not in t.get("LEVEL2").group
    assert t.get("LEVEL4").disabled == "not on 32-bit x86" and t.machine.min == ("LEVEL2",)


def test_groups_are_any_macro_names_and_defines_cover_the_closure(proj: tables.Project, fake: Any) -> None:
    det = detect(Request(command=("fakecc",), baseline="min", project=proj, macros=NUMPY), runner=fake())
    assert det.baseline == ("LEVEL2",) and det.dispatch == ("LEVEL4", "LEVEL3")
    args = select(parse_targets("LEVEL3", "k", proj), det)[0].args
    have = [a[len("-DNPY_HAVE_"):] for a in args if a.startswith("-DNPY_HAVE_")]
    assert have == ["LEVEL2", "SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "SSE42", "POPCNT", "CX16",
                    "LEVEL3", "AVX", "AVX2", "FMA3", "F16C", "BMI", "BMI2"]
    assert "-DNPY_MTARGETS_CURRENT=LEVEL3" in args


def test_names_outside_the_set_are_one_line_errors(proj: tables.Project) -> None:
    with pytest.raises(InputError, match=r"^cpu-dispatch: unknown feature 'avx2'.*'ccopt-meson features' lists"):
        tokenize("avx2", "cpu-dispatch", proj)
    with pytest.raises(DispatchSourceError, match="AVX2"):
        parse_targets("AVX2 LEVEL3", "k", proj)


def test_retired_names_redirect_with_a_warning(proj: tables.Project) -> None:
    notes: list[str] = []
    toks = tokenize("sse41 -avx512f xop +avx", "cpu-baseline", proj, notes)
    assert [(t.op, t.word) for t in toks] == [("+", "LEVEL2"), ("+", "LEVEL3")]
    assert notes == [
        "warning: cpu-baseline: SSE41 is no longer a feature name of this project; it stands for LEVEL2",
        "warning: cpu-baseline: AVX512F is no longer a feature name of this project; it stands for LEVEL3 "
        "(removing a retired name is ignored: what it stands for is more)",
        "warning: cpu-baseline: XOP is no longer a feature name of this project and is ignored",
        "warning: cpu-baseline: AVX is no longer a feature name of this project; it stands for LEVEL3"]


@pytest.mark.parametrize(("minus", "dispatch", "expected"), [
    ("successors", "max -level3", ()),  # LEVEL4 implies LEVEL3: removed with it (numpy 2.5)
    ("feature", "max -level3", ("LEVEL4", "LEVEL3")),  # removed alone, then implied again (numpy 2.2)
    ("successors", "max -level4", ("LEVEL3",)),
])
def test_minus_semantics(tmp_path: Path, fake: Any, minus: str, dispatch: str, expected: tuple[str, ...]) -> None:
    doc = json.loads(FIXTURE.read_text())
    doc["minus"] = minus
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    req = Request(command=("fakecc",), baseline="min", dispatch=dispatch, project=project.load(path))
    det = detect(req, runner=fake())
    assert det.dispatch == expected


@x86_only
@pytest.mark.parametrize(("policy", "args", "baseline"), [
    ("auto", (), ("LEVEL2",)),
    ("auto", ("-march=haswell",), ("LEVEL2", "LEVEL3")),
    ("disabled", ("-march=haswell",), ("LEVEL2",)),
    ("enabled", ("-march=haswell",), ("LEVEL2", "LEVEL3")),
    ("enabled", ("-mavx2", "-mfma", "-mbmi2"), ("LEVEL2", "LEVEL3")),  # no CPU picked, yet detected
])
def test_detect_policy(proj: tables.Project, gcc: str, policy: str, args: tuple[str, ...],
                       baseline: tuple[str, ...]) -> None:
    # 'min': numpy's default, which its features file sets
    det = detect(Request(command=(gcc,), baseline="min", args=args, project=proj, baseline_detect=policy))
    assert det.baseline == baseline


def test_detect_policy_is_checked(proj: tables.Project) -> None:
    with pytest.raises(InputError, match="baseline-detect: 'sometimes' is not one of auto, enabled, disabled"):
        detect(Request(command=("cc",), project=proj, baseline_detect="sometimes"))


@x86_only
def test_native_gives_the_sets_names_only(proj: tables.Project, gcc: str) -> None:
    det = detect(Request(command=(gcc,), baseline="native", project=proj))
    assert set(det.baseline) <= {"LEVEL2", "LEVEL3", "LEVEL4"} and "LEVEL2" in det.baseline


def test_run_time_test_follows_each_rows_detect(proj: tables.Project, fake: Any) -> None:
    t = tables.table_for("x86_64", "gcc", proj)
    assert t.detect_of(["LEVEL3"]) == ["LEVEL2", "LEVEL3"]
    assert t.detect_of(["LEVEL4"]) == ["AVX512F", "AVX512_SKX"]  # its first item replaces all before it
    det = detect(Request(command=("fakecc",), project=proj, macros=NUMPY), runner=fake())
    text = numpy_dispatch_header(det, "k.dispatch.c", select(parse_targets("LEVEL4 LEVEL3", "k", proj), det))
    assert "EXEC_CB((TEST_CB(AVX512F)&&TEST_CB(AVX512_SKX)), LEVEL4, __VA_ARGS__)" in text
    assert "EXEC_CB((TEST_CB(LEVEL2)&&TEST_CB(LEVEL3)), LEVEL3, __VA_ARGS__)" in text


def test_default_detect_is_the_group_else_the_name(tmp_path: Path) -> None:
    doc = json.loads(FIXTURE.read_text())
    for row in doc["feature_set"]["x86"]["features"]:
        row.pop("detect", None)
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    t = tables.table_for("x86_64", "gcc", project.load(path))
    assert t.detect_of(["LEVEL2"])[:2] == ["SSE", "SSE2"]
    assert tables.table_for("aarch64", "gcc", project.load(path)).detect_of(["ASIMD"]) == ["NEON", "ASIMD"]


def test_lists_without_baseline_keep_covered_targets(proj: tables.Project, fake: Any) -> None:
    det = detect(Request(command=("fakecc",), baseline="level3", project=proj), runner=fake())
    assert det.baseline == ("LEVEL2", "LEVEL3")
    assert [t.name for t in select(parse_targets("LEVEL4 LEVEL3", "k", proj), det)] == ["LEVEL4", "LEVEL3"]
    assert [t.name for t in select(parse_targets("baseline LEVEL4 LEVEL3", "k", proj), det)] == ["LEVEL4", "BASELINE"]


NUMPY25 = ROOT / "examples" / "numpy" / "2.5.5" / "ccopt-numpy.json"
RING_LIST = "ASIMDHP ASIMD NEON_VFPV4 NEON"  # as numpy's sources list them (loops_hyperbolic, argfunc, ...)


def _ring_targets(proj: tables.Project | None, fake: Any) -> dict[str, list[str]]:
    """Each target of RING_LIST with an empty baseline on aarch64, and the NPY_HAVE_* names it defines."""
    det = detect(Request(command=("fakecc",), baseline="none", project=proj, macros=NUMPY),
                 runner=fake(scenario="gcc12-aarch64"))
    return {t.name: [a[len("-DNPY_HAVE_"):] for a in t.args if a.startswith("-DNPY_HAVE_")]
            for t in select(parse_targets(RING_LIST, "k", proj), det)}


def test_rings_kept_apart_build_each_listed_member_with_its_own_defines(fake: Any) -> None:
    numpy = project.load(NUMPY25)
    assert numpy is not None and numpy.policies.rings == "separate"
    got = _ring_targets(numpy, fake)
    # what numpy's fork builds (its dump of cpu-baseline=none): each member, defining itself and the members
    # ranked above it; a feature outside the ring (ASIMDHP) defines the whole ring it implies
    assert list(got) == ["ASIMDHP", "ASIMD", "NEON_VFPV4", "NEON"]
    assert got["ASIMD"] == ["ASIMD"] and got["NEON_VFPV4"] == ["NEON_VFPV4", "ASIMD"]
    assert got["NEON"] == ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
    assert set(got["ASIMDHP"]) == {"NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD", "ASIMDHP"}


def test_rings_fold_by_default(fake: Any, tmp_path: Path) -> None:
    doc = json.loads(NUMPY25.read_text())
    del doc["rings"]
    (tmp_path / "f.json").write_text(json.dumps(doc))
    folded = project.load(tmp_path / "f.json")
    assert folded is not None and folded.policies.rings == "fold"
    got = _ring_targets(folded, fake)
    assert list(got) == ["ASIMDHP", "ASIMD"]  # one target for the ring, defining every member
    assert set(got["ASIMD"]) == {"NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"}


def test_a_baseline_holding_the_ring_defines_all_of_it_either_way(fake: Any) -> None:
    numpy = project.load(NUMPY25)
    det = detect(Request(command=("fakecc",), project=numpy, macros=NUMPY), runner=fake(scenario="gcc12-aarch64"))
    assert {a for a in det.baseline_args() if a.startswith("-DNPY_HAVE_")} == {
        f"-DNPY_HAVE_{n}" for n in ("NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD")}


def test_a_cpu_the_users_args_pick_is_given_by_its_own_flags_too(fake: Any) -> None:
    """``-Dc_args=-march=armv8.2-a+fp16``: the detected ASIMDHP's flag is in the baseline's args, which numpy gives
    its C++ objects too, where c_args never reach (NPY_HAVE_ASIMDHP there, and the flag, as the fork does)."""
    numpy = project.load(NUMPY25)
    det = detect(Request(command=("fakecc",), args=("-march=armv8.2-a+fp16",), project=numpy, macros=NUMPY),
                 runner=fake(scenario="gcc12-aarch64"))
    assert "ASIMDHP" in det.baseline and det.baseline_args()[0] == "-march=armv8.2-a+fp16"


def test_plus_parts_follow_the_order_the_project_states() -> None:
    numpy = project.load(NUMPY25)
    assert numpy is not None and numpy.policies.plus_parts == "descending"
    # numpy's Meson fork: a row's value, then what it kept of the lower rows' flags (cpu-baseline=sve)
    assert tables.table_for("aarch64", "gcc", numpy).flags_for(["SVE"]) == ["-march=armv8.2-a+sve+fp16"]
    assert tables.table_for("aarch64", "gcc", numpy).flags_for(["ASIMDFHM"]) == ["-march=armv8.2-a+fp16fml+fp16"]
    # the built-in tables keep numpy.distutils' order, lowest row first
    assert tables.table_for("aarch64", "gcc").flags_for(["SVE"]) == ["-march=armv8.2-a+fp16+sve"]


def _load(tmp_path: Path, change: dict[str, Any], family: str = "x86") -> None:
    doc = json.loads(FIXTURE.read_text())
    for key, value in change.items():
        if key.startswith("row:"):
            doc["feature_set"][family]["features"][int(key[4:])].update(value)
        else:
            doc[key] = value
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    project.load(path)


@pytest.mark.parametrize(("change", "message"), [
    ({"row:1": {"like": "AVX3"}}, "LEVEL3 is like 'AVX3', not a built-in feature of x86 (did you mean"),
    ({"row:1": {"implies": ["SSE42"]}}, "LEVEL3 implies 'SSE42', which x86 does not state"),
    ({"row:1": {"interest": 1}}, "LEVEL3: interest 1 is LEVEL2's; pick another"),
    ({"row:1": {"probe": "@SSE42"}}, "LEVEL3 and LEVEL2 share a probe; give one its own"),
    ({"row:1": {"probe": "@SSE99"}}, "LEVEL3's probe '@SSE99' names no built-in feature of x86"),
    ({"row:1": {"extra_checks": ["AVX512F_REDUCED"]}}, "extra check 'AVX512F_REDUCED' is not one of x86's"),
    ({"row:1": {"flavour": 1}}, "unknown key 'flavour'"),
    ({"retired": {"AVX2": "LEVEL5"}}, "retired: AVX2 stands for 'LEVEL5', which the project does not know"),
    ({"retired": {"LEVEL2": "LEVEL3"}}, "retired: LEVEL2 is a name the project still knows"),
    ({"minus": "all"}, "minus: \"all\" is not one of ['successors', 'feature']"),
    ({"keep_covered": "yes"}, "keep_covered: expected boolean, got \"yes\""),
    ({"rings": "split"}, "rings: \"split\" is not one of ['fold', 'separate']"),
    ({"plus_parts": "up"}, "plus_parts: \"up\" is not one of ['ascending', 'descending']"),
    ({"max": {"x86": ["LEVEL2"]}}, "'max' adds to the built-in tables, which a 'feature_set' replaces"),
])
def test_mistakes_are_one_line_errors(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=r"f\.json'?: .*" + _escaped(message)) as exc:
        _load(tmp_path, change)
    assert "\n" not in str(exc.value)


def test_min_names_a_machine_and_a_row(tmp_path: Path) -> None:
    doc = json.loads(FIXTURE.read_text())
    doc["feature_set"]["x86"]["min"] = {"x86-64": ["LEVEL2"]}
    (tmp_path / "f.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="min: 'x86-64' is not a machine of x86"):
        project.load(tmp_path / "f.json")
    doc["feature_set"]["x86"]["min"] = {"x86_64": ["SSE2"]}
    (tmp_path / "f.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="min.x86_64: 'SSE2' is not stated in the set"):
        project.load(tmp_path / "f.json")


def _escaped(text: str) -> str:
    import re

    return re.escape(text)


def test_the_docs_snippet_loads(tmp_path: Path) -> None:
    from .snippets import snippet

    (tmp_path / "f.json").write_text(snippet("project-features/feature-set"))
    loaded = project.load(tmp_path / "f.json")
    assert loaded is not None and loaded.retired["SSE41"] == "LEVEL2"
    t = tables.table_for("x86_64", "gcc", loaded)
    assert list(t.features) == ["LEVEL2", "LEVEL3"] and t.get("LEVEL3").probe == tables.table_for(
        "x86_64", "gcc").get("AVX2").probe
    assert tables.table_for("x86_64", "clang", loaded).get("LEVEL3").disabled == "a reason, shown by explain"
    assert "CX16" not in tables.table_for("x86", "gcc", loaded).get("LEVEL2").group


def test_a_row_may_replace_lower_flags(tmp_path: Path) -> None:
    doc = json.loads(FIXTURE.read_text())
    doc["feature_set"]["x86"]["features"][1]["flags_replace"] = "-msse"  # LEVEL3 drops the flags below it that start so
    (tmp_path / "f.json").write_text(json.dumps(doc))
    t = tables.table_for("x86_64", "gcc", project.load(tmp_path / "f.json"))
    assert t.flags_for(["LEVEL3"])[:3] == ["-mssse3", "-mpopcnt", "-mcx16"]  # -msse, -msse2, ... -msse4.2 dropped
    assert t.flags_for(["LEVEL2"])[0] == "-msse"


@pytest.mark.parametrize("version", ["2.5.5", "2.2.6"])
def test_numpys_feature_sets(version: str) -> None:
    """examples/numpy's data: numpy's names only, its rules (the slow test compares them with numpy's fork)."""
    proj = project.load(ROOT / "examples" / "numpy" / version / "ccopt-numpy.json")
    assert proj is not None and proj.policies.own_detect
    x86 = tables.table_for("x86_64", "gcc", proj)
    if version == "2.5.5":
        assert list(x86.features) == ["X86_V2", "X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]
        assert x86.detect_of(["X86_V3"]) == ["X86_V2", "X86_V3"] and proj.retired["AVX512F"] == "X86_V3"
        i686 = tables.table_for("x86", "gcc", proj)
        assert "-mfpmath=sse" in i686.flags_for(["X86_V2"]) and i686.get("X86_V4").disabled
        assert tables.table_for("x86_64", "clang", proj).get("AVX512_SPR").disabled
        assert tables.table_for("ppc64le", "gcc", proj).flags_for(["VSX3"])[-1] == "-mcpu=power9"
    else:
        assert len(x86.features) == 22 and x86.machine.min == ("SSE3",) and proj.policies.minus == "feature"
        assert x86.detect_of(["AVX2"]) == ["POPCNT", "AVX", "F16C", "FMA3", "AVX2"]
        assert "ASIMDDP" not in tables.table_for("aarch64", "gcc", proj).features
    arm = tables.table_for("aarch64", "gcc", proj)
    assert arm.closure(arm.machine.min) == {"NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"}
    assert arm.detect_of(["ASIMDHP"]) == ["ASIMD", "ASIMDHP"]


def _level_test(level: str) -> dict[str, Any]:
    """A run-time test checking all that the built-in x86-64 ``level`` checks (what its -march= enables)."""
    t = tables.table_for("x86_64", "gcc")
    return {"*": rules.union_recipes(t.get(n).runtime for n in t.closure([level]))}


@x86_only
def test_a_covered_target_keeps_its_own_flags(tmp_path: Path, gcc: str) -> None:
    """numpy's fork builds a kept covered target with its own flags, after the baseline's (its -march= wins)."""
    doc = json.loads(FIXTURE.read_text())
    for row, level in zip(doc["feature_set"]["x86"]["features"][1:], ("X86_V3", "X86_V4")):
        row.update(flags={"gnu": [f"-march={level.lower().replace('_', '-').replace('x86-v', 'x86-64-v')}"]},
                   runtime=_level_test(level))
    (tmp_path / "f.json").write_text(json.dumps(doc))
    proj = project.load(tmp_path / "f.json")
    det = detect(Request(command=(gcc,), baseline="level4", project=proj))
    assert det.baseline == ("LEVEL2", "LEVEL3", "LEVEL4")
    covered = select(parse_targets("LEVEL3", "k", proj), det)[0]
    assert "-march=x86-64-v3" in covered.args and "-march=x86-64-v4" not in covered.args
    assert "-march=x86-64-v4" in det.baseline_args()


# one MSVC version of each stretch numpy's meson_cpu/x86 sets apart (2.2.6 states no version condition)
MSVC_VERSIONS = {"2.5.5": ("19.29", "19.30", "19.40"), "2.2.6": ()}


@pytest.mark.parametrize("version", ["2.5.5", "2.2.6"])
def test_numpys_resolved_catalog_matches_its_golden_dump(version: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every row of numpy's set as resolved ('features --json'): what 'like' inherits from ccopt's tables (run-time
    test, probe, macros, flags) is in the example's dump, so an inherited change cannot pass unnoticed
    (CCOPT_UPDATE_GOLDEN=1 writes it anew); and each row's MSVC flags (or disable reason) at one version of
    each stretch numpy's version conditions set apart."""
    from ccopt_meson.cli import main

    example = ROOT / "examples" / "numpy" / version
    dump: dict[str, Any] = {}
    for arch in ("x86_64", "aarch64", "ppc64le", "s390x"):
        assert main(["features", "--arch", arch, "--json", "--features-file", str(example / "ccopt-numpy.json")]) == 0
        dump[arch] = json.loads(capsys.readouterr().out)
    for arch, msvc in ((a, v) for a in ("x86_64", "x86") for v in MSVC_VERSIONS[version]):
        assert main(["features", "--arch", arch, "--json", "--compiler-id", "msvc", "--compiler-version", msvc,
                     "--features-file", str(example / "ccopt-numpy.json")]) == 0
        rows = json.loads(capsys.readouterr().out)["features"].items()
        dump.setdefault(f"{arch} msvc", {})[msvc] = {n: r["disabled"] or r["flags"] for n, r in rows}
    text = json.dumps(dump, indent=1, sort_keys=True) + "\n"
    golden = example / "features.golden.json"
    if os.environ.get("CCOPT_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text(), f"{golden} changed; rerun with CCOPT_UPDATE_GOLDEN=1 if intended"


NUMPY_ARM = ["ASIMDHP", "ASIMDDP", "ASIMDFHM", "SVE"]


@pytest.mark.parametrize(("args", "covered", "line", "processes"), [
    # the macro dump, the dump of -march=armv8.2-a after the user's flag, the batch, the merged flags' macros
    ("-march=armv8-a", (), None, 4), ("-march=armv8-a+crc", (), None, 4),
    # gcc's +sve defines the fp16 macros, but arm_neon.h's fp16 intrinsics fail on the armv8.0 base: as numpy's
    # fork tests its programs under the user's flags, ASIMDHP and SVE are not the baseline (and the one compile of
    # those probes under the user's args alone fails, so each is compiled apart)
    ("-march=armv8-a+sve", (), None, 8),
    # -mcpu=neoverse-n1 is armv8.2-a+fp16+dotprod to gcc: the baseline's line is -march=..., as the fork's, on C++
    # lines too, where the user's c_args do not reach; one compile more: the detected probes under the user's args
    ("-mcpu=neoverse-n1", ("ASIMDHP", "ASIMDDP"), "-march=armv8.2-a+dotprod+fp16", 5),
    # armv8.4-a: -march=armv8.2-a would lower it (gcc: "switch conflicts"); our +ext parts go onto the -mcpu
    ("-mcpu=neoverse-v1", ("ASIMDHP", "ASIMDDP", "ASIMDFHM", "SVE"), "-mcpu=neoverse-v1+sve+fp16fml+dotprod+fp16", 5),
])
def test_numpys_arm_targets_under_a_packagers_march(args: str, covered: tuple[str, ...], line: str | None,
                                                    processes: int) -> None:
    """With -Dc_args=-march=armv8-a numpy's fork dispatched ASIMDHP ASIMDDP ASIMDFHM SVE and the port nothing,
    silently: +fp16 went onto the user's armv8.0 base, where gcc 12 refuses the intrinsics.  Every numpy arm
    target is built again, in the baseline (what the user's flag enables and builds) or dispatched, each on the
    fork's line where the compiler says it keeps what the user's flag enables."""
    cc = need("aarch64-linux-gnu-gcc")
    proj = project.load(ROOT / "examples" / "numpy" / "2.5.5" / "ccopt-numpy.json")
    det = detect(Request(command=(cc,), args=(args,), project=proj, cross=True))
    assert [n for n in NUMPY_ARM if n in det.baseline] == list(covered)
    assert sorted(det.dispatch) == sorted(n for n in NUMPY_ARM if n not in covered), det.notes
    assert det.baseline_flags() == ([line] if line else [])
    assert det.probes == processes and not [n for n in det.notes if n.startswith("warning: ")]


def test_a_target_the_users_cpu_cannot_build_is_named() -> None:
    """-mcpu=cortex-a53 (an armv8.0 CPU) takes ASIMDHP's +fp16, whose intrinsics gcc 12 refuses there: the
    target is not built, and a warning says the user's flag is why."""
    cc = need("aarch64-linux-gnu-gcc")
    det = detect(Request(command=(cc,), args=("-mcpu=cortex-a53",), dispatch="asimdhp asimddp", cross=True))
    assert det.dispatch == ()
    warned = [n for n in det.notes if n.startswith("warning: ")]
    assert any(n.startswith("warning: ASIMDHP cannot be built under the compile args' -mcpu=cortex-a53: its flags "
                            "become -mcpu=cortex-a53+fp16 (") for n in warned), warned
    assert any(n.startswith("warning: ASIMDDP cannot be built under") for n in warned)
