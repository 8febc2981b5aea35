"""Markdown manifests: here-documents fed to `kubectl apply -f -` in shell fences, and unlabelled fences that hold
a Kubernetes object, linted with positions in the Markdown file (vllmlint/source/markdown.py)."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, lint_paths, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent

POD = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: vllm/vllm-openai:v0.10.1
    args: [--model, m, --num-scheduler-steps, "8"]
"""  # --num-scheduler-steps: removed in vLLM 0.10.1; on line 8, column 24 of the manifest


def lint(text, codes=("VL102",)):
    result = lint_text(text, "runbook.md", LintOptions(select=list(codes)))
    assert not result.internal_error, [n.message for n in result.notices]
    return result


def found(text, codes=("VL102",)):
    return [(f.span.line, f.span.col, f.code, f.severity) for f in lint(text, codes).findings]


def fenced(opening, body=POD, language="bash", closing="EOF", after=""):
    return f"# Runbook\n\n```{language}\n{opening}\n{body}{closing}\n{after}```\n"


# --- catches: the manifest's line 8 is the Markdown file's line 12 (title, blank, fence, operator line) ------------
@pytest.mark.parametrize("opening", [
    "cat <<EOF | kubectl apply -f -",
    "cat <<EOF |kubectl apply -f -",  # vLLM's docs/deployment/k8s.md spells it so
    "cat <<'EOF' | kubectl apply -f -",
    'cat << "EOF" | kubectl apply -f -',
    "cat <<EOF | kubectl apply -n llm -f -",
    "cat <<EOF | kubectl -n llm apply -f -",
    "cat <<EOF | kubectl apply --filename=-",
    "cat <<EOF | kubectl create -f -",
    "cat <<EOF | oc apply -f -",
    "kubectl apply -f - <<EOF",
    "kubectl apply -f - <<'EOF'",
    "kubectl apply -f- <<EOF",
])
def test_catches_a_manifest_applied_from_a_here_document(opening):
    assert found(fenced(opening)) == [(12, 24, "VL102", Severity.ERROR)]


@pytest.mark.parametrize("language", ["bash", "sh", "shell", "zsh"])
def test_catches_in_every_shell_fence(language):
    assert found(fenced("cat <<EOF | kubectl apply -f -", language=language)) == [(12, 24, "VL102", Severity.ERROR)]


def test_catches_commands_after_the_here_document_too():
    text = fenced("cat <<EOF | kubectl apply -f -", after="vllm serve m --num-scheduler-steps 8 --vllm-version-x\n")
    lines = [(line, col) for line, col, code, _ in found(text, ("VL102", "VL103"))]
    assert lines[0] == (12, 24) and all(line == 14 for line, _ in lines[1:]) and len(lines) == 3


def test_catches_in_an_indented_fence_of_an_admonition_with_documents_split_at_the_indented_marker():
    # vLLM's docs/deployment/k8s.md (v0.10.0): `??? console "Config"` indents the fence and its `---` by 4.
    body = "".join("    " + line + "\n" for line in ("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n"
                                                     + POD).splitlines())
    text = f"# Runbook\n\n??? console \"Config\"\n\n    ```bash\n    cat <<EOF |kubectl apply -f -\n{body}    EOF\n    ```\n"
    assert found(text, ("VL102", "VL001")) == [(18, 28, "VL102", Severity.ERROR)]


def test_catches_two_documents_and_a_second_here_document():
    text = fenced("cat <<EOF | kubectl apply -f -", body="apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n---\n"
                  + POD, after="kubectl apply -f - <<'YAML'\n" + POD + "YAML\n")
    assert found(text) == [(16, 24, "VL102", Severity.ERROR), (26, 24, "VL102", Severity.ERROR)]


def test_catches_an_unlabelled_fence_holding_a_kubernetes_object():
    text = "# Runbook\n\n```\n" + POD + "```\n"
    assert found(text) == [(11, 24, "VL102", Severity.ERROR)]
    indented = "1. Apply:\n\n   ```\n" + "".join("   " + line + "\n" for line in POD.splitlines()) + "   ```\n"
    assert found(indented) == [(11, 27, "VL102", Severity.ERROR)]


def test_an_unlabelled_manifest_finding_can_be_suppressed_like_a_yaml_one():
    text = "# Runbook\n\n```\n" + POD.replace("    args:", "    # vllmlint: disable-next-line=VL102 -- shown broken\n    args:") + "```\n"
    result = lint(text, ("VL102", "VL003"))
    assert result.findings == [] and [f.code for f in result.suppressed] == ["VL102"]


def test_a_here_document_finding_can_be_suppressed():
    text = fenced("cat <<EOF | kubectl apply -f -", body=POD.replace(
        "    args:", "    # vllmlint: disable-next-line=VL102 -- shown broken\n    args:"))
    result = lint(text, ("VL102", "VL003"))
    assert result.findings == [] and [f.code for f in result.suppressed] == ["VL102"]


def test_fix_removes_the_flag_inside_the_markdown_file(tmp_path):
    from vllmlint.fix.apply import run_fixes

    text = fenced("kubectl apply -f - <<EOF")
    path = tmp_path / "runbook.md"
    path.write_text(text)
    run_fixes([str(path)], LintOptions(select=["VL102"]))
    assert path.read_text() == text.replace(', --num-scheduler-steps, "8"', "")


# --- does not catch ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("opening", [
    "cat <<EOF",  # only printed
    "cat <<EOF > pod.yaml",  # written to a file (kubectl apply -f pod.yaml reads it later: not this run)
    "cat <<EOF | kubectl delete -f -",  # not deployed
    "cat <<EOF | kubectl diff -f -",
    "cat <<EOF | kubectl apply -f pod.yaml",  # kubectl reads the file, not the pipe
    "cat <<EOF | grep vllm",
    "cat <<-EOF | kubectl apply -f -",  # `<<-`: leading tabs stripped, not read
    "tee pod.yaml <<EOF",
])
def test_does_not_catch_a_here_document_kubectl_does_not_apply(opening):
    assert found(fenced(opening)) == []


@pytest.mark.parametrize("expansion", ["$(HF_TOKEN)", "$NAME", "${NAME}", "`date`"])
def test_an_unquoted_here_document_the_shell_expands_is_skipped_with_one_note(expansion):
    # vLLM's docs/deployment/k8s.md writes `token: $(HF_TOKEN)` there: the shell runs `HF_TOKEN` before kubectl.
    body = POD.replace("metadata: {name: p}", f"metadata: {{name: p, labels: {{x: \"{expansion}\"}}}}")
    result = lint(fenced("cat <<EOF | kubectl apply -f -", body=body), ("VL102", "VL005"))
    assert result.findings == []
    notes = [(n.code, n.line, n.level) for n in result.notices if "here-document" in n.message]
    assert notes == [("VL005", 4, "note")]
    quoted = lint(fenced("cat <<'EOF' | kubectl apply -f -", body=body), ("VL102", "VL005"))  # quoted: the body is literal
    assert [(f.span.line, f.code) for f in quoted.findings] == [(12, "VL102")]
    assert not [n for n in quoted.notices if "here-document" in n.message]


def test_does_not_read_the_here_document_yaml_as_shell_commands():
    # A block scalar holding `vllm serve ...` inside the manifest is one invocation (the container's), not also a
    # script's: the shell fence does not see the body.
    body = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
            "    image: vllm/vllm-openai:v0.10.1\n    command: [sh, -c]\n    args:\n    - |\n"
            "      vllm serve m --num-scheduler-steps 8\n")
    result = lint(fenced("kubectl apply -f - <<'EOF'", body=body))
    assert [(f.span.line, f.span.col) for f in result.findings] == [(15, 20)]


@pytest.mark.parametrize("content", [
    "kind: Pod\nspec: ...\n",  # no apiVersion
    "apiVersion: v1\n",  # no kind
    "The manifest has an apiVersion: v1 and a kind: Pod.\n",  # prose
    "spec:\n  apiVersion: v1\n  kind: Pod\n  x: [--num-scheduler-steps]\n",  # nested, not at the block's indentation
    "apiVersion: v1\nkind: Pod\nspec: [unclosed\n",  # does not parse: a snippet, silently left alone (no VL001)
])
def test_does_not_read_an_unlabelled_fence_that_is_no_manifest(content):
    result = lint("# Runbook\n\n```\n" + content + "```\n", ("VL102", "VL001"))
    assert result.findings == []


def test_other_languages_stay_unread():
    assert found("# Runbook\n\n```text\n" + POD + "```\n") == []
    assert found("# Runbook\n\n```python\n" + POD + "```\n") == []


# --- the fixture ---------------------------------------------------------------------------------------------------
def test_fixture_runbook_kubectl_heredoc():
    result, _ = lint_paths([str(ROOT / "fixtures/own/runbook-kubectl-heredoc.md")], LintOptions(select=["VL102", "VL001", "VL005"]))
    assert [(f.span.line, f.span.col, f.code) for f in result.findings] == [
        (48, 60, "VL102"),  # the admonition's `cat <<EOF |kubectl apply -f -` Deployment, in its `sh -c` string
        (89, 74, "VL102"),  # `kubectl apply -f - <<'YAML'`
        (107, 53, "VL102"),  # the unlabelled fence
    ]
    notes = [(n.line, n.code) for n in result.notices if "here-document" in n.message]
    assert notes == [(12, "VL005")]  # the Secret's `$(HF_TOKEN)`


# --- the same in shell scripts ---------------------------------------------------------------------------------------
def test_a_shell_script_applying_a_here_document_is_linted_at_its_own_lines(tmp_path):
    script = "#!/bin/bash\nset -euo pipefail\ncat <<EOF | kubectl apply -f -\n" + POD + "EOF\nkubectl rollout status pod/p\n"
    assert found_in(script, "deploy.sh") == [(11, 24, "VL102", Severity.ERROR)]
    expanded = script.replace("{name: p}", "{name: $NAME}")
    result = lint_text(expanded, "deploy.sh", LintOptions(select=["VL102", "VL005"]))
    assert result.findings == [] and [n.line for n in result.notices if "here-document" in n.message] == [3]
    suppressed = script.replace("    args:", "    # vllmlint: disable-next-line=VL102 -- shown broken\n    args:")
    result = lint_text(suppressed, "deploy.sh", LintOptions(select=["VL102", "VL003"]))
    assert result.findings == [] and [f.code for f in result.suppressed] == ["VL102"]
    from vllmlint.fix.apply import run_fixes

    path = tmp_path / "deploy.sh"
    path.write_text(script)
    run_fixes([str(path)], LintOptions(select=["VL102"]))
    assert path.read_text() == script.replace(', --num-scheduler-steps, "8"', "")


def found_in(text, filename):
    result = lint_text(text, filename, LintOptions(select=["VL102"]))
    assert not result.internal_error
    return [(f.span.line, f.span.col, f.code, f.severity) for f in result.findings]
