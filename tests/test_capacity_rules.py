"""The capacity rules (VL601-VL609) on the reference chapters' manifests and on targeted snippets.

The original chapter's 70B manifests are linted together with its Karpenter NodePool, as one repository
would be: the NodePool is what tells where the pods land (p3.16xlarge with 8 x V100 16 GB, or
g5.12xlarge with 4 x A10G).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from vllmlint.capacity import clear_extra, register_extra
from vllmlint.capacity.workload import human_int, landings, read_workload, workloads
from vllmlint.k8s.quantity import quantity_int
from vllmlint.engine import Linter, LintOptions, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent
ORIGINAL = ROOT / "fixtures" / "original"
AUDITED = ROOT / "fixtures" / "audited"
CAPACITY = ["VL601", "VL602", "VL603", "VL604", "VL605", "VL606", "VL607", "VL608", "VL609"]


def lint_files(*paths: Path, select=CAPACITY):
    linter = Linter(LintOptions(select=select))
    for path in paths:
        linter.add_file(path, path.name)
    result = linter.run()
    assert not result.internal_error, [n.message for n in result.notices]  # a crashed rule finds nothing
    return result


def codes(findings, path=None):
    return sorted(f.code for f in findings if path is None or f.path == path)


@pytest.fixture(scope="module")
def chapter():
    return lint_files(ORIGINAL / "single-node-deployment.yaml", ORIGINAL / "multi-node-statefulset.yaml",
                      ORIGINAL / "karpenter-nodepool.yaml")


def of(result, code, path):
    return [f for f in result.findings if f.code == code and f.path == path]


# --- the original chapter ----------------------------------------------------------------------------
def test_chapter_deployment_does_not_fit_on_v100(chapter):
    [finding] = of(chapter, "VL601", "single-node-deployment.yaml")
    assert finding.severity == Severity.ERROR  # the 8-GPU pod fits only p3.16xlarge, and fails there
    assert "16.4 GiB of weights per GPU" in finding.message
    assert finding.message.startswith("meta-llama/Llama-3.1-70B-Instruct (`/models/llama-3.1-70b` read as it) does not "
                                      "fit one V100-16GB: it needs 16.4 GiB of weights per GPU (bfloat16, TP 8); ")
    assert "V100-16GB" in finding.message and "15.0 GiB" in finding.message
    assert "--gpu-memory-utilization 0.95" in finding.message
    assert "--tensor-parallel-size 16 would fit" in finding.message
    # it points at the model token
    assert "/models/llama-3.1-70b" in chapter.sources["single-node-deployment.yaml"].line_text(finding.span.line)


def test_chapter_v100_is_below_the_newest_release_floor(chapter):
    for path in ("single-node-deployment.yaml", "multi-node-statefulset.yaml"):
        [finding] = of(chapter, "VL607", path)
        assert finding.severity == Severity.ERROR
        assert "compute capability 7.0" in finding.message and "7.5" in finding.message
        assert finding.message.startswith("V100-16GB (compute capability 7.0) is below the compute capability 7.5 "
                                          "that the newest vLLM supports. It runs on p3.16xlarge (8 x V100-16GB) "
                                          "(from NodePool vllm-gpu), and the image names no release: ")


def test_chapter_statefulset_runs_tp16_in_an_8_gpu_pod(chapter):
    # Issue 13: the 8-GPU request is both too few for TP 16 (error) and too many for the g5.12xlarge
    # (warning). Both are about one token, so they are one finding at the more certain level, with
    # both facts in its message (before: an error and a warning at 66:29).
    [finding] = of(chapter, "VL606", "multi-node-statefulset.yaml")
    assert finding.severity == Severity.ERROR
    assert (finding.span.line, finding.span.col) == (66, 29)
    assert "requests 8 nvidia.com/gpu but vLLM needs 16" in finding.message
    assert "g5.12xlarge (4 GPUs" in finding.message and "can only run on p3.16xlarge" in finding.message
    # the error's fact first (a short first line), the node's fact after its own detail
    assert finding.message.startswith("the pod requests 8 nvidia.com/gpu but vLLM needs 16 GPUs in it (TP 16 x PP 1): ")
    assert (" lower the parallel sizes. Also, g5.12xlarge (4 GPUs, from NodePool vllm-gpu) has fewer than 8: it can "
            "only run on p3.16xlarge.") in finding.message
    assert finding.value == "8<16"  # the error's fingerprint stays what it was


def test_chapter_8_gpu_pods_cannot_use_the_4_gpu_g5(chapter):
    [warning] = of(chapter, "VL606", "single-node-deployment.yaml")
    assert warning.severity == Severity.WARNING
    assert "g5.12xlarge (4 GPUs" in warning.message and "can only run on p3.16xlarge" in warning.message


def test_one_token_gets_one_vl606_finding():
    # TP 8 in a 4-GPU pod whose only node (g5.xlarge, 1 GPU) is smaller still: one error, both facts.
    findings = [f for f in run(manifest("g5.xlarge", "Qwen/Qwen2.5-7B-Instruct", 4, ", -tp, '8'"))
                if f.code == "VL606"]
    assert [f.severity for f in findings] == [Severity.ERROR]
    assert "vLLM needs 8 GPUs" in findings[0].message and "no node the pod may land on has 4 GPUs" in findings[0].message


def test_chapter_deployment_findings(chapter):
    assert codes(chapter.findings, "single-node-deployment.yaml") == ["VL601", "VL606", "VL607", "VL608"]


def test_chapter_without_its_nodepool_knows_no_gpu():
    result = lint_files(ORIGINAL / "single-node-deployment.yaml")
    # Only what needs no GPU remains: the missing /dev/shm for TP 8.
    assert codes(result.findings) == ["VL608"]


NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: gpu}}
spec:
  template:
    spec:
      requirements:
      - {{key: node.kubernetes.io/instance-type, operator: In, values: [{types}]}}
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, {model}{flags}]
        resources:
          limits: {{nvidia.com/gpu: {gpus}}}
"""


def manifest(types: str, model: str, gpus: int, flags: str = "") -> str:
    return NODEPOOL.format(types=types) + "---\n" + DEPLOYMENT.format(model=model, gpus=gpus, flags=flags)


def run(text: str, select=CAPACITY, version=None):
    return lint_text(text, "m.yaml", LintOptions(select=select, vllm_version=version)).findings


def test_every_admitted_instance_type_too_small_is_an_error():
    findings = [f for f in run(manifest("g5.12xlarge", "meta-llama/Llama-3.1-70B-Instruct", 8, ", -tp, '8'"))
                if f.code == "VL606"]
    assert [f.severity for f in findings] == [Severity.ERROR]
    assert "more than any node it may land on has" in findings[0].message


def test_some_instance_types_failing_is_a_warning_naming_them():
    # Qwen2.5-32B in bf16 on one GPU: 61 GiB of weights do not fit an L40S (48 GB), they do fit an H100.
    flags = ", --max-model-len, '8192'"
    findings = [f for f in run(manifest("g6e.xlarge, p5.4xlarge", "Qwen/Qwen2.5-32B-Instruct", 1, flags))
                if f.code == "VL601"]
    assert [f.severity for f in findings] == [Severity.WARNING]
    assert "L40S" in findings[0].message and "p5.4xlarge" in findings[0].message
    only_l40s = [f for f in run(manifest("g6e.xlarge", "Qwen/Qwen2.5-32B-Instruct", 1, flags)) if f.code == "VL601"]
    assert [f.severity for f in only_l40s] == [Severity.ERROR]


# --- the audited chapter ---------------------------------------------------------------------------
def test_audited_single_gpu_demo_has_no_capacity_finding():
    result = lint_files(AUDITED / "single-gpu-deployment.yaml", select=CAPACITY)
    assert result.findings == []


def test_audited_benchmark_fits_on_its_l4():
    result = lint_files(AUDITED / "benchmark-reproduce.yaml", select=CAPACITY)
    assert result.findings == []
    # ... and not because nothing was known: the NodePool's template label places it on g6.2xlarge.
    linter = Linter()
    linter.add_file(AUDITED / "benchmark-reproduce.yaml")
    [work] = workloads(linter.build())
    assert work.model.id == "Qwen/Qwen2.5-7B-Instruct" and work.release == "0.6.4.post1"
    assert [(p.candidate.instance_type, p.origin) for p in work.landings] == [("g6.2xlarge", "NodePool bench-gpu")]
    plan = work.estimate(work.landings[0].candidate.gpu)
    assert plan.ok and plan.max_sequences >= 16


def test_audited_benchmark_without_the_toleration_lands_nowhere_known():
    # The capacity rules count written tolerations only: the one ExtendedResourceToleration would add is a
    # cluster setting, and assuming it would put the pod where these rules then report.
    text = (AUDITED / "benchmark-reproduce.yaml").read_text()
    untolerated = text.replace('tolerations: [{ key: nvidia.com/gpu, value: "true", effect: NoSchedule }]', "")
    assert untolerated != text
    linter = Linter()
    linter.add_text(untolerated, "b.yaml")
    [work] = workloads(linter.build())
    assert work.landings is None  # the tainted pool does not admit it, and no other hardware is known


def test_a_taint_keyed_by_no_requested_resource_still_keeps_the_pod_off():
    text = (AUDITED / "benchmark-reproduce.yaml").read_text()
    other = text.replace('taints: [{ key: nvidia.com/gpu, value: "true", effect: NoSchedule }]',
                         'taints: [{ key: dedicated, value: bench, effect: NoSchedule }]')
    assert other != text
    linter = Linter()
    linter.add_text(other, "b.yaml")
    [work] = workloads(linter.build())
    assert work.landings is None  # the tainted pool does not admit it, and no other hardware is known


# --- where pods land --------------------------------------------------------------------------------
def _placed(text: str):
    linter = Linter()
    linter.add_text(text, "p.yaml")
    world = linter.build()
    return landings(world.invocations[0].container.pod, world)


def test_nodepool_template_label_must_match_the_node_selector():
    pool = NODEPOOL.format(types="g6.xlarge")
    pool = pool.replace("  template:\n", "  template:\n    metadata: {labels: {team: a}}\n")
    pod = DEPLOYMENT.format(model="Qwen/Qwen3-8B", gpus=1, flags="").replace(
        "    spec:\n      containers:", "    spec:\n      nodeSelector: {team: b}\n      containers:")
    assert _placed(pool + "---\n" + pod) is None
    assert [p.candidate.gpu.id for p in _placed(pool + "---\n" + pod.replace("team: b", "team: a"))] == ["L4"]


def test_node_affinity_on_the_gpu_product():
    pod = DEPLOYMENT.format(model="Qwen/Qwen3-8B", gpus=1, flags="").replace("    spec:\n      containers:", """\
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}
      containers:""")
    [placement] = _placed(pod)
    assert placement.candidate.gpu.id == "H100-80GB" and placement.origin == "node affinity"


def test_a_pool_of_unknown_hardware_makes_the_gpu_unknown():
    pool = NODEPOOL.format(types="m5.large")
    assert _placed(pool + "---\n" + DEPLOYMENT.format(model="Qwen/Qwen3-8B", gpus=1, flags="")) is None


# --- settings ---------------------------------------------------------------------------------------
def test_values_only_known_at_run_time_silence_what_depends_on_them():
    text = manifest("p3.16xlarge", "meta-llama/Llama-3.1-70B-Instruct", 8, ", --tensor-parallel-size, $(TP)")
    findings = run(text)
    assert "VL601" not in codes(findings)
    assert "VL606" not in [f.code for f in findings if f.severity == Severity.ERROR]
    linter = Linter()
    linter.add_text(text, "m.yaml")
    [work] = workloads(linter.build())
    assert "--tensor-parallel-size" in work.unknown


def test_served_model_name_is_irrelevant():
    text = manifest("g6.xlarge", "Qwen/Qwen2.5-72B-Instruct", 1, ", --served-model-name, Qwen/Qwen3-0.6B")
    assert "VL601" in codes(run(text))


def test_unknown_model_gives_no_estimate_finding():
    text = manifest("g4dn.xlarge", "acme/secret-model-70b", 1)
    assert set(codes(run(text))) <= {"VL607"}


def test_human_readable_lengths_and_quantities():
    assert human_int("32k") == 32000 and human_int("32K") == 32768 and human_int("4096") == 4096
    assert human_int("auto") is None
    assert quantity_int("8Gi") == 8 * 2**30 and quantity_int("8G") == 8 * 10**9
    assert quantity_int("800G") < 756 * 2**30 < quantity_int("1Ti")
    assert quantity_int("lots") is None


def test_short_flags_and_underscores():
    linter = Linter()
    flags = ", -tp, '4', --max_model_len, '8k'"
    linter.add_text(DEPLOYMENT.format(model="Qwen/Qwen3-32B", gpus=4, flags=flags), "m.yaml")
    [work] = workloads(linter.build())
    assert work.tensor_parallel_size == 4 and work.max_model_len == 8000


# --- rule by rule details ---------------------------------------------------------------------------
def test_kv_shortfall_within_the_margin_is_only_a_warning():
    # The chapter's StatefulSet at TP 16 (if it had its 16 GPUs): ~83k tokens of KV per rank once the reserves
    # the start-up logs show are counted (2.1 GiB non-torch per rank at TP 8, tests/data/startup-logs), so a
    # 88000-token context falls short by less than the estimate's margin.
    linter = Linter(LintOptions(select=["VL602"]))
    statefulset = (ORIGINAL / "multi-node-statefulset.yaml").read_text(encoding="utf-8")
    linter.add_text(statefulset.replace("--tensor-parallel-size=16 \\\n",
                                        "--tensor-parallel-size=16 \\\n      --max-model-len=88000 \\\n"),
                    "multi-node-statefulset.yaml")
    linter.add_file(ORIGINAL / "karpenter-nodepool.yaml", "karpenter-nodepool.yaml")
    [finding] = linter.run().findings
    assert finding.severity == Severity.WARNING and "within the estimate's margin" in finding.message


def test_full_context_8b_on_an_l4_is_an_error_pointing_at_the_model():
    text = manifest("g6.xlarge", "meta-llama/Llama-3.1-8B-Instruct", 1)
    [finding] = [f for f in run(text) if f.code == "VL602"]
    assert finding.severity == Severity.ERROR
    assert "lower --max-model-len" in finding.message and "131072" in finding.message


def test_tp_16_replicates_llama_70b_kv_heads():
    text = manifest("p4d.24xlarge", "meta-llama/Llama-3.1-70B-Instruct", 8, ", -tp, '16', --nnodes, '2'")
    assert "VL604" not in codes(run(text)) and "VL606" not in codes(run(text))


def test_long_context_allowed_by_env():
    text = manifest("p5.48xlarge", "Qwen/Qwen2.5-7B-Instruct", 1, ", --max-model-len, '65536'")
    assert "VL605" in codes(run(text))
    env = "        env: [{name: VLLM_ALLOW_LONG_MAX_MODEL_LEN, value: '1'}]\n"
    allowed = text.replace("        resources:", env + "        resources:")
    assert "VL605" not in codes(run(allowed))


@pytest.mark.parametrize("image,expected", [("v0.19.1", False), ("v0.20.0", True), ("latest", True)])
def test_v100_floor_follows_the_release(image, expected):
    text = manifest("p3.2xlarge", "Qwen/Qwen3-0.6B", 1, ", --dtype, half").replace("v0.29.0", image)
    assert ("VL607" in codes(run(text))) is expected


def test_fp8_on_an_a10g_is_information():
    text = manifest("g5.xlarge", "Qwen/Qwen3-8B", 1, ", --quantization, fp8, --max-model-len, '8192'")
    [finding] = [f for f in run(text) if f.code == "VL607"]
    assert finding.severity == Severity.INFO and "weight-only" in finding.message


def test_low_concurrency_runs_only_when_selected():
    text = manifest("g6.2xlarge", "Qwen/Qwen2.5-7B-Instruct", 1, ", --max-model-len, '32768', --max-num-seqs, '64'")
    assert "VL603" not in codes(lint_text(text, "m.yaml").findings)
    [finding] = run(text, select=["VL603"])
    assert finding.severity == Severity.INFO and "--max-num-seqs 64" in finding.message


def test_cache_volume_compares_bytes_not_names():
    flags = ", -tp, '8', -pp, '2', --nnodes, '2'"
    pod = DEPLOYMENT.format(model="meta-llama/Llama-3.1-405B-Instruct", gpus=8, flags=flags)
    pod = pod.replace("        resources:", "        env: [{name: HF_HOME, value: /hf}]\n"
                      "        volumeMounts: [{name: hf, mountPath: /hf}]\n        resources:")
    pod += "      volumes: [{name: hf, emptyDir: {sizeLimit: SIZE}}]\n"
    assert "VL609" in codes(run(pod.replace("SIZE", "800G")))  # 745 GiB < 756 GiB of bf16 weights
    assert "VL609" not in codes(run(pod.replace("SIZE", "800Gi")))


# --- extra models and GPUs --------------------------------------------------------------------------
def test_registered_extra_model_and_gpu():
    register_extra(
        models=[{"id": "acme/Tiny-70B", "family": "llama", "architecture": "LlamaForCausalLM",
                 "parameters": 70_553_706_496, "num_hidden_layers": 80, "hidden_size": 8192,
                 "intermediate_size": 28672, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
                 "vocab_size": 128256, "tie_word_embeddings": False, "max_position_embeddings": 8192}],
        gpus=[{"id": "Acme-24GB", "compute_capability": "8.9", "cuda_total_gib": 22.0,
               "labels": {"gpu_product": ["Acme-24GB"]}}])
    try:
        selector = "    spec:\n      nodeSelector: {nvidia.com/gpu.product: Acme-24GB}\n      containers:"
        text = DEPLOYMENT.format(model="acme/Tiny-70B", gpus=1, flags="")
        text = text.replace("    spec:\n      containers:", selector)
        [finding] = [f for f in run(text) if f.code == "VL601"]
        assert "acme/Tiny-70B" in finding.message and "Acme-24GB" in finding.message
    finally:
        clear_extra()
    assert [f for f in run(text) if f.code == "VL601"] == []


def test_read_workload_without_a_world():
    linter = Linter()
    linter.add_text(DEPLOYMENT.format(model="$(MODEL)", gpus=1, flags=""), "m.yaml")
    world = linter.build()
    work = read_workload(world.invocations[0])
    assert work.model is None and "model" in work.unknown


def test_karpenter_shape_labels_narrow_instance_types():
    from vllmlint.capacity import gpus_for_node_constraints

    family = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5", "g6"]}
    size = {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["12xlarge", "48xlarge"]}
    found = gpus_for_node_constraints(None, [family, size])
    assert sorted(c.instance_type for c in found) == ["g5.12xlarge", "g5.48xlarge", "g6.12xlarge", "g6.48xlarge"]
    # A size or category alone spans CPU instances too: no hardware is known from it.
    assert gpus_for_node_constraints(None, [{"key": "karpenter.k8s.aws/instance-category", "operator": "In",
                                             "values": ["g"]}]) is None


def test_local_model_sized_from_a_config_json_in_the_linted_files(tmp_path):
    (tmp_path / "weights" / "acme-ft").mkdir(parents=True)
    (tmp_path / "weights" / "acme-ft" / "config.json").write_text(
        '{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192, '
        '"intermediate_size": 28672, "num_attention_heads": 64, "num_key_value_heads": 8, "num_hidden_layers": 80, '
        '"vocab_size": 128256, "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}')
    pod = DEPLOYMENT.format(model="/models/acme-ft", gpus=4, flags=", -tp, '4', --max-model-len, '8192'")
    selector = "    spec:\n      nodeSelector: {node.kubernetes.io/instance-type: g6.12xlarge}\n      containers:"
    (tmp_path / "deploy.yaml").write_text(pod.replace("    spec:\n      containers:", selector))
    from vllmlint.engine import lint_paths

    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL601"]))
    [finding] = result.findings
    assert "sized from its config.json at" in finding.message and "32.9 GiB" in finding.message
    # a generic directory name (`/models/model`) is never matched to some config.json
    deploy = tmp_path / "deploy.yaml"
    deploy.write_text(deploy.read_text().replace("/models/acme-ft", "/models/model"))
    (tmp_path / "weights" / "acme-ft").rename(tmp_path / "weights" / "model")
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL601"]))
    assert result.findings == []


def test_no_shm_warning_when_each_pod_holds_one_gpu():
    """Ray spreads PP 2 over two one-GPU pods: their ranks talk over the network, not /dev/shm."""
    from vllmlint.engine import LintOptions, lint_paths

    result, _ = lint_paths([str(ROOT / "fixtures" / "own" / "rayservice.yaml")], LintOptions(select=["VL608"]))
    assert result.findings == []
    result, _ = lint_paths([str(ORIGINAL / "single-node-deployment.yaml")], LintOptions(select=["VL608"]))
    assert [f.code for f in result.findings] == ["VL608"]  # TP 8 inside one 8-GPU pod does need it


def test_a_family_wide_nodepool_is_not_a_gpu_count_problem():
    """Karpenter picks a size that fits among a family's sizes: no size is worth a warning unless named."""
    text = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: l40s}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, "4", --max-model-len, "8192"]
        resources: {limits: {nvidia.com/gpu: 4}}
        volumeMounts: [{name: shm, mountPath: /dev/shm}]
      volumes: [{name: shm, emptyDir: {medium: Memory}}]
"""
    result = lint_text(text, "k8s/vllm.yaml", LintOptions(select=["VL606"]))
    assert result.findings == [] and not result.internal_error


def test_chapter_kv_cache_first_sentence_is_short(chapter):
    # issue 13: the problem and the length first; the model, the node and the missing --max-model-len after it
    [finding] = of(chapter, "VL602", "multi-node-statefulset.yaml")
    assert finding.message.startswith(
        "the KV cache left on V100-16GB cannot hold one sequence of the model's full context (131072 tokens): "
        "meta-llama/Llama-3.1-70B-Instruct (`/models/llama-3.1-70b` read as it) on V100-16GB (p3.16xlarge, from "
        "NodePool vllm-gpu) with no --max-model-len: of the 14.5 GiB")


def test_official_awq_repository_is_sized_as_4_bit_weights():
    # Qwen2.5-7B-Instruct in bf16 (15.2 GB of weights) leaves no KV cache on a T4 (16 GB); the -AWQ
    # repository is 4-bit (quantization "awq" from the name, as its config.json's quant_method) and fits.
    flags = ", --max-model-len, '4096'"
    bf16 = [(f.code, f.span.line, f.span.col)
            for f in run(manifest("g4dn.xlarge", "Qwen/Qwen2.5-7B-Instruct", 1, flags)) if f.code in ("VL601", "VL602")]
    assert bf16 == [("VL601", 21, 32)]
    awq = [f for f in run(manifest("g4dn.xlarge", "Qwen/Qwen2.5-7B-Instruct-AWQ", 1, flags))
           if f.code in ("VL601", "VL602")]
    assert awq == []
