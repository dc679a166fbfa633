"""Fingerprints of the data: what a cache key and a generated file name as "the tables they came from"."""

from __future__ import annotations

import functools
import hashlib
import os

from . import fsio
from ._record import TYPE_CHECKING
from .tables import data_file

if TYPE_CHECKING:
    from _hashlib import HASH

    from .tables import Project

__all__ = ["sha256", "data_files", "package_digest", "data_digest", "provenance"]


def sha256(data: bytes = b"") -> HASH:
    """A sha256 hash object: every digest of the package (cache keys, data, project files, wrappers) is one."""
    return hashlib.sha256(data)


def data_files() -> list[tuple[str, str]]:
    """(name under ``data/``, full path) of every table, schema and probe source, sorted by name."""
    root = data_file("")
    out: list[tuple[str, str]] = []
    for top, dirs, files in os.walk(root):  # links to directories are not followed
        dirs.sort()
        rel = os.path.relpath(top, root).replace(os.sep, "/")
        out += [(f if rel == "." else f"{rel}/{f}", os.path.join(top, f)) for f in files
                if f.endswith((".json", ".c", ".h"))]
    return sorted(out)


@functools.cache
def package_digest() -> str:
    """sha256 over every table, schema and probe source of the package."""
    h = sha256()
    for rel, full in data_files():  # read like every input: bounded, regular files only
        h.update(rel.encode() + b"\0" + fsio.read_bounded(full, fsio.LIMITS.package_file, "package data file") + b"\0")
    return h.hexdigest()


def data_digest(project: Project | None = None) -> str:
    """The package's data and the project's features: part of the cache key."""
    return f"{package_digest()}+{project.digest}" if project else package_digest()


def provenance(digest: str) -> str:
    """The line a generated file carries to say which tables (``data_digest``) it was made from."""
    return f"Tables: sha256 {digest}"
