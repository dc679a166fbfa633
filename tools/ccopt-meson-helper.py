#!/usr/bin/env python3
"""Run ccopt-meson from a source checkout (what meson.build calls; no install needed)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ccopt_meson.cli import main  # noqa: E402

raise SystemExit(main())
