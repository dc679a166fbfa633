"""The ISA audit on what ships (ccopt_meson/audit/artifacts.py, check.py): a corpus of seeded faults, each
found with its function named in the build directory, the installed tree and a wheel of it, on x86_64 and
on aarch64 cross; clean builds (LTO, unity, cpu-baseline=none, a cross build with a native tool) pass; the
dispatch manifest each linked file carries."""

from __future__ import annotations

import io
import json
import platform
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from ccopt_meson import manifest
from ccopt_meson.audit import elf

from .conftest import ROOT, need, need_module
from .helpers import clean_env
from .snippets import snippet
from .test_meson import Build, project

IS_X86_64 = platform.machine().lower() in ("x86_64", "amd64")
INSTALL = "the package's 'audit' extra"
AARCH64 = str(ROOT / "tests" / "cross" / "aarch64.ini")


def _cpu_has(flag: str) -> bool:
    try:
        return f" {flag}" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def seeded(tmp_path: Path, *setup: str, env: dict[str, str] | None = None) -> tuple[Build, Path, Path]:
    """The seeded-faults project built and installed: its build directory, installed tree and a wheel of it."""
    need_module("iced_x86", INSTALL)
    need_module("elftools", INSTALL)
    b = Build(tmp_path, project(tmp_path, "seeded_faults"))
    if AARCH64 in setup:
        need("aarch64-linux-gnu-gcc")
        need_module("capstone", INSTALL)
        b.env.pop("CC")
        b.env.pop("CXX")
    b.env.update(env or {})
    b.meson_cmd("setup", *setup, str(b.dir))
    b.ninja()
    tree = tmp_path / "tree"
    b.run(*b.meson, "install", "-C", str(b.dir), "--destdir", str(tree), "--quiet")
    wheel = tmp_path / "seeded_faults-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:  # the installed files, as a wheel holds them
        for path in sorted(tree.rglob("*")):
            if path.is_file() and not path.is_symlink():
                z.write(path, "seeded_faults-1.0.data/data/" + str(path.relative_to(tree)))
        z.writestr("seeded_faults-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n")
    return b, tree, wheel


def audit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ccopt_meson", "audit", *args], capture_output=True, text=True,
                          env=clean_env(PYTHONPATH=str(ROOT)))


def found_everywhere(b: Build, tree: Path, wheel: Path, function: str, *options: str) -> None:
    for what in (["--linked", str(b.dir)], [str(tree)], [str(wheel)]):
        r = audit(*options, *what)
        assert r.returncode == 1, f"{what}: {r.stdout[-2000:]}{r.stderr}"
        assert f": {function}: needs " in r.stdout, f"{what}: {function} not named:\n{r.stdout[-2000:]}"


def clean_everywhere(b: Build, tree: Path, wheel: Path, *options: str) -> None:
    for what in (["--linked", str(b.dir)], [str(tree)], [str(wheel)]):
        r = audit(*options, *what)
        assert r.returncode == 0, f"{what}: {r.stdout[-3000:]}{r.stderr}"


CORPUS = json.loads((ROOT / "tests" / "projects" / "seeded_faults" / "corpus.json").read_text())


def _case(arch: str, fault: str) -> dict[str, Any]:
    return next(c for c in CORPUS[arch] if c["fault"] == fault)


def _contract(case: dict[str, Any]) -> list[str]:
    """The level the build must run on, when the fault is a whole build above it."""
    return ["--baseline", case["baseline"]] if case.get("baseline") else []


@pytest.mark.slow
@pytest.mark.skipif(not IS_X86_64, reason="the faults are x86_64 code built by the host's gcc")
@pytest.mark.parametrize("fault", [c["fault"] for c in CORPUS["x86_64"]])
def test_each_seeded_fault_is_found_in_the_build_the_tree_and_the_wheel_on_x86_64(tmp_path: Path, fault: str) -> None:
    case = _case("x86_64", fault)
    if case.get("needs_cpu") and not _cpu_has(case["needs_cpu"]):
        pytest.skip(f"this fault seeds {case['needs_cpu']} only on a CPU that has it")
    b, tree, wheel = seeded(tmp_path, *case.get("setup", ()), env=case.get("env"))
    found_everywhere(b, tree, wheel, case["function"], *_contract(case))


@pytest.mark.slow
@pytest.mark.parametrize("fault", [c["fault"] for c in CORPUS["aarch64"]])
def test_each_seeded_fault_is_found_in_the_build_the_tree_and_the_wheel_on_aarch64(tmp_path: Path, fault: str) -> None:
    case = _case("aarch64", fault)
    b, tree, wheel = seeded(tmp_path, "--cross-file", AARCH64, *case.get("setup", ()), env=case.get("env"))
    found_everywhere(b, tree, wheel, case["function"], *_contract(case))


@pytest.mark.slow
@pytest.mark.skipif(not IS_X86_64, reason="builds x86_64 code with the host's gcc")
@pytest.mark.parametrize("mode", [c["fault"] for c in CORPUS["clean"]])
def test_a_clean_build_passes_in_the_build_the_tree_and_the_wheel(tmp_path: Path, mode: str) -> None:
    b, tree, wheel = seeded(tmp_path, *_case("clean", mode)["setup"])
    clean_everywhere(b, tree, wheel)
    r = audit(str(tree))
    assert "guarded versions (functions): AVX2 1" in r.stdout  # the hidden version is seen, and counted
    words = snippet("audit/shipped").split()  # the how-to's command, on this tree
    assert words[:2] == ["ccopt-meson", "audit"] and words[-1] == "/tmp/destdir"
    assert audit(*words[2:-1], str(tree)).returncode == 0


@pytest.mark.slow
def test_a_clean_cross_build_with_a_native_tool_passes_and_says_it_left_the_tool_out(tmp_path: Path) -> None:
    b, tree, wheel = seeded(tmp_path, "--cross-file", AARCH64)
    clean_everywhere(b, tree, wheel)
    r = audit("--linked", str(b.dir))
    assert "gen: built for the build machine" in r.stdout or not IS_X86_64


@pytest.mark.slow
@pytest.mark.skipif(not IS_X86_64, reason="builds x86_64 code with the host's gcc")
def test_the_manifest_declares_the_baseline_and_each_versions_test_and_is_the_same_across_build_paths(
        tmp_path: Path) -> None:
    notes = []
    for where in ("a", "some/deeper/path"):
        b, tree, _ = seeded(tmp_path / where)
        lib = next(tree.rglob("libfaults.so"))
        raw = subprocess.run([need("objcopy"), "-O", "binary", "--only-section", manifest.SECTION, str(lib),
                              "/dev/stdout"], capture_output=True, check=True).stdout
        notes.append(raw)
        binary = elf.read(lib.name, lib.read_bytes())
        assert {n.source for n in binary.notes} == {"", "k_dispatch"}
        dispatch = next(n for n in binary.notes if n.source == "k_dispatch")
        assert dict(dispatch.versions) == {"AVX2": ("AVX2",), "BASELINE": ()}
        assert all(n.baseline == ("SSE", "SSE2") for n in binary.notes)
    assert notes[0] == notes[1] and 0 < len(notes[0]) < 1024


def test_a_manifest_note_of_another_format_is_one_line_naming_the_file() -> None:
    with pytest.raises(ValueError, match="lib.so: its ccopt manifest note has format 2"):
        manifest.parse(json.dumps({"ccopt": 2}).encode(), "lib.so")
    with pytest.raises(ValueError, match="not JSON"):
        manifest.parse(b"{", "lib.so")


def test_a_deb_is_unpacked_with_the_standard_library(tmp_path: Path) -> None:
    """A .deb holding one ELF file without a manifest: checked dispatch-blind against the level given."""
    need_module("elftools", INSTALL)
    need_module("iced_x86", INSTALL)
    if not IS_X86_64:
        pytest.skip("links an x86_64 program with the host's gcc")
    src = tmp_path / "p.c"
    src.write_text("int main(void) { return 0; }\n")
    exe = tmp_path / "p"
    subprocess.run([need("gcc"), "-O2", str(src), "-o", str(exe)], check=True)
    data = io.BytesIO()
    import tarfile

    with tarfile.open(fileobj=data, mode="w:xz") as tar:
        tar.add(exe, "./usr/bin/p")
    members = [(b"debian-binary", b"2.0\n"), (b"control.tar.xz", b""), (b"data.tar.xz", data.getvalue())]
    blob = b"!<arch>\n" + b"".join(name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6)
                                     + b"100644".ljust(8) + str(len(d)).encode().ljust(10) + b"`\n" + d
                                     + (b"\n" if len(d) & 1 else b"") for name, d in members)
    deb = tmp_path / "p_1.0_amd64.deb"
    deb.write_bytes(blob)
    r = audit("--baseline", "x86-64-v2", str(deb))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "p_1.0_amd64.deb:usr/bin/p: ok" in r.stdout and "dispatch-blind" in r.stdout
    r = audit(str(deb))
    assert r.returncode == 2 and "no ccopt manifest" in r.stderr and "--baseline" in r.stderr
