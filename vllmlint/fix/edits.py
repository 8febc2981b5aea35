"""Edit primitives for `--fix`: minimal text edits at the positions the model already knows.

Checks attach a `Fix` (edits on the file text, by character offset) to the findings they can repair;
`vllmlint.fix.apply.run_fixes` applies them and verifies the result before anything is written. Every
byte outside an edited span stays as it was: comments, quoting, flow or block style, indentation.

The `ArgvEditor` turns argv-level operations on a vLLM invocation (delete these tokens, replace them with
these words) into text edits, whether the argv is a YAML list (block or flow, JSON) or a shell string
(a `.sh` file, a literal block scalar, a one-line quoted or plain scalar). Anything it cannot edit
exactly (folded scalars, YAML escapes inside a touched shell word) yields no fix rather than a guess.
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass
from typing import TYPE_CHECKING, Iterable, Union
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.source.yamlmodel import Scalar, Sequence, SourceFile
    from vllmlint.vllm.invocation import Invocation, Option, Token

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True)
class Edit:
    path: str  # the file as displayed (SourceFile.display_path)
    start: int  # character offsets into the file text: [start, end) becomes `replacement`
    end: int
    replacement: str


@dataclass
class Fix:
    edits: list[Edit]
    safety: str  # SAFE: same behaviour on the target release (or the original cannot start); UNSAFE otherwise
    description: str

    def key(self) -> tuple:
        return tuple(sorted((e.path, e.start, e.end, e.replacement) for e in self.edits))


def make_fix(edits: list[Edit] | None, safety: str, description: str) -> Fix | None:
    """A fix from edits that do not overlap each other; None when there is nothing (or nothing coherent)."""
    if not edits:
        return None
    edits = _merge_touching_deletions(sorted(edits, key=lambda e: (e.path, e.start, e.end)))
    for first, second in zip(edits, edits[1:], strict=False):
        if first.path == second.path and _conflict(first, second):
            return None
    return Fix(edits, safety, description)


def _merge_touching_deletions(edits: list[Edit]) -> list[Edit]:
    merged: list[Edit] = []
    for edit in edits:
        last = merged[-1] if merged else None
        if (last is not None and last.path == edit.path and last.end == edit.start and not last.replacement
                and not edit.replacement and last.start < last.end and edit.start < edit.end):
            merged[-1] = Edit(last.path, last.start, edit.end, "")
        else:
            merged.append(edit)
    return merged


def _conflict(a: Edit, b: Edit) -> bool:
    """Two edits of one file that cannot both apply: overlapping ranges, an insertion inside the other's
    range, or two insertions at the same point (their order would be a guess)."""
    if a.start == a.end and b.start == b.end:
        return a.start == b.start
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return max(a.start, b.start) < min(a.end, b.end)


def apply_edits(text: str, edits: list[Edit]) -> str:
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        text = text[:edit.start] + edit.replacement + text[edit.end:]
    return text


# --- YAML scalars ---------------------------------------------------------------------------------
_PLAIN_FIRST_BAD = set("-?:,[]{}#&*!|>'\"%@`")


def plain_ok(value: str, flow: bool) -> bool:
    """Whether `value` can be written as a plain YAML scalar and still read back as that string."""
    from vllmlint.source.yamlmodel import resolve_plain

    if not value or value != value.strip() or "\n" in value or "\t" in value:
        return False
    if value[0] in _PLAIN_FIRST_BAD and not (value[0] in "-?:" and len(value) > 1 and value[1] not in " ,[]{}"):
        return False
    if ": " in value or " #" in value or value.endswith(":"):
        return False
    if flow and any(ch in value for ch in ",[]{}"):
        return False
    return resolve_plain(value) == value


def yaml_string(value: str, flow: bool, like: str | None = None) -> str:
    """`value` as a YAML string scalar, in the quoting style `like` when given (None = plain if possible)."""
    if like == '"':
        return _json_string(value)
    if like == "'" and "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    if plain_ok(value, flow):
        return value
    if "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    return _json_string(value)


def replace_scalar(scalar: Scalar, value: str) -> Edit | None:
    """Rewrite a string scalar to `value`, keeping its quoting style where it allows. A plain result
    follows the flow-context rules (no `,[]{}`), which are also safe in block context."""
    if scalar.style in ("|", ">"):
        return None
    return Edit(scalar.source.display_path, scalar.start, scalar.end, yaml_string(value, True, scalar.style))


def replace_number(scalar: Scalar, number: int, keep_quotes: bool = True) -> Edit | None:
    """Rewrite a port to a number: plain stays plain, quoted stays quoted (`"8001"` -> `"8000"`, for
    annotations, which are strings) unless `keep_quotes` is off (a port name becoming a number)."""
    if scalar.style in ("|", ">"):
        return None
    text = str(number)
    if keep_quotes and scalar.style in ("'", '"'):
        text = scalar.style + text + scalar.style
    return Edit(scalar.source.display_path, scalar.start, scalar.end, text)


def _is_flow_sequence(seq: Sequence) -> bool:
    return seq.source.text[seq.start:seq.start + 1] == "["


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """[first char of start's line, index after the newline that ends end's line)."""
    line_start = text.rfind("\n", 0, start) + 1
    newline = text.find("\n", end)
    return line_start, (len(text) if newline == -1 else newline + 1)


_BLOCK_ITEM_PREFIX = re.compile(r"^[ \t]*-[ \t]+$")
_REST_OF_LINE = re.compile(r"^[ \t]*(#.*)?\r?$")


def _one_text(seq: Sequence, known: dict[int, bool] | None = None) -> bool:
    """Whether every item of `seq` is written in its file (not a list merged from several files, as a Kustomize
    JSON 6902 patch makes): then it is one text to edit. `known` keeps the answer by sequence: an editor asks
    once per fix, and a list of 10,000 fixable flags made the scan quadratic."""
    if known is None:
        return all(item.source is seq.source for item in seq.items)
    answer = known.get(id(seq))
    if answer is None:
        answer = known[id(seq)] = all(item.source is seq.source for item in seq.items)
    return answer


def delete_sequence_items(seq: Sequence, indices: list[int], known: dict[int, bool] | None = None
                          ) -> list[Edit] | None:
    """Edits deleting the items at `indices`: whole lines in a block list, `item, ` in a flow list. `known`:
    see `_one_text` (the sequences must outlive it: an editor's, kept with its invocation)."""
    indices = sorted(set(indices))
    if not indices:
        return []
    items = seq.items
    if not _one_text(seq, known):
        return None  # a list merged from several files (a Kustomize JSON 6902 patch): not one text to edit
    path, text = seq.source.display_path, seq.source.text
    if _is_flow_sequence(seq):
        edits = []
        for run in _runs(indices):
            first, last = run[0], run[-1]
            if last + 1 < len(items):
                edits.append(Edit(path, items[first].start, items[last + 1].start, ""))
            elif first > 0:
                edits.append(Edit(path, items[first - 1].end, items[last].end, ""))
            else:
                edits.append(Edit(path, items[0].start, items[-1].end, ""))
        return edits
    if len(indices) == len(items):
        return None  # an emptied block list needs `key: []`: a structural edit left to a person
    edits = []
    for index in indices:
        item = items[index]
        line_start, line_end = _line_bounds(text, item.start, item.end)
        newline = text.find("\n", item.end)
        rest = text[item.end:(len(text) if newline == -1 else newline)]
        if not _BLOCK_ITEM_PREFIX.match(text[line_start:item.start]) or not _REST_OF_LINE.match(rest):
            return None  # `- - x`, two items on a line, or something after the item: not a plain line
        edits.append(Edit(path, line_start, line_end, ""))
    return edits


def _runs(indices: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for index in indices:
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def insert_sequence_items_after(seq: Sequence, index: int, rendered: list[str],
                                known: dict[int, bool] | None = None) -> Edit | None:
    """An edit adding items (already written as YAML) right after item `index`: `, x` in a flow list,
    a new `- x` line per item in a block list (`known`: see `_one_text`)."""
    item = seq.items[index]
    if not _one_text(seq, known):
        return None  # a list merged from several files (a Kustomize JSON 6902 patch): not one text to edit
    path, text = seq.source.display_path, seq.source.text
    if _is_flow_sequence(seq):
        return Edit(path, item.end, item.end, "".join(", " + r for r in rendered))
    line_start, line_end = _line_bounds(text, item.start, item.end)
    prefix = text[line_start:item.start]
    if not _BLOCK_ITEM_PREFIX.match(prefix):
        return None
    newline = _newline(text)
    lines = "".join(prefix + r + newline for r in rendered)
    if line_end == len(text) and not text.endswith("\n"):
        lines = newline + lines[:-len(newline)]
    return Edit(path, line_end, line_end, lines)


# --- argv of one invocation -----------------------------------------------------------------------
@dataclass
class Keep:
    """An argv word reused as written (its quoting, `$VAR`s, `$(VAR)`s), optionally minus a prefix
    such as `--model=`."""
    token: Token
    strip_prefix: str = ""


Word = Union[str, Keep]  # an argv word to write: new text (quoted as needed) or a word kept as written


class ArgvEditor:
    """Argv-level edits of one invocation, as text edits. `mode` is "list", "shell" or None (not editable)."""

    def __init__(self, invocation: Invocation):
        self.invocation = invocation
        # An image's entrypoint gives synthetic tokens with no place in a file: they cannot be edited
        # (operations on them fail), but the `args` written after them can.
        tokens = [t for t in invocation.entry + invocation.tokens if t.source is not None]
        self.mode: str | None = None
        self.scalar: Scalar | None = None
        self._items: dict[int, tuple[Sequence, int]] | None = None
        self._one_text: dict[int, bool] = {}  # `_one_text` of the container's lists, by id
        if not tokens or tokens[0].source is None:
            return
        self.source: SourceFile = tokens[0].source
        self.path = self.source.display_path
        self.text = self.source.text
        if all(self._item(t) is not None for t in tokens):
            self.mode = "list"
        elif invocation.via in ("shell", "configmap-script", "script", "command") and self._shell_editable(tokens):
            self.mode = "shell"

    # list mode
    def _item(self, token: Token) -> tuple[Sequence, int] | None:
        """(sequence, index) of the YAML list item that is exactly this token."""
        node = token.node
        container = self.invocation.container
        if node is None or container is None or (token.start, token.end) != (node.start, node.end):
            return None
        items = self._items
        if items is None:
            from vllmlint.source.yamlmodel import Sequence

            items = self._items = {id(item): (seq, index) for seq in (container.command, container.args)
                                   if isinstance(seq, Sequence) for index, item in enumerate(seq.items)}
        return items.get(id(node))

    def _items_of(self, tokens: list[Token]) -> list[tuple[Sequence, int]] | None:
        """The list items of these tokens (list mode), or None when one is not an item of its own."""
        located = [self._item(t) for t in tokens]
        return None if any(item is None for item in located) else [item for item in located if item is not None]

    # shell mode
    def _shell_editable(self, tokens: list[Token]) -> bool:
        scalar = self.invocation.script or tokens[0].node
        if any(t.node is not scalar for t in tokens):
            return False  # words from a shell string and from list items mixed (Compose): not one text
        from vllmlint.source.compose import DerivedScalar

        if isinstance(scalar, DerivedScalar):
            return False  # a quoted word of a Compose string: go-shellwords' quoting, not the script's
        if scalar is not None:
            if scalar.style == ">":
                return False  # folding: a line of the file is not a line of the script
            if scalar.style != "|":
                first, _ = self.source.line_col(scalar.start)
                last, _ = self.source.line_col(scalar.end)
                if first != last:
                    return False  # a multi-line quoted or plain scalar folds its lines
        self.scalar = scalar
        return all(self._slice_reads_as(t) for t in tokens if not t.dynamic)

    def _slice_reads_as(self, token: Token) -> bool:
        """The file text of a word, read as shell, gives the word: no YAML escape sits inside it."""
        from vllmlint.source.shell import split_commands

        raw = self.text[token.start:token.end]
        if self.scalar is not None and self.scalar.style == '"' and "\\" in raw:
            return False
        commands = split_commands(raw)
        return len(commands) == 1 and len(commands[0].words) == 1 and commands[0].words[0].text == token.text

    def _encode(self, shell_text: str) -> str | None:
        """Shell text as it must be written inside the YAML scalar holding the script (None: cannot)."""
        scalar = self.scalar
        if scalar is None or scalar.style == "|":
            return shell_text
        if scalar.style == '"':
            import json  # here, not at start-up: only some inputs need it

            return json.dumps(shell_text, ensure_ascii=False)[1:-1]
        if scalar.style == "'":
            return shell_text.replace("'", "''")
        # plain: the new text must not end the scalar, nor (in a flow list) the list item
        if ": " in shell_text or " #" in shell_text or shell_text.endswith(":"):
            return None
        if self._script_in_flow() and any(c in shell_text for c in ",[]{}"):
            return None
        return shell_text

    def _script_in_flow(self) -> bool:
        """Whether the script scalar is an item of a flow list (`[sh, -c, ...]`); unsure counts as yes."""
        container = self.invocation.container
        from vllmlint.source.yamlmodel import Sequence

        for seq in (container.command, container.args) if container is not None else ():
            if isinstance(seq, Sequence) and any(item is self.scalar for item in seq.items):
                return _is_flow_sequence(seq)
        return True

    # words
    def _word_list(self, word: Word, flow: bool, like: str | None) -> str | None:
        if isinstance(word, Keep):
            node = word.token.node
            if node is None:
                return None
            raw = node.text  # unexpanded: `$(VAR)` stays for Kubernetes to expand
            if not raw.startswith(word.strip_prefix):
                return None
            return yaml_string(raw[len(word.strip_prefix):], flow, like)
        return yaml_string(word, flow, like)

    def _word_shell(self, word: Word) -> str | None:
        if isinstance(word, Keep):
            token, prefix = word.token, word.strip_prefix
            raw = self.text[token.start:token.end]
            if raw.startswith(prefix):
                return raw[len(prefix):]  # as written: quoting and `$VAR`s stay
            if token.dynamic or not token.text.startswith(prefix):
                return None
            word = token.text[len(prefix):]  # `'--model=X'`: quote the value afresh
        import shlex  # here, not at start-up: only a fix inside a shell script quotes a word

        return self._encode(shlex.quote(word))

    # operations
    def delete(self, tokens: list[Token]) -> list[Edit] | None:
        """Delete these tokens (a flag and its value)."""
        if any(t.source is None for t in tokens):
            return None
        if self.mode == "list":
            located = self._items_of(tokens)
            if located is None:
                return None
            by_seq: dict[int, tuple[Sequence, list[int]]] = {}
            for seq, index in located:
                by_seq.setdefault(id(seq), (seq, []))[1].append(index)
            edits: list[Edit] = []
            for seq, indices in by_seq.values():
                part = delete_sequence_items(seq, indices, self._one_text)
                if part is None:
                    return None
                edits.extend(part)
            return edits
        if self.mode == "shell":
            return [self._shell_delete(min(t.start for t in tokens), max(t.end for t in tokens))]
        return None

    def delete_options(self, options: list[Option]) -> list[Edit] | None:
        """Delete several options (each flag with its value). In a shell string, options separated only
        by blanks and continuations are deleted as one stretch, so whole continuation lines can go."""
        if self.mode == "list":
            tokens = [t for o in options for t in _option_tokens(o)]
            return self.delete(tokens)
        if self.mode != "shell":
            return None
        regions = sorted((min(t.start for t in _option_tokens(o)), max(t.end for t in _option_tokens(o)))
                         for o in options)
        merged: list[list[int]] = []
        for start, end in regions:
            if merged and _BLANKS_BETWEEN.match(self.text[merged[-1][1]:start]):
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return [self._shell_delete(start, end) for start, end in merged]

    def _shell_delete(self, start: int, end: int) -> Edit:
        """Delete [start, end) from a shell line; a continuation line holding only it goes entirely."""
        text = self.text
        line_start = text.rfind("\n", 0, start) + 1
        newline = text.find("\n", end)
        line_end = len(text) if newline == -1 else newline
        before, after = text[line_start:start], text[end:line_end].strip(" \t\r")
        alone = before.strip(" \t") == ""
        if alone and after == "\\":
            return Edit(self.path, line_start, min(line_end + 1, len(text)), "")
        if alone and after == "" and line_start > 0:
            previous = text[text.rfind("\n", 0, line_start - 1) + 1:line_start - 1].rstrip(" \t\r")
            if previous.endswith("\\") and not previous.endswith("\\\\"):
                backslash = text.rfind("\\", 0, line_start)
                cut = backslash
                while cut > 0 and text[cut - 1] in " \t":
                    cut -= 1
                return Edit(self.path, cut, end, "")
        if alone:
            cut = end
            while cut < line_end and text[cut] in " \t":
                cut += 1
            return Edit(self.path, start, cut, "")
        cut = start
        while cut > line_start and text[cut - 1] in " \t":
            cut -= 1
        return Edit(self.path, cut, end, "")

    def replace(self, tokens: list[Token], words: Iterable[Word]) -> list[Edit] | None:
        """Replace contiguous tokens by argv words (`str`, quoted as needed, or `Keep`)."""
        if any(t.source is None for t in tokens) or not tokens:
            return None
        if self.mode == "list":
            located = self._items_of(tokens)
            if located is None:
                return None
            seq, first = located[0]
            flow = _is_flow_sequence(seq)
            style = getattr(seq.items[first], "style", None)  # a Scalar's quoting (items are tokens: scalars)
            like = style if style in ("'", '"') else None
            maybe = [self._word_list(w, flow, like) for w in words]
            rendered = [r for r in maybe if r is not None]
            if len(rendered) != len(maybe):
                return None
            edits: list[Edit] = []
            # Rewrite the tokens one for one; extra words go after the last, missing ones are deleted.
            for (s, index), text in zip(located, rendered, strict=False):
                item = s.items[index]
                edits.append(Edit(self.path, item.start, item.end, text))
            if len(rendered) > len(located):
                seq_last, index = located[-1]
                insert = insert_sequence_items_after(seq_last, index, rendered[len(located):], self._one_text)
                if insert is None:
                    return None
                edits.append(insert)
            elif len(rendered) < len(located):
                rest = self.delete(tokens[len(rendered):])
                if rest is None:
                    return None
                edits.extend(rest)
            return edits
        if self.mode == "shell":
            maybe_shell = [self._word_shell(w) for w in words]
            shell_words = [r for r in maybe_shell if r is not None]
            if len(shell_words) != len(maybe_shell):
                return None
            start, end = min(t.start for t in tokens), max(t.end for t in tokens)
            return [Edit(self.path, start, end, " ".join(shell_words))]
        return None


_BLANKS_BETWEEN = lazy_compile(r"^(?:[ \t]|\\\r?\n)*$")


def _option_tokens(option: Option) -> list[Token]:
    """The flag's token and its value tokens (one for `--flag=value`)."""
    tokens = [option.token]
    for token in [option.value_token] + list(getattr(option, "extra_values", None) or []):
        if token is not None and all(token is not seen for seen in tokens):
            tokens.append(token)
    return tokens


_EDITOR = "_vllmlint_argv_editor"  # where an invocation keeps its editor


def argv_editor(invocation: Invocation) -> ArgvEditor | None:
    """The invocation's editor (None when its argv cannot be edited exactly). Built once per invocation
    and kept on it: every fix of an invocation shares it, since building one reads every token (with
    1,000 fixable flags in one command, an editor per fix made the run quadratic)."""
    editor = getattr(invocation, _EDITOR, None)
    if editor is None:
        editor = ArgvEditor(invocation)
        setattr(invocation, _EDITOR, editor)
    return editor if editor.mode else None


def drop_options_fix(invocation: Invocation, options: list[Option], safety: str, description: str) -> Fix | None:
    """A fix deleting options (each flag with its value) from an invocation, in whatever form it is written."""
    editor = argv_editor(invocation)
    return make_fix(editor.delete_options(options), safety, description) if editor else None


def _json_string(value: str) -> str:
    """`value` as a double-quoted YAML (and JSON) string."""
    import json  # here, not at start-up: a one-file run seldom needs a quoted string

    return json.dumps(value, ensure_ascii=False)
