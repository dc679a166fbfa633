"""Fine-grained features: probes that test their own flags, detection with real compilers,
multi-feature targets whose run-time check is exactly their members (and what those imply)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ccopt_meson import Request, detect, tables
from ccopt_meson.dispatch import parse_text, select
from ccopt_meson.emit import config_header, dispatch_header, kernel_header
from ccopt_meson.emit_runtime import write_table
from ccopt_meson.errors import DispatchSourceError, InputError
from ccopt_meson.resolve import tokenize

from .conftest import need
from .helpers import clean_env

RUNTIME = tables.DATA_DIR.parent / "runtime"
IS_X86_64 = os.uname().machine == "x86_64"
X86 = tables.table_for("x86_64", "gcc")
# (machine, compiler): the probes each compiler must build; clang targets x86_64 only here.
BUILDS = [("x86_64", "gcc"), ("x86_64", "clang"), ("aarch64", "aarch64-linux-gnu-gcc"),
          ("armhf", "arm-linux-gnueabihf-gcc"), ("ppc64le", "powerpc64le-linux-gnu-gcc"),
          ("s390x", "s390x-linux-gnu-gcc")]
CASES = [(m, cc, n) for m, cc in BUILDS for n, f in tables.table_for(m, "gcc").features.items()
         if not f.disabled and (m != "x86_64" or IS_X86_64)]


# Probes of numpy's levels these compilers cannot build, with the reason (detect reports them unsupported).
KNOWN = {("x86_64", "clang", "AVX512_KNM"): "clang 14 dropped -mavx5124fmaps and -mavx5124vnniw"}


def _compile(cc: str, flags: list[str], source: Path, out: Path) -> tuple[bool, str]:
    """(built cleanly, output): a diagnostic located in the probe itself counts as a failure (as in
    ccopt_meson.probe); a warning inside a compiler header (gcc 12's avx512erintrin.h) does not."""
    res = subprocess.run([need(cc), "-c", "-O2", "-Wall", "-Wextra", *flags, str(source), "-o", str(out)],
                         capture_output=True, text=True, timeout=120)
    own = [ln for ln in res.stderr.splitlines() if ln.startswith(f"{source}:") and ("warning" in ln or "error" in ln)]
    return res.returncode == 0 and not own, res.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("machine", "cc", "name"), CASES, ids=[f"{m}-{cc.split('-')[-1]}-{n}" for m, cc, n in CASES])
def test_probe_builds_with_its_flags_and_not_without_them(machine: str, cc: str, name: str, tmp_path: Path) -> None:
    """A probe compiles its feature's real intrinsics: it builds with the feature's flags, and
    fails with only what the feature implies (when its own flags add anything)."""
    if (machine, cc, name) in KNOWN:
        pytest.skip(KNOWN[machine, cc, name])
    t = tables.table_for(machine, "clang" if cc == "clang" else "gcc")
    f = t.get(name)
    ok, output = _compile(cc, t.flags_for([name]), f.probe, tmp_path / "p.o")
    assert ok, output
    below = t.closure([name]) - {name}
    without = t.flags_for(below)
    if name in t.closure(below) or name in t.machine.min or not f.flags or set(f.flags) <= set(without):
        return  # its flags add nothing of their own (mutual ties, the architecture's minimum, PMULL's +crypto)
    ok, _ = _compile(cc, without, f.probe, tmp_path / "q.o")
    assert not ok, f"{name}'s probe builds without {' '.join(f.flags)}: it tests nothing"


@pytest.mark.skipif(not IS_X86_64, reason="the host is not x86_64")
def test_gcc_supports_every_x86_feature(gcc: str) -> None:
    doc = detect(Request(command=(gcc,), dispatch="max")).to_json()
    wanted = {n for n, f in X86.features.items() if not f.disabled}
    assert wanted <= set(doc["baseline"]["names"]) | set(doc["dispatch"]["names"])
    assert all(doc["features"][n]["supported"] for n in wanted)


@pytest.mark.skipif(not IS_X86_64, reason="the host is not x86_64")
def test_clang_supports_every_x86_feature_it_has_flags_for(clang: str) -> None:
    doc = detect(Request(command=(clang,), dispatch="max")).to_json()
    lacking = {n for (m, cc, n) in KNOWN if (m, cc) == ("x86_64", "clang")}
    assert {n for n, f in doc["features"].items() if not f["supported"]} == lacking


def test_aarch64_cross_gcc_supports_every_aarch64_feature() -> None:
    doc = detect(Request(command=(need("aarch64-linux-gnu-gcc"),), dispatch="max")).to_json()
    t = tables.table_for("aarch64", "gcc")
    assert {n for n, f in t.features.items() if not f.disabled} == (
        set(doc["baseline"]["names"]) | set(doc["dispatch"]["names"]))


def test_a_group_is_checked_as_exactly_its_members() -> None:
    """(AVX512VL AVX512VBMI) needs VL, VBMI and what they imply (F, BW, AVX2...), not CD or DQ."""
    need_rt = X86.closure(["AVX512VL", "AVX512VBMI"])
    assert {"AVX512F", "AVX512BW", "AVX512VL", "AVX512VBMI"} <= need_rt
    assert not need_rt & {"AVX512CD", "AVX512DQ", "AVX512IFMA", "AVX512_SKX", "AVX512_CNL"}
    assert "F16C" not in X86.closure(["AVX2_ISA"]) and "F16C" in X86.closure(["AVX2"])
    assert X86.closure(["VPCLMULQDQ"]) >= {"AVX", "PCLMULQDQ"} and "AVX2" not in X86.closure(["VPCLMULQDQ"])


def test_a_group_in_an_expression_is_its_members() -> None:
    from ccopt_meson.resolve import evaluate

    def select(text: str) -> set[str]:
        return evaluate(tokenize(text, "cpu-dispatch"), X86, (), (), [], "cpu-dispatch")

    assert select("(avx512vl avx512vbmi)") == {"AVX512VL", "AVX512VBMI"}
    assert select("max -(avx512vl avx512vbmi)") == select("max -avx512vl -avx512vbmi")
    for bad, message in (("(avx2", "'(' is not closed"), ("avx2 ()", "empty group"), ("((avx2))", "nested '('"),
                         ("(avx2 -sse41)", "put the sign before the '('")):
        with pytest.raises(InputError, match=re.escape(message)):
            tokenize(bad, "cpu-baseline")


def test_several_unknown_names_are_reported_at_once() -> None:
    with pytest.raises(InputError) as err:
        tokenize("avx2 avx512vll nosuchfeature -pclmul", "cpu-dispatch")
    text = str(err.value)
    assert "unknown features 'avx512vll' (did you mean 'AVX512VL'" in text
    assert "'nosuchfeature' (no architecture has a feature of that name)" in text
    assert "'pclmul' (did you mean 'PCLMULQDQ'" in text
    typo_and_unheard_of = r"unknown targets 'avx512vbmx' \(did you mean 'AVX512VBMI'.*'zzz' \(no"
    with pytest.raises(DispatchSourceError, match=typo_and_unheard_of):
        parse_text("/*@targets baseline (avx512vl avx512vbmx) zzz sse41 */", "k.c")


# Highest usable version first: the order a dispatcher tries them in.
STATEMENT = "/*@targets baseline (avx512vl avx512vbmi) (vpclmulqdq avx512vl) pclmulqdq avx2 avx2_isa sse41 */"
PICKS = [
    ("", "AVX512VL__AVX512VBMI"),
    ("AVX512VBMI", "VPCLMULQDQ__AVX512VL"),
    ("AVX512VBMI VPCLMULQDQ", "AVX2"),  # numpy's AVX2 (the bare ISA and F16C) ranks above the bare ISA
    ("AVX512VL AVX2", "AVX2_ISA"),
    ("AVX512VL F16C", "AVX2_ISA"),  # numpy's AVX2 implies F16C; the bare ISA does not
    ("AVX512VL AVX2_ISA", "PCLMULQDQ"),  # numpy's AVX2 executes AVX2 instructions: masked with the bare ISA
    ("AVX512VL AVX PCLMULQDQ", "SSE41"),
    ("SSE41 PCLMULQDQ", "BASELINE"),
]


@pytest.fixture(scope="module")
def dispatcher(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A program dispatching STATEMENT's targets, built against a real gcc detection."""
    gcc = need("gcc")
    tmp = tmp_path_factory.mktemp("fine")
    doc = detect(Request(command=(gcc,), dispatch="max"))
    targets = select(parse_text(STATEMENT), doc)
    (tmp / "ccopt_config.h").write_text(config_header(doc))
    (tmp / "ccopt_kernel.h").write_text(kernel_header(doc))
    (tmp / "k.dispatch.h").write_text(dispatch_header("k.dispatch.c", targets))
    write_table(tmp)
    (tmp / "main.c").write_text(
        '#include <stdio.h>\n#include "k.dispatch.h"\n'
        "#define DEF_CB(CHECK, T, ...) int k_##T(void) { return 1; }\n"
        "CCOPT_DISPATCH_FOREACH(k_dispatch, DEF_CB, 0)\n"  # BASELINE too: the statement has it
        "CCOPT_DISPATCH_DECLARE(k_dispatch, int, k, (void))\nCCOPT_DISPATCH_DEFINE(k_dispatch, int, k, (void), ())\n"
        'int main(void) { k(); printf("%s\\n", CCOPT_DISPATCH_TARGET_NAME(k_dispatch, k)); return 0; }\n')
    exe = tmp / "k"
    subprocess.run([gcc, "-std=c99", "-Wall", "-Werror", "-I", str(tmp), "-I", str(RUNTIME), str(tmp / "main.c"),
                    str(RUNTIME / "ccopt_cpu.c"), "-o", str(exe)], check=True, timeout=120)
    return exe


def _have(names: str) -> bool:
    flags = set(Path("/proc/cpuinfo").read_text().split())
    return all(f in flags for n in names.split() for d in X86.closure([n]) for f in X86.get(d).runtime["cpuinfo"])


@pytest.mark.skipif(not IS_X86_64, reason="the host is not x86_64")
@pytest.mark.parametrize(("disabled", "expected"), PICKS, ids=[p[1] for p in PICKS])
def test_groups_and_bare_isa_dispatch_under_masks(dispatcher: Path, disabled: str, expected: str) -> None:
    if not _have("AVX512VL AVX512VBMI VPCLMULQDQ"):
        pytest.skip("this CPU lacks AVX512VBMI or VPCLMULQDQ")
    env: dict[str, Any] = clean_env()
    env["CCOPT_DISABLE_CPU_FEATURES"] = disabled
    out = subprocess.run([str(dispatcher)], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == [expected], out.stderr


@pytest.mark.slow
@pytest.mark.skipif(not IS_X86_64, reason="the host is not x86_64")
def test_avx2_isa_version_runs_on_haswell_without_f16c(dispatcher: Path) -> None:
    qemu = need("qemu-x86_64-static")
    out = subprocess.run([qemu, "-cpu", "Haswell,-f16c", str(dispatcher)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["AVX2_ISA"], out.stderr
