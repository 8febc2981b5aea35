"""The one shell reader: commands and words with where each word stands, and the comments, line
continuations and here-documents around them.

This is a reader, not a shell: nothing is expanded or executed. A word that holds a parameter
expansion, a command substitution or a glob is marked `dynamic` and rules treat its value as unknown.
Enough of POSIX sh and bash for the lines that start servers: quotes, backslash-newline continuations,
`&&`, `||`, `;`, `|`, `&`, comments, here-documents, `exec`/`env`/`nohup` prefixes and leading
assignments. Lines may end in LF or CRLF (a script saved on Windows): a backslash before CRLF continues
the command as it does before LF.

Grammar followed (POSIX "Shell Command Language", 2.3 Token Recognition, 2.7.4 Here-Document): a `#`
that starts a word starts a comment up to the end of the line; `\\` + newline is removed (a
continuation) outside single quotes; a here-document's body starts on the line after its `<<WORD`
operator and ends at a line that is exactly WORD (with `<<-`, after leading tabs). A body is read as a
nested script: here-documents in deployment scripts feed or write scripts (`bash <<EOF`, `cat > run.sh
<<'EOF'`, `cat <<EOF | bash`), and the vLLM commands inside them are checked as before. A body only
printed (`cat <<EOF` or `echo`/`printf` to the terminal: a usage text) runs nothing and is not read.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

from vllmlint.lazyre import lazy_compile
from vllmlint.records import dataclass, field

_SEPARATORS = {"&&", "||", ";", "|", "&", ";;", "|&", "(", ")", "{", "}"}
_BLANKS = lazy_compile(r"[ \t\r]*")
_BLANK_LINES = lazy_compile(r"(?:[ \t\r]*\n)*")  # whole blank lines only: a line's own blanks stay the loop's
_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "!", "time"}
_PREFIX_COMMANDS = {"exec", "nohup", "command", "builtin", "sudo", "stdbuf", "setsid"}
_PRINTERS = {"cat", "echo", "printf"}  # commands that only print a here-document fed to them
_MAX_HEREDOC_NESTING = 4  # a body inside a body inside...: deeper ones are kept as data, not read


@dataclass
class Word:
    text: str  # the word after quote removal
    start: int  # offset of the raw word in the script
    end: int
    dynamic: bool = False  # holds $VAR, $(...), `...` or a glob: its value is unknown

    def __repr__(self) -> str:
        return f"Word({self.text!r}{', dynamic' if self.dynamic else ''})"


@dataclass
class HereDoc:
    """A here-document: `<<WORD` at `operator`, its body [start, end) (the closing line excluded)."""

    delimiter: str  # WORD after quote removal
    quoted: bool  # `<<'EOF'`: the body is not expanded
    strip_tabs: bool  # `<<-EOF`: leading tabs are removed from the body and the closing line
    operator: int  # offset of `<<`
    start: int = 0  # offset of the body's first character
    end: int = 0  # offset just past the body (where the closing line starts, or the script's end)
    closed: bool = False  # False when the script ends before a closing line
    consumer: list[str] = field(default_factory=list)  # the words of the command the body is fed to
    writes_file: bool = False  # that command redirects its output to a file (`cat > run.sh <<EOF`)
    piped: bool = False  # that command's output goes on through `|` (`cat <<EOF | bash`)
    output_file: str | None = None  # the file that command's output is redirected to (`cat > f.yaml <<EOF`)

    @property
    def printed(self) -> bool:
        """The body is only printed (`cat <<EOF` to the terminal, a usage text): nothing in it runs.
        Fed to a shell, written to a file (a script run later) or piped on, it may run."""
        name = self.consumer[0].rsplit("/", 1)[-1] if self.consumer else ""
        return name in _PRINTERS and not self.writes_file and not self.piped


@dataclass
class Command:
    words: list[Word]
    line_comment_before: str | None = None  # a comment line right above the command (for suppressions)
    start: int = 0  # offset of the command's first raw word (prefixes such as `exec` included)
    end: int = 0  # offset just past its last word
    heredoc: HereDoc | None = None  # the here-document whose body holds the command, if any


@dataclass
class Comment:
    start: int  # offset of the `#`
    end: int  # offset of the end of the line (before LF or CRLF)
    text: str  # the comment, `#` included
    heredoc: HereDoc | None = None  # the here-document whose body holds the comment, if any


@dataclass
class Continuation:
    """A backslash-newline: the command goes on on the next line."""

    start: int  # offset of the backslash
    end: int  # offset just past the line break (LF or CRLF)

    @property
    def newline(self) -> int:
        """Offset of the LF ending the continued line."""
        return self.end - 1


@dataclass
class Script:
    """What the reader found in a script, each list in the order of the text."""

    commands: list[Command] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    continuations: list[Continuation] = field(default_factory=list)
    heredocs: list[HereDoc] = field(default_factory=list)
    # `VAR=value` words that set a variable rather than run a command: leading assignments of a command
    # (`HF_TOKEN=... vllm serve`), `env VAR=value` arguments, and lines that only assign.
    assignments: list[Word] = field(default_factory=list)


def split_commands(script: str) -> list[Command]:
    """The simple commands of `script`, in order, each a list of words with their offsets."""
    return read_script(script).commands


# read_script's results by (text, start, end) while a run holds the memo open (`scripts_read_once`): a container's
# script is read by the build (its commands) and again by rules (its assignments, whether vLLM runs alone, fixes):
# 3,448 reads of 693 scripts at 1,000 linked files. Every caller gets the same Script: read it, never change it.
# Outside a run (None) every read is fresh, so nothing outlives the run that made it (the language server runs for
# days); within a run it is bounded, and texts longer than _MEMO_TEXT are read each time.
_READ: dict[tuple[str, int, int | None], Script] | None = None
_MEMO_ENTRIES = 16384
_MEMO_TEXT = 1 << 16


@contextmanager
def scripts_read_once() -> Iterator[None]:
    """Within it, read_script reads each (text, region) once and hands every caller that one Script; the memo is
    dropped when the outermost scope ends."""
    global _READ
    outer = _READ
    if outer is None:
        _READ = {}
    try:
        yield
    finally:
        if outer is None:
            _READ = None


def read_script(script: str, start: int = 0, end: int | None = None) -> Script:
    """Read script[start:end] (all of it by default); every offset is an offset into `script`. Within
    `scripts_read_once` the result is shared by every caller reading the same text: read only."""
    memo = _READ
    if memo is None or len(script) > _MEMO_TEXT:
        return _read_script(script, start, end)
    key = (script, start, end)
    found = memo.get(key)
    if found is None:
        if len(memo) >= _MEMO_ENTRIES:
            memo.clear()
        found = memo[key] = _read_script(script, start, end)
    return found


def _read_script(script: str, start: int, end: int | None) -> Script:
    result = Script()
    _Reader(script, result).read(start, len(script) if end is None else min(end, len(script)), None, 0)
    result.comments.sort(key=lambda c: c.start)
    result.continuations.sort(key=lambda c: c.start)
    result.heredocs.sort(key=lambda h: h.operator)
    return result


def _line_break(script: str, i: int, n: int) -> int:
    """Length of the line break at `i` (LF: 1, CRLF: 2), 0 when there is none."""
    if i < n:
        if script[i] == "\n":
            return 1
        if script[i] == "\r" and i + 1 < n and script[i + 1] == "\n":
            return 2
    return 0


class _Reader:
    def __init__(self, script: str, result: Script):
        self.script = script
        self.result = result
        self.redirect_target: str | None = None  # the word after the last `>`/`<` redirection read

    def read(self, i: int, n: int, heredoc: HereDoc | None, depth: int) -> None:
        script, result = self.script, self.result
        current: list[Word] = []
        pending_comment: str | None = None
        pending_docs: list[HereDoc] = []
        command_docs: list[HereDoc] = []  # here-documents opened by the command being read
        writes_file = False  # the command being read redirects its output to a file
        output_file: str | None = None  # ... to this file

        def flush(piped: bool = False) -> None:
            nonlocal current, pending_comment, command_docs, writes_file, output_file
            words = _strip_prefixes(current)
            result.assignments.extend(w for w in current[:len(current) - len(words)] if _is_assignment(w.text))
            for doc in command_docs:
                doc.consumer, doc.writes_file, doc.piped = [w.text for w in words], writes_file, piped
                doc.output_file = output_file
            command_docs, writes_file, output_file = [], False, None
            if words:
                result.commands.append(Command(words, pending_comment, current[0].start, current[-1].end, heredoc))
                pending_comment = None
            current = []

        while i < n:
            ch = script[i]
            if ch == "\\" and _line_break(script, i + 1, n):
                j = i + 1 + _line_break(script, i + 1, n)
                result.continuations.append(Continuation(i, j))
                i = j
                continue
            if ch in " \t\r":
                i += 1
                if i < n and script[i] in " \t\r":  # a run at once: a Markdown block's blanked lines are long
                    i = _BLANKS.match(script, i, n).end()  # type: ignore[union-attr]  # `*` always matches
                continue
            if ch == "\n":
                if current:
                    flush()
                i += 1
                if not pending_docs and i < n and script[i] in " \t\r\n":
                    i = _BLANK_LINES.match(script, i, n).end()  # type: ignore[union-attr]
                if pending_docs:
                    i = self._bodies(pending_docs, i, n, depth)
                    pending_docs = []
                continue
            if ch == "#":
                stop = script.find("\n", i, n)
                stop = n if stop == -1 else stop
                text_end = stop - 1 if stop > i and script[stop - 1] == "\r" else stop
                result.comments.append(Comment(i, text_end, script[i:text_end], heredoc))
                if not current:
                    pending_comment = script[i:text_end]
                i = stop
                continue
            if ch in ";&|(){}" and not (ch in "{}" and i + 1 < n and script[i + 1] not in " \t\r\n;"):
                op = script[i:i + 2] if script[i:i + 2] in _SEPARATORS else ch
                flush(piped=op in ("|", "|&"))
                i += len(op)
                continue
            if ch in "<>" and not _placeholder_at(script, i, n) or (ch.isdigit() and _is_redirect(script, i, n)):
                at = i
                i, doc = self._redirect(i, n)
                if doc is not None:
                    pending_docs.append(doc)
                    command_docs.append(doc)
                elif ">" in script[at:i] and ">&" not in script[at:i]:
                    writes_file = True  # `> file`, `>> file` (not `2>&1`)
                    output_file = self.redirect_target
                continue
            word, i = self._word(i, n)
            current.append(word)
        flush()
        if pending_docs:  # the script ends on the operator's line: the bodies are empty
            self._bodies(pending_docs, n, n, depth)

    def _bodies(self, docs: list[HereDoc], i: int, n: int, depth: int) -> int:
        """Read the bodies of the here-documents opened on the line that ended just before `i`."""
        script = self.script
        for doc in docs:
            doc.start = i
            line = i
            doc.end = n
            while line < n:
                stop = script.find("\n", line, n)
                stop = n if stop == -1 else stop
                text = script[line:stop].rstrip("\r")
                if (text.lstrip("\t") if doc.strip_tabs else text) == doc.delimiter:
                    doc.end, doc.closed = line, True
                    line = min(stop + 1, n)
                    break
                line = stop + 1
            else:
                line = n
            self.result.heredocs.append(doc)
            if depth < _MAX_HEREDOC_NESTING and not doc.printed:  # a printed body is text, not commands
                self.read(doc.start, doc.end, doc, depth + 1)
            i = line
        return i

    def _redirect(self, i: int, n: int) -> tuple[int, HereDoc | None]:
        script = self.script
        while i < n and script[i].isdigit():
            i += 1
        if script.startswith("<<", i) and not script.startswith("<<<", i):
            operator = i
            i += 2
            strip_tabs = i < n and script[i] == "-"
            if strip_tabs:
                i += 1
            while i < n and script[i] in " \t":
                i += 1
            if i >= n or script[i] in "\r\n;&|<>()":
                return i, None  # `<<` without a word: a syntax error to a shell, nothing to read here
            word, i = self._word(i, n, record=False)
            raw = script[word.start:word.end]
            return i, HereDoc(word.text, any(q in raw for q in "'\"\\"), strip_tabs, operator)
        while i < n and script[i] in "<>&|":
            i += 1
        if i < n and script[i] == "-" and script[i - 1] == "&":
            return i + 1, None
        i = self._blanks(i, n)
        if i < n and script[i - 1] == "&" and script[i].isdigit():
            while i < n and script[i].isdigit():
                i += 1
            return i, None
        self.redirect_target = None
        if i < n and script[i] not in "\r\n;&|":
            target, i = self._word(i, n)
            self.redirect_target = target.text
        return i, None

    def _blanks(self, i: int, n: int) -> int:
        """Past the blanks at `i`, line continuations included: `> \\<newline> target` writes to `target`."""
        script = self.script
        while i < n:
            if script[i] in " \t":
                i += 1
            elif script[i] == "\\" and _line_break(script, i + 1, n):
                i = self._continuation(i, n, True)
            else:
                break
        return i

    def _continuation(self, i: int, n: int, record: bool) -> int:
        """After a backslash at `i` that ends the line (LF or CRLF): where the word goes on, the
        continuation recorded; 0 when the backslash escapes something else."""
        brk = _line_break(self.script, i + 1, n)
        if not brk:
            return 0
        if record:
            self.result.continuations.append(Continuation(i, i + 1 + brk))
        return i + 1 + brk

    def _word(self, i: int, n: int, record: bool = True) -> tuple[Word, int]:
        script = self.script
        start = i
        out: list[str] = []
        dynamic = False
        while i < n:
            ch = script[i]
            if ch in " \t\r\n;&|<>()":
                if ch in "()" and out and out[-1] == "$":
                    pass
                elif ch == "<" and _placeholder_at(script, i, n):
                    stop = script.index(">", i) + 1  # `<http_port>`: a value the reader fills in, unknown here
                    out.append(script[i:stop])
                    dynamic = True
                    i = stop
                    continue
                else:
                    break
            if ch == "\\":
                after = self._continuation(i, n, record)
                if after:
                    i = after
                    continue
                if i + 1 < n:
                    out.append(script[i + 1])
                i += 2
                continue
            if ch == "'":
                end = script.find("'", i + 1, n)
                end = n if end == -1 else end
                out.append(script[i + 1:end])
                i = end + 1
                continue
            if ch == '"':
                i += 1
                while i < n and script[i] != '"':
                    c = script[i]
                    if c == "\\" and i + 1 < n and script[i + 1] in '"\\$`\n\r':
                        after = self._continuation(i, n, record)
                        if after:
                            i = after
                            continue
                        if script[i + 1] != "\r":
                            out.append(script[i + 1])
                            i += 2
                            continue
                    if c in "$`":
                        dynamic = True
                        if c == "$" and i + 1 < n and script[i + 1] == "(":
                            j = _matching_paren(script, i + 1, n)
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
                    j = _matching_paren(script, i + 1, n)
                    out.append(script[i:j + 1])
                    i = j + 1
                    continue
                if i + 1 < n and script[i + 1] == "{":
                    j = script.find("}", i, n)
                    j = n - 1 if j == -1 else j
                    out.append(script[i:j + 1])
                    i = j + 1
                    continue
            if ch == "`":
                dynamic = True
                j = script.find("`", i + 1, n)
                j = n - 1 if j == -1 else j
                out.append(script[i:j + 1])
                i = j + 1
                continue
            if ch in "*?[" and not out[-1:] == ["="]:
                dynamic = dynamic or ch == "*" or ch == "?"
            out.append(ch)
            i += 1
        i = min(i, n)
        return Word("".join(out), start, i, dynamic), i


# A documentation placeholder such as `--port <http_port>` or `--model=<your-model>`: to a shell it would be two
# redirections (`<http_port` then `>` to the next word), but nobody writes that on purpose, while runbooks and
# READMEs write placeholders everywhere. Read as one word whose value is unknown, so no rule guesses at it.
_PLACEHOLDER = re.compile(r"<[A-Za-z_][A-Za-z0-9_.:/-]*>(?=[\s;&|)]|$)")


def _placeholder_at(script: str, i: int, n: int) -> bool:
    return script[i] == "<" and _PLACEHOLDER.match(script, i, n) is not None


def _is_redirect(script: str, i: int, n: int) -> bool:
    j = i
    while j < n and script[j].isdigit():
        j += 1
    return j < n and script[j] in "<>"


def _matching_paren(script: str, i: int, n: int) -> int:
    depth = 0
    while i < n:
        ch = script[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        elif ch in "'\"":
            end = script.find(ch, i + 1, n)
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
            if index + 1 < len(argv) and argv[index + 1] == "--":
                index += 1  # `bash -lc -- SCRIPT` (AIBrix's Ray samples): `--` ends the options
            return index + 1 if index + 1 < len(argv) else None
        if not arg.startswith("-"):
            return None
    return None
