"""VL705: the container's memory limit is below what vLLM is certain to hold in CPU RAM at start-up.

Only a limit OOM-kills: the kubelet sets the memory cgroup's limit to `resources.limits.memory`
(a request only schedules). What vLLM holds comes from `vllmlint.capacity.host_memory`, whose amounts
and releases are sourced data (data/host-memory.yaml); each is a lower bound, so the limit is reported
only when it is below their sum. A Helm values file is judged on the pod its chart renders (`limitMemory`, or
`resources` as written: vllmlint.vllm.helm_pod).

Info: a GPU container whose `resources` name its GPUs but no memory (neither request nor limit, and no
LimitRange in the run to fill one in): nothing reserves the RAM vLLM needs on the node, and a pod whose
containers request no CPU or memory at all is BestEffort, the first the kubelet evicts and the OOM killer
picks (https://kubernetes.io/docs/concepts/workloads/pods/pod-qos/,
https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/). On a values file, when the GPUs
are in the `resources` the file writes (reported there), or when the chart fills in their count and nothing else
(llm-d from accelerator/parallelism: vllm.helm_pod.chart_fills_accelerator_alone; reported at the `resources` the
container writes, else at the container), as the chart's rendered pod would be.
"""
from __future__ import annotations

from vllmlint.capacity.host_memory import host_memory
from vllmlint.capacity.lint import capacity_workloads
from vllmlint.capacity.workload import gib1
from vllmlint.k8s.quantity import quantity_int
from vllmlint.source.yamlmodel import Mapping, scalar_str
from vllmlint.vllm.helm_pod import chart_fills_accelerator_alone, unknown
from vllmlint.checks import Context
from vllmlint.finding import Severity


def check(ctx: Context):
    seen = set()
    limit_ranges = bool(ctx.world.of_kind("LimitRange"))
    for work in capacity_workloads(ctx.world):
        container = work.pod_container  # a manifest's, or the pod a chart renders from its values
        if container is None or container.is_compose or id(container) in seen or unknown(container, "resources") \
                or unknown(container, "env"):
            continue  # Compose `mem_limit` / deploy limits: not read (documented)
        if not limit_ranges:
            unreserved = _unreserved(ctx, work)
            if unreserved is not None:
                seen.add(id(container))
                yield unreserved
                continue
        node = container.resource("limits", "memory")
        limit = quantity_int(node) if node is not None else None
        if node is None or limit is None or limit <= 0:
            continue
        parts = host_memory(work)
        need = sum(p.bytes for p in parts)
        if not parts or need <= limit:
            continue
        seen.add(id(container))
        listed = "; ".join(p.words for p in parts)
        yield ctx.finding(node, f"The memory limit {scalar_str(node)} ({gib1(limit)}) of container {container.label} "
                          f"is below what vLLM holds in CPU RAM before it serves: at least {gib1(need)} ({listed}), "
                          "not counting the Python process itself. The kernel OOM-kills the container (exit code "
                          "137) during start-up, and it restarts into the same kill. Raise the limit well above "
                          f"{gib1(need)} (the process itself takes a few GiB more), or shrink what vLLM keeps in RAM.",
                          about=work.invocation, value=f"{gib1(need)}>{gib1(limit)}")


def _unreserved(ctx: Context, work):
    """Info: the container's own `resources` request GPUs and say nothing about memory."""
    container = work.pod_container
    if work.gpu_resource is None or container is None:
        return None
    name, count, gpu_node = work.gpu_resource
    owner = work.invocation.owner if work.invocation.container is None else None
    anchor, rendered = gpu_node, ""
    if owner is not None:  # a Helm values file: the GPUs sit in the `resources` it writes, or the chart adds them
        written_resources = owner.node.get("resources") if hasattr(owner, "chart") else None
        if written_resources is None or not written_resources.start <= gpu_node.start < written_resources.end:
            if not chart_fills_accelerator_alone(container):
                return None
            # The chart renders the container requesting its GPUs and only what the values write besides.
            key = owner.node.key_node("resources") if isinstance(written_resources, Mapping) else None
            anchor = key if key is not None else owner.node.key_node("name") or owner.node
            rendered = f"{count} {name} (from accelerator.type and parallelism)"
            gpu_node = container.resource("limits", name) or container.resource("requests", name)
    written = container.resource("limits", name) or container.resource("requests", name)
    if count <= 0 or written is None or written is not gpu_node:
        return None  # the GPUs come from elsewhere (an operator's profile, a runtime's defaults)
    if container.resources.request("memory") is not None:
        return None
    best_effort = not any(c.resources.request(r) is not None
                          for c in container.pod.containers for r in ("cpu", "memory"))
    if best_effort:
        what = (f"the chart renders its resources with {rendered}" if rendered
                else f"its resources name its {name}")
        head = (f"Request memory (and CPU) for container {container.label}: {what} but no memory or CPU, so the pod "
                "is BestEffort.")
        why = ("The scheduler reserves no RAM or CPU for it on the GPU node, so other pods may take them, and under "
               "node memory pressure the kubelet evicts a BestEffort pod first and the kernel's OOM killer picks it "
               "first (oom_score_adj 1000), killing the server and every request in flight.")
    else:
        head = (f"Request memory for container {container.label}: "
                f"{'the resources the chart renders' if rendered else 'its resources'} reserve no RAM on the GPU "
                "node.")
        why = ("The scheduler may fill the node's memory with other pods, and under node memory pressure the kubelet "
               "evicts first the pods that use more than they requested, which a vLLM server with no request "
               "always does.")
    return ctx.finding(anchor, f"{head} {why} Set `resources.requests.memory` (and `cpu`) to what the server "
                       "uses (its RSS after start-up plus headroom for the tokenizer processes), and a memory "
                       "limit above it.", about=work.invocation, value="no-memory-request", severity=Severity.INFO)
