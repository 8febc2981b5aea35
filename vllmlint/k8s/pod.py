"""What a pod spec and its containers say, as typed values that keep their YAML nodes (positions).

Each accessor reads one part of the API (volumes, mounts, env, probes, security contexts, resources) the
way the kubelet reads it, with the defaults the API reference documents, and never raises on a
malformed-but-parseable manifest: a field of the wrong type reads as absent.
Reference: https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/
"""
from __future__ import annotations

from vllmlint.records import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Generic, Iterator, TypeVar

from vllmlint.k8s.quantity import digits_int, int_value, parse_quantity, quantity_int
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, path_at, scalar_str

if TYPE_CHECKING:
    from vllmlint.k8s.objects import Container, K8sObject, World


def _mapping(node: Node | None) -> Mapping | None:
    return node if isinstance(node, Mapping) else None


def _sequence_mappings(node: Node | None) -> Iterator[Mapping]:
    if isinstance(node, Sequence):
        for item in node.items:
            if isinstance(item, Mapping):
                yield item


def _bool(node: Node | None) -> bool | None:
    return node.value if isinstance(node, Scalar) and isinstance(node.value, bool) else None


# --- volumes and mounts ---------------------------------------------------------------------------
VOLUME_KINDS = ("emptyDir", "hostPath", "persistentVolumeClaim", "csi", "projected", "secret", "configMap",
                "ephemeral", "nfs", "downwardAPI", "image")


@dataclass(eq=False)
class Volume:
    """One entry of `spec.volumes`: its name and the source that backs it."""

    name: str
    node: Mapping
    kind: str  # "emptyDir", "hostPath", "persistentVolumeClaim", "csi", "projected", "secret", "configMap", ... or ""
    source: Node | None  # the node of that source (`emptyDir: {}`; None for `emptyDir:` left empty)

    @property
    def name_node(self) -> Node | None:
        return self.node.get("name")

    @property
    def medium(self) -> str:
        """emptyDir `medium`: "" (the node's disk) or "Memory" (tmpfs)."""
        source = _mapping(self.source) if self.kind == "emptyDir" else None
        return (scalar_str(source.get("medium")) or "") if source else ""

    @property
    def size_limit_node(self) -> Node | None:
        source = _mapping(self.source) if self.kind == "emptyDir" else None
        return source.get("sizeLimit") if source else None

    @property
    def size_limit(self) -> int | None:
        """emptyDir `sizeLimit` in bytes (None: unbounded, or not a quantity)."""
        node = self.size_limit_node
        return quantity_int(node) if node is not None else None

    @property
    def host_path(self) -> str | None:
        source = _mapping(self.source) if self.kind == "hostPath" else None
        return scalar_str(source.get("path")) if source else None

    @property
    def claim_name(self) -> str | None:
        source = _mapping(self.source) if self.kind == "persistentVolumeClaim" else None
        return scalar_str(source.get("claimName")) if source else None

    @property
    def csi_driver(self) -> str | None:
        source = _mapping(self.source) if self.kind == "csi" else None
        return scalar_str(source.get("driver")) if source else None

    @property
    def source_read_only(self) -> bool:
        """`readOnly: true` in the volume's source (persistentVolumeClaim, csi, nfs, iscsi, ...): the kubelet
        mounts it read-only in every container (https://kubernetes.io/docs/concepts/storage/volumes/)."""
        source = _mapping(self.source)
        return source is not None and _bool(source.get("readOnly")) is True

    @property
    def referenced_name(self) -> str | None:
        """The Secret (`secretName`) or ConfigMap (`name`) a secret/configMap volume projects."""
        source = _mapping(self.source)
        if source is None:
            return None
        if self.kind == "secret":
            return scalar_str(source.get("secretName"))
        if self.kind == "configMap":
            return scalar_str(source.get("name"))
        return None

    @property
    def projected_sources(self) -> list[tuple[str, Mapping]]:
        """(kind, node) of each source of a projected volume: secret, configMap, serviceAccountToken, ..."""
        source = _mapping(self.source) if self.kind == "projected" else None
        result = []
        for item in _sequence_mappings(source.get("sources") if source else None):
            for kind, node in item.pairs():
                if isinstance(node, Mapping):
                    result.append((kind, node))
        return result


def volumes(spec: Mapping) -> list[Volume]:
    """`spec.volumes` entries that have a name (the API requires one), in order."""
    result = []
    for item in _sequence_mappings(spec.get("volumes")):
        name = scalar_str(item.get("name"))
        if name is None:
            continue
        kind, source = "", None
        for candidate in VOLUME_KINDS:
            if candidate in item:
                kind, source = candidate, item.get(candidate)
                break
        else:
            others = [k for k in item.keys() if k != "name"]
            if others:
                kind, source = others[0], item.get(others[0])
        if isinstance(source, Scalar) and source.value is None:
            source = None  # `emptyDir:` with nothing after it: the defaults
        result.append(Volume(name, item, kind, source))
    return result


@dataclass(eq=False)
class VolumeMount:
    name: str
    mount_path: str  # as written, without a trailing slash ("/" for the root)
    node: Mapping
    sub_path: str = ""
    read_only: bool = False

    @property
    def path_node(self) -> Node | None:
        return self.node.get("mountPath")

    def holds(self, path: str) -> bool:
        """Whether `path` is at or below this mount."""
        return path == self.mount_path or path.startswith(self.mount_path.rstrip("/") + "/")


def volume_mounts(container_node: Mapping) -> list[VolumeMount]:
    result = []
    for item in _sequence_mappings(container_node.get("volumeMounts")):
        path = (scalar_str(item.get("mountPath")) or "").rstrip("/") or "/"
        result.append(VolumeMount(scalar_str(item.get("name")) or "", path, item,
                                  scalar_str(item.get("subPath")) or "", _bool(item.get("readOnly")) is True))
    return result


@dataclass(eq=False)
class Backing:
    """What backs a path in a container: the mount holding it (the most specific mountPath wins) and the
    pod volume it mounts (None when no volume of that name exists); no mount: the writable layer."""

    path: str
    mount: VolumeMount | None
    volume: Volume | None

    @property
    def volume_path(self) -> str:
        """The path inside the volume: the mount's subPath plus what follows the mountPath."""
        if self.mount is None:
            return self.path
        rest = self.path[len(self.mount.mount_path):].lstrip("/")
        return "/".join(p for p in (self.mount.sub_path.strip("/"), rest) if p)


def backing(mounts: list[VolumeMount], pod_volumes: list[Volume], path: str) -> Backing:
    best: VolumeMount | None = None
    for mount in mounts:
        if mount.holds(path) and (best is None or len(mount.mount_path) > len(best.mount_path)):
            best = mount
    if best is None:
        return Backing(path, None, None)
    volume = next((v for v in pod_volumes if v.name == best.name), None)
    return Backing(path, best, volume)


# --- env ------------------------------------------------------------------------------------------
LITERAL, CONFIG_MAP, SECRET, FIELD, RESOURCE, UNKNOWN = "literal", "configmap", "secret", "field", "resource", "unknown"


@dataclass(eq=False)
class EnvVar:
    """One environment variable of a container and where its value comes from.

    origin: LITERAL (`value`, or a Compose entry), CONFIG_MAP (a key found in a ConfigMap of the run),
    SECRET (a Secret: the value is not read), FIELD (fieldRef), RESOURCE (resourceFieldRef), UNKNOWN
    (a ConfigMap not in the run, or a reference this reader does not know). `value` is known only for
    LITERAL and CONFIG_MAP. `source` is the node the value is read from (the literal, the ConfigMap's
    key) or the reference (`secretKeyRef`, `fieldRef`, the `envFrom` entry).
    """

    name: str
    value: str | None
    origin: str
    node: Node  # the env entry (or the envFrom entry it came through)
    source: Node | None = None
    ref_name: str | None = None  # the ConfigMap or Secret named
    ref_key: str | None = None  # the key in it, or the fieldPath / resource

    @property
    def value_scalar(self) -> Scalar | None:
        """The string scalar of a Kubernetes `env[].value` as written (positions, `source_index()`); None for
        every other origin (valueFrom, envFrom, a ConfigMap key, a Compose entry) and non-string values."""
        if self.origin != LITERAL or not isinstance(self.node, Mapping):
            return None
        scalar = self.node.get("value")
        return scalar if isinstance(scalar, Scalar) and isinstance(scalar.value, str) else None


def _compose_env(env: Node | None) -> Iterator[EnvVar]:
    if isinstance(env, Sequence):
        for item in env.items:
            if isinstance(item, Scalar) and isinstance(item.value, str):  # "KEY=value", "KEY" (from the shell)
                key, eq, value = item.value.partition("=")
                yield EnvVar(key, value if eq else None, LITERAL if eq else UNKNOWN, item, item)
    elif isinstance(env, Mapping):
        for name, node in env.pairs():
            yield EnvVar(name, scalar_str(node), LITERAL, node, node)


def literal_env(container_node: Mapping, compose: bool) -> dict[str, str | None]:
    """Literal values by name (later entries win); None where the value comes from elsewhere (valueFrom,
    a bare Compose `KEY`). Both list forms (`{name, value}`, `KEY=value`) and the map form are read."""
    env = container_node.get("environment" if compose else "env")
    result: dict[str, str | None] = {}
    if isinstance(env, Sequence):
        for item in env.items:
            if isinstance(item, Mapping):
                name = scalar_str(item.get("name"))
                if name:
                    result[name] = scalar_str(item.get("value")) if "value" in item else None
            elif isinstance(item, Scalar) and isinstance(item.value, str):  # Compose "KEY=value"
                key, eq, value = item.value.partition("=")
                result[key] = value if eq else None
    elif isinstance(env, Mapping):  # Compose mapping form
        for name, node in env.pairs():
            result[name] = scalar_str(node)
    return result


def _lookup(world: World | None, kind: str, name: str | None, namespace: str) -> K8sObject | None:
    if world is None or not name:
        return None
    return world.find(kind, name, namespace)


def _config_data(config_map: K8sObject) -> Mapping | None:
    return _mapping(config_map.node.get("data"))


def resolved_env(container: Container, world: World | None) -> list[EnvVar]:
    """Every variable the container gets from `envFrom` and `env`, in the kubelet's order: `envFrom`
    sources first (a later source wins a duplicate key), then `env` entries, which win over `envFrom`
    (https://kubernetes.io/docs/tasks/inject-data-application/distribute-credentials-secure/
    "values defined by an env with a duplicate key take precedence"). Later duplicates replace earlier
    ones; the list is in the order of first appearance."""
    node = container.node
    namespace = container.pod.namespace
    found: dict[str, EnvVar] = {}
    if container.is_compose:
        return compose_env(container)
    for entry in _sequence_mappings(node.get("envFrom")):
        prefix = scalar_str(entry.get("prefix")) or ""
        for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = _mapping(entry.get(key))
            if ref is None:
                continue
            name = scalar_str(ref.get("name"))
            obj = _lookup(world, kind, name, namespace)
            if obj is None:
                continue  # its keys are unknown: nothing to name
            if kind == "ConfigMap":
                data = _config_data(obj)
                for data_key, data_value in data.pairs() if data else ():
                    found[prefix + data_key] = EnvVar(prefix + data_key, scalar_str(data_value), CONFIG_MAP, entry,
                                                      data_value, name, data_key)
            else:
                for part in ("data", "stringData"):
                    data = _mapping(obj.node.get(part))
                    for data_key in data.keys() if data else ():
                        found[prefix + data_key] = EnvVar(prefix + data_key, None, SECRET, entry, ref, name, data_key)
    for item in _sequence_mappings(node.get("env")):
        name = scalar_str(item.get("name"))
        if not name:
            continue
        found.pop(name, None)
        found[name] = _env_entry(name, item, world, namespace)
    return list(found.values())


def _env_entry(name: str, item: Mapping, world: World | None, namespace: str) -> EnvVar:
    if _unknown_scalar(item.get("value")):
        return EnvVar(name, None, UNKNOWN, item, item.get("value"))
    if "value" in item or "valueFrom" not in item:
        value = item.get("value")  # absent or null: the empty string
        return EnvVar(name, scalar_str(value) or "", LITERAL, item, value)
    value_from = _mapping(item.get("valueFrom"))
    if value_from is None:
        return EnvVar(name, None, UNKNOWN, item, item.get("valueFrom"))
    ref = _mapping(value_from.get("configMapKeyRef"))
    if ref is not None:
        ref_name, key = scalar_str(ref.get("name")), scalar_str(ref.get("key"))
        config_map = _lookup(world, "ConfigMap", ref_name, namespace)
        data = _config_data(config_map) if config_map is not None else None
        if data is not None and key is not None and key in data:
            value = data.get(key)
            return EnvVar(name, scalar_str(value), CONFIG_MAP, item, value, ref_name, key)
        return EnvVar(name, None, UNKNOWN, item, ref, ref_name, key)
    ref = _mapping(value_from.get("secretKeyRef"))
    if ref is not None:
        return EnvVar(name, None, SECRET, item, ref, scalar_str(ref.get("name")), scalar_str(ref.get("key")))
    ref = _mapping(value_from.get("fieldRef"))
    if ref is not None:
        return EnvVar(name, None, FIELD, item, ref, None, scalar_str(ref.get("fieldPath")))
    ref = _mapping(value_from.get("resourceFieldRef"))
    if ref is not None:
        return EnvVar(name, None, RESOURCE, item, ref, scalar_str(ref.get("containerName")),
                      scalar_str(ref.get("resource")))
    return EnvVar(name, None, UNKNOWN, item, value_from)


# --- container ports ------------------------------------------------------------------------------
@dataclass(eq=False)
class ContainerPort:
    name: str
    number: int
    protocol: str  # TCP (the default), UDP, SCTP
    node: Mapping

    @property
    def number_node(self) -> Node | None:
        return self.node.get("containerPort")


def container_ports(container_node: Mapping) -> list[ContainerPort]:
    result = []
    for item in _sequence_mappings(container_node.get("ports")):
        number = item.get("containerPort")
        if isinstance(number, Scalar) and isinstance(number.value, int) and not isinstance(number.value, bool):
            result.append(ContainerPort(scalar_str(item.get("name")) or "", number.value,
                                        scalar_str(item.get("protocol")) or "TCP", item))
    return result


def port_number(ports: list[ContainerPort], target: Node | int | str | None) -> tuple[int | None, Node | None]:
    """A port given as a number or a container port name (IntOrString) -> (number, node that says it)."""
    node = target if isinstance(target, Node) else None
    if isinstance(target, Scalar):
        target = target.value if isinstance(target.value, int) and not isinstance(target.value, bool) \
            else scalar_str(target)
    if isinstance(target, bool) or target is None or isinstance(target, Node):
        return None, None
    if isinstance(target, int):
        return (target if 0 < target < 65536 else None), node
    number = digits_int(target)
    if number is not None:
        return (number if 0 < number < 65536 else None), node
    for port in ports:
        if port.name == target:
            return port.number, port.number_node
    return None, None


# --- probes ---------------------------------------------------------------------------------------
# Defaults from the API reference (Probe v1): initialDelaySeconds 0, periodSeconds 10, timeoutSeconds 1,
# successThreshold 1, failureThreshold 3.
# https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#Probe
PROBE_DEFAULTS = {"initialDelaySeconds": 0, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1,
                  "failureThreshold": 3}
PROBE_KINDS = {"livenessProbe": "liveness", "readinessProbe": "readiness", "startupProbe": "startup"}
HANDLERS = ("httpGet", "tcpSocket", "grpc", "exec")

T = TypeVar("T")


@dataclass(eq=False)
class Setting(Generic[T]):
    """A value with the node that set it (None: the default applies) and, where two levels merge,
    which level set it ("pod", "container", or "" for the default)."""

    value: T
    node: Node | None = None
    level: str = ""


@dataclass(eq=False)
class Probe:
    kind: str  # liveness, readiness, startup
    node: Mapping
    handler: str  # httpGet, tcpSocket, grpc, exec, or "" when none is given
    handler_node: Mapping | None
    port: int | None  # resolved through the container's named ports
    port_node: Node | None  # the probe's `port` field
    path: str | None = None
    scheme: str = "HTTP"
    headers: list[tuple[str, str, Mapping]] = field(default_factory=list)
    command: list[str] = field(default_factory=list)  # exec
    timings: dict[str, Setting[int]] = field(default_factory=dict)

    def timing(self, name: str) -> int:
        return self.timings[name].value


def probes(container_node: Mapping, ports: list[ContainerPort]) -> list[Probe]:
    result = []
    for key, kind in PROBE_KINDS.items():
        node = _mapping(container_node.get(key))
        if node is None:
            continue
        handler, handler_node = "", None
        for name in HANDLERS:
            candidate = node.get(name)
            if isinstance(candidate, Mapping):
                handler, handler_node = name, candidate
                break
        port: int | None = None
        port_node = path = None
        scheme, headers, command = "HTTP", [], []
        if isinstance(handler_node, Mapping):
            port_node = handler_node.get("port")
            if port_node is not None:
                port, _ = port_number(ports, port_node)
            if handler == "httpGet":
                path = scalar_str(handler_node.get("path"))
                scheme = scalar_str(handler_node.get("scheme")) or "HTTP"
                for header in _sequence_mappings(handler_node.get("httpHeaders")):
                    headers.append((scalar_str(header.get("name")) or "", scalar_str(header.get("value")) or "",
                                    header))
            elif handler == "exec":
                items = handler_node.get("command")
                command = [scalar_str(i) or "" for i in items.items] if isinstance(items, Sequence) else []
        timings = {}
        for name, default in PROBE_DEFAULTS.items():
            value_node = node.get(name)
            value = int_value(value_node, minimum=0, maximum=2**31 - 1)
            timings[name] = Setting(value, value_node) if value is not None else Setting(default)
        result.append(Probe(kind, node, handler, handler_node, port, port_node, path, scheme, headers, command,
                            timings))
    return result


# --- security contexts ----------------------------------------------------------------------------
# PodSecurityContext and SecurityContext share runAsUser, runAsGroup and runAsNonRoot: "If set in both
# SecurityContext and PodSecurityContext, the value specified in SecurityContext takes precedence."
# fsGroup is pod-only; privileged, allowPrivilegeEscalation, readOnlyRootFilesystem and capabilities are
# container-only. https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#security-context
SHARED_FIELDS = ("runAsUser", "runAsGroup", "runAsNonRoot", "seccompProfile", "seLinuxOptions")
POD_FIELDS = ("fsGroup", "supplementalGroups")
CONTAINER_FIELDS = ("privileged", "allowPrivilegeEscalation", "readOnlyRootFilesystem", "capabilities")


@dataclass(eq=False)
class SecurityContext:
    """The security settings a container runs with, each with the node (and level) that set it."""

    fields: dict[str, Setting[Node]] = field(default_factory=dict)

    def node(self, name: str) -> Node | None:
        setting = self.fields.get(name)
        return setting.node if setting else None

    def level(self, name: str) -> str:
        setting = self.fields.get(name)
        return setting.level if setting else ""

    def _int(self, name: str) -> int | None:
        return int_value(self.node(name), minimum=0)

    def _flag(self, name: str) -> bool | None:
        return _bool(self.node(name))

    @property
    def run_as_user(self) -> int | None:
        return self._int("runAsUser")

    @property
    def run_as_group(self) -> int | None:
        return self._int("runAsGroup")

    @property
    def fs_group(self) -> int | None:
        return self._int("fsGroup")

    @property
    def run_as_non_root(self) -> bool | None:
        return self._flag("runAsNonRoot")

    @property
    def read_only_root_filesystem(self) -> bool | None:
        return self._flag("readOnlyRootFilesystem")

    @property
    def allow_privilege_escalation(self) -> bool | None:
        return self._flag("allowPrivilegeEscalation")

    @property
    def privileged(self) -> bool | None:
        return self._flag("privileged")

    def capabilities(self, which: str) -> list[tuple[str, Node]]:
        """`add` or `drop` capabilities, each with its node."""
        caps = _mapping(self.node("capabilities"))
        items = caps.get(which) if caps else None
        if not isinstance(items, Sequence):
            return []
        return [(scalar_str(i) or "", i) for i in items.items if isinstance(i, Scalar)]


def security_context(pod_spec: Mapping, container_node: Mapping | None) -> SecurityContext:
    pod = _mapping(pod_spec.get("securityContext"))
    own = _mapping(container_node.get("securityContext")) if container_node is not None else None
    result = SecurityContext()
    for name in SHARED_FIELDS + POD_FIELDS:
        node = pod.get(name) if pod else None
        if node is not None and not (isinstance(node, Scalar) and node.value is None):
            result.fields[name] = Setting(node, node, "pod")
    for name in SHARED_FIELDS + CONTAINER_FIELDS:
        node = own.get(name) if own else None
        if node is not None and not (isinstance(node, Scalar) and node.value is None):
            result.fields[name] = Setting(node, node, "container")
    return result


# --- resources ------------------------------------------------------------------------------------
@dataclass(eq=False)
class ResourceValue:
    name: str  # cpu, memory, nvidia.com/gpu, ephemeral-storage, ...
    node: Node
    value: Decimal | None  # parsed once; None when not a quantity


@dataclass(eq=False)
class Resources:
    requests: dict[str, ResourceValue] = field(default_factory=dict)
    limits: dict[str, ResourceValue] = field(default_factory=dict)

    def request(self, name: str) -> ResourceValue | None:
        """The effective request: the request, else the limit ("If Requests is omitted for a container,
        it defaults to Limits if that is explicitly specified", ResourceRequirements v1)."""
        return self.requests.get(name) or self.limits.get(name)


def resources(container_node: Mapping) -> Resources:
    result = Resources()
    part = _mapping(container_node.get("resources"))
    for section, target in (("requests", result.requests), ("limits", result.limits)):
        values = _mapping(part.get(section)) if part else None
        for name, node in values.pairs() if values else ():
            target[name] = ResourceValue(name, node, parse_quantity(node))
    return result


# --- the workload: replicas and update strategy -------------------------------------------------
_REPLICATED = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")


def replicas(obj: K8sObject) -> Setting[int] | None:
    """`spec.replicas` of a Deployment, StatefulSet, ReplicaSet or ReplicationController (default 1);
    None for other kinds, or a value that is not a non-negative int32 (then the API rejects it)."""
    if obj.kind not in _REPLICATED or obj.spec is None:
        return None
    node = obj.spec.get("replicas")
    if node is None or isinstance(node, Scalar) and node.value is None and node.style is None:
        return Setting(1)
    value = int_value(node, minimum=0, maximum=2**31 - 1)
    return Setting(value, node) if value is not None else None


@dataclass(eq=False)
class Strategy:
    """Deployment `strategy` or StatefulSet/DaemonSet `updateStrategy`, with the API's defaults
    (Deployment: RollingUpdate, maxSurge 25%, maxUnavailable 25%; StatefulSet: RollingUpdate,
    partition 0; DaemonSet: RollingUpdate, maxUnavailable 1, maxSurge 0)."""

    type: Setting[str]
    max_surge: Setting[int | str] | None = None  # IntOrString: 1 or "25%"
    max_unavailable: Setting[int | str] | None = None
    partition: Setting[int] | None = None  # StatefulSet


def _int_or_percent(node: Node | None, default: int | str) -> Setting[int | str]:
    if isinstance(node, Scalar) and not isinstance(node.value, bool):
        if isinstance(node.value, int) and node.value >= 0:
            return Setting(node.value, node)
        text = scalar_str(node) or ""
        if text.endswith("%") and text[:-1].isdigit():
            return Setting(text, node)
    return Setting(default)


def strategy(obj: K8sObject) -> Strategy | None:
    spec = obj.spec
    if spec is None or obj.kind not in ("Deployment", "StatefulSet", "DaemonSet"):
        return None
    key = "strategy" if obj.kind == "Deployment" else "updateStrategy"
    node = _mapping(spec.get(key))
    type_node = node.get("type") if node else None
    kind = scalar_str(type_node)
    type_setting = Setting(kind, type_node) if kind else Setting("RollingUpdate")
    rolling = _mapping(node.get("rollingUpdate")) if node else None
    if type_setting.value != "RollingUpdate":
        return Strategy(type_setting)
    get = rolling.get if rolling else (lambda _key: None)
    if obj.kind == "Deployment":
        return Strategy(type_setting, _int_or_percent(get("maxSurge"), "25%"),
                        _int_or_percent(get("maxUnavailable"), "25%"))
    if obj.kind == "DaemonSet":
        return Strategy(type_setting, _int_or_percent(get("maxSurge"), 0), _int_or_percent(get("maxUnavailable"), 1))
    partition_node = get("partition")
    partition = int_value(partition_node, minimum=0)
    return Strategy(type_setting, None, _int_or_percent(get("maxUnavailable"), 1),
                    Setting(partition, partition_node) if partition is not None else Setting(0))


__all__ = ["Volume", "VolumeMount", "Backing", "EnvVar", "ContainerPort", "Probe", "Setting", "SecurityContext",
           "Resources", "ResourceValue", "Strategy", "volumes", "volume_mounts", "backing", "resolved_env",
           "literal_env", "container_ports", "port_number", "probes", "security_context", "resources", "replicas",
           "strategy", "LITERAL", "CONFIG_MAP", "SECRET", "FIELD", "RESOURCE", "UNKNOWN", "PROBE_DEFAULTS"]


# --- envFrom references ---------------------------------------------------------------------------
@dataclass(eq=False)
class EnvFromRef:
    """One `envFrom` entry: the kind it names (ConfigMap or Secret), the name, its prefix and the entry's node."""

    kind: str
    name: str | None
    prefix: str
    optional: bool
    node: Mapping


def env_from_refs(container_node: Mapping) -> list[EnvFromRef]:
    """The `envFrom` entries of a Kubernetes container, in order (whether the object is in the run is the
    caller's question: `World.find(ref.kind, ref.name, namespace)`)."""
    result = []
    for entry in _sequence_mappings(container_node.get("envFrom")):
        prefix = scalar_str(entry.get("prefix")) or ""
        for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = _mapping(entry.get(key))
            if ref is not None:
                result.append(EnvFromRef(kind, scalar_str(ref.get("name")), prefix, _bool(ref.get("optional")) is True,
                                         entry))
    return result


def _unknown_scalar(node: Node | None) -> bool:
    """A value a tool substitutes before apply (an OpenShift Template parameter): unknown here."""
    from vllmlint.source.yamlmodel import UnknownScalar

    return isinstance(node, UnknownScalar)


# --- Compose: environment, env_file, GPUs -----------------------------------------------------------
def compose_env(container: Container) -> list[EnvVar]:
    """A Compose service's variables as Compose sets them: its `env_file` files first (in order, a later file
    wins; only files in the run are read: a file not in the run gives keys nobody can name), then
    `environment` (map or `KEY=value` list), which wins. Values are interpolated (`${VAR:-default}`, `.env`
    beside the Compose file); a value needing a variable the run does not give, or a bare `KEY` / `KEY:`
    (taken from the shell), is UNKNOWN. Env-file variables point at their `env_file` entry."""
    from vllmlint.source.compose import interpolate, project

    bound = project(container.pod.owner)
    variables = bound.variables
    found: dict[str, EnvVar] = {}
    for env_file in bound.env_files:
        for name, value in (env_file.variables or {}).items():
            found.pop(name, None)
            # `source` None: the value is not written in the Compose file (it is in the env file)
            found[name] = EnvVar(name, value, LITERAL, env_file.node, None, env_file.path)
    env = container.node.get("environment")
    # (name, entry node: the list item or the map value, value node, written value, has a value)
    entries: list[tuple[str, Node, Node, str | None, bool]] = []
    if isinstance(env, Sequence):
        for item in env.items:
            if isinstance(item, Scalar) and isinstance(item.value, str):
                key, eq, value = item.value.partition("=")
                entries.append((key, item, item, value if eq else None, bool(eq)))
    elif isinstance(env, Mapping):
        for name, node in env.pairs():
            written = None
            if isinstance(node, Scalar) and node.value is not None:
                written = node.value if isinstance(node.value, str) else scalar_str(node)
            entries.append((name, node, node, written, written is not None))
    for name, entry, node, written, has_value in entries:
        found.pop(name, None)
        if not has_value or written is None:
            found[name] = EnvVar(name, None, UNKNOWN, entry, node)
            continue
        done = interpolate(written, variables) if "$" in written else None
        if done is not None and (done.unresolved or done.invalid):
            found[name] = EnvVar(name, None, UNKNOWN, entry, node)
        else:
            found[name] = EnvVar(name, done.text if done is not None else written, LITERAL, entry, node)
    return list(found.values())


def compose_literal_env(container: Container) -> dict[str, str | None]:
    """`compose_env` as name -> value (None where unknown), for `Container.env`."""
    return {var.name: var.value for var in compose_env(container)}


def compose_gpu_request(container: Container) -> tuple[str, int, Node] | None:
    """("nvidia.com/gpu", count, node) of the GPUs a Compose service reserves, as compose-go reads them:
    `deploy.resources.reservations.devices` entries with the `gpu` capability (types/device.go: `count` a
    number or "all", `device_ids` a list: exclusive) and `gpus:` (transform/gpus.go: a string means
    `count: all`; a list of the same device requests). A count of "all", or a device request with neither
    count nor device_ids (Compose reserves every matching device), is the host's: None. Only the NVIDIA
    driver (or none named) counts."""
    node = container.node
    requests: list[Mapping] = []
    devices = _path_of(node, "deploy", "resources", "reservations", "devices")
    if isinstance(devices, Sequence):
        requests.extend(item for item in devices.items if isinstance(item, Mapping)
                        and "gpu" in _strings(item.get("capabilities")))
    gpus = node.get("gpus")
    if isinstance(gpus, Scalar) and gpus.value is not None:
        return None  # `gpus: all`
    if isinstance(gpus, Sequence):
        requests.extend(item for item in gpus.items if isinstance(item, Mapping))
    total = 0
    where: Node | None = None
    for request in requests:
        driver = scalar_str(request.get("driver"))
        if driver not in (None, "nvidia"):
            continue
        count, ids = request.get("count"), request.get("device_ids")
        if isinstance(ids, Sequence) and count is None:
            total += len(ids.items)
            where = where or ids
        elif isinstance(count, Scalar) and isinstance(count.value, int) and not isinstance(count.value, bool) \
                and count.value >= 0:
            total += count.value
            where = where or count
        elif isinstance(count, Scalar) and isinstance(count.value, str) and count.value.isdigit():
            total += int(count.value)
            where = where or count
        else:
            return None  # "all", absent, or not a count: the host decides
    if where is None:
        return None
    return "nvidia.com/gpu", total, where


_path_of = path_at  # the one walker of the YAML model


def _strings(node: Node | None) -> list[str]:
    if isinstance(node, Sequence):
        return [scalar_str(item) or "" for item in node.items if isinstance(item, Scalar)]
    return []
