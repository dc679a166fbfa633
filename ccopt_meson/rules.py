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
- what a row's flags enable beyond those switches (``-march=haswell``, ``-msse4``, ``-mcpu=``, ``/arch:``) is what
  the compiler says: the probe reads its predefined macros under the row's flags (``reads_flags`` picks the rows,
  ``enabled_gaps`` judges them), and a row whose test misses one of the built-in features they enable is not built.
"""

from __future__ import annotations

import functools
import re
import warnings

from ._record import TYPE_CHECKING
from .schema import schema_file
from .tables import (
    Feature,
    Table,
    build_feature,
    compiler_spec,
    compilers_data,
    picks_cpu,
    raw_family,
    reference_compiler,
    turns_off,
)
from .tokens import RESERVED, show
from .versions import Version, boundaries

if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Mapping

__all__ = ["bad_name", "unsafe_pattern", "INHERITED_RUNTIME", "WIDENED", "runtime_gaps", "widen_runtime", "covers",
           "union_recipes", "describe_gap", "MAX_PATTERN", "reads_flags", "enabled_gaps", "describe_enabled_gap"]

MAX_PATTERN = 200  # numpy's longest is 18 characters
INHERITED_RUNTIME = " runtime of"  # a key no schema admits: the built-in row a 'like' row took its test from
WIDENED = " runtime widened by"  # the features whose tests were added to an inherited one


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


def _resolve(fam: str, rows: Iterable[Mapping[str, Any]], machine: str, cid: str,
             version: Version | None) -> dict[str, Feature]:
    spec = compiler_spec(cid)
    if spec.style in raw_family(fam)["unsupported_styles"]:
        return {}
    return {r["name"]: build_feature(r, fam, machine, spec, None, version) for r in rows}


@functools.cache
def _builtin(fam: str, machine: str, cid: str, version: Version | None) -> tuple[Feature, ...]:
    """The built-in features that have instruction-set switches of their own (``-mfma``): what a row's flags are
    read against.  A switch that picks a CPU or a level (``-march=``, ``/arch:``) enables more than its row
    names, so only GNU-style switches count; rows for other styles state their implications instead."""
    if compiler_spec(cid).style != "gnu":
        return ()
    return tuple(f for f in _resolve(fam, raw_family(fam)["features"], machine, cid, version).values()
                 if f.flags and not f.disabled and f.runtime and not any(picks_cpu(x) for x in f.flags))


def _compilers(fam: str, rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, Version | None]]:
    """The GNU-style compilers whose view of the rows can differ: the reference compiler's, and each one a
    ``when`` names (any other id sees what the reference sees), each at an unknown version and at one version
    of each stretch its ``when`` ranges set apart."""
    whens = [ov["when"] for r in [*rows, *raw_family(fam)["features"]] for ov in r.get("overrides", ())]
    named = {w["compiler"] for w in whens if "compiler" in w}
    ids = [reference_compiler(), *sorted(named - {reference_compiler()})]
    return [(cid, v) for cid in ids if cid in compilers_data()["compilers"] and compiler_spec(cid).style == "gnu"
            for v in (None, *boundaries(w["version"] for w in whens if w.get("compiler") == cid and "version" in w))]


def _closure(raw: Mapping[str, Mapping[str, Any]], made: dict[str, Feature], name: str,
             make: Callable[..., Feature]) -> list[Feature]:
    """``name``'s feature first, then what it implies, transitively; each row resolved once (``made``)."""
    seen: dict[str, Feature] = {}
    todo = [name]
    while todo:
        n = todo.pop()
        if n in raw and n not in seen:
            if n not in made:
                made[n] = make(raw=raw[n])
            seen[n] = made[n]
            todo.extend(made[n].implies)
    return list(seen.values())


def _switches(b: Feature) -> set[str]:
    """The flags with which a row enables the built-in feature ``b``: its own, but those that turn something off
    (AVX512F's ``-mno-mmx``): a row with ``-mavx512f`` alone enables AVX512F all the same."""
    return {x for x in b.flags if not turns_off(x)}


def runtime_gaps(fam: str, rows: tuple[Mapping[str, Any], ...], own_only: bool = False,
                 names: Iterable[str] | None = None) -> dict[str, dict[str, list[Feature]]]:
    """Row name -> machine -> the built-in features its flags enable that its run-time test (with its
    implications') does not check, over every GNU-style compiler; ``own_only``: the features its own flags
    enable; ``names``: only these rows (default: all).  Only the rows a closure reaches are resolved."""
    wanted = [r["name"] for r in rows] if names is None else list(names)
    out: dict[str, dict[str, list[Feature]]] = {}
    if not wanted:
        return out
    raw = {r["name"]: r for r in rows}
    for machine in _machines(fam):
        for cid, version in _compilers(fam, rows):
            known = _builtin(fam, machine, cid, version)
            if not known:  # a style the family does not support: nothing to read flags against
                continue
            spec = compiler_spec(cid)
            made: dict[str, Feature] = {}
            for name in wanted:
                closure = _closure(raw, made, name, functools.partial(build_feature, family=fam, machine=machine,
                                                                        spec=spec, family_reason=None,
                                                                        version=version))
                f = closure[0]
                if f.disabled or not f.runtime:
                    continue
                flags = set(f.flags) if own_only else {x for c in closure for x in c.flags}
                have = union_recipes(c.runtime for c in closure)
                for b in known:
                    if _switches(b) <= flags and not covers(have, b.runtime):
                        found = out.setdefault(name, {}).setdefault(machine, [])
                        found += [] if b in found else [b]
    return out


def widen_runtime(fam: str, rows: tuple[Mapping[str, Any], ...]) -> tuple[Mapping[str, Any], ...]:
    """The rows, each ``like`` row whose inherited run-time test misses what its flags enable given one that
    checks it too (LEVEL3 like AVX2 with ``-mfma``: AVX2's bit and FMA3's)."""
    inherited = [r["name"] for r in rows if INHERITED_RUNTIME in r]
    for own_only in (True, False):  # first what a row's own flags enable, then what its closure's still miss
        _widen(fam, rows, runtime_gaps(fam, rows, own_only, inherited))
    return rows


def _widen(fam: str, rows: tuple[Mapping[str, Any], ...], gaps: Mapping[str, Mapping[str, list[Feature]]]) -> None:
    for r in rows:
        missing = gaps.get(r["name"])
        if not missing or INHERITED_RUNTIME not in r:
            continue
        assert isinstance(r, dict)  # rows with an inherited test are the loader's own copies
        own = r["runtime"]
        r["runtime"] = {m: union_recipes([own.get(m, own.get("*", {})), *(b.runtime for b in missing.get(m, ()))])
                        for m in _machines(fam) if m in own or "*" in own}
        r[WIDENED] = sorted({*r.get(WIDENED, ()), *(b.name for bs in missing.values() for b in bs)})


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
    """Must the compiler say what ``name``'s flags enable?  Yes for a row that is not the built-in one and has a
    flag no built-in feature has as its own instruction-set switch (``-march=haswell``, ``-msse4``, ``/arch:AVX2``):
    the rules above read only those switches.  A built-in row states its implications itself."""
    feat, own = table.features[name], table.builtin().features.get(name)
    if own is not None and own.flags == feat.flags and own.runtime == feat.runtime:
        return False
    known = {x for b in _builtin(table.machine.family, table.machine.name, table.spec.id, table.version)
             for x in b.flags}
    return any(x not in known for x in feat.flags)


def enabled_gaps(table: Table, name: str, under_flags: Iterable[str], under_args: Iterable[str]) -> list[Feature]:
    """The built-in features whose predefined macros ``name``'s flags define (``under_flags``: the macro specs
    that hold with them) beyond the user's args (``under_args``) and which its run-time test, with its
    implications', does not check."""
    row, base = set(under_flags), set(under_args)
    have = union_recipes(table.features[n].runtime for n in table.closure([name]))
    return [b for b in table.builtin().features.values()
            if b.macros and not b.disabled and b.runtime and all(m in row for m in b.macros)
            and not all(m in base for m in b.macros) and not covers(have, b.runtime)]


def describe_enabled_gap(name: str, flags: Iterable[str], compiler: str, missing: Iterable[Feature]) -> str:
    """Why a row whose flags enable more than its run-time test checks is not built."""
    names = ", ".join(b.name for b in missing)
    return (f"{name}'s flags {' '.join(flags)} enable {names} ({compiler}'s predefined macros say), which its "
            "run-time test does not check: a CPU without them would run its code; add their checks to its "
            "'runtime', or name the instruction sets with their own switches (-mavx2 -mfma ...), which an "
            "inherited test takes on")
