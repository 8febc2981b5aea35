"""VL706: the weights vLLM downloads land on the node's ephemeral storage with nothing that reserves room.

The writable layer and disk-backed emptyDirs are the pod's local ephemeral storage
(https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#local-ephemeral-storage).
The scheduler reserves room for them only through `ephemeral-storage` requests, and under disk pressure the
kubelet evicts first the pods whose usage exceeds their requests
(https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/#pod-selection-for-kubelet-eviction).
A bounded place (an emptyDir `sizeLimit`, an `ephemeral-storage` limit) is VL609's: it compares the bound
with the weights. Where the weights land is `capacity.workload.weights_storage`, shared with VL609; for a Helm
values file, in the pod its chart renders (vllm.helm_pod: production-stack's HF_HOME /tmp without pvcStorage).
"""
from __future__ import annotations

from vllmlint.capacity.lint import capacity_workloads, model_words
from vllmlint.capacity.node_disk import NodeDisk, node_disk
from vllmlint.capacity.workload import SERVING_RUNTIME_KINDS, download_bytes, gib1, weights_storage
from vllmlint.finding import Positioned, Severity
from vllmlint.k8s.quantity import quantity_int
from vllmlint.source.yamlmodel import scalar_str
from vllmlint.vllm.image_variants import hub_release, image_min_bytes
from vllmlint.vllm.helm_pod import chart_hint
from vllmlint.vllm.invocation import image_entry
from vllmlint.checks import Context

_OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def _pod_request(container) -> int | None:
    total, seen = 0, False
    for other in container.pod.containers:
        value = other.resources.request("ephemeral-storage")
        size = quantity_int(value.node) if value is not None else None
        if size is not None:
            total, seen = total + size, True
    return total if seen else None


def _home_known(work) -> bool:
    """The default cache is under the image user's HOME, /root for vLLM's own images. For another image
    HOME may be elsewhere: still on the writable layer when the container mounts no disk volume at all."""
    image = work.invocation.image
    if image is not None and image_entry(image, work.release) is not None:
        return True
    container = work.pod_container
    pod_volumes = {v.name: v for v in container.pod.volumes}
    for mount in container.volume_mounts:
        volume = pod_volumes.get(mount.name)
        if volume is None or not (volume.kind == "emptyDir" and volume.medium == "Memory"):
            return False
    return True


# The kubelet's default hard eviction threshold: pods are evicted once the node's filesystem has less than 10%
# free (https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/#hard-eviction-thresholds).
_USABLE = 0.9


def _disk_words(disk: NodeDisk) -> str:
    return f"{gib1(disk.size)} node disk ({disk.origin})"


def _image(work) -> tuple[int, str] | None:
    """(a lower bound of the image's unpacked size, its source) for vllm/vllm-openai release tags
    (data/image-variants.yaml `image_sizes`)."""
    return image_min_bytes(hub_release(work.invocation.image))


def _image_alone(ctx, work, disk: NodeDisk | None, seen: set[int]):
    """The image alone does not fit the node disk the run names (whatever holds the weights)."""
    container = work.pod_container
    if disk is None or container is None or container.image is None or id(container) in seen:
        return
    image = _image(work)
    if image is None or image[0] <= disk.size * _USABLE:
        return
    seen.add(id(container))
    yield ctx.finding(container.image, f"Give the nodes a disk of at least {gib1(image[0] / _USABLE * 1.1)}: "
                      f"{work.invocation.image.raw} unpacks to at least {image[0] / 10**9:.1f} GB, more than the "
                      f"{gib1(disk.size * _USABLE)} the kubelet lets pods fill on the {_disk_words(disk)} before "
                      "it evicts them (nodefs.available<10%). The pull fails with \"no space left on device\" or "
                      "the node comes under disk pressure before vLLM starts.",
                      about=work.invocation, value=f"image:{image[0] // 10**9}GB>{gib1(disk.size)}")


def check(ctx: Context):
    seen: set[int] = set()
    for work in capacity_workloads(ctx.world):
        container = work.pod_container
        disk = node_disk(container.pod, ctx.world) if container is not None and not container.is_compose else None
        alone = list(_image_alone(ctx, work, disk, seen))
        if alone:
            yield from alone
            continue
        storage = weights_storage(work)
        if storage is None or not storage.on_node_disk:
            continue
        if work.pod_container is not None and work.pod_container.pod.owner.kind in SERVING_RUNTIME_KINDS:
            continue  # a ServingRuntime's resources are defaults the InferenceService may replace
        if storage.size_limit is not None or storage.ephemeral_limit is not None:
            continue  # bounded: VL609 compares the bound with the weights
        env = work.pod_container.env if work.pod_container is not None else {}
        if any((env.get(name) or "").strip().lower() in ("1", "true", "yes", "on") for name in _OFFLINE):
            continue  # nothing is downloaded (VL710 judges whether the cache holds the model)
        if storage.why.startswith("the default") and not _home_known(work):
            continue
        weights = download_bytes(work)
        if weights is None:
            continue
        if disk is not None:
            image = _image(work)
            need = weights + (image[0] if image is not None else 0)
            if need > disk.size * _USABLE:
                raw = work.invocation.image.raw if work.invocation.image is not None else ""
                with_image = f" and {raw} (at least {image[0] / 10**9:.1f} GB unpacked)" if image is not None else ""
                yield ctx.finding(work.model_anchor, f"Mount a PVC with the weights there, or give the nodes a disk of "
                                  f"at least {gib1(need / _USABLE * 1.1)}: {model_words(work)} is downloaded to the "
                                  f"node's ephemeral storage ({storage.path}, {storage.why}), and the weights "
                                  f"({gib1(weights)}){with_image} need more than the {gib1(disk.size * _USABLE)} the "
                                  f"kubelet lets pods fill on the {_disk_words(disk)} before it evicts them "
                                  "(nodefs.available<10%). The download fails half-way (\"No space left on "
                                  "device\") or the pod is evicted and downloads again elsewhere.",
                                  about=work.invocation, value=f"disk:{gib1(need)}>{gib1(disk.size)}")
                continue
        request = storage.ephemeral_request
        # The scheduler and the eviction ranking both count the pod's requests, summed over its containers.
        reserved = _pod_request(work.pod_container)
        if reserved is not None and reserved >= weights:
            continue
        place = (f"the emptyDir `{storage.volume_name}` without sizeLimit" if storage.kind == "emptyDir"
                 else "the container's writable layer (no volume is mounted there)")
        head = (f"{model_words(work)} is downloaded to the node's ephemeral storage (about {gib1(weights)}). "
                f"It goes to {storage.path} ({storage.why}), on {place}")
        fix = (f"Mount a PVC with the weights there, or request ephemeral-storage of at least {gib1(weights * 1.1)} "
               "so that the scheduler picks a node with that much disk.")
        hint = chart_hint(work.pod_container, "storage")
        if hint:
            fix = f"In the values, {hint}."
        if reserved is not None:
            node: Positioned
            if request is not None:
                node = request[1]
                what = f"its ephemeral-storage request {scalar_str(node)}"
                if reserved != request[0]:
                    what += " (with the other containers' requests)"
            else:
                node, what = work.model_anchor, "the pod's ephemeral-storage requests (of its other containers)"
            yield ctx.finding(node, f"{head}, but {what} reserves only {gib1(reserved)}. The scheduler may place it on a node without room for the weights, "
                              "and under disk pressure the kubelet evicts first the pods that use more than they "
                              f"request, so the pod is evicted mid-download and starts over. {fix}",
                              about=work.invocation, value=f"{gib1(weights)}>{gib1(reserved)}")
            continue
        data = ctx.rule.data if isinstance(ctx.rule.data, dict) else {}
        floor = data.get("unreserved_floor_gib")
        if not isinstance(floor, (int, float)) or weights <= floor * 2**30:
            continue  # small enough to fit the smallest default node disk (see the rule's data)
        anchor = work.model_anchor
        yield ctx.finding(anchor, f"{head}, and no ephemeral-storage request reserves room for it. The scheduler "
                          "does not count the download, so the pod can land on a node whose disk it fills; the "
                          "kubelet then evicts it first (it uses more than its zero request) and it downloads again "
                          f"elsewhere, or the download fails half-way. {fix}",
                          about=work.invocation, value=f"{gib1(weights)}>0", severity=min(ctx.severity, Severity.INFO))
