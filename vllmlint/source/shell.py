"""Split shell scripts into commands and words, keeping where each word stands.

This is a reader, not a shell: nothing is expanded or executed. A word that holds a parameter
expansion, a command substitution or a glob is marked `dynamic` and rules treat its value as unknown.
Enough of POSIX sh and bash for the lines that start servers: quotes, backslash-newline continuations,
`&&`, `||`, `;`, `|`, `&`, comments, `exec`/`env`/`nohup` prefixes and leading assignments.
"""
from __future__ import annotations

from dataclasses import dataclass

_SEPARATORS = {"&&", "||", ";", "|", "&", ";;", "|&", "(", ")", "{", "}"}
_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "!", "time"}
_PREFIX_COMMANDS = {"exec", "nohup", "command", "builtin", "sudo", "stdbuf", "setsid"}


@dataclass
class Word:
    text: str  # the word after quote removal
    start: int  # offset of the raw word in the script
    end: int
    dynamic: bool = False  # holds $VAR, $(...), `...` or a glob: its value is unknown

    def __repr__(self):
        return f"Word({self.text!r}{', dynamic' if self.dynamic else ''})"


@dataclass
class Command:
    words: list[Word]
    line_comment_before: str | None = None  # a comment line right above the command (for suppressions)


def split_commands(script: str) -> list[Command]:
    """The simple commands of `script`, in order, each a list of words with their offsets."""
    commands: list[Command] = []
    current: list[Word] = []
    pending_comment: str | None = None
    i, n = 0, len(script)

    def flush():
        nonlocal current, pending_comment
        words = _strip_prefixes(current)
        if words:
            commands.append(Command(words, pending_comment))
            pending_comment = None
        current = []

    while i < n:
        ch = script[i]
        if ch == "\\" and i + 1 < n and script[i + 1] == "\n":
            i += 2
            continue
        if ch in " \t\r":
            i += 1
            continue
        if ch == "\n":
            if current:
                flush()
            i += 1
            continue
        if ch == "#":
            end = script.find("\n", i)
            end = n if end == -1 else end
            if not current:
                pending_comment = script[i:end]
            i = end
            continue
        if ch in ";&|(){}" and not (ch in "{}" and i + 1 < n and script[i + 1] not in " \t\n;"):
            op = script[i:i + 2] if script[i:i + 2] in _SEPARATORS else ch
            flush()
            i += len(op)
            continue
        if ch in "<>" or (ch.isdigit() and _is_redirect(script, i)):
            i = _skip_redirect(script, i)
            continue
        word, i = _read_word(script, i)
        current.append(word)
    flush()
    return commands


def _is_redirect(script: str, i: int) -> bool:
    j = i
    while j < len(script) and script[j].isdigit():
        j += 1
    return j < len(script) and script[j] in "<>"


def _skip_redirect(script: str, i: int) -> int:
    n = len(script)
    while i < n and script[i].isdigit():
        i += 1
    while i < n and script[i] in "<>&|":
        i += 1
    if i < n and script[i] == "-" and script[i - 1] == "&":
        return i + 1
    while i < n and script[i] in " \t":
        i += 1
    if i < n and script[i - 1] == "&" and script[i].isdigit():
        while i < n and script[i].isdigit():
            i += 1
        return i
    if i < n and script[i] not in "\n;&|":
        _, i = _read_word(script, i)
    return i


def _read_word(script: str, i: int) -> tuple[Word, int]:
    start = i
    n = len(script)
    out: list[str] = []
    dynamic = False
    while i < n:
        ch = script[i]
        if ch in " \t\r\n;&|<>()":
            if ch in "()" and out and out[-1] == "$":
                pass
            else:
                break
        if ch == "\\":
            if i + 1 < n and script[i + 1] == "\n":
                i += 2
                continue
            if i + 1 < n:
                out.append(script[i + 1])
            i += 2
            continue
        if ch == "'":
            end = script.find("'", i + 1)
            end = n if end == -1 else end
            out.append(script[i + 1:end])
            i = end + 1
            continue
        if ch == '"':
            i += 1
            while i < n and script[i] != '"':
                c = script[i]
                if c == "\\" and i + 1 < n and script[i + 1] in '"\\$`\n':
                    if script[i + 1] != "\n":
                        out.append(script[i + 1])
                    i += 2
                    continue
                if c in "$`":
                    dynamic = True
                    if c == "$" and i + 1 < n and script[i + 1] == "(":
                        j = _matching_paren(script, i + 1)
                        out.append(script[i:j + 1])
                        i = j + 1
                        continue
                out.append(c)
                i += 1
            i += 1
            continue
        if ch == "$":
            dynamic = True
            if i + 1 < n and script[i + 1] == "(":
                j = _matching_paren(script, i + 1)
                out.append(script[i:j + 1])
                i = j + 1
                continue
            if i + 1 < n and script[i + 1] == "{":
                j = script.find("}", i)
                j = n - 1 if j == -1 else j
                out.append(script[i:j + 1])
                i = j + 1
                continue
        if ch == "`":
            dynamic = True
            j = script.find("`", i + 1)
            j = n - 1 if j == -1 else j
            out.append(script[i:j + 1])
            i = j + 1
            continue
        if ch in "*?[" and not out[-1:] == ["="]:
            dynamic = dynamic or ch == "*" or ch == "?"
        out.append(ch)
        i += 1
    return Word("".join(out), start, i, dynamic), i


def _matching_paren(script: str, i: int) -> int:
    depth = 0
    n = len(script)
    while i < n:
        ch = script[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        elif ch in "'\"":
            end = script.find(ch, i + 1)
            i = n - 1 if end == -1 else end
        i += 1
    return n - 1


def _strip_prefixes(words: list[Word]) -> list[Word]:
    """Drop leading keywords, `exec`-like wrappers, `env` and `VAR=value` assignments."""
    i = 0
    while i < len(words):
        text = words[i].text
        if text in _KEYWORDS or text in _PREFIX_COMMANDS:
            i += 1
        elif text == "env":
            i += 1
            while i < len(words) and (words[i].text.startswith("-") or "=" in words[i].text):
                i += 1
        elif _is_assignment(text) and not words[i].text.startswith("-"):
            i += 1
        else:
            break
    return words[i:]


def _is_assignment(text: str) -> bool:
    name, eq, _ = text.partition("=")
    return bool(eq) and name.replace("_", "a").isalnum() and not name[:1].isdigit()


def script_from_shell_args(argv: list[str]) -> int | None:
    """Index of the script argument when argv is `sh -c SCRIPT` / `bash -lc SCRIPT` and similar."""
    if not argv:
        return None
    program = argv[0].rsplit("/", 1)[-1]
    if program not in ("sh", "bash", "dash", "ash", "zsh", "ksh"):
        return None
    for index in range(1, len(argv)):
        arg = argv[index]
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            return index + 1 if index + 1 < len(argv) else None
        if not arg.startswith("-"):
            return None
    return None
