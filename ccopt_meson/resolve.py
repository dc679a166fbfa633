"""The ``cpu-baseline`` / ``cpu-dispatch`` expression grammar and its resolution.

Grammar (numpy's): tokens separated by spaces or commas, case-insensitive;
``MIN``, ``MAX``, ``NATIVE``, ``DETECT``, ``NONE``, feature names; a ``+`` or
``-`` in front of one token adds or removes it (adding is the default), with or
without spaces (``max-xop-fma4`` == ``max -xop -fma4``).  A group ``(a b)``, as
in ``@targets``, stands for its members; a sign before it applies to each.  Removing a feature
also removes every selected feature that implies it (Meson-era numpy), unless a project's features
file says ``"minus": "feature"`` (numpy 2.2: the feature alone).  A project's retired names stand for
their successors, with a warning.

Pure: it works on token lists and on probe outcomes handed in by the caller.
"""

from __future__ import annotations

from ._record import TYPE_CHECKING, NamedTuple
from .errors import InputError, did_you_mean_token, unknown_names
from .tables import Table, all_feature_names
from .tokens import EXPRESSION_KEYWORDS, EXPRESSION_SEPARATORS, lex, show

if TYPE_CHECKING:
    from typing import Iterable, Mapping, Sequence

    from .tables import Project

__all__ = ["SPECIAL", "Token", "tokenize", "explain_names", "render_tokens", "uses", "evaluate", "Resolution",
           "resolve"]

SPECIAL = EXPRESSION_KEYWORDS


class Token(NamedTuple):
    op: str  # '+' or '-'
    word: str  # upper-case feature name or special keyword


def tokenize(text: str, option: str, project: Project | None = None, notes: list[str] | None = None) -> list[Token]:
    """Parse an expression; every mistake is an InputError naming the option and token.
    ``project``: the features file whose features are names too, and whose retired names stand for their
    successors (a warning in ``notes``; ``-NAME`` of one is ignored, as numpy's parser does)."""
    if not isinstance(text, str):
        raise InputError(f"{option}: expected a string, got {type(text).__name__}")
    lexemes = lex(text, EXPRESSION_SEPARATORS)
    if len(lexemes) == 0 or (len(lexemes) == 1 and lexemes[0].kind == "sign"):
        # numpy reads an empty value (-Dcpu-dispatch=), separators only, or a lone '+' as nothing
        return [Token("+", "NONE")]
    known = all_feature_names(project)
    retired = project.retired if project is not None else {}
    tokens: list[Token] = []
    unknown: list[tuple[str, str]] = []
    op: str | None = None
    group: tuple[str, int] | None = None  # inside '( ... )': the sign of every member, where it began
    for lx in lexemes:
        if lx.kind in ("open", "close"):
            group = _paren(lx.text, op, group, tokens, option)
            op = None
        elif lx.kind == "sign":
            if op is not None or group is not None:
                where = ("inside '( )': put the sign before the '('" if group
                         else f"'{op}' must be followed by a feature name")
                raise InputError(f"{option}: {where}, got '{lx.text}'")
            op = lx.text
        elif lx.kind == "name":
            word = lx.text.upper()
            sign = group[0] if group else op or "+"
            op = None
            if word in retired:
                word = _retired(word, retired[word], sign, option, notes)
                if not word:
                    continue
            if word not in SPECIAL and word not in known:
                unknown.append((show(lx.text), word))
            tokens.append(Token(sign, word))
        else:
            hint = did_you_mean_token(lx.text, [*known, *SPECIAL])
            raise InputError(
                f"{option}: invalid token '{show(lx.text)}'{hint}; expected feature names, "
                f"{', '.join(s.lower() for s in SPECIAL)}, '+' or '-'"
            )
    if group is not None:
        raise InputError(f"{option}: '(' is not closed")
    if op is not None:
        raise InputError(f"{option}: '{op}' at the end must be followed by a feature name")
    if unknown:
        names = unknown_names(unknown, [*known, *SPECIAL], "feature")
        raise InputError(f"{option}: {names}; 'ccopt-meson features' lists them")
    return tokens


def _retired(word: str, new: str, sign: str, option: str, notes: list[str] | None) -> str:
    """The name a retired one stands for ('' when the token is dropped), with the warning it earns."""
    if notes is not None:
        said = (f"{word} is no longer a feature name of this project; it stands for {new}" if new
                else f"{word} is no longer a feature name of this project and is ignored")
        dropped = " (removing a retired name is ignored: what it stands for is more)" if new and sign == "-" else ""
        notes.append(f"warning: {option}: {said}{dropped}")
    return new if sign == "+" else ""


def explain_names(texts: Sequence[str], project: Project | None = None) -> list[str]:
    """The feature names of ``explain``'s arguments: ``'avx2 '``, ``'avx2,sse41'`` are names separated as in
    an expression; ``+``, ``-`` and keywords are not names (one-line InputError)."""
    names: list[str] = []
    for text in texts:
        tokens = tokenize(text, "explain", project)  # unknown names and invalid tokens: its one-line errors
        if any(c in text for c in "+-") or any(t.word in SPECIAL for t in tokens):
            shown = text.strip().encode("unicode_escape").decode()[:40]
            raise InputError(f"explain: '{shown}' is not a feature name; 'ccopt-meson features' lists them")
        names += [t.word for t in tokens]
    return list(dict.fromkeys(names))


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
    limit = table.project.max_of(table.machine.family) if table.project else None
    if limit is not None:  # a project whose run-time knows only some names
        enabled = [n for n in enabled if n in limit]
    specials: Mapping[str, Iterable[str]] = {
        "MIN": table.machine.min, "MAX": enabled, "NATIVE": native, "DETECT": detect, "NONE": (),
    }
    selected: set[str] = set()
    foreign: list[str] = []
    for tok in tokens:
        if tok.word in specials:
            names = set(specials[tok.word])
        elif tok.word not in table.features:  # another family's (the table holds the project's too)
            foreign.append(tok.word)
            continue
        else:
            names = {tok.word}
        if tok.op == "+":
            selected |= names
        elif table.policies.minus == "feature":
            selected -= names
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
