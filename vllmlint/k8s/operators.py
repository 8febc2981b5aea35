"""Pods that operators build from their custom resources, so every rule reads them like a Deployment's.

An operator such as KubeAI never shows its pod in the manifest: a `Model` names a model URL, flags, env
and a resource profile, and the controller writes the container (command, the flags it adds, probes,
ports, /dev/shm) itself. What it writes is data (`data/operator-workloads.yaml`, each fact with its source
in the operator's repository); this module turns a resource into that pod, as YAML nodes. Nodes the
resource holds (its `args`, `env` entries, `image`) are the resource's own, with their positions; what the
operator adds is synthetic, placed at the field that causes it (the resource profile for resources, the
engine for the rest), so a finding about it points at the line a user would change.
"""
from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from vllmlint.source.yamlmodel import Document, Mapping, Node, Scalar, Sequence, UnknownScalar, path_at, scalar_str

if TYPE_CHECKING:
    from vllmlint.k8s.objects import K8sObject, World


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "operator-workloads.yaml") or {}
    return data if isinstance(data, dict) else {}


def kubeai_table() -> dict[str, Any]:
    """The KubeAI section of data/operator-workloads.yaml."""
    found = _table().get("kubeai")
    return found if isinstance(found, dict) else {}


# --- synthetic nodes ---------------------------------------------------------------------------------
def synthetic(value: Any, anchor: Node) -> Node:
    """Plain data as YAML nodes placed at `anchor` (what an operator writes, shown where the resource caused
    it). Real nodes inside `value` are kept as they are."""
    if isinstance(value, Node):
        return value
    if isinstance(value, dict):
        mapping = Mapping(anchor.start, anchor.end, anchor.source)
        for key, item in value.items():
            key_node = key if isinstance(key, Scalar) else _scalar(str(key), anchor)
            mapping.items.append((key_node, synthetic(item, anchor)))
        return mapping
    if isinstance(value, (list, tuple)):
        sequence = Sequence(anchor.start, anchor.end, anchor.source)
        sequence.items.extend(synthetic(item, anchor) for item in value)
        return sequence
    return _scalar(value, anchor)


def _scalar(value: Any, anchor: Node) -> Scalar:
    text = value if isinstance(value, str) else ("" if value is None else str(value).lower()
                                                  if isinstance(value, bool) else str(value))
    return Scalar(anchor.start, anchor.end, anchor.source, value, text, None)


def is_synthetic(node: Node | None, anchor: Node | None) -> bool:
    return node is not None and anchor is not None and (node.start, node.end) == (anchor.start, anchor.end)


# --- KubeAI Model --------------------------------------------------------------------------------------
def is_kubeai_model(obj: K8sObject) -> bool:
    table = kubeai_table()
    return (bool(table) and obj.kind == table.get("kind")
            and obj.api_version.split("/", 1)[0] == table.get("api_group"))


def kubeai_settings(document: Document) -> Mapping | None:
    """KubeAI's system configuration when a document of the run is one: the chart's values file (or a
    `system.yaml` written out), a mapping with `resourceProfiles` or `modelServers` and no `kind`."""
    root = document.root
    if isinstance(root, Mapping) and scalar_str(root.get("kind")) == "ConfigMap":
        return _system_yaml(root)
    if not isinstance(root, Mapping) or "kind" in root or "apiVersion" in root:
        return None
    if isinstance(root.get("resourceProfiles"), Mapping) or isinstance(root.get("modelServers"), Mapping):
        return root
    return None


def _system_yaml(config_map: Mapping) -> Mapping | None:
    """KubeAI's system configuration as its chart writes it: the `system.yaml` key of the kubeai-config
    ConfigMap (charts/kubeai/templates/configmap.yaml:8-19), parsed with positions in the ConfigMap's file."""
    from vllmlint.source.yamlmodel import SourceFile, parse_documents, walk

    value = _path(config_map, "data", "system.yaml")
    if not isinstance(value, Scalar) or not isinstance(value.value, str) or "resourceProfiles" not in value.text \
            and "modelServers" not in value.text:
        return None
    inner = SourceFile(value.source.path, value.text, value.source.display_path)
    documents, _ = parse_documents(inner)
    root = documents[0].root if documents else None
    if not isinstance(root, Mapping):
        return None
    for node in list(walk(root)):  # offsets into the value -> offsets into the ConfigMap's file
        node.start, node.end = value.source_index(node.start), value.source_index(node.end)
        node.source = value.source
        if isinstance(node, Scalar):
            node._offsets = None
    return root if isinstance(root.get("resourceProfiles"), Mapping) or isinstance(root.get("modelServers"),
                                                                                  Mapping) else None


_path = path_at  # the one walker of the YAML model


def _multiplied(node: Node, multiple: int, anchor: Node) -> Node | None:
    """A resource quantity times `multiple` (model_controller.go:288-300: Quantity.Mul), as a number."""
    from vllmlint.k8s.quantity import parse_quantity

    value = parse_quantity(node)
    if value is None:
        return None
    product = value * Decimal(multiple)
    text = str(product.normalize()) if product != product.to_integral_value() else str(int(product))
    return _scalar(text, anchor)


def kubeai_templates(obj: K8sObject, world: World) -> list[tuple[Mapping, Mapping, str]]:
    """The vLLM pod KubeAI's model controller builds for a `Model` with `engine: VLLM` (engine_vllm.go): its
    (pod spec, metadata, role), for `k8s.objects` to make the PodTemplate of."""
    spec = obj.spec
    table = kubeai_table()
    if spec is None or scalar_str(spec.get("engine")) != table.get("engine"):
        return []
    engine = spec.key_node("engine") or spec
    settings = world.kubeai_settings
    profile_node = spec.get("resourceProfile")
    profile_text = scalar_str(profile_node) or ""
    name, _, count = profile_text.partition(":")
    profile: Mapping | None = None
    for found in settings:  # a later values file wins, as `helm -f a -f b` merges them
        candidate = _path(found, "resourceProfiles", name)
        if isinstance(candidate, Mapping):
            profile = candidate
    container: dict[Any, Any] = {"name": table.get("container_name", "server")}
    image = spec.get("image")
    if isinstance(image, Scalar) and scalar_str(image):
        container["image"] = image
    else:
        image_name = scalar_str(profile.get("imageName")) if profile is not None else None
        for found in settings:
            images = _path(found, "modelServers", table.get("engine", ""), "images")
            chosen = _path(images, image_name or "default")
            if not isinstance(chosen, Scalar):
                chosen = _path(images, "default")
            if isinstance(chosen, Scalar) and scalar_str(chosen):
                container["image"] = chosen
    args = spec.get("args")
    if isinstance(args, Sequence):
        container["args"] = args
    env = spec.get("env")
    if isinstance(env, Mapping):
        container["env"] = [{"name": key, "value": value} for key, value in env.items]
    env_from = spec.get("envFrom")
    if isinstance(env_from, Sequence):
        container["envFrom"] = env_from
    if profile is not None and isinstance(profile_node, Scalar) and count.isdigit():
        resources: dict[str, dict[Any, Any]] = {}
        for section in ("requests", "limits"):
            part = profile.get(section)
            if isinstance(part, Mapping):
                values = {key: _multiplied(value, int(count), profile_node) for key, value in part.items}
                resources[section] = {key: value for key, value in values.items() if value is not None}
        container["resources"] = resources
    elif isinstance(profile_node, Scalar):
        # A profile the run does not define: its resources are unknown, which a node that is no mapping says
        # (rules read such `resources` as "cannot tell").
        container["resources"] = profile_node
    container.update(table.get("container") or {})
    pod: dict[Any, Any] = {"containers": [container]}
    pod.update(table.get("pod") or {})
    container_context: Any = table.get("default_container_security_context")
    pod_context: Any = None
    for found in settings:
        server_pods = found.get("modelServerPods")
        if isinstance(server_pods, Mapping):  # Helm merges values files key by key: a key given replaces
            if "securityContext" in server_pods:
                container_context = server_pods.get("securityContext")
            if "podSecurityContext" in server_pods:
                pod_context = server_pods.get("podSecurityContext")
    if container_context is not None:
        container["securityContext"] = container_context
    if pod_context is not None:
        pod["securityContext"] = pod_context
    if profile is not None:
        for key in ("nodeSelector", "affinity", "tolerations", "schedulerName", "runtimeClassName"):
            value = profile.get(key)
            if value is not None:
                pod[key] = value
    engine_name = (scalar_str(spec.get("engine")) or "").lower()
    labels = {"app": "model", "model": obj.name, "app.kubernetes.io/name": engine_name,
              "app.kubernetes.io/instance": f"{engine_name}-{obj.name}", "app.kubernetes.io/managed-by": "kubeai"}
    pod_spec = synthetic(pod, engine)
    metadata = synthetic({"labels": labels}, engine)
    assert isinstance(pod_spec, Mapping) and isinstance(metadata, Mapping)
    return [(pod_spec, metadata, "server")]


def kubeai_prefix(obj: K8sObject) -> tuple[list[str], list[tuple[str, str | None]]] | None:
    """(command, flags KubeAI writes before `spec.args`: (flag, value or None when unknown))."""
    table = kubeai_table()
    spec = obj.spec
    if spec is None:
        return None
    url = scalar_str(spec.get("url")) or ""
    scheme, sep, ref = url.partition("://")
    model: str | None = ref.split("?", 1)[0] if sep and scheme in (table.get("model_url_schemes") or []) else None
    if spec.get("cacheProfile") is not None:
        model = None  # a path under the cache volume (modelCacheDir)
    flags = [(str(table.get("model_flag")), model), (str(table.get("served_name_flag")), obj.name or None)]
    return list(table.get("command") or []), flags


# --- KServe LLMInferenceService -------------------------------------------------------------------------
def kserve_table() -> dict[str, Any]:
    found = _table().get("kserve_llmisvc")
    return found if isinstance(found, dict) else {}


def kserve_launcher_args(container: Any) -> list[tuple[str | None, Node]]:
    """What KServe's LLMInferenceService launch script adds to `vllm serve` for a container of the kind that
    writes no `command` of its own: (flag, value node) pairs, and (None, scalar) for an argv string."""
    table = kserve_table()
    pod = container.pod
    owner = pod.owner
    if (not table or owner.kind != table.get("kind") or container.name != table.get("container_name")
            or container.command is not None or owner.spec is None):
        return []
    spec = owner.spec
    parallelism = _path(spec, "prefill", "parallelism") if pod.role.startswith("prefill") else spec.get("parallelism")
    found: list[tuple[str | None, Node]] = []
    for field_name, flag in (table.get("parallelism_flags") or {}).items():
        value = _path(parallelism, field_name)
        if isinstance(value, Scalar) and scalar_str(value):
            found.append((str(flag), value))
    data_parallel = any(isinstance(_path(parallelism, key), Scalar) for key in table.get("data_parallel_fields") or ())
    for name, flag in (table.get("env_flags") or {}).items():
        if data_parallel:
            value = _env_value(container, name)
            if value is not None:
                found.append((str(flag), value))
    for name in table.get("env_argv") or ():
        value = _env_value(container, name)
        if value is not None:
            found.append((None, value))
    return found


def kserve_script_variables(container: Any) -> frozenset[str]:
    """The env variables KServe's preset script expands itself (`eval "exec vllm serve ... ${VLLM_ADDITIONAL_ARGS}
    $@"`, data/operator-workloads.yaml `env_argv`) in an LLMInferenceService container that writes no `command`:
    a shell reads their text again, so `${NAME}` in them is the shell's business (quoting decides). Empty for
    any other container."""
    table = kserve_table()
    owner = container.pod.owner
    if (not table or owner.kind != table.get("kind") or container.name != table.get("container_name")
            or container.command is not None):
        return frozenset()
    return frozenset(str(name) for name in table.get("env_argv") or ())


def kserve_preset_command(container: Any) -> tuple[list[str], Scalar, str | None, Scalar | None] | None:
    """The command KServe's single-node preset runs in an LLMInferenceService's `main` container that writes no
    `command` (data/operator-workloads.yaml `kserve_llmisvc.preset_command`): (the words before the model, the
    spec.model.uri scalar, the repository it names or None when its scheme names a path, spec.model.name).
    None when no preset is known to apply: another container, a `command` of its own, spec.baseRefs (they may
    replace the preset), or the P/D and multi-node shapes (other presets)."""
    table = kserve_table()
    pod = container.pod
    owner = pod.owner
    command = table.get("preset_command")
    if (not table or not command or owner.kind != table.get("kind") or container.name != table.get("container_name")
            or container.command is not None or owner.spec is None or pod.role != "main"):
        return None
    spec = owner.spec
    if any(spec.get(key) is not None for key in ("baseRefs", "prefill", "worker")):
        return None
    uri = _path(spec, "model", "uri")
    if not isinstance(uri, Scalar):
        return None
    scheme, sep, ref = (scalar_str(uri) or "").strip().partition("://")
    schemes = table.get("preset_model_url_schemes") or []
    model = ref.split("?", 1)[0].strip("/") if sep and scheme in schemes and ref.count("/") == 1 else None
    name = _path(spec, "model", "name")
    return [str(word) for word in command], uri, model, name if isinstance(name, Scalar) else None


def _env_value(container: Any, name: str) -> Scalar | None:
    """The literal value scalar of an `env` entry (later entries win, as the kubelet has it)."""
    env = container.node.get("env")
    found: Scalar | None = None
    if isinstance(env, Sequence):
        for item in env.items:
            if isinstance(item, Mapping) and scalar_str(item.get("name")) == name:
                value = item.get("value")
                found = value if isinstance(value, Scalar) and isinstance(value.value, str) else None
    return found


def with_kserve_preset(node: Mapping) -> Mapping:
    """An LLMInferenceService PodSpec as the pod gets it: the presets' volumes, and their mounts in `main`,
    merged under the spec's own (strategic merge: a volume by name, a mount by mountPath, the spec's win).
    The spec's own nodes are kept (same positions); the copies have the originals' places."""
    table = kserve_table()
    volumes = table.get("preset_volumes") or []
    mounts = table.get("preset_volume_mounts") or []
    if not volumes:
        return node
    spec = _copy(node)
    own_volumes = spec.get("volumes")
    names = {scalar_str(_path(v, "name")) for v in own_volumes.items} if isinstance(own_volumes, Sequence) else set()
    extra = [v for v in volumes if v.get("name") not in names]
    _extend(spec, "volumes", extra, node)
    containers = spec.get("containers")
    if isinstance(containers, Sequence):
        copied = Sequence(containers.start, containers.end, containers.source)
        for item in containers.items:
            if isinstance(item, Mapping) and scalar_str(item.get("name")) == table.get("container_name"):
                item = _copy(item)
                own = item.get("volumeMounts")
                paths = ({scalar_str(_path(m, "mountPath")) for m in own.items} if isinstance(own, Sequence) else set())
                _extend(item, "volumeMounts", [m for m in mounts if m.get("mountPath") not in paths], item)
            copied.items.append(item)
        _replace(spec, "containers", copied)
    return spec


def _copy(node: Mapping) -> Mapping:
    copied = Mapping(node.start, node.end, node.source)
    copied.items = list(node.items)
    return copied


def _extend(mapping: Mapping, key: str, additions: list, anchor: Node) -> None:
    if not additions:
        return
    current = mapping.get(key)
    merged = Sequence(*(current.start, current.end, current.source) if isinstance(current, Sequence)
                      else (anchor.start, anchor.end, anchor.source))
    if isinstance(current, Sequence):
        merged.items.extend(current.items)
    merged.items.extend(synthetic(item, anchor) for item in additions)
    _replace(mapping, key, merged)


def _replace(mapping: Mapping, key: str, value: Node) -> None:
    for index, (key_node, _) in enumerate(mapping.items):
        if isinstance(key_node, Scalar) and key_node.text == key:
            mapping.items[index] = (key_node, value)
            mapping._index = None
            return
    mapping.items.append((_scalar(key, mapping), value))
    mapping._index = None


# --- OpenShift Template ----------------------------------------------------------------------------------
def openshift_template_objects(root: Mapping) -> list[Mapping]:
    """The `objects` of an OpenShift Template, with every scalar that holds one of its parameters (`${NAME}`,
    `${{NAME}}`) as an `UnknownScalar`: `oc process` substitutes them (with `-p` values or defaults we cannot
    know were kept). Undeclared `${X}` stay as written, as `oc process` leaves them."""
    import re

    parameters = root.get("parameters")
    found = [scalar_str(_path(p, "name")) for p in parameters.items] if isinstance(parameters, Sequence) else []
    names = sorted({name for name in found if name})
    pattern = re.compile(r"\$\{\{?(" + "|".join(map(re.escape, names)) + r")\}\}?") if names else None
    objects = root.get("objects")
    result: list[Mapping] = []
    for item in objects.items if isinstance(objects, Sequence) else ():
        if isinstance(item, Mapping):
            copied = _substituted_copy(item, pattern) if pattern is not None else item
            if isinstance(copied, Mapping):
                result.append(copied)
    return result


def _substituted_copy(root: Node, pattern: Any) -> Node:
    """A copy of `root` with the scalars that hold a parameter made `UnknownScalar`s. Each node is copied once
    and an alias gets the same copy (`&a [*a]` stays a cycle, a billion laughs stays its few shared nodes), by
    a loop rather than recursion: the copy costs what the file's nodes are, whatever its aliases."""
    memo: dict[int, Node] = {}
    pending: list[tuple[Node, Node]] = []

    def copied(node: Node) -> Node:
        done = memo.get(id(node))
        if done is not None:
            return done
        made: Node = node
        if isinstance(node, Scalar):
            made = UnknownScalar(node) if pattern.search(node.text) else node
        elif isinstance(node, Mapping):
            made = Mapping(node.start, node.end, node.source)
            pending.append((node, made))
        elif isinstance(node, Sequence):
            made = Sequence(node.start, node.end, node.source)
            pending.append((node, made))
        memo[id(node)] = made
        return made

    result = copied(root)
    while pending:
        node, made = pending.pop()
        if isinstance(node, Mapping) and isinstance(made, Mapping):
            made.items = [(key, copied(value)) for key, value in node.items]
        elif isinstance(node, Sequence) and isinstance(made, Sequence):
            made.items = [copied(item) for item in node.items]
    return result
