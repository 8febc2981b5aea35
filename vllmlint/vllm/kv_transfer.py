"""Disaggregated prefill/decode wiring of one vLLM invocation: the KV connectors `--kv-transfer-config` names,
the side channel they open (host and port variables, default port and how many ports one engine binds, per
release) and the port `--kv-events-config` binds. The facts are sourced data (`data/kv-transfer.yaml`,
validated by `schemas/kv-transfer.schema.json`); this module only applies them to an invocation.

A JSON option is read as vLLM's parser builds it: the whole JSON (`--kv-transfer-config '{...}'`) and its
dotted keys (`--kv-transfer-config.kv_connector NixlConnector`), in argv order. It is unknown (None) when a
value is not in the manifest (`$VAR`), is not a JSON object, or a `--config` file may set it.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from vllmlint.records import dataclass

from vllmlint.vllm.release import version_key

if TYPE_CHECKING:
    from vllmlint.vllm.invocation import Invocation, Option


@lru_cache(maxsize=1)
def kv_transfer_data() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "kv-transfer.yaml")
    return data if isinstance(data, dict) else {}


def in_releases(bounds: dict[str, Any] | None, release: str) -> bool:
    """Whether `release` lies within {from, to} (either may be missing)."""
    if not bounds:
        return True
    try:
        key = version_key(release)
        if bounds.get("from") and key < version_key(str(bounds["from"])):
            return False
        return not (bounds.get("to") and key > version_key(str(bounds["to"])))
    except ValueError:
        return False


def by_release(rows: list[dict[str, Any]] | None, release: str | None, field: str = "value") -> Any:
    """The `field` of the first row whose `releases` hold `release`; None for an unknown release or none."""
    if release is None:
        return None
    return next((row.get(field) for row in rows or () if in_releases(row.get("releases"), release)), None)


@dataclass(frozen=True)
class JsonConfig:
    """A JSON option as vLLM builds it, and the options that set it, in argv order."""

    value: dict
    options: list  # the Options, in argv order


def json_config(invocation: Invocation, flag: str) -> JsonConfig | None:
    """`flag`'s JSON object (whole and dotted forms merged in argv order), or None: not given, a value not
    known here, not a JSON object, or a `--config` file that may set it."""
    options = invocation.option(flag)
    if not options:
        return None
    import json  # here, not at start-up: only invocations with these options need it

    value: dict = {}
    for option in options:
        if not option.value_known or option.value is None or "$" in option.value:
            return None
        path = option.resolution.json_path if option.resolution is not None else ()
        if path:
            target = value
            for key in path[:-1]:
                nested = target.get(key)
                if not isinstance(nested, dict):
                    nested = target[key] = {}
                target = nested
            target[path[-1]] = option.value
            continue
        try:
            parsed = json.loads(option.value)
        except ValueError:
            return None
        if not isinstance(parsed, dict):
            return None
        value = parsed
    return JsonConfig(value, list(options))


def value_option(config: JsonConfig) -> Option:
    """The option a finding about the JSON value points at (the last one given)."""
    return config.options[-1]


KV_OPTION = "--kv-transfer-config"


def connector_nodes(config: JsonConfig, key: str = "kv_connector") -> list[tuple[str, dict]]:
    """The connectors a transfer config runs, each with its own config: `kv_connector` (`ec_connector`), and a
    MultiConnector's listed connectors (each child is a kv-transfer config of its own: MultiConnector builds
    `KVTransferConfig(**child)`, nothing inherited but the engine ID)."""
    data = kv_transfer_data().get("multi_connector") or {}
    found: list[tuple[str, dict]] = []

    def visit(node: Any, depth: int) -> None:
        if not isinstance(node, dict) or depth > 4:
            return
        name = node.get(key)
        if isinstance(name, str):
            found.append((name, node))
        if name == data.get("name"):
            extra = node.get("kv_connector_extra_config")
            children = extra.get(data.get("key", "connectors")) if isinstance(extra, dict) else None
            for child in children if isinstance(children, list) else ():
                visit(child, depth + 1)

    visit(config.value, 0)
    return found


def connector_names(config: JsonConfig) -> list[str]:
    """The connectors a kv-transfer config runs: `kv_connector`, and a MultiConnector's listed connectors."""
    return [name for name, _ in connector_nodes(config)]


def side_channel(name: str, option: str = KV_OPTION) -> dict[str, Any] | None:
    """The (first) data row of a connector that listens (NixlConnector, MooncakeConnector...) named in `option`,
    or None."""
    return next(iter(listener_rows(name, option)), None)


def listener_rows(name: str, option: str = KV_OPTION) -> list[dict[str, Any]]:
    """Every data row of a connector named in `option`: one per listener it opens (MoRIIOConnector has two)."""
    return [row for row in kv_transfer_data().get("connectors", [])
            if row.get("name") == name and row.get("option", KV_OPTION) == option]


@dataclass(frozen=True)
class Wired:
    """A connector that listens: its data row, its own config (a MultiConnector's child), the option naming it."""

    row: dict[str, Any]
    node: dict
    config: JsonConfig


def side_channels(invocation: Invocation) -> list[Wired]:
    """The connectors that listen among those `--kv-transfer-config` and `--ec-transfer-config` run (none when a
    config is unknown)."""
    found: list[Wired] = []
    keys: dict[str, str] = {}
    for row in kv_transfer_data().get("connectors", []):
        keys.setdefault(row.get("option", KV_OPTION), row.get("connector_key", "kv_connector"))
    for option, key in keys.items():
        config = json_config(invocation, option)
        if config is None:
            continue
        for name, node in connector_nodes(config, key):
            found.extend(Wired(row, node, config) for row in listener_rows(name, option))
    return found


def bind_address(row: dict[str, Any], release: str | None) -> str | None:
    """Where a connector without a host variable binds on `release`: "host" (vLLM's get_ip(), the pod's address),
    "any" (0.0.0.0) or "key" (its config's `host_key`); None when the release is unknown or not read."""
    value = by_release(row.get("binds"), release, "address")
    return value if value in ("host", "any", "key") else None


def config_host(row: dict[str, Any], node: dict) -> tuple[str | None, bool]:
    """(the host a connector's own config binds and advertises, whether written there): `host_key`'s value, or
    its default; (None, True) when the written value is not a string."""
    value = node.get(row["host_key"])
    if value is None:
        return row["host_key_default"], False
    return (value, True) if isinstance(value, str) else (None, True)


def binds_nothing(row: dict[str, Any], node: dict, release: str | None) -> bool | None:
    """Whether this connector's config makes it bind nothing: a role that does not listen (Mooncake's decode
    side, an encoder-cache consumer), a switch it needs left off, or an extra-config key that points it at a
    server elsewhere; None when not known here."""
    role = node.get(row.get("role_key", "kv_role"))
    if role in row.get("not_for_roles", ()):
        return True
    extra = node.get(row.get("extra_key", "kv_connector_extra_config"))
    switch = row.get("only_with_extra_true")
    if switch:
        value = _truthy(extra.get(switch, False)) if isinstance(extra, dict) else False
        if value is not True:
            return None if value is None else True
    for entry in row.get("not_with_extra_config", ()):
        if release is None:
            return None
        if in_releases(entry.get("releases"), release) and isinstance(extra, dict) and entry["key"] in extra:
            return True
    return False


def port_key_name(row: dict[str, Any]) -> str | None:
    """The config key that holds a listener's port (`kv_port`, or an extra-config key such as MoRIIOConnector's
    `handshake_port`); None when an environment variable holds it."""
    return row.get("port_key") or row.get("port_extra_key")


def key_port(row: dict[str, Any], node: dict, release: str | None) -> tuple[int | None, bool] | None:
    """(port, written) of a connector whose port is a field of its own config (`kv_port`) or of its extra config
    (`handshake_port`): the value written, or the release's default; None when the row has no such field,
    (None, written) when not known. An empty extra-config value takes the default, as MoRIIOConnector's
    `_set_port_defaults` does (`not extra_config["handshake_port"]`)."""
    key = row.get("port_key")
    holder: Any = node
    if not key:
        key = row.get("port_extra_key")
        if not key:
            return None
        holder = node.get(row.get("extra_key", "kv_connector_extra_config"))
        if holder is None:
            holder = {}
        if not isinstance(holder, dict):
            return None, True
        if key in holder and holder[key] in ("", 0, None):
            return default_port(row, release), False
    if key in holder:
        text = str(holder[key]).strip()
        return (int(text) if text.isdigit() else None), True
    return default_port(row, release), False


def advertised_extra(row: dict[str, Any], node: dict, release: str | None) -> tuple[str, str] | None:
    """(key, value) of the extra-config address a connector advertises to its peer (MoRIIOConnector's `host_ip`)
    when written as a string and read by `release` (an unknown release: the newest's rule); None otherwise (vLLM
    then advertises get_ip(), the pod's address)."""
    spec = row.get("advertise_extra_key")
    if not spec:
        return None
    if release is not None and not in_releases(spec.get("releases"), release):
        return None
    extra = node.get(row.get("extra_key", "kv_connector_extra_config"))
    value = extra.get(spec["key"]) if isinstance(extra, dict) else None
    return (spec["key"], value) if isinstance(value, str) and value.strip() else None


def default_port(row: dict[str, Any], release: str | None) -> int | None:
    value = by_release(row.get("port_defaults"), release)
    return value if isinstance(value, int) else None


def port_span(row: dict[str, Any], release: str | None, tensor_parallel: int | None, data_parallel: int | None) -> int:
    """How many consecutive ports from the base one engine binds: 1 when the release's rule or a size is unknown
    (the base port is bound whatever they are)."""
    per = by_release(row.get("port_spans"), release, "per")
    dp = data_parallel or 1
    if per == "tp_dp":
        return (tensor_parallel or 1) * dp if tensor_parallel is not None and data_parallel is not None else 1
    if per == "dp":
        return dp if data_parallel is not None else 1
    if per == "tp":
        return tensor_parallel if tensor_parallel is not None else 1
    if per == "dp_plus_tp":  # base + dp_rank + tp_rank (MoRIIOConnector's get_port_offset with tp_size 1)
        return (tensor_parallel or 1) + dp - 1 if tensor_parallel is not None and data_parallel is not None else 1
    return 1


def _truthy(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "1", "yes"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "0"):
        return False
    return None


def kv_events_port(invocation: Invocation, release: str | None) -> tuple[int, JsonConfig] | None:
    """The TCP port the KV-events publisher binds (data-parallel rank 0), with its config; None when it
    publishes nothing, connects instead of binding, or what it does is not known (a release not read)."""
    data = kv_transfer_data().get("kv_events") or {}
    config = json_config(invocation, data.get("option", "--kv-events-config"))
    if config is None or _truthy(config.value.get("enable_kv_cache_events")) is not True:
        return None
    publisher = config.value.get("publisher")
    if publisher is None:
        default = by_release(data.get("publisher_defaults"), release)
        if default is None:
            return None
        publisher = "zmq" if default in ("zmq", "zmq-when-enabled") else default
    if publisher != "zmq":
        return None
    endpoint = config.value.get("endpoint", data.get("endpoint_default"))
    if not isinstance(endpoint, str) or not endpoint.startswith("tcp://"):
        return None
    if "*" not in endpoint and "::" not in endpoint:
        return None  # vLLM connects to this endpoint: it binds nothing
    text = endpoint.rpartition(":")[2]
    if not text.isdigit() or not 0 < int(text) < 65536:
        return None
    return int(text), config


__all__ = ["JsonConfig", "json_config", "connector_names", "connector_nodes", "side_channel", "side_channels",
           "Wired", "KV_OPTION", "bind_address", "config_host", "binds_nothing", "key_port", "default_port",
           "listener_rows", "port_key_name", "advertised_extra",
           "port_span", "kv_events_port", "kv_transfer_data", "by_release", "in_releases", "value_option"]
