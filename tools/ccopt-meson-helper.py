#!/usr/bin/python3 -S
"""Run ccopt-meson from a source checkout (what meson.build calls; no install needed).

This file is deliberately not executable: Meson then reads the shebang and runs it with
its own Python (any interpreter named python3 is replaced by Meson's), passing -S, so no
site-packages are scanned at start-up (the helper needs only the standard library).  That
start-up runs on every configure and regeneration, so it is kept as short as possible: a
run that a replay record answers (ccopt_meson/replay.py) loads built-in modules only, not
even ``os``.
"""
import gc

gc.disable()  # a short process that frees everything at exit: no collector passes (~5% of a cache hit)

import sys  # noqa: E402

if sys.platform == "win32":
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
else:  # the checkout holding tools/: '<checkout>/tools/..' is as good a path entry, and needs no os.path
    sys.path.insert(0, (__file__.rpartition("/")[0] or ".") + "/..")

from ccopt_meson.entry import run  # noqa: E402  (a replayed hit loads nothing else)

raise SystemExit(run())
