from vllmlint.source.yamlmodel import Mapping, Sequence, scalar_str
from vllmlint.checks import Context


def _cpu_utilization_nodes(spec: Mapping):
    """(node to point at, container name or None) for every CPU-utilization target of an HPA spec."""
    v1 = spec.get("targetCPUUtilizationPercentage")
    if v1 is not None:
        yield spec.key_node("targetCPUUtilizationPercentage"), None
    metrics = spec.get("metrics")
    if not isinstance(metrics, Sequence):
        return
    for metric in metrics.items:
        if not isinstance(metric, Mapping):
            continue
        kind = scalar_str(metric.get("type"))
        part = metric.get("resource") if kind == "Resource" else metric.get("containerResource") \
            if kind == "ContainerResource" else None
        if not isinstance(part, Mapping) or scalar_str(part.get("name")) != "cpu":
            continue
        target = part.get("target")
        utilization = (isinstance(target, Mapping) and scalar_str(target.get("type")) == "Utilization") \
            or part.get("targetAverageUtilization") is not None  # autoscaling/v2beta1
        if utilization:
            yield part.get("name"), scalar_str(part.get("container"))


def _has_cpu_request(container) -> bool:
    # A CPU limit without a request makes Kubernetes default the request to the limit.
    return container.resource("requests", "cpu") is not None or container.resource("limits", "cpu") is not None


def check(ctx: Context):
    for hpa in ctx.world.of_kind("HorizontalPodAutoscaler"):
        spec = hpa.spec
        if spec is None:
            continue
        ref = spec.get("scaleTargetRef")
        if not isinstance(ref, Mapping):
            continue
        target = ctx.world.find(scalar_str(ref.get("kind")) or "", scalar_str(ref.get("name")) or "", hpa.namespace)
        if target is None:
            continue  # the target lives elsewhere
        templates = ctx.world.templates_of(target)
        for node, only_container in _cpu_utilization_nodes(spec):
            missing = [c.name or "(unnamed)" for t in templates for c in t.containers
                       if not c.init and (only_container is None or c.name == only_container)
                       and not _has_cpu_request(c)]
            if not missing:
                continue
            names = ", ".join(f"`{name}`" for name in missing)
            yield ctx.finding(node, f"HPA {hpa.name} scales {target.kind} {target.name} on CPU utilization, but "
                              f"container {names} sets no CPU request, so utilization is unknown and the HPA never "
                              "scales: set `resources.requests.cpu`, or scale on vLLM's queue metrics "
                              "(`vllm:num_requests_waiting`).", about=hpa, value=f"{target.kind}/{target.name}")
