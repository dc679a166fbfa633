"""The consumer side in real Meson builds: what an edit regenerates and recompiles, the documentation's snippets
and wrap verbatim in a fresh project, summary() lines, object names, a test run per compiled target."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from ccopt_meson import host

from .conftest import ROOT, need, need_module
from .snippets import snippet
from .test_meson import Build, copy_repo, project, written

pytestmark = pytest.mark.slow
REGEN = "Regenerating build files"


def x86_host() -> None:
    if host.machine_name() != "x86_64":
        pytest.skip("the target names below are x86_64 ones")


def version_compiles(b: Build) -> list[str]:
    """Compile lines of dispatch versions in the last run, as 'SOURCE TARGET'."""
    out = []
    for line in b.log.read_text().splitlines():
        target = re.search(r"-DCCOPT_TARGET=(\w+)", line)
        source = re.search(r" -c \S*?(\w+)\.dispatch\.c$", line)
        if target and source:
            out.append(f"{source.group(1)} {target.group(1)}")
    return out


def test_meson_build_style_kernel_edit_recompiles_only_that_kernel(tmp_path: Path) -> None:
    """examples/dot lists its targets in meson.build: a kernel edit is not a Meson input."""
    x86_host()
    b = Build(tmp_path, project(tmp_path, "dot"))
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    compiled = {c.split()[1] for c in version_compiles(b)}
    poly_versions = sorted(c for c in version_compiles(b) if c.startswith("poly "))
    assert len(poly_versions) >= 2

    with open(b.src / "poly.dispatch.c", "a") as fh:
        fh.write("/* a kernel author's edit */\n")
    out = b.ninja()
    assert REGEN not in out and b.probes() == 0
    assert sorted(version_compiles(b)) == poly_versions  # that kernel's versions, nothing else

    build_file = b.src / "meson.build"
    build_file.write_text(build_file.read_text().replace("'poly.dispatch.c: $maxopt baseline",
                                                         "'poly.dispatch.c: $maxopt baseline avx512_skx"))
    out = b.ninja()
    assert out.count(REGEN) == 1 and "poly AVX512_SKX" in version_compiles(b)
    assert "no work to do" in b.ninja("-n")

    # the suite once per compiled version (the targets lines' last field), skipped where this CPU lacks it
    tests = b.meson_cmd("test", "-C", str(b.dir))
    assert re.search(r"dot on BASELINE\s+OK", tests) and re.search(r"dot on X86_V2\s+(OK|SKIP)", tests)
    assert sorted(re.findall(r"dot on (\w+)", tests)) == sorted(compiled | {"AVX512_SKX"})


def test_targets_statement_style_and_what_each_edit_costs(tmp_path: Path) -> None:
    """tests/projects/consumer: @targets in one source, lists in meson.build for two, in src/, no includes."""
    x86_host()
    b = Build(tmp_path, project(tmp_path, "consumer"))
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert re.search(r"stated: (\w+) \(picked \1\)", out) and re.search(r"listed: (\w+) \(picked \1\)", out)
    assert "targets: AVX2 SSE42 BASELINE | AVX2 SSE41 BASELINE | FMA3__AVX2 SSE42" in out

    commands = json.loads((b.dir / "compile_commands.json").read_text())
    objects = [c["output"] for c in commands if "dispatch" in c["file"]]
    assert objects and not [o for o in objects if str(tmp_path) in o or "/" in o.split(".p/", 1)[1]]
    # one library per set of args: AVX2 holds both sources that have it
    assert sorted(o for o in objects if o.startswith("libccopt_AVX2.")) == [
        "libccopt_AVX2.a.p/src_listed.dispatch.c.o", "libccopt_AVX2.a.p/src_stated.dispatch.c.o"]

    with open(b.src / "src" / "listed.dispatch.c", "a") as fh:  # listed in meson.build: no regeneration
        fh.write("/* edit */\n")
    out = b.ninja()
    assert REGEN not in out and sorted(version_compiles(b)) == ["listed AVX2", "listed BASELINE", "listed SSE41"]

    stated = b.src / "src" / "stated.dispatch.c"
    with open(stated, "a") as fh:  # @targets in the source: the source is a Meson input (the trade-off)
        fh.write("/* edit */\n")
    assert REGEN in b.ninja()

    stated.write_text(stated.read_text().replace("sse42 avx2", "sse42 avx2 x86_v3"))
    out = b.ninja()
    assert REGEN in out and "stated X86_V3" in version_compiles(b)


def test_summary_states_cache_per_language_and_what_raised_the_baseline(tmp_path: Path) -> None:
    b = Build(tmp_path, project(tmp_path, "dot"))
    out = b.meson_cmd("setup", "-Dccopt-meson:languages=c,cpp", "-Dc_args=-march=native", str(b.dir))
    assert re.search(r"Requested\s*: 'detect' \+ what -march=native enables", out)
    assert "CPU features (ccopt, cpp)" in out and re.search(r"From cache\s*: no \(\d+ compiler processes\)", out)
    # a new dispatch request on the same compiler: a new key, but no compiler runs, and summary says so
    b.meson_cmd("configure", "-Dccopt-meson:cpu-dispatch=max -avx512f", str(b.dir))
    out = b.ninja()
    assert REGEN in out and b.probes() == 0
    assert len(re.findall(r"From cache\s*: yes", out)) == 2  # C and C++


def git_repo(tmp_path: Path) -> Path:
    """A git repository of this tree, as the wrap's url would serve it."""
    git = need("git")
    repo = tmp_path / "upstream"
    copy_repo(repo)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "snapshot"]):
        subprocess.run([git, *cmd], cwd=repo, env=env, check=True, capture_output=True)
    return repo


def test_readme_snippets_build_verbatim_in_a_fresh_project_through_the_wrap(tmp_path: Path) -> None:
    """The tutorial's snippets (the README repeats them): the wrap, meson.build, kernel and caller, run with
    the commands it gives; then the kernel's list moved into the source, as write-a-kernel shows."""
    wrap = snippet("consumer/wrap")
    src = tmp_path / "fresh"
    (src / "subprojects").mkdir(parents=True)
    url = re.search(r"^url = (\S+)$", wrap, re.M)
    assert url and "revision = head" in wrap
    (src / "subprojects" / "ccopt-meson.wrap").write_text(wrap.replace(url.group(1), (git_repo(tmp_path)).as_uri()))
    (src / "meson.build").write_text(snippet("consumer/meson.build"))
    for name in ("dot.dispatch.c", "main.c"):
        source = snippet(f"consumer/{name}")
        assert source.startswith(f"/* {name}")
        (src / name).write_text(source)

    b = Build(tmp_path, src)
    for line in snippet("consumer/run").splitlines():  # meson setup build; meson test -C build
        argv = line.split()
        assert argv[0] == "meson"
        b.run(*b.meson, *argv[1:])
    assert (src / "subprojects" / "ccopt-meson" / "meson.build").is_file()  # fetched by the wrap
    log = (src / "build" / "meson-logs" / "testlog.txt").read_text()
    assert re.search(r"dot = 4950 \((\w+)\)", log)  # and every test passed: b.run checks the exit code
    # a release build (optimization 3: $maxopt adds nothing to it), and each AVX2 version runs the FMA loop
    commands = json.loads((src / "build" / "compile_commands.json").read_text())
    assert all("-O3" in c["command"] for c in commands if c["file"].endswith("dot.dispatch.c"))
    if host.machine_name() == "x86_64":
        assert fma_versions(src / "build" / "app", "dot") == {"FMA3__AVX2": True, "X86_V4": True}

    # the list in the source (@targets) instead of meson.build, the file itself passed to targets
    kernel = src / "dot.dispatch.c"
    kernel.write_text(snippet("kernel/targets-in-source") + kernel.read_text())
    build_file = src / "meson.build"
    call = re.compile(r"^r = run_command\(ccopt\.get_variable\('targets'\),\n.*?check: false\)\n", re.M | re.S)
    assert call.search(build_file.read_text())
    build_file.write_text(call.sub(lambda _: snippet("kernel/targets-files"), build_file.read_text()))
    out = b.run(*b.meson, "test", "-C", "build")
    versions = set(re.findall(r"app on (\w+)", out))
    expected = {"x86_64": {"BASELINE", "FMA3__AVX2", "X86_V4"}, "aarch64": {"BASELINE"}}.get(host.machine_name())
    assert expected is None or versions == expected, versions


def fma_versions(binary: Path, name: str) -> dict[str, bool]:
    """Each AVX2-or-higher version of ``name`` in the binary: whether its code has an FMA instruction."""
    text = subprocess.run([need("objdump"), "-d", "--no-show-raw-insn", str(binary)], capture_output=True,
                          text=True, check=True).stdout
    bodies = re.findall(rf"^[0-9a-f]+ <{name}_(\w+)>:\n(.*?)(?:\n\n|\Z)", text, re.S | re.M)
    return {target: "vfmadd" in body for target, body in bodies if re.search(r"AVX2|X86_V[34]|AVX512", target)}


def test_readme_example_below_its_baseline_says_so_before_main(tmp_path: Path) -> None:
    """The README's project built with cpu-baseline=x86_v3: on a CPU without AVX2 (qemu's Nehalem) the
    executable stops before main with one line naming what is missing and the option, never SIGILL; on
    Haswell it runs; ccopt-cpu-info still reports instead of stopping."""
    x86_host()
    qemu = need("qemu-x86_64-static")
    src = tmp_path / "readme"
    files = {"meson.build": snippet("consumer/meson.build")}
    files.update({name: snippet(f"consumer/{name}") for name in ("dot.dispatch.c", "main.c")})
    b = Build(tmp_path, written(src, files))
    b.meson_cmd("setup", "-Dccopt-meson:cpu-baseline=x86_v3", str(b.dir))
    b.ninja()
    app = str(b.dir / "app")
    low = subprocess.run([qemu, "-cpu", "Nehalem", app], capture_output=True, text=True, timeout=60)
    assert low.returncode == 1 and low.stdout == "", (low.returncode, low.stderr)  # not 132, not -4 (SIGILL)
    lines = [line for line in low.stderr.splitlines() if not line.startswith("qemu")]
    assert len(lines) == 1 and re.search(r"^ccopt: this CPU lacks .*\bAVX2\b.*\bX86_V3\b", lines[0]), lines
    assert "-Dccopt-meson:cpu-baseline=" in lines[0]
    high = subprocess.run([qemu, "-cpu", "Haswell", app], capture_output=True, text=True, timeout=60)
    assert high.returncode == 0 and "dot = 4950" in high.stdout, high.stderr
    info = subprocess.run([qemu, "-cpu", "Nehalem", str(b.dir / "subprojects" / "ccopt-meson" / "ccopt-cpu-info"),
                           "--json"], capture_output=True, text=True, timeout=60)
    assert info.returncode == 0 and "AVX2" in json.loads(info.stdout)["baseline_missing"], info.stderr


def test_a_library_keeps_its_own_name_for_a_dispatched_function(tmp_path: Path) -> None:
    """CCOPT_DISPATCH_DEFINE_AS: the library's public xxh3_update picks among accumulate's versions; no
    function takes the kernel's bare name, and the trace names the public function."""
    b = Build(tmp_path, project(tmp_path, "public_name"))
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    out = b.meson_cmd("test", "-C", str(b.dir), "-v")
    assert re.search(r"^Fail:\s+0", out, re.M) and "xxh3_update: ok (BASELINE)" in out and "WRONG" not in out
    nm = subprocess.run([need("nm"), "--defined-only", str(b.dir / "main")], capture_output=True, text=True,
                        check=True).stdout
    defined = {line.split()[-1] for line in nm.splitlines() if line.strip()}
    assert {"xxh3_update", "accumulate_BASELINE"} <= defined and "accumulate" not in defined
    traced = subprocess.run([str(b.dir / "main")], capture_output=True, text=True, env={**b.env, "CCOPT_TRACE": "1"})
    assert traced.returncode == 0 and re.match(r"ccopt: xxh3_update: \w+", traced.stderr), traced.stderr


WERROR_KERNEL = """/* k.dispatch.c: the AVX-512 intrinsics GCC bug 105593 names (_mm512_undefined_* merge operands) */
#include <stddef.h>

long long CCOPT_FN(k)(const int *p, const short *q, size_t n)
{
    long long sum = 0;
    size_t i = 0;
#ifdef CCOPT_HAVE_AVX512_SKX
    __m512i acc = _mm512_setzero_si512();
    for (; i + 16 <= n; i += 16) {
        __m512i w = _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)(q + i)));
        acc = _mm512_add_epi32(acc, _mm512_andnot_si512(_mm512_loadu_si512(p + i), w));
    }
    sum = _mm512_reduce_add_epi32(acc);
#endif
    for (; i < n; i++)
        sum += ~p[i] & q[i];
    return sum;
}
"""


@pytest.mark.parametrize("buildtype", ["debug", "release"])
def test_avx512_kernels_build_with_werror(tmp_path: Path, buildtype: str) -> None:
    """werror=true and warning_level=3 with every AVX-512 target: the intrinsics headers the subproject includes
    warn nothing here (docs/how-to/troubleshooting.md: GCC bug 105593, seen with gcc 12.1, fixed in 12.3)."""
    x86_host()
    src = written(tmp_path / "werror", {
        "meson.build": "project('werror', 'c', meson_version: '>=1.0.1')\n"
                       "ccopt = subproject('ccopt-meson')\nccopt_dep = dependency('ccopt')\n"
                       "r = run_command(ccopt.get_variable('targets'), 'k.dispatch.c: baseline avx2 avx512f "
                       "avx512_skx avx512_clx avx512_cnl avx512_icl avx512_spr x86_v4', check: true)\n"
                       "foreach line : r.stdout().strip().split('\\n')\n  t = line.split('\\t')\n"
                       "  static_library(t[0], t[2].split(), c_args: t[1].split(), dependencies: ccopt_dep)\n"
                       "endforeach\n",
        "k.dispatch.c": WERROR_KERNEL})
    b = Build(tmp_path, src)
    b.meson_cmd("setup", str(b.dir), "-Dwerror=true", "-Dwarning_level=3", f"-Dbuildtype={buildtype}")
    out = b.ninja()
    assert "warning:" not in out


def test_the_audit_runs_from_a_wrap_only_project_s_root(tmp_path: Path) -> None:
    """docs/how-to/isa-audit.md's shell command, from the project's root with the subproject's own copy: it
    audits with the decoders of the Python that runs it, and a Python with nothing installed gets the pip line."""
    src = project(tmp_path, "isa_audit")
    b = Build(tmp_path, src)
    b.meson_cmd("setup", "build")  # in the project's root, as the page's command expects
    b.run(need("ninja"), "-C", "build")
    page = (ROOT / "docs" / "how-to" / "isa-audit.md").read_text().replace("\n", " ")
    command = "python3 subprojects/ccopt-meson/tools/ccopt-meson-audit.py builddir"
    assert f"`{command}`" in page
    argv = command.replace("builddir", "build").split()[1:]
    env = {k: v for k, v in b.env.items() if k != "PYTHONPATH"}  # nothing of this checkout on the path
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)  # no package at all: neither ccopt-meson nor the decoders
    r = subprocess.run([str(bare / "bin" / "python3"), *argv], cwd=src, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 77, (r.stdout, r.stderr)  # a Meson test's SKIP; the line goes to the test's log
    assert re.fullmatch(r"ccopt-meson: skipped: .*python3 -m pip install '[\w-]+==[\w.]+'.*\n", r.stdout), r.stdout
    need_module("elftools", "the audit extra")
    need_module("iced_x86", "the audit extra")
    r = subprocess.run([sys.executable, *argv], cwd=src, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.endswith(" with findings\n") and "0 with findings" in r.stdout, r.stderr


@pytest.mark.parametrize(("cpu", "picked"), [("Haswell", "SWITCHES"), ("Haswell,-fma", "BASELINE"),
                                             ("Haswell,-bmi2", "BASELINE")])
def test_a_march_row_never_runs_on_a_cpu_its_flags_exceed(tmp_path: Path, cpu: str, picked: str) -> None:
    """A row like AVX2 with -march=haswell kept AVX2's one CPUID bit: under Haswell,-fma the dispatcher picked it
    and the program died with SIGILL.  The compiler says -march=haswell enables FMA, BMI, ...: the row is not
    built (its reason is printed), and a CPU without FMA runs a lower version; SWITCHES, the same sets named with
    their own switches, has a test that checks them."""
    x86_host()
    qemu = need("qemu-x86_64-static")
    b = Build(tmp_path, project(tmp_path, "march_row"))
    out = b.meson_cmd("setup", str(b.dir))
    assert "WARNING: HASWELL is not built: HASWELL's flags -march=haswell enable " in out
    assert "HASWELL" not in (b.dir / "fma.dispatch.h").read_text()
    b.ninja()
    run = subprocess.run([qemu, "-cpu", cpu, str(b.dir / "main")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.split() == [picked, "127"], (run.returncode, run.stderr, out[-2000:])
