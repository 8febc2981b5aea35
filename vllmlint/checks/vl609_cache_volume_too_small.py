"""VL609: the weights vLLM downloads do not fit where they are downloaded to.

For a Helm values file, in the pod its chart renders (vllm.helm_pod): llm-d modelservice's model-storage emptyDir
is sized by modelArtifacts.size, 5Mi when the values leave it out (the chart's default, reported at the container);
production-stack's PersistentVolumeClaim at /data (HF_HOME) requests pvcStorage (reported there). A claim of a
manifest, or one a chart binds to an existing volume, is not sized here.
"""
from vllmlint.capacity.lint import capacity_workloads, model_words
from vllmlint.capacity.workload import WeightsStorage, download_bytes, gib1, weights_storage
from vllmlint.source.yamlmodel import scalar_str
from vllmlint.vllm.helm_pod import chart_default, chart_hint
from vllmlint.checks import Context


def _room(storage: WeightsStorage):
    """(bytes available, YAML node that sets it, description), or None when unbounded or unknown."""
    if storage.kind == "volume" and storage.claim_size is not None:
        size, node = storage.claim_size
        return size, node, (f"the PersistentVolumeClaim the chart creates for the volume `{storage.volume_name}` "
                            f"(requests.storage {scalar_str(node)})")
    if storage.kind in ("volume", "memory"):
        return None  # a PVC, hostPath, NFS...: its size is not ours to know here; tmpfs: the memory limit
    if storage.size_limit is not None:
        size, limit = storage.size_limit
        return size, limit, f"the emptyDir `{storage.volume_name}` (sizeLimit {scalar_str(limit)})"
    if storage.ephemeral_limit is None:
        return None
    size, node = storage.ephemeral_limit
    where = "an emptyDir without sizeLimit" if storage.kind == "emptyDir" else "the container's writable layer"
    return size, node, f"{where}, capped by the ephemeral-storage limit {scalar_str(node)}"


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        storage = weights_storage(work)
        if storage is None:
            continue
        path, why = storage.path, storage.why
        room = _room(storage)
        if room is None:
            continue
        size, node, where = room
        weights = download_bytes(work)
        if weights is None:
            continue
        if weights <= size:
            continue
        container = work.pod_container
        if chart_default(node, container):
            where += ", the chart's default"
        claim = storage.kind == "volume"
        hint = chart_hint(container, "claim" if claim else "volumes")
        effect = ("the write fails (no space left on the device) and the server exits" if claim
                  else "the kubelet evicts the pod (or the write fails)")
        # The first line (up to the `: `) is the problem in figures; where the download goes follows it.
        yield ctx.finding(node, f"the weights of {model_words(work)} (about {gib1(weights)}) do not fit the "
                          f"{gib1(size)} they are downloaded to: the download goes to {path} ({why}), on {where}, "
                          f"fills it, and {effect}, over and over. Give the cache at least "
                          f"{gib1(weights * 1.1)} (Kubernetes `Gi` is 2^30 bytes, `G` is 10^9"
                          f"{'; ' + hint if hint else ''}), or pre-load the weights on a PVC.",
                          about=work.invocation, value=f"{gib1(weights)}>{gib1(size)}")
