"""The pod a Helm chart renders around each vLLM server of a values file (data/chart-values.yaml `pod`), read
without rendering: the container's probes, resources, volume mounts and env, the pod's volumes, /dev/shm and
security contexts, as the chart's templates write them at the pinned version.

The pod is a `k8s.objects.PodTemplate` (not added to the world's templates: no rule sees it unless it asks for a
chart's pod through `chart_container`) whose nodes are the values file's own where the file writes the value,
so a finding sits on the file's line; a value that comes from the chart (its values.yaml under Helm's merge, or a
template's `default`) is a node placed at the entry (the modelSpec item, the decode/prefill container), which
`chart_default` tells. What the templates make unknowable (a key of llm-d's `extraConfig`, rendered with `tpl`, that
the template also writes; a value Helm cannot render) is named in `ChartWorkload.unknown`: a rule reading that
part stays silent.
"""
from __future__ import annotations

from typing import Any

from vllmlint.records import dataclass

from vllmlint.k8s.objects import Container, K8sObject, PodTemplate
from vllmlint.k8s.operators import is_synthetic, synthetic
from vllmlint.source.helm_values import LLM_D_MODELSERVICE, PRODUCTION_STACK, chart_table, helm_text, truthy
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, field_at

_MISSING = object()


def chart_container(invocation: Any) -> Container | None:
    """The vLLM container of the pod a chart renders for a values-file invocation; None for any other."""
    owner = getattr(invocation, "owner", None)
    return getattr(owner, "container", None) if hasattr(owner, "chart") else None


def pod_container(invocation: Any) -> Container | None:
    """The container an invocation runs in: a manifest's, or the one a chart renders from a values file."""
    return invocation.container if invocation.container is not None else chart_container(invocation)


def chart_groups(world: Any) -> list[list[Any]]:
    """The values-file invocations of each chart-rendered container, one group per container (as
    `endpoints.invocations_by_container` groups a manifest's)."""
    return [[invocation] for invocation in world.invocations if chart_container(invocation) is not None]


def _chart_owner(container: Container | None) -> Any:
    """The ChartWorkload whose pod `container` is; None for a manifest's container."""
    owner: Any = container.pod.owner if container is not None else None
    return owner if hasattr(owner, "chart") else None


def chart_default(node: Node | None, container: Container | None) -> bool:
    """Whether `node` of a chart's pod is the chart's own value (placed at the entry), not the values file's."""
    owner = _chart_owner(container)
    return owner is not None and node is not None and is_synthetic(node, owner.node)


def unknown(container: Container | None, part: str) -> bool:
    """Whether a part of a chart's pod ("volumes", "volumeMounts", "probes", "resources", "env", "hostIPC",
    "securityContext", "accelerator", "ports") is unknown: the rule reading it stays silent. False for a
    manifest's container."""
    owner = _chart_owner(container)
    return owner is not None and part in owner.unknown


def chart_claim_size(container: Container | None, claim: str | None) -> Node | None:
    """The size a PersistentVolumeClaim the chart creates for the pod of `container` requests (the values file's
    node: production-stack's pvcStorage), when a provisioner creates it at that size; None for any other claim
    (one the chart does not create, or that binds an existing volume) and for a manifest's container."""
    owner = _chart_owner(container)
    return owner.claims.get(claim) if owner is not None and claim else None


def chart_fills_accelerator_alone(container: Container | None) -> bool:
    """Whether the chart whose pod `container` is adds its accelerator count to the resources the values write
    and nothing else (llm-d: no memory or CPU unless written; data `pod.resources.fills_accelerator_alone`)."""
    owner = _chart_owner(container)
    if owner is None:
        return False
    return bool((((chart_table().get(owner.chart) or {}).get("pod") or {}).get("resources") or {})
                .get("fills_accelerator_alone"))


def chart_hint(container: Container | None, part: str) -> str:
    """How to fix `part` ("shm") in the values of the chart whose pod `container` is (data `pod.<part>.hint`);
    "" for a manifest's container."""
    owner = _chart_owner(container)
    if owner is None:
        return ""
    return str(((chart_table().get(owner.chart) or {}).get("pod") or {}).get(part, {}).get("hint") or "")


def _quoted(node: Node | None) -> Node | None:
    """A value the template prints with `quote` (a string as written, a number as Go's %v): a scalar at the
    value's place; None when Helm prints nothing a quantity can be (null, a map)."""
    text = helm_text(node)
    if text is None or not isinstance(node, Scalar) or "{{" in text:
        return None
    if isinstance(node.value, str):
        return node
    return Scalar(node.start, node.end, node.source, text, text, None)


def _value(node: Any) -> Any:
    return node.value if isinstance(node, Scalar) else node


def _merge(written: Node | None, default: Any) -> Any:
    """Helm's merge of a values-file node over the chart's values.yaml `default`: maps key by key (a null
    deletes the key), anything else replaces. Returns plain data holding the file's nodes, None when deleted,
    _MISSING when the result is not a map Helm's templates can read."""
    if written is None:
        return default
    if isinstance(written, Scalar) and written.value is None:
        return None
    if not isinstance(written, Mapping):
        return written
    if not isinstance(default, dict):
        return {key.text if isinstance(key, Scalar) else str(key): value for key, value in written.items}
    merged: dict[str, Any] = dict(default)
    for key, value in written.items:
        name = key.text if isinstance(key, Scalar) else str(key)
        if isinstance(value, Scalar) and value.value is None:
            merged.pop(name, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(name), dict):
            merged[name] = _merge(value, merged[name])
        else:
            merged[name] = value
    return merged


def _true(value: Any) -> bool:
    """Go templates' truth of a merged value (a node of the file or the chart's plain data)."""
    if isinstance(value, Node):
        return truthy(value)
    return bool(value)


# --- the Deployment's rollout --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChartRollout:
    """The Deployment a chart renders for an entry, as far as its rollout goes: `deployment` is a Deployment
    object whose `spec` holds `replicas` and `strategy` as the templates write them (the file's nodes where the
    file writes them, the chart's values placed at `anchor`); `key` names the entry (the containers of one pod
    share it); `default_strategy` / `default_replicas` tell the chart's own values from the file's (a strategy
    the chart leaves out entirely is Kubernetes's default, as in a manifest without one)."""

    deployment: K8sObject
    key: int
    anchor: Node
    default_strategy: bool
    default_replicas: bool
    hint: str
    label: str  # the entry as the values file names it: modelSpec entry `llama`, the `decode` role
    count_key: Node | None  # the key of the replica count the file writes (replicaCount, replicas)
    count_default: str  # where the count comes from when the file does not write it


def chart_rollout(invocation: Any) -> ChartRollout | None:
    """The rollout of the Deployment a chart renders for a values-file invocation; None for any other, or when
    the chart renders no Deployment whose replicas it writes (an autoscaled or multi-node entry)."""
    owner = getattr(invocation, "owner", None)
    return getattr(owner, "rollout", None) if hasattr(owner, "chart") else None


def _rollout(owner: Any, anchor: Node, key: int, replicas: Any, strategy: Any, default_strategy: bool,
             default_replicas: bool, hint: str, label: str, count_key: Node | None, count_default: str
             ) -> ChartRollout:
    spec: dict[str, Any] = {"replicas": replicas}
    if strategy is not None:
        spec["strategy"] = strategy
    node = synthetic({"spec": spec}, anchor)
    assert isinstance(node, Mapping)
    deployment = K8sObject("Deployment", "apps/v1", owner.name, "", node, owner.source)
    return ChartRollout(deployment, key, anchor, default_strategy, default_replicas, hint, label, count_key,
                        count_default)


def stack_rollout(root: Mapping, item: Mapping, owner: Any) -> ChartRollout | None:
    """deployment-vllm-multi.yaml's replicas (replicaCount) and strategy (servingEngineSpec.strategy, else the
    chart's maxSurge 100% / maxUnavailable 0) for a modelSpec entry; None with keda.enabled."""
    spec = (chart_table()[PRODUCTION_STACK].get("pod") or {}).get("rollout")
    if not spec or truthy(field_at(item, spec["autoscaled"])[1]):
        return None
    key, replicas = field_at(item, spec["replicas"]["path"])
    strategy = field_at(root, spec["strategy"]["path"])[1]
    written = truthy(strategy)
    return _rollout(owner, item, id(item), replicas if key is not None else spec["replicas"]["default"],
                    strategy if written else spec["strategy"]["default"], not written, key is None, spec["hint"],
                    f"modelSpec entry `{owner.name}`" if owner.name else "a modelSpec entry", key,
                    f"{spec['replicas']['path']} not set: the API's default")


def modelservice_rollout(root: Mapping, role: str, spec: Mapping, owner: Any) -> ChartRollout | None:
    """decode-deployment.yaml / prefill-deployment.yaml's replicas (as written, else the chart's values.yaml) and
    strategy (as written, else none: Kubernetes's default); None for multinode (LeaderWorkerSets)."""
    table = (chart_table()[LLM_D_MODELSERVICE].get("pod") or {}).get("rollout")
    if not table or truthy(field_at(root, table["multinode"])[1]):
        return None
    defaults = table["replicas"]["defaults"]
    key, replicas = field_at(spec, table["replicas"]["path"])
    if key is None and role not in defaults:
        return None
    strategy = field_at(spec, table["strategy"]["path"])[1]
    anchor = root.key_node(role) or spec
    return _rollout(owner, anchor, id(spec), replicas if key is not None else defaults[role],
                    strategy if truthy(strategy) else None, False, key is None,
                    str(table["hint"]).replace("<role>", role), f"the `{role}` role", key,
                    f"{role}.{table['replicas']['path']} not set: the chart's default")


# --- vLLM production-stack ----------------------------------------------------------------------------------
def stack_pod(root: Mapping, item: Mapping, owner: Any) -> Container | None:
    """The pod deployment-vllm-multi.yaml renders for a modelSpec entry, with its vLLM container."""
    spec = chart_table()[PRODUCTION_STACK].get("pod")
    if not spec:
        return None
    unknown_parts: set[str] = set()
    container: dict[str, Any] = {"name": spec["container_name"]["value"]}
    ports = spec["ports"]
    port_node = field_at(root, ports["path"])[1]
    port: Any = port_node if truthy(port_node) and isinstance(port_node, Scalar) else ports["default"]
    container["ports"] = [{"name": ports["name"], "containerPort": port}] + list(ports["constant"])
    for kind, probe in _stack_probes(root, spec["probes"], unknown_parts).items():
        container[kind] = probe
    resources = _stack_resources(item, spec["resources"], owner.gpu)
    if resources is not None:
        container["resources"] = resources
    else:
        unknown_parts.add("resources")
    mounts, volumes = _stack_volumes(root, item, spec, unknown_parts)
    owner.claims = _stack_claims(item, spec["claim"]) if "claim" in spec else {}
    if mounts:
        container["volumeMounts"] = mounts
    env, env_from = _stack_env(root, item, spec, owner)
    container["env"] = env
    if env_from:
        container["envFrom"] = env_from
    contexts = spec["security_context"]
    context = _merge(field_at(root, contexts["container"])[1], dict(contexts["container_default"]))
    if isinstance(context, dict) and context:
        container["securityContext"] = context
    elif context is not None and not isinstance(context, dict) and truthy(context):
        unknown_parts.add("securityContext")
    pod: dict[str, Any] = {"containers": [container]}
    pod_context = field_at(root, contexts["pod"])[1]
    if truthy(pod_context):
        pod["securityContext"] = pod_context
    if truthy(field_at(item, spec["host_ipc"]["path"])[1]):
        pod["hostIPC"] = True
        pod["hostPID"] = True
    if all(truthy(item.get(key)) if key != "pvcStorage" else key in item for key in spec["lora_sidecar"]["when"]):
        pod["containers"].append({"name": "sidecar", "volumeMounts": [{"name": "storage", "mountPath": "/data"}]})
    if volumes:
        pod["volumes"] = volumes
    runtime = spec["runtime_class"]
    if runtime["path"] in item:
        chosen = item.get(runtime["path"])
    else:
        key, written = field_at(root, runtime["shared"])
        chosen = written if key is not None else runtime["default"]
    if _true(chosen):
        pod["runtimeClassName"] = chosen
    scheduler = field_at(root, runtime["scheduler"])[1]
    if truthy(scheduler):
        pod["schedulerName"] = scheduler
    annotations = item.get(runtime["pod_annotations"])
    metadata = {"annotations": annotations} if isinstance(annotations, Mapping) else None
    return _container(owner, pod, item, unknown_parts, metadata)


def _stack_probes(root: Mapping, spec: dict[str, Any], unknown_parts: set[str]) -> dict[str, Any]:
    """chart.probes: each of servingEngineSpec's probes merged over the chart's, written when set."""
    found: dict[str, Any] = {}
    defaults = spec["template_defaults"]
    for kind, path in spec["paths"].items():
        key, written = field_at(root, path)
        merged = _merge(written if key is not None else None, spec["values"].get(kind))
        if merged is None or not _true(merged):
            continue
        if not isinstance(merged, dict):
            unknown_parts.add("probes")  # a probe Helm cannot render (`with` a string: `.initialDelaySeconds` fails)
            continue
        probe: dict[str, Any] = {}
        for name in ("initialDelaySeconds", "periodSeconds", "failureThreshold"):
            value = merged.get(name)
            probe[name] = value if _true(value) else defaults[name]
        for name in ("timeoutSeconds", "successThreshold"):
            if _true(merged.get(name)):
                probe[name] = merged[name]
        handler = next((name for name in ("exec", "tcpSocket", "grpc") if _true(merged.get(name))), "httpGet")
        value = merged.get(handler)
        if handler == "httpGet":
            if isinstance(value, Node) and not isinstance(value, Mapping) or value is None:
                unknown_parts.add("probes")  # `.httpGet.path` of nothing: the chart does not render
                continue
            get = value if isinstance(value, dict) else {k.text: v for k, v in value.items if isinstance(k, Scalar)}
            written_get = {"path": get.get("path") if _true(get.get("path")) else defaults["path"],
                           "port": get.get("port") if _true(get.get("port")) else defaults["port"]}
            for name in ("httpHeaders", "host", "scheme"):
                if _true(get.get(name)):
                    written_get[name] = get[name]
            probe["httpGet"] = written_get
        elif isinstance(value, (Mapping, dict)):
            probe[handler] = value
        else:
            unknown_parts.add("probes")
            continue
        found[kind] = probe
    return found


def _stack_resources(item: Mapping, spec: dict[str, Any], gpu: tuple[str, int, Node] | None) -> Any:
    """`resources` as written, else chart.resources (requests always, limits of the keys written, the GPU in
    both). None when a value Helm prints is no quantity the rules can read (the part is then unknown)."""
    written = item.get(spec["replaced_by"])
    if truthy(written):
        return written
    resources: dict[str, Any] = {}
    for section in ("requests", "limits"):
        values: dict[str, Any] = {}
        for name, path in spec[section].items():
            key, value = field_at(item, path)
            if key is None:
                continue
            quoted = _quoted(value)
            if quoted is None:
                return None
            values[name] = quoted
        if gpu is not None:
            values[gpu[0]] = _count(gpu)
        if values:
            resources[section] = values
    return resources


def _stack_volumes(root: Mapping, item: Mapping, spec: dict[str, Any], unknown_parts: set[str]
                   ) -> tuple[list[Any], list[Any]]:
    mounts: list[Any] = []
    volumes: list[Any] = []
    storage = spec["storage"]
    if storage["path"] in item:
        value = item.get(storage["path"])
        mounts.append({"name": "storage", "mountPath": storage["mount_path"]})
        if isinstance(value, Mapping) and "emptyDir" in value:
            empty = value.get("emptyDir")
            volumes.append({"name": "storage", "emptyDir": empty if isinstance(empty, Mapping) else {}})
        elif isinstance(value, Scalar) and isinstance(value.value, str):
            claim = (spec.get("claim") or {}).get("name") or "storage-claim"
            volumes.append({"name": "storage", "persistentVolumeClaim": {"claimName": claim}})
        else:
            unknown_parts.add("volumes")  # a volume with a name only (no source the template writes)
    shm = spec["shm"]
    parent, _, leaf = shm["when_key"].rpartition(".")
    config = field_at(item, parent)[1]
    if truthy(config) and isinstance(config, Mapping) and leaf in config:
        size = item.get(shm["size"])
        mounts.append({"name": "shm", "mountPath": "/dev/shm"})
        volumes.append({"name": "shm", "emptyDir": {
            "medium": "Memory",
            "sizeLimit": size if truthy(size) and isinstance(size, Scalar) else shm["default_size"]}})
    template = spec["chat_template"]
    if truthy(item.get(template["path"])):
        mounts.append({"name": "templates", "mountPath": template["mount_path"]})
        volumes.append({"name": "templates", "configMap": {"name": "chat-templates"}}
                       if template["config_map"] in item else
                       {"name": "templates", "persistentVolumeClaim": {"claimName": "vllm-templates-pvc"}})
    extra = spec["extra"]
    for key, into in ((extra["volume_mounts"], mounts), (extra["volumes"], volumes)):
        written = item.get(key)
        if isinstance(written, Sequence):
            into.extend(written.items)
        elif truthy(written):
            unknown_parts.add("volumes")
    shared = spec["shared_storage"]
    if truthy(field_at(root, shared["path"])[1]):
        mounts.append({"name": "shared-pvc-storage", "mountPath": shared["mount_path"]})
        volumes.append({"name": "shared-pvc-storage", "persistentVolumeClaim": {"claimName": "shared-pvc-storage"}})
    return mounts, volumes


def _stack_claims(item: Mapping, spec: dict[str, Any]) -> dict[str, Node]:
    """pvc.yaml's claim for a modelSpec entry: requests.storage is pvcStorage as written (a non-empty string);
    none known when a selector or `storageClass: ""` binds it to an existing volume."""
    size = item.get(spec["size"])
    if not isinstance(size, Scalar) or not isinstance(size.value, str) or not size.value or "{{" in size.text:
        return {}
    if truthy(item.get(spec["selector"])):
        return {}  # selector.matchLabels: an existing PersistentVolume, at least that size
    storage_class = item.get(spec["storage_class"])
    if spec["storage_class"] in item and helm_text(storage_class) in ("", None):
        return {}  # storageClassName "": only a pre-created PersistentVolume without a class binds it
    return {spec["name"]: size}


def _stack_env(root: Mapping, item: Mapping, pod: dict[str, Any], owner: Any) -> tuple[list[Any], list[Any]]:
    spec = pod["env"]
    env: list[Any] = list(spec["constant"])
    homes = spec["hf_home"]
    shared = truthy(field_at(root, pod["shared_storage"]["path"])[1])
    env.append({"name": "HF_HOME", "value": homes["shared"] if shared else homes["storage"]
                if pod["storage"]["path"] in item else homes["default"]})
    env.extend(spec["after_hf_home"])
    for name, value, node in owner.env:  # VLLM_USE_V1, HF_TOKEN, VLLM_API_KEY, then the env lists as written
        written = _env_item(root, item, node)
        if written is not None:
            env.append(written)
        elif value is not None:
            env.append({"name": name, "value": value})
        else:
            env.append({"name": name, "valueFrom": {"secretKeyRef": {"name": "secrets", "key": name}}})
    lmcache = spec["lmcache"]
    if truthy(field_at(item, lmcache["path"])[1]):
        env += list(lmcache["env"])
    env_from: list[Any] = []
    sources = spec["env_from"]
    if truthy(field_at(root, sources["config_map"])[1]):
        env_from.append({"configMapRef": {"name": "configs"}})
    secret = field_at(item, sources["secret"])[1]
    if truthy(secret):
        env_from.append({"secretRef": {"name": helm_text(field_at(secret, "name")[1]) or "secret"}})
    return env, env_from


def _env_item(root: Mapping, item: Mapping, name_node: Node | None) -> Mapping | None:
    """The item of an env list the chart copies as written (servingEngineSpec.env, the modelSpec's env) whose
    `name` is `name_node`."""
    for env in chart_table()[PRODUCTION_STACK].get("env") or []:
        if env["form"] != "list":
            continue
        listed = field_at(root if env.get("root") else item, env["path"])[1]
        for entry in listed.items if isinstance(listed, Sequence) else ():
            if isinstance(entry, Mapping) and entry.get("name") is name_node:
                return entry
    return None


# --- llm-d modelservice ---------------------------------------------------------------------------------------
_CONTAINER_PARTS = {"startupProbe": "probes", "livenessProbe": "probes", "readinessProbe": "probes",
                    "resources": "resources", "volumeMounts": "volumeMounts", "env": "env", "ports": "ports",
                    "securityContext": "securityContext"}
_POD_PARTS = {"volumes": "volumes", "hostIPC": "hostIPC", "securityContext": "securityContext",
              "runtimeClassName": "accelerator", "schedulerName": "accelerator", "resourceClaims": "accelerator"}


def modelservice_pod(root: Mapping, spec: Mapping, written: Mapping, owner: Any) -> Container | None:
    """The pod decode-deployment.yaml / prefill-deployment.yaml render for a role, with this container."""
    table = chart_table()[LLM_D_MODELSERVICE].get("pod")
    if not table:
        return None
    unknown_parts: set[str] = set()
    container: dict[str, Any] = {"name": helm_text(written.get("name")) or "vllm"}
    for key in ("ports", "startupProbe", "livenessProbe", "readinessProbe", "securityContext"):
        if truthy(written.get(key)):
            container[key] = written.get(key)
    extra = written.get(table["extra_config"]["container"])
    _extra(extra, container, _CONTAINER_PARTS, unknown_parts)
    resources = written.get("resources")
    limits = field_at(resources, "limits")[1] if isinstance(resources, Mapping) else None
    requests = field_at(resources, "requests")[1] if isinstance(resources, Mapping) else None
    made: dict[str, Any] = {"limits": dict(_pairs(limits)), "requests": dict(_pairs(requests))}
    if owner.gpu is not None:
        for section in ("limits", "requests"):
            made[section].setdefault(owner.gpu[0], _count(owner.gpu))
    if owner.dra:
        made["claims"] = [{"name": "accelerator"}]  # _helpers.tpl lines 327-335: the DRA claim of the accelerator
    if "resources" in container:
        unknown_parts.add("resources")  # extraConfig.resources beside the template's own
    container["resources"] = made
    own_mounts = written.get("volumeMounts")
    mounts: list[Any] = list(own_mounts.items) if isinstance(own_mounts, Sequence) else []
    if truthy(own_mounts) and not isinstance(own_mounts, Sequence):
        unknown_parts.add("volumeMounts")
    mounts_spec = table["volume_mounts"]
    model = chart_table()[LLM_D_MODELSERVICE]["model"]
    uri = helm_text(field_at(root, model["uri"])[1]) or model["default_uri"]
    scheme = uri.partition("://")[0] if "://" in uri else ""
    mount_model = truthy(written.get(mounts_spec["mount_model_volume"]))
    read_only: Any = None
    if scheme == "oci":
        read_only = True
    elif scheme.startswith("pvc"):
        written_key, written_value = field_at(root, mounts_spec["read_only"])
        read_only = written_value if written_key is not None else mounts_spec["default_read_only"]
    if mount_model:
        path_node = field_at(root, mounts_spec["mount_path"])[1]
        path: Any = (path_node if isinstance(path_node, Scalar) and truthy(path_node)
                     else mounts_spec["default_mount_path"])
        mount: dict[str, Any] = {"name": "model-storage", "mountPath": path}
        if read_only is not None:
            mount["readOnly"] = read_only
        mounts.append(mount)
    if "volumeMounts" in container:
        unknown_parts.add("volumeMounts")
    if mounts:
        container["volumeMounts"] = mounts
    own_env = written.get("env")
    env: list[Any] = list(own_env.items) if isinstance(own_env, Sequence) else []
    if mount_model and scheme == "hf":
        path_node = field_at(root, mounts_spec["mount_path"])[1]
        env.append({"name": "HF_HOME", "value": path_node if isinstance(path_node, Scalar) and truthy(path_node)
                    else mounts_spec["default_mount_path"]})
    elif mount_model and scheme == "pvc+hf":
        parts = uri.partition("://")[2].split("/")
        env.append({"name": "HF_HUB_CACHE",
                    "value": mounts_spec["hub_cache_prefix"] + "/".join(parts[1:len(parts) - 2])})
    secret = field_at(root, mounts_spec["auth_secret"])[1]
    if truthy(secret):
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": secret, "key": "HF_TOKEN"}}})
    if "env" in container:
        unknown_parts.add("env")
    container["env"] = env
    pod: dict[str, Any] = {"containers": [container]}
    init = _init_containers(root, spec, owner.kind, table["init_containers"], unknown_parts)
    if init:
        pod["initContainers"] = init
    context = spec.get(table["security_context"]["pod"])
    if truthy(context):
        pod["securityContext"] = context
    volumes_spec = table["volumes"]
    if volumes_spec["path"] in spec:
        volumes_node = spec.get(volumes_spec["path"])
        volumes: list[Any] = list(volumes_node.items) if isinstance(volumes_node, Sequence) else []
        if truthy(volumes_node) and not isinstance(volumes_node, Sequence):
            unknown_parts.add("volumes")
    else:
        volumes = list(volumes_spec["default"])
    containers = spec.get("containers")
    if any(isinstance(c, Mapping) and truthy(c.get(mounts_spec["mount_model_volume"]))
           for c in (containers.items if isinstance(containers, Sequence) else ())):
        volumes.append(_model_volume(root, scheme, uri, volumes_spec, read_only))
    _extra(spec.get(table["extra_config"]["pod"]), pod, _POD_PARTS, unknown_parts)
    if "volumes" in pod:
        unknown_parts.add("volumes")
    pod["volumes"] = volumes
    return _container(owner, pod, written, unknown_parts)


def _count(gpu: tuple[str, int, Node]) -> Any:
    """The accelerator count the chart writes: the value's node when it holds that count, else the number."""
    from vllmlint.source.helm_values import go_int

    return gpu[2] if isinstance(gpu[2], Scalar) and go_int(gpu[2]) == gpu[1] else str(gpu[1])


def _init_containers(root: Mapping, spec: Mapping, role: str, table: dict[str, Any], unknown_parts: set[str]
                     ) -> list[Any]:
    """The routing proxy (a native sidecar of the decode pod, listening on the service port) and the role's own
    init containers as written."""
    found: list[Any] = []
    proxy = table["proxy"]
    own = spec.get(table["path"])
    if role == proxy["role"]:
        key, enabled = field_at(root, proxy["enabled"])
        value = proxy["default_enabled"] if key is None else enabled.value if isinstance(enabled, Scalar) else None
        # The block is written when enabled is true (or the role has init containers); the proxy in it unless
        # enabled is false.
        if value is True or (truthy(own) and value is not False):
            port_node = field_at(root, proxy["port"])[1]
            port = port_node if isinstance(port_node, Scalar) and truthy(port_node) else proxy["default_port"]
            found.append({"name": "routing-proxy", "restartPolicy": "Always", "ports": [{"containerPort": port}]})
    if isinstance(own, Sequence):
        found.extend(own.items)
    elif truthy(own):
        unknown_parts.add("ports")  # init containers the values do not show: one may listen anywhere
    return found


def _pairs(node: Node | None) -> list[tuple[str, Node]]:
    return [(key.text, value) for key, value in node.items if isinstance(key, Scalar)] \
        if isinstance(node, Mapping) else []


def _extra(extra: Node | None, into: dict[str, Any], parts: dict[str, str], unknown_parts: set[str]) -> None:
    """extraConfig's keys, rendered with tpl: a key the parts name is kept when it holds no template action."""
    if not isinstance(extra, Mapping):
        if truthy(extra):
            unknown_parts.update(parts.values())
        return
    for key, value in extra.items:
        name = key.text if isinstance(key, Scalar) else ""
        if name not in parts:
            continue
        if name in into or _has_action(value):
            unknown_parts.add(parts[name])
        into[name] = value


def _has_action(node: Node | None) -> bool:
    if isinstance(node, Scalar):
        return "{{" in node.text
    if isinstance(node, Mapping):
        return any(_has_action(key) or _has_action(value) for key, value in node.items)
    if isinstance(node, Sequence):
        return any(_has_action(item) for item in node.items)
    return False


def _model_volume(root: Mapping, scheme: str, uri: str, spec: dict[str, Any], read_only: Any) -> dict[str, Any]:
    if scheme == "hf":
        key, size = field_at(root, spec["size"])
        return {"name": "model-storage", "emptyDir": {
            "sizeLimit": (size if truthy(size) and isinstance(size, Scalar) else "0") if key is not None
            else spec["default_size"]}}
    if scheme.startswith("pvc"):
        claim = uri.partition("://")[2].split("/", 1)[0]
        return {"name": "model-storage", "persistentVolumeClaim": {"claimName": claim, "readOnly": read_only}}
    if scheme == "oci":
        return {"name": "model-storage", "image": {"reference": uri.partition("://")[2]}}
    return {"name": "model-storage"}


def _container(owner: Any, pod: dict[str, Any], anchor: Mapping, unknown_parts: set[str],
               metadata: dict[str, Any] | None = None) -> Container | None:
    spec = synthetic(pod, anchor)
    meta = synthetic(metadata, anchor) if metadata is not None else None
    assert isinstance(spec, Mapping) and (meta is None or isinstance(meta, Mapping))
    template = PodTemplate(owner, spec, meta, owner.kind)
    owner.unknown = frozenset(unknown_parts)
    return next((c for c in template.containers if not c.init), None)  # the vLLM container comes first
