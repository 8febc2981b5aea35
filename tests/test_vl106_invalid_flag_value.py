"""VL106 invalid-flag-value, JSON options given text that is not JSON, per release parser (the catalog's
`x-vllm.json_parser`). Positions pinned on both sides."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm import catalog


def lint(text, version="0.29.0", filename="serve.sh", codes=("VL106",)):
    result = lint_text(text, filename, LintOptions(select=list(codes), vllm_version=version))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code in codes]


def found(text, version="0.29.0", filename="serve.sh"):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, version, filename)]


@pytest.mark.parametrize("line, version, value", [
    ("vllm serve Qwen/Qwen3-8B --speculative-config notjson\n", "0.29.0", "speculative-config:not-json"),
    ("vllm serve Qwen/Qwen3-8B --speculative-config notjson\n", "0.12.0", "speculative-config:not-json"),
    ("vllm serve Qwen/Qwen3-8B --speculative-config notjson\n", "0.9.2", "speculative-config:not-json"),
    ("vllm serve Qwen/Qwen3-8B --kv-transfer-config notjson\n", "0.29.0", "kv-transfer-config:not-json"),
    ("vllm serve Qwen/Qwen3-8B --limit-mm-per-prompt notjson\n", "0.9.2", "limit-mm-per-prompt:not-json"),
    ("vllm serve Qwen/Qwen3-8B --limit-mm-per-prompt notjson\n", "0.8.5.post1", "limit-mm-per-prompt:not-json"),
])
def test_catches(line, version, value):
    col = line.index(" notjson") + 2
    (finding,) = lint(line, version)
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == (1, col, Severity.ERROR, value)
    assert "`notjson` is not JSON, so its parser exits" in finding.message


def test_catches_the_inline_form_at_the_value():
    assert found("vllm serve m --override-generation-config=temperature:0.6\n") == \
        [(1, 14, Severity.ERROR, "override-generation-config:not-json")]


def test_catches_in_container_args():
    text = """apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.12.0
    args: [Qwen/Qwen3-8B, --speculative-config, ngram]
"""
    assert found(text, None, "pod.yaml") == [(8, 49, Severity.ERROR, "speculative-config:not-json")]


@pytest.mark.parametrize("line, version", [
    ("vllm serve m --hf-overrides notjson\n", "0.29.0"),               # union_dict_and_str: a string
    ("vllm serve m --pt-load-map-location cuda:0\n", "0.29.0"),
    ("vllm serve m --additional-config notjson\n", "0.12.0"),
    ("vllm serve m --compilation-config 3\n", "0.29.0"),                # a bare level (from_cli)
    ("vllm serve m --compilation-config notjson\n", "0.7.3"),           # CompilationConfig.from_cli: not read
    ("vllm serve m --speculative-config None\n", "0.29.0"),             # optional_type: None
    ("vllm serve m --speculative-config 4\n", "0.29.0"),                # JSON scalar: a later check's
    ("vllm serve m --limit-mm-per-prompt image=4\n", "0.29.0"),         # key=value: malformed-argv (VL714)
    ("vllm serve m --limit-mm-per-prompt image=4\n", "0.9.2"),          # json-or-kvs takes it
    ("vllm serve m --limit-mm-per-prompt image=4\n", "0.8.5.post1"),
    ("vllm serve m --speculative-config $SPEC\n", "0.29.0"),
    ("vllm serve m --speculative-config.method ngram\n", "0.29.0"),     # dotted form
    ('vllm serve m --speculative-config \'{"method": "ngram", "num_speculative_tokens": 4}\'\n', "0.29.0"),
])
def test_does_not_catch(line, version):
    assert lint(line, version) == []


def test_key_value_gets_one_finding():
    line = "vllm serve m --limit-mm-per-prompt image=4\n"
    assert [f.code for f in lint(line, "0.29.0", codes=("VL106", "VL714"))] == ["VL714"]


def test_catalog_records_the_parser():
    new = catalog.load("0.29.0")
    assert new.option("--hf-overrides").json_parser == "dict-or-str"
    assert new.option("--override-generation-config").json_parser == "json"
    assert new.option("--compilation-config").json_parser == "dataclass"
    assert catalog.load("0.9.2").option("--limit-mm-per-prompt").json_parser == "json-or-kvs"
    assert catalog.load("0.8.5.post1").option("--limit-mm-per-prompt").json_parser == "json-or-kvs"
    assert catalog.load("0.7.3").option("--compilation-config").json_parser == "from-cli"


# --- nargs='+' lists: argparse converts each word (get_kwargs: list[int] -> type=int, nargs="+") ----------
@pytest.mark.parametrize("line, version", [
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --cudagraph-capture-sizes 1 2 4 8\n", "0.11.2"),
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --cudagraph-capture-sizes 16\n", "0.11.2"),
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --cudagraph-capture-sizes=16\n", "0.11.2"),
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --cuda-graph-sizes 1 2 4\n", "0.9.2"),
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --cuda-graph-sizes 1 2 4\n", "0.10.1.1"),
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --cudagraph-capture-sizes 1 $SIZE 4\n", "0.11.2"),  # not known here
])
def test_int_lists_are_checked_per_item_silent(line, version):
    assert lint(line, version) == []


@pytest.mark.parametrize("line, version, col", [
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --cudagraph-capture-sizes 1 2 x4 8\n", "0.11.2", 67),
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --cuda-graph-sizes 1 two\n", "0.9.2", 58),
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --cudagraph-capture-sizes=x\n", "0.11.2", 37),
])
def test_int_lists_bad_item(line, version, col):
    (finding,) = lint(line, version)
    assert (finding.span.line, finding.span.col, finding.severity) == (1, col, Severity.ERROR)
    assert "is not an integer" in finding.message


def test_int_list_in_container_args():
    text = """apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.2
    args: [Qwen/Qwen2.5-7B-Instruct, --cudagraph-capture-sizes, "1", "2", "4", "8"]
"""
    assert found(text, None, "pod.yaml") == []
    assert found(text.replace('"4"', '"four"'), None, "pod.yaml") == \
        [(8, 75, Severity.ERROR, "--cudagraph-capture-sizes=1 2 four 8")]
