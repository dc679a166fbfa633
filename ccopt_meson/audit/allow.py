"""What code may use: a baseline plus what a run-time test checks, as the decoder's names.

A version may use the baseline plus exactly what the run-time tests before it calls that version ("checks":
``dispatch.guard``, the one answer the header that makes the test also uses); any other code, the baseline.
The union of the run-time recipes of those features and all they imply is what a CPU reaching the code is
known to have, judged by the graph the run-time judges by; any row whose recipe that union covers
(``rules.covers``) is guaranteed too, so its decoder names (its ``audit`` key) are allowed.  The machine's ABI
(x86_64's SSE2) is the floor of every allowance, also under ``cpu-baseline=none``.
"""

from __future__ import annotations

from .. import rules
from .._record import TYPE_CHECKING, NamedTuple
from ..dispatch import guard, make_target
from ..errors import AuditUnavailable, InputError
from ..tables import raw_family
from .decode import audit_data

if TYPE_CHECKING:
    from typing import Any, Iterable, Mapping, Sequence

    from ..records import Detection
    from ..tables import Table

__all__ = ["Allowance", "for_build", "for_checks", "both", "family_audit", "feature_of", "level", "highest"]


class Allowance(NamedTuple):
    """What some code may use."""

    target: str  # BASELINE, the dispatch version's name, or several joined by '&' (code all of them reach)
    names: tuple[str, ...]  # the features guaranteed, as shown: the highest ones, lowest first
    decoded: frozenset[str]  # what the decoder may report for its instructions


def family_audit(table: Table) -> Mapping[str, Any]:
    section = raw_family(table.machine.family).get("audit")
    if section is None:
        raise AuditUnavailable(f"the feature table of {table.machine.family} names no decoder for the ISA audit; "
                               f"its {table.machine.name} objects cannot be audited")
    return section  # type: ignore[no-any-return]


def highest(table: Table, names: Iterable[str]) -> tuple[str, ...]:
    """The names no other of ``names`` implies, lowest first; of names that imply each other (aarch64's NEON
    and ASIMD), the one of highest interest."""
    pool = set(names)

    def above(m: str, n: str) -> bool:
        up, down = n in table.closure([m]), m in table.closure([n])
        return m != n and up and (not down or table.rank([m]) > table.rank([n]))

    return tuple(table.sort(n for n in pool if not any(above(m, n) for m in pool)))


def _guaranteed(have: Mapping[str, Any], need: Mapping[str, Any]) -> bool:
    """A CPU passing the checks ``have`` has the feature of recipe ``need`` (a recipe checking nothing of the
    CPU, a level's own, guarantees nothing by itself)."""
    checks_something = any(need.get(k) for k in ("cpuid", "hwcap", "hwcap2", "always"))
    return checks_something and rules.covers(have, need)


def for_checks(table: Table, baseline: Sequence[str], checks: Sequence[str], target: str) -> Allowance:
    """What code compiled for ``baseline`` and reached after the run-time test of ``checks`` may use; names the
    tables do not know (a project's rows the audit was not given) guarantee nothing."""
    ref = table.reference()  # the graph the run-time judges by
    known = [n for n in (*ref.machine.abi, *baseline, *checks) if n in ref.features]
    checked = ref.closure(known)
    have = rules.union_recipes(ref.features[n].runtime for n in checked)
    covered = {n for n, f in ref.features.items() if n in checked or _guaranteed(have, f.runtime)}
    decoded = {d for n in covered for d in ref.features[n].audit}
    # a project row's test widened to what its flags enable (rules.widen_runtime) checks built-in rows' bits
    # that no row of its own carries the decoder's names for: those rows are guaranteed all the same
    decoded |= {d for f in ref.builtin().features.values() if _guaranteed(have, f.runtime) for d in f.audit}
    return Allowance(target, highest(ref, checked), frozenset(decoded) | _abi(ref) | set(family_audit(ref)["base"]))


def _abi(ref: Table) -> frozenset[str]:
    """What the machine's ABI guarantees (x86_64: SSE2), as the decoder's names of the built-in rows: a project's
    own feature set may name no row for it, and its code uses it all the same."""
    builtin = ref.builtin()
    return frozenset(d for n in builtin.closure([n for n in ref.machine.abi if n in builtin.features])
                     for d in builtin.features[n].audit)


def for_build(det: Detection, target: str, contract: Sequence[str] | None = None) -> Allowance:
    """What an object of the version ``target`` (BASELINE: any object not a version) of a build may use; with a
    ``contract``, what both the build's baseline and that level allow."""
    if det.table is None:
        raise InputError(f"the build's compiler targets no machine of ccopt's tables ({det.arch}); nothing to audit")
    members = [] if target == "BASELINE" else [m for m in target.split("__") if m in det.table.features]
    checks = guard(det, make_target(det, members)) if members else ()
    built = for_checks(det.table, det.baseline, checks, target)
    return built if contract is None else both(built, for_checks(det.table, contract, checks, target))


def both(a: Allowance, b: Allowance) -> Allowance:
    """What code that both may reach may use."""
    if a == b or a.decoded <= b.decoded:
        return a
    if b.decoded <= a.decoded:
        return b
    return Allowance(f"{a.target}&{b.target}", tuple(n for n in a.names if n in b.names), a.decoded & b.decoded)


def feature_of(table: Table, needs: Iterable[str]) -> str:
    """The lowest feature whose row carries the decoder's names (the highest of several), or 'unknown'."""
    found = []
    for name in needs:
        rows = [n for n, f in table.features.items() if name in f.audit]  # by interest, low to high
        if not rows:
            return "unknown"
        found.append(rows[0])
    return table.sort(found)[-1] if found else ""


def level(table: Table, text: str) -> tuple[str, ...]:
    """``--baseline``: a level's name (``x86-64-v2``, data/audit.json's 'levels') or feature names of the tables,
    separated by spaces or commas."""
    aliases: Mapping[str, str] = audit_data().get("levels", {})
    out: list[str] = []
    for word in text.replace(",", " ").split():
        name = aliases.get(word.lower(), word.upper())
        if name and name not in table.features:
            known = ", ".join(sorted(aliases))
            raise InputError(f"--baseline: '{word}' is neither a level ({known}) nor a feature of "
                             f"{table.machine.name}'s table (ccopt-meson features --arch {table.machine.name})")
        out += [name] if name else []
    return tuple(out)
