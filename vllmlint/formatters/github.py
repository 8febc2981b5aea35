"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request diff.

    ::error file=deploy/vllm.yaml,line=9,col=28,endLine=9,endColumn=62,title=VL101 deprecated-entrypoint::message

Severity error -> `::error`, warning -> `::warning`, info -> `::notice`. Run notices become annotations
too (without a file when they have none). Notes of one kind (VL002 templates skipped, VL006 releases
assumed: 200 on a 1,000-file tree) are one annotation per kind, as the text format prints one line per
kind, so they do not crowd out the findings (GitHub shows a limited number of annotations per step);
`--show-notes` lists each. Suppressed findings are not annotated. A run that found no vLLM invocation and no
Kubernetes or Compose object ends with one `::warning title=vllmlint::nothing checked: ...` annotation.
"""
from __future__ import annotations

from vllmlint.finding import Finding, Notice, NoticeLevel, Severity
from vllmlint.formatters.report import Report, notice_kinds, rule_name, rules_by_code

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
_NOTICE_COMMAND = {NoticeLevel.ERROR: "error", NoticeLevel.WARNING: "warning", NoticeLevel.NOTE: "notice"}


def escape_data(text: str) -> str:
    """The message part, as the Actions runner unescapes it (%, CR, LF); other control characters (an
    escape sequence from a manifest) are shown as symbols rather than sent to the log."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if not text.isprintable():
        from vllmlint.formatters.text import _visible

        text = _visible(text)
    return text


def escape_property(text: str) -> str:
    """A `key=value` property: also `:` and `,`, which would end the value or the property list."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(name: str, properties: list[tuple[str, object]], message: str) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties)
    return f"::{name} {props}::{escape_data(message)}" if props else f"::{name}::{escape_data(message)}"


def annotation_path(path: str) -> str:
    """GitHub matches annotations to repository paths: forward slashes, no leading `./`."""
    posix = path.replace("\\", "/")
    while posix.startswith("./"):
        posix = posix[2:]
    return posix


def finding_command(finding: Finding, name: str) -> str:
    span = finding.span
    properties: list[tuple[str, object]] = [("file", annotation_path(finding.path))]
    if span.line >= 1:
        properties.append(("line", span.line))
        if span.end_line == span.line:
            # The runner drops an annotation whose col/endColumn go with different lines or whose
            # endColumn < col (actions/runner#4167). endColumn is passed exclusive, as ours is: that is
            # what users observed (github/docs#40038); the docs do not say.
            properties += [("col", span.col), ("endLine", span.end_line),
                           ("endColumn", max(span.end_col, span.col))]
        else:
            properties.append(("endLine", span.end_line))
    properties.append(("title", f"{finding.code} {name}".strip()))
    return _command(_COMMAND[finding.severity], properties, finding.message)


def notice_command(notice: Notice) -> str:
    properties: list[tuple[str, object]] = []
    if notice.path:
        properties.append(("file", annotation_path(notice.path)))
        if notice.line >= 1:
            properties.append(("line", notice.line))
    properties.append(("title", notice.code))
    return _command(_NOTICE_COMMAND.get(notice.level, "notice"), properties, notice.message)


def summary_command(summary: tuple[str, str], notices: list[Notice]) -> str:
    """One `::notice` for a kind of note seen more than once: the count, the first place, how to list them."""
    first = notices[0]
    where = f"{annotation_path(first.path)}:{first.line}" if first.path and first.line else annotation_path(first.path)
    message = f"{len(notices)} {summary[1]}: --show-notes to list" + (f" (the first at {where})" if where else "")
    return _command(_NOTICE_COMMAND.get(first.level, "notice"), [("title", first.code)], message)


def render(report: Report) -> str:
    rules = rules_by_code(report)
    lines = [finding_command(f, rule_name(rules, f.code)) for f in report.findings]
    for summary, notices in notice_kinds(report.notices):
        if summary is None or len(notices) == 1 or report.show_notes:
            lines += [notice_command(n) for n in notices]
        else:
            lines.append(summary_command(summary, notices))
    if not report.findings:  # nothing vLLM or Kubernetes was found: an annotation says so, not a silent pass
        from vllmlint.formatters.text import nothing_checked_message

        message = nothing_checked_message(report)
        if message is not None:
            lines.append(_command("warning", [("title", "vllmlint")], message))
    return "".join(line + "\n" for line in lines)
