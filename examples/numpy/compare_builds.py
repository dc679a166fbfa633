#!/usr/bin/env python3
"""numpy's CPU build as one canonical JSON (a "dump"), and the exact differences of two dumps.

    python3 examples/numpy/compare_builds.py dump BUILD [SETUP_LOG]       # prints BUILD's dump
    python3 examples/numpy/compare_builds.py diff FORK CCOPT              # exit 1 if they differ

FORK and CCOPT are configured build dirs (``meson setup`` is enough: compile_commands.json and the
generated headers exist after it) or dump files. A dump holds:

- ``objects``: every dispatch object (a compile line with ``-DNPY_MTARGETS_CURRENT=T`` or
  ``-DNPY_MTARGETS_BASELINE``), keyed ``source:target``: the sorted set of its ``-m...`` flags
  (``-march=``, ``-mcpu=`` too) and of its ``-D``/``-U`` defines (``NPY_HAVE_*``, ``NPY_MTARGETS_*``,
  ``HWY_*`` and the rest), on the whole line: project args included, so the baseline counts in both;
- ``sources``: the same flags of every other compile line, keyed by source (the baseline's args
  reach each of them);
- ``headers``: each generated ``*.dispatch.h``: whether it runs the baseline, and its dispatch
  targets in order, each with the run-time test (the names its ``TEST_CB`` calls check);
- ``config``: ``meson_cpu/npy_cpu_dispatch_config.h``, line by line;
- ``configured`` and ``messages``: whether ``meson setup`` succeeded, and (given its output) its
  warnings and errors from numpy's CPU build (``meson_cpu/``, ccopt-meson) with the location cut off.

The order of flags on a line is not compared (numpy's fork repeats the baseline's flags after the
project's); the order of a header's targets is (the first whose test passes runs).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

TARGET_DEFINE = re.compile(r"-DNPY_MTARGETS_(?:CURRENT=(\w+)|(BASELINE))$")
HEADER_TARGET = re.compile(r"EXEC_CB\(\(([^()]*(?:\([^()]*\)[^()]*)*)\), (\w+), __VA_ARGS__\)")
TEST_NAME = re.compile(r"TEST_CB\((\w+)\)")
BASELINE_RUN = re.compile(r"NPY_MTARGETS_CONF_BASELINE\(EXEC_CB, \.\.\.\)[ \t]*NPY__MTARGETS_EXPAND")
CONFIG_NAMES = re.compile(r"#define NPY_WITH_CPU_(BASELINE|DISPATCH)\s+\"?([\w ]*)\"?")
MESSAGE = re.compile(r"^(?:(\S+?):\d+(?::\d+)?: )?(WARNING|ERROR): (.*)$")
COMMAND = re.compile(r"Command `.*` failed")
HELPER_MESSAGE = ("ccopt-meson: error:", "ccopt-meson: warning:")
CPU_BUILD = ("meson_cpu/", "subprojects/ccopt-meson", "subprojects/ccopt_meson")
Dump = dict[str, Any]
# the dump's format: raise it with any change to what dump() records (the recorded fork dumps of
# configure_numpy.py are then remade: a dump of another format is not used)
FORMAT = 1


def cpu_flags(args: list[str]) -> list[str]:
    return sorted({a for a in args if a.startswith(("-m", "-D", "-U"))})


def source_key(entry: dict[str, str]) -> str:
    """The source as both builds name it: relative to the source tree, or a generated file's name."""
    file = entry["file"]
    return file[3:] if file.startswith("../") else os.path.basename(file)


def compile_lines(build: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(dispatch objects ``source:target`` -> flags, other sources -> flags) from compile_commands.json."""
    objects: dict[str, list[str]] = {}
    sources: dict[str, list[str]] = {}
    for entry in json.loads((build / "compile_commands.json").read_text()):
        args = shlex.split(entry["command"])
        target = next((m.group(1) or "baseline" for a in args if (m := TARGET_DEFINE.match(a))), None)
        if target is None:
            key = source_key(entry)
            # a source compiled in several targets with different flags keeps each (numbered in order)
            while key in sources and sources[key] != cpu_flags(args):
                key += "+"
            sources[key] = cpu_flags(args)
        else:
            objects[f"{os.path.basename(entry['file'])}:{target}"] = cpu_flags(args)
    return dict(sorted(objects.items())), dict(sorted(sources.items()))


def header(text: str) -> dict[str, Any]:
    targets = [[name, TEST_NAME.findall(test)] for test, name in HEADER_TARGET.findall(text)]
    return {"baseline": bool(BASELINE_RUN.search(text)), "dispatch": targets}


def headers(build: Path) -> dict[str, Any]:
    return {h.name: header(h.read_text()) for h in sorted((build / "numpy" / "_core").glob("*.dispatch.h"))}


def config_lines(build: Path) -> list[str]:
    text = (build / "meson_cpu" / "npy_cpu_dispatch_config.h").read_text()
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def config_names(config: list[str]) -> dict[str, list[str]]:
    """The enabled baseline and dispatch names (``__cpu_baseline__``/``__cpu_dispatch__`` are made of them)."""
    return {kind: names.split() for kind, names in CONFIG_NAMES.findall("\n".join(config))}


def messages(log: str) -> list[str]:
    """The CPU build's warnings and every error of a ``meson setup`` output, without their location.

    A helper's own error line (``ccopt-meson: error: ...``, in meson-log.txt) stands for Meson's line
    about its failed command."""
    found = []
    for line in log.splitlines():
        m = MESSAGE.match(line.strip())
        if m and (m.group(2) == "ERROR" or (m.group(1) or "").startswith(CPU_BUILD) or "cpu" in m.group(3).lower()):
            found.append(f"{m.group(2)}: {COMMAND.sub('Command `...` failed', m.group(3))}")
        elif line.startswith(HELPER_MESSAGE):
            found.append(line.strip())
    return list(dict.fromkeys(found))


def dump(build: Path, log: str = "", configured: bool = True) -> Dump:
    """The canonical record of a configured build dir (only ``configured``/``messages`` when setup failed)."""
    full_log = build / "meson-logs" / "meson-log.txt"
    if not configured and full_log.is_file():
        log += "\n" + full_log.read_text(errors="replace")
    out: Dump = {"configured": configured, "messages": messages(log)}
    if configured:
        objects, sources = compile_lines(build)
        out.update(objects=objects, sources=sources, headers=headers(build), config=config_lines(build))
    return out


def mapping_differences(what: str, a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """One line per kind of difference, naming every key that has it."""
    by_kind: dict[str, list[str]] = {}
    for key in sorted(set(a) | set(b)):
        if key not in b:
            kind = "only in the fork's build"
        elif key not in a:
            kind = "only in the ccopt build"
        elif a[key] == b[key]:
            continue
        elif isinstance(a[key], list) and all(isinstance(x, str) for x in a[key] + b[key]):
            kind = f"fork only {sorted(set(a[key]) - set(b[key]))}, ccopt only {sorted(set(b[key]) - set(a[key]))}"
        else:
            kind = f"fork {json.dumps(a[key])}, ccopt {json.dumps(b[key])}"
        by_kind.setdefault(kind, []).append(key)
    return [f"{what} {' '.join(keys)}: {kind}" for kind, keys in by_kind.items()]


def differences(fork: Dump, ccopt: Dump) -> list[str]:
    """Every difference of two dumps, one line each; [] when the CPU builds are identical."""
    if fork["configured"] != ccopt["configured"]:
        return [f"setup: fork {'configured' if fork['configured'] else 'refused'} {fork['messages']}, "
                f"ccopt {'configured' if ccopt['configured'] else 'refused'} {ccopt['messages']}"]
    diffs = []
    if bool(fork["messages"]) != bool(ccopt["messages"]):
        diffs.append(f"messages: fork {fork['messages']}, ccopt {ccopt['messages']}")
    if not fork["configured"]:
        return diffs
    for what in ("objects", "sources", "headers"):
        diffs += mapping_differences(what[:-1], fork[what], ccopt[what])
    if fork["config"] != ccopt["config"]:
        changed = difflib.unified_diff(fork["config"], ccopt["config"], "fork", "ccopt", n=0, lineterm="")
        diffs.append("npy_cpu_dispatch_config.h: " + " | ".join(list(changed)[2:]))
    return diffs


def notes(fork: Dump, ccopt: Dump) -> list[str]:
    """What differs in wording only: the text of the CPU build's messages."""
    if fork["messages"] == ccopt["messages"]:
        return []
    return [f"messages: fork {fork['messages']}, ccopt {ccopt['messages']}"]


def summary(d: Dump) -> str:
    if not d["configured"]:
        return f"refused: {d['messages']}"
    return (f"{len(d['objects'])} dispatch objects, {len({k.split(':')[1] for k in d['objects']})} targets, "
            f"{len(d['headers'])} dispatch headers, {len(d['sources'])} other sources")


def load(path: Path) -> Dump:
    return dump(path) if path.is_dir() else dict(json.loads(path.read_text()))


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "dump":
        log = Path(argv[2]).read_text() if len(argv) > 2 else ""
        print(json.dumps(dump(Path(argv[1]), log), indent=1, sort_keys=True))
        return 0
    if len(argv) == 3 and argv[0] == "diff":
        fork, ccopt = load(Path(argv[1])), load(Path(argv[2]))
        found = differences(fork, ccopt)
        print(f"fork:  {summary(fork)}\nccopt: {summary(ccopt)}")
        print("\n".join(found + notes(fork, ccopt)) if found else
              "\n".join(["identical: the flags and defines of every dispatch object and every other compile line, "
                         "every dispatch header's targets and run-time tests, npy_cpu_dispatch_config.h",
                         *notes(fork, ccopt)]))
        return 1 if found else 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
