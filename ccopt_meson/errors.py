"""One error hierarchy for the whole package.

Only the CLI entry point catches these; it prints ``ccopt-meson: error: <message>``
as a single line, which Meson shows verbatim as the configure error.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable


__all__ = [
    "CcoptError",
    "InputError",
    "TableError",
    "CompilerError",
    "CacheError",
    "DispatchSourceError",
    "did_you_mean",
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


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'X'?)"`` for close matches, or an empty string."""
    pool = sorted(set(choices))
    import difflib  # only error paths need it

    matches = difflib.get_close_matches(word.upper(), pool, n=3, cutoff=0.6)
    if not matches:
        return ""
    return " (did you mean " + " or ".join(f"'{m}'" for m in matches) + "?)"
