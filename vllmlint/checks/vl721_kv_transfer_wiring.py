"""VL721: disaggregated prefill/decode wiring: the KV connector's side channel advertised on an address the peer
pod cannot reach, and side-channel or KV-events ports that collide inside one pod's network.

The facts (which connectors open a side channel, the variables, default host and port and how many ports one
engine binds per release, the KV-events publisher's endpoint) are sourced data (`data/kv-transfer.yaml`, read
through `vllmlint.vllm.kv_transfer`). Compose services are left alone (their network is not a pod's).

- The host: the prefill side binds its handshake listener on `VLLM_NIXL_SIDE_CHANNEL_HOST` and sends that same
  host to the decode side, which dials it. In a deployment of several pods (a workload with more than one
  replica, or separate workloads running the connector in one namespace: llm-d's prefill and decode), the
  default `localhost` and `0.0.0.0` are unreachable from the peer; `status.podIP` through `fieldRef` is the
  address. Silent when the variable may come from elsewhere (an `envFrom` object not in the run, a script),
  and when the release is known not to read the variable.
- The ports: containers of a pod share its network namespace, and one container shares its own: two listeners
  on one port and address (or one on a wildcard address) collide, the second failing with "Address already in
  use". Only ports that are certain are compared: a literal or ConfigMap port, or the release's default when
  the release is known; the API port is port-collision's (VL717).
- The other listeners (data rows): MooncakeConnector's side channel or bootstrap server and P2pNcclConnector's
  `kv_port` (bound on the pod's address or every address, per release; a decode-only Mooncake binds nothing),
  MoRIIOConnector's handshake and notify listeners (every address, extra-config `handshake_port` 6301 and
  `notify_port` 61005 plus data-parallel rank + TP rank; it advertises the pod's address unless its extra
  config's `host_ip` says otherwise, reported when that is a loopback or wildcard address),
  the encoder-cache connectors of `--ec-transfer-config` (ECCPUConnector's NIXL side channel, judged like
  NixlConnector's; ECMooncakeConnector's consumer, which binds and advertises its config's `ec_ip`).
"""
from __future__ import annotations

from typing import Any, Iterator

from vllmlint.records import dataclass

from vllmlint.checks import Context
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.pod import CONFIG_MAP, FIELD, LITERAL, env_from_refs
from vllmlint.k8s.quantity import digits_int
from vllmlint.source.yamlmodel import Mapping, scalar_str
from vllmlint.vllm import kv_transfer as kvt
from vllmlint.vllm.ports import runs_beside

_WILDCARD = "*"
_HOST = "podIP"  # vLLM's get_ip(): the pod's address, one for all containers of a pod
_LOOPBACK = ("localhost", "127.0.0.1", "::1")
_ANY = ("0.0.0.0", "::", "*")


@dataclass(frozen=True)
class _Bound:
    """Ports [low, high] one container binds, on which address (`*` for every address), what binds them and where
    the manifest says so."""

    container: Any
    low: int
    high: int
    address: str
    what: str
    where: Any
    short: str = ""


def check(ctx: Context) -> Iterator[Finding | None]:
    wired: dict[int, tuple[Any, list]] = {}  # id(template) -> (template, [(invocation, [Wired])])
    bound: dict[int, tuple[Any, list[_Bound], set[int]]] = {}  # id(template) -> (template, ports, vLLM containers)
    for template, invocations in ctx.world.vllm_templates().items():
        if template.owner.kind == "ComposeService":
            continue
        seen: set[int] = set()
        for invocation in invocations:
            container = invocation.container
            if container is None or id(container) in seen or not runs_beside(container):
                continue
            seen.add(id(container))
            found = kvt.side_channels(invocation)
            for item in found:
                yield _api_port(ctx, invocation, item)
            if any(_advertises(item.row) for item in found):
                wired.setdefault(id(template), (template, []))[1].append((invocation, found))
            entry = bound.setdefault(id(template), (template, [], set()))
            entry[1].extend(_bound_ports(ctx, invocation, found))
            entry[2].add(id(container))
    yield from _hosts(ctx, wired)
    for template, ports, vllm_containers in bound.values():
        if ports:
            yield from _collisions(ctx, template, ports, vllm_containers)


# --- the side channel's host ----------------------------------------------------------------------------------
def _replicas(owner) -> int | None:
    """Pods the workload runs: `spec.replicas` (times a LeaderWorkerSet's group size); None when not known."""
    setting = owner.replicas
    if setting is not None:
        return setting.value
    if owner.kind == "LeaderWorkerSet" and owner.spec is not None:
        count = digits_int(scalar_str(owner.spec.get("replicas")) or "1")
        template = owner.spec.get("leaderWorkerTemplate")
        size = digits_int(scalar_str(template.get("size")) or "1") if isinstance(template, Mapping) else 1
        return count * size if count is not None and size is not None else None
    return None


def _hosts(ctx: Context, wired: dict[int, tuple[Any, list]]) -> Iterator[Finding | None]:
    # (namespace, KV or encoder cache) -> the workloads running such a connector: two of one kind are peers
    by_namespace: dict[tuple[str, bool], set[int]] = {}
    for key, (template, items) in wired.items():
        for _, found in items:
            for item in found:
                by_namespace.setdefault((template.namespace, _is_kv(item.row)), set()).add(key)
    for template, items in wired.values():
        replicas = _replicas(template.owner)
        for invocation, found in items:
            for item in found:
                if not _advertises(item.row):
                    continue
                kv = _is_kv(item.row)
                separate = len(by_namespace[(template.namespace, kv)]) > 1
                if not separate and (replicas is None or replicas < 2):
                    continue  # one pod (or a count not known): the peer may be a container of the same pod
                why = (f"{template.owner.kind} {template.owner.name} runs {replicas} pods" if replicas and replicas > 1
                       else "Prefill and decode run in separate pods" if kv
                       else "The encoder and the servers using its cache run in separate pods")
                yield _host(ctx, invocation, item, why)


def _api_port(ctx: Context, invocation, item: kvt.Wired) -> Finding | None:
    """P2pNcclConnector's `http_port`, which it registers with the proxy as this server's address: not vLLM's
    `--port`, the proxy sends the requests where no server (or another one) listens."""
    spec = item.row.get("api_port_key")
    extra = item.node.get(item.row.get("extra_key", "kv_connector_extra_config"))
    if not spec or not isinstance(extra, dict) or any(not extra.get(key) for key in spec["with"]):
        return None
    release = None if invocation.assumed else invocation.release
    if release is not None and not kvt.in_releases(item.row.get("releases"), release):
        return None
    text = str(extra.get(spec["key"], "")).strip()
    port = invocation.api_port
    if not text.isdigit() or port is None or int(text) == port:
        return None
    option = kvt.value_option(item.config)
    key = spec["key"]
    return ctx.finding(option.value_token or option.token, f"Set `{key}` to {port}, this server's --port, not "
                       f"{text}: {item.row['name']} registers <its address>:{key} with the proxy "
                       f"({', '.join(spec['with'])}), which sends the requests there, where this server does not "
                       "listen.", about=invocation.container, value=f"{key}={text}",
                       severity=min(ctx.severity, Severity.WARNING))


def _advertises(row: dict) -> bool:
    """Whether the connector tells its peer an address it chose (a host variable or a config field)."""
    return "host_env" in row or "host_key" in row or "advertise_extra_key" in row


def _reads(invocation, name: str) -> bool:
    """Whether the release may read the variable: the assumed release's catalog for an unknown release (every
    release with the connector has it: data/kv-transfer.yaml), the release's own otherwise."""
    catalog = getattr(invocation, "catalog", None)
    return catalog is None or name in catalog.env


def _is_kv(row: dict) -> bool:
    return row.get("option", kvt.KV_OPTION) == kvt.KV_OPTION


def _host(ctx: Context, invocation, item: kvt.Wired, why: str) -> Finding | None:
    container = invocation.container
    row = item.row
    release = None if invocation.assumed else invocation.release
    if release is not None and not kvt.in_releases(row.get("releases"), release):
        return None  # a release without the connector
    if kvt.binds_nothing(row, item.node, release) is not False:
        return None  # this side does not listen (or may not)
    option = kvt.value_option(item.config)
    target = option.value_token or option.token
    connector = row["name"]
    cache = "KV cache" if _is_kv(row) else "encoder cache"
    severity = min(ctx.severity, Severity.WARNING)
    if "advertise_extra_key" in row:
        advertised = kvt.advertised_extra(row, item.node, release)
        if advertised is None or "$" in advertised[1]:
            return None  # unset (or a release that does not read it): vLLM advertises get_ip(), the pod's address
        key, said = advertised[0], advertised[1].strip()
        value = said.strip("[]").lower()
        if value not in _ANY and value not in _LOOPBACK:
            return None
        extra = row.get("extra_key", "kv_connector_extra_config")
        return ctx.finding(target, f"Remove `{key}` from {extra} or set it to the pod's IP, not {said}: without it "
                           f"vLLM advertises the pod's address; {connector} tells the peer to dial {said}, the peer's own "
                           f"{'loopback' if value in _LOOPBACK else 'host'}. {why}, so the handshake never reaches "
                           f"this pod and the {cache} is not transferred.", about=container, value=f"{key}={said}",
                           severity=severity)
    if "host_key" in row:
        key = row["host_key"]
        host, written = kvt.config_host(row, item.node)
        if host is None or "$" in host:
            return None
        value = host.strip().strip("[]").lower()
        said = host.strip()
        advice = f"Set `{key}` in {option.name} to the pod's IP (an address the peer can reach)"
        if not written:
            if value not in _LOOPBACK:
                return None
            return ctx.finding(target, f"{advice} for {connector}: unset, it binds and advertises `{said}` (vLLM's "
                               f"default). {why}, so the peer dials its own loopback and the {cache} is not "
                               "transferred.", about=container, value=f"{key}=<unset>", severity=severity)
        if value in _ANY or value in _LOOPBACK:
            what = "every address, which it also advertises" if value in _ANY else "the loopback address"
            return ctx.finding(target, f"{advice}, not {said}: the {connector} listener binds {what}. {why}, so the "
                               f"peer dials its own host and the {cache} is not transferred.", about=container,
                               value=f"{key}={said}", severity=severity)
        return None
    name = row["host_env"]
    if not _reads(invocation, name):
        return None  # a release without the variable
    var = next((v for v in container.resolved_env(ctx.world) if v.name == name), None)
    advice = f"Set {name} to the pod's IP (`valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}`)"
    if var is None:
        if _env_may_set(ctx, container, name):
            return None
        return ctx.finding(target, f"{advice} for {connector}: unset, the side channel binds "
                           f"`{row['host_default']}` (vLLM's default) and tells the peer to dial it. {why}, so the "
                           f"peer's handshake never reaches this pod and the {cache} is not transferred.",
                           about=container, value=f"{name}=<unset>", severity=severity)
    if var.origin == FIELD or var.origin not in (LITERAL, CONFIG_MAP) or var.value is None:
        return None
    value = var.value.strip().strip("[]").lower()
    where = var.source if var.source is not None else var.node
    said = var.value.strip()
    if value in _ANY:
        return ctx.finding(where, f"{advice}, not {said}: the side channel binds every address but tells the peer "
                           f"to dial {said}, the peer's own host. {why}, so the peer reaches its own listener (an "
                           f"engine-ID mismatch) and the {cache} is not transferred.", about=container,
                           value=f"{name}={said}", severity=severity)
    if value in _LOOPBACK:
        return ctx.finding(where, f"{advice}, not the loopback address {said}: the side channel listens only inside "
                           f"this pod and tells the peer to dial its own loopback. {why}, so the handshake fails and "
                           f"the {cache} is not transferred.", about=container, value=f"{name}={said}",
                           severity=severity)
    return None


def _env_may_set(ctx: Context, container, name: str) -> bool:
    """Whether the variable may be set where the run cannot see: an `envFrom` object not in the run, or a shell
    script of the container that assigns it."""
    namespace = container.pod.namespace
    for ref in env_from_refs(container.node):
        if ref.name is None or ctx.world.find(ref.kind, ref.name, namespace) is None:
            return True
    return (id(container), name) in ctx.world.fact(_script_set)


def _script_set(world) -> set[tuple[int, str]]:
    """(id of the container, variable) of every side-channel variable a container's shell script assigns: read
    once per run (a scan of every script per container would be quadratic)."""
    from vllmlint.vllm.invocation import script_assignments

    names = {row[key] for row in kvt.kv_transfer_data().get("connectors", []) for key in ("host_env", "port_env")
             if key in row}
    return {(id(a.container), a.name) for a in script_assignments(world, tuple(sorted(names)))
            if a.container is not None and a.name in names}


# --- ports -----------------------------------------------------------------------------------------------------
def _size(invocation, *names: str) -> int | None:
    """An integer option's value (the last given), 1 when absent, None when not known here."""
    options = invocation.option(*names)
    if not options:
        return 1
    last = options[-1]
    return digits_int(last.value.strip()) if last.value_known and last.value else None


def _address(ctx: Context, container, name: str, default: str) -> str | None:
    """Which address a listener binds, as a key two listeners compare: `*` for every address, `podIP`, a
    literal; None when not known."""
    var = next((v for v in container.resolved_env(ctx.world) if v.name == name), None)
    if var is None:
        return None if _env_may_set(ctx, container, name) else _normal(default)
    if var.origin == FIELD:
        return "podIP" if var.ref_key == "status.podIP" else None
    if var.origin in (LITERAL, CONFIG_MAP) and var.value:
        return _normal(var.value)
    return None


def _normal(text: str) -> str:
    value = text.strip().strip("[]").lower()
    if value in _ANY:
        return _WILDCARD
    return "127.0.0.1" if value == "localhost" else value


# Options that give the engines of a container data-parallel ranks other than 0 to n-1 (multi-node or external
# load-balanced data parallelism): their ports are offset by ranks not known here.
_RANKED = ("--data-parallel-rank", "--data-parallel-start-rank", "--data-parallel-address", "--headless",
           "--data-parallel-hybrid-lb", "--data-parallel-external-lb")


def _listener(ctx: Context, invocation, config: kvt.JsonConfig, row: dict, node: dict, release: str | None
              ) -> tuple[int | None, str, Any, str] | None:
    """(base port, address key, where the manifest says so, what it says) of one connector's listener; None when
    it binds nothing or what it binds is not known here."""
    container = invocation.container
    if "host_env" in row:
        address = _address(ctx, container, row["host_env"], row["host_default"])
    else:
        where_to = kvt.bind_address(row, release)
        if where_to == "key":
            host = kvt.config_host(row, node)[0]
            address = _normal(host) if host is not None and "$" not in host else None
        else:
            address = None if where_to is None else _WILDCARD if where_to == "any" else _HOST
    if address is None or kvt.binds_nothing(row, node, release) is not False:
        return None
    option = kvt.value_option(config)
    at_option = option.value_token or option.token
    keyed = kvt.key_port(row, node, release)
    if keyed is not None:
        port, written = keyed
        if port is None or release is None and not written:
            return None
        key = kvt.port_key_name(row)
        said = f"{key} {port}" if written else f"{key} not set: vLLM {release}'s default {port}"
        return port, address, at_option, said
    name = row["port_env"]
    var = next((v for v in container.resolved_env(ctx.world) if v.name == name), None)
    if var is not None:
        if var.origin not in (LITERAL, CONFIG_MAP) or var.value is None:
            return None
        where = var.source if var.source is not None else var.node
        return digits_int(var.value.strip()), address, where, f"{name}={var.value.strip()}"
    if _env_may_set(ctx, container, name) or release is None:
        return None
    port = kvt.default_port(row, release)
    return port, address, at_option, f"{name} not set: vLLM {release}'s default {port}"


def _bound_ports(ctx: Context, invocation, found) -> Iterator[_Bound]:
    container = invocation.container
    release = None if invocation.assumed else invocation.release
    if invocation.option(*_RANKED):
        return  # the ports are offset by data-parallel ranks not known here
    dp = _size(invocation, "--data-parallel-size-local") if invocation.option("--data-parallel-size-local") \
        else _size(invocation, "--data-parallel-size")
    if found:
        tp = _size(invocation, "--tensor-parallel-size")
        for config, row, node in ((item.config, item.row, item.node) for item in found):
            bound = _listener(ctx, invocation, config, row, node, release)
            if bound is None:
                continue
            port, address, where, said = bound
            if port is None or not 0 < port < 65536:
                continue
            span = kvt.port_span(row, release, tp, dp)
            what = f"the {row['name']} {kvt.by_release(row.get('binds'), release, 'what') or 'side channel'}"
            yield _Bound(container, port, port + span - 1, address, f"{what} ({said})", where, what)
    events = kvt.kv_events_port(invocation, release)
    if events is not None:
        port, config = events
        option = kvt.value_option(config)
        span = dp or 1
        yield _Bound(container, port, port + span - 1, _WILDCARD, "the KV-events publisher (--kv-events-config "
                     f"endpoint on port {port})", option.value_token or option.token, "the KV-events publisher")


def _overlap(a: _Bound, b: _Bound) -> int | None:
    if a.address != b.address and _WILDCARD not in (a.address, b.address):
        return None  # two addresses: both bind
    low = max(a.low, b.low)
    return low if low <= min(a.high, b.high) else None


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _span(bound: _Bound) -> str:
    return f"port {bound.low}" if bound.low == bound.high else f"ports {bound.low}-{bound.high}"


def _collisions(ctx: Context, template, ports: list[_Bound], vllm_containers: set[int]) -> Iterator[Finding | None]:
    for i, second in enumerate(ports):
        clash = next(((first, port) for first in ports[:i] if (port := _overlap(first, second)) is not None), None)
        if clash is None:
            continue
        first, port = clash
        same = first.container is second.container
        if same:
            head = (f"Give {second.short} and {first.short} of container `{second.container.label}` separate ports: "
                    f"both bind port {port}.")
        elif second.short == first.short:  # one listener in two containers: named once (a short first line)
            head = (f"Give {second.short}s of containers `{second.container.label}` and `{first.container.label}` "
                    f"separate ports: both bind port {port} in one pod.")
        else:
            head = (f"Give {second.short} of container `{second.container.label}` and {first.short} of container "
                    f"`{first.container.label}` separate ports: both bind port {port} in one pod.")
        yield ctx.finding(second.where, f"{head} {_upper(second.what)} takes {_span(second)} and {first.what} takes "
                          f"{_span(first)}{'' if same else ', and containers of a pod share its network'}: the "
                          "second to start fails with \"Address already in use\" and its vLLM exits.",
                          about=second.container, value=(f"{second.container.label}:{port}" if same else
                                                         f"{first.container.label}/{second.container.label}:{port}"))
    for other in template.containers:
        if id(other) in vllm_containers or not runs_beside(other):
            continue
        for declared in other.container_ports:
            if declared.protocol != "TCP":
                continue
            hit = next((b for b in ports if b.low <= declared.number <= b.high), None)
            if hit is None:
                continue
            yield ctx.finding(declared.number_node or declared.node, f"Move container `{other.label}` or "
                              f"{hit.short} of container `{hit.container.label}` to another port: both use "
                              f"{declared.number}. {_upper(hit.what)} binds {_span(hit)}, and containers of a "
                              "pod share its network: whichever starts second fails with \"Address already in "
                              "use\".", about=other,
                              value=f"{hit.container.label}/{other.label}:{declared.number}")
