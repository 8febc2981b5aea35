"""VL712: a model whose config is code in its repository, served without --trust-remote-code on a release
whose transformers does not know the model_type.

The decision is `vllmlint.capacity.remote_code.needs_trust_remote_code()`, the one function VL801 (the flag
where it is not needed) uses too: both read the same facts (data/capacity/models.yaml
`needs_trust_remote_code`, data/config-registry.yaml per release) through `remote_code.describes()` and
`remote_code.answer()`, so they never disagree. This check only reports True answers for a catalogued repository id served as such, at its main branch (`--revision` and
`--code-revision` absent or `main`: the facts were read there).
"""
from __future__ import annotations

from vllmlint.capacity.remote_code import answer, describes, release_image, release_range
from vllmlint.capacity.workload import workloads
from vllmlint.checks import Context
from vllmlint.vllm.release import version_key


def check(ctx: Context):
    for work in workloads(ctx.world):
        match = work.match
        if match is None or work.model_token is None:
            continue
        invocation = work.invocation
        if invocation.option("--trust-remote-code") or not describes(invocation):
            continue
        if answer(ctx.world, work) is not True:
            continue
        on_release_image = release_image(invocation)
        model = match.model
        facts = model.needs_trust_remote_code
        row = release_range(invocation.release)
        if facts is None or row is None:
            continue
        since = (f"transformers knows it only from {facts.transformers_since}" if facts.transformers_since
                 else "no transformers release knows it")
        built = f", image built {row.last_built}" if on_release_image else ""
        later = (f", or run vLLM {facts.vllm_since} or later, whose transformers knows {facts.model_type}"
                 if facts.vllm_since else "")
        fix = f"Add --trust-remote-code after reading the repository's code{later}."
        if facts.architecture_since and invocation.release \
                and version_key(invocation.release) < version_key(facts.architecture_since):
            # The flag only gets past the config: the release's model registry has no class for the weights.
            newer = (f", or {facts.vllm_since} or later, which loads it without the flag" if facts.vllm_since else "")
            fix = (f"--trust-remote-code alone does not help: vLLM {invocation.release} has no {model.architecture} "
                   f"in its model registry (first in {facts.architecture_since}). Fix: upgrade to vLLM "
                   f"{facts.architecture_since} or later with --trust-remote-code{newer}.")
        yield ctx.finding(
            work.model_token,
            f"{work.model_name} is served without --trust-remote-code, but its config.json is code in the "
            f"repository (auto_map.AutoConfig {facts.remote_config}, model_type {facts.model_type}) and {since}: "
            f"vLLM {invocation.release} (transformers{row.transformers}{built}) cannot load it, so the pod fails "
            "at start with transformers' \"requires you to execute the configuration file\" error. " + fix,
            about=invocation, value=f"{model.id}@{invocation.release}")
