"""Property tests that ask the compiler and the bytes (issue 43): feature sets generated with random spellings of
the same x86 instruction sets (``-mavx2 -mfma``, ``-march=haswell``, ``-march=x86-64-v3``, ``-msse4``, ``-mno-...``,
``-mtune=``), ``like`` rows that inherit their run-time test or state one, some deliberately too narrow.

- What the compiler says a row's flags enable (its predefined macros under them) is covered by the row's final
  run-time test: the model after widening, for every row the detection builds.
- A project built with the generated file stops with one line naming a row, or every version it compiles stays
  within its own run-time test, as the ISA audit reads the objects and the linked program (0 findings).
"""

from __future__ import annotations

import functools
import json
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccopt_meson import Request, detect, project, rules, tables
from ccopt_meson.compiler import macro_satisfied, parse_macro_dump
from ccopt_meson.errors import CcoptError
from ccopt_meson.records import Detection

from .conftest import need, need_module
from .test_audit import audit_json
from .test_meson import Build, written

IS_X86_64 = platform.machine().lower() in ("x86_64", "amd64")
UNTIMED = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]

# The same instruction sets, spelled as a user might: each built-in feature's own switches, a CPU, a level, an
# old alias (-msse4), a switch taken back (-mno-), and a tuning that enables nothing; most spell the row's level.
V2_SWITCHES = ["-msse", "-msse2", "-msse3", "-mssse3", "-msse4.1", "-msse4.2", "-mpopcnt"]
SPELLINGS = {
    "SSE41": [["-msse4.1"], ["-msse4"], ["-march=x86-64-v2"]],
    "SSE42": [["-msse4.2"], ["-msse4"], ["-march=x86-64-v2"]],
    "POPCNT": [["-mpopcnt"], ["-msse4"]],
    "X86_V2": [["-march=x86-64-v2"], ["-msse4", "-mpopcnt", "-mcx16", "-msahf"]],
    "AVX": [["-mavx"], ["-mavx", "-mf16c"], ["-march=sandybridge"]],
    "F16C": [["-mf16c"], ["-mavx", "-mf16c"], ["-march=ivybridge"]],
    "FMA3": [["-mavx2", "-mfma"], ["-mfma"], ["-march=haswell"]],
    "AVX2": [["-mavx2", "-mfma"], ["-mavx2"], ["-march=haswell"], ["-march=x86-64-v3"], ["-march=haswell", "-mno-fma"],
             ["-mavx2", "-mfma", "-mbmi", "-mbmi2", "-mlzcnt", "-mmovbe"]],
    "X86_V3": [["-march=x86-64-v3"], ["-march=haswell"], ["-march=x86-64-v3", "-mno-avx2"],
               ["-mavx2", "-mfma", "-mf16c", "-mbmi", "-mbmi2", "-mlzcnt", "-mmovbe"]],
    "AVX512F": [["-mavx512f"], ["-mavx512f", "-mno-mmx"], ["-mavx2", "-mavx512f"], ["-mavx512f", "-mno-avx512f"]],
}
EVERY_SPELLING = [s for spellings in SPELLINGS.values() for s in spellings]
EXTRAS = ["-mtune=generic", "-mtune=haswell", "-mtune=znver3", "-mno-fma", "-mno-bmi2", "-mno-popcnt", "-mno-lzcnt"]
FLOORS = [None, ("SSE2", None), ("X86_V2", V2_SWITCHES), ("AVX", [*V2_SWITCHES, "-mavx"])]  # row B: like, flags
RUNTIMES = ["inherited", "inherited", "the like row's", "one bit", "a level's"]  # the last three are stated


def _stated(like: str, how: str) -> dict[str, Any]:
    """A stated run-time recipe: the ``like`` row's own (too narrow for most spellings), its first CPUID bit alone,
    or all of X86_V3's, as the built-in tables state them."""
    builtin = tables.table_for("x86_64", "gcc")
    if how == "a level's":
        recipe = rules.union_recipes(builtin.get(n).runtime for n in builtin.closure(["X86_V3"]))
    else:
        recipe = dict(builtin.get(like).runtime)
        if how == "one bit":
            recipe["cpuid"] = recipe.get("cpuid", [])[:1]
    return {"*": {k: recipe[k] for k in ("cpuid", "xcr0", "cpuinfo") if k in recipe}}


@st.composite
def feature_files(draw: Any) -> dict[str, Any]:
    """An x86 ``feature_set`` of one to three rows (R1, R2, ...) above a floor row B (or none), each spelling its
    level's flags (now and then another level's, or none: the like row's), with a tuning or a switch taken back."""
    rows: list[dict[str, Any]] = []
    floor = draw(st.sampled_from(FLOORS))
    if floor is not None:
        rows.append({"name": "B", "like": floor[0], "interest": 1, "implies": [],
                     **({"flags": {"gnu": floor[1]}} if floor[1] else {})})
    likes = draw(st.lists(st.sampled_from(sorted(SPELLINGS)), min_size=1, max_size=3, unique=True))  # one probe
    for i, like in enumerate(likes, 1):
        below = [[r["name"]] for r in rows[-1:]]
        row: dict[str, Any] = {"name": f"R{i}", "like": like, "interest": 10 * i,
                               "implies": draw(st.sampled_from([[], *below, *below]))}
        kind = draw(st.integers(0, 5))
        if kind:  # its level's spelling, or (1 in 5) any; else none: the like row's flags
            flags = draw(st.sampled_from(SPELLINGS[like] if kind > 1 else EVERY_SPELLING))
            row["flags"] = {"gnu": flags + draw(st.lists(st.sampled_from(EXTRAS), max_size=1))}
        how = draw(st.sampled_from(RUNTIMES))
        if how != "inherited":
            row["runtime"] = _stated(like, how)
        rows.append(row)
    return {"feature_set": {"x86": {"features": rows}}}


def _rows(doc: dict[str, Any]) -> list[str]:
    return [r["name"] for r in doc["feature_set"]["x86"]["features"]]


# --------------------------------------------------------------------------- what the compiler says, no build


@functools.cache
def _macros(cc: str, flags: tuple[str, ...]) -> dict[str, str]:
    out = subprocess.run([cc, *flags, "-dM", "-E", "-x", "c", "/dev/null"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return parse_macro_dump(out.stdout)


def _gaps(cc: str, det: Detection, name: str) -> set[str]:
    """The built-in features the compiler says the version ``name``'s flags enable (beyond the compiler's
    default) and its run-time test, with its implications', does not check."""
    assert det.table is not None
    builtin = det.table.builtin()
    flags = det.table.flags_for([name])
    have = rules.union_recipes(det.table.get(n).runtime for n in det.table.closure([name]))
    under, default = _macros(cc, tuple(flags)), _macros(cc, ())
    return {b.name for b in builtin.features.values()
            if b.macros and not b.disabled and b.runtime and all(macro_satisfied(m, under) for m in b.macros)
            and not all(macro_satisfied(m, default) for m in b.macros) and not rules.covers(have, b.runtime)}


def _detect(cc: str, path: Path) -> Detection:
    """The detection Meson's configure makes with the file (its default baseline and dispatch)."""
    return detect(Request(command=(cc,), project=project.load(path)))


@pytest.mark.skipif(not IS_X86_64, reason="x86_64 flag spellings, asked of the host's compilers")
@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_what_a_rows_flags_enable_is_what_its_final_run_time_test_checks(tmp_path: Path, compiler: str) -> None:
    """For every row the detection builds, each built-in feature whose predefined macros the compiler defines
    under the row's flags (and not under the user's args alone) is one its run-time test, with its
    implications', checks; a file that cannot hold is refused by one line naming a row."""
    cc = need(compiler)

    @settings(max_examples=25 if compiler == "gcc" else 15, deadline=None, suppress_health_check=UNTIMED)
    @given(doc=feature_files())
    def check(doc: dict[str, Any]) -> None:
        path = tmp_path / "f.json"
        path.write_text(json.dumps(doc))
        try:
            det = _detect(cc, path)
        except CcoptError as exc:
            assert "\n" not in str(exc) and re.search(r"\b(R\d|B)\b", str(exc)), str(exc)
            return
        gaps = {name: _gaps(cc, det, name) for name in det.dispatch}
        assert not any(gaps.values()), gaps

    check()


# --------------------------------------------------------------------------- built, and read by the audit

KERNEL = """\
/*@targets baseline @ROWS@ */
/* Each block is compiled where the compiler says the version's flags enable its instruction set (its predefined
 * macro): every set a version's flags enable is used, and the audit holds each against the version's test. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

uint64_t CCOPT_FN(kernel)(float *y, const float *a, const uint64_t *w, size_t n)
{
    uint64_t acc = 0;
    size_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(y + i), _mm512_set1_ps(1)));
#endif
#if defined(__FMA__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(y + i), _mm256_set1_ps(1)));
#endif
#if defined(__AVX2__)
    acc += (uint64_t)_mm256_movemask_epi8(_mm256_add_epi32(_mm256_set1_epi32((int)n), _mm256_set1_epi32(1)));
#endif
#if defined(__AVX__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(y + i)));
#endif
#if defined(__F16C__)
    acc += (uint64_t)_cvtss_sh((float)n, 0);
#endif
#if defined(__SSE4_2__)
    acc += _mm_crc32_u32((unsigned)acc, (unsigned)n);
#endif
#if defined(__SSE4_1__)
    acc += (uint64_t)_mm_extract_epi32(_mm_mullo_epi32(_mm_set1_epi32((int)n), _mm_set1_epi32(3)), 1);
#endif
#if defined(__PCLMUL__)
    acc += (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(_mm_set1_epi64x((long long)n), _mm_set1_epi64x(3), 0));
#endif
    for (; i < n; i++) {
        uint64_t x = w[i];
#if defined(__POPCNT__)
        acc += (uint64_t)_mm_popcnt_u64(x);
#endif
#if defined(__LZCNT__)
        acc += _lzcnt_u64(x);
#endif
#if defined(__BMI__)
        acc += _blsi_u64(x) + _andn_u64(x, acc);
#endif
#if defined(__BMI2__)
        acc += _pdep_u64(x, acc) + _bzhi_u64(x, 7);
#endif
#if defined(__MOVBE__)
        acc += __builtin_bswap64(w[n - 1 - i]);
#endif
        y[i] = y[i] * a[i] + 1.0f;
    }
    return acc;
}
"""

MAIN = """\
/* Calls the version this CPU picks: the linked program is audited too. */
#include <stdint.h>
#include <stdio.h>

#include "k.dispatch.h"
CCOPT_DISPATCH_DECLARE(k_dispatch, uint64_t, kernel, (float *y, const float *a, const uint64_t *w, size_t n))
CCOPT_DISPATCH_DEFINE(k_dispatch, uint64_t, kernel, (float *y, const float *a, const uint64_t *w, size_t n),
                      (y, a, w, n))

int main(void)
{
    float y[40] = {0}, a[40] = {0};
    uint64_t w[40] = {0};
    printf("%s %llu\\n", CCOPT_DISPATCH_TARGET_NAME(k_dispatch, kernel), (unsigned long long)kernel(y, a, w, 40));
    return 0;
}
"""

MESON_BUILD = """\
project('properties', 'c', meson_version: '>=1.0.1', default_options: ['buildtype=release'])
ccopt = subproject('ccopt-meson', default_options: ['features-file=features.json'])
ccopt_dep = dependency('ccopt')
r = run_command(ccopt.get_variable('targets'), files('k.dispatch.c'), check: false)
assert(r.returncode() == 0, r.stderr().strip())
libs = []
foreach line : r.stdout().strip().split('\\n')
  t = line.split('\\t')  # library name, compile args, sources, target
  libs += static_library(t[0], t[2].split(), c_args: t[1].split(), dependencies: ccopt_dep)
endforeach
executable('main', 'main.c', link_with: libs, dependencies: ccopt_dep)
"""



@pytest.mark.slow
@pytest.mark.skipif(not IS_X86_64, reason="x86_64 flag spellings, built and decoded on the host")
@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_a_generated_feature_set_is_refused_in_one_line_or_builds_versions_within_their_tests(
        tmp_path: Path, compiler: str) -> None:
    """Each generated file, configured and built with a kernel that uses every instruction set its version's flags
    enable: Meson stops with one ccopt-meson line naming a row, or every row not built is named on the console
    and ``audit --linked`` reads the objects and the program and finds nothing a version's test does not check."""
    need_module("iced_x86", "the package's 'audit' extra")
    need_module("elftools", "the package's 'audit' extra")
    need(compiler)
    b = Build(tmp_path, written(tmp_path / "src", {"main.c": MAIN, "meson.build": MESON_BUILD}), compiler)
    examples = 8 if compiler == "gcc" else 5  # about 7 s of CPU each: configure, build, audit

    @settings(max_examples=examples, deadline=None, suppress_health_check=UNTIMED)
    @given(doc=feature_files())
    def check(doc: dict[str, Any]) -> None:
        (b.src / "features.json").write_text(json.dumps(doc))
        _build_and_audit(b, doc)

    check()


def _build_and_audit(b: Build, doc: dict[str, Any]) -> None:
    """Configure and build ``b.src`` with the feature file ``doc``: Meson stops with one ccopt-meson line naming a
    row, or the build's objects and program audit clean."""
    rows = _rows(doc)
    (b.src / "features.json").write_text(json.dumps(doc))
    (b.src / "k.dispatch.c").write_text(KERNEL.replace("@ROWS@", " ".join(rows)))
    setup = [*b.meson, "setup", *(["--wipe"] if b.dir.exists() else []), str(b.dir)]
    r = subprocess.run(setup, cwd=b.src, env=b.env, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert "Traceback" not in out, out[-3000:]
    if r.returncode != 0:
        errors = [line for line in out.splitlines() if "ccopt-meson: error: " in line]
        assert len(errors) == 1 and re.search(rf"\b({'|'.join(rows)})\b", errors[0]), out[-3000:]
        return
    b.ninja()
    code, report = audit_json(b.dir, "--linked")
    findings = {o["object"]: sorted({f"{f['function']}: {f['highest']} {f['instruction']}" for f in o["findings"]})
                for o in report["objects"] if o["findings"]}
    assert code == 0 and not findings, (findings, [line for line in out.splitlines() if "WARNING" in line])


# --------------------------------------------------------------------------- a row of switches alone

# The first spelling in a row of its own: -mavx2 also enables AVX, SSE4.2, POPCNT, ... (the compiler's
# macros); R1 inherits AVX2's test, which is widened to what the built-in AVX2 and FMA3 targets check
SWITCHES_ALONE = {"feature_set": {"x86": {"features": [
    {"name": "R1", "like": "AVX2", "interest": 10, "implies": [], "flags": {"gnu": ["-mavx2", "-mfma"]}}]}}}


@pytest.mark.skipif(not IS_X86_64, reason="x86_64 flag spellings, asked of the host's compiler")
def test_a_switch_enables_what_its_feature_implies(tmp_path: Path) -> None:
    cc = need("gcc")
    (tmp_path / "f.json").write_text(json.dumps(SWITCHES_ALONE))
    det = _detect(cc, tmp_path / "f.json")
    assert "R1" in det.dispatch
    assert _gaps(cc, det, "R1") == set()


@pytest.mark.slow
@pytest.mark.skipif(not IS_X86_64, reason="x86_64 flag spellings, built and decoded on the host")
def test_a_switch_enables_what_its_feature_implies_in_the_built_objects(tmp_path: Path) -> None:
    need_module("iced_x86", "the package's 'audit' extra")
    b = Build(tmp_path, written(tmp_path / "src", {"main.c": MAIN, "meson.build": MESON_BUILD}))
    _build_and_audit(b, SWITCHES_ALONE)
