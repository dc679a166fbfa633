"""Part 4: the payoff of dispatch, examples/dot's bench_dot per compiled target."""

from __future__ import annotations

import json
from typing import Any

from bench.projects import make_ccopt_project
from bench.timing import Bench, BenchError, Stat, run

# The kernels of bench_dot's JSON: key, title in the tables, throughput unit (i8dot's "gflops"
# field counts integer operations).  The compute-bound ones, integer first, are what the
# avx2_speedup goal reads.
KERNELS: tuple[tuple[str, str, str], ...] = (
    ("poly", "poly_sum (float, degree-16 Horner, compute-bound)", "GFLOP/s"),
    ("i8dot", "i8dot (int8 dot product into int32, compute-bound)", "GOP/s"),
    ("dot", "dot (float, load-bound)", "GFLOP/s"),
)
KERNEL_UNITS = {key: unit for key, _, unit in KERNELS}
COMPUTE_BOUND = ("i8dot", "poly")


# --------------------------------------------------------------------------- 4: the payoff of dispatch


def bench_dispatch(b: Bench) -> None:
    b.say("\n[4] the payoff of dispatch: examples/dot bench_dot, release build")
    src = make_ccopt_project(b.work / "payoff")
    run([*b.meson, "setup", "build", "--buildtype=release"], env=b.env, cwd=src)
    run([b.ninja, "-C", "build"], env=b.env, cwd=src)
    _, r = run([str(src / "build" / "test_dot")], env=b.env, cwd=src)
    if "WRONG" in r.stdout:
        raise BenchError(f"test_dot found a wrong result:\n{r.stdout}")
    docs: list[dict[str, Any]] = []

    def once(i: int) -> float:
        elapsed, r = run([str(src / "build" / "bench_dot")], env=b.env, cwd=src)
        if i:
            docs.append(json.loads(r.stdout))
        return elapsed

    b.repeat(once)
    for kernel, _, unit in KERNELS:
        per_run = [d if kernel == "dot" else d[kernel] for d in docs]
        first = per_run[0]
        entry: dict[str, Any] = {"n": first["n"], "picked": first["picked"], "targets": {}}
        for t in first["targets"]:
            name = t["target"]
            ns = Stat([next(x["ns_per_call"] for x in r["targets"] if x["target"] == name) for r in per_run])
            gf = Stat([next(x["gflops"] for x in r["targets"] if x["target"] == name) for r in per_run])
            entry["targets"][name] = {"kernel": t["kernel"], "ns_per_call": ns.as_dict(), "gflops": gf.as_dict()}
            b.figure(f"{kernel}_gflops_{name}", f"{kernel} {name} ({t['kernel']})", gf, unit=unit)
        if kernel == "dot":
            for key in ("call_ns_direct", "call_ns_dispatched"):
                label = "dot(n=8) call, " + ("direct" if key.endswith("direct") else "dispatched")
                entry[key] = b.figure(key, label, Stat([r[key] for r in per_run]), unit="ns").as_dict()
        b.dispatch[kernel] = entry


