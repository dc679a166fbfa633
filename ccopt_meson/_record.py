"""The typed records of every stage, without importing ``typing`` at run time.

A cached helper run is mostly interpreter start-up and imports: ``typing`` alone costs about as
much as the run's own work (it builds its generic aliases at import), and a ``typing.NamedTuple``
class type-checks each annotation as it is made.  A type checker sees ``typing.NamedTuple`` here;
at run time the same class statement makes the same ``collections.namedtuple`` (fields from the
annotations, in order; defaults from the class attributes; methods, properties and docstring
kept), as ``typing.NamedTuple`` does, without evaluating the annotations.

Modules write ``TYPE_CHECKING = False`` instead of importing it from ``typing``: type checkers
treat that name as true whatever its value.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    import collections

    # what typing.NamedTuple also refuses to take from a class body (names a namedtuple defines)
    _RESERVED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
                           "_make", "_replace", "_asdict", "_source"})
    _SKIPPED = frozenset({"__module__", "__qualname__", "__annotations__", "__dict__", "__weakref__"})

    def _make(name, bases, ns):  # noqa: ANN001, ANN202
        fields = list(ns.get("__annotations__", {}))
        defaults = [ns[f] for f in fields if f in ns]
        if defaults and any(f not in ns for f in fields[len(fields) - len(defaults):]):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        cls = collections.namedtuple(name, fields, defaults=defaults, module=ns.get("__module__"))
        cls.__qualname__ = ns.get("__qualname__", name)
        for key, value in ns.items():
            if key in _RESERVED:
                raise AttributeError(f"cannot overwrite NamedTuple attribute {key}")
            if key not in _SKIPPED and key not in fields:
                setattr(cls, key, value)
        return cls

    class _Meta(type):
        def __new__(mcls, name, bases, ns):  # noqa: ANN001, ANN204, N804
            if ns.get("__module__") == __name__:  # the base class itself
                return super().__new__(mcls, name, bases, ns)
            return _make(name, bases, ns)

    class NamedTuple(metaclass=_Meta):
        """Base of a record: ``class Name(NamedTuple): field: type = default``."""

__all__ = ["NamedTuple", "TYPE_CHECKING"]
