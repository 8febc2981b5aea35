"""What vLLM's startup memory profiling would conclude, computed from the catalogs instead of a GPU.

vLLM (both engines) sizes the KV cache per GPU as

    gpu_memory_utilization x total device memory            (the budget)
      - model weights held by this rank
      - memory the profiling run saw besides weights          (the reserve: activation peak,
        non-torch allocations, and since 0.21 the estimated CUDA-graph pool)
    = memory for KV cache blocks

and refuses to start when that leaves no room for one max_model_len sequence.  Everything here is in
bytes; gib() formats.  docs/capacity.md explains each term and where its figure comes from.
"""
from __future__ import annotations

import math

from vllmlint.records import dataclass, field

from vllmlint.capacity.specs import (
    GPU,
    QUANTIZED_LINEAR_BYTES,
    GiB,
    ModelSpec,
    QuantScheme,
    find_gpu,
    kv_heads_per_rank,
    LayerParams,
    layer_params,
    state_bytes_per_sequence,
    VisionTower,
)
from vllmlint.capacity.hfconfig import checkpoint_quantization_name, linear_weight_bytes
from vllmlint.vllm.release import release_numbers

# --------------------------------------------------------------------------- versions

def default_gpu_memory_utilization(version: str | tuple[int, ...] | None = None) -> float:
    """CacheConfig.gpu_memory_utilization default of the release, read from its catalog
    (`default_gpu_memory_utilization` in schemas/vllm/<release>.json, extracted from the wheels: 0.9 up to
    0.19.x, 0.92 from 0.20.0). The catalog that stands for the release is the one its flags are checked
    against (the release, a patch of the same minor release, else the nearest); None: the newest."""
    from vllmlint.vllm.flags import target_catalog

    numbers = release_numbers(version)
    release, _, _ = target_catalog(".".join(map(str, numbers)) if version is not None else None, None)
    value = getattr(release, "default_gpu_memory_utilization", None)
    if not isinstance(value, (int, float)):
        raise ValueError(f"the catalog of vLLM {getattr(release, 'version', '?')} has no "
                         "default_gpu_memory_utilization")
    return float(value)


# vLLM's minimum compute capability for NVIDIA GPUs, by release:
#   before 0.20.0: 7.0 - the GPU guide says "compute capability 7.0 or higher (e.g., V100, T4, ...)" up to
#     docs.vllm.ai/en/v0.14.0, and the PyPI wheels 0.14.1 - 0.19.1 still carry sm_70 kernels in _C / _moe_C;
#   from 0.20.0: 7.5 - the 0.20.0 wheel is the first with no sm_70 code (bisected over the PyPI wheels by
#     reading the CUDA fatbins of vllm/*.so), and the guide at v0.21.0 says "compute capability 7.5 or higher
#     (e.g., T4, RTX20xx, A100, L4, H100, B200, etc.)"; the audited 0.29 reference: "excluding V100 (7.0)".
CAPABILITY_FLOORS = (((0, 0, 0), (7, 0)), ((0, 20, 0), (7, 5)))


def capability_floor(version: str | tuple[int, ...] | None = None) -> tuple[int, int]:
    """The lowest compute capability the release's CUDA build supports (None: the newest release)."""
    if version is None:
        return CAPABILITY_FLOORS[-1][1]
    key = release_numbers(version)
    return [floor for start, floor in CAPABILITY_FLOORS if key >= start][-1]


def uses_v1_engine(version: str | tuple[int, ...] | None = None) -> bool:
    return release_numbers(version) >= (0, 8, 0)  # V1 became the default engine in 0.8.0


def cudagraphs_in_budget(version: str | tuple[int, ...] | None = None) -> bool:
    # "CUDA graph memory profiling is enabled (default since v0.21.0)" - vllm/v1/worker/gpu_worker.py
    return release_numbers(version) >= (0, 21, 0)


# --------------------------------------------------------------------------- bytes per parameter

_QUANT_ALIASES = {
    "awq_marlin": "awq", "gptq": "gptq-int4", "gptq_marlin": "gptq-int4", "gptq-int4": "gptq-int4",
    "gptq_int4": "gptq-int4", "gptq_int8": "gptq-int8", "w4a16": "int4", "w8a8": "int8", "w8a16": "int8",
    "fbgemm_fp8": "fp8", "modelopt": "fp8", "bitsandbytes": "bnb-4bit", "bnb_4bit": "bnb-4bit",
    "ptpc_fp8": "fp8", "experts_int8": "int8",
}
_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "auto": None, "float32": 4, "float": 4}
_FP8_KV = {"fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla"}


def canonical_quantization(quantization: str | None) -> str | None:
    """A vLLM --quantization value or a name suffix ('awq_marlin', 'GPTQ-Int4') as a key of QUANTIZED_LINEAR_BYTES.

    None/'none' -> None.  Raises ValueError for methods whose size this module does not know
    (e.g. 'compressed-tensors' without knowing its bits, 'gguf').
    """
    if quantization is None:
        return None
    key = str(quantization).strip().lower()
    if key in ("", "none", "null"):
        return None
    key = _QUANT_ALIASES.get(key, key)
    if key not in QUANTIZED_LINEAR_BYTES:
        raise ValueError(f"unknown weight size for quantization {quantization!r}")
    return key


def dtype_bytes(model: ModelSpec, dtype: str = "auto") -> int:
    """Activation/unquantized weight bytes: --dtype auto keeps 16-bit checkpoints at 2 bytes and casts float32 ones to float16."""
    size = _DTYPE_BYTES.get(str(dtype).lower())
    if size is not None:
        return size
    return 2


def kv_dtype_bytes(model: ModelSpec, kv_cache_dtype: str = "auto", dtype: str = "auto") -> int:
    if str(kv_cache_dtype).lower() in _FP8_KV:
        return 1
    return dtype_bytes(model, dtype)


# --------------------------------------------------------------------------- pipeline split


def pp_layer_ranges(num_layers: int, pp: int) -> list[range]:
    """Layers per pipeline rank as vLLM's get_pp_indices assigns them (extra layers go to the ranks before the last)."""
    base, extra = divmod(num_layers, pp)
    sizes = [base] * pp
    for i in range(2, extra + 2):
        sizes[-i] += 1
    ranges, start = [], 0
    for size in sizes:
        ranges.append(range(start, start + size))
        start += size
    return ranges


def _padded_vocab(vocab: int) -> int:
    return -(-vocab // 64) * 64  # VocabParallelEmbedding pads to a multiple of 64


# --------------------------------------------------------------------------- the estimate


@dataclass
class RankMemory:
    """One pipeline stage's view (every tensor-parallel rank of a stage holds the same amount)."""

    pp_rank: int
    layers: range
    weights_bytes: int
    reserve_bytes: int
    kv_bytes_per_token: int  # all layers at full length
    kv_bytes_per_sequence: int  # one max_model_len sequence, sliding-window layers bounded
    kv_cache_bytes: int
    reserve_parts: dict[str, int] = field(default_factory=dict)


@dataclass
class Estimate:
    model: ModelSpec
    gpu: GPU
    tensor_parallel_size: int
    pipeline_parallel_size: int
    gpu_memory_utilization: float
    vllm_version: tuple[int, int, int]
    max_model_len: int
    quantization: str | None
    kv_cache_dtype: str
    max_num_batched_tokens: int
    max_num_seqs: int
    total_bytes: int
    budget_bytes: int
    weights_bytes: int
    reserve_bytes: int
    reserve_parts: dict[str, int]
    kv_bytes_per_token: int
    kv_bytes_per_sequence: int
    kv_cache_bytes: int
    kv_tokens: int
    max_sequences: int
    ranks: list[RankMemory]
    notes: list[str]
    kv_cache_memory_bytes_override: int | None = None
    engine: str = "V1"  # "V0": the engine before 0.8.0, or VLLM_USE_V1=0 on 0.8 - 0.10
    hybrid_layout: HybridLayout | None = None  # a gated-DeltaNet hybrid's pages in 0.21 - 0.33 (hybrid_kv_layout)

    @property
    def fits(self) -> bool:
        """The weights alone fit in the budget (vLLM fails while loading or profiling otherwise)."""
        return self.weights_bytes <= self.budget_bytes

    @property
    def kv_ok(self) -> bool:
        """At least one max_model_len sequence fits in the KV cache (vLLM refuses to start otherwise)."""
        return self.fits and self.kv_tokens >= self.max_model_len

    @property
    def ok(self) -> bool:
        return self.fits and self.kv_ok

    @property
    def concurrency(self) -> float:
        """vLLM's 'Maximum concurrency for N tokens per request'."""
        return self.kv_cache_bytes / self.kv_bytes_per_sequence if self.kv_bytes_per_sequence else 0.0

    def reported_kv_tokens(self, block_size: int = 16) -> int:
        """vLLM's "GPU KV cache size: N tokens": whole blocks of every layer's bytes per token (sliding-window
        layers counted like full ones: kv_cache_utils.py get_kv_cache_config, `num_blocks // len(groups)
        * block_size` with the blocks sized over all layers; 0.11.0 line 1080)."""
        if self.hybrid_layout is not None:  # 0.21 - 0.33: max_concurrency x max_model_len (hybrid_kv_layout)
            blocks = self.kv_cache_bytes // self.hybrid_layout.block_bytes
            return int(blocks / self.hybrid_layout.blocks_per_request * self.max_model_len)
        per_block = self.kv_bytes_per_token * block_size
        return int(self.kv_cache_bytes // per_block * block_size) if per_block else 0

    @property
    def breakdown(self) -> str:
        lines = [
            f"{self.model.id} on {self.tensor_parallel_size * self.pipeline_parallel_size} x {self.gpu.id}"
            f" (TP {self.tensor_parallel_size}, PP {self.pipeline_parallel_size}),"
            f" vLLM {'.'.join(map(str, self.vllm_version))}, max_model_len {self.max_model_len}",
            f"  GPU total (CUDA)        {gib(self.total_bytes):>9}",
            f"  budget x {self.gpu_memory_utilization:<4}          {gib(self.budget_bytes):>9}",
            f"  weights per GPU         {gib(self.weights_bytes):>9}"
            f"  ({self.quantization or self.model.torch_dtype})",
        ]
        for name, size in self.reserve_parts.items():
            lines.append(f"  reserve: {name:<14} {gib(size):>9}")
        kv_line = "  KV cache                {:>9}".format(gib(self.kv_cache_bytes))
        if self.kv_cache_memory_bytes_override is not None:
            kv_line += "  (kv_cache_memory_bytes)"
        lines.append(kv_line)
        lines.append(
            f"  KV per token per GPU    {self.kv_bytes_per_token / 1024:>8.1f} KiB"
            f"  ({self.kv_cache_dtype}); {self.kv_tokens:,} tokens,"
            f" {self.max_sequences} sequences of {self.max_model_len}"
        )
        verdict = "fits" if self.ok else ("weights fit, KV cache too small" if self.fits else "does not fit")
        lines.append(f"  => {verdict}")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)


def gib(size: float) -> str:
    """Bytes as 'N.NN GiB'."""
    return f"{size / GiB:.2f} GiB"


def to_gib(size: float) -> float:
    return size / GiB


# Reserve figures.  docs/capacity.md ("Calibration") gives the start-up logs behind each one
# (tests/data/startup-logs/, python -m vllmlint_dev.startup_logs).
SAMPLER_BYTES_PER_LOGIT_V0 = 38  # V0 profile run samples max_num_seqs rows with top-p/top-k (sort of fp32 logits)
SAMPLER_BYTES_PER_LOGIT_V1 = 12  # V1 dummy sampler run with FlashInfer top-k/top-p (fitted, 0.10-0.11 logs)
# V1 dummy sampler run on the PyTorch-native top-k/top-p (vllm/v1/sample/ops/topk_topp_sampler.py,
# apply_top_k_top_p: bf16 logits 2 + fp32 logits 4 + sorted values 4 + int64 indices 8 + softmax/cumsum 4
# + masks, scatter and the sort's scratch): 38.4-38.9 bytes per logit in the 0.14 H100 logs.
SAMPLER_BYTES_PER_LOGIT_NATIVE = 39
NON_TORCH_BYTES = int(0.13 * GiB)  # cuBLAS/attention workspaces seen as "non_torch_memory" (0.02-0.14 GiB, TP 1)
# NCCL channels and custom all-reduce IPC buffers are allocated per peer of the tensor-parallel group: the logs
# show 0.25-0.55 GiB per rank at TP 2, ~1.0 GiB at TP 4 (x PP 2), 2.1 GiB at TP 8 (docs/capacity.md).
TP_PEER_NON_TORCH_BYTES = int(0.28 * GiB)
PP_NON_TORCH_BYTES = int(0.1 * GiB)  # the pipeline stages' send/receive communicators
MULTI_GPU_NON_TORCH_BYTES = TP_PEER_NON_TORCH_BYTES  # kept for callers: the figure of a 2-GPU group
CUDA_CONTEXT_BYTES = int(0.4 * GiB)  # counted against the budget only before 0.6.5 (PR #10511 excluded it)
CUDAGRAPH_BYTES = int(0.5 * GiB)  # the default capture set of a 7-8B model; 0.21+ uses cudagraph_estimate_bytes()
MAX_PARALLEL_SIZE = 2**16  # beyond any cluster: larger sizes are not estimated


def default_scheduler_limits(gpu: GPU, max_model_len: int, version: tuple[int, int, int],
                             v1_engine: bool | None = None) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) `vllm serve` would pick; the profiling run uses both."""
    if not (uses_v1_engine(version) if v1_engine is None else v1_engine):
        # V0 (vllm/config.py SchedulerConfig): chunked prefill on by default only beyond 32k context.
        tokens = 512 if max_model_len > 32768 else max(max_model_len, 2048)
        return tokens, 256
    total_gib = gpu.cuda_total_gib
    if total_gib >= 160:
        return 16384, 1024
    if total_gib >= 70 and not gpu.id.startswith("A100"):
        return 8192, 1024
    return 2048, 256


def _activation_bytes_per_token(model: ModelSpec, tp: int, act_bytes: int) -> int:
    """Largest transient per batched token in one layer's forward (vLLM frees each layer's activations)."""
    hidden = model.hidden_size
    heads = -(-model.num_attention_heads // tp)
    if model.is_mla:
        nope, rope, v = model.qk_nope_head_dim or 0, model.qk_rope_head_dim or 0, model.v_head_dim or 0
        attention = heads * (nope + rope) + heads * (nope + v) + (model.kv_lora_rank or 0) + rope
    else:
        attention = (heads + 2 * kv_heads_per_rank(model, tp)) * model.head_dim
    mlp = 0
    if not model.is_moe or model.first_dense_layers:
        mlp = 3 * -(-model.intermediate_size // tp)  # gate_up output (2I) + activation output (I)
    if model.is_moe:
        moe_local = -(-model.moe_intermediate_size // tp)
        # fused_moe workspaces: tokens x top_k x (2I + I + hidden)
        mlp = max(mlp, model.experts_per_token * (3 * moe_local + hidden) + 3 * model.shared_experts * moe_local)
    return act_bytes * (2 * hidden + attention + mlp)


def _rank_weights(model: ModelSpec, layers: range, tp: int, first: bool, last: bool,
                  linear_bytes: float | QuantScheme, other_bytes: int) -> int:
    total = 0.0
    # A layer's parameters depend on its token mixer and whether its MLP is MoE (`layer_params`): each shape
    # is counted once, and the sum still adds layer by layer (the same float additions, in the same order).
    shapes: dict[tuple[str, bool], tuple[LayerParams, float]] = {}
    for layer in layers:
        shape = (model.layer_kind(layer), model.is_moe_layer(layer))
        known = shapes.get(shape)
        if known is None:
            params = layer_params(model, layer, tp)
            known = shapes[shape] = (params, params.linear * linear_bytes + params.other * other_bytes
                                     if not isinstance(linear_bytes, QuantScheme) else 0.0)
        params, size = known
        if isinstance(linear_bytes, QuantScheme):  # the checkpoint's own, per module (partial quantization)
            total += linear_bytes.layer_bytes(params, layer, other_bytes) + params.other * other_bytes
        else:
            total += size
    if first and model.vision_parameters:
        total += -(-model.vision_parameters // tp) * other_bytes  # the vision tower, sharded, unquantized
    vocab_rows = -(-_padded_vocab(model.vocab_size) // tp)
    embed_bytes: float = other_bytes
    if isinstance(linear_bytes, QuantScheme) and linear_bytes.embedding_bytes is not None:
        embed_bytes = linear_bytes.embedding_bytes  # a GGUF file's quantized token_embd / output tensors
    embedding = vocab_rows * model.hidden_size * embed_bytes  # vocab-parallel: 1/tp of the rows per rank
    if first:
        total += embedding
    if last:
        total += model.hidden_size * other_bytes  # final norm
        if not model.tie_word_embeddings or not first:
            total += embedding  # lm_head (a tied head is its own copy on a later pipeline stage)
    return int(total)


def _kv_per_token_layer(model: ModelSpec, tp: int, kv_bytes: int, layer: int | None = None) -> int:
    if layer is not None and model.layer_kind(layer) in ("linear", "mamba", "mamba2"):
        return 0  # a state layer caches per sequence (state_bytes_per_sequence), not per token
    if model.is_mla:
        # One latent (kv_lora_rank) plus the shared rope key per token and layer, replicated on every TP rank.
        return ((model.kv_lora_rank or 0) + (model.qk_rope_head_dim or 0)) * kv_bytes
    return 2 * kv_heads_per_rank(model, tp) * model.head_dim * kv_bytes


def estimate(
    model: ModelSpec | str,
    gpu: GPU | str,
    *,
    tensor_parallel_size: int = 1,
    pipeline_parallel_size: int = 1,
    gpu_memory_utilization: float | None = None,
    vllm_version: str | tuple[int, ...] | None = None,
    max_model_len: int | None = None,
    dtype: str = "auto",
    quantization: str | None = None,
    kv_cache_dtype: str = "auto",
    kv_cache_memory_bytes: int | None = None,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    enforce_eager: bool = False,
    cudagraph_bytes: int | None = None,
    flashinfer_sampler: bool | None = None,
    v1_engine: bool | None = None,
    mm_image_limit: int | None = None,
    mm_video_limit: int | None = None,
    skip_mm_profiling: bool = False,
    mm_encoder_data_parallel: bool = False,
    enable_prefix_caching: bool | None = None,
) -> Estimate:
    """Per-GPU memory plan for serving `model` on `gpu` x (TP x PP), the way vLLM's startup would size it.

    model: a ModelSpec, or a name resolve_model() understands (its quantization suffix is used
    when `quantization` is not given).  gpu: a GPU or a catalog id / node-label spelling.
    gpu_memory_utilization None -> the release default (0.9 before 0.20, 0.92 after).
    quantization None -> the checkpoint's own (FP8 for DeepSeek-V3/R1), else unquantized.
    flashinfer_sampler None -> what the release's official image runs (sampler_bytes_per_logit); False for an
    install without FlashInfer (the log says "FlashInfer is not available. Falling back to the PyTorch-native").
    v1_engine None -> the release's default engine (V1 from 0.8.0); False for VLLM_USE_V1=0 on 0.8 - 0.10.
    mm_image_limit: the images a prompt may hold (`--limit-mm-per-prompt`; None: vLLM's default 999; 0 with
    `--language-model-only`); mm_video_limit: the videos a prompt may hold (the same flag; None: 999);
    skip_mm_profiling: `--skip-mm-profiling`; mm_encoder_data_parallel:
    `--mm-encoder-tp-mode data` (the tower unsharded on every rank, `is_vit_use_data_parallel`,
    vllm/model_executor/models/vision.py line 142 in 0.23.0). They shape the vision encoder's profiling pass.
    enable_prefix_caching: `--enable-prefix-caching` / `--no-enable-prefix-caching` (None: the release's default);
    it sets a gated-DeltaNet hybrid's mamba_cache_mode and so its blocks per request (hybrid_kv_layout).
    """
    if isinstance(model, str):
        from vllmlint.capacity.names import resolve_model

        match = resolve_model(model)
        if match is None:
            raise ValueError(f"unknown model {model!r}")
        model = match.model
        if quantization is None:
            quantization = match.quantization
    if isinstance(gpu, str):
        found = find_gpu(gpu)
        if found is None:
            raise ValueError(f"unknown GPU {gpu!r}")
        gpu = found
    tp, pp = int(tensor_parallel_size), int(pipeline_parallel_size)
    if tp < 1 or pp < 1:
        raise ValueError("tensor_parallel_size and pipeline_parallel_size must be >= 1")
    if tp > MAX_PARALLEL_SIZE or pp > MAX_PARALLEL_SIZE:
        # One pipeline stage is sized per rank: a million stages would take minutes and gigabytes.
        raise ValueError(f"tensor_parallel_size and pipeline_parallel_size must be at most {MAX_PARALLEL_SIZE}")

    version = release_numbers(vllm_version)
    dtype = resolved_dtype(model, gpu, dtype, version)
    utilization = gpu_memory_utilization if gpu_memory_utilization is not None else default_gpu_memory_utilization(version)
    max_len = int(max_model_len or model.max_position_embeddings)
    quant = canonical_quantization(checkpoint_quantization_name(model, quantization))
    act_bytes = dtype_bytes(model, dtype)
    linear_bytes = linear_weight_bytes(model, quant, act_bytes)
    kv_bytes = kv_dtype_bytes(model, kv_cache_dtype, dtype)

    v1 = uses_v1_engine(version) if v1_engine is None else bool(v1_engine)
    default_tokens, default_seqs = default_scheduler_limits(gpu, max_len, version, v1)
    batched_tokens = int(max_num_batched_tokens or default_tokens)
    num_seqs = int(max_num_seqs or default_seqs)

    total = gpu.total_bytes
    budget = int(total * utilization)
    per_token_activation = _activation_bytes_per_token(model, tp, act_bytes)
    sampler_rows = min(num_seqs, batched_tokens)
    sampler = sampler_bytes(sampler_rows, model.vocab_size, version, gpu=gpu, act_bytes=act_bytes,
                            flashinfer_sampler=flashinfer_sampler, v1_engine=v1)

    encoder_peak = encoder_kept = 0
    if not skip_mm_profiling:
        encoder_peak, encoder_kept = vision_profile_bytes(
            model, 1 if mm_encoder_data_parallel else tp, act_bytes, max_model_len=max_len, max_num_batched_tokens=batched_tokens,
            max_num_seqs=num_seqs, version=version, v1_engine=v1,
            mm_limit=DEFAULT_MM_LIMIT_PER_PROMPT if mm_image_limit is None else int(mm_image_limit),
            video_limit=DEFAULT_MM_LIMIT_PER_PROMPT if mm_video_limit is None else int(mm_video_limit),
            enforce_eager=enforce_eager)

    ranks: list[RankMemory] = []
    layouts: dict[int, HybridLayout] = {}
    layer_ranges = pp_layer_ranges(model.num_hidden_layers, pp)
    for index, layers in enumerate(layer_ranges):
        first, last = index == 0, index == pp - 1
        weights = _rank_weights(model, layers, tp, first, last, linear_bytes, act_bytes)
        parts: dict[str, int] = {}
        forward = batched_tokens * per_token_activation
        parts["activations"] = max(forward, sampler if last else 0)  # the sampler runs after the forward pass has freed its buffers
        if first and encoder_peak:
            # the vision encoder's profiling pass runs first; its pixel values and outputs stay through the rest
            parts["activations"] = max(encoder_peak, parts["activations"] + encoder_kept)
        parts["non-torch"] = non_torch_bytes(tp, pp) + allreduce_fusion_workspace_bytes(
            model.hidden_size, act_bytes, tp, pp, batched_tokens, version, gpu, enforce_eager)
        if version < (0, 6, 5):
            parts["CUDA context"] = CUDA_CONTEXT_BYTES
        if cudagraphs_in_budget(version) and not enforce_eager:
            parts["CUDA graphs"] = (cudagraph_estimate_bytes(per_token_activation, num_seqs, batched_tokens, version,
                                                             gpu.capability)
                                    if cudagraph_bytes is None else int(cudagraph_bytes))
        reserve = sum(parts.values())

        per_token = per_sequence = 0
        kv_shapes: dict[tuple[str, bool], tuple[int, int]] = {}  # the same per token mixer (integers: exact)
        for layer in layers:
            shape = (model.layer_kind(layer), model.is_sliding_layer(layer))
            known = kv_shapes.get(shape)
            if known is None:
                size = _kv_per_token_layer(model, tp, kv_bytes, layer)
                window = model.sliding_window if shape[1] else None
                known = kv_shapes[shape] = (size, size * sequence_tokens(model, window, max_len, batched_tokens,
                                                                         version, v1))
            per_token += known[0]
            per_sequence += known[1]
        if kv_cache_memory_bytes is not None:
            kv_cache = int(kv_cache_memory_bytes)
        else:
            kv_cache = max(0, budget - weights - reserve)
        per_sequence += state_bytes_per_sequence(model, layers, tp, act_bytes)  # hybrid models: state per sequence
        layout = hybrid_kv_layout(model, layers, tp, kv_bytes, act_bytes, max_len, version, v1,
                                  enable_prefix_caching=enable_prefix_caching, compute_capability=gpu.capability)
        if layout is not None:
            per_sequence = layout.block_bytes * layout.blocks_per_request
            layouts[index] = layout
        ranks.append(RankMemory(index, layers, weights, reserve, per_token, per_sequence, kv_cache, parts))

    def tokens_of(rank: RankMemory) -> int:
        if not rank.kv_bytes_per_sequence:
            return 0
        return int(rank.kv_cache_bytes * max_len // rank.kv_bytes_per_sequence)

    binding = min(ranks, key=tokens_of)  # vLLM takes the smallest block count over all workers
    heaviest = max(ranks, key=lambda rank: rank.weights_bytes)
    kv_tokens = tokens_of(binding)
    max_sequences = binding.kv_cache_bytes // binding.kv_bytes_per_sequence if binding.kv_bytes_per_sequence else 0

    notes = _notes(model, gpu, tp, pp, max_len, quant, kv_cache_dtype, dtype, version, utilization, gpu_memory_utilization)
    if encoder_peak and ranks[0].reserve_parts.get("activations") == encoder_peak and model.vision is not None:
        video_limit = DEFAULT_MM_LIMIT_PER_PROMPT if mm_video_limit is None else int(mm_video_limit)
        if model.vision.family in ("qwen2_5_vl", "qwen2_vl") and video_limit > 0:
            notes.append(f"activations: the vision encoder's profiling pass on a "
                         f"{qwen2_vl_video_tokens(model.vision, max_len)}-token dummy video ({gib(encoder_peak)}); "
                         "a smaller --max-model-len, --limit-mm-per-prompt '{\"video\": 0}' or --skip-mm-profiling "
                         "shrink it")
        else:
            notes.append(f"activations: the vision encoder's profiling pass on a {model.vision.max_tokens_per_image}-token "
                         f"dummy image ({gib(encoder_peak)}); --limit-mm-per-prompt '{{\"image\": 0}}' or "
                         "--skip-mm-profiling leave it out")
    if kv_cache_memory_bytes is not None and heaviest.weights_bytes + heaviest.reserve_bytes + int(kv_cache_memory_bytes) > total:
        notes.append("kv_cache_memory_bytes ignores gpu_memory_utilization: weights + reserve + this KV cache exceed the GPU")
    return Estimate(
        model=model,
        gpu=gpu,
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        gpu_memory_utilization=utilization,
        vllm_version=version,
        max_model_len=max_len,
        quantization=quant,
        kv_cache_dtype=kv_cache_dtype,
        max_num_batched_tokens=batched_tokens,
        max_num_seqs=num_seqs,
        total_bytes=total,
        budget_bytes=budget,
        weights_bytes=heaviest.weights_bytes,
        reserve_bytes=binding.reserve_bytes,
        reserve_parts=dict(binding.reserve_parts),
        kv_bytes_per_token=binding.kv_bytes_per_token,
        kv_bytes_per_sequence=binding.kv_bytes_per_sequence,
        kv_cache_bytes=binding.kv_cache_bytes,
        kv_tokens=kv_tokens,
        max_sequences=int(max_sequences),
        ranks=ranks,
        notes=notes,
        kv_cache_memory_bytes_override=kv_cache_memory_bytes,
        engine="V1" if v1 else "V0",
        hybrid_layout=layouts.get(binding.pp_rank),
    )


def _notes(model: ModelSpec, gpu: GPU, tp: int, pp: int, max_len: int, quant: str | None, kv_cache_dtype: str,
           dtype: str, version: tuple[int, int, int], utilization: float, given_utilization: float | None) -> list[str]:
    notes = []
    capability = gpu.capability
    if given_utilization is None:
        notes.append(f"gpu_memory_utilization defaults to {utilization} in vLLM {'.'.join(map(str, version))}")
    if model.num_attention_heads % tp:
        notes.append(f"vLLM requires num_attention_heads ({model.num_attention_heads}) divisible by tensor_parallel_size ({tp})")
    if model.num_key_value_heads < tp:
        notes.append(f"{model.num_key_value_heads} KV heads < TP {tp}: each rank holds a replicated KV head")
    if pp > model.num_hidden_layers:
        notes.append(f"pipeline_parallel_size {pp} exceeds the {model.num_hidden_layers} layers")
    if max_len > model.max_position_embeddings:
        notes.append(f"max_model_len {max_len} exceeds max_position_embeddings {model.max_position_embeddings};"
                     " vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
    floor = capability_floor(version)
    if capability < floor:
        notes.append(f"{gpu.id} has compute capability {gpu.compute_capability}: vLLM {'.'.join(map(str, version))}"
                     f" supports {floor[0]}.{floor[1]}+ (V100 ran up to 0.19.x)")
    if not gpu.bf16 and model.torch_dtype == "bfloat16" and dtype in ("auto", "bfloat16"):
        notes.append(f"{gpu.id} (compute capability {gpu.compute_capability}) has no bfloat16:"
                     " --dtype bfloat16 fails; auto/half runs in float16 (same size)")
    if quant == "fp8" and capability < (7, 5):
        notes.append(f"FP8 weights need compute capability 7.5+ (weight-only Marlin; 8.0+ in releases up to 0.6)"
                     f" or 8.9+ (native); {gpu.id} is {gpu.compute_capability}")
    elif quant == "fp8" and not gpu.fp8:
        notes.append(f"{gpu.id} (compute capability {gpu.compute_capability}) has no native FP8 (8.9+): vLLM runs FP8"
                     " weights weight-only (Marlin, 7.5+), saving memory but not compute")
    if quant in ("awq", "gptq-int4", "int4") and capability < (7, 5):
        notes.append(f"vLLM's AWQ/4-bit kernels need compute capability 7.5+; {gpu.id} is {gpu.compute_capability}")
    if str(kv_cache_dtype).lower() in _FP8_KV and capability < (8, 0):
        notes.append(f"FP8 KV cache is not supported on compute capability {gpu.compute_capability}")
    if model.sliding_window and model.sliding_window_layers != "none":
        notes.append(f"sliding-window layers ({model.sliding_window_layers}) hold at most {model.sliding_window} tokens per sequence;"
                     " releases before the V1 hybrid KV cache manager allocated them at full length")
    return notes


def smallest_tp_that_fits(
    model: ModelSpec | str,
    gpu: GPU | str,
    *,
    max_tp: int = 8,
    require_kv: bool = True,
    **kwargs,
) -> Estimate | None:
    """The estimate for the smallest tensor-parallel size (1, 2, 4, 8, ... up to max_tp, dividing the head count) that fits, or None."""
    tp = 1
    while tp <= max_tp:
        result = estimate(model, gpu, tensor_parallel_size=tp, **kwargs)
        if result.model.num_attention_heads % tp == 0 and (result.ok if require_kv else result.fits):
            return result
        tp *= 2
    return None


__all__ = [
    "Estimate", "RankMemory", "estimate", "smallest_tp_that_fits", "gib", "to_gib",
    "default_gpu_memory_utilization", "capability_floor", "canonical_quantization", "pp_layer_ranges",
    "QUANTIZED_LINEAR_BYTES",
]


# --------------------------------------------------------------------------- the dtype vLLM runs in

def in_release_period(period: dict, version: str | tuple[int, ...] | None) -> bool:
    """Whether a release lies in a `{from, before}` period of the data files (None: the newest release)."""
    key = release_numbers(version)
    return release_numbers(str(period["from"])) <= key and ("before" not in period
                                                           or key < release_numbers(str(period["before"])))


def fp16_unsupported(model: ModelSpec, version: str | tuple[int, ...] | None) -> bool:
    """vLLM refuses float16 for this model's type in this release (`_FLOAT16_NOT_SUPPORTED_MODELS`)."""
    from vllmlint.capacity.specs import model_type_of, vllm_gpu_support

    model_type = model_type_of(model)
    return model_type is not None and any(
        in_release_period(p, version) and model_type in p["model_types"] for p in vllm_gpu_support()["fp16_unsupported"])


def resolved_dtype(model: ModelSpec, gpu: GPU, dtype: str, version: str | tuple[int, ...] | None) -> str:
    """The dtype vLLM runs the model in, where it differs from what `dtype` says by itself: `--dtype auto`
    on a GPU without bfloat16 leaves only float32 for the model types vLLM refuses in float16
    (`_resolve_auto_dtype`, 0.9.1+), doubling weights, activations and KV cache."""
    if str(dtype).lower() == "auto" and not gpu.bf16 and fp16_unsupported(model, version):
        return "float32"
    return dtype


def min_capability(method: str | None, version: str | tuple[int, ...] | None) -> tuple[int, int] | None:
    """The quantization method's get_min_capability() in this release, as (major, minor); None when the
    data does not say (an unknown method, or a release no period covers)."""
    from vllmlint.capacity.specs import vllm_gpu_support

    for entry in vllm_gpu_support()["quantization_min_capability"]:
        if entry["method"] == str(method or "").lower():
            for period in entry["periods"]:
                if in_release_period(period, version):
                    return divmod(int(period["min"]), 10)
    return None


# --------------------------------------------------------------------------- reserves by release (calibration)

# Which top-k/top-p sampler vLLM's dummy sampler run uses (the profile run's last allocation peak):
#   0.8 - 0.11.0: FlashInfer when installed (`elif envs.VLLM_USE_FLASHINFER_SAMPLER is not False`,
#     vllm/v1/sample/ops/topk_topp_sampler.py line 46 in 0.11.0); the official images ship it;
#   0.11.1 - 0.20.x: PyTorch-native unless VLLM_USE_FLASHINFER_SAMPLER=1 (PR #26859: `if
#     envs.VLLM_USE_FLASHINFER_SAMPLER:`, topk_topp_sampler.py line 34 in 0.11.1, line 39 in 0.17.0; the variable
#     defaults to None, vllm/envs.py line 48: "Users must opt in explicitly");
#   0.21 on: FlashInfer (`VLLM_USE_FLASHINFER_SAMPLER: bool = True`, vllm/envs.py line 48 in 0.21.0) on CUDA GPUs
#     FlashInferBackend supports (compute capability 7.5 - 12.1, vllm/v1/attention/backends/flashinfer.py line 409),
#     the PyTorch-native sampler elsewhere (topk_topp_sampler.py lines 39-72 in 0.21.0; ROCm is not `is_cuda()`).
NATIVE_SAMPLER_RELEASES = ((0, 11, 1), (0, 21, 0))
# The PyTorch-native apply_top_k_top_p from 0.17.0 (PR #33538): `if HAS_TRITON and logits.shape[0] >= 8: return
# apply_top_k_top_p_triton(logits, k, p)` (topk_topp_sampler.py line 251 in 0.17.0, line 311 in 0.21.0), an in-place
# Triton kernel instead of the sort; below 8 rows the sort of before.
TRITON_TOP_K_TOP_P_SINCE = (0, 17, 0)
TRITON_TOP_K_TOP_P_MIN_ROWS = 8
# What the Triton path holds per logit at its peak, from the code of 0.17.0: the logits in the model dtype
# (compute_logits, gpu_model_runner.py _dummy_sampler_run line 5073), their float32 copy (`logits =
# logits.to(torch.float32)`, vllm/v1/sample/sampler.py line 90), the float32 softmax and `q =
# torch.empty_like(probs)` (random_sample, topk_topp_sampler.py line 334): model-dtype bytes + 3 x 4.
TRITON_SAMPLER_FP32_COPIES = 3
DEFAULT_SM_COUNT = 108  # a GPU entry without sm_count (a user's): the A100's, an assumption, not a measurement


def sampler_implementation(version: str | tuple[int, ...] | None = None, flashinfer_sampler: bool | None = None,
                           v1_engine: bool | None = None, gpu: GPU | None = None) -> str:
    """'v0', 'flashinfer', 'native-sort' or 'native-triton' (0.17+, for 8 rows or more): the top-k/top-p code the
    profile run's dummy sampler goes through."""
    numbers = release_numbers(version)
    if not (uses_v1_engine(numbers) if v1_engine is None else v1_engine):
        return "v0"
    if flashinfer_sampler is None:
        start, end = NATIVE_SAMPLER_RELEASES
        flashinfer_sampler = not start <= numbers < end
        if numbers >= end and gpu is not None:  # 0.21+: FlashInfer on CUDA GPUs of capability 7.5 - 12.1 only
            flashinfer_sampler = gpu.architecture != "cdna3" and (7, 5) <= gpu.capability <= (12, 1)
    if flashinfer_sampler:
        return "flashinfer"
    return "native-triton" if numbers >= TRITON_TOP_K_TOP_P_SINCE else "native-sort"


def sampler_bytes_per_logit(version: str | tuple[int, ...] | None = None,
                            flashinfer_sampler: bool | None = None, v1_engine: bool | None = None,
                            act_bytes: int = 2) -> int:
    """Bytes the profile run's dummy sampler holds per logit (max_num_seqs x vocabulary); the Triton path of 0.17+
    also holds a buffer per SM (sampler_bytes)."""
    kind = sampler_implementation(version, flashinfer_sampler, v1_engine)
    if kind == "v0":
        return SAMPLER_BYTES_PER_LOGIT_V0
    if kind == "flashinfer":
        return SAMPLER_BYTES_PER_LOGIT_V1
    if kind == "native-triton":
        return act_bytes + 4 * TRITON_SAMPLER_FP32_COPIES
    return SAMPLER_BYTES_PER_LOGIT_NATIVE


def sampler_bytes(rows: int, vocab: int, version: str | tuple[int, ...] | None = None, *, gpu: GPU | None = None,
                  act_bytes: int = 2, flashinfer_sampler: bool | None = None, v1_engine: bool | None = None) -> int:
    """The dummy sampler run's peak for `rows` sequences (min(max_num_seqs, max_num_batched_tokens)) of `vocab`
    logits. On the 0.17+ Triton path: act_bytes + 12 bytes per logit plus the kernel's per-program buffer,
    `logits.new_empty((min(next_power_of_2(min(num_sm, rows)), num_sm), vocab_size))` in float32
    (vllm/v1/sample/ops/topk_topp_triton.py lines 992-1000 in 0.17.0, cached for the process, so it stays)."""
    kind = sampler_implementation(version, flashinfer_sampler, v1_engine, gpu)
    if kind == "native-triton" and rows < TRITON_TOP_K_TOP_P_MIN_ROWS:
        kind = "native-sort"
    if kind == "v0":
        return rows * vocab * SAMPLER_BYTES_PER_LOGIT_V0
    if kind == "flashinfer":
        return rows * vocab * SAMPLER_BYTES_PER_LOGIT_V1
    if kind == "native-sort":
        return rows * vocab * SAMPLER_BYTES_PER_LOGIT_NATIVE
    sms = (gpu.sm_count if gpu is not None else None) or DEFAULT_SM_COUNT
    programs = min(sms, rows)
    buffer_rows = min(1 << (programs - 1).bit_length(), sms)
    return rows * vocab * (act_bytes + 4 * TRITON_SAMPLER_FP32_COPIES) + buffer_rows * vocab * 4


def non_torch_bytes(tensor_parallel_size: int = 1, pipeline_parallel_size: int = 1) -> int:
    """Memory the profiling run sees outside PyTorch's allocator on one rank: workspaces, plus NCCL and
    custom all-reduce buffers per tensor-parallel peer and the pipeline's communicators."""
    # Counted up to the 7 peers of an 8-GPU node (the logs go to TP 8; custom all-reduce works within a node and
    # NCCL's ring and tree buffers do not grow with every further peer).
    peers = min(max(1, tensor_parallel_size), 8) - 1
    return NON_TORCH_BYTES + TP_PEER_NON_TORCH_BYTES * peers + (PP_NON_TORCH_BYTES if pipeline_parallel_size > 1 else 0)


# FlashInfer's fused all-reduce + RMSNorm, on by default from 0.17.0 (`enable_allreduce_rms_fusion`,
# vllm/config/vllm.py lines 113-131 in 0.17.0, line 116 in 0.19.0: TP > 1, CUDA, FlashInfer installed, compute
# capability 9.0 or 10.0 (the 10.x family from 0.19.0), data parallel size 1 and pipeline parallel size 1). Its pass
# (AllReduceFusionPass, vllm/compilation/passes/fusion/allreduce_rms_fusion.py lines 715-760 in 0.17.0) creates the
# workspace while torch.compile runs inside the profiling run, outside PyTorch's allocator: non-torch memory.
ALLREDUCE_FUSION_SINCE = (0, 17, 0)
# FI_ALLREDUCE_FUSION_MAX_SIZE_MB (allreduce_rms_fusion.py line 54 in 0.17.0; SM 10.3 added by 0.19.0): the largest
# all-reduce input, in MiB, per compute capability and TP size.
ALLREDUCE_FUSION_MAX_SIZE_MB: dict[tuple[int, int], dict[int, float]] = {(9, 0): {2: 64, 4: 2, 8: 0.5}, (10, 0): {2: 64, 4: 32, 8: 1},
                                (10, 3): {2: 64, 4: 64, 8: 2}}


def allreduce_fusion_workspace_bytes(hidden_size: int, act_bytes: int, tensor_parallel_size: int,
                                     pipeline_parallel_size: int, max_num_batched_tokens: int,
                                     version: str | tuple[int, ...] | None = None, gpu: GPU | None = None,
                                     enforce_eager: bool = False, data_parallel_size: int = 1) -> int:
    """The FlashInfer all-reduce fusion workspace one rank allocates during profiling (0 where vLLM does not enable
    the fusion). vLLM passes max_token_num = min(max_size // (hidden x dtype bytes), max_num_batched_tokens)
    (allreduce_rms_fusion.py lines 743-748 in 0.17.0); FlashInfer's TensorRT-LLM workspace
    (trtllm_create_ipc_workspace_for_all_reduce_fusion, flashinfer/comm/trtllm_ar.py lines 570-595 in
    flashinfer-python 0.6.4, the release 0.17.0 pins) allocates on every rank a buffer of tp x tokens x hidden x 2
    bytes, 256 x tp 4-byte flags and three Lamport buffers of the buffer's size, each rounded up to 2 MiB. A lower
    bound: FlashInfer allocates them as symmetric (multicast-capable) memory rounded up to the driver's recommended
    multicast granularity, a value no source read here gives (docs/capacity.md, "Known misses")."""
    numbers = release_numbers(version)
    tp = int(tensor_parallel_size)
    if (numbers < ALLREDUCE_FUSION_SINCE or gpu is None or gpu.architecture == "cdna3" or enforce_eager
            or pipeline_parallel_size != 1 or data_parallel_size != 1 or tp not in (2, 4, 8)):
        return 0
    capability = gpu.capability
    if capability[0] == 10 and numbers < (0, 19, 0):
        capability = (10, 0) if capability == (10, 0) else (0, 0)  # `is_device_capability(100)` before 0.19
    elif capability[0] == 10 and capability not in ALLREDUCE_FUSION_MAX_SIZE_MB:
        capability = (10, 0)
    sizes = ALLREDUCE_FUSION_MAX_SIZE_MB.get(capability)
    if sizes is None:
        return 0
    max_size = int(sizes[tp] * 2**20)
    tokens = min(max_size // (hidden_size * act_bytes), int(max_num_batched_tokens))
    two_mib = 1 << 21

    def aligned(size: int) -> int:
        return -(-size // two_mib) * two_mib

    buffer = tp * tokens * hidden_size * 2
    lamport = 3 * min(buffer, 2147483647 & ~(two_mib - 1))
    return aligned(buffer) + aligned(tp * 256 * 4) + aligned(lamport)


def hybrid_kv_cache_manager(version: str | tuple[int, ...] | None) -> bool:
    """Whether the release sizes sliding-window layers by their window when the model mixes them with full
    attention layers: the V1 hybrid KV cache manager (`disable_hybrid_kv_cache_manager`, vllm/config.py line 2210
    in 0.9.2). Before it (and in V0) every layer of such a model is allocated at full length."""
    numbers = release_numbers(version)
    return uses_v1_engine(numbers) and numbers >= (0, 9, 2)


def sequence_tokens(model: ModelSpec, window: int | None, max_len: int, batched_tokens: int,
                    version: str | tuple[int, ...] | None, v1_engine: bool | None = None) -> int:
    """Tokens one max_model_len request keeps in a layer. A sliding-window layer of the V1 engine keeps
    `min(window - 1 + max_num_batched_tokens, max_model_len)` (SlidingWindowSpec.max_memory_usage_bytes,
    vllm/v1/kv_cache_interface.py line 207 in 0.11.0: the window's tokens plus the newly scheduled ones); V0 and
    the releases before the hybrid manager keep the full length unless every layer is windowed (Mistral v0.1,
    Phi-3 mini). The "+1 block" vLLM adds for a window not starting at a block boundary is left out."""
    if not window:
        return max_len
    numbers = release_numbers(version)
    v1 = uses_v1_engine(numbers) if v1_engine is None else v1_engine
    if not v1 or (model.sliding_window_layers != "all" and not hybrid_kv_cache_manager(numbers)):
        return max_len
    return min(window - 1 + batched_tokens, max_len)


# --------------------------------------------------------------------------- CUDA-graph memory (0.21+)

# vLLM's CUDA-graph estimate (GPUModelRunner.profile_cudagraph_memory, vllm/v1/worker/gpu_model_runner.py
# lines 6049-6147 in 0.21.0, the same structure up to 0.33.0) captures, per mode, the largest graph and the next
# one into a temporary pool and extrapolates:
#     estimate = max over modes(first capture) + sum over modes(second capture x (graphs of the mode - 1))
# It is charged to the KV budget from 0.21.0 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to True, vllm/envs.py
# line 266 in 0.21.0; the log prints "Estimated CUDA graph memory: X GiB total"). The graph counts follow from the
# capture sizes (cudagraph_capture_sizes below); the two measured sizes are fitted to the logs:
#   first capture: one forward's activations at the largest capture size (the pool keeps them alive);
#   each further graph: CUDAGRAPH_BYTES_PER_GRAPH, fitted to LMCache/LMCache#3430 (vLLM 0.21.0, Qwen3-8B,
#     "PIECEWISE=51 (largest=512), FULL=35 (largest=256)", "Estimated CUDA graph memory: 0.52 GiB total"):
#     (0.52 GiB - 512 x 100 KiB) / 84 = 5.7 MiB (the printed 0.52 is rounded: 5.7 +- 0.06 MiB).
# Read in 0.26.0 - 0.33.0 (the "hybrid" branch): the V1 runner's profile_cudagraph_memory is the same text from 0.26.0
# to 0.33.0 but for ROCm's capture context (gpu_model_runner.py lines 6576-6738 in 0.26.0, 6645-6807 in 0.27.1,
# 6268-6410 in 0.33.0); the default mode is FULL_AND_PIECEWISE (optimization level O2, vllm/config/vllm.py line 409
# and 291 in 0.27.1, 435 and 311 in 0.33.0); the capture sizes are computed as in 0.21 without speculative decoding
# (`_set_cudagraph_sizes`, config/vllm.py lines 2151-2419 in 0.30.0); the estimate is charged by default
# (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, envs.py line 295 in 0.27.1, 329 in 0.33.0). The V2 model runner, the default
# on CUDA for every generative model from 0.29.0 (VllmConfig.use_v2_model_runner, config/vllm.py line 645 in 0.29.0)
# and for DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES before (config/vllm.py lines 68-77 in 0.26.0, 69-80 in 0.28.0),
# returns 0 in 0.26.0 - 0.28.x (gpu/model_runner.py line 705 in 0.26.0, 843 in 0.28.0: not modelled, the planner
# keeps the V1 figure for those architectures) and from 0.29.0 measures every PIECEWISE graph and extrapolates the
# FULL ones from the two largest (gpu/cudagraph_utils.py lines 718-822 in 0.29.0, 847-949 in 0.30.0): the same graph
# counts, a measured per-graph cost, so CUDAGRAPH_BYTES_PER_GRAPH stays the fitted figure.
CUDAGRAPH_BYTES_PER_GRAPH = int(5.7 * 2**20)
# The largest default capture size: 512, and 1024 on data-center Blackwell (compute capability 10.x) from 0.28.0
# (`default_max_graph_size = 1024 if current_platform.is_device_capability_family(100) else 512`, vllm/config/vllm.py
# line 1938 in 0.28.0; 512 without exception in 0.21.0 - 0.27.0).
CUDAGRAPH_LARGE_MAX_SIZE_SINCE = (0, 28, 0)


def cudagraph_capture_sizes(max_num_seqs: int, max_num_batched_tokens: int,
                            version: str | tuple[int, ...] | None = None,
                            compute_capability: tuple[int, int] = (8, 0)) -> list[int]:
    """vLLM's default cudagraph_capture_sizes (VllmConfig, vllm/config/vllm.py lines 1525-1590 in 0.21.0): 1, 2, 4,
    multiples of 8 below 256, multiples of 16 from 256, up to min(2 x max_num_seqs, 512, max_num_batched_tokens),
    plus max_num_batched_tokens itself when it is below that limit."""
    numbers = release_numbers(version)
    default_max = 1024 if numbers >= CUDAGRAPH_LARGE_MAX_SIZE_SINCE and compute_capability[0] == 10 else 512
    largest = min(max(1, int(max_num_seqs)) * 2, default_max, max(1, int(max_num_batched_tokens)))
    sizes = [size for size in (1, 2, 4) if size <= largest]
    if largest >= 8:
        sizes += list(range(8, min(largest + 1, 256), 8))
    if largest >= 256:
        sizes += list(range(256, largest + 1, 16))
    if max_num_batched_tokens <= largest:
        sizes.append(int(max_num_batched_tokens))
    return sorted(set(sizes))


def cudagraph_estimate_bytes(per_token_activation: int, max_num_seqs: int, max_num_batched_tokens: int,
                             version: str | tuple[int, ...] | None = None,
                             compute_capability: tuple[int, int] = (8, 0)) -> int:
    """The CUDA-graph memory vLLM 0.21+ estimates and charges to the KV budget, for the default
    FULL_AND_PIECEWISE mode: a PIECEWISE graph per capture size and a FULL decode graph per capture size up to
    max_num_seqs (CudagraphDispatcher.initialize_cudagraph_keys, vllm/v1/cudagraph_dispatcher.py lines 165-230
    in 0.21.0)."""
    sizes = cudagraph_capture_sizes(max_num_seqs, max_num_batched_tokens, version, compute_capability)
    full = [size for size in sizes if size <= max_num_seqs]
    further = max(len(sizes) - 1, 0) + max(len(full) - 1, 0)
    return int(sizes[-1] * per_token_activation + further * CUDAGRAPH_BYTES_PER_GRAPH)


# --------------------------------------------------------------------------- the vision encoder's profiling pass

# vLLM's V1 profile_run first runs the multimodal encoder on dummy inputs of the largest size
# (GPUModelRunner.profile_run, vllm/v1/worker/gpu_model_runner.py lines 6168-6225 in 0.23.0; the same code at
# lines 5108-5165 in 0.16.0, 5248-5305 in 0.17.1, 5888-5945 in 0.21.0, 6072-6129 in 0.33.0): one modality, the one
# with the most tokens per item, `mm_max_items_per_batch` items of `get_image_size_with_most_features`, through
# `embed_multimodal`, the outputs kept in `encoder_cache` (and the batch of pixel values in the local
# `batched_dummy_mm_inputs`) through the text model's dummy forward and the sampler run that follow. Its peak counts
# against the KV budget like any other activation. Modelled for the Qwen3-VL vision transformer (Qwen3-VL, Qwen3.5),
# whose block code is the same from 0.16.0 to 0.33.0 (qwen3_vl.py Qwen3_VisionBlock, Qwen2_5_VisionAttention in
# qwen2_5_vl.py); before 0.16.0 (qk_reshaped was not made contiguous, 0.14.1) the term is not estimated.
VISION_PROFILE_SINCE = (0, 16, 0)
# The processor's pixel values reach the tower in the model dtype: vLLM casts every floating-point output of the HF
# processor to it ("this emulates output.to(dtype=self.model_config.dtype)", vllm/multimodal/processing/context.py
# lines 226-237 and 279-284 in 0.23.0, line 406 in 0.16.0, line 367 in 0.33.0), so `image_input["pixel_values"]
# .type(self.visual.dtype)` (qwen3_vl.py line 2101 in 0.23.0) returns the same tensor, no copy.
# The items a prompt may hold without --limit-mm-per-prompt: 999 (MultiModalConfig.get_limit_per_prompt,
# vllm/config/multimodal.py lines 310-322 in 0.23.0; allowed_mm_limits, vllm/multimodal/processing/context.py line 393).
DEFAULT_MM_LIMIT_PER_PROMPT = 999


def vision_profile_items(tokens_per_item: int, max_model_len: int, max_num_batched_tokens: int, max_num_seqs: int,
                         mm_limit: int = DEFAULT_MM_LIMIT_PER_PROMPT) -> int:
    """Items of the largest size the profiling pass encodes at once (MultiModalBudget._get_max_items,
    vllm/multimodal/encoder_budget.py lines 140-185 in 0.23.0, chunked prefill on): the encoder budget
    max(max_num_batched_tokens, tokens per item) (compute_mm_encoder_budget, vllm/v1/core/encoder_cache_manager.py
    lines 309-314) over the tokens per item, at most max_num_seqs x the items one prompt can hold, at least 1."""
    if tokens_per_item <= 0:
        return 0
    budget = max(int(max_num_batched_tokens), tokens_per_item)
    per_prompt = max(1, min(mm_limit, int(max_model_len) // tokens_per_item))
    return max(1, min(budget // tokens_per_item, int(max_num_seqs) * per_prompt))


# Qwen2.5-VL's tower (qwen2_5_vl.py Qwen2_5_VisionBlock.forward, Qwen2_5_VisionAttention.forward, Qwen2_5_VisionMLP
# .forward): the same code from 0.22.1 to 0.33.0 (the block changed in 0.17, 0.18, 0.19 and 0.22, the attention in 0.17
# and 0.22; 0.22.0 was not read). The transformer's forward differs after 0.22.1 only by its signature and by an input
# normalisation that is the identity unless `mm_device_do_normalize` is set (FusedInputNorm, vision.py line 587 in
# 0.30.0).
QWEN25_VISION_PROFILE_SINCE = (0, 22, 1)
# Qwen2-VL's tower (qwen2_vl.py Qwen2VisionBlock, Qwen2VisionAttention and Qwen2VisionMLP forwards): the same code from
# 0.16.0 to 0.33.0; the video logic of Qwen2VLProcessingInfo likewise (the tie between image and video went to the
# image before 0.19, to "video" after: the same patches either way).
QWEN2_VISION_PROFILE_SINCE = VISION_PROFILE_SINCE
# The frames of the profiling video (`_MAX_FRAMES_PER_VIDEO = 14`, qwen2_vl.py line 117 in 0.23.0, the same in
# 0.22.1 - 0.33.0).
QWEN2_VL_MAX_FRAMES_PER_VIDEO = 14


def qwen2_vl_video_tokens(vision: VisionTower, max_model_len: int) -> int:
    """Tokens of the video vLLM profiles a Qwen2-VL-style tower with (Qwen2VLProcessingInfo, qwen2_vl.py lines
    1029-1080 in 0.23.0): frames of the largest image, as many as fit in max_model_len (`_get_max_video_frames` counts
    up from one frame while the next still fits), at most 14, at least one; frames padded to the temporal patch
    (line 919: `num_frames + num_frames % temporal_patch_size`, the ceiling `-num_frames % ...` from 0.27.1: the same
    for 2), each pair one image's tokens (`grid_t = padded // temporal_patch_size`). With mm_counts {"video": 1}
    (encoder_budget.py line 91) a single video may take all the frames."""
    per_image = vision.max_tokens_per_image
    step = max(1, vision.temporal_patch_size)

    def tokens(frames: int) -> int:
        return max(-(-frames // step), 1) * per_image

    frames = 1
    while frames < QWEN2_VL_MAX_FRAMES_PER_VIDEO and tokens(frames + 1) <= max_model_len:
        frames += 1
    return tokens(max(1, frames))


def _qwen25_vision_profile_bytes(vision: VisionTower, tp: int, act_bytes: int, *, max_model_len: int,
                                 max_num_batched_tokens: int, max_num_seqs: int, image_limit: int,
                                 video_limit: int, enforce_eager: bool = False) -> tuple[int, int]:
    """(peak, kept) of Qwen2.5-VL's encoder pass (0.22.1 - 0.33.0). The profiled modality is the one with the most
    tokens per item, the tie going to "video" (`get_modality_with_max_tokens`, encoder_budget.py line 184 in 0.23.0):
    a video of qwen2_vl_video_tokens (never fewer tokens than the image), the image only when videos are off.
    For N patches, hidden d, MLP width I, TP t, dtype a: kept, the pixel values N x (channels x temporal x patch^2) x a
    and the outputs N / merge^2 x out_hidden x a; during the tower the rotary cos/sin (N x head_dim) and one block's
    larger peak (Qwen2_5_VisionBlock.forward, qwen2_5_vl.py lines 504-520 in 0.23.0; the caller keeps the window-ordered
    input, lines 1082-1106):
      attention (Qwen2_5_VisionAttention.forward, lines 400-458): block input, norm1, qkv 3d/t, the contiguous qk
        2d/t, the rotated qk 2d/t, the output d/t and its contiguous copy d/t: 2d + 9d/t per patch;
      MLP (lines 515-518 and Qwen2_5_VisionMLP.forward, lines 340-344): block input, attention output, norm2's output and
        its residual sum (`self.norm2(x, residual=x_attn)`), gate_up 2I/t, the activation I/t (SiluAndMul, its native
        form compiled: one output) and down_proj's output d: 5d + 3I/t.
    Qwen2-VL (family `qwen2_vl`, from 0.16.0): the same video and attention (Qwen2VisionAttention.forward, qwen2_vl.py
    lines 356-395 in 0.23.0: qkv 3d/t, the concatenated qk 2d/t, the rotated qk 2d/t, the output and its contiguous
    copy); its MLP (Qwen2VisionBlock.forward `x = x + self.mlp(self.norm2(x))`, lines 428-445, Qwen2VisionMLP.forward
    lines 272-276: fc1 / act /
    fc2) holds the block input, norm2's output and fc1's I/t, and QuickGELU's PyTorch-native form
    `x * torch.sigmoid(1.702 * x)` (activation.py line 520) two more I/t while it runs: 2d + 3I/t. QuickGELU is a
    CustomOp, off when vLLM compiles with Inductor (`custom_ops` "none", vllm/config/vllm.py lines 1135-1142 in
    0.23.0) and on with --enforce-eager (compilation mode NONE, line 1059; `custom_ops` "all"), where its CUDA kernel
    writes one output: 2d + 2I/t."""
    if video_limit > 0:
        tokens, limit = qwen2_vl_video_tokens(vision, max_model_len), video_limit
    elif image_limit > 0:
        tokens, limit = vision.max_tokens_per_image, image_limit
    else:
        return 0, 0
    items = vision_profile_items(tokens, max_model_len, max_num_batched_tokens, max_num_seqs, limit)
    if not items:
        return 0, 0
    merge = vision.spatial_merge_size
    patches = items * tokens * merge * merge
    d, inner = vision.hidden_size, vision.intermediate_size
    head_dim = d // vision.num_heads
    pixels = patches * vision.in_channels * vision.temporal_patch_size * vision.patch_size ** 2 * act_bytes
    outputs = items * tokens * vision.out_hidden_size * act_bytes
    attention = 2 * d + 9 * -(-d // tp)
    if vision.family == "qwen2_vl":
        mlp = 2 * d + (2 if enforce_eager else 3) * -(-inner // tp)
    else:
        mlp = 5 * d + 3 * -(-inner // tp)
    during = patches * act_bytes * (head_dim + max(attention, mlp))
    return pixels + during, pixels + outputs


def vision_profile_bytes(model: ModelSpec, tensor_parallel_size: int, act_bytes: int, *, max_model_len: int,
                         max_num_batched_tokens: int, max_num_seqs: int,
                         version: str | tuple[int, ...] | None = None, v1_engine: bool | None = None,
                         mm_limit: int = DEFAULT_MM_LIMIT_PER_PROMPT,
                         video_limit: int = DEFAULT_MM_LIMIT_PER_PROMPT,
                         enforce_eager: bool = False) -> tuple[int, int]:
    """(peak, kept): what the profiling pass of the vision encoder holds at its peak, and what it leaves allocated
    through the text model's dummy forward and the sampler run (the pixel values and the encoder outputs). Qwen2.5-VL:
    _qwen25_vision_profile_bytes (from 0.22.1; `mm_limit` images, `video_limit` videos). (0, 0)
    where it is not modelled: no Qwen3-VL-family or Qwen2.5-VL tower, the V0 engine, releases before 0.16.0, and an image limit of
    0 (`--limit-mm-per-prompt '{"image": 0}'`, `--language-model-only`: the tower then profiles video or nothing, and
    video is not modelled).

    For N patches of the largest image (max_pixels / patch^2, times the items), hidden d, MLP width I, TP t, dtype a:
    kept throughout: the pixel values in the model dtype, N x (channels x temporal x patch^2) x a bytes;
    during the tower: the position embeddings (N x d, `pos_embeds` of
    prepare_encoder_metadata, qwen3_vl.py lines 697-791 in 0.23.0) and the rotary cos/sin (2 x N x head_dim/2),
    plus the larger of one block's two peaks (Qwen3_VisionBlock.forward, qwen3_vl.py lines 446-466; the caller's
    block input stays referenced, qwen3_vl.py lines 815-823):
      attention (Qwen2_5_VisionAttention.forward, qwen2_5_vl.py lines 400-458 in 0.23.0): block input, norm1, qkv
        (3d/t), qk_reshaped made contiguous (2d/t), qk_rotated (2d/t), the attention output (d/t) and its
        contiguous rearrangement (d/t): 2d + 9d/t per patch;
      MLP (Qwen3_VisionMLP.forward, qwen3_vl.py line 409): block input, the residual sum, norm2, linear_fc1 and the
        activation's output (I/t each): 3d + 2I/t per patch.
    The encoder outputs (N / merge^2 x out_hidden x (1 + deepstack) x a) stay in encoder_cache afterwards."""
    vision = model.vision
    numbers = release_numbers(version)
    v1 = uses_v1_engine(numbers) if v1_engine is None else v1_engine
    if vision is not None and vision.family in ("qwen2_5_vl", "qwen2_vl"):
        since = QWEN25_VISION_PROFILE_SINCE if vision.family == "qwen2_5_vl" else QWEN2_VISION_PROFILE_SINCE
        if not v1 or numbers < since:
            return 0, 0
        return _qwen25_vision_profile_bytes(vision, max(1, int(tensor_parallel_size)), act_bytes,
                                            max_model_len=max_model_len, max_num_batched_tokens=max_num_batched_tokens,
                                            max_num_seqs=max_num_seqs, image_limit=mm_limit, video_limit=video_limit,
                                            enforce_eager=enforce_eager)
    if vision is None or vision.family != "qwen3_vl" or not v1 or numbers < VISION_PROFILE_SINCE:
        return 0, 0
    if mm_limit <= 0:
        return 0, 0
    tokens = vision.max_tokens_per_image
    items = vision_profile_items(tokens, max_model_len, max_num_batched_tokens, max_num_seqs, mm_limit)
    if not items:
        return 0, 0
    tp = max(1, int(tensor_parallel_size))
    merge = vision.spatial_merge_size
    patches = items * tokens * merge * merge
    d, inner = vision.hidden_size, vision.intermediate_size
    head_dim = d // vision.num_heads
    pixel_width = vision.in_channels * vision.temporal_patch_size * vision.patch_size ** 2
    pixels = patches * pixel_width * act_bytes
    outputs = items * tokens * vision.out_hidden_size * (1 + vision.deepstack_layers) * act_bytes
    attention = 2 * d + 9 * -(-d // tp)
    mlp = 3 * d + 2 * -(-inner // tp)
    during = patches * act_bytes * (d + head_dim + max(attention, mlp))
    return pixels + during, pixels + outputs


# --------------------------------------------------------------------------- hybrid (attention + gated DeltaNet) KV layout

# vLLM lays a hybrid model's KV cache out in pages of one size (Platform._align_hybrid_block_size,
# vllm/platforms/interface.py lines 505-675 in 0.21.0, 530-700 in 0.23.0, 765-941 in 0.27.1, 940-1137 in 0.33.0;
# the same formula in vllm/model_executor/models/config.py line 535 in 0.17.1 and line 273 in 0.19.1, not used here
# before 0.21): the attention block size becomes the smallest multiple of the kernel's block alignment whose page
# holds one layer's state of one sequence (`attn_block_size = kernel_block_alignment_size * cdiv(mamba_page_size,
# kernel_block_alignment_size * attn_page_size_1_token)`), and the state page is padded to it. A request holds
# cdiv(max_model_len, block) pages per attention group and, per state group, `MambaSpec.max_memory_usage_bytes` /
# page: 1 with mamba_cache_mode "none", 2 with "align" (vllm/v1/kv_cache_interface.py lines 627-636 in 0.23.0,
# 729-738 in 0.27.1; 0.29.0 adds `num_prefill_checkpoint_blocks`, 0 for Qwen's gated DeltaNet up to 0.32.0). The
# log's token figure is `max_concurrency * max_model_len` (kv_cache_utils.py line 1742 in 0.23.0,
# `get_kv_cache_capacity` lines 1788-1798 in 0.24.0, 1877-1887 in 0.27.1, 1120-1128 in 0.33.0), max_concurrency =
# num_blocks / blocks per request (`get_max_concurrency_for_kv_cache_config`: lines 899-917 in 0.23.0, the same
# text to 0.26.0, where the per-group bytes are summed before one cdiv; a sum of per-group cdivs from 0.27.1,
# lines 937-962; the same count for these page multiples).
# Read in 0.21.0, 0.22.1, 0.23.0, 0.24.0, 0.25.1, 0.26.0, 0.27.1, 0.28.0, 0.29.0, 0.30.0, 0.31.0, 0.32.0, 0.33.0.
HYBRID_LAYOUT_RELEASES = ((0, 21, 0), (0, 34, 0))
# The kernel block alignment: max(min of the backend's supported kernel block sizes, cache block size 16)
# (interface.py lines 640-647 in 0.23.0); FlashAttention and FlashInfer support multiples of 16
# (`MultipleOf(16)`, vllm/v1/attention/backends/flash_attn.py line 84 in 0.27.1, line 367 in 0.33.0).
KERNEL_BLOCK_ALIGNMENT = 16
# Prefix caching on a hybrid model is off by default before 0.28.0 and on from 0.28.0:
#   0.21.0 - 0.25.x: `ModelConfig.is_prefix_caching_supported` is False for attn_type "hybrid" (vllm/config/model.py
#     lines 1804-1809 in 0.21.0, 1883-1888 in 0.25.1), the default (`default_prefix_caching`,
#     vllm/engine/arg_utils.py line 2304 in 0.21.0, 2484 in 0.25.1);
#   0.26.0 - 0.27.x: supported (model.py line 1895 in 0.26.0) but opt-in: `default_prefix_caching = (
#     model_config.is_prefix_caching_supported and not model_config.is_hybrid)` (arg_utils.py lines 2520-2522 in
#     0.26.0, 2604-2606 in 0.27.1);
#   0.28.0 on: `default_prefix_caching = model_config.is_prefix_caching_supported` (arg_utils.py line 2650 in 0.28.0,
#     3045 in 0.33.0), True for hybrids (model.py line 2072 in 0.28.0, 2277 in 0.33.0).
# With prefix caching on, `MambaModelConfig.verify_and_update_config` sets mamba_cache_mode "align" for models
# without `SupportsMambaPrefixCaching` (Qwen3-Next and Qwen3.5 never declare it): "all" falls back to "align"
# (vllm/model_executor/models/config.py lines 350-365 in 0.23.0, 613-628 in 0.27.1; line 765 in 0.33.0 sets
# "align" directly); without it, "none" (lines 651-652 in 0.27.1, 781-782 in 0.33.0). `--mamba-cache-mode` defaults
# to "none" in every release read (vllm/config/cache.py line 133 in 0.23.0, 139 in 0.27.1, 304 in 0.33.0).
HYBRID_PREFIX_CACHING_DEFAULT_SINCE = (0, 28, 0)
# From 0.29.0 FlashAttention 4 runs head_dim 256 with 128-token pages on compute capability 10.x/11.x
# (`_get_fa4_hd256_block_size`, `FA4_HD256_PAGE_SIZE = 128`, flash_attn.py lines 93-116 and fa_utils.py lines 14,
# 224-233 in 0.29.0): whether FA4 is the backend there is not known here, so no layout is given.
FA4_HD256_SINCE = (0, 29, 0)
# 0.33.0, mamba_cache_mode "align": Qwen's gated DeltaNet with FlashInfer's prefill kernel (chosen on compute
# capability 9.0; on 10.x/12.x only with head_k_dim 128 and a CUDA 13 runtime: `_resolve_gdn_prefill_backend`,
# vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py lines 148-270) aligns the blocks to
# `FLASHINFER_GDN_CHECKPOINT_ALIGNMENT = 64` (vllm/v1/attention/backends/gdn_attn.py line 34; interface.py lines
# 1090-1095) and holds one more state block per request (`num_prefill_checkpoint_blocks=1`,
# qwen_gdn_linear_attn.py lines 689-700 and 739-751).
GDN_PREFILL_CHECKPOINT_SINCE = (0, 33, 0)
FLASHINFER_GDN_CHECKPOINT_ALIGNMENT = 64


def hybrid_prefix_caching_default(version: str | tuple[int, ...] | None) -> bool:
    """Whether a hybrid (attention + state layers) model runs with prefix caching when no flag says (see
    HYBRID_PREFIX_CACHING_DEFAULT_SINCE)."""
    return release_numbers(version) >= HYBRID_PREFIX_CACHING_DEFAULT_SINCE


@dataclass(frozen=True)
class HybridLayout:
    """A hybrid model's KV pages on one rank: `block_size` tokens per attention page, `block_bytes` per block over
    the layers of a group, `blocks_per_request` for one max_model_len request, vLLM's `mamba_cache_mode`."""

    block_size: int
    block_bytes: int
    blocks_per_request: int
    mamba_cache_mode: str = "none"


def hybrid_kv_layout(model: ModelSpec, layers: range, tp: int, kv_bytes: int, act_bytes: int, max_len: int,
                     version: str | tuple[int, ...] | None, v1_engine: bool = True,
                     enable_prefix_caching: bool | None = None,
                     compute_capability: tuple[int, int] = (8, 0)) -> HybridLayout | None:
    """The page layout of a gated-DeltaNet hybrid (Qwen3-Next, Qwen3.5) in vLLM 0.21.0 - 0.33.x; None elsewhere and
    where the layout depends on what is not known here (FA4's head_dim-256 pages from 0.29.0 on compute capability
    10.x/11.x; 0.33.0's FlashInfer GDN prefill in "align" mode on 10.x/12.x). Groups of min(attention layers, state
    layers) layers (the larger count when it is below 1.5 x the smaller) share one tensor per slot
    (_get_kv_cache_groups_uniform_page_size, vllm/v1/core/kv_cache_utils.py lines 1159-1179 in 0.23.0; from 0.27.1
    over buckets of mergeable specs, the same two buckets here): 8 attention and 24 DeltaNet layers make one
    attention group and three state groups of 8. enable_prefix_caching None: the release's default."""
    numbers = release_numbers(version)
    linear = model.linear_attention
    start, end = HYBRID_LAYOUT_RELEASES
    if linear is None or linear.kind != "gated_deltanet" or not v1_engine or not start <= numbers < end:
        return None
    attention = [layer for layer in layers if _kv_per_token_layer(model, tp, kv_bytes, layer)]
    states = [layer for layer in layers if model.layer_kind(layer) == "linear"]
    if not attention or not states:
        return None
    if numbers >= FA4_HD256_SINCE and model.head_dim == 256 and compute_capability[0] in (10, 11):
        return None
    prefix_caching = hybrid_prefix_caching_default(numbers) if enable_prefix_caching is None else enable_prefix_caching
    mode = "align" if prefix_caching else "none"
    align, state_blocks = KERNEL_BLOCK_ALIGNMENT, (2 if mode == "align" else 1)
    if mode == "align" and numbers >= GDN_PREFILL_CHECKPOINT_SINCE:
        if compute_capability == (9, 0):
            align, state_blocks = math.lcm(align, FLASHINFER_GDN_CHECKPOINT_ALIGNMENT), state_blocks + 1
        elif compute_capability[0] in (10, 12) and linear.head_k_dim == 128:
            return None  # FlashInfer's GDN prefill only with a CUDA 13 runtime: not known here
    per_token = _kv_per_token_layer(model, tp, kv_bytes, attention[0])
    state_page = linear.state_page_bytes(tp, act_bytes)
    block = align * -(-state_page // (align * per_token))
    counts = (len(attention), len(states))
    group = max(counts) if max(counts) < 1.5 * min(counts) else min(counts)
    per_request = -(-len(attention) // group) * -(-max_len // block) + -(-len(states) // group) * state_blocks
    return HybridLayout(block, block * per_token * group, per_request, mode)
