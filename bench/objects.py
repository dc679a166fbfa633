"""Meson's cost per dispatch source: one static library per source and target (before) against one per
distinct set of compile args (now), on a generated consumer with many dispatch sources.

    python -m bench.objects [--sources 60] [--reps 7] [--before REV]

Variants, each with the ccopt-meson tree of its time in ``subprojects/``:

* ``before``: the tree at ``REV`` (``git archive``), its snippet: ``targets files(...)``, one
  ``static_library`` per line (source x target), targets in each source's ``@targets`` comment;
* ``statement``: this tree, the same sources (``@targets``), one library per set of args;
* ``listed``: this tree, target lists in ``meson.build``, one library per set of args.

Each round times every variant once, in a rotating order (paired, interleaved), with CC=gcc and no
compiler launcher: a cold ``meson setup`` (fresh build dir: the detection probes each time, the
same work in every variant), an automatic regeneration (``ninja build.ninja`` after touching
``meson.build``: a cache hit, so Meson's own work per source dominates) and a no-op ``ninja``.
Prints the median and min-max of each, the median and min-max of the per-round ratios, and the
number of static libraries Meson builds.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from bench.projects import REPO_PARTS, copy_repo

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BEFORE = "72c8387"  # the last tree with one static library per source and target
# target lists of numpy's kind: the baseline plus a few x86 levels, multi-feature groups, other arches
LISTS = (
    "$maxopt baseline sse41 avx2 avx512f avx512_skx asimd vsx2 vsx3 vx",
    "$maxopt baseline (avx2 fma3) avx512f asimdhp vsx2 vx",
    "$maxopt baseline sse42 avx2 avx512_skx asimd vsx2",
    "$maxopt baseline sse42 avx2 avx512_skx avx512_icl asimddp vsx2 vx",
    "baseline sse41 avx2 avx512_skx vsx2",
    "$maxopt baseline (avx2 fma3) avx512_skx avx512_spr asimd vsx4",
)
KERNEL = """\
{statement}#include "ccopt_config.h"
#include "ccopt_dispatch.h"
int CCOPT_FN(k{i})(int x) {{ return x + {i}; }}
"""
BEFORE_SNIPPET = """\
r = run_command(ccopt.get_variable('helper'), 'targets', files({files}),
                '--cache-file', ccopt.get_variable('cache_file'), check: false)
assert(r.returncode() == 0, r.stderr().strip())
libs = []
foreach line : r.stdout().strip().split('\\n')
  t = line.split('\\t')
  libs += static_library(t[0], t[1], c_args: t[2].split(), dependencies: ccopt_dep)
endforeach
"""
AFTER_SNIPPET = """\
r = run_command(ccopt.get_variable('targets'), {args}, check: false)
assert(r.returncode() == 0, r.stderr().strip())
libs = []
foreach line : r.stdout().strip().split('\\n')
  t = line.split('\\t')
  libs += static_library(t[0], t[2].split(), c_args: t[1].split(), dependencies: ccopt_dep)
endforeach
"""
HEAD = "project('scale', 'c', meson_version: '>=1.0.1')\nccopt = subproject('ccopt-meson')\n" \
       "ccopt_dep = dependency('ccopt')\n"
TAIL = "executable('app', 'main.c', link_with: libs, dependencies: ccopt_dep)\n"


def tree_at(rev: str, dest: Path) -> None:
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *REPO_PARTS], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest)


def generate(dest: Path, variant: str, n: int, before: str) -> None:
    sub = dest / "subprojects" / "ccopt-meson"
    if variant == "before":
        sub.mkdir(parents=True)
        tree_at(before, sub)
    else:
        copy_repo(sub, bytecode=False)
    names = [f"k{i}.dispatch.c" for i in range(n)]
    for i, name in enumerate(names):
        statement = "" if variant == "listed" else f"/*@targets {LISTS[i % len(LISTS)]} */\n"
        (dest / name).write_text(KERNEL.format(statement=statement, i=i))
    (dest / "main.c").write_text("int main(void) { return 0; }\n")
    quoted = ", ".join(f"'{s}'" for s in names)
    if variant == "before":
        body = BEFORE_SNIPPET.format(files=quoted)
    elif variant == "statement":
        body = AFTER_SNIPPET.format(args=f"files({quoted})")
    else:
        body = AFTER_SNIPPET.format(args=", ".join(f"'{s}: {LISTS[i % len(LISTS)]}'" for i, s in enumerate(names)))
    (dest / "meson.build").write_text(HEAD + body + TAIL)


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", type=int, default=60)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--before", default=DEFAULT_BEFORE)
    ns = ap.parse_args(argv)
    meson = [sys.executable, "-m", "mesonbuild.mesonmain"]
    ninja = shutil.which("ninja") or "ninja"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCOPT_")}
    env["CC"] = shutil.which("gcc") or "gcc"
    variants = ("before", "statement", "listed")
    times: dict[str, dict[str, list[float]]] = {v: {"setup": [], "regen": [], "noop": []} for v in variants}
    with tempfile.TemporaryDirectory(prefix="ccopt-objects-") as tmp:
        work = Path(tmp)
        for v in variants:
            generate(work / v, v, ns.sources, ns.before)
        counts = {}
        for rep in range(ns.reps + 1):  # the first round warms the caches and is dropped
            order = variants[rep % 3:] + variants[:rep % 3]
            for v in order:
                src, build = work / v, work / v / f"build{rep}"
                setup = timed([*meson, "setup", str(build)], src, env)
                timed([ninja, "-C", str(build), "build.ninja"], src, env)
                with open(src / "meson.build", "a") as fh:
                    fh.write("#\n")
                regen = timed([ninja, "-C", str(build), "build.ninja"], src, env)
                noop = timed([ninja, "-C", str(build), "-n"], src, env)
                if rep:
                    for key, value in (("setup", setup), ("regen", regen), ("noop", noop)):
                        times[v][key].append(value)
                else:
                    intro = subprocess.run([*meson, "introspect", "--targets", str(build)], capture_output=True,
                                           text=True, env=env, check=True).stdout
                    counts[v] = intro.count('"type": "static library"')
                shutil.rmtree(build)
    print(f"{ns.sources} dispatch sources, gcc, {ns.reps} paired rounds; median (min-max) seconds")
    print(f"{'':<10} {'static libs':>11} {'cold setup':>20} {'regeneration':>20} {'no-op ninja':>20}")
    for v in variants:
        row = [f"{statistics.median(t):.3f} ({min(t):.3f}-{max(t):.3f})" for t in times[v].values()]
        print(f"{v:<10} {counts[v]:>11} " + " ".join(f"{c:>20}" for c in row))
    for v in variants[1:]:  # the ratio within each round (same load), then its median and spread
        parts = []
        for k in times[v]:
            paired = [a / b for a, b in zip(times[v][k], times["before"][k])]
            parts.append(f"{k} {statistics.median(paired):.2f}x ({min(paired):.2f}-{max(paired):.2f})")
        print(f"{v} / before, paired: " + ", ".join(parts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
