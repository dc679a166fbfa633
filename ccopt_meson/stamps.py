"""What the file system and the process say, cheaply: stat stamps, program lookup, the environment,
the parent's command line.

These are the facts a cache hit checks instead of reading and hashing: the cache key
(``cache.keys``) and a replayed run (``replay``) take them from here.  On POSIX they come from
the interpreter's built-in ``posix`` module, not ``os``: ``python -S`` does not load ``os``, and
importing it (with ``_collections_abc`` and ``posixpath``) costs a tenth of a start-up, which a
replayed run would otherwise pay for nothing else.  Elsewhere ``os`` gives the same answers.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from typing import Any, Sequence, Union

    StrPath = Union[str, "os.PathLike[str]"]

_os: Any  # posix where it exists (built in: no import cost), else os, whose environ is text already
try:
    import posix as _os

    _BYTES_ENV = True
except ImportError:
    import os as _os

    _BYTES_ENV = False

__all__ = ["stamp", "which", "program_prefix", "resolved_programs", "getenv", "env_names", "getcwd",
           "parent_argv", "explicit_reconfigure", "SETTLED_NS"]

# A file changed less than this long ago may change again within the file system's timestamp
# granularity without its stat changing ("racy git"): it is not trusted by its stamp alone.
SETTLED_NS = 2 * 10**9
_FS_ENCODING = sys.getfilesystemencoding()


def _decode(raw: bytes) -> str:
    return raw.decode(_FS_ENCODING, "surrogateescape")  # os.fsdecode


def getenv(name: str) -> str | None:
    """``os.environ.get(name)``."""
    if _BYTES_ENV:
        raw = _os.environ.get(name.encode(_FS_ENCODING, "surrogateescape"))
        return None if raw is None else _decode(raw)
    value: str | None = _os.environ.get(name)
    return value


def env_names(prefix: str) -> list[str]:
    """The names of the environment variables starting with ``prefix``, sorted."""
    if _BYTES_ENV:
        start = prefix.encode()
        return sorted(_decode(k) for k in _os.environ if k.startswith(start))
    return sorted(k for k in _os.environ if k.startswith(prefix))


def getcwd() -> str:
    cwd: str = _os.getcwd()
    return cwd


def stamp(path: StrPath) -> tuple[int, int, int, int, int] | None:
    """The file's stamp (size, mtime, ctime, inode, device; any edit, replacement or touch changes it),
    None when it does not exist or cannot be looked at.  Symlinks are followed."""
    try:
        st = _os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def program_prefix(command: Sequence[str]) -> list[str]:
    """The leading elements that are programs (a launcher such as ccache, then the compiler)."""
    progs = []
    for arg in command:
        if arg.startswith("-") or (arg.startswith("/") and stamp(arg) is None):
            break
        progs.append(arg)
    return progs or list(command[:1])


def _executable_file(path: str) -> bool:
    try:
        st = _os.stat(path)
    except (OSError, ValueError):
        return False
    try:
        return (st.st_mode & 0o170000) == 0o100000 and bool(_os.access(path, 1))  # S_ISREG, X_OK
    except (OSError, ValueError):
        return False


def which(prog: str) -> str | None:
    """``shutil.which`` without importing shutil (POSIX)."""
    if not _BYTES_ENV:
        import shutil

        return shutil.which(prog)
    if "/" in prog:
        try:
            return prog if _os.access(prog, 1) else None
        except (OSError, ValueError):  # ValueError: a NUL in the name
            return None
    for folder in (getenv("PATH") or "/bin:/usr/bin").split(":"):
        cand = f"{folder or '.'}/{prog}"
        if _executable_file(cand):
            return cand
    return None


def resolved_programs(command: Sequence[str]) -> list[str]:
    """The real path of each program of ``command`` as ``PATH`` finds it now (symlinks followed,
    so an upgraded ``cc -> gcc-12 -> gcc-13`` resolves elsewhere); the name's own real path when not found."""
    import os

    return [os.path.realpath(which(prog) or prog) for prog in program_prefix(command)]


def parent_argv() -> list[str] | None:
    """The parent process's command line, where the OS tells it (Linux)."""
    try:
        fd = _os.open(f"/proc/{_os.getppid()}/cmdline", 0)  # O_RDONLY
    except (OSError, AttributeError):
        return None
    chunks: list[bytes] = []
    try:
        while sum(map(len, chunks)) < 1 << 20:  # bounded: a command line of a megabyte is not Meson's
            data = _os.read(fd, 1 << 16)
            if not data:
                break
            chunks.append(data)
    except OSError:
        return None
    finally:
        _os.close(fd)
    return [a.decode("utf-8", "replace") for a in b"".join(chunks).split(b"\0") if a]


def explicit_reconfigure(argv: Sequence[str] | None) -> bool:
    """Is this run part of ``meson setup --reconfigure`` (or ``CCOPT_FLUSH`` set), not ninja's regeneration?"""
    if (getenv("CCOPT_FLUSH") or "") not in ("", "0"):
        return True
    if not argv or "--internal" in argv:
        return False
    return any(a in ("--reconfigure", "--clearcache") for a in argv)
