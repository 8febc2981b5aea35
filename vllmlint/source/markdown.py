"""Fenced code blocks of Markdown files, as text that keeps the Markdown file's positions.

Each block is a region of a text with the Markdown file's own offsets, so readers report lines and columns of the
Markdown file itself, and no block costs a copy of the file: a YAML block is a region of the Markdown text (the
engine parses the region alone, `yamlmodel.parse_region`); the shell blocks are regions of one text shared by
all of them, the Markdown text with console prompts and the here-documents kubectl reads (linted as YAML)
blanked (`SourceFile.region`: each is read as a script of its own).
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass
from vllmlint.lazyre import lazy_compile

_FENCE = lazy_compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$", re.M)
YAML_LANGS = {"yaml", "yml"}
SHELL_LANGS = {"bash", "sh", "shell", "console", "zsh", "shell-session"}


@dataclass
class Block:
    language: str  # "yaml" or "shell"
    text: str  # the text the block is [first_offset, end_offset) of (yaml: the file's; shell: the file's shell text)
    start_line: int  # 1-based line of the opening fence
    first_offset: int  # offset of the block's first content character
    end_offset: int  # offset just past the block's content (where the closing fence starts)
    # An unlabelled fence read as YAML because its content is a Kubernetes object (`kubernetes_fence`):
    # when it does not parse, it was a snippet, not a manifest, and it is left alone.
    sniffed: bool = False
    applied: AppliedHeredoc | None = None  # the here-document of a shell block fed to `kubectl apply -f -`


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
    """The YAML and shell blocks of a Markdown text: YAML blocks as regions of the text, shell blocks as the
    text up to their end, blanked before them."""
    blocks = []
    applied = applied_files(text)  # `kubectl apply -f FILE` anywhere in the document's shell blocks
    shell_edits: list[tuple[int, int, str]] = []  # shell blocks' content as the shell reads it, where it differs
    lines = _LineCounter(text)
    for fence in fences(text):
        content_start, content_end, language = fence.content_start, fence.content_end, fence.language
        if content_start > len(text):
            break
        if language in YAML_LANGS:
            blocks.append(Block("yaml", text, lines.at(fence.opening), content_start, content_end))
        elif language in SHELL_LANGS:
            body = text[content_start:content_end]
            if language == "console" or language == "shell-session":
                body = _console_commands(body, 0, len(body))
            manifests = applied_heredocs(text, fence, applied)
            body = _blank_regions(body, [(m.start - content_start, m.blank_end - content_start) for m in manifests])
            if body != text[content_start:content_end]:
                shell_edits.append((content_start, content_end, body))
            blocks.append(Block("shell", text, lines.at(fence.opening), content_start, content_end))
            blocks.extend(Block("yaml", text, lines.at(start), start, end, applied=m)
                          for m in manifests for start, end in indented_documents(text, m.start, m.end))
        elif not language and kubernetes_fence(text, fence):
            blocks.extend(Block("yaml", text, lines.at(fence.opening), start, end, sniffed=True)
                          for start, end in indented_documents(text, content_start, content_end))
    if shell_edits:  # one text for every shell block, made once
        parts, at = [], 0
        for start, end, body in shell_edits:
            parts += [text[at:start], body]
            at = end
        shell_text = "".join(parts) + text[at:]
        for block in blocks:
            if block.language == "shell":
                block.text = shell_text
    return blocks


class _LineCounter:
    """1-based line numbers of increasing offsets, counting each stretch of text once."""

    def __init__(self, text: str):
        self.text, self.offset, self.line = text, 0, 1

    def at(self, offset: int) -> int:
        if offset < self.offset:  # not increasing (a here-document's documents after its block): count again
            return self.text.count("\n", 0, offset) + 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


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


# --- manifests applied from shell blocks, and unlabelled fences holding manifests -----------------------
_OBJECT_KEY = lazy_compile(r"^(?P<indent>[ \t]*)(?P<key>apiVersion|kind)[ \t]*:[ \t]*\S", re.M)
_KUBECTL = {"kubectl", "oc", "kubectl.exe"}
# kubectl's global options that take the next word as their value (`kubectl -n ns apply -f -`).
_KUBECTL_VALUE_OPTIONS = {"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s",
                          "--server", "--token", "--as", "-l", "--selector", "-o", "--output", "--field-manager"}


def kubernetes_fence(text: str, fence: Fence) -> bool:
    """Whether an unlabelled fence holds a Kubernetes object: an `apiVersion:` and a `kind:` key, both at
    the indentation of the block's first line (a top-level key, not a word of prose or a nested field)."""
    body = text[fence.content_start:fence.content_end]
    first = next((line for line in body.split("\n") if line.strip() and not line.lstrip().startswith("#")), "")
    indent = first[:len(first) - len(first.lstrip())]
    keys = {m.group("key") for m in _OBJECT_KEY.finditer(body) if m.group("indent") == indent}
    return keys == {"apiVersion", "kind"}


@dataclass
class AppliedHeredoc:
    """The body of a here-document a shell block feeds to `kubectl apply -f -` (or `kubectl create -f -`):
    `kubectl apply -f - <<EOF`, or `cat <<EOF | kubectl apply -f -`."""

    start: int  # offset of the body's first character
    end: int  # offset just past the body (where the closing line starts)
    blank_end: int  # what the shell block blanks: the body, and the closing line when the reader missed it
    expanded: bool  # an unquoted delimiter and `$`/backquote in the body: the shell rewrites it first
    delimiter: str
    operator: int  # offset of the `<<` operator


def _kubectl_applies_stdin(words: list[str]) -> bool:
    """`kubectl [global options] apply|create [options] -f -`: the manifest is read from standard input."""
    if not words or words[0].rsplit("/", 1)[-1] not in _KUBECTL:
        return False
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 1 if "=" in words[i] or words[i] not in _KUBECTL_VALUE_OPTIONS else 2
    if i >= len(words) or words[i] not in ("apply", "create", "replace"):
        return False
    rest = words[i + 1:]
    for j, word in enumerate(rest):
        if word in ("-f-", "-f=-", "--filename=-"):
            return True
        if word in ("-f", "--filename") and j + 1 < len(rest) and rest[j + 1] == "-":
            return True
    return False


def applied_heredocs(text: str, fence: Fence, applied: list[tuple[int, str]] | None = None) -> list[AppliedHeredoc]:
    """The here-documents of a shell fence whose body kubectl reads as manifests, in order. A fence indented
    in a list item keeps its indentation on every line (CommonMark removes it): its closing line is found
    with that indentation removed, as the shell would see the block pasted. A body written to a file
    (`cat > f.yaml <<EOF`, `tee f.yaml <<EOF`) counts when `kubectl apply -f f.yaml` follows, in this block
    or (`applied`: (offset, file) of every such command of the document) a later one."""
    from vllmlint.source.shell import read_script

    if "<<" not in text[fence.content_start:fence.content_end] or not applied and "kubectl" not in text[
            fence.content_start:fence.content_end] and "oc " not in text[fence.content_start:fence.content_end]:
        return []
    script = read_script(text, fence.content_start, fence.content_end)
    applied = (applied or []) + _script_applied_files(script)
    opening_line = text[fence.opening:fence.content_start]
    indent = len(opening_line) - len(opening_line.lstrip(" \t"))
    found: list[AppliedHeredoc] = []
    for doc in script.heredocs:
        if doc.strip_tabs:
            continue  # `<<-EOF`: the shell strips leading tabs, and YAML indented by tabs does not parse
        consumer = doc.consumer
        if doc.piped and consumer[:1] and consumer[0].rsplit("/", 1)[-1] == "cat" and consumer[1:] in ([], ["-"]):
            # `cat <<EOF | kubectl apply -f -`: the command the pipe feeds starts on the operator's line.
            following = [c for c in script.commands if doc.operator < c.start < doc.start]
            consumer = [w.text for w in following[0].words] if following else []
        if not _kubectl_applies_stdin(consumer) and not _applied_after(_written_files(doc, script), doc, applied):
            continue
        start, end, blank_end = doc.start, doc.end, doc.end
        if indent and not doc.closed:
            pos = start
            while pos < fence.content_end:
                stop = text.find("\n", pos, fence.content_end)
                stop = fence.content_end if stop == -1 else stop
                line = text[pos:stop].rstrip("\r")
                if line[:indent].strip() == "" and line[indent:] == doc.delimiter:
                    end, blank_end = pos, stop
                    break
                pos = stop + 1
            else:
                continue  # no closing line: the block shows a fragment
        if end <= start:
            continue
        body = text[start:end]
        expanded = not doc.quoted and bool(re.search(r"\$[A-Za-z_{(0-9@*#?$!-]|`", body))
        found.append(AppliedHeredoc(start, end, blank_end, expanded, doc.delimiter, doc.operator))
    return found


def _blank_regions(body: str, regions: list[tuple[int, int]]) -> str:
    """`body` with the characters of each region turned into spaces, newlines kept."""
    for start, end in regions:
        body = body[:start] + re.sub(r"[^\n]", " ", body[start:end]) + body[end:]
    return body


def indented_documents(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The YAML documents of text[start:end] as regions. A block indented as a whole (a fence in a list item
    or an admonition) keeps its indentation here, and an indented `---` is no document marker to YAML: the
    regions are split at lines that are only `---` after the block's indentation, the marker line left out."""
    first = re.search(r"^([ \t]*)\S", text[start:end], re.M)
    indent = first.group(1) if first else ""
    if not indent:
        return [(start, end)]
    regions = []
    marker = re.compile(r"^" + re.escape(indent) + r"---[ \t]*(#[^\n]*)?$", re.M)
    pos = start
    for match in marker.finditer(text, start, end):
        regions.append((pos, match.start()))
        pos = min(match.end() + 1, end)
    regions.append((pos, end))
    return [(a, b) for a, b in regions if text[a:b].strip()]


def script_manifests(text: str) -> tuple[list[Block], str]:
    """The manifests a shell script applies from here-documents (`cat <<EOF | kubectl apply -f -`), as YAML
    blocks of the script blanked outside each document, and the script with those bodies blanked (read as
    shell without them)."""
    manifests = applied_heredocs(text, Fence(0, 0, len(text), len(text), "bash"))
    blocks = [Block("yaml", text, text.count("\n", 0, start) + 1, start, end, applied=m)
              for m in manifests for start, end in indented_documents(text, m.start, m.end)]
    return blocks, _blank_regions(text, [(m.start, m.blank_end) for m in manifests]) if manifests else text


# --- here-documents written to a file that `kubectl apply -f FILE` applies afterwards ----------------------
def _kubectl_files(words: list[str]) -> list[str]:
    """The files of `kubectl [global options] apply|create|replace ... -f FILE` (`-f=FILE`, `--filename FILE`),
    standard input (`-`) left out."""
    if not words or words[0].rsplit("/", 1)[-1] not in _KUBECTL:
        return []
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 1 if "=" in words[i] or words[i] not in _KUBECTL_VALUE_OPTIONS else 2
    if i >= len(words) or words[i] not in ("apply", "create", "replace"):
        return []
    rest, files = words[i + 1:], []
    for j, word in enumerate(rest):
        if word in ("-f", "--filename") and j + 1 < len(rest):
            files.append(rest[j + 1])
        elif word.startswith(("-f=", "--filename=")):
            files.append(word.split("=", 1)[1])
        elif word.startswith("-f") and len(word) > 2 and not word.startswith("--"):
            files.append(word[2:])
    return [f for f in files if f and f != "-"]


def _script_applied_files(script) -> list[tuple[int, str]]:
    """(offset, file) of every `kubectl apply -f FILE` of a read script, outside here-document bodies."""
    return [(command.start, name) for command in script.commands if command.heredoc is None
            for name in _kubectl_files([w.text for w in command.words])]


def applied_files(text: str) -> list[tuple[int, str]]:
    """(offset, file) of every `kubectl apply -f FILE` in the shell blocks of a Markdown text."""
    from vllmlint.source.shell import read_script

    found: list[tuple[int, str]] = []
    for fence in fences(text):
        body = text[fence.content_start:fence.content_end]
        if fence.language in SHELL_LANGS and ("kubectl" in body or "oc " in body):
            shell = text
            if fence.language in ("console", "shell-session"):  # the `$ ` commands only, at the same offsets
                shell = _console_commands(text, fence.content_start, fence.content_end)
            found.extend(_script_applied_files(read_script(shell, fence.content_start, fence.content_end)))
    return found


def _written_files(doc, script) -> list[str]:
    """The files a here-document's body is written to: `cat > FILE <<EOF` (or `>>`), `tee [-a] FILE... <<EOF`,
    `cat <<EOF | tee FILE` and `cat <<EOF > FILE`."""
    consumer = doc.consumer
    name = consumer[0].rsplit("/", 1)[-1] if consumer else ""
    if name == "cat" and consumer[1:] in ([], ["-"]) and doc.piped:
        following = [c for c in script.commands if doc.operator < c.start < doc.start]
        consumer = [w.text for w in following[0].words] if following else []
        name = consumer[0].rsplit("/", 1)[-1] if consumer else ""
    if name == "cat" and consumer[1:] in ([], ["-"]) and doc.output_file:
        return [doc.output_file]
    if name == "tee":
        return [word for word in consumer[1:] if not word.startswith("-")]
    return []


def _same_file(written: str, applied: str) -> bool:
    """Whether `kubectl apply -f APPLIED` reads the file WRITTEN (the same relative path, or a folder holding it)."""
    import posixpath

    written, applied = posixpath.normpath(written), posixpath.normpath(applied)
    if written == applied:
        return True
    folder = "" if applied == "." else applied.rstrip("/") + "/"
    return written.endswith((".yaml", ".yml", ".json")) and written.startswith(folder) and "/" not in written[len(folder):]


def _applied_after(written: list[str], doc, applied: list[tuple[int, str]]) -> bool:
    """Whether one of the written files is applied by a `kubectl apply -f` that comes after the here-document."""
    return any(offset > doc.operator and _same_file(name, target) for name in written for offset, target in applied)
