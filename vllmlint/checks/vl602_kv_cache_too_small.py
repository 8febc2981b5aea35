"""VL602: after weights and the profiling reserve, the KV cache cannot hold one max-model-len sequence."""
from vllmlint.capacity.lint import (also_words, failing_plans, knobs_for_weights, model_words, scope,
                                    utilization_words, where_words)
from vllmlint.capacity.workload import gib1
from vllmlint.finding import Severity
from vllmlint.checks import Context

# The reserve (activations, CUDA graphs, NCCL buffers) is an estimate; a shortfall this small is reported
# as a warning: vLLM may or may not start.
BORDERLINE = 0.9


def check(ctx: Context):
    for work, hosting, failing, all_fail in failing_plans(ctx.world, lambda plan: plan.fits and not plan.kv_ok):
        placement, plan = failing[0]
        severity, rest = scope(ctx, failing, all_fail, hosting)
        borderline = plan.kv_tokens >= BORDERLINE * plan.max_model_len
        if borderline:
            severity = min(severity, Severity.WARNING)
        gpu = placement.candidate.gpu
        given = "--max-model-len" in work.options
        length = f"--max-model-len {plan.max_model_len}" if given else \
            f"the model's full context ({plan.max_model_len} tokens)"
        unset = "" if given else " with no --max-model-len"
        if plan.kv_cache_memory_bytes_override is not None:
            room = f"--kv-cache-memory-bytes gives the KV cache {gib1(plan.kv_cache_bytes)}"
        else:
            room = (f"of the {gib1(plan.budget_bytes)} vLLM may use at {utilization_words(work, plan)}, weights take "
                    f"{gib1(plan.weights_bytes)} and the profiling reserve about {gib1(plan.reserve_bytes)}, leaving "
                    f"{gib1(plan.kv_cache_bytes)} of KV cache")
        lower = max(1024, plan.kv_tokens // 1024 * 1024) if plan.kv_tokens >= 1024 else None
        knobs = (f"lower --max-model-len (to {lower} or less)" if lower else "lower --max-model-len") + "; " + \
            knobs_for_weights(work, placement, plan, need_kv=True)
        need = f"one sequence needs {gib1(plan.kv_bytes_per_sequence)} of KV cache per GPU"
        verdict = (f"{need}; the shortfall is within the estimate's margin, so vLLM may refuse to start" if borderline
                   else f"{need}, and vLLM refuses to start (\"To serve at least one request with the model's max seq "
                   f"len ({plan.max_model_len}), ... KV cache is needed, which is larger than the available KV cache "
                   "memory\")")
        # The problem first (the text formatter shows the part before the first top-level colon as the headline).
        message = (f"the KV cache left on {gpu.id} cannot hold one sequence of {length}: {model_words(work)} on "
                   f"{gpu.id} ({where_words(placement)}){unset}: {room}, which holds about {plan.kv_tokens:,} tokens "
                   f"({plan.kv_bytes_per_token / 1024:.0f} KiB per token per GPU); {verdict}. What helps: "
                   f"{knobs}.{also_words(failing)}{rest}")
        where = work.value_token("--max-model-len") or work.model_anchor
        yield ctx.finding(where, message, about=work.invocation, value=f"{plan.max_model_len}@{gpu.id}",
                          severity=severity)
