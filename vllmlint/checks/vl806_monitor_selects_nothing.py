"""VL806 monitor-selects-nothing: a ServiceMonitor / PodMonitor (VMServiceScrape, VMPodScrape, GKE
PodMonitoring) meant for the vLLM workload of the run whose selector, namespaces or port name select nothing.

How the Prometheus Operator turns a monitor into targets (prometheus-operator 6adcebc5,
pkg/prometheus/promcfg.go): Services (Pods) are kept when their *own* labels match `spec.selector`, in the
namespaces of `namespaceSelector` (the monitor's own namespace by default); a ServiceMonitor endpoint `port`
keeps the endpoints whose port name (the Service port's `name`) is that string, a PodMonitor `port` the
declared container ports of that name (`__meta_kubernetes_pod_container_port_name`), `portNumber` the
declared container port numbers. A Service port without a name, or a container port the pod does not
declare, is never kept.

Precision: only where the run holds a vLLM pod (or the Service in front of it) the monitor is evidently
meant for, and never when the selector uses labels an operator puts on the objects it creates
(`data/monitor-targets.yaml`). Info where the answer depends on the namespace the manifests are applied to.
"""
from __future__ import annotations


from vllmlint.checks import Context
from vllmlint.finding import Severity
from vllmlint.k8s.monitoring import (POD, SERVICE, Monitor, MonitorEndpoint, added_port_names, label_copying_kinds,
                                     monitors, operator_label)
from vllmlint.k8s.objects import K8sObject, PodTemplate, World, template_label_pair
from vllmlint.k8s.selectors import IN, LabelSelector, label_selector
from vllmlint.k8s.services import resolve_container_port, service_ports, service_selector
from vllmlint.source.yamlmodel import Scalar, scalar_str
from vllmlint.lazyre import lazy_compile

# Workloads whose pods carry exactly the template's labels (plus the controller's own, which `selected_by`
# knows): operators (KubeRay's group `labels`, KServe, LWS) may add labels the template does not show.
_PLAIN_WORKLOADS = frozenset({"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController",
                              "Job", "CronJob"})
_PLAIN_NAME = lazy_compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")  # an IANA_SVC_NAME; anything else may be a regex


def check(ctx: Context):
    world = ctx.world
    vllm = [t for t in world.vllm_templates() if t.owner.kind != "ComposeService"]
    if not vllm:
        return
    found = monitors(world)
    if not found:
        return
    run = _Run(world, vllm)
    for monitor in found:
        selector = label_selector(monitor.selector)
        if not selector.valid or not selector.requirements:
            continue  # `selector: {}` selects every Service (Pod) of the namespaces: nothing to prove
        if monitor.targets == SERVICE:
            yield from _service_monitor(ctx, monitor, selector, run)
        else:
            yield from _pod_monitor(ctx, monitor, selector, run)


class _Run:
    """The run's Services and vLLM pod templates, indexed once for every monitor: a scan of them per monitor
    made the rule quadratic in the size of the tree (10,000 linked files: 10 s of 22). What depends only on a
    selector and a namespace scope is computed once for monitors that share both (`shared`)."""

    def __init__(self, world: World, vllm: list[PodTemplate]):
        self.world = world
        self.vllm = vllm
        self.vllm_set = set(vllm)  # pod templates compare by identity
        self.vllm_order = {t: i for i, t in enumerate(vllm)}
        self.services = world.of_kind("Service")
        self.fronts: dict[int, list[PodTemplate]] = {}  # Service -> the vLLM pod templates it selects
        self.fronted_by: dict[PodTemplate, list[K8sObject]] = {}  # vLLM pod template -> Services in front of it
        self.fronting_named: dict[str, list[K8sObject]] = {}  # name -> the Services of that name in `fronts`
        for service in self.services:
            selected = [t for t in world.selected_templates(service_selector(service), service.namespace)
                        if t in self.vllm_set]
            if selected:
                self.fronts[id(service)] = selected
                self.fronting_named.setdefault(service.name, []).append(service)
                for template in dict.fromkeys(selected):
                    self.fronted_by.setdefault(template, []).append(service)
        self.service_order = {id(s): i for i, s in enumerate(self.services)}
        self.copying = [o for o in world.objects if o.kind in label_copying_kinds()]
        self.services_labelled: dict[tuple[str, str], list[K8sObject]] = {}  # (key, value) -> Services, in order
        for service in self.services:
            for pair in service.labels.items():
                self.services_labelled.setdefault(pair, []).append(service)
        self.vllm_labelled: dict[tuple[str, str], list[PodTemplate]] = {}  # (key, value) -> vLLM templates
        self.vllm_owned: dict[str, list[PodTemplate]] = {}  # owner name -> vLLM templates, in order
        self.vllm_owner_labelled: dict[tuple[str, str], list[PodTemplate]] = {}  # by their owner's labels
        for template in vllm:
            for pair in template.labels.items():
                self.vllm_labelled.setdefault(pair, []).append(template)
            for pair in template.owner.labels.items():
                self.vllm_owner_labelled.setdefault(pair, []).append(template)
            self.vllm_owned.setdefault(template.owner.name, []).append(template)
        self._shared: dict = {}

    def shared(self, what: str, monitor: Monitor, selector: LabelSelector, compute):
        """`compute()`, once per `what`, selector and namespace scope (what it returns depends on nothing else)."""
        scope = monitor.scope
        key = (what, scope.any, scope.names, tuple((r.key, r.operator, r.values) for r in selector.match_labels),
               tuple((r.key, r.operator, r.values) for r in selector.match_expressions))
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = compute()
        return found

    def labelled_services(self, selector: LabelSelector) -> list[K8sObject]:
        """The Services of the run whose own labels `selector` matches, in run order."""
        first = selector.first_pair()  # a label every selected Service carries: look only at those
        candidates = self.services_labelled.get(first, []) if first is not None else self.services
        return [s for s in candidates if selector.matches(s.labels)]

    def pods_named_by(self, selector: LabelSelector, names: set[str], labelled: list[K8sObject]) -> list[PodTemplate]:
        """The vLLM pod templates, in run order, whose owner has the selector's labels, whose Service is among
        `labelled`, or whose owner `names` names: the only ones `_no_pod_labelled` can report."""
        first = selector.first_pair()
        if first is None:
            return self.vllm
        found = set(self.vllm_owner_labelled.get(first, ()))
        found.update(t for s in labelled for t in self.fronts.get(id(s), ()))
        found.update(t for name in names for t in self.vllm_owned.get(name, ()))
        return sorted(found, key=self.vllm_order.__getitem__)

    def in_order(self, services) -> list[K8sObject]:
        order = self.service_order
        return sorted(services, key=lambda s: order[id(s)])


# --- shared ------------------------------------------------------------------------------------------
def _operators_may_create(monitor: Monitor, selector: LabelSelector, kind: str, copying: list[K8sObject]) -> bool:
    """Whether the selector may select objects an operator creates, which the run cannot show."""
    if operator_label(selector, kind) is not None:
        return True
    return any(monitor.scope.includes(o.namespace) and selector.matches(o.labels) for o in copying)


def _pairs(selector: LabelSelector) -> str:
    parts = [f"{r.key}={r.values[0]}" for r in selector.match_labels if r.values]
    parts += [f"{r.key} {r.operator} ({', '.join(r.values)})" if r.values else f"{r.key} {r.operator}"
              for r in selector.match_expressions]
    return ", ".join(parts)


def _where(monitor: Monitor) -> str:
    scope = monitor.scope
    if scope.any:
        return "every namespace"
    names = [n for n in scope.names if n]
    if not names:
        return "its own namespace"
    listed = ", ".join(f"`{n}`" for n in names)
    return f"namespace {listed}" if len(names) == 1 else f"namespaces {listed}"


def _scope_text(monitor: Monitor) -> str:
    if monitor.scope.explicit:
        return f"looks only in {_where(monitor)} (its `namespaceSelector`)"
    return f"looks only in its own {_where(monitor)} (it has no `namespaceSelector`)"


def _only_if_applied_there(monitor: Monitor, namespaces: list[str]) -> bool:
    """Every candidate says no namespace while the monitor, with no `namespaceSelector`, sits in a named
    namespace: they are selected only if they are applied into it, which the run does not say. (An explicit
    `matchNames` says where the author applies them: trusted.)"""
    scope = monitor.scope
    return (not scope.any and not scope.explicit and bool(namespaces) and all(not n for n in namespaces)
            and bool([n for n in scope.names if n]))


def _named_values(selector: LabelSelector) -> set[str]:
    return {v for r in selector.requirements if r.operator == IN for v in r.values}


def _port_name(endpoint_node) -> str | None:
    """A port written as a name Prometheus compares as is (numbers and regular expressions: None)."""
    if not isinstance(endpoint_node, Scalar) or isinstance(endpoint_node.value, (int, bool)):
        return None
    text = scalar_str(endpoint_node)
    if text is None or text.isdigit() or not _PLAIN_NAME.fullmatch(text):
        return None
    return text


# --- Services (ServiceMonitor, VMServiceScrape) ------------------------------------------------------
def _service_monitor(ctx, monitor: Monitor, selector: LabelSelector, run: _Run):
    kind = monitor.obj.kind
    fronts = run.fronts
    labelled, in_scope = run.shared("services", monitor, selector, lambda: _labelled_in_scope(run, monitor, selector))
    if not in_scope:
        if _operators_may_create(monitor, selector, SERVICE, run.copying):
            return
        elsewhere = [s for s in labelled if id(s) in fronts]
        if elsewhere:
            service = elsewhere[0]
            yield ctx.finding(monitor.selector, f"{kind} {monitor.obj.name} selects no Service: add "
                              f"`{service.namespace}` to `namespaceSelector.matchNames` (or move the monitor there). "
                              f"It {_scope_text(monitor)}, and Service {service.name}, which has its labels and "
                              f"fronts the vLLM pods, is in namespace `{service.namespace}`.",
                              about=monitor.obj, value=f"namespace:{service.namespace}")
            return
        yield from _no_service_labelled(ctx, monitor, selector, run)
        return
    fronting = [s for s in in_scope if id(s) in fronts]
    if not fronting:
        return  # it selects Services of the run, none in front of vLLM pods: not VL806's business
    if _only_if_applied_there(monitor, [s.namespace for s in in_scope]):
        service = fronting[0]
        yield ctx.finding(monitor.selector, f"{kind} {monitor.obj.name} selects Service {service.name} only if "
                          f"the Service is applied into {_where(monitor)}: the monitor {_scope_text(monitor)}, and the "
                          "Service says no namespace. Set `namespaceSelector.matchNames` to the namespace the vLLM "
                          "Service runs in.", about=monitor.obj, value="namespace:unset", severity=Severity.INFO)
    for endpoint in monitor.endpoints:
        yield from _service_endpoint(ctx, monitor, endpoint, in_scope, fronting, fronts)


def _labelled_in_scope(run: _Run, monitor: Monitor, selector: LabelSelector):
    """(the Services the selector's labels match, those of them in the monitor's namespaces)."""
    labelled = run.labelled_services(selector)
    return labelled, [s for s in labelled if monitor.scope.includes(s.namespace)]


def _meant_for(run: _Run, monitor: Monitor, selector: LabelSelector):
    """(the vLLM pod templates a monitor selecting no Service is evidently meant for, the Services in front of
    them), in run order; ([], []) when it is meant for none."""
    scope = monitor.scope
    vllm = run.vllm
    pair = template_label_pair(selector)
    candidates = run.vllm_labelled.get(pair, []) if pair is not None else vllm
    pods = [t for t in candidates if scope.includes(t.namespace) and t.selected_by(selector)]
    names = _named_values(selector)
    by_name = run.in_order(s for name in names for s in run.fronting_named.get(name, ())
                           if scope.includes(s.namespace))
    if not pods and not by_name:
        owned = (t for name in names for t in run.vllm_owned.get(name, ()))
        pods = sorted((t for t in owned if scope.includes(t.namespace)), key=run.vllm_order.__getitem__)
    if not pods and not by_name:
        return [], []
    # The Services in front of those pods (pod templates compare by identity), each once, in run order.
    front = by_name or run.in_order({id(s): s for t in pods for s in run.fronted_by.get(t, ())
                                     if scope.includes(s.namespace)}.values())
    return pods, front


def _no_service_labelled(ctx, monitor: Monitor, selector: LabelSelector, run: _Run):
    """No Service of the run has the selector's labels: report it when the monitor is evidently meant for
    the vLLM pods (its selector matches their labels, or names their Service or workload)."""
    kind = monitor.obj.kind
    pods, front = run.shared("meant for", monitor, selector, lambda: _meant_for(run, monitor, selector))
    if not pods and not front:
        return
    wanted = _pairs(selector)
    if front:
        service = front[0]
        have = ", ".join(f"{k}={v}" for k, v in sorted(service.labels.items()))
        has = f"has labels {have}" if have else "has no labels"
        yield ctx.finding(monitor.selector, f"{kind} {monitor.obj.name} selects no Service: it selects Services "
                          f"labelled {wanted}, and Service {service.name}, in front of the vLLM pods, {has} (a "
                          f"{kind} matches a Service's own `metadata.labels`, not its selector or the pods' labels). "
                          f"Add those labels to Service {service.name}, or select the labels it has."
                          + _also_missing(monitor, service), about=monitor.obj, value=f"labels:{wanted}")
        return
    owner = pods[0].owner
    yield ctx.finding(monitor.selector, f"{kind} {monitor.obj.name} selects no Service of the run: it selects "
                      f"Services labelled {wanted}, which the vLLM pods of {owner.describe()} carry, but no Service "
                      f"of the linted files has those labels (a {kind} selects Services, not pods). Label the "
                      "Service in front of the pods, or use a PodMonitor.", about=monitor.obj,
                      value=f"labels:{wanted}", severity=Severity.INFO)


def _also_missing(monitor: Monitor, service: K8sObject) -> str:
    """What the monitor would still miss once it selects `service`: endpoint port names it does not have."""
    ports = service_ports(service)
    missing = [n for n in (_port_name(e.port_node) for e in monitor.endpoints)
               if n is not None and not any(p.name == n for p in ports)]
    if not missing:
        return ""
    unnamed = " (its port has no name)" if len(ports) == 1 and not ports[0].name else ""
    return (f" The endpoint port `{missing[0]}` names no port of it either{unnamed}: name the Service port that "
            "reaches vLLM's API port.")


def _service_endpoint(ctx, monitor: Monitor, endpoint: MonitorEndpoint, in_scope, fronting, fronts):
    kind = monitor.obj.kind
    name = _port_name(endpoint.port_node)
    if name is not None:
        if any(p.name == name for s in in_scope for p in service_ports(s)):
            return
        service = fronting[0]
        ports = service_ports(service)
        unnamed = [p for p in ports if not p.name]
        if not ports:
            detail = f"Service {service.name} declares no ports"
        elif unnamed and len(ports) == 1:
            detail = (f"the port of Service {service.name} ({unnamed[0].port}) has no name, and a {kind} finds "
                      "Service ports by name")
        else:
            detail = f"Service {service.name} names its ports {', '.join(f'`{p.name}`' if p.name else '(unnamed)' for p in ports)}"
        fix = f"name the Service port that reaches vLLM's API port `{name}`" if unnamed else \
            "scrape the Service port that reaches vLLM's API port"
        yield ctx.finding(endpoint.port_node, f"{kind} endpoint port `{name}` names no port of the Services it "
                          f"selects, so nothing is scraped: {detail}. {fix[0].upper()}{fix[1:]}.",
                          about=monitor.obj, value=name,
                          fix=ctx.build_fix(_port_name_fix, ctx, endpoint.port_node, service, fronts[id(service)]))
        return
    if endpoint.port_node is not None:
        return
    target = _port_name(endpoint.target_port_node)
    if target is None:
        return
    pods = [t for s in in_scope for t in fronts.get(id(s), ())]
    if len({id(s) for s in in_scope}) != len([s for s in in_scope if id(s) in fronts]):
        return  # some selected Service fronts pods this rule does not know: they may declare the port
    if any(_declares(t, target) for t in pods):
        return
    owner = pods[0].owner
    yield ctx.finding(endpoint.target_port_node, f"{kind} endpoint targetPort `{target}` names no container port "
                      f"of the vLLM pods behind the Services it selects ({owner.describe()} "
                      f"{_declared(pods[0])}), so nothing is scraped: name vLLM's API port in the pod and use that "
                      "name.", about=monitor.obj, value=target)


# --- Pods (PodMonitor, VMPodScrape, PodMonitoring) -----------------------------------------------------
def _declares(template: PodTemplate, name: str) -> bool:
    added = added_port_names(template.owner.kind)
    if "*" in added or name in added:
        return True
    return any(port.name == name for container in template.containers for port in container.container_ports)


def _declares_number(template: PodTemplate, number: int) -> bool:
    if "*" in added_port_names(template.owner.kind):
        return True
    return any(port.number == number for container in template.containers for port in container.container_ports)


def _declared(template: PodTemplate) -> str:
    names = [f"`{p.name}` ({p.number})" if p.name else f"{p.number} (unnamed)"
             for c in template.containers for p in c.container_ports]
    return f"declares {', '.join(names)}" if names else "declares no container ports"


def _labelled_pods_in_scope(run: _Run, monitor: Monitor, selector: LabelSelector):
    """(the pod templates the selector's labels match, those of them in the monitor's namespaces)."""
    labelled = [t for t in run.world.selectable_templates(selector)
                if t.owner.kind != "ComposeService" and t.selected_by(selector)]
    return labelled, [t for t in labelled if monitor.scope.includes(t.namespace)]


def _pod_monitor(ctx, monitor: Monitor, selector: LabelSelector, run: _Run):
    kind = monitor.obj.kind
    vllm = run.vllm_set
    labelled, in_scope = run.shared("pods", monitor, selector, lambda: _labelled_pods_in_scope(run, monitor, selector))
    if not in_scope:
        if _operators_may_create(monitor, selector, POD, run.copying):
            return
        elsewhere = [t for t in labelled if t in vllm]
        if elsewhere:
            owner = elsewhere[0].owner
            yield ctx.finding(monitor.selector, f"{kind} {monitor.obj.name} selects no pod: it "
                              f"{_scope_text(monitor)}, and the vLLM pods of {owner.describe()}, which have its "
                              f"labels, are in namespace `{owner.namespace}`. "
                              + (f"Add `{owner.namespace}` to `namespaceSelector.matchNames`."
                                 if monitor.kind.namespace_selector else f"Create the {kind} in `{owner.namespace}`."),
                              about=monitor.obj, value=f"namespace:{owner.namespace}")
            return
        yield from _no_pod_labelled(ctx, monitor, selector, run)
        return
    mine = [t for t in in_scope if t in vllm]
    if not mine:
        return
    if _only_if_applied_there(monitor, [t.namespace for t in in_scope]):
        owner = mine[0].owner
        yield ctx.finding(monitor.selector, f"{kind} {monitor.obj.name} selects the vLLM pods of "
                          f"{owner.describe()} only if they are applied into {_where(monitor)}: the monitor "
                          f"{_scope_text(monitor)}, and {owner.describe()} says no namespace. Set "
                          "`namespaceSelector.matchNames` to the namespace the vLLM pods run in.",
                          about=monitor.obj, value="namespace:unset", severity=Severity.INFO)
    for endpoint in monitor.endpoints:
        yield from _pod_endpoint(ctx, monitor, endpoint, in_scope, mine)


def _no_pod_labelled(ctx, monitor: Monitor, selector: LabelSelector, run: _Run):
    """No pod template of the run has the selector's labels: report it when they are the labels of a vLLM
    workload object itself or of the Service in front of its pods (labels put on the wrong object)."""
    kind = monitor.obj.kind
    names = _named_values(selector)
    labelled = run.labelled_services(selector)  # looked up once, not per template
    for template in run.pods_named_by(selector, names, labelled):
        if not monitor.scope.includes(template.namespace) or template.owner.kind not in _PLAIN_WORKLOADS:
            continue
        owner = template.owner
        services = [s for s in labelled
                    if template in ctx.world.selected_templates(service_selector(s), s.namespace)]
        if selector.matches(owner.labels):
            what = f"{owner.describe()} itself has those labels"
        elif services:
            what = f"Service {services[0].name} in front of them has those labels"
        elif owner.name in names:
            what = f"the selector names {owner.describe()}"
        else:
            continue
        have = ", ".join(f"{k}={v}" for k, v in sorted(template.labels.items()))
        pods = f"its pods are labelled {have}" if have else "its pod template has no labels"
        yield ctx.finding(monitor.selector, f"{kind} {monitor.obj.name} selects no pod: it selects pods labelled "
                          f"{_pairs(selector)}; {what}, but {pods} (a {kind} matches the pods' own labels, "
                          "`spec.template.metadata.labels`). Select the pod template's labels.",
                          about=monitor.obj, value=f"labels:{_pairs(selector)}")
        return


def _pod_endpoint(ctx, monitor: Monitor, endpoint: MonitorEndpoint, in_scope, mine):
    kind = monitor.obj.kind
    for node, what in ((endpoint.port_node, "port"), (endpoint.target_port_node, "targetPort")):
        if node is None:
            continue
        name = _port_name(node)
        if name is None:
            break  # a number (PodMonitoring scrapes it declared or not) or a pattern: nothing to prove
        if any(_declares(t, name) for t in in_scope):
            return
        template = mine[0]
        yield ctx.finding(node, f"{kind} endpoint {what} `{name}` names no container port of the pods it selects, "
                          f"so nothing is scraped: {template.owner.describe()} {_declared(template)}. Name vLLM's "
                          "API port in the container's `ports` and scrape that name.", about=monitor.obj, value=name)
        return
    if monitor.obj.kind != "PodMonitor" or endpoint.port_node is not None:
        return
    number = endpoint.port_number
    number_node = endpoint.port_number_node
    if number is None:
        target = endpoint.target_port
        number, number_node = (target, endpoint.target_port_node) if isinstance(target, int) else (None, None)
    if number is None or number_node is None or any(_declares_number(t, number) for t in in_scope):
        return
    template = mine[0]
    yield ctx.finding(number_node, f"{kind} endpoint port {number} is not a declared container port of the pods it "
                      f"selects, and a PodMonitor keeps only declared ports, so nothing is scraped: "
                      f"{template.owner.describe()} {_declared(template)}. Declare the port in the container's "
                      "`ports`.", about=monitor.obj, value=str(number))


# --- fix: scrape the Service port that reaches the API port ------------------------------------------------
def _port_name_fix(ctx, node, service, templates):
    """Rename the endpoint `port` to the Service port that already reaches vLLM's API port, when every vLLM
    server behind the Service listens on one known port. Unsafe: the name may be what another Service of
    the selection was meant to provide, and without such a port there is no fix (a person adds one)."""
    from vllmlint.fix.edits import UNSAFE, make_fix, replace_scalar

    invocations = ctx.world.vllm_templates()
    api = {inv.api_port for t in templates for inv in invocations.get(t, ())}
    if len(api) != 1 or None in api or not isinstance(node, Scalar):
        return None
    (port,) = api
    names = [p.name for p in service_ports(service)
             if p.name and all(resolve_container_port(t, p.target) == port for t in templates)]
    if not names:
        return None
    edit = replace_scalar(node, names[0])
    return make_fix([edit] if edit else None, UNSAFE,
                    f"scrape Service port `{names[0]}`, which reaches vLLM's API port {port}")
