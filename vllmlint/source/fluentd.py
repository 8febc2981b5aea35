"""Fluentd configuration as positioned sections: the one reader of fluentd's language (a ConfigMap's
`fluent.conf` mounted into a fluentd DaemonSet).

Fluentd's syntax (https://docs.fluentd.org/configuration/config-file): a section opens with `<name arg>` on its
own line and closes with `</name>`; inside, one parameter per line, `key value` (the value is the rest of the
line, quotes kept as written); `#` at the start of a line is a comment. Sections nest (`<source>` holds
`<parse>`). Offsets are into the text given; nothing is evaluated (`@include` and embedded Ruby stay as written).
"""
from __future__ import annotations

from vllmlint.records import dataclass, field

MAX_LINES = 20_000  # a hostile file cannot make the reader do unbounded work
MAX_DEPTH = 32


@dataclass(eq=False)
class Param:
    key: str
    value: str
    start: int  # offset of the key
    value_start: int  # offset of the value
    end: int


@dataclass(eq=False)
class Section:
    name: str  # `source`, `parse`, `match`, `filter` ...
    arg: str  # `<match kubernetes.**>`: "kubernetes.**"
    start: int
    end: int  # end of the opening tag
    params: list[Param] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)

    def param(self, key: str) -> Param | None:
        """The last `key value` line of this section itself (fluentd keeps the last)."""
        found = None
        for param in self.params:
            if param.key == key:
                found = param
        return found


def sections(text: str) -> list[Section]:
    """The top-level sections of a fluentd configuration; [] for text that is not one (no `<...>` section)."""
    if "<" not in text:
        return []
    root = Section("", "", 0, 0)
    stack = [root]
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True)):
        if number >= MAX_LINES:
            break
        start = offset
        offset += len(line)
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        lead = start + (len(line) - len(line.lstrip()))
        if stripped.startswith("</"):
            name = stripped[2:].rstrip(">").strip()
            if len(stack) > 1 and stack[-1].name == name:
                stack.pop()
            continue
        if stripped.startswith("<") and stripped.endswith(">"):
            inner = stripped[1:-1].strip()
            name, _, arg = inner.partition(" ")
            section = Section(name, arg.strip(), lead, lead + len(stripped))
            stack[-1].sections.append(section)
            if len(stack) < MAX_DEPTH:
                stack.append(section)
            continue
        key, _, value = stripped.partition(" ")
        value = value.strip()
        value_start = lead + len(key) + (len(stripped[len(key):]) - len(stripped[len(key):].lstrip()))
        stack[-1].params.append(Param(key, value, lead, value_start, value_start + len(value)))
    return root.sections
