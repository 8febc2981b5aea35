"""Where a pod may be scheduled: its node selector, required node affinity and tolerations as one
`Placement`, and what a Karpenter NodePool's nodes carry (template labels, requirements, taints).

References: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/ (nodeSelector and
nodeAffinity: the terms of `nodeSelectorTerms` are ORed, the expressions of one term ANDed, and both
nodeSelector and affinity must hold), https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
(an empty key with `Exists` tolerates everything; an empty effect matches every effect), and
https://karpenter.sh/docs/concepts/nodepools/ (template labels and requirements become node labels).
"""
from __future__ import annotations

from vllmlint.records import dataclass, field
from typing import TYPE_CHECKING

from vllmlint.k8s.selectors import IN, Requirement, expressions, from_map, label_text
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence

if TYPE_CHECKING:
    from vllmlint.k8s.objects import K8sObject, PodTemplate


def _mapping(node: Node | None) -> Mapping | None:
    return node if isinstance(node, Mapping) else None


def _text(node: Node | None) -> str | None:
    """A field's text; None when absent, null or not a scalar."""
    if not isinstance(node, Scalar) or node.value is None:
        return None
    return label_text(node)


@dataclass(frozen=True, eq=False)
class Taint:
    key: str | None
    value: str | None
    effect: str | None
    node: Mapping

    @property
    def repels(self) -> bool:
        """NoSchedule and NoExecute keep pods off; PreferNoSchedule only discourages (the default NoSchedule)."""
        return (self.effect or "NoSchedule") in ("NoSchedule", "NoExecute")


@dataclass(frozen=True, eq=False)
class Toleration:
    key: str | None
    operator: str  # Equal (the default) or Exists
    value: str | None
    effect: str | None
    node: Mapping

    def tolerates(self, taint: Taint) -> bool:
        if not self.key and self.operator == "Exists":
            return True
        if str(self.key) != str(taint.key):
            return False
        if self.effect and self.effect != taint.effect:
            return False
        return self.operator == "Exists" or (self.value or "") == (taint.value or "")


def _tolerations(node: Node | None) -> list[Toleration]:
    result = []
    for item in node.items if isinstance(node, Sequence) else []:
        if isinstance(item, Mapping):
            result.append(Toleration(_text(item.get("key")), _text(item.get("operator")) or "Equal",
                                     _text(item.get("value")), _text(item.get("effect")), item))
    return result


def tolerated(tolerations: list[Toleration], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


@dataclass(eq=False)
class NodeSelectorTerm:
    """One term of required node affinity: its matchExpressions, all of which must hold."""

    requirements: list[Requirement]
    node: Node | None = None


@dataclass(eq=False)
class Placement:
    """A pod's node constraints. `terms` is never empty: no required affinity is one empty term."""

    node_selector: list[Requirement] = field(default_factory=list)  # `key: value` entries (key In [value])
    terms: list[NodeSelectorTerm] = field(default_factory=lambda: [NodeSelectorTerm([])])
    tolerations: list[Toleration] = field(default_factory=list)
    node_selector_node: Mapping | None = None

    def requirement_sets(self) -> list[list[Requirement]]:
        """The node selector ANDed with each term: every way the pod's constraints can be met."""
        return [self.node_selector + term.requirements for term in self.terms]

    def deciding(self, key: str) -> list[Requirement]:
        """The requirements on one label key (the nodes that decide a placement by that label)."""
        return [r for r in self.node_selector + [r for t in self.terms for r in t.requirements] if r.key == key]


def placement(template: PodTemplate) -> Placement:
    spec = template.spec
    selector_node = _mapping(spec.get("nodeSelector"))
    selector = from_map(selector_node, strict=False) or []
    terms = []
    affinity = _mapping(spec.get("affinity"))
    node_affinity = _mapping(affinity.get("nodeAffinity")) if affinity else None
    required = _mapping(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")) if node_affinity else None
    listed = required.get("nodeSelectorTerms") if required else None
    for term in listed.items if isinstance(listed, Sequence) else []:
        if isinstance(term, Mapping):
            terms.append(NodeSelectorTerm(expressions(term.get("matchExpressions"), default_operator=IN), term))
    return Placement(selector, terms or [NodeSelectorTerm([])], _tolerations(spec.get("tolerations")), selector_node)


@dataclass(eq=False)
class NodePool:
    """A Karpenter NodePool: the labels, requirements and taints of the nodes it launches."""

    obj: K8sObject
    labels: list[Requirement]  # template metadata labels, as `key In [value]` with their nodes
    requirements: list[Requirement]
    taints: list[Taint]

    @property
    def name(self) -> str:
        return self.obj.name

    def label(self, key: str) -> Requirement | None:
        return next((r for r in self.labels if r.key == key), None)

    def requirements_on(self, key: str) -> list[Requirement]:
        return [r for r in self.requirements if r.key == key]

    def limit(self, resource: str) -> Node | None:
        """`spec.limits[resource]`: the most of that resource the pool's nodes may have in all (Karpenter
        counts the nodes' capacity, https://karpenter.sh/docs/concepts/nodepools/#speclimits)."""
        spec = self.obj.spec
        limits = _mapping(spec.get("limits")) if spec else None
        return limits.get(resource) if limits else None


def node_pool(obj: K8sObject) -> NodePool:
    spec = obj.spec
    template = _mapping(spec.get("template")) if spec else None
    meta = _mapping(template.get("metadata")) if template else None
    labels = from_map(_mapping(meta.get("labels")), strict=False) if meta else None
    pool_spec = _mapping(template.get("spec")) if template else None
    requirements = expressions(pool_spec.get("requirements"), default_operator=IN) if pool_spec else []
    taints = []
    listed = pool_spec.get("taints") if pool_spec else None
    for item in listed.items if isinstance(listed, Sequence) else []:
        if isinstance(item, Mapping):
            taints.append(Taint(_text(item.get("key")), _text(item.get("value")), _text(item.get("effect")), item))
    return NodePool(obj, labels or [], requirements, taints)


def node_count_cap(pool: NodePool) -> tuple[Node, str] | None:
    """The most nodes a NodePool can have, and which field says so: `spec.replicas` (a static NodePool keeps
    exactly that many nodes "regardless of pod demand", https://karpenter.sh/docs/concepts/nodepools/#specreplicas)
    or `spec.limits.nodes` (https://karpenter.sh/docs/concepts/nodepools/#speclimits). None when neither is
    written: the pool grows with demand up to its other limits."""
    spec = pool.obj.spec
    if spec is None:
        return None
    static = spec.get("replicas")
    if static is not None:
        return static, "replicas"
    limits = _mapping(spec.get("limits"))
    nodes = limits.get("nodes") if limits else None
    return (nodes, "limits.nodes") if nodes is not None else None


__all__ = ["Placement", "NodeSelectorTerm", "Toleration", "Taint", "NodePool", "placement", "node_pool", "tolerated",
           "node_count_cap"]


def placement_of_fields(terms: Node | None, tolerations: Node | None) -> Placement:
    """The placement of a pod an operator builds from its resource's fields: `terms`, a list of NodeSelectorTerms
    that becomes the required node affinity, and `tolerations` (production-stack's VLLMRuntime)."""
    found = [NodeSelectorTerm(expressions(term.get("matchExpressions"), default_operator=IN), term)
             for term in (terms.items if isinstance(terms, Sequence) else []) if isinstance(term, Mapping)]
    return Placement([], found or [NodeSelectorTerm([])], _tolerations(tolerations), None)
