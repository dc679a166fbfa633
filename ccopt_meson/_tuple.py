"""``NamedTuple`` for the records, without importing ``typing`` at run time.

Every configure and regeneration starts the helper, and a cache hit must cost
about one Python start-up.  ``typing.NamedTuple`` costs more than that on its
own: importing ``typing`` (with ``re``, ``functools`` and ``collections``) is
about one more start-up, and each class is built by ``collections.namedtuple``,
which compiles code with ``eval``.  This base builds the same kind of class from
the same class body: a tuple subclass with a read-only property per field,
defaults, ``_fields``, ``_field_defaults``, ``_replace``, ``_asdict``,
``_make``, and the usual repr, equality, hashing and pickling.

Modules import it as ``NamedTuple`` at run time only; mypy reads
``typing.NamedTuple`` (``if TYPE_CHECKING`` in each module), so the records are
type-checked exactly as before.
"""

from __future__ import annotations

from _operator import itemgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


__all__ = ["NamedTuple"]


def _new(cls: Any, *args: Any, **kwargs: Any) -> Any:
    fields: tuple[str, ...] = cls._fields
    if len(args) == len(fields) and not kwargs:
        return tuple.__new__(cls, args)
    if len(args) > len(fields):
        raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments but {len(args)} were given")
    values = list(args)
    for name in fields[len(args):]:
        if name in kwargs:
            values.append(kwargs.pop(name))
        elif name in cls._field_defaults:
            values.append(cls._field_defaults[name])
        else:
            raise TypeError(f"{cls.__name__}() missing required argument: '{name}'")
    if kwargs:
        name = next(iter(kwargs))
        twice = name in fields
        raise TypeError(f"{cls.__name__}() got {'multiple values for' if twice else 'an unexpected'} argument '{name}'")
    return tuple.__new__(cls, values)


class _Base(tuple):  # type: ignore[type-arg]
    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _field_defaults: dict[str, Any] = {}

    def __repr__(self) -> str:
        body = ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self))
        return f"{type(self).__name__}({body})"

    def __getnewargs__(self) -> tuple[Any, ...]:
        return tuple(self)

    def _replace(self, **changes: Any) -> Any:
        values = [changes.pop(n, v) for n, v in zip(self._fields, self)]
        if changes:
            raise ValueError(f"got unexpected field names: {list(changes)!r}")
        return tuple.__new__(type(self), values)

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self))

    @classmethod
    def _make(cls, iterable: Any) -> Any:
        values = tuple(iterable)
        if len(values) != len(cls._fields):
            raise TypeError(f"expected {len(cls._fields)} arguments, got {len(values)}")
        return tuple.__new__(cls, values)


class _Meta(type):
    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> Any:
        if ns.get("__module__") == __name__:  # NamedTuple itself
            return super().__new__(mcs, name, bases, ns)
        fields = tuple(ns.get("__annotations__", {}))
        defaults = {f: ns.pop(f) for f in fields if f in ns}
        required = [f for f in fields if f not in defaults]
        if required and fields.index(required[-1]) >= len(required):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        ns.update({f: property(itemgetter(i), doc=f"Alias for field number {i}") for i, f in enumerate(fields)})
        ns.update(__slots__=(), _fields=fields, _field_defaults=defaults, __match_args__=fields, __new__=_new)
        return type.__new__(type, name, (_Base,), ns)


class NamedTuple(metaclass=_Meta):
    """Subclass it as ``typing.NamedTuple``: ``class Point(NamedTuple): x: int; y: int = 0``."""
