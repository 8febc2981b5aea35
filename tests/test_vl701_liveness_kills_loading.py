"""VL701 liveness-kills-loading: catches / does not catch, with the position of every finding."""
import json
from pathlib import Path

import pytest

from vllmlint.capacity.loadtime import assumptions
from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL701"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL701"]


def pod(probes, model="meta-llama/Llama-3.1-70B-Instruct", extra_args="", image="vllm/vllm-openai:v0.10.1",
        volumes="", mounts="", env="[]"):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: {image}
    command: [vllm, serve, {model}{extra_args}]
    env: {env}
    ports: [{{name: http, containerPort: 8000}}]
{probes}    volumeMounts: [{mounts}]
    resources: {{limits: {{nvidia.com/gpu: 4}}}}
  volumes: [{volumes}]
"""


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


LIVE = "    livenessProbe: {httpGet: {path: /health, port: http}, failureThreshold: 3}\n"
PVC = "{name: m, persistentVolumeClaim: {claimName: hf}}"
AT_CACHE = "{name: m, mountPath: /root/.cache/huggingface}"


# --- catches -----------------------------------------------------------------------------------------
def test_the_first_line_is_short_with_a_long_model_name_and_the_charts_default():
    from vllmlint.formatters.report import split_message

    (finding,) = lint(pod(LIVE, model="deepseek-ai/DeepSeek-R1-Distill-Llama-70B"))
    head, rest = split_message(finding.message)
    assert len(head) <= 120 and rest, head
    assert head == ("The liveness probe gives vLLM 30 s to start, "
                    "but deepseek-ai/DeepSeek-R1-Distill-Llama-70B needs at least 43 s")


def test_default_liveness_on_70b_writable_layer():
    # 141 GB: 10 s + 28 s load + 5 s capture, against 0 + 3 x 10 = 30 s (the download is not counted)
    assert found(pod(LIVE)) == [(11, 77, Severity.WARNING, "30s<43s")]


def test_the_message_names_budget_need_and_fix():
    (finding,) = lint(pod(LIVE))
    assert finding.message.startswith("The liveness probe gives vLLM 30 s to start, but "
                                      "meta-llama/Llama-3.1-70B-Instruct needs at least 43 s: ")
    assert "there is no startup probe" in finding.message
    assert "at least 43 s at every start (10 s to start, 28 s to load 141.1 GB at 5 GB/s" in finding.message
    assert "download" not in finding.message  # no rate is known to be faster than every real download
    assert "starts over" in finding.message and "Add a startupProbe" in finding.message


def test_volume_without_download_still_too_short():
    # on a PVC the download is not counted: 10 + 28 + 5 = 43 s > 30 s
    assert found(pod(LIVE, volumes=PVC, mounts=AT_CACHE)) == [(11, 77, Severity.WARNING, "30s<43s")]


def test_tcp_socket_probe_fails_during_load_too():
    probes = "    livenessProbe: {tcpSocket: {port: 8000}, initialDelaySeconds: 5, periodSeconds: 5}\n"
    assert found(pod(probes, volumes=PVC, mounts=AT_CACHE)) == [(11, 85, Severity.WARNING, "20s<43s")]


def test_startup_probe_budget_is_the_one_that_counts():
    probes = LIVE + "    startupProbe: {httpGet: {path: /health, port: 8000}, periodSeconds: 5, failureThreshold: 6}\n"
    assert found(pod(probes, volumes=PVC, mounts=AT_CACHE)) == [(12, 94, Severity.WARNING, "30s<43s")]


def test_the_download_is_not_counted_anywhere():
    # Qwen3-8B, 16.4 GB: 10 + 3 + 5 = 18 s < 30 s, on an emptyDir or the writable layer alike (hf_xet and
    # hf_transfer download faster than any rate that could be sourced as an upper bound)
    text = pod(LIVE, model="Qwen/Qwen3-8B", volumes="{name: c, emptyDir: {}}",
               mounts="{name: c, mountPath: /root/.cache}")
    assert lint(text) == []
    assert lint(pod(LIVE, model="Qwen/Qwen3-8B")) == []


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod(""),  # no liveness probe at all
    pod(LIVE + "    startupProbe: {httpGet: {path: /health, port: http}, periodSeconds: 10, failureThreshold: 90}\n"),
    pod(LIVE, model="example-org/unknown-70b"),  # not in the catalog
    pod(LIVE, model="Qwen/Qwen3-0.6B"),  # 10 + 1 + 0.2 + 5 s < 30 s
    pod("    livenessProbe: {exec: {command: [cat, /tmp/ok]}}\n"),
    pod("    livenessProbe: {httpGet: {path: /health, port: 9000}}\n"),  # not vLLM's port
    pod("    livenessProbe: {httpGet: {path: /health, port: 8000, host: 10.0.0.1}}\n"),
    pod("    livenessProbe: {httpGet: {path: /health, port: metrics}}\n"),  # unresolvable name
    pod(LIVE + "    startupProbe: {exec: {command: [true]}}\n"),  # a startup probe we cannot judge
    pod(LIVE, extra_args=", --load-format, runai_streamer"),  # a faster loader: no estimate
    pod(LIVE, extra_args=", --load-format, $(FMT)"),
    pod(LIVE, extra_args=", --port, $(PORT)"),  # unknown port
    pod(LIVE, extra_args=", --config, /etc/vllm/config.yaml"),  # the file may set `port`
    pod(LIVE, extra_args=", --grpc"),
    pod(LIVE, extra_args=", --headless"),
    pod("    livenessProbe: {httpGet: {path: /health, port: http}, initialDelaySeconds: 300}\n"),
])
def test_does_not_catch(text):
    assert lint(text) == []


def test_enforce_eager_drops_capture_time():
    # PVC + 70B: 43 s; with --enforce-eager 38 s: a 40 s budget passes only then
    probes = "    livenessProbe: {httpGet: {path: /health, port: http}, initialDelaySeconds: 10}\n"
    assert [v for *_, v in found(pod(probes, volumes=PVC, mounts=AT_CACHE))] == ["40s<43s"]
    assert lint(pod(probes, extra_args=", --enforce-eager", volumes=PVC, mounts=AT_CACHE)) == []


def test_a_model_split_over_pods_loads_its_share_per_pod():
    # 70B on a PVC, TP 8 over 2 pods of 4 GPUs: 10 + 28 / 2 + 5 = 29 s < 30 s: silent; one pod of 4: 43 s
    text = pod(LIVE, extra_args=", --tensor-parallel-size, '8', --nnodes, '2', --node-rank, '0'", volumes=PVC,
               mounts=AT_CACHE)
    assert lint(text) == []
    assert [v for *_, v in found(pod(LIVE, volumes=PVC, mounts=AT_CACHE))] == ["30s<43s"]


def test_init_container_may_fill_the_cache():
    text = pod(LIVE, volumes=PVC, mounts=AT_CACHE).replace(
        "  containers:\n", "  initContainers:\n  - {name: fetch, image: python:3.12-slim, command: [true]}\n"
                          "  containers:\n")
    assert [v for *_, v in found(text)] == ["30s<43s"]  # the load still counts, the download does not


def test_offline_hub_counts_no_download():
    text = pod(LIVE, env='[{name: HF_HUB_OFFLINE, value: "1"}]')
    assert [v for *_, v in found(text)] == ["30s<43s"]


def test_compose_is_not_checked():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: [--model, meta-llama/Llama-3.1-70B-Instruct]
    healthcheck: {test: [CMD, curl, -f, http://localhost:8000/health], interval: 10s, retries: 3}
"""
    assert lint(text, "compose.yaml") == []


# --- the chapters and vLLM's own guide -----------------------------------------------------------------
def _lint_dir(name):
    linter = Linter(LintOptions(select=["VL701"]))
    for path in sorted((ROOT / "fixtures" / name).iterdir()):
        linter.add_file(path, path.name)
    return linter.run().findings


def test_chapters():
    assert _lint_dir("audited") == []  # startup probe 90 x 10 s
    assert _lint_dir("original") == []  # no probes at all: VL702 says it (no readiness probe)


def test_vllm_k8s_guide_is_borderline_and_passes():
    """vLLM's guide: liveness 60 + 3 x 10 = 90 s for Mistral-7B (14.5 GB) on a PVC: lower bound 18 s
    (the download is not counted): on the passing side, as the rule's docs say."""
    path = ROOT / "fixtures" / "own" / "vllm-k8s-guide.yaml"
    result = lint_text(path.read_text(), "vllm-k8s-guide.yaml", LintOptions(select=["VL701"]))
    assert [f for f in result.findings if f.code == "VL701"] == []
    # The same Deployment with its cache on the writable layer and a 15 s probe is reported.
    text = path.read_text().replace("initialDelaySeconds: 60\n          periodSeconds: 10",
                                    "initialDelaySeconds: 0\n          periodSeconds: 5", 1)
    text = text.replace("        - mountPath: /root/.cache/huggingface\n          name: cache-volume\n", "")
    findings = lint(text, "vllm-k8s-guide.yaml")
    assert [(f.span.line, f.severity, f.value) for f in findings] == [(74, Severity.WARNING, "15s<18s")]


# --- the data --------------------------------------------------------------------------------------------
def test_load_time_data_matches_its_schema():
    import jsonschema

    schema = json.loads((schemas_dir() / "load-time.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    data = load_yaml_data(knowledge_dir() / "load-time.yaml")
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(data)) == []
    assert assumptions()["download"]["counted"] is False and "download_bytes_per_second" not in assumptions()


# --- review fixes -------------------------------------------------------------------------------------
STARTUP_ONLY = "    startupProbe: {httpGet: {path: /health, port: http}, periodSeconds: 5, failureThreshold: 3}\n"


def test_a_short_startup_probe_kills_without_any_liveness_probe():
    # the kubelet kills the container after failureThreshold failed startup probes, liveness probe or not
    assert found(pod(STARTUP_ONLY, volumes=PVC, mounts=AT_CACHE)) == [(11, 94, Severity.WARNING, "15s<43s")]
    (finding,) = lint(pod(STARTUP_ONLY, volumes=PVC, mounts=AT_CACHE))
    assert finding.message.startswith("The startup probe gives vLLM 15 s")
    assert "Raise the startup probe's failureThreshold x periodSeconds to 300 s or more" in finding.message
    exec_liveness = "    livenessProbe: {exec: {command: [cat, /tmp/ok]}}\n" + STARTUP_ONLY
    assert [v for *_, v in found(pod(exec_liveness, volumes=PVC, mounts=AT_CACHE))] == ["15s<43s"]
    long_enough = STARTUP_ONLY.replace("failureThreshold: 3", "failureThreshold: 60")
    assert lint(pod(long_enough, volumes=PVC, mounts=AT_CACHE)) == []
