"""The engine of 0.8 - 0.10 releases: `vllmlint capacity --engine v0|v1`, and VLLM_USE_V1=0 read from a workload."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vllmlint.capacity.estimate import estimate


def capacity(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vllmlint", "capacity", *args], capture_output=True, text=True,
                          timeout=120)


PLAN = ("--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "L4", "--max-model-len", "4096")


def test_engine_v0_plans_with_the_v0_sampler_and_profile():
    v0 = capacity(*PLAN, "--vllm-version", "0.9.2", "--engine", "v0", "--format", "json")
    v1 = capacity(*PLAN, "--vllm-version", "0.9.2", "--format", "json")
    assert v0.returncode == v1.returncode == 0, v0.stderr
    plan0, plan1 = json.loads(v0.stdout)["estimates"][0], json.loads(v1.stdout)["estimates"][0]
    assert (plan0["engine"], plan1["engine"]) == ("V0", "V1")
    expected = estimate("Qwen/Qwen2.5-7B-Instruct", "L4", vllm_version="0.9.2", max_model_len=4096, v1_engine=False)
    assert plan0["reserve_parts_gib"]["activations"] == pytest.approx(expected.reserve_parts["activations"] / 2**30,
                                                                      abs=0.01)
    # V0 samples 256 x 152064 logits at 38 B; V1's FlashInfer sampler of 0.9 at 12 B
    assert plan0["reserve_parts_gib"]["activations"] > 2 * plan1["reserve_parts_gib"]["activations"]
    text = capacity(*PLAN, "--vllm-version", "0.9.2", "--engine", "v0").stdout
    assert "V0 engine (VLLM_USE_V1=0)" in text


@pytest.mark.parametrize("args, message", [
    (("--engine", "v0"), "has no V0 engine"),  # the newest release
    (("--engine", "v0", "--vllm-version", "0.11.0"), "has no V0 engine"),
    (("--engine", "v1", "--vllm-version", "0.7.3"), "predates the V1 engine"),
])
def test_an_engine_the_release_does_not_have_is_a_usage_error(args, message):
    run = capacity(*PLAN, *args)
    assert run.returncode == 2 and message in run.stderr and run.stderr.count("\n") == 1


def test_engine_with_manifests_is_a_usage_error(tmp_path):
    (tmp_path / "a.yaml").write_text("kind: ConfigMap\n", encoding="utf-8")
    run = capacity(str(tmp_path / "a.yaml"), "--engine", "v0")
    assert run.returncode == 2 and "VLLM_USE_V1 is read" in run.stderr


MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L4}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v{release}
        command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "4096"]
        env: [{{name: VLLM_USE_V1, value: "0"}}]
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize("release, engine", [("0.9.2", "V0"), ("0.10.1.1", "V0"), ("0.11.0", "V1")])
def test_a_workloads_vllm_use_v1_0_is_read_where_the_release_has_v0(tmp_path, release, engine):
    (tmp_path / "pod.yaml").write_text(MANIFEST.format(release=release), encoding="utf-8")
    run = capacity(str(tmp_path / "pod.yaml"), "--format", "json")
    assert json.loads(run.stdout)["estimates"][0]["engine"] == engine
