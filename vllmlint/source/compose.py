"""Docker Compose's own reading of a service, done the way Compose does it: interpolation, `.env` files and
the splitting of `entrypoint`/`command` strings into argv words (no shell), with file positions kept.

What Compose does, read from its loader (compose-spec/compose-go at e70e961, the library `docker compose`
is built on):
- Interpolation (template/template.go lines 30-49 and 157-390): `$$` is a literal `$`; `$NAME` and
  `${NAME}` take the variable; `${NAME:-default}` / `${NAME-default}` the default when the variable is unset
  (`:-` also when empty); `${NAME:?err}` / `${NAME?err}` fail when unset; `${NAME:+alt}` / `${NAME+alt}` the
  alternative when set. Defaults are interpolated themselves (nested `${...}`). Names match
  `[_a-z][_a-z0-9]*`, case-insensitively. Every string of the file is interpolated before it is read.
- Values come from the shell's environment and the project's `.env` file (dotenv/parser.go). The shell's
  environment is not known to a linter: a variable only the shell can give stays unknown, and the default
  written in the file is taken as what runs when it is unset (and said so in messages).
- `entrypoint` and `command` strings (types/command.go lines 70-77) are split by mattn/go-shellwords
  v1.0.12's `Parse` (go.mod), without environment or backtick parsing: words split at blanks, `'...'` and
  `"..."` quote, a backslash escapes the next character outside single quotes (inside double quotes too),
  and an unquoted `;`, `&`, `|`, `<` or `>` ends the command line (shellwords.go `Parse`: `break loop`;
  what follows is dropped). Unbalanced quotes or a `(` not after `$` are an error: Compose refuses the file.

Words come back as `Word`s whose characters each keep their offset in the text given, so a caller maps
them to file positions through the YAML scalar (`Scalar.source_index`).
"""
from __future__ import annotations

import os
import re
import weakref
from vllmlint.records import dataclass, field
from typing import TYPE_CHECKING

from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, SourceFile, scalar_str
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.k8s.objects import K8sObject, World

_NAME = lazy_compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
DOTENV = ".env"


@dataclass
class Interpolated:
    """A string after Compose's interpolation. `starts[i]`/`ends[i]`: the span in the original text of the
    i-th character (a substituted value's characters span the whole `${...}`). `unresolved`: some
    variable had no value here (its `${...}` text is kept, and the value is unknown). `notes`: where the
    values taken came from (`${TAG:-v0.8.5}` at its default, `TAG` from `.env`)."""

    text: str
    starts: list[int]
    ends: list[int]
    unresolved: bool = False
    invalid: bool = False  # a `${...}` Compose rejects ("Invalid template"): the file does not load
    notes: list[str] = field(default_factory=list)
    unresolved_spans: list[tuple[int, int]] = field(default_factory=list)  # output ranges left unknown

    def note(self) -> str:
        """`, with ${TAG:-v0.8.5} at its default`: for messages, "" when no variable was involved."""
        return "".join(f", {n}" for n in dict.fromkeys(self.notes))


def _closing_brace(text: str, start: int) -> int:
    """Index of the `}` closing the `${` at `start` (compose-go getFirstBraceClosingIndex: nested `{`)."""
    depth = 0
    i = start
    while i < len(text):
        if text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        if text[i] == "{":
            depth += 1
            i += 1
        i += 1
    return -1


# Hostile input: defaults nested deeper than this (`${A:-${B:-...}}`) are not followed (their value is unknown,
# and `nesting_problem` says where), and one string's interpolated text grows by at most MAX_GROWTH characters
# over its own length (a value past it is unknown): recursion and memory stay bounded whatever the file says.
MAX_NESTING = 64
MAX_GROWTH = 1 << 20


def interpolate(text: str, variables: dict[str, tuple[str, str]], _depth: int = 0,
                _limit: int | None = None) -> Interpolated:
    """Compose's interpolation of one string. `variables`: name -> (value, where it came from)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    result = Interpolated("", starts, ends)
    limit = len(text) + MAX_GROWTH if _limit is None else _limit

    def fits(value: str) -> bool:
        return len(starts) + len(value) <= limit

    def put(value: str, a: int, b: int) -> None:
        if not fits(value):  # past the bound: the value is unknown, its expression kept as written
            keep_unknown(a, b)
            return
        out.append(value)
        starts.extend([a] * len(value))
        ends.extend([b] * len(value))

    def keep_unknown(a: int, b: int) -> None:
        result.unresolved = True
        begin = len(starts)
        out.append(text[a:b])
        starts.extend(range(a, b))
        ends.extend(range(a + 1, b + 1))
        result.unresolved_spans.append((begin, begin + b - a))

    def nested(argument: str) -> Interpolated | None:
        """A default or alternative, interpolated in turn; None past MAX_NESTING (unknown)."""
        if _depth >= MAX_NESTING:
            return None
        return interpolate(argument, variables, _depth + 1, limit - len(starts))

    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch != "$" or i + 1 >= n:
            put(ch, i, i + 1)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            put("$", i, i + 2)
            i += 2
            continue
        if nxt == "{":
            close = _closing_brace(text, i + 1)
            if close < 0:
                result.invalid = True
                keep_unknown(i, n)
                break
            inner = text[i + 2:close]
            name_match = _NAME.match(inner)
            if name_match is None:
                result.invalid = True
                keep_unknown(i, close + 1)
                i = close + 1
                continue
            name = name_match.group(0)
            rest = inner[name_match.end():]
            op = next((o for o in (":?", ":-", ":+", "?", "-", "+") if rest.startswith(o)), None)
            if rest and op is None:
                result.invalid = True
                keep_unknown(i, close + 1)
                i = close + 1
                continue
            argument = rest[len(op):] if op else ""
            found = variables.get(name)
            expression = text[i:close + 1]
            if op in (":-", "-"):
                if found is not None and (op == "-" or found[0] != ""):
                    put(found[0], i, close + 1)
                    result.notes.append(f"{name} from {found[1]}")
                else:
                    inner_value = nested(argument)
                    if inner_value is None or inner_value.unresolved or inner_value.invalid:
                        keep_unknown(i, close + 1)
                    else:
                        put(inner_value.text, i, close + 1)
                        result.notes.append(f"`{expression}` at its default")
                        result.notes.extend(inner_value.notes)
            elif op in (":+", "+"):
                if found is None:
                    put("", i, close + 1)
                    result.notes.append(f"`{expression}` with {name} unset")
                elif op == "+" or found[0] != "":
                    inner_value = nested(argument)
                    if inner_value is None or inner_value.unresolved or inner_value.invalid:
                        keep_unknown(i, close + 1)
                    else:
                        put(inner_value.text, i, close + 1)
                        result.notes.append(f"{name} from {found[1]}")
                else:
                    put("", i, close + 1)
                    result.notes.append(f"{name} from {found[1]}")
            else:  # plain `${NAME}` or required `${NAME:?err}`
                if found is not None and not (op == ":?" and found[0] == ""):
                    put(found[0], i, close + 1)
                    result.notes.append(f"{name} from {found[1]}")
                else:
                    keep_unknown(i, close + 1)
            i = close + 1
            continue
        name_match = _NAME.match(text, i + 1)
        if name_match is None:
            # `$(`, `$1`, a lone `$`: no substitution group matches; compose-go's pattern leaves it (the
            # `invalid` group needs a `{`).
            put(ch, i, i + 1)
            i += 1
            continue
        name = name_match.group(0)
        end = name_match.end()
        found = variables.get(name)
        if found is not None:
            put(found[0], i, end)
            result.notes.append(f"{name} from {found[1]}")
        else:
            keep_unknown(i, end)
        i = end
    result.text = "".join(out)
    return result


# --- go-shellwords ---------------------------------------------------------------------------------
@dataclass
class Word:
    text: str
    begin: int  # index of the word's first character in the text split (its opening quote, if any)
    end: int  # index after its last character (its closing quote)
    chars: list[int]  # for each character of `text`, its index in the text split
    quoted: bool = False  # quotes or escapes: the file text of the word is not the word


def shell_words(text: str) -> list[Word] | None:
    """mattn/go-shellwords v1.0.12 `Parse` with its defaults (what Compose calls): the words of a command
    line, up to an unquoted `;`, `&`, `|`, `<` or `>`; None when Compose would refuse the string."""
    words: list[Word] = []
    buf: list[str] = []
    chars: list[int] = []
    escaped = double = single = back = dollar = False
    got = False
    quoted = False
    begin = -1
    last = 0

    def flush(end: int) -> None:
        nonlocal buf, chars, got, quoted, begin
        words.append(Word("".join(buf), begin, end, chars, quoted))
        buf, chars, got, quoted, begin = [], [], False, False, -1

    for i, r in enumerate(text):
        if begin < 0 and r not in " \t\r\n":
            begin = i
        if escaped:
            buf.append(r)
            chars.append(i)
            escaped = False
            got = True
            last = i + 1
            continue
        if r == "\\":
            quoted = True
            if single:
                buf.append(r)
                chars.append(i)
            else:
                escaped = True
            last = i + 1
            continue
        if r in " \t\r\n":
            if single or double or back or dollar:
                buf.append(r)
                chars.append(i)
            elif got:
                flush(last)
            else:
                begin = -1
            continue
        if r == "`":
            if not single and not double and not dollar:
                back = not back
        elif r == ")":
            if not single and not double and not back:
                dollar = not dollar
        elif r == "(":
            if not single and not double and not back:
                if not dollar and buf and buf[-1] == "$":
                    dollar = True
                    buf.append(r)
                    chars.append(i)
                    last = i + 1
                    continue
                return None
        elif r == '"':
            if not single and not dollar:
                quoted = True
                if double:
                    got = True
                double = not double
                last = i + 1
                continue
        elif r == "'":
            if not double and not dollar:
                quoted = True
                if single:
                    got = True
                single = not single
                last = i + 1
                continue
        elif r in ";&|<>":
            if not (single or double or back or dollar):
                if r == ">" and buf and "0" <= buf[0] <= "9":
                    got = False  # `2>`: the descriptor is not a word
                break
        got = True
        buf.append(r)
        chars.append(i)
        last = i + 1
    else:
        if escaped or single or double or back or dollar:
            return None
        if got:
            flush(last)
        return words
    if got:
        flush(last)
    return words


# --- .env files ------------------------------------------------------------------------------------
_EXPORT = lazy_compile(r"^export\s+")
_ESCAPES = {"a": "\a", "b": "\b", "c": "c", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "$": "$$",
            '"': '"', "\\": "\\"}


def parse_dotenv(text: str) -> dict[str, str] | None:
    """`read_dotenv`'s variables (None when the file does not parse or is refused)."""
    return read_dotenv(text)[0]


_REFERENCE = lazy_compile(r"\$\{?([_a-zA-Z][_a-zA-Z0-9]*)")


def read_dotenv(text: str) -> tuple[dict[str, str] | None, tuple[int, str] | None]:
    """(variables, problem): the variables of a `.env` / `env_file` file as compose-go's dotenv parser reads them
    (dotenv/parser.go): `KEY=VALUE` or `KEY: VALUE` lines, `export ` prefixes, `#` comments, unquoted values
    cut at ` #` and trimmed, `'...'` literal, `"..."` with escapes; `${VAR}` in values interpolated from the
    file's earlier keys. A bare `KEY` (inherited from the shell) is not known and left out. None when the
    file does not parse (Compose refuses it). Hostile input: values that refer to each other (`C1=${C0}${C0}`,
    `C2=${C1}${C1}`, ...) may add at most MAX_GROWTH characters to the file's own length in all; past that the
    file is refused (None) and `problem` is (line, message) for a note."""
    result: dict[str, str] = {}
    known: dict[str, tuple[str, str]] = {}
    lines = text.replace("\r\n", "\n").split("\n")
    budget = total = len(text) + MAX_GROWTH  # characters all values may hold together
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        number = i
        if not line or line.startswith("#"):
            continue
        line = _EXPORT.sub("", line)
        match = re.match(r"([A-Za-z0-9_.\-\[\]]+)\s*([=:])?\s*", line)
        if match is None:
            return None, None
        key = match.group(1)
        if match.group(2) is None:
            if match.end() != len(line):
                return None, None
            continue  # inherited from the environment: unknown
        rest = line[match.end():]
        value: str | None
        if rest[:1] in ("'", '"'):
            quote = rest[0]
            body = rest[1:]
            while True:
                end = _closing_quote(body, quote)
                if end >= 0 or i >= len(lines):
                    break
                body += "\n" + lines[i]
                i += 1
            if end < 0:
                return None, None
            raw = body[:end]
            if quote == "'":
                value = re.sub(r"\\(.)", lambda m: "\\" + m.group(1), raw)
            else:
                value = re.sub(r"\\([abcfnrtv$\"\\])", lambda m: _ESCAPES[m.group(1)], raw)
                value = _expanded(value, known, budget)
        else:
            value = rest.split(" #", 1)[0].rstrip()
            value = _expanded(value, known, budget)
        if value is None:
            return None, (number, f"`{key}` expands past {total:,} characters (values referring to each other): "
                                  "the file's variables are read as unknown")
        budget -= len(value)
        result[key] = value
        known[key] = (value, "")
    return result, None


def _expanded(value: str, known: dict[str, tuple[str, str]], budget: int) -> str | None:
    """A `.env` value interpolated from the keys above it; None when it could hold more than `budget`
    characters (its length plus the values of every variable it names: an upper bound, found before expanding)."""
    if "$" not in value:
        return value if len(value) <= budget else None
    bound = len(value) + sum(len(known.get(m.group(1), ("",))[0]) for m in _REFERENCE.finditer(value))
    return interpolate(value, known).text if bound <= budget else None


def _closing_quote(text: str, quote: str) -> int:
    escaped = False
    for index, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == quote:
            return index
    return -1


# --- a project: the variables and env files of each Compose service -------------------------------
@dataclass
class EnvFile:
    """One `env_file` entry of a service: the file (when it is in the run) and its variables."""

    node: Node  # the entry (a path string, or a `{path, required}` mapping)
    path: str
    source: SourceFile | None
    variables: dict[str, str] | None  # None: not in the run, or not readable: its keys are unknown
    required: bool = True


@dataclass
class Project:
    """What Compose reads beside a service's file: the `.env` variables and the service's env files."""

    variables: dict[str, tuple[str, str]] = field(default_factory=dict)
    env_files: list[EnvFile] = field(default_factory=list)


_projects: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_EMPTY = Project()


def project(obj: K8sObject) -> Project:
    """The project `bind_projects` found for a Compose service (empty when none was bound)."""
    return _projects.get(obj, _EMPTY)


def project_of_service(service: Node) -> Project:
    """The project bound to the Compose service whose node this is (empty when none)."""
    for obj, bound in list(_projects.items()):
        if obj.node is service:
            return bound
    return _EMPTY


def _dirname(path: str) -> str:
    return os.path.dirname(os.path.normpath(path))


def bind_projects(world: World) -> list[tuple[SourceFile, int, str]]:
    """For every Compose service of the world: the `.env` file beside its Compose file (when that file is in
    the run: Compose reads it from the project directory, the Compose file's folder), and its `env_file`
    entries that are in the run. Run once the world holds every source, before invocations are read.
    Returns what the reader refused, as (file, line, message) for notes."""
    problems: list[tuple[SourceFile, int, str]] = []
    services = world.of_kind("ComposeService")
    if not services:
        return problems
    by_path: dict[str, SourceFile] = {}
    for source in world.sources:
        by_path.setdefault(os.path.normpath(source.path), source)
    dotenvs: dict[str, dict[str, tuple[str, str]]] = {}
    nesting_checked: set[int] = set()
    for obj in services:
        if id(obj.source) not in nesting_checked:
            nesting_checked.add(id(obj.source))
            too_deep = nesting_problem(obj.source.text)
            if too_deep is not None:
                problems.append((obj.source, obj.source.line_col(too_deep)[0],
                                 f"Compose interpolation nested deeper than {MAX_NESTING} levels: read as unknown"))
        folder = _dirname(obj.source.path)
        if folder not in dotenvs:
            found = by_path.get(os.path.normpath(os.path.join(folder, DOTENV)))
            parsed, problem = read_dotenv(found.text) if found is not None else (None, None)
            if found is not None and problem is not None:
                problems.append((found, problem[0], problem[1]))
            label = found.display_path if found is not None else DOTENV
            dotenvs[folder] = {k: (v, label) for k, v in (parsed or {}).items()}
        variables = dotenvs[folder]
        bound = Project(variables)
        entries = obj.node.get("env_file")
        items = entries.items if isinstance(entries, Sequence) else [entries] if entries is not None else []
        for item in items:
            path_node: Node | None = item
            required = True
            if isinstance(item, Mapping):
                path_node = item.get("path")
                required = scalar_str(item.get("required")) not in ("false", "False")
            if not isinstance(path_node, Scalar) or not isinstance(path_node.value, str):
                continue
            written = interpolate(path_node.value, variables)
            path = written.text
            in_run = None if written.unresolved else by_path.get(os.path.normpath(os.path.join(folder, path)))
            parsed_file, problem = read_dotenv(in_run.text) if in_run is not None else (None, None)
            if in_run is not None and problem is not None and (in_run, problem[0], problem[1]) not in problems:
                problems.append((in_run, problem[0], problem[1]))
            bound.env_files.append(EnvFile(item, path, in_run, parsed_file, required))
        _projects[obj] = bound
    return problems


def nesting_problem(text: str) -> int | None:
    """The offset of the first `${` nested deeper than MAX_NESTING in a file's text (braces counted as
    `_closing_brace` counts them), or None: what `interpolate` reads as unknown, for a note."""
    if text.count("${") <= MAX_NESTING:
        return None
    depth = 0
    for match in re.finditer(r"\$\{|[{}]", text):
        token = match.group(0)
        if token == "}":
            depth = max(depth - 1, 0)
        elif token == "${" or depth:
            depth += 1
            if depth > MAX_NESTING + 1:
                return match.start()
    return None


class DerivedScalar(Scalar):
    """Not a scalar of the file: a word or value Compose makes of one (quotes removed, variables put in).
    Positions map into the file through its own offsets; its file text is not its text, so nothing may be
    edited through it."""

    __slots__ = ("_offsets",)  # its own, not the file's (`Scalar._offsets`): they are not the file's scalar's


def derived_scalar(original: Scalar, text: str, offsets: list[int], start: int, end: int) -> Scalar:
    """A scalar standing for a part of `original` after Compose read it (one argv word, an interpolated
    value): `text` with the file offset of each character (`offsets`, one more for the end)."""
    scalar = DerivedScalar(start, end, original.source, text, text, original.style)
    scalar._offsets = offsets
    return scalar


@dataclass
class ComposeWord:
    """One argv word of a Compose `entrypoint`/`command` as Compose passes it: its text, its span in the
    file, the scalar to map positions inside it, and whether its value is unknown."""

    text: str
    start: int
    end: int
    node: Scalar
    dynamic: bool
    notes: list[str] = field(default_factory=list)


def _file_index(scalar: Scalar, index: int) -> int:
    return scalar.source_index(index)


def argv_words(node: Node | None, variables: dict[str, tuple[str, str]]) -> list[ComposeWord] | None:
    """The argv Compose builds from an `entrypoint` or `command` (a string, split by go-shellwords after
    interpolation, or a list, each item interpolated); None when absent, not readable, or refused."""
    if isinstance(node, Scalar):
        if not isinstance(node.value, str):
            return None
        done = interpolate(node.value, variables)
        if done.invalid:
            return None
        words = shell_words(done.text)
        if words is None:
            return None
        result: list[ComposeWord] = []
        unknown = bytearray(len(done.text))  # 1 where the output character is in an unresolved span
        for a, b in done.unresolved_spans:
            unknown[a:b] = b"\x01" * (b - a)
        for word in words:
            if not word.chars and word.begin < 0:
                continue
            begin = max(word.begin, 0)
            first = done.starts[begin] if begin < len(done.starts) else len(node.value)
            last = done.ends[word.end - 1] if 0 < word.end <= len(done.ends) else first
            start, end = _file_index(node, first), _file_index(node, last)
            dynamic = any(unknown[c] for c in word.chars)
            notes = _word_notes(done, word)
            plain = not word.quoted and not notes and not dynamic and node.value[first:last] == word.text
            if plain:
                holder = node
            else:
                offsets = [_file_index(node, done.starts[c]) for c in word.chars] + [end]
                holder = derived_scalar(node, word.text, offsets, start, end)
            result.append(ComposeWord(word.text, start, end, holder, dynamic, notes))
        return result
    if isinstance(node, Sequence):
        listed: list[ComposeWord] = []
        for item in node.items:
            if not isinstance(item, Scalar):
                continue
            raw = scalar_str(item) or ""
            if "$" not in raw:
                listed.append(ComposeWord(raw, item.start, item.end, item, False))
                continue
            done = interpolate(raw, variables)
            if done.invalid:
                return None
            offsets = [_file_index(item, c) for c in done.starts] + [item.end]
            holder = derived_scalar(item, done.text, offsets, item.start, item.end)
            listed.append(ComposeWord(done.text, item.start, item.end, holder, done.unresolved, done.notes))
        return listed
    return None


def _word_notes(done: Interpolated, word: Word) -> list[str]:
    """The interpolation notes of the `${...}` a word's characters come from."""
    if not done.notes:
        return []
    covered = any(done.ends[c] - done.starts[c] > 1 for c in word.chars)
    return done.notes if covered else []  # shared, not copied: a copy per word is words x notes


def interpolated_value(node: Node | None, variables: dict[str, tuple[str, str]]) -> Interpolated | None:
    """A scalar's string after interpolation (numbers and booleans as YAML wrote them); None for others."""
    if not isinstance(node, Scalar) or node.value is None:
        return None
    return interpolate(node.text if not isinstance(node.value, str) else node.value, variables)


__all__ = ["Interpolated", "interpolate", "Word", "shell_words", "parse_dotenv", "EnvFile", "Project", "project", "project_of_service",
           "bind_projects", "DerivedScalar", "derived_scalar", "ComposeWord", "argv_words", "interpolated_value", "DOTENV", "apply_extends"]


# --- `extends`: a service built on another one (compose-go loader/extends.go, override/merge.go) ------------
# Compose merges the base service under the service that extends it: mappings key by key (the extending
# service's value wins), `command`, `entrypoint` and `healthcheck.test` replaced, `environment` merged by
# variable name, other sequences (ports, env_file, volumes) appended. compose-go at e70e961:
# loader/extends.go lines 50-133 (`extends: NAME` or `{service, file}`, the file relative to the extending
# file, recursively, cycles refused), override/merge.go lines 45-70 (the special cases) and 190-226.
_EXTENDS_REPLACED = ("command", "entrypoint", "test")
_EXTENDS_DEPTH = 10


def apply_extends(world: World) -> None:
    """Merge into every Compose service with `extends` the service it names (in the same file, or `file:` when
    that file is in the run), before anything reads the services. Values keep the positions of the file
    that wrote them, so findings in an inherited `command` point at the base service's lines."""
    services = world.of_kind("ComposeService")
    if not any("extends" in obj.node for obj in services):
        return
    by_key = {(os.path.normpath(obj.source.path), obj.name): obj for obj in services}
    done: set[int] = set()

    def resolve(obj: K8sObject, depth: int, seen: set[int]) -> None:
        if id(obj) in done or id(obj) in seen or depth > _EXTENDS_DEPTH:
            return
        seen.add(id(obj))
        base = _extended(obj, by_key)
        if base is not None:
            resolve(base, depth + 1, seen)
            _merge_mapping(obj.node, base.node)
        done.add(id(obj))

    for obj in services:
        resolve(obj, 0, set())


def _extended(obj: K8sObject, by_key: dict) -> K8sObject | None:
    """The service `extends` names, when it is in the run."""
    extends = obj.node.get("extends")
    name = scalar_str(extends) if isinstance(extends, Scalar) else None
    path = os.path.normpath(obj.source.path)
    if isinstance(extends, Mapping):
        name = scalar_str(extends.get("service"))
        file = scalar_str(extends.get("file"))
        if file:
            path = os.path.normpath(os.path.join(_dirname(obj.source.path), file))
    if not name:
        return None
    base = by_key.get((path, name))
    return base if base is not obj else None


def _merge_mapping(node: Mapping, base: Mapping, replaced: tuple[str, ...] = _EXTENDS_REPLACED) -> None:
    """`base`'s keys merged into `node` in place, as Compose merges an extended service."""
    own = {key.text: i for i, (key, _) in enumerate(node.items) if isinstance(key, Scalar)}
    for key, value in base.items:
        if not isinstance(key, Scalar) or key.text == "extends":
            continue
        if key.text not in own:
            node.items.append((key, value))
            continue
        mine = node.items[own[key.text]][1]
        if key.text in replaced:
            continue
        if isinstance(mine, Mapping) and isinstance(value, Mapping):
            _merge_mapping(mine, value, ("test",))
        elif key.text == "environment" and isinstance(mine, Sequence) and isinstance(value, Sequence):
            names = {str(scalar_str(item) or "").split("=", 1)[0] for item in mine.items}
            mine.items[:0] = [item for item in value.items if str(scalar_str(item) or "").split("=", 1)[0] not in names]
        elif isinstance(mine, Sequence) and isinstance(value, Sequence):
            mine.items[:0] = list(value.items)
    node._index = None
