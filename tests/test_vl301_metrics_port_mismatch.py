"""VL301 metrics-port-mismatch: the issue-11 changes (monitors read through vllmlint/k8s/monitoring.py, Service
annotations, an unresolved port name left to VL806), with the position of every finding."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity

E = Severity.ERROR

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}%s}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, Qwen/Qwen3-8B]
        ports: [{name: http, containerPort: 8000}]
"""


def lint(text):
    result = lint_text(text, "example.yaml", LintOptions(select=["VL301"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.severity, f.value) for f in result.findings if f.code == "VL301"]


def service(annotations):
    return f"""---
apiVersion: v1
kind: Service
metadata:
  name: vllm
  annotations: {annotations}
spec:
  selector: {{app: vllm}}
  ports: [{{name: http, port: 80, targetPort: 8000}}]
"""


# --- Service annotations -------------------------------------------------------------------------------
def test_service_port_annotation_with_scrape_true():
    text = DEPLOYMENT % "" + service('{prometheus.io/scrape: "true", prometheus.io/port: "8080"}')
    assert lint(text) == [(19, 67, E, "8080")]
    result = lint_text(text, "example.yaml", LintOptions(select=["VL301"]))
    assert result.findings[0].message.startswith("`prometheus.io/port: 8080` points Prometheus at a port vLLM does "
                                                 "not serve metrics on. Service vllm carries it, and vLLM serves "
                                                 "/metrics on its API port ")


@pytest.mark.parametrize("annotations", [
    '{prometheus.io/port: "8080"}',  # the service-endpoints job keeps only prometheus.io/scrape: "true"
    '{prometheus.io/scrape: "false", prometheus.io/port: "8080"}',
    '{prometheus.io/scrape: "true", prometheus.io/port: "8000"}',  # the API port
    '{prometheus.io/scrape: "true", prometheus.io/port: http}',  # not a number: not read
])
def test_service_annotations_that_are_fine(annotations):
    assert lint(DEPLOYMENT % "" + service(annotations)) == []


def test_service_annotation_fix_is_the_api_port():
    text = DEPLOYMENT % "" + service('{prometheus.io/scrape: "true", prometheus.io/port: "8080"}')
    result = lint_text(text, "example.yaml", LintOptions(select=["VL301"]))
    assert result.findings[0].fix is not None


def test_pod_annotation_with_scrape_false_is_not_read():
    meta = ', annotations: {prometheus.io/scrape: "false", prometheus.io/port: "8001"}'
    assert lint(DEPLOYMENT % meta) == []
    meta = ', annotations: {prometheus.io/port: "8001"}'
    assert lint(DEPLOYMENT % meta) == [(7, 71, E, "8001")]


# --- monitors through vllmlint/k8s/monitoring.py ------------------------------------------------------------
def test_unresolved_service_monitor_port_name_is_left_to_vl806():
    text = DEPLOYMENT % "" + """---
apiVersion: v1
kind: Service
metadata: {name: vllm, labels: {app: vllm}}
spec:
  selector: {app: vllm}
  ports: [{port: 8000}]
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  endpoints: [{port: http}]
"""
    assert lint(text) == []


def test_gke_pod_monitoring_on_another_port():
    text = DEPLOYMENT % "" + """---
apiVersion: monitoring.googleapis.com/v1
kind: PodMonitoring
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  endpoints: [{port: 8001, interval: 15s}]
"""
    assert lint(text) == [(20, 22, E, "8001")]


def test_pod_monitor_port_number_on_another_port():
    text = DEPLOYMENT % "" + """---
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  podMetricsEndpoints: [{portNumber: 9090}]
"""
    assert lint(text) == [(20, 38, E, "9090")]


def test_victoriametrics_service_scrape_on_another_port():
    text = DEPLOYMENT % "" + """---
apiVersion: v1
kind: Service
metadata: {name: vllm, labels: {app: vllm}}
spec:
  selector: {app: vllm}
  ports: [{name: metrics, port: 8001, targetPort: 8001}]
---
apiVersion: operator.victoriametrics.com/v1beta1
kind: VMServiceScrape
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  endpoints: [{port: metrics}]
"""
    assert lint(text) == [(20, 51, E, "metrics:8001"), (27, 22, E, "8001")]


def test_empty_match_names_is_the_monitor_namespace():
    """`matchNames: []` with `any` false: the monitor's own namespace (prometheus-operator types.go)."""
    text = (DEPLOYMENT % "").replace("metadata: {name: vllm}", "metadata: {name: vllm, namespace: a}") + """---
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata: {name: vllm, namespace: a}
spec:
  namespaceSelector: {matchNames: []}
  selector: {matchLabels: {app: vllm}}
  podMetricsEndpoints: [{portNumber: 9090}]
"""
    assert lint(text) == [(21, 38, E, "9090")]
