"""VL811: the leader and the workers of one multi-node vLLM server disagree.

The groups come from `vllmlint.vllm.groups` (LeaderWorkerSet leader/worker templates, StatefulSet ranks, Ray head
and worker groups, KServe `workerSpec`, the multi-node commands of one script). Three checks:

1. Image: every node of one server runs the same vLLM build. LWS, StatefulSet, KServe and script groups: the
   image references differ (registry `docker.io` and tag `latest` normalised). Ray groups: only when both images
   carry vLLM releases that differ (a Ray cluster may mix `-gpu` and CPU variants of one Ray image on purpose).
2. Options, compared only where the leader's and a worker's `vllm serve` both give them with a literal value
   (Ray workers run `ray start`: nothing to compare): the model, `--revision`, `--tensor-parallel-size`,
   `--pipeline-parallel-size`, `--nnodes`, `--max-model-len`, `--dtype`. Every rank builds the engine from its
   own arguments; vLLM's multiprocessing executor splits `world_size` by `nnodes` on each node (0.29.0
   vllm/config/parallel.py:742-756, `nnodes_within_dp`, `local_world_size`), so ranks that disagree build
   process groups of different sizes and wait for each other forever, or load different weights.
3. `--headless`: with multi-node multiprocessing (`--nnodes`, 0.11.1+), the nodes other than rank 0 run
   `--headless`: `vllm serve` without it starts an API server and an engine client on that node; with it,
   `run_headless` starts only the node's workers ("Run headless workers (for multi-node PP/TP)", 0.11.1
   vllm/entrypoints/cli/serve.py:114-127; 0.29.0 vllm/entrypoints/cli/serve.py:211-218), as vLLM's docs
   show (0.29.0 docs/serving/parallelism_scaling.md:150-159, docs/deployment/frameworks/lws.md:75).
   Whether the release has both options is read from its catalog. Data-parallel deployments (any
   `--data-parallel*` option) are left alone: their load-balancing modes decide which nodes serve the API.
4. A Hugging Face model id without `--revision` in a group: info. Each node downloads the weights itself and
   resolves the branch at its own start; a push to the repository between two nodes' starts gives them
   different snapshots.
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.checks import Context
from vllmlint.finding import Finding, Severity
from vllmlint.vllm.groups import ANY, LEADER, RAY, WORKER, Group, Member, last_option, multinode_groups
from vllmlint.vllm.images import parse_image
from vllmlint.vllm.invocation import Invocation, Option, Token
from vllmlint.vllm.release import release_from_tag

# The options every rank must agree on (as the release's parser names them).
_COMPARED = ("--revision", "--tensor-parallel-size", "--pipeline-parallel-size", "--nnodes", "--max-model-len",
             "--dtype")
_INTEGERS = ("--tensor-parallel-size", "--pipeline-parallel-size", "--nnodes", "--max-model-len")
# vLLM's dtype aliases: "half" is float16, "float" float32 (_STR_DTYPE_TO_TORCH_DTYPE, 0.29.0
# vllm/config/model.py; the same table since 0.6.2 vllm/config.py).
_DTYPE_ALIASES = {"half": "float16", "float": "float32"}


def check(ctx: Context) -> Iterator[Finding | None]:
    for group in multinode_groups(ctx.world):
        leaders = group.leaders
        leader = leaders[0] if len(leaders) == 1 else None
        if leader is not None:
            for worker in group.workers:
                yield from _image(ctx, group, leader, worker)
                if leader.invocation is not None and worker.invocation is not None:
                    yield from _options(ctx, group, leader.invocation, worker.invocation)
        yield from _headless(ctx, group)
        yield from _revision(ctx, group)


# --- 1. images ------------------------------------------------------------------------------------------
def _image_key(text: str) -> tuple | None:
    if "$" in text or "{" in text:
        return None
    ref = parse_image(text)
    if ref is None:
        return None
    registry = "" if ref.registry in ("docker.io", "index.docker.io", "registry-1.docker.io") else ref.registry
    return registry, ref.repository, ref.tag or ("" if ref.digest else "latest"), ref.digest or ""


def _image(ctx: Context, group: Group, leader: Member, worker: Member) -> Iterator[Finding | None]:
    ours, theirs = worker.image, leader.image
    if ours is None or theirs is None or not isinstance(ours.value, str) or not isinstance(theirs.value, str):
        return
    a, b = _image_key(ours.value), _image_key(theirs.value)
    if a is None or b is None or a == b:
        return
    if group.kind == RAY:
        ra, rb = release_from_tag(a[2]), release_from_tag(b[2])
        if not (_vllm_image(ours.value) and _vllm_image(theirs.value)) or ra is None or rb is None or ra == rb:
            return
    # The problem and the fix first (the first line ends at the first `: `); the server and images follow.
    yield ctx.finding(ours, f"The {_role(group, worker)} and the {_role(group, leader)} run different images: use one "
                      "image, pinned (a tag or digest), for the leader and the workers. The "
                      f"{_role(group, worker)} of the multi-node vLLM server {group.describe()} runs image "
                      f"`{ours.value}`, the {_role(group, leader)} `{theirs.value}`: every node of one server must run "
                      "the same vLLM build (the ranks exchange tensors and engine state, and a different vLLM, "
                      "PyTorch or NCCL on one node makes the group fail to form or crash).",
                      about=worker.container, value=f"image:{ours.value}!={theirs.value}")


def _vllm_image(text: str) -> bool:
    ref = parse_image(text)
    return ref is not None and "vllm" in ref.repository.lower()


def _role(group: Group, member: Member) -> str:
    if group.kind == RAY:
        return "Ray head" if member.role == LEADER else f"Ray worker group `{member.template.role}`" \
            if member.template is not None else "Ray worker group"
    if member.role == LEADER:
        return "leader" if member.template is not None else "node-rank 0 command"
    if member.invocation is not None and member.template is None:
        rank = last_option(member.invocation, "--node-rank")
        return f"node-rank {rank.value} command" if rank is not None else "worker command"
    return "worker template" if group.kind != "KServe" else "workerSpec"


# --- 2. options -----------------------------------------------------------------------------------------
def _normalised(flag: str, option: Option) -> str | None:
    if not option.value_known or option.value is None:
        return None
    text = option.value.strip()
    if flag in _INTEGERS:
        from vllmlint.capacity.workload import human_int

        number = human_int(text)
        return str(number) if number is not None else None
    if flag == "--dtype":
        text = text.lower()
        return _DTYPE_ALIASES.get(text, text)
    return text


def _model(invocation: Invocation) -> tuple[str, Token] | None:
    token = invocation.model
    if token is None or token.dynamic:
        return None
    text = token.text.split("=", 1)[1] if token.text.startswith("--model=") else token.text
    return text, token


def _options(ctx: Context, group: Group, leader: Invocation, worker: Invocation) -> Iterator[Finding | None]:
    ours, theirs = _model(worker), _model(leader)
    if ours is not None and theirs is not None and ours[0] != theirs[0]:
        yield ctx.finding(ours[1], "This worker and the leader serve different models: give the workers the leader's "
                          f"model. This worker of the multi-node vLLM server {group.describe()} serves model "
                          f"`{ours[0]}`, the leader `{theirs[0]}`: every rank loads its shard of one model, so "
                          "the group either fails to start or serves garbage.",
                          about=worker, value=f"model:{ours[0]}!={theirs[0]}")
    for flag in _COMPARED:
        mine, other = last_option(worker, flag), last_option(leader, flag)
        if mine is None or other is None:
            continue
        a, b = _normalised(flag, mine), _normalised(flag, other)
        if a is None or b is None or a == b:
            continue
        where = mine.value_token or mine.token
        yield ctx.finding(where, f"This worker and the leader disagree on `{flag}`: pass the leader's `{flag} "
                          f"{other.value}` on every node. This worker of the multi-node vLLM server "
                          f"{group.describe()} passes `{flag} {mine.value}`, the leader `{flag} {other.value}`: every "
                          "rank builds the engine from its own arguments, so ranks that disagree on the model's "
                          "shape, length or type build process groups that never match (the server hangs at "
                          "start-up or fails).", about=worker,
                          value=f"{flag}:{a}!={b}")


# --- 3. --headless --------------------------------------------------------------------------------------
def _has_option(invocation: Invocation, flag: str) -> bool:
    catalog = getattr(invocation, "catalog", None)
    return catalog is not None and catalog.option(flag) is not None


def _may_add_flags(invocation: Invocation) -> bool:
    """A word whose value is only known at run time and is not an option's value (`$EXTRA_ARGS`): it may be
    `--headless`. The model (the first positional) is not such a word."""
    values = {id(o.value_token) for o in invocation.options if o.value_token is not None}
    model = invocation.model
    return any(t.dynamic and id(t) not in values and t is not model for t in invocation.tokens)


def _needs_headless(invocation: Invocation) -> bool:
    if invocation.kind != "serve" or invocation.option("--headless") or _may_add_flags(invocation):
        return False
    if invocation.config_file is not None:
        return False
    nnodes = last_option(invocation, "--nnodes")
    if nnodes is None or nnodes.value is None or nnodes.value.strip() == "1":
        return False
    if any(o.canonical.startswith("--data-parallel") for o in invocation.options):
        return False
    return _has_option(invocation, "--nnodes") and _has_option(invocation, "--headless")


def _headless(ctx: Context, group: Group) -> Iterator[Finding | None]:
    someone_headless = any(m.invocation is not None and m.invocation.option("--headless") for m in group.members)
    for member in group.members:
        invocation = member.invocation
        if invocation is None or not _needs_headless(invocation):
            continue
        if member.role == WORKER:
            who = f"This {_role(group, member)} of the multi-node vLLM server {group.describe()}"
        elif member.role == ANY and not someone_headless:
            rank = last_option(invocation, "--node-rank")
            if rank is None or rank.value_known:
                continue  # no rank, or one literal rank, for every pod is another mistake, not this one
            who = f"Every pod of the multi-node vLLM server {group.describe()} runs this command, so the pods " \
                  "other than node-rank 0"
        else:
            continue
        nnodes = last_option(invocation, "--nnodes")
        where = nnodes.token if nnodes is not None else invocation.anchor
        release = invocation.catalog.version
        yield ctx.finding(where, f"{who} run{'s' if member.role == WORKER else ''} `vllm serve --nnodes` without "
                          f"`--headless`: on vLLM {release} a node other than rank 0 needs `--headless` to start only "
                          "its workers; without it, it starts an API server and engine client of its own instead "
                          "of joining rank 0's engine. Add `--headless` to the worker nodes' command (vLLM's LWS "
                          "example does exactly that).", about=invocation, value=f"headless:{group.describe()}")


# --- 4. --revision --------------------------------------------------------------------------------------
def _hub_id(name: str) -> bool:
    """`org/name` of a Hugging Face repository, not a local path, URL or bucket."""
    if name.startswith(("/", ".", "~")) or "://" in name or name.count("/") != 1:
        return False
    org, repo = name.split("/")
    return bool(org) and bool(repo)


def _revision(ctx: Context, group: Group) -> Iterator[Finding | None]:
    serving = [m for m in group.members if m.invocation is not None and m.role in (LEADER, ANY)] or \
        [m for m in group.members if m.invocation is not None]
    if not serving:
        return
    invocation = serving[0].invocation
    assert invocation is not None
    model = _model(invocation)
    if model is None or not _hub_id(model[0]) or invocation.option("--revision") or invocation.config_file:
        return
    if any(m.invocation is not None and m.invocation.option("--revision") for m in group.members):
        return  # a worker pins it: the mismatch, if any, is reported above
    yield ctx.finding(model[1], f"The multi-node vLLM server {group.describe()} serves `{model[0]}` without "
                      "`--revision`: every node downloads the weights itself and resolves the branch when it starts, "
                      "so a push to the repository between two nodes' starts gives them different snapshots. Pin "
                      "the commit with `--revision <sha>` (and `--tokenizer-revision`) on every node.",
                      about=invocation, value=f"revision:{model[0]}", severity=min(ctx.severity, Severity.INFO))
