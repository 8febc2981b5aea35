"""VL102 on a release that is not catalogued itself: 0.10.0 is checked against 0.10.2's catalog, but the
curated removal table says 0.10.0 still accepted `--num-scheduler-steps` (removed in 0.10.1). Reporting
"removed ... last accepted by 0.10.0; runs 0.10.0" contradicted itself; the rule stays silent there."""
from __future__ import annotations

from vllmlint.engine import LintOptions, lint_text

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: v}}
spec:
  selector: {{matchLabels: {{app: v}}}}
  template:
    metadata: {{labels: {{app: v}}}}
    spec:
      containers:
      - name: v
        image: vllm/vllm-openai:{tag}
        args: ["--model", "Qwen/Qwen3-0.6B", "--num-scheduler-steps", "4"]
"""


def vl102(tag: str):
    result = lint_text(MANIFEST.format(tag=tag), "d.yaml", LintOptions(select=["VL102"]))
    return [(f.span.line, f.span.col, f.severity.label) for f in result.findings if f.code == "VL102"]


def test_does_not_catch_a_flag_the_uncatalogued_release_still_accepted():
    assert vl102("v0.10.0") == []


def test_catches_it_from_the_release_that_removed_it():
    assert vl102("v0.10.1") == [(12, 46, "error")]
    assert vl102("v0.10.2") == [(12, 46, "error")]
