"""Helm values files of the charts vllmlint reads without rendering them (data/chart-values.yaml): which chart a
YAML document is the values of, told by its keys (a values file has any name: `values-prod.yaml`, `my-llama.yaml`,
a Markdown block), and the few helpers that read a value as Helm's templates see it.

Helm reads a values file into Go values through JSON (sigs.k8s.io/yaml): every number becomes a float64, and a
template that prints one (`{{ .maxModelLen | quote }}`) writes Go's `%v` of it, so `1000000` is written `1e+06`.
`helm_text` gives that text; `truthy` is Go templates' truth (`{{ if .x }}`).
"""
from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import Any, Final

from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, path_at

PRODUCTION_STACK: Final = "production_stack"
LLM_D_MODELSERVICE: Final = "llm_d_modelservice"


@lru_cache(maxsize=1)
def chart_table() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    path = knowledge_dir() / "chart-values.yaml"
    data = load_yaml_data(path) if path.exists() else None
    return data if isinstance(data, dict) else {}


def _at(node: Node | None, dotted: str) -> Node | None:
    return path_at(node, *dotted.split("."))


def recognise(root: Node | None) -> str | None:
    """The chart (PRODUCTION_STACK, LLM_D_MODELSERVICE) whose values a document's root is, by its keys; None for
    anything else (a Kubernetes object, a Compose file, another chart's values)."""
    if not isinstance(root, Mapping) or "kind" in root or "apiVersion" in root:
        return None
    table = chart_table()
    stack = table.get(PRODUCTION_STACK) or {}
    wanted = stack.get("recognise") or {}
    listed = wanted.get("list", "")
    if listed and listed.split(".", 1)[0] in root:
        items = _at(root, listed)
        keys = wanted.get("item_keys") or []
        if isinstance(items, Sequence) and any(isinstance(item, Mapping) and any(key in item for key in keys)
                                               for item in items.items):
            return PRODUCTION_STACK
    modelservice = table.get(LLM_D_MODELSERVICE) or {}
    wanted = modelservice.get("recognise") or {}
    keys_all = wanted.get("keys_all") or []
    if keys_all and all(isinstance(root.get(key), Mapping) for key in keys_all):
        containers = wanted.get("containers", "containers")
        if any(isinstance(_at(root.get(role), containers), Sequence) for role in wanted.get("roles") or []):
            return LLM_D_MODELSERVICE
    return None


def truthy(node: Node | None) -> bool:
    """Go templates' truth of a value (`{{ if .x }}`): false, 0, "", null and an empty list or map are false. The
    string "false" is true."""
    if isinstance(node, Scalar):
        value = node.value
        if value is None or value is False:
            return False
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value != 0
        return value != "" if isinstance(value, str) else True
    if isinstance(node, (Mapping, Sequence)):
        return bool(node.items)
    return False


def helm_text(node: Node | None) -> str | None:
    """A scalar as a template prints it (`{{ .x }}`, `{{ .x | quote }}`): a string as written, a bool as
    true/false, a number as Go's `%v` of a float64; None for null, a list or a map."""
    if not isinstance(node, Scalar):
        return None
    value = node.value
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return go_float(value)
    return value if isinstance(value, str) else node.text


def go_float(number: int | float) -> str | None:
    """Go's `%v` of a float64 (strconv.FormatFloat(f, 'g', -1, 64)): the shortest digits, in exponent form when
    the exponent is below -4 or at least 6 (`1e+06`, `1.048576e+06`, `131072`, `0.9`); None for inf and nan."""
    try:
        value = float(number)
    except OverflowError:
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    if value == 0:
        return "0"
    sign, digits_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digits_tuple))
    point = len(digits) + exponent  # digits[:point] before the decimal point
    minus = "-" if sign else ""
    power = point - 1
    if power < -4 or power >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{minus}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{minus}{digits}{'0' * (point - len(digits))}"
    return f"{minus}{digits[:point]}.{digits[point:]}"


def go_int(node: Node | None) -> int | None:
    """A value as sprig's `int` reads it (a number truncated, a string of digits); None when it cannot tell or
    for a count no deployment has (beyond a million: a GPU or parallel size read as one is not believed)."""
    if not isinstance(node, Scalar):
        return None
    value = node.value
    found: int | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        found = value
    elif isinstance(value, float) and value == value and abs(value) < 1e18:
        found = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value.strip()) < 19:
        found = int(value.strip())
    return found if found is not None and abs(found) <= 1_000_000 else None
