import re

from vllmlint.k8s.monitoring import POD, SERVICE, monitors
from vllmlint.k8s.objects import PodTemplate
from vllmlint.k8s.quantity import digits_int
from vllmlint.k8s.selectors import label_selector
from vllmlint.k8s.services import resolve_container_port, service_ports, service_selector
from vllmlint.source.yamlmodel import Mapping, Scalar, scalar_str
from vllmlint.checks import Context

_METRICS_PORT_NAME = re.compile(r"^(metrics|prometheus|prom|http-metrics|.*-metrics|metrics-.*)$")


def _vllm_ports(ctx: Context) -> dict[PodTemplate, tuple[set[int], set[int], int | None]]:
    """vLLM pod templates -> (their API ports, ports where something else in the pod listens, the one API
    port when every vLLM server of the template is known to listen on it: what a fix may write)."""
    result: dict[PodTemplate, tuple[set[int], set[int], int | None]] = {}
    for template, invocations in ctx.world.vllm_templates().items():
        if template.owner.kind == "ComposeService":
            continue
        api = {inv.api_port for inv in invocations if inv.api_port is not None}
        if not api:
            continue  # unknown ($VAR): stay silent
        vllm_containers = {id(inv.container) for inv in invocations}
        others: set[int] = set()
        for container in template.containers:
            # Other containers listen on their ports; in Ray pods `ray start` serves its own metrics too.
            if id(container) not in vllm_containers or template.owner.kind.startswith("Ray"):
                others.update(number for _, number in container.ports)
        exact = next(iter(api)) if len(api) == 1 and all(inv.api_port is not None for inv in invocations) else None
        result[template] = (api, others - api, exact)
    return result


def _mismatch(port: int | None, ports: tuple[set[int], set[int], int | None]) -> bool:
    api, others, _ = ports
    return port is not None and port not in api and port not in others


def _describe(api: set[int]) -> str:
    return " or ".join(str(p) for p in sorted(api))


def _selected(ctx, selector, namespace, vllm) -> list[PodTemplate]:
    return [t for t in ctx.world.selected_templates(selector, namespace) if t in vllm]


def check(ctx: Context):
    vllm = _vllm_ports(ctx)
    if not vllm:
        return
    services = ctx.world.of_kind("Service")
    # Service ports named like metrics on a Service in front of vLLM pods.
    for service in services:
        metrics_ports = [port for port in service_ports(service) if _METRICS_PORT_NAME.match(port.name)]
        if not metrics_ports:
            continue
        for template in _selected(ctx, service_selector(service), service.namespace, vllm):
            for port in metrics_ports:
                number = resolve_container_port(template, port.target)
                if _mismatch(number, vllm[template]):
                    yield ctx.finding(port.target_node, f"Service port `{port.name}` sends scrapes to port {number}, "
                                      f"but vLLM serves /metrics on its API port {_describe(vllm[template][0])}: point "
                                      "`targetPort` at the API port (there is no separate metrics port).",
                                      about=service, value=f"{port.name}:{number}",
                                      fix=ctx.build_fix(_port_fix, port.node.get("targetPort"), vllm[template],
                                                        "targetPort"))
                    break
    yield from _service_monitors(ctx, services, vllm)
    yield from _pod_monitors(ctx, vllm)
    yield from _annotations(ctx, vllm)
    yield from _service_annotations(ctx, services, vllm)


def _service_monitors(ctx, services, vllm):
    """ServiceMonitor / VMServiceScrape endpoints that reach vLLM pods on a port other than the API port. An
    endpoint `port` that names no port of the Service scrapes nothing at all: that is VL806's."""
    # Monitors that select the same Services (same selector, same namespaces) and scrape the same endpoint port
    # reach the same pods: the first vLLM pod scraped on a wrong port is looked for once per such group, and once
    # per Service (N monitors, Services and workloads sharing labels were N^3 port resolutions, then N^2 scans).
    selections: dict[tuple, list] = {}  # (selector, namespaces) -> the Services selected
    wrong: dict[tuple, tuple | None] = {}  # (Service, endpoint port, targetPort) -> (template, port) or None
    first: dict[tuple, tuple | None] = {}  # (selection, endpoint port, targetPort) -> (Service, template, port)
    for monitor in monitors(ctx.world):
        if monitor.targets != SERVICE:
            continue
        selector = label_selector(monitor.selector)
        scope = monitor.scope
        selection = (selector.valid, tuple((r.key, r.operator, r.values) for r in selector.match_labels),
                     tuple((r.key, r.operator, r.values) for r in selector.match_expressions), scope.any, scope.names)
        targets = selections.get(selection)
        if targets is None:
            targets = selections[selection] = [s for s in ctx.world.selected_objects("Service", monitor.selector)
                                               if scope.includes(s.namespace)]
        for endpoint in monitor.endpoints:
            port_name = scalar_str(endpoint.port_node)
            target_port = endpoint.target_port_node
            value = target_port.value if isinstance(target_port, Scalar) else None
            group = (selection, port_name, value)
            if group not in first:
                first[group] = next((found for service in targets
                                     for found in [_wrong_port(ctx, service, port_name, target_port, vllm, wrong)]
                                     if found is not None), None)
            found = first[group]
            if found is None:
                continue
            service, template, number = found
            if port_name is not None:
                where = endpoint.port_node
                fix = ctx.build_fix(_service_port_name_fix, where, service, template, vllm[template])
            else:
                where = target_port
                fix = ctx.build_fix(_port_fix, where, vllm[template], "the endpoint's targetPort")
            yield ctx.finding(where, f"{monitor.obj.kind} scrapes vLLM pods on port {number}, but vLLM "
                              f"serves /metrics on its API port {_describe(vllm[template][0])}: scrape "
                              "the API port.", about=monitor.obj, value=str(number), fix=fix)


def _wrong_port(ctx, service, port_name, target_port, vllm, wrong) -> tuple | None:
    """(Service, the first vLLM pod template behind it scraped on a port other than its API port, that port) for
    an endpoint `port` (a Service port name) or `targetPort`; None when every one is scraped right."""
    key = (id(service), port_name, target_port.value if isinstance(target_port, Scalar) else None)
    if key in wrong:
        return wrong[key]
    wrong[key] = None
    for template in _selected(ctx, service_selector(service), service.namespace, vllm):
        if port_name is not None:
            match = [p for p in service_ports(service) if p.name == port_name]
            if not match:
                break  # names no port of the Service: nothing is scraped (VL806)
            number = resolve_container_port(template, match[0].target)
        elif isinstance(target_port, Scalar):
            number = resolve_container_port(template, target_port.value)
        else:
            continue
        if _mismatch(number, vllm[template]):
            wrong[key] = (service, template, number)
            break
    return wrong[key]


def _pod_monitors(ctx, vllm):
    for monitor in monitors(ctx.world):
        if monitor.targets != POD:
            continue
        templates = [t for t in vllm if monitor.scope.includes(t.namespace) and t.selected_by(monitor.selector)]
        for endpoint in monitor.endpoints:
            for template in templates:
                where = endpoint.port_node or endpoint.port_number_node or endpoint.target_port_node
                if not isinstance(where, Scalar):
                    continue
                number = resolve_container_port(template, where.value)
                if _mismatch(number, vllm[template]):
                    yield ctx.finding(where, f"{monitor.obj.kind} scrapes vLLM pods on port {number}, but vLLM "
                                      f"serves /metrics on its API port {_describe(vllm[template][0])}: scrape the "
                                      "API port.", about=monitor.obj, value=str(number),
                                      fix=ctx.build_fix(_pod_port_fix, where, template, vllm[template]))
                    break


def _port_annotation(meta: Mapping | None, *, scrape_required: bool) -> tuple[Scalar, str, int] | None:
    """(node, text, number) of a `prometheus.io/port` annotation that Prometheus' annotation jobs read:
    not with `prometheus.io/scrape: "false"`, and on a Service only with `prometheus.io/scrape: "true"`
    (the `kubernetes-service-endpoints` job keeps only those)."""
    annotations = meta.get("annotations") if meta else None
    if not isinstance(annotations, Mapping):
        return None
    node = annotations.get("prometheus.io/port")
    if not isinstance(node, Scalar):
        return None
    scrape = annotations.get("prometheus.io/scrape")
    flag = (scalar_str(scrape) or "").strip().lower() if isinstance(scrape, Scalar) else None
    if flag == "false" or (scrape_required and flag != "true"):
        return None
    text = scalar_str(node) or ""
    number = digits_int(text)
    return None if number is None else (node, text, number)


def _annotations(ctx, vllm):
    for template in vllm:
        found = _port_annotation(template.metadata, scrape_required=False)
        if found is None:
            continue
        node, text, number = found
        if _mismatch(number, vllm[template]):
            yield ctx.finding(node, f"`prometheus.io/port: {text}` points Prometheus at a port vLLM does not serve "
                              f"metrics on: vLLM serves /metrics on its API port {_describe(vllm[template][0])}.",
                              about=template, value=text, fix=ctx.build_fix(_port_fix, node, vllm[template], "the annotation"))


def _service_annotations(ctx, services, vllm):
    """`prometheus.io/port` on a Service: Prometheus scrapes every pod behind the Service on that port
    (prometheus-community's `kubernetes-service-endpoints` job rewrites each endpoint's address to it)."""
    for service in services:
        found = _port_annotation(service.metadata, scrape_required=True)
        if found is None:
            continue
        node, text, number = found
        for template in _selected(ctx, service_selector(service), service.namespace, vllm):
            if _mismatch(number, vllm[template]):
                yield ctx.finding(node, f"`prometheus.io/port: {text}` points Prometheus at a port vLLM does not "
                                  f"serve metrics on. Service {service.name} carries it, and vLLM serves /metrics "
                                  f"on its API port {_describe(vllm[template][0])}.", about=service, value=text,
                                  fix=ctx.build_fix(_port_fix, node, vllm[template], "the annotation"))
                break


# --- fixes: point the scrape at the API port ------------------------------------------------------
# A number is rewritten to the API port number: safe, the scrape reaches the only port serving /metrics
# and nothing else reads that field. A name is rewritten to another name (or a number): unsafe, the
# name may be shared with something else, and the right Service port may still have to be created.


def _port_fix(node, ports, what: str):
    from vllmlint.fix.edits import SAFE, UNSAFE, make_fix, replace_number

    api = ports[2]
    if not isinstance(node, Scalar) or api is None:
        return None
    numeric = isinstance(node.value, int) or (scalar_str(node) or "").isdigit()
    edit = replace_number(node, api, keep_quotes=numeric)
    return make_fix([edit] if edit else None, SAFE if numeric else UNSAFE,
                    f"point {what} at vLLM's API port {api}")


def _service_port_name_fix(node, service, template, ports):
    """Name the Service port that already reaches the API port (unsafe: see above)."""
    from vllmlint.fix.edits import UNSAFE, make_fix, replace_scalar

    api = ports[2]
    if not isinstance(node, Scalar) or api is None:
        return None
    names = [p.name for p in service_ports(service)
             if p.name and resolve_container_port(template, p.target) == api]
    if not names:
        return None  # the Service has no port to the API port: that needs a new Service port
    if isinstance(node.value, int):
        return None
    edit = replace_scalar(node, names[0])
    return make_fix([edit] if edit else None, UNSAFE,
                    f"scrape Service port `{names[0]}`, which reaches vLLM's API port {api}")


def _pod_port_fix(node, template, ports):
    """A PodMonitor `port` names a container port: name the one the API listens on; a number (the
    `targetPort` field) becomes the API port number."""
    from vllmlint.fix.edits import UNSAFE, make_fix, replace_scalar

    api = ports[2]
    if not isinstance(node, Scalar) or api is None:
        return None
    if isinstance(node.value, int) or (scalar_str(node) or "").isdigit():
        return _port_fix(node, ports, "the endpoint")
    names = [name for container in template.containers for name, number in container.ports
             if name and number == api]
    if not names:
        return None
    edit = replace_scalar(node, names[0])
    return make_fix([edit] if edit else None, UNSAFE,
                    f"scrape container port `{names[0]}`, vLLM's API port {api}")
