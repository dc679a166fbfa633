"""Part 3: what ccopt-meson adds to a Meson run of examples/dot, against the same sources without it
and against Meson's unstable-simd module."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from bench.projects import make_ccopt_project
from bench.timing import ROOT, Bench, BenchError, Stat, run

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


