"""Fenced code blocks of Markdown files, as text that keeps the Markdown file's positions.

Each block becomes a copy of the whole file in which everything outside the block is blanked (newlines
kept), so the YAML and shell readers report lines and columns of the Markdown file itself.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$", re.M)
YAML_LANGS = {"yaml", "yml"}
SHELL_LANGS = {"bash", "sh", "shell", "console", "zsh", "shell-session"}


@dataclass
class Block:
    language: str  # "yaml" or "shell"
    text: str  # the whole file, blanked outside the block
    start_line: int  # 1-based line of the opening fence
    first_offset: int  # offset of the block's first content character
    end_offset: int  # offset just past the block's content (where the closing fence starts)


def _blank(text: str, start: int, end: int) -> str:
    """`text` with every character outside [start, end) turned into a space, newlines kept."""
    def spaces(part: str) -> str:
        return re.sub(r"[^\n]", " ", part)

    return spaces(text[:start]) + text[start:end] + spaces(text[end:])


@dataclass
class Fence:
    """A fenced code block: where its fences and its content are, and its language (info string)."""

    opening: int  # offset of the opening fence line (its indentation included)
    content_start: int  # offset of the first content character (the line after the opening fence)
    content_end: int  # offset where the closing fence line starts (the end of the text if unclosed)
    closing: int  # offset just past the closing fence (the end of the text if unclosed)
    language: str  # first word of the info string, lower case ("" when none)


def fences(text: str) -> list[Fence]:
    """Every fenced code block of a Markdown text, in order (the one fence finder of vllmlint)."""
    found: list[Fence] = []
    pos = 0
    while True:
        opening = _FENCE.search(text, pos)
        if not opening:
            return found
        fence = opening.group("fence")
        info = opening.group("info").strip().split()
        content_start = opening.end() + 1
        closing = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$", re.M)
        close = closing.search(text, content_start)
        content_end = close.start() if close else len(text)
        pos = close.end() if close else len(text)
        found.append(Fence(opening.start(), content_start, content_end, pos, info[0].lower() if info else ""))
        if pos >= len(text):
            return found


def fenced_blocks(text: str) -> list[Block]:
    """The YAML and shell blocks of a Markdown text, each as the whole text blanked outside it."""
    blocks = []
    for fence in fences(text):
        content_start, content_end, language = fence.content_start, fence.content_end, fence.language
        if content_start > len(text):
            break
        if language in YAML_LANGS or language in SHELL_LANGS:
            body = _blank(text, content_start, content_end)
            if language == "console" or language == "shell-session":
                body = _console_commands(body, content_start, content_end)
            kind = "yaml" if language in YAML_LANGS else "shell"
            blocks.append(Block(kind, body, text.count("\n", 0, fence.opening) + 1, content_start, content_end))
    return blocks


def _console_commands(body: str, start: int, end: int) -> str:
    """Keep only the commands of a console transcript: `$ ` lines (prompt blanked) and their continuations."""
    lines = body[start:end].split("\n")
    kept = []
    continuing = False
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith("$ "):
            prompt = line.index("$")
            kept.append(" " * (prompt + 2) + line[prompt + 2:])
            continuing = line.rstrip().endswith("\\")
        elif continuing:
            kept.append(line)
            continuing = line.rstrip().endswith("\\")
        else:
            kept.append(" " * len(line))
    return body[:start] + "\n".join(kept) + body[end:]
