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

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bytecode_in(prefix):
    """The package's bytecode under ``prefix``, the standard library's where it always is.

    Writing ``ccopt_meson/__pycache__`` (22 files) into the consumer's subprojects/ tree, which Meson treats
    as read-only, is what this avoids; writing none is not the way out: compiling the package on every run
    made a cached configure 2.2x as long (15 paired runs, CPython 3.11, 2 busy cores: median wall
    162 ms with -B, 75 ms reading bytecode).  ``sys.pycache_prefix`` for the whole run would also recompile
    the standard library's modules into every new build dir (a first configure's helper run 383 ms, against
    157 ms), so it is set only while a module of this checkout finds its code: then 189 ms against 165 ms on
    a first run (cpu 1.01x) and 1.03x on a cached one (importlib.machinery: about 0.9 ms).
    """
    from importlib.machinery import SOURCE_SUFFIXES, FileFinder, SourceFileLoader

    class Loader(SourceFileLoader):
        def get_code(self, fullname):
            sys.pycache_prefix = prefix  # what importlib's cache_from_source reads
            try:
                return super().get_code(fullname)
            finally:
                sys.pycache_prefix = None

    finder = FileFinder.path_hook((Loader, SOURCE_SUFFIXES))

    def ours(path):
        if path != CHECKOUT and not (path + os.sep).startswith(os.path.join(CHECKOUT, "ccopt_meson", "")):
            raise ImportError("not ccopt-meson's")
        return finder(path)

    sys.path_hooks.insert(0, ours)


# Under Meson the bytecode goes to the build directory (the first run there writes it, a regeneration reads
# it); outside Meson none is written; a prefix of the user's own (PYTHONPYCACHEPREFIX) stands.
if sys.pycache_prefix is None:
    BUILD_ROOT = os.environ.get("MESON_BUILD_ROOT", "")
    if os.path.isabs(BUILD_ROOT):
        bytecode_in(os.path.join(BUILD_ROOT, "meson-private", "ccopt-pycache"))
    else:
        sys.dont_write_bytecode = True

sys.path.insert(0, CHECKOUT)

from ccopt_meson.cli import run  # noqa: E402

raise SystemExit(run())
