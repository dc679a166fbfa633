"""The commands meson.build runs (``configure``, ``targets``): the line protocol, the cache file, determinism."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from ccopt_meson import Request, cache, fsio, host
from ccopt_meson.errors import InputError

from .conftest import NUMPY22, ROOT, FakeCompiler, detect_doc, need
from .helpers import (
    CACHE,
    clean_env,
    cli,
    configure_args,
    fakecc,
    future_schema,
    good_source,
    kv,
    one_error,
    run_targets,
    set_path,
    x86_gcc,
)
from .test_meson import copy_repo


def _meson_project(tmp_path: Path) -> Path:
    src = tmp_path / "tiny"
    copy_repo(src / "subprojects" / "ccopt-meson")
    (src / "meson.build").write_text("project('tiny', 'c')\nccopt = subproject('ccopt-meson')\n")
    return src


@pytest.mark.slow
def test_meson_shows_the_error_line(tmp_path: Path) -> None:
    need("gcc")
    src = _meson_project(tmp_path)
    env = clean_env()
    r = subprocess.run([sys.executable, "-m", "mesonbuild.mesonmain", "setup", str(tmp_path / "build"),
                        "-Dccopt-meson:cpu-baseline=avx3"], cwd=src, env=env, capture_output=True, text=True)
    line = ("ccopt-meson: error: cpu-baseline: unknown feature 'avx3' (did you mean 'AVX' or 'VSX3' or 'AVX2'?); "
            "'ccopt-meson features' lists them")
    assert r.returncode != 0
    output = r.stdout + r.stderr
    assert "Traceback" not in output
    errors = [ln for ln in output.splitlines() if "ERROR:" in ln]
    assert len(errors) == 1 and errors[0].endswith(line), output[-3000:]


@pytest.mark.parametrize("name", ["two\nlines.c", "a\t-fplugin=evil.so\tb.c"])
def test_source_names_the_line_protocol_cannot_carry_are_refused(tmp_path: Path, gcc12_x86_64_cache_file: Path,
                                                                  name: str) -> None:
    src = tmp_path / name
    src.write_text("/*@targets avx2 */\n")
    r = run_targets(src, gcc12_x86_64_cache_file, tmp_path)
    one_error(r, "which the lines meson.build reads cannot carry; rename it")
    assert "fplugin" not in r.stdout


def _edited(doc: dict[str, Any]) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    doc["probed"]["outcomes"]["AVX512_MADE_UP"] = [True, ""]
    return doc


FEATURE_FAULTS: list[Any] = [
    pytest.param(lambda good: b"", "not valid JSON", id="empty"),
    pytest.param(lambda good: good[: len(good) // 2], "not valid JSON", id="truncated"),
    pytest.param(lambda good: b"\xff\xfe\x00\x81" * 64, "not valid JSON", id="binary"),
    pytest.param(lambda good: b"[" * 100000, "not valid JSON", id="nested-too-deep"),
    pytest.param(lambda good: b"[]", "not written by ccopt-meson", id="wrong-shape-list"),
    pytest.param(lambda good: b'{"schema_version": 1}', "not written by ccopt-meson", id="wrong-shape-skeleton"),
    pytest.param(lambda good: json.dumps({"generator": fsio.MARK, "schema_version": cache.SCHEMA_VERSION}).encode(),
                 "cache: missing required key 'key'", id="marked-skeleton"),
    pytest.param(future_schema, f"schema version {cache.SCHEMA_VERSION + 1}, this helper reads {cache.SCHEMA_VERSION}",
                 id="future-schema"),
    pytest.param(lambda good: json.dumps(_edited(json.loads(good))).encode(),
                 "'AVX512_MADE_UP' is not a feature of x86_64", id="edited-by-hand"),
]


@pytest.mark.parametrize("corrupt,message", FEATURE_FAULTS)
def test_corrupt_cache_file(tmp_path: Path, gcc12_x86_64_cache_file: Path, corrupt: Callable[[bytes], bytes],
                              message: str) -> None:
    bad = tmp_path / "build" / CACHE
    bad.parent.mkdir()
    bad.write_bytes(corrupt(gcc12_x86_64_cache_file.read_bytes()))
    line = one_error(run_targets(good_source(tmp_path), bad, tmp_path), f"error: {CACHE}: {message}; ")
    assert line.endswith(f"; run 'ccopt-meson flush {bad.parent}' and configure again")
    assert not (tmp_path / "kern.dispatch.h").exists()


def test_missing_cache_file(tmp_path: Path) -> None:
    missing = tmp_path / "build" / CACHE
    one_error(run_targets(good_source(tmp_path), missing, tmp_path),
              f"{missing} does not exist; run 'ccopt-meson detect --build-dir {missing.parent}' or configure first")


def test_directory_as_cache_file(tmp_path: Path) -> None:
    path = tmp_path / CACHE
    path.mkdir()
    one_error(run_targets(good_source(tmp_path), path, tmp_path),
              f"feature cache {CACHE} is a directory, not a regular file", f"run 'ccopt-meson flush {tmp_path}'")


def test_cache_file_of_another_name(tmp_path: Path, gcc12_x86_64_cache_file: Path) -> None:
    other = tmp_path / "features.json"
    shutil.copy(gcc12_x86_64_cache_file, other)
    one_error(run_targets(good_source(tmp_path), other, tmp_path),
              f"--cache-file: '{other}' is not a ccopt cache file (ccopt-features.json)")


def test_targets_output_dir(tmp_path: Path, gcc12_x86_64_cache_file: Path) -> None:
    src = good_source(tmp_path)
    one_error(cli("targets", str(src), "--cache-file", str(gcc12_x86_64_cache_file)),
              "--output-dir is required outside Meson (MESON_BUILD_ROOT is not set)")
    (tmp_path / "file").write_text("")
    one_error(run_targets(src, gcc12_x86_64_cache_file, tmp_path / "file" / "sub"),
              f"cannot write {tmp_path / 'file' / 'sub' / 'kern.dispatch.h'}: Not a directory")
    r = cli("targets", str(src), "--cache-file", str(gcc12_x86_64_cache_file),
            env={"MESON_BUILD_ROOT": str(tmp_path / "mb"), "MESON_SUBDIR": "sub"})
    # the one note: the versions this source compiles, which the configure summary cannot know
    assert r.returncode == 0 and r.stderr == (
        f"ccopt-meson: note: targets: {src}: compiled versions: AVX512_SKX AVX2 SSE42 BASELINE\n"), r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]  # library, args, sources
    # baseline first, then ascending: the link order that keeps the lowest version's copy of a C++ inline symbol
    assert [row[0] for row in rows] == [f"ccopt_{t}_maxopt" for t in ("BASELINE", "SSE42", "AVX2", "AVX512_SKX")]
    assert {row[2] for row in rows} == {str(src)}
    assert (tmp_path / "mb" / "sub" / "kern.dispatch.h").is_file()


def test_same_inputs_give_byte_identical_files(tmp_path: Path) -> None:
    """Two build dirs, two processes with different hash seeds: the same bytes, no absolute paths."""
    cc = x86_gcc()
    compiler = fakecc("refuse-avx512f")  # failures with reasons are part of the files too
    src = tmp_path / "src" / "kern.dispatch.c"
    src.parent.mkdir()
    src.write_text("/*@targets $maxopt baseline sse42 (avx2 fma3) avx512_skx x86_v3 asimd vsx2 */\n")
    files: dict[str, list[bytes]] = {}
    stdout: list[str] = []
    for i, seed in enumerate(("1", "2")):
        out = tmp_path / f"build{i}"
        env = {"PYTHONHASHSEED": seed, "FAKECC_CC": cc}
        r = cli(*configure_args(out, compiler, "--dispatch", "max -xop", "--write-config"), env=env, cwd=out.parent)
        assert r.returncode == 0, r.stderr
        r = cli("targets", str(src), "--cache-file", str(out / CACHE), "--output-dir", str(out / "gen"), env=env)
        assert r.returncode == 0, r.stderr
        stdout.append(r.stdout)
        for name in (CACHE, "ccopt_config.h", "gen/kern.dispatch.h"):
            files.setdefault(name, []).append((out / name).read_bytes())
    assert stdout[0] == stdout[1] and "AVX512_SKX" not in stdout[0] and "FMA3__AVX2" in stdout[0]
    for name, (first, second) in files.items():
        assert first == second, f"{name} differs between build dirs / runs"
        text = first.decode()
        if name == CACHE:  # only the compiler command may be absolute
            assert json.loads(text)["request"]["command"] == [compiler]
            text = text.replace(json.dumps(compiler)[1:-1], "")
        assert str(tmp_path) not in text and "/tmp/" not in text and str(ROOT) not in text, name
    assert "ccopt-" not in files[CACHE][0].decode().replace("ccopt-meson", ""), "scratch paths leaked into reasons"


# --- untrusted input, bounds and processes (docs/explanation/robustness.md section 9)
EVIL = "-fplugin=/tmp/evil.so"


@pytest.fixture(scope="module")
def cache_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = tmp_path_factory.mktemp("features")
    detect_doc(Request(command=("fakecc",)), build_dir=build, runner=FakeCompiler())
    return build / CACHE


def targets(feature: Path, *sources: Path | str, out: Path) -> subprocess.CompletedProcess[str]:
    return cli("targets", *map(str, sources), "--cache-file", str(feature), "--output-dir", str(out), cwd=out)


# --------------------------------------------------------------------------- targets never overwrites


def test_a_generated_header_never_shadows_the_projects_own(tmp_path: Path, cache_file: Path) -> None:
    """blake3.c as a dispatch source would generate blake3.h into the build dir, in front of the
    project's public blake3.h on the include path: refused, naming both and the way out."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "blake3.c").write_text("/*@targets avx2 */\n")
    (src / "blake3.h").write_text("/* the library's own header */\n")
    one_error(targets(cache_file, src / "blake3.c", out=out),
              f"dispatch source '{src / 'blake3.c'}' would generate blake3.h, which shadows the project's own",
              "blake3.h; rename the source (e.g. to blake3.dispatch.c)")
    assert not (out / "blake3.h").exists()
    (src / "blake3.h").unlink()
    assert targets(cache_file, src / "blake3.c", out=out).returncode == 0


def test_a_noheader_source_is_compiled_for_its_target_and_gets_no_header(tmp_path: Path,
                                                                        cache_file: Path) -> None:
    """A project's own per-ISA file (x86/pitch_sse.c beside x86/pitch_sse.h, called through the project's
    own tables) is compiled with its target's flags and defines, under its own name, and no header is written
    anywhere: nothing can shadow the project's pitch_sse.h, whatever the include path's order."""
    src, out = tmp_path / "x86", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "pitch_sse.c").write_text("int pitch_sse(void) { return 1; }\n")
    (src / "pitch_sse.h").write_text("/* the library's own header */\n")
    r = targets(cache_file, f"{src / 'pitch_sse.c'}: $noheader sse41", f"{src / 'vq.c'}: $noheader avx2", out=out)
    assert r.returncode == 0, r.stderr
    lines = [line.split("\t") for line in r.stdout.splitlines()]
    assert [(t[2].rsplit("/", 1)[-1], t[3]) for t in lines] == [("pitch_sse.c", "SSE41"), ("vq.c", "AVX2")]
    assert "-msse4.1" in lines[0][1].split() and "-DCCOPT_HAVE_SSE41=1" in lines[0][1].split()
    assert sorted(p.name for p in out.iterdir() if p.suffix == ".h") == []


@pytest.mark.parametrize("lang,source,words", [
    ("c", "k.dispatch.cpp", "is C++, but was passed to ccopt's C 'targets'; pass it to "
                            "ccopt.get_variable('targets_cpp'), build its libraries with cpp_args:"),
    ("cpp", "k.dispatch.c", "is C, but was passed to 'targets_cpp'; pass it to ccopt.get_variable('targets')"),
])
def test_a_source_of_the_other_language_is_named(tmp_path: Path, cache_file: Path, lang: str, source: str,
                                                 words: str) -> None:
    """Meson would compile it with the other language's args, without its target's flags."""
    r = cli("targets", f"{source}: avx2", "--lang", lang, "--cache-file", str(cache_file),
            "--output-dir", str(tmp_path), cwd=tmp_path)
    one_error(r, f"dispatch source '{source}' {words}")
    other = "cpp" if lang == "c" else "c"
    ok = cli("targets", f"{source}: avx2", "--lang", other, "--cache-file", str(cache_file),
             "--output-dir", str(tmp_path), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr


def test_a_list_whose_targets_are_all_in_the_baseline_is_named(tmp_path: Path, cache_file: Path) -> None:
    """Without 'baseline' such a source would get no version at all (numpy drops targets the baseline
    already has); a list for other machines only, or one that builds something, is fine."""
    def run(text: str) -> subprocess.CompletedProcess[str]:
        return cli("targets", f"k.dispatch.c: {text}", "--cache-file", str(cache_file), "--output-dir",
                   str(tmp_path), cwd=tmp_path)

    one_error(run("sse2 sse asimd"), "k.dispatch.c: every target for x86_64 (SSE2, SSE) is part of the baseline "
              "and the list has no 'baseline': nothing would be built; add 'baseline' to the list")
    for fine in ("baseline sse2", "$keep_baseline sse2", "asimd vsx2", "sse2 avx2"):
        assert run(fine).returncode == 0, fine


def test_a_header_named_source_is_not_replaced_by_its_header(tmp_path: Path, cache_file: Path) -> None:
    src = tmp_path / "kern.h"
    src.write_text("/*@targets avx2 */\n")
    one_error(targets(cache_file, "kern.h", out=tmp_path), "dispatch source 'kern.h' would be replaced by its "
              "own generated header; rename it (e.g. to NAME.dispatch.c) or pass another --output-dir")
    assert src.read_text() == "/*@targets avx2 */\n"


@pytest.mark.parametrize("arg", [": avx2", "  : avx2 fma3"])
def test_a_target_list_without_a_source_is_refused(tmp_path: Path, cache_file: Path, arg: str) -> None:
    one_error(targets(cache_file, arg, out=tmp_path), "names no source before the ':'; write 'SOURCE: TARGETS'")
    assert not list(tmp_path.glob(".*h")) and not (tmp_path / ".h").exists()


def test_a_hand_written_header_is_not_overwritten(tmp_path: Path, cache_file: Path) -> None:
    (tmp_path / "dot.c").write_text("/*@targets avx2 */\n")
    (tmp_path / "dot.h").write_text("int dot(void);\n")
    one_error(targets(cache_file, "dot.c", out=tmp_path), f"{tmp_path / 'dot.h'} exists and was not generated by "
              "ccopt-meson; it would be overwritten by the header of 'dot.c'")
    assert (tmp_path / "dot.h").read_text() == "int dot(void);\n"


def test_a_header_it_generated_is_rewritten(tmp_path: Path, cache_file: Path) -> None:
    (tmp_path / "dot.c").write_text("/*@targets avx2 */\n")
    assert targets(cache_file, "dot.c", out=tmp_path).returncode == 0
    (tmp_path / "dot.c").write_text("/*@targets sse41 */\n")
    assert targets(cache_file, "dot.c", out=tmp_path).returncode == 0
    assert '"SSE41"' in (tmp_path / "dot.h").read_text()


@pytest.mark.parametrize("name", ["ccopt_dispatch.c", "ccopt_cpu.c", "ccopt_config.c", "ccopt_cpu_table.c"])
def test_a_source_cannot_shadow_the_runtime_headers(tmp_path: Path, cache_file: Path, name: str) -> None:
    (tmp_path / name).write_text("/*@targets avx2 */\n")
    header = name[:-2] + ".h"
    one_error(targets(cache_file, name, out=tmp_path), f"would generate {header}, which is one of ccopt-meson's "
              "own headers; rename the source")
    assert not (tmp_path / header).exists()


def test_a_source_linked_to_dev_zero_is_refused_at_once(tmp_path: Path, cache_file: Path) -> None:
    (tmp_path / "z.dispatch.c").symlink_to("/dev/zero")
    one_error(targets(cache_file, "z.dispatch.c", out=tmp_path), "dispatch source 'z.dispatch.c' is a "
              "device, not a regular file")


def test_a_source_bigger_than_the_cap_is_refused(tmp_path: Path, cache_file: Path) -> None:
    size = fsio.LIMITS.dispatch_source + (1 << 20)  # 17 MiB, as the robustness page says
    with open(tmp_path / "big.dispatch.c", "wb") as fh:
        fh.truncate(size)
    one_error(targets(cache_file, "big.dispatch.c", out=tmp_path), "dispatch source 'big.dispatch.c' is "
              f"{size} bytes, more than the {fsio.LIMITS.dispatch_source} this tool reads")


def test_a_source_name_that_is_not_utf8(tmp_path: Path, cache_file: Path) -> None:
    name = os.fsdecode(b"k\xff.dispatch.c")
    (tmp_path / name).write_text("/*@targets avx2 */\n")
    one_error(targets(cache_file, name, out=tmp_path), "dispatch source 'k\ufffd.dispatch.c' is not valid "
              "UTF-8; rename it")
    assert os.listdir(tmp_path) == [name]


@pytest.mark.parametrize("token", ["\x00", "\x1b[2J", "\x07beep"])
def test_an_invalid_token_is_escaped(tmp_path: Path, cache_file: Path, token: str) -> None:
    (tmp_path / "k.dispatch.c").write_bytes(b"/*@targets avx2 " + token.encode() + b"x */\n")
    line = one_error(targets(cache_file, "k.dispatch.c", out=tmp_path), "k.dispatch.c:1: invalid token '")
    assert all(c.isprintable() for c in line)


# --------------------------------------------------------------------------- a forged cache in a real build


def _copy_project(dest: Path) -> Path:
    src = dest / "dot"
    shutil.copytree(ROOT / "examples" / "dot", src, ignore=shutil.ignore_patterns("ccopt-meson"))
    sub = src / "subprojects" / "ccopt-meson"
    sub.mkdir(parents=True, exist_ok=True)
    for part in ("meson.build", "meson_options.txt", "tools", "ccopt_meson"):
        if (ROOT / part).is_dir():
            shutil.copytree(ROOT / part, sub / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / part, sub / part)
    return src


FORGERIES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "fplugin-in-args": lambda d: set_path(d, "request.args", [EVIL]),
    "fplugin-as-march": lambda d: set_path(d, "request.args", ["-march=x86-64" + EVIL]),
    "fplugin-in-command": lambda d: set_path(d, "request.command", [*d["request"]["command"], EVIL]),
    "fplugin-as-version": lambda d: set_path(d, "probed.compiler_version", EVIL),
    "fplugin-as-baseline-args": lambda d: {**d, "baseline": {"names": ["SSE"], "args": [EVIL]}},
    "headers-entry": lambda d: set_path(d, "probed.headers", ["immintrin.h>\n#error pwned\n#include <stdio.h"]),
    "baseline.names=5": lambda d: {**d, "baseline": {"names": 5}},
    "features=[]": lambda d: {**d, "features": []},
    "compiler-missing": lambda d: set_path(d, "probed.compiler_id", KeyError),
    "request=null": lambda d: set_path(d, "request", None),
}


@pytest.mark.slow
def test_a_forged_cache_cannot_change_the_build(tmp_path: Path) -> None:
    """Configure the example, forge its cache (the key kept), let ninja regenerate: build.ninja and every
    generated header stay byte-identical, and no regeneration fails."""
    need("gcc")
    src = _copy_project(tmp_path)
    build = tmp_path / "build"
    env = clean_env("MESON_")
    env.update(CC=need("gcc"), CXX=need("g++"))

    def run(*cmd: str) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, r.stdout[-3000:] + r.stderr[-3000:]
        return r

    run(sys.executable, "-m", "mesonbuild.mesonmain", "setup", str(build))
    sub = build / "subprojects" / "ccopt-meson"
    watched = [build / "build.ninja", *(sub / h for h in ("ccopt_config.h", "ccopt_kernel.h")),
               *sorted(build.glob("*.dispatch.h"))]
    assert len(watched) >= 5
    before = {p: p.read_bytes() for p in watched}
    good = json.loads((sub / CACHE).read_text())
    for name, forge in FORGERIES.items():
        (sub / CACHE).write_text(json.dumps(forge(good), indent=1))
        os.utime(src / "meson.build")  # ninja's own regeneration: no explicit reconfigure, so no flush
        out = run(need("ninja"), "-C", str(build), "build.ninja").stdout
        assert "Regenerating build files" in out or "meson --internal regenerate" in out or "Re-" in out, out
        after = {p: p.read_bytes() for p in watched}
        changed = [p.name for p in watched if after[p] != before[p]]
        assert not changed, f"{name}: {changed} changed"
        assert EVIL.encode() not in b"".join(after.values()) and b"pwned" not in b"".join(after.values())


# --------------------------------------------------------------------------- the targets call record (one reader)


def _record_in_place(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "huge":
        path.write_text(" " * (2 * fsio.LIMITS.call_record))
    elif kind == "wrong-shape":
        path.write_text(json.dumps({"generator": fsio.MARK, "key": "ccopt-targets-call-v1", "meson": 7,
                                    "sources": "a"}))


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "deep", "huge", "wrong-shape"])
def test_the_call_record_is_read_bounded_and_checked(tmp_path: Path, kind: str) -> None:
    """The second-call record was read with open()+json.load: a FIFO hung (through ninja), /dev/zero was a
    MemoryError, deep nesting a RecursionError. Now it is read like every input: no earlier call, at once."""
    script = f"""
import sys
from ccopt_meson import meson_glue
meson_glue._meson_run = lambda: ["1", "2"]
meson_glue._check_one_call_per_prefix({str(tmp_path)!r}, "ccopt", ["a.dispatch.c"])
print("ok")
"""
    _record_in_place(tmp_path / "ccopt-targets-ccopt.json", kind)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                       env=clean_env(PYTHONPATH=str(ROOT)))
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", "")


def test_a_record_written_is_one_its_reader_accepts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ccopt_meson import meson_glue, schema

    monkeypatch.setattr(meson_glue, "_meson_run", lambda: ["1", "2"])
    meson_glue._check_one_call_per_prefix(tmp_path, "ccopt", ["a.dispatch.c"])
    doc = schema.read_document(tmp_path / "ccopt-targets-ccopt.json", fsio.LIMITS.call_record, "record",
                               "cache.schema.json", "targets_call").value
    assert doc["sources"] == ["a.dispatch.c"]
    with pytest.raises(InputError, match="a second 'targets' call"):
        meson_glue._check_one_call_per_prefix(tmp_path, "ccopt", ["b.dispatch.c"])


def test_a_listed_target_the_compiler_cannot_build_is_one_note(tmp_path: Path) -> None:
    """A target list naming what the compiler cannot build (AVX512_KNM with clang 14) gets one note per
    name on stderr, with the compiler's reason, however many sources list it."""
    if host.machine_name() != "x86_64":
        pytest.skip("x86 names")
    clang = need("clang")
    build = tmp_path / "b"
    knm = detect_doc(Request(command=(clang,)), build_dir=build)["features"]["AVX512_KNM"]
    if knm["supported"]:
        pytest.skip("this clang builds AVX512_KNM")
    r = targets(build / CACHE, "a.dispatch.c: avx512_knm avx2", "b.dispatch.c: baseline avx512_knm", out=tmp_path)
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if "dropped" in line]
    assert notes == [f"ccopt-meson: note: targets: AVX512_KNM dropped from a.dispatch.c and 1 more: the compiler "
                     f"cannot build it ({knm['reason'].splitlines()[0]})"]


# --------------------------------------------------------------------------- the macro protocol, per call


def test_runtime_false_with_the_ccopt_style_is_one_configure_line(tmp_path: Path) -> None:
    """runtime=false with the ccopt style failed at link (its dispatch headers call ccopt_cpu_have)."""
    one_error(cli(*configure_args(tmp_path, fakecc("instant"), "--runtime", "no")),
              "runtime=false cannot be used with header-style=ccopt")
    assert not list(tmp_path.iterdir())  # refused before anything is written
    r = cli(*configure_args(tmp_path, fakecc("instant"), "--runtime", "no", "--header-style", "numpy",
                            "--macro-prefix", "NPY_"))
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("names", [("a-b.dispatch.c", "a_b.dispatch.c"), ("a.b.dispatch.c", "a_b.dispatch.c")])
def test_two_sources_of_one_macro_id_are_named(tmp_path: Path, cache_file: Path, names: tuple[str, str]) -> None:
    """a-b.dispatch.c, a_b.dispatch.c and a.b.dispatch.c shared one macro namespace (a_b_dispatch): a real
    build ran one source's AVX2 version on an AVX-512 CPU and never called the other's AVX512F one."""
    for name in names:
        (tmp_path / name).write_text("/*@targets baseline avx2 */\nint x;\n")
    one_error(targets(cache_file, *(tmp_path / n for n in names), out=tmp_path),
              f"dispatch sources '{names[0]}' and '{names[1]}' have the same macro id a_b_dispatch")


def test_configure_writes_what_it_prints_as_keyval_files(tmp_path: Path) -> None:
    """The subproject reads the targets' args and the feature states with keyval.load(): the same values as
    the printed lines, and a '#' (a keyval comment) is refused rather than cut."""
    from ccopt_meson.meson_glue import KEYVAL_FILES, _keyval_text

    need("gcc")
    r = cli("configure", "--cc", "gcc", "--output-dir", str(tmp_path), "--baseline", "min", "--dispatch", "avx2 sse41")
    assert r.returncode == 0, r.stderr
    printed = dict(line.split("\t", 1) for line in r.stdout.splitlines())

    def load(kind: str) -> dict[str, str]:  # keyval.load's parse
        text = (tmp_path / KEYVAL_FILES[kind].format(lang="c")).read_text()
        lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
        return dict(line.split("=", 1) for line in lines if "=" in line)

    assert load("targets") == {k.removeprefix("target:"): v for k, v in printed.items() if k.startswith("target:")}
    assert load("states") == dict(item.split(":") for item in printed["feature_states"].split())
    assert set(load("targets")) == {*printed["dispatch_names"].split(), "BASELINE"}
    with pytest.raises(InputError, match="contains a '#'"):
        _keyval_text([("AVX2", "-DX=a#b")], "target argument")


@pytest.mark.parametrize(("option", "value"), [("--compiler-version", "12\ttarget:EVIL\t-fplugin=/tmp/evil.so"),
                                               ("--compiler-version", "12\ntarget:EVIL\t-fplugin=/tmp/evil.so"),
                                               ("--compiler-id", "gcc\ntarget:EVIL")])
def test_a_line_break_in_the_compiler_identity_adds_no_configure_line(tmp_path: Path, option: str,
                                                                        value: str) -> None:
    """A line break in --compiler-version/--compiler-id added lines to the configure protocol
    (target:EVIL<TAB>-fplugin=...): refused in one line, nothing printed for meson.build."""
    args = configure_args(tmp_path, fakecc("instant"))
    if option == "--compiler-id":
        args[args.index("--compiler-id") + 1] = value
    else:
        args += [option, value]
    r = cli(*args)
    one_error(r, option)
    assert r.stdout == "" and "EVIL" not in r.stdout


def test_targets_refuse_a_features_file_changed_since_configure(tmp_path: Path) -> None:
    from ccopt_meson import project

    features = tmp_path / "f.json"
    features.write_text(NUMPY22.read_text())
    build = tmp_path / "b"
    detect_doc(Request(command=("fakecc",), project=project.load(features)), build_dir=build, runner=FakeCompiler())
    src = good_source(tmp_path)
    assert targets(build / CACHE, src, out=tmp_path).returncode == 0  # the file the cache records, unchanged
    features.write_text(features.read_text() + " ")
    one_error(targets(build / CACHE, src, out=tmp_path), "changed since this build was configured")


@pytest.mark.parametrize("prefix", ["../../x", "a/b", ".hidden", "", "a b"])
def test_the_library_prefix_is_a_plain_name(tmp_path: Path, cache_file: Path, prefix: str) -> None:
    """--prefix ../../x wrote the call record outside the output dir."""
    src = good_source(tmp_path)
    out = tmp_path / "out" / "deep"
    out.mkdir(parents=True)
    r = cli("targets", str(src), "--cache-file", str(cache_file), "--output-dir", str(out), "--prefix", prefix,
            cwd=out, env={"MESON_BUILD_ROOT": str(out)})
    one_error(r, "--prefix: ", "must be a plain name")
    assert sorted(p.name for p in tmp_path.rglob("*") if "ccopt-targets" in p.name) == []


def test_files_then_a_target_list_is_that_files_list(tmp_path: Path, cache_file: Path) -> None:
    """A port of someone else's tree names its sources with files() (absolute paths to the helper); the
    argument ': TARGETS' right after one is its list, so no source has to become a string or carry @targets."""
    src = tmp_path / "x86"
    src.mkdir()
    (src / "pitch_sse.c").write_text("int pitch_sse(void) { return 1; }\n")  # no @targets statement
    r = targets(cache_file, src / "pitch_sse.c", ": $noheader sse41", out=tmp_path)
    assert r.returncode == 0, r.stderr
    (line,) = r.stdout.splitlines()
    assert line.split("\t")[2] == "x86/pitch_sse.c" and line.split("\t")[3] == "SSE41"


@pytest.mark.parametrize(("argv", "expected"), [
    (["/usr/bin/python3", "/usr/bin/meson", "setup", "build"], True),
    (["python3", "-m", "mesonbuild.mesonmain", "setup", "--reconfigure", "b"], True),
    (["/usr/bin/meson", "--internal", "regenerate", "/src", "/build"], True),
    (["/usr/bin/ninja", "-C", "build", "my-run-target"], False),
    (["/usr/bin/meson", "--internal", "commandrunner", "/src", "/build", "", "setup"], False),
    (["/usr/bin/meson", "install", "-C", "build"], False),
    (None, False),
])
def test_only_a_configure_run_is_checked_for_a_second_call(argv: list[str] | None, expected: bool) -> None:
    from ccopt_meson.meson_glue import configuring

    assert configuring(argv) is expected


def test_two_calls_of_a_run_target_are_no_second_targets_call(tmp_path: Path, cache_file: Path) -> None:
    """The second-call check fired for run_target and install scripts (they set MESON_BUILD_ROOT too)."""
    out = tmp_path / "out"
    out.mkdir()
    a, b = tmp_path / "a.dispatch.c", tmp_path / "b.dispatch.c"
    for src in (a, b):
        src.write_text("/*@targets baseline avx2 */\nint x;\n")
    for src in (a, b):  # both from this test process, as a run_target's two commands from one ninja
        r = cli("targets", str(src), "--cache-file", str(cache_file), "--output-dir", str(out), cwd=out,
                env={"MESON_BUILD_ROOT": str(out)})
        assert r.returncode == 0, r.stderr


def test_a_header_of_the_calling_directory_is_not_shadowed(tmp_path: Path, cache_file: Path) -> None:
    """'x86/sum.c: baseline avx2' called from the top meson.build wrote build/sum.h, found before the project's
    top-level sum.h by every file outside the top directory (Meson puts the build dir of a directory right
    before the directory itself): the build failed far from the cause.  Refused at the cause, in one line."""
    top, out = tmp_path / "proj", tmp_path / "build"
    (top / "x86").mkdir(parents=True)
    out.mkdir()
    (top / "sum.h").write_text("/* the project's own */\n")
    for name in ("sum.c", "sum.dispatch.c"):
        (top / "x86" / name).write_text("int sum;\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:  # from the caller's directory, as Meson runs it
        return cli("targets", *args, "--cache-file", str(cache_file), "--output-dir", str(out), cwd=top)

    for args in (["x86/sum.c: baseline avx2"], [str(top / "x86" / "sum.c"), ": baseline avx2"]):
        one_error(run(*args), "dispatch source 'x86/sum.c' would generate sum.h, which shadows the project's own "
                  "sum.h; rename the source (e.g. to sum.dispatch.c)")
        assert not (out / "sum.h").exists()
    for fine in ("x86/sum.dispatch.c: baseline avx2", "x86/sum.c: $noheader avx2"):
        r = run(fine)
        assert r.returncode == 0 and r.stdout, r.stderr
    assert sorted(p.name for p in out.glob("*.h")) == ["sum.dispatch.h"]


def test_noheader_sources_of_one_name_are_no_clash(tmp_path: Path, cache_file: Path) -> None:
    """'x86/impl.c: $noheader sse41' 'avx/impl.c: $noheader avx2' was refused for sharing a macro id, though
    neither has a header or macros; their libraries are still one per target, each named once."""
    for d in ("x86", "avx"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "impl.c").write_text("int impl;\n")
    r = targets(cache_file, "x86/impl.c: $noheader sse41", "avx/impl.c: $noheader avx2",
                "avx/impl.c: $noheader sse41", out=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = [line.split("\t") for line in r.stdout.splitlines()]
    assert [(lib, sources) for lib, _, sources, _ in lines] == [("ccopt_SSE41", "x86/impl.c avx/impl.c"),
                                                               ("ccopt_AVX2", "avx/impl.c")]
    assert not list(tmp_path.glob("*.h"))
    # with headers they would share impl.h and its macros: still refused
    one_error(targets(cache_file, "x86/impl.c: sse41", "avx/impl.c: avx2", out=tmp_path),
              "two dispatch sources would share the generated header impl.h")
    # a header-less source takes no part in the macro-id check either; two with headers still do
    assert targets(cache_file, "a-b.c: sse41", "avx/a_b.c: $noheader avx2", out=tmp_path).returncode == 0
    one_error(targets(cache_file, "a-b.c: sse41", "avx/a_b.c: avx2", out=tmp_path),
              "dispatch sources 'a-b.c' and 'avx/a_b.c' have the same macro id a_b")


def test_a_sibling_source_of_a_project_under_a_path_with_a_space(tmp_path: Path, cache_file: Path) -> None:
    """files('../x86/k.c') from lib/meson.build, in a project under 'my proj': refused for the space of the
    absolute path, though the path relative to the caller, the one the line carries, has none."""
    top = tmp_path / "my proj"
    for d in ("lib", "x86", "sub dir"):
        (top / d).mkdir(parents=True)
    out = tmp_path / "build"
    out.mkdir()
    for src in (top / "x86" / "k.dispatch.c", top / "sub dir" / "k2.dispatch.c", tmp_path / "k3.dispatch.c"):
        src.write_text("/*@targets avx2 */\nint k;\n")

    def run(source: Path) -> subprocess.CompletedProcess[str]:  # files() hands the helper absolute paths
        return cli("targets", str(source), "--cache-file", str(cache_file), "--output-dir", str(out),
                   cwd=top / "lib", env={"MESON_SOURCE_ROOT": str(top), "MESON_SUBDIR": "lib"})

    r = run(top / "x86" / "k.dispatch.c")
    assert r.returncode == 0, r.stderr
    assert [line.split("\t")[2] for line in r.stdout.splitlines()] == ["../x86/k.dispatch.c"]
    assert (out / "k.dispatch.h").is_file()
    # what travels must still be free of spaces
    one_error(run(top / "sub dir" / "k2.dispatch.c"), "dispatch source '../sub dir/k2.dispatch.c' contains a space")
    # outside the project the source travels absolute, as before (no ../../ into a vendor's tree)
    r = run(tmp_path / "k3.dispatch.c")
    assert r.returncode == 0, r.stderr
    assert [line.split("\t")[2] for line in r.stdout.splitlines()] == [str(tmp_path / "k3.dispatch.c")]

@pytest.mark.slow
def test_configure_writes_no_bytecode_into_the_consumers_source(tmp_path: Path) -> None:
    """Configure wrote 22 .pyc files into subprojects/ccopt-meson/ccopt_meson/__pycache__, a source tree Meson
    treats as read-only.  The helper's bytecode now goes to the build dir (meson-private/ccopt-pycache: a
    regeneration reads it, as it read the source tree's), the standard library's stays where it was, and
    outside Meson none is written."""
    need("gcc")
    src = _copy_project(tmp_path)
    build = tmp_path / "build"
    env = clean_env("MESON_", "PYTHONPYCACHEPREFIX", drop=("PYTHONDONTWRITEBYTECODE",), CC=need("gcc"), CXX=need("g++"))

    def run(*cmd: str, extra: dict[str, str] | None = None) -> str:
        r = subprocess.run(cmd, cwd=src, env={**env, **(extra or {})}, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, r.stdout[-3000:] + r.stderr[-3000:]
        return r.stdout

    run(sys.executable, "-m", "mesonbuild.mesonmain", "setup", str(build))
    sub = src / "subprojects" / "ccopt-meson"
    assert sorted(str(p.relative_to(src)) for p in src.rglob("__pycache__")) == []
    cached = sorted(p for p in (build / "meson-private" / "ccopt-pycache").rglob("*.pyc"))
    assert {p.parent.name for p in cached} == {"ccopt_meson"}, cached  # the package's only
    assert {"cli", "pipeline", "meson_glue", "cache"} <= {p.name.split(".")[0] for p in cached}
    stamps = {p: p.stat().st_mtime_ns for p in cached}
    os.utime(src / "meson.build")
    run(need("ninja"), "-C", str(build), "build.ninja")  # ninja's regeneration: a hit, reading the bytecode
    assert {p: p.stat().st_mtime_ns for p in cached} == stamps
    assert sorted(src.rglob("__pycache__")) == []
    helper = [sys.executable, "-S", str(sub / "tools" / "ccopt-meson-helper.py")]
    run(*helper, "report", str(build))  # by hand, outside Meson
    assert sorted(src.rglob("__pycache__")) == []


def test_every_listed_target_the_build_drops_is_one_note_with_why(tmp_path: Path,
                                                                   gcc12_x86_64_cache_file: Path) -> None:
    """Copying a Makefile's 'sse2 sse41' with the default baseline built only SSE41, without a word: each
    target a list names and the build does not compile is a note saying why (the baseline covers it,
    cpu-dispatch does not select it, the compiler cannot build it)."""
    if host.machine_name() != "x86_64":
        pytest.skip("x86 names")
    out = tmp_path / "out"
    out.mkdir()
    r = cli("targets", "k.dispatch.c: baseline sse2 sse41 (avx2 fma3) asimd", "--cache-file",
            str(gcc12_x86_64_cache_file), "--output-dir", str(out), cwd=out)
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if "dropped" in line]
    assert notes == ["ccopt-meson: note: targets: SSE2 dropped from k.dispatch.c: the baseline covers it: its code "
                     "runs in the BASELINE version"]  # ASIMD: another machine's name, not a drop


def test_a_target_the_users_cpu_keeps_from_building_is_one_warning_line(tmp_path: Path) -> None:
    """meson.build shows configure's 'warning' line with warning(): one line naming each target the user's
    -mcpu keeps from building (ASIMDHP and ASIMDDP under the armv8.0 cortex-a53) and why."""
    cc = need("aarch64-linux-gnu-gcc")
    r = cli("configure", "--lang", "c", "--output-dir", str(tmp_path), "--compiler-id", "gcc", "--cpu-family",
            "aarch64", "--cross", "yes", "--dispatch", "asimdhp asimddp", "--arg", "-mcpu=cortex-a53",
            f"--cc-arg={cc}")
    assert r.returncode == 0, r.stderr
    warning = [line for line in r.stdout.splitlines() if line.startswith("warning\t")]
    assert len(warning) == 1, r.stdout
    assert kv(r.stdout)["dispatch_names"] == []
    for name, ext in (("ASIMDHP", "fp16"), ("ASIMDDP", "dotprod")):
        assert f"{name} cannot be built under the compile args' -mcpu=cortex-a53: its flags become " \
               f"-mcpu=cortex-a53+{ext} (" in warning[0]
