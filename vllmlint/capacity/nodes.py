"""Which GPUs a pod can land on, read from its node selector / node affinity / Karpenter NodePool requirements.

Only labels that name hardware are understood; everything else is ignored.  The answer is a list of
candidates (an instance type with its GPU and count, or a bare GPU when only a GPU label constrains
the node), or None when nothing hardware-related is constrained or no constrained value is known.
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass
from typing import Any, Callable, Iterable, Mapping, Union

from vllmlint.capacity.specs import GKE_PARTITION_KEY, GPU, InstanceType, gpus, instance_types, mig_device, mig_devices
from vllmlint.k8s.selectors import IN, Requirement

INSTANCE_TYPE_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
INSTANCE_FAMILY_KEY = "karpenter.k8s.aws/instance-family"
GPU_COUNT_KEY = "karpenter.k8s.aws/instance-gpu-count"
INSTANCE_SIZE_KEY = "karpenter.k8s.aws/instance-size"  # xlarge, 12xlarge, 48xlarge
INSTANCE_CATEGORY_KEY = "karpenter.k8s.aws/instance-category"  # g, p
INSTANCE_GENERATION_KEY = "karpenter.k8s.aws/instance-generation"  # 5 for g5
GPU_PRODUCT_KEY = "nvidia.com/gpu.product"
GKE_ACCELERATOR_KEY = "cloud.google.com/gke-accelerator"
KARPENTER_GPU_NAME_KEY = "karpenter.k8s.aws/instance-gpu-name"
KARPENTER_GPU_MEMORY_KEY = "karpenter.k8s.aws/instance-gpu-memory"  # MiB per GPU

_INSTANCE_KEYS = (*INSTANCE_TYPE_KEYS, INSTANCE_FAMILY_KEY, GPU_COUNT_KEY, INSTANCE_SIZE_KEY, INSTANCE_CATEGORY_KEY,
                  INSTANCE_GENERATION_KEY)
# Karpenter's labels narrow the instance types but never name one alone: a pool constrained only by them is
# still "AWS GPU instances of these shapes".
_SHAPE_KEYS = (INSTANCE_SIZE_KEY, INSTANCE_CATEGORY_KEY, INSTANCE_GENERATION_KEY)
_GPU_KEYS = (GPU_PRODUCT_KEY, GKE_ACCELERATOR_KEY, KARPENTER_GPU_NAME_KEY, KARPENTER_GPU_MEMORY_KEY)


@dataclass(frozen=True)
class Candidate:
    gpu: GPU
    gpu_count: int | None = None  # None: a GPU label alone says nothing about how many
    instance_type: str | None = None


Constraint = Union[Requirement, Mapping[str, Any]]


def _requirements(node_selector: Mapping[str, Any] | Iterable[Requirement] | None,
                  requirements: Iterable[Constraint] | None) -> list[Requirement]:
    """Requirements from the model as they are; from plain data (the Python API), a node selector map is
    `key In [value]` each, and a `{key, operator, values}` mapping one requirement (a scalar `values` is one
    value)."""
    result: list[Requirement] = []
    if isinstance(node_selector, Mapping):
        result.extend(Requirement(str(key), IN, (str(value),)) for key, value in node_selector.items())
    else:
        result.extend(node_selector or ())
    for expression in requirements or ():
        if isinstance(expression, Requirement):
            result.append(expression)
            continue
        if not isinstance(expression, Mapping) or "key" not in expression:
            continue
        values = expression.get("values") or ()
        if isinstance(values, (str, int)):
            values = (values,)
        result.append(Requirement(str(expression["key"]), str(expression.get("operator", IN)),
                                  tuple(str(v) for v in values)))
    return result


def _gpu_label(gpu: GPU, key: str) -> tuple[list[str] | None, float | None]:
    if key == GPU_PRODUCT_KEY:
        return list(gpu.gpu_product_labels) or None, None
    if key == GKE_ACCELERATOR_KEY:
        return list(gpu.gke_accelerator_labels) or None, None
    if key == KARPENTER_GPU_NAME_KEY:
        return list(gpu.karpenter_gpu_names) or None, None
    if key == KARPENTER_GPU_MEMORY_KEY:
        memory = gpu.karpenter_memory_mib
        return [str(memory)], float(memory)
    return None, None


def _instance_label(instance: InstanceType, key: str) -> tuple[list[str] | None, float | None]:
    if key in INSTANCE_TYPE_KEYS:
        return [instance.type], None
    if key == INSTANCE_FAMILY_KEY:
        return ([instance.family], None) if instance.provider == "aws" else (None, None)
    if key == GPU_COUNT_KEY:
        return ([str(instance.gpu_count)], float(instance.gpu_count)) if instance.provider == "aws" else (None, None)
    if key in _SHAPE_KEYS:
        if instance.provider != "aws" or "." not in instance.type:
            return None, None
        family, size = instance.type.split(".", 1)
        match = re.match(r"([a-z]+)(\d+)", family)
        if key == INSTANCE_SIZE_KEY:
            return [size], None
        if key == INSTANCE_CATEGORY_KEY:
            return ([match.group(1)], None) if match else (None, None)
        return ([match.group(2)], float(match.group(2))) if match else (None, None)
    # Karpenter's labels exist only on AWS nodes, GKE's only on GKE nodes.
    if key.startswith("karpenter.k8s.aws/") and instance.provider != "aws":
        return None, None
    if key == GKE_ACCELERATOR_KEY and instance.provider != "gcp":
        return None, None
    return _gpu_label(instance.gpu, key)


def _known_values(requirement: Requirement) -> bool:
    """Whether an In list names at least one value the catalogs know (otherwise we cannot say anything)."""
    if requirement.operator != IN:
        return True
    wanted = {value.lower() for value in requirement.values}
    if requirement.key in INSTANCE_TYPE_KEYS:
        known = {name.lower() for name in instance_types()}
    elif requirement.key == INSTANCE_FAMILY_KEY:
        known = {instance.family.lower() for instance in instance_types().values() if instance.provider == "aws"}
    elif requirement.key in (GPU_COUNT_KEY, *_SHAPE_KEYS):
        return True
    else:
        known = set()
        for gpu in _gpu_pool([requirement]):
            labels, _ = _gpu_label(gpu, requirement.key)
            known.update(label.lower() for label in labels or ())
    return bool(wanted & known)


def _gpu_pool(requirements: list[Requirement]) -> list[GPU]:
    """The GPUs to match node labels against: MIG devices too when a product label names one (the single
    strategy's `NVIDIA-A100-SXM4-40GB-MIG-1g.5gb`), so that an open NotIn or Exists does not list every slice."""
    mig = any(r.key == GPU_PRODUCT_KEY and r.operator == IN and any("-mig-" in v.lower() for v in r.values)
              for r in requirements)
    return [*gpus(), *mig_devices()] if mig else list(gpus())


def _partitioned(candidates: list[Candidate], requirements: list[Requirement]) -> list[Candidate]:
    """GKE's MIG nodes (`cloud.google.com/gke-gpu-partition-size In [1g.10gb]`): each candidate's GPU as the
    slices the label allows; a GPU without such a profile cannot be such a node."""
    partitions = [r for r in requirements if r.key == GKE_PARTITION_KEY and r.operator == IN]
    if not partitions:
        return candidates
    allowed = set.intersection(*({v.lower() for v in r.values} for r in partitions))
    result = []
    for candidate in candidates:
        for profile in sorted(allowed):
            device = mig_device(candidate.gpu, profile)
            if device is not None:
                result.append(Candidate(device, candidate.gpu_count, candidate.instance_type))
    return result


def gpus_for_node_constraints(
    node_selector: Mapping[str, Any] | Iterable[Requirement] | None = None,
    requirements: Iterable[Constraint] | None = None,
) -> list[Candidate] | None:
    """Candidate (instance type, GPU, count) for a pod's node constraints.

    node_selector: spec.nodeSelector labels (each an `In` of one value), as a map or as requirements.
    requirements: node-affinity matchExpressions or Karpenter NodePool requirements (`Requirement`s, or
    {key, operator, values} mappings; operators In, NotIn, Exists, DoesNotExist, Gt, Lt).  With an instance-type, instance-family or GPU-count
    constraint the candidates are instance types; with only GPU labels they are bare GPUs
    (gpu_count None).  None when no hardware label is constrained, or an `In` names only values the
    catalogs do not know.
    """
    every = _requirements(node_selector, requirements)
    relevant = [r for r in every if r.key in _INSTANCE_KEYS + _GPU_KEYS]
    if not relevant or all(r.key in _SHAPE_KEYS for r in relevant):
        return None  # nothing names hardware (a size or category alone spans CPU and GPU instances)
    if not all(_known_values(r) for r in relevant):
        return None

    def keep(label_of: Callable[[Any, str], tuple[list[str] | None, float | None]], subject: Any) -> bool:
        for requirement in relevant:
            present, number = label_of(subject, requirement.key)
            if not requirement.holds_for(present, number=number, fold_case=True):
                return False
        return True

    if any(r.key in _INSTANCE_KEYS for r in relevant):
        return _partitioned([
            Candidate(instance.gpu, instance.gpu_count, instance.type)
            for instance in instance_types().values()
            if keep(_instance_label, instance)
        ], every)
    return _partitioned([Candidate(gpu) for gpu in _gpu_pool(relevant) if keep(_gpu_label, gpu)], every)


__all__ = ["Candidate", "gpus_for_node_constraints"]
