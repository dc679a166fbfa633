"""The feature cache: one JSON file in the build directory.

The file is the detection result itself (the ``detect --json`` document),
plus ``cache.key`` and a ``content_digest``.  It is data only, never executed.
A hit starts no process, so the key holds only what can be known without the
compiler: the helper version, a digest of the tables and probe sources, the
full command, the resolved compiler binaries (path, size, mtime: they change
when the compiler is upgraded), every compile argument and the normalised
request.  Writes go to a temporary file in the same directory and are renamed
into place, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from ._sha import sha256
from .errors import CacheError

__all__ = [
    "SCHEMA_VERSION", "cache_path", "make_key", "load", "read", "store", "flush", "discard", "atomic_write", "dumps",
    "warn", "content_ok",
]

SCHEMA_VERSION = 1
FILE_NAME = "ccopt-features{suffix}.json"


def warn(message: str) -> None:
    print(f"ccopt-meson: warning: {message}", file=sys.stderr)


def dumps(doc: Any) -> str:
    """Canonical JSON: sorted keys, fixed separators, trailing newline."""
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def cache_path(build_dir: str | os.PathLike[str], lang: str = "c") -> Path:
    return Path(build_dir) / FILE_NAME.format(suffix="" if lang == "c" else f"-{lang}")


def make_key(factors: Mapping[str, Any]) -> str:
    return sha256(json.dumps(factors, sort_keys=True).encode()).hexdigest()


def _digest(doc: Mapping[str, Any]) -> str:
    body = {k: v for k, v in doc.items() if k not in ("content_digest", "cache", "probes")}
    # compact separators keep json's C encoder (indent= falls back to pure Python): this runs on every hit
    return sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def content_ok(doc: Mapping[str, Any]) -> bool:
    """Is ``doc`` exactly what ``store`` wrote (no hand edits, no truncation)?"""
    return doc.get("content_digest") == _digest(doc)


def load(path: Path, key: str) -> dict[str, Any] | None:
    """The cached document for ``key``, or None (with a warning when the file is unusable)."""
    doc = read(path)
    return doc if doc is not None and doc["cache"].get("key") == key else None


def read(path: Path) -> dict[str, Any] | None:
    """The cache file's document if it is sound, whatever its key; None with a warning if not."""
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None  # no cache yet (or the build dir is not a directory: storing reports that)
    except OSError as exc:
        warn(f"ignoring unreadable cache {path.name}: {exc.strerror}; detecting again")
        return None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # RecursionError: garbage nested too deep for the parser
        warn(f"ignoring corrupt cache {path.name} (not valid JSON); detecting again")
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("cache"), dict):
        warn(f"ignoring cache {path.name}: unexpected content; detecting again")
        return None
    if doc.get("schema_version") != SCHEMA_VERSION:
        warn(f"ignoring cache {path.name}: schema version {doc.get('schema_version')!r}, "
             f"this helper writes {SCHEMA_VERSION}; detecting again")
        return None
    if not content_ok(doc):
        warn(f"ignoring cache {path.name}: its content was modified after it was written; detecting again")
        return None
    return doc


def atomic_write(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` via a temporary file and rename; False if unchanged."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # only writers need it; a cache hit stays lean

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise CacheError(f"cannot write {path}: {exc.strerror}; check that the build directory is writable") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the usual mode
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):  # a directory in the file's place, a full disk, ...
            raise CacheError(f"cannot write {path}: {exc.strerror}; check that the build directory is writable "
                             f"and that {path.name} is a regular file") from exc
        raise
    return True


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def store(path: Path, doc: dict[str, Any]) -> None:
    doc = dict(doc)
    doc["content_digest"] = _digest(doc)
    atomic_write(path, dumps(doc))


def flush(build_dir: str | os.PathLike[str]) -> list[Path]:
    """Delete every cache file under ``build_dir`` (subprojects included); the next detection probes again."""
    return [p for p in sorted(Path(build_dir).rglob(FILE_NAME.format(suffix="*"))) if discard(p)]


def discard(path: Path) -> bool:
    """Delete one cache file; False if there was none."""
    try:
        path.unlink()
        return True
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise CacheError(f"cannot delete {path}: {exc.strerror}") from exc
