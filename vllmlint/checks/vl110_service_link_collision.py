"""VL110: a Service named `vllm` makes the kubelet set VLLM_PORT=tcp://... in vLLM's own pods."""
from __future__ import annotations

from vllmlint.k8s.objects import namespaces_compatible
from vllmlint.source.yamlmodel import Scalar, scalar_str
from vllmlint.checks import Context


def _has_cluster_ip(service) -> bool:
    spec = service.spec
    if spec is None:
        return True  # the default: type ClusterIP with an allocated IP
    if (scalar_str(spec.get("type")) or "ClusterIP") == "ExternalName":
        return False
    return (scalar_str(spec.get("clusterIP")) or "") != "None"  # "None" is a headless Service: no variables


def _links_disabled(pod) -> bool:
    node = pod.spec.get("enableServiceLinks")
    return isinstance(node, Scalar) and node.value is False


def check(ctx: Context):
    services = [s for s in ctx.world.of_kind("Service") if s.name == "vllm" and _has_cluster_ip(s)]
    if not services:
        return
    for service in services:
        affected = []
        for invocation in ctx.world.invocations:
            container = invocation.container
            if container is None or container.is_compose:
                continue
            pod = container.pod
            if not namespaces_compatible(service.namespace, pod.namespace) or _links_disabled(pod):
                continue
            if "VLLM_PORT" in container.env:
                continue  # the container's own VLLM_PORT wins over the injected one
            owner = pod.owner.describe()
            if owner not in affected:
                affected.append(owner)
        if not affected:
            continue
        where = service.metadata.get("name") if service.metadata is not None else service.node
        namespace = f"namespace {service.namespace}" if service.namespace else "its namespace"
        yield ctx.finding(where or service.node,
                          f"A Service named `vllm` makes vLLM's pods in {namespace} refuse to start. "
                          f"It makes the kubelet set `VLLM_PORT=tcp://<cluster IP>:<port>` (and "
                          f"`VLLM_SERVICE_HOST`, ...) in every pod of {namespace}, including {', '.join(affected)}; "
                          "vLLM reads `VLLM_PORT` as its internal port number and refuses to start (\"VLLM_PORT ... "
                          "appears to be a URI\"). Rename the Service (e.g. `vllm-api`), or set "
                          "`enableServiceLinks: false` in the pod spec.", about=service, value=service.name)
