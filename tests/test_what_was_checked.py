"""Issue 9, "Saying what was not checked": the summary counts what was understood, a run that understood
nothing says so on stderr instead of "All checks passed" (exit 0, 1 with --require-workloads), `-` sniffs
shell and Markdown, and tokens after escapes of double-quoted scalars keep their positions."""
import json

import pytest
from conftest import CLEAN_DEPLOYMENT, DEPLOYMENT, run_cli

from vllmlint.engine import LintOptions, lint_text
from vllmlint.formatters import Report, render
from vllmlint.formatters.text import nothing_checked_line, summary_line
from vllmlint.source.files import sniff_suffix

TEMPLATE = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Values.name }}\n"
CHART = "apiVersion: v2\nname: vllm\nversion: 0.1.0\n"
TEMPLATE_LINE = ("vllmlint: warning: nothing checked: no vLLM invocation and no Kubernetes or Compose object in 2 files "
                 "read; 1 file skipped: unrendered template (lint the rendered output: `vllmlint --render CHART` or "
                 "`helm template CHART | vllmlint -`)")


def _chart(tmp_path):
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(CHART)
    (chart / "values.yaml").write_text("replicas: 1\n")
    (chart / "templates" / "deployment.yaml").write_text(TEMPLATE)
    return chart


# --- nothing understood: one line on stderr, never "All checks passed" ---------------------------------------

def test_empty_folder_says_nothing_was_checked(tmp_path):
    (tmp_path / "empty").mkdir()
    code, out, err = run_cli("empty", cwd=tmp_path)
    assert (code, out) == (0, "")
    assert err == ("vllmlint: warning: nothing checked: no file to lint in the given paths (folders are searched for "
                   "*.yaml, *.yml, *.json, *.sh and *.md files)\n")


def test_chart_without_render_says_what_was_not_checked(tmp_path):
    _chart(tmp_path)
    code, out, err = run_cli("chart", cwd=tmp_path)
    assert (code, out) == (0, "")
    assert err.splitlines()[-1] == TEMPLATE_LINE and "All checks passed" not in out + err


def test_require_workloads_fails_the_run(tmp_path):
    _chart(tmp_path)
    code, out, err = run_cli("--require-workloads", "chart", cwd=tmp_path)
    assert (code, out) == (1, "")
    assert err.splitlines()[-1] == TEMPLATE_LINE.replace("vllmlint: warning:", "vllmlint: error:")
    assert run_cli("--require-workloads", "--exit-zero", "chart", cwd=tmp_path)[0] == 0


def test_require_workloads_config_key(tmp_path):
    _chart(tmp_path)
    (tmp_path / ".vllmlint.yaml").write_text("require-workloads: true\n")
    assert run_cli("chart", cwd=tmp_path)[0] == 1
    (tmp_path / ".vllmlint.yaml").write_text("require-workloads: yes please\n")
    code, _, err = run_cli("chart", cwd=tmp_path)
    assert code == 2 and "require-workloads" in err


def test_require_workloads_passes_when_a_workload_is_found(tmp_path):
    (tmp_path / "d.yaml").write_text(CLEAN_DEPLOYMENT)
    code, out, err = run_cli("--require-workloads", "--select", "VL102", "d.yaml", cwd=tmp_path)
    assert code == 0 and out == "All checks passed (1 file checked, 1 vLLM workload).\n" and "nothing" not in err


def test_file_over_the_size_limit(tmp_path):
    (tmp_path / "d.yaml").write_text(DEPLOYMENT)
    code, out, err = run_cli("--max-file-size", "0.0001", "d.yaml", cwd=tmp_path)
    assert (code, out) == (0, "")
    assert err.splitlines()[-1] == ("vllmlint: warning: nothing checked: no vLLM invocation and no Kubernetes or "
                                    "Compose object in 0 files read; 1 file skipped: over --max-file-size (raise "
                                    "--max-file-size, 0 for no limit)")


def test_unrelated_yaml_passed_by_a_hook(tmp_path):
    (tmp_path / "ci.yaml").write_text("on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n")
    code, out, err = run_cli("ci.yaml", cwd=tmp_path)
    assert (code, out) == (0, "")
    assert err == ("vllmlint: warning: nothing checked: no vLLM invocation and no Kubernetes or Compose object in "
                   "1 file read\n")
    code, out, err = run_cli("-q", "ci.yaml", cwd=tmp_path)  # a warning: -q keeps it
    assert (code, out) == (0, "") and "nothing checked" in err


def test_objects_without_vllm_are_checked(tmp_path):
    (tmp_path / "svc.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  ports: [{port: 80}]\n")
    code, out, err = run_cli("svc.yaml", cwd=tmp_path)
    assert code == 0 and out == "All checks passed (1 file checked, 0 vLLM workloads).\n" and err == ""


def test_findings_without_workloads_keep_the_summary(tmp_path):
    (tmp_path / "bad.yaml").write_text("a: [1\n")
    code, out, err = run_cli("bad.yaml", cwd=tmp_path)
    assert code == 1 and out.splitlines()[-1] == "Found 1 problem (1 error) in 1 file (1 file checked, 0 vLLM workloads)."
    assert "nothing checked" not in err
    code, out, err = run_cli("--require-workloads", "bad.yaml", cwd=tmp_path)
    assert code == 1 and err.splitlines()[-1].startswith("vllmlint: error: nothing checked: ")


def test_report_files_and_machine_formats_carry_the_counts(tmp_path):
    _chart(tmp_path)
    code, out, err = run_cli("--format", "json", "chart", cwd=tmp_path)
    data = json.loads(out)
    assert code == 0 and err.splitlines()[-1] == TEMPLATE_LINE
    assert data["understood"] == {"vllm_workloads": 0, "vllm_invocations": 0, "objects": 0,
                                  "skipped": {"unrendered template": 1}}
    code, out, err = run_cli("--format", "github", "chart", cwd=tmp_path)
    assert code == 0 and out.splitlines()[-1] == "::warning title=vllmlint::" + TEMPLATE_LINE.split(": ", 2)[2]
    code, out, err = run_cli("--format", "sarif", "chart", cwd=tmp_path)
    notes = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notes[-1]["level"] == "warning" and notes[-1]["message"]["text"] == (
        "Nothing checked: " + TEMPLATE_LINE.split(": nothing checked: ", 1)[1] + ".")
    code, out, err = run_cli("-o", "report.txt", "chart", cwd=tmp_path)
    assert (tmp_path / "report.txt").read_text() == (
        "Nothing checked: no vLLM invocation and no Kubernetes or Compose object (3 files checked, 0 vLLM "
        "workloads; 1 file skipped: unrendered template).\n")


# --- the summary line counts what was understood ---------------------------------------------------------------

def test_summary_counts_workloads_and_skipped_files(tmp_path):
    (tmp_path / "a.yaml").write_text(CLEAN_DEPLOYMENT)
    (tmp_path / "b.yaml").write_text(CLEAN_DEPLOYMENT.replace("name: vllm}", "name: other}", 1))
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    code, out, err = run_cli("--select", "VL102", ".", cwd=tmp_path)
    assert code == 0 and out == "All checks passed (3 files checked, 2 vLLM workloads; 1 file skipped: unrendered template).\n"
    (tmp_path / "a.yaml").write_text(DEPLOYMENT)
    code, out, err = run_cli("--select", "VL102", ".", cwd=tmp_path)
    assert code == 1 and out.splitlines()[-2] == (
        "Found 1 problem (1 error) in 1 file (3 files checked, 2 vLLM workloads; 1 file skipped: unrendered template).")


def test_a_workload_counts_once_and_each_script_server_once():
    two = CLEAN_DEPLOYMENT.replace("      runtimeClassName", "      - name: second\n        image: vllm/vllm-openai:v0.29.0\n"
                                   "        command: [vllm, serve, Qwen/Qwen3-0.6B]\n      runtimeClassName", 1)
    result = lint_text(two, "d.yaml")
    assert (result.workloads, result.invocations, result.objects) == (1, 2, 1)
    result = lint_text("vllm serve a --port 8000 &\nvllm serve b --port 8001\n", "run.sh")
    assert (result.workloads, result.invocations, result.objects) == (2, 2, 0)
    compose = "services:\n  llm:\n    image: vllm/vllm-openai:v0.29.0\n    command: [--model, m]\n  web:\n    image: nginx\n"
    result = lint_text(compose, "compose.yaml")
    assert (result.workloads, result.invocations, result.objects) == (1, 1, 2)


def test_a_markdown_template_block_does_not_skip_the_file():
    text = "# Run\n\n```yaml\nname: {{ .Values.name }}\n```\n\n```bash\nvllm serve m\n```\n"
    result = lint_text(text, "README.md")
    assert result.skipped == {} and result.workloads == 1


@pytest.mark.parametrize("skipped, expected", [
    ({}, "All checks passed (2 files checked, 1 vLLM workload)."),
    ({"unrendered template": 1}, "All checks passed (2 files checked, 1 vLLM workload; 1 file skipped: unrendered template)."),
    ({"unrendered template": 2, "over --max-file-size": 1},
     "All checks passed (2 files checked, 1 vLLM workload; 3 files skipped: 2 unrendered template, 1 over --max-file-size)."),
])
def test_summary_line_renders_the_counts(skipped, expected):
    assert summary_line(Report(files_checked=2, workloads=1, invocations=1, objects=1, skipped=skipped)) == expected


def test_a_report_without_counts_keeps_the_old_summary():
    assert render("text", Report(files_checked=12)) == "All checks passed (12 files checked).\n"
    assert nothing_checked_line(Report(files_checked=0)) is None
    assert "understood" not in json.loads(render("json", Report(files_checked=2)))


# --- `-` sniffs its content -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, suffix", [
    ("vllm serve m --swap-space 4\n", ".sh"),
    ("#!/bin/bash\nvllm serve m\n", ".sh"),
    ("set -e\ncat <<EOF | kubectl apply -f -\napiVersion: v1\nkind: Pod\nEOF\nvllm serve m\n", ".sh"),
    ("docker run --gpus all vllm/vllm-openai:v0.9.2 \\\n  --model m\n", ".sh"),
    ("# Runbook\n\n```bash\nvllm serve m\n```\n", ".md"),
    ("# a comment\napiVersion: v1\nkind: Pod\n", ".yaml"),
    ("---\nservices:\n  a: {image: x}\n", ".yaml"),
    ('{"apiVersion": "v1", "kind": "Pod"}\n', ".yaml"),
    ("- a\n- b\n", ".yaml"),
    ('"quoted key": 1\n', ".yaml"),
    ("", ".yaml"),
    ("# only a comment\n", ".yaml"),
    ("name: {{ .Values.name }}\n", ".yaml"),
])
def test_sniff_suffix(text, suffix):
    assert sniff_suffix(text) == suffix


def test_stdin_shell_script_is_read_as_shell():
    code, out, _ = run_cli("-q", "--select", "VL102", "-", input=b"export A=1\nvllm serve m \\\n  --swap-space 4\n")
    assert code == 1 and out.startswith("-:3:3: VL102 [error]")


def test_stdin_markdown_is_read_as_markdown():
    text = b"# Serve\n\nRun:\n\n```bash\nvllm serve m --swap-space 4\n```\n"
    code, out, _ = run_cli("-q", "--select", "VL102", "-", input=text)
    assert code == 1 and out.startswith("-:6:14: VL102 [error]")


def test_stdin_filename_decides_by_its_suffix():
    code, out, err = run_cli("--stdin-filename", "x.yaml", "-", input=b"vllm serve m --swap-space 4\n")
    assert (code, out) == (0, "") and "nothing checked" in err
    code, out, _ = run_cli("-q", "--select", "VL102", "--stdin-filename", "x.sh", "-", input=b"vllm serve m --swap-space 4\n")
    assert code == 1 and out.startswith("x.sh:1:14: VL102")
    code, out, _ = run_cli("-q", "--select", "VL102", "--stdin-filename", "serve", "-", input=b"vllm serve m --swap-space 4\n")
    assert code == 1 and out.startswith("serve:1:14: VL102")  # no suffix: sniffed


def test_stdin_yaml_and_helm_output_unchanged():
    code, out, _ = run_cli("-q", "--select", "VL102", "-", input=DEPLOYMENT.encode())
    assert code == 1 and out.startswith("-:12:49: VL102")
    helm = "---\n# Source: chart/templates/d.yaml\n" + DEPLOYMENT
    code, out, _ = run_cli("-q", "--select", "VL102", "-", input=helm.encode())
    assert code == 1 and out.startswith("chart/templates/d.yaml:13:49: VL102")


def test_fix_on_stdin_sniffs_too():
    code, out, err = run_cli("--fix", "-", input=b"vllm serve m --swap-space 4 --port 1\n")
    assert out == "vllm serve m --port 1\n" and "fixed 1 problem(s)" in err


# --- positions after escapes in double-quoted scalars (yamlmodel._offset_map), end to end ---------------------

SH_C = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: ["/bin/sh", "-c"]
        args: ["ARGS"]
"""


@pytest.mark.parametrize("before", [
    "echo start\\nvllm serve m",  # \n: a new command line of the script
    "vllm serve m \\t",
    "vllm serve m --chat-template \\\"t\\\"",
    "vllm serve m --chat-template 'a\\\\b'",
    "vllm serve m --served-model-name \\x41",
    "vllm serve m --served-model-name \\u00e9",
    "vllm serve m --served-model-name \\U0001F999",
    "vllm serve m --served-model-name \\ud83e\\udd99",
])
def test_vl102_position_after_an_escape(before):
    text = SH_C.replace("ARGS", f"{before} --swap-space 4")
    (finding,) = [f for f in lint_text(text, "d.yaml").findings if f.code == "VL102"]
    line = text.splitlines()[10]
    assert (finding.span.line, finding.span.col) == (11, line.index("--swap-space") + 1)
    assert line[finding.span.col - 1:finding.span.end_col - 1] == "--swap-space"


def test_vl102_position_after_escaped_line_breaks_and_folding():
    text = SH_C.replace('["ARGS"]', '["vllm serve m \\\n          --max-model-len 8 \\\\\n\n          --swap-space 4"]')
    (finding,) = [f for f in lint_text(text, "d.yaml").findings if f.code == "VL102"]
    assert (finding.span.line, finding.span.col, finding.span.end_col) == (14, 11, 23)
    folded = SH_C.replace('["ARGS"]', '["vllm serve m\n          --swap-space 4"]')
    (finding,) = [f for f in lint_text(folded, "d.yaml").findings if f.code == "VL102"]
    assert (finding.span.line, finding.span.col, finding.span.end_col) == (12, 11, 23)


def test_options_reach_the_counts():
    result = lint_text(DEPLOYMENT, "d.yaml", LintOptions(select=["VL102"]))
    assert (result.workloads, result.invocations, result.objects, result.skipped) == (1, 1, 1, {})


def test_empty_lines_after_an_escaped_line_break_are_line_feeds():
    # Old code folded them (n breaks -> n-1 line feeds, one break -> a space), so the decoding disagreed with the
    # parser's text and the positions fell back to an approximate alignment.
    from vllmlint.source import yamlmodel
    from vllmlint.source.yamlmodel import SourceFile, parse_documents

    text = 'a: "vllm serve m \\\n    \n\n    --port 1 \\\r\n  \r\n  --x"\n'
    source = SourceFile("t.yaml", text)
    (doc,), error = parse_documents(source)
    scalar = doc.root.get("a")
    assert error is None and scalar.text == "vllm serve m \n\n--port 1 \n--x"
    decoded = yamlmodel._flow_decode(text, scalar.start + 1, scalar.end - 1, '"')
    assert decoded is not None and "".join(decoded[0]) == scalar.text
    assert source.line_col(scalar.source_index(scalar.text.index("--port"))) == (4, 5)
    assert source.line_col(scalar.source_index(scalar.text.index("--x"))) == (6, 3)


PIECES = ["a", " ", "\\n", "\\t", '\\"', "\\\\", "\\x41", "\\u00e9", "\\U0001F999", "\\\n   ", "\n  ", "\n\n  ", "\t",
          " \\\n", "\\ ", "\\\t", "--x", "\\/", "\\0", "\\N", "\\_", "\\L", "\r\n  ", "\\\r\n  ", " \n  ", " \t \n\t"]


def test_the_decoder_agrees_with_the_parser_on_double_quoted_scalars():
    import random

    from vllmlint.source import yamlmodel
    from vllmlint.source.yamlmodel import SourceFile, parse_documents

    rng = random.Random(9)
    checked = 0
    for _ in range(1500):
        body = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 10)))
        text = f'k: "{body}"\n'
        documents, error = parse_documents(SourceFile("t.yaml", text))
        if error is not None or not documents:
            continue
        scalar = documents[0].root.get("k")
        decoded = yamlmodel._flow_decode(text, scalar.start + 1, scalar.end - 1, '"')
        assert decoded is not None and "".join(decoded[0]) == scalar.text, repr(body)
        checked += 1
    assert checked > 1000


@pytest.mark.parametrize("header", ["|2", ">2", "|2-", "|1+"])
def test_block_scalar_whose_first_lines_keep_spaces_past_the_indentation(header):
    # Old code took the text's first line (a line of spaces past the indentation) for the first content line:
    # the block decoder gave up and positions came from the approximate alignment.
    from vllmlint.source import yamlmodel
    from vllmlint.source.yamlmodel import SourceFile, parse_documents

    text = f"a: {header}\n      \n\n  \tt\n    --port 1\n  --x\nb: 1\n"
    source = SourceFile("t.yaml", text)
    (doc,), error = parse_documents(source)
    scalar = doc.root.get("a")
    assert yamlmodel._block_offsets(text, scalar.start, scalar.end, scalar.style == ">", scalar.text) is not None
    indent = int(header[1])
    assert source.line_col(scalar.source_index(scalar.text.index("--port"))) == (5, 5)
    assert source.line_col(scalar.source_index(scalar.text.index("--x"))) == (6, 3)
    assert scalar.text.startswith(" " * (6 - indent))
