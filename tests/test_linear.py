"""Rules and helpers stay linear in the size of the tree: each test counts the operations a run does on a
tree of N workloads and on one of 4N, and fails if the work per workload grows (a quadratic came back).
Counts, not timings: the same on every machine."""
from __future__ import annotations

import pytest

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
