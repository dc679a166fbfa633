"""sha256 without loading OpenSSL: ``hashlib`` imports ``_hashlib`` (about 4 ms), which a
cache hit would pay on every configure.  CPython's own implementation gives the same digests."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Protocol

__all__ = ["sha256"]


class _Hash(Protocol):
    def update(self, data: bytes, /) -> None: ...

    def hexdigest(self) -> str: ...


def _pick() -> Callable[..., _Hash]:
    for module in ("_sha2", "_sha256"):  # CPython >= 3.12, CPython <= 3.11
        try:
            found: Any = importlib.import_module(module).sha256
            return found  # type: ignore[no-any-return]
        except (ImportError, AttributeError):
            continue
    import hashlib  # any other Python

    return hashlib.sha256


sha256 = _pick()
