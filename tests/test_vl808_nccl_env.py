"""VL808 nccl-env: catches / does not catch, with the position of every finding."""
import json
from pathlib import Path

import jsonschema
import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm import nccl_env

ROOT = Path(__file__).resolve().parent.parent
W, INF = Severity.WARNING, Severity.INFO


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL808"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL808"]


def pod(env, resources="{limits: {nvidia.com/gpu: 8}}", image="vllm/vllm-openai:v0.29.0",
        command="[vllm, serve, Qwen/Qwen3-32B, --tensor-parallel-size, '8']", node_selector=""):
    selector = f"  nodeSelector: {node_selector}\n" if node_selector else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
{selector}  containers:
  - name: vllm
    image: {image}
    command: {command}
    env: {env}
    resources: {resources}
"""


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text, filename)]


def one(name, value="1"):
    return f'[{{name: {name}, value: "{value}"}}]'


EFA = "{limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32}}"


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("env, severity, value", [
    (one("NCCL_ASYNC_ERROR_HANDLING"), W, "NCCL_ASYNC_ERROR_HANDLING"),
    (one("NCCL_SOCKET_IFNAM", "eth0"), W, "NCCL_SOCKET_IFNAM"),  # one deletion from NCCL_SOCKET_IFNAME
    (one("NCCL_IB_HCAS", "mlx5_0"), W, "NCCL_IB_HCAS"),  # NCCL_IB_HCA
    (one("TORCH_NCCL_BLOKING_WAIT"), W, "TORCH_NCCL_BLOKING_WAIT"),  # TORCH_NCCL_BLOCKING_WAIT
    (one("OFI_NCCL_PROTOCL", "RDMA"), W, "OFI_NCCL_PROTOCL"),  # OFI_NCCL_PROTOCOL
    (one("NCCL_MIN_CHANNELS", "4"), W, "NCCL_MIN_CHANNELS"),  # NCCL_MIN_NCHANNELS
    (one("NCCL_IB_ENABLE_RDMA"), INF, "NCCL_IB_ENABLE_RDMA"),  # the original chapter's invented variable
    (one("TORCH_NCCL_SOMETHING_ELSE"), INF, "TORCH_NCCL_SOMETHING_ELSE"),
    (one("NCCL_BLOCKING_WAIT"), INF, "NCCL_BLOCKING_WAIT"),  # PyTorch's old name, still read
    (one("NCCL_DESYNC_DEBUG"), INF, "NCCL_DESYNC_DEBUG"),
    (one("OFI_NCCL_ENDPOINT_PER_COMM"), INF, "OFI_NCCL_ENDPOINT_PER_COMM"),  # deprecated by aws-ofi-nccl
    (one("OFI_NCCL_RDMA_MIN_POSTED_BOUNCE_BUFFERS", "64"), INF, "OFI_NCCL_RDMA_MIN_POSTED_BOUNCE_BUFFERS"),  # removed
])
def test_catches(env, severity, value):
    assert found(pod(env)) == [(9, 18, severity, value)]


def test_async_error_handling_names_vllm_and_torch():
    (finding,) = lint(pod(one("NCCL_ASYNC_ERROR_HANDLING")))
    assert finding.message.startswith("`NCCL_ASYNC_ERROR_HANDLING` has no effect: vLLM 0.29.0's GPU worker deletes it")
    assert "(0.29.0 vllm/v1/worker/gpu_worker.py:351)" in finding.message
    assert "since torch 2.2.0 (vLLM 0.29.0 pins torch 2.13.0)" in finding.message
    (old,) = lint(pod(one("NCCL_ASYNC_ERROR_HANDLING"), image="vllm/vllm-openai:v0.6.2"))
    assert "(0.6.2 vllm/worker/worker.py:164)" in old.message and "pins torch 2.4.0" in old.message


def test_async_error_handling_on_an_unknown_release():
    (finding,) = lint(pod(one("NCCL_ASYNC_ERROR_HANDLING"), image="vllm/vllm-openai:latest"))
    assert finding.severity == W and "(assumed: the release is unknown)" in finding.message


def test_near_miss_says_which():
    (finding,) = lint(pod(one("NCCL_SOCKET_IFNAM", "eth0")))
    assert "did you mean `NCCL_SOCKET_IFNAME` (read by NCCL)?" in finding.message


def test_renamed_names_the_new_one():
    (finding,) = lint(pod(one("NCCL_BLOCKING_WAIT")))
    assert "old name for `TORCH_NCCL_BLOCKING_WAIT` (renamed in torch 2.2.0; vLLM 0.29.0 pins torch 2.13.0)" \
        in finding.message


def test_unknown_is_info_and_lists_the_readers():
    (finding,) = lint(pod(one("NCCL_IB_ENABLE_RDMA")))
    assert finding.message.startswith("`NCCL_IB_ENABLE_RDMA` is read by nothing vllmlint knows: check the name")
    assert "It is not read by NCCL (2.18 to 2.30), PyTorch" in finding.message


@pytest.mark.parametrize("name", ["NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_TC", "NCCL_IB_ROCE_VERSION_NUM"])
def test_infiniband_settings_with_an_efa_request(name):
    assert found(pod(one(name, "3"), resources=EFA)) == [(9, 18, W, f"{name}:efa")]
    (finding,) = lint(pod(one(name, "3"), resources=EFA))
    assert finding.message.startswith(f"`{name}` does nothing in a container that uses EFA (it requests "
                                      "`vpc.amazonaws.com/efa`)")
    assert "aws-ofi-nccl" in finding.message


def test_ib_disable_zero_on_efa():
    assert found(pod(one("NCCL_IB_DISABLE", "0"), resources=EFA)) == [(9, 18, W, "NCCL_IB_DISABLE:efa")]


@pytest.mark.parametrize("instance_type, words", [
    ("p4d.24xlarge", "p4d.24xlarge has EFA"),
    ("p3.16xlarge", "p3.16xlarge has no EFA, and EC2 has no InfiniBand or RoCE adapter"),
])
def test_infiniband_settings_on_aws_nodes(instance_type, words):
    text = pod(one("NCCL_IB_GID_INDEX", "3"), node_selector=f"{{node.kubernetes.io/instance-type: {instance_type}}}")
    assert found(text) == [(10, 18, INF, "NCCL_IB_GID_INDEX:aws")]
    assert words in lint(text)[0].message


def test_configmap_keys_point_at_the_env_from_entry():
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: nccl}
data: {NCCL_IB_ENABLE_RDMA: "1", NCCL_DEBUG: INFO, NCCL_ASYNC_ERROR_HANDLING: "1"}
---
""" + pod("[]").replace("    env: []\n", "    envFrom:\n    - configMapRef: {name: nccl}\n")
    assert found(text) == [(15, 7, W, "NCCL_ASYNC_ERROR_HANDLING"), (15, 7, INF, "NCCL_IB_ENABLE_RDMA")]
    assert "(from ConfigMap nccl, key NCCL_IB_ENABLE_RDMA)" in lint(text)[1].message


def test_compose_environment():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.29.0
    command: [--model, Qwen/Qwen3-32B, --tensor-parallel-size, "2"]
    ipc: host
    environment:
      NCCL_DEBUG: INFO
      NCCL_ASYNC_ERROR_HANDLING: "1"
"""
    assert found(text, "compose.yaml") == [(8, 34, W, "NCCL_ASYNC_ERROR_HANDLING")]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod(one("NCCL_DEBUG", "INFO")),
    pod(one("NCCL_SOCKET_IFNAME", "^lo,docker")),
    pod(one("NCCL_MIN_NCHANNELS", "4")),
    pod(one("NCCL_CUMEM_ENABLE", "0")),
    pod(one("NCCL_MAX_NRINGS", "4")),  # an old name NCCL still reads
    pod(one("TORCH_NCCL_ASYNC_ERROR_HANDLING")),
    pod(one("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "600")),
    pod(one("OFI_NCCL_PROTOCOL", "RDMA")),
    pod(one("FI_PROVIDER", "efa"), resources=EFA),
    pod(one("FI_SOMETHING_NEW")),  # libfabric's names are not judged
    pod(one("NCCL_SHARP_DISABLE")),  # the IB SHARP plugin
    pod(one("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "eth1,eth2")),  # GKE TCPX
    pod(one("NCCL_FASTRAK_IFNAME", "eth1")),  # GKE TCPXO
    pod(one("NCCL_IB_DISABLE", "1"), resources=EFA),  # IB turned off: consistent with EFA
    pod(one("NCCL_IB_HCA", "mlx5_0")),  # no placement known: an InfiniBand cluster, perhaps
    pod(one("NCCL_IB_GID_INDEX", "3"), node_selector="{node.kubernetes.io/instance-type: a3-ultragpu-8g}"),  # RoCE
        pod(one("NCCL_IB_GID_INDEX", "3"), node_selector="{node.kubernetes.io/instance-type: p6e-gb200.36xlarge}"),  # not catalogued (p5.4xlarge is: 1 EFA)
    pod(one("NCCL_IB_GID_INDEX", "3"), node_selector="{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}"),
    pod('[{name: NCCL_IB_DISABLE, valueFrom: {secretKeyRef: {name: s, key: k}}}]', resources=EFA),
    pod(one("NCCL_NET_GDR_LEVEL", "SYS"), resources=EFA),  # not IB-only: it also applies to net plugins
    pod(one("NCCL_IB_ENABLE_RDMA"), image="rayproject/ray:2.40.0-py311-gpu",
        command="[ray, start, '--address=ray-head:6379', --block]"),  # not vLLM
    pod(one("NCCL_ALGO", "Ring")),
    pod(one("MY_NCCL_SETTING")),  # not a checked prefix
])
def test_does_not_catch(text):
    assert lint(text) == []


def test_sidecar_is_not_checked():
    text = pod(one("NCCL_DEBUG", "INFO")) + """  - name: exporter
    image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04
    env: [{name: NCCL_IB_ENABLE_RDMA, value: "1"}]
"""
    assert lint(text) == []


def test_chapters():
    linter = Linter(LintOptions(select=["VL808"]))
    for path in sorted((ROOT / "fixtures" / "original").iterdir()):
        linter.add_file(path, path.name)
    # The StatefulSet's NCCL_IB_DISABLE=0 and NCCL_IB_GID_INDEX=3 on the chapter's NodePool, where only
    # p3.16xlarge holds its 8 GPUs (g5.12xlarge has 4): no EFA there, and no InfiniBand on EC2.
    assert [(f.path, f.span.line, f.span.col, f.severity, f.value) for f in linter.run().findings] == [
        ("multi-node-statefulset.yaml", 77, 17, INF, "NCCL_IB_DISABLE:aws"),
        ("multi-node-statefulset.yaml", 79, 17, INF, "NCCL_IB_GID_INDEX:aws")]
    linter = Linter(LintOptions(select=["VL808"]))
    for path in sorted((ROOT / "fixtures" / "audited").iterdir()):
        linter.add_file(path, path.name)
    assert linter.run().findings == []


def test_data_matches_its_schema():
    data = load_yaml_data(knowledge_dir() / "nccl-env.yaml")
    jsonschema.validate(data, json.loads((schemas_dir() / "nccl-env.schema.json").read_text()))
    names = [row["name"] for row in data["variables"]]
    assert len(names) == len(set(names))
    for name in ("NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_SOCKET_IFNAME", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
                 "OFI_NCCL_PROTOCOL", "FI_PROVIDER"):
        assert name in nccl_env.known_variables()
    assert "NCCL_IB_ENABLE_RDMA" not in nccl_env.known_variables()
    assert nccl_env.known_variables()["NCCL_IB_GID_INDEX"].ib_transport
    assert not nccl_env.known_variables()["NCCL_NET_GDR_LEVEL"].ib_transport


def test_removed_aws_ofi_nccl_parameter_says_the_plugin_fails():
    (finding,) = lint(pod(one("OFI_NCCL_RDMA_MAX_POSTED_BOUNCE_BUFFERS", "64")))
    assert finding.severity == INF
    assert "is removed: the plugin's initialisation fails when it is set" in finding.message
    assert "include/nccl_ofi_param.h:178 at v1.21.1" in finding.message


def test_a_variable_the_shipped_nccl_does_not_read_yet():
    # vLLM 0.29.0 pins torch 2.13.0, whose wheel requires nvidia-nccl-cu13==2.29.7; NCCL_IB_OOO_RQ is read
    # from NCCL 2.30 on.
    text = pod(one("NCCL_IB_OOO_RQ"))
    assert found(text) == [(9, 18, INF, "NCCL_IB_OOO_RQ")]
    assert "is read by NCCL 2.30 and later only" in lint(text)[0].message
    assert "vLLM 0.29.0's image loads NCCL 2.29.7, with torch 2.13.0" in lint(text)[0].message
    assert lint(pod(one("NCCL_IB_OOO_RQ"), image="vllm/vllm-openai:v0.33.0")) == []


def test_a_variable_the_shipped_nccl_no_longer_reads():
    text = pod(one("NCCL_SHM_USE_CUDA_MEMCPY"), image="vllm/vllm-openai:v0.33.0")
    assert found(text) == [(9, 18, INF, "NCCL_SHM_USE_CUDA_MEMCPY")]
    assert "was last read by NCCL 2.29 (src/transport/shm.cc:68 at v2.29.7-1)" in lint(text)[0].message
    assert lint(pod(one("NCCL_SHM_USE_CUDA_MEMCPY"))) == []  # 0.29.0 loads NCCL 2.29.7


@pytest.mark.parametrize("text", [
    # another libnccl
    pod('[{name: NCCL_IB_OOO_RQ, value: "1"}, {name: VLLM_NCCL_SO_PATH, value: /opt/nccl/lib/libnccl.so.2}]'),
    # not the image published with the release: its NCCL is unknown
    pod(one("NCCL_IB_OOO_RQ"), image="nvcr.io/nvidia/pytorch:25.01-py3",
        command="[python3, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen3-32B]"),
    pod(one("NCCL_IB_OOO_RQ"), image="vllm/vllm-openai:latest"),
])
def test_the_shipped_nccl_is_judged_only_for_the_release_image(text):
    assert lint(text) == []
