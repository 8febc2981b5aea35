"""VL107 conflicting-args, the issue-10 cases: `serve` repeated in a Compose command, and
`--max-num-batched-tokens` below `--max-model-len` without chunked prefill. Positions on both sides."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def lint(text, filename="example.yaml", version=None):
    result = lint_text(text, filename, LintOptions(select=["VL107"], vllm_version=version))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL107"]


def found(text, filename="example.yaml", version=None):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, filename, version)]


def compose(command, image="vllm/vllm-openai:v0.12.0", extra=""):
    return f"""services:
  vllm:
    image: {image}
{extra}    command: {command}
"""


def deployment(image, args, env=""):
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
{env}"""


# --- serve in a Compose command ----------------------------------------------------------------------
@pytest.mark.parametrize("command, col", [
    ("serve Qwen/Qwen3-8B --max-model-len 8192", 14),
    ('["serve", "Qwen/Qwen3-8B", "--max-model-len", "8192"]', 15),
    ("vllm serve Qwen/Qwen3-8B", 14),
])
def test_compose_serve_repeated(command, col):
    (finding,) = lint(compose(command), "compose.yaml")
    assert (finding.span.line, finding.span.col, finding.severity) == (4, col, Severity.ERROR)
    assert "A Compose `command` replaces only the image's CMD" in finding.message
    assert "from `command`" in finding.message and "`args`" not in finding.message


@pytest.mark.parametrize("text", [
    compose("Qwen/Qwen3-8B --max-model-len 8192"),
    compose('["--model", "Qwen/Qwen3-8B"]', "vllm/vllm-openai:v0.9.2"),  # api_server entrypoint: VL715's
    compose('["--model", "Qwen/Qwen3-8B"]', extra='    entrypoint: ["python3", "-m", "vllm.entrypoints.openai.api_server"]\n'),
    compose("serve Qwen/Qwen3-8B", "ghcr.io/example/llm-server:1.0"),  # not an image in the table
])
def test_compose_no_repeat(text):
    assert lint(text, "compose.yaml") == []


def test_compose_entrypoint_and_command_both_written():
    text = compose("serve Qwen/Qwen3-8B", extra="    entrypoint: [vllm, serve]\n")
    (finding,) = lint(text, "compose.yaml")
    assert (finding.span.line, finding.span.col) == (5, 14) and finding.message.startswith("This runs")


def test_kubernetes_args_wording_is_unchanged():
    (finding,) = lint(deployment("vllm/vllm-openai:v0.12.0", "[serve, Qwen/Qwen3-8B]"))
    assert (finding.span.line, finding.span.col) == (12, 16) and "these `args` run" in finding.message


# --- --max-num-batched-tokens below --max-model-len ---------------------------------------------------
V0_ARGS = '[--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, "16384", --max-num-batched-tokens, "4096"]'


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.6.4.post1", "vllm/vllm-openai:v0.7.3"])
def test_batched_below_len_on_v0(image):
    (finding,) = lint(deployment(image, V0_ARGS))
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == \
        (12, 111, Severity.ERROR, "batched<16384")
    assert '"max_num_batched_tokens (4096) is smaller than max_model_len (16384)"' in finding.message
    assert "leaves chunked prefill off by default" in finding.message


@pytest.mark.parametrize("line, version, col", [
    ("vllm serve Qwen/Qwen3-8B --max-model-len 32768 --max-num-batched-tokens 8192 --no-enable-chunked-prefill\n",
     "0.29.0", 73),
    ("vllm serve Qwen/Qwen3-8B --no-enable-chunked-prefill --max-model-len 32k --max-num-batched-tokens 8k\n",
     "0.12.0", 99),
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 65536 --max-num-batched-tokens 8192 "
     "--enable-chunked-prefill=False\n", "0.6.4.post1", 84),
])
def test_batched_below_len_chunked_off(line, version, col):
    (finding,) = lint(line, "serve.sh", version)
    assert (finding.span.line, finding.span.col, finding.severity) == (1, col, Severity.ERROR)
    assert "chunked prefill is turned off" in finding.message


@pytest.mark.parametrize("text, filename, version", [
    # chunked prefill turned on
    (deployment("vllm/vllm-openai:v0.6.4.post1", V0_ARGS[:-1] + ", --enable-chunked-prefill]"), "a.yaml", None),
    (deployment("vllm/vllm-openai:v0.6.4.post1", V0_ARGS[:-1] + ", --enable-chunked-prefill=true]"), "a.yaml", None),
    # V1 engine forces it on for generative models, 0.8.0 to 0.11.0, whatever the flag says
    (deployment("vllm/vllm-openai:v0.9.2", V0_ARGS), "a.yaml", None),
    ("vllm serve m --max-model-len 16384 --max-num-batched-tokens 4096 --no-enable-chunked-prefill\n", "s.sh",
     "0.11.0"),
    # default on from 0.11.1
    ("vllm serve m --max-model-len 32768 --max-num-batched-tokens 8192\n", "s.sh", "0.29.0"),
    # V0 turns it on above 32K tokens; VLLM_USE_V1=1 forces it on in 0.7.x
    ("vllm serve m --max-model-len 65536 --max-num-batched-tokens 8192\n", "s.sh", "0.6.4.post1"),
    (deployment("vllm/vllm-openai:v0.7.3", V0_ARGS, '        env: [{name: VLLM_USE_V1, value: "1"}]\n'),
     "a.yaml", None),
    (deployment("vllm/vllm-openai:v0.7.3", V0_ARGS,
                "        env: [{name: VLLM_USE_V1, valueFrom: {configMapKeyRef: {name: c, key: k}}}]\n"),
     "a.yaml", None),
    # budget at or above the length; unknown values; pooling models
    ("vllm serve m --max-model-len 4096 --max-num-batched-tokens 4096 --no-enable-chunked-prefill\n", "s.sh",
     "0.29.0"),
    ("vllm serve m --max-model-len $LEN --max-num-batched-tokens 4096 --no-enable-chunked-prefill\n", "s.sh",
     "0.29.0"),
    ("vllm serve m --max-model-len auto --max-num-batched-tokens 4096 --no-enable-chunked-prefill\n", "s.sh",
     "0.29.0"),
    ("vllm serve m --max-num-batched-tokens 4096 --no-enable-chunked-prefill\n", "s.sh", "0.29.0"),
    ("vllm serve m --runner pooling --max-model-len 8192 --max-num-batched-tokens 4096 "
     "--no-enable-chunked-prefill\n", "s.sh", "0.29.0"),
    ("vllm serve m --task embed --max-model-len 8192 --max-num-batched-tokens 4096\n", "s.sh", "0.6.4.post1"),
])
def test_batched_below_len_silent(text, filename, version):
    assert lint(text, filename, version) == []


def test_v0_engine_by_environment_on_0_9():
    text = deployment("vllm/vllm-openai:v0.9.2", V0_ARGS, '        env: [{name: VLLM_USE_V1, value: "0"}]\n')
    assert found(text) == [(12, 111, Severity.ERROR, "batched<16384")]
    longer = V0_ARGS.replace('"16384"', '"65536"')
    assert lint(deployment("vllm/vllm-openai:v0.9.2", longer, '        env: [{name: VLLM_USE_V1, value: "0"}]\n')) == []
    assert lint(deployment("vllm/vllm-openai:v0.11.0", V0_ARGS, '        env: [{name: VLLM_USE_V1, value: "0"}]\n')) == []


# --- review: what `vllm serve serve ...` does (one positional `model_tag`, nargs="?") ------------------
@pytest.mark.parametrize("args, said", [
    ("[serve, Qwen/Qwen3-8B]", 'unrecognized arguments: Qwen/Qwen3-8B"'),
    ("[vllm, serve, Qwen/Qwen3-8B, --port, '8000']", 'unrecognized arguments: Qwen/Qwen3-8B"'),
    ("[serve, --model, Qwen/Qwen3-8B]", 'unrecognized arguments: serve"'),  # 0.11.1+ moves --model's value first
    ("[serve]", 'a model called "serve"'),
])
def test_serve_serve_says_what_argparse_does(args, said):
    (finding,) = lint(deployment("vllm/vllm-openai:v0.11.1", args))
    assert (finding.span.line, finding.span.col, finding.severity) == (12, 16, Severity.ERROR)
    assert said in finding.message
    if "unrecognized" in said:
        assert "load a model called" not in finding.message


def test_serve_serve_with_model_item_raises_before_0_11_1():
    text = "vllm serve serve --model Qwen/Qwen3-8B\n"
    (finding,) = lint(text, "serve.sh", "0.10.1.1")
    assert (finding.span.line, finding.span.col, finding.severity) == (1, 12, Severity.ERROR)
    assert "ValueError" in finding.message


def test_serve_serve_then_unresolved_var_is_silent():
    assert lint(deployment("vllm/vllm-openai:v0.11.1", '[serve, "$(ARGS)"]')) == []


def test_serve_serve_with_model_on_0_8_0_raises_in_serve_cmd():
    (finding,) = lint("vllm serve serve --model=Qwen/Qwen3-8B\n", "serve.sh", "0.8.0")
    assert (finding.span.line, finding.span.col, finding.severity) == (1, 12, Severity.ERROR)
    assert "ValueError" in finding.message


def test_a_release_that_rejects_a_lone_model_option_says_so_first():
    # `vllm serve --model X` on 0.7.1, whose parser refused `--model` (issue 13: the release
    # first, how the run knows it after the first sentence)
    text = deployment("vllm/vllm-openai:v0.7.1", "[--model, Qwen/Qwen3-8B]").replace(
        "        args:", "        command: [vllm, serve]\n        args:")
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col, finding.value) == (13, 16, "--model")
    assert finding.message == (
        "vLLM 0.7.1 rejects `vllm serve --model ...`: it wants the model as the positional argument. That is vLLM "
        "0.7.1, the release Deployment vllm runs (image tag vllm/vllm-openai:v0.7.1). Write `vllm serve "
        "Qwen/Qwen3-8B ...`.")
