"""examples/numpy: numpy 2.2.6 built on stock Meson with ccopt-meson in place of its Meson fork's `features`.

The sdist (sha256-pinned, cached outside the repository by the example's prepare_numpy.py) is
unpacked twice: as released, configured with its vendored fork (``meson setup`` only: its
compile_commands.json and generated headers are the reference), and patched onto ccopt-meson,
configured with the stock Meson CI installs, built, installed into a scratch prefix, and tested with
numpy's own SIMD and umath tests, natively and with NPY_DISABLE_CPU_FEATURES forcing the AVX2 and
the SSE-level versions. A full build is about 13 minutes on 2 cores; ccache keeps reruns short.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Sequence

import pytest

from .conftest import IN_CI, ROOT, need

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "numpy"
sys.path.insert(0, str(EXAMPLE))
import compare_builds  # noqa: E402
import prepare_numpy  # noqa: E402

NUMPY_OPTIONS = ["-Dallow-noblas=true", "-Dblas=none", "-Dlapack=none"]
SIMD_TESTS = ["test_simd.py", "test_simd_module.py", "test_cpu_dispatcher.py", "test_cpu_features.py"]
UMATH_TESTS = ["test_umath.py", "test_umath_accuracy.py", "test_umath_complex.py", "test_ufunc.py"]


def fail_or_skip(message: str) -> None:
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def run(cmd: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None, timeout: int = 900) -> str:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("CCOPT_", "NPY_"))}
    full_env.update(env or {})
    r = subprocess.run(list(cmd), cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, (f"{cmd} in {cwd} {dict(env or {})} exited {r.returncode}:\n"
                               f"{r.stdout[-4000:]}\n{r.stderr[-3000:]}")
    return r.stdout


def prepared(tmp_path: Path, fork: bool, version: str = "2.2.6") -> Path:
    try:
        return prepare_numpy.prepare(tmp_path, version, fork=fork)
    except SystemExit as e:  # no network, or the download failed
        fail_or_skip(f"cannot prepare numpy's sdist: {e}")
        raise


def compilers(tree: Path) -> dict[str, str]:
    """gcc, through ccache when it is there (CI installs it); paths made relative so reruns hit the cache."""
    need("gcc")
    need("g++")
    launcher = "ccache " if shutil.which("ccache") else ""
    return {"CC": launcher + "gcc", "CXX": launcher + "g++", "CCACHE_BASEDIR": str(tree), "CCACHE_NOHASHDIR": "1"}


def installed_package(destdir: Path) -> Path:
    """The directory holding the installed ``numpy`` package below ``meson install --destdir``."""
    return next(destdir.rglob("numpy/__init__.py")).parents[1]


def numpy_pytest(site: Path, files: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> str:
    tests = [str(site / "numpy" / "_core" / "tests" / f) for f in files]
    out = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *tests], cwd,
              {"PYTHONPATH": str(site), **(env or {})}, timeout=1800)
    summary = out.strip().splitlines()[-1]
    assert " passed" in summary and not re.search(r"\d+ (failed|error)", summary), out[-3000:]
    return summary


def cpu_lists(site: Path, cwd: Path) -> dict[str, list[str]]:
    code = ("import numpy._core._multiarray_umath as m; f = m.__cpu_features__; "
            "print(' '.join(m.__cpu_baseline__)); print(' '.join(m.__cpu_dispatch__)); "
            "print(' '.join(n for n in m.__cpu_dispatch__ if f[n]))")
    lines = run([sys.executable, "-c", code], cwd, {"PYTHONPATH": str(site)}).split("\n")
    return {"baseline": lines[0].split(), "dispatch": lines[1].split(), "runs": lines[2].split()}


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="the host is not x86_64")
def test_numpy_on_stock_meson_matches_the_fork_and_passes_its_tests(tmp_path: Path) -> None:
    need("ninja")
    need("git")
    try:
        import Cython  # noqa: F401  # numpy's meson.build needs the cython compiler
    except ImportError:
        fail_or_skip("Cython is not installed (pip install -e '.[test]' installs it)")

    # the fork's configuration, from the sdist as released: the reference
    fork = prepared(tmp_path, fork=True)
    run([sys.executable, "vendored-meson/meson/meson.py", "setup", "build", *NUMPY_OPTIONS], fork,
        {"CC": "gcc", "CXX": "g++"})

    tree = prepared(tmp_path, fork=False)
    build, env = tree / "build", compilers(tree)
    out = run([sys.executable, "-m", "mesonbuild.mesonmain", "setup", "build", *NUMPY_OPTIONS], tree, env)
    assert "ccopt-meson" in out and "vendored" not in out, out[-2000:]
    # every dispatch object: same (source, target) set, ISA flags, NPY_HAVE_*; same headers; same names
    assert compare_builds.differences(fork / "build", build) == []

    run([need("ninja"), "-C", str(build), "-j2"], tree, env, timeout=3600)
    run([sys.executable, "-m", "mesonbuild.mesonmain", "install", "-C", str(build), "--destdir",
         str(tmp_path / "inst"), "--quiet"], tree, env)
    site = installed_package(tmp_path / "inst")
    work = tmp_path / "run"  # away from the source tree, so the installed package is imported
    work.mkdir()

    names = cpu_lists(site, work)
    fork_names = compare_builds.config_names(fork / "build")
    assert names["baseline"] == fork_names["BASELINE"] and names["dispatch"] == fork_names["DISPATCH"], names

    numpy_pytest(site, SIMD_TESTS + UMATH_TESTS, work)
    # the AVX2 versions (everything above AVX2 masked), then the SSE-level ones (AVX and above masked);
    # not test_cpu_features.py, which checks __cpu_features__ against /proc/cpuinfo (a mask contradicts it)
    for level in ("AVX2", "SSE42"):
        masked = [n for n in names["runs"] if names["dispatch"].index(n) > names["dispatch"].index(level)]
        if masked:
            env_mask = {"NPY_DISABLE_CPU_FEATURES": " ".join(masked)}
            numpy_pytest(site, [*SIMD_TESTS[:3], *UMATH_TESTS[:3]], work, env_mask)

    # numpy's own options follow a change after the first configure (no subproject option involved)
    # (the values are the fork's for the same options: cpu-dispatch is closed under implication)
    run([sys.executable, "-m", "mesonbuild.mesonmain", "configure", str(build), "-Dcpu-baseline=sse41",
         "-Dcpu-dispatch=avx2", "-Dtest-simd=BASELINE,SSE42,AVX2,FMA3"], tree, env)
    run([need("ninja"), "-C", str(build), "build.ninja"], tree, env)
    assert compare_builds.config_names(build) == {"BASELINE": ["SSE", "SSE2", "SSE3", "SSSE3", "SSE41"],
                                                  "DISPATCH": ["POPCNT", "SSE42", "AVX", "F16C", "FMA3", "AVX2"]}
    assert compare_builds.header_targets(build)["_simd.dispatch.h"] == ["SSE42", "AVX2", "FMA3", "baseline"]
    run([sys.executable, "-m", "mesonbuild.mesonmain", "configure", str(build), "-Ddisable-optimization=true"],
        tree, env)
    run([need("ninja"), "-C", str(build), "build.ninja"], tree, env)
    assert compare_builds.config_names(build) == {"BASELINE": [], "DISPATCH": []}
    assert set(compare_builds.dispatch_objects(build)) == {(s, "baseline") for s, _ in
                                                           compare_builds.dispatch_objects(build)}
