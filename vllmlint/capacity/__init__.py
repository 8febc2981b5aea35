"""Capacity knowledge for vllmlint: which model, which GPUs, and whether vLLM's memory plan would fit.

Pure data + arithmetic; imports nothing heavy until a catalog is first read.

    from vllmlint.capacity import resolve_model, estimate, gib
    match = resolve_model("Qwen/Qwen2.5-7B-Instruct-AWQ")
    plan = estimate(match.model, "L4", quantization=match.quantization, max_model_len=8192)
    plan.fits, plan.kv_ok, gib(plan.kv_cache_bytes), plan.breakdown
"""
from vllmlint.capacity.specs import (
    GPU,
    GiB,
    InstanceType,
    MiB,
    ModelSpec,
    count_parameters,
    find_gpu,
    gpus,
    clear_extra,
    instance_types,
    models,
    register_extra,
)
from vllmlint.capacity.hfconfig import model_from_config_json
from vllmlint.capacity.estimate import (
    Estimate,
    default_gpu_memory_utilization,
    estimate,
    gib,
    smallest_tp_that_fits,
    to_gib,
)
from vllmlint.capacity.names import Match, resolve_model, split_quantization
from vllmlint.capacity.nodes import Candidate, gpus_for_node_constraints
from vllmlint.vllm.release import release_numbers

__all__ = [
    "GPU", "GiB", "MiB", "InstanceType", "ModelSpec", "Match", "Estimate", "Candidate",
    "models", "gpus", "register_extra", "clear_extra", "instance_types", "find_gpu", "count_parameters",
    "model_from_config_json",
    "resolve_model", "split_quantization", "estimate", "smallest_tp_that_fits", "gib", "to_gib",
    "release_numbers", "default_gpu_memory_utilization", "gpus_for_node_constraints",
]
