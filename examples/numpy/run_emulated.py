#!/usr/bin/env python3
"""numpy built with the port and run on emulated CPUs: qemu-user's x86_64 and aarch64 models.

    python3 examples/numpy/run_emulated.py DIR [--arch x86_64 aarch64] [--cpu MODEL ...] [--fork]
                                               [--x86-wheel WHEEL] [--tests FILE ...] [--json]

For each CPU model of CPUS, under ``qemu-<arch>-static -cpu MODEL``: numpy's own report of what it
detected (``__cpu_features__``) and chose (``numpy.lib.introspect.opt_func_info()``) is checked
against what the model has, then numpy's SIMD tests (TESTS) run; one table row per CPU.

- x86_64: the wheel of numpy's current release built from the ported sdist (pip wheel, stock Meson,
  ``-Dcpu-baseline=x86_v2``, as tests/test_example_numpy.py builds it; ``--x86-wheel`` reuses one),
  installed into a fresh venv of the toolchain's CPython 3.12.
- aarch64: numpy 2.5.5 needs CPython >= 3.12, which Debian 12 has not for arm64. Debian 13's
  ``python3.13`` and ``libpython3.13-dev`` for arm64 (and the libraries they need) are fetched with
  apt-get (a private apt state in the cache: the machine's apt is untouched; Debian's signed
  indexes) and unpacked into a sysroot; numpy is cross-built with Debian 12's aarch64-linux-gnu
  gcc 12 and a Meson cross file whose ``python`` runs that interpreter under qemu (so Meson reads
  the target's sysconfig), and installed beside pytest and hypothesis (pure-Python wheels).

``--fork`` also builds numpy as released, with its vendored Meson fork, the same way (its own tree,
wheel, venv and aarch64 build in DIR), runs the same report and tests on each CPU, and says per CPU
whether the two reports are identical: the features detected, the baseline and dispatch names, and
every function's built and chosen targets.

Everything is made once in DIR (a step whose output exists is skipped); the sysroot is cached in
prepare_numpy's cache. Exit 0 when every CPU's report matches its model, no test failed and (``--fork``)
the two builds' reports are identical.
"""

from __future__ import annotations

import argparse
import collections
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple, Sequence

import configure_numpy
import prepare_numpy
import toolchain

VERSION = prepare_numpy.CURRENT
TESTS = ["test_simd.py", "test_cpu_dispatcher.py", "test_umath_accuracy.py"]
TEST_PINS = [t for t in toolchain.TOOLS if t.startswith(("pytest==", "hypothesis=="))]
X86_BASELINE = "x86_v2"  # numpy 2.5's `min` on x86_64, spelled out as the slow test builds it
# numpy 2.5's default test-simd names only NEON and ASIMD on aarch64, both in the baseline: its _simd
# module (test_simd.py) then tests the baseline alone; these add the dispatched NEON extensions
AARCH64_TEST_SIMD = "-Dtest-simd=BASELINE,NEON,ASIMD,ASIMDHP,ASIMDDP,ASIMDFHM"


class Cpu(NamedTuple):
    arch: str  # x86_64 or aarch64
    model: str  # qemu's -cpu value
    has: tuple[str, ...]  # numpy's dispatched names the model has: exactly these must be detected


# what each model has, from qemu 7.2's CPU definitions (target/i386/cpu.c, target/arm/cpu64.c):
# Nehalem stops at SSE4.2/POPCNT (X86_V2, the baseline); Haswell adds AVX2/FMA3/BMI (X86_V3), no
# AVX-512; cortex-a57 is ARMv8.0 (ASIMD only); neoverse-n1 is ARMv8.2 with fp16 and dot product,
# no FHM, no SVE; max has every extension qemu emulates (SVE, FHM ...)
CPUS = [
    Cpu("x86_64", "Nehalem", ()),
    Cpu("x86_64", "Haswell", ("X86_V3",)),
    Cpu("aarch64", "cortex-a57", ()),
    Cpu("aarch64", "neoverse-n1", ("ASIMDHP", "ASIMDDP")),
    Cpu("aarch64", "max", ("ASIMDHP", "ASIMDDP", "ASIMDFHM", "SVE")),
]

# Debian 13's arm64 packages of the sysroot: CPython 3.13 with its headers and what it links
SUITE = "trixie"
PACKAGES = ["python3.13", "python3.13-minimal", "libpython3.13", "libpython3.13-minimal",
            "libpython3.13-stdlib", "libpython3.13-dev", "media-types", "netbase", "libc6", "libgcc-s1",
            "gcc-14-base", "libstdc++6", "libexpat1", "libffi8", "zlib1g", "libbz2-1.0", "liblzma5",
            "libzstd1", "libcrypt1", "libssl3t64", "libsqlite3-0", "libdb5.3t64", "libncursesw6",
            "libtinfo6", "libreadline8t64", "libuuid1"]
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"

# run inside the emulated numpy: what it has, what it built, and what each dispatched function chose
REPORT = """
import json
import numpy._core._multiarray_umath as m
from numpy._core._umath_tests import test_dispatch
from numpy.lib.introspect import opt_func_info
print(json.dumps({"test_dispatch": test_dispatch()["func"],
                  "features": {n: bool(v) for n, v in m.__cpu_features__.items()},
                  "baseline": m.__cpu_baseline__, "dispatch": m.__cpu_dispatch__,
                  "funcs": opt_func_info()}))
"""
TARGET = re.compile(r"baseline\([^)]*\)|\S+")
COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


class Target(NamedTuple):
    python: list[str]  # the interpreter's command line, without the qemu wrapper
    qemu: list[str]  # qemu-<arch>-static and its options, -cpu excepted
    env: dict[str, str]
    build: str = "port"  # "port": numpy built with ccopt-meson; "fork": numpy as released


class Row(NamedTuple):
    build: str
    cpu: Cpu
    detected: list[str]
    test_dispatch: str  # the version _umath_tests.test_dispatch() ran (numpy's own dispatch test function)
    chosen: dict[str, int]
    problems: list[str]
    counts: dict[str, int]
    seconds: float
    report: dict[str, object]  # numpy's own report (REPORT), as printed


def say(message: str) -> None:
    print(f"run_emulated: {message}", file=sys.stderr, flush=True)


def need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise SystemExit(f"run_emulated: '{tool}' is not on PATH; install it (Debian: qemu-user-static, "
                         "gcc-aarch64-linux-gnu g++-aarch64-linux-gnu, ninja-build)")
    return found


def run(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 5400,
        log: Path | None = None) -> str:
    """``cmd``'s output; one line (and the log's path) when it fails."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CCOPT_", "NPY_", "PYTHON"))}
    full.update(env or {})
    r = subprocess.run(list(cmd), cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout)
    if log is not None:
        log.write_text(r.stdout + r.stderr)
    if r.returncode != 0:
        where = f"; see {log}" if log else f":\n{(r.stdout + r.stderr)[-3000:]}"
        raise SystemExit(f"run_emulated: '{' '.join(cmd[:4])} ...' exited {r.returncode}{where}")
    return r.stdout


# ---------------------------------------------------------------------------------------------------
# x86_64: the wheel, in a fresh venv

def x86_wheel(version: str, baseline: str, tree: Path, python: Path, out: Path) -> Path:
    """numpy's wheel from ``tree``, ported or as released (pip wheel through meson-python, which runs the
    Meson the tree's pyproject.toml names; ``-Dcpu-baseline=baseline``), built in ``tree/build-wheel``
    with gcc, through ccache when it is installed (paths made relative, so a rebuild elsewhere, or the
    other tree's build, whose compile lines are the same, hits the cache)."""
    launcher = "ccache " if shutil.which("ccache") else ""
    env = {"CC": launcher + "gcc", "CXX": launcher + "g++", "CCACHE_BASEDIR": str(tree), "CCACHE_NOHASHDIR": "1",
           **toolchain.tool_env(python)}
    setup_args = [*configure_numpy.COMMON, f"-Dcpu-baseline={baseline}"]
    out.mkdir(parents=True, exist_ok=True)
    run([str(python), "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(out),
         "-Cbuild-dir=build-wheel", *(f"-Csetup-args={a}" for a in setup_args), str(tree)], tree, env,
        log=out / f"numpy-{version}-build.log")
    return next(out.glob(f"numpy-{version}-*.whl"))


def suffix(build: str) -> str:
    """The port's files keep their plain names; the fork's get ``-fork``."""
    return "" if build == "port" else f"-{build}"


def tree_of(dest: Path, build: str) -> Path:
    """numpy's tree in ``dest``: the port (patched) or the fork (as released), prepared once."""
    tree = dest / f"numpy-{VERSION}{suffix(build)}"
    return tree if tree.is_dir() else prepare_numpy.prepare(dest, VERSION, fork=build == "fork")


def x86_target(dest: Path, wheel: Path | None, build: str = "port") -> Target:
    venv = dest / f"x86_64-venv{suffix(build)}"
    if not (venv / ".complete").is_file():
        if wheel is None or build != "port":
            say(f"building the {build}'s x86_64 wheel (about 15 minutes on 2 cores, cold ccache)")
            wheel = x86_wheel(VERSION, X86_BASELINE, tree_of(dest, build), toolchain.python_for(VERSION),
                              dest / f"dist{suffix(build)}")
        toolchain.make_venv(toolchain.base_python(VERSION), venv, [str(wheel), *TEST_PINS])
    return Target([str(venv / "bin" / "python")], [need("qemu-x86_64-static")], {}, build)


# ---------------------------------------------------------------------------------------------------
# aarch64: a Debian 13 arm64 sysroot, a cross build, the test tools beside it

def apt(state: Path, *args: str) -> list[str]:
    """apt-get for arm64 packages of SUITE, with its lists and downloads in ``state``."""
    options = {"Dir::Etc::SourceList": str(state / "sources.list"), "Dir::Etc::SourceParts": str(state / "none"),
               "Dir::State::Lists": str(state / "lists"), "Dir::Cache": str(state), "Dir::State::status": "/dev/null",
               "APT::Architecture": "arm64", "APT::Architectures": "arm64"}
    return ["apt-get", "-q", *(f"-o{k}={v}" for k, v in options.items()), *args]


def debian_archive() -> str:
    """The Debian archive this machine's apt uses (its first source that is not the security archive)."""
    parts = Path("/etc/apt")
    texts = [f.read_text() for f in [parts / "sources.list", *sorted((parts / "sources.list.d").glob("*"))]
             if f.suffix in (".list", ".sources") and f.is_file()]
    for text in texts:
        for line in text.splitlines():
            words = re.sub(r"\[[^]]*\]", "", line).split()  # a one-line entry's [options] dropped
            uri = words[1] if words[:1] == ["deb"] and len(words) > 1 else words[1] if words[:1] == ["URIs:"] else ""
            if uri and "security" not in uri:
                return uri.rstrip("/")
    raise SystemExit("run_emulated: no Debian archive in /etc/apt/sources.list(.d); add one (apt-get needs it)")


def sysroot() -> Path:
    """Debian 13's arm64 CPython 3.13 and its libraries, unpacked into the cache once (one maker at a time)."""
    state = prepare_numpy.cache_root() / f"arm64-{SUITE}"
    with open(state.parent / f"{state.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (state / ".complete").is_file():
            make_sysroot(state)
    return state / "sysroot"


def make_sysroot(state: Path) -> None:
    root = state / "sysroot"
    need("apt-get")
    need("dpkg")
    (state / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (state / "sources.list").write_text(f"deb [arch=arm64 signed-by={KEYRING}] {debian_archive()} {SUITE} main\n")
    run(apt(state, "update"), state, timeout=600)
    debs = state / "debs"
    shutil.rmtree(debs, ignore_errors=True)
    debs.mkdir()
    run(apt(state, "download", *PACKAGES), debs, timeout=600)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    for deb in sorted(debs.glob("*.deb")):
        run(["dpkg", "-x", str(deb), str(root)], state)
    for merged in ("lib", "bin"):  # Debian 13 is merged-/usr: the loader is looked for as /lib/ld-linux-aarch64.so.1
        (root / merged).symlink_to(f"usr/{merged}")
    (state / ".complete").write_text("\n".join(sorted(d.name for d in debs.glob("*.deb"))) + "\n")


def cross_file(where: Path, root: Path, python: Path) -> Path:
    """Meson's cross file: Debian 12's cross gcc, and the target's python under qemu for its sysconfig."""
    p = configure_numpy.PLATFORMS["aarch64"]
    assert p.cross is not None
    wrapper = where / "python3"
    wrapper.write_text(f"#!/bin/sh\nexec {need('qemu-aarch64-static')} -L {root} {root}/usr/bin/python3.13 \"$@\"\n")
    wrapper.chmod(0o755)
    triple = p.cc.removesuffix("-gcc")
    binaries = {"c": p.cc, "cpp": p.cxx, "ar": f"{triple}-ar", "strip": f"{triple}-strip",
                "python": str(wrapper), "cython": str(python.parent / "cython")}
    # Debian's pyconfig.h includes <aarch64-linux-gnu/python3.13/pyconfig.h>: the sysroot's include
    # dir is searched last, after the cross compiler's own libc headers
    args = f"['-idirafter', '{root}/usr/include']"
    text = ("[binaries]\n" + "".join(f"{k} = '{v}'\n" for k, v in binaries.items()) + "[host_machine]\n"
            + "".join(f"{k} = '{v}'\n" for k, v in p.cross.items())
            + f"[properties]\nlongdouble_format = '{p.longdouble}'\n"
            + f"[built-in options]\nc_args = {args}\ncpp_args = {args}\n")
    (where / "cross.ini").write_text(text)
    return where / "cross.ini"


def aarch64_target(dest: Path, build: str = "port") -> Target:
    for tool in ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "qemu-aarch64-static"):
        need(tool)
    root = sysroot()
    where = dest / f"aarch64{suffix(build)}"
    site, deps = where / "site", where / "testdeps"
    python = toolchain.python_for(VERSION)
    if not (where / ".complete").is_file():
        where.mkdir(parents=True, exist_ok=True)
        tree = tree_of(dest, build)
        env = toolchain.tool_env(python)
        meson = configure_numpy.meson_command(python, fork=build == "fork")
        build_dir = "build-aarch64"
        shutil.rmtree(tree / build_dir, ignore_errors=True)
        run([*meson, "setup", build_dir, "--cross-file", str(cross_file(where, root, python)), *configure_numpy.COMMON,
             AARCH64_TEST_SIMD, f"-Dpython.platlibdir={site}", f"-Dpython.purelibdir={site}"], tree, env,
            log=where / "setup.log")
        say(f"cross-building the {build}'s numpy for aarch64 (about 15 minutes on 2 cores)")
        run([str(python.parent / "ninja"), "-C", build_dir], tree, env, log=where / "build.log")
        run([*meson, "install", "-C", build_dir], tree, env, log=where / "install.log")
        run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target", str(deps),
             "--python-version", "3.13", "--only-binary=:all:", "--platform", "any", *TEST_PINS], where)
        (where / ".complete").write_text("")
    return Target([f"{root}/usr/bin/python3.13"], [need("qemu-aarch64-static"), "-L", str(root)],
                  {"PYTHONPATH": f"{site}{os.pathsep}{deps}"}, build)


# ---------------------------------------------------------------------------------------------------
# per CPU: numpy's report, checked, and its tests

def check(cpu: Cpu, report: dict[str, object]) -> tuple[list[str], dict[str, int], list[str]]:
    """What numpy detected of its dispatch names, how often it chose each target, and what is wrong."""
    features = report["features"]
    dispatch = report["dispatch"]
    funcs = report["funcs"]
    assert isinstance(features, dict) and isinstance(dispatch, list) and isinstance(funcs, dict)
    detected = [n for n in dispatch if features.get(n)]
    expected = [n for n in dispatch if n in cpu.has]
    problems = [] if detected == expected else [f"detects {detected}, the model has {expected}"]
    chosen: collections.Counter[str] = collections.Counter()
    for func, sigs in funcs.items():
        for sig, what in sigs.items():
            # numpy lists a function's built targets highest first: the first one this model has must run
            built = TARGET.findall(what["available"])  # baseline(NEON NEON_FP16 ...) is one target
            best = next((t for t in built if t.startswith("baseline") or t in cpu.has), None)
            chosen[what["current"]] += 1
            if best is not None and what["current"] != best:
                problems.append(f"{func}[{sig}] runs {what['current']}, expected {best}")
    return detected, dict(chosen), problems


def numpy_tests(target: Target, cpu: Cpu, tests: Sequence[str], cwd: Path) -> dict[str, int]:
    where = run([*target.qemu, "-cpu", cpu.model, *target.python, "-c",
                 "import numpy, os; print(os.path.dirname(numpy.__file__))"], cwd, target.env).strip()
    files = [f"{where}/_core/tests/{t}" for t in tests]
    cmd = [*target.qemu, "-cpu", cpu.model, *target.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files]
    log = cwd / f"{cpu.arch}-{cpu.model}{suffix(target.build)}-tests.log"
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CCOPT_", "NPY_", "PYTHON"))}
    r = subprocess.run(cmd, cwd=cwd, env={**full, **target.env}, capture_output=True, text=True, timeout=7200)
    log.write_text(r.stdout + r.stderr)
    last = (r.stdout.strip().splitlines() or [""])[-1]
    counts = {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in COUNTS.findall(last)}
    if r.returncode not in (0, 1) or not counts:
        counts["error"] = counts.get("error", 0) + 1  # pytest itself did not run to the end: see the log
    return counts


def run_cpu(target: Target, cpu: Cpu, tests: Sequence[str], cwd: Path) -> Row:
    start = time.monotonic()
    out = run([*target.qemu, "-cpu", cpu.model, *target.python, "-c", REPORT], cwd, target.env)
    report = json.loads(out.strip().splitlines()[-1])
    (cwd / f"{cpu.arch}-{cpu.model}{suffix(target.build)}-report.json").write_text(
        json.dumps(report, indent=1, sort_keys=True))
    detected, chosen, problems = check(cpu, report)
    counts = numpy_tests(target, cpu, tests, cwd) if tests else {}
    return Row(target.build, cpu, detected, str(report["test_dispatch"]), chosen, problems, counts,
               time.monotonic() - start, report)


def side_by_side(rows: Sequence[Row]) -> list[str]:
    """Per CPU run by both builds: whether numpy's reports are identical, else what differs."""
    by_cpu: dict[Cpu, dict[str, Row]] = collections.defaultdict(dict)
    for r in rows:
        by_cpu[r.cpu][r.build] = r
    lines = []
    for cpu, builds in by_cpu.items():
        if {"port", "fork"} <= set(builds):
            port, fork = builds["port"].report, builds["fork"].report
            differ = [k for k in sorted(set(port) | set(fork)) if port.get(k) != fork.get(k)]
            funcs = fork.get("funcs")
            if differ or not isinstance(funcs, dict):
                verdict = f"different in {', '.join(differ)}" if differ else "without opt_func_info()"
            else:
                verdict = f"identical ({len(funcs)} functions, {sum(len(sigs) for sigs in funcs.values())} loops)"
            lines.append(f"{cpu.arch} -cpu {cpu.model}: the fork's and the port's reports are {verdict}")
    return lines


def table(rows: Sequence[Row]) -> str:
    lines = ["| build | arch | qemu -cpu | numpy detects | test_dispatch() | opt_func_info() loops | report | tests "
             "| time |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        chosen = ", ".join(f"{t} {n}" for t, n in sorted(r.chosen.items(), key=lambda kv: -kv[1]))
        counts = ", ".join(f"{n} {k}" for k, n in r.counts.items()) or "not run"
        verdict = "matches the model" if not r.problems else f"**{len(r.problems)} wrong**: {r.problems[0]}"
        detected = " ".join(r.detected) or "(none above baseline)"
        lines.append(f"| {r.build} | {r.cpu.arch} | {r.cpu.model} | {detected} | {r.test_dispatch} | {chosen} | "
                     f"{verdict} | {counts} | {r.seconds:.0f} s |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path, help="where the builds, venvs, reports and test logs go")
    parser.add_argument("--arch", nargs="+", default=["x86_64", "aarch64"], choices=["x86_64", "aarch64"])
    parser.add_argument("--cpu", nargs="+", default=[], help="only these models (default: every one of CPUS)")
    parser.add_argument("--x86-wheel", type=Path, help="an x86_64 wheel of the port to use instead of building one")
    parser.add_argument("--tests", nargs="*", default=TESTS, help="numpy/_core/tests files (none: the report only)")
    parser.add_argument("--fork", action="store_true", help="numpy as released too, its report side by side")
    parser.add_argument("--json", action="store_true", help="the rows as JSON instead of a table")
    args = parser.parse_args(argv)
    dest = args.dest.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    makers = {"x86_64": lambda b: x86_target(dest, args.x86_wheel, b), "aarch64": lambda b: aarch64_target(dest, b)}
    rows = []
    for arch in args.arch:
        for build in ["port", "fork"] if args.fork else ["port"]:
            target = makers[arch](build)
            for cpu in CPUS:
                if cpu.arch == arch and (not args.cpu or cpu.model in args.cpu):
                    say(f"{build}: {arch} -cpu {cpu.model}")
                    rows.append(run_cpu(target, cpu, args.tests, dest))
    compared = side_by_side(rows)
    if args.json:
        print(json.dumps([{k: v for k, v in r._asdict().items() if k != "report"} for r in rows], indent=1))
    else:
        print("\n".join([table(rows), *compared]))
    bad = [r for r in rows if r.problems or r.counts.get("failed") or r.counts.get("error")]
    return 1 if bad or any("different" in line for line in compared) else 0


if __name__ == "__main__":
    sys.exit(main())
