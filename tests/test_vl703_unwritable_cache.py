"""VL703 unwritable-cache: catches / does not catch, with the position of every finding."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL703"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL703"]


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, filename)]


def pod(security="{readOnlyRootFilesystem: true}", image="vllm/vllm-openai:v0.11.0", env="[]", mounts="[]",
        volumes="[]", command="[vllm, serve, Qwen/Qwen3-8B]", pod_security="{}", head=""):
    return f"""{head}apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  securityContext: {pod_security}
  containers:
  - name: vllm
    image: {image}
    command: {command}
    env: {env}
    securityContext: {security}
    volumeMounts: {mounts}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
  volumes: {volumes}
"""


HUB_ROOT = "hf-hub:/root/.cache/huggingface/hub"
CACHE_ROOT = "vllm-cache-root:/root/.cache/vllm"
CACHE = "[{name: cache, mountPath: /cache}, {name: tmp, mountPath: /tmp}]"
CACHE_VOLUME = "[{name: cache, emptyDir: {}}, {name: tmp, emptyDir: {}}]"


# --- catches -----------------------------------------------------------------------------------------
def test_read_only_root_with_a_hub_download():
    assert found(pod()) == [(11, 47, Severity.WARNING, HUB_ROOT)]


def test_message_names_the_directory_the_variable_and_the_others():
    (finding,) = lint(pod())
    assert finding.message.startswith("`/root/.cache/huggingface/hub` (Hugging Face hub cache) is not writable: "
                                      "`readOnlyRootFilesystem: true`")
    assert " It is the default under HOME, moved by HF_HOME. " in finding.message
    assert "vLLM downloads `Qwen/Qwen3-8B` into it" in finding.message
    assert "Also not writable: `/root/.cache/vllm` (vLLM cache root" in finding.message


def test_hub_on_a_volume_but_the_compile_cache_not():
    text = pod(env="[{name: HF_HOME, value: /cache/hf}]", mounts=CACHE, volumes=CACHE_VOLUME)
    assert found(text) == [(11, 47, Severity.WARNING, CACHE_ROOT)]


def test_local_model_compile_cache_only():
    text = pod(command="[vllm, serve, /models/qwen]", mounts="[{name: m, mountPath: /models, readOnly: true}]",
               volumes="[{name: m, persistentVolumeClaim: {claimName: models}}]")
    assert found(text) == [(11, 47, Severity.WARNING, CACHE_ROOT)]


def test_variable_pointing_at_a_read_only_mount():
    text = pod(security="{}", env="[{name: HF_HOME, value: /etc/hf}]",
               mounts="[{name: cfg, mountPath: /etc/hf}]", volumes="[{name: cfg, configMap: {name: hf}}]")
    assert found(text) == []  # root on a writable root filesystem: the rule does not judge explicit paths
    text = pod(env="[{name: HF_HOME, value: /etc/hf}]", mounts="[{name: cfg, mountPath: /etc/hf}]",
               volumes="[{name: cfg, configMap: {name: hf}}]")
    assert found(text)[0][3] == "hf-hub:/etc/hf/hub"


def test_non_root_uid_without_a_passwd_entry_has_home_slash():
    text = pod(security="{}", pod_security="{runAsUser: 1001, runAsGroup: 1001}")
    assert found(text) == [(5, 32, Severity.WARNING, "hf-hub:/.cache/huggingface/hub")]
    (finding,) = lint(text)
    assert "runs as uid 1001, whose HOME is `/`" in finding.message


def test_uid_1000_on_ubuntu_22_04_images():
    assert found(pod(security="{runAsUser: 1000}", image="vllm/vllm-openai:v0.26.0"))[0][3] == \
        "hf-hub:/.cache/huggingface/hub"


def test_nobody():
    assert found(pod(security="{runAsUser: 65534}"))[0][3] == "hf-hub:/nonexistent/.cache/huggingface/hub"


def test_run_as_non_root_on_a_root_image_is_an_error():
    text = pod(security="{runAsNonRoot: true}")
    assert found(text) == [(11, 37, Severity.ERROR, "runAsNonRoot:image-root")]
    (finding,) = lint(text)
    assert "the kubelet refuses to start the container" in finding.message


def test_flashinfer_jit_is_info():
    text = pod(env="[{name: XDG_CACHE_HOME, value: /cache}]", mounts=CACHE, volumes=CACHE_VOLUME)
    assert found(text) == [(11, 47, Severity.INFO, "flashinfer-jit:/root/.cache/flashinfer")]


def test_triton_with_enforce_eager_is_info():
    text = pod(env="[{name: XDG_CACHE_HOME, value: /cache}, {name: FLASHINFER_WORKSPACE_BASE, value: /cache}]",
               mounts=CACHE, volumes=CACHE_VOLUME, command="[vllm, serve, Qwen/Qwen3-8B, --enforce-eager]")
    assert found(text) == [(11, 47, Severity.INFO, "triton:/root/.triton/cache")]


# --- does not catch ----------------------------------------------------------------------------------
def test_the_audited_deployment_is_silent_at_warning_and_error():
    # Every cache vLLM writes at start-up is moved under /cache (an emptyDir): HF_HOME, VLLM_CACHE_ROOT,
    # XDG_CACHE_HOME; /tmp is an emptyDir too. Only FlashInfer's JIT cache, which ignores XDG_CACHE_HOME,
    # stays under HOME (uid 1000: /home/ubuntu on 24.04 images, `/` on older ones, both read-only): info.
    text = (ROOT / "fixtures" / "audited" / "single-gpu-deployment.yaml").read_text(encoding="utf-8")
    assert found(text, "single-gpu-deployment.yaml") == [
        (72, 37, Severity.INFO, "flashinfer-jit:/home/ubuntu/.cache/flashinfer")]


def test_everything_on_volumes():
    env = ("[{name: HF_HOME, value: /cache/hf}, {name: VLLM_CACHE_ROOT, value: /cache/vllm},"
           " {name: FLASHINFER_WORKSPACE_BASE, value: /cache}]")
    assert found(pod(env=env, mounts=CACHE, volumes=CACHE_VOLUME)) == []


def test_an_empty_dir_at_the_default_home_cache():
    assert found(pod(mounts="[{name: c, mountPath: /root/.cache}, {name: t, mountPath: /tmp}]",
                     volumes="[{name: c, emptyDir: {}}, {name: t, emptyDir: {}}]")) == []


def test_an_empty_dir_at_slash_cache_for_an_unknown_uid():
    text = pod(security="{runAsUser: 1001}", mounts="[{name: c, mountPath: /.cache}]", volumes="[{name: c, emptyDir: {}}]")
    assert found(text) == []


@pytest.mark.parametrize("security", ["{}", "{readOnlyRootFilesystem: false}", "{runAsUser: 0}",
                                      "{runAsUser: 2000}", "{runAsNonRoot: true, runAsUser: 2000}"])
def test_writable(security):
    assert found(pod(security=security, image="vllm/vllm-openai:v0.29.0")) == []


def test_uid_1000_owns_its_home_on_ubuntu_24_04():
    assert found(pod(security="{runAsUser: 1000}", image="vllm/vllm-openai:v0.26.0-ubuntu2404")) == []
    assert found(pod(security="{runAsUser: 1000}", image="vllm/vllm-openai:v0.29.0")) == []


@pytest.mark.parametrize("image", ["myorg/vllm:1.0", "quay.io/rh-aiservices-bu/vllm-openai-ubi9:0.4.2",
                                   "vllm/vllm-openai-rocm:v0.23.0", "vllm/vllm-tpu:nightly"])
def test_unknown_user(image):
    assert found(pod(image=image)) == []


@pytest.mark.parametrize("env", ["[{name: HF_HUB_OFFLINE, value: '1'}]", "[{name: TRANSFORMERS_CACHE, value: /tmp/t}]",
                                 "[{name: HF_HOME, valueFrom: {secretKeyRef: {name: s, key: k}}}]"])
def test_hub_cache_not_certain(env):
    assert [f[3] for f in found(pod(env=env))] == [CACHE_ROOT]


def test_hub_download_dir_and_enforce_eager():
    text = pod(command="[vllm, serve, Qwen/Qwen3-8B, --download-dir, /models, --enforce-eager]",
               env="[{name: FLASHINFER_WORKSPACE_BASE, value: /tmp}, {name: TRITON_CACHE_DIR, value: /tmp/t}]",
               mounts="[{name: t, mountPath: /tmp}, {name: m, mountPath: /models}]",
               volumes="[{name: t, emptyDir: {}}, {name: m, emptyDir: {}}]")
    assert found(text) == []


@pytest.mark.parametrize("flag", ["-O0", "--compilation-config={\"level\": 0}", "-O", "--optimization-level=0"])
def test_compile_options_are_not_judged(flag):
    text = pod(env="[{name: HF_HOME, value: /cache/hf}, {name: FLASHINFER_WORKSPACE_BASE, value: /cache}]",
               mounts=CACHE, volumes=CACHE_VOLUME, command=f"[vllm, serve, Qwen/Qwen3-8B, '{flag}']")
    assert found(text) == []


def test_old_release_does_not_compile():
    text = pod(image="vllm/vllm-openai:v0.7.3", env="[{name: HF_HOME, value: /cache/hf}]", mounts=CACHE,
               volumes=CACHE_VOLUME, command="[python3, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen3-8B]")
    assert [f[3] for f in found(text)] == ["flashinfer-jit:/root/.cache/flashinfer"]


def test_openshift_arbitrary_uid_is_silent():
    route = "apiVersion: route.openshift.io/v1\nkind: Route\nmetadata: {name: vllm}\nspec: {to: {kind: Service, name: vllm}}\n---\n"
    assert found(pod(security="{runAsNonRoot: true}", head=route)) == []


def test_home_from_env():
    assert found(pod(security="{runAsUser: 1001}", env="[{name: HOME, value: /tmp/home}]")) == []
    # A HOME set by hand elsewhere may be group-writable: not judged on a writable root filesystem.
    assert found(pod(security="{runAsUser: 1001}", env="[{name: HOME, value: /home/vllm}]",
                     image="vllm/vllm-openai:v0.29.0")) == []


def test_compose_is_not_checked():
    text = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.1\n    read_only: true\n    command: [--model, m/x]\n"
    assert found(text, "compose.yaml") == []


def test_env_from_a_config_map_not_in_the_run():
    text = pod().replace("    env: []\n", "    env: []\n    envFrom: [{configMapRef: {name: vllm-env}}]\n")
    assert found(text) == []
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vllm-env}\ndata: {HF_HOME: /cache/hf}\n---\n"
    assert [f[3] for f in found(pod(head=config_map).replace(
        "    env: []\n", "    env: []\n    envFrom: [{configMapRef: {name: vllm-env}}]\n"))] == ["hf-hub:/cache/hf/hub"]


def test_shell_script_that_moves_a_cache():
    assert found(pod(command="[sh, -c, 'export HF_HOME=/tmp/hf; vllm serve Qwen/Qwen3-8B']")) == []
    assert found(pod(command="[sh, -c, 'HOME=/tmp exec vllm serve Qwen/Qwen3-8B']")) == []
    assert found(pod(command="[sh, -c, 'exec vllm serve Qwen/Qwen3-8B']")) == [(11, 47, Severity.WARNING, HUB_ROOT)]


def test_severity_override_lowers_the_error():
    result = lint_text(pod(security="{runAsNonRoot: true}"), "example.yaml",
                       LintOptions(select=["VL703"], severity={"VL703": "info"}))
    assert [f.severity for f in result.findings if f.code == "VL703"] == [Severity.INFO]


def test_run_as_non_root_with_uid_0_is_an_error():
    assert found(pod(security="{runAsNonRoot: true, runAsUser: 0}")) == [(11, 37, Severity.ERROR, "runAsNonRoot:runAsUser-0")]


def test_offline_from_a_secret_is_not_a_download():
    text = pod(env="[{name: HF_HUB_OFFLINE, valueFrom: {configMapKeyRef: {name: missing, key: k}}}]")
    assert [f[3] for f in found(text)] == [CACHE_ROOT]


# --- the temporary directory (ZeroMQ IPC sockets) -----------------------------------------------------
HOME_CACHE = "[{name: c, mountPath: /root/.cache}]"
HOME_VOLUME = "[{name: c, emptyDir: {}}]"


def test_read_only_root_without_a_writable_temporary_directory():
    assert found(pod(mounts=HOME_CACHE, volumes=HOME_VOLUME)) == [(11, 47, Severity.WARNING, "vllm-ipc:/tmp")]
    (finding,) = lint(pod(mounts=HOME_CACHE, volumes=HOME_VOLUME))
    assert finding.message.startswith("`/tmp` (vLLM's ZeroMQ IPC sockets) is not writable")
    assert " It is Python's temporary directory, moved by TMPDIR or VLLM_RPC_BASE_PATH." in finding.message


@pytest.mark.parametrize("extra_mount", ["{name: t, mountPath: /var/tmp}", "{name: t, mountPath: /vllm-workspace}"])
def test_any_writable_candidate_will_do(extra_mount):
    text = pod(mounts=f"[{{name: c, mountPath: /root/.cache}}, {extra_mount}]",
               volumes="[{name: c, emptyDir: {}}, {name: t, emptyDir: {}}]")
    assert found(text) == []


def test_tmpdir_and_working_dir():
    mounts = "[{name: c, mountPath: /root/.cache}, {name: s, mountPath: /scratch}]"
    volumes = "[{name: c, emptyDir: {}}, {name: s, emptyDir: {}}]"
    assert found(pod(mounts=mounts, volumes=volumes, env="[{name: TMPDIR, value: /scratch}]")) == []
    assert found(pod(mounts=mounts, volumes=volumes).replace("    env: []\n", "    env: []\n    workingDir: /scratch\n")) == []
    assert found(pod(mounts=HOME_CACHE, volumes=HOME_VOLUME, env="[{name: TMPDIR, value: /nope}]")) == [
        (11, 47, Severity.WARNING, "vllm-ipc:/nope")]


def test_rpc_base_path():
    text = pod(mounts=HOME_CACHE, volumes=HOME_VOLUME, env="[{name: VLLM_RPC_BASE_PATH, value: /root/.cache/rpc}]")
    assert found(text) == []
    text = pod(mounts=HOME_CACHE, volumes=HOME_VOLUME, env="[{name: VLLM_RPC_BASE_PATH, value: /run/vllm}]")
    assert found(text) == [(11, 47, Severity.WARNING, "vllm-ipc:/run/vllm")]


@pytest.mark.parametrize("flag", ["--headless", "--data-parallel-size=2", "--api-server-count=2"])
def test_tcp_setups_are_not_judged(flag):
    assert found(pod(mounts=HOME_CACHE, volumes=HOME_VOLUME, command=f"[vllm, serve, Qwen/Qwen3-8B, '{flag}']")) == []


def test_old_releases_are_not_judged_for_the_temporary_directory():
    text = pod(image="vllm/vllm-openai:v0.7.3", mounts=HOME_CACHE, volumes=HOME_VOLUME,
               command="[python3, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen3-8B]")
    assert found(text) == []  # the V0 engine of 0.7.x: not judged (its IPC can be turned off)


# --- a --config file may set any option ---------------------------------------------------------------
CONFIG_REPRO = """apiVersion: v1
kind: ConfigMap
metadata: {name: vllm-config}
data:
  config.yaml: |
    enforce-eager: true
    download-dir: /models
---
apiVersion: apps/v1
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
        args: [--model, MODEL, --config, /etc/vllm/config.yaml]
        securityContext: {readOnlyRootFilesystem: true}
        resources: {limits: {nvidia.com/gpu: 1}}
        volumeMounts:
        - {name: hf, mountPath: /root/.cache/huggingface}
        - {name: tmp, mountPath: /tmp}
        - {name: models, mountPath: /models}
        - {name: cfg, mountPath: /etc/vllm}
      volumes:
      - {name: hf, emptyDir: {}}
      - {name: tmp, emptyDir: {}}
      - {name: models, persistentVolumeClaim: {claimName: models}}
      - {name: cfg, configMap: {name: vllm-config}}
"""


def test_config_file_may_turn_compilation_off():
    # `enforce-eager: true` in the file: the compile cache is not certain; FlashInfer's JIT cache stays info.
    text = CONFIG_REPRO.replace("MODEL", "Qwen/Qwen2.5-7B-Instruct")
    assert found(text) == [(21, 51, Severity.INFO, "flashinfer-jit:/root/.cache/flashinfer")]


def test_config_file_may_move_the_downloads_and_the_sockets():
    # the file may set download-dir, load-format, headless, ...: neither the hub cache nor the IPC directory
    # is certain; only the info about FlashInfer's JIT cache remains
    text = pod(command="[vllm, serve, Qwen/Qwen3-8B, --config, /etc/vllm/config.yaml]")
    assert found(text) == [(11, 47, Severity.INFO, "flashinfer-jit:/root/.cache/flashinfer")]


def test_config_with_equals_is_not_read():
    # vLLM pulls the file only for the word `--config` (`'--config' in args`); `--config=FILE` is parsed as an
    # option and the file is ignored: judged as without it
    text = pod(command="[vllm, serve, Qwen/Qwen3-8B, --config=/etc/vllm/config.yaml]")
    assert found(text) == [(11, 47, Severity.WARNING, HUB_ROOT)]


# --- 0.8.0-0.10.x may fall back to the V0 engine, which does not compile ---------------------------------
# a local model and an emptyDir at /tmp (the IPC sockets: V0's MQLLMEngine binds them there too): only the
# compile cache is judged
LOCAL = dict(command="[vllm, serve, /models/qwen]",
             mounts="[{name: m, mountPath: /models, readOnly: true}, {name: tmp, mountPath: /tmp}]",
             volumes="[{name: m, persistentVolumeClaim: {claimName: models}}, {name: tmp, emptyDir: {}}]")


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.8.5", "vllm/vllm-openai:v0.9.2",
                                   "vllm/vllm-openai:v0.10.1"])
def test_compile_cache_of_a_release_that_may_fall_back_is_info(image):
    (finding,) = lint(pod(image=image, **LOCAL))
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == (11, 47, Severity.INFO,
                                                                                      CACHE_ROOT)
    assert "falls back to V0, which does not compile, when VLLM_USE_V1 is unset" in finding.message


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.10.1", "vllm/vllm-openai:v0.11.0"])
def test_compile_cache_is_certain_with_v1_forced_or_without_v0(image):
    text = pod(image=image, env="[{name: VLLM_USE_V1, value: '1'}]", **LOCAL)
    assert found(text) == [(11, 47, Severity.WARNING, CACHE_ROOT)]
    assert found(pod(image="vllm/vllm-openai:v0.11.0", **LOCAL)) == [(11, 47, Severity.WARNING, CACHE_ROOT)]


def test_hub_download_on_a_release_that_may_fall_back():
    # the hub cache is certain; the compile cache is not, so it is not listed with it
    (finding,) = lint(pod(image="vllm/vllm-openai:v0.10.1", mounts="[{name: tmp, mountPath: /tmp}]",
                          volumes="[{name: tmp, emptyDir: {}}]"))
    assert (finding.severity, finding.value) == (Severity.WARNING, HUB_ROOT)
    assert "/root/.cache/vllm" not in finding.message


def test_a_digest_may_be_a_release_that_falls_back():
    text = pod(image="vllm/vllm-openai@sha256:" + "a" * 64, env="[{name: HF_HOME, value: /cache/hf}]", mounts=CACHE,
               volumes=CACHE_VOLUME)
    assert found(text) == [(11, 47, Severity.INFO, CACHE_ROOT)]
    assert found(text.replace("env: [", "env: [{name: VLLM_USE_V1, value: '1'}, ")) == [
        (11, 47, Severity.WARNING, CACHE_ROOT)]


# --- a read-only volume at the hub cache is a cache filled beforehand ------------------------------------
MODELS_TMP = "[{name: models, mountPath: /models%s}, {name: tmp, mountPath: /tmp}, {name: c, mountPath: /root/.cache}]"
TMP_VOLUMES = "{name: tmp, emptyDir: {}}, {name: c, emptyDir: {}}"


@pytest.mark.parametrize("mount, volume", [
    (", readOnly: true", "{name: models, persistentVolumeClaim: {claimName: models}}"),
    ("", "{name: models, persistentVolumeClaim: {claimName: models, readOnly: true}}"),
    ("", "{name: models, csi: {driver: s3.csi.aws.com, readOnly: true}}"),
    ("", "{name: models, image: {reference: 'registry.example.com/models/qwen3-8b:1'}}"),
])
def test_read_only_volume_at_the_hub_cache_is_info(mount, volume):
    text = pod(env="[{name: HF_HOME, value: /models}]", mounts=MODELS_TMP % mount,
               volumes=f"[{volume}, {TMP_VOLUMES}]")
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == (
        12, 46, Severity.INFO, "read-only-hub:/models/hub")
    assert "HF_HUB_OFFLINE=1" in finding.message and "no writable volume" not in finding.message
    assert "it is on the volume `models` mounted at `/models`, which is read-only" in finding.message


def test_read_only_hub_cache_offline_is_silent():
    text = pod(env="[{name: HF_HOME, value: /models}, {name: HF_HUB_OFFLINE, value: '1'}]",
               mounts=MODELS_TMP % ", readOnly: true",
               volumes=f"[{{name: models, persistentVolumeClaim: {{claimName: models}}}}, {TMP_VOLUMES}]")
    assert found(text) == []


def test_a_config_map_at_the_hub_cache_is_named_as_a_read_only_volume():
    text = pod(env="[{name: HF_HOME, value: /etc/hf}]", mounts="[{name: cfg, mountPath: /etc/hf}]",
               volumes="[{name: cfg, configMap: {name: hf}}]")
    (finding,) = lint(text)
    assert (finding.severity, finding.value) == (Severity.WARNING, "hf-hub:/etc/hf/hub")
    assert "no writable volume" not in finding.message
    assert ("it is on the volume `cfg` mounted at `/etc/hf`, which is read-only (the kubelet mounts configMap "
            "volumes read-only)") in finding.message


def test_compile_cache_on_a_read_only_pvc_source():
    text = pod(env="[{name: VLLM_CACHE_ROOT, value: /models/vllm}]", command="[vllm, serve, /models/qwen]",
               mounts="[{name: models, mountPath: /models}, {name: tmp, mountPath: /tmp}]",
               volumes="[{name: models, persistentVolumeClaim: {claimName: models, readOnly: true}}, "
                       "{name: tmp, emptyDir: {}}]")
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col, finding.severity, finding.value) == (
        11, 47, Severity.WARNING, "vllm-cache-root:/models/vllm")
    assert "its persistentVolumeClaim source sets `readOnly: true`" in finding.message
