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

import re
from dataclasses import dataclass, field
from typing import Any

from vllmlint.capacity.specs import GiB, ModelSpec
from vllmlint.capacity.names import Match, _is_local_path, resolve_model
from vllmlint.k8s.objects import as_list
from vllmlint.capacity.nodes import Candidate, gpus_for_node_constraints

ACCELERATOR_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "google.com/tpu", "aws.amazon.com/neuron",
                         "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice", "habana.ai/gaudi")
RAY_KINDS = ("RayCluster", "RayService", "RayJob")
SERVING_RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")

# Labels Karpenter (or the GPU feature discovery that runs on its nodes) puts on every node it launches,
# whatever the NodePool's template says: a pod selecting on them can still land on the pool.
_WELL_KNOWN_LABELS = re.compile(
    r"^(kubernetes\.io/(arch|os|hostname)|node\.kubernetes\.io/.*|beta\.kubernetes\.io/(arch|os|instance-type)"
    r"|topology\.kubernetes\.io/(zone|region)|karpenter\.sh/(capacity-type|nodepool)|karpenter\.k8s\.aws/.*"
    r"|nvidia\.com/gpu\..*)$")


def human_int(text: str) -> int | None:
    """vLLM's human-readable integers: `32768`, `32k` (x1000), `32K` (x1024), `1.5M`; None when not a number."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)\s*", text or "")
    if not match:
        return None
    number, suffix = float(match.group(1)), match.group(2)
    scale = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
             "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[suffix]
    return int(number * scale)


_QUANTITY = re.compile(r"^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$")
_QUANTITY_SCALE = {None: 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
                   "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def quantity_bytes(text: str | int | float | None) -> int | None:
    """A Kubernetes quantity in bytes: `8Gi` = 8 x 2^30, `8G` = 8 x 10^9; None when not a quantity."""
    if isinstance(text, bool) or text is None:
        return None
    if isinstance(text, (int, float)):
        return int(text)
    match = _QUANTITY.match(str(text).strip())
    if not match:
        return None
    return int(float(match.group(1)) * _QUANTITY_SCALE[match.group(2)])


@dataclass(frozen=True)
class Placement:
    candidate: Candidate
    origin: str  # where the GPU came from: "nodeSelector node.kubernetes.io/instance-type", "NodePool vllm-gpu"

    @property
    def label(self) -> str:
        c = self.candidate
        return f"{c.instance_type} ({c.gpu_count} x {c.gpu.id})" if c.instance_type else c.gpu.id


@dataclass
class Workload:
    """One vLLM invocation's capacity-relevant settings. `None` for a number means vLLM's default."""

    invocation: Any  # vllmlint.invocation.Invocation
    model_token: Any = None
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
    unknown: set = field(default_factory=set)  # flags whose value is not known before run time
    options: dict = field(default_factory=dict)  # flag -> the Option it came from (last occurrence)
    placements: list[Placement] | None = None  # None: no GPU known
    gpu_resource: tuple | None = None  # (resource name, count, YAML node) the pod requests, if any

    @property
    def model(self) -> ModelSpec | None:
        return self.match.model if self.match else None

    @property
    def release(self) -> str | None:
        return self.invocation.release

    @property
    def container(self):
        return self.invocation.container

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
        )

    def estimate(self, gpu):
        """The estimate on one GPU, or None when the settings are not ones the estimator can size."""
        from vllmlint.capacity.estimate import estimate

        cache = self.__dict__.setdefault("_estimates", {})
        if gpu.id not in cache:
            try:
                cache[gpu.id] = estimate(self.model, gpu, **self.estimate_kwargs())
            except ValueError:  # a quantization whose size is unknown (gguf, compressed-tensors...)
                cache[gpu.id] = None
        return cache[gpu.id]

    def option_token(self, *flags: str):
        """The token of the first of `flags` that was given (the flag itself), else None."""
        for flag in flags:
            option = self.options.get(flag)
            if option is not None:
                return option.token
        return None

    def value_token(self, flag: str):
        option = self.options.get(flag)
        return option.value_token if option is not None and option.value_token is not None else None

    def hosting_placements(self) -> list[Placement]:
        """The placements the pod can actually be scheduled on (enough GPUs per node, when both are known)."""
        if not self.placements:
            return []
        wanted = self.gpu_resource[1] if self.gpu_resource and self.gpu_resource[0] == "nvidia.com/gpu" else None
        if wanted is None:
            return list(self.placements)
        fitting = [p for p in self.placements if p.candidate.gpu_count is None or p.candidate.gpu_count >= wanted]
        return fitting or list(self.placements)


# The flags each estimate depends on: when one is `$VAR`, the estimate is not made.
# "--cpu-offload-gb" is here because weights offloaded to CPU memory are not modelled: with it, no estimate.
ESTIMATE_FLAGS = ("--tensor-parallel-size", "--pipeline-parallel-size", "--gpu-memory-utilization", "--max-model-len",
                  "--dtype", "--quantization", "--kv-cache-dtype", "--kv-cache-memory-bytes", "--max-num-seqs",
                  "--max-num-batched-tokens", "--cpu-offload-gb", "model")
_ALIASES = {"-tp": "--tensor-parallel-size", "-pp": "--pipeline-parallel-size", "-dp": "--data-parallel-size",
            "-dpl": "--data-parallel-size-local", "-q": "--quantization"}
_INT_FLAGS = {"--tensor-parallel-size": "tensor_parallel_size", "--pipeline-parallel-size": "pipeline_parallel_size",
              "--data-parallel-size": "data_parallel_size", "--data-parallel-size-local": "data_parallel_size_local",
              "--nnodes": "nnodes", "--max-model-len": "max_model_len",
              "--kv-cache-memory-bytes": "kv_cache_memory_bytes", "--max-num-seqs": "max_num_seqs",
              "--max-num-batched-tokens": "max_num_batched_tokens"}
_OTHER_FLAGS = ("--gpu-memory-utilization", "--quantization")
_STR_FLAGS = {"--dtype": "dtype", "--kv-cache-dtype": "kv_cache_dtype"}


def read_workload(invocation) -> Workload:
    """The settings of one invocation (no placement: see `workloads`)."""
    work = Workload(invocation)
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
                work.gpu_memory_utilization = float(value)
            except ValueError:
                work.unknown.add(flag)
        elif flag == "--quantization":
            work.quantization = None if value.lower() in ("none", "") else value.lower()
            work.quantization_given = True

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


def workloads(world) -> list[Workload]:
    """Every vLLM invocation of the run with its settings and placements (computed once per world)."""
    cached = getattr(world, "_vllmlint_capacity_workloads", None)
    if cached is not None:
        return cached
    result = []
    for invocation in world.invocations:
        work = read_workload(invocation)
        if work.match is None and work.model_name and _is_local_path(work.model_name):
            work.match = _match_config_json(work.model_name, world)
        container = invocation.container
        if container is not None:
            work.gpu_resource = requested_accelerator(container)
            work.placements = placements(container.pod, world)
        result.append(work)
    world._vllmlint_capacity_workloads = result
    return result


_GENERIC_DIRS = {"", "model", "models", "weights", "main", "snapshot", "data", "mnt", "checkpoint", "hf", "huggingface"}


def _match_config_json(path: str, world) -> Match | None:
    """A model served from a local path whose `config.json` is among the linted files: the one file named
    `<last path component>/config.json`, for a directory name specific enough to tell (not `model`)."""
    import json

    from vllmlint.capacity.specs import model_from_config_json

    leaf = path.rstrip("/").rsplit("/", 1)[-1]
    if leaf.lower() in _GENERIC_DIRS:
        return None
    found = [source for source in world.sources
             if source.display_path.replace("\\", "/").endswith(f"/{leaf}/config.json")
             or source.display_path == f"{leaf}/config.json"]
    if len(found) != 1:
        return None
    try:
        model = model_from_config_json(json.loads(found[0].text), model_id=path)
    except ValueError:
        return None
    return Match(model, f"config.json at {found[0].display_path}") if model is not None else None


# --- GPUs a container asks for --------------------------------------------------------------------
def requested_accelerator(container) -> tuple | None:
    """(resource, count, YAML node) of the accelerator the container requests (limits, else requests)."""
    from vllmlint.source.yamlmodel import Scalar

    for section in ("limits", "requests"):
        for name in ACCELERATOR_RESOURCES:
            node = container.resource(section, name)
            if isinstance(node, Scalar):
                count = quantity_bytes(node.value)
                if count is not None:
                    return name, int(count), node
    return None


# --- where a pod lands ----------------------------------------------------------------------------
def _python(node):
    from vllmlint.source.yamlmodel import to_python

    return to_python(node) if node is not None else None


def pod_node_constraints(template) -> tuple[dict, list[list[dict]], list[dict]]:
    """(nodeSelector, required node-affinity terms (ORed lists of ANDed expressions), tolerations)."""
    spec = _python(template.spec) or {}
    selector = spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else {}
    selector = {str(k): _label_text(v) for k, v in selector.items()}
    terms: list[list[dict]] = []
    affinity = spec.get("affinity") if isinstance(spec.get("affinity"), dict) else {}
    affinity = affinity.get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(affinity, dict) else None
    if isinstance(required, dict):
        for term in as_list(required.get("nodeSelectorTerms")):
            if isinstance(term, dict):
                expressions = [_expression(e) for e in as_list(term.get("matchExpressions"))
                               if isinstance(e, dict) and "key" in e]
                terms.append(expressions)
    tolerations = [t for t in as_list(spec.get("tolerations")) if isinstance(t, dict)]
    return selector, terms or [[]], tolerations


def _expression(expression: dict) -> dict:
    """A node selector requirement with `values` as a list (anything else in a manifest counts as none)."""
    return {**expression, "values": as_list(expression.get("values"))}


def _label_text(value) -> str:
    """A label value as Kubernetes stores it (YAML `true` is the string "true")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _tolerates(tolerations: list[dict], taint: dict) -> bool:
    for toleration in tolerations:
        operator = str(toleration.get("operator") or "Equal")
        key = toleration.get("key")
        if key in (None, "") and operator == "Exists":
            return True
        if str(key) != str(taint.get("key")):
            continue
        effect = toleration.get("effect")
        if effect not in (None, "") and str(effect) != str(taint.get("effect")):
            continue
        if operator == "Exists" or str(toleration.get("value") or "") == str(taint.get("value") or ""):
            return True
    return False


def _pool_parts(pool) -> tuple[dict, list[dict], list[dict]]:
    """A NodePool's (template labels, requirements, taints)."""
    spec = _python(pool.spec) or {}
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    meta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
    raw_labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
    labels = {str(k): _label_text(v) for k, v in raw_labels.items()}
    pool_spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    requirements = [_expression(r) for r in as_list(pool_spec.get("requirements")) if isinstance(r, dict) and "key" in r]
    taints = [t for t in as_list(pool_spec.get("taints")) if isinstance(t, dict)]
    return labels, requirements, taints


def _pool_allows(key: str, operator: str, values: list[str], labels: dict, requirements: list[dict]) -> bool:
    """Can a node of this pool satisfy the pod's expression `key operator values`?"""
    if key in labels:
        present = labels[key]
        return {"In": present in values, "NotIn": present not in values, "Exists": True,
                "DoesNotExist": False}.get(operator, True)
    mine = [r for r in requirements if str(r.get("key")) == key]
    if mine:
        for requirement in mine:
            pool_op = str(requirement.get("operator") or "In")
            pool_values = [str(v) for v in as_list(requirement.get("values"))]
            if operator == "In" and pool_op == "In" and not set(values) & set(pool_values):
                return False
            if operator == "In" and pool_op == "NotIn" and set(values) <= set(pool_values):
                return False
            if operator == "In" and pool_op == "DoesNotExist":
                return False
            if operator == "DoesNotExist" and pool_op in ("In", "Exists"):
                return False
        return True
    if operator in ("NotIn", "DoesNotExist"):
        return True
    # Labels no requirement and no template label mentions are on the pool's nodes only if well known.
    return bool(_WELL_KNOWN_LABELS.match(key))


def pool_admits(pool, selector: dict, expressions: list[dict], tolerations: list[dict]) -> bool:
    labels, requirements, taints = _pool_parts(pool)
    for taint in taints:
        repels = str(taint.get("effect") or "NoSchedule") in ("NoSchedule", "NoExecute")
        if repels and not _tolerates(tolerations, taint):
            return False
    for key, value in selector.items():
        if not _pool_allows(key, "In", [value], labels, requirements):
            return False
    for expression in expressions:
        values = [str(v) for v in as_list(expression.get("values"))]
        operator = str(expression.get("operator") or "In")
        if not _pool_allows(str(expression["key"]), operator, values, labels, requirements):
            return False
    return True


def _pool_meant_for(pool, template, selector: dict, expressions: list[dict], tolerations: list[dict]) -> bool:
    """Whether a NodePool is plausibly where this pod runs, not just one it would fit: one run often mixes
    manifests of several clusters. The pod must point at the pool (select one of its template labels or
    requirement keys beyond the well-known ones, or tolerate one of its taints), or live in its folder."""
    labels, requirements, taints = _pool_parts(pool)
    keys = set(selector) | {str(e.get("key")) for e in expressions}
    pool_keys = set(labels) | {str(r.get("key")) for r in requirements}
    if any(k in pool_keys and not _WELL_KNOWN_LABELS.match(k) for k in keys):
        return True
    if any(k in labels for k in keys):
        return True
    if any(_tolerates(tolerations, taint) for taint in taints):
        return True
    folder = pool.source.display_path.rpartition("/")[0]
    return template.owner.source.display_path.rpartition("/")[0] == folder


def placements(template, world) -> list[Placement] | None:
    """Where a pod can land, each with its origin; None when no GPU is known for some place it could land."""
    selector, terms, tolerations = pod_node_constraints(template)
    pools = [o for o in world.of_kind("NodePool") if o.api_version.startswith("karpenter.sh/")]
    found: dict = {}
    for expressions in terms:
        admitting = [p for p in pools if pool_admits(p, selector, expressions, tolerations)
                     and _pool_meant_for(p, template, selector, expressions, tolerations)]
        from_pools = False
        for pool in admitting:
            labels, requirements, _ = _pool_parts(pool)
            candidates = gpus_for_node_constraints({**labels, **selector}, requirements + expressions)
            if candidates is None:
                return None  # a pool whose hardware we do not know: never guess
            for candidate in candidates:  # none when the pool's hardware contradicts the pod's selector
                from_pools = True
                found.setdefault(candidate, Placement(candidate, f"NodePool {pool.name}"))
        if not from_pools:
            candidates = gpus_for_node_constraints(selector, expressions)
            if candidates is None:
                return None
            origin = " and ".join(part for part, used in (("nodeSelector", selector), ("node affinity", expressions))
                                  if used)
            for candidate in candidates:
                found.setdefault(candidate, Placement(candidate, origin))
    return list(found.values()) or None


# --- where the weights are downloaded ---------------------------------------------------------------
def downloaded_by_name(work: Workload) -> bool:
    """The model is a Hugging Face id vLLM downloads (not a local path, not `$VAR`)."""
    name = work.model_name
    return bool(name) and not _is_local_path(name) and name.count("/") == 1 and not name.startswith(("s3://", "gs://"))


def checkpoint_bytes(model: ModelSpec, quantization: str | None) -> int:
    """Bytes of the weight files: every parameter at the checkpoint's own size (quantized linears smaller)."""
    from vllmlint.capacity.estimate import QUANTIZED_LINEAR_BYTES, _rank_weights, canonical_quantization

    stored = 4 if model.torch_dtype == "float32" else 2
    quant = canonical_quantization(quantization if quantization is not None else model.checkpoint_quantization)
    linear = QUANTIZED_LINEAR_BYTES[quant] if quant else stored
    return _rank_weights(model, range(model.num_hidden_layers), 1, True, True, linear, stored)


def download_dir(work: Workload) -> tuple[str | None, str]:
    """(path, why): where the Hugging Face hub cache of this container is; path None when not in the manifest."""
    option = work.options.get("--download-dir")
    if option is not None:
        return (option.value.rstrip("/") or "/", "--download-dir") if option.value_known else (None, "--download-dir")
    env = work.container.env
    for name, suffix in (("HF_HUB_CACHE", ""), ("HUGGINGFACE_HUB_CACHE", ""), ("HF_HOME", "/hub"),
                         ("XDG_CACHE_HOME", "/huggingface/hub")):
        if name in env and env[name] is None:
            return None, f"env {name} from a ConfigMap or Secret"  # the path is not in the manifest
        value = env.get(name)
        if value:
            return value.rstrip("/") + suffix, f"env {name}"
    return "/root/.cache/huggingface/hub", "the default Hugging Face cache of the image's root user"


def gib1(size: float) -> str:
    return f"{size / GiB:.1f} GiB"


__all__ = ["Workload", "Placement", "workloads", "read_workload", "placements", "requested_accelerator",
           "quantity_bytes", "human_int", "checkpoint_bytes", "download_dir", "downloaded_by_name",
           "pool_admits", "pod_node_constraints", "ACCELERATOR_RESOURCES"]
