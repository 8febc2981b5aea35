"""VL809: an object the API server (or its CRD's schema) rejects, found with the real schemas.

Core kinds are validated against the strict schemas of one Kubernetes minor (kubernetes-validate, from
Kubernetes' OpenAPI document: `kubectl apply` validates fields strictly by default since 1.27, so an unknown
field is an error, not a warning); the custom resources vllmlint reads against the `openAPIV3Schema` of
their published CRDs (Karpenter, LWS, KServe, KubeRay, prometheus-operator, KEDA). `schemas/k8s/index.json`
records the versions and sources; `vllmlint/k8s/schemas.py` loads them lazily.

Not judged (precision): groups nothing vendored covers (a CRD of another project), CRD versions not vendored
(`karpenter.sh/v1beta1`), values that are templates (`${VAR}`, `{{ }}`, `<your-subnet>`), `status`, CEL
rules (`x-kubernetes-validations`), and `required` in partial objects (Kustomize patch files named by a
Kustomization of the run, strategic-merge patches with `$patch` directives, excerpts in Markdown).
"""
from __future__ import annotations

import posixpath
import re
from functools import lru_cache
from typing import Any, Iterator

from vllmlint.checks import Context
from vllmlint.finding import Finding, Severity
from vllmlint.k8s import schemas as sch
from vllmlint.k8s.objects import K8sObject
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, scalar_str, walk
from vllmlint.lazyre import lazy_compile

_TEMPLATED = re.compile(r"\$\{|\$\(|\{\{|\$[A-Za-z_]|<[^<>\s][^<>]*>|%\w+%|__[A-Z][A-Z0-9_]*__|^\s*(\.\.\.|…)\s*$")
_KUSTOMIZE = "kustomize.config.k8s.io/"
# A file named as a patch (`s3-env-patch.yaml`, `manager_image_patch.yaml`, `patches/gpu.yaml`): Kustomize's
# kustomization.yaml needs no apiVersion/kind, so the run may not see the Kustomization that names it.
_PATCH_NAME = lazy_compile(r"(^|[-_.])patch(es)?([-_.]|$)", re.I)
_TYPE_NAMES = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
               "object": "a mapping", "array": "a list", "null": "null"}
_MAX_PER_OBJECT = 12
_KUBE_VERSION = re.compile(r"v\d+((alpha|beta)\d+)?")


@lru_cache(maxsize=None)
def _data(name: str) -> dict:
    from vllmlint.data import knowledge_dir, load_yaml_data

    return load_yaml_data(knowledge_dir() / name) or {}


def _templated(node: Node | None) -> bool:
    """A template placeholder, not a value: `${VAR}`, `<your-subnet>`, or an unquoted `{{VAR}}`, which YAML
    reads as a mapping whose key is a mapping (no manifest has such a key)."""
    if isinstance(node, Mapping):
        # `{volume-id}` (a flow mapping of one key without value) or `{{HF_TOKEN}}` (a mapping key)
        return bool(node.items) and all(not isinstance(key, Scalar) or isinstance(value, Scalar) and value.value is None
                                        for key, value in node.items)
    return isinstance(node, Scalar) and isinstance(node.value, str) and _TEMPLATED.search(node.text) is not None


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "null"


def _dotted(path: tuple) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text or "the object"


def _in(path: tuple) -> str:
    return f"`{_dotted(path)}`" if path else "the top level"


# --- partial objects ------------------------------------------------------------------------------------
def _patch_files(world) -> set[str]:
    """Paths (as the run names them) of the patch files the run's Kustomizations name."""
    found: set[str] = set()
    for obj in world.of_kind("Kustomization"):
        if not obj.api_version.startswith(_KUSTOMIZE):
            continue
        base = posixpath.dirname(obj.source.path.replace("\\", "/"))
        entries: list[Node] = []
        for key in ("patchesStrategicMerge", "patches", "patchesJson6902"):
            items = obj.node.get(key)
            if isinstance(items, Sequence):
                entries.extend(items.items)
        for entry in entries:
            path = scalar_str(entry) if isinstance(entry, Scalar) else \
                scalar_str(entry.get("path")) if isinstance(entry, Mapping) else None
            if path:
                found.add(posixpath.normpath(posixpath.join(base, path)))
    # Patch files named by a kustomization.yaml without apiVersion/kind (vllmlint.source.kustomize reads them).
    found.update(posixpath.normpath(p.replace("\\", "/")) for p in getattr(world, "kustomize_patches", ()))
    return found


def _has_patch_directive(node: Node | None) -> bool:
    """A strategic-merge directive key (`$patch`, `$setElementOrder/...`, `$retainKeys`) anywhere below."""
    return any(isinstance(n, Mapping) and any(isinstance(k, Scalar) and k.text.startswith("$") for k, _ in n.items)
               for n in walk(node))  # each node once, aliases included


def _partial(obj: K8sObject, patches: set[str]) -> bool:
    path = obj.source.path.replace("\\", "/")
    parts = path.split("/")
    if posixpath.normpath(path) in patches or _PATCH_NAME.search(parts[-1]) or \
            len(parts) > 1 and parts[-2].lower() in ("patch", "patches"):
        return True
    if path.lower().endswith((".md", ".markdown")):
        return True  # a documentation excerpt: fields may be left out on purpose
    if not obj.name:
        return True  # no name: never applied as it stands (an excerpt, a patch, a skeleton)
    return _has_patch_directive(obj.node)


# --- positions ------------------------------------------------------------------------------------------
def _locate(data: Any, path: tuple) -> tuple[Node | None, Node | None]:
    """(value node, key node) at `path` of an `instance`."""
    current, key_node, value_node = data, None, getattr(data, "node", None)
    for step in path:
        container = current
        try:
            current = container[step]
        except (KeyError, IndexError, TypeError):
            return value_node, key_node
        node = getattr(container, "node", None)
        if isinstance(step, int):
            key_node = None
            value_node = node.items[step] if isinstance(node, Sequence) and step < len(node.items) else None
        else:
            key_node = getattr(container, "keys_", {}).get(step)
            value_node = node.get(step) if isinstance(node, Mapping) else None
    return value_node, key_node


# --- messages -------------------------------------------------------------------------------------------
def _what(obj: K8sObject) -> str:
    return f"{obj.kind} {obj.name}" if obj.name else obj.kind


def _schema_name(obj: K8sObject) -> str:
    if sch.is_crd(obj.api_version):
        return f"the {obj.api_version} {obj.kind} CRD schema"
    return f"Kubernetes {sch.kubernetes_minor()}'s {obj.api_version} {obj.kind} schema"


def _schema_at(obj: K8sObject, path: tuple, defs: dict) -> Any:
    schema = sch.root_schema(obj.api_version, obj.kind)
    for step in path:
        schema = sch.child(schema, step, defs)
        if schema is None:
            return None
    return schema


def _elsewhere(obj: K8sObject, path: tuple, key: str, defs: dict) -> str:
    """Where `key` is a field, near `path` (the mapping it was found in): below it, or below its parent."""
    if not path and key in sch.object_meta_fields():
        return f"Move it under `metadata` (`metadata.{key}`)."
    for up in range(0, min(len(path), 4) + 1):
        base = path[:len(path) - up]
        here = _schema_at(obj, base, defs)
        if here is None:
            continue
        found = sch.find_field(here, key, defs)
        if up > 2:
            # Further up (a container's `securityContext.fsGroup` belongs to the pod's), only a field one mapping
            # below: a deeper match elsewhere in the pod is a guess, not a place.
            found = [p for p in found if len(p) <= 2]
        if found:
            places = [".".join(([_dotted(base)] if base else []) + p[:-1]) for p in found]
            return f"`{key}` is a field of {' and '.join(f'`{p}`' for p in places)}: move it there."
    return ""


def _moved(obj: K8sObject, key: str) -> str:
    """What replaced a field of an older API version of the object's project (`data/api-groups.yaml`)."""
    group = (sch.split_api_version(obj.api_version) or ("",))[0]
    for entry in _data("api-groups.yaml").get("moved_fields", ()):
        if entry["group"] == group and entry["field"] == key:
            return str(entry["instead"])
    return ""


def _additional(obj, data, error, path, defs) -> Iterator[tuple[Node, str, str]]:
    value = error.instance
    if not isinstance(value, dict):
        return
    schema = error.schema
    allowed = set(sch.properties(schema, defs))
    patterns = [re.compile(p) for p in (schema.get("patternProperties") or {})]
    for key in value:
        if key in allowed or any(p.search(key) for p in patterns):
            continue
        key_node = getattr(value, "keys_", {}).get(key)
        if key_node is None or _templated(key_node) or key.startswith("$"):
            continue
        hint = _moved(obj, key) or _elsewhere(obj, path, key, defs)
        if not hint:
            import difflib  # here, not at start-up: only a near miss needs it
            close = difflib.get_close_matches(key, sorted(allowed), n=1, cutoff=0.75)
            if close:
                hint = f"Did you mean `{close[0]}`?"
        # the schema after the first line's `: ` (formatters.report.split_message)
        yield key_node, f"{_dotted(path + (key,))}:unknown", (
            f"`{key}` is not a field of {_in(path)}: {_schema_name(obj)} has no such field, so the API server "
            f"rejects {_what(obj)} (kubectl's strict field validation). {hint or 'Remove it.'}")


def _expected(schema: dict) -> list[str]:
    kinds = schema.get("type")
    if isinstance(kinds, str):
        return [kinds]
    if isinstance(kinds, list):
        return [k for k in kinds if k != "null"]
    result: list[str] = []
    for branch in schema.get("anyOf") or schema.get("oneOf") or ():
        if isinstance(branch, dict):
            result.extend(k for k in _expected(branch) if k not in result)
    return result


def _value_message(obj, error, path) -> str | None:
    value, where = error.instance, _dotted(path)
    kind = error.validator
    if kind in ("type", "anyOf", "oneOf"):
        quantity = [e for e in (error.context or ()) if e.validator == "format"]
        if quantity and isinstance(value, str):
            fix = ""
            match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGTPE])(i?)B\s*", value)
            if match:
                fix = f" (`{match.group(1)}{match.group(2)}{match.group(3)}` if `{value}` was meant)"
            return (f"`{value}` in `{where}` is not a Kubernetes quantity, so the API server rejects "
                    f"{_what(obj)}: write a number with a suffix such as `16Gi`, `500m` or `1.5`{fix}")
        expected = _expected(error.schema)
        if not expected:
            return None
        got = _type_of(value)
        want = " or ".join(_TYPE_NAMES.get(e, e) for e in expected)
        advice = ""
        if "string" in expected and got in ("integer", "number", "boolean"):
            advice = f": quote it (`\"{value}\"`)" if not isinstance(value, bool) else ": quote it"
        elif got == "string" and set(expected) & {"integer", "number"} and re.fullmatch(r"-?\d+(\.\d+)?", value):
            advice = ": remove the quotes"
        return (f"`{where}` must be {want}, not {_TYPE_NAMES.get(got, got)}, so the API server rejects "
                f"{_what(obj)}{advice}")
    if kind == "enum":
        options = ", ".join(f"`{v}`" for v in error.validator_value[:12])
        return f"`{value}` is not a value `{where}` accepts, so the API server rejects {_what(obj)}: use one of {options}."
    if kind == "format":
        return None  # reported by the anyOf around it
    if kind == "pattern":
        return (f"`{where}` is `{value}`, which does not match the pattern `{error.validator_value}` of "
                f"{_schema_name(obj)}, so the API server rejects {_what(obj)}")
    return f"`{where}`: {error.message}, so the API server rejects {_what(obj)} ({_schema_name(obj)})"


def _findings(ctx: Context, obj: K8sObject, patches) -> Iterator[Finding | None]:
    if sch.fast_valid(obj.api_version, obj.kind, obj.node) is not False:
        return  # valid, or too large to walk (aliases expanded past the budget)
    partial = _partial(obj, patches())
    try:
        data = sch.instance(obj.node)
    except sch._TooLarge:
        return
    defs = sch.defs_of(obj.api_version, obj.kind)
    seen: set = set()
    count = 0
    for item in sch.validate(obj.api_version, obj.kind, data):
        error, path = item.error, item.path
        if path and path[0] == "status":
            continue
        if error.validator == "additionalProperties":
            for node, value, message in _additional(obj, data, error, path, defs):
                if (node.start, "add") not in seen:
                    seen.add((node.start, "add"))
                    count += 1
                    yield ctx.finding(node, message, about=obj, value=value)
            continue
        if error.validator == "required":
            if partial:
                continue
            nulls: set[str] = getattr(error.instance, "nulls", set())
            missing = [m for m in error.validator_value if isinstance(error.instance, dict) and m not in error.instance]
            if set(missing) & nulls:
                continue  # `template:` left empty: a placeholder to fill in, not a field forgotten
            value_node, key_node = _locate(data, path)
            where = key_node or (obj.node.get("kind") if not path else value_node)
            if where is None or not missing or _templated(value_node):
                continue
            fields, them = "`" + "`, `".join(missing) + "`", "it" if len(missing) == 1 else "them"
            lacks = f"the required field {fields}" if len(missing) == 1 else f"{len(missing)} required fields: {fields}"
            schema = _schema_name(obj)
            message = (f"{_in(path)} lacks {lacks}. {schema[0].upper() + schema[1:]} requires {them}, so the "
                       f"API server rejects {_what(obj)}: add {them}.")
            message = message[0].upper() + message[1:]
        else:
            value_node, key_node = _locate(data, path)
            where = value_node or key_node
            if where is None or _templated(value_node):
                continue
            text = _value_message(obj, error, path)
            if text is None:
                continue
            message = text
        marker = (where.start, error.validator)
        if marker in seen:
            continue
        seen.add(marker)
        count += 1
        if count > _MAX_PER_OBJECT:
            return
        yield ctx.finding(where, message, about=obj, value=f"{_dotted(path)}:{error.validator}")


# --- apiVersion and kind ----------------------------------------------------------------------------------
def _kind_findings(ctx: Context, obj: K8sObject, groups: dict) -> tuple[list[Finding | None], bool]:
    """(findings about the apiVersion/kind, whether the object can be validated)."""
    api_node, kind_node = obj.node.get("apiVersion"), obj.node.get("kind")
    if _templated(api_node) or _templated(kind_node) or obj.kind.endswith("List"):
        return [], False
    split = sch.split_api_version(obj.api_version)
    if split is None:
        return [], False
    group, version = split
    if not _KUBE_VERSION.fullmatch(version):
        return [], False  # `apiVersion: builtin` (a Kustomize plugin's config) and the like: not an API version
    if group in groups and api_node is not None:
        return [ctx.finding(api_node, f"`{obj.api_version}` is not an API group anything serves, so the API "
                            f"server rejects {_what(obj)} (`no matches for kind \"{obj.kind}\"`). "
                            + groups[group], about=obj)], False
    core = group in sch.core_groups()
    if not core and group not in sch.crd_groups():
        return [], False  # a group vllmlint has no schemas for: cannot know
    kinds = sch.served(obj.api_version)
    if kinds is not None and obj.kind in kinds:
        return [], True
    where = kind_node if kind_node is not None else api_node
    if where is None:
        return [], False
    others = sch.serving_versions(group, obj.kind) or sch.kind_anywhere(obj.kind)
    if kinds is None:
        if not core:
            return [], False  # a CRD version not vendored (older or newer than the snapshot): silent
        span = sch.removed(obj.api_version, obj.kind)
        if span is not None:
            minor = span[1].split(".")
            gone = f"was removed in Kubernetes {minor[0]}.{int(minor[1]) + 1} (served up to {span[1]})"
        else:
            gone = (f"is not served by any Kubernetes release from {sch.index()['history_minors'][0]} to "
                    f"{sch.kubernetes_minor()}")
        use = f": use `apiVersion: {others[0]}`" if others else ""
        return [ctx.finding(api_node or where, f"`{obj.api_version}` {obj.kind} {gone}, so current API servers "
                            f"reject it{use}", about=obj, severity=Severity.WARNING)], False
    if others:
        # Another version of the same group serves it: removed from (or not yet in) this one, as a version
        # Kubernetes removed (warning); another group: the wrong apiVersion (error).
        same_group = (sch.split_api_version(others[0]) or ("?",))[0] == group
        return [ctx.finding(api_node or where, f"`{obj.api_version}` has no kind `{obj.kind}`, so the API server "
                            f"rejects it: {obj.kind} is `apiVersion: {others[0]}`", about=obj,
                            severity=Severity.WARNING if same_group else None)], False
    import difflib  # here, not at start-up: only a near miss needs it
    close = [k for k in kinds if k.lower() == obj.kind.lower()] or \
        difflib.get_close_matches(obj.kind, kinds, n=1, cutoff=0.8)
    hint = f": did you mean `{close[0]}`?" if close else ""
    return [ctx.finding(where, f"`{obj.api_version}` has no kind `{obj.kind}`, so the API server rejects it "
                        f"(`no matches for kind \"{obj.kind}\" in version \"{obj.api_version}\"`){hint}",
                        about=obj)], False


# --- StorageClass parameters ------------------------------------------------------------------------------
def _storage_findings(ctx: Context, obj: K8sObject, partial: bool) -> Iterator[Finding | None]:
    table = _data("storage-parameters.yaml")
    provisioner = obj.node.get("provisioner")
    name = scalar_str(provisioner)
    entry = next((p for p in table.get("provisioners", ()) if p["provisioner"] == name), None)
    if entry is None:
        return
    prefixes = tuple(p["prefix"] for p in table.get("reserved_prefixes", ()))
    params = obj.node.get("parameters")
    present: set[str] = set()
    unknown = []
    if isinstance(params, Mapping):
        for key, _value in params.items:
            if not isinstance(key, Scalar) or _templated(key):
                continue
            present.add(key.text)
            if key.text not in entry["parameters"] and not key.text.startswith(prefixes):
                unknown.append(key)
    static = " " + entry["static"] if entry.get("static") and unknown else ""
    for key in unknown:
        import difflib  # here, not at start-up: only a near miss needs it
        close = difflib.get_close_matches(key.text, entry["parameters"], n=1, cutoff=0.8)
        hint = f" Did you mean `{close[0]}`?" if close else ""
        yield ctx.finding(key, f"`{key.text}` is not a StorageClass parameter of `{name}`, which ignores it. "
                          f"Checked against {entry['driver']} {entry['version'].split(' ')[0]}.{hint}{static}",
                          about=obj,
                          severity=Severity.WARNING)
        static = ""
    missing = [p for p in entry["required"] if p not in present]
    if missing and not partial and not (isinstance(params, Mapping) and any(_templated(v) for _k, v in params.items)):
        where = obj.node.key_node("parameters") or provisioner
        if where is not None:
            yield ctx.finding(where, f"StorageClass {obj.name or ''} has no `{'`, `'.join(missing)}` "
                              f"parameter{'s' if len(missing) > 1 else ''}, which `{name}` needs. It needs "
                              f"{'them' if len(missing) > 1 else 'it'} to create a file system, so every "
                              "PersistentVolumeClaim of it stays Pending: add "
                              f"{'them' if len(missing) > 1 else 'it'}. " + (entry.get("static") or ""), about=obj)


def check(ctx: Context) -> Iterator[Finding | None]:
    world = ctx.world
    groups = {g["group"]: g["what"] for g in _data("api-groups.yaml").get("groups", ())}
    not_objects = {(n["apiVersion"], n["kind"]) for n in _data("api-groups.yaml").get("not_objects", ())}
    found: list[set[str]] = []

    def patches() -> set[str]:
        if not found:
            found.append(_patch_files(world))
        return found[0]

    for obj in world.objects:
        if obj.kind == "ComposeService" or (obj.api_version, obj.kind) in not_objects:
            continue
        findings, valid = _kind_findings(ctx, obj, groups)
        yield from findings
        if not valid:
            continue
        if sch.has_schema(obj.api_version, obj.kind):
            yield from _findings(ctx, obj, patches)
        if obj.kind == "StorageClass" and obj.api_version.startswith("storage.k8s.io/"):
            yield from _storage_findings(ctx, obj, _partial(obj, patches()))
