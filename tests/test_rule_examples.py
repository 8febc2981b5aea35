"""Every rule's documented examples are executable specs: failing snippets must trigger the rule,
passing ones must not. Adding a rule adds its examples here without writing a test."""
from pathlib import PurePosixPath

import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.registry import all_rules


def _cases():
    for rule in all_rules().values():
        if rule.kind != "result":
            continue
        docs = rule.docs
        yield pytest.param(rule, "fails", {"source": docs["example"], "title": "docs example"},
                           id=f"{rule.code}-docs-example")
        yield pytest.param(rule, "passes", {"source": docs["use_instead"], "title": "docs use_instead"},
                           id=f"{rule.code}-docs-use-instead")
        for outcome in ("fails", "passes"):
            for number, example in enumerate(rule.examples.get(outcome) or []):
                yield pytest.param(rule, outcome, example, id=f"{rule.code}-{outcome}-{number}")


@pytest.mark.parametrize("rule,outcome,example", list(_cases()))
def test_rule_example(rule, outcome, example):
    filename = example.get("filename", "example.yaml")
    # Suppression problems (VL003/VL004) are about other rules' findings: those rules must run too.
    select = None if rule.code in ("VL003", "VL004") else [rule.code]
    options = LintOptions(select=select, vllm_version=example.get("vllm_version"))
    result = lint_text(example["source"], filename, options)
    assert not result.internal_error, [n.message for n in result.notices]
    found = [f for f in result.findings if f.code == rule.code]
    title = example.get("title", "")
    if outcome == "fails":
        assert found, f"{rule.code} should catch: {title}"
        if "count" in example:
            assert len(found) == example["count"], [f.message for f in found]
        for finding in found:
            assert finding.path == PurePosixPath(filename).as_posix()
            assert finding.span.line >= 1 and finding.span.col >= 1
    else:
        assert not found, f"{rule.code} should not catch: {title}: {[f.message for f in found]}"
