"""Feature tables: the model every other stage walks, and its loading.

Each CPU family has one JSON file in ``data/features/`` (validated against
``data/schema.json`` by ``schema``) and one probe source per feature in ``data/probes/``.
Per-compiler facts (flag style, driver syntax, policy flags, the reference compiler)
live in ``data/compilers.json``.  This module loads them, applies the per-machine and
per-compiler ``overrides`` and answers graph questions (closure, ordering); ``flags``
merges flags, ``digest`` fingerprints the data.  It never names a feature: adding one
is a data change.

A project's own features (``project.load`` reads its features file into a ``Project``)
join the built-in ones wherever a function takes a ``project``: it is an argument, never
process-wide state.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from ._record import TYPE_CHECKING, NamedTuple
from .errors import InputError, TableError, did_you_mean
from .flags import normalize_flags
from .schema import read_json, validate_schema
from .versions import Version, in_range, parse_version

if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


__all__ = [
    "DATA_DIR",
    "Feature",
    "Machine",
    "ExtraCheck",
    "Table",
    "CompilerSpec",
    "Project",
    "Policies",
    "build_feature",
    "families",
    "machines",
    "machine_by_name",
    "all_feature_names",
    "families_of",
    "compiler_spec",
    "compilers_data",
    "reference_compiler",
    "macros_data",
    "default_macro_prefix",
    "macro_style",
    "check_macros",
    "macro_name",
    "table_for",
    "data_file",
    "validate_family",
    "raw_family",
    "all_names_of",
    "picks_cpu",
    "turns_off",
    "native_flags_anywhere",
]

_DATA = os.path.join(os.path.dirname(os.path.realpath(__file__)), "data")
_FEATURES = os.path.join(_DATA, "features")
_PROBES = os.path.join(_DATA, "probes")
DATA_DIR = Path(_DATA)
FEATURES_DIR = Path(_FEATURES)
PROBES_DIR = Path(_PROBES)


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
    detect: tuple[tuple[str, str], ...] = ()  # a project set's run-time test: (name, regex of names it replaces)
    flags_replace: str = ""  # a project set's row: flags of lower features it drops (numpy's 'match' of args)
    audit: tuple[str, ...] = ()  # what the family's decoder reports for instructions its run-time test guarantees
    where: str = ""  # the section of a features file its row came from ('': the built-in table)
    runtime_of: str = ""  # the built-in row whose run-time test it took ('': its own)
    widened_by: tuple[str, ...] = ()  # the features whose tests were added to that inherited one

    @property
    def probe(self) -> Path:
        if self.probe_file:
            return Path(self.probe_file)
        return Path(_PROBES, self.family, f"{self.name.lower()}.c")

    @property
    def owner(self) -> str:
        """The feature whose flags its probe is compiled with: itself."""
        return self.name


class Row(NamedTuple):
    """One feature row of a family as stated, complete in the tables' schema (``fields``), and where it came from.

    A built-in table's rows are ``Row(fields)``; a features file's rows name their section (``override``,
    ``features``, ``feature_set``), the built-in row whose run-time test they took (``like`` or an override
    without ``runtime``), and the features whose tests were added to it (``rules.widen_runtime``).  Never
    changed in place: a widened row is a new record."""

    fields: Mapping[str, Any]
    where: str = ""  # '' the built-in table, else the features file's section
    runtime_of: str = ""  # the built-in row whose run-time test it took ('': its own)
    widened_by: tuple[str, ...] = ()  # the features whose tests were added to that inherited test

    @property
    def name(self) -> str:
        return str(self.fields["name"])

    def shown(self, family: str) -> str:
        """Where the row was stated: 'feature_set.x86', 'features.x86', 'override.x86', or the table 'x86.json'."""
        return f"{self.where}.{family}" if self.where else f"{family}.json"


class ExtraCheck(NamedTuple):
    """An optional sub-feature (e.g. AVX512F_REDUCE): a define when its probe compiles.

    A probe subject like a feature (``Table.subject``): compiled with its feature's flags, and
    only where that feature is supported."""

    name: str
    family: str
    feature: str
    flags: tuple[str, ...] = ()  # none of its own

    @property
    def owner(self) -> str:
        return self.feature

    @property
    def probe(self) -> Path:
        return Path(_PROBES, self.family, f"extra_{self.name.lower()}.c")


class Machine(NamedTuple):
    name: str
    family: str
    meson_cpu_family: str
    macros_any: tuple[str, ...]
    macros_all: tuple[str, ...]
    min: tuple[str, ...]
    abi: tuple[str, ...] = ()  # what its ABI guarantees (x86_64: SSE2), the ISA audit's floor
    # (glibc-hwcaps subdirectory, the feature a variant for it is built at), lowest level first
    hwcaps: tuple[tuple[str, str], ...] = ()

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


class Policies(NamedTuple):
    """The rules a project's file may change, numpy's among them; the defaults are ccopt's own."""

    dispatch_implied: bool = False  # cpu-dispatch's selection is closed under implication (numpy 2's parser)
    minus: str = "successors"  # '-NAME' removes NAME and what implies it, or ('feature') NAME alone
    keep_covered: bool = False  # a target list without 'baseline' keeps the targets the baseline covers
    own_detect: bool = False  # a target's run-time test is the rows' 'detect' (numpy's), not ccopt's recipes
    rings: str = "fold"  # rows implying each other: one target ('fold'), or each listed member its own ('separate')
    plus_parts: str = "ascending"  # merged '-march=...+ext' parts: lowest row's first, or ('descending') highest's


DEFAULT_POLICIES = Policies()


class Project(NamedTuple):
    """A project's features file, as ``project.load`` read and checked it: one model, whichever keys the file used.

    Equal (and hashed) by its paths and the digest of its content and probes, so the tables
    made with it are cached per file version."""

    path: str  # resolved
    given: str  # as given, made absolute
    digest: str  # sha256 of the file and its probes
    rows: Mapping[str, tuple[Row, ...]]  # family -> every row it has (a family not named: none)
    groups: Mapping[str, tuple[tuple[str, ...], ...]]  # '#name' -> its targets
    max: Mapping[str, tuple[str, ...]] = {}  # family -> the only names 'max' selects there
    mins: Mapping[str, tuple[str, ...]] = {}  # machine -> what 'min' selects (a machine not named: nothing)
    retired: Mapping[str, str] = {}  # a name the project no longer knows -> its successor ('' : none)
    policies: Policies = DEFAULT_POLICIES

    def _identity(self) -> tuple[str, str, str]:
        return (self.path, self.given, self.digest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Project) and self._identity() == other._identity()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._identity())

    def max_of(self, family: str) -> tuple[str, ...] | None:
        """The names 'max' is limited to in ``family``, None when it is not limited."""
        return self.max.get(family)


# --------------------------------------------------------------------------- loading


def data_file(name: str) -> str:
    """The path of a file under ``data/`` (``name`` with ``/`` separators)."""
    return os.path.join(_DATA, *name.split("/"))


@functools.cache
def raw_family(family: str) -> Mapping[str, Any]:
    """A family's table as written (no overrides applied): what a project's features are checked against."""
    return read_json(os.path.join(_FEATURES, f"{family}.json"))  # type: ignore[no-any-return]


@functools.cache
def builtin_rows(family: str) -> tuple[Row, ...]:
    """A family's built-in table as rows: what a project without a features file builds from."""
    return tuple(Row(f) for f in raw_family(family)["features"])


def validate_family(family: str) -> None:
    """Check one table against ``data/schema.json`` (the tests do it for every table)."""
    schema = read_json(os.path.join(_DATA, "schema.json"))
    validate_schema(raw_family(family), schema, schema["definitions"], f"{family}.json")
    names = [f["name"] for f in raw_family(family)["features"]]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice:
        raise TableError(f"{family}.json: {twice} is defined twice")


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
        for m in raw_family(fam)["machines"]:
            out.append(
                Machine(
                    name=m["name"],
                    family=fam,
                    meson_cpu_family=m["meson_cpu_family"],
                    macros_any=tuple(m.get("macros_any", ())),
                    macros_all=tuple(m.get("macros_all", ())),
                    min=tuple(m["min"]),
                    abi=tuple(m.get("abi", ())),
                    hwcaps=tuple(m.get("hwcaps", {}).items()),
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
def all_feature_names(project: Project | None = None) -> Mapping[str, tuple[str, ...]]:
    """Feature name -> every family that has it (AES is both x86's and arm's), over every table."""
    out: dict[str, tuple[str, ...]] = {}
    for fam in families():
        for r in _features_of(fam, project):
            out[r.name] = (*out.get(r.name, ()), fam)
    return out


def _features_of(family: str, project: Project | None) -> tuple[Row, ...]:
    """The rows of a family: the built-in table's, or the project's (``project.load`` made them complete)."""
    if project is None:
        return builtin_rows(family)
    return project.rows.get(family, ())


def families_of(name: str, project: Project | None = None) -> tuple[str, ...]:
    """The families a feature name belongs to; empty for a name no table has."""
    return all_feature_names(project).get(name, ())


@functools.cache
def all_names_of(family: str, project: Project | None = None) -> frozenset[str]:
    """Feature and extra-check names of one family: what a cache file may name."""
    raw = raw_family(family)
    return frozenset([*(r.name for r in _features_of(family, project)), *(e["name"] for e in raw["extra_checks"])])


@functools.cache
def _arch_selecting() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in compilers_data()["arch_selecting_args"]["patterns"])


def picks_cpu(arg: str) -> bool:
    """Is ``arg`` one with which a user picks the target CPU (``-march=``, ``-mcpu=``, ``/arch:``, ...)?"""
    return any(p.search(arg) for p in _arch_selecting())


@functools.cache
def _disabling() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in compilers_data()["disabling_args"]["patterns"])


def turns_off(arg: str) -> bool:
    """Is ``arg`` one that turns an instruction set off (``-mno-mmx``), enabling nothing?"""
    return any(p.search(arg) for p in _disabling())


@functools.cache
def native_flags_anywhere() -> frozenset[str]:
    """Every native flag of every family and compiler style (``-march=native``, ``-xHost``, ...)."""
    return frozenset(f for fam in families() for flags in raw_family(fam)["native_flag"].values() for f in flags)


@functools.cache
def compilers_data() -> Mapping[str, Any]:
    return read_json(os.path.join(_DATA, "compilers.json"))  # type: ignore[no-any-return]


@functools.cache
def macros_data() -> Mapping[str, Any]:
    """``data/macros.json`` (the tests check it against ``macros.schema.json``, as every table)."""
    return read_json(os.path.join(_DATA, "macros.json"))  # type: ignore[no-any-return]


def default_macro_prefix() -> str:
    """``data/macros.json``'s ``default_prefix``: the macro-prefix option's default, and what a ``Macros``
    without a prefix spells (``CCOPT_``; ``meson_options.txt`` states it too, a test holds them equal)."""
    return str(macros_data()["default_prefix"])


def macro_style(style: str) -> Mapping[str, Any]:
    """The spellings of one macro style; InputError naming the known ones."""
    styles = macros_data()["styles"]
    if style not in styles:
        hint = did_you_mean(style, [s.upper() for s in styles]).lower()
        raise InputError(f"header-style: unknown style '{style}'{hint}; known: {', '.join(styles)}")
    return styles[style]  # type: ignore[no-any-return]


def macro_name(what: str, prefix: str | None = None, style: str = "ccopt", **fields: str) -> str:
    """The name of one macro of a style's protocol (``data/macros.json``): ``macro_name("have", name="AVX2")`` is
    ``CCOPT_HAVE_AVX2``; ``prefix`` None: the style's own (or the default)."""
    spelling = macro_style(style)
    prefix = prefix or spelling["prefix"] or default_macro_prefix()
    return str(spelling[what]).format(prefix=prefix, **fields).split("=", 1)[0]


def check_macros(prefix: str | None, style: str, runtime: bool = True) -> None:
    """The macro protocol a build asks for, as ``data/macros.json`` allows it: one InputError line for a prefix
    the style's headers cannot follow, or ``runtime=false`` with a style whose headers call ccopt's run-time.
    ``prefix`` None: the default."""
    spelling = macro_style(style)
    prefix = default_macro_prefix() if prefix is None else prefix
    if not re.fullmatch(macros_data()["prefix_pattern"].rstrip("$"), prefix):
        raise InputError(f"macro-prefix: '{prefix[:40]}' must be upper-case letters, digits and '_', "
                         "ending in '_' (CCOPT_, NPY_)")
    owned = spelling["prefix"]
    if owned is not None and prefix != owned:
        others = [s for s, v in macros_data()["styles"].items() if v["prefix"] is None]
        way = f", or use header-style={others[0]} with a run-time of the project's own" if others else ""
        raise InputError(f"macro-prefix: '{prefix}' cannot be used with header-style={style}, whose headers "
                         f"(ccopt_dispatch.h, ccopt_cpu_table.h) spell {owned}; leave macro-prefix at {owned}{way}")
    if spelling["runtime"] and not runtime:
        raise InputError(f"runtime=false cannot be used with header-style={style}, whose dispatch headers call "
                         "ccopt's run-time (ccopt_cpu_have); keep runtime=true, or use a header style of a project "
                         "with its own run-time")


def reference_compiler() -> str:
    """The compiler id whose table is the reference: the run-time graph, the dialect of an unknown id."""
    return str(compilers_data()["reference"])


def compiler_spec(compiler_id: str) -> CompilerSpec:
    data = compilers_data()
    entry = data["compilers"].get(compiler_id)
    # what this very compiler does beyond its driver's options ('#pragma GCC target' updating macros): never
    # assumed of an unknown id, which only speaks the reference's dialect
    extra = entry.get("probe_extra", {}) if entry is not None else {}
    if entry is None:
        # Unknown ids (e.g. 'armclang', 'nvidia_hpc') speak the reference's (GNU) dialect in practice.
        entry = data["compilers"][reference_compiler()]
    return CompilerSpec(
        id=compiler_id,
        style=entry["style"],
        driver={**data["drivers"][entry["driver"]], **extra},
        opt=tuple(entry["opt"]),
        werror=tuple(entry["werror"]),
        debug_patterns=tuple(entry["debug_patterns"]),
        version_macros=tuple(entry.get("version_macros", ())),
    )


# --------------------------------------------------------------------------- resolved table


def _when_matches(when: Mapping[str, str], machine: str, spec: CompilerSpec, version: Version | None) -> bool:
    """Does an override's ``when`` hold: each key given (machine, style, compiler, the compiler's version range)?"""
    wanted = {"machine": machine, "style": spec.style, "compiler": spec.id}
    return all(in_range(version, v) if k == "version" else wanted[k] == v for k, v in when.items())


def build_feature(
    row: Row, family: str, machine: str, spec: CompilerSpec, family_reason: str | None,
    version: Version | None = None,
) -> Feature:
    """One row as ``spec``'s compiler of ``version`` sees it on ``machine``: the overrides whose ``when`` holds apply
    in the order written, a later one's fields replacing an earlier one's (so a narrower range comes after a wider
    one)."""
    raw = row.fields
    cur: dict[str, Any] = {
        "implies": raw["implies"],
        "headers": raw["headers"],
        "macros": raw["macros"],
        "flags": raw["flags"].get(spec.style),
        "disable": raw.get("disable") or family_reason,  # a project's override may disable a feature
        "group": raw.get("group", ()),
        "detect": raw.get("detect", ()),
        "flags_replace": raw.get("flags_replace", ""),
    }
    for ov in raw.get("overrides", ()):
        if _when_matches(ov["when"], machine, spec, version):
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
        group=tuple(cur["group"]),
        extra_checks=tuple(raw.get("extra_checks", ())),
        disabled=cur["disable"],
        runtime=runtime,
        probe_file=raw.get("probe", ""),
        detect=_detect_rule(cur["detect"], cur["group"], raw["name"]),
        flags_replace=cur["flags_replace"],
        audit=tuple(raw.get("audit", ())),
        where=row.where,
        runtime_of=row.runtime_of,
        widened_by=row.widened_by,
    )


def _detect_rule(items: Sequence[Any], group: Sequence[str], name: str) -> tuple[tuple[str, str], ...]:
    """A row's run-time test items as (name, regex of earlier names it replaces); the fork's default: the
    group, else the name."""
    if not items:
        return tuple((g, "") for g in group) or ((name, ""),)
    return tuple((i, "") if isinstance(i, str) else (i["name"], i.get("replaces", "")) for i in items)


class Table(NamedTuple):
    """The features of one machine as one compiler (of one version) sees them."""

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
    # the bases of our +ext flags that, after the user's args, keep all those enable (probe.architecture_lines)
    lines: tuple[str, ...] = ()
    project: Project | None = None  # the project features among these
    version: Version | None = None  # the compiler's, as the rows' version ranges read it (None: unknown)

    def get(self, name: str) -> Feature:
        return self.features[name]

    @property
    def policies(self) -> Policies:
        """The project's rules (numpy's policies), or ccopt's own."""
        return self.project.policies if self.project is not None else DEFAULT_POLICIES

    def subject(self, name: str) -> Feature | ExtraCheck:
        """What a probe of ``name`` compiles: a feature, or an extra check (under its feature's flags)."""
        found = self.features.get(name)
        return found if found is not None else self.extra_checks[name]

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

    def defined(self, names: Iterable[str]) -> frozenset[str]:
        """What a target of ``names`` defines: their closure; with rings kept ``separate``, less each member's ring
        partners ranked below it (numpy's fork tests a ring lowest first and does not enter a feature it is
        already testing, so ASIMD defines ASIMD alone and NEON defines NEON, NEON_FP16, NEON_VFPV4 and ASIMD)."""
        given = frozenset(names)
        closure = self.closure(given)
        if self.policies.rings != "separate":
            return closure
        below = {r for n in given if n in self.features for r in closure
                 if r not in given and n in self.closure([r]) and self._order(r) < self._order(n)}
        return closure - below

    def _order(self, name: str) -> tuple[int, str]:
        return (self.features[name].interest, name)

    def sort(self, names: Iterable[str], reverse: bool = False) -> list[str]:
        return sorted(set(names), key=lambda n: (self.features[n].interest, n), reverse=reverse)

    def flags_for(self, names: Iterable[str]) -> list[str]:
        """Cumulative, conflict-free flags enabling ``names`` and all they imply."""
        flags: list[str] = []
        for n in self.sort(self.closure(names)):
            f = self.features[n]
            if f.flags_replace:  # matched at the start of a flag, as numpy's 'match'
                flags = [x for x in flags if not re.match(f.flags_replace, x)]
            flags.extend(f.flags)
        return normalize_flags(flags, self.conflicts, self.context, self.policies.plus_parts == "descending",
                               self.lines)

    def with_context(self, args: Sequence[str], lines: Sequence[str] = ()) -> Table:
        """This table, for a build whose own args pick a CPU (``-march=``, ``-mcpu=``, ...); ``lines``: the bases
        of our ``+ext`` flags that the compiler says keep all those args enable (``probe.architecture_lines``)."""
        ctx = tuple(a for a in args if picks_cpu(a))
        found = tuple(lines) if ctx else ()
        return self if (ctx, found) == (self.context, self.lines) else self._replace(context=ctx, lines=found)

    def detect_of(self, members: Iterable[str]) -> list[str]:
        """What the run-time tests before it calls a target of ``members`` (a project set's ``detect``): each
        feature of the closure, lowest first, appends its items, an item first dropping what it replaces."""
        out: list[str] = []
        for n in self.sort(self.closure(members)):
            for name, replaces in self.features[n].detect:
                if replaces:  # matched at the start of a name, as numpy's 'match'
                    out = [o for o in out if not re.match(replaces, o)]
                out.append(name)
        return out

    def rank(self, target: Sequence[str]) -> int:
        """Interest of a (multi-)target: the highest member, plus one per extra member."""
        return max(self.features[n].interest for n in target) + len(target) - 1

    def builtin(self) -> Table:
        """This machine's built-in table for this compiler and version, whatever the project states: the features
        whose predefined macros tell what a row's flags enable."""
        return _table_for(self.machine.name, self.spec.id, None, self.version)

    def reference(self) -> Table:
        """This machine's table for the reference compiler: the graph the run-time library judges by."""
        return table_for(self.machine.name, reference_compiler(), self.project)


def table_for(machine: str, compiler_id: str, project: Project | None = None, version: str | None = None) -> Table:
    """``machine``'s features as the compiler ``compiler_id`` of ``version`` (Meson's ``cc.version()``) sees them;
    an unknown version is in no row's version range."""
    return _table_for(machine, compiler_id, project, parse_version(version))


@functools.cache
@_checked
def _table_for(machine_name: str, compiler_id: str, project: Project | None, version: Version | None) -> Table:
    machine = machine_by_name(machine_name)
    if project is not None:  # a features file's 'min' (an additive file keeps the table's)
        machine = machine._replace(min=project.mins.get(machine.name, ()))
    raw = raw_family(machine.family)
    spec = compiler_spec(compiler_id)
    family_reason = raw["unsupported_styles"].get(spec.style)
    feats = [build_feature(f, machine.family, machine.name, spec, family_reason, version)
             for f in _features_of(machine.family, project)]
    feats.sort(key=lambda f: (f.interest, f.name))
    known = {e["name"] for e in raw["extra_checks"]}  # a row owns the extra checks it lists
    extras = {e: ExtraCheck(e, machine.family, f.name) for f in feats for e in f.extra_checks if e in known}
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
        project=project,
        version=version,
    )

