"""SARIF 2.1.0 for GitHub code scanning, written as plain JSON data.

One run; `tool.driver.rules` describes the rules that ran (documentation from the rule files, the
`precision` and, for security rules, `security-severity` properties GitHub reads). GitHub takes
`security-severity` from a result's rule descriptor and shows it instead of the result's level, so it is on
descriptors of warnings and errors only: a security rule's results reported at another level than the rule's
(VL501's info findings, or an info rule raised to warning by the configuration) get a descriptor of their own,
`VL501/info`, with it only for a warning or an error, and no `note` result ever becomes an alert. Every finding is
a result with one physical location (relative URI, 1-based region, columns in Unicode code points) and a
`partialFingerprints["vllmlint/v1"]` that survives line shifts. Suppressed findings are results with an
in-source suppression. Run notices go to `invocations[0].toolExecutionNotifications`, never to results (so does
the warning of a run that found no vLLM invocation and no Kubernetes or Compose object: "Nothing checked: ...").
No source text is copied into the log.

The objects are dicts with their properties in the order sarif-om (the SARIF object model) writes them, required
ones first and then by name, and without the properties that would equal SARIF's defaults; importing sarif-om
cost as much as the rest of a one-file run (tests/test_sarif.py checks the order against it).
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from vllmlint.finding import Finding, Notice, NoticeLevel, Severity
from vllmlint.formatters.report import Report, edit_positions, rules_by_code, sentence
from vllmlint.formatters.rule_docs import help_markdown, help_text

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
# No `informationUri`/`helpUri`: vllmlint has no public address yet (planned: https://github.com/vllmlint/vllmlint),
# and a dead link in the code scanning page helps nobody. Each descriptor carries the rule's whole documentation
# in `help` instead (the same text as `vllmlint explain CODE` and docs/rules/).
FINGERPRINT_KEY = "vllmlint/v1"
SRCROOT = "%SRCROOT%"
MAX_TAGS = 10  # GitHub keeps at most 10 tags per rule

_NOTIFICATION_LEVELS = ("none", NoticeLevel.NOTE, NoticeLevel.WARNING, NoticeLevel.ERROR)
Json = dict[str, Any]


def _text(text: str) -> Json:
    """A message (or a multiformat message string with text only)."""
    return {"text": text}


_ABSOLUTE = re.compile(r"^(/|[A-Za-z]:/)")


def artifact_location(path: str) -> Json:
    """A relative, forward-slash, percent-encoded URI against %SRCROOT% (the directory vllmlint ran in).
    An absolute display path (a file outside that directory) becomes a file:// URI of its own."""
    posix = path.replace("\\", "/")
    if _ABSOLUTE.match(posix):
        prefix = "file://" if posix.startswith("/") else "file:///"
        return {"uri": prefix + quote(posix, safe="/:")}
    while posix.startswith("./"):
        posix = posix[2:]
    return {"uri": quote(posix, safe="/"), "uriBaseId": SRCROOT}


MAX_RESULTS = 25_000  # GitHub rejects a run with more results
MAX_DESCRIPTION = 1024


def _full_description(rule) -> str:
    """The first paragraph of "what it does", within GitHub's description limit; the rest is in `help`."""
    text = ((rule.docs or {}).get("what_it_does") or rule.summary).strip().split("\n\n")[0]
    text = " ".join(text.split())
    if len(text) > MAX_DESCRIPTION:
        text = text[:MAX_DESCRIPTION - 1].rsplit(" ", 1)[0] + "…"
    return text


def _rule_descriptor(rule, security: bool | None = None) -> Json:
    """The rule's descriptor; `security-severity` only where its results are warnings or errors (`security`;
    by default, when the rule's level is): GitHub shows a result under a descriptor that has one as a security
    alert of that severity, whatever the result's level, and a `note` must not become a Medium alert."""
    tags = list(dict.fromkeys(rule.tags or []))
    properties: Json = {}
    extra: Json = {"precision": rule.precision}
    if security is None:
        security = rule.severity >= Severity.WARNING
    if rule.security_severity is not None:
        # GitHub reads security-severity only from rules tagged "security", and wants it as a string.
        if "security" not in tags:
            tags.insert(0, "security")
        if security:
            extra["security-severity"] = f"{float(rule.security_severity):.1f}"
    if tags:
        properties["tags"] = tags[:MAX_TAGS]
    properties.update(extra)
    return {
        "id": rule.code,
        "defaultConfiguration": {"level": rule.severity.sarif_level},
        "fullDescription": _text(_full_description(rule)),
        "help": {"text": help_text(rule), "markdown": help_markdown(rule)},
        "name": rule.name,
        "properties": properties,
        "shortDescription": _text(rule.summary.strip()),
    }


def _level_descriptor(rule, severity, parent_index: int) -> Json:
    """The descriptor of a security rule's results reported at another level than the rule's (`VL501/info`, or
    `VL810/warning` when the configuration raises an info rule): the same documentation, that level as default,
    and `security-severity` only for a warning or an error. GitHub reads `security-severity` from the
    rule descriptor only (https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/
    sarif-support-for-code-scanning#reportingdescriptor-object; no result-level override:
    https://github.com/microsoft/sarif-sdk/pull/2705, https://github.com/fortify/FortifyVulnerabilityExporter/
    issues/72) and shows it instead of the level, so an info result under the rule's 7.5 would read "High"."""
    descriptor = _rule_descriptor(rule, security=severity >= Severity.WARNING)
    descriptor["id"] = f"{rule.code}/{severity.label}"
    descriptor["defaultConfiguration"] = {"level": severity.sarif_level}
    # kinds ["relevant"], SARIF's default, left out; after `properties` in sarif-om's order
    descriptor = {key: descriptor[key] for key in ("id", "defaultConfiguration", "fullDescription", "help", "name",
                                                   "properties")}
    descriptor["relationships"] = [{"target": {"id": rule.code, "index": parent_index}}]
    descriptor["shortDescription"] = _text(rule.summary.strip())
    return descriptor


def _bare_descriptor(code: str) -> Json:
    """For a code without a rule file: SARIF still needs every ruleIndex to point at a descriptor."""
    return {"id": code, "shortDescription": _text(code)}


def _region(finding: Finding) -> Json | None:
    span = finding.span
    if span.line < 1:
        return None  # about the whole file
    start_col = max(span.col, 1)
    end_line = max(span.end_line, span.line)
    end_col = max(span.end_col, 1)
    if end_line == span.line:
        end_col = max(end_col, start_col)
    return {"endColumn": end_col, "endLine": end_line, "startColumn": start_col, "startLine": span.line}


def _fixes(finding: Finding, sources: dict) -> list[Json] | None:
    """SARIF `fixes` (3.55): the finding's edits as replacements of regions of their files. A region
    is given by line and column (the run's columnKind); without the file's text, by character offset."""
    fix = finding.fix
    if fix is None or finding.suppressed_by is not None:
        return None
    changes = []
    for path in dict.fromkeys(edit.path for edit in fix.edits):
        replacements = []
        for edit in (e for e in fix.edits if e.path == path):
            where = edit_positions(edit, sources)
            if "line" in where:
                region = {"endColumn": where["end_column"], "endLine": where["end_line"],
                          "startColumn": where["column"], "startLine": where["line"]}
            else:
                region = {"charLength": edit.end - edit.start}
                if edit.start != -1:
                    region["charOffset"] = edit.start
            replacements.append({"deletedRegion": region, "insertedContent": _text(edit.replacement)})
        changes.append({"artifactLocation": artifact_location(path), "replacements": replacements})
    safety = "" if fix.safety == "safe" else " (unsafe: changes behaviour; --unsafe-fixes applies it)"
    return [{"artifactChanges": changes, "description": _text(sentence(fix.description + safety))}]


def _location(path: str, region: Json | None) -> Json:
    physical: Json = {"artifactLocation": artifact_location(path)}
    if region is not None:
        physical["region"] = region
    return {"physicalLocation": physical}


def _result(finding: Finding, rule_index: int, sources: dict | None = None, rule_id: str | None = None) -> Json:
    result: Json = {"message": _text(sentence(finding.message))}
    fixes = _fixes(finding, sources or {})
    if fixes is not None:
        result["fixes"] = fixes
    result["level"] = finding.severity.sarif_level
    result["locations"] = [_location(finding.path, _region(finding))]
    result["partialFingerprints"] = {FINGERPRINT_KEY: finding.fingerprint()}
    result["ruleId"] = rule_id or finding.code
    result["ruleIndex"] = rule_index
    if finding.suppressed_by is not None:
        suppression: Json = {"kind": "inSource"}
        if finding.suppressed_by:
            suppression["justification"] = finding.suppressed_by
        result["suppressions"] = [suppression]
    return result


def _notification(message: str, level: str, descriptor: Json | None = None,
                  locations: list[Json] | None = None) -> Json:
    notification: Json = {"message": _text(message)}
    if descriptor is not None:
        notification["descriptor"] = descriptor
    notification["level"] = level
    if locations is not None:
        notification["locations"] = locations
    return notification


def _notice(notice: Notice, descriptor_index: int) -> Json:
    locations = None
    if notice.path:
        region = {"startLine": notice.line} if notice.line >= 1 else None
        locations = [_location(notice.path, region)]
    return _notification(sentence(notice.message),
                         notice.level if notice.level in _NOTIFICATION_LEVELS else NoticeLevel.NOTE,
                         {"id": notice.code, "index": descriptor_index}, locations)


def build(report: Report) -> Json:
    """The SARIF log of the report, as JSON data."""
    rules = rules_by_code(report)
    descriptors: list[Json] = []
    rule_index: dict[str, int] = {}

    def index_of(code: str) -> int:
        if code not in rule_index:
            rule_index[code] = len(descriptors)
            rule = rules.get(code)
            descriptors.append(_rule_descriptor(rule) if rule is not None else _bare_descriptor(code))
        return rule_index[code]

    for rule in report.rules:
        if rule.kind != "notification":
            index_of(rule.code)
    shown = list(report.findings) + list(report.suppressed)
    notices = list(report.notices)
    if len(shown) > MAX_RESULTS:
        # GitHub rejects the whole upload past its limit: keep the most severe, say what was left out.
        shown = sorted(report.findings, key=lambda f: -f.severity) + list(report.suppressed)
        left_out = len(shown) - MAX_RESULTS
        shown = shown[:MAX_RESULTS]
        if not report.rules or any(rule.code == "VL007" for rule in report.rules):  # `--ignore VL007` hides it
            notices.append(Notice("VL007", f"{left_out} results left out of the SARIF log: GitHub code scanning "
                                  f"accepts at most {MAX_RESULTS} per run (the most severe are kept)", "", 0,
                                  "warning"))

    def result_of(finding: Finding) -> Json:
        rule = rules.get(finding.code)
        if (rule is None or rule.security_severity is None or finding.severity == rule.severity
                or (finding.severity > rule.severity and rule.severity >= Severity.WARNING)):
            return _result(finding, index_of(finding.code), report.sources)
        # Reported below the rule's level, or above an info rule's: a descriptor of its own, with the rule's
        # security-severity only for a warning or an error (`_level_descriptor`).
        other = f"{finding.code}/{finding.severity.label}"
        if other not in rule_index:
            parent = index_of(finding.code)
            rule_index[other] = len(descriptors)
            descriptors.append(_level_descriptor(rule, finding.severity, parent))
        return _result(finding, rule_index[other], report.sources, rule_id=other)

    results = [result_of(f) for f in shown]

    # Notices are described in driver.notifications, so each notification's descriptor resolves.
    notification_descriptors: list[Json] = []
    notification_index: dict[str, int] = {}
    notifications = []
    for notice in notices:
        if notice.code not in notification_index:
            notification_index[notice.code] = len(notification_descriptors)
            described = rules.get(notice.code)
            notification_descriptors.append(
                _rule_descriptor(described) if described is not None else _bare_descriptor(notice.code))
        notifications.append(_notice(notice, notification_index[notice.code]))
    # A run that failed (exit 2) is not a successful execution; each error is named in a notification.
    for error in report.errors:
        notifications.append(_notification(sentence(error), NoticeLevel.ERROR))
    if not report.findings:  # nothing vLLM or Kubernetes was found: a warning says so, not a silent pass
        from vllmlint.formatters.text import nothing_checked_message

        unchecked = nothing_checked_message(report)
        if unchecked is not None:
            notifications.append(_notification(sentence(unchecked[0].upper() + unchecked[1:]), NoticeLevel.WARNING))
    if report.failed and not any(n["level"] == NoticeLevel.ERROR for n in notifications):
        notifications.append(_notification("The run had an error (exit 2).", NoticeLevel.ERROR))

    driver: Json = {"name": "vllmlint"}
    if notification_descriptors:
        driver["notifications"] = notification_descriptors
    driver.update(rules=descriptors, semanticVersion=report.tool_version, version=report.tool_version)
    run: Json = {"tool": {"driver": driver}}
    if report.sarif_category:
        run["automationDetails"] = {"id": report.sarif_category.rstrip("/") + "/"}
    invocation: Json = {"executionSuccessful": not report.failed}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run.update(columnKind="unicodeCodePoints", invocations=[invocation], originalUriBaseIds={SRCROOT: {
        "description": _text("The repository root (git top level), or the directory vllmlint was run from "
                             "outside a repository.")}}, results=results)
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(report: Report) -> str:
    from vllmlint.formatters.report import dumps_indented  # json.dumps(..., indent=2, ensure_ascii=False), faster

    return dumps_indented(build(report)) + "\n"  # "$schema" and "version" first, as readers and people expect
