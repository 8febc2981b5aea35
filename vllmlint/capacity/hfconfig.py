"""A model's own files: config.json and its neighbours, read from wherever the user allows, turned into facts.

Where the files come from (never the network, never outside the run, unless the user opts in):
  - `--model-config PATH|DIR` of `vllmlint capacity` (`read_model_path`);
  - a local model path of a manifest whose `<path>/config.json` is among the linted files (`files_in_run`);
  - opt-in `--hf-cache` (config `hf-cache: true`): the Hugging Face cache of the machine running vllmlint
    (`from_hf_cache`): findings then depend on that machine, which is why it is never the default;
  - opt-in `--online` (config `online: true`): the Hub through `huggingface_hub` (`pip install huggingface_hub`, the `hub` extra),
    honouring HF_TOKEN and HF_HUB_OFFLINE, the files cached under vllmlint's cache folder `models/`
    (`from_hub`).

The files read are config.json, tokenizer_config.json, generation_config.json and hf_quant_config.json
(ModelOpt checkpoints); JSON is parsed by the linter's one YAML/JSON reader (vllmlint.source.yamlmodel).
What they say about sizing is read here: the checkpoint's quantization per module (`quant_scheme`), the
per-layer structure of interleaved and hybrid models (`layer_pattern`, `linear_attention_of`) and the vision
tower (`vision_parameters`); `model_from_config_json` assembles the ModelSpec.
"""
from __future__ import annotations

import fnmatch
import os
import re
from vllmlint.records import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from vllmlint.capacity.specs import (
    MAX_CONFIG_LAYERS,
    QUANTIZED_LINEAR_BYTES,
    LinearAttention,
    ModelFact,
    ModelSpec,
    QuantScheme,
    VisionTower,
    _DTYPES,
    _quant_method,
    _with_parameters,
)
from vllmlint.records import dataclass
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.capacity.names import Match
    from vllmlint.k8s.objects import World

CONFIG_FILES = ("config.json", "tokenizer_config.json", "generation_config.json", "hf_quant_config.json")
MAX_CONFIG_BYTES = 8 * 1024 * 1024  # a config.json is a few KiB; anything this large is not one
MAX_CONFIG_INT = 2**63  # an integer of a config.json past this is no size: read as unknown (a float overflows)
MAX_GGUF_NESTING = 8  # arrays of arrays in GGUF metadata (llama.cpp writes one level)
GGUF_MAX_DIMS = 4  # ggml.h GGML_MAX_DIMS


class ModelConfigError(ValueError):
    """A model file that cannot be read or parsed: the message is one line with the file (and line)."""


@dataclass(frozen=True)
class ModelFiles:
    """The JSON files of one checkpoint (None: that file is not there) and where they were read."""

    config: dict
    origin: str
    tokenizer_config: dict | None = None
    generation_config: dict | None = None
    hf_quant_config: dict | None = None


# --------------------------------------------------------------------------- reading


def parse_json(text: str, name: str) -> Any:
    """JSON text as plain data, through the linter's YAML/JSON reader; ModelConfigError `name:line:col: why`."""
    from vllmlint.source.yamlmodel import SourceFile, parse_documents, to_python

    documents, error = parse_documents(SourceFile(name, text))
    if error is not None:
        raise ModelConfigError(f"{name}:{error.line}:{error.col}: not valid JSON: {error.message}")
    try:
        return _bounded_ints(to_python(documents[0].root)) if documents else None
    except (ValueError, RecursionError) as exc:
        raise ModelConfigError(f"{name}: not usable JSON: {exc}") from None


def _bounded_ints(data: Any) -> Any:
    """`data` with every integer past MAX_CONFIG_INT (a 4,000-digit `head_dim`) replaced by its text: read as
    unknown, as a number too long for Python's int parser already is (it stays a string)."""
    stack = [data]
    while stack:
        item = stack.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, value in list(pairs):
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_CONFIG_INT:
                item[key] = str(value)
            elif isinstance(value, (dict, list)):
                stack.append(value)
    if isinstance(data, int) and not isinstance(data, bool) and abs(data) > MAX_CONFIG_INT:
        return str(data)
    return data


def _read_file(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ModelConfigError(f"{path}: larger than {MAX_CONFIG_BYTES // 2**20} MiB: not a model config")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelConfigError(f"{path}: cannot be read: {exc}") from None
    return parse_json(text, str(path))


def _files_from(read: Any, origin: str) -> ModelFiles:
    """ModelFiles from `read(name)` (data or None when the file is absent); config.json must be a mapping."""
    config = read("config.json")
    if not isinstance(config, dict):
        raise ModelConfigError(f"{origin}: config.json is not a JSON object")
    extra = {}
    for name in CONFIG_FILES[1:]:
        data = read(name)
        extra[name] = data if isinstance(data, dict) else None
    return ModelFiles(config, origin, extra["tokenizer_config.json"], extra["generation_config.json"],
                      extra["hf_quant_config.json"])


def read_model_path(path: str | Path) -> ModelFiles:
    """`--model-config`: a model folder (its config.json and neighbours) or a config.json file (its
    neighbours in the same folder are read too)."""
    target = Path(path)
    if target.is_dir():
        folder, config = target, target / "config.json"
        if not config.is_file():
            raise ModelConfigError(f"{target}: no config.json in this folder")
    elif target.is_file():
        folder, config = target.parent, target
    else:
        raise ModelConfigError(f"{target}: no such file or folder")

    def read(name: str) -> Any:
        file = config if name == "config.json" else folder / name
        return _read_file(file) if file.is_file() else None

    return _files_from(read, str(config))


def _normal(path: str) -> str:
    return path.replace("\\", "/").rstrip("/")


def files_in_run(path: str, world: World) -> ModelFiles | None:
    """The files of a local model path among the run's files: `<path>/config.json` itself (relative paths as
    written, absolute ones by their tail inside the run), else the one `<leaf>/config.json` of a specific folder
    name. Never reads anything the run did not read."""
    by_path, configs = _run_paths(world)
    wanted = _normal(path)
    while wanted.startswith("./"):
        wanted = wanted[2:]
    folder = None
    if wanted and not wanted.startswith("/") and f"{wanted}/config.json" in by_path:
        folder = wanted
    elif wanted.startswith("/"):
        tail = wanted.lstrip("/")
        hits = [p for p in configs if tail and (p == f"{tail}/config.json" or p.endswith(f"/{tail}/config.json"))]
        if len(hits) == 1:
            folder = hits[0][: -len("/config.json")]
    if folder is None:
        leaf = wanted.rsplit("/", 1)[-1]
        if leaf.lower() in _GENERIC_DIRS:
            return None
        hits = [p for p in configs if p.endswith(f"/{leaf}/config.json") or p == f"{leaf}/config.json"]
        if len(hits) != 1:
            return None
        folder = hits[0][: -len("/config.json")]

    def read(name: str) -> Any:
        source = by_path.get(f"{folder}/{name}")
        return parse_json(source.text, source.display_path) if source is not None else None

    return _files_from(read, f"{folder}/config.json")


_GENERIC_DIRS = {"", "model", "models", "weights", "main", "snapshot", "data", "mnt", "checkpoint", "hf", "huggingface"}


# --------------------------------------------------------------------------- opt-in sources


@dataclass
class Sources:
    """The opt-in places model files may come from in this process (set by the CLI from its flags/config)."""

    hf_cache: bool = False
    online: bool = False


_sources = Sources()


def set_sources(hf_cache: bool = False, online: bool = False) -> None:
    _sources.hf_cache, _sources.online = bool(hf_cache), bool(online)
    _resolved.clear()


_resolved: dict[str, Any] = {}  # repository id -> Match | None, for this process (one Hub request per model)


def sources() -> Sources:
    return _sources


def online_problem() -> str | None:
    """Why `--online` cannot work here (huggingface_hub is not installed), or None."""
    import importlib.util

    if importlib.util.find_spec("huggingface_hub") is None:
        return "--online needs huggingface_hub: pip install huggingface_hub (the `hub` extra of vllmlint)"
    return None


_REPO_ID = lazy_compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def hf_hub_cache(env: Mapping[str, str] | None = None) -> Path:
    """The Hugging Face hub cache folder as huggingface_hub finds it: HF_HUB_CACHE, HF_HOME/hub,
    XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub."""
    env = os.environ if env is None else env
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def _snapshot(cache: Path, repo_id: str, revision: str = "main") -> Path | None:
    """The snapshot folder of `repo_id` in a hub cache (refs/<revision>, else the only snapshot)."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    ref = repo / "refs" / revision
    try:
        if ref.is_file():
            snapshot = repo / "snapshots" / ref.read_text(encoding="utf-8").strip()
            return snapshot if snapshot.is_dir() else None
        snapshots = [p for p in (repo / "snapshots").iterdir() if p.is_dir()] if (repo / "snapshots").is_dir() else []
    except OSError:
        return None
    return snapshots[0] if len(snapshots) == 1 else None


def from_hf_cache(repo_id: str, env: Mapping[str, str] | None = None) -> ModelFiles | None:
    """The files of `repo_id` in this machine's Hugging Face cache (opt-in `--hf-cache`); None when absent."""
    if not _REPO_ID.match(repo_id):
        return None
    snapshot = _snapshot(hf_hub_cache(env), repo_id)
    if snapshot is None or not (snapshot / "config.json").is_file():
        return None
    files = read_model_path(snapshot)
    return replace(files, origin=f"Hugging Face cache {snapshot / 'config.json'}")


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """vllmlint's own cache folder (`vllmlint.cache.cache_dir`, imported only when the Hub is asked)."""
    from vllmlint.cache import cache_dir as own_cache_dir

    return own_cache_dir(dict(env) if env is not None else None)


def from_hub(repo_id: str, env: Mapping[str, str] | None = None) -> ModelFiles | None:
    """The files of `repo_id` from the Hugging Face Hub (opt-in `--online`), cached under
    `cache_dir()/models`; HF_TOKEN is read by huggingface_hub for gated repositories. None when offline
    (HF_HUB_OFFLINE), when huggingface_hub is not installed, or when the repository has no config.json."""
    env = os.environ if env is None else env
    if not _REPO_ID.match(repo_id):
        return None
    if str(env.get("HF_HUB_OFFLINE", "")).strip().lower() in ("1", "true", "yes", "on"):
        cached = _snapshot(cache_dir(env) / "models", repo_id)
        return replace(read_model_path(cached), origin=f"vllmlint cache {cached}") if cached else None
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.utils import EntryNotFoundError
    except ImportError:
        raise ModelConfigError("--online needs huggingface_hub: pip install huggingface_hub (the `hub` extra of vllmlint)") from None
    folder = cache_dir(env) / "models"
    found: dict[str, Any] = {}
    for name in CONFIG_FILES:
        try:
            path = hf_hub_download(repo_id, name, cache_dir=str(folder), token=env.get("HF_TOKEN") or None)
        except EntryNotFoundError:
            continue
        except Exception as exc:  # gated without a token, unknown repository, network down: say so, once
            if name == "config.json":
                raise ModelConfigError(f"{repo_id}: config.json could not be fetched from the Hub: "
                                       f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
            continue
        found[name] = _read_file(Path(path))
    if "config.json" not in found:
        return None
    return _files_from(found.get, f"Hugging Face Hub {repo_id} (cached in {folder})")


def resolve_opt_in(name: str) -> Match | None:
    """A Hugging Face id read from the opted-in places (the local HF cache, then the Hub); None when no
    place is opted in or none has it. A file that is there but broken raises ModelConfigError."""
    from vllmlint.capacity.names import Match

    if not (_sources.hf_cache or _sources.online) or not _REPO_ID.match(name or ""):
        return None
    if name in _resolved:
        return _resolved[name]
    files = from_hf_cache(name) if _sources.hf_cache else None
    if files is None and _sources.online:
        files = from_hub(name)
    model = spec_from_files(files, name) if files is not None else None
    _resolved[name] = Match(model, f"config.json from {files.origin}") if files is not None and model is not None else None
    return _resolved[name]


# --------------------------------------------------------------------------- from files to a ModelSpec


def spec_from_files(files: ModelFiles, model_id: str) -> ModelSpec | None:
    """The ModelSpec of a checkpoint's files: config.json (with hf_quant_config.json for ModelOpt checkpoints),
    and the chat-template fact of tokenizer_config.json."""
    model = model_from_config_json(files.config, model_id, hf_quant_config=files.hf_quant_config)
    if model is None:
        return None
    if files.tokenizer_config is not None:
        has_template = bool(files.tokenizer_config.get("chat_template"))
        model = replace(model, has_chat_template=ModelFact(has_template, f"{files.origin}: tokenizer_config.json"))
    return model


# --------------------------------------------------------------------------- structure of the layers

_KINDS = {"full_attention": "full", "attention": "full", "global": "full", "sliding_attention": "sliding",
          "local": "sliding", "chunked_attention": "chunked", "linear_attention": "linear", "mamba": "mamba",
          "mamba2": "mamba2"}


def _period(items: list[str]) -> tuple[str, ...]:
    """The shortest pattern whose repetition, cut to the length of `items`, gives `items` (Gemma 3's 34 layers
    are five sliding and one full, repeated)."""
    for size in range(1, len(items) + 1):
        if all(items[i] == items[i % size] for i in range(len(items))):
            return tuple(items[:size])
    return tuple(items)


def _int(config: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def layer_pattern(text: Mapping[str, Any], layers: int) -> tuple[str, ...]:
    """Each layer's token mixer as a repeating pattern (empty: every layer full attention, or the legacy
    sliding-window fields decide). Read as vLLM's model files read them (vllm 0.33.0
    model_executor/models/): `layer_types` (gemma3.py:153, qwen3_next.py), Qwen3-Next's
    full_attention_interval, Gemma 3's sliding_window_pattern, Jamba's attn_layer_period/offset (jamba.py:322
    layers_block_type), Llama-4's no_rope_layers with attention_chunk_size (llama4.py:184-251: RoPE layers use
    chunked local attention), Mamba's all-Mamba stack."""
    model_type = str(text.get("model_type") or "")
    kinds: list[str] = []
    types = text.get("layer_types")
    if isinstance(types, list) and types and all(isinstance(t, str) for t in types):
        kinds = [_KINDS.get(t, "full") for t in types][:layers]
    elif model_type.startswith("qwen3_next") and _int(text, "full_attention_interval"):
        interval = _int(text, "full_attention_interval") or 4
        kinds = [("full" if (i + 1) % interval == 0 else "linear") for i in range(layers)]
    elif model_type.startswith("gemma3") and _int(text, "sliding_window_pattern"):
        pattern = _int(text, "sliding_window_pattern") or 6
        kinds = [("full" if (i + 1) % pattern == 0 else "sliding") for i in range(layers)]
    elif model_type == "jamba":
        period, offset = _int(text, "attn_layer_period") or 8, text.get("attn_layer_offset", 4)
        kinds = [("full" if i % period == offset else "mamba") for i in range(layers)]
    elif model_type in ("mamba", "falcon_mamba"):
        kinds = ["mamba"] * layers
    elif model_type == "mamba2":
        kinds = ["mamba2"] * layers
    elif model_type.startswith("llama4") and _int(text, "attention_chunk_size"):
        nope = text.get("no_rope_layers")
        if isinstance(nope, list) and len(nope) >= layers:
            kinds = [("chunked" if nope[i] else "full") for i in range(layers)]
        else:  # transformers' Llama4TextConfig default: every 4th layer is NoPE (global)
            kinds = [("full" if (i + 1) % 4 == 0 else "chunked") for i in range(layers)]
    elif model_type.startswith("gpt_oss"):
        kinds = [("sliding" if i % 2 == 0 else "full") for i in range(layers)]  # gpt_oss.py:175
    if not kinds or all(kind == "full" for kind in kinds):
        return ()
    return _period(kinds)


def mlp_pattern(text: Mapping[str, Any], layers: int) -> tuple[str, ...]:
    """Which layers are MoE when that is not simply "all after first_k_dense_replace": Jamba's
    expert_layer_period/offset (layers_num_experts), Llama-4's interleave_moe_layer_step (llama4.py:341),
    Qwen's decoder_sparse_step / mlp_only_layers (qwen3_next.py:489-494)."""
    model_type = str(text.get("model_type") or "")
    kinds: list[str] = []
    if model_type == "jamba":
        period, offset = _int(text, "expert_layer_period") or 2, text.get("expert_layer_offset", 1)
        kinds = [("moe" if i % period == offset else "dense") for i in range(layers)]
    elif model_type.startswith("llama4"):
        step = text.get("interleave_moe_layer_step", 1)
        if isinstance(step, int) and step > 0:
            kinds = [("moe" if (i + 1) % step == 0 else "dense") for i in range(layers)]
    else:
        step = text.get("decoder_sparse_step")
        only = text.get("mlp_only_layers") or []
        if (isinstance(step, int) and step > 1) or (isinstance(only, list) and only):
            step = step if isinstance(step, int) and step > 0 else 1
            kinds = [("dense" if i in only or (i + 1) % step else "moe") for i in range(layers)]
    if not kinds or all(kind == "moe" for kind in kinds):
        return ()
    return _period(kinds)


def linear_attention_of(text: Mapping[str, Any], hidden: int) -> LinearAttention | None:
    """The mixer of a hybrid model's state layers, from the config keys vLLM reads (qwen3_next.py:904-911
    gated_delta_net_state_shape; jamba.py:478-482 mamba1_state_shape)."""
    model_type = str(text.get("model_type") or "")
    if _int(text, "linear_num_value_heads"):
        return LinearAttention(kind="gated_deltanet", conv_kernel=_int(text, "linear_conv_kernel_dim") or 4,
                               num_k_heads=_int(text, "linear_num_key_heads") or 0,
                               num_v_heads=_int(text, "linear_num_value_heads") or 0,
                               head_k_dim=_int(text, "linear_key_head_dim") or 0,
                               head_v_dim=_int(text, "linear_value_head_dim") or 0,
                               temporal_state_bytes=4 if (model_type.startswith("qwen3_5")
                                                          and text.get("mamba_ssm_dtype") == "float32") else 0)
    if model_type == "jamba":
        expand = _int(text, "mamba_expand") or 2
        return LinearAttention(kind="mamba", conv_kernel=_int(text, "mamba_d_conv") or 4,
                               intermediate_size=expand * hidden, state_size=_int(text, "mamba_d_state") or 16,
                               dt_rank=_int(text, "mamba_dt_rank") or -(-hidden // 16), inner_norms=True)
    if model_type in ("mamba", "falcon_mamba"):
        return LinearAttention(kind="mamba", conv_kernel=_int(text, "conv_kernel") or 4,
                               intermediate_size=_int(text, "intermediate_size") or 2 * hidden,
                               state_size=_int(text, "state_size") or 16,
                               dt_rank=_int(text, "time_step_rank") or -(-hidden // 16))
    if model_type == "mamba2":
        heads = _int(text, "num_heads") or 0
        head_dim = _int(text, "head_dim") or 64
        return LinearAttention(kind="mamba2", conv_kernel=_int(text, "conv_kernel") or 4,
                               intermediate_size=_int(text, "intermediate_size") or heads * head_dim,
                               state_size=_int(text, "state_size") or 128, n_groups=_int(text, "n_groups") or 1,
                               num_v_heads=heads, head_v_dim=head_dim)
    return None


# Vision towers whose MLP is gated (three matrices: gate, up, down); the others (SigLIP, CLIP, Llama-4, and the
# Qwen3-VL tower of Qwen3-VL and Qwen3.5: Qwen3_VisionMLP's linear_fc1 / linear_fc2, vllm/model_executor/models/
# qwen3_vl.py lines 377-407 in 0.23.0) have two.
_GATED_VISION = ("qwen2_5_vl", "mistral3", "pixtral")
# Model types built on the Qwen3-VL vision transformer (qwen3_vl.py Qwen3_VisionTransformer; qwen3_5.py line 578 in
# 0.23.0 builds the same class): learned position embeddings of num_position_embeddings rows (`self.pos_embed`), the
# patch merger and one deepstack merger per `deepstack_visual_indexes` entry (qwen3_vl.py lines 520-640 in 0.23.0).
_QWEN3_VISION = ("qwen3_vl", "qwen3_5")
# The largest image the Qwen3-VL family's processors accept: `size.longest_edge` of the checkpoints'
# preprocessor_config.json, 16777216 pixels (4096 x 4096; Qwen/Qwen3.5-2B-Base's file as printed in a public
# transcript found by code search, the same value quoted for the Qwen3.5 family elsewhere; the Qwen/Qwen3.5-4B
# file itself was not read here). The value vLLM's profiling pass sizes its dummy image by (VisionTower.max_pixels).
QWEN3_VISION_MAX_PIXELS = 16777216
# Model types built on the Qwen2.5-VL vision transformer (qwen2_5_vl.py Qwen2_5_VisionTransformer: windowed attention,
# a gated MLP, rotary positions, no deepstack).
_QWEN25_VISION = ("qwen2_5_vl",)
# Qwen2-VL's own tower (qwen2_vl.py Qwen2VisionTransformer: LayerNorm, fc1 / QuickGELU / fc2, full attention). Its
# vision_config names the tower's width `embed_dim` and the merger's output `hidden_size`.
_QWEN2_VISION = ("qwen2_vl",)
# The largest image Qwen2-VL's image processor accepts by default in the Qwen2.5-VL checkpoints: `size.longest_edge`
# (`max_pixels`) 12845056 = 16384 x 28 x 28, the "4-16384 visual tokens per image" of Qwen's model cards; the same
# value vLLM's own Qwen2-VL example passes (examples/pooling/embed/vision_embedding_offline.py lines 238 and 263 in
# 0.23.0). Qwen/Qwen2.5-VL-7B-Instruct's preprocessor_config.json itself was not read here; a third-party 0.23.0
# start-up log of that checkpoint (found by exact-phrase search, its repository not given by the index) prints an
# encoder budget of 114688 tokens, 7 x 16384, which this value gives (estimate.qwen2_vl_video_tokens).
QWEN2_VISION_MAX_PIXELS = 12845056
# Vision towers with learned absolute position embeddings (SigLIP, CLIP, Llama-4); the others use rotary ones.
_POSITIONAL_VISION = ("gemma3", "llama4", "siglip", "clip", "llava", "paligemma", "idefics3")


def vision_parameters(config: Mapping[str, Any], text_hidden: int) -> int:
    """Parameters of a multimodal checkpoint's vision tower and projector, from vision_config (0 without one).

    Per encoder layer: q/k/v/o with biases (4h^2 + 4h), the MLP (2 or 3 matrices of h x I with biases) and two
    norms; the patch embedding (channels x patch^2 [x temporal patch] x h), learned position embeddings where
    the tower has them, and the projector into the language model (Qwen2.5-VL's merger, Mistral 3's patch
    merger, Gemma 3's input projection, Llama-4's adapter). An estimate to well within the 3% the catalog test
    allows for the whole model: the language model dominates every catalogued checkpoint."""
    vision = config.get("vision_config")
    if not isinstance(vision, dict):
        return 0
    outer = str(config.get("model_type") or "")
    depth = _int(vision, "num_hidden_layers", "depth", "num_layers") or 0
    h = _int(vision, "hidden_size", "embed_dim", "width") or 0
    if outer.startswith(_QWEN2_VISION) and _int(vision, "embed_dim"):
        h = _int(vision, "embed_dim") or 0  # Qwen2-VL: `hidden_size` is the merger's output (qwen2_vl.py)
    if not depth or not h:
        return 0
    inner = _int(vision, "intermediate_size") or int((vision.get("mlp_ratio") or 4) * h)
    gated = outer.startswith(_GATED_VISION)
    per_layer = 4 * h * h + 4 * h + (3 if gated else 2) * h * inner + inner * (2 if gated else 1) + h + 4 * h
    patch = _int(vision, "patch_size", "spatial_patch_size") or 14
    channels = _int(vision, "in_channels", "num_channels", "in_chans") or 3
    total = depth * per_layer + channels * patch * patch * h * (_int(vision, "temporal_patch_size") or 1) + 2 * h
    image = _int(vision, "image_size")
    if image and outer.startswith(_POSITIONAL_VISION):
        total += (image // patch) ** 2 * h
    merge = _int(vision, "spatial_merge_size") or _int(config, "spatial_merge_size") or 2
    out = _int(vision, "out_hidden_size") or text_hidden
    if outer.startswith(_QWEN2_VISION):
        out = _int(vision, "hidden_size") or text_hidden
    if outer.startswith(_QWEN3_VISION):
        merged = h * merge * merge
        merger = merged * merged + merged + merged * out + out  # linear_fc1, linear_fc2
        deepstack = len(vision.get("deepstack_visual_indexes") or [])
        total += (_int(vision, "num_position_embeddings") or 0) * h  # pos_embed
        total += merger + 2 * h + deepstack * (merger + 2 * merged)  # norms: LayerNorm(h), postshuffle LayerNorm(4h)
    elif outer.startswith(("qwen2_5_vl", "qwen2_vl")):
        merged = h * merge * merge
        total += merged * merged + merged + merged * out + out + h
    elif outer.startswith(("mistral3", "pixtral")):
        total += h * merge * merge * h + h * text_hidden + text_hidden * text_hidden + h
    elif outer.startswith("llama4"):
        adapter_in = _int(vision, "projector_input_dim") or 4 * h
        adapter_out = _int(vision, "projector_output_dim") or adapter_in
        total += h * 4 * adapter_in + adapter_in * adapter_out + (_int(vision, "vision_output_dim") or adapter_out) * text_hidden
    else:
        total += h * text_hidden + h
    return total


def vision_tower(config: Mapping[str, Any], text_hidden: int) -> VisionTower | None:
    """The vision tower's shape where the estimate models vLLM's encoder profiling pass (the Qwen3-VL family,
    Qwen2.5-VL and Qwen2-VL); None otherwise."""
    vision = config.get("vision_config")
    outer = str(config.get("model_type") or "")
    if not isinstance(vision, dict) or not outer.startswith((*_QWEN3_VISION, *_QWEN25_VISION, *_QWEN2_VISION)):
        return None
    if outer.startswith(_QWEN2_VISION):
        width, heads = _int(vision, "embed_dim") or 0, _int(vision, "num_heads") or 0
        depth, ratio = _int(vision, "depth") or 0, vision.get("mlp_ratio")
        if not width or not heads or not depth or not isinstance(ratio, (int, float)) or ratio <= 0:
            return None
        return VisionTower(
            family="qwen2_vl", depth=depth, hidden_size=width, intermediate_size=int(width * ratio), num_heads=heads,
            patch_size=_int(vision, "patch_size") or 14, temporal_patch_size=_int(vision, "temporal_patch_size") or 2,
            spatial_merge_size=_int(vision, "spatial_merge_size") or 2,
            in_channels=_int(vision, "in_channels", "in_chans") or 3,
            out_hidden_size=_int(vision, "hidden_size") or text_hidden, max_pixels=QWEN2_VISION_MAX_PIXELS)
    depth, h = _int(vision, "depth") or 0, _int(vision, "hidden_size") or 0
    heads = _int(vision, "num_heads") or 0
    if not depth or not h or not heads:
        return None
    if outer.startswith(_QWEN25_VISION):
        inner = _int(vision, "intermediate_size")
        if not inner:
            return None
        return VisionTower(
            family="qwen2_5_vl", depth=depth, hidden_size=h, intermediate_size=inner, num_heads=heads,
            patch_size=_int(vision, "patch_size") or 14, temporal_patch_size=_int(vision, "temporal_patch_size") or 2,
            spatial_merge_size=_int(vision, "spatial_merge_size") or 2,
            in_channels=_int(vision, "in_channels", "in_chans") or 3,
            out_hidden_size=_int(vision, "out_hidden_size") or text_hidden, max_pixels=QWEN2_VISION_MAX_PIXELS)
    return VisionTower(
        family="qwen3_vl", depth=depth, hidden_size=h, intermediate_size=_int(vision, "intermediate_size") or 4 * h,
        num_heads=heads, patch_size=_int(vision, "patch_size") or 16,
        temporal_patch_size=_int(vision, "temporal_patch_size") or 2,
        spatial_merge_size=_int(vision, "spatial_merge_size") or 2, in_channels=_int(vision, "in_channels") or 3,
        out_hidden_size=_int(vision, "out_hidden_size") or text_hidden,
        deepstack_layers=len(vision.get("deepstack_visual_indexes") or []), max_pixels=QWEN3_VISION_MAX_PIXELS)


# --------------------------------------------------------------------------- quantization

MXFP4_BYTES = 0.5 + 1 / 32  # 4-bit E2M1 values, one E8M0 scale per 32 (gpt-oss; vLLM mxfp4.py)
NVFP4_BYTES = 0.5 + 1 / 16  # 4-bit E2M1 values, one FP8 scale per 16 (ModelOpt / compressed-tensors NVFP4)


def _group_bytes(bits: int, group: int | None, zero_point: bool, scale_bytes: int = 2) -> float:
    """Bytes per weight of a grouped integer format: packed values, a scale per group, a zero point per group."""
    size = bits / 8
    if group and group > 0:
        size += scale_bytes / group + (bits / 8 / group if zero_point else 0)
    return size


def _size_key(bits: int | None, kind: str, method: str) -> str | None:
    if method == "mxfp4":
        return "mxfp4"
    if method == "awq" and bits == 4:
        return "awq"
    if method in ("gptq", "auto-round", "intel/auto-round", "autoround") and bits in (4, 8):
        return f"gptq-int{bits}"
    if kind == "float":
        return {8: "fp8", 4: "nvfp4"}.get(bits or 0)
    return {4: "int4", 8: "int8"}.get(bits or 0)


def quant_scheme(config: Mapping[str, Any], hf_quant_config: Mapping[str, Any] | None = None,
                 model: ModelSpec | None = None) -> QuantScheme | None:
    """The checkpoint's weight quantization, per module, from config.json `quantization_config` (or
    hf_quant_config.json for ModelOpt): method, bits, group size, zero points, and which parts the
    `ignore` / `ignored_layers` / `modules_to_not_convert` / `exclude_modules` lists keep unquantized.
    None when the checkpoint is not quantized."""
    quant = config.get("quantization_config")
    text = config.get("text_config")
    if not isinstance(quant, dict) and isinstance(text, dict):
        quant = text.get("quantization_config")
    if not isinstance(quant, dict) and isinstance(hf_quant_config, dict):
        inner = hf_quant_config.get("quantization")
        if isinstance(inner, dict):
            quant = {"quant_method": "modelopt", **inner}
    if not isinstance(quant, dict):
        return None
    method = str(quant.get("quant_method") or "").strip().lower()
    if not method:
        return None
    bits: int | None = None
    group: int | None = None
    zero = False
    kind = "int"
    size: float | None = None
    ignore = list(quant.get("ignore") or quant.get("ignored_layers") or quant.get("modules_to_not_convert")
                  or quant.get("exclude_modules") or quant.get("llm_int8_skip_modules") or [])
    targets: list[str] = ["Linear"]
    if method in ("fp8", "fbgemm_fp8", "ptpc_fp8"):
        bits, kind, size = 8, "float", 1.0
    elif method == "mxfp4":
        bits, kind, size = 4, "float", MXFP4_BYTES
    elif method == "awq":
        bits = _int(quant, "bits", "w_bit") or 4
        group = _int(quant, "group_size", "q_group_size") or 128
        zero = bool(quant.get("zero_point", True))
        size = _group_bytes(bits, group, zero)
    elif method in ("gptq", "auto-round", "intel/auto-round", "autoround"):
        bits = _int(quant, "bits") or 4
        group = _int(quant, "group_size")  # -1: one scale per output channel
        zero = True  # GPTQ checkpoints store qzeros whether sym or not (vLLM gptq.py allocates them)
        size = _group_bytes(bits, group, zero)
    elif method == "bitsandbytes":
        if quant.get("load_in_8bit"):
            bits, size = 8, 1.0
        else:
            bits, size = 4, 0.5 + 1 / 64  # NF4/FP4 blocks of 64 with a double-quantized absmax
    elif method == "compressed-tensors":
        groups = quant.get("config_groups") or {}
        first = next((g for g in groups.values() if isinstance(g, dict)), {}) if isinstance(groups, dict) else {}
        weights = first.get("weights") or {}
        targets = [str(t) for t in first.get("targets") or ["Linear"]]
        bits = _int(weights, "num_bits")
        kind = str(weights.get("type") or "int")
        strategy = str(weights.get("strategy") or "")
        group = _int(weights, "group_size") if strategy in ("group", "tensor_group") else None
        zero = weights.get("symmetric") is False
        if bits is not None:
            size = NVFP4_BYTES if (kind == "float" and bits == 4) else _group_bytes(bits, group, zero)
    elif method == "modelopt":
        algo = str(quant.get("quant_algo") or "").upper()
        if algo.startswith("FP8"):
            bits, kind, size = 8, "float", 1.0
        elif algo == "NVFP4":
            bits, kind, size = 4, "float", NVFP4_BYTES
    elif method in ("experts_int8",):
        bits, size = 8, 1.0
    key = _size_key(bits, kind, method) if size is not None else None
    described = [method] + ([f"{bits}-bit {kind}"] if bits else []) + ([f"group {group}"] if group else []) \
        + (["zero points"] if zero else [])
    unquantized = _unquantized_parts(model, ignore, targets) if model is not None else frozenset()
    return QuantScheme(method=method, key=key, linear_bytes=size, bits=bits, group_size=group, zero_point=zero,
                       unquantized=unquantized, description=", ".join(described))


_PREFIXES = ("model.layers.{i}.", "model.language_model.layers.{i}.", "language_model.model.layers.{i}.")
_PART_MODULES = {
    "attention": ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"),
    "mla": ("self_attn.q_a_proj", "self_attn.q_b_proj", "self_attn.kv_a_proj_with_mqa", "self_attn.kv_b_proj",
            "self_attn.o_proj"),
    "linear": ("linear_attn.in_proj_qkvz", "linear_attn.in_proj_ba", "linear_attn.out_proj"),
    "mamba": ("mamba.in_proj", "mamba.x_proj", "mamba.dt_proj", "mamba.out_proj"),
    "mlp": ("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"),
    "experts": ("mlp.experts.0.gate_proj", "mlp.experts.0.up_proj", "mlp.experts.0.down_proj"),
    "shared": ("mlp.shared_experts.gate_proj", "mlp.shared_experts.up_proj", "mlp.shared_experts.down_proj",
               "mlp.shared_expert.gate_proj", "mlp.shared_expert.up_proj", "mlp.shared_expert.down_proj"),
}


def module_matches(entry: str, name: str) -> bool:
    """Whether an ignore/target entry names the module `name`: `re:` regular expressions (compressed-tensors,
    matched from the start), shell patterns (`model.layers.*.self_attn`), or a module path matched at dot
    boundaries (`lm_head`, `model.layers.0.mlp`, `self_attn`)."""
    if entry.startswith("re:"):
        try:
            return re.match(entry[3:], name) is not None
        except re.error:
            return False
    if "*" in entry or "?" in entry:
        return fnmatch.fnmatchcase(name, entry) or fnmatch.fnmatchcase(name, entry + ".*")
    return f".{entry}." in f".{name}."


def _unquantized_parts(model: ModelSpec, ignore: list[str], targets: list[str]) -> frozenset[tuple[str, int]]:
    """(part, layer) pairs the lists keep unquantized: a part is unquantized in a layer when an ignore entry
    names one of its projections (or no target names them); -1 stands for "in every layer"."""
    entries = [str(e) for e in ignore if isinstance(e, (str, int))]
    every_linear = any(t == "Linear" for t in targets)
    found: dict[str, set[int]] = {}
    for layer in range(model.num_hidden_layers):
        kind = model.layer_kind(layer)
        mixer = "linear" if kind == "linear" else "mamba" if kind.startswith("mamba") else \
            "mla" if model.is_mla else "attention"
        for part, modules in (("attention", _PART_MODULES[mixer]), ("mlp", _PART_MODULES["mlp"]),
                              ("experts", _PART_MODULES["experts"]), ("shared", _PART_MODULES["shared"])):
            names = [prefix.format(i=layer) + module for prefix in _PREFIXES for module in modules]
            ignored = any(module_matches(e, n) for e in entries for n in names)
            targeted = every_linear or any(module_matches(t, n) for t in targets for n in names)
            if ignored or not targeted:
                found.setdefault(part, set()).add(layer)
    result = set()
    for part, layers in found.items():
        if len(layers) == model.num_hidden_layers:
            result.add((part, -1))
        else:
            result.update((part, layer) for layer in layers)
    return frozenset(result)


__all__ = ["ModelFiles", "ModelConfigError", "parse_json", "read_model_path", "files_in_run", "from_hf_cache",
           "from_hub", "cache_dir", "hf_hub_cache", "set_sources", "sources", "resolve_opt_in", "spec_from_files",
           "layer_pattern", "mlp_pattern", "linear_attention_of", "vision_parameters", "quant_scheme",
           "module_matches", "load_model_config", "read_gguf", "spec_from_gguf", "GGUFInfo"]


def load_model_config(path: str, model_id: str | None = None) -> tuple[ModelSpec, str]:
    """`--model-config PATH|DIR`: the ModelSpec of a config.json file or a model folder, and how it was read.
    ModelConfigError (one line naming the file) when it cannot be read or is no Hugging Face config."""
    if str(path).lower().endswith(".gguf") and Path(path).is_file():
        gguf = spec_from_gguf(read_gguf(path), model_id or Path(path).stem, str(path))
        if gguf is None:
            raise ModelConfigError(f"{path}: the GGUF header lacks the architecture sizes (<arch>.block_count, ...)")
        return gguf, f"from the GGUF header of {path}, weights sized by its tensor types"
    files = read_model_path(path)
    name = model_id or Path(files.origin).resolve().parent.name
    model = spec_from_files(files, name)
    if model is None:
        raise ModelConfigError(f"{files.origin}: not a Hugging Face config.json (layers, hidden size, heads and "
                               "vocabulary size are needed)")
    return model, f"from {files.origin}, parameters counted from its architecture"


# --------------------------------------------------------------------------- the checkpoint's own quantization

# vLLM --quantization values that name how a checkpoint was quantized rather than a size: with a checkpoint
# whose config says that method, they mean "the checkpoint's own" (its bits and group size).
_CHECKPOINT_METHODS = {"compressed-tensors", "modelopt", "modelopt_fp4", "mxfp4", "gptq", "gptq_marlin", "awq",
                       "awq_marlin", "auto-round", "fp8", "bitsandbytes", "gguf"}


def checkpoint_quantization_name(model: ModelSpec, quantization: str | None) -> str | None:
    """The quantization to size: `quantization` when given, else the checkpoint's own; a method name that is
    the checkpoint's own method (`--quantization compressed-tensors` on a compressed-tensors checkpoint) is
    sized by the checkpoint's config."""
    if quantization is None:
        return model.checkpoint_quantization
    scheme = model.quant_scheme
    wanted = str(quantization).strip().lower()
    if scheme is not None and wanted in _CHECKPOINT_METHODS and \
            (wanted == scheme.method or wanted.split("_")[0] == scheme.method.split("_")[0]):
        return scheme.key or scheme.method
    return quantization


def linear_weight_bytes(model: ModelSpec, quant: str | None, act_bytes: int) -> float | QuantScheme:
    """Bytes per linear weight: the checkpoint's own scheme (per module: partial quantization keeps the
    modules its ignore list names in the activation dtype) when the quantization in effect is the
    checkpoint's, else one size for every linear layer."""
    scheme = model.quant_scheme
    if quant is not None and scheme is not None and quant == scheme.key and scheme.linear_bytes is not None:
        return scheme
    return QUANTIZED_LINEAR_BYTES[quant] if quant else act_bytes


# --------------------------------------------------------------------------- GGUF files

GGUF_MAGIC = b"GGUF"
_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
MAX_GGUF_TENSORS = 1_000_000
MAX_GGUF_STRING = 16 * 1024 * 1024


@dataclass(frozen=True)
class GGUFInfo:
    """The header of a .gguf file: its metadata (arrays as their length, except short ones) and every tensor's
    name, shape (innermost dimension first) and GGML type id."""

    metadata: dict
    tensors: tuple[tuple[str, tuple[int, ...], int], ...]


def _gguf_types() -> dict[int, tuple[str, int, int]]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "capacity" / "gguf-types.yaml")
    return {int(t["id"]): (str(t["name"]), int(t["block"]), int(t["bytes"])) for t in data["types"]}


def read_gguf(path: str | Path) -> GGUFInfo:
    """The header of a GGUF (v2/v3) file, read without loading any weight; ModelConfigError when it is not one."""
    import struct

    name = str(path)
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise ModelConfigError(f"{name}: cannot be read: {exc}") from None
    with handle:
        def take(size: int) -> bytes:
            data = handle.read(size)
            if len(data) != size:
                raise ModelConfigError(f"{name}: the GGUF header ends early (byte {handle.tell()})")
            return data

        def number(fmt: str) -> Any:
            return struct.unpack(fmt, take(struct.calcsize(fmt)))[0]

        def string() -> str:
            size = number("<Q")
            if size > MAX_GGUF_STRING:
                raise ModelConfigError(f"{name}: a GGUF string of {size} bytes: not a GGUF header")
            return take(size).decode("utf-8", errors="replace")

        def value(kind: int, depth: int = 0) -> Any:
            if kind in _GGUF_SCALARS:
                return number(_GGUF_SCALARS[kind])
            if kind == 8:
                return string()
            if kind == 9:
                item, count = number("<I"), number("<Q")
                if count > 64 * MAX_GGUF_TENSORS:
                    raise ModelConfigError(f"{name}: a GGUF array of {count} items: not a GGUF header")
                if item == 9 and depth >= MAX_GGUF_NESTING:
                    raise ModelConfigError(f"{name}: GGUF arrays nested deeper than {MAX_GGUF_NESTING} levels: "
                                           "not a GGUF header")
                items = [value(item, depth + 1) for _ in range(count)]
                return items if count <= 64 else len(items)  # long arrays (the vocabulary): their length
            raise ModelConfigError(f"{name}: unknown GGUF value type {kind}")

        if take(4) != GGUF_MAGIC:
            raise ModelConfigError(f"{name}: not a GGUF file (no GGUF magic)")
        version = number("<I")
        if version not in (2, 3):
            raise ModelConfigError(f"{name}: GGUF version {version} is not read (2 and 3 are)")
        tensor_count, kv_count = number("<Q"), number("<Q")
        if tensor_count > MAX_GGUF_TENSORS or kv_count > MAX_GGUF_TENSORS:
            raise ModelConfigError(f"{name}: {tensor_count} tensors, {kv_count} keys: not a GGUF header")
        metadata = {}
        for _ in range(kv_count):
            key = string()
            metadata[key] = value(number("<I"))
        tensors = []
        for _ in range(tensor_count):
            tensor = string()
            rank = number("<I")
            if rank > GGUF_MAX_DIMS:  # ggml.h GGML_MAX_DIMS: a tensor has at most 4 dimensions
                raise ModelConfigError(f"{name}: tensor {tensor} has {rank} dimensions: not a GGUF header")
            dims = tuple(number("<Q") for _ in range(rank))
            kind = number("<I")
            number("<Q")  # offset
            tensors.append((tensor, dims, kind))
    return GGUFInfo(metadata, tuple(tensors))


def spec_from_gguf(info: GGUFInfo, model_id: str, origin: str = "GGUF header") -> ModelSpec | None:
    """A ModelSpec from a GGUF header: the architecture from `<arch>.*` metadata (llama.cpp's key names), the
    weights' bytes from each tensor's type (data/capacity/gguf-types.yaml): the layers' linear tensors on
    average, and the embedding and output tensors at their own size. None when the metadata lacks the sizes."""
    from math import prod

    meta = info.metadata
    arch = str(meta.get("general.architecture") or "")

    def key(suffix: str) -> Any:
        return meta.get(f"{arch}.{suffix}")

    shapes = {tensor: dims for tensor, dims, _ in info.tensors}
    vocab = meta.get("tokenizer.ggml.tokens") if isinstance(meta.get("tokenizer.ggml.tokens"), int) else None
    if vocab is None and len(shapes.get("token_embd.weight", ())) == 2:
        vocab = shapes["token_embd.weight"][1]
    config = {"model_type": arch, "architectures": [f"gguf:{arch}"], "num_hidden_layers": key("block_count"),
              "hidden_size": key("embedding_length"), "intermediate_size": key("feed_forward_length"),
              "num_attention_heads": key("attention.head_count"), "num_key_value_heads": key("attention.head_count_kv"),
              "head_dim": key("attention.key_length"), "max_position_embeddings": key("context_length"),
              "vocab_size": vocab, "num_experts": key("expert_count"), "num_experts_per_tok": key("expert_used_count"),
              "moe_intermediate_size": key("expert_feed_forward_length"), "sliding_window": key("attention.sliding_window"),
              "tie_word_embeddings": "output.weight" not in shapes, "torch_dtype": "bfloat16"}
    for name in ("intermediate_size", "num_key_value_heads"):
        if isinstance(config[name], list):  # per-layer values (some architectures): the largest
            config[name] = max(config[name]) if config[name] else None
    model = model_from_config_json({k: v for k, v in config.items() if v is not None}, model_id)
    if model is None:
        return None
    types = _gguf_types()
    linear_bytes = linear_elements = embed_bytes = embed_elements = 0.0
    names: set[str] = set()
    for tensor, dims, kind in info.tensors:
        if kind not in types:
            raise ModelConfigError(f"{origin}: tensor {tensor} has GGML type {kind}, not in data/capacity/gguf-types.yaml")
        type_name, block, size = types[kind]
        elements = prod(dims) if dims else 0
        stored = elements / block * size
        if tensor in ("token_embd.weight", "output.weight"):
            embed_bytes, embed_elements = embed_bytes + stored, embed_elements + elements
        elif tensor.startswith("blk.") and len(dims) >= 2 and tensor.endswith(".weight"):
            linear_bytes, linear_elements = linear_bytes + stored, linear_elements + elements
            names.add(type_name)
    if not linear_elements:
        return model
    per_weight = linear_bytes / linear_elements
    size_class = "int4" if per_weight <= 0.65 else "int8" if per_weight <= 1.1 else None
    if size_class is None:
        return model  # F16/BF16 (or F32) tensors: sized as the unquantized model
    scheme = QuantScheme(method="gguf", key=size_class, linear_bytes=per_weight,
                         embedding_bytes=embed_bytes / embed_elements if embed_elements else None,
                         description=f"gguf {'/'.join(sorted(names))}, {per_weight:.4f} bytes per layer weight")
    return replace(model, quant_scheme=scheme, checkpoint_quantization=size_class, family=arch or "unknown",
                   quantization=ModelFact("gguf", f"{origin} (GGML tensor types)"))


def _run_paths(world: World) -> tuple[dict[str, Any], list[str]]:
    """The run's files by normalised path, and the paths of its `config.json` files: built once per world (a
    lookup per local-path invocation over every file was quadratic in a large run)."""
    cached = world.fact(_paths_of_run)
    if cached[0] != len(world.sources):  # asked while files were still being read: not kept
        cached = _paths_of_run(world)
    return cached[1], cached[2]


def _paths_of_run(world: World) -> tuple[int, dict[str, Any], list[str]]:
    by_path = {_normal(source.display_path): source for source in world.sources}
    configs = [p for p in by_path if p == "config.json" or p.endswith("/config.json")]
    return len(world.sources), by_path, configs


def config_defaults(config: dict[str, Any]) -> dict[str, Any]:
    """The config class's defaults for the keys sizing reads (data/capacity/config-defaults.yaml), for the
    language model of a config.json: its text_config when it has one (typed by its own model_type, else by
    the parent's `text_config_of`), else the config itself; {} for a model type without an entry."""
    table = _config_defaults_table()
    text = config.get("text_config")
    if isinstance(text, dict):
        own = str(text.get("model_type") or "")
        if own in table:
            return dict(table[own]["defaults"])
        parent = str(config.get("model_type") or "")
        for entry in table.values():
            if parent in (entry.get("text_config_of") or []):
                return dict(entry["defaults"])
        return {}
    own_entry = table.get(str(config.get("model_type") or ""))
    return dict(own_entry["defaults"]) if own_entry else {}


@lru_cache(maxsize=1)
def _config_defaults_table() -> dict[str, dict[str, Any]]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "capacity" / "config-defaults.yaml")
    return {entry["model_type"]: entry for entry in data["model_types"]}


# --------------------------------------------------------------------------- a config.json as a ModelSpec


def model_from_config_json(config: dict[str, Any], model_id: str = "local/config.json",
                           hf_quant_config: dict[str, Any] | None = None) -> ModelSpec | None:
    """A ModelSpec from a Hugging Face config.json dict, or None when the fields needed are missing.

    Multimodal configs keep the language model under text_config; its fields win, and the vision tower
    (vision_config) is counted in `vision_parameters`.  Interleaved and hybrid layer structures, MoE layer
    patterns and the checkpoint's own quantization per module are read by the functions of this module.
    `parameters` is our own count (count_parameters), flagged by parameters_estimated=True.
    """
    if not isinstance(config, dict):
        return None
    text = config.get("text_config")
    # Keys the file leaves out take the config class's defaults, as transformers gives them to vLLM.
    merged = {**config_defaults(config), **config, **(text if isinstance(text, dict) else {})}

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
    if layers > MAX_CONFIG_LAYERS:
        return None  # no model has that many layers: per-layer arithmetic on it would never end
    model_type = str(merged.get("model_type") or "")
    intermediate = integer("intermediate_size", "ffn_hidden_size", "n_inner") or 4 * hidden
    if model_type.startswith("llama4"):
        # Llama-4: intermediate_size is each expert's width, intermediate_size_mlp the dense layers'
        # (llama4.py:352); the shared expert is intermediate_size wide.
        intermediate = integer("intermediate_size_mlp") or intermediate
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
    layer_types = merged.get("layer_types")
    pattern = layer_pattern(merged, layers)
    if model_type.startswith("llama4") and integer("attention_chunk_size"):
        window = integer("attention_chunk_size")  # chunked local attention bounds the cache like a window
    if merged.get("use_sliding_window") is False:
        window = None  # Qwen2 configs carry a sliding_window value that is switched off
    elif window and pattern and any(kind in ("sliding", "chunked") for kind in pattern):
        window_layers = "pattern"
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
    if window is None and pattern:
        # no window: sliding/chunked layers hold full length like the others
        pattern = tuple("full" if kind in ("sliding", "chunked") else kind for kind in pattern)
        if all(kind == "full" for kind in pattern):
            pattern = ()

    experts = integer("num_local_experts", "num_experts", "n_routed_experts") or 0
    moe_intermediate = integer("moe_intermediate_size") or (integer("intermediate_size") or intermediate if experts else 0)
    shared_width = integer("shared_expert_intermediate_size") or 0
    shared_experts = integer("n_shared_experts") or (1 if shared_width or (experts and model_type.startswith("llama4")) else 0)
    quant = merged.get("quantization_config")
    if not isinstance(quant, dict) and isinstance(hf_quant_config, dict):
        quant = {"quant_method": "modelopt"}

    model = ModelSpec(
        id=model_id,
        family=model_type or "unknown",
        # The checkpoint's own class (what vLLM looks up in its registry) is the top-level one: a llava-style
        # text_config names its language model's class (MistralForCausalLM) too.
        architecture=str((config.get("architectures") or merged.get("architectures") or ["unknown"])[0]),
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
        qk_norm=model_type.startswith(("qwen3", "gemma3")),
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
        shared_experts=shared_experts if experts else 0,
        first_dense_layers=integer("first_k_dense_replace") or 0,
        router_bias=str(merged.get("topk_method", "")) == "noaux_tc",
        norms_per_layer=4 if model_type.startswith(("gemma2", "gemma3")) else 2,
        source="config.json",
        parameters_estimated=True,
        quantization=ModelFact(_quant_method(quant), "config.json quantization_config.quant_method"),
        layer_types=pattern,
        mlp_types=mlp_pattern(merged, layers) if experts else (),
        shared_expert_intermediate_size=shared_width,
        attention_output_gate=model_type.startswith("qwen3_next") or bool(merged.get("attn_output_gate")),
        linear_attention=linear_attention_of(merged, hidden) if pattern else None,
        vision_parameters=vision_parameters(config, hidden),
        vision=vision_tower(config, hidden),
    )
    scheme = quant_scheme(config, hf_quant_config, model)
    if scheme is not None:
        model = replace(model, quant_scheme=scheme, checkpoint_quantization=scheme.key or scheme.method)
    return _with_parameters(model)
