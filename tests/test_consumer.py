"""The consumer side without Meson: dispatch headers that compose, the ``targets`` lines, run-time knobs a
consumer's tests use, and the small things a new user tripped over (issue 10, point 5)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from ccopt_meson import Detection, Request, detect, host
from ccopt_meson.cli import explain_feature, main
from ccopt_meson.dispatch import parse_targets, parse_text, select
from ccopt_meson.emit import config_header, dispatch_header, kernel_header, source_id
from ccopt_meson.emit_runtime import write_table
from ccopt_meson.resolve import Token, tokenize
from ccopt_meson.tables import DATA_DIR

from .conftest import ROOT, FakeCompiler, need
from .helpers import clean_env, x86_gcc

RUNTIME = DATA_DIR.parent / "runtime"


@pytest.fixture
def doc(fake: Callable[..., Any]) -> Detection:
    return detect(Request(command=("fakecc",), baseline="min", dispatch="max -xop -fma4"), runner=fake())


def x86_host() -> None:
    if host.machine_name() != "x86_64":
        pytest.skip("the target names below are x86_64 ones")


def compile_and_run(tmp: Path, gcc: str, main_c: str, env: dict[str, str] | None = None,
                    extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    (tmp / "main.c").write_text(main_c)
    exe = tmp / "main"
    write_table(tmp)  # what configure writes into the build directory
    inc = ["-I", str(tmp), "-I", str(RUNTIME)]
    subprocess.run([gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", *inc, str(tmp / "main.c"), *extra,
                    str(RUNTIME / "ccopt_cpu.c"), "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], capture_output=True, text=True, env=clean_env(**(env or {})))


# --------------------------------------------------------------------------- headers that compose

LISTS = {"alpha": "baseline sse41 sse42", "beta": "baseline sse41", "gamma": "baseline ssse3 avx2"}


def test_three_headers_in_one_file_each_function_keeps_its_own_list(doc: Detection, tmp_path: Path,
                                                                    gcc: str) -> None:
    """Every version is defined only for its own source's targets: a function bound to another
    source's list would not link; each one must pick the best of its own list."""
    x86_host()
    (tmp_path / "ccopt_config.h").write_text(config_header(doc))
    (tmp_path / "ccopt_kernel.h").write_text(kernel_header(doc))
    versions = []
    for name, text in LISTS.items():
        targets = select(parse_targets(text, name), doc)
        (tmp_path / f"{name}.dispatch.h").write_text(dispatch_header(f"{name}.dispatch.c", targets))
        versions += [f'const char *f{name}_{t.name}(void) {{ return "{t.name}"; }}' for t in targets]
    main_c = "\n".join([
        "#include <stdio.h>",
        '#include "gamma.dispatch.h"', '#include "alpha.dispatch.h"', '#include "beta.dispatch.h"',
        *versions,
        *(f"CCOPT_DISPATCH_DECLARE({n}_dispatch, const char *, f{n}, (void))\n"
          f"CCOPT_DISPATCH_DEFINE({n}_dispatch, const char *, f{n}, (void), ())" for n in LISTS),
        "#if !defined(CCOPT_DISPATCH_HAS_alpha_dispatch_SSE42) || defined(CCOPT_DISPATCH_HAS_beta_dispatch_SSE42)",
        "#error compile-time target macros are wrong",
        "#endif",
        "int main(void) {",
        '  printf("%s %s %s\\n", falpha(), fbeta(), fgamma());',
        '  printf("%s|%s|%s\\n", CCOPT_DISPATCH_TARGETS(alpha_dispatch), CCOPT_DISPATCH_TARGETS(beta_dispatch),',
        "         CCOPT_DISPATCH_TARGETS(gamma_dispatch));",
        '  printf("%d %d %d\\n", CCOPT_DISPATCH_GET(alpha_dispatch, falpha, "SSE41") == falpha_SSE41,',
        '         CCOPT_DISPATCH_GET(beta_dispatch, fbeta, "SSE42") == 0,',
        '         CCOPT_DISPATCH_GET(gamma_dispatch, fgamma, "AVX2") == 0);',
        "  return 0;",
        "}", ""])
    r = compile_and_run(tmp_path, gcc, main_c, {"CCOPT_ENABLE_CPU_FEATURES": "SSE42"})
    assert r.returncode == 0, r.stderr
    picked, lists, got = r.stdout.splitlines()
    assert picked == "SSE42 SSE41 SSSE3"  # each its own best under SSE4.2, whatever the include order
    assert lists == "SSE42 SSE41 BASELINE|SSE41 BASELINE|AVX2 SSSE3 BASELINE"
    assert got == "1 1 1"  # by name: compiled and runnable; not compiled; compiled but not runnable here


def test_runs_and_per_target_checks(doc: Detection, tmp_path: Path, gcc: str) -> None:
    """A library with function tables of its own asks 'does this CPU run a version of this source above the
    baseline?' (CCOPT_DISPATCH_RUNS) and 'does it run this target?' (CCOPT_DISPATCH_CHECK), instead of
    writing 0 CCOPT_DISPATCH_FOREACH(SRC, OR, 0) by hand."""
    x86_host()
    (tmp_path / "ccopt_config.h").write_text(config_header(doc))
    (tmp_path / "ccopt_kernel.h").write_text(kernel_header(doc))
    for name, text in {"pitch": "baseline sse41 (avx2 fma3)", "vq": "sse42"}.items():
        header = dispatch_header(f"{name}.dispatch.c", select(parse_targets(text, name), doc))
        (tmp_path / f"{name}.dispatch.h").write_text(header)
    main_c = "\n".join([
        "#include <stdio.h>", '#include "pitch.dispatch.h"', '#include "vq.dispatch.h"',
        "int main(void) {",
        '  printf("%d %d %d %d %d\\n", CCOPT_DISPATCH_RUNS(pitch_dispatch), CCOPT_DISPATCH_RUNS(vq_dispatch),',
        "         CCOPT_DISPATCH_CHECK(pitch_dispatch, SSE41), CCOPT_DISPATCH_CHECK(pitch_dispatch, FMA3__AVX2),",
        "         CCOPT_DISPATCH_CHECK(pitch_dispatch, BASELINE));",
        "  return 0;", "}", ""])
    got = {env: compile_and_run(tmp_path, gcc, main_c, {"CCOPT_ENABLE_CPU_FEATURES": env}).stdout.strip()
           for env in ("SSE41", "BASELINE")}
    assert got == {"SSE41": "1 0 1 0 1", "BASELINE": "0 0 0 0 1"}
    with pytest.raises(subprocess.CalledProcessError):  # a target the source was not compiled for
        compile_and_run(tmp_path, gcc, main_c.replace("(pitch_dispatch, SSE41)", "(pitch_dispatch, AVX512F)"))


@pytest.mark.parametrize("flags", [(), ("-O2", "-DNDEBUG")], ids=["debug", "release"])
def test_ccopt_trace_names_the_picked_version_once(doc: Detection, tmp_path: Path, gcc: str,
                                                   flags: tuple[str, ...]) -> None:
    """CCOPT_TRACE=1: each dispatcher's first call prints which version it picked and why, once, in a release
    build (NDEBUG) too; unset, the program prints nothing of ccopt's (the check is on the first call's path
    only)."""
    x86_host()
    (tmp_path / "ccopt_config.h").write_text(config_header(doc))
    (tmp_path / "ccopt_kernel.h").write_text(kernel_header(doc))
    targets = select(parse_targets("baseline sse41 (avx2 fma3)", "dot"), doc)
    (tmp_path / "dot.dispatch.h").write_text(dispatch_header("dot.dispatch.c", targets))
    main_c = "\n".join([
        "#include <stdio.h>", '#include "dot.dispatch.h"',
        *(f'int dot_{t.name}(int x) {{ return x + {i}; }}' for i, t in enumerate(targets)),
        "CCOPT_DISPATCH_DECLARE(dot_dispatch, int, dot, (int x))",
        "CCOPT_DISPATCH_DEFINE(dot_dispatch, int, dot, (int x), (x))",
        "int main(void) { int i, s = 0; for (i = 0; i < 3; ++i) s += dot(i); printf(\"%d\\n\", s); return 0; }", ""])
    runs = {(feats, trace): compile_and_run(tmp_path, gcc, main_c, {"CCOPT_ENABLE_CPU_FEATURES": feats,
                                                                     "CCOPT_TRACE": trace}, flags)
            for feats in ("SSE41", "BASELINE") for trace in ("1", "0")}
    assert all(r.returncode == 0 for r in runs.values())
    assert runs["SSE41", "1"].stderr == "ccopt: dot: SSE41 (SSE41 present)\n"
    assert runs["BASELINE", "1"].stderr == ("ccopt: dot: BASELINE (no compiled version above the baseline runs on "
                                            "this CPU)\n")
    assert runs["SSE41", "0"].stderr == runs["BASELINE", "0"].stderr == ""


def test_ccopt_trace_names_every_member_of_a_multi_feature_target(tmp_path: Path, gcc: str) -> None:
    main_c = '#include "ccopt_cpu.h"\nint main(void) { ccopt_cpu_trace("dot", "FMA3__AVX2"); return 0; }\n'
    r = compile_and_run(tmp_path, gcc, main_c, {"CCOPT_TRACE": "yes"})
    assert r.returncode == 0 and r.stderr == "ccopt: dot: FMA3__AVX2 (FMA3 AVX2 present)\n"


# What a library means by its "AVX2" code, and what Highway's HWY_AVX2 needs (hwy/detect_targets.h: its
# SSE4 level's SSE4.1, SSE4.2, PCLMUL and AES, then AVX2, BMI2, FMA and F16C), as docs/reference/features.md
# writes them.
AVX2_NAMES = {
    "avx2": {"__AVX2__", "__F16C__"},
    "(avx2 fma3)": {"__AVX2__", "__F16C__", "__FMA__"},
    "(avx2 fma3 bmi2 aes pclmulqdq)": {"__AVX2__", "__F16C__", "__FMA__", "__BMI2__", "__AES__", "__PCLMUL__",
                                       "__SSE4_1__", "__SSE4_2__"},
}


@pytest.mark.parametrize("text", list(AVX2_NAMES))
def test_the_avx2_names_of_the_docs_define_what_they_promise(doc: Detection, tmp_path: Path, text: str) -> None:
    """numpy's `avx2` has no FMA (a kernel calling _mm256_fmadd_ps fails with 'target specific option
    mismatch', one testing __FMA__ silently runs mul+add); `(avx2 fma3)` is AVX2 with FMA; Highway's AVX2
    level also needs BMI2, AES and PCLMUL, which x86_v3 lacks two of."""
    gcc = x86_gcc()
    (target,) = select(parse_targets(text, "k"), doc)
    flags = [a for a in target.args if not a.startswith("-D")]
    out = subprocess.run([gcc, *flags, "-dM", "-E", "-x", "c", "/dev/null"], capture_output=True, text=True,
                         check=True).stdout
    defined = set(re.findall(r"^#define (__\w+__) ", out, re.M))
    assert AVX2_NAMES[text] <= defined and ("__FMA__" in defined) == ("fma3" in text)
    assert f"`{text}`" in (ROOT / "docs" / "reference" / "features.md").read_text()


def test_a_source_whose_header_is_missing_is_a_compile_error_naming_it(doc: Detection, tmp_path: Path,
                                                                      gcc: str) -> None:
    (tmp_path / "ccopt_config.h").write_text(config_header(doc))
    (tmp_path / "ccopt_kernel.h").write_text(kernel_header(doc))
    with pytest.raises(subprocess.CalledProcessError):
        compile_and_run(tmp_path, gcc, '#include "ccopt_dispatch.h"\n'
                        "CCOPT_DISPATCH_DECLARE(nope_dispatch, int, k, (void))\nint main(void) { return 0; }\n")


def test_source_ids() -> None:
    assert source_id("src/dot.dispatch.c") == "dot_dispatch"
    assert source_id("a-b.dispatch.cpp") == "a_b_dispatch"


# --------------------------------------------------------------------------- the targets lines


@pytest.fixture
def cache_file(tmp_path: Path, fake: Callable[..., Any]) -> Path:
    build = tmp_path / "build"
    detect(Request(command=("fakecc",), baseline="min", dispatch="max -xop -fma4"), build_dir=build, runner=fake())
    return build / "ccopt-features.json"


def run_targets(capsys: Any, cache_file: Path, out: Path, *args: str) -> list[list[str]]:
    code = main(["targets", *args, "--cache-file", str(cache_file), "--output-dir", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return [line.split("\t") for line in captured.out.splitlines()]


def test_target_lists_in_meson_build_never_read_the_source(tmp_path: Path, cache_file: Path, capsys: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # neither source exists: only its name is used
    lines = run_targets(capsys, cache_file, tmp_path, "x.dispatch.c: baseline avx2 sse42",
                        "src/y.dispatch.c: avx2 asimd")
    libs = {lib: (args.split(), sources.split()) for lib, args, sources, _ in lines}
    # the last field is the target, what ccopt-cpu-info --run-as takes
    assert [target for *_, target in lines] == ["BASELINE", "SSE42", "AVX2"]
    assert list(libs) == ["ccopt_BASELINE", "ccopt_SSE42", "ccopt_AVX2"]  # one library per set of args, ascending
    assert libs["ccopt_AVX2"][1] == ["x.dispatch.c", "src/y.dispatch.c"]
    assert (tmp_path / "x.dispatch.h").is_file() and (tmp_path / "y.dispatch.h").is_file()
    assert "the target list of x.dispatch.c" in (tmp_path / "x.dispatch.h").read_text()


def test_an_empty_target_list_in_meson_build_gives_no_library_and_an_empty_header(
        tmp_path: Path, cache_file: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy computes its lists ('AVX512_SKX AVX2' or '' when -Ddisable-intel-sort): an empty one is no version
    at all, and the caller that includes the header still compiles, as with the fork's multi_targets(dispatch: [])."""
    monkeypatch.chdir(tmp_path)
    assert run_targets(capsys, cache_file, tmp_path, "e.dispatch.cpp: ", "k.dispatch.c: avx2") == [
        ["ccopt_AVX2", run_targets(capsys, cache_file, tmp_path, "k.dispatch.c: avx2")[0][1], "k.dispatch.c",
         "AVX2"]]
    assert "CCOPT_SRC_" in (tmp_path / "e.dispatch.h").read_text()


def test_target_args_repeat_neither_the_baseline_nor_meson_s_own_o3(tmp_path: Path, cache_file: Path,
                                                                     capsys: Any) -> None:
    def avx2(*extra: str) -> list[str]:
        lines = run_targets(capsys, cache_file, tmp_path, "k.dispatch.c: $maxopt avx2", *extra)
        assert lines[0][0] == "ccopt_AVX2_maxopt"
        return lines[0][1].split()

    args = avx2("--optimization", "2")
    assert "-O3" in args and "-mavx2" in args and "-DCCOPT_TARGET=AVX2" in args
    assert not {"-msse", "-msse2", "-msse3", "-DCCOPT_HAVE_SSE=1"} & set(args)  # ccopt_dep gives those
    assert args[:4] == ["-include", "ccopt_kernel.h", "-include", "ccopt_dispatch.h"]
    assert "-O3" not in avx2("--optimization", "3")


def test_sources_are_handed_back_relative_to_the_caller(tmp_path: Path, cache_file: Path, capsys: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """An absolute path (what files() gives) would put the whole path into Meson's object names."""
    src = tmp_path / "src" / "k.dispatch.c"
    src.parent.mkdir()
    src.write_text("/*@targets avx2 */\n")
    monkeypatch.chdir(tmp_path)
    assert run_targets(capsys, cache_file, tmp_path, str(src))[0][2] == "src/k.dispatch.c"


@pytest.mark.parametrize("arg,message", [
    ("{src}", "src/k.dispatch.c:2: unknown target 'avx3'"),
    ("src/k.dispatch.c: avx2 avx3", "targets of src/k.dispatch.c: unknown target 'avx3'"),
])
def test_error_locations_keep_the_directory(tmp_path: Path, cache_file: Path, capsys: Any,
                                            monkeypatch: pytest.MonkeyPatch, arg: str, message: str) -> None:
    src = tmp_path / "src" / "k.dispatch.c"
    src.parent.mkdir()
    src.write_text("int a;\n/*@targets avx3 */\n")
    monkeypatch.chdir(tmp_path)
    code = main(["targets", arg.format(src=src), "--cache-file", str(cache_file), "--output-dir", str(tmp_path)])
    assert code == 1 and f"ccopt-meson: error: {message}" in capsys.readouterr().err


# --------------------------------------------------------------------------- point 5


def test_multi_feature_targets_are_named_lowest_first_as_documented(doc: Detection) -> None:
    assert [t.name for t in select(parse_text("/*@targets (avx2 fma3) */"), doc)] == ["FMA3__AVX2"]
    assert "`(avx2 fma3)` builds the target `FMA3__AVX2`" in (ROOT / "docs" / "reference" / "grammars.md").read_text()


@pytest.mark.parametrize("text", ["", "  ", ", ,", "+", "-"])
def test_an_empty_expression_or_a_lone_operator_means_none(text: str, fake: Callable[..., Any]) -> None:
    assert tokenize(text, "cpu-dispatch") == [Token("+", "NONE")]
    det = detect(Request(command=("fakecc",), baseline="min", dispatch=text), runner=fake())
    assert det.dispatch == () and det.baseline == ("SSE", "SSE2", "SSE3")


def test_explain_a_feature_of_another_architecture_reads_well(doc: Detection) -> None:
    assert "NEON is an arm feature" in explain_feature(doc, "NEON")["reason"]
    arm_macros = "#define __aarch64__ 1\n#define __GNUC__ 12\n"
    arm = detect(Request(command=("fakecc",)), runner=FakeCompiler(macros=arm_macros))
    assert "AVX2 is an x86 feature" in explain_feature(arm, "AVX2")["reason"]


@pytest.mark.parametrize("alias,machine", [("arm64", "aarch64"), ("amd64", "x86_64")])
def test_features_takes_architecture_aliases(alias: str, machine: str, capsys: Any) -> None:
    assert main(["features", "--arch", alias, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["arch"] == machine


def test_report_says_what_raised_the_baseline(fake: Callable[..., Any]) -> None:
    det = detect(Request(command=("fakecc",), args=("-O2", "-march=native")), runner=fake())
    assert det.baseline_request() == "'detect' + what -march=native enables"
    assert detect(Request(command=("fakecc",)), runner=fake()).baseline_request() == "'detect'"


BELOW_BASELINE = [  # (request fields, what the below-baseline line says set the baseline, the cure it offers)
    ({"args": ("-march=haswell",)}, "set by -march=haswell in c_args", "build it with a lower CPU (or none) in c_args"),
    ({"command": ("fakecc", "-march=haswell")}, "set by -march=haswell in the compiler command",
     "build it with a lower CPU (or none) in the compiler command"),
    ({"baseline": "avx2"}, "set by cpu-baseline=avx2", "build it with -Dccopt-meson:cpu-baseline=detect"),
    ({"baseline": "avx2", "args": ("-O2", "-march=haswell"), "lang": "cpp"},
     "set by cpu-baseline=avx2 and -march=haswell in cpp_args",
     "build it with -Dccopt-meson:cpu-baseline=detect and a lower CPU (or none) in cpp_args"),
    ({}, "set by what the compiler targets by default",
     "build it with a lower CPU in c_args (-march= or the compiler's spelling)"),
    ({"baseline": "min  avx2"}, "set by cpu-baseline=(min avx2)", "build it with -Dccopt-meson:cpu-baseline=detect"),
    ({"baseline": "sse2 $\"x", "baseline_detect": "disabled", "args": ("-march=haswell",)},
     "set by cpu-baseline", "build it with -Dccopt-meson:cpu-baseline=detect"),
    ({"args": ("-march=\"x\"",)}, "set by a CPU choice in c_args", "build it with a lower CPU (or none) in c_args"),
]


@pytest.mark.parametrize("fields,cause,cure", BELOW_BASELINE)
def test_the_below_baseline_line_names_what_set_the_baseline_and_a_cure_that_lowers_it(
        fields: dict[str, Any], cause: str, cure: str) -> None:
    """-Dc_args=-march=haswell advised -Dccopt-meson:cpu-baseline=detect, which was already the setting: the
    cure is now the change of whatever raised the baseline, and the default option is never offered."""
    assert Request(**{"command": ("fakecc",), **fields}).baseline_cause() == (cause, cure)


# --------------------------------------------------------------------------- the run-time knobs tests use


@pytest.fixture(scope="module")
def cpu_info(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gcc = need("gcc")
    exe = tmp_path_factory.mktemp("cpu-info") / "ccopt-cpu-info"
    write_table(exe.parent)  # what configure writes into the build directory
    subprocess.run([gcc, "-I", str(exe.parent), "-I", str(RUNTIME), str(RUNTIME / "ccopt_cpu_info.c"),
                    str(RUNTIME / "ccopt_cpu.c"), "-o", str(exe)], check=True)
    return exe


def info(exe: Path, env: dict[str, str] | None = None) -> tuple[dict[str, bool], str]:
    base = clean_env()
    r = subprocess.run([str(exe), "--json"], capture_output=True, text=True, env={**base, **(env or {})}, check=True)
    return json.loads(r.stdout)["features"], r.stderr


def test_enable_list_without_a_known_name_is_ignored_whole(cpu_info: Path) -> None:
    plain, _ = info(cpu_info)
    got, err = info(cpu_info, {"CCOPT_ENABLE_CPU_FEATURES": "AVX3"})
    assert "unknown CPU feature 'AVX3'; ignored" in err and "names no CPU feature" in err
    assert got == plain  # "ignored" means ignored: not every dispatch feature switched off


def test_enable_baseline_keeps_only_the_baseline(cpu_info: Path) -> None:
    got, err = info(cpu_info, {"CCOPT_ENABLE_CPU_FEATURES": "BASELINE"})
    assert err == "" and not any(got.values())  # built without baseline flags: the baseline is empty


def test_run_as_sets_the_environment_or_skips(cpu_info: Path) -> None:
    have, _ = info(cpu_info)
    show = ["sh", "-c", 'echo "$CCOPT_ENABLE_CPU_FEATURES"']
    env = clean_env()
    r = subprocess.run([str(cpu_info), "--run-as", "BASELINE", *show], capture_output=True, text=True, env=env)
    assert (r.returncode, r.stdout.strip()) == (0, "BASELINE")
    present = [n for n, ok in have.items() if ok]
    missing = [n for n, ok in have.items() if not ok]
    if len(present) >= 2:
        pair = f"{present[0]}__{present[-1]}"  # a multi-feature target name
        r = subprocess.run([str(cpu_info), "--run-as", pair, *show], capture_output=True, text=True, env=env)
        assert (r.returncode, r.stdout.strip()) == (0, f"{present[0]} {present[-1]}")
    if missing:
        r = subprocess.run([str(cpu_info), "--run-as", missing[0], *show], capture_output=True, text=True, env=env)
        assert r.returncode == 77 and f"lacks {missing[0]}: skipped" in r.stdout  # Meson's "skipped"
    r = subprocess.run([str(cpu_info), "--run-as", "AVX3", "true"], capture_output=True, text=True, env=env)
    assert r.returncode == 2


# --------------------------------------------------------------------------- an independent oracle

# /proc/cpuinfo flag names (what py-cpuinfo reports) of features ccopt detects with cpuid alone
CPUINFO_FLAGS = {"SSE": "sse", "SSE2": "sse2", "SSE3": "pni", "SSSE3": "ssse3", "SSE41": "sse4_1",
                 "SSE42": "sse4_2", "POPCNT": "popcnt", "AVX": "avx", "F16C": "f16c", "FMA3": "fma",
                 "AVX2": "avx2", "AVX512F": "avx512f", "AVX512CD": "avx512cd", "XOP": "xop", "FMA4": "fma4"}


def test_runtime_detection_agrees_with_py_cpuinfo(cpu_info: Path) -> None:
    """py-cpuinfo reads the CPU by its own means: ccopt's run-time answer must match it, flag by flag."""
    cpuinfo = pytest.importorskip("cpuinfo", reason="py-cpuinfo is a test extra: pip install -e '.[test]'")
    x86_host()
    flags = set(cpuinfo.get_cpu_info().get("flags", []))
    have, _ = info(cpu_info)
    disagree = {n: (have[n], flag in flags) for n, flag in CPUINFO_FLAGS.items() if have[n] != (flag in flags)}
    assert not disagree, f"feature: (ccopt, py-cpuinfo) {disagree}"


# --------------------------------------------------------------------------- packaging


def test_meson_minimum_agrees_across_pyproject_meson_build_readme_and_projects() -> None:
    project = re.search(r"meson_version: '>=([\d.]+)'", (ROOT / "meson.build").read_text())
    assert project
    minimum = project.group(1)
    assert f'"meson>={minimum}"' in (ROOT / "pyproject.toml").read_text()
    assert f"Meson >= {minimum} and a C compiler" in (ROOT / "README.md").read_text()
    assert f"Meson >= {minimum} (Debian 12's" in (ROOT / "docs" / "tutorial" / "use-from-meson.md").read_text()
    # a project using a later Meson's feature says so: glibc-hwcaps variants need build_subdir (Meson 1.10), which
    # docs/how-to/hwcaps-variants.md states; the subproject itself keeps the minimum
    later = {"hwcaps": "1.10"}
    assert "Meson 1.10" in (ROOT / "docs" / "how-to" / "hwcaps-variants.md").read_text().replace("\n", " ")
    for path in [ROOT / "README.md", ROOT / "examples" / "dot" / "meson.build",
                 *sorted((ROOT / "tests" / "projects").glob("*/meson.build"))]:
        allowed = {later.get(path.parent.name, minimum)}
        assert set(re.findall(r"meson_version: '>=([\d.]+)'", path.read_text())) <= allowed, path


def test_py_cpuinfo_is_a_test_dependency_not_a_runtime_one() -> None:
    runtime, extras = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")
    assert "py-cpuinfo" not in runtime and "py-cpuinfo" in extras.split("\n\n")[0]
