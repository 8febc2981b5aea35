"""A fix is safe only if it keeps the behaviour of the release that runs. When nothing names that release (no
release tag, no `vllmlint.io/vllm-version` annotation, no `--vllm-version`) for a fork's or a private image, the
run guesses the newest release, and a fix judged against the guess is unsafe: the build may still accept the flag
the fix deletes. vLLM's own `latest` image (the newest at pull time) keeps its safe fixes."""
from vllmlint.engine import LintOptions, lint_text
from vllmlint.fix.edits import SAFE, UNSAFE


def _pod(image: str, annotations: str = "") -> str:
    return ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: vllm\n" + annotations +
            "spec:\n  containers:\n  - name: vllm\n    image: " + image + "\n"
            "    args: [--model, Qwen/Qwen3-8B, --swap-space, '4']\n")


def _vl102(text: str, line: int = 9, **options):
    result = lint_text(text, "pod.yaml", LintOptions(select=["VL102"], **options))
    [finding] = [f for f in result.findings if f.code == "VL102"]
    assert (finding.span.line, finding.span.col) == (line, 36)
    return finding


def test_a_private_image_with_a_guessed_release_gets_an_unsafe_fix():
    finding = _vl102(_pod("quay.io/example/vllm-openai-ubi9:1.2"))
    assert finding.fix is not None and finding.fix.safety == UNSAFE


def test_a_fork_with_an_unmapped_tag_gets_an_unsafe_fix():
    finding = _vl102(_pod("opea/vllm-gaudi:1.22.0"))
    assert finding.fix is not None and finding.fix.safety == UNSAFE


def test_vllms_own_latest_image_keeps_its_safe_fix():
    finding = _vl102(_pod("vllm/vllm-openai:latest"))
    assert finding.fix is not None and finding.fix.safety == SAFE


def test_a_release_named_by_the_annotation_or_the_command_line_keeps_the_safe_fix():
    annotated = _pod("quay.io/example/vllm-openai-ubi9:1.2",
                     "  annotations: {vllmlint.io/vllm-version: \"0.29.0\"}\n")
    assert _vl102(annotated, line=10).fix.safety == SAFE
    assert _vl102(_pod("quay.io/example/vllm-openai-ubi9:1.2"), vllm_version="0.29.0").fix.safety == SAFE
