"""The audit of a Meson build directory: what each object may use is read, not re-derived.

The build's detection (its feature cache, ``cache.find``), Meson's introspection for each target's objects and
compile parameters, and the version define ``targets`` gave a dispatch version (``data/macros.json``'s
``target`` spelling) say what an object may use.  Objects without machine code (LTO's intermediate language:
GCC's slim objects, clang's bitcode) are audited where their code is, in the linked files; a target Meson
builds for the build machine in a cross build is left out with a note.  A target built at a glibc-hwcaps level
(its compile line reads that level's headers) may use the build's detection with the baseline raised to it.
"""

from __future__ import annotations

import os

from .. import cache, fsio, hwcaps, schema
from .._record import TYPE_CHECKING, NamedTuple
from ..errors import InputError
from . import allow, check, elf

if TYPE_CHECKING:
    from typing import Any, Iterator, Mapping, Sequence

    from ..records import Detection

__all__ = ["Result", "audit_build", "read_file"]

_OBJECT_SUFFIXES = (".o", ".obj")
_LINKED_TYPES = ("executable", "shared library", "shared module")
_AUDITED_TYPES = ("static library", *_LINKED_TYPES)


class Result(NamedTuple):
    reports: list[check.FileReport]
    problems: list[str]  # what could not be read: each one error line (exit 2)
    notes: list[str]  # what was left out, and why


def _detections(build_dir: str) -> dict[str, Detection]:
    """The build's detection per language (its first cache file of each)."""
    from ..meson_glue import read_configured

    found: dict[str, Detection] = {}
    for path in cache.find(build_dir):
        lang = cache.lang_of(path) or "c"
        if lang not in found:
            found[lang] = read_configured(path)
    if not found:
        raise InputError(f"no ccopt cache file under '{fsio.show_path(build_dir)}'; configure the project with the "
                         "ccopt-meson subproject first")
    return found


def _meson_targets(build_dir: str) -> list[Mapping[str, Any]]:
    path = os.path.join(build_dir, "meson-info", "intro-targets.json")
    try:
        doc = schema.read_document(path, fsio.LIMITS.meson_intro, "Meson's target list", "audit.schema.json",
                                   "meson_targets")
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"'{fsio.show_path(build_dir)}' is not a configured Meson build directory (no "
                         "meson-info/intro-targets.json); give the directory 'meson setup' made") from None
    return list(doc.value)


def _version(params: Sequence[str], det: Detection) -> str:
    """The dispatch version a compile line builds (its target define), or BASELINE."""
    prefix = det.define(det.spelling("target", target=""))
    return next((p[len(prefix):] for p in params if p.startswith(prefix) and p != prefix), "BASELINE")


def _objects(folder: str) -> list[str]:
    out: list[str] = []
    for top, dirs, files in os.walk(folder, onerror=lambda exc: None):
        dirs.sort()
        out += [os.path.join(top, f) for f in sorted(files) if f.endswith(_OBJECT_SUFFIXES)]
    return out


class _Target(NamedTuple):
    meta: Mapping[str, Any]
    det: Detection
    version: str


def _targets(build_dir: str, notes: list[str]) -> Iterator[_Target]:
    """Each target Meson builds for the host, with the detection of its language and the version it compiles."""
    dets = _detections(build_dir)
    variants: dict[tuple[int, str], Detection] = {}  # a glibc-hwcaps level's detection: the baseline raised
    for t in _meson_targets(build_dir):
        if t["type"] not in _AUDITED_TYPES or not t["filename"]:
            continue
        sources = [s for s in t["target_sources"] if "language" in s]
        if any(s.get("machine") == "build" for s in sources):
            notes.append(f"{os.path.relpath(t['filename'][0], build_dir)}: built for the build machine (a native "
                         "tool of a cross build), not for the host this build's baseline is for: not audited")
            continue
        lang = next((s["language"] for s in sources), "c")
        det = dets.get(lang) or dets.get("c") or next(iter(dets.values()))
        params = [p for s in sources for p in s.get("parameters", ())]
        level = _level([*params, "-I" + os.path.dirname(t["filename"][0])], det)
        if level is not None:
            key = (id(det), level.name)
            if key not in variants:
                variants[key] = hwcaps.variant(det, level)
            det = variants[key]
        yield _Target(t, det, _version(params, det))


def _level(params: Sequence[str], det: Detection) -> hwcaps.Level | None:
    """The glibc-hwcaps level a target is built at: its compile line reads that level's headers
    (``-I.../glibc-hwcaps/<level>``, the subproject's ``hwcaps`` dependency), or its output goes there (a
    library linked from the level's objects alone has no compile line), or None."""
    for p in params:
        if p.startswith("-I") and os.path.basename(os.path.dirname(p.rstrip("/\\"))) == hwcaps.SUBDIR:
            name = os.path.basename(p.rstrip("/\\"))
            found = next((lv for lv in hwcaps.levels(det.table) if lv.name == name), None)
            if found is not None:
                return found
    return None


def read_file(path: str, shown: str) -> bytes:
    """A file the audit must read; a missing one (a dangling link) is an error naming it."""
    try:
        return fsio.read_bounded(path, fsio.LIMITS.object_file, "object file")
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"{shown}: cannot be read (missing, or a link to nothing); rebuild it") from None


def _object(path: str, shown: str) -> elf.Binary | str:
    """The object, or 'lto' when it holds only an optimizer's intermediate language."""
    raw = read_file(path, shown)
    if elf.lto_kind(raw):
        return "lto"
    if not elf.is_elf(raw):
        what = "empty" if not raw else "not an ELF object"
        raise InputError(f"{shown}: {what}; the audit reads ELF objects (Linux, the BSDs) and does not pass what it "
                         "cannot read: rebuild it (an interrupted compile leaves such files)")
    b = elf.read(shown, raw)
    return "lto" if b.lto else b


def audit_build(build_dir: str | os.PathLike[str], linked: bool = False, level: str | None = None) -> Result:
    """Every object of a configured and built Meson build directory, audited; with ``linked`` (or where objects
    hold no machine code, LTO), its executables and shared libraries too, function by function.  ``level``:
    the level the build must run on (``--baseline``), whatever it was configured for."""
    folder = os.fspath(build_dir)
    result = Result([], [], [])
    targets = list(_targets(folder, result.notes))
    memo: dict[tuple[int, str], allow.Allowance] = {}
    lto = []
    seen = 0
    # global functions of the objects, per detection (a glibc-hwcaps level's build apart): what each object may use
    defined: dict[int, dict[str, list[allow.Allowance]]] = {}
    for t in targets:
        key = (id(t.det), t.version)
        for path in _objects(t.meta["filename"][0] + ".p"):  # Meson's private directory of the target
            seen += 1
            shown = os.path.relpath(path, folder)
            try:
                b = _object(path, shown)
                if isinstance(b, str):
                    lto.append(shown)
                    continue
                assert t.det.table is not None
                if key not in memo:
                    contract = allow.level(t.det.table, level) if level is not None else None
                    memo[key] = allow.for_build(t.det, t.version, contract)
                result.reports.append(check.check_object(b, t.det.table, memo[key]))
                for c in b.code:
                    if c.exported and not c.follows:
                        defined.setdefault(id(t.det), {}).setdefault(c.names[0], []).append(memo[key])
            except InputError as exc:
                result.problems.append(str(exc))
    if not seen:
        raise InputError(f"no object files under '{fsio.show_path(folder)}'; build it first (ninja -C {folder})")
    if lto:
        result.notes.append(f"{len(lto)} object(s) hold LTO's intermediate language, not machine code "
                            f"({lto[0]}, ...): their code is audited in the linked files")
    known = {det: {name: min(found, key=lambda a: len(a.decoded)) for name, found in names.items()
                   if all(a.target != "BASELINE" for a in found)} for det, names in defined.items()}
    if linked or lto:
        for t in targets:
            path = t.meta["filename"][0]
            if t.meta["type"] in _LINKED_TYPES and os.path.isfile(path):
                _linked(path, os.path.relpath(path, folder), t.det, result, level, known.get(id(t.det), {}))
    return result


def _linked(path: str, shown: str, det: Detection, result: Result, level: str | None,
            known: Mapping[str, allow.Allowance]) -> None:
    assert det.table is not None
    try:
        b = elf.read(shown, read_file(path, shown))
        base, versions = check.declared(b)
        note = "" if base is not None else "no ccopt manifest: checked against the build's baseline, dispatch-blind"
        contract = allow.level(det.table, level) if level is not None else None
        result.reports.append(check.check_linked(b, det.table, det.baseline if base is None else base, versions,
                                                 note, contract, known))
    except InputError as exc:
        result.problems.append(str(exc))
