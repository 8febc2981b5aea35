#!/usr/bin/env python3
"""Benchmark: vllmlint against a parse-only baseline on a seeded corpus of realistic vLLM manifests.

    python bench/bench.py                 # 1, 100 and 1,000 files, best of 3 runs each
    python bench/bench.py --sizes 1000 --repeat 5

Both sides run as fresh processes, interpreter start-up included, as a pre-commit hook would run them,
with the interpreter that runs this script: run it with the Python of the installation to measure. A
wheel install (what users and pre-commit get) reads pre-parsed rule data; an editable install parses
the YAML under rules/ at every start, which costs a few tens of milliseconds more.
The baseline is ruamel.yaml's C composer alone (`compose_all` over every file, nothing else): vllmlint
parses with the same composer, so the ratio is the cost of everything vllmlint does on top of parsing.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODELS = ["Qwen/Qwen3-0.6B", "Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B-Instruct",
          "meta-llama/Llama-3.1-70B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3", "/models/llama-3.1-70b"]
IMAGES = ["vllm/vllm-openai:v0.29.0", "vllm/vllm-openai:v0.10.2", "vllm/vllm-openai:latest",
          "vllm/vllm-openai@sha256:" + "3e" * 32, "registry.local:5000/vllm/vllm-openai:v0.31.0"]
FLAGS = ["--enable-prefix-caching", "--max-model-len=8192", "--gpu-memory-utilization=0.9", "--swap-space=16",
         "--max-num-seqs=64", "--enable-chunked-prefill", "--dtype=bfloat16", "--tensor-parallel-size=2",
         "--rank=0", "--disable-log-requests", "--trust-remote-code", "--max-num-batched-tokens=8192"]


def deployment(rng: random.Random, name: str) -> str:
    flags = rng.sample(FLAGS, rng.randint(2, 6))
    if rng.random() < 0.3:
        command = "[python3, -m, vllm.entrypoints.openai.api_server]"
        args = ["--model", rng.choice(MODELS)] + flags
    else:
        command = "[vllm, serve]"
        args = [rng.choice(MODELS)] + flags
    arg_lines = "\n".join(f"        - {a!r}" if a.startswith("-") else f"        - {a}" for a in args)
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: inference
  labels: {{app: {name}}}
spec:
  replicas: {rng.randint(1, 4)}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "{rng.choice([8000, 8000, 8001])}"
    spec:
      containers:
      - name: vllm
        image: {rng.choice(IMAGES)}
        command: {command}
        args:
{arg_lines}
        ports:
        - name: http
          containerPort: 8000
        resources:
          requests: {{cpu: "{rng.randint(2, 8)}", memory: {rng.randint(8, 64)}Gi}}
          limits: {{nvidia.com/gpu: {rng.choice([1, 2, 4, 8])}}}
        env:
        - name: HF_HOME
          value: /cache/huggingface
        - name: HF_TOKEN
          valueFrom:
            secretKeyRef: {{name: hf-token, key: token}}
        volumeMounts:
        - {{name: cache, mountPath: /cache}}
        - {{name: shm, mountPath: /dev/shm}}
      volumes:
      - name: cache
        emptyDir: {{sizeLimit: 100Gi}}
      - name: shm
        emptyDir: {{medium: Memory, sizeLimit: 8Gi}}
"""


def service(rng: random.Random, name: str) -> str:
    kind = rng.choice(["ClusterIP", "ClusterIP", "LoadBalancer"])
    return f"""apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: inference
  labels: {{app: {name}}}
spec:
  type: {kind}
  selector: {{app: {name}}}
  ports:
  - name: http
    port: 8000
    targetPort: http
  - name: metrics
    port: {rng.choice([8000, 8001])}
    targetPort: {rng.choice([8000, 8001])}
"""


def hpa(rng: random.Random, name: str) -> str:
    return f"""apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: {name}, namespace: inference}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}
  minReplicas: 1
  maxReplicas: {rng.randint(2, 10)}
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {{type: Utilization, averageUtilization: 70}}
"""


def service_monitor(rng: random.Random, name: str) -> str:
    return f"""apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {{name: {name}, namespace: inference}}
spec:
  selector:
    matchLabels: {{app: {name}}}
  endpoints:
  - port: {rng.choice(["http", "metrics"])}
    interval: 15s
"""


def script_config_map(rng: random.Random, name: str) -> str:
    return f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: {name}-script, namespace: inference}}
data:
  start.sh: |
    #!/bin/bash
    set -euo pipefail
    exec vllm serve {rng.choice(MODELS)} \\
      --port 8000 \\
      {' '.join(rng.sample(FLAGS, 3))}
"""


def generate(directory: Path, files: int, seed: int = 42) -> int:
    rng = random.Random(seed)
    total = 0
    for number in range(files):
        name = f"vllm-{number}"
        parts = [deployment(rng, name), service(rng, name)]
        for maker in (hpa, service_monitor, script_config_map):
            if rng.random() < 0.6:
                parts.append(maker(rng, name))
        text = "---\n".join(parts)
        path = directory / f"app-{number:04d}" / "manifests.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        total += len(text.encode())
    return total


BASELINE = """
import sys, pathlib
from ruamel.yaml import YAML
yaml = YAML(typ="safe", pure=False)
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.yaml")):
    for _ in yaml.compose_all(path.read_text()):
        pass
"""


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(command: list[str], repeat: int) -> tuple[float, float]:
    runs = [timed(command) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    options = parser.parse_args()
    vllmlint = [sys.executable, "-m", "vllmlint", "--color", "never"]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; best of {options.repeat} runs; "
          "each a fresh process (start-up included)")
    print(f"{'files':>6} {'MiB':>6} | {'vllmlint s':>10} {'cpu s':>6} {'files/s':>8} {'MiB/s':>6} | "
          f"{'parse-only s':>12} {'cpu s':>6} | {'ratio':>5}")
    for size in options.sizes:
        workdir = Path(tempfile.mkdtemp(prefix="vllmlint-bench-"))
        try:
            total = generate(workdir, size, options.seed)
            mib = total / 1048576
            lint_wall, lint_cpu = best(vllmlint + [str(workdir)], options.repeat)
            base_wall, base_cpu = best([sys.executable, "-c", BASELINE, str(workdir)], options.repeat)
            print(f"{size:>6} {mib:>6.2f} | {lint_wall:>10.3f} {lint_cpu:>6.2f} {size / lint_wall:>8.1f} "
                  f"{mib / lint_wall:>6.2f} | {base_wall:>12.3f} {base_cpu:>6.2f} | {lint_wall / base_wall:>5.2f}")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
