"""VL108: a vLLM flag that only works together with another one that is missing (or inconsistent)."""
from __future__ import annotations

from vllmlint.finding import Severity
from vllmlint.source.yamlmodel import Scalar, scalar_str
from vllmlint.checks import Context

_RAY_KINDS = {"RayCluster", "RayService", "RayJob", "RayClusterFleet"}
# The scripts vLLM's image ships to start a Ray cluster: their `leader`/`worker` modes run `ray start`
# (examples/online_serving/multi-node-serving.sh), and run_cluster.sh starts a container that does
# (examples/online_serving/run_cluster.sh).
_RAY_HELPER_MODES: dict[str, tuple[str, ...] | None] = {"multi-node-serving.sh": ("leader", "worker"), "run_cluster.sh": None}


def _int(option) -> int | None:
    if option is None or not option.value_known:
        return None
    try:
        return int(option.value)
    except (TypeError, ValueError):
        return None


def _last(invocation, *names):
    found = invocation.option(*names)
    return found[-1] if found else None


def _severity(ctx, entry):
    return min(ctx.severity, Severity.parse(entry.get("severity", "error")))


def check(ctx: Context):
    data = ctx.rule.data if isinstance(ctx.rule.data, dict) else {}
    pairs = data.get("requires", [])
    ray_visible: list[bool] = []  # computed at the first `--distributed-executor-backend ray`, if any
    for invocation in ctx.world.invocations:
        known = {o.canonical for o in invocation.options if o.status is not None and o.status.kind == "ok"}
        for entry in pairs:
            flag, needs = entry["flag"], entry["needs"]
            if invocation.catalog.options.get(flag[2:]) is None:
                continue  # the release has no such flag: other rules report it
            present = [o for o in invocation.option(flag) if o.status is not None and o.status.kind == "ok"]
            if not present or any(n in known for n in needs):
                continue
            alternatives = " or ".join(f"`{n}`" for n in needs)
            yield ctx.finding(present[0].token, f"`{present[0].name}` needs {alternatives}, which is missing: "
                              f"{entry['why']}", about=invocation, value=flag, severity=_severity(ctx, entry))
        yield from _node_rank(ctx, invocation)
        yield from _headless(ctx, invocation)
        yield from _ray(ctx, invocation, ray_visible)
        yield from _lora_without_adapters(ctx, invocation)


def _lora_without_adapters(ctx, invocation):
    """`--enable-lora` with no adapter to load: no `--lora-modules` and no runtime loading. The server starts and
    serves the base model only; a request naming an adapter gets 404. Silent when something unseen may add them
    (a `--config` file, `$ARGS`, runtime updating on or set elsewhere)."""
    enable = _last(invocation, "--enable-lora")
    if enable is None or enable.status is None or enable.status.kind != "ok" or invocation.option("--lora-modules"):
        return
    if invocation.option("--config") or any(t.dynamic for t in invocation.tokens):
        return
    from vllmlint.vllm.clients import runtime_lora

    container = invocation.container
    if runtime_lora(invocation, ctx.world) or container is None or container.node.get("envFrom") is not None:
        return  # a script's environment, or variables from a ConfigMap or Secret: runtime loading may be on
    yield ctx.finding(enable.token, "`--enable-lora` with no adapter to load: no `--lora-modules` and no runtime "
                      "loading, so the server serves the base model only and a request naming an adapter gets 404. "
                      "Register the adapters at start (`--lora-modules name=/path/to/adapter`), or drop "
                      "`--enable-lora` (runtime loading needs VLLM_ALLOW_RUNTIME_LORA_UPDATING=1 and a restricted "
                      "operator path).", about=invocation, value="--enable-lora",
                      severity=min(ctx.severity, Severity.INFO))


def _node_rank(ctx, invocation):
    rank = _last(invocation, "--node-rank")
    if rank is None or "nnodes" not in invocation.catalog.options:
        return
    nnodes = _last(invocation, "--nnodes")
    if nnodes is None and _int(rank) != 0:
        yield ctx.finding(rank.token, "`--node-rank` without `--nnodes`: vLLM assumes one node (`--nnodes 1`), so a "
                          "rank other than 0 is rejected and rank 0 waits for nobody. Pass `--nnodes N` on every "
                          "node.", about=invocation, value="--node-rank")
        return
    if nnodes is None:
        return
    rank_value, nodes_value = _int(rank), _int(nnodes)
    if rank_value is not None and nodes_value is not None and not 0 <= rank_value < nodes_value:
        yield ctx.finding(rank.value_token or rank.token, f"`--node-rank {rank_value}` is not below `--nnodes "
                          f"{nodes_value}`: vLLM exits with \"`--node-rank` must be between 0 and "
                          f"{nodes_value - 1}\". Ranks count from 0.", about=invocation, value="--node-rank")


_DP_RANK_FLAGS = ("--data-parallel-start-rank", "--data-parallel-rank", "--data-parallel-address",
                  "--data-parallel-size-local")


def _headless(ctx, invocation):
    headless = _last(invocation, "--headless")
    if headless is None or headless.status is None or headless.status.kind != "ok":
        return
    if invocation.option("--nnodes", "--node-rank", *_DP_RANK_FLAGS):  # --node-rank alone: reported above
        return
    yield ctx.finding(headless.token, "`--headless` starts engine workers without an API server; without "
                      "`--nnodes`/`--node-rank` (multi-node tensor or pipeline parallelism) or data-parallel rank "
                      "flags (`--data-parallel-start-rank`, `--data-parallel-address`) this pod serves nothing and "
                      "joins nobody. Drop `--headless` on a single node, or add the multi-node flags.",
                      about=invocation, value="--headless", severity=min(ctx.severity, Severity.WARNING))


def _ray_head_visible(ctx) -> bool:
    """A Ray cluster this run can see: a KubeRay resource, or a command that starts a Ray node (`ray
    start`, or one of vLLM's helper scripts) among the commands of the run. Only commands count: a
    comment or a string that mentions `ray start` starts nothing."""
    if any(o.kind in _RAY_KINDS for o in ctx.world.objects):
        return True
    return any(_starts_ray(command.words) for command in ctx.world.shell_commands)


def _starts_ray(words: list[str]) -> bool:
    if len(words) >= 2 and words[0].rsplit("/", 1)[-1] == "ray" and words[1] == "start":
        return True
    for index, word in enumerate(words):
        name = word.rsplit("/", 1)[-1]
        if name in _RAY_HELPER_MODES:
            modes = _RAY_HELPER_MODES[name]
            if modes is None or (index + 1 < len(words) and words[index + 1] in modes):
                return True
    return False


def _pod_gpus(invocation) -> int | None:
    container = invocation.container
    if container is None:
        return None
    node = container.resource("limits", "nvidia.com/gpu") or container.resource("requests", "nvidia.com/gpu")
    text = scalar_str(node) if isinstance(node, Scalar) else None
    return int(text) if text and text.isdigit() else None


def _ray(ctx, invocation, ray_visible):
    backend = _last(invocation, "--distributed-executor-backend")
    if backend is None or not backend.value_known or backend.value != "ray":
        return
    if not ray_visible:
        ray_visible.append(_ray_head_visible(ctx))
    if ray_visible[0]:
        return
    container = invocation.container
    if container is not None and "RAY_ADDRESS" in container.env:
        return
    gpus = _pod_gpus(invocation)
    tp = _int(_last(invocation, "--tensor-parallel-size")) or 1
    pp = _int(_last(invocation, "--pipeline-parallel-size")) or 1
    if gpus is None or tp * pp <= gpus:
        return  # on one node vLLM starts a local Ray instance itself
    yield ctx.finding(backend.value_token or backend.token,
                      f"`--distributed-executor-backend ray` needs a Ray cluster for {tp * pp} GPUs, and none is in "
                      f"sight: tensor x pipeline parallelism {tp} x {pp} = {tp * pp} GPUs, but the pod has {gpus} "
                      "(`nvidia.com/gpu`) and there is no KubeRay resource, no `ray start`, no `RAY_ADDRESS`, so "
                      "vLLM starts a one-node Ray and waits for a placement group that never fits. Start a Ray head and workers (KubeRay, or "
                      "`ray start` in a LeaderWorkerSet), or use `--nnodes`/`--node-rank` with the mp backend.",
                      about=invocation, value="ray", severity=min(ctx.severity, Severity.WARNING))
