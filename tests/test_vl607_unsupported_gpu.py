"""VL607 unsupported-gpu, the issue-10 cases: --dtype auto with a bf16 checkpoint before the fp16 fallback,
the float32 fallback of model types vLLM refuses in float16 (and its weight in the capacity estimate),
--dtype half for them, quantization kernels below their minimum compute capability. Positions pinned."""
import json

import pytest

from vllmlint.capacity.estimate import estimate, min_capability, resolved_dtype
from vllmlint.capacity.names import resolve_model
from vllmlint.capacity.specs import find_gpu, model_type_of, vllm_gpu_support
from vllmlint.data import schemas_dir
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def lint(text, codes=("VL607",)):
    result = lint_text(text, "example.yaml", LintOptions(select=list(codes)))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code in codes]


def found(text, codes=("VL607",)):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, codes)]


def deployment(accelerator, image, args):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: {accelerator}}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:{image}
        args: {args}
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


T4, V100, L4, A100 = "nvidia-tesla-t4", "nvidia-tesla-v100", "nvidia-l4", "nvidia-a100-80gb"


def test_data_matches_its_schema():
    import jsonschema

    schema = json.loads((schemas_dir() / "vllm-gpu-support.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(vllm_gpu_support()))
    assert not errors, [e.message for e in errors]


# --- --dtype auto with a bfloat16 checkpoint --------------------------------------------------------
@pytest.mark.parametrize("image", ["v0.6.4.post1", "v0.7.3", "v0.8.5"])
def test_auto_bf16_before_the_fallback(image):
    text = deployment(T4, image, "[--model, Qwen/Qwen2.5-3B-Instruct]")
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == \
        (13, 25, Severity.ERROR, "bf16-auto:T4")
    assert "Add --dtype half" in finding.message and "only 0.9.0 and later fall back" in finding.message


def test_auto_bf16_points_at_an_explicit_auto():
    assert found(deployment(V100, "v0.8.5", "[--model, Qwen/Qwen2.5-3B-Instruct, --dtype, auto]")) == \
        [(13, 60, Severity.ERROR, "bf16-auto:V100-16GB")]


@pytest.mark.parametrize("accelerator, image, args", [
    (T4, "v0.9.0", "[--model, Qwen/Qwen2.5-3B-Instruct]"),   # falls back to float16 by itself
    (T4, "v0.9.2", "[--model, Qwen/Qwen2.5-3B-Instruct]"),
    (T4, "latest", "[Qwen/Qwen2.5-3B-Instruct]"),             # the newest release
    (T4, "v0.8.5", "[--model, Qwen/Qwen2.5-3B-Instruct, --dtype, half]"),
    (L4, "v0.8.5", "[--model, Qwen/Qwen2.5-3B-Instruct]"),    # has bfloat16
    (T4, "v0.8.5", "[--model, Qwen/Qwen2.5-7B-Instruct-AWQ]"),  # a quantized checkpoint: float16 configs
    (T4, "v0.8.5", "[--model, some-org/unknown-model]"),      # not in the catalog
    (T4, "v0.8.5", "[--model, Qwen/Qwen2.5-3B-Instruct, --dtype, $(DTYPE)]"),
    # the checkpoint's torch_dtype is not known: a local path or a variant matched by name may be a float16
    # conversion (people convert for GPUs without bfloat16)
    (T4, "v0.8.5", "[--model, /models/Llama-3.2-1B-Instruct]"),
    (T4, "v0.8.5", "[--model, some-org/Llama-3.2-1B-Instruct]"),
    (T4, "v0.8.5", "[/mnt/weights/Qwen2.5-3B-Instruct]"),
])
def test_auto_bf16_silent(accelerator, image, args):
    assert lint(deployment(accelerator, image, args)) == []


@pytest.mark.parametrize("args, col", [
    ("[--model, meta-llama/Llama-3.2-1B-Instruct]", 25),    # the catalog entry's own id
    ("[--model, meta-llama/llama-3.2-1b-instruct]", 25),    # ... case-insensitively, like the resolver
    ("[--model, meta-llama/Meta-Llama-3.1-8B-Instruct]", 25),  # an alias (the repository's old name)
])
def test_auto_bf16_for_the_catalogued_repository(args, col):
    assert found(deployment(T4, "v0.8.5", args)) == [(13, col, Severity.ERROR, "bf16-auto:T4")]


def _config_run(tmp_path, torch_dtype):
    from vllmlint.engine import lint_paths

    folder = tmp_path / "weights" / "Llama-3.2-1B-Instruct"
    folder.mkdir(parents=True)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
              "intermediate_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8,
              "num_hidden_layers": 16, "vocab_size": 128256, "max_position_embeddings": 131072}
    if torch_dtype is not None:
        config["torch_dtype"] = torch_dtype
    (folder / "config.json").write_text(json.dumps(config))
    (tmp_path / "deploy.yaml").write_text(deployment(T4, "v0.8.5", "[--model, /models/Llama-3.2-1B-Instruct]"))
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL607"]))
    return [(f.span.line, f.span.col, f.severity, f.value) for f in result.findings if f.code == "VL607"]


def test_auto_bf16_from_a_config_json_of_the_run(tmp_path):
    assert _config_run(tmp_path, "bfloat16") == [(13, 25, Severity.ERROR, "bf16-auto:T4")]


@pytest.mark.parametrize("torch_dtype", ["float16", None])  # converted; or no torch_dtype (vLLM: float32)
def test_auto_bf16_config_json_silent(tmp_path, torch_dtype):
    assert _config_run(tmp_path, torch_dtype) == []


def test_checkpoint_dtype_is_per_repository():
    from vllmlint.capacity.hfconfig import model_from_config_json
    from vllmlint.capacity.specs import checkpoint_torch_dtype

    llama = resolve_model("meta-llama/Llama-3.2-1B-Instruct").model
    assert checkpoint_torch_dtype(llama, "meta-llama/Llama-3.2-1B-Instruct", False) == "bfloat16"
    assert checkpoint_torch_dtype(llama, "/models/Llama-3.2-1B-Instruct", False) is None
    assert checkpoint_torch_dtype(llama, "unsloth/Llama-3.2-1B-Instruct", False) is None
    text_only = {"architectures": ["X"], "model_type": "x", "hidden_size": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "vocab_size": 100}
    assert model_from_config_json({**text_only, "torch_dtype": "float16"}).torch_dtype_given
    assert not model_from_config_json(text_only).torch_dtype_given
    # a composite config: what counts is the language model's own torch_dtype
    assert not model_from_config_json({"torch_dtype": "bfloat16", "text_config": text_only}).torch_dtype_given


# --- model types vLLM refuses in float16 ------------------------------------------------------------
def test_half_refused_on_any_gpu():
    (finding,) = lint(deployment(A100, "v0.12.0", "[google/gemma-2-9b-it, --dtype, half]"))
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == \
        (13, 47, Severity.ERROR, "half:gemma2")
    assert "does not support float16" in finding.message


def test_half_refused_without_a_known_gpu():
    text = deployment(A100, "v0.12.0", "[google/gemma-2-2b-it, --dtype, float16]").replace(
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-a100-80gb}\n", "")
    assert found(text) == [(12, 47, Severity.ERROR, "half:gemma2")]


@pytest.mark.parametrize("image, args", [
    ("v0.9.0", "[--model, google/gemma-2-9b-it, --dtype, half]"),  # before _FLOAT16_NOT_SUPPORTED_MODELS
    ("v0.12.0", "[Qwen/Qwen2.5-7B-Instruct, --dtype, half]"),
    ("v0.12.0", "[google/gemma-2-9b-it, --dtype, bfloat16]"),
    ("v0.12.0", "[google/gemma-2-9b-it]"),
])
def test_half_silent(image, args):
    assert lint(deployment(A100, image, args)) == []


def test_float32_fallback_is_info_and_counts_in_the_estimate():
    (finding,) = lint(deployment(T4, "v0.12.0", "[google/gemma-2-2b-it]"))
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == \
        (13, 16, Severity.INFO, "fp32-fallback:T4")
    gemma = resolve_model("google/gemma-2-9b-it").model
    assert resolved_dtype(gemma, find_gpu("T4"), "auto", "0.12.0") == "float32"
    assert resolved_dtype(gemma, find_gpu("L4"), "auto", "0.12.0") == "auto"
    assert resolved_dtype(gemma, find_gpu("T4"), "auto", "0.9.0") == "auto"
    assert resolved_dtype(gemma, find_gpu("T4"), "half", "0.12.0") == "half"
    t4_fp32 = estimate(gemma, "T4", vllm_version="0.12.0", tensor_parallel_size=2)
    t4_fp16 = estimate(gemma, "T4", vllm_version="0.9.0", tensor_parallel_size=2)
    assert t4_fp32.weights_bytes == pytest.approx(2 * t4_fp16.weights_bytes, rel=0.01)


def test_float32_fallback_makes_the_model_not_fit():
    # gemma-2-9b on one T4: 17 GiB in float16 already does not fit; at TP 2 it fits in float16 (0.9.0)
    # and not in float32 (0.12.0), which VL601 reports.
    args = "[google/gemma-2-9b-it, --tensor-parallel-size, '2', --max-model-len, '4096']"
    two = lambda image: deployment(T4, image, args).replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 2")  # noqa: E731
    assert lint(two("v0.9.0"), ("VL601",)) == []
    (finding,) = lint(two("v0.12.0"), ("VL601",))
    assert "(float32: vLLM refuses float16 for this model and the GPU has no bfloat16, TP 2)" in finding.message


@pytest.mark.parametrize("args, col", [
    # an architecture fact holds for a local path or a fine-tune matched by name: vLLM decides by
    # config.model_type, whatever the checkpoint's torch_dtype (0.9.2 vllm/config.py lines 3221-3240, 3285-3305)
    ("[--model, /models/gemma-2-2b-it]", 25),
    ("[--model, some-org/gemma-2-2b-it]", 25),
])
def test_float32_fallback_for_a_name_matched_architecture(args, col):
    assert found(deployment(T4, "v0.12.0", args)) == [(13, col, Severity.INFO, "fp32-fallback:T4")]


def test_half_refused_for_a_local_path_matched_by_name():
    assert found(deployment(A100, "v0.12.0", "[/models/gemma-2-9b-it, --dtype, half]")) == \
        [(13, 48, Severity.ERROR, "half:gemma2")]


def test_model_type_from_architecture():
    assert model_type_of(resolve_model("google/gemma-2-2b-it").model) == "gemma2"
    assert model_type_of(resolve_model("Qwen/Qwen2.5-7B-Instruct").model) is None


# --- quantization kernels ----------------------------------------------------------------------------
@pytest.mark.parametrize("image, model, method, col", [
    ("v0.10.1", "Qwen/Qwen2.5-7B-Instruct-AWQ", "awq_marlin", 62),
    ("v0.12.0", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "gptq_marlin", 68),
    ("v0.6.4.post1", "Qwen/Qwen2.5-7B-Instruct-AWQ", "marlin", 62),
])
def test_marlin_below_8(image, model, method, col):
    args = f"[{model}, --quantization, {method}]"
    assert found(deployment(T4, image, args)) == [(13, col, Severity.ERROR, f"{method}:T4")]


def test_a_method_the_checkpoint_does_not_load_is_vl716s():
    # Qwen's AWQ copy is catalogued with quant_method awq: vLLM stops on the mismatch with gptq_marlin before it
    # compares the GPU's capability, so VL607 is silent and VL716 reports it.
    args = "[Qwen/Qwen2.5-7B-Instruct-AWQ, --quantization, gptq_marlin]"
    assert found(deployment(T4, "v0.12.0", args)) == []
    assert [(f.code, f.value) for f in lint(deployment(T4, "v0.12.0", args), codes=("VL607", "VL716"))] \
        == [("VL716", "gptq_marlin:awq")]


def test_awq_checkpoint_on_a_v100():
    (finding,) = lint(deployment(V100, "v0.9.2", "[--model, Qwen/Qwen2.5-7B-Instruct-AWQ]"))
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == \
        (13, 25, Severity.ERROR, "awq:V100-16GB")
    assert "Minimum capability: 75. Current capability: 70." in finding.message


@pytest.mark.parametrize("accelerator, image, args", [
    (T4, "v0.14.1", "[Qwen/Qwen2.5-7B-Instruct-AWQ, --quantization, awq_marlin]"),  # 7.5 from 0.14.1
    (T4, "v0.13.0", "[Qwen/Qwen2.5-7B-Instruct-AWQ, --quantization, awq_marlin]"),  # not read: silent
    (T4, "v0.12.0", "[Qwen/Qwen2.5-7B-Instruct-AWQ, --quantization, awq]"),
    (T4, "v0.12.0", "[Qwen/Qwen2.5-7B-Instruct-AWQ]"),
    (L4, "v0.12.0", "[Qwen/Qwen2.5-7B-Instruct-AWQ, --quantization, awq_marlin]"),
    (T4, "v0.29.0", "[Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4, --quantization, gptq_marlin]"),
    (V100, "v0.9.2", "[--model, Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4, --quantization, gptq]"),
])
def test_kernels_silent(accelerator, image, args):
    assert lint(deployment(accelerator, image, args)) == []


def test_v100_below_the_floor_gets_only_the_floor_finding():
    text = deployment(V100, "v0.29.0", "[Qwen/Qwen2.5-7B-Instruct-AWQ, --dtype, half]")
    assert [v for *_, v in found(text)] == ["cc:V100-16GB"]


def test_fp8_weights_on_a_t4_per_release():
    old = lint(deployment(T4, "v0.12.0", "[Qwen/Qwen3-8B, --quantization, fp8]"))
    assert [(f.span.col, f.severity, f.value) for f in old] == [(31, Severity.ERROR, "fp8:T4")]
    assert "compute capability 8.0 or newer in vLLM 0.12.0" in old[0].message
    new = lint(deployment(T4, "v0.29.0", "[Qwen/Qwen3-8B, --quantization, fp8]"))
    assert [(f.span.col, f.severity, f.value) for f in new] == [(31, Severity.INFO, "fp8-weight-only:T4")]


def test_min_capability_data():
    assert min_capability("awq_marlin", "0.12.0") == (8, 0)
    assert min_capability("awq_marlin", "0.14.1") == (7, 5)
    assert min_capability("awq_marlin", "0.13.0") is None
    assert min_capability("gptq_marlin", "0.22.0") == (6, 0)
    assert min_capability("awq", None) == (7, 5)
    assert min_capability("bitsandbytes", "0.29.0") is None


def test_a_method_the_checkpoint_does_not_hold_is_vl716s():
    # vLLM reads the method's config file before it compares capabilities (0.10.1.1 vllm/config/__init__.py
    # lines 3447-3456: get_quant_config first): an unquantized checkpoint stops on "Cannot find the config file".
    text = deployment(T4, "v0.10.1", "[--model, Qwen/Qwen2.5-7B-Instruct, --quantization, awq_marlin]")
    assert found(text) == []
    assert found(text, codes=("VL716",)) == [(13, 67, Severity.ERROR, "awq_marlin:unquantized")]
    quantized = deployment(T4, "v0.10.1", "[--model, Qwen/Qwen2.5-7B-Instruct-AWQ, --quantization, awq_marlin]")
    assert found(quantized) == [(13, 71, Severity.ERROR, "awq_marlin:T4")]
    assert min_capability("bitsandbytes", "0.10.1") == (7, 0)


# --- a CUDA build on Neuron instances (issue 26: trn1/inf2 in the instance catalog) ------------------------
def neuron_pod(selector, pool_values=None, image="vllm/vllm-openai:v0.29.0"):
    pool = "" if pool_values is None else f"""apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: accel}}
spec:
  template:
    metadata:
      labels: {{node-type: accel}}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: accel}}
      requirements:
      - {{key: node.kubernetes.io/instance-type, operator: In, values: {pool_values}}}
---
"""
    return pool + f"""apiVersion: apps/v1
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
        image: {image}
        args: [meta-llama/Llama-3.1-8B-Instruct]
"""


@pytest.mark.parametrize("selector", ["{node.kubernetes.io/instance-type: trn1.32xlarge}",
                                      "{node.kubernetes.io/instance-type: inf2.48xlarge}",
                                      "{karpenter.k8s.aws/instance-family: trn1}",
                                      "{karpenter.k8s.aws/instance-accelerator-name: inferentia2}"])
def test_catches_a_cuda_image_selecting_neuron_instances(selector):
    [finding] = lint(neuron_pod(selector))
    assert (finding.span.line, finding.span.col, finding.severity) == (12, 16, Severity.ERROR)
    assert "AWS Neuron devices" in finding.message and "no NVIDIA GPU" in finding.message


def test_catches_a_cuda_image_on_a_pool_of_neuron_instances():
    [finding] = lint(neuron_pod("{node-type: accel}", "[trn1.32xlarge, inf2.48xlarge]"))
    assert (finding.span.line, finding.span.col) == (24, 16)
    assert "It lands on NodePool accel, whose instance types are trn1.32xlarge, inf2.48xlarge, which have AWS " \
           "Neuron devices (inferentia2, trainium)" in finding.message


@pytest.mark.parametrize("selector, pool", [
    ("{node-type: accel}", "[trn1.32xlarge, p4d.24xlarge]"),  # the pool may launch a GPU type
    ("{node.kubernetes.io/instance-type: g5.12xlarge}", None),
    ("{karpenter.k8s.aws/instance-family: p5}", None),
])
def test_does_not_catch_a_cuda_image_that_may_get_a_gpu(selector, pool):
    assert lint(neuron_pod(selector, pool)) == []


def test_does_not_catch_a_neuron_image_on_trn1():
    text = neuron_pod("{node.kubernetes.io/instance-type: trn1.32xlarge}",
                      image="public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py310-sdk2.25.0-ubuntu22.04")
    assert lint(text) == []
