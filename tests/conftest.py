import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the property tests on the same examples every time: a failure there is reproducible, not luck.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

# A vLLM Deployment with one removed flag (VL102 at 12:49 on vLLM 0.29.0) and nothing else wrong.
DEPLOYMENT = """apiVersion: apps/v1
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
        command: [vllm, serve, Qwen/Qwen3-0.6B, --swap-space, "4"]
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
        env: [{name: HOME, value: /tmp}]
      runtimeClassName: nvidia
      automountServiceAccountToken: false
      securityContext: {runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
"""
# (`runtimeClassName: nvidia` gives the container the node's GPUs: no VL704 for a CUDA image without a GPU
# request, and no device-plugin request that would bring in VL707's rollout note; the security settings are
# VL810's baseline.)
CLEAN_DEPLOYMENT = DEPLOYMENT.replace(', --swap-space, "4"', "")


def bench_module():
    """bench/bench.py as a module: its `generate` writes the benchmark's seeded corpus."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench", ROOT / "bench" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_cli(*args, input: bytes | None = None, cwd=None, env=None):
    """Run the real command line in a subprocess: exit code, stdout, stderr."""
    full_env = dict(os.environ, NO_COLOR="1")
    full_env.pop("GITHUB_ACTIONS", None)  # under GitHub Actions the default format is `github`
    if env:
        full_env.update(env)
    proc = subprocess.run([sys.executable, "-m", "vllmlint", *map(str, args)], input=input, capture_output=True,
                          cwd=cwd or ROOT, env=full_env, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture
def cli():
    return run_cli


# The result cache (vllmlint.cache) stays off in the tests, which patch modules in-process: a result cached by
# one test must not be replayed in another. tests/test_cache.py turns it on, in a folder of its own.
os.environ["VLLMLINT_NO_CACHE"] = "1"


def capacity_workload(image: str, model: str, args: list[str]):
    """The one capacity workload of a one-container Deployment running `image` with `--model MODEL ARGS`."""
    import json

    from vllmlint.capacity.workload import workloads
    from vllmlint.engine import Linter

    manifest = f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vl}}
spec:
  selector: {{matchLabels: {{app: vl}}}}
  template:
    metadata: {{labels: {{app: vl}}}}
    spec:
      containers:
        - name: vllm
          image: {image}
          args: {json.dumps(["--model", model, *args])}
"""
    linter = Linter()
    linter.add_text(manifest, "vl.yaml")
    [work] = workloads(linter.build())
    return work
