"""VL812 cri-logs-parsed-as-json: a fluentd tail source of /var/log/containers with a json parser (the kubelet's
files are CRI-framed on containerd and CRI-O); vllmlint.source.fluentd reads the ConfigMap's configuration."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.source.fluentd import sections

VLLM = """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: [Qwen/Qwen3-8B]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def config(path="/var/log/containers/*.log", parse="@type json", with_vllm=True):
    text = f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: fluentd-config, namespace: logging}}
data:
  fluent.conf: |
    <source>
      @type tail
      path {path}
      <parse>
        {parse}
      </parse>
    </source>
"""
    return text + (VLLM if with_vllm else "")


def found(text):
    result = lint_text(text, "logging.yaml", LintOptions(select=["VL812"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.value, f.severity) for f in result.findings]


def test_reader_keeps_sections_params_and_offsets():
    text = "# comment\n<source>\n  @type tail\n  <parse>\n    @type cri\n  </parse>\n</source>\n<match **>\n</match>\n"
    source, match = sections(text)
    assert (source.name, match.name, match.arg) == ("source", "match", "**")
    assert source.param("@type").value == "tail"
    parse = source.sections[0]
    value = parse.param("@type")
    assert text[value.value_start:value.end] == "cri"


def test_reader_is_silent_on_other_text():
    assert sections("just: yaml\n") == []


# --- catches ---------------------------------------------------------------------------------------------
def test_catches_json_on_container_logs_next_to_vllm():
    assert found(config()) == [(10, 15, "json:/var/log/containers/*.log", Severity.WARNING)]


def test_catches_the_chapters_vllm_path_without_a_workload_in_the_run():
    assert [f[2] for f in found(config("/var/log/containers/vllm-*.log", with_vllm=False))] == [
        "json:/var/log/containers/vllm-*.log"]


def test_catches_pod_log_directories_and_quoted_types():
    assert len(found(config("/var/log/pods/*/*/*.log", '@type "json"'))) == 1


def test_message_says_what_to_do_first():
    result = lint_text(config(), "logging.yaml", LintOptions(select=["VL812"]))
    assert result.findings[0].message.startswith("Parse `/var/log/containers/*.log` with `@type cri`")


# --- does not catch --------------------------------------------------------------------------------------
@pytest.mark.parametrize("parse", ["@type cri", "@type multi_format", "@type none", "@type regexp",
                                   "@type \"#{ENV['FLUENT_CONTAINER_TAIL_PARSER_TYPE'] || 'json'}\""])
def test_does_not_catch_other_parsers(parse):
    assert found(config(parse=parse)) == []


def test_does_not_catch_other_files():
    assert found(config("/var/log/app/requests.json")) == []


def test_does_not_catch_container_logs_of_a_run_without_vllm():
    assert found(config(with_vllm=False)) == []
