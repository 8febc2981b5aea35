"""Does model M on vLLM release R need `--trust-remote-code`? One answer for every rule that asks.

VL712 (trust-remote-code-required: the flag is missing where it is needed) and VL801 (the flag where it is
not needed) both call `needs_trust_remote_code()`, so they can never disagree about a model and a release.

How vLLM decides (vllm/transformers_utils/config.py `get_config`, e.g. vllm-0.7.3 lines 265-306): it reads
config.json's `model_type`; a model_type in vLLM's own `_CONFIG_REGISTRY` is loaded with vLLM's config
class; any other goes to transformers' `AutoConfig.from_pretrained(model, trust_remote_code=...)`, which
runs the repository's own config code (config.json `auto_map.AutoConfig`) only when the model_type is not
in its CONFIG_MAPPING; without the flag that is transformers' ValueError "Loading M requires you to execute
the configuration file in that repo on your local machine" (transformers/dynamic_module_utils.py
`resolve_trust_remote_code`, line 680 of 4.48.3), re-raised by vLLM as "Failed to load the model config. If
the model is a custom model not yet available in the HuggingFace transformers library, consider setting
`trust_remote_code=True` in LLM or using the `--trust-remote-code` flag in the CLI."

Which transformers a release runs: at least the minimum its wheel requires (METADATA Requires-Dist), at most
its cap; an image built with the release (vllm/vllm-openai:vX) holds a transformers released before the
image was built. data/config-registry.yaml records, per release range, the requirement, vLLM's registry
and the date of the last wheel; data/capacity/models.yaml records, per model, model_type, auto_map and the
first transformers release that knows the model_type.

The answer: True (vLLM fails at start without the flag), False (the flag makes no difference to loading
the model's config: no repository code, or a model_type vLLM or every transformers the release accepts
knows), None (not known: model or release not catalogued, or a transformers new enough may be installed).
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass
from functools import lru_cache
from typing import Any

from vllmlint.capacity.specs import ModelSpec
from vllmlint.data import knowledge_dir
from vllmlint.vllm.checkpoint import off_main
from vllmlint.vllm.release import release_from_tag, version_key


@dataclass(frozen=True)
class ReleaseRange:
    """Consecutive vLLM releases with the same transformers requirement and config registry."""

    first: str
    last: str
    transformers: str  # the requirement as the wheel states it: ">=4.48.2", "<5,>=4.56.0"
    last_built: str  # ISO date of the last release's wheel: its image cannot hold a later transformers
    config_registry: frozenset[str]
    source: str

    def holds(self, release: str) -> bool:
        key = version_key(release)
        return version_key(self.first) <= key <= version_key(self.last)

    @property
    def transformers_minimum(self) -> tuple[int, ...] | None:
        found = re.search(r">=\s*([0-9][0-9.]*)", self.transformers)
        return _numbers(found.group(1)) if found else None

    @property
    def transformers_below(self) -> tuple[int, ...] | None:
        """The exclusive upper bound of the requirement (`<5` -> (5,)), None when uncapped."""
        found = re.search(r"(?<![<>=!])<\s*([0-9][0-9.]*)", self.transformers)
        return _numbers(found.group(1)) if found else None


def _numbers(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in re.findall(r"\d+", version)[:3]]
    return tuple(parts + [0] * (3 - len(parts)))


@lru_cache(maxsize=1)
def _data() -> tuple[tuple[ReleaseRange, ...], dict[str, str]]:
    from vllmlint.data import load_yaml_data

    raw: Any = load_yaml_data(knowledge_dir() / "config-registry.yaml")
    ranges = tuple(ReleaseRange(str(r["first"]), str(r["last"]), str(r["transformers"]), str(r["last_built"]),
                                frozenset(r["config_registry"]), str(r["source"])) for r in raw["releases"])
    published = {str(t["version"]): str(t["published"]) for t in raw["transformers_releases"]}
    return ranges, published


def release_range(release: str | None) -> ReleaseRange | None:
    """The range of data/config-registry.yaml holding `release`; None for an unknown or uncatalogued release."""
    if not release:
        return None
    try:
        version_key(release)
    except ValueError:
        return None
    return next((r for r in _data()[0] if r.holds(release)), None)


def needs_trust_remote_code(model: ModelSpec, release: str | None, *, release_image: bool = False) -> bool | None:
    """Whether serving `model` on vLLM `release` needs --trust-remote-code: True / False / None (unknown).

    `release_image`: vLLM runs from the image published with the release (vllm/vllm-openai:vX), so its
    transformers is no newer than the last one released before that image was built. Without it (a
    `pip install vllm==X`, another image) a newer transformers may be installed and True is never certain
    unless the release's own requirement caps transformers below the one that knows the model.
    """
    facts = model.needs_trust_remote_code
    if facts is None:
        return None
    if facts.remote_config is None:
        return False  # config.json has no auto_map: there is no repository code for the flag to allow
    row = release_range(release)
    if row is None:
        return None
    if facts.model_type in row.config_registry:
        return False  # vLLM's own config class
    since = _numbers(facts.transformers_since) if facts.transformers_since else None
    minimum = row.transformers_minimum
    if since is not None and minimum is not None and minimum >= since:
        return False  # every transformers the release accepts knows the model_type
    below = row.transformers_below
    if since is None or (below is not None and below <= since):
        return True  # no transformers this release may run knows it
    published = _data()[1].get(facts.transformers_since or "")
    if release_image and published is not None and row.last_built < published:
        return True  # the image was built before the transformers that knows it was released
    return None


# --- tokenizer code (data/tokenizer-code.yaml) --------------------------------------------------------------
@dataclass(frozen=True)
class TokenizerCode:
    """A repository whose tokenizer_config.json names a tokenizer class that is code in the repository
    (auto_map.AutoTokenizer) and that transformers does not have."""

    id: str
    model_type: str
    auto_map: str
    tokenizer_class: str
    source: str


@lru_cache(maxsize=1)
def _tokenizer_data() -> tuple[dict[str, TokenizerCode], tuple[int, ...], tuple[int, ...]]:
    from vllmlint.data import load_yaml_data

    raw: Any = load_yaml_data(knowledge_dir() / "tokenizer-code.yaml")
    listed = {str(r["id"]).lower(): TokenizerCode(str(r["id"]), str(r["model_type"]), str(r["auto_map"]),
                                                   str(r["tokenizer_class"]), str(r["source"]))
              for r in raw["repositories"]}
    versions = raw["transformers"]
    return listed, _numbers(str(versions["refuses_below"])), _numbers(str(versions["not_judged_from"]))


def tokenizer_code(name: str | None) -> TokenizerCode | None:
    """The tokenizer-code fact of the repository `name` (its id, case-insensitively); None when not listed."""
    return _tokenizer_data()[0].get((name or "").strip().lower())


def _tokenizer_loaded_from(invocation, name: str) -> bool:
    """The tokenizer vLLM loads is the repository `name`'s at main: no other `--tokenizer`, a tokenizer revision
    (`--tokenizer-revision`, else `--revision`) absent or main, and the tokenizer is loaded at all."""
    if invocation.option("--skip-tokenizer-init"):
        return False
    others = invocation.option("--tokenizer")
    if others and not all(o.value_known and str(o.value).strip().lower() == name.strip().lower() for o in others):
        return False
    if invocation.option("--tokenizer-revision"):
        return not off_main(invocation, "--tokenizer-revision")
    return not off_main(invocation, "--revision")


def tokenizer_needs_flag(world, work) -> tuple[TokenizerCode, ReleaseRange] | None:
    """(fact, release range) when the repository this workload serves has repository tokenizer code and every
    transformers its vLLM release accepts refuses it without --trust-remote-code (the release caps transformers
    below data/tokenizer-code.yaml `refuses_below`); None otherwise: not listed, another tokenizer or revision, a
    release that may run a later transformers, packages installed first, or a config not described."""
    name = work.model_name
    fact = tokenizer_code(name)
    invocation = work.invocation
    if fact is None or name is None or not describes(invocation) or not _tokenizer_loaded_from(invocation, name):
        return None
    container = invocation.container
    if container is not None and _installs_packages(world, container):
        return None
    row = release_range(invocation.release)
    if row is None:
        return None
    _listed, refuses_below, _not_judged = _tokenizer_data()
    below = row.transformers_below
    if below is None or below > refuses_below:
        return None  # the release may run a transformers that decides otherwise
    return fact, row


# --- the fact for one invocation: what VL712 and VL801 act on ----------------------------------------------
# Flags that make vLLM read another config than the repository's config.json: then the repository's config
# code is not what is loaded (vllm/engine/arg_utils.py: --config-format mistral reads params.json;
# --hf-config-path reads the config from another repository or folder).
_OTHER_CONFIG = ("--hf-config-path",)
_HF_FORMATS = ("auto", "hf")
_INSTALLERS = ("pip", "pip3", "uv")


def release_image(invocation) -> bool:
    """vLLM runs from the CUDA image published with its release (vllm/vllm-openai:vX): the transformers in it
    predates the image."""
    image = invocation.image
    if image is None or not image.repository.endswith("vllm/vllm-openai") or invocation.release is None:
        return False
    return release_from_tag(image.tag) == invocation.release


def _installs_packages(world, container) -> bool:
    """The container runs `pip install` / `uv pip install` before vLLM: its transformers may be another."""
    return id(container) in _installing_containers(world)


def installs_packages(world, container) -> bool:
    """The container installs packages before vLLM starts (its transformers may be another than the image's):
    the public name VL720 asks."""
    return _installs_packages(world, container)


def _installing_containers(world) -> set[int]:
    """Ids of the containers whose commands install packages, found in one pass over the run's shell commands
    (cached on the world: asked once per workload, it was a pass per workload)."""
    return world.fact(_installing)


def _installing(world) -> set[int]:
    found: set[int] = set()
    for command in world.shell_commands:
        words = command.words
        if command.container is None or not words:
            continue
        first = words[0].rsplit("/", 1)[-1]
        if (first in _INSTALLERS or (first.startswith("python") and "pip" in words[1:3])) and "install" in words:
            found.add(id(command.container))
    return found


def describes(invocation) -> bool:
    """Whether the catalog's fact (main's config.json, read through transformers) is what this invocation loads.
    Not with a `--config` file (it may set trust-remote-code, revision, hf-config-path: not read), a revision
    other than main (another revision's config and code may differ), or a config read from elsewhere
    (`--hf-config-path`, a `--config-format` other than auto/hf, or one not known). VL712 and VL801 both ask it."""
    if any(invocation.option(f) for f in _OTHER_CONFIG) or invocation.config_file is not None:
        return False
    if off_main(invocation, "--revision") or off_main(invocation, "--code-revision"):
        return False
    formats = invocation.option("--config-format")
    return not formats or all(o.value_known and str(o.value).lower() in _HF_FORMATS for o in formats)


def answer(world, work) -> bool | None:
    """`needs_trust_remote_code()` for the repository this workload serves: None unless it names a catalogued
    repository by its id (a fork or quantized copy has its own config), or when the container installs
    packages first (its transformers may be another); True as well when its tokenizer is repository code
    (`tokenizer_needs_flag`). The one answer VL712 and VL801 act on."""
    if tokenizer_needs_flag(world, work) is not None:
        return True  # the tokenizer is repository code, whatever the config needs
    match = work.match
    if match is None or match.how not in ("exact id", "case-insensitive id"):
        return None
    invocation = work.invocation
    container = invocation.container
    if container is not None and _installs_packages(world, container):
        return None
    return needs_trust_remote_code(match.model, invocation.release, release_image=release_image(invocation))



__all__ = ["ReleaseRange", "release_range", "needs_trust_remote_code", "release_image", "installs_packages", "describes",
           "answer", "TokenizerCode", "tokenizer_code", "tokenizer_needs_flag"]
