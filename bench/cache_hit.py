"""Part 2b: what a cache hit costs, against an interpreter start measured the same way (information:
the targets are the regeneration and the setup a user waits for, in the scale part).

- Each helper run of a regeneration (``configure``, ``targets``), with the command line Meson
  logged in ``meson-log.txt`` (its own interpreter, ``-S``), its environment and working
  directory, against ``<that interpreter> -S -c pass``.
- ``ccopt-meson detect`` on a hit, from a clean venv where ccopt-meson is pip-installed (bytecode
  written by pip, nothing else installed), against ``<venv>/bin/python -c pass``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Callable

from bench.detect import DETECT_BASELINE, DETECT_DISPATCH
from bench.projects import make_ccopt_project
from bench.timing import CC, ROOT, Bench, BenchError, run


def logged_helper_runs(build: Path) -> dict[str, list[str]]:
    """The helper command lines of Meson's last configure run, by subcommand."""
    text = (build / "meson-logs" / "meson-log.txt").read_text(errors="replace")
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("Running command:") and "ccopt-meson-helper" in line:
            cmd = shlex.split(line.removeprefix("Running command:"))
            found[cmd[cmd.index(next(a for a in cmd if a.endswith("ccopt-meson-helper.py"))) + 1]] = cmd
    return found


def helper_env(b: Bench, src: Path, build: Path, subdir: str) -> dict[str, str]:
    """What Meson's run_command() sets (mesonbuild/interpreter: MESON_SOURCE_ROOT and friends)."""
    env = {k: v for k, v in b.env.items() if k != "PYTHONPATH"}  # Meson sets no PYTHONPATH
    env.update(MESON_SOURCE_ROOT=str(src), MESON_BUILD_ROOT=str(build), MESON_SUBDIR=subdir)
    return env


def bench_helper_hits(b: Bench) -> None:
    b.say("\n[2b] cache hits: each helper run as Meson runs it, against the same interpreter's start")
    src = make_ccopt_project(b.work / "hit")
    build = src / "build"
    run([*b.meson, "setup", "build"], env=b.env, cwd=src)
    with open(src / "meson.build", "a") as fh:
        fh.write("# edit\n")
    run([b.ninja, "-C", "build", "build.ninja"], env=b.env, cwd=src)  # a regeneration: both runs hit
    cmds = logged_helper_runs(build)
    if set(cmds) != {"configure", "targets"}:
        raise BenchError(f"expected a configure and a targets run in {build}/meson-logs, found {sorted(cmds)}")
    interpreter = cmds["configure"][0]
    cwd = {"configure": src / "subprojects" / "ccopt-meson", "targets": src}
    env = {"configure": helper_env(b, src, build, "subprojects/ccopt-meson"), "targets": helper_env(b, src, build, "")}
    for name, cmd in cmds.items():
        _, r = run(cmd, env=env[name], cwd=cwd[name])
        if name == "configure" and "cache_hit\ttrue" not in r.stdout:
            raise BenchError(f"the helper's configure run was not a cache hit:\n{r.stdout[-2000:]}")
    b.counts["helper_interpreter"] = interpreter

    def timed(name: str) -> Callable[[int], float]:
        return lambda _: run(cmds[name], env=env[name], cwd=cwd[name])[0]

    b.rounds({
        "helper_configure_hit": ("helper `configure`, cache hit (as Meson runs it, -S)", timed("configure")),
        "helper_targets_hit": ("helper `targets` (as Meson runs it, -S)", timed("targets")),
        "python_S_pass": ("`python3 -S -c pass`, the same interpreter",
                          lambda _: run([interpreter, "-S", "-c", "pass"], env=env["targets"], cwd=src)[0]),
    })


def lean_venv(b: Bench, venv: Path) -> Path:
    """A venv with only ccopt-meson in it, installed as a user installs it (pip writes its bytecode)."""
    py = venv / "bin" / "python"
    env = {k: v for k, v in b.env.items() if k != "PYTHONPATH"}
    if not py.exists():
        run([sys.executable, "-m", "venv", str(venv)], env=env)
    run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
         str(ROOT)], env=env, timeout=600)
    return py


def bench_detect_hit(b: Bench, venv: Path) -> None:
    b.say("\n[2c] cached `ccopt-meson detect` from a clean venv, against that venv's `python -c pass`")
    try:
        py = lean_venv(b, venv)
    except BenchError as exc:
        b.skipped["detect_hit_venv"] = f"could not set up {venv}: {str(exc).splitlines()[0]}"
        return
    env = {k: v for k, v in b.env.items() if k != "PYTHONPATH"}
    script = venv / "bin" / "ccopt-meson"
    cmd = [str(script), "detect", "--cc", CC, "--baseline", DETECT_BASELINE, "--dispatch", DETECT_DISPATCH,
           "--build-dir", str(b.work / "lean-hit")]
    run(cmd, env=env, cwd=b.work)
    r = subprocess.run([*cmd, "--json"], env=env, cwd=b.work, capture_output=True, text=True)
    if r.returncode != 0 or not json.loads(r.stdout)["cache"]["hit"]:
        raise BenchError(f"the second detect from {venv} was not a cache hit:\n{r.stdout[-1000:]}{r.stderr[-1000:]}")
    b.rounds({
        "lean_detect_hit": ("`ccopt-meson detect`, cache hit, clean venv", lambda _: run(cmd, env=env, cwd=b.work)[0]),
        # the same run without pip's console script (which imports re before any ccopt code), and
        # what that import alone costs: the part of the figure above no ccopt change can remove
        "lean_module_detect_hit": ("`python -m ccopt_meson detect`, cache hit, clean venv",
                                   lambda _: run([str(py), "-m", "ccopt_meson", *cmd[1:]], env=env, cwd=b.work)[0]),
        "lean_python_import_re": ("`python -c 'import re'` (what pip's script imports first), the same venv",
                                  lambda _: run([str(py), "-c", "import re"], env=env, cwd=b.work)[0]),
        "lean_python_pass": ("`python -c pass`, the same clean venv",
                             lambda _: run([str(py), "-c", "pass"], env=env, cwd=b.work)[0]),
    })
