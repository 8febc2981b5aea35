"""Turning what a manifest says (`--model meta-llama/Llama-3.1-70B-Instruct`, `/models/llama-3.1-70b`) into a catalogued model.

Resolution never guesses: each step below either finds exactly one model or falls through, and an
ambiguous or unknown name gives None.
  1. exact Hugging Face id (or alias)
  2. the same, case-insensitively
  3. a quantized repository (-AWQ, -GPTQ-Int4, -FP8, ...) of a catalogued repository name, any owner
  4. an -Instruct / -it / -Chat / base variant of a catalogued repository name
  5. for local paths only: the path's words contain every word of exactly one model's name, and every
     size token in the path (70b, 0.6b, 8x7b, a3b) belongs to that model
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass
from typing import Iterable

from vllmlint.capacity.specs import ModelSpec, models
from vllmlint.lazyre import lazy_compile


@dataclass(frozen=True)
class Match:
    model: ModelSpec
    how: str
    quantization: str | None = None


# Repository-name suffixes that announce a weight quantization, longest first so "-GPTQ-Int4" wins
# over "-GPTQ".  Values are the quantization names estimate() understands.
_QUANT_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("-autoround-gptq-4bit", "gptq-int4"),  # AutoRound exported in the GPTQ format (Intel's auto-round)
    ("-autoround-gptq-int4", "gptq-int4"),
    ("-gptq-4bit", "gptq-int4"),
    ("-gptq-8bit", "gptq-int8"),
    ("-awq-int4", "awq"),
    ("-gptq-int4", "gptq-int4"),
    ("-gptq-int8", "gptq-int8"),
    ("-fp8-dynamic", "fp8"),
    ("-bnb-4bit", "bnb-4bit"),
    ("-quantized.w4a16", "int4"),
    ("-quantized.w8a8", "int8"),
    ("-w4a16", "int4"),
    ("-w8a8", "int8"),
    ("-awq", "awq"),
    ("-gptq", "gptq-int4"),
    ("-fp8", "fp8"),
    ("-int4", "int4"),
    ("-int8", "int8"),
)
_QUANT_LABELS = {"awq": "AWQ", "gptq-int4": "GPTQ-Int4", "gptq-int8": "GPTQ-Int8", "fp8": "FP8",
                 "bnb-4bit": "bnb-4bit", "int4": "int4", "int8": "int8"}
_VARIANT_SUFFIXES = ("-instruct", "-chat", "-it", "-base")


def split_quantization(name: str) -> tuple[str, str | None]:
    """("Qwen2.5-7B-Instruct-AWQ") -> ("Qwen2.5-7B-Instruct", "awq"); names without a suffix come back unchanged."""
    lowered = name.lower()
    for suffix, quant in _QUANT_SUFFIXES:
        if lowered.endswith(suffix):
            return name[: -len(suffix)], quant
    return name, None


def _strip_variant(name: str) -> str:
    lowered = name.lower()
    for suffix in _VARIANT_SUFFIXES:
        if lowered.endswith(suffix):
            return lowered[: -len(suffix)]
    return lowered


def _repo_name(hf_id: str) -> str:
    return hf_id.rsplit("/", 1)[-1]


def _is_local_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~")) or name.count("/") > 1 or "\\" in name


def _unique(candidates: Iterable[ModelSpec]) -> ModelSpec | None:
    found = {model.id: model for model in candidates}
    return next(iter(found.values())) if len(found) == 1 else None


def _by_repo_name(name: str, catalog: tuple[ModelSpec, ...], variant: bool) -> ModelSpec | None:
    """The one model one of whose repository names equals `name` (owner ignored, case-insensitive)."""
    key = _strip_variant(name) if variant else name.lower()
    hits = []
    for model in catalog:
        for full in model.names:
            candidate = _repo_name(full)
            candidate = _strip_variant(candidate) if variant else candidate.lower()
            if candidate == key:
                hits.append(model)
    return _unique(hits)


# ---------------------------------------------------------------- tokens for local paths

_SIZE_TOKEN = lazy_compile(r"^(?:\d+x\d+(?:\.\d+)?b|\d+(?:\.\d+)?[bm]|a\d+(?:\.\d+)?b)$")
_NOISE_WORDS = {"instruct", "chat", "it", "base", "hf", "models", "model", "meta", "mnt", "data", "weights", "main"}


def _tokens(text: str) -> list[str]:
    """Words of a name: 'Meta-Llama-3.1-70B-Instruct' -> ['meta', 'llama', '3.1', '70b', 'instruct'].

    Letters and numbers are separated ('qwen2.5' -> 'qwen', '2.5') except in size tokens ('70b',
    '8x7b', 'a3b') so that 'qwen2.5-7b' and 'Qwen-2.5-7B' tokenise alike.
    """
    words = []
    for piece in re.split(r"[-_/\s]+", text.lower()):
        if not piece:
            continue
        if _SIZE_TOKEN.match(piece):
            words.append(piece)
            continue
        words.extend(part for part in re.findall(r"[a-z]+|\d+(?:\.\d+)*", piece) if part)
    return words


def _core_tokens(model_name: str) -> set[str]:
    return {word for word in _tokens(model_name) if word not in _NOISE_WORDS}


_HF_CACHE_DIR = lazy_compile(r"(?:^|[/\\])models--([^/\\]+?)--([^/\\]+)")


def _resolve_local_path(path: str, catalog: tuple[ModelSpec, ...]) -> tuple[ModelSpec | None, str | None]:
    cached = _HF_CACHE_DIR.search(path)
    if cached:
        # A Hugging Face cache directory (.../hub/models--Qwen--Qwen2.5-7B-Instruct/snapshots/<hash>) names its repo.
        match = resolve_model(f"{cached.group(1)}/{cached.group(2)}", catalog)
        return (match.model, match.quantization) if match else (None, None)
    stripped = path.rstrip("/\\")
    leaf = re.split(r"[/\\]", stripped)[-1]
    leaf, quant = split_quantization(leaf)

    # The last path component spelled like a repository name is the strongest signal.
    exact = _by_repo_name(leaf, catalog, variant=False) or _by_repo_name(leaf, catalog, variant=True)
    if exact:
        return exact, quant

    parent = re.split(r"[/\\]", stripped)[:-1]
    words = set(_tokens(" ".join(parent[-1:] + [leaf])))
    sizes = {word for word in words if _SIZE_TOKEN.match(word)}
    if not sizes:
        return None, quant  # without a size (70b, 7b) a family name alone is ambiguous
    hits = []
    for model in catalog:
        for name in model.names:
            core = _core_tokens(_repo_name(name))
            if core <= words and sizes <= core:
                hits.append(model)
                break
    return _unique(hits), quant


def _resolve_model(name_or_path: str, extra_models: Iterable[ModelSpec] | None = None) -> Match | None:
    """resolve_model, computed (scans the catalog)."""
    name = (name_or_path or "").strip().strip("\"'")
    if not name:
        return None
    catalog = tuple(extra_models or ()) + models()

    if _is_local_path(name):
        model, quant = _resolve_local_path(name, catalog)
        if model is None:
            return None
        return Match(model, f"local path {name} matched {model.id}", quant)

    for model in catalog:
        if name in model.names:
            return Match(model, "exact id")
    lowered = name.lower()
    hit = _unique(model for model in catalog if lowered in (n.lower() for n in model.names))
    if hit:
        return Match(hit, "case-insensitive id")

    repo = _repo_name(name)
    unquantized, quant = split_quantization(repo)
    if quant:
        hit = _by_repo_name(unquantized, catalog, variant=False) or _by_repo_name(unquantized, catalog, variant=True)
        if hit:
            return Match(hit, f"quantized variant ({_QUANT_LABELS[quant]}) of {hit.id}", quant)
        return None
    if "/" in name:
        hit = _by_repo_name(repo, catalog, variant=True)
        if hit:
            return Match(hit, f"variant of {hit.id} (-Instruct/-it)")
    return None


__all__ = ["Match", "resolve_model", "split_quantization", "model_suggestions", "gpu_suggestions"]


# ---------------------------------------------------------------- did-you-mean (the planner's usage errors)


def model_suggestions(name: str, limit: int = 5) -> list[str]:
    """Catalogued model ids a name that did not resolve may have meant, best first: every model one of whose
    names holds all the name's words and size tokens (`llama-3.1-70b` -> meta-llama/Llama-3.1-70B-Instruct),
    else the closest repository names by spelling. Never used to resolve: only to say "did you mean"."""
    import difflib

    catalog = models()
    repo = _repo_name((name or "").strip().strip("\"'"))
    words = _core_tokens(split_quantization(repo)[0])
    hits: list[str] = []
    def holds(tokens: set[str]) -> bool:  # every word present; a version `3` also matches `3.1`
        return all(word in tokens or (word[0].isdigit() and any(t.startswith(word + ".") for t in tokens))
                   for word in words)

    if words:
        for model in catalog:
            if any(holds(_core_tokens(_repo_name(full))) for full in model.names) and model.id not in hits:
                hits.append(model.id)
    if hits:
        return hits[:limit]
    by_repo = {_repo_name(full).lower(): model.id for model in catalog for full in model.names}
    for close in difflib.get_close_matches(repo.lower(), list(by_repo), n=limit * 2, cutoff=0.6):
        if by_repo[close] not in hits:
            hits.append(by_repo[close])
    return hits[:limit]


def gpu_suggestions(name: str, limit: int = 5) -> list[str]:
    """Catalogued GPU ids a name that did not resolve (find_gpu) may have meant, best first: the GPUs one of
    whose names starts with it (`A100` -> A100-40GB, A100-80GB; Karpenter's shared `a100` the same way), else
    the closest spellings. Only for a "did you mean": a prefix is never taken as the answer."""
    import difflib

    from vllmlint.capacity.specs import gpu_name_key, gpu_spellings, gpus

    wanted = gpu_name_key(name)
    spelled: dict[str, str] = {}
    for gpu in gpus():
        for spelling in (*gpu_spellings(gpu), *gpu.karpenter_gpu_names):
            spelled.setdefault(gpu_name_key(spelling), gpu.id)
    hits: list[str] = []
    if wanted:
        for spelling, gpu_id in spelled.items():
            if spelling.startswith(wanted) and gpu_id not in hits:
                hits.append(gpu_id)
    if not hits:
        for close in difflib.get_close_matches(wanted, list(spelled), n=limit * 2, cutoff=0.6):
            if spelled[close] not in hits:
                hits.append(spelled[close])
    return hits[:limit]


_RESOLVED: dict[str, tuple[tuple[ModelSpec, ...], Match | None]] = {}  # name -> (the models searched, match)


def resolve_model(name_or_path: str, extra_models: Iterable[ModelSpec] | None = None) -> Match | None:
    """The catalogued model `name_or_path` refers to, how it was recognised, and the quantization its name implies
    (remembered per name and models searched: every rule about capacity asks for every workload's model)."""
    extra = tuple(extra_models or ())
    catalog = extra + models()
    cached = _RESOLVED.get(name_or_path)
    if cached is not None and cached[0] == catalog:  # the same models (tuples compare by identity first)
        return cached[1]
    match = _resolve_model(name_or_path, extra)
    if len(_RESOLVED) >= 4096:  # a long-lived process (the language server)
        _RESOLVED.clear()
    _RESOLVED[name_or_path] = (catalog, match)
    return match
