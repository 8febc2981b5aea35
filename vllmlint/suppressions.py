"""Suppressions: comments and annotations that hide findings, with the reason a team gave for it.

Forms (rules named by code or name, several comma-separated, or `all`; the reason follows ` -- `):

    image: nginx:latest  # vllmlint: disable=VL201 -- reason        this line
    # vllmlint: disable-next-line=VL201,image-unpinned -- reason     next line that is not blank/comment
    # vllmlint: disable-file=VL301 -- reason                         the whole file
    <!-- vllmlint: disable=VL102 -- reason -->                       Markdown: the next fenced block
    metadata: {annotations: {vllmlint.io/ignore: "VL201", vllmlint.io/ignore-reason: "..."}}

Only real comments count: `#` inside a quoted or plain YAML scalar or inside a shell word is text. A
literal block scalar (`|`) is read as a shell script: its comment lines are shell comments, and a
`disable-next-line` there covers the whole next command, backslash continuations included.

Suppressions that hide nothing become VL003 (unused-suppression), those without a reason VL004
(suppression-without-reason); neither can be hidden by the suppression it reports.
"""
from __future__ import annotations

from vllmlint import records
import re
from bisect import bisect_left, bisect_right
from vllmlint.records import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

from vllmlint.finding import Finding, Notice, Severity, Span, Subject
from vllmlint.k8s.objects import K8sObject, World
from vllmlint.source.comments import MARKER, yaml_comments
from vllmlint.source.shell import Script, read_script
from vllmlint.source.yamlmodel import Mapping, Scalar, SourceFile
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.source.markdown import Fence
    from vllmlint.registry import Rule

# MARKER ("vllmlint"): files without it (nearly all) are skipped after this one substring check.
UNUSED, NO_REASON = "VL003", "VL004"
META_CODES = {UNUSED, NO_REASON}  # only a suppression naming them explicitly (not `all`) hides them
IGNORE_KEY, REASON_KEY = "vllmlint.io/ignore", "vllmlint.io/ignore-reason"

_NAME = r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"
_DIRECTIVE = lazy_compile(r"vllmlint:[ \t]*(?P<kind>disable-next-line|disable-file|disable)\b")
_BODY = lazy_compile(r"[ \t]*=[ \t]*(?P<rules>" + _NAME + r"(?:[ \t]*,[ \t]*" + _NAME + r")*)")
_NAME_AT = lazy_compile(_NAME)


@dataclass
class Entry:
    """One rule name of a suppression, where it is written, and whether it hid anything."""

    name: str
    span: Span
    code: str | None  # the rule's code, "*" for `all`, None when it names no rule
    used: bool = False


@dataclass
class Directive:
    path: str
    scope: str  # "line", "next-line", "next-command", "block", "file", "object"
    span: Span  # the comment (or annotation value) itself
    text: str  # as written, for messages
    entries: list[Entry]
    reason: str | None
    lines: tuple[int, int] | None = None  # first and last line covered (line scopes)
    obj: K8sObject | None = None  # annotation scope
    malformed: bool = False

    def covers(self, finding: Finding) -> bool:
        if self.scope == "file":
            return finding.path == self.path
        if self.scope == "object" and self.obj is not None:
            obj, subject = self.obj, finding.subject
            if obj.name and (subject.kind, subject.namespace, subject.name) == (obj.kind, obj.namespace, obj.name):
                return True
            return finding.path == self.path and obj.node.start <= finding.span.start < obj.node.end
        return (finding.path == self.path and self.lines is not None
                and self.lines[0] <= finding.span.line <= self.lines[1])

    def matching_entries(self, code: str) -> list[Entry]:
        return [e for e in self.entries if e.code == code or (e.code == "*" and code not in META_CODES)]

    def legacy_entries(self, code: str) -> list[Entry]:
        """Entries naming a code `code` moved from (data/renamed-codes.yaml): they cover it for one release."""
        from vllmlint.renames import covering

        olds = covering(code)
        return [e for e in self.entries if e.code in olds] if olds else []


@dataclass
class SuppressionOutcome:
    kept: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)  # each with .suppressed_by = reason ("" if none)
    problems: list[Finding] = field(default_factory=list)  # VL003 / VL004 findings
    notices: list[Notice] = field(default_factory=list)  # VL008: an old code covered a moved finding


def apply_suppressions(findings: list[Finding], sources: dict[str, SourceFile], world: World, *,
                       require_reason: bool = True, active_codes: set[str] | None = None) -> SuppressionOutcome:
    """Split `findings` into kept and suppressed, and report unused (VL003) and unexplained (VL004)
    suppressions. `active_codes` are the rules that ran (None: all): a suppression for a rule that did
    not run is not unused, and VL003/VL004 are reported only if they are active themselves."""
    directives: list[Directive] = []
    manifests = {obj.source.display_path for obj in world.objects}
    for path, source in sources.items():
        if MARKER not in source.text:
            continue
        if path.lower().endswith((".yaml", ".yml", ".json")) and path not in manifests:
            continue  # YAML that is not a manifest (a workflow, a rule file) is not linted: nothing to hide
        directives.extend(comment_directives(source))
    directives.extend(annotation_directives(world))
    if not directives:
        return SuppressionOutcome(kept=list(findings))

    def active(code: str) -> bool:
        return active_codes is None or code in active_codes

    outcome = SuppressionOutcome()
    index = _LineIndex(directives)
    moved: dict[tuple[str, int, str, str], None] = {}
    for finding in findings:
        reason = _suppress(finding, index.candidates(finding), moved)
        if reason is None:
            outcome.kept.append(finding)
        else:
            outcome.suppressed.append(records.replace(finding, suppressed_by=reason))

    # Problems found now may be hidden by another suppression that names VL003/VL004 explicitly.
    problems: list[tuple[Directive, Finding]] = []
    for directive in directives:
        problems.extend((directive, p) for p in _problems(directive, require_reason, active, meta=False))
    for owner, problem in problems:
        others = [d for d in index.candidates(problem) if d is not owner]
        reason = _suppress(problem, others)
        if reason is None:
            outcome.problems.append(problem)
        else:
            outcome.suppressed.append(records.replace(problem, suppressed_by=reason))
    # Entries naming VL003/VL004 are judged last, once they had their chance; these are final.
    for directive in directives:
        outcome.problems.extend(_problems(directive, require_reason, active, meta=True))
    outcome.problems.sort(key=lambda f: f.sort_key)
    from vllmlint.registry import moved_notice

    outcome.notices = [moved_notice(old, new, path, line) for path, line, old, new in moved]
    outcome.suppressed.sort(key=lambda f: f.sort_key)
    return outcome


class _LineIndex:
    """Directives by (path, line) for line scopes, by path for files; object scopes are few: scanned."""

    def __init__(self, directives: list[Directive]):
        self.by_line: dict[tuple[str, int], list[Directive]] = {}
        self.by_file: dict[str, list[Directive]] = {}
        self.objects: list[Directive] = []
        for directive in directives:
            if directive.scope == "file":
                self.by_file.setdefault(directive.path, []).append(directive)
            elif directive.scope == "object":
                self.objects.append(directive)
            elif directive.lines is not None:
                for line in range(directive.lines[0], directive.lines[1] + 1):
                    self.by_line.setdefault((directive.path, line), []).append(directive)

    def candidates(self, finding: Finding) -> list[Directive]:
        """Most specific first: line scopes, then objects, then the file."""
        found = list(self.by_line.get((finding.path, finding.span.line), ()))
        found.extend(d for d in self.objects if d.covers(finding))
        found.extend(self.by_file.get(finding.path, ()))
        return found


def _suppress(finding: Finding, directives: list[Directive],
              moved: dict[tuple[str, int, str, str], None] | None = None) -> str | None:
    """The reason `finding` is suppressed ("" when none was given), or None; marks the entries used. An
    entry naming the code the finding moved from covers it when the directive does not name its own code:
    `moved` collects (path, line, old code, new code) for the VL008 note."""
    reasons = []
    for directive in directives:
        entries = directive.matching_entries(finding.code)
        if not entries and moved is not None:
            entries = directive.legacy_entries(finding.code)
            if entries and directive.covers(finding):
                for entry in entries:
                    moved[(directive.path, directive.span.line, entry.code or "", finding.code)] = None
        if entries and directive.covers(finding):
            for entry in entries:
                entry.used = True
            reasons.append(directive.reason)
    if not reasons:
        return None
    return next((r for r in reasons if r), "")


_SCOPE_WORDS = {"line": "on this line", "next-line": "on the next line", "next-command": "in the next command",
                "block": "in the next code block", "file": "in this file"}


def _problems(directive: Directive, require_reason: bool, active: Callable[[str], bool],
              meta: bool) -> list[Finding]:
    """VL004 for a missing reason (with the first pass), VL003 for entries that hid nothing: entries for
    ordinary rules in the first pass (meta=False), entries naming VL003/VL004 in the second."""
    from vllmlint.registry import all_rules

    rules = all_rules()
    result = []
    subject = _subject(directive.obj)
    if not meta and directive.malformed and active(UNUSED):
        result.append(_finding(UNUSED, f"`{directive.text}` is not a suppression vllmlint understands: write "
                               "`# vllmlint: disable=CODE -- reason` (or disable-next-line, disable-file)",
                               directive, directive.span, subject, directive.text))
        return result
    if not meta and require_reason and directive.reason is None and active(NO_REASON):
        where = ("add the annotation `vllmlint.io/ignore-reason`" if directive.scope == "object"
                 else "add ` -- why` after the rule list")
        result.append(_finding(NO_REASON, f"`{directive.text}` gives no reason: {where}, so the next reader "
                               "knows whether it still applies", directive, directive.span, subject, directive.text))
    if not active(UNUSED):
        return result
    scope = (f"in {directive.obj.describe()}" if directive.obj is not None else _SCOPE_WORDS[directive.scope])
    for entry in directive.entries:
        if (entry.code in META_CODES) != meta or entry.used:
            continue
        if entry.code is None:
            if meta:
                continue
            import difflib

            close = difflib.get_close_matches(entry.name, [r.name for r in rules.values()], n=1, cutoff=0.6)
            hint = f" (did you mean `{close[0]}`?)" if close else "; use a rule code (VL201) or name (image-unpinned)"
            result.append(_finding(UNUSED, f"`{entry.name}` in `{directive.text}` names no rule, so it suppresses "
                                   f"nothing{hint}", directive, entry.span, subject, f"{directive.text}:{entry.name}"))
            continue
        if entry.code == "*":
            if not _all_rules_active(active, rules):
                continue
            what = "any finding"
        else:
            if not active(entry.code):
                continue  # the rule did not run: nobody knows whether it would have found something
            what = f"{entry.code} ({rules[entry.code].name})" if entry.code in rules else entry.code
        result.append(_finding(UNUSED, f"`{entry.name}` in `{directive.text}` suppresses nothing: no {what} "
                               f"{scope}; remove it", directive, entry.span, subject, f"{directive.text}:{entry.name}"))
    return result


def _all_rules_active(active: Callable[[str], bool], rules: dict[str, Rule]) -> bool:
    return all(active(r.code) for r in rules.values() if r.enabled and r.kind == "result")


def _finding(code: str, message: str, directive: Directive, span: Span, subject: Subject, value: str) -> Finding:
    from vllmlint.registry import all_rules

    rule = all_rules().get(code)
    severity = rule.severity if rule is not None else Severity.WARNING
    return Finding(code, severity, message, directive.path, span, subject, value)


def _subject(obj: K8sObject | None) -> Subject:
    return Subject(obj.kind, obj.namespace, obj.name) if obj is not None else Subject()


# --- reading directives ---------------------------------------------------------------------------
def _resolve(name: str) -> str | None:
    from vllmlint.registry import rule

    if name.lower() == "all":
        return "*"
    try:
        return rule(name).code
    except KeyError:
        return None


def parse_directive(source: SourceFile, start: int, end: int, comment_start: int, path: str) -> Directive | None:
    """The directive whose `vllmlint:` is at `start` in a comment that starts at `comment_start` and ends
    at `end`; None if the comment only mentions vllmlint. Scope and lines are the caller's to set."""
    text = source.text
    head = _DIRECTIVE.match(text, start, end)
    if head is None:
        return None
    kind = head.group("kind")
    scope = {"disable": "line", "disable-next-line": "next-line", "disable-file": "file"}[kind]
    whole = source.span(comment_start, end)
    body = _BODY.match(text, head.end(), end)
    if body is None:
        written = text[start:end].strip()
        return Directive(path, scope, whole, written, [], None, malformed=True)
    entries = []
    rules_start = body.start("rules")
    for match in _NAME_AT.finditer(body.group("rules")):
        name_start = rules_start + match.start()
        entries.append(Entry(match.group(), source.span(name_start, name_start + len(match.group())),
                             _resolve(match.group())))
    tail = text[body.end():end].strip()
    reason = tail[2:].strip() if tail.startswith("--") else ""
    written = f"{kind}={','.join(e.name for e in entries)}"
    return Directive(path, scope, whole, written, entries, reason or None)


def comment_directives(source: SourceFile) -> list[Directive]:
    path, text = source.display_path, source.text
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix in ("md", "markdown"):
        return _markdown_directives(source)
    if suffix in ("sh", "bash") or (suffix not in ("yaml", "yml", "json") and text.startswith("#!")):
        return _script_directives(source, 0, len(text))
    from vllmlint.source.files import is_dockerfile

    if is_dockerfile(path.rsplit("/", 1)[-1]):
        # A Dockerfile's comments are whole lines, as a script's: `# vllmlint: disable-next-line=...` above an
        # instruction covers it with its continuation lines (a comment after an instruction is not one to Docker).
        return _script_directives(source, 0, len(text))
    return _yaml_directives(source, 0, len(text))


def _directive_sites(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(offset of `#`, offset of `vllmlint:`) for every `# vllmlint:` between start and end."""
    pos = text.find("vllmlint:", start, end)
    while pos != -1:
        hash_at = pos - 1
        while hash_at >= start and text[hash_at] in " \t":
            hash_at -= 1
        if hash_at >= start and text[hash_at] == "#":
            yield hash_at, pos
        pos = text.find("vllmlint:", pos + 1, end)


# YAML ---------------------------------------------------------------------------------------------
def _yaml_directives(source: SourceFile, start: int, end: int) -> list[Directive]:
    """Directives in the YAML comments of text[start:end] (a file, or a YAML block of a Markdown file),
    and in the shell comments of its literal block scalars. Comments come from the index built from the
    parse the model was built from (`vllmlint.source.comments`): the YAML is not parsed again."""
    text = source.text
    if text.find("vllmlint:", start, end) == -1:
        return []
    index = yaml_comments(source)
    if index is None:
        return []  # never parsed as YAML (not linted as YAML): no YAML comments to read
    directives = []
    for comment in index.in_range(start, end):
        for hash_at, at in _directive_sites(text, comment.start, comment.end):
            directive = parse_directive(source, at, comment.end, hash_at, source.display_path)
            if directive is None:
                continue
            directive.lines = _yaml_lines(source, hash_at, directive.scope, end)
            directives.append(directive)
    for block_start, block_end in index.literal_blocks_in(start, end):
        if text.find("vllmlint:", block_start, block_end) != -1:
            # A literal block scalar is read as a shell script; its header line (`|`) is YAML's.
            region_start = text.find("\n", block_start, block_end) + 1
            if region_start:
                directives.extend(_script_directives(source, region_start, block_end))
    directives.sort(key=lambda d: d.span.start)
    return directives


def _yaml_lines(source: SourceFile, hash_at: int, scope: str, limit: int) -> tuple[int, int] | None:
    """Lines a YAML comment's directive covers; `limit` ends the YAML (a Markdown block's end)."""
    line, _ = source.line_col(hash_at)
    if scope == "line":
        return line, line
    if scope == "next-line":
        text, starts = source.text, source.line_starts
        for number in range(line + 1, len(starts) + 1):
            if starts[number - 1] >= limit:
                return None
            end = starts[number] - 1 if number < len(starts) else len(text)
            stripped = text[starts[number - 1]:min(end, limit)].strip()
            if stripped and not stripped.startswith("#"):
                return number, number
        return None
    return None


# shell --------------------------------------------------------------------------------------------
def _script_directives(source: SourceFile, start: int, end: int) -> list[Directive]:
    """Directives in the shell comments of text[start:end] (a script, a block scalar, a fenced block),
    as the shell reader finds them: `#` inside a word, quotes or a here-document's data is text."""
    text = source.text
    if text.find("vllmlint:", start, end) == -1:
        return []
    script = read_script(text, start, end)
    comment_lines = {source.line_col(c.start)[0] for c in script.comments}
    joined = _joined_newlines(text, script)
    last_line = source.line_col(max(end - 1, start))[0]
    directives = []
    for comment in script.comments:
        for hash_at, at in _directive_sites(text, comment.start, comment.end):
            directive = parse_directive(source, at, comment.end, hash_at, source.display_path)
            if directive is None:
                continue
            line = source.line_col(hash_at)[0]
            if directive.scope == "line":
                directive.lines = (line, line)
            elif directive.scope == "next-line":
                directive.scope = "next-command"
                directive.lines = _next_command(source, line, last_line, comment_lines, joined)
            directives.append(directive)
    return directives


def _joined_newlines(text: str, script: Script) -> set[int]:
    """Newlines that do not end a command: escaped by a backslash, or inside a word (quotes)."""
    joined = {c.newline for c in script.continuations}
    for command in script.commands:
        if text.find("\n", command.start, command.end) == -1:
            continue
        for word in command.words:
            pos = text.find("\n", word.start, word.end)
            while pos != -1:
                joined.add(pos)
                pos = text.find("\n", pos + 1, word.end)
    return joined


def _next_command(source: SourceFile, line: int, last_line: int, comment_lines: set[int],
                  joined: set[int]) -> tuple[int, int] | None:
    """Lines of the first command after `line`: blank and comment lines skipped, continuations followed."""
    first = line + 1
    while first <= last_line:
        stripped = source.line_text(first).strip()
        if stripped and not (stripped.startswith("#") and first in comment_lines):
            break
        first += 1
    else:
        return None
    last = first
    starts = source.line_starts
    while last < min(last_line, len(starts) - 1) and (starts[last] - 1) in joined:  # the newline ending line `last`
        last += 1
    return first, last


# Markdown -----------------------------------------------------------------------------------------
def _markdown_directives(source: SourceFile) -> list[Directive]:
    from vllmlint.source.markdown import SHELL_LANGS, YAML_LANGS, fences, kubernetes_fence  # Markdown only

    text = source.text
    blocks = fences(text)
    directives = []
    for fence in blocks:
        if text.find("vllmlint:", fence.content_start, fence.content_end) == -1:
            continue
        if fence.language in YAML_LANGS:
            directives.extend(_yaml_directives(source, fence.content_start, fence.content_end))
        elif fence.language in SHELL_LANGS:
            directives.extend(_script_directives(source, fence.content_start, fence.content_end))
        elif not fence.language and kubernetes_fence(text, fence):  # an unlabelled fence read as a manifest
            directives.extend(_yaml_directives(source, fence.content_start, fence.content_end))
    ordered = sorted(blocks, key=lambda fence: fence.opening)
    openings = [fence.opening for fence in ordered]
    for start, body_start, body_end, end in html_comments(text):
        i = bisect_right(openings, start) - 1
        if i >= 0 and start < ordered[i].closing:
            continue  # inside a code block: text, not a Markdown comment
        if not _at_line_start(text, start):
            continue  # not at the start of a line: inline text (often `code`), not an HTML comment block
        at = text.find("vllmlint:", body_start, body_end)
        if at == -1 or text[body_start:at].strip():
            continue
        directive = parse_directive(source, at, body_end, start, source.display_path)
        if directive is None:
            continue
        directive.span = source.span(start, end)
        if directive.scope != "file":
            directive.scope = "block"
            directive.lines = _next_block(source, end, ordered, openings)
        directives.append(directive)
    return directives


_NOT_BLANK = lazy_compile(r"\S")


def _at_line_start(text: str, pos: int) -> bool:
    """Only blanks between the start of its line and `pos` (looking back over those blanks only)."""
    i = pos - 1
    while i >= 0 and text[i] in " \t\r\f\v":
        i -= 1
    return i < 0 or text[i] == "\n"


def html_comments(text: str) -> Iterator[tuple[int, int, int, int]]:
    """(start, body start, body end, end) of each `<!-- ... -->`, as `re.finditer("<!--(.*?)-->", re.S)` finds
    them, in one pass: once no `-->` follows an opening, none follows a later one (the regex scanned to the end
    of the text again for each of 100,000 unclosed `<!--`)."""
    pos = text.find("<!--")
    while pos != -1:
        close = text.find("-->", pos + 4)
        if close == -1:
            return
        yield pos, pos + 4, close, close + 3
        pos = text.find("<!--", close + 3)


def _next_block(source: SourceFile, after: int, ordered: list[Fence], openings: list[int]) -> tuple[int, int] | None:
    """Lines of the fenced block right below `after` (only blank lines between), fences included. `ordered`: the
    blocks by opening offset, `openings` those offsets."""
    i = bisect_left(openings, after)
    if i == len(ordered):
        return None
    fence = ordered[i]
    if _NOT_BLANK.search(source.text, after, fence.opening):  # stops at the first character: linear in all
        return None
    return source.line_col(fence.opening)[0], source.line_col(max(fence.closing - 1, fence.opening))[0]


# annotations --------------------------------------------------------------------------------------
def annotation_directives(world: World) -> list[Directive]:
    directives = []
    marked: dict[int, bool] = {}
    for obj in world.objects:
        key = id(obj.source)
        if key not in marked:
            marked[key] = MARKER in obj.source.text
        if not marked[key]:
            continue
        meta = obj.metadata
        annotations = meta.get("annotations") if meta is not None else None
        if not isinstance(annotations, Mapping):
            continue
        value = annotations.get(IGNORE_KEY)
        if not isinstance(value, Scalar) or value.value is None:
            continue
        source = obj.source
        entries = []
        for match in re.finditer(r"[^,\s]+", value.text):
            start, end = value.source_index(match.start()), value.source_index(match.end())
            entries.append(Entry(match.group(), source.span(start, end), _resolve(match.group())))
        reason_node = annotations.get(REASON_KEY)
        reason = reason_node.text.strip() if isinstance(reason_node, Scalar) and reason_node.value is not None else ""
        written = f"{IGNORE_KEY}: {','.join(e.name for e in entries)}"
        directives.append(Directive(source.display_path, "object", value.span, written, entries,
                                    reason or None, obj=obj))
    return directives
