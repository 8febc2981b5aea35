"""VL706: the weights vLLM downloads land on the node's ephemeral storage with nothing that reserves room.

The writable layer and disk-backed emptyDirs are the pod's local ephemeral storage
(https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#local-ephemeral-storage).
The scheduler reserves room for them only through `ephemeral-storage` requests, and under disk pressure the
kubelet evicts first the pods whose usage exceeds their requests
(https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/#pod-selection-for-kubelet-eviction).
A bounded place (an emptyDir `sizeLimit`, an `ephemeral-storage` limit) is VL609's: it compares the bound
with the weights. Where the weights land is `capacity.workload.weights_storage`, shared with VL609.
"""
from __future__ import annotations

from vllmlint.capacity.lint import capacity_workloads, model_words
from vllmlint.capacity.workload import SERVING_RUNTIME_KINDS, download_bytes, gib1, weights_storage
from vllmlint.finding import Positioned, Severity
from vllmlint.k8s.quantity import quantity_int
from vllmlint.source.yamlmodel import scalar_str
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
    container = work.container
    pod_volumes = {v.name: v for v in container.pod.volumes}
    for mount in container.volume_mounts:
        volume = pod_volumes.get(mount.name)
        if volume is None or not (volume.kind == "emptyDir" and volume.medium == "Memory"):
            return False
    return True


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        storage = weights_storage(work)
        if storage is None or not storage.on_node_disk:
            continue
        if work.container is not None and work.container.pod.owner.kind in SERVING_RUNTIME_KINDS:
            continue  # a ServingRuntime's resources are defaults the InferenceService may replace
        if storage.size_limit is not None or storage.ephemeral_limit is not None:
            continue  # bounded: VL609 compares the bound with the weights
        env = work.container.env if work.container is not None else {}
        if any((env.get(name) or "").strip().lower() in ("1", "true", "yes", "on") for name in _OFFLINE):
            continue  # nothing is downloaded (VL710 judges whether the cache holds the model)
        if storage.why.startswith("the default") and not _home_known(work):
            continue
        weights = download_bytes(work)
        if weights is None:
            continue
        request = storage.ephemeral_request
        # The scheduler and the eviction ranking both count the pod's requests, summed over its containers.
        reserved = _pod_request(work.container)
        if reserved is not None and reserved >= weights:
            continue
        place = (f"the emptyDir `{storage.volume_name}` without sizeLimit" if storage.kind == "emptyDir"
                 else "the container's writable layer (no volume is mounted there)")
        head = (f"{model_words(work)} is downloaded to the node's ephemeral storage (about {gib1(weights)}). "
                f"It goes to {storage.path} ({storage.why}), on {place}")
        fix = (f"Mount a PVC with the weights there, or request ephemeral-storage of at least {gib1(weights * 1.1)} "
               "so that the scheduler picks a node with that much disk.")
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
