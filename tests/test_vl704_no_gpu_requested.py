"""VL704 no-gpu-requested: catches / does not catch, with the position of every finding."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL704"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL704"]


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, filename)]


def pod(resources="{limits: {cpu: '8'}}", image="vllm/vllm-openai:v0.10.1", spec="", annotations="{}",
        command="[vllm, serve, Qwen/Qwen3-8B]", env="[]", kind="Pod"):
    return f"""apiVersion: v1
kind: {kind}
metadata: {{name: vllm, annotations: {annotations}}}
spec:
{spec}  containers:
  - name: vllm
    image: {image}
    command: {command}
    env: {env}
    resources: {resources}
"""


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.10.1", "vllm/vllm-openai:latest", "vllm/vllm-openai",
                                   "docker.io/vllm/vllm-openai:v0.29.0-cu129", "vllm/vllm-openai:v0.26.0-ubuntu2404",
                                   "vllm/vllm-openai@sha256:" + "a" * 64, "lmcache/vllm-openai:latest"])
def test_cuda_image_without_gpu(image):
    assert found(pod(image=image)) == [(7, 12, Severity.WARNING, f"no-gpu:{image}")]


@pytest.mark.parametrize("resources", ["{}", "{requests: {memory: 16Gi}}", "{limits: {ephemeral-storage: 50Gi}}",
                                       "{limits: {hugepages-2Mi: 1Gi, cpu: '8'}}",
                                       "{limits: {example.kubernetes.io/x: 1}}"])
def test_no_accelerator_resource(resources):
    assert [f[:3] for f in found(pod(resources=resources))] == [(7, 12, Severity.WARNING)]


def test_message_names_image_and_fix():
    (finding,) = lint(pod())
    assert finding.message.startswith("`vllm/vllm-openai:v0.10.1` is a CUDA build of vLLM, but the container requests "
                                      "no accelerator. It requests no `nvidia.com/gpu` or other device resource: the "
                                      "device plugin gives the container no GPU")
    assert "nvidia.com/gpu: 1" in finding.message and "Failed to infer device type" in finding.message


def test_deployment_args_only():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.9.2
        args: [--model, Qwen/Qwen3-8B]
"""
    assert found(text) == [(11, 16, Severity.WARNING, "no-gpu:vllm/vllm-openai:v0.9.2")]


def test_compose_without_reservation():
    text = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.1\n    command: [--model, Qwen/Qwen3-8B]\n"
    assert found(text, "compose.yaml") == [(3, 12, Severity.WARNING, "no-gpu:vllm/vllm-openai:v0.10.1")]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("resources", [
    "{limits: {nvidia.com/gpu: 1}}", "{requests: {nvidia.com/gpu: 1}}", "{limits: {nvidia.com/mig-1g.10gb: 1}}",
    "{limits: {nvidia.com/gpu.shared: 1}}", "{limits: {nvidia.com/gpumem: 8000}}", "{limits: {amd.com/gpu: 1}}",
    "{limits: {nvidia.com/gpu: '{{ .Values.gpus }}'}}", "{claims: [{name: gpu}]}", "'{{ .Values.resources }}'",
    "{limits: {volcano.sh/vgpu-number: 1}}", "{limits: {aliyun.com/gpu-mem: 8}}",
    # GPU-sharing resources no list names: any extended resource (a domain outside kubernetes.io) may be one
    "{limits: {koordinator.sh/gpu-core: 100}}", "{requests: {k8s.amazonaws.com/vgpu: 1}}",
    "{limits: {volcano.sh/gpu-memory: 8000}}", "{limits: {volcano.sh/gpu-number: 1}}",
    "{limits: {cpu: '8', example.com/accelerator: 1}}",
])
def test_accelerator_requested(resources):
    assert found(pod(resources=resources)) == []


@pytest.mark.parametrize("image", ["vllm/vllm-openai-cpu:v0.29.0-x86_64", "vllm/vllm-openai:v0.14.1-rocm",
                                   "vllm/vllm-openai-rocm:v0.23.0", "vllm/vllm-openai-xpu:v0.29.0",
                                   "vllm/vllm-tpu:nightly", "opea/vllm-gaudi:latest", "myorg/vllm:1.0",
                                   "registry.example.com/ml/vllm-cuda:0.10.1", "kserve/huggingfaceserver:v0.15.0"])
def test_not_a_known_cuda_build(image):
    assert found(pod(image=image)) == []


@pytest.mark.parametrize("spec", [
    "  resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]\n", "  runtimeClassName: nvidia\n",
    "  schedulerName: hami-scheduler\n", "  schedulerName: runai-scheduler\n",
])
def test_pod_level_device(spec):
    assert found(pod(spec=spec)) == []


@pytest.mark.parametrize("annotations", ["{gpu-fraction: '0.5'}", "{nvidia.com/use-gputype: A100}"])
def test_fractional_gpu_annotations(annotations):
    assert found(pod(annotations=annotations)) == []


def test_hand_set_nvidia_visible_devices_with_the_nvidia_runtime():
    assert found(pod(env="[{name: NVIDIA_VISIBLE_DEVICES, value: all}]")) == []


@pytest.mark.parametrize("command", ["[vllm, serve, m, --device, cpu]", "[vllm, serve, m, --device=neuron]",
                                     "[vllm, serve, m, --distributed-executor-backend, ray]",
                                     "[bash, -c, 'ray start --head && vllm serve m']"])
def test_work_elsewhere(command):
    assert found(pod(command=command)) == []


def test_serving_runtime_takes_resources_from_the_inference_service():
    text = """apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata: {name: vllm}
spec:
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.10.1
    args: [--model, /mnt/models]
"""
    assert found(text) == []


def test_ray_cluster_head_without_gpu():
    text = """apiVersion: ray.io/v1
kind: RayService
metadata: {name: vllm}
spec:
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers:
          - name: head
            image: vllm/vllm-openai:v0.10.1
            command: [vllm, serve, m]
"""
    assert found(text) == []


@pytest.mark.parametrize("extra", [
    "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}\n",
    "    gpus: all\n", "    runtime: nvidia\n", "    devices: [/dev/nvidia0]\n", "    extends: {file: base.yaml, service: gpu}\n",
])
def test_compose_with_device(extra):
    text = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.1\n    command: [--model, m]\n" + extra
    assert found(text, "compose.yaml") == []


def test_init_container_is_not_checked():
    text = """apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  initContainers:
  - {name: warm, image: vllm/vllm-openai:v0.10.1, command: [vllm, serve, m]}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.1
    command: [vllm, serve, m]
    resources: {limits: {nvidia.com/gpu: 1}}
"""
    assert found(text) == []


def test_a_config_file_may_send_the_work_elsewhere():
    # `--config FILE` may set `distributed-executor-backend: ray` (or `device`): not judged
    assert found(pod(command="[vllm, serve, Qwen/Qwen3-8B, --config, /etc/vllm/config.yaml]")) == []
    assert len(found(pod(command="[vllm, serve, Qwen/Qwen3-8B, --config=/etc/vllm/config.yaml]"))) == 1


def test_message_holds_for_a_pod_selecting_gpu_nodes():
    # A nodeSelector to GPU nodes without a GPU request (VL718 says to request it): no "can land on a node
    # without GPUs", which that selector rules out.
    text = pod(spec="  nodeSelector: {karpenter.k8s.aws/instance-gpu-count: '1'}\n")
    assert found(text) == [(8, 12, Severity.WARNING, "no-gpu:vllm/vllm-openai:v0.10.1")]
    (finding,) = lint(text)
    assert "can land on a node without GPUs" not in finding.message
    assert "the device plugin gives the container no GPU" in finding.message


@pytest.mark.parametrize("env", ["[NVIDIA_VISIBLE_DEVICES=all]", "{NVIDIA_VISIBLE_DEVICES: all}",
                                 "[NVIDIA_VISIBLE_DEVICES=0,1]"])
def test_compose_nvidia_visible_devices_like_kubernetes(env):
    # The NVIDIA default-runtime pattern: the runtime exposes the devices NVIDIA_VISIBLE_DEVICES names.
    text = f"services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.1\n    command: [--model, m]\n    environment: {env}\n"
    assert found(text, "compose.yaml") == []
    hidden = text.replace("=all]", "=void]").replace(": all}", ": void}").replace("=0,1]", "=]")
    assert found(hidden, "compose.yaml") == [(3, 12, Severity.WARNING, "no-gpu:vllm/vllm-openai:v0.10.1")]


def test_the_fix_prints_the_computed_gpu_count():
    text = pod(command="[vllm, serve, Qwen/Qwen3-8B, --tensor-parallel-size, '2']")
    assert found(text) == [(7, 12, Severity.WARNING, "no-gpu:vllm/vllm-openai:v0.10.1")]
    (finding,) = lint(text)
    assert "`resources.limits: {nvidia.com/gpu: 2}` (vLLM needs 2 here: TP 2 x PP 1)" in finding.message
    assert "as many as" not in finding.message and "nvidia.com/gpu: 1" not in finding.message
    (one,) = lint(pod())
    assert one.message.endswith("Fix: request one: `resources.limits: {nvidia.com/gpu: 1}`.")
    compose = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.1\n"
               "    command: [--model, m, --pipeline-parallel-size, '2']\n")
    (finding,) = lint(compose, "compose.yaml")
    assert "count: 2, capabilities: [gpu]}]` (or `gpus: all`) (vLLM needs 2 here: TP 1 x PP 2)" in finding.message
    unknown = pod(command="[vllm, serve, Qwen/Qwen3-8B, --tensor-parallel-size, $(TP)]")
    (finding,) = lint(unknown)
    assert "(as many as --tensor-parallel-size x --pipeline-parallel-size)" in finding.message
