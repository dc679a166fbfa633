"""Replaying a run whose inputs have not changed: a cache hit at about the cost of a Python start.

Ninja's regeneration runs ``configure`` (once per language) and ``targets`` again with the
same command lines, and a scripted ``ccopt-meson detect --build-dir`` repeats itself; when
nothing such a run reads has changed, it prints what it printed before.  So after a
successful run the full path leaves a *record* beside the feature cache:

- the command line, working directory and the environment variables the run can read;
- the package that wrote it (another install has other tables and code);
- the programs of the compiler command as ``PATH`` resolved them;
- the stamp (size, times, inode) of every file it read or wrote: the package's code and data,
  the compiler binaries, the project's features file and its probes, the dispatch sources it
  parsed, the cache, the generated files and headers;
- its output, as a cache hit prints it.

The next run with the same command line looks for the record first (``replay``): a few dozen
``stat`` calls instead of importing the pipeline, loading the tables and deriving every target's
flags.  Anything that differs (a stamp, a program, a variable, an explicit ``meson setup
--reconfigure``, ``--flush``) is a miss, and the full path runs and records again.  A file that
changed within the file system's timestamp granularity of the recording may change again
without its stamp changing ("racy git"), so it is recorded with a digest of its content too,
checked on replay until the record is refreshed once the file has settled.

Nothing is recorded when an input's stamp is newer than the run's start: the output may have
been made from what the file held before.

**A record is data that cannot steer the build** (as the cache is): before anything is printed,
every compile argument in it must be a flag of a ``flags`` list of the feature tables (or of
the features file the command line names), a policy flag, a merge of those flags' ``+ext``
parts, a ``CCOPT_`` define, or one of the package's headers after its force-include option;
every name must be a ``name`` those files hold; the feature file and the sources must be the
ones the command line implies.  A record that fails a check is ignored.  An edited record can
at worst pick among the tables' own flags, which an edited cache could too.

The helper script and the ``ccopt-meson`` program reach this module before anything else,
so checking and printing a record loads only built-in modules: ``stamps`` (which uses
``posix``, not ``os``) and ``_sha``.  Recording runs in the full path and imports what it
likes.  Where ``posix`` does not exist (Windows) nothing is replayed.
"""

from __future__ import annotations

import sys

from . import stamps
from .version import MARK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from typing import Iterable, Sequence

try:
    import posix
except ImportError:  # Windows: no replay, the full path runs every time
    posix = None  # type: ignore[assignment]

__all__ = ["replay", "begin", "save", "record_files", "discard_all", "KINDS", "PREFIX", "FORCE_INCLUDED",
           "TARGETS_VALUE_OPTIONS", "FEATURE_FILES"]

KINDS = ("configure", "targets", "detect")
PREFIX = "ccopt-replay-"
_VERSION = "1"
_MAX_BYTES = 8 << 20
# File times come from a coarse clock (a few ms behind the one a run reads its start from): an input
# stamped this close to the start may have changed after it.
_CLOCK_SLACK_NS = 20 * 10**6
_NAME_PRIME = (1 << 61) - 1  # record names: the command line's bytes as one number, modulo this prime
_KEEP = 128  # records per directory: one per distinct command line (a language, a targets call, a detect)
# What a run reads from its environment besides its command line.
_ENV = ("PATH", "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "MESON_SOURCE_ROOT", "MESON_BUILD_ROOT", "MESON_SUBDIR")
# The headers every version of a kernel is compiled with (meson_glue force-includes them): all a
# force-include spelling in a record may name.
FORCE_INCLUDED = ("ccopt_kernel.h", "ccopt_dispatch.h")
_PACKAGE = __file__.rpartition("/")[0] or "."  # POSIX: where a replay happens at all

_invocation: tuple[str, list[str], int] | None = None  # (kind, argv, start in ns) of this process, from the entry point


# --------------------------------------------------------------------------- the record's text


def _esc(text: str) -> str:
    return text.replace("%", "%25").replace("\t", "%09").replace("\n", "%0A").replace("\r", "%0D")


def _unesc(text: str) -> str:
    if "%" not in text:
        return text
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%09", "\t").replace("%25", "%")


def _environment() -> list[str]:
    """The variables a run can read, as the record's lines: ``NAME`` alone when unset."""
    return [k if v is None else f"{k}\t{_esc(v)}" for k in [*_ENV, *stamps.env_names("CCOPT_")]
            for v in [stamps.getenv(k)]]


def _option(argv: Sequence[str], name: str) -> str | None:
    """The last value of ``--name VALUE`` / ``--name=VALUE`` (as argparse takes it), None without one."""
    found = None
    for i, word in enumerate(argv):
        if word == name and i + 1 < len(argv):
            found = argv[i + 1]
        elif word.startswith(name + "="):
            found = word[len(name) + 1:]
    return found


def _record_dir(kind: str, argv: Sequence[str]) -> str | None:
    """Where the run keeps its cache, hence its record: derived from the command line alone."""
    if kind == "configure":
        return _option(argv, "--build-dir") or _option(argv, "--output-dir")
    if kind == "targets":
        feature_file = _option(argv, "--feature-file")
        return _dirname(feature_file) if feature_file else None
    return _option(argv, "--build-dir")


def _dirname(path: str) -> str:
    return path.rpartition("/")[0] or ("/" if path.startswith("/") else ".")


def _record_path(kind: str, argv: Sequence[str], cwd: str) -> str | None:
    folder = _record_dir(kind, argv)
    if not folder:
        return None
    # A name, not a proof: the record holds the whole command line and working directory, compared
    # as they are.  The bytes as one number modulo a Mersenne prime (a polynomial hash) costs no
    # import, where sha256 would load a module on every run.
    data = "\0".join([kind, cwd, *argv]).encode("utf-8", "surrogateescape")
    key = int.from_bytes(data, "little") % _NAME_PRIME
    return f"{folder.rstrip('/') or '/'}/{PREFIX}{kind}-{key:016x}.txt"


_NEVER = ("--flush", "--json", "--help")  # runs never replayed (argparse takes a prefix of each too)
# The options of 'targets' that take a value (cli.py declares them; a test keeps the two in step).
TARGETS_VALUE_OPTIONS = ("--feature-file", "--output-dir", "--optimization", "--prefix",
                         "--features-file", "--lang")
# The feature file of each language (cache.cache_file names them; a test keeps the two in step).
FEATURE_FILES = {"c": "ccopt-features.json", "cpp": "ccopt-features-cpp.json"}


def _replayable(argv: Sequence[str]) -> str | None:
    """The kind of a command line a record may answer, None for any other."""
    if not argv or argv[0] not in KINDS:
        return None
    for word in argv[1:]:
        name = word.partition("=")[0]
        if word == "-h" or (len(name) > 2 and any(o.startswith(name) for o in _NEVER)):
            return None
    return argv[0]


# --------------------------------------------------------------------------- recording


def begin(argv: Sequence[str]) -> None:
    """This process runs ``argv``: a successful run of a replayable command may ``save`` a record."""
    global _invocation
    import time

    kind = _replayable(argv)
    _invocation = (kind, list(argv), time.time_ns()) if kind else None


def record_files(family: str | None) -> list[str]:
    """The package's own files a run of ``family`` depends on: its code, its tables and that family's
    probes (a new release, an edited table or probe changes a stamp)."""
    import os

    out: list[str] = []
    probes = os.path.join(_PACKAGE, "data", "probes")
    todo = [_PACKAGE]
    while todo:
        folder = todo.pop()
        out.append(folder)  # a directory's stamp changes when a file is added or removed
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                if e.name != "__pycache__" and (folder != probes or e.name == family):
                    todo.append(e.path)
            elif e.name.endswith((".py", ".json", ".c", ".h")):
                out.append(e.path)
    return sorted(out)


def save(folder: str | os.PathLike[str], family: str | None, stdout: str,
         files: Iterable[str | os.PathLike[str]], programs: Sequence[str] = (), stderr: str = "",
         written: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Record this run's output (as a cache hit prints it) for replay; a no-op outside the entry point.

    ``files`` are what the run read or wrote besides the package (its code, its tables and the
    probes of ``family``, the detected machine's, are always recorded); ``programs`` the compiler
    command, whose programs must resolve as they do now; ``written`` what the run itself wrote.
    An input changed since the run started (a features file edited during a probe) may not be
    what the output was made from: then nothing is recorded.  A record that cannot be written
    is only a replay lost: nothing is reported.
    """
    if _invocation is None or posix is None:
        return
    import os
    import time

    from . import fsio

    kind, argv, started = _invocation
    cwd = stamps.getcwd()
    path = _record_path(kind, argv, cwd)
    if path is None or os.path.realpath(os.path.dirname(path)) != os.path.realpath(folder):
        return

    now = time.time_ns()
    lines = [f"# {MARK}: a replay record (ccopt_meson/replay.py); deleting it costs one slower run",
             f"version\t{_VERSION}", f"kind\t{kind}", f"package\t{_esc(_PACKAGE)}", f"cwd\t{_esc(cwd)}",
             "argv\t" + "\t".join(_esc(a) for a in argv)]
    lines += [f"env\t{e}" for e in _environment()]
    found = [(p, stamps.which(p) or "") for p in (stamps.program_prefix(programs) if programs else ())]
    lines += [f"prog\t{_esc(p)}\t{_esc(f)}" for p, f in found]
    outputs = {os.path.abspath(os.fspath(f)) for f in written}
    named = [*record_files(family), *files, *written, *(f for _, f in found if f)]  # stamps follow symlinks
    for name in sorted({os.path.abspath(os.fspath(f)) for f in named}):
        st = stamps.stamp(name)
        if st is None:
            return  # something the run used is gone already: nothing worth replaying
        if name not in outputs and max(st[1], st[2]) >= started - _CLOCK_SLACK_NS and not os.path.isdir(name):
            return  # an input changed while the run went on
        digest = _content_digest(name) if now - max(st[1], st[2]) < stamps.SETTLED_NS else "-"
        if digest is None:
            return
        lines.append("file\t" + "\t".join([_esc(name), *map(str, st), digest]))
    lines += [f"out\t{_esc(line)}" for line in stdout.splitlines()]
    lines += [f"err\t{_esc(line)}" for line in stderr.splitlines()]
    text = "\n".join([*lines, "end"]) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # a name that is not UTF-8: such a run is not replayed
    from .errors import CacheError

    try:
        fsio.atomic_write(path, text)
        _prune(os.path.dirname(path) or ".")
    except CacheError:
        pass


def _content_digest(path: str) -> str | None:
    """sha256 of a regular file of at most 16 MiB (what a racy file is checked by), "dir" for a
    directory (its stamp alone says whether entries came or went), None otherwise."""
    try:
        mode = posix.stat(path).st_mode & 0o170000
    except (OSError, ValueError):
        return None
    if mode == 0o040000:
        return "dir"
    data = _read(path, 16 << 20)
    if data is None:
        return None
    from ._sha import sha256

    return sha256(data).hexdigest()


def _read(path: str, limit: int) -> bytes | None:
    """The content of a regular file of at most ``limit`` bytes; None for anything else (never blocks)."""
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    try:
        st = posix.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000 or st.st_size > limit:
            return None
        chunks = []
        size = 0
        while True:
            data = posix.read(fd, limit + 1 - size)
            if not data:
                break
            chunks.append(data)
            size += len(data)
            if size > limit:
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        posix.close(fd)


def _prune(folder: str) -> None:
    """Keep the newest ``_KEEP`` records of a directory (command lines that changed leave old ones)."""
    import os

    from . import fsio

    found = []
    for e in os.scandir(folder):
        if (e.name.startswith(PREFIX) and e.name.endswith(".txt") and e.is_file(follow_symlinks=False)
                and fsio.generated_by_us(e.path)):
            found.append((e.stat().st_mtime_ns, e.path))
    for _, path in sorted(found)[:-_KEEP]:
        try:
            os.unlink(path)
        except OSError:
            pass


def discard_all(folder: str | os.PathLike[str]) -> None:
    """Delete the records in ``folder`` that we wrote (a flush: the next runs take the full path)."""
    import os

    from . import fsio

    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for e in entries:
        if (e.name.startswith(PREFIX) and e.name.endswith(".txt") and e.is_file(follow_symlinks=False)
                and fsio.generated_by_us(e.path)):
            try:
                os.unlink(e.path)
            except OSError:
                pass


# --------------------------------------------------------------------------- replaying


class _Record:
    def __init__(self) -> None:
        self.fields: dict[str, str] = {}
        self.argv: list[str] = []
        self.env: list[str] = []
        self.progs: list[tuple[str, str]] = []
        self.files: list[tuple[str, tuple[int, ...], str]] = []
        self.out: list[str] = []
        self.err: list[str] = []


def _parse(text: str) -> _Record | None:
    lines = text.split("\n")
    if not lines or MARK not in lines[0] or lines[-2:] != ["end", ""]:
        return None
    rec = _Record()
    for line in lines[1:-2]:
        tag, _, rest = line.partition("\t")
        if tag == "out":
            rec.out.append(_unesc(rest))
        elif tag == "err":
            rec.err.append(_unesc(rest))
        elif tag == "file":
            parts = rest.split("\t")
            if len(parts) != 7 or not all(p.isascii() and p.isdigit() and len(p) < 25 for p in parts[1:6]):
                return None
            rec.files.append((_unesc(parts[0]), tuple(int(p) for p in parts[1:6]), parts[6]))
        elif tag == "env":
            rec.env.append(rest)
        elif tag == "prog":
            prog, _, real = rest.partition("\t")
            rec.progs.append((_unesc(prog), _unesc(real)))
        elif tag == "argv":
            rec.argv = [_unesc(a) for a in rest.split("\t")]
        elif tag in ("version", "kind", "package", "cwd"):
            rec.fields[tag] = _unesc(rest)
        else:
            return None
    return rec


def replay(argv: Sequence[str]) -> bool:
    """Print the recorded output of ``argv`` if nothing it depends on has changed; False (nothing
    printed, nothing changed) when the full path must run.  Never raises: a record it cannot use,
    whatever is wrong with it, is a miss."""
    try:
        found = _replayed(argv)
    except Exception:  # a malformed record this check did not foresee: the full path decides
        return False
    if found is None:
        return False
    path, text, out, err, racy = found
    try:
        if err:
            sys.stderr.write(err)
        sys.stdout.write(out)
    except UnicodeEncodeError:  # a stream that cannot carry a name: nothing was written yet for stdout
        return False
    if racy:
        _refresh(path, text)
    return True


def _replayed(argv: Sequence[str]) -> tuple[str, str, str, str, bool] | None:
    """(record path, its text, stdout, stderr, racy) when the record answers ``argv``."""
    kind = _replayable(argv)
    if kind is None or posix is None:
        return None
    cwd = stamps.getcwd()
    path = _record_path(kind, argv, cwd)
    raw = _read(path, _MAX_BYTES) if path else None
    if path is None or raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    rec = _parse(text)
    if (rec is None or rec.fields.get("version") != _VERSION or rec.fields.get("kind") != kind
            or rec.fields.get("package") != _PACKAGE  # another install of ccopt-meson: its own tables and code
            or rec.fields.get("cwd") != cwd or rec.argv != list(argv) or rec.env != _environment()):
        return None
    if kind == "configure" and stamps.explicit_reconfigure(stamps.parent_argv()):
        return None  # 'meson setup --reconfigure' flushes: the full path does that
    if any((stamps.which(p) or "") != found for p, found in rec.progs):
        return None  # PATH finds another program now (its file's stamp is among the files)
    racy = _check_files(rec.files)
    if racy is None:
        return None
    if not _Checker(kind, argv, cwd, _dirname(path)).valid(rec):
        return None
    return path, text, "".join(line + "\n" for line in rec.out), "".join(line + "\n" for line in rec.err), racy


def _check_files(files: Sequence[tuple[str, tuple[int, ...], str]]) -> bool | None:
    """None if a file changed; else whether some were recorded racy (then checked by content)."""
    if not files:
        return None
    racy = False
    for name, recorded, digest in files:
        if stamps.stamp(name) != recorded:
            return None
        if digest != "-":
            if _content_digest(name) != digest:
                return None
            racy = True
    return racy


def _refresh(path: str, text: str) -> None:
    """Drop the digests of racy files that have settled since: later replays trust their stamps."""
    import time

    now = time.time_ns()
    lines = text.split("\n")
    changed = False
    for i, line in enumerate(lines):
        if line.startswith("file\t"):
            parts = line.split("\t")
            if parts[-1] != "-" and now - max(int(parts[3]), int(parts[4])) >= stamps.SETTLED_NS:
                lines[i] = "\t".join([*parts[:-1], "-"])
                changed = True
    if changed:
        from . import fsio
        from .errors import CacheError

        try:
            fsio.atomic_write(path, "\n".join(lines))
        except CacheError:
            pass


# --------------------------------------------------------------------------- what a record may say


class _Checker:
    """Does a record's output hold only what the tables and the command line can produce?"""

    def __init__(self, kind: str, argv: Sequence[str], cwd: str, folder: str) -> None:
        self.kind, self.argv, self.cwd, self.folder = kind, argv, cwd, folder
        self.flags: set[str] = set()  # every string of a "flags" list, and the policy flags
        self.heads: set[str] = set()  # what a merged '-march=...+ext+ext' may start with
        self.exts: set[str] = set()  # and the '+ext' parts it may carry
        self.names_known: set[str] = set()  # every "name" of the tables: features, machines
        self.templates: list[tuple[str, str]] = []  # the define and force-include spellings, '-D{}', '/FI{}'
        self.pairs: set[str] = set()  # a two-word force-include, '-include ccopt_config.h'

    def _load_vocabulary(self) -> bool:
        """What the tables can put into an output: read from the JSON text without the json module
        (which imports re), by the keys that hold flags and names; anything it cannot read is a miss."""
        data = f"{_PACKAGE}/data"
        try:
            files = [f"{data}/features/{n}" for n in sorted(posix.listdir(f"{data}/features")) if n.endswith(".json")]
        except OSError:
            return False
        project = _option(self.argv, "--features-file")
        texts = [_text(f) for f in [f"{data}/compilers.json", *files, *([project] if project else [])]]
        if any(t is None for t in texts):
            return False
        compilers, *tables = [t or "" for t in texts]
        for text in tables:
            self.flags.update(s for key in ("flags", "opt", "werror") for s in _strings_of(text, key))
            self.names_known.update(_strings_of(text, "name"))
        self.flags.update(s for key in ("opt", "werror") for s in _strings_of(compilers, key))
        for spelling in [*_strings_of(compilers, "define"), *_strings_of(compilers, "force_include")]:
            pre, brace, post = spelling.partition("{}")
            if brace and (pre or post):
                self.templates.append((pre, post))
            elif not brace:
                self.pairs.update(f"{spelling} {h}" for h in FORCE_INCLUDED)  # ['-include', '{}']
        self.heads = {f.partition("+")[0] for f in self.flags if "+" in f} | {u.partition("+")[0] for u in self._user()}
        self.exts = {e for f in self.flags for e in f.split("+")[1:]}
        return bool(self.flags)

    def _user(self) -> list[str]:
        """The compile arguments the command line gives (a merged flag may build on the user's own)."""
        out: list[str] = []
        for i, word in enumerate(self.argv):
            name, eq, value = word.partition("=")
            if name in ("--arg", "--cc-arg", "--args") and not eq and i + 1 < len(self.argv):
                value = self.argv[i + 1]
            elif name not in ("--arg", "--cc-arg", "--args"):
                continue
            out += value.split() if name == "--args" else [value]
        return out

    def _allowed(self, word: str) -> bool:
        """A word not in ``flags``: a merged flag, a define of ours, a spelled-out force-include."""
        if "+" in word:
            head, *exts = word.split("+")
            return head in self.heads and all(e in self.exts for e in exts)
        for pre, post in self.templates:
            if word.startswith(pre) and word.endswith(post) and len(word) > len(pre) + len(post):
                fill = word[len(pre):len(word) - len(post)]
                if fill in FORCE_INCLUDED or _ccopt_define(fill):
                    return True
        return False

    def args(self, texts: Iterable[str]) -> bool:
        """Is every word of ``texts`` (space-separated compile arguments) one the tables allow?"""
        joined = " ".join(texts)
        if "  " in joined or joined.startswith(" ") or joined.endswith(" "):
            return False
        for pair in self.pairs:  # '-include ccopt_config.h': the header only right after its option
            joined = joined.replace(pair, " ")
        unknown = set(joined.split()) - self.flags  # checked once per distinct word, at C speed
        return all(self._allowed(w) for w in unknown)

    def names(self, texts: Iterable[str]) -> bool:
        return not (set(" ".join(texts).split()) - self.names_known)

    def valid(self, rec: _Record) -> bool:
        if not all(_printable(line) for line in rec.err) or not self._load_vocabulary():
            return False
        check = {"configure": self._configure, "targets": self._targets, "detect": self._detect}[self.kind]
        return bool(rec.out) and check(rec.out)

    def _configure(self, lines: Sequence[str]) -> bool:
        args: list[str] = []
        names: list[str] = []
        for line in lines:
            key, tab, value = line.partition("\t")
            if not tab or "\t" in value or not _printable(value):
                return False
            if key == "baseline_args" or key.startswith("target:"):
                args.append(value)
                target = key.partition(":")[2]
                if target and target != "BASELINE":
                    names.append(target)
            elif key in ("baseline_names", "dispatch_names", "arch"):
                names.append(value)
            elif key == "feature_file":
                folder, _, name = value.rpartition("/")
                here = stamps.stamp(self.folder)  # the same directory: the same inode and device
                there = stamps.stamp(folder or "/")
                plain = value.startswith("/") and "/./" not in value and "/../" not in value and "//" not in value
                if (not here or not there or there[3:] != here[3:] or not plain
                        or name != FEATURE_FILES.get(_option(self.argv, "--lang") or "c")):
                    return False
            elif key == "cache_hit":
                if value != "true":
                    return False
            elif key == "probes":
                if value != "0":
                    return False
            elif key not in ("compiler", "baseline_request"):
                return False
        return self.args(args) and self.names(names)

    def _sources(self) -> set[str]:
        """The sources of the command line's positional words (``SOURCE`` or ``SOURCE: TARGETS``), as
        ``targets`` hands them to Meson: relative to the working directory when below it."""
        out: set[str] = set()
        below = self.cwd.rstrip("/") + "/"
        words = iter(self.argv[1:])
        for word in words:
            if word.startswith("-"):
                if word in TARGETS_VALUE_OPTIONS:
                    next(words, None)  # its value is no source
                continue
            source = word if ":" not in word or _is_file(word) else word.rpartition(":")[0].strip()
            out.add(source[len(below):] if source.startswith(below) else source)
        return out

    def _targets(self, lines: Sequence[str]) -> bool:
        prefix = (_option(self.argv, "--prefix") or "ccopt") + "_"
        sources = self._sources()
        args: list[str] = []
        for line in lines:
            parts = line.split("\t")
            if len(parts) != 4 or not all(_printable(p) for p in parts):
                return False
            lib, lib_args, srcs, target = parts
            if target != "BASELINE" and not self.names(target.split("__")):
                return False
            if not lib.startswith(prefix) or not lib.replace("_", "a").isalnum() or not lib.isascii():
                return False
            if not set(srcs.split(" ")) <= sources:
                return False
            args.append(lib_args)
        return self.args(args)

    def _detect(self, lines: Sequence[str]) -> bool:
        section = ""
        args: list[str] = []
        names: list[str] = []
        for line in lines:
            if not _printable(line):
                return False
            if line and not line.startswith(" "):
                section = line
                continue
            key, sep, value = line.strip().partition(" : ")
            key = key.rstrip()  # the report pads names to a column
            if not sep or section not in ("CPU baseline", "CPU dispatch"):
                continue
            if key == "Enabled":
                names.append("" if value == "none" else value)
            elif section == "CPU baseline" and key == "Flags":
                args.append("" if value == "none" else value)
            elif section == "CPU dispatch" and key != "Requested":
                names.append(key)
                args.append("" if value == "(no flags)" else value)
        return self.args(a for a in args if a) and self.names(names)


def _is_file(path: str) -> bool:
    try:
        return (posix.stat(path).st_mode & 0o170000) == 0o100000
    except (OSError, ValueError):
        return False


def _text(path: str) -> str | None:
    raw = _read(path, 4 << 20)
    try:
        return raw.decode("utf-8") if raw is not None else None
    except UnicodeDecodeError:
        return None


def _strings_of(text: str, key: str) -> list[str]:
    """The strings of every ``"key": value`` in a JSON text: a string value, or the strings in the
    lists of a list or an object of lists (object keys are not values).  Found with ``str.find``,
    at C speed; a value it cannot read yields nothing (so the check fails and the full path runs)."""
    out: list[str] = []
    quoted = f'"{key}"'
    pos = text.find(quoted)
    while pos >= 0:
        i = pos + len(quoted)
        while text[i:i + 1] in (" ", "\n", "\r", "\t"):
            i += 1
        if text[i:i + 1] == ":":
            i += 1
            while text[i:i + 1] in (" ", "\n", "\r", "\t"):
                i += 1
            opener = text[i:i + 1]
            if opener == '"':
                end = text.find('"', i + 1)
                if end > 0:
                    out.append(text[i + 1:end])
            elif opener in ("[", "{"):
                end = text.find("]" if opener == "[" else "}", i)
                parts = text[i:end].split('"') if end > 0 else []
                out += [parts[j] for j in range(1, len(parts), 2)
                        if not parts[j + 1].lstrip().startswith(":")] if len(parts) % 2 else []
        pos = text.find(quoted, pos + 1)
    return out


def _printable(text: str) -> bool:
    return text.isprintable() or all(c.isprintable() or c == "\t" for c in text)


def _ccopt_define(fill: str) -> bool:
    """``CCOPT_NAME`` or ``CCOPT_NAME=VALUE`` with identifier characters only: a macro of ours, no code."""
    name, _, value = fill.partition("=")
    return (fill.isascii() and name.startswith("CCOPT_") and name.replace("_", "a").isalnum()
            and (not value or value.replace("_", "a").isalnum()))


def exit_now(code: int) -> None:
    """End the process without the interpreter's teardown (nothing but built-ins was loaded)."""
    if posix is not None:
        posix._exit(code)
    raise SystemExit(code)
