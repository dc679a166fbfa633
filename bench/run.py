"""The ccopt-meson benchmark: one command, a few minutes on 2 cores.

    python -m bench [--reps N] [--quick] [--out DIR]      (or: python bench/run.py ...)

Leaves ``results.md`` (the Markdown table it prints), ``results.json`` and
``results.png`` (a bar chart, when matplotlib can be found) in ``bench/out``.

Every figure is 1 warm-up + N runs (default 7), reported as median and min-max;
ratios of medians are the headline, and absolute times are this machine's.

1. Cold detection: ``python -m ccopt_meson detect`` in a fresh build directory
   against numpy 1.26.4's ``CCompilerOpt`` with the same request and compiler,
   both timed as whole processes; compiler processes counted with a logging
   wrapper used as the compiler (CC).  numpy lives in a throw-away venv
   (``<out>/venv-numpy``, reused when present).
2. Warm detection: the cached ``detect`` against ``python -c pass`` and against
   CCompilerOpt's cache hit.
3. Inside Meson: cold ``meson setup``, ``meson setup --reconfigure`` and ninja's
   automatic regeneration of the example consumer ``examples/dot``, against the
   same sources without ccopt-meson and against a project using Meson's
   ``unstable-simd`` module.
4. The payoff of dispatch: the example's ``bench_dot`` (release build),
   throughput per compiled target of a load-bound kernel (``dot``) and two
   compute-bound ones (``poly``: float Horner; ``i8dot``: int8 dot product, where
   the instruction set and not only the vector width changes), and the cost of a
   dispatched call against a direct one.

``--quick`` skips the numpy part (it downloads numpy) for the smoke test.
This file imports only the standard library at the top: the plot step runs it
again (``--plot``) under whichever interpreter has matplotlib.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
REPO_PARTS = ("meson.build", "meson_options.txt", "tools", "ccopt_meson")
DEFAULT_OUT = ROOT / "bench" / "out"
SCHEMA_VERSION = 1

CC = "gcc"
DETECT_BASELINE = "SSE SSE2 SSE3"
DETECT_DISPATCH = "max -xop -fma4"
NUMPY_VERSION = "1.26.4"
# numpy.distutils asks for setuptools < 60: from 60 on, `import distutils` is setuptools' vendored copy.
# Both work with numpy 1.26.4 on Python 3.11 (same result); the pin gives the stdlib distutils numpy was written for.
NUMPY_VENV_PACKAGES = (f"numpy=={NUMPY_VERSION}", "setuptools<60")
# Variables that would change what a compiler run means; the benchmark runs without them.
DROPPED_ENV = ("CC", "CXX", "CFLAGS", "CPPFLAGS", "CXXFLAGS", "LDFLAGS", "CCOPT_FLUSH",
               "CCOPT_DISABLE_CPU_FEATURES", "CCOPT_ENABLE_CPU_FEATURES", "PYTHONSTARTUP", "MESONINTROSPECT")

GOALS = {
    "cold_detect": "cold detect >= 10x faster than CCompilerOpt",
    "cached_detect": "cached detect <= 1.5x bare `python -c pass`",
    "regen_overhead": "automatic regeneration overhead <= 10% over the no-ccopt project",
    "setup_overhead": "cold `meson setup` overhead <= 0.5 s over the no-ccopt project",
    "avx2_speedup": "AVX2 version (X86_V3) of a compute-bound kernel (i8dot or poly) >= 3x the SSE2 baseline version",
}


# The kernels of bench_dot's JSON: key, title in the tables, throughput unit (i8dot's "gflops"
# field counts integer operations).  The compute-bound ones, integer first, are what the
# avx2_speedup goal reads.
KERNELS: tuple[tuple[str, str, str], ...] = (
    ("poly", "poly_sum (float, degree-16 Horner, compute-bound)", "GFLOP/s"),
    ("i8dot", "i8dot (int8 dot product into int32, compute-bound)", "GOP/s"),
    ("dot", "dot (float, load-bound)", "GFLOP/s"),
)
KERNEL_UNITS = {key: unit for key, _, unit in KERNELS}
COMPUTE_BOUND = ("i8dot", "poly")
RATE_UNITS = ("GFLOP/s", "GOP/s")


class BenchError(Exception):
    """A step of the benchmark failed; the message says which and how."""


# --------------------------------------------------------------------------- measurements


@dataclass
class Stat:
    runs: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def min(self) -> float:
        return min(self.runs)

    @property
    def max(self) -> float:
        return max(self.runs)

    def as_dict(self) -> dict[str, Any]:
        return {"median": self.median, "min": self.min, "max": self.max, "runs": list(self.runs)}


@dataclass
class Bench:
    reps: int
    quick: bool
    out: Path
    work: Path
    env: dict[str, str]
    meson: list[str]
    ninja: str
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    dispatch: dict[str, Any] = field(default_factory=dict)

    def say(self, text: str) -> None:
        print(text, flush=True)

    def figure(self, key: str, label: str, stat: Stat, unit: str = "s") -> Stat:
        self.figures[key] = {"label": label, "unit": unit, **stat.as_dict()}
        self.say(f"  {label}: {fmt_stat(self.figures[key])}")
        return stat

    def rounds(self, actions: dict[str, tuple[str, Callable[[int], float]]]) -> dict[str, Stat]:
        """1 warm-up round + ``reps`` rounds; a round runs each ``(label, action)`` once, in turn.

        ``action(i)`` returns the timed part of round ``i`` (0 = warm-up).  Interleaving keeps the
        contenders comparable on a shared machine, and pairs their runs for the ratio ranges.
        """
        runs: dict[str, list[float]] = {key: [] for key in actions}
        for i in range(self.reps + 1):
            for key, (_, action) in actions.items():
                elapsed = action(i)
                if i:
                    runs[key].append(elapsed)
        return {key: self.figure(key, label, Stat(runs[key])) for key, (label, _) in actions.items()}

    def repeat(self, action: Callable[[int], float]) -> Stat:
        """1 warm-up + ``reps`` runs of ``action(i)``, which returns the timed part of run ``i`` (0 = warm-up)."""
        action(0)
        return Stat([action(i) for i in range(1, self.reps + 1)])


def run(cmd: Sequence[str], *, env: dict[str, str], cwd: Path | None = None, check: bool = True,
        timeout: float = 900) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run ``cmd`` as a whole process: its wall time in seconds, and its result."""
    t0 = time.perf_counter()
    try:
        r = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError as exc:
        raise BenchError(f"cannot run {cmd[0]}: {exc}") from exc
    elapsed = time.perf_counter() - t0
    if check and r.returncode != 0:
        raise BenchError(f"{' '.join(cmd)} failed with status {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return elapsed, r


def fmt_time(seconds: float) -> str:
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def fmt_value(value: float, unit: str) -> str:
    if unit == "s":
        return fmt_time(value)
    if unit in RATE_UNITS:
        return f"{value:.1f}"
    return f"{value:.1f} {unit}" if unit else f"{value:.2f}"


def fmt_stat(fig: dict[str, Any]) -> str:
    unit = fig["unit"]
    rng = f"{fmt_value(fig['min'], unit)}–{fmt_value(fig['max'], unit)}"
    tail = f" {unit}" if unit in RATE_UNITS else ""
    return f"{fmt_value(fig['median'], unit)}{tail} ({rng})"


# --------------------------------------------------------------------------- environment


def bench_env() -> dict[str, str]:
    """The environment of every measured process.

    PATH starts with this interpreter's directory, so that ``python3`` is the interpreter
    itself, not a launcher shim (pyenv's are shell scripts that cost tens of ms per start).
    Meson runs the helper with its own interpreter anyway.  PYTHONPATH makes the
    source checkout's ``ccopt_meson`` importable from any directory.
    """
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = str(ROOT)
    env["LC_ALL"] = "C"
    return env


def find_ninja(env: dict[str, str]) -> str:
    """The ninja binary itself: pip's ``ninja`` package puts a Python launcher on PATH."""
    try:
        import ninja  # type: ignore[import-not-found, import-untyped, unused-ignore]

        binary = Path(ninja.BIN_DIR) / "ninja"
        if binary.is_file():
            return str(binary)
    except (ImportError, AttributeError):
        pass
    found = shutil.which("ninja", path=env["PATH"])
    if not found:
        raise BenchError("ninja is not installed (pip install ninja)")
    return found


def first_line(cmd: Sequence[str], env: dict[str, str]) -> str:
    try:
        _, r = run(cmd, env=env, check=False, timeout=60)
    except BenchError:
        return "not found"
    lines = (r.stdout or r.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def machine_info(b: Bench) -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        fields: dict[str, str] = {}
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip().lower(), value.strip())
        cpu = next((fields[k] for k in ("model name", "cpu model", "cpu", "hardware") if fields.get(k)), cpu)
    except OSError:
        pass
    distro = ""
    try:
        fields = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line)
        distro = fields.get("PRETTY_NAME", "").strip('"')
    except OSError:
        pass
    info = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "gcc": first_line([CC, "-dumpfullversion"], b.env),
        "gcc_banner": first_line([CC, "--version"], b.env),
        "meson": first_line([*b.meson, "--version"], b.env),
        "ninja": first_line([b.ninja, "--version"], b.env),
        "python": f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        "os": distro or platform.platform(),
        "kernel": platform.release(),
        "load_average_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
    return info


# --------------------------------------------------------------------------- 1-2: detection


def write_wrapper(directory: Path, log: Path) -> Path:
    """A ``gcc`` that logs each invocation, then runs the real one."""
    real = shutil.which(CC)
    if real is None:
        raise BenchError(f"{CC} is not installed")
    directory.mkdir(parents=True, exist_ok=True)
    wrapper = directory / "gcc"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def logged(log: Path) -> int:
    try:
        return sum(1 for line in log.read_text().splitlines() if line.strip())
    except FileNotFoundError:
        return 0


def ccopt_detect_cmd(build_dir: Path, baseline: str, cc: str = CC, json_out: bool = False) -> list[str]:
    cmd = [sys.executable, "-m", "ccopt_meson", "detect", "--cc", cc, "--baseline", baseline,
           "--dispatch", DETECT_DISPATCH, "--build-dir", str(build_dir)]
    return cmd + (["--json"] if json_out else [])


def ccopt_counts(b: Bench, work: Path, key: str, baseline: str) -> None:
    """Compiler processes of a cold detect: the wrapper as CC and --cc, cross-checked with ccopt's own count."""
    log = work / f"cc{key}.log"
    wrapper = write_wrapper(work / "wrap", log)
    log.write_text("")
    env = dict(b.env, CC=str(wrapper))
    _, r = run(ccopt_detect_cmd(work / f"count{key}", baseline, cc=str(wrapper), json_out=True), env=env, cwd=b.work)
    doc = json.loads(r.stdout)
    b.counts[f"ccopt_cold{key}_processes"] = logged(log)
    b.counts[f"ccopt_cold{key}_reported"] = doc["probes"]
    if logged(log) != doc["probes"]:
        b.notes.append(f"ccopt-meson reported {doc['probes']} compiler processes, the wrapper logged {logged(log)}")
    b.counts[f"ccopt{key}_baseline"] = doc["baseline"]["names"]
    b.counts[f"ccopt{key}_dispatch"] = doc["dispatch"]["names"]


NUMPY_DRIVER = '''\
"""CCompilerOpt as numpy.distutils builds use it: argv = baseline, dispatch, cache_path."""
import json
import sys
import warnings

warnings.simplefilter("ignore")
import distutils  # noqa: E402

import numpy  # noqa: E402
from numpy.distutils.ccompiler import new_compiler  # noqa: E402
from numpy.distutils.ccompiler_opt import CCompilerOpt  # noqa: E402

cc = new_compiler()
cc.customize(None)
opt = CCompilerOpt(cc, cpu_baseline=sys.argv[1], cpu_dispatch=sys.argv[2], cache_path=sys.argv[3])
print("BENCH-RESULT " + json.dumps({
    "numpy": numpy.__version__, "distutils": distutils.__file__, "compiler_so": list(cc.compiler_so),
    "baseline": opt.cpu_baseline_names(), "dispatch": opt.cpu_dispatch_names(), "cache_hit": opt.cache_infile,
}))
'''


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv(b: Bench, venv: Path, extra: Sequence[str] = ()) -> Path:
    """The numpy venv, created (or completed) when needed; reused when it already has everything."""
    py = venv_python(venv)
    want = list(NUMPY_VENV_PACKAGES) + list(extra)
    check = (f"import numpy, setuptools; assert numpy.__version__ == '{NUMPY_VERSION}'; "
             "assert int(setuptools.__version__.split('.')[0]) < 60")
    check += "".join(f"; import {m}" for m in extra)
    if py.exists() and run([str(py), "-c", check], env=b.env, check=False)[1].returncode == 0:
        return py
    if not py.exists():
        b.say(f"  creating {venv}")
        run([sys.executable, "-m", "venv", str(venv)], env=b.env)
    b.say(f"  pip install {' '.join(want)} (into {venv})")
    env = {k: v for k, v in b.env.items() if k != "PYTHONPATH"}
    run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *want], env=env, timeout=1800)
    return py


class Numpy:
    """numpy's CCompilerOpt run by a driver script in the throw-away venv."""

    def __init__(self, b: Bench, py: Path, work: Path) -> None:
        self.b, self.py, self.work = b, py, work
        work.mkdir(parents=True, exist_ok=True)
        self.driver = work / "ccompileropt_driver.py"
        self.driver.write_text(NUMPY_DRIVER)
        self.env = {k: v for k, v in b.env.items() if k != "PYTHONPATH"}
        self.env["CC"] = CC  # the same compiler command as `detect --cc gcc`

    def run(self, baseline: str, cache: Path, cc: str | None = None) -> tuple[float, dict[str, Any]]:
        env = self.env if cc is None else dict(self.env, CC=cc)
        cmd = [str(self.py), "-W", "ignore", str(self.driver), baseline, DETECT_DISPATCH, str(cache)]
        elapsed, r = run(cmd, env=env, cwd=self.b.work)
        for line in r.stdout.splitlines():
            if line.startswith("BENCH-RESULT "):
                return elapsed, json.loads(line.removeprefix("BENCH-RESULT "))
        raise BenchError(f"the CCompilerOpt driver printed no result:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")

    def counts(self, key: str, baseline: str) -> None:
        """Compiler processes of a cold run, with CC set to the logging wrapper (checked in compiler_so)."""
        log = self.work / f"cc{key}.log"
        wrapper = write_wrapper(self.work / "wrap", log)
        log.write_text("")
        _, doc = self.run(baseline, self.work / f"count{key}.py", cc=str(wrapper))
        if doc["compiler_so"][:1] != [str(wrapper)] or logged(log) == 0:
            raise BenchError(f"distutils did not use the wrapper as CC: compiler_so = {doc['compiler_so']}")
        b = self.b
        b.counts[f"numpy_cold{key}_processes"] = logged(log)
        b.counts[f"numpy{key}_baseline"] = doc["baseline"]
        b.counts[f"numpy{key}_dispatch"] = doc["dispatch"]
        b.counts["numpy_distutils"] = doc["distutils"]
        b.counts["numpy_version"] = doc["numpy"]
        if key == "":  # and of a cache hit (the wrapper is another compiler command: its own cache file)
            cache = self.work / "count-warm.py"
            self.run(baseline, cache, cc=str(wrapper))
            log.write_text("")
            _, doc = self.run(baseline, cache, cc=str(wrapper))
            if not doc["cache_hit"]:
                raise BenchError(f"CCompilerOpt did not hit its cache {cache}")
            b.counts["numpy_warm_processes"] = logged(log)


def bench_detection(b: Bench, venv: Path | None) -> None:
    """Parts 1-2.  Each round runs every contender once, so a change of machine load hits all alike."""
    b.say("\n[1-2] feature detection (whole processes)")
    work = b.work / "detect"
    work.mkdir(parents=True, exist_ok=True)
    numpy: Numpy | None = None
    if venv is not None:
        try:
            numpy = Numpy(b, ensure_venv(b, venv), work / "numpy")
        except BenchError as exc:
            b.skipped["numpy"] = f"could not set up the numpy venv: {str(exc).splitlines()[0]}"
            b.say(f"  skipped: {b.skipped['numpy']}")
    counter = [0]

    def fresh(suffix: str = "") -> Path:
        counter[0] += 1
        return work / f"cold-{counter[0]}{suffix}"

    def ccopt_cold(baseline: str) -> Callable[[int], float]:
        return lambda _: run(ccopt_detect_cmd(fresh(), baseline), env=b.env, cwd=b.work)[0]

    def numpy_cold(np: Numpy, baseline: str) -> Callable[[int], float]:
        return lambda _: np.run(baseline, fresh(".py"))[0]

    cold: dict[str, tuple[str, Callable[[int], float]]] = {}
    for key, baseline in (("", DETECT_BASELINE), ("_native", "native")):
        ccopt_counts(b, work, key, baseline)
        cold[f"ccopt_cold{key}"] = (f"ccopt-meson detect, cold, baseline '{baseline}'", ccopt_cold(baseline))
        if numpy is not None:
            numpy.counts(key, baseline)
            cold[f"numpy_cold{key}"] = (f"CCompilerOpt, cold, baseline '{baseline}'", numpy_cold(numpy, baseline))
    b.rounds(cold)

    warm_dir = work / "warm"
    run(ccopt_detect_cmd(warm_dir, DETECT_BASELINE), env=b.env, cwd=b.work)
    _, r = run(ccopt_detect_cmd(warm_dir, DETECT_BASELINE, json_out=True), env=b.env, cwd=b.work)
    doc = json.loads(r.stdout)
    if not doc["cache"]["hit"] or doc["probes"] != 0:
        raise BenchError(f"the second detect in {warm_dir} was not a cache hit")
    warm: dict[str, tuple[str, Callable[[int], float]]] = {
        "ccopt_warm": ("ccopt-meson detect, cached (same build dir)",
                       lambda _: run(ccopt_detect_cmd(warm_dir, DETECT_BASELINE), env=b.env, cwd=b.work)[0]),
        "python_pass": ("python -c pass", lambda _: run([sys.executable, "-c", "pass"], env=b.env, cwd=b.work)[0]),
    }
    if numpy is not None:
        np, cache = numpy, work / "warm-cache.py"
        np.run(DETECT_BASELINE, cache)
        if not np.run(DETECT_BASELINE, cache)[1]["cache_hit"]:
            raise BenchError(f"CCompilerOpt did not hit its cache {cache}")
        warm["numpy_warm"] = ("CCompilerOpt, cache hit (same cache_path)", lambda _: np.run(DETECT_BASELINE, cache)[0])
    b.rounds(warm)


# --------------------------------------------------------------------------- 3: inside Meson

PLAIN_MESON = """\
project('dot', 'c', version: '1.0', default_options: ['buildtype=release'])
# The example without ccopt-meson: the same kernels compiled once, for the compiler's default target.
dot_lib = static_library('dot', 'dot.dispatch.c', 'poly.dispatch.c', 'i8dot.dispatch.c', 'plain.c')
test_dot = executable('test_dot', 'main.c', link_with: dot_lib)
test('dot', test_dot)
bench_dot = executable('bench_dot', 'main.c', link_with: dot_lib)
"""

PLAIN_FILES = {
    "ccopt_config.h": """\
/* Stand-in for ccopt-meson's generated header: the compiler's default target, nothing else. */
#ifndef CCOPT_CONFIG_H_
#define CCOPT_CONFIG_H_
#if defined(__SSE2__)
#define CCOPT_HAVE_SSE 1
#define CCOPT_HAVE_SSE2 1
#include <emmintrin.h>
#endif
#endif
""",
    "ccopt_dispatch.h": """\
/* Stand-in for ccopt-meson's dispatch macros: one version, under the plain name. */
#ifndef CCOPT_DISPATCH_H_
#define CCOPT_DISPATCH_H_
#define CCOPT_FN(NAME) NAME
#endif
""",
    "plain.c": """\
#include "dot.h"

const char *dot_target(void) { return "BASELINE"; }
const char *poly_target(void) { return "BASELINE"; }
const char *i8dot_target(void) { return "BASELINE"; }
""",
    "main.c": """\
#include <stdio.h>

#include "dot.h"

int main(void)
{
    static float a[64], b[64];
    int i;
    for (i = 0; i < 64; i++) {
        a[i] = (float)i / 64.0f;
        b[i] = 0.25f;
    }
    printf("%g %g %s\\n", dot(a, b, 64), poly_sum(a, 64), dot_target());
    return 0;
}
""",
}

SIMD_MESON = """\
project('polysimd', 'c', version: '1.0', default_options: ['buildtype=release'])
# Meson's own SIMD module: one static library per instruction set the compiler supports.
simd = import('unstable-simd')
cc = meson.get_compiler('c')
r = simd.check('poly', sse41: 'poly_sse41.c', sse42: 'poly_sse42.c', avx: 'poly_avx.c', avx2: 'poly_avx2.c',
               compiler: cc)
configure_file(output: 'polysimd_conf.h', configuration: r[1])
poly_lib = static_library('poly', 'poly.c', link_with: r[0])
test_poly = executable('test_poly', 'main.c', link_with: poly_lib)
test('poly', test_poly)
"""

SIMD_KERNEL = """\
/* One Horner kernel (the example's polynomial), instantiated per instruction set by poly_<iset>.c. */
#include <stddef.h>
#include <immintrin.h>

#define POLY_DEGREE 16
static const float poly_c[POLY_DEGREE + 1] = {1.0f, 1.0f, 5.0e-1f, 1.6666667e-1f, 4.1666668e-2f, 8.3333338e-3f,
    1.3888889e-3f, 1.9841270e-4f, 2.4801587e-5f, 2.7557319e-6f, 2.7557319e-7f, 2.5052108e-8f, 2.0876757e-9f,
    1.6059044e-10f, 1.1470746e-11f, 7.6471637e-13f, 4.7794773e-14f};

float POLY_NAME(const float *x, size_t n)
{
    POLY_VEC total = POLY_SET1(0.0f), acc, xv;
    float lanes[POLY_WIDTH], sum = 0.0f;
    size_t i = 0;
    int k;
    for (; i + POLY_WIDTH <= n; i += POLY_WIDTH) {
        xv = POLY_LOAD(x + i);
        acc = POLY_SET1(poly_c[POLY_DEGREE]);
        for (k = POLY_DEGREE - 1; k >= 0; k--) acc = POLY_ADD(POLY_MUL(acc, xv), POLY_SET1(poly_c[k]));
        total = POLY_ADD(total, acc);
    }
    POLY_STORE(lanes, total);
    for (k = 0; k < POLY_WIDTH; k++) sum += lanes[k];
    for (; i < n; i++) {
        float p = poly_c[POLY_DEGREE];
        for (k = POLY_DEGREE - 1; k >= 0; k--) p = p * x[i] + poly_c[k];
        sum += p;
    }
    return sum;
}
"""

SIMD_ISETS = {"sse41": ("_mm", "__m128", 4), "sse42": ("_mm", "__m128", 4),
              "avx": ("_mm256", "__m256", 8), "avx2": ("_mm256", "__m256", 8)}

SIMD_DISPATCH = """\
#include <stddef.h>

#include "polysimd_conf.h"

typedef float (*poly_fn)(const float *, size_t);
float poly_sum(const float *x, size_t n);
%(decls)s
static float poly_sum_scalar(const float *x, size_t n)
{
    float sum = 0.0f;
    size_t i;
    for (i = 0; i < n; i++) sum += 1.0f + x[i];
    return sum;
}

float poly_sum(const float *x, size_t n)
{
    static poly_fn best;
    if (!best) {
        best = poly_sum_scalar;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
        __builtin_cpu_init();
%(checks)s#endif
    }
    return best(x, n);
}
"""

SIMD_MAIN = """\
#include <stddef.h>
#include <stdio.h>

float poly_sum(const float *x, size_t n);

int main(void)
{
    static float x[64];
    int i;
    for (i = 0; i < 64; i++) x[i] = (float)i / 64.0f;
    printf("%g\\n", poly_sum(x, 64));
    return 0;
}
"""


def copy_repo(dest: Path) -> None:
    dest.mkdir(parents=True)
    for part in REPO_PARTS:
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / part)
    precompile(dest / "ccopt_meson")


def precompile(package: Path) -> None:
    """Write the bytecode a first run (or pip install) writes; PYTHONDONTWRITEBYTECODE may forbid it."""
    import compileall

    compileall.compile_dir(str(package), quiet=1)


def make_ccopt_project(dest: Path) -> Path:
    """examples/dot with the repo parts in subprojects/ccopt-meson, as tests/test_meson.py builds it."""
    shutil.copytree(ROOT / "examples" / "dot", dest, symlinks=True,
                    ignore=shutil.ignore_patterns("ccopt-meson", "build*", "__pycache__"))
    copy_repo(dest / "subprojects" / "ccopt-meson")
    return dest


def make_plain_project(dest: Path) -> Path:
    """The same sources, compiled once: no dispatch, no subproject."""
    dest.mkdir(parents=True)
    for name in ("dot.dispatch.c", "poly.dispatch.c", "i8dot.dispatch.c", "dot.h"):
        shutil.copy2(ROOT / "examples" / "dot" / name, dest / name)
    (dest / "meson.build").write_text(PLAIN_MESON)
    for name, text in PLAIN_FILES.items():
        (dest / name).write_text(text)
    return dest


def make_simd_project(dest: Path) -> Path:
    """The polynomial kernel in sse41/sse42/avx/avx2 variants through Meson's unstable-simd module."""
    dest.mkdir(parents=True)
    (dest / "meson.build").write_text(SIMD_MESON)
    (dest / "poly_kernel.h").write_text(SIMD_KERNEL)
    decls, checks = [], []
    for iset, (prefix, vec, width) in SIMD_ISETS.items():
        (dest / f"poly_{iset}.c").write_text(
            f"#define POLY_NAME poly_sum_{iset}\n#define POLY_VEC {vec}\n#define POLY_WIDTH {width}\n"
            f"#define POLY_LOAD {prefix}_loadu_ps\n#define POLY_STORE {prefix}_storeu_ps\n"
            f"#define POLY_SET1 {prefix}_set1_ps\n#define POLY_MUL {prefix}_mul_ps\n#define POLY_ADD {prefix}_add_ps\n"
            '#include "poly_kernel.h"\n')
        decls.append(f"#ifdef HAVE_{iset.upper()}\nfloat poly_sum_{iset}(const float *x, size_t n);\n#endif\n")
        feature = {"sse41": "sse4.1", "sse42": "sse4.2"}.get(iset, iset)
        checks.append(f"#ifdef HAVE_{iset.upper()}\n        if (__builtin_cpu_supports(\"{feature}\")) "
                      f"best = poly_sum_{iset};\n#endif\n")
    (dest / "poly.c").write_text(SIMD_DISPATCH % {"decls": "".join(decls), "checks": "".join(checks)})
    (dest / "main.c").write_text(SIMD_MAIN)
    return dest


PROJECTS = (("ccopt", "examples/dot with ccopt-meson"), ("plain", "same sources, no ccopt (a)"),
            ("simd", "Meson unstable-simd (b)"))


def helper_runs(build: Path) -> int:
    """ccopt-meson helper processes Meson started in its last configure run."""
    try:
        text = (build / "meson-logs" / "meson-log.txt").read_text(errors="replace")
    except OSError:
        return 0
    return sum(1 for line in text.splitlines() if line.startswith("Running command:") and "ccopt-meson-helper" in line)


def bench_meson(b: Bench) -> None:
    b.say("\n[3] inside Meson (whole meson/ninja processes)")
    root = b.work / "meson"
    root.mkdir(parents=True, exist_ok=True)
    projects = {"ccopt": make_ccopt_project(root / "ccopt"), "plain": make_plain_project(root / "plain"),
                "simd": make_simd_project(root / "simd")}
    runs: dict[str, dict[str, list[float]]] = {p: {"setup": [], "reconfigure": [], "regen": []} for p in projects}

    def setup(src: Path) -> float:
        shutil.rmtree(src / "build", ignore_errors=True)
        return run([*b.meson, "setup", "build"], env=b.env, cwd=src)[0]

    # round-robin over the projects, so that a change of machine load hits all of them alike
    for i in range(b.reps + 1):
        for name, src in projects.items():
            elapsed = setup(src)
            if i:
                runs[name]["setup"].append(elapsed)
    for name, src in projects.items():  # every project builds, and its program runs
        run([b.ninja, "-C", "build"], env=b.env, cwd=src)
        exe = {"ccopt": "test_dot", "plain": "test_dot", "simd": "test_poly"}[name]
        run([str(src / "build" / exe)], env=b.env, cwd=src)
    b.counts["ccopt_setup_helper_processes"] = helper_runs(projects["ccopt"] / "build")
    for i in range(b.reps + 1):
        for name, src in projects.items():
            elapsed = run([*b.meson, "setup", "--reconfigure", "build"], env=b.env, cwd=src)[0]
            if i:
                runs[name]["reconfigure"].append(elapsed)
    for i in range(b.reps + 1):
        for name, src in projects.items():
            with open(src / "meson.build", "a") as fh:
                fh.write(f"# touched {i}\n")
            elapsed, r = run([b.ninja, "-C", "build", "build.ninja"], env=b.env, cwd=src)
            if "Regenerating build files" not in r.stdout:
                raise BenchError(f"ninja did not regenerate {src}/build after a meson.build edit:\n{r.stdout[-2000:]}")
            if name == "ccopt":
                hit = re.search(r"From cache\s*:\s*(\w+)", r.stdout)
                b.counts["ccopt_regen_from_cache"] = bool(hit and hit.group(1).lower() in ("yes", "true"))
            if i:
                runs[name]["regen"].append(elapsed)
    b.counts["ccopt_regen_helper_processes"] = helper_runs(projects["ccopt"] / "build")
    phases = {"setup": "cold `meson setup`", "reconfigure": "`meson setup --reconfigure`",
              "regen": "automatic regeneration (`ninja build.ninja` after a meson.build edit)"}
    labels = dict(PROJECTS)
    for phase, text in phases.items():
        for name in projects:
            b.figure(f"meson_{phase}_{name}", f"{text}: {labels[name]}", Stat(runs[name][phase]))


# --------------------------------------------------------------------------- 4: the payoff of dispatch


def bench_dispatch(b: Bench) -> None:
    b.say("\n[4] the payoff of dispatch: examples/dot bench_dot, release build")
    src = make_ccopt_project(b.work / "payoff")
    run([*b.meson, "setup", "build", "--buildtype=release"], env=b.env, cwd=src)
    run([b.ninja, "-C", "build"], env=b.env, cwd=src)
    _, r = run([str(src / "build" / "test_dot")], env=b.env, cwd=src)
    if "WRONG" in r.stdout:
        raise BenchError(f"test_dot found a wrong result:\n{r.stdout}")
    docs: list[dict[str, Any]] = []

    def once(i: int) -> float:
        elapsed, r = run([str(src / "build" / "bench_dot")], env=b.env, cwd=src)
        if i:
            docs.append(json.loads(r.stdout))
        return elapsed

    b.repeat(once)
    for kernel, _, unit in KERNELS:
        per_run = [d if kernel == "dot" else d[kernel] for d in docs]
        first = per_run[0]
        entry: dict[str, Any] = {"n": first["n"], "picked": first["picked"], "targets": {}}
        for t in first["targets"]:
            name = t["target"]
            ns = Stat([next(x["ns_per_call"] for x in r["targets"] if x["target"] == name) for r in per_run])
            gf = Stat([next(x["gflops"] for x in r["targets"] if x["target"] == name) for r in per_run])
            entry["targets"][name] = {"kernel": t["kernel"], "ns_per_call": ns.as_dict(), "gflops": gf.as_dict()}
            b.figure(f"{kernel}_gflops_{name}", f"{kernel} {name} ({t['kernel']})", gf, unit=unit)
        if kernel == "dot":
            for key in ("call_ns_direct", "call_ns_dispatched"):
                label = "dot(n=8) call, " + ("direct" if key.endswith("direct") else "dispatched")
                entry[key] = b.figure(key, label, Stat([r[key] for r in per_run]), unit="ns").as_dict()
        b.dispatch[kernel] = entry


# --------------------------------------------------------------------------- results


def med(b: Bench, key: str) -> float | None:
    fig = b.figures.get(key)
    return None if fig is None else float(fig["median"])


def speedup(b: Bench, kernel: str, target: str) -> float | None:
    targets = b.dispatch.get(kernel, {}).get("targets", {})
    if target not in targets or "BASELINE" not in targets:
        return None
    return float(targets["BASELINE"]["ns_per_call"]["median"] / targets[target]["ns_per_call"]["median"])


def runs_of(b: Bench, key: str) -> list[float] | None:
    fig = b.figures.get(key)
    return None if fig is None else [float(x) for x in fig["runs"]]


def compute_ratios(b: Bench) -> tuple[dict[str, float], dict[str, list[float]]]:
    """Ratios of medians, and the min-max of the same ratio over paired runs (same round)."""
    out: dict[str, float] = {}
    ranges: dict[str, list[float]] = {}

    def pair(name: str, num: list[float] | None, den: list[float] | None,
             f: Callable[[float, float], float] = lambda n, d: n / d) -> None:
        if num and den and len(num) == len(den) and all(den):
            out[name] = f(statistics.median(num), statistics.median(den))
            per_run = [f(n, d) for n, d in zip(num, den)]
            ranges[name] = [min(per_run), max(per_run)]

    pair("cold_detect_speedup", runs_of(b, "numpy_cold"), runs_of(b, "ccopt_cold"))
    pair("cold_detect_native_speedup", runs_of(b, "numpy_cold_native"), runs_of(b, "ccopt_cold_native"))
    pair("cached_detect_over_python", runs_of(b, "ccopt_warm"), runs_of(b, "python_pass"))
    pair("warm_detect_speedup", runs_of(b, "numpy_warm"), runs_of(b, "ccopt_warm"))
    for phase in ("setup", "reconfigure", "regen"):
        ccopt = runs_of(b, f"meson_{phase}_ccopt")
        for other in ("plain", "simd"):
            suffix = "" if other == "plain" else "_vs_simd"
            pair(f"{phase}_overhead_s{suffix}", ccopt, runs_of(b, f"meson_{phase}_{other}"), lambda n, d: n - d)
            pair(f"{phase}_overhead_pct{suffix}", ccopt, runs_of(b, f"meson_{phase}_{other}"),
                 lambda n, d: 100.0 * (n - d) / d)
    for kernel, _, _ in KERNELS:
        targets = b.dispatch.get(kernel, {}).get("targets", {})
        base = targets.get("BASELINE")
        for name, t in targets.items():
            if base and name != "BASELINE":
                pair(f"{kernel}_{name}_speedup", base["ns_per_call"]["runs"], t["ns_per_call"]["runs"])
    pair("dispatch_call_overhead_ns", runs_of(b, "call_ns_dispatched"), runs_of(b, "call_ns_direct"),
         lambda n, d: n - d)
    return out, ranges


def evaluate_targets(b: Bench, ratios: dict[str, float], ranges: dict[str, list[float]]) -> list[dict[str, Any]]:
    def target(key: str, value: float | None, passed: bool | None, measured: str, why: str = "",
               rng: str | None = None, form: str = ".2f", unit: str = "x") -> dict[str, Any]:
        result = "SKIP" if passed is None else "PASS" if passed else "MISS"
        if value is not None and rng in ranges:
            lo, hi = ranges[rng]
            measured += f"; rounds {format(lo, form)}–{format(hi, form)}{unit}"
        return {"key": key, "goal": GOALS[key], "value": value, "passed": passed, "result": result,
                "measured": measured if value is not None else why}

    t = []
    v = ratios.get("cold_detect_speedup")
    t.append(target("cold_detect", v, None if v is None else v >= 10, f"{v:.1f}x faster" if v else "",
                    b.skipped.get("numpy", "not measured"), "cold_detect_speedup", ".1f"))
    v = ratios.get("cached_detect_over_python")
    t.append(target("cached_detect", v, None if v is None else v <= 1.5, f"{v:.2f}x `python -c pass`" if v else "",
                    rng="cached_detect_over_python"))
    v = ratios.get("regen_overhead_pct")
    s = ratios.get("regen_overhead_s")
    t.append(target("regen_overhead", v, None if v is None else v <= 10,
                    f"{v:+.0f}% ({s or 0:+.2f} s)" if v is not None else "", rng="regen_overhead_pct", form="+.0f",
                    unit="%"))
    v = ratios.get("setup_overhead_s")
    p = ratios.get("setup_overhead_pct")
    t.append(target("setup_overhead", v, None if v is None else v <= 0.5,
                    f"{v:+.2f} s ({p or 0:+.0f}%)" if v is not None else "", rng="setup_overhead_s", form="+.2f",
                    unit=" s"))
    t.append(avx2_goal(ratios, ranges))
    return t


def avx2_goal(ratios: dict[str, float], ranges: dict[str, list[float]]) -> dict[str, Any]:
    """X86_V3 (AVX2) against BASELINE (SSE2) for each compute-bound kernel, both shown.

    The goal is met when one of them reaches 3x; its value is the integer kernel's ratio (the
    float one's when i8dot was not measured), and the text names every kernel with its ratio.
    """
    measured: list[str] = []
    hits: list[str] = []
    value: float | None = None
    for kernel in COMPUTE_BOUND:
        v = ratios.get(f"{kernel}_X86_V3_speedup")
        if v is None:
            continue
        if value is None:
            value = v
        rng = ranges.get(f"{kernel}_X86_V3_speedup")
        spread = f", rounds {rng[0]:.2f}–{rng[1]:.2f}x" if rng else ""
        kind = "int8" if kernel == "i8dot" else "float"
        measured.append(f"{kernel} ({kind}) {v:.2f}x{spread}")
        if v >= 3:
            hits.append(kernel)
    passed = None if value is None else bool(hits)
    if value is None:
        text = "this CPU runs no X86_V3 version"
    else:
        verdict = f"met by {' and '.join(hits)}" if hits else "met by neither"
        text = "X86_V3 over BASELINE: " + "; ".join(measured) + f" ({verdict})"
    return {"key": "avx2_speedup", "goal": GOALS["avx2_speedup"], "value": value, "passed": passed,
            "result": "SKIP" if passed is None else "PASS" if passed else "MISS", "measured": text,
            "kernels": {k: ratios.get(f"{k}_X86_V3_speedup") for k in COMPUTE_BOUND}}


def markdown(doc: dict[str, Any]) -> str:
    figs = doc["figures"]
    m = doc["machine"]
    counts = doc["counts"]
    ratios = doc["ratios"]
    ranges = doc.get("ratio_ranges", {})

    def cell(key: str) -> str:
        return fmt_stat(figs[key]) if key in figs else "skipped"

    def ratio(name: str, form: str, unit: str = "") -> str:
        """The ratio of medians in bold, then its min-max over paired runs."""
        if name not in ratios:
            return "–"
        text = f"**{format(ratios[name], form)}{unit}**"
        if name in ranges:
            lo, hi = ranges[name]
            text += f" ({format(lo, form)}–{format(hi, form)}{'x' if unit.startswith('x') else unit})"
        return text

    load = ""
    if m.get("load_average_start") and m.get("load_average_end"):
        load = (f"  1-minute load average {m['load_average_start'][0]:.1f} at the start and "
                f"{m['load_average_end'][0]:.1f} at the end (a shared machine: min–max show the spread).")
    lines = [
        "# ccopt-meson benchmark",
        "",
        f"Machine (absolute times are this machine's): {m['cpu']}, {m['cores']} cores, {m['os']}; "
        f"gcc {m['gcc']}, Meson {m['meson']}, ninja {m['ninja']}, {m['python']}.{load}",
        "",
        f"Each figure: 1 warm-up + {doc['reps']} runs, median (min–max).  Contenders run in turn within each "
        "round; a ratio is that of the medians, then (in brackets) its min–max over the rounds.  "
        f"Command: `{doc['command']}`" + (" (quick: numpy part skipped)." if doc["quick"] else "."),
        "",
        "| Measurement | ccopt-meson | Compared with | Its figure | Ratio |",
        "| --- | --- | --- | --- | --- |",
    ]
    np_ = f"numpy {counts.get('numpy_version', NUMPY_VERSION)} CCompilerOpt"
    for key, label, rname in (("", f"'{DETECT_BASELINE}'", "cold_detect_speedup"),
                              ("_native", "'native'", "cold_detect_native_speedup")):
        procs = (f"{counts.get(f'ccopt_cold{key}_processes', '?')} vs "
                 f"{counts.get(f'numpy_cold{key}_processes', '?')} compiler processes")
        lines.append(f"| Cold detect, baseline {label}, dispatch '{DETECT_DISPATCH}'; {procs} | "
                     f"{cell(f'ccopt_cold{key}')} | {np_}, cold | {cell(f'numpy_cold{key}')} | "
                     f"{ratio(rname, '.1f', 'x faster')} |")
    lines.append(f"| Cached detect (same build dir); 0 vs {counts.get('numpy_warm_processes', '?')} compiler "
                 f"processes | {cell('ccopt_warm')} | {np_}, cache hit | {cell('numpy_warm')} | "
                 f"{ratio('warm_detect_speedup', '.2f', 'x faster')} |")
    lines.append(f"| Cached detect (same build dir) | {cell('ccopt_warm')} | bare `python -c pass` | "
                 f"{cell('python_pass')} | {ratio('cached_detect_over_python', '.2f', 'x as long')} |")
    phase_text = {"setup": "Cold `meson setup`", "reconfigure": "`meson setup --reconfigure`",
                  "regen": "Automatic regeneration (`ninja build.ninja` after a meson.build edit)"}
    for phase, text in phase_text.items():
        for other, label, suffix in (("plain", "(a) same sources, no ccopt", ""),
                                     ("simd", "(b) Meson `unstable-simd`", "_vs_simd")):
            pct = ratios.get(f"{phase}_overhead_pct{suffix}")
            over = ratio(f"{phase}_overhead_s{suffix}", "+.2f", " s")
            if pct is not None:
                over = over.replace(" s**", f" s = {pct:+.0f}%**", 1)
            lines.append(f"| {text}, examples/dot | {cell(f'meson_{phase}_ccopt')} | {label} | "
                         f"{cell(f'meson_{phase}_{other}')} | {over} |")
    for kernel, title, unit in KERNELS:
        entry = doc["dispatch"].get(kernel)
        if not entry:
            continue
        base = entry["targets"].get("BASELINE")
        base_text = f"BASELINE ({base['kernel']})" if base else "no BASELINE version"
        base_cell = fmt_stat(dict(base["gflops"], unit=unit)) if base else "–"
        for name, t in entry["targets"].items():
            if name == "BASELINE":
                continue
            picked = ", picked" if entry["picked"] == name else ""
            lines.append(f"| {title}: {name} ({t['kernel']}{picked}), n={entry['n']} | "
                         f"{fmt_stat(dict(t['gflops'], unit=unit))} | {base_text} | {base_cell} | "
                         f"{ratio(f'{kernel}_{name}_speedup', '.2f', 'x')} |")
    if "call_ns_dispatched" in figs:
        lines.append(f"| dot(n=8) through the dispatcher, ns per call | {cell('call_ns_dispatched')} | direct call of "
                     f"the picked version | {cell('call_ns_direct')} | "
                     f"{ratio('dispatch_call_overhead_ns', '+.2f', ' ns')} per call |")
    lines += ["", "| Target | Measured | Result |", "| --- | --- | --- |"]
    for t in doc["targets"]:
        lines.append(f"| {t['goal']} | {t['measured']} | **{t['result']}** |")
    notes = list(doc["notes"])
    notes.append(f"ccopt-meson helper processes per Meson run: {counts.get('ccopt_setup_helper_processes', '?')} at "
                 f"setup, {counts.get('ccopt_regen_helper_processes', '?')} at regeneration (each a Python start); "
                 f"regeneration read the feature cache: {counts.get('ccopt_regen_from_cache', '?')}.")
    if "numpy_distutils" in counts:
        notes.append(f"CCompilerOpt ran on distutils from {counts['numpy_distutils']}; CC set to the wrapper was "
                     "verified in `compiler_so`.")
    notes.append("PATH starts with the benchmark interpreter's directory and ninja is called as its binary, so "
                 "no launcher shim (pyenv, pip's ninja script) is timed.")
    for part, why in doc["skipped"].items():
        notes.append(f"skipped {part}: {why}")
    lines += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the chart


def plot(doc: dict[str, Any], png: Path) -> None:
    """The bar chart (needs matplotlib; runs under any interpreter that has it)."""
    import matplotlib  # type: ignore[import-not-found, unused-ignore]

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # type: ignore[import-not-found, unused-ignore]

    figs = doc["figures"]
    fig, axes = plt.subplots(1, 3, figsize=(18, 6))

    def bars(ax: Any, keys: Sequence[tuple[str, str]], scale: float = 1.0) -> None:
        present = [(k, lbl) for k, lbl in keys if k in figs]
        meds = [figs[k]["median"] * scale for k, _ in present]
        err = [[(figs[k]["median"] - figs[k]["min"]) * scale for k, _ in present],
               [(figs[k]["max"] - figs[k]["median"]) * scale for k, _ in present]]
        colors = ["tab:orange" if k.startswith("poly_") else "tab:red" if k.startswith("i8dot_") else
                  "tab:green" if k.startswith("dot_") else "tab:blue" if "ccopt" in k else "tab:gray"
                  for k, _ in present]
        ax.bar(range(len(present)), meds, yerr=err, capsize=4, color=colors)
        ax.set_xticks(range(len(present)))
        ax.set_xticklabels([lbl for _, lbl in present], rotation=30, ha="right", fontsize=8)

    bars(axes[0], [("ccopt_cold", "ccopt cold"), ("numpy_cold", "CCompilerOpt cold"),
                   ("ccopt_cold_native", "ccopt cold native"), ("numpy_cold_native", "CCompilerOpt cold native"),
                   ("ccopt_warm", "ccopt cached"), ("numpy_warm", "CCompilerOpt cached"),
                   ("python_pass", "python -c pass")])
    axes[0].set_yscale("log")
    axes[0].set_ylabel("seconds (log), median, min–max")
    axes[0].set_title("Feature detection (whole process)")
    keys = [(f"meson_{ph}_{p}", f"{ph} {p}") for ph in ("setup", "reconfigure", "regen")
            for p in ("ccopt", "plain", "simd")]
    bars(axes[1], keys)
    axes[1].set_ylabel("seconds, median, min–max")
    axes[1].set_title("Meson: examples/dot vs (a) plain vs (b) unstable-simd")
    kernel_keys = [(k, k.replace("_gflops_", " ")) for k in figs
                   if k.startswith(tuple(f"{kernel}_gflops_" for kernel, _, _ in KERNELS))]
    bars(axes[2], kernel_keys)
    axes[2].set_ylabel("GFLOP/s (i8dot: GOP/s), median, min–max")
    axes[2].set_title("Throughput per compiled target (bench_dot)")
    fig.suptitle(f"ccopt-meson benchmark on {doc['machine']['cpu']} ({doc['machine']['cores']} cores): "
                 "absolute figures are this machine's", fontsize=11)
    fig.tight_layout()
    fig.savefig(png, dpi=100)


def make_plot(b: Bench, json_path: Path, png: Path, venv: Path) -> str:
    """Draw with this interpreter's matplotlib, else the venv's (installed there unless --quick)."""
    try:
        import matplotlib  # type: ignore[import-not-found, unused-ignore]  # noqa: F401

        plot(json.loads(json_path.read_text()), png)
        return f"wrote {png}"
    except ImportError:
        pass
    py = venv_python(venv)
    has = py.exists() and run([str(py), "-c", "import matplotlib"], env=b.env, check=False)[1].returncode == 0
    if not has and not b.quick:
        try:
            ensure_venv(b, venv, extra=("matplotlib",))
            has = True
        except BenchError as exc:
            return f"no PNG: matplotlib could not be installed in {venv}: {str(exc).splitlines()[0]}"
    if not has:
        return "no PNG: matplotlib is not installed here (pip install matplotlib, or run without --quick)"
    env = {k: v for k, v in b.env.items() if k != "PYTHONPATH"}
    run([str(py), str(Path(__file__).resolve()), "--plot", str(json_path), str(png)], env=env)
    return f"wrote {png} (matplotlib from {venv})"


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--reps", type=int, default=7, metavar="N", help="measured runs per figure, after 1 warm-up")
    p.add_argument("--quick", action="store_true", help="skip the numpy venv part (a download) and anything slow")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the results go (default: %(default)s)")
    p.add_argument("--venv", type=Path, default=None, help="the numpy venv (default: OUT/venv-numpy)")
    p.add_argument("--keep-work", action="store_true", help="keep the scratch directory of projects and caches")
    p.add_argument("--plot", nargs=2, type=Path, metavar=("JSON", "PNG"), help=argparse.SUPPRESS)
    ns = p.parse_args(argv)
    if ns.reps < 1:
        p.error("--reps must be at least 1")
    return ns


def main(argv: Sequence[str] | None = None) -> int:
    ns = parse_args(argv)
    if ns.plot:
        plot(json.loads(ns.plot[0].read_text()), ns.plot[1])
        return 0
    out: Path = ns.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    venv: Path = (ns.venv or out / "venv-numpy").resolve()
    env = bench_env()
    precompile(ROOT / "ccopt_meson")
    work = Path(tempfile.mkdtemp(prefix="ccopt-bench-"))
    b = Bench(reps=ns.reps, quick=ns.quick, out=out, work=work, env=env,
              meson=[sys.executable, "-m", "mesonbuild.mesonmain"], ninja=find_ninja(env))
    command = "python -m bench" + "".join(f" {a}" for a in (sys.argv[1:] if argv is None else argv))
    started = time.perf_counter()
    try:
        machine = machine_info(b)
        b.say("ccopt-meson benchmark; absolute times are this machine's:")
        for k, v in machine.items():
            b.say(f"  {k}: {v}")
        if ns.quick:
            b.skipped["numpy"] = "--quick (the numpy venv needs a download)"
        bench_detection(b, None if ns.quick else venv)
        bench_meson(b)
        bench_dispatch(b)
    except BenchError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 1
    finally:
        if ns.keep_work:
            print(f"scratch directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if hasattr(os, "getloadavg"):
        machine["load_average_end"] = list(os.getloadavg())
    ratios, ranges = compute_ratios(b)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command, "reps": ns.reps, "quick": ns.quick, "warmup": 1,
        "request": {"cc": CC, "baseline": DETECT_BASELINE, "dispatch": DETECT_DISPATCH},
        "machine": machine, "figures": b.figures, "counts": b.counts, "ratios": ratios,
        "ratio_ranges": ranges, "dispatch": b.dispatch, "targets": evaluate_targets(b, ratios, ranges),
        "notes": b.notes, "skipped": b.skipped,
        "elapsed_s": time.perf_counter() - started,
    }
    json_path, md_path, png = out / "results.json", out / "results.md", out / "results.png"
    json_path.write_text(json.dumps(doc, indent=1) + "\n")
    text = markdown(doc)
    md_path.write_text(text)
    b.say("\n" + text)
    b.say(make_plot(b, json_path, png, venv))
    b.say(f"wrote {md_path} and {json_path} in {doc['elapsed_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
