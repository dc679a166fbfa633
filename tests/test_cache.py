"""The feature cache: hit starts no compiler, misses and corruption are warnings, flush."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from ccopt_meson import Request, detect, flush
from ccopt_meson.cache import cache_path

REQ = Request(command=("fakecc",))


def test_hit_starts_no_process(fake: Callable[..., Any], tmp_path: Path) -> None:
    first = detect(REQ, build_dir=tmp_path, runner=fake())
    cc = fake()
    second = detect(REQ, build_dir=tmp_path, runner=cc)
    assert first["cache"]["hit"] is False and second["cache"]["hit"] is True
    assert cc.calls == [] and second["probes"] == 0
    assert second["dispatch"] == first["dispatch"]


@pytest.mark.parametrize("change", [
    {"args": ("-O2",)}, {"lang": "cpp"}, {"command": ("ccache", "fakecc")},
])
def test_key_covers_the_compiler_and_its_args(fake: Callable[..., Any], tmp_path: Path,
                                              change: dict[str, Any]) -> None:
    detect(REQ, build_dir=tmp_path, runner=fake())
    cc = fake()
    doc = detect(REQ._replace(**change), build_dir=tmp_path, runner=cc)
    assert doc["cache"]["hit"] is False and cc.calls


@pytest.mark.parametrize("change", [
    {"baseline": "avx2"}, {"dispatch": "max -xop"}, {"disable_optimization": True}, {"debug_build": True},
])
def test_a_new_request_reuses_what_was_probed(fake: Callable[..., Any], tmp_path: Path,
                                              change: dict[str, Any]) -> None:
    first = detect(REQ, build_dir=tmp_path, runner=fake())
    cc = fake()
    doc = detect(REQ._replace(**change), build_dir=tmp_path, runner=cc)
    assert doc["cache"]["hit"] is False and doc["cache"]["key"] != first["cache"]["key"]
    assert cc.calls == [] and doc["probes"] == 0  # every outcome it needs is known already
    if "baseline" in change:
        assert doc["baseline"]["names"][-1] == "AVX2"


def test_a_new_request_probes_only_what_it_adds(fake: Callable[..., Any], tmp_path: Path) -> None:
    detect(Request(command=("fakecc",), dispatch="avx2"), build_dir=tmp_path, runner=fake())
    cc = fake()
    doc = detect(Request(command=("fakecc",), dispatch="avx2 avx512_skx"), build_dir=tmp_path, runner=cc)
    assert doc["dispatch"]["names"] == ["AVX512_SKX", "AVX2"]
    assert len(cc.calls) == 1 and "-mavx512vl" in cc.calls[0]  # one batch of the new features, no macro dump


def test_request_is_normalised_in_the_key(fake: Callable[..., Any], tmp_path: Path) -> None:
    detect(Request(command=("fakecc",), dispatch="MAX,-XOP"), build_dir=tmp_path, runner=fake())
    doc = detect(Request(command=("fakecc",), dispatch="max -xop"), build_dir=tmp_path, runner=fake())
    assert doc["cache"]["hit"] is True


@pytest.mark.parametrize("content,warning", [
    (b"", "not valid JSON"), (b'{"schema_version": 1', "not valid JSON"), (b"\xff\xfe\x00garbage", "not valid JSON"),
    (b"[1, 2]", "unexpected content"), (b'{"schema_version": 99, "cache": {}}', "schema version 99"),
])
def test_corrupt_cache_is_a_miss_with_a_warning(fake: Callable[..., Any], tmp_path: Path, capsys: Any,
                                                content: bytes, warning: str) -> None:
    cache_path(tmp_path).write_bytes(content)
    doc = detect(REQ, build_dir=tmp_path, runner=fake())
    assert doc["cache"]["hit"] is False
    err = capsys.readouterr().err
    assert err.startswith("ccopt-meson: warning: ") and warning in err and err.count("\n") == 1
    assert json.loads(cache_path(tmp_path).read_text())["cache"]["key"] == doc["cache"]["key"]


def test_hand_edited_cache_is_not_trusted(fake: Callable[..., Any], tmp_path: Path, capsys: Any) -> None:
    detect(REQ, build_dir=tmp_path, runner=fake())
    path = cache_path(tmp_path)
    doc = json.loads(path.read_text())
    doc["dispatch"]["names"] = ["AVX512_SPR", "MADE_UP"]
    path.write_text(json.dumps(doc))
    again = detect(REQ, build_dir=tmp_path, runner=fake())
    assert again["cache"]["hit"] is False and "MADE_UP" not in again["dispatch"]["names"]
    assert "modified after it was written" in capsys.readouterr().err


def test_flush_deletes_and_next_run_probes(fake: Callable[..., Any], tmp_path: Path) -> None:
    detect(REQ, build_dir=tmp_path, runner=fake())
    assert flush(tmp_path) == [cache_path(tmp_path)]
    cc = fake()
    assert detect(REQ, build_dir=tmp_path, runner=cc)["cache"]["hit"] is False and cc.calls


def test_cache_file_is_deterministic(fake: Callable[..., Any], tmp_path: Path) -> None:
    detect(REQ, build_dir=tmp_path / "a", runner=fake())
    detect(REQ, build_dir=tmp_path / "b", runner=fake())
    a, b = (cache_path(tmp_path / d).read_bytes() for d in "ab")
    assert a == b and str(tmp_path).encode() not in a


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into read-only directories")
def test_read_only_build_dir_is_a_clear_error(fake: Callable[..., Any], tmp_path: Path) -> None:
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(Exception, match="check that the build directory is writable"):
            detect(REQ, build_dir=tmp_path, runner=fake())
    finally:
        tmp_path.chmod(0o755)


def test_native_answers_are_keyed_by_the_host_cpu(fake: Callable[..., Any], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from ccopt_meson import api

    req = Request(command=("fakecc",), baseline="native", cross=False)
    detect(req, build_dir=tmp_path, runner=fake())
    assert detect(req, build_dir=tmp_path, runner=fake())["cache"]["hit"] is True
    monkeypatch.setattr(api, "host_cpu_identity", lambda: "another CPU")
    assert detect(req, build_dir=tmp_path, runner=fake())["cache"]["hit"] is False
