"""ISA-level variants of one library, for the directories glibc's loader searches (``glibc-hwcaps``).

Since glibc 2.33 the dynamic loader looks for a library in ``<dir>/glibc-hwcaps/<level>/`` of each
directory it searches, best level the CPU supports first, before ``<dir>`` itself (x86-64-v2..v4 on
x86_64, power9 and power10 on ppc64le, z13..z16 on s390x; ``data/features/*.json``, each machine's
``hwcaps``).  A variant is the build's own detection with its baseline raised to the level's feature:
made from the verdicts the one probe already gave (the pipeline probes every level of the machine), so
no compiler runs for it.  Raising goes through ``resolve``, the one rule for what a baseline holds and
what is left to dispatch above it.
"""

from __future__ import annotations

from ._record import TYPE_CHECKING, NamedTuple
from .errors import InputError
from .resolve import resolve

if TYPE_CHECKING:
    from .records import Detection
    from .tables import Table

__all__ = ["SUBDIR", "Level", "levels", "probed", "level", "why_not", "buildable", "variant", "subdir"]

SUBDIR = "glibc-hwcaps"  # the loader's directory name (glibc's elf/dl-hwcaps.c)


class Level(NamedTuple):
    name: str  # glibc's spelling: x86-64-v3, power9, z15
    feature: str  # what a variant's baseline is raised to


def levels(table: Table | None) -> tuple[Level, ...]:
    """The machine's levels whose feature this table has (a project's own feature set may lack one), lowest first."""
    if table is None:
        return ()
    return tuple(Level(n, f) for n, f in table.machine.hwcaps if f in table.features)


def probed(table: Table) -> set[str]:
    """What the probe asks about so that every level's variant can be made without another compiler run."""
    return {lv.feature for lv in levels(table) if not table.features[lv.feature].disabled}


def level(det: Detection, name: str) -> Level:
    """The level ``name`` of this build's machine; an InputError naming those it has."""
    known = levels(det.table)
    found = next((lv for lv in known if lv.name == name), None)
    if found is None:
        have = f"its levels are {', '.join(lv.name for lv in known)}" if known else "glibc's loader has none there"
        raise InputError(f"hwcaps: '{name[:40]}' is not a glibc-hwcaps level of {det.arch}; {have}")
    return found


def why_not(det: Detection, lv: Level) -> str | None:
    """Why this build makes no variant for ``lv`` (None: it does)."""
    if det.request.disable_optimization:
        return "disable-optimization is set"
    supported = det.supported(lv.feature)
    if supported is None:
        return f"{lv.feature} was not probed"
    if not supported:
        first = (det.reason(lv.feature).splitlines() or ["failed"])[0][:200]
        return f"the compiler cannot build {lv.feature} ({first})"
    if lv.feature in det.baseline:
        return f"the baseline already holds {lv.feature}: the library itself is built for {lv.name}"
    return None


def buildable(det: Detection) -> tuple[Level, ...]:
    """The levels this build makes variants for: the compiler builds them, and they are above the baseline."""
    return tuple(lv for lv in levels(det.table) if why_not(det, lv) is None)


def variant(det: Detection, lv: Level) -> Detection:
    """``det`` with its baseline raised to ``lv``: every dispatch target at or below it leaves the dispatch list."""
    reason = why_not(det, lv)
    if reason is not None:
        raise InputError(f"hwcaps: no {lv.name} variant: {reason}")
    assert det.table is not None
    supported = {n: o.supported and not det.table.features[n].disabled for n, o in det.outcomes.items()
                 if n in det.table.features}
    baseline, dispatch = resolve(det.table, {*det.baseline, lv.feature}, set(det.dispatch), supported)
    request = det.request._replace(baseline=f"{det.request.baseline} +{lv.feature}")
    return det._replace(request=request, baseline=baseline, dispatch=dispatch)


def subdir(lv: Level) -> str:
    """Where a variant goes, below the library directory and below a build directory alike."""
    return f"{SUBDIR}/{lv.name}"
