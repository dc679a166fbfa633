#!/usr/bin/python3 -S
"""Run ccopt-meson from a source checkout (what meson.build calls; no install needed).

This file is deliberately not executable: Meson then reads the shebang and runs it with
its own Python (any interpreter named python3 is replaced by Meson's), passing -S, so no
site-packages are scanned at start-up (the helper needs only the standard library): that
start-up runs on every configure and regeneration.
"""
import gc

gc.disable()  # a short process that frees everything at exit: no collector passes (~5% of a cache hit)

import sys  # noqa: E402

import os  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ccopt_meson.cli import run  # noqa: E402

raise SystemExit(run())
