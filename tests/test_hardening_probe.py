"""Probe-stage hardening (issue 11): blame, bounded output, honest status, clamped timeout, processes.

Compilers are either replays of recorded gcc output (named after the scenario) or small real
scripts written into the test's directory; the CLI runs in a subprocess where a signal or the
process tree matters.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import pytest

from ccopt_meson import Request
from ccopt_meson.probe import (
    MAX_TIMEOUT,
    OUTPUT_CAP,
    STALE_AFTER,
    ProcResult,
    Scratch,
    run_process,
    timeout_from_env,
)
from ccopt_meson.tables import PROBES_DIR

from .conftest import ROOT, FakeCompiler, detect_doc, need

AARCH64_MACROS = "#define __aarch64__ 1\n#define __GNUC__ 12\n#define __ARM_NEON 1\n"
ARM_NEON_H = "/usr/lib/gcc-cross/aarch64-linux-gnu/12/include/arm_neon.h"


# --------------------------------------------------------------------------- helpers


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CCOPT_", "FAKECC_", "MESON_"))}
    full["PYTHONPATH"] = str(ROOT)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "ccopt_meson", *args], capture_output=True, text=True,
                          env=full, timeout=timeout, cwd=ROOT)


def script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_for(predicate: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# --------------------------------------------------------------------------- blame


class SharedHeaderFailure(FakeCompiler):
    """gcc 12 on aarch64 when one feature's probe calls an intrinsic its flags do not enable.

    The error is located in arm_neon.h and its include chain names the FIRST probe that included
    the header (NEON's), whatever feature's code failed; the culprit appears only in a note.
    Recorded from aarch64-linux-gnu-gcc 12.2 (a PMULL probe compiled without +crypto); here the
    culprit is ASIMDDP's probe.
    """

    def __init__(self, culprit: str = "asimddp.c") -> None:
        super().__init__(macros=AARCH64_MACROS)
        self.culprit = PROBES_DIR / "arm" / culprit

    def _error(self, included_from: str) -> str:
        return (f"In file included from {included_from},\n"
                f"{ARM_NEON_H}: In function 'ccopt_probe_asimddp':\n"
                f"{ARM_NEON_H}:23601:1: error: inlining failed in call to 'always_inline' 'vdotq_u32': "
                "target specific option mismatch\n"
                "23601 | vdotq_u32 (uint32x4_t __r, uint8x16_t __a, uint8x16_t __b)\n"
                "      | ^~~~~~~~~\n"
                f"{self.culprit}:7:19: note: called from here\n"
                "    7 |     uint32x4_t d = vdotq_u32(a, b, c);\n")

    def __call__(self, argv: Sequence[str], timeout: float) -> ProcResult:
        if "-c" in argv:
            src = Path(argv[list(argv).index("-c") + 3])
            if src == self.culprit:
                self.calls.append(list(argv))
                return ProcResult(1, self._error(f"{self.culprit}:2"))
            if "arm/asimddp.c" in src.read_text() and src.parent != PROBES_DIR / "arm":
                self.calls.append(list(argv))
                return ProcResult(1, self._error(f"{PROBES_DIR}/arm/neon.c:2,\n                 from {src}:1"))
        return super().__call__(argv, timeout)


def test_a_failure_inside_a_shared_header_costs_only_the_feature_that_fails_alone() -> None:
    doc = detect_doc(Request(command=("fakecc",)), runner=SharedHeaderFailure())
    f = doc["features"]
    assert doc["baseline"]["names"] == ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
    assert f["NEON"]["supported"] is True and f["NEON"]["reason"] == ""
    assert f["ASIMDDP"]["supported"] is False and "inlining failed" in f["ASIMDDP"]["reason"]
    assert doc["dispatch"]["names"] == ["SVE", "ASIMDFHM", "ASIMDHP"]


def test_a_header_failure_no_suspect_fails_alone_falls_back_to_one_by_one() -> None:
    """The chain names NEON, NEON compiles alone, and the note names no probe: nobody is blamed
    on the batch's word; each feature is probed alone, and only the real culprit fails."""

    class Anonymous(SharedHeaderFailure):
        def _error(self, included_from: str) -> str:
            return super()._error(included_from).replace(f"{self.culprit}:7:19: note", "<inlined>: note")

    cc = Anonymous()
    doc = detect_doc(Request(command=("fakecc",)), runner=cc)
    assert doc["baseline"]["names"] == ["NEON", "NEON_FP16", "NEON_VFPV4", "ASIMD"]
    assert doc["features"]["ASIMDDP"]["supported"] is False
    assert doc["features"]["SVE"]["supported"] is True


# --------------------------------------------------------------------------- output and status


def test_compiler_output_is_capped(tmp_path: Path) -> None:
    """200 MB of output: the first OUTPUT_CAP bytes are kept, the rest is read and dropped."""
    start = time.monotonic()
    res = run_process(["sh", "-c", "head -c 200000000 /dev/zero | tr '\\0' w; exit 3"], 60)
    assert res.returncode == 3
    assert OUTPUT_CAP <= len(res.output) < OUTPUT_CAP + 200
    assert res.output.endswith(f"[{200_000_000 - OUTPUT_CAP} more bytes of compiler output were dropped]\n")
    assert time.monotonic() - start < 30


def test_a_noisy_compiler_costs_no_memory(tmp_path: Path) -> None:
    """A compiler printing 200 MB of warnings on the batched compile: a correct answer, a small helper."""
    gcc = need("gcc")
    noisy = script(tmp_path / "noisy", f"""case "$*" in
  *-I*) head -c 200000000 /dev/zero | tr '\\0' w >&2; echo >&2; echo "fakecc: warning: noise" >&2 ;;
esac
exec {gcc} "$@"
""")
    code = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCOPT_")}
    env["PYTHONPATH"] = str(ROOT)
    r = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "ccopt_meson", "detect", "--cc-arg", noisy],
                       capture_output=True, text=True, env=env, timeout=600)
    rc, max_rss_kib = map(int, r.stdout.split())
    assert rc == 0
    assert max_rss_kib < 400 * 1024, f"{max_rss_kib} KiB"  # was 2 GB


def test_exit_zero_with_a_warning_keeps_its_real_status(tmp_path: Path) -> None:
    gcc = need("gcc")
    cc = script(tmp_path / "nagging", f'echo "fakecc: warning: licence expires in 3 days" >&2\nexec {gcc} "$@"\n')
    r = cli("detect", "--cc-arg", cc)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr == (f"ccopt-meson: error: compiler '{cc}' printed a diagnostic for an empty file (exit status 0): "
                        "fakecc: warning: licence expires in 3 days\n")


# --------------------------------------------------------------------------- timeout


def test_huge_probe_timeout_is_clamped_with_a_message(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setenv("CCOPT_PROBE_TIMEOUT", "99999999")
    assert timeout_from_env() == MAX_TIMEOUT
    assert capsys.readouterr().err == ("ccopt-meson: warning: CCOPT_PROBE_TIMEOUT: '99999999' seconds is more than "
                                       "the maximum, 86400 (a day); using 86400\n")


def test_huge_probe_timeout_through_the_cli() -> None:
    need("gcc")
    r = cli("detect", "--cc", "gcc", env={"CCOPT_PROBE_TIMEOUT": "99999999"})
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == ["ccopt-meson: warning: CCOPT_PROBE_TIMEOUT: '99999999' seconds is more than "
                                     "the maximum, 86400 (a day); using 86400"]


# --------------------------------------------------------------------------- processes


def start_helper(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """The CLI with Python's own SIGINT handler (a test runner may ignore SIGINT, and children inherit that)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CCOPT_", "FAKECC_"))}
    full.update(PYTHONPATH=str(ROOT), TMPDIR=str(tmp_path / "tmp"), **env)
    (tmp_path / "tmp").mkdir()
    code = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from ccopt_meson.cli import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.Popen([sys.executable, "-c", code, *args], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def pids_of(pidfile: Path, count: int = 1) -> list[int]:
    assert wait_for(lambda: pidfile.exists() and len(pidfile.read_text().split()) >= count, 30), "no compiler started"
    return [int(p) for p in pidfile.read_text().split()]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_termination_kills_the_compiler_group_and_removes_scratch(tmp_path: Path, sig: signal.Signals) -> None:
    pidfile = tmp_path / "pids"
    hang = str(ROOT / "tests" / "fakecc" / "hang")
    proc = start_helper(tmp_path, "detect", "--cc-arg", hang, env={"FAKECC_PIDFILE": str(pidfile)})
    try:
        pids = pids_of(pidfile)
        assert list((tmp_path / "tmp").glob("ccopt-*")), "the scratch directory exists while the compiler runs"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig and err == f"ccopt-meson: error: terminated by {sig.name}\n"
    assert wait_for(lambda: not any(alive(p) for p in pids), 5), "the compiler's children must die with it"
    assert list((tmp_path / "tmp").iterdir()) == [], "scratch directories are removed"


def test_ctrl_c_ends_the_parallel_fallback_at_once(tmp_path: Path) -> None:
    """The batch fails without naming a file, so every feature is probed alone, in parallel; those
    compiles hang.  Ctrl-C must end the helper now, not after each worker's 120 s timeout."""
    gcc = need("gcc")
    pidfile = tmp_path / "pids"
    cc = script(tmp_path / "stuck", f"""case "$*" in
  *-I*) echo "fakecc: error: out of licences"; exit 1 ;;
  *probes/*) sleep 300 & echo $! >> "{pidfile}"; wait; exit 1 ;;
esac
exec {gcc} "$@"
""")
    proc = start_helper(tmp_path, "detect", "--cc-arg", cc, env={})
    try:
        pids = pids_of(pidfile)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - start
    finally:
        proc.kill()
    assert proc.returncode == 1 and err == "ccopt-meson: error: interrupted\n", err
    assert elapsed < 10, f"took {elapsed:.1f} s"
    pids = [int(p) for p in pidfile.read_text().split()]
    assert wait_for(lambda: not any(alive(p) for p in pids), 5)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_scratch_left_by_a_killed_helper_is_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL cannot be caught; the next helper removes what a dead one left, and nothing else."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    old = time.time() - STALE_AFTER - 60
    stale = tmp_path / f"ccopt-{dead.pid}-abc123"
    young = tmp_path / f"ccopt-{dead.pid}-young"
    running = tmp_path / f"ccopt-{os.getpid()}-mine"
    other = tmp_path / "ccopt-notapid"
    for d in (stale, young, running, other):
        (d / "sub").mkdir(parents=True)
        (d / "sub" / "p1.c").write_text("int x;\n")
    for d in (stale, running, other):
        os.utime(d, (old, old))
    with Scratch(runner=lambda argv, timeout: ProcResult(0, "")) as scratch:
        assert scratch.dir.name.startswith(f"ccopt-{os.getpid()}-")
        left = sorted(p.name for p in tmp_path.iterdir())
    assert not stale.exists()
    assert left == sorted([young.name, running.name, other.name, scratch.dir.name])
