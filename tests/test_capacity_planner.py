"""The planner (`vllmlint capacity --model X --gpu A,B --tp 1,2,4,8`) from the command line: exact GPU names,
did-you-mean, the GPU x TP table, the memory bars, colour, the exit codes of vLLM's refusals, the catalog lists."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vllmlint.capacity import find_gpu, gpus, models
from vllmlint.capacity.names import gpu_suggestions, model_suggestions
from vllmlint.commands.capacity import BAR_WIDTH, memory_bar

ROOT = Path(__file__).resolve().parent.parent
LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"


def capacity(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vllmlint", "capacity", "--no-config", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)


def plans(*args: str) -> tuple[list[dict], subprocess.CompletedProcess]:
    done = capacity(*args, "--format", "json")
    assert done.stdout, done.stderr
    return json.loads(done.stdout)["estimates"], done


# --------------------------------------------------------------------------- GPU names


def test_a10_is_the_24_gb_a10_not_an_a100():
    [row], done = plans("--model", LLAMA_70B, "--gpu", "A10", "--tp", "4")
    assert row["gpu"] == "A10" and row["gpu_total_gib"] == 22.18
    # 32.86 GiB of weights per GPU on a 0.92 x 22.18 = 20.41 GiB budget: vLLM cannot load it
    assert row["budget_gib"] == 20.41 and row["weights_gib"] == 32.86
    assert not row["fits"] and not row["starts"] and row["verdict"].startswith("does not fit")
    assert done.returncode == 1


@pytest.mark.parametrize("name, gpu_id", [
    ("A10", "A10"), ("a10g", "A10G"), ("H100", "H100-80GB"),  # id, Karpenter's unique h100
    ("nvidia-h100-80gb", "H100-80GB"),  # GKE cloud.google.com/gke-accelerator
    ("NVIDIA-H100-80GB-HBM3", "H100-80GB"),  # GPU feature discovery nvidia.com/gpu.product
    ("NVIDIA H100 80GB HBM3", "H100-80GB"),  # as nvidia-smi prints it
    ("nvidia-tesla-a100", "A100-40GB"), ("nvidia-a100-80gb", "A100-80GB"),
    ("nvidia-tesla-t4", "T4"),  # EKS k8s.amazonaws.com/accelerator
    ("nvidia-tesla-a10", "A10G"),  # EKS convention on g5 nodes, whose GPU is the A10G
    ("l4", "L4"), ("NVIDIA-GeForce-RTX-4090", "RTX-4090"), ("rtx 4090", "RTX-4090"), ("4090", "RTX-4090"),
    ("Tesla-V100S-PCIE-32GB", "V100S"), ("nvidia-rtx-pro-6000", "RTX-PRO-6000"), ("nvidia-gb200", "GB200"),
    ("mi300x", "MI300X"), ("NVIDIA-L20", "L20"), ("NVIDIA-A40", "A40"),
])
def test_gpu_names_resolve_exactly(name, gpu_id):
    assert find_gpu(name).id == gpu_id


@pytest.mark.parametrize("name", ["A100", "a100", "v100", "H10", "RTX-9999", "A1", "", "H100-SXM"])
def test_prefixes_and_shared_names_do_not_resolve(name):
    assert find_gpu(name) is None


def test_unknown_gpu_is_a_usage_error_with_did_you_mean():
    done = capacity("--model", LLAMA_70B, "--gpu", "A100")
    assert done.returncode == 2 and done.stdout == ""
    assert "unknown GPU 'A100': did you mean `A100-40GB` or `A100-80GB`?" in done.stderr
    assert "--list-gpus" in done.stderr and "Traceback" not in done.stderr
    assert gpu_suggestions("RTX-9999")[:3] == ["RTX-5090", "RTX-4090", "RTX-3090"]
    done = capacity("--model", LLAMA_70B, "--gpu", "L4,B100,H100")  # one bad name in a list stops the run
    assert done.returncode == 2 and "unknown GPU 'B100'" in done.stderr and done.stdout == ""


def test_unknown_instance_type_suggests_close_ones():
    done = capacity("--model", LLAMA_70B, "--instance-type", "p5.48xlarg")
    assert done.returncode == 2 and "did you mean `p5.48xlarge`" in done.stderr


def test_a_manifest_run_takes_one_assumed_gpu():
    done = capacity("fixtures/audited/single-gpu-deployment.yaml", "--gpu", "L4,A10G")
    assert done.returncode == 2 and "give one" in done.stderr


# --------------------------------------------------------------------------- model names


@pytest.mark.parametrize("name, suggestion", [
    ("llama-3.1-70b", LLAMA_70B), ("qwen3-32b", "Qwen/Qwen3-32B"), ("llama3-70b", LLAMA_70B),
])
def test_short_model_names_get_a_did_you_mean_never_a_guess(name, suggestion):
    done = capacity("--model", name, "--gpu", "H100")
    assert done.returncode == 2 and done.stdout == ""
    assert f"unknown model {name!r}: did you mean `{suggestion}`" in done.stderr
    assert suggestion in model_suggestions(name)


def test_unknown_model_without_a_close_name_points_at_model_config():
    done = capacity("--model", "acme/zzz-unknown", "--gpu", "L4")
    assert done.returncode == 2 and "did you mean" not in done.stderr and "--model-config" in done.stderr


# --------------------------------------------------------------------------- the GPU x TP table


def test_gpu_by_tp_json_is_one_object_per_plan_in_order():
    rows, done = plans("--model", LLAMA_70B, "--gpu", "L4,A10G,L40S,H100", "--tp", "1,2,4,8",
                       "--max-model-len", "32768")
    assert [(r["gpu"], r["tensor_parallel_size"]) for r in rows] == [
        (gpu, tp) for gpu in ("L4", "A10G", "L40S", "H100-80GB") for tp in (1, 2, 4, 8)]
    by_plan = {(r["gpu"], r["tensor_parallel_size"]): r for r in rows}
    # far from the boundary whatever the reserve figures: 131 / 66 / 33 GiB of weights per GPU on a 22 GiB L4
    # do not fit; on H100s at TP 4 and 8 they leave 38 and 54 GiB of KV cache
    assert [tp for tp in (1, 2, 4) if by_plan["L4", tp]["fits"]] == []
    assert not by_plan["H100-80GB", 1]["fits"] and by_plan["H100-80GB", 4]["starts"] and by_plan["H100-80GB", 8]["starts"]
    h100_tp4 = by_plan["H100-80GB", 4]
    assert h100_tp4["weights_gib"] == 32.86 and h100_tp4["budget_gib"] == 72.88  # the hand check of the command
    for row in rows:
        assert row["full_length_sequences"] == row["kv_tokens"] // 32768
        assert row["starts"] == (row["fits"] and row["kv_ok"] and not row["refusals"])
        parts = row["weights_gib"] + row["reserve_gib"] + row["kv_cache_gib"] + row["unused_budget_gib"]
        if row["fits"]:
            assert abs(parts - row["budget_gib"]) < 0.05  # the bar's parts fill the budget
        assert abs(row["budget_gib"] + row["outside_budget_gib"] - row["gpu_total_gib"]) < 0.02
    assert done.returncode == 1  # L4 at TP 1 (and others) does not fit


def test_gpu_by_tp_text_table_has_one_line_and_one_bar_per_plan():
    done = capacity("--model", LLAMA_70B, "--gpu", "L4", "--gpu", "A10G,H100", "--tp", "4,8", "--max-model-len", "32k")
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("GPU "))
    assert lines[header].split()[:3] == ["GPU", "TP", "verdict"] and "memory per GPU" in lines[header]
    body = lines[header + 1: header + 7]
    assert [line.split()[:2] for line in body] == [["L4", "4"], ["L4", "8"], ["A10G", "4"], ["A10G", "8"],
                                                    ["H100-80GB", "4"], ["H100-80GB", "8"]]
    assert body[0].split()[2:5] == ["does", "not", "fit"] and body[5].split()[2] == "fits"
    for line in body:
        bar = line[line.index("["):]
        assert len(bar.rstrip(">")) == 30 + 2
    assert "# weights  = reserve  ~ KV cache" in done.stdout
    assert "\x1b[" not in done.stdout  # not a terminal: no colour
    assert done.returncode == 1


def test_every_plan_starts_exit_0():
    rows, done = plans("--model", "Qwen/Qwen3-8B", "--gpu", "L40S,H100", "--tp", "1,2", "--max-model-len", "8192")
    assert len(rows) == 4 and all(row["starts"] for row in rows) and done.returncode == 0


# --------------------------------------------------------------------------- vLLM's refusals


def test_tp_that_does_not_divide_the_heads_is_refused():
    [row], done = plans("--model", LLAMA_70B, "--gpu", "H100", "--tp", "3")
    assert row["fits"] and row["kv_ok"]  # memory alone would do
    assert row["refusals"] == ["Total number of attention heads (64) must be divisible by tensor parallel size (3)"]
    assert not row["starts"] and row["verdict"].startswith("vLLM refuses to start: Total number of attention heads")
    assert done.returncode == 1
    text = capacity("--model", LLAMA_70B, "--gpu", "H100", "--tp", "1,3")
    assert "refused: H100-80GB TP 3: vLLM refuses to start: Total number of attention heads (64)" in text.stdout
    assert text.returncode == 1


def test_kv_heads_neither_split_nor_replicated_are_refused():
    # Qwen2.5-7B: 28 attention heads (7 divides them), 4 KV heads (neither 4 % 7 nor 7 % 4 is 0)
    [row], done = plans("--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "L4", "--tp", "7", "--max-model-len", "4096")
    assert row["refusals"] and "4 KV heads" in row["refusals"][0] and done.returncode == 1
    [row], done = plans("--model", LLAMA_70B, "--gpu", "H100", "--tp", "16", "--max-model-len", "8192")
    assert row["refusals"] == [] and done.returncode == 0  # 8 KV heads replicated twice: accepted


def test_max_model_len_beyond_the_model_is_refused_unless_allowed():
    [row], done = plans("--model", LLAMA_70B, "--gpu", "H100", "--tp", "4", "--max-model-len", "200000")
    assert row["refusals"][0].startswith("User-specified max_model_len (200000) is greater than the derived "
                                         "max_model_len (max_position_embeddings=131072")
    assert done.returncode == 1
    [row], done = plans("--model", LLAMA_70B, "--gpu", "H100", "--tp", "4", "--max-model-len", "200000",
                        "--allow-long-max-model-len")
    assert row["refusals"] == [] and row["starts"] and done.returncode == 0


def test_bad_tp_lists_are_usage_errors():
    for value in ("1,x", "0", "2,-4", str(2**16 + 1)):
        done = capacity("--model", LLAMA_70B, "--gpu", "H100", "--tp", value)
        assert done.returncode == 2 and "is not a tensor-parallel size" in done.stderr, value


# --------------------------------------------------------------------------- the memory bar and colour


def test_memory_bar_parts_are_shares_of_the_gpu_memory():
    row = {"gpu_total_gib": 80.0, "weights_gib": 20.0, "reserve_gib": 4.0, "kv_cache_gib": 48.0, "budget_gib": 72.0}
    assert memory_bar(row, 40) == "[" + "#" * 10 + "=" * 2 + "~" * 24 + " " * 4 + "]"
    unused = dict(row, kv_cache_gib=28.0)  # a KV cache capped below the budget leaves some of it unused
    assert memory_bar(unused, 40) == "[" + "#" * 10 + "=" * 2 + "~" * 14 + "." * 10 + " " * 4 + "]"
    too_big = dict(row, weights_gib=100.0, kv_cache_gib=0.0)
    assert memory_bar(too_big, 40) == "[" + "#" * 40 + "]>"
    coloured = memory_bar(row, 40, color=True)
    assert "\x1b[34m" + "#" * 10 in coloured and coloured.count("\x1b[0m") == 3


def test_single_plan_text_shows_its_bar():
    done = capacity("--model", LLAMA_70B, "--gpu", "H100", "--tp", "4", "--max-model-len", "32768")
    [line] = [line for line in done.stdout.splitlines() if "memory per GPU" in line]
    bar = line[line.index("["):]
    assert len(bar) == BAR_WIDTH + 2 and bar.startswith("[#") and "~" in bar


def test_color_always_and_never():
    args = ("--model", LLAMA_70B, "--gpu", "H100", "--tp", "4", "--max-model-len", "32768")
    assert "\x1b[32mfits\x1b[0m" in capacity(*args, "--color", "always").stdout
    assert "\x1b[" not in capacity(*args, "--color", "never").stdout
    assert "\x1b[" not in capacity(*args, "--color", "always", "--no-color").stdout


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("no_color, coloured", [(None, True), ("1", False)])
def test_a_terminal_gets_colour_unless_no_color(no_color, coloured):
    import pty

    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env["TERM"] = "xterm"
    if no_color is not None:
        env["NO_COLOR"] = no_color
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "vllmlint", "capacity", "--no-config", "--model", LLAMA_70B,
                               "--gpu", "H100", "--tp", "4"], cwd=ROOT, stdout=follower, stderr=subprocess.PIPE,
                              env=env, timeout=120)
        os.close(follower)
        follower = -1
        output = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert proc.returncode == 0, proc.stderr
    assert b"memory per GPU" in output
    assert (b"\x1b[34m" in output) is coloured


# --------------------------------------------------------------------------- the catalog lists


def test_list_gpus_text_and_json():
    done = capacity("--list-gpus")
    assert done.returncode == 0
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[1:] if line and not line.startswith("*")}
    for gpu in gpus():
        assert gpu.id in rows
    assert "22.18" in rows["A10"] and "NVIDIA-A10" in rows["A10"]
    assert "nvidia-h100-80gb" in rows["H100-80GB"] and "karpenter: h100" in rows["H100-80GB"]
    listed = json.loads(capacity("--list-gpus", "--format", "json").stdout)["gpus"]
    assert [g["id"] for g in listed] == [g.id for g in gpus()]
    [mi300x] = [g for g in listed if g["id"] == "MI300X"]
    assert mi300x["cuda_total_gib"] == 191.98 and mi300x["compute_capability"] == "9.4"


def test_list_models_text_and_json():
    done = capacity("--list-models")
    assert done.returncode == 0 and LLAMA_70B in done.stdout and "meta-llama/Meta-Llama-3.1-70B-Instruct" in done.stdout
    listed = json.loads(capacity("--list-models", "--format", "json").stdout)["models"]
    assert [m["id"] for m in listed] == [m.id for m in models()]
    [llama] = [m for m in listed if m["id"] == LLAMA_70B]
    assert (llama["layers"], llama["attention_heads"], llama["kv_heads"]) == (80, 64, 8)


# --------------------------------------------------------------------------- the GPU catalog's new figures


@pytest.mark.parametrize("gpu_id, cuda_gib, estimated", [
    ("T4", 14.56, False), ("H200", 139.81, False), ("A10", 22.18, False), ("RTX-3090", 23.56, False),
    ("RTX-4090", 23.52, False), ("RTX-5090", 31.36, False), ("L20", 44.52, False), ("A40", 44.40, True),
    ("H20", 95.06, True), ("V100S", 31.74, True), ("RTX-PRO-6000", 94.97, False), ("GB200", 184.30, True),
    ("MI300X", 191.98, False), ("MI325X", 255.98, False),
])
def test_gpu_totals_as_cuda_reports_them(gpu_id, cuda_gib, estimated):
    gpu = find_gpu(gpu_id)
    assert (gpu.cuda_total_gib, gpu.cuda_total_estimated) == (cuda_gib, estimated)
    assert len(gpu.cuda_total_source) > 40 and gpu.source
    if estimated:
        assert "estimat" in gpu.cuda_total_source or "no CUDA figure" in gpu.cuda_total_source


# --------------------------------------------------------------------------- manifests


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: qwen}
spec:
  selector: {matchLabels: {app: qwen}}
  template:
    metadata: {labels: {app: qwen}}
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A10}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, "%s", --max-model-len, "8192"]
        resources:
          limits: {nvidia.com/gpu: %s}
"""


def test_a_workload_whose_tp_vllm_refuses_exits_1(tmp_path):
    refused, accepted = tmp_path / "refused.yaml", tmp_path / "accepted.yaml"
    refused.write_text(DEPLOYMENT % (7, 7))
    accepted.write_text(DEPLOYMENT % (2, 2))
    [row], done = plans(str(refused))
    assert (row["gpu"], row["gpu_origin"]) == ("A10", "nodeSelector")  # nvidia.com/gpu.product: NVIDIA-A10
    assert row["verdict"] == ("vLLM refuses to start: the 4 KV heads can be neither split over nor replicated "
                              "across tensor parallel size 7 (7 is not divisible by 4)")
    assert not row["starts"] and done.returncode == 1
    [row], done = plans(str(accepted))
    assert row["gpu"] == "A10" and row["refusals"] == [] and row["starts"] and done.returncode == 0


def test_planning_options_are_refused_with_manifests(tmp_path):
    manifest = tmp_path / "d.yaml"
    manifest.write_text(DEPLOYMENT % (2, 2))
    done = capacity(str(manifest), "--tp", "4")
    assert done.returncode == 2 and "--tp and --instance-type plan without manifests" in done.stderr


def test_every_gpu_spelling_names_one_gpu():
    from vllmlint.capacity.specs import gpu_name_key, gpu_spellings

    seen: dict[str, str] = {}
    for gpu in gpus():
        for spelling in gpu_spellings(gpu):
            key = gpu_name_key(spelling)
            assert seen.setdefault(key, gpu.id) == gpu.id, f"{spelling} names {seen[key]} and {gpu.id}"
            assert find_gpu(spelling).id == gpu.id


# --------------------------------------------------------------------------- GPU totals cite an address


@pytest.mark.parametrize("gpu_id, address", [
    ("H200", "https://github.com/sungwon-chae/arxiv_confi/blob/3906c481ed03deeb5ce0b4db322c77bdc44416ad/etu_logging.md"),
    ("RTX-5090", "https://github.com/avelando/pair-aware/blob/refactor/python-scripts/README.md"),
    ("RTX-PRO-6000", "https://github.com/electronmicroscopy/quantem.widget/blob/"
                     "80b115e1c79e950ba76bf238ebae1c9a8e6509c2/docs/tutorials/memory_management.md"),
    ("GB200", "https://github.com/pytorch/ao/pull/4002"),
    ("MI300X", "https://github.com/ROCm/rocm-blogs/blob/21676cf73b18aede955a5a809c71f7a3d290a79f/"
               "blogs/artificial-intelligence/gptq/README.md"),
    ("MI325X", "https://github.com/vllm-project/vllm/issues/41963"),
    ("A40", "https://github.com/QwenLM/Qwen3-VL/issues/2097"),
    ("H20", "https://github.com/vllm-project/vllm/issues/51041"),
    ("V100S", "https://github.com/liucongg/ChatGLM-Finetuning/issues/73"),
    ("V100-32GB", "https://github.com/liucongg/ChatGLM-Finetuning/issues/73"),
])
def test_gpu_total_cites_an_address_a_reader_can_open(gpu_id, address):
    gpu = find_gpu(gpu_id)
    assert address in gpu.cuda_total_source
    assert "exact search" not in gpu.cuda_total_source
