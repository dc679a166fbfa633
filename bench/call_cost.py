"""Part 6: the per-call cost of a dispatcher, and of ``CCOPT_TRACE`` when it is unset.

``bench/data/call_cost`` is a consumer with one tiny kernel (``step``: one add) whose dispatcher is
defined in a file of its own, built in release (``NDEBUG``).  Each round runs its ``call_cost``
program three times, in turn: (a) through the dispatcher with ``CCOPT_TRACE`` unset, (b) through the
dispatcher with ``CCOPT_TRACE=1`` (the first call prints its line, the timed calls take the same path
as (a)), (c) the picked version called through a pointer held by the caller, the floor.  Each figure
is the program's ns per call (thread CPU time), the best of its 5 timings of ``calls`` calls.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

from bench.projects import copy_repo
from bench.timing import ROOT, Bench, BenchError, run

PROJECT = ROOT / "bench" / "data" / "call_cost"
CALLS, QUICK_CALLS = 20_000_000, 2_000_000
TRACE = "CCOPT_TRACE"
# key, label, CCOPT_TRACE (None: unset), the program's mode
VARIANTS = (
    ("call_ns_trace_unset", "(a) step() through the dispatcher, CCOPT_TRACE unset", None, "dispatched"),
    ("call_ns_trace_on", "(b) step() through the dispatcher, CCOPT_TRACE=1", "1", "dispatched"),
    ("call_ns_picked", "(c) the picked version through a pointer (the floor)", None, "direct"),
)


def build(b: Bench) -> Path:
    """The call_cost program, built in release from a copy of the project with this checkout as its subproject."""
    src = b.work / "call_cost"
    shutil.copytree(PROJECT, src)
    copy_repo(src / "subprojects" / "ccopt-meson")
    run([*b.meson, "setup", "build", "--buildtype=release"], env=b.env, cwd=src)
    run([b.ninja, "-C", "build"], env=b.env, cwd=src)
    return src / "build" / "call_cost"


def bench_call_cost(b: Bench, calls: int | None = None) -> None:
    calls = calls or (QUICK_CALLS if b.quick else CALLS)
    b.say(f"\n[6] the per-call cost of a dispatcher and of CCOPT_TRACE: {calls} calls of a tiny kernel, release")
    exe = build(b)
    seen: dict[str, Any] = {}

    def variant(key: str, trace: str | None, mode: str) -> Callable[[int], float]:
        env = {k: v for k, v in b.env.items() if k != TRACE} | ({} if trace is None else {TRACE: trace})

        def once(i: int) -> float:
            _, r = run([str(exe), mode, str(calls)], env=env)
            doc = json.loads(r.stdout)
            seen["picked"] = doc["picked"]
            seen.setdefault("stderr", {})[key] = r.stderr
            return float(doc["ns_per_call"])
        return once

    b.rounds({key: (label, variant(key, trace, mode)) for key, label, trace, mode in VARIANTS}, unit="ns")
    stderr = seen["stderr"]
    printed = stderr["call_ns_trace_unset"] + stderr["call_ns_picked"]
    if printed:
        raise BenchError(f"call_cost printed with {TRACE} unset: {printed!r}")
    line = stderr["call_ns_trace_on"].strip()
    if not line.startswith(f"ccopt: step: {seen['picked']} ("):
        raise BenchError(f"call_cost with {TRACE}=1 printed {line!r}, not the line naming {seen['picked']}")
    b.dispatch["call_cost"] = {"calls": calls, "picked": seen["picked"], "trace_line": line}
