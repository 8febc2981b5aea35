"""VL111: alerts, autoscalers and scrape configs that use a `vllm:` metric the release does not export.

What a release exports comes from its catalog (`metrics`: name -> counter | gauge | histogram), turned
into the series names Prometheus sees: prometheus_client adds `_total` and `_created` to counters
(stripping a `_total` already in the name), and `_bucket`, `_sum`, `_count`, `_created` to histograms.
"""
from __future__ import annotations

from vllmlint.records import dataclass
from typing import Any, Iterator

from vllmlint.vllm import catalog
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.objects import K8sObject
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, SourceFile, scalar_str
from vllmlint.checks import Context
from vllmlint.vllm.release import version_key
from vllmlint.lazyre import lazy_compile

_NAME = lazy_compile(r"(?<![A-Za-z0-9_:])vllm:[A-Za-z_][A-Za-z0-9_:]*")
_REGEX_META = set(".*+?[(\\{")
_HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count", "_created")


@dataclass
class _Place:
    """A span inside a scalar, in the shape `Context.finding` takes."""
    source: SourceFile
    start: int
    end: int


class Exports:
    """The series one release exposes at /metrics."""

    def __init__(self, version: str, extra: list[dict[str, Any]]):
        self.version = version
        metrics = {n: t for n, t in catalog.load(version).metrics.items() if n.startswith("vllm:")
                   and not n.startswith("vllm::")}
        for entry in extra:
            first, last = entry.get("first"), entry.get("last")
            if first and catalog.compare_versions(version, first) < 0:
                continue
            if last and catalog.compare_versions(version, last) > 0:
                continue
            metrics.setdefault(entry["name"], entry.get("type", "gauge"))
        self.series: set[str] = set()
        self.families: dict[str, str] = {}  # bare name -> type (what a user might write without suffix)
        self.prefixes: list[str] = []  # names built at run time from a literal prefix
        for name, kind in metrics.items():
            if kind == "counter":
                base = name[:-len("_total")] if name.endswith("_total") else name
                self.series |= {base + "_total", base + "_created"}
                self.families[base] = kind
            elif kind == "histogram":
                self.series |= {name + s for s in _HISTOGRAM_SUFFIXES}
                self.families[name] = kind
            elif kind == "unknown":
                self.prefixes.append(name)
            else:
                self.series.add(name)

    def has(self, name: str) -> bool:
        return name in self.series or any(name.startswith(p) for p in self.prefixes)

    def has_prefix(self, prefix: str) -> bool:
        return any(s.startswith(prefix) for s in self.series) or any(p.startswith(prefix) or prefix.startswith(p)
                                                                   for p in self.prefixes)


def _data(ctx: Context) -> dict[str, Any]:
    return ctx.rule.data if isinstance(ctx.rule.data, dict) else {}


class _Releases:
    """The releases a metric is checked against, computed once per run (not once per alert, relabeling or
    autoscaler over every invocation, which made the rule quadratic in the size of the tree)."""

    def __init__(self, ctx: Context):
        self.world = ctx.world
        self._default: list[str] | None = None
        self._by_owner: dict[int, list[str]] | None = None

    def default(self) -> list[str]:
        """The run's release: `--vllm-version` if the engine tells us, else those of the linted vLLM
        workloads, else the newest catalog."""
        if self._default is None:
            self._default = _default_versions(self.world)
        return self._default

    def of(self, target: K8sObject) -> list[str]:
        """The releases the vLLM containers of `target` run (empty when it runs none)."""
        if self._by_owner is None:
            found: dict[int, set[str]] = {}
            for invocation in self.world.invocations:
                if invocation.container is not None:
                    found.setdefault(id(invocation.container.pod.owner), set()).add(invocation.catalog.version)
            self._by_owner = {owner: sorted(versions, key=version_key) for owner, versions in found.items()}
        return self._by_owner.get(id(target), [])


def _default_versions(world) -> list[str]:
    default = getattr(world, "default_release", None) or getattr(world, "vllm_version", None)
    if default:
        return [_catalog_version(default)]
    versions = sorted({i.catalog.version for i in world.invocations if i.catalog is not None},
                      key=version_key)
    return versions or [catalog.newest()]


def _catalog_version(version: str) -> str:
    if catalog.compare_versions(version, catalog.newest()) > 0:
        return catalog.newest()
    return catalog.nearest_release(version) or catalog.releases()[0]


def _target_versions(ctx: Context, releases: _Releases, ref: Node | None, namespace: str) -> list[str]:
    """Releases of the workload a scaleTargetRef names, when it is among the linted files."""
    if isinstance(ref, Mapping):
        kind = scalar_str(ref.get("kind")) or "Deployment"
        name = scalar_str(ref.get("name")) or ""
        target = ctx.world.find(kind, name, namespace)
        if target is not None:
            versions = releases.of(target)
            if versions:
                return versions
    return releases.default()


def check(ctx: Context) -> Iterator[Finding | None]:
    cache: dict[str, Exports] = {}
    extra = _data(ctx).get("extra_metrics", [])

    def exports(version: str) -> Exports:
        if version not in cache:
            cache[version] = Exports(version, extra)
        return cache[version]

    recorded = _recorded_names(ctx)
    for obj, scalar, mode, versions in _places(ctx):
        text = scalar.text if isinstance(scalar.value, str) else ""
        for match in _NAME.finditer(text):
            name = match.group(0)
            if name.count(":") > 1 or name in recorded:
                continue  # a recording rule's name (level:metric:operation), not a vLLM series
            following = text[match.end():match.end() + 1]
            targets = [exports(v) for v in versions]
            if mode == "regex" and following and following in _REGEX_META:
                if any(t.has_prefix(name) for t in targets):
                    continue
            elif any(t.has(name) for t in targets):
                continue
            message, severity = _explain(ctx, name, targets, mode)
            if message is None:
                continue
            place = _Place(scalar.source, scalar.source_index(match.start()), scalar.source_index(match.end()))
            yield ctx.finding(place, message, about=obj, value=name, severity=severity)


def _recorded_names(ctx: Context) -> set[str]:
    names: set[str] = set()
    for rule in _prometheus_rules(ctx):
        record = scalar_str(rule[1].get("record"))
        if record:
            names.add(record)
    return names


def _prometheus_rules(ctx: Context) -> Iterator[tuple[K8sObject, Mapping]]:
    for obj in ctx.world.of_kind("PrometheusRule"):
        groups = obj.spec.get("groups") if obj.spec else None
        for group in groups.items if isinstance(groups, Sequence) else []:
            rules = group.get("rules") if isinstance(group, Mapping) else None
            for rule in rules.items if isinstance(rules, Sequence) else []:
                if isinstance(rule, Mapping):
                    yield obj, rule


def _places(ctx: Context) -> Iterator[tuple[K8sObject, Scalar, str, list[str]]]:
    """(object, scalar, "promql" | "name" | "regex", target releases) for every place a metric is named."""
    releases = _Releases(ctx)
    for obj, rule in _prometheus_rules(ctx):
        expr = rule.get("expr")
        if isinstance(expr, Scalar):
            yield obj, expr, "promql", releases.default()
    for hpa in ctx.world.of_kind("HorizontalPodAutoscaler"):
        spec = hpa.spec
        metrics = spec.get("metrics") if spec else None
        versions = None
        for metric in metrics.items if isinstance(metrics, Sequence) else []:
            if not isinstance(metric, Mapping):
                continue
            for source in ("pods", "object", "external"):
                part = metric.get(source)
                if not isinstance(part, Mapping):
                    continue
                inner = part.get("metric")
                name = inner.get("name") if isinstance(inner, Mapping) else part.get("metricName")
                if isinstance(name, Scalar):
                    ref = spec.get("scaleTargetRef") if spec is not None else None
                    versions = versions or _target_versions(ctx, releases, ref, hpa.namespace)
                    yield hpa, name, "name", versions
    for scaled in ctx.world.of_kind("ScaledObject"):
        spec = scaled.spec
        triggers = spec.get("triggers") if spec else None
        for trigger in triggers.items if isinstance(triggers, Sequence) else []:
            meta = trigger.get("metadata") if isinstance(trigger, Mapping) else None
            query = meta.get("query") if isinstance(meta, Mapping) else None
            if isinstance(query, Scalar):
                ref = spec.get("scaleTargetRef") if spec is not None else None
                yield scaled, query, "promql", _target_versions(ctx, releases, ref, scaled.namespace)
    for monitor in ctx.world.of_kind("ServiceMonitor", "PodMonitor"):
        spec = monitor.spec
        endpoints = (spec.get("endpoints") or spec.get("podMetricsEndpoints")) if spec else None
        for endpoint in endpoints.items if isinstance(endpoints, Sequence) else []:
            if not isinstance(endpoint, Mapping):
                continue
            for key in ("metricRelabelings", "relabelings"):
                configs = endpoint.get(key)
                for config in configs.items if isinstance(configs, Sequence) else []:
                    regex = config.get("regex") if isinstance(config, Mapping) else None
                    if isinstance(regex, Scalar):
                        yield monitor, regex, "regex", releases.default()


def _explain(ctx: Context, name: str, targets: list[Exports], mode: str) -> tuple[str | None, Severity | None]:
    versions = ", ".join(t.version for t in targets)
    releases = f"vLLM {versions}"
    warning = min(ctx.severity, Severity.WARNING)
    # A bare counter or histogram name: the family exists, the series has a suffix.
    for t in targets:
        kind = t.families.get(name)
        if kind == "counter":
            if mode == "name":
                return None, None  # an adapter may expose the family under its own name
            return (f"`{name}` matches no series: query `{name}_total`. It is a counter, and {releases} exposes "
                    f"it as `{name}_total`.", warning)
        if kind == "histogram":
            if mode == "name":
                return None, None
            return (f"`{name}` is a histogram: {releases} exposes `{name}_bucket`, `{name}_sum` and `{name}_count`, "
                    f"and `{name}` matches no series. Use `{name}_bucket` with histogram_quantile().", warning)
    renames = {r["from"]: r for r in _data(ctx).get("renamed", [])}
    base = _strip_suffix(name)
    rename = renames.get(base)
    history = catalog.metric_history(base) or catalog.metric_history(name) or catalog.metric_history(base + "_total")
    if rename is not None:
        hint = rename["instead"]
    else:
        pool = sorted(set().union(*(t.series for t in targets)))
        import difflib  # here, not at start-up: only a near miss needs it
        near = difflib.get_close_matches(name, pool, n=1, cutoff=0.75)
        hint = f"Did you mean `{near[0]}`?" if near else ""
    if history is not None:
        newer = all(catalog.compare_versions(history["first"], t.version) > 0 for t in targets)
        span = f"it first appears in {history['first']}" if newer else \
            f"vLLM exported it from {history['first']} to {history['last']}"
        return (f"`{name}` is not exported by {releases}: {span}, so this {_what(mode)} sees no data. {hint}".rstrip(),
                None)
    if rename is not None or hint:
        return f"`{name}` is not exported by {releases}, so this {_what(mode)} sees no data. {hint}".rstrip(), None
    return (f"`{name}` is not a metric of any catalogued vLLM release ({releases} checked), so this {_what(mode)} "
            "probably sees no data: check the name against the server's /metrics.", warning)


def _strip_suffix(name: str) -> str:
    for suffix in ("_total", "_created") + _HISTOGRAM_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _what(mode: str) -> str:
    return {"promql": "query", "name": "autoscaler metric", "regex": "relabeling"}[mode]
