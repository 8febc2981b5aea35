"""VL113 redundant-flag: `--enable-prefix-caching` / `--enable-chunked-prefill` where the release turns them on
by itself for the model (data/engine-defaults.yaml, read from each release's arg_utils.py and config/model.py)."""
import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from vllmlint.data import load_yaml_data
from vllmlint.engine import Linter, LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm import catalog

ROOT = Path(__file__).resolve().parent.parent


def deployment(args, image="vllm/vllm-openai:v0.29.0"):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: {image}
        args: {args}
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


def found(text, filename="deploy.yaml", version=None):
    result = lint_text(text, filename, LintOptions(select=["VL113"], vllm_version=version))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.value, f.severity) for f in result.findings]


QWEN35 = {"architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text", "num_hidden_layers": 32,
          "hidden_size": 4096, "intermediate_size": 12288, "num_attention_heads": 16, "num_key_value_heads": 4,
          "head_dim": 256, "vocab_size": 248320, "max_position_embeddings": 262144, "torch_dtype": "bfloat16",
          "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"] * 8,
          "linear_num_value_heads": 32, "linear_num_key_heads": 16, "linear_key_head_dim": 128,
          "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4}
NEMOTRON_H = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "num_hidden_layers": 52,
              "hidden_size": 2688, "intermediate_size": 1856, "num_attention_heads": 32, "num_key_value_heads": 2,
              "head_dim": 128, "vocab_size": 131072, "max_position_embeddings": 262144, "torch_dtype": "bfloat16",
              "hybrid_override_pattern": "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
              "mamba_num_heads": 64, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4}


def _local(config, args, tag="v0.29.0"):
    """A Deployment serving a local checkpoint whose config.json is in the run."""
    directory = args.strip("[").split(",")[0].rsplit("/", 1)[-1]
    linter = Linter(LintOptions(select=["VL113"]))
    linter.add_text(deployment(args, f"vllm/vllm-openai:{tag}"), "deploy.yaml")
    linter.add_text(json.dumps(config), f"{directory}/config.json", ".json")
    return [(f.path, f.span.line, f.span.col, f.value) for f in linter.run().findings]


def test_data_matches_its_schema():
    schema = json.loads((ROOT / "schemas" / "engine-defaults.schema.json").read_text())
    jsonschema.validate(load_yaml_data(ROOT / "data" / "engine-defaults.yaml"), schema)


def test_catalogs_leave_the_default_to_start_up():
    # The data exists because argparse says nothing: the catalogs record no default from 0.11.2 on. A release
    # whose catalog records a literal default would need the data re-read.
    for release in catalog.releases():
        if catalog.compare_versions(release, "0.11.2") < 0:
            continue
        for flag in ("--enable-prefix-caching", "--enable-chunked-prefill"):
            option = catalog.load(release).option(flag)
            assert option is not None and option.default is None, (release, flag)


# --- catches ---------------------------------------------------------------------------------------------
def test_catches_both_switches_of_the_chapter():
    text = deployment("[/models/llama-3.1-70b, --enable-prefix-caching, --enable-chunked-prefill]")
    assert found(text) == [(12, 39, "--enable-prefix-caching", Severity.INFO),
                           (12, 64, "--enable-chunked-prefill", Severity.INFO)]


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.11.2", "vllm/vllm-openai:v0.12.0", "vllm/vllm-openai:v0.20.2",
                                   "vllm/vllm-openai:v0.33.0", "vllm/vllm-openai:latest"])
def test_catches_on_every_v1_only_release(image):
    assert found(deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching]", image)) == [
        (12, 42, "--enable-prefix-caching", Severity.INFO)]


def test_catches_an_explicit_true_value():
    assert [f[2] for f in found(deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-chunked-prefill=true]"))] == [
        "--enable-chunked-prefill"]


def test_message_says_what_to_do_first():
    result = lint_text(deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching]"), "deploy.yaml",
                       LintOptions(select=["VL113"]))
    [finding] = result.findings
    assert finding.message.startswith("`--enable-prefix-caching` repeats the default: drop it. vLLM 0.29.0")
    assert "Qwen/Qwen2.5-7B-Instruct" in finding.message and "--no-enable-prefix-caching" in finding.message


def test_catches_prefix_caching_of_a_gated_deltanet_hybrid_from_0_28():
    # The Qwen3-Next recipe: `vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4 ...`.
    text = deployment("[Qwen/Qwen3-Next-80B-A3B-Instruct, --tensor-parallel-size, '4', --enable-prefix-caching]",
                      "vllm/vllm-openai:v0.28.0")
    assert found(text) == [(12, 79, "--enable-prefix-caching", Severity.INFO)]
    result = lint_text(text, "deploy.yaml", LintOptions(select=["VL113"]))
    assert "for a hybrid model (attention with Mamba or linear-attention layers) such as " \
           "Qwen/Qwen3-Next-80B-A3B-Instruct" in result.findings[0].message


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.28.0", "vllm/vllm-openai:v0.33.0", "vllm/vllm-openai:latest"])
def test_catches_both_switches_of_a_mamba_hybrid_from_0_28(image):
    text = deployment("[ai21labs/AI21-Jamba-1.5-Mini, --enable-prefix-caching, --enable-chunked-prefill]", image)
    assert found(text) == [(12, 46, "--enable-prefix-caching", Severity.INFO),
                           (12, 71, "--enable-chunked-prefill", Severity.INFO)]


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.11.2", "vllm/vllm-openai:v0.25.1", "vllm/vllm-openai:v0.27.1"])
def test_catches_chunked_prefill_of_a_hybrid_on_every_v1_only_release(image):
    text = deployment("[Qwen/Qwen3-Next-80B-A3B-Instruct, --enable-prefix-caching, --enable-chunked-prefill]", image)
    assert found(text) == [(12, 75, "--enable-chunked-prefill", Severity.INFO)]


def test_catches_a_local_hybrid_checkpoint_by_its_architecture():
    # Qwen3.5's text-only architecture read from the run's config.json: a hybrid vLLM lists as IsHybrid.
    assert _local(QWEN35, "[/models/qwen3.5-9b-text, --enable-prefix-caching]", "v0.28.0") == [
        ("deploy.yaml", 12, 41, "--enable-prefix-caching")]
    assert _local(QWEN35, "[/models/qwen3.5-9b-text, --enable-prefix-caching]", "v0.27.1") == []


# --- does not catch --------------------------------------------------------------------------------------
@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.6.4.post1", "vllm/vllm-openai:v0.8.5.post1",
                                   "vllm/vllm-openai:v0.10.2"])
def test_does_not_catch_before_v1_only(image):
    assert found(deployment("[--model, Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching]", image)) == []


def test_does_not_catch_after_the_code_read():
    text = deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching]", "vllm/vllm-openai:v0.34.0")
    assert found(text) == []


def test_does_not_catch_unknown_models():
    assert found(deployment("[/models/house-model, --enable-prefix-caching, --enable-chunked-prefill]")) == []


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.11.2", "vllm/vllm-openai:v0.20.2",
                                   "vllm/vllm-openai:v0.25.1", "vllm/vllm-openai:v0.26.0", "vllm/vllm-openai:v0.27.1"])
def test_does_not_catch_prefix_caching_of_a_hybrid_before_0_28(image):
    # Unsupported (0.11.2-0.25.x) or supported but opt-in (0.26.0, 0.27.1): the flag turns it on.
    for model in ("Qwen/Qwen3-Next-80B-A3B-Instruct", "ai21labs/AI21-Jamba-1.5-Mini"):
        assert found(deployment(f"[{model}, --enable-prefix-caching]", image)) == []


def test_does_not_catch_a_listed_hybrid_outside_the_releases_read():
    # Qwen3_5ForCausalLM is first read in 0.27.1; on 0.26.0 the rule does not know it, not even for chunked prefill.
    assert _local(QWEN35, "[/models/qwen3.5-9b-text, --enable-chunked-prefill]", "v0.26.0") == []


def test_does_not_know_a_pure_mamba_model():
    # Attention-free (IsAttentionFree, not listed as hybrid): prefix caching off by default; the model is neither
    # a decoder nor a listed hybrid, so no period applies.
    from types import SimpleNamespace

    from vllmlint.capacity.specs import models
    from vllmlint.checks.vl113_redundant_flag import _model_kind, engine_defaults

    jamba = next(m for m in models() if m.id == "ai21labs/AI21-Jamba-1.5-Mini")
    data = engine_defaults()
    work = SimpleNamespace(config_match=None, model=jamba, model_name=jamba.id)
    assert _model_kind(work, data["decoder_models"], data["hybrid_models"], "0.29.0") == ("hybrid", jamba.id)
    mamba = replace(jamba, architecture="MambaForCausalLM", layer_types=("mamba",))
    work = SimpleNamespace(config_match=None, model=mamba, model_name=jamba.id)
    assert _model_kind(work, data["decoder_models"], data["hybrid_models"], "0.29.0") is None


def test_a_hybrid_whose_layers_vllmlint_cannot_read_is_still_hybrid():
    # Nemotron-H's config.json gives its layers as `hybrid_override_pattern`, which vllmlint does not parse: the
    # architecture alone says hybrid, so prefix caching on 0.27.1 (opt-in there) is not reported.
    args = "[/models/nemotron-h-9b, --enable-prefix-caching, --enable-chunked-prefill]"
    assert _local(NEMOTRON_H, args, "v0.27.1") == [("deploy.yaml", 12, 64, "--enable-chunked-prefill")]
    assert [f[3] for f in _local(NEMOTRON_H, args, "v0.29.0")] == ["--enable-prefix-caching",
                                                                   "--enable-chunked-prefill"]


@pytest.mark.parametrize("pooling", ["--runner, pooling", "--convert, embed", "--task, embed", "--runner, $(RUNNER)"])
def test_does_not_catch_pooling_runs(pooling):
    assert found(deployment(f"[Qwen/Qwen3-8B, {pooling}, --enable-prefix-caching]")) == []


def test_does_not_catch_a_cpu_build():
    text = deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching]", "vllm/vllm-openai-cpu:v0.29.0-x86_64")
    assert found(text) == []


def test_does_not_catch_a_script_without_image():
    assert found("vllm serve Qwen/Qwen2.5-7B-Instruct --enable-prefix-caching\n", "serve.sh", "0.29.0") == []


def test_does_not_catch_conflicting_values():
    # Two values are conflicting-args (VL107), not a repetition of the default.
    text = deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching, --no-enable-prefix-caching]")
    assert found(text) == []


def test_does_not_catch_prefill_context_parallel_on_0_12():
    text = deployment("[Qwen/Qwen2.5-7B-Instruct, --prefill-context-parallel-size, '2', --enable-chunked-prefill]",
                      "vllm/vllm-openai:v0.12.0")
    assert found(text) == []
