"""VL705 and VL608 on CPU KV-cache offload (--kv-offloading-size, LMCache's own settings), per release and backend
as vLLM's code says (data/host-memory.yaml, parts kv-offload and lmcache-local-cpu)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

POD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v{release}
        command: [vllm, serve, Qwen/Qwen3-8B{args}]
        env: {env}
        resources:
          limits: {{nvidia.com/gpu: {gpus}, memory: {memory}}}
{mounts}"""

SHM = """        volumeMounts: [{{name: shm, mountPath: /dev/shm}}]
      volumes: [{{name: shm, emptyDir: {{medium: Memory, sizeLimit: {size}}}}}]
"""


def lint(tmp_path: Path, *, release="0.29.0", args="", env="[]", gpus=1, memory="32Gi", shm=None) -> list[dict]:
    mounts = SHM.format(size=shm) if shm else ""
    path = tmp_path / "pod.yaml"
    path.write_text(POD.format(release=release, args=args, env=env, gpus=gpus, memory=memory, mounts=mounts),
                    encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "vllmlint", "--select", "VL705,VL608", "--format", "json", str(path)],
                         capture_output=True, text=True, timeout=120)
    return json.loads(run.stdout)["findings"]


def codes(findings):
    return sorted(f["code"] for f in findings)


def test_native_offload_beyond_the_limit_is_reported(tmp_path):
    findings = lint(tmp_path, release="0.19.0", args=", --kv-offloading-size, '64'")
    assert codes(findings) == ["VL705"]  # 0.19: pinned tensors in the process, not /dev/shm
    assert "64.0 GiB" in findings[0]["message"] or "64.0 GiB" in json.dumps(findings[0])


def test_the_size_is_a_total_over_the_ranks_not_per_gpu(tmp_path):
    # TP 4 in one pod: 48 GiB in all, not 4 x 48
    # (VL608 also reports TP 4 without a memory-backed /dev/shm: the parallel workers' own need)
    assert "VL705" not in codes(lint(tmp_path, release="0.19.0", gpus=4, memory="64Gi",
                                     args=", --tensor-parallel-size, '4', --kv-offloading-size, '48'"))
    assert "VL705" in codes(lint(tmp_path, release="0.19.0", gpus=4, memory="40Gi",
                                 args=", --tensor-parallel-size, '4', --kv-offloading-size, '48'"))


@pytest.mark.parametrize("release, fires", [("0.11.0", False), ("0.13.0", False), ("0.14.0", True)])
def test_the_size_alone_turns_offloading_on_from_0_14_0(tmp_path, release, fires):
    # 0.11.1 - 0.13.x: kv_offloading_backend defaults to None (vllm/config/cache.py:157 in 0.13.0); 0.14.0: "native"
    assert bool(lint(tmp_path, release=release, args=", --kv-offloading-size, '64'")) is fires


def test_before_0_14_0_the_backend_flag_turns_it_on(tmp_path):
    findings = lint(tmp_path, release="0.12.0", args=", --kv-offloading-size, '64', --kv-offloading-backend, native")
    assert codes(findings) == ["VL705"]
    findings = lint(tmp_path, release="0.12.0", args=", --kv-offloading-size, '64', --kv-offloading-backend, lmcache")
    assert codes(findings) == ["VL705"]


def test_a_limit_above_the_buffer_passes(tmp_path):
    assert lint(tmp_path, release="0.19.0", memory="96Gi", args=", --kv-offloading-size, '64'") == []


def test_from_0_27_the_native_buffer_lives_in_dev_shm(tmp_path):
    # SharedOffloadRegion (/dev/shm/vllm_offload_<id>.mmap) from 0.27.0: VL608 without a large enough /dev/shm
    findings = lint(tmp_path, release="0.27.0", memory="96Gi", args=", --kv-offloading-size, '64'")
    assert codes(findings) == ["VL608"]
    assert "/dev/shm" in findings[0]["message"]
    assert codes(lint(tmp_path, release="0.26.0", memory="96Gi", args=", --kv-offloading-size, '64'")) == []
    assert codes(lint(tmp_path, release="0.29.0", memory="96Gi", shm="16Gi",
                      args=", --kv-offloading-size, '64'")) == ["VL608"]
    assert lint(tmp_path, release="0.29.0", memory="96Gi", shm="70Gi", args=", --kv-offloading-size, '64'") == []
    # the LMCache backend keeps its own pinned buffer: no /dev/shm
    assert lint(tmp_path, release="0.29.0", memory="96Gi",
                args=", --kv-offloading-size, '64', --kv-offloading-backend, lmcache") == []


def test_lmcaches_own_size_counts_per_worker(tmp_path):
    env = "[{name: LMCACHE_LOCAL_CPU, value: 'True'}, {name: LMCACHE_MAX_LOCAL_CPU_SIZE, value: '20'}]"
    args = ", --tensor-parallel-size, '2', --kv-transfer-config, '{\"kv_connector\":\"LMCacheConnectorV1\",\"kv_role\":\"kv_both\"}'"
    findings = lint(tmp_path, release="0.19.0", gpus=2, memory="32Gi", env=env, args=args)
    assert "VL705" in codes(findings)  # 2 workers x 20 GiB
    assert "VL705" not in codes(lint(tmp_path, release="0.19.0", gpus=2, memory="48Gi", env=env, args=args))
    # without the LMCache connector the variable is nobody's
    assert "VL705" not in codes(lint(tmp_path, release="0.19.0", gpus=2, memory="32Gi", env=env,
                                     args=", --tensor-parallel-size, '2'"))


def test_a_size_known_only_at_run_time_is_silent(tmp_path):
    assert lint(tmp_path, release="0.29.0", args=", --kv-offloading-size, $(OFFLOAD)",
                env="[{name: OFFLOAD, valueFrom: {configMapKeyRef: {name: c, key: k}}}]") == []


def test_a_mig_slice_runs_the_same_worker(tmp_path):
    findings = lint(tmp_path, release="0.19.0", args=", --kv-offloading-size, '64'")
    path = tmp_path / "pod.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("nvidia.com/gpu: 1", "nvidia.com/mig-3g.40gb: 1"),
                    encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "vllmlint", "--select", "VL705", "--format", "json", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert codes(findings) == ["VL705"] and codes(json.loads(run.stdout)["findings"]) == ["VL705"]
