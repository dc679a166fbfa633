"""The commands ``meson.build`` runs (``configure``, ``targets``) and ``ccopt-meson setup``.

This module owns everything about Meson: the line protocol ``meson.build``
reads, the build-dir layout (``meson-private/coredata.dat``), how an explicit
reconfigure is told from ninja's automatic regeneration.

**Line protocol**: ``configure`` prints ``key<TAB>value`` lines and
``targets`` prints ``library<TAB>source<TAB>args`` lines; ``meson.build``
splits them at tabs and lists at spaces.  So no value may hold a tab or a line
break, and no list item a space: names that would are refused where they
enter (``check_field``), never passed on shifted.

**Flush on an explicit reconfigure**: ``meson setup --reconfigure`` (also with ``--clearcache``)
flushes the feature cache and probes again, while ninja's automatic regeneration reuses it: a
user who changed something the key cannot see (a wrapper that picks its compiler from a file it
reads, a new assembler behind the same path) has one documented command that starts over.  Meson
runs both through the same code path and tells a ``run_command`` script nothing about which one it
is.  What the helper can see is its parent, the Meson process: on Linux ``/proc/<ppid>/cmdline``
reads ``meson setup --reconfigure BUILDDIR`` for the explicit case and ``meson --internal
regenerate ...`` for ninja's.  Only the first flushes the cache.  Where ``/proc`` does not exist,
``ccopt-meson setup --reconfigure`` flushes before starting Meson, and ``CCOPT_FLUSH=1`` forces a
flush anywhere.
"""

from __future__ import annotations

import os
import re
import shutil
import sys

from . import cache, dispatch, emit, fsio, hwcaps, pipeline, schema
from ._record import TYPE_CHECKING, NamedTuple
from .digest import data_digest, provenance
from .errors import InputError, TableError
from .records import Detection, Macros, Request
from .tables import check_macros, macro_style
from .tokens import show

if TYPE_CHECKING:
    from typing import Sequence, Union

    from .tables import Project

    StrPath = Union[str, "os.PathLike[str]"]

__all__ = ["ConfigureOptions", "TargetsOptions", "Kernel", "kernel", "paired", "configure", "targets", "run_setup",
           "explicit_reconfigure", "parent_argv", "configuring", "is_build_dir", "build_root_of", "read_configured",
           "mark_for_reconfigure", "check_field", "RESERVED_HEADERS"]

FLUSH_FLAGS = ("--reconfigure", "--wipe", "--clearcache")
# Headers the subproject itself provides: a generated <source>.h must never shadow them.
RUNTIME_TABLE = "ccopt_cpu_table.h"  # emit_runtime.HEADER_NAME, named here so a hit need not load the generator
# Included ahead of every dispatched version (see _force_include): the build's kernel facts, the dispatch macros.
FORCE_INCLUDED = ("ccopt_kernel.h", "ccopt_dispatch.h")
RESERVED_HEADERS = frozenset({*FORCE_INCLUDED, "ccopt_config.h", "ccopt_cpu.h", RUNTIME_TABLE})
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")


class ConfigureOptions(NamedTuple):
    output_dir: StrPath  # the subproject's build dir: ccopt_config.h goes here
    build_dir: StrPath | None = None  # where the cache lives (default: output_dir)
    flush: bool = False
    write_config: bool = False
    runtime: bool = True  # the subproject's runtime option: false when the project keeps a run-time of its own


class TargetsOptions(NamedTuple):
    sources: tuple[str, ...]  # SOURCE (its @targets statement) or 'SOURCE: TARGETS'
    cache_file: StrPath  # the cached detection configure wrote (--cache-file)
    output_dir: StrPath | None = None  # default: the calling meson.build's build dir
    optimization: str | None = None  # Meson's optimization option: at 3, $maxopt adds nothing
    prefix: str = "ccopt"  # library names: <prefix>_<TARGET>[_maxopt][_werror]
    project: Project | None = None  # the project features file configure was given
    lang: str | None = None  # "c" (the subproject's `targets`) or "cpp" (`targets_cpp`); None: any source
    hwcaps: str | None = None  # a glibc-hwcaps level: the lines and headers of that variant alone (its own directory)
    variants: tuple[str, ...] = ()  # glibc-hwcaps levels whose lines follow the library's own, ending in the level


# Meson picks a source's compiler by its suffix (the C++ ones of its compilers table).
_CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".C", ".ipp", ".ixx", ".hh", ".hpp", ".hxx")


def _check_language(source: str, lang: str | None) -> None:
    """A C++ source in the C call compiles without its target's flags (they are c_args), and the other
    way round: named here, instead of as an undeclared kernel in the compiler's words."""
    is_cpp = source.endswith(_CPP_SUFFIXES)
    if lang == "c" and is_cpp:
        raise InputError(f"dispatch source '{source}' is C++, but was passed to ccopt's C 'targets'; pass it to "
                         "ccopt.get_variable('targets_cpp'), build its libraries with cpp_args:, and set "
                         "ccopt-meson:languages=c,cpp")
    if lang == "cpp" and source.endswith(".c"):
        raise InputError(f"dispatch source '{source}' is C, but was passed to 'targets_cpp'; pass it to "
                         "ccopt.get_variable('targets') and build its libraries with c_args:")


def parent_argv() -> list[str] | None:
    """The parent process's command line, where the OS tells it (Linux)."""
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as fh:
            raw = fh.read(fsio.LIMITS.command_line)
    except OSError:
        return None
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]


def explicit_reconfigure(argv: Sequence[str] | None) -> bool:
    """Is this run part of ``meson setup --reconfigure`` (or ``CCOPT_FLUSH`` set), not ninja's regeneration?"""
    if os.environ.get("CCOPT_FLUSH", "") not in ("", "0"):
        return True
    if not argv or "--internal" in argv:
        return False
    return any(a in ("--reconfigure", "--clearcache") for a in argv)


def is_build_dir(path: StrPath) -> bool:
    """Is ``path`` a configured Meson build directory?"""
    return os.path.isfile(os.path.join(path, "meson-private", "coredata.dat"))


def build_root_of(path: StrPath) -> str:
    """The Meson build directory holding ``path`` (a subproject's feature cache is a few levels down), else
    the directory of ``path``."""
    here = folder = os.path.dirname(os.path.abspath(path))
    while not is_build_dir(folder):
        if os.path.dirname(folder) == folder:
            return here
        folder = os.path.dirname(folder)
    return folder


def read_configured(path: StrPath, project: Project | None = None,
                    how_to_make: str = "configure first") -> Detection:
    """The detection of a configured build's feature cache (``pipeline.read_file``); when the features file or a
    probe changed since, the error names the command that configures that build again."""
    try:
        return pipeline.read_file(path, how_to_make, project)
    except cache.ProjectChanged as exc:
        raise InputError(f"{exc.what}; {exc.remedy(fsio.show_path(build_root_of(path)))}") from exc


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


def _configure_lines(det: Detection, path: str) -> list[tuple[str, str]]:
    base_args = det.baseline_args()
    lines = [
        ("arch", det.arch),
        ("compiler", check_field(f"{det.compiler.id}-{det.compiler.version}".replace(" ", "_"), "compiler version")),
        ("baseline_names", " ".join(det.baseline)),
        ("baseline_args", _args_field(base_args, "baseline argument")),
        # the baseline's macros without its flags: the run-time library is compiled for the architecture's
        # minimum, so that its before-main check runs on a CPU below the baseline (docs/reference/runtime.md)
        ("baseline_defines", _args_field(det.defines(det.baseline) if det.baseline else [], "baseline argument")),
        ("dispatch_names", " ".join(det.dispatch)),
        ("baseline_request", check_field(det.baseline_request(), "baseline request", spaces=True)),
        # the run-time's words for a CPU below the baseline: what set it, and what lowers it
        *zip(("baseline_cause", "baseline_cure"), det.request.baseline_cause()),
        ("cache_hit", "true" if det.cache_hit else "false"),
        ("probes", str(det.probes)),
        ("cache_file", check_field(os.path.realpath(path), "build directory", spaces=True)),
        # its old name, for a parent that reads its own configure's lines (docs/how-to/parent-options.md):
        # kept beside it for one minor release (CHANGELOG, "Deprecation")
        ("feature_file", check_field(os.path.realpath(path), "build directory", spaces=True)),
        # NAME:STATE for every feature of the machine (Detection.state): the subproject's feature_states
        ("feature_states", " ".join(f"{n}:{det.state(n)}" for n in (det.table.features if det.table else ()))),
        # the glibc-hwcaps levels this build makes variants for, lowest first (their args: the hwcaps keyval file)
        ("hwcaps_levels", " ".join(lv.name for lv in hwcaps.buildable(det))),
        ("hwcaps_features", " ".join(lv.feature for lv in hwcaps.buildable(det))),
    ]
    # pipeline.guaranteed_failure's, a retired name's: one line, which meson.build shows with warning()
    warning = "; ".join(n.removeprefix("warning: ") for n in det.notes if n.startswith("warning: "))
    if warning:  # and the other notes with message()
        text = "".join(c if c.isascii() and c.isprintable() else "?" for c in warning)
        lines.append(("warning", text))  # compiler output: printable ASCII only, to fit the line protocol
    # every enabled target gets its line (no @targets policy applies here: no tie filter)
    for name in det.dispatch:
        lines.append((f"target:{name}", _args_field(dispatch.make_target(det, [name]).args, "target argument")))
    lines.append(("target:BASELINE", _args_field(dispatch.baseline_target(det).args, "baseline argument")))
    return lines


# What meson.build reads with import('keyval').load(): one call, where a loop over the printed lines costs
# Meson's interpreter a few statements a line (about 100 lines: every target's args, every feature's state).
KEYVAL_FILES = {"targets": "ccopt-configure-{lang}-targets.txt", "states": "ccopt-configure-{lang}-states.txt",
                "hwcaps": "ccopt-configure-{lang}-hwcaps.txt",
                "hwcaps_defines": "ccopt-configure-{lang}-hwcaps-defines.txt",
                "hwcaps_skipped": "ccopt-configure-{lang}-hwcaps-skipped.txt"}


def _keyval_text(pairs: Sequence[tuple[str, str]], what: str) -> str:
    """``NAME=value`` lines; keyval.load ends a line at a '#' (a comment), so no value may hold one."""
    for name, value in pairs:
        if "#" in value:
            raise InputError(f"{what} '{value[:80]}' of {name} contains a '#', which the file meson.build reads "
                             "cannot carry; remove it")
    return f"# {fsio.MARK}: the {what}s of this build, read by meson.build\n" + "".join(
        f"{name}={value}\n" for name, value in pairs)


def _write_keyval(out_dir: StrPath, lang: str, lines: Sequence[tuple[str, str]], det: Detection) -> None:
    targets = [(k.removeprefix("target:"), v) for k, v in lines if k.startswith("target:")]
    states = [(n, det.state(n)) for n in (det.table.features if det.table else ())]
    variants = [(lv, hwcaps.variant(det, lv)) for lv in hwcaps.buildable(det)]
    levels = [(lv.name, _args_field(var.baseline_args(), "baseline argument")) for lv, var in variants]
    # what the level's copy of the run-time is compiled with: the macros without the flags (as baseline_defines)
    defines = [(lv.name, _args_field(var.defines(var.baseline), "baseline argument")) for lv, var in variants]
    # why a level of the machine gets no variant; a compiler's words may hold a '#', which the file cannot carry
    skipped = [(lv.name, reason.replace("#", "")) for lv in hwcaps.levels(det.table)
               for reason in [hwcaps.why_not(det, lv)] if reason is not None]
    for kind, pairs, what in (("targets", targets, "target argument"), ("states", states, "feature state"),
                              ("hwcaps", levels, "baseline argument"), ("hwcaps_defines", defines, "baseline argument"),
                              ("hwcaps_skipped", skipped, "reason")):
        path = os.path.join(out_dir, KEYVAL_FILES[kind].format(lang=lang))
        if not fsio.generated_by_us(path):
            raise InputError(f"{fsio.show_path(path)} exists and was not generated by ccopt-meson; move it, or pass "
                             "another --output-dir")
        emit.write_if_changed(path, _keyval_text(pairs, what))


def configure(req: Request, opts: ConfigureOptions) -> int:
    """Detect for one language, write ``ccopt_config.h`` if asked, print the lines meson.build reads."""
    check_macros(req.macros.prefix, req.macros.style, opts.runtime)  # before anything runs or is written
    flush = opts.flush or explicit_reconfigure(parent_argv())
    cache_dir = opts.build_dir or opts.output_dir
    det = pipeline.detect(req, build_dir=cache_dir, flush_first=flush)
    if opts.write_config:
        emit.write_if_changed(os.path.join(opts.output_dir, emit.KERNEL_HEADER), emit.kernel_header(det))
        emit.write_if_changed(os.path.join(opts.output_dir, "ccopt_config.h"), emit.config_header(det))
        _write_runtime_table(opts.output_dir, req.project, det.request.macros)
        _write_variant_headers(opts.output_dir, det)
    # stdout is for meson.build; the notes, on stderr, are its messages (a warning has a line of its own)
    notes = "".join(f"ccopt-meson: note: {note}\n" for note in det.notes if not note.startswith("warning: "))
    sys.stderr.write(notes)
    path = cache.cache_file(cache_dir, req.lang)
    lines = _configure_lines(det, path)
    _write_keyval(opts.output_dir, req.lang, lines, det)
    sys.stdout.write("".join(f"{k}\t{v}\n" for k, v in lines))
    return 0


def _write_variant_headers(out_dir: StrPath, det: Detection) -> None:
    """Each glibc-hwcaps variant's ``ccopt_kernel.h`` and ``ccopt_config.h``, in ``glibc-hwcaps/<level>/``:
    the subproject's ``hwcaps`` dependencies put that directory ahead of the build's own headers."""
    for lv in hwcaps.buildable(det):
        var = hwcaps.variant(det, lv)
        folder = os.path.join(out_dir, hwcaps.subdir(lv))
        emit.write_if_changed(os.path.join(folder, emit.KERNEL_HEADER), emit.kernel_header(var))
        emit.write_if_changed(os.path.join(folder, "ccopt_config.h"), emit.config_header(var))


# --------------------------------------------------------------------------- targets


class Kernel(NamedTuple):
    """One dispatch source and its targets, as ``meson.build`` named them."""

    source: str  # what the line hands back to static_library(): relative to the caller's directory
    statement: dispatch.Statement
    origin: str  # where the target list came from, for the header's banner


if TYPE_CHECKING:
    Plan = list[tuple[Kernel, str | None, list[dispatch.Target]]]  # each source, its header's path, its versions


def _shown(path: str) -> str:
    """A source path for messages: relative to the project (``src/k.dispatch.c``), never bare."""
    for base in (os.environ.get("MESON_SOURCE_ROOT"), os.getcwd()):
        if base and os.path.isabs(path):
            rel = os.path.relpath(path, base)
            if not rel.startswith(".."):
                return rel
    return path


# The calling meson.build's source directory: Meson runs a run_command() there, so relative paths are relative to it.
_CALLER_DIR = os.curdir


def _for_meson(path: str) -> str:
    """The source as the caller's static_library() reads it: relative to its directory when inside it or
    anywhere in the project (``../x86/k.c`` from a sibling), absolute outside (a vendor's ``/opt/sdk/k.c``).

    Meson names an object after the source path it was given, so an absolute path (what
    ``files()`` hands a command) would put the whole path into every object's name.  Only the path as it
    travels must fit the line protocol: a project under ``/home/me/My Projects`` is no reason to refuse.
    """
    if os.path.isabs(path):
        rel = os.path.relpath(path, _CALLER_DIR)
        if not rel.startswith("..") or _in_project(path):
            path = rel
    return check_field(path.replace(os.sep, "/"), "dispatch source")


def _in_project(path: str) -> bool:
    """Is the absolute ``path`` below the top source directory of the Meson run (unknown outside Meson)?"""
    root = os.environ.get("MESON_SOURCE_ROOT")
    if not root:
        return False
    try:  # Windows: another drive
        return not os.path.relpath(path, root).startswith("..")
    except ValueError:
        return False


def kernel(arg: str, project: Project | None = None) -> Kernel:
    """``SOURCE`` (its own ``@targets`` statement) or ``SOURCE: TARGETS`` (the list given in meson.build)."""
    if os.path.isfile(arg) or ":" not in arg:  # a path (Windows ones hold ':' too)
        st = dispatch.parse_file(arg, _shown(arg), project)
        return Kernel(_for_meson(arg), st, "the @targets statement")
    source, _, text = arg.rpartition(":")  # no target list holds ':'
    source = source.strip()
    if not source:
        raise InputError(f"targets: '{show(arg)}' names no source before the ':'; write 'SOURCE: TARGETS'")
    return Kernel(_for_meson(source), dispatch.parse_targets(text, f"targets of {source}", project), "the target list")


def paired(args: Sequence[str]) -> list[str]:
    """``files('k.c'), ': avx2'`` as ``'k.c: avx2'``: a target list right after a source Meson handed over as a
    path (``files()``, what a port of someone else's tree has) is that source's list."""
    out: list[str] = []
    alone = False  # the previous argument is a source without a list
    for arg in args:
        if alone and arg.lstrip().startswith(":"):
            out[-1] = f"{out[-1]}{arg.strip()}"
            alone = False
            continue
        out.append(arg)
        alone = os.path.isfile(arg) or ":" not in arg
    return out


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
    # Meson puts a directory's build dir on the include path right before the directory itself (every target's
    # implicit include dirs, include_directories('.')): a header of that name in the caller's directory, the
    # twin of the output dir, or beside the source is found in the build dir instead by every file elsewhere.
    for own in dict.fromkeys(os.path.normpath(os.path.join(d, name)) for d in (os.path.dirname(source), _CALLER_DIR)):
        if os.path.isfile(own) and not fsio.generated_by_us(own):
            raise InputError(f"dispatch source '{source}' would generate {name}, which shadows the project's own "
                             f"{fsio.show_path(own)}; rename the source (e.g. to "
                             f"{name[:-2]}.dispatch{os.path.splitext(source)[1]})")
    return path


def configuring(argv: Sequence[str] | None) -> bool:
    """Is the parent ``argv`` Meson configuring a build (``meson setup``, ninja's ``meson --internal
    regenerate``)?  A run_target or an install script also sees ``MESON_BUILD_ROOT``, but runs under ninja
    or ``meson install``, where two calls are no two ``targets`` calls of one configure."""
    if not argv:
        return False
    if "--internal" in argv:
        return "regenerate" in argv[argv.index("--internal"):]
    return "setup" in argv


def _meson_run() -> list[str] | None:
    """The Meson configure process running this helper, as (pid, start time), on Linux under Meson only."""
    if not os.environ.get("MESON_BUILD_ROOT") or not configuring(parent_argv()):
        return None
    ppid = os.getppid()
    try:
        with open(f"/proc/{ppid}/stat", "rb") as fh:  # bytes: a text file would load the ascii codec module
            stat = fh.read(fsio.LIMITS.command_line)
        start = stat.rsplit(b")", 1)[1].split()[19].decode("ascii", "replace")  # field 22, starttime
    except (OSError, IndexError):
        return None
    return [str(ppid), start]


def _check_source_ids(sources: list[str]) -> None:
    """Each source's macros are named after its id (``a-b.dispatch.c`` and ``a_b.dispatch.c`` are both
    ``a_b_dispatch``): two sources of one id would share them, and a caller would run one source's versions
    with the other's checks."""
    seen: dict[str, str] = {}
    for source in sources:
        sid = emit.source_id(source)
        if seen.setdefault(sid, source) != source:
            raise InputError(f"dispatch sources '{seen[sid]}' and '{source}' have the same macro id {sid} "
                             "(every character but letters, digits and '_' becomes '_'), so their headers would "
                             "share one set of macros; rename one of them")


def _check_one_call_per_prefix(out_dir: StrPath, prefix: str, sources: list[str]) -> None:
    """A second ``targets`` call of one Meson run in one directory, with the same prefix, would make
    libraries of the same names, which Meson refuses in its own words: named here, with the way out."""
    import json

    run = _meson_run()
    if run is None or not sources:
        return
    path = os.path.join(out_dir, f"ccopt-targets-{prefix}.json")
    try:  # a record that is missing, not a regular file, too big or not ours is no earlier call
        last = schema.read_document(path, fsio.LIMITS.call_record, "targets call record", "cache.schema.json",
                                    "targets_call").value
    except (OSError, InputError, TableError):
        last = None
    if last is not None and last["meson"] == run and last["sources"] != sources:
        first = last["sources"]
        raise InputError(f"a second 'targets' call in {fsio.show_path(out_dir)} ('{sources[0]}' after "
                         f"'{first[0]}') with prefix '{prefix}' would make libraries of the same names; pass "
                         "'--prefix', 'NAME' to one of the calls (libraries are named PREFIX_TARGET)")
    record = {"generator": fsio.MARK, "key": "ccopt-targets-call-v1", "meson": run, "sources": sources}
    try:
        schema.check(record, "cache.schema.json", "targets_call")  # never a record its own reader refuses
    except TableError:
        return
    if fsio.generated_by_us(path):  # never a file of someone else's under that name
        fsio.atomic_write(path, json.dumps(record) + "\n")


def _below_level(k: Kernel, det: Detection) -> list[str]:
    """The targets of this machine in ``k``'s list, when every one is in the baseline (else none)."""
    assert det.table is not None
    mine = ["__".join(t) for t in k.statement.targets if all(n in det.table.features for n in t)]
    return mine if mine and all(set(t.split("__")) <= set(det.baseline) for t in mine) else []


def _check_something_is_built(k: Kernel, chosen: list[dispatch.Target], det: Detection) -> None:
    """Every target of this machine is in the baseline and the list has no ``baseline``: no version
    would be built, and every caller would find none at run time."""
    if chosen or det.table is None:
        return
    mine = _below_level(k, det)
    if mine:
        raise InputError(f"{k.source}: every target for {det.arch} ({', '.join(mine)}) is part of the baseline "
                         "and the list has no 'baseline': nothing would be built; add 'baseline' to the list "
                         "(or '$keep_baseline' to build those targets anyway)")


def _renamed(k: Kernel) -> str:
    """The warnings for a target list's retired names, as cpu-dispatch gives them."""
    return "".join(f"ccopt-meson: warning: targets of {k.source}: {old} is no longer a feature name of this project"
                   + (f"; it stands for {new}\n" if new else " and is ignored\n") for old, new in k.statement.renamed)


def _empty_lists(kernels: list[Kernel]) -> list[str]:
    """A list naming no target is one computed empty in meson.build (numpy's for -Ddisable-intel-sort; any
    other is refused by the grammar): said in a note, since the source then builds nothing."""
    return [f"targets: {k.source}: the target list is empty: no version is built, and "
            f"{emit.header_name(k.source)} dispatches nothing" for k in kernels
            if not k.statement.baseline and not k.statement.targets]


def _dropped_targets(kernels: list[Kernel], det: Detection) -> list[str]:
    """One note per target of the lists that this build does not compile, with why (on stderr, which Meson logs;
    the canonical meson.build shows it with ``message()``); a reason shared by several sources is said once."""
    where: dict[tuple[str, str], list[str]] = {}
    for k in kernels:
        for members, why in dispatch.dropped(k.statement, det):
            sources = where.setdefault((dispatch.target_name(members), why), [])
            sources += [] if k.source in sources else [k.source]
    notes = []
    for (name, why), sources in where.items():
        more = f" and {len(sources) - 1} more" if len(sources) > 1 else ""
        notes.append(f"targets: {name} dropped from {sources[0]}{more}: {why}")
    return notes


def _compiled(plan: Plan, level: hwcaps.Level | None = None) -> list[str]:
    """What the configure summary cannot know: the versions this project compiles, one note per source (and level)."""
    at = f" at {level.name}" if level is not None else ""
    return [f"targets: {k.source}: compiled versions{at}: {' '.join(t.name for t in chosen)}"
            for k, _, chosen in plan if chosen]


def _library(prefix: str, target: dispatch.Target, policies: frozenset[str]) -> str:
    """One library per distinct set of compile args: the target plus the policies that change args."""
    opt = "_maxopt" if policies & {"MAXOPT", "AUTOVEC"} else ""
    return f"{prefix}_{target.name}{opt}{'_werror' if 'WERROR' in policies else ''}"


def _given_args(det: Detection, opts: TargetsOptions) -> frozenset[str]:
    """What every library already gets: the dependency's baseline args and Meson's own -O3."""
    given = set(det.baseline_args())
    if opts.optimization == "3":  # Meson's highest level already is what $maxopt asks for
        given |= set(det.policy.opt)
    return frozenset(given)


def _target_args(det: Detection, target: dispatch.Target, given: frozenset[str]) -> list[str]:
    """What the library adds to the dependency's args (``given``): no baseline flag twice, no -O3 twice."""
    return [*_force_include(det), *(a for a in target.args if a not in given)]


def _force_include(det: Detection) -> list[str]:
    """Every version is compiled with ccopt's two headers included first: a kernel that forgets
    them still builds, instead of failing on CCOPT_FN or an intrinsic type in the compiler's words."""
    spelling = det.table.spec.driver.get("force_include") if det.table else None
    if not macro_style(det.request.macros.style)["force_include"]:  # a project with its own protocol
        return []
    return [w.format(h) for h in FORCE_INCLUDED for w in spelling or ()]


def targets(opts: TargetsOptions) -> int:
    """``LIBRARY<TAB>args<TAB>sources<TAB>TARGET`` lines, one per distinct set of compile args; writes each
    ``<source>.h`` (none for a source whose list has ``$noheader``).  With ``variants``, the lines of each of
    those glibc-hwcaps levels follow the library's own, each ending in ``<TAB>LEVEL``.

    One process for all sources of a project, and for the library and all its variants (every helper start
    costs a Python start-up on every configure), and one static library per target rather than per source
    and target: Meson's own work per library dominates configure time at numpy's scale.
    """
    det = _read_cache_file(opts.cache_file, opts.project)
    builds = _builds(det, opts)
    # the features file the cache records (the one given, checked to be it): no --features-file needed
    kernels = [kernel(arg, det.request.project) for arg in paired(opts.sources)]
    _check_sources(kernels, opts)
    _check_one_call_per_prefix(builds[0][2], opts.prefix, [k.source for k in kernels])
    # every build is planned, and every header path checked, before any header is written
    plans = [_plan(kernels, level, d, out_dir) for level, d, out_dir in builds]
    notes = [n for (level, d, _), plan in zip(builds, plans) for n in _notes(kernels, level, d, plan)]
    sys.stderr.write("".join(f"ccopt-meson: note: {n}\n" for n in dict.fromkeys(notes)))  # each said once
    sys.stderr.write("".join(_renamed(k) for k in kernels))
    tagged = bool(opts.variants)  # a variant's lines end in its level when the library's own lines come too
    text = "".join(_lines(opts, d, plan, level.name if tagged and level else None)
                   for (level, d, _), plan in zip(builds, plans))
    compiled = [n for (level, _, _), plan in zip(builds, plans) for n in _compiled(plan, level)]
    sys.stderr.write("".join(f"ccopt-meson: note: {n}\n" for n in compiled))  # once nothing can fail
    sys.stdout.write(text)
    return 0


def _builds(det: Detection, opts: TargetsOptions) -> list[tuple[hwcaps.Level | None, Detection, StrPath]]:
    """What one call answers for: (level, its detection, where its headers go); level None is the library
    itself.  Every variant is the one detection with its baseline raised (``hwcaps.variant``)."""
    if opts.hwcaps is not None:  # that variant alone, its headers in its own directory
        lv = hwcaps.level(det, opts.hwcaps)
        return [(lv, hwcaps.variant(det, lv), opts.output_dir or _caller_build_dir(hwcaps.subdir(lv)))]
    levels = [hwcaps.level(det, name) for name in dict.fromkeys(opts.variants)]
    variants = [(lv, hwcaps.variant(det, lv)) for lv in levels]
    out_dir = opts.output_dir or _caller_build_dir()
    # a variant's headers go where Meson's build_subdir puts its targets: glibc-hwcaps/<level>/ of the build dir
    return [(None, det, out_dir), *((lv, var, os.path.join(out_dir, hwcaps.subdir(lv))) for lv, var in variants)]


def _check_sources(kernels: list[Kernel], opts: TargetsOptions) -> None:
    """What no build of the call may have: a source of the other language, two sources of one header or macro
    id, a prefix that is no plain name."""
    for k in kernels:
        _check_language(k.source, opts.lang)
    # a $noheader source has no header and no macros: nothing of its name can clash (its libraries are
    # named after its targets, as every source's)
    with_header = [k.source for k in kernels if "NOHEADER" not in k.statement.policies]
    headers = [emit.header_name(source) for source in with_header]
    clash = next((h for h in headers if headers.count(h) > 1), None)
    if clash:  # both would write the same <source>.h into one build directory
        raise InputError(f"two dispatch sources would share the generated header {clash}; "
                         "rename one, or call 'targets' from each source's own meson.build")
    _check_source_ids(with_header)
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}", opts.prefix):  # library and record names
        raise InputError(f"--prefix: '{opts.prefix.encode('unicode_escape').decode()[:80]}' must be a plain name "
                         "(letters, digits, '_', '.', '+', '-'; no '/', not starting with '.'): it names the "
                         "libraries (PREFIX_TARGET) and a file in the build directory")


def _plan(kernels: list[Kernel], level: hwcaps.Level | None, det: Detection, out_dir: StrPath) -> Plan:
    """Each source's header path (checked) and the versions this build compiles of it."""
    header_paths = [None if "NOHEADER" in k.statement.policies else _header_path(k.source, out_dir) for k in kernels]
    plan = list(zip(kernels, header_paths, dispatch.select_all([k.statement for k in kernels], det)))
    for k, _, chosen in plan if level is None else ():  # in a variant, a note (_notes): the variant's very purpose
        _check_something_is_built(k, chosen, det)
    return plan


def _notes(kernels: list[Kernel], level: hwcaps.Level | None, det: Detection, plan: Plan) -> list[str]:
    notes = [*_empty_lists(kernels), *_dropped_targets(kernels, det)]
    if level is None or det.table is None:
        return notes
    for k, _, chosen in plan:
        if not chosen and _below_level(k, det):
            notes.append(f"targets: {k.source}: no version at {level.name}: every target "
                         f"({', '.join(_below_level(k, det))}) is at or below it, and the list has no 'baseline'")
    return notes


def _lines(opts: TargetsOptions, det: Detection, plan: Plan, level: str | None) -> str:
    """Writes the build's headers; its lines, each ending in ``<TAB>level`` when one is given."""
    groups: dict[str, tuple[list[str], list[str], str, int]] = {}  # library -> (args, sources, target, rank)
    given = _given_args(det, opts)
    for k, header, chosen in plan:
        if header is not None:
            emit.write_if_changed(header, emit.source_header(det, k.source, chosen, k.origin))
        for t in chosen:
            library = _library(opts.prefix, t, k.statement.policies)
            if library not in groups:  # the first source's target names the library's args
                rank = det.table.rank(t.members) if det.table is not None and t.members else 0
                groups[library] = (_target_args(det, t, given), [], t.name, rank)
            groups[library][1].append(k.source)
    # Baseline first, then ascending: a linker keeps the first definition of a duplicate inline or
    # template symbol (C++ COMDAT), which must be the lowest version's code, as numpy's fork links them.
    # The target, then the level, last: fields added after those a consumer already splits
    # (ccopt-cpu-info --run-as takes the target).
    ordered = sorted(groups.items(), key=lambda kv: kv[1][3])
    tail = "" if level is None else f"\t{level}"
    return "".join(f"{lib}\t{_args_field(args, 'target argument')}\t{' '.join(srcs)}\t{name}{tail}\n"
                   for lib, (args, srcs, name, _) in ordered)


def _write_runtime_table(out_dir: str | os.PathLike[str], project: Project | None, macros: Macros) -> None:
    """``ccopt_cpu_table.h`` (what ccopt_cpu.c walks) for the current tables: never a stale copy.

    A table made from these tables (and this macro protocol) already is left alone without loading the generator.
    """
    digest = data_digest(project) + ("" if macros == Macros().resolved() else f"+{macros.prefix}{macros.style}")
    try:
        head = fsio.read_head(os.path.join(out_dir, RUNTIME_TABLE), 1024)
    except OSError:
        head = None
    if head is None or provenance(digest).encode() not in head:
        from .emit_runtime import write_table  # the generator loads only when the tables changed

        write_table(out_dir, digest, project, (macros.prefix, macros.style))


def _caller_build_dir(below: str = "") -> str:
    """The calling meson.build's build directory (``below``: a variant's ``glibc-hwcaps/<level>`` in it, where
    Meson builds a target given that ``build_subdir``)."""
    root = os.environ.get("MESON_BUILD_ROOT")
    if not root:
        raise InputError("--output-dir is required outside Meson (MESON_BUILD_ROOT is not set)")
    return os.path.join(root, os.environ.get("MESON_SUBDIR", ""), below)


def _read_cache_file(path: StrPath, project: Project | None) -> Detection:
    if not cache.is_cache_name(path):
        raise InputError(f"--cache-file: '{fsio.show_path(path)}' is not a ccopt cache file (ccopt-features.json)")
    parent = os.path.dirname(os.fspath(path)) or "."  # Path(path).parent without pathlib
    return read_configured(path, project, f"'ccopt-meson detect --build-dir {parent}' or configure first")


# --------------------------------------------------------------------------- setup


def _meson_command() -> list[str]:
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
