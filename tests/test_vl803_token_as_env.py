"""VL803 token-as-env: catches / does not catch, with the position of every finding."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent
N = Severity.INFO


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL803"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL803"]


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity) for f in lint(text, filename)]


def pod(env="", env_from="", image="vllm/vllm-openai:v0.10.1", command="[vllm, serve, Qwen/Qwen3-8B]"):
    text = f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: {image}
    command: {command}
"""
    if env:
        text += f"    env: {env}\n"
    if env_from:
        text += f"    envFrom: {env_from}\n"
    return text


SECRET = """apiVersion: v1
kind: Secret
metadata: {name: hf}
stringData: {HF_TOKEN: REPLACE_WITH_TOKEN, HUGGING_FACE_HUB_TOKEN: REPLACE_WITH_TOKEN, OTHER: x}
---
"""


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("env, col", [
    ("[{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}]", 54),
    ("[{name: HUGGING_FACE_HUB_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}]", 68),
])
def test_secret_key_ref(env, col):
    assert found(pod(env)) == [(9, col, N)]


def test_message_names_the_file_form_and_the_release():
    (finding,) = lint(pod("[{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}]"))
    assert finding.message.startswith("HF_TOKEN is set from Secret hf (key token) as an environment variable")
    assert "HF_TOKEN_PATH" in finding.message and "huggingface_hub 0.23.0" in finding.message
    assert finding.value == "HF_TOKEN:hf"


def test_env_from_a_secret_in_the_run_is_one_finding():
    assert found(SECRET + pod(env_from="[{secretRef: {name: hf}}]")) == [(14, 15, N)]
    (finding,) = lint(SECRET + pod(env_from="[{secretRef: {name: hf}}]"))
    assert "Secret hf (through `envFrom`)" in finding.message


def test_any_container_reading_the_token():
    text = pod("[{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}]", image="python:3.12-slim",
               command="[python, /scripts/download.py]")
    assert found(text) == [(9, 54, N)]
    # not vLLM: HF_TOKEN_PATH helps huggingface_hub tools only; a script reading the variable must read the file
    assert "must read the file instead" in lint(text)[0].message and "vLLM's huggingface_hub" not in lint(text)[0].message


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod("[{name: VLLM_API_KEY, valueFrom: {secretKeyRef: {name: k, key: key}}}]"),  # no file form
    pod("[{name: HF_TOKEN_PATH, value: /var/run/secrets/hf/token}]"),
    pod("[{name: HF_TOKEN, value: hf_placeholder}]"),  # a literal: VL802's
    pod("[{name: HF_TOKEN, valueFrom: {configMapKeyRef: {name: c, key: token}}}]"),
    pod(env_from="[{secretRef: {name: not-in-the-run}}]"),
    SECRET.replace("HF_TOKEN: REPLACE_WITH_TOKEN, HUGGING_FACE_HUB_TOKEN: REPLACE_WITH_TOKEN, ", "")
    + pod(env_from="[{secretRef: {name: hf}}]"),  # the Secret holds no token variable
    SECRET + pod(env_from="[{secretRef: {name: hf}, prefix: X_}]"),  # X_HF_TOKEN is nobody's variable
])
def test_does_not_catch(text):
    assert lint(text) == []


def test_compose_is_not_checked():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: --model Qwen/Qwen3-8B
    environment: [HF_TOKEN]
"""
    assert lint(text, "compose.yaml") == []


def test_chapters():
    linter = Linter(LintOptions(select=["VL803"]))
    for path in sorted((ROOT / "fixtures" / "original").iterdir()):
        linter.add_file(path, path.name)
    # The download Job passes the token from Secret huggingface-token through env (the audit mounts it as a file)
    assert [(f.path, f.span.line, f.span.col, f.severity) for f in linter.run().findings] == [
        ("model-download-job.yaml", 27, 15, N)]
    linter = Linter(LintOptions(select=["VL803"]))
    for path in sorted((ROOT / "fixtures" / "audited").iterdir()):
        linter.add_file(path, path.name)
    assert linter.run().findings == []
