"""SARIF output: valid against the OASIS 2.1.0 schema and within GitHub code scanning's profile."""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import subprocess
import sys

import pytest
from jsonschema import Draft7Validator, validators

from vllmlint import registry
from vllmlint.data import schemas_dir
from vllmlint.finding import Finding, Notice, Severity, Subject
from vllmlint.formatters import Report, render
from vllmlint.formatters.rule_docs import help_text
from vllmlint.source.yamlmodel import SourceFile

from conftest import ROOT

POD = """\
# owner: team-zebra-1729
apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: [python3, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen3-0.6B]
"""


@pytest.fixture(scope="module")
def schema():
    return json.loads((schemas_dir() / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def schema_errors(schema, log) -> list[str]:
    """Errors from the validator the schema declares (draft-04) and from Draft 7 as well."""
    declared = validators.validator_for(schema)
    errors = [f"{declared.__name__}: {e.message}" for e in declared(schema).iter_errors(log)]
    errors += [f"Draft7: {e.message}" for e in Draft7Validator(schema).iter_errors(log)]
    return errors


def rule_like(code: str, name: str, severity: Severity, **changes):
    """A rule with real documentation (VL101's) under another code, for cases the registry lacks."""
    return dataclasses.replace(registry.rule("VL101"), code=code, name=name, severity=severity, **changes)


def finding_at(source: SourceFile, needle: str, code="VL101", severity=Severity.WARNING, message="msg",
               **kwargs) -> Finding:
    start = source.text.index(needle)
    return Finding(code, severity, message, source.display_path, source.span(start, start + len(needle)),
                   **kwargs)


def sarif(report: Report) -> dict:
    return json.loads(render("sarif", report))


def all_keys(data):
    if isinstance(data, dict):
        for key, value in data.items():
            yield key
            yield from all_keys(value)
    elif isinstance(data, list):
        for item in data:
            yield from all_keys(item)


@pytest.fixture()
def busy_report():
    """Three severities, a suppressed finding, notices with and without a place, an awkward path."""
    pod = SourceFile("/tmp/x/deploy/vllm pod.yaml", POD, display_path="./deploy\\vllm pod.yaml")
    other = SourceFile("other.yaml", POD)
    rules = [registry.rule("VL101"),
             rule_like("VL902", "removed-flag", Severity.ERROR),
             rule_like("VL903", "exposed-port", Severity.INFO, security_severity=7.5, tags=["network"])]
    findings = [
        finding_at(pod, "vllm.entrypoints.openai.api_server", message="Use `vllm serve` instead",
                   subject=Subject("Pod", "default", "vllm", "vllm"), value="api_server"),
        finding_at(pod, "--model", code="VL902", severity=Severity.ERROR, message="Flag --model was removed."),
        finding_at(other, "image", code="VL903", severity=Severity.INFO, message="Port is open?"),
    ]
    suppressed = [finding_at(other, "vllm.entrypoints.openai.api_server", message="Deprecated entrypoint.",
                             suppressed_by="legacy cluster, migrating in Q3")]
    notices = [Notice("VL002", "Skipped a Helm template", path="chart/templates/deploy.yaml", line=4),
               Notice("VL003", "Assumed vLLM 0.29.0", level="warning")]
    return Report(findings=findings, suppressed=suppressed, notices=notices, rules=rules,
                  sources={pod.display_path: pod, other.display_path: other}, files_checked=5,
                  tool_version="1.2.3")


def test_busy_log_is_valid_sarif(schema, busy_report):
    assert validators.validator_for(schema).__name__ == "Draft4Validator"  # what the file declares
    log = sarif(busy_report)
    assert schema_errors(schema, log) == []
    assert log["version"] == "2.1.0"


def test_schema_check_has_teeth(schema, busy_report):
    """The validation above would notice the mistakes a hand-written log typically makes."""
    log = sarif(busy_report)
    for path, bad in ((("region", "startLine"), 0), (("level",), "info"), (("message",), None)):
        broken = copy.deepcopy(log)
        result = broken["runs"][0]["results"][0]
        if path[0] == "region":
            result["locations"][0]["physicalLocation"]["region"]["startLine"] = bad
        elif bad is None:
            del result[path[0]]
        else:
            result[path[0]] = bad
        assert schema_errors(schema, broken), path


def test_clean_run_has_one_run_and_empty_results(schema):
    report = Report(rules=[registry.rule("VL101")], files_checked=3)
    log = sarif(report)
    assert schema_errors(schema, log) == []
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    assert run["results"] == []
    assert "automationDetails" not in run
    assert run["invocations"][0]["executionSuccessful"] is True
    assert "toolExecutionNotifications" not in run["invocations"][0]


def test_driver_describes_the_tool(busy_report):
    driver = sarif(busy_report)["runs"][0]["tool"]["driver"]
    assert driver["name"] == "vllmlint"
    assert driver["version"] == driver["semanticVersion"] == "1.2.3"
    assert "informationUri" not in driver  # no public address yet (planned): no dead link
    assert [r["id"] for r in driver["rules"]] == ["VL101", "VL902", "VL903"]


def test_every_registry_rule_makes_a_complete_descriptor(schema):
    rules = list(registry.all_rules().values())
    source = SourceFile("a.yaml", POD)
    findings = [finding_at(source, "image", code=rule.code, severity=rule.severity) for rule in rules]
    log = sarif(Report(findings=findings, rules=rules, files_checked=1))
    assert schema_errors(schema, log) == []
    descriptors = {d["id"]: d for d in log["runs"][0]["tool"]["driver"]["rules"]}
    assert set(descriptors) == {rule.code for rule in rules}
    for rule in rules:
        d = descriptors[rule.code]
        assert d["name"] == rule.name
        assert d["shortDescription"]["text"].strip() == rule.summary.strip()
        first_paragraph = " ".join(rule.docs["what_it_does"].strip().split("\n\n")[0].split())
        assert d["fullDescription"]["text"] == first_paragraph or (
            d["fullDescription"]["text"].endswith("…") and len(first_paragraph) > 1024)
        assert d["help"]["text"] == help_text(rule)  # the words `vllmlint explain` prints
        for heading in ("What it does", "Why is this bad", "Example", "Use instead"):
            assert heading in d["help"]["text"]
            assert f"## {heading}" in d["help"]["markdown"]
        for reference in rule.docs.get("references") or []:
            assert reference in d["help"]["text"] and reference in d["help"]["markdown"]
        assert "helpUri" not in d  # no public address yet: the whole help is in the descriptor
        assert d["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning",
                                                      "info": "note"}[rule.severity.label]
        assert 0 < len(d["properties"]["tags"]) <= 10
        assert d["properties"]["precision"] == rule.precision
        if rule.security_severity is None or rule.severity < Severity.WARNING:  # never on a note's descriptor
            assert "security-severity" not in d["properties"]
        else:
            assert float(d["properties"]["security-severity"]) == pytest.approx(rule.security_severity)


def test_security_severity_only_on_security_rules_as_a_numeric_string(busy_report):
    busy_report.rules[2] = dataclasses.replace(busy_report.rules[2], severity=Severity.WARNING)
    busy_report.findings[2] = dataclasses.replace(busy_report.findings[2], severity=Severity.WARNING)
    descriptors = {d["id"]: d for d in sarif(busy_report)["runs"][0]["tool"]["driver"]["rules"]}
    security = descriptors["VL903"]["properties"]
    assert isinstance(security["security-severity"], str)
    assert re.fullmatch(r"\d+(\.\d+)?", security["security-severity"])
    assert float(security["security-severity"]) == 7.5
    assert "security" in security["tags"]  # GitHub ignores security-severity without this tag
    for code in ("VL101", "VL902"):
        assert "security-severity" not in descriptors[code]["properties"]
        assert "security" not in descriptors[code]["properties"]["tags"]


def test_tags_are_capped_at_ten(schema):
    many = [f"tag{i}" for i in range(12)]
    rule = rule_like("VL904", "many-tags", Severity.WARNING, tags=many, security_severity=5)
    log = sarif(Report(rules=[rule]))
    tags = log["runs"][0]["tool"]["driver"]["rules"][0]["properties"]["tags"]
    assert len(tags) == 10 and tags[0] == "security"
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["properties"]["security-severity"] == "5.0"


def test_results_point_at_their_rule_place_and_fingerprint(busy_report):
    run = sarif(busy_report)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert run["columnKind"] == "unicodeCodePoints"
    results = run["results"]
    assert len(results) == len(busy_report.findings) + len(busy_report.suppressed)
    for result, finding in zip(results, busy_report.findings + busy_report.suppressed, strict=True):
        assert result["ruleId"] == finding.code
        assert rules[result["ruleIndex"]]["id"] == finding.code
        assert result["level"] == {"VL101": "warning", "VL902": "error", "VL903": "note"}[finding.code]
        assert len(result["locations"]) == 1
        physical = result["locations"][0]["physicalLocation"]
        assert physical["region"] == {"startLine": finding.span.line, "startColumn": finding.span.col,
                                      "endLine": finding.span.end_line, "endColumn": finding.span.end_col}
        assert result["partialFingerprints"] == {"vllmlint/v1": finding.fingerprint()}
        assert result["message"]["text"].endswith((".", "?"))
    first = results[0]
    # Columns are 1-based and endColumn exclusive: the span covers exactly the module name.
    line = POD.splitlines()[first["locations"][0]["physicalLocation"]["region"]["startLine"] - 1]
    region = first["locations"][0]["physicalLocation"]["region"]
    assert line[region["startColumn"] - 1:region["endColumn"] - 1] == "vllm.entrypoints.openai.api_server"
    assert first["message"]["text"] == "Use `vllm serve` instead."
    assert results[1]["message"]["text"] == "Flag --model was removed."  # no second full stop
    assert results[2]["message"]["text"] == "Port is open?"


def test_uris_are_relative_forward_slash_and_percent_encoded(busy_report):
    run = sarif(busy_report)["runs"][0]
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert locations[0] == {"uri": "deploy/vllm%20pod.yaml", "uriBaseId": "%SRCROOT%"}
    assert locations[2] == {"uri": "other.yaml", "uriBaseId": "%SRCROOT%"}
    assert "%SRCROOT%" in run["originalUriBaseIds"]
    for location in locations:
        assert "\\" not in location["uri"] and " " not in location["uri"]
        assert not location["uri"].startswith(("/", "./", "file:"))


def test_absolute_path_becomes_a_file_uri(schema):
    source = SourceFile("/srv/k8s/a b.yaml", POD)
    log = sarif(Report(findings=[finding_at(source, "image")], rules=[registry.rule("VL101")]))
    assert schema_errors(schema, log) == []
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "file:///srv/k8s/a%20b.yaml"}


def test_no_line_hash_and_no_snippet_anywhere(busy_report):
    text = render("sarif", busy_report)
    keys = set(all_keys(json.loads(text)))
    assert "primaryLocationLineHash" not in text
    assert "snippet" not in keys and "contextRegion" not in keys
    # No source text is carried: a line of the linted file appears nowhere in the log.
    assert "team-zebra-1729" not in text


def test_suppressed_findings_carry_their_justification(busy_report):
    results = sarif(busy_report)["runs"][0]["results"]
    assert [r.get("suppressions") for r in results[:3]] == [None, None, None]
    assert results[3]["suppressions"] == [{"kind": "inSource", "justification": "legacy cluster, migrating in Q3"}]


def test_notices_are_notifications_not_results(busy_report):
    run = sarif(busy_report)["runs"][0]
    assert {r["ruleId"] for r in run["results"]} == {"VL101", "VL902", "VL903"}
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is True
    notes = invocation["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notes] == ["Skipped a Helm template.", "Assumed vLLM 0.29.0."]
    assert [n["level"] for n in notes] == ["note", "warning"]
    assert notes[0]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "chart/templates/deploy.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 4}}
    assert "locations" not in notes[1]
    described = run["tool"]["driver"]["notifications"]
    for note in notes:
        assert described[note["descriptor"]["index"]]["id"] == note["descriptor"]["id"]


def test_notification_rules_describe_notifications_not_results(schema, busy_report):
    skipped = registry.rule("VL002")
    assert skipped.kind == "notification"
    busy_report.rules.append(skipped)
    log = sarif(busy_report)
    assert schema_errors(schema, log) == []
    driver = log["runs"][0]["tool"]["driver"]
    assert "VL002" not in [d["id"] for d in driver["rules"]]
    note = log["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]
    described = driver["notifications"][note["descriptor"]["index"]]
    assert (described["id"], described["name"]) == ("VL002", skipped.name)
    assert described["shortDescription"]["text"] == skipped.summary.strip()


def test_automation_details_only_when_a_category_is_given(schema, busy_report):
    assert "automationDetails" not in sarif(busy_report)["runs"][0]
    busy_report.sarif_category = "k8s-manifests"
    log = sarif(busy_report)
    assert log["runs"][0]["automationDetails"] == {"id": "k8s-manifests/"}
    assert schema_errors(schema, log) == []


def test_findings_of_rules_that_did_not_run_still_resolve(schema):
    """A finding whose code is not among report.rules (an engine code) gets a descriptor of its own."""
    source = SourceFile("a.yaml", POD)
    findings = [finding_at(source, "image", code="VL101"), finding_at(source, "kind", code="VL001",
                                                                      severity=Severity.ERROR)]
    log = sarif(Report(findings=findings, rules=[]))
    assert schema_errors(schema, log) == []
    run = log["runs"][0]
    ids = [d["id"] for d in run["tool"]["driver"]["rules"]]
    for result in run["results"]:
        assert ids[result["ruleIndex"]] == result["ruleId"]
    assert run["tool"]["driver"]["rules"][0]["name"] == "deprecated-entrypoint"  # found in the registry


def test_output_is_deterministic(busy_report):
    assert render("sarif", busy_report) == render("sarif", busy_report)


# The SARIF object each property holds, by the property's name (and the parent's, where a name means two things).
_SARIF_CLASS = {"runs": "Run", "tool": "Tool", "driver": "ToolComponent", "rules": "ReportingDescriptor",
                "notifications": "ReportingDescriptor", "defaultConfiguration": "ReportingConfiguration",
                "fullDescription": "MultiformatMessageString", "shortDescription": "MultiformatMessageString",
                "help": "MultiformatMessageString", "properties": "PropertyBag",
                "relationships": "ReportingDescriptorRelationship", "target": "ReportingDescriptorReference",
                "descriptor": "ReportingDescriptorReference", "automationDetails": "RunAutomationDetails",
                "invocations": "Invocation", "toolExecutionNotifications": "Notification", "message": "Message",
                "description": "Message", "locations": "Location", "physicalLocation": "PhysicalLocation",
                "artifactLocation": "ArtifactLocation", "region": "Region", "deletedRegion": "Region",
                "results": "Result", "fixes": "Fix", "artifactChanges": "ArtifactChange",
                "replacements": "Replacement", "insertedContent": "ArtifactContent", "suppressions": "Suppression"}


def _written_as_sarif_om_writes(node, cls_name: str, om, attr, seen: set) -> None:
    """Each object's properties in sarif-om's order (its attrs fields), none equal to the field's default."""
    cls = getattr(om, cls_name)
    fields = {f.metadata["schema_property_name"]: f for f in attr.fields(cls)}
    seen.add(cls_name)
    if cls_name != "PropertyBag":
        order = list(fields)
        keys = list(node)
        assert all(key in fields for key in keys), (cls_name, keys)
        assert keys == sorted(keys, key=order.index), (cls_name, keys)
        for key, value in node.items():
            default = fields[key].default
            default = default.factory() if isinstance(default, type(attr.Factory(list))) else default
            assert key == "level" or value != default, (cls_name, key)  # `level`: kept although SARIF's default
    for key, value in node.items():
        child = _SARIF_CLASS.get(key)
        if key == "description" and cls_name == "ArtifactLocation":
            child = "Message"
        if child is None or cls_name == "PropertyBag":
            continue
        for item in value if isinstance(value, list) else [value]:
            _written_as_sarif_om_writes(item, child, om, attr, seen)


def test_the_log_is_written_as_sarif_om_would_write_it_without_importing_it(busy_report):
    """The formatter builds plain JSON data (importing sarif-om cost as much as the rest of a one-file run), in the
    order and with the defaults left out that sarif-om's serialisation had, so the output did not change."""
    attr = pytest.importorskip("attr")
    om = pytest.importorskip("sarif_om")
    seen: set = set()
    source = SourceFile("a.yaml", POD)
    rule = registry.rule("VL501")
    lowered = [finding_at(source, "name: vllm", code="VL501", severity=Severity.INFO, message="Internal LB.")]
    for report in (busy_report, Report(findings=lowered, rules=[rule], errors=["x: gone"], failed=True,
                                       sarif_category="ci")):
        log = sarif(report)
        assert list(log) == ["$schema", "version", "runs"]
        for run in log["runs"]:
            _written_as_sarif_om_writes(run, "Run", om, attr, seen)
    fixed = subprocess_sarif(ROOT / "fixtures")
    for run in fixed["runs"]:
        _written_as_sarif_om_writes(run, "Run", om, attr, seen)
    assert {"Suppression", "Fix", "Replacement", "ReportingDescriptorRelationship", "RunAutomationDetails",
            "Notification", "Region"} <= seen  # every kind of object the formatter writes was checked
    code = ("import sys\nfrom vllmlint.formatters import Report, render\nrender('sarif', Report())\n"
            "assert 'sarif_om' not in sys.modules and 'attr' not in sys.modules\n")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True).returncode == 0


def subprocess_sarif(*paths) -> dict:
    done = subprocess.run([sys.executable, "-m", "vllmlint", "--format", "sarif", *map(str, paths)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "VLLMLINT_NO_CACHE": "1"})
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_no_note_of_the_fixtures_carries_a_security_severity_and_the_log_is_valid(schema):
    """Issue 24: VL810 (info, 4.0) made its 41 notes Medium code-scanning alerts. GitHub reads security-severity
    from the result's descriptor: no `note` result may point at one that has it, and the log stays valid."""
    log = subprocess_sarif(ROOT / "fixtures")
    assert schema_errors(schema, log) == []
    run = log["runs"][0]
    descriptors = run["tool"]["driver"]["rules"]
    notes = [r for r in run["results"] if r["level"] == "note"]
    assert len(notes) > 50
    assert [r["ruleId"] for r in notes if "security-severity" in descriptors[r["ruleIndex"]]["properties"]] == []
    alerts = [r for r in run["results"] if "security-severity" in descriptors[r["ruleIndex"]]["properties"]]
    assert alerts and all(r["level"] in ("warning", "error") for r in alerts)
    for r in run["results"]:  # GitHub's requirements: each result's rule resolves, with its id
        assert descriptors[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["partialFingerprints"]["vllmlint/v1"]


def test_an_info_security_rule_raised_to_warning_gets_a_descriptor_with_its_security_severity(schema):
    rule = registry.rule("VL810")
    assert rule.severity == Severity.INFO and rule.security_severity is not None
    source = SourceFile("a.yaml", POD)
    findings = [finding_at(source, "image", code="VL810", severity=Severity.INFO, message="Hardening."),
                finding_at(source, "name: vllm", code="VL810", severity=Severity.WARNING, message="Raised.")]
    log = sarif(Report(findings=findings, rules=[rule], files_checked=1))
    assert schema_errors(schema, log) == []
    run = log["runs"][0]
    main, raised = run["tool"]["driver"]["rules"]
    assert (main["id"], raised["id"]) == ("VL810", "VL810/warning")
    assert "security-severity" not in main["properties"] and "security" in main["properties"]["tags"]
    assert float(raised["properties"]["security-severity"]) == rule.security_severity
    assert raised["defaultConfiguration"]["level"] == "warning"
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [("VL810", "note"), ("VL810/warning", "warning")]


def test_github_limits_results_per_run_and_description_lengths():
    """GitHub rejects a run over 25,000 results: the log keeps the most severe and says so."""
    from vllmlint.finding import Finding, Severity, Span
    from vllmlint.formatters import Report, render
    from vllmlint.registry import all_rules

    span = Span(0, 1, 1, 1, 1, 2)
    findings = [Finding("VL201", Severity.WARNING, f"w{i}.", "a.yaml", span) for i in range(25_000)]
    findings += [Finding("VL102", Severity.ERROR, f"e{i}.", "a.yaml", span) for i in range(10)]
    log = json.loads(render("sarif", Report(findings=findings, rules=list(all_rules().values()))))
    run = log["runs"][0]
    assert len(run["results"]) == 25_000
    assert sum(r["ruleId"] == "VL102" for r in run["results"]) == 10
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any("10 results left out" in n["message"]["text"] for n in notes)
    for rule in run["tool"]["driver"]["rules"]:
        assert len(rule["fullDescription"]["text"]) <= 1024 and len(rule["shortDescription"]["text"]) <= 1024
        assert len(rule["properties"].get("tags", [])) <= 10


def test_security_severity_follows_the_level_reported(schema):
    """GitHub reads security-severity from the rule only: an info result of VL501 (default warning, 7.5) goes
    to its own descriptor `VL501/info` without it, so it shows as a Note, not as High; warnings keep 7.5."""
    rule = registry.rule("VL501")
    source = SourceFile("a.yaml", POD)
    findings = [finding_at(source, "image", code="VL501", severity=Severity.WARNING, message="Public."),
                finding_at(source, "name: vllm", code="VL501", severity=Severity.INFO, message="Internal LB."),
                finding_at(source, "kind", code="VL501", severity=Severity.INFO, message="Internal LB again.")]
    log = sarif(Report(findings=findings, rules=[rule], files_checked=1))
    assert schema_errors(schema, log) == []
    run = log["runs"][0]
    descriptors = run["tool"]["driver"]["rules"]
    assert [d["id"] for d in descriptors] == ["VL501", "VL501/info"]
    main, lowered = descriptors
    assert main["properties"]["security-severity"] == "7.5" and main["defaultConfiguration"]["level"] == "warning"
    assert "security-severity" not in lowered["properties"]
    assert lowered["defaultConfiguration"]["level"] == "note"
    assert lowered["name"] == main["name"] and lowered["help"] == main["help"]
    assert lowered["relationships"] == [{"target": {"id": "VL501", "index": 0}}]  # kinds: SARIF's default, relevant
    assert [(r["ruleId"], r["ruleIndex"], r["level"]) for r in run["results"]] == [
        ("VL501", 0, "warning"), ("VL501/info", 1, "note"), ("VL501/info", 1, "note")]


def test_rules_without_security_severity_keep_one_descriptor():
    source = SourceFile("a.yaml", POD)
    findings = [finding_at(source, "image", code="VL101", severity=Severity.INFO)]
    run = sarif(Report(findings=findings, rules=[registry.rule("VL101")], files_checked=1))["runs"][0]
    assert [d["id"] for d in run["tool"]["driver"]["rules"]] == ["VL101"]
    assert run["results"][0]["ruleId"] == "VL101"
