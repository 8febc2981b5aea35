"""What autoscalers scale and on which metrics: HorizontalPodAutoscaler (autoscaling/v1, v2, v2beta*)
and KEDA ScaledObjects, as typed metric targets that keep their nodes.

References: https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/horizontal-pod-autoscaler-v2/
(metric types Resource, ContainerResource, Pods, Object, External; target types Utilization, Value,
AverageValue), autoscaling/v1's `targetCPUUtilizationPercentage`, v2beta1's `targetAverageUtilization`,
and https://keda.sh/docs/latest/reference/scaledobject-spec/ (`scaleTargetRef` kind defaults to
Deployment; `triggers[].metricType` defaults to AverageValue, cpu/memory triggers use Utilization).
"""
from __future__ import annotations

from vllmlint.records import dataclass
from typing import TYPE_CHECKING

from vllmlint.source.yamlmodel import Mapping, Node, Sequence, scalar_str

if TYPE_CHECKING:
    from vllmlint.k8s.objects import K8sObject


@dataclass(eq=False)
class ScaleTarget:
    kind: str
    name: str
    api_version: str
    node: Mapping


@dataclass(eq=False)
class MetricTarget:
    """One metric an autoscaler scales on."""

    type: str  # Resource, ContainerResource, Pods, Object, External; for KEDA the trigger type (prometheus, cpu)
    metric: str  # cpu, memory, a metric name, a query's metric
    target_type: str  # Utilization, AverageValue, Value ("" when not said)
    target: str | None  # the target value as written (`80`, `500m`, a threshold)
    node: Node  # the metric entry (the field for autoscaling/v1)
    name_node: Node | None = None  # where the metric is named
    target_node: Node | None = None
    container: str | None = None  # ContainerResource


def _ref(node: Node | None, default_kind: str = "") -> ScaleTarget | None:
    if not isinstance(node, Mapping):
        return None
    return ScaleTarget(scalar_str(node.get("kind")) or default_kind, scalar_str(node.get("name")) or "",
                       scalar_str(node.get("apiVersion")) or "", node)


def scale_target(obj: K8sObject) -> ScaleTarget | None:
    """What an HPA or a ScaledObject scales."""
    if obj.spec is None:
        return None
    return _ref(obj.spec.get("scaleTargetRef"), "Deployment" if obj.kind == "ScaledObject" else "")


def hpa_metrics(hpa: K8sObject) -> list[MetricTarget]:
    spec = hpa.spec
    if spec is None:
        return []
    result = []
    if "targetCPUUtilizationPercentage" in spec:  # autoscaling/v1
        node = spec.get("targetCPUUtilizationPercentage")
        result.append(MetricTarget("Resource", "cpu", "Utilization", scalar_str(node),
                                   spec.key_node("targetCPUUtilizationPercentage") or spec, None, node))
    metrics = spec.get("metrics")
    for metric in metrics.items if isinstance(metrics, Sequence) else []:
        if not isinstance(metric, Mapping):
            continue
        kind = scalar_str(metric.get("type")) or ""
        part_key = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
                    "Object": "object", "External": "external"}.get(kind)
        part = metric.get(part_key) if part_key else None
        if not isinstance(part, Mapping):
            continue
        if kind in ("Resource", "ContainerResource"):
            name_node = part.get("name")
        else:  # v2: metric.name; v2beta1: metricName
            inner = part.get("metric")
            name_node = inner.get("name") if isinstance(inner, Mapping) else part.get("metricName")
        target = part.get("target")
        target_type, value_node = "", None
        if isinstance(target, Mapping):
            target_type = scalar_str(target.get("type")) or ""
            value_node = target.get({"Utilization": "averageUtilization", "AverageValue": "averageValue",
                                     "Value": "value"}.get(target_type, "value"))
        else:  # v2beta1
            for key, typ in (("targetAverageUtilization", "Utilization"), ("targetAverageValue", "AverageValue"),
                             ("targetValue", "Value")):
                if key in part:
                    target_type, value_node = typ, part.get(key)
                    break
        result.append(MetricTarget(kind, scalar_str(name_node) or "", target_type, scalar_str(value_node), metric,
                                   name_node, value_node, scalar_str(part.get("container"))))
    return result


_KEDA_THRESHOLD_KEYS = ("threshold", "value", "targetValue", "activationThreshold")


def keda_triggers(scaled_object: K8sObject) -> list[MetricTarget]:
    spec = scaled_object.spec
    triggers = spec.get("triggers") if spec else None
    result = []
    for trigger in triggers.items if isinstance(triggers, Sequence) else []:
        if not isinstance(trigger, Mapping):
            continue
        kind = scalar_str(trigger.get("type")) or ""
        meta = trigger.get("metadata")
        meta = meta if isinstance(meta, Mapping) else None
        default_type = "Utilization" if kind in ("cpu", "memory") else "AverageValue"
        target_type = scalar_str(trigger.get("metricType")) or default_type
        name_node = None
        if meta is not None:
            name_node = meta.get("metricName") or meta.get("query")
        metric = kind if kind in ("cpu", "memory") else scalar_str(name_node) or ""
        value_node = next((meta.get(k) for k in _KEDA_THRESHOLD_KEYS if meta is not None and k in meta), None)
        result.append(MetricTarget(kind, metric, target_type, scalar_str(value_node), trigger, name_node or
                                   trigger.get("type"), value_node))
    return result


def metric_targets(obj: K8sObject) -> list[MetricTarget]:
    if obj.kind == "HorizontalPodAutoscaler":
        return hpa_metrics(obj)
    if obj.kind == "ScaledObject":
        return keda_triggers(obj)
    return []


__all__ = ["ScaleTarget", "MetricTarget", "scale_target", "hpa_metrics", "keda_triggers", "metric_targets"]


# --- prometheus-adapter rules (added for VL807) ---------------------------------------------------------
# prometheus-adapter reads its rules from a ConfigMap key (`config.yaml` in its Helm chart) holding
# `rules:` (custom metrics), `externalRules:` and `resourceRules:`. Each rule discovers series with
# `seriesQuery` and names the metric it serves with `name.matches` (a regex, default `.*`) and `name.as` (default
# `$1` with one capture group, else `$0`): https://github.com/kubernetes-sigs/prometheus-adapter/blob/master/docs/config.md
@dataclass(eq=False)
class AdapterRule:
    config: K8sObject  # the ConfigMap
    external: bool  # from `externalRules` (External metrics) rather than `rules` (Pods/Object metrics)
    series_query: str
    matches: str | None
    as_name: str | None
    metrics_query: str


def _adapter_config(text: str) -> dict | None:
    if "seriesQuery" not in text:
        return None
    from vllmlint.source.yamlmodel import SourceFile, parse_documents, to_python

    documents, error = parse_documents(SourceFile("<prometheus-adapter config>", text))
    if error is not None or not documents:
        return None
    data = to_python(documents[0].root)
    return data if isinstance(data, dict) else None


def adapter_rules(configmaps: list[K8sObject]) -> tuple[list[K8sObject], list[AdapterRule]]:
    """(the ConfigMaps that hold a prometheus-adapter configuration, their rules)."""
    configs: list[K8sObject] = []
    rules: list[AdapterRule] = []
    for obj in configmaps:
        data = obj.node.get("data")
        if not isinstance(data, Mapping):
            continue
        for _, value in data.pairs():
            text = scalar_str(value)
            config = _adapter_config(text) if text else None
            if config is None:
                continue
            found = False
            for key, external in (("rules", False), ("externalRules", True)):
                items = config.get(key)
                for item in items if isinstance(items, list) else []:
                    if not isinstance(item, dict) or not isinstance(item.get("seriesQuery"), str):
                        continue
                    naming = item.get("name")
                    name: dict = naming if isinstance(naming, dict) else {}
                    matches, as_name = name.get("matches"), name.get("as")
                    rules.append(AdapterRule(obj, external, item["seriesQuery"],
                                             matches if isinstance(matches, str) else None,
                                             as_name if isinstance(as_name, str) else None,
                                             str(item.get("metricsQuery") or "")))
                    found = True
            if found and obj not in configs:
                configs.append(obj)
    return configs, rules
