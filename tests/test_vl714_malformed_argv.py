"""VL714 malformed-argv: catches / does-not-catch, every finding pinned at line and column."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.fix.edits import apply_edits


def findings(text, code="VL714", filename="example.yaml", version=None):
    result = lint_text(text, filename, LintOptions(select=[code], vllm_version=version))
    assert not result.internal_error
    return [f for f in result.findings if f.code == code]


def pod(image, lines):
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n  - name: vllm\n"
            f"    image: {image}\n" + "".join(f"    {line}\n" for line in lines))


def where(text, code="VL714", **kw):
    return [(f.span.line, f.span.col) for f in findings(text, code, **kw)]


CATCHES = [
    ("joined long flag", pod("vllm/vllm-openai:v0.29.0", ['args: [Qwen/Qwen3-8B, "--quantization awq"]']), [(8, 27)]),
    ("joined short flag", pod("vllm/vllm-openai:v0.29.0", ['args: [Qwen/Qwen3-8B, "-tp 2"]']), [(8, 27)]),
    ("joined with $(VAR) value", pod("vllm/vllm-openai:v0.29.0", ['args: ["--model $(M)"]']), [(8, 12)]),
    ("block scalar with lines of flags",
     pod("vllm/vllm-openai:v0.29.0", ["command: [vllm, serve]", "args:", "- |", "  --model x", "  --port 8000"]),
     [(10, 7)]),
    ("whole command line", pod("vllm/vllm-openai:v0.29.0", ['command: ["vllm serve Qwen/Qwen3-8B"]']), [(8, 15)]),
    ("whole api_server line",
     pod("vllm/vllm-openai:v0.8.5", ['command: ["python3 -m vllm.entrypoints.openai.api_server --model m"]']),
     [(8, 15)]),
    ("operator, first only",
     pod("vllm/vllm-openai:v0.29.0", ['command: [vllm, serve, m, ">", /tmp/log, "2>&1"]']), [(8, 31)]),
    ("operator after image entrypoint", pod("vllm/vllm-openai:v0.29.0", ['args: [m, "&&", echo, done]']), [(8, 15)]),
]

SILENT = [
    ("split items", pod("vllm/vllm-openai:v0.29.0", ["args: [Qwen/Qwen3-8B, --quantization, awq]"])),
    ("inline value", pod("vllm/vllm-openai:v0.29.0", ["args: [Qwen/Qwen3-8B, --max-model-len=4096]"])),
    ("shell script operators", pod("vllm/vllm-openai:v0.29.0", ['command: [sh, -c, "vllm serve m > /l && x"]'])),
    ("expansion brings the blank", pod("vllm/vllm-openai:v0.29.0", [
        "env: [{name: A, value: --port 8000}]", 'args: [m, "$(A)"]'])),
    ("value with blanks after its flag", pod("vllm/vllm-openai:v0.29.0", [
        'args: [m, --chat-template, "{{ x | trim }} > y"]'])),
    ("operator as a value", pod("vllm/vllm-openai:v0.29.0", ['args: [m, --served-model-name, "|"]'])),
    ("not vLLM: find's ;", pod("busybox:1.36", ['command: [find, /data, -exec, rm, "{}", ";"]'])),
    ("not vLLM: a command with blanks", pod("busybox:1.36", ['command: ["/bin/sh -c true"]'])),
    ("$(VAR) command item", pod("vllm/vllm-openai:v0.29.0", ["env: [{name: C, value: vllm serve m}]",
                                                          'command: ["$(C)"]'])),
]


@pytest.mark.parametrize("title,text,expected", CATCHES, ids=[c[0] for c in CATCHES])
def test_catches(title, text, expected):
    assert where(text) == expected


@pytest.mark.parametrize("title,text", SILENT, ids=[c[0] for c in SILENT])
def test_does_not_catch(title, text):
    assert where(text) == []


def test_quoted_word_in_a_script():
    assert where('vllm serve m "--port 8000"\n', filename="serve.sh", version="0.29.0") == [(1, 14)]


def test_vl103_no_longer_reports_the_joined_item_but_still_the_typo():
    text = pod("vllm/vllm-openai:v0.29.0", ['args: [m, "--quantization awq", --quantiztion, awq]'])
    assert where(text, "VL103") == [(8, 37)]
    assert where(text) == [(8, 15)]


def test_joined_item_does_not_swallow_the_next_word():
    # argparse reads the item as a positional: the model after it stays a positional (no value taken).
    text = pod("vllm/vllm-openai:v0.29.0", ['args: ["--max-model-len 4096", Qwen/Qwen3-8B, --port, "8000"]'])
    from vllmlint.engine import Linter

    linter = Linter()
    linter.add_text(text, "example.yaml", ".yaml")
    [invocation] = linter.build().invocations
    assert [t.text for t in invocation.positionals] == ["Qwen/Qwen3-8B"]
    assert invocation.options[0].status.kind == "joined" and invocation.options[0].spec is None
    assert where(text) == [(8, 12)]


def _fixed(text, **kw):
    [finding] = findings(text, **kw)
    assert finding.fix is not None
    return finding.fix, apply_edits(text, finding.fix.edits)


def test_fix_splits_a_flow_item():
    text = pod("vllm/vllm-openai:v0.29.0", ['args: [Qwen/Qwen3-8B, "--quantization awq"]'])
    fix, after = _fixed(text)
    assert fix.safety == "safe" and 'args: [Qwen/Qwen3-8B, "--quantization", "awq"]' in after
    assert findings(after) == []


def test_fix_splits_a_block_item():
    text = pod("vllm/vllm-openai:v0.29.0", ["args:", "- Qwen/Qwen3-8B", "- --max-model-len 4096"])
    fix, after = _fixed(text)
    assert "    - --max-model-len\n    - 4096\n" in after or "    - --max-model-len\n    - '4096'\n" in after
    assert findings(after) == []


def test_fix_is_unsafe_where_the_api_server_ignores_the_item():
    text = pod("vllm/vllm-openai:v0.10.2", ['args: [--model, m, "--quantization awq"]'])
    fix, _ = _fixed(text)
    assert fix.safety == "unsafe"


@pytest.mark.parametrize("item", ['"--chat-template {{ x }}"', '"--model $(M)"', "\"--x 'a b'\""])
def test_no_fix_for_values_that_are_not_plain_words(item):
    text = pod("vllm/vllm-openai:v0.29.0", [f"args: [m, {item}]"])
    [finding] = findings(text)
    assert finding.fix is None


@pytest.mark.parametrize("name,text,expected", [
    # An AWQ repository: on the unquantized Qwen/Qwen3-8B the split `--quantization awq` is VL716's error
    # (vLLM finds no AWQ config), a new finding the fix engine refuses to introduce.
    ("deploy.yaml", pod("vllm/vllm-openai:v0.29.0", ['args: [Qwen/Qwen3-8B-AWQ, "--quantization awq"]']),
     'args: [Qwen/Qwen3-8B-AWQ, "--quantization", "awq"]'),
    ("serve.sh", 'vllm serve Qwen/Qwen3-8B "--max-model-len 4096"\n', "vllm serve Qwen/Qwen3-8B --max-model-len 4096\n"),
])
def test_the_fix_engine_applies_and_verifies_the_split(tmp_path, monkeypatch, name, text, expected):
    from vllmlint.fix.apply import run_fixes

    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    outcome = run_fixes([name], LintOptions(vllm_version="0.29.0"))
    after = (tmp_path / name).read_text()
    assert expected in after
    assert not [f for f in outcome.result.findings if f.code in ("VL714", "VL103")]


def test_a_stray_blank_after_a_switch():
    text = pod("vllm/vllm-openai:v0.29.0", ['args: [m, "--enforce-eager "]'])
    [finding] = findings(text)
    assert (finding.span.line, finding.span.col) == (8, 15) and "without the blank" in finding.message
    fix, after = _fixed(text)
    assert 'args: [m, "--enforce-eager"]' in after and findings(after) == []


@pytest.mark.parametrize("image,args,expected", [
    ("vllm/vllm-openai:v0.29.0", "[m, --limit-mm-per-prompt, image=4]", [(8, 38)]),
    ("vllm/vllm-openai:v0.10.2", "[--model, m, --limit-mm-per-prompt=image=2]", [(8, 24)]),
    ("vllm/vllm-openai:v0.9.2", "[--model, m, --limit-mm-per-prompt, image=4]", []),  # still converted there
    ("vllm/vllm-openai:v0.29.0", "[m, --limit-mm-per-prompt, '{\"image\": 4}']", []),
    ("vllm/vllm-openai:v0.29.0", "[m, --limit-mm-per-prompt.image, '4']", []),  # vLLM's dotted form
    ("vllm/vllm-openai:v0.29.0", "[m, --speculative-config, method=ngram]", [(8, 37)]),  # catalog: dataclass
    ("vllm/vllm-openai:v0.11.1", "[m, --speculative-config, method=ngram]", [(8, 37)]),
    ("vllm/vllm-openai:v0.10.1", "[--model, m, --speculative-config, 'method=ngram,num_speculative_tokens=4']",
     [(8, 46)]),
    ("vllm/vllm-openai:v0.11.1", "[m, --hf-overrides, rope_scaling=2]", []),  # dict-or-str keeps the text
    ("vllm/vllm-openai:v0.9.2", "[--model, m, --override-generation-config, temperature=0.5]", []),  # json-or-kvs
])
def test_key_value_for_a_json_only_flag(image, args, expected):
    assert where(pod(image, [f"args: {args}"])) == expected


def test_key_value_message_gives_the_json():
    [finding] = findings(pod("vllm/vllm-openai:v0.29.0", ["args: [m, --limit-mm-per-prompt, 'image=4,video=1']"]))
    assert '`{"image": 4, "video": 1}`' in finding.message and finding.fix is None


def test_lines_of_flags_in_one_block_item_say_unrecognized():
    text = pod("vllm/vllm-openai:v0.29.0", ["command: [vllm, serve, m]", "args:", "- |", "  --max-model-len", "  4096"])
    [finding] = findings(text)
    assert "line break" in finding.message and "unrecognized arguments" in finding.message


# Review: on the api_server images the joined item's fate follows data/image-entrypoints.yaml positional_arg.
@pytest.mark.parametrize("image, args, col, said", [
    ("vllm/vllm-openai:v0.10.1", '["--model Qwen/Qwen2.5-7B"]', 12, "serves its default model (Qwen/Qwen3-0.6B)"),
    ("vllm/vllm-openai:v0.11.0", '[--model, m, "--quantization awq"]', 24, "serves the model of `--model`"),
    ("vllm/vllm-openai:v0.10.0", '[--model, m, x, "--quantization awq"]', 27, "`x` already fills"),
    ("vllm/vllm-openai:v0.9.2", '["--model Qwen/Qwen2.5-7B"]', 12, "has no positional argument"),
])
def test_joined_item_on_api_server_images(image, args, col, said):
    text = pod(image, [f"args: {args}"])
    [finding] = [f for f in lint_text(text, "example.yaml", LintOptions(select=["VL714"])).findings]
    assert (finding.span.line, finding.span.col, finding.severity) == (8, col, Severity.ERROR)
    assert said in finding.message and "or takes the item as the model" not in finding.message


def test_key_value_on_a_json_only_option_gets_one_finding_in_all():
    # VL106 leaves exactly VL714's key=value text alone, and VL714 reads the catalog's json_parser.
    text = pod("vllm/vllm-openai:v0.11.1", ["args: [m, --speculative-config, method=ngram, --port, '8000']"])
    result = lint_text(text, "example.yaml", LintOptions(select=["VL714", "VL106", "VL103"]))
    assert [(f.code, f.span.line, f.span.col, f.severity) for f in result.findings] == \
        [("VL714", 8, 37, Severity.ERROR)]
    assert '`{"method": "ngram"}`' in result.findings[0].message


def test_other_non_json_text_stays_vl106s():
    text = pod("vllm/vllm-openai:v0.11.1", ["args: [m, --speculative-config, 'a=b=c']"])
    result = lint_text(text, "example.yaml", LintOptions(select=["VL714", "VL106"]))
    assert [(f.code, f.span.line, f.span.col) for f in result.findings] == [("VL106", 8, 37)]


def test_operator_fix_never_puts_exec_before_an_operator():
    # `sh -c "exec A && B"`: exec replaces the shell with A, so B never runs (POSIX 2.14 exec).
    text = pod("vllm/vllm-openai:v0.29.0", ['command: [vllm, serve, m, "&&", echo, done]'])
    [finding] = findings(text)
    assert (finding.span.line, finding.span.col, finding.severity) == (8, 31, Severity.ERROR)
    assert "exec vllm serve ... &&" not in finding.message and "only before the last command" in finding.message
