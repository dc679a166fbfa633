"""The commands ``meson.build`` runs (``configure``, ``targets``) and ``ccopt-meson setup``.

This module owns everything about Meson: the line protocol ``meson.build``
reads, the build-dir layout (``meson-private/coredata.dat``), how an explicit
reconfigure is told from ninja's automatic regeneration.

**Line protocol**: ``configure`` prints ``key<TAB>value`` lines and
``targets`` prints ``library<TAB>source<TAB>args`` lines; ``meson.build``
splits them at tabs and lists at spaces.  So no value may hold a tab or a line
break, and no list item a space: names that would are refused where they
enter (``check_field``), never passed on shifted.

**Flush on an explicit reconfigure**: Meson runs ninja's automatic regeneration
and ``meson setup --reconfigure`` through the same code path, and tells a
``run_command`` script nothing about which one it is.  What the helper can see
is its parent, the Meson process: on Linux ``/proc/<ppid>/cmdline`` reads
``meson setup --reconfigure BUILDDIR`` for the explicit case and
``meson --internal regenerate ...`` for ninja's.  Only the first flushes the
cache.  Where ``/proc`` does not exist, ``ccopt-meson setup --reconfigure``
flushes before starting Meson, and ``CCOPT_FLUSH=1`` forces a flush anywhere.
"""

from __future__ import annotations

import os
import re
import sys

from . import cache, dispatch, emit, fsio, pipeline, replay, tables
from .errors import InputError
from .records import Detection, Request
from .stamps import explicit_reconfigure, parent_argv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple, Sequence, Union

    StrPath = Union[str, "os.PathLike[str]"]
else:
    from ._tuple import NamedTuple

__all__ = ["ConfigureOptions", "TargetsOptions", "Kernel", "kernel", "configure", "targets", "run_setup",
           "explicit_reconfigure", "parent_argv", "is_build_dir", "mark_for_reconfigure", "check_field",
           "RESERVED_HEADERS"]

FLUSH_FLAGS = ("--reconfigure", "--wipe", "--clearcache")
# Headers the subproject itself provides: a generated <source>.h must never shadow them.
RUNTIME_TABLE = "ccopt_cpu_table.h"  # emit_runtime.HEADER_NAME, named here so a hit need not load the generator
RESERVED_HEADERS = frozenset({*replay.FORCE_INCLUDED, "ccopt_cpu.h", RUNTIME_TABLE})
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")


class ConfigureOptions(NamedTuple):
    output_dir: StrPath  # the subproject's build dir: ccopt_config.h goes here
    build_dir: StrPath | None = None  # where the cache lives (default: output_dir)
    flush: bool = False
    write_config: bool = False


class TargetsOptions(NamedTuple):
    sources: tuple[str, ...]  # SOURCE (its @targets statement) or 'SOURCE: TARGETS'
    feature_file: StrPath
    output_dir: StrPath | None = None  # default: the calling meson.build's build dir
    optimization: str | None = None  # Meson's optimization option: at 3, $maxopt adds nothing
    prefix: str = "ccopt"  # library names: <prefix>_<TARGET>[_maxopt][_werror]


def is_build_dir(path: StrPath) -> bool:
    """Is ``path`` a configured Meson build directory?"""
    return os.path.isfile(os.path.join(path, "meson-private", "coredata.dat"))


def mark_for_reconfigure(build_dir: StrPath) -> None:
    """build.ninja depends on coredata.dat: touching it makes the next ninja reconfigure."""
    coredata = os.path.join(build_dir, "meson-private", "coredata.dat")
    if os.path.isfile(coredata):
        os.utime(coredata)


def check_field(value: str, what: str, spaces: bool = False) -> str:
    """``value`` if the line protocol can carry it; an InputError naming ``what`` otherwise."""
    if value.isascii() and value.isprintable() and (spaces or " " not in value):
        return value  # the common case, checked at C speed: no control character, no space, nothing to escape
    bad = _UNSAFE.search(value) or (None if spaces else re.search(r"\s", value))
    if bad:
        raise InputError(f"{what} '{value.encode('unicode_escape').decode()[:80]}' contains "
                         f"{'a space' if bad.group() == ' ' else repr(bad.group())}, which the lines meson.build "
                         "reads cannot carry; rename it")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{what} '{value.encode('utf-8', 'surrogateescape').decode('utf-8', 'replace')[:80]}' "
                         "is not valid UTF-8; rename it") from exc
    return value


def _args_field(args: Sequence[str], what: str) -> str:
    text = " ".join(args)
    if text.isascii() and text.isprintable() and text.count(" ") == len(args) - 1:
        return text  # what check_field passes for each, checked at once (hundreds of args per configure)
    return " ".join(check_field(a, what) for a in args)


# --------------------------------------------------------------------------- configure


def _configure_lines(det: Detection, path: str) -> list[str]:
    base_args = det.baseline_args()
    lines = [
        ("arch", det.arch),
        ("compiler", f"{det.compiler.id}-{det.compiler.version}".replace(" ", "_")),
        ("baseline_names", " ".join(det.baseline)),
        ("baseline_args", _args_field(base_args, "baseline argument")),
        ("dispatch_names", " ".join(det.dispatch)),
        ("baseline_request", check_field(det.baseline_request(), "baseline request", spaces=True)),
        ("cache_hit", "true" if det.cache_hit else "false"),
        ("probes", str(det.probes)),
        ("feature_file", check_field(os.path.realpath(path), "build directory", spaces=True)),
    ]
    warning = pipeline.guaranteed_failure(det.table, det.outcomes, det.compiler.command)
    if warning:  # meson.build shows it with warning(); the notes reach only meson-log.txt
        text = "".join(c if c.isascii() and c.isprintable() else "?" for c in warning.removeprefix("warning: "))
        lines.append(("warning", text))  # compiler output: printable ASCII only, to fit the line protocol
    # every enabled target gets its line (no @targets policy applies here: no tie filter)
    for name in det.dispatch:
        lines.append((f"target:{name}", _args_field(dispatch.make_target(det, [name]).args, "target argument")))
    lines.append(("target:BASELINE", _args_field(dispatch.baseline_target(det).args, "baseline argument")))
    return [f"{k}\t{v}" for k, v in lines]


def configure(req: Request, opts: ConfigureOptions) -> int:
    """Detect for one language, write ``ccopt_config.h`` if asked, print the lines meson.build reads."""
    flush = opts.flush or explicit_reconfigure(parent_argv())
    cache_dir = opts.build_dir or opts.output_dir
    det = pipeline.detect(req, build_dir=cache_dir, flush_first=flush)
    if opts.write_config:
        emit.write_if_changed(os.path.join(opts.output_dir, "ccopt_config.h"), emit.config_header(det))
        _write_runtime_table(opts.output_dir, cache.data_digest(cache_dir))
    notes = "".join(f"ccopt-meson: note: {note}\n" for note in det.notes)
    sys.stderr.write(notes)  # stdout is for meson.build; notes land in meson-log.txt
    path = cache.cache_file(cache_dir, req.lang)
    lines = _configure_lines(det, path)
    sys.stdout.write("\n".join(lines) + "\n")
    if not pipeline.wants_native(req):  # 'native' answers for this CPU: never replayed
        written = [os.path.join(opts.output_dir, n) for n in ("ccopt_config.h", RUNTIME_TABLE) if opts.write_config]
        as_hit = {"cache_hit": "cache_hit\ttrue", "probes": "probes\t0"}  # what the next run, a hit, prints
        text = "".join(as_hit.get(line.partition("\t")[0], line) + "\n" for line in lines)
        replay.save(cache_dir, det.family, text, tables.project_files(), req.command, notes, [path, *written])
    return 0


# --------------------------------------------------------------------------- targets


class Kernel(NamedTuple):
    """One dispatch source and its targets, as ``meson.build`` named them."""

    source: str  # what the line hands back to static_library(): relative to the caller's directory
    statement: dispatch.Statement
    origin: str  # where the target list came from, for the header's banner


def _shown(path: str) -> str:
    """A source path for messages: relative to the project (``src/k.dispatch.c``), never bare."""
    for base in (os.environ.get("MESON_SOURCE_ROOT"), os.getcwd()):
        if base and os.path.isabs(path):
            rel = os.path.relpath(path, base)
            if not rel.startswith(".."):
                return rel
    return path


def _for_meson(path: str) -> str:
    """The source as the caller's static_library() reads it: relative to its directory when inside it.

    Meson names an object after the source path it was given, so an absolute path (what
    ``files()`` hands a command) would put the whole path into every object's name.
    """
    if os.path.isabs(path):
        rel = os.path.relpath(path, os.getcwd())
        if not rel.startswith(".."):
            path = rel
    return check_field(path.replace(os.sep, "/"), "dispatch source")


def kernel(arg: str) -> Kernel:
    """``SOURCE`` (its own ``@targets`` statement) or ``SOURCE: TARGETS`` (the list given in meson.build)."""
    if os.path.isfile(arg) or ":" not in arg:  # a path (Windows ones hold ':' too)
        st = dispatch.parse_file(arg, _shown(arg))
        return Kernel(_for_meson(arg), st, "the @targets statement")
    source, _, text = arg.rpartition(":")  # no target list holds ':'
    source = source.strip()
    return Kernel(_for_meson(source), dispatch.parse_targets(text, f"targets of {source}"), "the target list")


def _header_path(source: str, out_dir: StrPath) -> str:
    """Where ``<source>.h`` goes; refused when it would shadow, replace or overwrite what is not ours."""
    name = emit.header_name(source)
    path = os.path.join(out_dir, name)
    if name in RESERVED_HEADERS:
        raise InputError(f"dispatch source '{source}' would generate {name}, which is one of ccopt-meson's own "
                         "headers; rename the source")
    if os.path.realpath(path) == os.path.realpath(source):
        raise InputError(f"dispatch source '{source}' would be replaced by its own generated header; "
                         "rename it (e.g. to NAME.dispatch.c) or pass another --output-dir")
    if not fsio.generated_by_us(path):
        raise InputError(f"{fsio.show_path(path)} exists and was not generated by ccopt-meson; it would be overwritten "
                         f"by the header of '{source}': move it, rename the source, or pass another --output-dir")
    return path


def _library(prefix: str, target: dispatch.Target, policies: frozenset[str]) -> str:
    """One library per distinct set of compile args: the target plus the policies that change args."""
    opt = "_maxopt" if policies & {"MAXOPT", "AUTOVEC"} else ""
    return f"{prefix}_{target.name}{opt}{'_werror' if 'WERROR' in policies else ''}"


def _target_args(det: Detection, target: dispatch.Target, opts: TargetsOptions) -> list[str]:
    """What the library adds to the dependency's args: no baseline flag twice, no -O3 Meson already gives."""
    given = set(det.baseline_args())
    if opts.optimization == "3":  # Meson's highest level already is what $maxopt asks for
        given |= set(det.policy.opt)
    return [*_force_include(det), *(a for a in target.args if a not in given)]


def _force_include(det: Detection) -> list[str]:
    """Every version is compiled with ccopt's two headers included first: a kernel that forgets
    them still builds, instead of failing on CCOPT_FN or an intrinsic type in the compiler's words."""
    spelling = det.table.spec.driver.get("force_include") if det.table else None
    return [w.format(h) for h in replay.FORCE_INCLUDED for w in spelling or ()]


def targets(opts: TargetsOptions) -> int:
    """``LIBRARY<TAB>args<TAB>sources`` lines, one per distinct set of compile args; writes each ``<source>.h``.

    One process for all sources of a project (every helper start costs a Python start-up on
    every configure), and one static library per target rather than per source and target:
    Meson's own work per library dominates configure time at numpy's scale.
    """
    det = _read_feature_file(opts.feature_file)
    out_dir = opts.output_dir or _caller_build_dir()
    kernels = [kernel(arg) for arg in opts.sources]
    headers = [emit.header_name(k.source) for k in kernels]
    clash = next((h for h in headers if headers.count(h) > 1), None)
    if clash:  # both would write the same <source>.h into one build directory
        raise InputError(f"two dispatch sources would share the generated header {clash}; "
                         "rename one, or call 'targets' from each source's own meson.build")
    check_field(opts.prefix, "--prefix")
    # every header path is checked before any is written
    plan = [(k, _header_path(k.source, out_dir), dispatch.select(k.statement, det)) for k in kernels]
    groups: dict[str, tuple[list[str], list[str]]] = {}  # library -> (args, sources)
    for k, header, chosen in plan:
        emit.write_if_changed(header, emit.dispatch_header(k.source, chosen, k.origin))
        for t in chosen:
            args, sources = groups.setdefault(_library(opts.prefix, t, k.statement.policies),
                                              (_target_args(det, t, opts), []))
            sources.append(k.source)
    text = "".join(f"{lib}\t{_args_field(args, 'target argument')}\t{' '.join(srcs)}\n"
                   for lib, (args, srcs) in groups.items())
    sys.stdout.write(text)
    parsed = [a for a in opts.sources if os.path.isfile(a)]  # sources whose own @targets statement was read
    replay.save(os.path.dirname(os.fspath(opts.feature_file)) or ".", det.family, text,
                [opts.feature_file, *parsed, *tables.project_files()], written=[h for _, h, _ in plan])
    return 0


def _write_runtime_table(out_dir: str | os.PathLike[str], digest: str) -> None:
    """``ccopt_cpu_table.h`` (what ccopt_cpu.c walks) for the current tables: never a stale copy.

    A table made from these tables already is left alone without loading the generator.
    """
    try:
        head = fsio.read_head(os.path.join(out_dir, RUNTIME_TABLE), 1024)
    except OSError:
        head = None
    if head is None or tables.provenance(digest).encode() not in head:
        from .emit_runtime import write_table  # the generator loads only when the tables changed

        write_table(out_dir, digest)


def _caller_build_dir() -> str:
    root = os.environ.get("MESON_BUILD_ROOT")
    if not root:
        raise InputError("--output-dir is required outside Meson (MESON_BUILD_ROOT is not set)")
    return os.path.join(root, os.environ.get("MESON_SUBDIR", ""))


def _read_feature_file(path: StrPath) -> Detection:
    if not cache.is_cache_name(path):
        raise InputError(f"--feature-file: '{fsio.show_path(path)}' is not a ccopt feature file (ccopt-features.json)")
    parent = os.path.dirname(os.fspath(path)) or "."  # Path(path).parent without pathlib
    return pipeline.read_file(path, f"'ccopt-meson detect --build-dir {parent}' or configure first")


# --------------------------------------------------------------------------- setup


def _meson_command() -> list[str]:
    import shutil

    found = shutil.which("meson")
    return [found] if found else [sys.executable, "-m", "mesonbuild.mesonmain"]


def run_setup(args: Sequence[str]) -> int:
    """``meson setup ARGS``; with --reconfigure/--wipe/--clearcache the caches are flushed first."""
    args = list(args[1:]) if args[:1] == ["--"] else list(args)
    flushing = any(a in FLUSH_FLAGS for a in args)
    for cand in (a for a in args if not a.startswith("-")) if flushing else ():
        if is_build_dir(cand):
            cache.flush(cand)
    # Meson's own configure run sees CCOPT_FLUSH too, on every OS (no /proc needed).
    env = dict(os.environ, CCOPT_FLUSH="1") if flushing else None
    import subprocess

    return subprocess.call([*_meson_command(), "setup", *args], env=env)
