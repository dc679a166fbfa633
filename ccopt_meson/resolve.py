"""The ``cpu-baseline`` / ``cpu-dispatch`` expression grammar and its resolution.

Grammar (numpy's): tokens separated by spaces or commas, case-insensitive;
``MIN``, ``MAX``, ``NATIVE``, ``DETECT``, ``NONE``, feature names; a ``+`` or
``-`` in front of one token adds or removes it (adding is the default), with or
without spaces (``max-xop-fma4`` == ``max -xop -fma4``).  A group ``(a b)``, as
in ``@targets``, stands for its members; a sign before it applies to each.  Removing a feature
also removes every selected feature that implies it (Meson-era numpy).

Pure: it works on token lists and on probe outcomes handed in by the caller.
"""

from __future__ import annotations

import re

from .errors import InputError, did_you_mean_token, unknown_names
from .tables import Table, all_feature_names, families_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Mapping, NamedTuple, Sequence
else:
    from ._tuple import NamedTuple

__all__ = ["SPECIAL", "Token", "tokenize", "render_tokens", "uses", "evaluate", "Resolution", "resolve"]

SPECIAL = ("MIN", "MAX", "NATIVE", "DETECT", "NONE")
_WORD = re.compile(r"[A-Za-z0-9_]+")


class Token(NamedTuple):
    op: str  # '+' or '-'
    word: str  # upper-case feature name or special keyword


def _show(text: str) -> str:
    """A user's text, shortened and with control characters escaped, for a one-line message."""
    text = text if len(text) <= 40 else text[:37] + "..."
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def tokenize(text: str, option: str) -> list[Token]:
    """Parse an expression; every mistake is an InputError naming the option and token."""
    if not isinstance(text, str):
        raise InputError(f"{option}: expected a string, got {type(text).__name__}")
    parts = [p for p in re.split(r"[\s,]+|([+()-])", text) if p]
    if all(p in "+-" for p in parts) and len(parts) <= 1:
        # numpy reads an empty value (-Dcpu-dispatch=), separators only, or a lone '+' as nothing
        return [Token("+", "NONE")]
    tokens: list[Token] = []
    unknown: list[tuple[str, str]] = []
    op: str | None = None
    group: tuple[str, int] | None = None  # inside '( ... )': the sign of every member, where it began
    for part in parts:
        if part in ("(", ")"):
            group = _paren(part, op, group, tokens, option)
            op = None
            continue
        if part in "+-":
            if op is not None or group is not None:
                where = ("inside '( )': put the sign before the '('" if group
                         else f"'{op}' must be followed by a feature name")
                raise InputError(f"{option}: {where}, got '{part}'")
            op = part
            continue
        if not _WORD.fullmatch(part):
            hint = did_you_mean_token(part, [*all_feature_names(), *SPECIAL])
            raise InputError(
                f"{option}: invalid token '{_show(part)}'{hint}; expected feature names, "
                f"{', '.join(s.lower() for s in SPECIAL)}, '+' or '-'"
            )
        word = part.upper()
        if word not in SPECIAL and word not in all_feature_names():
            unknown.append((_show(part), word))
        tokens.append(Token(group[0] if group else op or "+", word))
        op = None
    if group is not None:
        raise InputError(f"{option}: '(' is not closed")
    if op is not None:
        raise InputError(f"{option}: '{op}' at the end must be followed by a feature name")
    if unknown:
        names = unknown_names(unknown, [*all_feature_names(), *SPECIAL], "feature")
        raise InputError(f"{option}: {names}; 'ccopt-meson features' lists them")
    return tokens


def _paren(part: str, op: str | None, group: tuple[str, int] | None, tokens: list[Token],
           option: str) -> tuple[str, int] | None:
    """The group state after a parenthesis: ``(avx512vl avx512vbmi)`` selects exactly those, as a
    @targets group does; ``-(a b)`` removes both.  Inside: (the members' sign, first member's index)."""
    if part == "(":
        if group is not None:
            raise InputError(f"{option}: nested '(' in the expression")
        return (op or "+", len(tokens))
    if group is None:
        raise InputError(f"{option}: ')' without a matching '('")
    if op is not None:
        raise InputError(f"{option}: '{op}' must be followed by a feature name, got ')'")
    if len(tokens) == group[1]:
        raise InputError(f"{option}: empty group '()'")
    return None


def render_tokens(tokens: Sequence[Token]) -> str:
    """Canonical text of a token list: ``tokenize(render_tokens(t)) == t``."""
    return " ".join((t.word if t.op == "+" else f"-{t.word}") for t in tokens)


def uses(tokens: Iterable[Token], word: str) -> bool:
    return any(t.word == word for t in tokens)


def evaluate(tokens: Sequence[Token], table: Table, native: Iterable[str], detect: Iterable[str],
             notes: list[str], option: str) -> set[str]:
    """The set of feature names an expression selects (not yet closed under implication)."""
    enabled = [n for n, f in table.features.items() if not f.disabled]
    specials: Mapping[str, Iterable[str]] = {
        "MIN": table.machine.min, "MAX": enabled, "NATIVE": native, "DETECT": detect, "NONE": (),
    }
    selected: set[str] = set()
    foreign: list[str] = []
    for tok in tokens:
        if tok.word in specials:
            names = set(specials[tok.word])
        elif table.machine.family not in families_of(tok.word):
            foreign.append(tok.word)
            continue
        else:
            names = {tok.word}
        if tok.op == "+":
            selected |= names
        else:
            selected = {s for s in selected if not (table.closure([s]) & names)}
    if foreign:
        notes.append(f"{option}: ignored {', '.join(dict.fromkeys(foreign))}: not features of {table.machine.name}")
    return selected


class Resolution(NamedTuple):
    baseline: tuple[str, ...]  # low to high, closed under implication
    dispatch: tuple[str, ...]  # high to low, baseline removed


def resolve(table: Table, base_sel: set[str], disp_sel: set[str], supported: Mapping[str, bool]) -> Resolution:
    """Baseline: the supported part of the requested closure.  Dispatch: the rest, tested, highest first."""
    base_closure = table.closure(base_sel)
    baseline = tuple(n for n in table.sort(base_closure) if supported.get(n))
    dispatch = tuple(n for n in table.sort(disp_sel - set(baseline), reverse=True) if supported.get(n))
    return Resolution(baseline, dispatch)
