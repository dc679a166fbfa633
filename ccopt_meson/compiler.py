"""Compiler identity: who the compiler is and what it targets, from its own words.

Identity comes from a predefined-macro dump (``cc -dM -E``) that the probe
stage produced; the only other input is the file system, for the resolved
compiler binaries that stand in for the compiler in the cache key.  The target architecture comes from the compiler's
macros, never from the Python running this helper, so cross compilers work.
"""

from __future__ import annotations

import os
import shutil

from ._record import TYPE_CHECKING, NamedTuple
from .tables import Machine, compiler_spec, compilers_data, machines, reference_compiler

if TYPE_CHECKING:
    from typing import Mapping, Sequence

__all__ = [
    "Compiler",
    "driver_programs",
    "parse_macro_dump",
    "identify_id",
    "id_from_program",
    "version_from_macros",
    "machine_from_macros",
    "macro_satisfied",
    "binary_identity",
    "compiler_environment",
    "program_prefix",
    "resolved_programs",
    "describe_unknown_target",
]

_DEFINE = r"^#define\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s+(.*))?$"


class Compiler(NamedTuple):
    """A compiler command and what it told us about itself."""

    command: tuple[str, ...]
    id: str
    version: str
    machine: Machine | None
    macros: Mapping[str, str]
    lang: str

    @property
    def arch(self) -> str:
        return self.machine.name if self.machine else "unknown"


def parse_macro_dump(text: str) -> dict[str, str]:
    import re  # probing only: a cache hit (binary_identity) must not pay for it

    define = re.compile(_DEFINE)
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = define.match(line.strip())
        if m:
            out[m.group(1)] = (m.group(2) or "").strip()
    return out


def identify_id(macros: Mapping[str, str]) -> str:
    """Meson's compiler id for a compiler that did not come with one."""
    for rule in compilers_data()["identify"]:
        if all(m in macros for m in rule["macros_all"]):
            return str(rule["id"])
    return reference_compiler()


def id_from_program(command: Sequence[str]) -> str | None:
    """The id a compiler's program name implies (``clang-cl``, ``cl.exe``), for a compiler given without one:
    an MSVC-style driver refuses the gnu driver's ``-dM``, so the first run must already speak its syntax."""
    import re

    names = [os.path.basename(part.replace("\\", "/")).lower().removesuffix(".exe") for part in command]
    for rule in compilers_data()["identify_program"]:
        if any(re.search(rule["name"], name) for name in names):
            return str(rule["id"])
    return None


def version_from_macros(compiler_id: str, macros: Mapping[str, str]) -> str:
    keys = compiler_spec(compiler_id).version_macros
    if keys and all(k in macros for k in keys):
        return ".".join(macros[k] for k in keys)
    return macros.get("__VERSION__", "").strip('"') or "unknown"


def machine_from_macros(macros: Mapping[str, str]) -> Machine | None:
    for m in machines():
        if m.matches(macros):
            return m
    return None


def macro_satisfied(spec: str, macros: Mapping[str, str]) -> bool:
    """``NAME`` must be defined; ``NAME>=N`` must also be numerically at least N."""
    name, sep, bound = spec.partition(">=")
    if name not in macros:
        return False
    if not sep:
        return True
    try:
        return int(macros[name].rstrip("uUlL"), 0) >= int(bound)
    except ValueError:
        return False


def program_prefix(command: Sequence[str]) -> list[str]:
    """The leading elements that are programs (a launcher such as ccache, then the compiler)."""
    progs = []
    for arg in command:
        if arg.startswith("-") or (os.path.isabs(arg) and not os.path.exists(arg)):
            break
        progs.append(arg)
    return progs or list(command[:1])


def resolved_programs(command: Sequence[str]) -> list[str]:
    """The real path of each program of ``command`` as ``PATH`` finds it now (symlinks followed,
    so an upgraded ``cc -> gcc-12 -> gcc-13`` resolves elsewhere); the name's own real path when not found."""
    out = []
    for prog in program_prefix(command):
        try:
            found = shutil.which(prog)
        except ValueError:  # a NUL in the name
            found = None
        out.append(os.path.realpath(found or prog))
    return out


def binary_identity(command: Sequence[str]) -> list[list[object]]:
    """Resolved path, size, mtime, ctime and inode of each program in the command, and for a script
    (``#!``) the sha256 of its text.

    It stands in for the compiler's version output in the cache key, because a cache hit must
    not start any process.  Symlinks are followed, so an upgraded ``cc -> gcc-12 -> gcc-13``
    changes the identity; ctime and inode change when a file is rewritten in place even with its
    old size and mtime (``cp -p``, ``rsync -a``, ``tar x``), as ccache's ``compiler_check`` default
    does by mtime and size.  A wrapper's text names the compiler it runs, so repointing it is seen;
    a wrapper that picks its compiler from a file it reads is not (``meson setup --reconfigure``).
    """
    out: list[list[object]] = []
    for real in resolved_programs(command):
        try:
            st = os.stat(real)
        except (OSError, ValueError):
            out.append([real, None])
            continue
        entry: list[object] = [real, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        script = _script_digest(real)
        if script:
            entry.append(script)
        out.append(entry)
    return out


def _script_digest(path: str) -> str | None:
    """sha256 of a ``#!`` script's text, None for anything else (a binary, an unreadable file)."""
    from . import fsio

    try:
        head = fsio.read_head(path, 2)
        if head != b"#!":
            return None
        from .digest import sha256

        text = fsio.read_head(path, fsio.LIMITS.compiler_wrapper)  # the bounded, regular-file-only read of every input
        return None if text is None else sha256(text).hexdigest()
    except OSError:
        return None


def driver_programs() -> list[list[object]]:
    """Where ``PATH`` finds the programs a driver runs (``compilers.json`` ``driver_programs``: the assembler,
    the linker) and their path, size, mtime, ctime and inode: another ``as`` first on ``PATH`` changes what
    compiles."""
    out: list[list[object]] = []
    for name in compilers_data()["driver_programs"]:
        found = shutil.which(name)
        try:  # path and stat only: a binary, whose text is not read (a hit reads nothing it can skip)
            real = os.path.realpath(found) if found else name
            st = os.stat(real)
            out.append([real, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino])
        except (OSError, ValueError):
            out.append([name, None])
    return out


def compiler_environment() -> list[tuple[str, str | None]]:
    """The environment variables compilers read for a compile (``compilers.json``), with their values."""
    return [(name, os.environ.get(name)) for name in compilers_data()["environment"]]


def describe_unknown_target(command: Sequence[str], macros: Mapping[str, str]) -> str:
    """The error for a 'compiler' whose macros name no machine of the tables (or that printed none)."""
    who = " ".join(command)
    if not macros:
        return (f"'{who}' printed no predefined macros for an empty file, so it is not a C compiler this tool "
                "can drive; pass a compiler with --cc (or set CC)")
    import re

    arch = sorted(m for m in macros if re.fullmatch(r"__[a-z0-9_]+__", m) and not m.startswith("__GNUC"))
    shown = ", ".join(arch[:6]) or ", ".join(sorted(macros)[:6])
    return (f"compiler '{who}' targets an architecture no feature table knows (its macros include {shown}); "
            "ccopt-meson supports x86, ARM, POWER, IBM Z, RISC-V and LoongArch")
