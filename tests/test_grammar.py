"""The cpu-baseline / cpu-dispatch grammar: tokens, errors (every message), evaluation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccopt_meson.errors import CcoptError, InputError
from ccopt_meson.resolve import Token, evaluate, resolve, tokenize
from ccopt_meson.resolve import render_tokens as render
from ccopt_meson.tables import table_for

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
    assert r.baseline == tuple("SSE SSE2 SSE3 SSSE3 SSE41 POPCNT SSE42 AVX F16C AVX2".split())
    assert r.dispatch == ("AVX512F",)


def test_baseline_keeps_the_supported_part_when_a_feature_fails() -> None:
    supported = {n: True for n in X86.features}
    supported["AVX2"] = False
    r = resolve(X86, {"AVX2"}, set(), supported)
    assert r.baseline[-1] == "F16C"


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
