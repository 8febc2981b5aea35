"""VL720 model-too-new, its data (data/model-registry.yaml) and the tool that writes it."""
import json

import jsonschema
import pytest

from vllmlint.capacity.specs import models
from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, lint_paths, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm import catalog, model_registry
from vllmlint.vllm.release import version_key
from vllmlint_dev.model_registry import build, read_registry, render


def lint(text, filename="example.yaml", **options):
    result = lint_text(text, filename, LintOptions(select=["VL720"], **options))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL720"]


def found(text, **options):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, **options)]


def deployment(image="vllm/vllm-openai:v0.9.2", args="[--model, Qwen/Qwen3-Next-80B-A3B-Instruct]", extra=""):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: llm}}
spec:
  selector: {{matchLabels: {{app: llm}}}}
  template:
    metadata: {{labels: {{app: llm}}}}
    spec:
      containers:
      - name: vllm
        image: {image}
        args: {args}{extra}
"""


# --- catches -----------------------------------------------------------------------------------------
def test_catches_qwen3_next_on_the_0_9_2_image():
    assert found(deployment()) == [(12, 25, Severity.ERROR, "Qwen3NextForCausalLM@0.9.2")]
    (finding,) = lint(deployment())
    assert finding.message.startswith("Qwen3NextForCausalLM needs vLLM >= 0.10.2; the image runs 0.9.2: upgrade "
                                      "the image to 0.10.2 or later. Deployment llm runs vLLM 0.9.2 (image tag "
                                      "vllm/vllm-openai:v0.9.2), whose model registry has no Qwen3NextForCausalLM")
    assert "transformers 4.57.0" in finding.message and "are not supported for now" in finding.message


def test_catches_qwen3_next_on_the_last_image_before_it():
    assert found(deployment(image="vllm/vllm-openai:v0.10.1.1")) == [
        (12, 25, Severity.ERROR, "Qwen3NextForCausalLM@0.10.1.1")]


def test_catches_qwen3_on_a_release_without_transformers_backend():
    text = deployment(image="vllm/vllm-openai:v0.6.4.post1", args="[--model, Qwen/Qwen3-8B, --port, '8000']")
    assert found(text) == [(12, 25, Severity.ERROR, "Qwen3ForCausalLM@0.6.4.post1")]
    (finding,) = lint(text)
    assert "needs vLLM >= 0.8.4" in finding.message and "has no Transformers backend" in finding.message


def test_catches_a_pip_pin_without_transformers_backend():
    text = """apiVersion: batch/v1
kind: Job
metadata: {name: bench}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: vllm
        image: python:3.11
        command: [bash, -c, "pip install vllm==0.6.6.post1 && vllm serve Qwen/Qwen3-8B --port 8000"]
"""
    assert found(text) == [(11, 74, Severity.ERROR, "Qwen3ForCausalLM@0.6.6.post1")]


def test_catches_the_release_given_on_the_command_line():
    assert found("vllm serve google/gemma-3-27b-it --tensor-parallel-size 2\n", filename="serve.sh",
                 vllm_version="0.7.1") == [(1, 12, Severity.ERROR, "Gemma3ForConditionalGeneration@0.7.1")]


def test_catches_the_fallback_turned_off():
    text = deployment(args="[--model, openai/gpt-oss-20b, --model-impl, vllm]")
    assert found(text) == [(12, 25, Severity.ERROR, "GptOssForCausalLM@0.9.2")]
    assert "`--model-impl vllm` turns the Transformers fallback off" in lint(text)[0].message


def test_catches_a_config_json_of_the_run(tmp_path):
    folder = tmp_path / "models" / "qwen3-next-ft"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(_QWEN3_NEXT_CONFIG))
    (tmp_path / "deploy.yaml").write_text(deployment(image="vllm/vllm-openai:v0.10.1.1",
                                                     args="[--model, /models/qwen3-next-ft]"))
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL720"]))
    assert [(f.span.line, f.span.col, f.value) for f in result.findings] == [
        (12, 25, "Qwen3NextForCausalLM@0.10.1.1")]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.10.2", "vllm/vllm-openai:v0.33.0",
                                   "vllm/vllm-openai:latest", "vllm/vllm-openai:nightly",
                                   "vllm/vllm-openai:v0.5.5"])
def test_does_not_catch_a_release_that_has_it_or_an_unknown_release(image):
    assert found(deployment(image=image)) == []


def test_does_not_catch_a_tpu_image_but_catches_rocm():
    command = "[vllm, serve, Qwen/Qwen3-Next-80B-A3B-Instruct]"
    tpu = deployment(image="vllm/vllm-tpu:v0.6.4.post1", args=command).replace("args:", "command:")
    rocm = deployment(image="vllm/vllm-openai-rocm:v0.6.4.post1", args=command).replace("args:", "command:")
    assert found(tpu) == []  # its platform plugin brings models of its own
    assert found(rocm) == [(12, 32, Severity.ERROR, "Qwen3NextForCausalLM@0.6.4.post1")]


def test_does_not_catch_a_pip_pin_with_a_transformers_backend():
    text = """apiVersion: batch/v1
kind: Job
metadata: {name: bench}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: vllm
        image: python:3.11
        command: [bash, -c, "pip install vllm==0.9.2 && vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct"]
"""
    assert found(text) == []  # pip may bring a transformers that defines Qwen3NextForCausalLM


def test_does_not_catch_packages_installed_over_the_image():
    args = '[bash, -c, "pip install -U transformers && vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct"]'
    assert found(deployment(args=args).replace("args:", "command:")) == []


@pytest.mark.parametrize("extra_args", [
    "--hf-overrides, '{\"architectures\": [\"Qwen3MoeForCausalLM\"]}'",
    "--trust-remote-code",
    "--model-impl, $(IMPL)",
    "--model-impl, terratorch",
    "--revision, refs/pr/3",
    "--config, /etc/vllm/config.yaml",
])
def test_does_not_catch_when_the_config_or_the_fallback_is_not_known(extra_args):
    assert found(deployment(args=f"[--model, Qwen/Qwen3-Next-80B-A3B-Instruct, {extra_args}]")) == []


def test_does_not_catch_an_unknown_model_or_a_model_the_release_has():
    assert found(deployment(image="vllm/vllm-openai:v0.6.4.post1", args="[--model, acme/chat-13b]")) == []
    assert found(deployment(image="vllm/vllm-openai:v0.6.4.post1", args="[--model, Qwen/Qwen2.5-7B-Instruct]")) == []


def test_does_not_catch_the_assumed_release():
    assert found("vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct\n", filename="serve.sh") == []


def test_does_not_catch_a_config_json_with_repository_code(tmp_path):
    folder = tmp_path / "models" / "qwen3-next-ft"
    folder.mkdir(parents=True)
    config = dict(_QWEN3_NEXT_CONFIG, auto_map={"AutoModelForCausalLM": "modeling_qwen3_next.Qwen3NextForCausalLM"})
    (folder / "config.json").write_text(json.dumps(config))
    (tmp_path / "deploy.yaml").write_text(deployment(args="[--model, /models/qwen3-next-ft]"))
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL720"]))
    assert result.findings == []


@pytest.mark.parametrize("architectures,image", [
    (["Qwen3ForSequenceClassification"], "v0.8.5"),  # first in 0.9.2; Qwen3ForCausalLM is in 0.8.5's registry
    (["Qwen3NextForCausalLM", "Qwen2MoeForCausalLM"], "v0.6.4.post1"),  # vLLM takes the second one
])
def test_does_not_catch_a_relative_or_another_architecture_of_the_registry(tmp_path, architectures, image):
    folder = tmp_path / "models" / "ft"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(dict(_QWEN3_NEXT_CONFIG, architectures=architectures)))
    (tmp_path / "deploy.yaml").write_text(deployment(image=f"vllm/vllm-openai:{image}",
                                                     args="[--model, /models/ft, --model-impl, vllm]"))
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL720"]))
    assert result.findings == []


# --- the data ----------------------------------------------------------------------------------------
def _data():
    return load_yaml_data(knowledge_dir() / "model-registry.yaml")


def test_data_matches_its_schema():
    jsonschema.validate(_data(), json.loads((schemas_dir() / "model-registry.schema.json").read_text()))


def test_every_catalogued_release_from_0_6_4_was_read():
    read = set(model_registry.releases())
    assert {r for r in catalog.releases()} <= read
    assert model_registry.releases() == sorted(read, key=version_key)


def test_landmarks():
    assert model_registry.architecture("Qwen3NextForCausalLM").first == "0.10.2"
    assert model_registry.architecture("Qwen3NextForCausalLM").transformers == "4.57.0"
    assert model_registry.architecture("Qwen3ForCausalLM").first == "0.8.4"
    assert model_registry.backend_since() == "0.7.2"
    assert not model_registry.release("0.7.1").transformers_backend
    assert not model_registry.release("0.6.6.post1").transformers_backend
    assert model_registry.in_registry("LlamaForCausalLM", "0.6.3") is True
    assert model_registry.in_registry("LlamaForCausalLM", "0.34.0") is None  # not read
    assert model_registry.in_registry("Phi3SmallForCausalLM", "0.33.0") is False  # removed after 0.9.2


def test_the_catalogs_architecture_since_agrees():
    for model in models():
        facts = model.needs_trust_remote_code
        if facts is not None and facts.architecture_since:
            assert model_registry.architecture(model.architecture).first == facts.architecture_since, model.id


def test_every_catalogued_architecture_is_in_some_registry():
    for model in models():
        assert model_registry.architecture(model.architecture) is not None, model.id


def test_built_dates_grow_with_the_releases():
    dates = [model_registry.release(v).built for v in model_registry.releases()]
    assert dates[0] >= "2024-10-01" and dates[-1] < "2027-01-01"


# --- the tool ----------------------------------------------------------------------------------------
_REGISTRY_PY = '''
_TEXT_GENERATION_MODELS = {
    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),
    "MistralForCausalLM": ("llama", "LlamaForCausalLM"),
    "Qwen2ForCausalLM": ("qwen2", "Qwen2ForCausalLM"),
}
_EMBEDDING_MODELS = {
    **{
        k: (mod, arch) for k, (mod, arch) in _TEXT_GENERATION_MODELS.items()
        if arch == "LlamaForCausalLM"
    },
    "Qwen2Model": ("qwen2", "Qwen2EmbeddingModel"),
}
_TRANSFORMERS_MODELS = {
    "TransformersForCausalLM": ("transformers", "TransformersForCausalLM"),
}
_VLLM_MODELS = {
    **_TEXT_GENERATION_MODELS,
    **_EMBEDDING_MODELS,
    **_TRANSFORMERS_MODELS,
}
'''


def test_the_tool_reads_a_registry_with_a_comprehension():
    facts = read_registry(_REGISTRY_PY)
    assert facts["models"] == {"LlamaForCausalLM": "_TEXT_GENERATION_MODELS",
                               "MistralForCausalLM": "_TEXT_GENERATION_MODELS",
                               "Qwen2ForCausalLM": "_TEXT_GENERATION_MODELS", "Qwen2Model": "_EMBEDDING_MODELS",
                               "TransformersForCausalLM": "_TRANSFORMERS_MODELS"}
    assert facts["backend"] == ["TransformersForCausalLM"] and facts["vllm_models_lines"] == [17, 21]


def test_the_tool_refuses_what_it_cannot_read():
    with pytest.raises(ValueError, match="expands something unknown"):
        read_registry("_VLLM_MODELS = {**make_models()}\n")
    with pytest.raises(ValueError, match="registry dicts this tool does not know"):
        read_registry('_NEW_MODELS = {"X": ("x", "X")}\n_VLLM_MODELS = {**_NEW_MODELS}\n')


def test_the_tool_writes_first_last_and_missing(tmp_path):
    old = dict(read_registry(_REGISTRY_PY), built="2024-10-01")
    new = dict(read_registry(_REGISTRY_PY.replace('"MistralForCausalLM"', '"Mistral3ForCausalLM"')), built="2024-11-01")
    vllm = {"0.6.3": old, "0.6.4": new, "0.6.5": old}
    transformers = {"4.46.0": {"classes": ["Qwen2ForCausalLM"], "published": "2024-10-20"},
                    "4.45.0": {"classes": ["Qwen2ForCausalLM", "LlamaForCausalLM"], "published": "2024-09-25"}}
    (tmp_path / "model-registry.yaml").write_text(render(build(vllm, transformers)))
    doc = load_yaml_data(tmp_path / "model-registry.yaml")
    jsonschema.validate(doc, json.loads((schemas_dir() / "model-registry.schema.json").read_text()))
    assert doc["architectures"]["MistralForCausalLM"] == {"first": "0.6.3", "missing": ["0.6.4"],
                                                          "kind": "text-generation"}
    assert doc["architectures"]["Mistral3ForCausalLM"] == {"first": "0.6.4", "last": "0.6.4",
                                                           "kind": "text-generation"}
    assert doc["architectures"]["LlamaForCausalLM"]["transformers"] == "4.45.0"
    assert [r["transformers_backend"] for r in doc["releases"]] == [True, True, True]


_QWEN3_NEXT_CONFIG = {
    "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
    "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
    "intermediate_size": 5120, "vocab_size": 151936, "max_position_embeddings": 262144,
    "torch_dtype": "bfloat16", "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512, "full_attention_interval": 4, "linear_num_key_heads": 16,
    "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
}


def test_catches_two_architectures_and_names_the_earliest_release(tmp_path):
    folder = tmp_path / "models" / "ft"
    folder.mkdir(parents=True)
    config = dict(_QWEN3_NEXT_CONFIG, architectures=["Qwen3NextForCausalLM", "Qwen3ForCausalLM"])
    (folder / "config.json").write_text(json.dumps(config))
    (tmp_path / "deploy.yaml").write_text(deployment(image="vllm/vllm-openai:v0.6.4.post1", args="[--model, /models/ft]"))
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL720"]))
    assert [(f.span.line, f.span.col, f.value) for f in result.findings] == [(12, 25, "Qwen3ForCausalLM@0.6.4.post1")]
    assert result.findings[0].message.startswith("Qwen3ForCausalLM needs vLLM >= 0.8.4; the image runs 0.6.4.post1")


def test_the_data_file_is_as_the_tool_writes_it():
    path = knowledge_dir() / "model-registry.yaml"
    assert render(load_yaml_data(path)) == path.read_text(encoding="utf-8")  # not edited by hand
