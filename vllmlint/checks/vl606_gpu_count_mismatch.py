"""VL606: the GPUs a pod requests differ from the GPUs its vLLM invocation uses, or no node has that many."""

from vllmlint.records import dataclass

from vllmlint.capacity.lint import capacity_workloads, gpus_needed_per_pod, listing
from vllmlint.capacity.workload import RAY_KINDS, SERVING_RUNTIME_KINDS, Landing, requested_accelerator
from vllmlint.finding import Severity
from vllmlint.k8s.quantity import quantity_int
from vllmlint.source.yamlmodel import Mapping, Sequence, scalar_str
from vllmlint.checks import Context

def _ray_cluster_gpus(world, owner) -> int | None:
    """GPUs of every pod of a Ray cluster at its largest (head + worker replicas), or None when unknown."""
    total = 0
    spec = owner.spec
    for template in world.templates_of(owner):
        per_pod = 0
        for container in template.containers:
            request = requested_accelerator(container)
            if request is not None and request[0] == "nvidia.com/gpu":
                per_pod += request[1]
        replicas = 1
        if template.role not in ("head", "submitter"):
            group = _ray_group(spec, template.role)
            if group is None:
                return None
            counts = [c for c in (quantity_int(group.get(k)) for k in ("maxReplicas", "replicas")) if c is not None]
            if not counts:
                return None
            hosts_node = group.get("numOfHosts")
            hosts = quantity_int(hosts_node) if hosts_node is not None else 1
            if hosts is None:
                return None  # `numOfHosts: 1e400`: no count anyone can rely on
            replicas = max(counts) * max(1, hosts)
        total += per_pod * replicas
    return total


def _ray_group(spec, name):
    for path in (("workerGroupSpecs",), ("rayClusterConfig", "workerGroupSpecs"),
                 ("rayClusterSpec", "workerGroupSpecs")):
        node = spec
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        if isinstance(node, Sequence):
            for group in node.items:
                if isinstance(group, Mapping) and (scalar_str(group.get("groupName")) or "worker") == name:
                    return group
    return None


@dataclass(frozen=True)
class _Part:
    """One fact about the requested GPU count: `fact` (what is wrong), `clause` (the same fact joined after
    another one on the same token), `detail` (why it matters, what to do)."""

    severity: Severity
    fact: str
    clause: str
    detail: str
    value: str


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        container = work.container
        if work.gpu_resource is None or container is None and work.invocation.owner is None:
            continue  # no accelerator requested here (or a Compose service): the GPUs come from elsewhere
        # An operator's resource (VLLMRuntime) has no pod template: its controller builds the pod and requests them.
        template = container.pod if container is not None else None
        owner = template.owner if template is not None else work.invocation.owner
        if owner.kind in SERVING_RUNTIME_KINDS:
            continue  # a ServingRuntime's GPUs come from the InferenceService that uses it
        resource, count, node = work.gpu_resource
        backends = work.invocation.option("--distributed-executor-backend")
        ray = owner.kind in RAY_KINDS or any(o.value == "ray" for o in backends)
        parts = [part for part in (_ray(ctx, work, owner) if ray else _mismatch(work, template, resource, count),
                                   _unschedulable(ctx, work, resource, count)) if part is not None]
        if parts:
            yield ctx.finding(node, _one_message(parts), about=work.invocation, value=_first(parts).value,
                              severity=_first(parts).severity)


def _first(parts: list[_Part]) -> _Part:
    """The more certain fact leads (an error before a warning; the GPU count before the nodes on a tie)."""
    return min(parts, key=lambda part: -part.severity)


def _one_message(parts: list[_Part]) -> str:
    """One finding per token: two facts about one GPU count are one problem, said once (issue 13)."""
    lead = _first(parts)
    if len(parts) == 1:
        return f"{lead.fact}: {lead.detail}"
    other = next(part for part in parts if part is not lead)
    return f"{lead.fact}: {lead.detail} Also, {other.clause}: {other.detail}"


def _mismatch(work, template, resource, count) -> _Part | None:
    needed = gpus_needed_per_pod(work, template)
    if needed is None:
        return None
    per_pod, how = needed
    if count < per_pod:
        return _Part(Severity.ERROR, f"the pod requests {count} {resource} but vLLM needs {per_pod} GPUs in it ({how})",
                     f"vLLM needs {per_pod} GPUs in the pod ({how})",
                     f"it fails at start-up with too few devices for its workers. Request {per_pod}, or spread the "
                     "ranks over pods with --nnodes (multi-node), or lower the parallel sizes.",
                     f"{count}<{per_pod}")
    if count > per_pod:
        return _Part(Severity.WARNING, f"the pod requests {count} {resource} but vLLM uses only {per_pod} of them "
                     f"({how})", f"vLLM uses only {per_pod} of them ({how})",
                     f"{count - per_pod} GPUs stay idle and blocked for other pods. Request {per_pod}, or raise "
                     "--tensor-parallel-size / --data-parallel-size-local to use them.",
                     f"{count}>{per_pod}")
    return None


def _ray(ctx, work, owner) -> _Part | None:
    """Ray places workers anywhere in its cluster: only a cluster too small for the world size is clearly wrong."""
    if owner.kind not in RAY_KINDS or not work.known("--tensor-parallel-size", "--pipeline-parallel-size"):
        return None
    total = _ray_cluster_gpus(ctx.world, owner)
    if total is None or total >= work.world_size:
        return None
    how = f"{work.world_size} (TP {work.tensor_parallel_size} x PP {work.pipeline_parallel_size})"
    return _Part(ctx.severity, f"the Ray cluster of {owner.describe()} has at most {total} GPUs, but vLLM needs {how}",
                 f"the Ray cluster of {owner.describe()} has at most {total} GPUs for the {how} vLLM needs",
                 "the placement group never gets its bundles and start-up hangs until it times out.",
                 f"ray:{total}<{work.world_size}")


def _gpus(count: int) -> str:
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


def _unschedulable(ctx, work, resource, count) -> _Part | None:
    if resource != "nvidia.com/gpu" or not work.landings:
        return None
    sized = [p for p in work.landings if p.candidate.gpu_count is not None]
    too_small = [p for p in sized if p.candidate.gpu_count < count]
    if not too_small:
        return None
    names = listing([f"{p.candidate.instance_type} ({_gpus(p.candidate.gpu_count)}, from {p.origin})"
                     for p in too_small])
    if len(too_small) == len(sized):
        return _Part(ctx.severity, f"the pod requests {count} {resource}, more than any node it may land on has",
                     f"no node the pod may land on has {count} GPUs ({names})",
                     f"{names}. It stays Pending. Pick an instance type with enough GPUs, or split the work over "
                     "pods (--nnodes).", f"unschedulable:{count}")
    # Karpenter and the scheduler pick a node that fits among many sizes of a family: only instance
    # types someone listed by name for this pod are worth a word.
    named = [p for p in too_small if _named_in_constraints(p)]
    if not named:
        return None
    names = listing([f"{p.candidate.instance_type} ({_gpus(p.candidate.gpu_count)}, from {p.origin})"
                     for p in named])
    fits = listing([p.candidate.instance_type for p in sized if p not in too_small])
    return _Part(Severity.WARNING, f"the pod requests {count} {resource}, but {names} has fewer",
                 f"{names} has fewer than {count}",
                 f"it can only run on {fits}. Drop the smaller instance types from the constraints meant for this "
                 "pod, or request fewer GPUs.", f"unschedulable-some:{count}")


def _named_in_constraints(landing: Landing) -> bool:
    """Whether the instance type is named in a requirement that decides the landing: the pod's node
    selector or affinity, or the NodePool's template labels and requirements."""
    instance_type = landing.candidate.instance_type
    return instance_type is not None and landing.naming(instance_type) is not None
