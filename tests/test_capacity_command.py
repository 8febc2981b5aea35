"""`vllmlint capacity` through the real command line (a subprocess, as a user runs it)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORIGINAL = ROOT / "fixtures" / "original"
AUDITED = ROOT / "fixtures" / "audited"


def capacity(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vllmlint", "capacity", "--no-config", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def estimates(*args: str) -> tuple[list[dict], subprocess.CompletedProcess]:
    done = capacity(*args, "--format", "json")
    return json.loads(done.stdout)["estimates"], done


def test_planning_70b_on_h100_tp4():
    [row], done = estimates("--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "H100", "--tp", "4",
                            "--max-model-len", "32768")
    assert done.returncode == 0, done.stderr
    assert row["gpu"] == "H100-80GB" and row["tensor_parallel_size"] == 4
    # Hand check: 70.55B parameters x 2 bytes / 4 ranks (+ vocab-parallel rows) = 32.86 GiB per GPU;
    # 80 layers x 2 (K, V) x 8/4 KV heads x 128 x 2 bytes = 80 KiB per token per GPU.
    assert row["weights_gib"] == 32.86
    assert row["kv_bytes_per_token"] == 80 * 1024
    assert row["budget_gib"] == 72.88  # 0.92 x 79.22
    assert 450_000 < row["kv_tokens"] < 550_000
    assert row["full_length_sequences"] == row["kv_tokens"] // 32768
    assert row["verdict"] == "fits"
    # TP 2 leaves 7.17 GiB after 65.71 GiB of weights, short of 5.0 GiB of KV once vLLM's reserves are counted
    # as the start-up logs show them (tests/data/startup-logs: ~0.55 GiB non-torch per rank at TP 2, the sampler's
    # 1024 x 128256 logits, the CUDA-graph estimate): 30.5k tokens < 32768, vLLM refuses; TP 4 is the smallest.
    assert row["smallest_tp_that_fits"] == 4 and row["smallest_tp_full_length_sequences"] == 14


def test_planning_text_output_answers_the_question():
    done = capacity("--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "H100", "--tp", "4",
                    "--max-model-len", "32k")
    assert done.returncode == 0, done.stderr
    for label in ("weights per GPU", "reserve per GPU", "KV per token per GPU", "KV tokens that fit",
                  "full-length sequences", "verdict", "smallest TP that fits"):
        assert label in done.stdout
    assert "32,000 tokens" in done.stdout  # 32k is 32000, as vLLM reads it


def test_planning_does_not_fit_exits_1_and_suggests_a_tp():
    [row], done = estimates("--model", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "L4", "--max-model-len", "8192")
    assert done.returncode == 1
    assert not row["fits"] and row["smallest_tp_that_fits"] == 8



def test_absurd_sizes_are_usage_errors_that_name_the_option():
    done = capacity("--model", "Qwen/Qwen3-0.6B", "--gpu", "L4", "--pp", "1000000")
    assert done.returncode == 2 and "'--pp'" in done.stderr and "1<=x<=65536" in done.stderr
    done = capacity("--model", "Qwen/Qwen3-0.6B", "--gpu", "L4", "--max-model-len", "9" * 40)
    assert done.returncode == 2 and "is not a length vLLM takes" in done.stderr

def test_instance_type_and_fp8_name():
    [row], done = estimates("--model", "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", "--instance-type", "g6e.12xlarge",
                            "--tp", "4", "--max-model-len", "16384")
    assert row["dtype"] == "fp8" and row["instance_type"] == "g6e.12xlarge" and row["gpus_per_node"] == 4
    assert row["weights_gib"] < 20


def test_uncatalogued_model_from_its_config_json(tmp_path):
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
              "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16",
              "tie_word_embeddings": False}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    [row], done = estimates("--model-config", str(path), "--model", "acme/llama-8b-ft", "--gpu", "L4")
    assert done.returncode == 0, done.stderr
    assert row["model"] == "acme/llama-8b-ft" and row["max_model_len"] == 8192
    assert 14.5 < row["weights_gib"] < 15.5  # an 8B Llama in bf16


def test_the_chapter_manifests():
    rows, done = estimates(str(ORIGINAL / "single-node-deployment.yaml"), str(ORIGINAL / "multi-node-statefulset.yaml"),
                           str(ORIGINAL / "karpenter-nodepool.yaml"))
    assert done.returncode == 1
    by_object = {}
    for row in rows:
        by_object.setdefault(row["workload"]["object"], []).append(row)
    [deployment] = by_object["Deployment/vllm-inference"]  # only p3.16xlarge has the 8 GPUs it asks for
    assert deployment["instance_type"] == "p3.16xlarge" and deployment["gpu_origin"] == "NodePool vllm-gpu"
    assert deployment["weights_gib"] == 16.43 and deployment["budget_gib"] == 14.98
    assert deployment["verdict"].startswith("does not fit")
    [statefulset] = by_object["StatefulSet/vllm-inference"]
    assert statefulset["tensor_parallel_size"] == 16 and statefulset["fits"]


def test_the_audited_benchmark_fits():
    [row], done = estimates(str(AUDITED / "benchmark-reproduce.yaml"))
    assert done.returncode == 0, done.stderr
    assert row["instance_type"] == "g6.2xlarge" and row["gpu_origin"] == "NodePool bench-gpu"
    assert row["vllm_version"] == "0.6.4" and row["gpu_memory_utilization"] == 0.9
    assert row["verdict"] == "fits" and row["full_length_sequences"] >= 16


def test_workloads_without_a_known_gpu_are_noted_and_can_be_assumed():
    done = capacity(str(AUDITED / "single-gpu-deployment.yaml"))
    assert "no GPU known" in done.stderr and done.returncode == 0
    [row], done = estimates(str(AUDITED / "single-gpu-deployment.yaml"), "--gpu", "L4")
    assert row["gpu_origin"].startswith("--gpu") and row["verdict"] == "fits" and row["max_model_len"] == 2048


def test_usage_errors():
    assert capacity().returncode == 2
    assert capacity("--model", "meta-llama/Llama-3.1-8B-Instruct").returncode == 2
    done = capacity("--model", "acme/unknown-model", "--gpu", "L4")
    assert done.returncode == 2 and "--model-config" in done.stderr
    assert capacity("--model", "Qwen/Qwen3-8B", "--gpu", "RTX-9999").returncode == 2


def test_listed_by_the_cli():
    done = subprocess.run([sys.executable, "-m", "vllmlint", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert "capacity" in done.stdout


def test_values_files_and_dockerfiles_name_their_workloads(tmp_path):
    # A values file's entry is named as the linter names it (role/container, modelSpec/name), never "script".
    [row], done = estimates(str(ROOT / "fixtures" / "own" / "helm-values-llm-d.yaml"))
    assert row["workload"] == {"object": "decode/vllm", "container": "",
                               "file": "fixtures/own/helm-values-llm-d.yaml", "line": 10}, done.stderr
    done = capacity(str(ROOT / "fixtures" / "own" / "helm-values-llm-d.yaml"))
    assert done.stdout.splitlines()[0] == "decode/vllm (fixtures/own/helm-values-llm-d.yaml:10)"
    (tmp_path / "Dockerfile").write_text('FROM vllm/vllm-openai:v0.29.0\nCMD ["Qwen/Qwen3-8B"]\n')
    done = capacity("Dockerfile", cwd=tmp_path)
    assert "image (Dockerfile:2): not estimated: no GPU known" in done.stderr, done.stderr
