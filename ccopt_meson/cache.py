"""The feature cache: one JSON file per language in the build directory, and everything about it.

This module owns the key recipe, the file names, the one reader and the writer.

**What it stores** is data, never instructions: the request it answers and the
compiler's verdicts (a ``Probed``: arch, compiler id and version, per feature
supported + reason, the feature names the user's flags or ``native`` enable).
Flags, defines, headers and target args are derived from the tables every time
the file is read, so no edit of the file can add a flag, a header or code; its
content is checked against ``data/cache.schema.json`` and against the tables'
names, and anything that fails is a miss with a one-line warning.

**The key** holds only what can be known without running the compiler (a hit
starts no process): the helper version, a digest of the tables and probe
sources, the full command, the resolved compiler programs (path, size, mtime,
ctime, inode, and a script's text: they change when the compiler is upgraded
or rewritten), the environment variables compilers read (``compilers.json``),
every compile argument, the normalised request and, for ``native``, the host
CPU's identity.  The
*probe key* is the part that concerns the compiler only: a new request with
the same probe key reuses every verdict already probed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path, PurePath

from . import fsio, schema
from ._record import TYPE_CHECKING, NamedTuple
from .errors import CacheError, InputError, TableError
from .records import REQUEST_OPTIONS, Macros, Outcome, Probed, Request

if TYPE_CHECKING:
    from typing import Any, Mapping

    from .tables import Project


__all__ = ["SCHEMA_VERSION", "Stored", "OtherProject", "ProjectChanged", "check_request", "cache_path",
           "lang_of", "is_cache_name", "find", "keys", "load", "parse", "features_file_of", "lookup", "store", "flush",
           "discard", "remove_legacy", "warn"]

SCHEMA_VERSION = 2  # of the cache file; 1 stored derived flags, 2 only verdicts
_PREFIX, _SUFFIX = "ccopt-features", ".json"
_LANG_SUFFIX = {"c": "", "cpp": "-cpp"}


class Stored(NamedTuple):
    key: str
    probe_key: str
    request: Request
    probed: Probed


def warn(message: str) -> None:
    print(f"ccopt-meson: warning: {message}", file=sys.stderr)


# --------------------------------------------------------------------------- names


def cache_file(build_dir: str | os.PathLike[str], lang: str = "c") -> str:
    """``BUILD/ccopt-features.json`` for C, ``BUILD/ccopt-features-cpp.json`` for C++."""
    return os.path.join(build_dir, f"{_PREFIX}{_LANG_SUFFIX[lang]}{_SUFFIX}")


def cache_path(build_dir: str | os.PathLike[str], lang: str = "c") -> Path:
    """``cache_file`` as a ``Path``."""
    return Path(cache_file(build_dir, lang))


def lang_of(path: str | os.PathLike[str]) -> str | None:
    """The language of a cache file name, None when the name is not one of ours."""
    name = PurePath(path).name
    return next((lang for lang, sfx in _LANG_SUFFIX.items() if name == f"{_PREFIX}{sfx}{_SUFFIX}"), None)


def is_cache_name(path: str | os.PathLike[str]) -> bool:
    return lang_of(path) is not None


def find(build_dir: str | os.PathLike[str]) -> list[Path]:
    """Our cache files under a build directory (its subprojects included), sorted; unreadable dirs skipped."""
    out: list[Path] = []
    for top, dirs, files in os.walk(build_dir, onerror=lambda exc: None):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "meson-private")
        out += [Path(top) / f for f in files if is_cache_name(f)]
    return sorted(out)


# --------------------------------------------------------------------------- key


def _digest(factors: Any) -> str:
    from .digest import sha256  # the key only: 'targets' and 'report' read the cache without one

    # repr of plain tuples/str/int/bool/None is stable
    return sha256(repr(factors).encode("utf-8", "surrogateescape")).hexdigest()


def _cpu_identity() -> str:
    from .host import cpu_identity

    return cpu_identity()


def keys(req: Request, baseline: str, dispatch: str, native: bool) -> tuple[str, str]:
    """(key, probe key) of a request whose expressions normalise to ``baseline``/``dispatch``."""
    from .compiler import binary_identity, compiler_environment, driver_programs
    from .digest import data_digest
    from .version import __version__

    compiler = ("v4", __version__, data_digest(req.project), req.command, binary_identity(req.command),
                driver_programs(), tuple(map(tuple, compiler_environment())), req.args,
                req.lang, req.compiler_id, req.compiler_version, req.cpu_family)
    request = (compiler, req.cross, baseline, dispatch, req.disable_optimization, req.debug_build, tuple(req.macros),
               tuple(sorted(n.upper() for n in req.explain)),
               # 'native' answers for this CPU: a build dir taken to another machine must not reuse it
               _cpu_identity() if native else None)
    return _digest(request), _digest(compiler)


# --------------------------------------------------------------------------- read


class OtherProject(CacheError):
    """The file answers a request with another features file (or none): a plain miss for detection."""


class ProjectChanged(InputError):
    """The build's features file, or one of its probes, is no longer what the cache was made from: a
    reader must not answer with verdicts probed for other sources.  ``what`` says what changed; the
    message adds the remedy, which ``meson_glue.read_configured`` gives with the build directory."""

    def __init__(self, what: str, given: str) -> None:
        super().__init__(f"{what}; {self.remedy()}")
        self.what = what
        self.given = given  # the features file's path, as configure was given it

    @staticmethod
    def remedy(build: str = "BUILDDIR") -> str:
        # meson.build reads the features file (Meson then reconfigures when it changes), not its probes
        return (f"configure the build again (the probes run again): 'ninja -C {build} reconfigure' (ninja alone "
                "does it when the features file changes, not when a probe does), or 'meson setup --reconfigure "
                f"{build}' from the source directory, which also flushes the feature cache")


def _project(stored: Mapping[str, str] | None, project: Project | None, reader: bool) -> Project | None:
    """The features file of the stored request.  Detection (``reader`` false) passes its own: another one is
    ``OtherProject``.  A reader passes the one it was told (it must be the stored one) or None: the stored
    file, read again, which must still be what the build was configured with."""
    ident = None if stored is None else (stored["path"], stored["digest"])
    if (None if project is None else (project.path, project.digest)) == ident:
        return project
    if not reader:
        raise OtherProject("another features file")
    changed = (f"features file '{fsio.show_path(stored['given'])}' or one of its probes changed since this build "
               "was configured" if stored else "")
    if project is not None and stored is not None and project.path == stored["path"]:
        raise ProjectChanged(changed, stored["given"])  # the same file, other content: not another file
    if project is not None:
        raise InputError(f"--features-file '{fsio.show_path(project.given)}' is not the features file this build was "
                         f"configured with ({fsio.show_path(stored['given']) if stored else 'none'}); pass that one "
                         "or none (the build's own is read from its feature cache)")
    assert stored is not None
    from . import project as features  # a reader's path only: detection never loads it here

    try:
        loaded = features.load(stored["given"])
    except InputError as exc:
        raise ProjectChanged(f"the features file this build was configured with cannot be read: {exc}",
                             stored["given"]) from exc
    if loaded is None or (loaded.path, loaded.digest) != ident:
        raise ProjectChanged(changed, stored["given"])
    return loaded


def _decode(doc: Any, project: Project | None, reader: bool = False) -> Stored:
    """A validated ``Stored`` (its request with its features file, see ``_project``); CacheError naming the
    first problem."""
    from .tables import all_names_of, machine_by_name

    try:
        schema.check(doc, "cache.schema.json", where="cache")
    except TableError as exc:
        raise CacheError(str(exc)) from exc
    project = _project(doc["request"].get("project"), project, reader)
    r, p = doc["request"], doc["probed"]
    req = _request(r, project)
    if p["arch"] is not None:
        try:
            known = all_names_of(machine_by_name(p["arch"]).family, project)
        except InputError as exc:
            raise CacheError(f"unknown architecture {p['arch']!r}") from exc
        for name in [*p["outcomes"], *p["detected"], *p["native"]]:
            if name not in known:
                raise CacheError(f"{name[:40]!r} is not a feature of {p['arch']}")
    elif p["outcomes"] or p["detected"] or p["native"]:
        raise CacheError("verdicts without an architecture")
    probed = Probed(arch=p["arch"], compiler_id=p["compiler_id"], compiler_version=p["compiler_version"],
                    outcomes={n: Outcome(ok, reason) for n, (ok, reason) in p["outcomes"].items()},
                    detected=tuple(p["detected"]), native=tuple(p["native"]), lines=tuple(p.get("lines", ())))
    return Stored(doc["key"], doc["probe_key"], req, probed)


def _macros(stored: list[str] | None) -> Macros:
    """The request's macro protocol (files written before it existed hold none: the default)."""
    if stored is None:
        return Macros().resolved()
    from .tables import macro_style

    try:
        macro_style(stored[1])
    except InputError as exc:
        raise CacheError(str(exc)) from exc
    return Macros(stored[0], stored[1])


def load(path: str | os.PathLike[str], project: Project | None = None, reader: bool = True) -> Stored | None:
    """The cache file's content, None when there is none; CacheError when it is unusable.  ``project``: the
    features file the caller was given (None: the one the file records, read again and checked; see
    ``_project``)."""
    try:
        raw = fsio.read_bounded(path, fsio.LIMITS.cache, "feature cache")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except InputError as exc:
        raise CacheError(str(exc).replace(f"'{fsio.show_path(path)}'", PurePath(path).name)) from exc
    try:
        return parse(raw, project, reader)
    except OtherProject:
        raise
    except CacheError as exc:
        raise CacheError(f"{PurePath(path).name}: {exc}") from exc


def parse(raw: bytes, project: Project | None = None, reader: bool = False) -> Stored:
    """The content of a cache file; CacheError naming the first problem."""
    try:
        doc = schema.decode(raw)
    except schema.DuplicateKey as exc:
        raise CacheError(f"not valid JSON: {exc}") from exc
    except TableError as exc:
        raise CacheError("not valid JSON") from exc
    if not isinstance(doc, dict) or doc.get("generator") != fsio.MARK:
        raise CacheError("not written by ccopt-meson")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise CacheError(f"schema version {str(doc.get('schema_version'))[:20]}, this helper reads {SCHEMA_VERSION}")
    return _decode(doc, project, reader)


def features_file_of(path: str | os.PathLike[str]) -> str | None:
    """The features file (its path as given) the cache file at ``path`` was made with: None without one, or
    without a cache file its reader accepts."""
    try:
        stored = load(path)
    except ProjectChanged as exc:  # changed since: still the file it was made with
        return exc.given
    except (CacheError, InputError):
        return None
    return stored.request.project.given if stored is not None and stored.request.project is not None else None


def lookup(path: str | os.PathLike[str], project: Project | None = None) -> Stored | None:
    """``load`` for detection: an unusable file is a miss with a one-line warning."""
    try:
        return load(path, project, reader=False)
    except OtherProject:  # the key differs too: a miss, as for any other request
        return None
    except CacheError as exc:
        warn(f"ignoring the feature cache: {exc}; detecting again")
        return None


# --------------------------------------------------------------------------- write


def _request_doc(r: Request) -> dict[str, Any]:
    """Every field of the request (``Request._fields``, the one list of them), as JSON holds it."""
    doc: dict[str, Any] = {n: list(v) if isinstance(v, tuple) else v for n, v in zip(Request._fields, r)}
    proj = r.project  # stored by identity: its path as given and resolved, and the digest of what was read
    doc["project"] = None if proj is None else {"path": proj.path, "given": proj.given, "digest": proj.digest}
    return doc


def _request(r: Mapping[str, Any], project: Project | None) -> Request:
    """The request a cache file holds (checked by its schema): each field as ``Request`` types it; a field a file
    written before it existed lacks takes its default."""
    defaults = Request._field_defaults
    fields: dict[str, Any] = {}
    for name in Request._fields:
        value = r.get(name, defaults.get(name))
        if name == "project":
            value = project
        elif name == "macros":
            value = _macros(value if name in r else None)
        elif isinstance(value, list):
            value = tuple(value)
        fields[name] = value
    return Request(**fields)


def check_request(r: Request) -> None:
    """``r`` as the cache file would hold it, checked by the reader's own schema before anything is answered:
    a value the cache cannot hold is one InputError line naming its option (it used to be answered, then
    written to a file its reader refused, so every later run probed again)."""
    doc = schema.schema_file("cache.schema.json")
    try:
        schema.validate_schema(_request_doc(r), doc["properties"]["request"], doc["definitions"], "")
    except TableError as exc:
        where, _, detail = str(exc).partition(": ")
        field = where.split("[", 1)[0].split(".", 1)[0]
        shown = REQUEST_OPTIONS.get(field, field) + (f" ({where})" if where != field else "")
        raise InputError(f"{shown}: {detail}") from exc


def _encode(st: Stored) -> str:
    r, p = st.request, st.probed
    doc = {  # "generator" first: fsio.generated_by_us looks for it at the start of the file
        "generator": fsio.MARK, "schema_version": SCHEMA_VERSION, "key": st.key, "probe_key": st.probe_key,
        "request": _request_doc(r),
        "probed": {"arch": p.arch, "compiler_id": p.compiler_id, "compiler_version": p.compiler_version,
                   "outcomes": {n: [o.supported, o.reason] for n, o in sorted(p.outcomes.items())},
                   "detected": sorted(p.detected), "native": sorted(p.native), "lines": list(p.lines)},
    }
    try:  # never a file its own reader refuses
        schema.check(doc, "cache.schema.json", where="cache")
    except TableError as exc:
        raise InputError(f"the compiler's answer cannot be stored: {exc}") from exc
    text = json.dumps(doc, indent=1, ensure_ascii=True) + "\n"
    if len(text) > fsio.LIMITS.cache:
        raise InputError(f"the request (its compile arguments, its expressions) is {len(text)} bytes as the feature "
                         f"cache holds it, more than the {fsio.LIMITS.cache} it reads; pass fewer or shorter arguments")
    return text


def _ours(path: str | os.PathLike[str]) -> bool:
    """A file we may overwrite: missing, empty, marked, or a cache of schema 1 (which had no mark)."""
    try:
        head = fsio.read_head(path, 4096)
    except OSError:  # unreadable, or not a regular file (a FIFO must not block flush)
        return False
    if head is None:
        return True
    return not head or fsio.MARK.encode() in head[:512] or (b'"content_digest"' in head and b'"probe_key"' in head)


def store(path: str | os.PathLike[str], st: Stored) -> None:
    """Write the cache file; its name in the build dir is ours, so an unusable file there is replaced."""
    fsio.atomic_write(path, _encode(st))


def discard(path: str | os.PathLike[str]) -> bool:
    """Delete one cache file we wrote; False if there was none, or it is something else under our name."""
    if not _ours(path):
        return False
    try:
        os.unlink(path)
        return True
    except FileNotFoundError:
        return False
    except IsADirectoryError:
        return False
    except OSError as exc:
        raise CacheError(f"cannot delete {fsio.show_path(path)}: {exc.strerror}") from exc


def flush(build_dir: str | os.PathLike[str]) -> list[Path]:
    """Delete our cache files under ``build_dir``; the next detection probes again."""
    found = find(build_dir)
    removed = [p for p in found if discard(p)]
    for folder in {Path(build_dir), *(p.parent for p in found)}:
        remove_legacy(folder)
    return removed


# Files that earlier versions left beside the cache: run records and a memo of the data digest.
_LEGACY = (("ccopt-replay-", ".txt"), ("ccopt-data-digest", ".json"))


def remove_legacy(folder: str | os.PathLike[str]) -> None:
    """Delete the files of ``_LEGACY`` in ``folder`` that we wrote (regular files carrying our mark), and the
    temporary files of our writes that a killed run left (``fsio.remove_stale_temp``); anything else under
    those names, a symlink included, is left alone."""
    try:
        listed = os.listdir(folder)
    except OSError:
        return
    for name in listed:
        if name.endswith(".tmp") and name.startswith("."):  # one listing for both: this runs on every hit
            fsio.remove_stale_temp(folder, name)
    names = [n for n in listed if any(n.startswith(a) and n.endswith(b) for a, b in _LEGACY)]
    for name in names:
        path = os.path.join(folder, name)
        try:
            if not os.path.islink(path) and os.path.isfile(path) and fsio.generated_by_us(path):
                os.unlink(path)
        except OSError:
            pass  # a file we could not remove stays harmless: nothing reads it any more
