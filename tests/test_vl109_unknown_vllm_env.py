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


def test_catches_dockerfile_env_of_the_image_a_compose_service_builds(tmp_path):
    # Compose runs the image it builds: the Dockerfile's ENV is the service's environment too (the service's own
    # `environment` replaces a variable of the same name). Adding the Compose file must not hide the finding.
    import os

    from vllmlint.engine import lint_paths

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Dockerfile").write_text(
        "FROM vllm/vllm-openai:v0.28.0\nENV HF_HUB_ENABLE_HF_TRANSFER=1 \\\n    VLLM_USE_V1=0 VLLM_ATTENTON_BACKEND=X\n"
        'ENTRYPOINT ["vllm", "serve", "Qwen/Qwen3-8B"]\n')
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    build: ./app\n    environment:\n      VLLM_ATTENTON_BACKEND: FLASH_ATTN\n")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result, _ = lint_paths(["."], LintOptions(select=["VL109"]))
    finally:
        os.chdir(cwd)
    assert not result.internal_error
    # The Dockerfile's VLLM_USE_V1 (3:5); its VLLM_ATTENTON_BACKEND is replaced by the service's (5:7), reported once.
    assert sorted((f.path, f.span.line, f.span.col, f.value) for f in result.findings) == [
        ("app/Dockerfile", 3, 5, "VLLM_USE_V1"), ("compose.yaml", 5, 7, "VLLM_ATTENTON_BACKEND")]
