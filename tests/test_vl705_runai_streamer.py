"""VL705 memory-limit-too-small counts the Run:ai Model Streamer's CPU buffer (`--load-format runai_streamer`) as
vLLM and the streamer's code say (data/host-memory.yaml, loaders): per GPU worker, the checkpoint or the limit,
whichever is less."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def lint(text):
    result = lint_text(text, "example.yaml", LintOptions(select=["VL705"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL705"]


def pod(args, limits, image="vllm/vllm-openai:v0.29.0", env="[]"):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: {image}
    args: {args}
    env: {env}
    resources:
      limits: {limits}
"""


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


L70_TP4 = "[--model, meta-llama/Llama-3.1-70B-Instruct, -tp, '4', --load-format, runai_streamer"
L8_S3 = "[--model, s3://core-llm/Meta-Llama-3-8B-Instruct, --load-format, runai_streamer"


@pytest.mark.parametrize("text, value", [
    # 0.29.0: the streamer's default 40 GB (37.3 GiB) per worker x 4 > 64Gi
    (pod(L70_TP4 + "]", "{nvidia.com/gpu: 4, memory: 64Gi}"), "149.0 GiB>64.0 GiB"),
    # 0.10.2: runai-model-streamer >= 0.14.0, whose default is 20 GB: 4 x 18.6 GiB
    (pod(L70_TP4 + "]", "{nvidia.com/gpu: 4, memory: 64Gi}", "vllm/vllm-openai:v0.10.2"), "74.5 GiB>64.0 GiB"),
    # -1: the whole checkpoint (an s3:// path named like a catalogued model)
    (pod(L8_S3 + "]", "{nvidia.com/gpu: 1, memory: 12Gi}", env="[{name: RUNAI_STREAMER_MEMORY_LIMIT, value: '-1'}]"),
     "15.0 GiB>12.0 GiB"),
    # an explicit limit per worker, from --model-loader-extra-config (it wins over the variable)
    (pod(L70_TP4 + ", --model-loader-extra-config, '{\"memory_limit\": 20000000000}']",
         "{nvidia.com/gpu: 4, memory: 64Gi}", env="[{name: RUNAI_STREAMER_MEMORY_LIMIT, value: '1000'}]"),
     "74.5 GiB>64.0 GiB"),
])
def test_catches(text, value):
    # at the memory limit
    assert found(text) == [(11, 43, Severity.ERROR, value)]


def test_the_message_names_the_buffer():
    (finding,) = lint(pod(L70_TP4 + "]", "{nvidia.com/gpu: 4, memory: 64Gi}"))
    assert "of Run:ai Model Streamer CPU buffer (RUNAI_STREAMER_MEMORY_LIMIT not set: the streamer's default 40 GB " \
           "with vLLM 0.29.0; 37.3 GiB per GPU worker x 4 GPU workers" in finding.message


@pytest.mark.parametrize("text", [
    # bounded: 4 x 5 GiB
    pod(L70_TP4 + "]", "{nvidia.com/gpu: 4, memory: 64Gi}", env="[{name: RUNAI_STREAMER_MEMORY_LIMIT, value: '5368709120'}]"),
    # 0: the largest tensor, not in the catalog
    pod(L70_TP4 + "]", "{nvidia.com/gpu: 4, memory: 64Gi}", env="[{name: RUNAI_STREAMER_MEMORY_LIMIT, value: '0'}]"),
    # distributed streaming goes to GPU memory (0.11.2 and later)
    pod(L70_TP4 + ", --model-loader-extra-config, '{\"distributed\": true}']", "{nvidia.com/gpu: 4, memory: 64Gi}"),
    # a model not in the catalog
    pod("[--model, s3://bucket/my-finetune, --load-format, runai_streamer]", "{nvidia.com/gpu: 1, memory: 4Gi}"),
    # a release not read (the newest is assumed for an unpinned image) and a release before 0.10.2
    pod(L70_TP4 + "]", "{nvidia.com/gpu: 4, memory: 64Gi}", "vllm/vllm-openai:latest"),
    pod(L70_TP4 + "]", "{nvidia.com/gpu: 4, memory: 64Gi}", "vllm/vllm-openai:v0.9.2"),
    # pipeline parallelism: a stage may stream fewer files
    pod(L70_TP4 + ", -pp, '2']", "{nvidia.com/gpu: 4, memory: 64Gi}"),
    # the limit from a Secret, and the default loader
    pod(L70_TP4 + "]", "{nvidia.com/gpu: 4, memory: 64Gi}",
        env="[{name: RUNAI_STREAMER_MEMORY_LIMIT, valueFrom: {secretKeyRef: {name: s, key: k}}}]"),
    pod("[--model, meta-llama/Llama-3.1-70B-Instruct, -tp, '4']", "{nvidia.com/gpu: 4, memory: 64Gi}"),
])
def test_does_not_catch(text):
    assert found(text) == []
