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


# --- KubeRay: RayJob entrypoint, Ray Serve LLM engine_kwargs ---------------------------------------------------
def test_rayjob_and_rayservice_fixtures():
    result, _ = lint_paths([str(FIXTURES / "rayjob-entrypoint.yaml"), str(FIXTURES / "rayservice-llm.yaml")],
                           LintOptions(select=["VL102"]))
    assert sorted((Path(f.path).name, f.span.line, f.span.col, f.severity.label) for f in result.findings) == [
        ("rayjob-entrypoint.yaml", 10, 78, "error"), ("rayservice-llm.yaml", 24, 17, "error")]


def rayjob(entrypoint, runtime_env="", image="vllm/vllm-openai:v0.9.2"):
    return f"""apiVersion: ray.io/v1
kind: RayJob
metadata: {{name: job}}
spec:
  entrypoint: {entrypoint}{runtime_env}
  rayClusterSpec:
    headGroupSpec:
      template:
        spec:
          containers:
          - {{name: ray-head, image: {image}}}
"""


def test_rayjob_entrypoint_is_a_shell_command_line():
    world = world_of(rayjob('"pip list && python -m vllm.entrypoints.openai.api_server --model m --swap-space 4"'))
    (invocation,) = world.invocations
    assert (invocation.via, invocation.owner.kind, invocation.release) == ("ray-job-entrypoint", "RayJob", "0.9.2")
    assert [c.words[0] for c in world.shell_commands] == ["pip", "python"]


@pytest.mark.parametrize("text, expected", [
    (rayjob("vllm serve m --num-scheduler-steps 8", image="vllm/vllm-openai:v0.11.0"), [("VL102", 5, 28, "error")]),
    (rayjob("cd /app; vllm serve m --max-seq-len-to-capture 1", image="x/custom:1"), [("VL102", 5, 37, "error")]),
])
def test_rayjob_catches(text, expected):
    assert findings(text) == expected  # the second: release unknown, the newest catalog assumed


@pytest.mark.parametrize("text", [
    rayjob("python train.py --swap-space 4"),  # not vLLM
    rayjob("vllm serve m --num-scheduler-steps 8"),  # the head's image runs 0.9.2, which still had it
])
def test_rayjob_does_not_catch(text):
    assert findings(text) == []


def test_rayjob_runtime_env_installing_vllm_hides_the_image_release():
    text = rayjob("vllm serve m", "\n  runtimeEnvYAML: |\n    pip: [vllm==0.8.5]")
    (invocation,) = world_of(text).invocations
    assert invocation.image is None and invocation.release is None


def rayservice(kwargs, runtime_env="", image="vllm/vllm-openai:v0.11.0"):
    return f"""apiVersion: ray.io/v1
kind: RayService
metadata: {{name: llm}}
spec:
  serveConfigV2: |
    applications:
    - name: llm_app
      import_path: ray.serve.llm:build_openai_app
      args:
        llm_configs:
        - model_loading_config: {{model_id: qwen, model_source: Qwen/Qwen2.5-0.5B-Instruct}}
          engine_kwargs:
            {kwargs}{runtime_env}
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers:
          - {{name: ray-head, image: {image}}}
"""


def test_engine_kwargs_become_flags_with_positions_inside_the_string():
    text = rayservice("tensor_parallel_size: 2\n            enforce_eager: true\n            disable_log_stats: false"
                      "\n            speculative_config: {method: ngram, num_speculative_tokens: 3}")
    (invocation,) = world_of(text).invocations
    assert invocation.via == "ray-serve-engine-kwargs" and invocation.release == "0.11.0"
    assert [t.text for t in invocation.tokens] == [
        "Qwen/Qwen2.5-0.5B-Instruct", "--tensor-parallel-size", "2", "--enforce-eager", "--speculative-config",
        '{"method": "ngram", "num_speculative_tokens": 3}']
    assert [(t.span.line, t.span.col) for t in invocation.tokens[1:3]] == [(13, 13), (13, 35)]


@pytest.mark.parametrize("kwargs, select, expected", [
    ("max_seq_len_to_capture: 8192", "VL102", [("VL102", 13, 13, "error")]),
    ("num_scheduler_steps: 8", "VL102", [("VL102", 13, 13, "error")]),
    ("tensor_paralel_size: 2", "VL103", [("VL103", 13, 13, "error")]),
])
def test_engine_kwargs_catch(kwargs, select, expected):
    assert findings(rayservice(kwargs), select=(select,)) == expected


@pytest.mark.parametrize("text", [
    rayservice("max_model_len: 8192\n            enable_prefix_caching: true"),
    rayservice("enable_chunked_prefill: false"),  # false: the engine's default, no token
    rayservice("num_scheduler_steps: 8", image="vllm/vllm-openai:v0.9.2"),  # 0.9.2 still had it
])
def test_engine_kwargs_do_not_catch(text):
    assert findings(text, select=("VL102", "VL103", "VL105", "VL106")) == []


def test_engine_kwargs_runtime_env_installing_vllm_hides_the_image_release():
    text = rayservice("max_model_len: 8192", "\n          runtime_env: {pip: [vllm==0.8.5]}")
    (invocation,) = world_of(text).invocations
    assert invocation.image is None and invocation.release is None


# --- KAITO Workspace and its inference ConfigMap ------------------------------------------------------------
def kaito(vllm_keys, config_ref="params", api="kaito.sh/v1beta1", template=""):
    return f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: params}}
data:
  inference_config.yaml: |
    max_probe_steps: 6
    vllm:
      {vllm_keys}
---
apiVersion: {api}
kind: Workspace
metadata: {{name: ws}}
resource: {{instanceType: Standard_NC24ads_A100_v4}}
inference:
  preset: {{name: qwen2.5-7b-instruct}}
  config: {config_ref}{template}
"""


def test_kaito_fixture_gives_vl102_at_the_config_key():
    result, _ = lint_paths([str(FIXTURES / "kaito-workspace.yaml")], LintOptions(select=["VL102"]))
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL102", 16, 7, "error")]
    assert "Workspace workspace-qwen-2-5-7b runs 0.25.1" in result.findings[0].message


def test_kaito_vllm_keys_are_flags_against_kaitos_pinned_vllm():
    (invocation,) = world_of(kaito("max-model-len: 4096\n      enforce-eager: true\n      enable-prefix-caching: false"
                                   "\n      hf-overrides: {a: 1}")).invocations
    assert (invocation.via, invocation.owner.kind, invocation.release) == ("operator-config", "Workspace", "0.25.1")
    assert "KAITO v0.12.0 pins vllm==0.25.1" in invocation.release_origin
    assert [t.text for t in invocation.tokens] == ["--max-model-len", "4096", "--enforce-eager"]
    assert [(t.span.line, t.span.col) for t in invocation.tokens] == [(8, 7), (8, 22), (9, 7)]


@pytest.mark.parametrize("keys, expected", [
    ("num-scheduler-steps: 1", [("VL102", 8, 7, "error")]),
    ("max-seq-len-to-capture: 8192", [("VL102", 8, 7, "error")]),
])
def test_kaito_catches(keys, expected):
    assert findings(kaito(keys)) == expected


@pytest.mark.parametrize("text", [
    kaito("swap-space: 4", config_ref="other"),  # the Workspace names another ConfigMap (not in the run)
    kaito("swap-space: 4", api="example.com/v1"),  # not KAITO's Workspace
    kaito("max-model-len: 4096\n      gpu-memory-utilization: 0.9"),
    kaito("kv-cache-dtype: fp8"),
])
def test_kaito_does_not_catch(text):
    assert findings(text, select=("VL102", "VL103", "VL105")) == []


def test_kaito_release_from_the_annotation_wins():
    text = kaito("swap-space: 4").replace("metadata: {name: ws}", 'metadata: {name: ws, annotations: {vllmlint.io/vllm-version: "0.17.1"}}')
    assert findings(text) == []


def test_kaito_inference_template_is_a_pod_template():
    template = "\n  template:\n    spec:\n      containers:\n      - name: custom\n        image: vllm/vllm-openai:v0.20.0" \
               "\n        command: [vllm, serve, m, --swap-space, \"4\"]"
    assert findings(kaito("max-model-len: 4096", template=template)) == [("VL102", 22, 35, "error")]


# --- Kthena ModelServing ------------------------------------------------------------------------------------
def test_kthena_fixture_gives_vl102_and_no_gpu_mismatch():
    result, _ = lint_paths([str(FIXTURES / "kthena-modelserving.yaml")], LintOptions(select=["VL102", "VL606"]))
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL102", 27, 228, "error")]


def serving(entry_gpus, workers="1", worker_template=True, api="workload.serving.volcano.sh/v1alpha1"):
    worker = """
        workerTemplate:
          spec:
            containers:
            - {name: worker, image: vllm/vllm-openai:v0.20.0, resources: {limits: {nvidia.com/gpu: "4"}}}""" \
        if worker_template else ""
    return f"""apiVersion: {api}
kind: ModelServing
metadata: {{name: ms}}
spec:
  template:
    roles:
      - name: decode
        entryTemplate:
          spec:
            containers:
            - name: leader
              image: vllm/vllm-openai:v0.20.0
              command: [vllm, serve, m, --tensor-parallel-size, "4", --pipeline-parallel-size, "2", --swap-space, "4"]
              resources: {{limits: {{nvidia.com/gpu: "{entry_gpus}"}}}}
        workerReplicas: {workers}{worker}
"""


def test_kthena_roles_are_pod_templates():
    world = world_of(serving("4"))
    assert [t.role for t in world.templates] == ["decode", "decode-worker"]
    assert findings(serving("4")) == [("VL102", 13, 101, "error")]


@pytest.mark.parametrize("text, expected", [
    (serving("4"), []),  # TP 4 x PP 2 over the entry and one worker: 4 GPUs each
    (serving("8", workers="0", worker_template=False), []),  # one pod of 8
    (serving("4", workers="0", worker_template=False), [("VL606", 14, 52, "error")]),  # one pod: needs 8
])
def test_kthena_gpu_count_per_pod_of_the_group(text, expected):
    assert findings(text, select=("VL606",)) == expected


def test_kthena_other_group_is_not_read():
    assert world_of(serving("4", api="example.com/v1")).templates == []


# --- llmaz BackendRuntime / Playground ----------------------------------------------------------------------
def backend(args='[--model, "{{ .ModelPath }}", --port, "8080"]', playground=""):
    return f"""apiVersion: inference.llmaz.io/v1alpha1
kind: BackendRuntime
metadata: {{name: vllm}}
spec:
  command: [python3, -m, vllm.entrypoints.openai.api_server]
  image: vllm/vllm-openai
  version: v0.20.0
  recommendedConfigs:
  - name: default
    args: {args}
  - name: speculative-decoding
    args: [--model, "{{{{ .ModelPath }}}}", -tp, "1"]
{playground}"""


def playground(args, extra=""):
    return f"""---
apiVersion: inference.llmaz.io/v1alpha1
kind: Playground
metadata: {{name: pg}}
spec:
  modelClaim: {{modelName: opt-125m}}
  backendRuntimeConfig:
    args: {args}{extra}
"""


def test_llmaz_fixture_gives_vl102_at_the_playground_arg():
    result, _ = lint_paths([str(FIXTURES / "llmaz-backendruntime.yaml")], LintOptions(select=["VL102"]))
    assert [(f.code, f.span.line, f.span.col, f.severity.label) for f in result.findings] == \
        [("VL102", 44, 9, "error")]


def test_llmaz_argv_is_command_config_args_and_playground_args():
    world = world_of(backend(playground=playground("[--max-model-len, '4096']", "\n    version: v0.9.2")))
    by_owner = {i.owner.kind + ":" + (i.tokens[-1].text if i.tokens else ""): i for i in world.invocations}
    (pg,) = [i for i in world.invocations if i.owner.kind == "Playground"]
    assert [t.text for t in pg.tokens] == ["--model", "{{ .ModelPath }}", "--port", "8080", "--max-model-len", "4096"]
    assert pg.tokens[1].dynamic and pg.release == "0.9.2"  # the Playground's version is the image tag
    # the config the Playground uses is read once (through it); the other one on its own
    assert sorted(i.owner.kind for i in world.invocations) == ["BackendRuntime", "Playground"], by_owner


@pytest.mark.parametrize("text, expected", [
    (backend('[--model, m, --swap-space, "4"]'), [("VL102", 10, 24, "error")]),
    (backend(playground=playground('[--max-seq-len-to-capture, "1"]')), [("VL102", 20, 12, "error")]),
])
def test_llmaz_catches(text, expected):
    assert findings(text) == expected


@pytest.mark.parametrize("text", [
    backend(),
    playground('[--swap-space, "4"]'),  # its BackendRuntime is not in the run (llmaz's chart installs it)
    backend(playground=playground('[--swap-space, "4"]', "\n    backendName: sglang")),  # another backend
    backend(playground=playground('[--swap-space, "4"]', "\n    version: v0.9.2")),  # 0.9.2 still had it
])
def test_llmaz_does_not_catch(text):
    assert findings(text, select=("VL102", "VL103", "VL105")) == []


def test_engine_kwargs_with_nothing_written_give_no_invocation():
    text = rayservice("enforce_eager: false").replace(
        "model_loading_config: {model_id: qwen, model_source: Qwen/Qwen2.5-0.5B-Instruct}", "model_loading_config: {model_id: q}")
    assert world_of(text).invocations == []
    assert findings(text, select=("ALL",)) == []
