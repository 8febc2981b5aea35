"""What a vLLM container is certain to hold in CPU RAM (its memory cgroup) at start-up, beyond its own process.

The amounts and the releases they apply to are sourced data (`data/host-memory.yaml`, validated by
`schemas/host-memory.schema.json`); this module only applies them to one workload. Every part is a lower
bound and is left out when the manifest does not say enough to size it (an unknown model, a `$VAR` value,
an unknown release for a release-bound part, a multi-node rank count that is not in the pod):

- GPU builds: the V0 engine's pinned swap space (`--swap-space` GiB per GPU, the release catalog's default
  when not given) and the weights offloaded with `--cpu-offload-gb` (per GPU, at most the rank's weights);
- CPU builds: the weights themselves, and the KV cache (`VLLM_CPU_KVCACHE_SPACE` GiB, its default where the
  release has a fixed one, `--kv-cache-memory-bytes` where the CPU worker reads it).

The weight loader's staging is documented in the data (`loaders`): safetensors files are mapped, not copied, and
the size of a `.bin` shard is not in the model catalog, so neither counts; the Run:ai Model Streamer
(`--load-format runai_streamer`) streams through a CPU buffer of the checkpoint's size or its memory limit,
whichever is less, counted per GPU worker when the model and the release are known.
"""
from __future__ import annotations

from vllmlint.records import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from vllmlint.capacity.specs import GiB
from vllmlint.capacity.workload import SERVING_RUNTIME_KINDS, checkpoint_bytes
from vllmlint.vllm.images import ImageRef, parse_image
from vllmlint.vllm.release import version_key

if TYPE_CHECKING:
    from vllmlint.capacity.workload import Workload
    from vllmlint.finding import Positioned


@dataclass(frozen=True)
class HostPart:
    """One amount of CPU RAM: what it is (`id` of the data's part), bytes, words for a message, and where
    the manifest sets it."""

    id: str
    bytes: int
    words: str
    where: Positioned | None = None  # the token or YAML node that sets it (None for a default)


@lru_cache(maxsize=1)
def host_memory_data() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "host-memory.yaml")
    return data if isinstance(data, dict) else {}


def _part(part_id: str) -> dict[str, Any]:
    return next((p for p in host_memory_data().get("parts", []) if p.get("id") == part_id), {})


def _in(bounds: dict[str, Any] | None, version: str) -> bool:
    if not bounds:
        return True
    key = version_key(version)
    if bounds.get("from") and key < version_key(str(bounds["from"])):
        return False
    return not (bounds.get("to") and key > version_key(str(bounds["to"])))


def is_cpu_image(image: ImageRef | None) -> bool:
    """Whether an image is vLLM's CPU build (`vllm/vllm-openai-cpu` and the repositories it is pushed to)."""
    if image is None:
        return False
    names = host_memory_data().get("cpu_images", {}).get("repositories", [])
    return image.repository in names or image.name in names


def workload_image(work: Workload) -> ImageRef | None:
    if work.invocation.image is not None:
        return work.invocation.image
    container = work.pod_container
    node = container.image if container is not None else None
    text = node.value if node is not None and isinstance(node.value, str) else None
    return parse_image(text) if text else None


def effective_release(work: Workload) -> str:
    """The release the workload runs, or the one assumed for it (the newest, as the flag rules assume)."""
    return work.release or work.invocation.catalog.version


def _known_release(work: Workload) -> str | None:
    return None if work.release is None or work.invocation.assumed else work.release


def _float(text: str | None) -> float | None:
    try:
        value = float(str(text).strip())
    except (TypeError, ValueError):
        return None
    return value if value == value and 0 <= value < 2**40 else None


def uses_v0_engine(work: Workload) -> bool:
    """True only when the release is known and runs the V0 engine: before V1 became the default, or with
    VLLM_USE_V1=0 up to the last release that still has V0."""
    release = _known_release(work)
    if release is None:
        return False
    engine = host_memory_data().get("engine", {})
    key = version_key(release)
    if key < version_key(str(engine.get("v1_default_from", "0.8.0"))):
        return True
    switch = engine.get("v0_switch", {})
    env = work.pod_container.env if work.pod_container is not None else {}
    return (env.get(switch.get("name", "VLLM_USE_V1")) or "").strip() == switch.get("value", "0") \
        and key <= version_key(str(engine.get("v0_last", "0.0.0")))


# The device resources whose workers are vLLM's CUDA/ROCm GPU workers (vllm/worker/worker.py in V0, the
# V1 GPU worker), the ones the swap-space and cpu-offload facts were read from.
GPU_WORKER_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")


def _device_resource(name: str) -> str:
    """A MIG slice (`nvidia.com/mig-1g.10gb`) runs the same CUDA worker as `nvidia.com/gpu`."""
    return "nvidia.com/gpu" if name.startswith("nvidia.com/mig-") else name


def ranks_in_container(work: Workload) -> int | None:
    """How many GPU workers run in this container: the model's TP x PP ranks, at most the GPUs it requests;
    None when it requests no NVIDIA or AMD GPU (TPU, Neuron and Gaudi workers were not read)."""
    request = work.gpu_resource
    if request is None or request[1] < 1 or _device_resource(request[0]) not in GPU_WORKER_RESOURCES:
        return None
    return min(work.tensor_parallel_size * work.pipeline_parallel_size, request[1])


def _gib(size: float) -> str:
    return f"{size / GiB:.1f} GiB"


def _swap(work: Workload, ranks: int) -> HostPart | None:
    if not uses_v0_engine(work):
        return None
    option = work.options.get("--swap-space")
    token = None
    if option is not None:
        if not option.value_known:
            return None
        gib = _float(option.value)
        token = option.value_token or option.token
        how = f"--swap-space {option.value}"
    else:
        spec = work.invocation.catalog.option("--swap-space")
        gib = _float(spec.default) if spec is not None else None
        how = f"--swap-space {gib:g}, vLLM {work.release}'s default" if gib is not None else ""
    if not gib:
        return None
    # vLLM's own check (CacheConfig.verify_with_parallel_config) counts swap x tensor_parallel_size per node.
    workers = min(work.tensor_parallel_size, ranks)
    size = int(gib * GiB) * workers
    per = f" x {workers} GPUs" if workers > 1 else ""
    return HostPart("swap-space", size, f"{_gib(size)} of pinned swap space ({how}: GiB per GPU{per}, V0 engine)", token)


def _offload(work: Workload, ranks: int) -> HostPart | None:
    option = work.options.get("--cpu-offload-gb")
    if option is None or not option.value_known or work.model is None:
        return None
    gib = _float(option.value)
    if not gib:
        return None
    try:
        weights = checkpoint_bytes(work.model, work.quantization)
    except ValueError:
        return None
    per_rank = min(int(gib * GiB), weights // max(work.world_size, 1))
    size = per_rank * ranks
    per = f" x {ranks} GPUs" if ranks > 1 else ""
    return HostPart("cpu-offload", size, f"{_gib(size)} of weights offloaded to pinned CPU memory "
                    f"(--cpu-offload-gb {option.value}{per}, at most each rank's share of the weights)",
                    option.value_token or option.token)


def kv_offload_backend(work: Workload) -> str | None:
    """The KV offloading backend `--kv-offloading-size` turns on in this release ("native", "lmcache"), or None
    (no size given, a value known only at run time, a release before 0.11.1, before 0.14.0 without
    --kv-offloading-backend)."""
    part = _part("kv-offload")
    option = work.options.get(part.get("flag", "--kv-offloading-size"))
    if option is None or not option.value_known or not _float(option.value):
        return None
    release = effective_release(work)
    if not _in(part.get("releases"), release):
        return None
    chosen = work.options.get(part.get("backend_flag", "--kv-offloading-backend"))
    if chosen is not None:
        return chosen.value.strip().lower() if chosen.value_known and chosen.value else None
    return next((d["value"] for d in part.get("default_backend", []) if _in(d.get("releases"), release)), None)


def kv_offload_bytes(work: Workload, ranks: int | None = None) -> int | None:
    """This pod's share of the `--kv-offloading-size` buffer (GiB over all TP x PP ranks), or None."""
    backend = kv_offload_backend(work)
    if backend not in ("native", "lmcache"):
        return None
    ranks = ranks_in_container(work) if ranks is None else ranks
    if not ranks:
        return None
    option = work.options[_part("kv-offload").get("flag", "--kv-offloading-size")]
    total = int((_float(option.value) or 0) * GiB)
    return total * ranks // max(work.tensor_parallel_size * work.pipeline_parallel_size, 1)


def kv_offload_in_shm(work: Workload) -> bool:
    """Whether the offload buffer is a /dev/shm mapping (the native backend on CUDA GPUs from 0.27.0)."""
    shm = _part("kv-offload").get("shm") or {}
    request = work.gpu_resource
    return (bool(shm) and kv_offload_backend(work) == shm.get("backend") and request is not None
            and _device_resource(request[0]) in shm.get("resources", []) and _in(shm.get("releases"), effective_release(work)))


def _kv_offload(work: Workload, ranks: int) -> HostPart | None:
    size = kv_offload_bytes(work, ranks)
    if not size:
        return None
    option = work.options["--kv-offloading-size"]
    backend = kv_offload_backend(work)
    share = "" if ranks >= work.tensor_parallel_size * work.pipeline_parallel_size else \
        f", this pod's {ranks} of {work.tensor_parallel_size * work.pipeline_parallel_size} ranks"
    where = "a /dev/shm mapping" if kv_offload_in_shm(work) else "pinned memory"
    return HostPart("kv-offload", size, f"{_gib(size)} of CPU KV-cache offload buffer (--kv-offloading-size "
                    f"{option.value}: GiB over all TP x PP ranks{share}; {backend} backend, {where})",
                    option.value_token or option.token)


def _lmcache_local_cpu(work: Workload, ranks: int) -> HostPart | None:
    if kv_offload_backend(work) == "lmcache":
        return None  # the flag sets LMCache's size itself (counted by _kv_offload)
    container = work.pod_container
    env = container.env if container is not None else {}
    name = _part("lmcache-local-cpu").get("env", "LMCACHE_MAX_LOCAL_CPU_SIZE")
    transfer = work.options.get("--kv-transfer-config")
    if (name not in env or transfer is None or not transfer.value_known
            or "lmcache" not in (transfer.value or "").lower()
            or (env.get("LMCACHE_LOCAL_CPU") or "true").strip().lower() in ("false", "0", "no")):
        return None
    gib = _float(env[name])
    if not gib:
        return None
    size = int(gib * GiB) * ranks
    per = f" x {ranks} workers" if ranks > 1 else ""
    node = container.env_node(name) if container is not None else None
    return HostPart("lmcache-local-cpu", size, f"{_gib(size)} of LMCache's pinned CPU cache ({name}={env[name]} "
                    f"GiB per worker{per})", node)


def _streamer_loader() -> dict[str, Any]:
    return next((row for row in host_memory_data().get("loaders", []) if row.get("staged") == "weights"), {})


def _streamer(work: Workload, ranks: int) -> HostPart | None:
    """The Run:ai Model Streamer's CPU buffer (`--load-format runai_streamer`): per GPU worker, the checkpoint's
    bytes or the memory limit, whichever is less (data/host-memory.yaml, loaders)."""
    loader = _streamer_loader()
    option = work.options.get("--load-format")
    if not loader or option is None or not option.value_known \
            or (option.value or "").strip() not in loader.get("load_formats", ()):
        return None
    release = _known_release(work)
    if release is None:
        return None
    default = next((d["value"] for d in loader.get("default_limit_bytes", []) if _in(d.get("releases"), release)), None)
    if default is None or work.pipeline_parallel_size != 1 or work.model is None:
        return None  # a release not read, or a pipeline stage that may stream fewer files
    if not work.known("--quantization", "--dtype", "model"):
        return None
    try:
        weights = checkpoint_bytes(work.model, work.quantization)
    except ValueError:
        return None
    from vllmlint.vllm.kv_transfer import json_config

    extra_spec = loader.get("extra_config") or {}
    extra_flag = extra_spec.get("option", "--model-loader-extra-config")
    extra = json_config(work.invocation, extra_flag)
    if extra is None and work.invocation.option(extra_flag):
        return None  # given, but not known here
    values = extra.value if extra is not None else {}
    if values.get(extra_spec.get("distributed_key", "distributed")) is True \
            and _in(loader.get("distributed_on_gpu"), release):
        return None  # streamed into GPU memory
    name = loader.get("env", "RUNAI_STREAMER_MEMORY_LIMIT")
    key = extra_spec.get("limit_key", "memory_limit")
    env = work.pod_container.env if work.pod_container is not None else {}
    where: Positioned | None
    if key in values:  # vLLM copies it into the variable
        text, how = str(values[key]), f"{key} {values[key]} in {extra_flag}"
        last = extra.options[-1] if extra is not None else None
        where = (last.value_token or last.token) if last is not None else None
    elif name in env:
        text, how = env[name] or "", f"{name}={env[name]}"
        where = work.pod_container.env_node(name) if work.pod_container is not None else None
        if env[name] is None:
            return None  # from a ConfigMap or Secret
    else:
        text, how = str(default), f"{name} not set: the streamer's default {default / 1e9:g} GB with vLLM {release}"
        where = option.value_token or option.token
    try:
        limit = int(text.strip())
    except ValueError:
        return None
    if limit == -1:
        per_rank = weights
    elif limit > 0:
        per_rank = min(limit, weights)
    else:
        return None  # 0: the largest tensor, not in the catalog
    size = per_rank * ranks
    per = f" x {ranks} GPU workers" if ranks > 1 else ""
    return HostPart("runai-streamer", size, f"{_gib(size)} of Run:ai Model Streamer CPU buffer ({how}; "
                    f"{_gib(per_rank)} per GPU worker{per}: the limit or the checkpoint's {_gib(weights)}, whichever "
                    "is less)", where)


def _cpu_weights(work: Workload) -> HostPart | None:
    model = work.model
    if model is None or model.torch_dtype == "float32":
        return None  # vLLM may load a float32 checkpoint at half its stored size: not a lower bound
    if not work.known("--quantization", "--dtype", "model"):
        return None
    try:
        weights = checkpoint_bytes(model, work.quantization)
    except ValueError:
        return None
    return HostPart("cpu-weights", weights, f"{_gib(weights)} of {model.id} weights (a CPU build keeps them in RAM)",
                    work.model_token)


def _cpu_kv(work: Workload) -> HostPart | None:
    release = effective_release(work)
    env_part = _part("cpu-kv-cache-env")
    name = env_part.get("env", "VLLM_CPU_KVCACHE_SPACE")
    container = work.pod_container
    env = container.env if container is not None else {}
    if name in env:
        value = env[name]
        number = _float(value) if value is not None else None
        if number is None or number <= 0 or number != int(number):
            return None  # from a ConfigMap or Secret, `0`, or no integer: not ours to size
        node = container.env_node(name) if container is not None else None
        size = int(number) * GiB
        return HostPart("cpu-kv-cache-env", size, f"{_gib(size)} of CPU KV cache ({name}={value})", node)
    flag_part = _part("cpu-kv-cache-flag")
    option = work.options.get(flag_part.get("flag", "--kv-cache-memory-bytes"))
    if option is not None:
        if not _in(flag_part.get("releases"), release) or "--kv-cache-memory-bytes" in work.unknown:
            return None
        size = work.kv_cache_memory_bytes or 0
        if size <= 0:
            return None
        return HostPart("cpu-kv-cache-flag", size, f"{_gib(size)} of CPU KV cache (--kv-cache-memory-bytes "
                        f"{option.value})", option.value_token or option.token)
    default = env_part.get("default_gib") or {}
    known = _known_release(work)
    if default and known is not None and _in(default.get("releases"), known):
        size = int(float(default["value"]) * GiB)
        return HostPart("cpu-kv-cache-env", size, f"{_gib(size)} of CPU KV cache (vLLM {known}'s default when "
                        f"{name} is not set)")
    return None


def host_memory(work: Workload) -> list[HostPart]:
    """The parts of CPU RAM this workload's container is certain to hold (possibly none)."""
    if work.pod_container is None or work.pod_container.pod.owner.kind in SERVING_RUNTIME_KINDS:
        return []  # a ServingRuntime's resources are defaults the InferenceService may replace
    parts: list[HostPart | None]
    if is_cpu_image(workload_image(work)):
        parts = [_cpu_weights(work), _cpu_kv(work)]
    else:
        ranks = ranks_in_container(work)
        if ranks is None:
            return []
        parts = [_swap(work, ranks), _offload(work, ranks), _kv_offload(work, ranks), _lmcache_local_cpu(work, ranks),
                 _streamer(work, ranks)]
    return [p for p in parts if p is not None and p.bytes > 0]


__all__ = ["HostPart", "host_memory", "host_memory_data", "is_cpu_image", "uses_v0_engine", "ranks_in_container",
           "workload_image", "kv_offload_backend", "kv_offload_bytes", "kv_offload_in_shm"]
