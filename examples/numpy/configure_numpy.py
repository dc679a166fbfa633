#!/usr/bin/env python3
"""Configure numpy for one case, with its Meson fork or with the port, and dump its CPU build.

    python3 examples/numpy/configure_numpy.py DEST [--fork] [--version 2.5.5] [--platform x86_64-gcc] [-- -DOPT=V ...]
    python3 examples/numpy/configure_numpy.py DEST --compare [--version ...] [--platform ...] [-- ...]

A case is a numpy version, a platform and numpy's ``meson setup`` options (on top of
``-Dallow-noblas=true -Dblas=none -Dlapack=none``). The tree comes from prepare_numpy.py (``--fork``:
as released, configured with its vendored Meson; else the port, with the stock Meson of the
toolchain's Python), the build dir is ``DEST/<tree>/build-<case id>``, and the dump is
compare_builds.py's. ``--compare`` configures both and prints their differences (exit 1 if any).

Platforms: x86_64 with gcc or clang (this machine's compilers), and Debian's cross compilers
(``<triple>-gcc``/``-g++``) for aarch64, ppc64le, s390x and 32-bit x86 (i686) through a Meson
cross file written beside the build dir. numpy's meson.build configures a cross build with the
build machine's Python (its headers and extension suffix, which only matter to the link) as long
as it need not run a test program: the one it runs, the long double format check, is answered
by the cross file's ``longdouble_format`` property, the value numpy's own check gives on that target.
For i686 the cross file also skips the compilers' sanity checks: stock Meson's Cython check compiles
against the build machine's (64-bit) Python headers, which a 32-bit compiler refuses; the fork's
Meson has no such check. Both builds get the same cross file.

The fork's dumps are data: ``fork-dumps/<case id>.json.gz`` beside this script holds, for each case of
CASES whose result does not depend on the machine's CPU, the fork's dump and what it was made with
(``made_with``: the sdist's sha256, the platform, the options, each compiler's version and a hash of
its predefined macros, the formats of the dump and of the setup). A case uses its recorded dump when
``made_with`` equals the case's on this machine; else the fork is configured and its dump cached in
prepare_numpy.py's cache (``fork-dumps/``, keyed by ``made_with`` and these scripts' text). ``--record``
remakes the recorded dumps that do not match this machine:

    python3 examples/numpy/configure_numpy.py DEST --record
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
import zlib
from pathlib import Path
from typing import Any, NamedTuple

import compare_builds
import prepare_numpy
import toolchain

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "fork-dumps"  # the fork's dumps of CASES, as data (--record remakes them)
# how setup() configures a case (its cross file, environment, options): raise it with any change there,
# then --record (a record of another setup is not used)
SETUP_FORMAT = 1
COMMON = ["-Dallow-noblas=true", "-Dblas=none", "-Dlapack=none"]
SETUP_TIMEOUT = 900


class Platform(NamedTuple):
    cc: str
    cxx: str
    cross: dict[str, str] | None = None  # host_machine of a cross file; None: a native build
    longdouble: str = ""  # numpy's name of the target's long double format (cross only)
    # the build machine's Python headers are x86_64's: stock Meson's Cython sanity check compiles one
    # C file with them, which a 32-bit compiler refuses ("LONG_BIT definition appears wrong")
    skip_sanity_check: bool = False


def cross(triple: str, family: str, cpu: str, endian: str, longdouble: str, skip: bool = False) -> Platform:
    host = {"system": "linux", "cpu_family": family, "cpu": cpu, "endian": endian}
    return Platform(f"{triple}-gcc", f"{triple}-g++", host, longdouble, skip)


PLATFORMS = {
    "x86_64-gcc": Platform("gcc", "g++"),
    "x86_64-clang": Platform("clang", "clang++"),
    "aarch64": cross("aarch64-linux-gnu", "aarch64", "aarch64", "little", "IEEE_QUAD_LE"),
    "ppc64le": cross("powerpc64le-linux-gnu", "ppc64", "ppc64le", "little", "IBM_DOUBLE_DOUBLE_LE"),
    "s390x": cross("s390x-linux-gnu", "s390x", "s390x", "big", "IEEE_QUAD_BE"),
    "i686": cross("i686-linux-gnu", "x86", "i686", "little", "INTEL_EXTENDED_12_BYTES_LE", skip=True),
}


class Case(NamedTuple):
    version: str
    platform: str
    options: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        opts = "_".join(o.removeprefix("-D").replace("=", "-") for o in self.options) or "defaults"
        return "-".join([self.version, self.platform, "".join(c if c.isalnum() or c in "._-" else "_" for c in opts)])

    @property
    def on_this_cpu(self) -> bool:
        """Whether the fork's result depends on the build machine's CPU (``native``)."""
        return any("native" in o.lower() for o in self.options)


MARCH = "-Dc_args=-march=haswell"
NONE = "-Dcpu-baseline=none"  # a ring's members (NEON..ASIMD, VSX/VSX2, 2.2.6's SSE/SSE2) then dispatched apart

# The cases compared with the fork: numpy's options per version on x86_64 gcc; the other platforms
# take the defaults, a raised baseline (2.5.5), an empty one where numpy's rows form rings, and
# aarch64's own -march cases. This list is the claim: README.md's table is checked against it
# (tests/test_docs.py), tests/test_example_numpy.py compares each case
OPTIONS_X86 = {
    "2.5.5": [(), ("-Dcpu-dispatch=x86_v3",), ("-Dcpu-baseline=x86_v3",), ("-Dcpu-baseline=sse41",),
              ("-Dcpu-dispatch=avx2",), ("-Dcpu-dispatch=max -x86_v4",), ("-Dcpu-dispatch=max -avx512f",),
              ("-Ddisable-optimization=true",), (MARCH, "-Dcpu-baseline-detect=auto"),
              (MARCH, "-Dcpu-baseline-detect=enabled"), (MARCH, "-Dcpu-baseline-detect=disabled"),
              ("-Dcpu-baseline=native",)],
    "2.2.6": [(), ("-Dcpu-baseline=sse42",), ("-Dcpu-baseline=avx2",), ("-Dcpu-baseline=native",), (NONE,)],
}
OTHER_PLATFORMS = {
    "2.5.5": {"x86_64-clang": [(), ("-Dcpu-baseline=x86_v3",), ("-Dcpu-baseline=native",)],
              "aarch64": [(), ("-Dcpu-baseline=asimdhp",), (NONE,), ("-Dcpu-baseline=sve",),
                          ("-Dc_args=-march=armv8.2-a+fp16",), ("-Dc_args=-march=armv8-a",),
                          ("-Dc_args=-march=armv8-a+crc",), ("-Dc_args=-march=armv8-a+sve",),
                          ("-Dc_args=-mcpu=neoverse-n1",), ("-Dc_args=-mcpu=neoverse-v1",)],
              "ppc64le": [(), ("-Dcpu-baseline=vsx3",), (NONE,)],
              "s390x": [(), ("-Dcpu-baseline=vxe",)], "i686": [(), ("-Dcpu-baseline=x86_v3",)]},
    "2.2.6": {"x86_64-clang": [()],
              "aarch64": [(), (NONE,), ("-Dc_args=-march=armv8-a",), ("-Dc_args=-march=armv8-a+crc",),
                          ("-Dc_args=-march=armv8-a+sve",), ("-Dc_args=-mcpu=neoverse-n1",)],
              "ppc64le": [(), (NONE,)], "s390x": [()], "i686": [()]},
}
CASES = [Case(v, "x86_64-gcc", o) for v, opts in OPTIONS_X86.items() for o in opts] + [
    Case(v, p, o) for v, by in OTHER_PLATFORMS.items() for p, opts in by.items() for o in opts]


class Setup(NamedTuple):
    build: Path
    configured: bool
    log: str


def cross_file(platform: Platform, where: Path) -> Path:
    """A Meson cross file for ``platform``, written as ``where``."""
    assert platform.cross is not None
    triple = platform.cc.removesuffix("-gcc")

    def section(name: str, values: dict[str, str]) -> str:
        return f"[{name}]\n" + "".join(f"{k} = '{v}'\n" for k, v in values.items())

    binaries = {"c": platform.cc, "cpp": platform.cxx, "ar": f"{triple}-ar", "strip": f"{triple}-strip"}
    properties = f"longdouble_format = '{platform.longdouble}'\n"
    if platform.skip_sanity_check:
        properties += "skip_sanity_check = true\n"
    where.write_text("\n".join([section("binaries", binaries), section("host_machine", platform.cross),
                                "[properties]\n" + properties]))
    return where


def missing_tools(case: Case) -> list[str]:
    p = PLATFORMS[case.platform]
    return [tool for tool in (p.cc, p.cxx) if shutil.which(tool) is None]


def environment(case: Case, python: Path) -> dict[str, str]:
    """The process environment of a setup: no CCOPT_/NPY_ variables, the toolchain's bin on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CCOPT_", "NPY_", "CC", "CXX", "PYTHON"))}
    env.update(toolchain.tool_env(python))
    p = PLATFORMS[case.platform]
    if p.cross is None:
        env.update(CC=p.cc, CXX=p.cxx)
    return env


def meson_command(python: Path, fork: bool) -> list[str]:
    """Meson, run from a numpy tree: the fork's, vendored in numpy's sdist, or the toolchain's stock Meson."""
    return [str(python), "vendored-meson/meson/meson.py"] if fork else [str(python), "-m", "mesonbuild.mesonmain"]


def setup(tree: Path, case: Case, fork: bool, extra: dict[str, str] | None = None) -> Setup:
    """``meson setup`` of ``tree`` for ``case`` into a fresh ``tree/build-<id>``."""
    python = toolchain.python_for(case.version)
    build = tree / f"build-{case.id}"
    shutil.rmtree(build, ignore_errors=True)
    meson = meson_command(python, fork)
    args = [*meson, "setup", build.name, *COMMON, *case.options]
    if PLATFORMS[case.platform].cross is not None:
        args += ["--cross-file", str(cross_file(PLATFORMS[case.platform], tree / f"{case.platform}.ini"))]
    env = environment(case, python)
    env.update(extra or {})
    r = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, timeout=SETUP_TIMEOUT)
    return Setup(build, r.returncode == 0, r.stdout + r.stderr)


def compilers(case: Case) -> list[dict[str, str]]:
    """Each compiler of ``case``: its name, version and a hash of its predefined macros (``-E -dM``), which
    hold what it targets by default (a distribution's default ``-march``, ``-fcf-protection`` ...)."""
    p = PLATFORMS[case.platform]
    out = []
    for tool, lang in ((p.cc, "c"), (p.cxx, "c++")):
        r = subprocess.run([tool, "-E", "-dM", "-x", lang, os.devnull], capture_output=True, text=True)
        digest = hashlib.sha256("\n".join(sorted(r.stdout.splitlines())).encode()).hexdigest()[:16]
        out.append({"compiler": tool, "version": version_of(r.stdout), "predefined": digest})
    return out


def version_of(macros: str) -> str:
    """The version of gcc or clang (the platforms' compilers) from its predefined macros: ``12.2.0``."""
    defined = dict(line.split(" ", 2)[1:] for line in macros.splitlines() if line.count(" ") >= 2)
    keys = ("__clang_major__", "__clang_minor__", "__clang_patchlevel__") if "__clang__" in defined else (
        "__GNUC__", "__GNUC_MINOR__", "__GNUC_PATCHLEVEL__")
    return ".".join(defined.get(k, "?") for k in keys)


def cpu_flags() -> str:
    """This CPU's feature flags (``native`` and ``detect`` depend on them)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""
    return next((line for line in text.splitlines() if line.startswith(("flags", "Features"))), "")


def made_with(case: Case) -> dict[str, object]:
    """What the fork's dump of ``case`` depends on, on this machine."""
    parts: dict[str, object] = {
        "sdist": prepare_numpy.release(case.version).sha256,
        "platform": PLATFORMS[case.platform]._asdict(),
        "options": [*COMMON, *case.options],
        "compilers": compilers(case),
        "dump": compare_builds.FORMAT,
        "setup": SETUP_FORMAT,
    }
    if case.on_this_cpu:
        parts["cpu"] = cpu_flags()
    return parts


class DamagedRecord(ValueError):
    """A record that is not gzip'd JSON of ``{"made_with": ..., "dump": ...}``: one line, and the command
    that remakes it."""


def read_record(path: Path) -> dict[str, Any]:
    """A recorded dump's file: ``{"made_with": ..., "dump": ...}``; DamagedRecord when it is not one (a
    truncated download, a merge gone wrong)."""
    try:
        data = json.loads(gzip.decompress(path.read_bytes()))
    except (EOFError, OSError, ValueError, zlib.error) as exc:  # gzip's BadGzipFile is an OSError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DamagedRecord(f"the fork record {path.name} is damaged ({reason[:80]}); remake it with "
                            f"configure_numpy.py DEST --record") from exc
    if not (isinstance(data, dict) and isinstance(data.get("made_with"), dict) and isinstance(data.get("dump"), dict)):
        raise DamagedRecord(f"the fork record {path.name} holds no made_with and dump objects; remake it with "
                            "configure_numpy.py DEST --record")
    return dict(data)


def recorded(case: Case, made: dict[str, object], damaged: bool = False) -> compare_builds.Dump | None:
    """The recorded dump of ``case`` when it was made with ``made``; else None (``damaged``: also when the
    record is damaged, for --record, which remakes it; else that is a DamagedRecord)."""
    path = RECORDED / f"{case.id}.json.gz"
    if not path.is_file():
        return None
    try:
        data = read_record(path)
    except DamagedRecord:
        if damaged:
            return None
        raise
    return dict(data["dump"]) if data["made_with"] == made else None


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("wb", dir=path.parent, suffix=".tmp", delete=False) as f:
        f.write(data)
    os.replace(f.name, path)


def dump_of(s: Setup) -> compare_builds.Dump:
    return compare_builds.dump(s.build, s.log, s.configured)


def configure_fork(case: Case, dest: Path) -> compare_builds.Dump:
    """The fork's dump of ``case``, configured in ``dest``."""
    tree = dest / f"numpy-{case.version}-fork"
    if not tree.is_dir():
        tree = prepare_numpy.prepare(dest, case.version, fork=True)
    s = setup(tree, case, fork=True)
    found = dump_of(s)
    shutil.rmtree(s.build, ignore_errors=True)
    return found


def fork_dump(case: Case, dest: Path) -> compare_builds.Dump:
    """The fork's dump of ``case``: recorded, else cached, else configured in ``dest`` and cached."""
    made = made_with(case)
    found = recorded(case, made)
    if found is not None:
        return found
    if not case.on_this_cpu:
        warnings.warn(f"{case.id}: no fork dump recorded for this machine's compilers; configuring the fork "
                      "(configure_numpy.py DEST --record records it)", stacklevel=2)
    scripts = [hashlib.sha256((HERE / f).read_bytes()).hexdigest() for f in
               ("compare_builds.py", "configure_numpy.py", "toolchain.py")]  # a cached dump: any change remakes it
    key = hashlib.sha256(json.dumps([made, scripts], sort_keys=True).encode()).hexdigest()[:16]
    cached = prepare_numpy.cache_dir() / "fork-dumps" / f"{case.id}-{key}.json"
    if cached.is_file():
        return dict(json.loads(cached.read_text()))
    found = configure_fork(case, dest)
    write_atomically(cached, json.dumps(found, indent=1, sort_keys=True).encode())
    return found


def record(dest: Path) -> tuple[list[str], list[str]]:
    """Configures the fork, from freshly prepared trees in ``dest``, for every case of CASES not
    ``on_this_cpu`` whose record does not match this machine, and records its dump; the ids of the
    cases recorded, and of those left as they were because their compilers are missing."""
    recorded_ids, missing = [], []
    with tempfile.TemporaryDirectory(dir=dest, prefix="record-") as scratch:
        for case in CASES:
            if case.on_this_cpu:
                continue
            if missing_tools(case):
                missing.append(case.id)
                continue
            made = made_with(case)
            if recorded(case, made, damaged=True) is not None:
                continue
            found = configure_fork(case, Path(scratch))
            text = json.dumps({"made_with": made, "dump": found}, indent=1, sort_keys=True)
            write_atomically(RECORDED / f"{case.id}.json.gz", gzip.compress(text.encode(), mtime=0))
            recorded_ids.append(case.id)
    return recorded_ids, missing


def port_dump(case: Case, dest: Path, extra: dict[str, str] | None = None) -> compare_builds.Dump:
    tree = dest / f"numpy-{case.version}"
    if not tree.is_dir():
        tree = prepare_numpy.prepare(dest, case.version)
    s = setup(tree, case, fork=False, extra=extra)
    found = dump_of(s)
    shutil.rmtree(s.build, ignore_errors=True)
    return found


def parse(argv: list[str]) -> tuple[argparse.Namespace, tuple[str, ...]]:
    """The command line: its options, and numpy's ``meson setup`` options (what follows ``--``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="numpy's meson setup options follow --: ... -- -Dcpu-baseline=avx2")
    parser.add_argument("dest", type=Path, help="where the trees are (prepare_numpy.py's DEST)")
    parser.add_argument("--fork", action="store_true", help="the fork's configuration (recorded, else cached)")
    parser.add_argument("--compare", action="store_true", help="both, and their differences")
    parser.add_argument("--record", action="store_true",
                        help="remake fork-dumps/ for CASES (those not already made with this machine's tools)")
    parser.add_argument("--version", default=prepare_numpy.CURRENT, choices=sorted(prepare_numpy.RELEASES))
    parser.add_argument("--platform", default="x86_64-gcc", choices=sorted(PLATFORMS))
    # split here: argparse gives an empty list to a "*" positional read along with DEST, then refuses
    # what follows --
    split = argv.index("--") if "--" in argv else len(argv)
    return parser.parse_args(argv[:split]), tuple(argv[split + 1:])


def main(argv: list[str] | None = None) -> int:
    try:
        return run(*parse(sys.argv[1:] if argv is None else argv))
    except DamagedRecord as exc:
        raise SystemExit(f"configure_numpy: {exc}") from None


def run(args: argparse.Namespace, options: tuple[str, ...]) -> int:
    if args.record:
        dest = args.dest.resolve()
        dest.mkdir(parents=True, exist_ok=True)
        made, missing = record(dest)
        print("\n".join([*(f"recorded {c}" for c in made), *(f"not recorded (compilers missing) {c}" for c in missing)])
              or "every recorded dump matches this machine")
        return 1 if missing else 0
    case = Case(args.version, args.platform, options)
    if missing_tools(case):
        raise SystemExit(f"configure_numpy: {' and '.join(missing_tools(case))} not found; install them")
    dest = args.dest.resolve()
    if not args.compare:
        found = fork_dump(case, dest) if args.fork else port_dump(case, dest)
        print(json.dumps(found, indent=1, sort_keys=True))
        return 0
    fork, port = fork_dump(case, dest), port_dump(case, dest)
    diffs = compare_builds.differences(fork, port)
    print(f"{case.id}\nfork:  {compare_builds.summary(fork)}\nccopt: {compare_builds.summary(port)}")
    print("\n".join(diffs + compare_builds.notes(fork, port)) if diffs else "identical")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
