"""The ISA audit (ccopt_meson/audit.py, decode.py): what each object may use, the decoders' names in the tables,
and real builds that fail for the right reason (issue 33's two mistakes, on x86_64 and aarch64 cross, and a
project feature whose flags exceed its run-time test) or pass (the README's example, the fixture projects)."""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ccopt_meson import audit, cli, schema, tables
from ccopt_meson.audit import build as audit_build_dir
from ccopt_meson.audit import check, decode, elf
from ccopt_meson.errors import AuditUnavailable
from ccopt_meson.meson_glue import read_configured

from .conftest import ROOT, need, need_module
from .snippets import snippet
from .test_meson import Build, project, written

IS_X86_64 = platform.machine().lower() in ("x86_64", "amd64")
INSTALL = "the package's 'audit' extra"


def audit_json(build: Path, *options: str) -> tuple[int, dict[str, Any]]:
    r = subprocess.run([sys.executable, "-m", "ccopt_meson", "audit", "--json", *options, str(build)],
                       capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def highest_findings(doc: dict[str, Any]) -> dict[str, set[str]]:
    """Object -> the features its offending functions need."""
    return {o["object"]: {f["highest"] for f in o["findings"]} for o in doc["objects"] if o["findings"]}


# --------------------------------------------------------------------------- data


def test_the_pins_of_audit_json_are_the_audit_extra() -> None:
    schema.check(decode.audit_data(), "audit.schema.json")
    line = re.search(r"^audit = (\[.*\])$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert line is not None
    extra = json.loads(line.group(1))
    assert sorted(extra) == sorted(decode.requirements())


def test_the_audit_snippets_are_the_pins_and_the_fixtures_test() -> None:
    pins = " ".join(f"'{r}'" for r in decode.requirements())
    assert snippet("audit/install").strip() == f"python3 -m pip install {pins}"
    fixture = (ROOT / "tests" / "projects" / "isa_audit" / "meson.build").read_text()
    assert snippet("audit/meson-test").strip() in fixture


def test_every_family_with_a_decoder_names_only_what_that_decoder_reports() -> None:
    iced = need_module("iced_x86", INSTALL)
    cs = need_module("capstone", INSTALL)
    md = cs.Cs(cs.CS_ARCH_AARCH64, cs.CS_MODE_ARM)
    known = {"iced-x86": {k for k in vars(iced.CpuidFeature) if k.isupper()},
             "capstone": {md.group_name(v) for k, v in vars(cs.aarch64_const).items()
                          if k.startswith(("AARCH64_FEATURE_", "AARCH64_GRP_")) and md.group_name(v)}}
    for fam in tables.families():
        section = tables.raw_family(fam).get("audit")
        if section is None:
            continue
        names = set(section["base"]) | {n for f in tables.raw_family(fam)["features"] for n in f.get("audit", ())}
        assert names <= known[section["decoder"]], (fam, names - known[section["decoder"]])


def test_the_abi_is_the_floor_of_a_project_set_that_names_no_row_for_it(tmp_path: Path) -> None:
    """A feature_set without SSE and SSE2 rows: every baseline object's SSE2 code was 'unknown', a finding."""
    from ccopt_meson import project
    from ccopt_meson.audit import allow

    path = tmp_path / "f.json"
    path.write_text(json.dumps({"feature_set": {"x86": {"features": [
        {"name": "R1", "like": "X86_V2", "interest": 10, "implies": []}]}}}))
    may = allow.for_checks(tables.table_for("x86_64", "gcc", project.load(path)), (), (), "BASELINE")
    assert {"SSE", "SSE2"} <= may.decoded and "SSE4_2" not in may.decoded


def test_a_widened_test_allows_what_it_checks_though_no_row_of_the_project_names_it(tmp_path: Path) -> None:
    """B like X86_V2 with -msse ... -mpopcnt checks SSE4.2's bit (its test was widened), but inherits X86_V2's
    decoder names only (CMPXCHG16B): its CRC32 instruction was 'unknown', a finding."""
    from ccopt_meson import project
    from ccopt_meson.audit import allow

    path = tmp_path / "f.json"
    path.write_text(json.dumps({"feature_set": {"x86": {"features": [
        {"name": "B", "like": "X86_V2", "interest": 1, "implies": [],
         "flags": {"gnu": ["-msse", "-msse2", "-msse3", "-mssse3", "-msse4.1", "-msse4.2", "-mpopcnt"]}}]}}}))
    t = tables.table_for("x86_64", "gcc", project.load(path))
    may = allow.for_checks(t, (), ("B",), "B")
    assert {"SSE4_2", "POPCNT", "SSSE3", "CMPXCHG16B"} <= may.decoded and "AVX" not in may.decoded


def test_every_feature_with_a_runtime_test_of_its_own_names_what_the_decoder_reports_for_it() -> None:
    """A row whose instructions the decoder names must carry those names, or its versions' code would be
    'unknown'; levels and groups (X86_V3, AVX512_SKX) and aliases of another row's test carry none."""
    for fam in ("x86", "arm"):
        rows = tables.raw_family(fam)["features"]
        missing = [f["name"] for f in rows if not f.get("audit") and not f.get("group")
                   and not f["name"].endswith("_ISA") and "X86_V" not in f["name"]]
        assert set(missing) <= {"NEON_FP16", "NEON_VFPV4", "ASIMD", "PMULL", "AVX512_SKX", "AVX512_CLX",
                                "AVX512_CNL", "AVX512_ICL", "AVX512_SPR", "AVX512_KNL", "AVX512_KNM"}, missing


# --------------------------------------------------------------------------- what an object may use


def test_a_version_may_use_the_baseline_and_exactly_what_its_test_checks(gcc12_x86_64_cache_file: Path) -> None:
    det = read_configured(gcc12_x86_64_cache_file)
    base = audit.allowance(det, "BASELINE")
    # the default baseline, detect: what gcc targets by default on x86_64 (SSE SSE2), not SSE3
    assert {"SSE2", "X64"} <= base.decoded and not {"SSE3", "AVX", "TZCNT"} & base.decoded
    avx2 = audit.allowance(det, "AVX2")
    assert {"AVX2", "AVX", "F16C", "SSE4_2", "POPCNT"} <= avx2.decoded
    assert not {"FMA", "BMI1", "AVX512F"} & avx2.decoded  # AVX2's test checks neither FMA3 nor BMI
    assert avx2.names == ("AVX2",)
    v3 = audit.allowance(det, "X86_V3")
    assert {"FMA", "BMI1", "BMI2", "LZCNT", "MOVBE", "AVX2"} <= v3.decoded and "AVX512F" not in v3.decoded
    assert {"AVX512F", "AVX512VL", "AVX512BW", "AVX512DQ"} <= audit.allowance(det, "AVX512_SKX").decoded


def test_a_missing_decoder_is_one_line_with_the_pip_command() -> None:
    with pytest.raises(AuditUnavailable) as exc:
        decode._module({"module": "ccopt_no_such_module", "requirement": "no-such==1.0"})  # noqa: SLF001
    assert "python3 -m pip install 'no-such==1.0'" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("content", [b"", b"\xcf\xfa\xed\xfe not ELF", b"\x7fELF\x02\x01\x01" + b"\0" * 9])
def test_a_file_the_audit_cannot_read_is_an_error_naming_it(tmp_path: Path, content: bytes,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    need_module("elftools", INSTALL)
    (tmp_path / "f.so").write_bytes(content)
    assert cli.main(["audit", str(tmp_path / "f.so")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "f.so" in err and "Traceback" not in err


def test_a_dangling_link_is_an_error_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "gone.so").symlink_to(tmp_path / "nothing")
    assert cli.main(["audit", str(tmp_path / "gone.so")]) == 2
    assert "gone.so" in capsys.readouterr().err


def test_a_directory_without_elf_files_is_an_error_not_a_pass(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "README").write_text("nothing to run\n")
    assert cli.main(["audit", str(tmp_path)]) == 2
    assert "no ELF file" in capsys.readouterr().err


def test_an_error_is_exit_2_and_meson_test_mode_skips_with_77(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["audit", str(tmp_path / "none")]) == 2
    assert "ccopt-meson: error: " in capsys.readouterr().err

    def unavailable(build_dir: object, linked: bool = False, level: object = None) -> audit.Result:
        raise AuditUnavailable("the ISA audit needs iced-x86, which is not installed; install it with: ...")

    monkeypatch.setattr(audit_build_dir, "audit_build", unavailable)
    (tmp_path / "meson-info").mkdir()
    (tmp_path / "meson-info" / "intro-targets.json").write_text("[]")
    assert cli.main(["audit", str(tmp_path)]) == 2
    assert cli.main(["audit", "--meson-test", str(tmp_path)]) == 77
    assert "ccopt-meson: skipped: the ISA audit needs iced-x86" in capsys.readouterr().out


def _object(tmp_path: Path, text: str, *flags: str) -> bytes:
    src = tmp_path / "f.c"
    src.write_text(text)
    subprocess.run([need("gcc"), "-O2", *flags, "-c", str(src), "-o", str(tmp_path / "f.o")], check=True)
    return (tmp_path / "f.o").read_bytes()


@pytest.mark.skipif(not IS_X86_64, reason="compiles x86_64 objects with the host's gcc")
def test_decoding_names_the_function_and_its_first_offending_instruction(tmp_path: Path) -> None:
    need_module("iced_x86", INSTALL)
    need_module("elftools", INSTALL)
    raw = _object(tmp_path, "#include <immintrin.h>\nint lo(int x) { return __builtin_ctz(x); }\n"
                  "void hi(int *p) { _mm256_storeu_si256((__m256i *)p, _mm256_abs_epi32(_mm256_loadu_si256("
                  "(const __m256i *)p))); }\n", "-mavx2")
    table = tables.table_for("x86_64", "gcc")
    base = frozenset({"INTEL386", "X64", "SSE", "SSE2", "MULTIBYTENOP", "CET_IBT"})
    may = audit.Allowance("BASELINE", ("SSE2",), base)
    report = check.check_object(elf.read("f.o", raw), table, may)
    by_name = {f.function: f for f in report.findings}
    assert "lo" not in by_name  # TZCNT: BSF on a CPU without BMI1
    assert by_name["hi"].highest == "AVX2" and by_name["hi"].instruction.startswith("v")


# --------------------------------------------------------------------------- real builds


def isa_build(tmp_path: Path, *setup: str) -> Build:
    need_module("iced_x86", INSTALL)
    b = Build(tmp_path, project(tmp_path, "isa_audit"))
    if "--cross-file" in setup:
        b.env.pop("CC")
        b.env.pop("CXX")
    b.meson_cmd("setup", *setup, str(b.dir))
    b.ninja()
    return b


def meson_test(b: Build, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*b.meson, "test", "-C", str(b.dir), name, "--print-errorlogs"], env=b.env,
                          capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.skipif(not IS_X86_64, reason="the mistakes are x86_64 flags")
def test_the_issues_two_mistakes_fail_the_audit_and_its_meson_test(tmp_path: Path) -> None:
    b = isa_build(tmp_path, "-Dmistakes=true")
    code, doc = audit_json(b.dir)
    assert code == 1
    assert highest_findings(doc) == {"app.p/main.c.o": {"AVX2"}, "libccopt_AVX2.a.p/k.dispatch.c.o": {"AVX512F"}}
    r = meson_test(b, "isa audit")
    assert r.returncode != 0 and "needs AVX512F" in r.stdout + r.stderr
    # This machine has AVX2 and no AVX-512: 'app' picks the AVX2 version and dies with SIGILL here, while on
    # an AVX-512 machine it passes; that depends on the CPU, so only the audit above is asserted.


@pytest.mark.slow
def test_the_same_mistakes_on_aarch64_are_crc32_and_sve(tmp_path: Path) -> None:
    need("aarch64-linux-gnu-gcc")
    need_module("capstone", INSTALL)
    b = isa_build(tmp_path, "--cross-file", str(ROOT / "tests" / "cross" / "aarch64.ini"), "-Dmistakes=true")
    code, doc = audit_json(b.dir)
    assert code == 1
    assert highest_findings(doc) == {"app.p/main.c.o": {"CRC32"}, "libccopt_ASIMDDP.a.p/k.dispatch.c.o": {"SVE"}}


@pytest.mark.slow
def test_a_clean_build_passes_the_audit_and_its_meson_test(tmp_path: Path) -> None:
    b = isa_build(tmp_path)
    code, doc = audit_json(b.dir)
    assert code == 0 and doc["findings"] == 0 and len(doc["objects"]) >= 4
    r = meson_test(b, "isa audit")
    assert r.returncode == 0 and "SKIP" not in r.stdout, r.stdout


HASWELL_FEATURES = {
    "comment": "HSW is picked on AVX2's run-time test alone, but its flags (-march=haswell) also enable FMA and BMI",
    "features": {"x86": [
        {"name": "HSW", "interest": 2000, "implies": ["AVX2"], "headers": ["immintrin.h"], "macros": ["__AVX2__"],
         "flags": {"gnu": ["-march=haswell"]}, "probe": "hsw.c",
         "runtime": {"*": {"cpuid": [[7, 0, "ebx", 5]], "xcr0": 6}}}]},
}


@pytest.mark.slow
@pytest.mark.skipif(not IS_X86_64, reason="an x86_64 project feature")
def test_a_project_feature_whose_flags_exceed_its_test_is_not_built_and_the_build_audits_clean(tmp_path: Path) -> None:
    """-march=haswell enables FMA and BMI, which the row's one AVX2 bit does not check: the compiler's macros say
    so at configure time, the row is not built, and nothing of it reaches the audit (a version built beyond its
    test anyway, with extra flags, is the seeded corpus's fault)."""
    need_module("iced_x86", INSTALL)
    src = written(tmp_path / "hsw", {
        "features.json": json.dumps(HASWELL_FEATURES),
        "hsw.c": "#include <immintrin.h>\nint main(void) { return _mm256_movemask_epi8(_mm256_set1_epi8(1)) != -1; }\n",
        "k.dispatch.c": "#include <stddef.h>\nvoid CCOPT_FN(axpy)(float *y, const float *x, float a, size_t n)\n"
                        "{ size_t i; for (i = 0; i < n; i++) y[i] = a * x[i] + y[i]; }\n",
        "meson.build": "project('hsw', 'c', default_options: ['buildtype=release'])\n"
                       "ccopt = subproject('ccopt-meson', default_options: ['features-file=features.json'])\n"
                       "r = run_command(ccopt.get_variable('targets'), 'k.dispatch.c: baseline hsw', check: true)\n"
                       "foreach line : r.stdout().strip().split('\\n')\n  t = line.split('\\t')\n"
                       "  static_library(t[0], t[2].split(), c_args: t[1].split(), dependencies: dependency('ccopt'))\n"
                       "endforeach\n"})
    b = Build(tmp_path, src)
    out = b.meson_cmd("setup", str(b.dir))
    assert "HSW is not built" in out
    b.ninja()
    code, doc = audit_json(b.dir, "--linked")
    assert code == 0 and not any("HSW" in o["object"] for o in doc["objects"]), highest_findings(doc)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dot", "consumer", "fine_targets", "cxx_only", "numpy_protocol", "shared_lib"])
def test_the_readme_example_and_the_fixture_projects_audit_clean(tmp_path: Path, name: str) -> None:
    need_module("iced_x86" if IS_X86_64 else "capstone", INSTALL)
    b = Build(tmp_path, project(tmp_path, name))
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    code, doc = audit_json(b.dir, "--linked")  # the objects, and every function of the linked files
    assert code == 0, highest_findings(doc)


LEAK = {
    "sum.h": "__attribute__((noinline)) inline int sum_squares(const int *v, int n)\n"
             "{ int s = 0; for (int i = 0; i < n; i++) s += v[i] * v[i]; return s; }\n",
    "k.dispatch.cpp": "#include \"sum.h\"\nextern \"C\" int CCOPT_FN(twice)(const int *v, int n) "
                      "{ return 2 * sum_squares(v, n); }\n",
    "util.cpp": "#include \"sum.h\"\nint util_sum(const int *v, int n) { return sum_squares(v, n); }\n",
    "main.cpp": "#include \"k.dispatch.h\"\nint util_sum(const int *v, int n);\nextern \"C\" {\n"
                "CCOPT_DISPATCH_DECLARE(k_dispatch, int, twice, (const int *v, int n))\n"
                "CCOPT_DISPATCH_DEFINE(k_dispatch, int, twice, (const int *v, int n), (v, n))\n}\n"
                "int main() { int v[64] = {1}; return twice(v, 64) == 2 * util_sum(v, 64) ? 0 : 1; }\n",
    # the libraries highest first (ccopt's lines come lowest first): the AVX2 object is the first to define
    # sum_squares, so the linker keeps its copy, and util_sum, baseline code, calls it
    "meson.build": "project('leak', 'cpp', default_options: ['buildtype=release', 'ccopt-meson:languages=cpp'])\n"
                   "ccopt = subproject('ccopt-meson')\nccopt_dep = dependency('ccopt')\n"
                   "r = run_command(ccopt.get_variable('targets_cpp'), 'k.dispatch.cpp: $maxopt baseline avx2',"
                   " check: true)\nlibs = []\nforeach line : r.stdout().strip().split('\\n')\n"
                   "  t = line.split('\\t')\n  libs = [static_library(t[0], t[2].split(), cpp_args: t[1].split(),"
                   " dependencies: ccopt_dep)] + libs\nendforeach\n"
                   "util = static_library('util', 'util.cpp', cpp_args: ['-O3'])\n"
                   "executable('app', 'main.cpp', link_with: libs + [util], dependencies: ccopt_dep)\n",
}


@pytest.mark.slow
@pytest.mark.skipif(not IS_X86_64, reason="an x86_64 target")
def test_an_inline_function_the_linker_took_from_a_version_is_a_linked_finding(tmp_path: Path) -> None:
    need_module("iced_x86", INSTALL)
    b = Build(tmp_path, written(tmp_path / "leak", LEAK))
    b.meson_cmd("setup", str(b.dir))
    b.ninja()
    code, doc = audit_json(b.dir)
    assert code == 0  # each object's copy is right for that object
    code, doc = audit_json(b.dir, "--linked")
    assert code == 1 and highest_findings(doc) == {"app": {"AVX2"}}
    finding = next(o for o in doc["objects"] if o["object"] == "app")["findings"][0]
    assert "sum_squares" in finding["function"] and finding["may_use"] == "BASELINE"


@pytest.mark.parametrize(("arch", "family"), [("x86_64", "x86"), ("aarch64", "arm")])
def test_numpys_levels_allow_what_the_built_in_levels_of_their_name_allow(arch: str, family: str) -> None:
    """numpy 2.5.5's rows are 'like' ccopt's but imply none of ccopt's lower rows: each must name the decoder's
    names of its whole level itself, or its baseline code is 'unknown' (the port's x86_64 build: 2026-12-03)."""
    from ccopt_meson import project

    path = ROOT / "examples" / "numpy" / "2.5.5" / "ccopt-numpy.json"
    likes = {r["name"]: r["like"] for r in json.loads(path.read_text())["feature_set"][family]["features"]}
    numpy, built_in = tables.table_for(arch, "gcc", project.load(path)), tables.table_for(arch, "gcc")
    for name, like in likes.items():
        mine = {d for n in numpy.closure([name]) for d in numpy.features[n].audit}
        theirs = {d for n in built_in.closure([like]) for d in built_in.features[n].audit}
        assert theirs <= mine, (name, sorted(theirs - mine))


# --------------------------------------------------------------------------- the base lists' allowances

# One instruction per name of x86's audit base and compatible list (data/features/x86.json), as compilers and
# libraries emit them; run on the oldest CPU models qemu emulates, they must not fault.
ALLOWED_X86_64 = """
    endbr64
    xorq %rax, %rax
    rdsspq %rax
    tzcnt %ecx, %edx
    pause
    nopw 0(%rax,%rax,1)
    rdtsc
    cpuid
    cmove %eax, %ebx
    bswap %eax
    fld1
    fstp %st(0)
    paddb %mm0, %mm1
    emms
    push %rbp
    mov %rsp, %rbp
    and $-16, %rsp
    sub $512, %rsp
    fxsave (%rsp)
    clflush (%rsp)
    cmpxchg8b (%rsp)
    mov %rbp, %rsp
    pop %rbp
"""
# What the base list leaves out, and why: each faults on those CPU models.
REFUSED_X86_64 = {"XSAVE": "sub $4096, %rsp\n and $-64, %rsp\n xorl %edx, %edx\n movl $3, %eax\n xsave (%rsp)",
                  "CET_SS": "xorq %rax, %rax\n wrssq %rax, (%rsp)"}


def _program(tmp_path: Path, name: str, body: str) -> Path:
    src = tmp_path / f"{name}.S"
    src.write_text(f".text\n.globl main\nmain:\n push %rbx\n{body}\n pop %rbx\n xorl %eax, %eax\n ret\n"
                   '.section .note.GNU-stack,"",@progbits\n')
    exe = tmp_path / name
    subprocess.run([need("gcc"), str(src), "-o", str(exe)], check=True)
    return exe


@pytest.mark.skipif(not IS_X86_64, reason="assembles x86_64 programs with the host's gcc")
@pytest.mark.parametrize("cpu", ["qemu64", "Nehalem"])
def test_what_the_x86_base_list_allows_runs_on_the_oldest_cpus_and_what_it_refuses_faults(tmp_path: Path,
                                                                                          cpu: str) -> None:
    need_module("iced_x86", INSTALL)
    qemu = need("qemu-x86_64-static")
    allowed = _program(tmp_path, "allowed", ALLOWED_X86_64)
    assert subprocess.run([qemu, "-cpu", cpu, str(allowed)]).returncode == 0
    assert cli.main(["audit", "--baseline", "x86-64", str(allowed)]) == 0
    for name, body in REFUSED_X86_64.items():
        exe = _program(tmp_path, name, body)
        assert subprocess.run([qemu, "-cpu", cpu, str(exe)], capture_output=True).returncode == -4  # SIGILL
        r = subprocess.run([sys.executable, "-m", "ccopt_meson", "audit", "--baseline", "x86-64", str(exe)],
                           capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        assert r.returncode == 1 and f"main: needs unknown ({name})" in r.stdout


def test_libgccs_outline_atomics_test_lse_before_using_it(tmp_path: Path) -> None:
    """The aarch64 family's one guarded pattern: each helper loads __aarch64_have_lse_atomics and branches on it
    before its LSE instruction."""
    gcc = need("aarch64-linux-gnu-gcc")
    src = tmp_path / "a.c"
    src.write_text("int v;\nint cas(int a, int b) { return __atomic_compare_exchange_n(&v, &a, b, 0, "
                   "__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); }\nint main(void) { return cas(0, 1) - 1; }\n")
    exe = tmp_path / "a"
    subprocess.run([gcc, "-O2", "-moutline-atomics", str(src), "-o", str(exe)], check=True)
    dump = subprocess.run([need("aarch64-linux-gnu-objdump"), "-d", str(exe)], capture_output=True, text=True,
                          check=True).stdout
    body = dump.split("<__aarch64_cas4_acq_rel>:", 1)[1].split("\n\n", 1)[0]
    before_lse = body.split("casal", 1)[0]
    symbols = subprocess.run([need("aarch64-linux-gnu-nm"), str(exe)], capture_output=True, text=True,
                             check=True).stdout
    flag = int(next(line.split()[0] for line in symbols.splitlines() if line.endswith(" __aarch64_have_lse_atomics")),
               16)
    page = re.search(r"adrp\s+x16, ([0-9a-f]+)", before_lse)
    offset = re.search(r"ldrb\s+w16, \[x16, #(\d+)\]", before_lse)
    assert page and offset and int(page.group(1), 16) + int(offset.group(1)) == flag  # it reads the flag
    assert re.search(r"cbz\s+w16", before_lse)  # and leaves before the LSE instruction when it is 0
    pattern = re.compile(tables.raw_family("arm")["audit"]["guarded"][0]["pattern"])
    assert pattern.match("__aarch64_cas4_acq_rel")


@pytest.mark.skipif(not IS_X86_64, reason="compiles an x86_64 object with the host's gcc")
def test_no_damage_to_an_object_or_a_linked_file_gives_a_traceback(tmp_path: Path) -> None:
    """Truncated at any length, or with bytes overwritten anywhere: the audit reads, reports findings, or says
    in one error that it could not read the file; it never raises."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    need_module("elftools", INSTALL)
    need_module("iced_x86", INSTALL)
    src = tmp_path / "p.c"
    src.write_text("#include <stdio.h>\nstatic int twice(int x) { return 2 * x; }\n"
                   "int main(int argc, char **argv) { (void)argv; printf(\"%d\\n\", twice(argc)); return 0; }\n")
    exe = tmp_path / "p"
    subprocess.run([need("gcc"), "-O2", str(src), "-o", str(exe)], check=True)
    good = exe.read_bytes()
    work = tmp_path / "damaged"

    @hypothesis.settings(max_examples=200, deadline=None, derandomize=True,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(st.integers(0, len(good)), st.lists(st.tuples(st.integers(0, len(good) - 1),
                                                                     st.integers(0, 255)), max_size=8))
    def damaged(cut: int, writes: list[tuple[int, int]]) -> None:
        raw = bytearray(good[:cut] if cut < len(good) // 2 else good)
        for at, value in writes:
            if at < len(raw):
                raw[at] = value
        work.write_bytes(bytes(raw))
        result = audit.audit_paths([str(work)], "x86-64")
        assert result.reports or result.problems
        assert all("\n" not in p and "damaged" in p for p in result.problems)

    damaged()
