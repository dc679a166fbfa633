"""The ``ccopt-meson`` program (the installed script, ``python -m ccopt_meson``, the Meson helper).

A run that a replay record answers (``replay``) prints it and ends, having loaded built-in
modules only; any other run is the command line proper (``cli``).
"""

from __future__ import annotations

import sys

from . import replay

__all__ = ["run"]


def run() -> int:
    argv = sys.argv[1:]
    if replay.replay(argv):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (AttributeError, OSError):  # no stream, or a closed pipe: let the normal exit report it
            return 0
        replay.exit_now(0)
    replay.begin(argv)
    from .cli import run as run_cli

    return run_cli()
