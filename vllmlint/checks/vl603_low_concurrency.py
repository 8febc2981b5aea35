"""VL603: fewer full-length sequences fit in the KV cache than --max-num-seqs admits."""
from vllmlint.capacity.lint import capacity_workloads, model_words, where_words
from vllmlint.checks import Context


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        if work.model is None or work.max_num_seqs is None or not work.estimate_inputs_known():
            continue  # without --max-num-seqs vLLM's default is a ceiling nobody chose: nothing to compare
        for placement in work.hosting_landings():
            plan = work.estimate(placement.candidate.gpu)
            if plan is None or not plan.ok or plan.max_sequences >= work.max_num_seqs:
                continue
            message = (f"{model_words(work)} on {placement.candidate.gpu.id} ({where_words(placement)}): the KV cache "
                       f"holds about {plan.kv_tokens:,} tokens, {plan.concurrency:.1f} sequences of "
                       f"{plan.max_model_len} tokens, but --max-num-seqs {work.max_num_seqs} admits more: when "
                       "requests are that long, vLLM preempts and queues them instead of running them together. "
                       "Lower --max-num-seqs or --max-model-len, or give the KV cache more memory.")
            yield ctx.finding(work.value_token("--max-num-seqs") or work.model_anchor, message, about=work.invocation,
                              value=f"{work.max_num_seqs}@{placement.candidate.gpu.id}")
            break
