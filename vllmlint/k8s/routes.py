"""Objects that route traffic from outside the cluster to a Service: Ingress, OpenShift Route, Gateway API
HTTPRoute/GRPCRoute (with their parent Gateways) and Istio VirtualService (with its Istio Gateways), read as
hosts, paths and backends; and the ports a Compose service publishes on the host.

- Ingress (networking.k8s.io/v1; extensions and networking.k8s.io v1beta1 with `serviceName`/`servicePort`):
  https://kubernetes.io/docs/reference/kubernetes-api/service-resources/ingress-v1/ . A path without
  `path` matches everything; `spec.defaultBackend` (v1beta1 `spec.backend`) takes what no rule matches.
- OpenShift Route (route.openshift.io/v1): `spec.to` (a Service, with `alternateBackends`), `spec.path`
  (a prefix, default everything), `spec.port.targetPort`:
  https://docs.openshift.com/container-platform/latest/rest_api/network_apis/route-route-openshift-io-v1.html
- HTTPRoute / GRPCRoute (gateway.networking.k8s.io): `spec.parentRefs` (default kind Gateway, namespace the
  route's), `spec.rules[].matches[].path` (default PathPrefix `/`), `backendRefs` (default kind Service):
  https://gateway-api.sigs.k8s.io/reference/spec/#httproute
- VirtualService (networking.istio.io): `spec.gateways` (absent: `mesh` only, the sidecars, no ingress),
  `spec.http[].match[].uri` (prefix/exact/regex; no match: everything), `route[].destination.host` (a Service
  short name, `name.namespace` or the cluster FQDN):
  https://istio.io/latest/docs/reference/config/networking/virtual-service/
"""
from __future__ import annotations

from vllmlint.records import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Iterator

from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, scalar_str
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.k8s.objects import K8sObject, World

ROUTE_KINDS = ("Ingress", "Route", "HTTPRoute", "GRPCRoute", "VirtualService")
_GROUPS = {
    "Ingress": ("networking.k8s.io", "extensions"),
    "Route": ("route.openshift.io",),
    "HTTPRoute": ("gateway.networking.k8s.io",),
    "GRPCRoute": ("gateway.networking.k8s.io",),
    "VirtualService": ("networking.istio.io",),
}

# Path matches
PREFIX, EXACT, REGEX, ANY = "prefix", "exact", "regex", "any"


@dataclass(eq=False)
class Backend:
    """A Service a route forwards to."""
    service: str
    namespace: str
    port: int | str | None  # the Service port (number or name); None: not given (the Service's only port)
    node: Node  # the node naming the Service
    kind: str = "Service"  # or "InferencePool" (Gateway API Inference Extension, HTTPRoute backendRefs)


@dataclass(eq=False)
class RoutePath:
    """One path (or match) of a route and where it forwards."""
    path: str | None  # None: every path
    match: str  # PREFIX, EXACT, REGEX or ANY (every path)
    node: Node | None  # the path value, when written
    backends: list[Backend]
    rewritten: bool = False  # the upstream path differs from the request's (rewrite annotation or filter)


@dataclass(eq=False)
class ParentRef:
    kind: str  # Gateway (Gateway API or Istio), "mesh"
    name: str
    namespace: str
    node: Node


@dataclass(eq=False)
class Route:
    obj: K8sObject
    paths: list[RoutePath] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    parents: list[ParentRef] = field(default_factory=list)  # Gateway API parentRefs, Istio gateways

    @property
    def kind(self) -> str:
        return self.obj.kind

    @property
    def ingress_class(self) -> str | None:
        """`spec.ingressClassName`, else the older `kubernetes.io/ingress.class` annotation (Ingress only)."""
        if self.kind != "Ingress":
            return None
        spec = self.obj.spec
        name = scalar_str(spec.get("ingressClassName")) if spec else None
        return name or self.obj.annotations.get("kubernetes.io/ingress.class")


def _mapping(node: Node | None) -> Mapping | None:
    return node if isinstance(node, Mapping) else None


def _mappings(node: Node | None) -> Iterator[Mapping]:
    if isinstance(node, Sequence):
        for item in node.items:
            if isinstance(item, Mapping):
                yield item


def _port(node: Node | None) -> int | str | None:
    if isinstance(node, Scalar) and node.value is not None and not isinstance(node.value, bool):
        return node.value if isinstance(node.value, int) else scalar_str(node)
    return None


def is_route(obj: K8sObject) -> bool:
    groups = _GROUPS.get(obj.kind)
    return groups is not None and obj.api_version.split("/")[0] in groups


def routes(world: World) -> list[Route]:
    """Every routing object of the run, read."""
    result = []
    for obj in world.of_kind(*ROUTE_KINDS):
        if not is_route(obj) or obj.spec is None:
            continue
        reader = {"Ingress": _ingress, "Route": _openshift_route, "HTTPRoute": _gateway_route,
                  "GRPCRoute": _gateway_route, "VirtualService": _virtual_service}[obj.kind]
        result.append(reader(obj, obj.spec))
    return result


# --- Ingress ---------------------------------------------------------------------------------------------
_REWRITE_ANNOTATIONS = ("nginx.ingress.kubernetes.io/rewrite-target", "nginx.org/rewrites",
                        "traefik.ingress.kubernetes.io/rewrite-target", "haproxy.org/path-rewrite")


def _ingress_backend(obj: K8sObject, node: Node | None) -> Backend | None:
    backend = _mapping(node)
    if backend is None:
        return None
    service = _mapping(backend.get("service"))
    if service is not None:  # networking.k8s.io/v1
        name_node = service.get("name")
        port = _mapping(service.get("port"))
        number = _port(port.get("number")) if port else None
        named = scalar_str(port.get("name")) if port else None
        name = scalar_str(name_node)
        if not name or name_node is None:
            return None
        return Backend(name, obj.namespace, number if number is not None else named, name_node)
    name_node = backend.get("serviceName")  # v1beta1
    name = scalar_str(name_node)
    if name and name_node is not None:
        return Backend(name, obj.namespace, _port(backend.get("servicePort")), name_node)
    return None  # a `resource` backend (not a Service)


def _ingress(obj: K8sObject, spec: Mapping) -> Route:
    route = Route(obj)
    rewritten = any(key in obj.annotations for key in _REWRITE_ANNOTATIONS)
    regex = obj.annotations.get("nginx.ingress.kubernetes.io/use-regex", "").strip().lower() == "true"
    for rule in _mappings(spec.get("rules")):
        host = scalar_str(rule.get("host"))
        if host:
            route.hosts.append(host)
        http = _mapping(rule.get("http"))
        for item in _mappings(http.get("paths") if http else None):
            backend = _ingress_backend(obj, item.get("backend"))
            path_node = item.get("path")
            path = scalar_str(path_node)
            kind = scalar_str(item.get("pathType")) or "ImplementationSpecific"
            if not path or path in ("/", "/*") and kind != "Exact" and not regex:
                match = ANY  # `/` as a prefix (and `/*`, ImplementationSpecific on GCE and ALB) takes every path
            elif regex:
                match = REGEX
            elif kind == "Exact":
                match = EXACT
            else:
                match = PREFIX  # Prefix, and ImplementationSpecific as every common controller reads it
            route.paths.append(RoutePath(path or None, match, path_node if path else None,
                                         [backend] if backend else [], rewritten))
    default = _ingress_backend(obj, spec.get("defaultBackend") or spec.get("backend"))
    if default is not None:
        route.paths.append(RoutePath(None, ANY, None, [default], rewritten))
    return route


# --- OpenShift Route -------------------------------------------------------------------------------------
def _openshift_route(obj: K8sObject, spec: Mapping) -> Route:
    route = Route(obj)
    host = scalar_str(spec.get("host"))
    if host:
        route.hosts.append(host)
    port = _mapping(spec.get("port"))
    target = _port(port.get("targetPort")) if port else None
    backends = []
    for entry in [spec.get("to"), *list(_mappings(spec.get("alternateBackends")))]:
        to = _mapping(entry)
        if to is None or (scalar_str(to.get("kind")) or "Service") != "Service":
            continue
        name = scalar_str(to.get("name"))
        if name:
            backends.append(Backend(name, obj.namespace, target, to.get("name") or to))
    path_node = spec.get("path")
    path = scalar_str(path_node)
    how = PREFIX if path and path != "/" else ANY
    route.paths.append(RoutePath(path or None, how, path_node if path else None, backends))
    return route


# The Gateway API Inference Extension's InferencePool: v1alpha2 (x-k8s.io) and v1.
# https://gateway-api-inference-extension.sigs.k8s.io/reference/spec/
_POOL_GROUPS = ("inference.networking.x-k8s.io", "inference.networking.k8s.io")


def inference_pool_port(pool: K8sObject) -> int | None:
    """The pods' port of an InferencePool: `targetPortNumber` (v1alpha2) or the first `targetPorts[].number` (v1)."""
    spec = pool.spec
    if spec is None:
        return None
    number = _port(spec.get("targetPortNumber"))
    if number is None:
        first = next(_mappings(spec.get("targetPorts")), None)
        number = _port(first.get("number")) if first is not None else None
    return number if isinstance(number, int) else None


# --- Gateway API -----------------------------------------------------------------------------------------
def _gateway_route(obj: K8sObject, spec: Mapping) -> Route:
    route = Route(obj)
    for host in _scalars(spec.get("hostnames")):
        route.hosts.append(host)
    for ref in _mappings(spec.get("parentRefs")):
        name = scalar_str(ref.get("name"))
        if name:
            route.parents.append(ParentRef(scalar_str(ref.get("kind")) or "Gateway", name,
                                           scalar_str(ref.get("namespace")) or obj.namespace, ref.get("name") or ref))
    for rule in _mappings(spec.get("rules")):
        backends = []
        for ref in _mappings(rule.get("backendRefs")):
            kind, group = scalar_str(ref.get("kind")) or "Service", scalar_str(ref.get("group")) or ""
            if not (kind == "Service" and group == "" or kind == "InferencePool" and group in _POOL_GROUPS):
                continue
            name = scalar_str(ref.get("name"))
            if name:
                backends.append(Backend(name, scalar_str(ref.get("namespace")) or obj.namespace,
                                        _port(ref.get("port")), ref.get("name") or ref, kind))
        rewritten = any(scalar_str(f.get("type")) == "URLRewrite" for f in _mappings(rule.get("filters")))
        matches = list(_mappings(rule.get("matches")))
        if obj.kind == "GRPCRoute" or not matches:
            route.paths.append(RoutePath(None, ANY, None, backends, rewritten))
            continue
        for match in matches:
            path = _mapping(match.get("path"))
            if path is None:
                route.paths.append(RoutePath(None, ANY, None, backends, rewritten))
                continue
            value_node = path.get("value")
            value = scalar_str(value_node) or "/"
            kind = scalar_str(path.get("type")) or "PathPrefix"
            how = {"PathPrefix": PREFIX, "Exact": EXACT}.get(kind, REGEX)
            if how == PREFIX and value == "/":
                how = ANY
            route.paths.append(RoutePath(value, how, value_node, backends, rewritten))
    return route


def _scalars(node: Node | None) -> Iterator[str]:
    if isinstance(node, Sequence):
        for item in node.items:
            text = scalar_str(item)
            if text:
                yield text


# --- Istio VirtualService ----------------------------------------------------------------------------------
def istio_host_service(host: str, namespace: str) -> tuple[str, str]:
    """(Service name, namespace) of an Istio destination host: `name`, `name.ns`, `name.ns.svc[.cluster.local]`."""
    parts = host.split(".")
    if len(parts) >= 2 and (len(parts) == 2 or parts[2] == "svc"):
        return parts[0], parts[1]
    return parts[0], namespace


def _virtual_service(obj: K8sObject, spec: Mapping) -> Route:
    route = Route(obj)
    route.hosts.extend(_scalars(spec.get("hosts")))
    gateways = spec.get("gateways")
    if isinstance(gateways, Sequence):
        for item in gateways.items:
            text = scalar_str(item)
            if not text:
                continue
            if text == "mesh":
                route.parents.append(ParentRef("mesh", "mesh", "", item))
                continue
            namespace, _, name = text.rpartition("/")
            route.parents.append(ParentRef("Gateway", name, namespace or obj.namespace, item))
    for http in _mappings(spec.get("http")):
        backends = []
        for entry in _mappings(http.get("route")):
            destination = _mapping(entry.get("destination"))
            host_node = destination.get("host") if destination else None
            host = scalar_str(host_node)
            if not host or host_node is None or "*" in host:
                continue
            name, namespace = istio_host_service(host, obj.namespace)
            port = _mapping(destination.get("port")) if destination else None
            backends.append(Backend(name, namespace, _port(port.get("number")) if port else None, host_node))
        rewritten = _mapping(http.get("rewrite")) is not None
        matches = list(_mappings(http.get("match")))
        uris = [_mapping(m.get("uri")) for m in matches]
        if not matches or any(uri is None for uri in uris):
            route.paths.append(RoutePath(None, ANY, None, backends, rewritten))
        for uri in uris:
            if uri is None:
                continue
            for key, how in (("prefix", PREFIX), ("exact", EXACT), ("regex", REGEX)):
                value_node = uri.get(key)
                value = scalar_str(value_node)
                if value is not None:
                    how = ANY if how == PREFIX and value == "/" else how
                    route.paths.append(RoutePath(value, how, value_node, backends, rewritten))
                    break
    return route


# --- Compose published ports -------------------------------------------------------------------------------
@dataclass(eq=False)
class PublishedPort:
    """A Compose `ports` entry: the container port, the host address it is published on ("" = every
    interface) and the node. https://docs.docker.com/reference/compose-file/services/#ports"""
    container_port: int | None
    host_ip: str
    node: Node


# Compose interpolation: `${VAR:-default}` / `${VAR-default}` give their default, `${VAR}` / `$VAR` are unknown
# (`$?`, which no port or address parses as). https://docs.docker.com/reference/compose-file/interpolation/
_INTERPOLATION = lazy_compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def compose_published_ports(service: Mapping) -> list[PublishedPort]:
    """Short syntax `[HOST_IP:][HOST_PORT:]CONTAINER_PORT[/PROTOCOL]` (a bare container port is published on
    an ephemeral host port of every interface) and the long syntax (`target`, `published`, `host_ip`)."""
    result: list[PublishedPort] = []
    ports = service.get("ports")
    if not isinstance(ports, Sequence):
        return result
    for item in ports.items:
        if isinstance(item, Mapping):
            result.append(PublishedPort(_int(scalar_str(item.get("target"))), scalar_str(item.get("host_ip")) or "",
                                        item))
            continue
        text = scalar_str(item)
        if not text:
            continue
        text = _compose_interpolated(service, text)
        text = text.split("/", 1)[0]
        host_ip = ""
        if text.startswith("["):  # [::1]:8000:8000
            end = text.find("]")
            host_ip, text = text[1:end], text[end + 2:]
        else:
            parts = text.split(":")
            if len(parts) == 3:
                host_ip, text = parts[0], ":".join(parts[1:])
        container = text.rsplit(":", 1)[-1]
        if "-" in container:
            continue  # a range: not one port
        result.append(PublishedPort(_int(container), host_ip, item))
    return result


def _compose_interpolated(service: Mapping, text: str) -> str:
    """A `ports` entry after Compose's interpolation (vllmlint.source.compose: defaults, the `.env` in the run);
    a variable without a value becomes `$?`, which no port or address parses as."""
    if "$" not in text:
        return text
    from vllmlint.source.compose import interpolate, project_of_service

    done = interpolate(text, project_of_service(service).variables)
    if not done.unresolved and not done.invalid:
        return done.text
    return _INTERPOLATION.sub(lambda m: m.group(2) if m.group(2) is not None else "$?", text)


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


__all__ = ["ROUTE_KINDS", "PREFIX", "EXACT", "REGEX", "ANY", "Backend", "RoutePath", "ParentRef", "Route",
           "is_route", "routes", "istio_host_service", "PublishedPort", "compose_published_ports",
           "exposure_facts", "inference_pool_port"]


# --- the exposure facts (data/exposure.yaml, schemas/exposure.schema.json) ---------------------------------
@lru_cache(maxsize=1)
def exposure_facts() -> dict:
    """What keeps a load balancer, Ingress or Gateway internal and what authenticates a route (VL501)."""
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "exposure.yaml")
    return data if isinstance(data, dict) else {}
