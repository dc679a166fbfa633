"""Merging compile flags: duplicates dropped, conflicting flags resolved by the compiler table's rules."""

from __future__ import annotations

import re

from ._record import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Mapping, Sequence

__all__ = ["normalize_flags", "mentions"]


def _split_plus(flag: str) -> tuple[str, list[str]]:
    head, *exts = flag.split("+")
    return head, exts


def normalize_flags(flags: Sequence[str], conflicts: Sequence[Mapping[str, Any]],
                    context: Sequence[str] = ()) -> list[str]:
    """Drop duplicates and resolve conflicting flags, later flags winning.

    For each conflict rule only the last matching flag survives (``-march=``,
    ``-mcpu=``, ``/arch:``).  With ``merge_plus`` the ``+ext`` parts of the
    dropped flags are carried into the winner, so ``-march=armv8.2-a+fp16`` and
    ``-march=armv8.2-a+fp16fml`` become ``-march=armv8.2-a+fp16+fp16fml``.

    ``context`` holds the user's own CPU-selecting flags, which come earlier on the
    command line.  Additive ``+ext`` flags build on the user's base instead of
    replacing it (``-march=armv8.4-a+crypto`` + ours ``-march=armv8.2-a+sve`` gives
    ``-march=armv8.4-a+crypto+sve``), and a ``fold_into`` rule moves our ``+ext``
    parts onto the user's flag of another kind (``-mcpu=neoverse-v1+sve``), since
    gcc warns when ``-march`` and ``-mcpu`` disagree.  Level flags without ``+``
    parts (``-march=arch13``, ``-mcpu=power10``) still win: they are the feature.
    """
    out: list[str] = []
    for f in flags:
        if f not in out:
            out.append(f)
    for rule in conflicts:
        pat = re.compile(rule["match"])
        hits = [i for i, f in enumerate(out) if pat.search(f)]
        if "fold_into" in rule:
            host = [c for c in context if re.search(rule["fold_into"], c)]
            if host and hits:
                exts = [e for i in hits for e in _split_plus(out[i])[1]]
                out = [f for i, f in enumerate(out) if i not in hits] + ["+".join([host[-1], *dict.fromkeys(exts)])]
            continue
        mine = [c for c in context if pat.search(c)]
        if rule.get("merge_plus") and mine and hits and "+" in out[hits[-1]]:
            head, theirs = _split_plus(mine[-1])
            exts = theirs + [e for i in hits for e in _split_plus(out[i])[1]]
            winner = "+".join([head, *(e for e in dict.fromkeys(exts) if e)])
            out = [winner if i == hits[-1] else f for i, f in enumerate(out) if i == hits[-1] or i not in hits]
            continue
        if len(hits) < 2:
            continue
        winner = out[hits[-1]]
        if rule.get("merge_plus"):
            head, own = _split_plus(winner)
            carried: list[str] = []
            for i in hits[:-1]:
                carried.extend(_split_plus(out[i])[1])
            exts = [e for e in dict.fromkeys(carried + own) if e]
            winner = "+".join([head, *exts])
        keep = set(hits[:-1])
        out = [winner if i == hits[-1] else f for i, f in enumerate(out) if i not in keep]
    return [f for f in out if f not in context]  # the user's own flags are on the command line already


def mentions(text: str, flag: str) -> bool:
    """Does ``text`` (a compiler's diagnostic) name ``flag`` as a whole word (``-mavx2`` but not ``-mavx``)?"""
    return re.search(r"(?<![\w=-])" + re.escape(flag) + r"(?![\w=.+-])", text) is not None
