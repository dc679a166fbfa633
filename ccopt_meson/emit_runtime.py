"""Generate ``runtime/ccopt_cpu_table.h``, the data the C runtime library walks.

The header has two parts.  The public part (always visible) is one enum of
feature ids covering every family, numbered in family order and then in
interest order, so ``CCOPT_CPU_HAVE(AVX2)`` works in any translation unit.  The
data part, compiled only where ``CCOPT_CPU_TABLE_DATA`` is defined (that is,
in ``ccopt_cpu.c``), holds the names and, for the one machine the compiler
targets, the detection recipe of each feature and the transitive closure of
its implications.  The C code never names a feature: it walks these arrays.

Nothing is checked in: ``meson.build``'s ``configure`` run writes the header
into the build directory (``write_table``), so a feature added to the tables is
detected with no manual step.  Builds without Meson generate it with
``python -m ccopt_meson.emit_runtime > ccopt_cpu_table.h`` beside their include path.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from . import schema
from .digest import data_digest, provenance
from .errors import TableError
from .tables import Machine, Project, Table, families, machines, macro_name, reference_compiler, table_for
from .version import __version__

__all__ = ["HEADER_NAME", "FEATURE_ID", "FEATURE_BASE", "runtime_table_header", "feature_ids", "write_table", "main"]

HEADER_NAME = "ccopt_cpu_table.h"
# Runtime implications are hardware facts: the reference compiler's table (compilers.json) states
# them without the per-compiler flag bundling (MSVC's /arch:AVX2 makes FMA3 imply AVX2, say).
# What a recipe may hold, its value ranges included, is the schema's 'runtime_recipe' (data/schema.json), which
# every recipe is checked against before it is written; the table's C types hold every value it accepts
# (tests/test_runtime.py compiles its bounds).  The registers, in the schema's order, are numbered as
# ccopt_cpu.c's cpuid results are (0 eax ... 3 edx).
_RECIPE = "runtime_recipe"
_REGS: tuple[str, ...] = tuple(
    schema.schema_file("schema.json")["definitions"][_RECIPE]["properties"]["cpuid"]["items"]["prefixItems"][2]["enum"])
_METHODS = ("cpuid", "auxv", "sysctl", "win_pf", "xcomp_perm")
# Microarchitecture levels (x86-64-v2 ...) are ordinary features named <ARCH>_V<n>.
_LEVEL = re.compile(r"_V[0-9]+$")
# The C names made from a feature name live in namespaces of their own, which no fixed identifier of the
# run-time enters (tests/test_runtime.py reads every one): CCOPT_CPU_F_API is the feature API, and
# CCOPT_CPU_API stays the run-time's declaration knob whatever a features file names.  ccopt_cpu.h's
# CCOPT_CPU_ID and CCOPT_CPU_HAVE spell FEATURE_ID too.
FEATURE_ID = "CCOPT_CPU_F_{}"
FEATURE_BASE = "CCOPT_CPU_BASE_F_{}"


@dataclass(frozen=True)
class _CpuidBit:
    leaf: int
    subleaf: int
    reg: int
    bit: int


def _first_tables(project: Project | None) -> dict[str, Table]:
    """One table per family (feature names and order do not vary by machine)."""
    out: dict[str, Table] = {}
    for m in machines():
        out.setdefault(m.family, table_for(m.name, reference_compiler(), project))
    return out


def feature_ids(project: Project | None = None) -> dict[str, int]:
    """Feature name -> enum value: family order, then interest order."""
    tables = _first_tables(project)
    # a name several families share (AES) has one id: a build targets one machine only
    names = dict.fromkeys(n for fam in families() if fam in tables for n in tables[fam].features)
    return {n: i for i, n in enumerate(names)}


def _c_string(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.\-]*", text):
        raise TableError(f"refusing to emit {text!r} as a C string literal")
    return f'"{text}"'


def _machine_condition(m: Machine) -> str:
    parts: list[str] = []
    if m.macros_all:
        parts.append(" && ".join(f"defined({x})" for x in m.macros_all))
    if m.macros_any:
        parts.append("(" + " || ".join(f"defined({x})" for x in m.macros_any) + ")")
    return " && ".join(parts) if parts else "0"


def _cpuid_bits(recipe: Mapping[str, Any]) -> list[_CpuidBit]:
    return [_CpuidBit(leaf, subleaf, _REGS.index(reg), bit) for leaf, subleaf, reg, bit in recipe.get("cpuid", ())]


def _mask(bits: Iterable[int]) -> int:
    out = 0
    for b in bits:
        out |= 1 << b
    return out


class _Lines:
    """The header's lines, in order."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)


def _emit_enum(out: _Lines, ids: Mapping[str, int], project: Project | None) -> None:
    tables = _first_tables(project)
    done: list[str] = []
    out.add(
        "/* Feature ids: one enum for every family, in family order, then interest order. */",
        "enum ccopt_cpu_feature_id {",
    )
    for fam in families():
        if fam not in tables:
            continue
        out.add(f"    /* {fam} */")
        for name in tables[fam].features:
            if ids[name] >= len(done):  # not yet emitted by an earlier family
                out.add(f"    {FEATURE_ID.format(name)} = {ids[name]},")
                done.append(name)
            else:
                out.add(f"    /* {FEATURE_ID.format(name)} = {ids[name]}, above */")
    out.add(f"    CCOPT_CPU_MAX_FEATURE = {len(ids)}", "};")


def _emit_common_data(out: _Lines, ids: Mapping[str, int], have: Callable[[str], str]) -> None:
    text_max = sum(len(n) + 1 for n in ids) + 1
    out.add(
        "/* Room for every name, each followed by one separator, plus the NUL. */",
        f"#define CCOPT_CPU_NAMES_TEXT_MAX {text_max}",
        "",
        "static const char *const ccopt_cpu_names[CCOPT_CPU_MAX_FEATURE] = {",
    )
    out.add(*(f"    {_c_string(n)}," for n in ids))
    out.add("};", "", f"/* 1 when the build's baseline includes the feature (-D{have('<NAME>')}). */")
    for name in ids:
        base = FEATURE_BASE.format(name)
        out.add(f"#ifdef {have(name)}", f"#define {base} 1", "#else", f"#define {base} 0", "#endif")
    out.add(
        "",
        "/* One (leaf, subleaf) pair that cpuid is asked for. */",
        "typedef struct ccopt_cpu_leaf {",
        "    unsigned long leaf, subleaf;",
        "} ccopt_cpu_leaf;",
        "",
        "/* One bit that must be set: leaf index into ccopt_cpu_leaves, register (0 eax, 1 ebx, 2 ecx, 3 edx). */",
        "typedef struct ccopt_cpu_cpuid_bit {",
        "    unsigned char leaf, reg, bit;",
        "} ccopt_cpu_cpuid_bit;",
        "",
        "/* How one feature is detected on this machine; absent methods are zero.  The",
        " * initializers below are positional (designated ones are not C++ before C++20). */",
        "typedef struct ccopt_cpu_recipe {",
        "    int id;                           /* CCOPT_CPU_F_<NAME> */",
        "    unsigned char baseline;           /* its HAVE macro was defined at build time */",
        "    unsigned char always;             /* part of the architecture */",
        "    unsigned char cpuid;              /* detectable with cpuid: all cpuid bits set and XCR0 ok */",
        "    unsigned char auxv;               /* detectable with AT_HWCAP/AT_HWCAP2 */",
        "    int cpuid_first, cpuid_count;     /* slice of ccopt_cpu_cpuid_bits */",
        "    unsigned long xcr0;               /* XCR0 state bits the OS must enable */",
        "    unsigned long long hwcap, hwcap2; /* AT_HWCAP/AT_HWCAP2 bits that must all be set */",
        "    const char *sysctl;               /* macOS sysctlbyname() name, or NULL */",
        "    int win_pf;                       /* Windows IsProcessorFeaturePresent() id, or 0 */",
        "    int xcomp_perm;                   /* Linux XSTATE component to request (arch_prctl), or 0 */",
        "    int implies_first, implies_count; /* slice of ccopt_cpu_implies: the closure */",
        "} ccopt_cpu_recipe;",
    )


@dataclass
class _MachineData:
    """The arrays of one machine, as C initializer rows."""

    name: str
    uses: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(_METHODS, False))
    leaves: list[tuple[int, int]] = field(default_factory=list)
    bits: list[str] = field(default_factory=list)
    implies: list[str] = field(default_factory=list)
    n_implies: int = 0
    recipes: list[str] = field(default_factory=list)
    levels: list[str] = field(default_factory=list)

    def add_feature(self, name: str, runtime: Mapping[str, Any], closure: Sequence[str], level: bool) -> None:
        rt = runtime
        schema.check(rt, "schema.json", _RECIPE, f"{self.name}: {name}: runtime")
        cpuid_bits = _cpuid_bits(rt)
        for b in cpuid_bits:
            if (b.leaf, b.subleaf) not in self.leaves:
                self.leaves.append((b.leaf, b.subleaf))
        hwcap = _mask(rt.get("hwcap", ()))
        hwcap2 = _mask(rt.get("hwcap2", ()))
        win_pf = rt.get("win_pf", 0)
        used = {"cpuid": "cpuid" in rt, "auxv": "hwcap" in rt or "hwcap2" in rt,
                "sysctl": "sysctl" in rt, "win_pf": "win_pf" in rt, "xcomp_perm": "xcomp_perm" in rt}
        xcomp = rt.get("xcomp_perm", 0)
        for key, flag in used.items():
            self.uses[key] = self.uses[key] or flag
        sysctl = _c_string(rt["sysctl"]) if "sysctl" in rt else "NULL"
        row = (f"{FEATURE_ID.format(name)}, {FEATURE_BASE.format(name)}, {int(bool(rt.get('always')))}, "
               f"{int(used['cpuid'])}, {int(used['auxv'])}, {len(self.bits)}, {len(cpuid_bits)}, "
               f"0x{rt.get('xcr0', 0):x}UL, 0x{hwcap:x}ULL, 0x{hwcap2:x}ULL, {sysctl}, {win_pf}, {xcomp}, "
               f"{self.n_implies}, {len(closure)}")
        notes = [f"{key} {_bit_list(rt[key])}" for key in ("hwcap", "hwcap2") if rt.get(key)]
        self.recipes.append(f"{{{row}}}, /* {name}{': ' + '; '.join(notes) if notes else ''} */")
        self.bits.extend(f"{{{self.leaves.index((b.leaf, b.subleaf))}, {b.reg}, {b.bit}}}, /* {name}: "
                         f"leaf 0x{b.leaf:x}.{b.subleaf} {_REGS[b.reg]} bit {b.bit} */" for b in cpuid_bits)
        if closure:
            text = f"/* {name} */ " + " ".join(f"{FEATURE_ID.format(n)}," for n in closure)
            self.implies.extend(textwrap.wrap(text, 100, subsequent_indent="    ", break_on_hyphens=False))
            self.n_implies += len(closure)
        if level:
            self.levels.append(f"{FEATURE_ID.format(name)},")


def _bit_list(bits: Iterable[int]) -> str:
    ordered = sorted(set(bits))
    return ("bit " if len(ordered) == 1 else "bits ") + ", ".join(map(str, ordered))


def _machine_data(m: Machine, ids: Mapping[str, int], project: Project | None) -> _MachineData:
    table = table_for(m.name, reference_compiler(), project)
    data = _MachineData(m.name)
    # A family with named levels (x86-64-v2..) reports the highest of those; any other family
    # reports its highest usable feature in interest order (aarch64 ASIMDDP, ppc64le VSX3, ...).
    named = any(_LEVEL.search(n) for n in table.features)
    for name, feat in table.features.items():
        closure = sorted(table.closure([name]) - {name}, key=ids.__getitem__)
        # x86-64-v2.. exist only for x86_64: on i386 the tables disable them, and no level is named.
        level = (bool(_LEVEL.search(name)) or not named) and feat.disabled is None
        data.add_feature(name, feat.runtime, closure, level)
    return data


def _emit_machine(out: _Lines, data: _MachineData) -> None:
    out.add(f"#define CCOPT_CPU_MACHINE {_c_string(data.name)}")
    for key, used in data.uses.items():
        out.add(f"#define CCOPT_CPU_USES_{key.upper()} {int(used)}")
    _emit_array(out, "ccopt_cpu_leaf", "ccopt_cpu_leaves", "CCOPT_CPU_NLEAVES",
                [f"{{0x{leaf:x}UL, {sub}UL}}," for leaf, sub in data.leaves], "{0UL, 0UL},")
    _emit_array(out, "ccopt_cpu_cpuid_bit", "ccopt_cpu_cpuid_bits", "CCOPT_CPU_NCPUID_BITS", data.bits,
                "{0, 0, 0},")
    _emit_array(out, "int", "ccopt_cpu_implies", "CCOPT_CPU_NIMPLIES", data.implies, "0,", data.n_implies)
    if data.recipes:
        out.add("/* id, baseline, always, cpuid, auxv, cpuid_first, cpuid_count, xcr0, hwcap, hwcap2, sysctl,",
                " * win_pf, xcomp_perm, implies_first, implies_count */")
    _emit_array(out, "ccopt_cpu_recipe", "ccopt_cpu_recipes", "CCOPT_CPU_NRECIPES", data.recipes,
                "{0, 0, 0, 0, 0, 0, 0, 0x0UL, 0x0ULL, 0x0ULL, NULL, 0, 0, 0, 0},")
    _emit_array(out, "int", "ccopt_cpu_levels", "CCOPT_CPU_NLEVELS", data.levels, "0,")


def _emit_array(out: _Lines, ctype: str, name: str, count: str, rows: Sequence[str], filler: str,
                n: int | None = None) -> None:
    """A static array plus its element count; C forbids empty arrays, so a filler row stands in."""
    out.add(f"#define {count} {len(rows) if n is None else n}", f"static const {ctype} {name}[] = {{")
    out.add(*(f"    {r}" for r in rows) if rows else (f"    {filler} /* unused: {count} is 0 */",))
    out.add("};")


def _emit_version(out: _Lines) -> None:
    """The release whose macros and headers the build uses: consumers test it with #if (CHANGELOG.md)."""
    parts = __version__.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise TableError(f"the package version {__version__!r} is not MAJOR.MINOR.PATCH")
    out.add("/* The ccopt-meson release that generated this build's headers (CHANGELOG.md says what changed). */")
    for name, part in zip(("MAJOR", "MINOR", "PATCH"), parts):
        out.add(f"#define CCOPT_VERSION_{name} {int(part)}")
    out.add(f'#define CCOPT_VERSION "{__version__}"', "")


def runtime_table_header(digest: str | None = None, project: Project | None = None,
                         macros: tuple[str | None, str] | None = None) -> str:
    """The text of ``ccopt_cpu_table.h`` for the tables and the project's features: deterministic,
    no paths, no timestamps.  ``digest``: their ``data_digest`` when the caller has it already; ``macros``:
    the build's (prefix, header style), whose ``have`` macro says a feature is in the baseline.
    """
    prefix, style = macros or (None, "ccopt")

    def have(name: str) -> str:
        return macro_name("have", prefix, style, name=name)

    ids = feature_ids(project)
    out = _Lines()
    out.add(
        "/* ccopt_cpu_table.h: CPU feature ids, names and runtime detection recipes.",
        " *",
        " * Generated by `python -m ccopt_meson.emit_runtime` from ccopt_meson/data/features/<family>.json.",
        f" * {provenance(digest or data_digest(project))}",
        " * Do not edit: change the tables and regenerate.  Include ccopt_cpu.h instead of this file.",
        " */",
        "#ifndef CCOPT_CPU_TABLE_H",
        "#define CCOPT_CPU_TABLE_H",
        "",
    )
    _emit_version(out)
    _emit_enum(out, ids, project)
    out.add(
        "",
        "#endif /* CCOPT_CPU_TABLE_H */",
        "",
        "/* The data below is for ccopt_cpu.c only, which defines CCOPT_CPU_TABLE_DATA. */",
        "#if defined(CCOPT_CPU_TABLE_DATA) && !defined(CCOPT_CPU_TABLE_DATA_H)",
        "#define CCOPT_CPU_TABLE_DATA_H",
        "",
    )
    _emit_common_data(out, ids, have)
    keyword = "#if"
    for m in machines():
        out.add("", f"{keyword} {_machine_condition(m)} /* {m.name} */")
        _emit_machine(out, _machine_data(m, ids, project))
        keyword = "#elif"
    out.add("", "#else /* any other machine: nothing is detected */")
    _emit_machine(out, _MachineData("unknown"))
    out.add("#endif", "", "#endif /* CCOPT_CPU_TABLE_DATA */")
    return "\n".join(out.lines) + "\n"


def write_table(directory: str | os.PathLike[str], digest: str | None = None, project: Project | None = None,
                macros: tuple[str | None, str] | None = None) -> bool:
    """Write ``ccopt_cpu_table.h`` into ``directory``; False when it is already the current tables'."""
    from .fsio import atomic_write

    return atomic_write(os.path.join(directory, HEADER_NAME), runtime_table_header(digest, project, macros))


def main(argv: Sequence[str] | None = None) -> int:
    """Print the header on stdout (``python -m ccopt_meson.emit_runtime > ccopt_cpu_table.h``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args:
        print("usage: python -m ccopt_meson.emit_runtime > ccopt_cpu_table.h", file=sys.stderr)
        return 2
    text = runtime_table_header()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:  # bytes: no CRLF translation on Windows
        buffer.write(text.encode("ascii"))
        buffer.flush()
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
