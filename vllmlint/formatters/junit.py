"""JUnit XML, for CI systems that show test reports (GitLab, Jenkins, Azure Pipelines, test-reporter actions).

    <testsuites name="vllmlint" tests="2" failures="1" errors="0" skipped="1">
      <testsuite name="vllmlint" tests="2" failures="1" errors="0" skipped="1">
        <testcase classname="deploy/vllm.yaml" name="VL101 deprecated-entrypoint 9:28" file="deploy/vllm.yaml" line="9">
          <failure type="warning" message="...">deploy/vllm.yaml:9:28: VL101 [warning] ...</failure>
        </testcase>
        <testcase ...><skipped message="justification of the suppression" /></testcase>
      </testsuite>
    </testsuites>

One testcase per finding (a failure, `type` saying its severity; with `Report.fail_on`, as the CLI sets
it from --fail-on, a finding below that severity is a passing testcase with the finding in its
`<system-out>`, so that the report fails exactly when the run does), one per suppressed
finding (skipped), and a single passing testcase named "no findings" when nothing was found, so that a
report is never empty (some readers treat an empty suite as an error). Run notices go to the suite's
`<system-out>`. ElementTree escapes `<&>"`; characters XML 1.0 cannot hold at all (control characters,
lone surrogates from undecodable input) are replaced by a visible `\\xNN` / `\\uNNNN` first.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from vllmlint.finding import Finding, Notice
from vllmlint.formatters.report import Report, rule_name, rules_by_code, sentence

if TYPE_CHECKING:
    from vllmlint.registry import Rule

SUITE_NAME = "vllmlint"
# Same page as SARIF's helpUri (tests check they agree); kept here so JUnit output needs no sarif-om.

# Everything outside XML 1.0's Char production: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_text(text: str) -> str:
    """Text that XML 1.0 can represent; ElementTree does the `<&>"` escaping itself."""
    return _NOT_XML.sub(_visible, text)


def _position(finding: Finding) -> str:
    span = finding.span
    return f"{span.line}:{span.col}" if span.line >= 1 else "file"


def _testcase(suite: ET.Element, finding: Finding, name: str) -> ET.Element:
    title = " ".join(part for part in (finding.code, name, _position(finding)) if part)
    attrs = {"classname": xml_text(finding.path), "name": xml_text(title), "file": xml_text(finding.path)}
    if finding.span.line >= 1:
        attrs["line"] = str(finding.span.line)
    return ET.SubElement(suite, "testcase", attrs)


def _failure_body(finding: Finding, rules: dict[str, Rule]) -> str:
    from vllmlint.formatters.text import _visible  # a line break of the tree's text must not start a line (`::`)

    path = _visible(finding.path)
    where = f"{path}:{finding.span.line}:{finding.span.col}" if finding.span.line >= 1 else path
    lines = [f"{where}: {finding.code} [{finding.severity.label}] {_visible(sentence(finding.message))}"]
    rule = rules.get(finding.code)
    if rule is not None:
        lines.append(f"{rule.code} {rule.name}: {rule.summary.strip()}")
        lines.append(f"See `vllmlint explain {rule.code}` (docs/rules/{rule.code}.md in vllmlint's files)")
    return xml_text("\n".join(lines) + "\n")


def _notice_line(notice: Notice) -> str:
    from vllmlint.formatters.text import notice_line

    return notice_line(notice) + "\n"


def build(report: Report) -> ET.Element:
    rules = rules_by_code(report)
    root = ET.Element("testsuites", {"name": SUITE_NAME})
    suite = ET.SubElement(root, "testsuite", {"name": SUITE_NAME})
    failures = 0
    for finding in report.findings:
        case = _testcase(suite, finding, rule_name(rules, finding.code))
        if report.fail_on is not None and finding.severity < report.fail_on:
            # Below --fail-on: the run passes, so the test does; the finding stays readable in its output.
            ET.SubElement(case, "system-out").text = _failure_body(finding, rules)
            continue
        failures += 1
        failure = ET.SubElement(case, "failure", {"type": finding.severity.label,
                                                  "message": xml_text(sentence(finding.message))})
        failure.text = _failure_body(finding, rules)
    for finding in report.suppressed:
        case = _testcase(suite, finding, rule_name(rules, finding.code))
        reason = finding.suppressed_by or "suppressed"
        ET.SubElement(case, "skipped", {"message": xml_text(reason)})
    if not report.findings:
        ET.SubElement(suite, "testcase", {"classname": SUITE_NAME, "name": "no findings"})
    if report.notices:
        out = ET.SubElement(suite, "system-out")
        out.text = xml_text("".join(_notice_line(n) for n in report.notices))

    counts = {
        "tests": str(len(suite.findall("testcase"))),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(len(report.suppressed)),
    }
    for element in (root, suite):
        element.attrib.update(counts)
    return root


def render(report: Report) -> str:
    root = build(report)
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
