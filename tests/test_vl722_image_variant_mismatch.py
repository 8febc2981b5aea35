"""VL722 image-variant-mismatch: catches / does not catch, with the position of every finding, and the
variant table's lookups (data/image-variants.yaml)."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.vllm.image_variants import image_min_bytes, image_variant, min_driver_major
from vllmlint.vllm.images import parse_image


def found(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL722"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.value, f.message) for f in result.findings if f.code == "VL722"]


def pod(image, selector="{}", affinity=""):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  nodeSelector: {selector}{affinity}
  containers:
  - name: vllm
    image: {image}
    args: [--model, Qwen/Qwen3-8B]
    resources:
      limits: {{nvidia.com/gpu: 1}}
"""


ARM_AFFINITY = """
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: kubernetes.io/arch, operator: In, values: [arm64]}"""


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, line, col, value, instead", [
    # CUDA 13 (the default tag from 0.20.0) on a 550 driver: the -cu129 variant
    (pod("vllm/vllm-openai:v0.29.0", '{nvidia.com/cuda.driver-version.major: "550"}'), 8, 12, "driver:13",
     "Use vllm/vllm-openai:v0.29.0-cu129 (CUDA 12.9.1)"),
    # the deprecated GFD label, and the -cu130 variant of 0.18.0 (whose default tag is CUDA 12.9)
    (pod("vllm/vllm-openai:v0.18.0-cu130", '{nvidia.com/cuda.driver.major: "535"}'), 8, 12, "driver:13",
     "Use vllm/vllm-openai:v0.18.0 (CUDA 12.9.1)"),
    # the node's newest CUDA, Lt on the driver: a node with CUDA 12 only
    (pod("docker.io/vllm/vllm-openai:v0.22.0", '{nvidia.com/cuda.runtime-version.major: "12"}'), 8, 12, "driver:13",
     "Use vllm/vllm-openai:v0.22.0-cu129"),
    # 0.33.0 publishes no CUDA 12 image any more: upgrade the driver
    (pod("vllm/vllm-openai:v0.33.0", '{nvidia.com/cuda.driver-version.major: "570"}'), 8, 12, "driver:13",
     "Upgrade the nodes' driver"),
    (pod("vllm/vllm-openai:v0.31.0-aarch64", '{nvidia.com/cuda.driver-version.major: "570"}'), 8, 12, "driver:13",
     "Use vllm/vllm-openai:v0.31.0-cu129"),
    # an amd64-only release on arm64 nodes, by node affinity
    (pod("vllm/vllm-openai:v0.10.1.1", affinity=ARM_AFFINITY), 14, 12, "arch:arm64",
     "Use a release published for arm64"),
    # the -x86_64 tag of a multi-arch release on arm64: the multi-arch tag
    (pod("vllm/vllm-openai:v0.24.0-x86_64-cu129", "{kubernetes.io/arch: arm64}"), 8, 12, "arch:arm64",
     "Use vllm/vllm-openai:v0.24.0-cu129 (the multi-arch tag)"),
])
def test_catches(text, line, col, value, instead):
    findings = found(text)
    assert [(f[0], f[1], f[2]) for f in findings] == [(line, col, value)]
    assert findings[0][3].startswith(instead)


@pytest.mark.parametrize("selector, image, value, says", [
    # no kubernetes.io/arch, but every node the pod can land on has a Grace CPU (gpus.yaml host_cpu)
    ("{cloud.google.com/gke-accelerator: nvidia-gb200}", "vllm/vllm-openai:v0.10.1.1", "arch:arm64",
     "Use a release published for arm64"),
    ("{node.kubernetes.io/instance-type: a4x-highgpu-4g}", "vllm/vllm-openai:v0.9.0", "arch:arm64",
     "a4x-highgpu-4g (4 x GB200), from nodeSelector, whose GB200 comes with an NVIDIA Grace CPU"),
    ("{nvidia.com/gpu.product: NVIDIA-GB200}", "vllm/vllm-openai:v0.24.0-x86_64-cu129", "arch:arm64",
     "Use vllm/vllm-openai:v0.24.0-cu129 (the multi-arch tag)"),
    ("{node.kubernetes.io/instance-type: a4x-maxgpu-4g-metal}", "vllm/vllm-openai:v0.8.5", "arch:arm64",
     "GB300 comes with an NVIDIA Grace CPU"),
    ("{nvidia.com/gpu.product: NVIDIA-GH200-480GB}", "vllm/vllm-openai:v0.10.1.1", "arch:arm64",
     "GH200 comes with an NVIDIA Grace CPU"),
])
def test_catches_grace_nodes_named_by_their_gpu(selector, image, value, says):
    findings = found(pod(image, selector))
    assert [(f[0], f[1], f[2]) for f in findings] == [(8, 12, value)]
    assert says in findings[0][3]


@pytest.mark.parametrize("selector, image, value, says", [
    # B300 is compute capability 10.3 (sm_103): the CUDA 12.9 builds of 0.24-0.31 skip it
    ("{nvidia.com/gpu.product: NVIDIA-B300-SXM6-AC}", "vllm/vllm-openai:v0.29.0-cu129", "sm:B300",
     "Use vllm/vllm-openai:v0.29.0 (CUDA 13.0.2) on B300"),
    ("{node.kubernetes.io/instance-type: p6-b300.48xlarge}", "vllm/vllm-openai:v0.26.0-cu129", "sm:B300",
     "p6-b300.48xlarge (8 x B300)"),
    ("{karpenter.k8s.aws/instance-gpu-name: b300}", "vllm/vllm-openai:v0.24.0-cu129", "sm:B300",
     "compute capability 10.3"),
    # GB300 (A4X Max): the multi-arch -cu129 tag holds arm64, but no 10.3 kernels either
    ("{cloud.google.com/gke-accelerator: nvidia-gb300}", "vllm/vllm-openai:v0.29.0-cu129", "sm:GB300",
     "Use vllm/vllm-openai:v0.29.0 (CUDA 13.0.2) on GB300"),
])
def test_catches_blackwell_ultra_without_kernels(selector, image, value, says):
    findings = found(pod(image, selector))
    assert [(f[0], f[1], f[2]) for f in findings] == [(8, 12, value)]
    assert says in findings[0][3]


def test_catches_driver_of_a_karpenter_pool():
    """The driver label is on the NodePool the pod lands on (its template labels)."""
    pool = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    metadata:
      labels: {team: llm, nvidia.com/cuda.driver-version.major: "570"}
    spec:
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
---
"""
    findings = found(pool + pod("vllm/vllm-openai:v0.26.0", "{team: llm}"))
    assert [(f[0], f[1], f[2]) for f in findings] == [(20, 12, "driver:13")]
    assert "driver 570" in findings[0][3]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod("vllm/vllm-openai:v0.29.0-cu129", '{nvidia.com/cuda.driver-version.major: "550"}'),  # CUDA 12 on 550
    pod("vllm/vllm-openai:v0.29.0", '{nvidia.com/cuda.driver-version.major: "580"}'),  # new enough
    pod("vllm/vllm-openai:v0.29.0"),  # no driver named
    pod("vllm/vllm-openai:latest", '{nvidia.com/cuda.driver-version.major: "550"}'),  # floating tag
    pod("vllm/vllm-openai:nightly", "{kubernetes.io/arch: arm64}"),
    pod("myregistry.io/vllm/vllm-openai:v0.29.0", '{nvidia.com/cuda.driver-version.major: "550"}'),  # a mirror
    pod("vllm/vllm-openai:v0.19.0", '{nvidia.com/cuda.driver-version.major: "550"}'),  # not in the table
    pod("vllm/vllm-openai:v0.14.1", "{kubernetes.io/arch: arm64}"),  # multi-arch
    pod("vllm/vllm-openai:v0.14.1-aarch64", "{kubernetes.io/arch: arm64}"),
    pod("vllm/vllm-openai:v0.10.1.1", "{kubernetes.io/arch: amd64}"),
    pod("vllm/vllm-openai:v0.10.2", "{kubernetes.io/arch: arm64}"),  # arm64 availability not known: silent
    pod("vllm/vllm-openai:v0.29.0", '{nvidia.com/cuda.driver-version.major: "$(DRIVER)"}'),  # no number
    pod("vllm/vllm-openai:v0.29.0", "{}", """
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: nvidia.com/cuda.driver-version.major, operator: In, values: ["550"]}
        - matchExpressions:
          - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}"""),  # one term is open
    pod("vllm/vllm-openai:v0.29.0", "{nvidia.com/gpu.product: NVIDIA-B200}"),  # B200 has its kernels
    pod("vllm/vllm-openai:v0.29.0-cu129", "{nvidia.com/gpu.product: NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition}"),
    pod("vllm/vllm-openai:v0.29.0", "{nvidia.com/gpu.product: NVIDIA-B300-SXM6-AC}"),  # CUDA 13 covers 10.3
    pod("vllm/vllm-openai:v0.10.1.1", "{nvidia.com/gpu.product: NVIDIA-B300-SXM6-AC}"),  # 10.0 code runs on 10.3
    pod("vllm/vllm-openai:v0.10.1.1", "{node.kubernetes.io/instance-type: p6-b300.48xlarge}"),  # HGX B300: x86
    pod("vllm/vllm-openai:v0.14.1", "{cloud.google.com/gke-accelerator: nvidia-gb200}"),  # multi-arch
    pod("vllm/vllm-openai:v0.29.0", "{node.kubernetes.io/instance-type: a4x-maxgpu-4g-metal}"),
    # the pod names amd64 itself: what it says wins over what the GPU implies
    pod("vllm/vllm-openai:v0.10.1.1", "{kubernetes.io/arch: amd64, nvidia.com/gpu.product: NVIDIA-GB200}"),
    pod("vllm/vllm-openai:v0.10.1.1", "{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}"),  # x86 or Grace: unknown
    pod("vllm/vllm-openai:v0.10.1.1", "{}", """
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-GB200, NVIDIA-B200]}"""),  # GB200 or x86 B200
])
def test_does_not_catch(text):
    assert found(text) == []


# --- the table -----------------------------------------------------------------------------------------
def test_variants_read_from_the_tag():
    v = image_variant(parse_image("vllm/vllm-openai:v0.29.0-aarch64-cu129"))
    assert (v.release, v.tag, v.cuda, v.arches) == ("0.29.0", "-cu129", "12.9.1", ("arm64",))
    assert image_variant(parse_image("vllm/vllm-openai:v0.9.0")).arches == ("amd64",)
    assert image_variant(parse_image("vllm/vllm-openai:v0.9.0-aarch64")) is None  # no arch tags then
    assert image_variant(parse_image("vllm/vllm-openai:v0.29.0-cu126")) is None  # not a published variant
    assert image_variant(parse_image("vllm/vllm-openai:v0.20.0-ubuntu2404")) is None  # built, not published
    assert image_variant(parse_image("vllm/vllm-openai:v0.22.0-ubuntu2404")).cuda == "13.0.2"
    assert image_variant(parse_image("vllm/vllm-openai:v0.33.0-cu129")) is None  # no CUDA 12.9 build in 0.33.0
    assert image_variant(parse_image("vllm/vllm-openai-rocm:v0.29.0")) is None
    assert (min_driver_major(13), min_driver_major(12), min_driver_major(10)) == (580, 525, None)


@pytest.mark.parametrize("tag, capability, arch, runs", [
    ("v0.29.0-cu129", (10, 3), "amd64", False),  # the pipeline says CUDA 12.9 skips 10.3 (B300)
    ("v0.29.0", (10, 3), "amd64", True),  # CUDA 13 family targets cover it
    ("v0.29.0-cu129", (12, 0), "amd64", True),
    ("v0.29.0-cu129", (8, 6), "arm64", True),  # 8.0 code runs on 8.6
    ("v0.9.0", (8, 6), "amd64", True),
    ("v0.9.0", (12, 0), "amd64", True),  # 10.0+PTX: the driver compiles the PTX
    ("v0.8.5", (10, 0), "amd64", True),  # 9.0+PTX
    ("v0.14.1", (11, 0), "amd64", False),  # no 11.x code and the top entry carries no PTX
    ("v0.14.1", (8, 7), "arm64", True),
    ("v0.14.1", (8, 0), "arm64", False),  # the arm64 build starts at 8.7
    ("v0.9.0", (8, 0), "arm64", None),  # no arm64 build then: no list, unknown
])
def test_runs_on(tag, capability, arch, runs):
    variant = image_variant(parse_image(f"vllm/vllm-openai:{tag}"))
    assert variant.runs_on(capability, arch) is runs


def test_image_sizes():
    assert image_min_bytes("0.12.0")[0] == 28_600_000_000
    assert image_min_bytes("0.29.0")[0] == 9_000_000_000
    assert image_min_bytes("0.5.0") is None and image_min_bytes(None) is None
