"""Generated consumers: N dispatch sources, four ways of building them.

Source ``i`` gets the target list of numpy 2.2.6's ``multi_targets`` call ``i mod 22``
(``data/numpy-2.2.6-multi-targets.json``, which says where the lists come from) and the same
small kernel.  Baseline ``min``, dispatch ``max -xop -fma4`` (numpy's defaults).

N = 2 is the size of most libraries instead (``SMALL``): a float dot product with
``baseline avx2 sse41 asimd`` (highest first, as numpy's fork wants) and a 64-bit popcount with
``baseline sse42 asimd``, each with its own kernel, and the same ``main.c``; ``unstable-simd`` gets
the same instruction sets (ASIMD as ``neon``).

- ``ccopt``: ccopt-meson as a subproject, the README's consumer snippet (one ``targets`` run,
  one ``static_library`` per line it prints: per distinct set of compile args);
- ``fork``: numpy's Meson fork with numpy's ``meson_cpu/`` unchanged and one
  ``mod_features.multi_targets()`` per source, extended into one, as numpy's
  ``numpy/_core/meson.build`` does;
- ``simd``: stock Meson's ``unstable-simd``, one ``simd.check()`` per source with the
  instruction sets it can express (no AVX-512, no FMA3, no multi-feature targets: those targets
  are dropped) and a hand-written ``__builtin_cpu_supports`` dispatcher;
- ``plain``: the same kernels compiled once for the baseline, no dispatch.

Every variant builds ``scale_main``, which calls each source that has a baseline version once.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from bench.projects import copy_repo

DATA = Path(__file__).resolve().parent / "data" / "numpy-2.2.6-multi-targets.json"
VARIANTS = ("ccopt", "fork", "simd", "plain")
LABELS = {"ccopt": "(a) ccopt-meson", "fork": "(b) numpy's Meson fork (`features`)",
          "simd": "(c) Meson `unstable-simd`", "plain": "(d) no dispatch"}
# unstable-simd's keywords for the x86 features it can express; numpy's `min` baseline
# (SSE SSE2 SSE3) is the project's own flags, and targets inside it are skipped as numpy skips them.
SIMD_ISETS = {"SSSE3": "ssse3", "SSE41": "sse41", "SSE42": "sse42", "AVX": "avx", "AVX2": "avx2"}
BASELINE = ("SSE", "SSE2", "SSE3")
BASELINE_FLAGS = ("-msse", "-msse2", "-msse3")

Target = Union[str, "list[str]"]  # a feature name, or a multi-feature target [A, B]


@dataclass(frozen=True)
class Kernel:
    """A kernel's C: its return type, parameters, the arguments a caller passes, and its body."""

    ret: str
    params: str
    args: str
    main_args: str  # what main.c passes (its arrays: float x[64], unsigned long long w[64])
    body: str


SCALE_KERNEL = Kernel("float", "const float *x, size_t n", "x, n", "x, 64", """\
    float s = 0.0f;
    size_t j;
    for (j = 0; j < n; j++) s += x[j] * (x[j] + {index}.0f);
    return s;
""")


@dataclass(frozen=True)
class Source:
    index: int
    origin: str           # the numpy header whose list this source has
    baseline: bool        # the multi_targets call passes a baseline
    dispatch: tuple[Target, ...]
    label: str = ""       # the kernel's name (default: k<index>)
    kernel: Kernel = SCALE_KERNEL

    @property
    def name(self) -> str:
        return self.label or f"k{self.index}"


SMALL = (
    Source(0, "a float dot product", True, ("AVX2", "SSE41", "ASIMD"), "dot",
           Kernel("float", "const float *a, const float *b, size_t n", "a, b, n", "x, x, 64", """\
    float s = 0.0f;
    size_t i;
    for (i = 0; i < n; i++) s += a[i] * b[i];
    return s;
""")),
    Source(1, "a 64-bit popcount", True, ("SSE42", "ASIMD"), "popcount",
           Kernel("size_t", "const unsigned long long *w, size_t n", "w, n", "w, 64", """\
    size_t c = 0, i;
    for (i = 0; i < n; i++) c += (size_t)__builtin_popcountll(w[i]);
    return c;
""")),
)


def numpy_lists() -> list[dict[str, object]]:
    return list(json.loads(DATA.read_text())["sources"])


def sources(n: int) -> list[Source]:
    if n == len(SMALL):
        return list(SMALL)
    lists = numpy_lists()
    out = []
    for i in range(n):
        entry = lists[i % len(lists)]
        out.append(Source(i, str(entry["header"]), bool(entry["baseline"]), tuple(entry["dispatch"])))  # type: ignore[arg-type]
    return out


KERNEL = """\
/* {name}.dispatch.c: the target list of {origin}
 * @targets $maxopt {targets}
 */
#include <stddef.h>

#include "scale_kernel.h"

{ret} KERNEL_FN({name})({params})
{{
{body}}}
"""

MAIN = """\
#include <stddef.h>
#include <stdio.h>

{decls}
int main(void)
{{
    static float x[64];
    static unsigned long long w[64];
    double s = 0.0;
    int i;
    for (i = 0; i < 64; i++) {{
        x[i] = (float)i / 64.0f;
        w[i] = (unsigned long long)i * 0x9E3779B97F4A7C15ULL;
    }}
{calls}    printf("scale {n} sources: %g\\n", s);
    return 0;
}}
"""

KERNEL_HEADERS = {
    "ccopt": '#include "ccopt_config.h"\n#include "ccopt_dispatch.h"\n#define KERNEL_FN(NAME) CCOPT_FN(NAME)\n',
    "fork": '#include "npy_cpu_dispatch_config.h"\n#define KERNEL_FN(NAME) NPY_CPU_DISPATCH_CURFX(NAME)\n',
    "simd": ("#include <immintrin.h>\n#define KERNEL_CAT_(a, b) a##_##b\n#define KERNEL_CAT(a, b) KERNEL_CAT_(a, b)\n"
             "#define KERNEL_FN(NAME) KERNEL_CAT(NAME, KERNEL_SUFFIX)\n"),
    "plain": "#include <immintrin.h>\n#define KERNEL_FN(NAME) NAME\n",
}


def ccopt_statement(src: Source) -> str:
    words = ["baseline"] if src.baseline else []
    words += [f"({' '.join(t)})" if isinstance(t, list) else t for t in src.dispatch]
    return " ".join(words)


def write_common(dest: Path, variant: str, srcs: list[Source], entry: str) -> None:
    dest.mkdir(parents=True)
    for s in srcs:
        k = s.kernel
        (dest / f"{s.name}.dispatch.c").write_text(KERNEL.format(
            name=s.name, origin=s.origin, targets=ccopt_statement(s), ret=k.ret, params=k.params,
            body=k.body.format(index=s.index)))
    (dest / "scale_kernel.h").write_text(f"/* How {variant} names a kernel's versions. */\n" + KERNEL_HEADERS[variant])
    called = [s for s in srcs if s.baseline]
    decls = "".join(f"{s.kernel.ret} {entry.format(s.name)}({s.kernel.params});\n" for s in called)
    calls = "".join(f"    s += (double){entry.format(s.name)}({s.kernel.main_args});\n" for s in called)
    (dest / "main.c").write_text(MAIN.format(decls=decls, calls=calls, n=len(srcs)))


def meson_list(names: list[str]) -> str:
    return "[" + ", ".join(f"'{x}'" for x in names) + "]"


# --------------------------------------------------------------------------- (a) ccopt-meson

CCOPT_MESON = """\
project('scale', 'c', default_options: ['buildtype=release'])

ccopt = subproject('ccopt-meson', default_options: ['cpu-baseline=min', 'cpu-dispatch=max -xop -fma4'])
ccopt_dep = dependency('ccopt')

r = run_command(ccopt.get_variable('targets'), files({sources}), check: false)
assert(r.returncode() == 0, r.stderr().strip())
dispatch_libs = []
foreach line : r.stdout().splitlines()
  t = line.split('\\t')  # library name, compile args, sources
  dispatch_libs += static_library(t[0], t[2].split(), c_args: t[1].split(), dependencies: ccopt_dep)
endforeach

disp = static_library('disp', {disp}, link_with: dispatch_libs, dependencies: ccopt_dep)
executable('scale_main', 'main.c', link_with: disp, dependencies: ccopt_dep)
"""

CCOPT_DISP = """\
#include <stddef.h>

#include "{name}.dispatch.h"
CCOPT_DISPATCH_DECLARE({name}_dispatch, {ret}, {name}, ({params}))
CCOPT_DISPATCH_DEFINE({name}_dispatch, {ret}, {name}, ({params}), ({args}))

{ret} call_{name}({params}) {{ return {name}({args}); }}
"""


def make_ccopt(dest: Path, srcs: list[Source]) -> Path:
    write_common(dest, "ccopt", srcs, "call_{}")
    called = [s for s in srcs if s.baseline]
    for s in called:
        (dest / f"disp_{s.name}.c").write_text(CCOPT_DISP.format(name=s.name, ret=s.kernel.ret,
                                                                 params=s.kernel.params, args=s.kernel.args))
    (dest / "meson.build").write_text(CCOPT_MESON.format(
        sources=", ".join(f"'{s.name}.dispatch.c'" for s in srcs),
        disp=meson_list([f"disp_{s.name}.c" for s in called])))
    copy_repo(dest / "subprojects" / "ccopt-meson")
    return dest


# --------------------------------------------------------------------------- (b) numpy's fork

FORK_OPTIONS = """\
option('disable-optimization', type: 'boolean', value: false, description: 'numpy meson_cpu option')
option('cpu-baseline', type: 'string', value: 'min', description: 'numpy meson_cpu option')
option('cpu-dispatch', type: 'string', value: 'max -xop -fma4', description: 'numpy meson_cpu option')
"""

FORK_MESON_HEAD = """\
project('scale', 'c', default_options: ['buildtype=release'])
# numpy's meson_cpu/ (unchanged) defines the feature objects, parses -Dcpu-baseline/-Dcpu-dispatch
# and tests them; each source is one multi_targets() call, extended into one, as in numpy.
cc = meson.get_compiler('c')
subdir('meson_cpu')
"""

FORK_MESON_TAIL = """\
mtlib = scale_mtargets.static_lib('scale_mtargets')
disp = static_library('disp', {disp}, link_with: mtlib)
executable('scale_main', 'main.c', 'cpu_have.c', link_with: disp)
"""

FORK_DISP = """\
#include <stddef.h>

#include "npy_cpu_dispatch_config.h"
int bench_cpu_have(const char *feature);
#define NPY_CPU_HAVE(FEATURE) bench_cpu_have(#FEATURE)
#include "{name}.dispatch.h"
NPY_CPU_DISPATCH_DECLARE({ret} {name}, ({params}))

{ret} call_{name}({params}) {{ return NPY_CPU_DISPATCH_CALL({name}, ({args})); }}
"""

# numpy's run-time detection is its own C code (npy_cpu_features.c, Python-dependent), outside
# what this benchmark measures (configure and build); the consumer runs its baseline versions.
FORK_CPU_HAVE = "int bench_cpu_have(const char *feature) { (void)feature; return 0; }\n"


def fork_target(t: Target) -> str:
    return f"[{', '.join(t)}]" if isinstance(t, list) else str(t)


def make_fork(dest: Path, srcs: list[Source], tree: Path) -> Path:
    write_common(dest, "fork", srcs, "call_{}")
    shutil.copytree(tree / "meson_cpu", dest / "meson_cpu")
    shutil.copytree(tree / "numpy" / "distutils" / "checks", dest / "numpy" / "distutils" / "checks")
    (dest / "meson.options").write_text(FORK_OPTIONS)
    lines = [FORK_MESON_HEAD]
    for s in srcs:
        base = "baseline: CPU_BASELINE, " if s.baseline else ""
        lines.append(f"mt = mod_features.multi_targets('{s.name}.dispatch.h', '{s.name}.dispatch.c',\n"
                     f"  dispatch: [{', '.join(fork_target(t) for t in s.dispatch)}],\n"
                     f"  {base}prefix: 'NPY_', c_args: ['-O3'])\n")
        lines.append("scale_mtargets = mt\n" if s.index == 0 else "scale_mtargets.extend(mt)\n")
    called = [s for s in srcs if s.baseline]
    lines.append(FORK_MESON_TAIL.format(disp=meson_list([f"disp_{s.name}.c" for s in called])))
    (dest / "meson.build").write_text("".join(lines))
    for s in called:
        (dest / f"disp_{s.name}.c").write_text(FORK_DISP.format(name=s.name, ret=s.kernel.ret,
                                                                params=s.kernel.params, args=s.kernel.args))
    (dest / "cpu_have.c").write_text(FORK_CPU_HAVE)
    return dest


# --------------------------------------------------------------------------- (c) unstable-simd


def simd_isets(src: Source) -> list[str]:
    """The unstable-simd keywords of a source's targets, in its order, without duplicates.

    A target that needs a feature the module cannot express (AVX-512, FMA3, XOP, a multi-feature
    target) is dropped, and so is one inside the baseline, as numpy drops those.  The small
    project's ASIMD is ``neon`` (the numpy-scale consumers keep the keyword set they were measured with).
    """
    isets = dict(SIMD_ISETS, ASIMD="neon") if src.label else SIMD_ISETS
    out: list[str] = []
    for t in src.dispatch:
        if isinstance(t, list) or t in BASELINE or t not in isets:
            continue
        if isets[t] not in out:
            out.append(isets[t])
    return out


SIMD_DISP = """\
#include <stddef.h>

#include "{name}_simd.h"
{ret} {name}_base({params});
{decls}
{ret} call_{name}({params})
{{
    __builtin_cpu_init();
{checks}    return {name}_base({args});
}}
"""

# __builtin_cpu_supports' names; neon is every aarch64 CPU's, so its version is taken when compiled
SIMD_CPU = {"ssse3": "ssse3", "sse41": "sse4.1", "sse42": "sse4.2", "avx": "avx", "avx2": "avx2"}


def simd_check(name: str, iset: str, args: str) -> str:
    call = f"return {name}_{iset}({args});"
    test = f"    if (__builtin_cpu_supports(\"{SIMD_CPU[iset]}\")) {call}" if iset in SIMD_CPU else f"    {call}"
    return f"#ifdef HAVE_{iset.upper()}\n{test}\n#endif\n"


def make_simd(dest: Path, srcs: list[Source]) -> Path:
    write_common(dest, "simd", srcs, "call_{}")
    lines = ["project('scale', 'c', default_options: ['buildtype=release'])\n",
             f"add_project_arguments({', '.join(repr(f) for f in BASELINE_FLAGS)}, language: 'c')  # numpy's min\n",
             "simd = import('unstable-simd')\ncc = meson.get_compiler('c')\nsimd_libs = []\n"]
    disp: list[str] = []
    for s in srcs:
        isets, k = simd_isets(s), s.kernel
        for iset in isets + (["base"] if s.baseline else []):
            (dest / f"{s.name}_{iset}.c").write_text(f'#define KERNEL_SUFFIX {iset}\n#include "{s.name}.dispatch.c"\n')
        if isets:
            kw = ", ".join(f"{iset}: '{s.name}_{iset}.c'" for iset in isets)
            lines.append(f"r = simd.check('{s.name}', {kw}, compiler: cc, c_args: ['-O3'])\n"
                         f"simd_libs += r[0]\nconfigure_file(output: '{s.name}_simd.h', configuration: r[1])\n")
        else:
            lines.append(f"configure_file(output: '{s.name}_simd.h', configuration: configuration_data())\n")
        if s.baseline:
            decls = "".join(f"#ifdef HAVE_{i.upper()}\n{k.ret} {s.name}_{i}({k.params});\n#endif\n" for i in isets)
            checks = "".join(simd_check(s.name, i, k.args) for i in isets)
            (dest / f"disp_{s.name}.c").write_text(SIMD_DISP.format(name=s.name, decls=decls, checks=checks,
                                                                    ret=k.ret, params=k.params, args=k.args))
            disp += [f"disp_{s.name}.c", f"{s.name}_base.c"]
    lines.append(f"disp = static_library('disp', {meson_list(disp)}, link_with: simd_libs, c_args: ['-O3'])\n"
                 "executable('scale_main', 'main.c', link_with: disp)\n")
    (dest / "meson.build").write_text("".join(lines))
    return dest


# --------------------------------------------------------------------------- (d) no dispatch


def make_plain(dest: Path, srcs: list[Source]) -> Path:
    write_common(dest, "plain", srcs, "{}")
    (dest / "meson.build").write_text(
        "project('scale', 'c', default_options: ['buildtype=release'])\n"
        f"add_project_arguments({', '.join(repr(f) for f in BASELINE_FLAGS)}, language: 'c')  # numpy's min\n"
        f"kernels = static_library('kernels', {meson_list([f'{s.name}.dispatch.c' for s in srcs])}, "
        "c_args: ['-O3'])\n"
        "executable('scale_main', 'main.c', link_with: kernels)\n")
    return dest


def make(variant: str, dest: Path, n: int, fork_tree: Path | None = None) -> Path:
    srcs = sources(n)
    if variant == "ccopt":
        return make_ccopt(dest, srcs)
    if variant == "fork":
        if fork_tree is None:
            raise ValueError("the fork variant needs numpy's unpacked sdist")
        return make_fork(dest, srcs, fork_tree)
    if variant == "simd":
        return make_simd(dest, srcs)
    return make_plain(dest, srcs)
