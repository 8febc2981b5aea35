"""The three capacity catalogs (models, GPUs, instance types) as frozen dataclasses, and parameter counting.

Data lives in data/{models,gpus,instance-types}.yaml; this module only reads it (once, cached) and
knows the per-layer arithmetic that turns an architecture into a parameter count.
"""
from __future__ import annotations

from dataclasses import replace
from vllmlint.records import dataclass
from functools import lru_cache
from typing import Any

from vllmlint.data import knowledge_dir

GiB = 1024**3
MiB = 1024**2


@dataclass(frozen=True)
class ModelFact:
    """One sourced fact of the catalog about a repository (`has_chat_template`, `quantization`, `modalities`).

    `value` is the fact (a bool, a quant_method string or None for "not quantized", a tuple of modalities);
    `also` the aliases (renamed repositories with the same files) it holds for besides the entry's id.
    """

    value: Any
    source: str
    also: tuple[str, ...] = ()
    model_type: str | None = None  # has_chat_template: config.json model_type (vLLM's fallback registry key)


@dataclass(frozen=True)
class ModelSpec:
    """One model architecture: what vLLM needs to size weights and KV cache."""

    id: str
    family: str
    architecture: str
    parameters: int
    num_hidden_layers: int
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    vocab_size: int
    tie_word_embeddings: bool
    max_position_embeddings: int
    torch_dtype: str = "bfloat16"
    aliases: tuple[str, ...] = ()
    # False when the config.json a model was read from names no torch_dtype for its language model (the
    # "bfloat16" above is then our default, not the checkpoint's): read it through `checkpoint_torch_dtype`.
    torch_dtype_given: bool = True
    attention_kind: str = "gqa"  # gqa | mha | mla
    qkv_bias: bool = False
    qk_norm: bool = False
    sliding_window: int | None = None
    sliding_window_layers: str = "none"  # all | even | none
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    num_experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int = 0
    shared_experts: int = 0
    first_dense_layers: int = 0
    router_bias: bool = False
    norms_per_layer: int = 2
    checkpoint_quantization: str | None = None
    source: str = ""
    parameters_estimated: bool = False  # True when built from a config.json: `parameters` is our own count
    # Per-repository facts (None: the catalog does not know). They describe the repository `id` (and the
    # aliases a fact lists in `also`), never a variant the name resolver matched: read them through
    # `repository_fact(model, name, attribute)`.
    has_chat_template: ModelFact | None = None  # the tokenizer defines a chat template (tokenizer_config.json)
    quantization: ModelFact | None = None  # config.json quantization_config.quant_method; value None: unquantized
    modalities: ModelFact | None = None  # inputs the architecture takes: ("text",), ("text", "image") ...
    # Whether the Hugging Face repository is gated (an access form: downloads need a token of an account granted
    # access); None when the catalog does not say (then VL710 is silent for the model).
    gated: bool | None = None
    # What decides whether serving it needs --trust-remote-code (config.json model_type and auto_map, the first
    # transformers release that knows the model_type); None when not catalogued. Read it only through
    # vllmlint.capacity.remote_code.needs_trust_remote_code(), which adds the per-release data.
    needs_trust_remote_code: RemoteCodeFacts | None = None

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 1

    @property
    def is_mla(self) -> bool:
        return self.attention_kind == "mla"

    def is_moe_layer(self, layer: int) -> bool:
        return self.is_moe and layer >= self.first_dense_layers

    def is_sliding_layer(self, layer: int) -> bool:
        if not self.sliding_window or self.sliding_window_layers == "none":
            return False
        if self.sliding_window_layers == "all":
            return True
        return layer % 2 == 0  # "even": Gemma 2 style, layer 0 is local

    @property
    def names(self) -> tuple[str, ...]:
        return (self.id, *self.aliases)


@dataclass(frozen=True)
class GPU:
    id: str
    name: str
    architecture: str
    compute_capability: str
    bf16: bool
    fp8: bool
    marketing_memory_gb: int
    nvidia_smi_total_mib: int | None
    cuda_total_gib: float
    cuda_total_estimated: bool
    cuda_total_source: str
    aws_gpu_memory_mib: int | None
    gpu_product_labels: tuple[str, ...] = ()
    gke_accelerator_labels: tuple[str, ...] = ()
    karpenter_gpu_names: tuple[str, ...] = ()
    source: str = ""

    @property
    def total_bytes(self) -> int:
        """Device memory as torch.cuda.mem_get_info() reports it: what gpu_memory_utilization multiplies."""
        return int(self.cuda_total_gib * GiB)

    @property
    def capability(self) -> tuple[int, int]:
        major, minor = self.compute_capability.split(".")
        return int(major), int(minor)

    @property
    def karpenter_memory_mib(self) -> int:
        """The value Karpenter's instance-gpu-memory label would carry for this GPU (see gpus.yaml)."""
        if self.aws_gpu_memory_mib:
            return self.aws_gpu_memory_mib
        if self.nvidia_smi_total_mib:
            return self.nvidia_smi_total_mib
        return int(self.cuda_total_gib * 1024)


@dataclass(frozen=True)
class InstanceType:
    type: str
    provider: str
    family: str
    gpu: GPU
    gpu_count: int
    vcpus: int | None = None
    memory_gib: int | None = None
    source: str = ""


def _load(name: str) -> Any:
    from vllmlint.data import load_yaml_data  # lazy: only capacity checks pay for the catalogs

    return load_yaml_data(knowledge_dir() / "capacity" / name)


def model_from_entry(entry: dict[str, Any]) -> ModelSpec:
    """A ModelSpec from one models.yaml entry (the schema guarantees the required keys)."""
    attention = entry.get("attention") or {}
    moe = entry.get("moe") or {}
    return ModelSpec(
        id=entry["id"],
        family=entry["family"],
        architecture=entry["architecture"],
        parameters=int(entry["parameters"]),
        num_hidden_layers=entry["num_hidden_layers"],
        hidden_size=entry["hidden_size"],
        intermediate_size=entry["intermediate_size"],
        num_attention_heads=entry["num_attention_heads"],
        num_key_value_heads=entry["num_key_value_heads"],
        head_dim=entry["head_dim"],
        vocab_size=entry["vocab_size"],
        tie_word_embeddings=bool(entry["tie_word_embeddings"]),
        max_position_embeddings=entry["max_position_embeddings"],
        torch_dtype=entry.get("torch_dtype", "bfloat16"),
        aliases=tuple(entry.get("aliases") or ()),
        attention_kind=attention.get("kind", "gqa"),
        qkv_bias=bool(attention.get("qkv_bias", False)),
        qk_norm=bool(attention.get("qk_norm", False)),
        sliding_window=attention.get("sliding_window"),
        sliding_window_layers=attention.get("sliding_window_layers", "none"),
        q_lora_rank=attention.get("q_lora_rank"),
        kv_lora_rank=attention.get("kv_lora_rank"),
        qk_nope_head_dim=attention.get("qk_nope_head_dim"),
        qk_rope_head_dim=attention.get("qk_rope_head_dim"),
        v_head_dim=attention.get("v_head_dim"),
        num_experts=moe.get("num_experts", 0),
        experts_per_token=moe.get("experts_per_token", 0),
        moe_intermediate_size=moe.get("moe_intermediate_size", 0),
        shared_experts=moe.get("shared_experts", 0),
        first_dense_layers=moe.get("first_dense_layers", 0),
        router_bias=bool(moe.get("router_bias", False)),
        norms_per_layer=entry.get("norms_per_layer", 2),
        checkpoint_quantization=entry.get("checkpoint_quantization"),
        source=entry.get("source", ""),
        has_chat_template=_fact(entry.get("has_chat_template")),
        quantization=_fact(entry.get("quantization")),
        modalities=_fact(entry.get("modalities"), as_tuple=True),
        gated=_gated(entry),
        needs_trust_remote_code=remote_code_facts(entry),
    )


# Models and GPUs added at run time (the config file's `models:` / `gpus:` keys), searched before the catalogs.
_extra_models: list[ModelSpec] = []
_extra_gpus: list[GPU] = []


def register_extra(models: Any = (), gpus: Any = ()) -> None:
    """Add models and GPUs beside the catalogs, for this process. Each item is a ModelSpec / GPU or a dict
    shaped like a models.yaml / gpus.yaml entry. An extra with a catalogued id takes precedence."""
    for item in models or ():
        _extra_models.insert(0, item if isinstance(item, ModelSpec) else model_from_entry(item))
    for item in gpus or ():
        _extra_gpus.insert(0, item if isinstance(item, GPU) else gpu_from_entry(item))


def clear_extra() -> None:
    _extra_models.clear()
    _extra_gpus.clear()


def models() -> tuple[ModelSpec, ...]:
    """Every model: the registered extras first, then the catalog in file order."""
    return tuple(_extra_models) + _catalog_models()


@lru_cache(maxsize=1)
def _catalog_models() -> tuple[ModelSpec, ...]:
    return tuple(model_from_entry(entry) for entry in _load("models.yaml")["models"])


def gpus() -> tuple[GPU, ...]:
    """Every GPU: the registered extras first, then the catalog."""
    return tuple(_extra_gpus) + _catalog_gpus()


def gpu_from_entry(entry: dict[str, Any]) -> GPU:
    """A GPU from one gpus.yaml-shaped entry; only id, compute_capability and cuda_total_gib are required."""
    labels = entry.get("labels") or {}
    return GPU(
        id=entry["id"],
        name=entry.get("name", entry["id"]),
        architecture=entry.get("architecture", "unknown"),
        compute_capability=str(entry["compute_capability"]),
        bf16=bool(entry.get("bf16", float(entry["compute_capability"]) >= 8.0)),
        fp8=bool(entry.get("fp8", float(entry["compute_capability"]) >= 8.9)),
        marketing_memory_gb=entry.get("marketing_memory_gb", 0),
        nvidia_smi_total_mib=entry.get("nvidia_smi_total_mib"),
        cuda_total_gib=float(entry["cuda_total_gib"]),
        cuda_total_estimated=bool(entry.get("cuda_total_estimated", False)),
        cuda_total_source=entry.get("cuda_total_source", "configuration"),
        aws_gpu_memory_mib=entry.get("aws_gpu_memory_mib"),
        gpu_product_labels=tuple(labels.get("gpu_product") or ()),
        gke_accelerator_labels=tuple(labels.get("gke_accelerator") or ()),
        karpenter_gpu_names=tuple(labels.get("karpenter_gpu_name") or ()),
        source=entry.get("source", ""),
    )


@lru_cache(maxsize=1)
def _catalog_gpus() -> tuple[GPU, ...]:
    result = []
    for entry in _load("gpus.yaml")["gpus"]:
        labels = entry.get("labels") or {}
        result.append(
            GPU(
                id=entry["id"],
                name=entry["name"],
                architecture=entry["architecture"],
                compute_capability=str(entry["compute_capability"]),
                bf16=bool(entry["bf16"]),
                fp8=bool(entry["fp8"]),
                marketing_memory_gb=entry["marketing_memory_gb"],
                nvidia_smi_total_mib=entry.get("nvidia_smi_total_mib"),
                cuda_total_gib=float(entry["cuda_total_gib"]),
                cuda_total_estimated=bool(entry["cuda_total_estimated"]),
                cuda_total_source=entry["cuda_total_source"],
                aws_gpu_memory_mib=entry.get("aws_gpu_memory_mib"),
                gpu_product_labels=tuple(labels.get("gpu_product") or ()),
                gke_accelerator_labels=tuple(labels.get("gke_accelerator") or ()),
                karpenter_gpu_names=tuple(labels.get("karpenter_gpu_name") or ()),
                source=entry.get("source", ""),
            )
        )
    return tuple(result)


@lru_cache(maxsize=1)
def instance_types() -> dict[str, InstanceType]:
    """Instance types keyed by their exact name (AWS/GCP/Azure spelling)."""
    by_id = {gpu.id: gpu for gpu in _catalog_gpus()}
    result = {}
    for entry in _load("instance-types.yaml")["instance_types"]:
        result[entry["type"]] = InstanceType(
            type=entry["type"],
            provider=entry["provider"],
            family=entry["family"],
            gpu=by_id[entry["gpu"]],
            gpu_count=entry["gpu_count"],
            vcpus=entry.get("vcpus"),
            memory_gib=entry.get("memory_gib"),
            source=entry.get("source", ""),
        )
    return result


def find_gpu(name: str) -> GPU | None:
    """A GPU by catalog id or by any node-label spelling, case-insensitively ("h100-80gb", "NVIDIA-L4", "nvidia-l4")."""
    wanted = name.strip().lower()
    for gpu in gpus():
        spellings = (gpu.id, *gpu.gpu_product_labels, *gpu.gke_accelerator_labels)
        if wanted in (s.lower() for s in spellings):
            return gpu
    # Karpenter's short names (a100, v100) are shared by two memory sizes: only unique ones resolve.
    matches = [gpu for gpu in gpus() if wanted in gpu.karpenter_gpu_names]
    return matches[0] if len(matches) == 1 else None


# --------------------------------------------------------------------------- parameter arithmetic


@dataclass(frozen=True)
class LayerParams:
    """Parameters of one decoder layer as held by one tensor-parallel rank.

    `linear` are the projection matrices a weight quantization (AWQ, GPTQ, FP8...) stores at reduced
    precision; `other` (norms, biases, MoE router) stay in the activation dtype.
    """

    linear: int
    other: int

    @property
    def total(self) -> int:
        return self.linear + self.other


def _split(n: int, tp: int) -> int:
    # Column/row-parallel layers give each rank 1/tp of the rows or columns; vLLM requires divisibility
    # for heads and intermediate sizes, ceil keeps odd inputs from under-counting.
    return -(-n // tp)


def kv_heads_per_rank(model: ModelSpec, tp: int) -> int:
    """KV heads one rank holds: kv/tp, or 1 when there are fewer KV heads than ranks (vLLM replicates them)."""
    if model.num_key_value_heads >= tp:
        return _split(model.num_key_value_heads, tp)
    return 1


def layer_params(model: ModelSpec, layer: int, tp: int = 1) -> LayerParams:
    """One decoder layer's parameters on one of `tp` tensor-parallel ranks."""
    hidden = model.hidden_size
    heads = _split(model.num_attention_heads, tp)
    linear = other = 0

    if model.is_mla:
        nope, rope, v = model.qk_nope_head_dim or 0, model.qk_rope_head_dim or 0, model.v_head_dim or 0
        kv_rank = model.kv_lora_rank or 0
        if model.q_lora_rank:
            linear += hidden * model.q_lora_rank  # q_a_proj: replicated on every rank
            other += model.q_lora_rank  # q_a_layernorm
            linear += model.q_lora_rank * heads * (nope + rope)  # q_b_proj: split by heads
        else:
            linear += hidden * heads * (nope + rope)
        linear += hidden * (kv_rank + rope)  # kv_a_proj_with_mqa: replicated
        other += kv_rank  # kv_a_layernorm
        linear += kv_rank * heads * (nope + v)  # kv_b_proj: split by heads
        linear += heads * v * hidden  # o_proj
    else:
        kv = kv_heads_per_rank(model, tp)
        head_dim = model.head_dim
        linear += hidden * heads * head_dim  # q_proj
        linear += 2 * hidden * kv * head_dim  # k_proj, v_proj
        linear += heads * head_dim * hidden  # o_proj
        if model.qkv_bias:
            other += (heads + 2 * kv) * head_dim
        if model.qk_norm:
            other += 2 * head_dim  # q_norm, k_norm (per-head RMSNorm weights)

    if model.is_moe_layer(layer):
        expert = 3 * hidden * _split(model.moe_intermediate_size, tp)  # gate, up, down; TP shards each expert
        linear += model.num_experts * expert + model.shared_experts * expert
        other += hidden * model.num_experts  # router: replicated, kept unquantized by vLLM's quant methods
        if model.router_bias:
            other += model.num_experts
    else:
        linear += 3 * hidden * _split(model.intermediate_size, tp)  # gated MLP: gate, up, down

    other += model.norms_per_layer * hidden
    return LayerParams(linear=linear, other=other)


def count_parameters(model: ModelSpec) -> int:
    """Total parameters recomputed from the architecture.

    embeddings (vocab x hidden) + per layer [attention + MLP or MoE + norms] + final norm
    + lm_head (vocab x hidden) unless tied to the embeddings.  Attention is q/k/v/o projections
    (+ q/k/v bias for Qwen2, + q/k norms for Qwen3), or for MLA the low-rank q_a/q_b, kv_a/kv_b and o
    projections with their two norms.  MoE layers hold num_experts routed + shared_experts gated
    MLPs of moe_intermediate_size plus a hidden x num_experts router (+ DeepSeek's bias).
    """
    embeddings = model.vocab_size * model.hidden_size
    lm_head = 0 if model.tie_word_embeddings else embeddings
    layers = sum(layer_params(model, i).total for i in range(model.num_hidden_layers))
    return embeddings + lm_head + layers + model.hidden_size


# --------------------------------------------------------------------------- config.json


_DTYPES = {"bfloat16": "bfloat16", "float16": "float16", "half": "float16", "float32": "float32", "float": "float32"}


def model_from_config_json(config: dict[str, Any], model_id: str = "local/config.json") -> ModelSpec | None:
    """A ModelSpec from a Hugging Face config.json dict, or None when the fields needed are missing.

    Multimodal configs keep the language model under text_config; its fields win.  `parameters` is
    our own count (count_parameters), flagged by parameters_estimated=True.
    """
    if not isinstance(config, dict):
        return None
    text = config.get("text_config")
    merged = {**config, **text} if isinstance(text, dict) else dict(config)

    def integer(*keys: str) -> int | None:
        for key in keys:
            value = merged.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
        return None

    layers = integer("num_hidden_layers", "n_layer", "num_layers")
    hidden = integer("hidden_size", "n_embd", "d_model")
    heads = integer("num_attention_heads", "n_head")
    vocab = integer("vocab_size", "padded_vocab_size")
    if not (layers and hidden and heads and vocab):
        return None
    intermediate = integer("intermediate_size", "ffn_hidden_size", "n_inner") or 4 * hidden
    kv_heads = integer("num_key_value_heads", "multi_query_group_num") or heads
    head_dim = integer("head_dim") or hidden // heads
    max_len = integer("max_position_embeddings", "n_positions", "seq_length") or 2048
    dtype = _DTYPES.get(str(merged.get("torch_dtype") or merged.get("dtype") or "bfloat16"), "bfloat16")
    # What vLLM reads for `--dtype auto`: the text config's torch_dtype (0.8.5 vllm/config.py line 2891,
    # `getattr(config.get_text_config(), "torch_dtype", None)`; None means float32). The `dtype` key of newer
    # transformers releases is not counted: older images' transformers do not read it.
    own = text if isinstance(text, dict) else config
    dtype_given = str(own.get("torch_dtype")) in _DTYPES

    kv_lora = integer("kv_lora_rank")
    attention_kind = "mla" if kv_lora else ("mha" if kv_heads == heads else "gqa")
    qk_nope = integer("qk_nope_head_dim")
    qk_rope = integer("qk_rope_head_dim")
    if attention_kind == "mla" and qk_nope and qk_rope:
        head_dim = qk_nope + qk_rope

    window = integer("sliding_window")
    window_layers = "none"
    model_type = str(merged.get("model_type") or "")
    layer_types = merged.get("layer_types")
    if merged.get("use_sliding_window") is False:
        window = None  # Qwen2 configs carry a sliding_window value that is switched off
    elif window and isinstance(layer_types, list) and layer_types:
        sliding = [i for i, kind in enumerate(layer_types) if "sliding" in str(kind)]
        if len(sliding) == len(layer_types):
            window_layers = "all"
        elif sliding == list(range(0, len(layer_types), 2)):
            window_layers = "even"
        elif not sliding:
            window = None
        else:
            window_layers = "even"  # other patterns (Gemma 3's 5:1) are approximated, see docs/capacity.md
    elif window and model_type.startswith("gemma2"):
        window_layers = "even"
    elif window:
        window_layers = "all"
    if window and window >= max_len:
        window = None  # a window as long as the context bounds nothing
        window_layers = "none"

    experts = integer("num_local_experts", "num_experts", "n_routed_experts") or 0
    moe_intermediate = integer("moe_intermediate_size") or (intermediate if experts else 0)
    quant = merged.get("quantization_config")
    checkpoint_quantization = None
    if isinstance(quant, dict) and str(quant.get("quant_method", "")).lower() == "fp8":
        checkpoint_quantization = "fp8"

    model = ModelSpec(
        id=model_id,
        family=model_type or "unknown",
        architecture=str((merged.get("architectures") or ["unknown"])[0]),
        parameters=0,
        num_hidden_layers=layers,
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=vocab,
        tie_word_embeddings=bool(merged.get("tie_word_embeddings", model_type.startswith("gemma"))),
        max_position_embeddings=max_len,
        torch_dtype=dtype,
        torch_dtype_given=dtype_given,
        attention_kind=attention_kind,
        qkv_bias=bool(merged.get("attention_bias", model_type.startswith("qwen2"))),
        qk_norm=model_type.startswith("qwen3"),
        sliding_window=window if window_layers != "none" else None,
        sliding_window_layers=window_layers if window else "none",
        q_lora_rank=integer("q_lora_rank"),
        kv_lora_rank=kv_lora,
        qk_nope_head_dim=qk_nope,
        qk_rope_head_dim=qk_rope,
        v_head_dim=integer("v_head_dim"),
        num_experts=experts,
        experts_per_token=integer("num_experts_per_tok") or 0,
        moe_intermediate_size=moe_intermediate,
        shared_experts=integer("n_shared_experts") or 0,
        first_dense_layers=integer("first_k_dense_replace") or 0,
        router_bias=str(merged.get("topk_method", "")) == "noaux_tc",
        norms_per_layer=4 if model_type.startswith("gemma2") else 2,
        checkpoint_quantization=checkpoint_quantization,
        source="config.json",
        parameters_estimated=True,
        quantization=ModelFact(_quant_method(quant), "config.json quantization_config.quant_method"),
    )
    return _with_parameters(model)


def _with_parameters(model: ModelSpec) -> ModelSpec:
    return replace(model, parameters=count_parameters(model))


def _fact(entry: Any, as_tuple: bool = False) -> ModelFact | None:
    """A ModelFact from a models.yaml fact mapping ({value, source, also?, model_type?}); None when absent."""
    if not isinstance(entry, dict) or "value" not in entry:
        return None
    value = entry["value"]
    if as_tuple and isinstance(value, list):
        value = tuple(value)
    return ModelFact(value, str(entry.get("source", "")), tuple(entry.get("also") or ()), entry.get("model_type"))


def _quant_method(quant: Any) -> str | None:
    """config.json quantization_config.quant_method in lower case; None when the checkpoint is not quantized."""
    if not isinstance(quant, dict):
        return None
    method = str(quant.get("quant_method") or "").strip().lower()
    return method or None


def repository_fact(model: ModelSpec, name: str, attribute: str) -> ModelFact | None:
    """The per-repository fact `attribute` of `model` when it describes the repository `name`: the entry's
    own id, or an alias the fact lists in `also` (case-insensitively, like the resolver). None for a variant,
    a quantized copy or a local path matched by its words: their files are not the ones the fact was read from."""
    fact = getattr(model, attribute, None)
    if not isinstance(fact, ModelFact):
        return None
    wanted = (name or "").strip().lower()
    if wanted in (n.lower() for n in (model.id, *fact.also)):
        return fact
    return None


def names_repository(model: ModelSpec, name: str) -> bool:
    """`name` is the catalog entry's own id or one of its aliases (case-insensitively, like the resolver):
    the repository whose files the entry was read from, not a variant, a quantized copy or a local path the
    resolver matched by its words."""
    wanted = (name or "").strip().lower()
    return bool(wanted) and wanted in (n.lower() for n in model.names)


def checkpoint_torch_dtype(model: ModelSpec, name: str, from_config_json: bool) -> str | None:
    """The torch_dtype of the checkpoint `name` when it is known: read from a config.json of the run that
    names it (`from_config_json`), or the catalog's for the entry's own repository (`names_repository`).
    None for a local path or a variant matched by name (people convert checkpoints to float16 for GPUs
    without bfloat16) and for a config.json without torch_dtype."""
    if from_config_json:
        return model.torch_dtype if model.torch_dtype_given else None
    return model.torch_dtype if names_repository(model, name) else None
# --------------------------------------------------------------------------- access facts (gated, remote code)


@dataclass(frozen=True)
class RemoteCodeFacts:
    """The `needs_trust_remote_code` entry of a model: config.json's model_type and auto_map.AutoConfig
    (`remote_config`, None when the repository has no config code), the first transformers release whose
    CONFIG_MAPPING knows model_type (None: none yet), and the first vLLM release that loads the config without
    the flag as recorded in the catalog (`vllm_since`; tests check it against the per-release data), and the
    first vLLM release whose model registry has the architecture (`architecture_since`: before it the flag
    does not help)."""

    value: bool
    model_type: str
    remote_config: str | None
    transformers_since: str | None = None
    vllm_since: str | None = None
    architecture_since: str | None = None  # first vLLM release whose model registry has the architecture
    source: str = ""


def _gated(entry: dict[str, Any]) -> bool | None:
    fact = entry.get("gated")
    return bool(fact["value"]) if isinstance(fact, dict) and isinstance(fact.get("value"), bool) else None


def remote_code_facts(entry: dict[str, Any]) -> RemoteCodeFacts | None:
    """The entry's `needs_trust_remote_code` mapping as RemoteCodeFacts (None when absent)."""
    fact = entry.get("needs_trust_remote_code")
    if not isinstance(fact, dict) or not isinstance(fact.get("model_type"), str):
        return None
    return RemoteCodeFacts(value=bool(fact.get("value")), model_type=fact["model_type"],
                           remote_config=fact.get("remote_config"), transformers_since=fact.get("transformers_since"),
                           vllm_since=fact.get("vllm_since"), architecture_since=fact.get("architecture_since"),
                           source=str(fact.get("source", "")))


__all__ = [
    "GiB", "MiB", "ModelSpec", "ModelFact", "repository_fact", "GPU", "InstanceType", "LayerParams", "models", "gpus", "instance_types",
    "find_gpu", "register_extra", "clear_extra", "gpu_from_entry", "layer_params", "kv_heads_per_rank",
    "count_parameters", "model_from_config_json",
    "model_from_entry", "RemoteCodeFacts", "remote_code_facts",
]


@lru_cache(maxsize=1)
def vllm_gpu_support() -> dict[str, Any]:
    """data/capacity/vllm-gpu-support.yaml: the dtype vLLM falls back to per release, the model types it
    refuses in float16, each quantization method's minimum compute capability."""
    return _load("vllm-gpu-support.yaml")


def model_type_of(model: ModelSpec) -> str | None:
    """The config.json `model_type` vLLM reads for a model: from the architecture (the table in
    vllm-gpu-support.yaml), or a spec read from a config.json, whose family is that file's model_type.
    None when not known."""
    for entry in vllm_gpu_support()["model_types"]:
        if entry["architecture"] == model.architecture:
            return str(entry["model_type"])
    return model.family if model.source == "config.json" and model.family != "unknown" else None


@lru_cache(maxsize=1)
def _efa_table() -> tuple[frozenset[str], frozenset[str], str]:
    efa = _load("instance-types.yaml").get("efa") or {}
    return frozenset(efa.get("with") or ()), frozenset(efa.get("without") or ()), str(efa.get("source") or "")


def efa_support(instance_type: str) -> bool | None:
    """Whether an AWS instance type supports EFA (data/capacity/instance-types.yaml `efa`, from AWS's list of
    EFA instance types); None when the catalog does not say."""
    with_efa, without_efa, _ = _efa_table()
    if instance_type in with_efa:
        return True
    if instance_type in without_efa:
        return False
    return None
