"""The capacity code on the typed model: placements read from nodes (and pointing at them), one version
parser, the release default of --gpu-memory-utilization read from the catalogs."""
from __future__ import annotations

import pytest

from vllmlint.capacity import estimate as estimate_module
from vllmlint.capacity import nodes
from vllmlint.capacity.estimate import default_gpu_memory_utilization, estimate
from vllmlint.capacity.workload import workloads
from vllmlint.engine import Linter, LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.k8s.selectors import Requirement
from vllmlint.vllm import catalog
from vllmlint.vllm.release import compare_versions, release_numbers, version_key

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: gpu}}
spec:
  template:
    spec:
      requirements:
      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}}
      - {{key: node.kubernetes.io/instance-type, operator: NotIn, values: [{excluded}]}}
---
"""
POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, Qwen/Qwen3-8B, --tensor-parallel-size, '4']
        env: [{name: NOTE, value: "moved off g5.xlarge"}]
        resources:
          limits: {nvidia.com/gpu: 4}
"""


def _vl606(text: str):
    result = lint_text(text, "m.yaml", LintOptions(select=["VL606"]))
    assert not result.internal_error
    return result.findings


def test_an_instance_type_in_some_text_of_the_pod_is_not_a_constraint():
    # The old check searched the raw text of the pod spec: an env value naming g5.xlarge made the family
    # pool's 1-GPU size count as "listed by name for this pod".
    assert _vl606(POOL.format(excluded="g5.2xlarge") + POD) == []


def test_an_instance_type_named_by_a_requirement_of_the_pool_is_reported():
    pool = POOL.format(excluded="g5.2xlarge").replace("values: [g5]}", "values: [g5]}\n"
                                                      "      - {key: node.kubernetes.io/instance-type, operator: In, "
                                                      "values: [g5.xlarge, g5.12xlarge]}")
    [finding] = _vl606(pool + POD)
    assert finding.severity == Severity.WARNING
    assert "g5.xlarge (1 GPU, from NodePool gpu) has fewer: it can only run on g5.12xlarge" in finding.message
    assert (finding.span.line, finding.span.col) == (26, 36)  # the GPU request, as before


def test_a_landing_carries_the_requirements_that_decide_it():
    pool = POOL.format(excluded="g5.2xlarge")
    linter = Linter()
    linter.add_text(pool + POD, "m.yaml")
    [work] = workloads(linter.build())
    assert work.landings is not None
    landing = next(p for p in work.landings if p.candidate.instance_type == "g5.12xlarge")
    assert landing.origin == "NodePool gpu"
    family, excluded = landing.deciding
    assert (family.key, family.values) == ("karpenter.k8s.aws/instance-family", ("g5",))
    assert family.node is not None and (family.node.span.line, family.node.span.col) == (8, 9)  # `{key: ...}`
    assert excluded.operator == "NotIn" and landing.naming("g5.2xlarge") is excluded
    assert landing.naming("g5.12xlarge") is None
    assert not [p for p in work.landings if p.candidate.instance_type == "g5.2xlarge"]


def test_gpus_for_node_constraints_takes_the_model_requirements_and_plain_data():
    typed = nodes.gpus_for_node_constraints([Requirement("node.kubernetes.io/instance-type", "In", ("g5.xlarge",))])
    plain = nodes.gpus_for_node_constraints({"node.kubernetes.io/instance-type": "g5.xlarge"})
    assert typed == plain and [c.instance_type for c in typed or []] == ["g5.xlarge"]
    gt = nodes.gpus_for_node_constraints(None, [{"key": "karpenter.k8s.aws/instance-family", "values": "p4d"},
                                                {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt",
                                                 "values": ["nan"]}])
    assert gt == []  # no count is greater than NaN


# --- versions --------------------------------------------------------------------------------------
def test_one_version_parser():
    assert not hasattr(estimate_module, "parse_version")
    assert catalog.compare_versions is compare_versions and catalog.__dict__.get("parse_version") is None
    assert version_key("0.29") == version_key("0.29.0") == version_key("v0.29.0") == version_key("0.29.0+cu129")
    ordered = ["0.6.4.dev1", "0.6.4a1", "0.6.4b2", "0.6.4rc1", "0.6.4", "0.6.4.post1", "0.6.5", "0.10.1.1"]
    assert sorted(reversed(ordered), key=version_key) == ordered
    assert version_key("0.10.1.1")[:2] == (0, 10) and version_key("0.6.4.post1")[:3] == (0, 6, 4)
    for garbage in ("latest", "nightly", "", "0", "v1.x"):
        with pytest.raises(ValueError):
            version_key(garbage)
    assert release_numbers("v0.6.4.post1") == (0, 6, 4) and release_numbers((0, 7)) == (0, 7, 0)
    assert release_numbers(None) == release_numbers("latest") == version_key(catalog.newest())[:3]


def test_the_default_utilization_is_read_from_the_catalogs(monkeypatch):
    assert default_gpu_memory_utilization("0.19.1") == catalog.load("0.19.1").default_gpu_memory_utilization == 0.9
    assert default_gpu_memory_utilization("0.20.0") == catalog.load("0.20.2").default_gpu_memory_utilization
    monkeypatch.setattr(catalog.load("0.20.2"), "default_gpu_memory_utilization", 0.8)
    assert default_gpu_memory_utilization("0.20.1") == 0.8  # the same minor release's catalog stands in
    assert estimate("Qwen/Qwen3-8B", "L4", vllm_version="0.20.2").gpu_memory_utilization == 0.8
    monkeypatch.setattr(catalog.load(catalog.newest()), "default_gpu_memory_utilization", 0.85)
    assert default_gpu_memory_utilization(None) == 0.85 and default_gpu_memory_utilization("9.0.0") == 0.85


def test_an_absurd_parallel_size_is_not_estimated():
    with pytest.raises(ValueError):
        estimate("Qwen/Qwen3-8B", "L4", pipeline_parallel_size=10**6)
    with pytest.raises(ValueError):
        estimate("Qwen/Qwen3-8B", "L4", tensor_parallel_size=10**400)
