"""VL109 unknown-vllm-env: catches / does not catch in every place the run writes a vLLM server's environment
(the one path, vllm/invocation_env.py, that streamer-misconfigured VL723 reads too), with positions."""
from vllmlint.engine import LintOptions, lint_text


def found(text, filename):
    result = lint_text(text, filename, LintOptions(select=["VL109"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.value) for f in result.findings if f.code == "VL109"]


def test_catches_a_typo_in_a_kubernetes_container():
    text = """apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.2
    args: [--model, Qwen/Qwen3-8B]
    env:
    - {name: VLLM_ATTENTON_BACKEND, value: FLASHINFER}
"""
    assert found(text, "pod.yaml") == [(10, 14, "VLLM_ATTENTON_BACKEND")]


def test_catches_docker_run_env():
    script = ("docker run --gpus all -e VLLM_ATTENTON_BACKEND=FLASHINFER \\\n"
              "    vllm/vllm-openai:v0.10.2 --model Qwen/Qwen3-8B\n")
    assert found(script, "run.sh") == [(1, 26, "VLLM_ATTENTON_BACKEND")]


def test_does_not_take_the_docker_clients_env_for_the_containers():
    script = ("export VLLM_ATTENTON_BACKEND=FLASHINFER\n"
              "docker run --gpus all vllm/vllm-openai:v0.10.2 --model Qwen/Qwen3-8B\n")
    assert found(script, "run.sh") == []


def test_catches_dockerfile_env_of_the_stage_that_runs():
    dockerfile = ("FROM vllm/vllm-openai:v0.10.2 AS base\nENV VLLM_ATTENTON_BACKEND=FLASHINFER\n"
                  "FROM base\nENV VLLM_USE_V1=yes\n"
                  'CMD ["--model", "Qwen/Qwen3-8B"]\n')
    assert found(dockerfile, "Dockerfile") == [(2, 5, "VLLM_ATTENTON_BACKEND"), (4, 5, "VLLM_USE_V1=yes")]


def test_does_not_catch_dockerfile_env_of_an_unused_stage():
    dockerfile = ("FROM python:3.12 AS tools\nENV VLLM_ATTENTON_BACKEND=FLASHINFER\n"
                  'FROM vllm/vllm-openai:v0.10.2\nCMD ["--model", "Qwen/Qwen3-8B"]\n')
    assert found(dockerfile, "Dockerfile") == []


def test_catches_a_prefix_in_a_markdown_block_with_a_pinned_release():
    text = ("```bash\npip install vllm==0.10.2\n"
            "VLLM_ATTENTON_BACKEND=FLASHINFER vllm serve Qwen/Qwen3-8B\n```\n")
    assert found(text, "README.md") == [(3, 1, "VLLM_ATTENTON_BACKEND")]


def test_does_not_judge_a_script_whose_release_is_assumed():
    assert found("VLLM_ATTENTON_BACKEND=FLASHINFER vllm serve Qwen/Qwen3-8B\n", "run.sh") == []


def test_vl109_and_vl723_read_one_path():
    from vllmlint.checks import vl109_unknown_vllm_env as vl109, vl723_streamer_misconfigured as vl723
    from vllmlint.vllm import invocation_env

    assert vl109.invocation_env is invocation_env.invocation_env is vl723.invocation_env
