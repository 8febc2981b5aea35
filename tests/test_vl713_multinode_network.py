"""VL713 multinode-network: catches / does not catch, with the position of every finding."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent

SERVE = ("vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 16 --nnodes 2 "
         "--node-rank ${HOSTNAME##*-} --master-addr vllm-0.vllm --master-port 29500")


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL713"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL713"]


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


def sts(probe="readinessProbe: {httpGet: {path: /health, port: 8000}}", policy="", replicas=2, serve=SERVE,
        env="[]", spec_extra="", image="vllm/vllm-openai:v0.11.0", gpus=8):
    return f"""apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: vllm}}
spec:
  serviceName: vllm
  replicas: {replicas}
  {policy or "minReadySeconds: 0"}
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      {spec_extra or "terminationGracePeriodSeconds: 30"}
      containers:
      - name: vllm
        image: {image}
        command: [sh, -c, "{serve}"]
        env: {env}
        {probe or "ports: [{containerPort: 8000}]"}
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


HEADLESS = """---
apiVersion: v1
kind: Service
metadata: {name: vllm}
spec:
  clusterIP: None
  selector: {app: vllm}
  ports: [{port: 29500}]
"""


# --- catches: the ordered start ----------------------------------------------------------------------
def test_ordered_ready_with_an_api_readiness_probe():
    assert found(sts()) == [(18, 57, Severity.ERROR, "vllm:OrderedReady")]


@pytest.mark.parametrize("probe", ["startupProbe: {httpGet: {path: /health, port: 8000}, failureThreshold: 60}",
                                   "readinessProbe: {tcpSocket: {port: 8000}}",
                                   "readinessProbe: {httpGet: {path: /v1/models, port: http}}\n        ports: [{containerPort: 8000, name: http}]"])
def test_ordered_ready_probe_forms(probe):
    assert [v for *_, v in found(sts(probe))] == ["vllm:OrderedReady"]


def test_explicit_ordered_ready_and_world_size_beyond_the_gpus():
    serve = "vllm serve /models/m --tensor-parallel-size 16 --port 9000"
    text = sts("readinessProbe: {httpGet: {path: /health, port: 9000}}", "podManagementPolicy: OrderedReady", serve=serve)
    (finding,) = lint(text)
    assert "pod 1 is never created" in finding.message and "port 9000" in finding.message


def test_lws_leader_ready():
    text = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  startupPolicy: LeaderReady
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
        - name: leader
          image: vllm/vllm-openai:v0.11.0
          command: [vllm, serve, m/m, --tensor-parallel-size, "16", --nnodes, "2", --node-rank, "0"]
          readinessProbe: {httpGet: {path: /health, port: 8000}}
          resources: {limits: {nvidia.com/gpu: 8}}
    workerTemplate:
      spec:
        containers:
        - name: worker
          image: vllm/vllm-openai:v0.11.0
          command: [vllm, serve, m/m, --tensor-parallel-size, "16", --nnodes, "2", --node-rank, "1", --headless]
          resources: {limits: {nvidia.com/gpu: 8}}
"""
    assert found(text) == [(14, 59, Severity.ERROR, "vllm:LeaderReady")]


# --- catches: the headless Service -------------------------------------------------------------------
def test_headless_service_hides_pod_zero():
    text = sts(policy="podManagementPolicy: Parallel") + HEADLESS
    assert found(text) == [(16, 152, Severity.ERROR, "vllm:vllm-0.vllm")]


def test_headless_and_ordered_ready_both_reported():
    assert [v for *_, v in found(sts() + HEADLESS)] == ["vllm:vllm-0.vllm", "vllm:OrderedReady"]


# --- catches: interfaces -----------------------------------------------------------------------------
def test_host_network_without_interface_variables():
    text = sts(probe="", spec_extra="hostNetwork: true")
    assert found(text) == [(12, 20, Severity.INFO, "vllm:NCCL_SOCKET_IFNAME,GLOO_SOCKET_IFNAME")]


def test_multus_with_only_nccl():
    text = sts(probe="", env="[{name: NCCL_SOCKET_IFNAME, value: net1}]").replace(
        "metadata: {labels: {app: vllm}}",
        "metadata: {labels: {app: vllm}, annotations: {k8s.v1.cni.cncf.io/networks: roce-net}}")
    assert found(text) == [(10, 80, Severity.INFO, "vllm:GLOO_SOCKET_IFNAME")]


# --- catches: VLLM_HOST_IP ---------------------------------------------------------------------------
def test_one_literal_host_ip_for_two_pods():
    text = sts(probe="", env="[{name: VLLM_HOST_IP, value: 10.0.0.5}]")
    assert found(text) == [(17, 43, Severity.ERROR, "VLLM_HOST_IP=10.0.0.5")]


LEGACY_SERVE = "python3 -m vllm.entrypoints.openai.api_server --model m/m --tensor-parallel-size 16"


def test_host_ip_ignored_from_065_is_info():
    env = "[{name: HOST_IP, value: 10.0.0.5}]"
    text = sts(probe="", serve=LEGACY_SERVE, env=env, image="vllm/vllm-openai:v0.6.6")
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == \
        (17, 38, Severity.INFO, "HOST_IP:0.6.6")
    assert "status.podIP" in finding.message and "Rename" not in finding.message
    assert "status.hostIP" not in finding.message
    assert lint(sts(probe="", serve=LEGACY_SERVE, env=env, image="vllm/vllm-openai:v0.6.4.post1")) == []


def test_host_ip_from_a_configmap_is_info():
    config = """apiVersion: v1
kind: ConfigMap
metadata: {name: net}
data: {HOST_IP: 10.0.0.5}
---
"""
    env = "[{name: HOST_IP, valueFrom: {configMapKeyRef: {name: net, key: HOST_IP}}}]"
    text = config + sts(probe="", serve=LEGACY_SERVE, env=env, image="vllm/vllm-openai:v0.10.1.1")
    assert found(text) == [(22, 15, Severity.INFO, "HOST_IP:0.10.1.1")]


OTEL = "{name: OTEL_EXPORTER_OTLP_ENDPOINT, value: 'http://$(HOST_IP):4317'}"


@pytest.mark.parametrize("env, extra", [
    # the node agent's address (the reviewer's case): a fieldRef, and referenced by another value
    (f"[{{name: HOST_IP, valueFrom: {{fieldRef: {{fieldPath: status.hostIP}}}}}}, {OTEL}]", ""),
    ("[{name: HOST_IP, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}]", ""),
    ("[{name: HOST_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]", ""),
    # a literal that another value refers to
    (f"[{{name: HOST_IP, value: 10.0.0.5}}, {OTEL}]", ""),
    # another container of the pod sets it too
    ("[{name: HOST_IP, value: 10.0.0.5}]",
     "      - {name: otel-agent, image: 'otel/opentelemetry-collector:0.110.0', env: [{name: HOST_IP, value: 10.0.0.5}]}\n"),
    # another container's command uses it
    ("[{name: HOST_IP, value: 10.0.0.5}]",
     "      - {name: statsd, image: 'busybox:1.36', command: [sh, -c, 'nc -u $HOST_IP 8125']}\n"),
])
def test_host_ip_for_something_else_is_silent(env, extra):
    text = sts(probe="", serve=LEGACY_SERVE, env=env, image="vllm/vllm-openai:v0.10.1.1") + extra
    assert lint(text) == []


def test_host_ip_used_by_the_serve_script_is_silent():
    serve = LEGACY_SERVE + " --otlp-traces-endpoint http://$HOST_IP:4317"
    text = sts(probe="", serve=serve, env="[{name: HOST_IP, value: 10.0.0.5}]", image="vllm/vllm-openai:v0.10.1.1")
    assert lint(text) == []


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    sts(probe=""),  # OrderedReady without a probe: the start is only staggered
    sts(policy="podManagementPolicy: Parallel"),
    sts(probe="livenessProbe: {httpGet: {path: /health, port: 8000}}"),  # liveness does not gate readiness
    sts(probe="readinessProbe: {exec: {command: [cat, /tmp/ready]}}"),
    sts(probe="readinessProbe: {httpGet: {path: /health, port: 9090}}"),  # another port (a sidecar's)
    sts(replicas=1),
    sts(serve="vllm serve m/m --tensor-parallel-size 8"),  # fits in one pod: independent replicas
    sts(serve="vllm serve m/m --tensor-parallel-size $(TP)"),
    sts(policy="podManagementPolicy: Parallel")
    + HEADLESS.replace("clusterIP: None", "clusterIP: None\n  publishNotReadyAddresses: true"),
    sts(policy="podManagementPolicy: Parallel") + HEADLESS.replace("clusterIP: None", "type: ClusterIP"),
    sts(policy="podManagementPolicy: Parallel", serve=SERVE.replace("vllm-0.vllm", "$(MASTER)")) + HEADLESS,
    sts(policy="podManagementPolicy: Parallel", probe="") + HEADLESS,
    sts(probe="", spec_extra="hostNetwork: true",
        env="[{name: NCCL_SOCKET_IFNAME, value: eth0}, {name: GLOO_SOCKET_IFNAME, value: eth0}]"),
    sts(probe="", spec_extra="hostNetwork: true", serve="export NCCL_SOCKET_IFNAME=eth0 GLOO_SOCKET_IFNAME=eth0; " + SERVE),
    sts(probe="", spec_extra="hostNetwork: true", env="[]\n        envFrom: [{configMapRef: {name: nccl-env}}]"),
    sts(probe="", spec_extra="hostNetwork: false"),
    sts(probe="", env="[{name: VLLM_HOST_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]"),
    sts(probe="", env="[{name: VLLM_HOST_IP, value: $(POD_IP)}]"),
    sts(probe="", replicas=1, env="[{name: VLLM_HOST_IP, value: 10.0.0.5}]"),
])
def test_silent(text):
    assert lint(text) == []


def test_single_pod_deployment_on_host_network_is_not_multi_node():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      hostNetwork: true
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: [vllm, serve, Qwen/Qwen3-32B, --tensor-parallel-size, "4"]
        env: [{name: VLLM_HOST_IP, value: 10.0.0.5}]
        resources: {limits: {nvidia.com/gpu: 4}}
"""
    assert lint(text) == []


def test_chapters_and_own_fixtures():
    for chapter in ("audited", "original", "own"):
        linter = Linter(LintOptions(select=["VL713"]))
        for path in sorted((ROOT / "fixtures" / chapter).iterdir()):
            if path.is_file():
                linter.add_file(path, path.name)
        assert [f for f in linter.run().findings if f.code == "VL713"] == [], chapter  # VL001 of broken.yaml is never hidden


def test_more_ranks_than_gpus_in_a_deployment_is_not_called_multi_node():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      hostNetwork: true
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: [vllm, serve, Qwen/Qwen3-32B, --tensor-parallel-size, "8"]
        resources: {limits: {nvidia.com/gpu: 4}}
"""
    assert lint(text) == []


def test_kuberay_cluster_on_host_network():
    text = """apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: vllm}
spec:
  headGroupSpec:
    rayStartParams: {dashboard-host: 0.0.0.0}
    template:
      spec:
        hostNetwork: true
        containers:
        - name: ray-head
          image: vllm/vllm-openai:v0.10.1
          command: [sh, -c, "ray start --head --block & sleep 30; vllm serve m/m --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray"]
          env: [{name: NCCL_SOCKET_IFNAME, value: eth0}, {name: GLOO_SOCKET_IFNAME, value: eth0}]
          resources: {limits: {nvidia.com/gpu: 8}}
  workerGroupSpecs:
  - groupName: gpu
    replicas: 1
    rayStartParams: {}
    template:
      spec:
        hostNetwork: true
        containers:
        - name: ray-worker
          image: vllm/vllm-openai:v0.10.1
          resources: {limits: {nvidia.com/gpu: 8}}
"""
    assert found(text) == [(22, 22, Severity.INFO, "ray-worker:NCCL_SOCKET_IFNAME,GLOO_SOCKET_IFNAME")]
