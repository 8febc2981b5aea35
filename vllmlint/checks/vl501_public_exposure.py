"""VL501 public-exposure: vLLM's HTTP server reachable from outside the cluster with nothing that
authenticates in front of it, or with `--api-key` while the path forwards more than the paths the key guards.

Four ways in:
1. A Service of type LoadBalancer or NodePort that selects vLLM pods (the original check). An internal load
   balancer (annotations in `data/exposure.yaml`, the AWS Load Balancer Controller's NLB default) or
   `loadBalancerSourceRanges`: info.
2. A route (vllmlint/k8s/routes.py: Ingress, OpenShift Route, HTTPRoute/GRPCRoute, VirtualService) whose backend
   Service reaches vLLM's API port. Silent when something of the run authenticates (an auth annotation on the
   route, a Traefik Middleware or Kong plugin it references, an Envoy Gateway SecurityPolicy targeting it or
   its Gateway, an Istio RequestAuthentication/AuthorizationPolicy/ext-authz EnvoyFilter selecting the pods),
   when the backend port is not vLLM's (an auth proxy sidecar), or when the route reaches vLLM through an API
   gateway (its backend is the gateway, not vLLM). Without `--api-key`: reported; with it, only the paths the
   key does not guard (`auth` of `data/server-endpoints.yaml`, per release). Warning when the front is
   evidently public (an Ingress without an internal class or annotation, an OpenShift Route, a Gateway of the
   run whose class is not internal); info when it is internal or its Gateway is not in the run.
3. `hostNetwork: true` or a `hostPort` on vLLM's API port, without `--api-key`: info (node addresses are
   usually private and RDMA setups use hostNetwork on purpose).
4. A Compose service publishing vLLM's API port on every interface, without `--api-key`: info.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from vllmlint.finding import Severity
from vllmlint.k8s.objects import K8sObject, PodTemplate, World, namespaces_compatible, string_map
from vllmlint.k8s.routes import (ANY, EXACT, PREFIX, REGEX, Backend, Route, RoutePath, compose_published_ports,
                                 exposure_facts, inference_pool_port, istio_host_service, routes)
from vllmlint.k8s.services import ServicePort, resolve_port, service_ports, service_selector
from vllmlint.k8s.selectors import label_selector
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, scalar_str
from vllmlint.vllm.endpoints import api_key_set, guarded, guarded_prefixes, post_only, served
from vllmlint.vllm.images import parse_image
from vllmlint.vllm.invocation import OPENAI_API_SERVER, SERVE, Token
from vllmlint.checks import Context

if TYPE_CHECKING:
    from vllmlint.source.nginx import Directive

# Paths a route may forward alone without exposing more than a health check (for exact matches).
_HEALTH = {"/health", "/ping", "/version", "/v1/models"}
# What a route forwarding every path exposes besides the API, named in messages when the release serves it.
_BEYOND_API = ("/metrics", "/invocations", "/pooling")
_ISTIO_ROOT = "istio-system"  # the default mesh root namespace: a policy there without selector is mesh-wide


def _prefixes_text(release: str | None) -> str:
    prefixes, releases = guarded_prefixes(release)
    quoted = [f"`{p}`" for p in prefixes]
    names = ", ".join(quoted[:-1]) + " and " + quoted[-1] if len(quoted) > 1 else "".join(quoted)
    where = f"vLLM {release}" if release and guarded("/v1", release) is True and releases else f"vLLM {releases}"
    return f"{names} ({where})" if names else "the API paths"


def _lower(value: str | None) -> str:
    return (value or "").strip().lower()


# --- 1. Services -------------------------------------------------------------------------------------------
def _service_restricted(service: K8sObject, facts: dict) -> str | None:
    """Why an exposed Service is not open to the internet, if it says so."""
    return _restricted(service.annotations, service.spec, facts)


def _restricted(annotations: dict[str, str], spec: Mapping | None, facts: dict) -> str | None:
    for entry in facts.get("internal_service_annotations") or []:
        value = annotations.get(entry["key"])
        if value is not None and _lower(value) in {_lower(str(v)) for v in entry["values"]}:
            return f"annotated internal (`{entry['key']}`)"
    lb_class = scalar_str(spec.get("loadBalancerClass")) if spec else None
    for entry in facts.get("default_internal_services") or []:
        if entry.get("applies_to") != "Service":
            continue
        managed = lb_class in (entry.get("load_balancer_classes") or ()) or (
            entry.get("type_annotation") and _lower(annotations.get(entry["type_annotation"]))
            in {_lower(v) for v in entry.get("type_values") or ()})
        if managed and _lower(annotations.get(entry["public_annotation"])) not in {_lower(v) for v in
                                                                                  entry["public_values"]}:
            return (f"internal by default ({entry['controller']}, without `{entry['public_annotation']}: "
                    f"{entry['public_values'][0]}`)")
    ranges = spec.get("loadBalancerSourceRanges") if spec else None
    if isinstance(ranges, Sequence) and ranges.items:
        return "limited by `loadBalancerSourceRanges`"
    return None


def _distributed_ports(service: K8sObject, templates: list[PodTemplate], facts: dict) -> list[tuple[ServicePort, str]]:
    """The Service's ports that reach one of vLLM's distributed ports (torch.distributed, Ray...), with what
    each one is: `29500 (torch.distributed)`."""
    known = {int(p["port"]): str(p["what"]) for p in facts.get("distributed_ports") or []}
    found: list[tuple[ServicePort, str]] = []
    for port in service_ports(service):
        for template in templates:
            number, _ = resolve_port(template, port.target)
            if number in known:
                found.append((port, f"{number} ({known[number]})"))
                break
    return found


def _services(ctx: Context, vllm_templates: dict) -> Iterator:
    # Services that select the same pods (N LoadBalancers sharing labels with N workloads) share what is worked
    # out from those pods: one pass over them per distinct selection and ports, not one per Service.
    by_selection: dict[tuple[int, ...], tuple[list, str | None]] = {}
    distributed_by: dict[tuple, list[tuple[int, str]]] = {}
    for service in ctx.world.of_kind("Service"):
        spec = service.spec
        if not isinstance(spec, Mapping):
            continue
        kind = scalar_str(spec.get("type"))
        if kind not in ("LoadBalancer", "NodePort"):
            continue
        candidates = ctx.world.selected_templates(service_selector(service), service.namespace)
        ids = tuple(map(id, candidates))
        if ids not in by_selection:
            chosen = [t for t in candidates if t in vllm_templates]
            releases = {inv.release for t in chosen for inv in vllm_templates[t]}
            by_selection[ids] = (chosen, releases.pop() if len(releases) == 1 else None)
        selected, release = by_selection[ids]
        if not selected:
            continue
        facts = exposure_facts()  # read only when needed: most runs have no exposed Service
        guards = _prefixes_text(release)
        ports = service_ports(service)
        ports_key = (ids, tuple(port.target for port in ports))
        if ports_key not in distributed_by:  # by position: the same targets reach the same pods' ports
            found = _distributed_ports(service, selected, facts)
            distributed_by[ports_key] = [(next(i for i, p in enumerate(ports) if p.node is port.node), what)
                                         for port, what in found]
        distributed = [(ports[i], what) for i, what in distributed_by[ports_key]]
        reach = "every node's IP" if kind == "NodePort" else "a public load balancer"
        restricted = _service_restricted(service, facts)
        lowered = restricted is not None and kind == "LoadBalancer"
        for port, what in distributed:
            # Its own finding, at the port: a suppression of the API finding must not hide an open rendezvous.
            where = f"a LoadBalancer that is {restricted}" if lowered else f"{reach} ({kind})"
            # The port's number on the first line, what it is after it (formatters.report.split_message).
            number = what.split(" ", 1)[0]
            yield ctx.finding(port.port_node or port.node, f"Service {service.name} exposes vLLM's distributed port "
                              f"{number} on {where}: it runs no authentication at all. It is port {what}. Serve it from a "
                              "headless ClusterIP Service on an isolated network.", about=service,
                              value=f"distributed:{what.split()[0]}", severity=Severity.INFO if lowered else None)
        if distributed and len(distributed) == len(service_ports(service)):
            continue  # only distributed ports: the API is not exposed by this Service
        if lowered:
            yield ctx.finding(spec.get("type") or spec, f"Service {service.name} exposes vLLM through a restricted "
                              f"{kind}. It is {restricted}: keep an authenticated gateway in front, since `--api-key` "
                              "guards only "
                              f"{guards}.", about=service, value=kind, severity=Severity.INFO)
            continue
        yield ctx.finding(spec.get("type") or spec, f"Service {service.name} exposes vLLM on {reach} ({kind}): vLLM has no "
                          f"authentication by default and `--api-key` guards only {guards} (not `/metrics`, "
                          "`/health`, `/invocations`): use a ClusterIP Service behind an authenticated gateway or "
                          "Ingress.", about=service, value=kind)


def _ray_head_services(ctx: Context, vllm_templates: dict) -> Iterator:
    """KubeRay's head Service asked for as a LoadBalancer or NodePort (`headGroupSpec.serviceType`, or the
    `headService` template's `spec.type`) on a Ray cluster that runs vLLM: it carries the Ray dashboard (8265,
    whose job API runs any code), the GCS (6379) and the client port (10001) along with vLLM's API."""
    vllm_owners = {id(t.owner) for t in vllm_templates}
    facts: dict | None = None
    for obj in ctx.world.of_kind("RayCluster", "RayService", "RayJob"):
        if id(obj) not in vllm_owners or obj.api_version.split("/")[0] != "ray.io" or obj.spec is None:
            continue
        facts = facts or exposure_facts()
        fact = facts.get("ray_head_service") or {}
        cluster: Node | None = obj.spec
        for key in (fact.get("cluster_paths") or {}).get(obj.kind, []):
            cluster = cluster.get(key) if isinstance(cluster, Mapping) else None
        head = cluster.get("headGroupSpec") if isinstance(cluster, Mapping) else None
        if not isinstance(cluster, Mapping) or not isinstance(head, Mapping):
            continue
        type_node = head.get(fact.get("service_type_field") or "serviceType")
        annotations = dict(string_map(cluster.get(fact.get("annotations_field") or "headServiceAnnotations")))
        template = head.get("headService")
        service_spec = template.get("spec") if isinstance(template, Mapping) else None
        if isinstance(service_spec, Mapping) and scalar_str(service_spec.get("type")):
            type_node = service_spec.get("type")
            meta = template.get("metadata") if isinstance(template, Mapping) else None
            annotations.update(string_map(meta.get("annotations") if isinstance(meta, Mapping) else None))
        kind = scalar_str(type_node)
        if type_node is None or kind not in ("LoadBalancer", "NodePort"):
            continue
        restricted = _restricted(annotations, service_spec if isinstance(service_spec, Mapping) else None, facts)
        ports = ", ".join(f"{p['port']} ({p['what']})" for p in facts.get("distributed_ports") or []
                          if p["port"] != 29500)
        lowered = restricted is not None and kind == "LoadBalancer"
        reach = (f"a LoadBalancer, {restricted}" if lowered else
                 "every node's IP (NodePort)" if kind == "NodePort" else "a public load balancer")
        yield ctx.finding(type_node, f"{obj.kind} {obj.name} has KubeRay expose its head Service on {reach}: that "
                          f"Service carries Ray's ports {ports} and vLLM's API, with no authentication. Keep the "
                          "head Service ClusterIP and reach the dashboard with `kubectl port-forward`; expose only "
                          "vLLM's API through an authenticated gateway.", about=obj, value=kind,
                          severity=Severity.INFO if lowered else None)


# --- 2. routes ---------------------------------------------------------------------------------------------
def _front(route: Route, world: World, facts: dict) -> tuple[Severity, str] | None:
    """(severity, what the route is exposed through), or None when it is not exposed outside the cluster."""
    kind = route.kind
    if kind == "Ingress":
        ingress_class = route.ingress_class
        annotations = route.obj.annotations
        for entry in facts.get("internal_ingress") or []:
            if ingress_class and ingress_class in (entry.get("ingress_classes") or ()):
                return Severity.INFO, f"an internal Ingress (class `{ingress_class}`, {entry['controller']})"
            key = entry.get("annotation")
            value = annotations.get(key) if key else None
            if key is None or value is None:
                continue
            if entry.get("values") is None:
                ranges = {r.strip() for r in value.split(",") if r.strip()}
                if ranges and not ranges & {"0.0.0.0/0", "::/0"}:
                    return Severity.INFO, f"an Ingress limited to source ranges (`{key}`)"
            elif _lower(value) in {_lower(v) for v in entry["values"]}:
                return Severity.INFO, f"an internal Ingress (`{key}`)"
        for entry in facts.get("default_internal_services") or []:
            if entry.get("applies_to") == "Ingress" and ingress_class in (entry.get("ingress_classes") or ()):
                if _lower(annotations.get(entry["public_annotation"])) not in {_lower(v) for v in entry["public_values"]}:
                    return Severity.INFO, (f"an Ingress of class `{ingress_class}`, internal unless "
                                           f"`{entry['public_annotation']}: {entry['public_values'][0]}`")
                return Severity.WARNING, f"an {entry['public_values'][0]} Ingress (class `{ingress_class}`)"
        return Severity.WARNING, (f"an Ingress (class `{ingress_class}`)" if ingress_class else "an Ingress")
    if kind == "Route":
        return Severity.WARNING, "an OpenShift Route (the cluster's router)"
    gateways = [p for p in route.parents if p.kind == "Gateway"]
    if not gateways:
        return None  # HTTPRoute without parents attaches nowhere; a VirtualService for `mesh` stays inside
    internal = {c for e in facts.get("internal_gateway_classes") or [] for c in e["classes"]}
    group = "networking.istio.io" if kind == "VirtualService" else "gateway.networking.k8s.io"
    best: tuple[Severity, str] | None = None
    for parent in gateways:
        gateway = next((g for g in world.of_kind("Gateway") if g.name == parent.name
                        and g.api_version.split("/")[0] == group
                        and namespaces_compatible(g.namespace, parent.namespace)), None)
        if gateway is None:
            found: tuple[Severity, str] = (Severity.INFO, f"Gateway {parent.name}, which is not in the linted files")
        else:
            gateway_class = scalar_str(gateway.spec.get("gatewayClassName")) if gateway.spec else None
            if gateway_class in internal:
                found = (Severity.INFO, f"Gateway {parent.name} (internal class `{gateway_class}`)")
            else:
                what = f"class `{gateway_class}`" if gateway_class else "Istio ingress gateway"
                found = (Severity.WARNING, f"Gateway {parent.name} ({what})")
        if best is None or found[0] > best[0]:
            best = found
    return best


def _auth_fields(obj: K8sObject, entry: dict) -> bool:
    """Whether an object of an auth kind authenticates (has one of the entry's fields or plugin names)."""
    fields = entry.get("auth_fields")
    if fields is None:
        return True
    spec = obj.spec
    if obj.kind in ("KongPlugin", "KongClusterPlugin"):
        return scalar_str(obj.node.get("plugin")) in fields
    if obj.kind == "EnvoyFilter":
        return any(text in fields for text in _scalar_texts(spec, 0))
    return isinstance(spec, Mapping) and any(spec.get(f) is not None for f in fields)


def _scalar_texts(node: Node | None, depth: int) -> Iterator[str]:
    if depth > 40 or node is None:
        return
    if isinstance(node, Scalar):
        text = scalar_str(node)
        if text:
            yield text
    elif isinstance(node, Mapping):
        for _, value in node.pairs():
            yield from _scalar_texts(value, depth + 1)
    elif isinstance(node, Sequence):
        for item in node.items:
            yield from _scalar_texts(item, depth + 1)


def _auth_entries(facts: dict, obj: K8sObject) -> list[dict]:
    group = obj.api_version.split("/")[0]
    return [e for e in facts.get("auth_kinds") or [] if e["kind"] == obj.kind and e["api_group"] == group]


def _route_authenticated(route: Route, world: World, facts: dict) -> bool:
    annotations = route.obj.annotations
    for entry in facts.get("auth_annotations") or []:
        value = annotations.get(entry["key"])
        if value is None or not value.strip():
            continue
        if entry["values"] is None or _lower(value) in {_lower(v) for v in entry["values"]}:
            return True
    for entry in facts.get("auth_reference_annotations") or []:
        value = annotations.get(entry["key"])
        if not value or not value.strip():
            continue
        for name in (n.strip() for n in value.split(",") if n.strip()):
            bare = name.split("@", 1)[0]
            found = [o for o in world.of_kind(*entry["kinds"])
                     if o.name == bare or f"{o.namespace or route.obj.namespace}-{o.name}" == bare]
            if not found:
                return True  # a plugin or middleware the run does not hold: it may authenticate
            if any(_auth_fields(o, e) for o in found for e in _auth_entries(facts, o)):
                return True
    gateways = {p.name for p in route.parents if p.kind == "Gateway"}
    for policy in world.of_kind("SecurityPolicy"):
        entries = _auth_entries(facts, policy)
        if not entries or not namespaces_compatible(policy.namespace, route.obj.namespace) and not gateways:
            continue
        if not any(_auth_fields(policy, e) for e in entries):
            continue
        spec = policy.spec
        if spec is None:
            continue
        if spec.get("targetSelectors") is not None:
            return True  # selected by labels: not judged, so not reported
        single = spec.get("targetRef")
        refs = [single] if isinstance(single, Mapping) else []
        refs += list(_mappings(spec.get("targetRefs")))
        for ref in refs:
            ref_kind, ref_name = scalar_str(ref.get("kind")), scalar_str(ref.get("name"))
            if (ref_kind == route.kind and ref_name == route.obj.name) or (ref_kind == "Gateway" and ref_name in gateways):
                return True
    return False


def _mappings(node: Node | None) -> Iterator[Mapping]:
    if isinstance(node, Sequence):
        for item in node.items:
            if isinstance(item, Mapping):
                yield item


def _pod_authenticated(template: PodTemplate, world: World, facts: dict) -> bool:
    """An Istio policy or filter of the run that applies to the pod (its selector matches, or it has none and
    sits in the pod's namespace or the mesh root), or targets a gateway (not judged: silent)."""
    for entry in facts.get("auth_kinds") or []:
        if entry["target"] != "workload_selector":
            continue
        for obj in world.of_kind(entry["kind"]):
            if obj.api_version.split("/")[0] != entry["api_group"] or not _auth_fields(obj, entry):
                continue
            spec = obj.spec
            if spec is not None and (spec.get("targetRef") is not None or spec.get("targetRefs") is not None):
                return True
            if not (namespaces_compatible(obj.namespace, template.namespace) or obj.namespace == _ISTIO_ROOT):
                continue
            selector_node = None
            if isinstance(spec, Mapping):
                holder = spec.get("workloadSelector" if obj.kind == "EnvoyFilter" else "selector")
                if isinstance(holder, Mapping):
                    selector_node = holder.get("labels" if obj.kind == "EnvoyFilter" else "matchLabels")
            if selector_node is None or isinstance(selector_node, Mapping) and not selector_node.items:
                return True  # the whole namespace (or mesh)
            parsed = label_selector(selector_node)
            if parsed.valid and template.selected_by(parsed):
                return True
    return False


def _vllm_servers(world: World, vllm_templates: dict, path: RoutePath) -> Iterator[tuple]:
    """(backend, Service, template, invocation) for each backend of `path` that reaches a vLLM API port."""
    for backend in path.backends:
        if backend.kind == "InferencePool":
            yield from _pool_servers(world, vllm_templates, backend)
            continue
        service = world.find("Service", backend.service, backend.namespace)
        if service is None or service.spec is None:
            continue
        ports = service_ports(service)
        if backend.port is None:
            chosen = ports if len(ports) == 1 else []
        else:
            chosen = [p for p in ports if p.port == backend.port or (p.name and p.name == backend.port)]
        if not chosen:
            continue
        for template in world.selected_templates(service_selector(service), service.namespace):
            invocations = vllm_templates.get(template)
            if not invocations:
                continue
            for port in chosen:
                number, _ = resolve_port(template, port.target)
                for invocation in invocations:
                    if (invocation.kind in (SERVE, OPENAI_API_SERVER) and number is not None
                            and invocation.api_port == number and not invocation.option("--headless", "--grpc", "--uds")):
                        yield backend, service, template, invocation
                        break


def _pool_servers(world: World, vllm_templates: dict, backend) -> Iterator[tuple]:
    """An InferencePool backend: the pods its selector picks, on its target port (the endpoint picker in between
    chooses a pod; it does not authenticate)."""
    pool = world.find("InferencePool", backend.service, backend.namespace)
    port = inference_pool_port(pool) if pool is not None else None
    if pool is None or pool.spec is None or port is None:
        return
    for template in world.selected_templates(pool.spec.get("selector"), pool.namespace):
        for invocation in vllm_templates.get(template) or []:
            if (invocation.kind in (SERVE, OPENAI_API_SERVER) and invocation.api_port == port
                    and not invocation.option("--headless", "--grpc", "--uds")):
                yield backend, pool, template, invocation
                break


def _forwards_beyond_api(path: RoutePath, release: str | None) -> str | None:
    """What the path forwards that `--api-key` does not guard, or None (guarded, or not known)."""
    if path.rewritten:
        return None  # the upstream path is not the request's
    if path.match == ANY:
        shown = [f"`{p}`" for p in _BEYOND_API if served(p, release) is not False or post_only(p, release) is not False]
        listed = ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else "".join(shown)
        return "every path, including " + listed + ","
    if path.path is None or path.match not in (PREFIX, EXACT):
        return None
    if guarded(path.path, release) is not False:
        return None
    if path.match == EXACT and (path.path.rstrip("/") or "/") in _HEALTH | {"/"}:
        return None
    if path.match == EXACT and served(path.path, release) is False and post_only(path.path, release) is False:
        return None  # a path vLLM does not serve: 404
    return f"`{path.path}`" + (" and everything under it" if path.match == PREFIX else "")


def _routes(ctx: Context, vllm_templates: dict, found: list[Route]) -> Iterator:
    world = ctx.world
    facts = exposure_facts()
    for route in found:
        front = _front(route, world, facts)
        if front is None or _route_authenticated(route, world, facts):
            continue
        severity, through = front
        reported_services: set[int] = set()
        for path in route.paths:
            for backend, service, template, invocation in _vllm_servers(world, vllm_templates, path):
                if _pod_authenticated(template, world, facts):
                    continue
                key = api_key_set(invocation.container, [invocation], world)
                release = invocation.release
                label = f"{route.kind} {route.obj.name}"
                if key is False:
                    if id(service) in reported_services:
                        continue
                    reported_services.add(id(service))
                    yield ctx.finding(backend.node, f"{label} routes to vLLM with no authentication in front. "
                                      f"It routes to {service.kind} {service.name} through {through}: vLLM runs "
                                      "without `--api-key` and nothing in the "
                                      "linted files authenticates the route. Put an authenticating gateway or ingress "
                                      "auth (oauth2-proxy, a SecurityPolicy, an AuthorizationPolicy) in front and "
                                      "forward only the API paths clients need.", about=route.obj, value=route.kind,
                                      severity=Severity.INFO if severity == Severity.INFO else None)
                    continue
                beyond = _forwards_beyond_api(path, release)
                if beyond is None:
                    continue
                # The problem and the fix first; the paths, the Service and the gateway follow.
                yield ctx.finding(path.node or backend.node, f"{label} forwards paths `--api-key` does not guard to "
                                  "vLLM: route only the API prefixes (for example `/v1`) or authenticate in front of "
                                  f"vLLM. It forwards {beyond} to vLLM ({service.kind} {service.name}) through "
                                  f"{through}, and `--api-key` guards only {_prefixes_text(release)}, so those paths "
                                  "answer without a key.", about=route.obj, value=route.kind,
                                  severity=Severity.INFO if severity == Severity.INFO else None)


# --- 2b. an nginx gateway of the run in front of vLLM --------------------------------------------------------
def _gateway_exposure(world: World, template: PodTemplate, facts: dict) -> tuple[Severity, str] | None:
    """How the gateway's pods are exposed: a LoadBalancer or NodePort Service that selects them."""
    best: tuple[Severity, str] | None = None
    for service in world.of_kind("Service"):
        spec = service.spec
        kind = scalar_str(spec.get("type")) if isinstance(spec, Mapping) else None
        if kind not in ("LoadBalancer", "NodePort"):
            continue
        if template not in world.selected_templates(service_selector(service), service.namespace):
            continue
        restricted = _service_restricted(service, facts) if kind == "LoadBalancer" else None
        found = ((Severity.INFO, f"Service {service.name} ({kind}, {restricted})") if restricted
                 else (Severity.WARNING, f"Service {service.name} ({kind})"))
        if best is None or found[0] > best[0]:
            best = found
    return best


def _nginx_location(directive: Directive, rewritten: bool) -> RoutePath:
    location = directive.location
    args = [a.text for a in location.args] if location is not None else []
    if not args:
        return RoutePath(None, ANY, None, [], rewritten)
    if len(args) >= 2 and args[0] == "=":
        return RoutePath(args[1], EXACT, None, [], rewritten)
    if len(args) >= 2 and args[0] in ("~", "~*", "^~"):
        return RoutePath(args[1], PREFIX if args[0] == "^~" else REGEX, None, [], rewritten)
    return RoutePath(args[0], ANY if args[0] == "/" else PREFIX, None, [], rewritten)


def _proxy_targets(url: str, upstreams: dict[str, list[str]]) -> tuple[list[tuple[str, int]], bool]:
    """(host, port) pairs a `proxy_pass` URL reaches, and whether it replaces the request's path (a URI part)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("http", "https") or "$" in url:
        return [], False
    hostport, slash, _ = rest.partition("/")
    default = 443 if scheme == "https" else 80
    servers = upstreams.get(hostport, [hostport])
    targets = []
    for server in servers:
        host, _, port = server.partition(":")
        if port and not port.isdigit():
            continue
        targets.append((host, int(port) if port else default))
    return targets, bool(slash)


def _nginx_gateways(ctx: Context, vllm_templates: dict) -> Iterator:
    world = ctx.world
    facts: dict | None = None
    for template in world.templates:
        if template in vllm_templates or template.owner.kind == "ComposeService":
            continue
        for container in template.containers:
            image = parse_image(scalar_str(container.image) or "")
            if image is None:
                continue
            facts = facts or exposure_facts()
            fact = facts.get("nginx_gateway") or {}
            if image.repository.rsplit("/", 1)[-1] not in (fact.get("images") or ()):
                continue
            exposure = _gateway_exposure(world, template, facts)
            if exposure is None:
                continue
            for mount in container.volume_mounts:
                if not (mount.holds(fact["config_dir"]) or mount.mount_path.startswith(fact["config_dir"] + "/")):
                    continue
                volume = template.volume(mount.name)
                name = volume.referenced_name if volume is not None and volume.kind == "configMap" else None
                config_map = world.find("ConfigMap", name, template.namespace) if name else None
                data = config_map.node.get("data") if config_map is not None else None
                if config_map is None or not isinstance(data, Mapping):
                    continue
                for key, value in data.pairs():
                    if not key.endswith(".conf") or mount.sub_path and key != mount.sub_path.rsplit("/", 1)[-1]:
                        continue
                    if isinstance(value, Scalar) and isinstance(value.value, str):
                        yield from _nginx_config(ctx, vllm_templates, template, config_map, value, exposure, fact)


def _nginx_config(ctx: Context, vllm_templates: dict, template: PodTemplate, config_map: K8sObject, scalar: Scalar,
                  exposure: tuple[Severity, str], fact: dict) -> Iterator:
    from vllmlint.source.nginx import directives  # only an nginx gateway's ConfigMap is read as nginx

    world = ctx.world
    found = directives(scalar.value)
    auth = {d["directive"] for d in fact.get("auth_directives") or []}
    variables = [v["variable"] for v in fact.get("credential_variables") or []]
    if any(d.name.text in auth or any(v in a.text for a in d.args for v in variables) for d in found):
        return  # the gateway authenticates or restricts (somewhere: not judged per location)
    upstream_name = (fact.get("upstream_directive") or {}).get("directive", "upstream")
    upstreams: dict[str, list[str]] = {}
    for d in found:
        parent = d.parents[-1] if d.parents else None
        if d.name.text == "server" and parent is not None and parent.name.text == upstream_name and parent.args and d.args:
            upstreams.setdefault(parent.args[0].text, []).append(d.args[0].text)
    severity, through = exposure
    proxy = (fact.get("proxy_directive") or {}).get("directive", "proxy_pass")
    reported: set[int] = set()
    for d in found:
        if d.name.text != proxy or not d.args:
            continue
        targets, replaces_path = _proxy_targets(d.args[0].text, upstreams)
        location = d.location
        rewritten = replaces_path or any(x.name.text == "rewrite" and x.location is location for x in found)
        path = _nginx_location(d, rewritten)
        for host, port in targets:
            name, namespace = istio_host_service(host, config_map.namespace)
            where = Token(d.args[0].text, scalar.source, scalar.source_index(d.args[0].start),
                          scalar.source_index(d.args[0].end), False, scalar)
            path.backends = [Backend(name, namespace, port, scalar)]
            for _, service, _, invocation in _vllm_servers(world, vllm_templates, path):
                if id(service) in reported:
                    continue
                key = api_key_set(invocation.container, [invocation], world)
                label = f"The nginx gateway {template.owner.describe()}"
                level = Severity.INFO if severity == Severity.INFO else None
                if key is False:
                    reported.add(id(service))
                    yield ctx.finding(where, f"{label} forwards to vLLM without authenticating. It "
                                      f"forwards to Service {service.name} and is exposed by {through}: vLLM runs "
                                      "without `--api-key` and "
                                      f"ConfigMap {config_map.name} has no `auth_request`, `auth_basic`, `auth_jwt`, "
                                      "client certificates or allow list. Authenticate at the gateway (for example "
                                      "`auth_request` to oauth2-proxy) and forward only the API paths clients need.",
                                      about=config_map, value="proxy_pass", severity=level)
                    continue
                beyond = _forwards_beyond_api(path, invocation.release)
                if beyond is not None:
                    reported.add(id(service))
                    yield ctx.finding(where, f"{label} forwards paths `--api-key` does not guard to vLLM: forward "
                                      "only the API prefixes or authenticate at the gateway. It forwards "
                                      f"{beyond} to vLLM (Service {service.name}), exposed by {through}, and "
                                      f"`--api-key` guards only {_prefixes_text(invocation.release)}, so those paths "
                                      "answer without a key.", about=config_map, value="proxy_pass", severity=level)


# --- 3. host network and host ports ------------------------------------------------------------------------
def _host_network(ctx: Context, vllm_templates: dict) -> Iterator:
    world = ctx.world
    for template, invocations in vllm_templates.items():
        if template.owner.kind == "ComposeService":
            continue
        host_network = template.spec.get("hostNetwork")
        on_host = isinstance(host_network, Scalar) and host_network.value is True
        if not on_host and not any(p.node.get("hostPort") is not None for c in template.containers
                                   for p in c.container_ports):
            continue  # (the common case: no need to resolve the key)
        servers = [i for i in invocations if i.kind in (SERVE, OPENAI_API_SERVER) and i.container is not None
                   and not i.option("--headless", "--grpc", "--uds")]
        open_servers = [i for i in servers if api_key_set(i.container, [i], world) is False]
        if not open_servers:
            continue
        if on_host:
            ports = sorted({i.api_port for i in open_servers if i.api_port is not None})
            where = f"port {', '.join(map(str, ports))}" if ports else "its API port"
            yield ctx.finding(host_network, f"{template.owner.describe()} runs vLLM with `hostNetwork: true` and no "
                              f"`--api-key`: its {where} listens on the node's own addresses, reachable by anything "
                              "that reaches the node. If the network is isolated (RDMA setups use hostNetwork on "
                              "purpose), set `--api-key` anyway; otherwise use the pod network behind a ClusterIP "
                              "Service.", about=template, value="hostNetwork", severity=Severity.INFO)
            continue
        for invocation in open_servers:
            container = invocation.container
            for port in container.container_ports:
                host_port = port.node.get("hostPort")
                if host_port is None or port.number != invocation.api_port or not isinstance(host_port, Scalar):
                    continue
                yield ctx.finding(host_port, f"Container {container.label} publishes vLLM's API port {port.number} as "
                                  f"`hostPort: {scalar_str(host_port)}` on its node, with no `--api-key`: anything that "
                                  "reaches the node reaches the API. Use a ClusterIP Service behind an authenticated "
                                  "gateway, or set `--api-key`.", about=container, value="hostPort",
                                  severity=Severity.INFO)


# --- 4. Compose ----------------------------------------------------------------------------------------------
def _compose(ctx: Context) -> Iterator:
    world = ctx.world
    seen: set[int] = set()
    for invocation in world.invocations:
        container = invocation.container
        if container is None or not container.is_compose or invocation.kind not in (SERVE, OPENAI_API_SERVER):
            continue
        if invocation.option("--headless", "--grpc", "--uds") or invocation.api_port is None:
            continue
        if api_key_set(container, [invocation], world) is not False:
            continue
        for published in compose_published_ports(container.node):
            if published.container_port != invocation.api_port or published.host_ip not in ("", "0.0.0.0", "::"):
                continue
            if id(published.node) in seen:
                continue
            seen.add(id(published.node))
            yield ctx.finding(published.node, f"Compose service {container.name} publishes vLLM's API port "
                              f"{published.container_port} on every interface of the host, with no `--api-key`: "
                              "anyone who reaches the host reaches the API. Publish it on 127.0.0.1 "
                              f"(`127.0.0.1:{published.container_port}:{published.container_port}`) or set "
                              "`--api-key`.", about=container, value="ports", severity=Severity.INFO)


def check(ctx: Context):
    vllm_templates = ctx.world.vllm_templates()
    yield from _services(ctx, vllm_templates)
    if not vllm_templates:
        return
    yield from _ray_head_services(ctx, vllm_templates)
    found = routes(ctx.world)
    if found:
        yield from _routes(ctx, vllm_templates, found)
    yield from _nginx_gateways(ctx, vllm_templates)
    yield from _host_network(ctx, vllm_templates)
    yield from _compose(ctx)
