"""Offsets (the engine's: code points into the text) to LSP positions and back, in the position encoding
negotiated with the client (LSP 3.17 `positionEncoding`: UTF-16 unless the client offers another).

LSP counts a position's `character` in code units of the encoding: an emoji is 2 UTF-16 units and 4 UTF-8
bytes, a CJK character 1 UTF-16 unit and 3 UTF-8 bytes. Lines end at LF, CRLF or a lone CR, as LSP says
(not at the other breaks `str.splitlines` knows). Nothing here imports pygls.
"""
from __future__ import annotations

import re
from bisect import bisect_right

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
_BREAK = re.compile(r"\r\n|\r|\n")


def units(segment: str, encoding: str) -> int:
    """Code units of `segment` in the encoding (one C-level pass: no loop per character in Python)."""
    if encoding == UTF32 or segment.isascii():
        return len(segment)
    if encoding == UTF16:
        return len(segment.encode("utf-16-le", "surrogatepass")) // 2
    return len(segment.encode("utf-8", "surrogatepass"))


def code_points(segment: str, count: int, encoding: str) -> int:
    """How many code points of `segment` its first `count` code units hold (all of it when it is shorter). A
    position inside a character (between the halves of a surrogate pair, inside a UTF-8 sequence) is before it."""
    count = max(count, 0)
    if encoding == UTF32 or segment.isascii():
        return min(count, len(segment))
    segment = segment[:count]  # a code point is at least one code unit
    if encoding == UTF16:
        decoded = segment.encode("utf-16-le", "surrogatepass")[:2 * count].decode("utf-16-le", "surrogatepass")
        fit = len(decoded)
        if fit and "\ud800" <= decoded[-1] <= "\udbff" and segment[fit - 1] > "\uffff":
            fit -= 1  # the count ends between the halves of a pair: before that character
        return fit
    data = segment.encode("utf-8", "surrogatepass")[:count]
    lead = len(data)
    while lead > 0 and data[lead - 1] & 0xC0 == 0x80:  # back to the last sequence's first byte
        lead -= 1
    if lead > 0 and data[lead - 1] >= 0xC0:
        first = data[lead - 1]
        size = 2 if first < 0xE0 else 3 if first < 0xF0 else 4
        if len(data) - (lead - 1) < size:
            data = data[:lead - 1]  # cut inside that character: before it
    return len(data.decode("utf-8", "surrogatepass"))


def line_start(text: str, line: int) -> int | None:
    """The offset where line `line` starts, or None past the last line. Breaks are counted with `str.count` over
    chunks, then found by the regex in one chunk only: C-level work, not one Python step per line or per
    character, whatever the length of the text or of its lines."""
    if line < 0:
        return None
    start, seen, size = 0, 0, len(text)
    while line > seen:
        if start >= size:
            return None
        stop = min(start + _CHUNK, size)
        if stop < size and text[stop - 1] == "\r" and text[stop] == "\n":
            stop += 1  # keep a CRLF in one chunk
        breaks = text.count("\n", start, stop) + text.count("\r", start, stop) - text.count("\r\n", start, stop)
        if seen + breaks < line:
            seen, start = seen + breaks, stop
            continue
        for match in _BREAK.finditer(text, start, stop):
            seen += 1
            if seen == line:
                start = match.end()
                break
    return start


_CHUNK = 1 << 16


def offset_at(text: str, line: int, character: int, encoding: str) -> int:
    """The offset of an LSP position in `text` without indexing every line (an incremental change of an open
    document); past the end of its line is the end of the line, past the last line the end of the text. The
    work is bounded by the position: its line is found by counting, and only `character` code points of it
    are read."""
    start = line_start(text, line)
    if start is None:
        return 0 if line < 0 else len(text)
    stop = min(start + max(character, 0), len(text))
    for separator in ("\n", "\r"):
        found = text.find(separator, start, stop)
        if found >= 0:
            stop = found
    return start + code_points(text[start:stop], character, encoding)


def choose_encoding(offered: list[str] | None) -> str:
    """UTF-8 when the client offers it (the cheapest for the client to map), else UTF-16, which every
    client must support."""
    return UTF8 if offered and UTF8 in offered else UTF16


class LineIndex:
    """Line starts of one text, for converting offsets and positions."""

    def __init__(self, text: str, encoding: str = UTF16):
        self.text = text
        self.encoding = encoding
        self.starts = [0] + [m.end() for m in _BREAK.finditer(text)]
        self.ascii = text.isascii()

    def _line_end(self, line: int) -> int:
        """Offset where line `line`'s content ends (before its line break)."""
        if line + 1 < len(self.starts):
            end = self.starts[line + 1]
            return end - 2 if self.text[end - 2:end] == "\r\n" else end - 1
        return len(self.text)

    def position(self, offset: int) -> tuple[int, int]:
        """(line, character) of `offset`, both 0-based, character in the encoding's code units."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        if self.ascii or self.encoding == UTF32:
            return line, offset - start
        return line, units(self.text[start:offset], self.encoding)

    def offset(self, line: int, character: int) -> int:
        """The offset of an LSP position; past the end of its line is the end of the line (as LSP says)."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start, end = self.starts[line], self._line_end(line)
        if self.ascii:
            return min(start + max(character, 0), end)
        return start + code_points(self.text[start:min(end, start + max(character, 0))], character, self.encoding)

    def line_text(self, line: int) -> str:
        if not 0 <= line < len(self.starts):
            return ""
        return self.text[self.starts[line]:self._line_end(line)]
