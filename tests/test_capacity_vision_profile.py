"""The vision encoder's profiling pass (0.16+, Qwen3-VL family) and the hybrid KV page layout (0.21 - 0.23; 0.24 - 0.33 in test_capacity_hybrid_layout.py), pinned on
both sides of their release boundaries and against the Qwen3.5-4B start-up log (vLLM 0.23.0, RTX 4090 D)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllmlint.capacity.estimate import (
    GiB,
    estimate,
    hybrid_kv_layout,
    vision_profile_bytes,
    vision_profile_items,
)
from vllmlint.capacity.hfconfig import model_from_config_json, vision_parameters
from vllmlint.capacity.specs import gpu_from_entry
from conftest import capacity_workload

CONFIG = Path(__file__).parent / "data" / "startup-logs" / "configs" / "qwen3.5-4b.json"
MiB = 2**20


@pytest.fixture(scope="module")
def qwen35():
    return model_from_config_json(json.loads(CONFIG.read_text(encoding="utf-8")), "Qwen/Qwen3.5-4B")


def _rtx4090d():
    return gpu_from_entry({"id": "log-23.55GiB", "compute_capability": "8.9", "cuda_total_gib": 23.55})


def test_the_qwen35_config_gives_the_qwen3_vl_tower(qwen35):
    vision = qwen35.vision
    assert (vision.family, vision.depth, vision.hidden_size, vision.intermediate_size) == ("qwen3_vl", 24, 1024, 4096)
    # 4096 x 4096 pixels in patches of 16 merged 2 x 2: 16384 tokens, 65536 patches
    assert vision.max_tokens_per_image == 16384


def test_the_qwen3_vl_tower_has_two_mlp_matrices_position_embeddings_and_the_merger():
    config = json.loads(CONFIG.read_text(encoding="utf-8"))
    h, inner, out = 1024, 4096, 2560
    per_layer = 4 * h * h + 4 * h + 2 * h * inner + inner + h + 4 * h  # qkv/proj, fc1/fc2 (no gate), two LayerNorms
    patch = 3 * 2 * 16 * 16 * h + 2 * h
    merger = 4096 * 4096 + 4096 + 4096 * out + out + 2 * h
    assert vision_parameters(config, out) == 24 * per_layer + patch + 2304 * h + merger
    deepstack = dict(config, vision_config=dict(config["vision_config"], deepstack_visual_indexes=[8, 16, 24]))
    assert vision_parameters(deepstack, out) - vision_parameters(config, out) == 3 * (merger - 2 * h + 2 * 4096)


def test_one_item_of_the_largest_size_is_profiled_at_the_defaults():
    assert vision_profile_items(16384, 4096, 2048, 256) == 1  # budget max(2048, 16384) / 16384
    assert vision_profile_items(16384, 4096, 32768, 256) == 2  # a larger max_num_batched_tokens holds two
    assert vision_profile_items(1024, 4096, 8192, 256) == 8
    assert vision_profile_items(1024, 4096, 8192, 1) == 4  # one sequence of 4096 tokens holds 4 items of 1024
    assert vision_profile_items(0, 4096, 8192, 256) == 0


def test_the_encoder_pass_is_computed_from_the_towers_code(qwen35):
    peak, kept = vision_profile_bytes(qwen35, 1, 2, max_model_len=4096, max_num_batched_tokens=2048,
                                      max_num_seqs=256, version="0.23.0")
    n, d = 65536, 1024
    pixels = n * 1536 * 2  # pixel values in the model dtype, 3 x 2 x 16 x 16 per patch
    block = max(2 * d + 9 * d, 3 * d + 2 * 4096)  # attention: 11 d; MLP: 11 d
    assert peak == pixels + n * 2 * (d + 64 + block)
    assert peak / MiB == 1736
    assert kept == pixels + 16384 * 2560 * 2  # pixel values and the encoder output stay through the text model's pass
    # TP 2 splits the column-parallel outputs (qkv, fc1) but not the block's input, norms or residual
    peak_tp2, _ = vision_profile_bytes(qwen35, 2, 2, max_model_len=4096, max_num_batched_tokens=2048,
                                       max_num_seqs=256, version="0.23.0")
    assert peak_tp2 == pixels + n * 2 * (d + 64 + max(2 * d + 9 * d // 2, 3 * d + 4096))


@pytest.mark.parametrize("version, modelled", [("0.14.1", False), ("0.16.0", True), ("0.23.0", True), ("0.33.0", True)])
def test_the_encoder_pass_is_modelled_from_0_16(qwen35, version, modelled):
    peak, _ = vision_profile_bytes(qwen35, 1, 2, max_model_len=4096, max_num_batched_tokens=2048, max_num_seqs=256,
                                   version=version)
    assert (peak > 0) is modelled
    assert vision_profile_bytes(qwen35, 1, 2, max_model_len=4096, max_num_batched_tokens=2048, max_num_seqs=256,
                                version="0.23.0", v1_engine=False) == (0, 0)


def test_the_encoder_pass_replaces_the_sampler_as_the_activation_peak(qwen35):
    result = estimate(qwen35, _rtx4090d(), gpu_memory_utilization=0.9, vllm_version="0.23.0", max_model_len=4096)
    assert result.reserve_parts["activations"] == 1736 * MiB
    before = estimate(qwen35, _rtx4090d(), gpu_memory_utilization=0.9, vllm_version="0.14.1", max_model_len=4096)
    # before 0.16 the encoder pass is not modelled: the peak is the sampler's (0.14: the native sort, 39 B a logit)
    assert before.reserve_parts["activations"] == 256 * 248320 * 39
    # the log: "Available KV cache memory: 10.21 GiB" (weights 8.61 GiB)
    available = result.budget_bytes - result.weights_bytes - result.reserve_bytes
    assert available / GiB == pytest.approx(10.21, rel=0.05)


def test_the_hybrid_layout_pads_the_attention_page_to_one_deltanet_state(qwen35):
    layers = range(qwen35.num_hidden_layers)
    layout = hybrid_kv_layout(qwen35, layers, 1, 2, 2, 4096, "0.23.0")
    # state page: conv 8192 x 3 x 2 B + float32 temporal 32 x 128 x 128 x 4 B = 2146304 B; attention 4096 B a token:
    # 16 x cdiv(2146304, 16 x 4096) = 528 tokens a block; 8 attention + 24 DeltaNet layers: groups of 8
    assert layout.block_size == 528
    assert layout.block_bytes == 528 * 4096 * 8
    assert layout.blocks_per_request == 8 + 3  # cdiv(4096, 528) attention blocks, one per state group
    assert hybrid_kv_layout(qwen35, layers, 1, 2, 2, 4096, "0.20.0") is None
    # 0.24 - 0.33 and the prefix-caching ("align") layout: tests/test_capacity_hybrid_layout.py


def test_the_logged_token_count_follows_from_the_logged_kv_memory(qwen35):
    # the log: "Available KV cache memory: 10.21 GiB", "GPU KV cache size: 235,706 tokens" (max_model_len 4096)
    result = estimate(qwen35, _rtx4090d(), gpu_memory_utilization=0.9, vllm_version="0.23.0", max_model_len=4096,
                      kv_cache_memory_bytes=int(10.21 * GiB))
    assert result.reported_kv_tokens() == 235706


def test_the_image_limit_and_skip_mm_profiling_shape_the_pass(qwen35):
    common = dict(gpu_memory_utilization=0.9, vllm_version="0.23.0", max_model_len=4096)
    default = estimate(qwen35, _rtx4090d(), **common)
    assert any("vision encoder's profiling pass" in note for note in default.notes)
    no_images = estimate(qwen35, _rtx4090d(), mm_image_limit=0, **common)
    skipped = estimate(qwen35, _rtx4090d(), skip_mm_profiling=True, **common)
    sampler = 256 * 248320 * 12  # 0.21+: FlashInfer's top-k/top-p on compute capability 8.9
    assert no_images.reserve_parts["activations"] == skipped.reserve_parts["activations"] == sampler
    assert not any("vision encoder" in note for note in skipped.notes)


def _workload(args: list[str]):
    return capacity_workload("vllm/vllm-openai:v0.23.0", "Qwen/Qwen2.5-VL-7B-Instruct", args)


@pytest.mark.parametrize("args, limit, skip", [
    ([], None, False),
    (["--limit-mm-per-prompt", '{"image": 0, "video": 1}'], 0, False),
    (["--limit-mm-per-prompt", '{"image": {"count": 2}}'], 2, False),
    (["--limit-mm-per-prompt", "image=3,video=0"], 3, False),
    (["--limit-mm-per-prompt", '{"video": 0}'], 999, False),
    (["--language-model-only", "--limit-mm-per-prompt", '{"image": 4}'], 0, False),
    (["--skip-mm-profiling"], None, True),
])
def test_the_workload_reads_the_multimodal_profiling_flags(args, limit, skip):
    work = _workload(args)
    assert (work.mm_image_limit, work.skip_mm_profiling) == (limit, skip)
    assert work.estimate_inputs_known()
    assert work.estimate_kwargs()["mm_image_limit"] == limit


def test_an_unreadable_image_limit_makes_the_estimate_inputs_unknown():
    work = _workload(["--limit-mm-per-prompt", '{"image": "x"}'])
    assert not work.estimate_inputs_known()


def test_the_data_parallel_encoder_runs_unsharded_on_each_rank(qwen35):
    common = dict(tensor_parallel_size=2, gpu_memory_utilization=0.9, vllm_version="0.23.0", max_model_len=4096)
    sharded = estimate(qwen35, _rtx4090d(), **common)
    whole = estimate(qwen35, _rtx4090d(), mm_encoder_data_parallel=True, **common)
    assert whole.reserve_parts["activations"] == 1736 * MiB  # the TP 1 figure
    assert sharded.reserve_parts["activations"] < whole.reserve_parts["activations"]
    assert _workload(["--mm-encoder-tp-mode", "data"]).estimate_kwargs()["mm_encoder_data_parallel"] is True
    assert _workload(["--mm-encoder-tp-mode", "weights"]).mm_encoder_data_parallel is False
