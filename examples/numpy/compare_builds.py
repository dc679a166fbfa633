#!/usr/bin/env python3
"""Compare two configured numpy build dirs: numpy's Meson fork's and the ccopt-meson port's.

Both only need ``meson setup`` (compile_commands.json and the generated headers exist after it):

    python3 examples/numpy/compare_builds.py FORK_BUILD CCOPT_BUILD

For every dispatch object (a compile line with ``-DNPY_MTARGETS_CURRENT=T`` or
``-DNPY_MTARGETS_BASELINE``) the key is (source, target); its value is the set of instruction-set
flags (``-m...``) and of ``NPY_HAVE_*`` defines on the whole line (project args included, so the
baseline's flags count for every target in both builds). Also compared: which targets each of the
``*.dispatch.h`` headers dispatches to, and the enabled names in ``npy_cpu_dispatch_config.h``
(what ``__cpu_baseline__`` / ``__cpu_dispatch__`` are made from). Prints the differences; exit 1
if there are any.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import NamedTuple

TARGET_DEFINE = re.compile(r"-DNPY_MTARGETS_(?:CURRENT=(\w+)|(BASELINE))$")
HEADER_TARGET = re.compile(r", (\w+), __VA_ARGS__\)\)")  # EXEC_CB((TEST_CB(A)&&...), NAME, __VA_ARGS__))
CONFIG_NAMES = re.compile(r"#define NPY_WITH_CPU_(BASELINE|DISPATCH)\s+\"?([\w ]*)\"?")


class Flags(NamedTuple):
    isa: frozenset[str]
    have: frozenset[str]


def dispatch_objects(build: Path) -> dict[tuple[str, str], Flags]:
    """(source file name, target) -> its flags, for every dispatch object of the build."""
    found: dict[tuple[str, str], Flags] = {}
    for entry in json.loads((build / "compile_commands.json").read_text()):
        args = shlex.split(entry["command"])
        target = next((m.group(1) or "baseline" for a in args if (m := TARGET_DEFINE.match(a))), None)
        if target is None:
            continue
        source = os.path.basename(entry["file"])
        found[(source, target)] = Flags(frozenset(a for a in args if a.startswith("-m")),
                                        frozenset(a[2:] for a in args if a.startswith("-DNPY_HAVE_")))
    return found


def header_targets(build: Path) -> dict[str, list[str]]:
    """``<name>.dispatch.h`` -> the targets its NPY_MTARGETS_CONF_DISPATCH runs, in order, plus 'baseline'."""
    out = {}
    for h in sorted((build / "numpy" / "_core").glob("*.dispatch.h")):
        text = h.read_text()
        names = HEADER_TARGET.findall(text)
        if re.search(r"NPY_MTARGETS_CONF_BASELINE\(EXEC_CB, \.\.\.\)\s*NPY__MTARGETS_EXPAND", text):
            names.append("baseline")
        out[h.name] = names
    return out


def config_names(build: Path) -> dict[str, list[str]]:
    text = (build / "meson_cpu" / "npy_cpu_dispatch_config.h").read_text()
    return {kind: names.split() for kind, names in CONFIG_NAMES.findall(text)}


def differences(fork: Path, ccopt: Path) -> list[str]:
    diffs = []
    a, b = dispatch_objects(fork), dispatch_objects(ccopt)
    for key in sorted(set(a) | set(b)):
        if key not in b:
            diffs.append(f"{key}: only in the fork's build")
        elif key not in a:
            diffs.append(f"{key}: only in the ccopt build")
        elif a[key] != b[key]:
            diffs.append(f"{key}: fork -m {sorted(a[key].isa - b[key].isa)} HAVE {sorted(a[key].have - b[key].have)}; "
                         f"ccopt -m {sorted(b[key].isa - a[key].isa)} HAVE {sorted(b[key].have - a[key].have)}")
    ha, hb = header_targets(fork), header_targets(ccopt)
    for name in sorted(set(ha) | set(hb)):
        if sorted(ha.get(name, ["(none)"])) != sorted(hb.get(name, ["(none)"])):
            diffs.append(f"{name}: fork {ha.get(name)} ccopt {hb.get(name)}")
    if config_names(fork) != config_names(ccopt):
        diffs.append(f"npy_cpu_dispatch_config.h: fork {config_names(fork)} ccopt {config_names(ccopt)}")
    return diffs


def summary(build: Path) -> str:
    objs = dispatch_objects(build)
    return (f"{len(objs)} dispatch objects, {len({t for _, t in objs})} targets, "
            f"{len(header_targets(build))} dispatch headers")


if __name__ == "__main__":
    fork, ccopt = Path(sys.argv[1]), Path(sys.argv[2])
    found = differences(fork, ccopt)
    print(f"fork:  {summary(fork)}\nccopt: {summary(ccopt)}")
    print("\n".join(found) if found else "identical: targets, ISA flags and NPY_HAVE_* of every dispatch object, "
          "the targets of every dispatch header, the enabled baseline and dispatch names")
    sys.exit(1 if found else 0)
