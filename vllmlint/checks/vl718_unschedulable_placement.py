"""VL718: a vLLM pod whose node constraints no Karpenter NodePool of the run can satisfy stays Pending.

Admission is decided as `landings`/`admitting_pools` decide it (capacity/workload.py: `_pool_allows` for
labels and requirements, `tolerated` for taints), plus two things they do not need: the GPU a pod selects
against the instance types a pool may launch (capacity/nodes.py), and the ExtendedResourceToleration
admission plugin, which tolerates a NoSchedule taint keyed by a requested resource. Only where the run
holds NodePools meant for the pod (`pool_meant_for`); when any pool could take the pod, or a pool's
hardware is unknown, silent. A node selector term that requires a label another provisioner owns (the rule's
`foreign_node_labels`: `eks.amazonaws.com/nodegroup`, `cloud.google.com/gke-nodepool`, ...) and no pool of the
run sets is meant for nodes outside Karpenter: not judged, whatever the pod tolerates. A GPU count larger than
any admitted instance type is VL606's.
"""
from __future__ import annotations

from vllmlint.capacity.lint import listing
from vllmlint.capacity.nodes import INSTANCE_TYPE_KEYS
from vllmlint.capacity.specs import efa_interfaces
from vllmlint.capacity.workload import (ACCELERATOR_RESOURCES, NODEPOOL_LABEL, PoolBlocker, karpenter_pools,
                                        pool_blockers, pool_meant_for, requested_resources, well_known_label,
                                        workloads_by)
from vllmlint.checks import Context
from vllmlint.finding import Severity
from vllmlint.k8s.placement import tolerated
from vllmlint.k8s.quantity import quantity_int
from vllmlint.source.yamlmodel import Node
from vllmlint.k8s.selectors import DOES_NOT_EXIST, IN, NOT_IN
from vllmlint.vllm.nccl_env import efa_resource


def _templates(world):
    seen = set()
    for invocation in world.invocations:
        container = invocation.container
        if container is None or container.is_compose or id(container.pod) in seen:
            continue
        seen.add(id(container.pod))
        yield container.pod, invocation


def _resource_taint(blocker: PoolBlocker, resource_keys: set[str]) -> str | None:
    """The resource a NoSchedule taint is keyed by (`nvidia.com/gpu`), when the pod would get its toleration by
    requesting that resource (the ExtendedResourceToleration admission plugin: `auto_tolerated`)."""
    taint = blocker.taint
    if taint is None or taint.key not in resource_keys or (taint.effect or "NoSchedule") != "NoSchedule":
        return None
    return taint.key


def _words(blocker: PoolBlocker, requested: set[str], resource_keys: set[str]) -> str:
    if blocker.taint is not None:
        taint = blocker.taint
        value = f"={taint.value}" if taint.value else ""
        shown = f"its taint `{taint.key}{value}:{taint.effect or 'NoSchedule'}`"
        resource = _resource_taint(blocker, resource_keys)
        if resource is not None:
            return (f"{shown}, keyed by the resource `{resource}`, which the pod does not request (a pod that "
                    f"requests `{resource}` under resources.limits gets the toleration from the "
                    "ExtendedResourceToleration admission plugin)")
        return f"{shown}, which the pod does not tolerate"
    requirement = blocker.requirement
    assert requirement is not None
    shown = f"`{requirement.key} {requirement.operator} {list(requirement.values)}`" if requirement.values \
        else f"`{requirement.key} {requirement.operator}`"
    if blocker.kind == "hardware":
        return f"the pod's {shown}: none of the pool's instance types has that GPU"
    if requirement.key in resource_keys:
        return (f"the pod's {shown}: `{requirement.key}` is a resource a device plugin advertises, not a node "
                "label, so no node carries it (request it under resources.limits instead)")
    return f"the pod's {shown}: no node of the pool satisfies it (the pool's labels and requirements exclude it)"


def _foreign(requirements, foreign_keys: set[str], pool_keys: set[str]) -> bool:
    """The term requires (In, Exists, Gt, Lt) a label only another provisioner puts on its nodes, and none of
    `pool_keys` (the keys NodePools set or require) is that label: the pod is meant for those nodes."""
    return any(r.key in foreign_keys and r.key not in pool_keys and r.operator not in (NOT_IN, DOES_NOT_EXIST)
               for r in requirements)


def _pool_keys(pool) -> set[str]:
    return {r.key for r in pool.labels} | {r.key for r in pool.requirements}


def _points_at(pool, requirements, tolerations) -> bool:
    """The pod asks for this pool by name: it selects one of the pool's own (not well-known) label or
    requirement keys, or tolerates one of its taints explicitly. A pool in the same folder only is not
    enough, except for a resource-name key no node of any kind carries: the pod may be meant for nodes
    outside Karpenter (a managed node group), which the run does not show."""
    own = {r.key for r in pool.labels} | {r.key for r in pool.requirements}
    if any(r.key in own and not well_known_label(r.key) for r in requirements):
        return True
    if any(r.key == NODEPOOL_LABEL and pool.name in r.values for r in requirements):
        return True
    return any(tolerated(tolerations, taint) for taint in pool.taints)


def _efa_request(template) -> tuple[int, Node] | None:
    """(interfaces the pod requests in all, the YAML node of the first request) for `vpc.amazonaws.com/efa`;
    None when no container requests it or a count is not a number. Extended resources are whole and not
    overcommitted: the request, else the limit, of each container adds up on one node."""
    total, anchor = 0, None
    for container in template.containers:
        value = container.resources.request(efa_resource())
        if value is None:
            continue
        count = quantity_int(value.node)
        if count is None:
            return None
        total += count
        anchor = anchor or value.node
    return (total, anchor) if anchor is not None and total >= 1 else None


def _efa_counts(ctx: Context):
    """A pod asking for more EFA interfaces than any instance type it may land on has (none on a type without
    EFA): no node can take it, whatever provisions the nodes."""
    for template, invocation in _templates(ctx.world):
        wanted = _efa_request(template)
        if wanted is None:
            continue
        count, anchor = wanted
        places = None
        for work in workloads_by(ctx.world, "pod").get(id(template), [])[:1]:
            places = work.hosting_landings()
        if not places:
            continue
        have: dict[str, int] = {}
        for place in places:
            kind = place.candidate.instance_type
            interfaces = efa_interfaces(kind) if kind else None
            if kind is None or interfaces is None:
                have = {}
                break  # a place whose EFA the catalog does not know: never guess
            have[kind] = interfaces
        if not have or any(n >= count for n in have.values()):
            continue
        most = max(have.values())
        shown = listing([f"{kind} ({n})" if n else f"{kind} (no EFA)" for kind, n in sorted(have.items())])
        fix = (f"Request at most {most} (the most any of them takes), or pick an instance type with {count} or more"
               if most else "Pick an instance type that supports EFA, or drop the request")
        yield ctx.finding(anchor, f"{fix}: the pod requests {count} {efa_resource()} and no node it may land on has "
                          f"that many. EFA interfaces per instance type where it may run: {shown} (EC2's "
                          "MaximumEfaInterfaces, which the EFA device plugin advertises). The scheduler finds no "
                          f"node and the {template.owner.kind} {template.owner.name} pod stays Pending "
                          "(\"Insufficient vpc.amazonaws.com/efa\").", about=invocation, value=f"efa:{count}")


def _pool_resource_requirements(ctx: Context, pools, resource_keys: set[str]):
    """A NodePool requirement keyed by a resource (`vpc.amazonaws.com/efa`, `nvidia.com/gpu`): Karpenter's
    instance types have no such label, so it narrows nothing; Karpenter only writes it on the nodes as a label."""
    for pool in pools:
        for requirement in pool.requirements:
            if requirement.key not in resource_keys or requirement.operator in (NOT_IN, DOES_NOT_EXIST):
                continue  # NotIn / DoesNotExist mean to keep such nodes out: not what this message advises
            efa = requirement.key == efa_resource()
            what = "instance types with EFA" if efa else f"instance types that have `{requirement.key}`"
            types = sorted({v for r in pool.requirements if r.key in INSTANCE_TYPE_KEYS and r.operator == IN
                            for v in r.values})
            without = [t for t in types if efa and efa_interfaces(t) == 0]
            lacking = f" ({listing(without)} has no EFA, and gets the label all the same)" if without else ""
            ask = (f"request `{requirement.key}` under the vLLM container's resources.limits: Karpenter then picks an "
                   "instance type that has it" + (" and attaches the EFA interfaces" if efa else ""))
            yield ctx.finding(requirement.key_node or requirement.node,
                              f"Drop this requirement and {ask}. `{requirement.key}` is a resource a device plugin "
                              f"advertises, not a node label: as a requirement of NodePool {pool.name} it does not "
                              f"limit the pool to {what}{lacking}; Karpenter only writes it on every node it launches "
                              "as a label, so a pod that selects it lands on any of them.",
                              about=pool.obj, severity=min(ctx.severity, Severity.WARNING),
                              value=f"pool-resource:{requirement.key}")


def check(ctx: Context):
    yield from _efa_counts(ctx)
    pools = karpenter_pools(ctx.world)
    if not pools:
        return
    data = ctx.rule.data if isinstance(ctx.rule.data, dict) else {}
    yield from _pool_resource_requirements(ctx, pools, set(data.get("pool_resource_keys") or ()))
    # Keys no node of any kind carries as a label (the rule's data): reported even when only the folder ties
    # the pod to the run's pools. Accelerator resources and whatever the pod requests are named as resources
    # in the message, but some clusters do label nodes `nvidia.com/gpu=true` by hand.
    never_labels = set(data.get("resource_names") or ())
    resource_keys = never_labels | set(ACCELERATOR_RESOURCES)
    foreign_keys = {entry["key"] for entry in data.get("foreign_node_labels") or ()}
    run_keys = set().union(*(_pool_keys(p) for p in pools))
    for template, invocation in _templates(ctx.world):
        placement = template.placement
        requested = requested_resources(template)
        resource_keys_here = resource_keys | requested
        explained: list[tuple[str, list[PoolBlocker]]] = []
        admitted = unknown = False
        sets = placement.requirement_sets()
        if not any(sets):
            continue  # no node constraint: the pod may run on nodes the run does not show
        for requirements in sets:
            if _foreign(requirements, foreign_keys, run_keys):
                unknown = True  # e.g. an EKS managed node group the run does not show: it may take the pod
                continue
            for pool in pools:
                if _foreign(requirements, foreign_keys, _pool_keys(pool)):
                    continue  # meant for another pool of the run (the one that sets that label), not this one
                blockers = pool_blockers(pool, requirements, placement.tolerations, requested)
                if blockers is None:
                    unknown = True
                    continue
                if not blockers:
                    admitted = True
                    break
                resource_key = any(b.kind == "requirement" and b.requirement is not None
                                   and b.requirement.key in never_labels for b in blockers)
                if resource_key and pool_meant_for(pool, template, requirements, placement.tolerations) \
                        or _points_at(pool, requirements, placement.tolerations):
                    explained.append((pool.name, sorted(blockers, key=lambda b: b.kind != "requirement"
                                                        or b.requirement is None
                                                        or b.requirement.key not in resource_keys_here)))
            if admitted:
                break
        if admitted or unknown or not explained:
            continue
        first = explained[0][1][0]
        anchor = (first.requirement.key_node or first.requirement.node) if first.requirement is not None else None
        if anchor is None:
            anchor = placement.node_selector_node or template.spec
        reasons = "; ".join(f"NodePool {name}: {_words(blockers[0], requested, resource_keys_here)}"
                            for name, blockers in explained[:3])
        others = listing([p.name for p in pools])
        # Every pool is blocked only by taints keyed by resources the pod does not request: requesting them is
        # the fix (a toleration would let the pod onto GPU nodes without a GPU of its own).
        resources = sorted({_resource_taint(b, resource_keys_here) or "" for _n, bs in explained for b in bs})
        if "" not in resources:
            fix = (f"Request {listing([f'`{r}`' for r in resources])} under resources.limits (the "
                   "ExtendedResourceToleration admission plugin then adds the toleration), or change the pool.")
        else:
            fix = (f"Match the pod's nodeSelector, affinity and tolerations to a pool (the run has {others}), or "
                   "change the pool.")
        yield ctx.finding(anchor, f"No NodePool of this run can take the vLLM pod of {template.owner.kind} "
                          f"{template.owner.name}: {reasons}. Karpenter launches no node for it and the pod stays "
                          f"Pending. {fix}", about=invocation, value=_value(first))


def _value(blocker: PoolBlocker) -> str:
    if blocker.requirement is not None:
        return f"{blocker.kind}:{blocker.requirement.key}"
    return f"taint:{blocker.taint.key if blocker.taint is not None else ''}"
