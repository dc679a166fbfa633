"""The C runtime library (ccopt_meson/runtime): generated table, real CPUs, qemu CPU models.

Every binary is compiled warning-free (``-std=c99 -Wall -Wextra -pedantic
-Werror``) once per session into a temporary directory.  Foreign CPUs run under
qemu-user 7.2 (``qemu-<arch>-static -cpu MODEL``), so the binaries are linked
``-static`` and need no sysroot.  Expected answers are derived from the feature
tables where the rule is generic (closure, masks), and written out per CPU model
where they are facts about the model.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import pytest

from ccopt_meson import emit_runtime, tables
from ccopt_meson.tables import Table

from .helpers import clean_env

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "ccopt_meson" / "runtime"
LIB = ("ccopt_cpu.c",)
INFO = ("ccopt_cpu.c", "ccopt_cpu_info.c")
WARNINGS = ("-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O2")
IS_X86_64 = platform.machine().lower() in ("x86_64", "amd64")
needs_x86_64 = pytest.mark.skipif(not IS_X86_64, reason="the host is not x86_64")

# x86_64 builds that assume a baseline, as a Meson build with baseline "min" plus AVX2 would.
AVX2_BASELINE = ("-DCCOPT_HAVE_SSE", "-DCCOPT_HAVE_SSE2", "-DCCOPT_HAVE_SSE3", "-DCCOPT_HAVE_AVX2")


def need(tool: str) -> str:
    """The tool's path; skip without it locally, fail in CI where it must be installed."""
    path = shutil.which(tool)
    if path is None:
        reason = f"'{tool}' is not installed"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}, and CI must run this test")
        pytest.skip(reason)
    return path


@dataclass(frozen=True)
class Cross:
    machine: str
    cc: str
    qemu: str


CROSS = {
    "aarch64": Cross("aarch64", "aarch64-linux-gnu-gcc", "qemu-aarch64-static"),
    "armhf": Cross("armhf", "arm-linux-gnueabihf-gcc", "qemu-arm-static"),
    "ppc64le": Cross("ppc64le", "powerpc64le-linux-gnu-gcc", "qemu-ppc64le-static"),
    "s390x": Cross("s390x", "s390x-linux-gnu-gcc", "qemu-s390x-static"),
    "riscv64": Cross("riscv64", "riscv64-linux-gnu-gcc", "qemu-riscv64-static"),
    "x86_64": Cross("x86_64", "gcc", "qemu-x86_64-static"),
}


# --------------------------------------------------------------------------- building and running

# A test driver for the test seam: each argument is one fake CPU (feature names
# separated by commas, "-" for none); one line per argument: usable features |
# baseline missing | level.  Before that, 8 threads race through ccopt_cpu_init().
DRIVER = r"""
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "ccopt_cpu.h"

static char seen[8][2048];

static void *race(void *arg)
{
    char *out = arg;
    int rc = ccopt_cpu_init(), n;
    n = sprintf(out, "%d %d ", rc, ccopt_cpu_have(CCOPT_CPU_MAX_FEATURE - 1));
    ccopt_cpu_features_text(out + n, 2048 - (size_t)n);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t[8];
    unsigned char fake[CCOPT_CPU_MAX_FEATURE];
    char text[2048], small[4];
    int i, level, full;
    for (i = 0; i < 8; ++i)
        pthread_create(&t[i], NULL, race, seen[i]);
    for (i = 0; i < 8; ++i)
        pthread_join(t[i], NULL);
    for (i = 1; i < 8; ++i)
        if (strcmp(seen[i], seen[0]) != 0)
            return 3;
    full = ccopt_cpu_features_text(NULL, 0);
    if (ccopt_cpu_features_text(small, sizeof small) != full || strlen(small) != (full ? 3u : 0u))
        return 4;
    if (ccopt_cpu_have(-1) || ccopt_cpu_have(CCOPT_CPU_MAX_FEATURE) || ccopt_cpu_name(-1) != NULL)
        return 5;
    printf("threads %s\n", seen[0]);
    for (i = 1; i < argc; ++i) {
        char list[2048], *name;
        memset(fake, 0, sizeof fake);
        strcpy(list, argv[i]);
        for (name = strtok(list, ","); name != NULL; name = strtok(NULL, ","))
            if (strcmp(name, "-") != 0 && ccopt_cpu_id(name) >= 0)
                fake[ccopt_cpu_id(name)] = 1;
        ccopt_cpu_set_for_test(fake);
        ccopt_cpu_features_text(text, sizeof text);
        level = ccopt_cpu_level();
        printf("%s|%s|%s\n", text, ccopt_cpu_baseline_missing(), level < 0 ? "" : ccopt_cpu_name(level));
    }
    return 0;
}
"""


class Builder:
    """Compiles each (compiler, flags, sources) once per module into one directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.built: dict[tuple[str, tuple[str, ...], tuple[str, ...]], Path] = {}
        (root / "driver.c").write_text(DRIVER)
        (root / "xcomp.c").write_text(XCOMP_DRIVER)
        emit_runtime.write_table(root)  # what configure writes into the build directory

    def __call__(self, cc: str, *flags: str, sources: Sequence[str] = INFO) -> Path:
        key = (cc, tuple(flags), tuple(sources))
        if key not in self.built:
            need(cc)
            out = self.root / f"bin{len(self.built)}"
            paths = [str(self.root / s) if (self.root / s).exists() else str(RUNTIME / s) for s in sources]
            cmd = [cc, *WARNINGS, *flags, f"-I{RUNTIME}", f"-I{self.root}", *paths, "-o", str(out)]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0 and not proc.stderr.strip(), f"{' '.join(cmd)}\n{proc.stderr}"
            self.built[key] = out
        return self.built[key]

    def cross(self, machine: str, *flags: str, sources: Sequence[str] = INFO) -> Path:
        return self(CROSS[machine].cc, "-static", *flags, sources=sources)


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Builder:
    return Builder(tmp_path_factory.mktemp("ccopt-runtime"))


def _env(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = clean_env("QEMU_")
    env.update(extra or {})
    return env


def run(binary: Path, *args: str, machine: str | None = None, cpu: str | None = None,
        env: Mapping[str, str] | None = None) -> tuple[str, list[str]]:
    """stdout and the library's stderr lines ("ccopt: ..."; qemu's own warnings dropped)."""
    cmd = [str(binary), *args]
    if cpu is not None:
        cmd = [need(CROSS[machine or "x86_64"].qemu), "-cpu", cpu, *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(env), timeout=60)
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stderr}"
    return proc.stdout, [line for line in proc.stderr.splitlines() if line.startswith("ccopt")]


def info(binary: Path, **kw: Any) -> tuple[dict[str, Any], list[str]]:
    out, messages = run(binary, "--json", **kw)
    return json.loads(out), messages


def usable(doc: Mapping[str, Any]) -> set[str]:
    return {name for name, ok in doc["features"].items() if ok}


def table(machine: str) -> Table:
    return tables.table_for(machine, tables.reference_compiler())


def expected_have(t: Table, raw: set[str]) -> set[str]:
    """The rule the C code implements: a feature counts when it and its whole closure are reported."""
    return {n for n in t.features if n in raw and t.closure([n]) <= raw}


# --------------------------------------------------------------------------- the generated table


def test_no_table_is_checked_in(tmp_path: Path) -> None:
    """A copy beside ccopt_cpu.h would win over the build directory's (quote includes look there first)."""
    assert not (RUNTIME / emit_runtime.HEADER_NAME).exists()
    assert emit_runtime.write_table(tmp_path) is True
    written = (tmp_path / emit_runtime.HEADER_NAME).read_text(encoding="ascii")
    assert written == emit_runtime.runtime_table_header()
    assert emit_runtime.write_table(tmp_path) is False  # stamped with the tables' digest: left alone
    (tmp_path / emit_runtime.HEADER_NAME).write_text(written.replace("sha256 ", "sha256 0"))
    assert emit_runtime.write_table(tmp_path) is True  # another digest: regenerated


def test_table_is_deterministic_and_relocatable() -> None:
    text = emit_runtime.runtime_table_header()
    assert text == emit_runtime.runtime_table_header()
    assert str(ROOT) not in text and str(Path.home()) not in text and "\r" not in text


def test_module_main_prints_the_table() -> None:
    proc = subprocess.run([sys.executable, "-m", "ccopt_meson.emit_runtime"], cwd=ROOT,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.decode("ascii") == emit_runtime.runtime_table_header()
    assert emit_runtime.main(["--bogus"]) == 2


def test_enum_numbers_every_feature_once_in_family_then_interest_order() -> None:
    text = emit_runtime.runtime_table_header()
    enum = {m[1]: int(m[2]) for m in re.finditer(r"^    CCOPT_CPU_F_(\w+) = (\d+),$", text, re.M)}
    count = int(re.findall(r"^    CCOPT_CPU_MAX_FEATURE = (\d+)$", text, re.M)[0])
    assert sorted(enum.values()) == list(range(count)) and count == len(tables.all_feature_names())
    expected: list[str] = []
    for fam in tables.families():
        m = next(m for m in tables.machines() if m.family == fam)
        expected.extend(table(m.name).features)
    assert sorted(enum, key=enum.__getitem__) == list(dict.fromkeys(expected))  # shared names (AES) once
    for m in tables.machines():  # every machine's features are in the one enum
        assert set(table(m.name).features) <= set(enum)


def test_no_fixed_identifier_lies_in_the_namespaces_of_feature_names() -> None:
    """A name a features file may hold makes CCOPT_CPU_F_<NAME> and CCOPT_CPU_BASE_F_<NAME> only, and no
    other identifier of the run-time (its macros, knobs, guards, types) starts so: no feature name collides."""
    spaces = tuple(pattern.format("") for pattern in (emit_runtime.FEATURE_ID, emit_runtime.FEATURE_BASE))
    text = emit_runtime.runtime_table_header() + "".join(p.read_text() for p in sorted(RUNTIME.iterdir()))
    fixed = {w for w in re.findall(r"\bCCOPT_\w+", text) if not w.startswith(spaces)}
    assert "CCOPT_CPU_API" in fixed and "CCOPT_CPU_NRECIPES" in fixed and "CCOPT_CPU_MAX_FEATURE" in fixed
    names = {n for m in tables.machines() for n in table(m.name).features}
    made = {w for w in re.findall(r"\bCCOPT_CPU_\w+", text) if w.startswith(spaces)}
    assert made == {pattern.format(n) for pattern in (emit_runtime.FEATURE_ID, emit_runtime.FEATURE_BASE)
                    for n in names} | set(spaces)  # the spaces themselves: ccopt_cpu.h's CCOPT_CPU_F_##NAME


@needs_x86_64
def test_feature_names_spelled_like_the_run_times_identifiers_build_even_in_one_unity_file(tmp_path: Path) -> None:
    """tests/projects/namespace names its features NRECIPES, API, TABLE_H, CHECK_BASELINE, ...: the table, the
    run-time and ccopt-cpu-info compile with them warning-free, also as one file in the order a unity build
    takes (ccopt_cpu_info.c first: the table's data part and syscall() were missing), and each name is its own id."""
    from ccopt_meson import project

    gcc = need("gcc")
    proj = project.load(ROOT / "tests" / "projects" / "namespace" / "features.json")
    emit_runtime.write_table(tmp_path, project=proj)
    names = ["SSE2", "NRECIPES", "NAMES_TEXT_MAX", "BASELINE_OPTION", "MACHINE", "MAX_FEATURE", "H", "API",
             "TABLE_H", "TABLE_DATA", "CHECK_BASELINE"]
    unity = "".join(f'#include "{RUNTIME / name}"\n' for name in ("ccopt_cpu_info.c", "ccopt_cpu.c"))
    (tmp_path / "unity.c").write_text(unity)
    checks = " && ".join(f'strcmp(ccopt_cpu_name(CCOPT_CPU_ID({n})), "{n}") == 0 && CCOPT_CPU_HAVE({n}) >= 0'
                         for n in names)
    (tmp_path / "names.c").write_text(f'#include <string.h>\n#include "ccopt_cpu.h"\n'
                                      f"int main(void) {{ return ({checks}) ? 0 : 1; }}\n")
    inc = ["-I", str(tmp_path), "-I", str(RUNTIME)]
    for exe, sources in (("info", ["unity.c"]), ("names", ["names.c", str(RUNTIME / "ccopt_cpu.c")])):
        subprocess.run([gcc, *WARNINGS, *inc, *(str(tmp_path / s) for s in sources), "-o", str(tmp_path / exe)],
                       check=True)
    info = subprocess.run([str(tmp_path / "info"), "--json"], capture_output=True, text=True, env=clean_env())
    assert list(json.loads(info.stdout)["features"]) == names, info.stdout + info.stderr
    assert subprocess.run([str(tmp_path / "names")], env=clean_env()).returncode == 0
    # the built-in tables hold AMX, whose lazy request calls syscall(): declared under -std=c99 too
    emit_runtime.write_table(tmp_path)
    subprocess.run([gcc, *WARNINGS, *inc, str(tmp_path / "unity.c"), "-o", str(tmp_path / "info")], check=True)


def test_every_feature_has_a_runtime_recipe_unless_disabled() -> None:
    for m in tables.machines():
        for name, feat in table(m.name).features.items():
            assert feat.runtime or feat.disabled, f"{m.name}: {name} has no runtime recipe"


# --------------------------------------------------------------------------- the host CPU

def _cpuinfo_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    pytest.skip("/proc/cpuinfo has no flags line")


@needs_x86_64
@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_native_detection_agrees_with_proc_cpuinfo(build: Builder, cc: str) -> None:
    doc, messages = info(build(cc))
    assert doc["arch"] == "x86_64" and doc["baseline_missing"] == [] and messages == []
    assert sorted(doc["features"]) == sorted(table("x86_64").features)  # id order: AES is numbered with arm's
    assert doc["features"] == expected_from_cpuinfo(table("x86_64"), _cpuinfo_flags())


def expected_from_cpuinfo(t: Table, flags: set[str]) -> dict[str, bool]:
    """The kernel's answer, an oracle independent of cpuid: each feature's recipe names the
    /proc/cpuinfo flags it shows as (the kernel clears AVX flags when it does not save the state),
    and a feature counts when the flags of its whole closure are there."""
    shown = {n: set(f.runtime.get("cpuinfo", ())) for n, f in t.features.items()}
    return {n: all(shown[d] <= flags for d in t.closure([n])) for n in t.features}


def test_every_detectable_feature_names_its_cpuinfo_flags() -> None:
    """The oracle covers everything: a detected feature, or one it implies, shows in /proc/cpuinfo."""
    t = table("x86_64")
    for name in t.features:
        assert any(t.get(d).runtime.get("cpuinfo") for d in t.closure([name])), name


@needs_x86_64
@pytest.mark.parametrize("cxx", ["g++", "clang++"])
def test_library_compiles_as_cxx_and_agrees(build: Builder, tmp_path: Path, cxx: str) -> None:
    """A C++-only project compiles ccopt_cpu.c with its C++ compiler (see ccopt_cpu_cxx.cpp)."""
    obj = tmp_path / "ccopt_cpu.o"
    cmd = [need(cxx), "-x", "c++", "-std=c++11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O2",
           f"-I{RUNTIME}", f"-I{build.root}", "-c", str(RUNTIME / "ccopt_cpu.c"), "-o", str(obj)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr
    main = tmp_path / "info.o"
    subprocess.run([need("gcc"), *WARNINGS, f"-I{RUNTIME}", f"-I{build.root}", "-c", str(RUNTIME / "ccopt_cpu_info.c"),
                    "-o", str(main)],
                   check=True, timeout=120)
    binary = tmp_path / "info"
    subprocess.run([cxx, str(main), str(obj), "-o", str(binary)], check=True, timeout=120)
    assert info(binary) == info(build("gcc"))


@needs_x86_64
def test_text_output_lists_the_same_features(build: Builder) -> None:
    doc, _ = info(build("gcc"))
    text, _ = run(build("gcc"))
    lines = dict(line.split(":", 1) for line in text.splitlines())
    assert lines["arch"].strip() == "x86_64"
    assert lines["features"].split() == [n for n, ok in doc["features"].items() if ok]
    assert lines["level"].strip() == (doc["level"] or "-")


# --------------------------------------------------------------------------- x86_64 CPU models under qemu

_V2 = {"SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "X86_V2", "SSE42_ISA"}
_BMI = {"MOVBE", "LZCNT", "BMI1", "BMI2"}
_HSW_AVX = {"AVX", "FMA3_ISA", "AVX2_ISA"}
# What qemu 7.2 TCG reports.  Its TCG has no AVX-512, so no model reaches X86_V4.
X86_MODELS = {
    "qemu64": ({"SSE", "SSE2", "SSE3"}, None),
    "Nehalem": (_V2, "X86_V2"),
    "SandyBridge": (_V2 | {"AVX", "AES", "PCLMULQDQ"}, "X86_V2"),
    "Haswell": (_V2 | _BMI | _HSW_AVX | {"AES", "PCLMULQDQ", "F16C", "FMA3", "AVX2", "X86_V3"}, "X86_V3"),
    # numpy's AVX2 and FMA3 imply F16C; the bare ISA names do not, and stay usable.
    "Haswell,-f16c": (_V2 | _BMI | _HSW_AVX | {"AES", "PCLMULQDQ"}, "X86_V2"),
    # cpuid says AVX..AVX2, but without xsave the OS (here qemu) saves no YMM state: OSXSAVE is 0.
    # The scalar BMI/LZCNT/MOVBE need no saved state.
    "Haswell,-xsave": (_V2 | _BMI | {"AES", "PCLMULQDQ"}, "X86_V2"),
}


@pytest.mark.slow
@needs_x86_64
@pytest.mark.parametrize("cpu", list(X86_MODELS))
def test_x86_64_cpu_models(build: Builder, cpu: str) -> None:
    doc, messages = info(build.cross("x86_64"), cpu=cpu)
    have, level = X86_MODELS[cpu]
    assert usable(doc) == have and doc["level"] == level and messages == []


@pytest.mark.slow
@needs_x86_64
def test_disable_masks_what_implies_the_feature(build: Builder) -> None:
    doc, messages = info(build.cross("x86_64"), cpu="Haswell", env={"CCOPT_DISABLE_CPU_FEATURES": "AVX2"})
    assert not doc["features"]["AVX2"] and not doc["features"]["X86_V3"]
    assert doc["features"]["FMA3"] and doc["features"]["F16C"] and doc["level"] == "X86_V2"
    assert messages == []


@pytest.mark.slow
@needs_x86_64
def test_disable_reports_unknown_and_foreign_names(build: Builder) -> None:
    env = {"CCOPT_DISABLE_CPU_FEATURES": "avx2, NOSUCH,ASIMD"}
    doc, messages = info(build.cross("x86_64"), cpu="Haswell", env=env)
    assert not doc["features"]["AVX2"]  # names are case-insensitive
    assert len(messages) == 2
    assert messages[0].startswith("ccopt: CCOPT_DISABLE_CPU_FEATURES: unknown CPU feature 'NOSUCH'")
    assert messages[1] == "ccopt: CCOPT_DISABLE_CPU_FEATURES: ASIMD is not a CPU feature of x86_64; ignored"


@pytest.mark.slow
@needs_x86_64
def test_disable_refuses_baseline_features(build: Builder) -> None:
    env = {"CCOPT_DISABLE_CPU_FEATURES": "SSE3 AVX2 FMA3"}
    doc, messages = info(build.cross("x86_64", *AVX2_BASELINE), cpu="Haswell", env=env)
    assert doc["features"]["SSE3"] and doc["features"]["AVX2"] and not doc["features"]["FMA3"]
    assert messages == [
        f"ccopt: CCOPT_DISABLE_CPU_FEATURES: {n} is in the baseline this build requires and cannot be disabled; ignored"
        for n in ("SSE3", "AVX2")]


@pytest.mark.slow
@needs_x86_64
def test_enable_keeps_only_the_named_features_and_the_baseline(build: Builder) -> None:
    env = {"CCOPT_ENABLE_CPU_FEATURES": "FMA3"}
    doc, messages = info(build.cross("x86_64", *AVX2_BASELINE), cpu="Haswell", env=env)
    t = table("x86_64")
    assert usable(doc) == set(t.closure(["FMA3", "AVX2", "SSE3"])) and messages == []
    doc, messages = info(build.cross("x86_64"), cpu="Haswell", env={"CCOPT_ENABLE_CPU_FEATURES": "AVX512F"})
    assert messages == ["ccopt: CCOPT_ENABLE_CPU_FEATURES: AVX512F is not supported by this CPU; ignored"]
    assert usable(doc) == set(t.closure(["AVX512F"])) & X86_MODELS["Haswell"][0]


@pytest.mark.slow
@needs_x86_64
def test_enable_and_disable_together_is_reported_and_ignored(build: Builder) -> None:
    env = {"CCOPT_ENABLE_CPU_FEATURES": "SSE42", "CCOPT_DISABLE_CPU_FEATURES": "AVX2"}
    doc, messages = info(build.cross("x86_64"), cpu="Haswell", env=env)
    assert usable(doc) == X86_MODELS["Haswell"][0]
    assert len(messages) == 1 and "are both set" in messages[0]


@pytest.mark.slow
@needs_x86_64
def test_missing_baseline_is_reported_not_fatal(build: Builder) -> None:
    binary = build.cross("x86_64", *AVX2_BASELINE)
    doc, _ = info(binary, cpu="Nehalem")
    assert doc["baseline_missing"] == ["AVX", "F16C", "AVX2_ISA", "AVX2"]  # AVX2 and what it implies
    assert usable(doc) == _V2
    text, _ = run(binary, cpu="Nehalem")
    assert "baseline missing: AVX F16C AVX2_ISA AVX2" in text
    doc, _ = info(binary, cpu="Haswell")
    assert doc["baseline_missing"] == []


# A shared library (a Python extension, say) asks for the message in its init; its host dlopens it.
BELOW_LIBRARY = r"""
#include "ccopt_cpu.h"
const char *module_init(void) { return ccopt_cpu_baseline_message(); }
"""
BELOW_HOST = r"""
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    const char *(*init)(void);
    void *lib = dlopen(argv[argc - 1], RTLD_NOW);
    const char *message;
    if (lib == NULL)
        return 2;
    *(void **)&init = dlsym(lib, "module_init");
    message = init();
    printf("host alive: %s\n", message ? message : "no message");
    return 0;
}
"""


def below_line(missing: str) -> str:
    """The run-time's one line for a CPU lacking ``missing`` of the baseline."""
    return (f"ccopt: this CPU lacks {missing}, which this build requires (its CPU baseline, set by "
            "-Dccopt-meson:cpu-baseline); to run here, build it with a lower baseline, e.g. "
            "-Dccopt-meson:cpu-baseline=detect")


def _below(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if not line.startswith("qemu")]


@pytest.mark.slow
@needs_x86_64
def test_an_executable_below_its_baseline_stops_before_main_with_one_line(build: Builder) -> None:
    qemu = need(CROSS["x86_64"].qemu)
    exe = build.cross("x86_64", *AVX2_BASELINE, "-DCCOPT_CPU_CHECK_BASELINE", "-pthread", sources=(*LIB, "driver.c"))
    low = subprocess.run([qemu, "-cpu", "Nehalem", str(exe)], capture_output=True, text=True, timeout=60)
    assert low.returncode == 1 and low.stdout == ""  # before main: not SIGILL (132, -4), no output of main
    assert _below(low) == [below_line("AVX F16C AVX2_ISA AVX2")]
    high = subprocess.run([qemu, "-cpu", "Haswell", str(exe)], capture_output=True, text=True, timeout=60)
    assert high.returncode == 0 and high.stdout.startswith("threads 0 "), high.stderr
    # without the macro the program reaches main: the check is the glue's choice, ccopt-cpu-info's report stays
    plain = build.cross("x86_64", *AVX2_BASELINE, "-pthread", sources=(*LIB, "driver.c"))
    assert subprocess.run([qemu, "-cpu", "Nehalem", str(plain)], capture_output=True, timeout=60).returncode == 0


@pytest.mark.slow
def test_an_aarch64_executable_below_its_baseline_stops_before_main(build: Builder) -> None:
    """The same on aarch64 (the run-time reads AT_HWCAP): a baseline with ASIMDDP on a Cortex-A53."""
    exe = build.cross("aarch64", "-DCCOPT_HAVE_ASIMDDP", "-DCCOPT_CPU_CHECK_BASELINE", "-pthread",
                      sources=(*LIB, "driver.c"))
    qemu = need(CROSS["aarch64"].qemu)
    low = subprocess.run([qemu, "-cpu", "cortex-a53", str(exe)], capture_output=True, text=True, timeout=60)
    assert low.returncode == 1 and low.stdout == "", low.stderr
    assert _below(low) == [below_line("ASIMDDP")]
    high = subprocess.run([qemu, "-cpu", "max", str(exe)], capture_output=True, text=True, timeout=60)
    assert high.returncode == 0 and high.stdout.startswith("threads 0 "), high.stderr


@pytest.mark.slow
@needs_x86_64
def test_a_shared_library_below_its_baseline_never_stops_its_host(build: Builder) -> None:
    """Built with the check, a shared library's constructor does nothing: its init gets the same line."""
    qemu = need(CROSS["x86_64"].qemu)
    (build.root / "below_lib.c").write_text(BELOW_LIBRARY)
    (build.root / "below_host.c").write_text(BELOW_HOST)
    lib = build("gcc", *AVX2_BASELINE, "-DCCOPT_CPU_CHECK_BASELINE", "-shared", "-fPIC", sources=(*LIB, "below_lib.c"))
    host = build("gcc", "-ldl", sources=("below_host.c",))
    low = subprocess.run([qemu, "-cpu", "Nehalem", str(host), str(lib)], capture_output=True, text=True, timeout=60)
    assert low.returncode == 0 and _below(low) == [], low.stderr
    assert low.stdout == f"host alive: {below_line('AVX F16C AVX2_ISA AVX2')}\n"
    high = subprocess.run([qemu, "-cpu", "Haswell", str(host), str(lib)], capture_output=True, text=True, timeout=60)
    assert high.stdout == "host alive: no message\n", high.stderr


# --------------------------------------------------------------------------- other architectures under qemu

# Facts about qemu 7.2's CPU models, as seen through AT_HWCAP/AT_HWCAP2.
_A64 = {"NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"}
_A64_CRYPTO = {"CRC32", "AES", "PMULL", "SHA2"}
CROSS_MODELS: dict[str, dict[str, set[str]]] = {
    # qemu's models have the Armv8.0 crypto and CRC32 extensions (as the real cores commonly do)
    "aarch64": {
        "cortex-a53": _A64 | _A64_CRYPTO,
        "neoverse-n1": _A64 | _A64_CRYPTO | {"ASIMDHP", "ASIMDDP"},
        "a64fx": _A64 | _A64_CRYPTO | {"ASIMDHP", "SVE"},
        "max": _A64 | _A64_CRYPTO | {"ASIMDHP", "ASIMDDP", "ASIMDFHM", "SVE", "SHA3", "I8MM", "BF16", "SVE2"},
    },
    # 32-bit ARM: ARMv7 cores have no CRC32 (an ARMv8 AArch32 feature); qemu's "max" is ARMv8
    "armhf": {
        "cortex-a15": {"NEON", "NEON_FP16", "NEON_VFPV4"},
        "max": {"NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD", "CRC32"},
    },
    "ppc64le": {
        "power8": {"VSX", "VSX2", "PPC_CRYPTO"},
        "power9": {"VSX", "VSX2", "PPC_CRYPTO", "VSX3"},
        "power10": {"VSX", "VSX2", "PPC_CRYPTO", "VSX3", "VSX4"},
    },
    # qemu 7.2 TCG cannot start the z13/z14/gen15a models at all ("features ... not
    # available in the configuration"; there is no "z15" name).  Its "qemu"/"max" model
    # reports HWCAP_S390_VXRS and VXRS_EXT (hwcap 0x2b3f), never VXRS_EXT2, even with
    # vxeh2=on: qemu-user 7.2 does not map that facility to the hwcap.  So z13 and z14
    # are modelled by switching the vector facilities off, and VXE2 is never seen.
    "s390x": {
        "qemu,vx=off": set(),
        "qemu,vxeh=off": {"VX"},       # like a z13
        "max": {"VX", "VXE"},          # like a z14
        "max,vxeh2=on": {"VX", "VXE"},  # a z15 would add VXE2; qemu-user 7.2 does not say so
        "qemu,vx=off,vxeh=on": set(),  # VXRS_EXT without VXRS: VXE needs VX
    },
    "riscv64": {
        "rv64,v=true,vlen=128": {"RVV"},
        "rv64,v=false": set(),
    },
}


@pytest.mark.slow
@pytest.mark.parametrize(("machine", "cpu"), [(m, c) for m, models in CROSS_MODELS.items() for c in models])
def test_cross_cpu_models(build: Builder, machine: str, cpu: str) -> None:
    doc, messages = info(build.cross(machine), machine=machine, cpu=cpu)
    assert doc["arch"] == machine and sorted(doc["features"]) == sorted(table(machine).features)
    assert usable(doc) == CROSS_MODELS[machine][cpu] and messages == [] and doc["baseline_missing"] == []


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["cortex-a53", "neoverse-n1", "max"])
def test_proc_self_auxv_fallback_agrees_with_getauxval(build: Builder, cpu: str) -> None:
    doc, _ = info(build.cross("aarch64", "-DCCOPT_CPU_NO_GETAUXVAL"), machine="aarch64", cpu=cpu)
    assert usable(doc) == CROSS_MODELS["aarch64"][cpu]


@pytest.mark.slow
def test_cross_baseline_and_masks(build: Builder) -> None:
    binary = build.cross("ppc64le", "-DCCOPT_HAVE_VSX3")
    doc, _ = info(binary, machine="ppc64le", cpu="power8")
    assert doc["baseline_missing"] == ["VSX3"]
    env = {"CCOPT_DISABLE_CPU_FEATURES": "VSX2"}  # in the baseline's closure
    doc, messages = info(binary, machine="ppc64le", cpu="power10", env=env)
    assert usable(doc) == {"VSX", "VSX2", "PPC_CRYPTO", "VSX3", "VSX4"} and len(messages) == 1 and "VSX2" in messages[0]
    doc, _ = info(build.cross("aarch64"), machine="aarch64", cpu="max", env={"CCOPT_DISABLE_CPU_FEATURES": "ASIMDHP"})
    assert usable(doc) == _A64 | _A64_CRYPTO | {"ASIMDDP", "SHA3", "I8MM", "BF16"}  # SVE2 needs SVE needs ASIMDHP


@pytest.mark.slow
def test_unknown_machine_reports_nothing_and_does_not_crash(build: Builder) -> None:
    # riscv64 without __LP64__ matches no machine of the tables: the "any other machine" branch.
    binary = build.cross("riscv64", "-U__LP64__")
    doc, messages = info(binary, machine="riscv64", cpu="rv64", env={"CCOPT_DISABLE_CPU_FEATURES": "RVV"})
    assert doc == {"arch": "unknown", "level": None, "features": {}, "baseline_missing": []}
    assert messages == ["ccopt: CCOPT_DISABLE_CPU_FEATURES: RVV is not a CPU feature of unknown; ignored"]


# --------------------------------------------------------------------------- the test seam, over every feature

_BASELINE = {"x86_64": ("SSE", "SSE2", "SSE3"), "aarch64": ("NEON", "ASIMD"), "armhf": ("NEON",),
             "ppc64le": ("VSX2",), "s390x": ("VX",), "riscv64": ()}
_HOST_CPU: dict[str, str | None] = {"x86_64": None, "aarch64": "max", "armhf": "max", "ppc64le": "power10",
                                    "s390x": "max", "riscv64": "rv64"}


def _scenarios(t: Table) -> Iterator[set[str]]:
    names = set(t.features)
    yield set()
    yield names
    for n in t.features:
        yield names - {n}
        yield set(t.closure([n]))


@pytest.mark.parametrize("machine", [m if m == "x86_64" else pytest.param(m, marks=pytest.mark.slow)
                                     for m in _BASELINE])
def test_seam_closure_baseline_and_level_for_every_feature(build: Builder, machine: str) -> None:
    if machine == "x86_64" and not IS_X86_64:
        pytest.skip("the host is not x86_64")
    flags = [f"-DCCOPT_HAVE_{n}" for n in _BASELINE[machine]]
    binary = build.cross(machine, *flags, "-pthread", sources=(*LIB, "driver.c"))
    t = table(machine)
    scenarios = list(_scenarios(t))
    out, messages = run(binary, *(",".join(sorted(s)) or "-" for s in scenarios),
                        machine=machine, cpu=_HOST_CPU[machine])
    lines = out.splitlines()
    assert lines[0].startswith("threads ") and messages == []
    base = t.closure(_BASELINE[machine])
    named = [n for n in t.features if re.search(r"_V[0-9]+$", n)]
    # x86: the psABI levels; elsewhere: every usable feature, the level is the highest one
    levels = [n for n, f in t.features.items() if (n in named or not named) and f.disabled is None]
    assert len(lines) == len(scenarios) + 1
    for raw, line in zip(scenarios, lines[1:]):
        have = expected_have(t, raw)
        got, missing, level = line.split("|")
        assert got.split() == [n for n in t.features if n in have], sorted(raw)
        assert missing.split() == [n for n in t.features if n in base and n not in have], sorted(raw)
        assert level == next((n for n in reversed(levels) if n in have), "")


@needs_x86_64
def test_seam_applies_environment_masks(build: Builder) -> None:
    binary = build.cross("x86_64", "-DCCOPT_HAVE_SSE", "-pthread", sources=(*LIB, "driver.c"))
    t = table("x86_64")
    everything = ",".join(t.features)
    out, _ = run(binary, everything, env={"CCOPT_DISABLE_CPU_FEATURES": "AVX"})
    masked = set(out.splitlines()[1].split("|")[0].split())
    assert masked == {n for n in t.features if "AVX" not in t.closure([n])}
    out, _ = run(binary, everything, env={"CCOPT_ENABLE_CPU_FEATURES": "POPCNT"})
    assert set(out.splitlines()[1].split("|")[0].split()) == set(t.closure(["POPCNT", "SSE"]))


@needs_x86_64
def test_masking_a_feature_hides_every_feature_whose_flags_enable_it(build: Builder) -> None:
    """CCOPT_DISABLE_CPU_FEATURES=B hides B and every A whose gcc flags define B's macros (A's version
    may execute B's instructions): masking AVX2_ISA hides numpy's AVX2, X86_V3 and AVX-512."""
    from .test_tables import NOT_IMPLIED, _defined_macros

    gcc = need("gcc")
    binary = build.cross("x86_64", "-DCCOPT_HAVE_SSE", "-pthread", sources=(*LIB, "driver.c"))
    t = table("x86_64")
    default = _defined_macros(gcc, []) or set()
    names = [n for n, f in t.features.items() if f.disabled is None]
    enabled = {n: _defined_macros(gcc, t.flags_for([n])) or set() for n in names}
    for b in names:
        instructions = set().union(*(t.get(m).macros for m in t.closure([b])))
        if instructions <= default:
            continue  # SSE, SSE2: the x86_64 baseline, never masked
        out, messages = run(binary, ",".join(t.features), env={"CCOPT_DISABLE_CPU_FEATURES": b})
        left = set(out.splitlines()[1].split("|")[0].split())
        executing = {a for a in names if instructions <= enabled[a] and (a, b) not in NOT_IMPLIED}
        assert b in executing and not executing & left, (b, sorted(executing & left))
        assert left == {n for n in t.features if b not in t.closure([n])} and messages == [], b


@needs_x86_64
def test_enabling_a_level_keeps_the_bare_isa_versions_it_executes(build: Builder) -> None:
    binary = build.cross("x86_64", "-DCCOPT_HAVE_SSE", "-pthread", sources=(*LIB, "driver.c"))
    everything = ",".join(table("x86_64").features)
    out, _ = run(binary, everything, env={"CCOPT_ENABLE_CPU_FEATURES": "X86_V3"})
    assert {"AVX2_ISA", "FMA3_ISA", "AVX2", "FMA3"} <= set(out.splitlines()[1].split("|")[0].split())
    out, _ = run(binary, everything, env={"CCOPT_ENABLE_CPU_FEATURES": "AVX512F"})
    assert {"AVX2_ISA", "FMA3_ISA"} <= set(out.splitlines()[1].split("|")[0].split())


# --------------------------------------------------------------------------- the table generator refuses bad data


def test_runtime_table_generator_refuses_a_string_it_cannot_write_as_a_c_literal() -> None:
    from ccopt_meson import emit_runtime as er
    from ccopt_meson.errors import TableError

    with pytest.raises(TableError, match=r"^refusing to emit 'a\"b' as a C string literal$"):
        er._c_string('a"b')


def _recipe_bounds() -> list[tuple[str, int, int, Any]]:
    """Every bounded integer of data/schema.json's runtime_recipe: (where, minimum, maximum, recipe of a value)."""
    from ccopt_meson.schema import schema_file

    out: list[tuple[str, int, int, Any]] = []
    for key, node in schema_file("schema.json")["definitions"]["runtime_recipe"]["properties"].items():
        if node.get("type") == "integer":
            out.append((key, node["minimum"], node["maximum"], lambda v, key=key: {key: v}))
        elif node.get("items", {}).get("type") == "integer":
            item = node["items"]
            out.append((f"{key}[]", item["minimum"], item["maximum"], lambda v, key=key: {key: [v]}))
        for i, part in enumerate(node.get("items", {}).get("prefixItems", ())):
            if part["type"] == "integer":
                least = [p.get("minimum", (p.get("enum") or [None])[0]) for p in node["items"]["prefixItems"]]
                out.append((f"{key}[][{i}]", part["minimum"], part["maximum"],
                            lambda v, key=key, i=i, least=least: {key: [[*least[:i], v, *least[i + 1:]]]}))
    return out


RECIPE_BOUNDS = _recipe_bounds()


@pytest.mark.parametrize("where,least,most,recipe", RECIPE_BOUNDS, ids=[b[0] for b in RECIPE_BOUNDS])
def test_runtime_table_generator_takes_a_recipe_value_exactly_as_far_as_the_schema_does(
        where: str, least: int, most: int, recipe: Any) -> None:
    """The generator's limits are the schema's (data/schema.json, runtime_recipe): its bounds are written, one
    past either is one TableError naming the value and the bound."""
    from ccopt_meson import emit_runtime as er
    from ccopt_meson.errors import TableError

    data = er._MachineData("x86_64")
    for value in (least, most):
        data.add_feature("F", recipe(value), [], False)
    for value, words in ((least - 1, f"is below {least}"), (most + 1, f"is above {most}")):
        with pytest.raises(TableError, match=rf"^x86_64: G: runtime\.{where.split('[')[0]}.*: {value} {words}$"):
            data.add_feature("G", recipe(value), [], False)
    with pytest.raises(TableError, match=r"^x86_64: G: runtime\.cpuid\[0\]\[2\]: \"exx\" is not one of "):
        data.add_feature("G", {"cpuid": [[7, 0, "exx", 5]]}, [], False)


@pytest.mark.parametrize("cc", ["gcc", "gcc -m32", "x86_64-w64-mingw32-gcc"])
def test_the_runtime_tables_c_types_hold_every_value_the_schema_accepts(tmp_path: Path, cc: str) -> None:
    """A table whose recipes hold each bound of the schema compiles warning-free where long is 64 bits (Linux),
    32 (Windows, LLP64) and int and long both 32 (i386): no value the schema accepts overflows its C field."""
    from ccopt_meson import emit_runtime as er

    compiler, *extra = cc.split()
    tool = shutil.which(compiler)
    if tool is None:
        pytest.skip(f"{compiler} is not installed")
    data = er._MachineData("x86_64")
    names = [f"F{i}" for i in range(2 * len(RECIPE_BOUNDS))]
    for i, (_, least, most, recipe) in enumerate(RECIPE_BOUNDS):
        data.add_feature(names[2 * i], recipe(least), [], False)
        data.add_feature(names[2 * i + 1], recipe(most), [], False)
    out = er._Lines()
    out.add("#include <stddef.h>", "enum ccopt_cpu_feature_id {",
            *(f"    {er.FEATURE_ID.format(n)} = {i}," for i, n in enumerate(names)),
            f"    CCOPT_CPU_MAX_FEATURE = {len(names)}", "};")
    er._emit_common_data(out, {n: i for i, n in enumerate(names)}, lambda n: f"CCOPT_HAVE_{n}")
    er._emit_machine(out, data)
    out.add("const void *const used[] = {ccopt_cpu_names, ccopt_cpu_leaves, ccopt_cpu_cpuid_bits, ccopt_cpu_implies,",
            "                            ccopt_cpu_recipes, ccopt_cpu_levels};")
    (tmp_path / "t.c").write_text("\n".join(out.lines) + "\n")
    r = subprocess.run([tool, *extra, *WARNINGS, "-Woverflow", "-fsyntax-only", str(tmp_path / "t.c")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]


# --- untrusted input, bounds and processes (docs/explanation/robustness.md section 9)
ENV_WARNINGS = ("-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1")


ENV_DRIVER = r"""
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include "ccopt_cpu.h"

int main(int argc, char **argv)
{
    static char value[4 << 20];
    size_t n = 0;
    FILE *fh;
    if (argc == 3) {
        fh = fopen(argv[2], "rb");
        if (fh == NULL)
            return 2;
        n = fread(value, 1, sizeof value - 1, fh);
        fclose(fh);
        value[n] = '\0';
        setenv(argv[1], value, 1);
    }
    ccopt_cpu_init();
    printf("%s\n", ccopt_cpu_have(ccopt_cpu_id("SSE2")) ? "SSE2" : "-");
    return 0;
}
"""


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("rt")
    (d / "driver.c").write_text(ENV_DRIVER)
    emit_runtime.write_table(d)  # what configure writes into the build directory
    exe = d / "driver"
    subprocess.run([need("gcc"), *ENV_WARNINGS, f"-I{RUNTIME}", f"-I{d}", str(RUNTIME / "ccopt_cpu.c"),
                    str(d / "driver.c"), "-o", str(exe)], check=True)
    return exe


def run_with_env(exe: Path, var: str, value: bytes, tmp: Path) -> bytes:
    (tmp / "value").write_bytes(value)
    env = clean_env()
    r = subprocess.run([str(exe), var, str(tmp / "value")], env=env, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stderr


@pytest.mark.parametrize("var", ["CCOPT_DISABLE_CPU_FEATURES", "CCOPT_ENABLE_CPU_FEATURES"])
def test_a_megabyte_of_unknown_names_prints_a_few_lines(driver: Path, tmp_path: Path, var: str) -> None:
    names = b" ".join(b"nosuch%d" % i for i in range(120_000))  # ~1 MB
    err = run_with_env(driver, var, names, tmp_path)
    lines = err.decode().splitlines()
    assert len(err) < 4096, f"{len(err)} bytes printed"
    # 8 messages, the count of the rest, and for ENABLE that the list named nothing it could keep
    extra = ["ccopt: CCOPT_ENABLE_CPU_FEATURES names no CPU feature of x86_64; ignored (all features stay enabled)"]
    tail = extra if var == "CCOPT_ENABLE_CPU_FEATURES" and lines[-1] == extra[0] else []
    assert len(lines) == 9 + len(tail) and lines[len(lines) - len(tail) - 1] == \
        f"ccopt: {var}: 119992 more ignored names not shown"
    assert lines[0].startswith(f"ccopt: {var}: unknown CPU feature 'nosuch0'; ignored (known on ")
    assert lines[1] == f"ccopt: {var}: unknown CPU feature 'nosuch1'; ignored"  # the known list once


def test_one_huge_name_is_cut(driver: Path, tmp_path: Path) -> None:
    err = run_with_env(driver, "CCOPT_DISABLE_CPU_FEATURES", b"x" * 1_000_000, tmp_path)
    assert len(err) < 2048
    assert err.startswith(b"ccopt: CCOPT_DISABLE_CPU_FEATURES: unknown CPU feature '" + b"x" * 37 + b"...'")


def test_control_bytes_are_escaped(driver: Path, tmp_path: Path) -> None:
    err = run_with_env(driver, "CCOPT_DISABLE_CPU_FEATURES", b"\x1b[31mred\x07\xff\\x", tmp_path)
    assert all(b >= 0x20 or b == 0x0A for b in err) and b"\xff" not in err
    assert b"unknown CPU feature '\\x1b[31mred\\x07\\xff\\\\x'" in err


def test_repeated_baseline_names_are_bounded(driver: Path, tmp_path: Path) -> None:
    """A name the runtime knows, repeated: its message too is said a few times only."""
    if b"SSE2" not in subprocess.run([str(driver)], capture_output=True).stdout:
        pytest.skip("the expected feature names are those of an x86_64 host")
    err = run_with_env(driver, "CCOPT_ENABLE_CPU_FEATURES", b"ASIMD " * 100_000, tmp_path)
    lines = err.decode().splitlines()
    assert len(lines) == 10  # 8 messages, the count of the rest, the list ignored whole
    assert lines[0] == "ccopt: CCOPT_ENABLE_CPU_FEATURES: ASIMD is not a CPU feature of x86_64; ignored"


# --------------------------------------------------------------------------- process state (AMX permission)

# Fakes every x86_64 feature; the ones whose state Linux grants on request (AMX) with 2, which makes
# their first query request it for real.  "plain" queries everything a library without AMX code does
# (init, its targets, the level); "amx" then queries two AMX features.
XCOMP_DRIVER = r"""
#include <stdio.h>
#include <string.h>
#include "ccopt_cpu.h"

int main(int argc, char **argv)
{
    unsigned char fake[CCOPT_CPU_MAX_FEATURE];
    int i;
    memset(fake, 0, sizeof fake);
    for (i = 0; i < CCOPT_CPU_MAX_FEATURE; ++i)
        if (ccopt_cpu_on_arch(i))
            fake[i] = (unsigned char)(strncmp(ccopt_cpu_name(i), "AMX", 3) == 0 ? 2 : 1);
    if (argc > 1 && strcmp(argv[1], "real") == 0)
        (void)ccopt_cpu_init();
    else
        ccopt_cpu_set_for_test(fake);
    printf("%d %d %d\n", ccopt_cpu_init(), CCOPT_CPU_HAVE(AVX2), ccopt_cpu_level());
    if (argc > 1 && strcmp(argv[1], "amx") == 0) {
        printf("%d", CCOPT_CPU_HAVE(AMX_INT8));
        printf(" %d\n", CCOPT_CPU_HAVE(AMX_TILE));
    }
    return 0;
}
"""


def _xcomp_requests(binary: Path, arg: str, tmp_path: Path) -> tuple[list[str], str]:
    """The process's arch_prctl(ARCH_REQ_XCOMP_PERM) calls as strace saw them, and its output."""
    log = tmp_path / f"strace-{arg}.txt"
    proc = subprocess.run([need("strace"), "-f", "-e", "trace=arch_prctl", "-o", str(log), str(binary), arg],
                          capture_output=True, text=True, env=_env(None), timeout=60)
    assert proc.returncode == 0, proc.stderr
    calls = [ln for ln in log.read_text().splitlines() if "XCOMP_PERM" in ln or "0x1023" in ln]
    return calls, proc.stdout


@needs_x86_64
@pytest.mark.skipif(sys.platform != "linux", reason="arch_prctl is Linux's")
def test_amx_permission_is_requested_only_by_a_query_of_amx(build: Builder, tmp_path: Path) -> None:
    """A library without AMX code must not change its host: the tile-data permission makes the kernel size
    every signal frame for it (a host's 8 KiB sigaltstack then fails).  ccopt_cpu_init() and the queries of
    other features make no arch_prctl; the first AMX query makes exactly one, and its answer counts."""
    binary = build("gcc", "-DCCOPT_HAVE_SSE", sources=(*LIB, "xcomp.c"))
    for arg in ("plain", "real"):
        calls, out = _xcomp_requests(binary, arg, tmp_path)
        assert calls == [] and out.split()[0] == "0", (arg, out)
    calls, out = _xcomp_requests(binary, "amx", tmp_path)
    assert len(calls) == 1, calls
    granted = calls[0].rstrip().endswith("= 0")
    assert out.splitlines()[1] == f"{int(granted)} {int(granted)}"


def test_a_quiet_build_says_nothing_on_stderr_and_still_applies_the_masks(build: Builder) -> None:
    """A library must not write to its host's stderr: built with CCOPT_CPU_QUIET (the Meson option
    runtime-messages=false), what it ignores in the environment goes unsaid; what it applies still applies."""
    loud = build("gcc", "-DCCOPT_HAVE_SSE", sources=(*LIB, "xcomp.c"))
    quiet = build("gcc", "-DCCOPT_HAVE_SSE", "-DCCOPT_CPU_QUIET", sources=(*LIB, "xcomp.c"))
    for env in ({"CCOPT_DISABLE_CPU_FEATURES": "NOPE SSE"}, {"CCOPT_ENABLE_CPU_FEATURES": "NOPE"},
                {"CCOPT_DISABLE_CPU_FEATURES": "AVX2", "CCOPT_ENABLE_CPU_FEATURES": "SSE2"}):
        said = subprocess.run([str(loud), "real"], capture_output=True, text=True, env=_env(env), timeout=60)
        silent = subprocess.run([str(quiet), "real"], capture_output=True, text=True, env=_env(env), timeout=60)
        assert said.stderr.startswith("ccopt: ") and silent.stderr == "" and silent.stdout == said.stdout, env
    masked = subprocess.run([str(quiet), "real"], capture_output=True, text=True, timeout=60,
                            env=_env({"CCOPT_DISABLE_CPU_FEATURES": "AVX2_ISA"}))
    assert masked.stdout.split()[1] == "0"  # CCOPT_CPU_HAVE(AVX2)
