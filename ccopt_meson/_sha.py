"""sha256 without loading OpenSSL: ``hashlib`` imports ``_hashlib`` (about 4 ms), which a
cache hit would pay on every configure.  CPython's own implementation gives the same digests."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Protocol

    class _Hash(Protocol):
        def update(self, data: bytes, /) -> None: ...

        def hexdigest(self) -> str: ...


__all__ = ["sha256"]


def _pick() -> Callable[..., _Hash]:
    for module in ("_sha2", "_sha256"):  # CPython >= 3.12, CPython <= 3.11 (importlib not needed)
        try:
            found: Callable[..., _Hash] = __import__(module).sha256
            return found
        except (ImportError, AttributeError):
            continue
    import hashlib  # any other Python

    return hashlib.sha256


sha256 = _pick()
