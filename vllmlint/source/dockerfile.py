"""Dockerfiles (`Dockerfile`, `*.Dockerfile`, `Containerfile`) read as BuildKit's Dockerfile frontend reads them,
with every word's offsets in the file kept.

What the frontend does (moby/buildkit `frontend/dockerfile/parser/parser.go` and `instructions/parse.go`,
`frontend/dockerfile/shell/lex.go`; the Dockerfile reference, https://docs.docker.com/reference/dockerfile/):
- Parser directives (`# escape=`, `# syntax=`) only before the first instruction, comment or blank line; the
  escape character (default `\\`) ends a line to continue the instruction on the next one.
- A line whose first non-blank character is `#` is a comment, also inside a continued instruction (it is
  dropped there); blank lines inside a continued instruction are dropped too.
- An instruction is its keyword (any case) and the rest of the logical line. `RUN`/`COPY`/`ADD` may open
  here-documents (`<<EOF`, `<<-EOF`, quoted delimiters): their bodies are not instructions.
- `ENTRYPOINT`, `CMD`, `RUN`: a JSON array of strings is the exec form; anything else is the shell form, run as
  `SHELL` (default `["/bin/sh", "-c"]`) plus the text.
- `FROM [--platform=P] IMAGE [AS NAME]`: IMAGE may use the `ARG`s declared before the first `FROM`
  (`$NAME`, `${NAME}`, `${NAME:-default}`, `${NAME:+alt}`), at their defaults here (a build argument given on
  the command line is not known to a linter); `FROM NAME` of an earlier stage continues that stage.
- `ENV` and a stage's `ENTRYPOINT`/`CMD`/`SHELL` are inherited from the stage it continues. Setting
  `ENTRYPOINT` resets an inherited `CMD` (the Dockerfile reference, "Understand how CMD and ENTRYPOINT
  interact"). The last stage is the image that runs.

No program is run and nothing is fetched: the base image's own configuration (its `ENTRYPOINT`, `ENV`) is what
the image tables say (`data/image-entrypoints.yaml`), read by the callers.
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass, field

MAX_INSTRUCTIONS = 20_000  # a larger file is not a Dockerfile anyone builds: read no further


def is_dockerfile(name: str) -> bool:
    from vllmlint.source.files import is_dockerfile as named

    return named(name)


@dataclass
class Word:
    """A word of an instruction: its text (quotes and escapes removed) and its span in the file."""

    text: str
    start: int
    end: int
    dynamic: bool = False  # holds a `$VAR` the build or the shell fills in


@dataclass
class Instruction:
    keyword: str  # upper case: FROM, ENTRYPOINT, ...
    start: int  # offset of the keyword
    end: int  # offset just past the instruction's last character
    args_start: int  # offset of the first character after the keyword and its blanks
    # The arguments as the frontend joins them: continuations and comment lines removed. `offsets[i]` is the file
    # offset of args[i].
    args: str = ""
    offsets: list[int] = field(default_factory=list)

    def arg_span(self, i: int, j: int) -> tuple[int, int]:
        """File span of args[i:j]."""
        if not self.offsets:
            return self.args_start, self.args_start
        i = min(max(i, 0), len(self.offsets) - 1)
        j = min(max(j, i + 1), len(self.offsets))
        return self.offsets[i], self.offsets[j - 1] + 1


@dataclass
class Command:
    """An `ENTRYPOINT`/`CMD`: exec form (`words`), or shell form (`script`, run by `shell`)."""

    instruction: Instruction
    exec_form: bool
    words: list[Word] = field(default_factory=list)  # exec form
    shell: list[str] = field(default_factory=lambda: ["/bin/sh", "-c"])  # shell form: the program running it
    script: Word | None = None  # shell form: the text as one word (offsets: `script_offsets`)
    script_offsets: list[int] = field(default_factory=list)


@dataclass
class EnvValue:
    name: str
    value: str
    name_word: Word
    value_word: Word


@dataclass
class Stage:
    index: int
    from_instruction: Instruction
    image: Word | None  # the FROM image after ARG substitution (None: `FROM` without a word)
    name: str | None  # `AS name`
    parent: Stage | None = None  # the earlier stage `FROM name` continues
    entrypoint: Command | None = None
    cmd: Command | None = None
    env: dict[str, EnvValue] = field(default_factory=dict)
    shell: list[str] = field(default_factory=lambda: ["/bin/sh", "-c"])
    instructions: list[Instruction] = field(default_factory=list)
    entrypoint_set_here: bool = False

    @property
    def base_image(self) -> Word | None:
        """The image the stage starts from, through the stages it continues."""
        stage: Stage | None = self
        seen = 0
        while stage is not None and stage.parent is not None and seen < 1000:
            stage, seen = stage.parent, seen + 1
        return stage.image if stage is not None else None

    def effective_entrypoint(self) -> Command | None:
        stage: Stage | None = self
        while stage is not None:
            if stage.entrypoint is not None:
                return stage.entrypoint
            stage = stage.parent
        return None

    def effective_cmd(self) -> Command | None:
        """`CMD` of the stage or the one it continues, unless an `ENTRYPOINT` set in between reset it."""
        stage: Stage | None = self
        while stage is not None:
            if stage.cmd is not None:
                return stage.cmd
            if stage.entrypoint_set_here:
                return None
            stage = stage.parent
        return None

    def effective_env(self) -> dict[str, EnvValue]:
        chain: list[Stage] = []
        stage: Stage | None = self
        while stage is not None and len(chain) < 1000:
            chain.append(stage)
            stage = stage.parent
        env: dict[str, EnvValue] = {}
        for stage in reversed(chain):
            env.update(stage.env)
        return env


@dataclass
class Dockerfile:
    stages: list[Stage] = field(default_factory=list)
    global_args: dict[str, str | None] = field(default_factory=dict)
    instructions: list[Instruction] = field(default_factory=list)
    escape: str = "\\"

    @property
    def final(self) -> Stage | None:
        return self.stages[-1] if self.stages else None


# --- lines to instructions --------------------------------------------------------------------------------
_DIRECTIVE = re.compile(r"#\s*([A-Za-z]+)\s*=\s*(\S+)\s*$")
_HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
_HEREDOC_KEYWORDS = frozenset({"RUN", "COPY", "ADD"})


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line, the end before its line break."""
    result = []
    pos, n = 0, len(text)
    while pos <= n:
        stop = text.find("\n", pos)
        if stop == -1:
            if pos < n:
                result.append((pos, n))
            break
        end = stop - 1 if stop > pos and text[stop - 1] == "\r" else stop
        result.append((pos, end))
        pos = stop + 1
    return result


def read_dockerfile(text: str, build_args: dict[str, str | None] | None = None) -> Dockerfile:
    """Read a Dockerfile. Never raises on malformed input: what cannot be read is left out. `build_args`: values
    given to the build (Compose `build.args`), which replace the defaults of the `ARG`s declared before `FROM`."""
    result = Dockerfile()
    lines = _lines(text)
    i = 0
    # Parser directives: `# name=value` lines at the very top.
    while i < len(lines):
        line = text[lines[i][0]:lines[i][1]]
        match = _DIRECTIVE.match(line.strip())
        if not match:
            break
        if match.group(1).lower() == "escape" and match.group(2) in ("\\", "`"):
            result.escape = match.group(2)
        i += 1
    escape = result.escape
    while i < len(lines) and len(result.instructions) < MAX_INSTRUCTIONS:
        start, end = lines[i]
        stripped = text[start:end].lstrip(" \t")
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        first = start + (end - start - len(stripped))
        keyword_end = first
        while keyword_end < end and not text[keyword_end].isspace():
            keyword_end += 1
        keyword = text[first:keyword_end].upper()
        args_chars: list[str] = []
        offsets: list[int] = []
        pos = keyword_end
        while pos < end and text[pos] in " \t":
            pos += 1
        args_start = pos
        last_end = end
        while True:
            # the part of the physical line [pos, end) belongs to the instruction; a trailing escape continues it
            line_end = end
            body_end = line_end
            trimmed = body_end
            while trimmed > pos and text[trimmed - 1] in " \t":
                trimmed -= 1
            continued = trimmed > pos and text[trimmed - 1] == escape and not _escaped(text, pos, trimmed - 1, escape)
            if continued:
                body_end = trimmed - 1
            for k in range(pos, body_end):
                args_chars.append(text[k])
                offsets.append(k)
            last_end = line_end
            i += 1
            if not continued:
                break
            # skip comment lines and blank lines inside the continuation
            while i < len(lines):
                s, e = lines[i]
                inner = text[s:e].lstrip(" \t")
                if inner.startswith("#") or not inner.strip():
                    i += 1
                    continue
                break
            if i >= len(lines):
                break
            pos, end = lines[i]
        instruction = Instruction(keyword, first, last_end, args_start, "".join(args_chars), offsets)
        result.instructions.append(instruction)
        if keyword in _HEREDOC_KEYWORDS:
            for match in _HEREDOC.finditer(instruction.args):
                strip_tabs, delimiter = match.group(1) == "-", match.group(3)
                while i < len(lines):
                    s, e = lines[i]
                    body = text[s:e]
                    i += 1
                    if (body.lstrip("\t") if strip_tabs else body) == delimiter:
                        break
    _stages(result, build_args or {})
    return result


def _escaped(text: str, lo: int, at: int, escape: str) -> bool:
    """Whether the escape character at `at` is itself escaped (an even run of escapes before the end)."""
    count = 0
    k = at - 1
    while k >= lo and text[k] == escape:
        count += 1
        k -= 1
    return count % 2 == 1


# --- words ---------------------------------------------------------------------------------------------------
def split_words(instruction: Instruction, escape: str = "\\") -> list[Word]:
    """The instruction's arguments split at blanks, quotes removed (the frontend's word splitting for FROM, ARG,
    ENV...; no variable expansion)."""
    args, offsets = instruction.args, instruction.offsets
    words: list[Word] = []
    n = len(args)
    k = 0
    while k < n:
        while k < n and args[k] in " \t":
            k += 1
        if k >= n:
            break
        start = k
        out: list[str] = []
        quote = ""
        dynamic = False
        while k < n:
            ch = args[k]
            if quote:
                if ch == quote:
                    quote = ""
                elif ch == escape and quote == '"' and k + 1 < n:
                    k += 1
                    out.append(args[k])
                else:
                    out.append(ch)
                    dynamic = dynamic or ch == "$" and quote == '"'
            elif ch in " \t":
                break
            elif ch in "'\"":
                quote = ch
            elif ch == escape and k + 1 < n:
                k += 1
                out.append(args[k])
            else:
                dynamic = dynamic or ch == "$"
                out.append(ch)
            k += 1
        words.append(Word("".join(out), offsets[start], offsets[k - 1] + 1, dynamic))
    return words


def json_words(instruction: Instruction) -> list[Word] | None:
    """The exec form's strings with their spans (each the span of its JSON literal), or None for the shell form
    (what is not a JSON array of strings is the shell form to the frontend)."""
    args = instruction.args.strip()
    if not args.startswith("["):
        return None
    import json  # here, not at start-up: a run reads no JSON module unless a Dockerfile needs one

    try:
        values = json.loads(args)
    except ValueError:
        return None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return None
    words: list[Word] = []
    text = instruction.args
    k = text.index("[") + 1
    for value in values:
        k = text.index('"', k)
        start = k
        k += 1
        while k < len(text) and text[k] != '"':
            k += 2 if text[k] == "\\" else 1
        words.append(Word(value, instruction.offsets[start], instruction.offsets[min(k, len(text) - 1)] + 1))
        k += 1
    return words


# --- stages ---------------------------------------------------------------------------------------------------
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def substitute(text: str, values: dict[str, str | None]) -> tuple[str, bool]:
    """`text` with the build arguments substituted as the frontend does; (text, unknown): unknown when a
    variable has no value here (its text is replaced by nothing, as the frontend does for an unset one)."""
    unknown = False

    def one(match: re.Match) -> str:
        nonlocal unknown
        name = match.group(1) or match.group(4)
        operator, word = match.group(2), match.group(3) or ""
        value = values.get(name)
        if operator in (":-", "-"):
            if value is None or operator == ":-" and value == "":
                if "$" in word:
                    unknown = True
                return word
            return value
        if operator in (":+", "+"):
            return word if value is not None and (operator == "+" or value) else ""
        if value is None:
            unknown = True
            return ""
        return value

    return _VARIABLE.sub(one, text), unknown


def _stages(result: Dockerfile, build_args: dict[str, str | None]) -> None:
    by_name: dict[str, Stage] = {}
    stage: Stage | None = None
    for instruction in result.instructions:
        keyword = instruction.keyword
        if keyword == "FROM":
            words = [w for w in split_words(instruction, result.escape) if not w.text.startswith("--")]
            image_word = words[0] if words else None
            name = words[2].text.lower() if len(words) >= 3 and words[1].text.lower() == "as" else None
            parent = None
            if image_word is not None:
                text, unknown = substitute(image_word.text, result.global_args)
                parent = by_name.get(text.lower())
                image_word = Word(text, image_word.start, image_word.end, unknown or image_word.dynamic and "$" in text)
            stage = Stage(len(result.stages), instruction, image_word, name, parent)
            if parent is not None:
                stage.shell = list(parent.shell)
            result.stages.append(stage)
            if name:
                by_name[name] = stage
            continue
        if stage is None:
            if keyword == "ARG":
                for word in split_words(instruction, result.escape):
                    key, eq, value = word.text.partition("=")
                    if key in build_args:
                        result.global_args[key] = build_args[key]
                    elif eq:  # a default may use the build arguments declared above it
                        expanded, unknown = substitute(value, result.global_args)
                        result.global_args[key] = None if unknown else expanded
                    else:
                        result.global_args[key] = None
            continue
        stage.instructions.append(instruction)
        if keyword in ("ENTRYPOINT", "CMD"):
            command = _command(instruction, stage.shell)
            if keyword == "ENTRYPOINT":
                stage.entrypoint, stage.entrypoint_set_here, stage.cmd = command, True, None
            else:
                stage.cmd = command
        elif keyword == "SHELL":
            shell = json_words(instruction)
            if shell:
                stage.shell = [w.text for w in shell]
        elif keyword == "ENV":
            for env in _env(instruction, result.escape):
                stage.env[env.name] = env


def _command(instruction: Instruction, shell: list[str]) -> Command:
    words = json_words(instruction)
    if words is not None:
        return Command(instruction, True, words)
    args = instruction.args
    stripped = len(args) - len(args.lstrip())
    end = len(args.rstrip())
    script_text = args[stripped:end]
    offsets = instruction.offsets[stripped:end]
    start, stop = (offsets[0], offsets[-1] + 1) if offsets else (instruction.args_start, instruction.args_start)
    return Command(instruction, False, shell=list(shell), script=Word(script_text, start, stop, "$" in script_text),
                   script_offsets=offsets)


def _env(instruction: Instruction, escape: str) -> list[EnvValue]:
    words = split_words(instruction, escape)
    if not words:
        return []
    if "=" not in words[0].text:
        # the legacy form `ENV NAME value with blanks`: the rest of the line is the value
        name = words[0]
        rest = words[1:]
        if not rest:
            return []
        value = " ".join(w.text for w in rest)
        return [EnvValue(name.text, value, name, Word(value, rest[0].start, rest[-1].end,
                                                     any(w.dynamic for w in rest)))]
    found = []
    for word in words:
        key, eq, value = word.text.partition("=")
        if not eq or not key:
            continue
        found.append(EnvValue(key, value, Word(key, word.start, word.start + len(key)),
                              Word(value, min(word.start + len(key) + 1, word.end), word.end, word.dynamic)))
    return found


__all__ = ["is_dockerfile", "read_dockerfile", "Dockerfile", "Stage", "Command", "Instruction",
           "Word", "EnvValue", "split_words", "json_words", "substitute"]
