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
) -> Estimate:
    """Per-GPU memory plan for serving `model` on `gpu` x (TP x PP), the way vLLM's startup would size it.

    model: a ModelSpec, or a name resolve_model() understands (its quantization suffix is used
    when `quantization` is not given).  gpu: a GPU or a catalog id / node-label spelling.
    gpu_memory_utilization None -> the release default (0.9 before 0.20, 0.92 after).
    quantization None -> the checkpoint's own (FP8 for DeepSeek-V3/R1), else unquantized.
    flashinfer_sampler None -> what the release's official image runs (sampler_bytes_per_logit); False for an
    install without FlashInfer (the log says "FlashInfer is not available. Falling back to the PyTorch-native").
    v1_engine None -> the release's default engine (V1 from 0.8.0); False for VLLM_USE_V1=0 on 0.8 - 0.10.
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

    ranks: list[RankMemory] = []
    layer_ranges = pp_layer_ranges(model.num_hidden_layers, pp)
    for index, layers in enumerate(layer_ranges):
        first, last = index == 0, index == pp - 1
        weights = _rank_weights(model, layers, tp, first, last, linear_bytes, act_bytes)
        parts: dict[str, int] = {}
        forward = batched_tokens * per_token_activation
        parts["activations"] = max(forward, sampler if last else 0)  # the sampler runs after the forward pass has freed its buffers
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
