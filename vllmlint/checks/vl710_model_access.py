"""VL710: the model cannot be fetched: a gated repository with no token in the pod (or an empty one), or
offline mode with a hub id and nothing that can already hold the model.

Hugging Face reads the token from HF_TOKEN (or the older HUGGING_FACE_HUB_TOKEN), else from the file
HF_TOKEN_PATH (default $HF_HOME/token, ~/.cache/huggingface/token); an empty value counts as none
(https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables). A gated repository
answers 401/403 "Cannot access gated repo" without one, and vLLM exits while loading the config.
HF_HUB_OFFLINE=1 / TRANSFORMERS_OFFLINE=1 forbid any download: only the local cache is read.

Silent wherever the pod may get the model another way: a token or token file from anywhere (a Secret, a
ConfigMap, `envFrom` of an object not in the run, `--hf-token`), a volume at the hub cache or Hugging Face
home that is not an empty `emptyDir` (a PVC, hostPath, CSI... may be pre-populated; an emptyDir another
container of the pod also mounts may be filled by it), KServe's storage initializer (`storageUri`,
ServingRuntimes whose model comes from the InferenceService), HF_ENDPOINT mirrors, VLLM_USE_MODELSCOPE, a
local path, an image that is not one of vLLM's own (it may hold the model), a shell script that runs more
than the vLLM command or sets variables before it (`HF_TOKEN=... vllm serve`), or a user whose HOME is
unknown.
"""
from __future__ import annotations

from vllmlint.capacity.workload import download_dir, downloaded_by_name, workloads
from vllmlint.checks import Context
from vllmlint.finding import Severity
from vllmlint.k8s.pod import CONFIG_MAP, LITERAL, env_from_refs
from vllmlint.vllm.invocation import runs_alone
from vllmlint.vllm.release import upstream_image

TOKEN_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
# huggingface_hub constants._is_true and transformers ENV_VARS_TRUE_VALUES: "1", "ON", "YES", "TRUE".
_TRUE = ("1", "ON", "YES", "TRUE")
# Kinds whose model another component fetches (KServe's storage initializer from the InferenceService's
# storageUri, LLMInferenceService's spec.model.uri).
_FETCHED_BY_OTHERS = ("ServingRuntime", "ClusterServingRuntime", "LLMInferenceService")


def _kserve_storage(container) -> bool:
    template = container.pod
    if template.owner.kind != "InferenceService":
        return False
    spec = template.spec
    model = spec.get("model")
    keys = set(spec.keys()) | (set(model.keys()) if hasattr(model, "keys") else set())
    return bool(keys & {"storageUri", "storage", "storageUris"})


def _hf_home(env: dict[str, str | None], container) -> str | None:
    """$HF_HOME as the container sees it, None when the manifest does not say (a value from elsewhere, or a
    non-root user whose HOME comes from the image's passwd file)."""
    for name, suffix in (("HF_HOME", ""), ("XDG_CACHE_HOME", "/huggingface"), ("HOME", "/.cache/huggingface")):
        if name in env:
            value = env[name]
            return value.rstrip("/") + suffix if value else None
    user = container.security_context.run_as_user
    return "/root/.cache/huggingface" if user in (None, 0) else None


def _may_hold(container, paths: list[str]) -> bool:
    """Whether a volume of the pod may already hold what is at `paths` (or below them) when vLLM starts."""
    for mount in container.volume_mounts:
        if not any(mount.holds(p) or mount.mount_path.startswith(p.rstrip("/") + "/") for p in paths):
            continue
        volume = container.pod.volume(mount.name)
        if volume is None or volume.kind != "emptyDir":
            return True  # a PVC, hostPath, CSI, image, secret (a token file)...: may be pre-populated
        others = [c for c in container.pod.containers if c is not container]
        if any(m.name == mount.name for c in others for m in c.volume_mounts):
            return True  # an init container or sidecar may fill the emptyDir first
    return False


def _gated(work) -> bool:
    """The catalog says the repository named (its own owner, not a mirror or quantized copy) is gated."""
    match = work.match
    if match is None or match.quantization is not None or match.model.gated is not True or not work.model_name:
        return False
    owner = work.model_name.split("/", 1)[0].lower()
    return owner in {name.split("/", 1)[0].lower() for name in match.model.names}


def check(ctx: Context):
    world = ctx.world
    for work in workloads(world):
        invocation = work.invocation
        container = invocation.container
        if container is None or not runs_alone(invocation) or invocation.config_file is not None:
            continue  # a --config file may set hf-token or download-dir (not read); a script that runs more than vLLM may export a token or fetch the model first
        if not upstream_image(invocation.image) or not downloaded_by_name(work) or work.model_token is None:
            continue
        owner = container.pod.owner
        if owner.kind in _FETCHED_BY_OTHERS or _kserve_storage(container):
            continue
        if container.is_compose and ("env_file" in container.node or "volumes" in container.node):
            continue  # an env file may hold the token; a bind mount may be the host's cache
        if not container.is_compose and any(world.find(ref.kind, ref.name or "", container.pod.namespace) is None
                                            for ref in env_from_refs(container.node)):
            continue  # an object not in the run: it may hold the token or move the cache
        variables = {var.name: var for var in container.resolved_env(world)}
        known = {name: (var.value if var.origin in (LITERAL, CONFIG_MAP) else None) for name, var in variables.items()}
        use_modelscope = variables.get("VLLM_USE_MODELSCOPE")
        if use_modelscope is not None and (known.get("VLLM_USE_MODELSCOPE") or "true").strip().lower() == "true":
            continue  # vLLM downloads from ModelScope instead
        hub_cache, _why = download_dir(work)
        hf_home = _hf_home(known, container)
        if hub_cache is None or hf_home is None:
            continue
        if ("HF_HUB_CACHE" not in known and "HUGGINGFACE_HUB_CACHE" not in known and "--download-dir" not in work.options
                and "HF_HOME" not in known and "XDG_CACHE_HOME" not in known):
            hub_cache = hf_home + "/hub"  # download_dir() assumes root's home; HOME may say otherwise
        paths = [hub_cache, hf_home]
        if _may_hold(container, paths):
            continue
        offline = [variables[n] for n in OFFLINE_VARS
                   if n in variables and (known.get(n) or "").strip().upper() in _TRUE]
        if offline:
            var = offline[0]
            where = var.source if var.origin == LITERAL and var.source is not None else var.node
            yield ctx.finding(
                where, f"{var.name}={known.get(var.name)} forbids downloads, but {work.model_name} is a Hugging Face "
                f"id and nothing in the pod can already hold it: the hub cache {hub_cache} is on the container's "
                "writable layer or an emptyDir no other container fills, and vLLM's images hold no models, so vLLM "
                "cannot find the model's config and exits at start. Mount a volume that holds the model at the "
                f"cache, serve a local path, or remove {var.name}.",
                about=invocation, value=f"offline:{work.model_name}")
            continue
        if not _gated(work) or "HF_ENDPOINT" in variables or invocation.option("--hf-token"):
            continue
        if "HF_TOKEN_PATH" in variables:
            continue  # a token file named by path: it may exist
        tokens = [variables[n] for n in TOKEN_VARS if n in variables]
        if any(var.origin not in (LITERAL, CONFIG_MAP) or (var.value or "").strip() for var in tokens):
            continue  # a token from a Secret, fieldRef, the host (Compose `- HF_TOKEN`), or a literal
        severity = min(ctx.severity, Severity.WARNING)
        if tokens:
            var = tokens[0]
            where = var.source if var.origin == LITERAL and var.source is not None else var.node
            yield ctx.finding(
                where, f"{var.name} is empty, and {work.model_name} is a gated Hugging Face repository: an empty "
                "token counts as none, so the download fails with 401 \"Cannot access gated repo\" and vLLM exits "
                f"at start. Set {var.name} from a Secret (valueFrom.secretKeyRef) holding the token of an account "
                "that was granted access.",
                about=invocation, value=f"empty-token:{work.model_name}", severity=severity)
            continue
        yield ctx.finding(
            work.model_token,
            f"{work.model_name} is a gated Hugging Face repository and the container has no token: set HF_TOKEN "
            "from a Secret (valueFrom.secretKeyRef) holding the token of an account that was granted access, or "
            "serve the model from a pre-loaded volume. It has no HF_TOKEN or HUGGING_FACE_HUB_TOKEN, no token file, "
            f"no envFrom that could bring one, and no volume at {hf_home} that could already hold the model, so the "
            "download fails with 401 \"Cannot access gated repo\" and vLLM exits at start.",
            about=invocation, value=f"no-token:{work.model_name}", severity=severity)
