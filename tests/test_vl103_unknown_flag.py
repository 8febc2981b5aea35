"""VL103 unknown-flag, stray positionals after the model: catches / does not catch, with positions."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def lint(text, filename="serve.sh", version="0.29.0"):
    result = lint_text(text, filename, LintOptions(select=["VL103"], vllm_version=version))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL103"]


def found(text, filename="serve.sh", version="0.29.0"):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, filename, version)]


def pod(args, image="vllm/vllm-openai:v0.29.0"):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: {image}
    args: {args}
"""


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("line, col, value, advice", [
    ("vllm serve Qwen/Qwen3-8B trust_remote_code=True --port 8000\n", 26, "trust_remote_code=True",
     "Write the option `--trust-remote-code` instead."),
    ("vllm serve Qwen/Qwen3-8B --port 8000 max_model_len=8192\n", 38, "max_model_len=8192",
     "Write the option instead: `--max-model-len 8192`."),
    ("vllm serve Qwen/Qwen3-8B enforce_eager=False\n", 26, "enforce_eager=False",
     "Drop it (`--enforce-eager` is off by default) or write `--no-enforce-eager`."),
    ("vllm serve Qwen/Qwen3-8B Qwen/Qwen3-4B\n", 26, "Qwen/Qwen3-4B", "Remove it"),
    ("vllm serve Qwen/Qwen3-8B temperature=0.7\n", 26, "temperature=0.7", "not a command-line option"),
])
def test_catches_in_scripts(line, col, value, advice):
    (finding,) = lint(line)
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == (1, col, Severity.ERROR, value)
    assert finding.message.startswith(f"`{value}` is an extra positional argument after the model `Qwen/Qwen3-8B`")
    assert f'"unrecognized arguments: {value}"' in finding.message and advice in finding.message


def test_catches_in_container_args():
    assert found(pod("[Qwen/Qwen3-8B, trust_remote_code=True]"), "pod.yaml") == \
        [(8, 27, Severity.ERROR, "trust_remote_code=True")]


def test_catches_every_stray_word():
    text = "vllm serve Qwen/Qwen3-8B a b --port 8000\n"
    assert [(line, col) for line, col, *_ in found(text)] == [(1, 26), (1, 28)]


def test_catches_in_a_shell_string():
    text = pod('["/bin/sh", "-c", "exec vllm serve Qwen/Qwen3-8B trust_remote_code=True"]').replace("args", "command")
    assert found(text, "pod.yaml") == [(8, 63, Severity.ERROR, "trust_remote_code=True")]


def test_old_release_too():
    assert found("vllm serve Qwen/Qwen2.5-7B-Instruct trust_remote_code=True\n", version="0.6.4.post1") == \
        [(1, 37, Severity.ERROR, "trust_remote_code=True")]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    "vllm serve Qwen/Qwen3-8B --trust-remote-code --port 8000\n",
    "vllm serve Qwen/Qwen3-8B --served-model-name qwen qwen3 --port 8000\n",  # nargs='+'
    "vllm serve Qwen/Qwen3-8B $EXTRA_ARGS\n",  # expands to options when it runs
    "vllm serve Qwen/Qwen3-8B ${VLLM_ARGS}\n",
    "vllm serve Qwen/Qwen3-8B > /tmp/vllm.log 2>&1 &\n",  # the shell's redirections
    "vllm serve Qwen/Qwen3-8B --port 8000 | tee /tmp/vllm.log\n",
    "vllm serve serve Qwen/Qwen3-8B\n",  # conflicting-args (VL107)
    "vllm serve Qwen/Qwen3-8B --enable-chunked-prefill false\n",  # invalid-flag-value (VL106)
    "vllm serve --port 8000 Qwen/Qwen3-8B\n",
    "vllm serve Qwen/Qwen3-8B -- \n",
    "vllm bench serve --model Qwen/Qwen3-8B extra\n",  # not the server
    "vllm serve <model> [options]\n",  # documentation placeholders
    "vllm serve Qwen/Qwen3-8B ...\n",
])
def test_does_not_catch(line):
    assert lint(line) == []


def test_api_server_positionals_are_positional_model_ignored():
    # the api_server entrypoint has no positional at all: VL715 reports its positionals
    assert lint(pod("[--model, Qwen/Qwen3-8B, trust_remote_code=True]", "vllm/vllm-openai:v0.9.2"), "pod.yaml") == []


def test_kubernetes_expansion_is_not_known():
    text = pod('["Qwen/Qwen3-8B", "$(EXTRA)"]').replace("    args:", "    env: [{name: EXTRA, valueFrom: "
                                                        "{configMapKeyRef: {name: x, key: y}}}]\n    args:")
    assert lint(text, "pod.yaml") == []


def test_stops_at_a_shell_operator_in_argv():
    # `&&` as an argv item of a container with no shell is malformed-argv (VL714); what follows is not vLLM's
    assert lint(pod('[Qwen/Qwen3-8B, "&&", echo, done]'), "pod.yaml") == []
    assert [v for *_, v in found(pod('[Qwen/Qwen3-8B, extra, "&&", echo]'), "pod.yaml")] == ["extra"]


def test_after_an_unknown_flag_only_the_flag():
    # an unknown flag may take more values than the parse guessed: `b` is not called a stray word
    assert found("vllm serve Qwen/Qwen3-8B --brand-new-flag a b\n") == [(1, 26, Severity.ERROR, "--brand-new-flag")]


def test_unknown_flag_on_an_unknown_release_says_which_release_stood_in_after_the_first_sentence():
    # `vllm/vllm-openai:latest` names no release: the newest catalogued one is assumed (issue 13: the first
    # line stays short, the assumption follows it).
    result = lint_text(pod('["--model", "Qwen/Qwen3-8B", "--rank", "0"]', image="vllm/vllm-openai:latest"),
                       "pod.yaml", LintOptions(select=["VL103"]))
    [finding] = [f for f in result.findings if f.code == "VL103"]
    from vllmlint.vllm.catalog import newest as newest_release
    newest = newest_release()
    assert finding.message.startswith(
        f"`--rank` is not an option of the vLLM server (vLLM {newest}), which refuses to start with it. The release "
        f"is unknown: it was checked against {newest}, the newest known release.")


def test_message_names_the_release_run_and_the_catalogued_release_that_stood_in_for_it():
    # 0.8.3 is not catalogued: 0.8.5.post1's parser stands in, and the message says both, not only 0.8.5.post1
    [finding] = lint(pod('["--model", "Qwen/Qwen2.5-7B-Instruct", "--enable-foo"]', "vllm/vllm-openai:v0.8.3"),
                     "pod.yaml")
    assert (finding.span.line, finding.span.col) == (8, 51)
    assert "(vLLM 0.8.3, checked against 0.8.5.post1, the closest catalogued release)" in finding.message


def test_message_of_a_catalogued_release_names_it_alone():
    [finding] = lint(pod('["--model", "Qwen/Qwen2.5-7B-Instruct", "--enable-foo"]'), "pod.yaml")
    assert "(vLLM 0.29.0)" in finding.message
