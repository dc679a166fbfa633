"""What the CLI-level tests share: run the real helper, check its one error line, name the fake compilers.

Most robustness cases run ``python -m ccopt_meson`` in a subprocess, as Meson does,
because the promise they check is about the process: exactly one
``ccopt-meson: error: ...`` line and exit 1, never a traceback.  The fake compilers
are real executables in ``tests/fakecc/`` (see its README).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

from ccopt_meson import host
from ccopt_meson.errors import CcoptError

from .conftest import ROOT, need

FAKECC = Path(__file__).resolve().parent / "fakecc"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
ROOT_REASON = "runs as root: permission bits do not stop root (CI runs as root)"
CACHE = "ccopt-features.json"


def clean_env(*prefixes: str, drop: Sequence[str] = (), **extra: str) -> dict[str, str]:
    """This process's environment without ccopt's variables (``CCOPT_*``: masks, tracing, flushes) nor those
    starting with ``prefixes`` or named in ``drop``, plus ``extra``: what a test's child process sees."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CCOPT_", *prefixes)) and k not in drop}
    env.update(extra)
    return env


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 120, pythonpath: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``python -m ccopt_meson ARGS`` in a clean environment (no CCOPT_*, CFLAGS or CPPFLAGS leaking in)."""
    full = clean_env("FAKECC_", "MESON_", drop=("CFLAGS", "CPPFLAGS"))
    full["PYTHONPATH"] = os.pathsep.join([str(pythonpath), *filter(None, [os.environ.get("PYTHONPATH")])])
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "ccopt_meson", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=full, timeout=timeout)


def one_error(r: subprocess.CompletedProcess[str], *fragments: str) -> str:
    """Exit 1 and exactly one stderr line, ``ccopt-meson: error: ...``, holding every fragment."""
    assert r.returncode == 1, f"exit {r.returncode}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and r.stderr.endswith("\n"), f"not one line: {r.stderr!r}"
    assert lines[0].startswith("ccopt-meson: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    # 800: a message may quote two paths (a build directory and its features file) and the command to run
    assert len(lines[0]) < 800, "messages quote long input shortened"
    return lines[0]


def kv(stdout: str) -> dict[str, list[str]]:
    """The ``key<TAB>values`` lines ``configure`` prints for meson.build."""
    return {k: v.split() for k, v in (line.split("\t", 1) for line in stdout.splitlines())}


def x86_gcc() -> str:
    if host.machine_name() != "x86_64":
        pytest.skip("the expected feature names are those of an x86_64 host")
    return need("gcc")


def fakecc(name: str) -> str:
    path = FAKECC / name
    assert path.is_file(), path
    return str(path)


def configure_args(out: Path, cc: str, *extra: str) -> list[str]:
    """The arguments meson.build passes (option values as separate words, compiler via --cc-arg=)."""
    return ["configure", "--lang", "c", "--output-dir", str(out), "--compiler-id", "gcc",
            "--cpu-family", "x86_64", "--cross", "no", *extra, f"--cc-arg={cc}"]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def watch(path: Path, check: Callable[[bytes], None], stop: threading.Event, seen: list[int]) -> None:
    """Read ``path`` in a tight loop until ``stop``; every complete read must pass ``check``."""
    while not stop.is_set():
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            time.sleep(0.001)
            continue
        check(data)
        seen.append(len(data))
        time.sleep(0.001)


def race(commands: Sequence[Sequence[str]], watched: Path, check: Callable[[bytes], None]) -> list[str]:
    env = clean_env(PYTHONPATH=str(ROOT))
    stop, seen, errors = threading.Event(), [], []

    def guarded() -> None:
        try:
            watch(watched, check, stop, seen)
        except AssertionError as exc:  # report from the main thread
            errors.append(exc)

    reader = threading.Thread(target=guarded)
    reader.start()
    try:
        procs = [subprocess.Popen([sys.executable, "-m", "ccopt_meson", *c], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for c in commands]
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0 and "Traceback" not in err, err
            outs.append(out)
    finally:
        stop.set()
        reader.join()
    assert not errors, errors[0]
    return outs


def run_targets(source: Path, feature: Path, out: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    # from the source's directory, as Meson runs it: messages name the source relative to it
    kw.setdefault("cwd", source.parent if source.parent.is_dir() else None)
    return cli("targets", str(source), "--cache-file", str(feature), "--output-dir", str(out), **kw)


def good_source(tmp_path: Path) -> Path:
    src = tmp_path / "kern.dispatch.c"
    src.write_text("/*@targets $maxopt baseline sse42 avx2 avx512_skx */\n")
    return src


def one_line_message(exc: CcoptError) -> str:
    text = str(exc)
    assert len(text.splitlines()) == 1, repr(text)
    return text


def future_schema(good: bytes) -> bytes:
    """A cache file as a future helper (one schema version up) might write it."""
    from ccopt_meson import cache

    return json.dumps({**json.loads(good), "schema_version": cache.SCHEMA_VERSION + 1}).encode()


def set_path(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``doc`` with the dotted ``path`` set to ``value`` (``KeyError``: deleted)."""
    import copy

    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    node = doc
    for p in parents:
        node = node[p]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return doc
