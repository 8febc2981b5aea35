"""VL723 streamer-misconfigured: catches / does not catch, with the position of every finding."""
import json
from pathlib import Path

import jsonschema
import pytest

from vllmlint.checks.near_miss import near_miss
from vllmlint.data import load_yaml_data
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm.streamer import aws_variables, streamer_variables

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL723"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL723"]


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


def pod(env, model="s3://core-llm/Llama-3-8b", load="runai_streamer", env_from=""):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: llama}}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: [vllm, serve, {model}, --load-format, {load}]
    env: {env}{env_from}
    resources:
      limits: {{nvidia.com/gpu: 1}}
"""


def test_data_matches_its_schema():
    schema = json.loads((ROOT / "schemas" / "model-streamer.schema.json").read_text())
    jsonschema.validate(load_yaml_data(ROOT / "data" / "model-streamer.yaml"), schema)


def test_no_real_name_is_taken_for_a_typo():
    names = streamer_variables() + aws_variables()[0]
    env = "[" + ", ".join(f"{{name: {name}, value: '0'}}" for name in names) + "]"
    assert found(pod(env)) == []
    # (two real names may be close to each other: a typo is judged against the closest)
    assert near_miss("RUNAI_STREAMER_LOG_FIEL", streamer_variables()) == "RUNAI_STREAMER_LOG_FILE"


# --- misspelt names -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, meant", [
    ("RUNAI_STREAMER_LOG_TO_STDER", "RUNAI_STREAMER_LOG_TO_STDERR"),
    ("RUNAI_STREAMER_MEMORY_LIMT", "RUNAI_STREAMER_MEMORY_LIMIT"),
    ("RUNAI_STREAMER_CONCURENCY", "RUNAI_STREAMER_CONCURRENCY"),
    ("RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESING", "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING"),
    ("AWS_SECRET_ACCES_KEY", "AWS_SECRET_ACCESS_KEY"),
    ("AWS_ACCES_KEY_ID", "AWS_ACCESS_KEY_ID"),
    ("AWS_ENDPOINT_ULR", "AWS_ENDPOINT_URL"),
])
def test_catches_a_misspelt_name(name, meant):
    # at the env entry's name
    assert found(pod(f"[{{name: {name}, value: '1'}}]")) == [(9, 18, Severity.WARNING, f"{name}->{meant}")]
    (finding,) = lint(pod(f"[{{name: {name}, value: '1'}}]"))
    assert finding.message.startswith(f"Rename `{name}` to `{meant}`")


def test_aws_names_only_for_an_s3_model():
    env = "[{name: AWS_SECRET_ACCES_KEY, value: x}]"
    assert found(pod(env, model="/models/Llama-3-8b")) == []
    assert found(pod(env, model="gs://core-llm/Llama-3-8b")) == []
    # the streamer's own names count wherever the model is
    assert len(found(pod("[{name: RUNAI_STREAMER_MEMORY_LIMT, value: '1'}]", model="/models/Llama-3-8b"))) == 1


def test_does_not_catch_real_or_unrelated_names():
    env = ("[{name: AWS_ENDPOINT_URL_S3, value: 'https://s3.us-east-1.amazonaws.com'}, {name: AWS_REGION, value: x},"
           " {name: RUNAI_STREAMER_S3_ENDPOINT, value: x}, {name: RUNAI_MY_OWN, value: x}, {name: AWS_LAMBDA_X, "
           "value: x}]")
    assert found(pod(env)) == []


def test_does_not_catch_a_typo_beside_the_real_name():
    env = "[{name: RUNAI_STREAMER_MEMORY_LIMIT, value: '1'}, {name: RUNAI_STREAMER_MEMORY_LIMT, value: '1'}]"
    assert found(pod(env, model="/models/x")) == []


def test_does_not_catch_without_the_streamer():
    assert found(pod("[{name: RUNAI_STREAMER_MEMORY_LIMT, value: '1'}]", load="safetensors")) == []
    assert found(pod("[{name: RUNAI_STREAMER_MEMORY_LIMT, value: '1'}]", load="$(FORMAT)")) == []


def test_catches_a_name_from_a_config_map_in_the_run():
    config_map = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: streamer}
data: {RUNAI_STREAMER_CONCURENCY: '32'}
"""
    text = pod("[]", model="/models/x", env_from="\n    envFrom:\n    - configMapRef: {name: streamer}") + config_map
    # at the envFrom entry
    assert [(line, col, value) for line, col, _, value in found(text)] == [
        (11, 7, "RUNAI_STREAMER_CONCURENCY->RUNAI_STREAMER_CONCURRENCY")]


# --- the S3-compatible endpoint ---------------------------------------------------------------------------------
def test_catches_an_s3_compatible_endpoint_without_path_style():
    env = "[{name: AWS_ENDPOINT_URL, value: 'http://minio.minio.svc:9000'}]"
    # at the endpoint's value
    assert found(pod(env)) == [(9, 43, Severity.WARNING, "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING=<unset>")]
    (finding,) = lint(pod(env))
    assert finding.message.startswith("Set `RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING=0` for the S3-compatible "
                                      "endpoint minio.minio.svc")


@pytest.mark.parametrize("value, said", [("'1'", "1"), ("'false'", "false")])
def test_catches_path_style_not_turned_on(value, said):
    env = ("[{name: AWS_ENDPOINT_URL, value: 'http://10.0.0.5:9000'}, "
           f"{{name: RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING, value: {value}}}]")
    ((line, _, severity, found_value),) = found(pod(env))
    assert (line, severity, found_value) == (9, Severity.WARNING, f"RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING={said}")


def test_a_word_the_streamer_cannot_parse_is_named_as_written():
    from vllmlint.formatters.report import split_message

    env = ("[{name: AWS_ENDPOINT_URL, value: 'http://10.0.0.5:9000'}, "
           "{name: RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING, value: 'no'}]")
    (finding,) = lint(pod(env))
    head, rest = split_message(finding.message)
    assert head == "Set `RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING=0` for the S3-compatible endpoint 10.0.0.5, not `no`"
    assert rest.startswith("The streamer reads it as an integer, and `no` does not parse; ")


def test_does_not_catch_path_style_or_aws():
    env = ("[{name: AWS_ENDPOINT_URL, value: 'http://minio:9000'}, "
           "{name: RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING, value: '0'}]")
    assert found(pod(env)) == []
    assert found(pod("[{name: AWS_ENDPOINT_URL, value: 'https://s3.eu-west-1.amazonaws.com'}]")) == []
    assert found(pod("[{name: AWS_ENDPOINT_URL, value: 'https://bucket.s3.cn-north-1.amazonaws.com.cn'}]")) == []


def test_does_not_catch_values_from_elsewhere():
    assert found(pod("[{name: AWS_ENDPOINT_URL, valueFrom: {secretKeyRef: {name: s3, key: url}}}]")) == []
    env = "[{name: AWS_ENDPOINT_URL, value: 'http://minio:9000'}]"
    assert found(pod(env, env_from="\n    envFrom:\n    - secretRef: {name: streamer}")) == []
    assert found(pod(env, model="/models/Llama-3-8b")) == []


def test_aws_names_data():
    names, prefixes = aws_variables()
    assert "AWS_SECRET_ACCESS_KEY" in names and "AWS_ENDPOINT_URL_" in prefixes


# --- the same facts wherever the run writes the environment (vllm/invocation_env.py, shared with VL109) ------------
def at(text, filename):
    return [(f.span.line, f.span.col, f.value) for f in lint(text, filename)]


MARKDOWN = """To run model from a S3 compatible object store run:

```bash
RUNAI_STREAMER_S3_USE_VIRTUAL_ADRESSING=0 \\
AWS_EC2_METADATA_DISABLED=true \\
AWS_ENDPOINT_URL=https://storage.googleapis.com \\
vllm serve s3://core-llm/Llama-3-8b \\
    --load-format runai_streamer
```
"""


def test_catches_a_prefix_assignment_in_a_markdown_shell_block():
    assert at(MARKDOWN, "README.md") == [
        (4, 1, "RUNAI_STREAMER_S3_USE_VIRTUAL_ADRESSING->RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING")]


def test_does_not_catch_vllms_own_markdown_example():
    assert at(MARKDOWN.replace("ADRESSING", "ADDRESSING"), "README.md") == []


def test_catches_export_in_a_script_and_its_false_switch():
    script = ("#!/bin/bash\nexport AWS_ENDPOINT_URL=http://minio:9000\n"
              "export RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING=false\n"
              "export RUNAI_STREAMER_CONCURENCY=16\n"
              "vllm serve s3://models/Qwen3-8B --load-format runai_streamer\n")
    assert at(script, "serve.sh") == [(3, 8, "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING=false"),
                                      (4, 8, "RUNAI_STREAMER_CONCURENCY->RUNAI_STREAMER_CONCURRENCY")]


def test_does_not_catch_a_script_that_may_get_the_switch_from_its_shell():
    script = "export AWS_ENDPOINT_URL=http://minio:9000\nvllm serve s3://models/Qwen3-8B --load-format runai_streamer\n"
    assert at(script, "serve.sh") == []


def test_does_not_catch_a_script_whose_vllm_does_not_stream():
    script = "export RUNAI_STREAMER_CONCURENCY=16\nvllm serve Qwen/Qwen3-8B\n"
    assert at(script, "serve.sh") == []


DOCKER_RUN = """#!/bin/bash
docker run --runtime nvidia --gpus all \\
    -e AWS_ENDPOINT_URL=http://minio.local:9000 \\
    -e AWS_ACCESS_KEY_ID=minio -e AWS_SECRET_ACCES_KEY=minio123 \\
    vllm/vllm-openai:v0.29.0 \\
    --model s3://models/Qwen3-8B --load-format runai_streamer
"""


def test_catches_docker_run_env():
    assert at(DOCKER_RUN, "serve.sh") == [(4, 35, "AWS_SECRET_ACCES_KEY->AWS_SECRET_ACCESS_KEY")]


def test_does_not_take_the_docker_clients_env_for_the_containers():
    # exported before `docker run`: the docker client's environment, not the container's
    script = "export RUNAI_STREAMER_CONCURENCY=16\n" + DOCKER_RUN.replace("SECRET_ACCES_", "SECRET_ACCESS_")
    assert at(script, "serve.sh") == []


def test_catches_dockerfile_env():
    dockerfile = ("FROM vllm/vllm-openai:v0.29.0\nENV RUNAI_STREAMER_MEMORY_LIMT=8000000000 \\\n"
                  "    RUNAI_STREAMER_CONCURRENCY=32\n"
                  'CMD ["--model", "/models/Qwen3-32B", "--load-format", "runai_streamer"]\n')
    assert at(dockerfile, "Dockerfile") == [(2, 5, "RUNAI_STREAMER_MEMORY_LIMT->RUNAI_STREAMER_MEMORY_LIMIT")]
    assert at(dockerfile.replace("runai_streamer", "safetensors"), "Dockerfile") == []


VLLMRUNTIME = """apiVersion: production-stack.vllm.ai/v1alpha1
kind: VLLMRuntime
metadata: {name: llama-streamer}
spec:
  model:
    modelURL: "s3://models/Llama-3.1-8B-Instruct"
  vllmConfig:
    port: 8000
    extraArgs: ["--load-format", "runai_streamer"]
    env:
      - name: AWS_ENDPOINT_URL
        value: "http://minio.minio.svc:9000"
      - name: RUNAI_STREAMER_LOG_TO_STDER
        value: "1"
  deploymentConfig:
    image:
      registry: "docker.io"
      name: "vllm/vllm-openai:v0.29.0"
"""


def test_catches_vllmruntime_env():
    # the operator copies spec.vllmConfig.env into the container, which holds nothing else: the switch is missing
    assert at(VLLMRUNTIME, "rt.yaml") == [(11, 15, "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING=<unset>"),
                                          (13, 15, "RUNAI_STREAMER_LOG_TO_STDER->RUNAI_STREAMER_LOG_TO_STDERR")]


STACK_VALUES = """servingEngineSpec:
  modelSpec:
  - name: "llama3"
    repository: "vllm/vllm-openai"
    tag: "v0.29.0"
    modelURL: "s3://models/Llama-3.1-8B-Instruct"
    replicaCount: 1
    requestGPU: 1
    vllmConfig:
      extraArgs: ["--load-format", "runai_streamer"]
    env:
      - name: AWS_ENDPOINT_URL
        value: "http://minio.minio.svc:9000"
      - name: RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING
        value: "0"
      - name: RUNAI_STREAMER_MEMORY_LIMT
        value: "5000000000"
"""


def test_catches_production_stack_chart_values_env():
    assert at(STACK_VALUES, "values.yaml") == [(16, 15, "RUNAI_STREAMER_MEMORY_LIMT->RUNAI_STREAMER_MEMORY_LIMIT")]


def test_catches_a_typo_in_the_env_of_the_image_a_compose_service_builds(tmp_path, monkeypatch):
    from vllmlint.engine import lint_paths

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Dockerfile").write_text(
        'FROM vllm/vllm-openai:v0.29.0\nENV RUNAI_STREAMER_LOG_TO_STDER=1\nENTRYPOINT ["vllm", "serve"]\n')
    (tmp_path / "compose.yaml").write_text(
        'services:\n  a:\n    build: ./app\n    command: ["s3://bucket/llama", "--load-format", "runai_streamer"]\n')
    monkeypatch.chdir(tmp_path)
    result, _ = lint_paths(["."], LintOptions(select=["VL723"]))
    assert [(f.path, f.span.line, f.span.col) for f in result.findings] == [("app/Dockerfile", 2, 5)]
