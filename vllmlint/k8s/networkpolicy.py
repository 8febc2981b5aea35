"""NetworkPolicy (networking.k8s.io/v1), typed, and the union of the policies that select a pod.

What Kubernetes does, from https://kubernetes.io/docs/concepts/services-networking/network-policies/ and the
API reference https://kubernetes.io/docs/reference/kubernetes-api/policy-resources/network-policy-v1/:

- `spec.podSelector` selects pods in the policy's own namespace; an empty selector (`{}`, or no
  `matchLabels`/`matchExpressions` at all) selects every pod of that namespace.
- `spec.policyTypes` when absent is defaulted by the API server (pkg/apis/networking/v1/defaults.go,
  `SetDefaults_NetworkPolicy`): `Ingress` always, `Egress` when the policy has at least one egress rule.
  A pod is isolated for a direction when at least one policy of that type selects it.
- The traffic allowed to (from) an isolated pod is the union of the rules, of that direction, of every
  policy that selects it and has that type ("policies are additive": a default-deny policy plus a separate
  allow-dns policy is the normal pattern). A policy of the type with no rules of it allows nothing.
- A rule without `from`/`to` (or with an empty list) allows every peer; a rule without `ports` allows
  every port. A peer is `podSelector` alone (pods of the policy's namespace), `namespaceSelector` alone
  (every pod of the selected namespaces; `{}`: all namespaces), both (pods matching the podSelector in the
  selected namespaces) or `ipBlock` (a CIDR, with `except`).
- A port is a number or a named port (for ingress the name is looked up on the selected pod, for egress on
  the destination), `protocol` defaults to TCP, `endPort` makes a range from a numeric `port`.

Malformed parts are read conservatively: a rule or peer that cannot be read counts as allowing (it makes
no finding); a selector the API server would reject selects nothing.

Helper D owns `vllmlint/k8s/monitoring.py` (ServiceMonitor/PodMonitor); `scrape_targets` at the end of this
module resolves what VL805 needs the way VL301 does, and is meant to be deduplicated with it at merge.
"""
from __future__ import annotations

from vllmlint.records import dataclass, field
from typing import TYPE_CHECKING

from vllmlint.k8s.objects import K8sObject, PodTemplate, namespaces_compatible
from vllmlint.k8s.pod import port_number
from vllmlint.k8s.quantity import digits_int
from vllmlint.k8s.selectors import LabelSelector, label_selector
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, scalar_str

if TYPE_CHECKING:
    from vllmlint.k8s.objects import World

INGRESS, EGRESS = "Ingress", "Egress"


def _empty_selector(node: Node | None) -> bool:
    """`{}`, `matchLabels: {}`, null: the selector that selects everything (for NetworkPolicy fields)."""
    if node is None or isinstance(node, Scalar) and node.value is None:
        return True
    if not isinstance(node, Mapping):
        return False
    if not node.items:
        return True
    if set(node.keys()) <= {"matchLabels", "matchExpressions"}:
        return all(_null_or_empty(node.get(k)) for k in ("matchLabels", "matchExpressions"))
    return False


def _null_or_empty(node: Node | None) -> bool:
    if node is None:
        return True
    if isinstance(node, Scalar):
        return node.value is None
    if isinstance(node, (Mapping, Sequence)):
        return not node.items
    return False


@dataclass(frozen=True, eq=False)
class Selector:
    """A podSelector or namespaceSelector of a NetworkPolicy: `everything` when empty."""

    node: Node | None
    everything: bool
    parsed: LabelSelector

    def matches(self, labels: dict[str, str], implicit=None) -> bool:
        return self.everything or self.parsed.matches(labels, implicit)

    def selects(self, template: PodTemplate) -> bool:
        return self.everything or template.selected_by(self.parsed)


def selector(node: Node | None) -> Selector:
    return Selector(node, _empty_selector(node), label_selector(node))


@dataclass(eq=False)
class PolicyPort:
    protocol: str  # TCP (the default), UDP, SCTP
    port: int | str | None  # a number, a named port, or None (every port of the protocol)
    end_port: int | None
    node: Mapping

    def covers(self, number: int, protocol: str, names: dict[str, tuple[int, str]] | None = None) -> bool | None:
        """Whether this entry allows `number`/`protocol`. A named port is looked up in `names` (name ->
        (number, protocol)); None when it cannot be (a name not in `names`, `names` not given)."""
        if self.protocol != protocol:
            return False
        if self.port is None:
            return True
        if isinstance(self.port, int):
            if self.end_port is not None and self.end_port >= self.port:
                return self.port <= number <= self.end_port
            return self.port == number
        if names is None or self.port not in names:
            return None
        named, named_protocol = names[self.port]
        return named == number and named_protocol == protocol


@dataclass(eq=False)
class Peer:
    node: Mapping
    pod_selector: Selector | None  # None: the field is absent
    namespace_selector: Selector | None
    cidr: str | None = None  # ipBlock.cidr
    excepts: tuple[str, ...] = ()
    readable: bool = True  # False: not a peer this module can read (counts as allowing anything)

    @property
    def ip_block(self) -> bool:
        return self.cidr is not None

    @property
    def same_namespace_pods(self) -> bool:
        """`podSelector` alone: pods of the policy's own namespace."""
        return self.readable and self.pod_selector is not None and self.namespace_selector is None and not self.ip_block

    @property
    def every_namespace(self) -> bool:
        """Every pod of every namespace: `namespaceSelector: {}` with no (or an empty) podSelector."""
        return self.readable and self.namespace_selector is not None and self.namespace_selector.everything and \
            (self.pod_selector is None or self.pod_selector.everything)

    @property
    def every_address(self) -> bool:
        """An ipBlock of the whole IPv4 or IPv6 space (0.0.0.0/0, ::/0), exceptions or not."""
        if self.cidr is None:
            return False
        import ipaddress  # here, not at start-up (1.5 ms of a one-file run)

        try:
            return ipaddress.ip_network(self.cidr, strict=False).prefixlen == 0
        except ValueError:
            return False


@dataclass(eq=False)
class PolicyRule:
    policy: NetworkPolicy
    direction: str  # Ingress or Egress
    node: Node
    peers: list[Peer]  # [] : every peer (`from`/`to` absent or empty)
    ports: list[PolicyPort]  # [] : every port

    @property
    def any_peer(self) -> bool:
        return not self.peers

    @property
    def any_port(self) -> bool:
        return not self.ports

    def allows_port(self, number: int, protocol: str,
                    names: dict[str, tuple[int, str]] | None = None) -> bool | None:
        """True / False / None (a named port not resolvable)."""
        if not self.ports:
            return True
        answers = [p.covers(number, protocol, names) for p in self.ports]
        if any(a is True for a in answers):
            return True
        return None if any(a is None for a in answers) else False


@dataclass(eq=False)
class NetworkPolicy:
    obj: K8sObject
    pod_selector: Selector
    types: tuple[str, ...]  # after the API server's defaulting
    types_given: bool
    ingress: list[PolicyRule] = field(default_factory=list)
    egress: list[PolicyRule] = field(default_factory=list)

    @property
    def namespace(self) -> str:
        return self.obj.namespace

    @property
    def name(self) -> str:
        return self.obj.name

    def rules(self, direction: str) -> list[PolicyRule]:
        return self.ingress if direction == INGRESS else self.egress

    def selects(self, template: PodTemplate) -> bool:
        """Whether the policy applies to the pods of `template` (same namespace, podSelector matches)."""
        if template.owner.kind == "ComposeService" or not namespaces_compatible(template.namespace, self.namespace):
            return False
        return self.pod_selector.selects(template)

    def anchor(self, direction: str) -> Node:
        """Where to point at the policy's isolation of `direction`: its policyTypes entry, else its rules'
        key (defaulted types), else its podSelector, else the object."""
        spec = self.obj.spec
        if spec is not None:
            types = spec.get("policyTypes")
            if isinstance(types, Sequence):
                for item in types.items:
                    if scalar_str(item) == direction:
                        return item
            key = "ingress" if direction == INGRESS else "egress"
            if key in spec:
                return spec.key_node(key) or spec
            node = spec.get("podSelector")
            if node is not None:
                return spec.key_node("podSelector") or node
        return self.obj.node


def _port(node: Node) -> PolicyPort | None:
    if not isinstance(node, Mapping):
        return None
    protocol = (scalar_str(node.get("protocol")) or "TCP").upper()
    port_node = node.get("port")
    port: int | str | None = None
    if isinstance(port_node, Scalar) and port_node.value is not None:
        if isinstance(port_node.value, int) and not isinstance(port_node.value, bool):
            port = port_node.value
        else:
            text = scalar_str(port_node) or ""
            port = digits_int(text) if digits_int(text) is not None else text
    elif port_node is not None:
        return None
    end = node.get("endPort")
    end_port = end.value if isinstance(end, Scalar) and isinstance(end.value, int) and not isinstance(end.value, bool) \
        else None
    return PolicyPort(protocol, port, end_port, node)


def _peer(node: Mapping) -> Peer:
    pods = node.get("podSelector") if "podSelector" in node else None
    namespaces = node.get("namespaceSelector") if "namespaceSelector" in node else None
    block = node.get("ipBlock")
    cidr = None
    excepts: tuple[str, ...] = ()
    if isinstance(block, Mapping):
        cidr = scalar_str(block.get("cidr")) or ""
        listed = block.get("except")
        if isinstance(listed, Sequence):
            excepts = tuple(scalar_str(i) or "" for i in listed.items)
    readable = bool({"podSelector", "namespaceSelector", "ipBlock"} & set(node.keys()))
    return Peer(node, selector(pods) if "podSelector" in node else None,
                selector(namespaces) if "namespaceSelector" in node else None, cidr, excepts, readable)


def _rule(policy: NetworkPolicy, direction: str, node: Node) -> PolicyRule | None:
    if not isinstance(node, Mapping):
        return None
    peers_node = node.get("from" if direction == INGRESS else "to")
    peers = []
    if isinstance(peers_node, Sequence):
        for item in peers_node.items:
            if isinstance(item, Mapping):
                peers.append(_peer(item))
            else:
                return None  # malformed: not judged
    elif peers_node is not None and not _null_or_empty(peers_node):
        return None
    ports_node = node.get("ports")
    ports = []
    if isinstance(ports_node, Sequence):
        for item in ports_node.items:
            port = _port(item)
            if port is None:
                return None
            ports.append(port)
    elif ports_node is not None and not _null_or_empty(ports_node):
        return None
    return PolicyRule(policy, direction, node, peers, ports)


def network_policy(obj: K8sObject) -> NetworkPolicy | None:
    """The typed policy of a `networking.k8s.io` NetworkPolicy; None for another kind or API group (Cilium's
    and Calico's own kinds have other semantics), or a policy too malformed to judge."""
    if obj.kind != "NetworkPolicy" or not obj.api_version.startswith("networking.k8s.io/"):
        return None
    spec = obj.spec
    if spec is None:
        return None
    pod_node = spec.get("podSelector")
    if pod_node is not None and not isinstance(pod_node, Mapping) and not _null_or_empty(pod_node):
        return None
    rules: dict[str, list[Node]] = {}
    for direction, key in ((INGRESS, "ingress"), (EGRESS, "egress")):
        node = spec.get(key)
        if isinstance(node, Sequence):
            rules[direction] = list(node.items)
        elif node is None or _null_or_empty(node):
            rules[direction] = []
        else:
            return None
    types_node = spec.get("policyTypes")
    if isinstance(types_node, Sequence) and types_node.items:
        types = tuple(t for t in (scalar_str(i) for i in types_node.items) if t in (INGRESS, EGRESS))
        given = True
    elif types_node is None or _null_or_empty(types_node):
        types = (INGRESS, EGRESS) if rules[EGRESS] else (INGRESS,)
        given = False
    else:
        return None
    policy = NetworkPolicy(obj, selector(pod_node), types, given)
    for direction in (INGRESS, EGRESS):
        for item in rules[direction]:
            rule = _rule(policy, direction, item)
            if rule is None:
                return None  # a rule this module cannot read: the policy is not judged at all
            policy.rules(direction).append(rule)
    return policy


def network_policies(world: World) -> list[NetworkPolicy]:
    """Every NetworkPolicy of the run that can be judged."""
    result = []
    for obj in world.of_kind("NetworkPolicy"):
        policy = network_policy(obj)
        if policy is not None:
            result.append(policy)
    return result


def isolating(policies: list[NetworkPolicy], template: PodTemplate, direction: str) -> list[NetworkPolicy]:
    """The policies that select `template`'s pods and isolate them for `direction` (empty: not isolated)."""
    return [p for p in policies if direction in p.types and p.selects(template)]


def union_rules(policies: list[NetworkPolicy], direction: str) -> list[PolicyRule]:
    """The rules of `direction` of all `policies` (what Kubernetes allows is their union)."""
    return [rule for policy in policies for rule in policy.rules(direction)]


def named_ports(template: PodTemplate) -> dict[str, tuple[int, str]]:
    """Container port names of a pod -> (number, protocol): how an ingress rule's named port resolves."""
    names: dict[str, tuple[int, str]] = {}
    for container in template.containers:
        if container.init:
            continue
        for port in container.container_ports:
            if port.name and port.name not in names:
                names[port.name] = (port.number, port.protocol.upper())
    return names


# --- Prometheus scrape targets (see the module docstring: helper D's monitoring.py may replace this) ---------
@dataclass(frozen=True, eq=False)
class ScrapeTarget:
    """A scrape that Prometheus makes of a pod template: the pod port, and the object that asks for it."""

    template: PodTemplate
    port: int
    source: K8sObject | PodTemplate  # a ServiceMonitor, PodMonitor, Service (annotations) or the pod template
    node: Node  # the endpoint's port, or the annotation
    what: str  # "ServiceMonitor monitoring/x", "the prometheus.io/scrape annotation"


def _monitor_scope(monitor: K8sObject) -> tuple[bool, list[str]]:
    """(any namespace, names) of a monitor's namespaceSelector (VL301's `_monitor_namespaces`)."""
    scope = monitor.spec.get("namespaceSelector") if monitor.spec else None
    if isinstance(scope, Mapping):
        any_node = scope.get("any")
        if isinstance(any_node, Scalar) and any_node.value is True:
            return True, []
        names = scope.get("matchNames")
        if isinstance(names, Sequence):
            return False, [scalar_str(n) or "" for n in names.items]
    return False, [monitor.namespace]


def _in_scope(namespace: str, scope: tuple[bool, list[str]]) -> bool:
    return scope[0] or any(namespaces_compatible(namespace, n) for n in scope[1])


def _truthy(text: str | None) -> bool:
    return (text or "").strip().lower() == "true"


def scrape_targets(world: World, templates: list[PodTemplate]) -> list[ScrapeTarget]:
    """Scrapes of `templates` that the run asks Prometheus for, with a known pod port: ServiceMonitor
    endpoints (through the Services they select), PodMonitor endpoints, and `prometheus.io/scrape: "true"`
    with `prometheus.io/port` on a pod template or on a Service in front of it. A ServiceMonitor's scrape of a
    (workload, port) comes once, from the first ServiceMonitor that asks for it: N monitors, Services and
    workloads sharing labels are not N^3 targets."""
    from vllmlint.k8s.services import resolve_port, service_ports, service_selector

    wanted = {id(t) for t in templates}
    result: list[ScrapeTarget] = []
    services = world.of_kind("Service")
    seen: set[tuple[int, int]] = set()  # (template, port) a ServiceMonitor scrapes: once, the first that asks
    read: set[tuple] = set()  # (Service, endpoints' ports) already followed: another monitor adds nothing new
    for monitor in world.of_kind("ServiceMonitor"):
        spec = monitor.spec
        endpoints = spec.get("endpoints") if spec else None
        if spec is None or not isinstance(endpoints, Sequence):
            continue
        scope = _monitor_scope(monitor)
        selected = [s for s in world.selected_objects("Service", spec.get("selector")) if _in_scope(s.namespace, scope)]
        asked = tuple((scalar_str(e.get("port")), scalar_str(e.get("targetPort"))) if isinstance(e, Mapping) else None
                      for e in endpoints.items)
        for service in selected:
            if (id(service), asked) in read:
                continue
            read.add((id(service), asked))
            for template in world.selected_templates(service_selector(service), service.namespace):
                if id(template) not in wanted:
                    continue
                for endpoint in endpoints.items:
                    if not isinstance(endpoint, Mapping):
                        continue
                    name = scalar_str(endpoint.get("port"))
                    if name is not None:
                        match = [p for p in service_ports(service) if p.name == name]
                        number = resolve_port(template, match[0].target)[0] if match else None
                        where = endpoint.get("port")
                    else:
                        where = endpoint.get("targetPort")
                        number = resolve_port(template, where)[0] if isinstance(where, Scalar) else None
                    if number is not None and where is not None and (id(template), number) not in seen:
                        seen.add((id(template), number))
                        result.append(ScrapeTarget(template, number, monitor, where,
                                                   f"ServiceMonitor {monitor.name}"))
    for monitor in world.of_kind("PodMonitor"):
        spec = monitor.spec
        endpoints = spec.get("podMetricsEndpoints") if spec else None
        if spec is None or not isinstance(endpoints, Sequence):
            continue
        scope = _monitor_scope(monitor)
        for template in templates:
            if not _in_scope(template.namespace, scope) or not template.selected_by(spec.get("selector")):
                continue
            for endpoint in endpoints.items:
                if not isinstance(endpoint, Mapping):
                    continue
                where = endpoint.get("port") or endpoint.get("portNumber") or endpoint.get("targetPort")
                if not isinstance(where, Scalar):
                    continue
                number = resolve_port(template, where)[0]
                if number is not None:
                    result.append(ScrapeTarget(template, number, monitor, where, f"PodMonitor {monitor.name}"))
    for template in templates:
        annotations = template.metadata.get("annotations") if template.metadata else None
        if isinstance(annotations, Mapping) and _truthy(template.annotations.get("prometheus.io/scrape")):
            node = annotations.get("prometheus.io/port")
            number = digits_int(scalar_str(node) or "") if isinstance(node, Scalar) else None
            if node is not None and number is not None:
                result.append(ScrapeTarget(template, number, template, node,
                                           "the pod's prometheus.io/scrape annotation"))
    for service in services:
        meta = service.metadata
        annotations = meta.get("annotations") if meta else None
        if not isinstance(annotations, Mapping) or not _truthy(service.annotations.get("prometheus.io/scrape")):
            continue
        node = annotations.get("prometheus.io/port")
        number = digits_int(scalar_str(node) or "") if isinstance(node, Scalar) else None
        if node is None or number is None:
            continue
        for template in world.selected_templates(service_selector(service), service.namespace):
            if id(template) in wanted:
                # The kubernetes-service-endpoints job scrapes each endpoint (pod) on this port.
                result.append(ScrapeTarget(template, number, service, node,
                                           f"the prometheus.io/scrape annotation of Service {service.name}"))
    return result


def port_of(template: PodTemplate, node: Node | int | str | None) -> int | None:
    """A number or container port name resolved on a pod template."""
    for container in template.containers:
        number, _ = port_number(container.container_ports, node)
        if number is not None:
            return number
    return None


__all__ = ["INGRESS", "EGRESS", "NetworkPolicy", "PolicyRule", "PolicyPort", "Peer", "Selector", "selector",
           "network_policy", "network_policies", "isolating", "union_rules", "named_ports", "ScrapeTarget",
           "scrape_targets", "port_of"]
