"""Facts about how a vLLM server uses the pod's network, per release (`data/networking.yaml`, validated by
`schemas/networking.schema.json`): when `VLLM_PORT` equal to the API port stops the server, which variable names
its address, which pick NCCL's and Gloo's interface."""
from __future__ import annotations

from functools import lru_cache

from vllmlint.vllm.release import version_key


@lru_cache(maxsize=1)
def _table() -> dict:
    from vllmlint.data import knowledge_dir, load_yaml_data

    return load_yaml_data(knowledge_dir() / "networking.yaml") or {}


def vllm_port_fact() -> dict:
    """{last_failing, first_fixed, entrypoints, sources} of `vllm_port_vs_api_port`."""
    return _table().get("vllm_port_vs_api_port") or {}


def vllm_port_collides(release: str, kind: str) -> bool:
    """Whether `VLLM_PORT` equal to `--port` stops this release's server (the engine takes the port first)."""
    fact = vllm_port_fact()
    if not fact or kind not in fact.get("entrypoints", ()):
        return False
    return version_key(release) <= version_key(str(fact["last_failing"]))


def host_ip_fact() -> dict:
    """{variable, legacy_variable, legacy_last_read, legacy_ignored_from, sources} of `host_ip`."""
    return _table().get("host_ip") or {}


def legacy_host_ip_ignored(release: str) -> bool:
    """Whether this release ignores HOST_IP (reads only VLLM_HOST_IP)."""
    fact = host_ip_fact()
    return bool(fact) and version_key(release) >= version_key(str(fact["legacy_ignored_from"]))


def socket_ifname_variables() -> tuple[str, ...]:
    """The variables that pick NCCL's and Gloo's network interface (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME)."""
    return tuple((_table().get("socket_ifname") or {}).get("variables") or ())
