"""The one place that parses YAML: every document of a file into nodes that know where they stand.

Parsing uses ruamel.yaml's C composer (fast, safe: no object construction, no tags executed). Scalars are
resolved the way Kubernetes resolves them (YAML 1.1: `0755` is octal, `on` is true). Aliases resolve to
the same node object, so a walk that remembers what it has seen is safe against alias bombs.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterator

from vllmlint.finding import Span


class SourceFile:
    """A file's text with a line index, turning character offsets into 1-based line/column."""

    def __init__(self, path: str, text: str, display_path: str | None = None):
        self.path = path
        self.display_path = display_path or path
        self.text = text
        self._line_starts: list[int] | None = None
        self.duplicate_keys: list[tuple[int, int, str]] = []  # (start, end, key) of repeated mapping keys

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            if "\r" in self.text:  # YAML also breaks lines at a lone CR (old Mac files)
                starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", self.text)]
            else:
                starts = [0]
                find = self.text.find
                pos = find("\n")
                while pos != -1:
                    starts.append(pos + 1)
                    pos = find("\n", pos + 1)
            self._line_starts = starts
        return self._line_starts

    def line_col(self, index: int) -> tuple[int, int]:
        line = bisect_right(self.line_starts, index) - 1
        return line + 1, index - self.line_starts[line] + 1

    def span(self, start: int, end: int) -> Span:
        line, col = self.line_col(start)
        end_line, end_col = self.line_col(end)
        return Span(start, end, line, col, end_line, end_col)

    def line_text(self, line: int) -> str:
        starts = self.line_starts
        if not 1 <= line <= len(starts):
            return ""
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[starts[line - 1]:end].rstrip("\r")


class Node:
    __slots__ = ("start", "end", "source")

    def __init__(self, start: int, end: int, source: SourceFile):
        self.start = start
        self.end = end
        self.source = source

    @property
    def span(self) -> Span:
        return self.source.span(self.start, self.end)

    @property
    def line(self) -> int:
        return self.source.line_col(self.start)[0]


class Scalar(Node):
    __slots__ = ("value", "text", "style", "_offsets")

    def __init__(self, start, end, source, value, text, style):
        # No super().__init__: a manifest has hundreds of thousands of scalars.
        self.start = start
        self.end = end
        self.source = source
        self._offsets: list[int] | None = None
        self.value = value  # resolved: str, int, float, bool or None
        self.text = text  # the scalar's string content
        self.style = style  # None (plain), "'", '"', "|", ">"

    def __repr__(self):
        return f"Scalar({self.value!r})"

    def source_index(self, offset: int) -> int:
        """Character offset into the file of `offset` into this scalar's text (also inside block scalars)."""
        return _offset_map(self)[min(max(offset, 0), len(self.text))]


class Mapping(Node):
    __slots__ = ("items", "_index")

    def __init__(self, start, end, source):
        super().__init__(start, end, source)
        self.items: list[tuple[Node, Node]] = []
        self._index: dict | None = None

    def __repr__(self):
        return f"Mapping({len(self.items)} keys)"

    def _keys(self) -> dict:
        if self._index is None:
            index = {}
            for key, value in self.items:
                if isinstance(key, Scalar):
                    # Keys by their text: Kubernetes field names are strings even where YAML 1.1 says bool.
                    index.setdefault(key.text, (key, value))
            self._index = index
        return self._index

    def get(self, key: str) -> Node | None:
        pair = self._keys().get(key)
        return pair[1] if pair else None

    def key_node(self, key: str) -> Node | None:
        pair = self._keys().get(key)
        return pair[0] if pair else None

    def __contains__(self, key: str) -> bool:
        return key in self._keys()

    def keys(self) -> list[str]:
        return list(self._keys())

    def pairs(self) -> Iterator[tuple[str, Node]]:
        for key, (_, value) in self._keys().items():
            yield key, value


class Sequence(Node):
    __slots__ = ("items",)

    def __init__(self, start, end, source):
        super().__init__(start, end, source)
        self.items: list[Node] = []

    def __repr__(self):
        return f"Sequence({len(self.items)} items)"


@dataclass
class Document:
    source: SourceFile
    root: Node | None
    index: int  # 0-based document number in the file


class YAMLSyntaxError(Exception):
    def __init__(self, message: str, line: int, col: int, index: int):
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.index = index


# --- scalar resolution, YAML 1.1 as Kubernetes (go-yaml) reads it ---------------------------------
_BOOL = {"y": True, "yes": True, "true": True, "on": True, "n": False, "no": False, "false": False, "off": False}
_NULL = {"", "~", "null", "Null", "NULL"}
_INT = re.compile(r"^[-+]?(0|[1-9][0-9_]*)$")
_OCT = re.compile(r"^[-+]?0[0-7_]+$")
_OCT_O = re.compile(r"^[-+]?0o[0-7_]+$")
_HEX = re.compile(r"^[-+]?0x[0-9a-fA-F_]+$")
_BIN = re.compile(r"^[-+]?0b[01_]+$")
_FLOAT = re.compile(r"^[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+]?[0-9]+)?$|^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$")
_SPECIAL_FLOAT = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}


_MAYBE_SPECIAL = frozenset("0123456789+-.~nNyYtTfFoO")


def resolve_plain(text: str):
    """The value of a plain (unquoted) scalar under YAML 1.1 rules."""
    if text and text[0] not in _MAYBE_SPECIAL:
        return text  # most scalars: names, images, flags
    if text in _NULL:
        return None
    lower = text.lower()
    if lower in _BOOL and (text.islower() or text.isupper() or text.istitle()):
        return _BOOL[lower]
    if not text or text[0] not in "0123456789+-.":
        return text
    try:
        if _INT.match(text):
            return int(text.replace("_", ""))
        if _OCT.match(text):
            return int(text.replace("_", ""), 8)
        if _OCT_O.match(text):
            return int(text.replace("_", "").replace("0o", ""), 8)
        if _HEX.match(text):
            return int(text.replace("_", ""), 16)
        if _BIN.match(text):
            return int(text.replace("_", "").replace("0b", ""), 2)
        if _FLOAT.match(text) and text not in (".", "+.", "-."):
            return float(text.replace("_", ""))
    except ValueError:
        return text
    if lower in _SPECIAL_FLOAT:
        return _SPECIAL_FLOAT[lower]
    return text


# --- building the model from composed nodes --------------------------------------------------------
def _convert(node, source: SourceFile, memo: dict) -> Node:
    """Turn a ruamel composed node into our node. Collections are converted once each (memo by id), so
    aliases share one node and alias bombs cost nothing; scalars are leaves and need no memo."""
    if node.id == "scalar":
        text = node.value
        style = node.style or None  # the C composer reports plain scalars as ''
        return Scalar(node.start_mark.index, node.end_mark.index, source,
                      resolve_plain(text) if style is None else text, text, style)
    key = id(node)
    done = memo.get(key)
    if done is not None:
        return done
    start, end = node.start_mark.index, node.end_mark.index
    if node.id == "sequence":
        result = Sequence(start, end, source)
        memo[key] = result
        result.items = [_convert(item, source, memo) for item in node.value]
        return result
    result = Mapping(start, end, source)
    memo[key] = result
    merged: list[tuple[Node, Node]] = []
    append = result.items.append
    pairs = node.value
    if len({key.value for key, _ in pairs if key.id == "scalar"}) < sum(key.id == "scalar" for key, _ in pairs):
        _record_duplicates(pairs, source)
    for key_node, value_node in pairs:
        if key_node.id == "scalar" and key_node.value == "<<" and not key_node.style:
            sources = value_node.value if value_node.id == "sequence" else [value_node]
            for merge_source in sources:
                converted = _convert(merge_source, source, memo)
                if isinstance(converted, Mapping):
                    merged.extend(converted.items)
            continue
        append((_convert(key_node, source, memo), _convert(value_node, source, memo)))
    if merged:
        # Explicit keys win over merged ones: merged pairs go last, and lookups keep the first.
        result.items.extend(merged)
    return result


def parse_documents(source: SourceFile) -> tuple[list[Document], YAMLSyntaxError | None]:
    """Every document that parses, in order, and the syntax error that stopped the parse (if any).

    libyaml (the fast C parser) rejects some valid YAML 1.2, such as `{image: repo:tag}` in flow style;
    when it fails, the pure-Python parser gets a second try before anything is reported.
    """
    documents, error = _compose(source, pure=False)
    if error is not None:
        retry, retry_error = _compose(source, pure=True)
        if retry_error is None:
            return retry, None
    return documents, error


_RESOLVER = None


def _tag_only_resolver():
    """A resolver that only names the node kind. Scalars are resolved by `resolve_plain` (YAML 1.1, as
    Kubernetes does); ruamel's versioned resolver costs more than the whole C parse."""
    global _RESOLVER
    if _RESOLVER is None:
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
        from ruamel.yaml.resolver import BaseResolver

        tags = {ScalarNode: "tag:yaml.org,2002:str", SequenceNode: "tag:yaml.org,2002:seq",
                MappingNode: "tag:yaml.org,2002:map"}

        class TagOnlyResolver(BaseResolver):
            def __init__(self, version=None, loadumper=None, loader=None):
                super().__init__(loadumper=loadumper or loader)

            def resolve(self, kind, value, implicit):
                return tags[kind]

        _RESOLVER = TagOnlyResolver
    return _RESOLVER


def _record_duplicates(pairs, source: SourceFile) -> None:
    seen: set[str] = set()
    for key, _ in pairs:
        if key.id == "scalar":
            if key.value in seen:
                source.duplicate_keys.append((key.start_mark.index, key.end_mark.index, key.value))
            seen.add(key.value)


def _compose(source: SourceFile, pure: bool) -> tuple[list[Document], YAMLSyntaxError | None]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    source.duplicate_keys = []  # a retry with the other parser starts over
    yaml = YAML(typ="safe", pure=pure)
    if yaml.Parser.__name__ == "CParser":  # the pure-Python composer wants ruamel's own Tag objects
        yaml.Resolver = _tag_only_resolver()
    documents: list[Document] = []
    try:
        for number, composed in enumerate(yaml.compose_all(source.text)):
            # One memo per document: aliases never cross documents, and ids of freed nodes get reused.
            root = _convert(composed, source, {}) if composed is not None else None
            documents.append(Document(source, root, number))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        index = mark.index if mark is not None else 0
        line, col = source.line_col(min(index, len(source.text)))
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        if exc.context and exc.problem:
            problem = f"{exc.context.strip()}: {exc.problem.strip()}"
        return documents, YAMLSyntaxError(problem, line, col, index)
    except YAMLError as exc:  # reader errors (control characters) carry no mark
        return documents, YAMLSyntaxError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 1, 1, 0)
    except RecursionError:
        return documents, YAMLSyntaxError("nesting too deep to be a manifest", 1, 1, 0)
    return documents, None


# --- offsets inside scalars ------------------------------------------------------------------------
def _offset_map(scalar: Scalar) -> list[int]:
    """For each character of the scalar's text (plus its end), its offset in the file.

    The text of a quoted, folded or block scalar differs from its source (indentation, quotes, escapes,
    folding). Walk both in step: each text character is matched to the next equal source character;
    folded line breaks match any run of whitespace. Good enough to put a caret on an argv token.
    """
    if scalar._offsets is not None:
        return scalar._offsets
    text, src = scalar.text, scalar.source.text
    pos, end = scalar.start, min(scalar.end, len(src))
    if scalar.style in ("'", '"'):
        pos += 1
    elif scalar.style in ("|", ">"):
        newline = src.find("\n", pos)
        pos = newline + 1 if newline != -1 else end
    mapping = []
    for ch in text:
        probe = pos
        if ch in " \n\t":
            while probe < end and src[probe] != ch and src[probe] not in " \n\t":
                probe += 1
        else:
            while probe < end and src[probe] != ch:
                probe += 1
        if probe >= end:  # lost the alignment (an escape sequence): stay where we are
            probe = min(pos, end)
        mapping.append(probe)
        pos = probe + 1 if probe < end else probe
    mapping.append(min(pos, end))
    scalar._offsets = mapping
    return mapping


def walk(node: Node | None) -> Iterator[Node]:
    """Every node below `node`, each once even when aliases repeat it."""
    if node is None:
        return
    seen: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, Mapping):
            for key, value in reversed(current.items):
                stack.append(value)
                stack.append(key)
        elif isinstance(current, Sequence):
            stack.extend(reversed(current.items))


def scalar_str(node: Node | None) -> str | None:
    """A scalar's value as a string as Kubernetes would see it in a string field, else None."""
    if not isinstance(node, Scalar) or node.value is None:
        return None
    if isinstance(node.value, bool):
        return node.text
    return node.text if isinstance(node.value, (int, float)) else str(node.value)


def to_python(node: Node | None, _depth: int = 0):
    """Plain Python data (for small subtrees such as labels or selectors)."""
    if _depth > 50 or node is None:
        return None
    if isinstance(node, Scalar):
        return node.value
    if isinstance(node, Sequence):
        return [to_python(item, _depth + 1) for item in node.items]
    if isinstance(node, Mapping):
        return {key: to_python(value, _depth + 1) for key, value in node.pairs()}
    return None
