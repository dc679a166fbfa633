"""The rules every feature row follows, whichever input stated it.

A row comes from a built-in table, from a features file's additive keys (``features``, ``override``) or from its
``feature_set``; ``project.load`` turns all three into one model (the rows of every family) and checks each rule
here once, on that model.  The tests hold the built-in tables to the same rules.

- a feature name is the schema's ``name`` (no ``__``, which joins the members of a target: ``FMA3__AVX2``) and no
  keyword of either grammar;
- a pattern (``flags_replace``, a ``detect`` item's ``replaces``) is a regular expression that runs in linear time;
- a row's run-time test covers every built-in feature whose flags its own flags (with its implications') contain:
  a row picked on the AVX2 bit alone must not compile FMA code.  A ``like`` row that inherits its test has it
  widened to what its flags enable; a row that states its test is refused with the features to add.
- what a row's flags enable, in any spelling (``-mfma``, ``-march=haswell``, ``-msse4``, ``-mcpu=``, ``/arch:``), is
  what the compiler says: the probe reads its predefined macros under the row's flags (``reads_flags`` picks the
  rows, ``enabled_gaps`` judges them), and a row whose test misses one of the built-in features they enable is not
  built.
"""

from __future__ import annotations

import functools
import re
import warnings

from ._record import TYPE_CHECKING
from .errors import TableError, did_you_mean
from .schema import schema_file
from .tables import (
    Feature,
    Row,
    Table,
    build_feature,
    builtin_rows,
    compiler_spec,
    compilers_data,
    data_file,
    picks_cpu,
    raw_family,
    reference_compiler,
    turns_off,
)
from .tokens import RESERVED, show
from .versions import Version, boundaries, why_empty

if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Mapping

__all__ = ["bad_name", "unsafe_pattern", "check_family", "runtime_gaps", "widen_runtime", "covers",
           "union_recipes", "describe_gap", "MAX_PATTERN", "reads_flags", "unchecked", "enabled_gaps",
           "describe_enabled_gap"]

MAX_PATTERN = 200  # numpy's longest is 18 characters


@functools.cache
def _name() -> re.Pattern[str]:
    return re.compile(schema_file("schema.json")["definitions"]["name"]["pattern"])


def bad_name(name: str) -> str:
    """Why ``name`` cannot be a feature's name ('' when it can)."""
    if not _name().search(name):
        return (f"'{show(name)}' is not a feature name: upper-case letters and digits, words joined by single '_' "
                "('__' joins the members of a multi-feature target)")
    if name in RESERVED:
        return f"'{name}' is a keyword of cpu-baseline/cpu-dispatch or @targets, not a feature name; pick another name"
    return ""


# --------------------------------------------------------------------------- patterns in linear time


def unsafe_pattern(text: str) -> str:
    """Why ``text`` is not a pattern this project runs ('' when it is).

    Patterns are matched at the start of a flag or a name (numpy's ``match``).  Python's engine backtracks, so a
    repeated group (``(m+)+``) or two unbounded repetitions (``a*a*b``) can take exponential or polynomial time on
    a long flag.  Allowed: literals, escapes, ``.``, classes, ``^``/``$``, non-repeated groups (``(?:a|b)``),
    ``|``, ``?`` and ``*``/``+`` on one character or class, at most one ``*``/``+`` before the end (a trailing
    ``.*`` is free: a match at the start stops there).  numpy's patterns (``.*SSE.*``, ``.*(?:mcpu=|vsx).*``) fit."""
    if len(text) > MAX_PATTERN:
        return f"is longer than {MAX_PATTERN} characters"
    try:
        with warnings.catch_warnings():  # '[[' or '||' in a class: a meaning that future Pythons change
            warnings.simplefilter("error")
            re.compile(text)
    except (re.error, RecursionError, FutureWarning) as exc:
        return f"is not a regular expression ({exc}); write it as Python's re module reads it"
    unbounded = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if text[i + 1:i + 2].isdigit() or text[i + 1:i + 2] == "g":
                return "refers back to a group (\\1), which can take exponential time; write the text out"
            i = i + 2
        elif c == "[":
            i = _class_end(text, i)
        elif c == "(":
            if text[i + 1:i + 2] == "?" and text[i + 2:i + 3] != ":":
                return "uses a group other than '( )' or '(?: )' (look-around, flags, names); write it without"
            i = i + (3 if text[i + 1:i + 2] == "?" else 1)
        elif c == ")":
            if text[i + 1:i + 2] in ("*", "+", "?", "{"):
                return "repeats a group, which can take exponential time on a long flag; repeat one character"
            i = i + 1
        elif c == "{":
            return "uses a counted repetition '{m,n}'; write the characters out"
        elif c in "*+":
            rest = text[i + 1:].lstrip("?+")
            if rest.strip(")$"):
                unbounded += 1
            i = i + 1
        else:
            i += 1
    if unbounded > 1:
        return (f"has {unbounded} repetitions ('*' or '+') before its end, which can take polynomial time on a long "
                "flag; one is the most (a trailing '.*' does not count)")
    return ""


def _class_end(text: str, i: int) -> int:
    """The index after the character class that starts at ``text[i]`` (compiled already: it is closed)."""
    j = i + 1
    if text[j:j + 1] == "^":
        j += 1
    if text[j:j + 1] == "]":
        j += 1
    while text[j] != "]":
        j += 2 if text[j] == "\\" else 1
    return j + 1


# --------------------------------------------------------------------------- run-time tests against flags


def covers(have: Mapping[str, Any], need: Mapping[str, Any]) -> bool:
    """Does the run-time recipe ``have`` (the union of a row's and its implications') check everything the
    recipe ``need`` checks?"""
    if need.get("always"):
        return True
    for key in ("cpuid", "hwcap", "hwcap2"):
        if any(x not in have.get(key, []) for x in need.get(key, ())):
            return False
    if need.get("xcr0", 0) & ~have.get("xcr0", 0):
        return False
    return all(need[k] == have.get(k) for k in ("win_pf", "sysctl", "xcomp_perm") if k in need)


def union_recipes(recipes: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One recipe that checks what each of ``recipes`` checks (None: two scalar checks cannot be one)."""
    out: dict[str, Any] = {}
    for r in recipes:
        for key, value in r.items():
            if key in ("cpuid", "hwcap", "hwcap2", "cpuinfo"):
                out[key] = [*out.get(key, []), *(v for v in value if v not in out.get(key, []))]
            elif key == "xcr0":
                out[key] = out.get(key, 0) | value
            elif key != "always":
                out.setdefault(key, value)
    return out


def _machines(fam: str) -> tuple[str, ...]:
    return tuple(m["name"] for m in raw_family(fam)["machines"])


def _resolve(fam: str, rows: Iterable[Row], machine: str, cid: str, version: Version | None) -> dict[str, Feature]:
    spec = compiler_spec(cid)
    if spec.style in raw_family(fam)["unsupported_styles"]:
        return {}
    return {r.name: build_feature(r, fam, machine, spec, None, version) for r in rows}


@functools.cache
def _builtin(fam: str, machine: str, cid: str, version: Version | None) -> tuple[Feature, ...]:
    """The built-in features that have instruction-set switches of their own (``-mfma``): what a row's flags are
    read against.  A switch that picks a CPU or a level (``-march=``, ``/arch:``) enables more than its row
    names, so only GNU-style switches count; rows for other styles state their implications instead."""
    if compiler_spec(cid).style != "gnu":
        return ()
    return tuple(f for f in _resolve(fam, builtin_rows(fam), machine, cid, version).values()
                 if f.flags and not f.disabled and f.runtime and not any(picks_cpu(x) for x in f.flags))


def _compilers(fam: str, rows: Iterable[Row]) -> list[tuple[str, Version | None]]:
    """The GNU-style compilers whose view of the rows can differ: the reference compiler's, and each one a
    ``when`` names (any other id sees what the reference sees), each at an unknown version and at one version
    of each stretch its ``when`` ranges set apart."""
    whens = [ov["when"] for r in [*rows, *builtin_rows(fam)] for ov in r.fields.get("overrides", ())]
    named = {w["compiler"] for w in whens if "compiler" in w}
    ids = [reference_compiler(), *sorted(named - {reference_compiler()})]
    return [(cid, v) for cid in ids if cid in compilers_data()["compilers"] and compiler_spec(cid).style == "gnu"
            for v in (None, *boundaries(w["version"] for w in whens if w.get("compiler") == cid and "version" in w))]


def _closure(raw: Mapping[str, Row], made: dict[str, Feature], name: str,
             make: Callable[[Row], Feature]) -> list[Feature]:
    """``name``'s feature first, then what it implies, transitively; each row resolved once (``made``)."""
    seen: dict[str, Feature] = {}
    todo = [name]
    while todo:
        n = todo.pop()
        if n in raw and n not in seen:
            if n not in made:
                made[n] = make(raw[n])
            seen[n] = made[n]
            todo.extend(made[n].implies)
    return list(seen.values())


def _switches(b: Feature) -> set[str]:
    """The flags with which a row enables the built-in feature ``b``: its own, but those that turn something off
    (AVX512F's ``-mno-mmx``): a row with ``-mavx512f`` alone enables AVX512F all the same."""
    return {x for x in b.flags if not turns_off(x)}


def runtime_gaps(fam: str, rows: tuple[Row, ...], own_only: bool = False,
                 names: Iterable[str] | None = None, as_targets: bool = False) -> dict[str, dict[str, list[Feature]]]:
    """Row name -> machine -> the built-in features its flags enable that its run-time test (with its
    implications') does not check, over every GNU-style compiler; ``own_only``: the features its own flags
    enable; ``names``: only these rows (default: all); ``as_targets``: a switch's feature with all it implies, as
    the built-in target of that feature is tested (``-mavx2`` enables AVX and SSE4.2 too: the compiler's
    macros say so at probe time, and a widened test must cover them).  Only the rows a closure reaches are
    resolved."""
    wanted = [r.name for r in rows] if names is None else list(names)
    out: dict[str, dict[str, list[Feature]]] = {}
    if not wanted:
        return out
    raw = {r.name: r for r in rows}
    for machine in _machines(fam):
        for cid, version in _compilers(fam, rows):
            known = _builtin(fam, machine, cid, version)
            if not known:  # a style the family does not support: nothing to read flags against
                continue
            spec = compiler_spec(cid)
            make = functools.partial(build_feature, family=fam, machine=machine, spec=spec, family_reason=None,
                                     version=version)
            made: dict[str, Feature] = {}
            builtin = {r.name: r for r in builtin_rows(fam)}
            resolved: dict[str, Feature] = {}
            for name in wanted:
                closure = _closure(raw, made, name, make)
                f = closure[0]
                if f.disabled or not f.runtime:
                    continue
                flags = set(f.flags) if own_only else {x for c in closure for x in c.flags}
                have = union_recipes(c.runtime for c in closure)
                for b in known:
                    if not _switches(b) <= flags:
                        continue
                    for e in _closure(builtin, resolved, b.name, make) if as_targets else [b]:
                        if e.runtime and not e.disabled and not covers(have, e.runtime):
                            found = out.setdefault(name, {}).setdefault(machine, [])
                            found += [] if e in found else [e]
    return out


def widen_runtime(fam: str, rows: tuple[Row, ...]) -> tuple[Row, ...]:
    """The rows, each row with an inherited run-time test that misses what its flags enable replaced by one whose
    test checks it too (LEVEL3 like AVX2 with ``-mfma``: AVX2's bit and FMA3's)."""
    inherited = [r.name for r in rows if r.runtime_of]
    # first the features of a row's own switches; then, with the rows it implies widened, what its closure's
    # switches enable as the built-in targets of those features are tested (their implications too)
    for own_only in (True, False):
        gaps = runtime_gaps(fam, rows, own_only, inherited, as_targets=not own_only)
        rows = tuple(_widened(fam, r, gaps[r.name]) if r.name in gaps else r for r in rows)
    return rows


def _widened(fam: str, row: Row, missing: Mapping[str, list[Feature]]) -> Row:
    own = row.fields["runtime"]
    runtime = {m: union_recipes([own.get(m, own.get("*", {})), *(b.runtime for b in missing.get(m, ()))])
               for m in _machines(fam) if m in own or "*" in own}
    added = sorted({*row.widened_by, *(b.name for bs in missing.values() for b in bs)})
    return row._replace(fields={**row.fields, "runtime": runtime}, widened_by=tuple(added))


def describe_gap(name: str, missing: Mapping[str, list[Feature]]) -> str:
    """The one line that refuses a row whose stated run-time test misses what its flags enable."""
    machine, feats = next(iter(missing.items()))
    names = ", ".join(b.name for b in feats)
    flags = " ".join(dict.fromkeys(x for b in feats for x in sorted(_switches(b), key=b.flags.index)))
    return (f"{name}'s flags enable {names} ({flags}) on {machine}, which its run-time test does not check: a CPU "
            f"without them would run its code; add their checks to its 'runtime' (as the built-in rows state them), "
            "or drop those flags")


# --------------------------------------------------------------------------- what the compiler says flags enable


def reads_flags(table: Table, name: str) -> bool:
    """Must the compiler say what ``name``'s flags enable?  Yes for every row with flags that is not the built-in
    one as the table states it, whatever their spelling (``-mavx2 -mfma``, ``-march=haswell``, ``-msse4``,
    ``/arch:AVX2``): the widening above reads a row's flags against the built-in rows' own switches, and the
    compiler's predefined macros under the flags are the fact it is checked against.  A built-in row states its
    implications itself, and the tests hold them to it.  A row the table disables (numpy's X86_V4 on 32-bit x86)
    is never compiled: nothing to ask."""
    feat, own = table.features[name], table.builtin().features.get(name)
    if own is not None and own.flags == feat.flags and own.runtime == feat.runtime:
        return False
    return bool(feat.flags) and not feat.disabled


def unchecked(table: Table, name: str) -> list[Feature]:
    """The built-in features with predefined macros that ``name``'s run-time test, with its implications', does
    not check: what the compiler is asked whether its flags enable."""
    have = union_recipes(table.features[n].runtime for n in table.closure([name]))
    return [b for b in table.builtin().features.values()
            if b.macros and not b.disabled and b.runtime and not covers(have, b.runtime)]


def enabled_gaps(table: Table, name: str, under_flags: Iterable[str], under_args: Iterable[str]) -> list[Feature]:
    """The built-in features whose predefined macros ``name``'s flags define (``under_flags``: the macro specs
    that hold with them) beyond the user's args (``under_args``) and which its run-time test, with its
    implications', does not check."""
    row, base = set(under_flags), set(under_args)
    return [b for b in unchecked(table, name)
            if all(m in row for m in b.macros) and not all(m in base for m in b.macros)]


def describe_enabled_gap(name: str, flags: Iterable[str], compiler: str, missing: Iterable[Feature]) -> str:
    """Why a row whose flags enable more than its run-time test checks is not built."""
    names = ", ".join(b.name for b in missing)
    return (f"{name}'s flags {' '.join(flags)} enable {names} ({compiler}'s predefined macros say), which its "
            "run-time test does not check: a CPU without them would run its code; add their checks to its "
            "'runtime', or name the instruction sets with their own switches (-mavx2 -mfma ...), which an "
            "inherited test takes on")


# --------------------------------------------------------------------------- every rule on a family's rows


def check_family(fam: str, rows: tuple[Row, ...], stated: Iterable[str] | None = None) -> None:
    """Every rule on a family's rows, a built-in table's or a features file's alike (a TableError naming where
    the row was stated): names are feature names, not keywords, and unique; interests and probes are unique;
    implications name rows of the family, in any direction (numpy's SSE and SSE2 imply each other, as aarch64's
    NEON features do; interest only orders flags and targets); extra checks are the family's; patterns run in
    linear time; version ranges hold for some version; each machine has a run-time test, and the test covers
    what the flags enable.  That last rule reads the rows ``stated`` (default: those a features file states a
    test for; an inherited one was widened already, and the built-in rows are held to it by the tests)."""
    interest: dict[int, str] = {}
    probes: dict[str, str] = {}
    for r in rows:
        where, name = r.shown(fam), r.name
        why = bad_name(name)
        if why:
            raise TableError(f"{where}: {why}")
        if name in interest.values():
            raise TableError(f"{where}: {name} is stated twice; merge the two rows")
        level = r.fields["interest"]
        if level in interest:  # interest orders flags (later ones win conflicts) and targets: a total order
            raise TableError(f"{where}: {name}: interest {level} is {interest[level]}'s; pick another")
        probe = r.fields.get("probe") or data_file(f"probes/{fam}/{name.lower()}.c")
        if probe in probes:  # one batch includes each probe once
            raise TableError(f"{where}: {name} and {probes[probe]} share a probe; give one its own")
        interest[level], probes[probe] = name, name
    names = set(interest.values())
    extras = {e["name"] for e in raw_family(fam)["extra_checks"]}
    for r in rows:
        _check_references(fam, r, names, extras)
        _check_patterns(fam, r)
        _check_versions(fam, r)
    if stated is None:
        stated = [r.name for r in rows if r.where and not r.runtime_of]
    gaps = runtime_gaps(fam, rows, names=stated)
    for r in rows:
        if r.name in gaps:
            raise TableError(f"{r.shown(fam)}: {describe_gap(r.name, gaps[r.name])}")


def _check_references(fam: str, r: Row, names: set[str], extras: set[str]) -> None:
    where, row = r.shown(fam), r.fields
    per_compiler = [d for ov in row.get("overrides", ()) for d in ov.get("implies", ())]
    for dep in [*row["implies"], *per_compiler]:
        if dep not in names:
            raise TableError(f"{where}: {r.name} implies '{dep}', which {fam} does not state"
                             f"{did_you_mean(dep, names)}")
    for e in row.get("extra_checks", ()):
        if e not in extras:
            raise TableError(f"{where}: {r.name}'s extra check '{e}' is not one of {fam}'s{did_you_mean(e, extras)}")
    if not row.get("runtime"):  # the run-time would answer 0 on every CPU: code compiled and never called
        raise TableError(f"{where}: {r.name} has no run-time test; add 'runtime' (per machine or '*', as the "
                         "built-in rows state it) or start from a built-in row with 'like'")
    machines = _machines(fam)
    unknown = [k for k in row.get("runtime", {}) if k != "*" and k not in machines]
    if unknown:
        raise TableError(f"{where}: {r.name}'s run-time recipe is keyed '{show(unknown[0])}', not a machine "
                         f"of {fam}; use '*' or one of {', '.join(machines)}")


def _check_patterns(fam: str, r: Row) -> None:
    """``flags_replace`` and a ``detect`` item's ``replaces``: regular expressions matched at the start of a flag or
    a name, limited to what runs in linear time (``unsafe_pattern``)."""
    parts = [r.fields, *r.fields.get("overrides", ())]
    found = [("flags_replace", p["flags_replace"]) for p in parts if p.get("flags_replace")]
    found += [("detect's 'replaces'", i["replaces"]) for p in parts for i in p.get("detect", ())
              if isinstance(i, dict) and i.get("replaces")]
    for key, text in found:
        why = unsafe_pattern(text)
        if why:
            raise TableError(f"{r.shown(fam)}: {r.name}'s {key} '{show(text)}' {why}")


def _check_versions(fam: str, r: Row) -> None:
    """A ``when``'s version range holds for some version (its grammar is the schema's)."""
    for ov in r.fields.get("overrides", ()):
        text = ov["when"].get("version")
        why = why_empty(text) if text else ""
        if why:
            raise TableError(f"{r.shown(fam)}: {r.name}'s version range '{text}' {why}; state the versions it is for")
