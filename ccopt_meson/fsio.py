"""Files at the edge: bounded reads of regular files, atomic writes, and marks on what we generate.

Everything ccopt-meson writes goes through ``atomic_write`` (a temporary file in the
same directory, renamed into place: a reader never sees half a file), and every file
it reads from a user or a build directory goes through ``read_bounded`` (regular
files only, with a size cap: a source that is a link to ``/dev/zero`` or a FIFO is
an error, not a hang).  How much of each kind of input is read is ``LIMITS``, the one table of them.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
from pathlib import PurePath

from ._record import TYPE_CHECKING, NamedTuple
from .errors import CacheError, InputError
from .version import MARK

if TYPE_CHECKING:
    from typing import Union

    StrPath = Union[str, "os.PathLike[str]"]


__all__ = ["MARK", "Limits", "LIMITS", "running", "read_bounded", "atomic_write", "read_head", "generated_by_us",
           "show_path", "temp_owner", "remove_stale_temp"]

_counter = itertools.count()


class Limits(NamedTuple):
    """The most bytes of each kind of input a reader takes: far above what a real one holds, so a bigger
    one is not ours (or is a runaway) and is refused, or cut, before it costs memory or time.  The cache
    and the call record are also never written bigger than they are read."""

    cache: int = 4 << 20  # a feature cache (ccopt-features*.json) is a few KiB; anything bigger is not ours
    call_record: int = 1 << 20  # the targets call record (ccopt-targets-*.json): a few hundred bytes per source
    features_file: int = 1 << 20  # a project's features file; numpy's whole meson_cpu/ is ~40 KiB
    probe_source: int = 1 << 20  # a probe source, a features file's or the package's: like the file naming it
    dispatch_source: int = 16 << 20  # numpy's largest dispatch source is ~0.2 MiB
    package_table: int = 1 << 20  # a JSON table or schema of the package (data/); the biggest is a few KiB
    package_file: int = 4 << 20  # any file of data/ (tables, schemas, probe sources), read for the package digest
    compiler_wrapper: int = 1 << 20  # a #! script that runs a compiler is a few lines; a bigger text is hashed to here
    compiler_output: int = 1 << 20  # one compiler process's output kept; the rest is read (in chunks) and dropped
    cpuinfo: int = 1 << 20  # /proc/cpuinfo, of which only the first processor's block is used
    command_line: int = 1 << 20  # the parent's /proc/PID/cmdline and stat: a megabyte is not Meson's
    meson_intro: int = 64 << 20  # Meson's intro-targets.json: numpy's is a few MiB
    object_file: int = 256 << 20  # one object file the ISA audit decodes: numpy's biggest is a few MiB


LIMITS = Limits()


def show_path(path: StrPath) -> str:
    """``str(PurePath(path))``, the form messages and reports quote."""
    return str(PurePath(path))


def read_bounded(path: StrPath, limit: int, what: str) -> bytes:
    """The content of a regular file of at most ``limit`` bytes; InputError otherwise.

    A missing file passes through as FileNotFoundError, or NotADirectoryError when a parent
    is a regular file (no file can exist there either), so callers treat "missing" as their own case.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: opening a FIFO must not wait for a writer
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as exc:
        raise InputError(f"cannot read {what} '{show_path(path)}': {exc.strerror}") from exc
    except (ValueError, UnicodeError) as exc:  # a NUL, or a lone surrogate no file system name can hold
        shown = os.fspath(path).encode("unicode_escape").decode("ascii")
        raise InputError(f"cannot read {what} '{shown[:200]}': the path holds a NUL or is not valid Unicode") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{what} '{show_path(path)}' is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise InputError(f"{what} '{show_path(path)}' is {st.st_size} bytes, more than the {limit} this tool reads")
        # Reads ask for what the file holds (plus one byte, to see it grow), never for ``limit``: os.read allocates
        # what it is asked for, and under 'meson test' (MALLOC_PERTURB_) glibc fills every allocation: a 1 GiB
        # buffer per object file made the ISA audit of a 5-object build take over 30 s instead of 1 s.
        step = min(limit, max(st.st_size, 1 << 16)) + 1  # /proc files say 0 bytes
        data = os.read(fd, step)
        chunks = [data]
        while data and sum(map(len, chunks)) <= limit:
            data = os.read(fd, min(step, limit + 1 - sum(map(len, chunks))))
            chunks.append(data)
        out = b"".join(chunks)
        if len(out) > limit:  # it grew while being read
            raise InputError(f"{what} '{show_path(path)}' is more than the {limit} bytes this tool reads")
        return out
    except OSError as exc:
        raise InputError(f"cannot read {what} '{show_path(path)}': {exc.strerror}") from exc
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "a special file"


def read_head(path: StrPath, size: int) -> bytes | None:
    """The first ``size`` bytes of a regular file, None when it is missing.

    OSError when it cannot be read or is not a regular file: opening a FIFO for reading would
    wait for a writer, so it is opened non-blocking and refused.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.read(fd, size)
    finally:
        os.close(fd)


def generated_by_us(path: StrPath) -> bool:
    """Does ``path`` carry our mark in its first 512 bytes (or is it missing)?"""
    try:
        head = read_head(path, 512)
    except NotADirectoryError:  # a path below a regular file: missing; writing there reports the real problem
        return True
    except OSError:
        return False
    return head is None or MARK.encode() in head


def temp_owner(name: str) -> int | None:
    """The pid in the name of a temporary file ``atomic_write`` makes (``.NAME.PID.N.tmp``), else None."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    parts = name[1:-4].rsplit(".", 2)
    return int(parts[1]) if len(parts) == 3 and parts[0] and parts[1].isdigit() and parts[2].isdigit() else None


def remove_stale_temp(folder: StrPath, name: str, min_age: float = 60.0) -> bool:
    """Remove ``folder/name`` if it is a temporary file of ``atomic_write`` left by a process that is gone
    (killed between writing and renaming): our name pattern, a regular file (not a link), empty or marked,
    older than ``min_age`` seconds; anything else is left alone."""
    pid = temp_owner(name)
    if pid is None or pid == os.getpid():
        return False
    path = os.path.join(folder, name)
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_mtime > _now() - min_age or running(pid):
            return False
        head = read_head(path, 512)
        if head is None or (head and MARK.encode() not in head):
            return False
        os.unlink(path)
        return True
    except OSError:
        return False


def _now() -> float:
    import time

    return time.time()


def running(pid: int) -> bool:
    """Is a process with this id running (or might be: never guessed on Windows)? Scratch sweeps skip those."""
    if os.name != "posix":  # os.kill(pid, 0) would terminate the process on Windows: never guess there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, but belongs to someone else
        return True
    except (OSError, OverflowError):  # no process can have that id
        return False
    return True


def atomic_write(path: StrPath, text: str | bytes, where: str = "the build directory") -> bool:
    """Write ``text`` (UTF-8 when a string) to ``path`` via a temporary file and rename; False if unchanged.
    ``where`` names the directory in the message of a write that fails.

    The temporary file is created with mode 0666 and the process's umask applies as for
    any new file; the umask itself is never changed (threads of an API user share it).
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        if read_bounded(path, len(data), "file") == data:
            return False
    except (OSError, InputError):  # missing, bigger, or not a regular file (a FIFO must not block): replace it
        pass
    parent, name = os.path.split(os.fspath(path))
    tmp = os.path.join(parent, f".{name}.{os.getpid()}.{next(_counter)}.tmp")
    try:
        if parent:
            try:
                os.makedirs(parent, exist_ok=True)
            except FileExistsError:  # makedirs' word for "the directory is a regular file"
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from None
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        raise CacheError(f"cannot write {show_path(path)}: {exc.strerror}; "
                         f"check that {where} is writable") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):  # a directory in the file's place, a full disk, ...
            raise CacheError(f"cannot write {show_path(path)}: {exc.strerror}; check that {where} is "
                             f"writable and that {name} is a regular file") from exc
        raise
    return True
