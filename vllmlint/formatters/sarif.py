"""SARIF 2.1.0 for GitHub code scanning, built with the sarif-om object model.

One run; `tool.driver.rules` describes the rules that ran (documentation from the rule files, the
`precision` and, for security rules, `security-severity` properties GitHub reads; a security rule's results
reported below its level, such as VL501's info findings, get a descriptor of their own, `VL501/info`, without
`security-severity`, because GitHub takes it from the rule and would show them as High); every finding is a
result with one physical location (relative URI, 1-based region, columns in Unicode code points) and a
`partialFingerprints["vllmlint/v1"]` that survives line shifts. Suppressed findings are results with an
in-source suppression. Run notices go to `invocations[0].toolExecutionNotifications`, never to results (so does
the warning of a run that found no vLLM invocation and no Kubernetes or Compose object: "Nothing checked: ...").
No source text is copied into the log.

sarif-om's classes are attrs classes whose fields name their SARIF property in
`metadata["schema_property_name"]`; `to_sarif_json` walks them generically.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import attr
import sarif_om as om

from vllmlint.finding import Finding, Notice, NoticeLevel
from vllmlint.formatters import Report, edit_positions, rules_by_code, sentence
from vllmlint.formatters.rule_docs import help_markdown, help_text

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/vllmlint/vllmlint"
HELP_URI = "https://github.com/vllmlint/vllmlint/blob/main/docs/rules/{code}.md"
FINGERPRINT_KEY = "vllmlint/v1"
SRCROOT = "%SRCROOT%"
MAX_TAGS = 10  # GitHub keeps at most 10 tags per rule

# SARIF's default for these is "warning", so dropping them when equal to it would be valid; they are
# kept because consumers (and people reading the log) should not have to know that default.
_ALWAYS_EMIT = {"level"}


_NOTIFICATION_LEVELS = ("none", NoticeLevel.NOTE, NoticeLevel.WARNING, NoticeLevel.ERROR)
_NO_DEFAULT = object()
# attrs' stubs type `attr.Factory` as a function returning the default itself; at run time it is a class.
_FACTORY: Any = type(attr.Factory(list))
_FIELD_CACHE: dict[type, list[tuple[str, str, object]]] = {}
_PLAIN = frozenset({str, int, float, bool, type(None)})  # JSON values as they are (subclasses such as enums: walked)


def _fields(cls) -> list[tuple[str, str, object]]:
    """(attribute, SARIF property name, default) per field of a sarif-om class, computed once per class."""
    cached = _FIELD_CACHE.get(cls)
    if cached is None:
        cached = []
        for f in attr.fields(cls):
            default: Any = f.default
            if isinstance(default, _FACTORY):
                default = default.factory()
            elif default is attr.NOTHING:
                default = _NO_DEFAULT
            cached.append((f.name, f.metadata["schema_property_name"], default))
        _FIELD_CACHE[cls] = cached
    return cached


def to_sarif_json(obj: Any) -> Any:
    """Plain JSON data from sarif-om objects: SARIF property names from the attrs metadata, fields equal
    to their default left out, a PropertyBag's extra attributes (`security-severity`...) flattened in."""
    kind = type(obj)
    if kind in _PLAIN:  # most values: nothing to convert
        return obj
    if kind in _FIELD_CACHE or attr.has(kind):
        out = {}
        fields = _fields(kind)
        values = getattr(obj, "__dict__", None)  # sarif-om's classes are not slotted: read the attributes at once
        for attribute, name, default in fields:
            value = getattr(obj, attribute) if values is None else values[attribute]
            if value is None or (value == default and name not in _ALWAYS_EMIT):
                continue
            out[name] = value if type(value) in _PLAIN else to_sarif_json(value)
        if isinstance(obj, om.PropertyBag):
            known = {attribute for attribute, _, _ in fields}
            for key, value in vars(obj).items():
                if key not in known:
                    out[key] = to_sarif_json(value)
        return out
    if isinstance(obj, (list, tuple)):
        return [to_sarif_json(item) for item in obj]
    if isinstance(obj, dict):
        return {key: to_sarif_json(value) for key, value in obj.items()}
    return obj


def property_bag(tags=None, **extra) -> om.PropertyBag:
    """A PropertyBag with extra properties; keys may contain '-' (pass them as a dict: **{"a-b": 1})."""
    bag = om.PropertyBag(tags=tags)
    for key, value in extra.items():
        setattr(bag, key, value)
    return bag


_ABSOLUTE = re.compile(r"^(/|[A-Za-z]:/)")


def artifact_location(path: str) -> om.ArtifactLocation:
    """A relative, forward-slash, percent-encoded URI against %SRCROOT% (the directory vllmlint ran in).
    An absolute display path (a file outside that directory) becomes a file:// URI of its own."""
    posix = path.replace("\\", "/")
    if _ABSOLUTE.match(posix):
        prefix = "file://" if posix.startswith("/") else "file:///"
        return om.ArtifactLocation(uri=prefix + quote(posix, safe="/:"))
    while posix.startswith("./"):
        posix = posix[2:]
    return om.ArtifactLocation(uri=quote(posix, safe="/"), uri_base_id=SRCROOT)


MAX_RESULTS = 25_000  # GitHub rejects a run with more results
MAX_DESCRIPTION = 1024


def _full_description(rule) -> str:
    """The first paragraph of "what it does", within GitHub's description limit; the rest is in `help`."""
    text = ((rule.docs or {}).get("what_it_does") or rule.summary).strip().split("\n\n")[0]
    text = " ".join(text.split())
    if len(text) > MAX_DESCRIPTION:
        text = text[:MAX_DESCRIPTION - 1].rsplit(" ", 1)[0] + "…"
    return text


def _rule_descriptor(rule) -> om.ReportingDescriptor:
    tags = list(dict.fromkeys(rule.tags or []))
    extra = {"precision": rule.precision}
    if rule.security_severity is not None:
        # GitHub reads security-severity only from rules tagged "security", and wants it as a string.
        if "security" not in tags:
            tags.insert(0, "security")
        extra["security-severity"] = f"{float(rule.security_severity):.1f}"
    return om.ReportingDescriptor(
        id=rule.code,
        name=rule.name,
        short_description=om.MultiformatMessageString(text=rule.summary.strip()),
        full_description=om.MultiformatMessageString(text=_full_description(rule)),
        help=om.MultiformatMessageString(text=help_text(rule), markdown=help_markdown(rule)),
        help_uri=HELP_URI.format(code=rule.code),
        default_configuration=om.ReportingConfiguration(level=rule.severity.sarif_level),
        properties=property_bag(tags=tags[:MAX_TAGS] or None, **extra),
    )


def _lowered_descriptor(rule, severity, parent_index: int) -> om.ReportingDescriptor:
    """The descriptor of a security rule's results reported below the rule's level (`VL501/info`): the same
    documentation, that level as default, and no `security-severity`. GitHub reads `security-severity` from the
    rule descriptor only (https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/
    sarif-support-for-code-scanning#reportingdescriptor-object; no result-level override:
    https://github.com/microsoft/sarif-sdk/pull/2705, https://github.com/fortify/FortifyVulnerabilityExporter/
    issues/72) and shows it instead of the level, so an info result under the rule's 7.5 would read "High"."""
    descriptor = _rule_descriptor(rule)
    descriptor.id = f"{rule.code}/{severity.label}"
    descriptor.default_configuration = om.ReportingConfiguration(level=severity.sarif_level)
    bag = descriptor.properties
    if bag is not None and hasattr(bag, "security-severity"):
        delattr(bag, "security-severity")
    descriptor.relationships = [om.ReportingDescriptorRelationship(
        target=om.ReportingDescriptorReference(id=rule.code, index=parent_index), kinds=["relevant"])]
    return descriptor


def _bare_descriptor(code: str) -> om.ReportingDescriptor:
    """For a code without a rule file: SARIF still needs every ruleIndex to point at a descriptor."""
    return om.ReportingDescriptor(id=code, short_description=om.MultiformatMessageString(text=code),
                                  help_uri=HELP_URI.format(code=code))


def _region(finding: Finding) -> om.Region | None:
    span = finding.span
    if span.line < 1:
        return None  # about the whole file
    start_col = max(span.col, 1)
    end_line = max(span.end_line, span.line)
    end_col = max(span.end_col, 1)
    if end_line == span.line:
        end_col = max(end_col, start_col)
    return om.Region(start_line=span.line, start_column=start_col, end_line=end_line, end_column=end_col)


def _fixes(finding: Finding, sources: dict) -> list[om.Fix] | None:
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
                region = om.Region(start_line=where["line"], start_column=where["column"],
                                   end_line=where["end_line"], end_column=where["end_column"])
            else:
                region = om.Region(char_offset=edit.start, char_length=edit.end - edit.start)
            replacements.append(om.Replacement(deleted_region=region,
                                               inserted_content=om.ArtifactContent(text=edit.replacement)))
        changes.append(om.ArtifactChange(artifact_location=artifact_location(path), replacements=replacements))
    safety = "" if fix.safety == "safe" else " (unsafe: changes behaviour; --unsafe-fixes applies it)"
    return [om.Fix(description=om.Message(text=sentence(fix.description + safety)), artifact_changes=changes)]


def _result(finding: Finding, rule_index: int, sources: dict | None = None, rule_id: str | None = None) -> om.Result:
    location = om.Location(physical_location=om.PhysicalLocation(
        artifact_location=artifact_location(finding.path), region=_region(finding)))
    suppressions = None
    if finding.suppressed_by is not None:
        suppressions = [om.Suppression(kind="inSource", justification=finding.suppressed_by or None)]
    return om.Result(
        rule_id=rule_id or finding.code,
        rule_index=rule_index,
        level=finding.severity.sarif_level,
        message=om.Message(text=sentence(finding.message)),
        locations=[location],
        partial_fingerprints={FINGERPRINT_KEY: finding.fingerprint()},
        suppressions=suppressions,
        fixes=_fixes(finding, sources or {}),
    )


def _notification(notice: Notice, descriptor_index: int) -> om.Notification:
    locations = None
    if notice.path:
        region = om.Region(start_line=notice.line) if notice.line >= 1 else None
        locations = [om.Location(physical_location=om.PhysicalLocation(
            artifact_location=artifact_location(notice.path), region=region))]
    return om.Notification(
        message=om.Message(text=sentence(notice.message)),
        level=notice.level if notice.level in _NOTIFICATION_LEVELS else NoticeLevel.NOTE,
        locations=locations,
        descriptor=om.ReportingDescriptorReference(id=notice.code, index=descriptor_index),
    )


def build(report: Report) -> om.SarifLog:
    rules = rules_by_code(report)
    descriptors: list[om.ReportingDescriptor] = []
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
    def result_of(finding: Finding) -> om.Result:
        rule = rules.get(finding.code)
        if rule is None or rule.security_severity is None or finding.severity >= rule.severity:
            return _result(finding, index_of(finding.code), report.sources)
        # Reported below the rule's level: its own descriptor, without the rule's security-severity.
        lowered = f"{finding.code}/{finding.severity.label}"
        if lowered not in rule_index:
            parent = index_of(finding.code)
            rule_index[lowered] = len(descriptors)
            descriptors.append(_lowered_descriptor(rule, finding.severity, parent))
        return _result(finding, rule_index[lowered], report.sources, rule_id=lowered)

    results = [result_of(f) for f in shown]

    # Notices are described in driver.notifications, so each notification's descriptor resolves.
    notification_descriptors: list[om.ReportingDescriptor] = []
    notification_index: dict[str, int] = {}
    notifications = []
    for notice in notices:
        if notice.code not in notification_index:
            notification_index[notice.code] = len(notification_descriptors)
            described = rules.get(notice.code)
            notification_descriptors.append(
                _rule_descriptor(described) if described is not None else _bare_descriptor(notice.code))
        notifications.append(_notification(notice, notification_index[notice.code]))
    # A run that failed (exit 2) is not a successful execution; each error is named in a notification.
    for error in report.errors:
        notifications.append(om.Notification(message=om.Message(text=sentence(error)), level=NoticeLevel.ERROR))
    if not report.findings:  # nothing vLLM or Kubernetes was found: a warning says so, not a silent pass
        from vllmlint.formatters.text import nothing_checked_message

        unchecked = nothing_checked_message(report)
        if unchecked is not None:
            notifications.append(om.Notification(message=om.Message(text=sentence(unchecked[0].upper() + unchecked[1:])),
                                                 level=NoticeLevel.WARNING))
    if report.failed and not any(n.level == NoticeLevel.ERROR for n in notifications):
        notifications.append(om.Notification(message=om.Message(text="The run had an error (exit 2)."),
                                             level=NoticeLevel.ERROR))

    driver = om.ToolComponent(
        name="vllmlint",
        version=report.tool_version,
        semantic_version=report.tool_version,
        information_uri=INFORMATION_URI,
        rules=descriptors,
        notifications=notification_descriptors or None,
    )
    run = om.Run(
        tool=om.Tool(driver=driver),
        invocations=[om.Invocation(execution_successful=not report.failed,
                                   tool_execution_notifications=notifications or None)],
        original_uri_base_ids={SRCROOT: om.ArtifactLocation(
            description=om.Message(text="The repository root (git top level), or the directory vllmlint "
                                             "was run from outside a repository."))},
        column_kind="unicodeCodePoints",
        results=results,
    )
    if report.sarif_category:
        run.automation_details = om.RunAutomationDetails(id=report.sarif_category.rstrip("/") + "/")
    return om.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run])


def render(report: Report) -> str:
    data = to_sarif_json(build(report))
    # "$schema" and "version" first, as SARIF readers and people expect.
    ordered = {"$schema": data.pop("$schema"), "version": data.pop("version"), **data}
    from vllmlint.formatters import dumps_indented  # json.dumps(..., indent=2, ensure_ascii=False), faster

    return dumps_indented(ordered) + "\n"
