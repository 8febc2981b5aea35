"""VL606: the GPUs a pod requests differ from the GPUs its vLLM invocation uses, or no node has that many."""
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


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        container = work.container
        if container is None or work.gpu_resource is None:
            continue  # no accelerator requested here (or a Compose service): the GPUs come from elsewhere
        template = container.pod
        owner = template.owner
        if owner.kind in SERVING_RUNTIME_KINDS:
            continue  # a ServingRuntime's GPUs come from the InferenceService that uses it
        resource, count, node = work.gpu_resource
        backends = work.invocation.option("--distributed-executor-backend")
        ray = owner.kind in RAY_KINDS or any(o.value == "ray" for o in backends)
        if ray:
            yield from _ray(ctx, work, owner, node)
        else:
            needed = gpus_needed_per_pod(work, template)
            if needed is not None:
                per_pod, how = needed
                if count < per_pod:
                    yield ctx.finding(node, f"the pod requests {count} {resource} but vLLM needs {per_pod} GPUs in it "
                                      f"({how}): it fails at start-up with too few devices for its workers. Request "
                                      f"{per_pod}, or spread the ranks over pods with --nnodes (multi-node), or lower "
                                      "the parallel sizes.", about=work.invocation, value=f"{count}<{per_pod}")
                if count > per_pod:
                    yield ctx.finding(node, f"the pod requests {count} {resource} but vLLM uses only {per_pod} of them "
                                      f"({how}): {count - per_pod} GPUs stay idle and blocked for other pods. Request "
                                      f"{per_pod}, or raise --tensor-parallel-size / --data-parallel-size-local to "
                                      "use them.",
                                      about=work.invocation, value=f"{count}>{per_pod}", severity=Severity.WARNING)
        yield from _unschedulable(ctx, work, resource, count, node)


def _ray(ctx, work, owner, node):
    """Ray places workers anywhere in its cluster: only a cluster too small for the world size is clearly wrong."""
    if owner.kind not in RAY_KINDS or not work.known("--tensor-parallel-size", "--pipeline-parallel-size"):
        return
    total = _ray_cluster_gpus(ctx.world, owner)
    if total is not None and total < work.world_size:
        yield ctx.finding(node, f"the Ray cluster of {owner.describe()} has at most {total} GPUs, but vLLM needs "
                          f"{work.world_size} (TP {work.tensor_parallel_size} x PP {work.pipeline_parallel_size}): the "
                          "placement group never gets its bundles and start-up hangs until it times out.",
                          about=work.invocation, value=f"ray:{total}<{work.world_size}")


def _gpus(count: int) -> str:
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


def _unschedulable(ctx, work, resource, count, node):
    if resource != "nvidia.com/gpu" or not work.landings:
        return
    sized = [p for p in work.landings if p.candidate.gpu_count is not None]
    too_small = [p for p in sized if p.candidate.gpu_count < count]
    if not too_small:
        return
    names = listing([f"{p.candidate.instance_type} ({_gpus(p.candidate.gpu_count)}, from {p.origin})"
                     for p in too_small])
    if len(too_small) == len(sized):
        yield ctx.finding(node, f"the pod requests {count} {resource}, more than any node it may land on has: {names}. "
                          "It stays Pending. Pick an instance type with enough GPUs, or split the work over pods "
                          "(--nnodes).", about=work.invocation, value=f"unschedulable:{count}", severity=ctx.severity)
    else:
        # Karpenter and the scheduler pick a node that fits among many sizes of a family: only instance
        # types someone listed by name for this pod are worth a word.
        named = [p for p in too_small if _named_in_constraints(p)]
        if not named:
            return
        names = listing([f"{p.candidate.instance_type} ({_gpus(p.candidate.gpu_count)}, from {p.origin})"
                         for p in named])
        fits = listing([p.candidate.instance_type for p in sized if p not in too_small])
        yield ctx.finding(node, f"the pod requests {count} {resource}, but {names} has fewer: it can only run on "
                          f"{fits}. Drop the smaller instance types from the constraints meant for this pod, or "
                          "request fewer GPUs.", about=work.invocation,
                          value=f"unschedulable-some:{count}", severity=Severity.WARNING)


def _named_in_constraints(landing: Landing) -> bool:
    """Whether the instance type is named in a requirement that decides the landing: the pod's node
    selector or affinity, or the NodePool's template labels and requirements."""
    instance_type = landing.candidate.instance_type
    return instance_type is not None and landing.naming(instance_type) is not None
