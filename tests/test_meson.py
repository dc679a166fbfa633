"""Real meson setup / ninja / meson test runs of the example and fixture projects.

A logging compiler wrapper records every compiler process; probe compiles are
the ones whose source lies in the helper's scratch directory (``/ccopt-*/p<N>.c``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from bench.projects import copy_repo
from ccopt_meson.version import __version__

from .conftest import ROOT, need
from .helpers import clean_env

pytestmark = pytest.mark.slow
PROBE = re.compile(r"/ccopt-[^/\s]+/p\d+\.c\b")


def project(tmp_path: Path, name: str) -> Path:
    src = ROOT / "examples" / "dot" if name == "dot" else ROOT / "tests" / "projects" / name
    dest = tmp_path / name
    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns("ccopt-meson"))
    copy_repo(dest / "subprojects" / "ccopt-meson")
    return dest


def written(src: Path, files: dict[str, str]) -> Path:
    """A project made of ``files`` (path -> text) at ``src``, with this checkout as its ccopt-meson subproject."""
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    copy_repo(src / "subprojects" / "ccopt-meson")
    return src


class Build:
    def __init__(self, tmp_path: Path, src: Path, compiler: str = "gcc", meson: list[str] | None = None) -> None:
        self.src, self.dir = src, tmp_path / "build"
        self.log = tmp_path / "cc.log"
        wrapper = tmp_path / f"{compiler}-log"
        real = need(compiler)
        wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{self.log}"\nexec {real} "$@"\n')
        wrapper.chmod(0o755)
        cxx = need("g++" if compiler == "gcc" else "clang++")
        cxx_wrapper = tmp_path / f"{compiler}-log++"
        cxx_wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{self.log}"\nexec {cxx} "$@"\n')
        cxx_wrapper.chmod(0o755)
        self.env = clean_env(CC=str(wrapper), CXX=str(cxx_wrapper))
        self.meson = meson or [sys.executable, "-m", "mesonbuild.mesonmain"]

    def run(self, *cmd: str, cwd: Path | None = None) -> str:
        self.log.write_text("")
        r = subprocess.run(cmd, cwd=cwd or self.src, env=self.env, capture_output=True, text=True)
        assert r.returncode == 0, f"{cmd} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        return r.stdout

    def meson_cmd(self, *args: str) -> str:
        return self.run(*self.meson, *args)

    def ninja(self, *args: str) -> str:
        return self.run(need("ninja"), "-C", str(self.dir), *args)

    def probes(self) -> int:
        return sum(1 for line in self.log.read_text().splitlines() if PROBE.search(line))


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_example_builds_tests_and_caches(tmp_path: Path, compiler: str) -> None:
    b = Build(tmp_path, project(tmp_path, "dot"), compiler)
    out = b.meson_cmd("setup", str(b.dir))
    assert b.probes() >= 1 and re.search(r"From cache\s*: no \(\d+ compiler processes\)", out)
    assert (b.dir / "subprojects" / "ccopt-meson" / "ccopt-features.json").is_file()
    b.ninja()
    test_out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert "dispatch picked:" in test_out and "WRONG" not in test_out

    # ninja's automatic regeneration after a meson.build edit: cache hit, zero probes
    with open(b.src / "meson.build", "a") as fh:
        fh.write("# touched\n")
    out = b.ninja()
    assert "Regenerating build files" in out and b.probes() == 0

    # an explicit reconfigure flushes and probes again, and a no-change one rewrites no header
    b.meson_cmd("setup", "--reconfigure", str(b.dir))
    assert b.probes() >= 1, "an explicit --reconfigure must flush and probe again"
    assert "no work to do" in b.ninja("-n")

    # a c_args change re-probes (new cache key) without a flush
    b.meson_cmd("configure", str(b.dir), "-Dc_args=-O1")
    b.ninja()
    assert b.probes() >= 1

    # the wrapper flushes on every OS; report reads the build dir.
    # The source dir is named: run from this checkout, Meson would take its meson.build for the project's.
    b.run(sys.executable, "-m", "ccopt_meson", "setup", "--reconfigure", str(b.dir), str(b.src), cwd=ROOT)
    assert b.probes() >= 1
    report = b.run(sys.executable, "-m", "ccopt_meson", "report", str(b.dir), cwd=ROOT)
    assert "CPU dispatch" in report

    # flush makes the next ninja regenerate and probe
    b.run(sys.executable, "-m", "ccopt_meson", "flush", str(b.dir), cwd=ROOT)
    out = b.ninja()
    assert "Regenerating build files" in out and b.probes() >= 1

    # --wipe starts clean
    b.meson_cmd("setup", "--wipe", str(b.dir))
    assert b.probes() >= 1


def test_build_dir_path_with_spaces(tmp_path: Path) -> None:
    spaced = tmp_path / "with space"
    spaced.mkdir()
    b = Build(spaced, project(spaced, "dot"))
    b.meson_cmd("setup", str(b.dir))
    b.ninja()


def test_generated_headers_hold_no_absolute_paths(tmp_path: Path) -> None:
    b = Build(tmp_path, project(tmp_path, "dot"))
    b.meson_cmd("setup", str(b.dir))
    for header in (b.dir / "dot.dispatch.h", b.dir / "subprojects" / "ccopt-meson" / "ccopt_config.h"):
        text = header.read_text()
        assert str(tmp_path) not in text and "/work" not in text
    assert not (b.src / "dot.dispatch.h").exists()


def test_two_subprojects_share_one_detection(tmp_path: Path) -> None:
    b = Build(tmp_path, project(tmp_path, "two_users"))
    b.meson_cmd("setup", str(b.dir))
    assert b.probes() == 2  # one macro dump and one batched compile: a single detection
    b.ninja()


def test_cxx_only_consumer(tmp_path: Path) -> None:
    b = Build(tmp_path, project(tmp_path, "cxx_only"))
    b.meson_cmd("setup", str(b.dir))
    log = b.log.read_text()
    assert any("-x c++" in line for line in log.splitlines() if PROBE.search(line))
    b.ninja()
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert "picked" in out


def test_consumer_through_a_wrap_file(tmp_path: Path) -> None:
    src = project(tmp_path, "dot")
    sub = src / "subprojects"
    shutil.rmtree(sub / "ccopt-meson")
    stage = tmp_path / "stage" / f"ccopt-meson-{__version__}"
    copy_repo(stage, bytecode=False)  # what a release tarball holds
    (sub / "packagecache").mkdir()
    tarball = sub / "packagecache" / f"{stage.name}.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(stage, arcname=stage.name)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    (sub / "ccopt-meson.wrap").write_text(
        f"[wrap-file]\ndirectory = {stage.name}\nsource_url = https://example.invalid/{tarball.name}\n"
        f"source_filename = {tarball.name}\nsource_hash = {digest}\n\n"
        "[provide]\ndependency_names = ccopt\nprogram_names = ccopt-meson\n")
    b = Build(tmp_path, src)
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    assert "dispatch picked:" in b.meson_cmd("test", "-C", str(b.dir), "-v")


# The minimum (Debian 12's), Ubuntu 24.04's, and a release from the last two years; .ci/run installs them.
OLD_MESONS = ("1.0.1", "1.3.2", "1.7.2")
MESONS = (*OLD_MESONS, "installed")  # and the Meson the tests run with


def meson_release(b: Build, version: str) -> None:
    """Point ``b`` at the Meson release installed in ``.ci/mesons/<version>`` (skip, or fail in CI, without it)."""
    if version == "installed":
        return
    path = ROOT / ".ci" / "mesons" / version
    if not (path / "mesonbuild").is_dir():
        message = f"meson {version} is not installed in {path} (.ci/run installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    b.env["PYTHONPATH"] = str(path)


@pytest.mark.parametrize("version", OLD_MESONS)
def test_older_meson_releases(tmp_path: Path, version: str) -> None:
    b = Build(tmp_path, project(tmp_path, "dot"))
    meson_release(b, version)
    out = b.meson_cmd("setup", str(b.dir))
    assert f"The Meson build system\nVersion: {version}" in out
    b.ninja()
    assert "dispatch picked:" in b.meson_cmd("test", "-C", str(b.dir), "-v")
    # nothing enabled: empty dependency variables, which Meson < 1.4 refuses (numpy's port asks for none)
    b.meson_cmd("setup", "-Dccopt-meson:cpu-baseline=none", "-Dccopt-meson:cpu-dispatch=none", str(tmp_path / "none"))


def test_the_glue_uses_no_meson_feature_newer_than_its_minimum(tmp_path: Path) -> None:
    """Meson warns about every feature newer than a project's meson_version: the glue and example draw none."""
    b = Build(tmp_path, project(tmp_path, "dot"))
    out = b.meson_cmd("setup", str(b.dir))
    assert "uses feature" not in out, out  # "... uses feature introduced in / deprecated since ..."


EMPTY_LISTS = {
    "meson.build": """project('empty-lists', 'c', meson_version: '>=1.0.1')
ccopt = subproject('ccopt-meson')
ccopt_dep = dependency('ccopt')
r = run_command(ccopt.get_variable('targets'), 'k.dispatch.c: baseline avx2 asimd vsx2 vx', check: false)
assert(r.returncode() == 0, r.stderr().strip())
libs = []
foreach line : r.stdout().strip().split('\\n')
  t = line.split('\\t')  # library name, compile args, sources
  libs += static_library(t[0], t[2].split(), c_args: t[1].split(), dependencies: ccopt_dep)
endforeach
message('names: baseline=[@0@] dispatch=[@1@] dep=[@2@]/[@3@] test_targets=[@4@]'.format(
  ','.join(ccopt.get_variable('baseline_names')), ','.join(ccopt.get_variable('dispatch_names')),
  ','.join(ccopt_dep.get_variable('baseline_names').split()),
  ','.join(ccopt_dep.get_variable('dispatch_names').split()), ','.join(ccopt.get_variable('test_targets'))))
app = executable('app', 'main.c', link_with: libs, dependencies: ccopt_dep)
test('app', app)
foreach target : ccopt.get_variable('test_targets')
  test('app on ' + target, ccopt.get_variable('cpu_info'), args: ['--run-as', target, app])
endforeach
""",
    "k.dispatch.c": "int CCOPT_FN(k)(void) { return 1; }\n",
    "main.c": """#include <stdio.h>
#include "k.dispatch.h"
CCOPT_DISPATCH_DECLARE(k_dispatch, int, k, (void))
CCOPT_DISPATCH_DEFINE(k_dispatch, int, k, (void), ())
int main(void)
{
    printf("picked %s\\n", CCOPT_DISPATCH_TARGET_NAME(k_dispatch, k));
    return k() == 1 ? 0 : 1;
}
""",
}


def names_line(out: str) -> str:
    return next(line for line in out.splitlines() if "names: baseline=" in line).split("names: ", 1)[1]


@pytest.mark.parametrize("version", MESONS)
def test_empty_baseline_and_dispatch_lists_on_every_meson_release(tmp_path: Path, version: str) -> None:
    """cpu-baseline=none and cpu-dispatch=none leave both lists empty: configure, build and the
    per-target test loop work on every supported Meson (before 1.4 an empty variable value is refused)."""
    src = tmp_path / "empty"
    written(src, EMPTY_LISTS)
    b = Build(tmp_path, src)
    meson_release(b, version)
    out = b.meson_cmd("setup", "-Dccopt-meson:cpu-baseline=none", "-Dccopt-meson:cpu-dispatch=none", str(b.dir))
    assert names_line(out) == "baseline=[] dispatch=[] dep=[]/[] test_targets=[BASELINE]"
    assert re.search(r"Baseline\s*: none", out) and re.search(r"Dispatchable\s*: none", out)
    b.ninja()
    test_out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert "picked BASELINE" in test_out and re.search(r"Fail:\s+0\b", test_out), test_out
    if os.uname().machine != "x86_64":
        return
    # x86 with no baseline but dispatch targets: AVX2 is built, and picked where the CPU has it
    out = b.meson_cmd("setup", "--reconfigure", "-Dccopt-meson:cpu-dispatch=max", str(b.dir))
    names = re.fullmatch(r"baseline=\[\] dispatch=\[(.+)\] dep=\[\]/\[(.+)\] test_targets=\[(.+)\]", names_line(out))
    assert names and "AVX2" in names[1].split(",") and names[2] == names[1], names_line(out)
    assert names[3] == names[1] + ",BASELINE"
    b.ninja()
    test_out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert re.search(r"Fail:\s+0\b", test_out), test_out
    picked = "picked AVX2" if "avx2" in Path("/proc/cpuinfo").read_text().split() else "picked BASELINE"
    assert picked in test_out


TWO_LISTS = {
    "meson.build": """project('two-lists', 'c', meson_version: '>=1.0.1')
ccopt = subproject('ccopt-meson')
ccopt_dep = dependency('ccopt')
r = run_command(ccopt.get_variable('targets'), 'a.dispatch.c: baseline sse41 avx2',
                'b.dispatch.c: baseline sse41 avx512f', check: false)
assert(r.returncode() == 0, r.stderr().strip())
libs = []
foreach line : r.stdout().strip().split('\\n')
  t = line.split('\\t')  # library name, compile args, sources
  libs += static_library(t[0], t[2].split(), c_args: t[1].split(), dependencies: ccopt_dep)
endforeach
test('app', executable('app', 'main.c', link_with: libs, dependencies: ccopt_dep))
""",
    "a.dispatch.c": "int CCOPT_FN(a)(void) { return 1; }\n",
    "b.dispatch.c": "int CCOPT_FN(b)(void) { return 2; }\n",
    "main.c": """#include "a.dispatch.h"
#include "b.dispatch.h"
CCOPT_DISPATCH_DECLARE(a_dispatch, int, a, (void))
CCOPT_DISPATCH_DEFINE(a_dispatch, int, a, (void), ())
CCOPT_DISPATCH_DECLARE(b_dispatch, int, b, (void))
CCOPT_DISPATCH_DEFINE(b_dispatch, int, b, (void), ())
int main(void) { return a() + b() == 3 ? 0 : 1; }
""",
}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the target lists are x86 ones")
def test_a_dispatch_change_recompiles_only_the_kernels_whose_targets_changed(tmp_path: Path) -> None:
    """Kernels force-include ccopt_kernel.h, which holds nothing of the dispatch list: dropping AVX512F
    from cpu-dispatch rebuilds what uses b.dispatch.c's list (main.c), never a.dispatch.c."""
    src = tmp_path / "two"
    written(src, TWO_LISTS)
    b = Build(tmp_path, src)
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    compiled = b.log.read_text()
    assert "a.dispatch.c" in compiled and "-DCCOPT_TARGET=AVX512F" in compiled
    b.meson_cmd("configure", "-Dccopt-meson:cpu-dispatch=max -avx512f", str(b.dir))
    b.ninja()
    compiles = [line for line in b.log.read_text().splitlines() if " -c " in f" {line} " and not PROBE.search(line)]
    assert any(line.endswith("main.c") or "main.c " in line for line in compiles), compiles
    assert not [line for line in compiles if "a.dispatch.c" in line], compiles
    assert "-DCCOPT_TARGET=AVX512F" not in "\n".join(compiles)
    assert re.search(r"Fail:\s+0\b", b.meson_cmd("test", "-C", str(b.dir)))


COVERAGE = {
    "meson.build": """project('coverage', 'c', meson_version: '>=1.0.1')
ccopt = subproject('ccopt-meson')
ccopt_dep = dependency('ccopt')
r = run_command(ccopt.get_variable('targets'), 'a.dispatch.c: baseline (avx2_isa bmi2) avx2_isa sse41',
                'b.dispatch.c: baseline (fma3_isa avx2_isa) x86_v3 sse42', check: false)
assert(r.returncode() == 0, r.stderr().strip())
libs = []
versions = []
foreach line : r.stdout().strip().split('\\n')
  t = line.split('\\t')  # library name, compile args, sources, target
  libs += static_library(t[0], t[2].split(), c_args: t[1].split(), dependencies: ccopt_dep)
  versions += versions.contains(t[3]) ? [] : [t[3]]
endforeach
app = executable('app', 'main.c', link_with: libs, dependencies: ccopt_dep)
test('app', app)
foreach target : versions
  test('app on ' + target, ccopt.get_variable('cpu_info'), args: ['--run-as', target, app])
endforeach
message('versions: ' + ' '.join(versions))
""",
    "a.dispatch.c": "int CCOPT_FN(a)(void) { return 1; }\n",
    "b.dispatch.c": "int CCOPT_FN(b)(void) { return 2; }\n",
    "main.c": """#include <stdio.h>
#include "a.dispatch.h"
#include "b.dispatch.h"
CCOPT_DISPATCH_DECLARE(a_dispatch, int, a, (void))
CCOPT_DISPATCH_DEFINE(a_dispatch, int, a, (void), ())
CCOPT_DISPATCH_DECLARE(b_dispatch, int, b, (void))
CCOPT_DISPATCH_DEFINE(b_dispatch, int, b, (void), ())
int main(void)
{
    printf("picked a %s\\npicked b %s\\n", CCOPT_DISPATCH_TARGET_NAME(a_dispatch, a),
           CCOPT_DISPATCH_TARGET_NAME(b_dispatch, b));
    return a() + b() == 3 ? 0 : 1;
}
""",
}
COMPILED = {"a": {"BMI2__AVX2_ISA", "AVX2_ISA", "SSE41", "BASELINE"},
            "b": {"X86_V3", "FMA3_ISA__AVX2_ISA", "SSE42", "BASELINE"}}


def _runs_on(version: str, usable: set[str]) -> bool:
    return version == "BASELINE" or set(re.sub(r"(?<!_)__(?!_)", " ", version).split()) <= usable


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the target lists are x86 ones")
def test_the_version_loop_exercises_every_compiled_version_this_cpu_runs(tmp_path: Path) -> None:
    """The README's loop (one --run-as per targets line's target) picks every (source, version) pair
    compiled and runnable here at least once, the multi-feature ones included; and under qemu's CPU
    models the same masks (CCOPT_ENABLE_CPU_FEATURES, what --run-as sets) do the same."""
    import json

    src = tmp_path / "coverage"
    written(src, COVERAGE)
    b = Build(tmp_path, src)
    versions = re.search(r"Message: versions: (.*)", b.meson_cmd("setup", str(b.dir)))
    assert versions and set(versions[1].split()) == COMPILED["a"] | COMPILED["b"]
    b.ninja()
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    info = b.dir / "subprojects" / "ccopt-meson" / "ccopt-cpu-info"
    usable = {n for n, ok in json.loads(b.run(str(info), "--json"))["features"].items() if ok}
    runnable = {(s, v) for s, vs in COMPILED.items() for v in vs if _runs_on(v, usable)}
    assert set(re.findall(r"^picked (a|b) (\w+)$", out, re.M)) == runnable
    qemu = need("qemu-x86_64-static")
    env = clean_env()
    for model in ("Nehalem", "SandyBridge", "Haswell", "Haswell,-f16c"):
        doc = json.loads(subprocess.run([qemu, "-cpu", model, str(info), "--json"], capture_output=True, text=True,
                                        env=env, check=True).stdout)
        on_model = {n for n, ok in doc["features"].items() if ok}
        seen = set()
        for v in versions[1].split():
            if not _runs_on(v, on_model):
                continue  # --run-as reports it skipped
            names = "BASELINE" if v == "BASELINE" else re.sub(r"(?<!_)__(?!_)", " ", v)
            r = subprocess.run([qemu, "-cpu", model, str(b.dir / "app")], capture_output=True, text=True,
                               env={**env, "CCOPT_ENABLE_CPU_FEATURES": names})
            assert r.returncode == 0, (model, v, r.stderr)
            seen |= set(re.findall(r"^picked (a|b) (\w+)$", r.stdout, re.M))
        expected = {(s, v) for s, vs in COMPILED.items() for v in vs if _runs_on(v, on_model)}
        assert seen == expected, model


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="ASIMD must be another machine's name")
def test_a_name_of_another_machine_in_the_baseline_is_said_on_the_console(tmp_path: Path) -> None:
    """The summary then shows Baseline: none; the note saying why is on the console, not only in meson-log.txt."""
    b = Build(tmp_path, project(tmp_path, "dot"))
    out = b.meson_cmd("setup", "-Dccopt-meson:cpu-baseline=asimd", "-Dccopt-meson:cpu-dispatch=avx2", str(b.dir))
    assert re.search(r"Baseline\s*: none", out)
    assert out.count("ccopt-meson: note: cpu-baseline: ignored ASIMD: not features of x86_64") == 1, out
    assert "ccopt-meson: note" not in b.meson_cmd("setup", str(tmp_path / "default"))  # the default says nothing


def test_explain_in_a_meson_build_dir_answers_for_that_build(tmp_path: Path) -> None:
    """explain --build-dir of a configured build reads its detection: no probe of another compiler, no
    second cache for report to list."""
    from ccopt_meson import cache

    from .helpers import cli

    b = Build(tmp_path, project(tmp_path, "dot"))
    b.meson_cmd("setup", "-Dccopt-meson:cpu-dispatch=avx2 sse41", str(b.dir))
    before = cache.find(b.dir)
    r = cli("explain", "avx2", "avx512_icl", "--build-dir", str(b.dir), "--cc", str(tmp_path / "no-such-compiler"))
    assert r.returncode == 0, r.stderr
    assert "AVX2: a dispatch target" in r.stdout  # and what the build never probed is said so (the probe also
    # covers the glibc-hwcaps levels, x86-64-v4's AVX-512 features included: AVX512_ICL is above them)
    assert "AVX512_ICL: not supported\n  reason  : not probed: not part of the request" in r.stdout
    assert cache.find(b.dir) == before and len(before) == 1
    empty = tmp_path / "other"
    b.meson_cmd("setup", str(empty))
    for f in cache.find(empty):
        f.unlink()
    r = cli("explain", "avx2", "--build-dir", str(empty))
    assert r.returncode == 1 and r.stderr.startswith(f"ccopt-meson: error: no ccopt cache file under '{empty}'")


SECOND_CALL = """project('second-call', 'c', meson_version: '>=1.0.1')
ccopt = subproject('ccopt-meson')
ccopt_dep = dependency('ccopt')
libs = []
foreach call : [['a.dispatch.c: baseline avx2'], [PREFIX 'b.dispatch.c: baseline sse41']]
  r = run_command(ccopt.get_variable('targets'), call, check: false)
  assert(r.returncode() == 0, r.stderr().strip())
  foreach line : r.stdout().strip().split('\\n')
    t = line.split('\\t')
    libs += static_library(t[0], t[2].split(), c_args: t[1].split(), dependencies: ccopt_dep)
  endforeach
endforeach
"""


def test_a_second_targets_call_without_a_prefix_is_named(tmp_path: Path) -> None:
    """Meson would refuse the second call's libraries ('a target of that name already exists'): the
    helper names the call and the way out; with '--prefix' both calls build, configure after configure."""
    src = tmp_path / "second"
    src.mkdir()
    for name in ("a", "b"):
        (src / f"{name}.dispatch.c").write_text(f"int CCOPT_FN({name})(void) {{ return 1; }}\n")
    (src / "meson.build").write_text(SECOND_CALL.replace("PREFIX ", ""))
    copy_repo(src / "subprojects" / "ccopt-meson")
    b = Build(tmp_path, src)
    r = subprocess.run([*b.meson, "setup", str(b.dir)], cwd=src, env=b.env, capture_output=True, text=True)
    assert r.returncode != 0
    assert ("ccopt-meson: error: a second 'targets' call in " in r.stdout
            and "('b.dispatch.c' after 'a.dispatch.c') with prefix 'ccopt' would make libraries of the same names; "
                "pass '--prefix', 'NAME' to one of the calls" in r.stdout), r.stdout[-2000:]
    (src / "meson.build").write_text(SECOND_CALL.replace("PREFIX ", "'--prefix', 'other', "))
    b.meson_cmd("setup", "--wipe", str(b.dir))
    b.meson_cmd("setup", "--reconfigure", str(b.dir))
    b.ninja()


def test_c_and_cpp_probed_and_an_explicit_reconfigure_keeps_both(tmp_path: Path) -> None:
    b = Build(tmp_path, project(tmp_path, "dot"))
    b.meson_cmd("setup", "-Dccopt-meson:languages=c,cpp", str(b.dir))
    probes = [line for line in b.log.read_text().splitlines() if PROBE.search(line)]
    assert any("-x c++" in line for line in probes) and any("-x c " in line + " " for line in probes)
    b.meson_cmd("setup", "--reconfigure", str(b.dir))
    sub = b.dir / "subprojects" / "ccopt-meson"
    assert (sub / "ccopt-features.json").is_file() and (sub / "ccopt-features-cpp.json").is_file()
    b.ninja()


def test_debug_build_gets_no_maxopt(tmp_path: Path) -> None:
    b = Build(tmp_path, project(tmp_path, "dot"))
    b.meson_cmd("setup", "-Dbuildtype=debug", str(b.dir))
    b.ninja()
    dispatch_compiles = [line for line in b.log.read_text().splitlines() if "-DCCOPT_TARGET=" in line]
    assert dispatch_compiles and not any(" -O3" in line for line in dispatch_compiles)


NEW_FEATURE = {"name": "ZZ_NEW", "interest": 9000, "implies": ["SSE2"], "headers": ["emmintrin.h"],
               "macros": ["__SSE2__"], "flags": {"gnu": ["-msse2"]},
               "runtime": {"*": {"cpuid": [[1, 0, "edx", 26]], "xcr0": 0, "cpuinfo": ["sse2"]}}}
NEW_PROJECT = {
    "meson.build": """project('new-feature', 'c', meson_version: '>=1.0.1')
ccopt = subproject('ccopt-meson')
ccopt_dep = dependency('ccopt')
r = run_command(ccopt.get_variable('targets'), files('k.dispatch.c'), check: true)
libs = []
foreach line : r.stdout().strip().split('\\n')
  t = line.split('\\t')  # library name, compile args, sources
  libs += static_library(t[0], t[2].split(), c_args: t[1].split(), dependencies: ccopt_dep)
endforeach
test('new', executable('new', 'main.c', link_with: libs, dependencies: ccopt_dep))
""",
    "k.dispatch.c": "/*@targets baseline zz_new */\n#include \"ccopt_dispatch.h\"\n"
                    "int CCOPT_FN(k)(void) { return 1; }\n",
    "main.c": """#include <stdio.h>
#include <string.h>
#include "k.dispatch.h"
CCOPT_DISPATCH_DECLARE(k_dispatch, int, k, (void))
CCOPT_DISPATCH_DEFINE(k_dispatch, int, k, (void), ())
int main(void)
{
    printf("%s %d\\n", CCOPT_DISPATCH_TARGET_NAME(k_dispatch, k), CCOPT_CPU_HAVE(ZZ_NEW));
    return k() == 1 && strcmp(CCOPT_DISPATCH_TARGET_NAME(k_dispatch, k), "ZZ_NEW") == 0
        && CCOPT_CPU_HAVE(ZZ_NEW) ? 0 : 1;
}
""",
}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the added feature is an x86_64 one")
def test_a_feature_added_to_the_tables_is_detected_with_no_manual_step(tmp_path: Path) -> None:
    """Adding a feature is only data: a table entry and a probe; the run-time table is generated."""
    import json

    src = tmp_path / "new"
    written(src, NEW_PROJECT)
    repo = src / "subprojects" / "ccopt-meson"
    table = repo / "ccopt_meson" / "data" / "features" / "x86.json"
    raw = json.loads(table.read_text())
    raw["features"].append(NEW_FEATURE)
    table.write_text(json.dumps(raw))
    (repo / "ccopt_meson" / "data" / "probes" / "x86" / "zz_new.c").write_text(
        "#include <emmintrin.h>\nint ccopt_probe_zz_new(const int *p);\n"
        "int ccopt_probe_zz_new(const int *p) { return _mm_cvtsi128_si32(_mm_loadu_si128((const __m128i *)p)); }\n")
    b = Build(tmp_path, src)
    # min: ZZ_NEW's macro is __SSE2__, so the default baseline (detect) would hold it and build no version of it
    b.meson_cmd("setup", "-Dccopt-meson:cpu-baseline=min", str(b.dir))
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert "ZZ_NEW 1" in out


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the project's own feature (ADX) is an x86 one")
def test_project_features_file_end_to_end(tmp_path: Path) -> None:
    """features-file: the project's ADX (its probe, its run-time bit) and its #carry / #simd_test groups."""
    b = Build(tmp_path, project(tmp_path, "project_features"))
    b.meson_cmd("setup", str(b.dir))
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    has_adx = " adx" in Path("/proc/cpuinfo").read_text()
    assert ("(ADX 1)" if has_adx else "(ADX 0)") in out
    # the file is a regeneration dependency, and part of the cache key
    features = b.src / "features" / "ccopt.json"
    features.write_text(features.read_text().replace('"interest": 2000', '"interest": 2001'))
    assert "Regenerating build files" in b.ninja()
    assert b.probes() > 0


FINE_PICKS = [("", "AVX512VL__AVX512VBMI"), ("AVX512VBMI", "VPCLMULQDQ__AVX512VL"),
              ("AVX512VBMI VPCLMULQDQ", "AVX2"), ("AVX512VL AVX2", "AVX2_ISA"), ("AVX512VL F16C", "AVX2_ISA"),
              ("AVX512VL AVX2_ISA", "PCLMULQDQ"), ("AVX512VL AVX PCLMULQDQ", "SSE41"),
              ("SSE41 PCLMULQDQ", "BASELINE")]
FINE_MODELS = [("Haswell", "AVX2"), ("Haswell,-f16c", "AVX2_ISA"), ("SandyBridge", "PCLMULQDQ"),
               ("Nehalem", "SSE41"), ("qemu64", "BASELINE")]


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the kernels are x86 ones")
def test_fine_targets_and_groups_build_and_dispatch(tmp_path: Path) -> None:
    """@targets baseline (avx512vl avx512vbmi) (vpclmulqdq avx512vl) pclmulqdq avx2 avx2_isa sse41: each
    version runs its own instructions, so a wrong pick dies with SIGILL; masks and CPU models choose."""
    b = Build(tmp_path, project(tmp_path, "fine_targets"))
    b.meson_cmd("setup", str(b.dir))
    assert "picked" in b.meson_cmd("test", "-C", str(b.dir), "-v")
    exe = str(b.dir / "fine")
    env = clean_env()
    flags = set(Path("/proc/cpuinfo").read_text().split())
    if {"avx512vl", "avx512vbmi", "vpclmulqdq", "avx512bw"} <= flags:
        for masked, picked in FINE_PICKS:
            masks = {**env, "CCOPT_DISABLE_CPU_FEATURES": masked}
            out = subprocess.run([exe], capture_output=True, text=True, env=masks)
            assert (out.returncode, out.stdout.split()) == (0, ["picked", picked]), masked
    qemu = need("qemu-x86_64-static")
    for cpu, picked in FINE_MODELS:
        out = subprocess.run([qemu, "-cpu", cpu, exe], capture_output=True, text=True, env=env)
        assert (out.returncode, out.stdout.split()) == (0, ["picked", picked]), cpu


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the targets are x86 ones")
def test_numpy_protocol_without_ccopts_runtime(tmp_path: Path) -> None:
    """header-style=numpy, macro-prefix=NPY_, runtime=false: numpy's macros and header, no ccopt library, and
    the libraries linked in the order 'targets' prints them give every version the baseline's C++ inline copy."""
    b = Build(tmp_path, project(tmp_path, "numpy_protocol"))
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    assert not list(b.dir.rglob("libccopt_cpu.a")) and not list(b.dir.rglob("ccopt-cpu-info*"))
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert "AVX2 version: BASELINE" in out and "dispatch targets: AVX2 SSE41" in out
    commands = b.dir / "compile_commands.json"
    avx2 = next(line for line in commands.read_text().splitlines() if "NPY_MTARGETS_CURRENT=AVX2" in line)
    assert "-DNPY_HAVE_AVX2" in avx2 and "CCOPT_" not in avx2 and "-include" not in avx2


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the names are x86 ones")
def test_a_parents_own_options_take_effect_after_the_first_configure(tmp_path: Path) -> None:
    """configure_cmd/targets_cmd: the parent runs the helper with its own -Dcpu-baseline, so 'meson configure'
    on the parent changes the request (a subproject option would keep its first value)."""
    b = Build(tmp_path, project(tmp_path, "parent_options"))
    out = b.meson_cmd("setup", str(b.dir), "-Dcpu-baseline=sse41")
    assert re.search(r"parent baseline: SSE SSE2 SSE3 SSSE3 SSE41\n", out), out[-2000:]
    assert "parent library: ccopt_BASELINE" in out and "parent library: ccopt_AVX2" in out
    out = b.meson_cmd("configure", str(b.dir), "-Dcpu-baseline=avx2")
    b.ninja("build.ninja")
    log = (b.dir / "meson-logs" / "meson-log.txt").read_text()
    assert re.search(r"parent baseline: [A-Z0-9_ ]* AVX2\b", log)
    assert "parent library: ccopt_AVX2" not in log.rsplit("parent baseline:", 1)[1]  # AVX2 is the baseline now


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the names are x86 ones")
def test_a_parents_baseline_reaches_every_object_and_the_runtime(tmp_path: Path) -> None:
    """Following 'A parent's own options' with cpu-baseline=avx2, the BASELINE library got only SSE..SSE3 flags,
    the AVX512F version lacked -DCCOPT_HAVE_AVX2, the run-time kept the subproject's baseline and a baseline of
    none was impossible: the parent now builds its dependency and the run-time with its own baseline (the
    run-time with its macros, not its flags)."""
    import json

    b = Build(tmp_path, project(tmp_path, "parent_options"))
    b.meson_cmd("setup", str(b.dir), "-Dcpu-baseline=avx2")
    b.ninja()
    commands = json.loads((b.dir / "compile_commands.json").read_text())
    ours = [c["command"] for c in commands if not c["output"].startswith("subprojects")]
    assert len(ours) >= 4  # the run-time, the two versions, main
    for command in ours:  # the run-time gets the baseline's macros only: its before-main check runs on any CPU
        assert "-DCCOPT_HAVE_AVX2=1" in command and ("-mavx2" in command) != ("ccopt_cpu.c" in command), command
    avx512 = next(c for c in ours if "CCOPT_TARGET=AVX512F" in c)
    assert "-mavx512f" in avx512
    flags = set(Path("/proc/cpuinfo").read_text().split())
    if "avx2" in flags:
        run = subprocess.run([str(b.dir / "main")], capture_output=True, text=True,
                             env=clean_env(CCOPT_DISABLE_CPU_FEATURES="AVX2"))
        assert run.returncode == 0 and "AVX2" in run.stdout.split("'")[1], run.stdout + run.stderr
        assert "AVX2 is in the baseline this build requires and cannot be disabled" in run.stderr  # the run-time's
    b.meson_cmd("configure", str(b.dir), "-Dcpu-baseline=none")
    b.ninja()
    commands = json.loads((b.dir / "compile_commands.json").read_text())
    plain = [c["command"] for c in commands if not c["output"].startswith("subprojects")
             and ("-DCCOPT_TARGET=" not in c["command"] or "-DCCOPT_TARGET=BASELINE" in c["command"])]
    assert len(plain) >= 3  # the run-time, the baseline version, main
    for command in plain:
        assert "-msse" not in command and "CCOPT_HAVE_" not in command, command


def test_a_features_file_that_is_a_fifo_is_one_error_line_not_a_hang(tmp_path: Path) -> None:
    """Meson's own fs.read of the features file ran before the helper's bounded read: a FIFO hung
    'meson setup'. The helper reads it first and refuses it in one line."""
    src = written(tmp_path / "fifo", {"meson.build": "project('fifo', 'c')\n"
                                      "subproject('ccopt-meson', default_options: ['features-file=f.json'])\n"})
    os.mkfifo(src / "f.json")
    b = Build(tmp_path, src)
    r = subprocess.run([*b.meson, "setup", str(b.dir)], cwd=src, env=b.env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode != 0
    assert "ccopt-meson: error: features file" in r.stdout and "is a FIFO, not a regular file" in r.stdout, \
        r.stdout[-2000:]


# Features each a level above the one before (the built-in rows SSE3 .. BMI2 in both projects), so masking a name
# picks the one below it: tests/projects/namespace names them like fixed identifiers of the run-time (its macros,
# knobs and include guards), tests/projects/libc_names like macros of the C library its sources include (EOF is
# (-1), NULL ((void *)0)) and like ccopt's own dispatch macros.
LEVELS = {
    "namespace": ["NRECIPES", "NAMES_TEXT_MAX", "BASELINE_OPTION", "MACHINE", "MAX_FEATURE", "H", "API", "TABLE_H",
                  "TABLE_DATA", "CHECK_BASELINE"],
    "libc_names": ["EOF", "NULL", "BUFSIZ", "SIZE_MAX", "INT_MAX", "ERANGE", "EXIT_FAILURE", "NRECIPES",
                   "CCOPT_TARGET", "CCOPT_FN"],
}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the features are x86 ones")
@pytest.mark.parametrize("name", sorted(LEVELS))
def test_feature_names_spelled_like_c_library_macros_or_the_run_times_identifiers_compile_and_are_picked(
        tmp_path: Path, name: str) -> None:
    """Every generated file (the run-time table, the dispatch and config headers, the versions' args,
    ccopt-cpu-info) compiles with them, and on a CPU that has a feature (here, or one qemu models) its version is
    the one picked; the run-time, the generated header and every dispatch macro agree on each name."""
    levels = LEVELS[name]
    b = Build(tmp_path, project(tmp_path, name))
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    info = subprocess.run([str(b.dir / "subprojects" / "ccopt-meson" / "ccopt-cpu-info"), "--json"],
                          capture_output=True, text=True, check=True, env=clean_env())
    assert list(json.loads(info.stdout)["features"]) == ["SSE2", *levels]
    exe = str(b.dir / "level")
    flags = set(Path("/proc/cpuinfo").read_text().split())
    if {"avx2", "bmi2", "fma", "f16c"} <= flags:
        for level, above in zip(levels, [*levels[1:], ""]):
            out = subprocess.run([exe], capture_output=True, text=True,
                                 env=clean_env(CCOPT_DISABLE_CPU_FEATURES=above))
            assert (out.returncode, out.stdout.split()[:2]) == (0, ["picked", level]), out.stdout + out.stderr
            assert f"{level}=1" in out.stdout and (not above or f"{above}=0" in out.stdout), out.stdout
    qemu = need("qemu-x86_64-static")
    for cpu, picked in [("Haswell", levels[-1]), ("SandyBridge", levels[5]), ("qemu64", levels[0])]:
        out = subprocess.run([qemu, "-cpu", cpu, exe], capture_output=True, text=True, env=clean_env())
        assert (out.returncode, out.stdout.split()[:2]) == (0, ["picked", picked]), (cpu, out.stdout, out.stderr)


# A consumer's build modes: (compiler, meson setup options, what the compile log shows the mode took effect)
BUILD_MODES = {
    "unity": ("gcc", ["--unity", "on", "-Dc_std=c99", "-Dwerror=true"], "-unity0.c"),
    "gcc-lto": ("gcc", ["-Db_lto=true", "-Dbuildtype=release"], "-flto"),
    "clang-lto": ("clang", ["-Db_lto=true", "-Dbuildtype=release"], "-flto"),
    "pch": ("gcc", ["-Db_pch=true"], "fine_pch.h.gch"),
    "gcc-werror": ("gcc", ["-Dwerror=true", "-Dwarning_level=3", "-Dbuildtype=release"], "-Werror"),
    "clang-werror": ("clang", ["-Dwerror=true", "-Dwarning_level=3", "-Dbuildtype=release"], "-Werror"),
}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the kernels are x86 ones")
@pytest.mark.parametrize("mode", sorted(BUILD_MODES))
def test_consumer_build_modes_build_and_each_cpu_runs_its_own_version(tmp_path: Path, mode: str) -> None:
    """--unity on (ccopt-cpu-info's two run-time sources in one file, under -std=c99), LTO (versions of
    several ISAs in one link), a precompiled header and -Werror with every warning build
    tests/projects/fine_targets (AVX-512 kernels among them), and the program still picks per CPU: a mode that
    mixed one version's instructions into another's dies with SIGILL under qemu."""
    compiler, options, shown = BUILD_MODES[mode]
    b = Build(tmp_path, project(tmp_path, "fine_targets"), compiler=compiler)
    b.meson_cmd("setup", str(b.dir), *options)
    b.ninja()
    assert shown in b.log.read_text(), f"{mode}: no {shown!r} in the compile log"
    out = subprocess.run([str(b.dir / "fine")], capture_output=True, text=True, env=clean_env())
    assert out.returncode == 0 and out.stdout.startswith("picked "), out.stdout + out.stderr
    info = subprocess.run([str(b.dir / "subprojects" / "ccopt-meson" / "ccopt-cpu-info"), "--json"],
                          capture_output=True, text=True, env=clean_env())
    assert info.returncode == 0 and json.loads(info.stdout)["arch"] == "x86_64", info.stderr
    qemu = need("qemu-x86_64-static")
    for cpu, picked in [("Haswell", "AVX2"), ("qemu64", "BASELINE")]:
        out = subprocess.run([qemu, "-cpu", cpu, str(b.dir / "fine")], capture_output=True, text=True,
                             env=clean_env())
        assert (out.returncode, out.stdout.split()) == (0, ["picked", picked]), (cpu, out.stdout, out.stderr)


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the features are x86 ones")
@pytest.mark.parametrize("how", ["c_args", "parent default_options"])
def test_the_below_baseline_line_names_its_cause_and_its_cure_runs(tmp_path: Path, how: str) -> None:
    """On a CPU below the baseline the line says what set it (-march in c_args, or cpu-baseline from a
    parent's default_options), and the cure it offers, applied as written, gives a build that runs there.
    With -Dc_args=-march=haswell it advised -Dccopt-meson:cpu-baseline=detect, the setting already."""
    qemu = need("qemu-x86_64-static")
    src = project(tmp_path, "namespace")
    options: list[str] = []
    if how == "c_args":
        options, fix = ["-Dc_args=-march=haswell"], ["-Dc_args="]
        cause, cure = "set by -march=haswell in c_args", "build it with a lower CPU (or none) in c_args"
    else:
        build_file = src / "meson.build"
        build_file.write_text(build_file.read_text().replace("'features-file=features.json'",
                                                             "'features-file=features.json', 'cpu-baseline=table_h'"))
        cause, cure = "set by cpu-baseline=table_h", "build it with -Dccopt-meson:cpu-baseline=detect"
        fix = ["-Dccopt-meson:cpu-baseline=detect"]
    b = Build(tmp_path, src)
    b.meson_cmd("setup", str(b.dir), *options)
    b.ninja()
    # c_args reach the run-time too: a CPU far below -march would die in the check itself; this one lacks
    # only FMA (TABLE_H, and what implies it), which no code of the check uses
    low = subprocess.run([qemu, "-cpu", "Haswell,-fma", str(b.dir / "level")], capture_output=True, text=True,
                         env=clean_env())
    line = "\n".join(x for x in low.stderr.splitlines() if not x.startswith("qemu"))  # qemu's own warnings
    assert low.returncode == 1 and low.stdout == "" and len(line.splitlines()) == 1, (low.stdout, line)
    assert line.startswith("ccopt: this CPU lacks TABLE_H") and line.endswith(
        f", which this build requires (its CPU baseline, {cause}); to run here, {cure}"), line
    b.meson_cmd("configure", str(b.dir), *fix)
    b.ninja()
    ran = subprocess.run([qemu, "-cpu", "Haswell,-fma", str(b.dir / "level")], capture_output=True, text=True,
                         env=clean_env())
    assert ran.returncode == 0 and ran.stdout.split()[:2] == ["picked", "API"], ran.stdout + ran.stderr
