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


def reuse_port_fact() -> dict:
    """{last_without, first_always, last_always, first_multi_server_only, entrypoints, sources} of
    `api_reuse_port`."""
    return _table().get("api_reuse_port") or {}


# The options that change `--api-server-count`'s default from 1 (0.26.0 vllm/entrypoints/cli/serve.py:99-121).
# Long forms `--data-parallel-*`, short forms `-dp`, `-dpl`, ... (0.26.0 vllm/engine/arg_utils.py:1039-1093).
_DATA_PARALLEL_PREFIXES = ("--data-parallel", "--data_parallel", "-dp")


def _api_server_count(invocation) -> int | None:
    """`--api-server-count` of a `vllm serve` on 0.26.0 and later: as given, 1 without any data-parallel
    option (the default), None when unknown."""
    counts = invocation.option("--api-server-count", "-asc")
    if counts:
        last = counts[-1]
        if not last.value_known or last.value is None:
            return None
        try:
            return int(last.value)
        except ValueError:
            return None
    for option in invocation.options:
        if option.canonical.startswith(_DATA_PARALLEL_PREFIXES) or option.name.startswith(_DATA_PARALLEL_PREFIXES):
            return None
    return 1


def api_reuse_port(invocation) -> bool | None:
    """Whether this invocation's API socket sets SO_REUSEPORT: True, False, or None when the release (or
    the API server count) is unknown or the release was not read."""
    fact = reuse_port_fact()
    release = invocation.release
    if not fact or invocation.kind not in fact.get("entrypoints", ()) or release is None or invocation.assumed:
        return None
    try:
        key = version_key(release)
    except ValueError:
        return None
    if key <= version_key(str(fact["last_without"])):
        return False
    if version_key(str(fact["first_always"])) <= key <= version_key(str(fact["last_always"])):
        return True
    if key >= version_key(str(fact["first_multi_server_only"])):
        if invocation.kind != "serve":
            return False  # `python -m vllm.entrypoints.openai.api_server` passes reuse_port=False
        count = _api_server_count(invocation)
        return None if count is None else count > 1
    return None


def runs_beside(container) -> bool:
    """Whether a container runs beside the app containers, sharing the pod's network while vLLM serves: an app
    container, or a native sidecar (an init container with `restartPolicy: Always`); ordinary init containers
    have exited before the app containers start (https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/)."""
    if not container.init:
        return True
    from vllmlint.source.yamlmodel import scalar_str

    return scalar_str(container.node.get("restartPolicy")) == "Always"
