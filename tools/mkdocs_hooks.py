"""MkDocs hook: heading anchors never start with a digit.

Python-Markdown turns "## 1. Option expressions" into the id ``1-option-expressions``; the mkdocs
theme's scroll spy passes ids to ``querySelector``, which refuses a selector that starts with a digit
and stops the page's script (tables lose their style, search stops). Such ids get an ``s`` in front.
"""

from __future__ import annotations

from typing import Any

from markdown.extensions.toc import slugify


def _slugify(value: str, separator: str) -> str:
    slug: str = slugify(value, separator)
    return "s" + slug if slug[:1].isdigit() else slug


def on_config(config: Any) -> Any:
    config.mdx_configs.setdefault("toc", {})["slugify"] = _slugify
    return config
