"""VL717: two containers of one pod listening on one port, and `VLLM_PORT` equal to the API port on the
releases where the engine takes that port before the API server binds it.

Containers of a pod share its network namespace ("Containers within a Pod share an IP address and port
space", https://kubernetes.io/docs/concepts/workloads/pods/#pod-networking): the second `bind()` of a port
fails with EADDRINUSE, unless both sockets set SO_REUSEPORT (vLLM's API socket does on 0.7.3 to 0.22.0,
and from 0.26.0 with several API servers: `api_reuse_port` in `data/networking.yaml`): then both bind and the
kernel splits incoming connections between the two servers. Regular init containers have exited before the app containers start; native sidecars
(an init container with `restartPolicy: Always`) run beside them
(https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/).

Only ports that are certain are compared: vLLM's API port (`--port`, default 8000; `--headless` and `--uds`
listen on no TCP port) and a `containerPort` another container declares (TCP). A non-vLLM container's own
flags are never read as its listening port (`--port` of a benchmark client is where it connects).
The `VLLM_PORT` release bounds come from `data/networking.yaml`; the Service-link value (`tcp://...`) is VL110's.
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.finding import Finding
from vllmlint.k8s.objects import Container
from vllmlint.k8s.pod import CONFIG_MAP, LITERAL
from vllmlint.k8s.quantity import digits_int
from vllmlint.vllm.images import image_builds
from vllmlint.vllm.invocation import DEMO_API_SERVER, Invocation
from vllmlint.vllm.ports import api_reuse_port, reuse_port_fact, vllm_port_collides, vllm_port_fact
from vllmlint.vllm.ports import runs_beside as _runs_beside
from vllmlint.checks import Context


def _listens(invocation: Invocation) -> bool:
    """Whether the invocation opens its API on a TCP port: not `--headless` (data-parallel workers), not `--uds`."""
    return not invocation.option("--headless") and not invocation.option("--uds")


def _port_token(invocation: Invocation):
    ports = invocation.option("--port")
    if ports and ports[-1].value_token is not None and ports[-1].value_token.source is not None:
        return ports[-1].value_token
    return None


def check(ctx: Context) -> Iterator[Finding | None]:
    for template, invocations in ctx.world.vllm_templates().items():
        if template.owner.kind == "ComposeService":
            continue  # each Compose service has its own network namespace
        yield from _shared_port(ctx, template, invocations)
    yield from _vllm_port(ctx)


def _shared_port(ctx: Context, template, invocations) -> Iterator[Finding | None]:
    # One API port per vLLM container (a shell may start vLLM in alternatives: `if ...; then vllm serve A;
    # else vllm serve B; fi`, so invocations of one container are never compared with each other).
    servers: dict[int, tuple[Invocation, int]] = {}
    for invocation in invocations:
        container = invocation.container
        if container is None or not _runs_beside(container) or id(container) in servers or not _listens(invocation):
            continue
        port = invocation.api_port
        if port is None:
            continue
        servers[id(container)] = (invocation, port)
    reported: set[tuple[int, int]] = set()
    containers = [c for c in template.containers if _runs_beside(c)]
    for invocation, port in servers.values():
        container = invocation.container
        assert container is not None
        said = "`--port " + str(port) + "`" if _port_token(invocation) else f"port {port} (the default)"
        for other in containers:
            if other is container:
                continue
            pair = (min(id(container), id(other)), max(id(container), id(other)))
            if pair in reported:
                continue
            other_server = servers.get(id(other))
            if other_server is not None:
                if other_server[1] != port:
                    continue
                reported.add(pair)
                if other_server[0].anchor.source is None:
                    continue
                where = _port_token(other_server[0]) or other_server[0].anchor
                yield ctx.finding(where, f"{_pair(container, other)} both run vLLM on port "
                                  f"{port} of one pod, and containers of a pod share its network: "
                                  + _two_servers_outcome(invocation, other_server[0])
                                  + " Give one of them another `--port`.",
                                  about=other, value=f"{_label(container)}/{_label(other)}:{port}")
                continue
            for declared in other.container_ports:
                if declared.number != port or declared.protocol != "TCP":
                    continue
                reported.add(pair)
                yield ctx.finding(declared.number_node or declared.node,
                                  f"{_one(other, True)} declares containerPort {port}, the port vLLM in "
                                  f"{_one(container)} listens on: move vLLM to another `--port` (and its probes "
                                  "and Service targetPort with it), or the sidecar to another port. vLLM listens on "
                                  f"{said}, and containers of a pod share its network: whichever starts "
                                  "second fails with \"address already in use\".",
                                  about=other, value=f"{_label(container)}/{_label(other)}:{port}")
                break


def _label(container: Container) -> str:
    return container.label


def _one(container: Container, first: bool = False) -> str:
    said = f"container `{_label(container)}`" if container.name else f"the unnamed container `{_label(container)}`"
    return said[0].upper() + said[1:] if first else said


def _pair(first: Container, second: Container) -> str:
    if first.name and second.name:
        return f"Containers `{first.name}` and `{second.name}`"
    if not first.name and not second.name:
        return f"The unnamed containers `{_label(first)}` and `{_label(second)}`"
    return f"{_one(first, True)} and {_one(second)}"


def _two_servers_outcome(first: Invocation, second: Invocation) -> str:
    """What two vLLM servers on one port of one pod do: the second bind fails, unless both API sockets set
    SO_REUSEPORT (`data/networking.yaml` `api_reuse_port`), when both bind and the kernel splits the
    connections between them."""
    reuse = [api_reuse_port(first), api_reuse_port(second)]
    fails = "the second server to start fails with \"address already in use\"."
    if reuse == [True, True]:
        releases = sorted({str(first.release), str(second.release)})
        users = {_uid(first), _uid(second)}
        said = f"vLLM {' and '.join(releases)} sets SO_REUSEPORT on its API socket"
        if None not in users and len(users) > 1:
            # socket(7): every later bind must come from the effective uid of the first one.
            return (f"{said}, but the containers run as different users, and SO_REUSEPORT shares a port only "
                    "within one user: " + fails)
        return (f"{said}, so both servers bind the port{'' if None not in users else ' (when both run as one user)'} "
                "and the kernel splits incoming connections between them: a request meant for one server's "
                "model can reach the other, and probes and /metrics see either one.")
    if False in reuse:
        return fails
    fact = reuse_port_fact()
    return (fails[:-1] + ", or, where both releases set SO_REUSEPORT on the API socket (vLLM "
            f"{fact.get('first_always')} to {fact.get('last_always')}; from {fact.get('first_multi_server_only')} "
            "with several API servers), both bind and the kernel splits incoming connections between the two "
            "servers, so requests can reach the wrong one.")


def _uid(invocation: Invocation) -> int | None:
    """The user the container runs as: `runAsUser`, else the image's USER (`data/image-entrypoints.yaml`)."""
    container = invocation.container
    if container is None:
        return None
    uid = container.security_context.run_as_user
    if uid is not None or invocation.image is None:
        return uid
    users = {b.user for b in image_builds(invocation.image, invocation.release)}
    return users.pop() if len(users) == 1 else None


def _vllm_port(ctx: Context) -> Iterator[Finding | None]:
    fact = vllm_port_fact()
    seen: set[int] = set()
    for invocation in ctx.world.invocations:
        container = invocation.container
        if container is None or id(invocation) in seen:
            continue
        seen.add(id(invocation))
        if invocation.kind == DEMO_API_SERVER or not _listens(invocation):
            continue
        if invocation.release is None or invocation.assumed:
            continue  # the release decides, and it is unknown
        try:
            fails = vllm_port_collides(invocation.release, invocation.kind)
        except ValueError:
            continue
        if not fails:
            continue
        port = invocation.api_port
        if port is None:
            continue
        for var in container.resolved_env(ctx.world):
            if var.name != "VLLM_PORT" or var.origin not in (LITERAL, CONFIG_MAP) or var.value is None:
                continue
            number = digits_int(var.value.strip())
            if number != port:
                continue  # another number, or `tcp://...` (VL110's case)
            where = var.source if var.origin == LITERAL and var.source is not None else var.node
            origin = f" (from ConfigMap {var.ref_name})" if var.origin == CONFIG_MAP else ""
            yield ctx.finding(where, f"VLLM_PORT={var.value.strip()}{origin} is also the API port: set VLLM_PORT to a "
                              f"port nothing else uses, or remove it. vLLM {invocation.release} takes VLLM_PORT for "
                              "its engine before the API server binds its port (fixed in "
                              f"{fact.get('first_fixed')}), so the server exits with \"address already in use\".",
                              about=container, value=f"VLLM_PORT={port}")
