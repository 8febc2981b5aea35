"""The vLLM servers a Helm chart's values file deploys, read without rendering the chart (data/chart-values.yaml):
vLLM production-stack's `servingEngineSpec.modelSpec[]` (chart vllm-stack) and llm-d's `decode`/`prefill`
containers (chart llm-d-modelservice).

Each model entry or container becomes one invocation with the argv the chart's template writes, in its order. A
token the values file holds sits at its node (a flag made from a field at the field's key, its value at the value),
so every rule that reads invocations reports on the values file's lines; what the template adds by itself
(`--host 0.0.0.0`, a default port) has no position. The owner of an invocation (`ChartWorkload`) is what the
entry or container is called in the file; the capacity rules read its GPU request and VL109 its env from it, as
for an operator's resource. The pod the chart renders around the container (probes, resources, volumes,
/dev/shm, security contexts) is `ChartWorkload.container`, built by `vllm.helm_pod` from the same values (data
`pod`): the pod-level rules that ask for it (`helm_pod.pod_container`) read it on the values file's lines.
"""
from __future__ import annotations

from typing import Any, Final

from vllmlint.k8s.objects import K8sObject, World, string_map
from vllmlint.lazyre import lazy_compile
from vllmlint.source.helm_values import (LLM_D_MODELSERVICE, PRODUCTION_STACK, chart_table, go_int, helm_text,
                                         truthy)
from vllmlint.source.yamlmodel import Document, Mapping, Node, Scalar, Sequence, field_at, scalar_str
from vllmlint.vllm.images import parse_image
from vllmlint.vllm.invocation import Invocation, OperatorPod, Token, _match_vllm, env_entries, image_entrypoint

VIA_CHART_VALUES: Final = "chart-values"  # a Helm chart's values file (data/chart-values.yaml)


class ChartWorkload(K8sObject):
    """What a values file deploys one vLLM server as: a production-stack `modelSpec` entry, an llm-d `decode` or
    `prefill` container. `kind` names it as the file does (modelSpec, decode, prefill); `gpu` is (resource, count,
    node) of the accelerator the chart requests for it, `env` the (name, literal value or None, node) of each
    variable the chart gives the container."""

    def __init__(self, kind: str, name: str, node: Mapping, source: Any, chart: str,
                 annotations: Node | None = None):
        K8sObject.__init__(self, kind, "", name, "", node, source)
        self.chart = chart
        self.gpu: tuple[str, int, Node] | None = None
        self.env: list[tuple[str, str | None, Node]] = []
        self.pod: OperatorPod | None = None  # where the chart's pod lands (its node affinity, tolerations)
        self.image_node: Node | None = None  # the value naming the image's tag (VL201 points at it)
        # The vLLM container of the pod the chart renders (vllm.helm_pod), and the parts of that pod the values
        # cannot tell (a rule reading one stays silent).
        self.container: Any = None
        self.unknown: frozenset[str] = frozenset()
        # The PersistentVolumeClaims the chart creates for the pod, by claim name: the node of the size each
        # requests (production-stack's pvcStorage), when the claim gets a volume of that size.
        self.claims: dict[str, Node] = {}
        self.dra = False  # llm-d: the accelerator comes from a DRA claim
        self.gpu_note: tuple[str, Node] | None = None  # why a GPU count the file writes makes no request, where
        self.rollout: Any = None  # the Deployment's replicas and strategy as the chart renders them (vllm.helm_pod)
        # Literal strings this file writes that the chart makes into the container's env or a Secret it renders
        # (secret-in-manifest, VL802): (SECRET_VALUE or ENV_VALUE, the key or variable name, the text, its node).
        self.literals: list[tuple[str, str, str, Scalar]] = []
        self._annotation_node = annotations

    @property
    def annotations(self) -> dict[str, str]:
        """The chart copies these onto the Deployment it renders (modelSpec.annotations, <role>.annotations)."""
        return string_map(self._annotation_node)


def chart_values_invocations(world: World) -> list[Invocation]:
    """The vLLM invocations of every values file of the run (`World.chart_values`)."""
    result: list[Invocation] = []
    for chart, document in world.chart_values:
        if chart == PRODUCTION_STACK:
            result.extend(_production_stack(document))
        elif chart == LLM_D_MODELSERVICE:
            result.extend(_modelservice(document))
    return result


# --- reading fields -----------------------------------------------------------------------------------------
def _token(node: Node, text: str | None = None, dynamic: bool = False) -> Token:
    """A token at a values-file node (no YAML scalar of an argv: no fix edits it)."""
    return Token(helm_text(node) or "" if text is None else text, node.source, node.start, node.end, dynamic)


def _listed(node: Node | None) -> list[Token]:
    """A list of argv items (extraArgs, args, command) as tokens at their nodes; a value Helm cannot print as one
    word (a map) is an unknown token."""
    tokens: list[Token] = []
    for item in node.items if isinstance(node, Sequence) else ():
        text = helm_text(item)
        tokens.append(_token(item, text if text is not None else "", dynamic=text is None or "{{" in text))
    return tokens


SECRET_VALUE, ENV_VALUE = "secret", "env"  # ChartWorkload.literals: a value the chart stores in a Secret, an env value


def _literals(root: Node | None, item: Mapping, spec: dict[str, Any]) -> list[tuple[str, str, str, Scalar]]:
    """The literal strings of one `env` entry of the table: a string the chart stores in a Secret it renders
    (`form: secret`; a map names an existing Secret instead), or the `value`s of an env list."""
    key, value = field_at(root if spec.get("root") else item, spec["path"])
    if key is None:
        return []
    if spec["form"] == "secret":
        if isinstance(value, Scalar) and isinstance(value.value, str) and value.value:
            # an entry's key by its name (`hf_token`), a key of the file's root by its path
            name = spec["path"] if spec.get("root") else spec["path"].rsplit(".", 1)[-1]
            return [(SECRET_VALUE, name, value.value, value)]
        return []
    return _env_values(value) if spec["form"] == "list" else []


def _env_values(node: Node | None) -> list[tuple[str, str, str, Scalar]]:
    """The literal string `value`s of an env list, with their names."""
    found: list[tuple[str, str, str, Scalar]] = []
    for item in node.items if isinstance(node, Sequence) else ():
        if not isinstance(item, Mapping):
            continue
        name, value = scalar_str(item.get("name")), item.get("value")
        if name and isinstance(value, Scalar) and isinstance(value.value, str) and value.value:
            found.append((ENV_VALUE, name, value.value, value))
    return found


def _env_list(node: Node | None) -> list[tuple[str, str | None, Node]]:
    return env_entries(node, helm_text)


def _invocation(entry: list[Token], args: list[Token], image: Any, owner: ChartWorkload) -> Invocation | None:
    argv = entry + args
    match = _match_vllm(argv)
    if match is None or not any(token.source is not None for token in argv):
        return None
    kind, size = match
    return Invocation(kind, argv[:size], argv[size:], None, VIA_CHART_VALUES, image, owner=owner)


# --- vLLM production-stack (vllm-stack) -----------------------------------------------------------------------
def _production_stack(document: Document) -> list[Invocation]:
    table = chart_table()[PRODUCTION_STACK]
    root = document.root
    key, enabled = field_at(root, table["engine_enabled"]["path"])
    if key is not None and not truthy(enabled):
        return []
    _, items = field_at(root, table["recognise"]["list"])
    found: list[Invocation] = []
    for item in items.items if isinstance(items, Sequence) else ():
        if isinstance(item, Mapping) and not _skipped(item, table):
            invocation = _model_spec(root, item, table, document)
            if invocation is not None:
                found.append(invocation)
    return found


def _skipped(item: Mapping, table: dict[str, Any]) -> bool:
    for rule in table.get("skip_item") or []:
        key, value = field_at(item, rule["path"])
        if key is None:
            continue
        if rule["equals"] is False and isinstance(value, Scalar) and value.value is False:
            return True  # `ne $modelSpec.enabled false`: only the bool false
        if rule["equals"] is True and truthy(value):
            return True
    return False


def _model_spec(root: Node | None, item: Mapping, table: dict[str, Any], document: Document) -> Invocation | None:
    if not any(key in item for key in table["recognise"]["item_keys"]):
        return None
    spec = table["image"]
    repository, tag = helm_text(item.get(spec["repository"])), helm_text(item.get(spec["tag"]))
    if not repository or not tag:
        return None  # `required`: the chart refuses to render without both
    image = parse_image(f"{repository}:{tag}") if "{{" not in repository + tag else None
    entrypoint = table["entrypoint"]
    command = (entrypoint.get("by_repository") or {}).get(repository) or entrypoint["default"]
    owner = ChartWorkload(table["kind"], helm_text(item.get("name")) or "", item, document.source, PRODUCTION_STACK,
                          item.get("annotations"))
    owner.image_node = item.get(spec["tag"])
    args: list[Token] = []
    model = item.get(table["model"]["path"])
    if not isinstance(model, Scalar) or not helm_text(model):
        return None  # no model: the chart writes an empty argument
    args.append(_token(model))
    for arg in table["args"]:
        args.extend(_argument(root, item, arg))
    owner.gpu = _stack_gpu(item, table["gpu"])
    written = item.get(table["gpu"]["count"])
    if owner.gpu is None and not truthy(item.get(table["gpu"].get("replaced_by", ""))) and truthy(written) \
            and isinstance(written, Scalar) and isinstance(written.value, float) and go_int(written) == 0:
        owner.gpu_note = (f"`{table['gpu']['count']}: {helm_text(written)}` is read with sprig's `int`, which "
                          "truncates it to 0: the chart writes no GPU request at all", written)
    owner.pod = _stack_pod(root, item, owner, table.get("placement") or {})
    for env in table.get("env") or []:
        owner.env.extend(_env(root, item, env))
        owner.literals.extend(_literals(root, item, env))
    if isinstance(root, Mapping):
        from vllmlint.vllm.helm_pod import stack_pod, stack_rollout

        owner.container = stack_pod(root, item, owner)
        owner.rollout = stack_rollout(root, item, owner)
    return _invocation([Token(text, None) for text in command], args, image, owner)


def _argument(root: Node | None, item: Mapping, arg: dict[str, Any]) -> list[Token]:
    form = arg["form"]
    if form == "constant":
        return [Token(text, None) for text in arg.get("values") or []]
    key, value = field_at(root if arg.get("root") else item, arg["path"])
    if key is None:
        default = arg.get("default")
        return [Token(arg["flag"], None), Token(default, None)] if form == "value" and default is not None else []
    if form == "list":
        return _listed(value)
    if form == "switch":
        if truthy(value):
            return [_token(key, arg["flag"])]
        off = arg.get("off_flag")
        return [_token(key, off)] if off else []
    if form == "generated":
        return [_token(key, arg["flag"]), _token(key, "", dynamic=True)] if truthy(value) else []
    # form == "value": `hasKey` writes whatever is there (a null prints nothing: no token), `if` only a true value
    if arg.get("when") == "truthy" and not truthy(value):
        return []
    text = helm_text(value)
    if text is None:
        return []
    text = arg.get("prefix", "") + text
    return [_token(key, arg["flag"]), _token(value if isinstance(value, Scalar) else key, text, dynamic="{{" in text)]


def _env(root: Node | None, item: Mapping, env: dict[str, Any]) -> list[tuple[str, str | None, Node]]:
    key, value = field_at(root if env.get("root") else item, env["path"])
    if key is None:
        return []
    form = env["form"]
    if form == "list":
        return _env_list(value)
    if form == "secret":
        return [(env["name"], None, key)] if truthy(value) else []
    wanted = env["equals"]
    matches = truthy(value) if wanted is True else helm_text(value) == wanted
    return [(env["name"], env["value"], key)] if matches else []


def _stack_gpu(item: Mapping, spec: dict[str, Any]) -> tuple[str, int, Node] | None:
    """`requestGPU` of `requestGPUType` (default nvidia.com/gpu), as requests and limits, when `resources` (which
    replaces them, as written) is not given."""
    replaced = spec.get("replaced_by")
    if replaced and truthy(item.get(replaced)):
        return None
    count_node = item.get(spec["count"])
    count = go_int(count_node)
    if count is None or count <= 0 or count_node is None:
        return None
    resource = helm_text(item.get(spec["resource"])) if spec.get("resource") else None
    return resource or spec["default_resource"], count, count_node


def _pod(owner: ChartWorkload, fields: dict[str, Any], anchor: Node) -> OperatorPod:
    """The placement of the chart's pod from the pod-spec fields it writes (nodeSelector, affinity, tolerations:
    values-file nodes, or plain data made into nodes at `anchor`)."""
    from types import SimpleNamespace

    from vllmlint.k8s.operators import synthetic
    from vllmlint.k8s.placement import placement

    spec = synthetic({key: value for key, value in fields.items() if value is not None}, anchor)
    return OperatorPod(owner, placement(SimpleNamespace(spec=spec)))  # type: ignore[arg-type]


def _stack_pod(root: Node | None, item: Mapping, owner: ChartWorkload, spec: dict[str, Any]) -> OperatorPod | None:
    """production-stack's pod placement: `affinity` as written, else `nodeSelectorTerms` as the required node
    affinity (not with `nodeName`); tolerations of servingEngineSpec and the modelSpec (appended, or the
    modelSpec's alone with tolerationsPolicy override)."""
    if not spec:
        return None
    fields: dict[str, Any] = {}
    if truthy(item.get(spec["affinity"])):
        fields["affinity"] = item.get(spec["affinity"])
    elif truthy(item.get(spec["node_selector_terms"])) and not truthy(item.get(spec["node_name"])):
        fields["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": item.get(spec["node_selector_terms"])}}}
    shared = field_at(root, spec["shared_tolerations"])[1]
    own = item.get(spec["tolerations"])
    override = helm_text(item.get(spec["tolerations_policy"])) == "override"
    listed = [t for node in ((own,) if override and truthy(own) else (shared, own))
              if isinstance(node, Sequence) for t in node.items]
    if listed:
        fields["tolerations"] = listed
    return _pod(owner, fields, item)


# --- llm-d modelservice ---------------------------------------------------------------------------------------
_NAME_ACTION = lazy_compile(r"\{\{-?\s*\.Values\.modelArtifacts\.name\s*-?\}\}")


def _modelservice(document: Document) -> list[Invocation]:
    table = chart_table()[LLM_D_MODELSERVICE]
    root = document.root
    assert isinstance(root, Mapping)
    found: list[Invocation] = []
    requester = table.get("requester") or {}
    for role in table["recognise"]["roles"]:
        spec = root.get(role)
        if not isinstance(spec, Mapping):
            continue
        key, create = field_at(spec, table["role_create"]["path"])
        if key is not None and not truthy(create):
            continue
        if role == requester.get("role") and truthy(field_at(root, requester["path"])[1]):
            continue  # another template renders the decode pod (the requester's ReplicaSet)
        containers = spec.get(table["recognise"]["containers"])
        for container in containers.items if isinstance(containers, Sequence) else ():
            if isinstance(container, Mapping):
                invocation = _container(root, role, spec, container, table, document)
                if invocation is not None:
                    found.append(invocation)
    return found


def _model_token(root: Mapping, table: dict[str, Any]) -> Token | None:
    spec = table["model"]
    uri_node, name_node = field_at(root, spec["uri"])[1], field_at(root, spec["name"])[1]
    uri = helm_text(uri_node) if uri_node is not None else spec["default_uri"]
    where = uri_node if uri_node is not None else name_node
    if where is None:
        where = root.key_node(spec["uri"].split(".", 1)[0])
    if uri is None or where is None:
        return None
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in spec["schemes"]:
        return _token(where, rest or uri, dynamic=True)  # pvc:// (a path in the mounted volume), oci://...
    if scheme == "pvc+hf":
        parts = rest.split("/")
        rest = "/".join(parts[-2:]) if len(parts) >= 2 else rest
    name = helm_text(name_node)
    if _NAME_ACTION.search(rest):
        if name is None:
            return _token(where, rest, dynamic=True)
        rest = _NAME_ACTION.sub(lambda _: name, rest)
    if len(rest) >= 2 and rest[0] == rest[-1] and rest[0] in "\"'":
        rest = rest[1:-1]  # `hf://"{{ ... }}"`: the rendered argument is YAML, its quotes are not the model's
    return _token(where, rest, dynamic="{{" in rest or not rest)


def _scalar_or_default(root: Node, dotted: str, default: str) -> Token:
    key, value = field_at(root, dotted)
    text = helm_text(value)
    return _token(value, text) if isinstance(value, Scalar) and text is not None else Token(default, None)


def _container(root: Mapping, role: str, spec: Mapping, container: Mapping, table: dict[str, Any],
               document: Document) -> Invocation | None:
    image_node = container.get("image")
    image_text = helm_text(image_node)
    if not image_text:
        return None  # `required`: the chart refuses to render it
    image = parse_image(image_text) if "{{" not in image_text else None
    owner = ChartWorkload(role, helm_text(container.get("name")) or "vllm", container, document.source,
                          LLM_D_MODELSERVICE, spec.get("annotations"))
    owner.image_node = image_node
    owner.env = _env_list(container.get(table["env"]["path"]))
    owner.literals = _env_values(container.get(table["env"]["path"]))
    own_args = _listed(container.get(table["args"]["path"]))
    command_spec = table["model_command"]
    mode = helm_text(container.get(command_spec["path"])) or command_spec["default"]
    commands = table["commands"]
    parallelism = _parallelism(spec, table["parallelism"])
    owner.gpu = _modelservice_gpu(root, role, spec, container, image_text, parallelism, table["gpu"], owner)
    owner.pod = _modelservice_pod(spec, owner, table.get("placement") or {})
    from vllmlint.vllm.helm_pod import modelservice_pod, modelservice_rollout

    owner.container = modelservice_pod(root, spec, container, owner)
    owner.rollout = modelservice_rollout(root, role, spec, owner)
    if mode == "custom" or mode not in commands:
        command = _listed(container.get("command"))
        return _invocation(command, own_args, image, owner) if command and mode == "custom" else None
    model = _model_token(root, table)
    args: list[Token] = []
    if mode == "vllmServe":
        entry = [Token(text, None) for text in commands[mode]["command"]]
    else:
        found = image_entrypoint(image) if image is not None else None
        if not found:
            return None  # the image's own entrypoint is not in the image table
        entry = [Token(text, None) for text in found]
        args.append(Token(commands[mode]["model_flag"], None) if model is None or model.source is None
                    else Token(commands[mode]["model_flag"], model.source, model.start, model.end))
    if model is not None:
        args.append(model)
    ports = table["port"]
    if role == "decode" and not (isinstance(field_at(root, ports["decode"]["unless"])[1], Scalar)
                                 and field_at(root, ports["decode"]["unless"])[1].value is False):  # type: ignore[union-attr]
        port = _scalar_or_default(root, ports["decode"]["path"], ports["decode"]["default"])
    else:
        port = _scalar_or_default(root, ports["service_port"]["path"], ports["service_port"]["default"])
    args += [Token("--port", None) if port.source is None else Token("--port", port.source, port.start, port.end),
             port]
    args += _parallel_flags(parallelism, table["parallelism"]["flags"], spec.get(table["parallelism"]["path"]))
    served = table["served_name"]
    key, name = field_at(root, served["path"])
    if key is not None and isinstance(name, Scalar) and helm_text(name) is not None:
        args += [_token(key, served["flag"]), _token(name)]
    else:
        args += [Token(served["flag"], None), Token("random/model", None, dynamic=True)]
    tracing = table.get("tracing")
    if tracing:
        key, enabled = field_at(root, tracing["path"])
        if key is not None and truthy(enabled):
            for flag in tracing["flags"]:
                args += [_token(key, flag), _token(key, "", dynamic=True)]
    return _invocation(entry, args + own_args, image, owner)


def _parallelism(spec: Mapping, table: dict[str, Any]) -> dict[str, tuple[int | None, Node | None]]:
    """Each of tensor, data, dataLocal, workers: (its value merged over the chart's default, its node when the
    file writes it); the value None when it is no number."""
    written = spec.get(table["path"])
    merged: dict[str, tuple[int | None, Node | None]] = {}
    for name, default in (table.get("defaults") or {}).items():
        node = written.get(name) if isinstance(written, Mapping) else None
        merged[name] = (go_int(node), node) if node is not None else (int(default), None)
    return merged


def _sizes(parallelism: dict[str, tuple[int | None, Node | None]]) -> dict[str, tuple[int, Node | None]] | None:
    """tensor, data (the data-parallel size) and dataLocal as the chart's helpers compute them; None when a value
    is no number."""
    values = {name: value for name, (value, _) in parallelism.items()}
    if any(value is None for value in values.values()):
        return None
    tensor, data, local, workers = (values.get(k) or 0 for k in ("tensor", "data", "dataLocal", "workers"))
    node = {name: found for name, (_, found) in parallelism.items()}
    size_tp = (tensor, node.get("tensor")) if tensor else (1, None)
    if data:
        size_dp = (data, node.get("data"))
    elif local and workers:
        size_dp = (local * workers, node.get("dataLocal"))
    else:
        size_dp = (local, node.get("dataLocal")) if local else (1, None)
    if local:
        size_local = (local, node.get("dataLocal"))
    elif data and workers:
        size_local = (data // workers, node.get("data"))
    else:
        size_local = (data, node.get("data")) if data else (1, None)
    return {"tensor": size_tp, "data": size_dp, "dataLocal": size_local}


def _parallel_flags(parallelism: dict[str, tuple[int | None, Node | None]], flags: dict[str, str],
                    written: Node | None) -> list[Token]:
    """The parallel-size flags the chart writes (each when above 1): the flag at the key of the field it comes
    from, the size at its value."""
    keys = {id(value): key for key, value in written.items} if isinstance(written, Mapping) else {}
    sizes = _sizes(parallelism)
    tokens: list[Token] = []
    for name, flag in flags.items():
        if sizes is None:
            node = parallelism.get(name, (None, None))[1]
            if node is not None:  # not a number the chart can compute with: the flag and its value are unknown
                tokens += [_token(keys.get(id(node), node), flag), _token(node, "", dynamic=True)]
            continue
        size, node = sizes[name]
        if size > 1:
            tokens += [Token(flag, None) if node is None else _token(keys.get(id(node), node), flag),
                       Token(str(size), None) if node is None else _token(node, str(size))]
    return tokens


def _modelservice_gpu(root: Mapping, role: str, spec: Mapping, container: Mapping, image: str,
                      parallelism: dict[str, tuple[int | None, Node | None]], table: dict[str, Any],
                      owner: ChartWorkload) -> tuple[str, int, Node] | None:
    """The accelerator the chart requests for a container: its own `resources.limits` of the accelerator's
    resource, else dataLocal x tensor of it; None for DRA (claims), a CPU or simulator container, or when a value
    is no number."""
    role_dra = field_at(spec, table["role_dra"]) if table.get("role_dra") else (None, None)
    dra = role_dra[1] if role_dra[0] is not None else field_at(root, table["dra"])[1] if table.get("dra") else None
    if truthy(dra):
        owner.dra = True
        return None  # DRA: the accelerator comes from resource claims
    role_type = field_at(spec, table["role_accelerator_type"])[1] if table.get("role_accelerator_type") else None
    kind = helm_text(role_type) if role_type is not None else helm_text(field_at(root, table["accelerator_type"])[1])
    kind = kind or table["default_type"]
    if kind in (table.get("none_types") or []) or any(name in image for name in table.get("none_images") or []):
        return None
    own = field_at(root, "accelerator.resources")[1]
    resource = helm_text(own.get(kind)) if isinstance(own, Mapping) and kind in own else None
    resource = resource or (table.get("resources") or {}).get(kind) or table["resources"].get(table["default_type"])
    if not resource:
        return None
    limits = field_at(container, "resources.limits")[1]
    written = limits.get(resource) if isinstance(limits, Mapping) else None
    if written is not None:
        count = go_int(written)
        return (resource, count, written) if count is not None else None
    sizes = _sizes(parallelism)
    if sizes is None:
        return None
    count = sizes["dataLocal"][0] * sizes["tensor"][0]
    if count < 1:
        return None
    where = sizes["tensor"][1] or sizes["dataLocal"][1] or container
    return resource, count, where


def _modelservice_pod(spec: Mapping, owner: ChartWorkload, table: dict[str, Any]) -> OperatorPod | None:
    """llm-d's pod placement: <role>.nodeSelector and tolerations as written, acceleratorTypes (labelKey In
    labelValues) as the required node affinity."""
    if not table:
        return None
    fields: dict[str, Any] = {"nodeSelector": spec.get(table["node_selector"]),
                              "tolerations": spec.get(table["tolerations"])}
    key = field_at(spec, table["label_key"])[1]
    values = field_at(spec, table["label_values"])[1]
    if truthy(key):
        expression: dict[str, Any] = {"key": key, "operator": "In"}
        if truthy(values):
            expression["values"] = values
        fields["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expression]}]}}}
    return _pod(owner, fields, spec)
