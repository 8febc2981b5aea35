from vllmlint.k8s.autoscaling import hpa_metrics, scale_target
from vllmlint.checks import Context


def _cpu_utilization_nodes(hpa):
    """(node to point at, container name or None) for every CPU-utilization target of an HPA."""
    for metric in hpa_metrics(hpa):
        if metric.type in ("Resource", "ContainerResource") and metric.metric == "cpu" \
                and metric.target_type == "Utilization":
            yield metric.name_node or metric.node, metric.container


def _has_cpu_request(container) -> bool:
    # A CPU limit without a request makes Kubernetes default the request to the limit.
    return container.resource("requests", "cpu") is not None or container.resource("limits", "cpu") is not None


def check(ctx: Context):
    for hpa in ctx.world.of_kind("HorizontalPodAutoscaler"):
        ref = scale_target(hpa)
        if ref is None:
            continue
        target = ctx.world.find(ref.kind, ref.name, hpa.namespace)
        if target is None:
            continue  # the target lives elsewhere
        templates = ctx.world.templates_of(target)
        for node, only_container in _cpu_utilization_nodes(hpa):
            missing = [c.name or "(unnamed)" for t in templates for c in t.containers
                       if not c.init and (only_container is None or c.name == only_container)
                       and not _has_cpu_request(c)]
            if not missing:
                continue
            names = ", ".join(f"`{name}`" for name in missing)
            yield ctx.finding(node, f"HPA {hpa.name} scales on CPU utilization, but container {names} sets no CPU "
                              "request, so utilization is unknown and the HPA never scales "
                              f"{target.kind} {target.name}: set `resources.requests.cpu`, or scale on vLLM's queue "
                              "metrics "
                              "(`vllm:num_requests_waiting`).", about=hpa, value=f"{target.kind}/{target.name}")
