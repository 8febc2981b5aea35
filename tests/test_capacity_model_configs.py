"""Any model from its own config: sizing per architecture family against numbers derived by hand from the
config.json and vLLM 0.33.0's model files, the checkpoint's own quantization per module, and where the
files may come from (never the network, never outside the run, unless opted in)."""
from __future__ import annotations

import json
import socket
import sys
import types
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from vllmlint.capacity import count_parameters, estimate, resolve_model
from vllmlint.capacity.estimate import _rank_weights
from vllmlint.capacity.hfconfig import (
    ModelConfigError,
    cache_dir,
    from_hub,
    load_model_config,
    module_matches,
    quant_scheme,
    read_model_path,
    set_sources,
)
from vllmlint.capacity.hfconfig import model_from_config_json
from vllmlint.capacity.specs import layer_params, state_bytes_per_sequence
from vllmlint.capacity.workload import workloads
from vllmlint.engine import Linter

CONFIGS = Path(__file__).resolve().parent.parent / "vllmlint_dev" / "model_configs"


def stored(repo_id: str) -> dict:
    return json.loads((CONFIGS / (repo_id.replace("/", "__") + ".json")).read_text(encoding="utf-8"))["config"]


def spec(repo_id: str):
    return model_from_config_json(stored(repo_id), repo_id)


@pytest.fixture(autouse=True)
def _no_opt_in():
    set_sources()
    yield
    set_sources()


# --------------------------------------------------------------------------- dense GQA


def test_dense_gqa_llama3_8b_weights_and_kv():
    model = spec("meta-llama/Meta-Llama-3-8B-Instruct")
    # embeddings 128256 x 4096 twice (untied) = 1,050,673,152; per layer q 4096^2 + k,v 2 x 4096 x 1024 +
    # o 4096^2 + MLP 3 x 4096 x 14336 + 2 norms x 4096 = 218,112,000, x 32 = 6,979,584,000; + final norm 4096
    assert count_parameters(model) == 8_030_261_248  # the published safetensors total
    plan = estimate(model, "H100-80GB", max_model_len=8192)
    assert plan.kv_bytes_per_token == 32 * 2 * 8 * 128 * 2  # layers x (K, V) x KV heads x head_dim x bf16
    assert plan.weights_bytes == 8_030_261_248 * 2  # vocab 128256 is a multiple of 64: no padding


def test_head_dim_override_gemma3_27b():
    model = spec("google/gemma-3-27b-it")
    assert (model.head_dim, model.hidden_size // model.num_attention_heads) == (128, 168)  # config head_dim wins
    # 62 layers x 2 x 16 KV heads x 128 x 2 bytes
    assert estimate(model, "H100-80GB", max_model_len=8192).kv_bytes_per_token == 62 * 2 * 16 * 128 * 2


# --------------------------------------------------------------------------- MoE and MLA


def test_moe_mla_deepseek_v2_lite():
    model = spec("deepseek-ai/DeepSeek-V2-Lite-Chat")
    assert (model.attention_kind, model.first_dense_layers, model.shared_experts) == ("mla", 1, 2)
    # MLA without q_lora (deepseek_v2.py DeepseekV2MLAAttention): q_proj 2048 x 16 x (128 + 64) = 6,291,456,
    # kv_a_proj_with_mqa 2048 x (512 + 64) = 1,179,648, kv_b_proj 512 x 16 x (128 + 128) = 2,097,152,
    # o_proj 16 x 128 x 2048 = 4,194,304: 13,762,560
    attention = 13_762_560
    dense = layer_params(model, 0)  # first_k_dense_replace 1: a 3 x 2048 x 10944 MLP
    assert dense.linear == attention + 3 * 2048 * 10944
    moe = layer_params(model, 1)  # 64 routed + 2 shared experts of 3 x 2048 x 1408, router 2048 x 64
    assert (moe.attention, moe.experts, moe.shared) == (attention, 64 * 3 * 2048 * 1408, 2 * 3 * 2048 * 1408)
    assert moe.other == 512 + 2048 * 64 + 2 * 2048  # kv_a_layernorm, router, two norms
    # one latent (kv_lora_rank 512 + qk_rope_head_dim 64) per token and layer, on every TP rank
    for tp in (1, 2):
        assert estimate(model, "H100-80GB", tensor_parallel_size=tp, max_model_len=8192).kv_bytes_per_token \
            == 27 * 576 * 2
    assert abs(count_parameters(model) / 15.7e9 - 1) < 0.03  # model card: 15.7B


def test_llama4_scout_moe_with_shared_expert_and_chunked_attention():
    model = spec("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    # every layer MoE (interleave_moe_layer_step 1): 16 routed experts and 1 shared, each 3 x 5120 x 8192
    assert layer_params(model, 0).experts == 16 * 3 * 5120 * 8192
    assert layer_params(model, 0).shared == 3 * 5120 * 8192
    # no_rope_layers default: every 4th layer global; the RoPE layers use 8192-token chunked local attention
    # (llama4.py:251), bounded like a window
    assert model.layer_types == ("chunked", "chunked", "chunked", "full") and model.sliding_window == 8192
    assert [model.is_sliding_layer(i) for i in range(4)] == [True, True, True, False]
    assert abs(count_parameters(model) / 109e9 - 1) < 0.03


# --------------------------------------------------------------------------- sliding window / interleaved


def test_gemma3_five_local_one_global():
    model = spec("google/gemma-3-4b-it")
    assert model.layer_types == ("sliding",) * 5 + ("full",) and model.sliding_window == 1024
    sliding = [i for i in range(34) if model.is_sliding_layer(i)]
    assert len(sliding) == 34 - 5  # full at layers 5, 11, 17, 23, 29 ((i + 1) % 6 == 0)
    assert model.norms_per_layer == 4 and model.qk_norm and model.tie_word_embeddings


def test_gpt_oss_even_layers_slide():
    model = spec("openai/gpt-oss-20b")
    assert [model.is_sliding_layer(i) for i in range(4)] == [True, False, True, False]  # gpt_oss.py:175
    assert model.sliding_window == 128
    assert estimate(model, "H100-80GB", max_model_len=8192).kv_bytes_per_token == 24 * 2 * 8 * 64 * 2


# --------------------------------------------------------------------------- hybrid: state per sequence


def test_qwen3_next_gated_deltanet_state_per_sequence():
    model = spec("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert model.layer_types == ("linear", "linear", "linear", "full")  # full_attention_interval 4
    # gated_delta_net_state_shape (mamba_utils.py): conv (2 x 16 x 128 + 32 x 128) x (4 - 1) = 24,576 and
    # temporal 32 x 128 x 128 = 524,288 elements per layer, bf16, 36 linear layers
    assert state_bytes_per_sequence(model) == 36 * (24_576 + 524_288) * 2 == 39_518_208
    plan = estimate(model, "H100-80GB", tensor_parallel_size=4, max_model_len=4096, vllm_version="0.20.2")
    # 12 full-attention layers; 2 KV heads < TP 4: one replicated head of 256 per rank
    assert plan.kv_bytes_per_token == 12 * 2 * 1 * 256 * 2
    # per rank: conv 8192 / 4 x 3 = 6,144 and temporal 8 x 128 x 128 = 131,072 elements per linear layer
    # (before 0.21, where no page layout is modelled)
    assert plan.kv_bytes_per_sequence == 12_288 * 4096 + 36 * (6_144 + 131_072) * 2
    # 0.33.0 (the newest release read) pages it (hybrid_kv_layout): prefix caching on by default, so "align"; on an
    # H100 FlashInfer's GDN prefill aligns blocks to 64 tokens: 64 x cdiv(274,432 B, 64 x 1,024 B) = 320-token blocks;
    # groups of 12 layers: cdiv(4096, 320) = 13 attention blocks + 3 state groups x (2 + 1 checkpoint block)
    newest = estimate(model, "H100-80GB", tensor_parallel_size=4, max_model_len=4096)
    assert newest.hybrid_layout.block_size == 320
    assert newest.kv_bytes_per_sequence == 320 * 1024 * 12 * (13 + 3 * 3)
    # q_proj doubled for the output gate: 2048 x 16 x 256 x 2
    assert layer_params(model, 3).attention == 2048 * 16 * 256 * 2 + 2 * 2048 * 2 * 256 + 16 * 256 * 2048
    assert abs(count_parameters(model) / 80e9 - 1) < 0.03


def test_jamba_mamba_layers():
    model = spec("ai21labs/AI21-Jamba-1.5-Mini")
    assert [model.layer_kind(i) for i in range(8)] == ["mamba"] * 4 + ["full"] + ["mamba"] * 3  # period 8, offset 4
    assert [model.is_moe_layer(i) for i in range(2)] == [False, True]  # expert period 2, offset 1
    # Mamba mixer (mamba_mixer.py), inner 2 x 4096: in_proj 4096 x 16384, x_proj 8192 x (256 + 2 x 16),
    # dt_proj 256 x 8192, out_proj 8192 x 4096
    assert layer_params(model, 0).attention == 4096 * 16384 + 8192 * 288 + 256 * 8192 + 8192 * 4096
    # mamba1_state_shape: conv 8192 x 3 and temporal 8192 x 16, 28 Mamba layers, bf16
    assert state_bytes_per_sequence(model) == 28 * (8192 * 3 + 8192 * 16) * 2
    assert estimate(model, "H100-80GB", tensor_parallel_size=2, max_model_len=8192).kv_bytes_per_token \
        == 4 * 2 * 4 * 128 * 2
    assert abs(count_parameters(model) / 51.6e9 - 1) < 0.03


# --------------------------------------------------------------------------- multimodal, tied embeddings


def test_qwen25_vl_vision_tower_counted_in_weights():
    model = spec("Qwen/Qwen2.5-VL-7B-Instruct")
    # 32 blocks of qkv 1280 x 3840 + proj 1280^2 (with biases), gated MLP 3 x 1280 x 3420 (+ biases), 2 norms
    # = 19,704,760; patch embed 3 x 2 x 14 x 14 x 1280; merger (1280 x 4)^2 + 5120 x 3584 (+ biases, ln_q)
    assert model.vision_parameters == 32 * 19_704_760 + 1_505_280 + 2 * 1280 + 44_574_464 == 676_634_624
    without = replace(model, vision_parameters=0)
    for tp in (1, 2):
        plan, text_only = (estimate(m, "H100-80GB", tensor_parallel_size=tp, max_model_len=8192)
                           for m in (model, without))
        assert plan.weights_bytes - text_only.weights_bytes == 676_634_624 // tp * 2
    assert abs(count_parameters(model) / 8.29e9 - 1) < 0.03


def test_tied_embeddings_hold_one_copy():
    model = spec("ibm-granite/granite-3.1-8b-instruct")
    assert model.tie_word_embeddings
    untied = replace(model, tie_word_embeddings=False)
    padded = 49216  # vocab 49155 padded to a multiple of 64
    difference = (estimate(untied, "H100-80GB", max_model_len=8192).weights_bytes
                  - estimate(model, "H100-80GB", max_model_len=8192).weights_bytes)
    assert difference == padded * 4096 * 2


# --------------------------------------------------------------------------- quantization from the checkpoint


def test_gpt_oss_mxfp4_experts_bf16_attention():
    model = spec("openai/gpt-oss-20b")
    assert model.checkpoint_quantization == "mxfp4" and model.quant_scheme.unquantized == {("attention", -1)}
    # per layer: experts 32 x 3 x 2880^2 at 0.53125 B (E2M1 + an E8M0 scale per 32) = 423,014,400; attention
    # 26,542,080 and 103,040 norms/biases/router at 2 B; x 24 layers; embed + lm_head 2 x 201088 x 2880 x 2;
    # final norm
    expected = 24 * (796_262_400 * 0.53125 + 26_542_080 * 2 + 103_040 * 2) + 2 * 201_088 * 2880 * 2 + 2880 * 2
    assert estimate(model, "H100-80GB", max_model_len=8192).weights_bytes == int(expected) == 13_747_850_880
    uniform = _rank_weights(model, range(24), 1, True, True, 0.53125, 2)  # the old "fully quantized" sizing
    assert int(expected) - uniform == int(24 * 26_542_080 * (2 - 0.53125))


LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 4, "hidden_size": 1024,
         "intermediate_size": 4096, "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 32000,
         "torch_dtype": "bfloat16"}
ATTENTION = 1024 * 1024 * 2 + 2 * 1024 * 256  # q, o and k, v (2 KV heads of 128)
MLP = 3 * 1024 * 4096


def _linear_bytes(config: dict, layer: int = 1) -> float:
    model = model_from_config_json(config, "acme/x")
    return model.quant_scheme.layer_bytes(layer_params(model, layer), layer, 2)


def test_fp8_with_attention_ignored_is_partial():
    config = {**LLAMA, "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic",
                                               "ignored_layers": ["re:.*self_attn.*"]}}
    assert _linear_bytes(config) == ATTENTION * 2 + MLP * 1.0
    dense = {**LLAMA, "quantization_config": {"quant_method": "fp8"}}
    assert _linear_bytes(dense) == (ATTENTION + MLP) * 1.0


def test_modules_to_not_convert_by_layer():
    config = {**LLAMA, "quantization_config": {"quant_method": "fp8", "modules_to_not_convert": ["model.layers.0.mlp"]}}
    assert _linear_bytes(config, 0) == ATTENTION * 1.0 + MLP * 2
    assert _linear_bytes(config, 1) == (ATTENTION + MLP) * 1.0


@pytest.mark.parametrize("quant, size", [
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}, 0.5 + 2 / 128 + 0.5 / 128),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True}, 0.5 + 2 / 128 + 0.5 / 128),  # qzeros kept
    ({"quant_method": "gptq", "bits": 8, "group_size": 32}, 1 + 2 / 32 + 1 / 32),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True}, 0.5 + 1 / 64),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
        "num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True}}}}, 0.5 + 2 / 128),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
        "num_bits": 4, "type": "int", "strategy": "group", "group_size": 64, "symmetric": False}}}}, 0.5 + 2 / 64 + 0.5 / 64),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
        "num_bits": 8, "type": "float", "strategy": "channel"}}}}, 1.0),
])
def test_bits_group_sizes_and_zero_points(quant, size):
    assert _linear_bytes({**LLAMA, "quantization_config": quant}) == pytest.approx((ATTENTION + MLP) * size)


def test_compressed_tensors_ignore_and_the_method_named_on_the_command_line():
    config = {**LLAMA, "quantization_config": {
        "quant_method": "compressed-tensors", "ignore": ["lm_head", "re:.*self_attn.*"],
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
                                                                          "strategy": "group", "group_size": 128}}}}}
    model = model_from_config_json(config, "acme/x")
    assert model.checkpoint_quantization == "int4"
    own = estimate(model, "L4", max_model_len=2048)
    named = estimate(model, "L4", max_model_len=2048, quantization="compressed-tensors")  # vLLM's flag value
    assert own.weights_bytes == named.weights_bytes
    per_layer = ATTENTION * 2 + MLP * (0.5 + 2 / 128)
    assert own.weights_bytes == int(4 * (per_layer + 2 * 1024 * 2) + 2 * 32000 * 1024 * 2 + 1024 * 2)


def test_modelopt_nvfp4_from_hf_quant_config(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA))
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(
        {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "group_size": 16,
                                                             "exclude_modules": ["lm_head"]}}))
    model, how = load_model_config(str(tmp_path))
    assert model.checkpoint_quantization == "nvfp4" and how.startswith(f"from {tmp_path / 'config.json'}")
    assert model.quant_scheme.layer_bytes(layer_params(model, 0), 0, 2) == (ATTENTION + MLP) * (0.5 + 1 / 16)


def test_an_unknown_method_is_not_sized_as_bf16():
    model = model_from_config_json({**LLAMA, "quantization_config": {"quant_method": "hqq"}}, "acme/x")
    assert quant_scheme({**LLAMA, "quantization_config": {"quant_method": "hqq"}}).linear_bytes is None
    with pytest.raises(ValueError, match="unknown weight size"):
        estimate(model, "L4", max_model_len=2048)


def test_module_patterns():
    assert module_matches("model.layers.*.self_attn", "model.layers.3.self_attn.q_proj")
    assert module_matches("re:.*mlp\\.experts.*", "model.layers.3.mlp.experts.0.up_proj")
    assert module_matches("lm_head", "lm_head") and not module_matches("lm_head", "model.layers.0.mlp.lm_headx")
    assert not module_matches("model.layers.1.mlp", "model.layers.11.mlp.gate_proj")


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("name, model_id, quantization", [
    ("kaitchup/Qwen2.5-7B-Instruct-AutoRound-GPTQ-4bit", "Qwen/Qwen2.5-7B-Instruct", "gptq-int4"),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "Qwen/Qwen3-30B-A3B-Instruct-2507", "fp8"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "Qwen/Qwen3-235B-A22B-Instruct-2507", "fp8"),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct-FP8", "Qwen/Qwen3-Next-80B-A3B-Instruct", "fp8"),
])
def test_names_resolve(name, model_id, quantization):
    match = resolve_model(name)
    assert match is not None and (match.model.id, match.quantization) == (model_id, quantization)


def test_the_2507_checkpoints_have_their_own_context():
    assert resolve_model("Qwen/Qwen3-30B-A3B-Instruct-2507").model.max_position_embeddings == 262144
    assert resolve_model("Qwen/Qwen3-30B-A3B").model.max_position_embeddings == 40960


# --------------------------------------------------------------------------- where the files come from

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, {model}]
"""


def _work(files: dict[str, str]):
    linter = Linter()
    for name, text in files.items():
        linter.add_text(text, name)
    [work] = workloads(linter.build())
    return work


def test_a_local_path_reads_its_config_json_and_quant_config_in_the_run():
    config = json.dumps({**LLAMA, "quantization_config": {"quant_method": "fp8",
                                                          "ignored_layers": ["re:.*self_attn.*"]}})
    work = _work({"deploy.yaml": DEPLOY.format(model="./checkpoints/model"),
                  "checkpoints/model/config.json": config})  # a generic leaf name, found by its exact path
    assert work.match is not None and work.match.how == "config.json at checkpoints/model/config.json"
    assert work.model.quant_scheme.unquantized == {("attention", -1)}
    absolute = _work({"deploy.yaml": DEPLOY.format(model="/mnt/acme-ft"), "repo/acme-ft/config.json": config})
    assert absolute.match.how == "config.json at repo/acme-ft/config.json"


def test_bad_json_in_the_run_leaves_the_model_unknown():
    work = _work({"deploy.yaml": DEPLOY.format(model="./checkpoints/model"),
                  "checkpoints/model/config.json": '{"num_hidden_layers": 4,'})
    assert work.match is None


def test_model_config_folder_and_errors(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(stored("openai/gpt-oss-20b")))
    runner = CliRunner()
    from vllmlint.cli import cli as main

    result = runner.invoke(main, ["capacity", "--model-config", str(tmp_path), "--gpu", "H100-80GB", "--format", "json",
                                  "--max-model-len", "8192", "--no-config"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)["estimates"]
    assert row["dtype"] == "mxfp4" and row["weights_gib"] == round(13_747_850_880 / 2**30, 2)
    (tmp_path / "config.json").write_text('{"hidden_size": 4096,\n  "num_hidden_layers": [}')
    result = runner.invoke(main, ["capacity", "--model-config", str(tmp_path), "--gpu", "L4", "--no-config"])
    assert result.exit_code == 2
    assert f"--model-config {tmp_path / 'config.json'}:2:" in result.stderr and "Traceback" not in result.output
    missing = runner.invoke(main, ["capacity", "--model-config", str(tmp_path / "nope"), "--gpu", "L4", "--no-config"])
    assert missing.exit_code == 2 and "no such file or folder" in missing.stderr


def test_read_model_path_of_a_folder_without_config(tmp_path):
    with pytest.raises(ModelConfigError, match="no config.json"):
        read_model_path(tmp_path)


@pytest.fixture()
def no_network(monkeypatch):
    calls = []

    def refuse(*args, **kwargs):
        calls.append(args)
        raise AssertionError(f"network call attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return calls


def test_no_network_call_by_default(no_network, tmp_path, monkeypatch):
    from vllmlint.cli import cli as main
    from vllmlint.engine import lint_text

    monkeypatch.chdir(tmp_path)
    manifest = DEPLOY.format(model="acme-unknown/Never-Heard-Of-7B")
    result = lint_text(manifest, "deploy.yaml")
    assert not result.internal_error
    (tmp_path / "deploy.yaml").write_text(manifest)
    runner = CliRunner()
    assert runner.invoke(main, ["check", "deploy.yaml", "--no-config"]).exit_code in (0, 1)
    planned = runner.invoke(main, ["capacity", "deploy.yaml", "--gpu", "L4", "--no-config"])
    assert "is not in the catalog" in planned.stderr
    asked = runner.invoke(main, ["capacity", "--model", "acme-unknown/Never-Heard-Of-7B", "--gpu", "L4", "--no-config"])
    assert asked.exit_code == 2 and "unknown model" in asked.stderr
    assert no_network == []


def _fake_hub(monkeypatch, tmp_path, calls):
    hub = types.ModuleType("huggingface_hub")
    utils = types.ModuleType("huggingface_hub.utils")

    class EntryNotFoundError(Exception):
        pass

    def hf_hub_download(repo_id, filename, cache_dir=None, token=None):
        calls.append((repo_id, filename, cache_dir, token))
        if filename != "config.json":
            raise EntryNotFoundError(filename)
        path = Path(cache_dir) / "fetched-config.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(LLAMA))
        return str(path)

    hub.hf_hub_download = hf_hub_download
    utils.EntryNotFoundError = EntryNotFoundError
    monkeypatch.setitem(sys.modules, "huggingface_hub", hub)
    monkeypatch.setitem(sys.modules, "huggingface_hub.utils", utils)


def test_online_fetches_into_vllmlints_cache_with_the_token(monkeypatch, tmp_path, no_network):
    calls: list = []
    _fake_hub(monkeypatch, tmp_path, calls)
    env = {"VLLMLINT_CACHE_DIR": str(tmp_path / "cache"), "HF_TOKEN": "hf_x"}
    files = from_hub("acme/gated-7b", env)
    assert files is not None and files.config["hidden_size"] == 1024
    assert calls[0] == ("acme/gated-7b", "config.json", str(tmp_path / "cache" / "models"), "hf_x")
    assert cache_dir(env) == tmp_path / "cache"
    calls.clear()
    assert from_hub("acme/gated-7b", {**env, "HF_HUB_OFFLINE": "1"}) is None and calls == []  # offline: no call
    monkeypatch.setenv("VLLMLINT_CACHE_DIR", str(tmp_path / "cache"))
    set_sources(online=True)
    work = _work({"deploy.yaml": DEPLOY.format(model="acme/gated-7b")})
    assert work.match.how.startswith("config.json from Hugging Face Hub acme/gated-7b")


def test_online_without_huggingface_hub_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(ModelConfigError, match=r"pip install huggingface_hub"):
        from_hub("acme/x", {})


def test_hf_cache_only_when_opted_in(tmp_path, monkeypatch, no_network):
    snapshot = tmp_path / "hub" / "models--acme--cached-7b" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(LLAMA))
    (tmp_path / "hub" / "models--acme--cached-7b" / "refs").mkdir()
    (tmp_path / "hub" / "models--acme--cached-7b" / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    manifest = {"deploy.yaml": DEPLOY.format(model="acme/cached-7b")}
    assert _work(manifest).match is None  # not opted in: the machine's cache is not read
    set_sources(hf_cache=True)
    work = _work(manifest)
    assert work.match is not None and work.model.num_hidden_layers == 4
    assert work.match.how == f"config.json from Hugging Face cache {snapshot / 'config.json'}"


def test_config_file_keys(tmp_path, monkeypatch):
    from vllmlint.config import load_config

    path = tmp_path / ".vllmlint.yaml"
    path.write_text("hf-cache: true\nonline: false\n")
    config = load_config(path)
    assert (config.hf_cache, config.online) == (True, False)


def test_the_catalog_is_what_the_generator_makes():
    from vllmlint_dev import models_catalog

    assert models_catalog.main(["--check"]) == 0


# --------------------------------------------------------------------------- GGUF


def _gguf(path: Path, tensors: list[tuple[str, tuple[int, ...], int]], metadata: dict) -> Path:
    import struct

    def string(text: str) -> bytes:
        data = text.encode()
        return struct.pack("<Q", len(data)) + data

    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata)))
    for key, value in metadata.items():
        out += string(key)
        if isinstance(value, str):
            out += struct.pack("<I", 8) + string(value)
        elif isinstance(value, list):  # an array of strings (the vocabulary)
            out += struct.pack("<IIQ", 9, 8, len(value)) + b"".join(string(v) for v in value)
        else:
            out += struct.pack("<IQ", 10, value)
    for name, dims, kind in tensors:
        out += string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", kind, 0)
    path.write_bytes(bytes(out))
    return path


def test_gguf_header_sizes_weights_by_tensor_type(tmp_path):
    hidden, layers, vocab, inner = 1024, 2, 128, 4096
    metadata = {"general.architecture": "llama", "llama.block_count": layers, "llama.embedding_length": hidden,
                "llama.feed_forward_length": inner, "llama.attention.head_count": 8,
                "llama.attention.head_count_kv": 2, "llama.context_length": 4096,
                "tokenizer.ggml.tokens": [f"t{i}" for i in range(vocab)]}
    q4k, q6k, f32 = 12, 14, 0  # GGML type ids (data/capacity/gguf-types.yaml)
    tensors = [("token_embd.weight", (hidden, vocab), q6k), ("output.weight", (hidden, vocab), q6k),
               ("output_norm.weight", (hidden,), f32)]
    for i in range(layers):
        tensors += [(f"blk.{i}.attn_q.weight", (hidden, hidden), q4k), (f"blk.{i}.attn_k.weight", (hidden, 256), q4k),
                    (f"blk.{i}.attn_v.weight", (hidden, 256), q4k), (f"blk.{i}.attn_output.weight", (hidden, hidden), q4k),
                    (f"blk.{i}.ffn_gate.weight", (hidden, inner), q4k), (f"blk.{i}.ffn_up.weight", (hidden, inner), q4k),
                    (f"blk.{i}.ffn_down.weight", (inner, hidden), q4k), (f"blk.{i}.attn_norm.weight", (hidden,), f32)]
    path = _gguf(tmp_path / "tiny-Q4_K_M.gguf", tensors, metadata)
    model, how = load_model_config(str(path))
    assert how == f"from the GGUF header of {path}, weights sized by its tensor types"
    assert (model.num_hidden_layers, model.num_key_value_heads, model.vocab_size) == (layers, 2, vocab)
    # Q4_K: 144 bytes per 256 weights = 0.5625; Q6_K: 210 per 256 = 0.8203125 (gguf constants.py)
    assert model.quant_scheme.linear_bytes == 144 / 256 and model.quant_scheme.embedding_bytes == 210 / 256
    plan = estimate(model, "L4", max_model_len=2048)
    per_layer = (ATTENTION + MLP) * 144 / 256 + 2 * hidden * 2  # linear at Q4_K, two norms at 2 bytes
    assert plan.weights_bytes == int(layers * per_layer + 2 * 128 * hidden * 210 / 256 + hidden * 2)


def test_a_file_that_is_not_gguf(tmp_path):
    path = tmp_path / "x.gguf"
    path.write_bytes(b"PK\x03\x04 not gguf")
    with pytest.raises(ModelConfigError, match="not a GGUF file"):
        load_model_config(str(path))
    path.write_bytes(b"GGUF\x03\x00\x00\x00")
    with pytest.raises(ModelConfigError, match="ends early"):
        load_model_config(str(path))


def test_gguf_types_table_matches_its_schema():
    import jsonschema

    from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir

    data = load_yaml_data(knowledge_dir() / "capacity" / "gguf-types.yaml")
    jsonschema.validate(data, json.loads((schemas_dir() / "gguf-types.schema.json").read_text(encoding="utf-8")))
    table = {t["name"]: (t["id"], t["block"], t["bytes"]) for t in data["types"]}
    assert table["Q4_K"] == (12, 256, 144) and table["Q8_0"] == (8, 32, 34) and table["MXFP4"] == (39, 32, 17)


def test_a_gguf_path_in_a_manifest_is_not_sized():
    work = _work({"deploy.yaml": DEPLOY.format(model="/models/Meta-Llama-3-8B-Instruct-Q4_K_M.gguf")})
    assert work.quantization == "gguf"
    from vllmlint.capacity import find_gpu

    assert work.estimate(find_gpu("L4")) is None  # not the bf16 size of the model its name resembles


def test_an_absurd_layer_count_is_no_model():
    assert model_from_config_json({**LLAMA, "num_hidden_layers": 10**12, "model_type": "qwen3_next",
                                   "full_attention_interval": 4}) is None


def test_online_without_huggingface_hub_is_a_usage_error(tmp_path, monkeypatch):
    import importlib.util

    from vllmlint.cli import cli as main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "huggingface_hub" else real(name, *a))
    (tmp_path / "deploy.yaml").write_text(DEPLOY.format(model="acme/x"))
    runner = CliRunner()
    for args in (["check", str(tmp_path / "deploy.yaml"), "--online", "--no-config"],
                 ["capacity", "--model", "acme/x", "--gpu", "L4", "--online", "--no-config"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 2 and "pip install huggingface_hub" in result.stderr, args
