"""The three capacity catalogs (models, GPUs, instance types) as frozen dataclasses, and parameter counting.

Data lives in data/{models,gpus,instance-types}.yaml; this module only reads it (once, cached) and
knows the per-layer arithmetic that turns an architecture into a parameter count.
"""
from __future__ import annotations

from vllmlint.records import replace
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
    # Per-layer structure beyond the legacy fields (empty: derived from them). Each is a pattern repeated over
    # the layers (layer i has pattern[i % len(pattern)]): attention kinds `full`, `sliding`, `chunked` (Llama-4
    # local chunks, bounded like a window), `linear` (Qwen3-Next gated DeltaNet), `mamba`, `mamba2`; MLP kinds
    # `dense`, `moe`.
    layer_types: tuple[str, ...] = ()
    mlp_types: tuple[str, ...] = ()
    shared_expert_intermediate_size: int = 0  # 0: shared experts are moe_intermediate_size wide
    attention_output_gate: bool = False  # Qwen3-Next: q_proj also produces a per-head output gate (2x its rows)
    linear_attention: LinearAttention | None = None  # the state layers of hybrid models (see `layer_types`)
    vision_parameters: int = 0  # the vision tower and its projector (multimodal checkpoints)
    # The vision tower's shape where the estimate models vLLM's encoder profiling pass (VisionTower.family);
    # None for text models and for towers whose profiling is not modelled.
    vision: VisionTower | None = None
    # How the checkpoint's own quantization treats each module (read from its quantization config); None:
    # every linear at `checkpoint_quantization`'s size, or unquantized.
    quant_scheme: QuantScheme | None = None

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 1

    @property
    def is_mla(self) -> bool:
        return self.attention_kind == "mla"

    def is_moe_layer(self, layer: int) -> bool:
        if self.mlp_types:
            return self.is_moe and self.mlp_types[layer % len(self.mlp_types)] == "moe"
        return self.is_moe and layer >= self.first_dense_layers

    def layer_kind(self, layer: int) -> str:
        """The layer's token mixer: full, sliding, chunked, linear, mamba or mamba2."""
        if self.layer_types:
            return self.layer_types[layer % len(self.layer_types)]
        return "sliding" if self.is_sliding_layer(layer) else "full"

    def is_sliding_layer(self, layer: int) -> bool:
        if not self.sliding_window or self.sliding_window_layers == "none":
            return False
        if self.layer_types:
            return self.layer_types[layer % len(self.layer_types)] in ("sliding", "chunked")
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
    aliases: tuple[str, ...] = ()  # other names people type (`--gpu 4090`)
    eks_accelerator_labels: tuple[str, ...] = ()  # k8s.amazonaws.com/accelerator values
    sm_count: int | None = None  # streaming multiprocessors (AMD: compute units): vLLM's num_compute_units()
    mig_parent: str | None = None  # a MIG device (mig-profiles.yaml): the id of the GPU it is a slice of
    mig_profile: str | None = None  # its profile, "1g.10gb"
    # The CPU architecture (kubernetes.io/arch) of every node with this GPU, when the GPU only comes with one CPU:
    # "arm64" for the Grace superchips (GB200, GB300); None when nodes differ or the catalog does not say.
    host_arch: str | None = None

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
        layer_types=tuple(entry.get("layer_types") or ()),
        mlp_types=tuple(moe.get("mlp_types") or ()),
        shared_expert_intermediate_size=moe.get("shared_expert_intermediate_size", 0),
        attention_output_gate=bool(attention.get("output_gate", False)),
        linear_attention=LinearAttention(**entry["linear_attention"]) if entry.get("linear_attention") else None,
        vision_parameters=int(entry.get("vision_parameters", 0)),
        quant_scheme=_entry_quant_scheme(entry),
    )


# Bytes per weight of a quantized linear layer, including its scales/zero points:
#   4-bit with group size 128 (AWQ, GPTQ, w4a16): 0.5 + fp16 scale / 128 + 4-bit zero / 128 = 0.5195
#   GPTQ 8-bit, group 128: 1 + fp16 scale / 128 + 8-bit zero / 128 = 1.0234
#   FP8 / INT8 with per-tensor, per-channel or 128x128 block scales: ~1.0 (scales < 0.1%)
#   bitsandbytes NF4, blocksize 64 with 8-bit double-quantized absmax: 0.5 + 1/64 = 0.5156
# Embeddings, lm_head, norms, biases and MoE routers stay in the activation dtype.
QUANTIZED_LINEAR_BYTES: dict[str, float] = {
    "awq": 0.5 + 2 / 128 + 0.5 / 128,
    "gptq-int4": 0.5 + 2 / 128 + 0.5 / 128,
    "int4": 0.5 + 2 / 128 + 0.5 / 128,
    "gptq-int8": 1 + 2 / 128 + 1 / 128,
    "fp8": 1.0,
    "int8": 1.0,
    "bnb-4bit": 0.5 + 1 / 64,
    "mxfp4": 0.5 + 1 / 32,  # 4-bit E2M1 + one E8M0 scale per 32 weights (gpt-oss)
    "nvfp4": 0.5 + 1 / 16,  # 4-bit E2M1 + one FP8 scale per 16 weights (ModelOpt / compressed-tensors)
}

def _entry_quant_scheme(entry: dict[str, Any]) -> QuantScheme | None:
    """A catalog entry's partial quantization: `checkpoint_quantization` with the parts listed in
    `checkpoint_unquantized` kept in the activation dtype (gpt-oss: MXFP4 experts, bf16 attention)."""
    parts = entry.get("checkpoint_unquantized")
    method = entry.get("checkpoint_quantization")
    if not parts or not method:
        return None
    return QuantScheme(method=method, key=method, linear_bytes=QUANTIZED_LINEAR_BYTES.get(method),
                       unquantized=frozenset((part, -1) for part in parts),
                       description=f"{method}, {', '.join(parts)} unquantized")


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
        aliases=tuple(entry.get("aliases") or ()),
        eks_accelerator_labels=tuple(labels.get("eks_accelerator") or ()),
        sm_count=int(entry["sm_count"]) if entry.get("sm_count") else None,
        host_arch=(entry.get("host_cpu") or {}).get("arch"),
    )


@lru_cache(maxsize=1)
def _catalog_gpus() -> tuple[GPU, ...]:
    return tuple(gpu_from_entry(entry) for entry in _load("gpus.yaml")["gpus"])


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


def gpu_name_key(name: str) -> str:
    """A GPU name as it is compared: case, surrounding space, and spaces or underscores against dashes aside
    ("NVIDIA H100 80GB HBM3", as nvidia-smi prints it, is the node label NVIDIA-H100-80GB-HBM3)."""
    import re

    return re.sub(r"[\s_]+", "-", (name or "").strip()).lower()


def gpu_spellings(gpu: GPU) -> tuple[str, ...]:
    """Every name that resolves to `gpu` alone: its id, aliases and the values of the node labels that name one
    GPU model (nvidia.com/gpu.product, cloud.google.com/gke-accelerator, k8s.amazonaws.com/accelerator).
    Karpenter's instance-gpu-name values are not among them: `a100` and `v100` stand for two memory sizes."""
    return (gpu.id, *gpu.aliases, *gpu.gpu_product_labels, *gpu.gke_accelerator_labels, *gpu.eks_accelerator_labels)


MIG_RESOURCE_PREFIX = "nvidia.com/mig-"  # the device plugin's mixed strategy: nvidia.com/mig-1g.10gb
GKE_PARTITION_KEY = "cloud.google.com/gke-gpu-partition-size"  # GKE's MIG partition label: 1g.5gb


@lru_cache(maxsize=1)
def _mig_table() -> tuple[tuple[str, int, tuple[tuple[str, int, int, int], ...]], ...]:
    """(parent id, compute slices of the whole GPU, ((profile, slices, memory numerator, denominator), ...))."""
    return tuple((entry["gpu"], int(entry["of"]),
                  tuple((p["name"], int(p["slices"]), int(p["memory_fraction"][0]), int(p["memory_fraction"][1]))
                        for p in entry["profiles"]))
                 for entry in _load("mig-profiles.yaml")["parents"])


def mig_device(parent: GPU, profile: str) -> GPU | None:
    """The MIG device `profile` ("1g.10gb") of `parent` as a GPU of its own (data/capacity/mig-profiles.yaml):
    the parent's CUDA total x the profile's memory fraction (an upper bound, marked estimated), its SMs x
    slices / all slices, the same compute capability. None when the parent has no such profile."""
    import dataclasses

    wanted = profile.strip().lower().removesuffix("+me").removesuffix(".me")
    for parent_id, whole, profiles in _mig_table():
        if parent_id != parent.id:
            continue
        for name, slices, numerator, denominator in profiles:
            if name != wanted:
                continue
            products = tuple(f"{label}-MIG-{name}" for label in parent.gpu_product_labels)
            return dataclasses.replace(
                parent, id=f"{parent.id}-MIG-{name}", name=f"{parent.name}, MIG {name}",
                cuda_total_gib=round(parent.cuda_total_gib * numerator / denominator, 2), cuda_total_estimated=True,
                cuda_total_source=f"{parent.id}'s {parent.cuda_total_gib} GiB x {numerator}/{denominator} "
                                  "(MIG profile memory fraction, mig-profiles.yaml): an upper bound",
                nvidia_smi_total_mib=None, aws_gpu_memory_mib=None, marketing_memory_gb=int(name.split(".")[1][:-2]),
                sm_count=parent.sm_count * slices // whole if parent.sm_count else None,
                gpu_product_labels=products, gke_accelerator_labels=(), karpenter_gpu_names=(),
                eks_accelerator_labels=(), aliases=(), mig_parent=parent.id, mig_profile=name)
    return None


def mig_devices(profile: str | None = None) -> list[GPU]:
    """Every catalogued MIG device (of one profile name when given), parents in catalog order."""
    result: list[GPU] = []
    for parent in gpus():
        for parent_id, _, profiles in _mig_table():
            if parent_id == parent.id:
                result.extend(device for name, *_ in profiles if profile in (None, name)
                              for device in [mig_device(parent, name)] if device is not None)
    return result


def find_gpu(name: str) -> GPU | None:
    """The GPU `name` names exactly, or None: its catalog id, an alias or a node-label value (gpu_spellings),
    compared by gpu_name_key ("h100-80gb", "NVIDIA-L4", "nvidia l4"), else a Karpenter instance-gpu-name value
    only one GPU carries ("l4"; "a100" is None). Never a prefix or a nearest match: an A10 is no A100."""
    wanted = gpu_name_key(name)
    if not wanted:
        return None
    for gpu in gpus():
        if wanted in (gpu_name_key(s) for s in gpu_spellings(gpu)):
            return gpu
    if "-mig-" in wanted:  # a MIG device: "A100-80GB-MIG-1g.10gb", "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"
        for device in mig_devices():
            if wanted in (gpu_name_key(s) for s in gpu_spellings(device)):
                return device
    # Karpenter's short names (a100, v100) are shared by two memory sizes: only unique ones resolve.
    matches: dict[str, GPU] = {}
    for gpu in gpus():  # an extra with a catalogued id comes first and wins
        if wanted in (n.lower() for n in gpu.karpenter_gpu_names):
            matches.setdefault(gpu.id, gpu)
    return next(iter(matches.values())) if len(matches) == 1 else None


# --------------------------------------------------------------------------- parameter arithmetic


@dataclass(frozen=True)
class LayerParams:
    """Parameters of one decoder layer as held by one tensor-parallel rank.

    `linear` are the projection matrices a weight quantization (AWQ, GPTQ, FP8...) stores at reduced
    precision; `other` (norms, biases, MoE router) stay in the activation dtype.
    """

    linear: int
    other: int
    # The parts of `linear` a checkpoint may quantize differently (partial quantization): the token mixer's
    # projections (attention, or a linear-attention / Mamba mixer), the routed experts and the shared experts;
    # the rest of `linear` is the dense MLP.
    attention: int = 0
    experts: int = 0
    shared: int = 0

    @property
    def total(self) -> int:
        return self.linear + self.other

    @property
    def mlp(self) -> int:
        return self.linear - self.attention - self.experts - self.shared


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
    kind = model.layer_kind(layer)

    if kind in ("linear", "mamba", "mamba2") and model.linear_attention is not None:
        linear, other = model.linear_attention.params(hidden, tp)
    elif model.is_mla:
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
        # q_proj (Qwen3-Next's gated attention doubles it: qwen3_next.py Qwen3NextAttention, q_proj of
        # num_heads * head_dim * (1 + attn_output_gate) rows)
        linear += hidden * heads * head_dim * (2 if model.attention_output_gate else 1)
        linear += 2 * hidden * kv * head_dim  # k_proj, v_proj
        linear += heads * head_dim * hidden  # o_proj
        if model.qkv_bias:
            other += (heads + 2 * kv) * head_dim
        if model.qk_norm:
            other += 2 * head_dim  # q_norm, k_norm (per-head RMSNorm weights)
    attention = linear

    experts = shared = 0
    if model.is_moe_layer(layer):
        expert = 3 * hidden * _split(model.moe_intermediate_size, tp)  # gate, up, down; TP shards each expert
        shared_width = model.shared_expert_intermediate_size or model.moe_intermediate_size
        experts = model.num_experts * expert
        shared = model.shared_experts * 3 * hidden * _split(shared_width, tp)
        linear += experts + shared
        other += hidden * model.num_experts  # router: replicated, kept unquantized by vLLM's quant methods
        if model.router_bias:
            other += model.num_experts
    else:
        linear += 3 * hidden * _split(model.intermediate_size, tp)  # gated MLP: gate, up, down

    other += model.norms_per_layer * hidden
    return LayerParams(linear=linear, other=other, attention=attention, experts=experts, shared=shared)


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
    return embeddings + lm_head + layers + model.hidden_size + model.vision_parameters


# --------------------------------------------------------------------------- config.json


MAX_CONFIG_LAYERS = 4096  # the deepest published checkpoints have a few hundred layers
_DTYPES = {"bfloat16": "bfloat16", "float16": "float16", "half": "float16", "float32": "float32", "float": "float32"}


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
    wanted = (name or "").strip().lower()
    fact = getattr(model, attribute, None)
    if isinstance(fact, ModelFact) and wanted in (n.lower() for n in (model.id, *fact.also)):
        return fact
    listed = catalogued_repositories().get(wanted)
    if listed is not None and listed[0].lower() == model.id.lower():
        return listed[1].get(attribute)  # a base checkpoint or quantized copy with facts of its own files
    return None


def catalogued_repositories() -> dict[str, tuple[str, dict[str, ModelFact]]]:
    """models.yaml `repositories`: lower-case repository id -> (the entry id whose architecture it shares,
    its own facts by attribute: has_chat_template, quantization)."""
    return _catalogued_repositories()


@lru_cache(maxsize=1)
def _catalogued_repositories() -> dict[str, tuple[str, dict[str, ModelFact]]]:
    found: dict[str, tuple[str, dict[str, ModelFact]]] = {}
    for item in _load("models.yaml").get("repositories") or ():
        facts = {key: fact for key in ("has_chat_template", "quantization")
                 if (fact := _fact(item.get(key))) is not None}
        found[str(item["id"]).lower()] = (str(item["model"]), facts)
    return found


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
    "find_gpu", "gpu_name_key", "gpu_spellings", "register_extra", "clear_extra", "gpu_from_entry", "layer_params", "kv_heads_per_rank",
    "count_parameters", "QUANTIZED_LINEAR_BYTES",
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


def efa_interfaces(instance_type: str) -> int | None:
    """How many EFA interfaces (`vpc.amazonaws.com/efa`) an AWS instance type takes: 0 for a type of the `efa`
    table's `without`, its `interfaces` count for one of `with`; None when the catalog does not say."""
    efa = _load("instance-types.yaml").get("efa") or {}
    count = (efa.get("interfaces") or {}).get(instance_type)
    if isinstance(count, int):
        return count
    return 0 if efa_support(instance_type) is False else None


@dataclass(frozen=True)
class NeuronInstance:
    """An AWS instance type with Neuron devices (Trainium, Inferentia2) and no GPU."""

    type: str
    family: str
    accelerator: str
    neuron_devices: int
    neuron_cores: int
    source: str = ""


@lru_cache(maxsize=1)
def neuron_instance_types() -> dict[str, NeuronInstance]:
    """data/capacity/instance-types.yaml `neuron_instance_types`, keyed by the exact type name."""
    return {entry["type"]: NeuronInstance(entry["type"], entry["family"], entry["accelerator"],
                                          int(entry["neuron_devices"]), int(entry["neuron_cores"]),
                                          entry.get("source", ""))
            for entry in _load("instance-types.yaml").get("neuron_instance_types") or ()}


# --------------------------------------------------------------------------- hybrid models and partial quantization


@dataclass(frozen=True)
class LinearAttention:
    """The state (recurrent) layers of a hybrid model: what they weigh and what they cache per sequence.

    kind `gated_deltanet` (Qwen3-Next, vllm 0.33.0 model_executor/models/qwen3_next.py Qwen3NextGatedDeltaNet),
    `mamba` (Mamba-1 mixer of Jamba and Mamba, model_executor/layers/mamba/mamba_mixer.py) or `mamba2`
    (model_executor/layers/mamba/mamba_mixer2.py). The cached state per sequence follows
    model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator (gated_delta_net_state_shape,
    mamba1_state_shape, mamba2_state_shape): a convolution state of (conv_kernel - 1) positions plus the
    recurrent (temporal) state, independent of the sequence length.
    """

    kind: str
    conv_kernel: int
    num_k_heads: int = 0  # gated_deltanet
    num_v_heads: int = 0  # gated_deltanet; mamba2: the SSM heads
    head_k_dim: int = 0  # gated_deltanet
    head_v_dim: int = 0  # gated_deltanet; mamba2: the SSM head dim
    intermediate_size: int = 0  # mamba / mamba2: the inner width (expand x hidden)
    state_size: int = 0  # mamba / mamba2: d_state
    n_groups: int = 1  # mamba2
    dt_rank: int = 0  # mamba
    inner_norms: bool = False  # Jamba's dt/B/C layernorms
    # Bytes per element of the temporal (recurrent) state where it differs from the model dtype (0: the model
    # dtype's): Qwen3.5's config asks for `mamba_ssm_dtype: float32`, which vLLM applies to the SSM cache
    # (Qwen3_5ForConditionalGenerationConfig, vllm/model_executor/models/config.py lines 536-560 in 0.23.0).
    temporal_state_bytes: int = 0

    def _conv_dim(self) -> int:
        if self.kind == "gated_deltanet":
            return 2 * self.num_k_heads * self.head_k_dim + self.num_v_heads * self.head_v_dim
        if self.kind == "mamba2":
            return self.intermediate_size + 2 * self.n_groups * self.state_size
        return self.intermediate_size

    def params(self, hidden: int, tp: int = 1) -> tuple[int, int]:
        """(linear, other) parameters of one such layer's mixer on one of `tp` ranks."""
        conv = _split(self._conv_dim(), tp)
        if self.kind == "gated_deltanet":
            k_dim, v_dim = self.num_k_heads * self.head_k_dim, self.num_v_heads * self.head_v_dim
            linear = hidden * _split(2 * k_dim + 2 * v_dim, tp)  # in_proj_qkvz
            linear += hidden * _split(2 * self.num_v_heads, tp)  # in_proj_ba
            linear += _split(v_dim, tp) * hidden  # out_proj
            other = conv * self.conv_kernel + 2 * _split(self.num_v_heads, tp) + self.head_v_dim  # conv1d, dt_bias, A_log, norm
            return linear, other
        inner = _split(self.intermediate_size, tp)
        if self.kind == "mamba2":
            heads = _split(self.num_v_heads, tp)
            linear = hidden * (2 * inner + _split(2 * self.n_groups * self.state_size, tp) + heads)  # in_proj
            linear += inner * hidden  # out_proj
            other = conv * (self.conv_kernel + 1) + 3 * heads + inner  # conv1d (+bias), dt_bias, A_log, D, norm
            return linear, other
        linear = hidden * 2 * inner  # in_proj
        linear += inner * (self.dt_rank + 2 * self.state_size)  # x_proj
        linear += self.dt_rank * inner  # dt_proj
        linear += inner * hidden  # out_proj
        other = inner * (self.conv_kernel + 1) + inner + inner * self.state_size + inner  # conv1d+bias, dt bias, A_log, D
        if self.inner_norms:
            other += self.dt_rank + 2 * self.state_size
        return linear, other

    def state_page_bytes(self, tp: int, model_bytes: int) -> int:
        """One layer's state of one sequence in bytes, as vLLM's MambaSpec.page_size_bytes sums it: the conv state in
        the model dtype plus the temporal state in its own dtype (gated DeltaNet; the other kinds in the model
        dtype)."""
        conv = _split(self._conv_dim(), tp) * (self.conv_kernel - 1)
        temporal = self.state_elements(tp) - conv
        return conv * model_bytes + temporal * (self.temporal_state_bytes or model_bytes)

    def state_elements(self, tp: int = 1) -> int:
        """Cached elements of one sequence in one such layer on one rank (conv state + temporal state)."""
        conv = _split(self._conv_dim(), tp) * (self.conv_kernel - 1)
        if self.kind == "gated_deltanet":
            return conv + _split(self.num_v_heads, tp) * self.head_v_dim * self.head_k_dim
        if self.kind == "mamba2":
            return conv + _split(self.num_v_heads, tp) * self.head_v_dim * self.state_size
        return conv + _split(self.intermediate_size, tp) * self.state_size


@dataclass(frozen=True)
class VisionTower:
    """A vision tower's shape, as far as vLLM's profiling of the multimodal encoder depends on it.

    family `qwen3_vl`: the Qwen3-VL vision transformer that Qwen3-VL, Qwen3-VL-MoE, Qwen3.5 and Qwen3.5-MoE
    share (vllm/model_executor/models/qwen3_vl.py Qwen3_VisionTransformer; qwen3_5.py builds the same class);
    `qwen2_5_vl`: Qwen2.5-VL's windowed vision transformer (qwen2_5_vl.py Qwen2_5_VisionTransformer), profiled with a
    video (estimate.qwen2_vl_video_tokens); `qwen2_vl`: Qwen2-VL's tower (qwen2_vl.py Qwen2VisionTransformer), profiled
    the same way.
    `max_pixels` is the image processor's `size.longest_edge` (preprocessor_config.json), the largest image the
    dummy input of the profiling pass is resized to."""

    family: str
    depth: int
    hidden_size: int
    intermediate_size: int
    num_heads: int
    patch_size: int
    temporal_patch_size: int
    spatial_merge_size: int
    in_channels: int
    out_hidden_size: int
    deepstack_layers: int = 0  # Qwen3-VL's deepstack mergers (len(deepstack_visual_indexes))
    max_pixels: int = 0

    @property
    def max_tokens_per_image(self) -> int:
        """Merged tokens of the largest image: max_pixels / (patch x merge)^2 (Qwen2VLProcessingInfo
        get_image_size_with_most_features factorizes exactly that many merged patches)."""
        return self.max_pixels // (self.patch_size * self.spatial_merge_size) ** 2


QUANT_PARTS = ("attention", "mlp", "experts", "shared")


@dataclass(frozen=True)
class QuantScheme:
    """A checkpoint's own weight quantization, read from its config (hfconfig.quant_scheme).

    `key` is the size class estimate.QUANTIZED_LINEAR_BYTES knows (fp8, int4, mxfp4 ...; None when the size
    is unknown), `linear_bytes` the bytes per quantized weight with its scales and zero points.
    `unquantized` lists (part, layer) pairs kept in the activation dtype (the `ignore` /
    `modules_to_not_convert` lists), layer -1 meaning every layer; parts are QUANT_PARTS."""

    method: str
    key: str | None
    linear_bytes: float | None
    bits: int | None = None
    group_size: int | None = None
    zero_point: bool = False
    unquantized: frozenset[tuple[str, int]] = frozenset()
    description: str = ""
    embedding_bytes: float | None = None  # the embedding and lm_head at their own size (GGUF); None: unquantized

    def quantized(self, part: str, layer: int) -> bool:
        return (part, -1) not in self.unquantized and (part, layer) not in self.unquantized

    def layer_bytes(self, params: LayerParams, layer: int, act_bytes: float) -> float:
        """Bytes of one layer's linear weights: each part quantized or kept in the activation dtype."""
        size = self.linear_bytes if self.linear_bytes is not None else act_bytes
        parts = {"attention": params.attention, "experts": params.experts, "shared": params.shared, "mlp": params.mlp}
        return sum(count * (size if self.quantized(part, layer) else act_bytes) for part, count in parts.items())

    @property
    def partial(self) -> bool:
        return bool(self.unquantized)


def state_bytes_per_sequence(model: ModelSpec, layers: range | None = None, tp: int = 1, state_bytes: int = 2) -> int:
    """Bytes of recurrent state one sequence holds on one rank over `layers` (default: all): the linear-attention
    and Mamba layers of a hybrid model cache a fixed-size state per sequence, not per token."""
    if model.linear_attention is None:
        return 0
    chosen = layers if layers is not None else range(model.num_hidden_layers)
    per_layer = model.linear_attention.state_elements(tp) * state_bytes
    return sum(per_layer for layer in chosen if model.layer_kind(layer) in ("linear", "mamba", "mamba2"))
