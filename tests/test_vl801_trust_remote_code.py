"""VL801 trust-remote-code: the flag where the model loads without it (warning) or where that is not known
(info); and its agreement with VL712 (both read `needs_trust_remote_code()`)."""
import pytest

from vllmlint.capacity.specs import models
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def lint(text, codes=("VL801",), filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=list(codes)))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code in codes]


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


def pod(image="vllm/vllm-openai:v0.9.2", command="[vllm, serve, Qwen/Qwen2.5-7B-Instruct, --trust-remote-code]"):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: {image}
    command: {command}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


# --- warnings: the catalog knows the release loads the model without the flag ---------------------
def test_a_config_without_auto_map():
    assert found(pod()) == [(8, 54, Severity.WARNING, "Qwen/Qwen2.5-7B-Instruct@0.9.2")]
    (finding,) = lint(pod())
    assert "no auto_map (model_type qwen2" in finding.message
    assert "server's privileges" in finding.message and "Remove --trust-remote-code" in finding.message


def test_mistral_in_the_kubernetes_guide_shape():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: mistral-7b}
spec:
  selector: {matchLabels: {app: mistral-7b}}
  template:
    metadata: {labels: {app: mistral-7b}}
    spec:
      containers:
      - name: mistral-7b
        image: vllm/vllm-openai:latest
        command: ["/bin/sh", "-c"]
        args: ["vllm serve mistralai/Mistral-7B-Instruct-v0.3 --trust-remote-code --enable-chunked-prefill"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col, finding.severity) == (13, 63, Severity.WARNING)
    assert finding.value.startswith("mistralai/Mistral-7B-Instruct-v0.3@")


def test_an_auto_map_transformers_knows_natively():
    text = pod(image="vllm/vllm-openai:v0.7.3",
               command="[vllm, serve, microsoft/Phi-3-mini-4k-instruct, --trust-remote-code]")
    assert found(text) == [(8, 62, Severity.WARNING, "microsoft/Phi-3-mini-4k-instruct@0.7.3")]
    (finding,) = lint(text)
    assert "knows model_type phi3 (from 4.40.0)" in finding.message
    assert "configuration_phi3.Phi3Config" in finding.message


def test_deepseek_from_0_8_3_loads_without_it():
    text = pod(image="vllm/vllm-openai:v0.8.3",
               command="[vllm, serve, deepseek-ai/DeepSeek-V3, --trust-remote-code, --tensor-parallel-size, '8']")
    assert found(text) == [(8, 53, Severity.WARNING, "deepseek-ai/DeepSeek-V3@0.8.3")]


def test_model_option_and_equals_form():
    text = pod(command="[python3, -m, vllm.entrypoints.openai.api_server, --model=Qwen/Qwen2.5-7B-Instruct, "
                       "--trust-remote-code]")
    assert found(text) == [(8, 98, Severity.WARNING, "Qwen/Qwen2.5-7B-Instruct@0.9.2")]


def test_repeated_flag_reports_the_last_once():
    text = pod(command="[vllm, serve, Qwen/Qwen2.5-7B-Instruct, --trust-remote-code, --trust-remote-code]")
    assert found(text) == [(8, 75, Severity.WARNING, "Qwen/Qwen2.5-7B-Instruct@0.9.2")]


# --- info: not known ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["internlm/internlm2_5-7b-chat", "someone/Qwen2.5-7B-Instruct-AWQ", "/models/qwen"])
def test_unknown_or_not_the_repository_is_info(name):
    (row,) = found(pod(command=f"[vllm, serve, {name}, --trust-remote-code]"))
    assert row[:3] == (8, 30 + len(name), Severity.INFO)


def test_pip_install_first_is_info():
    text = pod(image="pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
               command='[sh, -c, "pip install vllm==0.9.2 && vllm serve Qwen/Qwen2.5-7B-Instruct --trust-remote-code"]')
    ((line, col, severity, _),) = found(text)
    assert (line, severity) == (8, Severity.INFO)


def test_info_says_what_to_do():
    (finding,) = lint(pod(command="[vllm, serve, internlm/internlm2_5-7b-chat, --trust-remote-code]"))
    assert "does not know whether it needs the flag" in finding.message
    assert "pin --revision and --code-revision" in finding.message


# --- silent -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    "[vllm, serve, Qwen/Qwen2.5-7B-Instruct]",
    "[vllm, serve, deepseek-ai/DeepSeek-V3, --trust-remote-code]",  # needed on the 0.7.3 image
])
def test_no_flag_or_needed(command):
    assert found(pod(image="vllm/vllm-openai:v0.7.3", command=command)) == []


@pytest.mark.parametrize("flags", [
    "--revision, v2", "--code-revision, 0123abcd", "--config, /etc/vllm/config.yaml",
    "--hf-config-path, other/repo", "--config-format, mistral",
])
def test_silent_where_the_fact_does_not_describe_what_is_loaded(flags):
    assert found(pod(command=f"[vllm, serve, Qwen/Qwen2.5-7B-Instruct, --trust-remote-code, {flags}]")) == []


def test_revision_main_is_what_the_catalog_read():
    text = pod(command="[vllm, serve, Qwen/Qwen2.5-7B-Instruct, --trust-remote-code, --revision, main]")
    assert [r[2] for r in found(text)] == [Severity.WARNING]


# --- VL712 and VL801 never both fire and never disagree -----------------------------------------------
_RUNS = [("vllm/vllm-openai:v0.6.3", None), ("vllm/vllm-openai:v0.6.6", None), ("vllm/vllm-openai:v0.7.3", None),
         ("vllm/vllm-openai:v0.8.2", None), ("vllm/vllm-openai:v0.8.3", None), ("vllm/vllm-openai:v0.10.1.1", None),
         ("vllm/vllm-openai:latest", None), ("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "0.7.3")]


def _invocation(image, pip, model_id, flag):
    words = f"vllm serve {model_id}" + (" --trust-remote-code" if flag else "")
    if pip:
        return pod(image=image, command=f'[sh, -c, "pip install vllm=={pip} && {words}"]')
    return pod(image=image, command="[" + ", ".join(words.split()) + "]")


@pytest.mark.parametrize("image,pip", _RUNS)
@pytest.mark.parametrize("model_id", sorted(m.id for m in models()))
def test_vl712_and_vl801_agree(model_id, image, pip):
    without = {f.code for f in lint(_invocation(image, pip, model_id, False), codes=("VL712", "VL801"))}
    with_flag = lint(_invocation(image, pip, model_id, True), codes=("VL712", "VL801"))
    assert "VL801" not in without and all(f.code == "VL801" for f in with_flag) and len(with_flag) <= 1
    if "VL712" in without:  # needed: the flag is never called unneeded (nor unknown)
        assert with_flag == []
    if with_flag and with_flag[0].severity == Severity.WARNING:  # not needed: never called needed
        assert "VL712" not in without


def test_the_agreement_grid_holds_every_answer():
    """The grid above is not vacuous: it holds invocations where the flag is needed, not needed and unknown."""
    seen = set()
    for image, pip in _RUNS:
        for model_id in ("deepseek-ai/DeepSeek-V3", "Qwen/Qwen2.5-7B-Instruct", "microsoft/Phi-3-mini-4k-instruct"):
            seen |= {f.code for f in lint(_invocation(image, pip, model_id, False), codes=("VL712",))}
            seen |= {f.severity for f in lint(_invocation(image, pip, model_id, True))}
    assert seen == {"VL712", Severity.WARNING, Severity.INFO}


def test_no_auto_map_holds_on_any_release():
    (finding,) = lint(pod(image="registry.example.com/vllm:custom"))
    assert (finding.span.line, finding.span.col, finding.severity) == (8, 54, Severity.WARNING)
    assert "on any vLLM release" in finding.message


@pytest.mark.parametrize("flag", ["--trust-remote-code=false", "--trust-remote-code=0"])
def test_a_flag_turned_off_is_not_reported(flag):
    assert found(pod(command=f"[vllm, serve, Qwen/Qwen2.5-7B-Instruct, {flag}]")) == []


def test_silent_where_the_tokenizer_is_repository_code():
    # THUDM/chatglm3-6b: vLLM loads the chatglm config itself, but the tokenizer is repository code (VL712's case)
    assert found(pod(image="vllm/vllm-openai:v0.14.1", command="[vllm, serve, THUDM/chatglm3-6b, --trust-remote-code]")) \
        == []
    # a release that may run transformers 5 is not judged: still info
    ((_line, _col, severity, _value),) = found(pod(image="vllm/vllm-openai:v0.29.0",
                                                   command="[vllm, serve, THUDM/chatglm3-6b, --trust-remote-code]"))
    assert severity == Severity.INFO
