"""Facts about the ports a vLLM server binds, per release (`data/ports.yaml`, validated by
`schemas/ports.schema.json`): when `VLLM_PORT` equal to the API port stops the server."""
from __future__ import annotations

from functools import lru_cache

from vllmlint.vllm.release import version_key


@lru_cache(maxsize=1)
def _table() -> dict:
    from vllmlint.data import knowledge_dir, load_yaml_data

    return load_yaml_data(knowledge_dir() / "ports.yaml") or {}


def vllm_port_fact() -> dict:
    """{last_failing, first_fixed, entrypoints, sources} of `vllm_port_vs_api_port`."""
    return _table().get("vllm_port_vs_api_port") or {}


def vllm_port_collides(release: str, kind: str) -> bool:
    """Whether `VLLM_PORT` equal to `--port` stops this release's server (the engine takes the port first)."""
    fact = vllm_port_fact()
    if not fact or kind not in fact.get("entrypoints", ()):
        return False
    return version_key(release) <= version_key(str(fact["last_failing"]))
