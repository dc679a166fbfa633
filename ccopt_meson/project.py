"""A project's features file: its own features, redefinitions of built-in ones, a limit on ``max``
and named target groups, read and checked.

``features`` use the feature schema of the built-in tables plus a ``probe`` path relative to the
file; ``override`` redefines built-in rows (each field given replaces the table's, ``flags`` per
style); ``max`` lists, per family, the only names ``max`` selects; ``groups`` are usable as
``#name`` in ``@targets``; ``dispatch_implied: true`` closes what ``cpu-dispatch`` selects under
implication, as numpy 2's option parser does (``avx2`` also dispatches FMA3, F16C, AVX, ...).
``feature_set`` states instead the project's whole set of names per family (rows starting from
built-in ones with ``like``, its own ``min``), with ``retired`` names, ``minus`` and ``keep_covered``;
``rings`` and ``plus_parts`` say how rows that imply each other are built and how ``+ext`` parts are
merged.  ``load`` turns it into a ``tables.Project`` that a ``Request`` carries; nothing here is
process-wide state.  The file and its probes are untrusted input, read like dispatch sources:
regular files only, bounded.
"""

from __future__ import annotations

import os
import re

from . import fsio, rules, schema, versions
from ._record import TYPE_CHECKING
from .digest import sha256
from .errors import InputError, TableError, did_you_mean
from .tables import Policies, Project, data_file, families, raw_family
from .tokens import RESERVED, show

if TYPE_CHECKING:
    from typing import Any, Mapping

__all__ = ["load"]


def _error(path: str, message: str) -> InputError:
    return InputError(f"features file '{path}': {message}")


def _read(path: str, what: str) -> bytes:
    try:
        return fsio.read_bounded(path, fsio.LIMITS.probe_source, what)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise InputError(f"{what} '{fsio.show_path(path)}' does not exist") from exc


def _document(given: str, shown: str) -> schema.Document:
    """The file read and checked against its schema (``data/schema.json``, definition ``project``)."""
    try:
        return schema.read_document(given, fsio.LIMITS.features_file, "features file", "schema.json", "project")
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise InputError(f"features file '{fsio.show_path(given)}' does not exist") from exc
    except TableError as exc:
        raise _error(shown, str(exc)) from exc


def load(path: str | os.PathLike[str] | None) -> Project | None:
    """The project features of the file at ``path`` (None: built-in tables only).

    Both ways a file may describe features (the additive ``features``/``override`` keys, or a whole
    ``feature_set``) become the same model here: the rows of every family, each a complete row of the
    tables' schema.  Every rule on rows is then checked once, on that model (``_check_family``)."""
    if not path:
        return None
    given = os.path.abspath(path)
    shown = os.fspath(path)
    text, doc = _document(given, shown)
    h = sha256(text)
    base = os.path.dirname(given)
    owns = "feature_set" in doc
    if owns:
        for key in ("features", "override", "max"):
            if key in doc:
                raise _error(shown, f"'{key}' adds to the built-in tables, which a 'feature_set' replaces; "
                             "state the rows in 'feature_set'")
        rows, mins = _feature_set(shown, base, doc, h)
    else:
        rows, mins = _additive(shown, base, doc, h), {}
    for fam, fam_rows in rows.items():
        _check_family(shown, fam, fam_rows)
    known = {f["name"] for fam_rows in rows.values() for f in fam_rows}
    retired = _retired(shown, doc.get("retired", {}), known)
    limits = {fam: _max(shown, fam, names, rows[fam]) for fam, names in _per_family(shown, doc, "max").items()}
    groups: dict[str, tuple[tuple[str, ...], ...]] = {}
    for name, items in doc.get("groups", {}).items():
        if name.upper() in groups:  # '#name' is case-insensitive like every other name
            other = next(g for g in doc["groups"] if g.upper() == name.upper())
            raise _error(shown, f"groups '{other}' and '{name}' differ only in case, and '#name' ignores case; "
                         "rename one")
        groups[name.upper()] = _group(shown, name, items, known)
    policies = Policies(dispatch_implied=doc.get("dispatch_implied", False), minus=doc.get("minus", "successors"),
                        keep_covered=doc.get("keep_covered", False), own_detect=owns,
                        rings=doc.get("rings", "fold"), plus_parts=doc.get("plus_parts", "ascending"))
    return Project(path=os.path.realpath(given), given=given, digest=h.hexdigest(), rows=rows, groups=groups,
                   max=limits, owns=owns, mins=mins, retired=retired, policies=policies)


def _additive(shown: str, base: str, doc: Mapping[str, Any], h: Any) -> dict[str, tuple[Mapping[str, Any], ...]]:
    """The rows of every family for a file that adds to the built-in tables: each built-in row with the file's
    redefinition of it (``override``), then the file's own rows (``features``)."""
    own = _per_family(shown, doc, "features")
    changed = _per_family(shown, doc, "override")
    rows: dict[str, tuple[Mapping[str, Any], ...]] = {}
    for fam in families():
        fields = _overrides(shown, fam, changed.get(fam, []))
        builtin = [_overridden(f, fields.get(f["name"])) for f in raw_family(fam)["features"]]
        rows[fam] = rules.widen_runtime(fam, (*builtin, *(_feature(shown, base, fam, r, h) for r in own.get(fam, []))))
    return rows


_WHERE = " where"  # a key no schema admits: the section of the file a row came from


def _overridden(raw: Mapping[str, Any], fields: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A built-in record with a project's redefinition: each field given replaces the table's, ``flags``
    per style."""
    if not fields:
        return raw
    out = {**raw, **{k: v for k, v in fields.items() if k != "name"}, _WHERE: "override"}
    if "runtime" not in fields:  # checked against what the new flags enable, and widened to it
        out[rules.INHERITED_RUNTIME] = raw["name"]
    if "flags" in fields:
        out["flags"] = {**raw["flags"], **fields["flags"]}
    return out


# --------------------------------------------------------------------------- a project's own feature set

_INHERITED = ("headers", "macros", "flags", "group", "extra_checks", "runtime", "audit")


def _feature_set(shown: str, base: str, doc: Mapping[str, Any],
                 h: Any) -> tuple[dict[str, tuple[Mapping[str, Any], ...]], dict[str, tuple[str, ...]]]:
    """The rows of every family of the project's own set (checked by the schema), ``like`` resolved; and 'min'
    per machine."""
    rows: dict[str, tuple[Mapping[str, Any], ...]] = {}
    mins: dict[str, tuple[str, ...]] = {}
    for fam, part in doc["feature_set"].items():
        if fam not in families():
            hint = did_you_mean(fam, [f.upper() for f in families()]).lower()
            raise _error(shown, f"feature_set: unknown family '{fam}'{hint}; known: {', '.join(families())}")
        rows[fam] = rules.widen_runtime(fam, tuple(_set_row(shown, base, fam, r, h) for r in part["features"]))
        mins.update(_set_min(shown, fam, part.get("min", {}), rows[fam]))
    return rows, mins


def _set_row(shown: str, base: str, fam: str, raw: Mapping[str, Any], h: Any) -> dict[str, Any]:
    """One row: the built-in row it is ``like`` (its fields but name, interest and implies; its per-machine and
    per-compiler overrides but for the fields the row states and their implies), then its own."""
    name = raw["name"]
    builtin = {f["name"]: f for f in raw_family(fam)["features"]}
    row: dict[str, Any] = {"headers": [], "macros": [], "flags": {}, "group": [], "runtime": {}, _WHERE: "feature_set"}
    if "like" in raw:
        like = builtin.get(raw["like"])
        if like is None:
            raise _error(shown, f"feature_set.{fam}: {name} is like '{raw['like']}', not a built-in feature of "
                         f"{fam}{did_you_mean(raw['like'], builtin)}")
        row.update({k: like[k] for k in _INHERITED if k in like})
        row["probe"] = "@" + like["name"]
        if "runtime" not in raw:  # checked against what the row's flags enable, and widened to it
            row[rules.INHERITED_RUNTIME] = like["name"]
        row["overrides"] = _inherited_overrides(like, raw)
    row.update({k: v for k, v in raw.items() if k not in ("like", "overrides")})
    row["overrides"] = [*row.get("overrides", ()), *raw.get("overrides", ())]
    if "flags" in raw and "like" in raw:
        row["flags"] = {**builtin[raw["like"]]["flags"], **raw["flags"]}
    if "probe" not in row:
        raise _error(shown, f"feature_set.{fam}: {name} needs a 'probe' (a C file relative to the features file, or "
                     "'@NAME' for a built-in row's) or a 'like'")
    row["probe"] = _set_probe(shown, base, fam, name, row["probe"], builtin, h)
    return row


def _inherited_overrides(like: Mapping[str, Any], raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The built-in row's overrides a ``like`` row keeps: aarch64 drops armv7's ``-mfpu=neon`` by one.  Only the
    fields ``like`` inherits, and not one the row states itself (it is the row's on every machine): never an
    implication (it names the built-in rows) nor a ``disable`` (the table's verdict on its own row: numpy builds
    its X86_V2 on 32-bit x86, which ccopt's X86_V2 is not)."""
    kept = []
    for ov in like.get("overrides", ()):
        fields = {k: v for k, v in ov.items() if k == "when" or (k in _INHERITED and k not in raw)}
        if len(fields) > 1:  # more than its 'when'
            kept.append(fields)
    return kept


def _set_probe(shown: str, base: str, fam: str, name: str, probe: str, builtin: Mapping[str, Any], h: Any) -> str:
    if probe.startswith("@"):
        if probe[1:] not in builtin:
            raise _error(shown, f"feature_set.{fam}: {name}'s probe '{probe[:40]}' names no built-in feature of "
                         f"{fam}{did_you_mean(probe[1:], builtin)}")
        return data_file(f"probes/{fam}/{probe[1:].lower()}.c")
    return _own_probe(shown, base, name, probe, h)


def _set_min(shown: str, fam: str, section: Mapping[str, Any], rows: tuple[Mapping[str, Any], ...]
             ) -> dict[str, tuple[str, ...]]:
    machines = [m["name"] for m in raw_family(fam)["machines"]]
    names = {r["name"] for r in rows}
    out: dict[str, tuple[str, ...]] = {}
    for machine, wanted in section.items():
        if machine not in machines:
            raise _error(shown, f"feature_set.{fam}.min: '{machine}' is not a machine of {fam}"
                         f"{did_you_mean(machine, machines)}; known: {', '.join(machines)}")
        for n in wanted:
            if n not in names:
                raise _error(shown, f"feature_set.{fam}.min.{machine}: '{n}' is not stated in the set"
                             f"{did_you_mean(n, names)}")
        out[machine] = tuple(wanted)
    return out


# --------------------------------------------------------------------------- the rules every row follows


def _check_family(shown: str, fam: str, rows: tuple[Mapping[str, Any], ...]) -> None:
    """Every rule on a family's rows, whichever section of the file they came from (or the built-in table):
    names are feature names, not keywords, and unique; interests and probes are unique; implications name rows
    of the family, in any direction (numpy's SSE and SSE2 imply each other, as aarch64's NEON features do;
    interest only orders flags and targets); extra checks are the family's; patterns run in linear time;
    each machine has a run-time test, and the test covers what the flags enable."""
    interest: dict[str, str] = {}
    probes: dict[str, str] = {}
    for r in rows:
        where, name = _where(fam, r), r["name"]
        _check_name(shown, where, name)
        if name in interest.values():
            raise _error(shown, f"{where}: {name} is stated twice; merge the two rows")
        if r["interest"] in interest:  # interest orders flags (later ones win conflicts) and targets: a total order
            raise _error(shown, f"{where}: {name}: interest {r['interest']} is {interest[r['interest']]}'s; "
                         "pick another")
        probe = r.get("probe") or data_file(f"probes/{fam}/{name.lower()}.c")
        if probe in probes:  # one batch includes each probe once
            raise _error(shown, f"{where}: {name} and {probes[probe]} share a probe; give one its own")
        interest[r["interest"]], probes[probe] = name, name
    names = set(interest.values())
    extras = {e["name"] for e in raw_family(fam)["extra_checks"]}
    for r in rows:
        _check_references(shown, fam, r, names, extras)
        _check_patterns(shown, _where(fam, r), r)
        _check_versions(shown, _where(fam, r), r)
    # the rows the file states a run-time test for (an inherited one was widened to cover its flags already);
    # the built-in rows as written: tests/test_rules.py holds them to the same rule
    stated = [r["name"] for r in rows if r.get(_WHERE) and rules.INHERITED_RUNTIME not in r]
    gaps = rules.runtime_gaps(fam, rows, names=stated)
    for r in rows:
        if r["name"] in gaps:
            raise _error(shown, f"{_where(fam, r)}: {rules.describe_gap(r['name'], gaps[r['name']])}")


def _where(fam: str, row: Mapping[str, Any]) -> str:
    """Where a row was stated: 'feature_set.x86', 'features.x86', 'override.x86', or the table 'x86.json'."""
    return f"{row[_WHERE]}.{fam}" if row.get(_WHERE) else f"{fam}.json"


def _check_name(shown: str, where: str, name: str) -> None:
    why = rules.bad_name(name)
    if why:
        raise _error(shown, f"{where}: {why}")


def _check_references(shown: str, fam: str, r: Mapping[str, Any], names: set[str], extras: set[str]) -> None:
    where = _where(fam, r)
    per_compiler = [d for ov in r.get("overrides", ()) for d in ov.get("implies", ())]
    for dep in [*r["implies"], *per_compiler]:
        if dep not in names:
            raise _error(shown, f"{where}: {r['name']} implies '{dep}', which {fam} does not state"
                         f"{did_you_mean(dep, names)}")
    for e in r.get("extra_checks", ()):
        if e not in extras:
            raise _error(shown, f"{where}: {r['name']}'s extra check '{e}' is not one of {fam}'s"
                         f"{did_you_mean(e, extras)}")
    if not r.get("runtime"):  # the run-time would answer 0 on every CPU: code compiled and never called
        raise _error(shown, f"{where}: {r['name']} has no run-time test; add 'runtime' (per machine or '*', as the "
                     "built-in rows state it) or start from a built-in row with 'like'")
    machines = [m["name"] for m in raw_family(fam)["machines"]]
    unknown = [k for k in r.get("runtime", {}) if k != "*" and k not in machines]
    if unknown:
        raise _error(shown, f"{where}: {r['name']}'s run-time recipe is keyed '{show(unknown[0])}', not a machine "
                     f"of {fam}; use '*' or one of {', '.join(machines)}")


def _check_patterns(shown: str, where: str, r: Mapping[str, Any]) -> None:
    """``flags_replace`` and a ``detect`` item's ``replaces``: regular expressions matched at the start of a flag or
    a name, limited to what runs in linear time (``rules.unsafe_pattern``)."""
    parts = [r, *r.get("overrides", ())]
    found = [("flags_replace", p["flags_replace"]) for p in parts if p.get("flags_replace")]
    found += [("detect's 'replaces'", i["replaces"]) for p in parts for i in p.get("detect", ())
              if isinstance(i, dict) and i.get("replaces")]
    for key, text in found:
        why = rules.unsafe_pattern(text)
        if why:
            raise _error(shown, f"{where}: {r['name']}'s {key} '{show(text)}' {why}")


def _check_versions(shown: str, where: str, r: Mapping[str, Any]) -> None:
    """A ``when``'s version range holds for some version (its grammar is the schema's)."""
    for ov in r.get("overrides", ()):
        text = ov["when"].get("version")
        why = versions.why_empty(text) if text else ""
        if why:
            raise _error(shown, f"{where}: {r['name']}'s version range '{text}' {why}; state the versions it is for")


def _retired(shown: str, section: Mapping[str, str], known: set[str]) -> dict[str, str]:
    """Names a project no longer knows -> the name that stands for them now ('': none); a warning when used."""
    out: dict[str, str] = {}
    for old, new in section.items():
        if old in RESERVED:  # 'NONE' standing for a level would turn cpu-baseline=none into that level
            raise _error(shown, f"retired: '{old}' is a keyword of cpu-baseline/cpu-dispatch or @targets, not a "
                         "name a project can retire; drop it")
        if old in known:
            raise _error(shown, f"retired: {old} is a name the project still knows; drop one of the two")
        if new and new not in known:
            raise _error(shown, f"retired: {old} stands for '{new[:40]}', which the project does not know"
                         f"{did_you_mean(new, known)}")
        out[old] = new
    return out


def _per_family(shown: str, doc: Mapping[str, Any], key: str) -> dict[str, list[Any]]:
    """``doc[key]`` (an object of lists, as the schema says), its keys checked against the families."""
    section: dict[str, list[Any]] = doc.get(key, {})
    for fam in section:
        if fam not in families():
            hint = did_you_mean(fam, [f.upper() for f in families()]).lower()
            raise _error(shown, f"{key}: unknown family '{fam}'{hint}; known: {', '.join(families())}")
    return section


def _overrides(shown: str, fam: str, entries: list[Any]) -> dict[str, Mapping[str, Any]]:
    """A redefinition of built-in features, by name (its fields are checked with every row, in ``_check_family``)."""
    builtin = {f["name"] for f in raw_family(fam)["features"]}
    out: dict[str, Mapping[str, Any]] = {}
    for raw in entries:
        name = raw["name"]
        if name not in builtin:
            raise _error(shown, f"override.{fam}: '{name}' is not a built-in feature of {fam}"
                         f"{did_you_mean(name, builtin)}; a new feature goes under 'features'")
        if name in out:
            raise _error(shown, f"override.{fam}: {name} is redefined twice; merge the two entries")
        out[name] = raw
    return out


def _max(shown: str, fam: str, names: list[Any], rows: tuple[Mapping[str, Any], ...]) -> tuple[str, ...]:
    """The only names 'max' selects in ``fam`` (a project whose run-time knows only those)."""
    known = {f["name"] for f in rows}
    out: list[str] = []
    for n in names:
        if n.upper() not in known:
            raise _error(shown, f"max.{fam}: unknown feature {n!r}{did_you_mean(n, known)}")
        out.append(n.upper())
    return tuple(dict.fromkeys(out))


def _feature(shown: str, base: str, fam: str, raw: Mapping[str, Any], h: Any) -> Mapping[str, Any]:
    name = raw["name"]
    if any(f["name"] == name for f in raw_family(fam)["features"]):
        raise _error(shown, f"{name} is already a feature of {fam}; pick another name")
    if "probe" not in raw:
        raise _error(shown, f"{name} needs a 'probe': a C file, relative to the features file")
    return {**raw, "probe": _own_probe(shown, base, name, raw["probe"], h), _WHERE: "features"}


def _own_probe(shown: str, base: str, name: str, probe: str, h: Any) -> str:
    """A project's probe source (relative to the features file), read into the file's digest."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\.c", os.path.basename(probe)):
        raise _error(shown, f"{name}: probe '{probe[:80]}' must be a C file named with letters, digits, "
                     "'_', '.', '+' or '-' (it is #included by that name)")
    given = os.path.join(base, probe)
    h.update(name.encode() + b"\0" + _read(given, f"probe of {name}") + b"\0")
    return os.path.realpath(given)


def _group(shown: str, name: str, items: list[Any], known: set[str]) -> tuple[tuple[str, ...], ...]:
    out: list[tuple[str, ...]] = []
    for item in items:
        members = [item] if isinstance(item, str) else item
        for m in members:
            if m.upper() not in known:
                raise _error(shown, f"group '{name}': unknown feature '{m}'{did_you_mean(m, known)}")
        out.append(tuple(m.upper() for m in members))
    return tuple(out)
