"""VL807: an autoscaler of a vLLM workload that cannot work as written.

Three checks on HorizontalPodAutoscalers and KEDA ScaledObjects (`vllmlint.k8s.autoscaling`):

1. A `Pods` or `Object` metric whose name vLLM does not export in any form. Names with `vllm:` in them are
   VL111's (unknown-metric), which checks them against the release catalogs: VL807 never reports those, so the
   two do not report one name twice. The others reach the HPA through a metrics adapter, which may rename:
   - with a prometheus-adapter configuration in the run (a ConfigMap holding `rules:` with `seriesQuery`,
     `name.matches`/`name.as`), the names its rules serve are computed (a series query on `vllm...` names is
     expanded over the target's release catalog); a name none serves is a warning; a rule whose series query
     may match any series (`{namespace!=""}`) makes every name possible: silent;
   - without one, a name that reads as a vLLM series renamed (`vllm_num_requests_waiting`,
     `num_requests_running`, `_per_second`/`_total` forms) is accepted when the target's release exports that
     series and is info when it does not; a name from another exporter that labels pods
     (`data/autoscaling-metrics.yaml`: dcgm-exporter, cAdvisor, kube-state-metrics) is accepted; any other
     name on a pod that runs only vLLM (`requests_per_second`) is info: an adapter outside the run might
     compute it, but vLLM does not export it.
   External metrics come from anywhere (queues, load balancers): not judged.
2. A threshold above 1 on a metric vLLM documents as a 0..1 ratio (`data/autoscaling-metrics.yaml` `ratios`:
   "1 means 100 percent usage"): in a KEDA Prometheus query (a comparison `> 90`, or the trigger's
   `threshold` when the query only aggregates the ratio: `avg`, `max`, `min`, `*_over_time`, and `sum` with
   the default AverageValue, which the HPA divides by the replicas) it is never reached: warning. On an HPA
   metric it is a warning where nothing can rescale the value (the Stackdriver adapter's
   `prometheus.googleapis.com|vllm:...|gauge`, or an adapter rule in the run whose `metricsQuery` does no
   arithmetic), else info (an adapter outside the run may multiply by 100).
3. A scale target whose pods are the ranks of one multi-node server (`vllmlint.vllm.groups`: a StatefulSet
   passing `--nnodes`/`--node-rank`, or more TP x PP ranks than its GPUs): a new replica is a rank the
   server was not started with and never joins (vLLM fixes the world size at start-up), and removing one
   breaks the group: warning. A LeaderWorkerSet target scales whole groups: silent.
"""
from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import Iterator

from vllmlint.checks import Context
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.autoscaling import AdapterRule, MetricTarget, adapter_rules, metric_targets, scale_target
from vllmlint.k8s.objects import K8sObject
from vllmlint.k8s.quantity import parse_quantity
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, SourceFile, scalar_str
from vllmlint.vllm import catalog
from vllmlint.vllm.groups import STATEFULSET, group_of
from vllmlint.vllm.release import version_key
from vllmlint.lazyre import lazy_compile

_GMP = "prometheus.googleapis.com|"  # Google Managed Prometheus through the Custom Metrics Stackdriver Adapter
_SUFFIXES = ("_per_second", "_total", "_rate", "_bucket", "_sum", "_count", "_created")
_IDENT = lazy_compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
# PromQL functions and aggregations that keep a 0..1 gauge within 0..1 (`sum` only under AverageValue).
_RATIO_KEEPING = {"avg", "max", "min", "avg_over_time", "max_over_time", "min_over_time", "last_over_time",
                  "quantile", "quantile_over_time", "topk", "bottomk", "clamp_max", "clamp_min", "abs"}
_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "and", "or",
             "unless"}


@lru_cache(maxsize=1)
def _facts() -> dict:
    from vllmlint.data import knowledge_dir, load_yaml_data

    return load_yaml_data(knowledge_dir() / "autoscaling-metrics.yaml") or {}


def _ratios() -> set[str]:
    return {str(r["name"]) for r in _facts().get("ratios") or ()}


def _other_prefixes() -> tuple[str, ...]:
    return tuple(str(r["prefix"]) for r in _facts().get("other_pod_metrics") or ())


def _base(name: str) -> str:
    """A metric name without vLLM's prefix and the suffixes adapters and exposition add, `:`/`-` as `_`."""
    text = name.strip()
    for prefix in ("vllm:", "vllm_", "vllm-"):
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    text = text.replace(":", "_").replace("-", "_")
    for suffix in _SUFFIXES:
        if text.endswith(suffix):
            return text[: -len(suffix)]
    return text


@lru_cache(maxsize=64)
def _exported(version: str) -> dict[str, str]:
    """base name -> vLLM series name, for one release."""
    result: dict[str, str] = {}
    for name in catalog.load(version).metrics:
        if name.startswith("vllm:") and not name.startswith("vllm::"):
            result.setdefault(_base(name), name)
    return result


def _target(ctx: Context, obj: K8sObject) -> K8sObject | None:
    ref = scale_target(obj)
    if ref is None or not ref.name:
        return None
    return ctx.world.find(ref.kind, ref.name, obj.namespace)


def _releases_by_owner(ctx: Context) -> dict[int, list[str]]:
    """The releases the vLLM containers of each workload run, by id of the workload (computed once per run)."""
    found: dict[int, set[str]] = {}
    for invocation in ctx.world.invocations:
        if invocation.container is not None:
            found.setdefault(id(invocation.container.pod.owner), set()).add(invocation.catalog.version)
    return {owner: sorted(versions, key=version_key) for owner, versions in found.items()}


def _runs_only_vllm(ctx: Context, target: K8sObject) -> bool:
    """Every app container of the target's pods runs vLLM: nothing else there exports per-pod series."""
    running = {id(i.container) for i in ctx.world.invocations if i.container is not None}
    templates = ctx.world.templates_of(target)
    return bool(templates) and all(id(c) in running for t in templates for c in t.containers if not c.init)


def check(ctx: Context) -> Iterator[Finding | None]:
    configs, rules = adapter_rules(ctx.world.of_kind("ConfigMap"))
    by_owner = _releases_by_owner(ctx)
    for obj in ctx.world.of_kind("HorizontalPodAutoscaler", "ScaledObject"):
        target = _target(ctx, obj)
        releases = by_owner.get(id(target), []) if target is not None else []
        if target is not None:
            yield from _scales_ranks(ctx, obj, target)
        for metric in metric_targets(obj):
            if obj.kind == "ScaledObject":
                if metric.type == "prometheus":
                    yield from _keda_ratio(ctx, obj, metric)
                continue
            if metric.type not in ("Pods", "Object", "External"):
                continue
            yield from _hpa_ratio(ctx, obj, metric, rules)
            if releases and metric.type in ("Pods", "Object") and target is not None:
                yield from _hpa_name(ctx, obj, target, metric, releases, configs, rules)


# --- 1. names -------------------------------------------------------------------------------------------
def _series_names(rule: AdapterRule, releases: list[str]) -> list[str] | None:
    """The series a rule's `seriesQuery` discovers, or None when it may match series of any exporter."""
    query = rule.series_query.strip()
    literal = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{|$)", query)
    if literal is not None:
        return [literal.group(1)]
    exact = re.search(r"__name__\s*=\s*[\"']([^\"']+)[\"']", query)
    if exact is not None:
        return [exact.group(1)]
    pattern = re.search(r"__name__\s*=~\s*[\"']([^\"']+)[\"']", query)
    if pattern is None or not pattern.group(1).lstrip("^").startswith("vllm"):
        return None
    compiled = _safe_regex(pattern.group(1))
    if compiled is None:
        return None
    series: set[str] = set()
    for version in releases:
        for name, kind in catalog.load(version).metrics.items():
            names = [name + "_total"] if kind == "counter" and not name.endswith("_total") else [name]
            if kind == "histogram":
                names = [name + s for s in ("_bucket", "_sum", "_count")]
            series.update(n for n in names if compiled.fullmatch(n))
    return sorted(series)


def _expand(template: str, match: re.Match[str]) -> str:
    """Go's regexp Expand: `$1`, `${1}`, `$name`, `${name}`."""
    def group(m: re.Match[str]) -> str:
        key = m.group(1) or m.group(2)
        try:
            return match.group(int(key) if key.isdigit() else key) or ""
        except (IndexError, KeyError, re.error):
            return ""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", group, template)


# A group with a quantifier, itself repeated (`(a+)+`, `(.*)*`): exponential backtracking in Python's `re`,
# and a regex read from a linted file must not hang the linter. Such a rule is treated as unknown.
_NESTED_QUANTIFIER = lazy_compile(r"\([^()]*[*+}][^()]*\)[*+{]")


def _safe_regex(pattern: str) -> re.Pattern[str] | None:
    if len(pattern) > 500 or _NESTED_QUANTIFIER.search(pattern):
        return None
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None


def _served(rule: AdapterRule, releases: list[str]) -> list[str] | None:
    """The metric names a rule serves, or None when it cannot be known."""
    series = _series_names(rule, releases)
    if series is None:
        return None
    pattern = _safe_regex(rule.matches if rule.matches is not None else ".*")
    if pattern is None:
        return None
    template = rule.as_name or ("$1" if pattern.groups == 1 else "$0")
    names = []
    for name in series:
        match = pattern.search(name)
        if match is not None:
            names.append(_expand(template, match))
    return names


def _hpa_name(ctx: Context, obj: K8sObject, target: K8sObject, metric: MetricTarget, releases: list[str],
              configs: list[K8sObject], rules: list[AdapterRule]) -> Iterator[Finding | None]:
    name = metric.metric
    where = metric.name_node
    if not name or where is None or "vllm:" in name or "|" in name or "$" in name:
        return  # VL111 checks `vllm:` names; `a|b|c` is a Cloud Monitoring metric
    checked = ", ".join(releases)
    custom = [r for r in rules if not r.external]
    if configs:
        served: set[str] = set()
        for rule in custom:
            names = _served(rule, releases)
            if names is None:
                return  # a rule that may serve anything
            served.update(names)
        if name in served:
            return
        where_config = ", ".join(f"ConfigMap {c.name}" for c in configs)
        near = sorted(served)[:4]
        offer = f" (its rules serve {', '.join(f'`{n}`' for n in near)})" if near else ""
        yield ctx.finding(where, f"HPA {obj.name} scales on `{name}`, which no rule of the prometheus-adapter "
                          f"configuration in {where_config} serves{offer}: the custom metrics API has no such "
                          "metric, the HPA reports it as unknown and does not scale on it. Name a metric one of the "
                          "rules serves, or add a rule for it.", about=obj, value=f"adapter:{name}")
        return
    base = _base(name)
    exports = {}
    for version in releases:
        exports.update(_exported(version))
    if base in exports:
        return
    vllm_like = name.startswith(("vllm_", "vllm-"))
    if vllm_like:
        history = catalog.metric_history("vllm:" + base) or catalog.metric_history(f"vllm:{base}_total")
        span = f"vLLM exported `vllm:{base}` from {history['first']} to {history['last']}" if history else \
            f"no catalogued vLLM release exports a `vllm:{base}`"
        yield ctx.finding(where, f"HPA {obj.name} scales on `{name}`, which reads as vLLM's `vllm:{base}` renamed by "
                          f"a metrics adapter, but vLLM {checked} does not export that series ({span}): the adapter "
                          "has nothing to serve and the HPA does not scale on it. Use a metric this release exports "
                          "(`vllm:num_requests_waiting`, `vllm:kv_cache_usage_perc`).", about=obj,
                          value=f"renamed:{name}", severity=min(ctx.severity, Severity.INFO))
        return
    if name.startswith(_other_prefixes()) or not _runs_only_vllm(ctx, target):
        return
    if metric.type == "Object" and not _describes_target(ctx, metric, target):
        return
    yield ctx.finding(where, f"HPA {obj.name} scales on `{name}`, which is not a metric vLLM exports. It scales "
                      f"{target.kind} {target.name}, vLLM {checked} (checked) does not export `{name}`, and no "
                      "prometheus-adapter rule in the run defines it: "
                      "unless an adapter outside these files computes it from vLLM's series, the custom metrics API "
                      "has no such metric and the HPA does not scale on it. Scale on a series vLLM exports, such as "
                      "`vllm:num_requests_waiting`, served by an adapter rule.", about=obj, value=f"unknown:{name}",
                      severity=min(ctx.severity, Severity.INFO))


def _describes_target(ctx: Context, metric: MetricTarget, target: K8sObject) -> bool:
    """An Object metric about the target itself, or a Pod (the target's)."""
    node = metric.node.get("object") if isinstance(metric.node, Mapping) else None
    described = node.get("describedObject") if isinstance(node, Mapping) else None
    if not isinstance(described, Mapping):
        return False
    kind, name = scalar_str(described.get("kind")), scalar_str(described.get("name"))
    return kind == target.kind and name == target.name or kind == "Pod"


# --- 2. ratio thresholds --------------------------------------------------------------------------------
def _ratio_name(name: str) -> str | None:
    """The vLLM ratio gauge a metric name is (or reads as, renamed)."""
    ratios = _ratios()
    if name.startswith(_GMP):
        name = name[len(_GMP):].split("|", 1)[0]
    if name in ratios:
        return name
    base = _base(name)
    return next((r for r in ratios if _base(r) == base), None)


def _over_one(node: Node | None) -> Decimal | None:
    value = parse_quantity(node)
    return value if value is not None and value > 1 else None


def _hpa_ratio(ctx: Context, obj: K8sObject, metric: MetricTarget, rules: list[AdapterRule]) -> Iterator[Finding | None]:
    value = _over_one(metric.target_node)
    if value is None or metric.target_node is None:
        return
    serving = [r for r in rules if r.external == (metric.type == "External")
               and metric.metric in (_served(r, []) or [])]
    ratio = _ratio_name(metric.metric) or next(
        (n for r in serving for n in (_series_names(r, []) or []) if _ratio_name(n) == n), None)
    if ratio is None:
        return
    certain = metric.metric.startswith(_GMP)
    if not certain:
        if any(re.search(r"[*/+-]", r.metrics_query.replace("<<.LabelMatchers>>", "")) for r in serving):
            return  # the adapter rescales it
        certain = bool(serving)
    severity = None if certain else min(ctx.severity, Severity.INFO)
    yield ctx.finding(metric.target_node, f"HPA {obj.name} targets {metric.target} for `{metric.metric}`, but "
                      f"`{ratio}` is a ratio from 0 to 1 (vLLM: \"1 means 100 percent usage\"), so the target is "
                      f"never reached and the HPA never scales up{'' if certain else ' unless the adapter multiplies it by 100'}. "
                      f"Write the fraction: {_fraction(value)}.", about=obj, value=f"ratio:{metric.metric}>{value}",
                      severity=severity)


def _fraction(value: Decimal) -> str:
    if value <= 100:
        fraction = value / 100
        return f"`{fraction.normalize():f}` for {value.normalize():f} percent"
    return "a value between 0 and 1"


class _Place:
    """A span inside a scalar, in the shape `Context.finding` takes."""

    def __init__(self, source: SourceFile, start: int, end: int):
        self.source, self.start, self.end = source, start, end


def _blank(text: str) -> str:
    """The query with strings, label matchers, ranges and grouping clauses blanked out (offsets kept)."""
    def spaces(m: re.Match[str]) -> str:
        return " " * len(m.group(0))
    text = re.sub(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`", spaces, text)
    text = re.sub(r"\{[^{}]*\}|\[[^\[\]]*\]", spaces, text)
    return re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", spaces, text)


def _keda_ratio(ctx: Context, obj: K8sObject, metric: MetricTarget) -> Iterator[Finding | None]:
    meta = metric.node.get("metadata") if isinstance(metric.node, Mapping) else None
    query = meta.get("query") if isinstance(meta, Mapping) else None
    if not isinstance(query, Scalar) or not isinstance(query.value, str):
        return
    text = _blank(query.text)
    ratios = _ratios()
    names, functions = [], []
    for match in _IDENT.finditer(text):
        word = match.group(0)
        if word in _KEYWORDS:
            continue
        if text[match.end():].lstrip().startswith("("):
            functions.append(word)
        elif not re.fullmatch(r"[0-9.eE+-]+", word):
            names.append(word)
    if not names or any(n not in ratios for n in names):
        return
    allowed = set(_RATIO_KEEPING) | ({"sum"} if metric.target_type == "AverageValue" else set())
    if any(f not in allowed for f in functions) or re.search(r"[*/+^%]|(?<![eE])-", text.replace("--", "  ")):
        return
    numbers = [m for m in re.finditer(r"(?:==|!=|>=|<=|>|<)\s*(?:bool\s+)?(\d+(?:\.\d+)?)", text)]
    for match in numbers:
        number = Decimal(match.group(1))
        if number > 1:
            start, end = match.span(1)
            place = _Place(query.source, query.source_index(start), query.source_index(end))
            yield ctx.finding(place, f"ScaledObject {obj.name} compares the ratio `{names[0]}` with {match.group(1)}: "
                              f"compare with the fraction, {_fraction(number)}. It is a ratio from 0 to 1 (vLLM: "
                              "\"1 means 100 percent usage\"): the comparison never holds, the query returns nothing "
                              "and the trigger never fires.", about=obj, value=f"ratio:{names[0]}>{match.group(1)}")
            return
    if numbers:
        return
    value = _over_one(metric.target_node)
    if value is None or metric.target_node is None:
        return
    yield ctx.finding(metric.target_node, f"ScaledObject {obj.name} scales on `{query.value.strip()}` with a "
                      f"threshold of {metric.target}, but `{names[0]}` is a ratio from 0 to 1 (vLLM: \"1 means 100 "
                      "percent usage\"), so the threshold is never reached and it never scales out. Write the "
                      f"fraction: {_fraction(value)}.", about=obj, value=f"ratio:{names[0]}>{value}")


# --- 3. replicas that are ranks -------------------------------------------------------------------------
def _scales_ranks(ctx: Context, obj: K8sObject, target: K8sObject) -> Iterator[Finding | None]:
    group = group_of(ctx.world, target)
    if group is None or group.kind != STATEFULSET:
        return
    ref = scale_target(obj)
    where = ref.node.get("name") if ref is not None else None
    # The problem and the fix on the first line (up to the first `: `); why the pods are ranks follows.
    yield ctx.finding(where or obj.node, f"{obj.kind} {obj.name} scales StatefulSet {target.name}, whose pods are "
                      "ranks of one vLLM server: scale whole groups, not pods. Its pods are the "
                      "ranks of one multi-node vLLM server (`--nnodes`/`--node-rank`, or more TP x PP ranks than one "
                      "pod's GPUs): vLLM fixes the number of ranks when the server starts, so a new replica is a rank "
                      "that never joins and removing one breaks the server. Scale whole groups: a LeaderWorkerSet "
                      "(an HPA on it adds and removes complete groups), or independent single-node replicas.",
                      about=obj, value=f"ranks:{target.name}")
