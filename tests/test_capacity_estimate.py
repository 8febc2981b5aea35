"""The capacity estimator against hand-checked deployments and the rules vLLM applies when sizing memory."""
from __future__ import annotations

import pytest

from vllmlint.capacity import GiB, default_gpu_memory_utilization, estimate, find_gpu, gib, resolve_model, smallest_tp_that_fits
from vllmlint.capacity.specs import layer_params
from vllmlint.capacity.estimate import QUANTIZED_LINEAR_BYTES, canonical_quantization, pp_layer_ranges
from vllmlint.vllm.release import release_numbers


def model(name):
    return resolve_model(name).model


def within(value, expected, tolerance=0.10):
    return abs(value / expected - 1) <= tolerance


# --------------------------------------------------------------------------- hand-checked cases


def test_case_a_qwen2_5_7b_on_one_l4():
    # vllm/vllm-openai:v0.6.4.post1, --dtype bfloat16 --max-model-len 4096 --gpu-memory-utilization 0.90 on a
    # g6.2xlarge: fits with about 4 GiB of KV cache, ~75k tokens, ~18 sequences of 4096.
    plan = estimate("Qwen/Qwen2.5-7B-Instruct", "L4", gpu_memory_utilization=0.90, max_model_len=4096,
                    vllm_version="0.6.4.post1")
    assert plan.fits and plan.kv_ok
    assert within(plan.kv_cache_bytes / GiB, 4.0), gib(plan.kv_cache_bytes)
    assert within(plan.kv_tokens, 75_000), plan.kv_tokens
    assert within(plan.concurrency, 75_000 / 4096), plan.concurrency
    assert plan.kv_bytes_per_token == 28 * 2 * 4 * 128 * 2  # 56 KiB: 28 layers x K,V x 4 heads x 128 x bf16
    assert plan.budget_bytes == int(0.90 * find_gpu("L4").total_bytes)
    assert within(plan.weights_bytes / GiB, 14.2, 0.01)


def test_case_b_llama_70b_tp8_on_p3_16xlarge_does_not_fit():
    instance_gpu = find_gpu("Tesla-V100-SXM2-16GB")
    plan = estimate("meta-llama/Llama-3.1-70B-Instruct", instance_gpu, tensor_parallel_size=8,
                    gpu_memory_utilization=0.95)
    assert not plan.fits and not plan.kv_ok
    assert plan.weights_bytes / GiB == pytest.approx(16.4, abs=0.05)
    assert plan.budget_bytes / GiB == pytest.approx(15.0, abs=0.05)
    assert plan.total_bytes / GiB == pytest.approx(15.8, abs=0.05)
    assert plan.kv_cache_bytes == 0 and plan.kv_tokens == 0
    assert any("bfloat16" in note for note in plan.notes)  # V100 has no bf16
    assert "does not fit" in plan.breakdown


def test_breakdown_names_every_term():
    plan = estimate("Qwen/Qwen2.5-7B-Instruct", "L4", max_model_len=4096, vllm_version="0.6.4")
    text = plan.breakdown
    for word in ("budget", "weights per GPU", "activations", "CUDA context", "KV cache", "KV per token", "fits"):
        assert word in text
    assert gib(3 * GiB) == "3.00 GiB"


# --------------------------------------------------------------------------- defaults that depend on the release


def test_gpu_memory_utilization_default_by_release():
    assert default_gpu_memory_utilization("0.6.4.post1") == 0.9
    assert default_gpu_memory_utilization("v0.19.1") == 0.9
    assert default_gpu_memory_utilization("0.20.0") == 0.92
    assert default_gpu_memory_utilization(None) == 0.92
    assert estimate("Qwen/Qwen3-8B", "H100-80GB").gpu_memory_utilization == 0.92
    assert estimate("Qwen/Qwen3-8B", "H100-80GB", vllm_version="0.8.5").gpu_memory_utilization == 0.9
    assert release_numbers("v0.6.4.post1") == (0, 6, 4)


def test_reserve_terms_follow_the_release():
    old = estimate("Qwen/Qwen3-8B", "L4", max_model_len=4096, vllm_version="0.6.4")
    assert "CUDA context" in old.reserve_parts and "CUDA graphs" not in old.reserve_parts
    new = estimate("Qwen/Qwen3-8B", "L4", max_model_len=4096, vllm_version="0.29.0")
    assert "CUDA graphs" in new.reserve_parts and "CUDA context" not in new.reserve_parts
    eager = estimate("Qwen/Qwen3-8B", "L4", max_model_len=4096, enforce_eager=True)
    assert "CUDA graphs" not in eager.reserve_parts
    assert eager.kv_cache_bytes > new.kv_cache_bytes
    # a bigger prefill budget needs more activation memory
    small = estimate("Qwen/Qwen3-8B", "H100-80GB", max_num_batched_tokens=2048, max_num_seqs=8)
    large = estimate("Qwen/Qwen3-8B", "H100-80GB", max_num_batched_tokens=32768, max_num_seqs=8)
    assert large.reserve_parts["activations"] == 16 * small.reserve_parts["activations"]


def test_max_model_len_defaults_to_max_position_embeddings():
    assert estimate("Qwen/Qwen2.5-7B-Instruct", "H100-80GB").max_model_len == 32768
    assert estimate("meta-llama/Llama-3.1-8B-Instruct", "H100-80GB").max_model_len == 131072


def test_kv_cache_memory_bytes_overrides_the_kv_share():
    plan = estimate("meta-llama/Llama-3.1-8B-Instruct", "L4", max_model_len=8192, kv_cache_memory_bytes=2 * GiB)
    assert plan.kv_cache_bytes == 2 * GiB
    assert plan.kv_tokens == 2 * GiB // (32 * 2 * 8 * 128 * 2)  # 128 KiB per token
    assert "kv_cache_memory_bytes" in plan.breakdown


# --------------------------------------------------------------------------- KV cache arithmetic


def test_kv_heads_split_by_tp_and_replicated_below_one_per_rank():
    llama = model("meta-llama/Llama-3.1-70B-Instruct")  # 8 KV heads, 80 layers, head_dim 128
    per_head = 2 * 80 * 128 * 2
    assert estimate(llama, "H100-80GB", tensor_parallel_size=1).kv_bytes_per_token == 8 * per_head
    assert estimate(llama, "H100-80GB", tensor_parallel_size=2).kv_bytes_per_token == 4 * per_head
    assert estimate(llama, "H100-80GB", tensor_parallel_size=8).kv_bytes_per_token == 1 * per_head
    replicated = estimate(llama, "H100-80GB", tensor_parallel_size=16)
    assert replicated.kv_bytes_per_token == 1 * per_head  # 16 ranks, 8 heads: each rank keeps a whole head
    assert any("replicated" in note for note in replicated.notes)
    qwen = model("Qwen/Qwen2.5-7B-Instruct")  # 4 KV heads, 28 query heads
    assert estimate(qwen, "L4", tensor_parallel_size=4).kv_bytes_per_token == 2 * 28 * 1 * 128 * 2
    assert any("divisible" in note for note in estimate(qwen, "L4", tensor_parallel_size=8).notes)
    # replicated KV heads are replicated weights too: from TP 8 to TP 16 q/o and the MLP halve, k/v do not
    llama8b = model("meta-llama/Llama-3.1-8B-Instruct")  # 32 heads, 8 KV heads
    assert layer_params(llama8b, 0, 8).linear - layer_params(llama8b, 0, 16).linear == (
        2 * 4096 * (4 - 2) * 128 + 3 * 4096 * (14336 // 8 - 14336 // 16))


def test_mla_latent_cache_is_not_split_by_tp():
    deepseek = model("deepseek-ai/DeepSeek-V3")
    expected = (512 + 64) * 61 * 2
    one = estimate(deepseek, "H200", tensor_parallel_size=8)
    two_nodes = estimate(deepseek, "H200", tensor_parallel_size=16)
    assert one.kv_bytes_per_token == two_nodes.kv_bytes_per_token == expected
    assert one.quantization == "fp8"  # the checkpoint's own FP8 weights
    assert one.fits and one.kv_ok
    # what an MHA cache of the same shape would cost: 2 x 128 heads x 192 dims, ~85x more
    assert 2 * 128 * 192 * 61 * 2 / expected > 80


def test_sliding_window_layers_are_bounded_by_the_window():
    # vLLM's V1 charge for a sliding-window layer is min(window - 1 + max_num_batched_tokens, max_model_len)
    # tokens (SlidingWindowSpec.max_memory_usage_bytes, vllm/v1/kv_cache_interface.py line 207 in 0.11.0): the
    # window's tokens plus a whole new prefill chunk, not the window alone.
    gemma = model("google/gemma-2-9b-it")  # 42 layers, even ones local with a 4096 window; 8 KV heads x 256
    per_layer_token = 2 * 8 * 256 * 2
    long = estimate(gemma, "H100-80GB", max_model_len=8192, max_num_batched_tokens=2048)
    assert long.kv_bytes_per_token == 42 * per_layer_token
    assert long.kv_bytes_per_sequence == per_layer_token * (21 * 8192 + 21 * (4096 - 1 + 2048))
    chunked = estimate(gemma, "H100-80GB", max_model_len=8192)  # H100's default 8192-token chunk fills the length
    assert chunked.kv_bytes_per_sequence == 42 * per_layer_token * 8192
    short = estimate(gemma, "H100-80GB", max_model_len=4096)
    assert short.kv_bytes_per_sequence == 42 * per_layer_token * 4096  # window not reached
    phi3 = estimate(model("microsoft/Phi-3-mini-4k-instruct"), "L4", max_model_len=4096)
    assert phi3.kv_bytes_per_sequence == phi3.kv_bytes_per_token * (2047 - 1 + 2048)  # every layer windowed
    # V0 and the V1 releases before the hybrid KV cache manager (0.9.2) allocate mixed models at full length
    v0 = estimate(gemma, "H100-80GB", max_model_len=8192, max_num_batched_tokens=2048, vllm_version="0.6.4")
    assert v0.kv_bytes_per_sequence == 42 * per_layer_token * 8192
    early_v1 = estimate(gemma, "H100-80GB", max_model_len=8192, max_num_batched_tokens=2048, vllm_version="0.8.5")
    assert early_v1.kv_bytes_per_sequence == 42 * per_layer_token * 8192


def test_fp8_kv_cache_halves_the_bytes_per_token():
    base = estimate("meta-llama/Llama-3.1-8B-Instruct", "L4", max_model_len=8192)
    fp8 = estimate("meta-llama/Llama-3.1-8B-Instruct", "L4", max_model_len=8192, kv_cache_dtype="fp8")
    assert fp8.kv_bytes_per_token * 2 == base.kv_bytes_per_token
    assert fp8.kv_tokens == pytest.approx(2 * base.kv_tokens, rel=0.001)


# --------------------------------------------------------------------------- weights


def test_weights_split_over_tp_with_vocab_parallel_embeddings():
    llama = model("meta-llama/Llama-3.1-70B-Instruct")
    tp1 = estimate(llama, "H100-80GB").weights_bytes
    tp8 = estimate(llama, "H100-80GB", tensor_parallel_size=8).weights_bytes
    # only norms (and nothing else in Llama) are replicated, so 8 ranks hold just over 1/8 each
    assert tp1 / 8 < tp8 < tp1 / 8 * 1.001
    assert tp1 == pytest.approx(70.55e9 * 2, rel=0.001)


def test_pipeline_parallel_splits_layers_like_vllm():
    assert [len(r) for r in pp_layer_ranges(61, 4)] == [15, 15, 16, 15]
    assert [len(r) for r in pp_layer_ranges(80, 3)] == [27, 27, 26]
    llama = model("meta-llama/Llama-3.1-70B-Instruct")
    pp2 = estimate(llama, "A100-80GB", pipeline_parallel_size=2)
    assert [r.layers for r in pp2.ranks] == [range(0, 40), range(40, 80)]
    assert pp2.kv_bytes_per_token == 40 * 2 * 8 * 128 * 2  # each stage caches its own 40 layers
    full = estimate(llama, "A100-80GB").weights_bytes
    assert pp2.weights_bytes == pytest.approx(full / 2, rel=0.01)


def test_quantized_weights():
    qwen72 = model("Qwen/Qwen2.5-72B-Instruct")
    bf16 = estimate(qwen72, "H100-80GB")
    awq = estimate("Qwen/Qwen2.5-72B-Instruct-AWQ", "H100-80GB")  # quantization taken from the name
    fp8 = estimate(qwen72, "H100-80GB", quantization="fp8")
    assert awq.quantization == "awq"
    assert not bf16.fits and awq.fits and fp8.fits
    # 4-bit with group-128 scales/zeros: 0.52 bytes per linear weight; embeddings and lm_head stay bf16
    linear = sum(layer_params(qwen72, i).linear for i in range(80))
    other = sum(layer_params(qwen72, i).other for i in range(80)) + 2 * 152064 * 8192 + 8192
    assert awq.weights_bytes == pytest.approx(linear * 0.51953125 + other * 2, rel=1e-6)
    assert 38 < awq.weights_bytes / GiB < 40  # the published AWQ checkpoint is ~41.6 GB
    assert fp8.weights_bytes == pytest.approx(linear * 1 + other * 2, rel=1e-6)
    assert QUANTIZED_LINEAR_BYTES["gptq-int8"] > 1
    assert canonical_quantization("awq_marlin") == "awq" and canonical_quantization("none") is None
    with pytest.raises(ValueError):
        canonical_quantization("gguf")


def test_fp8_on_old_gpus_is_flagged():
    plan = estimate("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "T4", max_model_len=4096)
    assert plan.quantization == "fp8"
    assert any("FP8" in note and "7.5" in note for note in plan.notes)
    ampere = estimate("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "A100-80GB", max_model_len=4096)
    assert any("Marlin" in note for note in ampere.notes)


# --------------------------------------------------------------------------- planning


def test_smallest_tp_that_fits():
    assert smallest_tp_that_fits("meta-llama/Llama-3.1-70B-Instruct", "H100-80GB", max_model_len=8192).tensor_parallel_size == 2
    assert smallest_tp_that_fits("meta-llama/Llama-3.1-70B-Instruct", "L4", max_model_len=8192).tensor_parallel_size == 8
    assert smallest_tp_that_fits("Qwen/Qwen2.5-7B-Instruct", "L4", max_model_len=4096).tensor_parallel_size == 1
    assert smallest_tp_that_fits("deepseek-ai/DeepSeek-V3", "L4") is None
    # 70B at TP 8 on 16 GB V100s is exactly case (b): nothing up to 8 fits
    assert smallest_tp_that_fits("meta-llama/Llama-3.1-70B-Instruct", "V100-16GB", gpu_memory_utilization=0.95) is None


def test_unknown_inputs_raise():
    with pytest.raises(ValueError):
        estimate("facebook/opt-125m", "L4")
    with pytest.raises(ValueError):
        estimate("Qwen/Qwen3-8B", "RTX-2080-Ti")
