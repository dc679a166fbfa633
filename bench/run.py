"""The ccopt-meson benchmark: one command, a few minutes on 2 cores.

    python -m bench [--reps N] [--quick] [--out DIR]      (or: python bench/run.py ...)

Leaves ``results.md`` (the Markdown table it prints), ``results.json`` and
``results.png`` (a bar chart, when matplotlib can be found) in ``bench/out``.

Every figure is 1 warm-up + N runs (default 7), reported as median and min-max;
ratios of medians are the headline, and absolute times are this machine's.

1. Cold detection: ``python -m ccopt_meson detect`` in a fresh build directory
   against numpy 1.26.4's ``CCompilerOpt`` with the same request and compiler,
   both timed as whole processes; compiler processes counted with a logging
   wrapper used as the compiler (CC).  numpy lives in a throw-away venv
   (``<out>/venv-numpy``, reused when present).
2. Warm detection: the cached ``detect`` against ``python -c pass`` and against
   CCompilerOpt's cache hit.
3. Inside Meson: cold ``meson setup``, ``meson setup --reconfigure`` and ninja's
   automatic regeneration of the example consumer ``examples/dot``, against the
   same sources without ccopt-meson and against a project using Meson's
   ``unstable-simd`` module.
4. The payoff of dispatch: the example's ``bench_dot`` (release build),
   throughput per compiled target of a load-bound kernel (``dot``) and two
   compute-bound ones (``poly``: float Horner; ``i8dot``: int8 dot product, where
   the instruction set and not only the vector width changes), and the cost of a
   dispatched call against a direct one.

``--quick`` skips the numpy part (it downloads numpy) for the smoke test.
The modules import only the standard library at the top: the plot step runs
``python -m bench --plot`` again under whichever interpreter has matplotlib.

What each part measures lives in its own module: ``detect`` (1-2), ``meson_overhead`` (3),
``kernels`` (4), ``scale`` (5); ``timing`` holds the paired rounds, statistics and process
counting they share, ``report`` the ratios, targets, Markdown and chart, and ``projects``
the staging of this checkout as a subproject.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

if __package__ in (None, ""):  # run as `python bench/run.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.detect import DETECT_BASELINE, DETECT_DISPATCH, bench_detection
from bench.kernels import bench_dispatch
from bench.meson_overhead import bench_meson
from bench.projects import precompile
from bench.report import SCHEMA_VERSION, compute_ratios, evaluate_targets, make_plot, markdown, plot
from bench.timing import CC, DEFAULT_OUT, ROOT, Bench, BenchError, bench_env, find_ninja, machine_info

# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--reps", type=int, default=7, metavar="N", help="measured runs per figure, after 1 warm-up")
    p.add_argument("--quick", action="store_true", help="skip the numpy venv part (a download) and anything slow")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the results go (default: %(default)s)")
    p.add_argument("--venv", type=Path, default=None, help="the numpy venv (default: OUT/venv-numpy)")
    p.add_argument("--keep-work", action="store_true", help="keep the scratch directory of projects and caches")
    p.add_argument("--plot", nargs=2, type=Path, metavar=("JSON", "PNG"), help=argparse.SUPPRESS)
    ns = p.parse_args(argv)
    if ns.reps < 1:
        p.error("--reps must be at least 1")
    return ns


def main(argv: Sequence[str] | None = None) -> int:
    ns = parse_args(argv)
    if ns.plot:
        plot(json.loads(ns.plot[0].read_text()), ns.plot[1])
        return 0
    out: Path = ns.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    venv: Path = (ns.venv or out / "venv-numpy").resolve()
    env = bench_env()
    precompile(ROOT / "ccopt_meson")
    work = Path(tempfile.mkdtemp(prefix="ccopt-bench-"))
    b = Bench(reps=ns.reps, quick=ns.quick, out=out, work=work, env=env,
              meson=[sys.executable, "-m", "mesonbuild.mesonmain"], ninja=find_ninja(env))
    command = "python -m bench" + "".join(f" {a}" for a in (sys.argv[1:] if argv is None else argv))
    started = time.perf_counter()
    try:
        machine = machine_info(b)
        b.say("ccopt-meson benchmark; absolute times are this machine's:")
        for k, v in machine.items():
            b.say(f"  {k}: {v}")
        if ns.quick:
            b.skipped["numpy"] = "--quick (the numpy venv needs a download)"
        bench_detection(b, None if ns.quick else venv)
        bench_meson(b)
        bench_dispatch(b)
    except BenchError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 1
    finally:
        if ns.keep_work:
            print(f"scratch directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if hasattr(os, "getloadavg"):
        machine["load_average_end"] = list(os.getloadavg())
    ratios, ranges = compute_ratios(b)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": command, "reps": ns.reps, "quick": ns.quick, "warmup": 1,
        "request": {"cc": CC, "baseline": DETECT_BASELINE, "dispatch": DETECT_DISPATCH},
        "machine": machine, "figures": b.figures, "counts": b.counts, "ratios": ratios,
        "ratio_ranges": ranges, "dispatch": b.dispatch, "targets": evaluate_targets(b, ratios, ranges),
        "notes": b.notes, "skipped": b.skipped,
        "elapsed_s": time.perf_counter() - started,
    }
    json_path, md_path, png = out / "results.json", out / "results.md", out / "results.png"
    json_path.write_text(json.dumps(doc, indent=1) + "\n")
    text = markdown(doc)
    md_path.write_text(text)
    b.say("\n" + text)
    b.say(make_plot(b, json_path, png, venv))
    b.say(f"wrote {md_path} and {json_path} in {doc['elapsed_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
