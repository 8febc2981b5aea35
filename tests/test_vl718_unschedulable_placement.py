"""VL718 unschedulable-placement: catches / does not catch, with the position of every finding."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL718"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL718"]


def run(pool_labels="{node-type: gpu}", instances="[g5.12xlarge, g5.48xlarge]", taints="[]",
        selector="{node-type: gpu}", tolerations="[]", resources="{limits: {nvidia.com/gpu: 1}}", affinity=""):
    return f"""apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: gpu}}
spec:
  template:
    metadata:
      labels: {pool_labels}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}}
      requirements:
      - {{key: node.kubernetes.io/instance-type, operator: In, values: {instances}}}
      taints: {taints}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      nodeSelector: {selector}
      tolerations: {tolerations}{affinity}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: [Qwen/Qwen3-8B]
        resources: {resources}
"""


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


DEDICATED = "[{key: dedicated, value: gpu, effect: NoSchedule}]"


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, col, value", [
    # a resource name used as a node label (the pod also selects the pool's label)
    (run(selector='{node-type: gpu, vpc.amazonaws.com/efa: "true"}'), 38, "requirement:vpc.amazonaws.com/efa"),
    # ... or nothing but the resource name: tied to the pool by the folder only, still certain
    (run(selector='{vpc.amazonaws.com/efa: "true"}'), 22, "requirement:vpc.amazonaws.com/efa"),
    # a GPU the pool's instance types do not have
    (run(selector="{node-type: gpu, nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}"), 38,
     "hardware:nvidia.com/gpu.product"),
    # the pool's taint, not tolerated by a pod that selects the pool
    (run(taints=DEDICATED), 21, "taint:dedicated"),
    # a toleration with the wrong value
    (run(taints=DEDICATED, tolerations="[{key: dedicated, value: cpu, effect: NoSchedule}]"), 21, "taint:dedicated"),
    # a label of the pod the pool does not carry, on a pool the pod tolerates
    (run(taints=DEDICATED, tolerations="[{key: dedicated, operator: Exists}]", selector="{team: research}"), 22,
     "requirement:team"),
    # the pool chosen by name, whose taint the pod does not tolerate
    (run(taints=DEDICATED, selector="{karpenter.sh/nodepool: gpu}"), 21, "taint:dedicated"),
    # a managed node group label the run's pool sets itself (with another value): judged against that pool
    (run(pool_labels="{eks.amazonaws.com/nodegroup: gpu-ng}", selector="{eks.amazonaws.com/nodegroup: p4d}",
         taints=DEDICATED, tolerations="[{key: dedicated, operator: Exists}]"), 22,
     "requirement:eks.amazonaws.com/nodegroup"),
])
def test_catches(text, col, value):
    assert found(text) == [(22, col, Severity.ERROR, value)]


def test_message_explains_the_resource_name():
    (finding,) = lint(run(selector='{node-type: gpu, vpc.amazonaws.com/efa: "true"}'))
    assert finding.message.startswith("No NodePool of this run can take the vLLM pod of Deployment vllm: NodePool gpu:")
    assert "is a resource a device plugin advertises, not a node label" in finding.message
    assert "stays Pending" in finding.message


def test_a_capacity_type_the_pool_excludes():
    text = run(selector="{node-type: gpu, karpenter.sh/capacity-type: spot}").replace(
        "      - {key: node.kubernetes.io/instance-type,",
        "      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"
        "      - {key: node.kubernetes.io/instance-type,")
    (finding,) = lint(text)
    assert finding.value == "requirement:karpenter.sh/capacity-type"
    assert "no node of the pool satisfies it" in finding.message


def test_affinity_term_position():
    text = run(selector="{}", affinity="""
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: node-type, operator: In, values: [gpu]}
              - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}""")
    assert [(f.span.line, f.span.col, f.value) for f in lint(text)] == [(30, 23, "hardware:nvidia.com/gpu.product")]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    run(),  # the pool takes it
    run(selector="{node-type: gpu, nvidia.com/gpu.product: NVIDIA-A10G}"),  # g5 has A10G
    run(taints=DEDICATED, tolerations="[{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]"),
    run(taints=DEDICATED, tolerations="[{operator: Exists}]"),  # tolerates everything
    # ExtendedResourceToleration: a NoSchedule taint keyed by the requested resource
    run(taints="[{key: nvidia.com/gpu, effect: NoSchedule}]"),
    run(taints="[{key: nvidia.com/gpu, value: 'true', effect: NoSchedule}]"),
    # PreferNoSchedule only discourages
    run(taints="[{key: dedicated, value: gpu, effect: PreferNoSchedule}]"),
    # no node constraint at all: static nodes the run does not show may take it
    run(taints=DEDICATED, selector="{}"),
    # points at no pool (a managed node group's label), folder only: silent
    run(selector="{eks.amazonaws.com/nodegroup: gpu-ng}"),
    # ... even when the pod tolerates the pool's taint (a generic GPU toleration, or every taint): the
    # selector names a node group another provisioner owns, which the run does not show
    run(taints="[{key: nvidia.com/gpu, effect: NoSchedule}]", selector="{eks.amazonaws.com/nodegroup: p4d-reserved}",
        tolerations="[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"),
    run(taints=DEDICATED, selector="{eks.amazonaws.com/nodegroup: p4d-reserved}", tolerations="[{operator: Exists}]"),
    run(taints=DEDICATED, selector="{node-type: gpu, alpha.eksctl.io/nodegroup-name: gpu}",
        tolerations="[{key: dedicated, operator: Exists}]"),
    run(taints=DEDICATED, selector="{cloud.google.com/gke-nodepool: l4-pool}",
        tolerations="[{key: dedicated, operator: Exists}]"),
    run(taints=DEDICATED, selector="{kubernetes.azure.com/agentpool: gpupool}",
        tolerations="[{key: dedicated, operator: Exists}]"),
    # a pool named that is not in the run (it may exist in the cluster)
    run(taints=DEDICATED, selector="{karpenter.sh/nodepool: elsewhere}"),
    # a GPU product the catalogs do not know: not judged
    run(selector="{node-type: gpu, nvidia.com/gpu.product: NVIDIA-Future-GPU}"),
    # well-known labels Karpenter sets on every node
    run(selector="{node-type: gpu, topology.kubernetes.io/zone: us-east-1a, kubernetes.io/arch: amd64}"),
    # a pool whose hardware is not known (instance types the catalog lacks): never guess
    run(instances="[x9.superlarge]", selector="{node-type: gpu, nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}"),
])
def test_does_not_catch(text):
    assert lint(text) == []


def test_a_node_group_affinity_term():
    # `eks.amazonaws.com/nodegroup In [...]` in required node affinity, with a GPU toleration: not judged
    text = run(taints="[{key: nvidia.com/gpu, effect: NoSchedule}]", selector="{}",
               tolerations="[{key: nvidia.com/gpu, operator: Exists}]", affinity="""
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: eks.amazonaws.com/nodegroup, operator: In, values: [p4d-reserved]}""")
    assert lint(text) == []


def test_avoiding_node_groups_is_still_judged():
    # `DoesNotExist` on a node group label asks for nodes outside managed groups: Karpenter's
    text = run(taints=DEDICATED, selector="{}", affinity="""
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: node-type, operator: In, values: [gpu]}
              - {key: eks.amazonaws.com/nodegroup, operator: DoesNotExist}""")
    assert found(text) == [(22, 21, Severity.ERROR, "taint:dedicated")]


def test_the_foreign_labels_are_data_with_sources():
    import yaml
    (path,) = (ROOT / "rules").glob("VL718-*.yaml")
    entries = yaml.safe_load(path.read_text())["data"]["foreign_node_labels"]
    assert {"eks.amazonaws.com/nodegroup", "alpha.eksctl.io/nodegroup-name", "cloud.google.com/gke-nodepool",
            "kubernetes.azure.com/agentpool"} <= {e["key"] for e in entries}
    assert all(e["source"].startswith("https://") and e["provisioner"] for e in entries)


def test_a_second_pool_that_admits_silences_it():
    text = run(taints=DEDICATED) + """---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu-open}
spec:
  template:
    metadata:
      labels: {node-type: gpu}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g6.xlarge]}
"""
    assert lint(text) == []


def test_no_nodepool_no_finding():
    text = run(selector='{vpc.amazonaws.com/efa: "true"}').split("---\n", 1)[1]
    assert lint(text) == []


def test_fixtures_report_only_the_chapters_efa_requirement():
    linter = Linter(LintOptions(select=["VL718"]))
    for folder in ("audited", "original", "own"):
        for path in sorted((ROOT / "fixtures" / folder).glob("*.yaml")):
            linter.add_file(path, f"{folder}/{path.name}")
    # VL001 of broken.yaml is never hidden; the April 2026 NodePool requires `vpc.amazonaws.com/efa` (line 22)
    assert [(f.path, f.span.line, f.value) for f in linter.run().findings if f.code == "VL718"] == [
        ("original/karpenter-nodepool.yaml", 22, "pool-resource:vpc.amazonaws.com/efa")]


def test_a_resource_taint_without_the_resource_says_to_request_it():
    # The ExtendedResourceToleration admission plugin tolerates a NoSchedule taint keyed by a requested resource
    # (k8s.io/kubernetes plugin/pkg/admission/extendedresourcetoleration/admission.go): the fix is the request.
    text = run(taints="[{key: nvidia.com/gpu, effect: NoSchedule}]", resources="{}")
    assert found(text) == [(22, 21, Severity.ERROR, "taint:nvidia.com/gpu")]
    (finding,) = lint(text)
    assert "keyed by the resource `nvidia.com/gpu`, which the pod does not request" in finding.message
    assert "Request `nvidia.com/gpu` under resources.limits" in finding.message
    assert "does not tolerate" not in finding.message and "Match the pod's" not in finding.message


def test_a_plain_taint_still_asks_for_a_toleration():
    (finding,) = lint(run(taints=DEDICATED))
    assert "which the pod does not tolerate" in finding.message and "Match the pod's" in finding.message
    # a NoExecute taint keyed by the resource: the plugin adds only NoSchedule tolerations
    (finding,) = lint(run(taints="[{key: nvidia.com/gpu, effect: NoExecute}]"))
    assert "which the pod does not tolerate" in finding.message and "Request `" not in finding.message


# --- EFA interfaces per instance type, and NodePool requirements keyed by a resource (issue 26) -----------
def efa_pod(instance="p4d.24xlarge", efa="32", gpus="8", selector=None, extra=""):
    selector = selector or f"{{node.kubernetes.io/instance-type: {instance}}}"
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      nodeSelector: {selector}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: [meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size, "8"]
        resources:
          limits: {{nvidia.com/gpu: {gpus}, vpc.amazonaws.com/efa: {efa}}}
{extra}"""


def test_catches_more_efa_than_the_instance_type_has():
    [finding] = lint(efa_pod("p4d.24xlarge", "32"))
    assert (finding.span.line, finding.span.col, finding.severity) == (15, 62, Severity.ERROR)
    assert finding.message.startswith("Request at most 4 (the most any of them takes)")
    assert "p4d.24xlarge (4)" in finding.message and "Insufficient vpc.amazonaws.com/efa" in finding.message


def test_catches_efa_on_an_instance_type_without_efa():
    [finding] = lint(efa_pod("p3.16xlarge", "1"))
    assert (finding.span.line, finding.span.col) == (15, 62)
    assert finding.message.startswith("Pick an instance type that supports EFA")
    assert "p3.16xlarge (no EFA)" in finding.message


def test_catches_efa_on_the_chapters_pool_that_only_fits_the_gpus_on_p3():
    # 8 GPUs fit only the p3.16xlarge of the pool (g5.12xlarge has 4): it has no EFA.
    pool = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: vllm-gpu}
spec:
  template:
    metadata:
      labels: {node-type: gpu}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [p3.16xlarge, g5.12xlarge]}
---
"""
    findings = lint(pool + efa_pod(efa="1", selector="{node-type: gpu}"))
    assert [(f.span.line, f.span.col, f.value) for f in findings] == [(27, 62, "efa:1")]


@pytest.mark.parametrize("instance,efa", [("p5.48xlarge", "32"), ("p4d.24xlarge", "4"), ("g6e.48xlarge", "4"),
                                          ("trn1.32xlarge", "8")])
def test_does_not_catch_efa_the_node_has(instance, efa):
    assert lint(efa_pod(instance, efa, gpus="8" if instance != "trn1.32xlarge" else "0")) == []


def test_does_not_catch_efa_on_an_unknown_instance_type():
    assert lint(efa_pod("p6e-gb200.36xlarge", "64")) == []


def test_does_not_catch_efa_without_a_known_placement():
    assert lint(efa_pod(selector="{node-type: gpu}", efa="64")) == []


def nodepool_requirement(key, operator="In", values='["true"]'):
    return f"""apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: vllm-gpu}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}}
      requirements:
      - key: node.kubernetes.io/instance-type
        operator: In
        values: [p3.16xlarge, p4d.24xlarge]
      - key: {key}
        operator: {operator}
        values: {values}
"""


def test_catches_a_nodepool_requirement_on_the_efa_resource():
    [finding] = lint(nodepool_requirement("vpc.amazonaws.com/efa"))
    assert (finding.span.line, finding.span.col, finding.severity) == (12, 14, Severity.WARNING)
    assert finding.message.startswith("Drop this requirement and request `vpc.amazonaws.com/efa` under the vLLM "
                                      "container's resources.limits")
    assert "p3.16xlarge has no EFA" in finding.message


@pytest.mark.parametrize("key", ["nvidia.com/gpu", "aws.amazon.com/neuron"])
def test_catches_a_nodepool_requirement_on_a_device_resource(key):
    [finding] = lint(nodepool_requirement(key, "Exists", "[]"))
    assert (finding.span.line, finding.span.col, finding.value) == (12, 14, f"pool-resource:{key}")
    assert "has no EFA" not in finding.message


@pytest.mark.parametrize("key", ["karpenter.k8s.aws/instance-gpu-count", "node-type", "nvidia.com/gpu.present"])
def test_does_not_catch_a_nodepool_requirement_on_a_label(key):
    assert lint(nodepool_requirement(key)) == []


@pytest.mark.parametrize("operator, values", [("DoesNotExist", "[]"), ("NotIn", '["true"]')])
def test_does_not_catch_a_nodepool_keeping_a_resource_out(operator, values):
    assert lint(nodepool_requirement("nvidia.com/gpu", operator, values)) == []
