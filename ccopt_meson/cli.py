"""The ``ccopt-meson`` command line.

Subcommands come from the ``COMMANDS`` table; ``main(argv) -> int`` is the one
place where errors become ``ccopt-meson: error: <message>`` and an exit code
(0 ok, 1 reported error, 2 usage).
"""

from __future__ import annotations

import io
import os
import signal
import sys

from . import cache, fsio, pipeline, project
from ._record import TYPE_CHECKING
from .errors import CcoptError, InputError, did_you_mean
from .records import BASELINE_DETECT, DEFAULT_BASELINE, DEFAULT_DISPATCH, Detection, Macros, Request
from .tables import data_file, default_macro_prefix
from .version import __version__

if TYPE_CHECKING:
    import argparse
    from argparse import ArgumentParser as _Adder
    from pathlib import Path
    from typing import Any, Callable, Sequence

    from .tables import Feature, Project

__all__ = ["main", "run", "COMMANDS", "ERROR_EXIT", "MESON_SKIP"]

MESON_SKIP = 77  # the exit status 'meson test' reports as SKIP
ERROR_EXIT = {"audit": 2}  # a command whose 1 means findings reports an error with another status


# --------------------------------------------------------------------------- shared options


def _compiler_options(p: _Adder) -> None:
    p.add_argument("--cc", metavar="CMD", help="compiler command (default: $CC, else cc); may hold a launcher")
    p.add_argument("--cc-arg", dest="cc_argv", action="append", metavar="ARG",
                   help="one element of the compiler command, repeatable (as Meson's cc.cmd_array() gives it)")
    p.add_argument("--args", default=None, metavar="FLAGS",
                   help="compile arguments (default: $CFLAGS $CPPFLAGS, or $CXXFLAGS for --lang cpp)")
    p.add_argument("--arg", dest="arg_list", action="append", metavar="ARG", help="one compile argument, repeatable")
    p.add_argument("--lang", choices=("c", "cpp"), default="c")
    p.add_argument("--compiler-id", help="Meson's compiler id (gcc, clang, msvc, ...); detected when omitted")
    p.add_argument("--compiler-version", help="compiler version as Meson knows it")
    p.add_argument("--cpu-family", help="Meson's host cpu_family, used only if the compiler cannot tell")
    p.add_argument("--cross", choices=("auto", "yes", "no"), default="auto", help="is this a cross build")
    p.add_argument("--baseline", default=DEFAULT_BASELINE, help="cpu-baseline expression (default: %(default)s)")
    p.add_argument("--dispatch", default=DEFAULT_DISPATCH, help="cpu-dispatch expression (default: %(default)s)")
    p.add_argument("--disable-optimization", action="store_true", help="no baseline flags and no dispatch targets")
    p.add_argument("--baseline-detect", choices=BASELINE_DETECT, default="auto",
                   help="add 'detect' to the baseline: when the args pick a CPU (auto, the default), always or never")
    p.add_argument("--debug-build", action="store_true", help="a debug build: the $maxopt policy adds nothing")
    p.add_argument("--build-dir", metavar="DIR", help="keep the feature cache in DIR")
    p.add_argument("--flush", action="store_true", help="delete the cache first, so everything is probed again")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--macro-prefix", default=default_macro_prefix(),
                   help="prefix of every macro in the args (default: %(default)s)")
    p.add_argument("--header-style", default="ccopt", help="macro protocol: ccopt (default) or numpy")
    _features_file_option(p)


def _features_file_option(p: _Adder) -> None:
    p.add_argument("--features-file", metavar="FILE",
                   help="a project's own features and target groups (JSON; see docs/how-to/project-features.md)")


def _split(text: str, what: str) -> list[str]:
    """Shell-style words of ``text`` (flags given as one string); a bad quote is an InputError naming ``what``."""
    import shlex

    try:
        return shlex.split(text)
    except ValueError as exc:
        raise InputError(f"{what}: cannot split '{text}': {exc}; balance the quotes") from exc


def request_from(ns: argparse.Namespace, explain: Sequence[str] = (), env_flags: bool = True) -> Request:
    if ns.cc_argv:
        command = list(ns.cc_argv)
    else:
        text = ns.cc if ns.cc is not None else os.environ.get("CXX" if ns.lang == "cpp" else "CC", "") or (
            "c++" if ns.lang == "cpp" else "cc")
        command = _split(text, "--cc" if ns.cc is not None else "CXX" if ns.lang == "cpp" else "CC")
    if ns.arg_list is not None:
        args = list(ns.arg_list)
    elif ns.args is not None:
        args = _split(ns.args, "--args")
    elif not env_flags:
        args = []
    else:
        env = ("CXXFLAGS", "CPPFLAGS") if ns.lang == "cpp" else ("CFLAGS", "CPPFLAGS")
        args = [a for var in env for a in _split(os.environ.get(var, ""), var)]
    return Request(
        command=tuple(command), args=tuple(args), baseline=ns.baseline, dispatch=ns.dispatch, lang=ns.lang,
        compiler_id=ns.compiler_id, compiler_version=ns.compiler_version, cpu_family=ns.cpu_family,
        cross={"auto": None, "yes": True, "no": False}[ns.cross],
        disable_optimization=ns.disable_optimization, debug_build=ns.debug_build, explain=tuple(explain),
        project=project.load(ns.features_file), macros=Macros(ns.macro_prefix, ns.header_style),
        baseline_detect=ns.baseline_detect,
    )


def _print_json(doc: Any) -> None:
    import json

    sys.stdout.write(json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=True) + "\n")


def _rows(title: str, rows: Sequence[tuple[str, str]]) -> list[str]:
    width = max([len(k) for k, _ in rows] + [12])
    return [title] + [f"  {k.ljust(width)} : {v}" for k, v in rows]


def format_report(det: Detection, cache_file: str | os.PathLike[str] | None = None) -> str:
    comp = det.compiler
    state = f"hit ({fsio.show_path(cache_file or '')})" if det.cache_hit else f"miss, {det.probes} compiler processes"
    if cache_file is None and not det.cache_hit:
        state = f"not used, {det.probes} compiler processes"
    lines = _rows("Platform", [
        ("Architecture", det.arch),
        ("Compiler", f"{comp.id} {comp.version} ({' '.join(comp.command)})"),
        ("Cache", state),
    ])
    disabled = det.request.disable_optimization
    lines += [""] + _rows("CPU baseline", [
        ("Requested", "optimization disabled" if disabled else det.baseline_request()),
        ("Enabled", " ".join(det.baseline) or "none"),
        ("Flags", " ".join(det.baseline_flags()) or "none"),
    ])
    lines += [""] + _rows("CPU dispatch", [
        ("Requested", "optimization disabled" if disabled else repr(det.request.dispatch)),
        ("Enabled", " ".join(det.dispatch) or "none"),
    ] + [(n, " ".join(det.target_flags(n)) or "(no flags)") for n in det.dispatch])
    if det.table is not None:
        ordered = sorted(det.table.features.values(), key=lambda f: (f.interest, f.name))
        missing = [(f.name, det.reason(f.name)) for f in ordered if det.supported(f.name) is False]
        if missing:
            lines += [""] + _rows("Unsupported", missing)
    if det.notes:
        lines += ["", "Notes"] + [f"  {n}" for n in det.notes]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- commands


def cmd_detect(ns: argparse.Namespace) -> int:
    req = request_from(ns)
    configured = _configured_build(ns.build_dir, req.project)  # a Meson build dir: that build's detection
    if configured is not None and ns.flush:
        raise InputError(f"'{ns.build_dir}' is a Meson build directory; flush it with 'ccopt-meson flush "
                         f"{ns.build_dir}' (the next ninja reconfigures), not with detect --flush")
    det = configured or pipeline.detect(req, build_dir=ns.build_dir, flush_first=ns.flush)
    if ns.json:
        _print_json(det.to_json())
    else:
        path = cache.find(ns.build_dir)[0] if configured else (
            cache.cache_file(ns.build_dir, ns.lang) if ns.build_dir else None)
        sys.stdout.write(format_report(det, path))
    return 0


def explain_feature(det: Detection, name: str) -> dict[str, Any]:
    from .tables import families_of

    name = name.strip().upper()
    feat = det.to_json()["features"].get(name)
    if feat is None:
        fam = _article(" and ".join(families_of(name, det.request.project)) or "another architecture")
        return {"name": name, "supported": False, "status": "foreign",
                "reason": f"{name} is {fam} feature; this compiler targets {det.arch}"}
    status = ("baseline" if name in det.baseline else
              "dispatch" if name in det.dispatch else
              "available" if feat["supported"] else "unsupported")
    return {"name": name, "status": status, **feat}


def _article(word: str) -> str:
    """``an arm``, ``an x86``, ``an s390x``, ``a ppc64``: by the sound, which for x86/s390x is a letter's name."""
    vowel = word[:1].lower() in "aeiou" or word.lower().startswith(("x86", "s390"))
    return f"{'an' if vowel else 'a'} {word}"


def _configured_build(build_dir: str | None, proj: Project | None = None) -> Detection | None:
    """The detection of a configured Meson build dir (its first language's cache file), else None.

    ``detect`` and ``explain --build-dir`` of such a dir answer for that build: probing the default compiler there
    would answer for another one and leave a cache that ``report`` lists as a second configuration."""
    from .meson_glue import is_build_dir, read_configured

    if not build_dir or not is_build_dir(build_dir):
        return None
    files = cache.find(build_dir)
    if not files:
        raise InputError(f"no ccopt cache file under '{build_dir}'; configure the project first, or pass a "
                         "--build-dir that is not a Meson build directory")
    return read_configured(files[0], proj)


def _explain_names(ns: argparse.Namespace, proj: Project | None, configured: bool) -> list[str]:
    """explain's names; one with a name of the features file a ``detect --build-dir`` directory's cache was made
    with, but not given (only a Meson build dir is answered from its cache), says so in one line."""
    from .resolve import explain_names

    try:
        return explain_names(ns.names, proj)
    except InputError as exc:
        recorded = None if configured or proj or not ns.build_dir else cache.features_file_of(
            cache.cache_file(ns.build_dir, ns.lang))
        if recorded is None or not _names_of(ns.names, recorded):
            raise
        raise InputError(f"explain: '{' '.join(ns.names)[:80]}' names a feature of features file '{recorded}', "
                         f"which the feature cache in '{ns.build_dir}' was made with; '{ns.build_dir}' is not a Meson "
                         "build directory, so explain answers for the options given: pass --features-file "
                         f"'{recorded}'") from exc


def _names_of(names: Sequence[str], features_file: str) -> bool:
    """Are ``names`` all feature names once ``features_file`` is read?"""
    from .resolve import explain_names

    try:
        explain_names(names, project.load(features_file))
    except InputError:
        return False
    return True


def cmd_explain(ns: argparse.Namespace) -> int:
    req = request_from(ns)
    configured = _configured_build(ns.build_dir, req.project)  # with the features file its cache records
    names = _explain_names(ns, configured.request.project if configured else req.project, configured is not None)
    det = configured or pipeline.detect(
        req._replace(explain=tuple(names)), build_dir=ns.build_dir, flush_first=ns.flush)
    answers = [explain_feature(det, n) for n in names]
    if ns.json:
        _print_json(answers)
        return 0
    for a in answers:
        if a["status"] == "foreign":
            print(f"{a['name']}: not available: {a['reason']}")
            continue
        verdict = {"baseline": "in the baseline", "dispatch": "a dispatch target",
                   "available": "supported, but not requested", "unsupported": "not supported"}[a["status"]]
        print(f"{a['name']}: {verdict}")
        if a["reason"]:
            print(f"  reason  : {a['reason']}")
        print(f"  flags   : {' '.join(a['args']) or '(none)'}")
        print(f"  implies : {' '.join(a['implies']) or '(nothing)'}")
    return 0


def cmd_features(ns: argparse.Namespace) -> int:
    from .host import machine_name
    from .tables import compilers_data, families_of, machine_by_name, reference_compiler, table_for

    machine = machine_by_name(ns.arch or machine_name()).name
    proj = project.load(ns.features_file)
    cid = ns.compiler_id or reference_compiler()
    table = table_for(machine, cid, proj, ns.compiler_version)
    others = {c: table_for(machine, c, proj, ns.compiler_version if c == cid else None)
              for c in compilers_data()["compilers"]}
    rows: dict[str, dict[str, Any]] = {
        n: {"interest": f.interest, "implies": list(f.implies), "flags": list(f.flags),
            "closure_flags": table.flags_for([n]), "group": list(f.group), "disabled": f.disabled,
            "runtime": dict(f.runtime), "families": list(families_of(n, proj)),
            "flags_by_compiler": {c: None if t.get(n).disabled else list(t.get(n).flags) for c, t in others.items()},
            **_resolved_from(f)}
        for n, f in table.features.items()}
    if ns.json:
        _print_json({"arch": machine, "compiler_id": cid, **({"compiler_version": ns.compiler_version}
                     if ns.compiler_version else {}), "min": list(table.machine.min), "features": rows})
        return 0
    shown = f"{cid} {ns.compiler_version}" if ns.compiler_version else cid
    print(f"{machine} features for {shown} (min: {' '.join(table.machine.min) or 'none'})")
    for n, r in rows.items():
        state = f"disabled: {r['disabled']}" if r["disabled"] else " ".join(r["flags"]) or "(no own flags)"
        print(f"  {n:<16} {r['interest']:>4}  implies {' '.join(r['implies']) or '-':<24} {state}")
    return 0


def _resolved_from(f: Feature) -> dict[str, Any]:
    """What a row took from elsewhere, shown rather than hidden: the built-in row whose run-time test it inherited
    and what widened that test; its headers, macros, probe and run-time test items as resolved."""
    data, given = data_file(""), str(f.probe)
    probe = os.path.relpath(given, data).replace(os.sep, "/") if given.startswith(data) else os.path.basename(given)
    return {"headers": list(f.headers), "macros": list(f.macros), "probe": probe,
            "detect": [list(d) for d in f.detect], "flags_replace": f.flags_replace,
            "runtime_inherited_from": f.runtime_of or None, "runtime_widened_by": list(f.widened_by)}


def _build_dir(text: str) -> Path:
    """A directory ccopt-meson recognises as a build dir: Meson's, or one holding a cache file of ours."""
    from pathlib import Path

    from .meson_glue import is_build_dir

    build = Path(text)
    if not build.is_dir():
        raise InputError(f"build directory '{text}' does not exist")
    if not is_build_dir(build) and not any(cache.cache_path(build, lang).is_file() for lang in ("c", "cpp")):
        raise InputError(f"'{text}' is not a Meson build directory and holds no ccopt feature cache; "
                         "name the build directory (the one with meson-private/)")
    return build


def cmd_flush(ns: argparse.Namespace) -> int:
    from .meson_glue import is_build_dir, mark_for_reconfigure

    build = _build_dir(ns.builddir)
    if is_build_dir(build):
        removed = cache.flush(build)
        mark_for_reconfigure(build)
    else:  # a --build-dir of 'detect': only its own files, no walk
        removed = [p for lang in ("c", "cpp") if cache.discard(p := cache.cache_path(build, lang))]
        cache.remove_legacy(build)
    print(f"flushed {len(removed)} cache file(s) in {build}")
    return 0


def cmd_report(ns: argparse.Namespace) -> int:
    files = cache.find(_build_dir(ns.builddir))
    if not files:
        raise InputError(f"no ccopt cache file under '{ns.builddir}'; configure the project first")
    from .meson_glue import read_configured

    proj = project.load(ns.features_file)
    dets = [read_configured(f, proj) for f in files]  # each with the features file it records
    if ns.json:
        docs = [d.to_json() for d in dets]
        _print_json(docs[0] if len(docs) == 1 else docs)
        return 0
    for f, det in zip(files, dets):
        sys.stdout.write(format_report(det, f))
    return 0


def cmd_audit(ns: argparse.Namespace) -> int:
    """Exit 0 when everything read uses only what it may, 1 with findings; anything not read, or an error, is 2
    (``ERROR_EXIT``); under ``--meson-test`` a missing decoder is Meson's SKIP."""
    from . import audit
    from .errors import AuditUnavailable

    try:
        result = audit.audit_paths(ns.paths, ns.baseline, ns.features_file, ns.linked)
    except AuditUnavailable as exc:
        if not ns.meson_test:
            raise
        print(f"ccopt-meson: skipped: {_one_line(str(exc))}")  # Meson shows a test's output in its log
        return MESON_SKIP
    if ns.json:
        _print_json(audit.to_json(result))
    else:
        sys.stdout.write(audit.format_text(result))
    for problem in result.problems:
        sys.stderr.write(f"ccopt-meson: error: {_one_line(problem)}\n")
    if result.problems:
        return ERROR_EXIT["audit"]
    return 1 if any(r.findings for r in result.reports) else 0


def cmd_setup(ns: argparse.Namespace) -> int:  # reached only through --help; main() forwards 'setup'
    from .meson_glue import run_setup

    return run_setup(ns.meson_args)


def cmd_configure(ns: argparse.Namespace) -> int:
    from .meson_glue import ConfigureOptions, configure

    opts = ConfigureOptions(ns.output_dir, ns.build_dir or None, ns.flush, ns.write_config, ns.runtime == "yes")
    return configure(request_from(ns, env_flags=False), opts)


def cmd_targets(ns: argparse.Namespace) -> int:
    from .meson_glue import TargetsOptions, targets

    if ns.feature_file:  # a spelling too close to --features-file, the project's own file
        cache.warn("targets: --feature-file is deprecated, use --cache-file (the same value)")
    return targets(TargetsOptions(tuple(ns.sources), ns.cache_file or ns.feature_file, ns.output_dir or None,
                                  ns.optimization,
                                  ns.prefix, project.load(ns.features_file), ns.lang, ns.hwcaps,
                                  tuple(v for v in (ns.variants or "").split(",") if v)))


def _detect_parser(p: _Adder) -> None:
    _compiler_options(p)


def _explain_parser(p: _Adder) -> None:
    p.add_argument("names", nargs="+", metavar="NAME")
    _compiler_options(p)


def _features_parser(p: _Adder) -> None:
    p.add_argument("--arch", help="x86_64, x86, aarch64, armhf, ppc64le, ppc64, s390x, riscv64, loongarch64")
    p.add_argument("--compiler-id", help="Meson's compiler id (default: the reference compiler, gcc)")
    p.add_argument("--compiler-version", help="that compiler's version, as Meson knows it (rows may depend on it)")
    p.add_argument("--json", action="store_true")
    _features_file_option(p)


def _builddir_parser(p: _Adder) -> None:
    p.add_argument("builddir")


def _report_parser(p: _Adder) -> None:
    p.add_argument("builddir")
    p.add_argument("--json", action="store_true")
    _features_file_option(p)  # the build's own: its features are names of the cache, its overrides its flags


def _audit_parser(p: _Adder) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="a configured and built Meson build directory, an ELF "
                   "executable or shared library, a wheel (.whl), a .deb, or a directory holding an installed tree")
    p.add_argument("--json", action="store_true", help="print the findings and the per-file summary as JSON")
    p.add_argument("--linked", action="store_true", help="in a build directory, also the executables and shared "
                   "libraries, function by function (which copy of an inline function or template the linker kept)")
    p.add_argument("--baseline", metavar="LEVEL", help="what a file without a ccopt manifest must run on: a level "
                   "(x86-64-v2) or feature names; it is then checked dispatch-blind")
    p.add_argument("--meson-test", action="store_true",
                   help=f"exit {MESON_SKIP} (Meson's SKIP) when the decoder is not installed, instead of failing")
    _features_file_option(p)  # a project's own rows, which a manifest's version may name


def _setup_parser(p: _Adder) -> None:
    import argparse

    p.add_argument("meson_args", nargs=argparse.REMAINDER, help="arguments for 'meson setup'")


def _configure_parser(p: _Adder) -> None:
    _compiler_options(p)
    p.add_argument("--output-dir", required=True, help="the subproject's build dir: the cache and ccopt_config.h")
    p.add_argument("--write-config", action="store_true", help="write ccopt_config.h for this language")
    p.add_argument("--runtime", choices=("yes", "no"), default="yes",
                   help="is ccopt's run-time built (the subproject's runtime option; default: %(default)s)")


def _targets_parser(p: _Adder) -> None:
    from argparse import SUPPRESS  # argparse is loaded when a parser is made

    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="'SOURCE: TARGETS' (the target list in meson.build), or a SOURCE with a @targets statement")
    p.add_argument("--optimization", help="Meson's optimization option (at 3, $maxopt adds nothing)")
    p.add_argument("--prefix", default="ccopt", help="library names: PREFIX_TARGET (default: %(default)s)")
    cache_file = p.add_mutually_exclusive_group(required=True)
    cache_file.add_argument("--cache-file", help="the cached detection configure wrote (the subproject's "
                            "`cache_file` variable)")
    cache_file.add_argument("--feature-file", help=SUPPRESS)  # its old name: a warning names the new one
    p.add_argument("--output-dir", help="where <source>.h goes (default: the Meson build dir of the caller; "
                   "with --hwcaps, its glibc-hwcaps/LEVEL)")
    level = p.add_mutually_exclusive_group()
    level.add_argument("--variants", metavar="LEVEL,...", help="also the lines of these glibc-hwcaps variants "
                       "(x86-64-v3, power9, z15; none when empty), after the library's own: each variant's line ends "
                       "in a fifth field, its level; its headers go to glibc-hwcaps/LEVEL of the output directory "
                       "(docs/how-to/hwcaps-variants.md)")
    level.add_argument("--hwcaps", metavar="LEVEL", help="only the lines and headers of the glibc-hwcaps variant "
                       "LEVEL: the baseline raised to it")
    p.add_argument("--lang", choices=["c", "cpp"], help="the language of the sources (the subproject's `targets` "
                   "says c, `targets_cpp` cpp): a source of the other one is refused")
    _features_file_option(p)  # the same file configure was given (the subproject's `targets` passes it)


if TYPE_CHECKING:
    Command = tuple[str, Callable[[_Adder], None], Callable[[argparse.Namespace], int]]
COMMANDS: dict[str, Command] = {
    "detect": ("probe the compiler and print baseline/dispatch targets", _detect_parser, cmd_detect),
    "explain": ("why a feature is or is not available", _explain_parser, cmd_explain),
    "features": ("print the feature table of an architecture", _features_parser, cmd_features),
    "flush": ("delete a build directory's feature cache; the next ninja reconfigures", _builddir_parser, cmd_flush),
    "report": ("print what a configured build directory uses", _report_parser, cmd_report),
    "audit": ("check every object's instructions against what it may use (exit 1: findings, 2: error)",
              _audit_parser, cmd_audit),
    "setup": ("run 'meson setup ARGS', flushing first on --reconfigure/--wipe/--clearcache", _setup_parser, cmd_setup),
    "configure": ("(used by meson.build) detect and write ccopt_config.h", _configure_parser, cmd_configure),
    "targets": ("(used by meson.build) targets of one dispatch source, and its header", _targets_parser, cmd_targets),
}


def _columns(text: str) -> int:
    """The help width: ``COLUMNS`` when it is a sensible number, else 100 (an empty or non-numeric
    ``COLUMNS`` crashed every command, ``meson setup`` included)."""
    text = text.strip()
    return int(text) if text.isdigit() and 20 <= int(text) <= 1000 else 100


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, just that subcommand (building all of them costs ~10 ms)."""
    import argparse

    class _Formatter(argparse.HelpFormatter):
        def __init__(self, prog: str) -> None:
            # COLUMNS or 100 (_columns), never the terminal's size
            super().__init__(prog, width=_columns(os.environ.get("COLUMNS", "")))

    class _Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("formatter_class", _Formatter)
            super().__init__(*args, **kwargs)

        def error(self, message: str) -> Any:
            if "invalid choice" in message and "command" in message:
                word = message.split("'")[1] if "'" in message else ""
                message += did_you_mean(word.upper(), [c.upper() for c in COMMANDS]).lower()
            self.exit(2, f"ccopt-meson: error: {message}\n")

    parser = _Parser(prog="ccopt-meson", description="SIMD feature detection and dispatch for Meson projects")
    parser.add_argument("--version", action="version", version=f"ccopt-meson {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command", parser_class=_Parser)
    sub.required = True
    for name, (helptext, setup, _) in COMMANDS.items():
        if only is None or name == only:
            setup(sub.add_parser(name, help=helptext, description=helptext))
    return parser


# Options whose next word is always their value, even when it starts with '-' (``--baseline -avx2``,
# ``--arg -O2``): argparse would take such a word for an option and fail with a usage error.
_VALUE_OPTIONS = ("--baseline", "--dispatch", "--cc", "--cc-arg", "--args", "--arg")


def _attach_values(args: Sequence[str]) -> list[str]:
    out: list[str] = []
    words = iter(args)
    for word in words:
        value = next(words, None) if word in _VALUE_OPTIONS else None
        out.append(word if value is None else f"{word}={value}")
    return out


_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")  # what str.splitlines() splits at


def _one_line(text: str) -> str:
    """Escape line breaks (from a file name, say) so the error stays the one line Meson shows."""
    return "".join(repr(c)[1:-1] if c in _LINE_BREAKS else c for c in text)


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the helper is, so that every cleanup on the way out runs
    (the compiler's process group killed, scratch directories removed, temporary files unlinked)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


_TERMINATING = ("SIGTERM", "SIGHUP")


def _termination_raises() -> dict[int, Any]:
    """Make SIGTERM/SIGHUP raise ``Terminated`` while ``main`` runs; returns what to restore.

    A caller's own handler (or SIG_IGN) is left alone, and so is every signal outside the main
    thread (an API user calling ``main`` from a thread)."""
    saved: dict[int, Any] = {}
    for name in _TERMINATING:
        sig = getattr(signal, name, None)
        if sig is None or signal.getsignal(sig) != signal.SIG_DFL:
            continue
        try:
            saved[sig] = signal.signal(sig, _raise_terminated)
        except ValueError:  # not the main thread
            break
    return saved


def _restore(saved: dict[int, Any]) -> None:
    for sig, old in saved.items():
        signal.signal(sig, old)


def _escape_unencodable() -> None:
    """A path that is not valid UTF-8 (surrogates in a str) prints as ``\\udcff``, not a traceback."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    _escape_unencodable()
    saved = _termination_raises()
    try:
        return _main(args)
    finally:
        _restore(saved)


def _main(args: list[str]) -> int:
    try:
        if args[:1] == ["setup"]:  # everything after 'setup' belongs to meson, unparsed
            from .meson_glue import run_setup

            return run_setup(args[1:])
        only = args[0] if args and args[0] in COMMANDS else None
        ns = build_parser(only).parse_args(_attach_values(args))
        return COMMANDS[ns.command][2](ns)
    except CcoptError as exc:
        print(f"ccopt-meson: error: {_one_line(str(exc))}", file=sys.stderr)
        return ERROR_EXIT.get(args[0] if args else "", 1)
    except KeyboardInterrupt:
        print("ccopt-meson: error: interrupted", file=sys.stderr)
        return 1
    except Terminated as exc:
        print(f"ccopt-meson: error: terminated by {signal.Signals(exc.signum).name}", file=sys.stderr)
        return 128 + exc.signum
    except BrokenPipeError:
        return 0


def run() -> int:
    """``main()`` as a program (the ``ccopt-meson`` script, ``python -m ccopt_meson``, the Meson helper).

    A run that probed nothing (a cache hit, ``targets``, ``report``) started no process and made
    no scratch file, so it ends without the interpreter's teardown, which frees every module and
    object one by one (about a tenth of a cached configure); the output is flushed first.
    """
    code = main()
    if "ccopt_meson.probe" in sys.modules:
        return code
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (AttributeError, OSError):  # no stream, or a closed pipe: let the normal exit report it
        return code
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(run())
