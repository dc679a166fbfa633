"""Probing with a scripted fake compiler: batching, attribution, pruning, warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from ccopt_meson import Request, detect, tables
from ccopt_meson.errors import CompilerError
from ccopt_meson.probe import diagnose


def run(fake: Any, **kw: Any) -> dict[str, Any]:
    req = Request(command=("fakecc",), baseline=kw.pop("baseline", "min"), dispatch=kw.pop("dispatch", "max"))
    return detect(req, runner=fake, **kw)


def test_all_pass_in_one_batch(fake: Callable[..., Any]) -> None:
    cc = fake()
    doc = run(cc)
    assert doc["arch"] == "x86_64" and doc["compiler"]["id"] == "gcc" and doc["compiler"]["version"] == "12.2.0"
    assert doc["baseline"]["names"] == ["SSE", "SSE2", "SSE3"]
    highest = tables.table_for("x86_64", "gcc").sort(tables.table_for("x86_64", "gcc").features)[-1]
    assert doc["dispatch"]["names"][0] == highest and "AVX512_SPR" in doc["dispatch"]["names"]
    assert doc["probes"] == 2 == len(cc.calls)  # one macro dump, one batched compile


def test_broken_probe_is_attributed_and_pruned_upwards(fake: Callable[..., Any]) -> None:
    cc = fake(broken_probes=["avx512f.c"])
    doc = run(cc)
    f = doc["features"]
    assert f["AVX512F"]["supported"] is False and "'__m512' undeclared" in f["AVX512F"]["reason"]
    assert f["AVX512_SKX"]["reason"] == "requires AVX512F, which is unsupported"
    assert f["AVX2"]["supported"] is True
    assert doc["probes"] == 3  # dump, batch, batch again without the failures


def test_rejected_flag_is_attributed_to_its_feature(fake: Callable[..., Any]) -> None:
    doc = run(fake(reject_flags=["-mavx512fp16"]))
    spr = doc["features"]["AVX512_SPR"]
    assert spr["supported"] is False and "-mavx512fp16" in spr["reason"]
    assert "AVX512_ICL" in doc["dispatch"]["names"]


def test_flag_accepted_with_a_warning_counts_as_unsupported(fake: Callable[..., Any]) -> None:
    doc = run(fake(warn_flags=["-mxop"]))
    assert doc["features"]["XOP"]["supported"] is False
    assert "is ignored" in doc["features"]["XOP"]["reason"]


def test_warning_inside_a_compiler_header_costs_nothing(fake: Callable[..., Any]) -> None:
    doc = run(fake(header_warning=True))
    assert doc["features"]["AVX512_KNL"]["supported"] is True


def test_unknown_arch_gives_no_features_not_an_error(fake: Callable[..., Any]) -> None:
    doc = run(fake(macros="#define __GNUC__ 12\n#define __sparc__ 1\n"))
    assert doc["arch"] == "unknown" and doc["baseline"]["names"] == [] and doc["dispatch"]["names"] == []


def test_aarch64_cross_compiler_is_detected_from_macros(fake: Callable[..., Any]) -> None:
    doc = run(fake(macros="#define __aarch64__ 1\n#define __GNUC__ 12\n#define __ARM_NEON 1\n"))
    assert doc["arch"] == "aarch64"
    assert doc["baseline"]["names"] == ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
    assert doc["baseline"]["args"] == []
    assert doc["dispatch"]["names"] == ["SVE", "ASIMDFHM", "ASIMDDP", "ASIMDHP"]


def test_native_is_refused_when_cross_compiling(fake: Callable[..., Any]) -> None:
    with pytest.raises(Exception, match="'native' cannot be used when cross-compiling"):
        run(fake(macros="#define __aarch64__ 1\n#define __GNUC__ 12\n"), baseline="native")


def test_broken_compiler_is_an_error_naming_it(fake: Callable[..., Any]) -> None:
    cc = fake(reject_flags=["-dM"])
    with pytest.raises(CompilerError, match="compiler 'fakecc' failed on an empty file"):
        run(cc)


def test_diagnose_classifies_lines() -> None:
    owners = {"/p/avx2.c": "AVX2"}
    d = diagnose("/usr/include/x.h:3:1: warning: meh\n", 0, owners, {})
    assert not d.bad
    d = diagnose("clang: warning: argument unused during compilation: '-mavx2'\n", 0, owners, {"-mavx2": ["AVX2"]})
    assert d.bad and d.attributed == {"AVX2": "clang: warning: argument unused during compilation: '-mavx2'"}
    d = diagnose("cl : Command line warning D9002 : ignoring unknown option '/arch:AVX9'\n", 0, owners, {})
    assert d.bad and d.unattributed
    d = diagnose("", -11, owners, {})
    assert d.bad and "signal" in d.unattributed[0]


def test_a_compiler_that_writes_nothing_is_an_error(fake: Callable[..., Any]) -> None:
    """Like `true`: exit 0 without an object file must not make every feature "supported"."""
    from ccopt_meson.probe import ProcResult

    cc = fake()

    def lazy(argv: Any, timeout: float) -> ProcResult:
        res: ProcResult = cc(argv, timeout)
        if "-o" in argv:
            Path(argv[argv.index("-o") + 1]).unlink()
        return res

    with pytest.raises(CompilerError, match="cannot compile a trivial C file.*exited 0 but wrote no object file"):
        run(lazy)


def test_msvc_style_driver_checks_conflicting_arch_flags_by_compiling(tmp_path: Path) -> None:
    """/arch: flags conflict, so each feature's own /arch:X is verified with a compile, not a macro dump."""
    from ccopt_meson.probe import ProcResult

    calls: list[list[str]] = []

    def cl(argv: Any, timeout: float) -> ProcResult:
        argv = list(argv)
        calls.append(argv)
        out = next(a[3:] for a in argv if a.startswith("/Fo"))
        Path(out).write_bytes(b"")
        return ProcResult(0, "")

    doc = detect(Request(command=("cl",), compiler_id="msvc", cpu_family="x86_64", cross=False), runner=cl)
    assert {"AVX", "AVX2", "AVX512_SKX", "SSE42"} <= set(doc["dispatch"]["names"])
    assert doc["features"]["AVX512_SPR"]["supported"] is False  # a table entry with a reason
    assert any("/arch:AVX2" in a for a in calls[-1] + sum(calls, []))
