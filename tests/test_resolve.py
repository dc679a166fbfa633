"""The cpu-baseline / cpu-dispatch grammar: tokens, errors (every message), evaluation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccopt_meson import tables
from ccopt_meson.errors import CcoptError, InputError
from ccopt_meson.resolve import SPECIAL, Token, evaluate, resolve, tokenize
from ccopt_meson.resolve import render_tokens as render
from ccopt_meson.tables import table_for

from .helpers import cli, configure_args, kv, one_error, one_line_message, x86_gcc

X86 = table_for("x86_64", "gcc")


def names(text: str, native: frozenset[str] = frozenset(), detect: frozenset[str] = frozenset()) -> set[str]:
    notes: list[str] = []
    return evaluate(tokenize(text, "cpu-dispatch"), X86, native, detect, notes, "cpu-dispatch")


def test_separators_case_and_operators() -> None:
    assert tokenize("max-xop-fma4", "o") == tokenize("MAX -xop, -FMA4", "o")
    assert tokenize("sse,sse2 Sse3", "o") == [Token("+", "SSE"), Token("+", "SSE2"), Token("+", "SSE3")]
    assert names("max -xop -fma4") == names("max") - {"XOP", "FMA4"}


def test_minus_removes_successors_too() -> None:
    got = names("max -avx512f")
    assert not any(n.startswith("AVX512") for n in got) and "X86_V4" not in got and "AVX2" in got


def test_specials() -> None:
    assert names("none") == set()
    assert names("min") == {"SSE", "SSE2", "SSE3"}
    assert names("native", native={"AVX2"}) == {"AVX2"}
    assert names("detect +avx", detect={"SSE41"}) == {"SSE41", "AVX"}


def test_foreign_names_are_ignored_with_a_note() -> None:
    notes: list[str] = []
    got = evaluate(tokenize("avx2 vsx2 asimd", "cpu-dispatch"), X86, (), (), notes, "cpu-dispatch")
    assert got == {"AVX2"}
    assert notes == ["cpu-dispatch: ignored VSX2, ASIMD: not features of x86_64"]


@pytest.mark.parametrize("text,message", [
    ("avx3", "cpu-baseline: unknown feature 'avx3' (did you mean 'AVX' or 'VSX3' or 'AVX2'?); "
             "'ccopt-meson features' lists them"),
    ("min +", "cpu-baseline: '+' at the end must be followed by a feature name"),
    ("min - - avx", "cpu-baseline: '-' must be followed by a feature name, got '-'"),
    ("$maxopt", "cpu-baseline: invalid token '$maxopt'; expected feature names, min, max, native, detect, none, "
                "'+' or '-'"),
    ("avx\u00e9", "cpu-baseline: invalid token 'avx\u00e9'"),
    ("sse4.2", "cpu-baseline: invalid token 'sse4.2' (did you mean 'SSE42'?); expected feature names"),
    ("x" * 100, "cpu-baseline: unknown feature '" + "x" * 37 + "...'"),
])
def test_every_error_message(text: str, message: str) -> None:
    with pytest.raises(InputError) as exc:
        tokenize(text, "cpu-baseline")
    assert str(exc.value).startswith(message)
    assert "\n" not in str(exc.value)


def test_resolution_baseline_closure_and_dispatch_order() -> None:
    supported = {n: True for n in X86.features}
    supported["AVX512_KNL"] = False
    r = resolve(X86, {"AVX2"}, {"SSE41", "AVX2", "AVX512F", "AVX512_KNL"}, supported)
    # numpy's AVX2 and SSE42 execute the bare AVX2 and SSE4.2 instructions: their _ISA features join
    assert r.baseline == tuple("SSE SSE2 SSE3 SSSE3 SSE41 POPCNT SSE42 SSE42_ISA AVX F16C AVX2_ISA AVX2".split())
    assert r.dispatch == ("AVX512F",)


def test_baseline_keeps_the_supported_part_when_a_feature_fails() -> None:
    supported = {n: True for n in X86.features}
    supported["AVX2"] = False
    r = resolve(X86, {"AVX2"}, set(), supported)
    assert r.baseline[-2:] == ("F16C", "AVX2_ISA")  # what AVX2 implies and the compiler can do


WORDS = st.sampled_from(["min", "max", "none", "native", "detect", "avx2", "SSE3", "xop", "avx512_skx", "vsx",
                         "+", "-", ",", " ", "(", "$x", "avx3", "\u00e9", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=8).map("".join))
def test_any_input_parses_or_raises_our_error(text: str) -> None:
    try:
        toks = tokenize(text, "cpu-dispatch")
    except CcoptError:
        return
    assert tokenize(render(toks), "cpu-dispatch") == toks


# --------------------------------------------------------------------------- through the CLI and configure


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


def test_foreign_names_are_ignored_with_a_note_by_detect_and_configure(tmp_path: Path) -> None:
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


NAMES = sorted(tables.all_feature_names())
EXPR_WORDS = st.one_of(
    st.sampled_from([*NAMES, *SPECIAL, *(n.lower() for n in SPECIAL)]),
    st.sampled_from(["+", "-", ",", " ", "\t", "\n", "\u2028", "$", "(", ")"]),
    st.text(max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(EXPR_WORDS, max_size=10).map("".join)))
def test_any_expression_text_parses_or_raises_our_error(text: str) -> None:
    try:
        toks = tokenize(text, "cpu-dispatch")
    except CcoptError as exc:
        assert isinstance(exc, InputError)
        assert one_line_message(exc).startswith("cpu-dispatch: ")
        return
    assert tokenize(render(toks), "cpu-dispatch") == toks
    assert tokenize(render(toks).lower(), "cpu-dispatch") == toks


def test_expression_must_be_a_string() -> None:
    with pytest.raises(InputError, match="^cpu-baseline: expected a string, got NoneType$"):
        tokenize(None, "cpu-baseline")  # type: ignore[arg-type]
