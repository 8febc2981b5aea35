"""From a vLLM invocation in a manifest to an estimate request: which model, which settings, which GPUs.

`workloads(world)` reads every vLLM invocation once per run (the capacity rules VL601-VL609 and the
`vllmlint capacity` command share the result):

- the model: the positional of `vllm serve` or `--model`, resolved by `resolve_model` (never guessed);
- the settings vLLM sizes its memory with (`--tensor-parallel-size`, `--gpu-memory-utilization`,
  `--max-model-len`, ...), each with the option it came from; a value vLLM would only learn at run
  time (`$VAR`) is recorded as unknown, and whatever depends on it stays silent;
- where the pod lands: `nodeSelector` and required node affinity on hardware labels, and the Karpenter
  NodePools of the same run whose template labels, requirements and taints admit the pod.
"""
from __future__ import annotations

import math
import re
from vllmlint.records import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from vllmlint.capacity.names import Match, _is_local_path, resolve_model
from vllmlint.capacity.nodes import Candidate, gpus_for_node_constraints
from vllmlint.capacity.specs import GPU, MIG_RESOURCE_PREFIX, GiB, ModelSpec
from vllmlint.k8s.placement import NodePool, Toleration, node_pool, tolerated
from vllmlint.k8s.quantity import LIMIT, quantity_int
from vllmlint.k8s.selectors import DOES_NOT_EXIST, NOT_IN, Requirement
from vllmlint.source.yamlmodel import Node
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.capacity.estimate import Estimate
    from vllmlint.k8s.objects import Container, PodTemplate, World
    from vllmlint.vllm.invocation import Invocation, Option, Token

ACCELERATOR_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "google.com/tpu", "aws.amazon.com/neuron",
                         "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice", "habana.ai/gaudi")
RAY_KINDS = ("RayCluster", "RayService", "RayJob", "RayClusterFleet")  # the last: AIBrix
SERVING_RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")

# Labels Karpenter (or the GPU feature discovery that runs on its nodes) puts on every node it launches,
# whatever the NodePool's template says: a pod selecting on them can still land on the pool.
_WELL_KNOWN_LABELS = lazy_compile(
    r"^(kubernetes\.io/(arch|os|hostname)|node\.kubernetes\.io/.*|beta\.kubernetes\.io/(arch|os|instance-type)"
    r"|topology\.kubernetes\.io/(zone|region)|karpenter\.sh/(capacity-type|nodepool)|karpenter\.k8s\.aws/.*"
    r"|nvidia\.com/gpu\..*)$")


def human_int(text: str) -> int | None:
    """vLLM's human-readable integers: `32768`, `32k` (x1000), `32K` (x1024), `1.5M`; None when not a number
    or beyond any sane value (a 400-digit `--max-model-len` is no length)."""
    match = re.fullmatch(r"\s*(\d{1,30}(?:\.\d{1,30})?)\s*([kKmMgGtT]?)\s*", text or "")
    if not match:
        return None
    number, suffix = match.group(1), match.group(2)
    scale = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
             "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[suffix]
    try:
        value = int(Decimal(number) * scale)
    except InvalidOperation:
        return None
    return value if value < LIMIT else None


@dataclass(frozen=True)
class Landing:
    """One place a pod can be scheduled: a GPU (and instance type) and the constraints that say so."""

    candidate: Candidate
    origin: str  # where the GPU came from: "nodeSelector", "node affinity", "NodePool vllm-gpu"
    # The requirements (pod node selector / affinity, NodePool labels and requirements) the candidates
    # were read from: the nodes that decide the placement.
    deciding: tuple[Requirement, ...] = field(default=(), compare=False)

    @property
    def label(self) -> str:
        c = self.candidate
        return f"{c.instance_type} ({c.gpu_count} x {c.gpu.id})" if c.instance_type else c.gpu.id

    def naming(self, value: str) -> Requirement | None:
        """The deciding requirement that names `value` (an instance type) among its values, if any."""
        return next((r for r in self.deciding if value in r.values), None)


@dataclass
class Workload:
    """One vLLM invocation's capacity-relevant settings. `None` for a number means vLLM's default."""

    invocation: Invocation
    model_token: Token | None = None
    model_name: str | None = None
    match: Match | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    data_parallel_size_local: int | None = None
    nnodes: int | None = None
    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    dtype: str = "auto"
    quantization: str | None = None  # --quantization, else what the model name implies
    quantization_given: bool = False
    kv_cache_dtype: str = "auto"
    kv_cache_memory_bytes: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    enforce_eager: bool = False
    # The vision encoder's profiling pass: images per prompt (--limit-mm-per-prompt; 0 with --language-model-only;
    # None: vLLM's default) and --skip-mm-profiling.
    mm_image_limit: int | None = None
    mm_video_limit: int | None = None  # videos per prompt, the same flag (Qwen2.5-VL profiles a video)
    skip_mm_profiling: bool = False
    mm_encoder_data_parallel: bool = False  # --mm-encoder-tp-mode data
    # --enable-prefix-caching / --no-enable-prefix-caching (None: the release's default); a gated-DeltaNet hybrid's
    # blocks per request follow it (estimate.hybrid_kv_layout)
    enable_prefix_caching: bool | None = None
    unknown: set[str] = field(default_factory=set)  # flags whose value is not known before run time
    options: dict[str, Option] = field(default_factory=dict)  # flag -> the Option it came from (last occurrence)
    landings: list[Landing] | None = None  # None: no GPU known
    gpu_resource: tuple[str, int, Node] | None = None  # (resource name, count, YAML node) the pod requests, if any
    # A local path's config.json among the linted files (`_match_config_json`), also when the catalog matched
    # the path by name (then `match` keeps the catalog entry, and this file gives the checkpoint's own facts).
    config_match: Match | None = None

    @property
    def model(self) -> ModelSpec | None:
        return self.match.model if self.match else None

    @property
    def checkpoint_dtype(self) -> str | None:
        """The torch_dtype of the checkpoint served, when known (`specs.checkpoint_torch_dtype`): a local
        path's config.json of the run (when it names torch_dtype), else the catalog entry the model is named
        by (its id or an alias); None otherwise (a local path or a variant matched by name)."""
        from vllmlint.capacity.specs import checkpoint_torch_dtype

        if self.config_match is not None:
            return checkpoint_torch_dtype(self.config_match.model, self.model_name or "", from_config_json=True)
        if self.match is None or self.model_name is None:
            return None
        return checkpoint_torch_dtype(self.match.model, self.model_name,
                                      from_config_json=self.match.how.startswith("config.json at"))

    @property
    def release(self) -> str | None:
        return self.invocation.release

    @property
    def container(self) -> Container | None:
        return self.invocation.container

    @property
    def pod_container(self) -> Container | None:
        """The container vLLM runs in: the manifest's, or the one a Helm chart renders around a values file's
        entry (vllm.helm_pod: read by the rules that know a chart's pod, never added to the world)."""
        from vllmlint.vllm.helm_pod import pod_container

        return pod_container(self.invocation)

    @property
    def world_size(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size

    def known(self, *flags: str) -> bool:
        return not (set(flags) & self.unknown)

    def estimate_inputs_known(self) -> bool:
        return self.known(*ESTIMATE_FLAGS)

    def estimate_kwargs(self) -> dict:
        return dict(
            tensor_parallel_size=self.tensor_parallel_size,
            pipeline_parallel_size=self.pipeline_parallel_size,
            gpu_memory_utilization=self.gpu_memory_utilization,
            vllm_version=self.release,
            max_model_len=self.max_model_len,
            dtype=self.dtype,
            quantization=self.quantization,
            kv_cache_dtype=self.kv_cache_dtype,
            kv_cache_memory_bytes=self.kv_cache_memory_bytes,
            max_num_batched_tokens=self.max_num_batched_tokens,
            max_num_seqs=self.max_num_seqs,
            enforce_eager=self.enforce_eager,
            v1_engine=self.v1_engine,
            mm_image_limit=self.mm_image_limit,
            mm_video_limit=self.mm_video_limit,
            skip_mm_profiling=self.skip_mm_profiling,
            mm_encoder_data_parallel=self.mm_encoder_data_parallel,
            enable_prefix_caching=self.enable_prefix_caching,
        )

    @property
    def v1_engine(self) -> bool | None:
        """False when the container sets VLLM_USE_V1=0 on a release that still has V0 (0.8.0 - 0.10.x), else None
        (the release's own engine)."""
        from vllmlint.vllm.release import release_numbers

        container = self.container
        env = container.env if container is not None else {}
        if (env.get("VLLM_USE_V1") or "").strip() != "0" or self.release is None:
            return None
        return False if (0, 8, 0) <= release_numbers(self.release) < (0, 11, 0) else None

    def estimate(self, gpu: GPU) -> Estimate | None:
        """The estimate on one GPU, or None when the settings are not ones the estimator can size: an
        unknown quantization, or more pipeline stages than layers (vLLM refuses that; VL604 says so)."""
        from vllmlint.capacity.estimate import estimate

        cache: dict[str, Estimate | None] = self.__dict__.setdefault("_estimates", {})
        if self.model is None:
            return None
        if self.pipeline_parallel_size > self.model.num_hidden_layers:
            return None
        if gpu.id not in cache:
            try:
                cache[gpu.id] = estimate(self.model, gpu, **self.estimate_kwargs())
            except ValueError:  # a quantization whose size is unknown (gguf, compressed-tensors...)
                cache[gpu.id] = None
        return cache[gpu.id]

    @property
    def model_anchor(self) -> Token:
        """The token findings about the model point at: the model's, else the invocation's."""
        return self.model_token if self.model_token is not None else self.invocation.anchor

    def option_token(self, *flags: str) -> Token | None:
        """The token of the first of `flags` that was given (the flag itself), else None."""
        for flag in flags:
            option = self.options.get(flag)
            if option is not None:
                return option.token
        return None

    def value_token(self, flag: str) -> Token | None:
        option = self.options.get(flag)
        return option.value_token if option is not None and option.value_token is not None else None

    def hosting_landings(self) -> list[Landing]:
        """The landings the pod can actually be scheduled on (enough GPUs per node, when both are known)."""
        if not self.landings:
            return []
        wanted = self.gpu_resource[1] if self.gpu_resource and self.gpu_resource[0] == "nvidia.com/gpu" else None
        if wanted is None:
            return list(self.landings)
        fitting = [p for p in self.landings if p.candidate.gpu_count is None or p.candidate.gpu_count >= wanted]
        return fitting or list(self.landings)


# The flags each estimate depends on: when one is `$VAR`, the estimate is not made.
# "--cpu-offload-gb" is here because weights offloaded to CPU memory are not modelled: with it, no estimate.
ESTIMATE_FLAGS = ("--tensor-parallel-size", "--pipeline-parallel-size", "--gpu-memory-utilization", "--max-model-len",
                  "--dtype", "--quantization", "--kv-cache-dtype", "--kv-cache-memory-bytes", "--max-num-seqs",
                  "--max-num-batched-tokens", "--cpu-offload-gb", "--limit-mm-per-prompt", "--skip-mm-profiling",
                  "--language-model-only", "--mm-encoder-tp-mode", "--enable-prefix-caching", "model")
_ALIASES = {"-tp": "--tensor-parallel-size", "-pp": "--pipeline-parallel-size", "-dp": "--data-parallel-size",
            "-dpl": "--data-parallel-size-local", "-q": "--quantization"}
_INT_FLAGS = {"--tensor-parallel-size": "tensor_parallel_size", "--pipeline-parallel-size": "pipeline_parallel_size",
              "--data-parallel-size": "data_parallel_size", "--data-parallel-size-local": "data_parallel_size_local",
              "--nnodes": "nnodes", "--max-model-len": "max_model_len",
              "--kv-cache-memory-bytes": "kv_cache_memory_bytes", "--max-num-seqs": "max_num_seqs",
              "--max-num-batched-tokens": "max_num_batched_tokens"}
_OTHER_FLAGS = ("--gpu-memory-utilization", "--quantization")
_STR_FLAGS = {"--dtype": "dtype", "--kv-cache-dtype": "kv_cache_dtype"}


def _image_limit(value: object, modality: str = "image") -> int | None:
    """The image (or `modality`) count of a --limit-mm-per-prompt value: JSON (`{"image": 2, "video": 0}`,
    `{"image": {"count": 2, ...}}`) or the older `image=2,video=0` form; 999 (vLLM's default) when it names no such
    item; None when unreadable."""
    import json

    text = str(value or "").strip()
    entries: dict = {}
    try:
        parsed = json.loads(text)
        if not isinstance(parsed, dict):
            return None
        entries = parsed
    except ValueError:
        for part in text.split(","):
            key, sep, count = part.partition("=")
            if not sep:
                return None
            entries[key.strip()] = count.strip()
    image = entries.get(modality, 999)
    if isinstance(image, dict):
        image = image.get("count", 999)
    try:
        number = int(image)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def read_workload(invocation: Invocation) -> Workload:
    """The settings of one invocation (no placement: see `workloads`)."""
    work = Workload(invocation)
    language_model_only = False
    for option in invocation.options:
        # `canonical`: how the release's own parser reads it (`--max_model_len`, a prefix like `--max-model`).
        flag = getattr(option, "canonical", None) or option.name.replace("_", "-")
        flag = _ALIASES.get(flag, flag)
        work.options[flag] = option
    for flag, option in work.options.items():
        if flag == "--cpu-offload-gb" and str(option.value).strip() not in ("0", "0.0"):
            work.unknown.add(flag)
            continue
        if flag == "--enforce-eager":
            work.enforce_eager = option.value is None or str(option.value).lower() not in ("false", "0")
            continue
        if flag in ("--skip-mm-profiling", "--language-model-only"):
            if option.value is not None and not option.value_known:
                work.unknown.add(flag)
            elif option.value is None or str(option.value).lower() not in ("false", "0"):
                if flag == "--skip-mm-profiling":
                    work.skip_mm_profiling = True
                else:
                    language_model_only = True
            continue
        if flag in ("--enable-prefix-caching", "--no-enable-prefix-caching"):
            if option.value is not None and not option.value_known:
                work.unknown.add("--enable-prefix-caching")
            else:
                on = option.value is None or str(option.value).strip().lower() not in ("false", "0")
                negated = option.name.replace("_", "-").startswith("--no-")  # the catalog's canonical is the positive
                work.enable_prefix_caching = not on if negated else on
            continue
        if flag == "--mm-encoder-tp-mode":
            if not option.value_known:
                work.unknown.add(flag)
            else:
                work.mm_encoder_data_parallel = str(option.value).strip().lower() == "data"
            continue
        if flag == "--limit-mm-per-prompt":
            limit = _image_limit(option.value) if option.value_known else None
            videos = _image_limit(option.value, "video") if option.value_known else None
            if limit is None or videos is None:
                work.unknown.add(flag)
            else:
                work.mm_image_limit, work.mm_video_limit = limit, videos
            continue
        if flag not in _INT_FLAGS and flag not in _STR_FLAGS and flag not in _OTHER_FLAGS:
            continue
        if not option.value_known:
            work.unknown.add(flag)
            continue
        value = str(option.value).strip()
        if flag in _INT_FLAGS:
            number = human_int(value)
            if number is None or number < 1:
                work.unknown.add(flag)  # `auto` or -1: vLLM decides at run time
            else:
                setattr(work, _INT_FLAGS[flag], number)
        elif flag in _STR_FLAGS:
            setattr(work, _STR_FLAGS[flag], value.lower())
        elif flag == "--gpu-memory-utilization":
            try:
                fraction = float(value)
            except ValueError:
                fraction = math.nan
            if math.isfinite(fraction):
                work.gpu_memory_utilization = fraction
            else:
                work.unknown.add(flag)  # `nan`, `inf`: no budget anyone can size
        elif flag == "--quantization":
            work.quantization = None if value.lower() in ("none", "") else value.lower()
            work.quantization_given = True
    if language_model_only:  # every modality's limit is 0 (MultiModalConfig.get_limit_per_prompt)
        work.mm_image_limit = work.mm_video_limit = 0

    token = invocation.model
    if token is None:
        # `vllm serve` without a model serves vLLM's default model: not ours to guess.
        work.unknown.add("model")
        return work
    work.model_token = token
    if token.dynamic:
        work.unknown.add("model")
        return work
    work.model_name = token.text.split("=", 1)[1] if token.text.startswith("--model=") else token.text
    work.match = resolve_model(work.model_name)
    if work.match is not None and not work.quantization_given:
        work.quantization = work.match.quantization
    return work


def workloads(world: World) -> list[Workload]:
    """Every vLLM invocation of the run with its settings and placements (computed once per world)."""
    return world.fact(_workloads)


def _workloads(world: World) -> list[Workload]:
    result = []
    for invocation in world.invocations:
        work = read_workload(invocation)
        if work.model_name and _is_local_path(work.model_name):
            work.config_match = _match_config_json(work.model_name, world)
            if work.match is None:
                work.match = work.config_match
        elif work.model_name:
            _match_opt_in(work)
        if work.model_name and work.model_name.lower().endswith(".gguf") and not work.quantization_given:
            work.quantization = "gguf"  # a GGUF file's tensor types are not in the run: its size is unknown
        container = invocation.container
        if container is not None:
            work.gpu_resource = requested_accelerator(container)
            work.landings = landings(container.pod, world)
            if work.gpu_resource is not None and work.gpu_resource[0].startswith(MIG_RESOURCE_PREFIX):
                work.landings = mig_landings(work.landings, work.gpu_resource[0])
        elif invocation.owner is not None:  # an operator's resource: the pod its controller builds requests them
            from vllmlint.vllm.invocation import operator_gpu, operator_pod

            work.gpu_resource = operator_gpu(invocation.owner)
            pod = operator_pod(invocation.owner)
            if pod is not None:  # where that pod lands, from the fields its controller turns into affinity
                work.landings = landings(pod, world)  # type: ignore[arg-type]
        result.append(work)
    return result


_GENERIC_DIRS = {"", "model", "models", "weights", "main", "snapshot", "data", "mnt", "checkpoint", "hf", "huggingface"}


def _match_config_json(path: str, world: World) -> Match | None:
    """A model served from a local path whose `config.json` is among the linted files (hfconfig.files_in_run:
    `<path>/config.json` itself, else the one `<last path component>/config.json` of a directory name
    specific enough to tell, not `model`), with its neighbours (tokenizer_config.json, hf_quant_config.json)."""
    from vllmlint.capacity.hfconfig import ModelConfigError, files_in_run, spec_from_files

    try:
        files = files_in_run(path, world)
        model = spec_from_files(files, path) if files is not None else None
    except ModelConfigError:
        return None
    return Match(model, f"config.json at {files.origin}") if files is not None and model is not None else None


def _match_opt_in(work: Workload) -> None:
    """With --hf-cache / --online (opt-in), a Hugging Face id the catalog does not hold exactly is sized from
    its own config.json (the local cache, then the Hub); the checkpoint's own quantization then applies."""
    from vllmlint.capacity.hfconfig import ModelConfigError, resolve_opt_in

    if work.match is not None and work.match.how in ("exact id", "case-insensitive id"):
        return
    try:
        found = resolve_opt_in(work.model_name or "")
    except ModelConfigError:
        return
    if found is not None:
        work.match = found
        if not work.quantization_given:
            work.quantization = None


# --- GPUs a container asks for --------------------------------------------------------------------
def requested_accelerator(container: Container) -> tuple[str, int, Node] | None:
    """(resource, count, YAML node) of the accelerator the container requests (limits, else requests).
    A count that is no quantity, or no sane one (`.inf`, `.nan`, `1e400`), is as if not given. A Compose
    service's GPUs are its device reservations (`deploy.resources.reservations.devices`, `gpus:`)."""
    if container.is_compose:
        from vllmlint.k8s.pod import compose_gpu_request

        return compose_gpu_request(container)
    resources = container.resources
    for section in (resources.limits, resources.requests):
        names = [*ACCELERATOR_RESOURCES, *(name for name in section if name.startswith(MIG_RESOURCE_PREFIX))]
        for name in names:
            value = section.get(name)
            if value is not None:
                count = quantity_int(value.node)
                if count is not None:
                    return name, count, value.node
    return None


def mig_landings(found: list[Landing] | None, resource: str) -> list[Landing] | None:
    """Where a pod requesting the MIG device `nvidia.com/mig-<profile>` lands: each landing's GPU as that slice
    (a GPU without the profile cannot host it); with no GPU known, every catalogued GPU that has the profile.
    None when no catalogued GPU has it (an unknown profile: never a guess)."""
    from vllmlint.capacity.specs import mig_device, mig_devices

    profile = resource[len(MIG_RESOURCE_PREFIX):]
    if found:
        sliced = [Landing(Candidate(device, landing.candidate.gpu_count, landing.candidate.instance_type),
                          landing.origin, landing.deciding)
                  for landing in found for device in [mig_device(landing.candidate.gpu, profile)] if device is not None]
        return sliced or None
    devices = mig_devices(profile)
    return [Landing(Candidate(device), f"the resource {resource}") for device in devices] or None


# --- where a pod lands ----------------------------------------------------------------------------
def _pool_allows(requirement: Requirement, pool: NodePool) -> bool:
    """Can a node of this pool satisfy the pod's requirement?"""
    label = pool.label(requirement.key)
    if label is not None:  # the pool's nodes carry that label with that value
        return requirement.matches({label.key: label.values[0]})
    mine = pool.requirements_on(requirement.key)
    if mine:
        return all(requirement.compatible(theirs) for theirs in mine)
    if requirement.operator in (NOT_IN, DOES_NOT_EXIST):
        return True
    # Labels no requirement and no template label mentions are on the pool's nodes only if well known.
    return bool(_WELL_KNOWN_LABELS.match(requirement.key))


def pool_admits(pool: NodePool, requirements: list[Requirement], tolerations: list[Toleration]) -> bool:
    """Whether a node of `pool` may take a pod with these node requirements and its written tolerations.

    The toleration the ExtendedResourceToleration admission plugin adds (`auto_tolerated`) is not counted
    here: it is a cluster setting the manifests do not show, and counting it would put pods on pools where the
    capacity rules then report (VL601, VL707). VL718 counts it, where it keeps the rule silent: each rule
    assumes what makes it stay silent."""
    for taint in pool.taints:
        if taint.repels and not tolerated(tolerations, taint):
            return False
    # Karpenter labels each node with its pool's name: `karpenter.sh/nodepool: l40s` admits that pool only.
    return all(_pool_allows(r, pool) and not (r.key == NODEPOOL_LABEL and not r.holds_for((pool.name,), numeric=False))
               for r in requirements)


def requested_resources(template: PodTemplate) -> set[str]:
    """The names of every resource the pod's containers request or limit (`nvidia.com/gpu`, `cpu`, ...)."""
    names: set[str] = set()
    for container in template.containers:
        resources = container.resources
        names.update(resources.limits)
        names.update(resources.requests)
    return names


def _pool_meant_for(pool: NodePool, template: PodTemplate, requirements: list[Requirement],
                    tolerations: list[Toleration]) -> bool:
    """Whether a NodePool is plausibly where this pod runs, not just one it would fit: one run often mixes
    manifests of several clusters. The pod must point at the pool (select one of its template labels or
    requirement keys beyond the well-known ones, or tolerate one of its taints), or live in its folder."""
    if any(r.key == NODEPOOL_LABEL and r.holds_for((pool.name,), numeric=False) for r in requirements):
        return True  # the pod names the pool
    keys = {r.key for r in requirements}
    labels = {r.key for r in pool.labels}
    pool_keys = labels | {r.key for r in pool.requirements}
    if any(k in pool_keys and not _WELL_KNOWN_LABELS.match(k) for k in keys):
        return True
    if keys & labels:
        return True
    if any(tolerated(tolerations, taint) for taint in pool.taints):
        return True
    folder = pool.obj.source.display_path.rpartition("/")[0]
    return template.owner.source.display_path.rpartition("/")[0] == folder


def admitting_pools(template: PodTemplate, world: World) -> list[NodePool]:
    """The Karpenter NodePools of the run a pod may land on (admitted and meant for it, as `landings` decides),
    over every node selector term."""
    placement = template.placement
    selector = placement.node_selector
    pools = [node_pool(o) for o in world.of_kind("NodePool") if o.api_version.startswith("karpenter.sh/")]
    found: list[NodePool] = []
    for term in placement.terms:
        pod_requirements = selector + term.requirements
        for pool in pools:
            if all(pool.obj is not f.obj for f in found) \
                    and pool_admits(pool, pod_requirements, placement.tolerations) \
                    and _pool_meant_for(pool, template, pod_requirements, placement.tolerations):
                found.append(pool)
    return found


def _gpus_for(world: World, labels: list[Requirement], requirements: list[Requirement]) -> list[Candidate] | None:
    """`gpus_for_node_constraints(labels, requirements)`, once per world for the constraints that say the same
    (keys, operators, values: all it reads): the replicas of a workload, and workloads pinned to the same GPU
    product, share one answer (read only)."""
    key = (tuple((r.key, r.operator, r.values) for r in labels), tuple((r.key, r.operator, r.values) for r in requirements))
    memo = world.fact(_node_gpus)
    try:
        return memo[key]
    except KeyError:
        found = memo[key] = gpus_for_node_constraints(labels, requirements)
        return found
    except TypeError:  # values in a list, not a tuple: asked each time
        return gpus_for_node_constraints(labels, requirements)


def _node_gpus(world: World) -> dict[tuple, list[Candidate] | None]:
    """The memo `_gpus_for` fills (kept by `World.fact`)."""
    return {}


def landings(template: PodTemplate, world: World) -> list[Landing] | None:
    """Where a pod can land, each with its origin; None when no GPU is known for some place it could land."""
    placement = template.placement
    selector = placement.node_selector
    pools = [node_pool(o) for o in world.of_kind("NodePool") if o.api_version.startswith("karpenter.sh/")]
    found: dict[Candidate, Landing] = {}
    for term in placement.terms:
        expressions = term.requirements
        pod_requirements = selector + expressions
        admitting = [p for p in pools if pool_admits(p, pod_requirements, placement.tolerations)
                     and _pool_meant_for(p, template, pod_requirements, placement.tolerations)]
        from_pools = False
        for pool in admitting:
            # The pod's node selector wins over a template label of the same key (both are `key In [value]`).
            chosen = {r.key for r in selector}
            labels = [r for r in pool.labels if r.key not in chosen] + selector
            deciding = (*labels, *pool.requirements, *expressions)
            candidates = _gpus_for(world, labels, [*pool.requirements, *expressions])
            if candidates is None:
                return None  # a pool whose hardware we do not know: never guess
            for candidate in candidates:  # none when the pool's hardware contradicts the pod's selector
                from_pools = True
                found.setdefault(candidate, Landing(candidate, f"NodePool {pool.name}", deciding))
        if not from_pools:
            candidates = _gpus_for(world, selector, expressions)
            if candidates is None:
                return None
            origin = " and ".join(part for part, used in (("nodeSelector", selector), ("node affinity", expressions))
                                  if used)
            for candidate in candidates:
                found.setdefault(candidate, Landing(candidate, origin, tuple(pod_requirements)))
    return list(found.values()) or None


# --- where the weights are downloaded ---------------------------------------------------------------
def downloaded_by_name(work: Workload) -> bool:
    """The model is a Hugging Face id vLLM downloads (not a local path, not `$VAR`)."""
    name = work.model_name
    if not name:
        return False
    return not _is_local_path(name) and name.count("/") == 1 and not name.startswith(("s3://", "gs://"))


def checkpoint_bytes(model: ModelSpec, quantization: str | None) -> int:
    """Bytes of the weight files: every parameter at the checkpoint's own size (quantized linears smaller)."""
    try:
        return _checkpoint_bytes_of(model, quantization)  # once per model: several rules ask, per workload
    except TypeError:  # a model with an unhashable part: computed each time
        return _checkpoint_bytes(model, quantization)


def _checkpoint_bytes(model: ModelSpec, quantization: str | None) -> int:
    from vllmlint.capacity.estimate import _rank_weights, canonical_quantization
    from vllmlint.capacity.hfconfig import checkpoint_quantization_name, linear_weight_bytes

    stored = 4 if model.torch_dtype == "float32" else 2
    quant = canonical_quantization(checkpoint_quantization_name(model, quantization))
    linear = linear_weight_bytes(model, quant, stored)  # per module for a partially quantized checkpoint
    return _rank_weights(model, range(model.num_hidden_layers), 1, True, True, linear, stored)


def download_dir(work: Workload) -> tuple[str | None, str]:
    """(path, why): where the Hugging Face hub cache of this container is; path None when not in the manifest
    (a `--config` file may set `download-dir`: not read, so not known)."""
    if work.invocation.config_file is not None:
        return None, "--config file"
    option = work.options.get("--download-dir")
    if option is not None:
        if option.value_known and option.value is not None:
            return option.value.rstrip("/") or "/", "--download-dir"
        return None, "--download-dir"
    container = work.pod_container
    env = container.env if container is not None else {}
    for name, suffix in (("HF_HUB_CACHE", ""), ("HUGGINGFACE_HUB_CACHE", ""), ("HF_HOME", "/hub"),
                         ("XDG_CACHE_HOME", "/huggingface/hub")):
        if name in env and env[name] is None:
            return None, f"env {name} from a ConfigMap or Secret"  # the path is not in the manifest
        value = env.get(name)
        if value:
            return value.rstrip("/") + suffix, f"env {name}"
    home = _image_home(work)
    if home is not None and home != "/root":
        return (home.rstrip("/") or "") + "/.cache/huggingface/hub", \
            "the default Hugging Face cache under the HOME of the container's user in this image"
    if home is None and not _vllm_image(work):
        return "/root/.cache/huggingface/hub", \
            "the default Hugging Face cache under HOME; this image's user is not known, root assumed"
    return "/root/.cache/huggingface/hub", "the default Hugging Face cache of the image's root user"


def _vllm_image(work: Workload) -> bool:
    image = work.invocation.image
    from vllmlint.vllm.invocation import image_entry
    return image is not None and image_entry(image, work.release) is not None


def _image_home(work: Workload) -> str | None:
    """HOME of the container's user in its image (data/image-entrypoints.yaml `builds`): `runAsUser`, else the
    image's USER; None when the image, its user or that uid's HOME is not known, or several builds disagree."""
    from vllmlint.vllm.images import image_builds

    image, container = work.invocation.image, work.pod_container
    if image is None or container is None or container.is_compose:
        return None
    builds = image_builds(image, work.release)
    if not builds:
        return None
    uid = container.security_context.run_as_user
    homes = set()
    for build in builds:
        user = uid if uid is not None else build.user
        homes.add(build.home(user) if user is not None else None)
    return homes.pop() if len(homes) == 1 else None


def gib1(size: float) -> str:
    return f"{size / GiB:.1f} GiB"


__all__ = ["Workload", "Landing", "workloads", "read_workload", "landings", "requested_accelerator",
           "human_int", "checkpoint_bytes", "download_dir", "downloaded_by_name", "pool_admits", "requested_resources", "admitting_pools",
           "ACCELERATOR_RESOURCES", "WeightsStorage", "weights_storage", "download_bytes"]


# --- where the downloaded weights are stored (VL609, VL706) ---------------------------------------
if TYPE_CHECKING:
    from vllmlint.k8s.pod import Backing


@dataclass(eq=False)
class WeightsStorage:
    """Where a workload's downloaded weights land and what bounds that place.

    `kind`: "writable-layer" (no volume: the container's writable layer, on the node's disk), "emptyDir"
    (a disk-backed emptyDir: node ephemeral storage too), "memory" (a tmpfs emptyDir: counted against the
    memory limit) or "volume" (a PVC, hostPath, NFS... whose size is not known here).
    """

    path: str
    why: str
    backing: Backing
    kind: str
    size_limit: tuple[int, Node] | None = None  # the emptyDir's sizeLimit
    ephemeral_limit: tuple[int, Node] | None = None  # the container's ephemeral-storage limit
    ephemeral_request: tuple[int, Node] | None = None  # the container's own ephemeral-storage request
    # A PersistentVolumeClaim whose size is known: one a Helm chart creates from its values at the size they
    # write (vllm.helm_pod.chart_claim_size: production-stack's pvcStorage).
    claim_size: tuple[int, Node] | None = None

    @property
    def volume_name(self) -> str:
        return self.backing.volume.name if self.backing.volume is not None else ""

    @property
    def on_node_disk(self) -> bool:
        """The kubelet counts it as the pod's local ephemeral storage (writable layer, disk emptyDir)."""
        return self.kind in ("writable-layer", "emptyDir")


def _sized(node: Node | None) -> tuple[int, Node] | None:
    size = quantity_int(node) if node is not None else None
    return (size, node) if size is not None and node is not None else None


def weights_storage(work: Workload) -> WeightsStorage | None:
    """Where vLLM downloads this workload's weights (a Hugging Face id, not `--load-format dummy`) in a
    Kubernetes container; None when nothing is downloaded or the place is not in the manifest."""
    from vllmlint.vllm.helm_pod import chart_claim_size, unknown

    container = work.pod_container  # a manifest's, or the pod a Helm chart renders from its values
    if container is None or container.is_compose or work.model is None or not downloaded_by_name(work):
        return None
    if any(unknown(container, part) for part in ("volumes", "volumeMounts", "env", "resources")):
        return None  # a chart's pod whose storage the values cannot tell
    if "--load-format" in work.options and work.options["--load-format"].value in ("dummy",):
        return None
    path, why = download_dir(work)
    if path is None:
        return None
    backing = container.backing(path)
    if backing.mount is None:
        kind = "writable-layer"
    else:
        volume = backing.volume
        if volume is None or volume.kind != "emptyDir":
            kind = "volume"
        else:
            kind = "memory" if volume.medium == "Memory" else "emptyDir"
    size_limit = None
    if kind == "emptyDir" and backing.volume is not None:
        size_limit = _sized(backing.volume.size_limit_node)
    claim_size = None
    if kind == "volume" and backing.volume is not None:
        claim_size = _sized(chart_claim_size(container, backing.volume.claim_name))
    resources = container.resources
    request = resources.requests.get("ephemeral-storage")
    return WeightsStorage(path, why, backing, kind, size_limit,
                          _sized(container.resource("limits", "ephemeral-storage")),
                          _sized(request.node) if request is not None else None, claim_size)


def download_bytes(work: Workload) -> int | None:
    """Bytes the hub client downloads: the checkpoint as published (`--quantization fp8` on a bf16
    repository quantizes after loading, so the download is still bf16; only the repository name tells)."""
    if work.model is None:
        return None
    try:
        return checkpoint_bytes(work.model, work.match.quantization if work.match else None)
    except ValueError:
        return None


# --- why a NodePool does not take a pod (VL718) --------------------------------------------------
if TYPE_CHECKING:
    from vllmlint.k8s.placement import Taint


@dataclass(frozen=True)
class PoolBlocker:
    """One reason a NodePool's nodes cannot take a pod: a node requirement of the pod no node of the pool
    satisfies (`requirement`), a requirement on GPU hardware the pool's instance types do not offer
    (`hardware`), or a taint the pod does not tolerate (`taint`)."""

    kind: str  # "requirement", "hardware" or "taint"
    requirement: Requirement | None = None
    taint: Taint | None = None


def auto_tolerated(taint: Taint, requested: frozenset[str] | set[str]) -> bool:
    """The ExtendedResourceToleration admission plugin (enabled on EKS from 1.19, aws/containers-roadmap#739)
    gives a pod that requests an extended resource a toleration `{key: <resource>, operator: Exists,
    effect: NoSchedule}` (k8s.io/kubernetes plugin/pkg/admission/extendedresourcetoleration/admission.go):
    a NoSchedule taint keyed by a resource the pod requests never blocks it, wherever that plugin runs. Counted
    as tolerated everywhere, so that no finding depends on a cluster setting the manifests do not show."""
    return taint.key is not None and taint.key in requested and (taint.effect or "NoSchedule") == "NoSchedule"


def pool_blockers(pool: NodePool, requirements: list[Requirement], tolerations: list[Toleration],
                  requested: set[str]) -> list[PoolBlocker] | None:
    """Why `pool` cannot take a pod with these node requirements, tolerations and requested resources
    ([] when it can); None when the pool's hardware is not known well enough to say (never guess)."""
    blockers = [PoolBlocker("taint", taint=t) for t in pool.taints
                if t.repels and not tolerated(tolerations, t) and not auto_tolerated(t, requested)]
    blockers += [PoolBlocker("requirement", requirement=r) for r in requirements if not _pool_allows(r, pool)
                 # Karpenter labels each node with its pool's name (karpenter.sh/nodepool, a well-known label).
                 or r.key == NODEPOOL_LABEL and not r.holds_for((pool.name,), numeric=False)]
    hardware = [r for r in requirements if r.key in _GPU_LABEL_KEYS]
    if hardware and not any(b.kind == "requirement" for b in blockers):
        # Do the pool's instance types offer the GPU the pod asks for? (`landings` reads it the same way.)
        labels = [r for r in pool.labels if r.key not in {h.key for h in requirements}]
        pool_only = gpus_for_node_constraints(labels, pool.requirements)
        if pool_only is None:
            return None if not blockers else blockers
        combined = gpus_for_node_constraints(labels + [r for r in requirements if r.key in _GPU_LABEL_KEYS],
                                             pool.requirements)
        if combined == []:
            blockers += [PoolBlocker("hardware", requirement=r) for r in hardware]
    return blockers


NODEPOOL_LABEL = "karpenter.sh/nodepool"
# Hardware labels the capacity catalogs can compare with a pool's instance types (capacity/nodes.py).
_GPU_LABEL_KEYS = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator", "karpenter.k8s.aws/instance-gpu-name")


def pool_meant_for(pool: NodePool, template: PodTemplate, requirements: list[Requirement],
                   tolerations: list[Toleration]) -> bool:
    """Whether a NodePool is plausibly where this pod runs (see `_pool_meant_for`): the public name."""
    return _pool_meant_for(pool, template, requirements, tolerations)


def karpenter_pools(world: World) -> list[NodePool]:
    """The Karpenter NodePools of the run (`karpenter.sh/*` NodePool objects)."""
    return [node_pool(o) for o in world.of_kind("NodePool") if o.api_version.startswith("karpenter.sh/")]


def well_known_label(key: str) -> bool:
    """A label Karpenter (or GPU feature discovery) puts on every node it launches (`_WELL_KNOWN_LABELS`)."""
    return bool(_WELL_KNOWN_LABELS.match(key))


def workloads_by(world: World, key: str) -> dict[int, list[Workload]]:
    """The run's workloads grouped by the id of their `invocation`, `container`, `pod` (template) or `owner`
    (object), in run order, computed once per world and key: checks that need the workload of one container
    look it up here instead of scanning every workload (which made them quadratic in the size of the tree)."""
    cache: dict[str, dict[int, list[Workload]]] = world.fact(_workload_indexes)
    if key not in cache:
        index: dict[int, list[Workload]] = {}
        for work in workloads(world):
            container = work.invocation.container
            target = {"invocation": work.invocation, "container": container,
                      "pod": container.pod if container is not None else None,
                      "owner": container.pod.owner if container is not None else None}[key]
            if target is not None:
                index.setdefault(id(target), []).append(work)
        cache[key] = index
    return cache[key]


_CHECKPOINT_BYTES: dict[tuple[ModelSpec, str | None], int] = {}  # (model, quantization) -> checkpoint_bytes


def _checkpoint_bytes_of(model: ModelSpec, quantization: str | None) -> int:
    """checkpoint_bytes, remembered (a pure function of the frozen ModelSpec and the quantization)."""
    key = (model, quantization)
    found = _CHECKPOINT_BYTES.get(key)
    if found is None:
        if len(_CHECKPOINT_BYTES) >= 1024:  # a long-lived process (the language server) sees ever new models
            _CHECKPOINT_BYTES.clear()
        found = _CHECKPOINT_BYTES[key] = _checkpoint_bytes(model, quantization)
    return found


def _workload_indexes(world: World) -> dict[str, dict[int, list[Workload]]]:
    """The indexes `workloads_by` fills, one per key (kept by `World.fact`)."""
    return {}
