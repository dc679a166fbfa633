"""The JSON-Schema subset the package's data files are written against (``data/*.schema.json``).

One validator for the feature tables, the compiler table, the cache file and a project's
features file: every mistake is a ``TableError`` naming where it is and what was expected.
"""

from __future__ import annotations

import json
import os
import re

from ._record import TYPE_CHECKING
from .errors import TableError, did_you_mean

if TYPE_CHECKING:
    from typing import Any, Callable, Mapping

__all__ = ["read_json", "validate_schema"]


def read_json(path: str | os.PathLike[str]) -> Any:
    """A JSON data file of the package (tables, schemas)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise TableError(f"cannot read feature table {os.path.basename(path)}: {exc}") from exc


_TYPES: Mapping[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _kind(value: Any, schema: Mapping[str, Any], where: str) -> str | None:
    """The JSON type ``value`` matched (``type`` may be a list, e.g. ``["string", "null"]``)."""
    kinds = schema.get("type")
    if kinds is None:
        return None
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        if _TYPES[kind](value):
            return str(kind)
    raise TableError(f"{where}: expected {kinds if isinstance(kinds, str) else ' or '.join(kinds)}, "
                     f"got {json.dumps(value)[:60]}")


def _anchored(pattern: str) -> str:
    """JSON Schema's ``$`` is the end of the string; Python's also matches before a final line break."""
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith(r"\$") else pattern


def _check_bounds(value: Any, schema: Mapping[str, Any], kind: str | None, where: str) -> None:
    if "enum" in schema and value not in schema["enum"]:
        raise TableError(f"{where}: {json.dumps(value)[:40]} is not one of {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        raise TableError(f"{where}: {value} is below {schema['minimum']}")
    if kind == "string" and "pattern" in schema and not re.search(_anchored(schema["pattern"]), value):
        raise TableError(f"{where}: {value[:40]!r} does not match {schema['pattern']}")
    size = len(value) if kind in ("array", "object") else None
    if size is not None and size < schema.get("minItems", 0):
        raise TableError(f"{where}: fewer than {schema['minItems']} items")
    if size is not None and size > schema.get("maxItems", schema.get("maxProperties", size)):
        raise TableError(f"{where}: too many items ({size})")


def validate_schema(value: Any, schema: Mapping[str, Any], defs: Mapping[str, Any], where: str) -> None:
    """Check ``value`` against the JSON-Schema subset ``data/*.schema.json`` and ``data/schema.json`` use."""
    if "$ref" in schema:
        validate_schema(value, defs[schema["$ref"]], defs, where)
        return
    kind = _kind(value, schema, where)
    _check_bounds(value, schema, kind, where)
    if kind == "array":
        prefix = schema.get("prefixItems", ())
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else schema.get("items")
            if sub is not None:
                validate_schema(item, sub, defs, f"{where}[{i}]")
    if kind == "object":
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise TableError(f"{where}: missing required key '{key}'")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            shown = key[:40]
            if not (shown.isascii() and shown.isprintable()):  # a key may hold any character
                shown = shown.encode("unicode_escape").decode("ascii")
            if key in props:
                validate_schema(item, props[key], defs, f"{where}.{shown}")
            elif extra is False:
                raise TableError(f"{where}: unknown key '{shown}'{did_you_mean(key, props)}")
            elif isinstance(extra, dict):
                validate_schema(item, extra, defs, f"{where}.{shown}")
