"""One ELF file's code against what it may use: an object file against its compile line's allowance, a linked
file (executable, shared library, or one taken out of a wheel or package) function by function.

In a linked file, what a function may use follows from its name and from who reaches it:
- a dispatch version (``<kernel>_<version>``, a version the file's manifest declares, GCC's clone suffixes
  such as ``.constprop.0`` or ``.lto_priv.0`` aside) may use its version's allowance, local or hidden alike;
- a function other files can reach (exported; in a Python extension module only ``PyInit_*``), the entry
  point, or one whose address is held where no sized data object is (the GOT, ``.init_array``), the baseline;
- any other function (a static helper, a hidden function, an inline copy the linker kept), what every function
  that branches to it or takes its address may (the least of them, to a fixed point).
So a static helper a version alone calls may use that version's instructions, and an inline function a
baseline caller also reaches may not.  A function nothing reaches (no call, no address taken in code or data,
not exported) cannot run: it is counted in the report, not held to a level.  Data objects are nodes too: a
pointer table reached only from a version passes that version on to the functions it holds.  A file without a
manifest is checked against a baseline the caller names, dispatch-blind: every function at that level.
"""

from __future__ import annotations

import bisect
import functools
import re

from .._record import TYPE_CHECKING, NamedTuple
from . import allow
from .decode import decoder

if TYPE_CHECKING:
    from typing import Mapping, Sequence

    from ..tables import Table
    from .allow import Allowance
    from .decode import Decoder, Scan
    from .elf import Binary, Code

__all__ = ["Finding", "FileReport", "check_object", "check_linked", "declared"]


class Finding(NamedTuple):
    function: str
    offset: int  # of its first instruction outside the allowance
    instruction: str
    needs: tuple[str, ...]  # that instruction's decoder names outside the allowance
    feature: str  # the lowest ccopt feature that carries them, or 'unknown'
    highest: str  # the same over every instruction of the function outside the allowance
    beyond: tuple[str, ...]  # the function's decoder names outside the allowance
    allowance: Allowance  # what the function may use


class FileReport(NamedTuple):
    object: str
    allowance: Allowance  # what its baseline code may use
    highest: str  # the highest ccopt feature its instructions use ('' when only the family's base)
    findings: tuple[Finding, ...]
    functions: int
    declared: tuple[str, ...] | None = None  # the baseline its manifest declares (None: no manifest)
    floor: str = ""  # the highest feature its unguarded code uses
    versions: tuple[tuple[str, int], ...] = ()  # each guarded version and its number of functions
    note: str = ""  # how it was read, when not plainly (dispatch-blind, LTO)


def _decoder(table: Table, b: Binary) -> Decoder:
    compatible = frozenset(allow.family_audit(table).get("compatible", ()))
    return _decoder_of(table.machine.family, b.machine, b.bitness, compatible, b.absolute)


@functools.cache
def _decoder_of(family: str, machine: str, bitness: int, compatible: frozenset[str], absolute: bool) -> Decoder:
    return decoder(machine, bitness, compatible, absolute)


def _finding(dec: Decoder, table: Table, code: Code, scan: Scan, may: Allowance) -> Finding | None:
    if scan.used <= may.decoded:
        return None
    first = dec.first(code.code, code.start, may.decoded)
    assert first is not None
    beyond = tuple(sorted(scan.used - may.decoded))
    return Finding(code.names[0], first.offset, first.instruction, first.needs, allow.feature_of(table, first.needs),
                   allow.feature_of(table, beyond), beyond, may)


def _highest_used(table: Table, used: set[str]) -> str:
    ref = table.reference()
    rows = [n for n, feat in ref.features.items() if used & set(feat.audit)]
    return ref.sort(rows)[-1] if rows else ""


def check_object(b: Binary, table: Table, may: Allowance, note: str = "") -> FileReport:
    """Every range of an object file against the one allowance of its compile line."""
    dec = _decoder(table, b)
    findings: list[Finding] = []
    used: set[str] = set()
    for code in b.code:
        scan = dec.scan(code.code, code.start)
        used |= scan.used
        found = _finding(dec, table, code, scan, may)
        if found is not None:
            findings.append(found)
    return FileReport(b.shown, may, _highest_used(table, used), tuple(findings),
                      sum(1 for c in b.code if not c.follows), note=note)


def declared(b: Binary) -> tuple[tuple[str, ...] | None, dict[str, tuple[str, ...]]]:
    """The file's manifest: its baseline (the names every note declares; None without a note) and each
    version's checks (the names every note naming it checks)."""
    if not b.notes:
        return None, {}
    base = [n for n in b.notes[0].baseline if all(n in note.baseline for note in b.notes)]
    versions: dict[str, tuple[str, ...]] = {}
    for note in b.notes:
        for name, checks in note.versions:
            old = versions.get(name)
            versions[name] = checks if old is None else tuple(c for c in old if c in checks)
    return tuple(base), versions


_LENGTH = re.compile(r"(?<![0-9])([1-9][0-9]*)")


def _unsuffixed(name: str) -> str:
    """A symbol without GCC's clone suffixes (``.constprop.0``, ``.lto_priv.0``, ``.cold``)."""
    return name.split(".", 1)[0] if not name.startswith(".") else name


def _identifiers(name: str) -> list[str]:
    """The identifiers a symbol name is made of: itself without GCC's clone suffixes (``.constprop.0``); for a C++
    name (Itanium mangling: each identifier is its length, then its characters), each candidate identifier too,
    so a version in a namespace or a template (``np::qsort_simd::QSort_AVX2<int>``) is found."""
    plain = _unsuffixed(name)
    out = [plain]
    if plain.startswith("_Z"):
        out += [plain[m.end():m.end() + int(m.group(1))] for m in _LENGTH.finditer(plain)]
    return out


def _version_of(name: str, suffixes: Sequence[tuple[str, str]]) -> str:
    """The version ``name`` belongs to: an identifier of it ends with ``_<version>`` (the longest that fits)."""
    for ident in _identifiers(name):
        found = next((v for suffix, v in suffixes if ident.endswith(suffix) and len(ident) > len(suffix)), "")
        if found:
            return found
    return ""


def check_linked(b: Binary, table: Table, baseline: Sequence[str], versions: dict[str, tuple[str, ...]],
                 note: str = "", contract: Sequence[str] | None = None,
                 known: Mapping[str, Allowance] | None = None) -> FileReport:
    """A linked file, function by function (module docstring): ``baseline`` and ``versions`` from its manifest,
    or the baseline the caller names and no versions (dispatch-blind).  ``contract``: the level the file must
    run on, whatever its manifest declares (code may use what both allow).  ``known``: in a build directory,
    the global functions only version objects define, with what those objects may use (a source without a
    header, compiled for one target, whose functions the project calls after a check of its own)."""
    dec = _decoder(table, b)

    def may(checks: Sequence[str], target: str) -> Allowance:
        declared = allow.for_checks(table, baseline, checks, target)
        return declared if contract is None else allow.both(declared, allow.for_checks(table, contract, checks, target))

    base = may((), "BASELINE")
    allowed = {v: may(checks, v) for v, checks in versions.items() if v != "BASELINE"}
    suffixes = sorted(((f"_{v}", v) for v in allowed), key=lambda s: -len(s[0]))
    codes = b.code
    scans = [dec.scan(c.code, c.start) for c in codes]
    module = _EXTENSION_MODULE.search(b.shown) is not None
    callers, roots = _graph(b, dec, scans, module)
    fixed: dict[int, Allowance] = {}
    guarded = [(re.compile(g["pattern"]), allow.Allowance("GUARDED", base.names, base.decoded | set(g["may"])))
               for g in allow.family_audit(table).get("guarded", ())]
    for i, c in enumerate(codes):
        version = next((v for v in map(lambda n: _version_of(n, suffixes), c.names) if v), "")
        own = next((may for pattern, may in guarded if pattern.match(c.names[0])), None)
        built = next((known[_unsuffixed(n)] for n in c.names if known and _unsuffixed(n) in known), None)
        if version:
            fixed[i] = allowed[version]
        elif built is not None:
            fixed[i] = built
        elif own is not None:  # the toolchain's own dispatch: it tests the CPU itself
            fixed[i] = own
    settled = _settle(len(callers), callers, fixed, roots, base)[:len(codes)]
    findings = [f for f in (_finding(dec, table, c, scans[i], may) for i, (c, may) in enumerate(zip(codes, settled))
                            if may is not None) if f is not None]
    unguarded = set().union(*(scans[i].used for i, may in enumerate(settled)
                              if may is not None and may.decoded <= base.decoded))
    unreached = [c.names[0] for c, may in zip(codes, settled) if may is None and not c.follows]
    if unreached:
        note = "; ".join(filter(None, [note, f"{len(unreached)} function(s) nothing in the file or outside it can "
                                             f"reach, not held to any level ({', '.join(unreached[:3])}"
                                             f"{', ...' if len(unreached) > 3 else ''})"]))
    count: dict[str, int] = {}
    for i, c in enumerate(codes):
        if not c.follows and i in fixed and fixed[i].target in allowed:
            count[fixed[i].target] = count.get(fixed[i].target, 0) + 1
    used = set().union(*(s.used for s in scans))
    return FileReport(b.shown, base, _highest_used(table, used), tuple(findings),
                      sum(1 for c in codes if not c.follows), tuple(baseline) if versions or b.notes else None,
                      _highest_used(table, unguarded), tuple(sorted(count.items())), note)


# A Python extension module is loaded by path and entered through PyInit_<name>; the functions it exports
# besides are no API (numpy's SVML kernels are exported, and called only from its AVX-512 versions); what it
# hands out as pointers (a C-API capsule's table) is reached through data.
_EXTENSION_MODULE = re.compile(r"\.(cpython-[^/]*|abi3|pypy[^/]*)\.so$")
_MODULE_ENTRY = "PyInit_"


def _graph(b: Binary, dec: Decoder, scans: Sequence[Scan], module: bool) -> tuple[list[set[int]], set[int]]:
    """Who reaches whom.  Nodes: the code ranges, the sized data objects, and the unnamed tables of pointers
    (runs of pointers no sized object holds: a compiler's static tables).  Edges: from a function to what its
    instructions reference (through a PLT stub or a GOT slot, to the function it holds), from a data object or
    table to the addresses it holds.  Roots: what other files can reach (exported; in an extension module only
    ``PyInit_*``), the entry points (DT_INIT, DT_FINI too), what .init_array and the like hold, code before any
    symbol; in an object file, also a function nothing references (not linked yet)."""
    codes, objects = b.code, b.objects
    n = len(codes)
    starts = [c.start for c in codes]
    ostarts = [o[0] for o in objects]

    def node(addr: int) -> int:
        j = bisect.bisect_right(starts, addr) - 1
        if j >= 0 and addr < codes[j].start + len(codes[j].code):
            return j
        k = bisect.bisect_right(ostarts, addr) - 1
        if k >= 0 and addr < objects[k][0] + objects[k][1]:
            return n + k
        return -1

    loose = sorted({h for h, _ in b.pointers if node(h) < 0 and not _within(h, b.got) and not _within(h, b.starts)})
    tables = _tables(loose, 8 if b.bitness == 64 else 4)
    tstarts = [t[0] for t in tables]
    m = n + len(objects)

    def table(addr: int) -> int:
        t = bisect.bisect_right(tstarts, addr) - 1
        return m + t if t >= 0 and addr < tables[t][1] else -1

    callers: list[set[int]] = [set() for _ in range(m + len(tables))]
    roots: set[int] = set()
    slots = dict(b.slots)
    for holder, addr in b.pointers:
        j = node(addr)
        if j < 0:
            continue
        k = node(holder) if not _within(holder, b.got) else -1
        if k >= n or table(holder) >= 0:
            callers[j].add(k if k >= n else table(holder))  # reached as the object or table holding it is
        elif _within(holder, b.got):
            slots[holder] = addr  # code that loads this slot reaches it
        else:
            roots.add(j)  # the loader calls it (.init_array and the like)
    through = _through_plt(b, dec)
    in_plt = [_within(c.start, b.plt) for c in codes]
    for i, scan in enumerate(scans):
        if in_plt[i]:
            continue  # a stub passes its callers on to its function (through_plt): it calls nothing itself
        for ref in scan.refs:
            j = node(through.get(ref, slots.get(ref, ref)))  # a PLT stub or a GOT slot: the function it holds
            j = j if j >= 0 else table(ref)
            if j >= 0 and j != i:
                callers[j].add(i)
    for i, c in enumerate(codes):
        if c.follows and i > 0:
            callers[i].add(i - 1)  # code after a function's end: reached from it, or not at all
        if ((c.exported and (not module or any(nm.startswith(_MODULE_ENTRY) for nm in c.names)))
                or c.start in b.entries or c.names[0].startswith("<") or (b.relocatable and not callers[i])):
            roots.add(i)
    roots.update(n + k for k, o in enumerate(objects) if o[2] and not module)
    return callers, roots


def _within(addr: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(a <= addr < a + size for a, size in spans)


def _tables(holders: Sequence[int], step: int) -> list[tuple[int, int]]:
    """Runs of pointer slots one pointer apart: (first address, end)."""
    out: list[tuple[int, int]] = []
    for h in holders:
        if out and h == out[-1][1]:
            out[-1] = (out[-1][0], h + step)
        else:
            out.append((h, h + step))
    return out


def _through_plt(b: Binary, dec: Decoder) -> dict[int, int]:
    """Each PLT stub bound to a function of this file -> that function's address: x86's stubs start with the
    jump through their GOT slot, or with ENDBR64 just before it (``-fcf-protection``: then 4 bytes in).  An
    aarch64 stub forms its slot's address with ADRP, which is not followed: calls through it stay unresolved."""
    out: dict[int, int] = {}
    for c in b.code:
        section = next(((a, n) for a, n in b.plt if a <= c.start < a + n), None)
        if section is None:
            continue
        for at, found in dec.refs(c.code, c.start):
            target = next((b.slots[r] for r in found if r in b.slots), None)
            if target is not None:
                out[at - 4 if (at - section[0]) % 16 == 4 else at] = target
    return out


def _settle(n: int, callers: list[set[int]], fixed: dict[int, Allowance], roots: set[int],
            base: Allowance) -> list[Allowance | None]:
    """Each function's allowance: fixed, or the least of its callers' (and the baseline's for a root), to the
    greatest fixed point; None for code that no root, version or data reaches (nothing can run it)."""
    may: list[Allowance | None] = [fixed.get(i) for i in range(n)]
    for i in roots:
        if i not in fixed:
            may[i] = base
    changed = True
    while changed:
        changed = False
        for i in range(n):
            if i in fixed:
                continue
            vals = [m for m in (may[r] for r in callers[i]) if m is not None]
            if i in roots:
                vals.append(base)
            if not vals:
                continue
            new = functools.reduce(allow.both, vals)
            if new != may[i]:
                may[i], changed = new, True
    return may
