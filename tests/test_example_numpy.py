"""examples/numpy: numpy built on stock Meson with ccopt-meson in place of its Meson fork's `features`.

Two kinds of test, both on the sdists prepare_numpy.py fetches (sha256-pinned, cached outside the
repository) and with the Python of examples/numpy/toolchain.py (a pinned venv; 3.12 for 2.5.5):

- the configuration, case by case (version x platform x numpy's options): numpy as released,
  configured with its vendored fork, against the port configured with stock Meson; every dispatch
  object's flags and defines, every other compile line's, every ``*.dispatch.h`` and
  ``npy_cpu_dispatch_config.h`` must be identical (configure_numpy.py and compare_builds.py; the
  fork's dumps are recorded as data in examples/numpy/fork-dumps/, with what they were made with);
- the build: numpy's current release built through ``pip wheel`` (meson-python, with
  ``-Csetup-args=-Dcpu-baseline=...``; ccache when installed, as in CI), installed into a fresh
  venv and tested with numpy's own SIMD, dispatcher and umath tests, again with
  NPY_DISABLE_CPU_FEATURES forcing the lower versions, and test_simd.py under qemu's Haswell model.
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Sequence

import pytest

from .conftest import IN_CI, ROOT, need, need_module
from .helpers import clean_env

EXAMPLE = ROOT / "examples" / "numpy"
sys.path.insert(0, str(EXAMPLE))
import compare_builds  # noqa: E402
import configure_numpy  # noqa: E402
import prepare_numpy  # noqa: E402
import run_emulated  # noqa: E402
import toolchain  # noqa: E402

X86_64 = platform.machine().lower() in ("x86_64", "amd64")
CASES = configure_numpy.CASES

# The cases whose port differs from the fork today, and how. strict: a case that starts to match
# fails until its line here goes.
DIFFERS: dict[str, str] = {  # case id -> how it differs
    "2.5.5-aarch64-c_args--mcpu-neoverse-v1": "by choice: the port writes -mcpu=neoverse-v1+sve+fp16fml+dotprod+fp16 "
    "where the fork writes -march=armv8.2-a+sve+fp16fml+dotprod+fp16 after that -mcpu, which gcc warns conflicts "
    "with the armv8.4-a CPU and which lowers the C objects' architecture (examples/numpy/README.md)",
}


def no_port(version: str) -> str | None:
    try:
        prepare_numpy.port_files(version)
    except SystemExit as e:
        return str(e)
    return None


def case_param(case: configure_numpy.Case) -> object:
    reason = no_port(case.version) or DIFFERS.get(case.id)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case, id=case.id, marks=marks)


def fail_or_skip(message: str) -> None:
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def prepared(dest: Path, version: str, fork: bool) -> Path:
    try:
        return prepare_numpy.prepare(dest, version, fork=fork)
    except SystemExit as e:  # no port of this version, no network, or the download failed
        if no_port(version):
            raise
        fail_or_skip(f"cannot prepare numpy's sdist: {e}")
        raise


def python_for(version: str) -> Path:
    try:
        return toolchain.python_for(version)
    except SystemExit as e:  # no python3.12, or pip could not install the tools
        fail_or_skip(str(e))
        raise


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory for the trees of every version (prepared once per module, as needed)."""
    return tmp_path_factory.mktemp("numpy")


def test_the_fork_s_dumps_are_recorded_for_every_case() -> None:
    """Each case whose result does not depend on this CPU has its fork dump recorded, made from the pinned
    sdist, with the case's platform and options, in the current dump and setup formats; no other dump is
    recorded."""
    expected = {c.id: c for c in CASES if not c.on_this_cpu}
    found = {p.name.removesuffix(".json.gz"): p for p in configure_numpy.RECORDED.glob("*.json.gz")}
    assert sorted(found) == sorted(expected)
    for cid, path in found.items():
        case = expected[cid]
        made = configure_numpy.read_record(path)["made_with"]
        assert made["sdist"] == prepare_numpy.release(case.version).sha256, cid
        assert made["platform"] == configure_numpy.PLATFORMS[case.platform]._asdict(), cid
        assert made["options"] == [*configure_numpy.COMMON, *case.options], cid
        assert (made["dump"], made["setup"]) == (compare_builds.FORMAT, configure_numpy.SETUP_FORMAT), \
            f"{cid}: remake it (configure_numpy.py DEST --record)"


@pytest.mark.slow
@pytest.mark.skipif(not X86_64, reason="the host is not x86_64 (the cases name x86_64 compilers)")
@pytest.mark.parametrize("case", [case_param(c) for c in CASES])
def test_configuration_matches_the_fork(case: configure_numpy.Case, trees: Path) -> None:
    for tool in ("git", "ninja", *configure_numpy.missing_tools(case)):
        need(tool)
    if no_port(case.version):
        pytest.fail(no_port(case.version))
    python_for(case.version)
    if not (trees / f"numpy-{case.version}").is_dir():
        prepared(trees, case.version, fork=False)
    port = configure_numpy.port_dump(case, trees)
    fork = configure_numpy.fork_dump(case, trees)
    assert fork["configured"] or case.options, f"the fork refused numpy's defaults: {fork['messages']}"
    diffs = compare_builds.differences(fork, port)
    assert diffs == [], "\n".join([case.id, compare_builds.summary(fork), compare_builds.summary(port), *diffs])


# ---------------------------------------------------------------------------------------------------
# numpy built with the port, through pip wheel, and its tests

SIMD_TESTS = ["test_simd.py", "test_simd_module.py", "test_cpu_dispatcher.py", "test_cpu_features.py"]
UMATH_TESTS = ["test_umath.py", "test_umath_accuracy.py", "test_umath_complex.py", "test_ufunc.py"]
# per version: the wheel's -Dcpu-baseline (numpy's `min` spelled out: the same objects as the
# defaults the fork was dumped with), and the dispatch levels the masked runs force, highest first
LEVELS = {"2.5.5": ("x86_v2", ["X86_V3", "X86_V2"]), "2.2.6": ("sse3", ["AVX2", "SSE42"])}
BUILT = [prepare_numpy.CURRENT]  # 2.2.6's build is checked by hand (CI time): add it here to run it


def run(cmd: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None, timeout: int = 900) -> str:
    full_env = clean_env("NPY_", "PYTHON")
    full_env.update(env or {})
    r = subprocess.run(list(cmd), cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, (f"{cmd} in {cwd} {dict(env or {})} exited {r.returncode}:\n"
                               f"{r.stdout[-4000:]}\n{r.stderr[-3000:]}")
    return r.stdout


def numpy_pytest(python: Path, files: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None,
                 wrapper: Sequence[str] = ()) -> str:
    """numpy's own test files, from the installed package, under ``python`` (away from the source tree)."""
    site = Path(run([str(python), "-c", "import numpy, os; print(os.path.dirname(numpy.__file__))"], cwd).strip())
    tests = [str(site / "_core" / "tests" / f) for f in files]
    out = run([*wrapper, str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *tests],
              cwd, env, timeout=3600)
    summary = out.strip().splitlines()[-1]
    assert " passed" in summary and not re.search(r"\d+ (failed|error)", summary), out[-3000:]
    return summary


def cpu_lists(python: Path, cwd: Path) -> dict[str, list[str]]:
    code = ("import numpy._core._multiarray_umath as m; f = m.__cpu_features__; "
            "print(' '.join(m.__cpu_baseline__)); print(' '.join(m.__cpu_dispatch__)); "
            "print(' '.join(n for n in m.__cpu_dispatch__ if f[n]))")
    lines = run([str(python), "-c", code], cwd).split("\n")
    return {"baseline": lines[0].split(), "dispatch": lines[1].split(), "runs": lines[2].split()}


def build_wheel(version: str, tree: Path, python: Path, out: Path) -> Path:
    """numpy's wheel from the ported tree (run_emulated.py's build), with the cpu-baseline of LEVELS."""
    need("gcc")
    need("g++")
    wheel = run_emulated.x86_wheel(version, LEVELS[version][0], tree, python, out)
    options = json.loads((tree / "build-wheel" / "meson-info" / "intro-buildoptions.json").read_text())
    assert {o["name"]: o["value"] for o in options}["cpu-baseline"] == LEVELS[version][0]
    return wheel


@pytest.mark.slow
@pytest.mark.skipif(not X86_64, reason="the host is not x86_64")
@pytest.mark.parametrize("version", [pytest.param(v, marks=[pytest.mark.xfail(strict=True, reason=no_port(v))]
                                                  if no_port(v) else []) for v in BUILT])
def test_numpy_built_with_the_port_passes_its_tests(version: str, tmp_path: Path) -> None:
    need("git")
    if no_port(version):
        pytest.fail(no_port(version))
    python = python_for(version)
    tree = prepared(tmp_path, version, fork=False)
    wheel = build_wheel(version, tree, python, tmp_path / "dist")
    if version == run_emulated.VERSION:  # the ISA audit of the wheel as shipped: clean, every version counted
        need_module("iced_x86", "the package's 'audit' extra")
        r = subprocess.run([sys.executable, "-m", "ccopt_meson", "audit", "--json", str(wheel)], capture_output=True,
                           text=True, env=clean_env(PYTHONPATH=str(ROOT)))
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr
        umath = next(o for o in json.loads(r.stdout)["objects"] if "_multiarray_umath" in o["object"])
        assert umath["declared"] == ["X86_V2"] and umath["versions"].get("X86_V3") and umath["versions"].get("X86_V4")

    fresh = tmp_path / "venv"  # a fresh venv: the wheel and numpy's test requirements only
    base = toolchain.base_python(version)
    toolchain.make_venv(base, fresh, [str(wheel), *(t for t in toolchain.TOOLS if t.startswith(("pytest", "hyp")))])
    py = fresh / "bin" / "python"
    work = tmp_path / "run"
    work.mkdir()

    names = cpu_lists(py, work)
    fork = configure_numpy.fork_dump(configure_numpy.Case(version, "x86_64-gcc"), tmp_path)
    fork_names = compare_builds.config_names(fork["config"])
    assert names["baseline"] == fork_names["BASELINE"] and names["dispatch"] == fork_names["DISPATCH"], names

    numpy_pytest(py, SIMD_TESTS + UMATH_TESTS, work)
    # each lower level's versions: every dispatched name above it masked; not test_cpu_features.py,
    # which checks __cpu_features__ against /proc/cpuinfo (a mask contradicts it by design)
    for level in LEVELS[version][1]:
        above = [n for n in names["runs"] if level in names["dispatch"] and
                 names["dispatch"].index(n) > names["dispatch"].index(level)]
        masked = above if level in names["dispatch"] else names["runs"]  # a baseline level: mask every dispatch
        if masked:
            numpy_pytest(py, [*SIMD_TESTS[:3], *UMATH_TESTS[:3]], work, {"NPY_DISABLE_CPU_FEATURES": " ".join(masked)})

    # AVX2 hardware without AVX-512, whatever this machine has
    qemu = need("qemu-x86_64-static")
    numpy_pytest(py, ["test_simd.py"], work, wrapper=[qemu, "-cpu", "Haswell"])
    # on qemu's X86_V2 (Nehalem) and X86_V3 (Haswell) models, numpy detects what the model has and each
    # dispatched function runs the highest version the model can (run_emulated.py's check and report)
    if version == run_emulated.VERSION:
        target = run_emulated.Target([str(py)], [qemu], {})
        for cpu in (c for c in run_emulated.CPUS if c.arch == "x86_64"):
            row = run_emulated.run_cpu(target, cpu, ["test_cpu_dispatcher.py"], work)
            assert not row.problems and row.counts.get("passed") and not set(row.counts) & {"failed", "error"}, row
