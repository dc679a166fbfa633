"""ccopt-meson: SIMD feature detection and per-CPU dispatch for Meson projects.

The configure-time path uses the standard library only.  Public API::

    from ccopt_meson import Request, detect, flush, read
    det = detect(Request(command=("gcc",), baseline="min", dispatch="max"), build_dir="build")
    det.baseline, det.dispatch, det.target_flags("AVX2"), det.to_json()
"""

from __future__ import annotations

from .errors import CcoptError, InputError
from .pipeline import DEFAULT_BASELINE, DEFAULT_DISPATCH, Detection, Request, detect, flush, read
from .version import __version__

__all__ = [
    "__version__",
    "Request",
    "Detection",
    "detect",
    "flush",
    "read",
    "DEFAULT_BASELINE",
    "DEFAULT_DISPATCH",
    "CcoptError",
    "InputError",
]
