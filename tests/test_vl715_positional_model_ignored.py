"""VL715 positional-model-ignored: catches / does-not-catch, every finding pinned at line and column."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def pod(image, lines):
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n  - name: vllm\n"
            f"    image: {image}\n" + "".join(f"    {line}\n" for line in lines))


def findings(text, codes=("VL715",), filename="example.yaml", **options):
    result = lint_text(text, filename, LintOptions(select=list(codes), **options))
    assert not result.internal_error
    return [f for f in result.findings if f.code in codes]


def where(text, **kw):
    return [(f.span.line, f.span.col, f.severity) for f in findings(text, **kw)]


E, W = Severity.ERROR, Severity.WARNING
CATCHES = [
    ("0.9.2 rejects a positional", pod("vllm/vllm-openai:v0.9.2", ["args: [Qwen/Qwen3-8B]"]), [(8, 12, E)]),
    ("0.6.4.post1 rejects serve", pod("vllm/vllm-openai:v0.6.4.post1", ["args: [serve, m]"]), [(8, 12, E)]),
    ("0.10.0 ignores it", pod("vllm/vllm-openai:v0.10.0", ["args: [--port, '8000', Qwen/Qwen3-8B]"]),
     [(8, 28, E)]),
    ("0.11.0 ignores it beside --model", pod("vllm/vllm-openai:v0.11.0", ["args: [--model, a, b]"]), [(8, 24, W)]),
    ("0.9.2 rejects it beside --model", pod("vllm/vllm-openai:v0.9.2", ["args: [--model, a, b]"]), [(8, 24, E)]),
    ("a local path", pod("vllm/vllm-openai:v0.8.5", ["args: [/models/llama]"]), [(8, 12, E)]),
    ("resolved $(VAR)", pod("vllm/vllm-openai:v0.8.5", ["env: [{name: M, value: Qwen/Qwen3-8B}]",
                                                       'args: ["$(M)"]']), [(9, 12, E)]),
]
SILENT = [
    ("--model", pod("vllm/vllm-openai:v0.9.2", ["args: [--model, Qwen/Qwen3-8B]"])),
    ("0.11.1 runs vllm serve", pod("vllm/vllm-openai:v0.11.1", ["args: [Qwen/Qwen3-8B]"])),
    ("latest runs vllm serve", pod("vllm/vllm-openai:latest", ["args: [Qwen/Qwen3-8B]"])),
    ("a written command", pod("vllm/vllm-openai:v0.8.5", ["command: [vllm, serve]", "args: [m]"])),
    ("an image not in the table", pod("registry.example.com/vllm-openai:v0.8.5", ["args: [m]"])),
    ("unresolved $(VAR) may be flags", pod("vllm/vllm-openai:v0.8.5", ['args: ["$(ARGS)"]'])),
    ("an operator is VL714's", pod("vllm/vllm-openai:v0.8.5", ['args: [--model, m, "&&", x]'])),
    ("a joined item is VL714's", pod("vllm/vllm-openai:v0.8.5", ['args: ["--model m"]'])),
    ("a value of a nargs+ option", pod("vllm/vllm-openai:v0.9.2",
                                       ["args: [--model, m, --served-model-name, a, b]"])),
]


@pytest.mark.parametrize("title,text,expected", CATCHES, ids=[c[0] for c in CATCHES])
def test_catches(title, text, expected):
    assert where(text) == expected


@pytest.mark.parametrize("title,text", SILENT, ids=[c[0] for c in SILENT])
def test_does_not_catch(title, text):
    assert where(text) == []


def test_message_says_to_pass_model_and_names_the_default():
    [finding] = findings(pod("vllm/vllm-openai:v0.10.2", ["args: [Qwen/Qwen3-8B]"]))
    assert "`--model Qwen/Qwen3-8B`" in finding.message and "Qwen/Qwen3-0.6B" in finding.message
    assert "`vllm serve`" in finding.message


def test_one_finding_per_token_with_vl107_and_vl106():
    # serve-serve on a vllm-serve image is VL107's; on an api_server image VL715's: never both.
    for image, owner in (("vllm/vllm-openai:v0.29.0", "VL107"), ("vllm/vllm-openai:v0.9.2", "VL715")):
        text = pod(image, ["args: [serve, Qwen/Qwen3-8B]"])
        assert [f.code for f in findings(text, ("VL107", "VL715", "VL714", "VL103"))] == [owner]
    text = pod("vllm/vllm-openai:v0.9.2", ["args: [--model, m, --trust-remote-code, 'true']"])
    assert [f.code for f in findings(text, ("VL106", "VL715"))] == ["VL106"]


def test_upgrade_to_an_old_release_reads_that_entrypoint():
    text = pod("vllm/vllm-openai:v0.29.0", ["args: [Qwen/Qwen3-8B]"])
    assert where(text) == []
    assert [(f.span.line, f.span.col) for f in findings(text, upgrade_to="0.9.2")] == [(8, 12)]


def test_docker_run_in_a_script_reads_the_same_table():
    script = "docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.9.2 Qwen/Qwen3-8B --port 8000\n"
    assert [(f.span.line, f.span.col) for f in findings(script, filename="run.sh")] == [(1, 60)]
    fine = "docker run --gpus all vllm/vllm-openai:v0.9.2 --model Qwen/Qwen3-8B\n"
    assert findings(fine, filename="run.sh") == []


# Review: `serve` first with `--model` raises ValueError (0.10.0 vllm/utils/__init__.py l.1703-1707), and
# a second positional after the one `model_tag` (nargs="?") is "unrecognized arguments".
CRASHES = [
    ("0.10.1 serve + --model raises", pod("vllm/vllm-openai:v0.10.1", ["args: [serve, --model, Qwen/Qwen2.5-7B]"]),
     [(8, 12, E)], "ValueError: With `vllm serve`"),
    ("0.11.0 serve + model is unrecognized", pod("vllm/vllm-openai:v0.11.0", ["args: [serve, Qwen/Qwen2.5-7B]"]),
     [(8, 12, E)], "unrecognized arguments: Qwen/Qwen2.5-7B"),
    ("0.10.0 two positionals", pod("vllm/vllm-openai:v0.10.0", ["args: [--model, a, b, c]"]),
     [(8, 24, E)], "unrecognized arguments: c"),
]


@pytest.mark.parametrize("title,text,expected,said", CRASHES, ids=[c[0] for c in CRASHES])
def test_crashes_are_errors_that_say_why(title, text, expected, said):
    assert where(text) == expected
    [finding] = findings(text)
    assert said in finding.message and "default model" not in finding.message


def test_serve_with_inline_model_is_only_ignored():
    # `--model=X` is not the `--model` item the check looks for: `serve` fills model_tag and does nothing.
    text = pod("vllm/vllm-openai:v0.10.1", ["args: [serve, --model=Qwen/Qwen2.5-7B]"])
    assert where(text) == [(8, 12, W)]
