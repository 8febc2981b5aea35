"""VL702: a probe that cannot pass against vLLM's server, or no readiness gate behind a Service.

What the server answers is data (`data/server-endpoints.yaml`, read through `vllmlint.vllm.endpoints`): the GET
paths of each release, and the prefixes `--api-key` protects. A probe is judged only when it targets the vLLM
container's own API port (containers share the pod's network: a probe on a sidecar's port is the sidecar's
business; a port that is not vLLM's is reported only when no other container runs in the pod, declared ports
or not) and only on evidence: an unknown release, a conditional route or an unresolvable port is silent. A Helm
values file is judged on the probes its chart renders (vllm.helm_pod); its missing readiness gate is not (the
chart writes its own Services).
"""
from __future__ import annotations

import posixpath

from vllmlint.finding import Severity
from vllmlint.k8s.operators import kserve_preset_command
from vllmlint.k8s.services import service_selector
from vllmlint.source.yamlmodel import Scalar, scalar_str
from vllmlint.vllm.endpoints import (always_served, api_key_set, api_ports, guarded, invocations_by_container, normalize,
                                     post_only, served, server_invocations)
from vllmlint.vllm.helm_pod import chart_default, chart_groups, chart_hint, pod_container, unknown
from vllmlint.vllm.invocation import VIA_COMMAND, VIA_IMAGE_ENTRYPOINT
from vllmlint.checks import Context
from vllmlint.lazyre import lazy_compile

# Commands that may precede `vllm serve` in a container's shell script and serve nothing: with any other
# command in the script something else may listen in the same container, so a port mismatch is not judged.
_ONE_SHOT = {"pip", "pip3", "uv", "huggingface-cli", "hf", "echo", "export", "cd", "mkdir", "ls", "cat", "set",
             "nvidia-smi", "printf", "true", "env", "ln", "cp", "rm", "chmod", "test", "[", "mv", "touch", "sleep"}
_SHELLS = {"sh", "bash", "dash", "ash", "zsh"}
_NUMBER = lazy_compile(r"^\d{1,5}$")


def _sole_server(ctx: Context, container, invocations) -> bool:
    """Whether vLLM is the only thing that can listen in this container (so any other port is closed)."""
    if container.pod.owner.kind.startswith("Ray"):
        return False  # `ray start` listens on its own ports in the same container
    if all(inv.via in (VIA_COMMAND, VIA_IMAGE_ENTRYPOINT) for inv in invocations):
        return True
    vllm_tokens = {(id(tok.source), tok.start) for inv in invocations for tok in inv.entry + inv.tokens
                   if tok.source is not None}
    for command in ctx.world.shell_commands:
        if command.container is not container or not command.tokens:
            continue
        if any((id(tok.source), tok.start) in vllm_tokens for tok in command.tokens if tok.source is not None):
            continue
        program = command.words[0].rsplit("/", 1)[-1]
        if program in _SHELLS:
            continue  # the `sh -c` itself: its script's commands are listed one by one
        if program not in _ONE_SHOT:
            return False
    return True


def _others_run(container) -> bool:
    """Whether another container runs beside this one: an app container, or a native sidecar (an init container
    with `restartPolicy: Always`, https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/).
    Containers of a pod share its network ("Containers within a Pod share an IP address and port space",
    https://kubernetes.io/docs/concepts/workloads/pods/#pod-networking), and `containerPort` is informational
    ("Not specifying a port here DOES NOT prevent that port from being exposed",
    https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#ports): such a container may
    listen on any port, declared or not."""
    for other in container.pod.containers:
        if other is container:
            continue
        if not other.init or scalar_str(other.node.get("restartPolicy")) == "Always":
            return True
    return False


def _numbers_in(container, invocations, world, skip: tuple[str, ...] = ()) -> set[int]:
    """Every number the container is given as an option value (but those of `skip`) or env value: vLLM's own
    other listeners (`--master-port`, `--data-parallel-rpc-port`, `VLLM_PORT`, ...) are among them."""
    found = set()
    for invocation in invocations:
        for option in invocation.options:
            if option.canonical in skip:
                continue
            if option.value and _NUMBER.match(option.value):
                found.add(int(option.value))
    for var in container.resolved_env(world):
        if var.value and _NUMBER.match(var.value.strip()):
            found.add(int(var.value.strip()))
    return found


def _release(invocations) -> str | None:
    releases = {inv.release for inv in invocations}
    return releases.pop() if len(releases) == 1 else None


def _services_by_template(ctx: Context) -> dict[int, tuple[list, ...]]:
    """Pod template id -> the Services of the run that select it (ClusterIP, NodePort, LoadBalancer; not
    ExternalName, not headless: those are peer discovery, not load-balanced traffic), as groups of Services that
    select the same pods: N Services sharing labels with N workloads make N groups of one list, not N x N
    entries. Once per run."""
    groups: dict[tuple[int, ...], tuple[list, list]] = {}  # ids of the templates selected -> (templates, Services)
    for position, service in enumerate(ctx.world.of_kind("Service")):
        spec = service.spec
        if spec is None or (scalar_str(spec.get("type")) or "") == "ExternalName":
            continue
        if (scalar_str(spec.get("clusterIP")) or "") == "None":
            continue
        selector = service_selector(service)
        if selector is None:
            continue
        selected = ctx.world.selected_templates(selector, service.namespace)
        group = groups.setdefault(tuple(map(id, selected)), (selected, []))
        group[1].append((position, service))
    result: dict[int, list] = {}
    for templates, services in groups.values():
        for template in templates:
            result.setdefault(id(template), []).append(services)
    return {key: tuple(lists) for key, lists in result.items()}


def _headless(invocations) -> list | None:
    """The container's invocations when every one is `vllm serve` (or the OpenAI server module) and one runs
    `--headless`: vLLM then starts engine cores only, no API server, on any port (0.10.1.1
    `vllm/entrypoints/cli/serve.py` lines 43-44 -> `run_headless`, lines 74-137; 0.29.0 same file lines
    66-73 set `api_server_count = 0`, lines 145-147 -> `run_headless`). None otherwise, or when another flag
    changes what listens (`--grpc`, `--uds`, the multi-port supervisor)."""
    from vllmlint.vllm.flags import OK
    from vllmlint.vllm.invocation import OPENAI_API_SERVER, SERVE

    if any(inv.kind not in (SERVE, OPENAI_API_SERVER) for inv in invocations):
        return None
    if any(inv.option("--grpc", "--uds", "--data-parallel-multi-port-external-lb") for inv in invocations):
        return None
    flags = [o for inv in invocations for o in inv.option("--headless")]
    if not flags or any(o.status is not None and o.status.kind != OK for o in flags):
        return None  # not headless, or a release whose parser does not take the flag (another rule's)
    if any(o.value is not None for o in flags):
        return None  # `--headless=...`: not the switch as written in vLLM's docs
    return list(invocations)


def _headless_probes(ctx, container, invocations, ports):
    """A probe on the API port of a `--headless` vLLM: nothing listens there, so it never passes."""
    if _others_run(container) or not _sole_server(ctx, container, invocations):
        return  # another container of the pod, or another program of this one, may listen there
    numbers = _numbers_in(container, invocations, ctx.world, skip=("--port",))
    api = " or ".join(str(p) for p in sorted(ports))
    for probe in container.probes:
        if probe.handler not in ("httpGet", "tcpSocket") or probe.handler_node is None or probe.port is None:
            continue
        if probe.handler_node.get("host") is not None or probe.port not in ports or probe.port in numbers:
            continue  # another host, another port, or a port another vLLM listener was given
        where = probe.port_node if probe.port_node is not None else probe.handler_node
        effect = {"readiness": "the pod never becomes Ready (no Service sends it traffic, a rollout never "
                               "completes)",
                  "liveness": "the kubelet restarts the container over and over",
                  "startup": "the kubelet restarts the container over and over"}.get(probe.kind, "it never passes")
        yield ctx.finding(where, f"The {probe.kind} probe checks port {probe.port}, but this vLLM runs with "
                          "`--headless`, which starts the engine only and no API server: nothing listens on "
                          f"{api} (`--port`, default 8000), the probe always fails and {effect}. Probe the API on "
                          "the head node's pod only; here use an exec probe (e.g. a process check) or none.",
                          about=container, value=f"{probe.kind}:headless:{probe.port}")


def check(ctx: Context):
    services: dict[int, tuple[list, ...]] | None = None
    summaries: dict = {}  # what `_no_readiness` says, by the Services' groups and the workload's file
    several_folders = False
    for invocations in invocations_by_container(ctx.world):
        container = invocations[0].container
        serves_api = yield from _container_probes(ctx, container, invocations)
        if serves_api and container.probe("readiness") is None and container.probe("startup") is None:
            if services is None:
                services = _services_by_template(ctx)
                # One count per run (it was computed per container: quadratic on large trees).
                several_folders = len({_folder(source) for source in ctx.world.sources}) > 1
            yield from _no_readiness(ctx, container, services.get(id(container.pod), ()), several_folders,
                                     summaries)
    # The pods Helm charts render from values files (vllm.helm_pod): their probes, on the chart's rendering. No
    # Service of the run selects them (the chart writes its own): the missing readiness gate is not judged.
    for invocations in chart_groups(ctx.world):
        container = pod_container(invocations[0])
        if unknown(container, "probes") or unknown(container, "ports") or unknown(container, "env"):
            continue
        yield from _container_probes(ctx, container, invocations)


def _container_probes(ctx: Context, container, invocations):
    """The findings on one vLLM container's probes (a headless server's, or the API server's); returns whether the
    container serves vLLM's API on a known port (the readiness gate is then judged too)."""
    headless = _headless(invocations)
    if headless is not None:
        ports = api_ports(headless)
        if ports is not None:
            yield from _headless_probes(ctx, container, headless, ports)
        return False
    servers = server_invocations(invocations)
    ports = api_ports(servers) if servers else None
    if servers is None or ports is None:
        return False
    yield from _probes(ctx, container, servers, ports)
    return True


def _probes(ctx, container, servers, ports):
    others = {p.number for c in container.pod.containers if c is not container for p in c.container_ports}
    release = _release(servers)
    api = " or ".join(str(p) for p in sorted(ports))
    for probe in container.probes:
        if probe.handler not in ("httpGet", "tcpSocket", "grpc") or probe.handler_node is None:
            continue
        if probe.handler_node.get("host") is not None or probe.port is None or probe.port in others:
            continue  # another host, an unresolvable port, or a sidecar's port (the pod shares one network)
        where = probe.port_node if probe.port_node is not None else probe.handler_node
        if probe.port not in ports:
            if _others_run(container) or not _sole_server(ctx, container, servers) or \
                    probe.port in _numbers_in(container, servers, ctx.world):
                continue  # another container of the pod, or another program of this one, may listen there
            named = f" (`{scalar_str(probe.port_node)}`)" if isinstance(probe.port_node, Scalar) and \
                not _NUMBER.match(scalar_str(probe.port_node) or "") else ""
            if chart_default(where, container):
                named += " (the chart's default)"
            hint = chart_hint(container, "probes")
            yield ctx.finding(where, f"The {probe.kind} probe checks port {probe.port}{named}, but nothing in this "
                              f"pod listens there: vLLM serves on {api} (`--port`, default 8000) and runs alone in "
                              f"the pod, so the probe always fails. Probe port {api}{': ' + hint if hint else ''}.",
                              about=container, value=f"{probe.kind}:{probe.port}")
            continue
        if probe.handler == "grpc":
            yield ctx.finding(where, f"The {probe.kind} probe speaks gRPC to port {probe.port}, but vLLM serves HTTP "
                              "there (no `--grpc`): the probe always fails. Use an httpGet probe on /health.",
                              about=container, value=f"{probe.kind}:grpc")
            continue
        if probe.handler != "httpGet":
            continue
        if kserve_preset_command(container) is not None:
            continue  # KServe's preset adds the TLS flags when its global config enables TLS: not in the run
        tls = any(inv.option("--ssl-certfile", "--ssl-keyfile") for inv in servers)
        scheme = (probe.scheme or "HTTP").upper()
        if scheme == "HTTPS" and not tls:
            node = probe.handler_node.get("scheme") or where
            yield ctx.finding(node, f"The {probe.kind} probe uses HTTPS, but vLLM serves plain HTTP on port "
                              f"{probe.port} (no `--ssl-certfile`): the TLS handshake fails and so does the probe. "
                              "Remove `scheme: HTTPS`.", about=container, value=f"{probe.kind}:HTTPS")
            continue
        if scheme == "HTTP" and tls:
            node = probe.handler_node.get("scheme") or where
            yield ctx.finding(node, f"The {probe.kind} probe uses plain HTTP, but vLLM serves TLS on port "
                              f"{probe.port} (`--ssl-certfile`/`--ssl-keyfile`): the server rejects the request and "
                              "the probe always fails. Set `scheme: HTTPS` (the kubelet does not verify the "
                              "certificate).", about=container, value=f"{probe.kind}:HTTP")
            continue
        if any(inv.option("--root-path") for inv in servers):
            continue  # the path behind a proxy prefix: not judged
        yield from _path(ctx, container, servers, probe, release)


def _path(ctx, container, servers, probe, release):
    raw = probe.path if probe.path is not None else "/"
    path = normalize(raw)
    node = probe.handler_node.get("path") or probe.handler_node
    answer = served(path, release)
    if answer is False:
        known = [p for p in always_served(release) if p in ("/health", "/ping", "/v1/models")]
        where = f"vLLM {release}" if release and served("/health", release) is True else "any vLLM release"
        method = post_only(path, release)
        if method is True:
            says = "serves only to POST: the kubelet's GET gets 405 Method Not Allowed"
        elif method is None:
            says = ("does not serve to a GET: the server answers 405 Method Not Allowed where a POST-only route "
                    "is registered there, else 404")
        else:
            says = "does not serve: the server answers 404"
        yield ctx.finding(node, f"The {probe.kind} probe asks for `{raw}`, which {where} {says} and the probe "
                          f"always fails. Probe `/health` (also served: "
                          f"{', '.join(p for p in known if p != '/health') or 'none'}).",
                          about=container, value=f"{probe.kind}:{path}")
        return
    if guarded(path, release) is not True:
        return
    if any(name.lower() == "authorization" for name, _, _ in probe.headers):
        return
    if api_key_set(container, servers, ctx.world) is not True:
        return
    yield ctx.finding(node, f"The {probe.kind} probe of `{raw}` always fails with 401: probe `/health`, which "
                      "`--api-key` does not protect. It sends no Authorization header, but vLLM runs with `--api-key` (or "
                      "VLLM_API_KEY), which answers 401 on every path under /v1 without "
                      "`Authorization: Bearer <key>`.", about=container, value=f"{probe.kind}:{path}:401")


def _folder(source) -> str | None:
    return posixpath.dirname(source.path.replace("\\", "/")) if source is not None else None


def _ordered_multi_node(ctx, owner) -> bool:
    """A StatefulSet whose pods form one multi-node vLLM server and that keeps `podManagementPolicy:
    OrderedReady` (the default)."""
    from vllmlint.source.yamlmodel import scalar_str
    from vllmlint.vllm.groups import group_of

    spec = owner.spec
    policy = scalar_str(spec.get("podManagementPolicy")) if spec is not None else None
    return (policy or "OrderedReady") == "OrderedReady" and group_of(ctx.world, owner) is not None


def _no_readiness(ctx, container, selecting: tuple[list, ...], several_folders: bool, summaries: dict):
    template = container.pod
    if any(c is not container and not c.init and (c.probe("readiness") or c.probe("startup"))
           for c in template.containers):
        return  # another container's probe may gate the pod on vLLM (a proxy checking it, ...)
    key = (tuple(map(id, selecting)), id(template.owner.source))
    if key not in summaries:  # workloads that the same Services select, in one file: the same summary
        summaries[key] = _summary(selecting, template.owner.source, several_folders)
    summary = summaries[key]
    if summary is None:
        return
    unique, first = summary
    names = ", ".join(unique[:3]) + (", ..." if len(unique) > 3 else "")
    word = "Service" if len(unique) == 1 else "Services"
    name = container.node.get("name") or container.node
    advice = "Add a readinessProbe on /health."
    owner = template.owner
    if owner is not None and owner.kind == "StatefulSet" and _ordered_multi_node(ctx, owner):
        # A probe on the API of a multi-node server under OrderedReady never passes: pod 0's API opens only once
        # pod 1 joins, and pod 1 is created only once pod 0 is Ready (multinode-network, VL713).
        advice = (f"Set `podManagementPolicy: Parallel` on StatefulSet {owner.name} first (this multi-node server "
                  "opens its API only once every pod has joined, and OrderedReady creates pod 1 only once pod 0 is "
                  "Ready), then add a readinessProbe on /health.")
    yield ctx.finding(name, "This vLLM container has no readiness probe (and no startup probe), yet "
                      f"{'a Service sends' if len(unique) == 1 else 'Services send'} it traffic. "
                      f"{word} {names} send{'s' if len(unique) == 1 else ''} traffic to it: the pod counts as ready "
                      "as soon as the "
                      "container starts, so requests reach it while the model is still loading and get connection "
                      f"errors. {advice}",
                      about=container, value=f"no-readiness:{first}",
                      severity=min(ctx.severity, Severity.INFO))


def _summary(selecting: tuple[list, ...], source, several_folders: bool) -> tuple[list[str], str] | None:
    """(the names of the Services, the first one's) that send a workload of `source` traffic, or None."""
    # Every Service that selects the pod: once the pod is ready (at once, with no probe) it is an endpoint of
    # each of them, whichever port they forward. A run over several folders may hold unrelated projects whose
    # Services happen to select the same labels (`app: vllm`): then only a Service of the workload's own folder
    # counts (the workload's file's folder; a Service elsewhere may never be applied with it).
    services = [service for _, service in sorted(pair for group in selecting for pair in group)]
    if several_folders:
        home = _folder(source)
        services = [s for s in services if _folder(s.source) == home]
    if not services:
        return None
    # The Service of the workload's own file first.
    services.sort(key=lambda s: s.source is not source)
    return list(dict.fromkeys(s.name for s in services)), services[0].name
