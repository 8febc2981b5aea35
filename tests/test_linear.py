"""Rules and helpers stay linear in the size of the tree: each test counts the operations a run does on a
tree of N workloads and on one of 4N, and fails if the work per workload grows (a quadratic came back).
Counts, not timings: the same on every machine."""
from __future__ import annotations

from vllmlint.checks import Context
from vllmlint.engine import LintOptions, Linter
from vllmlint.finding import Severity
from vllmlint.registry import rule as find_rule


def app(number: int, release: str = "v0.29.0") -> str:
    """One workload as the benchmark corpus writes it: a vLLM Deployment, its HPA on a vLLM metric and a
    ServiceMonitor whose relabeling keeps vLLM series."""
    name = f"vllm-{number}"
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: inference}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:{release}
        command: [vllm, serve, Qwen/Qwen3-0.6B, --port, "8000"]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: {name}, namespace: inference}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}
  maxReplicas: 4
  metrics:
  - type: Pods
    pods:
      metric: {{name: "vllm:num_requests_waiting"}}
      target: {{type: AverageValue, averageValue: "5"}}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {{name: {name}, namespace: inference}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  endpoints:
  - port: http
    metricRelabelings:
    - {{action: keep, sourceLabels: [__name__], regex: "vllm:num_requests_running|vllm:nope_{number}"}}
"""


class CountingList(list):
    """A list that counts how often it is iterated from the start."""

    def __init__(self, items):
        super().__init__(items)
        self.iterations = 0

    def __iter__(self):
        self.iterations += 1
        return super().__iter__()


def world_of(apps: int, options: LintOptions | None = None):
    linter = Linter(options or LintOptions())
    for number in range(apps):
        linter.add_text(app(number), f"app-{number}/manifests.yaml")
    return linter.build()


def run_check(code: str, world) -> list:
    found = find_rule(code)
    return [f for f in found.load_check()(Context(world, found, Severity.WARNING)) if f is not None]


def test_vl111_reads_every_invocation_a_fixed_number_of_times_whatever_the_number_of_autoscalers():
    iterations = {}
    for apps in (5, 20):
        world = world_of(apps)
        world.invocations = CountingList(world.invocations)
        findings = run_check("VL111", world)
        # Still judged per workload: one unknown metric per ServiceMonitor's relabeling.
        assert sorted(f.value for f in findings) == sorted(f"vllm:nope_{n}" for n in range(apps))
        iterations[apps] = world.invocations.iterations
    # Before: once per relabeling rule and once per HPA (2 * apps + ...); now once for the run's releases
    # and once for the index of each workload's releases.
    assert iterations[5] == iterations[20] <= 2


def test_catalog_releases_are_sorted_once_however_often_they_are_asked_for(monkeypatch):
    from vllmlint.vllm import catalog

    calls = []
    real = catalog.version_key
    monkeypatch.setattr(catalog, "version_key", lambda version: calls.append(version) or real(version))
    catalog._sorted_releases.cache_clear()
    catalog.nearest_release.cache_clear()
    try:
        first = catalog.releases()
        known = len(first)
        for _ in range(100):
            assert catalog.releases() == first and catalog.newest() == first[-1]
            assert catalog.nearest_release("0.29.1") == "0.29.0"
        first.append("9.9.9")  # a copy: the caller's list is its own
        assert catalog.releases()[-1] != "9.9.9"
    finally:
        catalog._sorted_releases.cache_clear()
        catalog.nearest_release.cache_clear()
    # One sort (a key per release) and one pass for nearest_release("0.29.1"); before, 201 sorts and 100 passes.
    assert len(calls) <= 2 * known + 1


API_SERVER = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm-NUMBER}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [python3, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen3-0.6B]
"""


def vl101_run(monkeypatch, options: LintOptions, files: int = 3):
    """(VL101 findings, how often its fix builder ran) for `files` Deployments on the deprecated module."""
    from vllmlint.checks import vl101_deprecated_entrypoint as vl101

    built = []
    real = vl101.serve_fix
    monkeypatch.setattr(vl101, "serve_fix", lambda invocation: built.append(1) or real(invocation))
    linter = Linter(options)
    for number in range(files):
        name = "examples/a.yaml" if number == 0 else f"deploy/d{number}.yaml"
        linter.add_text(API_SERVER.replace("NUMBER", str(number)), name)
    result = linter.run()
    assert not result.internal_error
    return [f for f in result.findings if f.code == "VL101"], len(built)


def test_vl101_builds_its_fix_only_for_findings_shown_when_the_output_uses_fixes(monkeypatch):
    findings, built = vl101_run(monkeypatch, LintOptions(select=["VL101"]))
    assert built == 3 and [f.fix.description for f in findings] == [
        "run `vllm serve MODEL` instead of the deprecated api_server module"] * 3
    # `python3, -m, vllm.entrypoints.openai.api_server, --model, X` -> `vllm, serve, X`
    assert [(e.start, e.end, e.replacement) for e in findings[0].fix.edits] == [
        (260, 267, "vllm"), (269, 271, "serve"), (273, 318, "")]
    # A run whose output shows no fix (GitHub annotations, JUnit) builds none.
    findings, built = vl101_run(monkeypatch, LintOptions(select=["VL101"], fixes=False))
    assert built == 0 and len(findings) == 3 and all(f.fix is None for f in findings)
    # A finding the configuration hides is never fixed, so its fix is never built.
    findings, built = vl101_run(monkeypatch, LintOptions(select=["VL101"], per_file_ignores={"examples/**": ["VL101"]}))
    assert built == 2 and [f.path for f in findings] == ["deploy/d1.yaml", "deploy/d2.yaml"]


def test_only_reports_that_show_fixes_ask_for_them():
    from vllmlint.check import _uses_fixes

    assert _uses_fixes([("text", None)], False, False)
    assert _uses_fixes([("github", None), ("sarif", "out.sarif")], False, False)
    assert not _uses_fixes([("github", None)], False, False)
    assert not _uses_fixes([("junit", "junit.xml"), ("github", None)], False, False)
    assert _uses_fixes([("github", None)], True, False)  # --fix, --diff
    assert not _uses_fixes([("text", None)], False, True)  # --write-baseline records no fix


def local_model_world(apps: int):
    """`apps` Deployments serving a local folder (with its config.json among the linted files for the first),
    each starting with `pip install` in a shell, as a world with counting source and shell-command lists."""
    linter = Linter(LintOptions())
    for number in range(apps):
        text = app(number).replace('command: [vllm, serve, Qwen/Qwen3-0.6B, --port, "8000"]',
                                   "command: [sh, -c, 'pip install -U transformers && vllm serve "
                                   f"/models/custom-{number} --port 8000']")
        linter.add_text(text, f"app-{number}/manifests.yaml")
    linter.add_text('{"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 32000}',
                    "weights/custom-0/config.json",
                    ".json")
    world = linter.build()
    world.sources = CountingList(world.sources)
    world.shell_commands = CountingList(world.shell_commands)
    return world


def test_capacity_finds_config_json_and_installers_in_one_pass_whatever_the_number_of_workloads():
    from vllmlint.capacity.remote_code import _installs_packages
    from vllmlint.capacity.workload import workloads

    passes = {}
    for apps in (5, 20):
        world = local_model_world(apps)
        works = workloads(world)
        assert [w.model_name for w in works] == [f"/models/custom-{n}" for n in range(apps)]
        # The first workload's folder has its config.json among the linted files; no other does.
        assert [w.config_match.how if w.config_match else None for w in works] == (
            ["config.json at weights/custom-0/config.json"] + [None] * (apps - 1))
        assert all(_installs_packages(world, w.invocation.container) for w in works)
        passes[apps] = (world.sources.iterations, world.shell_commands.iterations)
    # Before: a pass over every file per local-path workload and over every command per workload.
    assert passes[5] == passes[20] and max(passes[20]) <= 1


def test_vl806_looks_vllm_pod_templates_up_in_a_set_not_the_list(monkeypatch):
    from vllmlint.k8s.objects import PodTemplate

    # Each app's Service fronts its Deployment; the monitors select the Services by label.
    services = "".join(f"""---
apiVersion: v1
kind: Service
metadata: {{name: vllm-{n}, namespace: inference, labels: {{app: vllm-{n}}}}}
spec:
  selector: {{app: vllm-{n}}}
  ports: [{{name: http, port: 8000}}]
""" for n in range(20))
    linter = Linter(LintOptions())
    for number in range(20):
        linter.add_text(app(number), f"app-{number}/manifests.yaml")
    linter.add_text(services, "services.yaml")
    world = linter.build()
    # Pod templates compare by identity; `t in some_list` compares t with every other item of the list.
    comparisons = []
    monkeypatch.setattr(PodTemplate, "__eq__", lambda self, other: comparisons.append(1) or self is other)
    run_check("VL806", world)
    assert len(comparisons) == 0  # before: 190 (each Service's template against the templates before it)


def test_vl108_looks_for_a_ray_cluster_only_when_an_invocation_uses_ray():
    world = world_of(10)
    world.shell_commands = CountingList(world.shell_commands)
    run_check("VL108", world)
    assert world.shell_commands.iterations == 0


class CountingDict(dict):
    iterations = 0

    def __iter__(self):
        CountingDict.iterations += 1
        return super().__iter__()


def test_vl109_lists_a_releases_variables_once_not_once_per_container(monkeypatch):
    from vllmlint.vllm import catalog

    release = catalog.load("0.29.0")
    monkeypatch.setattr(release, "env", CountingDict(release.env))
    counts = {}
    for apps in (5, 20):
        linter = Linter(LintOptions())
        for number in range(apps):
            text = app(number).replace('--port, "8000"]', '--port, "8000"]\n        env: [{name: VLLM_USE_V11, value: "1"}]')
            linter.add_text(text, f"app-{number}/manifests.yaml")
        world = linter.build()
        CountingDict.iterations = 0
        findings = run_check("VL109", world)
        assert len(findings) == apps and all(f.value == "VLLM_USE_V11" for f in findings)
        counts[apps] = CountingDict.iterations
    assert counts[5] == counts[20] == 1  # before: one pass over the release's variables per container


def test_vl808_finds_each_containers_workload_in_an_index_and_builds_its_table_only_when_needed(monkeypatch):
    from vllmlint.capacity.workload import workloads
    from vllmlint.checks import vl808_nccl_env as vl808
    from vllmlint.vllm import nccl_env

    world = world_of(20)
    containers = [w.container for w in workloads(world)]
    from vllmlint.capacity.workload import _workloads

    counted = world._facts[_workloads] = CountingList(workloads(world))  # the fact World.fact keeps
    assert [vl808._aws_landings(world, c) for c in containers] == [None] * 20  # no AWS placement known
    assert counted.iterations == 1  # before: one scan per container
    # No container sets an NCCL variable: the table's rows are never built.
    built = []
    monkeypatch.setattr(nccl_env, "known_variables", lambda: built.append(1) or {})
    assert run_check("VL808", world_of(3)) == [] and built == []


def test_checks_find_a_containers_workload_in_one_index_per_world():
    from vllmlint.capacity.workload import workloads, workloads_by
    from vllmlint.checks import vl704_no_gpu_requested as vl704
    from vllmlint.checks import vl708_hardcoded_visible_devices as vl708

    world = world_of(20)
    from vllmlint.capacity.workload import _workloads

    works = workloads(world)
    counted = world._facts[_workloads] = CountingList(works)  # the fact World.fact keeps
    for work in works:
        container = work.invocation.container
        assert workloads_by(world, "container")[id(container)] == [work]
        assert workloads_by(world, "pod")[id(container.pod)] == [work]
        assert workloads_by(world, "owner")[id(container.pod.owner)] == [work]
        assert workloads_by(world, "invocation")[id(work.invocation)] == [work]
        ctx = Context(world, find_rule("VL704"), Severity.WARNING)
        assert vl704._gpus_needed(ctx, work.invocation, container) == vl708._needed(world, container)
    # One pass per key, whatever the number of containers (before: a scan of every workload per container).
    assert counted.iterations == 4


def test_capacity_reads_pod_specs_through_the_model_never_as_copied_dicts():
    """`to_python` copies a whole node tree (a pod spec per workload, aliases expanded): capacity reads the
    typed model instead (k8s/pod.py accessors), which costs nothing per unread field."""
    from pathlib import Path

    import vllmlint.capacity

    folder = Path(vllmlint.capacity.__file__).parent
    # hfconfig.py converts a model's config.json (a JSON file of the run, read once per model), not a pod spec
    assert [p.name for p in sorted(folder.glob("*.py"))
            if "to_python" in p.read_text(encoding="utf-8") and p.name != "hfconfig.py"] == []
