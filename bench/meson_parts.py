"""Where one automatic regeneration's time goes inside Meson: ``python -m bench.meson_parts SRC BUILD``.

Runs ``meson --internal regenerate SRC BUILD`` (what ninja runs after a ``meson.build`` edit) in this
process, with wall-clock timers around a few of Meson's own functions, and prints their totals in
milliseconds as one JSON object.  The timers nest (the subproject's ``run_command`` is inside
``subproject()``), so the parts overlap; ``regeneration`` is the whole generation step after Meson's
own imports.  A function this Meson does not have is left out.  The build directory is regenerated
by this process's Meson, so the benchmark uses it only after its timed phases.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable

# (module, class or None, function, label)
SPOTS = (
    ("mesonbuild.msetup", "MesonApp", "_generate", "regeneration (interpreting, backend, saving)"),
    ("mesonbuild.interpreter.interpreter", "Interpreter", "run_command_impl", "run_command(): the helper runs"),
    ("mesonbuild.mparser", "Parser", "parse", "parsing meson.build and option files"),
    ("mesonbuild.interpreter.interpreter", "Interpreter", "func_project", "project() calls"),
    ("mesonbuild.interpreter.interpreter", "Interpreter", "func_subproject", "subproject() (its whole run)"),
    ("mesonbuild.interpreter.interpreter", "Interpreter", "build_target", "build target calls"),
    ("mesonbuild.backend.ninjabackend", "NinjaBackend", "generate", "backend: build.ninja"),
)


def _timed(spent: dict[str, float], label: str, func: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + 1000 * (time.perf_counter() - start)
    return wrapper


def main(argv: list[str]) -> int:
    import importlib

    src, build = argv
    spent: dict[str, float] = {}
    for module, owner, name, label in SPOTS:
        try:
            target = getattr(importlib.import_module(module), owner) if owner else importlib.import_module(module)
            func = getattr(target, name)
        except (ImportError, AttributeError):
            continue
        setattr(target, name, _timed(spent, label, func))
    from mesonbuild import mesonmain  # type: ignore[import-untyped, unused-ignore]

    launcher = os.path.join(os.path.dirname(sys.executable), "meson")
    sys.argv = [launcher if os.path.isfile(launcher) else mesonmain.__file__, "--internal", "regenerate", src, build]
    status = mesonmain.main()
    sys.stdout.flush()
    sys.stderr.write("\n")
    print(json.dumps(spent))
    return int(status or 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
