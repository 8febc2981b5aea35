#!/usr/bin/env python3
"""Benchmark: vllmlint against a parse-only baseline on a seeded corpus of realistic vLLM manifests.

    python bench/bench.py                       # the whole table (a few minutes on 2 cores)
    python bench/bench.py --only ratio linear   # a subset: ratio, linear, memory, jobs, cache
    python bench/bench.py --small 1 --large 1000 5000 --repeat 5

One run prints one table:
- ratio: one file, vllmlint's CPU time over the parse-only baseline's (the pre-commit case);
- sarif: one file, `--format sarif` over a text run (what writing SARIF costs);
- linear: the --large sizes (1,000 and 10,000 files), each as a ratio to parse-only, and the per-file CPU
  time of the largest over the smallest (1.00 is linear);
- memory: peak resident memory (RSS) of the run at the largest size;
- jobs: the wall-time speed-up of `--jobs 2` over `--jobs 1` at the largest size;
- cache: a re-run on the unchanged smallest --large tree with a warm cache, against a one-file run.

Every side runs as a fresh process, interpreter start-up included, as a pre-commit hook would run them,
with the interpreter that runs this script: run it with the Python of the installation to measure. They
run in the benchmark's temporary folder: `python -m` puts the current folder first on the import path, so a
run from a checkout would measure the checkout's code (and its `.vllmlint.yaml`), not the installation's. A
wheel install (what users and pre-commit get) reads pre-parsed rule data; an editable install parses
the YAML under rules/ at every start, which costs a few tens of milliseconds more.
The baseline is ruamel.yaml's C composer alone (`compose_all` over every file, nothing else): vllmlint
parses with the same composer, so the ratio is the cost of everything vllmlint does on top of parsing.
Runs other than `cache` pass `--no-cache` (and those other than `jobs` pass `--jobs 1`) when the vllmlint
measured has those options, so each measures what it names. For the ratios, vllmlint and the baseline run in
turn (one of each, `--repeat` times), so that a machine whose speed drifts measures both sides alike. Nothing of
this runs in CI.
"""
from __future__ import annotations

import argparse
import os
import random
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


def timed(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one run of `command`, in folder `cwd`."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    assert proc.stderr is not None
    error = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}): {error.decode()[-500:]}")
    rss = usage.ru_maxrss / 1024 if sys.platform != "darwin" else usage.ru_maxrss / 1048576
    return wall, usage.ru_utime + usage.ru_stime, rss


def best(command: list[str], repeat: int, env: dict[str, str] | None = None,
         cwd: Path | None = None) -> tuple[float, float, float]:
    """The best wall and CPU time of `repeat` runs, and the largest peak memory."""
    runs = [timed(command, env, cwd) for _ in range(max(repeat, 1))]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)


PARTS = ("ratio", "sarif", "linear", "memory", "jobs", "cache")


def _supports(vllmlint: list[str], option: str, cwd: Path) -> bool:
    proc = subprocess.run(vllmlint + ["check", "--help"], capture_output=True, text=True, cwd=cwd)
    return option in proc.stdout


class Bench:
    def __init__(self, options: argparse.Namespace):
        self.options = options
        self.root = Path(tempfile.mkdtemp(prefix="vllmlint-bench-"))
        self.trees: dict[int, Path] = {}
        self.vllmlint = [sys.executable, "-m", "vllmlint"]
        self.has_cache = _supports(self.vllmlint, "--no-cache", self.root)
        self.has_jobs = _supports(self.vllmlint, "--jobs", self.root)
        self.env = dict(os.environ, VLLMLINT_CACHE_DIR=str(self.root / "cache"))
        self.rows: list[tuple[str, str, str]] = []

    def tree(self, size: int) -> Path:
        if size not in self.trees:
            folder = self.root / f"tree-{size}"
            if self.options.generator:  # another corpus generator (`GEN --files N --seed S OUTDIR`)
                subprocess.run([self.options.generator, "--files", str(size), "--seed", str(self.options.seed),
                                "--quiet", str(folder)], check=True)
            else:
                folder.mkdir()
                generate(folder, size, self.options.seed)
            self.trees[size] = folder
        return self.trees[size]

    def lint(self, size: int, jobs: int | None = 1, cache: bool = False, repeat: int | None = None):
        command = self.vllmlint + ["--color", "never"]
        if self.has_cache and not cache:
            command.append("--no-cache")
        if self.has_jobs and jobs is not None:
            command += ["--jobs", str(jobs)]
        return best(command + [str(self.tree(size))], repeat or self.repeat(size), self.env, self.root)

    def baseline(self, size: int):
        return best([sys.executable, "-c", BASELINE, str(self.tree(size))], self.repeat(size), cwd=self.root)

    def against_baseline(self, size: int):
        """(vllmlint's best wall, CPU, peak RSS; the baseline's best CPU), the two run in turn: on a shared machine
        whose speed drifts over minutes, each ratio compares runs made under the same conditions."""
        command = self.vllmlint + ["--color", "never"] + (["--no-cache"] if self.has_cache else []) + \
            (["--jobs", "1"] if self.has_jobs else []) + [str(self.tree(size))]
        baseline = [sys.executable, "-c", BASELINE, str(self.tree(size))]
        runs, bases = [], []
        for _ in range(max(self.repeat(size), 1)):
            runs.append(timed(command, self.env, self.root))
            bases.append(timed(baseline, cwd=self.root)[1])
        return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs), min(bases)

    def repeat(self, size: int) -> int:
        return self.options.repeat if size <= 1000 else self.options.repeat_large

    def row(self, what: str, figure: str, detail: str) -> None:
        self.rows.append((what, figure, detail))
        print(f"{what:<34} {figure:>9}  {detail}", flush=True)

    def run(self) -> None:
        parts = self.options.only or PARTS
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; best of {self.options.repeat} runs "
              f"({self.options.repeat_large} above 1,000 files); each a fresh process (start-up included)")
        print(f"{'measure':<34} {'figure':>9}  detail")
        lint_cpu: dict[int, float] = {}
        small, large = self.options.small, sorted(self.options.large)
        if "ratio" in parts:
            wall, cpu, _, base = self.against_baseline(small)
            self.row(f"{small} file: CPU / parse-only", f"{cpu / base:.2f}x",
                     f"vllmlint {cpu:.3f} s CPU ({wall:.3f} s wall), parse-only {base:.3f} s")
        if "sarif" in parts:
            # `--format sarif` against a text run of the same file, run in turn: what writing SARIF adds.
            text = self.vllmlint + ["--color", "never"] + (["--no-cache"] if self.has_cache else []) + \
                [str(self.tree(small))]
            sarif = text[:-1] + ["--format", "sarif", text[-1]]
            runs = [(timed(sarif, self.env, self.root)[1], timed(text, self.env, self.root)[1])
                    for _ in range(max(self.options.repeat, 1))]
            sarif_cpu, text_cpu = min(r[0] for r in runs), min(r[1] for r in runs)
            self.row(f"{small} file: sarif / text", f"{sarif_cpu / text_cpu:.2f}x",
                     f"--format sarif {sarif_cpu:.3f} s CPU, text {text_cpu:.3f} s")
        if "linear" in parts or "memory" in parts:
            for size in large if "linear" in parts else large[-1:]:
                if "linear" in parts:
                    wall, cpu, rss, base = self.against_baseline(size)
                else:
                    wall, cpu, rss = self.lint(size)
                lint_cpu[size] = cpu
                if "linear" in parts:
                    self.row(f"{size} files: CPU / parse-only", f"{cpu / base:.2f}x",
                             f"vllmlint {cpu:.2f} s CPU ({wall:.2f} s wall, {size / wall:.0f} files/s), "
                             f"parse-only {base:.2f} s")
                if "memory" in parts and size == large[-1]:
                    self.row(f"{size} files: peak RSS", f"{rss:.0f} MiB", "resident memory of the whole run")
            if "linear" in parts and len(large) > 1:
                low, high = large[0], large[-1]
                per = (lint_cpu[high] / high) / (lint_cpu[low] / low)
                self.row(f"{high}/{low} files: per-file CPU", f"{per:.2f}x",
                         f"{lint_cpu[low] / low * 1000:.2f} ms -> {lint_cpu[high] / high * 1000:.2f} ms a file "
                         "(1.00: linear)")
        if "jobs" in parts:
            size = large[-1]
            if not self.has_jobs:
                self.row(f"{size} files: --jobs 2 speed-up", "n/a", "this vllmlint has no --jobs")
            else:
                one, _, _ = self.lint(size, jobs=1)
                two, cpu, _ = self.lint(size, jobs=2)
                self.row(f"{size} files: --jobs 2 speed-up", f"{one / two:.2f}x",
                         f"wall {one:.2f} s -> {two:.2f} s ({cpu:.2f} s CPU over both processes)")
        if "cache" in parts:
            size = large[0]
            if not self.has_cache:
                self.row(f"{size} files cached / 1 file", "n/a", "this vllmlint has no cache")
            else:
                self.lint(size, jobs=None, cache=True, repeat=1)  # fills the cache
                wall, cpu, _ = self.lint(size, jobs=None, cache=True)
                one_wall, one_cpu, _ = self.lint(small, jobs=None)
                self.row(f"{size} files cached / {small} file", f"{wall / one_wall:.2f}x",
                         f"re-run on the unchanged tree {wall:.3f} s wall ({cpu:.3f} s CPU), "
                         f"{small} file {one_wall:.3f} s ({one_cpu:.3f} s CPU)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=PARTS, help="measure only these parts of the table")
    parser.add_argument("--small", type=int, default=1, help="files of the one-file case [default: 1]")
    parser.add_argument("--large", type=int, nargs="+", default=[1000, 10000],
                        help="sizes of the linearity runs; the largest is used for memory and --jobs, the smallest "
                        "for the cache [default: 1000 10000]")
    parser.add_argument("--sizes", type=int, nargs="+", help="same as --large (the former option)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measure up to 1,000 files (best kept)")
    parser.add_argument("--repeat-large", type=int, default=1, help="runs of each measure above 1,000 files")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--generator", help="a corpus generator to use instead of the built-in one, called as "
                        "`GENERATOR --files N --seed SEED --quiet OUTDIR` (e.g. ../shared/tools/gen-corpus, whose "
                        "objects link across files)")
    options = parser.parse_args()
    if options.sizes:
        options.large = options.sizes
    bench = Bench(options)
    try:
        bench.run()
    finally:
        shutil.rmtree(bench.root, ignore_errors=True)


if __name__ == "__main__":
    main()
