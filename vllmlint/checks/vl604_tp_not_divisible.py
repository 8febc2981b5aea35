"""VL604: the model's heads (or layers) cannot be split the way --tensor/--pipeline-parallel-size asks."""
from vllmlint.capacity.lint import capacity_workloads, model_words
from vllmlint.checks import Context


def _valid_sizes(model) -> list[int]:
    """Powers of two up to 64 that split both the attention heads and the KV heads (MLA: heads only)."""
    sizes = []
    for tp in (1, 2, 4, 8, 16, 32, 64):
        kv = model.num_key_value_heads
        if model.num_attention_heads % tp == 0 and (model.is_mla or kv % tp == 0 or tp % kv == 0):
            sizes.append(tp)
    return sizes


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        model = work.model
        if model is None:
            continue
        tp, pp = work.tensor_parallel_size, work.pipeline_parallel_size
        if tp > 1 and work.known("--tensor-parallel-size"):
            where = work.value_token("--tensor-parallel-size") or work.model_anchor
            heads, kv = model.num_attention_heads, model.num_key_value_heads
            if heads % tp:
                divisors = ", ".join(str(d) for d in _valid_sizes(model))
                message = (f"{model_words(work)} has {heads} attention heads, not divisible by "
                           f"--tensor-parallel-size {tp}: vLLM refuses to start (\"Total number of attention heads "
                           f"({heads}) must be divisible by tensor parallel size ({tp})\"). Use a TP that divides "
                           f"{heads} ({divisors}), and pipeline parallelism for the rest.")
                yield ctx.finding(where, message, about=work.invocation, value=f"heads:{heads}/{tp}")
            elif not model.is_mla and kv % tp and tp % kv:
                sizes = ", ".join(map(str, _valid_sizes(model)))
                message = (f"{model_words(work)} has {kv} KV heads and --tensor-parallel-size {tp}: neither divides "
                           "the other, so vLLM cannot shard or replicate the KV heads evenly and refuses to start. Use "
                           f"a TP that divides {kv} or is a multiple of it (and divides the {heads} attention heads): "
                           f"{sizes}.")
                yield ctx.finding(where, message, about=work.invocation, value=f"kv_heads:{kv}/{tp}")
        if pp > 1 and work.known("--pipeline-parallel-size") and pp > model.num_hidden_layers:
            where = work.value_token("--pipeline-parallel-size") or work.model_anchor
            yield ctx.finding(where, f"--pipeline-parallel-size {pp} exceeds the {model.num_hidden_layers} layers of "
                              f"{model_words(work)}: some pipeline stages would get no layer, and vLLM refuses to "
                              "start.",
                              about=work.invocation, value=f"pp:{pp}>{model.num_hidden_layers}")
