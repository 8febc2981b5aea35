"""VL806 monitor-selects-nothing: catches / does not catch, with the position of every finding."""
import json

import jsonschema
import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity

W, INFO = Severity.WARNING, Severity.INFO


def lint(text, select=("VL806",)):
    result = lint_text(text, "example.yaml", LintOptions(select=list(select)))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code in select]


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


def deployment(labels="{app: vllm}", ports="", namespace="", meta_labels=""):
    ns = f", namespace: {namespace}" if namespace else ""
    meta = f", labels: {meta_labels}" if meta_labels else ""
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm{ns}{meta}}}
spec:
  selector: {{matchLabels: {labels}}}
  template:
    metadata: {{labels: {labels}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, Qwen/Qwen3-8B]
        ports: {ports or '[]'}
"""


def service(labels="{app: vllm}", ports="[{name: http, port: 8000, targetPort: 8000}]", namespace="",
            selector="{app: vllm}"):
    ns = f", namespace: {namespace}" if namespace else ""
    lab = f", labels: {labels}" if labels else ""
    return f"""---
apiVersion: v1
kind: Service
metadata: {{name: vllm-svc{ns}{lab}}}
spec:
  selector: {selector}
  ports: {ports}
"""


def service_monitor(selector="{matchLabels: {app: vllm}}", endpoint="{port: http}", namespace="", extra="",
                    kind="ServiceMonitor", api="monitoring.coreos.com/v1"):
    ns = f", namespace: {namespace}" if namespace else ""
    return f"""---
apiVersion: {api}
kind: {kind}
metadata: {{name: mon{ns}}}
spec:
  selector: {selector}
  endpoints: [{endpoint}]
{extra}"""


def pod_monitor(selector="{matchLabels: {app: vllm}}", endpoint="{port: http}", namespace="", extra="",
                kind="PodMonitor", api="monitoring.coreos.com/v1", field="podMetricsEndpoints"):
    ns = f", namespace: {namespace}" if namespace else ""
    return f"""---
apiVersion: {api}
kind: {kind}
metadata: {{name: mon{ns}}}
spec:
  selector: {selector}
  {field}: [{endpoint}]
{extra}"""


# Lines: the Deployment is 13 lines; a Service is lines 14-20 (`ports:` on 20); a monitor after it starts at 21
# (`selector:` on 26, `endpoints:` on 27); a monitor right after the Deployment starts at 14 (selector 19, endpoints 20).

# --- catches -----------------------------------------------------------------------------------------
def test_service_without_the_labels_kubernetes_examples():
    text = deployment(labels="{app: gemma-server}") + service(labels="", selector="{app: gemma-server}") + \
        service_monitor("{matchLabels: {app: gemma-server}}")
    assert found(text) == [(26, 13, W, "labels:app=gemma-server")]
    (finding,) = lint(text)
    assert "Service vllm-svc, in front of the vLLM pods, has no labels" in finding.message
    assert "own `metadata.labels`" in finding.message
    assert "endpoint port `http` names no port of it either" not in finding.message
    text = text.replace("[{name: http, port: 8000, targetPort: 8000}]", "[{port: 8080, targetPort: 8080}]")
    (finding,) = lint(text)
    assert finding.message.endswith("The endpoint port `http` names no port of it either (its port has no name): "
                                    "name the Service port that reaches vLLM's API port.")


def test_service_with_other_labels():
    text = deployment() + service(labels="{app.kubernetes.io/name: vllm}") + service_monitor()
    assert found(text) == [(26, 13, W, "labels:app=vllm")]
    assert "has labels app.kubernetes.io/name=vllm" in lint(text)[0].message


def test_pods_labelled_but_no_service_in_the_run_is_info():
    text = deployment() + service_monitor()
    assert found(text) == [(19, 13, INFO, "labels:app=vllm")]
    assert "use a PodMonitor" in lint(text)[0].message


def test_selector_naming_the_vllm_service():
    text = deployment() + service(labels="{app: other}") + \
        service_monitor("{matchLabels: {app.kubernetes.io/name: vllm-svc}}")
    assert found(text) == [(26, 13, W, "labels:app.kubernetes.io/name=vllm-svc")]


def test_unnamed_service_port_referenced_by_name():
    text = deployment() + service(ports="[{port: 8000, targetPort: 8000}]") + service_monitor()
    assert found(text) == [(27, 22, W, "http")]
    message = lint(text)[0].message
    assert "the port of Service vllm-svc (8000) has no name" in message
    assert "Name the Service port that reaches vLLM's API port `http`" in message


def test_named_ports_none_matching():
    text = deployment() + service(ports="[{name: api, port: 8000}, {name: nccl, port: 29500}]") + \
        service_monitor(endpoint="{port: metrics}")
    assert found(text) == [(27, 22, W, "metrics")]
    assert "names its ports `api`, `nccl`" in lint(text)[0].message


def test_service_in_another_namespace_than_the_monitor():
    text = deployment(namespace="inference") + service(namespace="inference") + service_monitor(namespace="monitoring")
    assert found(text) == [(26, 13, W, "namespace:inference")]
    assert "looks only in its own namespace `monitoring`" in lint(text)[0].message


def test_match_names_missing_the_service_namespace():
    text = deployment(namespace="inference") + service(namespace="inference") + \
        service_monitor(namespace="monitoring", extra="  namespaceSelector: {matchNames: [vllm]}\n")
    assert found(text) == [(26, 13, W, "namespace:inference")]
    assert "(its `namespaceSelector`)" in lint(text)[0].message


def test_service_without_namespace_is_info():
    """The original chapter: the monitor sits in `monitoring`, the Service says no namespace."""
    text = deployment() + service() + service_monitor(namespace="monitoring")
    assert found(text) == [(26, 13, INFO, "namespace:unset")]
    assert lint(text)[0].message.startswith("ServiceMonitor mon selects Service vllm-svc only if the Service is "
                                            "applied into namespace `monitoring`")


def test_service_target_port_name_the_pod_does_not_declare():
    text = deployment(ports="[{containerPort: 8000}]") + service() + service_monitor(endpoint="{targetPort: http}")
    assert found(text) == [(27, 28, W, "http")]
    assert "declares 8000 (unnamed)" in lint(text)[0].message


def test_pod_monitor_port_name_not_declared():
    text = deployment(ports="[{containerPort: 8000}]") + pod_monitor()
    assert found(text) == [(20, 32, W, "http")]
    assert "Deployment/vllm declares 8000 (unnamed)" in lint(text)[0].message


def test_pod_monitor_on_pods_without_ports():
    text = deployment() + pod_monitor()
    assert found(text) == [(20, 32, W, "http")]
    assert "declares no container ports" in lint(text)[0].message


def test_pod_monitor_port_number_not_declared():
    text = deployment(ports="[{name: http, containerPort: 8000}]") + pod_monitor(endpoint="{portNumber: 9000}")
    assert found(text) == [(20, 38, W, "9000")]


def test_pod_monitor_deprecated_target_port_name():
    text = deployment(ports="[{name: http, containerPort: 8000}]") + pod_monitor(endpoint="{targetPort: metrics}")
    assert found(text) == [(20, 38, W, "metrics")]


def test_pod_monitor_on_the_deployment_labels():
    text = deployment(labels="{app: llama-server}", meta_labels="{app: vllm}") + pod_monitor()
    assert found(text) == [(19, 13, W, "labels:app=vllm")]
    assert "Deployment/vllm itself has those labels" in lint(text)[0].message


def test_pod_monitor_on_the_service_labels():
    text = deployment(labels="{app: llama-server}", ports="[{name: http, containerPort: 8000}]") + \
        service(labels="{app: vllm}", selector="{app: llama-server}") + pod_monitor()
    assert found(text) == [(26, 13, W, "labels:app=vllm")]


def test_pod_monitor_in_another_namespace():
    text = deployment(namespace="inference", ports="[{name: http, containerPort: 8000}]") + \
        pod_monitor(namespace="monitoring")
    assert found(text) == [(19, 13, W, "namespace:inference")]


def test_gke_pod_monitoring_in_another_namespace_says_where_to_create_it():
    text = deployment(namespace="inference", ports="[{name: http, containerPort: 8000}]") + \
        pod_monitor(namespace="monitoring", kind="PodMonitoring", api="monitoring.googleapis.com/v1",
                    field="endpoints")
    assert found(text) == [(19, 13, W, "namespace:inference")]
    assert "Create the PodMonitoring in `inference`" in lint(text)[0].message


def test_gke_pod_monitoring_port_name():
    text = deployment(ports="[{containerPort: 8000}]") + \
        pod_monitor(kind="PodMonitoring", api="monitoring.googleapis.com/v1", field="endpoints")
    assert found(text) == [(20, 22, W, "http")]


def test_victoriametrics_service_scrape():
    text = deployment() + service(ports="[{port: 8000}]") + \
        service_monitor(kind="VMServiceScrape", api="operator.victoriametrics.com/v1beta1")
    assert found(text) == [(27, 22, W, "http")]
    assert lint(text)[0].message.startswith("VMServiceScrape endpoint port `http`")


def test_victoriametrics_pod_scrape():
    text = deployment(ports="[{containerPort: 8000}]") + \
        pod_monitor(kind="VMPodScrape", api="operator.victoriametrics.com/v1beta1")
    assert found(text) == [(20, 32, W, "http")]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    # right labels, named port, same namespace
    deployment(ports="[{name: http, containerPort: 8000}]") + service() + service_monitor(),
    # the port of another selected Service has the name
    deployment() + service(ports="[{port: 8000}]") + service_monitor(endpoint="{port: http}").replace(
        "metadata: {name: mon}", "metadata: {name: mon}") + service(labels="{app: vllm}", selector="{app: x}",
                                                             ports="[{name: http, port: 80}]").replace("vllm-svc", "x"),
    # a numeric targetPort (not this rule's business), a port that is a pattern
    deployment() + service() + service_monitor(endpoint="{targetPort: 8000}"),
    deployment() + service() + service_monitor(endpoint="{port: 'http|web'}"),
    # an empty selector selects everything
    deployment() + service(labels="") + service_monitor(selector="{}"),
    # namespaceSelector any
    deployment(namespace="inference") + service(namespace="inference") +
    service_monitor(namespace="monitoring", extra="  namespaceSelector: {any: true}\n"),
    # matchNames names the Service's namespace
    deployment(namespace="inference") + service(namespace="inference") +
    service_monitor(namespace="monitoring", extra="  namespaceSelector: {matchNames: [inference]}\n"),
    # matchNames says where the unnamespaced Service is applied (kubernetes/examples: `kubectl apply -n`)
    deployment() + service() + service_monitor(namespace="monitoring",
                                               extra="  namespaceSelector: {matchNames: [vllm-example]}\n"),
    # neither the monitor nor the Service says a namespace
    deployment() + service() + service_monitor(),
    # nothing in the run the monitor is meant for
    deployment() + service() + service_monitor("{matchLabels: {app: grafana}}"),
    deployment() + pod_monitor("{matchLabels: {app: grafana}}"),
    # a monitor of something else that the run holds (a non-vLLM Service with its own port names)
    deployment() + service() + service_monitor("{matchLabels: {app: exporter}}", "{port: metrics}") +
    service(labels="{app: exporter}", selector="{app: exporter}", ports="[{name: metrics, port: 9100}]"),
    # operator labels: KubeRay head Service, KServe predictor, LWS headless Service, production-stack
    deployment() + service_monitor("{matchLabels: {ray.io/node-type: head}}", "{port: metrics}"),
    deployment() + service_monitor("{matchLabels: {serving.kserve.io/inferenceservice: llm}}"),
    deployment() + service_monitor("{matchLabels: {leaderworkerset.sigs.k8s.io/name: vllm}}"),
    deployment() + service_monitor("{matchExpressions: [{key: release, operator: In, values: [test, router]}]}",
                                   "{port: service-port}"),
    deployment() + pod_monitor("{matchLabels: {app.kubernetes.io/name: vllm}}"),
    # PodMonitor: declared port name, a number on PodMonitoring, Istio's sidecar port
    deployment(ports="[{name: http, containerPort: 8000}]") + pod_monitor(),
    deployment() + pod_monitor(endpoint="{port: 8000}", kind="PodMonitoring", api="monitoring.googleapis.com/v1",
                               field="endpoints"),
    deployment() + pod_monitor(endpoint="{port: http-envoy-prom}"),
    deployment(ports="[{name: http, containerPort: 8000}]") + pod_monitor(endpoint="{portNumber: 8000}"),
    # another group's PodMonitoring is not GKE's
    deployment() + pod_monitor(kind="PodMonitoring", api="example.com/v1", field="endpoints"),
])
def test_does_not_catch(text):
    assert found(text) == []


def test_kserve_inference_service_labels_are_copied_to_its_services():
    text = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: llm
  labels: {app: llm}
spec:
  predictor:
    containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.29.0
      command: [vllm, serve, Qwen/Qwen3-8B]
""" + service_monitor("{matchLabels: {app: llm}}")
    assert found(text) == []


def test_ray_pods_get_a_metrics_port_from_kuberay():
    text = """apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: llm}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      metadata: {labels: {app: llm}}
      spec:
        containers:
        - name: ray-head
          image: vllm/vllm-openai:v0.29.0
          command: [vllm, serve, Qwen/Qwen3-8B]
""" + pod_monitor("{matchLabels: {app: llm}}", "{port: metrics}")
    assert found(text) == []


def test_compose_and_non_vllm_runs_are_silent():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx:1.27}
""" + service_monitor("{matchLabels: {app: web}}")
    assert found(text) == []


def test_vl301_no_longer_reports_an_unresolved_port_name():
    text = deployment() + service(ports="[{port: 8000, targetPort: 8000}]") + service_monitor()
    assert [f.code for f in lint(text, ("VL301", "VL806"))] == ["VL806"]


def test_vl301_suppression_covers_vl806_for_one_release():
    text = deployment() + service(ports="[{port: 8000, targetPort: 8000}]") + """---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: mon}
spec:
  selector: {matchLabels: {app: vllm}}
  endpoints:
  - port: http  # vllmlint: disable=VL301 -- scraped elsewhere
"""
    result = lint_text(text, "example.yaml", LintOptions())
    assert [f.code for f in result.findings if f.code in ("VL301", "VL806")] == []
    assert [f.code for f in result.suppressed] == ["VL806"]
    assert [(n.code, n.line, n.message) for n in result.notices if n.code == "VL008"] == [
        ("VL008", 28, "VL301 suppressions cover VL806 monitor-selects-nothing for this release only: write VL806")]


def test_data_matches_its_schema():
    data = load_yaml_data(knowledge_dir() / "monitor-targets.yaml")
    schema = json.loads((schemas_dir() / "monitor-targets.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    assert all(entry["source"] for entry in data["operators"])


def test_the_unsafe_fix_names_the_port_that_reaches_the_api_port():
    text = deployment() + service(ports="[{name: api, port: 80, targetPort: 8000}]") + \
        service_monitor(endpoint="{port: metrics}")
    (finding,) = lint(text)
    assert finding.fix is not None and finding.fix.safety == "unsafe"
    assert "scrape Service port `api`" in finding.fix.description
    # an unnamed port, or no port to the API port: no fix
    assert lint(deployment() + service(ports="[{port: 8000}]") + service_monitor())[0].fix is None
    assert lint(deployment() + service(ports="[{name: nccl, port: 29500}]") + service_monitor())[0].fix is None


def test_operator_pods_may_carry_labels_their_template_does_not_show():
    """KubeRay merges a group's `labels` into its pods (ray-operator/controllers/ray/common/pod.go:235)."""
    text = """apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: llm, labels: {team: llm}}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: vllm/vllm-openai:v0.29.0
          command: [vllm, serve, Qwen/Qwen3-8B]
""" + pod_monitor("{matchLabels: {team: llm}}", "{port: metrics}")
    assert found(text) == []
