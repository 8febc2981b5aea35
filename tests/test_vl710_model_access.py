"""VL710 model-access: catches / does not catch, with the position and severity of every finding."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL710"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL710"]


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, filename)]


def pod(model="meta-llama/Llama-3.1-8B-Instruct", env="[]", image="vllm/vllm-openai:v0.10.1", mounts="[]",
        volumes="[]", extra="", command=None):
    command = command or f"[vllm, serve, {model}]"
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  volumes: {volumes}
  containers:
  - name: vllm
    image: {image}
    command: {command}
    env: {env}
    volumeMounts: {mounts}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
{extra}"""


# --- catches -----------------------------------------------------------------------------------------
def test_gated_without_token_points_at_the_model():
    assert found(pod()) == [(9, 28, Severity.WARNING, "no-token:meta-llama/Llama-3.1-8B-Instruct")]
    (finding,) = lint(pod())
    assert "gated Hugging Face repository" in finding.message and "401" in finding.message
    assert "/root/.cache/huggingface" in finding.message


@pytest.mark.parametrize("model", ["google/gemma-2-9b-it", "mistralai/Mistral-7B-Instruct-v0.3",
                                   "meta-llama/Meta-Llama-3.1-70B-Instruct", "META-LLAMA/Llama-3.3-70B-Instruct",
                                   "meta-llama/Llama-3.1-8B"])
def test_gated_repositories(model):
    assert [v for *_, v in found(pod(model))] == [f"no-token:{model}"]


def test_empty_token_points_at_the_value():
    text = pod(env='[{name: HF_TOKEN, value: ""}]')
    assert found(text) == [(10, 35, Severity.WARNING, "empty-token:meta-llama/Llama-3.1-8B-Instruct")]
    assert "HF_TOKEN is empty" in lint(text)[0].message


def test_empty_token_from_a_configmap_of_the_run():
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: env}
data: {HUGGING_FACE_HUB_TOKEN: ""}
---
""" + pod(env="[{name: HUGGING_FACE_HUB_TOKEN, valueFrom: {configMapKeyRef: {name: env, key: HUGGING_FACE_HUB_TOKEN}}}]")
    assert [(line, sev) for line, _, sev, _ in found(text)] == [(15, Severity.WARNING)]


@pytest.mark.parametrize("value", ["1", "true", "ON", "yes"])
@pytest.mark.parametrize("name", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_offline_without_a_cache_volume(name, value):
    text = pod("Qwen/Qwen3-8B", env=f'[{{name: {name}, value: "{value}"}}]')
    ((line, _col, severity, got),) = found(text)
    assert (line, severity, got) == (10, Severity.ERROR, "offline:Qwen/Qwen3-8B")


def test_offline_with_an_unshared_emptydir_at_the_cache():
    text = pod("some-org/unknown-model", env='[{name: HF_HUB_OFFLINE, value: "1"}]', volumes="[{name: c, emptyDir: {}}]",
               mounts="[{name: c, mountPath: /root/.cache}]")
    assert [v for *_, v in found(text)] == ["offline:some-org/unknown-model"]


def test_shell_line_that_runs_only_vllm():
    text = pod(command='[sh, -c, "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192"]')
    assert [(line, col) for line, col, *_ in found(text)] == [(9, 35)]


def test_compose_service_without_token():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: [--model, google/gemma-2-2b-it]
"""
    assert found(text, "compose.yaml") == [(4, 24, Severity.WARNING, "no-token:google/gemma-2-2b-it")]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("env", [
    "[{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}]",
    "[{name: HUGGING_FACE_HUB_TOKEN, value: hf_abc}]",
    "[{name: HF_TOKEN_PATH, value: /secrets/token}]",
    "[{name: HF_ENDPOINT, value: https://hf-mirror.example.com}]",
    "[{name: VLLM_USE_MODELSCOPE, value: 'True'}]",
    "[{name: HF_HOME, valueFrom: {configMapKeyRef: {name: not-in-run, key: home}}}]",
])
def test_token_or_other_source(env):
    assert found(pod(env=env)) == []


@pytest.mark.parametrize("volume", ["{name: c, persistentVolumeClaim: {claimName: hf}}",
                                    "{name: c, hostPath: {path: /mnt/hf}}",
                                    "{name: c, csi: {driver: gcsfuse.csi.storage.gke.io}}",
                                    "{name: c, secret: {secretName: hf-token}}"])
@pytest.mark.parametrize("path", ["/root/.cache/huggingface", "/root/.cache", "/root/.cache/huggingface/token",
                                  "/root/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct"])
def test_a_volume_that_may_hold_the_model_or_token(volume, path):
    text = pod(volumes=f"[{volume}]", mounts=f"[{{name: c, mountPath: {path}}}]")
    assert found(text) == []
    offline = pod("Qwen/Qwen3-8B", env='[{name: HF_HUB_OFFLINE, value: "1"}]', volumes=f"[{volume}]",
                  mounts=f"[{{name: c, mountPath: {path}}}]")
    assert found(offline) == []


def test_volume_at_a_moved_cache():
    text = pod(env="[{name: HF_HOME, value: /models}]", volumes="[{name: m, persistentVolumeClaim: {claimName: m}}]",
               mounts="[{name: m, mountPath: /models}]")
    assert found(text) == []


def test_download_dir_on_a_pvc():
    text = pod(command="[vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --download-dir, /data]",
               volumes="[{name: m, persistentVolumeClaim: {claimName: m}}]", mounts="[{name: m, mountPath: /data}]")
    assert found(text) == []


@pytest.mark.parametrize("model", ["Qwen/Qwen3-8B", "unsloth/Llama-3.1-8B-Instruct",
                                   "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", "/models/llama-3.1-8b-instruct",
                                   "meta-llama/Llama-2-7b-chat-hf"])
def test_not_a_catalogued_gated_repository(model):
    assert found(pod(model)) == []


@pytest.mark.parametrize("image", ["my-registry.example.com/llama-baked:1.0", "python:3.12"])
def test_custom_image_may_hold_the_model(image):
    assert found(pod(image=image)) == []


@pytest.mark.parametrize("script", ['"HF_TOKEN=$(cat /secrets/t) vllm serve meta-llama/Llama-3.1-8B-Instruct"',
                                    '"huggingface-cli login --token x; vllm serve meta-llama/Llama-3.1-8B-Instruct"',
                                    '"source /vault/secrets/env && vllm serve meta-llama/Llama-3.1-8B-Instruct"'])
def test_shell_that_may_set_a_token(script):
    assert found(pod(command=f"[sh, -c, {script}]")) == []


def test_envfrom_of_an_object_not_in_the_run():
    text = pod(extra="    envFrom: [{secretRef: {name: hf}}]\n")
    assert found(text) == []


def test_envfrom_of_a_secret_in_the_run_without_the_token_still_reports():
    text = """apiVersion: v1
kind: Secret
metadata: {name: other}
stringData: {API_KEY: x}
---
""" + pod(extra="    envFrom: [{secretRef: {name: other}}]\n")
    assert [v for *_, v in found(text)] == ["no-token:meta-llama/Llama-3.1-8B-Instruct"]


def test_envfrom_of_a_secret_in_the_run_with_the_token():
    text = """apiVersion: v1
kind: Secret
metadata: {name: hf}
stringData: {HF_TOKEN: x}
---
""" + pod(extra="    envFrom: [{secretRef: {name: hf}}]\n")
    assert found(text) == []


def test_init_container_sharing_the_emptydir():
    text = pod(volumes="[{name: c, emptyDir: {}}]", mounts="[{name: c, mountPath: /root/.cache/huggingface}]",
               extra="  initContainers:\n  - name: fetch\n    image: python:3.12\n"
                     "    volumeMounts: [{name: c, mountPath: /cache}]\n")
    assert found(text) == []


def test_non_root_user_without_hf_home_is_unknown():
    text = pod(extra="  securityContext: {runAsUser: 1000}\n")
    assert found(text) == []


def test_kserve_storage_uri_and_runtimes():
    text = """apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm}
spec:
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.10.1
    args: [--model, meta-llama/Llama-3.1-8B-Instruct]
"""
    assert found(text) == []


def test_compose_with_env_file_or_volumes():
    for extra in ("    env_file: [.env]\n", "    volumes: [~/.cache/huggingface:/root/.cache/huggingface]\n"):
        text = f"""services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: [--model, google/gemma-2-2b-it]
{extra}"""
        assert found(text, "compose.yaml") == []


def test_compose_token_from_the_host():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: [--model, google/gemma-2-2b-it]
    environment: [HF_TOKEN]
"""
    assert found(text, "compose.yaml") == []


def test_hf_token_option():
    assert found(pod(command="[vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --hf-token, abc]")) == []


# --- the accessors VL710 added to the model ---------------------------------------------------------
def _invocations(text):
    from vllmlint.engine import Linter
    linter = Linter(LintOptions(select=["VL710"]))
    linter.add_text(text, "example.yaml", ".yaml", "example.yaml")
    linter.run()
    return linter.world.invocations


@pytest.mark.parametrize("script, alone", [
    ("vllm serve m --port 8000", True), ("exec vllm serve m", True),
    ("HF_TOKEN=x vllm serve m", False), ("env HF_HOME=/c vllm serve m", False),
    ("export A=1; vllm serve m", False), ("huggingface-cli login && vllm serve m", False),
])
def test_runs_alone(script, alone):
    from vllmlint.vllm.invocation import runs_alone
    (invocation,) = _invocations(pod(command=f'[sh, -c, "{script}"]'))
    assert runs_alone(invocation) is alone


def test_exec_form_runs_alone_and_upstream_images():
    from vllmlint.vllm.images import parse_image
    from vllmlint.vllm.invocation import runs_alone
    from vllmlint.vllm.release import upstream_image
    (invocation,) = _invocations(pod())
    assert runs_alone(invocation)
    assert upstream_image(parse_image("docker.io/vllm/vllm-openai:v0.10.1"))
    assert upstream_image(parse_image("public.ecr.aws/acme/vllm/vllm-tpu:latest"))
    assert not upstream_image(parse_image("lmcache/vllm-openai:2025-05-05-v1")) and not upstream_image(None)


def test_env_from_refs():
    from vllmlint.k8s.pod import env_from_refs
    (invocation,) = _invocations(pod(extra="    envFrom: [{secretRef: {name: hf}}, {prefix: X_, configMapRef: {name: c, "
                                           "optional: true}}]\n"))
    refs = env_from_refs(invocation.container.node)
    assert [(r.kind, r.name, r.prefix, r.optional) for r in refs] == [("Secret", "hf", "", False),
                                                                      ("ConfigMap", "c", "X_", True)]


def test_a_config_file_may_set_hf_token():
    # vLLM inserts the file's options (hf-token, download-dir): vllm/utils/__init__.py 0.10.1.1 lines 1953-1980.
    assert found(pod(command="[vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --config, /etc/vllm/c.yaml]")) == []
    assert found(pod(env="[{name: HF_HUB_OFFLINE, value: '1'}]",
                     command="[vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --config, /etc/vllm/c.yaml]")) == []
    assert found(pod(command="[vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '4096']")) == [
        (9, 28, Severity.WARNING, "no-token:meta-llama/Llama-3.1-8B-Instruct")]
