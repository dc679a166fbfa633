"""The JSON-Schema subset the package's data files are written against (``data/*.schema.json``),
and the one reader of every JSON input.

One validator for the feature tables, the compiler table, the cache file, a project's
features file and the ``targets`` call record: every mistake is a ``TableError`` naming
where it is and what was expected.  ``read_document`` is the one way a JSON file is read:
``fsio.read_bounded`` (regular files only, a size cap), one decoder, one schema check.
"""

from __future__ import annotations

import functools
import json
import os
import re

from . import fsio
from ._record import TYPE_CHECKING, NamedTuple
from .errors import InputError, TableError, did_you_mean

if TYPE_CHECKING:
    from typing import Any, Callable, Mapping

__all__ = ["Document", "DuplicateKey", "read_json", "decode", "schema_file", "check", "read_document",
           "validate_schema"]

_DATA = os.path.join(os.path.dirname(os.path.realpath(__file__)), "data")


class Document(NamedTuple):
    """A JSON input as read: its bytes (what a digest covers) and its checked value."""

    raw: bytes
    value: Any


class DuplicateKey(TableError):
    """A key given twice in one JSON object: ``json.loads`` keeps the last one without a word, so a features
    file's second ``"flags"`` (or a cache's) would win in silence."""


class _Duplicate(ValueError):  # raised inside json.loads, which lets only ValueError through unchanged
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # the common case costs one comparison
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(f"the key {json.dumps(key)[:60]} appears twice in one object; keep one of them")
            seen.add(key)
    return obj


def decode(raw: bytes) -> Any:
    """The JSON value of ``raw``; TableError for anything that is not JSON text (nesting too deep for the
    parser, bytes that are not UTF-8 included), DuplicateKey for an object that holds a key twice."""
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_unique)
    except _Duplicate as exc:
        raise DuplicateKey(str(exc)) from exc
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise TableError(f"not valid JSON: {str(exc)[:120]}") from exc


def read_json(path: str | os.PathLike[str]) -> Any:
    """A JSON data file of the package (tables, schemas), read like every other input."""
    try:
        return decode(fsio.read_bounded(path, fsio.LIMITS.package_table, "feature table"))
    except (OSError, InputError, TableError) as exc:
        raise TableError(f"cannot read feature table {os.path.basename(path)}: {exc}") from exc


@functools.cache
def schema_file(name: str) -> Any:
    """A schema of ``data/`` (``schema.json``, ``cache.schema.json``, ...), read once per process."""
    return read_json(os.path.join(_DATA, name))


def check(value: Any, schema: str, definition: str | None = None, where: str = "") -> None:
    """``value`` against the top level of the schema file ``schema`` or one of its ``definitions``."""
    doc = schema_file(schema)
    defs = doc.get("definitions", {})
    validate_schema(value, doc if definition is None else defs[definition], defs, where)


def read_document(path: str | os.PathLike[str], limit: int, what: str, schema: str,
                  definition: str | None = None) -> Document:
    """The one reader of a JSON input: a regular file of at most ``limit`` bytes, decoded, and checked
    against ``schema`` (``definition``).  FileNotFoundError/NotADirectoryError for a missing file,
    InputError for one that cannot be read, TableError for content that does not fit the schema."""
    raw = fsio.read_bounded(path, limit, what)
    value = decode(raw)
    check(value, schema, definition)
    return Document(raw, value)


_TYPES: Mapping[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _at(where: str) -> str:
    """The start of a message about ``where`` (nothing at a document's root)."""
    return f"{where}: " if where else ""


def _suggest(key: str, props: Mapping[str, Any]) -> str:
    """``did_you_mean`` for a key (it compares upper-case words), quoting the key as the schema spells it."""
    hint = did_you_mean(key, [p.upper() for p in props])
    for p in props:
        hint = hint.replace(f"'{p.upper()}'", f"'{p}'")
    return hint


def _child(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _kind(value: Any, schema: Mapping[str, Any], where: str) -> str | None:
    """The JSON type ``value`` matched (``type`` may be a list, e.g. ``["string", "null"]``)."""
    kinds = schema.get("type")
    if kinds is None:
        return None
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        if _TYPES[kind](value):
            return str(kind)
    raise TableError(f"{_at(where)}expected {kinds if isinstance(kinds, str) else ' or '.join(kinds)}, "
                     f"got {json.dumps(value)[:60]}")


def _anchored(pattern: str) -> str:
    """JSON Schema's ``$`` is the end of the string; Python's also matches before a final line break."""
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith(r"\$") else pattern


def _check_bounds(value: Any, schema: Mapping[str, Any], kind: str | None, where: str) -> None:
    if "enum" in schema and value not in schema["enum"]:
        raise TableError(f"{_at(where)}{json.dumps(value)[:40]} is not one of {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        raise TableError(f"{_at(where)}{value} is below {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        raise TableError(f"{_at(where)}{value} is above {schema['maximum']}")
    if kind == "string" and "pattern" in schema and not re.search(_anchored(schema["pattern"]), value):
        rule = f"is not {schema['title']}" if "title" in schema else f"does not match {schema['pattern']}"
        raise TableError(f"{_at(where)}{value[:40]!r} {rule}")
    size = len(value) if kind in ("array", "object") else None
    if size is not None and size < schema.get("minItems", 0):
        least = schema["minItems"]
        raise TableError(f"{_at(where)}expected at least {least} item{'s' if least > 1 else ''}, got {size}")
    if size is not None and size > schema.get("maxItems", schema.get("maxProperties", size)):
        raise TableError(f"{_at(where)}too many items ({size})")


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
                validate_schema(item, sub, defs, f"{where}[{i}]" if where else f"[{i}]")
    if kind == "object":
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise TableError(f"{_at(where)}missing required key '{key}'")
        for key, needs in schema.get("dependentRequired", {}).items():
            lacking = [n for n in needs if key in value and n not in value]
            if lacking:
                raise TableError(f"{_at(where)}'{key}' needs '{lacking[0]}' beside it")
        extra = schema.get("additionalProperties", True)
        names = schema.get("propertyNames")
        for key, item in value.items():
            shown = key[:40]
            if not (shown.isascii() and shown.isprintable()):  # a key may hold any character
                shown = shown.encode("unicode_escape").decode("ascii")
            if names is not None:
                validate_schema(key, names, defs, f"{_child(where, shown)} (a key)")
            if key in props:
                validate_schema(item, props[key], defs, _child(where, shown))
            elif extra is False:
                raise TableError(f"{_at(where)}unknown key '{shown}'{_suggest(key, props)}")
            elif isinstance(extra, dict):
                validate_schema(item, extra, defs, _child(where, shown))
