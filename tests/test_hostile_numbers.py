"""Hostile numbers at the model boundary (issue 8): huge parallel sizes, infinite, NaN and 400-digit values
in flags and quantities are treated as unknown (no finding, no crash) or reported by the rule that already
reports them, and never stall the run."""
from __future__ import annotations

import signal
import time
from contextlib import contextmanager

import pytest

from vllmlint.engine import LintOptions, lint_text

CAPACITY = ["VL601", "VL602", "VL603", "VL604", "VL605", "VL606", "VL607", "VL608", "VL609"]
TIMEOUT = 20  # seconds; the old code took 50 s and 1.7 GB for --pipeline-parallel-size 1000000

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      nodeSelector: {{node.kubernetes.io/instance-type: p5.48xlarge}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, Qwen/Qwen3-8B{flags}]
        resources:
          limits: {{nvidia.com/gpu: {gpus}{extra}}}
"""


@contextmanager
def deadline(seconds: int = TIMEOUT):
    def expired(signum, frame):
        signal.alarm(1)  # again and again: a crash-containing caller may swallow one TimeoutError per rule
        raise TimeoutError(f"lint took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def lint(text: str):
    with deadline():
        result = lint_text(text, "m.yaml", LintOptions(select=CAPACITY))
    assert not result.internal_error, [n.message for n in result.notices]
    return result.findings


def pod(flags: str = "", gpus: str = "8", extra: str = "") -> str:
    return POD.format(flags=flags, gpus=gpus, extra=extra)


def test_a_million_pipeline_stages_is_reported_by_vl604_quickly():
    start = time.monotonic()
    findings = lint(pod(", --pipeline-parallel-size, '1000000'"))
    assert time.monotonic() - start < TIMEOUT
    [finding] = [f for f in findings if f.code == "VL604"]
    assert "--pipeline-parallel-size 1000000 exceeds the 36 layers" in finding.message
    assert (finding.span.line, finding.span.col) == (13, 73)  # the value token
    assert not [f for f in findings if f.code in ("VL601", "VL602", "VL603")]


@pytest.mark.parametrize("flag", ["--pipeline-parallel-size", "--tensor-parallel-size", "--max-model-len",
                                  "--max-num-seqs", "--kv-cache-memory-bytes"])
def test_a_400_digit_number_is_unknown(flag):
    findings = lint(pod(f", {flag}, '{'9' * 400}'"))  # OverflowError in the old code
    assert not [f for f in findings if f.code in ("VL601", "VL602", "VL603", "VL604", "VL605")]


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400"])
def test_a_non_finite_gpu_memory_utilization_is_unknown(value):
    findings = lint(pod(f", --gpu-memory-utilization, '{value}'"))  # inf: OverflowError in the old code
    assert not [f for f in findings if f.code in ("VL601", "VL602", "VL603")]


@pytest.mark.parametrize("count", [".inf", "-.inf", ".nan", "1e400", "'1e400'", "'99999999999999999999999'"])
def test_a_gpu_count_beyond_any_number_is_no_request(count):
    findings = lint(pod(gpus=count))  # int(inf), int(nan): internal errors in the old code
    assert not [f for f in findings if f.code == "VL606"]


def test_a_huge_gpu_count_in_requests_is_no_request():
    findings = lint(pod(gpus="8").replace("limits: {nvidia.com/gpu: 8}", "requests: {nvidia.com/gpu: .inf}"))
    assert not [f for f in findings if f.code == "VL606"]


@pytest.mark.parametrize("size", ["'1e400'", "1e400", ".inf", ".nan", "'1e400Gi'", "'.nanGi'"])
def test_an_infinite_ephemeral_storage_limit_is_unknown(size):
    findings = lint(pod(extra=f", ephemeral-storage: {size}"))  # OverflowError in the old code
    assert not [f for f in findings if f.code == "VL609"]


def test_an_infinite_emptydir_size_limit_is_unknown():
    text = pod().replace("      containers:\n", """\
      volumes:
      - {name: cache, emptyDir: {sizeLimit: "1e400"}}
      containers:
""").replace("        resources:\n", """\
        volumeMounts: [{name: cache, mountPath: /root/.cache/huggingface}]
        resources:
""")
    assert "sizeLimit" in text and "volumeMounts" in text
    assert not [f for f in lint(text) if f.code == "VL609"]


RAY = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {{name: ray}}
spec:
  headGroupSpec:
    template:
      spec:
        containers:
        - name: head
          image: vllm/vllm-openai:v0.29.0
          command: [vllm, serve, Qwen/Qwen3-8B, --tensor-parallel-size, '4', --distributed-executor-backend, ray]
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
  workerGroupSpecs:
  - groupName: gpu
    replicas: {replicas}
    numOfHosts: {hosts}
    template:
      spec:
        containers:
        - name: worker
          image: vllm/vllm-openai:v0.29.0
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize("replicas,hosts", [("1e400", "1"), ("'1e400'", "1"), ("1", "1e400"), (".inf", ".nan")])
def test_infinite_ray_replicas_are_unknown(replicas, hosts):
    findings = lint(RAY.format(replicas=replicas, hosts=hosts))  # OverflowError in the old code
    assert not [f for f in findings if f.code == "VL606"]


def test_ray_replicas_still_count():
    [finding] = [f for f in lint(RAY.format(replicas="1", hosts="1")) if f.code == "VL606"]
    assert "has at most 2 GPUs, but vLLM needs 4" in finding.message


# --- alias bombs inside the model (the capacity code and selectors read nodes, never `to_python` copies) ---
def _bomb(indent: str, depth: int = 30) -> str:
    lines = ["x0: &x0 {a: b}"] + [f"x{i}: &x{i} [*x{i - 1}, *x{i - 1}, *x{i - 1}]" for i in range(1, depth)]
    return "\n".join(indent + line for line in lines)


def test_an_alias_bomb_in_a_pod_spec_and_a_service_selector_does_not_hang():
    text = f"""\
apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: vllm
    bomb:
{_bomb("      ")}
  spec:
    selector: {{matchLabels: {{app: vllm}}}}
    template:
      metadata: {{labels: {{app: vllm}}}}
      spec:
        nodeSelector: {{node.kubernetes.io/instance-type: p5.48xlarge, junk: *x29}}
        affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: *x29}}}}}}
        tolerations: *x29
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.29.0
          command: [vllm, serve, Qwen/Qwen3-8B, --tensor-parallel-size, '8']
          resources: {{limits: {{nvidia.com/gpu: 8}}}}
- apiVersion: v1
  kind: Service
  metadata: {{name: vllm}}
  spec:
    selector: {{app: vllm, extra: *x29}}
    ports: [{{name: metrics, port: 80, targetPort: 8001}}]
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {{name: gpu}}
  spec:
    template:
      metadata: {{labels: *x0}}
      spec: {{requirements: *x29, taints: *x29}}
"""
    with deadline():
        result = lint_text(text, "bomb.yaml", LintOptions(select=CAPACITY + ["VL301", "VL501", "VL110"]))
    assert not result.internal_error, [n.message for n in result.notices]


@pytest.mark.parametrize("port", ["'²'", "'" + "9" * 5000 + "'", "'٣'"])
def test_odd_digits_in_ports_are_no_port(port):
    # `str.isdigit` accepts a superscript two and 5,000 digits; `int` rejects both: internal errors before.
    text = f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata:
      labels: {{app: vllm}}
      annotations: {{prometheus.io/port: {port}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, Qwen/Qwen3-8B]
---
apiVersion: v1
kind: Service
metadata: {{name: api}}
spec:
  selector: {{app: vllm}}
  ports: [{{name: metrics, port: 80, targetPort: {port}}}]
"""
    with deadline():
        result = lint_text(text, "p.yaml", LintOptions(select=["VL301"]))
    assert not result.internal_error, [n.message for n in result.notices]
    assert result.findings == []
