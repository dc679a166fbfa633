#!/usr/bin/env python3
"""The ISA audit as a Meson test: ``test('isa audit', ccopt.get_variable('audit'), args: [meson.project_build_root()])``.

Not executable, like the helper: Meson reads the shebang and runs it with its own Python, whose site-packages
hold the decoders (``pip install 'ccopt-meson[audit]'``, or the pinned requirements the skip message names).
Where they are missing the test exits 77, which ``meson test`` reports as SKIP.
"""
import os
import sys

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # Meson treats subprojects/ as read-only: no __pycache__ written there
sys.path.insert(0, CHECKOUT)

from ccopt_meson.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["audit", "--meson-test", *sys.argv[1:]]))
