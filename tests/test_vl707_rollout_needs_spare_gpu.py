"""VL707 rollout-needs-spare-gpu: catches / does not catch, with the position of every finding."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL707"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL707"]


def deployment(spec_extra="", gpus="1", replicas="replicas: 1", name="vllm", image="vllm/vllm-openai:v0.10.1",
               command='[vllm, serve, Qwen/Qwen3-8B]', pod_extra=""):
    lines = ["apiVersion: apps/v1", "kind: Deployment", f"metadata: {{name: {name}}}", "spec:"]
    if replicas:
        lines.append(f"  {replicas}")
    if spec_extra:
        lines.append(f"  {spec_extra}")
    lines += ["  selector: {matchLabels: {app: vllm}}", "  template:", "    metadata: {labels: {app: vllm}}",
              "    spec:"]
    if pod_extra:
        lines.append(f"      {pod_extra}")
    lines += ["      containers:", "      - name: vllm", f"        image: {image}", f"        command: {command}"]
    if gpus:
        lines.append(f"        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}")
    return "\n".join(lines) + "\n"


def pos(finding):
    return finding.span.line, finding.span.col


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, where, severity", [
    # default strategy, 1 replica: points at `replicas`
    (deployment(), (5, 3), Severity.INFO),
    # default strategy, 3 replicas: floor(0.75) = 0 unavailable, ceil(0.75) = 1 surge
    (deployment(replicas="replicas: 3"), (5, 3), Severity.INFO),
    # no replicas at all (1): points at `spec`
    (deployment(replicas=""), (4, 1), Severity.INFO),
    # explicit maxUnavailable 0 at 10 replicas: points at maxUnavailable
    (deployment("strategy: {rollingUpdate: {maxUnavailable: 0}}", replicas="replicas: 10"), (6, 30), Severity.INFO),
    # explicit RollingUpdate type without rollingUpdate: points at `strategy`
    (deployment("strategy: {type: RollingUpdate}"), (6, 3), Severity.INFO),
    # percentages: 50% surge of 1 rounds up to 1, 50% unavailable rounds down to 0
    (deployment('strategy: {rollingUpdate: {maxSurge: "50%", maxUnavailable: "50%"}}'), (6, 47), Severity.INFO),
])
def test_catches(text, where, severity):
    findings = lint(text)
    assert [(pos(f), f.severity) for f in findings] == [(where, severity)]
    assert "Recreate" in findings[0].message and "maxUnavailable: 1" in findings[0].message


NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: gpu}}
spec:
  template:
    spec:
      requirements:
      - {{key: node.kubernetes.io/instance-type, operator: In, values: [g5.12xlarge]}}
  limits:
    nvidia.com/gpu: {limit}
---
"""


def test_nodepool_limit_used_up_is_a_warning_when_the_surge_is_written():
    text = NODEPOOL.format(limit=8) + deployment("strategy: {type: RollingUpdate}", replicas="replicas: 2", gpus="4")
    findings = lint(text)
    assert [(pos(f), f.severity) for f in findings] == [((17, 3), Severity.WARNING)]
    assert "NodePool gpu (limits nvidia.com/gpu: 8) is used up by the 2 current pods x 4" in findings[0].message


def test_nodepool_limit_used_up_with_the_default_strategy_is_a_warning_too():
    # The default 25%/25% surges one pod for 2 replicas: the same stall as a written RollingUpdate.
    text = NODEPOOL.format(limit=8) + deployment(replicas="replicas: 2", gpus="4")
    findings = lint(text)
    assert [(pos(f), f.severity) for f in findings] == [((16, 3), Severity.WARNING)]
    assert "is used up by the 2 current pods" in findings[0].message


def test_nodepool_with_room_for_one_more_pod_stays_info():
    text = NODEPOOL.format(limit=12) + deployment(replicas="replicas: 2", gpus="4")
    assert [f.severity for f in lint(text)] == [Severity.INFO]


def test_nodepool_without_gpu_limit_stays_info():
    text = NODEPOOL.format(limit=8).replace("nvidia.com/gpu: 8", "cpu: 1000") + deployment()
    assert [f.severity for f in lint(text)] == [Severity.INFO]


def test_second_pool_with_room_stays_info():
    other = NODEPOOL.format(limit=100).replace("name: gpu", "name: spare")
    text = NODEPOOL.format(limit=1) + other + deployment()
    assert [f.severity for f in lint(text)] == [Severity.INFO]


def test_hpa_target_stays_info_even_with_a_full_pool():
    hpa = ("---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec:\n"
           "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}\n  minReplicas: 2\n"
           "  maxReplicas: 4\n")
    findings = lint(NODEPOOL.format(limit=1) + deployment() + hpa)
    assert [f.severity for f in findings] == [Severity.INFO]
    assert "HorizontalPodAutoscaler h scales it; at its minimum of 2 replicas" in findings[0].message


def test_hpa_minimum_of_four_is_silent():
    hpa = ("---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec:\n"
           "  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}\n  minReplicas: 4\n"
           "  maxReplicas: 8\n")
    assert lint(deployment() + hpa) == []


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    deployment("strategy: {type: Recreate}"),
    deployment("strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}"),
    deployment(replicas="replicas: 4"),  # 25% of 4 = 1 unavailable
    deployment(replicas="replicas: 0"),
    deployment(replicas="replicas: $(REPLICAS)"),
    deployment("strategy: {rollingUpdate: {maxUnavailable: $(UNAVAILABLE)}}"),
    deployment("strategy: {rollingUpdate: {maxSurge: abc}}"),
    deployment("strategy: {type: $(STRATEGY)}"),
    deployment(gpus=""),  # no accelerator requested
    deployment(gpus="0"),
    deployment(image="nginx:1.27", command="[nginx]"),  # not vLLM
    deployment().replace("kind: Deployment", "kind: StatefulSet"),  # Deployments only
])
def test_does_not_catch(text):
    assert lint(text) == []


def test_chapters():
    original = Linter(LintOptions(select=["VL707"]))
    for path in sorted((ROOT / "fixtures" / "original").iterdir()):
        original.add_file(path, path.name)
    found = [(f.path, f.span.line, f.span.col, f.severity) for f in original.run().findings]
    assert found == [("single-node-deployment.yaml", 6, 3, Severity.INFO)]
    audited = Linter(LintOptions(select=["VL707"]))
    audited.add_file(ROOT / "fixtures" / "audited" / "single-gpu-deployment.yaml", "single-gpu-deployment.yaml")
    assert audited.run().findings == []


def test_audited_benchmark_nodepool_of_one_gpu_cannot_surge():
    # The benchmark NodePool caps the pool at one GPU: a rolling update of its Deployment can never
    # schedule the surge pod. It writes no strategy, and the default surges: a warning, with the pool named.
    linter = Linter(LintOptions(select=["VL707"]))
    linter.add_file(ROOT / "fixtures" / "audited" / "benchmark-reproduce.yaml", "benchmark-reproduce.yaml")
    findings = linter.run().findings
    assert [(f.span.line, f.span.col, f.severity) for f in findings] == [(22, 3, Severity.WARNING)]
    assert "NodePool bench-gpu (limits nvidia.com/gpu: 1) is used up" in findings[0].message


# --- a fixed node count: a static NodePool (`spec.replicas`) or `limits.nodes` ------------------------------
def counted_pool(cap: str, instance="g5.12xlarge") -> str:
    return f"""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: fixed}}
spec:
  {cap}
  template:
    spec:
      requirements:
      - {{key: node.kubernetes.io/instance-type, operator: In, values: [{instance}]}}
---
"""


@pytest.mark.parametrize("cap, gpus, replicas, severity, why", [
    # a static pool of 2 g5.12xlarge (4 A10G each) holds 2 pods of 4 GPUs: no room for a third
    ("replicas: 2", "4", "replicas: 2", Severity.WARNING, "NodePool fixed (replicas: 2 nodes of at most 4"),
    # limits.nodes 1 of 4 GPUs holds two 2-GPU pods: 2 replicas use it up
    ("limits: {nodes: 1}", "2", "replicas: 2", Severity.WARNING, "NodePool fixed (limits.nodes: 1 node of at most 4"),
    # room for one more pod: 1 node of 4 GPUs, 1 replica of 2
    ("limits: {nodes: 1}", "2", "replicas: 1", Severity.INFO, None),
    # 3 nodes for 2 replicas of 4
    ("replicas: 3", "4", "replicas: 2", Severity.INFO, None),
])
def test_fixed_node_count(cap, gpus, replicas, severity, why):
    findings = lint(counted_pool(cap) + deployment(replicas=replicas, gpus=gpus))
    assert [(pos(f), f.severity) for f in findings] == [((15, 3), severity)]
    if why:
        assert why in findings[0].message and "is used up by" in findings[0].message
    else:
        assert "is used up" not in findings[0].message


def test_fixed_node_count_of_unknown_hardware_stays_info():
    # An instance type the catalog does not know: how many GPUs a node has is unknown, so the cap says nothing.
    findings = lint(counted_pool("replicas: 1", instance="x9.mystery") + deployment(gpus="4"))
    assert [f.severity for f in findings] == [Severity.INFO]


def test_the_first_line_is_short_with_a_long_rendered_name():
    from vllmlint.formatters.report import split_message

    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: requester-llm-d-modelservice-prefill}
spec:
  replicas: 1
  selector: {matchLabels: {app: v}}
  template:
    metadata: {labels: {app: v}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: [Qwen/Qwen3-8B]
        resources: {limits: {nvidia.com/gpu: 1}}
"""
    result = lint_text(text, "deploy.yaml", LintOptions(select=["VL707"]))
    [finding] = result.findings
    assert (finding.span.line, finding.span.col) == (5, 3)
    assert split_message(finding.message)[0] == (
        "Deployment/requester-llm-d-modelservice-prefill needs 1 spare nvidia.com/gpu to roll out")
