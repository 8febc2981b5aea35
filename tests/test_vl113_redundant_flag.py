"""VL113 redundant-flag: `--enable-prefix-caching` / `--enable-chunked-prefill` where the release turns them on
by itself for the model (data/engine-defaults.yaml, read from each release's arg_utils.py and config/model.py)."""
import json
from pathlib import Path

import jsonschema
import pytest

from vllmlint.data import load_yaml_data
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm import catalog

ROOT = Path(__file__).resolve().parent.parent


def deployment(args, image="vllm/vllm-openai:v0.29.0"):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: {image}
        args: {args}
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


def found(text, filename="deploy.yaml", version=None):
    result = lint_text(text, filename, LintOptions(select=["VL113"], vllm_version=version))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.value, f.severity) for f in result.findings]


def test_data_matches_its_schema():
    schema = json.loads((ROOT / "schemas" / "engine-defaults.schema.json").read_text())
    jsonschema.validate(load_yaml_data(ROOT / "data" / "engine-defaults.yaml"), schema)


def test_catalogs_leave_the_default_to_start_up():
    # The data exists because argparse says nothing: the catalogs record no default from 0.11.2 on. A release
    # whose catalog records a literal default would need the data re-read.
    for release in catalog.releases():
        if catalog.compare_versions(release, "0.11.2") < 0:
            continue
        for flag in ("--enable-prefix-caching", "--enable-chunked-prefill"):
            option = catalog.load(release).option(flag)
            assert option is not None and option.default is None, (release, flag)


# --- catches ---------------------------------------------------------------------------------------------
def test_catches_both_switches_of_the_chapter():
    text = deployment("[/models/llama-3.1-70b, --enable-prefix-caching, --enable-chunked-prefill]")
    assert found(text) == [(12, 39, "--enable-prefix-caching", Severity.INFO),
                           (12, 64, "--enable-chunked-prefill", Severity.INFO)]


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.11.2", "vllm/vllm-openai:v0.12.0", "vllm/vllm-openai:v0.20.2",
                                   "vllm/vllm-openai:v0.33.0", "vllm/vllm-openai:latest"])
def test_catches_on_every_v1_only_release(image):
    assert found(deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching]", image)) == [
        (12, 42, "--enable-prefix-caching", Severity.INFO)]


def test_catches_an_explicit_true_value():
    assert [f[2] for f in found(deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-chunked-prefill=true]"))] == [
        "--enable-chunked-prefill"]


def test_message_says_what_to_do_first():
    result = lint_text(deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching]"), "deploy.yaml",
                       LintOptions(select=["VL113"]))
    [finding] = result.findings
    assert finding.message.startswith("`--enable-prefix-caching` repeats the default: drop it. vLLM 0.29.0")
    assert "Qwen/Qwen2.5-7B-Instruct" in finding.message and "--no-enable-prefix-caching" in finding.message


# --- does not catch --------------------------------------------------------------------------------------
@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.6.4.post1", "vllm/vllm-openai:v0.8.5.post1",
                                   "vllm/vllm-openai:v0.10.2"])
def test_does_not_catch_before_v1_only(image):
    assert found(deployment("[--model, Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching]", image)) == []


def test_does_not_catch_after_the_code_read():
    text = deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching]", "vllm/vllm-openai:v0.34.0")
    assert found(text) == []


@pytest.mark.parametrize("model", ["Qwen/Qwen3-Next-80B-A3B-Instruct", "ai21labs/AI21-Jamba-1.5-Mini",
                                   "/models/house-model"])
def test_does_not_catch_hybrid_or_unknown_models(model):
    assert found(deployment(f"[{model}, --enable-prefix-caching]")) == []


@pytest.mark.parametrize("pooling", ["--runner, pooling", "--convert, embed", "--task, embed", "--runner, $(RUNNER)"])
def test_does_not_catch_pooling_runs(pooling):
    assert found(deployment(f"[Qwen/Qwen3-8B, {pooling}, --enable-prefix-caching]")) == []


def test_does_not_catch_a_cpu_build():
    text = deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching]", "vllm/vllm-openai-cpu:v0.29.0-x86_64")
    assert found(text) == []


def test_does_not_catch_a_script_without_image():
    assert found("vllm serve Qwen/Qwen2.5-7B-Instruct --enable-prefix-caching\n", "serve.sh", "0.29.0") == []


def test_does_not_catch_conflicting_values():
    # Two values are conflicting-args (VL107), not a repetition of the default.
    text = deployment("[Qwen/Qwen2.5-7B-Instruct, --enable-prefix-caching, --no-enable-prefix-caching]")
    assert found(text) == []


def test_does_not_catch_prefill_context_parallel_on_0_12():
    text = deployment("[Qwen/Qwen2.5-7B-Instruct, --prefill-context-parallel-size, '2', --enable-chunked-prefill]",
                      "vllm/vllm-openai:v0.12.0")
    assert found(text) == []
