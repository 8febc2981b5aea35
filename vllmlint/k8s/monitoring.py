"""Scrape configuration objects, typed: what a monitor selects (Services or Pods), in which namespaces, and
the endpoints it scrapes.

Kinds read (each with the field that lists its endpoints):

- Prometheus Operator (`monitoring.coreos.com/v1`) `ServiceMonitor` (`endpoints`) and `PodMonitor`
  (`podMetricsEndpoints`): `spec.selector` selects Services (Pods) by label, `spec.namespaceSelector`
  (`any`, `matchNames`) says where; "If `matchNames` is empty and `any` is false, it means that the objects
  are selected from the current namespace" (pkg/apis/monitoring/v1/types.go, `NamespaceSelector`). A
  ServiceMonitor endpoint's `port` is the *name* of a Service port (`.spec.ports[].name`), `targetPort` the
  name or number of a container port behind the Service; a PodMonitor endpoint's `port` is a container
  port name, `portNumber` its number, `targetPort` (deprecated) either (servicemonitor_types.go,
  podmonitor_types.go, types.go `Endpoint`, prometheus-operator 6adcebc5, v0.93.0+).
- VictoriaMetrics operator (`operator.victoriametrics.com/v1beta1`) `VMServiceScrape` (`endpoints`) and
  `VMPodScrape` (`podMetricsEndpoints`): the same shape (its CRDs are converted from the Prometheus
  Operator's), `namespaceSelector` with `any` / `matchNames`.
- Google Cloud Managed Service for Prometheus (`monitoring.googleapis.com/v1`) `PodMonitoring`: selects Pods
  of its own namespace only (it has no namespace selector); `ClusterPodMonitoring` selects Pods of every
  namespace. Their endpoints' `port` is a container port name or a number.

Nothing here decides whether a monitor is right; `vllmlint.checks` do (VL301 the port, VL806 the selection).
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from vllmlint.k8s.objects import namespaces_compatible
from vllmlint.k8s.selectors import IN, LabelSelector
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, scalar_str

if TYPE_CHECKING:
    from vllmlint.k8s.objects import K8sObject, World

SERVICE, POD = "Service", "Pod"


@dataclass(frozen=True)
class MonitorKind:
    kind: str
    group: str  # the API group; "" when any apiVersion is read as this kind
    targets: str  # SERVICE or POD
    endpoints_field: str
    namespace_selector: bool  # reads `spec.namespaceSelector`
    cluster_wide: bool = False  # selects in every namespace (ClusterPodMonitoring)


KINDS: dict[str, MonitorKind] = {k.kind: k for k in (
    # The Prometheus Operator's kinds are read whatever their apiVersion says, as VL301 always did.
    MonitorKind("ServiceMonitor", "", SERVICE, "endpoints", True),
    MonitorKind("PodMonitor", "", POD, "podMetricsEndpoints", True),
    MonitorKind("VMServiceScrape", "operator.victoriametrics.com", SERVICE, "endpoints", True),
    MonitorKind("VMPodScrape", "operator.victoriametrics.com", POD, "podMetricsEndpoints", True),
    MonitorKind("PodMonitoring", "monitoring.googleapis.com", POD, "endpoints", False),
    MonitorKind("ClusterPodMonitoring", "monitoring.googleapis.com", POD, "endpoints", False, cluster_wide=True),
)}


@dataclass(frozen=True)
class NamespaceScope:
    """Where a monitor looks: every namespace, or a list of names (the monitor's own namespace by default;
    "" when neither says one, which matches any namespace)."""

    any: bool
    names: tuple[str, ...]
    explicit: bool  # a namespaceSelector says it (False: the monitor's own namespace)

    def includes(self, namespace: str) -> bool:
        """Whether an object of `namespace` may be selected ("" on either side: it may)."""
        return self.any or any(namespaces_compatible(namespace, n) for n in self.names)

    def excludes(self, namespace: str) -> bool:
        """Whether an object of `namespace` certainly is not selected: both namespaces are written down."""
        return not self.any and bool(namespace) and all(n and n != namespace for n in self.names)


def _int_or_string(node: Node | None) -> int | str | None:
    if not isinstance(node, Scalar) or node.value is None or isinstance(node.value, bool):
        return None
    if isinstance(node.value, int):
        return node.value
    return scalar_str(node)


@dataclass(eq=False)
class MonitorEndpoint:
    node: Mapping

    @property
    def port_node(self) -> Node | None:
        return self.node.get("port")

    @property
    def port(self) -> int | str | None:
        """`port`: a Service port name (ServiceMonitor, VMServiceScrape), a container port name (PodMonitor,
        VMPodScrape), a name or a number (PodMonitoring)."""
        return _int_or_string(self.port_node)

    @property
    def target_port_node(self) -> Node | None:
        return self.node.get("targetPort")

    @property
    def target_port(self) -> int | str | None:
        return _int_or_string(self.target_port_node)

    @property
    def port_number_node(self) -> Node | None:
        return self.node.get("portNumber")

    @property
    def port_number(self) -> int | None:
        value = _int_or_string(self.port_number_node)
        return value if isinstance(value, int) else None

    @property
    def path_node(self) -> Node | None:
        return self.node.get("path")

    @property
    def path(self) -> str:
        """The scrape path; Prometheus' default `/metrics` when none is written."""
        return scalar_str(self.path_node) or "/metrics"


@dataclass(eq=False)
class Monitor:
    obj: K8sObject
    kind: MonitorKind
    spec: Mapping
    endpoints: list[MonitorEndpoint]
    scope: NamespaceScope

    @property
    def targets(self) -> str:
        return self.kind.targets

    @property
    def selector(self) -> Node | None:
        return self.spec.get("selector")

    @property
    def endpoints_node(self) -> Node | None:
        return self.spec.get(self.kind.endpoints_field)


def namespace_scope(obj: K8sObject, kind: MonitorKind) -> NamespaceScope:
    if kind.cluster_wide:
        return NamespaceScope(True, (), True)
    spec = obj.spec
    selector = spec.get("namespaceSelector") if spec is not None and kind.namespace_selector else None
    if isinstance(selector, Mapping):
        any_node = selector.get("any")
        if isinstance(any_node, Scalar) and any_node.value is True:
            return NamespaceScope(True, (), True)
        names = selector.get("matchNames")
        if isinstance(names, Sequence) and names.items:
            return NamespaceScope(False, tuple(scalar_str(n) or "" for n in names.items), True)
    return NamespaceScope(False, (obj.namespace,), False)


def monitor_of(obj: K8sObject) -> Monitor | None:
    """The monitor an object is, with its endpoints; None for another kind or one without an endpoint list."""
    kind = KINDS.get(obj.kind)
    if kind is None or (kind.group and obj.api_version.split("/")[0] != kind.group):
        return None
    spec = obj.spec
    endpoints = spec.get(kind.endpoints_field) if spec is not None else None
    if spec is None or not isinstance(endpoints, Sequence):
        return None
    return Monitor(obj, kind, spec, [MonitorEndpoint(e) for e in endpoints.items if isinstance(e, Mapping)],
                   namespace_scope(obj, kind))


def monitors(world: World, *kinds: str) -> list[Monitor]:
    """Every monitor of the run (of `kinds` when given), in the order of the files."""
    wanted = kinds or tuple(KINDS)
    result = []
    for obj in world.of_kind(*wanted):
        monitor = monitor_of(obj)
        if monitor is not None:
            result.append(monitor)
    return result




# --- what operators create (data/monitor-targets.yaml) ---------------------------------------------
@lru_cache(maxsize=1)
def _targets_table() -> list[dict]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    return list((load_yaml_data(knowledge_dir() / "monitor-targets.yaml") or {}).get("operators") or [])


@lru_cache(maxsize=1)
def _operator_labels() -> list[tuple[str, tuple[str, ...], str, re.Pattern[str] | None]]:
    return [(str(entry["name"]), tuple(entry.get("creates") or ()), str(label["key"]),
             re.compile(str(label["value"])) if label.get("value") else None)
            for entry in _targets_table() for label in entry.get("labels") or []]


def operator_label(selector: LabelSelector, kind: str) -> str | None:
    """The operator that puts a label this selector requires on the objects of `kind` (Service, Pod) it
    creates (None: no operator does): such a selector may select objects no manifest of the run shows."""
    for requirement in selector.requirements:
        for operator, creates, key, value in _operator_labels():
            if requirement.key != key or kind not in creates:
                continue
            if value is None or requirement.operator != IN or any(value.fullmatch(v) for v in requirement.values):
                return operator
    return None


def label_copying_kinds() -> frozenset[str]:
    """Custom resources whose own labels their operator copies onto the Services and Pods it creates."""
    return frozenset(str(k) for entry in _targets_table() for k in entry.get("copies_labels_from") or [])


def added_port_names(owner_kind: str) -> frozenset[str]:
    """Container port names an operator or an injector adds to pods of `owner_kind` ("*": unknown names)."""
    return frozenset(str(port["name"]) for entry in _targets_table() for port in entry.get("adds_ports") or []
                     if owner_kind in port["owners"] or "*" in port["owners"])


__all__ = ["KINDS", "POD", "SERVICE", "Monitor", "MonitorEndpoint", "MonitorKind", "NamespaceScope", "added_port_names",
           "label_copying_kinds", "monitor_of", "monitors", "namespace_scope", "operator_label"]
