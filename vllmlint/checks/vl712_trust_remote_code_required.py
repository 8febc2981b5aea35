"""VL712: a model whose config is code in its repository, served without --trust-remote-code on a release
whose transformers does not know the model_type.

The decision is `vllmlint.capacity.remote_code.needs_trust_remote_code()`, the one function VL801 (the flag
where it is not needed) uses too: both read the same facts (data/capacity/models.yaml
`needs_trust_remote_code`, data/config-registry.yaml per release) through `remote_code.describes()` and
`remote_code.answer()`, so they never disagree. This check only reports True answers for a catalogued repository id served as such, at its main branch (`--revision` and
`--code-revision` absent or `main`: the facts were read there).

A repository whose tokenizer is code (data/tokenizer-code.yaml: tokenizer_config.json auto_map.AutoTokenizer
names a class transformers does not have) needs the flag to load its tokenizer even where vLLM loads its config
without it (vLLM's own config classes for chatglm, internvl_chat): reported on releases whose transformers
requirement is capped below 5 (`remote_code.tokenizer_needs_flag`), with its own message.
"""
from __future__ import annotations

from vllmlint.capacity.remote_code import answer, describes, release_image, release_range, tokenizer_needs_flag
from vllmlint.capacity.workload import workloads
from vllmlint.checks import Context
from vllmlint.vllm.release import version_key


def check(ctx: Context):
    for work in workloads(ctx.world):
        invocation = work.invocation
        if work.model_token is None or invocation.option("--trust-remote-code") or not describes(invocation):
            continue
        tokenizer = tokenizer_needs_flag(ctx.world, work)
        if tokenizer is not None:
            yield _tokenizer_finding(ctx, work, *tokenizer)
            continue
        match = work.match
        if match is None:
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
            # The first line (up to the `: `) is the problem; the config class and the releases follow it.
            f"{work.model_name} is served without --trust-remote-code, but its config.json is code in the "
            f"repository: auto_map.AutoConfig {facts.remote_config}, model_type {facts.model_type}, and {since}; "
            f"vLLM {invocation.release} (transformers{row.transformers}{built}) cannot load it, so the pod fails "
            "at start with transformers' \"requires you to execute the configuration file\" error. " + fix,
            about=invocation, value=f"{model.id}@{invocation.release}")


def _tokenizer_finding(ctx: Context, work, fact, row):
    invocation = work.invocation
    built = f", image built {row.last_built}" if release_image(invocation) else ""
    return ctx.finding(
        work.model_token,
        f"Add --trust-remote-code (after reading the repository's {fact.auto_map.split('.')[0]}.py) to serve "
        f"{work.model_name}: its tokenizer is code in the repository (tokenizer_config.json auto_map.AutoTokenizer "
        f"{fact.auto_map}) and transformers has no {fact.tokenizer_class}, so vLLM {invocation.release} "
        f"(transformers{row.transformers}{built}) cannot load the tokenizer without the flag and the pod fails at "
        "start (transformers: \"contains custom code which must be executed to correctly load the model\"; vLLM: "
        "\"Failed to load the tokenizer\"). This holds whatever vLLM knows about the model's config.",
        about=invocation, value=f"tokenizer:{fact.id}@{invocation.release}")
