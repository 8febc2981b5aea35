"""VL608 shm-missing: catches / does not catch, with the position of every finding, and the fix it proposes
(a memory-backed emptyDir with a sizeLimit, never hostIPC)."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL608"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL608"]


def pod(extra_spec="", mounts="", command="[vllm, serve, Qwen/Qwen3-32B, --tensor-parallel-size, '4']", gpus=4):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
{extra_spec}  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: {command}
    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
{mounts}"""


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity) for f in lint(text, filename)]


MEMORY = """    volumeMounts: [{name: dshm, mountPath: /dev/shm}]
  volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 16Gi}}]
"""
DISK = """    volumeMounts: [{name: dshm, mountPath: /dev/shm}]
  volumes: [{name: dshm, emptyDir: {}}]
"""


# --- catches -----------------------------------------------------------------------------------------
def test_default_shm_with_tp():
    assert found(pod()) == [(8, 44, Severity.WARNING)]


def test_message_proposes_a_sized_memory_emptydir_not_host_ipc():
    (finding,) = lint(pod())
    assert finding.message.startswith("TP 4 x PP 1 workers need shared memory, but the container has only the "
                                      "runtime's default 64 MB /dev/shm. They exchange tensors through it")
    assert "mount an `emptyDir: {medium: Memory, sizeLimit: 16Gi}` volume at /dev/shm" in finding.message
    assert "Prefer it to `hostIPC: true`, which shares the node's IPC namespace with the pod and weakens its " \
        "isolation" in finding.message
    assert "or set hostIPC" not in finding.message


def test_disk_backed_emptydir():
    (finding,) = lint(pod(mounts=DISK))
    assert (finding.span.line, finding.span.col) == (8, 44)
    assert "is mounted from a volume that is not memory-backed. " in finding.message
    assert "crashes under load. Give the emptyDir `medium: Memory`. Fix: " in finding.message
    assert "sizeLimit: 16Gi" in finding.message


def test_compose_fix_is_unchanged():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.29.0
    command: [--model, Qwen/Qwen3-32B, --tensor-parallel-size, "2"]
"""
    (finding,) = lint(text, "compose.yaml")
    assert (finding.span.line, finding.span.col) == (4, 40)
    assert "add `ipc: host` or `shm_size: 16gb` to the service" in finding.message
    assert "hostIPC" not in finding.message


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod(mounts=MEMORY),
    pod(extra_spec="  hostIPC: true\n"),  # shm is there; VL608 does not judge isolation
    pod(command="[vllm, serve, Qwen/Qwen3-8B]", gpus=1),
    pod(command="[vllm, serve, Qwen/Qwen3-32B, --pipeline-parallel-size, '2']", gpus=1),  # one GPU per pod
])
def test_does_not_catch(text):
    assert lint(text) == []
