"""The code blocks of the documentation, by id.

A block a user would copy carries ``<!-- snippet: ID -->`` on the line before its fence; the same id
may appear on several pages (the README repeats the tutorial's snippets), always with the same text.
Blocks fenced as ``text`` are output or illustration and carry no id. ``tests/test_docs.py`` lists
every id with the digest of its text and the test that builds or runs it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import NamedTuple

from .conftest import ROOT

MARK = "<!-- snippet: "
FENCE = re.compile(r"^(?:<!-- snippet: (?P<id>[\w./-]+) -->\n\n?)?```(?P<lang>\w*)\n(?P<text>.*?)^```$", re.M | re.S)


class Block(NamedTuple):
    page: str  # relative to the repository root
    id: str | None
    lang: str
    text: str


def pages() -> list[Path]:
    """Every page a user reads: the top-level documents and the site's pages (a symlinked page once)."""
    found = [ROOT / name for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")]
    found += sorted((ROOT / "docs").rglob("*.md"))
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def blocks() -> list[Block]:
    out = []
    for path in pages():
        for m in FENCE.finditer(path.read_text()):
            out.append(Block(str(path.relative_to(ROOT)), m.group("id"), m.group("lang"), m.group("text")))
    return out


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def snippet(name: str) -> str:
    """The text of snippet ``name``, the same on every page that shows it."""
    texts = {b.text for b in blocks() if b.id == name}
    assert len(texts) == 1, f"snippet {name!r}: {len(texts)} different texts (the copies must be identical)"
    return texts.pop()
