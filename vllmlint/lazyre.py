"""Regular expressions compiled at their first use, not at import.

A one-file run imports every rule and reader module, and compiling a pattern costs 0.05-0.4 ms: tens of
module-level patterns that only some inputs reach (Markdown fences, kustomize remotes, Helm templates, ...)
were milliseconds of every start. `lazy_compile` is `re.compile` for a module-level constant that such a run
may never use; a pattern every run uses stays a plain `re.compile`.
"""
from __future__ import annotations

import re
from typing import Any, cast

# What the package calls on a pattern; copied onto the lazy object at its first use, so that later calls
# cost what they cost on the compiled pattern itself.
_ATTRIBUTES = ("match", "fullmatch", "search", "finditer", "findall", "sub", "subn", "split", "scanner",
               "pattern", "flags", "groups", "groupindex")


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, compiled when one of its methods is first looked up."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))


class _LazyPattern:
    def __init__(self, pattern: str, flags: int) -> None:
        self._arguments = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only called for what the instance does not have yet
        if name.startswith("__") or name == "_arguments":
            raise AttributeError(name)
        compiled = re.compile(*self._arguments)
        for attribute in _ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_compile({self._arguments[0]!r}, {self._arguments[1]})"
