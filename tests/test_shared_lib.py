"""ccopt inside a shared library (tests/projects/shared_lib): the library exports nothing of ccopt, two
libraries with different run-time tables in one process each get their own answers, and the host's
8 KiB alternate signal stack still works.  The library also compiles a file of its own layout for one
target ('$noheader', chosen with the subproject's feature_states) and checks the CPU itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ccopt_meson import Request, detect
from ccopt_meson import host as ccopt_host

from .conftest import ROOT, need
from .helpers import clean_env
from .snippets import snippet
from .test_meson import Build, project

GUIDE = ROOT / "docs" / "how-to" / "library-maintainers.md"


def _build_lib(tmp_path: Path, name: str, *options: str) -> Path:
    """One configured and built copy of the fixture; its build directory."""
    root = tmp_path / name
    root.mkdir()
    b = Build(root, project(root, "shared_lib"))
    b.meson_cmd("setup", str(b.dir), f"-Dlibname={name}", *options)
    b.ninja()
    return b.dir


def _exported(lib: Path) -> list[str]:
    out = subprocess.run([need("nm"), "-D", "--defined-only", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


@pytest.mark.slow
def test_two_libraries_with_their_own_tables_in_one_host(tmp_path: Path) -> None:
    one = _build_lib(tmp_path, "one", "-Dccopt-meson:features-file=features/ccopt.json")
    two = _build_lib(tmp_path, "two", "-Dccopt-meson:runtime-messages=false")
    for d, name in ((one, "one"), (two, "two")):
        exported = _exported(d / f"lib{name}.so")
        assert [s for s in exported if "ccopt" in s] == [] and f"{name}_check" in exported, exported
    host = tmp_path / "host"
    src = Path(__file__).parent / "projects" / "shared_lib" / "host.c"
    subprocess.run([need("gcc"), "-std=c99", "-Wall", "-Werror", str(src), "-o", str(host),
                    f"-L{one}", f"-L{two}", "-lone", "-ltwo", f"-Wl,-rpath,{one}:{two}"], check=True)
    env = clean_env()
    r = subprocess.run([str(host)], capture_output=True, text=True, env={**env, "CCOPT_DISABLE_CPU_FEATURES": "NOPE"},
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stderr.count("unknown CPU feature 'NOPE'") == 1  # library two was built with runtime-messages=false
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["one"].startswith("0 ") and lines["two"].startswith("0 "), lines
    count_one, count_two = (int(lines[k].split()[1].split("=")[1]) for k in ("one", "two"))
    assert count_one == count_two + 1 and "adx=1" in lines["one"] and "adx=0" in lines["two"]
    assert lines["sigaltstack"] == "ok"
    if ccopt_host.machine_name() == "x86_64":  # the library's own SSE4.1 file: compiled, no header generated for it
        assert "sse41file=1" in lines["one"] and "runs=1" in lines["one"]
        assert not list(one.rglob("sum_sse41.h"))


def _predefined(cc: str) -> set[str]:
    out = subprocess.run([cc, "-dM", "-E", "-x", "c", os.devnull], capture_output=True, text=True, check=True).stdout
    return {line.split()[1] for line in out.splitlines() if line.startswith("#define ")}


@pytest.mark.parametrize("cc", ["gcc", "aarch64-linux-gnu-gcc"])
def test_detect_is_the_compilers_own_floor_and_the_library_baseline(cc: str, tmp_path: Path) -> None:
    """The baseline a library wants neither raises the platform's floor (min adds SSE3 on x86_64) nor lowers
    it (none makes NEON a run-time level on aarch64): detect is exactly what the compiler targets without
    flags, and the library maintainers' guide says to pick it."""
    path = need(cc)
    doc = detect(Request(command=(path,), baseline="detect", dispatch="none"), build_dir=tmp_path)
    assert doc.table is not None
    macros = _predefined(path)
    floor = [n for n, f in doc.table.features.items() if not f.disabled and f.macros and set(f.macros) <= macros]
    assert sorted(doc.baseline) == sorted(floor) and doc.baseline
    section = GUIDE.read_text().split("## The baseline to pick", 1)[1].split("\n## ", 1)[0]
    assert "cpu-baseline=detect" in section and "what the compiler targets" in section


MIXED = ROOT / "tests" / "projects" / "mixed_shared"


def _mixed(tmp_path: Path, *options: str) -> Build:
    b = Build(tmp_path, project(tmp_path, "mixed_shared"))
    b.meson_cmd("setup", str(b.dir), *options)
    b.ninja()
    return b


@pytest.mark.slow
def test_c_and_cxx_kernels_in_one_shared_library_export_only_its_api(tmp_path: Path) -> None:
    """The library maintainers' pattern: C and C++ kernels, dispatchers under the library's names, nothing but
    the API in the export table (libstdc++'s std::accumulate<> instantiation included, which -fvisibility=hidden
    alone exports)."""
    guide = GUIDE.read_text()
    for name, path in (("library/mixed-meson", "meson.build"), ("library/mixed-api", "mixed.c")):
        assert snippet(name) in (MIXED / path).read_text(), name
        assert f"<!-- snippet: {name} -->" in guide
    b = _mixed(tmp_path)
    assert sorted(_exported(b.dir / "libmixed.so")) == ["mixed_scale_sum", "mixed_sum", "mixed_unsupported"]
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert "sum 4950, scaled 9900" in out


@pytest.mark.slow
def test_the_c_and_cxx_shared_library_says_why_below_its_baseline(tmp_path: Path) -> None:
    """Built for X86_V3 and loaded by a host built without ccopt on a Nehalem (qemu): one line and exit 1 from
    the host's check, never SIGILL; on a Haswell it runs."""
    if ccopt_host.machine_name() != "x86_64":
        pytest.skip("the baseline and CPU models below are x86_64 ones")
    qemu = need("qemu-x86_64-static")
    b = _mixed(tmp_path, "-Dccopt-meson:cpu-baseline=x86_v3")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCOPT_")}
    low = subprocess.run([qemu, "-cpu", "Nehalem", str(b.dir / "host")], capture_output=True, text=True, env=env,
                         timeout=120)
    lines = [line for line in low.stderr.splitlines() if not line.startswith("qemu")]
    assert (low.returncode, low.stdout) == (1, ""), low.stderr
    assert len(lines) == 1 and lines[0].startswith("ccopt: this CPU lacks ") and " AVX2 X86_V3, which" in lines[0]
    high = subprocess.run([qemu, "-cpu", "Haswell", str(b.dir / "host")], capture_output=True, text=True, env=env,
                          timeout=120)
    assert high.returncode == 0 and high.stdout == "sum 4950, scaled 9900\n", high.stderr
