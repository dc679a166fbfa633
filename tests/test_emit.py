"""Generated headers: ``ccopt_config.h``, ``ccopt_kernel.h`` and ``<source>.h`` (golden files), written only
when they change."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest

from ccopt_meson import Detection, Request, detect
from ccopt_meson.dispatch import parse_text, select
from ccopt_meson.emit import config_header, dispatch_header, header_name, kernel_header, write_if_changed

from .helpers import cli, configure_args, one_error, x86_gcc

GOLDEN = Path(__file__).parent / "data" / "golden"


@pytest.fixture
def gcc12_x86_64(fake: Callable[..., Any]) -> Detection:
    """gcc 12 on x86_64 (replayed), the default baseline, every dispatch target but XOP and FMA4."""
    return detect(Request(command=("fakecc",), baseline="min", dispatch="max -xop -fma4"), runner=fake())


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("CCOPT_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; rerun with CCOPT_UPDATE_GOLDEN=1 if intended"


def test_golden_config_header(gcc12_x86_64: Detection) -> None:
    _golden("ccopt_config.x86_64-gcc.h", config_header(gcc12_x86_64))
    _golden("ccopt_kernel.x86_64-gcc.h", kernel_header(gcc12_x86_64))


def test_the_kernel_header_does_not_depend_on_the_dispatch_list(fake: Callable[..., Any]) -> None:
    """Every kernel version force-includes ccopt_kernel.h: a cpu-dispatch change must leave it as it is
    (else every kernel recompiles), and ccopt_config.h still holds everything."""
    docs = [detect(Request(command=("fakecc",), dispatch=d), runner=fake()) for d in ("max", "avx2 sse41", "none")]
    assert len({kernel_header(d) for d in docs}) == 1 and len({config_header(d) for d in docs}) == 3
    assert '#include "ccopt_kernel.h"' in config_header(docs[0])
    assert "CCOPT_WITH_CPU_DISPATCH" not in kernel_header(docs[0])


def test_golden_dispatch_header(gcc12_x86_64: Detection) -> None:
    targets = select(parse_text("/*@targets $maxopt baseline sse42 (fma3 avx2) avx512_skx asimd */"), gcc12_x86_64)
    assert header_name("src/kern.dispatch.c") == "kern.dispatch.h"
    _golden("kern.dispatch.h", dispatch_header("src/kern.dispatch.c", targets))


def test_unguarded_vendor_headers_get_a_guard(fake: Callable[..., Any]) -> None:
    """clang's <vecintrin.h> has no include guard: a second inclusion by the user's code must not break."""
    doc = detect(Request(command=("fakecc",), baseline="vx"), runner=fake(scenario="gcc12-s390x"))
    assert "(defined(CCOPT_HAVE_VX)) && !defined(__VEC_CLASS_FP_ZERO)" in kernel_header(doc)


def test_headers_are_rewritten_only_when_they_change(gcc12_x86_64: Detection, tmp_path: Path) -> None:
    """A no-change reconfigure must not touch the header's mtime: everything including it would recompile."""
    path = tmp_path / "ccopt_config.h"
    assert write_if_changed(path, config_header(gcc12_x86_64)) is True
    before = path.stat().st_mtime_ns
    os.utime(path, ns=(before - 10**9, before - 10**9))
    assert write_if_changed(path, config_header(gcc12_x86_64)) is False
    assert path.stat().st_mtime_ns == before - 10**9


def test_directory_in_place_of_the_config_header(tmp_path: Path) -> None:
    (tmp_path / "ccopt_config.h").mkdir()
    one_error(cli(*configure_args(tmp_path, x86_gcc(), "--write-config")),
              f"cannot write {tmp_path / 'ccopt_config.h'}: Is a directory")
