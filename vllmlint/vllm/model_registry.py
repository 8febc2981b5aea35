"""Which vLLM release's model registry has which architecture, and whether its Transformers fallback can exist:
data/model-registry.yaml (written by `python -m vllmlint_dev.model_registry` from the release wheels)."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from vllmlint.data import knowledge_dir, load_yaml_data
from vllmlint.lazyre import lazy_compile
from vllmlint.records import dataclass
from vllmlint.vllm.release import version_key


@dataclass(frozen=True)
class RegistryRelease:
    """One vLLM release read: its wheel's build date and whether its registry has a Transformers backend."""

    version: str
    built: str  # ISO date: the image published with the release holds a transformers released before it
    transformers_backend: bool
    source: str


@dataclass(frozen=True)
class Architecture:
    """One architecture name of config.json: the releases whose registry has it, and the first transformers
    release that defines a class of that name (None: no transformers release read defines one)."""

    name: str
    first: str
    last: str | None  # None: still in the newest release read
    missing: tuple[str, ...]
    kind: str
    transformers: str | None


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return load_yaml_data(knowledge_dir() / "model-registry.yaml")


@lru_cache(maxsize=1)
def _releases() -> dict[str, RegistryRelease]:
    return {str(r["version"]): RegistryRelease(str(r["version"]), str(r["built"]), bool(r["transformers_backend"]),
                                               str(r["source"])) for r in _data()["releases"]}


def release(version: str | None) -> RegistryRelease | None:
    """The release read under exactly that version (None: not read, so nothing is known of its registry)."""
    return _releases().get(version or "")


def backend_since() -> str | None:
    """The first release read whose registry has a Transformers backend."""
    return next((v for v in releases() if _releases()[v].transformers_backend), None)


def releases() -> list[str]:
    """The releases read, oldest first."""
    return sorted(_releases(), key=version_key)


@lru_cache(maxsize=4096)
def architecture(name: str) -> Architecture | None:
    """An architecture some release read has in its registry (None: none has it)."""
    row = _data()["architectures"].get(name)
    if row is None:
        return None
    return Architecture(name, str(row["first"]), str(row["last"]) if row.get("last") else None,
                        tuple(str(v) for v in row.get("missing") or ()), str(row["kind"]),
                        str(row["transformers"]) if row.get("transformers") else None)


def in_registry(name: str, version: str) -> bool | None:
    """Whether the registry of release `version` has the architecture; None when that release was not read."""
    if release(version) is None:
        return None
    found = architecture(name)
    if found is None:
        return False
    key = version_key(version)
    if key < version_key(found.first) or (found.last is not None and key > version_key(found.last)):
        return False
    return version not in found.missing


# `Qwen3ForSequenceClassification` -> `Qwen3`: the part before the task suffix.
_SUFFIX = lazy_compile(r"(For[A-Z][A-Za-z]*|LMHeadModel|Model)$")


def stem(name: str) -> str:
    return _SUFFIX.sub("", name) or name


@lru_cache(maxsize=1)
def _by_stem() -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {}
    for name in _data()["architectures"]:
        found.setdefault(stem(name), []).append(name)
    return {key: tuple(names) for key, names in found.items()}


def relatives_in_registry(name: str, version: str) -> list[str]:
    """Architectures of the release's registry with the same name before the task suffix (`Qwen3ForCausalLM`
    for `Qwen3ForSequenceClassification`): vLLM converts some of them into others (`_normalize_arch`, the
    `as_*_model` adapters), so a missing name with a relative there is not judged."""
    return [other for other in _by_stem().get(stem(name), ()) if other != name and in_registry(other, version)]


@lru_cache(maxsize=1)
def transformers_published() -> dict[str, str]:
    """transformers release -> the date its wheel was built (ISO), for every transformers release read."""
    return {str(r["version"]): str(r["published"]) for r in _data()["transformers_releases"]}


def newest_transformers_date() -> str:
    """The date of the newest transformers release read: an image built after it may hold one not read."""
    return max(transformers_published().values())


__all__ = ["RegistryRelease", "Architecture", "release", "releases", "backend_since", "architecture", "in_registry",
           "relatives_in_registry", "stem", "transformers_published", "newest_transformers_date"]
