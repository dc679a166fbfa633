"""Part 5: Meson at numpy scale, four ways of building N dispatch sources (``bench.consumers``).

For each N, every phase runs the four variants in turn within each round (1 warm-up + reps):

- cold ``meson setup`` of a fresh build directory;
- ``meson setup --reconfigure`` of that directory;
- automatic regeneration: an edit of ``meson.build``, then ``ninja build.ninja``;
- no-op ``ninja`` in a fully built directory.

A separate counting build per variant (CC = a logging wrapper) gives the compiler processes of
the cold setup, of the build, and of a regeneration followed by ``ninja``, plus the objects ninja
compiles again after that regeneration; the timed directories use ``gcc`` itself.  One more cold
setup per variant at the largest N runs under ``--profile-self`` (cProfile of the whole Meson
process) and is summarised by where the time goes.
"""

from __future__ import annotations

import json
import os
import pstats
import re
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

from bench import consumers, numpy_fork
from bench.meson_overhead import helper_runs
from bench.timing import Bench, BenchError, logged, run, write_wrapper

PHASES = {"setup": "cold `meson setup`", "reconfigure": "`meson setup --reconfigure`",
          "regen": "automatic regeneration (edit meson.build, `ninja build.ninja`)", "noop": "no-op `ninja`"}
# Functions of Meson whose cumulative time the profile summary reports, as (label, a part of
# the file's path, function names); they nest, so their shares overlap.
PROFILE_SPOTS = (
    ("run_command() (meson_cpu: none; ccopt: the helper)", "interpreter.py", ("func_run_command",)),
    ("static_library() calls", "interpreter.py", ("func_static_lib",)),
    ("features.multi_targets()", "features", ("multi_targets_method",)),
    ("features.test()", "features", ("test_method",)),
    ("unstable-simd check()", "simd.py", ("check",)),
    ("compiler checks (compiles, has_argument)", "compilers", ("compiles", "has_multi_arguments", "cached_compile")),
    ("waiting for child processes", "subprocess.py", ("communicate", "wait")),
)


class Variant:
    """One consumer project of one N: its source tree, its Meson, its build directories."""

    def __init__(self, b: Bench, name: str, src: Path, meson: list[str]) -> None:
        self.b, self.name, self.src, self.meson = b, name, src, meson
        self.edits = 0

    def meson_run(self, *args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
        elapsed, r = run([*self.meson, *args], env=env or self.b.env, cwd=self.src)
        return elapsed, r.stdout

    def ninja(self, build: str, *args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
        elapsed, r = run([self.b.ninja, "-C", build, *args], env=env or self.b.env, cwd=self.src)
        return elapsed, r.stdout

    def setup(self, build: str = "build", env: dict[str, str] | None = None) -> float:
        shutil.rmtree(self.src / build, ignore_errors=True)
        return self.meson_run("setup", build, env=env)[0]

    def edit(self) -> None:
        self.edits += 1
        with open(self.src / "meson.build", "a") as fh:
            fh.write(f"# edit {self.edits}\n")

    def regen(self, build: str = "build", env: dict[str, str] | None = None) -> float:
        self.edit()
        elapsed, out = self.ninja(build, "build.ninja", env=env)
        if "Regenerating build files" not in out:
            raise BenchError(f"ninja did not regenerate {self.src}/{build} after a meson.build edit:\n{out[-2000:]}")
        return elapsed


def count(v: Variant) -> dict[str, Any]:
    """Compiler processes of setup, build and regeneration + ninja, through a logging CC."""
    log = v.src / "cc.log"
    env = dict(v.b.env, CC=str(write_wrapper(v.src / "wrap", log)))
    c: dict[str, Any] = {}
    log.write_text("")
    v.setup("build-count", env=env)
    c["setup_processes"] = logged(log)
    if v.name == "ccopt":
        c["setup_helper_processes"] = helper_runs(v.src / "build-count")
    c.update(model(v, "build-count"))
    log.write_text("")
    _, out = v.ninja("build-count", env=env)
    c["build_processes"] = logged(log)
    c["objects"] = len(re.findall(r"Compiling C object", out))
    c["libraries"] = len(re.findall(r"Linking static target", out))
    _, r = run([str(v.src / "build-count" / "scale_main")], env=v.b.env, cwd=v.src)
    c["output"] = r.stdout.strip()
    log.write_text("")
    v.edit()
    _, out = v.ninja("build-count", env=env)
    if "Regenerating build files" not in out:
        raise BenchError(f"no regeneration in {v.src}/build-count")
    c["regen_processes"] = logged(log)
    c["regen_recompiled"] = len(re.findall(r"Compiling C object", out))
    if v.name == "ccopt":
        c["regen_helper_processes"] = helper_runs(v.src / "build-count")
    _, out = v.ninja("build-count")
    if "no work to do" not in out:
        raise BenchError(f"ninja found work in a built {v.src}/build-count:\n{out[-2000:]}")
    return c


def model(v: Variant, build: str) -> dict[str, int]:
    """What a variant adds to Meson's own model of the build: its build targets, the options of its
    subprojects (``name:option``), and the edges of the ``build.ninja`` Meson writes and ninja loads."""
    _, targets = v.meson_run("introspect", build, "--targets")
    _, options = v.meson_run("introspect", build, "--buildoptions")
    edges = sum(1 for line in (v.src / build / "build.ninja").read_text().splitlines() if line.startswith("build "))
    return {"meson_targets": len(json.loads(targets)),
            "subproject_options": sum(1 for o in json.loads(options) if ":" in o["name"]),
            "ninja_edges": edges}


def regen_parts(v: Variant) -> dict[str, float]:
    """Median milliseconds of Meson's parts of a regeneration (``bench.meson_parts``) over the rounds, in the
    counting build directory (regenerated by that module's own Meson: only after the timed phases)."""
    runs: dict[str, list[float]] = {}
    for _ in range(max(3, v.b.reps)):
        v.edit()
        _, r = run([sys.executable, "-m", "bench.meson_parts", str(v.src), str(v.src / "build-count")],
                   env=v.b.env, cwd=v.src)
        for label, ms in json.loads(r.stdout.strip().splitlines()[-1]).items():
            runs.setdefault(label, []).append(ms)
    return {label: statistics.median(values) for label, values in runs.items()}


def profile(v: Variant) -> dict[str, Any]:
    """Where a cold setup's time goes: Meson's ``--profile-self`` (cProfile of the interpreter run,
    the backend generation and, where the Meson writes it, the introspection files)."""
    shutil.rmtree(v.src / "build-prof", ignore_errors=True)
    wall, _ = v.meson_run("setup", "--profile-self", "build-prof")
    logs = v.src / "build-prof" / "meson-logs"
    parts = {"interpreter": "interpreting meson.build (profile-interpreter.log)",
             "ninja-backend": "backend: build.ninja generation (profile-ninja-backend.log)",
             "introspector": "introspection files (profile-introspector.log)"}
    files = {key: logs / f"profile-{key}.log" for key in parts if (logs / f"profile-{key}.log").is_file()}
    if not files:
        raise BenchError(f"meson --profile-self wrote no profile into {logs}")
    spots = {parts[key]: float(pstats.Stats(str(path)).total_tt) for key, path in files.items()}  # type: ignore[attr-defined]
    spots["rest of the process (start-up, compiler detection, saving state)"] = wall - sum(spots.values())
    merged = pstats.Stats(*(str(p) for p in files.values()))
    table: dict[tuple[str, int, str], Any] = merged.stats  # type: ignore[attr-defined]
    for label, want, names in PROFILE_SPOTS:
        cum = [entry[3] for (path, _, func), entry in table.items() if func in names and want in path]
        if cum:
            spots[label] = max(cum)
    return {"total_s": wall, "spots_s": spots}


def bench_scale(b: Bench, sizes: list[int], fork_tree: Path | None) -> None:
    b.say(f"\n[5] Meson at numpy scale: N = {', '.join(map(str, sizes))} dispatch sources")
    names = [v for v in consumers.VARIANTS if v != "fork" or fork_tree is not None]
    b.scale = {"sizes": sizes, "variants": names, "counts": {}, "profiles": {},
               "labels": {v: consumers.LABELS[v] for v in names}, "load_average": {}}
    for n in sizes:
        root = b.work / f"scale{n}"
        variants: dict[str, Variant] = {}
        for name in names:
            meson = numpy_fork.meson_command(fork_tree) if name == "fork" and fork_tree else b.meson
            variants[name] = Variant(b, name, consumers.make(name, root / name, n, fork_tree), meson)
        b.say(f"  N={n}: counting compiler processes (a logging CC)")
        b.scale["counts"][str(n)] = {name: count(v) for name, v in variants.items()}
        outputs = {c["output"] for c in b.scale["counts"][str(n)].values()}
        if len(outputs) != 1:
            b.notes.append(f"N={n}: the variants printed different results: {sorted(outputs)}")
        time_phases(b, n, variants)
        if n == min(sizes):
            b.say(f"  N={n}: where a regeneration's time goes inside Meson (timers around its functions)")
            b.scale["regen_parts"] = {str(n): {name: regen_parts(v) for name, v in variants.items() if name != "fork"}}
        if hasattr(os, "getloadavg"):
            b.scale["load_average"][str(n)] = list(os.getloadavg())
        if n == max(sizes):
            b.say(f"  N={n}: profiling a cold setup of each variant (--profile-self)")
            b.scale["profiles"][str(n)] = {name: profile(v) for name, v in variants.items()}
        if not b.keep_work:
            shutil.rmtree(root, ignore_errors=True)


def time_phases(b: Bench, n: int, variants: dict[str, Variant]) -> None:
    def phase(name: str, action: Callable[[Variant], float]) -> None:
        def timed(var: Variant) -> Callable[[int], float]:
            return lambda _: action(var)

        b.rounds({f"scale{n}_{name}_{v}": (f"N={n} {PHASES[name]}: {consumers.LABELS[v]}", timed(var))
                  for v, var in variants.items()})

    phase("setup", lambda v: v.setup())
    phase("reconfigure", lambda v: v.meson_run("setup", "--reconfigure", "build")[0])
    phase("regen", lambda v: v.regen())
    phase("noop", lambda v: v.ninja("build-count")[0])
