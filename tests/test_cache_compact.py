"""The cache's compact form of findings (rows, shared strings and subjects) gives back equal findings."""
from __future__ import annotations

import json

from vllmlint.run import cache
from vllmlint.engine import LintResult
from vllmlint.finding import Finding, Notice, Severity, Span, Subject
from vllmlint.fix.edits import Edit, Fix
from vllmlint.source.yamlmodel import SourceFile


def _findings() -> list[Finding]:
    subject = Subject("Deployment", "ai", "vllm", "server")
    fix = Fix([Edit("a.yaml", 3, 9, "vllm serve"), Edit("a.yaml", 20, 20, " --x")], "safe", "use vllm serve")
    return [
        Finding("VL101", Severity.WARNING, "deprecated. Use vllm serve.", "a.yaml", Span(3, 9, 1, 4, 1, 10), subject,
                "python -m", fix),
        Finding("VL101", Severity.WARNING, "deprecated. Use vllm serve.", "b.yaml", Span(0, 1, 1, 1, 1, 2), subject),
        Finding("VL802", Severity.ERROR, "a secret (hf_****)", "a.yaml", Span(30, 40, 2, 5, 2, 15), redact=True),
        Finding("VL201", Severity.INFO, "odd \udcff bytes", "c.yaml", Span(0, 0, 0, 0, 0, 0), suppressed_by="why"),
        Finding("VL301", Severity.ERROR, "tuple value", "c.yaml", Span.point(3, 1), value=("a", 1)),  # type: ignore[arg-type]
        Finding("VL302", Severity.ERROR, "tuple edits", "c.yaml", Span.point(4, 1),
                fix=Fix((Edit("c.yaml", 0, 1, "x"),), "unsafe", "generic form")),  # type: ignore[arg-type]
    ]


def test_findings_come_back_equal(tmp_path):
    from vllmlint.registry import all_rules

    findings = _findings()
    result = LintResult(findings=findings[:3], suppressed=findings[3:4], known=findings[4:],
                        notices=[Notice("VL006", "assumed", "a.yaml", 2, "note", ("workload", "workloads"))],
                        sources={"a.yaml": SourceFile("/x/a.yaml", "a: 1\n", "a.yaml")},
                        rules=[all_rules()["VL101"]], files_checked=3, workloads=1, objects=2)
    entry = tmp_path / "results" / "k.json"
    cache.store(entry, result)
    stored = json.loads(cache._read(entry))["result"]
    assert stored["__findings__"]["strings"].count("deprecated. Use vllm serve.") == 1  # a message stored once
    assert len(stored["__findings__"]["subjects"]) == 2  # the shared subject once, and the empty one
    assert stored["findings"][0][12] == ["safe", "use vllm serve", [["a.yaml", 3, 9, "vllm serve"],
                                                                     ["a.yaml", 20, 20, " --x"]]]
    back = cache.load(entry)
    assert back is not None
    assert back.findings == findings[:3] and back.suppressed == findings[3:4] and back.known == findings[4:]
    assert back.findings[0].severity is Severity.WARNING and back.findings[0].fix.edits[1] == Edit("a.yaml", 20, 20, " --x")
    assert back.known[0].value == ("a", 1) and back.known[1].fix.edits == (Edit("c.yaml", 0, 1, "x"),)
    assert back.notices == result.notices and back.notices[0].summary == ("workload", "workloads")
    assert back.sources["a.yaml"].text == "a: 1\n" and back.sources["a.yaml"].path == "/x/a.yaml"
    assert (back.files_checked, back.workloads, back.objects, [r.code for r in back.rules]) == (3, 1, 2, ["VL101"])


def test_an_entry_whose_rows_do_not_fit_is_ignored(tmp_path):
    entry = tmp_path / "results" / "k.json"
    result = LintResult(findings=_findings()[:1])
    cache.store(entry, result)
    data = json.loads(cache._read(entry))
    data["result"]["findings"][0] = data["result"]["findings"][0][:5]  # a row cut short
    cache._write(entry, json.dumps(data))  # with its digest: what the rows hold is checked too
    assert cache.load(entry) is None
