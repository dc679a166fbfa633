"""Merging compile flags: duplicates dropped, conflicting flags resolved by the compiler table's rules."""

from __future__ import annotations

import re

from ._record import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Collection, Iterable, Mapping, Sequence

__all__ = ["normalize_flags", "plus_bases", "plus_parts", "mentions"]


def _split_plus(flag: str) -> tuple[str, list[str]]:
    head, *exts = flag.split("+")
    return head, exts


def _carried(flags: Sequence[str], hits: Sequence[int], latest_first: bool) -> list[str]:
    """The ``+ext`` parts of ``flags[i]`` for each of ``hits``, in their order or the latest flag's first, each once."""
    order = reversed(hits) if latest_first else hits
    return [e for e in dict.fromkeys(e for i in order for e in _split_plus(flags[i])[1]) if e]


def normalize_flags(flags: Sequence[str], conflicts: Sequence[Mapping[str, Any]],
                    context: Sequence[str] = (), latest_first: bool = False,
                    lines: Collection[str] = ()) -> list[str]:
    """Drop duplicates and resolve conflicting flags, later flags winning.

    For each conflict rule only the last matching flag survives (``-march=``,
    ``-mcpu=``, ``/arch:``).  With ``merge_plus`` the ``+ext`` parts of the
    dropped flags are carried into the winner.  Flags come lowest feature first
    (``Table.flags_for``); the parts keep that order, so ``-march=armv8.2-a+fp16`` then
    ``-march=armv8.2-a+sve`` become ``-march=armv8.2-a+fp16+sve`` (numpy.distutils' text), or
    with ``latest_first`` (a project's ``plus_parts: descending``) ``-march=armv8.2-a+sve+fp16``,
    the text numpy's Meson fork writes (a row's value, then what its ``mfilter`` kept of the
    flags before it).  The same to GCC; not the same text.

    ``context`` holds the user's own CPU-selecting flags, which come earlier on the
    command line.  ``lines`` holds the bases of our ``+ext`` flags (``-march=armv8.2-a``) that,
    written after the user's flags, keep everything those enable (the compiler said so:
    ``probe.architecture_lines``): such a flag is the line whole, as numpy's fork writes it after
    the user's (``-mcpu=neoverse-n1`` or ``-march=armv8-a+crc``, then ``-march=armv8.2-a+fp16``).
    Otherwise additive ``+ext`` flags build on the user's base instead of replacing it
    (``-march=armv8.4-a+crypto`` + ours ``-march=armv8.2-a+sve`` gives
    ``-march=armv8.4-a+crypto+sve``), and a ``fold_into`` rule moves our ``+ext``
    parts onto the user's flag of another kind (``-mcpu=neoverse-v1+sve``), since
    gcc warns when ``-march`` and ``-mcpu`` disagree and ``-march`` would lower that CPU.
    Level flags without ``+`` parts (``-march=arch13``, ``-mcpu=power10``) still win: they are the feature.
    A flag equal to the user's own stays: the user's arguments are one language's
    (``c_args`` never reach a C++ line) while these flags may serve every language.
    """
    out: list[str] = []
    for f in flags:
        if f not in out:
            out.append(f)
    for rule in conflicts:
        pat = re.compile(rule["match"])
        hits = [i for i, f in enumerate(out) if pat.search(f)]
        user = () if hits and _split_plus(out[hits[-1]])[0] in lines else context
        if "fold_into" in rule:
            host = [c for c in user if re.search(rule["fold_into"], c)]
            if host and hits:
                out = [f for i, f in enumerate(out) if i not in hits] + [
                    "+".join([host[-1], *_carried(out, hits, latest_first)])]
            continue
        mine = [c for c in user if pat.search(c)]
        if rule.get("merge_plus") and mine and hits and "+" in out[hits[-1]]:
            head, theirs = _split_plus(mine[-1])
            exts = theirs + _carried(out, hits, latest_first)
            winner = "+".join([head, *(e for e in dict.fromkeys(exts) if e)])
            out = [winner if i == hits[-1] else f for i, f in enumerate(out) if i == hits[-1] or i not in hits]
            continue
        if len(hits) < 2:
            continue
        winner = out[hits[-1]]
        if rule.get("merge_plus"):
            winner = "+".join([_split_plus(winner)[0], *_carried(out, hits, latest_first)])
        keep = set(hits[:-1])
        out = [winner if i == hits[-1] else f for i, f in enumerate(out) if i not in keep]
    return out


def plus_bases(flags: Iterable[str], conflicts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The bases (``-march=armv8.2-a``) of the ``+ext`` flags among ``flags`` that a merging rule joins with the
    user's own: the lines ``normalize_flags`` may write whole after the user's, if the compiler agrees."""
    merging = [re.compile(r["match"]) for r in conflicts if r.get("merge_plus") or "fold_into" in r]
    return list(dict.fromkeys(_split_plus(f)[0] for f in flags if "+" in f and any(p.search(f) for p in merging)))


def plus_parts(flags: Iterable[str]) -> list[str]:
    """The ``+ext`` parts of ``flags``, each once, in order."""
    return [e for e in dict.fromkeys(e for f in flags for e in _split_plus(f)[1]) if e]


def mentions(text: str, flag: str) -> bool:
    """Does ``text`` (a compiler's diagnostic) name ``flag`` as a whole word (``-mavx2`` but not ``-mavx``)?"""
    return re.search(r"(?<![\w=-])" + re.escape(flag) + r"(?![\w=.+-])", text) is not None
