"""VL802 secret-in-manifest: catches / does not catch, with the position of every finding, and the masking of
the secret in every output (text, JSON, SARIF, GitHub, JUnit, baseline)."""
import base64
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity
from vllmlint.k8s import secrets

ROOT = Path(__file__).resolve().parent.parent
W, N = Severity.WARNING, Severity.INFO
# Made-up tokens of the real shapes (never issued): each test greps the output for them.
HF = "hf_" + "TqWzpLmNbVcXrYsUdKeJfHgAoIuPlQkMnZ"
HF2 = "hf_" + "RkQvLpXzMwNbTcYsJdHfGaUeIoPlKjMnBq"
SK = "sk-" + "9fE8d7C6b5A4f3E2d1C0b9A8f7E6d5C4b3A2f1E0"
KEY = "Zq8xR2mK7pL4vW9t"


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL802"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL802"]


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity) for f in lint(text, filename)]


def pod(env="[]", command="[vllm, serve, Qwen/Qwen3-8B]", image="vllm/vllm-openai:v0.10.1"):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: {image}
    command: {command}
    env: {env}
"""


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("env, col, severity", [
    (f"[{{name: HF_TOKEN, value: {HF}}}]", 35, W),
    (f"[{{name: HUGGING_FACE_HUB_TOKEN, value: {HF}}}]", 49, W),
    (f'[{{name: VLLM_API_KEY, value: "{KEY}"}}]', 39, W),
    (f"[{{name: MY_HF, value: {HF}}}]", 32, W),  # a known format under any name
    (f'[{{name: OPENAI_API_KEY, value: "{SK}"}}]', 42, W),
    ("[{name: VLLM_API_KEY, value: token-abc123}]", 39, N),  # vLLM's documentation sample
    ("[{name: HF_TOKEN, value: <your-hf-token>}]", 35, N),
    ("[{name: HF_TOKEN, value: hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx}]", 35, N),
    ("[{name: HF_TOKEN, value: hf_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}]", 35, N),  # repeated characters
    ("[{name: HF_TOKEN, value: hf_abcdefghijklmnopqrstuvwxyzabcdefgh}]", 35, N),  # consecutive characters
    ("[{name: VLLM_API_KEY, value: changeme}]", 39, N),
    ("[{name: HF_TOKEN, value: REPLACE_WITH_TOKEN}]", 35, N),
])
def test_env(env, col, severity):
    assert found(pod(env)) == [(9, col, severity)]


def test_placeholder_message_differs_and_names_the_sample():
    (finding,) = lint(pod("[{name: VLLM_API_KEY, value: token-abc123}]"))
    assert "placeholder" in finding.message and "`token-abc123`" in finding.message
    assert finding.message.startswith(
        "VLLM_API_KEY in Pod vllm holds a placeholder, not a credential: nothing leaks, but vLLM accepts it as its "
        "API key, and a key copied from documentation is known to every reader. It reads as a placeholder (the "
        "documentation sample `token-abc123`). Give the real value")
    assert finding.value == "VLLM_API_KEY:placeholder"
    (real,) = lint(pod(f"[{{name: HF_TOKEN, value: {HF}}}]"))
    assert "Hugging Face user access token written as a literal: everyone who can read the repository or the object " \
        "has it (hf_****, 37 characters)" in real.message
    assert "Rotate it" in real.message and real.value == "HF_TOKEN:real:37"


@pytest.mark.parametrize("command, col, severity", [
    ("[vllm, serve, Qwen/Qwen3-8B, --api-key, token-abc123]", 54, N),
    (f"[vllm, serve, Qwen/Qwen3-8B, --api-key, {KEY}]", 54, W),
    (f"[vllm, serve, Qwen/Qwen3-8B, '--api-key={KEY}']", 43, W),
    (f"[vllm, serve, Qwen/Qwen3-8B, --hf-token, {HF}]", 55, W),
    (f'[sh, -c, "vllm serve Qwen/Qwen3-8B --api-key {SK}"]', 59, W),
])
def test_vllm_options(command, col, severity):
    assert found(pod(command=command)) == [(8, col, severity)]


def test_args_only_container_through_the_image_entrypoint():
    text = pod(command="[]").replace("    command: []\n", f"    args: [--model, Qwen/Qwen3-8B, --api-key, {KEY}]\n")
    assert found(text) == [(8, 47, W)]


def test_non_vllm_container_word_of_a_known_format():
    text = pod(command=f"[huggingface-cli, login, --token, {HF}]", image="python:3.12-slim")
    assert found(text) == [(8, 48, W)]


def test_configmap_keys_and_formats():
    text = f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: vllm-env}}
data:
  HF_TOKEN: {HF}
  token: changeme
  MODEL: Qwen/Qwen3-8B
  notes: "use {HF2} for the hub"
"""
    assert found(text) == [(5, 13, W), (6, 10, N), (8, 15, W)]
    assert "ConfigMap vllm-env" in lint(text)[0].message


def test_configmap_read_by_a_pod_is_reported_once_at_the_configmap():
    text = f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: vllm-env}}
data:
  HF_TOKEN: {HF}
---
""" + pod("[]").replace("    env: []\n", "    envFrom:\n    - configMapRef: {name: vllm-env}\n")
    assert found(text) == [(5, 13, W)]


def test_configmap_script_token_reported_once():
    text = f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: start}}
data:
  run.sh: |
    export HF_TOKEN={HF}
    exec vllm serve Qwen/Qwen3-8B --api-key {KEY}
"""
    assert found(text) == [(6, 21, W), (7, 45, W)]


def test_secret_manifests():
    encoded = base64.b64encode(HF.encode()).decode()
    text = f"""apiVersion: v1
kind: Secret
metadata: {{name: hf-token-secret}}
type: Opaque
stringData:
  token: {HF}
---
apiVersion: v1
kind: Secret
metadata: {{name: hf-b64}}
data:
  HF_TOKEN: {encoded}
---
apiVersion: v1
kind: Secret
metadata: {{name: docs}}
stringData:
  token: "REPLACE_WITH_TOKEN"
"""
    assert found(text) == [(6, 10, W), (12, 13, W), (18, 10, N)]
    assert "decoded from base64" in lint(text)[1].message


def test_secret_key_read_into_a_credential_variable():
    text = f"""apiVersion: v1
kind: Secret
metadata: {{name: api}}
stringData:
  k: "{KEY}"
  other: "{KEY}"
---
""" + pod("[{name: VLLM_API_KEY, valueFrom: {secretKeyRef: {name: api, key: k}}}]")
    assert found(text) == [(5, 6, W)]  # `other` is not read as a credential and holds no known format


def test_compose_environment():
    text = f"""services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: --model Qwen/Qwen3-8B --api-key {KEY}
    environment:
      - HUGGING_FACE_HUB_TOKEN={HF}
      VLLM_API_KEY_X: unused
"""
    text = text.replace("      VLLM_API_KEY_X: unused\n", "")
    assert found(text, "compose.yaml") == [(4, 46, W), (6, 32, W)]


def test_shell_script():
    text = f"""#!/bin/bash
HF_TOKEN={HF}
export HUGGING_FACE_HUB_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
docker run -e HF_TOKEN={HF2} vllm/vllm-openai:v0.10.1 --model x --api-key {SK}
VLLM_API_KEY={KEY} vllm serve Qwen/Qwen3-8B
env VLLM_API_KEY={KEY} vllm serve Qwen/Qwen3-8B
huggingface-cli login --token {HF2}
"""
    assert found(text, "run.sh") == [(2, 1, W), (3, 8, N), (4, 15, W), (4, 107, W), (5, 1, W), (6, 5, W),
                                     (7, 31, W)]


def test_markdown_shell_block():
    text = f"""# Serving

```bash
export HF_TOKEN={HF}
vllm serve meta-llama/Llama-3.1-8B-Instruct
```
"""
    assert found(text, "README.md") == [(4, 8, W)]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod("[{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}]"),
    pod("[{name: HF_TOKEN, value: $(TOKEN_FROM_SECRET)}]"),
    pod("[{name: HF_TOKEN, value: '${HF_TOKEN}'}]"),  # pre-apply substitution (VL709's business)
    pod("[{name: HF_TOKEN, value: ''}]"),
    pod("[{name: HF_HOME, value: /models/hf}]"),
    pod("[{name: MODEL, value: hf_internal/model-name}]"),
    pod(command="[vllm, serve, Qwen/Qwen3-8B, --hf-token]"),  # the stored token
    pod("[{name: KEY, valueFrom: {secretKeyRef: {name: k, key: k}}}]",
        command="[vllm, serve, Qwen/Qwen3-8B, --api-key, $(KEY)]"),
    pod("[{name: HF_TOKEN, value: 'ENC[AES256_GCM,data:Tr7o1ttbJm0N1fHqIH6x,iv:2k8mQ==,type:str]'}]"),
    pod(command='[sh, -c, "vllm serve Qwen/Qwen3-8B --api-key $VLLM_API_KEY"]'),
    pod("[{name: TOKENIZER_MODE, value: hf_TqTqWz}]"),  # not a credential variable, not a token format
])
def test_does_not_catch(text):
    assert lint(text) == []


def test_literal_env_expanded_into_api_key_is_reported_once_at_the_env():
    text = pod(f'[{{name: VLLM_API_KEY, value: "{KEY}"}}]', command="[vllm, serve, Qwen/Qwen3-8B, --api-key, "
               "$(VLLM_API_KEY)]")
    assert found(text) == [(9, 39, W)]


def test_compose_interpolation_and_sealed_secrets_are_silent():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: --model Qwen/Qwen3-8B --api-key ${VLLM_API_KEY}
    environment:
      HF_TOKEN: ${HF_TOKEN}
"""
    assert lint(text, "compose.yaml") == []
    sealed = """apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata: {name: hf}
spec:
  encryptedData:
    token: AgBy3i4OJSWK+PiTySYZZA9rO43cGDEq
"""
    assert lint(sealed) == []


def test_shell_references_are_silent():
    text = """HF_TOKEN=$(cat /run/secrets/hf)
export HF_TOKEN
VLLM_API_KEY="$KEY" vllm serve Qwen/Qwen3-8B --api-key "${VLLM_API_KEY}"
"""
    assert lint(text, "run.sh") == []


def test_chapters():
    for edition in ("original", "audited"):
        linter = Linter(LintOptions(select=["VL802"]))
        for path in sorted((ROOT / "fixtures" / edition).iterdir()):
            linter.add_file(path, path.name)
        assert linter.run().findings == [], edition  # the original passes its token from a Secret (VL803)


# --- the secret never reaches the output --------------------------------------------------------------
def test_masking_in_every_output(tmp_path):
    (tmp_path / "deploy.yaml").write_text(pod(
        f'[{{name: HF_TOKEN, value: {HF}}}, {{name: VLLM_API_KEY, value: "{KEY}"}}]',
        command=f"[vllm, serve, Qwen/Qwen3-8B, --api-key, {SK}]") + f"""---
apiVersion: v1
kind: Secret
metadata: {{name: hf}}
data:
  token: {base64.b64encode(HF2.encode()).decode()}
""")
    (tmp_path / "run.sh").write_text(f"VLLM_API_KEY={KEY}x vllm serve Qwen/Qwen3-8B\n")
    outputs = {name: tmp_path / f"out.{name}" for name in ("text", "json", "sarif", "github", "junit")}
    argv = [sys.executable, "-m", "vllmlint", "check", "--select", "VL802"]
    for name, path in outputs.items():
        argv += ["--format", name, "-o", str(path)]
    files = [str(tmp_path / "deploy.yaml"), str(tmp_path / "run.sh")]
    run = subprocess.run(argv + files, capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    baseline = tmp_path / "baseline.json"
    subprocess.run([sys.executable, "-m", "vllmlint", "check", "--select", "VL802", "--write-baseline",
                    str(baseline)] + files, capture_output=True, text=True, cwd=tmp_path, check=True)
    stdout = subprocess.run([sys.executable, "-m", "vllmlint", "check", "--select", "VL802"] + files,
                            capture_output=True, text=True, cwd=tmp_path)
    texts = {name: path.read_text() for name, path in outputs.items()}
    texts["baseline"] = baseline.read_text()
    texts["stdout"] = stdout.stdout + stdout.stderr
    for name, text in texts.items():
        for secret in (HF, HF2, SK, KEY, HF[3:], SK[3:], KEY[:-2]):
            assert secret not in text, (name, secret)
    assert json.loads(texts["json"])["findings"] and "hf_****, 37 characters" in texts["json"]
    assert texts["stdout"].count("VL802") >= 5 and "*****" in texts["stdout"]


# --- the data ------------------------------------------------------------------------------------------
def test_credentials_data_is_schema_valid():
    data = load_yaml_data(knowledge_dir() / "credentials.yaml")
    jsonschema.validate(data, json.loads((schemas_dir() / "credentials.schema.json").read_text()))
    assert secrets.file_form("HF_TOKEN")["variable"] == "HF_TOKEN_PATH"
    assert secrets.file_form("VLLM_API_KEY") is None


@pytest.mark.parametrize("value, kind", [
    (HF, secrets.REAL), (SK, secrets.REAL), (KEY, secrets.REAL), ("token-abc123", secrets.PLACEHOLDER),
    ("EMPTY", secrets.PLACEHOLDER), ("hf_...", secrets.PLACEHOLDER), ("abc", secrets.PLACEHOLDER),
    ("12345678", secrets.PLACEHOLDER), ("$(HF_TOKEN)", secrets.REFERENCE), ("${HF_TOKEN}", secrets.REFERENCE),
    ("{{ .Values.hfToken }}", secrets.REFERENCE), ("", secrets.EMPTY),
])
def test_judge(value, kind):
    assert secrets.judge(value).kind == kind


def test_mask_shows_no_character_of_the_secret():
    assert secrets.mask(HF) == "hf_****, 37 characters"
    assert secrets.mask(KEY) == "****, 16 characters"


# --- the model additions ------------------------------------------------------------------------------
def test_shell_reader_keeps_the_assignments_it_strips():
    from vllmlint.source.shell import read_script

    script = "A=1 B='two words' vllm serve m\nC=3\nenv D=4 cmd\nexport E=5\n"
    assert [(w.text, w.start) for w in read_script(script).assignments] == [
        ("A=1", 0), ("B=two words", 4), ("C=3", 31), ("D=4", 39)]
    assert [c.words[0].text for c in read_script(script).commands] == ["vllm", "cmd", "export"]


def test_script_assignments_positions_in_a_yaml_shell_string():
    from vllmlint.vllm.invocation import script_assignments

    text = pod(command='[sh, -c, "HF_TOKEN=abc vllm serve m && export X=1 && docker run -e Y=2 img"]')
    linter = Linter(LintOptions(select=["VL802"]))
    linter.add_bytes(text.encode(), "p.yaml", ".yaml", "p.yaml")
    world = linter.build()
    found_ = sorted((a.name, a.value, a.token.span.line, a.token.span.col, text.splitlines()[7][
        a.token.span.col - 1:a.token.span.end_col - 1]) for a in script_assignments(world))
    assert found_ == [("HF_TOKEN", "abc", 8, 24, "HF_TOKEN=abc"), ("X", "1", 8, 60, "X=1"), ("Y", "2", 8, 81, "Y=2")]
