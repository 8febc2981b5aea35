"""VL720: the model's architecture is not in the model registry of the release the workload runs, and that
release's Transformers fallback cannot serve it either: vLLM stops with "Model architectures [...] are not
supported for now" (0.6.3-0.7.1 and from 0.10.0; 0.7.2-0.8.2 "... has no vLLM implementation and the
Transformers implementation is not compatible with vLLM", 0.8.3-0.9.2 "Cannot find model module").

The architecture comes from the model catalog (data/capacity/models.yaml `architecture`) or from the
checkpoint's own config.json among the linted files (`architectures`). Which release has it in its registry,
and whether a release has a Transformers backend at all, is data/model-registry.yaml (read from every wheel
from 0.6.3 on by `python -m vllmlint_dev.model_registry`). A release whose registry lacks the architecture still
serves the model when its Transformers backend can (`--model-impl auto`, the default): that depends on the
transformers installed and on the model class (`is_backend_compatible()`), which vllmlint cannot know in
general. So the rule only reports when the fallback certainly fails:

- the release has no Transformers backend (0.6.3 to 0.7.1), or `--model-impl vllm` turns it off;
- the workload runs the image published with the release (vllm/vllm-openai:vX, no package installed over
  it), the model has no code of its own in its repository, and no transformers release published before the
  image was built defines a class of the architecture's name (`getattr(transformers, architecture)` is what
  the backend looks up).

Silent when the release is unknown, assumed or not read, for a vendor build, when the config is read from
elsewhere (`--hf-config-path`, `--config`, a revision) or rewritten (`--hf-overrides`), when the registry has
the same model under another task suffix (vLLM converts some), and for an architecture no release has.
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.capacity.remote_code import describes, installs_packages, release_image
from vllmlint.capacity.workload import Workload, workloads
from vllmlint.checks import Context, describe_workload
from vllmlint.finding import Finding
from vllmlint.source.yamlmodel import Scalar
from vllmlint.vllm.invocation import Token
from vllmlint.vllm import model_registry
from vllmlint.vllm.release import upstream_image, version_key


def check(ctx: Context) -> Iterator[Finding | None]:
    for work in workloads(ctx.world):
        found = _judge(ctx, work)
        if found is None:
            continue
        arch, first, reason = found
        invocation = work.invocation
        release = invocation.release
        origin = f" ({invocation.release_origin})" if invocation.release_origin else ""
        image = invocation.release_origin.startswith("image tag")
        runs, what = ("the image runs", "the image") if image else (f"{describe_workload(invocation)} runs", "vLLM")
        assert work.model_token is not None
        where: Token | Scalar = work.model_token
        if where.source is None and invocation.container is not None and invocation.container.image is not None:
            where = invocation.container.image  # a model the image's own entrypoint names: the image says it
        yield ctx.finding(
            where,
            f"{arch} needs vLLM >= {first}; {runs} {release}: upgrade {what} to {first} or later. "
            f"{describe_workload(invocation)} runs vLLM {release}{origin}, whose model registry has no {arch} "
            f"(first in {first}), and {reason}, so vLLM cannot load the model: it stops at start (\"Model "
            f"architectures ['{arch}'] are not supported for now\" or, on releases whose fallback loads later, "
            "\"Cannot find model module\" / \"has no vLLM implementation\") and the pod crash-loops.",
            about=invocation, value=f"{arch}@{release}")


def _judge(ctx: Context, work: Workload) -> tuple[str, str, str] | None:
    """(architecture, first release that has it, why the fallback fails) when vLLM certainly stops; else None."""
    invocation = work.invocation
    release = invocation.release
    if work.model_token is None or work.match is None or release is None or invocation.assumed:
        return None
    row = model_registry.release(release)
    if row is None or invocation.fork or not describes(invocation) or _other_platform(invocation):
        return None
    if "--hf-overrides" in work.options:
        return None  # it may set `architectures`
    archs = _architectures(ctx, work)
    if not archs:
        return None
    histories = [model_registry.architecture(a) for a in archs]
    if any(h is None for h in histories):
        return None  # a name no release has: a plugin's, a typo, a remote-code model vLLM never had
    if any(model_registry.in_registry(a, release) or model_registry.relatives_in_registry(a, release)
           for a in archs):
        return None
    newer = [h for h in histories if h is not None and version_key(release) < version_key(h.first)]
    if len(newer) != len(histories):
        return None  # removed (or missing in this release only): not a model too new for the release
    impl = work.options.get("--model-impl")
    impl_value = str(impl.value).strip().lower() if impl is not None and impl.value_known else None
    if impl is not None and impl_value is None:
        return None
    earliest = min(newer, key=lambda h: version_key(h.first))  # the first release with one of them
    arch, first = earliest.name, earliest.first
    if not row.transformers_backend:
        since = model_registry.backend_since()
        return arch, first, (f"vLLM {release} has no Transformers backend to fall back to"
                             + (f" (the first release with one is {since})" if since else ""))
    if impl_value == "vllm":
        return arch, first, "`--model-impl vllm` turns the Transformers fallback off"
    if impl_value not in (None, "auto", "transformers"):
        return None
    reason = _transformers_lacks(ctx, work, newer, row.built)
    return (arch, first, reason) if reason else None


def _other_platform(invocation) -> bool:
    """An upstream TPU, XPU or Neuron image: their platform plugins bring model implementations of their own."""
    image = invocation.image
    name = getattr(image, "name", "") or ""
    return upstream_image(image) and name.rsplit("/", 1)[-1] not in ("vllm-openai", "vllm-openai-rocm",
                                                                      "vllm-openai-cpu")


def _architectures(ctx: Context, work: Workload) -> list[str]:
    """The architectures vLLM reads: config.json's `architectures` when the checkpoint's config.json is in the
    run, else the catalog entry's architecture."""
    if work.config_match is not None:
        config = _config_json(ctx, work)
        names = config.get("architectures") if config is not None else None
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            return []
        return list(names)
    assert work.match is not None
    arch = work.match.model.architecture
    return [] if not arch or arch == "unknown" or ":" in arch else [arch]


def _config_json(ctx: Context, work: Workload) -> dict | None:
    from vllmlint.capacity.hfconfig import ModelConfigError, files_in_run

    try:
        files = files_in_run(work.model_name or "", ctx.world)
    except ModelConfigError:
        return None
    return files.config if files is not None else None


def _repository_code(ctx: Context, work: Workload) -> bool | None:
    """Whether the checkpoint has code of its own the fallback could load (config.json `auto_map`); None when
    not known."""
    if work.config_match is not None:
        config = _config_json(ctx, work)
        return None if config is None else bool(config.get("auto_map"))
    assert work.match is not None
    facts = work.match.model.needs_trust_remote_code
    if facts is None:
        return None
    return facts.remote_config is not None


def _transformers_lacks(ctx: Context, work: Workload, newer: list, built: str) -> str | None:
    """Why the Transformers backend cannot find the architecture's class, when that is certain: the image
    published with the release holds a transformers released before the image was built, and none released
    by then defines such a class. None when not certain (another image, packages installed over it, code in
    the repository, --trust-remote-code, an image newer than the transformers releases read)."""
    invocation = work.invocation
    if not release_image(invocation) or "--trust-remote-code" in work.options:
        return None
    if invocation.container is not None and installs_packages(ctx.world, invocation.container):
        return None
    if _repository_code(ctx, work) is not False:
        return None
    if built >= model_registry.newest_transformers_date():
        return None
    published = model_registry.transformers_published()
    defining = []
    for history in newer:
        if history.transformers is None:
            defining.append(f"no transformers release defines {history.name}")
            continue
        date = published.get(history.transformers)
        if date is None or date <= built:
            return None
        defining.append(f"{history.name} is defined from transformers {history.transformers} (published {date})")
    return (f"its Transformers fallback cannot find the class either: the image was built {built}, and "
            + "; ".join(defining))
