"""VL811 group-inconsistent: catches / does not catch, with the position of every finding."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent
WARN, INFO = Severity.WARNING, Severity.INFO
REV = "--revision 9216db5781bf21249d130ec9da846c4624c16137"


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL811"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL811"]


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, filename)]


LEADER = f"vllm serve Qwen/Qwen3-32B {REV} --tensor-parallel-size 8 --nnodes 2 --node-rank 0 --master-addr $(LWS_LEADER_ADDRESS)"
WORKER = (f"vllm serve Qwen/Qwen3-32B {REV} --tensor-parallel-size 8 --nnodes 2 --node-rank $(LWS_WORKER_INDEX) "
          "--master-addr $(LWS_LEADER_ADDRESS) --headless")


def lws(leader=LEADER, worker=WORKER, leader_image="vllm/vllm-openai:v0.29.0", worker_image="vllm/vllm-openai:v0.29.0",
        size=2):
    return f"""apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {{name: vllm}}
spec:
  leaderWorkerTemplate:
    size: {size}
    leaderTemplate:
      spec:
        containers:
        - name: vllm-leader
          image: {leader_image}
          command: [sh, -c, "{leader}"]
          resources: {{limits: {{nvidia.com/gpu: 8}}}}
    workerTemplate:
      spec:
        containers:
        - name: vllm-worker
          image: {worker_image}
          command: [sh, -c, "{worker}"]
          resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""  # the worker's image on line 18 (col 18), its command on line 19 (the string from col 30)


def test_an_agreeing_group_is_silent():
    assert found(lws()) == []
    assert found(lws(leader_image="docker.io/vllm/vllm-openai:v0.29.0")) == []
    assert found(lws(size=1, worker_image="vllm/vllm-openai:v0.28.0")) == []  # one pod per group: no group


def test_images():
    assert found(lws(worker_image="vllm/vllm-openai:v0.28.0")) == [
        (18, 18, WARN, "image:vllm/vllm-openai:v0.28.0!=vllm/vllm-openai:v0.29.0")]
    assert found(lws(worker_image="vllm/vllm-openai")) == [  # no tag is `latest`
        (18, 18, WARN, "image:vllm/vllm-openai!=vllm/vllm-openai:v0.29.0")]


@pytest.mark.parametrize("old, new, expected", [
    ("--tensor-parallel-size 8 ", "--tensor-parallel-size 4 ", [(19, 131, WARN, "--tensor-parallel-size:4!=8")]),
    ("--tensor-parallel-size 8 ", "-tp 4 ", [(19, 112, WARN, "--tensor-parallel-size:4!=8")]),
    ("--nnodes 2 ", "--nnodes 3 ", [(19, 142, WARN, "--nnodes:3!=2")]),
    (REV, "--revision main", [(19, 67, WARN, "--revision:main!=9216db5781bf21249d130ec9da846c4624c16137")]),
    ("Qwen/Qwen3-32B", "Qwen/Qwen3-14B", [(19, 41, WARN, "model:Qwen/Qwen3-14B!=Qwen/Qwen3-32B")]),
    # only options both sides give are compared; $(VAR) is not literal
    ("--headless", "--headless --max-model-len 8192", []),
    ("--nnodes 2 ", "--nnodes $(LWS_GROUP_SIZE) ", []),
])
def test_worker_options(old, new, expected):
    assert found(lws(worker=WORKER.replace(old, new))) == expected


@pytest.mark.parametrize("leader_extra, worker_extra, expected", [
    ("--dtype half", "--dtype float16", []),
    ("--dtype bfloat16", "--dtype float16", [(19, 231, WARN, "--dtype:float16!=bfloat16")]),
    ("--max-model-len 32K", "--max-model-len 32768", []),  # vLLM reads K as 1024 and k as 1000
    ("--max-model-len 32k", "--max-model-len 32768", [(19, 239, WARN, "--max-model-len:32768!=32000")]),
    ("--max-model-len 32768", "--max-model-len 16384", [(19, 239, WARN, "--max-model-len:16384!=32768")]),
])
def test_dtype_and_length(leader_extra, worker_extra, expected):
    assert found(lws(leader=f"{LEADER} {leader_extra}", worker=f"{WORKER} {worker_extra}")) == expected


@pytest.mark.parametrize("worker, image, expected", [
    (WORKER.replace(" --headless", ""), "vllm/vllm-openai:v0.29.0", [(19, 133, WARN, "headless:LeaderWorkerSet vllm")]),
    (WORKER.replace(" --headless", "") + " --data-parallel-size 2", "vllm/vllm-openai:v0.29.0", []),
    (WORKER.replace(" --headless", " $(EXTRA_ARGS)"), "vllm/vllm-openai:v0.29.0", []),
])
def test_headless(worker, image, expected):
    assert found(lws(worker=worker, worker_image=image)) == expected


def test_the_headless_message():
    [finding] = lint(lws(worker=WORKER.replace(" --headless", "")))
    assert finding.message.startswith("This worker template of the multi-node vLLM server LeaderWorkerSet vllm runs "
                                      "`vllm serve --nnodes` without `--headless`: on vLLM 0.29.0")


def test_revision_is_info_and_only_for_hub_models():
    assert found(lws(leader=LEADER.replace(REV + " ", ""), worker=WORKER.replace(REV + " ", ""))) == [
        (12, 41, INFO, "revision:Qwen/Qwen3-32B")]
    local = lws(leader=LEADER.replace(REV + " ", "").replace("Qwen/Qwen3-32B", "/models/qwen3-32b"),
                worker=WORKER.replace(REV + " ", "").replace("Qwen/Qwen3-32B", "/models/qwen3-32b"))
    assert found(local) == []
    assert found(lws(leader=LEADER.replace(REV + " ", ""))) == []  # the worker pins it (and VL811 compares)


RAY_LEADER = ("bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader "
              "--ray_cluster_size=$(LWS_GROUP_SIZE); python3 -m vllm.entrypoints.openai.api_server --port 8080 "
              "--model meta-llama/Meta-Llama-3.1-405B-Instruct --tensor-parallel-size 8 --pipeline-parallel-size 2")
RAY_WORKER = "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)"


def test_vllm_ray_lws_example():
    """vLLM's and LWS's Ray example: workers run `ray start`, so only the image and the revision are judged."""
    assert found(lws(RAY_LEADER, RAY_WORKER, "vllm/vllm-openai:v0.8.5", "vllm/vllm-openai:v0.8.5")) == [
        (12, 208, INFO, "revision:meta-llama/Meta-Llama-3.1-405B-Instruct")]
    assert found(lws(RAY_LEADER, RAY_WORKER, "vllm/vllm-openai:v0.8.5", "vllm/vllm-openai:v0.8.4")) == [
        (12, 208, INFO, "revision:meta-llama/Meta-Llama-3.1-405B-Instruct"),
        (18, 18, WARN, "image:vllm/vllm-openai:v0.8.4!=vllm/vllm-openai:v0.8.5")]


def ray(head_image, worker_image):
    return f"""apiVersion: ray.io/v1
kind: RayCluster
metadata: {{name: vllm}}
spec:
  headGroupSpec:
    template:
      spec:
        containers:
        - {{name: ray-head, image: "{head_image}"}}
  workerGroupSpecs:
  - groupName: gpu
    template:
      spec:
        containers:
        - name: ray-worker
          image: "{worker_image}"
          resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""


@pytest.mark.parametrize("head, worker, expected", [
    ("vllm/vllm-openai:v0.29.0", "vllm/vllm-openai:v0.28.0", [(16, 18, WARN, "image:vllm/vllm-openai:v0.28.0!="
                                                                         "vllm/vllm-openai:v0.29.0")]),
    ("rayproject/ray:2.41.0-py311", "rayproject/ray:2.41.0-py311-gpu", []),
    ("vllm/vllm-openai:v0.29.0", "vllm/vllm-openai:v0.29.0-cu129", []),
    ("vllm/vllm-openai:v0.29.0", "rayproject/ray:2.41.0", []),
])
def test_ray_images(head, worker, expected):
    assert found(ray(head, worker)) == expected


def statefulset(script, replicas=2):
    return f"""apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: vllm}}
spec:
  serviceName: vllm
  replicas: {replicas}
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [bash, -c]
        args:
        - |
{script}
        resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""  # the script from line 17, col 11


def test_statefulset_pods_without_headless():
    serve = "          vllm serve /models/m --tensor-parallel-size 16 --nnodes 2 --node-rank ${HOSTNAME##*-} --master-addr vllm-0.vllm"
    assert found(statefulset(serve)) == [(17, 58, WARN, "headless:StatefulSet vllm")]
    assert found(statefulset(serve, replicas=1)) == []
    branches = ("          if [ \"${HOSTNAME##*-}\" = 0 ]; then\n"
                "            vllm serve /models/m --tensor-parallel-size 16 --nnodes 2 --node-rank 0 --master-addr vllm-0.vllm\n"
                "          else\n"
                "            vllm serve /models/m --tensor-parallel-size 16 --nnodes 2 --node-rank ${HOSTNAME##*-} "
                "--master-addr vllm-0.vllm --headless\n"
                "          fi")
    assert found(statefulset(branches)) == []
    assert found(statefulset(branches.replace("--tensor-parallel-size 16 --nnodes 2 --node-rank ${",
                                              "--tensor-parallel-size 8 --nnodes 2 --node-rank ${"))) == [
        (20, 57, WARN, "--tensor-parallel-size:8!=16")]


def test_statefulset_on_a_release_without_nnodes():
    serve = "          vllm serve /models/m --tensor-parallel-size 16 --nnodes 2 --node-rank ${HOSTNAME##*-}"
    assert found(statefulset(serve).replace("v0.29.0", "v0.10.1")) == []


def test_script_groups():
    script = ("vllm serve /models/m --tensor-parallel-size 8 --pipeline-parallel-size 2 \\\n"
              "  --nnodes 2 --node-rank 0 --master-addr 10.0.0.10 --master-port 29500\n"
              "vllm serve /models/m --tensor-parallel-size 8 --pipeline-parallel-size 2 \\\n"
              "  --nnodes 2 --node-rank 1 --master-addr 10.0.0.10 --master-port 29500\n")
    assert found(script, "multi-node.sh") == [(4, 3, WARN, "headless:this script")]
    assert found(script.replace("--node-rank 1 --master-addr 10.0.0.10 --master-port 29500\n",
                                "--node-rank 1 --master-addr 10.0.0.10 --master-port 29500 --headless\n"),
                 "multi-node.sh") == []
    # two alternatives in one file, both rank 0: not one group
    assert found(script.replace("--node-rank 1", "--node-rank 0"), "multi-node.sh") == []


def test_markdown_example():
    text = ("# Multi-node\n\n```bash\n"
            "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank 0 "
            "--master-addr 10.0.0.10\n"
            "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 8 --pipeline-parallel-size 1 --nnodes 2 --node-rank 1 "
            "--master-addr 10.0.0.10 --headless\n```\n")
    assert found(text, "README.md") == [(4, 12, INFO, "revision:Qwen/Qwen3-32B"),
                                        (5, 77, WARN, "--pipeline-parallel-size:1!=2")]


def test_the_audited_chapter_stays_silent():
    linter = Linter(LintOptions(select=["VL811"]))
    for path in sorted((ROOT / "fixtures" / "audited").iterdir()):
        linter.result.files_checked += 1
        linter.add_text(path.read_text(), str(path), path.suffix.lower())
    assert [f for f in linter.run().findings if f.code == "VL811"] == []


def test_kserve_worker_spec_images():
    runtime = """apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: kserve-huggingfaceserver-multinode}
spec:
  supportedModelFormats: [{name: huggingface, autoSelect: true}]
  containers:
  - name: kserve-container
    image: kserve/huggingfaceserver:v0.15.0-gpu
    resources: {limits: {nvidia.com/gpu: "1"}}
  workerSpec:
    pipelineParallelSize: 2
    tensorParallelSize: 1
    containers:
    - name: worker-container
      image: kserve/huggingfaceserver:WORKER
      resources: {limits: {nvidia.com/gpu: "1"}}
"""
    assert found(runtime.replace("WORKER", "v0.15.0-gpu")) == []
    assert found(runtime.replace("WORKER", "v0.14.1-gpu")) == [
        (15, 14, WARN, "image:kserve/huggingfaceserver:v0.14.1-gpu!=kserve/huggingfaceserver:v0.15.0-gpu")]
    isvc = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: huggingface-llama3}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      storageUri: pvc://llama-3-8b-pvc/hf/8b_instruction_tuned
    workerSpec:
      pipelineParallelSize: 2
      containers:
      - name: worker-container
        image: kserve/huggingfaceserver:v0.15.0-gpu
"""
    assert found(isvc) == []  # the predictor's image comes from the runtime, not in this object


def test_lws_without_a_leader_template():
    """The worker template then makes the leader too: the pods other than index 0 lack --headless."""
    text = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.29.0
          command: [sh, -c, "vllm serve /models/m -tp 8 --nnodes $(LWS_GROUP_SIZE) --node-rank $(LWS_WORKER_INDEX) --master-addr $(LWS_LEADER_ADDRESS)"]
          resources: {limits: {nvidia.com/gpu: 8}}
"""
    assert found(text) == [(12, 57, WARN, "headless:LeaderWorkerSet vllm")]
    [finding] = lint(text)
    assert finding.message.startswith("Every pod of the multi-node vLLM server LeaderWorkerSet vllm runs this command, "
                                      "so the pods other than node-rank 0 run `vllm serve --nnodes` without")


def test_one_script_with_a_branch_per_role():
    script = ("if [ \\\"$(LWS_WORKER_INDEX)\\\" = 0 ]; then vllm serve /models/m -tp 8 --nnodes 2 --node-rank 0 "
              "--master-addr $(LWS_LEADER_ADDRESS); else vllm serve /models/m -tp 8 --nnodes 2 --node-rank 1 "
              "--master-addr $(LWS_LEADER_ADDRESS) --headless; fi")
    assert found(lws(leader=script, worker=script)) == []
    assert found(lws(leader=script, worker=script.replace("-tp 8 --nnodes 2 --node-rank 1", "-tp 4 --nnodes 2 "
                                                          "--node-rank 1"))) == [
        (19, 190, WARN, "--tensor-parallel-size:4!=8")]
    assert found(lws(leader=script, worker=script.replace(" --headless", ""))) == [
        (19, 192, WARN, "headless:LeaderWorkerSet vllm")]
