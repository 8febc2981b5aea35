"""VL605: --max-model-len beyond the model's context window without an override vLLM accepts."""
from vllmlint.capacity.lint import capacity_workloads, model_words
from vllmlint.vllm.release import version_key
from vllmlint.checks import Context


def _override(work) -> str | None:
    """Why a longer context is allowed, if it is: --hf-overrides, VLLM_ALLOW_LONG_MAX_MODEL_LEN, or (before
    0.11) --rope-scaling."""
    if "--hf-overrides" in work.options or "--hf-config-path" in work.options:
        return "hf-overrides"
    container = work.container
    if container is not None:
        env = container.env
        allow = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"
        if allow in env and env[allow] in (None, "1", "true", "True"):
            return "env"  # None: from a ConfigMap or Secret, which may well say 1
    # --rope-scaling was removed in 0.11 (a release-less workload is assumed to run the newest release).
    release = work.release
    if "--rope-scaling" in work.options and release is not None and version_key(release) < version_key("0.11.0"):
        return "rope-scaling"
    return None


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        model = work.model
        if model is None or work.max_model_len is None or not work.known("--max-model-len"):
            continue
        limit = model.max_position_embeddings
        if work.max_model_len <= limit or _override(work):
            continue
        yield ctx.finding(work.value_token("--max-model-len") or work.model_anchor,
                          f"Lower --max-model-len {work.max_model_len} to {limit} or less: it is beyond the "
                          f"{limit}-token context of {model_words(work)} (max_position_embeddings in its "
                          "config.json), and vLLM refuses to start (\"User-specified max_model_len "
                          f"({work.max_model_len}) is greater than the derived max_model_len\"). For a longer "
                          "context, extend RoPE with --hf-overrides (e.g. rope_scaling with YaRN) if the model "
                          "supports it.",
                          about=work.invocation, value=f"{work.max_model_len}>{limit}")
