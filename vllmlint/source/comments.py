"""Where the comments of a YAML file are, read from the parse the model was built from (no second parse).

libyaml's composer does not report comments, but the model knows every scalar's span. YAML 1.2, 6.6
("Comments"): a comment starts with `#`, must be separated from other tokens by white space, and
cannot occur inside scalars. So a `#` at line start or after a blank, outside every scalar's
[start, end), starts a comment that runs to the end of its line. A literal block scalar (`|`) is not
read here: it usually holds a shell script, whose comments the shell reader finds
(`vllmlint.source.shell.read_script`).

The engine records each parse (`record_parse`); the index is built then, once per file, from the
documents already composed. Only comments that mention `vllmlint` are ever read (suppressions), so a
file whose text does not contain it gets no index, and its nodes are not walked. Past a syntax
error the parse has no scalars to go by: there a `#` counts when it is at line start or after a blank
with no quote left open on its line.
"""
from __future__ import annotations

import weakref
from bisect import bisect_left, bisect_right
from vllmlint.records import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vllmlint.source.yamlmodel import Document, SourceFile

MARKER = "vllmlint"  # the word every directive holds: files without it need no comment index


@dataclass(frozen=True)
class Comment:
    start: int  # offset of the `#`
    end: int  # offset of the end of its line (before LF or CRLF)


@dataclass
class YamlComments:
    """The comments of one file (or of the YAML blocks of a Markdown file), in order of offset."""

    comments: list[Comment] = field(default_factory=list)
    literal_blocks: list[tuple[int, int]] = field(default_factory=list)  # (start, end) of each `|` scalar
    _starts: list[int] | None = field(default=None, repr=False)

    def in_range(self, start: int, end: int) -> list[Comment]:
        """The comments that start in [start, end)."""
        starts = [c.start for c in self.comments] if self._starts is None else self._starts
        self._starts = starts
        return self.comments[bisect_left(starts, start):bisect_left(starts, end)]

    def literal_blocks_in(self, start: int, end: int) -> list[tuple[int, int]]:
        """The literal block scalars that start in [start, end)."""
        return self.literal_blocks[bisect_left(self.literal_blocks, (start,)):bisect_left(self.literal_blocks, (end,))]


# One index per SourceFile, held weakly: it holds offsets only, so it never keeps its file alive.
_INDEX: weakref.WeakKeyDictionary[SourceFile, YamlComments] = weakref.WeakKeyDictionary()


def record_parse(source: SourceFile, documents: list[Document], error_index: int | None,
                 region: tuple[int, int] | None = None) -> None:
    """Index the comments of `source` from its parse: `documents` composed from text[region] (all of it
    by default: a Markdown file's YAML blocks are recorded one by one, each with its region), and where
    a syntax error stopped the parse (None: it did not)."""
    text = source.text
    start, end = region if region is not None else (0, len(text))
    if text.find(MARKER, start, end) == -1:
        return  # no directive can be here: no index, no walk (nearly every file)
    index = _INDEX.get(source)
    if index is None:
        index = _INDEX[source] = YamlComments()
    spans = _scalar_spans(documents)
    starts = [s for s, _, _ in spans]
    parsed_until = end + 1
    if error_index is not None:
        parsed_until = min(error_index, max((e for _, e, _ in spans), default=start))
    # A block scalar's span runs over the blank lines after it: in a Markdown block, past the closing fence.
    index.literal_blocks.extend((s, min(e, end)) for s, e, style in spans if style == "|")
    index.literal_blocks.sort()
    pos = text.find("#", start, end)
    last_end = -1
    after_error = _AfterError(text, start)
    while pos != -1:
        if pos >= last_end and _starts_comment(text, pos, start, spans, starts, parsed_until, after_error):
            stop = text.find("\n", pos, end)
            stop = end if stop == -1 else stop
            last_end = stop - 1 if stop > pos and text[stop - 1] == "\r" else stop
            index.comments.append(Comment(pos, last_end))
        pos = text.find("#", pos + 1, end)
    index.comments.sort(key=lambda c: c.start)
    index._starts = None


def yaml_comments(source: SourceFile) -> YamlComments | None:
    """The comment index recorded for `source`; None when its YAML was never parsed, or when the text
    read as YAML never mentions `vllmlint` (then it holds no directive)."""
    return _INDEX.get(source)


def _scalar_spans(documents: list[Document]) -> list[tuple[int, int, str]]:
    """(start, end, style) of every scalar of the documents, by start offset."""
    from vllmlint.source.yamlmodel import Scalar, walk

    spans = [(node.start, node.end, node.style or "") for document in documents for node in walk(document.root)
             if isinstance(node, Scalar)]
    spans.sort()
    return spans


def _starts_comment(text: str, pos: int, start: int, spans: list[tuple[int, int, str]], starts: list[int],
                    parsed_until: int, after_error: _AfterError | None = None) -> bool:
    if pos > start and text[pos - 1] not in " \t\r\n":
        return False  # `a#b`: part of a token
    if pos >= parsed_until:
        return after_error(pos) if after_error is not None else _after_error_heuristic(text, pos, start)
    i = bisect_right(starts, pos) - 1
    return not (i >= 0 and pos < spans[i][1])


class _AfterError:
    """`_after_error_heuristic` for `#` positions asked in increasing order: each line is scanned once, from
    where the last question stopped (a long line with a quote left open and many `#` was scanned from its
    start for each)."""

    def __init__(self, text: str, start: int):
        self.text, self.start = text, start
        self.line_start = self.next = start
        self.quote: str | None = None
        self.found = False

    def __call__(self, pos: int) -> bool:
        text = self.text
        if pos < self.next:
            return _after_error_heuristic(text, pos, self.start)
        newline = text.rfind("\n", self.next, pos)
        if newline != -1:  # a line of its own: start again there
            self.line_start = self.next = newline + 1
            self.quote, self.found = None, False
        line_start, quote = self.line_start, self.quote
        for i in range(self.next, pos + 1):
            ch = text[i]
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "'\"" and (i == line_start or text[i - 1] in " \t[{,:-"):
                quote = ch
            elif ch == "#" and (i == line_start or text[i - 1] in " \t"):
                self.found = True
        self.quote, self.next = quote, pos + 1
        return self.found


def _after_error_heuristic(text: str, pos: int, start: int) -> bool:
    """Past a syntax error: a `#` at line start or after a blank, with no quote left open on its line."""
    line_start = max(text.rfind("\n", 0, pos) + 1, start)
    quote = None
    for i in range(line_start, pos + 1):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"" and (i == line_start or text[i - 1] in " \t[{,:-"):
            quote = ch
        elif ch == "#" and (i == line_start or text[i - 1] in " \t"):
            return True
    return False


def template_action(text: str, documents: list[Document] | None, pattern) -> int | None:
    """Offset of the first template action (a match of `pattern`) that makes `text` a template, or None.
    `documents`: the parse of a file that parses (None: it does not, and any action counts). In a file that
    parses, an action in a comment (`# rendered from {{ .Values.image }}`) or in a block scalar (an alert
    template in a ConfigMap) is text, not template structure. One in a quoted scalar still makes a template:
    `"--max-model-len", "{{ .Values.maxLen }}"` is a chart's value, and linting it would report it as invalid. Each action costs a bisection and a look at
    its own line: linear in the file, whatever the number of actions and block scalars."""
    matches = pattern.finditer(text)
    first = next(matches, None)
    if first is None:
        return None
    if documents is None:
        return first.start()
    spans = _scalar_spans(documents)
    starts = [s for s, _, _ in spans]
    blocks = [(s, e) for s, e, style in spans if style in ("|", ">")]
    block_starts = [s for s, _ in blocks]
    for match in (first, *matches):
        pos = match.start()
        i = bisect_right(block_starts, pos) - 1
        if i >= 0 and pos < blocks[i][1]:
            continue
        if _in_comment(text, pos, spans, starts):
            continue
        return pos
    return None


def _in_comment(text: str, pos: int, spans: list[tuple[int, int, str]], starts: list[int]) -> bool:
    """A `#` that starts a comment comes before `pos` on its line."""
    line_start = text.rfind("\n", 0, pos) + 1
    hash_at = text.find("#", line_start, pos)
    while hash_at != -1:
        if _starts_comment(text, hash_at, 0, spans, starts, len(text) + 1):
            return True
        hash_at = text.find("#", hash_at + 1, pos)
    return False

