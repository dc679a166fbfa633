"""The dispatch manifest: what a binary declares about its CPU levels, in an ELF note of its own.

Written by the generated headers (one note per dispatch source in every translation unit that includes its
``<source>.h``) and by ccopt's run-time (one note with the baseline), read by the ISA audit on whatever
ships: a linked executable, a shared library, a wheel's or a package's copy of it, without the build
directory.  A note is ``{"ccopt": 1, "baseline": "SSE SSE2", "source": "dot_dispatch", "versions":
{"FMA3__AVX2": "FMA3 AVX2", "BASELINE": ""}}``: the baseline the code was compiled for, and per dispatch
version (the functions named ``<kernel>_<version>``) the features the run-time tests before calling it.

The note lives in an allocated SHT_NOTE section (``.note.ccopt``, owner ``ccopt``): the linker concatenates
the notes of every object it takes, ``strip`` keeps them, nothing runs at load time, and the text holds no
path or time, so it is the same wherever the build ran.  ELF only: PE and Mach-O are planned
(docs/explanation/isa-audit.md).  This module is the one home of that spelling, for the writers and the
reader; standard library only (the configure-time helper imports it).
"""

from __future__ import annotations

import json

from ._record import TYPE_CHECKING, NamedTuple
from .errors import InputError

if TYPE_CHECKING:
    from typing import Iterable, Mapping

__all__ = ["SECTION", "OWNER", "NOTE_TYPE", "FORMAT", "Note", "note_text", "note_c", "parse"]

SECTION = ".note.ccopt"
OWNER = "ccopt"
NOTE_TYPE = 1  # the one kind of note the owner "ccopt" writes
FORMAT = 1  # the "ccopt" key: a reader refuses a format it does not know


class Note(NamedTuple):
    """One note as read: the declared baseline and, for a dispatch source's note, its versions' guards."""

    baseline: tuple[str, ...]
    source: str  # the dispatch source's id ('' for the run-time's note)
    versions: tuple[tuple[str, tuple[str, ...]], ...]  # (version name, the features its run-time test checks)


def note_text(baseline: Iterable[str], source: str = "", versions: Mapping[str, Iterable[str]] | None = None) -> str:
    doc: dict[str, object] = {"ccopt": FORMAT, "baseline": " ".join(baseline)}
    if source:
        doc["source"] = source
        doc["versions"] = {name: " ".join(checks) for name, checks in (versions or {}).items()}
    return json.dumps(doc, separators=(",", ":"))


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def note_c(ident: str, text: str) -> list[str]:
    """C lines defining the note ``text`` (from ``note_text``) as the object ``ident``, in its own section: name
    size, descriptor size, type, the owner NUL-padded to 4 bytes, the text with its NUL, padded to 4 with NULs
    (a C++ string initializer needs room for the NUL).  GCC and clang on ELF targets only."""
    desc_len = len(text.encode()) + 1
    owner_size = len(OWNER) + 1
    return ["#if defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))",
            f"static const struct {{ unsigned int namesz, descsz, type; char name[{(owner_size + 3) // 4 * 4}]; "
            f"char desc[{(desc_len + 3) // 4 * 4}]; }}",
            f"{ident} __attribute__((section(\"{SECTION}\"), used, aligned(4))) =",
            f"    {{{owner_size}, {desc_len}, {NOTE_TYPE}, \"{OWNER}\", {_c_string(text)}}};",
            "#endif"]


def _names(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, str):
        raise InputError(f"{what} is not a string of names")
    return tuple(value.split())


def parse(desc: bytes, where: str) -> Note:
    """One note's descriptor, checked; ``where`` names the file for the one-line error."""
    try:
        doc = json.loads(desc.rstrip(b"\0").decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{where}: its ccopt manifest note is not JSON ({exc}); rebuild it") from None
    if not isinstance(doc, dict) or doc.get("ccopt") != FORMAT:
        got = doc.get("ccopt") if isinstance(doc, dict) else doc
        raise InputError(f"{where}: its ccopt manifest note has format {got!r}, this audit reads format {FORMAT}; "
                         "use the ccopt-meson release that built it")
    versions = doc.get("versions", {})
    source = doc.get("source", "")
    if not isinstance(versions, dict) or not isinstance(source, str):
        raise InputError(f"{where}: its ccopt manifest note has no valid 'versions'; rebuild it")
    return Note(_names(doc.get("baseline", ""), f"{where}: the manifest's baseline"), source,
                tuple((str(k), _names(v, f"{where}: the manifest's version {k}")) for k, v in versions.items()))
