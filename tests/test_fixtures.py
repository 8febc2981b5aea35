"""The chapter's examples: every mistake of the April edition is flagged exactly where it is, and the
audited October edition is clean. Exact findings, so a rule that drifts (or starts crying wolf) fails here."""
from pathlib import Path

import pytest

from conftest import FIXTURES
from vllmlint.engine import LintOptions, lint_paths
from vllmlint.finding import Severity

CORE = ["VL001", "VL101", "VL102", "VL103", "VL201", "VL301", "VL401", "VL501", "VL806"]

EXPECTED = {
    # the April 2026 edition, linted as one folder (the HPA, the metrics Service and the Deployment meet)
    ("fixtures/original/api-gateway.yaml", 17, 16, "VL201", "warning"),  # nginx:latest
    ("fixtures/original/api-gateway.yaml", 38, 20, "VL501", "warning"),  # nginx gateway, no auth, to vLLM
    ("fixtures/original/hpa.yaml", 15, 13, "VL401", "warning"),  # CPU HPA, no CPU requests
    ("fixtures/original/metrics-service-monitor.yaml", 12, 17, "VL301", "error"),  # Service port 8001
    ("fixtures/original/metrics-service-monitor.yaml", 22, 5, "VL806", "info"),  # in `monitoring`, Service in none
    ("fixtures/original/metrics-service-monitor.yaml", 25, 11, "VL301", "error"),  # ServiceMonitor port
    ("fixtures/original/model-download-job.yaml", 10, 16, "VL201", "warning"),  # transformers:latest
    ("fixtures/original/multi-node-statefulset.yaml", 19, 15, "VL101", "warning"),  # in the ConfigMap script
    ("fixtures/original/multi-node-statefulset.yaml", 28, 7, "VL103", "error"),  # --rank=$RANK
    ("fixtures/original/multi-node-statefulset.yaml", 57, 16, "VL201", "warning"),
    ("fixtures/original/multi-node-statefulset.yaml", 119, 9, "VL501", "warning"),  # LB on pod 0
    ("fixtures/original/single-node-deployment.yaml", 17, 16, "VL201", "warning"),
    ("fixtures/original/single-node-deployment.yaml", 21, 11, "VL101", "warning"),
    ("fixtures/original/single-node-deployment.yaml", 55, 9, "VL501", "warning"),
    ("fixtures/original/speculative-decoding.sh", 1, 11, "VL101", "warning"),
    ("fixtures/original/speculative-decoding.sh", 3, 3, "VL102", "error"),  # --speculative-model
    ("fixtures/original/speculative-decoding.sh", 4, 3, "VL102", "error"),  # --num-speculative-tokens
    # own cases
    ("fixtures/own/bash-c-vllm.yaml", 23, 75, "VL102", "error"),  # --swap-space inside bash -c
    ("fixtures/own/broken.yaml", 18, 18, "VL201", "warning"),  # documents before the error still linted
    ("fixtures/own/broken.yaml", 41, 1, "VL001", "error"),
    ("fixtures/own/compose.yaml", 4, 12, "VL201", "warning"),
    ("fixtures/own/compose.yaml", 5, 38, "VL102", "error"),
    ("fixtures/own/compose.yaml", 7, 9, "VL501", "info"),  # API port on every interface, no --api-key
    ("fixtures/own/compose-opea-vllm.yaml", 17, 87, "VL101", "info"),  # in the string entrypoint's bash -c
    ("fixtures/own/compose-opea-vllm.yaml", 22, 9, "VL501", "info"),
    ("fixtures/own/compose-opea-vllm.yaml", 29, 44, "VL102", "error"),  # --swap-space in the string command
    ("fixtures/own/compose-opea-vllm.yaml", 29, 150, "VL102", "error"),  # --num-scheduler-steps
    ("fixtures/own/compose-project/compose.yaml", 16, 81, "VL102", "error"),  # 0.18.0 from the folder's .env


    # vendor images (issue 9): a fork's own entrypoint, args of an unlisted *vllm* image, a fork tag's release
    ("fixtures/own/opea-vllm-gaudi.yaml", 21, 18, "VL201", "warning"),  # opea/vllm-gaudi:latest
    ("fixtures/own/opea-vllm-gaudi.yaml", 29, 15, "VL102", "error"),  # --max-seq-len-to-capture (newest assumed)
    ("fixtures/own/args-only-unlisted-vllm-image.yaml", 21, 67, "VL102", "error"),  # --swap-space, image assumed
    ("fixtures/own/vllm-ascend.yaml", 22, 21, "VL102", "error"),  # v0.11.0rc0 = vLLM 0.11.0
    ("fixtures/own/demo-api-server.yaml", 19, 38, "VL101", "warning"),  # the demo server, own message
    ("fixtures/own/internal-lb.yaml", 34, 9, "VL501", "info"),  # internal LB: lowered to info
    ("fixtures/own/generic-workload.yaml", 19, 18, "VL102", "error"),  # an unknown kind with a pod template
    ("fixtures/own/jobset.yaml", 25, 23, "VL102", "error"),  # JobSet replicatedJobs[].template
    ("fixtures/own/kubeai-model.yaml", 37, 7, "VL102", "error"),  # KubeAI Model's spec.args
    ("fixtures/own/list-kind.yaml", 22, 61, "VL102", "error"),
    ("fixtures/own/llm-inference-service.yaml", 23, 67, "VL102", "error"),  # inside VLLM_ADDITIONAL_ARGS
    ("fixtures/own/llmaz-backendruntime.yaml", 14, 7, "VL101", "info"),  # llmaz's api_server command, on 0.20.0
    ("fixtures/own/llmaz-backendruntime.yaml", 44, 9, "VL102", "error"),  # a Playground's backendRuntimeConfig.args
    ("fixtures/own/manifest.json", 20, 42, "VL101", "warning"),
    ("fixtures/own/openshift-template.yaml", 39, 19, "VL102", "error"),  # an OpenShift Template's object
    ("fixtures/own/original-deployment-with-removed-flags.yaml", 18, 16, "VL201", "warning"),
    ("fixtures/own/original-deployment-with-removed-flags.yaml", 22, 11, "VL101", "warning"),
    ("fixtures/own/original-deployment-with-removed-flags.yaml", 30, 11, "VL102", "error"),  # --swap-space=16
    ("fixtures/own/original-deployment-with-removed-flags.yaml", 31, 11, "VL102", "error"),
    ("fixtures/own/original-deployment-with-removed-flags.yaml", 32, 11, "VL102", "error"),
    ("fixtures/own/prometheus-annotations.yaml", 17, 29, "VL301", "error"),
    ("fixtures/own/rollout-knative-kruise.yaml", 25, 46, "VL102", "error"),  # Argo Rollout
    ("fixtures/own/rollout-knative-kruise.yaml", 41, 46, "VL102", "error"),  # Knative Service
    ("fixtures/own/rollout-knative-kruise.yaml", 62, 46, "VL102", "error"),  # OpenKruise CloneSet
    ("fixtures/own/vllm-k8s-guide.yaml", 44, 16, "VL201", "warning"),  # the guide's vllm/vllm-openai:latest
    ("fixtures/own/rayclusterfleet.yaml", 35, 164, "VL102", "error"),  # --swap-space in the fleet's head script
    ("fixtures/own/kaito-workspace.yaml", 16, 7, "VL102", "error"),  # swap-space in KAITO's vllm: keys
    ("fixtures/own/kthena-modelserving.yaml", 27, 228, "VL102", "error"),  # in the role's entry pod
    ("fixtures/own/rayjob-entrypoint.yaml", 10, 78, "VL102", "error"),  # --num-scheduler-steps in the entrypoint
    ("fixtures/own/rayservice-llm.yaml", 24, 17, "VL102", "error"),  # max_seq_len_to_capture in engine_kwargs
    ("fixtures/own/vllmruntime.yaml", 25, 17, "VL102", "error"),  # --num-scheduler-steps in VLLMRuntime extraArgs


    ("fixtures/own/docker-run-image-variable.sh", 13, 39, "VL102", "error"),  # docker run "$IMAGE" (v0.10.1)
    ("fixtures/own/docker-run-image-variable.sh", 19, 37, "VL102", "error"),  # podman run "${IMAGE}"
    ("fixtures/own/pip-wheel-pinned.sh", 9, 47, "VL102", "error"),  # the 0.10.1.1 wheel installed by URL
    ("fixtures/own/runbook-kubectl-heredoc.md", 48, 60, "VL102", "error"),  # `cat <<EOF |kubectl apply -f -`
    ("fixtures/own/runbook-kubectl-heredoc.md", 89, 74, "VL102", "error"),  # `kubectl apply -f - <<'YAML'`
    ("fixtures/own/runbook-kubectl-heredoc.md", 107, 53, "VL102", "error"),  # an unlabelled fence's Pod
    # Kustomize (issue 9): the overlay's patches, checked against the overlay's `images` tag (0.10.1.1)
    ("fixtures/own/kustomize/overlays/prod/args-patch.yaml", 11, 75, "VL102", "error"),  # strategic merge
    ("fixtures/own/kustomize/overlays/prod/json-patch.yaml", 4, 10, "VL102", "error"),  # JSON 6902 args/-
    # Helm values read natively (data/chart-values.yaml): findings on the values file's own lines (beyond CORE:
    # helm-values-vllm-stack.yaml 20:20 VL106 `1e+06` and 25:15 VL109; helm-values-llm-d.yaml 10:8 VL601)
    ("fixtures/own/helm-values-llm-d.yaml", 31, 9, "VL102", "error"),  # removed in 0.11.0, the image's release
}


def test_original_edition_and_own_cases_exact_findings():
    result, missing = lint_paths([str(FIXTURES / "original"), str(FIXTURES / "own")], LintOptions(select=CORE))
    assert not missing
    found = {(f.path, f.span.line, f.span.col, f.code, f.severity.label) for f in result.findings}
    assert found - EXPECTED == set(), "unexpected findings"
    assert EXPECTED - found == set(), "missed findings"


def test_each_original_rule_message_says_what_to_do():
    result, _ = lint_paths([str(FIXTURES / "original")], LintOptions(select=CORE))
    by_code = {f.code: f.message for f in result.findings}
    assert "vllm serve MODEL" in by_code["VL101"]
    assert "--speculative-config" in by_code["VL102"]
    assert "--nnodes" in by_code["VL103"] and "--node-rank" in by_code["VL103"]
    assert "pin a release tag" in by_code["VL201"]
    assert "API port 8000" in by_code["VL301"]
    assert "requests.cpu" in by_code["VL401"]
    assert "--api-key" in by_code["VL501"] and "/metrics" in by_code["VL501"]


# The one thing the audited edition gets wrong by its own rule book ("Recreate instead of a surge rollout"): its
# benchmark Deployment keeps the default RollingUpdate on a NodePool capped at one GPU, so a change applied while
# it runs never rolls out (rules/VL707-rollout-needs-spare-gpu.yaml explains it; fixtures/README.md too).
AUDITED_KNOWN = [("benchmark-reproduce.yaml", 22, "VL707")]


@pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "audited").iterdir()))
def test_audited_edition_has_nothing_at_warning_or_above(name):
    result, _ = lint_paths([str(FIXTURES / "audited" / name)])
    serious = [(Path(f.path).name, f.span.line, f.code) for f in result.findings if f.severity >= Severity.WARNING]
    assert serious == [known for known in AUDITED_KNOWN if known[0] == name]


def test_audited_edition_as_one_folder_with_every_rule():
    result, _ = lint_paths([str(FIXTURES / "audited")], LintOptions(select=["ALL"]))
    serious = [(Path(f.path).name, f.span.line, f.code) for f in result.findings if f.severity >= Severity.WARNING]
    assert serious == AUDITED_KNOWN


def test_the_benchmark_client_is_not_vllm():
    result, _ = lint_paths([str(FIXTURES / "own" / "benchmark-client.yaml")], LintOptions(select=["ALL"]))
    assert [f for f in result.findings if f.code.startswith(("VL1", "VL3"))] == []
