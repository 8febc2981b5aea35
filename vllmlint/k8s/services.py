"""Service ports, with the nodes that set them, and their targets resolved on a pod template.

https://kubernetes.io/docs/reference/kubernetes-api/service-resources/service-v1/#ServiceSpec: `targetPort`
is a number or the name of a container port, and defaults to `port`; `protocol` defaults to TCP.
"""
from __future__ import annotations

from vllmlint.records import dataclass
from typing import TYPE_CHECKING

from vllmlint.k8s.pod import port_number
from vllmlint.k8s.quantity import digits_int, int_value
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, scalar_str

if TYPE_CHECKING:
    from vllmlint.k8s.objects import K8sObject, PodTemplate


@dataclass(eq=False)
class ServicePort:
    name: str
    port: int | None
    target: int | str | None  # a number, a container port name, or None (= port)
    node: Mapping  # the port entry
    node_port: int | None = None
    protocol: str = "TCP"

    @property
    def name_node(self) -> Node | None:
        return self.node.get("name")

    @property
    def port_node(self) -> Node | None:
        return self.node.get("port")

    @property
    def target_node(self) -> Node:
        """The node that says where traffic goes: `targetPort`, else `port`, else the entry."""
        return self.node.get("targetPort") or self.node.get("port") or self.node

    @property
    def node_port_node(self) -> Node | None:
        return self.node.get("nodePort")


def service_ports(service: K8sObject) -> list[ServicePort]:
    memo = getattr(service, "_memo", None)  # once the world is sealed (k8s.objects.seal): a dozen rules read every Service's ports
    if memo is not None and "ports" in memo:
        return list(memo["ports"])
    ports = service.spec.get("ports") if service.spec else None
    result = []
    if isinstance(ports, Sequence):
        for item in ports.items:
            if not isinstance(item, Mapping):
                continue
            port = item.get("port")
            target = item.get("targetPort")
            number = port.value if isinstance(port, Scalar) and isinstance(port.value, int) else None
            target_value: int | str | None
            if isinstance(target, Scalar) and target.value is not None:
                target_value = target.value if isinstance(target.value, int) else scalar_str(target)
            else:
                target_value = number
            result.append(ServicePort(scalar_str(item.get("name")) or "", number, target_value, item,
                                      int_value(item.get("nodePort"), minimum=1, maximum=65535),
                                      scalar_str(item.get("protocol")) or "TCP"))
    if memo is not None:
        memo["ports"] = list(result)
    return result


def resolve_container_port(template: PodTemplate, target: int | str | None) -> int | None:
    """A Service targetPort (number or container port name) as a number on this pod template."""
    return resolve_port(template, target)[0]


def resolve_port(template: PodTemplate, target: Node | int | str | None) -> tuple[int | None, Node | None]:
    """(number, node that says it): a number is itself; a name is the first container port of that name
    in the pod (its `containerPort` node)."""
    if isinstance(target, int) and not isinstance(target, bool):
        return target, None
    if isinstance(target, str) and digits_int(target) is not None:
        return digits_int(target), None
    for container in template.containers:
        number, node = port_number(container.container_ports, target)
        if number is not None:
            return number, node
    return None, None


def service_selector(service: K8sObject) -> Node | None:
    return service.spec.get("selector") if service.spec else None


__all__ = ["ServicePort", "service_ports", "resolve_container_port", "resolve_port", "service_selector"]
