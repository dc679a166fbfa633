"""sha256 without loading OpenSSL: ``hashlib`` imports ``_hashlib`` (about 4 ms), which a
cache hit would pay on every configure.  CPython's own implementation gives the same digests."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Protocol

    class _Hash(Protocol):
        def update(self, data: bytes, /) -> None: ...

        def hexdigest(self) -> str: ...


__all__ = ["sha256"]


def _pick() -> Callable[..., _Hash]:
    # CPython >= 3.12 names it _sha2, before _sha256 (asked in that order: a failed import searches sys.path)
    try:
        found: Callable[..., _Hash] = __import__("_sha2" if sys.version_info >= (3, 12) else "_sha256").sha256
        return found
    except (ImportError, AttributeError):
        pass
    import hashlib  # any other Python

    return hashlib.sha256


sha256 = _pick()
