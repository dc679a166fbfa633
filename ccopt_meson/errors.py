"""One error hierarchy for the whole package.

Only the CLI entry point catches these; it prints ``ccopt-meson: error: <message>``
as a single line, which Meson shows verbatim as the configure error.
"""

from __future__ import annotations

import re

from ._record import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Iterable


__all__ = [
    "CcoptError",
    "InputError",
    "TableError",
    "CompilerError",
    "CacheError",
    "DispatchSourceError",
    "AuditUnavailable",
    "did_you_mean",
    "unknown_names",
]


class CcoptError(Exception):
    """Base class of every error this package reports to a user."""


class InputError(CcoptError, ValueError):
    """A value given by the user (an option, an expression, a path) is wrong."""


class TableError(CcoptError):
    """The feature tables shipped with the package are inconsistent."""


class CompilerError(CcoptError):
    """The compiler could not be run, or cannot build a trivial C file."""


class CacheError(CcoptError):
    """The cache cannot be written (for example a read-only build directory)."""


class DispatchSourceError(InputError):
    """A dispatch source's ``@targets`` statement is malformed."""


class AuditUnavailable(CcoptError):
    """The ISA audit cannot read these objects here: its reader or decoder is not installed (the message holds the
    pip command), or no decoder covers their architecture."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'X'?)"`` for close matches, or an empty string."""
    pool = sorted(set(choices))
    import difflib  # only error paths need it

    matches = difflib.get_close_matches(word.upper(), pool, n=3, cutoff=0.6)
    if not matches:
        return ""
    return " (did you mean " + " or ".join(f"'{m}'" for m in matches) + "?)"


def did_you_mean_token(token: str, choices: Iterable[str]) -> str:
    """For a token that is not a name at all (``sse4.2``, ``avx-512f``): the name it spells without
    its punctuation, or an empty string (no guess from a policy or a stray symbol)."""
    word = re.sub(r"[^A-Za-z0-9_]", "", token).upper()
    return f" (did you mean '{word}'?)" if word in set(choices) else ""


def unknown_names(shown: Iterable[tuple[str, str]], choices: Iterable[str], what: str) -> str:
    """``unknown features 'avx3' (did you mean 'AVX2'?), 'foo' (no architecture has it)``: every
    unknown name of one statement at once, each said to be a typo of a known name or unheard of.

    ``shown`` holds (text as the user wrote it, for the message; upper-case name, to match).
    """
    pool = sorted(set(choices))
    items = list(dict.fromkeys(shown))
    parts = [f"'{text}'{did_you_mean(word, pool) or ' (no architecture has a feature of that name)'}"
             for text, word in items[:10]]
    more = f" and {len(items) - 10} more" if len(items) > 10 else ""
    return f"unknown {what}{'s' if len(items) > 1 else ''} {', '.join(parts)}{more}"
