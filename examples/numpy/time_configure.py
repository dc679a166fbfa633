#!/usr/bin/env python3
"""Configure time of numpy: its Meson fork's ``meson setup`` against the ccopt-meson port's, and ccopt's share.

    python3 examples/numpy/time_configure.py DEST [--version 2.5.5] [--rounds 5]

DEST holds both trees (prepare_numpy.py makes them, as configure_numpy.py does when they are
missing). Each round configures a fresh build dir in both trees, in alternating order (fork first in
odd rounds), with configure_numpy.py's setup: CC=gcc, CXX=g++, no ccache, the toolchain's Python,
the same options (``-Dallow-noblas=true -Dblas=none -Dlapack=none``); the fork with its vendored
Meson, the port with stock Meson. Prints each pair and the medians with their spread.

ccopt's share: after each port setup, the helper commands Meson ran (``Running command:`` lines of
meson-log.txt) are run again, each ``configure`` into an empty output dir (so its probes run, as in a
first setup) and each ``targets`` as it was, and timed: the sum is what ccopt-meson itself costs in
that setup.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import configure_numpy
import prepare_numpy

HELPER = "ccopt-meson-helper.py"


def helper_commands(build: Path) -> list[list[str]]:
    log = (build / "meson-logs" / "meson-log.txt").read_text(errors="replace")
    prefix = "Running command: "
    return [shlex.split(line[len(prefix):]) for line in log.splitlines()
            if line.startswith(prefix) and HELPER in line]


def helper_seconds(build: Path) -> float:
    """The helper's commands of this setup, run again (``configure`` cold) and timed."""
    total = 0.0
    for cmd in helper_commands(build):
        with tempfile.TemporaryDirectory() as scratch:
            if "configure" in cmd and "--output-dir" in cmd:
                cmd = list(cmd)
                cmd[cmd.index("--output-dir") + 1] = scratch
            start = time.perf_counter()
            subprocess.run(cmd, cwd=build.parent, capture_output=True, text=True)
            total += time.perf_counter() - start
    return total


def timed_setup(tree: Path, case: configure_numpy.Case, fork: bool) -> tuple[float, float]:
    """(seconds of ``meson setup``, seconds of ccopt's helper in it)."""
    start = time.perf_counter()
    s = configure_numpy.setup(tree, case, fork)
    took = time.perf_counter() - start
    if not s.configured:
        raise SystemExit(f"time_configure: setup in {tree} failed:\n{s.log[-2000:]}")
    share = 0.0 if fork else helper_seconds(s.build)
    shutil.rmtree(s.build, ignore_errors=True)
    return took, share


def spread(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.2f} s (min {min(xs):.2f}, max {max(xs):.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--version", default=prepare_numpy.CURRENT, choices=sorted(prepare_numpy.RELEASES))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    dest, case = args.dest.resolve(), configure_numpy.Case(args.version, "x86_64-gcc")
    trees = {fork: dest / f"numpy-{args.version}{'-fork' if fork else ''}" for fork in (True, False)}
    for fork, tree in trees.items():
        if not tree.is_dir():
            prepare_numpy.prepare(dest, args.version, fork)
    fork_t: list[float] = []
    port_t: list[float] = []
    shares: list[float] = []
    for i in range(args.rounds):
        order = [True, False] if i % 2 == 0 else [False, True]
        got = {fork: timed_setup(trees[fork], case, fork) for fork in order}
        fork_t.append(got[True][0])
        port_t.append(got[False][0])
        shares.append(got[False][1])
        print(f"round {i + 1}: fork {got[True][0]:.2f} s, ccopt {got[False][0]:.2f} s "
              f"(helper {got[False][1]:.2f} s), ratio {got[False][0] / got[True][0]:.2f}", flush=True)
    ratios = [c / f for f, c in zip(fork_t, port_t)]
    print(f"fork:  {spread(fork_t)}\nccopt: {spread(port_t)}\nccopt's helper in the port's setup: {spread(shares)}")
    print(f"ratio ccopt/fork: median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, "
          f"max {max(ratios):.2f}), {args.rounds} interleaved pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
