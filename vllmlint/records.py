"""`dataclass` and `field` for vllmlint's own classes: the standard library's, made when first used.

Creating a dataclass is most of what importing vllmlint costs: the standard library compiles an `__init__`,
`__eq__` and `__repr__` per class (about 0.4 ms each: 140 classes cost 60 ms of a 140 ms import on the
benchmark machine, measured 2026-12-01), and a one-file run builds instances of fewer than half of them. So
`dataclass` only records its options; the class becomes the standard library's dataclass the first time it
is needed: its first instance (a stand-in `__init__`), or `dataclasses.fields()` / `is_dataclass()` on the
class (a stand-in `__dataclass_fields__`). From then on it is exactly what `dataclasses.dataclass` makes
(`__init__`, `__eq__`, `__hash__`, frozen classes, `fields()`, `replace()`), with two costs left out that
no run uses: the `__repr__` compiled per class (a generic one below prints the same text) and the `__doc__`
built with `inspect.signature` for a class without a docstring (the class name stands in).

An instance made without `__init__` (by `pickle`, from another process) needs its class made first:
`make_all()` makes every class still pending (the engine calls it before unpickling). Type checkers see the
standard library's decorator itself.
"""
from __future__ import annotations

import dataclasses
from _thread import RLock
from typing import TYPE_CHECKING, Any

_FIELDS = "__dataclass_fields__"
_PENDING: dict[type, dict] = {}  # class -> its dataclass options, until made
_MAKING = RLock()  # the language server's threads may meet a pending class at once

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass, field as field
else:
    from dataclasses import field

    def dataclass(cls=None, /, **options):
        """`dataclasses.dataclass`, applied when the class is first used (see the module's docstring)."""
        def wrap(cls):
            if not cls.__dict__.get("__doc__"):
                cls.__doc__ = cls.__name__
            if options.get("slots"):  # a slotted dataclass is a new class: it cannot be made later
                return _make_now(cls, options)
            _PENDING[cls] = options
            if "__init__" in cls.__dict__:  # a hand-written __init__ (init=False): the fields make it
                raise TypeError(f"{cls.__qualname__}: vllmlint.records.dataclass does not take an own __init__")
            cls.__init__ = _first_init(cls)
            setattr(cls, _FIELDS, _FirstFields(cls))
            return cls

        return wrap if cls is None else wrap(cls)


def _make_now(cls, options: dict):
    generic = options.get("repr", True)
    made = dataclasses.dataclass(cls, **{**options, "repr": False})
    if generic and "__repr__" not in cls.__dict__:
        made.__repr__ = repr_of
    return made


def make(cls: type) -> None:
    """Turn a pending class into its dataclass (its bases first); nothing for a class already made."""
    if cls not in _PENDING:
        return
    with _MAKING:
        options = _PENDING.get(cls)
        if options is None:  # another thread made it while this one waited
            return
        for base in cls.__mro__[1:]:
            make(base)
        del cls.__init__  # type: ignore[misc]  # the stand-in: dataclasses only adds an `__init__` the class does not define
        delattr(cls, _FIELDS)
        _make_now(cls, options)
        del _PENDING[cls]  # only now: a class not pending is whole (other threads do not wait for it)


def make_all() -> None:
    """Make every pending class (before instances are created without `__init__`, as `pickle` does)."""
    for cls in list(_PENDING):
        make(cls)


def _first_init(cls: type):
    def __init__(self, *args, **kwargs):
        make(cls)
        cls.__init__(self, *args, **kwargs)  # type: ignore[misc]  # the one dataclasses made

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


class _FirstFields:
    """The stand-in `__dataclass_fields__` of a pending class: reading it (`fields()`, `is_dataclass()`, a
    subclass being made) makes the class and gives its real fields."""

    def __init__(self, cls: type):
        self.cls = cls

    def __get__(self, instance, owner=None):
        make(self.cls)
        return self.cls.__dict__[_FIELDS]


_IN_REPR: set[int] = set()  # objects being printed: a cycle prints `...` where it closes, as the standard repr does


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


__all__ = ["dataclass", "field", "make", "make_all", "repr_of"]
