"""Feature tables: the data every other stage walks.

Each CPU family has one JSON file in ``data/features/`` (validated against
``data/schema.json``) and one probe source per feature in ``data/probes/``.
Per-compiler facts (flag style, driver syntax, policy flags) live in
``data/compilers.json``.  This module loads them, applies the per-machine and
per-compiler ``overrides`` and answers graph questions (closure, ordering, flag
merging).  It never names a feature: adding one is a data change.

A project adds its own features and named target groups with a features file
(``use_project_file``): the same feature schema plus a ``probe`` path relative to
the file, and ``groups`` usable as ``#name`` in ``@targets``.  They join the
built-in tables for the rest of the process.
"""

from __future__ import annotations

import functools
import json
import os
import re
from typing import TYPE_CHECKING, NamedTuple

from .errors import InputError, TableError, did_you_mean

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


__all__ = [
    "DATA_DIR",
    "Feature",
    "Machine",
    "ExtraCheck",
    "Table",
    "CompilerSpec",
    "families",
    "machines",
    "machine_by_name",
    "all_feature_names",
    "families_of",
    "compiler_spec",
    "compilers_data",
    "table_for",
    "normalize_flags",
    "data_digest",
    "package_digest",
    "provenance",
    "project_digest",
    "data_files",
    "validate_schema",
    "read_json",
    "data_file",
    "all_names_of",
    "picks_cpu",
    "native_flags_anywhere",
    "use_project_file",
    "project_file",
    "target_groups",
]

# Plain strings: pathlib imports re, fnmatch and urllib, about a Python start-up on the cache-hit path.
_DATA = os.path.join(os.path.dirname(os.path.realpath(__file__)), "data")
_FEATURES = os.path.join(_DATA, "features")
_PROBES = os.path.join(_DATA, "probes")
_DIRS = {"DATA_DIR": _DATA, "FEATURES_DIR": _FEATURES, "PROBES_DIR": _PROBES}
if TYPE_CHECKING:
    DATA_DIR: Path
    FEATURES_DIR: Path
    PROBES_DIR: Path


def __getattr__(name: str) -> Path:
    """``DATA_DIR``, ``FEATURES_DIR``, ``PROBES_DIR`` as ``Path`` objects, made on first use."""
    if name in _DIRS:
        from pathlib import Path

        return Path(_DIRS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Records are NamedTuples, not dataclasses: immutable all the same, and importing
# dataclasses (with inspect) plus building each class costs ~15 ms on every helper start.
class Feature(NamedTuple):
    """One CPU feature as seen by one compiler on one machine."""

    name: str
    family: str
    interest: int
    implies: tuple[str, ...]
    flags: tuple[str, ...]
    headers: tuple[str, ...]
    macros: tuple[str, ...]
    group: tuple[str, ...]
    extra_checks: tuple[str, ...]
    disabled: str | None
    runtime: Mapping[str, Any] = {}  # never mutated
    probe_file: str = ""  # a project feature's own probe source (absolute)

    @property
    def probe(self) -> Path:
        from pathlib import Path

        if self.probe_file:
            return Path(self.probe_file)
        return Path(_PROBES, self.family, f"{self.name.lower()}.c")


class ExtraCheck(NamedTuple):
    """An optional sub-feature (e.g. AVX512F_REDUCE): a define when its probe compiles."""

    name: str
    family: str
    feature: str

    @property
    def probe(self) -> Path:
        from pathlib import Path

        return Path(_PROBES, self.family, f"extra_{self.name.lower()}.c")


class Machine(NamedTuple):
    name: str
    family: str
    meson_cpu_family: str
    macros_any: tuple[str, ...]
    macros_all: tuple[str, ...]
    min: tuple[str, ...]

    def matches(self, macros: Mapping[str, str]) -> bool:
        if self.macros_all and not all(m in macros for m in self.macros_all):
            return False
        if self.macros_any and not any(m in macros for m in self.macros_any):
            return False
        return bool(self.macros_all or self.macros_any)


class CompilerSpec(NamedTuple):
    """How to drive one compiler id (Meson's ``cc.get_id()``)."""

    id: str
    style: str
    driver: Mapping[str, Any]
    opt: tuple[str, ...]
    werror: tuple[str, ...]
    debug_patterns: tuple[str, ...]
    version_macros: tuple[str, ...] = ()


# --------------------------------------------------------------------------- loading


def data_file(name: str) -> str:
    """The path of a file under ``data/`` (``name`` with ``/`` separators)."""
    return os.path.join(_DATA, *name.split("/"))


def read_json(path: str | os.PathLike[str]) -> Any:
    """A JSON data file of the package (tables, schemas)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise TableError(f"cannot read feature table {os.path.basename(path)}: {exc}") from exc


_TYPES: Mapping[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _kind(value: Any, schema: Mapping[str, Any], where: str) -> str | None:
    """The JSON type ``value`` matched (``type`` may be a list, e.g. ``["string", "null"]``)."""
    kinds = schema.get("type")
    if kinds is None:
        return None
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        if _TYPES[kind](value):
            return str(kind)
    raise TableError(f"{where}: expected {kinds if isinstance(kinds, str) else ' or '.join(kinds)}, "
                     f"got {json.dumps(value)[:60]}")


def _check_bounds(value: Any, schema: Mapping[str, Any], kind: str | None, where: str) -> None:
    if "enum" in schema and value not in schema["enum"]:
        raise TableError(f"{where}: {json.dumps(value)[:40]} is not one of {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        raise TableError(f"{where}: {value} is below {schema['minimum']}")
    if kind == "string" and "pattern" in schema and not re.search(schema["pattern"], value):
        raise TableError(f"{where}: {value[:40]!r} does not match {schema['pattern']}")
    size = len(value) if kind in ("array", "object") else None
    if size is not None and size < schema.get("minItems", 0):
        raise TableError(f"{where}: fewer than {schema['minItems']} items")
    if size is not None and size > schema.get("maxItems", schema.get("maxProperties", size)):
        raise TableError(f"{where}: too many items ({size})")


def validate_schema(value: Any, schema: Mapping[str, Any], defs: Mapping[str, Any], where: str) -> None:
    """Check ``value`` against the JSON-Schema subset ``data/*.schema.json`` and ``data/schema.json`` use."""
    if "$ref" in schema:
        validate_schema(value, defs[schema["$ref"]], defs, where)
        return
    kind = _kind(value, schema, where)
    _check_bounds(value, schema, kind, where)
    if kind == "array":
        prefix = schema.get("prefixItems", ())
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else schema.get("items")
            if sub is not None:
                validate_schema(item, sub, defs, f"{where}[{i}]")
    if kind == "object":
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise TableError(f"{where}: missing required key '{key}'")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            shown = key[:40].encode("unicode_escape").decode("ascii")  # a key may hold any character
            if key in props:
                validate_schema(item, props[key], defs, f"{where}.{shown}")
            elif extra is False:
                raise TableError(f"{where}: unknown key '{shown}'{did_you_mean(key, props)}")
            elif isinstance(extra, dict):
                validate_schema(item, extra, defs, f"{where}.{shown}")


@functools.cache
def _raw_family(family: str) -> Mapping[str, Any]:
    return read_json(os.path.join(_FEATURES, f"{family}.json"))  # type: ignore[no-any-return]


def validate_family(family: str) -> None:
    """Check one table against ``data/schema.json`` (the tests do it for every table)."""
    schema = read_json(os.path.join(_DATA, "schema.json"))
    validate_schema(_raw_family(family), schema, schema["definitions"], f"{family}.json")


def _checked(fn: F) -> F:
    """Loading skips the schema check (it runs on every configure); a malformed table still
    ends in a TableError that names the problem, never in a KeyError traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            for fam in families():
                validate_family(fam)
            raise TableError(f"the feature tables are inconsistent: {exc!r}") from exc

    return wrapper  # type: ignore[return-value]


@functools.cache
def families() -> tuple[str, ...]:
    return tuple(sorted(n[:-5] for n in os.listdir(_FEATURES) if n.endswith(".json") and not n.startswith(".")))


@functools.cache
@_checked
def machines() -> tuple[Machine, ...]:
    """Every machine of every family, in detection order."""
    out = []
    for fam in families():
        for m in _raw_family(fam)["machines"]:
            out.append(
                Machine(
                    name=m["name"],
                    family=fam,
                    meson_cpu_family=m["meson_cpu_family"],
                    macros_any=tuple(m.get("macros_any", ())),
                    macros_all=tuple(m.get("macros_all", ())),
                    min=tuple(m["min"]),
                )
            )
    return tuple(out)


@functools.cache
def host_data() -> Mapping[str, Any]:
    """Facts about naming the machine this helper runs on (``data/host.json``)."""
    return read_json(os.path.join(_DATA, "host.json"))  # type: ignore[no-any-return]


def machine_by_name(name: str) -> Machine:
    """A machine by its table name or an alias (``arm64``, ``amd64``, ``ppc64el``, ...)."""
    name = host_data()["aliases"].get(name.lower(), name.lower())
    for m in machines():
        if m.name == name:
            return m
    raise InputError(
        f"unknown architecture '{name}'{did_you_mean(name, (m.name for m in machines()))}; "
        f"known: {', '.join(m.name for m in machines())}"
    )


@functools.cache
@_checked
def all_feature_names() -> Mapping[str, tuple[str, ...]]:
    """Feature name -> every family that has it (AES is both x86's and arm's), over every table."""
    out: dict[str, tuple[str, ...]] = {}
    for fam in families():
        for f in _features_of(fam):
            out[f["name"]] = (*out.get(f["name"], ()), fam)
    return out


def _features_of(family: str) -> list[Mapping[str, Any]]:
    """The raw feature records of a family: the built-in table's, then the project's."""
    return [*_raw_family(family)["features"], *_PROJECT.get("features", {}).get(family, ())]


def families_of(name: str) -> tuple[str, ...]:
    """The families a feature name belongs to; empty for a name no table has."""
    return all_feature_names().get(name, ())


@functools.cache
def all_names_of(family: str) -> frozenset[str]:
    """Feature and extra-check names of one family: what a cache file may name."""
    raw = _raw_family(family)
    return frozenset([*(f["name"] for f in _features_of(family)), *(e["name"] for e in raw["extra_checks"])])


@functools.cache
def _arch_selecting() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in compilers_data()["arch_selecting_args"]["patterns"])


def picks_cpu(arg: str) -> bool:
    """Is ``arg`` one with which a user picks the target CPU (``-march=``, ``-mcpu=``, ``/arch:``, ...)?"""
    return any(p.search(arg) for p in _arch_selecting())


@functools.cache
def native_flags_anywhere() -> frozenset[str]:
    """Every native flag of every family and compiler style (``-march=native``, ``-xHost``, ...)."""
    return frozenset(f for fam in families() for flags in _raw_family(fam)["native_flag"].values() for f in flags)


@functools.cache
def compilers_data() -> Mapping[str, Any]:
    return read_json(os.path.join(_DATA, "compilers.json"))  # type: ignore[no-any-return]


def compiler_spec(compiler_id: str) -> CompilerSpec:
    data = compilers_data()
    entry = data["compilers"].get(compiler_id)
    if entry is None:
        # Unknown ids (e.g. 'armclang', 'nvidia_hpc') speak the GNU dialect in practice.
        entry = data["compilers"]["gcc"]
    return CompilerSpec(
        id=compiler_id,
        style=entry["style"],
        driver=data["drivers"][entry["driver"]],
        opt=tuple(entry["opt"]),
        werror=tuple(entry["werror"]),
        debug_patterns=tuple(entry["debug_patterns"]),
        version_macros=tuple(entry.get("version_macros", ())),
    )


# --------------------------------------------------------------------------- resolved table


def _when_matches(when: Mapping[str, str], machine: str, style: str, compiler_id: str) -> bool:
    wanted = {"machine": machine, "style": style, "compiler": compiler_id}
    return all(wanted[k] == v for k, v in when.items())


def _build_feature(
    raw: Mapping[str, Any], family: str, machine: str, spec: CompilerSpec, family_reason: str | None
) -> Feature:
    cur: dict[str, Any] = {
        "implies": raw["implies"],
        "headers": raw["headers"],
        "macros": raw["macros"],
        "flags": raw["flags"].get(spec.style),
        "disable": family_reason,
    }
    for ov in raw.get("overrides", ()):
        if _when_matches(ov["when"], machine, spec.style, spec.id):
            cur.update({k: v for k, v in ov.items() if k != "when"})
    if cur["flags"] is None and cur["disable"] is None:
        cur["disable"] = f"no {spec.style}-style flags are known for {raw['name']}"
    runtime = raw["runtime"].get(machine, raw["runtime"].get("*", {}))
    return Feature(
        name=raw["name"],
        family=family,
        interest=raw["interest"],
        implies=tuple(cur["implies"]),
        flags=tuple(cur["flags"] or ()),
        headers=tuple(cur["headers"]),
        macros=tuple(cur["macros"]),
        group=tuple(raw.get("group", ())),
        extra_checks=tuple(raw.get("extra_checks", ())),
        disabled=cur["disable"],
        runtime=runtime,
        probe_file=raw.get("probe", ""),
    )


class Table(NamedTuple):
    """The features of one machine as one compiler sees them."""

    machine: Machine
    spec: CompilerSpec
    features: Mapping[str, Feature]  # ordered by interest, low to high
    extra_checks: Mapping[str, ExtraCheck]
    native_flags: tuple[str, ...]
    conflicts: tuple[Mapping[str, Any], ...]
    closures: dict[frozenset[str], frozenset[str]]  # memo of closure(); one dict per table, shared by with_context
    # header -> a macro it defines: clang's <vecintrin.h> has no include guard of its own
    header_guards: Mapping[str, str] = {}
    context: tuple[str, ...] = ()  # the user's CPU-selecting args (see normalize_flags)

    def get(self, name: str) -> Feature:
        return self.features[name]

    def closure(self, names: Iterable[str]) -> frozenset[str]:
        """The names plus everything they imply, transitively (cycles allowed)."""
        key = frozenset(names)
        hit = self.closures.get(key)
        if hit is None:
            hit = self.closures[key] = self._walk(key)
        return hit

    def _walk(self, names: frozenset[str]) -> frozenset[str]:
        seen: set[str] = set()
        todo = [n for n in names if n in self.features]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo.extend(i for i in self.features[n].implies if i in self.features)
        return frozenset(seen)

    def sort(self, names: Iterable[str], reverse: bool = False) -> list[str]:
        return sorted(set(names), key=lambda n: (self.features[n].interest, n), reverse=reverse)

    def flags_for(self, names: Iterable[str]) -> list[str]:
        """Cumulative, conflict-free flags enabling ``names`` and all they imply."""
        flags: list[str] = []
        for n in self.sort(self.closure(names)):
            flags.extend(self.features[n].flags)
        return normalize_flags(flags, self.conflicts, self.context)

    def with_context(self, args: Sequence[str]) -> Table:
        """This table, for a build whose own args pick a CPU (``-march=``, ``-mcpu=``, ...)."""
        ctx = tuple(a for a in args if picks_cpu(a))
        return self if ctx == self.context else self._replace(context=ctx)

    def rank(self, target: Sequence[str]) -> int:
        """Interest of a (multi-)target: the highest member, plus one per extra member."""
        return max(self.features[n].interest for n in target) + len(target) - 1


def table_for(machine: str, compiler_id: str) -> Table:
    return _table_for(machine, compiler_id)


@functools.cache
@_checked
def _table_for(machine_name: str, compiler_id: str) -> Table:
    machine = machine_by_name(machine_name)
    raw = _raw_family(machine.family)
    spec = compiler_spec(compiler_id)
    family_reason = raw["unsupported_styles"].get(spec.style)
    feats = [_build_feature(f, machine.family, machine.name, spec, family_reason) for f in _features_of(machine.family)]
    feats.sort(key=lambda f: (f.interest, f.name))
    extras = {e["name"]: ExtraCheck(e["name"], machine.family, e["feature"]) for e in raw["extra_checks"]}
    conflicts = tuple(compilers_data()["flag_conflicts"].get(spec.style, ()))
    return Table(
        machine=machine,
        spec=spec,
        features={f.name: f for f in feats},
        extra_checks=extras,
        native_flags=tuple(raw["native_flag"].get(spec.style, ())),
        conflicts=conflicts,
        closures={},
        header_guards=dict(raw.get("header_guards", {})),
    )


# --------------------------------------------------------------------------- flags


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


# --------------------------------------------------------------------------- digest


def data_files() -> list[tuple[str, str]]:
    """(name under ``data/``, full path) of every table, schema and probe source, sorted by name."""
    out: list[tuple[str, str]] = []
    todo = [""]
    while todo:
        sub = todo.pop()
        try:
            entries = list(os.scandir(os.path.join(_DATA, sub) if sub else _DATA))
        except OSError:  # as os.walk has it: an unreadable directory is skipped
            continue
        for e in entries:
            rel = f"{sub}/{e.name}" if sub else e.name
            if e.is_dir():
                if not e.is_symlink():  # os.walk does not follow links to directories
                    todo.append(rel)
            elif e.name.endswith((".json", ".c", ".h")):
                out.append((rel, e.path))
    return sorted(out)


@functools.cache
def package_digest() -> str:
    """sha256 over every table, schema and probe source of the package."""
    import hashlib

    h = hashlib.sha256()
    for rel, full in data_files():
        with open(full, "rb") as fh:
            h.update(rel.encode() + b"\0" + fh.read() + b"\0")
    return h.hexdigest()


def project_digest() -> str:
    """The digest of the project features file and its probes in use ('' without one)."""
    return str(_PROJECT.get("digest", ""))


def provenance(digest: str) -> str:
    """The line a generated file carries to say which tables (``data_digest``) it was made from."""
    return f"Tables: sha256 {digest}"


def data_digest() -> str:
    """The package's data and the project's features: part of the cache key."""
    return f"{package_digest()}+{project_digest()}" if project_digest() else package_digest()


# --------------------------------------------------------------------------- project features

_PROJECT: dict[str, Any] = {}  # what use_project_file loaded: path, digest, features by family, groups


def project_files() -> list[str]:
    """The project features file in use and its probes (what its features depend on); [] without one."""
    path = _PROJECT.get("path")
    if not path:
        return []
    # as given and as resolved: a symlink repointed elsewhere changes the stamp of the name given
    return [str(path), str(_PROJECT["given"]), *(p for fam in _PROJECT["features"].values() for f in fam
                                                 for p in (f["probe"], f["probe_given"]))]


def project_file() -> str | None:
    """The project features file in use, if any."""
    path = _PROJECT.get("path")
    return str(path) if path else None


def target_groups() -> Mapping[str, tuple[tuple[str, ...], ...]]:
    """Named target groups (``#name`` in ``@targets``) of the project features file."""
    return _PROJECT.get("groups", {})  # type: ignore[no-any-return]


def use_project_file(path: str | os.PathLike[str] | None) -> None:
    """Add a project's features and target groups to the tables (None: built-in tables only)."""
    _PROJECT.clear()
    if path:
        from pathlib import Path

        _PROJECT.update(_load_project(Path(path)))
    for fn in (all_feature_names, all_names_of, _table_for, package_digest):
        fn.cache_clear()


def _project_error(path: Path, message: str) -> InputError:
    return InputError(f"features file '{path}': {message}")


def _load_project(path: Path) -> dict[str, Any]:
    try:
        text = path.read_bytes()
        doc = json.loads(text)
    except OSError as exc:
        raise _project_error(path, f"cannot read it ({exc.strerror})") from exc
    except ValueError as exc:
        raise _project_error(path, f"not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or set(doc) - {"comment", "features", "groups"}:
        extra = sorted(set(doc) - {"comment", "features", "groups"}) if isinstance(doc, dict) else []
        raise _project_error(path, "expected an object with 'features' and/or 'groups'"
                             + (f"; unknown key '{extra[0]}'{did_you_mean(extra[0], ('FEATURES', 'GROUPS')).lower()}"
                                if extra else ""))
    import hashlib

    schema = read_json(data_file("schema.json"))
    h = hashlib.sha256(text)
    features: dict[str, list[Mapping[str, Any]]] = {}
    for fam, records in (doc.get("features") or {}).items():
        if fam not in families():
            hint = did_you_mean(fam, [f.upper() for f in families()]).lower()
            raise _project_error(path, f"unknown family '{fam}'{hint}; "
                                 f"known: {', '.join(families())}")
        features[fam] = [_project_feature(path, fam, r, schema, h, i) for i, r in enumerate(records)]
    for fam, records in features.items():
        interest = {f["name"]: f["interest"] for f in [*_raw_family(fam)["features"], *records]}
        names = set(interest)
        for r in records:
            taken = [n for n, i in interest.items() if i == r["interest"] and n != r["name"]]
            if taken:  # interest orders flags (later ones win conflicts) and targets: it must be a total order
                raise _project_error(path, f"{r['name']}: interest {r['interest']} is {taken[0]}'s; pick another")
            for dep in [*r["implies"], *(d for ov in r.get("overrides", ()) for d in ov.get("implies", ()))]:
                if dep not in names:
                    raise _project_error(path, f"{r['name']} implies '{dep}', not a feature of {fam}"
                                         f"{did_you_mean(dep, names)}")
                if interest[dep] >= r["interest"]:
                    raise _project_error(path, f"{r['name']} implies {dep}: its interest must be above "
                                         f"{dep}'s ({interest[dep]})")
    out = {"path": str(path.resolve()), "given": os.path.abspath(path), "features": features}
    known = {f["name"] for fam in families() for f in [*_raw_family(fam)["features"], *features.get(fam, ())]}
    out["groups"] = {name.upper(): _project_group(path, name, items, known)
                     for name, items in (doc.get("groups") or {}).items()}
    out["digest"] = h.hexdigest()
    return out


def _project_feature(path: Path, fam: str, raw: Any, schema: Mapping[str, Any], h: Any, i: int) -> dict[str, Any]:
    where = f"{path.name}: features.{fam}[{i}]"
    try:
        validate_schema(raw, schema["definitions"]["feature"], schema["definitions"], where)
    except TableError as exc:
        raise InputError(str(exc)) from exc
    name = raw["name"]
    if any(f["name"] == name for f in _raw_family(fam)["features"]):
        raise _project_error(path, f"{name} is already a feature of {fam}; pick another name")
    if "probe" not in raw:
        raise _project_error(path, f"{name} needs a 'probe': a C file, relative to the features file")
    given = path.parent / raw["probe"]
    probe = given.resolve()
    try:
        h.update(name.encode() + b"\0" + probe.read_bytes() + b"\0")
    except OSError as exc:
        raise _project_error(path, f"{name}: cannot read probe '{raw['probe']}' ({exc.strerror})") from exc
    return {**raw, "probe": str(probe), "probe_given": os.path.abspath(given)}


def _project_group(path: Path, name: str, items: Any, known: set[str]) -> tuple[tuple[str, ...], ...]:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or not isinstance(items, list) or not items:
        raise _project_error(path, f"group '{name}' must be a name holding a non-empty list of targets")
    out: list[tuple[str, ...]] = []
    for item in items:
        members = [item] if isinstance(item, str) else item
        if not isinstance(members, list) or not members or not all(isinstance(m, str) for m in members):
            raise _project_error(path, f"group '{name}': a target is a name or a list of names, got {item!r}")
        for m in members:
            if m.upper() not in known:
                raise _project_error(path, f"group '{name}': unknown feature '{m}'{did_you_mean(m, known)}")
        out.append(tuple(m.upper() for m in members))
    return tuple(out)
