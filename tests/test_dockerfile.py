"""Dockerfiles: the reader (BuildKit's reading, with offsets) and the vLLM server the image runs, pinned at positions."""
import subprocess
import sys

import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.source.dockerfile import is_dockerfile, read_dockerfile, split_words


def where(text, filename="Dockerfile", select=None, **options):
    result = lint_text(text, filename, LintOptions(select=select, **options))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.code, f.span.line, f.span.col, f.value) for f in result.findings]


# --- the reader ---------------------------------------------------------------------------------------------
def test_file_names():
    for name in ("Dockerfile", "Containerfile", "vllm.Dockerfile", "Dockerfile.gpu", "dockerfile"):
        assert is_dockerfile(name), name
    for name in ("docker-compose.yaml", "Dockerfiles", "README.md", "Dockerfile.md", "Dockerfile.yaml"):
        assert not is_dockerfile(name), name


def test_continuations_and_comment_lines_inside_them():
    text = ('FROM vllm/vllm-openai:v0.8.5\nENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server", \\\n'
            '            # name of the model\n           "--model", "m", \\\n\n           "--port", "80"]\n')
    stage = read_dockerfile(text).final
    words = [w.text for w in stage.effective_entrypoint().words]
    assert words == ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m", "--port", "80"]
    port = stage.effective_entrypoint().words[-2]
    assert text[port.start:port.end] == '"--port"'


def test_escape_directive_and_heredocs():
    text = ("# escape=`\nFROM vllm/vllm-openai:v0.29.0\nRUN <<EOF\nENTRYPOINT [\"not\", \"an\", \"instruction\"]\n"
            "EOF\nCMD [\"Qwen/Qwen3-8B\", `\n  \"--port\", \"8000\"]\n")
    dockerfile = read_dockerfile(text)
    assert dockerfile.escape == "`"
    assert [i.keyword for i in dockerfile.instructions] == ["FROM", "RUN", "CMD"]
    assert [w.text for w in dockerfile.final.effective_cmd().words] == ["Qwen/Qwen3-8B", "--port", "8000"]


def test_global_args_stages_and_inheritance():
    text = ("ARG TAG=v0.10.2\nARG BASE=vllm/vllm-openai:${TAG}\nFROM ${BASE} AS base\nENV HF_HOME=/cache A=\"b c\"\n"
            "ENTRYPOINT [\"vllm\", \"serve\"]\nCMD [\"m\"]\nFROM base AS final\nENTRYPOINT [\"python3\", \"x.py\"]\n")
    dockerfile = read_dockerfile(text)
    final = dockerfile.final
    assert final.name == "final" and final.parent is dockerfile.stages[0]
    # An ARG default uses the ARGs declared above it.
    assert final.base_image.text == "vllm/vllm-openai:v0.10.2"
    assert {k: v.value for k, v in final.effective_env().items()} == {"HF_HOME": "/cache", "A": "b c"}
    assert final.effective_cmd() is None  # ENTRYPOINT set in the stage resets the inherited CMD
    assert read_dockerfile(text, {"TAG": "v0.29.0"}).final.base_image.text == "vllm/vllm-openai:v0.29.0"


def test_unknown_build_argument_leaves_the_image_unknown():
    stage = read_dockerfile("ARG TAG\nFROM vllm/vllm-openai:${TAG}\nCMD [\"m\"]\n").final
    assert stage.base_image.dynamic


def test_legacy_env_form_and_words():
    stage = read_dockerfile("FROM x\nENV MODEL_NAME meta-llama/Meta-Llama-3-8B-Instruct\n").final
    assert stage.env["MODEL_NAME"].value == "meta-llama/Meta-Llama-3-8B-Instruct"
    (instruction,) = read_dockerfile('FROM x\nLABEL a="b c" d=e\n').final.instructions
    assert [w.text for w in split_words(instruction)] == ["a=b c", "d=e"]


def test_garbage_never_raises():
    for text in ("", "\n\n", "FROM", "ENTRYPOINT [", "CMD [1, 2]", "\\\n\\\n", "FROM a AS\nCMD", "RUN <<EOF\n" * 50):
        read_dockerfile(text)


# --- what the image runs -----------------------------------------------------------------------------------
def test_exec_form_entrypoint_with_a_removed_flag():
    text = ('FROM vllm/vllm-openai:v0.29.0\n'
            'ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server", "--swap-space", "4"]\n')
    assert [(c, line, col) for c, line, col, _ in where(text, select=["VL101", "VL102"])] == [
        ("VL101", 2, 30), ("VL102", 2, 68)]


def test_cmd_given_to_the_base_images_own_entrypoint():
    text = 'FROM vllm/vllm-openai:v0.29.0\nCMD ["Qwen/Qwen3-8B", "--port", "8000", "--swap-space", "4"]\n'
    assert [(c, line, col) for c, line, col, _ in where(text, select=["VL102"])] == [("VL102", 2, 41)]


def test_shell_form_is_read_where_it_stands():
    text = ("FROM vllm/vllm-openai:v0.29.0\nENTRYPOINT vllm serve Qwen/Qwen3-8B \\\n"
            "    --port ${PORT:-8000} \\\n    --swap-space 4\n")
    assert [(c, line, col) for c, line, col, _ in where(text, select=["VL102"])] == [("VL102", 4, 5)]


def test_a_pinned_install_sets_the_release():
    text = ("ARG BASE=nvidia/cuda:12.4.1-devel-ubuntu22.04\nFROM ${BASE} AS build\nRUN pip install vllm==0.9.2\n"
            "FROM build\nCMD [\"vllm\", \"serve\", \"Qwen/Qwen3-8B\", \"--enable-log-requests\"]\n")
    found = lint_text(text, "Dockerfile", LintOptions(select=["VL105"])).findings
    assert [(f.span.line, f.span.col) for f in found] == [(5, 40)]
    assert "`RUN pip install vllm==0.9.2` at line 3" in found[0].message


def test_no_fix_is_offered_for_a_dockerfile():
    text = ('FROM vllm/vllm-openai:v0.29.0\n'
            'ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server", "--swap-space", "4"]\n')
    result = lint_text(text, "Dockerfile", LintOptions(select=["VL101", "VL102"]))
    assert result.findings and all(f.fix is None for f in result.findings)


def test_a_healthy_dockerfile_and_one_without_vllm_pass():
    assert where('FROM vllm/vllm-openai:v0.29.0\nCMD ["Qwen/Qwen3-8B", "--max-model-len", "8192"]\n',
                 select=["VL1"]) == []
    assert where("FROM python:3.12\nCMD [\"python\", \"app.py\"]\n") == []


# --- a Compose service that builds a Dockerfile of the run ---------------------------------------------------
def test_compose_build_runs_the_dockerfiles_release_and_entrypoint(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Dockerfile").write_text(
        'ARG VLLM_TAG=v0.29.0\nFROM vllm/vllm-openai:${VLLM_TAG}\n'
        'ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]\n'
        'CMD ["--model", "Qwen/Qwen3-8B", "--swap-space", "4"]\n')
    (tmp_path / "compose.yaml").write_text(
        "services:\n  vllm:\n    build:\n      context: ./app\n    image: my/vllm:dev\n"
        "  old:\n    build:\n      context: ./app\n      args: {VLLM_TAG: v0.17.1}\n"
        "    command: [--model, Qwen/Qwen3-8B, --swap-space, '4']\n")
    out = subprocess.run([sys.executable, "-m", "vllmlint", "--no-cache", "--select", "VL102", "--format", "json", "."],
                         cwd=tmp_path, capture_output=True, text=True)
    import json

    findings = json.loads(out.stdout)["findings"]
    # The service `vllm` runs the Dockerfile's CMD on 0.29.0: --swap-space there; `old` builds 0.17.1, which
    # still accepts it. The Dockerfile is not reported a second time on its own.
    assert [(f["path"], f["line"], f["column"]) for f in findings] == [("app/Dockerfile", 4, 34)]


def test_a_compose_build_whose_dockerfile_is_not_linted_is_a_note(tmp_path):
    # `vllmlint compose.yaml` alone: the service runs an image built from a Dockerfile the run does not read, so
    # nothing about its vLLM is checked; a note says so instead of a silent "All checks passed".
    import os

    from vllmlint.engine import lint_paths

    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Dockerfile").write_text('FROM vllm/vllm-openai:v0.29.0\nCMD ["m", "--swap-space", "4"]\n')
    (tmp_path / "compose.yaml").write_text("services:\n  vllm:\n    build: ./app\n  web:\n    build:\n"
                                           "      context: https://github.com/example/web.git\n")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        alone, _ = lint_paths(["compose.yaml"], LintOptions())
        both, _ = lint_paths(["."], LintOptions())
    finally:
        os.chdir(cwd)
    notes = [(n.path, n.line, n.message) for n in alone.notices if "built from" in n.message]
    assert notes == [("compose.yaml", 3, "Compose service vllm runs an image built from app/Dockerfile, which is not "
                      "among the linted files: its vLLM is not checked (lint it too: `vllmlint compose.yaml "
                      "app/Dockerfile`)")]
    assert [n for n in both.notices if "built from" in n.message] == []  # read, and a URL context is not a file to name
    assert [f.code for f in both.findings if f.code == "VL102"] == ["VL102"]


def test_a_folder_run_collects_dockerfiles(tmp_path):
    (tmp_path / "Containerfile").write_text('FROM vllm/vllm-openai:v0.29.0\nCMD ["m", "--swap-space", "4"]\n')
    out = subprocess.run([sys.executable, "-m", "vllmlint", "--no-cache", "--select", "VL102", "."], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 1 and "Containerfile:2:11: VL102" in out.stdout


@pytest.mark.parametrize("text", [
    'FROM vllm/vllm-openai:latest\nENTRYPOINT python3 -m vllm.entrypoints.openai.api_server --model ${MODEL_NAME:-m}\n',
    'FROM vllm/vllm-openai:v0.5.5\nENTRYPOINT ["/bin/bash", "entrypoint.sh"]\nCMD [""]\n',
])
def test_real_shapes_do_not_crash(text):
    lint_text(text, "Dockerfile", LintOptions())


def test_a_comment_above_an_instruction_suppresses_its_finding():
    text = ('FROM vllm/vllm-openai:v0.29.0\n# vllmlint: disable-next-line=VL102 -- we pin 0.17 in CI first\n'
            'CMD ["Qwen/Qwen3-8B", \\\n     "--swap-space", "4"]\n')
    result = lint_text(text, "Dockerfile", LintOptions(select=["VL102", "VL003"]))
    assert result.findings == [] and [f.code for f in result.suppressed] == ["VL102"]


def test_the_language_server_lints_an_open_dockerfile(tmp_path):
    import asyncio

    pytest.importorskip("pygls")
    from tests.lsp_client import session

    text = 'FROM vllm/vllm-openai:v0.29.0\nCMD ["m", "--swap-space", "4"]\n'
    (tmp_path / "Dockerfile").write_text(text)

    async def scenario():
        async with session(tmp_path) as s:
            s.open("Dockerfile", text, language="dockerfile")
            found = await s.wait_diagnostics("Dockerfile")
            assert [(d.code, d.range.start.line, d.range.start.character) for d in found] == [("VL102", 1, 10)]

    asyncio.run(scenario())
