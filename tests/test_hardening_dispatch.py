"""The ``@targets`` parser's messages (issue 11): one printable line whatever the source holds.

A dispatch source is any file a project names; its bytes (NUL, ESC, BEL, other control and
non-printable characters) must never reach the terminal raw through an error message, and a
message quotes at most 40 characters of a token.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccopt_meson import tables
from ccopt_meson.dispatch import parse_text, render_statement
from ccopt_meson.errors import CcoptError, DispatchSourceError

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
