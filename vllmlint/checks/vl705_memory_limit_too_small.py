"""VL705: the container's memory limit is below what vLLM is certain to hold in CPU RAM at start-up.

Only a limit OOM-kills: the kubelet sets the memory cgroup's limit to `resources.limits.memory`
(a request only schedules). What vLLM holds comes from `vllmlint.capacity.host_memory`, whose amounts
and releases are sourced data (data/host-memory.yaml); each is a lower bound, so the limit is reported
only when it is below their sum. A Helm values file is judged on the pod its chart renders (`limitMemory`, or
`resources` as written: vllmlint.vllm.helm_pod).
"""
from __future__ import annotations

from vllmlint.capacity.host_memory import host_memory
from vllmlint.capacity.lint import capacity_workloads
from vllmlint.capacity.workload import gib1
from vllmlint.k8s.quantity import quantity_int
from vllmlint.source.yamlmodel import scalar_str
from vllmlint.vllm.helm_pod import unknown
from vllmlint.checks import Context


def check(ctx: Context):
    seen = set()
    for work in capacity_workloads(ctx.world):
        container = work.pod_container  # a manifest's, or the pod a chart renders from its values
        if container is None or container.is_compose or id(container) in seen or unknown(container, "resources") \
                or unknown(container, "env"):
            continue  # Compose `mem_limit` / deploy limits: not read (documented)
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
        yield ctx.finding(node, f"The memory limit {scalar_str(node)} ({gib1(limit)}) of container {container.name} "
                          f"is below what vLLM holds in CPU RAM before it serves: at least {gib1(need)} ({listed}), "
                          "not counting the Python process itself. The kernel OOM-kills the container (exit code "
                          "137) during start-up, and it restarts into the same kill. Raise the limit well above "
                          f"{gib1(need)} (the process itself takes a few GiB more), or shrink what vLLM keeps in RAM.",
                          about=work.invocation, value=f"{gib1(need)}>{gib1(limit)}")
