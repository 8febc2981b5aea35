"""VL716: options that contradict the checkpoint the server loads.

- `--quantization M` for a method that loads only a checkpoint quantized beforehand (awq, gptq and their
  Marlin kernels, `data/quantization-methods.yaml`) when the catalog's `quantization` fact says the
  checkpoint is not quantized ("Cannot find the config file for awq"), or is quantized with a method M
  does not load (vLLM's mismatch error). Methods that quantize while loading (fp8, bitsandbytes ...) are
  not in the table and never reported.
- a multimodal-only option (`--limit-mm-per-prompt` ...) on a model whose `modalities` fact is text only:
  error on the releases that refuse it, info where vLLM ignores it (`data/multimodal-options.yaml`).

The facts describe one repository's main branch: `--revision` with another value (a branch may hold a
quantized checkpoint) silences the rule; a variant, a quantized copy or a local path matched by its words gets
no finding (their files may differ); a local path whose config.json is among the linted files is read.
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.capacity.estimate import min_capability
from vllmlint.capacity.specs import ModelSpec, repository_fact
from vllmlint.capacity.workload import Workload, workloads
from vllmlint.checks import Context
from vllmlint.finding import Finding, Severity
from vllmlint.vllm.checkpoint import checkpoint_release, multimodal_option, off_main, quantization_refused
from vllmlint.vllm.flags import OK
from vllmlint.vllm.invocation import Invocation, Option

_EMPTY = {"", "{}", "[]", "none", "null", "false", "0"}


def check(ctx: Context) -> Iterator[Finding | None]:
    for work in workloads(ctx.world):
        model, name = work.model, work.model_name
        if model is None or name is None:
            continue
        invocation = work.invocation
        if invocation.config_file is not None:
            continue  # the --config file may set quantization, revision or another option: the run does not read it
        if off_main(invocation, "--revision"):
            continue  # another branch, tag or commit: its config.json and weights may differ from main's
        release = _release(invocation)
        yield from _quantization(ctx, work, model, name, release)
        yield from _multimodal(ctx, work, model, name, release)


def _release(invocation: Invocation) -> str:
    return checkpoint_release(invocation)


def _release_phrase(invocation: Invocation, release: str) -> str:
    if invocation.release is None or invocation.assumed:
        return f"vLLM {release} (assumed: the workload's release is unknown)"
    return f"vLLM {release}"


def _quantization(ctx: Context, work: Workload, model: ModelSpec, name: str, release: str) -> Iterator[Finding | None]:
    refused = quantization_refused(work)  # the decision VL607 reads too: it stays silent on these
    if refused is None:
        return
    option, method, row, stored = refused
    vllm = _release_phrase(work.invocation, release)
    if stored is None:
        files = " or ".join(f"`{f}`" for f in row.get("config_files") or ())
        # The first line (up to the first `: `) names the flag and the model; the files read follow.
        message = (f"`--quantization {method}` needs a checkpoint quantized with {method.split('_')[0].upper()}, and "
                   f"`{name}` is not quantized: its config.json has no quantization_config, no "
                   f"{files}, and {vllm} exits at start with \"Cannot find the config file for {method}\". Fix: drop "
                   f"`--quantization` to serve the original weights, or serve a repository quantized with "
                   f"{method.split('_')[0].upper()}{_online(work)}.")
        yield ctx.finding(option.value_token, message, about=work.invocation, value=f"{method}:unquantized")
        return
    message = (f"`--quantization {method}` does not load `{name}`, quantized with `{stored}`: its config.json "
               f"quantization_config.quant_method says so, and {vllm} exits at start with \"Quantization method "
               f"specified in the model config ({stored}) does not match the quantization method specified in the "
               f"`quantization` argument ({method})\". Fix: drop `--quantization` (vLLM reads `{stored}` from the "
               f"checkpoint) or pass `--quantization {stored}`.")
    yield ctx.finding(option.value_token, message, about=work.invocation, value=f"{method}:{stored}")


# Methods that quantize an unquantized checkpoint while loading, suggested as a fix (data/capacity/
# vllm-gpu-support.yaml quantization_min_capability says in which releases they exist and what GPU they need).
_ONLINE = ("fp8", "bitsandbytes")


def _online(work: Workload) -> str:
    """", or use a method that quantizes while loading (...)" with only the methods the release has and every GPU
    the pod may land on can run (all of them when the GPU is unknown); "" when none."""
    release = work.release or checkpoint_release(work.invocation)
    gpus = [p.candidate.gpu for p in work.hosting_landings()]
    usable = []
    for method in _ONLINE:
        needed = min_capability(method, release)
        if needed is not None and all(gpu.capability >= needed for gpu in gpus):
            usable.append(f"`{method}`")
    if not usable:
        return ""
    return f", or use a method that quantizes while loading ({', '.join(usable)})"


def _multimodal(ctx: Context, work: Workload, model: ModelSpec, name: str, release: str) -> Iterator[Finding | None]:
    fact = repository_fact(model, name, "modalities")
    if fact is None or tuple(fact.value or ()) != ("text",):
        return
    seen: set[str] = set()
    for option in work.invocation.options:
        if option.spec is None or not _accepted(option) or option.canonical in seen:
            continue
        outcome = multimodal_option(option.canonical, release)
        if outcome is None or not _set(option):
            continue
        seen.add(option.canonical)
        kind, _row = outcome
        vllm = _release_phrase(work.invocation, release)
        flag = option.canonical
        if kind == "refused":
            # the architecture after the first line's `: ` (formatters.report.split_message)
            message = (f"`{flag}` is only for multimodal models, and `{name}` takes text only: its architecture is "
                       f"{model.architecture}, and {vllm} exits at start with \"`{flag[2:].replace('-', '_')}` is only supported for multimodal "
                       f"models\". Fix: drop `{flag}`, or serve a multimodal model.")
            yield ctx.finding(option.token, message, about=work.invocation, value=f"refused:{flag}")
        else:
            message = (f"`{flag}` is only for multimodal models, and `{name}` takes text only: its architecture is "
                       f"{model.architecture}, and {vllm} starts and ignores it; the model cannot take images, audio or video. Fix: drop "
                       f"`{flag}`, or serve a multimodal model if the clients send media.")
            yield ctx.finding(option.token, message, about=work.invocation, value=f"ignored:{flag}",
                              severity=min(ctx.severity, Severity.INFO))


def _set(option: Option) -> bool:
    """Whether the option asks for something: a switch given, or a value that is not empty (`{}`) or off."""
    if option.spec is not None and not option.spec.takes_value:
        return option.value is None or option.value.strip().lower() not in _EMPTY
    if not option.value_known:
        return False  # `$(VAR)`: it may hold `{}`
    return (option.value or "").strip().lower() not in _EMPTY


def _accepted(option: Option) -> bool:
    """The release's parser reads the flag as written (removed, unknown or joined flags are other rules')."""
    return option.status is None or option.status.kind == OK
