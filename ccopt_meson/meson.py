"""The Meson side of the CLI: ``configure`` and ``targets`` (run by meson.build), ``setup``.

``meson.build`` runs ``configure`` once per language with ``run_command`` and
reads back tab-separated ``key<TAB>value value ...`` lines (values never hold
spaces or tabs: they are names and table flags).

Flush on an explicit reconfigure: Meson runs ninja's automatic regeneration
and ``meson setup --reconfigure`` through the same code path, and tells a
``run_command`` script nothing about which one it is.  What the helper can see
is its parent, the Meson process: on Linux ``/proc/<ppid>/cmdline`` reads
``meson setup --reconfigure BUILDDIR`` for the explicit case and
``meson --internal regenerate ...`` for ninja's.  Only the first flushes the
cache.  Where ``/proc`` does not exist, ``ccopt-meson setup --reconfigure``
flushes before starting Meson, and ``CCOPT_FLUSH=1`` forces a flush anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Sequence

from . import api, cache, dispatch, emit, emit_runtime, tables
from .errors import InputError

__all__ = ["configure", "targets", "run_setup", "explicit_reconfigure", "parent_argv"]

FLUSH_FLAGS = ("--reconfigure", "--wipe", "--clearcache")
PROJECT_NOTE = "ccopt-project.json"


def parent_argv() -> list[str] | None:
    """The parent process's command line, where the OS tells it (Linux)."""
    try:
        raw = Path(f"/proc/{os.getppid()}/cmdline").read_bytes()
    except OSError:
        return None
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]


def explicit_reconfigure(argv: Sequence[str] | None) -> bool:
    if os.environ.get("CCOPT_FLUSH", "") not in ("", "0"):
        return True
    if not argv or "--internal" in argv:
        return False
    return any(a in ("--reconfigure", "--clearcache") for a in argv)


def _emit_lines(doc: dict[str, Any], path: Path) -> list[str]:
    base_args = dispatch.baseline_args(doc)
    lines = [
        ("arch", doc["arch"]),
        ("compiler", f"{doc['compiler']['id']}-{doc['compiler']['version']}".replace(" ", "_")),
        ("baseline_names", " ".join(doc["baseline"]["names"])),
        ("baseline_args", " ".join(base_args)),
        ("dispatch_names", " ".join(doc["dispatch"]["names"])),
        ("cache_hit", "true" if doc["cache"]["hit"] else "false"),
        ("probes", str(doc["probes"])),
        ("feature_file", str(path.resolve())),
    ]
    # every enabled target gets its line (no @targets policy applies here: no tie filter)
    for name in doc["dispatch"]["names"]:
        lines.append((f"target:{name}", " ".join(dispatch.make_target(doc, [name]).args)))
    lines.append(("target:BASELINE", " ".join([*base_args, "-DCCOPT_TARGET=BASELINE"])))
    return [f"{k}\t{v}" for k, v in lines]


def configure(ns: argparse.Namespace) -> int:
    from .cli import request_from

    out_dir = Path(ns.output_dir)
    flush = ns.flush or explicit_reconfigure(parent_argv())
    doc = api.detect(request_from(ns, env_flags=False), build_dir=ns.build_dir or out_dir, flush_first=flush)
    # `targets` runs in a process of its own: it finds the project features file through this note
    project = tables.project_file()
    cache.atomic_write(out_dir / PROJECT_NOTE, json.dumps({"features_file": str(project) if project else None}) + "\n")
    if ns.write_config:
        emit.write_if_changed(out_dir / "ccopt_config.h", emit.config_header(doc))
        emit_runtime.write_table(out_dir)  # what ccopt_cpu.c walks: never a stale checked-in copy
    for note in doc.get("notes", ()):  # stdout is for meson.build; notes land in meson-log.txt
        print(f"ccopt-meson: note: {note}", file=sys.stderr)
    path = cache.cache_path(ns.build_dir or out_dir, ns.lang)
    sys.stdout.write("\n".join(_emit_lines(doc, path)) + "\n")
    return 0


def _library_name(source: str, target: str, taken: set[str]) -> str:
    """``dot.dispatch.c`` + ``AVX2`` -> ``dot_dispatch_c_AVX2`` (Meson's underscorify), unique."""
    path = Path(source)
    stem = re.sub(r"[^A-Za-z0-9_]", "_", path.name)
    name = f"{stem}_{target}"
    if name in taken:  # same file name in two directories
        name = f"{re.sub(r'[^A-Za-z0-9_]', '_', path.parent.name)}_{name}"
    taken.add(name)
    return name


def targets(ns: argparse.Namespace) -> int:
    """Targets of dispatch sources: ``LIBRARY<TAB>SOURCE<TAB>args`` lines; writes each ``<source>.h``.

    One process for all sources of a project: every helper start costs a Python start-up
    on every (re)configure.
    """
    _use_project_note(Path(ns.feature_file).parent / PROJECT_NOTE)
    doc = _read_feature_file(Path(ns.feature_file))
    out_dir = Path(ns.output_dir) if ns.output_dir else _caller_build_dir()
    lines: list[str] = []
    taken: set[str] = set()
    headers = [emit.header_name(s) for s in ns.sources]
    clash = next((h for h in headers if headers.count(h) > 1), None)
    if clash:  # both would write the same <source>.h into one build directory
        raise InputError(f"two dispatch sources would share the generated header {clash}; "
                         "rename one, or call 'targets' from each source's own meson.build")
    for source in ns.sources:
        chosen = dispatch.select(dispatch.parse_file(source), doc)
        emit.write_if_changed(out_dir / emit.header_name(source), emit.dispatch_header(source, chosen))
        lines += [f"{_library_name(source, t.name, taken)}\t{source}\t{' '.join(t.args)}\n" for t in chosen]
    sys.stdout.write("".join(lines))
    return 0


def _use_project_note(note: Path) -> None:
    try:
        path = json.loads(note.read_text(encoding="utf-8")).get("features_file")
    except (OSError, ValueError, AttributeError):
        return  # configured without one (or by an older helper)
    if path:
        tables.use_project_file(path)


def _caller_build_dir() -> Path:
    root = os.environ.get("MESON_BUILD_ROOT")
    if not root:
        raise InputError("--output-dir is required outside Meson (MESON_BUILD_ROOT is not set)")
    return Path(root) / os.environ.get("MESON_SUBDIR", "")


def _read_feature_file(path: Path) -> dict[str, Any]:
    lang = "cpp" if path.name.endswith("-cpp.json") else "c"
    if path.name not in (cache.cache_path(".", lang).name,):
        raise InputError(f"--feature-file: '{path}' is not a ccopt feature file (ccopt-features.json)")
    return api.read(path.parent, lang)


def _meson_command() -> list[str]:
    import shutil

    found = shutil.which("meson")
    return [found] if found else [sys.executable, "-m", "mesonbuild.mesonmain"]


def run_setup(args: Sequence[str]) -> int:
    """``meson setup ARGS``; with --reconfigure/--wipe/--clearcache the caches are flushed first."""
    args = list(args[1:]) if args[:1] == ["--"] else list(args)
    for cand in (a for a in args if not a.startswith("-")) if any(a in FLUSH_FLAGS for a in args) else ():
        if (Path(cand) / "meson-private" / "coredata.dat").exists():
            cache.flush(cand)
    # Meson's own configure run sees CCOPT_FLUSH too, on every OS (no /proc needed).
    env = dict(os.environ, CCOPT_FLUSH="1") if any(a in FLUSH_FLAGS for a in args) else None
    import subprocess

    return subprocess.call([*_meson_command(), "setup", *args], env=env)
