"""VL722: the image's build variant does not run where the pod lands: a CUDA build newer than the node's
driver, an amd64-only tag on arm64 nodes, no kernels for the node's GPU.

What each tag of vllm/vllm-openai is built for is data/image-variants.yaml (vllmlint.vllm.image_variants);
the node's architecture and driver come from the pod's node selector and required node affinity (and the
requirements of the Karpenter NodePools it lands on), the GPU from `capacity.workload` landings. A node whose
architecture is not named is arm64 when every GPU the pod can land on only comes with an NVIDIA Grace CPU
(gpus.yaml `host_cpu`: GH200, GB200, GB300, named by an instance type such as a4x-highgpu-4g or a GPU label). Silent
when the image's variant, the node's driver, architecture or GPU is not named.
"""
from __future__ import annotations

from vllmlint.capacity.estimate import capability_floor
from vllmlint.capacity.lint import capacity_workloads
from vllmlint.capacity.workload import admitting_pools
from vllmlint.checks import Context
from vllmlint.k8s.selectors import GT, IN, LT, Requirement
from vllmlint.vllm.image_variants import Variant, driver_label_keys, image_variant, min_driver_major

_ARCH_KEYS = ("kubernetes.io/arch", "beta.kubernetes.io/arch")
_NON_CUDA_ARCHITECTURES = ("cdna", "rdna", "gaudi", "tpu", "neuron")


def _requirement_sets(template, world) -> list[list[Requirement]]:
    """Every way the pod's node constraints can be met: each node selector term ANDed with the node selector,
    and, when Karpenter NodePools of the run take the pod, with each pool's requirements and labels."""
    sets = template.placement.requirement_sets()
    pools = admitting_pools(template, world)
    if not pools:
        return sets
    return [pod + pool.requirements + pool.labels for pod in sets for pool in pools]


def _arches(requirements: list[Requirement]) -> set[str] | None:
    """The architectures a node meeting these requirements can have; None when nothing names it."""
    allowed: set[str] | None = None
    for r in requirements:
        if r.key in _ARCH_KEYS and r.operator == IN:
            values = {v.strip().lower() for v in r.values}
            allowed = values if allowed is None else allowed & values
    return allowed


def _highest(requirements: list[Requirement], keys: tuple[str, ...]) -> int | None:
    """The highest number a node label among `keys` can have under these requirements (In values, Lt bound);
    None when not bounded (not named, Gt, Exists, a value that is no number)."""
    bound: int | None = None
    for r in requirements:
        if r.key not in keys:
            continue
        try:
            if r.operator == IN:
                top = max(int(v) for v in r.values)
            elif r.operator == LT and r.values:
                top = int(r.values[0]) - 1
            elif r.operator == GT:
                continue
            else:
                continue
        except ValueError:
            continue
        bound = top if bound is None else min(bound, top)
    return bound


def _named(variant: Variant, words: str) -> str:
    return f"vllm/vllm-openai:v{variant.release}{words}"


def _instead_for_driver(variant: Variant, driver: int | None, cuda: int | None) -> str:
    for tag, cuda_text, _held in variant.others:
        try:
            major = int(cuda_text.split(".", 1)[0])
        except ValueError:
            continue
        minimum = min_driver_major(major)
        if minimum is None:
            continue
        if (driver is None or driver >= minimum) and (cuda is None or cuda >= major):
            return f"Use {_named(variant, tag)} (CUDA {cuda_text}) on these nodes, or upgrade their driver"
    return "Upgrade the nodes' driver, or pin an older release built with an older CUDA"


def _driver(ctx, work, variant: Variant, sets: list[list[Requirement]]):
    minimum = min_driver_major(variant.cuda_major)
    if minimum is None:
        return
    driver_keys, cuda_keys = driver_label_keys()
    drivers, cudas = [], []
    for requirements in sets:
        driver, cuda = _highest(requirements, driver_keys), _highest(requirements, cuda_keys)
        too_old = (driver is not None and driver < minimum) or (cuda is not None and cuda < variant.cuda_major)
        if not too_old:
            return  # some node the pod can land on may run it
        drivers.append(driver)
        cudas.append(cuda)
    if not sets:
        return
    driver = max((d for d in drivers if d is not None), default=None)
    cuda = max((c for c in cudas if c is not None), default=None)
    named = (f"driver {driver}" if driver is not None else f"a driver for CUDA {cuda}")
    yield ctx.finding(work.container.image, f"{_instead_for_driver(variant, driver, cuda)}: "
                      f"{work.invocation.image.raw} is built with CUDA {variant.cuda}, which needs NVIDIA driver "
                      f"{minimum} or newer (NVIDIA's CUDA compatibility table), and the pod selects nodes with "
                      f"{named}. On an older driver vLLM stops at start-up (\"CUDA driver version is insufficient "
                      "for CUDA runtime version\", or torch finds no GPU).",
                      about=work.invocation, value=f"driver:{variant.cuda_major}")


def _implied_arch(work) -> tuple[str, str] | None:
    """(arch, why) when every node the pod can land on has a GPU that only comes with one CPU architecture
    (gpus.yaml `host_cpu`: the Grace superchips GB200 and GB300 are arm64), named by an instance type or a
    GPU label; None when some landing's GPU does not say, or they differ."""
    landings = work.hosting_landings()
    arches = {landing.candidate.gpu.host_arch for landing in landings}
    if not landings or len(arches) != 1 or None in arches:
        return None
    first = landings[0]
    return str(next(iter(arches))), f"{first.label}, from {first.origin}, whose {first.candidate.gpu.id} comes with " \
        f"an NVIDIA Grace CPU"


def _node_arches(work, sets: list[list[Requirement]]) -> tuple[set[str], str] | None:
    """The architectures the pod's nodes can have and why (named by kubernetes.io/arch, or implied by the
    GPU of every landing); None when some way to place the pod says neither."""
    node_arches: set[str] = set()
    implied: tuple[str, str] | None = None
    for requirements in sets:
        allowed = _arches(requirements)
        if allowed is None:
            implied = implied or _implied_arch(work)
            if implied is None:
                return None
            allowed = {implied[0]}
        node_arches |= allowed
    return node_arches, (implied[1] if implied else "")


def _arch(ctx, work, variant: Variant, sets: list[list[Requirement]]):
    named = _node_arches(work, sets)
    if named is None:
        return
    node_arches, why = named
    if not node_arches or node_arches & set(variant.arches):
        return
    wanted = sorted(node_arches)
    if variant.arch_tags and set(wanted) <= set(_all_arches(variant)):
        advice = f"Use {_named(variant, variant.tag)} (the multi-arch tag)"
    else:
        advice = f"Use a release published for {'/'.join(wanted)} (vllm/vllm-openai is multi-arch from 0.11.0)"
    nodes = f"{'/'.join(wanted)} nodes" + (f" ({why})" if why else "")
    yield ctx.finding(work.container.image, f"{advice}: {work.invocation.image.raw} holds only the "
                      f"{'/'.join(variant.arches)} image, and the pod selects {nodes}. The node "
                      "pulls the image of its own architecture: with none in the tag the pull fails (\"no matching "
                      "manifest\") or the binaries do not run (\"exec format error\"), and the pod never starts.",
                      about=work.invocation, value=f"arch:{'/'.join(wanted)}")


def _all_arches(variant: Variant) -> tuple[str, ...]:
    """The architectures the variant's multi-arch tag holds (the period's row, not one `-x86_64` tag)."""
    return tuple(name for name, _text in variant.capabilities)


def _gpu(ctx, work, variant: Variant, sets: list[list[Requirement]]):
    hosting = work.hosting_landings()
    if not hosting:
        return
    named = _node_arches(work, sets)
    node_arches = named[0] if named is not None else set(variant.arches)
    arches = sorted(node_arches & set(variant.arches)) or list(variant.arches)
    floor = capability_floor(variant.release)
    failing = []
    for landing in hosting:
        gpu = landing.candidate.gpu
        if gpu.architecture.startswith(_NON_CUDA_ARCHITECTURES) or gpu.capability < floor:
            return  # another accelerator, or below the release's floor: VL607 reports it
        verdicts = [variant.runs_on(gpu.capability, arch) for arch in arches]
        if any(v is not False for v in verdicts):
            return  # some landing (or some arch) may run it
        failing.append(landing)
    if not failing:
        return
    gpu = failing[0].candidate.gpu
    instead = ""
    for tag, cuda, _held in variant.others:
        other = image_variant_of(variant, tag)
        if other is not None and all(other.runs_on(gpu.capability, arch) for arch in arches):
            instead = f"Use {_named(variant, tag)} (CUDA {cuda}) on {gpu.id}"
            break
    instead = instead or f"Use a build with kernels for compute capability {gpu.compute_capability}"
    yield ctx.finding(work.container.image, f"{instead}: {work.invocation.image.raw} (CUDA {variant.cuda}) has "
                      f"no kernels for {gpu.id} (compute capability {gpu.compute_capability}), where the pod lands "
                      f"({failing[0].label}, from {failing[0].origin}). Its kernels are compiled for the compute "
                      "capabilities its release pipeline lists, with no PTX to fall back on: the first kernel launch "
                      "fails with \"no kernel image is available for execution on the device\".",
                      about=work.invocation, value=f"sm:{gpu.id}")


def image_variant_of(variant: Variant, tag: str) -> Variant | None:
    """The same release's variant with another tag suffix."""
    from vllmlint.vllm.images import parse_image

    return image_variant(parse_image(f"vllm/vllm-openai:v{variant.release}{tag}"))


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        container = work.container
        if container is None or container.is_compose or container.image is None:
            continue
        variant = image_variant(work.invocation.image)
        if variant is None:
            continue
        sets = _requirement_sets(container.pod, ctx.world)
        yield from _arch(ctx, work, variant, sets)
        yield from _driver(ctx, work, variant, sets)
        yield from _gpu(ctx, work, variant, sets)
