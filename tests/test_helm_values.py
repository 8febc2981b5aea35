"""Helm values of vLLM production-stack (vllm-stack) and llm-d-modelservice read without rendering the chart: a values
file recognised by its keys gives the vLLM invocations the chart's templates write, with every token at its node in
the values file, so the rules report on the values file's lines (data/chart-values.yaml)."""
import json

import jsonschema
import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.source.helm_values import LLM_D_MODELSERVICE, PRODUCTION_STACK, go_float, recognise
from vllmlint.source.yamlmodel import SourceFile, parse_documents


def where(text, filename="values.yaml", select=None, **options):
    result = lint_text(text, filename, LintOptions(select=select, **options))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.code, f.span.line, f.span.col, f.value) for f in result.findings]


def invocations(text, filename="values.yaml"):
    linter = Linter()
    linter.add_text(text, filename, "." + filename.rsplit(".", 1)[-1])
    return linter.build().invocations


def argv(invocation):
    """The argv as (text, line, col) with None for what the chart writes by itself."""
    return [(t.text, t.span.line, t.span.col) if t.source is not None else (t.text, None, None)
            for t in invocation.entry + invocation.tokens]


def root_of(text):
    documents, _ = parse_documents(SourceFile("v.yaml", text, "v.yaml"))
    return documents[0].root


# Shaped like production-stack's tutorials/assets/values-02-basic-config.yaml (vllm-stack 0.1.12).
STACK = """\
servingEngineSpec:
  runtimeClassName: ""
  modelSpec:
  - name: "llama3"
    repository: "vllm/vllm-openai"
    tag: "v0.11.0"
    modelURL: "meta-llama/Llama-3.1-8B-Instruct"
    replicaCount: 1
    requestCPU: 10
    requestMemory: "16Gi"
    requestGPU: 1
    vllmConfig:
      enableChunkedPrefill: false
      enablePrefixCaching: true
      maxModelLen: 4096
      gpuMemoryUtilization: 0.90
      extraArgs: ["--max-seq-len-to-capture", "8192"]
    hf_token: hf_xxx
"""


# --- recognising a values file --------------------------------------------------------------------------------
def test_recognised_by_its_keys_whatever_its_name():
    assert recognise(root_of(STACK)) == PRODUCTION_STACK
    assert recognise(root_of(LLM_D)) == LLM_D_MODELSERVICE
    for name in ("values.yaml", "my-llama.yml", "prod.yaml"):
        assert len(invocations(STACK, name)) == 1, name


def test_not_recognised_without_the_keys():
    assert recognise(root_of("servingEngineSpec:\n  enableEngine: true\n")) is None  # no modelSpec list
    assert recognise(root_of("servingEngineSpec:\n  modelSpec:\n  - name: a\n")) is None  # no model entry
    assert recognise(root_of("modelArtifacts:\n  name: m\n")) is None  # no decode/prefill containers
    assert recognise(root_of("kind: ConfigMap\napiVersion: v1\nservingEngineSpec:\n  modelSpec:\n"
                             "  - modelURL: m\n")) is None  # a Kubernetes object is not a values file
    assert recognise(root_of("services:\n  vllm:\n    image: vllm/vllm-openai:v0.8.5\n")) is None


def test_data_file_matches_its_schema():
    data = load_yaml_data(knowledge_dir() / "chart-values.yaml")
    jsonschema.validate(data, json.loads((schemas_dir() / "chart-values.schema.json").read_text()))
    assert data["production_stack"]["tag"] == "vllm-stack-0.1.12"
    assert data["llm_d_modelservice"]["tag"] == "llm-d-modelservice-v0.4.12"


# --- production-stack: the argv the template writes -------------------------------------------------------------
def test_production_stack_argv_in_the_templates_order_at_the_values_nodes():
    (found,) = invocations(STACK)
    assert found.owner.kind == "modelSpec" and found.owner.name == "llama3"
    assert found.image.raw == "vllm/vllm-openai:v0.11.0" and found.release == "0.11.0"
    assert argv(found) == [
        ("vllm", None, None), ("serve", None, None), ("meta-llama/Llama-3.1-8B-Instruct", 7, 15),
        ("--host", None, None), ("0.0.0.0", None, None), ("--port", None, None), ("8000", None, None),
        ("--no-enable-chunked-prefill", 13, 7),  # false writes the negative flag, at the key
        ("--enable-prefix-caching", 14, 7), ("--max-model-len", 15, 7), ("4096", 15, 20),
        ("--gpu_memory_utilization", 16, 7), ("0.9", 16, 29),  # underscores, and Go's %v of the number
        ("--max-seq-len-to-capture", 17, 19), ("8192", 17, 47)]
    assert found.owner.env == [("HF_TOKEN", None, found.owner.node.key_node("hf_token"))]
    resource, count, node = found.owner.gpu
    assert (resource, count, node.start) == ("nvidia.com/gpu", 1, found.owner.node.get("requestGPU").start)


def test_lmcache_image_runs_its_own_vllm_path():
    text = STACK.replace('"vllm/vllm-openai"', '"lmcache/vllm-openai"')
    (found,) = invocations(text)
    assert [t.text for t in found.entry] == ["/opt/venv/bin/vllm", "serve"]


def test_catches_a_removed_flag_in_extra_args():
    assert where(STACK, select=["VL102"]) == [("VL102", 17, 19, "--max-seq-len-to-capture")]


def test_catches_a_number_helm_prints_in_exponent_form():
    # Helm reads values as float64 and `quote` prints 1000000 as 1e+06 (helm/helm#12195): vLLM refuses it.
    text = STACK.replace("maxModelLen: 4096", "maxModelLen: 1000000")
    assert where(text, select=["VL106"]) == [("VL106", 15, 20, "--max-model-len=1e+06")]
    (finding,) = lint_text(text, "values.yaml", LintOptions(select=["VL106"])).findings
    assert finding.message.startswith('`--max-model-len 1e+06`: quote the number in the values file (`"1000000"`).')


def test_a_quoted_number_is_printed_as_written():
    text = STACK.replace("maxModelLen: 4096", 'maxModelLen: "1000000"')
    assert where(text, select=["VL106"]) == []


def test_catches_a_vllm_variable_the_release_ignores():
    text = STACK.replace("    hf_token: hf_xxx\n", "    env:\n      - name: VLLM_ENABLE_CUDA_COMPATIBILITY\n"
                         "        value: \"1\"\n").replace('"v0.11.0"', '"v0.8.5"').replace(
        '      extraArgs: ["--max-seq-len-to-capture", "8192"]\n', "")
    assert where(text, select=["VL109"]) == [("VL109", 18, 15, "VLLM_ENABLE_CUDA_COMPATIBILITY")]


def test_catches_a_model_that_does_not_fit_the_requested_gpus():
    text = STACK.replace("Llama-3.1-8B-Instruct", "Llama-3.1-70B-Instruct").replace(
        "    vllmConfig:\n", "    nodeSelectorTerms:\n      - matchExpressions:\n"
        "        - {key: cloud.google.com/gke-accelerator, operator: In, values: [nvidia-l4]}\n    vllmConfig:\n")
    assert [f[:3] for f in where(text, select=["VL601"])] == [("VL601", 7, 15)]


def test_does_not_catch_what_the_chart_does_not_deploy():
    assert invocations(STACK.replace('  - name: "llama3"\n', '  - name: "llama3"\n    enabled: false\n')) == []
    assert invocations(STACK.replace('  runtimeClassName: ""\n', "  enableEngine: false\n")) == []
    assert invocations(STACK.replace('  - name: "llama3"\n', '  - name: "llama3"\n    raySpec:\n'
                                     "      enabled: true\n")) == []
    assert invocations(STACK.replace('    tag: "v0.11.0"\n', "")) == []  # `required`: the chart refuses


def test_does_not_catch_the_chart_values_without_findings():
    # Recreate: the chart's default rollout (maxSurge 100%, maxUnavailable 0) would need a spare GPU (VL707)
    text = STACK.replace('      extraArgs: ["--max-seq-len-to-capture", "8192"]\n', "").replace(
        '  runtimeClassName: ""\n', '  runtimeClassName: ""\n  strategy: {type: Recreate}\n')
    # `hf_token: hf_xxx` is a placeholder the chart would store in its Secret (VL802 info, at the value)
    assert [f[:3] for f in where(text)] == [("VL802", 18, 15)]
    assert [f[:3] for f in where(STACK.replace('      extraArgs: ["--max-seq-len-to-capture", "8192"]\n', ""))] == [
        ("VL707", 8, 5), ("VL802", 17, 15)]


# --- llm-d modelservice ------------------------------------------------------------------------------------------
# Shaped like llm-d-modelservice's examples/values-pd.yaml (chart v0.4.12).
LLM_D = """\
multinode: false

modelArtifacts:
  name: Qwen/Qwen3-8B
  labels:
    llm-d.ai/inference-serving: "true"
  uri: hf://"{{ .Values.modelArtifacts.name }}"
  size: 20Gi

routing:
  servicePort: 8000

decode:
  create: true
  replicas: 1
  parallelism:
    tensor: 2
  containers:
  - name: "vllm"
    image: "vllm/vllm-openai:v0.11.0"
    modelCommand: vllmServe
    args:
      - "--max-seq-len-to-capture"
      - "4096"
    env:
      - name: VLLM_NIXL_SIDE_CHANNEL_PORT
        value: "5600"
    mountModelVolume: true
"""


def test_llm_d_argv_and_the_model_from_the_uri_template():
    (found,) = invocations(LLM_D)
    assert found.owner.kind == "decode" and found.owner.name == "vllm"
    assert argv(found) == [
        ("vllm", None, None), ("serve", None, None), ("Qwen/Qwen3-8B", 7, 8),
        ("--port", None, None), ("8200", None, None),  # the routing proxy's target port (decode)
        ("--tensor-parallel-size", 17, 5), ("2", 17, 13),
        ("--served-model-name", 4, 3), ("Qwen/Qwen3-8B", 4, 9),
        ("--max-seq-len-to-capture", 23, 9), ("4096", 24, 9)]
    resource, count, node = found.owner.gpu
    assert (resource, count, node.start) == ("nvidia.com/gpu", 2, found.tokens[4].start)  # tensor x dataLocal


def test_llm_d_values_with_template_strings_are_read_not_skipped():
    result = lint_text(LLM_D, "values.yaml", LintOptions(select=["VL102"]))
    assert not [n for n in result.notices if n.code == "VL002"] and result.invocations == 1


def test_llm_d_catches_a_removed_flag_in_args():
    assert where(LLM_D, select=["VL102"]) == [("VL102", 23, 9, "--max-seq-len-to-capture")]


def test_llm_d_catches_a_model_that_does_not_fit():
    text = LLM_D.replace("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-70B-Instruct").replace(
        "    tensor: 2\n", "    tensor: 1\n  acceleratorTypes:\n    labelKey: cloud.google.com/gke-accelerator\n"
        "    labelValues: [nvidia-l4]\n")
    assert [f[:3] for f in where(text, select=["VL601"])] == [("VL601", 7, 8)]


def test_llm_d_custom_command_is_read_as_written():
    text = LLM_D.replace("    modelCommand: vllmServe\n", '    command: ["vllm", "serve", "Qwen/Qwen3-8B"]\n')
    (found,) = invocations(text)
    assert argv(found)[:3] == [("vllm", 21, 15), ("serve", 21, 23), ("Qwen/Qwen3-8B", 21, 32)]
    assert where(text, select=["VL102"]) == [("VL102", 23, 9, "--max-seq-len-to-capture")]


def test_llm_d_does_not_catch_roles_the_chart_does_not_render():
    assert invocations(LLM_D.replace("  create: true\n", "  create: false\n")) == []
    assert invocations(LLM_D + "requester:\n  enable: true\n") == []
    # no modelCommand: `custom`, which needs a command the container does not have
    assert invocations(LLM_D.replace("    modelCommand: vllmServe\n", "")) == []


def test_llm_d_gpu_from_limits_and_none_for_cpu():
    text = LLM_D.replace("    mountModelVolume: true\n", "    resources:\n      limits:\n"
                         "        nvidia.com/gpu: 4\n    mountModelVolume: true\n")
    (found,) = invocations(text)
    assert found.owner.gpu[:2] == ("nvidia.com/gpu", 4)
    (found,) = invocations(LLM_D + "accelerator:\n  type: cpu\n")
    assert found.owner.gpu is None


# --- reading values as Helm does ---------------------------------------------------------------------------------
@pytest.mark.parametrize("number, text", [(1000000, "1e+06"), (1048576, "1.048576e+06"), (131072, "131072"),
                                          (0.9, "0.9"), (0.95, "0.95"), (4096, "4096"), (1e-05, "1e-05"),
                                          (0, "0"), (-2, "-2")])
def test_numbers_print_as_go_prints_a_float64(number, text):
    assert go_float(number) == text


def test_fixtures_report_on_the_values_files_lines():
    from conftest import FIXTURES
    from vllmlint.engine import lint_paths

    result, _ = lint_paths([str(FIXTURES / "own" / "helm-values-vllm-stack.yaml"),
                            str(FIXTURES / "own" / "helm-values-llm-d.yaml")])
    assert {(f.path.rsplit("/", 1)[-1], f.span.line, f.span.col, f.code) for f in result.findings} == {
        ("helm-values-vllm-stack.yaml", 20, 20, "VL106"),  # maxModelLen: 1000000 reaches vLLM as 1e+06
        ("helm-values-vllm-stack.yaml", 25, 15, "VL109"),  # VLLM_ENABLE_CUDA_COMPATIBILITY: 0.8.5 ignores it
        ("helm-values-llm-d.yaml", 10, 8, "VL601"),  # Qwen3-32B on one L4 (acceleratorTypes, tensor 1)
        ("helm-values-llm-d.yaml", 31, 9, "VL102"),  # --max-seq-len-to-capture: removed in 0.11.0
        ("helm-values-llm-d.yaml", 21, 3, "VL707"),  # no decode.strategy: Kubernetes's 25%/25% surges a GPU pod
        ("helm-values-llm-d.yaml", 27, 5, "VL705"),  # info: no resources, the chart adds only the GPU (BestEffort)
    }


def test_catches_an_unpinned_image_at_the_value_naming_its_tag():
    text = STACK.replace('"v0.11.0"', '"latest"')
    assert where(text, select=["VL201"]) == [("VL201", 6, 10, "vllm/vllm-openai:latest")]
    text = LLM_D.replace('"vllm/vllm-openai:v0.11.0"', '"ghcr.io/llm-d/llm-d-cuda:latest"')
    assert where(text, select=["VL201"]) == [("VL201", 20, 12, "ghcr.io/llm-d/llm-d-cuda:latest")]


def test_does_not_catch_a_pinned_image():
    assert where(STACK, select=["VL201"]) == [] and where(LLM_D, select=["VL201"]) == []


def test_hostile_numbers_are_unknown_not_believed():
    text = STACK.replace("requestGPU: 1", "requestGPU: 99999999999999999999999").replace(
        "maxModelLen: 4096", "maxModelLen: 1e400")
    (found,) = invocations(text)
    assert found.owner.gpu is None
    assert where(text, select=["VL601", "VL606"]) == []


def test_release_from_the_entry_annotations_the_chart_copies_to_its_deployment():
    text = STACK.replace('"v0.11.0"', '"latest"').replace(
        '    replicaCount: 1\n', '    replicaCount: 1\n    annotations:\n      vllmlint.io/vllm-version: "0.10.2"\n')
    (found,) = invocations(text)
    assert (found.release, found.release_origin) == ("0.10.2", "annotation vllmlint.io/vllm-version")
    assert where(text, select=["VL102"]) == []  # --max-seq-len-to-capture is still accepted by 0.10.2
