"""VL608: tensor or pipeline parallelism without a memory-backed /dev/shm."""
from vllmlint.capacity.lint import capacity_workloads
from vllmlint.source.yamlmodel import Scalar, scalar_str
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


def check(ctx: Context):
    for work in capacity_workloads(ctx.world):
        container = work.container
        if container is None or work.world_size <= 1:
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
        yield ctx.finding(where, f"TP {work.tensor_parallel_size} x PP {work.pipeline_parallel_size} workers need "
                          f"shared memory, but {have}. They exchange tensors through it (NCCL, PyTorch "
                          f"multiprocessing): expect NCCL errors or crashes under load.{memory} Fix: {fix}.",
                          about=work.invocation, value=f"shm:{work.world_size}")
