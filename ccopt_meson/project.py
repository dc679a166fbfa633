"""A project's features file: its own features, redefinitions of built-in ones, a limit on ``max``
and named target groups, read and checked.

``features`` use the feature schema of the built-in tables plus a ``probe`` path relative to the
file; ``override`` redefines built-in rows (each field given replaces the table's, ``flags`` per
style); ``max`` lists, per family, the only names ``max`` selects; ``groups`` are usable as
``#name`` in ``@targets``; ``dispatch_implied: true`` closes what ``cpu-dispatch`` selects under
implication, as numpy 2's option parser does (``avx2`` also dispatches FMA3, F16C, AVX, ...).
``load`` turns it into a
``tables.Project`` that a ``Request`` carries; nothing here is process-wide state.  The file
and its probes are untrusted input, read like dispatch sources: regular files only, bounded.
"""

from __future__ import annotations

import json
import os
import re

from . import fsio
from ._record import TYPE_CHECKING
from .digest import sha256
from .errors import InputError, TableError, did_you_mean
from .schema import read_json, validate_schema
from .tables import Project, data_file, families, raw_family
from .tokens import RESERVED

if TYPE_CHECKING:
    from typing import Any, Mapping

__all__ = ["load", "MAX_BYTES"]

MAX_BYTES = 1 << 20  # a features file or one of its probes; numpy's whole meson_cpu/ is ~40 KiB
_KEYS = ("comment", "features", "override", "max", "groups", "dispatch_implied")


def _error(path: str, message: str) -> InputError:
    return InputError(f"features file '{path}': {message}")


def _read(path: str, what: str) -> bytes:
    try:
        return fsio.read_bounded(path, MAX_BYTES, what)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise InputError(f"{what} '{fsio.show_path(path)}' does not exist") from exc


def load(path: str | os.PathLike[str] | None) -> Project | None:
    """The project features of the file at ``path`` (None: built-in tables only)."""
    if not path:
        return None
    given = os.path.abspath(path)
    shown = os.fspath(path)
    text = _read(given, "features file")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _error(shown, f"not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or set(doc) - set(_KEYS):
        extra = sorted(set(doc) - set(_KEYS)) if isinstance(doc, dict) else []
        raise _error(shown, "expected an object with 'features', 'override', 'max', 'groups' and/or 'dispatch_implied'"
                     + (f"; unknown key '{extra[0]}'{did_you_mean(extra[0], [k.upper() for k in _KEYS]).lower()}"
                        if extra else ""))
    implied = doc.get("dispatch_implied", False)
    if not isinstance(implied, bool):
        raise _error(shown, f"'dispatch_implied' must be true or false, not {json.dumps(implied)}")
    h = sha256(text)
    schema = read_json(data_file("schema.json"))
    base = os.path.dirname(given)
    features: dict[str, tuple[Mapping[str, Any], ...]] = {}
    for fam, records in (doc.get("features") or {}).items():
        if fam not in families():
            hint = did_you_mean(fam, [f.upper() for f in families()]).lower()
            raise _error(shown, f"unknown family '{fam}'{hint}; known: {', '.join(families())}")
        if not isinstance(records, list):
            raise _error(shown, f"features.{fam} must be a list of features")
        features[fam] = tuple(_feature(shown, base, fam, r, schema, h, i) for i, r in enumerate(records))
    overrides = {fam: _overrides(shown, fam, entries, features.get(fam, ()), schema)
                 for fam, entries in _per_family(shown, doc, "override").items()}
    for fam, records in features.items():
        _check_graph(shown, fam, records)
    known = {f["name"] for fam in families() for f in [*raw_family(fam)["features"], *features.get(fam, ())]}
    limits = {fam: _max(shown, fam, names, features.get(fam, ()))
              for fam, names in _per_family(shown, doc, "max").items()}
    groups: dict[str, tuple[tuple[str, ...], ...]] = {}
    for name, items in (doc.get("groups") or {}).items():
        if name.upper() in groups:  # '#name' is case-insensitive like every other name
            other = next(g for g in doc["groups"] if g.upper() == name.upper())
            raise _error(shown, f"groups '{other}' and '{name}' differ only in case, and '#name' ignores case; "
                         "rename one")
        groups[name.upper()] = _group(shown, name, items, known)
    return Project(path=os.path.realpath(given), given=given, digest=h.hexdigest(), features=features, groups=groups,
                   overrides=overrides, max=limits, dispatch_implied=implied)


def _per_family(shown: str, doc: Mapping[str, Any], key: str) -> dict[str, list[Any]]:
    """``doc[key]``: an object of lists keyed by a family name."""
    section = doc.get(key, {})
    if not isinstance(section, dict):
        raise _error(shown, f"'{key}' must be an object keyed by family ({', '.join(families())})")
    for fam, items in section.items():
        if fam not in families():
            hint = did_you_mean(fam, [f.upper() for f in families()]).lower()
            raise _error(shown, f"{key}: unknown family '{fam}'{hint}; known: {', '.join(families())}")
        if not isinstance(items, list):
            raise _error(shown, f"{key}.{fam} must be a list")
    return dict(section)


def _overrides(shown: str, fam: str, entries: list[Any], own: tuple[Mapping[str, Any], ...],
               schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """A redefinition of built-in features: checked like a table row, against this family's names."""
    builtin = {f["name"]: f for f in raw_family(fam)["features"]}
    out: dict[str, Mapping[str, Any]] = {}
    interest = {f["name"]: f["interest"] for f in [*builtin.values(), *own]}
    known = {*interest, *(e["name"] for e in raw_family(fam)["extra_checks"])}
    for i, raw in enumerate(entries):
        _validated(raw, schema, "feature_override", f"{os.path.basename(shown)}: override.{fam}[{i}]")
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
        for dep in raw.get("implies", ()):
            if interest[dep] >= interest[name]:
                raise _error(shown, f"override.{fam}: {name} implies {dep}: its interest must be above "
                             f"{dep}'s ({interest[dep]})")
        out[name] = raw
    return out


def _validated(raw: Any, schema: Mapping[str, Any], definition: str, where: str) -> None:
    """``raw`` checked against one definition of the tables' schema; an InputError naming ``where``."""
    try:
        validate_schema(raw, schema["definitions"][definition], schema["definitions"], where)
    except TableError as exc:
        raise InputError(str(exc)) from exc


def _max(shown: str, fam: str, names: list[Any], own: tuple[Mapping[str, Any], ...]) -> tuple[str, ...]:
    """The only names 'max' selects in ``fam`` (a project whose run-time knows only those)."""
    known = {*(f["name"] for f in raw_family(fam)["features"]), *(f["name"] for f in own)}
    out: list[str] = []
    for n in names:
        if not isinstance(n, str) or n.upper() not in known:
            raise _error(shown, f"max.{fam}: unknown feature {n!r}{did_you_mean(str(n).upper(), known)}")
        out.append(n.upper())
    return tuple(dict.fromkeys(out))


def _feature(shown: str, base: str, fam: str, raw: Any, schema: Mapping[str, Any], h: Any, i: int) -> dict[str, Any]:
    _validated(raw, schema, "feature", f"{os.path.basename(shown)}: features.{fam}[{i}]")
    name = raw["name"]
    if name in RESERVED:
        raise _error(shown, f"'{name}' is a keyword of cpu-baseline/cpu-dispatch or @targets, not a feature name; "
                     "pick another name")
    if any(f["name"] == name for f in raw_family(fam)["features"]):
        raise _error(shown, f"{name} is already a feature of {fam}; pick another name")
    if "probe" not in raw:
        raise _error(shown, f"{name} needs a 'probe': a C file, relative to the features file")
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\.c", os.path.basename(raw["probe"])):
        raise _error(shown, f"{name}: probe '{raw['probe'][:80]}' must be a C file named with letters, digits, "
                     "'_', '.', '+' or '-' (it is #included by that name)")
    given = os.path.join(base, raw["probe"])
    h.update(name.encode() + b"\0" + _read(given, f"probe of {name}") + b"\0")
    return {**raw, "probe": os.path.realpath(given)}


def _check_graph(shown: str, fam: str, records: tuple[Mapping[str, Any], ...]) -> None:
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


def _group(shown: str, name: str, items: Any, known: set[str]) -> tuple[tuple[str, ...], ...]:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or not isinstance(items, list) or not items:
        raise _error(shown, f"group '{name}' must be a name holding a non-empty list of targets")
    out: list[tuple[str, ...]] = []
    for item in items:
        members = [item] if isinstance(item, str) else item
        if not isinstance(members, list) or not members or not all(isinstance(m, str) for m in members):
            raise _error(shown, f"group '{name}': a target is a name or a list of names, got {item!r}")
        for m in members:
            if m.upper() not in known:
                raise _error(shown, f"group '{name}': unknown feature '{m}'{did_you_mean(m, known)}")
        out.append(tuple(m.upper() for m in members))
    return tuple(out)
