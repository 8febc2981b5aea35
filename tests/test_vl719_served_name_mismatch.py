"""VL719 served-name-mismatch: catches / does not catch, with the position of every finding."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL719"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL719"]


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


def server(args="[vllm, serve, Qwen/Qwen3-8B, --served-model-name, qwen3]", label="", env="[]", ns="bench"):
    labels = "{app: vllm" + (f", model.aibrix.ai/name: {label}" if label else "") + "}"
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm, namespace: {ns}}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata:
      labels: {labels}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: {args}
        env: {env}
        ports: [{{containerPort: 8000, name: http}}]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


SERVICE = """---
apiVersion: v1
kind: Service
metadata: {name: vllm-api, namespace: bench}
spec:
  selector: {app: vllm}
  ports: [{port: 80, targetPort: http}]
"""


def client(argv, ns="bench"):
    return f"""---
apiVersion: batch/v1
kind: Job
metadata: {{name: client, namespace: {ns}}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: client
        image: vllm/vllm-openai:v0.10.1
        command: {argv}
"""


def pool(model_spec):
    return f"""---
apiVersion: inference.networking.x-k8s.io/v1alpha2
kind: InferencePool
metadata: {{name: pool, namespace: bench}}
spec:
  targetPortNumber: 8000
  selector: {{app: vllm}}
  extensionRef: {{name: epp}}
---
apiVersion: inference.networking.x-k8s.io/v1alpha2
kind: InferenceModel
metadata: {{name: m, namespace: bench}}
spec: {model_spec}
"""


# --- catches -----------------------------------------------------------------------------------------
def test_aibrix_label_not_served():
    assert found(server(label="qwen-3")) == [(8, 49, Severity.ERROR, "model.aibrix.ai/name=qwen-3")]


def test_aibrix_label_with_the_model_id_default():
    text = server("[vllm, serve, Qwen/Qwen3-8B]", label="qwen3")
    (finding,) = lint(text)
    assert "serves only `Qwen/Qwen3-8B`" in finding.message and "--served-model-name qwen3" in finding.message


def test_inference_model_name():
    assert found(server() + pool("{modelName: qwen-3, poolRef: {name: pool}}")) == [
        (29, 19, Severity.ERROR, "m:qwen-3")]


def test_inference_model_target_models_are_what_is_sent():
    text = server("[vllm, serve, Qwen/Qwen3-8B, --lora-modules, 'sql-lora=/a/sql']") + pool(
        "{modelName: sql, poolRef: {name: pool}, targetModels: [{name: sql-lora, weight: 50}, {name: sql-lora-2, weight: 50}]}")
    assert [v for *_, v in found(text)] == ["m:sql-lora-2"]


@pytest.mark.parametrize("url", ["http://vllm-api", "http://vllm-api.bench", "http://vllm-api.bench.svc:80/",
                                 "http://vllm-api.bench.svc.cluster.local"])
def test_bench_client_through_a_service(url):
    text = server() + SERVICE + client(f"[vllm, bench, serve, --base-url, '{url}', --model, Qwen/Qwen3-8B]")
    assert [(line, v) for line, _, _, v in found(text)] == [(35, f"{url}:Qwen/Qwen3-8B")]


def test_bench_client_served_model_name_and_lora_modules():
    text = server() + SERVICE + client(
        "[vllm, bench, serve, --host, vllm-api, --port, '80', --model, Qwen/Qwen3-8B, --served-model-name, qwen]")
    assert found(text) == [(35, 116, Severity.ERROR, "vllm-api:80:qwen")]
    text = server() + SERVICE + client(
        "[vllm, bench, serve, --host, vllm-api, --port, '80', --model, Qwen/Qwen3-8B, --lora-modules, qwen3, sql]")
    assert [v for *_, v in found(text)] == ["vllm-api:80:sql"]


def test_benchmark_serving_script_in_a_shell():
    text = server() + SERVICE + client(
        "[sh, -c, 'pip install pandas && python3 benchmarks/benchmark_serving.py --base-url http://vllm-api "
        "--model Qwen/Qwen3-8B --dataset-name random']")
    assert [v for *_, v in found(text)] == ["http://vllm-api:Qwen/Qwen3-8B"]


def test_bench_sidecar_on_localhost():
    text = server().replace("        resources: {limits: {nvidia.com/gpu: 1}}\n", """        resources: {limits: {nvidia.com/gpu: 1}}
      - name: bench
        image: vllm/vllm-openai:v0.10.1
        command: [vllm, bench, serve, --model, Qwen/Qwen3-8B]
""")
    assert found(text) == [(19, 48, Severity.ERROR, "127.0.0.1:8000:Qwen/Qwen3-8B")]


def route(value, extra_rule="", kind="InferencePool", name="pool"):
    return f"""---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: llm-route, namespace: bench}}
spec:
  parentRefs: [{{name: inference-gateway}}]
  rules:
  - matches:
    - headers:
      - {{type: Exact, name: X-Gateway-Model-Name, value: {value}}}{extra_rule}
    backendRefs:
    - {{group: inference.networking.k8s.io, kind: {kind}, name: {name}}}
"""


def test_http_route_model_header_to_a_pool():
    text = server() + pool("{modelName: qwen3, poolRef: {name: pool}}") + route("qwen-3")
    assert found(text) == [(39, 58, Severity.ERROR, "llm-route:qwen-3")]


@pytest.mark.parametrize("text", [
    server() + pool("{modelName: qwen3, poolRef: {name: pool}}") + route("qwen3"),
    server() + pool("{modelName: qwen-3, poolRef: {name: pool}, targetModels: [{name: qwen3, weight: 100}]}")
    + route("qwen-3"),  # the InferenceModel rewrites the name
    server() + pool("{modelName: qwen3, poolRef: {name: pool}}") + route("qwen-3", kind="Service"),
    server() + pool("{modelName: qwen3, poolRef: {name: pool}}") + route("qwen-3", name="other"),
    server() + pool("{modelName: qwen3, poolRef: {name: pool}}") + route("qwen-3").replace("type: Exact", "type: RegularExpression"),
])
def test_http_route_silent(text):
    assert lint(text) == []


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    server(label="qwen3"),
    server("[vllm, serve, Qwen/Qwen3-8B, --served-model-name, qwen3, qwen-3]", label="qwen-3"),
    server("[vllm, serve, Qwen/Qwen3-8B, --served-model, qwen-3]", label="qwen-3"),  # an abbreviation argparse takes
    server("[vllm, serve, Qwen/Qwen3-8B, '--served-model-name=qwen-3']", label="qwen-3"),
    server("[vllm, serve, Qwen/Qwen3-8B, --lora-modules, 'qwen-3=/lora']", label="qwen-3"),
    server("[vllm, serve, Qwen/Qwen3-8B, --lora-modules, '{\"name\": \"qwen-3\", \"path\": \"/lora\"}']", label="qwen-3"),
    # runtime LoRA loading: the name may be an adapter loaded later
    server(label="qwen-3", env="[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: 'True'}]"),
    server(label="qwen-3", env="[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, valueFrom: {secretKeyRef: {name: s, key: k}}}]"),
    # names not certain: $(VAR), a config file, no model at all
    server("[vllm, serve, Qwen/Qwen3-8B, --served-model-name, $(NAME)]", label="qwen-3"),
    server("[vllm, serve, --config, /etc/vllm/config.yaml]", label="qwen-3"),
    server("[sh, -c, 'vllm serve Qwen/Qwen3-8B \"$@\"']", label="qwen-3"),
    # benchmark clients whose link is not certain
    server() + SERVICE + client("[vllm, bench, serve, --base-url, 'http://vllm-api', --model, qwen3]"),
    server() + SERVICE + client("[vllm, bench, serve, --base-url, 'http://other-svc', --model, Qwen/Qwen3-8B]"),
    server() + SERVICE + client("[vllm, bench, serve, --base-url, 'http://vllm-api:8080', --model, Qwen/Qwen3-8B]"),
    server() + SERVICE + client("[vllm, bench, serve, --base-url, 'http://vllm-api.prod', --model, Qwen/Qwen3-8B]"),
    server() + SERVICE + client("[vllm, bench, serve, --base-url, 'https://api.example.com', --model, x/y]"),
    server() + SERVICE + client("[vllm, bench, serve, --base-url, $(URL), --model, Qwen/Qwen3-8B]"),
    server() + SERVICE + client("[vllm, bench, serve, --host, vllm-api, --model, Qwen/Qwen3-8B]"),  # port 8000: none
    server() + SERVICE + client("[vllm, bench, serve, --base-url, 'http://vllm-api']"),  # no model: asks /v1/models
    server() + SERVICE + client("[python, bench.py, --url, 'http://vllm-api', --model, Qwen/Qwen3-8B]"),
    # a pool whose pods are not all known vLLM, a pool not in the run
    server() + pool("{modelName: qwen3, poolRef: {name: pool}}"),
    server() + pool("{modelName: qwen-3, poolRef: {name: other-pool}}"),
    server("[vllm, serve, Qwen/Qwen3-8B, --served-model-name, $(N)]") + pool("{modelName: qwen-3, poolRef: {name: pool}}"),
])
def test_silent(text):
    assert lint(text) == []


def test_a_service_that_also_selects_other_pods_is_not_judged():
    other = """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: tgi, namespace: bench}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - {name: tgi, image: 'ghcr.io/huggingface/text-generation-inference:2.4', ports: [{containerPort: 8000, name: http}]}
"""
    text = server() + other + SERVICE + client("[vllm, bench, serve, --base-url, 'http://vllm-api', --model, Qwen/Qwen3-8B]")
    assert lint(text) == []


def test_fixtures_are_silent():
    for chapter in ("audited", "original", "own"):
        linter = Linter(LintOptions(select=["VL719"]))
        for path in sorted((ROOT / "fixtures" / chapter).iterdir()):
            if path.is_file():
                linter.add_file(path, path.name)
        assert [f for f in linter.run().findings if f.code == "VL719"] == [], chapter  # VL001 of broken.yaml is never hidden


def curl_job(script):
    return f"""---
apiVersion: batch/v1
kind: Job
metadata: {{name: smoke, namespace: bench}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: curl
        image: curlimages/curl:8.10.1
        command: [sh, -c]
        args:
        - |
          {script}
"""


def test_curl_smoke_test_job():
    text = server() + SERVICE + curl_job(
        """curl -sf http://vllm-api.bench/v1/completions -H 'Content-Type: application/json' -d '{"model": "Qwen/Qwen3-8B", "prompt": "hi"}'""")
    assert found(text) == [(38, 96, Severity.ERROR, "vllm-api.bench:Qwen/Qwen3-8B")]


@pytest.mark.parametrize("script", [
    """curl -sf http://vllm-api.bench/v1/completions -d '{"model": "qwen3", "prompt": "hi"}'""",
    """curl -sf http://vllm-api.bench/v1/models""",
    """curl -sf http://vllm-api.bench/v1/completions -d @body.json""",
    'curl -sf http://vllm-api.bench/v1/completions -d "{\\"model\\": \\"$MODEL\\"}"',
    """curl -sf http://other/v1/completions -d '{"model": "x"}'""",
    """curl -sf http://vllm-api.bench/health -d '{"model": "x"}'""",
])
def test_curl_silent(script):
    assert lint(server() + SERVICE + curl_job(script)) == []


# --- per endpoint and release (data/server-endpoints.yaml `model_checked`) ---------------------------------
def curl_to(path, image="vllm/vllm-openai:v0.10.1", model="Qwen/Qwen3-8B"):
    return server().replace("vllm/vllm-openai:v0.10.1", image) + SERVICE + curl_job(
        f"""curl -sf http://vllm-api.bench{path} -d '{{"model": "{model}", "input": "hi"}}'""")


@pytest.mark.parametrize("path, image", [
    # PoolingServing (0.18.0 on) drops _check_model's result, but _maybe_get_adapters raises
    # VLLMNotFoundError: still 404 "The model `x` does not exist." (0.18.0 pooling/base/serving.py:98, :263)
    ("/v1/embeddings", "vllm/vllm-openai:v0.17.1"),
    ("/v1/embeddings", "vllm/vllm-openai:v0.18.0"),
    ("/v1/embeddings", "vllm/vllm-openai:v0.22.0"),
    ("/v1/embeddings", "vllm/vllm-openai:v0.33.0"),
    ("/v1/score", "vllm/vllm-openai:v0.20.0"),
    ("/v1/rerank", "vllm/vllm-openai:v0.29.0"),
    ("/v1/chat/completions", "vllm/vllm-openai:v0.33.0"),
    ("/v1/responses", "vllm/vllm-openai:v0.10.1"),
    ("/v1/embeddings/", "vllm/vllm-openai:latest"),  # checked in every sampled release
])
def test_curl_to_an_endpoint_that_checks_the_name(path, image):
    (finding,) = found(curl_to(path, image))
    assert finding[:3] == (38, 45 + len(path), Severity.ERROR)


@pytest.mark.parametrize("path, image", [
    ("/v1/chat/completions/render", "vllm/vllm-openai:v0.33.0"),  # not known to check the name
    ("/v1/messages", "vllm/vllm-openai:v0.33.0"),
    ("/v1/load_lora_adapter", "vllm/vllm-openai:v0.10.1"),
    ("/v1/responses", "vllm/vllm-openai:v0.9.2"),  # before the route (first sampled: 0.10.0)
    ("/v1/responses", "vllm/vllm-openai:latest"),  # an unknown release may predate it
    ("/v1/rerank", "vllm/vllm-openai:v0.6.6.post1"),
])
def test_curl_to_an_endpoint_not_known_to_check_the_name(path, image):
    assert lint(curl_to(path, image)) == []


def test_bench_client_endpoint_decides():
    base = server() + SERVICE
    catches = client("[vllm, bench, serve, --base-url, 'http://vllm-api', --model, Qwen/Qwen3-8B, "
                     "--endpoint, /v1/chat/completions, --backend, openai-chat]")
    assert len(lint(base + catches)) == 1
    silent = client("[vllm, bench, serve, --base-url, 'http://vllm-api', --model, Qwen/Qwen3-8B, "
                    "--endpoint, /v1/messages]")
    assert lint(base + silent) == []
    prefixed = client("[vllm, bench, serve, --base-url, 'http://vllm-api/proxy', --model, Qwen/Qwen3-8B]")
    assert lint(base + prefixed) == []


def test_model_checked_data_is_schema_valid():
    import json

    import jsonschema

    from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
    from vllmlint.vllm.endpoints import checks_model

    data = load_yaml_data(knowledge_dir() / "server-endpoints.yaml")
    jsonschema.validate(data, json.loads((schemas_dir() / "server-endpoints.schema.json").read_text()))
    assert checks_model("/v1/embeddings", "0.18.0") and checks_model("/v1/embeddings", None)
    assert not checks_model("/v1/responses", "0.9.2") and not checks_model("/v1/responses", None)
    assert not checks_model("/v1/messages", "0.33.0")


def test_the_aibrix_passing_example_is_clean_under_every_rule():
    # `vllm serve --model X` is refused by the serve parser of 0.7.1 (VL107); the rolling update needs a spare
    # GPU (VL707): the example shows neither. (VL810's info on its security settings is not this rule's subject.)
    import yaml

    rule = next(ROOT.glob("rules/VL719-*.yaml"))
    example = next(e for e in yaml.safe_load(rule.read_text())["examples"]["passes"] if "AIBrix" in e["title"])
    result = lint_text(example["source"], "example.yaml", LintOptions())
    assert not result.internal_error
    assert [(f.code, f.span.line, f.span.col) for f in result.findings if f.code != "VL810"] == []
