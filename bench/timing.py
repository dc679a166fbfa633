"""What every part of the benchmark shares: the environment of measured processes, whole-process
timing, paired interleaved rounds, median/min/max statistics and counting compiler processes."""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "bench" / "out"

CC = "gcc"
# Variables that would change what a compiler run means; the benchmark runs without them.
DROPPED_ENV = ("CC", "CXX", "CFLAGS", "CPPFLAGS", "CXXFLAGS", "LDFLAGS", "CCOPT_FLUSH",
               "CCOPT_DISABLE_CPU_FEATURES", "CCOPT_ENABLE_CPU_FEATURES", "PYTHONSTARTUP", "MESONINTROSPECT",
               # a normal install has its bytecode cached; this machine may forbid writing it
               "PYTHONDONTWRITEBYTECODE")
RATE_UNITS = ("GFLOP/s", "GOP/s")


class BenchError(Exception):
    """A step of the benchmark failed; the message says which and how."""


# --------------------------------------------------------------------------- measurements


@dataclass
class Stat:
    runs: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def min(self) -> float:
        return min(self.runs)

    @property
    def max(self) -> float:
        return max(self.runs)

    def as_dict(self) -> dict[str, Any]:
        return {"median": self.median, "min": self.min, "max": self.max, "runs": list(self.runs)}


@dataclass
class Bench:
    reps: int
    quick: bool
    out: Path
    work: Path
    env: dict[str, str]
    meson: list[str]
    ninja: str
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    dispatch: dict[str, Any] = field(default_factory=dict)
    scale: dict[str, Any] = field(default_factory=dict)
    keep_work: bool = False

    def say(self, text: str) -> None:
        print(text, flush=True)

    def figure(self, key: str, label: str, stat: Stat, unit: str = "s") -> Stat:
        self.figures[key] = {"label": label, "unit": unit, **stat.as_dict()}
        self.say(f"  {label}: {fmt_stat(self.figures[key])}")
        return stat

    def rounds(self, actions: dict[str, tuple[str, Callable[[int], float]]], unit: str = "s") -> dict[str, Stat]:
        """1 warm-up round + ``reps`` rounds; a round runs each ``(label, action)`` once, in turn.

        ``action(i)`` returns the timed part of round ``i`` (0 = warm-up).  Interleaving keeps the
        contenders comparable on a shared machine, and pairs their runs for the ratio ranges.
        """
        runs: dict[str, list[float]] = {key: [] for key in actions}
        for i in range(self.reps + 1):
            for key, (_, action) in actions.items():
                elapsed = action(i)
                if i:
                    runs[key].append(elapsed)
        return {key: self.figure(key, label, Stat(runs[key]), unit) for key, (label, _) in actions.items()}

    def repeat(self, action: Callable[[int], float]) -> Stat:
        """1 warm-up + ``reps`` runs of ``action(i)``, which returns the timed part of run ``i`` (0 = warm-up)."""
        action(0)
        return Stat([action(i) for i in range(1, self.reps + 1)])


def run(cmd: Sequence[str], *, env: dict[str, str], cwd: Path | None = None, check: bool = True,
        timeout: float = 900) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run ``cmd`` as a whole process: its wall time in seconds, and its result."""
    t0 = time.perf_counter()
    try:
        r = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError as exc:
        raise BenchError(f"cannot run {cmd[0]}: {exc}") from exc
    elapsed = time.perf_counter() - t0
    if check and r.returncode != 0:
        raise BenchError(f"{' '.join(cmd)} failed with status {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return elapsed, r


def fmt_time(seconds: float) -> str:
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def fmt_value(value: float, unit: str) -> str:
    if unit == "s":
        return fmt_time(value)
    if unit in RATE_UNITS:
        return f"{value:.1f}"
    return f"{value:.1f} {unit}" if unit else f"{value:.2f}"


def fmt_stat(fig: dict[str, Any]) -> str:
    unit = fig["unit"]
    rng = f"{fmt_value(fig['min'], unit)}–{fmt_value(fig['max'], unit)}"
    tail = f" {unit}" if unit in RATE_UNITS else ""
    return f"{fmt_value(fig['median'], unit)}{tail} ({rng})"


# --------------------------------------------------------------------------- environment


def bench_env() -> dict[str, str]:
    """The environment of every measured process.

    PATH starts with this interpreter's directory, so that ``python3`` is the interpreter
    itself, not a launcher shim (pyenv's are shell scripts that cost tens of ms per start).
    Meson runs the helper with its own interpreter anyway.  PYTHONPATH makes the
    source checkout's ``ccopt_meson`` importable from any directory.
    """
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = str(ROOT)
    env["LC_ALL"] = "C"
    env["CC"] = CC  # named explicitly: Meson puts ccache in front of a compiler it finds by itself
    return env


def find_ninja(env: dict[str, str]) -> str:
    """The ninja binary itself: pip's ``ninja`` package puts a Python launcher on PATH."""
    try:
        import ninja  # type: ignore[import-not-found, import-untyped, unused-ignore]

        binary = Path(ninja.BIN_DIR) / "ninja"
        if binary.is_file():
            return str(binary)
    except (ImportError, AttributeError):
        pass
    found = shutil.which("ninja", path=env["PATH"])
    if not found:
        raise BenchError("ninja is not installed (pip install ninja)")
    return found


def first_line(cmd: Sequence[str], env: dict[str, str]) -> str:
    try:
        _, r = run(cmd, env=env, check=False, timeout=60)
    except BenchError:
        return "not found"
    lines = (r.stdout or r.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def machine_info(b: Bench) -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        fields: dict[str, str] = {}
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip().lower(), value.strip())
        cpu = next((fields[k] for k in ("model name", "cpu model", "cpu", "hardware") if fields.get(k)), cpu)
    except OSError:
        pass
    distro = ""
    try:
        fields = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line)
        distro = fields.get("PRETTY_NAME", "").strip('"')
    except OSError:
        pass
    info = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "gcc": first_line([CC, "-dumpfullversion"], b.env),
        "gcc_banner": first_line([CC, "--version"], b.env),
        "meson": first_line([*b.meson, "--version"], b.env),
        "ninja": first_line([b.ninja, "--version"], b.env),
        "python": f"{platform.python_implementation()} {platform.python_version()} ({sys.executable})",
        "os": distro or platform.platform(),
        "kernel": platform.release(),
        "load_average_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
    return info



def write_wrapper(directory: Path, log: Path) -> Path:
    """A ``gcc`` that logs each invocation, then runs the real one."""
    real = shutil.which(CC)
    if real is None:
        raise BenchError(f"{CC} is not installed")
    directory.mkdir(parents=True, exist_ok=True)
    wrapper = directory / "gcc"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def logged(log: Path) -> int:
    try:
        return sum(1 for line in log.read_text().splitlines() if line.strip())
    except FileNotFoundError:
        return 0


