"""Human output: one line per finding, a source excerpt with a caret under the span, a summary.

    deploy/vllm.yaml:8:28: VL101 [warning] `python -m vllm.entrypoints.openai.api_server` is deprecated (deprecated-entrypoint)
     8 |     command: [python3, -m, vllm.entrypoints.openai.api_server]
       |                            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
       = help: Use `vllm serve MODEL`.

    Found 1 problem (1 warning) in 1 file (3 files checked, 1 vLLM workload).

The first line says what is wrong; the rest of the message (the why, what to do) is the `help:` line
(`split_message`). Carets are placed by display columns: tabs expand to TAB_WIDTH stops, East Asian wide characters take
two columns, control characters are shown as their Unicode pictures, long lines are cut around the span.
`statistics` prints `count  CODE  rule-name` per rule instead of the findings; `quiet` prints only the
finding (or statistics) lines. Run notices are not part of this output: the CLI prints them on stderr.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from vllmlint.finding import Finding, Notice, Severity
from vllmlint.formatters.report import Report, is_fixable, rule_name, rules_by_code, split_message

if TYPE_CHECKING:
    from collections.abc import Iterator
    from vllmlint.registry import Rule

TAB_WIDTH = 4
MAX_EXCERPT_WIDTH = 120  # display columns of source shown per excerpt line
EXCERPT_CONTEXT = 30  # columns kept before the span when a long line is cut

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_SEVERITY_COLOR = {Severity.ERROR: "\x1b[1;31m", Severity.WARNING: "\x1b[1;33m", Severity.INFO: "\x1b[1;36m"}
_GUTTER_COLOR = "\x1b[34m"
_HELP_COLOR = "\x1b[1;32m"
_FIX_COLOR = "\x1b[36m"


class _Paint:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, style: str, text: str) -> str:
        return f"{style}{text}{_RESET}" if self.enabled and text else text


def _visible(text: str) -> str:
    """Control characters (a manifest may hold ESC sequences or stray newlines) shown as their Unicode
    control pictures, so they can neither drive the terminal nor break the one-line-per-finding layout."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if ch == "\t" or ch.isprintable():
            out.append(ch)
        elif code < 0x20:
            out.append(chr(0x2400 + code))
        elif code == 0x7F:
            out.append("\u2421")
        else:
            out.append("\ufffd")
    return "".join(out)


def _char_width(ch: str) -> int:
    if ch < "\x80":
        return 1  # ASCII: neither combining nor wide (most manifests, and no import of unicodedata)
    import unicodedata  # here, not at start-up: a shared library, loaded only for a line with other characters

    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _layout(line: str) -> tuple[list[str], list[int]]:
    """Each character as displayed (a tab expands to the next TAB_WIDTH stop) and, for each character
    position (plus the end), the display column it starts at: carets are placed by these columns."""
    pieces, starts, column = [], [], 0
    for ch in line:
        starts.append(column)
        if ch == "\t":
            step = TAB_WIDTH - column % TAB_WIDTH
            pieces.append(" " * step)
            column += step
        else:
            pieces.append(ch)
            column += _char_width(ch)
    starts.append(column)
    return pieces, starts


def _window(starts: list[int], first: int, end: int) -> tuple[int, int]:
    """Character range [lo, hi) of a long line to show: at most MAX_EXCERPT_WIDTH columns, starting a
    little before the span so the caret lands on screen (minified or flow-style YAML can be huge)."""
    if starts[-1] <= MAX_EXCERPT_WIDTH:
        return 0, len(starts) - 1
    lo_column = max(starts[first] - EXCERPT_CONTEXT, 0)
    lo = first
    while lo > 0 and starts[lo - 1] >= lo_column:
        lo -= 1
    hi = lo
    while hi < len(starts) - 1 and starts[hi + 1] - starts[lo] <= MAX_EXCERPT_WIDTH:
        hi += 1
    while lo > 0 and starts[hi] - starts[lo - 1] <= MAX_EXCERPT_WIDTH:  # near the end: use the room
        lo -= 1
    return lo, max(hi, min(end, first + 1))


def excerpt(finding: Finding, source, paint=None, masks=None, lines=None) -> list[str]:
    """The finding's first line with a line-number gutter, and a caret line under columns col..end_col
    (to the end of the line when the span goes on). Empty when the line is unknown. `lines`: a dict kept
    across the findings of one render (with the same `masks`), which lays out each source line once."""
    paint = paint or _Paint(False)
    span = finding.span
    if source is None or span.line < 1:
        return []
    laid = _laid_line(finding, source, masks, lines)
    if laid is None:
        return []
    raw, pieces, starts = laid
    # 0-based character indexes of the span on this line, [first, end)
    first = min(max(span.col, 1), len(raw) + 1) - 1
    end = span.end_col - 1 if span.end_line == span.line else len(raw)
    end = min(max(end, first), len(raw))
    if pieces is None and len(raw) <= MAX_EXCERPT_WIDTH:  # one column per character, all of it shown
        shown, left, width = raw, first, max(end - first, 1)
    else:
        lo, hi = _window(starts, first, end)
        end = min(end, hi)
        before = "\u2026" if lo > 0 else ""  # an ellipsis marks a cut, one column wide
        after = "\u2026" if hi < len(raw) else ""
        shown = before + ("".join(pieces[lo:hi]) if pieces is not None else raw[lo:hi]) + after
        left = starts[first] - starts[lo] + len(before)
        width = max(starts[end] - starts[first], 1)
    number = str(span.line)
    gutter = paint(_GUTTER_COLOR, f" {number} |")
    blank_gutter = paint(_GUTTER_COLOR, f" {' ' * len(number)} |")
    caret = paint(_SEVERITY_COLOR[finding.severity], "^" * width)
    return [f"{gutter} {shown}".rstrip(), f"{blank_gutter} {' ' * left}{caret}"]


def line_start_path(path: str) -> str:
    """A path that starts a line of output: `./` before one starting with `::`, which GitHub Actions would read
    as a workflow command (`::stop-commands::x.yaml` would switch off every later annotation)."""
    return "./" + path if path.startswith("::") else path


def finding_line(finding: Finding, name: str, paint=None, path: str | None = None, message: str | None = None,
                 fixable: bool = False) -> str:
    """`path:line:col: CODE [severity] message (rule-name)`, `[severity] [*]` when `fixable` (as ruff marks
    what `--fix` repairs); `path` replaces the finding's own (the repository-relative one) and `message` its
    message (the short first line) when given."""
    paint = paint or _Paint(False)
    span = finding.span
    where = paint(_BOLD, f"{line_start_path(_visible(path or finding.path))}:{span.line}:{span.col}:")
    code = paint(_SEVERITY_COLOR[finding.severity], finding.code)
    mark = " " + paint(_FIX_COLOR, "[*]") if fixable else ""
    suffix = f" ({name})" if name else ""
    line = f"{where} {code} [{finding.severity.label}]{mark} {_visible(finding.message if message is None else message)}{suffix}"
    if finding.suppressed_by is not None:
        line += paint(_DIM, f" [suppressed: {_visible(finding.suppressed_by)}]")
    return line


def notice_line(notice: Notice, local_paths: dict[str, str] | None = None) -> str:
    """One line for a run notice, as the CLI prints it on stderr: `vllmlint: LEVEL: path:line: message`.
    Control characters from a manifest (a name, an image) are made visible: they must not drive the
    terminal or forge a GitHub workflow command. `local_paths` maps display paths to the current folder's."""
    path = (local_paths or {}).get(notice.path, notice.path)
    where = f"{path}:{notice.line}: " if path and notice.line else (f"{path}: " if path else "")
    return "vllmlint: " + _visible(f"{notice.level}: {where}{local_message(notice.message, notice.path, path)}")


def notice_lines(notices: list[Notice], local_paths: dict[str, str] | None = None, show_notes: bool = False,
                 quiet: bool = False) -> list[str]:
    """The run's notices as the CLI prints them on stderr. Warnings and errors one line each; notes
    (level `note`) that carry a `summary` one line per kind unless `show_notes` (a kind seen once is
    printed in full), other notes one line each (a file skipped is worth its own line); no note with
    `quiet` unless `show_notes`. A kind is a code and the notice's `summary`."""
    lines: list[str] = []
    groups: dict[tuple, list[Notice]] = {}
    for notice in notices:
        if notice.level != "note":
            lines.append(notice_line(notice, local_paths))
        elif show_notes or not quiet:  # asking for the notes wins over -q
            groups.setdefault((notice.code, notice.summary), []).append(notice)
    for (_code, summary), group in groups.items():
        if show_notes or len(group) == 1 or summary is None:
            lines += [notice_line(n, local_paths) for n in group]
            continue
        lines.append(_visible(f"vllmlint: note: {len(group)} {summary[1]}: --show-notes to list"))
    return lines


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def summary_lines(report: Report) -> list[str]:
    """The summary line, then the fixable count when anything is fixable."""
    fixes = fixable_line(report)
    return [summary_line(report)] + ([fixes] if fixes else [])


def understood(report: Report) -> str:
    """What the run read: `3 files checked, 2 vLLM workloads; 1 file skipped: unrendered template` (only the
    files when the report carries no counts)."""
    text = f"{_count(report.files_checked, 'file')} checked"
    if report.workloads is None:
        return text
    text += f", {_count(report.workloads, 'vLLM workload')}"
    return text + skipped_clause(report.skipped)


def skipped_clause(skipped: dict[str, int]) -> str:
    """`; 1 file skipped: unrendered template`, `; 3 files skipped: 2 unrendered template, 1 over
    --max-file-size`, or "" when no file was skipped."""
    total = sum(skipped.values())
    if not total:
        return ""
    if len(skipped) == 1:
        return f"; {_count(total, 'file')} skipped: {next(iter(skipped))}"
    return f"; {_count(total, 'file')} skipped: " + ", ".join(f"{n} {why}" for why, n in skipped.items())


# What to do about each reason a file was skipped (the engine's SKIP_* reasons).
_SKIP_HINTS = {
    "unrendered template": "lint the rendered output: `vllmlint --render CHART` or `helm template CHART | vllmlint -`",
    "over --max-file-size": "raise --max-file-size, 0 for no limit",
}


def nothing_checked_line(report: Report, level: str = "warning") -> str | None:
    """One line for stderr when the run found no vLLM invocation and no Kubernetes or Compose object in
    everything given, instead of a summary that would read as a pass: what was not checked, and how to have
    it checked. None when something was understood (or the report carries no counts)."""
    message = nothing_checked_message(report)
    return None if message is None else _visible(f"vllmlint: {level}: {message}")


def nothing_checked_message(report: Report) -> str | None:
    """`nothing checked: ...` (see `nothing_checked_line`), or None."""
    from vllmlint.formatters.report import understood_nothing

    if not understood_nothing(report):
        return None
    files = report.files_checked
    skipped = sum(report.skipped.values())
    if not files and not skipped:
        what = ("no file to lint in the given paths (folders are searched for *.yaml, *.yml, *.json, *.sh and *.md "
                "files)")
    else:
        read = files - sum(n for why, n in report.skipped.items() if why != "over --max-file-size")
        what = (f"no vLLM invocation and no Kubernetes or Compose object in {_count(read, 'file')} read"
                + skipped_clause(report.skipped))
        hints = [_SKIP_HINTS[why] for why in report.skipped if why in _SKIP_HINTS]
        if hints:
            what += f" ({'; '.join(hints)})"
    return f"nothing checked: {what}"


def summary_line(report: Report) -> str:
    checked = understood(report)
    hidden = ""
    if report.suppressed and not report.show_suppressed:
        hidden = f"; {len(report.suppressed)} suppressed not shown"
    if report.below_min_level:
        hidden += f"; {report.below_min_level} below --min-level not shown"
    if not report.findings:
        if report.failed:  # never "passed" on a run that exits 2
            return f"No problems found, but the run had errors ({checked}{hidden})."
        from vllmlint.formatters.report import understood_nothing

        if understood_nothing(report):  # nothing was checked: not a pass
            return f"Nothing checked: no vLLM invocation and no Kubernetes or Compose object ({checked}{hidden})."
        return f"All checks passed ({checked}{hidden})."
    by_severity = Counter(f.severity for f in report.findings)
    parts = [_count(by_severity[s], w, p) for s, w, p in
             ((Severity.ERROR, "error", None), (Severity.WARNING, "warning", None), (Severity.INFO, "info", "info"))
             if by_severity[s]]
    files = len({f.path for f in report.findings})
    return (f"Found {_count(len(report.findings), 'problem')} ({', '.join(parts)}) "
            f"in {_count(files, 'file')} ({checked}{hidden}).")


def fixable_line(report: Report) -> str | None:
    """`[*] N fixable with `--fix`.` (and how many more --unsafe-fixes would repair), or None."""
    safe = sum(1 for f in report.findings if is_fixable(f, report.unsafe_fixes))
    unsafe = 0 if report.unsafe_fixes else sum(1 for f in report.findings if is_fixable(f, True)) - safe
    if not safe and not unsafe:
        return None
    line = f"[*] {safe} fixable with `--fix`" if safe else "[*] 0 fixable with `--fix`"
    if unsafe:
        line += f" ({unsafe} more with `--fix --unsafe-fixes`)"
    return line + "."


def statistics_lines(findings: list[Finding], rules: dict[str, Rule], unsafe: bool = False) -> list[str]:
    """`count  CODE  rule-name` per rule, most frequent first; with a fixable column (`[*]`: `--fix`
    repairs that rule's findings, `[~]` some of them) when any finding is fixable."""
    counts = Counter(f.code for f in findings)
    if not counts:
        return []
    fixable = Counter(f.code for f in findings if is_fixable(f, unsafe))
    width = max(3, len(str(max(counts.values()))))
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))

    def mark(code: str, count: int) -> str:
        if not fixable:
            return ""
        return ("[*]" if fixable[code] == count else "[~]" if fixable[code] else "   ") + "  "

    return [f"{count:>{width}}  {code}  {mark(code, count)}{rule_name(rules, code)}".rstrip()
            for code, count in ordered]


def render(report: Report) -> str:
    return "".join(render_pieces(report))


def render_pieces(report: Report, lines_per_piece: int = 4096) -> Iterator[str]:
    """The report's text in pieces of whole lines, each ending with its newline: the command line writes each as it
    comes, so a large report is never in memory whole (36 MB of text for 10,000 files, more as a list of lines)."""
    piece: list[str] = []
    for line in _lines(report):
        piece.append(line)
        if len(piece) >= lines_per_piece:
            piece.append("")
            yield "\n".join(piece)
            piece.clear()
    if piece:
        piece.append("")  # the final newline
        yield "\n".join(piece)


def _lines(report: Report) -> Iterator[str]:
    paint = _Paint(report.color)
    rules = rules_by_code(report)
    shown = list(report.findings)
    if report.show_suppressed:
        shown += report.suppressed
    masks = redacted_spans(shown)
    laid: dict = {}  # (path, line) -> the line laid out, for findings that share a line
    splits: dict[str, tuple[str, str | None]] = {}  # message -> split_message(message): messages repeat
    if report.statistics:
        counted = statistics_lines(report.findings, rules, report.unsafe_fixes)
        yield from counted
        if not report.quiet and counted:
            yield ""
    else:
        compact = False  # the last line was an info finding's one line (a blank line ends a run of them)
        for finding in shown:
            fixable = is_fixable(finding, report.unsafe_fixes)
            if report.quiet:  # one line per finding, the whole message: what grep and editors read
                yield finding_line(finding, rule_name(rules, finding.code), paint,
                                   report.local_paths.get(finding.path), fixable=fixable)
                continue
            split = splits.get(finding.message)
            if split is None:
                split = splits[finding.message] = split_message(finding.message)
            head, help_text = split
            line = finding_line(finding, rule_name(rules, finding.code), paint, report.local_paths.get(finding.path),
                                head, fixable)
            if report.concise or finding.severity < Severity.WARNING:
                # concise: every finding on one line; full: info findings on one line (`explain CODE` tells more)
                yield line
                compact = not report.concise
                continue
            if compact:
                yield ""
                compact = False
            yield line
            shown_excerpt = excerpt(finding, report.sources.get(finding.path), paint, masks, laid)
            yield from shown_excerpt
            if help_text:
                # `=` under the excerpt's `|`, as rustc and ruff print their notes
                gutter = " " * (len(str(finding.span.line)) + 2) if shown_excerpt else "  "
                yield f"{gutter}{paint(_HELP_COLOR, '= help:')} {_visible(help_text)}"
            yield ""
        if compact or (report.concise and shown):
            yield ""
    if not report.quiet and report.summary:
        yield from summary_lines(report)


def redacted_spans(findings: list[Finding]) -> dict[tuple[str, int], list[tuple[int, int]]]:
    """(path, line) -> (col, end_col) of every credential a finding of the report masks (`Finding.redact`), on
    each line it covers: an excerpt of that line, whatever finding it is for, masks them all."""
    masks: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for finding in findings:
        if not finding.redact:
            continue
        span = finding.span
        for line in range(span.line, span.end_line + 1):
            col = span.col if line == span.line else 1
            end = span.end_col if line == span.end_line else 1 << 30
            masks.setdefault((finding.path, line), []).append((col, end))
    return masks


def redacted_line(finding: Finding, raw: str, masks=None) -> str:
    """The excerpt's line with every credential on it masked: the spans of redacted findings of the report on
    this line (`redacted_spans`; the finding's own when it is redacted), and every token of a known credential
    format whatever the rule (`vllmlint.k8s.secrets.find_tokens`): an excerpt must not print a secret that a
    message masks."""
    span = finding.span
    spans = list(masks.get((finding.path, span.line), ())) if masks else []
    if finding.redact:
        spans.append((span.col, span.end_col if span.end_line == span.line else 1 << 30))
    for col, end_col in spans:
        first = min(max(col, 1), len(raw) + 1) - 1
        end = min(max(end_col - 1, first), len(raw))
        raw = raw[:first] + "*" * (end - first) + raw[end:]
    from vllmlint.k8s.secrets import find_tokens, prefix_pattern

    if prefix_pattern().search(raw) is None:  # no token prefix on the line: nothing more to mask (most lines)
        return raw
    for start, end, _ in list(find_tokens(raw)):
        raw = raw[:start] + "*" * (end - start) + raw[end:]
    return raw



def local_message(message: str, shown: str, local: str) -> str:
    """`message` with the folder of `shown` (the notice's repository-relative path) written as the folder of
    `local` (its path from the current folder), where the message names it as a word: the command a note
    suggests (`vllmlint --render fixtures/chart`) must work where the user ran vllmlint. A file at the
    repository root (folder `.`) is left as written."""
    import posixpath
    import re

    folder, local_folder = posixpath.dirname(shown), posixpath.dirname(local) or "."
    # the nearest folder of `shown` the message names (a template's note names its chart, two levels up)
    while folder and folder != "." and folder != local_folder and folder not in message \
            and posixpath.basename(folder) == posixpath.basename(local_folder):
        folder, local_folder = posixpath.dirname(folder), posixpath.dirname(local_folder) or "."
    if not folder or folder == "." or folder == local_folder or folder not in message \
            or posixpath.basename(folder) in ("..", ""):
        return message  # `../..` is no folder's name: a message's own `../../base` stays as written
    return re.sub(rf"(?<![\w./-]){re.escape(folder)}(?![\w.-])", lambda _: local_folder, message)


def _laid_line(finding: Finding, source, masks, lines: dict | None):
    """(the line as shown, its characters as displayed or None when they are the line's own, the display
    column of each character position) of the finding's first line, credentials masked (`redacted_line`);
    None when the line is unknown. Kept in `lines` by (path, line) for findings that mask nothing of their
    own (a redacted finding's span is in `masks` too, but it is laid out afresh: it is rare)."""
    key = (finding.path, finding.span.line)
    if lines is not None and not finding.redact and key in lines:
        return lines[key]
    line = finding.span.line
    raw = _visible(source.line_text(line))
    laid: tuple[str, list[str] | None, list[int] | range] | None
    if not raw and line > len(source.line_starts):
        laid = None
    else:
        raw = redacted_line(finding, raw, masks)
        if raw.isascii() and "\t" not in raw:  # one column per character: no tab, no wide or combining one
            laid = (raw, None, range(len(raw) + 1))
        else:
            pieces, starts = _layout(raw)
            laid = (raw, pieces, starts)
    if lines is not None and not finding.redact:
        lines[key] = laid
    return laid
