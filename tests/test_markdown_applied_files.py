"""Issue 9: a here-document written to a file (`cat > f.yaml <<EOF`, `tee f.yaml <<EOF`) that a later
`kubectl apply -f f.yaml` applies, in the same fence or a later one of the document (or in the same shell script),
is linted like `cat <<EOF | kubectl apply -f -`, with positions in the Markdown file (vllmlint/source/markdown.py)."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.source.markdown import _kubectl_files, _same_file

POD = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: vllm/vllm-openai:v0.10.1
    args: [--model, m, --num-scheduler-steps, "8"]
"""  # --num-scheduler-steps: removed in vLLM 0.10.1; line 8, column 24 of the manifest


def found(text, filename="runbook.md", codes=("VL102",)):
    result = lint_text(text, filename, LintOptions(select=list(codes)))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.code, f.severity) for f in result.findings]


def fenced(opening, after="", closing="EOF"):
    return f"# Runbook\n\n```bash\n{opening}\n{POD}{closing}\n{after}```\n"


# The manifest's line 8 is the Markdown file's line 12 (title, blank, fence, operator line).
@pytest.mark.parametrize("opening, after", [
    ("cat > vllm.yaml <<EOF", "kubectl apply -f vllm.yaml\n"),
    ("cat >vllm.yaml <<'EOF'", "kubectl apply -f ./vllm.yaml\n"),
    ("cat <<EOF > vllm.yaml", "kubectl apply -f=vllm.yaml\n"),
    ("cat >> vllm.yaml << EOF", "kubectl -n llm apply --filename vllm.yaml\n"),
    ("tee vllm.yaml <<EOF", "kubectl apply -f vllm.yaml\n"),
    ("tee -a vllm.yaml > /dev/null <<EOF", "kubectl create -f vllm.yaml\n"),
    ("cat <<EOF | tee vllm.yaml", "kubectl apply -f vllm.yaml\n"),
    ("cat > manifests/vllm.yaml <<EOF", "kubectl apply -f manifests/\n"),
    ("cat > vllm.yaml <<EOF", "kubectl apply -f .\n"),
    ("cat > vllm.yaml <<EOF", "oc apply -f ns.yaml -f vllm.yaml\n"),
])
def test_written_then_applied_in_the_same_fence(opening, after):
    assert found(fenced(opening, after)) == [(12, 24, "VL102", Severity.ERROR)]


def test_applied_in_a_later_fence_of_the_document():
    text = fenced("cat > vllm.yaml <<EOF") + "\nThen apply it:\n\n```console\n$ kubectl apply -f vllm.yaml\n```\n"
    assert found(text) == [(12, 24, "VL102", Severity.ERROR)]


@pytest.mark.parametrize("opening, after", [
    ("cat > vllm.yaml <<EOF", ""),  # written, never applied
    ("cat > vllm.yaml <<EOF", "kubectl apply -f other.yaml\n"),  # another file
    ("cat > vllm.yaml <<EOF", "kubectl delete -f vllm.yaml\n"),  # not applied
    ("cat > vllm.yaml <<EOF", "kubectl apply -k .\n"),  # a kustomization, not the file
    ("cat > sub/vllm.yaml <<EOF", "kubectl apply -f .\n"),  # not in the applied folder itself
    ("cat <<EOF", "kubectl apply -f vllm.yaml\n"),  # only printed
])
def test_not_applied_is_not_linted(opening, after):
    assert found(fenced(opening, after)) == []


def test_applied_before_it_is_written_is_not_linted():
    text = "# Runbook\n\n```bash\nkubectl apply -f vllm.yaml\n```\n\n" + fenced("cat > vllm.yaml <<EOF")
    assert found(text) == []


def test_expanded_body_gets_the_note_not_a_finding():
    text = fenced("cat > vllm.yaml <<EOF", "kubectl apply -f vllm.yaml\n").replace("name: p", "name: $NAME")
    result = lint_text(text, "runbook.md", LintOptions(select=["VL102", "VL005"]))
    assert result.findings == []
    assert [n.line for n in result.notices if "here-document `<<EOF` not linted" in n.message] == [4]


def test_shell_script_writes_then_applies():
    script = f"#!/bin/sh\nset -e\ncat > vllm.yaml <<'EOF'\n{POD}EOF\nkubectl apply -f vllm.yaml\n"
    assert found(script, "deploy.sh") == [(11, 24, "VL102", Severity.ERROR)]


def test_kubectl_files():
    assert _kubectl_files("kubectl apply -f a.yaml -fb.yaml --filename=c.yaml -f - --filename d.yaml".split()) == \
        ["a.yaml", "b.yaml", "c.yaml", "d.yaml"]
    assert _kubectl_files("kubectl get -f a.yaml".split()) == []
    assert _same_file("./a/b.yaml", "a") and not _same_file("a/b/c.yaml", "a") and not _same_file("a.yaml", "b.yaml")
