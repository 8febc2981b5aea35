"""VL608: tensor or pipeline parallelism, or a CPU KV-cache offload kept in /dev/shm, without a memory-backed
/dev/shm large enough."""
from vllmlint.capacity.host_memory import kv_offload_bytes, kv_offload_in_shm
from vllmlint.capacity.lint import capacity_workloads
from vllmlint.capacity.workload import gib1
from vllmlint.k8s.quantity import quantity_int
from vllmlint.source.yamlmodel import Scalar, scalar_str
from vllmlint.vllm.helm_pod import chart_default, chart_hint, unknown
from vllmlint.checks import Context


def _shm_provided(template, container) -> bool:
    spec = template.spec
    if template.owner.kind == "ComposeService":
        ipc = scalar_str(spec.get("ipc"))
        return ipc in ("host", "shareable") or spec.get("shm_size") is not None or (ipc or "").startswith("container:")
    host_ipc = spec.get("hostIPC")
    if isinstance(host_ipc, Scalar) and host_ipc.value is True:
        return True
    memory_volumes = {v.name for v in template.volumes if v.medium == "Memory" or v.host_path == "/dev/shm"}
    return any(m.mount_path == "/dev/shm" and m.name in memory_volumes for m in container.volume_mounts)


def _disk_backed_shm(container) -> bool:
    """/dev/shm is mounted, but from a volume that is not memory-backed (an `emptyDir: {}` on disk)."""
    return any(m.mount_path == "/dev/shm" for m in container.volume_mounts)


def _shm_limit(template, container):
    """The sizeLimit node of the memory-backed emptyDir mounted at the container's /dev/shm; None when it is the
    node's (hostIPC), unbounded by the manifest, or not memory-backed."""
    memory = {v.name: v for v in template.volumes if v.medium == "Memory"}
    for mount in container.volume_mounts:
        volume = memory.get(mount.name) if mount.mount_path == "/dev/shm" else None
        if volume is not None and volume.size_limit_node is not None:
            return volume.size_limit_node
    return None


def _shm_bytes(template, container) -> int | None:
    node = _shm_limit(template, container)
    return quantity_int(node) if node is not None else None


def _unknown(container) -> bool:
    """A chart's pod whose volumes, mounts or IPC the values cannot tell (vllm.helm_pod)."""
    return any(unknown(container, part) for part in ("volumes", "volumeMounts", "hostIPC"))


def _offload_in_shm(ctx: Context, work, container):
    """vLLM 0.27+'s native CPU KV offload maps its whole buffer in /dev/shm (SharedOffloadRegion)."""
    if not kv_offload_in_shm(work):
        return
    size = kv_offload_bytes(work)
    if not size:
        return
    template = container.pod
    where = work.option_token("--kv-offloading-size") or work.invocation.anchor
    if _shm_provided(template, container):
        if container.is_compose:
            return
        host_ipc = template.spec.get("hostIPC")
        if isinstance(host_ipc, Scalar) and host_ipc.value is True:
            return  # the node's /dev/shm: its size is not in the manifest
        limit = _shm_bytes(template, container)
        if limit is None or limit >= size:
            return
        default = ", the chart's default" if chart_default(_shm_limit(template, container), container) else ""
        have = f"its memory-backed /dev/shm is capped at {gib1(limit)}"
        whence = f"{gib1(limit)} is the emptyDir's sizeLimit{default}; "
    else:
        have = ("its /dev/shm is not memory-backed" if not container.is_compose and _disk_backed_shm(container)
                else "it is the runtime's default 64 MB")
        whence = "it is mounted from a volume on disk; " if have.endswith("not memory-backed") else ""
    needed = f"{-(-size // 2**30) + 1}Gi"
    hint = chart_hint(container, "shm_size")
    fix = (f"{hint} to {needed} or more" if hint and _shm_limit(template, container) is not None
           else f"mount an `emptyDir: {{medium: Memory, sizeLimit: {needed}}}` at /dev/shm")
    # The first line (up to the `: `) is the buffer against /dev/shm; the file and the flag follow it.
    yield ctx.finding(where, f"vLLM {work.release or 'of this image'} keeps the {gib1(size)} CPU KV-cache offload "
                      f"buffer in /dev/shm, but {have}: {whence}the buffer is /dev/shm/vllm_offload_<id>.mmap "
                      f"(--kv-offloading-size, native backend), and start-up fails with a bus error or no space left "
                      f"on device when the ranks fill the mapping. Fix: {fix} and raise the memory limit by as much "
                      "(tmpfs pages count against it), or lower --kv-offloading-size.",
                      about=work.invocation, value=f"shm-offload:{size}")


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        container = work.pod_container  # a manifest's, or the pod a chart renders from its values
        if container is None or _unknown(container):
            continue
        yield from _offload_in_shm(ctx, work, container)
        if work.world_size <= 1:
            continue
        requested = work.gpu_resource
        if requested is not None and isinstance(requested[1], int) and requested[1] <= 1:
            continue  # one GPU in this pod: its ranks talk to other pods over the network, not /dev/shm
        if _shm_provided(container.pod, container):
            continue
        flag = "--tensor-parallel-size" if work.tensor_parallel_size > 1 else "--pipeline-parallel-size"
        where = work.option_token(flag) or work.invocation.anchor
        if container.is_compose:
            fix = "add `ipc: host` or `shm_size: 16gb` to the service"
        else:
            # A memory-backed emptyDir gives the pod its own /dev/shm, capped by sizeLimit and counted in its
            # memory; hostIPC shares the node's IPC namespace (every other pod's and the host's shared memory and
            # semaphores) and is what the Pod Security Standards' baseline forbids: not the fix to propose.
            fix = ("mount an `emptyDir: {medium: Memory, sizeLimit: 16Gi}` volume at /dev/shm (size it to the "
                   "workload; it counts against the pod's memory). Prefer it to `hostIPC: true`, which shares the "
                   "node's IPC namespace with the pod and weakens its isolation")
        disk = not container.is_compose and _disk_backed_shm(container)
        have = ("the container's /dev/shm is mounted from a volume that is not memory-backed" if disk
                else "the container has only the runtime's default 64 MB /dev/shm")
        memory = " Give the emptyDir `medium: Memory`." if disk else ""
        hint = chart_hint(container, "shm")
        if hint:
            fix = hint
        yield ctx.finding(where, f"TP {work.tensor_parallel_size} x PP {work.pipeline_parallel_size} workers need "
                          f"shared memory, but {have}. They exchange tensors through it (NCCL, PyTorch "
                          f"multiprocessing): expect NCCL errors or crashes under load.{memory} Fix: {fix}.",
                          about=work.invocation, value=f"shm:{work.world_size}")
