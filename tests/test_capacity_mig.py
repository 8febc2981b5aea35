"""MIG slices as GPUs of their own memory (data/capacity/mig-profiles.yaml): names, node labels, resources,
the rules (VL601, VL602) and the planner."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from vllmlint.capacity.estimate import estimate
from vllmlint.capacity.nodes import gpus_for_node_constraints
from vllmlint.capacity.specs import find_gpu, mig_device, mig_devices

POD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      nodeSelector: {selector}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, {model}{args}]
        resources:
          limits: {{{resource}: 1}}
"""


def _lint(tmp_path: Path, name: str = "pod.yaml", **fields) -> tuple[int, list[dict]]:
    fields.setdefault("args", "")
    (tmp_path / name).write_text(POD.format(**fields), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "vllmlint", "--select", "VL601,VL602,VL606", "--format", "json",
                          str(tmp_path / name)], capture_output=True, text=True, timeout=120)
    return run.returncode, json.loads(run.stdout)["findings"] if run.stdout.strip() else []


def test_a_mig_device_is_its_parents_slice():
    a100 = find_gpu("A100-80GB")
    slice_ = mig_device(a100, "1g.10gb")
    assert slice_.id == "A100-80GB-MIG-1g.10gb" and slice_.mig_parent == "A100-80GB"
    assert slice_.cuda_total_gib == pytest.approx(79.15 / 8, abs=0.01)  # 1/8 of the memory: an upper bound
    assert slice_.cuda_total_estimated
    assert slice_.sm_count == 108 // 7 and slice_.compute_capability == a100.compute_capability
    assert mig_device(a100, "1g.5gb") is None  # an A100 40GB profile
    assert mig_device(find_gpu("L4"), "1g.10gb") is None  # no MIG on an L4
    assert {g.mig_parent for g in mig_devices("1g.10gb")} == {"A100-40GB", "A100-80GB", "H100-80GB"}


def test_mig_devices_resolve_by_id_and_by_the_single_strategys_product_label():
    assert find_gpu("A100-80GB-MIG-3g.40gb").mig_profile == "3g.40gb"
    assert find_gpu("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb").id == "A100-40GB-MIG-1g.5gb"
    assert find_gpu("H100-80GB-MIG-9g.90gb") is None
    assert find_gpu("A100-80GB").mig_parent is None  # the whole GPU is still itself


def test_node_labels_name_slices():
    single = gpus_for_node_constraints({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"})
    assert [c.gpu.id for c in single] == ["A100-40GB-MIG-1g.5gb"]
    gke = gpus_for_node_constraints({"cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
                                     "cloud.google.com/gke-gpu-partition-size": "1g.10gb"})
    assert [c.gpu.id for c in gke] == ["H100-80GB-MIG-1g.10gb"]
    # without a MIG value the catalogue's slices are not candidates of an open constraint
    assert all(c.gpu.mig_parent is None for c in gpus_for_node_constraints(
        None, [{"key": "nvidia.com/gpu.product", "operator": "Exists"}]))


def test_a_29_gb_model_on_a_10_gb_slice_does_not_fit_and_on_40_gb_it_does():
    model = "Qwen/Qwen2.5-14B-Instruct"  # 14.8 B parameters: 29.5 GB of bf16 weights
    small = estimate(model, "A100-80GB-MIG-1g.10gb", max_model_len=8192, vllm_version="0.29.0")
    big = estimate(model, "A100-80GB-MIG-3g.40gb", max_model_len=8192, vllm_version="0.29.0")
    assert small.weights_bytes / 1e9 == pytest.approx(29.5, abs=0.2)
    assert not small.fits and big.ok


def test_vl601_fires_on_a_mixed_strategy_resource_of_a_too_small_slice(tmp_path):
    code, findings = _lint(tmp_path, selector="{nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}",
                           model="Qwen/Qwen2.5-14B-Instruct", args=", --max-model-len, '8192'",
                           resource="nvidia.com/mig-1g.10gb")
    assert code == 1
    assert [f["code"] for f in findings] == ["VL601"]
    assert "A100-80GB-MIG-1g.10gb" in findings[0]["message"]
    text = subprocess.run([sys.executable, "-m", "vllmlint", "--select", "VL601", str(tmp_path / "pod.yaml")],
                          capture_output=True, text=True, timeout=120).stdout
    assert "nvidia.com/mig-3g.40gb would fit" in text
    assert "--tensor-parallel-size" not in text  # one process sees one MIG device: no TP across slices
    code, findings = _lint(tmp_path, selector="{nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}",
                           model="Qwen/Qwen2.5-14B-Instruct", args=", --max-model-len, '8192'",
                           resource="nvidia.com/mig-3g.40gb")
    assert (code, findings) == (0, [])


def test_vl601_on_a_slice_without_a_node_label_judges_every_gpu_with_that_profile(tmp_path):
    _, findings = _lint(tmp_path, selector="{}", model="Qwen/Qwen2.5-14B-Instruct",
                        args=", --max-model-len, '8192'", resource="nvidia.com/mig-1g.10gb")
    assert [f["code"] for f in findings] == ["VL601"] and findings[0]["severity"] == "error"
    # an unknown profile is no GPU the rules know: silent
    _, findings = _lint(tmp_path, selector="{}", model="Qwen/Qwen2.5-14B-Instruct", resource="nvidia.com/mig-5g.55gb")
    assert findings == []


def test_vl602_fires_on_a_gke_partition_too_small_for_the_full_context(tmp_path):
    selector = "{cloud.google.com/gke-accelerator: nvidia-a100-80gb, cloud.google.com/gke-gpu-partition-size: 2g.20gb}"
    _, findings = _lint(tmp_path, selector=selector, model="meta-llama/Llama-3.1-8B-Instruct", resource="nvidia.com/gpu")
    assert [f["code"] for f in findings] == ["VL602"]
    assert "A100-80GB-MIG-2g.20gb" in findings[0]["message"]
    _, findings = _lint(tmp_path, selector=selector, model="meta-llama/Llama-3.1-8B-Instruct",
                        args=", --max-model-len, '8192'", resource="nvidia.com/gpu")
    assert findings == []


def test_the_planner_gives_the_verdict_for_a_slice(tmp_path):
    run = subprocess.run([sys.executable, "-m", "vllmlint", "capacity", "--model", "Qwen/Qwen2.5-14B-Instruct",
                          "--gpu", "A100-80GB-MIG-1g.10gb", "--max-model-len", "8192", "--format", "json"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    plan = json.loads(run.stdout)["estimates"][0]
    assert plan["gpu"] == "A100-80GB-MIG-1g.10gb" and plan["starts"] is False
    assert plan["smallest_tp_that_fits"] is None  # no TP across slices
    (tmp_path / "pod.yaml").write_text(POD.format(selector="{nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}",
                                                  model="Qwen/Qwen2.5-14B-Instruct", args="",
                                                  resource="nvidia.com/mig-1g.10gb"), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "vllmlint", "capacity", str(tmp_path / "pod.yaml")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert "A100-80GB-MIG-1g.10gb" in run.stdout and "does not fit" in run.stdout
    assert "a MIG slice runs TP 1 only" in run.stdout
