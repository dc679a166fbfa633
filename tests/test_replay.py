"""replay.py: a run whose inputs have not changed prints its recorded output, loading built-ins only;
any change to what it depends on is a miss, and a record cannot steer the build."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccopt_meson import replay

from .conftest import ROOT
from .helpers import cli, configure_args, kv, x86_gcc

HELPER = "tools/ccopt-meson-helper.py"


def imported(stderr: str) -> set[str]:
    """The modules a run imported, from ``PYTHONPROFILEIMPORTTIME`` lines."""
    out = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":
                out.add(name)
    return out


def helper(checkout: Path, *args: str, cwd: Path,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The helper as Meson runs it (the same interpreter, ``-S``), reporting its imports."""
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("CCOPT_", "MESON_", "PYTHON")) and k not in ("CFLAGS", "CPPFLAGS")}
    full["PYTHONPROFILEIMPORTTIME"] = "1"
    full.update(env or {})
    return subprocess.run([sys.executable, "-S", str(checkout / HELPER), *args], capture_output=True, text=True,
                          cwd=cwd, env=full, timeout=120)


def replayed(r: subprocess.CompletedProcess[str]) -> bool:
    assert r.returncode == 0, r.stderr[-3000:]
    mods = imported(r.stderr)
    assert "ccopt_meson.replay" in mods, "not run through the entry point"
    return "ccopt_meson.cli" not in mods


def output(r: subprocess.CompletedProcess[str]) -> str:
    return r.stdout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the package and helper, free to edit (a table, a probe) as a user's subproject is."""
    dest = tmp_path / "ccopt"
    shutil.copytree(ROOT / "ccopt_meson", dest / "ccopt_meson", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "tools").mkdir()
    shutil.copy(ROOT / HELPER, dest / HELPER)
    inputs_age()
    return dest


def inputs_age() -> None:
    """Inputs written just before a run may have changed after it started, as far as file times can
    tell (``replay._CLOCK_SLACK_NS``): such a run is not recorded, so tests let their inputs age a little."""
    time.sleep(replay._CLOCK_SLACK_NS / 1e9 * 2.5)


def settle() -> None:
    """Let every file of the run age past the racy window, so the next record trusts stamps alone."""
    time.sleep(replay.stamps.SETTLED_NS / 1e9 + 0.1)


# --------------------------------------------------------------------------- hits and misses


def test_configure_replays_loading_built_ins_only(checkout: Path, tmp_path: Path) -> None:
    gcc = x86_gcc()
    out = tmp_path / "build"
    args = configure_args(out, gcc, "--write-config")
    first = helper(checkout, *args, cwd=tmp_path)
    assert not replayed(first) and kv(first.stdout)["cache_hit"] == ["false"]
    second = helper(checkout, *args, cwd=tmp_path)
    assert replayed(second)
    mods = imported(second.stderr)
    assert "os" not in mods and not {m for m in mods if m.startswith("ccopt_meson.")} - {
        "ccopt_meson.entry", "ccopt_meson.replay", "ccopt_meson.stamps", "ccopt_meson.version", "ccopt_meson._sha"}
    # what a hit prints: the full path's own lines, hit and all
    (out / next(p.name for p in out.iterdir() if p.name.startswith(replay.PREFIX))).unlink()
    full = helper(checkout, *args, cwd=tmp_path)
    assert not replayed(full) and full.stdout == second.stdout and kv(full.stdout)["cache_hit"] == ["true"]


def test_targets_replays_and_rewrites_nothing(checkout: Path, tmp_path: Path) -> None:
    gcc = x86_gcc()
    out = tmp_path / "build"
    assert helper(checkout, *configure_args(out, gcc), cwd=tmp_path).returncode == 0
    src = tmp_path / "k.dispatch.c"
    src.write_text("/*@targets $maxopt baseline avx2 avx512_skx */\n")
    inputs_age()
    args = ["targets", "--feature-file", str(out / "ccopt-features.json"), "--output-dir", str(out), "k.dispatch.c",
            "j.dispatch.c: sse41 avx2"]
    first = helper(checkout, *args, cwd=tmp_path)
    header = out / "k.dispatch.h"
    before = header.stat().st_mtime_ns
    second = helper(checkout, *args, cwd=tmp_path)
    assert replayed(second) and second.stdout == first.stdout
    assert header.stat().st_mtime_ns == before
    # the kernel's own @targets statement is an input: editing it is a miss
    src.write_text("/*@targets $maxopt baseline sse41 */\n")
    inputs_age()
    third = helper(checkout, *args, cwd=tmp_path)
    assert not replayed(third) and "AVX512_SKX" not in third.stdout and "SSE41" in third.stdout


@pytest.mark.parametrize("edit", ["table", "probe", "code"])
def test_an_edit_of_the_package_is_a_miss(checkout: Path, tmp_path: Path, edit: str) -> None:
    gcc = x86_gcc()
    out = tmp_path / "build"
    args = configure_args(out, gcc)
    helper(checkout, *args, cwd=tmp_path)
    settle()  # stamps alone decide from here: the edit must change one
    assert replayed(helper(checkout, *args, cwd=tmp_path))
    pkg = checkout / "ccopt_meson"
    if edit == "table":  # a new flag for AVX2: the replay must not print the old one
        table = pkg / "data" / "features" / "x86.json"
        table.write_text(table.read_text().replace('"gnu": ["-mavx2"]', '"gnu": ["-mavx2", "-mtune=generic"]'))
    elif edit == "probe":
        probe = next((pkg / "data" / "probes" / "x86").glob("*avx2*"))
        probe.write_text(probe.read_text() + "\n/* edited */\n")
    else:
        (pkg / "emit.py").write_text((pkg / "emit.py").read_text() + "\n# edited\n")
    r = helper(checkout, *args, cwd=tmp_path)
    assert not replayed(r)
    if edit == "table":
        assert "-mtune=generic" in kv(r.stdout)["target:AVX2"]


def test_environment_and_compiler_are_inputs(tmp_path: Path) -> None:
    gcc = x86_gcc()
    build = tmp_path / "build"
    args = ["detect", "--build-dir", str(build), "--baseline", "sse2", "--dispatch", "avx2"]
    first = cli(*args, env={"CC": gcc})
    second = cli(*args, env={"CC": gcc, "PYTHONPROFILEIMPORTTIME": "1"})
    assert replayed(second) and "Cache        : hit" in second.stdout
    assert [line for line in second.stdout.splitlines() if "Cache" not in line] == [
        line for line in first.stdout.splitlines() if "Cache" not in line]
    for env in ({"CC": gcc, "CFLAGS": "-O1"}, {"CC": gcc, "CCOPT_PROBE_TIMEOUT": "60"}):
        assert not replayed(cli(*args, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}))
    # another compiler of the same name earlier on PATH: a miss
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "gcc").symlink_to(shutil.which("gcc") or gcc)
    path = f"{shim}{os.pathsep}{os.environ['PATH']}"
    cli(*args, env={"CC": "gcc"})
    assert replayed(cli(*args, env={"CC": "gcc", "PYTHONPROFILEIMPORTTIME": "1"}))
    assert not replayed(cli(*args, env={"CC": "gcc", "PATH": path, "PYTHONPROFILEIMPORTTIME": "1"}))


@pytest.mark.parametrize("extra", [["--flush"], ["--json"]])
def test_flush_and_json_always_take_the_full_path(tmp_path: Path, extra: list[str]) -> None:
    gcc = x86_gcc()
    args = ["detect", "--cc", gcc, "--build-dir", str(tmp_path), "--dispatch", "avx2", *extra]
    cli(*args)
    assert not replayed(cli(*args, env={"PYTHONPROFILEIMPORTTIME": "1"}))


def test_an_explicit_reconfigure_is_never_replayed(checkout: Path, tmp_path: Path) -> None:
    gcc = x86_gcc()
    args = configure_args(tmp_path / "build", gcc)
    helper(checkout, *args, cwd=tmp_path)
    assert replayed(helper(checkout, *args, cwd=tmp_path))
    r = helper(checkout, *args, cwd=tmp_path, env={"CCOPT_FLUSH": "1"})
    assert not replayed(r) and kv(r.stdout)["cache_hit"] == ["false"]


def test_native_requests_are_not_recorded(tmp_path: Path) -> None:
    gcc = x86_gcc()
    cli("detect", "--cc", gcc, "--build-dir", str(tmp_path), "--baseline", "native", "--dispatch", "none")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(replay.PREFIX)]


# --------------------------------------------------------------------------- a record cannot steer the build


def _record(folder: Path) -> Path:
    found = [p for p in folder.iterdir() if p.name.startswith(replay.PREFIX)]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("forge", [
    (" -mavx2 ", " -mavx2 -fplugin=/tmp/evil.so "),  # a flag no table spells
    (" -mavx2 ", " -mavx2 -DCCOPT_X=1;system "),  # a define that is not an identifier
    (" -mavx2 ", " -mavx2 -Dmalloc=evil "),  # a define outside CCOPT_
    ("out\tdispatch_names%09", "out\tdispatch_names%09EVIL "),  # a name no table holds
    ("out\tfeature_file%09", "out\tfeature_file%09/tmp/elsewhere"),  # another feature file
    ("out\tprobes%09", "out\tprobes%093"),
])
def test_a_forged_record_is_not_replayed(checkout: Path, tmp_path: Path, forge: tuple[str, str]) -> None:
    gcc = x86_gcc()
    out = tmp_path / "build"
    args = configure_args(out, gcc)
    good = helper(checkout, *args, cwd=tmp_path).stdout
    rec = _record(out)
    text = rec.read_text()
    assert forge[0] in text
    rec.write_text(text.replace(forge[0], forge[1], 1))
    r = helper(checkout, *args, cwd=tmp_path)
    assert not replayed(r) and r.stdout == good.replace("cache_hit\tfalse", "cache_hit\ttrue").replace(
        f"probes\t{kv(good)['probes'][0]}", "probes\t0")
    assert forge[1] not in rec.read_text()  # the full path recorded again


def test_a_forged_targets_record_cannot_add_a_source(checkout: Path, tmp_path: Path) -> None:
    gcc = x86_gcc()
    out = tmp_path / "build"
    helper(checkout, *configure_args(out, gcc), cwd=tmp_path)
    for p in out.iterdir():
        if p.name.startswith(replay.PREFIX):
            p.unlink()
    args = ["targets", "--feature-file", str(out / "ccopt-features.json"), "--output-dir", str(out),
            "k.dispatch.c: avx2"]
    good = helper(checkout, *args, cwd=tmp_path).stdout
    rec = _record(out)
    text = rec.read_text()
    assert "%09k.dispatch.c%09" in text
    rec.write_text(text.replace("%09k.dispatch.c%09", "%09k.dispatch.c ../../secret.c%09"))
    r = helper(checkout, *args, cwd=tmp_path)
    assert not replayed(r) and r.stdout == good


def test_checker_accepts_what_the_tables_spell() -> None:
    c = replay._Checker("configure", ["configure", "--arg=-march=armv8.4-a+crypto"], "/", "/")
    assert c._load_vocabulary()
    assert c.args(["-msse2 -mavx2 -DCCOPT_HAVE_AVX2=1 -DCCOPT_TARGET=AVX2", "-include ccopt_kernel.h", "/arch:AVX2",
                   "-march=armv8.2-a+fp16+fp16fml", "-march=armv8.4-a+crypto+sve", "-O3", "/FIccopt_dispatch.h"])
    for forged in ["-mavx2 -fplugin=x.so", "-include /etc/passwd", "-mavx2  -msse", "-mavx2 ",
                   "ccopt_config.h", "-march=native", "-xHost", "-o", "-E", "-c", "-dM", "immintrin.h",
                   "-march=armv8.2-a+fp16+evil", "-march=evil+fp16", "-DCCOPT_X=1;system", "-Dmalloc=evil", "CCOPT_X"]:
        assert not c.args([forged]), forged
    assert c.names(["AVX2 SSE41", "x86_64"]) and not c.names(["AVX2 EVIL"]) and not c.names(["-msse"])


def test_the_checker_knows_the_command_line_as_cli_does() -> None:
    from ccopt_meson import cache, cli

    spec = cli._Spec()
    cli.COMMANDS["targets"][1](spec)
    takes_value = {name for name, (_, action, _) in spec.options.items() if action != "store_true"}
    assert takes_value == set(replay.TARGETS_VALUE_OPTIONS)
    assert {lang: os.path.basename(cache.cache_file("b", lang)) for lang in ("c", "cpp")} == replay.FEATURE_FILES


# --------------------------------------------------------------------------- files: racy, pruned, flushed


def test_fresh_files_are_checked_by_content_until_they_settle(checkout: Path, tmp_path: Path) -> None:
    gcc = x86_gcc()
    out = tmp_path / "build"
    args = configure_args(out, gcc)
    helper(checkout, *args, cwd=tmp_path)
    rec = _record(out)
    cache_line = next(line for line in rec.read_text().splitlines()
                      if line.startswith("file\t") and "ccopt-features.json\t" in line)
    assert not cache_line.endswith("\t-"), "the cache was written just now: its content digest is recorded"
    settle()
    assert replayed(helper(checkout, *args, cwd=tmp_path))
    assert all(line.endswith("\t-") for line in rec.read_text().splitlines() if line.startswith("file\t"))
    assert replayed(helper(checkout, *args, cwd=tmp_path))


def test_records_are_pruned_and_flushed_but_never_a_stranger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stranger = tmp_path / f"{replay.PREFIX}detect-mine.txt"
    stranger.write_text("not ours\n")
    for i in range(replay._KEEP + 5):
        p = tmp_path / f"{replay.PREFIX}detect-{i:04d}.txt"
        p.write_text(f"# {replay.MARK}: a replay record\n")
        os.utime(p, ns=(i * 10**9, i * 10**9))
    replay._prune(str(tmp_path))
    left = sorted(p.name for p in tmp_path.iterdir())
    assert stranger.name in left and len(left) == replay._KEEP + 1
    assert f"{replay.PREFIX}detect-0000.txt" not in left  # the oldest went
    replay.discard_all(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [stranger.name]


def test_flush_removes_the_records(tmp_path: Path) -> None:
    gcc = x86_gcc()
    cli("detect", "--cc", gcc, "--build-dir", str(tmp_path), "--dispatch", "avx2")
    assert _record(tmp_path)
    r = cli("flush", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(replay.PREFIX)]


# --------------------------------------------------------------------------- found in review


def test_another_install_does_not_replay_this_ones_record(checkout: Path, tmp_path: Path) -> None:
    gcc = x86_gcc()
    other = tmp_path / "other"
    shutil.copytree(checkout, other)
    table = other / "ccopt_meson" / "data" / "features" / "x86.json"
    table.write_text(table.read_text().replace('"gnu": ["-mmovbe"]', '"gnu": ["-mmovbe", "-mlzcnt"]'))
    inputs_age()
    args = configure_args(tmp_path / "build", gcc)
    helper(checkout, *args, cwd=tmp_path)
    assert replayed(helper(checkout, *args, cwd=tmp_path))
    r = helper(other, *args, cwd=tmp_path)
    assert not replayed(r) and "-mlzcnt" in kv(r.stdout)["target:MOVBE"]


def _features(path: Path, with_adx: bool) -> None:
    probe = path.parent / "adx.c"
    probe.write_text("#include <immintrin.h>\nunsigned char f(unsigned a, unsigned b, unsigned *o)"
                     " { return _addcarryx_u32(0, a, b, o); }\n")
    adx = {"name": "ADX", "interest": 2000, "implies": [], "headers": ["immintrin.h"], "macros": ["__ADX__"],
           "flags": {"gnu": ["-madx"], "intel": [], "intel-cl": [], "msvc": []}, "probe": "adx.c",
           "runtime": {"*": {"cpuinfo": ["adx"], "cpuid": [[7, 0, "ebx", 19]], "xcr0": 0}}}
    feats = {"features": {"x86": [adx]}} if with_adx else {}
    path.write_text(json.dumps({**feats, "groups": {"mine": ["sse41"]}}))


def test_a_repointed_features_file_symlink_is_a_miss(checkout: Path, tmp_path: Path) -> None:
    gcc = x86_gcc()
    pf = tmp_path / "pf"
    pf.mkdir()
    _features(pf / "f1.json", with_adx=False)
    _features(pf / "f2.json", with_adx=True)
    (pf / "link.json").symlink_to("f1.json")
    inputs_age()
    args = configure_args(tmp_path / "build", gcc, "--dispatch", "max", "--features-file", str(pf / "link.json"))
    helper(checkout, *args, cwd=tmp_path)
    assert replayed(helper(checkout, *args, cwd=tmp_path))
    (pf / "link.json").unlink()
    (pf / "link.json").symlink_to("f2.json")
    r = helper(checkout, *args, cwd=tmp_path)
    assert not replayed(r) and "ADX" in kv(r.stdout)["dispatch_names"]


def test_an_input_edited_during_a_run_is_not_recorded(checkout: Path, tmp_path: Path) -> None:
    gcc = x86_gcc()
    slow = tmp_path / "slowcc"
    slow.write_text(f"#!/bin/sh\nsleep 0.4\nexec {gcc} \"$@\"\n")
    slow.chmod(0o755)
    ff = tmp_path / "ff.json"
    _features(ff, with_adx=False)
    inputs_age()
    out = tmp_path / "build"
    args = configure_args(out, str(slow), "--dispatch", "max", "--features-file", str(ff))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CCOPT_", "MESON_", "PYTHON"))}
    proc = subprocess.Popen([sys.executable, "-S", str(checkout / HELPER), *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.2)  # the run has read the features file and waits for the compiler
    _features(ff, with_adx=True)
    proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert not [p for p in out.iterdir() if p.name.startswith(replay.PREFIX)]
    r = helper(checkout, *args, cwd=tmp_path)
    assert not replayed(r) and "ADX" in kv(r.stdout)["dispatch_names"]


def test_an_abbreviated_flush_is_not_replayed(tmp_path: Path) -> None:
    gcc = x86_gcc()
    args = ["detect", "--build-dir", str(tmp_path), "--cc", gcc, "--dispatch", "avx2"]
    cli(*args)
    for abbrev in ("--flu", "--fl", "--js", "--he"):
        r = cli(*args, abbrev, env={"PYTHONPROFILEIMPORTTIME": "1"})
        assert "ccopt_meson.cli" in imported(r.stderr), abbrev


@pytest.mark.parametrize("damage", [
    ("file\t", "file\t", "²"),  # a digit str.isdigit() takes that int() does not
    ("file\t", "file\t", "9" * 5000),  # more digits than int() converts
    ("prog\t", "prog\t/bin/g\\x00cc", None),  # a NUL in a program name
    ("out\t", "out\t", "\udcff"),
])
def test_a_malformed_record_is_a_quiet_miss(checkout: Path, tmp_path: Path,
                                            damage: tuple[str, str, str | None]) -> None:
    gcc = x86_gcc()
    out = tmp_path / "build"
    args = configure_args(out, gcc)
    good = helper(checkout, *args, cwd=tmp_path).stdout
    rec = _record(out)
    lines = rec.read_text().splitlines()
    tag, repl, value = damage
    i = next(i for i, line in enumerate(lines) if line.startswith(tag)) if tag != "prog\t" else 1
    if tag == "file\t":
        parts = lines[i].split("\t")
        parts[3] = value or ""
        lines[i] = "\t".join(parts)
    elif tag == "prog\t":
        lines.insert(i, "prog\tg\x00cc\t/bin/g\x00cc")
    else:
        lines[i] = lines[i] + (value or "")
    rec.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
    r = helper(checkout, *args, cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr and not replayed(r)
    assert kv(r.stdout)["dispatch_names"] == kv(good)["dispatch_names"]


def test_flush_leaves_a_symlink_named_like_a_record(tmp_path: Path) -> None:
    link = tmp_path / f"{replay.PREFIX}mine.txt"
    link.symlink_to(tmp_path / "nowhere")
    replay.discard_all(tmp_path)
    assert link.is_symlink()


def test_a_racy_file_is_checked_by_content(tmp_path: Path) -> None:
    """A file whose stamp cannot tell a second write (same size and times) is caught by its digest."""
    f = tmp_path / "ff.json"
    f.write_text("{}\n")
    st = replay.stamps.stamp(str(f))
    assert st is not None
    good = replay._content_digest(str(f))
    assert replay._check_files([(str(f), st, good or "")]) is True  # racy, and checked
    assert replay._check_files([(str(f), st, "0" * 64)]) is None  # the content differs from the record's
    assert replay._check_files([(str(f), st, "-")]) is False  # settled: the stamp alone decides
