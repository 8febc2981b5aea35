"""What vLLM does with a checkpoint's own properties, per release: sourced tables under `data/`.

- `data/chat-templates.yaml`: from which release a chat request to a tokenizer without a chat template is
  refused, and vLLM's fallback templates by config.json `model_type` (chat-template-missing, VL711);
- `data/quantization-methods.yaml`: `--quantization` methods that load only a checkpoint quantized
  beforehand, and which checkpoint quant_method values they accept (model-option-mismatch, VL716);
- `data/multimodal-options.yaml`: options that only mean something for a multimodal model, and whether a
  release refuses or ignores them on a text-only one (VL716).

Each table is read once per process. A release outside every range the tables give is unknown: callers
stay silent.

The model catalog's facts describe a repository's `main` branch; `off_main()` tells a rule when the server
reads another revision (`--revision`, `--code-revision`, `--tokenizer-revision`), whose files may differ.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from vllmlint.vllm.release import version_key

MAIN = "main"  # the branch the catalog's facts were read from (huggingface.co/<repo>/blob/main/...)


def off_main(invocation, flag: str) -> bool:
    """Whether the server reads the repository at a revision not known to be `main`: the last `flag`
    (argparse keeps the last) with any value other than `main`, a `$(VAR)` or no value. No flag: main.

    `--tokenizer-revision` defaults to `--revision` (vllm 0.6.3 vllm/config.py:147-148, 0.33.0
    vllm/config/model.py:609-610): asked for it, the answer follows `--revision` when it is not given."""
    options = invocation.option(flag)
    if not options and flag == "--tokenizer-revision":
        options = invocation.option("--revision")
    if not options:
        return False
    last = options[-1]
    return not last.value_known or (last.value or "").strip() != MAIN


@lru_cache(maxsize=None)
def _table(name: str) -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / name)
    return data if isinstance(data, dict) else {}


def in_range(release: str, bounds: dict[str, Any] | None) -> bool:
    """Whether `release` lies within `{from, to}` (inclusive; `to` open when absent); False without bounds."""
    if not bounds or not bounds.get("from"):
        return False
    key = version_key(release)
    if key < version_key(str(bounds["from"])):
        return False
    return not bounds.get("to") or key <= version_key(str(bounds["to"]))


def chat_template_refusal(release: str) -> dict[str, Any] | None:
    """The `refused` row (from, message, sources) when `release` refuses chat without a template, else None."""
    refused = _table("chat-templates.yaml").get("refused") or {}
    return refused if in_range(release, {"from": refused.get("from")}) else None


def chat_template_fallback(model_type: str | None, release: str) -> dict[str, Any] | None:
    """vLLM's own fallback template row for a config.json `model_type` in `release`, if it has one."""
    if not model_type:
        return None
    for row in _table("chat-templates.yaml").get("fallbacks") or ():
        if row.get("model_type") == model_type and in_range(release, row):
            return row
    return None


def prequantized_method(name: str, release: str) -> dict[str, Any] | None:
    """The row of a `--quantization` method that loads only a pre-quantized checkpoint, in `release`."""
    wanted = (name or "").strip().lower()
    for row in _table("quantization-methods.yaml").get("methods") or ():
        if row.get("name") == wanted and in_range(release, row.get("releases")):
            return row
    return None


def checkpoint_release(invocation) -> str:
    """The release the checkpoint tables are read for: the workload's, else the catalog's (assumed)."""
    return invocation.release if invocation.release and not invocation.assumed else invocation.catalog.version


def quantization_refused(work):
    """`(option, method, row, stored)` when the server's last `--quantization M` names a method that loads only
    a checkpoint quantized beforehand (`data/quantization-methods.yaml`) and the catalog's `quantization` fact of
    the repository served says the checkpoint is not quantized (`stored` None) or quantized with a method M does
    not load; None otherwise (unknown, a `--config` file, another `--revision`, a variant or local path).

    vLLM stops on that first: `VllmConfig._get_quantization_config` calls `get_quant_config` ("Cannot find the
    config file for awq") before it compares the GPU's capability with the method's (0.10.1.1
    `vllm/config/__init__.py` lines 3447-3456, 0.29.0 `vllm/config/vllm.py` line 785), and
    `ModelConfig._verify_quantization` (the mismatch error) runs earlier still, when the config is built."""
    from vllmlint.capacity.specs import repository_fact
    from vllmlint.vllm.flags import OK

    model, name, invocation = work.model, work.model_name, work.invocation
    if model is None or name is None or invocation.config_file is not None or off_main(invocation, "--revision"):
        return None
    options = [o for o in invocation.option("--quantization", "-q") if o.status is None or o.status.kind == OK]
    if not options:
        return None
    option = options[-1]  # argparse keeps the last one
    if not option.value_known or option.value_token is None:
        return None
    method = (option.value or "").strip().lower()
    row = prequantized_method(method, checkpoint_release(invocation))
    fact = repository_fact(model, name, "quantization")
    if row is None or fact is None:
        return None
    stored = fact.value
    if stored is not None and str(stored).lower() in [str(m) for m in row.get("checkpoint_methods") or ()]:
        return None
    return option, method, row, stored


def multimodal_option(flag: str, release: str) -> tuple[str, dict[str, Any]] | None:
    """("refused" | "ignored", row) for a multimodal-only option on a text-only model in `release`;
    None when the option is not one of them or the release is in neither range."""
    for row in _table("multimodal-options.yaml").get("options") or ():
        if row.get("flag") != flag:
            continue
        for outcome in ("refused", "ignored"):
            if in_range(release, row.get(outcome)):
                return outcome, row
        return None
    return None


__all__ = ["in_range", "chat_template_refusal", "chat_template_fallback", "prequantized_method",
           "multimodal_option", "checkpoint_release", "quantization_refused"]
