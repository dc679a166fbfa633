"""What the audit reads of one ELF file: its machine, its code cut into functions, its manifest notes, and the
addresses its data holds (function pointers).  pyelftools reads the headers and tables; nothing here decodes
an instruction (``decode``) or decides what a function may use (``allow``, ``linked``).

Every byte of an executable section is in one range: a range starts at each symbol that names code (a
function, or a label without a type, as assembly leaves them), and code after a sized function's end, or
before any symbol, belongs to the nearest symbol before it (or to the section).  Data marked as data (an
object symbol, aarch64's ``$d`` mapping symbol) is not decoded.
"""

from __future__ import annotations

import io
import struct

from .. import manifest
from .._record import TYPE_CHECKING, NamedTuple
from ..errors import InputError
from .decode import audit_data, elf_module

if TYPE_CHECKING:
    from typing import Any, Iterator

__all__ = ["Code", "Binary", "read", "is_elf", "lto_kind"]

_SHF_ALLOC, _SHF_EXECINSTR = 0x2, 0x4
_CODE_TYPES = ("STT_FUNC", "STT_GNU_IFUNC", "STT_NOTYPE")
_RELATIVE = {"EM_X86_64": 8, "EM_386": 8, "EM_AARCH64": 1027}  # R_*_RELATIVE: the addend is an address
_SLOTS = {"EM_X86_64": (6, 7), "EM_386": (6, 7), "EM_AARCH64": (1025, 1026)}  # R_*_GLOB_DAT, R_*_JUMP_SLOT


class Code(NamedTuple):
    """One range of code: a function (several names when aliases start it), or what follows one."""

    names: tuple[str, ...]  # its symbols' names (the first is shown); a section's range: '<.text>'
    local: bool  # no symbol of it is visible outside the file
    exported: bool  # a symbol of it is in the dynamic symbol table (or global in an object file)
    start: int  # its address (an object file: its offset in the section)
    code: bytes
    follows: bool  # code after a sized function's end or before any symbol, attributed to the one before


class Binary(NamedTuple):
    shown: str
    machine: str  # e_machine, as pyelftools spells it (EM_X86_64)
    bitness: int
    relocatable: bool
    entries: tuple[int, ...]  # where the loader enters it: e_entry, DT_INIT, DT_FINI
    code: tuple[Code, ...]
    notes: tuple[manifest.Note, ...]
    pointers: tuple[tuple[int, int], ...]  # (where data holds an address, that address)
    objects: tuple[tuple[int, int, bool], ...]  # sized data symbols: (address, size, exported)
    lto: bool  # GCC's intermediate language, no machine code of its own (a slim LTO object)
    slots: dict[int, int]  # a GOT slot the dynamic linker fills with a function of this file -> its address
    plt: tuple[tuple[int, int], ...]  # the procedure linkage table's sections: (address, size)
    absolute: bool  # position-dependent (an ET_EXEC executable): its code may hold addresses as immediates
    starts: tuple[tuple[int, int], ...]  # what the loader calls through: .init_array, .fini_array, .preinit_array
    got: tuple[tuple[int, int], ...]  # the global offset table: code loads a pointer from its slot


def is_elf(head: bytes) -> bool:
    return head[:4] == b"\x7fELF"


def lto_kind(head: bytes) -> str:
    """'llvm' for LLVM bitcode (clang's LTO objects), else ''."""
    return "llvm" if head[:4] in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b") else ""


def _symbols(elf: Any) -> list[Any]:
    syms = []
    for name in (".symtab", ".dynsym"):
        sec = elf.get_section_by_name(name)
        if sec is not None:
            syms += [(name, s) for s in sec.iter_symbols()]
    return syms


def _exported(elf: Any, syms: list[Any]) -> set[str]:
    """Names another file can bind to: defined in the dynamic symbol table; in an object file, every global
    symbol (a hidden one too: the other objects of the same link bind to it)."""
    out = set()
    relocatable = elf["e_type"] == "ET_REL"
    for table, s in syms:
        visible = s["st_other"]["visibility"] in ("STV_DEFAULT", "STV_PROTECTED") or relocatable
        if (s["st_info"]["bind"] != "STB_LOCAL" and visible and s["st_shndx"] != "SHN_UNDEF"
                and (table == ".dynsym" or relocatable)):
            out.add(s.name)
    return out


def _ranges(elf: Any, syms: list[Any], exported: set[str]) -> Iterator[Code]:
    relocatable = elf["e_type"] == "ET_REL"
    sections = {i: s for i, s in enumerate(elf.iter_sections())
                if s["sh_flags"] & _SHF_EXECINSTR and s["sh_type"] != "SHT_NOBITS" and s["sh_size"]}
    marks: dict[int, dict[int, list[Any]]] = {i: {} for i in sections}
    ends: dict[int, set[int]] = {i: set() for i in sections}
    for _, s in syms:
        index = s["st_shndx"]
        if not isinstance(index, int) or index not in sections:
            continue
        start = s["st_value"] - (0 if relocatable else sections[index]["sh_addr"])
        marks[index].setdefault(start, []).append(s)
        if s["st_size"] > 0:
            ends[index].add(start + s["st_size"])
    for index, sec in sections.items():
        yield from _section_ranges(sec, marks[index], ends[index], exported, relocatable)


def _kind(group: list[Any]) -> str:
    """What the symbols at one address say is there: 'code', 'data', or '' (nothing: a file or section symbol)."""
    kinds = {s["st_info"]["type"] for s in group}
    names = {s.name for s in group}
    if "$d" in names or any(n.startswith("$d.") for n in names) or "STT_OBJECT" in kinds:
        return "data"
    if "$x" in names or any(n.startswith("$x.") for n in names):
        return "code" if kinds & set(_CODE_TYPES) else "mode"
    return "code" if any(s["st_info"]["type"] in _CODE_TYPES and s.name for s in group) else ""


def _section_ranges(sec: Any, marks: dict[int, list[Any]], ends: set[int], exported: set[str],
                    relocatable: bool) -> Iterator[Code]:
    data = sec.data()
    base = 0 if relocatable else sec["sh_addr"]
    cuts = sorted({0, len(data), *(a for a in marks if 0 <= a < len(data)), *(e for e in ends if 0 < e < len(data))})
    owner: tuple[tuple[str, ...], bool, bool] = ((f"<{sec.name}>",), True, False)
    is_data = False
    for a, b in zip(cuts, cuts[1:]):
        group = marks.get(a, [])
        kind = _kind(group) if group else ""
        if kind == "data":
            is_data = True
        elif kind in ("code", "mode"):
            is_data = False
        named = [s for s in group if s["st_info"]["type"] in _CODE_TYPES and s.name and not s.name.startswith("$")]
        follows = not named
        if follows and a in ends and not owner[0][0].startswith("<"):  # past a sized function's end: no symbol
            owner = ((f"<code after {owner[0][0]}>",), True, False)
        if named:
            named.sort(key=lambda s: (s["st_info"]["bind"] == "STB_LOCAL", s["st_info"]["type"] != "STT_FUNC"))
            names = tuple(dict.fromkeys(s.name for s in named))
            local = all(s["st_info"]["bind"] == "STB_LOCAL" or s["st_other"]["visibility"] in ("STV_HIDDEN",
                        "STV_INTERNAL") for s in named)
            owner = (names, local, any(n in exported for n in names))
        if not is_data:
            yield Code(owner[0], owner[1], owner[2], base + a, data[a:b], follows)


def _notes(elf: Any, shown: str) -> Iterator[manifest.Note]:
    fmt = "<III" if elf.little_endian else ">III"
    for sec in elf.iter_sections():
        if sec.name != manifest.SECTION:
            continue
        raw, at = sec.data(), 0
        while at + 12 <= len(raw):
            namesz, descsz, kind = struct.unpack_from(fmt, raw, at)
            name_end = at + 12 + namesz
            desc_at = at + 12 + (namesz + 3) // 4 * 4
            if desc_at + descsz > len(raw):
                raise InputError(f"{shown}: its {manifest.SECTION} section is truncated; rebuild it")
            if raw[at + 12:name_end].rstrip(b"\0") == manifest.OWNER.encode() and kind == manifest.NOTE_TYPE:
                yield manifest.parse(raw[desc_at:desc_at + descsz], shown)
            at = desc_at + (descsz + 3) // 4 * 4


def _pointers(elf: Any) -> tuple[tuple[int, int], ...]:
    """Addresses stored in data, with where: in a position-independent file (a shared library, a PIE), what its
    relocations write (relative ones' addends, absolute ones' symbols); in a position-dependent executable, also
    every aligned pointer-sized word of the allocated sections that are not code (a pointer is a plain word)."""
    if elf["e_type"] == "ET_REL":
        return ()
    size = 8 if elf.elfclass == 64 else 4
    fmt = ("<" if elf.little_endian else ">") + ("Q" if size == 8 else "I")
    out: list[tuple[int, int]] = []
    relative = _RELATIVE.get(elf["e_machine"])
    slots = _SLOTS.get(elf["e_machine"], ())
    for sec in elf.iter_sections():
        flags = sec["sh_flags"]
        if (elf["e_type"] == "ET_EXEC" and flags & _SHF_ALLOC and not flags & _SHF_EXECINSTR
                and sec["sh_type"] not in ("SHT_NOBITS", "SHT_NOTE")):
            raw = sec.data()
            words = struct.iter_unpack(fmt, raw[:len(raw) // size * size])
            out += [(sec["sh_addr"] + k * size, v) for k, (v,) in enumerate(words)]
        if sec["sh_type"] != "SHT_RELA" or relative is None:
            continue
        symtab = elf.get_section(sec["sh_link"]) if sec["sh_link"] else None
        for r in sec.iter_relocations():
            kind = r["r_info_type"]
            if kind == relative:
                out.append((r["r_offset"], r["r_addend"]))
            elif kind not in slots and r["r_info_sym"] and symtab is not None:
                sym = symtab.get_symbol(r["r_info_sym"])
                if sym["st_shndx"] != "SHN_UNDEF":
                    out.append((r["r_offset"], sym["st_value"] + r["r_addend"]))
    return tuple(out)


def _objects(elf: Any, syms: list[Any], exported: set[str]) -> tuple[tuple[int, int, bool], ...]:
    """The sized data symbols of the allocated sections that are not code: (address, size, exported)."""
    if elf["e_type"] == "ET_REL":
        return ()
    data = {i for i, s in enumerate(elf.iter_sections())
            if s["sh_flags"] & _SHF_ALLOC and not s["sh_flags"] & _SHF_EXECINSTR}
    found = {(s["st_value"], s["st_size"], s.name in exported) for _, s in syms
             if s["st_info"]["type"] in ("STT_OBJECT", "STT_TLS") and s["st_size"] > 0
             and isinstance(s["st_shndx"], int) and s["st_shndx"] in data}
    return tuple(sorted(found))


def _slots(elf: Any) -> dict[int, int]:
    """The GOT slots bound to a function this file defines (a call through the PLT or the GOT reaches it, unless
    another file interposes one of the same name)."""
    kinds = _SLOTS.get(elf["e_machine"])
    out: dict[int, int] = {}
    if kinds is None or elf["e_type"] == "ET_REL":
        return out
    for sec in elf.iter_sections():
        if sec["sh_type"] not in ("SHT_RELA", "SHT_REL") or not sec.name.startswith((".rela", ".rel")):
            continue
        symtab = elf.get_section(sec["sh_link"]) if sec["sh_link"] else None
        for r in sec.iter_relocations():
            if r["r_info_type"] in kinds and symtab is not None and r["r_info_sym"]:
                sym = symtab.get_symbol(r["r_info_sym"])
                if sym["st_shndx"] != "SHN_UNDEF" and sym["st_value"]:
                    out[r["r_offset"]] = sym["st_value"]
    return out


def _entries(elf: Any) -> tuple[int, ...]:
    """The entry point and the dynamic section's DT_INIT/DT_FINI (init arrays are pointers in data)."""
    out = [elf["e_entry"]] if elf["e_entry"] else []
    dynamic = elf.get_section_by_name(".dynamic")
    for tag in dynamic.iter_tags() if dynamic is not None and hasattr(dynamic, "iter_tags") else ():
        if tag.entry.d_tag in ("DT_INIT", "DT_FINI"):
            out.append(tag.entry.d_val)
    return tuple(out)


_INIT_ARRAYS = (".init_array", ".fini_array", ".preinit_array")


def _spans(elf: Any, names: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    """(address, size) of the sections of those names (and their suffixed forms: .got.plt, .init_array.00100)."""
    return tuple((sec["sh_addr"], sec["sh_size"]) for sec in elf.iter_sections()
                 if sec.name.startswith(names) and sec["sh_addr"])


def read(shown: str, raw: bytes) -> Binary:
    """One ELF file; anything pyelftools cannot read is one error naming the file (exit 2)."""
    elffile = elf_module()
    try:
        elf = elffile.ELFFile(io.BytesIO(raw))
        syms = _symbols(elf)
        exported = _exported(elf, syms)
        names = {s.name for _, s in syms}
        lto = any(s.name.startswith(".gnu.lto_") for s in elf.iter_sections()) and "__gnu_lto_slim" in names
        code = tuple(_ranges(elf, syms, exported)) if not lto else ()
        notes = tuple(_notes(elf, shown))
        pointers, objects = _pointers(elf), _objects(elf, syms, exported)
        machine, bitness = str(elf["e_machine"]), elf.elfclass
        plt = tuple((sec["sh_addr"], sec["sh_size"]) for sec in elf.iter_sections() if sec.name.startswith(".plt"))
        return Binary(shown, machine, bitness, elf["e_type"] == "ET_REL", _entries(elf), code, notes, pointers,
                      objects, lto,
                      _slots(elf), plt, elf["e_type"] == "ET_EXEC", _spans(elf, _INIT_ARRAYS), _spans(elf, (".got",)))
    except InputError:
        raise
    except Exception as exc:  # pyelftools raises its own ELFError, struct.error and others on damaged input
        raise InputError(f"{shown}: cannot be read as ELF ({type(exc).__name__}: {exc}); the audit does not pass "
                         "what it cannot read: rebuild it, or remove it from the build") from None


def machine_name(binary: Binary) -> str:
    """The tables' machine of the file, or '' when none is known."""
    return str(audit_data().get("machines", {}).get(binary.machine, ""))
