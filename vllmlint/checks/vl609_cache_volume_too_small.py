"""VL609: the weights vLLM downloads do not fit where they are downloaded to."""
from vllmlint.capacity.lint import capacity_workloads, model_words
from vllmlint.capacity.workload import checkpoint_bytes, download_dir, downloaded_by_name, gib1, quantity_bytes
from vllmlint.source.yamlmodel import Mapping, Sequence, scalar_str
from vllmlint.checks import Context


def _mount_for(container, path: str):
    """The volumeMount holding `path` (the longest mountPath that contains it), or None: the writable layer."""
    best = None
    mounts = container.node.get("volumeMounts")
    for mount in mounts.items if isinstance(mounts, Sequence) else []:
        if not isinstance(mount, Mapping):
            continue
        mount_path = (scalar_str(mount.get("mountPath")) or "").rstrip("/") or "/"
        if path == mount_path or path.startswith(mount_path.rstrip("/") + "/"):
            if best is None or len(mount_path) > len(best[0]):
                best = (mount_path, mount)
    return best[1] if best else None


def _volume(template, name):
    volumes = template.spec.get("volumes")
    for volume in volumes.items if isinstance(volumes, Sequence) else []:
        if isinstance(volume, Mapping) and scalar_str(volume.get("name")) == name:
            return volume
    return None


def _room(container, path):
    """(bytes available, YAML node that sets it, description) for `path`, or None when unbounded or unknown."""
    mount = _mount_for(container, path)
    if mount is not None:
        volume = _volume(container.pod, scalar_str(mount.get("name")))
        empty_dir = volume.get("emptyDir") if volume is not None else None
        if not isinstance(empty_dir, Mapping) and volume is not None and "emptyDir" in volume:
            empty_dir = None  # `emptyDir: {}` written as `emptyDir:` with nothing: no size limit
        elif not isinstance(empty_dir, Mapping):
            return None  # a PVC, hostPath, NFS...: its size is not ours to know here
        if empty_dir is not None and scalar_str(empty_dir.get("medium")) == "Memory":
            return None  # counted against the memory limit instead
        limit = empty_dir.get("sizeLimit") if empty_dir is not None else None
        size = quantity_bytes(scalar_str(limit)) if limit is not None else None
        if size is not None:
            return size, limit, f"the emptyDir `{scalar_str(volume.get('name'))}` (sizeLimit {scalar_str(limit)})"
    node = container.resource("limits", "ephemeral-storage")
    size = quantity_bytes(scalar_str(node)) if node is not None else None
    if size is None:
        return None
    where = "an emptyDir without sizeLimit" if mount is not None else "the container's writable layer"
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
