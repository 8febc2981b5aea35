"""VL810 pod-hardening: the audited chapter's security baseline for vLLM containers, one info finding for what is
missing, a finding at each setting written the unsafe way (privileged and SYS_ADMIN: warnings)."""
import json

import jsonschema

from conftest import FIXTURES
from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, lint_paths, lint_text
from vllmlint.finding import Severity

ALL = "missing:allowPrivilegeEscalation,capabilities,seccompProfile,runAsUser,automountServiceAccountToken"


def lint(text, severity=None):
    result = lint_text(text, "example.yaml", LintOptions(select=["VL810"], severity=severity or {}))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL810"]


def found(text, **kwargs):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, **kwargs)]


def pod(container="", pod_spec="", image="vllm/vllm-openai:v0.9.2", resources="{limits: {nvidia.com/gpu: 1}}",
        metadata="{name: vllm}"):
    return f"""apiVersion: v1
kind: Pod
metadata: {metadata}
spec:
  containers:
  - name: vllm
    image: {image}
    command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct]
    resources: {resources}
{container}{pod_spec}"""


BASELINE_CONTAINER = "    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n"
BASELINE_POD = ("  automountServiceAccountToken: false\n"
                "  securityContext: {runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}\n")


# --- catches ---------------------------------------------------------------------------------------
def test_nothing_set_is_one_info_at_the_container_name():
    assert found(pod()) == [(6, 11, Severity.INFO, ALL)]
    (finding,) = lint(pod())
    assert "lacks 5 settings of the hardening baseline" in finding.message
    assert "`runAsUser` (the image runs as root)" in finding.message  # vllm/vllm-openai has no USER
    assert "never `runAsNonRoot: true` alone on a root image" in finding.message


def test_with_a_security_context_it_points_at_it():
    text = pod("    securityContext: {allowPrivilegeEscalation: false}\n", BASELINE_POD)
    assert found(text) == [(10, 5, Severity.INFO, "missing:capabilities")]
    assert "lacks a setting of the hardening baseline. Set `capabilities: {drop: [ALL]}`" in lint(text)[0].message


def test_privileged_is_a_warning_at_its_value():
    text = pod("    securityContext: {privileged: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n",
               BASELINE_POD)
    assert found(text) == [(10, 35, Severity.WARNING, "privileged")]
    assert "device plugin already gives the container its GPUs" in lint(text)[0].message


def test_sys_admin_in_any_spelling_is_a_warning_at_the_item():
    for spelling, col in (("SYS_ADMIN", 59), ("CAP_SYS_ADMIN", 59), ("ALL", 59)):
        text = pod("    securityContext:\n      allowPrivilegeEscalation: false\n"
                   f"      capabilities: {{drop: [ALL], add: [NET_BIND_SERVICE, {spelling}]}}\n", BASELINE_POD)
        cap = "ALL" if spelling == "ALL" else "SYS_ADMIN"
        assert found(text)[-1] == (12, col, Severity.WARNING, f"add:{cap}"), spelling
        assert found(text)[0] == (12, 41, Severity.INFO, "add:NET_BIND_SERVICE")


def test_ipc_lock_is_fine_with_an_rdma_device_only():
    caps = "    securityContext:\n      allowPrivilegeEscalation: false\n      capabilities: {drop: [ALL], add: [IPC_LOCK]}\n"
    for resource in ("rdma/rdma_shared_device_a", "vpc.amazonaws.com/efa", "nvidia.com/sriov_rdma_vf",
                     "openshift.io/mlnxnics"):
        assert found(pod(caps, BASELINE_POD, resources=f"{{limits: {{nvidia.com/gpu: 8, {resource}: 1}}}}")) == [], \
            resource
    text = pod(caps, BASELINE_POD)
    assert found(text) == [(12, 41, Severity.INFO, "add:IPC_LOCK")]
    assert "without an RDMA device resource" in lint(text)[0].message


def test_settings_written_the_unsafe_way_are_info_at_their_node():
    text = pod("    securityContext:\n      allowPrivilegeEscalation: true\n      capabilities: {drop: [ALL]}\n"
               "      seccompProfile: {type: Unconfined}\n",
               "  automountServiceAccountToken: false\n  securityContext: {runAsUser: 0}\n")
    assert found(text) == [(11, 33, Severity.INFO, "allowPrivilegeEscalation:true"),
                           (13, 23, Severity.INFO, "seccompProfile:Unconfined"),
                           (15, 32, Severity.INFO, "runAsUser:0")]
    # issue 13: the first sentence is the problem, the advice its own sentence (the `help:` line)
    assert lint(text)[-1].message == ("`runAsUser: 0` runs vLLM as root. Run it as a non-root uid (with `runAsGroup` "
                                      "and `fsGroup`) and give it a writable HOME or cache volume (VL703 checks them).")


def test_a_raised_severity_raises_the_warnings_too():
    text = pod("    securityContext: {privileged: true, allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n",
               BASELINE_POD.replace("automountServiceAccountToken: false", "automountServiceAccountToken: true"))
    assert found(text, severity={"VL810": "error"}) == [(10, 5, Severity.ERROR, "missing:automountServiceAccountToken"),
                                                        (10, 35, Severity.ERROR, "privileged")]


def test_the_pods_own_token_setting_wins_over_its_service_account():
    account = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: vllm}\nautomountServiceAccountToken: false\n---\n"
    spec = "  serviceAccountName: vllm\n  securityContext: {runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}\n"
    assert found(account + pod(BASELINE_CONTAINER, spec)) == []
    overridden = account + pod(BASELINE_CONTAINER, spec + "  automountServiceAccountToken: true\n")
    assert found(overridden) == [(15, 5, Severity.INFO, "missing:automountServiceAccountToken")]
    assert found(pod(BASELINE_CONTAINER, spec)) == [(10, 5, Severity.INFO, "missing:automountServiceAccountToken")]


def test_an_image_the_table_does_not_know_is_not_called_root():
    (finding,) = lint(pod(image="registry.example.com/team/vllm:1.0", container=BASELINE_CONTAINER,
                          pod_spec="  automountServiceAccountToken: false\n"
                                   "  securityContext: {seccompProfile: {type: Localhost, localhostProfile: v.json}}\n"))
    assert finding.value == "missing:runAsUser"
    assert "`runAsUser` (a non-root uid)" in finding.message and "image runs as root" not in finding.message


# --- does not catch --------------------------------------------------------------------------------
def test_the_baseline_is_clean():
    assert found(pod(BASELINE_CONTAINER, BASELINE_POD)) == []


def test_runasnonroot_with_uid_0_is_vl703s_error_not_this_rule():
    spec = "  automountServiceAccountToken: false\n  securityContext: {runAsUser: 0, runAsNonRoot: true, " \
           "seccompProfile: {type: RuntimeDefault}}\n"
    assert found(pod(BASELINE_CONTAINER, spec)) == []


def test_openshift_fills_in_what_restricted_v2_sets():
    text = pod(metadata="{name: vllm, annotations: {openshift.io/scc: restricted-v2}}")
    assert found(text) == [(6, 11, Severity.INFO, "missing:automountServiceAccountToken")]
    assert found(pod(metadata="{name: vllm, annotations: {openshift.io/scc: restricted-v2}}",
                     pod_spec="  automountServiceAccountToken: false\n")) == []


def test_a_kuberay_head_with_the_autoscaler_keeps_its_token():
    text = """apiVersion: ray.io/v1
kind: RayService
metadata: {name: llm}
spec:
  serveConfigV2: ""
  rayClusterConfig:
    enableInTreeAutoscaling: true
    headGroupSpec:
      template:
        spec:
          securityContext: {runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
          containers:
          - name: ray-head
            image: vllm/vllm-openai:v0.9.2
            command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct]
            securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
"""
    assert found(text) == []
    assert found(text.replace("enableInTreeAutoscaling: true", "enableInTreeAutoscaling: false")) == [
        (16, 13, Severity.INFO, "missing:automountServiceAccountToken")]


def test_other_containers_init_containers_and_compose_are_not_judged():
    text = pod(BASELINE_CONTAINER, BASELINE_POD) + """  initContainers:
  - name: fetch
    image: vllm/vllm-openai:v0.9.2
    command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct]
    securityContext: {privileged: true}
"""
    assert found(text) == []
    sidecar = pod(BASELINE_CONTAINER, BASELINE_POD).replace("  containers:\n", "  containers:\n  - name: proxy\n"
                                                            "    image: envoyproxy/envoy:v1.30\n"
                                                            "    securityContext: {privileged: true}\n")
    assert found(sidecar) == []
    compose = "services:\n  vllm:\n    image: vllm/vllm-openai:v0.9.2\n    command: [--model, Qwen/Qwen3-0.6B]\n" \
              "    privileged: true\n"
    assert found(compose) == []


def test_not_a_vllm_container():
    assert found(pod().replace("command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct]", "command: [python, app.py]")
                 .replace("vllm/vllm-openai:v0.9.2", "python:3.12")) == []


# --- the chapters and the data -----------------------------------------------------------------------
def test_the_audited_pod_is_clean_and_its_benchmark_job_only_info():
    result, _ = lint_paths([str(FIXTURES / "audited")], LintOptions(select=["VL810"]))
    findings = [(f.path.rsplit("/", 1)[-1], f.severity) for f in result.findings]
    assert ("single-gpu-deployment.yaml", Severity.INFO) not in findings
    assert all(severity == Severity.INFO for _, severity in findings)


def test_the_data_is_schema_valid():
    data = load_yaml_data(knowledge_dir() / "pod-hardening.yaml")
    schema = json.loads((schemas_dir() / "pod-hardening.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert {row["setting"] for row in data["baseline"]} == {
        "runAsUser", "allowPrivilegeEscalation", "capabilities", "seccompProfile", "automountServiceAccountToken"}


def test_openshift_is_judged_per_folder(tmp_path):
    # One OpenShift manifest in a repository of examples does not make another folder's pod an OpenShift one.
    (tmp_path / "ocp").mkdir()
    (tmp_path / "eks").mkdir()
    (tmp_path / "ocp" / "route.yaml").write_text(
        "apiVersion: route.openshift.io/v1\nkind: Route\nmetadata: {name: vllm}\nspec: {to: {kind: Service, name: vllm}}\n")
    (tmp_path / "ocp" / "pod.yaml").write_text(pod())
    (tmp_path / "eks" / "pod.yaml").write_text(pod())
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL810"]))
    by_folder = {f.path.rsplit("/", 2)[-2]: f.value for f in result.findings}
    assert by_folder == {"ocp": "missing:automountServiceAccountToken", "eks": ALL}


def test_a_nameless_container_is_named_by_its_place():
    text = pod().replace("  - name: vllm\n    image:", "  - image:")
    [finding] = lint(text)
    assert (finding.span.line, finding.span.col) == (6, 5)
    assert "vLLM container `containers[0]` lacks" in finding.message
