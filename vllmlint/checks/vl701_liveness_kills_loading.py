"""VL701: a startup probe, or a liveness probe without one, that kills vLLM before the model is loaded.

vLLM binds its API socket early but listens only once the engine (and so the model) is loaded
(`data/server-endpoints.yaml`, `listening`): until then an httpGet or tcpSocket probe on its port gets
"connection refused". The kubelet restarts a container after `failureThreshold` failed liveness probes; a
startup probe holds the liveness probe back until it succeeds once
(https://kubernetes.io/docs/concepts/configuration/liveness-readiness-startup-probes/), and "If the startup
probe fails, the kubelet kills the container", liveness probe or not
(https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-probes). So the time vLLM gets
is `initialDelaySeconds + failureThreshold x periodSeconds` of the startup probe when there is one, else of
the liveness probe. The time it needs is a lower bound from `data/load-time.yaml`
(`vllmlint.capacity.loadtime`: start, load, CUDA-graph capture; a download is not counted); only a budget
below it is reported. A Helm values file is judged on the probes its chart renders (vllmlint.vllm.helm_pod:
production-stack's servingEngineSpec probes merged over the chart's own, llm-d's container probes as written);
a budget that is the chart's default is reported at the modelSpec entry and said to be the chart's.
"""
from __future__ import annotations

from vllmlint.capacity.lint import capacity_workloads, model_words
from vllmlint.capacity.loadtime import assumptions, estimate
from vllmlint.vllm.endpoints import api_ports, invocations_by_container, probe_targets_port, server_invocations
from vllmlint.vllm.helm_pod import chart_default, chart_groups, pod_container
from vllmlint.checks import Context


def budget(probe) -> int:
    return probe.timing("initialDelaySeconds") + probe.timing("failureThreshold") * probe.timing("periodSeconds")


def _formula(probe) -> str:
    return (f"initialDelaySeconds {probe.timing('initialDelaySeconds')} + failureThreshold "
            f"{probe.timing('failureThreshold')} x periodSeconds {probe.timing('periodSeconds')}")


def _where(probe):
    """The field that sets the budget (failureThreshold, else periodSeconds, else the probe)."""
    for name in ("failureThreshold", "periodSeconds", "initialDelaySeconds"):
        node = probe.timings[name].node
        if node is not None:
            return node
    return probe.node


def check(ctx: Context):
    works = {id(w.invocation): w for w in capacity_workloads(ctx.world)}
    # A manifest's containers, then the pods Helm charts render from values files (vllm.helm_pod).
    for invocations in invocations_by_container(ctx.world) + chart_groups(ctx.world):
        container = pod_container(invocations[0])
        if container is None:
            continue
        # The startup probe when there is one: the kubelet kills the container after failureThreshold failures of
        # it whether or not a liveness probe exists, and runs no liveness probe before it succeeds.
        startup = container.probe("startup")
        probe = startup or container.probe("liveness")
        if probe is None:
            continue
        servers = server_invocations(invocations)
        ports = api_ports(servers) if servers else None
        if servers is None or ports is None or not probe_targets_port(probe, ports):
            continue  # an exec probe, a sidecar's port, an unknown port: whether it fails during load is unknown
        # The server that answers on the probed port; the shortest estimate when several could.
        candidates = [works.get(id(inv)) for inv in servers if inv.api_port == probe.port]
        pairs = [(w, t) for w, t in ((w, estimate(w)) for w in candidates if w is not None) if t is not None]
        if not pairs:
            continue  # the model is not in the catalog, or its load speed is unknown
        work, need = min(pairs, key=lambda pair: pair[1].total)
        seconds = budget(probe)
        if seconds >= need.total:
            continue
        which = "startup probe" if startup is not None else "liveness probe"
        alone = "" if startup is not None else "; there is no startup probe"
        suggest = _suggest(need.total)
        fix = (f"Raise the startup probe's failureThreshold x periodSeconds to {suggest} s or more"
               if startup is not None else
               f"Add a startupProbe on the same port with failureThreshold x periodSeconds of {suggest} s or more "
               f"(the liveness probe waits for it)")
        where = _where(probe)
        if chart_default(where, container):
            which += " (the chart's default)"
        yield ctx.finding(
            where,
            # The first line (up to the `: `) says what is wrong in few words; the figures follow it.
            f"The {which} gives vLLM {seconds} s to start, but {model_words(work)} needs at least "
            f"{need.total:.0f} s: {seconds} s is {_formula(probe)}{alone}; it needs at least {need.total:.0f} s at "
            f"every start ({_breakdown(need)}). vLLM's port refuses connections until the model is loaded, so the "
            f"kubelet restarts the container before it is up, the load starts over, CrashLoopBackOff. {fix}.",
            about=container, value=f"{seconds}s<{need.total:.0f}s")


def _rate(name: str) -> str:
    return f"{float(assumptions()[name]['value']) / 1e9:g} GB/s"


def _breakdown(need) -> str:
    size = f"{need.weights / 1e9:.1f} GB"
    parts = [f"{need.startup:.0f} s to start", f"{need.load:.0f} s to load {size} at {_rate('load_bytes_per_second')}"]
    if need.capture:
        parts.append(f"{need.capture:.0f} s of CUDA-graph capture")
    return ", ".join(parts) + ", all at rates faster than real ones"


def _suggest(seconds: float) -> int:
    """A round budget well above the lower bound: real start-ups take several times as long."""
    target = max(300, 3 * seconds)
    return int(-(-target // 60) * 60)
