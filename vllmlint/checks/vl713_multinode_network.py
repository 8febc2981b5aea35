"""VL713: the network and start-up wiring of a vLLM server that spans several pods.

A group of pods forms one vLLM server when a LeaderWorkerSet has `size` >= 2, or a pod's vLLM needs more
ranks than its own GPUs (`--tensor-parallel-size` x `--pipeline-parallel-size` above its GPU request),
or says it is one node of several (`--nnodes` >= 2, `--data-parallel-size-local` below
`--data-parallel-size`, `--headless`). For such a group:

1. hostNetwork or a Multus secondary network (`k8s.v1.cni.cncf.io/networks`) gives the pod several
   interfaces; without NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME NCCL and Gloo may pick one the peers cannot
   reach (vLLM's troubleshooting guide, "Incorrect network setup"). Variables from `data/networking.yaml`.
2. A StatefulSet keeping `podManagementPolicy: OrderedReady` (the default) creates pod N+1 only once pod N
   is Running and Ready (https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/
   #orderedready-pod-management); vLLM on pod 0 opens its API only once every rank has joined, so a
   readiness or startup probe on that API never passes: pod 1 is never created. A LeaderWorkerSet with
   `startupPolicy: LeaderReady` creates its workers only once the leader is Ready: the same deadlock.
3. Peers that find the leader through a headless Service (its DNS name in `--master-addr`,
   `--data-parallel-address`, `ray start --address`) only resolve it once it is Ready, unless the Service
   sets `publishNotReadyAddresses: true` (https://kubernetes.io/docs/reference/kubernetes-api/
   service-resources/service-v1/#ServiceSpec); with a readiness probe on the API the leader is Ready only
   after the peers joined.
4. VLLM_HOST_IP is the address each vLLM process gives its peers (`get_ip()`): one literal address in a
   template that makes several pods is wrong on all but one; `HOST_IP` stopped standing in for it in 0.6.5
   (`data/networking.yaml`). `HOST_IP` is also the usual name of the node's IP for node agents
   (`fieldRef: status.hostIP`, `OTEL_EXPORTER_OTLP_ENDPOINT=http://$(HOST_IP):4317`): from a fieldRef, or
   used by another value, command or container of the pod, it is left alone; otherwise an info, which never
   advises the node's IP (the pod's own IP only equals it with hostNetwork).
"""
from __future__ import annotations

import re
from typing import Iterator

from vllmlint.capacity.workload import Workload, requested_accelerator
from vllmlint.capacity.workload import workloads as capacity_workloads
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.objects import Container, K8sObject, PodTemplate
from vllmlint.k8s.pod import CONFIG_MAP, FIELD, LITERAL, Probe
from vllmlint.k8s.quantity import int_value
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, scalar_str
from vllmlint.vllm.invocation import VIA_CONFIGMAP_SCRIPT, VIA_SHELL, Token
from vllmlint.vllm.groups import lws_size
from vllmlint.vllm.ports import host_ip_fact, legacy_host_ip_ignored, socket_ifname_variables
from vllmlint.checks import Context

_MULTUS = "k8s.v1.cni.cncf.io/networks"
_RAY_KINDS = ("RayCluster", "RayService", "RayJob", "RayClusterFleet")
# Flags whose value is the address peers connect to.
_ADDRESS_FLAGS = ("--master-addr", "--data-parallel-address", "--address")


# --- which pods form one server --------------------------------------------------------------------
def _lws_value(owner: K8sObject, key: str) -> Node | None:
    spec = owner.spec
    lwt = spec.get("leaderWorkerTemplate") if spec is not None else None
    return lwt.get(key) if isinstance(lwt, Mapping) else None


def _lws_size(owner: K8sObject) -> int:
    return lws_size(owner)  # the one reading of `size`, shared with VL807 and VL811 (vllm/groups.py)


def _says_multi_node(work: Workload) -> bool:
    """The invocation says it is one node of several: `--nnodes` >= 2, `--headless`, fewer local
    data-parallel ranks than the data-parallel size."""
    if work.nnodes is not None and work.nnodes > 1:
        return True
    if work.invocation.option("--headless"):
        return True
    return work.data_parallel_size_local is not None and work.data_parallel_size_local < work.data_parallel_size


def _spans_pods(work: Workload) -> bool:
    """The invocation is one node of a server over several pods: it says so, or it needs more ranks than its
    pod's GPUs (only asked where the workload makes several pods of one group: a StatefulSet, a Ray cluster)."""
    if _says_multi_node(work):
        return True
    if not work.known("--tensor-parallel-size", "--pipeline-parallel-size"):
        return False
    request = work.gpu_resource
    return request is not None and request[1] >= 1 and work.world_size > request[1]


def _groups(ctx: Context) -> list[tuple[K8sObject, list[PodTemplate], list[Workload]]]:
    """(owner, its pod templates, the vLLM workloads in them) for every server that spans pods."""
    by_owner: dict[int, tuple[K8sObject, list[Workload]]] = {}
    for work in capacity_workloads(ctx.world):
        container = work.container
        if container is None or container.is_compose:
            continue
        owner = container.pod.owner
        by_owner.setdefault(id(owner), (owner, []))[1].append(work)
    result = []
    for owner, works in by_owner.values():
        if owner.kind == "LeaderWorkerSet":
            spans = _lws_size(owner) >= 2
        elif owner.kind == "StatefulSet":
            replicas = owner.replicas
            spans = replicas is not None and replicas.value >= 2 and any(_spans_pods(w) for w in works)
        elif owner.kind in _RAY_KINDS:
            spans = any(_spans_pods(w) for w in works) and len(ctx.world.templates_of(owner)) >= 2
        else:
            spans = any(_says_multi_node(w) for w in works)  # more ranks than GPUs in one pod is VL606's
        if not spans:
            continue
        templates = [t for t in ctx.world.templates_of(owner) if t.role != "submitter"]
        result.append((owner, templates, works))
    return result


def check(ctx: Context) -> Iterator[Finding | None]:
    for owner, templates, works in _groups(ctx):
        for template in templates:
            yield from _interfaces(ctx, template)
        yield from _ordered_start(ctx, owner, templates, works)
        yield from _headless_dns(ctx, owner, templates, works)
        yield from _host_ip(ctx, owner, templates, works)


# --- 1. several interfaces without the interface variables -----------------------------------------
def _group_containers(ctx: Context, template: PodTemplate) -> list[Container]:
    """The containers that take part in the server: those running vLLM or requesting a GPU."""
    running = {id(i.container) for i in ctx.world.vllm_templates().get(template, [])}
    return [c for c in template.containers
            if not c.init and (id(c) in running or (requested_accelerator(c) or ("", 0))[1] >= 1)]


def _env_unknown(ctx: Context, container: Container) -> bool:
    """An `envFrom` source not in the run: its keys are unknown."""
    items = container.node.get("envFrom")
    for entry in getattr(items, "items", ()):
        if not isinstance(entry, Mapping):
            continue
        for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = entry.get(key)
            name = scalar_str(ref.get("name")) if isinstance(ref, Mapping) else None
            if isinstance(ref, Mapping) and (not name or ctx.world.find(kind, name, container.pod.namespace) is None):
                return True
    return False


def _script_mentions(ctx: Context, container: Container, name: str) -> bool:
    """A shell script the container runs names the variable (`export NAME=...`, `NAME=... vllm serve`)."""
    for command in ctx.world.shell_commands:
        if command.container is container and command.via in (VIA_SHELL, VIA_CONFIGMAP_SCRIPT):
            if command.script is None or name in command.script.text:
                return True
    return False


def _has_var(ctx: Context, container: Container, name: str) -> bool:
    return any(v.name == name for v in container.resolved_env(ctx.world)) or _script_mentions(ctx, container, name)


def _network_node(template: PodTemplate) -> tuple[Node, str] | None:
    host = template.spec.get("hostNetwork")
    if isinstance(host, Scalar) and host.value is True:
        return host, "`hostNetwork: true` gives the pod every interface of the node"
    annotations = template.metadata.get("annotations") if template.metadata is not None else None
    multus = annotations.get(_MULTUS) if isinstance(annotations, Mapping) else None
    if multus is not None and (scalar_str(multus) or "").strip():
        return multus, f"the Multus annotation `{_MULTUS}` adds network interfaces beside the pod's own"
    return None


def _interfaces(ctx: Context, template: PodTemplate) -> Iterator[Finding | None]:
    network = _network_node(template)
    variables = socket_ifname_variables()
    if network is None or not variables:
        return
    node, why = network
    for container in _group_containers(ctx, template):
        if _env_unknown(ctx, container):
            continue
        missing = [v for v in variables if not _has_var(ctx, container, v)]
        if not missing:
            continue
        names = " and ".join(missing)
        them = "them" if len(missing) > 1 else "it"
        yield ctx.finding(node, f"Container `{container.label}` of a multi-node vLLM server sets no {names}: set "
                          f"{them} to the interface the pods share (e.g. `eth0`, or the Multus interface). It is one "
                          f"pod of the server and {why}, so NCCL and Gloo may pick an interface the other pods "
                          "cannot reach, and then the group hangs at start-up.",
                          about=container, value=f"{container.label}:{','.join(missing)}",
                          # Info: which interface NCCL and Gloo pick depends on the node's interfaces and routes,
                          # which the manifests do not show; the default often works.
                          severity=min(ctx.severity, Severity.INFO))


# --- 2. an ordered start that waits for a probe only the whole group can pass ----------------------------
def _api_probe(work: Workload) -> Probe | None:
    """A readiness or startup probe on the vLLM API of the container (httpGet or tcpSocket on `--port`):
    the API opens only once every rank of the group has joined."""
    invocation = work.invocation
    container = invocation.container
    if container is None or invocation.option("--headless"):
        return None
    port = invocation.api_port
    if port is None:
        return None
    for probe in container.probes:
        if probe.kind in ("readiness", "startup") and probe.handler in ("httpGet", "tcpSocket") and probe.port == port:
            return probe
    return None


def _first_api_probe(works: list[Workload], role: str | None = None) -> tuple[Workload, Probe] | None:
    for work in works:
        container = work.container
        if container is None or role is not None and container.pod.role != role:
            continue
        probe = _api_probe(work)
        if probe is not None:
            return work, probe
    return None


def _probe_where(probe: Probe) -> Node:
    return probe.port_node or probe.handler_node or probe.node


def _ordered_start(ctx: Context, owner: K8sObject, templates, works) -> Iterator[Finding | None]:
    spec = owner.spec
    if spec is None:
        return
    if owner.kind == "StatefulSet":
        policy = scalar_str(spec.get("podManagementPolicy")) or "OrderedReady"
        if policy != "OrderedReady":
            return
        found = _first_api_probe(works)
        if found is None:
            return  # without such a probe the ordered start only staggers the pods: harmless
        work, probe = found
        yield ctx.finding(_probe_where(probe), f"StatefulSet {owner.name} never creates pod 1: set "
                          "`podManagementPolicy: Parallel`. It keeps podManagementPolicy OrderedReady (the "
                          f"default), which creates pod 1 only once pod 0 is Ready, but pod 0's {probe.kind} probe "
                          f"checks vLLM's API on port {probe.port}, which opens only once every pod of the "
                          "multi-node server has joined: pod 0 never gets Ready and pod 1 is never created.",
                          about=work.invocation,
                          value=f"{owner.name}:OrderedReady")
    elif owner.kind == "LeaderWorkerSet":
        if scalar_str(spec.get("startupPolicy")) != "LeaderReady":
            return
        found = _first_api_probe(works, "leader")
        if found is None:
            return
        work, probe = found
        yield ctx.finding(_probe_where(probe), f"LeaderWorkerSet {owner.name} has `startupPolicy: LeaderReady`, which "
                          f"creates the workers only once the leader is Ready, but the leader's {probe.kind} probe "
                          f"checks vLLM's API on port {probe.port}, which opens only once the workers have joined: "
                          "the group never starts. Use `startupPolicy: LeaderCreated` (the default).",
                          about=work.invocation, value=f"{owner.name}:LeaderReady")


# --- 3. peers resolving the leader through a headless Service that hides not-ready pods ---------------------
def _headless(service: K8sObject) -> bool:
    spec = service.spec
    return spec is not None and (scalar_str(spec.get("clusterIP")) or "") == "None"


def _publishes_not_ready(service: K8sObject) -> bool:
    spec = service.spec
    node = spec.get("publishNotReadyAddresses") if spec is not None else None
    return isinstance(node, Scalar) and node.value is True


def _host(text: str) -> str:
    """The host in an address value: `http://a.b:8000/x`, `a.b:6379`, `a.b`."""
    text = text.strip()
    if "://" in text:
        from urllib.parse import urlsplit  # here, not at start-up (2 ms of a one-file run)

        try:
            return urlsplit(text).hostname or ""
        except ValueError:
            return ""
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


def _names_service(host: str, service: K8sObject) -> bool:
    """`svc`, `pod.svc`, `svc.ns`, `pod.svc.ns.svc.cluster.local`: a DNS name under the Service."""
    labels = host.rstrip(".").split(".")
    name = service.name
    if not name or not labels:
        return False
    return labels[0] == name or len(labels) >= 2 and labels[1] == name


def _peer_addresses(ctx: Context, templates: list[PodTemplate]) -> list[tuple[str, Token]]:
    """(host, token) of every address value peers connect to, in the group's commands."""
    result: list[tuple[str, Token]] = []
    members = {id(t) for t in templates}
    for command in ctx.world.shell_commands:
        container = command.container
        if container is None or id(container.pod) not in members:
            continue
        tokens = command.tokens
        for i, token in enumerate(tokens):
            name, eq, value = token.text.partition("=")
            if name not in _ADDRESS_FLAGS:
                continue
            holder = token if eq else (tokens[i + 1] if i + 1 < len(tokens) else None)
            if holder is None or holder.dynamic:
                continue
            result.append((_host(value if eq else holder.text), holder))
    return result


def _headless_dns(ctx: Context, owner: K8sObject, templates, works) -> Iterator[Finding | None]:
    found = _first_api_probe(works)
    if found is None:
        return  # a pod without such a probe is Ready (and published) as soon as it runs
    _, probe = found
    addresses = _peer_addresses(ctx, templates)
    if not addresses:
        return
    container = found[0].container
    probed = container.pod if container is not None else None
    for service in ctx.world.of_kind("Service"):
        if not _headless(service) or _publishes_not_ready(service) or probed is None:
            continue
        selector = service.spec.get("selector") if service.spec is not None else None
        if selector is None or not probed.selected_by(selector):
            continue
        for host, token in addresses:
            if not _names_service(host, service):
                continue
            yield ctx.finding(token, f"`{host}` never resolves: set `publishNotReadyAddresses: true` on Service "
                              f"{service.name}. The peers of this multi-node vLLM server reach `{host}` through the "
                              f"headless Service {service.name}, which publishes a pod's DNS record only once the pod "
                              f"is Ready, and the pod's {probe.kind} probe checks vLLM's API (port {probe.port}), "
                              "which opens only once the peers have joined: the name never resolves and the group "
                              "never forms.",
                              about=service, value=f"{service.name}:{host}")
            return


# --- 4. VLLM_HOST_IP --------------------------------------------------------------------------------------
def _pods_of(owner: K8sObject, template: PodTemplate) -> int | None:
    """How many pods this template makes (None: not known)."""
    if owner.kind == "StatefulSet":
        replicas = owner.replicas
        return replicas.value if replicas is not None else None
    if owner.kind == "LeaderWorkerSet":
        size = _lws_size(owner)
        replicas_node = owner.spec.get("replicas") if owner.spec is not None else None
        count = 1 if replicas_node is None else int_value(replicas_node, minimum=0)
        if count is None or size < 1:
            return None
        return count if template.role == "leader" else count * (size - 1)
    if owner.kind in _RAY_KINDS and template.role not in ("head", "submitter"):
        return None  # worker groups scale between minReplicas and maxReplicas
    return None


def _ip(text: str) -> bool:
    import ipaddress  # here, not at start-up (1.5 ms of a one-file run)

    try:
        ipaddress.ip_address(text.strip())
    except ValueError:
        return False
    return True


def _host_ip(ctx: Context, owner: K8sObject, templates, works) -> Iterator[Finding | None]:
    fact = host_ip_fact()
    variable = str(fact.get("variable") or "VLLM_HOST_IP")
    legacy = str(fact.get("legacy_variable") or "HOST_IP")
    literals: dict[str, list[tuple[PodTemplate, Container, Node]]] = {}
    for template in templates:
        for container in _group_containers(ctx, template):
            for var in container.resolved_env(ctx.world):
                if var.name == variable and var.origin in (LITERAL, CONFIG_MAP) and var.value and _ip(var.value):
                    where = var.source if var.origin == LITERAL and var.source is not None else var.node
                    literals.setdefault(var.value.strip(), []).append((template, container, where))
    for address, uses in literals.items():
        pods = sum(_pods_of(owner, t) or 0 for t, _, _ in uses)
        if pods < 2 and len(uses) < 2:
            continue
        template, container, where = uses[-1] if len(uses) > 1 else uses[0]
        yield ctx.finding(where, f"{variable}={address} is one literal address for several pods of the multi-node "
                          f"vLLM server {owner.describe()}: vLLM gives it to its peers as this pod's address "
                          "(`get_ip()`), so every pod but one advertises an address that is not its own and the group "
                          f"cannot connect. Take it from the pod: `valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}`.",
                          about=container, value=f"{variable}={address}")
    for work in works:
        container = work.container
        release = work.invocation.release
        if container is None or release is None or work.invocation.assumed:
            continue
        try:
            ignored = legacy_host_ip_ignored(release)
        except ValueError:
            continue
        if not ignored:
            continue
        env = {v.name: v for v in container.resolved_env(ctx.world)}
        if legacy not in env or variable in env or _script_mentions(ctx, container, variable):
            continue
        var = env[legacy]
        if var.origin == FIELD or _used_elsewhere(ctx, container, legacy):
            continue  # `status.hostIP` for a node agent (OTLP, StatsD, ...) or another program's variable
        where = var.source if var.origin == LITERAL and var.source is not None else var.node
        yield ctx.finding(where, f"{legacy} is set for this multi-node vLLM server, but vLLM {release} does not read "
                          f"it (only {variable}, since {fact.get('legacy_ignored_from')}): if it was meant as vLLM's "
                          "own address, vLLM guesses that from the default route instead. To set it, use "
                          f"{variable} from the pod's IP (`valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}`); "
                          "the node's IP is the pod's only with hostNetwork.", about=container,
                          value=f"{legacy}:{release}", severity=min(ctx.severity, Severity.INFO))


def _references(text: str, name: str) -> bool:
    """`$(NAME)` (Kubernetes expansion), `$NAME` or `${NAME}` (a shell) in a value."""
    return re.search(r"\$\(" + name + r"\)|\$\{?" + name + r"(?![A-Za-z0-9_])", text) is not None


def _used_elsewhere(ctx: Context, container: Container, name: str) -> bool:
    """Whether the pod uses `name` for something else: another container sets it, or a value, a command or a
    script of the pod refers to it (`OTEL_EXPORTER_OTLP_ENDPOINT=http://$(HOST_IP):4317`)."""
    pod = container.pod
    for other in pod.containers:
        for var in other.resolved_env(ctx.world):
            if var.name == name and other is not container:
                return True
            if var.value is not None and _references(var.value, name):
                return True
        for key in ("command", "args"):
            items = other.node.get(key)
            for item in getattr(items, "items", ()):
                text = scalar_str(item)
                if text is not None and _references(text, name):
                    return True
    for command in ctx.world.shell_commands:
        if command.container is not None and command.container.pod is pod and command.script is not None \
                and _references(command.script.text, name):
            return True
    return False
