"""Workload kinds of issue 9, batch 1: operator resources read as the pods they become, with positions.

KubeAI `Model`, KServe `LLMInferenceService` (VLLM_ADDITIONAL_ARGS), JobSet, OpenShift `Template`, Argo Rollouts,
Knative, OpenKruise and unknown kinds that embed a pod template. Each case pins the position of a finding an
existing rule gives inside the kind (VL102 on a removed flag, ...), and the near-misses that stay silent."""
from pathlib import Path

from vllmlint.engine import LintOptions, Linter, lint_paths
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent
OWN = ROOT / "fixtures" / "own"


def lint(*texts, select=("ALL",), names=None):
    linter = Linter(LintOptions(select=list(select)))
    for index, text in enumerate(texts):
        name = names[index] if names else f"m{index}.yaml"
        linter.result.files_checked += 1
        linter.add_text(text, name, ".yaml")
    result = linter.run()
    assert not result.internal_error, [n.message for n in result.notices]
    return result


def found(result, *codes):
    return sorted((f.path, f.span.line, f.span.col, f.code, f.severity.label) for f in result.findings
                  if not codes or f.code in codes)


def world(*texts):
    linter = Linter()
    for index, text in enumerate(texts):
        linter.add_text(text, f"m{index}.yaml", ".yaml")
    return linter.build()


# --- KubeAI Model --------------------------------------------------------------------------------------
MODEL = """apiVersion: kubeai.org/v1
kind: Model
metadata:
  name: qwen
spec:
  features: [TextGeneration]
  url: hf://Qwen/Qwen2.5-7B-Instruct
  engine: VLLM
  resourceProfile: nvidia-gpu-l4:{count}
  args:
    - --tensor-parallel-size=1
    - --num-scheduler-steps=8
  env:
    VLLM_ATTENTION_BACKEND: FLASHINFER
"""
VALUES = """modelServers:
  VLLM:
    images:
      default: "vllm/vllm-openai:v0.8.3"
      nvidia-gpu: "vllm/vllm-openai:v0.11.0"
resourceProfiles:
  nvidia-gpu-l4:
    imageName: "nvidia-gpu"
    limits:
      nvidia.com/gpu: "1"
    requests:
      nvidia.com/gpu: "1"
      memory: "24Gi"
    nodeSelector:
      cloud.google.com/gke-accelerator: "nvidia-l4"
"""


def test_kubeai_model_is_the_pod_kubeais_controller_builds():
    w = world(MODEL.format(count=2), VALUES)
    [inv] = w.invocations
    assert inv.kind == "openai-api-server" and inv.via == "command"
    assert [t.text for t in inv.entry] == ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    assert inv.option("--model")[0].value == "Qwen/Qwen2.5-7B-Instruct"
    assert [o.name for o in inv.options] == ["--model", "--served-model-name", "--tensor-parallel-size",
                                             "--num-scheduler-steps"]
    container = inv.container
    assert container.name == "server" and container.env == {"VLLM_ATTENTION_BACKEND": "FLASHINFER"}
    assert str(container.resources.limits["nvidia.com/gpu"].node.value) == "2"  # the profile's 1 x 2
    assert [(r.key, r.values) for r in container.pod.placement.node_selector] == [
        ("cloud.google.com/gke-accelerator", ("nvidia-l4",))]
    assert inv.image.raw == "vllm/vllm-openai:v0.11.0"  # the profile's imageName
    assert container.pod.labels["app.kubernetes.io/name"] == "vllm"
    assert container.probe("startup") is not None and container.backing("/dev/shm").volume.name == "dshm"


def test_kubeai_removed_flag_and_switch_value_at_their_args_items():
    result = lint(MODEL.format(count=1).replace("--tensor-parallel-size=1", "--enable-chunked-prefill=false"))
    assert found(result, "VL102", "VL106") == [("m0.yaml", 11, 7, "VL106", "error"),
                                               ("m0.yaml", 12, 7, "VL102", "error")]


def test_kubeai_resource_profile_multiplies_the_gpus_for_the_capacity_rules():
    result = lint(MODEL.format(count=2), VALUES)
    assert found(result, "VL606") == [("m0.yaml", 9, 20, "VL606", "warning")]  # 2 L4s, TP 1
    assert found(lint(MODEL.format(count=1), VALUES), "VL606") == []


def test_kubeai_profile_not_in_the_run_is_unknown_not_missing():
    # Without KubeAI's values the profile's resources and the image are unknown: no VL704, no VL606.
    result = lint(MODEL.format(count=2).replace("hf://", "hf://").replace("engine: VLLM", "engine: VLLM\n  image: "
                                                                              "vllm/vllm-openai:v0.11.0"))
    assert found(result, "VL704", "VL606", "VL608", "VL701", "VL702") == []
    assert found(result, "VL102") == [("m0.yaml", 13, 7, "VL102", "error")]


def test_kubeai_other_engines_and_kinds_are_not_vllm():
    assert world(MODEL.format(count=1).replace("engine: VLLM", "engine: OLlama")).invocations == []
    assert world(MODEL.format(count=1).replace("kubeai.org/v1", "example.com/v1")).invocations == []


def test_kubeai_url_schemes_other_than_hf_give_an_unknown_model():
    [inv] = world(MODEL.format(count=1).replace("hf://Qwen/Qwen2.5-7B-Instruct", "s3://bucket/qwen")).invocations
    [model] = inv.option("--model")
    assert not model.value_known


def test_kubeai_fixture():
    result, _ = lint_paths([str(OWN / "kubeai-model.yaml"), str(OWN / "kubeai-values.yaml")],
                           LintOptions(select=["VL102", "VL106", "VL606"]))
    assert [(Path(f.path).name, f.span.line, f.span.col, f.code, f.severity) for f in result.findings] == [
        ("kubeai-model.yaml", 13, 20, "VL606", Severity.WARNING),
        ("kubeai-model.yaml", 37, 7, "VL102", Severity.ERROR),
        ("kubeai-model.yaml", 38, 7, "VL106", Severity.ERROR),
    ]


# --- KServe LLMInferenceService ------------------------------------------------------------------------
def llmisvc(env, parallelism="", args="", command=""):
    return f"""apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata:
  name: llama
spec:
  model:
    uri: hf://meta-llama/Llama-3.1-70B-Instruct
    name: meta-llama/Llama-3.1-70B-Instruct
{parallelism}  template:
    containers:
      - name: main
        image: vllm/vllm-openai:v0.11.0
{command}{args}        env:
{env}        resources:
          limits:
            nvidia.com/gpu: "8"
"""


ADDITIONAL = """          - name: VLLM_ADDITIONAL_ARGS
            value: "--tensor-parallel-size 8 --max-model-len 8192 --num-scheduler-steps 4"
"""


def test_llmisvc_additional_args_are_flags_with_positions_inside_the_value():
    [inv] = world(llmisvc(ADDITIONAL)).invocations
    # The preset's own flag first (`vllm serve /mnt/models --served-model-name {spec.model.name}`), then the script's.
    assert [(o.name, o.value) for o in inv.options] == [
        ("--served-model-name", "meta-llama/Llama-3.1-70B-Instruct"), ("--tensor-parallel-size", "8"),
        ("--max-model-len", "8192"), ("--num-scheduler-steps", "4")]
    assert inv.model.text == "meta-llama/Llama-3.1-70B-Instruct"  # from spec.model.uri (hf://), at its line
    assert (inv.model.span.line, inv.model.span.col) == (7, 10)
    result = lint(llmisvc(ADDITIONAL))
    assert found(result, "VL102") == [("m0.yaml", 15, 67, "VL102", "error")]


def test_llmisvc_tensor_parallel_in_additional_args_uses_the_eight_gpus():
    assert found(lint(llmisvc(ADDITIONAL)), "VL606", "VL608") == []  # was a false VL606 (TP 1 of 8 GPUs)
    one = ADDITIONAL.replace("--tensor-parallel-size 8 ", "")
    assert found(lint(llmisvc(one)), "VL606") == [("m0.yaml", 18, 29, "VL606", "warning")]


def test_llmisvc_parallelism_tensor_is_the_presets_flag():
    inv, = world(llmisvc(ADDITIONAL.replace("--tensor-parallel-size 8 ", ""),
                         parallelism="  parallelism:\n    tensor: 8\n")).invocations
    assert [(o.name, o.value) for o in inv.option("--tensor-parallel-size")] == [("--tensor-parallel-size", "8")]
    assert inv.option("--tensor-parallel-size")[0].value_token.span.line == 10


def test_llmisvc_api_server_count_only_in_data_parallel_presets():
    count = '          - name: VLLM_API_SERVER_COUNT\n            value: "4"\n'
    inv, = world(llmisvc(count)).invocations
    assert inv.option("--api-server-count") == []
    inv, = world(llmisvc(count, parallelism="  parallelism:\n    data: 2\n    dataLocal: 2\n")).invocations
    assert [o.value for o in inv.option("--api-server-count")] == ["4"]
    assert found(lint(llmisvc(count + ADDITIONAL)), "VL109") == []  # KServe's variables, not vLLM's


def test_llmisvc_own_command_does_not_read_the_variable():
    command = "        command: [vllm, serve, meta-llama/Llama-3.1-70B-Instruct, --tensor-parallel-size, '8']\n"
    inv, = world(llmisvc(ADDITIONAL, command=command)).invocations
    assert inv.option("--num-scheduler-steps") == []


def test_llmisvc_preset_gives_a_memory_dev_shm():
    inv, = world(llmisvc(ADDITIONAL)).invocations
    assert inv.container.backing("/dev/shm").volume.medium == "Memory"


def test_llmisvc_fixture():
    result, _ = lint_paths([str(OWN / "llm-inference-service.yaml")], LintOptions(select=["VL102", "VL606", "VL608"]))
    assert [(f.span.line, f.span.col, f.code) for f in result.findings] == [(23, 67, "VL102")]


# --- JobSet, Rollout, Knative, OpenKruise, generic workloads ---------------------------------------------
def container_doc(kind, api, body_path, indent):
    pad = " " * indent
    return f"""apiVersion: {api}
kind: {kind}
metadata: {{name: x}}
spec:
{body_path}{pad}containers:
{pad}- name: vllm
{pad}  image: vllm/vllm-openai:v0.11.0
{pad}  args: [--model, Qwen/Qwen3-8B, --num-scheduler-steps, "4"]
"""


TEMPLATE = "  template:\n    spec:\n"
JOBSET = "  replicatedJobs:\n  - name: workers\n    template:\n      spec:\n        template:\n          spec:\n"
JOB_TEMPLATE = "  jobTemplate:\n    spec:\n      template:\n        spec:\n"


def test_jobset_replicated_jobs_are_pod_templates():
    text = container_doc("JobSet", "jobset.x-k8s.io/v1alpha2", JOBSET, 12)
    w = world(text)
    assert [t.role for t in w.templates] == ["workers"]
    assert found(lint(text, select=["VL102"])) == [("m0.yaml", 14, 46, "VL102", "error")]


def test_deployment_like_kinds_of_other_groups():
    for kind, api in (("Rollout", "argoproj.io/v1alpha1"), ("Service", "serving.knative.dev/v1"),
                      ("Configuration", "serving.knative.dev/v1"), ("CloneSet", "apps.kruise.io/v1alpha1"),
                      ("StatefulSet", "apps.kruise.io/v1beta1")):
        text = container_doc(kind, api, TEMPLATE, 6)
        assert found(lint(text, select=["VL102"])) == [("m0.yaml", 10, 40, "VL102", "error")], kind


def test_unknown_kinds_embedding_a_pod_template_are_generic_workloads():
    for body, indent, line, col in ((TEMPLATE, 6, 10, 40), (JOB_TEMPLATE, 10, 12, 44)):
        text = container_doc("InferenceDeployment", "example.com/v1", body, indent)
        assert found(lint(text, select=["VL102"])) == [("m0.yaml", line, col, "VL102", "error")]


def test_near_misses_are_not_workloads():
    # A core Service has no pod; KServe's presets are merged into other pods; a template without containers.
    assert world(container_doc("Service", "v1", TEMPLATE, 6)).templates == []
    assert world(container_doc("LLMInferenceServiceConfig", "serving.kserve.io/v1alpha1", TEMPLATE, 6)).templates == []
    assert world("apiVersion: example.com/v1\nkind: X\nmetadata: {name: x}\nspec:\n  template:\n    spec: {}\n"
                 ).templates == []
    # A JobSet of another group is only a generic workload if its template sits where a pod template does.
    assert world(container_doc("JobSet", "example.com/v1", JOBSET, 12)).templates == []


def test_kind_fixtures():
    result, _ = lint_paths([str(OWN / name) for name in ("jobset.yaml", "rollout-knative-kruise.yaml",
                                                         "generic-workload.yaml")], LintOptions(select=["VL102"]))
    assert sorted((Path(f.path).name, f.span.line, f.span.col) for f in result.findings) == [
        ("generic-workload.yaml", 19, 18), ("jobset.yaml", 25, 23), ("rollout-knative-kruise.yaml", 25, 46),
        ("rollout-knative-kruise.yaml", 41, 46), ("rollout-knative-kruise.yaml", 62, 46)]


# --- OpenShift Template --------------------------------------------------------------------------------
def openshift(args, env="[]", api="template.openshift.io/v1", parameters="[{name: LEN, value: '8192'}, {name: IMG}]",
              image="vllm/vllm-openai:v0.11.0"):
    return f"""apiVersion: {api}
kind: Template
metadata: {{name: t}}
parameters: {parameters}
objects:
- apiVersion: v1
  kind: Pod
  metadata: {{name: p}}
  spec:
    containers:
    - name: vllm
      image: {image}
      command: [vllm, serve, Qwen/Qwen3-8B]
      args: {args}
      env: {env}
"""


def test_openshift_template_objects_are_objects_of_the_run():
    w = world(openshift("[--max-seq-len-to-capture=8192]"))
    assert [o.kind for o in w.objects] == ["Template", "Pod"]
    assert found(lint(openshift("[--max-seq-len-to-capture=8192]"), select=["VL102"])) == [
        ("m0.yaml", 14, 14, "VL102", "error")]
    # Old clusters write `apiVersion: v1` for a Template.
    assert found(lint(openshift("[--max-seq-len-to-capture=8192]", api="v1"), select=["VL102"])) == [
        ("m0.yaml", 14, 14, "VL102", "error")]


def test_openshift_template_parameters_are_unknown():
    inv, = world(openshift("['--max-model-len=${LEN}', --gpu-memory-utilization, '${{LEN}}']")).invocations
    assert [o.value_known for o in inv.options] == [False, False]
    env = "[{name: VLLM_ENABLE_V1_MULTIPROCESSING, value: '${LEN}'}, {name: HF_TOKEN, value: '${IMG}'}]"
    result = lint(openshift("['--max-model-len=${LEN}', --enable-chunked-prefill, '${LEN}']", env=env))
    assert found(result, "VL106", "VL109", "VL709", "VL710", "VL802", "VL803") == []
    inv, = world(openshift("[]", env=env)).invocations
    assert inv.container.env == {"VLLM_ENABLE_V1_MULTIPROCESSING": None, "HF_TOKEN": None}


def test_openshift_template_undeclared_references_stay_literal():
    # `oc process` leaves `${X}` alone when X is no parameter: Kubernetes then keeps it as text (VL709).
    env = "[{name: VLLM_LOGGING_LEVEL, value: '${NOT_A_PARAMETER}'}]"
    assert found(lint(openshift("[]", env=env), select=["VL709"])) == [("m0.yaml", 15, 48, "VL709", "info")]


def test_openshift_template_image_parameter_leaves_the_release_unknown():
    inv, = world(openshift("[]", image="'${IMG}'")).invocations
    assert inv.image is None


def test_openshift_fixture():
    result, _ = lint_paths([str(OWN / "openshift-template.yaml")], LintOptions(select=["VL102", "VL106", "VL709"]))
    assert [(f.span.line, f.span.col, f.code) for f in result.findings] == [(39, 19, "VL102"), (42, 26, "VL709")]


def test_kubeai_profiles_from_the_kubeai_config_configmap():
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kubeai-config}\ndata:\n  system.yaml: |\n" + "".join(
        "    " + line + "\n" for line in VALUES.splitlines())
    w = world(MODEL.format(count=2), config)
    [inv] = w.invocations
    assert inv.image.raw == "vllm/vllm-openai:v0.11.0"
    assert inv.image and inv.container.image.source.display_path == "m1.yaml"
    assert inv.container.image.span.line == 10 and inv.container.image.span.col == 23
    result = lint(MODEL.format(count=2), config)
    assert found(result, "VL606") == [("m0.yaml", 9, 20, "VL606", "warning")]
