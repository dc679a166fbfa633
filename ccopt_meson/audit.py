"""The ISA audit: after the build, every object's instructions against what that object may use.

What an object may use is read, not re-derived: the build's detection (its feature cache, ``cache.find``),
Meson's introspection for each target's objects and compile parameters, and the version define
``targets`` gave a dispatch version (``data/macros.json``'s ``target`` spelling).  A dispatch version may use
the baseline plus exactly what its run-time test checks (``dispatch.make_target``'s checks, or a project
protocol's ``detect``); every other object, the baseline.  "Checks" is the union of the run-time recipes of
those features and all they imply, judged by the run-time's graph; any row whose recipe that union covers
(``rules.covers``) is guaranteed too, so its decoder names (its ``audit`` key) are allowed.
"""

from __future__ import annotations

import os

from . import cache, decode, fsio, rules, schema
from ._record import TYPE_CHECKING, NamedTuple
from .dispatch import make_target
from .errors import AuditUnavailable, InputError
from .tables import macro_style, raw_family

if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

    from .records import Detection
    from .tables import Table

__all__ = ["Allowance", "Finding", "ObjectReport", "allowance", "audit_build", "objects_of", "linked_of", "format_text",
           "to_json"]

_OBJECT_SUFFIXES = (".o", ".obj")
_AUDITED_TYPES = ("executable", "static library", "shared library", "shared module")


class Allowance(NamedTuple):
    """What one object may use."""

    target: str  # BASELINE, or the dispatch version's name
    names: tuple[str, ...]  # the features guaranteed, as shown: the highest ones, lowest first
    decoded: frozenset[str]  # what the decoder may report for its instructions


class Unit(NamedTuple):
    path: str  # the object file
    shown: str  # as reported: relative to the build directory
    det: Detection
    target: str


class Finding(NamedTuple):
    function: str
    offset: int  # of its first instruction outside the allowance
    instruction: str
    needs: tuple[str, ...]  # that instruction's decoder names outside the allowance
    feature: str  # the lowest ccopt feature that carries them, or 'unknown'
    highest: str  # the same over every instruction of the function outside the allowance
    beyond: tuple[str, ...]  # the function's decoder names outside the allowance
    allowance: Allowance  # what the function may use (its object's; in a linked file, by its name)


class ObjectReport(NamedTuple):
    object: str
    allowance: Allowance
    highest: str  # the highest ccopt feature its instructions use ('' when only the family's base)
    findings: tuple[Finding, ...]
    functions: int


def _guaranteed(have: Mapping[str, Any], need: Mapping[str, Any]) -> bool:
    """A CPU passing the checks ``have`` has the feature of recipe ``need`` (a recipe checking nothing of the
    CPU, a level's own, guarantees nothing by itself)."""
    checks_something = any(need.get(k) for k in ("cpuid", "hwcap", "hwcap2", "always"))
    return checks_something and rules.covers(have, need)


def _family_audit(table: Table) -> Mapping[str, Any]:
    section = raw_family(table.machine.family).get("audit")
    if section is None:
        raise AuditUnavailable(f"the feature table of {table.machine.family} names no decoder for the ISA audit; "
                               f"its {table.machine.name} objects cannot be audited")
    return section  # type: ignore[no-any-return]


def _highest(table: Table, names: Iterable[str]) -> tuple[str, ...]:
    """The names no other of ``names`` implies, lowest first; of names that imply each other (aarch64's NEON
    and ASIMD), the one of highest interest."""
    pool = set(names)

    def above(m: str, n: str) -> bool:
        up, down = n in table.closure([m]), m in table.closure([n])
        return m != n and up and (not down or table.rank([m]) > table.rank([n]))

    return tuple(table.sort(n for n in pool if not any(above(m, n) for m in pool)))


def _checks(det: Detection, members: Sequence[str]) -> tuple[str, ...]:
    """What the run-time tests before it calls a version of ``members``: ccopt's run-time checks the target's
    ``checks``; a project protocol with its own run-time (numpy's) its ``detect``."""
    assert det.table is not None
    if macro_style(det.request.macros.style)["runtime"]:
        return make_target(det, members).checks
    return tuple(det.table.detect_of(members))


def allowance(det: Detection, target: str) -> Allowance:
    """What an object of the version ``target`` (BASELINE: any object not a version) may use."""
    if det.table is None:
        raise InputError(f"the build's compiler targets no machine of ccopt's tables ({det.arch}); nothing to audit")
    ref = det.table.reference()  # the graph the run-time judges by
    members = [] if target == "BASELINE" else [m for m in target.split("__") if m in det.table.features]
    checked = ref.closure([*det.baseline, *(_checks(det, members) if members else ())])
    have = rules.union_recipes(ref.features[n].runtime for n in checked)
    covered = {n for n, f in ref.features.items() if n in checked or _guaranteed(have, f.runtime)}
    decoded = {d for n in covered for d in ref.features[n].audit}
    return Allowance(target, _highest(ref, checked), frozenset(decoded) | set(_family_audit(ref)["base"]))


def _feature_of(table: Table, needs: Sequence[str]) -> str:
    """The lowest feature whose row carries the decoder's names (the highest of several), or 'unknown'."""
    found = []
    for name in needs:
        rows = [n for n, f in table.features.items() if name in f.audit]  # by interest, low to high
        if not rows:
            return "unknown"
        found.append(rows[0])
    return table.sort(found)[-1]


# --------------------------------------------------------------------------- what the build holds


def _detections(build_dir: str) -> dict[str, Detection]:
    """The build's detection per language (its first cache file of each)."""
    from .meson_glue import read_configured

    found: dict[str, Detection] = {}
    for path in cache.find(build_dir):
        lang = cache.lang_of(path) or "c"
        if lang not in found:
            found[lang] = read_configured(path)
    if not found:
        raise InputError(f"no ccopt feature file under '{fsio.show_path(build_dir)}'; configure the project with the "
                         "ccopt-meson subproject first")
    return found


def _meson_targets(build_dir: str) -> list[Mapping[str, Any]]:
    path = os.path.join(build_dir, "meson-info", "intro-targets.json")
    try:
        doc = schema.read_document(path, fsio.LIMITS.meson_intro, "Meson's target list", "audit.schema.json",
                                   "meson_targets")
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"'{fsio.show_path(build_dir)}' is not a configured Meson build directory (no "
                         "meson-info/intro-targets.json); give the directory 'meson setup' made") from None
    return list(doc.value)


def _version(params: Sequence[str], det: Detection) -> str:
    """The dispatch version a compile line builds (its target define), or BASELINE."""
    prefix = det.define(det.spelling("target", target=""))
    return next((p[len(prefix):] for p in params if p.startswith(prefix) and p != prefix), "BASELINE")


def _objects(folder: str) -> list[str]:
    out: list[str] = []
    for top, dirs, files in os.walk(folder, onerror=lambda exc: None):
        dirs.sort()
        out += [os.path.join(top, f) for f in sorted(files) if f.endswith(_OBJECT_SUFFIXES)]
    return out


def _targets(build_dir: str) -> Iterator[tuple[Mapping[str, Any], Detection, str]]:
    """Each target Meson builds with the detection of its language and the version it compiles (or BASELINE)."""
    dets = _detections(build_dir)
    for t in _meson_targets(build_dir):
        if t["type"] not in _AUDITED_TYPES or not t["filename"]:
            continue
        sources = [s for s in t["target_sources"] if "language" in s]
        lang = next((s["language"] for s in sources), "c")
        det = dets.get(lang) or dets.get("c") or next(iter(dets.values()))
        yield t, det, _version([p for s in sources for p in s.get("parameters", ())], det)


def objects_of(build_dir: str) -> list[Unit]:
    """Every object of the build's targets, with the detection of its language and its version."""
    return [Unit(path, os.path.relpath(path, build_dir), det, target) for t, det, target in _targets(build_dir)
            for path in _objects(t["filename"][0] + ".p")]  # Meson's private directory of the target


def linked_of(build_dir: str) -> list[Unit]:
    """The executables and shared libraries the build linked (a static library's objects are its objects)."""
    return [Unit(t["filename"][0], os.path.relpath(t["filename"][0], build_dir), det, "BASELINE")
            for t, det, _ in _targets(build_dir) if t["type"] != "static library" and os.path.isfile(t["filename"][0])]


# --------------------------------------------------------------------------- the audit


def _audit_one(unit: Unit, allowed_of: Callable[[str, bool], Allowance | None],
               base: Allowance) -> tuple[ObjectReport, decode.ObjectScan]:
    """One ELF file, each function against ``allowed_of(name, local)`` (None: not one of the project's)."""
    assert unit.det.table is not None
    ref = unit.det.table.reference()
    raw = fsio.read_bounded(unit.path, fsio.LIMITS.object_file, "object file")

    def decoded(name: str, local: bool) -> frozenset[str] | None:
        found = allowed_of(name, local)
        return None if found is None else found.decoded

    scanned = decode.scan(unit.path, raw, decoded, frozenset(_family_audit(ref).get("compatible", ())))
    findings = []
    for f in scanned.functions:
        may = allowed_of(f.name, f.local)
        if f.needs and may is not None:
            beyond = tuple(sorted(f.used - may.decoded))
            findings.append(Finding(f.name, f.offset, f.instruction, f.needs, _feature_of(ref, f.needs),
                                    _feature_of(ref, beyond), beyond, may))
    used = {d for f in scanned.functions for d in f.used}
    rows = [n for n, feat in ref.features.items() if used & set(feat.audit)]
    report = ObjectReport(unit.shown, base, rows and ref.sort(rows)[-1] or "", tuple(findings), len(scanned.functions))
    return report, scanned


def _linked_rule(defined: Mapping[tuple[str, bool], list[Allowance]]) -> Callable[[str, bool], Allowance | None]:
    """What a function of a linked file may use, by the objects that define its name: a global one, what every
    caller may (the least of them: a name a baseline object defines is baseline code, whichever copy the linker
    kept); a static one, the most of them (a name several files use for their own functions); a name no object
    of the project defines (the C library's, the compiler's) is not read."""

    def rule(name: str, local: bool) -> Allowance | None:
        found = defined.get((name, local))
        if not found:
            return None
        return (max if local else min)(found, key=lambda a: len(a.decoded))

    return rule


def audit_build(build_dir: str | os.PathLike[str], linked: bool = False) -> list[ObjectReport]:
    """Every object of a configured and built Meson build directory, audited; with ``linked``, its executables
    and shared libraries too, function by function."""
    folder = os.fspath(build_dir)
    units = objects_of(folder)
    if not units:
        raise InputError(f"no object files under '{fsio.show_path(folder)}'; build it first (ninja -C {folder})")
    memo: dict[tuple[int, str], Allowance] = {}
    reports = []
    defined: dict[tuple[str, bool], list[Allowance]] = {}
    for u in units:
        key = (id(u.det), u.target)
        if key not in memo:
            memo[key] = allowance(u.det, u.target)
        a = memo[key]
        report, scanned = _audit_one(u, lambda name, local: a, a)  # noqa: B023 (used before the next turn)
        reports.append(report)
        for f in scanned.functions:
            defined.setdefault((f.name, f.local), []).append(a)
    for u in linked_of(folder) if linked else ():
        base = memo.get((id(u.det), "BASELINE")) or allowance(u.det, "BASELINE")
        reports.append(_audit_one(u, _linked_rule(defined), base)[0])
    return reports


# --------------------------------------------------------------------------- output


def _may_use(a: Allowance) -> str:
    what = "the baseline" if a.target == "BASELINE" else f"version {a.target}: the baseline and its run-time test"
    return f"{what} ({' '.join(a.names) or 'nothing above the architecture'})"


def format_text(reports: Sequence[ObjectReport]) -> str:
    lines = []
    for r in reports:
        for f in r.findings:
            lines.append(f"{r.object}: {f.function}: needs {f.highest} ({' '.join(f.beyond)}), "
                         f"first at 0x{f.offset:x}: '{f.instruction}' ({f.feature}); "
                         f"{'it' if f.allowance != r.allowance else 'the object'} may use {_may_use(f.allowance)}")
    for r in reports:
        state = f"{len(r.findings)} offending function{'s' if len(r.findings) != 1 else ''}" if r.findings else "ok"
        lines.append(f"summary: {r.object}: {state}; highest feature used {r.highest or 'none'}; "
                     f"may use {r.allowance.target}")
    bad = sum(1 for r in reports if r.findings)
    lines.append(f"isa audit: {len(reports)} objects, {bad} with findings")
    return "".join(line + "\n" for line in lines)


def to_json(reports: Sequence[ObjectReport]) -> dict[str, Any]:
    return {"objects": [{"object": r.object, "target": r.allowance.target, "may_use": list(r.allowance.names),
                         "highest": r.highest, "functions": r.functions,
                         "findings": [{"function": f.function, "offset": f.offset, "instruction": f.instruction,
                                       "needs": list(f.needs), "feature": f.feature, "highest": f.highest,
                                       "beyond": list(f.beyond), "may_use": f.allowance.target} for f in r.findings]}
                        for r in reports],
            "findings": sum(len(r.findings) for r in reports)}
