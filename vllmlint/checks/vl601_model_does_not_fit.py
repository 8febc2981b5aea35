"""VL601: the weights one GPU holds exceed what vLLM may use of that GPU."""
from vllmlint.capacity.lint import (also_words, failing_plans, knobs_for_weights, model_words, scope,
                                    utilization_words, where_words)
from vllmlint.capacity.estimate import resolved_dtype
from vllmlint.capacity.workload import gib1
from vllmlint.checks import Context


def check(ctx: Context):
    for work, hosting, failing, all_fail in failing_plans(ctx.world, lambda plan: not plan.fits):
        placement, plan = failing[0]
        severity, rest = scope(ctx, failing, all_fail, hosting)
        gpu = placement.candidate.gpu
        layout = f"TP {plan.tensor_parallel_size}"
        if plan.pipeline_parallel_size > 1:
            layout += f", PP {plan.pipeline_parallel_size}"
        dtype = plan.quantization or plan.model.torch_dtype
        if plan.quantization is None and resolved_dtype(plan.model, gpu, work.dtype, work.release) == "float32":
            dtype = "float32: vLLM refuses float16 for this model and the GPU has no bfloat16"
        helps = knobs_for_weights(work, placement, plan, need_kv=False)
        message = (f"{model_words(work)} does not fit one {gpu.id}: it needs {gib1(plan.weights_bytes)} of weights "
                   f"per GPU ({dtype}, {layout}); "
                   f"one {gpu.id} ({where_words(placement)}) gives vLLM {gib1(plan.budget_bytes)} at "
                   f"{utilization_words(work, plan)}, so loading fails with CUDA out of memory. What helps: {helps}."
                   f"{also_words(failing)}{rest}")
        yield ctx.finding(work.model_anchor, message, about=work.invocation, value=f"{plan.model.id}@{gpu.id}",
                          severity=severity)
