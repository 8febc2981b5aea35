"""The gated-DeltaNet hybrid page layout from 0.24.0 to 0.33.x and vLLM's mamba_cache_mode "align" (prefix caching):
pinned on both sides of each release boundary and against the Qwen3.6-27B FP8 start-up log (vLLM 0.27.1, H100,
--enable-prefix-caching)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllmlint.capacity.estimate import (
    GiB,
    estimate,
    hybrid_kv_layout,
    hybrid_prefix_caching_default,
)
from vllmlint.capacity.hfconfig import model_from_config_json
from conftest import capacity_workload

CONFIGS = Path(__file__).parent / "data" / "startup-logs" / "configs"


def _model(name: str, repo: str):
    return model_from_config_json(json.loads((CONFIGS / name).read_text(encoding="utf-8")), repo)


@pytest.fixture(scope="module")
def qwen35():
    return _model("qwen3.5-4b.json", "Qwen/Qwen3.5-4B")


@pytest.fixture(scope="module")
def qwen36():
    return _model("qwen3.6-27b.json", "Qwen/Qwen3.6-27B")


def _layout(model, version, **kwargs):
    kwargs.setdefault("compute_capability", (8, 9))
    return hybrid_kv_layout(model, range(model.num_hidden_layers), 1, 2, 2, 4096, version, **kwargs)


def test_the_layout_of_0_23_holds_from_0_24_to_0_33_without_prefix_caching(qwen35):
    # 528-token blocks, 8 attention blocks of 4096 tokens and one per state group (0.23.0: the Qwen3.5-4B log)
    for version in ("0.23.0", "0.24.0", "0.25.1", "0.26.0", "0.27.1", "0.28.0", "0.30.0", "0.32.0", "0.33.0"):
        layout = _layout(qwen35, version, enable_prefix_caching=False)
        assert (layout.block_size, layout.blocks_per_request, layout.mamba_cache_mode) == (528, 8 + 3, "none"), version
    assert _layout(qwen35, "0.20.2") is None
    assert _layout(qwen35, "0.34.0") is None


def test_prefix_caching_takes_two_blocks_per_state_group(qwen35):
    layout = _layout(qwen35, "0.27.1", enable_prefix_caching=True)
    # MambaSpec.max_memory_usage_bytes with mamba_cache_mode "align": 2 pages (kv_cache_interface.py 735-736 in 0.27.1)
    assert (layout.block_size, layout.blocks_per_request, layout.mamba_cache_mode) == (528, 8 + 2 * 3, "align")
    # the same in 0.21.0, where --enable-prefix-caching is opt-in
    assert _layout(qwen35, "0.21.0", enable_prefix_caching=True).blocks_per_request == 8 + 2 * 3


def test_hybrid_prefix_caching_is_on_by_default_from_0_28(qwen35):
    assert not hybrid_prefix_caching_default("0.27.1")
    assert hybrid_prefix_caching_default("0.28.0")
    assert _layout(qwen35, "0.27.1").mamba_cache_mode == "none"
    assert _layout(qwen35, "0.28.0").mamba_cache_mode == "align"
    assert _layout(qwen35, "0.28.0").blocks_per_request == 8 + 2 * 3
    # --no-enable-prefix-caching on 0.28+
    assert _layout(qwen35, "0.28.0", enable_prefix_caching=False).blocks_per_request == 8 + 3


def test_fa4_head_dim_256_pages_on_data_center_blackwell_from_0_29_are_not_guessed(qwen35):
    assert qwen35.head_dim == 256
    assert _layout(qwen35, "0.28.0", compute_capability=(10, 0)).block_size == 528
    assert _layout(qwen35, "0.29.0", compute_capability=(10, 0)) is None
    assert _layout(qwen35, "0.29.0", compute_capability=(9, 0)).block_size == 528


def test_0_33_aligns_to_flashinfers_gdn_checkpoints_on_hopper_in_align_mode(qwen35):
    before = _layout(qwen35, "0.32.0", enable_prefix_caching=True, compute_capability=(9, 0))
    assert (before.block_size, before.blocks_per_request) == (528, 8 + 2 * 3)
    after = _layout(qwen35, "0.33.0", enable_prefix_caching=True, compute_capability=(9, 0))
    # 64 x cdiv(2146304, 64 x 4096) = 576 tokens; cdiv(4096, 576) = 8 attention blocks; 3 per state group
    assert (after.block_size, after.blocks_per_request) == (576, 8 + 3 * 3)
    # Ampere/Ada run the Triton GDN prefill: no checkpoint block
    ada = _layout(qwen35, "0.33.0", enable_prefix_caching=True, compute_capability=(8, 9))
    assert (ada.block_size, ada.blocks_per_request) == (528, 8 + 2 * 3)
    # Blackwell: FlashInfer's GDN prefill only with a CUDA 13 runtime, not known
    assert _layout(qwen35, "0.33.0", enable_prefix_caching=True, compute_capability=(12, 0)) is None


def test_the_0_27_1_prefix_caching_log_gives_its_token_figure(qwen36):
    # the log: "Setting attention block size to 784 tokens", "Available KV cache memory: 41.03 GiB",
    # "GPU KV cache size: 292,522 tokens", "Maximum concurrency for 4,096 tokens per request: 71.42x"
    common = dict(gpu_memory_utilization=0.88, vllm_version="0.27.1", max_model_len=4096, dtype="bfloat16",
                  quantization="fp8", max_num_seqs=32, max_num_batched_tokens=4096, enforce_eager=True)
    result = estimate(qwen36, "H100-80GB", enable_prefix_caching=True, kv_cache_memory_bytes=int(41.03 * GiB),
                      **common)
    layout = result.hybrid_layout
    # 16 attention and 48 DeltaNet layers: groups of 16, one attention and three state groups; 6 + 3 x 2 blocks
    assert (layout.block_size, layout.blocks_per_request, layout.mamba_cache_mode) == (784, 6 + 3 * 2, "align")
    assert result.kv_cache_bytes // layout.block_bytes == 857
    assert result.reported_kv_tokens() == 292522  # 857 / 12 x 4096
    # without the flag (0.27's default for hybrids) one block per state group: 857 / 9 x 4096
    plain = estimate(qwen36, "H100-80GB", kv_cache_memory_bytes=int(41.03 * GiB), **common)
    assert plain.hybrid_layout.blocks_per_request == 6 + 3
    assert plain.reported_kv_tokens() == int(857 / 9 * 4096)


def _workload(args: list[str]):
    return capacity_workload("vllm/vllm-openai:v0.27.1", "Qwen/Qwen3.5-4B", args)


@pytest.mark.parametrize("args, expected", [
    ([], None),
    (["--enable-prefix-caching"], True),
    (["--no-enable-prefix-caching"], False),
    (["--enable-prefix-caching", "--no-enable-prefix-caching"], False),  # the last one wins, as in argparse
])
def test_the_workload_reads_the_prefix_caching_flag(args, expected):
    work = _workload(args)
    assert work.enable_prefix_caching is expected
    assert work.estimate_inputs_known()
    assert work.estimate_kwargs()["enable_prefix_caching"] is expected


def test_an_unresolved_prefix_caching_value_leaves_the_estimate_unknown():
    work = _workload(["--enable-prefix-caching", "$(PREFIX_CACHING)"])
    assert not work.estimate_inputs_known()
