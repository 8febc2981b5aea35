"""VL708 hardcoded-visible-devices: catches / does not catch, with the position of every finding."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL708"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL708"]


def pod(env, resources="{limits: {nvidia.com/gpu: 2}}", image="vllm/vllm-openai:v0.10.1",
        command="[vllm, serve, Qwen/Qwen3-8B]"):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: {image}
    command: {command}
    env: {env}
    resources: {resources}
"""


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("env, col, severity, value", [
    ('[{name: CUDA_VISIBLE_DEVICES, value: "2,3"}]', 47, Severity.WARNING, "CUDA_VISIBLE_DEVICES:2>=2"),
    ('[{name: CUDA_VISIBLE_DEVICES, value: "0,5"}]', 47, Severity.WARNING, "CUDA_VISIBLE_DEVICES:5>=2"),
    ('[{name: CUDA_VISIBLE_DEVICES, value: "1"}]', 47, Severity.WARNING, "CUDA_VISIBLE_DEVICES:1<2"),
    ('[{name: CUDA_VISIBLE_DEVICES, value: "1,0"}]', 47, Severity.INFO, "CUDA_VISIBLE_DEVICES:all-2"),
    ('[{name: CUDA_VISIBLE_DEVICES, value: ""}]', 47, Severity.WARNING, "CUDA_VISIBLE_DEVICES="),
    ('[{name: NVIDIA_VISIBLE_DEVICES, value: all}]', 49, Severity.WARNING, "NVIDIA_VISIBLE_DEVICES=all"),
    ('[{name: NVIDIA_VISIBLE_DEVICES, value: "0,1"}]', 49, Severity.WARNING, "NVIDIA_VISIBLE_DEVICES=0,1"),
    ('[{name: NVIDIA_VISIBLE_DEVICES, value: GPU-8f3c2a6e-1b2d}]', 49, Severity.WARNING,
     "NVIDIA_VISIBLE_DEVICES=GPU-8f3c2a6e-1b2d"),
    ('[{name: NVIDIA_VISIBLE_DEVICES, value: void}]', 49, Severity.WARNING, "NVIDIA_VISIBLE_DEVICES=void"),
])
def test_catches(env, col, severity, value):
    assert found(pod(env)) == [(9, col, severity, value)]


def test_beyond_the_allocation_names_the_count():
    (finding,) = lint(pod('[{name: CUDA_VISIBLE_DEVICES, value: "0,5"}]'))
    assert "names device 5" in finding.message and "2 nvidia.com/gpu" in finding.message
    assert "sees only 1 of the 2 GPUs" in finding.message


def test_first_ordinal_missing_means_no_gpu():
    (finding,) = lint(pod('[{name: CUDA_VISIBLE_DEVICES, value: "4"}]', "{limits: {nvidia.com/gpu: 1}}"))
    assert "vLLM sees no GPU at all" in finding.message


@pytest.mark.parametrize("name", ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"])
def test_amd_device_plugin(name):
    text = pod(f'[{{name: {name}, value: "3"}}]', "{limits: {amd.com/gpu: 1}}", "rocm/vllm:latest")
    assert [v for *_, v in found(text)] == [f"{name}:3>=1"]


def test_configmap_value_points_at_the_env_entry():
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: gpu-env}
data: {CUDA_VISIBLE_DEVICES: "7"}
---
""" + pod('[{name: CUDA_VISIBLE_DEVICES, valueFrom: {configMapKeyRef: {name: gpu-env, key: CUDA_VISIBLE_DEVICES}}}]')
    findings = lint(text)
    assert [(f.span.line, f.span.col) for f in findings] == [(14, 11)]
    assert "from ConfigMap gpu-env, key CUDA_VISIBLE_DEVICES" in findings[0].message


def test_envfrom_configmap():
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: gpu-env}
data: {NVIDIA_VISIBLE_DEVICES: all}
---
""" + pod("[]").replace("    env: []\n", "    envFrom:\n    - configMapRef: {name: gpu-env}\n")
    assert [(f.span.line, f.span.col) for f in lint(text)] == [(15, 7)]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod('[{name: CUDA_VISIBLE_DEVICES, value: "3"}]', "{limits: {cpu: 4}}"),  # no device-plugin GPU
    pod('[{name: CUDA_VISIBLE_DEVICES, value: "3"}]', "{limits: {nvidia.com/gpu: 0}}"),
    pod('[{name: CUDA_VISIBLE_DEVICES, value: GPU-8f3c2a6e-1b2d-4c5e-9f00-123456789abc}]'),
    pod('[{name: CUDA_VISIBLE_DEVICES, value: MIG-GPU-8f3c2a6e/1/0}]'),
    pod('[{name: CUDA_VISIBLE_DEVICES, value: "$(GPU_IDS)"}]'),
    pod('[{name: CUDA_VISIBLE_DEVICES, valueFrom: {configMapKeyRef: {name: elsewhere, key: ids}}}]'),
    pod('[{name: CUDA_VISIBLE_DEVICES, valueFrom: {secretKeyRef: {name: s, key: ids}}}]'),
    pod('[{name: NVIDIA_VISIBLE_DEVICES, value: /var/run/nvidia-container-devices}]'),
    pod('[{name: HIP_VISIBLE_DEVICES, value: "3"}]'),  # HIP variable, NVIDIA allocation
    pod('[{name: NVIDIA_VISIBLE_DEVICES, value: all}]', "{limits: {amd.com/gpu: 1}}"),
    pod('[{name: NVIDIA_VISIBLE_DEVICES, value: all}]', image="nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5",
        command="[dcgm-exporter]"),  # not vLLM
    pod('[{name: CUDA_DEVICE_ORDER, value: PCI_BUS_ID}]'),
    pod('[{name: NVIDIA_VISIBLE_DEVICES, value: "nvidia.com/gpu=all"}]'),  # a CDI name: not judged
    pod('[{name: NVIDIA_VISIBLE_DEVICES, value: "$(DEVICES)"}]'),
])
def test_does_not_catch(text):
    assert lint(text) == []


def test_compose_is_not_checked():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: [--model, Qwen/Qwen3-8B]
    environment: {CUDA_VISIBLE_DEVICES: "3", NVIDIA_VISIBLE_DEVICES: all}
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, device_ids: ["3"], capabilities: [gpu]}]
"""
    assert lint(text, "compose.yaml") == []


def test_chapters():
    linter = Linter(LintOptions(select=["VL708"]))
    for path in sorted((ROOT / "fixtures" / "original").iterdir()):
        linter.add_file(path, path.name)
    assert [(f.path, f.span.line, f.span.col, f.severity) for f in linter.run().findings] == [
        ("multi-node-statefulset.yaml", 74, 18, Severity.INFO), ("single-node-deployment.yaml", 39, 18, Severity.INFO)]
    linter = Linter(LintOptions(select=["VL708"]))
    for path in sorted((ROOT / "fixtures" / "audited").iterdir()):
        linter.add_file(path, path.name)
    assert linter.run().findings == []


def test_fewer_visible_than_tp_x_pp_fails_at_start_up():
    # vLLM's workers need TP x PP devices: with one visible and TP 2 it stops at start-up; "request 1" would
    # contradict VL606, which reads the same TP x PP.
    text = pod('[{name: CUDA_VISIBLE_DEVICES, value: "0"}]',
               command="[vllm, serve, Qwen/Qwen3-8B, --tensor-parallel-size, '2']")
    assert found(text) == [(9, 47, Severity.WARNING, "CUDA_VISIBLE_DEVICES:1<2")]
    (finding,) = lint(text)
    assert "vLLM needs 2 GPUs in this container (TP 2 x PP 1) but sees 1: it fails at start-up" in finding.message
    assert "request 1" not in finding.message and "idle" not in finding.message
    # ... and an ordinal past the allocation, with PP 2
    text = pod('[{name: CUDA_VISIBLE_DEVICES, value: "0,5"}]',
               command="[vllm, serve, Qwen/Qwen3-8B, --pipeline-parallel-size, '2']")
    assert found(text) == [(9, 47, Severity.WARNING, "CUDA_VISIBLE_DEVICES:5>=2")]
    assert "sees 1: it fails at start-up" in lint(text)[0].message


def test_request_n_only_when_vllm_uses_n():
    (tp1,) = lint(pod('[{name: CUDA_VISIBLE_DEVICES, value: "0"}]'))
    assert tp1.message.endswith("stay allocated and idle. Remove it, or request 1.")
    (dynamic,) = lint(pod('[{name: CUDA_VISIBLE_DEVICES, value: "0"}]',
                          command="[vllm, serve, Qwen/Qwen3-8B, --config, /etc/vllm.yaml]"))
    assert dynamic.message.endswith("stay allocated and idle. Remove it.")


def test_an_ordinal_past_every_allocated_gpu_is_redundant():
    # CUDA_VISIBLE_DEVICES=0,1 with 1 GPU: CUDA ignores the missing 1, vLLM sees the one GPU it has.
    text = pod('[{name: CUDA_VISIBLE_DEVICES, value: "0,1"}]', resources="{limits: {nvidia.com/gpu: 1}}")
    assert found(text) == [(9, 47, Severity.INFO, "CUDA_VISIBLE_DEVICES:all-1")]
    assert "redundant" in lint(text)[0].message and "device 1 does not exist" in lint(text)[0].message
