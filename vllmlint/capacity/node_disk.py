"""The size of the disk that holds a node's images and ephemeral storage, where the run names it: the
Karpenter EC2NodeClass of the NodePools a pod lands on (`spec.blockDeviceMappings[].ebs.volumeSize` of the
kubelet's root volume), or the GKE node pool a pod selects by `cloud.google.com/gke-nodepool`, written as a
Config Connector ContainerNodePool (`spec.nodeConfig.diskSizeGb`).

References: aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go (BlockDeviceMapping.RootVolume, "a flag
indicating if this device is mounted as kubelet root dir. You can configure at most one root volume";
NodePool `spec.template.spec.nodeClassRef`); https://docs.cloud.google.com/config-connector/docs/reference/resource-docs/container/containernodepool
(ContainerNodePool, containernodepools.container.cnrm.cloud.google.com, REST resource nodePools) and the GKE API's
NodeConfig (`disk_size_gb`: "Size of the disk attached to each node, specified in GB"). The pool's name is taken
as `spec.resourceID`, else `metadata.name` (Config Connector's naming convention; the field list of this page
was not read in full here).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from vllmlint.records import dataclass
from vllmlint.k8s.quantity import parse_quantity
from vllmlint.k8s.selectors import IN
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, path_at

if TYPE_CHECKING:
    from vllmlint.k8s.objects import K8sObject, PodTemplate, World

GKE_NODEPOOL_KEY = "cloud.google.com/gke-nodepool"


@dataclass(frozen=True, eq=False)
class NodeDisk:
    """A node disk: its size in bytes, the YAML node that says so, and where it comes from (for messages)."""

    size: int
    node: Node
    origin: str


def _text(node: Node | None) -> str:
    return str(node.value) if isinstance(node, Scalar) and node.value is not None else ""


def _flag(node: Node | None) -> bool:
    return isinstance(node, Scalar) and node.value is True


def _ec2_root_volume(node_class: K8sObject) -> NodeDisk | None:
    """The EC2NodeClass's kubelet root volume: the mapping marked `rootVolume: true`, else the only mapping of a
    class that is not Bottlerocket (whose images live on a second, data volume). None when not written."""
    mappings = path_at(node_class.spec, "blockDeviceMappings")
    items = [m for m in mappings.items if isinstance(m, Mapping)] if isinstance(mappings, Sequence) else []
    root = [m for m in items if _flag(m.get("rootVolume"))]
    if not root:
        family = _text(path_at(node_class.spec, "amiFamily")).lower()
        terms = path_at(node_class.spec, "amiSelectorTerms")
        aliases = [_text(path_at(t, "alias")).lower() for t in terms.items] if isinstance(terms, Sequence) else []
        if len(items) != 1 or family == "bottlerocket" or any(a.startswith("bottlerocket") for a in aliases):
            return None
        root = items
    size_node = path_at(root[0], "ebs", "volumeSize")
    size = parse_quantity(size_node)
    if size_node is None or size is None or size <= 0:
        return None
    return NodeDisk(int(size), size_node, f"EC2NodeClass {node_class.name} volumeSize {_text(size_node)}")


def _pool_disk(pool, world: World) -> NodeDisk | None:
    ref = path_at(pool.obj.spec, "template", "spec", "nodeClassRef")
    if _text(path_at(ref, "kind")) not in ("EC2NodeClass", ""):
        return None
    name = _text(path_at(ref, "name"))
    if not name:
        return None
    found = [o for o in world.of_kind("EC2NodeClass") if o.name == name and o.api_version.startswith("karpenter.k8s.aws/")]
    return _ec2_root_volume(found[0]) if len(found) == 1 else None


def _gke_pool_disk(name: str, world: World) -> NodeDisk | None:
    found = []
    for obj in world.of_kind("ContainerNodePool"):
        if not obj.api_version.startswith("container.cnrm.cloud.google.com/"):
            continue
        if (_text(path_at(obj.spec, "resourceID")) or obj.name) == name:
            found.append(obj)
    if len(found) != 1:
        return None
    size_node = path_at(found[0].spec, "nodeConfig", "diskSizeGb")
    try:
        size = int(_text(size_node))
    except ValueError:
        return None
    if size <= 0 or size_node is None:
        return None
    return NodeDisk(size * 10**9, size_node, f"ContainerNodePool {found[0].name} diskSizeGb {size}")


def node_disk(template: PodTemplate, world: World) -> NodeDisk | None:
    """The largest node disk among the places the pod can land, when every one of them is known: the Karpenter
    NodePools that take it (each with its EC2NodeClass), or the GKE node pools it selects by name. None when
    any place's disk is not written in the run (never a default assumed)."""
    from vllmlint.capacity.workload import admitting_pools

    disks: list[NodeDisk] = []
    names: set[str] | None = None
    for requirements in template.placement.requirement_sets():
        chosen = [set(r.values) for r in requirements if r.key == GKE_NODEPOOL_KEY and r.operator == IN]
        if not chosen:
            names = None
            break
        names = (names or set()) | set.intersection(*chosen)
    if names:
        for name in sorted(names):
            disk = _gke_pool_disk(name, world)
            if disk is None:
                return None
            disks.append(disk)
    else:
        pools = admitting_pools(template, world)
        if not pools:
            return None
        for pool in pools:
            disk = _pool_disk(pool, world)
            if disk is None:
                return None
            disks.append(disk)
    return max(disks, key=lambda d: d.size) if disks else None


__all__ = ["NodeDisk", "node_disk", "GKE_NODEPOOL_KEY"]
