"""@targets parsing and target selection (numpy's documented examples), and generated headers."""

from __future__ import annotations

import random
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccopt_meson import Detection, Request, detect, tables
from ccopt_meson.dispatch import Statement, parse_file, parse_text, render_statement, select
from ccopt_meson.dispatch import render_statement as render
from ccopt_meson.emit import config_header, dispatch_header, kernel_header
from ccopt_meson.errors import CcoptError, DispatchSourceError, InputError

from .helpers import IS_ROOT, ROOT_REASON, cli, one_error, one_line_message, run_targets


@pytest.fixture
def doc(fake: Callable[..., Any]) -> Detection:
    return detect(Request(command=("fakecc",), baseline="min", dispatch="max -xop -fma4"), runner=fake())


def names(text: str, doc: Detection) -> list[str]:
    return [t.name for t in select(parse_text(f"/*@targets {text} */"), doc)]


@pytest.mark.parametrize("text,expected", [
    ("sse42 avx2 avx512f", ["AVX512F", "AVX2", "SSE42"]),
    ("sse2 sse3 avx2", ["AVX2"]),
    ("$keep_baseline sse2 sse3 avx2", ["AVX2", "SSE3", "SSE2"]),
    ("$keep_sort avx2 sse42 avx512_skx", ["AVX2", "SSE42", "AVX512_SKX"]),
    ("(avx2 fma3) avx512f", ["AVX512F", "FMA3__AVX2"]),
    ("(avx2 xop) avx2", ["AVX2"]),
    ("(avx512_skx avx512_clx)", ["AVX512_CLX"]),
    ("baseline avx2", ["AVX2", "BASELINE"]),
    ("vsx2 asimd", []),
    ("x86_v2 x86_v3 x86_v4", ["X86_V4", "X86_V3", "X86_V2"]),
])
def test_numpy_examples(doc: Detection, text: str, expected: list[str]) -> None:
    assert names(text, doc) == expected


def test_policies_add_flags(doc: Detection) -> None:
    t = select(parse_text("/*@targets $maxopt $werror baseline avx2 */"), doc)
    assert all("-O3" in x.args and "-Werror" in x.args for x in t)
    avx2 = t[0]
    assert avx2.args[-1] == "-DCCOPT_TARGET=AVX2" and "-mavx2" in avx2.args and "-DCCOPT_HAVE_F16C=1" in avx2.args
    assert t[1].name == "BASELINE" and "-DCCOPT_TARGET=BASELINE" in t[1].args


def test_select_all_is_select_of_each_with_shared_targets_made_once(doc: Detection) -> None:
    from ccopt_meson.dispatch import select_all

    texts = ["$maxopt baseline avx2 sse41", "$maxopt baseline sse42 avx2", "baseline avx2", "$werror avx2"]
    statements = [parse_text(f"/*@targets {t} */") for t in texts]
    together = select_all(statements, doc)
    assert together == [select(st, doc) for st in statements]
    assert together[0][0] is together[1][0]  # the same target with the same policy args: made once
    assert together[0][0] is not together[2][0] and together[0][0].args != together[2][0].args  # $maxopt's -O3
    assert together[0][-1] is together[1][-1] and together[0][-1].name == "BASELINE"


def test_comment_styles() -> None:
    assert parse_text("// @targets avx2\n// avx512f\nint x;").targets == (("AVX2",), ("AVX512F",))
    assert parse_text("/**\n * @targets\n * $maxopt avx2\n */").policies == frozenset({"MAXOPT"})


@pytest.mark.parametrize("text,message", [
    ("int x;", "src.c:1: no '@targets' statement found in a comment of the first 1000 lines"),
    ("/*@targets avx2", "src.c:1: the @targets comment is not closed with '*/'"),
    ("/*@targets */", "src.c:1: the @targets statement is empty"),
    ("\n/*@targets (avx2 */", "src.c:2: '(' is not closed in @targets"),
    ("/*@targets avx2) */", "src.c:1: ')' without a matching '('"),
    ("/*@targets ((avx2)) */", "src.c:1: nested '(' in @targets"),
    ("/*@targets () */", "src.c:1: empty group '()' in @targets"),
    ("/*@targets $maxop */", "src.c:1: unknown policy '$maxop' (did you mean 'maxopt'?); valid: $keep_baseline"),
    ("/*@targets avx3 */", "src.c:1: unknown target 'avx3' (did you mean 'AVX' or 'VSX3' or 'AVX2'?)"),
    ("/*@targets (baseline) */", "src.c:1: 'baseline' cannot be part of a group"),
    ("/*@targets ($maxopt) */", "src.c:1: policy '$maxopt' cannot be part of a group"),
    ("/*@targets #grp */", "src.c:1: unknown target group '#grp'; groups are defined in the project's features file"),
    ("/*@targets -avx2 */", "src.c:1: '-avx2': '+' and '-' are not allowed in @targets"),
])
def test_malformed_statements(text: str, message: str) -> None:
    with pytest.raises(DispatchSourceError) as exc:
        parse_text(text, "src.c")
    assert str(exc.value).startswith(message)


def test_missing_source(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="dispatch source '.*nope.c' does not exist"):
        parse_file(tmp_path / "nope.c")


TOKENS = st.sampled_from(["avx2", "SSE42", "(", ")", "baseline", "$maxopt", "$keep_sort", "$nope", "vsx2", "#g",
                          "-x", " ", ",", "*", "/", "avx512_skx", "(fma3 avx2)"])


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKENS, max_size=8).map(" ".join))
def test_any_statement_parses_or_raises_our_error(body: str) -> None:
    try:
        st_ = parse_text(f"/*@targets {body} */")
    except CcoptError:
        return
    again = parse_text(f"/*@targets {render(st_)} */")
    assert (again.baseline, again.targets, again.policies) == (st_.baseline, st_.targets, st_.policies)


def test_headers_compile_and_dispatch(doc: Detection, tmp_path: Path, gcc: str) -> None:
    """The generated headers plus ccopt_dispatch.h compile, and pick a target that exists."""

    from ccopt_meson.emit_runtime import write_table
    from ccopt_meson.tables import DATA_DIR

    runtime = DATA_DIR.parent / "runtime"
    (tmp_path / "ccopt_config.h").write_text(config_header(doc))
    (tmp_path / "ccopt_kernel.h").write_text(kernel_header(doc))
    write_table(tmp_path)
    targets = select(parse_text("/*@targets baseline sse42 avx2 */"), doc)
    (tmp_path / "k.dispatch.h").write_text(dispatch_header("k.dispatch.c", targets))
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "k.dispatch.h"\n'
        "#define DEF_CB(CHECK, T, ...) int k_##T(void) { return 1; }\n"
        "CCOPT_SRC_k_dispatch_CALL(CCOPT_CPU_HAVE, DEF_CB, 0)\nint k_BASELINE(void) { return 2; }\n"
        "CCOPT_DISPATCH_DECLARE(k_dispatch, int, k, (void))\nCCOPT_DISPATCH_DEFINE(k_dispatch, int, k, (void), ())\n"
        'int main(void) { printf("%s %d\\n", CCOPT_DISPATCH_TARGET_NAME(k_dispatch, k), k()); return 0; }\n')
    exe = tmp_path / "a.out"
    inc = ["-I", str(tmp_path), "-I", str(runtime)]
    subprocess.run([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", *inc, "-c", str(tmp_path / "main.c"),
                    "-o", str(tmp_path / "main.o")], check=True)
    subprocess.run([gcc, *inc, str(tmp_path / "main.o"), str(runtime / "ccopt_cpu.c"), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] in ("AVX2", "SSE42", "BASELINE") and out[1] == ("2" if out[0] == "BASELINE" else "1")


def test_statement_dataclass_is_hashable() -> None:
    assert hash(Statement(False, (("AVX2",),), frozenset(), 1))


def test_runtime_checks_cover_what_the_compiler_flags_enable(fake: Callable[..., Any]) -> None:
    """Intel's FMA3 flag is -march=core-avx2: the version must also wait for AVX2 at run time."""
    from ccopt_meson.tables import table_for

    every = "".join(f"#define {m} 1\n" for f in table_for("x86_64", "intel").features.values() for m in f.macros)
    every += "#define __x86_64__ 1\n"
    doc = detect(Request(command=("fakecc",), compiler_id="intel", baseline="min"), runner=fake(macros=every))
    t = select(parse_text("/*@targets fma3 */"), doc)
    fma3 = next(x for x in t if x.name == "FMA3")
    assert "-march=core-avx2" in fma3.args and "AVX2" in fma3.checks
    assert "CHK(FMA3)&&CHK(AVX2_ISA)&&CHK(AVX2)" in dispatch_header("k.dispatch.c", t)


def test_target_flags_keep_the_baseline_march_extensions(fake: Callable[..., Any]) -> None:
    doc = detect(Request(command=("fakecc",), baseline="min asimddp"), runner=fake(scenario="gcc12-aarch64"))
    sve = next(x for x in select(parse_text("/*@targets sve */"), doc) if x.name == "SVE")
    assert "-march=armv8.2-a+fp16+dotprod+sve" in sve.args  # not the SVE closure alone: +dotprod stays


def test_no_fitting_version_and_no_baseline_aborts_with_a_message(doc: Detection, tmp_path: Path,
                                                                   gcc: str) -> None:

    from ccopt_meson.emit_runtime import write_table
    from ccopt_meson.tables import DATA_DIR

    runtime = DATA_DIR.parent / "runtime"
    (tmp_path / "ccopt_config.h").write_text(config_header(doc))
    (tmp_path / "ccopt_kernel.h").write_text(kernel_header(doc))
    write_table(tmp_path)
    targets = select(parse_text("/*@targets avx2 */"), doc)
    (tmp_path / "k.dispatch.h").write_text(dispatch_header("k.dispatch.c", targets))
    (tmp_path / "main.c").write_text(
        '#include "k.dispatch.h"\nint k_AVX2(void) { return 1; }\n'
        "CCOPT_DISPATCH_DECLARE(k_dispatch, int, k, (void))\nCCOPT_DISPATCH_DEFINE(k_dispatch, int, k, (void), ())\n"
        "int main(void) { return k(); }\n")
    exe = tmp_path / "a.out"
    subprocess.run([gcc, "-I", str(tmp_path), "-I", str(runtime), str(tmp_path / "main.c"),
                    str(runtime / "ccopt_cpu.c"), "-o", str(exe)], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, env={"CCOPT_DISABLE_CPU_FEATURES": "AVX2"})
    assert r.returncode == -6  # SIGABRT, not SIGSEGV through a null pointer
    assert "ccopt: no compiled version of k() runs on this CPU" in r.stderr





# --------------------------------------------------------------------------- dispatch sources given to 'targets'


BAD_TARGETS = [
    pytest.param("$maxopt (avx2 fma3 avx512f", "'(' is not closed in @targets", id="unbalanced-open"),
    pytest.param("avx2 fma3) avx512f", "')' without a matching '('", id="unbalanced-close"),
    pytest.param("$maxopt $fastest avx2", "unknown policy '$fastest'; valid: $keep_baseline", id="unknown-policy"),
    pytest.param("avx2 avx1024", "unknown target 'avx1024' (did you mean", id="unknown-target"),
    pytest.param("avx2 () avx512f", "empty group '()' in @targets", id="empty-group"),
    pytest.param("", "the @targets statement is empty", id="empty-statement"),
    pytest.param("avx2 fma3;", "invalid token 'fma3;' (did you mean 'FMA3'?) in @targets", id="invalid-token"),
    pytest.param("sse4.2 avx2", "invalid token 'sse4.2' (did you mean 'SSE42'?) in @targets", id="dotted-name"),
]


@pytest.mark.parametrize("body,message", BAD_TARGETS)
def test_malformed_targets_give_file_line_message(tmp_path: Path, gcc12_x86_64_cache_file: Path, body: str,
                                                  message: str) -> None:
    src = tmp_path / "kern.dispatch.c"
    src.write_text(f"#include <stddef.h>\n\n/*@targets {body} */\nint k(void);\n")
    one_error(run_targets(src, gcc12_x86_64_cache_file, tmp_path),
              f"ccopt-meson: error: kern.dispatch.c:3: {message}")
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
def test_source_without_a_usable_statement(tmp_path: Path, gcc12_x86_64_cache_file: Path, text: str,
                                           message: str) -> None:
    src = tmp_path / "kern.dispatch.c"
    src.write_bytes(text.encode())
    one_error(run_targets(src, gcc12_x86_64_cache_file, tmp_path), message)


def test_binary_source(tmp_path: Path, gcc12_x86_64_cache_file: Path) -> None:
    src = tmp_path / "blob.dispatch.c"
    src.write_bytes(bytes(random.Random(6).randrange(256) for _ in range(4096)).replace(b"@", b"."))
    one_error(run_targets(src, gcc12_x86_64_cache_file, tmp_path), "blob.dispatch.c:1: no '@targets' statement found")


def test_missing_source_through_targets(tmp_path: Path, gcc12_x86_64_cache_file: Path) -> None:
    one_error(run_targets(tmp_path / "nope.dispatch.c", gcc12_x86_64_cache_file, tmp_path),
              f"dispatch source '{tmp_path / 'nope.dispatch.c'}' does not exist")


def test_directory_as_source(tmp_path: Path, gcc12_x86_64_cache_file: Path) -> None:
    (tmp_path / "dir.dispatch.c").mkdir()
    one_error(run_targets(tmp_path / "dir.dispatch.c", gcc12_x86_64_cache_file, tmp_path),
              f"dispatch source '{tmp_path / 'dir.dispatch.c'}' is a directory, not a regular file")


@pytest.mark.skipif(IS_ROOT, reason=ROOT_REASON)
def test_unreadable_source(tmp_path: Path, gcc12_x86_64_cache_file: Path) -> None:
    src = tmp_path / "locked.dispatch.c"
    src.write_text("/*@targets avx2 */\n")
    src.chmod(0)
    try:
        one_error(run_targets(src, gcc12_x86_64_cache_file, tmp_path),
                  f"cannot read dispatch source '{src}': Permission denied")
    finally:
        src.chmod(0o644)


NAMES = sorted(tables.all_feature_names())
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
        assert one_line_message(exc).startswith("src.c:")
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
            assert one_line_message(exc).startswith(f"{path}:")  # the path as given, directory kept


# --- untrusted input, bounds and processes (docs/explanation/robustness.md section 9)
NAMES = sorted(tables.all_feature_names())
CONTROL = st.characters(max_codepoint=0x9F, categories=["Cc"])
WORDS = st.one_of(
    st.sampled_from([*NAMES, *(n.lower() for n in NAMES), "baseline", "$maxopt", "$keep_sort", "$werror",
                     "$keep_baseline", "$autovec", "$", "#grp", "+avx2", "(", ")", "*/", "//", ","]),
    st.text(CONTROL, min_size=1, max_size=3),
    st.text(st.characters(categories=["Zl", "Zp", "Cf", "Co", "Cs"]), min_size=1, max_size=2),
    st.text(max_size=6),
    st.text(min_size=41, max_size=200),
)


def _check(text: str, where: str = "src.c") -> None:
    try:
        parsed = parse_text(text, where)
    except CcoptError as exc:
        assert isinstance(exc, DispatchSourceError)
        message = str(exc)
        assert message.isprintable(), repr(message)  # no NUL, ESC, line break, ... (also no U+2028)
        assert len(message) < 600
        return
    again = parse_text(f"/*@targets {render_statement(parsed)} */", where)
    assert (again.baseline, again.targets, again.policies) == (parsed.baseline, parsed.targets, parsed.policies)


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=10).map(lambda w: "/*@targets " + " ".join(w) + " */"))
def test_fuzz_statements_with_control_characters(text: str) -> None:
    _check(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=30))
def test_fuzz_any_text_and_any_file_name(text: str, name: str) -> None:
    _check(text, name or "k.c")
    _check("/*@targets " + text + " */", name or "k.c")


@pytest.mark.parametrize("token,shown", [
    ("\x00x", "\\x00x"), ("\x1b[2Jx", "\\x1b[2Jx"), ("a\x07", "a\\x07"), ("q" * 100 + "!", "q" * 37 + "..."),
    ("$\x1b", "$\\x1b"), ("+\x1b", "+\\x1b"), ("#\x1b", "#\\x1b"),
])
def test_tokens_are_escaped_and_cut(token: str, shown: str) -> None:
    with pytest.raises(DispatchSourceError) as exc:
        parse_text(f"/*@targets avx2 {token} */", "k.c")
    assert f"'{shown}'" in str(exc.value) or f"('{shown}')" in str(exc.value)
    assert str(exc.value).isprintable()


def test_a_file_name_with_escape_bytes_is_escaped() -> None:
    with pytest.raises(DispatchSourceError, match=r"^k\\x1b\[31m\.c:1: no '@targets' statement"):
        parse_text("int x;\n", "k\x1b[31m.c")


@pytest.mark.parametrize("body", ["AVX2$maxopt", "$maxopt$werror", "baseline$keep_sort", "SSE41#x"])
def test_a_policy_or_group_is_a_word_of_its_own(body: str) -> None:
    """'$' and '#' start a word only: glued to another they are an invalid token, as before one tokenizer."""
    with pytest.raises(DispatchSourceError, match=f"invalid token '{re.escape(body)}' in @targets"):
        parse_text(f"/*@targets {body} */", "src.c")


def _targets(arg: str, feature: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """One argument as meson.build writes it, run from the caller's directory (``out``)."""
    return cli("targets", arg, "--cache-file", str(feature), "--output-dir", str(out), cwd=out)


@pytest.mark.parametrize("arg,message", [
    ("k.c: $noheader", "targets of k.c: the target list names no target, only the policy '$noheader': nothing "
                       "would be built; add 'baseline' or a feature"),
    ("k.c: $maxopt", "targets of k.c: the target list names no target, only the policy '$maxopt'"),
    ("k.c: $werror $maxopt", "targets of k.c: the target list names no target, only the policies '$maxopt $werror'"),
    ("stated.c", "stated.c:2: the target list names no target, only the policy '$noheader'"),
])
def test_a_list_of_policies_alone_is_one_error(tmp_path: Path, gcc12_x86_64_cache_file: Path, arg: str,
                                                   message: str) -> None:
    """'k.c: $noheader', 'k.c: $maxopt' and /*@targets $noheader */ exited 0 without a line: the source left
    the build in silence.  A list of another machine's names still names targets (one list serves all)."""
    (tmp_path / "stated.c").write_text("int a;\n/*@targets $noheader */\n")
    r = _targets(arg, gcc12_x86_64_cache_file, tmp_path)
    one_error(r, f"ccopt-meson: error: {message}")
    assert r.stdout == "" and not list(tmp_path.glob("*.h"))
    for fine in ("k.c: $noheader asimd", "k.c: $maxopt baseline"):
        assert _targets(fine, gcc12_x86_64_cache_file, tmp_path).returncode == 0, fine


def test_an_empty_list_is_numpy_s_computed_nothing_and_says_so(tmp_path: Path,
                                                                 gcc12_x86_64_cache_file: Path) -> None:
    """'k.c: ' is what numpy computes for -Ddisable-intel-sort (docs/how-to/own-runtime.md): no version and a
    header that dispatches nothing, so its callers compile.  It is no error, but no longer silent: one note."""
    r = _targets("k.c:", gcc12_x86_64_cache_file, tmp_path)
    assert r.returncode == 0 and r.stdout == "", r.stderr
    assert r.stderr == ("ccopt-meson: note: targets: k.c: the target list is empty: no version is built, and k.h "
                        "dispatches nothing\n")
    assert (tmp_path / "k.h").is_file()


def test_dropped_says_why_each_listed_target_is_not_built(fake: Callable[..., Any]) -> None:
    """The same choice select makes, with its reasons: what the baseline covers, what cpu-dispatch leaves out,
    what a wider version covers is not a drop; another machine's names are no drop at all."""
    from ccopt_meson.dispatch import dropped, parse_targets

    det = detect(Request(command=("fakecc",), baseline="sse3", dispatch="avx2 -avx512f"), runner=fake())
    st = parse_targets("baseline sse2 avx2 avx512f (avx2 fma3) asimd", "k")
    why = {"__".join(t): w for t, w in dropped(st, det)}
    assert why == {"SSE2": "the baseline covers it: its code runs in the BASELINE version",
                   "AVX512F": "cpu-dispatch does not select AVX512F",
                   "AVX2__FMA3": "cpu-dispatch does not select FMA3"}
    assert {t.name for t in select(st, det)} == {"AVX2", "BASELINE"}
