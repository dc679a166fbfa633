#!/usr/bin/env python3
"""Configure time of numpy 2.2.6: its Meson fork's ``meson setup`` against the ccopt-meson port's.

    python3 examples/numpy/time_configure.py FORK_TREE CCOPT_TREE [ROUNDS]

FORK_TREE is the sdist as released, CCOPT_TREE the patched one (prepare_numpy.py makes both).
Each round configures a fresh build dir in both trees, in alternating order (fork first in odd
rounds), with CC=gcc, CXX=g++, no ccache and no PYTHONDONTWRITEBYTECODE, and the same options
(``-Dallow-noblas=true -Dblas=none -Dlapack=none``): the fork with its vendored Meson, the port with
the stock Meson this Python imports. Prints each pair and the medians with their spread.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

OPTIONS = ["-Dallow-noblas=true", "-Dblas=none", "-Dlapack=none"]


def setup(tree: Path, fork: bool) -> float:
    build = tree / "build-timing"
    shutil.rmtree(build, ignore_errors=True)
    meson = ["vendored-meson/meson/meson.py"] if fork else ["-m", "mesonbuild.mesonmain"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("CCACHE")}
    env.update(CC="gcc", CXX="g++")
    start = time.perf_counter()
    r = subprocess.run([sys.executable, *meson, "setup", str(build), *OPTIONS], cwd=tree, env=env,
                       capture_output=True, text=True)
    took = time.perf_counter() - start
    if r.returncode != 0:
        raise SystemExit(f"setup in {tree} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    shutil.rmtree(build, ignore_errors=True)
    return took


def spread(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.1f} s (min {min(xs):.1f}, max {max(xs):.1f})"


def main(fork_tree: Path, ccopt_tree: Path, rounds: int) -> None:
    fork_t: list[float] = []
    ccopt_t: list[float] = []
    for i in range(rounds):
        order = [(True, fork_tree), (False, ccopt_tree)]
        if i % 2:
            order.reverse()
        got = {is_fork: setup(tree, is_fork) for is_fork, tree in order}
        fork_t.append(got[True])
        ccopt_t.append(got[False])
        print(f"round {i + 1}: fork {got[True]:.1f} s, ccopt {got[False]:.1f} s, ratio {got[False] / got[True]:.2f}",
              flush=True)
    ratios = [c / f for f, c in zip(fork_t, ccopt_t)]
    print(f"fork:  {spread(fork_t)}\nccopt: {spread(ccopt_t)}")
    print(f"ratio ccopt/fork: median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, "
          f"max {max(ratios):.2f}), {rounds} interleaved pairs")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(), int(sys.argv[3]) if len(sys.argv) > 3 else 5)
