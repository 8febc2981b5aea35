"""VL712: a model whose config is code in its repository, served without --trust-remote-code on a release
whose transformers does not know the model_type.

The decision is `vllmlint.capacity.remote_code.needs_trust_remote_code()`, the one function VL801 (the flag
where it is not needed) uses too: both read the same facts (data/capacity/models.yaml
`needs_trust_remote_code`, data/config-registry.yaml per release), so they never disagree. This check only
reports True answers for a catalogued repository id served as such, at its main branch (`--revision` and
`--code-revision` absent or `main`: the facts were read there).
"""
from __future__ import annotations

from vllmlint.capacity.remote_code import needs_trust_remote_code, release_range
from vllmlint.capacity.workload import workloads
from vllmlint.checks import Context
from vllmlint.vllm.checkpoint import off_main
from vllmlint.vllm.release import release_from_tag, version_key

# Flags that make vLLM read another config than the repository's config.json: then the repository's config
# code is not what is loaded (vllm/engine/arg_utils.py: --config-format mistral reads params.json;
# --hf-config-path reads the config from another repository or folder).
_OTHER_CONFIG = ("--hf-config-path",)
_HF_FORMATS = ("auto", "hf")
_INSTALLERS = ("pip", "pip3", "uv")


def _release_image(invocation) -> bool:
    """vLLM runs from the CUDA image published with its release (vllm/vllm-openai:vX): the transformers in it
    predates the image."""
    image = invocation.image
    if image is None or not image.repository.endswith("vllm/vllm-openai") or invocation.release is None:
        return False
    return release_from_tag(image.tag) == invocation.release


def _installs_packages(world, container) -> bool:
    """The container runs `pip install` / `uv pip install` before vLLM: its transformers may be another."""
    for command in world.shell_commands:
        if command.container is not container:
            continue
        words = command.words
        if not words:
            continue
        first = words[0].rsplit("/", 1)[-1]
        if (first in _INSTALLERS or (first.startswith("python") and "pip" in words[1:3])) and "install" in words:
            return True
    return False


def check(ctx: Context):
    for work in workloads(ctx.world):
        match = work.match
        if match is None or match.how not in ("exact id", "case-insensitive id") or work.model_token is None:
            continue  # only a catalogued repository, named as such (a fork or quantized copy has its own config)
        invocation = work.invocation
        if invocation.option("--trust-remote-code") or any(invocation.option(f) for f in _OTHER_CONFIG):
            continue
        if invocation.config_file is not None:
            continue  # the --config file may set trust-remote-code (or revision, hf-config-path): not read
        if off_main(invocation, "--revision") or off_main(invocation, "--code-revision"):
            continue  # the facts are main's config.json and code: another revision's may differ
        formats = invocation.option("--config-format")
        if formats and not all(o.value_known and str(o.value).lower() in _HF_FORMATS for o in formats):
            continue  # the config comes from elsewhere (params.json), or the format is not known
        release_image = _release_image(invocation)
        container = invocation.container
        if container is not None and _installs_packages(ctx.world, container):
            continue
        model = match.model
        if needs_trust_remote_code(model, invocation.release, release_image=release_image) is not True:
            continue
        facts = model.needs_trust_remote_code
        row = release_range(invocation.release)
        if facts is None or row is None:
            continue
        since = (f"transformers knows it only from {facts.transformers_since}" if facts.transformers_since
                 else "no transformers release knows it")
        built = f", image built {row.last_built}" if release_image else ""
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
