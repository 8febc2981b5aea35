"""Issue 9: the GPUs an operator's controller requests for the pod it builds count like a container's request.
production-stack's VLLMRuntime requests `spec.deploymentConfig.resources.gpu` of `gpuType` (default
nvidia.com/gpu; data/operator-flags.yaml `gpu`), so VL606 compares it with the parallel sizes, at that field."""
import pytest

from vllmlint.capacity.workload import workloads
from vllmlint.engine import LintOptions, Linter, lint_text


def runtime(gpu='"4"', tp="2", gpu_type=""):
    return f"""apiVersion: production-stack.vllm.ai/v1alpha1
kind: VLLMRuntime
metadata:
  name: rt
spec:
  model:
    modelURL: meta-llama/Llama-3.1-8B-Instruct
  vllmConfig:
    port: 8000
    tensorParallelSize: {tp}
  deploymentConfig:
    resources:
      gpu: {gpu}{gpu_type}
    image: {{registry: docker.io, name: "vllm/vllm-openai:v0.10.0"}}
"""


def findings(text):
    result = lint_text(text, "rt.yaml", LintOptions(select=["VL606"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.code, f.span.line, f.span.col, f.severity.label, f.message) for f in result.findings]


def test_gpu_count_is_the_requested_accelerator():
    linter = Linter(LintOptions())
    linter.add_text(runtime(), "rt.yaml", ".yaml")
    (work,) = workloads(linter.build())
    resource, count, node = work.gpu_resource
    assert (resource, count, node.source.line_col(node.start)) == ("nvidia.com/gpu", 4, (13, 12))


def test_gpu_type_names_the_resource():
    linter = Linter(LintOptions())
    linter.add_text(runtime(gpu_type="\n      gpuType: amd.com/gpu"), "rt.yaml", ".yaml")
    (work,) = workloads(linter.build())
    assert work.gpu_resource[:2] == ("amd.com/gpu", 4)


@pytest.mark.parametrize("gpu, tp, expected", [
    ('"4"', "2", [("VL606", 13, 12, "warning",
                   "the pod requests 4 nvidia.com/gpu but vLLM uses only 2 of them (TP 2 x PP 1): 2 GPUs stay idle "
                   "and blocked for other pods. Request 2, or raise --tensor-parallel-size / "
                   "--data-parallel-size-local to use them.")]),
    ('"1"', "2", [("VL606", 13, 12, "error",
                   "the pod requests 1 nvidia.com/gpu but vLLM needs 2 GPUs in it (TP 2 x PP 1): it fails at start-up "
                   "with too few devices for its workers. Request 2, or spread the ranks over pods with --nnodes "
                   "(multi-node), or lower the parallel sizes.")]),
    ('"2"', "2", []),
    ('""', "2", []),  # empty: the controller requests no GPU
    ("lots", "2", []),  # no quantity: unknown, never a guess
])
def test_vl606_on_vllmruntime(gpu, tp, expected):
    assert findings(runtime(gpu, tp)) == expected


def test_fixture_gpu_count_matches():
    from conftest import FIXTURES

    result = lint_text((FIXTURES / "own" / "vllmruntime.yaml").read_text(), "vllmruntime.yaml",
                       LintOptions(select=["VL606"]))
    assert result.findings == []  # gpu "1" for TP 1


PLACED = """apiVersion: production-stack.vllm.ai/v1alpha1
kind: VLLMRuntime
metadata:
  name: rt
spec:
  model:
    modelURL: meta-llama/Llama-3.1-70B-Instruct
    maxModelLen: 4096
  vllmConfig:
    port: 8000
    tensorParallelSize: {tp}
  deploymentConfig:
    resources:
      gpu: "{tp}"
{terms}    image: {{registry: docker.io, name: "vllm/vllm-openai:v0.10.0"}}
"""
TERMS = """    nodeSelectorTerms:
      - matchExpressions:
          - key: cloud.google.com/gke-accelerator
            operator: In
            values: [nvidia-l4]
"""


def test_node_selector_terms_place_the_pod_for_vl601():
    # The controller turns deploymentConfig.nodeSelectorTerms into the pod's required node affinity: an L4.
    result = lint_text(PLACED.format(tp=1, terms=TERMS), "rt.yaml", LintOptions(select=["VL601"]))
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL601", 7, 15, "error")]
    assert "one L4 (from node affinity)" in result.findings[0].message


@pytest.mark.parametrize("tp, terms", [(8, TERMS), (1, "")])
def test_no_vl601_when_it_fits_or_the_gpu_is_unknown(tp, terms):
    assert lint_text(PLACED.format(tp=tp, terms=terms), "rt.yaml", LintOptions(select=["VL601"])).findings == []
