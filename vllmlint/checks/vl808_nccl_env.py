"""VL808: NCCL-related environment variables in a vLLM container that nothing reads, that vLLM deletes, that
PyTorch renamed, or that configure NCCL's InfiniBand transport on EFA.

The known names are `data/nccl-env.yaml` (`vllmlint.vllm.nccl_env`): every variable NCCL v2.18-v2.30 reads
(from its source), PyTorch's TORCH_NCCL_* and the NCCL_* names it renamed in torch 2.2.0, aws-ofi-nccl's
OFI_NCCL_*, the IB SHARP plugin's and GKE's GPUDirect-TCPX/TCPXO plugins' names. vLLM's GPU worker deletes
NCCL_ASYNC_ERROR_HANDLING from its environment before it initialises torch.distributed (0.29.0
vllm/v1/worker/gpu_worker.py:351, every release read). NCCL's IB transport opens only ports with an
InfiniBand or Ethernet link layer (src/transport/net_ib/init.cc:364 at v2.30.7-1): EFA is neither, and NCCL
reaches it only through the aws-ofi-nccl plugin; whether an instance type has EFA is
data/capacity/instance-types.yaml `efa`.
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.capacity.remote_code import release_image
from vllmlint.capacity.specs import efa_support
from vllmlint.capacity.workload import workloads_by
from vllmlint.checks import Context
from vllmlint.checks.messages import version_label
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.pod import CONFIG_MAP
from vllmlint.source.yamlmodel import Mapping, Node
from vllmlint.vllm import nccl_env
from vllmlint.k8s.quantity import quantity_int

# Near misses: a name this many edits (insert, delete, replace) from a known one of the same prefix.
_MAX_EDITS = 2
_MIN_LENGTH = 10  # shorter names are too close to each other to call one a typo of another

_READER_WORDS = {"nccl": "NCCL", "pytorch": "PyTorch", "aws-ofi-nccl": "the aws-ofi-nccl plugin (EFA)",
                 "nccl-rdma-sharp-plugins": "NVIDIA's IB SHARP plugin",
                 "gke-gpudirect-tcpx": "GKE's GPUDirect-TCPX plugin", "gke-gpudirect-tcpxo": "GKE's GPUDirect-TCPXO plugin"}


def _edits(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, or limit + 1 once it is certain to exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def _near_misses(name: str, prefix: str, known: dict[str, nccl_env.NcclVariable]) -> list[str]:
    if len(name) < _MIN_LENGTH:
        return []
    scored = [(_edits(name, other, _MAX_EDITS), other) for other in known if other.startswith(prefix)]
    best = min((score for score, _ in scored), default=_MAX_EDITS + 1)
    return sorted(other for score, other in scored if score == best and score <= _MAX_EDITS)


def _prefix(name: str) -> str | None:
    """The longest checked prefix the name starts with (TORCH_NCCL_ before NCCL_)."""
    matches = [p for p in nccl_env.checked_prefixes() if name.startswith(p)]
    return max(matches, key=len) if matches else None


def _where(var) -> Node:
    """The `name` of a Kubernetes env entry; the envFrom entry for a ConfigMap's key (the finding stays in
    the workload's file); the Compose entry."""
    if isinstance(var.node, Mapping):
        key = var.node.get("name")
        if key is not None:
            return key
    return var.node


def _from(var) -> str:
    return f" (from ConfigMap {var.ref_name}, key {var.ref_key})" if var.origin == CONFIG_MAP and var.ref_name else ""


def _containers(world) -> Iterator[tuple]:
    """(container, invocation) of every vLLM container, once each."""
    seen: set[int] = set()
    for invocation in world.invocations:
        container = invocation.container
        if container is None or id(container) in seen:
            continue
        seen.add(id(container))
        yield container, invocation


def _efa_requested(container) -> Node | None:
    """The `vpc.amazonaws.com/efa` request or limit of the container (at least 1), if any."""
    resources = container.resources
    for section in (resources.limits, resources.requests):
        value = section.get(nccl_env.efa_resource())
        if value is not None:
            count = quantity_int(value.node)
            if count is not None and count >= 1:
                return value.node
    return None


def _aws_landings(world, container) -> list[tuple[str, bool]] | None:
    """(instance type, has EFA) of every place the pod can land, when each is an AWS type whose EFA support
    the catalog knows; None otherwise (no placement known, a GPU label without an instance type, another
    provider)."""
    for work in workloads_by(world, "container").get(id(container), [])[:1]:
        places = work.hosting_landings()
        if not places:
            return None
        result = []
        for place in places:
            kind = place.candidate.instance_type
            efa = efa_support(kind) if kind else None
            if efa is None or kind is None:
                return None
            result.append((kind, efa))
        return sorted(set(result))
    return None


def check(ctx: Context) -> Iterator[Finding | None]:
    names = nccl_env.known_names()  # the table itself is built at the first variable it may describe
    for container, invocation in _containers(ctx.world):
        variables = container.resolved_env(ctx.world)
        release = invocation.release or invocation.catalog.version
        label = version_label(invocation)
        placement: list | None | bool = False  # computed once, on the first IB variable
        for var in variables:
            name = var.name
            prefix = _prefix(name)
            if name not in names and prefix is None:
                continue
            known = nccl_env.known_variables()
            row = known.get(name)
            where = _where(var)
            removal = nccl_env.removed_by_vllm(name)
            if removal is not None and removal.applies(release):
                yield _removed(ctx, container, var, where, row, removal, release, label)
                continue
            if row is None:
                yield _unknown(ctx, container, var, where, prefix or "", known)
                continue
            if row.renamed_to:
                yield ctx.finding(where, f"`{name}`{_from(var)} is PyTorch's old name for `{row.renamed_to}` "
                                  f"(renamed in torch {row.renamed_in}{_torch(release, label, '; ')}): it still works, "
                                  f"with a deprecation warning at start-up. Rename it to `{row.renamed_to}`.",
                                  about=container, value=name, severity=min(ctx.severity, Severity.INFO))
                continue
            if row.removed or row.deprecated:
                # aws-ofi-nccl v1.21.1: a removed parameter set in the environment makes its initialize() return
                # -EINVAL (include/nccl_ofi_param_impl.h:328-343), and ofi_nccl_parameters_init() fails the
                # plugin's init with it (src/nccl_ofi_api.cpp:70-72). Info: whether the image has that plugin,
                # and which version, is not in the run.
                what = ("is removed: the plugin's initialisation fails when it is set, so NCCL cannot use the "
                        "plugin" if row.removed else "is deprecated: the plugin warns about it at start-up")
                yield ctx.finding(where, f"`{name}`{_from(var)} {what} ({_READER_WORDS[row.reader]}, {row.source}). "
                                  "Delete it; the plugin's log names the replacement.",
                                  about=container, value=name, severity=min(ctx.severity, Severity.INFO))
                continue
            outside = _outside_shipped_nccl(row, invocation, variables)
            if outside:
                yield ctx.finding(where, f"`{name}`{_from(var)} {outside}. Delete it (or use the NCCL that reads "
                                  "it, through VLLM_NCCL_SO_PATH).", about=container, value=name,
                                  severity=min(ctx.severity, Severity.INFO))
                continue
            if row.ib_transport:
                if name == "NCCL_IB_DISABLE" and (var.value is None or var.value.strip() == "1"):
                    continue  # turning the IB transport off is consistent with EFA; an unknown value is not judged
                if placement is False:
                    placement = _aws_landings(ctx.world, container)
                finding = _ib_on_aws(ctx, container, var, where, _efa_requested(container), placement)
                if finding is not None:
                    yield finding


def _outside_shipped_nccl(row, invocation, variables) -> str:
    """Why the NCCL that vLLM's own image for this release loads does not read an NCCL variable, or "".

    Judged only for the CUDA image published with the release (its torch pins one nvidia-nccl wheel) and
    without VLLM_NCCL_SO_PATH (which loads another libnccl); at the granularity of NCCL minor releases, since
    the table was read at the last patch release of each minor."""
    if row.reader != "nccl" or not row.first or not release_image(invocation):
        return ""
    if any(v.name == "VLLM_NCCL_SO_PATH" for v in variables):
        return ""
    release = invocation.release or ""
    shipped = nccl_env.shipped_nccl(release)
    if shipped is None:
        return ""
    pin = nccl_env.torch_pin(release)
    torch = f", with torch {pin[0]}" if pin else ""
    if nccl_env.tag_minor(shipped) < nccl_env.tag_minor(row.first):
        since = "%d.%d" % nccl_env.tag_minor(row.first)
        return (f"is read by NCCL {since} and later only ({row.source}), and vLLM {release}'s image loads NCCL "
                f"{shipped}{torch}: it has no effect there")
    if row.last and nccl_env.tag_minor(shipped) > nccl_env.tag_minor(row.last):
        until = "%d.%d" % nccl_env.tag_minor(row.last)
        return (f"was last read by NCCL {until} ({row.source}), and vLLM {release}'s image loads NCCL "
                f"{shipped}{torch}: it has no effect there")
    return ""


def _torch(release: str, label: str, lead: str) -> str:
    """"<lead>vLLM 0.29.0 pins torch 2.13.0" when the table knows the release's torch, else ""."""
    pin = nccl_env.torch_pin(release)
    return f"{lead}vLLM {label} pins torch {pin[0]}" if pin else ""


def _removed(ctx, container, var, where, row, removal, release, label):
    new = row.renamed_to if row is not None and row.renamed_to else None
    pin = _torch(release, label, "")
    instead = (f" PyTorch reads `{new}` since torch {row.renamed_in}{f' ({pin})' if pin else ''}, and its default, 3, "
               f"already tears the process down on an NCCL error. Delete it, or set `{new}` for another mode."
               if new and row is not None else " Delete it.")
    return ctx.finding(where, f"`{var.name}`{_from(var)} has no effect: vLLM {label}'s GPU worker deletes it from its "
                       "environment before it starts torch.distributed "
                       f"({removal.source_for(release).removeprefix('vllm ')}).{instead}",
                       about=container, value=var.name)


def _unknown(ctx, container, var, where, prefix, known):
    near = _near_misses(var.name, prefix, known)
    if near:
        names = " or ".join(f"`{n}` (read by {_READER_WORDS[known[n].reader]})" for n in near)
        return ctx.finding(where, f"`{var.name}`{_from(var)} is read by nothing vllmlint knows: did you mean {names}? "
                           "As written it is silently ignored.", about=container, value=var.name,
                           severity=min(ctx.severity, Severity.WARNING))
    # The problem and the fix on the first line (up to the first `: `); the libraries looked at follow.
    return ctx.finding(where, f"`{var.name}`{_from(var)} is read by nothing vllmlint knows: check the name against "
                       "the documentation of what should read it, or delete it. It is not read by NCCL (2.18 to "
                       "2.30), PyTorch, aws-ofi-nccl, NVIDIA's IB SHARP plugin or GKE's TCPX/TCPXO plugins "
                       "(data/nccl-env.yaml), so it has no effect unless another library in the image reads it.", about=container, value=var.name,
                       severity=min(ctx.severity, Severity.INFO))


def _ib_on_aws(ctx, container, var, where, efa_node, places):
    what = ("it configures NCCL's InfiniBand/RoCE transport, which opens only InfiniBand or Ethernet (RoCE) verbs "
            "ports")
    efa_way = ("NCCL reaches EFA only through the aws-ofi-nccl network plugin (libfabric's `efa` provider, "
               "`FI_PROVIDER=efa`, `OFI_NCCL_*`/`FI_EFA_*` variables)")
    if efa_node is not None:
        return ctx.finding(where, f"`{var.name}`{_from(var)} does nothing in a container that uses EFA (it requests "
                           f"`{nccl_env.efa_resource()}`): {what}, and EFA's port is neither (its link layer is "
                           f"unspecified), so NCCL's IB transport skips it. {efa_way[0].upper()}{efa_way[1:]}. Delete "
                           "it, and use an image with aws-ofi-nccl for EFA.",
                           about=container, value=f"{var.name}:efa")
    if not places:
        return None
    with_efa = [kind for kind, efa in places if efa]
    without = [kind for kind, efa in places if not efa]
    parts = []
    if with_efa:
        parts.append(f"{', '.join(with_efa)} {'has' if len(with_efa) == 1 else 'have'} EFA, which is no such port "
                     f"({efa_way}; and this container requests no `{nccl_env.efa_resource()}`)")
    if without:
        parts.append(f"{', '.join(without)} {'has' if len(without) == 1 else 'have'} no EFA, and EC2 has no "
                     "InfiniBand or RoCE adapter: NCCL uses TCP sockets between nodes")
    return ctx.finding(where, f"`{var.name}`{_from(var)} does nothing on the AWS instance types this pod lands on: "
                       f"{what}. {'; '.join(parts)}. Delete it.", about=container,
                       value=f"{var.name}:aws", severity=min(ctx.severity, Severity.INFO))

