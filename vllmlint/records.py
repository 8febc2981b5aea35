"""`dataclass` and `field` for vllmlint's own classes: the standard library's, minus the two costs a
one-file run pays at start-up for nothing.

Creating a dataclass is most of what importing vllmlint costs (~110 classes: 60 ms of a 140 ms import
on the benchmark machine, measured 2026-12-01). Two parts of that are never used by a run: the
`__repr__` compiled for each class (a quarter of it: a generic one below prints the same text, and only
debugging and test failures ask for it), and the `__doc__` built with `inspect.signature` for a class
without a docstring (the class name stands in). `__init__`, `__eq__`, `__hash__`, frozen classes,
`fields()` and `replace()` are the standard library's own. Type checkers see the standard library's
decorator itself.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass, field as field
else:
    from dataclasses import field

    def dataclass(cls=None, /, **options):
        """`dataclasses.dataclass`, with `repr_of` as the `__repr__` and a plain `__doc__` when missing."""
        def wrap(cls):
            if not cls.__dict__.get("__doc__"):
                cls.__doc__ = cls.__name__
            generic = options.get("repr", True)
            made = dataclasses.dataclass(cls, **{**options, "repr": False})
            if generic and "__repr__" not in cls.__dict__:
                made.__repr__ = repr_of
            return made

        return wrap if cls is None else wrap(cls)

_IN_REPR: set[int] = set()  # objects being printed: a cycle prints `...`, as the standard library's repr does


def repr_of(self: Any) -> str:
    """`Class(a=1, b='x')`: what the standard library's generated `__repr__` prints (qualified class name,
    the fields with `repr=True` in order, each as `repr()`), computed when asked instead of compiled per class."""
    key = id(self)
    if key in _IN_REPR:
        return "..."
    _IN_REPR.add(key)
    try:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
    finally:
        _IN_REPR.discard(key)
    return f"{type(self).__qualname__}({shown})"


__all__ = ["dataclass", "field", "repr_of"]
