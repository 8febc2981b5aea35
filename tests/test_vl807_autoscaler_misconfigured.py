"""VL807 autoscaler-misconfigured: catches / does not catch, with the position of every finding."""
import json
from pathlib import Path

import jsonschema
import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent
WARN, INFO = Severity.WARNING, Severity.INFO


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL807"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL807"]


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


def deployment(containers="- {name: vllm, image: 'vllm/vllm-openai:v0.29.0', args: [Qwen/Qwen3-8B]}"):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      {containers}
---
"""  # 11 lines


def hpa(metric, kind="Pods", target="{type: AverageValue, averageValue: '5'}", ref="kind: Deployment, name: vllm",
        extra=""):
    part = kind.lower()
    return f"""apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: vllm}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, {ref}}}
  maxReplicas: 4
  metrics:
  - type: {kind}
    {part}:
      metric: {{name: "{metric}"}}
      target: {target}{extra}
"""  # the metric name on line 10 (col 22), the target value on line 11


def adapter(rules):
    return f"""---
apiVersion: v1
kind: ConfigMap
metadata: {{name: adapter-config, namespace: monitoring}}
data:
  config.yaml: |
    rules:
{rules}
"""


def keda(query, threshold="'80'", metric_type=""):
    return f"""apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: vllm}}
spec:
  scaleTargetRef: {{name: vllm}}
  triggers:
  - type: prometheus{metric_type}
    metadata:
      serverAddress: http://prometheus-operated.monitoring.svc:9090
      query: {query}
      threshold: {threshold}
"""  # the query on line 10 (col 14), the threshold on line 11 (col 18)


# --- 1. names ----------------------------------------------------------------------------------------------
def test_the_original_chapter_hpa_fires():
    linter = Linter(LintOptions(select=["VL807"]))
    for name in ("hpa.yaml", "single-node-deployment.yaml"):
        path = ROOT / "fixtures" / "original" / name
        linter.result.files_checked += 1
        linter.add_text(path.read_text(), f"fixtures/original/{name}", ".yaml")
    findings = [f for f in linter.run().findings if f.code == "VL807"]
    assert [(f.path, f.span.line, f.span.col, f.severity, f.value) for f in findings] == [
        ("fixtures/original/hpa.yaml", 22, 15, INFO, "unknown:requests_per_second")]
    assert findings[0].message.startswith("HPA vllm-inference-hpa scales on `requests_per_second`, which is not a "
                                          "metric vLLM exports. It scales Deployment vllm-inference, vLLM 0.33.0 "
                                          "(checked) does not export `requests_per_second`, and no prometheus-adapter")


@pytest.mark.parametrize("metric, expected", [
    ("requests_per_second", [(21, 22, INFO, "unknown:requests_per_second")]),
    ("vllm_gpu_cache_usage_perc", [(21, 22, INFO, "renamed:vllm_gpu_cache_usage_perc"),  # gone after 0.11.1
                                   (22, 50, INFO, "ratio:vllm_gpu_cache_usage_perc>5")]),  # and 5 on a 0..1 ratio
    ("vllm_num_requests_typo", [(21, 22, INFO, "renamed:vllm_num_requests_typo")]),
    # renamed forms of what 0.29.0 exports: silent
    ("vllm_num_requests_waiting", []),
    ("num_requests_running", []),
    ("vllm_request_success_per_second", []),
    ("vllm-kv-cache-usage-perc", [(22, 50, INFO, "ratio:vllm-kv-cache-usage-perc>5")]),
    # other exporters that label pods, and Cloud Monitoring names: silent
    ("DCGM_FI_DEV_GPU_UTIL", []),
    ("container_cpu_usage_seconds", []),
    ("kubernetes.io|container|accelerator|duty_cycle", []),
    # `vllm:` names are VL111's
    ("vllm:num_requests_swapped", []),
    ("prometheus.googleapis.com|vllm:num_requests_waiting|gauge", []),
])
def test_pods_metric_names(metric, expected):
    assert found(deployment() + hpa(metric)) == expected


def test_names_are_not_judged_without_the_target_or_beside_a_sidecar():
    assert found(hpa("requests_per_second")) == []
    sidecar = ("- {name: vllm, image: 'vllm/vllm-openai:v0.29.0', args: [Qwen/Qwen3-8B]}\n"
               "      - {name: exporter, image: 'ghcr.io/example/request-exporter:1.2'}")
    assert found(deployment(sidecar) + hpa("requests_per_second")) == []


def test_external_metrics_and_objects_other_than_the_target_are_not_judged():
    assert found(deployment() + hpa("requests_per_second", kind="External")) == []
    ingress = ("\n      describedObject: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: main-route}")
    text = deployment() + hpa("requests-per-second", kind="Object", target="{type: Value, value: 10k}") + ingress
    assert found(text) == []
    pod_object = "\n      describedObject: {apiVersion: apps/v1, kind: Deployment, name: vllm}"
    assert found(deployment() + hpa("requests_per_second", kind="Object", target="{type: Value, value: 10}")
                 + pod_object) == [(21, 22, INFO, "unknown:requests_per_second")]


RENAMING_RULE = """    - seriesQuery: 'vllm:num_requests_waiting{namespace!="",pod!=""}'
      resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
      name: {matches: "vllm:num_requests_waiting", as: "vllm_num_requests_waiting"}
      metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)"""
REGEX_RULE = """    - seriesQuery: '{__name__=~"^vllm:.*",namespace!="",pod!=""}'
      resources: {template: <<.Resource>>}
      name: {matches: "^vllm:(.*)$", as: "vllm_${1}"}
      metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)"""
OPEN_RULE = """    - seriesQuery: '{namespace!="",__name__!~"^container_.*"}'
      resources: {template: <<.Resource>>}
      metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)"""


@pytest.mark.parametrize("rules, metric, expected", [
    (RENAMING_RULE, "vllm_num_requests_waiting", []),
    (RENAMING_RULE, "vllm_num_requests_running", [(21, 22, WARN, "adapter:vllm_num_requests_running")]),
    (RENAMING_RULE, "requests_per_second", [(21, 22, WARN, "adapter:requests_per_second")]),
    (REGEX_RULE, "vllm_num_requests_running", []),
    (REGEX_RULE, "vllm_request_success_total", []),
    (REGEX_RULE, "vllm_requests_per_second", [(21, 22, WARN, "adapter:vllm_requests_per_second")]),
    (OPEN_RULE, "requests_per_second", []),  # a rule that may serve any series: silent
    (RENAMING_RULE + "\n" + OPEN_RULE, "anything_at_all", []),
])
def test_prometheus_adapter_rules_in_the_run(rules, metric, expected):
    assert found(deployment() + hpa(metric) + adapter(rules)) == expected


def test_the_adapter_message_names_the_config_and_what_it_serves():
    [finding] = lint(deployment() + hpa("requests_per_second") + adapter(RENAMING_RULE))
    assert "ConfigMap adapter-config" in finding.message and "`vllm_num_requests_waiting`" in finding.message


# --- 2. ratios ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("metric, target, expected", [
    ("vllm:kv_cache_usage_perc", "{type: AverageValue, averageValue: '90'}",
     [(11, 50, INFO, "ratio:vllm:kv_cache_usage_perc>90")]),
    ("vllm_kv_cache_usage_perc", "{type: AverageValue, averageValue: 80}",
     [(11, 50, INFO, "ratio:vllm_kv_cache_usage_perc>80")]),
    ("prometheus.googleapis.com|vllm:gpu_cache_usage_perc|gauge", "{type: AverageValue, averageValue: 90}",
     [(11, 50, WARN, "ratio:prometheus.googleapis.com|vllm:gpu_cache_usage_perc|gauge>90")]),
    ("vllm:kv_cache_usage_perc", "{type: AverageValue, averageValue: 800m}", []),
    ("vllm:kv_cache_usage_perc", "{type: AverageValue, averageValue: '0.9'}", []),
    ("vllm:kv_cache_usage_perc", "{type: AverageValue, averageValue: '1'}", []),
    ("vllm:num_requests_waiting", "{type: AverageValue, averageValue: '90'}", []),
])
def test_hpa_targets_on_ratios(metric, target, expected):
    assert found(hpa(metric, target=target)) == expected


KV_RULE = """    - seriesQuery: 'vllm:kv_cache_usage_perc{namespace!="",pod!=""}'
      resources: {template: <<.Resource>>}
      name: {matches: "vllm:kv_cache_usage_perc", as: "kv_cache_usage"}
      metricsQuery: QUERY"""


@pytest.mark.parametrize("query, expected", [
    ("avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)", [(11, 50, WARN, "ratio:kv_cache_usage>90")]),
    ("avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) * 100", []),
])
def test_hpa_ratio_through_an_adapter_rule_in_the_run(query, expected):
    text = hpa("kv_cache_usage", target="{type: AverageValue, averageValue: '90'}") + adapter(
        KV_RULE.replace("QUERY", query))
    assert found(text) == expected


@pytest.mark.parametrize("query, threshold, metric_type, expected", [
    ("max(vllm:kv_cache_usage_perc) > 90", "'1'", "", [(10, 46, WARN, "ratio:vllm:kv_cache_usage_perc>90")]),
    ("'vllm:kv_cache_usage_perc{model_name=\"m\"} >= 85'", "'1'", "", [(10, 59, WARN,
                                                                          "ratio:vllm:kv_cache_usage_perc>85")]),
    ("avg(vllm:kv_cache_usage_perc)", "'80'", "", [(11, 18, WARN, "ratio:vllm:kv_cache_usage_perc>80")]),
    ("avg by (pod) (avg_over_time(vllm:gpu_cache_usage_perc[5m]))", "'75'", "",
     [(11, 18, WARN, "ratio:vllm:gpu_cache_usage_perc>75")]),
    ("sum(vllm:kv_cache_usage_perc)", "'80'", "", [(11, 18, WARN, "ratio:vllm:kv_cache_usage_perc>80")]),
    # a sum under Value can exceed 1; arithmetic rescales; fractions; other metrics: silent
    ("sum(vllm:kv_cache_usage_perc)", "'80'", "\n    metricType: Value", []),
    ("avg(vllm:kv_cache_usage_perc) * 100", "'80'", "", []),
    ("100 * avg(vllm:kv_cache_usage_perc)", "'80'", "", []),
    ("avg(vllm:kv_cache_usage_perc)", "'0.8'", "", []),
    ("max(vllm:kv_cache_usage_perc) > 0.9", "'1'", "", []),
    ("sum(vllm:num_requests_waiting)", "'80'", "", []),
    ("avg(vllm:kv_cache_usage_perc) + sum(vllm:num_requests_waiting)", "'80'", "", []),
])
def test_keda_queries_on_ratios(query, threshold, metric_type, expected):
    assert found(keda(query, threshold, metric_type)) == expected


# --- 3. replicas that are ranks ----------------------------------------------------------------------------
def statefulset(serve, gpus=8):
    return f"""apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: vllm}}
spec:
  serviceName: vllm
  replicas: 2
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [sh, -c, "{serve}"]
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
---
"""  # 16 lines


MP = "vllm serve /models/m --tensor-parallel-size 8 --nnodes 2 --node-rank ${HOSTNAME##*-} --master-addr vllm-0.vllm"


@pytest.mark.parametrize("serve, gpus, expected", [
    (MP, 8, [(21, 66, WARN, "ranks:vllm")]),
    ("vllm serve /models/m --tensor-parallel-size 16", 8, [(21, 66, WARN, "ranks:vllm")]),  # more ranks than GPUs
    ("vllm serve /models/m --tensor-parallel-size 8", 8, []),  # independent replicas
])
def test_hpa_on_a_statefulset_of_ranks(serve, gpus, expected):
    text = statefulset(serve, gpus) + hpa("vllm_num_requests_waiting", ref="kind: StatefulSet, name: vllm")
    assert found(text) == expected


def test_keda_on_a_statefulset_of_ranks():
    text = statefulset(MP) + keda("sum(vllm:num_requests_waiting)", "'5'").replace(
        "scaleTargetRef: {name: vllm}", "scaleTargetRef: {kind: StatefulSet, name: vllm}")
    assert found(text) == [(21, 45, WARN, "ranks:vllm")]


def test_a_leaderworkerset_scales_whole_groups():
    lws = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.29.0
          command: [sh, -c, "vllm serve /models/m --tensor-parallel-size 8 --nnodes 2"]
          resources: {limits: {nvidia.com/gpu: 8}}
---
"""
    text = lws + hpa("vllm_num_requests_waiting", ref="kind: LeaderWorkerSet, name: vllm")
    assert found(text) == []


# --- the data ----------------------------------------------------------------------------------------------
def test_the_data_file_matches_its_schema_and_names_catalogued_metrics():
    from vllmlint.vllm import catalog

    data = load_yaml_data(knowledge_dir() / "autoscaling-metrics.yaml")
    schema = json.loads((schemas_dir() / "autoscaling-metrics.schema.json").read_text())
    jsonschema.validate(data, schema)
    for ratio in data["ratios"]:
        assert catalog.metric_history(ratio["name"]) is not None, ratio["name"]


def test_the_audited_chapter_stays_silent():
    linter = Linter(LintOptions(select=["VL807"]))
    for path in sorted((ROOT / "fixtures" / "audited").iterdir()):
        linter.result.files_checked += 1
        linter.add_text(path.read_text(), str(path), path.suffix.lower())
    assert [f for f in linter.run().findings if f.code == "VL807"] == []


def test_a_backtracking_regex_in_an_adapter_rule_is_not_run():
    rule = """    - seriesQuery: '{__name__=~"^vllm:(.*)",namespace!=""}'
      name: {matches: "^(v|l|m|:|[a-z_]+)+$", as: "x"}
      metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)"""
    assert found(deployment() + hpa("requests_per_second") + adapter(rule)) == []  # unknown rule: silent


def test_autoscaling_v2beta1_fields():
    text = deployment() + """apiVersion: autoscaling/v2beta1
kind: HorizontalPodAutoscaler
metadata: {name: vllm}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  maxReplicas: 4
  metrics:
  - type: Pods
    pods: {metricName: requests_per_second, targetAverageValue: "100"}
  - type: Pods
    pods: {metricName: "vllm:kv_cache_usage_perc", targetAverageValue: "90"}
"""
    assert found(text) == [(20, 24, INFO, "unknown:requests_per_second"),
                           (22, 72, INFO, "ratio:vllm:kv_cache_usage_perc>90")]


def test_a_multi_line_keda_query():
    text = keda("|\n        max by (model_name) (\n          vllm:kv_cache_usage_perc{namespace=\"llm\"}\n        ) > 90",
                "'1'")
    assert found(text) == [(13, 13, WARN, "ratio:vllm:kv_cache_usage_perc>90")]
