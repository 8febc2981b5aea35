"""Kubernetes (and Compose) objects, their pod templates and containers, read from the YAML model.

One run is one world: `World` indexes every object of every file so references (an HPA's target, a
Service's selector, a ServiceMonitor's Service, a mounted ConfigMap) resolve across files.
"""
from __future__ import annotations

import posixpath
import re
from vllmlint.records import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator, TypeVar

from vllmlint.k8s import pod as _pod
from vllmlint.k8s.placement import Placement, placement
from vllmlint.k8s.selectors import LabelSelector, label_selector
from vllmlint.source.yamlmodel import Document, Mapping, Node, Scalar, Sequence, SourceFile, path_at, scalar_str

if TYPE_CHECKING:
    from vllmlint.vllm.invocation import Invocation, ShellCommand


class _Labelled:
    """Labels and annotations of whatever has `metadata` (an object, a pod template)."""

    _labels: dict[str, str] | None
    metadata: Mapping | None

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
    _labels: dict[str, str] | None = field(default=None, repr=False)
    _memo: dict | None = field(default=None, repr=False)  # what rules ask again and again, once sealed (`seal`)

    @property
    def metadata(self) -> Mapping | None:  # type: ignore[override]
        meta = self.node.get("metadata")
        return meta if isinstance(meta, Mapping) else None

    @property
    def spec(self) -> Mapping | None:
        spec = self.node.get("spec")
        return spec if isinstance(spec, Mapping) else None

    def describe(self) -> str:
        return f"{self.kind}/{self.name}" if self.name else self.kind

    @property
    def replicas(self) -> _pod.Setting[int] | None:
        """`spec.replicas` of a replicated workload (default 1), with its node; None for other kinds."""
        return _pod.replicas(self)

    @property
    def strategy(self) -> _pod.Strategy | None:
        """The update strategy of a Deployment, StatefulSet or DaemonSet, with the API's defaults."""
        return _pod.strategy(self)


@dataclass(eq=False)
class PodTemplate(_Labelled):
    owner: K8sObject
    spec: Mapping  # the PodSpec (or a Compose service)
    metadata: Mapping | None
    role: str = ""  # "leader", "worker", "head", a Ray group name, a Compose service name...
    _containers: list[Container] | None = field(default=None, repr=False)
    _labels: dict[str, str] | None = field(default=None, repr=False)
    _volumes: list[_pod.Volume] | None = field(default=None, repr=False)

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
        if kind in ("RayCluster", "RayService", "RayJob", "RayClusterFleet"):
            if key == "ray.io/node-type":
                return value == ("head" if self.role == "head" else "worker")
            if key == "ray.io/cluster":
                return True
            if key == "ray.io/group":
                return value == ("headgroup" if self.role == "head" else self.role)
        return False

    def selected_by(self, selector: Node | LabelSelector | None) -> bool:
        if not isinstance(selector, LabelSelector):
            selector = label_selector(selector)
        return selector.matches(self.labels, self.implicit_label)

    @property
    def containers(self) -> list[Container]:
        if self._containers is None:
            self._containers = list(_read_containers(self))
        return self._containers

    @property
    def volumes(self) -> list[_pod.Volume]:
        """`spec.volumes` (a Compose service has none in this sense)."""
        if self._volumes is None:
            self._volumes = [] if self.owner.kind == "ComposeService" else _pod.volumes(self.spec)
        return self._volumes

    def volume(self, name: str) -> _pod.Volume | None:
        return next((v for v in self.volumes if v.name == name), None)

    @property
    def placement(self) -> Placement:
        """Node selector, required node affinity and tolerations (read once per sealed world: the capacity and
        scheduling rules ask for every pod; read only)."""
        memo = self.owner._memo  # the owner's sealed memo (`seal`), one entry per template of it
        if memo is None:
            return placement(self)
        key = ("placement", id(self))
        found = memo.get(key)
        if found is None or found[0] is not self:
            found = memo[key] = (self, placement(self))
        return found[1]

    @property
    def security_context(self) -> _pod.SecurityContext:
        """The pod-level security context (pod fields only)."""
        return _pod.security_context(self.spec, None)


@dataclass(eq=False)
class Container:
    pod: PodTemplate
    node: Mapping
    name: str
    init: bool = False
    # What rules ask for again and again (env, ports, mounts, probes, resources), kept once the world is complete
    # (`seal`: nothing rewrites the nodes any more); None before.
    _memo: dict | None = field(default=None, repr=False)

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
    def label(self) -> str:
        """The container's name, or for one without a name (the API server rejects it, but files are linted
        before they are applied) its place in the pod: `containers[1]`, `initContainers[0]`."""
        if self.name:
            return self.name
        section = [c for c in self.pod.containers if c.init == self.init]
        index = next((i for i, c in enumerate(section) if c is self), 0)
        return f"{'initContainers' if self.init else 'containers'}[{index}]"

    @property
    def env(self) -> dict[str, str | None]:
        """Literal env values by name; None where the value comes from elsewhere (valueFrom)."""
        if self.is_compose:
            return _pod.compose_literal_env(self)
        return dict(self._remembered("literal env", lambda: _pod.literal_env(self.node, False)))

    def resolved_env(self, world: World | None = None) -> list[_pod.EnvVar]:
        """Every variable with where its value comes from: `env` and `envFrom`, ConfigMaps found in `world`
        (read once per sealed world: a dozen rules ask for it)."""
        memo = self._memo
        if memo is None:
            return _pod.resolved_env(self, world)
        found = memo.get("env")
        if found is None or found[0] is not world:
            found = memo["env"] = (world, _pod.resolved_env(self, world))
        return list(found[1])

    def env_node(self, name: str) -> Node | None:
        if self.is_compose:  # the `environment` entry, or the `env_file` entry the variable comes from
            return next((var.node for var in _pod.compose_env(self) if var.name == name), None)
        env = self.node.get("env")
        if isinstance(env, Sequence):
            for item in env.items:
                if isinstance(item, Mapping) and scalar_str(item.get("name")) == name:
                    return item
        return None

    @property
    def ports(self) -> list[tuple[str, int]]:
        """(name, containerPort) pairs."""
        return [(p.name, p.number) for p in self.container_ports]

    @property
    def container_ports(self) -> list[_pod.ContainerPort]:
        return list(self._remembered("ports", lambda: _pod.container_ports(self.node)))

    @property
    def volume_mounts(self) -> list[_pod.VolumeMount]:
        return [] if self.is_compose else list(self._remembered("mounts", lambda: _pod.volume_mounts(self.node)))

    def backing(self, path: str) -> _pod.Backing:
        """Which volume backs `path` in this container (the most specific mountPath wins), if any."""
        return _pod.backing(self.volume_mounts, self.pod.volumes, path)

    @property
    def probes(self) -> list[_pod.Probe]:
        return [] if self.is_compose else list(self._remembered("probes", lambda: _pod.probes(self.node,
                                                                                            self.container_ports)))

    def probe(self, kind: str) -> _pod.Probe | None:
        """The liveness, readiness or startup probe."""
        return next((p for p in self.probes if p.kind == kind), None)

    @property
    def security_context(self) -> _pod.SecurityContext:
        """The pod's and the container's security contexts merged as the kubelet does."""
        return _pod.security_context(self.pod.spec, None if self.is_compose else self.node)

    @property
    def resources(self) -> _pod.Resources:
        return self._remembered("resources", lambda: _pod.resources(self.node))

    def resource(self, section: str, name: str) -> Node | None:
        resources = self.node.get("resources")
        if not isinstance(resources, Mapping):
            return None
        part = resources.get(section)
        return part.get(name) if isinstance(part, Mapping) else None

    def _remembered(self, key: str, compute):
        """`compute()`, once per sealed world (every call before `seal`)."""
        memo = self._memo
        if memo is None:
            return compute()
        if key not in memo:
            memo[key] = compute()
        return memo[key]


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
_path = path_at  # the one walker of the YAML model


def _template_at(owner: K8sObject, node: Node | None, role: str = "") -> PodTemplate | None:
    """A PodTemplateSpec (metadata + spec) at `node`."""
    if not isinstance(node, Mapping):
        return None
    spec = node.get("spec")
    if not isinstance(spec, Mapping):
        return None
    meta = node.get("metadata")
    return PodTemplate(owner, spec, meta if isinstance(meta, Mapping) else None, role)


def _pod_spec_at(owner: K8sObject, node: Mapping, meta: Node | None = None, role: str = "") -> PodTemplate:
    """A bare PodSpec at `node` (KServe, ServingRuntime), labelled by `meta` if given."""
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
    if kind == "Workspace" and obj.api_version.split("/", 1)[0] == "kaito.sh":
        yield from kaito_workspace_templates(obj)  # its fields sit at the top level, not under `spec`
        return
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
            node = _path(spec, *keys)
            if isinstance(node, Mapping):
                yield _pod_spec_at(obj, _llmisvc_pod_spec(node), None, role)
    elif kind == "RayCluster":
        yield from _ray_templates(obj, spec)
    elif kind == "RayService":
        yield from _ray_templates(obj, spec.get("rayClusterConfig"))
    elif kind == "RayJob":
        yield from _ray_templates(obj, spec.get("rayClusterSpec"))
        submitter = _template_at(obj, spec.get("submitterPodTemplate"), "submitter")
        if submitter:
            yield submitter
    elif kind == "RayClusterFleet" and obj.api_version.split("/", 1)[0] == "orchestration.aibrix.ai":
        yield from aibrix_fleet_templates(obj)
    elif kind == "ModelServing" and obj.api_version.split("/", 1)[0] == "workload.serving.volcano.sh":
        yield from kthena_serving_templates(obj)
    else:
        yield from _more_pod_templates(obj, spec)


# --- selectors -------------------------------------------------------------------------------------
_CONTROLLER_LABELS = frozenset({
    "statefulset.kubernetes.io/pod-name", "apps.kubernetes.io/pod-index", "pod-template-hash",
    "controller-revision-hash", "job-name", "batch.kubernetes.io/job-name", "leaderworkerset.sigs.k8s.io/name",
    "leaderworkerset.sigs.k8s.io/worker-index", "leaderworkerset.sigs.k8s.io/group-index",
    "serving.kserve.io/inferenceservice", "ray.io/node-type", "ray.io/cluster", "ray.io/group",
})


def template_label_pair(selector: LabelSelector) -> tuple[str, str] | None:
    """A `(key, value)` label every pod template `selector` selects carries in its manifest (labels
    controllers add, which `PodTemplate.implicit_label` answers for, never narrow), to look candidates up in an
    index; None when there is none (any template may match)."""
    return selector.first_pair(_CONTROLLER_LABELS)


def namespaces_compatible(a: str, b: str) -> bool:
    return not a or not b or a == b


# --- the world -------------------------------------------------------------------------------------
T = TypeVar("T")


@dataclass
class World:
    sources: list[SourceFile] = field(default_factory=list)
    objects: list[K8sObject] = field(default_factory=list)
    templates: list[PodTemplate] = field(default_factory=list)
    invocations: list[Invocation] = field(default_factory=list)
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
    # Operator settings documents of the run (KubeAI's values / system.yaml), and the objects whose pods are
    # built from them once every file is read (`add_operator_templates`).
    kubeai_settings: list = field(default_factory=list, repr=False)
    # Values files of the Helm charts read natively (`source.helm_values.recognise`): (chart, Document), turned
    # into vLLM invocations by `vllm.helm_values` when the engine builds the world.
    chart_values: list = field(default_factory=list, repr=False)
    _deferred: list = field(default_factory=list, repr=False)
    kustomize_patches: set[str] = field(default_factory=set, repr=False)  # patch files (display paths) of the
    # run's Kustomizations: partial objects (vllmlint.source.kustomize)
    _memo: dict | None = field(default=None, repr=False)  # lookups rules repeat, once sealed (`seal`)
    _facts: dict = field(default_factory=dict, repr=False)  # `fact`: computed facts of the whole world

    def fact(self, compute: Callable[[World], T]) -> T:
        """`compute(self)`, computed once per world: the one memo of facts derived from every file (a rule's
        table of multi-node groups, of capacity workloads...). The function is the fact's name: two modules never
        share a key by accident, and nothing is hung off the world by attribute name. Ask once the world holds
        what the fact reads (every file read: rules run on the sealed world)."""
        facts = self._facts
        if compute not in facts:
            facts[compute] = compute(self)
        return facts[compute]

    def add_document(self, document: Document) -> None:
        _remember_operator_settings(self, document)
        for obj in objects_in(document):
            self.objects.append(obj)
            self._by_kind.setdefault(obj.kind, []).append(obj)
            self._by_name.setdefault((obj.kind, obj.name), []).append(obj)
            if _deferred_templates(obj):
                self._deferred.append(obj)
                continue
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

    def selected_templates(self, selector: Node | None, namespace: str) -> list[PodTemplate]:
        memo = self._memo  # sealed: the Services, monitors and policies of a dozen rules ask the same
        key = ("selected", id(selector), namespace)
        if memo is not None and key in memo and memo[key][0] is selector:
            return list(memo[key][1])
        parsed = label_selector(selector)
        if not parsed.valid:
            return []
        # Selectors that say the same select the same: Services sharing labels cost one search, not one each,
        # and keep one tuple of what they select between them.
        same = ("selecting", namespace, tuple((r.key, r.operator, r.values) for r in parsed.match_labels),
                tuple((r.key, r.operator, r.values) for r in parsed.match_expressions))
        shared = memo.get(same) if memo is not None else None
        if shared is None:
            candidates = self.templates
            pair = parsed.first_pair(_CONTROLLER_LABELS)
            if pair is not None:
                candidates = self._index()[1].get(pair, [])
            shared = tuple(t for t in candidates
                           if t.owner.kind != "ComposeService" and namespaces_compatible(t.namespace, namespace)
                           and t.selected_by(parsed))
            if memo is not None:
                memo[same] = shared
        if memo is not None:
            memo[key] = (selector, shared)  # the node kept: its id stays its own
        return list(shared)

    def selectable_templates(self, selector: LabelSelector) -> list[PodTemplate]:
        """The pod templates of the world `selector` may select, in run order (a superset: filter them with
        `selected_by`): those carrying its `template_label_pair`, else every template. Read only."""
        pair = template_label_pair(selector)
        return self.templates if pair is None else self._index()[1].get(pair, [])

    def selected_objects(self, kind: str, selector: Node | None) -> list[K8sObject]:
        """Objects of `kind` whose labels a selector matches (namespaces are the caller's business)."""
        parsed = label_selector(selector)
        if not parsed.valid:
            return []
        candidates = self._by_kind.get(kind, [])
        pair = parsed.first_pair(_CONTROLLER_LABELS)
        if pair is not None:
            index = self._object_labels.get(kind)
            if index is None:
                index = self._object_labels[kind] = {}
                for obj in candidates:
                    for item in obj.labels.items():
                        index.setdefault(item, []).append(obj)
            candidates = index.get(pair, [])
        return [o for o in candidates if parsed.matches(o.labels)]

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
    if kind == "Template" and isinstance(root.get("objects"), Sequence):
        yield from _openshift_template(root, document.source)
        return
    items = root.get("items")
    if kind.endswith("List") and isinstance(items, Sequence):
        for item in items.items:
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


def _remember_operator_settings(world: World, document: Document) -> None:
    root = document.root
    if not isinstance(root, Mapping):
        return
    if "kind" in root or "apiVersion" in root:
        data = root.get("data")
        if not (isinstance(data, Mapping) and "system.yaml" in data):
            return  # `operators.kubeai_settings` reads only a ConfigMap's `system.yaml` or a mapping without `kind`
    else:
        from vllmlint.source.helm_values import recognise

        chart = recognise(root)
        if chart is not None:
            world.chart_values.append((chart, document))
            return
    from vllmlint.k8s.operators import kubeai_settings

    found = kubeai_settings(document)
    if found is not None:
        world.kubeai_settings.append(found)


def _deferred_templates(obj: K8sObject) -> bool:
    """Kinds whose pod is built from settings elsewhere in the run (KubeAI's resource profiles): their
    templates are added by `World.add_operator_templates` once every file is read."""
    from vllmlint.k8s.operators import is_kubeai_model

    return is_kubeai_model(obj)


def add_operator_templates(world: World) -> None:
    """The pods operators build (KubeAI `Model`s), once the world holds every file; idempotent."""
    from vllmlint.k8s.operators import is_kubeai_model, kubeai_templates

    for obj in world._deferred:
        if is_kubeai_model(obj):
            world.templates.extend(PodTemplate(obj, spec, metadata, role)
                                   for spec, metadata, role in kubeai_templates(obj, world))
    world._deferred = []


# Kinds that hold a PodTemplateSpec at `spec.template` like a Deployment, by API group (Argo Rollouts, Knative
# Serving's Service/Configuration, OpenKruise's CloneSet and Advanced StatefulSet/DaemonSet, whose kinds above
# already match when named like the apps/v1 ones).
_TEMPLATE_KINDS = {
    "argoproj.io": ("Rollout",),  # https://argo-rollouts.readthedocs.io/en/stable/features/specification/
    "serving.knative.dev": ("Service", "Configuration"),  # https://knative.dev/docs/serving/reference/serving-api/
    "apps.kruise.io": ("CloneSet", "StatefulSet", "DaemonSet"),  # https://openkruise.io/docs/user-manuals/cloneset
}
# Kinds whose `spec.template` is not a pod the kind runs (KServe's presets are merged into other objects' pods).
_NOT_WORKLOADS = frozenset({"LLMInferenceServiceConfig", "PodTemplate"})


def _more_pod_templates(obj: K8sObject, spec: Mapping) -> Iterator[PodTemplate]:
    """JobSet, the Deployment-like kinds of other API groups, and any other kind that embeds a pod template
    (`spec.template.spec.containers`, `spec.jobTemplate.spec.template.spec.containers`): a generic workload,
    so an operator vllmlint does not know is read without code."""
    group = obj.api_version.split("/", 1)[0] if "/" in obj.api_version else ""
    if obj.kind == "JobSet" and group == "jobset.x-k8s.io":
        # https://jobset.sigs.k8s.io/docs/reference/jobset.v1alpha2/: replicatedJobs[].template is a JobTemplateSpec
        jobs = spec.get("replicatedJobs")
        for job in jobs.items if isinstance(jobs, Sequence) else ():
            template = _template_at(obj, _path(job, "template", "spec", "template"),
                                    scalar_str(_path(job, "name")) or "job")
            if template:
                yield template
        return
    if obj.kind in _TEMPLATE_KINDS.get(group, ()):
        template = _template_at(obj, spec.get("template"))
        if template:
            yield template
        return
    if obj.kind in _NOT_WORKLOADS or obj.kind == "Service" and not group:
        return
    for keys in (("template",), ("jobTemplate", "spec", "template")):
        node = _path(spec, *keys)
        if isinstance(_path(node, "spec", "containers"), Sequence):
            template = _template_at(obj, node)
            if template:
                yield template
            return


def _openshift_template(root: Mapping, source: SourceFile) -> Iterator[K8sObject]:
    """An OpenShift Template (template.openshift.io/v1, or `v1` on old clusters) and every entry of its
    `objects`, each an object of the run (https://docs.openshift.com/container-platform/4.16/openshift_images/
    using-templates.html). A scalar holding a declared `${PARAM}` or `${{PARAM}}` is unknown: `oc process` fills
    it in."""
    from vllmlint.k8s.operators import openshift_template_objects

    template = _object(root, source)
    api = template.api_version if template is not None else ""
    if template is None or not (api.startswith("template.openshift.io/") or api == "v1"):
        if template is not None:
            yield template
        return
    yield template
    for item in openshift_template_objects(root):
        obj = _object(item, source)
        if obj is not None:
            yield obj


def _llmisvc_pod_spec(node: Mapping) -> Mapping:
    """An LLMInferenceService PodSpec with what KServe's presets add to every vLLM pod (volumes, mounts)."""
    from vllmlint.k8s.operators import with_kserve_preset

    return with_kserve_preset(node)


def targets_openshift(world: World, near: K8sObject | None = None) -> bool:
    """The run targets OpenShift (its API groups, Routes, OpenShift/Open Data Hub annotations or labels): pods
    there are admitted through a SecurityContextConstraints (restricted-v2 by default) that assigns an arbitrary
    uid from the namespace's range and fills in other security settings the manifest does not show. With `near`,
    only the objects of that object's folder count: one OpenShift manifest in a repository of examples does not
    make every other folder's workload an OpenShift one."""
    folders = world.fact(_openshift_folders)
    return bool(folders) if near is None else _folder(near.source.path) in folders


def _openshift_folders(world: World) -> set[str]:
    return {_folder(obj.source.path) for obj in world.objects if _openshift_marked(obj)}


def _openshift_marked(obj: K8sObject) -> bool:
    if "openshift.io" in obj.api_version or obj.kind in ("Route", "DeploymentConfig", "ImageStream",
                                                          "SecurityContextConstraints", "BuildConfig"):
        return True
    metadata = obj.metadata
    for part in ("annotations", "labels"):
        found = metadata.get(part) if metadata is not None else None
        if isinstance(found, Mapping) and any("openshift.io" in key or "opendatahub.io" in key for key in found.keys()):
            return True
    return False


def _folder(path: str) -> str:
    return posixpath.dirname(path.replace("\\", "/"))


def aibrix_fleet_templates(obj: K8sObject) -> Iterator[PodTemplate]:
    """AIBrix `RayClusterFleet` (orchestration.aibrix.ai/v1alpha1): `spec.template` is a RayCluster template
    (`metadata` + a RayClusterSpec), the fleet a Deployment of RayClusters: its head and worker group pod
    templates (vllm-project/aibrix api/orchestration/v1alpha1/rayclusterfleet_types.go at 74df9f9: `Template
    RayClusterTemplateSpec`; samples/deepseek-r1/deepseek-r1-huggingface.yaml)."""
    yield from _ray_templates(obj, _path(obj.spec, "template", "spec"))


def kaito_workspace_templates(obj: K8sObject) -> Iterator[PodTemplate]:
    """KAITO `Workspace` (kaito.sh): `inference.template` is a PodTemplateSpec for a model KAITO has no preset for
    (kaito-project/kaito api/v1beta1/workspace_types.go line 140 at 056b828: `Template *v1.PodTemplateSpec`); a
    preset's pod is built by the controller and not in the manifest."""
    template = _template_at(obj, _path(obj.node, "inference", "template"), "inference")
    if template:
        yield template


def kthena_serving_templates(obj: K8sObject) -> Iterator[PodTemplate]:
    """Kthena `ModelServing` (workload.serving.volcano.sh/v1alpha1): `spec.template.roles[]`, each with an
    `entryTemplate` and an optional `workerTemplate` (metadata + PodSpec) (volcano-sh/kthena
    pkg/apis/workload/v1alpha1/servinggroup_types.go lines 55-95 at 3cc0572: Role.EntryTemplate, WorkerTemplate).
    Roles are named by the role (`prefill`, `decode`), workers `ROLE-worker`."""
    roles = _path(obj.spec, "template", "roles")
    if not isinstance(roles, Sequence):
        return
    for role in roles.items:
        name = scalar_str(_path(role, "name")) or "role"
        for key, suffix in (("entryTemplate", ""), ("workerTemplate", "-worker")):
            template = _template_at(obj, _path(role, key), name + suffix)
            if template:
                yield template


def kthena_group_size(template: PodTemplate) -> int | None:
    """Pods of one Kthena ModelServing role instance: its entry pod and `workerReplicas` workers (the role's
    `workerReplicas`, servinggroup_types.go line 75); None for other kinds, or when the role does not say."""
    if template.owner.kind != "ModelServing":
        return None
    roles = _path(template.owner.spec, "template", "roles")
    name = template.role[:-len("-worker")] if template.role.endswith("-worker") else template.role
    for role in roles.items if isinstance(roles, Sequence) else []:
        if scalar_str(_path(role, "name")) == name:
            workers = _path(role, "workerReplicas")
            if isinstance(workers, Scalar) and isinstance(workers.value, int) and workers.value >= 0:
                return 1 + workers.value if _path(role, "workerTemplate") is not None else 1
            return None
    return None


def seal(world: World) -> None:
    """The model is complete (every file read, Kustomize patches and Compose `extends` applied, invocations found):
    from now on each container keeps what the rules ask of it again and again (`Container._remembered`)."""
    for template in world.templates:
        for container in template.containers:
            if container._memo is None:
                container._memo = {}
    for obj in world.objects:
        if obj._memo is None:
            obj._memo = {}
    if world._memo is None:
        world._memo = {}
