"""JUnit XML output: structure, escaping, clean runs, and the real command line."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from vllmlint import registry
from vllmlint.finding import Finding, Notice, Severity
from vllmlint.formatters import FORMATS, Report, render
from vllmlint.formatters import junit
from vllmlint.source.yamlmodel import SourceFile

from conftest import FIXTURES

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:latest
    command: [python3, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen3-0.6B, --swap-space, "4"]
"""


def finding_at(source: SourceFile, needle: str, code: str, severity: Severity, message: str, **kwargs) -> Finding:
    start = source.text.index(needle)
    return Finding(code, severity, message, source.display_path, source.span(start, start + len(needle)), **kwargs)


def parse(report: Report) -> ET.Element:
    # Parsed from bytes, as a CI system reads the file: the declaration says UTF-8.
    return ET.fromstring(render("junit", report).encode("utf-8"))


def the_suite(root: ET.Element) -> ET.Element:
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    assert suites[0].get("name") == "vllmlint"
    return suites[0]


def test_junit_is_a_format_the_cli_offers(cli):
    assert "junit" in FORMATS
    code, out, _ = cli("check", "--help")
    assert code == 0 and "junit" in out


def test_one_testcase_per_finding_with_a_failure_of_its_severity():
    pod = SourceFile("deploy/vllm.yaml", POD)
    deprecated = finding_at(pod, "vllm.entrypoints.openai.api_server", "VL101", Severity.WARNING,
                            "Use `vllm serve` instead")
    removed = finding_at(pod, "--swap-space", "VL102", Severity.ERROR, "`--swap-space` was removed.")
    unpinned = finding_at(pod, "vllm/vllm-openai:latest", "VL201", Severity.WARNING, "pin the image",
                          suppressed_by="we track latest on purpose")
    notice = Notice("VL002", "unrendered Helm template skipped", "chart/templates/x.yaml", 3)
    no_place = Notice("VL006", "assumed vLLM 0.29.0")
    report = Report(findings=[deprecated, removed], suppressed=[unpinned], notices=[notice, no_place],
                    rules=list(registry.all_rules().values()), files_checked=2)
    root = parse(report)
    suite = the_suite(root)
    for element in (root, suite):
        assert (element.get("tests"), element.get("failures"), element.get("errors"), element.get("skipped")) \
            == ("3", "2", "0", "1")

    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [
        f"VL101 deprecated-entrypoint {deprecated.span.line}:{deprecated.span.col}",
        f"VL102 removed-flag {removed.span.line}:{removed.span.col}",
        f"VL201 image-unpinned {unpinned.span.line}:{unpinned.span.col}",
    ]
    assert {c.get("classname") for c in cases} == {"deploy/vllm.yaml"}
    assert [c.get("line") for c in cases] == ["8", "8", "7"]

    failure = cases[1].find("failure")
    assert failure.get("type") == "error"
    assert failure.get("message") == "`--swap-space` was removed."
    assert failure.text.startswith(f"deploy/vllm.yaml:8:{removed.span.col}: VL102 [error] `--swap-space` was removed.")
    assert "See `vllmlint explain VL102`" in failure.text and "https://" not in failure.text
    assert cases[0].find("failure").get("type") == "warning"
    assert cases[0].find("failure").get("message") == "Use `vllm serve` instead."  # a sentence, as in SARIF
    assert cases[0].find("skipped") is None

    skipped = cases[2]
    assert skipped.find("failure") is None
    assert skipped.find("skipped").get("message") == "we track latest on purpose"

    # No "no findings" case when there are findings; the notice goes to system-out.
    assert "no findings" not in [c.get("name") for c in cases]
    assert suite.find("system-out").text == (
        "vllmlint: note: chart/templates/x.yaml:3: unrendered Helm template skipped\n"
        "vllmlint: note: assumed vLLM 0.29.0\n")


def test_special_characters_are_escaped_and_round_trip():
    nasty = 'flag <&"> ]]> \'quoted\'\nsecond line\ttab'
    pod = SourceFile("dir with <&>/vllm.yaml", POD)
    finding = finding_at(pod, "--swap-space", "VL102", Severity.ERROR, nasty)
    output = render("junit", Report(findings=[finding], rules=[registry.rule("VL102")]))
    assert "<&" not in output and '"> ]]>' not in output  # escaped, not raw
    suite = the_suite(ET.fromstring(output.encode("utf-8")))
    case = suite.find("testcase")
    assert case.get("classname") == "dir with <&>/vllm.yaml"
    failure = case.find("failure")
    assert failure.get("message") == nasty + "."  # attribute newlines and tabs survive as &#10; / &#09;
    # the body is lines of text: a line break of the message is shown (␊), so it cannot start a line (`::...`)
    assert nasty.replace("\n", "\u240a") in failure.text


def test_characters_xml_cannot_hold_become_visible_escapes():
    # An escape character and a lone surrogate (undecodable input) are not XML 1.0 characters at all.
    message = "bad \x1b[31mcolour\x1b[0m and \udcff byte and \x00 nul"
    pod = SourceFile("deploy/vllm.yaml", POD)
    finding = finding_at(pod, "--swap-space", "VL102", Severity.ERROR, message)
    output = render("junit", Report(findings=[finding]))
    output.encode("utf-8")  # would raise on a lone surrogate
    failure = the_suite(ET.fromstring(output.encode("utf-8"))).find("testcase/failure")
    assert failure.get("message") == "bad \\x1b[31mcolour\\x1b[0m and \\udcff byte and \\x00 nul."


def test_clean_run_is_one_passing_testcase():
    suite = the_suite(parse(Report(files_checked=4)))
    cases = suite.findall("testcase")
    assert len(cases) == 1
    assert cases[0].get("name") == "no findings"
    assert list(cases[0]) == []  # no failure, no skipped: it passes
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("1", "0", "0")


def test_only_suppressed_findings_still_pass():
    pod = SourceFile("deploy/vllm.yaml", POD)
    hidden = finding_at(pod, "--swap-space", "VL102", Severity.ERROR, "removed", suppressed_by="")
    suite = the_suite(parse(Report(suppressed=[hidden])))
    names = [c.get("name") for c in suite.findall("testcase")]
    assert names[-1] == "no findings" and len(names) == 2
    assert suite.find("testcase/skipped").get("message") == "suppressed"  # no justification given
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "0", "1")


def test_help_link_is_the_same_page_as_sarif():
    from vllmlint.formatters import sarif

    assert not hasattr(junit, "HELP_URI") and not hasattr(sarif, "HELP_URI")  # no dead link to a planned address


def test_cli_junit_agrees_with_json(cli):
    target = FIXTURES / "own" / "original-deployment-with-removed-flags.yaml"
    json_code, json_out, _ = cli("check", "--format", "json", target)
    junit_code, junit_out, _ = cli("check", "--format", "junit", target)
    assert junit_code == json_code == 1
    findings = json.loads(json_out)["findings"]
    assert findings, "the fixture should have findings"
    suite = the_suite(ET.fromstring(junit_out.encode("utf-8")))
    cases = suite.findall("testcase")
    # At the default --fail-on warning, info findings are passing testcases (issue 13)
    assert [(c.get("name"), c.find("failure").get("type") if c.find("failure") is not None else "passed")
            for c in cases] == [(f"{f['code']} {f['name']} {f['line']}:{f['column']}",
                                 f["severity"] if f["severity"] != "info" else "passed") for f in findings]
    assert suite.get("failures") == str(sum(f["severity"] != "info" for f in findings))
    junit_code, junit_out, _ = cli("check", "--format", "junit", "--fail-on", "info", target)
    assert the_suite(ET.fromstring(junit_out.encode("utf-8"))).get("failures") == str(len(findings))
