"""ccopt-meson: SIMD feature detection and per-CPU dispatch for Meson projects.

The configure-time path uses the standard library only.  Public API::

    from ccopt_meson import Request, detect, flush, read
    det = detect(Request(command=("gcc",), baseline="min", dispatch="max"), build_dir="build")
    det.baseline, det.dispatch, det.target_flags("AVX2"), det.to_json()
"""

from __future__ import annotations

from .version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .errors import CcoptError, InputError
    from .pipeline import DEFAULT_BASELINE, DEFAULT_DISPATCH, Detection, Request, detect, flush, read

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


def __getattr__(name: str) -> object:
    """The API on first use: importing a submodule (the helper's replay path) loads no pipeline."""
    if name in ("CcoptError", "InputError"):
        from . import errors

        return getattr(errors, name)
    if name in __all__:
        from . import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'ccopt_meson' has no attribute {name!r}")
