"""Compiler versions and the version ranges a row's ``when`` may state (``{"compiler": "msvc", "version": ">=19.30"}``).

A version is compared as numbers, component by component, missing components being 0: ``19.29 < 19.30``,
``9 < 10``, ``10 == 10.0``; ``19.40.33811`` (Meson's spelling of MSVC 17.10) is ``>=19.40``.  Only the leading
``N.N...`` of a compiler's version counts (``12.2.0-14`` is 12.2.0); a version without one (``unknown``) is in
no range.  A range is one comparison or several separated by spaces, all of which hold (``>=19.30 <19.40``);
its grammar is the schema's (``version_range`` in ``data/schema.json``), which every input is checked against
before it gets here.
"""

from __future__ import annotations

import functools
import operator
import re

from ._record import TYPE_CHECKING
from .errors import TableError

if TYPE_CHECKING:
    from typing import Callable, Iterable

__all__ = ["Version", "parse_version", "in_range", "why_empty", "boundaries"]

Version = tuple[int, ...]

_OPS: dict[str, Callable[[Version, Version], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq, "!=": operator.ne}
_LEADING = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_ABOVE = 10**9  # a component no compiler's version reaches: 19.29.<_ABOVE> lies between 19.29.x and 19.30


@functools.cache
def parse_version(text: str | None) -> Version | None:
    """The numbers of a compiler's version, trailing zeros dropped (so ``10.0`` equals ``10``); None without any."""
    found = _LEADING.match((text or "").strip())
    if found is None:
        return None
    nums = [int(n) for n in found.group().split(".")]
    while len(nums) > 1 and nums[-1] == 0:
        nums.pop()
    return tuple(nums)


@functools.cache
def _comparisons(text: str) -> tuple[tuple[Callable[[Version, Version], bool], Version], ...]:
    out = []
    for part in text.split():
        number = part.lstrip("<>=!")
        bound, op = parse_version(number), _OPS.get(part[:len(part) - len(number)])
        if bound is None or op is None:  # inputs are checked against the schema first; the built-in tables by tests
            raise TableError(f"'{text[:40]}' is not a compiler version range (data/schema.json: version_range)")
        out.append((op, bound))
    return tuple(out)


def _padded(a: Version, b: Version) -> tuple[Version, Version]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def in_range(version: Version | None, text: str) -> bool:
    """Does ``version`` satisfy every comparison of the range ``text``?  An unknown version satisfies none."""
    return version is not None and all(op(*_padded(version, bound)) for op, bound in _comparisons(text))


def boundaries(ranges: Iterable[str]) -> tuple[Version, ...]:
    """Versions between which no range of ``ranges`` changes its answer, one in each stretch: every bound, one
    just below it and one just above it.  Checking a rule at these sees every view the ranges give."""
    bounds = {bound for text in ranges for _, bound in _comparisons(text)}
    width = max((len(b) for b in bounds), default=0)
    out: set[Version] = set()
    for bound in bounds:
        out.update((bound, bound + (0,) * (width - len(bound)) + (1,)))  # just above: past every bound's width
        below = _below(bound)
        if below is not None:
            out.add(below)
    return tuple(sorted(out))


def _below(bound: Version) -> Version | None:
    """A version just below ``bound`` (19.30 -> 19.29.<huge>); None below 0."""
    if bound == (0,):
        return None
    last = max(i for i, n in enumerate(bound) if n)
    return bound[:last] + (bound[last] - 1, _ABOVE)


def why_empty(text: str) -> str:
    """Why the range ``text`` holds for no version ('' when some version is in it)."""
    if any(in_range(v, text) for v in boundaries([text])):
        return ""
    return "matches no version: its comparisons contradict each other"
