"""Runbooks: fenced yaml/bash/console blocks of Markdown files are linted in place."""
from vllmlint.engine import LintOptions, lint_text

RUNBOOK = """# Serving runbook

Start the server by hand:

```bash
python -m vllm.entrypoints.openai.api_server --model m --swap-space 4
```

Or deploy it:

```yaml
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: nginx
```

A session:

```console
$ vllm serve m \\
    --rank 0
INFO: --rank is not a flag anyone should type
```

```python
subprocess.run(["vllm", "serve", "m", "--swap-space", "4"])
```

    indented code is not a fenced block: vllm serve m --swap-space 4
"""


def test_fenced_blocks_are_linted_with_markdown_positions():
    result = lint_text(RUNBOOK, "docs/runbook.md", LintOptions(vllm_version="0.29.0"))
    found = [(f.span.line, f.span.col, f.code) for f in result.findings]
    assert found == [(6, 11, "VL101"), (6, 56, "VL102"), (18, 12, "VL201"), (25, 5, "VL103")]
    assert all(f.path == "docs/runbook.md" for f in result.findings)


def test_console_output_lines_and_other_languages_are_ignored():
    result = lint_text(RUNBOOK, "docs/runbook.md", LintOptions(select=["VL103"], vllm_version="0.29.0"))
    assert [f.span.line for f in result.findings] == [25]  # not the INFO output line


def test_broken_yaml_block_is_reported_at_its_markdown_line():
    text = "intro\n\n```yaml\na: [1, 2\n```\n"
    result = lint_text(text, "x.md")
    assert [(f.code, f.span.line) for f in result.findings] == [("VL001", 5)]


def test_markdown_without_blocks_is_fine():
    assert lint_text("# Title\n\nNothing to see.\n", "README.md").findings == []


def test_docker_run_of_the_image_alone_is_not_an_internal_error():
    # vLLM 0.29.0's docs/serving/parallelism_scaling.md shows `docker run ... vllm/vllm-openai` with no arguments.
    text = "# Run\n\n```bash\ndocker run --gpus all -p 8000:8000 vllm/vllm-openai\n```\n"
    result = lint_text(text, "run.md", LintOptions())
    assert not result.internal_error and result.findings == []
    with_args = text.replace("vllm/vllm-openai\n", "vllm/vllm-openai:v0.29.0 --model m --swap-space 4\n")
    assert ("VL102", 4) in [(f.code, f.span.line) for f in lint_text(with_args, "run.md", LintOptions()).findings]
