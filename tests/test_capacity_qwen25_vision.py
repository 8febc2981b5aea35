"""The vision encoder's profiling pass of Qwen2.5-VL (vLLM 0.22.1+, V1): a video of up to 14 frames of the largest
image, computed from vLLM's code (qwen2_vl.py, qwen2_5_vl.py, encoder_budget.py), pinned on both sides of its
release boundary. Not a calibrated case: the one 0.23.0 log of Qwen2.5-VL-7B read for it could not be attributed to
a repository (see docs/capacity.md, "The reserve")."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllmlint.capacity.estimate import (
    GiB,
    QWEN2_VL_MAX_FRAMES_PER_VIDEO,
    estimate,
    qwen2_vl_video_tokens,
    vision_profile_bytes,
)
from vllmlint.capacity.hfconfig import QWEN2_VISION_MAX_PIXELS, model_from_config_json, vision_tower
from vllmlint.capacity.specs import find_gpu
from conftest import capacity_workload

CONFIG = Path(__file__).parent.parent / "vllmlint_dev" / "model_configs" / "Qwen__Qwen2.5-VL-7B-Instruct.json"
PIXELS_PER_PATCH = 3 * 2 * 14 * 14  # channels x temporal patch x patch^2


@pytest.fixture(scope="module")
def qwen25vl():
    return model_from_config_json(json.loads(CONFIG.read_text(encoding="utf-8"))["config"], "Qwen/Qwen2.5-VL-7B-Instruct")


def _profile(model, version="0.23.0", max_model_len=128000, tp=1, **limits):
    return vision_profile_bytes(model, tp, 2, max_model_len=max_model_len, max_num_batched_tokens=2048, max_num_seqs=256,
                                version=version, **limits)


def test_the_qwen25_vl_config_gives_the_windowed_tower(qwen25vl):
    vision = qwen25vl.vision
    assert (vision.family, vision.depth, vision.hidden_size, vision.intermediate_size, vision.num_heads) == (
        "qwen2_5_vl", 32, 1280, 3420, 16)
    assert (vision.in_channels, vision.out_hidden_size, vision.deepstack_layers) == (3, 3584, 0)  # `in_chans` read
    # 12845056 pixels in patches of 14 merged 2 x 2: 16384 tokens per image
    assert vision.max_pixels == QWEN2_VISION_MAX_PIXELS and vision.max_tokens_per_image == 16384


def test_other_towers_get_no_profiled_shape():
    config = json.loads(CONFIG.read_text(encoding="utf-8"))["config"]
    assert vision_tower(dict(config, model_type="llava"), 3584) is None
    assert vision_tower(dict(config, vision_config=dict(config["vision_config"], intermediate_size=None)), 3584) is None
    # Qwen2-VL's vision_config has no `embed_dim` / `mlp_ratio` here: no shape rather than a guessed one
    assert vision_tower(dict(config, model_type="qwen2_vl"), 3584) is None


# A Qwen2-VL config shaped like Qwen2-VL-7B-Instruct's (the tower's width is `embed_dim`, its output `hidden_size`).
QWEN2_VL_CONFIG = {
    "architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl", "hidden_size": 3584,
    "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
    "vocab_size": 152064, "max_position_embeddings": 32768, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
    "vision_config": {"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16, "in_chans": 3,
                      "hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2},
}


def test_the_qwen2_vl_pass_uses_its_own_mlp():
    model = model_from_config_json(QWEN2_VL_CONFIG, "Qwen/Qwen2-VL-7B-Instruct")
    vision = model.vision
    assert (vision.family, vision.hidden_size, vision.intermediate_size, vision.out_hidden_size) == (
        "qwen2_vl", 1280, 5120, 3584)
    # max_model_len 32768: 4 frames, 2 x 16384 tokens
    patches = 2 * 16384 * 4
    pixels = patches * PIXELS_PER_PATCH * 2
    peak, kept = _profile(model, max_model_len=32768)
    # fc1 and QuickGELU's native temporaries, 2d + 3I (17920), over the attention's 11d (14080)
    assert peak == pixels + patches * 2 * (80 + 2 * 1280 + 3 * 5120)
    assert kept == pixels + 2 * 16384 * 3584 * 2
    # --enforce-eager turns the custom op on: its kernel writes one output, 2d + 2I (12800) < 11d
    eager, _ = _profile(model, max_model_len=32768, enforce_eager=True)
    assert eager == pixels + patches * 2 * (80 + 11 * 1280)
    # from 0.16.0 (the block code read is the same to 0.33.0); not before
    assert _profile(model, version="0.16.0", max_model_len=32768)[0] == peak
    assert _profile(model, version="0.14.1", max_model_len=32768) == (0, 0)
    tower = estimate(model, find_gpu("A100-80GB"), vllm_version="0.23.0", max_model_len=32768)
    assert tower.reserve_parts["activations"] == peak


def test_the_profiled_video_takes_as_many_frames_as_max_model_len_holds(qwen25vl):
    vision = qwen25vl.vision
    assert QWEN2_VL_MAX_FRAMES_PER_VIDEO == 14
    # 14 frames (7 temporal patches) of 16384 tokens: the encoder budget of 114688 tokens at max_model_len 128000
    assert qwen2_vl_video_tokens(vision, 128000) == 7 * 16384
    assert qwen2_vl_video_tokens(vision, 10**6) == 7 * 16384  # at most 14 frames
    assert qwen2_vl_video_tokens(vision, 32768) == 2 * 16384  # 4 frames fit, a 5th would need 3 x 16384
    assert qwen2_vl_video_tokens(vision, 32767) == 16384
    assert qwen2_vl_video_tokens(vision, 4096) == 16384  # one frame pair even beyond max_model_len


def test_the_encoder_pass_is_computed_from_the_towers_code(qwen25vl):
    peak, kept = _profile(qwen25vl)
    patches = 7 * 16384 * 4
    pixels = patches * PIXELS_PER_PATCH * 2
    # rotary cos/sin (head_dim 80) and the MLP peak 5d + 3I (16660 per patch) over the attention's 11d (14080)
    assert peak == pixels + patches * 2 * (80 + 5 * 1280 + 3 * 3420)
    assert kept == pixels + 7 * 16384 * 3584 * 2
    assert round(peak / GiB, 2) == 15.31
    # TP 2 shards qkv and the MLP: the per-patch peak becomes max(2d + 9d/2, 5d + 3I/2)
    tp2, _ = _profile(qwen25vl, tp=2)
    assert tp2 == pixels + patches * 2 * (80 + 5 * 1280 + 3 * 1710)


def test_the_limits_choose_the_modality(qwen25vl):
    video, _ = _profile(qwen25vl)
    image, _ = _profile(qwen25vl, video_limit=0)  # videos off: one image of 16384 tokens
    assert image == 16384 * 4 * (PIXELS_PER_PATCH * 2 + 2 * (80 + 5 * 1280 + 3 * 3420))
    assert image < video
    assert _profile(qwen25vl, mm_limit=0, video_limit=0) == (0, 0)
    # a shorter max_model_len profiles a shorter video
    assert _profile(qwen25vl, max_model_len=32768)[0] < video


@pytest.mark.parametrize("version, v1, modelled", [
    ("0.21.0", True, False),  # the block and attention code read differ before 0.22.1
    ("0.22.1", True, True),
    ("0.33.0", True, True),
    ("0.23.0", False, False),  # no V0 path modelled
])
def test_the_qwen25_vl_term_starts_at_0_22_1(qwen25vl, version, v1, modelled):
    peak, _ = vision_profile_bytes(qwen25vl, 1, 2, max_model_len=128000, max_num_batched_tokens=2048, max_num_seqs=256,
                                   version=version, v1_engine=v1)
    assert (peak > 0) == modelled


def test_the_estimate_carries_the_pass_and_says_so(qwen25vl):
    a100 = find_gpu("A100-80GB")
    after = estimate(qwen25vl, a100, gpu_memory_utilization=0.22, vllm_version="0.23.0")
    before = estimate(qwen25vl, a100, gpu_memory_utilization=0.22, vllm_version="0.21.0")
    skipped = estimate(qwen25vl, a100, gpu_memory_utilization=0.22, vllm_version="0.23.0", skip_mm_profiling=True)
    assert round(after.reserve_parts["activations"] / GiB, 2) == 15.31
    assert before.reserve_parts["activations"] < GiB and skipped.reserve_parts["activations"] < GiB
    assert any("114688-token dummy video" in note for note in after.notes)
    assert not any("dummy video" in note for note in before.notes)
    # an unattributed 0.23.0 log of this run (A100-SXM4-80GB, --gpu-memory-utilization 0.22, defaults otherwise)
    # prints "Available KV cache memory: -14.28 GiB" with "Model loading took 15.67 GiB": the estimate's reserve
    # (weights aside, which it sizes 0.22 GiB lighter) is within 0.1 GiB of the reserve that log implies
    logged_reserve = 0.22 * a100.total_bytes / GiB - 15.67 + 14.28
    assert after.reserve_bytes / GiB == pytest.approx(logged_reserve, abs=0.1)


def _workload(args: list[str]):
    return capacity_workload("vllm/vllm-openai:v0.23.0", "Qwen/Qwen2.5-VL-7B-Instruct", args)


@pytest.mark.parametrize("args, images, videos", [
    ([], None, None),
    (["--limit-mm-per-prompt", '{"image": 0, "video": 1}'], 0, 1),
    (["--limit-mm-per-prompt", "image=3,video=0"], 3, 0),
    (["--limit-mm-per-prompt", '{"video": {"count": 2}}'], 999, 2),
    (["--language-model-only"], 0, 0),
])
def test_the_workload_reads_the_video_limit(args, images, videos):
    work = _workload(args)
    assert (work.mm_image_limit, work.mm_video_limit) == (images, videos)
    assert work.estimate_kwargs()["mm_video_limit"] == videos


def test_an_unreadable_video_limit_makes_the_estimate_inputs_unknown():
    assert not _workload(["--limit-mm-per-prompt", '{"image": 1, "video": "x"}']).estimate_inputs_known()


def test_qwen2_vl_tower_weights_use_embed_dim_not_the_merger_output():
    from vllmlint.capacity.hfconfig import vision_parameters

    h, inner, out, merged = 1280, 5120, 3584, 1280 * 4
    per_layer = 4 * h * h + 4 * h + 2 * h * inner + inner + h + 4 * h  # qkv/proj, fc1/fc2, two LayerNorms
    patch = 3 * 14 * 14 * 2 * h + 2 * h
    merger = merged * merged + merged + merged * out + out + h
    assert vision_parameters(QWEN2_VL_CONFIG, 3584) == 32 * per_layer + patch + merger  # 0.68B, not 5.2B at h 3584
