"""VL717 port-collision: catches / does not catch, with the position of every finding."""
from pathlib import Path

import jsonschema
import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm.ports import vllm_port_collides

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL717"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL717"]


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, filename)]


def pod(vllm_args="[vllm, serve, Qwen/Qwen3-8B]", sidecar="", image="vllm/vllm-openai:v0.10.1", env="[]",
        init=""):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  initContainers: {init or "[]"}
  containers:
  - name: vllm
    image: {image}
    command: {vllm_args}
    env: {env}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
{sidecar}"""


PROXY = """  - name: proxy
    image: envoyproxy/envoy:v1.31.0
    ports:
    - {containerPort: 8000}
"""


# --- catches -----------------------------------------------------------------------------------------
def test_sidecar_declares_the_default_port():
    assert found(pod(sidecar=PROXY)) == [(15, 23, Severity.ERROR, "vllm/proxy:8000")]


def test_sidecar_declares_the_explicit_port():
    text = pod("[vllm, serve, Qwen/Qwen3-8B, --port, '9000']", PROXY.replace("8000", "9000"))
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col) == (15, 23)
    assert "`--port 9000`" in finding.message and "container `vllm`" in finding.message


def test_native_sidecar_counts():
    init = """
  - name: router
    image: ghcr.io/llm-d/llm-d-routing-sidecar:v0.2.0
    restartPolicy: Always
    ports: [{containerPort: 8000}]"""
    assert found(pod(init=init)) == [(9, 29, Severity.ERROR, "vllm/router:8000")]


def test_two_vllm_containers_on_one_port_point_at_the_second():
    sidecar = """  - name: decode
    image: vllm/vllm-openai:v0.10.1
    command: [vllm, serve, Qwen/Qwen3-8B, --port, "8000"]
"""
    assert found(pod(sidecar=sidecar)) == [(14, 51, Severity.ERROR, "vllm/decode:8000")]


def two_servers(image_a="vllm/vllm-openai:v0.10.1.1", image_b=None, extra_a="", extra_b="", user_a="", user_b=""):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: two}}
spec:
  containers:
  - name: big
    image: {image_a}
    args: [--model, Qwen/Qwen2.5-1.5B-Instruct{extra_a}]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}{user_a}
  - name: small
    image: {image_b or image_a}
    args: [--model, Qwen/Qwen2.5-0.5B-Instruct{extra_b}]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}{user_b}
"""


REUSE = "sets SO_REUSEPORT on its API socket, so both servers bind the port and the kernel splits"
FAILS = "the second server to start fails with \"address already in use\"."


def test_two_vllm_servers_with_so_reuseport_both_bind():
    # 0.10.1.1 vllm/entrypoints/openai/api_server.py:1774 sets SO_REUSEPORT on the API socket
    (finding,) = lint(two_servers())
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == \
        (12, 12, Severity.ERROR, "big/small:8000")
    assert "vLLM 0.10.1.1 " + REUSE in finding.message
    assert "address already in use" not in finding.message


@pytest.mark.parametrize("image_a, image_b, extra", [
    ("vllm/vllm-openai:v0.7.3", None, ""),
    ("vllm/vllm-openai:v0.22.0", None, ""),
    ("vllm/vllm-openai:v0.9.2", "vllm/vllm-openai:v0.18.0", ""),
    ("vllm/vllm-openai:v0.26.0", None, ", --api-server-count, '2'"),  # several API servers: reuse_port=True
])
def test_so_reuseport_releases(image_a, image_b, extra):
    (finding,) = lint(two_servers(image_a, image_b, extra, extra))
    assert REUSE in finding.message and FAILS not in finding.message


@pytest.mark.parametrize("image_a, image_b, extra", [
    ("vllm/vllm-openai:v0.7.0", None, ""),  # SO_REUSEADDR only
    ("vllm/vllm-openai:v0.6.3", None, ""),
    ("vllm/vllm-openai:v0.26.0", None, ""),  # one API server: reuse_port=False
    ("vllm/vllm-openai:v0.33.0", None, ""),
    ("vllm/vllm-openai:v0.10.1.1", "vllm/vllm-openai:v0.7.0", ""),  # only one socket sets it
    ("vllm/vllm-openai:v0.33.0", None, ", --api-server-count, '1'"),
])
def test_second_bind_fails(image_a, image_b, extra):
    (finding,) = lint(two_servers(image_a, image_b, extra, extra))
    assert (finding.span.line, finding.span.col, finding.severity) == (12, 12, Severity.ERROR)
    assert finding.message.endswith(FAILS + " Give one of them another `--port`.")


def test_so_reuseport_across_users_fails():
    text = two_servers(user_a="\n    securityContext: {runAsUser: 1000}")
    (finding,) = lint(text)
    assert "different users" in finding.message and FAILS in finding.message


@pytest.mark.parametrize("image_a, extra", [
    ("vllm/vllm-openai:latest", ""),  # release unknown
    ("vllm/vllm-openai:v0.7.1", ""),  # not read
    ("vllm/vllm-openai:v0.24.0", ""),
    ("vllm/vllm-openai:v0.26.0", ", --data-parallel-size, '2'"),  # api-server-count defaults to the DP size
])
def test_unknown_reuse_port_says_both_outcomes(image_a, extra):
    (finding,) = lint(two_servers(image_a, None, extra, extra))
    assert (finding.span.line, finding.span.col, finding.severity) == (12, 12, Severity.ERROR)
    assert "address already in use\", or, where both releases set SO_REUSEPORT" in finding.message


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.5.5", "vllm/vllm-openai:v0.6.1.post2", "vllm/vllm-openai:v0.4.2"])
def test_vllm_port_equal_to_api_port_before_062(image):
    text = pod("[python3, -m, vllm.entrypoints.openai.api_server, --model, m/m, --port, '9000']",
               image=image, env="[{name: VLLM_PORT, value: '9000'}]")
    assert found(text) == [(10, 36, Severity.ERROR, "VLLM_PORT=9000")]


def test_vllm_port_default_api_port():
    text = pod(image="vllm/vllm-openai:v0.6.1", env="[{name: VLLM_PORT, value: '8000'}]")
    (finding,) = lint(text)
    assert "fixed in 0.6.2" in finding.message and "vLLM 0.6.1 " in finding.message


def test_vllm_port_from_a_configmap_points_at_the_env_entry():
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: ports}
data: {VLLM_PORT: "8000"}
---
""" + pod(image="vllm/vllm-openai:v0.6.0", env="[{name: VLLM_PORT, valueFrom: {configMapKeyRef: {name: ports, key: VLLM_PORT}}}]")
    assert found(text) == [(15, 11, Severity.ERROR, "VLLM_PORT=8000")]


def test_vllm_port_in_compose():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.6.1
    command: [--model, m/m]
    environment:
      VLLM_PORT: "8000"
"""
    assert found(text, "compose.yaml") == [(6, 18, Severity.ERROR, "VLLM_PORT=8000")]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod(sidecar=PROXY.replace("8000", "9090")),  # another port
    pod(sidecar=PROXY.replace("{containerPort: 8000}", "{containerPort: 8000, protocol: UDP}")),
    pod("[vllm, serve, Qwen/Qwen3-8B, --port, '8001']", PROXY),
    pod("[vllm, serve, Qwen/Qwen3-8B, --port, $(PORT)]", PROXY),  # unresolved
    pod("[vllm, serve, Qwen/Qwen3-8B, --headless, --data-parallel-start-rank, '1']", PROXY),
    pod("[vllm, serve, Qwen/Qwen3-8B, --uds, /tmp/vllm.sock]", PROXY),
    # an ordinary init container has exited before vLLM starts
    pod(init="[{name: probe, image: busybox, ports: [{containerPort: 8000}]}]"),
    # the vLLM container's own declaration of its port
    pod(sidecar="").replace("    env: []", "    env: []\n    ports: [{containerPort: 8000}]"),
    # a client's --port is where it connects
    pod(sidecar="  - {name: client, image: 'python:3.11', command: [python, bench.py, --port, '8000']}\n"),
    # VLLM_PORT: fixed from 0.6.2, unknown release, another number, the Service-link form (VL110)
    pod(image="vllm/vllm-openai:v0.6.2", env="[{name: VLLM_PORT, value: '8000'}]"),
    pod(image="vllm/vllm-openai:v0.10.1", env="[{name: VLLM_PORT, value: '8000'}]"),
    pod(image="vllm/vllm-openai:latest", env="[{name: VLLM_PORT, value: '8000'}]"),
    pod(image="registry.example.com/vllm:prod", env="[{name: VLLM_PORT, value: '8000'}]"),
    pod(image="vllm/vllm-openai:v0.6.1", env="[{name: VLLM_PORT, value: '8004'}]"),
    pod(image="vllm/vllm-openai:v0.6.1", env="[{name: VLLM_PORT, value: 'tcp://10.0.0.1:8000'}]"),
    pod(image="vllm/vllm-openai:v0.6.1", env="[{name: VLLM_PORT, valueFrom: {secretKeyRef: {name: s, key: k}}}]"),
    # the demo server is another program
    pod("[python3, -m, vllm.entrypoints.api_server, --model, m/m]", image="vllm/vllm-openai:v0.6.1",
        env="[{name: VLLM_PORT, value: '8000'}]"),
])
def test_silent(text):
    assert lint(text) == []


def test_two_commands_of_one_container_are_not_compared():
    text = pod("[sh, -c, 'if [ -n \"$A\" ]; then vllm serve a/a; else vllm serve b/b; fi']")
    assert lint(text) == []


def test_compose_services_have_their_own_network():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: [--model, m/m]
  proxy:
    image: envoyproxy/envoy:v1.31.0
    ports: ["8000:8000"]
"""
    assert lint(text, "compose.yaml") == []


# --- the data ------------------------------------------------------------------------------------------
def test_ports_data_is_schema_valid_and_ordered():
    import json

    data = load_yaml_data(knowledge_dir() / "networking.yaml")
    schema = json.loads((schemas_dir() / "networking.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert vllm_port_collides("0.6.1.post2", "serve") and not vllm_port_collides("0.6.2", "serve")
    assert not vllm_port_collides("0.5.5", "demo-api-server")
    reuse = data["api_reuse_port"]
    assert reuse["last_without"] == "0.7.0" and reuse["first_always"] == "0.7.3"
    assert reuse["last_always"] == "0.22.0" and reuse["first_multi_server_only"] == "0.26.0"


def test_audited_fixtures_are_silent():
    from vllmlint.engine import Linter

    for chapter in ("audited", "original", "own"):
        linter = Linter(LintOptions(select=["VL717"]))
        for path in sorted((ROOT / "fixtures" / chapter).iterdir()):
            if path.is_file():
                linter.add_file(path, path.name)
        assert [f for f in linter.run().findings if f.code == "VL717"] == [], chapter  # VL001 of broken.yaml is never hidden


# --- a container without a name is named by its place -------------------------------------------------------
def test_a_nameless_container_is_named_by_its_index():
    # Found on a real file: the message said "Container `` declares containerPort 8000".
    nameless = PROXY.replace("  - name: proxy\n    image:", "  - image:")
    (finding,) = lint(pod(sidecar=nameless))
    assert (finding.span.line, finding.span.col) == (14, 23)
    assert "``" not in finding.message and "``" not in finding.value
    assert finding.message.startswith("The unnamed container `containers[1]` declares containerPort 8000")
    assert finding.value == "vllm/containers[1]:8000"


def test_two_nameless_vllm_containers_are_named_by_their_index():
    text = pod("[vllm, serve, Qwen/Qwen3-8B]").replace("  - name: vllm\n    image:", "  - image:") + (
        "  - image: vllm/vllm-openai:v0.10.1\n    command: [vllm, serve, Qwen/Qwen3-0.6B]\n")
    (finding,) = lint(text)
    assert finding.message.startswith("The unnamed containers `containers[0]` and `containers[1]` both run vLLM")
    assert finding.value == "containers[0]/containers[1]:8000"
