"""The ISA audit's reading of object code: ELF sections and symbols, then a decoder per instruction.

The only module that imports the audit's libraries (``data/audit.json`` names them and their pins), lazily,
when an object is read: the configure-time helper never loads it.  What an instruction needs comes from the
decoder as its own names (iced-x86's ``CpuidFeature``, capstone's instruction groups); turning those names into
ccopt's features is the tables' job (``audit`` keys), not this module's.
"""

from __future__ import annotations

import functools
import importlib
import io
import os

from ._record import TYPE_CHECKING, NamedTuple
from .errors import AuditUnavailable
from .schema import read_json
from .tables import data_file

if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Mapping

    # code and its first address -> (address, the decoder's names, the instruction) per instruction
    Decode = Callable[[bytes, int], Iterator[tuple[int, tuple[str, ...], Any]]]

__all__ = ["FunctionScan", "ObjectScan", "scan", "audit_data", "requirements"]

_SHF_EXECINSTR = 0x4
_FUNCTION_TYPES = ("STT_FUNC", "STT_GNU_IFUNC")


class FunctionScan(NamedTuple):
    """One function (or a code section without function symbols) as the decoder saw it."""

    name: str
    local: bool  # a static function (or a section): its name says nothing outside its file
    used: frozenset[str]  # the decoder's names over all its instructions
    offset: int  # of the first instruction using a name outside the allowed ones (-1: none)
    instruction: str  # that instruction, in the decoder's syntax
    needs: tuple[str, ...]  # its names outside the allowed ones


class ObjectScan(NamedTuple):
    decoder: str
    functions: tuple[FunctionScan, ...]


@functools.cache
def audit_data() -> Mapping[str, Any]:
    """``data/audit.json`` (the tests check it against ``audit.schema.json``)."""
    return read_json(data_file("audit.json"))  # type: ignore[no-any-return]


def requirements() -> tuple[str, ...]:
    """The pinned requirements the audit needs: the ELF reader's and every decoder's."""
    data = audit_data()
    return (data["elf"]["requirement"], *(d["requirement"] for d in data["decoders"].values()))


def _module(reader: Mapping[str, Any]) -> Any:
    try:
        return importlib.import_module(reader["module"])
    except ImportError as exc:
        raise AuditUnavailable(f"the ISA audit needs {reader['requirement'].split('==')[0]}, which is not installed; "
                               f"install it with: python3 -m pip install '{reader['requirement']}' "
                               f"(or the package's 'audit' extra)") from exc


def _decoder_for(machine: str) -> tuple[str, int]:
    for name, dec in audit_data()["decoders"].items():
        if machine in dec["elf_machines"]:
            return name, int(dec["elf_machines"][machine])
    raise AuditUnavailable(f"no decoder of the ISA audit reads {machine} objects (data/audit.json); "
                           "only x86, x86_64 and aarch64 objects are audited")


def _code_ranges(elf: Any) -> Iterator[tuple[str, bool, bytes, int]]:
    """(function name, whether it is local, code, address of its first byte) for each sized function symbol in an
    executable section; a code section with no such symbol is one range named after the section (``<.text.x>``)."""
    sections = {i: s for i, s in enumerate(elf.iter_sections()) if s["sh_flags"] & _SHF_EXECINSTR
                and s["sh_type"] != "SHT_NOBITS"}
    covered: set[int] = set()
    symtab = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
    relocatable = elf["e_type"] == "ET_REL"
    for sym in symtab.iter_symbols() if symtab is not None else ():
        index = sym["st_shndx"]
        if sym["st_info"]["type"] not in _FUNCTION_TYPES or not isinstance(index, int) or index not in sections:
            continue
        size = sym["st_size"]
        if size <= 0:
            continue
        sec = sections[index]
        start = sym["st_value"] if relocatable else sym["st_value"] - sec["sh_addr"]
        covered.add(index)
        local = sym["st_info"]["bind"] == "STB_LOCAL"
        yield sym.name or f"<{sec.name}+0x{start:x}>", local, sec.data()[start:start + size], sym["st_value"]
    for index, sec in sections.items():
        if index not in covered and sec["sh_size"]:
            yield f"<{sec.name}>", True, sec.data(), 0 if relocatable else sec["sh_addr"]


def _iced(bitness: int, compatible: frozenset[str]) -> Decode:
    iced = _module(audit_data()["decoders"]["iced-x86"])
    names = {v: k for k, v in vars(iced.CpuidFeature).items() if k.isupper()}
    plain = {getattr(iced.Mnemonic, m) for m in compatible if hasattr(iced.Mnemonic, m)}
    memo: dict[tuple[int, ...], tuple[str, ...]] = {}

    def run(code: bytes, ip: int) -> Iterator[tuple[int, tuple[str, ...], Any]]:
        for ins in iced.Decoder(bitness, code, ip=ip):
            if ins.mnemonic in plain:
                yield ins.ip, (), ins
                continue
            ids = tuple(ins.cpuid_features())
            found = memo.get(ids)
            if found is None:
                found = memo[ids] = tuple(names[i] for i in ids)
            yield ins.ip, found, ins

    return run


def _iced_text(ins: Any) -> str:
    iced = _module(audit_data()["decoders"]["iced-x86"])
    return str(iced.Formatter(iced.FormatterSyntax.GAS).format(ins))


def _capstone(bitness: int, compatible: frozenset[str]) -> Decode:
    cs = _module(audit_data()["decoders"]["capstone"])
    md = cs.Cs(cs.CS_ARCH_AARCH64, cs.CS_MODE_ARM)  # capstone 6: LLVM's predicates (HasCRC, HasSVE, ...) as groups
    md.detail = True
    md.skipdata = True  # a literal pool or padding between functions is data, not an error

    def run(code: bytes, ip: int) -> Iterator[tuple[int, tuple[str, ...], Any]]:
        for ins in md.disasm(code, ip):
            groups = ins.groups if ins.id and ins.mnemonic.upper() not in compatible else ()
            yield ins.address, tuple(ins.group_name(g) for g in groups), ins

    return run


def _capstone_text(ins: Any) -> str:
    return f"{ins.mnemonic} {ins.op_str}".strip()


_DECODERS: Mapping[str, tuple[Callable[[int, frozenset[str]], Decode], Callable[[Any], str]]] = {
    "iced-x86": (_iced, _iced_text),
    "capstone": (_capstone, _capstone_text),
}


def _function(name: str, local: bool, code: bytes, ip: int, decode: Any, text: Callable[[Any], str],
              allowed: frozenset[str]) -> FunctionScan:
    used: set[str] = set()
    first: tuple[int, str, tuple[str, ...]] | None = None
    for at, names, ins in decode(code, ip):
        used.update(names)
        if first is None and not allowed.issuperset(names):
            first = (at, text(ins), tuple(n for n in names if n not in allowed))
    if first is None:
        return FunctionScan(name, local, frozenset(used), -1, "", ())
    return FunctionScan(name, local, frozenset(used), *first)


def scan(path: str | os.PathLike[str], raw: bytes, allowed: Callable[[str, bool], frozenset[str] | None],
         compatible: frozenset[str] = frozenset()) -> ObjectScan:
    """Every function of the ELF file ``raw`` (read from ``path``) decoded: the names each uses, and its first
    instruction that needs a name outside ``allowed(name, local)`` (None: the function is not read).
    ``compatible``: mnemonics (upper case) that need nothing, as every CPU runs them (TZCNT is BSF on a CPU
    without BMI1)."""
    elf_mod = _module(audit_data()["elf"])
    elffile = importlib.import_module(f"{elf_mod.__name__}.elf.elffile")
    try:
        elf = elffile.ELFFile(io.BytesIO(raw))
    except Exception as exc:  # pyelftools raises its own ELFError and plain struct errors alike
        raise AuditUnavailable(f"{os.fspath(path)} is not an ELF object ({exc}); the ISA audit reads ELF objects "
                               "(Linux and BSD builds), not Mach-O or COFF ones") from exc
    decoder, mode = _decoder_for(str(elf["e_machine"]))
    make, text = _DECODERS[decoder]
    decode = make(mode, compatible)
    out = []
    for name, local, code, ip in _code_ranges(elf):
        may = allowed(name, local)
        if may is not None:
            out.append(_function(name, local, code, ip, decode, text, may))
    return ObjectScan(decoder, tuple(out))
