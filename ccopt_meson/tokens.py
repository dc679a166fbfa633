"""The one tokenizer of both small grammars: the ``cpu-baseline``/``cpu-dispatch`` expression
(``resolve``) and the ``@targets`` statement (``dispatch``).

Text is cut at the grammar's separators and around parentheses; each remaining piece is a run
of lexemes (a name, a ``+``/``-`` sign; a ``$policy`` or ``#group`` only as the whole piece's
start) or, when any character of it is none of these, one ``bad`` lexeme holding the whole
piece, so a message quotes what the user wrote.  What each grammar accepts where is the parser's
business, not the tokenizer's.
"""

from __future__ import annotations

import re

from ._record import NamedTuple

__all__ = ["Lexeme", "lex", "show", "EXPRESSION_SEPARATORS", "TARGETS_SEPARATORS", "EXPRESSION_KEYWORDS",
           "TARGETS_KEYWORDS", "RESERVED"]

EXPRESSION_KEYWORDS = ("MIN", "MAX", "NATIVE", "DETECT", "NONE")
TARGETS_KEYWORDS = ("BASELINE",)
RESERVED = frozenset(EXPRESSION_KEYWORDS + TARGETS_KEYWORDS)  # never a feature's name

EXPRESSION_SEPARATORS = r"[\s,]+"  # numpy's option syntax: 'max -xop', 'max,-xop'
TARGETS_SEPARATORS = r"[\s*,/]+"  # a C comment's own characters separate too
_PART = re.compile(r"(?P<sign>[+-])|(?P<policy>\$[A-Za-z0-9_]*)|(?P<group>#[A-Za-z0-9_]*)|(?P<name>[A-Za-z0-9_]+)")


class Lexeme(NamedTuple):
    kind: str  # 'open', 'close', 'sign', 'policy', 'group', 'name' or 'bad'
    text: str  # as written


def lex(text: str, separators: str) -> list[Lexeme]:
    """The lexemes of ``text`` (see the module doc)."""
    out: list[Lexeme] = []
    for piece in re.split(f"{separators}|([()])", text):
        if not piece:
            continue
        if piece in "()":
            out.append(Lexeme("open" if piece == "(" else "close", piece))
            continue
        found: list[Lexeme] = []
        pos = 0
        while pos < len(piece):
            m = _PART.match(piece, pos)
            if m is None or (pos and m.lastgroup in ("policy", "group")):  # '$' and '#' start a word only
                found = [Lexeme("bad", piece)]
                break
            found.append(Lexeme(str(m.lastgroup), m.group()))
            pos = m.end()
        out += found
    return out


def show(text: str, limit: int = 40) -> str:
    """A user's text as a one-line message quotes it: cut, and with NUL, ESC and every other
    unprintable character escaped, so no byte of a source reaches the terminal raw."""
    text = text if len(text) <= limit else text[:limit - 3] + "..."
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
