"""nginx configuration as positioned directives: the one reader of nginx's language (a ConfigMap's
`default.conf` mounted into an nginx gateway).

nginx's syntax (https://nginx.org/en/docs/beginners_guide.html#conf_structure): a directive is a name and
arguments ended by `;`, or by a `{ ... }` block holding more directives; `#` starts a comment to the end of
the line; arguments may be quoted with `'` or `"` (a backslash escapes the next character). Offsets are into
the text given; nothing is evaluated (variables stay as written).
"""
from __future__ import annotations

from vllmlint.records import dataclass, field

MAX_DIRECTIVES = 20_000  # a hostile file cannot make the reader do unbounded work


@dataclass(eq=False)
class Word:
    text: str  # without quotes
    start: int
    end: int


@dataclass(eq=False)
class Directive:
    name: Word
    args: list[Word]
    parents: list[Directive] = field(default_factory=list)  # enclosing blocks, outermost first
    block: bool = False  # ends with `{`

    @property
    def location(self) -> Directive | None:
        """The innermost enclosing `location` block, if any."""
        for parent in reversed(self.parents):
            if parent.name.text == "location":
                return parent
        return None


def _words(text: str):
    """(word or one of `{`, `}`, `;`) with offsets; comments skipped."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif c in "{};":
            yield Word(c, i, i + 1), True
            i += 1
        elif c in "'\"":
            start, i = i, i + 1
            chars = []
            while i < n and text[i] != c:
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                chars.append(text[i])
                i += 1
            i = min(i + 1, n)
            yield Word("".join(chars), start, i), False
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in "{};":
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                i += 1
            yield Word(text[start:i], start, i), False


def directives(text: str) -> list[Directive]:
    """Every directive of the text, in order, each with its enclosing blocks."""
    result: list[Directive] = []
    stack: list[Directive] = []
    current: list[Word] = []
    for word, punct in _words(text):
        if len(result) >= MAX_DIRECTIVES:
            break
        if not punct:
            current.append(word)
            continue
        if word.text in ";{" and current:
            directive = Directive(current[0], current[1:], list(stack), word.text == "{")
            result.append(directive)
            if directive.block:
                stack.append(directive)
        elif word.text == "}" and stack:
            stack.pop()
        current = []
    return result


__all__ = ["Word", "Directive", "directives"]
