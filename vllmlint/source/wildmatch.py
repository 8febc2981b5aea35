"""Globs with git's wildmatch rules (git's wildmatch.c with WM_PATHNAME, as `.gitignore` uses them), matched in
time polynomial in the pattern and the path, never exponential: `.gitignore` files and the configuration's
`exclude` / `per-file-ignores` come with the linted tree, and a backtracking matcher (a regular expression of
`[^/]*a[^/]*a...`) takes minutes on `*a*a*a*a*a*a*a*a*b` against a long name.

The rules (git's Documentation/gitignore.txt, "PATTERN FORMAT", and wildmatch.c):
- `*` matches any run of characters but `/`; `?` one character but `/`; `[...]` one character of a set (`!` or `^`
  negates it, `a-z` ranges, `[:alpha:]` classes, `\\` escapes; never `/`); `\\x` is `x`.
- `**` as a whole path component (`**/x`, `x/**/y`, `x/**`) matches any number of components (`x/**` at least
  one); elsewhere (`a**b`) it is `*`.
- A malformed pattern (an unclosed `[`, a trailing `\\`, an unknown `[:class:]`) never matches, as git's
  WM_ABORT_ALL.
- Matching is on UTF-8 bytes, as git's: `?` is one byte.

How: a component without `**` is literal chunks between stars; each chunk has a fixed length, and the earliest
place each middle chunk fits is always as good as any later one, so a component is decided by one regular
expression search per chunk. Components are matched against path components the same way, `**` playing the star:
the classic greedy algorithm that backtracks only to the last star. So at most (path components x pattern
components) component matches, each linear in the name.
"""
from __future__ import annotations

import re

_CLASSES = {
    "alnum": bytes.isalnum, "alpha": bytes.isalpha, "digit": bytes.isdigit, "lower": bytes.islower,
    "upper": bytes.isupper, "space": bytes.isspace, "xdigit": lambda b: b in b"0123456789abcdefABCDEF",
    "blank": lambda b: b in b" \t", "cntrl": lambda b: b[0] < 32 or b[0] == 127,
    "graph": lambda b: 33 <= b[0] <= 126, "print": lambda b: 32 <= b[0] <= 126,
    "punct": lambda b: 33 <= b[0] <= 126 and not b.isalnum(),
}
_SLASH = 0x2F


class _Malformed(Exception):
    """A pattern git would abort on: it matches nothing."""


class _Star:
    """`**` as a whole component: any number of path components (none included)."""


DSTAR = _Star()


class Component:
    """One path component of a pattern, without `**`: chunks of fixed length between stars."""

    __slots__ = ("chunks", "lengths", "stars")

    def __init__(self, chunks: list[str], lengths: list[int], stars: bool):
        self.chunks = [re.compile(c.encode("latin-1"), re.S) for c in chunks]  # the byte regex of each chunk
        self.lengths = lengths
        self.stars = stars  # chunks[0] * chunks[1] * ... * chunks[-1]; without stars, chunks[0] only

    def match(self, name: bytes) -> bool:
        chunks, lengths = self.chunks, self.lengths
        if not self.stars:
            return chunks[0].fullmatch(name) is not None
        end = len(name) - lengths[-1]
        if end < lengths[0] or chunks[0].match(name) is None or chunks[-1].fullmatch(name, end) is None:
            return False
        pos = lengths[0]
        for chunk in chunks[1:-1]:
            found = chunk.search(name, pos, end)
            if found is None:
                return False
            pos = found.end()
        return True


def _byte(value: int) -> str:
    """A regular expression (as latin-1 text, compiled as bytes) for one byte."""
    return re.escape(chr(value))


def _bracket(pattern: bytes, i: int) -> tuple[str, int]:
    """The set at pattern[i] == `[`: its regex and the index after its `]` (wildmatch.c's `case '['`)."""
    i += 1
    if i < len(pattern) and pattern[i] == ord("^"):
        negated = True
        i += 1
    elif i < len(pattern) and pattern[i] == ord("!"):
        negated = True
        i += 1
    else:
        negated = False
    members: set[int] = set()
    previous = 0
    first = True
    while True:
        if i >= len(pattern):
            raise _Malformed
        ch = pattern[i]
        if ch == ord("]") and not first:
            break
        first = False
        if ch == ord("\\"):
            i += 1
            if i >= len(pattern):
                raise _Malformed
            ch = pattern[i]
            members.add(ch)
        elif ch == ord("-") and previous and i + 1 < len(pattern) and pattern[i + 1] != ord("]"):
            i += 1
            high = pattern[i]
            if high == ord("\\"):
                i += 1
                if i >= len(pattern):
                    raise _Malformed
                high = pattern[i]
            members.update(range(previous, high + 1))
            ch = 0  # a range ends: the next `-` is a character
        elif ch == ord("[") and i + 1 < len(pattern) and pattern[i + 1] == ord(":"):
            close = pattern.find(b"]", i + 2)
            if close == -1:
                raise _Malformed
            if close - (i + 2) < 1 or pattern[close - 1] != ord(":"):
                members.add(ch)  # no `:]`: a plain `[`
            else:
                test = _CLASSES.get(pattern[i + 2:close - 1].decode("latin-1"))
                if test is None:
                    raise _Malformed
                members.update(b for b in range(256) if test(bytes([b])))
                i = close
                ch = 0
        else:
            members.add(ch)
        previous = ch
        i += 1
    chosen = (set(range(256)) - members) if negated else members
    chosen.discard(_SLASH)
    if not chosen:
        return "(?!)", i + 1
    return "[" + "".join(re.escape(chr(b)) for b in sorted(chosen)) + "]", i + 1


def _component(text: bytes) -> Component:
    chunks: list[str] = []
    lengths: list[int] = []
    current: list[str] = []
    stars = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == ord("*"):
            while i < len(text) and text[i] == ord("*"):
                i += 1
            chunks.append("".join(current))
            lengths.append(len(current))
            current = []
            stars = True
            continue
        if ch == ord("?"):
            current.append("[^/]")
        elif ch == ord("["):
            regex, i = _bracket(text, i)
            current.append(regex)
            continue
        elif ch == ord("\\"):
            i += 1
            if i >= len(text):
                raise _Malformed
            current.append(_byte(text[i]))
        else:
            current.append(_byte(ch))
        i += 1
    chunks.append("".join(current))
    lengths.append(len(current))
    return Component(chunks, lengths, stars)


def _split(pattern: bytes) -> list[bytes]:
    """The pattern's components, split at each `/` outside brackets and escapes."""
    parts: list[bytes] = []
    start = i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == ord("\\"):
            i += 2
            continue
        if ch == ord("["):
            _, i = _bracket(pattern, i)
            continue
        if ch == ord("/"):
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


class Glob:
    """A compiled wildmatch pattern; `match(path)` on a `/`-separated path (str)."""

    __slots__ = ("parts", "malformed")

    def __init__(self, pattern: str, parts: list | None = None):
        self.malformed = False
        self.parts: list = []
        if parts is not None:
            self.parts = parts
            return
        try:
            self.parts = compile_parts(pattern)
        except _Malformed:
            self.malformed = True

    def match(self, path: str) -> bool:
        if self.malformed:
            return False
        return match_parts(self.parts, path.encode("utf-8", "surrogateescape").split(b"/"))


def compile_parts(pattern: str) -> list:
    """A pattern as components: `DSTAR` or a `Component`. A trailing `**` after other components (`x/**`) needs
    one component at least: it becomes `*` then `DSTAR`. _Malformed for a pattern that matches nothing."""
    raw = _split(pattern.encode("utf-8", "surrogateescape"))
    parts: list = []
    for index, text in enumerate(raw):
        if len(text) >= 2 and text.strip(b"*") == b"":
            if index == len(raw) - 1 and index > 0:
                parts.append(_component(b"*"))
            if not parts or parts[-1] is not DSTAR:
                parts.append(DSTAR)
        else:
            parts.append(_component(text))
    return parts


def match_parts(parts: list, names: list[bytes]) -> bool:
    """Components against path components: greedy, backtracking to the last `DSTAR` only."""
    i = j = 0
    star_i, star_j = -1, 0
    count, total = len(parts), len(names)
    while j < total:
        if i < count and parts[i] is DSTAR:
            star_i, star_j = i, j
            i += 1
        elif i < count and parts[i].match(names[j]):
            i += 1
            j += 1
        elif star_i >= 0:
            i = star_i + 1
            star_j += 1
            j = star_j
        else:
            return False
    while i < count and parts[i] is DSTAR:
        i += 1
    return i == count


# --- .gitignore ----------------------------------------------------------------------------------
class _Rule:
    __slots__ = ("glob", "negated", "dir_only", "basename")

    def __init__(self, glob: Glob, negated: bool, dir_only: bool, basename: bool):
        self.glob, self.negated, self.dir_only, self.basename = glob, negated, dir_only, basename


def _trim(line: str) -> str:
    """Trailing spaces go unless escaped with a backslash (git's trim_trailing_spaces)."""
    end = len(line)
    while end and line[end - 1] == " ":
        backslashes = 0
        k = end - 2
        while k >= 0 and line[k] == "\\":
            backslashes += 1
            k -= 1
        if backslashes % 2:
            break
        end -= 1
    return line[:end]


class IgnoreRules:
    """The patterns of one ignore file (git's dir.c: add_pattern, match_basename, match_pathname)."""

    def __init__(self, lines: list[str]):
        self.rules: list[_Rule] = []
        for number, line in enumerate(lines):
            if number == 0 and line.startswith("\ufeff"):
                line = line[1:]
            line = _trim(line)
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            if negated:
                line = line[1:]
            dir_only = line.endswith("/")
            if dir_only:
                line = line[:-1]
            if not line:
                continue
            basename = "/" not in line
            self.rules.append(_Rule(Glob(line[1:] if line.startswith("/") else line), negated, dir_only, basename))

    def __bool__(self) -> bool:
        return bool(self.rules)

    def decide(self, relative: str, is_dir: bool) -> bool | None:
        """True: the last pattern matching `relative` (a path below the file's folder) ignores it; False: it is a
        negation; None: no pattern matches."""
        names = relative.encode("utf-8", "surrogateescape").split(b"/")
        last = names[-1:]
        for rule in reversed(self.rules):
            if (rule.dir_only and not is_dir) or rule.glob.malformed:
                continue
            parts = rule.glob.parts
            if rule.basename:
                matched = parts[0].match(last[0]) if len(parts) == 1 and parts[0] is not DSTAR else match_parts(parts, last)
            else:
                matched = match_parts(parts, names)
            if matched:
                return not rule.negated
        return None


# --- vllmlint's own globs (`exclude`, `per-file-ignores`) ----------------------------------------
_GLOBS: dict[str, Glob] = {}


def path_glob(pattern: str) -> Glob:
    """A configuration glob: gitignore-style, on a display path. A pattern without a slash matches a name at any
    depth, one with a slash (not only at the end) from the top; a trailing slash matches everything below a
    folder; a match of a folder matches every path below it."""
    glob = _GLOBS.get(pattern)
    if glob is not None:
        return glob
    text = pattern.strip()
    anchored = "/" in text.rstrip("/")
    if text.endswith("/"):
        text += "**"
    text = text.lstrip("/")
    try:
        parts = compile_parts(text) if text else []
        if not anchored and (not parts or parts[0] is not DSTAR):
            parts.insert(0, DSTAR)
        if not parts or parts[-1] is not DSTAR:
            parts.append(DSTAR)
        glob = Glob(pattern, parts)
    except _Malformed:
        glob = Glob(pattern, [])
        glob.malformed = True
    if len(_GLOBS) < 4096:
        _GLOBS[pattern] = glob
    return glob


def path_matches(pattern: str, path: str) -> bool:
    """Gitignore-style globs on forward-slash paths (`path_glob`): `*` within a folder, `**` across folders, a
    pattern without a slash matches a name at any depth, a trailing slash matches everything below a folder.
    Polynomial time whatever the pattern (`*a*a*a*a*b` included)."""
    path = path.replace("\\", "/")
    return path_glob(pattern).match(path[2:] if path.startswith("./") else path)
