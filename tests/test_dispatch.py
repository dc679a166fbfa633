"""@targets parsing and target selection (numpy's documented examples), and generated headers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccopt_meson import Detection, Request, detect
from ccopt_meson.dispatch import Statement, parse_file, parse_text, select
from ccopt_meson.dispatch import render_statement as render
from ccopt_meson.emit import config_header, dispatch_header, header_name
from ccopt_meson.errors import CcoptError, DispatchSourceError, InputError

GOLDEN = Path(__file__).parent / "data" / "golden"


@pytest.fixture
def doc(fake: Callable[..., Any]) -> Detection:
    return detect(Request(command=("fakecc",), baseline="min", dispatch="max -xop -fma4"), runner=fake())


def names(text: str, doc: Detection) -> list[str]:
    return [t.name for t in select(parse_text(f"/*@targets {text} */"), doc)]


@pytest.mark.parametrize("text,expected", [
    ("sse42 avx2 avx512f", ["AVX512F", "AVX2", "SSE42"]),
    ("sse2 sse3 avx2", ["AVX2"]),
    ("$keep_baseline sse2 sse3 avx2", ["AVX2", "SSE3", "SSE2"]),
    ("$keep_sort avx2 sse42 avx512_skx", ["AVX2", "SSE42", "AVX512_SKX"]),
    ("(avx2 fma3) avx512f", ["AVX512F", "FMA3__AVX2"]),
    ("(avx2 xop) avx2", ["AVX2"]),
    ("(avx512_skx avx512_clx)", ["AVX512_CLX"]),
    ("baseline avx2", ["AVX2", "BASELINE"]),
    ("vsx2 asimd", []),
    ("x86_v2 x86_v3 x86_v4", ["X86_V4", "X86_V3", "X86_V2"]),
])
def test_numpy_examples(doc: Detection, text: str, expected: list[str]) -> None:
    assert names(text, doc) == expected


def test_policies_add_flags(doc: Detection) -> None:
    t = select(parse_text("/*@targets $maxopt $werror baseline avx2 */"), doc)
    assert all("-O3" in x.args and "-Werror" in x.args for x in t)
    avx2 = t[0]
    assert avx2.args[-1] == "-DCCOPT_TARGET=AVX2" and "-mavx2" in avx2.args and "-DCCOPT_HAVE_F16C=1" in avx2.args
    assert t[1].name == "BASELINE" and "-DCCOPT_TARGET=BASELINE" in t[1].args


def test_comment_styles() -> None:
    assert parse_text("// @targets avx2\n// avx512f\nint x;").targets == (("AVX2",), ("AVX512F",))
    assert parse_text("/**\n * @targets\n * $maxopt avx2\n */").policies == frozenset({"MAXOPT"})


@pytest.mark.parametrize("text,message", [
    ("int x;", "src.c:1: no '@targets' statement found in a comment of the first 1000 lines"),
    ("/*@targets avx2", "src.c:1: the @targets comment is not closed with '*/'"),
    ("/*@targets */", "src.c:1: the @targets statement is empty"),
    ("\n/*@targets (avx2 */", "src.c:2: '(' is not closed in @targets"),
    ("/*@targets avx2) */", "src.c:1: ')' without a matching '('"),
    ("/*@targets ((avx2)) */", "src.c:1: nested '(' in @targets"),
    ("/*@targets () */", "src.c:1: empty group '()' in @targets"),
    ("/*@targets $maxop */", "src.c:1: unknown policy '$maxop' (did you mean 'maxopt'?); valid: $keep_baseline"),
    ("/*@targets avx3 */", "src.c:1: unknown target 'avx3' (did you mean 'AVX' or 'VSX3' or 'AVX2'?)"),
    ("/*@targets (baseline) */", "src.c:1: 'baseline' cannot be part of a group"),
    ("/*@targets ($maxopt) */", "src.c:1: policy '$maxopt' cannot be part of a group"),
    ("/*@targets #grp */", "src.c:1: target groups ('#grp') are not supported; list the targets"),
    ("/*@targets -avx2 */", "src.c:1: '-avx2': '+' and '-' are not allowed in @targets"),
])
def test_malformed_statements(text: str, message: str) -> None:
    with pytest.raises(DispatchSourceError) as exc:
        parse_text(text, "src.c")
    assert str(exc.value).startswith(message)


def test_missing_source(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="dispatch source '.*nope.c' does not exist"):
        parse_file(tmp_path / "nope.c")


TOKENS = st.sampled_from(["avx2", "SSE42", "(", ")", "baseline", "$maxopt", "$keep_sort", "$nope", "vsx2", "#g",
                          "-x", " ", ",", "*", "/", "avx512_skx", "(fma3 avx2)"])


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKENS, max_size=8).map(" ".join))
def test_any_statement_parses_or_raises_our_error(body: str) -> None:
    try:
        st_ = parse_text(f"/*@targets {body} */")
    except CcoptError:
        return
    again = parse_text(f"/*@targets {render(st_)} */")
    assert (again.baseline, again.targets, again.policies) == (st_.baseline, st_.targets, st_.policies)


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("CCOPT_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; rerun with CCOPT_UPDATE_GOLDEN=1 if intended"


def test_golden_config_header(doc: Detection) -> None:
    _golden("ccopt_config.x86_64-gcc.h", config_header(doc))


def test_golden_dispatch_header(doc: Detection) -> None:
    targets = select(parse_text("/*@targets $maxopt baseline sse42 (fma3 avx2) avx512_skx asimd */"), doc)
    assert header_name("src/kern.dispatch.c") == "kern.dispatch.h"
    _golden("kern.dispatch.h", dispatch_header("src/kern.dispatch.c", targets))


def test_headers_compile_and_dispatch(doc: Detection, tmp_path: Path, gcc: str) -> None:
    """The generated headers plus ccopt_dispatch.h compile, and pick a target that exists."""
    import subprocess

    from ccopt_meson.tables import DATA_DIR

    runtime = DATA_DIR.parent / "runtime"
    (tmp_path / "ccopt_config.h").write_text(config_header(doc))
    targets = select(parse_text("/*@targets baseline sse42 avx2 */"), doc)
    (tmp_path / "k.dispatch.h").write_text(dispatch_header("k.dispatch.c", targets))
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "k.dispatch.h"\n'
        "#define DEF_CB(CHECK, T, ...) int k_##T(void) { return 1; }\n"
        "CCOPT_SRC_k_dispatch_CALL(CCOPT_CPU_HAVE, DEF_CB, 0)\nint k_BASELINE(void) { return 2; }\n"
        "CCOPT_DISPATCH_DECLARE(k_dispatch, int, k, (void))\nCCOPT_DISPATCH_DEFINE(k_dispatch, int, k, (void), ())\n"
        'int main(void) { printf("%s %d\\n", CCOPT_DISPATCH_TARGET_NAME(k_dispatch, k), k()); return 0; }\n')
    exe = tmp_path / "a.out"
    inc = ["-I", str(tmp_path), "-I", str(runtime)]
    subprocess.run([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", *inc, "-c", str(tmp_path / "main.c"),
                    "-o", str(tmp_path / "main.o")], check=True)
    subprocess.run([gcc, *inc, str(tmp_path / "main.o"), str(runtime / "ccopt_cpu.c"), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] in ("AVX2", "SSE42", "BASELINE") and out[1] == ("2" if out[0] == "BASELINE" else "1")


def test_statement_dataclass_is_hashable() -> None:
    assert hash(Statement(False, (("AVX2",),), frozenset(), 1))


def test_runtime_checks_cover_what_the_compiler_flags_enable(fake: Callable[..., Any]) -> None:
    """Intel's FMA3 flag is -march=core-avx2: the version must also wait for AVX2 at run time."""
    from ccopt_meson.tables import table_for

    every = "".join(f"#define {m} 1\n" for f in table_for("x86_64", "intel").features.values() for m in f.macros)
    every += "#define __x86_64__ 1\n"
    doc = detect(Request(command=("fakecc",), compiler_id="intel"), runner=fake(macros=every))
    t = select(parse_text("/*@targets fma3 */"), doc)
    fma3 = next(x for x in t if x.name == "FMA3")
    assert "-march=core-avx2" in fma3.args and "AVX2" in fma3.checks
    assert "CHK(FMA3)&&CHK(AVX2)" in dispatch_header("k.dispatch.c", t)


def test_target_flags_keep_the_baseline_march_extensions(fake: Callable[..., Any]) -> None:
    macros = "#define __aarch64__ 1\n#define __GNUC__ 12\n#define __ARM_NEON 1\n"
    doc = detect(Request(command=("fakecc",), baseline="min asimddp"), runner=fake(macros=macros))
    sve = next(x for x in select(parse_text("/*@targets sve */"), doc) if x.name == "SVE")
    assert "-march=armv8.2-a+fp16+dotprod+sve" in sve.args  # not the SVE closure alone: +dotprod stays


def test_no_fitting_version_and_no_baseline_aborts_with_a_message(doc: Detection, tmp_path: Path,
                                                                   gcc: str) -> None:
    import subprocess

    from ccopt_meson.tables import DATA_DIR

    runtime = DATA_DIR.parent / "runtime"
    (tmp_path / "ccopt_config.h").write_text(config_header(doc))
    targets = select(parse_text("/*@targets avx2 */"), doc)
    (tmp_path / "k.dispatch.h").write_text(dispatch_header("k.dispatch.c", targets))
    (tmp_path / "main.c").write_text(
        '#include "k.dispatch.h"\nint k_AVX2(void) { return 1; }\n'
        "CCOPT_DISPATCH_DECLARE(k_dispatch, int, k, (void))\nCCOPT_DISPATCH_DEFINE(k_dispatch, int, k, (void), ())\n"
        "int main(void) { return k(); }\n")
    exe = tmp_path / "a.out"
    subprocess.run([gcc, "-I", str(tmp_path), "-I", str(runtime), str(tmp_path / "main.c"),
                    str(runtime / "ccopt_cpu.c"), "-o", str(exe)], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, env={"CCOPT_DISABLE_CPU_FEATURES": "AVX2"})
    assert r.returncode == -6  # SIGABRT, not SIGSEGV through a null pointer
    assert "ccopt: no compiled version of k() runs on this CPU" in r.stderr


def test_unguarded_vendor_headers_get_a_guard(fake: Callable[..., Any]) -> None:
    """clang's <vecintrin.h> has no include guard: a second inclusion by the user's code must not break."""
    doc = detect(Request(command=("fakecc",), baseline="vx"),
                 runner=fake(macros="#define __s390x__ 1\n#define __GNUC__ 12\n"))
    assert "(defined(CCOPT_HAVE_VX)) && !defined(__VEC_CLASS_FP_ZERO)" in config_header(doc)
