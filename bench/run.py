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

6. The per-call cost of a dispatcher and of ``CCOPT_TRACE`` unset: a tiny kernel called many
   millions of times through its dispatcher with ``CCOPT_TRACE`` unset and set, and directly.

``--quick`` skips the numpy part (it downloads numpy) for the smoke test.
The modules import only the standard library at the top: the plot step runs
``python -m bench --plot`` again under whichever interpreter has matplotlib.

What each part measures lives in its own module: ``detect`` (1-2), ``meson_overhead`` (3),
``kernels`` (4), ``scale`` (5), ``call_cost`` (6); ``timing`` holds the paired rounds, statistics and process
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

from bench import numpy_fork
from bench.cache_hit import bench_detect_hit, bench_helper_hits
from bench.call_cost import bench_call_cost
from bench.detect import DETECT_BASELINE, DETECT_DISPATCH, bench_detection
from bench.kernels import bench_dispatch
from bench.meson_overhead import bench_meson
from bench.projects import precompile
from bench.report import SCHEMA_VERSION, compute_ratios, evaluate_targets, make_plot, markdown, plot
from bench.scale import bench_scale
from bench.timing import CC, DEFAULT_OUT, ROOT, Bench, BenchError, bench_env, find_ninja, machine_info

# --------------------------------------------------------------------------- main


PARTS = ("detect", "hits", "meson", "kernels", "scale", "calls")
FULL_SIZES = "2,60,200"  # 2: the small library (dot product and popcount), see bench.consumers


def parts_list(text: str) -> tuple[str, ...]:
    parts = tuple(p.strip() for p in text.split(",") if p.strip())
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown part {unknown[0]!r}; choose from {', '.join(PARTS)}")
    return parts


def sizes_list(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from exc
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"source counts must be at least 1: {text!r}")
    return sizes


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--reps", type=int, default=7, metavar="N", help="measured runs per figure, after 1 warm-up")
    p.add_argument("--quick", action="store_true", help="skip the numpy venv part (a download) and anything slow")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the results go (default: %(default)s)")
    p.add_argument("--venv", type=Path, default=None, help="the numpy venv (default: OUT/venv-numpy)")
    p.add_argument("--keep-work", action="store_true", help="keep the scratch directory of projects and caches")
    p.add_argument("--parts", type=parts_list, default=PARTS, metavar="P,...",
                   help=f"parts to run, of {','.join(PARTS)} (default: all)")
    p.add_argument("--scale", type=sizes_list, default=None, metavar="N,...",
                   help=f"numbers of dispatch sources of the scale part (default: {FULL_SIZES}; --quick: 2)")
    p.add_argument("--no-fork", action="store_true", help="leave numpy's Meson fork out of the scale part")
    p.add_argument("--cache", type=Path, default=None,
                   help="where the parts of numpy's sdist the fork variant needs are unpacked (default: OUT/cache; "
                        "the sdist itself is kept where examples/numpy/prepare_numpy.py keeps it)")
    p.add_argument("--plot", nargs=2, type=Path, metavar=("JSON", "PNG"), help=argparse.SUPPRESS)
    ns = p.parse_args(argv)
    if ns.reps < 1:
        p.error("--reps must be at least 1")
    return ns


def fork_tree(b: Bench, ns: argparse.Namespace, out: Path) -> Path | None:
    """numpy's unpacked sdist for the scale part's fork variant, or None (and why, in skipped)."""
    if ns.quick or ns.no_fork:
        b.skipped["numpy_fork"] = "--quick" if ns.quick else "--no-fork"
        return None
    try:
        b.say(f"\n[5] numpy {numpy_fork.VERSION}'s sdist (vendored-meson/, meson_cpu/)")
        return numpy_fork.fetch((ns.cache or out / "cache").resolve())
    except BenchError as exc:
        b.skipped["numpy_fork"] = f"could not fetch numpy's sdist: {str(exc).splitlines()[0]}"
        b.say(f"  skipped: {b.skipped['numpy_fork']}")
        return None


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
              meson=[sys.executable, "-m", "mesonbuild.mesonmain"], ninja=find_ninja(env), keep_work=ns.keep_work)
    command = "python -m bench" + "".join(f" {a}" for a in (sys.argv[1:] if argv is None else argv))
    started = time.perf_counter()
    try:
        machine = machine_info(b)
        b.say("ccopt-meson benchmark; absolute times are this machine's:")
        for k, v in machine.items():
            b.say(f"  {k}: {v}")
        if ns.quick:
            b.skipped["numpy"] = "--quick (the numpy venv needs a download)"
        if "detect" in ns.parts:
            bench_detection(b, None if ns.quick else venv)
        if "hits" in ns.parts:
            bench_helper_hits(b)
            if ns.quick:
                b.skipped["detect_hit_venv"] = "--quick (installs ccopt-meson into a clean venv)"
            else:
                bench_detect_hit(b, out / "venv-lean")
        if "meson" in ns.parts:
            bench_meson(b)
        if "kernels" in ns.parts:
            bench_dispatch(b)
        if "scale" in ns.parts:
            bench_scale(b, ns.scale or sizes_list("2" if ns.quick else FULL_SIZES), fork_tree(b, ns, out))
        if "calls" in ns.parts:
            bench_call_cost(b)
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
        "ratio_ranges": ranges, "dispatch": b.dispatch, "scale": b.scale, "parts": list(ns.parts),
        "targets": evaluate_targets(b, ratios, ranges),
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
