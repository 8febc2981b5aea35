"""VL201 image-unpinned: the first line stays short with a long registry path."""
from vllmlint.engine import LintOptions, lint_text
from vllmlint.formatters.report import split_message

LONG = "vault.habana.ai/gaudi-docker/1.18.0/ubuntu22.04/habanalabs/pytorch-installer-2.4.0:latest"


def pod(image):
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n  - name: vllm\n"
            f"    image: {image}\n    args: [--model, Qwen/Qwen3-8B]\n")


def test_catches_latest_at_the_image_with_a_short_first_line():
    [finding] = lint_text(pod(LONG), "pod.yaml", LintOptions(select=["VL201"])).findings
    assert (finding.span.line, finding.span.col) == (7, 12)
    head, rest = split_message(finding.message)
    assert head == f"Image `{LONG}` has `:latest`" and len(head) <= 120
    assert rest.startswith("It changes under you and differs between nodes: pin a release tag or a digest")


def test_a_short_image_keeps_the_why_on_the_first_line():
    [finding] = lint_text(pod("vllm/vllm-openai:latest"), "pod.yaml", LintOptions(select=["VL201"])).findings
    assert split_message(finding.message)[0] == (
        "Image `vllm/vllm-openai:latest` has `:latest`; it changes under you and differs between nodes")


def test_does_not_catch_a_release_tag():
    assert lint_text(pod("vllm/vllm-openai:v0.29.0"), "pod.yaml", LintOptions(select=["VL201"])).findings == []
