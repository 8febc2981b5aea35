"""VL113: a switch that turns on what the release already turns on by itself for this model.

`--enable-prefix-caching` and `--enable-chunked-prefill` have no argparse default (None in every catalogued
release): vLLM resolves them at start-up from the model, the platform and other options. When that resolution is
known to give True (data/engine-defaults.yaml: the release, a generative decoder model vllmlint knows or, where the
release turns it on for them too, a hybrid model whose architecture vLLM marks IsHybrid, a CUDA build of vLLM), the
switch only repeats the default. Silent wherever one of those is not known.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterator

from vllmlint.checks import Context
from vllmlint.checks.messages import release_phrase
from vllmlint.finding import Finding
from vllmlint.vllm.flags import OK
from vllmlint.vllm.invocation import Invocation, Option
from vllmlint.vllm.release import version_key


@lru_cache(maxsize=1)
def engine_defaults() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "engine-defaults.yaml")
    return data if isinstance(data, dict) else {}


def _period(periods: list[dict[str, Any]], release: str) -> dict[str, Any] | None:
    key = version_key(release)
    for period in periods:
        if version_key(str(period["from"])) <= key and ("before" not in period
                                                        or key < version_key(str(period["before"]))):
            return period
    return None


def _asks_on(options: list[Option]) -> Option | None:
    """The first occurrence when every occurrence turns the switch on (`--x`, `--x=true`); None when one turns
    it off (two values: conflicting-args, VL107) or a value is not known."""
    if not options:
        return None
    for option in options:
        resolution = option.resolution
        if option.status is None or option.status.kind != OK or resolution is None or option.spec is None:
            return None
        if option.spec.takes_value:
            text = (option.value or "").strip().lower() if option.value_known else None
            if text not in ("true", "1") and not (option.value is None and option.value_known):
                return None
        elif resolution.implied_value is not True:
            return None
    return options[0]


def _pooling(invocation: Invocation, flags: dict[str, list[str]]) -> bool:
    for name, values in flags.items():
        for option in invocation.option(name):
            if not option.value_known or option.value is None or option.value.strip().lower() in values:
                return True
    return False


def _cuda_build(invocation: Invocation) -> bool:
    from vllmlint.vllm.images import image_builds

    image = invocation.image
    if invocation.container is None or image is None:
        return False
    builds = image_builds(image, invocation.release)
    return bool(builds) and all(b.accelerator == "cuda" for b in builds)


def check(ctx: Context) -> Iterator[Finding | None]:
    data = engine_defaults()
    options = data.get("options") or []
    shape = data.get("decoder_models") or {}
    verified = str(data.get("verified_through") or "0")
    if not options or not shape:
        return
    from vllmlint.capacity.workload import workloads_by

    by_invocation = workloads_by(ctx.world, "invocation")
    for invocation in ctx.world.invocations:
        release = invocation.release or invocation.catalog.version
        if version_key(release) > version_key(verified):
            continue  # code not read: never guess
        asked = [(entry, option) for entry in options
                 for option in [_asks_on(invocation.option(f"--{entry['option']}"))] if option is not None]
        if not asked or not _cuda_build(invocation) or _pooling(invocation, shape.get("pooling_flags") or {}):
            continue
        works = by_invocation.get(id(invocation)) or []
        known = _model_kind(works[0] if works else None, shape, data.get("hybrid_models") or {}, release)
        if known is None:
            continue
        kind, model = known
        for entry, option in asked:
            period = _period(entry["periods"], release)
            if period is None or kind not in (period.get("models") or ("decoder",)) \
                    or any(invocation.option(flag) for flag in period.get("silent_with") or ()):
                continue
            flag = option.spec.canonical_flag if option.spec is not None else f"--{entry['option']}"
            yield ctx.finding(option.token, f"`{flag}` repeats the default: drop it. {release_phrase(invocation)} "
                              f"turns it on by itself for {_KINDS[kind]} such as {model}, so the flag "
                              "changes nothing (to turn it off, write `--no-" + flag[2:] + "`).",
                              about=invocation, value=flag)


_KINDS = {"decoder": "a generative decoder model",
          "hybrid": "a hybrid model (attention with Mamba or linear-attention layers)"}


def _model_kind(work: Any, shape: dict[str, Any], hybrid: dict[str, Any], release: str) -> tuple[str, str] | None:
    """("decoder", name) for a generative decoder model vllmlint knows, ("hybrid", name) for a generative model
    whose architecture the release marks IsHybrid (data `hybrid_models`); None for any other model (pure Mamba,
    state layers of an architecture not listed, pooling, unknown)."""
    if work is None:
        return None
    spec = work.config_match.model if work.config_match is not None else work.model
    if spec is None:
        return None
    architecture = str(spec.architecture)
    if not architecture.endswith(str(shape.get("architecture_suffix") or "\0")):
        return None
    named = work.model_name
    name = str(spec.id) if not named or named == spec.id else f"`{named}` (read as {spec.id})"
    key = version_key(release)
    listed = [entry for entry in hybrid.get("architectures") or () if entry["name"] == architecture]
    if listed:
        if not any(version_key(str(entry["from"])) <= key <= version_key(str(entry.get("through") or release))
                   for entry in listed):
            return None  # a release not read for this architecture
        # vLLM resolves it as hybrid, or as a plain decoder when every layer is attention (granite-4.0-micro);
        # the periods listing `hybrid` turn the switch on for both, so either reading gives the same default.
        return "hybrid", name
    if set(spec.layer_types or ()) & set(shape.get("state_layer_types") or ()) or spec.linear_attention is not None:
        return None  # state layers of an architecture not listed (attention-free Mamba, a hybrid not read)
    return "decoder", name
