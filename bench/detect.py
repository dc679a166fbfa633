"""Parts 1-2: feature detection as whole processes, ccopt-meson against numpy's CCompilerOpt."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from bench.timing import CC, Bench, BenchError, logged, run, write_wrapper

DETECT_BASELINE = "SSE SSE2 SSE3"
DETECT_DISPATCH = "max -xop -fma4"
NUMPY_VERSION = "1.26.4"
# numpy.distutils asks for setuptools < 60: from 60 on, `import distutils` is setuptools' vendored copy.
# Both work with numpy 1.26.4 on Python 3.11 (same result); the pin gives the stdlib distutils numpy was written for.
NUMPY_VENV_PACKAGES = (f"numpy=={NUMPY_VERSION}", "setuptools<60")


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


