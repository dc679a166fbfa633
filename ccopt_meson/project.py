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

from . import fsio, rules, schema
from ._record import TYPE_CHECKING
from .digest import sha256
from .errors import InputError, TableError, did_you_mean
from .tables import Policies, Project, Row, builtin_rows, data_file, families, machines, raw_family
from .tokens import RESERVED

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
    tables' schema.  Every rule on rows is then checked once, on that model (``rules.check_family``, which the
    built-in tables pass too)."""
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
        rows, mins = _additive(shown, base, doc, h), {m.name: m.min for m in machines()}
    for fam, fam_rows in rows.items():
        try:
            rules.check_family(fam, fam_rows)
        except TableError as exc:
            raise _error(shown, str(exc)) from exc
    known = {r.name for fam_rows in rows.values() for r in fam_rows}
    retired = _retired(shown, doc.get("retired", {}), known)
    limits = {fam: _max(shown, fam, names, rows[fam]) for fam, names in _per_family(shown, doc, "max").items()}
    groups: dict[str, tuple[tuple[str, ...], ...]] = {}
    for name, items in doc.get("groups", {}).items():
        if name.upper() in groups:  # '#name' is case-insensitive like every other name
            other = next(g for g in doc["groups"] if g.upper() == name.upper())
            raise _error(shown, f"groups '{other}' and '{name}' differ only in case, and '#name' ignores case; "
                         "rename one")
        groups[name.upper()] = _group(shown, name, items, known)
    # each default is the record's; a feature_set's rows state their own run-time tests ('detect')
    policies = Policies(**{k: doc[k] for k in Policies._fields if k in doc}, own_detect=owns)
    return Project(path=os.path.realpath(given), given=given, digest=h.hexdigest(), rows=rows, groups=groups,
                   max=limits, mins=mins, retired=retired, policies=policies)


def _additive(shown: str, base: str, doc: Mapping[str, Any], h: Any) -> dict[str, tuple[Row, ...]]:
    """The rows of every family for a file that adds to the built-in tables: each built-in row with the file's
    redefinition of it (``override``), then the file's own rows (``features``)."""
    own = _per_family(shown, doc, "features")
    changed = _per_family(shown, doc, "override")
    rows: dict[str, tuple[Row, ...]] = {}
    for fam in families():
        fields = _overrides(shown, fam, changed.get(fam, []))
        builtin = [_overridden(r, fields.get(r.name)) for r in builtin_rows(fam)]
        rows[fam] = rules.widen_runtime(fam, (*builtin, *(_feature(shown, base, fam, r, h) for r in own.get(fam, []))))
    return rows


def _overridden(row: Row, fields: Mapping[str, Any] | None) -> Row:
    """A built-in row with a project's redefinition: each field given replaces the table's, ``flags`` per style.
    Without a ``runtime`` of its own it keeps the table's, checked against what the new flags enable and widened
    to it."""
    if not fields:
        return row
    out = {**row.fields, **{k: v for k, v in fields.items() if k != "name"}}
    if "flags" in fields:
        out["flags"] = {**row.fields["flags"], **fields["flags"]}
    return Row(out, where="override", runtime_of="" if "runtime" in fields else row.name)


# --------------------------------------------------------------------------- a project's own feature set

_INHERITED = ("headers", "macros", "flags", "group", "extra_checks", "runtime", "audit")


def _feature_set(shown: str, base: str, doc: Mapping[str, Any],
                 h: Any) -> tuple[dict[str, tuple[Row, ...]], dict[str, tuple[str, ...]]]:
    """The rows of every family of the project's own set (checked by the schema), ``like`` resolved; and 'min'
    per machine."""
    rows: dict[str, tuple[Row, ...]] = {}
    mins: dict[str, tuple[str, ...]] = {}
    for fam, part in doc["feature_set"].items():
        if fam not in families():
            hint = did_you_mean(fam, [f.upper() for f in families()]).lower()
            raise _error(shown, f"feature_set: unknown family '{fam}'{hint}; known: {', '.join(families())}")
        rows[fam] = rules.widen_runtime(fam, tuple(_set_row(shown, base, fam, r, h) for r in part["features"]))
        mins.update(_set_min(shown, fam, part.get("min", {}), rows[fam]))
    return rows, mins


def _set_row(shown: str, base: str, fam: str, raw: Mapping[str, Any], h: Any) -> Row:
    """One row: the built-in row it is ``like`` (its fields but name, interest and implies; its per-machine and
    per-compiler overrides but for the fields the row states and their implies), then its own."""
    name = raw["name"]
    builtin = {f["name"]: f for f in raw_family(fam)["features"]}
    row: dict[str, Any] = {"headers": [], "macros": [], "flags": {}, "group": [], "runtime": {}}
    runtime_of = ""
    if "like" in raw:
        like = builtin.get(raw["like"])
        if like is None:
            raise _error(shown, f"feature_set.{fam}: {name} is like '{raw['like']}', not a built-in feature of "
                         f"{fam}{did_you_mean(raw['like'], builtin)}")
        row.update({k: like[k] for k in _INHERITED if k in like})
        row["probe"] = "@" + like["name"]
        if "runtime" not in raw:  # checked against what the row's flags enable, and widened to it
            runtime_of = like["name"]
        row["overrides"] = _inherited_overrides(like, raw)
    row.update({k: v for k, v in raw.items() if k not in ("like", "overrides")})
    row["overrides"] = [*row.get("overrides", ()), *raw.get("overrides", ())]
    if "flags" in raw and "like" in raw:
        row["flags"] = {**builtin[raw["like"]]["flags"], **raw["flags"]}
    if "probe" not in row:
        raise _error(shown, f"feature_set.{fam}: {name} needs a 'probe' (a C file relative to the features file, or "
                     "'@NAME' for a built-in row's) or a 'like'")
    row["probe"] = _set_probe(shown, base, fam, name, row["probe"], builtin, h)
    return Row(row, where="feature_set", runtime_of=runtime_of)


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


def _set_min(shown: str, fam: str, section: Mapping[str, Any], rows: tuple[Row, ...]) -> dict[str, tuple[str, ...]]:
    machines = [m["name"] for m in raw_family(fam)["machines"]]
    names = {r.name for r in rows}
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
    """A redefinition of built-in features, by name (its fields are checked with every row: ``rules.check_family``)."""
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


def _max(shown: str, fam: str, names: list[Any], rows: tuple[Row, ...]) -> tuple[str, ...]:
    """The only names 'max' selects in ``fam`` (a project whose run-time knows only those)."""
    known = {r.name for r in rows}
    out: list[str] = []
    for n in names:
        if n.upper() not in known:
            raise _error(shown, f"max.{fam}: unknown feature {n!r}{did_you_mean(n, known)}")
        out.append(n.upper())
    return tuple(dict.fromkeys(out))


def _feature(shown: str, base: str, fam: str, raw: Mapping[str, Any], h: Any) -> Row:
    name = raw["name"]
    if any(r.name == name for r in builtin_rows(fam)):
        raise _error(shown, f"{name} is already a feature of {fam}; pick another name")
    if "probe" not in raw:
        raise _error(shown, f"{name} needs a 'probe': a C file, relative to the features file")
    return Row({**raw, "probe": _own_probe(shown, base, name, raw["probe"], h)}, where="features")


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
