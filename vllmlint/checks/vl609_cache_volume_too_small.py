"""VL609: the weights vLLM downloads do not fit where they are downloaded to."""
from vllmlint.capacity.lint import capacity_workloads, model_words
from vllmlint.capacity.workload import checkpoint_bytes, download_dir, downloaded_by_name, gib1
from vllmlint.k8s.quantity import quantity_int
from vllmlint.source.yamlmodel import scalar_str
from vllmlint.checks import Context


def _room(container, path):
    """(bytes available, YAML node that sets it, description) for `path`, or None when unbounded or unknown."""
    backing = container.backing(path)
    if backing.mount is not None:
        volume = backing.volume
        if volume is None or volume.kind != "emptyDir":
            return None  # a PVC, hostPath, NFS...: its size is not ours to know here
        if volume.medium == "Memory":
            return None  # counted against the memory limit instead
        size = volume.size_limit
        if size is not None:
            limit = volume.size_limit_node
            return size, limit, f"the emptyDir `{volume.name}` (sizeLimit {scalar_str(limit)})"
    node = container.resource("limits", "ephemeral-storage")
    size = quantity_int(node) if node is not None else None
    if size is None:
        return None
    where = "an emptyDir without sizeLimit" if backing.mount is not None else "the container's writable layer"
    return size, node, f"{where}, capped by the ephemeral-storage limit {scalar_str(node)}"


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        container = work.container
        if container is None or container.is_compose or work.model is None or not downloaded_by_name(work):
            continue
        if "--load-format" in work.options and work.options["--load-format"].value in ("dummy",):
            continue
        path, why = download_dir(work)
        if path is None:
            continue
        room = _room(container, path)
        if room is None:
            continue
        size, node, where = room
        try:
            # What is downloaded is the checkpoint as published: `--quantization fp8` on a bf16 repository
            # quantizes after loading, so the download is still bf16. Only the repository name tells.
            weights = checkpoint_bytes(work.model, work.match.quantization if work.match else None)
        except ValueError:
            continue
        if weights <= size:
            continue
        yield ctx.finding(node, f"{model_words(work)} is downloaded to {path} ({why}), on {where}: {gib1(size)}, but "
                          f"its weights take about {gib1(weights)}. The download fills the volume and the kubelet "
                          "evicts the pod (or the write fails), over and over. Give the cache at least "
                          f"{gib1(weights * 1.1)} (Kubernetes `Gi` is 2^30 bytes, `G` is 10^9), or pre-load the "
                          "weights on a PVC.",
                          about=work.invocation, value=f"{gib1(weights)}>{gib1(size)}")
