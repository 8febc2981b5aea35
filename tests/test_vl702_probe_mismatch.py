"""VL702 probe-mismatch: catches / does not catch, with the position of every finding; the endpoint table."""
import json
from pathlib import Path

import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm.endpoints import guarded, normalize, post_only, served

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL702"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL702"]


def pod(probe, args="", image="vllm/vllm-openai:v0.10.1", env="[]", extra=""):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm, labels: {{app: vllm}}}}
spec:
  containers:
  - name: vllm
    image: {image}
    command: [vllm, serve, Qwen/Qwen3-8B{args}]
    env: {env}
    ports: [{{name: http, containerPort: 8000}}]
    readinessProbe: {probe}
{extra}"""


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


SIDECAR = """  - name: proxy
    image: ghcr.io/example/auth-proxy:1.0
    ports: [{containerPort: 9000}]
"""


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("probe, args, col, value", [
    ("{httpGet: {path: /healthz, port: http}}", "", 38, "readiness:/healthz"),
    ("{httpGet: {path: /livez, port: 8000}}", "", 38, "readiness:/livez"),
    ("{httpGet: {port: 8000}}", "", 31, "readiness:/"),  # no path: GET /
    ("{httpGet: {path: /v1/health, port: 8000}}", "", 38, "readiness:/v1/health"),
    ("{httpGet: {path: /v1/models, port: http}}", ", --api-key, secret-1", 38, "readiness:/v1/models:401"),
    ("{tcpSocket: {port: 8080}}", "", 40, "readiness:8080"),
    ("{httpGet: {path: /health, port: 8000}}", ", --port, \"9000\"", 53, "readiness:8000"),
    ("{grpc: {port: 8000}}", "", 35, "readiness:grpc"),
    ("{httpGet: {path: /health, port: 8000, scheme: HTTPS}}", "", 67, "readiness:HTTPS"),
    ("{httpGet: {path: /health, port: 8000, scheme: HTTP}}", ", --ssl-keyfile, /tls/k, --ssl-certfile, /tls/c", 67,
     "readiness:HTTP"),
])
def test_catches(probe, args, col, value):
    assert found(pod(probe, args)) == [(11, col, Severity.WARNING, value)]


def test_path_message_names_the_release_and_what_to_probe():
    (finding,) = lint(pod("{httpGet: {path: /healthz, port: http}}"))
    assert "which vLLM 0.10.1 does not serve" in finding.message and "Probe `/health`" in finding.message


def test_unknown_release_still_reports_a_path_no_release_serves():
    (finding,) = lint(pod("{httpGet: {path: /healthz, port: http}}", image="vllm/vllm-openai:latest"))
    assert "which any vLLM release does not serve" in finding.message


def test_ping_before_0_7_is_not_served():
    assert [v for *_, v in found(pod("{httpGet: {path: /ping, port: 8000}}", image="vllm/vllm-openai:v0.6.4"))] == \
        ["readiness:/ping"]


def test_api_key_from_a_secret_through_vllm_api_key():
    env = "[{name: VLLM_API_KEY, valueFrom: {secretKeyRef: {name: k, key: k}}}]"
    assert [v for *_, v in found(pod("{httpGet: {path: /v1/models, port: 8000}}", env=env))] == \
        ["readiness:/v1/models:401"]


def test_port_name_shown_in_the_message():
    text = pod("{tcpSocket: {port: metrics}}").replace("ports: [{name: http, containerPort: 8000}]",
                                                        "ports: [{name: http, containerPort: 8000}, "
                                                        "{name: metrics, containerPort: 8001}]")
    (finding,) = lint(text)
    assert "checks port 8001 (`metrics`)" in finding.message and "vLLM serves on 8000" in finding.message


def test_no_readiness_behind_a_service_is_info():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: [vllm, serve, Qwen/Qwen3-8B]
---
apiVersion: v1
kind: Service
metadata: {name: vllm-api}
spec:
  selector: {app: vllm}
  ports: [{port: 80, targetPort: 8000}]
"""
    assert found(text) == [(10, 15, Severity.INFO, "no-readiness:vllm-api")]
    assert lint(text)[0].message.startswith(
        "This vLLM container has no readiness probe (and no startup probe), yet a Service sends it traffic. "
        "Service vllm-api sends traffic to it: the pod counts as ready as soon as the container starts")
    with_startup = text.replace("        command: [vllm, serve, Qwen/Qwen3-8B]\n",
                                "        command: [vllm, serve, Qwen/Qwen3-8B]\n"
                                "        startupProbe: {httpGet: {path: /health, port: 8000}, failureThreshold: 90}\n")
    assert lint(with_startup) == []  # the startup probe keeps the pod out of the Service until it passes
    assert lint(text.replace("selector: {app: vllm}", "selector: {app: other}")) == []
    assert lint(text.split("---")[0]) == []  # no Service in the run
    assert lint(text.replace("spec:\n  selector: {app: vllm}", "spec:\n  clusterIP: None\n  selector: {app: vllm}")) == []
    assert [v for *_, v in found(text.replace("targetPort: 8000", "targetPort: 9090"))] == ["no-readiness:vllm-api"]
    sidecar = text.replace("        command: [vllm, serve, Qwen/Qwen3-8B]\n",
                           "        command: [vllm, serve, Qwen/Qwen3-8B]\n      - name: proxy\n"
                           "        image: ghcr.io/example/proxy:1.0\n"
                           "        readinessProbe: {httpGet: {path: /health, port: 8000}}\n")
    assert lint(sidecar) == []  # another container's probe may gate the pod on vLLM


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod("{httpGet: {path: /health, port: http}}"),
    pod("{httpGet: {path: /health/, port: http}}"),  # FastAPI redirects: a success
    pod("{httpGet: {path: health, port: http}}"),  # the kubelet asks for /health
    pod("{httpGet: {path: '/health?full=1', port: 8000}}"),
    pod("{httpGet: {path: /v1/models, port: 8000}}"),  # no API key
    pod("{httpGet: {path: /metrics, port: 8000}}", ", --api-key, k"),  # only /v1 is guarded
    pod("{httpGet: {path: /ping, port: 8000}}", ", --api-key, k"),
    pod("{httpGet: {path: /load, port: 8000}}"),
    pod("{httpGet: {path: /version, port: 8000}}"),
    pod("{httpGet: {path: /v1/models, port: 8000, httpHeaders: [{name: authorization, value: Bearer k}]}}",
        ", --api-key, k"),
    pod("{httpGet: {path: /v1/models, port: 8000}}", ", --api-key, ''"),  # an empty key is no key
    pod("{httpGet: {path: /v1/models, port: 8000}}", env="[{name: VLLM_API_KEY, value: ''}]"),
    pod("{httpGet: {path: /v1/models, port: 8000}}",
        env="[{name: VLLM_API_KEY, valueFrom: {configMapKeyRef: {name: elsewhere, key: k}}}]"),  # not in the run
    pod("{httpGet: {path: /docs, port: 8000}}"),  # conditional (--disable-fastapi-docs)
    pod("{httpGet: {path: /server_info, port: 8000}}"),
    pod("{httpGet: {path: /ready, port: 8000}}", image="vllm/vllm-openai:v0.29.0"),  # DP supervisor only
    pod("{httpGet: {path: /healthz, port: 9000}}", extra=SIDECAR),  # the sidecar's port
    pod("{tcpSocket: {port: 9000}}", extra=SIDECAR),
    pod("{httpGet: {path: /healthz, port: 8000, host: 10.1.2.3}}"),
    pod("{httpGet: {path: /healthz, port: nope}}"),  # unresolvable name: the kubelet never runs it
    pod("{httpGet: {path: /healthz, port: 8000}}", ", --root-path, /api"),
    pod("{httpGet: {path: /healthz, port: 8000}}", ", --port, $(PORT)"),  # unknown port
    pod("{grpc: {port: 8000}}", ", --grpc"),
    pod("{httpGet: {path: /healthz, port: 9000}}", ", --headless"),  # not the API port: not judged
    pod("{httpGet: {path: /health, port: 8000}}", ", --headless", extra=SIDECAR),  # a sidecar may listen
    pod("{tcpSocket: {port: 8000}}", ", --headless, --data-parallel-rpc-port, '8000'"),  # vLLM listens there
    pod("{httpGet: {path: /health, port: 8000}}", ", --headless, --config, /etc/v.yaml"),  # port unknown
    pod("{exec: {command: [pgrep, -f, vllm]}}", ", --headless"),
    pod("{tcpSocket: {port: 29500}}", ", --master-port, \"29500\""),  # vLLM's own other listener
    pod("{exec: {command: [curl, -f, localhost:8000/healthz]}}"),
    pod("{httpGet: {path: /healthz, port: 8000}}", image="vllm/vllm-openai:v0.5.0"),  # before the sampled releases
    pod("{httpGet: {path: /ping, port: 8000}}"),
])
def test_does_not_catch(text):
    assert lint(text) == []


def test_a_shell_script_that_may_start_something_else():
    text = pod("{tcpSocket: {port: 9000}}").replace(
        "command: [vllm, serve, Qwen/Qwen3-8B]",
        "command: [sh, -c, 'python3 -m http.server 9000 & vllm serve Qwen/Qwen3-8B']")
    assert lint(text) == []
    one_shot = pod("{tcpSocket: {port: 9000}}").replace(
        "command: [vllm, serve, Qwen/Qwen3-8B]", "command: [sh, -c, 'pip install x && vllm serve Qwen/Qwen3-8B']")
    assert [v for *_, v in found(one_shot)] == ["readiness:9000"]


def test_not_vllm_is_not_checked():
    text = pod("{httpGet: {path: /healthz, port: 8000}}").replace(
        "image: vllm/vllm-openai:v0.10.1\n    command: [vllm, serve, Qwen/Qwen3-8B]",
        "image: nginx:1.27\n    command: [nginx]")
    assert lint(text) == []


def test_chapters():
    linter = Linter(LintOptions(select=["VL702"]))
    for path in sorted((ROOT / "fixtures" / "audited").iterdir()):
        linter.add_file(path, path.name)
    assert linter.run().findings == []  # startup and readiness probes on /health, port `http`
    linter = Linter(LintOptions(select=["VL702"]))
    for path in sorted((ROOT / "fixtures" / "original").iterdir()):
        linter.add_file(path, path.name)
    assert [(f.path, f.span.line, f.span.col, f.severity) for f in linter.run().findings] == [
        ("multi-node-statefulset.yaml", 56, 15, Severity.INFO), ("single-node-deployment.yaml", 16, 15, Severity.INFO)]
    guide = ROOT / "fixtures" / "own" / "vllm-k8s-guide.yaml"
    assert lint(guide.read_text(), guide.name) == []


# --- the endpoint table ------------------------------------------------------------------------------------
def test_server_endpoints_data_matches_its_schema():
    import jsonschema

    schema = json.loads((schemas_dir() / "server-endpoints.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    data = load_yaml_data(knowledge_dir() / "server-endpoints.yaml")
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(data)) == []


@pytest.mark.parametrize("path, release, answer", [
    ("/health", "0.6.2", True), ("/health", "0.33.0", True), ("/health", None, None),
    ("/healthz", None, False), ("/healthz", "0.29.0", False), ("/", "0.29.0", False),
    ("/ping", "0.6.6.post1", False), ("/ping", "0.6.5", False), ("/ping", "0.7.0", True),
    ("/load", "0.7.3", False), ("/load", "0.7.5", None), ("/load", "0.8.0", True),
    ("/metrics/", "0.10.1", True), ("/metrics", "0.10.1", True),
    ("/v1/models", "0.10.1", True), ("/v1/chat/completions", "0.10.1", False),  # POST only: GET is 405/404
    ("/docs", "0.29.0", None), ("/ready", "0.29.0", None), ("/ready", "0.18.0", False),
    ("/health", "0.5.0", None), ("/healthz", "0.40.0", None), ("/health", "0.40.0", None), ("/healthz", "0.5.0", None),
])
def test_served(path, release, answer):
    assert served(path, release) is answer


@pytest.mark.parametrize("path, release, answer", [
    ("/v1/models", None, True), ("/v1/models", "0.6.2", True), ("/health", "0.29.0", False),
    ("/v2/rerank", "0.21.0", False), ("/v2/rerank", "0.22.0", True), ("/v2/rerank", None, None),
    ("/cohere/x", "0.26.0", False), ("/cohere/x", "0.27.0", True), ("/metrics", None, False),
])
def test_guarded(path, release, answer):
    assert guarded(path, release) is answer


def test_normalize():
    assert normalize("/health/") == "/health" and normalize("/health?x=1") == "/health" and normalize("/") == "/"
    assert normalize("health") == "/health" and normalize("") == "/"


# --- review fixes -------------------------------------------------------------------------------------
def test_config_file_may_set_the_port():
    # `--config FILE`: vLLM reads `port` (and every option) from the YAML file; the command line wins
    text = pod("{httpGet: {path: /health, port: http}}").replace(
        "command: [vllm, serve, Qwen/Qwen3-8B]", "command: [vllm, serve, Qwen/Qwen3-8B, --config, /etc/vllm/config.yaml]"
    ).replace("containerPort: 8000", "containerPort: 8080")
    assert lint(text) == []
    assert lint(text.replace("--config, /etc/vllm/config.yaml", "--config=/etc/vllm/config.yaml")) == []
    # --port on the command line overrides the file's: the port is known again
    assert found(text.replace("/etc/vllm/config.yaml]", "/etc/vllm/config.yaml, --port, '9000']")) == \
        [(11, 53, Severity.WARNING, "readiness:8080")]


OAUTH2_PROXY = """  - name: oauth2-proxy
    image: quay.io/oauth2-proxy/oauth2-proxy:v7.6.0
    args: [--http-address=0.0.0.0:4180, --upstream=http://127.0.0.1:8000]
"""


def test_another_container_may_listen_on_a_port_it_does_not_declare():
    # containerPort is informational: the sidecar listens on 4180 without declaring it
    text = pod("{httpGet: {path: /oauth2/ping, port: 4180}}", ", --host, 127.0.0.1", extra=OAUTH2_PROXY)
    assert lint(text) == []
    native = pod("{httpGet: {path: /oauth2/ping, port: 4180}}").replace(
        "  containers:\n", "  initContainers:\n" + OAUTH2_PROXY + "    restartPolicy: Always\n  containers:\n")
    assert lint(native) == []  # a native sidecar runs beside vLLM too
    # a regular init container has exited before vLLM starts: nothing else runs, the port is closed
    init = pod("{httpGet: {path: /oauth2/ping, port: 4180}}").replace(
        "  containers:\n", "  initContainers:\n" + OAUTH2_PROXY + "  containers:\n")
    assert found(init) == [(15, 58, Severity.WARNING, "readiness:4180")]
    (finding,) = lint(init)
    assert "nothing in this pod listens there" in finding.message and "runs alone in the pod" in finding.message


def test_a_post_only_route_answers_405_not_404():
    (finding,) = lint(pod("{httpGet: {path: /tokenize, port: 8000}}"))
    assert finding.message.startswith("The readiness probe asks for `/tokenize`, which vLLM 0.10.1 serves only to "
                                      "POST: the kubelet's GET gets 405 Method Not Allowed")
    assert (finding.span.line, finding.span.col, finding.severity) == (11, 38, Severity.WARNING)
    # a router a flag or the model's tasks may leave out (0.29.0): 405 where registered, else 404
    (finding,) = lint(pod("{httpGet: {path: /v1/chat/completions, port: 8000}}", image="vllm/vllm-openai:v0.29.0"))
    assert "405 Method Not Allowed where a POST-only route is registered there, else 404" in finding.message
    (finding,) = lint(pod("{httpGet: {path: /healthz, port: 8000}}"))
    assert "the server answers 404" in finding.message and "405" not in finding.message


@pytest.mark.parametrize("path, release, answer", [
    ("/tokenize", "0.10.1", True), ("/tokenize/", "0.6.2", True), ("/tokenize", "0.29.0", None), ("/tokenize", None, None),
    ("/v1/chat/completions", "0.14.1", True), ("/v1/chat/completions", "0.17.1", None),
    ("/start_profile", "0.10.1", None),  # only with VLLM_TORCH_PROFILER_DIR
    ("/pooling", "0.6.4", False), ("/pooling", "0.6.5", None), ("/pooling", "0.7.0", True),
    ("/healthz", "0.10.1", False), ("/healthz", None, False),
])
def test_post_only(path, release, answer):
    assert post_only(path, release) is answer


NO_READINESS = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: [vllm, serve, Qwen/Qwen3-8B]
"""
SERVICE = """apiVersion: v1
kind: Service
metadata: {name: NAME}
spec:
  selector: {app: vllm}
  ports: [{port: 80, targetPort: 8000}]
"""


def _run(files):
    linter = Linter(LintOptions(select=["VL702"]))
    for shown, text in files.items():
        linter.add_text(text, shown)
    return [(f.path, f.span.line, f.span.col, f.severity, f.value) for f in linter.run().findings]


def test_no_readiness_names_only_services_of_the_workload_folder():
    # two unrelated projects in one run: the other folder's Service selecting `app: vllm` is not named
    files = {"repo-a/deploy.yaml": NO_READINESS, "repo-b/service.yaml": SERVICE.replace("NAME", "other-api")}
    assert _run(files) == []
    files["repo-a/service.yaml"] = SERVICE.replace("NAME", "vllm-api")
    assert _run(files) == [("repo-a/deploy.yaml", 10, 15, Severity.INFO, "no-readiness:vllm-api")]
    (finding,) = [f for f in lint(NO_READINESS + "---\n" + SERVICE.replace("NAME", "vllm-api"))]
    assert "Service vllm-api sends" in finding.message
    # one folder: every Service of the run that selects the pod counts, in whichever file
    assert _run({"deploy.yaml": NO_READINESS, "service.yaml": SERVICE.replace("NAME", "vllm-api")}) == [
        ("deploy.yaml", 10, 15, Severity.INFO, "no-readiness:vllm-api")]


# --- a --headless vLLM has no API server (0.10.1.1 vllm/entrypoints/cli/serve.py lines 43-44, 74-137;
# 0.29.0 lines 66-73, 145-147) ------------------------------------------------------------------------------
@pytest.mark.parametrize("probe, args, col, value", [
    ("{httpGet: {path: /health, port: 8000}}", ", --headless", 53, "readiness:headless:8000"),
    ("{tcpSocket: {port: 8000}}", ", --headless", 40, "readiness:headless:8000"),
    ("{httpGet: {path: /health, port: http}}", ", --headless", 53, "readiness:headless:8000"),  # named port
    ("{httpGet: {path: /health, port: 8080}}", ", --headless, --port, '8080'", 53, "readiness:headless:8080"),
])
def test_a_probe_on_a_headless_vllm(probe, args, col, value):
    assert found(pod(probe, args)) == [(11, col, Severity.WARNING, value)]


def test_headless_liveness_and_startup_on_0_29():
    text = pod("{httpGet: {path: /health, port: 8000}}", ", --headless", image="vllm/vllm-openai:v0.29.0",
               extra="    livenessProbe: {tcpSocket: {port: 8000}}\n"
                     "    startupProbe: {httpGet: {path: /health, port: 8000}}\n")
    assert found(text) == [(11, 53, Severity.WARNING, "readiness:headless:8000"),
                           (12, 39, Severity.WARNING, "liveness:headless:8000"),
                           (13, 51, Severity.WARNING, "startup:headless:8000")]
    messages = [f.message for f in lint(text)]
    assert "no API server" in messages[0] and "never becomes Ready" in messages[0]
    assert "restarts the container over and over" in messages[1]
