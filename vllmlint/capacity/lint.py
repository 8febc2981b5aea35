"""What the capacity rules (VL601-VL609) share: judging a workload on each GPU it may land on, and wording.

A pod may land on several instance types (a NodePool listing p3.16xlarge and g5.12xlarge). Each rule
judges every place the pod can be scheduled on: when all of them fail the finding is an error, when only
some do it is a warning naming them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

from vllmlint.finding import Severity
from vllmlint.capacity.estimate import Estimate, default_gpu_memory_utilization, estimate
from vllmlint.vllm.release import release_numbers
from vllmlint.capacity.workload import Landing, Workload, gib1, workloads
from vllmlint.source.yamlmodel import Mapping, Scalar

if TYPE_CHECKING:
    from vllmlint.k8s.objects import World

__all__ = ["capacity_workloads", "failing_plans", "judge", "listing", "utilization_words", "model_words", "where_words",
           "knobs_for_weights"]


def capacity_workloads(world: World) -> list[Workload]:
    return workloads(world)


def failing_plans(world: World, fails: Callable[[Estimate], bool]) -> Iterator[
        tuple[Workload, list[Landing], list[tuple[Landing, Estimate]], bool]]:
    """For each workload whose estimate inputs are all known: (workload, the landings it can be scheduled on,
    [(landing, plan)] where `fails(plan)`, whether all of them fail); only workloads with a failing landing."""
    for work in workloads(world):
        if work.model is None or not work.estimate_inputs_known():
            continue
        hosting = work.hosting_landings()
        failing = []
        for landing in hosting:
            plan = work.estimate(landing.candidate.gpu)
            if plan is not None and fails(plan):
                failing.append((landing, plan))
        if failing:
            yield work, hosting, failing, len(failing) == len(hosting)


def judge(work: Workload, placements: list[Landing], fails: Callable[[Landing], object]):
    """(failing [(placement, detail)], all_fail) over `placements`; detail is whatever `fails` returned (truthy)."""
    failing = []
    for placement in placements:
        detail = fails(placement)
        if detail:
            failing.append((placement, detail))
    return failing, bool(failing) and len(failing) == len(placements)


def scope(ctx, failing, all_fail, placements) -> tuple[Severity, str]:
    """The severity (the rule's own when every placement fails, else warning) and a sentence naming the rest."""
    if all_fail:
        return ctx.severity, ""
    ok = [p for p in placements if p not in {f[0] for f in failing}]
    names = listing([p.label for p in ok])
    return min(ctx.severity, Severity.WARNING), f" The pod can also land on {names}, where it fits; pin it there."


def listing(names: list[str], limit: int = 4) -> str:
    """`a, b, c and 3 more`: long NodePools list dozens of instance types."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def also_words(failing) -> str:
    if len(failing) < 2:
        return ""
    return " Same on " + listing([p.label for p, _ in failing[1:]]) + "."


def model_words(work: Workload) -> str:
    """The model's id, and how a name that is not the id was read (`/models/llama-3.1-70b` read as ...)."""
    if work.match is None:
        return ""
    model = work.match.model
    if work.match.how in ("exact id", "case-insensitive id"):
        return model.id
    if work.match.how.startswith("config.json at"):
        return f"`{work.model_name}` (sized from its {work.match.how})"
    return f"{model.id} (`{work.model_name}` read as it)"


def utilization_words(work: Workload, plan: Estimate) -> str:
    if work.gpu_memory_utilization is not None:
        return f"--gpu-memory-utilization {work.gpu_memory_utilization:g}"
    version = ".".join(map(str, release_numbers(work.release)))
    return f"the default --gpu-memory-utilization {default_gpu_memory_utilization(work.release):g} of vLLM {version}"


def where_words(placement: Landing) -> str:
    c = placement.candidate
    where = f"{c.instance_type}, " if c.instance_type else ""
    return f"{where}from {placement.origin}"


def knobs_for_weights(work: Workload, placement: Landing, plan: Estimate, need_kv: bool) -> str:
    """What would help: the smallest TP that fits on this GPU, a 4-bit checkpoint, a bigger GPU."""
    gpu = placement.candidate.gpu
    model = plan.model
    kwargs = work.estimate_kwargs()
    tp_now = kwargs.pop("tensor_parallel_size")
    helps = []
    if gpu.mig_parent:  # one process sees one MIG device: no TP across slices, only a bigger slice or a whole GPU
        from vllmlint.capacity.specs import find_gpu, mig_devices

        for device in mig_devices():
            if device.mig_parent == gpu.mig_parent and device.cuda_total_gib > gpu.cuda_total_gib:
                bigger = estimate(model, device, tensor_parallel_size=tp_now, **kwargs)
                if bigger.ok if need_kv else bigger.fits:
                    helps.append(f"the MIG profile nvidia.com/mig-{device.mig_profile} would fit")
                    break
        else:
            whole = find_gpu(gpu.mig_parent)
            if whole is not None:
                helps.append(f"a whole {whole.id} (no MIG slice of it fits)")
        return "; ".join(helps + ["a GPU with more memory"])
    tp = tp_now * 2
    while tp <= 64:
        try:
            candidate = estimate(model, gpu, tensor_parallel_size=tp, **kwargs)
        except ValueError:
            break
        if model.num_attention_heads % tp == 0 and (candidate.ok if need_kv else candidate.fits):
            count = placement.candidate.gpu_count
            stages = -(-tp * work.pipeline_parallel_size // count) if count else 1
            room = ""
            if count is not None and stages > 1:
                gpus = f"{count} GPU" if count == 1 else f"{count} GPUs"
                room = (f" (more than the {gpus} of one {placement.candidate.instance_type}: spread it over {stages} "
                        f"nodes, e.g. TP {min(tp, count)} x PP {stages} with --nnodes {stages})")
            helps.append(f"--tensor-parallel-size {tp} would fit{room}")
            break
        tp *= 2
    if plan.quantization not in ("awq", "gptq-int4", "int4", "bnb-4bit"):
        try:
            four_bit = estimate(model, gpu, tensor_parallel_size=tp_now, **{**kwargs, "quantization": "awq"})
            if four_bit.ok if need_kv else four_bit.fits:
                helps.append(f"a 4-bit (AWQ/GPTQ) checkpoint needs {gib1(four_bit.weights_bytes)} per GPU at "
                             f"TP {tp_now}")
        except ValueError:
            pass
    helps.append("a GPU with more memory")
    return "; ".join(helps)


# Signs that data-parallel ranks are spread over several nodes (then --data-parallel-size is not local).
_MULTI_NODE_DP = ("--data-parallel-address", "--data-parallel-start-rank", "--headless", "--data-parallel-rpc-port")


def lws_size(template) -> int | None:
    if template.owner.kind == "ModelServing":  # Kthena: a role's entry pod and its workers
        from vllmlint.k8s.objects import kthena_group_size

        return kthena_group_size(template)
    if template.owner.kind != "LeaderWorkerSet" or template.owner.spec is None:
        return None
    lwt = template.owner.spec.get("leaderWorkerTemplate")
    size = lwt.get("size") if isinstance(lwt, Mapping) else None
    return size.value if isinstance(size, Scalar) and isinstance(size.value, int) else None


def gpus_needed_per_pod(work, template) -> tuple[int, str] | None:
    """(GPUs each pod of this workload must have, how that was worked out), or None when it cannot be said (VL606
    and VL708 read this one answer)."""
    if not work.known("--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size",
                      "--data-parallel-size-local", "--nnodes"):
        return None
    world_size = work.world_size
    layout = f"TP {work.tensor_parallel_size} x PP {work.pipeline_parallel_size}"
    multi_node_dp = any(flag in work.options for flag in _MULTI_NODE_DP)
    if work.data_parallel_size_local is not None:
        ranks = work.data_parallel_size_local
        layout += f" x {ranks} local data-parallel ranks"
    elif work.data_parallel_size > 1:
        if multi_node_dp or (work.nnodes or 1) > 1:
            return None  # data-parallel ranks over several nodes without --data-parallel-size-local
        ranks, layout = work.data_parallel_size, layout + f" x DP {work.data_parallel_size}"
    else:
        ranks = 1
    if work.nnodes and work.nnodes > 1:
        if world_size % work.nnodes:
            return None
        return world_size // work.nnodes * ranks, f"{layout} over --nnodes {work.nnodes}"
    size = lws_size(template) if template is not None else None  # None: an operator's resource, one pod
    if size and size > 1:
        if world_size % size:
            return None
        return world_size // size * ranks, f"{layout} over a {template.owner.kind} group of {size} pods"
    return world_size * ranks, layout
