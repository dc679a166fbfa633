"""The ISA audit's decoders: what each instruction needs, in the decoder's own names, and what it references.

The only module that imports the audit's libraries (``data/audit.json`` names them and their pins), lazily,
when an object is read: the configure-time helper never loads it.  What an instruction needs comes from the
decoder as its own names (iced-x86's ``CpuidFeature``, capstone's instruction groups); turning those names into
ccopt's features is the tables' job (``audit`` keys), not this module's.
"""

from __future__ import annotations

import functools
import importlib

from .._record import TYPE_CHECKING, NamedTuple
from ..errors import AuditUnavailable
from ..schema import read_json
from ..tables import data_file

if TYPE_CHECKING:
    from typing import Any, Callable, Iterator, Mapping

    # code and its first address -> per instruction: its address, the decoder's names, the addresses it
    # references, the instruction
    Decode = Callable[[bytes, int], Iterator[tuple[int, tuple[str, ...], tuple[int, ...], Any]]]

__all__ = ["Scan", "First", "Decoder", "decoder", "elf_module", "audit_data", "requirements"]



class Scan(NamedTuple):
    """One range of code as the decoder saw it."""

    used: frozenset[str]  # the decoder's names over all its instructions
    refs: frozenset[int]  # the addresses its instructions branch to or load (calls, jumps, RIP-relative operands)


class First(NamedTuple):
    """A range's first instruction that needs a name outside what it may use."""

    offset: int
    instruction: str
    needs: tuple[str, ...]


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


def _iced(bitness: int, compatible: frozenset[str], absolute: bool) -> Decode:
    iced = _module(audit_data()["decoders"]["iced-x86"])
    names = {v: k for k, v in vars(iced.CpuidFeature).items() if k.isupper()}
    plain = {getattr(iced.Mnemonic, m) for m in compatible if hasattr(iced.Mnemonic, m)}
    memo: dict[tuple[int, ...], tuple[str, ...]] = {}
    ok = iced.OpKind
    near = {ok.NEAR_BRANCH16, ok.NEAR_BRANCH32, ok.NEAR_BRANCH64}
    immediate = {ok.IMMEDIATE32, ok.IMMEDIATE32TO64, ok.IMMEDIATE64}
    flows = {iced.FlowControl.CALL, iced.FlowControl.UNCONDITIONAL_BRANCH, iced.FlowControl.CONDITIONAL_BRANCH}

    def refs(ins: Any) -> tuple[int, ...]:
        """What a function's code can reach by address: branch targets, RIP-relative operands, and in a
        position-dependent file, immediates as wide as an address (its function pointers; in position-independent
        code an immediate is never an address, and a constant that looks like one would be a false reference)."""
        out: list[int] = []
        if ins.flow_control in flows and ins.op0_kind in near:
            out.append(ins.near_branch_target)
        if ins.is_ip_rel_memory_operand:
            out.append(ins.ip_rel_memory_address)
        if absolute:
            out += [ins.immediate(i) for i in range(ins.op_count) if ins.op_kind(i) in immediate]
        return tuple(out)

    def run(code: bytes, ip: int) -> Iterator[tuple[int, tuple[str, ...], tuple[int, ...], Any]]:
        for ins in iced.Decoder(bitness, code, ip=ip):
            if ins.mnemonic in plain:
                yield ins.ip, (), refs(ins), ins
                continue
            ids = tuple(ins.cpuid_features())
            found = memo.get(ids)
            if found is None:
                found = memo[ids] = tuple(names[i] for i in ids)
            yield ins.ip, found, refs(ins), ins

    return run


def _iced_text(ins: Any) -> str:
    iced = _module(audit_data()["decoders"]["iced-x86"])
    return str(iced.Formatter(iced.FormatterSyntax.GAS).format(ins))


def _capstone(bitness: int, compatible: frozenset[str], absolute: bool) -> Decode:
    cs = _module(audit_data()["decoders"]["capstone"])
    md = cs.Cs(cs.CS_ARCH_AARCH64, cs.CS_MODE_ARM)  # capstone 6: LLVM's predicates (HasCRC, HasSVE, ...) as groups
    md.detail = True
    md.skipdata = True  # a literal pool or padding between functions is data, not an error
    arm = importlib.import_module(f"{cs.__name__}.aarch64")
    imm, reg, mem = arm.AARCH64_OP_IMM, arm.AARCH64_OP_REG, arm.AARCH64_OP_MEM

    def number(ins: Any, register: int) -> str:
        """A register's number, its x and w views alike ('16'); other names as they are ('sp')."""
        return str(ins.reg_name(register)).lstrip("xw") if register else ""

    def run(code: bytes, ip: int) -> Iterator[tuple[int, tuple[str, ...], tuple[int, ...], Any]]:
        known: dict[str, int] = {}  # a register holding an address formed from ADRP -> that address
        for ins in md.disasm(code, ip):
            groups = ins.groups if ins.id and ins.mnemonic.upper() not in compatible else ()
            refs: tuple[int, ...] = ()
            ops: list[Any] = list(ins.operands) if ins.id else []
            regs = [number(ins, o.reg) if o.type == reg else "" for o in ops]
            if ins.id and (ins.group(cs.CS_GRP_JUMP) or ins.group(cs.CS_GRP_CALL) or ins.mnemonic == "adr"):
                refs = tuple(o.imm for o in ops if o.type == imm)  # branch targets, ADR's address
            elif ins.mnemonic == "adrp" and len(ops) == 2:
                known[regs[0]] = ops[1].imm
                ops = []
            elif ins.mnemonic == "add" and len(ops) == 3 and regs[1] in known and ops[2].type == imm:
                known[regs[0]] = known[regs[1]] + ops[2].imm  # ADRP+ADD (+ADD): an address formed in steps
                refs, ops = (known[regs[0]],), []
            elif ins.mnemonic == "mov" and len(ops) == 2 and regs[1] in known:
                known[regs[0]] = known[regs[1]]
                ops = []
            else:  # a load or store at a known address plus its offset (a GOT slot, a literal)
                refs = tuple(known[b] + o.mem.disp for o in ops if o.type == mem
                             for b in [number(ins, o.mem.base)] if b in known)
            if ins.id and ins.group(cs.CS_GRP_CALL):  # a call may change the caller-saved x0-x18 and x30
                for r in [r for r in known if not r.isdigit() or int(r) < 19 or r == "30"]:
                    del known[r]
            elif ops and not ins.mnemonic.startswith(_NO_DESTINATION):
                pair = ins.mnemonic.startswith(("ldp", "ldnp", "ldaxp", "ldxp"))
                for r in regs[:2] if pair else regs[:1]:
                    known.pop(r, None)  # the register now holds something else
            yield ins.address, tuple(ins.group_name(g) for g in groups), refs, ins

    return run


# aarch64 instructions whose first operand is read, not written
_NO_DESTINATION = ("st", "cmp", "cmn", "tst", "b", "cb", "tb", "prfm", "ret", "br", "blr", "fcmp", "ccmp")


def _capstone_text(ins: Any) -> str:
    return f"{ins.mnemonic} {ins.op_str}".strip()


_DECODERS: Mapping[str, tuple[Callable[[int, frozenset[str], bool], Decode], Callable[[Any], str]]] = {
    "iced-x86": (_iced, _iced_text),
    "capstone": (_capstone, _capstone_text),
}


def decoder(machine: str, bitness: int, compatible: frozenset[str], absolute: bool = False) -> Decoder:
    """The decoder of the family of an ELF e_machine (``AuditUnavailable`` when none is pinned); ``absolute``:
    for a position-dependent file, whose code holds addresses as immediates."""
    name, mode = _decoder_for(machine)
    make, text = _DECODERS[name]
    return Decoder(name, make(mode, compatible, absolute), text)


class Decoder(NamedTuple):
    name: str
    run: Decode
    text: Callable[[Any], str]

    def scan(self, code: bytes, ip: int) -> Scan:
        used: set[str] = set()
        refs: set[int] = set()
        for _, names, found, _ins in self.run(code, ip):
            used.update(names)
            refs.update(found)
        return Scan(frozenset(used), frozenset(refs))

    def refs(self, code: bytes, ip: int) -> list[tuple[int, tuple[int, ...]]]:
        """Each instruction's address and what it references."""
        return [(at, found) for at, _, found, _ins in self.run(code, ip) if found]

    def first(self, code: bytes, ip: int, allowed: frozenset[str]) -> First | None:
        for at, names, _, ins in self.run(code, ip):
            if not allowed.issuperset(names):
                return First(at, self.text(ins), tuple(n for n in names if n not in allowed))
        return None


def elf_module() -> Any:
    """pyelftools' ``elf.elffile`` module (``AuditUnavailable`` when it is not installed)."""
    elf_mod = _module(audit_data()["elf"])
    return importlib.import_module(f"{elf_mod.__name__}.elf.elffile")
