"""VL705 memory-limit-too-small: catches / does not catch, with the position of every finding."""
import json
from pathlib import Path

import jsonschema
import pytest

from vllmlint.data import load_yaml_data
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL705"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL705"]


def pod(args, limits="{nvidia.com/gpu: 4, memory: 12Gi}", image="vllm/vllm-openai:v0.6.3", env="[]",
        requests=None):
    extra = f"\n      requests: {requests}" if requests else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: {image}
    args: {args}
    env: {env}
    resources:
      limits: {limits}{extra}
"""


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


TP4_70B = "[--model, meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size, '4']"
CPU = "vllm/vllm-openai-cpu:v0.29.0-x86_64"


def test_data_matches_its_schema():
    schema = json.loads((ROOT / "schemas" / "host-memory.schema.json").read_text())
    jsonschema.validate(load_yaml_data(ROOT / "data" / "host-memory.yaml"), schema)


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, col, value", [
    # 0.6.3 (V0): 4 GiB default swap x TP 4 = 16 GiB > 12Gi
    (pod(TP4_70B), 43, "16.0 GiB>12.0 GiB"),
    # the explicit swap space, per GPU
    (pod("[--model, meta-llama/Llama-3.1-8B-Instruct, --swap-space, '16']", "{nvidia.com/gpu: 1, memory: 8Gi}"),
     43, "16.0 GiB>8.0 GiB"),
    # 0.8.5 with VLLM_USE_V1=0 runs V0
    (pod(TP4_70B, image="vllm/vllm-openai:v0.8.5", env="[{name: VLLM_USE_V1, value: '0'}]"), 43,
     "16.0 GiB>12.0 GiB"),
    # decimal gigabytes: 16G is 14.9 GiB
    (pod(TP4_70B, "{nvidia.com/gpu: 4, memory: 16G}"), 43, "16.0 GiB>14.9 GiB"),
    # --cpu-offload-gb per GPU (0.29.0, any engine): 2 x 20 GiB > 32Gi
    (pod("[Qwen/Qwen2.5-32B-Instruct, -tp, '2', --cpu-offload-gb, '20']",
         "{nvidia.com/gpu: 2, memory: 32Gi}", "vllm/vllm-openai:v0.29.0"), 43, "40.0 GiB>32.0 GiB"),
    # CPU build: weights (14.2 GiB) + KV cache (8 GiB) > 16Gi
    (pod("[Qwen/Qwen2.5-7B-Instruct]", "{memory: 16Gi}", CPU, "[{name: VLLM_CPU_KVCACHE_SPACE, value: '8'}]"),
     24, "22.2 GiB>16.0 GiB"),
    # CPU build: the weights alone
    (pod("[Qwen/Qwen2.5-7B-Instruct]", "{memory: 8Gi}", CPU), 24, "14.2 GiB>8.0 GiB"),
    # CPU build: --kv-cache-memory-bytes (read by the CPU worker from 0.22.0); vLLM reads `8G` as 8 GiB
    (pod("[Qwen/Qwen3-0.6B, --kv-cache-memory-bytes, 8G]", "{memory: 8Gi}", CPU), 24, "9.1 GiB>8.0 GiB"),
])
def test_catches(text, col, value):
    assert found(text) == [(11, col, Severity.ERROR, value)]


def test_message_names_the_parts():
    (finding,) = lint(pod(TP4_70B))
    assert finding.message.startswith("The memory limit 12Gi (12.0 GiB) of container vllm is below")
    assert "--swap-space 4, vLLM 0.6.3's default" in finding.message and "x 4 GPUs" in finding.message


def test_offload_is_at_most_the_rank_weights():
    # Qwen3-0.6B has 1.1 GiB of weights: --cpu-offload-gb 100 offloads all of it, not 100 GiB
    assert lint(pod("[Qwen/Qwen3-0.6B, --cpu-offload-gb, '100']", "{nvidia.com/gpu: 1, memory: 2Gi}",
                    "vllm/vllm-openai:v0.29.0")) == []


def test_cpu_default_kv_cache_on_releases_with_a_fixed_default():
    # 0.10.1.1 CPU build (a pinned `vllm serve`): 4 GiB KV cache by default + 1.1 GiB of weights > 4Gi
    text = pod("[vllm, serve, Qwen/Qwen3-0.6B]", "{memory: 4Gi}", "vllm/vllm-openai-cpu:v0.10.1.1")
    text = text.replace("    args:", "    command:")
    assert [v for *_, v in found(text)] == ["5.1 GiB>4.0 GiB"]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod(TP4_70B, "{nvidia.com/gpu: 4, memory: 16Gi}"),  # exactly the swap space: not below
    pod(TP4_70B, "{nvidia.com/gpu: 4}", requests="{memory: 4Gi}"),  # a request never OOM-kills
    pod(TP4_70B.replace("70B", "70B").replace("'4']", "'4', --swap-space, '0']")),  # no swap
    pod(TP4_70B, image="vllm/vllm-openai:v0.8.5"),  # V1 by default: no swap allocated
    pod(TP4_70B, image="vllm/vllm-openai:v0.11.0", env="[{name: VLLM_USE_V1, value: '0'}]"),  # V0 gone
    pod(TP4_70B, image="vllm/vllm-openai:latest"),  # unknown release: newest assumed, V1
    pod("[--model, meta-llama/Llama-3.1-8B-Instruct, --swap-space, $(SWAP)]", "{nvidia.com/gpu: 1, memory: 8Gi}"),
    pod(TP4_70B, "{memory: 12Gi}"),  # no GPU request: ranks per pod unknown (multi-node groups)
    pod(TP4_70B, "{nvidia.com/gpu: 4, memory: x}"),  # not a quantity
    # --cpu-offload-gb with a model not in the catalog: the offloaded size is unknown
    pod("[acme/unknown-model, --cpu-offload-gb, '40']", "{nvidia.com/gpu: 1, memory: 8Gi}",
        "vllm/vllm-openai:v0.29.0"),
    # a GPU model of any size: safetensors files are mapped, nothing counted
    pod("[meta-llama/Llama-3.1-405B-Instruct, -tp, '8']", "{nvidia.com/gpu: 8, memory: 16Gi}",
        "vllm/vllm-openai:v0.29.0"),
    # CPU build, unknown model, default KV cache on 0.29.0 (half the node's memory: unknown)
    pod("[acme/unknown-model]", "{memory: 1Gi}", CPU),
    # CPU build, the KV size from a Secret
    pod("[Qwen/Qwen3-0.6B]", "{memory: 2Gi}", CPU,
        "[{name: VLLM_CPU_KVCACHE_SPACE, valueFrom: {secretKeyRef: {name: s, key: k}}}]"),
    # not vLLM
    pod("[--model, x]", "{nvidia.com/gpu: 4, memory: 1Gi}", "nvcr.io/nvidia/tritonserver:24.08-py3"),
    # a TPU, Neuron or Gaudi worker: the swap-space fact was read from the CUDA/ROCm worker only
    pod(TP4_70B, "{google.com/tpu: 4, memory: 12Gi}"),
    pod(TP4_70B, "{aws.amazon.com/neuron: 4, memory: 12Gi}"),
])
def test_does_not_catch(text):
    assert lint(text) == []


def test_serving_runtime_defaults_are_not_judged():
    text = """apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm-runtime}
spec:
  supportedModelFormats: [{name: huggingface}]
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.6.3
    args: [--model, meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size, "4"]
    resources:
      limits: {nvidia.com/gpu: 4, memory: 12Gi}
"""
    assert lint(text) == []


def test_amd_gpus_count_like_nvidia():
    assert [v for *_, v in found(pod(TP4_70B, "{amd.com/gpu: 4, memory: 12Gi}"))] == ["16.0 GiB>12.0 GiB"]


def test_compose_is_not_checked():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.6.3
    command: [--model, meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size, "4"]
    mem_limit: 8g
    deploy:
      resources:
        limits: {memory: 8G}
"""
    assert lint(text, "compose.yaml") == []


def test_audited_chapter_is_silent():
    from vllmlint.engine import Linter

    linter = Linter(LintOptions(select=["VL705"]))
    for path in sorted((ROOT / "fixtures" / "audited").glob("*.yaml")):
        linter.add_file(path, path.name)
    assert linter.run().findings == []


# --- a GPU container with no memory request or limit: nothing reserves its RAM (info) ------------------------
APRIL = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm-inference}
spec:
  selector: {matchLabels: {app: vllm-inference}}
  template:
    metadata: {labels: {app: vllm-inference}}
    spec:
      containers:
      - name: vllm-server
        image: vllm/vllm-openai:v0.29.0
        args: [meta-llama/Llama-3.1-8B-Instruct]
        resources:
          limits:
            nvidia.com/gpu: 1%s
"""


def test_gpu_container_without_memory_request_or_limit_is_an_info():
    # catches: the April chapter's container, whose resources name only the GPU.
    (finding,) = lint(APRIL % "")
    assert (finding.span.line, finding.span.col, finding.severity) == (15, 29, Severity.INFO)
    assert finding.value == "no-memory-request"
    assert finding.message.startswith("Request memory (and CPU) for container vllm-server")
    assert "BestEffort" in finding.message


def test_cpu_request_alone_still_leaves_memory_unreserved():
    # catches: a CPU request makes the pod Burstable, but memory is still unreserved.
    (finding,) = lint(APRIL % "\n          requests: {cpu: '4'}")
    assert finding.span.line == 15 and finding.message.startswith("Request memory for container vllm-server")
    assert "BestEffort" not in finding.message


def test_a_memory_request_or_limit_is_enough():
    # does not catch: memory requested (or limited: the request defaults to the limit).
    assert lint(APRIL % "\n          requests: {memory: 16Gi}") == []
    assert lint(APRIL % "\n            memory: 16Gi") == []


def test_a_limitrange_in_the_run_may_fill_it_in():
    # does not catch: a LimitRange gives containers without a request its default.
    limit_range = "---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults}\nspec:\n  limits:\n" \
                  "  - type: Container\n    defaultRequest: {memory: 8Gi}\n"
    assert lint(APRIL % "" + limit_range) == []


def test_no_gpu_requested_or_gpu_from_elsewhere_is_left_alone():
    # does not catch: no GPU in the container's resources (VL704's case), or a Compose service.
    assert lint(APRIL.replace("        resources:\n          limits:\n            nvidia.com/gpu: 1%s\n", "")) == []
    compose = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.29.0\n    command: [Qwen/Qwen3-8B]\n" \
              "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}\n"
    assert lint(compose, "compose.yaml") == []


def test_a_nameless_container_is_named_by_its_place():
    (finding,) = lint(APRIL.replace("      - name: vllm-server\n        image:", "      - image:") % "")
    assert finding.message.startswith("Request memory (and CPU) for container containers[0]:")
