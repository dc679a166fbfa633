"""The rules every feature row follows (ccopt_meson/rules.py), whichever input stated it: the findings of the fifth
adversarial pass (issue 32), each named after the behaviour it keeps (docs/explanation/robustness.md maps the
findings' numbers, F1 .. F25, to these tests), and property tests over generated feature sets."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccopt_meson import emit_runtime, project, rules, tables
from ccopt_meson.cli import main
from ccopt_meson.dispatch import parse_targets
from ccopt_meson.errors import InputError, TableError
from ccopt_meson.meson_glue import _renamed, kernel
from ccopt_meson.resolve import tokenize

from .conftest import ROOT, need

FIXTURE = ROOT / "tests" / "projects" / "feature_set" / "features.json"
UNTIMED = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]  # tmp_path is reused; load is no failure
FMA_BIT = [1, 0, "ecx", 12]
RUNTIME = ROOT / "ccopt_meson" / "runtime"


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    return path


def _set(*rows: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"feature_set": {"x86": {"features": list(rows)}}, **top}


def _row(name: str, interest: int, like: str = "SSE2", **fields: Any) -> dict[str, Any]:
    return {"name": name, "like": like, "interest": interest, "implies": [], **fields}


@pytest.mark.parametrize("fam", tables.families())
def test_builtin_tables_pass_the_checker_project_rows_pass(fam: str) -> None:
    """The one checker project.load runs on every file's rows passes each built-in table as written, its rule
    on run-time tests read for every row (a file's rows that inherit a test were widened already)."""
    rows = tables.builtin_rows(fam)
    rules.check_family(fam, rows, stated=[r.name for r in rows])


def test_the_checker_names_the_built_in_table_of_a_bad_row() -> None:
    """A built-in row that breaks a rule is named by its table, as a file's row is by its section."""
    rows = tables.builtin_rows("x86")
    bad = rows[1]._replace(fields={**rows[1].fields, "interest": rows[0].fields["interest"]})
    with pytest.raises(TableError, match=rf"^x86.json: {bad.name}: interest \d+ is {rows[0].name}'s; pick another$"):
        rules.check_family("x86", (rows[0], bad, *rows[2:]))


@pytest.mark.parametrize("pattern", ["(", "[a-", "a)", "*x"])
def test_a_pattern_that_is_not_a_regex_is_one_error_line(tmp_path: Path, pattern: str) -> None:
    """flags_replace / a detect item's replaces that is not a regex was a traceback at configure or at targets."""
    for fields in ({"flags_replace": pattern}, {"detect": [{"name": "P", "replaces": pattern}]}):
        with pytest.raises(InputError, match=r"feature_set.x86: P's .* is not a regular expression") as exc:
            project.load(_write(tmp_path, _set(_row("P", 1, **fields))))
        assert "\n" not in str(exc.value)


def test_a_row_named_like_a_multi_target_is_refused(tmp_path: Path) -> None:
    """A feature_set row P__Q merged with the target (P Q) into one library compiled with P__Q's flags."""
    doc = _set(_row("P", 1), _row("Q", 2, like="SSE3"), _row("P__Q", 3, like="AVX512F"))
    with pytest.raises(InputError, match=r"'P__Q' does not match|not a feature name"):
        project.load(_write(tmp_path, doc))


@pytest.mark.parametrize("keyword", ["NONE", "MIN", "MAX", "NATIVE", "DETECT", "BASELINE"])
def test_a_keyword_cannot_be_retired(tmp_path: Path, keyword: str) -> None:
    """"retired": {"NONE": "L3"} turned cpu-baseline=none into an AVX2 baseline without a word."""
    doc = _set(_row("L2", 1), _row("L3", 2, like="AVX2"), retired={keyword: "L3"})
    with pytest.raises(InputError, match=f"retired: '{keyword}' is a keyword"):
        project.load(_write(tmp_path, doc))


def test_a_like_row_keeps_the_built_in_rows_machine_overrides() -> None:
    """{"name": "NEON", "like": "NEON"} copied armv7's -mfpu=neon to aarch64, which refuses it: no SIMD at all."""
    proj = project.load(FIXTURE)
    aarch64 = tables.table_for("aarch64", "gcc", proj)
    assert aarch64.get("NEON").flags == () and aarch64.get("ASIMD").flags == ()
    assert tables.table_for("armhf", "gcc", proj).get("NEON").flags == ("-mfpu=neon",)


@pytest.mark.parametrize("pattern", ["-(m+)+$", "(A+)+C", "(a|aa)*b", "a*a*b", "(a)\\1", "a{1,99}", "(?=a)a"])
def test_a_pattern_that_can_take_exponential_time_is_refused(tmp_path: Path, pattern: str) -> None:
    """flags_replace '-(m+)+$' against a long flag hung configure past SIGTERM; replaces '(A+)+C' hung targets."""
    assert rules.unsafe_pattern(pattern)
    with pytest.raises(InputError, match="feature_set.x86: P's flags_replace"):
        project.load(_write(tmp_path, _set(_row("P", 1, flags_replace=pattern))))


@pytest.mark.parametrize("pattern", [".*SSE.*", ".*", "NEON.*", ".*vsx", ".*[mcpu=|vsx].*", ".*(?:mcpu=|vsx).*",
                                     "VSX", "VX.*"])
def test_numpys_flag_patterns_are_not_taken_for_exponential_ones(pattern: str) -> None:
    assert rules.unsafe_pattern(pattern) == ""


def test_a_like_rows_run_time_test_covers_what_its_flags_enable() -> None:
    """LEVEL3 like AVX2 with -mfma was picked on the AVX2 bit alone; its FMA code died under Haswell,-fma."""
    proj = project.load(FIXTURE)
    t = tables.table_for("x86_64", "gcc", proj)
    assert FMA_BIT in t.get("LEVEL3").runtime["cpuid"] and [7, 0, "ebx", 5] in t.get("LEVEL3").runtime["cpuid"]
    assert [1, 0, "ecx", 23] in t.get("LEVEL2").runtime["cpuid"]  # -mpopcnt: POPCNT's bit, not SSE4.2's alone


@pytest.mark.slow
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the levels are x86 features, run under qemu-x86_64")
@pytest.mark.parametrize(("cpu", "level"), [("Haswell", "LEVEL3"), ("Haswell,-fma", "LEVEL2"),
                                            ("Haswell,-bmi2", "LEVEL2"), ("Nehalem", "LEVEL2")])
def test_under_qemu_a_cpu_without_fma_falls_back_to_the_level_below(tmp_path: Path, cpu: str, level: str) -> None:
    """The fixture's run-time, built from its features file, on emulated CPUs: LEVEL3 (-mfma, -mbmi2, ...) is picked
    only where every instruction set its flags enable is there (it was picked under Haswell,-fma)."""
    emit_runtime.write_table(tmp_path, project=project.load(FIXTURE))
    binary = tmp_path / "info"
    subprocess.run([need("gcc"), "-static", "-O1", f"-I{RUNTIME}", f"-I{tmp_path}", str(RUNTIME / "ccopt_cpu.c"),
                    str(RUNTIME / "ccopt_cpu_info.c"), "-o", str(binary)], check=True, timeout=120)
    out = subprocess.run([need("qemu-x86_64-static"), "-cpu", cpu, str(binary), "--json"], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    assert json.loads(out)["level"] == level


def test_a_stated_run_time_test_that_misses_a_flag_is_refused(tmp_path: Path) -> None:
    row = _row("L3", 1, like="AVX2", flags={"gnu": ["-mavx2", "-mfma"]}, runtime={"*": {"cpuid": [[7, 0, "ebx", 5]]}})
    with pytest.raises(InputError, match=r"L3's flags enable .*FMA3.* \(.*-mfma.*\) on x86_64, which its run-time "
                       "test does not check"):
        project.load(_write(tmp_path, _set(row)))


def test_an_override_that_adds_flags_widens_the_inherited_run_time_test(tmp_path: Path) -> None:
    """numpy 2.2's AVX2 compiles with -maes -mpclmul -mbmi -mbmi2: its test checks those bits too."""
    doc = {"override": {"x86": [{"name": "AVX2", "flags": {"gnu": ["-mavx2", "-mbmi2"]}}]}}
    t = tables.table_for("x86_64", "gcc", project.load(_write(tmp_path, doc)))
    assert [7, 0, "ebx", 8] in t.get("AVX2").runtime["cpuid"]


def test_a_switch_enables_its_feature_without_the_switches_that_turn_something_off(tmp_path: Path) -> None:
    """AVX512F's flags are -mavx512f -mno-mmx: a row with -mavx512f alone was read as enabling nothing, kept AVX2's
    one bit and ran AVX-512 code on any AVX2 CPU (numpy 2.5's X86_V4 did not check AVX512F's own bit)."""
    avx512f = [7, 0, "ebx", 16]
    t = tables.table_for("x86_64", "gcc", project.load(_write(tmp_path, _set(
        _row("W", 1, like="AVX2", flags={"gnu": ["-mavx2", "-mavx512f"]})))))
    assert avx512f in t.get("W").runtime["cpuid"] and t.get("W").runtime["xcr0"] == 0xe6
    stated = _row("W", 1, like="AVX2", flags={"gnu": ["-mavx2", "-mavx512f"]},
                  runtime={"*": {"cpuid": [[7, 0, "ebx", 5]], "xcr0": 6}})
    with pytest.raises(InputError, match=r"W's flags enable AVX512F \(-mavx512f\) on x86_64"):
        project.load(_write(tmp_path, _set(stated)))


def test_a_retired_name_in_a_target_list_stands_for_its_successor() -> None:
    """With "retired": {"AVX": "LEVEL3"}, cpu-dispatch=avx was mapped but 'k.c: baseline AVX' was unknown."""
    proj = project.load(FIXTURE)
    assert proj is not None
    st_ = parse_targets("baseline AVX XOP", "k.c", proj)
    assert st_.targets == (("LEVEL3",),) and st_.renamed == (("AVX", "LEVEL3"), ("XOP", ""))
    warned = _renamed(kernel("k.c: baseline AVX XOP", proj))
    assert "warning: targets of k.c: AVX is no longer a feature name of this project; it stands for LEVEL3" in warned
    assert tokenize("avx", "cpu-dispatch", proj, [])[0].word == "LEVEL3"


@pytest.mark.parametrize("runtime", [None, {"plan9": {"always": True}}])
def test_a_row_without_a_run_time_test_is_refused(tmp_path: Path, runtime: Any) -> None:
    """A row without like and runtime (or keyed by an OS) was compiled and dispatched, and never called."""
    row = {"name": "P", "interest": 1, "implies": [], "probe": "p.c", "flags": {"gnu": ["-mavx"]}}
    if runtime is not None:
        row["runtime"] = runtime
    (tmp_path / "p.c").write_text("int main(void) { return 0; }\n")
    with pytest.raises(InputError, match="feature_set.x86: P('s run-time recipe is keyed 'plan9'| has no run-time)"):
        project.load(_write(tmp_path, _set(row)))


# --------------------------------------------------------------------------- property tests

NAMES = st.sampled_from(["P", "Q", "R", "P__Q", "P_Q", "NONE", "MIN", "BASELINE", "p", "AVX2", "Q2"])
LIKES = st.sampled_from(["SSE2", "SSE3", "AVX", "AVX2", "FMA3", "AVX512F", "NOPE"])
FLAGS = st.lists(st.sampled_from(["-mavx", "-mavx2", "-mfma", "-mbmi2", "-msse4.2", "-mpopcnt"]), max_size=3)
PATTERNS = st.text(alphabet="ab.*+?()|[]^$\\{}1", max_size=10)


@st.composite
def feature_sets(draw: Any) -> dict[str, Any]:
    rows = []
    for _ in range(draw(st.integers(1, 4))):
        row: dict[str, Any] = {"name": draw(NAMES), "like": draw(LIKES), "interest": draw(st.integers(1, 4)),
                               "implies": draw(st.lists(NAMES, max_size=2))}
        if draw(st.booleans()):
            row["flags"] = {"gnu": draw(FLAGS)}
        if draw(st.booleans()):
            row["flags_replace"] = draw(PATTERNS)
        rows.append(row)
    doc: dict[str, Any] = _set(*rows)
    if draw(st.booleans()):
        doc["retired"] = {draw(NAMES): draw(st.sampled_from(["", "P", "Q"]))}
    return doc


@settings(max_examples=150, deadline=None, suppress_health_check=UNTIMED)
@given(doc=feature_sets())
def test_generated_feature_sets_load_or_are_refused_in_one_line(tmp_path: Path, doc: dict[str, Any]) -> None:
    """Every generated file loads into a model that keeps every rule, or is refused by one line, never a
    traceback: names never spell a target, keywords are never shadowed, each version's flags hold its closure's,
    each run-time test covers what its flags enable."""
    try:
        proj = project.load(_write(tmp_path, doc))
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("features file")
        return
    assert proj is not None
    t = tables.table_for("x86_64", "gcc", proj)
    for name in t.features:
        assert "__" not in name and name not in tokenize_keywords()
        closure_flags = {x for n in t.closure([name]) for x in t.get(n).flags if not t.get(n).flags_replace}
        assert closure_flags - {"-msse4.2"} <= set(t.flags_for([name])) | closure_flags
    assert rules.runtime_gaps("x86", proj.rows["x86"]) == {}
    for old in proj.retired:
        assert old not in tokenize_keywords()


def tokenize_keywords() -> frozenset[str]:
    from ccopt_meson.tokens import RESERVED

    return RESERVED


LONG = 200_000  # linear: a millisecond; quadratic: 4e10 steps, hours; exponential: never


@settings(max_examples=300, deadline=None)
@given(pattern=PATTERNS, subject=st.text(alphabet="ab-m", max_size=8))
def test_accepted_patterns_run_in_linear_time(pattern: str, subject: str) -> None:
    """An accepted pattern matches flags 200,000 characters long, where a quadratic or exponential one would not
    finish; a refused one says why in one line.  Nothing is timed: a backtracking pattern simply never returns
    (hypothesis then never finishes the test), whatever the machine's load."""
    why = rules.unsafe_pattern(pattern)
    if why:
        assert "\n" not in why
        return
    compiled = re.compile(pattern)
    for long in (subject * LONG)[:LONG], "a" * LONG + "!", "-" + "m" * LONG:
        compiled.match(long)


@settings(max_examples=60, deadline=None, suppress_health_check=UNTIMED)
@given(doc=feature_sets(), option=st.sampled_from(["features", "detect"]))
def test_generated_feature_sets_through_the_cli_exit_0_or_one_line(tmp_path: Path, doc: dict[str, Any],
                                                                     option: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, doc)
    args = ["features", "--arch", "x86_64", "--json"] if option == "features" else ["explain", "P", "--cc", "false"]
    code = main([*args, "--features-file", str(path)])
    err = capsys.readouterr().err
    assert code in (0, 1) and (code == 0 or err.count("\n") == 1 and err.startswith("ccopt-meson: error: "))


TARGET_WORDS = st.sampled_from(["baseline", "P", "Q", "R", "(P Q)", "(Q R)", "$maxopt", "$keep_baseline", "S",
                                "none", "p__q", "#g"])


@settings(max_examples=80, deadline=None, suppress_health_check=UNTIMED)
@given(levels=st.permutations(["SSE2", "AVX", "AVX2", "AVX512F"]), flags=FLAGS,
       baseline=st.sampled_from(["min", "none", "p", "q", "max", "p,-p"]),
       words=st.lists(TARGET_WORDS, min_size=1, max_size=5))
def test_generated_sets_options_and_target_lists_end_to_end(tmp_path: Path, fake: Any, levels: list[str],
                                                              flags: list[str], baseline: str,
                                                              words: list[str]) -> None:
    """A feature set, options and a target list, generated, through detection and target selection: every
    refusal is one line; no two versions share a name (a library name, a macro id); each version's args hold
    the flags of what it implies."""
    from ccopt_meson import Request, detect
    from ccopt_meson.dispatch import select
    from ccopt_meson.errors import CcoptError

    rows = [_row("P", 1, like=levels[0]), _row("Q", 2, like=levels[1], implies=["P"]),
            _row("R", 3, like=levels[2], implies=["Q"], flags={"gnu": flags} if flags else {})]
    doc = _set(*rows)
    doc["feature_set"]["x86"]["min"] = {"x86_64": ["P"]}
    try:
        proj = project.load(_write(tmp_path, doc))
        det = detect(Request(command=("fakecc",), project=proj, baseline=baseline), runner=fake())
        chosen = select(parse_targets(" ".join(words), "k.c", proj), det)
    except CcoptError as exc:
        assert "\n" not in str(exc)
        return
    names = [t.name for t in chosen]
    assert len(names) == len(set(names))
    assert det.table is not None
    for t in chosen:
        if t.name != "BASELINE":
            assert set(det.table.flags_for(t.members)) <= set(t.args)


# --------------------------------------------------------------------------- what the compiler says flags enable


@pytest.mark.parametrize(("flags", "read"), [
    (["-march=haswell"], True), (["-march=x86-64-v3"], True), (["-msse4"], True), (["/arch:AVX2"], True),
    (["-mavx2", "-mfma"], True),  # built-in features' own switches too: the compiler is the judge of every spelling
])
def test_a_project_row_is_read_by_the_compiler_whatever_its_flags_spelling(tmp_path: Path, flags: list[str],
                                                                          read: bool) -> None:
    t = tables.table_for("x86_64", "gcc", project.load(_write(tmp_path, _set(_row("L3", 1, "AVX2",
                                                                                   flags={"gnu": flags})))))
    assert rules.reads_flags(t, "L3") is read


def test_a_row_the_table_disables_is_not_read() -> None:
    """numpy's X86_V4 is not supported on 32-bit x86: never compiled, so neither asked about nor warned of (the
    fork says nothing of it there)."""
    proj = project.load(ROOT / "examples" / "numpy" / "2.5.5" / "ccopt-numpy.json")
    t = tables.table_for("x86", "gcc", proj)
    assert t.get("X86_V4").disabled and not rules.reads_flags(t, "X86_V4")
    assert rules.reads_flags(tables.table_for("x86_64", "gcc", proj), "X86_V4")


def test_the_builtin_rows_are_never_read() -> None:
    """They state their implications (ARM's -march=armv8.2-a+fp16 included): no process is added for them."""
    for machine in ("x86_64", "aarch64", "ppc64le", "s390x"):
        t = tables.table_for(machine, "gcc")
        assert not [n for n in t.features if rules.reads_flags(t, n)], machine


def test_the_gap_is_what_the_macros_define_beyond_the_users_args_and_the_test() -> None:
    """The compiler's macros under -march=haswell hold FMA3's and BMI2's: L3 like AVX2 misses them; where the
    user's own args define them already, nothing is missing."""
    proj = project.load(FIXTURE)
    builtin = tables.table_for("x86_64", "gcc")
    haswell = {m for n in builtin.closure(["X86_V3"]) for m in builtin.get(n).macros}
    t = tables.table_for("x86_64", "gcc", proj)
    assert t.get("LEVEL3").runtime["cpuid"] and [7, 0, "ebx", 8] in t.get("LEVEL3").runtime["cpuid"]
    bare = t._replace(features={**t.features, "LEVEL3": t.get("LEVEL3")._replace(runtime=tables.table_for(
        "x86_64", "gcc").get("AVX2").runtime)})
    missing = {b.name for b in rules.enabled_gaps(bare, "LEVEL3", haswell, {"__SSE__", "__SSE2__"})}
    assert {"FMA3", "BMI2", "AVX"} <= missing and "AVX2" not in missing and "SSE42" not in missing
    assert rules.enabled_gaps(bare, "LEVEL3", haswell, haswell) == []
    assert rules.enabled_gaps(t, "LEVEL3", {m for n in ("FMA3", "BMI2") for m in builtin.get(n).macros}, set()) == []
