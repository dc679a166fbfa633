"""A project's features file: its own features, redefinitions of built-in ones, a limit on ``max``
and named target groups, read and checked.

``features`` use the feature schema of the built-in tables plus a ``probe`` path relative to the
file; ``override`` redefines built-in rows (each field given replaces the table's, ``flags`` per
style); ``max`` lists, per family, the only names ``max`` selects; ``groups`` are usable as
``#name`` in ``@targets``; ``dispatch_implied: true`` closes what ``cpu-dispatch`` selects under
implication, as numpy 2's option parser does (``avx2`` also dispatches FMA3, F16C, AVX, ...).
``feature_set`` states instead the project's whole set of names per family (rows starting from
built-in ones with ``like``, its own ``min``), with ``retired`` names, ``minus`` and ``keep_covered``.
``load`` turns it into a
``tables.Project`` that a ``Request`` carries; nothing here is process-wide state.  The file
and its probes are untrusted input, read like dispatch sources: regular files only, bounded.
"""

from __future__ import annotations

import os
import re

from . import fsio, schema
from ._record import TYPE_CHECKING
from .digest import sha256
from .errors import InputError, TableError, did_you_mean
from .tables import Project, data_file, families, raw_family
from .tokens import RESERVED

if TYPE_CHECKING:
    from typing import Any, Mapping

__all__ = ["load", "MAX_BYTES"]

MAX_BYTES = 1 << 20  # a features file or one of its probes; numpy's whole meson_cpu/ is ~40 KiB


def _error(path: str, message: str) -> InputError:
    return InputError(f"features file '{path}': {message}")


def _read(path: str, what: str) -> bytes:
    try:
        return fsio.read_bounded(path, MAX_BYTES, what)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise InputError(f"{what} '{fsio.show_path(path)}' does not exist") from exc


def _document(given: str, shown: str) -> schema.Document:
    """The file read and checked against its schema (``data/schema.json``, definition ``project``)."""
    try:
        return schema.read_document(given, MAX_BYTES, "features file", "schema.json", "project")
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise InputError(f"features file '{fsio.show_path(given)}' does not exist") from exc
    except TableError as exc:
        raise _error(shown, str(exc)) from exc


def load(path: str | os.PathLike[str] | None) -> Project | None:
    """The project features of the file at ``path`` (None: built-in tables only)."""
    if not path:
        return None
    given = os.path.abspath(path)
    shown = os.fspath(path)
    text, doc = _document(given, shown)
    h = sha256(text)
    base = os.path.dirname(given)
    features: dict[str, tuple[Mapping[str, Any], ...]] = {}
    for fam, rows in _per_family(shown, doc, "features").items():
        features[fam] = tuple(_feature(shown, base, fam, r, h) for r in rows)
    overrides = {fam: _overrides(shown, fam, entries, features.get(fam, ()))
                 for fam, entries in _per_family(shown, doc, "override").items()}
    for fam, records in features.items():
        _check_graph(shown, fam, records)
    owned = _feature_set(shown, base, doc, h) if "feature_set" in doc else None
    if owned is not None:
        for key in ("features", "override", "max"):
            if key in doc:
                raise _error(shown, f"'{key}' adds to the built-in tables, which a 'feature_set' replaces; "
                             "state the rows in 'feature_set'")
        known = {f["name"] for rows in owned[0].values() for f in rows}
    else:
        known = {f["name"] for fam in families() for f in [*raw_family(fam)["features"], *features.get(fam, ())]}
    retired = _retired(shown, doc.get("retired", {}), known)
    limits = {fam: _max(shown, fam, names, features.get(fam, ()))
              for fam, names in _per_family(shown, doc, "max").items()}
    groups: dict[str, tuple[tuple[str, ...], ...]] = {}
    for name, items in doc.get("groups", {}).items():
        if name.upper() in groups:  # '#name' is case-insensitive like every other name
            other = next(g for g in doc["groups"] if g.upper() == name.upper())
            raise _error(shown, f"groups '{other}' and '{name}' differ only in case, and '#name' ignores case; "
                         "rename one")
        groups[name.upper()] = _group(shown, name, items, known)
    return Project(path=os.path.realpath(given), given=given, digest=h.hexdigest(), features=features, groups=groups,
                   overrides=overrides, max=limits, dispatch_implied=doc.get("dispatch_implied", False),
                   owned=owned[0] if owned else None, mins=owned[1] if owned else {}, retired=retired,
                   minus=doc.get("minus", "successors"), keep_covered=doc.get("keep_covered", False))


# --------------------------------------------------------------------------- a project's own feature set

_INHERITED = ("headers", "macros", "flags", "group", "extra_checks", "runtime")


def _feature_set(shown: str, base: str, doc: Mapping[str, Any],
                 h: Any) -> tuple[dict[str, tuple[dict[str, Any], ...]], dict[str, tuple[str, ...]]]:
    """The rows of every family of the project's own set (checked by the schema), ``like`` resolved; and 'min'
    per machine."""
    rows: dict[str, tuple[dict[str, Any], ...]] = {}
    mins: dict[str, tuple[str, ...]] = {}
    for fam, part in doc["feature_set"].items():
        if fam not in families():
            hint = did_you_mean(fam, [f.upper() for f in families()]).lower()
            raise _error(shown, f"feature_set: unknown family '{fam}'{hint}; known: {', '.join(families())}")
        rows[fam] = tuple(_set_row(shown, base, fam, r, h) for r in part["features"])
        _check_set(shown, fam, rows[fam])
        mins.update(_set_min(shown, fam, part.get("min", {}), rows[fam]))
    return rows, mins


def _set_row(shown: str, base: str, fam: str, raw: Mapping[str, Any], h: Any) -> dict[str, Any]:
    """One row: the built-in row it is ``like`` (its fields but name, interest, implies and overrides), then its own."""
    name = raw["name"]
    _check_name(shown, name)
    builtin = {f["name"]: f for f in raw_family(fam)["features"]}
    row: dict[str, Any] = {"headers": [], "macros": [], "flags": {}, "group": [], "runtime": {}}
    if "like" in raw:
        like = builtin.get(raw["like"])
        if like is None:
            raise _error(shown, f"feature_set.{fam}: {name} is like '{raw['like']}', not a built-in feature of "
                         f"{fam}{did_you_mean(raw['like'], builtin)}")
        row.update({k: like[k] for k in _INHERITED if k in like})
        row["probe"] = "@" + like["name"]
    row.update({k: v for k, v in raw.items() if k != "like"})
    if "flags" in raw and "like" in raw:
        row["flags"] = {**builtin[raw["like"]]["flags"], **raw["flags"]}
    if "probe" not in row:
        raise _error(shown, f"feature_set.{fam}: {name} needs a 'probe' (a C file relative to the features file, or "
                     "'@NAME' for a built-in row's) or a 'like'")
    row["probe"] = _set_probe(shown, base, fam, name, row["probe"], builtin, h)
    return row


def _set_probe(shown: str, base: str, fam: str, name: str, probe: str, builtin: Mapping[str, Any], h: Any) -> str:
    if probe.startswith("@"):
        if probe[1:] not in builtin:
            raise _error(shown, f"feature_set.{fam}: {name}'s probe '{probe[:40]}' names no built-in feature of "
                         f"{fam}{did_you_mean(probe[1:], builtin)}")
        return data_file(f"probes/{fam}/{probe[1:].lower()}.c")
    return _own_probe(shown, base, name, probe, h)


def _check_set(shown: str, fam: str, rows: tuple[Mapping[str, Any], ...]) -> None:
    """Names, interests and probes are unique; implications name rows of the set (in any direction: numpy's SSE
    and SSE2 imply each other, as aarch64's NEON features do; interest only orders flags and targets)."""
    interest: dict[str, int] = {}
    probes: dict[str, str] = {}
    for r in rows:
        if r["name"] in interest:
            raise _error(shown, f"feature_set.{fam}: {r['name']} is stated twice; merge the two rows")
        taken = [n for n, i in interest.items() if i == r["interest"]]
        if taken:  # interest orders flags (later ones win conflicts) and targets: it must be a total order
            raise _error(shown, f"feature_set.{fam}: {r['name']}: interest {r['interest']} is {taken[0]}'s; "
                         "pick another")
        if r["probe"] in probes:  # one batch includes each probe once
            raise _error(shown, f"feature_set.{fam}: {r['name']} and {probes[r['probe']]} share a probe; give one "
                         "its own")
        interest[r["name"]], probes[r["probe"]] = r["interest"], r["name"]
    extras = {e["name"] for e in raw_family(fam)["extra_checks"]}
    for r in rows:
        per_compiler = [d for ov in r.get("overrides", ()) for d in ov.get("implies", ())]
        for dep in [*r["implies"], *per_compiler]:
            if dep not in interest:
                raise _error(shown, f"feature_set.{fam}: {r['name']} implies '{dep}', which the set does not "
                             f"state{did_you_mean(dep, interest)}")
        for e in r.get("extra_checks", ()):
            if e not in extras:
                raise _error(shown, f"feature_set.{fam}: {r['name']}'s extra check '{e}' is not one of {fam}'s"
                             f"{did_you_mean(e, extras)}")


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


def _retired(shown: str, section: Mapping[str, str], known: set[str]) -> dict[str, str]:
    """Names a project no longer knows -> the name that stands for them now ('': none); a warning when used."""
    out: dict[str, str] = {}
    for old, new in section.items():
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


def _overrides(shown: str, fam: str, entries: list[Any],
               own: tuple[Mapping[str, Any], ...]) -> dict[str, Mapping[str, Any]]:
    """A redefinition of built-in features: checked like a table row, against this family's names."""
    builtin = {f["name"]: f for f in raw_family(fam)["features"]}
    out: dict[str, Mapping[str, Any]] = {}
    interest = {f["name"]: f["interest"] for f in [*builtin.values(), *own]}
    known = {*interest, *(e["name"] for e in raw_family(fam)["extra_checks"])}
    for raw in entries:
        name = raw["name"]
        if name not in builtin:
            raise _error(shown, f"override.{fam}: '{name}' is not a built-in feature of {fam}"
                         f"{did_you_mean(name, builtin)}; a new feature goes under 'features'")
        if name in out:
            raise _error(shown, f"override.{fam}: {name} is redefined twice; merge the two entries")
        per_compiler = [d for ov in raw.get("overrides", ()) for d in ov.get("implies", ())]
        for dep in [*raw.get("implies", ()), *raw.get("group", ()), *raw.get("extra_checks", ()), *per_compiler]:
            if dep not in known:
                raise _error(shown, f"override.{fam}: {name} names '{dep}', not a feature of {fam}"
                             f"{did_you_mean(dep, known)}")
        for dep in [*raw.get("implies", ()), *per_compiler]:  # a per-compiler implies is an implies too
            if interest[dep] >= interest[name]:
                raise _error(shown, f"override.{fam}: {name} implies {dep}: its interest must be above "
                             f"{dep}'s ({interest[dep]})")
        out[name] = raw
    return out


def _max(shown: str, fam: str, names: list[Any], own: tuple[Mapping[str, Any], ...]) -> tuple[str, ...]:
    """The only names 'max' selects in ``fam`` (a project whose run-time knows only those)."""
    known = {*(f["name"] for f in raw_family(fam)["features"]), *(f["name"] for f in own)}
    out: list[str] = []
    for n in names:
        if n.upper() not in known:
            raise _error(shown, f"max.{fam}: unknown feature {n!r}{did_you_mean(n, known)}")
        out.append(n.upper())
    return tuple(dict.fromkeys(out))


def _feature(shown: str, base: str, fam: str, raw: Mapping[str, Any], h: Any) -> dict[str, Any]:
    name = raw["name"]
    _check_name(shown, name)
    if any(f["name"] == name for f in raw_family(fam)["features"]):
        raise _error(shown, f"{name} is already a feature of {fam}; pick another name")
    if "probe" not in raw:
        raise _error(shown, f"{name} needs a 'probe': a C file, relative to the features file")
    return {**raw, "probe": _own_probe(shown, base, name, raw["probe"], h)}


def _check_name(shown: str, name: str) -> None:
    if name in RESERVED:
        raise _error(shown, f"'{name}' is a keyword of cpu-baseline/cpu-dispatch or @targets, not a feature name; "
                     "pick another name")


def _own_probe(shown: str, base: str, name: str, probe: str, h: Any) -> str:
    """A project's probe source (relative to the features file), read into the file's digest."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\.c", os.path.basename(probe)):
        raise _error(shown, f"{name}: probe '{probe[:80]}' must be a C file named with letters, digits, "
                     "'_', '.', '+' or '-' (it is #included by that name)")
    given = os.path.join(base, probe)
    h.update(name.encode() + b"\0" + _read(given, f"probe of {name}") + b"\0")
    return os.path.realpath(given)


def _check_graph(shown: str, fam: str, records: tuple[Mapping[str, Any], ...]) -> None:
    own = [r["name"] for r in records]
    twice = next((n for n in own if own.count(n) > 1), None)
    if twice:  # the last one used to win, silently
        raise _error(shown, f"features.{fam}: {twice} is defined twice; merge the two entries")
    interest = {f["name"]: f["interest"] for f in [*raw_family(fam)["features"], *records]}
    names = set(interest)
    for r in records:
        taken = [n for n, i in interest.items() if i == r["interest"] and n != r["name"]]
        if taken:  # interest orders flags (later ones win conflicts) and targets: it must be a total order
            raise _error(shown, f"{r['name']}: interest {r['interest']} is {taken[0]}'s; pick another")
        for dep in [*r["implies"], *(d for ov in r.get("overrides", ()) for d in ov.get("implies", ()))]:
            if dep not in names:
                raise _error(shown, f"{r['name']} implies '{dep}', not a feature of {fam}{did_you_mean(dep, names)}")
            if interest[dep] >= r["interest"]:
                raise _error(shown, f"{r['name']} implies {dep}: its interest must be above {dep}'s ({interest[dep]})")


def _group(shown: str, name: str, items: list[Any], known: set[str]) -> tuple[tuple[str, ...], ...]:
    out: list[tuple[str, ...]] = []
    for item in items:
        members = [item] if isinstance(item, str) else item
        for m in members:
            if m.upper() not in known:
                raise _error(shown, f"group '{name}': unknown feature '{m}'{did_you_mean(m, known)}")
        out.append(tuple(m.upper() for m in members))
    return tuple(out)
