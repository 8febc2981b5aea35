"""Multi-node groups: the pods (or the commands of one script) that together form ONE vLLM server.

One typed extractor for every rule that asks "which pods are the ranks of one server" (VL807 autoscalers that
scale ranks, VL811 leader and workers that disagree):

- a LeaderWorkerSet with `leaderWorkerTemplate.size` >= 2 (the API default is 1): its leader template (or, when
  there is none, its worker template, which then makes the leader too) and its worker template
  (https://lws.sigs.k8s.io/docs/reference/leaderworkerset.v1/);
- a StatefulSet with two or more replicas whose vLLM passes `--nnodes` (not 1) or `--node-rank` (multi-node
  multiprocessing, vLLM 0.11.1+: vllm/engine/arg_utils.py of 0.11.1 lines 759-760): every pod is a rank;
- a Ray cluster (RayCluster, RayService, RayJob): the head group and the worker groups
  (https://docs.ray.io/en/latest/cluster/kubernetes/user-guides/config.html);
- a KServe InferenceService predictor or ServingRuntime with a `workerSpec` (multi-node serving,
  https://kserve.github.io/website/docs/model-serving/generative-inference/multi-node/);
- the `vllm serve` commands of one script or Markdown file that pass one `--nnodes` N >= 2 with literal
  `--node-rank` values and one `--master-addr`: the shape vLLM's own docs give for multi-node multiprocessing
  (docs/serving/parallelism_scaling.md of 0.29.0, "Running vLLM with MultiProcessing").

Members keep their role: the leader (node rank 0, the LWS leader, the Ray head), the workers, or "any" where one
template makes every pod (a StatefulSet, a LeaderWorkerSet without a leader template) so that a command's role
is only known at run time. A member's vLLM invocation is None where it runs `ray start` instead (Ray workers,
LWS workers of vLLM's `multi-node-serving.sh worker`).
"""
from __future__ import annotations

from vllmlint.records import dataclass, field
from typing import TYPE_CHECKING

from vllmlint.k8s.quantity import int_value
from vllmlint.source.yamlmodel import Mapping, Scalar

if TYPE_CHECKING:
    from vllmlint.k8s.objects import Container, K8sObject, PodTemplate, World
    from vllmlint.vllm.invocation import Invocation, Option

LEADER = "leader"
WORKER = "worker"
ANY = "any"  # one template makes the leader and the workers

LWS = "LeaderWorkerSet"
STATEFULSET = "StatefulSet"
RAY = "Ray"
KSERVE = "KServe"
SCRIPT = "script"

_RAY_KINDS = ("RayCluster", "RayService", "RayJob", "RayClusterFleet")
_KSERVE_KINDS = ("InferenceService", "ServingRuntime", "ClusterServingRuntime")
_SERVER_KINDS = ("serve", "openai-api-server")


@dataclass(eq=False)
class Member:
    """One kind of pod of a group (a template), or one command of a script."""

    role: str  # LEADER, WORKER or ANY
    template: PodTemplate | None
    container: Container | None  # the container that takes part (runs vLLM or Ray, or requests the GPUs)
    invocation: Invocation | None  # its vLLM server; None where it runs Ray (or nothing the run can see)

    @property
    def image(self) -> Scalar | None:
        return self.container.image if self.container is not None else None


@dataclass(eq=False)
class Group:
    kind: str  # LWS, STATEFULSET, RAY, KSERVE or SCRIPT
    owner: K8sObject | None  # None for a script
    members: list[Member] = field(default_factory=list)
    size: int | None = None  # nodes (pods) in one group, when the run says

    @property
    def leaders(self) -> list[Member]:
        return [m for m in self.members if m.role == LEADER]

    @property
    def workers(self) -> list[Member]:
        return [m for m in self.members if m.role == WORKER]

    def describe(self) -> str:
        if self.owner is not None:
            return f"{self.owner.kind} {self.owner.name}" if self.owner.name else self.owner.kind
        return "this script"


def lws_size(owner: K8sObject) -> int:
    """`spec.leaderWorkerTemplate.size` (pods per group, the API default 1); 0 when it is no number."""
    spec = owner.spec
    lwt = spec.get("leaderWorkerTemplate") if spec is not None else None
    node = lwt.get("size") if isinstance(lwt, Mapping) else None
    if node is None:
        return 1
    return int_value(node, minimum=1) or 0


def last_option(invocation: Invocation, *names: str) -> Option | None:
    found = invocation.option(*names)
    return found[-1] if found else None


def literal_int(option: Option | None) -> int | None:
    """The option's value as a whole number, when the manifest gives it literally."""
    if option is None or not option.value_known or option.value is None:
        return None
    text = option.value.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else None


def says_multi_node(invocation: Invocation) -> bool:
    """`--nnodes` other than a literal 1, or `--node-rank`: the invocation is one node of several."""
    nnodes = last_option(invocation, "--nnodes")
    if nnodes is not None and literal_int(nnodes) != 1:
        return True
    return bool(invocation.option("--node-rank"))


def _servers(invocations: list[Invocation]) -> list[Invocation]:
    return [i for i in invocations if i.kind in _SERVER_KINDS]


def _main_container(template: PodTemplate, running: list[Invocation], first: bool = False) -> Container | None:
    """The container that takes part: the one running vLLM, else the one requesting an accelerator, else (Ray,
    KServe workers: the first container is the node's) the first app container."""
    if running and running[0].container is not None:
        return running[0].container
    from vllmlint.capacity.workload import requested_accelerator

    containers = [c for c in template.containers if not c.init]
    for container in containers:
        request = requested_accelerator(container)
        if request is not None and request[1] >= 1:
            return container
    return containers[0] if containers and (first or len(containers) == 1) else None


def _member(template: PodTemplate, role: str, by_template: dict, first: bool = False) -> Member:
    running = _servers(by_template.get(template, []))
    container = _main_container(template, running, first)
    mine = [i for i in running if i.container is container] if container is not None else []
    # One script for both roles (`if [ "$LWS_WORKER_INDEX" = 0 ]; then ... else ... --headless; fi`): each role
    # takes the branch that is its own.
    preferred = [i for i in mine if _rank_role(i) == role] if len(mine) > 1 else []
    chosen = preferred or mine
    invocation = chosen[0] if chosen else None
    return Member(role, template, container, invocation)


def _lws_group(world: World, owner: K8sObject, by_template: dict) -> Group | None:
    size = lws_size(owner)
    if size < 2:
        return None
    templates = world.templates_of(owner)
    roles = {t.role for t in templates}
    group = Group(LWS, owner, size=size)
    for template in templates:
        role = template.role if "leader" in roles else ANY  # no leaderTemplate: the worker template makes both
        group.members.append(_member(template, LEADER if role == "leader" else WORKER if role == "worker" else ANY,
                                     by_template))
    return group


def _rank_role(invocation: Invocation) -> str:
    if invocation.option("--headless"):
        return WORKER
    rank = literal_int(last_option(invocation, "--node-rank"))
    if rank is None:
        return ANY
    return LEADER if rank == 0 else WORKER


def _more_ranks_than_gpus(invocation: Invocation) -> bool:
    """TP x PP (both literal) above the accelerators the pod's container requests: the ranks span pods (the
    criterion VL713 uses for StatefulSets)."""
    from vllmlint.capacity.workload import requested_accelerator

    container = invocation.container
    request = requested_accelerator(container) if container is not None else None
    if request is None or request[1] < 1:
        return False
    size = 1
    for flag in ("--tensor-parallel-size", "--pipeline-parallel-size"):
        option = last_option(invocation, flag)
        if option is not None:
            value = literal_int(option)
            if value is None:
                return False
            size *= value
    return size > request[1]


def _statefulset_group(world: World, owner: K8sObject, by_template: dict) -> Group | None:
    replicas = owner.replicas
    if replicas is None or replicas.value < 2:
        return None
    group = Group(STATEFULSET, owner, size=replicas.value)
    for template in world.templates_of(owner):
        for invocation in _servers(by_template.get(template, [])):
            if says_multi_node(invocation) or _more_ranks_than_gpus(invocation):
                group.members.append(Member(_rank_role(invocation), template, invocation.container, invocation))
    return group if group.members else None


def _ray_group(world: World, owner: K8sObject, by_template: dict) -> Group | None:
    templates = [t for t in world.templates_of(owner) if t.role != "submitter"]
    if len(templates) < 2:
        return None
    group = Group(RAY, owner)
    for template in templates:
        group.members.append(_member(template, LEADER if template.role == "head" else WORKER, by_template, True))
    return group


def _kserve_group(world: World, owner: K8sObject, by_template: dict) -> Group | None:
    templates = world.templates_of(owner)
    workers = [t for t in templates if t.role == "worker" or t.role.endswith("-worker")]
    if not workers:
        return None
    group = Group(KSERVE, owner)
    for worker in workers:
        head_role = "runtime" if worker.role == "worker" else worker.role[:-len("-worker")]
        head = next((t for t in templates if t.role == head_role), None)
        if head is not None and not any(m.template is head for m in group.members):
            group.members.append(_member(head, LEADER, by_template, True))
        group.members.append(_member(worker, WORKER, by_template, True))
    return group if group.leaders else None


def _master(invocation: Invocation) -> str | None:
    option = last_option(invocation, "--master-addr")
    if option is None:
        return ""
    return option.value if option.value_known else None


def _script_groups(world: World) -> list[Group]:
    """`vllm serve` commands of one file with one `--nnodes` N >= 2, one `--master-addr` and literal, distinct
    `--node-rank` values, one of them 0."""
    keyed: dict[tuple, list[tuple[int, Invocation]]] = {}
    for invocation in world.invocations:
        if invocation.container is not None or invocation.kind not in _SERVER_KINDS:
            continue
        source = invocation.source
        nnodes = literal_int(last_option(invocation, "--nnodes"))
        rank = literal_int(last_option(invocation, "--node-rank"))
        master = _master(invocation)
        if source is None or nnodes is None or nnodes < 2 or rank is None or master is None:
            continue
        keyed.setdefault((id(source), nnodes, master), []).append((rank, invocation))
    groups = []
    for (_, nnodes, _), found in keyed.items():
        ranks = [rank for rank, _ in found]
        if len(set(ranks)) != len(ranks) or 0 not in ranks or len(found) < 2 or max(ranks) >= nnodes:
            continue  # several examples in one file, or a partial one: not one group
        group = Group(SCRIPT, None, size=nnodes)
        for rank, invocation in sorted(found, key=lambda pair: pair[0]):
            group.members.append(Member(LEADER if rank == 0 else WORKER, None, None, invocation))
        groups.append(group)
    return groups


def multinode_groups(world: World) -> list[Group]:
    """Every multi-node group of the run (computed once per world)."""
    return world.fact(_multinode_groups)


def _multinode_groups(world: World) -> list[Group]:
    by_template = world.vllm_templates()
    result: list[Group] = []
    for owner in world.objects:
        group: Group | None = None
        if owner.kind == LWS:
            group = _lws_group(world, owner, by_template)
        elif owner.kind == STATEFULSET:
            group = _statefulset_group(world, owner, by_template)
        elif owner.kind in _RAY_KINDS:
            group = _ray_group(world, owner, by_template)
        elif owner.kind in _KSERVE_KINDS:
            group = _kserve_group(world, owner, by_template)
        if group is not None:
            result.append(group)
    result.extend(_script_groups(world))
    return result


def group_of(world: World, owner: K8sObject) -> Group | None:
    """The multi-node group an object (a scale target) is, if any."""
    return next((g for g in multinode_groups(world) if g.owner is owner), None)


__all__ = ["LEADER", "WORKER", "ANY", "LWS", "STATEFULSET", "RAY", "KSERVE", "SCRIPT", "Member", "Group",
           "lws_size", "last_option", "literal_int", "says_multi_node", "multinode_groups", "group_of"]
