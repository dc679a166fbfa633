"""The ccopt-meson benchmark: ``python -m bench`` (or ``python bench/run.py``); see ``bench/run.py``."""

from __future__ import annotations
