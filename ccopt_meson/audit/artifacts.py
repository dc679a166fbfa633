"""The audit of what ships, without the build directory: an ELF executable or shared library, a wheel, an
installed tree (``meson install --destdir``) or a ``.deb`` (unpacked with the standard library).

Each ELF file found is checked function by function against its own manifest (``check.check_linked``), and
against the level the user names (``--baseline``: the contract, whatever the build declared).  A file without
a manifest is checked, dispatch-blind, against that level, else against the baseline the other files of the
same artifact declare, and said so; with neither, it is an error.
"""

from __future__ import annotations

import io
import os
import tarfile
import zipfile

from .. import fsio, project
from .._record import TYPE_CHECKING
from ..errors import InputError
from ..tables import reference_compiler, table_for
from . import allow, build, check, elf

if TYPE_CHECKING:
    from typing import Iterator

    from ..tables import Project, Table

__all__ = ["audit_paths"]

_ARCHIVES = (".whl", ".zip")


def _members_zip(path: str, shown: str) -> Iterator[tuple[str, bytes]]:
    with zipfile.ZipFile(path) as z:
        for info in sorted(z.infolist(), key=lambda i: i.filename):
            if info.is_dir() or info.file_size < 4:
                continue
            if info.file_size > fsio.LIMITS.object_file:
                raise InputError(f"{shown}: {info.filename} is {info.file_size} bytes, more than the audit reads")
            with z.open(info) as f:
                if elf.is_elf(f.read(4)):
                    yield f"{shown}:{info.filename}", z.read(info)


def _ar_members(raw: bytes, shown: str) -> Iterator[tuple[str, bytes]]:
    """A Unix ``ar`` archive's members (a .deb is one: debian-binary, control.tar.*, data.tar.*)."""
    if not raw.startswith(b"!<arch>\n"):
        raise InputError(f"{shown}: not a Debian package (no ar header); give a .deb, a wheel, a directory or a file")
    at = 8
    while at + 60 <= len(raw):
        header = raw[at:at + 60]
        name = header[:16].decode("ascii", "replace").strip().rstrip("/")
        try:
            size = int(header[48:58].decode("ascii").strip())
        except ValueError:
            raise InputError(f"{shown}: a damaged ar header at byte {at}") from None
        yield name, raw[at + 60:at + 60 + size]
        at += 60 + size + (size & 1)


def _members_deb(path: str, shown: str) -> Iterator[tuple[str, bytes]]:
    raw = fsio.read_bounded(path, fsio.LIMITS.object_file, "package")
    data = [(n, d) for n, d in _ar_members(raw, shown) if n.startswith("data.tar")]
    if not data:
        raise InputError(f"{shown}: a Debian package without data.tar.*")
    name, blob = data[0]
    if name.endswith(".zst"):
        raise InputError(f"{shown}: its {name} is zstd-compressed, which this Python cannot read; unpack it "
                         "(dpkg-deb -x FILE DIR) and audit the directory")
    try:
        with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
            for m in tar:
                if m.isfile() and m.size >= 4:
                    f = tar.extractfile(m)
                    content = f.read() if f is not None else b""
                    if elf.is_elf(content):
                        yield f"{shown}:{m.name.lstrip('./')}", content
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(f"{shown}: its {name} cannot be read ({exc})") from None


def _members_dir(path: str, shown: str) -> Iterator[tuple[str, bytes]]:
    for top, dirs, files in os.walk(path):
        dirs.sort()
        for f in sorted(files):
            full = os.path.join(top, f)
            if os.path.islink(full) or not os.path.isfile(full):
                continue  # a link's target is audited where it is
            with open(full, "rb") as fh:
                if not elf.is_elf(fh.read(4)):
                    continue
            yield os.path.join(shown, os.path.relpath(full, path)), build.read_file(full, full)


def _items(path: str) -> Iterator[tuple[str, bytes]]:
    shown = fsio.show_path(path)
    if os.path.isdir(path):
        yield from _members_dir(path, shown)
    elif path.endswith(_ARCHIVES):
        try:
            yield from _members_zip(path, shown)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise InputError(f"{shown}: not a readable wheel or zip ({exc})") from None
    elif path.endswith(".deb"):
        yield from _members_deb(path, shown)
    elif path.endswith(".rpm"):
        raise InputError(f"{shown}: an RPM package, which the audit does not unpack; unpack it (rpm2cpio FILE | "
                         "cpio -idm) and audit the directory")
    else:
        raw = build.read_file(path, shown)
        if not elf.is_elf(raw):
            raise InputError(f"{shown}: neither an ELF file nor a wheel (.whl), a .deb, a directory or a Meson build "
                             "directory; the audit reads those")
        yield shown, raw


def _table(b: elf.Binary, proj: Project | None) -> Table:
    name = elf.machine_name(b)
    if not name:
        raise InputError(f"{b.shown}: an ELF file for {b.machine}, a machine of none of ccopt's tables")
    if name == "x86_64" and b.bitness == 32:
        name = "x86"
    return table_for(name, reference_compiler(), proj)


def _audit_artifact(path: str, level: str | None, proj: Project | None, result: build.Result) -> None:
    binaries = []
    found = 0
    for shown, raw in _items(path):
        found += 1
        try:
            binaries.append(elf.read(shown, raw))
        except InputError as exc:
            result.problems.append(str(exc))
    if not found:
        raise InputError(f"{fsio.show_path(path)}: no ELF file in it, so nothing was audited; give the build "
                         "directory, the installed tree, or the wheel or package that holds the binaries")
    declared = [base for base, _ in map(check.declared, binaries) if base is not None]
    for b in binaries:
        try:
            table = _table(b, proj)
            base, versions = check.declared(b)
            note, contract = "", None
            if base is not None and level is not None:
                contract = allow.level(table, level)
                note = f"checked against both its manifest and {level}"
            if base is None:
                if level is not None:
                    base = allow.level(table, level)
                    note = f"no ccopt manifest: checked against {level}, dispatch-blind"
                elif declared:
                    base = tuple(n for n in declared[0] if all(n in d for d in declared))
                    note = (f"no ccopt manifest: checked against the baseline the artifact's other files declare "
                            f"({' '.join(base) or 'none'}), dispatch-blind")
                else:
                    raise InputError(f"{b.shown}: no ccopt manifest says what it may use; name the level it must run "
                                     "on with --baseline (for example x86-64-v2)")
            result.reports.append(check.check_linked(b, table, base, versions, note, contract))
        except InputError as exc:
            result.problems.append(str(exc))


def audit_paths(paths: list[str], level: str | None = None, features_file: str | None = None,
                linked: bool = False) -> build.Result:
    """Each path audited: a Meson build directory as ``build.audit_build``, anything else as shipped."""
    proj = project.load(features_file)
    result = build.Result([], [], [])
    for path in paths:
        try:
            if os.path.isfile(os.path.join(path, "meson-info", "intro-targets.json")):
                one = build.audit_build(path, linked, level)
                result.reports.extend(one.reports)
                result.problems.extend(one.problems)
                result.notes.extend(one.notes)
            elif not os.path.lexists(path):
                raise InputError(f"'{fsio.show_path(path)}' does not exist; give a build directory, an ELF file, a "
                                 "wheel, a .deb or an installed tree")
            else:
                _audit_artifact(path, level, proj, result)
        except InputError as exc:
            result.problems.append(str(exc))
    return result
