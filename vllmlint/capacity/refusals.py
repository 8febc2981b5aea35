"""What makes vLLM refuse a configuration at start-up before memory is even counted, read from vLLM's source.

Memory refusals (the weights exceed the budget, no room for one max-model-len sequence) are the Estimate's
`fits` / `kv_ok`; these are the others, each with the message vLLM stops with:

- `ModelConfig.verify_with_parallel_config`: "Total number of attention heads (H) must be divisible by tensor
  parallel size (T)." (vllm/config/model.py, 0.33.0 lines 1557-1564; vllm/config.py line 413 in 0.6.2);
- `QKVParallelLinear.__init__` divides the KV heads by the TP size, or the TP size by the KV heads when they are
  fewer (`divide()` asserts "X is not divisible by Y"; vllm/model_executor/layers/linear.py, 0.33.0 lines
  1066-1070, vllm/distributed/utils.py line 53); MLA models cache one latent and have no such constraint;
- `_get_and_verify_max_len`: "User-specified max_model_len (L) is greater than the derived max_model_len ..."
  unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set (vllm/config/model.py, 0.33.0 lines 2657-2686). vLLM derives the
  length from the config's max_position_embeddings, multiplies in the rope_scaling factor of the RoPE types that
  do not already scale it (not yarn, llama3, longrope, su, deepseek_yarn; lines 2598-2629), and caps it by the
  tokenizer_config.json model_max_length (lines 2570-2575). Here the derived length is the ModelSpec's
  max_position_embeddings: neither the factor nor the tokenizer cap is modelled. A longer context asked for with
  --hf-overrides changes the config, which is what `allow_long_max_model_len` stands for here.
"""
from __future__ import annotations

from vllmlint.capacity.specs import ModelSpec


def startup_refusals(model: ModelSpec, tensor_parallel_size: int, max_model_len: int | None = None, *,
                     allow_long_max_model_len: bool = False) -> list[str]:
    """The reasons vLLM refuses to start `model` with this TP size and context length (empty: none of these).

    `max_model_len` None is the model's own length (never refused); `allow_long_max_model_len` is
    VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (or a config override that lengthens the context)."""
    reasons = []
    tp = int(tensor_parallel_size)
    heads, kv = model.num_attention_heads, model.num_key_value_heads
    if tp > 1 and heads % tp:
        reasons.append(f"Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})")
    elif tp > 1 and not model.is_mla and kv % tp and tp % kv:
        reasons.append(f"the {kv} KV heads can be neither split over nor replicated across tensor parallel size "
                       f"{tp} ({max(kv, tp)} is not divisible by {min(kv, tp)})")
    limit = model.max_position_embeddings
    if max_model_len is not None and max_model_len > limit and not allow_long_max_model_len:
        reasons.append(f"User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len "
                       f"(max_position_embeddings={limit} in the model's config.json); VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 "
                       "overrides it")
    return reasons


def valid_tensor_parallel_sizes(model: ModelSpec, up_to: int = 64) -> list[int]:
    """Powers of two up to `up_to` that vLLM accepts for the model's heads (startup_refusals says none)."""
    sizes, tp = [], 1
    while tp <= up_to:
        if not startup_refusals(model, tp):
            sizes.append(tp)
        tp *= 2
    return sizes


__all__ = ["startup_refusals", "valid_tensor_parallel_sizes"]
