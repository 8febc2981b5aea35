"""Wording shared by the VL1xx rules: which release a finding speaks of, and the value vLLM reads.

Not a rule: the registry only takes `vl<digits>_*` modules as rules.
"""
from __future__ import annotations

from vllmlint.checks import describe_workload
from vllmlint.lazyre import lazy_compile
from vllmlint.vllm.invocation import Invocation, Option
from vllmlint.vllm.release import version_key


def release_phrase(invocation: Invocation) -> str:
    """'vLLM 0.6.4.post1, the release Deployment x runs (image tag ...)', for messages of the VL1xx rules."""
    version = invocation.release or invocation.catalog.version
    if invocation.release is None or invocation.assumed:
        return f"vLLM {invocation.catalog.version} (assumed: the release {describe_workload(invocation)} runs is unknown)"
    origin = f" ({invocation.release_origin})" if invocation.release_origin else ""
    return f"vLLM {version}, the release {describe_workload(invocation)} runs{origin}"


def catalog_note(invocation: Invocation) -> str:
    """When the release itself is not catalogued, say which catalogued release stood in for it."""
    if invocation.release and invocation.release != invocation.catalog.version and not invocation.beyond_catalog:
        side = "before" if version_key(invocation.catalog.version) < version_key(invocation.release) else "after"
        return f" (checked against {invocation.catalog.version}, the closest catalogued release {side} it)"
    return ""


def value_of(option: Option) -> str | None:
    """The option's value as vLLM reads it: `-O3` carries its own value (the generic argv parser may
    have taken the next token as the value as well)."""
    resolution = option.resolution
    if resolution is not None and resolution.value is not None and not option.inline:
        return resolution.value
    return option.value


def version_label(invocation: Invocation) -> str:
    """`0.29.0`, or `0.33.0 (assumed: the release is unknown)` when nothing in the manifest says."""
    if invocation.release is None or invocation.assumed:
        return f"{invocation.catalog.version} (assumed: the release is unknown)"
    return invocation.release


# `trust_remote_code=True`, `max_model_len=8192`: an engine keyword argument written as a word.
KEYWORD_WORD = lazy_compile(r"^([A-Za-z][A-Za-z0-9_-]*)=(.*)$")


def keyword_advice(invocation: Invocation, text: str) -> str | None:
    """What to write instead of a keyword word (`trust_remote_code=True`), as the release's parser spells the
    option, starting with a capital ("Write the option `--trust-remote-code` instead."); None for another word.
    Shared by unknown-flag (VL103) and positional-model-ignored (VL715)."""
    match = KEYWORD_WORD.match(text)
    if match is None:
        return None
    name, value = match.group(1).replace("_", "-"), match.group(2)
    spec = invocation.catalog.option("--" + name)
    if spec is None:
        return "Remove it: it is a keyword argument, not a command-line option."
    flag = spec.canonical_flag
    if not spec.takes_value:
        truthy = value.strip().lower() in ("true", "1", "yes", "on")
        negative = next((f for f in spec.flags if f.startswith("--no-")), None)
        if truthy:
            return f"Write the option `{flag}` instead."
        return f"Drop it (`{flag}` is off by default)" + (f" or write `{negative}`." if negative else ".")
    return f"Write the option instead: `{flag} {value}`." if value else f"Write the option `{flag}` with its value."
