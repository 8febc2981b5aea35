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


def _units(char: str, encoding: str) -> int:
    code = ord(char)
    if encoding == UTF16:
        return 2 if code > 0xFFFF else 1
    if encoding == UTF8:
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 1


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
        if self.encoding == UTF32:
            return line, offset - start
        return line, sum(_units(c, self.encoding) for c in self.text[start:offset])

    def offset(self, line: int, character: int) -> int:
        """The offset of an LSP position; past the end of its line is the end of the line (as LSP says)."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start, end = self.starts[line], self._line_end(line)
        if self.encoding == UTF32:
            return min(start + max(character, 0), end)
        counted = 0
        for index in range(start, end):
            if counted >= character:
                return index
            counted += _units(self.text[index], self.encoding)
        return end

    def line_text(self, line: int) -> str:
        if not 0 <= line < len(self.starts):
            return ""
        return self.text[self.starts[line]:self._line_end(line)]
