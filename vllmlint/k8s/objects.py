"""Kubernetes (and Compose) objects, their pod templates and containers, read from the YAML model.

One run is one world: `World` indexes every object of every file so references (an HPA's target, a
Service's selector, a ServiceMonitor's Service, a mounted ConfigMap) resolve across files.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from vllmlint.source.yamlmodel import Document, Mapping, Node, Scalar, Sequence, SourceFile, scalar_str, to_python

if TYPE_CHECKING:
    from vllmlint.vllm.invocation import ShellCommand


class _Labelled:
    """Labels and annotations of whatever has `metadata` (an object, a pod template)."""

    @property
    def labels(self) -> dict[str, str]:
        if self._labels is None:  # read once: selectors ask again and again
            self._labels = string_map(self.metadata.get("labels") if self.metadata else None)
        return self._labels

    @property
    def annotations(self) -> dict[str, str]:
        return string_map(self.metadata.get("annotations") if self.metadata else None)


@dataclass(eq=False)
class K8sObject(_Labelled):
    kind: str
    api_version: str
    name: str
    namespace: str  # "" when the manifest does not say: matches any namespace
    node: Mapping
    source: SourceFile
    _labels: dict | None = field(default=None, repr=False)

    @property
    def metadata(self) -> Mapping | None:
        meta = self.node.get("metadata")
        return meta if isinstance(meta, Mapping) else None

    @property
    def spec(self) -> Mapping | None:
        spec = self.node.get("spec")
        return spec if isinstance(spec, Mapping) else None

    def describe(self) -> str:
        return f"{self.kind}/{self.name}" if self.name else self.kind


@dataclass(eq=False)
class PodTemplate(_Labelled):
    owner: K8sObject
    spec: Mapping  # the PodSpec (or a Compose service)
    metadata: Mapping | None
    role: str = ""  # "leader", "worker", "head", a Ray group name, a Compose service name...
    _containers: list | None = field(default=None, repr=False)
    _labels: dict | None = field(default=None, repr=False)

    @property
    def namespace(self) -> str:
        return self.owner.namespace

    def implicit_label(self, key: str, value: str) -> bool:
        """Labels controllers add to the pods they create, which Services and monitors may select on."""
        kind, name = self.owner.kind, self.owner.name
        if kind == "StatefulSet":
            if key == "statefulset.kubernetes.io/pod-name":
                return re.fullmatch(re.escape(name) + r"-\d+", value) is not None
            if key == "apps.kubernetes.io/pod-index":
                return value.isdigit()
        if kind in ("Deployment", "ReplicaSet") and key == "pod-template-hash":
            return True
        if kind in ("StatefulSet", "DaemonSet") and key == "controller-revision-hash":
            return True
        if kind in ("Job", "CronJob") and key in ("job-name", "batch.kubernetes.io/job-name"):
            return kind == "CronJob" or value == name
        if kind == "LeaderWorkerSet":
            if key == "leaderworkerset.sigs.k8s.io/name":
                return value == name
            if key == "leaderworkerset.sigs.k8s.io/worker-index":
                return (value == "0") == (self.role == "leader") and value.isdigit()
            if key == "leaderworkerset.sigs.k8s.io/group-index":
                return value.isdigit()
        if kind == "InferenceService" and key == "serving.kserve.io/inferenceservice":
            return value == name
        if kind in ("RayCluster", "RayService", "RayJob"):
            if key == "ray.io/node-type":
                return value == ("head" if self.role == "head" else "worker")
            if key == "ray.io/cluster":
                return True
            if key == "ray.io/group":
                return value == ("headgroup" if self.role == "head" else self.role)
        return False

    def selected_by(self, selector) -> bool:
        return selector_matches(selector, self.labels, self.implicit_label)

    @property
    def containers(self) -> list["Container"]:
        if self._containers is None:
            self._containers = list(_read_containers(self))
        return self._containers


@dataclass(eq=False)
class Container:
    pod: PodTemplate
    node: Mapping
    name: str
    init: bool = False

    @property
    def image(self) -> Scalar | None:
        image = self.node.get("image")
        return image if isinstance(image, Scalar) else None

    @property
    def command(self) -> Node | None:
        return self.node.get("entrypoint" if self.is_compose else "command")

    @property
    def args(self) -> Node | None:
        return self.node.get("command" if self.is_compose else "args")

    @property
    def is_compose(self) -> bool:
        return self.pod.owner.kind == "ComposeService"

    @property
    def env(self) -> dict[str, str | None]:
        """Literal env values by name; None where the value comes from elsewhere (valueFrom)."""
        result: dict[str, str | None] = {}
        env = self.node.get("environment" if self.is_compose else "env")
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
            for key, value in env.pairs():
                result[key] = scalar_str(value)
        return result

    def env_node(self, name: str) -> Node | None:
        env = self.node.get("env")
        if isinstance(env, Sequence):
            for item in env.items:
                if isinstance(item, Mapping) and scalar_str(item.get("name")) == name:
                    return item
        return None

    @property
    def ports(self) -> list[tuple[str, int]]:
        """(name, containerPort) pairs."""
        result = []
        ports = self.node.get("ports")
        if isinstance(ports, Sequence):
            for item in ports.items:
                if isinstance(item, Mapping):
                    number = item.get("containerPort")
                    if isinstance(number, Scalar) and isinstance(number.value, int):
                        result.append((scalar_str(item.get("name")) or "", number.value))
        return result

    def resource(self, section: str, name: str) -> Node | None:
        resources = self.node.get("resources")
        if not isinstance(resources, Mapping):
            return None
        part = resources.get(section)
        return part.get(name) if isinstance(part, Mapping) else None


def string_map(node: Node | None) -> dict[str, str]:
    if not isinstance(node, Mapping):
        return {}
    return {key: scalar_str(value) or "" for key, value in node.pairs() if isinstance(value, Scalar)}


def _read_containers(template: PodTemplate) -> Iterator[Container]:
    if template.owner.kind == "ComposeService":
        yield Container(template, template.spec, template.role)
        return
    for key, init in (("initContainers", True), ("containers", False)):
        items = template.spec.get(key)
        if isinstance(items, Sequence):
            for item in items.items:
                if isinstance(item, Mapping):
                    yield Container(template, item, scalar_str(item.get("name")) or "", init)
    # KServe predictors carry a container-like `model` block next to their pod fields.
    model = template.spec.get("model")
    if template.owner.kind == "InferenceService" and isinstance(model, Mapping):
        yield Container(template, model, scalar_str(model.get("name")) or "kserve-container")


# --- where pod templates live, per kind ----------------------------------------------------------
def _path(node: Node | None, *keys: str) -> Node | None:
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _template_at(owner: K8sObject, node: Node | None, role: str = "") -> PodTemplate | None:
    """A PodTemplateSpec (metadata + spec) at `node`."""
    if not isinstance(node, Mapping):
        return None
    spec = node.get("spec")
    if not isinstance(spec, Mapping):
        return None
    meta = node.get("metadata")
    return PodTemplate(owner, spec, meta if isinstance(meta, Mapping) else None, role)


def _pod_spec_at(owner: K8sObject, node: Node | None, meta: Node | None = None, role: str = "") -> PodTemplate | None:
    """A bare PodSpec at `node` (KServe, ServingRuntime), labelled by `meta` if given."""
    if not isinstance(node, Mapping):
        return None
    return PodTemplate(owner, node, meta if isinstance(meta, Mapping) else None, role)


def _ray_templates(owner: K8sObject, cluster: Node | None) -> Iterator[PodTemplate]:
    head = _template_at(owner, _path(cluster, "headGroupSpec", "template"), "head")
    if head:
        yield head
    groups = _path(cluster, "workerGroupSpecs")
    if isinstance(groups, Sequence):
        for group in groups.items:
            name = scalar_str(_path(group, "groupName")) or "worker"
            template = _template_at(owner, _path(group, "template"), name)
            if template:
                yield template


def pod_templates(obj: K8sObject) -> Iterator[PodTemplate]:
    kind, spec = obj.kind, obj.spec
    if kind == "ComposeService":
        yield PodTemplate(obj, obj.node, None, obj.name)
        return
    if spec is None:
        return
    if kind == "Pod":
        yield PodTemplate(obj, spec, obj.metadata)
    elif kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"):
        template = _template_at(obj, spec.get("template"))
        if template:
            yield template
    elif kind == "CronJob":
        template = _template_at(obj, _path(spec, "jobTemplate", "spec", "template"))
        if template:
            yield template
    elif kind == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate")
        for key, role in (("leaderTemplate", "leader"), ("workerTemplate", "worker")):
            template = _template_at(obj, _path(lwt, key), role)
            if template:
                yield template
    elif kind == "InferenceService":
        for component in ("predictor", "transformer", "explainer"):
            part = spec.get(component)
            if isinstance(part, Mapping):
                yield _pod_spec_at(obj, part, None, component)
                worker = part.get("workerSpec")
                if isinstance(worker, Mapping):
                    yield _pod_spec_at(obj, worker, None, f"{component}-worker")
    elif kind in ("ServingRuntime", "ClusterServingRuntime"):
        yield _pod_spec_at(obj, spec, None, "runtime")
        worker = spec.get("workerSpec")
        if isinstance(worker, Mapping):
            yield _pod_spec_at(obj, worker, None, "worker")
    elif kind == "LLMInferenceService":
        for keys, role in ((("template",), "main"), (("worker",), "worker"),
                           (("prefill", "template"), "prefill"), (("prefill", "worker"), "prefill-worker")):
            template = _pod_spec_at(obj, _path(spec, *keys), None, role)
            if template:
                yield template
    elif kind == "RayCluster":
        yield from _ray_templates(obj, spec)
    elif kind == "RayService":
        yield from _ray_templates(obj, spec.get("rayClusterConfig"))
    elif kind == "RayJob":
        yield from _ray_templates(obj, spec.get("rayClusterSpec"))
        submitter = _template_at(obj, spec.get("submitterPodTemplate"), "submitter")
        if submitter:
            yield submitter


# --- selectors -------------------------------------------------------------------------------------
def selector_matches(selector: Node | dict | None, labels: dict[str, str], implicit=None) -> bool:
    """A LabelSelector (matchLabels + matchExpressions) or a plain map selector. Empty selects nothing.
    `implicit(key, value)` answers for labels a controller adds that the manifest does not show."""
    data = to_python(selector) if isinstance(selector, Node) else selector
    if not isinstance(data, dict) or not data:
        return False
    if "matchLabels" in data or "matchExpressions" in data:
        match_labels = data.get("matchLabels") or {}
        expressions = data.get("matchExpressions")
        if expressions is not None and not isinstance(expressions, list) or \
                match_labels is not None and not isinstance(match_labels, dict):
            return False  # a malformed selector selects nothing (the API server would reject it)
        expressions = expressions or []
    else:
        match_labels, expressions = data, []
    if not match_labels and not expressions:
        return False
    for key, value in (match_labels.items() if isinstance(match_labels, dict) else []):
        wanted = _label_value(value)
        if labels.get(str(key)) != wanted and not (str(key) not in labels and implicit and implicit(str(key), wanted)):
            return False
    for expr in expressions if isinstance(expressions, list) else []:
        if not isinstance(expr, dict):
            return False
        key = str(expr.get("key"))
        operator = str(expr.get("operator"))
        values = [_label_value(v) for v in as_list(expr.get("values"))]
        if operator == "In" and labels.get(key) not in values and not (
                key not in labels and implicit and any(implicit(key, v) for v in values)):
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def as_list(value) -> list:
    """A field that should be a YAML list: the list, or empty when a manifest has something else there
    (rules must survive a malformed-but-parseable manifest)."""
    return value if isinstance(value, list) else []


def _label_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


_CONTROLLER_LABELS = {
    "statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index", "pod-template-hash",
    "controller-revision-hash", "job-name", "batch.kubernetes.io/job-name", "leaderworkerset.sigs.k8s.io/name",
    "leaderworkerset.sigs.k8s.io/worker-index", "leaderworkerset.sigs.k8s.io/group-index",
    "serving.kserve.io/inferenceservice", "ray.io/node-type", "ray.io/cluster", "ray.io/group",
}


def _first_label_pair(selector) -> tuple[str, str] | None:
    """One (key, value) every match must carry, to narrow a search through an index. Labels that
    controllers add are not written in manifests, so they cannot narrow anything."""
    if not isinstance(selector, dict):
        return None
    plain = selector.get("matchLabels") if "matchLabels" in selector or "matchExpressions" in selector else selector
    if isinstance(plain, dict):
        for key, value in plain.items():
            if str(key) not in _CONTROLLER_LABELS:
                return str(key), _label_value(value)
    return None


def namespaces_compatible(a: str, b: str) -> bool:
    return not a or not b or a == b


# --- the world -------------------------------------------------------------------------------------
@dataclass
class World:
    sources: list[SourceFile] = field(default_factory=list)
    objects: list[K8sObject] = field(default_factory=list)
    templates: list[PodTemplate] = field(default_factory=list)
    invocations: list = field(default_factory=list)  # vllmlint.invocation.Invocation
    # Every command the run can see being executed, as positioned words (`ShellCommand`): containers'
    # exec-form `command` lists, the commands of their `sh -c` scripts and mounted ConfigMap scripts,
    # Compose command strings, ConfigMap scripts, `*.sh` files and Markdown shell blocks. Filled by
    # `vllm.invocation` when the engine builds the world; rules read it instead of searching file text.
    shell_commands: list[ShellCommand] = field(default_factory=list)
    default_release: str | None = None  # --vllm-version / --upgrade-to: the release where nothing says

    _by_kind: dict = field(default_factory=dict, repr=False)
    _by_name: dict = field(default_factory=dict, repr=False)
    _template_index: tuple | None = field(default=None, repr=False)
    _object_labels: dict = field(default_factory=dict, repr=False)

    def add_document(self, document: Document) -> None:
        for obj in objects_in(document):
            self.objects.append(obj)
            self._by_kind.setdefault(obj.kind, []).append(obj)
            self._by_name.setdefault((obj.kind, obj.name), []).append(obj)
            self.templates.extend(t for t in pod_templates(obj) if t is not None)

    def of_kind(self, *kinds: str) -> list[K8sObject]:
        if len(kinds) == 1:
            return list(self._by_kind.get(kinds[0], ()))
        return [o for o in self.objects if o.kind in kinds]

    def find(self, kind: str, name: str, namespace: str = "") -> K8sObject | None:
        for obj in self._by_name.get((kind, name), ()):
            if namespaces_compatible(obj.namespace, namespace):
                return obj
        return None

    @property
    def containers(self) -> list[Container]:
        return [c for t in self.templates for c in t.containers]

    def templates_of(self, obj: K8sObject) -> list[PodTemplate]:
        return list(self._index()[0].get(id(obj), ()))

    def selected_templates(self, selector: Node | dict | None, namespace: str) -> list[PodTemplate]:
        data = to_python(selector) if isinstance(selector, Node) else selector
        candidates = self.templates
        pair = _first_label_pair(data)
        if pair is not None:
            candidates = self._index()[1].get(pair, [])
        return [t for t in candidates
                if t.owner.kind != "ComposeService" and namespaces_compatible(t.namespace, namespace)
                and t.selected_by(data)]

    def selected_objects(self, kind: str, selector: Node | dict | None) -> list[K8sObject]:
        """Objects of `kind` whose labels a selector matches (namespaces are the caller's business)."""
        data = to_python(selector) if isinstance(selector, Node) else selector
        candidates = self._by_kind.get(kind, [])
        pair = _first_label_pair(data)
        if pair is not None:
            index = self._object_labels.get(kind)
            if index is None:
                index = self._object_labels[kind] = {}
                for obj in candidates:
                    for item in obj.labels.items():
                        index.setdefault(item, []).append(obj)
            candidates = index.get(pair, [])
        return [o for o in candidates if selector_matches(data, o.labels)]

    def _index(self):
        """(templates by owner, templates by label pair), built once the world is complete."""
        if self._template_index is None or self._template_index[2] != len(self.templates):
            by_owner: dict = {}
            by_label: dict = {}
            for template in self.templates:
                by_owner.setdefault(id(template.owner), []).append(template)
                for pair in template.labels.items():
                    by_label.setdefault(pair, []).append(template)
            self._template_index = (by_owner, by_label, len(self.templates))
        return self._template_index

    def vllm_templates(self) -> dict:
        """Pod templates that run vLLM -> their invocations, in order."""
        result: dict = {}
        for invocation in self.invocations:
            if invocation.container is not None:
                result.setdefault(invocation.container.pod, []).append(invocation)
        return result


def objects_in(document: Document) -> Iterator[K8sObject]:
    """Kubernetes objects of a document (a `kind: List` yields its items), or Compose services."""
    root = document.root
    if not isinstance(root, Mapping):
        return
    kind = scalar_str(root.get("kind"))
    if kind is None:
        services = root.get("services")
        if isinstance(services, Mapping) and "apiVersion" not in root:
            for name, service in services.pairs():
                if isinstance(service, Mapping):
                    yield K8sObject("ComposeService", "compose", name, "", service, document.source)
        return
    if kind.endswith("List") and isinstance(root.get("items"), Sequence):
        for item in root.get("items").items:
            if isinstance(item, Mapping):
                obj = _object(item, document.source)
                if obj:
                    yield obj
        return
    obj = _object(root, document.source)
    if obj:
        yield obj


def _object(node: Mapping, source: SourceFile) -> K8sObject | None:
    kind = scalar_str(node.get("kind"))
    api_version = scalar_str(node.get("apiVersion"))
    if not kind or api_version is None:
        return None
    meta = node.get("metadata")
    name = namespace = ""
    if isinstance(meta, Mapping):
        name = scalar_str(meta.get("name")) or scalar_str(meta.get("generateName")) or ""
        namespace = scalar_str(meta.get("namespace")) or ""
    return K8sObject(kind, api_version, name, namespace, node, source)


# --- Services and ports ----------------------------------------------------------------------------
@dataclass
class ServicePort:
    name: str
    port: int | None
    target: int | str | None  # a number, a container port name, or None (= port)
    node: Mapping  # the port entry

    @property
    def target_node(self) -> Node:
        return self.node.get("targetPort") or self.node.get("port") or self.node


def service_ports(service: K8sObject) -> list[ServicePort]:
    ports = service.spec.get("ports") if service.spec else None
    result = []
    if isinstance(ports, Sequence):
        for item in ports.items:
            if not isinstance(item, Mapping):
                continue
            port = item.get("port")
            target = item.get("targetPort")
            number = port.value if isinstance(port, Scalar) and isinstance(port.value, int) else None
            if isinstance(target, Scalar) and target.value is not None:
                target_value = target.value if isinstance(target.value, int) else scalar_str(target)
            else:
                target_value = number
            result.append(ServicePort(scalar_str(item.get("name")) or "", number, target_value, item))
    return result


def resolve_container_port(template: PodTemplate, target: int | str | None) -> int | None:
    """A Service targetPort (number or container port name) as a number on this pod template."""
    if isinstance(target, int):
        return target
    if isinstance(target, str):
        if target.isdigit():
            return int(target)
        for container in template.containers:
            for name, number in container.ports:
                if name == target:
                    return number
    return None


def service_selector(service: K8sObject) -> Node | None:
    return service.spec.get("selector") if service.spec else None
