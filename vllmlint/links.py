"""Link keys: which files of a run can change another file's findings (docs/design/cross-file-links.md).

Every file PROVIDES keys (what its objects are: names, labels, a folder, a path) and WANTS keys (what its objects
look up elsewhere). Two files whose findings can depend on each other share a key one provides and the other wants;
files that share none cannot influence each other, so they may be linted apart (`vllmlint.stream`) and give the
same findings as one run over all of them. The key families (N name, L label pair, LK label key, A aggregate of a
namespace, G whole-run aggregate, F folder, P file path, V value) and the reads each stands for are in the design
note, with file:line of every rule and builder; `vllmlint_dev/linkcheck.py` measures the real influence and checks
it against these keys (a hole there means a read is missing here).

A key is a necessary condition, never a sufficient one: the keys over-approximate (a name is kind-less and
namespace-less, every NodePool is one `G` key) and so stay sound. Two whole-run keys are FACTS (`FACTS`): what
their readers ask is only whether the run has a provider at all (VL806 and VL805 are silent when the run has no vLLM
pod), so a batch that has a provider, or has none where the run has none, reads them as the whole run does.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from collections.abc import Collection
    from collections.abc import Mapping as MappingOf

    from vllmlint.k8s.objects import World

# Whole-run keys whose readers ask only "does the run have one": VL806 `vllm_templates()` without Compose services
# (vl806_monitor_selects_nothing.py:36-40), VL805 the same without host-network pods (vl805_network_policy_gap.py:70).
FACTS = frozenset({("G", "vllm-pods"), ("G", "vllm-pods-net")})

_NAME_REF_KEYS = frozenset({"name", "serviceName", "serviceAccountName", "serviceAccount", "backend", "backendRuntime",
                            "poolName"})
_NOT_REFS = frozenset({"containers", "initContainers", "ephemeralContainers", "ports", "env", "volumeMounts",
                       "volumes", "volumeDevices", "resourceClaims", "imagePullSecrets", "workerGroupSpecs",
                       "args", "command", "hostAliases", "readinessGates"})
_SELECTOR_KEYS = frozenset({"selector", "podSelector", "workloadSelector", "labelSelector"})
_URL_HOST = lazy_compile(r"(?:://|@)([a-z0-9]([-a-z0-9]*[a-z0-9])?)(?=[.:/]|$)")
_RAY_KINDS = ("RayCluster", "RayService", "RayJob", "RayClusterFleet")
_CHAT = "/v1/chat/completions"


class Keys:
    def __init__(self) -> None:
        self.provides: dict[str, set[tuple]] = {}
        self.wants: dict[str, set[tuple]] = {}

    def provide(self, shown: str | None, *key) -> None:
        if shown is not None:
            self.provides.setdefault(shown, set()).add(tuple(key))

    def want(self, shown: str | None, *key) -> None:
        if shown is not None:
            self.wants.setdefault(shown, set()).add(tuple(key))


def _labels_of(node) -> list[tuple[str, str]]:
    from vllmlint.source.yamlmodel import Mapping, scalar_str

    if not isinstance(node, Mapping):
        return []
    return [(k, scalar_str(v) or "") for k, v in node.pairs()]


def _selector_keys(node) -> list[tuple] | None:
    """The keys a label selector wants (one of them is a necessary condition of a match), None when nothing
    narrows it (empty, or only negative requirements): then it wants every pod of its namespace."""
    from vllmlint.source.yamlmodel import Mapping, Sequence, scalar_str

    if not isinstance(node, Mapping):
        return None
    structured = "matchLabels" in node.keys() or "matchExpressions" in node.keys()
    pairs = sorted(_labels_of(node.get("matchLabels") if structured else node))
    if pairs:
        return [("L", *pairs[0])]
    expressions = node.get("matchExpressions") if structured else None
    for item in expressions.items if isinstance(expressions, Sequence) else []:
        if not isinstance(item, Mapping):
            continue
        key, operator = scalar_str(item.get("key")) or "", scalar_str(item.get("operator")) or ""
        values = item.get("values")
        if operator == "In" and isinstance(values, Sequence):
            return [("L", key, scalar_str(v) or "") for v in values.items]
        if operator == "Exists":
            return [("LK", key)]
    return None


def _walk_refs(node, skip_names: bool = False):
    """(key, scalar text) of every name-like reference in an object's spec."""
    from vllmlint.source.yamlmodel import Mapping, Scalar, Sequence

    if isinstance(node, Mapping):
        for key, value in node.pairs():
            if key in _NAME_REF_KEYS and isinstance(value, Scalar) and isinstance(value.value, str) \
                    and not (skip_names and key == "name"):
                yield key, value.value
            elif isinstance(value, Sequence):
                for item in value.items:
                    yield from _walk_refs(item, key in _NOT_REFS)
            else:
                yield from _walk_refs(value)
    elif isinstance(node, Sequence):
        for item in node.items:
            yield from _walk_refs(item)


def _strings(node):
    from vllmlint.source.yamlmodel import Scalar, walk

    for inner in walk(node):
        if isinstance(inner, Scalar) and isinstance(inner.value, str):
            yield inner.value


def file_keys(world: World, real: dict[str, str]) -> Keys:
    """The keys every file of `world` provides and wants (`real`: display path -> path on disk)."""
    from vllmlint.data import knowledge_dir, load_yaml_data
    from vllmlint.k8s.objects import _openshift_marked
    from vllmlint.source.yamlmodel import Mapping, Scalar, Sequence, scalar_str

    keys = Keys()
    lonely: list = []  # (file, object, selector) of the monitors and policies: see the end
    exposure = load_yaml_data(knowledge_dir() / "exposure.yaml") or {}
    auth_kinds = {e["kind"] for e in exposure.get("auth_kinds") or []} | \
        {k for e in exposure.get("auth_reference_annotations") or [] for k in e.get("kinds") or []}
    other_policies = set((load_yaml_data(knowledge_dir() / "network-policy.yaml") or {})
                         .get("other_policy_kinds", {}).get("kinds") or []) - {"NetworkPolicy"}
    for shown, path in real.items():  # every file is a path, a base name and a folder
        keys.provide(shown, "P", os.path.normpath(path))
        keys.provide(shown, "V", "basename", os.path.basename(path))
        if os.path.basename(path) == "config.json" or path.endswith("_config.json"):
            keys.provide(shown, "V", "model-leaf", os.path.basename(os.path.dirname(path)))
        folder = os.path.dirname(path)
        while True:
            keys.want(shown, "F", "envsubst", folder)
            if os.path.dirname(folder) == folder:
                break
            folder = os.path.dirname(folder)
    for obj in world.objects:
        shown = obj.source.display_path
        folder = os.path.dirname(real.get(shown, shown))
        keys.provide(shown, "N", obj.name)
        for pair in obj.labels.items():
            keys.provide(shown, "L", *pair)
        if _openshift_marked(obj):
            keys.provide(shown, "F", "openshift", folder)
        if obj.kind in _RAY_KINDS:
            keys.provide(shown, "G", "ray")
        if obj.kind == "NodePool" and obj.api_version.startswith("karpenter.sh/"):
            keys.provide(shown, "G", "pools")
        if obj.kind in other_policies:
            keys.provide(shown, "G", "other-policy")
        if obj.kind in auth_kinds:
            keys.provide(shown, "G", "auth")
        if obj.kind == "ComposeService":
            keys.provide(shown, "V", "compose-service", obj.name)
            keys.want(shown, "V", "compose-service", obj.name)
            keys.want(shown, "P", os.path.join(folder, ".env"))
            for text in _strings(obj.node.get("env_file")):
                keys.want(shown, "P", os.path.normpath(os.path.join(folder, text)))
            extends = obj.node.get("extends")
            if isinstance(extends, Mapping) and scalar_str(extends.get("file")):
                keys.want(shown, "P", os.path.normpath(os.path.join(folder, scalar_str(extends.get("file")) or "")))
        if obj.kind == "Kustomization":
            for key in ("resources", "bases", "components", "patchesStrategicMerge", "patches", "patchesJson6902"):
                items = obj.node.get(key)
                for item in items.items if isinstance(items, Sequence) else []:
                    value = scalar_str(item) or (scalar_str(item.get("path")) if isinstance(item, Mapping) else None)
                    if value:
                        target = os.path.normpath(os.path.join(folder, value))
                        keys.want(shown, "P", target)
                        for name in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
                            keys.want(shown, "P", os.path.join(target, name))
            if obj.spec is not None and isinstance(obj.spec.get("postBuild"), Mapping):
                keys.provide(shown, "G", "flux")
        keys.want(shown, "G", "flux")  # a Flux substitution anywhere changes VL709 everywhere
        if obj.kind == "PrometheusRule" or obj.kind in ("ServiceMonitor", "PodMonitor") \
                and any(isinstance(m, Mapping) and ("relabelings" in m.keys() or "metricRelabelings" in m.keys())
                        for m in _walk_mappings(obj.spec)):
            keys.want(shown, "G", "releases")  # VL111: judged against the releases of the whole run
        if obj.kind in ("HorizontalPodAutoscaler", "ScaledObject"):
            keys.want(shown, "G", "adapter")  # VL807: "no prometheus-adapter rule of the run defines it"
            ref = obj.spec.get("scaleTargetRef") if obj.spec is not None else None
            target_name = scalar_str(ref.get("name")) if isinstance(ref, Mapping) else None
            kind = (scalar_str(ref.get("kind")) if isinstance(ref, Mapping) else None) or "Deployment"
            if not target_name or world.find(kind, target_name, obj.namespace) is None:
                keys.want(shown, "G", "releases")  # VL111: no target in the run, the run's releases
        if obj.kind == "ConfigMap" and any("seriesQuery" in text for text in _strings(obj.node.get("data"))):
            keys.provide(shown, "G", "adapter")
        if obj.kind in ("Service", "Ingress", "HTTPRoute", "GRPCRoute", "Route", "Gateway", "ConfigMap"):
            keys.want(shown, "G", "auth")  # VL501: authentication anywhere may silence an exposure
        if obj.kind == "Service" and obj.name == "vllm":
            keys.want(shown, "A", "vllm", obj.namespace)
        if obj.kind == "NetworkPolicy":
            keys.want(shown, "A", "pods", obj.namespace)  # VL805: near misses against every pod of the namespace
            keys.want(shown, "G", "other-policy")
        if obj.kind in ("NetworkPolicy", "ServiceMonitor", "PodMonitor", "VMServiceScrape", "VMPodScrape"):
            keys.want(shown, "G", "vllm-pods")  # VL805, VL806: silent when the run has no vLLM pod (FACTS)
            keys.want(shown, "G", "vllm-pods-net")
            selector = obj.spec.get("selector") if obj.spec is not None else None
            lonely.append((shown, obj, obj.spec.get("podSelector" if obj.kind == "NetworkPolicy" else "selector")
                           if obj.spec is not None else None))
            for text in _strings(selector.get("matchLabels") if isinstance(selector, Mapping) else None):
                keys.want(shown, "N", text)  # VL806: a Service (or workload) named like a selector value
        spec = obj.spec
        selectors, strings, refs = _contents(obj.node, spec)
        for text in refs:
            keys.want(shown, "N", text)
        for key, value, parent in selectors:
            if not (key == "selector" and parent is spec and obj.kind not in ("Service", "InferencePool")):
                wanted = _selector_keys(value)
                for one in wanted or [("A", "pods", obj.namespace)]:
                    keys.want(shown, *one)
        for text in strings:
            if "://" in text or "@" in text:
                for match in _URL_HOST.finditer(text):
                    keys.want(shown, "N", match.group(1))
            if _CHAT in text:  # VL711: chat evidence near every server of the namespace (and their count)
                keys.want(shown, "A", "vllm", obj.namespace)
                keys.provide(shown, "A", "chat", obj.namespace)
            if "envsubst" in text:
                keys.provide(shown, "F", "envsubst", folder)
    for found in world.kubeai_settings:
        source = getattr(found, "source", None) or getattr(getattr(found, "node", None), "source", None)
        keys.provide(source.display_path if source is not None else None, "G", "kubeai")
    for template in world.templates:
        shown = template.owner.source.display_path
        for pair in template.labels.items():
            keys.provide(shown, "L", *pair)
            keys.provide(shown, "LK", pair[0])
        keys.provide(shown, "A", "pods", template.namespace)
        if template.owner.kind == "Model":
            keys.want(shown, "G", "kubeai")
    for invocation in world.invocations:
        container = invocation.container
        source = container.pod.owner.source if container is not None else invocation.source
        if source is None and invocation.owner is not None:
            source = invocation.owner.source
        if source is None:
            continue
        shown = source.display_path
        namespace = container.pod.namespace if container is not None else ""
        keys.provide(shown, "A", "vllm", namespace)
        keys.want(shown, "A", "chat", namespace)  # VL711: chat evidence near it
        keys.provide(shown, "G", "releases")
        keys.provide(shown, "G", "vllm")
        if container is not None and container.pod.owner.kind != "ComposeService":
            keys.provide(shown, "G", "vllm-pods")  # VL806's `vllm` list
            host_network = container.pod.spec.get("hostNetwork") if container.pod.spec is not None else None
            if not (isinstance(host_network, Scalar) and host_network.value is True):
                keys.provide(shown, "G", "vllm-pods-net")  # VL805's (vl805_network_policy_gap.py:89-91)
        folder = os.path.dirname(real.get(shown, shown))
        keys.want(shown, "F", "openshift", folder)
        keys.want(shown, "G", "pools")
        if any("ray" == token.text or token.text.endswith("=ray") for token in invocation.tokens):
            keys.want(shown, "G", "ray")
        if invocation.model is not None and not invocation.model.dynamic:
            keys.want(shown, "V", "model-leaf", invocation.model.text.rstrip("/").rsplit("/", 1)[-1])
        if container is not None and container.pod.owner.kind == "ComposeService":
            keys.want(shown, "V", "compose-service", container.pod.owner.name)
    for command in world.shell_commands:
        source = next((t.source for t in command.tokens if t.source is not None), None)
        where = source.display_path if source is not None else None
        if command.container is not None:
            where = command.container.pod.owner.source.display_path
        words = command.words
        if len(words) >= 2 and words[0].rsplit("/", 1)[-1] == "ray" and words[1] == "start":
            keys.provide(where, "G", "ray")
        if any("envsubst" in word for word in words):
            folder = os.path.dirname(real.get(where or "", where or ""))
            keys.provide(where, "F", "envsubst", folder)
        for word in words:
            keys.provide(where, "V", "basename", os.path.basename(word))
            for match in _URL_HOST.finditer(word):
                keys.want(where, "N", match.group(1))
            if _CHAT in word or word == "openai-chat":
                keys.want(where, "A", "vllm", "")
                keys.provide(where, "A", "chat", "")
    # A monitor or policy that selects nothing of its own file is judged against every vLLM pod of the run and
    # the Services in front of them (VL806's "selects no Service: Service X in front of the vLLM pods has no
    # labels", vl806_monitor_selects_nothing.py:283-310; VL805's typo check against every pod of the namespace):
    # then the run's vLLM pods are content, not a fact.
    labelled: dict[str, list[dict[str, str]]] = {}
    for obj in world.objects:
        labelled.setdefault(obj.source.display_path, []).append(obj.labels)
    for template in world.templates:
        labelled.setdefault(template.owner.source.display_path, []).append(template.labels)
    for shown, obj, selector in lonely:
        pairs = _labels_of(selector.get("matchLabels")) if isinstance(selector, Mapping) \
            and "matchLabels" in selector.keys() and "matchExpressions" not in selector.keys() else None
        if pairs is None and isinstance(selector, Mapping) and "matchExpressions" not in selector.keys():
            pairs = _labels_of(selector)  # a Service-style selector: a plain map
        if pairs and any(all(labels.get(k) == v for k, v in pairs) for labels in labelled.get(shown, [])):
            continue  # it selects something of its own file: what it selects elsewhere shares its label keys
        keys.want(shown, "G", "vllm")
        keys.want(shown, "A", "pods", obj.namespace)
        keys.want(shown, "A", "vllm", obj.namespace)
    return keys


def _contents(node, spec) -> tuple[list[tuple], list[str], list[str]]:
    """In one pass over `node`: the (key, value, mapping) of every selector-like key, the string values of every
    scalar below it (aliases may repeat them), and the name-like references under `spec` (a `name`, `serviceName`...
    holding a string, except the `name` of an item of a list that is not a reference, like `containers`)."""
    from vllmlint.source.yamlmodel import Mapping, Scalar, Sequence

    selectors: list[tuple] = []
    strings: list[str] = []
    found = strings.append
    refs: list[str] = []
    walked: set[tuple[int, object]] = set()  # (collection, mode): an alias may be walked in and out of spec
    stack: list[tuple] = [(node, None)] if node is not None else []  # (node, None: outside spec, or skip names)
    found_spec = spec is None
    while stack:
        current, skip = stack.pop()
        if type(current) is Scalar:
            if type(current.value) is str:
                found(current.value)
            continue
        if skip is None and current is spec:
            skip, found_spec = False, True
        mark = (id(current), skip)
        if mark in walked:
            continue
        walked.add(mark)
        if isinstance(current, Mapping):
            for key_node, value in current.items:
                key = key_node.value if type(key_node) is Scalar else None
                if type(key) is str:
                    found(key)
                    if key in _SELECTOR_KEYS:
                        selectors.append((key, value, current))
                else:
                    stack.append((key_node, None))
                if skip is None:
                    stack.append((value, None))
                elif key in _NAME_REF_KEYS and type(value) is Scalar and type(value.value) is str \
                        and not (skip and key == "name"):
                    refs.append(value.value)
                    found(value.value)
                elif isinstance(value, Sequence):
                    inner = key in _NOT_REFS
                    stack.extend((item, inner) for item in value.items)
                else:
                    stack.append((value, False))
        elif isinstance(current, Sequence):
            stack.extend((item, skip if skip is None else False) for item in current.items)
        elif isinstance(current, Scalar) and isinstance(current.value, str):
            found(current.value)
    if not found_spec:  # a spec that is not part of the object's own node (an operator's)
        refs.extend(text for _key, text in _walk_refs(spec))
    return selectors, strings, refs


def _walk_mappings(node):
    from vllmlint.source.yamlmodel import Mapping, walk

    for inner in walk(node):
        if isinstance(inner, Mapping):
            yield inner




def components(provides: MappingOf[str, Collection[tuple]], wants: MappingOf[str, Collection[tuple]],
               files: list[str]) -> list[list[str]]:
    """The connected components of `files` (in their order) under the keys: a key joins the files that provide it
    and the files that want it when it has both (an `A` key of namespace "" meets the same aggregate of every
    namespace: that namespace is compatible with all). FACTS join nothing here: `vllmlint.stream` checks that a
    batch reads them as the run does."""
    parent = {f: f for f in files}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    provided: dict[tuple, list[str]] = {}
    wanted: dict[tuple, list[str]] = {}
    for table, found in ((provided, provides), (wanted, wants)):
        for shown in files:
            for key in found.get(shown, ()):
                if key not in FACTS:
                    table.setdefault(key, []).append(shown)
    # namespace "": an `A` key of "" is also a key of every namespace's (as both a provider and a wanter)
    for table in (provided, wanted):
        for key in [k for k in table if k[0] == "A" and k[2] == ""]:
            for same in [k for k in (*provided, *wanted) if k[:2] == key[:2] and k != key]:
                table.setdefault(same, []).extend(table[key])
    for key, providers in provided.items():
        wanters = wanted.get(key)
        if not wanters or (len(providers) == 1 and all(w == providers[0] for w in wanters)):
            continue
        root = find(providers[0])
        for member in providers[1:] + wanters:
            other = find(member)
            if other != root:
                parent[other] = root
    groups: dict[str, list[str]] = {}
    for shown in files:
        groups.setdefault(find(shown), []).append(shown)
    return list(groups.values())
