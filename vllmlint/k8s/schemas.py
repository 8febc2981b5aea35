"""Object schemas: which apiVersion/kinds exist, and validating an object against its kind's schema.

The schemas are vendored under `schemas/k8s/` by `python -m vllmlint_dev.k8s_schemas` (core kinds of one
Kubernetes minor from kubernetes-validate, CRDs from their projects' manifests; `index.json` records the
sources). Nothing is read until an object of a kind needs it: `index.json` on the first object, a bundle
(`kubernetes-1.37.json.gz`, `karpenter.json.gz`...) on the first object of one of its kinds, and each
kind's validator is compiled once per process.

Validation runs on a plain copy of the object (`instance`) that keeps, for every value, the node it came
from (`SchemaError.node`, `.key`), so a finding points at the offending key or value.
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass
from functools import lru_cache
from typing import Any, Iterator

from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence
from vllmlint.lazyre import lazy_compile

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
# The API's quantity grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go, "The serialization format"),
# after the TrimSpace its UnmarshalJSON applies.
_QUANTITY = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)((Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)|[eE][+-]?\d+)?")
_BUDGET = 200_000  # nodes copied per object (aliases expanded): past it the object is not validated



@lru_cache(maxsize=1)
def index() -> dict:
    from vllmlint.data import load_json, schemas_dir

    return load_json(schemas_dir() / "k8s" / "index.json")


@lru_cache(maxsize=None)
def _bundle(name: str) -> dict:
    from vllmlint.data import load_json, schemas_dir

    return load_json(schemas_dir() / "k8s" / name)  # `name` ends in `.json.gz`


def split_api_version(api_version: str) -> tuple[str, str] | None:
    """(group, version): `apps/v1` -> ("apps", "v1"), `v1` -> ("", "v1"); None for anything else."""
    parts = api_version.split("/")
    if len(parts) == 1 and parts[0]:
        return "", parts[0]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    return None


@lru_cache(maxsize=1)
def _groups() -> tuple[frozenset, frozenset]:
    """(core groups: every group some Kubernetes minor of the history served, CRD groups vendored)."""
    data = index()
    crd = frozenset(data["crd_groups"])
    groups = set()
    for api_version in list(data["served"]) + list(data["removed"]):
        split = split_api_version(api_version)
        if split is not None and split[0] not in crd:
            groups.add(split[0])
    return frozenset(groups), crd


def core_groups() -> frozenset:
    return _groups()[0]


def crd_groups() -> frozenset:
    return _groups()[1]


def served(api_version: str) -> list[str] | None:
    """The kinds `api_version` serves (in the vendored Kubernetes minor, or a vendored CRD version), or None."""
    return index()["served"].get(api_version)


def removed(api_version: str, kind: str) -> list[str] | None:
    """[first, last] Kubernetes minor that served a core apiVersion/kind the vendored minor no longer serves."""
    return (index()["removed"].get(api_version) or {}).get(kind)


_VERSION = lazy_compile(r"v(\d+)(?:(alpha|beta)(\d+))?")


def version_priority(api_version: str) -> tuple:
    """Kubernetes' version priority (GA before beta before alpha, higher numbers first), as a sort key."""
    version = api_version.rsplit("/", 1)[-1]
    match = _VERSION.fullmatch(version)
    if not match:
        return (9, version)
    stability = {None: 0, "beta": 1, "alpha": 2}[match.group(2)]
    return (stability, -int(match.group(1)), -int(match.group(3) or 0))


def serving_versions(group: str, kind: str) -> list[str]:
    """apiVersions of `group` that serve `kind` now, the preferred one first."""
    return sorted((v for v, kinds in index()["served"].items()
                   if kind in kinds and (split_api_version(v) or ("?",))[0] == group), key=version_priority)


def kind_anywhere(kind: str) -> list[str]:
    """apiVersions of any group that serve `kind` (`Service` -> [`v1`]), the preferred one first."""
    return sorted((v for v, kinds in index()["served"].items() if kind in kinds), key=version_priority)


def has_schema(api_version: str, kind: str) -> bool:
    return f"{api_version}/{kind}" in index()["schemas"]


def kubernetes_minor() -> str:
    return str(index()["kubernetes"])


def is_crd(api_version: str) -> bool:
    split = split_api_version(api_version)
    return split is not None and split[0] in crd_groups()


# --- the instance: plain data that remembers its nodes ---------------------------------------------------
class _Dict(dict):
    """A mapping's data, with its node, its key nodes and the keys whose value is null (left out)."""
    node: Mapping
    keys_: dict
    nulls: set


class _List(list):
    node: Sequence


class _TooLarge(Exception):
    pass


def instance(node: Node) -> Any:
    """The object as JSON data, null-valued keys dropped (the API server prunes them in CRDs and reads
    them as unset in core kinds). Mappings and sequences remember their node (and key nodes) for positions.
    Raises _TooLarge past the node budget (an alias bomb)."""
    budget = [_BUDGET]

    def copy(node: Node | None, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > 60:
            raise _TooLarge()
        if isinstance(node, Scalar):
            return node.value
        if isinstance(node, Mapping):
            result = _Dict()
            result.node = node
            result.keys_ = {}
            result.nulls = set()
            for key, value in node.items:
                if not isinstance(key, Scalar) or key.text in result:
                    continue  # a duplicate key is VL001's; `<<` merges are already resolved by the model
                if isinstance(value, Scalar) and value.value is None:
                    result.nulls.add(key.text)
                    continue
                result[key.text] = copy(value, depth + 1)
                result.keys_[key.text] = key
            return result
        if isinstance(node, Sequence):
            items = _List(copy(item, depth + 1) for item in node.items)
            items.node = node
            return items
        return None

    return copy(node, 0)


# --- validators --------------------------------------------------------------------------------------------
def _format_checker():
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())

    @checker.checks("k8s-quantity")
    def _quantity(value: object) -> bool:
        return not isinstance(value, str) or _QUANTITY.fullmatch(value.strip()) is not None

    return checker


@lru_cache(maxsize=None)
def _validator(bundle: str, key: str, ref: str = ""):
    """The compiled validator of one kind (or of `ref`, a `$defs` entry of the bundle)."""
    from jsonschema import Draft202012Validator

    data = _bundle(bundle)
    schema = dict({"$ref": f"#/$defs/{ref}"} if ref else data["kinds"][key])
    schema["$defs"] = dict(data["$defs"])  # every entry (a wheel's copy unmarshals them per key: `data.Lazy`)
    return Draft202012Validator(schema, format_checker=_format_checker())


def _core_bundle() -> str:
    return f"kubernetes-{kubernetes_minor()}.json.gz"


def validator_for(api_version: str, kind: str):
    key = f"{api_version}/{kind}"
    bundle = index()["schemas"].get(key)
    return _validator(bundle, key) if bundle else None


def object_meta_validator():
    return _validator(_core_bundle(), "", _OBJECT_META)


def object_meta_fields() -> frozenset:
    meta = _bundle(_core_bundle())["$defs"][_OBJECT_META]
    return frozenset(meta.get("properties", ()))


@dataclass
class SchemaError:
    error: Any  # jsonschema.ValidationError
    path: tuple  # keys and indices from the object's root


def validate(api_version: str, kind: str, data: Any) -> Iterator[SchemaError]:
    """Schema errors of an object (`instance(...)` data); CRs' `metadata` is checked as ObjectMeta.

    Call it only where `fast_valid` is False (nearly every object is valid, and that predicate is much
    quicker than jsonschema, with no copy of the object): jsonschema gives the errors and their paths."""
    validator = validator_for(api_version, kind)
    if validator is None:
        return
    for error in validator.iter_errors(data):
        yield SchemaError(error, tuple(error.absolute_path))
    if is_crd(api_version) and isinstance(data, dict) and isinstance(data.get("metadata"), dict):
        for error in object_meta_validator().iter_errors(data["metadata"]):
            yield SchemaError(error, ("metadata",) + tuple(error.absolute_path))


# --- the fast path: a schema compiled to a predicate over the YAML nodes -------------------------------------
# Exactly the keywords `vllmlint_dev.k8s_schemas` writes, with jsonschema's (draft 2020-12) meaning, read on
# the nodes as `instance` would copy them (null-valued keys absent, non-string keys dropped), so a valid object
# costs no copy. A True is a proof of validity; a False only sends the object to jsonschema. The test
# `test_fast_path_agrees_with_jsonschema` checks both on every object of the fixtures and rule examples.
_TYPES = {
    "string": lambda n: isinstance(n, Scalar) and isinstance(n.value, str),
    "integer": lambda n: isinstance(n, Scalar) and (
        (isinstance(n.value, int) and not isinstance(n.value, bool))
        or (isinstance(n.value, float) and n.value.is_integer())),
    "number": lambda n: isinstance(n, Scalar) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool),
    "boolean": lambda n: isinstance(n, Scalar) and isinstance(n.value, bool),
    "object": lambda n: isinstance(n, Mapping),
    "array": lambda n: isinstance(n, Sequence),
    "null": lambda n: isinstance(n, Scalar) and n.value is None,
}


def _same(a: Any, b: Any) -> bool:
    """jsonschema's `equal` for scalars: booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return a == b


def _str(n: Any) -> str | None:
    return n.value if isinstance(n, Scalar) and isinstance(n.value, str) else None


def _num(n: Any) -> Any:
    if isinstance(n, Scalar) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
        return n.value
    return None


def _pairs(n: Mapping):
    """(name, value node) as `instance` keeps them: string keys, first of duplicates, null values left out."""
    for name, value in n.pairs():
        if not (isinstance(value, Scalar) and value.value is None):
            yield name, value


def _has(n: Mapping, name: str) -> bool:
    value = n.get(name)
    return value is not None and not (isinstance(value, Scalar) and value.value is None)


def fast_valid(api_version: str, kind: str, node: Node) -> bool | None:
    """True when the object is certainly valid; False when jsonschema must look; None without a schema or
    for an object too large to walk (aliases expanded past the budget: an alias bomb)."""
    key = f"{api_version}/{kind}"
    bundle = index()["schemas"].get(key)
    if bundle is None:
        return None
    _LEFT[0] = _BUDGET
    try:
        if not _fast(bundle, key)(node):
            return False
        if is_crd(api_version) and isinstance(node, Mapping):
            meta = node.get("metadata")
            if isinstance(meta, Mapping) and not _fast(_core_bundle(), "", _OBJECT_META)(meta):
                return False
    except _TooLarge:
        return None
    return True


_LEFT = [0]  # collections the running `fast_valid` may still visit (aliases expanded)


_UNCOMPILED = ("allOf", "oneOf", "not", "patternProperties", "const", "if", "dependentRequired", "uniqueItems",
               "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "dependentSchemas")
_BOUNDS = (("minLength", lambda v, n: (s := _str(v)) is None or len(s) >= n),
           ("maxLength", lambda v, n: (s := _str(v)) is None or len(s) <= n),
           ("minItems", lambda v, n: not isinstance(v, Sequence) or len(v.items) >= n),
           ("maxItems", lambda v, n: not isinstance(v, Sequence) or len(v.items) <= n),
           ("minProperties", lambda v, n: not isinstance(v, Mapping) or len(list(_pairs(v))) >= n),
           ("maxProperties", lambda v, n: not isinstance(v, Mapping) or len(list(_pairs(v))) <= n),
           ("minimum", lambda v, n: (x := _num(v)) is None or x >= n),
           ("maximum", lambda v, n: (x := _num(v)) is None or x <= n))


@lru_cache(maxsize=None)
def _fast(bundle: str, key: str, ref: str = ""):
    data = _bundle(bundle)
    defs = data["$defs"]
    compiled: dict[str, Any] = {}

    def by_ref(name: str):
        def check(value: Any) -> bool:
            fn = compiled.get(name)
            if fn is None:
                compiled[name] = lambda v: False  # recursive: undecided while compiling (jsonschema decides)
                compiled[name] = fn = compile_(defs.get(name, {}))
            return fn(value)
        return check

    def compile_(schema: Any):
        if schema is True or schema == {}:
            return lambda v: True
        if schema is False or any(word in schema for word in _UNCOMPILED):
            return lambda v: False  # not compiled: jsonschema decides
        checks: list = []
        if "$ref" in schema:
            checks.append(by_ref(schema["$ref"].rsplit("/", 1)[-1]))
        kinds = schema.get("type")
        if kinds is not None:
            tests = [_TYPES[k] for k in ([kinds] if isinstance(kinds, str) else kinds)]
            if len(tests) == 1:
                checks.append(tests[0])
            else:
                def any_type(v, t=tuple(tests)):  # a loop, not any() over a generator: int-or-string fields abound
                    for f in t:
                        if f(v):
                            return True
                    return False
                checks.append(any_type)
        if "enum" in schema:
            options = schema["enum"]
            if options and all(isinstance(x, str) for x in options):
                # Only a string equals a string (`_same`): a set lookup, not a scan of the options.
                checks.append(lambda v, o=frozenset(options): isinstance(v, Scalar) and isinstance(v.value, str)
                              and v.value in o)
            else:
                checks.append(lambda v, o=options: isinstance(v, Scalar) and any(_same(v.value, x) for x in o))
        if "pattern" in schema:
            search = re.compile(schema["pattern"]).search
            checks.append(lambda v, f=search: (s := _str(v)) is None or f(s) is not None)
        if schema.get("format") == "k8s-quantity":
            checks.append(lambda v: (s := _str(v)) is None or _QUANTITY.fullmatch(s.strip()) is not None)
        for word, test in _BOUNDS:
            if word in schema:
                checks.append(lambda v, n=schema[word], t=test: t(v, n))
        # A property is compiled when a value of it is first met: a Deployment's schema names hundreds of
        # fields (PodSpec alone 40), a manifest a few dozen (the bench's one file: 392 compiles -> 133).
        subs = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        required = tuple(schema.get("required") or ())
        if subs or extra is not True or required:
            props: dict[str, Any] = {}
            extra_fn: list = [] if extra is True else [None]  # [compiled] once compiled; [] when anything goes

            def mapping(v, p=props, s=subs, x=extra, e=extra_fn, r=required):
                if not isinstance(v, Mapping):
                    return True
                _LEFT[0] -= 1
                if _LEFT[0] < 0:
                    raise _TooLarge()
                items = v.items
                index = v._keys()  # Mapping.pairs() without its generator: a shared tuple of keys, or a dict
                named = index.items() if type(index) is dict else [
                    (name, position) for position, name in enumerate(index) if name is not None]
                for name, position in named:
                    fn = p.get(name)
                    if fn is None:
                        if name in s:
                            fn = p[name] = compile_(s[name])
                        elif e:
                            fn = e[0]
                            if fn is None:
                                fn = e[0] = compile_(x)
                    if fn is not None:
                        item = items[position][1]
                        if not (isinstance(item, Scalar) and item.value is None) and not fn(item):
                            return False
                for name in r:  # `_has`, through the index at hand
                    if type(index) is dict:
                        at = index.get(name)
                    else:
                        at = index.index(name) if name in index else None  # type: ignore[union-attr]
                    if at is None:
                        return False
                    item = items[at][1]
                    if isinstance(item, Scalar) and item.value is None:
                        return False
                return True
            checks.append(mapping)
        if "items" in schema:
            item_fn = compile_(schema["items"])

            def sequence(v, f=item_fn):
                if not isinstance(v, Sequence):
                    return True
                _LEFT[0] -= 1
                if _LEFT[0] < 0:
                    raise _TooLarge()
                for item in v.items:
                    if not f(item):
                        return False
                return True
            checks.append(sequence)
        if "anyOf" in schema:
            branches = [compile_(b) for b in schema["anyOf"]]
            checks.append(lambda v, b=branches: any(f(v) for f in b))
        if not checks:
            return lambda v: True
        if len(checks) == 1:
            return checks[0]

        def all_of(v, c=tuple(checks)):
            for f in c:
                if not f(v):
                    return False
            return True
        return all_of

    return compile_({"$ref": f"#/$defs/{ref}"} if ref else data["kinds"][key])


def resolve(schema: Any, defs: dict) -> Any:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 20:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
        seen += 1
    return schema


def defs_of(api_version: str, kind: str) -> dict:
    bundle = index()["schemas"].get(f"{api_version}/{kind}")
    return _bundle(bundle)["$defs"] if bundle else {}


def root_schema(api_version: str, kind: str) -> Any:
    bundle = index()["schemas"].get(f"{api_version}/{kind}")
    return _bundle(bundle)["kinds"].get(f"{api_version}/{kind}") if bundle else None


def properties(schema: Any, defs: dict) -> dict:
    """The `properties` of an object schema, through `$ref`s and `allOf`/`anyOf` branches."""
    schema = resolve(schema, defs)
    if not isinstance(schema, dict):
        return {}
    result = dict(schema.get("properties") or {})
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(key) or ():
            for name, sub in properties(branch, defs).items():
                result.setdefault(name, sub)
    return result


def child(schema: Any, step: Any, defs: dict) -> Any:
    """The schema of `step` (a key or an index) inside `schema`."""
    schema = resolve(schema, defs)
    if not isinstance(schema, dict):
        return None
    if isinstance(step, int):
        return schema.get("items")
    props = properties(schema, defs)
    if step in props:
        return props[step]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def find_field(schema: Any, name: str, defs: dict, depth: int = 3) -> list[list[str]]:
    """The shortest paths (keys, `[]` for list items) below `schema` to a field called `name`, at most
    `depth` fields down (all of the shortest length, up to 3); [] if there is none."""
    frontier: list[tuple[Any, list[str]]] = [(schema, [])]
    for level in range(depth + 1):
        found = [path + [name] for current, path in frontier if path and name in properties(current, defs)]
        if found:
            return found[:3]
        if level == depth:
            break
        following: list[tuple[Any, list[str]]] = []
        for current, path in frontier:
            for key, sub in properties(current, defs).items():
                sub = resolve(sub, defs)
                if isinstance(sub, dict) and sub.get("type") == "array":
                    following.append((sub.get("items"), path + [key + "[]"]))
                else:
                    following.append((sub, path + [key]))
        frontier = following[:2000]
    return []


__all__ = ["index", "split_api_version", "core_groups", "crd_groups", "served", "removed", "serving_versions",
           "kind_anywhere", "has_schema", "kubernetes_minor", "is_crd", "instance", "validator_for", "validate",
           "SchemaError", "object_meta_fields", "resolve", "defs_of", "root_schema", "properties", "child",
           "find_field", "fast_valid"]
