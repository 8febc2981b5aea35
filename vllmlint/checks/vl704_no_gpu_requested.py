"""VL704: a CUDA build of vLLM in a pod that requests no accelerator.

Which images are CUDA builds is data (`builds` in data/image-entrypoints.yaml: the image family and tag
variant, e.g. vllm/vllm-openai but not its -rocm tags, not vllm/vllm-openai-cpu); what counts as getting
an accelerator is data too (data/accelerators.yaml: device-plugin resource names and, as a catch-all, any
extended resource outside the kubernetes.io domain, since any may be a device; fractional-GPU annotations
and schedulers). Without a device the CUDA build cannot start ("Failed to infer device type",
"No CUDA GPUs are available"), or, where a node's default runtime is nvidia and the image's
NVIDIA_VISIBLE_DEVICES=all applies, it uses GPUs the scheduler gave to other pods
(https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/). A Helm values file is judged on the pod its chart
renders (vllm.helm_pod: production-stack's requestGPU and runtimeClassName, default "nvidia"; llm-d's
accelerator).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator

from vllmlint.capacity.lint import gpus_needed_per_pod
from vllmlint.capacity.workload import RAY_KINDS, SERVING_RUNTIME_KINDS, workloads_by
from vllmlint.checks import Context
from vllmlint.finding import Finding
from vllmlint.k8s.objects import Container, World
from vllmlint.source.yamlmodel import Mapping, Node, Sequence, scalar_str
from vllmlint.vllm.helm_pod import chart_hint, pod_container, unknown
from vllmlint.vllm.images import image_builds
from vllmlint.vllm.invocation import Invocation, Token

# Kinds whose pod resources are filled in from elsewhere: a ServingRuntime's from the InferenceService that
# uses it, an LLMInferenceService's from its LLMInferenceServiceConfig presets.
_RESOURCES_ELSEWHERE = SERVING_RUNTIME_KINDS + ("LLMInferenceService",)


@lru_cache(maxsize=1)
def _markers() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """One pattern per list of the table, matching (fullmatch) a name any of its rows matches: one compile
    each, not one per row (15 compiles of a one-file run)."""
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "accelerators.yaml") or {}

    def patterns(key: str) -> re.Pattern[str]:
        rows = [f"(?:{item['pattern']})" for item in data.get(key) or () if isinstance(item, dict)]
        return re.compile("|".join(rows) if rows else "(?!)")

    return patterns("resources"), patterns("annotations"), patterns("scheduler_names")


def check(ctx: Context) -> Iterator[Finding | None]:
    seen: set[int] = set()
    ray: set[int] | None = None  # containers that run `ray start`, found once (a scan per container is quadratic)
    for invocation in ctx.world.invocations:
        container = pod_container(invocation)  # a manifest's, or the pod a Helm chart renders from its values
        if container is None or container.init or id(container) in seen or invocation.image is None \
                or any(unknown(container, part) for part in ("resources", "accelerator", "env", "securityContext")):
            continue
        seen.add(id(container))
        builds = image_builds(invocation.image, invocation.release if invocation.release_origin != "--upgrade-to"
                              else None)
        if not builds or any(b.accelerator != "cuda" for b in builds):
            continue  # not in the table, or not (certainly) a CUDA build: CPU, ROCm, XPU, TPU, Neuron, Gaudi
        if _device_elsewhere(invocation) or _gets_accelerator(container, ctx.world):
            continue
        if ray is None:
            ray = _ray_containers(ctx.world)
        if id(container) in ray:
            continue
        yield _finding(ctx, invocation, container)


def _device_elsewhere(invocation: Invocation) -> bool:
    """The invocation itself says the GPUs are not this container's: `--device` other than cuda/auto (older
    releases), or a Ray executor whose GPU workers are other pods. A `--config` file may set either (the run
    does not read it)."""
    if invocation.config_file is not None:
        return True
    for option in invocation.options:
        name = option.canonical
        if name == "--device" and (not option.value_known or (option.value or "").lower() not in ("cuda", "auto")):
            return True
        if name == "--distributed-executor-backend" and (not option.value_known or (option.value or "") != "mp"):
            return True
    return False


def _ray_containers(world: World) -> set[int]:
    """Ids of the containers that run `ray start`: vLLM's GPU workers may be the Ray cluster's other pods."""
    return {id(command.container) for command in world.shell_commands
            if command.container is not None and command.words[:1] == ["ray"]}


def _gets_accelerator(container: Container, world: World) -> bool:
    """Anything in the pod that may hand this container a device, or that the run cannot see."""
    template = container.pod
    owner = template.owner
    if owner.kind in _RESOURCES_ELSEWHERE or owner.kind in RAY_KINDS:
        return True
    if container.is_compose:
        return _compose_gets_device(container, world) or _visible_devices_set(container, world)
    resource_names, annotation_keys, schedulers = _markers()
    resources = container.node.get("resources")
    if resources is not None and not isinstance(resources, Mapping):
        return True  # a template expression or another shape: cannot tell
    if isinstance(resources, Mapping):
        for section_name, section in resources.pairs():
            if section_name == "claims":
                return True  # DRA: the claim may be a GPU
            if section is not None and not isinstance(section, Mapping):
                return True
            if isinstance(section, Mapping):
                for name in section.keys():
                    if resource_names.fullmatch(name):
                        return True
    spec = template.spec
    if spec.get("resourceClaims") is not None:
        return True  # Dynamic Resource Allocation
    runtime = scalar_str(spec.get("runtimeClassName"))
    if runtime is not None and "nvidia" in runtime.lower():
        return True  # the NVIDIA runtime with the image's NVIDIA_VISIBLE_DEVICES (all) exposes the node's GPUs
    if spec.get("runtimeClassName") is not None and runtime is None:
        return True
    scheduler = scalar_str(spec.get("schedulerName"))
    if scheduler is not None and schedulers.fullmatch(scheduler):
        return True
    for notes in (template.annotations, owner.annotations):
        if any(annotation_keys.fullmatch(key) for key in notes):
            return True
    if _privileged_or_devices(container):
        return True
    return _visible_devices_set(container, world)


def _visible_devices_set(container: Container, world: World) -> bool:
    """NVIDIA_VISIBLE_DEVICES set by hand (or from elsewhere): devices chosen for the NVIDIA runtime, on a host
    or node whose default runtime is NVIDIA's (Kubernetes and Compose alike; VL708's business when a device
    plugin is there)."""
    for var in container.resolved_env(world):
        if var.name == "NVIDIA_VISIBLE_DEVICES" and var.value not in ("", "void", "none"):
            return True
    return False


def _privileged_or_devices(container: Container) -> bool:
    """A privileged container sees the node's /dev (with the NVIDIA runtime or a host driver mount)."""
    return container.security_context.privileged is True


def _compose_gets_device(container: Container, world: World) -> bool:
    """Compose: GPUs come from `deploy.resources.reservations.devices`, `gpus:`, `runtime: nvidia`, `devices:`
    (/dev/nvidia*) or `privileged`. A service that `extends` another, or whose name another Compose file of the
    run also defines (an override file merged with `-f`), cannot be told: treat as having one."""
    service = container.node
    for key in ("gpus", "runtime", "devices", "extends", "privileged", "device_cgroup_rules"):
        if service.get(key) is not None:
            return True
    deploy = service.get("deploy")
    if deploy is not None:
        if not isinstance(deploy, Mapping):
            return True
        resources = deploy.get("resources")
        if resources is not None and not isinstance(resources, Mapping):
            return True
        if isinstance(resources, Mapping):
            reservations = resources.get("reservations")
            if reservations is not None and not isinstance(reservations, Mapping):
                return True
            if isinstance(reservations, Mapping):
                devices = reservations.get("devices")
                if devices is not None and not (isinstance(devices, Sequence) and not devices.items):
                    return True
                generic = reservations.get("generic_resources")
                if generic is not None:
                    return True
    name = container.pod.owner.name
    owner_source = container.pod.owner.source
    for obj in world.of_kind("ComposeService"):
        if obj.name == name and obj.source is not owner_source:
            return True
    return False


def _gpus_needed(ctx: Context, invocation: Invocation, container: Container) -> tuple[int, str] | None:
    """(GPUs, TP x PP ...) vLLM needs in this container, VL606's answer; None when not known (a `--config` file
    may set the sizes)."""
    if invocation.config_file is not None:
        return None
    found = workloads_by(ctx.world, "invocation").get(id(invocation))
    return gpus_needed_per_pod(found[0], container.pod) if found else None


def _finding(ctx: Context, invocation: Invocation, container: Container) -> Finding | None:
    image = container.image
    where: Node | Token | None = image if image is not None and image.source is not None else None
    if where is None and container.is_compose:
        where = container.node.get("build")  # the image it builds: the finding stays in the Compose file
    if where is None and getattr(invocation.owner, "image_node", None) is not None:
        where = invocation.owner.image_node  # a Helm values file: the image's tag (or image) value
    if where is None or where.source is None:
        where = invocation.anchor
    raw = invocation.image.raw if invocation.image is not None else "this image"
    needed = _gpus_needed(ctx, invocation, container)
    count = needed[0] if needed is not None else 1
    why = (f" (vLLM needs {count} here: {needed[1]})" if needed is not None and count > 1
           else "" if needed is not None else " (as many as --tensor-parallel-size x --pipeline-parallel-size)")
    some = "one" if count == 1 else str(count)
    if container.is_compose:
        how = (f"reserve {some}: `deploy.resources.reservations.devices: [{{driver: nvidia, count: {count}, "
               f"capabilities: [gpu]}}]` (or `gpus: all`){why}")
        what = "no GPU is reserved for this Compose service"
    elif chart_hint(container, "gpu"):
        how = f"request {some}: {chart_hint(container, 'gpu')}{why}"
        what = "the container requests no accelerator"
    else:
        how = f"request {some}: `resources.limits: {{nvidia.com/gpu: {count}}}`{why}"
        what = "the container requests no accelerator"
    if container.is_compose:
        effect = ("the container starts without GPUs and vLLM fails at start-up (\"Failed to infer device type\" / "
                  "\"No CUDA GPUs are available\")")
    else:
        # Worded for any node: a node selector may allow only GPU nodes, and the device plugin still gives the
        # container no device unless it requests one.
        effect = ("the device plugin gives the container no GPU, so vLLM fails at start-up (\"Failed to infer device "
                  "type\" / \"No CUDA GPUs are available\") on a node without GPUs or whose default container "
                  "runtime is not NVIDIA's, and on a GPU node whose default runtime is NVIDIA's it uses GPUs the "
                  "scheduler gave to other pods")
    detail = "" if container.is_compose else "It requests no `nvidia.com/gpu` or other device resource: "
    effect = effect if detail else effect[0].upper() + effect[1:]
    note = getattr(invocation.owner, "gpu_note", None)  # a Helm values file's count the chart reads as 0
    if note:
        detail, where = f"{note[0]}: ", note[1]
    message = f"`{raw}` is a CUDA build of vLLM, but {what}. {detail}{effect}. Fix: {how}."
    return ctx.finding(where, message, about=container, value=f"no-gpu:{raw}")
