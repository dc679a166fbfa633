"""The typed records of every stage, without importing ``typing`` at run time.

A cached helper run is mostly interpreter start-up and imports: ``typing`` alone costs about as
much as the run's own work (it builds its generic aliases at import), and a ``typing.NamedTuple``
class type-checks each annotation as it is made.  ``collections.namedtuple`` is cheaper but still
compiles a ``__new__`` from source text for each class (``eval``: about 85 us a class, 2 ms for the
records a helper run imports).  A type checker sees ``typing.NamedTuple`` here; at run time the same
class statement makes a tuple subclass with what ``typing.NamedTuple`` gives (fields from the
annotations, in order; defaults from the class attributes; ``_fields``, ``_field_defaults``,
``_make``, ``_replace``, ``_asdict``, the repr, pickling; methods, properties and docstring kept)
from functions defined once in this module, so making a record class compiles nothing.

Modules write ``TYPE_CHECKING = False`` instead of importing it from ``typing``: type checkers
treat that name as true whatever its value.

Kept against STYLE rule 16 on a measurement: with ``typing.NamedTuple`` instead (this module gone), the
regeneration of a 2-source project (``meson.build`` touched, then ``ninja``) took 1.05x as long, the
median of 7 paired calls of 15 pairs each on the current tree (call medians 1.00-1.09x), and 1.07x on
the tree before the other copies went (8 calls, 1.02-1.12x); the regeneration's two helper runs took
33-43 ms more (about 1.2x).  Most of it is ``typing.NamedTuple`` itself: it compiles each string
annotation into a ``ForwardRef`` and each class's ``__new__`` with ``eval``; importing ``typing``
alone measured about 10 ms a pair of runs.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    try:  # the C field accessor collections.namedtuple uses
        from _collections import _tuplegetter
    except ImportError:  # pragma: no cover - other interpreters
        from operator import itemgetter as _itemgetter

        def _tuplegetter(index, doc):  # noqa: ANN001, ANN202
            return property(_itemgetter(index), doc=doc)

    # what typing.NamedTuple also refuses to take from a class body (names a namedtuple defines)
    _RESERVED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
                           "_make", "_replace", "_asdict", "_source"})
    _SKIPPED = frozenset({"__module__", "__qualname__", "__annotations__", "__dict__", "__weakref__"})

    def _bind(cls, args, kwargs):  # noqa: ANN001, ANN202
        """The field values of a call with keywords, defaults or a wrong count (the rare path)."""
        fields, defaults = cls._fields, cls._field_defaults
        if len(args) > len(fields):
            raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments but {len(args)} were given")
        values = list(args)
        for name in fields[len(args):]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif name in defaults:
                values.append(defaults[name])
            else:
                raise TypeError(f"{cls.__name__}() missing required argument: '{name}'")
        if kwargs:
            name = next(iter(kwargs))
            raise TypeError(f"{cls.__name__}() got an unexpected or repeated keyword argument '{name}'")
        return values

    def __new__(cls, *args, **kwargs):  # noqa: ANN001, ANN204, N807
        if kwargs or len(args) != len(cls._fields):
            args = _bind(cls, args, kwargs)
        return tuple.__new__(cls, args)

    def _make(cls, iterable):  # noqa: ANN001, ANN202
        values = tuple(iterable)
        if len(values) != len(cls._fields):
            raise TypeError(f"expected {len(cls._fields)} arguments, got {len(values)}")
        return tuple.__new__(cls, values)

    def _replace(self, **kwargs):  # noqa: ANN001, ANN003, ANN202
        values = [kwargs.pop(name, value) for name, value in zip(self._fields, self)]
        if kwargs:
            raise ValueError(f"got unexpected field names: {list(kwargs)!r}")
        return tuple.__new__(type(self), values)

    def _asdict(self):  # noqa: ANN001, ANN202
        return dict(zip(self._fields, self))

    def __repr__(self):  # noqa: ANN001, ANN204, N807
        return f"{type(self).__name__}({', '.join(f'{n}={v!r}' for n, v in zip(self._fields, self))})"

    def __getnewargs__(self):  # noqa: ANN001, ANN204, N807
        return tuple(self)

    _METHODS = {"__new__": __new__, "_make": classmethod(_make), "_replace": _replace, "_asdict": _asdict,
                "__repr__": __repr__, "__getnewargs__": __getnewargs__}

    def _make_class(name, ns):  # noqa: ANN001, ANN202
        fields = tuple(ns.get("__annotations__", {}))
        bad = next((f for f in fields if f.startswith("_")), None)
        if bad is not None:  # what collections.namedtuple refuses: a field would shadow _fields, _make, ...
            raise ValueError(f"{name}: field names cannot start with an underscore: {bad!r}")
        defaults = {f: ns[f] for f in fields if f in ns}
        if defaults and any(f not in ns for f in fields[len(fields) - len(defaults):]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        body = dict(_METHODS, __slots__=(), _fields=fields, _field_defaults=defaults, __match_args__=fields,
                    __module__=ns.get("__module__"), __qualname__=ns.get("__qualname__", name),
                    __doc__=ns.get("__doc__") or f"{name}({', '.join(fields)})")
        for index, field in enumerate(fields):
            body[field] = _tuplegetter(index, f"Alias for field number {index}")
        for key, value in ns.items():
            if key in _RESERVED:
                raise AttributeError(f"cannot overwrite NamedTuple attribute {key}")
            if key not in _SKIPPED and key not in fields:
                body[key] = value
        if "__eq__" in ns and "__hash__" not in ns:  # a class body would set __hash__ = None; typing keeps tuple's
            body["__hash__"] = tuple.__hash__
        return type(name, (tuple,), body)

    class _Meta(type):
        def __new__(mcls, name, bases, ns):  # noqa: ANN001, ANN204, N804
            if ns.get("__module__") == __name__:  # the base class itself
                return super().__new__(mcls, name, bases, ns)
            return _make_class(name, ns)

    class NamedTuple(metaclass=_Meta):
        """Base of a record: ``class Name(NamedTuple): field: type = default``."""

__all__ = ["NamedTuple", "TYPE_CHECKING"]
