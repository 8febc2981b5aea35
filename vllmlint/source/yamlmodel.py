"""The one place that parses YAML: every document of a file into nodes that know where they stand.

Parsing uses ruamel.yaml's C composer (fast, safe: no object construction, no tags executed). Scalars are
resolved the way Kubernetes resolves them (YAML 1.1: `0755` is octal, `on` is true). Aliases resolve to
the same node object, so a walk that remembers what it has seen is safe against alias bombs; `to_python`,
which copies, bounds how often it re-expands a shared node and stops at cycles (`&a [*a]`).

Hostile input: nesting deeper than MAX_DEPTH levels is refused before composing (libyaml's composer
recurses on the C stack and overflows it from about 30,000 levels: a segfault, no output), with a VL001
at the collection that goes too deep. Escaped UTF-16 surrogate pairs (`"\\ud83e\\udd99"`, as `json.dumps`
writes emoji) are decoded as JSON decodes them; a lone surrogate becomes U+FFFD, so output encoding never
fails.
"""
from __future__ import annotations

import re
import warnings
from bisect import bisect_right
from itertools import accumulate
from vllmlint.records import dataclass
from typing import Iterator
from typing import Sequence as SequenceOf  # `Sequence` is the YAML node below

from vllmlint.finding import Span
from vllmlint.lazyre import lazy_compile


class SourceFile:
    """A file's text with a line index, turning character offsets into 1-based line/column."""

    def __init__(self, path: str, text: str, display_path: str | None = None):
        self.path = path
        self.display_path = display_path or path
        self.text = text
        self._line_starts: list[int] | None = None
        self.duplicate_keys: list[tuple[int, int, str]] = []  # (start, end, key) of repeated mapping keys
        self.scalar_offsets: dict | None = None  # `Scalar._offsets` of this file's scalars, by what decides them
        # The part of `text` that is this source's (a Markdown shell block, read as a script of its own from a
        # text its file's other shell blocks share); None: all of it.
        self.region: tuple[int, int] | None = None

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            if "\r" in self.text:  # YAML also breaks lines at a lone CR (old Mac files)
                starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", self.text)]
            else:  # each line's length plus its newline, summed: no Python-level step per line
                starts = list(accumulate(map((1).__add__, map(len, self.text.split("\n"))), initial=0))
                del starts[-1]  # the end of the text
            shared = _Shared.positions
            if starts[-1] < len(shared):  # the run's shared ints, not one of its own per line (_Shared)
                starts = list(map(shared.__getitem__, starts))
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
    __slots__ = ("value", "text", "style")

    def __init__(self, start, end, source, value, text, style):
        # No super().__init__: a manifest has hundreds of thousands of scalars.
        self.start = start
        self.end = end
        self.source = source
        self.value = value  # resolved: str, int, float, bool or None
        self.text = text  # the scalar's string content
        self.style = style  # None (plain), "'", '"', "|", ">"

    def __repr__(self):
        return f"Scalar({self.value!r})"

    def source_index(self, offset: int) -> int:
        """Character offset into the file of `offset` into this scalar's text (also inside block scalars)."""
        return _offset_map(self)[min(max(offset, 0), len(self.text))]

    def source_indexes(self) -> SequenceOf[int]:
        """`source_index` of every offset 0..len(text), as one sequence (for a reader mapping every word of a
        script: `source_indexes()[offset]` is `source_index(offset)` for an offset inside the text)."""
        return _offset_map(self)

    @property
    def _offsets(self) -> SequenceOf[int] | None:
        """The offset map `_offset_map` computed, kept by the file (`SourceFile.scalar_offsets`) rather than in a
        slot of every scalar (a slot more made each of a run's millions of scalars 16 bytes larger, for the few
        whose offsets are ever asked). Keyed by what decides it: the map is a function of the file's text, the
        scalar's place, style and text (a scalar a tool derives with offsets of its own keeps them in a slot)."""
        table = self.source.scalar_offsets
        return table.get((self.start, self.end, self.style, self.text)) if table else None

    @_offsets.setter
    def _offsets(self, offsets: SequenceOf[int] | None) -> None:
        source = self.source
        key = (self.start, self.end, self.style, self.text)
        if offsets is None:
            if source.scalar_offsets:
                source.scalar_offsets.pop(key, None)
            return
        if source.scalar_offsets is None:
            source.scalar_offsets = {}
        source.scalar_offsets[key] = offsets


class Mapping(Node):
    __slots__ = ("items", "_index")

    def __init__(self, start, end, source):
        super().__init__(start, end, source)
        self.items: list[tuple[Node, Node]] = []
        self._index: dict | tuple | None = None  # _keys()

    def __repr__(self):
        return f"Mapping({len(self.items)} keys)"

    def _keys(self) -> dict[str, int] | tuple[str | None, ...]:
        """Key text -> position of its pair in `items` (positions, not pairs: a run holds a few hundred
        thousand mappings, and a tuple per key was a tenth of a large run's memory). A small mapping whose keys
        are all different keeps instead the tuple of its keys' texts in `items` order (None for a key that is no
        scalar), one tuple shared by every mapping with the same keys (`_shared_keys`): a dict per mapping was
        the largest part of a large run's memory after the nodes themselves."""
        if self._index is None:
            self._index = _key_index(self.items)
        return self._index

    def _position(self, key: str) -> int | None:
        index = self._index if self._index is not None else self._keys()
        if type(index) is tuple:
            return index.index(key) if key in index else None
        return index.get(key)  # type: ignore[union-attr]

    def get(self, key: str) -> Node | None:
        index = self._index  # `_position` inlined: rules ask hundreds of thousands of times
        if index is None:
            index = self._keys()
        if type(index) is tuple:
            position = index.index(key) if key in index else None
        else:
            position = index.get(key)  # type: ignore[union-attr]
        return self.items[position][1] if position is not None else None

    def key_node(self, key: str) -> Node | None:
        position = self._position(key)
        return self.items[position][0] if position is not None else None

    def __contains__(self, key: str) -> bool:
        return key in self._keys()

    def keys(self) -> list[str]:
        index = self._keys()
        if isinstance(index, tuple):
            return [key for key in index if key is not None]
        return list(index)

    def pairs(self) -> Iterator[tuple[str, Node]]:
        items = self.items
        index = self._keys()
        if isinstance(index, tuple):
            for position, key in enumerate(index):
                if key is not None:
                    yield key, items[position][1]
            return
        for key, position in index.items():
            yield key, items[position][1]


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
_SURROGATE = lazy_compile("[\ud800-\udfff]")


def fix_surrogates(text: str) -> str:
    """Escaped surrogate pairs (`\\ud83e\\udd99`) joined into the one character they encode, as JSON
    decoders do (RFC 8259 section 7); a lone surrogate, which no encoding can write, becomes U+FFFD."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _convert(node, source: SourceFile, memo: dict, shared: _Shared) -> Node:
    """Turn a ruamel composed node into our node. Collections are converted once each (memo by id), so
    aliases share one node and alias bombs cost nothing; scalars are leaves and need no memo. Offsets and
    short texts are the run's shared objects (`_Shared`): the composer makes a new int and str for each."""
    if node.id == "scalar":
        return _scalar(node, source, shared)
    positions = shared.positions
    key = id(node)
    done = memo.get(key)
    if done is not None:
        return done
    start, end = node.start_mark.index, node.end_mark.index
    if end < len(positions):
        start, end = positions[start], positions[end]
    if node.id == "sequence":
        sequence = Sequence(start, end, source)
        memo[key] = sequence
        sequence.items = [_scalar(item, source, shared) if item.id == "scalar" else _convert(item, source, memo, shared)
                          for item in node.value]
        return sequence
    result = Mapping(start, end, source)
    memo[key] = result
    merged: list[tuple[Node, Node]] = []
    append = result.items.append
    pairs = node.value
    names = [key.value for key, _ in pairs if key.id == "scalar"]
    if len(set(names)) < len(names):
        _record_duplicates(pairs, source)
    for key_node, value_node in pairs:
        if key_node.id == "scalar":
            if key_node.value == "<<" and not key_node.style:
                sources = value_node.value if value_node.id == "sequence" else [value_node]
                for merge_source in sources:
                    converted = _convert(merge_source, source, memo, shared)
                    if isinstance(converted, Mapping):
                        merged.extend(converted.items)
                continue
            key_converted: Node = _scalar(key_node, source, shared)
        else:
            key_converted = _convert(key_node, source, memo, shared)
        append((key_converted, _scalar(value_node, source, shared) if value_node.id == "scalar"
                else _convert(value_node, source, memo, shared)))
    if merged:
        # Explicit keys win over merged ones: merged pairs go last, and lookups keep the first.
        result.items.extend(merged)
    return result


def parse_documents(source: SourceFile) -> tuple[list[Document], YAMLSyntaxError | None]:
    """Every document that parses, in order, and the syntax error that stopped the parse (if any).

    libyaml (the fast C parser) rejects some valid YAML 1.2, such as `{image: repo:tag}` in flow style;
    when it fails, the pure-Python parser gets a second try before anything is reported. Nesting deeper
    than MAX_DEPTH is an error at the collection that goes too deep; the documents before it are kept.
    """
    deep = _too_deep(source.text, pure=False) if _maybe_deep(source.text) else None
    text = source.text if deep is None else source.text[:deep[1]]
    documents, error = _compose(source, text, pure=False)
    if error is not None:
        # The retry starts at the document libyaml stopped in: the ones before it parsed, and the pure-Python
        # parser is about 20 times slower (a 2 MB Helm output with one bad document at the end took 30 s).
        base = _retry_start(source.text, documents)
        kept = [d for d in documents if d.root is None or d.root.end <= base] if base else []
        duplicates = [d for d in source.duplicate_keys if d[0] < base]
        pure_deep = None
        if deep is None and _maybe_deep(text[base:]):
            # Where libyaml stopped early, the pure parser may go deeper: its depth first (its scanner is
            # quadratic in the flow depth, and its composer recurses), so that it composes no deeper.
            found = _too_deep(text[base:], pure=True)
            pure_deep = (found[0] + base, found[1] + base) if found is not None else None
        retry, retry_error = _compose(source, text if pure_deep is None else text[:pure_deep[1]], pure=True,
                                      base=base)
        for number, document in enumerate(retry, len(kept)):
            document.index = number
        retry = kept + retry
        source.duplicate_keys = duplicates + source.duplicate_keys
        if retry_error is None:
            documents, error, deep = retry, None, pure_deep
        elif retry_error.message == _RECURSION and deep is None:
            # Only the pure-Python parser got that deep (libyaml stopped earlier on something it rejects):
            # find where, with the pure parser's events (slow, so only now).
            deep = _too_deep(source.text[base:], pure=True)
            if deep is not None:  # libyaml's complaint was one the pure parser does not share
                deep = (deep[0] + base, deep[1] + base)
                documents, error = [d for d in retry if d.root is None or d.root.end <= deep[1]], None
    if deep is not None and error is None:
        line, col = source.line_col(deep[0])
        error = YAMLSyntaxError(f"nesting deeper than {MAX_DEPTH} levels: not a manifest vllmlint reads", line, col,
                                deep[0])
    return documents, error


def parse_region(source: SourceFile, start: int, end: int) -> tuple[list[Document], YAMLSyntaxError | None]:
    """`parse_documents` of source.text[start:end] alone (a YAML block of a Markdown file), with offsets, lines and
    columns in the whole text, and the nodes' source `source`: blocks share their file's text instead of each
    holding a copy of it blanked outside the block."""
    local = SourceFile(source.path, source.text[start:end], source.display_path)
    documents, error = parse_documents(local)
    for document in documents:
        document.source = source
        for node in walk(document.root):
            node.start += start
            node.end += start
            node.source = source
    source.duplicate_keys = [(a + start, b + start, key) for a, b, key in local.duplicate_keys]
    if error is not None:
        error.index += start
        error.line, error.col = source.line_col(min(error.index, len(source.text)))
    return documents, error


_DOCUMENT_START = lazy_compile(r"^---(?=[ \t\r\n]|$)", re.M)


def _retry_start(text: str, documents: list[Document]) -> int:
    """Offset of the `---` that starts the document after the last one composed (0: from the start).
    A `---` at the start of a line always starts a document (YAML 1.2.2 section 9.1.3: inside a scalar too)."""
    ends = [d.root.end for d in documents if d.root is not None]
    if not ends:
        return 0
    marker = _DOCUMENT_START.search(text, max(ends))
    return marker.start() if marker is not None else 0


# --- nesting depth, checked before composing ------------------------------------------------------
# Kubernetes objects nest about 15 levels (a CRD's openAPIV3Schema 30 or so); libyaml's composer recurses once
# per level on the C stack, so a few tens of thousands of levels crash the process. 100 leaves room for any
# real manifest and costs nothing to refuse.
MAX_DEPTH = 100
_FLOW_FAST = 40  # with at most this many flow levels...
# ...and no line indented 28 columns, depth < MAX_DEPTH. YAML 1.1 also breaks lines at CR, NEL, LS and PS
# (the second pattern; the first is three times faster, for the usual text without them).
_DEEP_PREFIX = re.compile(r"^[ \t?:-]{28,}", re.M)
_DEEP_PREFIX_ANY_BREAK = lazy_compile("(?:^|[\r\x85\u2028\u2029])[ \t?:-]{28,}", re.M)
_BRACKET = lazy_compile(r"[][{}]")


def _maybe_deep(text: str) -> bool:
    """A cheap bound on the nesting depth: a block collection nests in its parent only at a deeper
    indentation (`- ` compact entries count as indentation), at most two levels per column, and flow
    collections add at most their bracket depth. Only when this bound exceeds MAX_DEPTH is the file parsed
    event by event to find the real depth."""
    other_breaks = "\r" in text or not text.isascii() and ("\x85" in text or "\u2028" in text or "\u2029" in text)
    if (_DEEP_PREFIX_ANY_BREAK if other_breaks else _DEEP_PREFIX).search(text):
        return True
    opened = text.count("[") + text.count("{")
    if opened <= _FLOW_FAST:
        return False
    depth = top = 0
    for match in _BRACKET.finditer(text):  # brackets in strings and comments count too: a bound, not the depth
        if match.group() in "[{":
            depth += 1
            if depth > top:
                top = depth
                if top > _FLOW_FAST:
                    return True
        elif depth:
            depth -= 1
    return False


def _too_deep(text: str, pure: bool) -> tuple[int, int] | None:
    """(offset of the first collection nested deeper than MAX_DEPTH, offset of its document), from the
    parser's events: libyaml's parser keeps its own stack (no recursion), only the composer recurses."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent, DocumentStartEvent

    depth = 0
    document = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for event in YAML(typ="safe", pure=pure).parse(text):
                if isinstance(event, CollectionStartEvent):
                    depth += 1
                    if depth > MAX_DEPTH:
                        return event.start_mark.index, document
                elif isinstance(event, CollectionEndEvent):
                    depth -= 1
                elif isinstance(event, DocumentStartEvent):
                    document = event.start_mark.index
    except (YAMLError, RecursionError, ValueError, OverflowError):
        pass  # a syntax error before any collection went too deep: composing reports it
    return None


_RECURSION = "nesting too deep to be a manifest"


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
    """Scalar keys a ruamel mapping repeats, as (start, end, text) in `source.duplicate_keys`."""
    _record_repeated([(key.start_mark.index, key.end_mark.index, key.value) for key, _ in pairs if key.id == "scalar"],
                     source)


def _record_repeated(keys: list[tuple[int, int, str]], source: SourceFile) -> None:
    seen: set[str] = set()
    for start, end, text in keys:
        if not text.isascii() and _SURROGATE.search(text):  # `"\ud83e\udd99"` as the scalar itself reads it
            text = fix_surrogates(text)
        if text in seen:
            source.duplicate_keys.append((start, end, text))
        seen.add(text)


def _compose(source: SourceFile, text: str, pure: bool, base: int = 0) -> tuple[list[Document], YAMLSyntaxError | None]:
    """The documents of text[base:], with offsets into the whole text (and the error that stopped it)."""
    documents, error = _compose_text(source, text[base:] if base else text, pure)
    if base:
        for document in documents:
            for node in walk(document.root):
                node.start += base
                node.end += base
        source.duplicate_keys = [(start + base, end + base, key) for start, end, key in source.duplicate_keys]
        if error is not None:
            error.index += base
            error.line, error.col = source.line_col(min(error.index, len(source.text)))
    return documents, error


def _compose_text(source: SourceFile, text: str, pure: bool) -> tuple[list[Document], YAMLSyntaxError | None]:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    source.duplicate_keys = []  # a retry with the other parser starts over
    yaml = _loader(pure)
    documents: list[Document] = []
    try:
        with warnings.catch_warnings():
            # ruamel warns on stderr about a reused anchor (`&a` twice): valid YAML (the later one wins,
            # YAML 1.2 section 3.2.2.2), and not a warning of ours to print raw.
            warnings.simplefilter("ignore")
            shared = _Shared.for_text(text)
            if not pure and _direct_composer() is not None:
                try:
                    for number, root in enumerate(_direct_documents(source, text, shared)):
                        documents.append(Document(source, root, number))
                    return documents, None
                except _DirectFailed:  # composed again below, the usual way
                    documents, source.duplicate_keys = [], []
            for number, composed in enumerate(_composed(yaml, text)):
                # One memo per document: aliases never cross documents, and ids of freed nodes get reused.
                root = _convert(composed, source, {}, shared) if composed is not None else None
                documents.append(Document(source, root, number))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        index = mark.index if mark is not None else 0
        line, col = source.line_col(min(index, len(source.text)))
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        if exc.context and exc.problem:
            problem = f"{exc.context.strip()}: {exc.problem.strip()}"
        return documents, YAMLSyntaxError(fix_surrogates(problem), line, col, index)
    except YAMLError as exc:  # reader errors (control characters) carry no mark
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return documents, YAMLSyntaxError(fix_surrogates(message), 1, 1, 0)
    except RecursionError:
        return documents, YAMLSyntaxError(_RECURSION, 1, 1, 0)
    except (ValueError, OverflowError):  # the pure scanner's chr() on `"\\UFFFFFFFF"` (libyaml reports it)
        index = _bad_escape(text)
        line, col = source.line_col(index)
        return documents, YAMLSyntaxError("found invalid Unicode character escape code", line, col, index)
    return documents, None


_BIG_ESCAPE = lazy_compile(r"\\U([0-9A-Fa-f]{8})")


def _bad_escape(text: str) -> int:
    for match in _BIG_ESCAPE.finditer(text):
        if int(match.group(1), 16) > 0x10FFFF:
            return match.start()
    return 0


# --- offsets inside scalars ------------------------------------------------------------------------
# YAML 1.2.2 section 5.7 (escapes), 6.5 and 7.3 (line folding in flow scalars), 8.1 (block scalars).
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
            "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
            "P": "\u2029"}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}


def _offset_map(scalar: Scalar) -> SequenceOf[int]:
    """For each character of the scalar's text (plus its end), its offset in the file.

    The text of a quoted, folded or block scalar differs from its source (indentation, quotes, escapes,
    folding): the source is decoded again here, character by character, keeping where each decoded
    character came from (an escape maps to its backslash, a folded line break to the break). Linear in the
    scalar's length. Should the decoding ever disagree with the parser's text, a bounded greedy alignment
    stands in (positions approximate, never slow).
    """
    if scalar._offsets is not None:
        return scalar._offsets
    text, src = scalar.text, scalar.source.text
    start, end = scalar.start, min(scalar.end, len(scalar.source.text))
    style = scalar.style
    mapping: SequenceOf[int] | None = None
    if style in ("|", ">"):
        mapping = _block_offsets(src, start, end, style == ">", text)
    else:
        first, stop = (start + 1, end - 1) if style else (start, end)
        if first + len(text) == stop and src.startswith(text, first):
            mapping = range(first, stop + 1)  # nothing to decode: most scalars (a range: no list of ints to keep)
        else:
            decoded = _flow_decode(src, first, stop, style)
            if decoded is not None and "".join(decoded[0]) == text:
                mapping = decoded[1]
    if mapping is None:
        mapping = _aligned_offsets(scalar)
    if isinstance(mapping, list):
        mapping = _compact_offsets(mapping)
    scalar._offsets = mapping
    return mapping


def _break_length(src: str, i: int) -> int:
    return 2 if src.startswith("\r\n", i) else 1


def _fold(breaks: list[int], chars: list[str], offsets: list[int]) -> None:
    """Line folding (YAML 1.2 section 6.5): one line break between content becomes a space, n breaks
    become n-1 line feeds; each kept character points at the break it stands for."""
    if len(breaks) == 1:
        chars.append(" ")
        offsets.append(breaks[0])
        return
    for at in breaks[1:]:
        chars.append("\n")
        offsets.append(at)


def _flow_decode(src: str, i: int, stop: int, style: str | None) -> tuple[list[str], list[int]] | None:
    """A plain, single- or double-quoted scalar's characters and their offsets, from src[i:stop]."""
    chars: list[str] = []
    offsets: list[int] = []
    pending: list[tuple[str, int]] = []  # white space that is content only if more content follows on the line
    while i < stop:
        c = src[i]
        if c == "\n" or c == "\r":
            # Folding: trailing white space goes, so does the next lines' leading white space; one line break
            # becomes a space, n breaks become n-1 line feeds.
            pending.clear()
            breaks = []
            while i < stop and src[i] in "\r\n":
                breaks.append(i)
                i += _break_length(src, i)
                while i < stop and src[i] in " \t":
                    i += 1
            _fold(breaks, chars, offsets)
            continue
        if c == " " or c == "\t":
            pending.append((c, i))
            i += 1
            continue
        if pending:
            for ch, at in pending:
                chars.append(ch)
                offsets.append(at)
            pending.clear()
        if c == "\\" and style == '"' and i + 1 < stop:
            escape = src[i + 1]
            if escape in "\r\n":  # an escaped line break: it and the next line's leading white space vanish
                i += 1 + _break_length(src, i + 1)
                while i < stop and src[i] in " \t":
                    i += 1
                # The empty lines after it are not folded: each is a line feed (libyaml's scanner keeps them as
                # trailing breaks after an empty leading break: yaml_parser_scan_flow_scalar, scanner.c).
                while i < stop and src[i] in "\r\n":
                    chars.append("\n")
                    offsets.append(i)
                    i += _break_length(src, i)
                    while i < stop and src[i] in " \t":
                        i += 1
                continue
            simple = _ESCAPES.get(escape)
            if simple is not None:
                chars.append(simple)
                offsets.append(i)
                i += 2
                continue
            digits = _HEX_DIGITS.get(escape)
            if digits is None:
                return None
            after = i + 2 + digits
            try:
                code = int(src[i + 2:after], 16)
                if 0xD800 <= code < 0xDC00 and src.startswith("\\u", after):
                    low = int(src[after + 2:after + 6], 16)
                    if 0xDC00 <= low < 0xE000:  # a surrogate pair: one character (see fix_surrogates)
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        after += 6
                chars.append("\ufffd" if 0xD800 <= code < 0xE000 else chr(code))
            except ValueError:
                return None
            offsets.append(i)
            i = after
            continue
        if c == "'" and style == "'" and src.startswith("''", i):
            chars.append("'")
            offsets.append(i)
            i += 2
            continue
        chars.append(c)
        offsets.append(i)
        i += 1
    for ch, at in pending:
        chars.append(ch)
        offsets.append(at)
    offsets.append(stop)
    return chars, offsets


def _block_offsets(src: str, start: int, end: int, folded: bool, text: str) -> list[int] | None:
    """Offsets of a literal (`|`) or folded (`>`) block scalar's characters. The content indentation is
    found from the parser's text (its first line's leading spaces are what the indentation left), which
    covers indentation indicators without knowing the parent's indentation; chomping decides only how many
    final line breaks the text keeps, so the decoded characters are cut to the text's length."""
    newline = src.find("\n", start, end)
    header_end = newline if newline != -1 else end
    carriage = src.find("\r", start, header_end)
    if carriage != -1:
        header_end = carriage
    i = header_end + (_break_length(src, header_end) if header_end < end else 0)
    lines: list[tuple[int, int, int | None]] = []  # (line start, line end, offset of its break or None)
    while i < end:
        stop = src.find("\n", i, end)
        carriage = src.find("\r", i, stop if stop != -1 else end)
        if carriage != -1:
            stop = carriage
        if stop == -1:
            lines.append((i, end, None))
            break
        lines.append((i, stop, stop))
        i = stop + _break_length(src, stop)
    # The first line with content, in the text and in the source: lines of spaces before it may keep spaces
    # past the indentation (`|2` under a line of six spaces), so the text's first line is not always it.
    first_line = next((line for line in text.split("\n") if line.strip(" ")), "")
    indent = None
    for line_start, line_end, _ in lines:
        body = src[line_start:line_end]
        if body.strip(" "):
            indent = len(body) - len(body.lstrip(" ")) - (len(first_line) - len(first_line.lstrip(" ")))
            break
    chars: list[str] = []
    offsets: list[int] = []
    if indent is None:  # nothing but empty lines
        for _, _, at in lines:
            if at is not None:
                chars.append("\n")
                offsets.append(at)
    else:
        previous: str | None = None  # kind of the last content line: "normal" or "more" (more indented)
        pending: list[int] = []  # breaks since the last content line
        for line_start, line_end, at in lines:
            content = line_start + indent
            if content >= line_end and not src[line_start:line_end].strip(" "):
                if previous is None or not folded:
                    if at is not None:
                        chars.append("\n")
                        offsets.append(at)
                else:
                    pending.append(at if at is not None else line_end)
                continue
            if src[line_start:content].strip(" "):
                return None  # less indented than the content: not where the parser saw it
            kind = "more" if src[content] in " \t" else "normal"
            if folded and previous is not None:
                if previous == "normal" and kind == "normal":
                    _fold(pending, chars, offsets)
                else:
                    for where in pending:
                        chars.append("\n")
                        offsets.append(where)
            pending = []
            for k in range(content, line_end):
                chars.append(src[k])
                offsets.append(k)
            if at is not None:
                if folded:
                    pending = [at]
                else:
                    chars.append("\n")
                    offsets.append(at)
            previous = kind
        for where in pending:
            chars.append("\n")
            offsets.append(where)
    decoded = "".join(chars)
    if not decoded.startswith(text):
        if not (text.startswith(decoded) and not text[len(decoded):].strip("\n")):
            return None
        offsets += [end] * (len(text) - len(decoded))
    tail = offsets[len(text)] if len(text) < len(offsets) else (offsets[-1] + 1 if offsets else end)
    return offsets[:len(text)] + [min(tail, end)]


def _aligned_offsets(scalar: Scalar) -> list[int]:
    """Each text character matched to the next equal source character within a short window (a folded
    line break matches white space); where nothing matches, the position stays. Linear."""
    text, src = scalar.text, scalar.source.text
    pos, end = scalar.start, min(scalar.end, len(src))
    if scalar.style in ("'", '"'):
        pos += 1
    elif scalar.style in ("|", ">"):
        newline = src.find("\n", pos, end)
        pos = newline + 1 if newline != -1 else end
    mapping = []
    for ch in text:
        limit = min(pos + 64, end)
        probe = pos
        if ch in " \n\t":
            while probe < limit and src[probe] != ch and src[probe] not in " \n\t":
                probe += 1
        else:
            while probe < limit and src[probe] != ch:
                probe += 1
        if probe >= limit:
            probe = min(pos, end)
        mapping.append(probe)
        pos = probe + 1 if probe < end else probe
    mapping.append(min(pos, end))
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


def path_at(node: Node | None, *keys: str) -> Node | None:
    """The node at `keys` below `node` (mapping keys only); None where a step is missing or no mapping."""
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def field_at(node: Node | None, dotted: str) -> tuple[Node | None, Node | None]:
    """(key node, value node) at a dotted path below `node` (`spec.model.modelURL`); (None, None) where a step is
    missing or no mapping."""
    key: Node | None = None
    for part in dotted.split("."):
        if not isinstance(node, Mapping):
            return None, None
        key, node = node.key_node(part), node.get(part)
    return key, node


def scalar_str(node: Node | None) -> str | None:
    """A scalar's value as a string as Kubernetes would see it in a string field, else None."""
    if not isinstance(node, Scalar):
        return None
    if node.value.__class__ is str:  # the common case first: str(value) is value
        return node.value
    if node.value is None:
        return None
    if isinstance(node.value, bool):
        return node.text
    return node.text if isinstance(node.value, (int, float)) else str(node.value)


EXPANSION_BUDGET = 10_000  # nodes that `to_python` may copy again for aliases, per call


class AliasExpansionError(ValueError):
    """Aliases would expand a subtree past the budget (a "billion laughs" document)."""


def to_python(node: Node | None, *, budget: int = EXPANSION_BUDGET, strict: bool = False):
    """Plain Python data (for small subtrees such as labels or selectors).

    Aliases are copied, but only up to `budget` nodes beyond the first copy of each shared collection:
    past it a shared collection becomes None (or, with `strict`, AliasExpansionError is raised); an alias
    to a collection that contains it (`&a [*a]`) becomes None (with `strict`, the same error). Nesting past
    50 levels is cut to None."""
    copier = _Copier(budget, strict)
    return copier.copy(node, 0)


class _Copier:
    def __init__(self, budget: int, strict: bool):
        self.left = budget
        self.strict = strict
        self.copied: set[int] = set()  # collections copied once already
        self.open: set[int] = set()  # collections being copied (an alias to one of them is a cycle)
        self.again = 0  # > 0 while copying a collection a second time

    def copy(self, node: Node | None, depth: int):
        if depth > 50 or node is None:
            return None
        if self.again:
            self.left -= 1
            if self.left < 0:
                if self.strict:
                    raise AliasExpansionError(f"aliases expand past {EXPANSION_BUDGET} nodes")
                return None
        if isinstance(node, Scalar):
            return node.value
        key = id(node)
        if key in self.open:  # `&a [*a]`: a cycle
            if self.strict:
                raise AliasExpansionError("an alias refers to the collection that contains it (a cycle)")
            return None
        repeat = key in self.copied
        self.copied.add(key)
        self.open.add(key)
        self.again += repeat
        try:
            if isinstance(node, Sequence):
                return [self.copy(item, depth + 1) for item in node.items]
            if isinstance(node, Mapping):
                return {name: self.copy(value, depth + 1) for name, value in node.pairs()}
            return None
        finally:
            self.again -= repeat
            self.open.discard(key)


class UnknownScalar(Scalar):
    """A scalar a tool replaces before the manifest is applied (an OpenShift Template's `${PARAM}`): its value
    is unknown (None, as for a null), `text` keeps what is written. Readers treat it as a value from elsewhere."""

    __slots__ = ()

    def __init__(self, original: Scalar):
        super().__init__(original.start, original.end, original.source, None, original.text, original.style)
        self._offsets = original._offsets


# --- objects shared by every file's nodes -----------------------------------------------------------
_INTERN_MAX = 200  # characters: scalars up to this long are interned (names, keys, images, flags repeat)
_SHARED_POSITIONS = 1 << 17  # offsets below this are shared ints (128K: 4.5 MB of ints at most)
_KEYS_IN_TUPLE = 12  # mappings of up to this many keys index them in a shared tuple, larger ones in a dict


class _Shared:
    """The objects every node of a run may share instead of holding its own copy: an int per offset (each node
    holds two, and the composer makes a new int object for each: 56 bytes a node) and the interned texts of
    short scalars (keys such as `name` repeat in every file). Positions grow with the longest file read, up to
    _SHARED_POSITIONS; longer files keep their own ints beyond it."""

    positions: list[int] = []  # index i holds the int i

    def __init__(self):
        from sys import intern

        self.intern = intern

    @classmethod
    def for_text(cls, text: str) -> _Shared:
        positions = cls.positions
        wanted = min(len(text) + 2, _SHARED_POSITIONS)
        if len(positions) < wanted:
            positions.extend(range(len(positions), wanted))
        return cls()


_KEY_TUPLES: dict[tuple, tuple] = {}  # one tuple for each sequence of keys seen (mappings share it)


def _key_index(items: list) -> dict[str, int] | tuple[str | None, ...]:
    """A mapping's key index (`Mapping._keys`): the shared tuple of its key texts when it is small and its keys
    all differ, else key text -> position of its first pair (keys by their text: Kubernetes field names are
    strings even where YAML 1.1 says bool; the first of repeated keys wins, as merged keys come last)."""
    if len(items) <= _KEYS_IN_TUPLE:
        keys = tuple(key.text if isinstance(key, Scalar) else None for key, _ in items)
        texts = [key for key in keys if key is not None]
        if len(set(texts)) == len(texts):
            shared = _KEY_TUPLES.get(keys)
            if shared is None:
                if len(_KEY_TUPLES) >= 100_000:  # a long-lived process (the language server) never grows unbounded
                    _KEY_TUPLES.clear()
                shared = _KEY_TUPLES[keys] = keys
            return shared
    index: dict[str, int] = {}
    for position, (key, _) in enumerate(items):
        if isinstance(key, Scalar):
            index.setdefault(key.text, position)
    return index


def _compact_offsets(offsets: list[int]) -> SequenceOf[int]:
    """A scalar's offset map kept as 4-byte numbers (`_offset_map`): a list held an int object per character of
    every script a ConfigMap or a `sh -c` carries (36 bytes a character; a tenth of a 10,000-file run's model)."""
    if not offsets or max(offsets) >= 1 << 32 or min(offsets) < 0:
        return offsets
    from array import array

    return array("I", offsets)


def _scalar(node, source: SourceFile, shared: _Shared) -> Scalar:
    """`_convert` of a composed scalar (called directly by the collections: most nodes are scalars), with the
    run's shared offsets and short texts (`_Shared`)."""
    text = node.value
    style = node.style or None  # the C composer reports plain scalars as ''
    if style == '"' and not text.isascii() and _SURROGATE.search(text):
        text = fix_surrogates(text)
    if len(text) <= _INTERN_MAX:
        text = shared.intern(text)
    if style is None:
        # resolve_plain's first test inline: most plain scalars are names, images, flags
        value = text if text and text[0] not in _MAYBE_SPECIAL else resolve_plain(text)
    else:
        value = text
    start, end = node.start_mark.index, node.end_mark.index
    positions = shared.positions
    if end < len(positions):
        start, end = positions[start], positions[end]
    return Scalar(start, end, source, value, text, style)


_LOADERS: dict[int, object] = {}  # thread -> its YAML instance for the C parser (`_loader`)


def _loader(pure: bool):
    """A ruamel YAML instance to compose with. The one of the C parser is made once per thread and reused: making
    one looks for plugins on disk (three directory scans), a third of composing a small file. Its composer is
    made anew by every `compose_all`, so nothing of one file's parse stays for the next."""
    from ruamel.yaml import YAML
    import _thread

    thread = _thread.get_ident()
    yaml = _LOADERS.get(thread) if not pure else None
    if yaml is not None:
        del yaml.doc_infos[:]  # type: ignore[attr-defined]  # compose_all adds one per call
        return yaml
    yaml = YAML(typ="safe", pure=pure)
    if yaml.Parser.__name__ == "CParser":  # the pure-Python composer wants ruamel's own Tag objects
        yaml.Resolver = _tag_only_resolver()
        if len(_LOADERS) >= 64:  # threads come and go in a long-lived process
            _LOADERS.clear()
        _LOADERS[thread] = yaml
    return yaml


_COMPOSER: list = []  # [the composer class over ruamel's C parser, or None without it] (`_composed`)


def _composed(yaml, text: str):
    """`yaml.compose_all(text)`, over the C parser without what compose_all makes anew for every file: a class
    (XLoader) and a loader that refers to itself, garbage cycles the collector had to find before each GC freeze.
    The composer class is made once; its instances hold no reference to themselves, so each is freed as soon as
    its file is composed."""
    composer = _c_composer() if yaml.Parser.__name__ == "CParser" else None
    if composer is None:
        yield from yaml.compose_all(text)
        return
    parser = composer(text)
    try:
        while parser.check_node():
            yield parser.get_node()
    finally:
        parser.dispose()


def _c_composer():
    if not _COMPOSER:
        from ruamel.yaml import main

        parser = getattr(main, "CParser", None)  # None when ruamel's C extension is not installed
        resolver = _tag_only_resolver()
        if parser is None:
            _COMPOSER.append(None)
        else:
            class Composer(parser, resolver):  # type: ignore[valid-type, misc]
                def __init__(self, stream: str):
                    parser.__init__(self, stream)  # type: ignore[misc]
                    resolver.__init__(self)

            _COMPOSER.append(Composer)
    return _COMPOSER[0]


# --- composing straight into our nodes -------------------------------------------------------------
# ruamel's C composer (`_ruamel_yaml.CParser`, ruamel.yaml.clib) makes each node by calling the classes it finds
# in its module's globals, `ScalarNode(tag, value, start_mark, end_mark, style)` and the two collection classes
# (`_compose_scalar_node` and its siblings in _ruamel_yaml.pyx, 0.2.x). Each ruamel node costs three Python calls
# (ScalarNode.__init__, Node.__init__, Tag) and `_convert` then makes ours from it: together as much as the C parse
# itself. While one of our compositions runs, those globals are our own makers instead: scalars become our
# `Scalar` at once, collections slim stand-ins that `_convert_direct` turns into ours once they are complete
# (merge keys need the whole mapping). The globals are swapped only for the call that composes a document and
# put back before it returns, under a lock, and the swap is used only after a probe composed a known document
# the same way; without ruamel's C extension, or if it changes, the composition above runs instead.
# 1,000 benchmark files: 0.80 s -> 0.49 s to compose and convert (GC off, as in a run), same nodes.
_DIRECT: list = []  # [the parser class for the direct composition, or None where it is not available]
_DIRECT_LOCK = __import__("_thread").allocate_lock()
_DIRECT_CONTEXT: list = [None, (), None]  # the file being composed: its SourceFile, the shared positions, intern


class _DirectCollection:
    __slots__ = ("value", "start_mark", "end_mark")

    def __init__(self, tag, value, start_mark, end_mark, flow_style):
        self.value = value  # filled by the composer after the call: (key, value) pairs or items
        self.start_mark = start_mark
        self.end_mark = end_mark  # set by the composer at the collection's end


class _DirectSequence(_DirectCollection):
    __slots__ = ()


class _DirectMapping(_DirectCollection):
    __slots__ = ()


def _direct_scalar(tag, text, start_mark, end_mark, style) -> Scalar:
    """`_scalar`, from what the C composer passes to `ScalarNode`."""
    source, positions, intern = _DIRECT_CONTEXT
    style = style or None  # the C composer reports plain scalars as ''
    if style == '"' and not text.isascii() and _SURROGATE.search(text):
        text = fix_surrogates(text)
    if len(text) <= _INTERN_MAX:
        text = intern(text)
    if style is None:
        value = text if text and text[0] not in _MAYBE_SPECIAL else resolve_plain(text)
    else:
        value = text
    start, end = start_mark.index, end_mark.index
    if end < len(positions):
        start, end = positions[start], positions[end]
    return Scalar(start, end, source, value, text, style)


def _direct_composer():
    if not _DIRECT:
        _DIRECT.append(None)
        try:
            import _ruamel_yaml as clib

            class DirectParser(clib.CParser):
                """Names no tags (ours come from `resolve_plain`) and keeps no resolver paths."""

                def resolve(self, kind, value, implicit):
                    return ""

                def descend_resolver(self, parent, index):
                    pass

                def ascend_resolver(self):
                    pass

            _DIRECT[0] = (clib, DirectParser)
            probe = SourceFile("<probe>", "a: [b, 1]\n", "<probe>")
            roots = list(_direct_documents(probe, probe.text, _Shared.for_text(probe.text)))
            root = roots[0] if len(roots) == 1 else None
            items = root.get("a") if isinstance(root, Mapping) else None
            if not (isinstance(root, Mapping) and isinstance(items, Sequence) and (items.start, items.end, root.start)
                    == (3, 9, 0) and [getattr(i, "value", None) for i in items.items] == ["b", 1]):
                _DIRECT[0] = None
        except Exception:  # noqa: BLE001  (no C extension, or one that composes differently: the other way)
            _DIRECT[0] = None
    return _DIRECT[0]


def _direct_documents(source: SourceFile, text: str, shared: _Shared) -> Iterator[Node | None]:
    clib, parser_class = _DIRECT[0]
    parser = parser_class(text)
    try:
        while True:
            with _DIRECT_LOCK:
                _DIRECT_CONTEXT[:] = (source, shared.positions, shared.intern)
                saved = clib.ScalarNode, clib.SequenceNode, clib.MappingNode
                clib.ScalarNode, clib.SequenceNode, clib.MappingNode = _direct_scalar, _DirectSequence, _DirectMapping
                try:
                    node = parser.get_node() if parser.check_node() else _END
                except (AttributeError, TypeError) as exc:  # a message of the composer that reads a node's marks
                    raise _DirectFailed() from exc  # (a duplicate anchor): ruamel's nodes have them, ours do not
                finally:
                    clib.ScalarNode, clib.SequenceNode, clib.MappingNode = saved
                    _DIRECT_CONTEXT[:] = (None, (), None)
            if node is _END:
                return
            # One memo per document: aliases never cross documents, and ids of freed nodes get reused.
            yield _convert_direct(node, source, {}, shared.positions) if node is not None else None
    finally:
        parser.dispose()


_END = object()


class _DirectFailed(Exception):
    """The direct composition cannot go on with this file: `_compose_text` composes it with ruamel's nodes."""


def _convert_direct(node, source: SourceFile, memo: dict, positions: list[int]) -> Node:
    """`_convert` of a directly composed node: scalars are ours already, collections are stand-ins."""
    if type(node) is Scalar:
        return node
    key = id(node)
    done = memo.get(key)
    if done is not None:
        return done
    start, end = node.start_mark.index, node.end_mark.index
    if end < len(positions):
        start, end = positions[start], positions[end]
    if type(node) is _DirectSequence:
        sequence = Sequence(start, end, source)
        memo[key] = sequence
        sequence.items = [item if type(item) is Scalar else _convert_direct(item, source, memo, positions)
                          for item in node.value]
        return sequence
    result = Mapping(start, end, source)
    memo[key] = result
    merged: list[tuple[Node, Node]] = []
    append = result.items.append
    pairs = node.value
    names = [k.text for k, _ in pairs if type(k) is Scalar]
    if len(set(names)) < len(names):
        _record_repeated([(k.start, k.end, k.text) for k, _ in pairs if type(k) is Scalar], source)
    for key_node, value_node in pairs:
        if type(key_node) is Scalar:
            if key_node.text == "<<" and key_node.style is None:
                sources = value_node.value if type(value_node) is _DirectSequence else [value_node]
                for merge_source in sources:
                    converted = _convert_direct(merge_source, source, memo, positions)
                    if isinstance(converted, Mapping):
                        merged.extend(converted.items)
                continue
        else:
            key_node = _convert_direct(key_node, source, memo, positions)
        append((key_node, value_node if type(value_node) is Scalar
                else _convert_direct(value_node, source, memo, positions)))
    if merged:
        # Explicit keys win over merged ones: merged pairs go last, and lookups keep the first.
        result.items.extend(merged)
    return result
