"""VL707: a GPU Deployment whose rolling update surges a pod before any old pod gives its GPUs back.

Kubernetes resolves `maxSurge` and `maxUnavailable` against the replica count: "The absolute number is
calculated from percentage by rounding up" for maxSurge and "by rounding down" for maxUnavailable, both
25% by default (https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#max-surge,
#max-unavailable). With maxUnavailable 0 the controller keeps every old pod until a new one is Ready, so
the new pod needs GPUs nobody frees: it stays Pending until the cluster has spare GPUs.

A Helm values file is judged on the Deployment its chart renders (vllm.helm_pod.chart_rollout): production-stack
writes `servingEngineSpec.strategy` when set, else its own maxSurge 100% / maxUnavailable 0, with replicaCount
(default 1); llm-d's modelservice writes `<role>.strategy` when set, else none (Kubernetes's default), with
`<role>.replicas` (the chart's decode 1, prefill 0). A finding on the chart's default sits at the entry and says so.
"""
from __future__ import annotations

from vllmlint.capacity.nodes import gpus_for_node_constraints
from vllmlint.capacity.workload import ACCELERATOR_RESOURCES, admitting_pools, requested_accelerator
from vllmlint.finding import Severity
from vllmlint.k8s.autoscaling import scale_target
from vllmlint.k8s.objects import namespaces_compatible
from vllmlint.k8s.placement import node_count_cap
from vllmlint.k8s.quantity import quantity_int
from vllmlint.source.yamlmodel import Mapping, Scalar, scalar_str
from vllmlint.checks import Context
from vllmlint.vllm.helm_pod import chart_rollout, pod_container, unknown


def _resolve(setting, replicas: int, round_up: bool) -> int:
    value = setting.value
    if isinstance(value, int):
        return value
    percent = int(value[:-1])
    scaled = percent * replicas
    return -(-scaled // 100) if round_up else scaled // 100


def _given_but_unread(rolling: Mapping | None, key: str, setting) -> bool:
    """The field is written but the accessor fell back to the default (`$(SURGE)`, `-1`, `abc%`): unknown."""
    return rolling is not None and key in rolling and setting.node is None


def _pod_gpus(template) -> tuple[str, int] | None:
    """(resource, GPUs the pod's regular containers request in all) for the first accelerator resource."""
    total: dict[str, int] = {}
    for container in template.containers:
        if container.init:
            continue
        request = requested_accelerator(container)
        if request is not None and request[1] > 0:
            total[request[0]] = total.get(request[0], 0) + request[1]
    for name in ACCELERATOR_RESOURCES:
        if name in total:
            return name, total[name]
    return None


def _scalers_by_target(world) -> dict:
    """Deployment name -> the HPAs and KEDA ScaledObjects that target it, read once per run."""
    by_name: dict = {}
    for scaler in world.of_kind("HorizontalPodAutoscaler", "ScaledObject"):  # in the order of the run
        target = scale_target(scaler)
        if target is not None and target.kind == "Deployment":
            by_name.setdefault(target.name, []).append(scaler)
    return by_name


def _autoscaler(scalers: dict, obj):
    """The HPA or KEDA ScaledObject that scales this Deployment, with the lowest count it keeps (or None)."""
    for scaler in scalers.get(obj.name, ()):
        if not namespaces_compatible(scaler.namespace, obj.namespace):
            continue
        spec = scaler.spec
        key = "minReplicas" if scaler.kind == "HorizontalPodAutoscaler" else "minReplicaCount"
        node = spec.get(key) if spec else None
        lowest = quantity_int(node) if node is not None else (1 if key == "minReplicas" else 0)
        return scaler, lowest
    return None


def _per_node(pool, resource: str) -> int | None:
    """The most GPUs one node of the pool can have: the largest count among the instance types its labels and
    requirements allow (data/capacity/instance-types.yaml); None when a count is unknown or no instance
    type is named (then a node cap says nothing about GPUs)."""
    if not resource.endswith("/gpu"):
        return None
    candidates = gpus_for_node_constraints(pool.labels, pool.requirements)
    if not candidates or any(c.gpu_count is None for c in candidates):
        return None
    return max(c.gpu_count for c in candidates if c.gpu_count is not None)


def _no_room(pool, resource: str, per_pod: int, replicas: int) -> str | None:
    """How the pool's caps leave no room for one more pod (even packed perfectly), or None."""
    limit_node = pool.limit(resource)
    limit = quantity_int(limit_node) if limit_node is not None else None
    if limit is not None and limit - replicas * per_pod < per_pod:
        return f"NodePool {pool.name} (limits {resource}: {limit})"
    cap = node_count_cap(pool)
    nodes = quantity_int(cap[0]) if cap is not None else None
    per_node = _per_node(pool, resource)
    if cap is None or nodes is None or nodes < 0 or per_node is None:
        return None
    if nodes * (per_node // per_pod) < replicas + 1:
        noun = "node" if nodes == 1 else "nodes"
        return f"NodePool {pool.name} ({cap[1]}: {nodes} {noun} of at most {per_node} {resource})"
    return None


def _exhausted_pools(world, template, resource: str, per_pod: int, replicas: int):
    """The NodePools this pod may land on, when every one is capped (a `limits` on the GPU resource, or a node
    count: `spec.replicas` of a static pool, `limits.nodes`) so that the replicas already use it up; else None."""
    pools = admitting_pools(template, world)
    if not pools:
        return None
    described = []
    for pool in pools:
        why = _no_room(pool, resource, per_pod, replicas)
        if why is None:
            return None
        described.append(why)
    return described


def check(ctx: Context):
    seen = set()
    scalers = _scalers_by_target(ctx.world)
    for template in ctx.world.vllm_templates():
        owner = template.owner
        if owner.kind != "Deployment" or id(owner) in seen or owner.spec is None:
            continue
        seen.add(id(owner))
        gpus = _pod_gpus(template)
        strategy = owner.strategy
        replicas = owner.replicas
        if gpus is None or strategy is None or replicas is None or strategy.type.value != "RollingUpdate":
            continue
        resource, per_pod = gpus
        spec = owner.spec
        strategy_node = spec.get("strategy")
        rolling = strategy_node.get("rollingUpdate") if isinstance(strategy_node, Mapping) else None
        rolling = rolling if isinstance(rolling, Mapping) else None
        surge_setting, unavailable_setting = strategy.max_surge, strategy.max_unavailable
        if surge_setting is None or unavailable_setting is None:
            continue
        if _given_but_unread(rolling, "maxSurge", surge_setting) or \
                _given_but_unread(rolling, "maxUnavailable", unavailable_setting):
            continue  # a value this reader cannot resolve: silent
        scaler = _autoscaler(scalers, owner)
        if scaler is not None:
            if scaler[1] is None:
                continue  # an autoscaler whose lowest count is unknown
            count = max(1, scaler[1])  # an idle KEDA target at 0 has no rollout; once active, at least 1
        else:
            count = replicas.value
        if count < 1:
            continue  # no pods, nothing to roll
        surge = _resolve(surge_setting, count, round_up=True)
        unavailable = _resolve(unavailable_setting, count, round_up=False)
        if surge == 0 or unavailable > 0:
            continue  # (0, 0) is refused by the API; an old pod goes first: its GPUs are given back
        severity = min(ctx.severity, Severity.INFO)
        capacity = ""
        exhausted = None if scaler is not None else _exhausted_pools(ctx.world, template, resource, per_pod, count)
        if exhausted:
            # The run shows the capacity cannot grow: warning, whether the strategy is written or is the
            # default (issue 10: "explicit or the default"; the default resolves to the same surge).
            severity = ctx.severity
            pods = "pod" if count == 1 else "pods"
            capacity = (f" The run shows no room for it: {', '.join(exhausted)} is used up by the {count} current "
                        f"{pods} x {per_pod} {resource}, so a rollout never finishes.")
        elif scaler is not None:
            capacity = (f" ({scaler[0].kind} {scaler[0].name} scales it; at its minimum of {count} "
                        f"{'replica' if count == 1 else 'replicas'} this holds.)")
        noun = "GPUs" if resource.endswith("/gpu") else "accelerators"
        settings = _words(surge_setting, unavailable_setting, count, surge, unavailable)
        where = _anchor(owner.node, spec, strategy_node)
        yield ctx.finding(where, f"{owner.describe()} needs {per_pod} spare {resource} to roll out: with {settings} "
                          f"its rolling update starts a new pod before any old pod stops, and that pod waits Pending "
                          f"until spare {noun} appear.{capacity} Use `strategy: {{type: Recreate}}` (a short outage), or "
                          "`rollingUpdate: {maxSurge: 0, maxUnavailable: 1}` to replace the pods one at a time.",
                          about=owner, value=f"surge:{surge}/unavailable:{unavailable}@{count}", severity=severity)
    yield from _chart_findings(ctx)


def _chart_pods(ctx: Context):
    """The Deployments charts render from values files, each with (resource, GPUs per pod) summed over the
    containers of one pod; None for the GPUs when a container's resources are unknown or none is requested."""
    groups: dict = {}
    for invocation in ctx.world.invocations:
        rollout = chart_rollout(invocation)
        container = pod_container(invocation)
        if rollout is not None and container is not None:
            groups.setdefault(rollout.key, (rollout, {}))[1][id(container)] = container
    for rollout, containers in groups.values():
        if any(unknown(container, "resources") for container in containers.values()):
            yield rollout, None
            continue
        total: dict[str, int] = {}
        for container in containers.values():
            request = requested_accelerator(container)
            if request is not None and request[1] > 0:
                total[request[0]] = total.get(request[0], 0) + request[1]
        yield rollout, next(((name, total[name]) for name in ACCELERATOR_RESOURCES if name in total), None)


def _chart_findings(ctx: Context):
    """The rule on the Deployment a values file makes its chart render (vllm.helm_pod.chart_rollout)."""
    for rollout, gpus in _chart_pods(ctx):
        deployment = rollout.deployment
        strategy, replicas, spec = deployment.strategy, deployment.replicas, deployment.spec
        if gpus is None or strategy is None or replicas is None or spec is None or \
                strategy.type.value != "RollingUpdate":
            continue
        strategy_node = spec.get("strategy")
        rolling = strategy_node.get("rollingUpdate") if isinstance(strategy_node, Mapping) else None
        rolling = rolling if isinstance(rolling, Mapping) else None
        surge_setting, unavailable_setting = strategy.max_surge, strategy.max_unavailable
        if surge_setting is None or unavailable_setting is None or \
                _given_but_unread(rolling, "maxSurge", surge_setting) or \
                _given_but_unread(rolling, "maxUnavailable", unavailable_setting):
            continue  # a value this reader cannot resolve: silent
        count = replicas.value
        if count < 1:
            continue  # no pods (llm-d's prefill by default), nothing to roll
        surge = _resolve(surge_setting, count, round_up=True)
        unavailable = _resolve(unavailable_setting, count, round_up=False)
        if surge == 0 or unavailable > 0:
            continue
        resource, per_pod = gpus
        if rollout.default_strategy or not isinstance(strategy_node, Mapping):
            # the chart's (or Kubernetes's) default: at the replicas the file writes, else at the entry
            where = rollout.count_key if rollout.count_key is not None else rollout.anchor
        else:
            written = rolling.key_node("maxUnavailable") if rolling is not None else None
            where = written if written is not None else strategy_node
        noun = "GPUs" if resource.endswith("/gpu") else "accelerators"
        settings = _words(surge_setting, unavailable_setting, count, surge, unavailable,
                          chart_strategy=rollout.default_strategy,
                          count_note=rollout.count_default if rollout.default_replicas else "")
        yield ctx.finding(where, f"{rollout.label} needs {per_pod} spare {resource} to roll out: with {settings}, "
                          f"the chart's Deployment starts a new pod before any old pod stops, and that pod waits "
                          f"Pending until spare {noun} appear. "
                          f"{rollout.hint[:1].upper()}{rollout.hint[1:]}.", about=deployment,
                          value=f"surge:{surge}/unavailable:{unavailable}@{count}",
                          severity=min(ctx.severity, Severity.INFO))


def _words(surge_setting, unavailable_setting, count, surge, unavailable, chart_strategy: bool = False,
           count_note: str = "") -> str:
    def one(name, setting, resolved):
        written = setting.value if isinstance(setting.value, int) else f"{setting.value}"
        default = " (the chart's default)" if chart_strategy else "" if setting.node is not None else " by default"
        if isinstance(setting.value, int):
            return f"{name} {written}{default}"
        return f"{name} {written}{default} = {resolved}"
    pods = "replica" if count == 1 else "replicas"
    return (f"{one('maxSurge', surge_setting, surge)}, {one('maxUnavailable', unavailable_setting, unavailable)} "
            f"of {count} {pods}{f' ({count_note})' if count_note else ''}")


def _anchor(root: Mapping, spec: Mapping, strategy_node):
    """The explicit `maxUnavailable`/`strategy`, else `replicas`, else the `spec` the default lives in."""
    if isinstance(strategy_node, Mapping):
        rolling = strategy_node.get("rollingUpdate")
        if isinstance(rolling, Mapping) and rolling.key_node("maxUnavailable") is not None:
            return rolling.key_node("maxUnavailable")
        return spec.key_node("strategy") or strategy_node
    if spec.key_node("replicas") is not None and not (isinstance(spec.get("replicas"), Scalar)
                                                      and scalar_str(spec.get("replicas")) is None):
        return spec.key_node("replicas")
    return root.key_node("spec") or spec

