"""VL810: a vLLM pod that falls short of the audited chapter's security baseline.

The baseline is data (`data/pod-hardening.yaml`, from the audited single-GPU Deployment): an explicit non-root
`runAsUser`, `allowPrivilegeEscalation: false`, `capabilities.drop: [ALL]`, a confining `seccompProfile` and
`automountServiceAccountToken: false`. Missing settings are one info finding per vLLM container; a setting
written the unsafe way is a finding at its node: `privileged: true` and an added SYS_ADMIN (or ALL) are
warnings, the rest info. IPC_LOCK is fine on a pod that requests an RDMA device. Settings that OpenShift's
restricted-v2 SCC fills in are not asked for in a run that targets OpenShift, and the service-account token is
not asked to be turned off on a KubeRay head whose in-tree autoscaler uses it.

What it never advises, unlike generic linters: `runAsNonRoot: true` alone on a root image (VL703 reports that
the kubelet then refuses the container), a read-only root filesystem without cache volumes, probes, replica
floors or CPU limits.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterator

from vllmlint.checks import Context
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.objects import Container, PodTemplate, World, targets_openshift
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, scalar_str
from vllmlint.vllm.images import image_builds
from vllmlint.vllm.invocation import Invocation


@lru_cache(maxsize=1)
def _data() -> dict:
    from vllmlint.data import knowledge_dir, load_yaml_data

    return load_yaml_data(knowledge_dir() / "pod-hardening.yaml") or {}


def _wants() -> dict[str, str]:
    return {row["setting"]: row["want"] for row in _data().get("baseline", ())}


def _capability(name: str) -> str:
    """`CAP_SYS_ADMIN` and `sys_admin` name the same capability as `SYS_ADMIN` (container runtimes accept both)."""
    name = name.strip().upper()
    return name[4:] if name.startswith("CAP_") else name


def _uses_rdma(container: Container) -> bool:
    rdma = _data().get("rdma") or {}
    prefixes = [row["prefix"] for row in rdma.get("resource_prefixes", ())]
    words = [row["word"] for row in rdma.get("resource_words", ())]
    resources = container.resources
    for name in list(resources.requests) + list(resources.limits):
        lowered = name.lower()
        if any(lowered.startswith(p) for p in prefixes) or "/" in lowered and any(
                w in lowered.split("/", 1)[1] for w in words):
            return True
    return False


def _invocations(world: World) -> Iterator[Invocation]:
    """The first vLLM invocation of each Kubernetes container."""
    seen: set[int] = set()
    for invocation in world.invocations:
        container = invocation.container
        if container is None or container.is_compose or container.init or id(container) in seen:
            continue  # Compose services: Docker's own settings (cap_add, security_opt), not judged
        seen.add(id(container))
        yield invocation


def check(ctx: Context) -> Iterator[Finding | None]:
    for invocation in _invocations(ctx.world):
        assert invocation.container is not None
        openshift = targets_openshift(ctx.world, invocation.container.pod.owner)
        yield from _container(ctx, invocation, openshift)


def _warning(ctx: Context) -> Severity:
    """Warning, or the rule's severity when the user set it higher (or lower than its default)."""
    return max(Severity.WARNING, ctx.severity) if ctx.severity >= ctx.rule.severity else ctx.severity


def _container(ctx: Context, invocation: Invocation, openshift: bool) -> Iterator[Finding | None]:
    container = invocation.container
    assert container is not None
    context = container.security_context
    pod = container.pod
    missing: list[str] = []

    privileged = context.node("privileged")
    if context.privileged is True and privileged is not None:
        yield ctx.finding(privileged, "`privileged: true` on a vLLM container gives it every device and capability of "
                          "the node: the GPU device plugin already gives the container its GPUs. Remove it; for "
                          "RDMA request the device plugin's resource and add only `IPC_LOCK`.",
                          about=container, value="privileged", severity=_warning(ctx))

    dangerous = {row["name"] for row in _data().get("dangerous_capabilities", ())}
    rdma_caps = {row["name"] for row in (_data().get("rdma") or {}).get("capabilities", ())}
    for name, node in context.capabilities("add"):
        cap = _capability(name)
        if cap in dangerous:
            yield ctx.finding(node, f"Capability `{name}` added to a vLLM container: it is root-equivalent (the kubelet "
                              "also forces privilege escalation on with it) and vLLM needs none. Remove it; for RDMA "
                              "add only `IPC_LOCK`.", about=container, value=f"add:{cap}", severity=_warning(ctx))
        elif cap in rdma_caps and _uses_rdma(container):
            continue  # pinning memory registered with the RDMA NIC
        elif cap:
            why = " without an RDMA device resource" if cap in rdma_caps else ""
            yield ctx.finding(node, f"Capability `{name}` added to a vLLM container{why}: vLLM needs no added "
                              "capability (IPC_LOCK only with an RDMA device). Remove it and keep `drop: [ALL]`.",
                              about=container, value=f"add:{cap}")

    escalation = context.node("allowPrivilegeEscalation")
    if context.allow_privilege_escalation is True and escalation is not None and context.privileged is not True:
        yield ctx.finding(escalation, "`allowPrivilegeEscalation: true` lets a process of the vLLM container gain more "
                          "privileges than its parent (setuid binaries): set it to `false`.",
                          about=container, value="allowPrivilegeEscalation:true")
    elif context.allow_privilege_escalation is None and not (openshift and _platform("allowPrivilegeEscalation")):
        missing.append("allowPrivilegeEscalation")

    if not any(_capability(name) == "ALL" for name, _ in context.capabilities("drop")) \
            and not (openshift and _platform("capabilities")):
        missing.append("capabilities")

    seccomp_node = context.node("seccompProfile")
    seccomp = _seccomp_type(seccomp_node)
    if seccomp == "Unconfined" and seccomp_node is not None:
        yield ctx.finding(seccomp_node, "`seccompProfile: Unconfined` turns off the system-call "
                          "filter for the vLLM container: use `type: RuntimeDefault`.",
                          about=container, value="seccompProfile:Unconfined")
    elif seccomp is None and not (openshift and _platform("seccompProfile")):
        missing.append("seccompProfile")

    uid = context.run_as_user
    uid_node = context.node("runAsUser")
    if uid == 0 and uid_node is not None and context.run_as_non_root is not True:
        yield ctx.finding(uid_node, "`runAsUser: 0` runs vLLM as root. Run it as a non-root uid (with `runAsGroup` "
                          "and `fsGroup`) and give it a writable HOME or cache volume (VL703 checks them).",
                          about=container, value="runAsUser:0")
    elif uid_node is None and not (openshift and _platform("runAsUser")):
        missing.append("runAsUser:root" if _image_runs_as_root(invocation) else "runAsUser")

    if _token_mounted(pod, ctx.world):
        missing.append("automountServiceAccountToken")

    if missing:
        yield _missing(ctx, container, missing)


def _platform(setting: str) -> bool:
    """OpenShift's restricted-v2 SCC sets this one for every pod it admits."""
    return setting in (_data().get("openshift_defaults") or ())


def _seccomp_type(node: Node | None) -> str | None:
    if not isinstance(node, Mapping):
        return None
    return scalar_str(node.get("type"))


def _image_runs_as_root(invocation: Invocation) -> bool:
    """The image table (`builds`: the Dockerfile's USER) says every build the image may be runs as root."""
    if invocation.image is None:
        return False
    release = invocation.release if invocation.release_origin != "--vllm-version" else None
    builds = image_builds(invocation.image, release)
    return bool(builds) and all(b.user == 0 for b in builds)


def _token_mounted(pod: PodTemplate, world: World) -> bool:
    """Whether the pod gets a service-account token: its own `automountServiceAccountToken` wins, else its
    ServiceAccount's when the run holds it, else the API's default (mounted). A KubeRay head with the in-tree
    autoscaler needs it (the autoscaler sidecar calls the API)."""
    own = pod.spec.get("automountServiceAccountToken")
    if isinstance(own, Scalar) and isinstance(own.value, bool):
        return own.value
    if pod.role == "head" and _ray_autoscaling(pod):
        return False
    name = scalar_str(pod.spec.get("serviceAccountName")) or scalar_str(pod.spec.get("serviceAccount")) or "default"
    account = world.find("ServiceAccount", name, pod.namespace)
    if account is not None:
        setting = account.node.get("automountServiceAccountToken")
        if isinstance(setting, Scalar) and isinstance(setting.value, bool):
            return setting.value
    return True


def _ray_autoscaling(pod: PodTemplate) -> bool:
    spec = pod.owner.spec
    for cluster in (spec, spec.get("rayClusterConfig") if spec else None, spec.get("rayClusterSpec") if spec else None):
        if isinstance(cluster, Mapping):
            value = cluster.get("enableInTreeAutoscaling")
            if isinstance(value, Scalar) and value.value is True:
                return True
    return False


def _missing(ctx: Context, container: Container, missing: list[str]) -> Finding | None:
    wants = _wants()
    items = [wants["runAsUser"].split(" (")[0] + " (the image runs as root)" if setting == "runAsUser:root"
             else wants[setting] for setting in missing]
    count = f"{len(items)} settings" if len(items) > 1 else "a setting"
    # At the container's `securityContext` key when it has one, else at its name.
    where = container.node.key_node("securityContext") or container.node.get("name") or container.node
    return ctx.finding(where, f"vLLM container `{container.label}` lacks {count} of the hardening baseline. Set "
                       + ", ".join(items) + "; give `runAsUser` a `runAsGroup`, an `fsGroup` and a writable HOME or "
                       "cache volume (never `runAsNonRoot: true` alone on a root image).", about=container,
                       value="missing:" + ",".join(s.split(":")[0] for s in missing))
