"""The report every output format renders, and the helpers the formats share (`vllmlint.formatters` re-exports
them; the format modules import them from here, so that no format module imports the package that loads it)."""
from __future__ import annotations

from vllmlint.records import dataclass, field
from typing import TYPE_CHECKING

from vllmlint import __version__
from vllmlint.finding import Finding, Notice, Severity

if TYPE_CHECKING:

    from vllmlint.registry import Rule
    from vllmlint.source.yamlmodel import SourceFile

FORMATS = ("text", "json", "sarif", "github", "junit")


@dataclass
class Report:
    """Everything a formatter may show about one run."""

    findings: list[Finding] = field(default_factory=list)  # sorted; all of them are shown
    suppressed: list[Finding] = field(default_factory=list)  # hidden by a suppression; `.suppressed_by` set
    notices: list[Notice] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)  # the rules that ran (SARIF tool.driver.rules)
    sources: dict[str, SourceFile] = field(default_factory=dict)  # display path -> source, for excerpts
    files_checked: int = 0
    color: bool = False
    show_suppressed: bool = False
    statistics: bool = False
    quiet: bool = False
    sarif_category: str | None = None
    failed: bool = False  # the run had an error (exit 2): a missing path, an unreadable file, an internal error
    errors: list[str] = field(default_factory=list)  # errors of the run that no notice carries ("x: no such file")
    tool_version: str = __version__
    # Display path (repository-relative, as findings carry it) -> the path relative to the current folder,
    # for the text format only: what a terminal user can open. Machine formats keep repository paths.
    local_paths: dict[str, str] = field(default_factory=dict)
    summary: bool = True  # text: end with the summary line (the CLI prints it itself, after the notes)
    unsafe_fixes: bool = False  # --unsafe-fixes: unsafe fixes count as fixable (`[*]`)
    fail_on: Severity | None = None  # JUnit: findings below it are passing testcases (None: every one fails)
    show_notes: bool = False  # --show-notes: every note on its own, not one line (annotation) per kind
    # What the run understood (the engine's counts, `LintResult`); workloads None: not counted (a report built
    # by hand), and the summary says only how many files were checked.
    workloads: int | None = None  # vLLM workloads
    invocations: int = 0  # vLLM server command lines
    objects: int = 0  # Kubernetes objects and Compose services
    skipped: dict[str, int] = field(default_factory=dict)  # why files were not read -> how many
    concise: bool = False  # text: one line per finding (`--output-format concise`), then the summary
    below_min_level: int = 0  # findings not shown, under --min-level (the text summary counts them)


def understood_nothing(report: Report) -> bool:
    """The run counted what it understood and found no vLLM invocation and no Kubernetes or Compose object."""
    return report.workloads is not None and not report.invocations and not report.objects


def notice_kinds(notices: list[Notice]) -> list[tuple[tuple[str, str] | None, list[Notice]]]:
    """The notices by kind, in order of first appearance: (summary, notes) for notes (level `note`)
    with a `summary`, grouped by code and summary; (None, [notice]) for any other notice. A kind is
    summarised (one line, one annotation) by the formats when it holds more than one note."""
    kinds: list[tuple[tuple[str, str] | None, list[Notice]]] = []
    index: dict[tuple[str, tuple[str, str]], int] = {}
    for notice in notices:
        if notice.level != "note" or notice.summary is None:
            kinds.append((None, [notice]))
            continue
        key = (notice.code, notice.summary)
        if key not in index:
            index[key] = len(kinds)
            kinds.append((notice.summary, []))
        kinds[index[key]][1].append(notice)
    return kinds


def rules_by_code(report: Report) -> dict[str, Rule]:
    """Rule metadata for every code the report mentions: the rules that ran, then the registry for
    codes that did not come from a selected rule (engine codes such as a YAML syntax error)."""
    known = {rule.code: rule for rule in report.rules}
    codes = [f.code for f in report.findings] + [f.code for f in report.suppressed] + [n.code for n in report.notices]
    missing = [code for code in codes if code not in known]
    if missing:
        from vllmlint.registry import all_rules

        registry: dict[str, Rule]
        try:
            registry = all_rules()
        except (OSError, ValueError):  # a broken rules folder must not hide the findings themselves
            registry = {}
        for code in missing:
            if code in registry:
                known[code] = registry[code]
    return known


def is_fixable(finding: Finding, unsafe: bool = False) -> bool:
    """`--fix` would repair it: a safe fix (an unsafe one too with --unsafe-fixes), not suppressed."""
    safety = getattr(finding.fix, "safety", None)
    return finding.suppressed_by is None and (safety == "safe" or (unsafe and safety == "unsafe"))


def edit_positions(edit, sources: dict) -> dict:
    """An edit of a fix as machine formats give it: 1-based line and column of both ends (end column
    exclusive, in code points, as findings' spans), the 0-based character offsets, the new text."""
    source = sources.get(edit.path)
    entry: dict = {"path": edit.path}
    if source is not None:
        (line, col), (end_line, end_col) = source.line_col(edit.start), source.line_col(edit.end)
        entry.update(line=line, column=col, end_line=end_line, end_column=end_col)
    entry.update(start=edit.start, end=edit.end, replacement=edit.replacement)
    return entry


def rule_name(rules: dict[str, Rule], code: str) -> str:
    rule = rules.get(code)
    return rule.name if rule is not None else ""


def sentence(message: str) -> str:
    """The message as a sentence that stands alone: trimmed, ending with a full stop."""
    text = message.strip()
    if text and not text.endswith((".", "!", "?")):
        text += "."
    return text


SHORT_MESSAGE = 120  # characters: a first line longer than this is cut at its first top-level `: ` too
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "no")


def _top_level_breaks(text: str):
    """(index, kind) of each `. ` sentence end, `: `, `; ` and `, ` outside backticks, quotes and brackets."""
    import re  # only the characters that matter: inside backticks the closing one, inside quotes `"` and a backtick

    marks = re.compile(r'[`"()\[\]{}]|[.:;,](?= )')
    quoting = re.compile(r'[`"]')
    depth, code, quote, position = 0, False, False, 0
    while True:
        if code:
            position = text.find("`", position) + 1
            if not position:
                return
            code = False
            continue
        match = (quoting if quote else marks).search(text, position)
        if match is None:
            return
        i = match.start()
        ch, position = text[i], i + 1
        if ch == "`":
            code = True
        elif ch == '"':
            quote = not quote
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0:  # a mark followed by a space (the pattern's lookahead)
            yield i, ch


def split_message(message: str) -> tuple[str, str | None]:
    """(what is wrong, the why / how to fix it) from one finding message, for a short first line and a
    `help:` line as ruff prints them. The problem is the first sentence; a first sentence still longer
    than SHORT_MESSAGE is cut at its first top-level `: ` (the checks write "problem: what to do"), then
    at `; `, then before `, so ` (what follows is the consequence).
    Abbreviations (`e.g.`) and text inside backticks, quotes or brackets never split. (None) when the
    message is one short sentence."""
    text = message.strip()
    head, rest = text, ""
    breaks: list[tuple[int, str]] = []  # those scanned: the head is a prefix of the text, never scanned again (nor is the rest)
    for index, kind in _top_level_breaks(text):
        breaks.append((index, kind))
        if kind != ".":
            continue
        word = text[:index].rsplit(" ", 1)[-1].lower().lstrip("(")
        if word in _ABBREVIATIONS or not text[index + 2:index + 3].strip():
            continue
        head, rest = text[:index + 1], text[index + 2:].strip()
        break
    # A first sentence still too long is cut at its first top-level `: ` ("problem: what to do"), else at
    # its first `; ` ("problem; what follows"), never in its first 40 characters (a prefix such as
    # "after an upgrade to vLLM 0.29.0: ...").
    joint = ". "  # how a piece cut from the end of the head joins what `rest` already holds
    cut = False  # the head was cut at a mark already: what follows the piece is joined with that mark
    for mark in ":;":
        if len(head) <= SHORT_MESSAGE:
            break
        for index, kind in _breaks_within(breaks, len(head)):
            if kind == mark and index >= 40:
                after = head[index + 2:].strip()
                glue = joint if cut else " "  # uncut, the piece ends its sentence with its own period
                head, rest, joint = head[:index], (after + (glue + rest if rest else "")).strip(), mark + " "
                cut = True
                break
    if len(head) > SHORT_MESSAGE:  # still too long: cut before a top-level ", so " (the consequence)
        for index, kind in _breaks_within(breaks, len(head)):
            if kind == "," and index >= 40 and head[index + 2:index + 5] == "so ":
                piece = head[index + 2:].strip().removesuffix(".")
                head, rest = head[:index], piece + (joint + rest if rest else "")
                break
    if not rest:
        return text, None
    first_word = rest.split(" ", 1)[0].rstrip(",;:")  # "redundant, and ..." -> "Redundant, and ..."
    if first_word.isalpha() and first_word.islower():  # `vLLM`, `--flag`, `"key"` stay as written
        rest = rest[0].upper() + rest[1:]
    return head.removesuffix("."), sentence(rest)


def dumps_indented(value: object) -> str:
    """`json.dumps(value, indent=2, ensure_ascii=False)`, the same text, several times faster: the standard
    library encodes an indented document in Python generators, one per nested value (7,667 findings: 0.2 s)."""
    from json.encoder import encode_basestring as quote

    parts: list[str] = []
    put = parts.append

    def key_text(key: object) -> str:
        if isinstance(key, str):
            return key
        if isinstance(key, float):
            return _float_text(key)
        if key is True or key is False or key is None:
            return "true" if key is True else "false" if key is False else "null"
        if isinstance(key, int):
            return int.__repr__(key)
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")

    def scalar(item: object) -> str | None:
        if isinstance(item, str):
            return quote(item)
        if item is None:
            return "null"
        if item is True:
            return "true"
        if item is False:
            return "false"
        if isinstance(item, int):
            return int.__repr__(item)
        if isinstance(item, float):
            return _float_text(item)
        if isinstance(item, (list, tuple, dict)):
            return None
        raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")

    def walk(item: object, indent: str) -> None:
        inner = indent + "  "
        if isinstance(item, dict):
            if not item:
                put("{}")
                return
            sep = "{" + inner
            for key, val in item.items():
                name = quote(key if type(key) is str else key_text(key))
                kind = type(val)
                if kind is str:
                    put(f"{sep}{name}: {quote(val)}")
                elif kind is int:
                    put(f"{sep}{name}: {int.__repr__(val)}")
                else:
                    text = scalar(val)
                    if text is None:
                        put(f"{sep}{name}: ")
                        walk(val, inner)
                    else:
                        put(f"{sep}{name}: {text}")
                sep = "," + inner
            put(indent + "}")
            return
        assert isinstance(item, (list, tuple))  # what `scalar` leaves
        if not item:
            put("[]")
            return
        sep = "[" + inner
        for val in item:
            kind = type(val)
            if kind is str:
                put(sep + quote(val))
            else:
                text = scalar(val)
                if text is None:
                    put(sep)
                    walk(val, inner)
                else:
                    put(sep + text)
            sep = "," + inner
        put(indent + "]")

    top = scalar(value)
    if top is not None:
        return top
    walk(value, "\n")
    return "".join(parts)


def _float_text(number: float) -> str:
    """A float as `json.dumps` writes it (NaN and the infinities as JavaScript names them)."""
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "Infinity" if number > 0 else "-Infinity"
    return float.__repr__(number)


def _breaks_within(breaks: list[tuple[int, str]], length: int) -> list[tuple[int, str]]:
    """`_top_level_breaks(text[:length])` from `breaks`, those of the whole text: a prefix is scanned the same way
    up to its end, and a mark at its last character has no space after it."""
    return [(index, kind) for index, kind in breaks if index + 1 < length]
