"""Operator resources read as vLLM workloads (issue 9, batch 2): production-stack VLLMRuntime (fields to flags
from data/operator-flags.yaml), with the position of every finding an existing rule gives inside them."""
import json
from pathlib import Path

import jsonschema
import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, Linter, lint_paths, lint_text

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "own"


def findings(text, select=("VL102",), filename="example.yaml", **options):
    result = lint_text(text, filename, LintOptions(select=list(select), **options))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings]


def world_of(text, filename="example.yaml"):
    linter = Linter(LintOptions())
    linter.add_text(text, filename, ".yaml")
    return linter.build()


def test_operator_table_is_valid():
    data = load_yaml_data(knowledge_dir() / "operator-flags.yaml")
    jsonschema.validate(data, json.loads((schemas_dir() / "operator-flags.schema.json").read_text()))


# --- production-stack VLLMRuntime ----------------------------------------------------------------------------
def runtime(model="", vllm_config="", image='{registry: "docker.io", name: "lmcache/vllm-openai:2025-05-27-v1"}',
            api="production-stack.vllm.ai/v1alpha1", annotations=""):
    return f"""apiVersion: {api}
kind: VLLMRuntime
metadata:
  name: rt{annotations}
spec:
  model:
    modelURL: meta-llama/Llama-3.1-8B-Instruct{model}
  vllmConfig:
    port: 8000{vllm_config}
  deploymentConfig:
    resources: {{gpu: "1"}}
    image: {image}
"""


def test_vllmruntime_fixture_gives_vl102_in_extra_args():
    result, _ = lint_paths([str(FIXTURES / "vllmruntime.yaml")], LintOptions(select=["VL102"]))
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL102", 25, 17, "error")]


def test_vllmruntime_argv_follows_the_controller():
    text = runtime(model="\n    maxModelLen: 4096\n    dtype: bfloat16\n    enableLoRA: true\n    maxNumSeqs: 0",
                   vllm_config="\n    enableChunkedPrefill: false\n    tensorParallelSize: 2"
                               "\n    gpuMemoryUtilization: \"0.8\"\n    extraArgs: [--seed, \"1\"]")
    (invocation,) = world_of(text).invocations
    assert invocation.container is None and invocation.owner.kind == "VLLMRuntime"
    assert [t.text for t in invocation.entry] == ["/opt/venv/bin/vllm", "serve"]
    assert [t.text for t in invocation.tokens] == [
        "meta-llama/Llama-3.1-8B-Instruct", "--host", "0.0.0.0", "--port", "8000", "--enable-lora",
        "--no-enable-chunked-prefill", "--max-model-len", "4096", "--dtype", "bfloat16",
        "--tensor-parallel-size", "2", "--gpu_memory_utilization", "0.8", "--seed", "1"]
    assert invocation.model.text == "meta-llama/Llama-3.1-8B-Instruct"
    assert invocation.image.raw == "docker.io/lmcache/vllm-openai:2025-05-27-v1"
    assert invocation.release is None  # LMCache's date tags are no vLLM release


@pytest.mark.parametrize("vllm_config, model, expected", [
    # a removed flag in extraArgs, at its item
    ("\n    extraArgs: [--swap-space, \"4\"]", "", [("VL102", 10, 17, "error")]),
    # the flag a field becomes sits at the field's key
    ("\n    enableChunkedPrefill: true", "", []),
])
def test_vllmruntime_catches(vllm_config, model, expected):
    assert findings(runtime(model, vllm_config)) == expected


def test_vllmruntime_flag_too_new_points_at_the_field():
    text = runtime(vllm_config="\n    enableChunkedPrefill: false", image="{registry: docker.io, name: vllm/vllm-openai:v0.6.4}")
    assert findings(text, select=("VL105",)) == [("VL105", 10, 5, "warning")]


def test_vllmruntime_release_from_the_annotation():
    text = runtime(vllm_config="\n    enableChunkedPrefill: false",
                   annotations="\n  annotations: {vllmlint.io/vllm-version: \"0.6.4\"}")
    assert findings(text, select=("VL105",)) == [("VL105", 11, 5, "warning")]


@pytest.mark.parametrize("text", [
    runtime(vllm_config="\n    extraArgs: [--swap-space, \"4\"]", api="example.com/v1"),  # another operator's kind
    runtime(vllm_config="\n    enableChunkedPrefill: false"),  # --no-enable-chunked-prefill exists in 0.33.0
    runtime(vllm_config="\n    tensorParallelSize: 0"),  # not written by the controller (`> 0`)
])
def test_vllmruntime_does_not_catch(text):
    assert findings(text, select=("VL102", "VL103", "VL105", "VL106")) == []


# --- AIBrix RayClusterFleet ---------------------------------------------------------------------------------
def fleet(head_args, api="orchestration.aibrix.ai/v1alpha1", command='["/bin/bash", "-lc", "--"]'):
    return f"""apiVersion: {api}
kind: RayClusterFleet
metadata: {{name: fleet}}
spec:
  template:
    spec:
      headGroupSpec:
        template:
          spec:
            containers:
            - name: ray-head
              image: vllm/vllm-openai:v0.20.0
              command: {command}
              args: [{head_args}]
      workerGroupSpecs:
      - groupName: gpu
        template:
          spec:
            containers:
            - {{name: ray-worker, image: vllm/vllm-openai:v0.20.0}}
"""


def test_rayclusterfleet_fixture_gives_vl102_inside_the_head_script():
    result, _ = lint_paths([str(FIXTURES / "rayclusterfleet.yaml")], LintOptions(select=["VL102"]))
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL102", 35, 164, "error")]


def test_rayclusterfleet_templates_are_ray_groups():
    (invocation,) = world_of(fleet('"$KUBERAY_GEN_RAY_START_CMD; vllm serve Qwen/Qwen3-8B"')).invocations
    pod = invocation.container.pod
    assert (pod.owner.kind, pod.role, invocation.release) == ("RayClusterFleet", "head", "0.20.0")
    assert [t.role for t in world_of(fleet('"x"')).templates] == ["head", "gpu"]


@pytest.mark.parametrize("head_args, command, expected", [
    ('"ray start --head; vllm serve Qwen/Qwen3-8B --swap-space 4"', '["/bin/bash", "-lc", "--"]',
     [("VL102", 14, 66, "error")]),
    ('"vllm serve Qwen/Qwen3-8B --swap-space 4"', '["/bin/bash", "-c"]', [("VL102", 14, 48, "error")]),
])
def test_rayclusterfleet_catches(head_args, command, expected):
    assert findings(fleet(head_args, command=command)) == expected


@pytest.mark.parametrize("text", [
    fleet('"vllm serve Qwen/Qwen3-8B --swap-space 4"', api="example.com/v1"),  # not AIBrix's kind
    fleet('"vllm serve Qwen/Qwen3-8B --max-model-len 4096"'),
    fleet('"vllm serve Qwen/Qwen3-8B --swap-space 4"', command='["/bin/bash", "-l"]'),  # no -c: a script file
])
def test_rayclusterfleet_does_not_catch(text):
    assert findings(text) == []


def test_bash_c_double_dash_script_index():
    from vllmlint.source.shell import script_from_shell_args

    assert script_from_shell_args(["/bin/bash", "-lc", "--", "echo hi"]) == 3
    assert script_from_shell_args(["bash", "-c", "echo hi"]) == 2
    assert script_from_shell_args(["bash", "-c", "--"]) is None
