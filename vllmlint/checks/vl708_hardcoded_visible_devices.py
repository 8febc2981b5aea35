"""VL708: a device-visibility variable set by hand in a vLLM container that gets its GPUs from a device plugin.

The device plugin decides which GPUs a container gets and exposes exactly those: inside the container
CUDA (and ROCm) number them 0..N-1. NVIDIA's plugin passes its choice to the container toolkit through
`NVIDIA_VISIBLE_DEVICES` (deviceListStrategy `envvar`, the default); a value written in the pod spec
replaces it, and `all` or host indices make the toolkit mount GPUs the scheduler gave to other pods
(https://github.com/NVIDIA/k8s-device-plugin#readme, "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED";
https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html).
"""
from __future__ import annotations


from vllmlint.capacity.lint import gpus_needed_per_pod
from vllmlint.capacity.workload import RAY_KINDS, requested_accelerator, workloads_by
from vllmlint.finding import Severity
from vllmlint.k8s.pod import CONFIG_MAP, LITERAL
from vllmlint.checks import Context
from vllmlint.lazyre import lazy_compile

# Which variables each device plugin's resource is seen through. HIP reads CUDA_VISIBLE_DEVICES as well as
# HIP_VISIBLE_DEVICES (https://rocm.docs.amd.com/en/latest/conceptual/gpu-isolation.html).
_ORDINAL_VARS = {"nvidia.com/gpu": ("CUDA_VISIBLE_DEVICES",),
                 "amd.com/gpu": ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")}
# The value NVIDIA's device plugin itself sets with deviceListStrategy volume-mounts: it is the plugin's.
_PLUGIN_VALUES = ("/var/run/nvidia-container-devices",)
_ORDINALS = lazy_compile(r"\d{1,4}(,\d{1,4})*")
# NVIDIA_VISIBLE_DEVICES as the toolkit documents it: indices or GPU/MIG UUIDs, comma-separated.
_DEVICE_LIST = lazy_compile(r"(\d{1,4}|GPU-[0-9a-fA-F-]+|MIG-[0-9A-Za-z/-]+)(,(\d{1,4}|GPU-[0-9a-fA-F-]+|MIG-[0-9A-Za-z/-]+))*")


def _containers(world):
    seen = set()
    for invocation in world.invocations:
        container = invocation.container
        if container is None or container.is_compose or id(container) in seen:
            continue  # Compose: `device_ids` / CUDA_VISIBLE_DEVICES there are Docker's business (documented)
        seen.add(id(container))
        yield container


def _where(var):
    """The value's node for a literal; the env entry (or envFrom entry) for a ConfigMap's value, so the
    finding stays in the workload's file."""
    if var.origin == LITERAL and var.source is not None:
        return var.source
    return var.node


def _from(var) -> str:
    return f" (from ConfigMap {var.ref_name}, key {var.ref_key})" if var.origin == CONFIG_MAP else ""


def _needed(world, container) -> tuple[int, str] | None:
    """(GPUs vLLM needs in this container, TP x PP ...) when its invocation says (VL606's answer); None with a
    `--config` file (it may set the sizes), a Ray executor (workers may be other pods) or flags not known."""
    for work in workloads_by(world, "container").get(id(container), []):
        invocation = work.invocation
        template = container.pod
        if invocation.config_file is not None or template.owner.kind in RAY_KINDS:
            return None
        if any(not o.value_known or o.value != "mp" for o in invocation.option("--distributed-executor-backend")):
            return None
        return gpus_needed_per_pod(work, template)
    return None


def _fails(needed, visible: int) -> str:
    """" vLLM needs N GPUs here (TP x PP) and fails at start-up." when `visible` is too few, else ""."""
    if needed is None or needed[0] <= visible:
        return ""
    return (f" vLLM needs {needed[0]} GPUs in this container ({needed[1]}) but sees {visible}: it fails at "
            "start-up.")


def check(ctx: Context):
    for container in _containers(ctx.world):
        request = requested_accelerator(container)
        if request is None or request[1] < 1:
            continue  # no GPUs from a device plugin in this container: the variables are the only selection
        resource, count, _ = request
        if resource not in _ORDINAL_VARS:
            continue
        gpus = f"{count} {resource}"
        for var in container.resolved_env(ctx.world):
            if var.origin not in (LITERAL, CONFIG_MAP) or var.value is None:
                continue  # a Secret, fieldRef or unknown ConfigMap: the value is not in the run
            value = var.value.strip()
            if var.name == "NVIDIA_VISIBLE_DEVICES" and resource == "nvidia.com/gpu":
                yield from _nvidia(ctx, container, var, value, gpus)
            elif var.name in _ORDINAL_VARS[resource]:
                yield from _ordinals(ctx, container, var, value, count, gpus, _needed(ctx.world, container))


def _nvidia(ctx, container, var, value, gpus):
    if value in _PLUGIN_VALUES:
        return
    if value.lower() == "all":
        what = ("`all` replaces the device plugin's list: with the NVIDIA container runtime the container sees "
                "every GPU of the node, including those the scheduler gave to other pods")
    elif value.lower() in ("", "void", "none"):
        what = (f"`{value}` replaces the device plugin's list and hides the allocated GPUs from the container "
                "(vLLM fails with no CUDA device)")
    elif _DEVICE_LIST.fullmatch(value.replace(" ", "")):
        what = (f"`{value}` replaces the device plugin's list: the toolkit mounts the node's GPUs by these host "
                "indices or UUIDs, not the ones the scheduler allocated, so the pod may use another pod's GPU")
    else:
        return  # a CDI name (`nvidia.com/gpu=0`), `$(VAR)`, anything else: not judged
    yield ctx.finding(_where(var), f"NVIDIA_VISIBLE_DEVICES{_from(var)} is set by hand: remove it and let the device "
                      f"plugin choose. This container gets {gpus} from the device plugin, and {what}.",
                      about=container, value=f"{var.name}={value}")


def _ordinals(ctx, container, var, value, count, gpus, needed):
    compact = value.replace(" ", "")
    if compact == "":
        yield ctx.finding(_where(var), f"{var.name}{_from(var)} is empty in a container that gets {gpus} from the "
                          "device plugin: it hides every GPU and vLLM fails with no device. Remove it.",
                          about=container, value=f"{var.name}=")
        return
    if not _ORDINALS.fullmatch(compact):
        return  # UUIDs (GPU-..., MIG-...), `$(VAR)`, anything else: which devices it names is unknown
    ordinals = [int(part) for part in compact.split(",")]
    beyond = [o for o in ordinals if o >= count]
    # CUDA stops at the first ordinal that does not exist: later ones are ignored.
    shown = ordinals[:ordinals.index(beyond[0])] if beyond else ordinals
    if sorted(set(shown)) == list(range(count)):
        # Every allocated GPU, as the plugin already exposes them (an ordinal past them is ignored): harmless,
        # but it breaks the day the request changes. Info at most.
        extra = (f"; device {beyond[0]} does not exist in it, and CUDA ignores it and every ordinal after it"
                 if beyond else "")
        yield ctx.finding(_where(var), f"{var.name}={value}{_from(var)} repeats what the device plugin already does. "
                          f"This container gets {gpus}, numbered 0 to {count - 1} inside it{extra}: the setting is "
                          "redundant, and "
                          "wrong the day the GPU request changes. Remove it.",
                          about=container, value=f"{var.name}:all-{count}", severity=min(ctx.severity, Severity.INFO))
        return
    if beyond:
        first = len(shown)
        seen = "no GPU at all" if first == 0 else f"only {first} of the {count} GPUs"
        yield ctx.finding(_where(var), f"{var.name}={value}{_from(var)} names device {beyond[0]}, not in this "
                          "container: remove the variable. The device plugin gives this container "
                          f"{gpus}, numbered 0 to {count - 1} inside it: CUDA stops at the first missing ordinal, so "
                          f"vLLM sees {seen}.{_fails(needed, first)} The device plugin already limits the container "
                          "to its GPUs.",
                          about=container, value=f"{var.name}:{beyond[0]}>={count}")
        return
    used = len(set(ordinals))
    failure = _fails(needed, used)
    if failure:
        yield ctx.finding(_where(var), f"{var.name}={value}{_from(var)} shows vLLM {used} of the {gpus} the device "
                          f"plugin gives this container.{failure} Remove it; the device plugin already limits the "
                          "container to its GPUs.", about=container, value=f"{var.name}:{used}<{count}")
        return
    request = f", or request {used}" if needed is not None and needed[0] == used else ""
    yield ctx.finding(_where(var), f"{var.name}={value}{_from(var)} shows vLLM {used} of the {gpus} the device plugin "
                      f"gives this container: the other {count - used} stay allocated and idle. Remove it{request}.",
                      about=container, value=f"{var.name}:{used}<{count}")
