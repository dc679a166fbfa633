from __future__ import annotations

from .cli import run

raise SystemExit(run())
