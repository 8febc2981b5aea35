"""VL706 weights-on-ephemeral-storage: catches / does not catch, with the position of every finding."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, Linter, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml", select="VL706"):
    result = lint_text(text, filename, LintOptions(select=[select]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == select]


def pod(model="Qwen/Qwen2.5-32B-Instruct", resources="{limits: {nvidia.com/gpu: 1}}", env="[]", mounts="[]",
        volumes="[]", extra=""):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: [vllm, serve, {model}{extra}]
    env: {env}
    resources: {resources}
    volumeMounts: {mounts}
  volumes: {volumes}
"""


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


HF_DATA = "[{name: HF_HOME, value: /data}]"
DATA_MOUNT = "[{name: data, mountPath: /data}]"


# --- catches -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, line, col, severity, value", [
    # the writable layer, no request: info at the model
    (pod(), 8, 28, Severity.INFO, "61.0 GiB>0"),
    # a request smaller than the weights: warning at the request
    (pod(resources="{requests: {ephemeral-storage: 10Gi}, limits: {nvidia.com/gpu: 1}}"), 10, 47, Severity.WARNING,
     "61.0 GiB>10.0 GiB"),
    # decimal gigabytes: 65G is 60.5 GiB
    (pod(resources="{requests: {ephemeral-storage: 65G}}"), 10, 47, Severity.WARNING, "61.0 GiB>60.5 GiB"),
    # a small model with a request that is too small is still reported (the request was meant to hold it)
    (pod("Qwen/Qwen2.5-7B-Instruct", "{requests: {ephemeral-storage: 10Gi}}"), 10, 47, Severity.WARNING,
     "14.2 GiB>10.0 GiB"),
    # an emptyDir without sizeLimit is the node's ephemeral storage too
    (pod(env=HF_DATA, mounts=DATA_MOUNT, volumes="[{name: data, emptyDir: {}}]"), 8, 28, Severity.INFO, "61.0 GiB>0"),
    (pod(env=HF_DATA, mounts=DATA_MOUNT, volumes="[{name: data, emptyDir: }]"), 8, 28, Severity.INFO, "61.0 GiB>0"),
    # --download-dir on the writable layer
    (pod(extra=", --download-dir, /models"), 8, 28, Severity.INFO, "61.0 GiB>0"),
])
def test_catches(text, line, col, severity, value):
    assert found(text) == [(line, col, severity, value)]


def test_message_names_the_place_and_the_fix():
    (finding,) = lint(pod(env=HF_DATA, mounts=DATA_MOUNT, volumes="[{name: data, emptyDir: {}}]"))
    assert "downloaded to the node's ephemeral storage (about 61.0 GiB). It goes to /data/hub (env HF_HOME), on the emptyDir `data` without sizeLimit" in finding.message
    assert "request ephemeral-storage of at least 67.1 GiB" in finding.message


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    pod(resources="{requests: {ephemeral-storage: 64Gi}}"),  # a request that holds the weights
    # no request, but small enough for the smallest default node disk (18 GiB, the rule's data)
    pod("Qwen/Qwen2.5-7B-Instruct"),
    pod("Qwen/Qwen3-0.6B", env=HF_DATA, mounts=DATA_MOUNT, volumes="[{name: data, emptyDir: {}}]"),
    pod(resources="{limits: {ephemeral-storage: 10Gi}}"),  # bounded by a limit: VL609
    pod(env=HF_DATA, mounts=DATA_MOUNT, volumes="[{name: data, emptyDir: {sizeLimit: 40Gi}}]"),  # bounded
    pod(env=HF_DATA, mounts=DATA_MOUNT, volumes="[{name: data, emptyDir: {medium: Memory}}]"),  # tmpfs
    pod(env=HF_DATA, mounts=DATA_MOUNT, volumes="[{name: data, persistentVolumeClaim: {claimName: c}}]"),
    pod(env=HF_DATA, mounts=DATA_MOUNT, volumes="[{name: data, hostPath: {path: /mnt/models}}]"),
    pod(model="/models/qwen2.5-7b"),  # a local path is not downloaded
    pod(model="acme/not-in-the-catalog"),  # size unknown
    pod(model="$(MODEL_ID)"),  # not in the manifest
    pod(env="[{name: HF_HUB_OFFLINE, value: '1'}]"),  # nothing is downloaded
    pod(extra=", --load-format, dummy"),
    pod(env="[{name: HF_HOME, valueFrom: {configMapKeyRef: {name: elsewhere, key: home}}}]"),  # path unknown
])
def test_does_not_catch(text):
    assert lint(text) == []


def test_the_pod_request_counts_every_container():
    text = pod(resources="{requests: {ephemeral-storage: 10Gi}}").replace("  volumes:", """  - name: sidecar
    image: busybox:1.36
    resources: {requests: {ephemeral-storage: 60Gi}}
  volumes:""")
    assert lint(text) == []


def test_vl609_keeps_the_bounded_cases():
    text = pod(resources="{limits: {ephemeral-storage: 10Gi, nvidia.com/gpu: 1}}")
    assert lint(text) == [] and len(lint(text, select="VL609")) == 1


def test_compose_is_not_checked():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.29.0
    command: [Qwen/Qwen2.5-7B-Instruct]
"""
    assert lint(text, "compose.yaml") == []


def test_audited_chapter_is_silent():
    # Its benchmark reproduction downloads Qwen2.5-7B (14.2 GiB) onto the writable layer with no request:
    # under the 18 GiB floor, so not reported.
    linter = Linter(LintOptions(select=["VL706"]))
    for path in sorted((ROOT / "fixtures" / "audited").glob("*.yaml")):
        linter.add_file(path, path.name)
    assert linter.run().findings == []


def _other_image(mounts, volumes):
    return pod(mounts=mounts, volumes=volumes).replace("vllm/vllm-openai:v0.29.0", "example.com/team/vllm:1.0")


def test_unknown_image_with_a_disk_volume_is_not_judged():
    # HOME of an unknown image may be under the volume it mounts: silent
    assert lint(_other_image("[{name: home, mountPath: /home/app}]",
                             "[{name: home, persistentVolumeClaim: {claimName: c}}]")) == []


def test_unknown_image_with_only_shm_is_judged():
    # whatever its HOME, nothing but tmpfs is mounted: the default cache is on the writable layer
    text = _other_image("[{name: dshm, mountPath: /dev/shm}]", "[{name: dshm, emptyDir: {medium: Memory}}]")
    assert [(f.span.line, f.severity) for f in lint(text)] == [(8, Severity.INFO)]


def test_a_sidecar_request_alone_is_named():
    text = pod().replace("  volumes:", """  - name: sidecar
    image: busybox:1.36
    resources: {requests: {ephemeral-storage: 1Gi}}
  volumes:""")
    assert [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)] == [
        (8, 28, Severity.WARNING, "61.0 GiB>1.0 GiB")]


def test_the_download_lands_under_the_image_users_home():
    # vllm/vllm-openai 0.29.0 is Ubuntu 24.04 based: uid 1000 is `ubuntu` with HOME /home/ubuntu (image table).
    from vllmlint.capacity.workload import download_dir, workloads
    from vllmlint.engine import Linter
    text = """apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  securityContext: {runAsUser: 1000}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: [vllm, serve, Qwen/Qwen3-8B]
    resources: {limits: {nvidia.com/gpu: 1}}
"""
    linter = Linter()
    linter.add_text(text, "p.yaml")
    [work] = workloads(linter.build())
    assert download_dir(work)[0] == "/home/ubuntu/.cache/huggingface/hub"
    linter = Linter()
    linter.add_text(text.replace("  securityContext: {runAsUser: 1000}\n", ""), "p.yaml")
    [work] = workloads(linter.build())
    assert download_dir(work) == ("/root/.cache/huggingface/hub", "the default Hugging Face cache of the image's root user")


# The reviewer's case: a ConfigMap file with `download-dir: /models` (a PVC), an emptyDir at the default cache.
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


@pytest.mark.parametrize("select, change", [
    ("VL706", ("", "")),
    # VL609: a small emptyDir at the default cache, but the file sends the weights to the PVC
    ("VL609", ("- {name: hf, emptyDir: {}}", "- {name: hf, emptyDir: {sizeLimit: 10Gi}}")),
    # VL710: offline, the default cache is an empty emptyDir, but the file points at the PVC that holds the model
    ("VL710", ("        securityContext:", "        env: [{name: HF_HUB_OFFLINE, value: '1'}]\n        securityContext:")),
])
def test_a_config_file_may_set_download_dir(select, change):
    # `--config FILE` may set `download-dir` (here /models, a PVC): where the weights land is not known, so
    # VL706, VL609 and VL710, which read that place from capacity.workload.download_dir, are silent
    text = CONFIG_REPRO.replace("MODEL", "Qwen/Qwen2.5-72B-Instruct").replace(*change)
    assert lint(text, select=select) == []
    assert [f.code for f in lint(text.replace(", --config, /etc/vllm/config.yaml", ""), select=select)] == [select]

def test_download_dir_with_a_config_file():
    from vllmlint.capacity.workload import download_dir, workloads
    linter = Linter()
    linter.add_text(pod(extra=", --config, /etc/vllm/config.yaml"), "p.yaml")
    [work] = workloads(linter.build())
    assert download_dir(work) == (None, "--config file")


# --- the node disk the run names (Karpenter EC2NodeClass, GKE ContainerNodePool) and the image's own size ---
def karpenter(volume="100Gi", mappings=None, family="alias: al2023@latest"):
    mappings = mappings or f"""
  - deviceName: /dev/xvda
    ebs: {{volumeSize: {volume}, volumeType: gp3}}"""
    return f"""apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: gpu}}
spec:
  amiSelectorTerms:
  - {family}
  blockDeviceMappings:{mappings}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: gpu}}
spec:
  template:
    metadata:
      labels: {{workload: vllm}}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}}
      requirements:
      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}}
---
"""


def on_pool(model="meta-llama/Llama-3.3-70B-Instruct", image="vllm/vllm-openai:v0.12.0",
            resources="{requests: {ephemeral-storage: 200Gi}, limits: {nvidia.com/gpu: 4}}",
            selector="{workload: vllm}"):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      nodeSelector: {selector}
      containers:
      - name: vllm
        image: {image}
        command: [vllm, serve, {model}, --tensor-parallel-size, "4"]
        resources: {resources}
"""


def disk_findings(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


@pytest.mark.parametrize("text, expected", [
    # 131 GiB of weights and a 28.6 GB image on a 100 GiB root volume: at the model, whatever the request
    (karpenter() + on_pool(), [(35, 32, Severity.WARNING, "disk:158.1 GiB>100.0 GiB")]),
    # the volume marked rootVolume among two (a Bottlerocket-style data volume)
    (karpenter(mappings="""
  - deviceName: /dev/xvda
    ebs: {volumeSize: 4Gi}
  - deviceName: /dev/xvdb
    rootVolume: true
    ebs: {volumeSize: 120Gi}""", family="alias: bottlerocket@latest") + on_pool(),
     [(38, 32, Severity.WARNING, "disk:158.1 GiB>120.0 GiB")]),
    # the image alone does not fit a 20 GiB root volume (the weights are a local path): at the image
    (karpenter("20Gi") + on_pool("/models/llama-70b", resources="{limits: {nvidia.com/gpu: 4}}"),
     [(34, 16, Severity.WARNING, "image:28GB>20.0 GiB")]),
])
def test_catches_node_disk(text, expected):
    assert disk_findings(text) == expected


GKE = """apiVersion: container.cnrm.cloud.google.com/v1beta1
kind: ContainerNodePool
metadata: {name: l4-pool}
spec:
  clusterRef: {name: inference}
  nodeConfig: {machineType: g2-standard-48, diskSizeGb: 50}
---
"""


def test_catches_gke_node_pool_disk():
    text = GKE + on_pool("Qwen/Qwen2.5-32B-Instruct", "vllm/vllm-openai:v0.29.0",
                         "{limits: {nvidia.com/gpu: 4}}", "{cloud.google.com/gke-nodepool: l4-pool}")
    assert disk_findings(text) == [(20, 32, Severity.WARNING, "disk:69.4 GiB>46.6 GiB")]
    assert "ContainerNodePool l4-pool diskSizeGb 50" in lint(text)[0].message


@pytest.mark.parametrize("text", [
    karpenter("500Gi") + on_pool(),  # room for both
    karpenter("20Gi") + on_pool("/models/llama-70b", "vllm/vllm-openai:v0.4.0",
                                "{limits: {nvidia.com/gpu: 4}}"),  # no size known for that release
    karpenter("20Gi") + on_pool("/models/llama-70b", "myregistry/vllm:v0.12.0", "{limits: {nvidia.com/gpu: 4}}"),
    karpenter("20Gi") + on_pool("/models/llama-70b", "vllm/vllm-openai:latest", "{limits: {nvidia.com/gpu: 4}}"),
    # two mappings and none marked rootVolume: which one holds the images is not known
    karpenter(mappings="""
  - deviceName: /dev/xvda
    ebs: {volumeSize: 4Gi}
  - deviceName: /dev/xvdb
    ebs: {volumeSize: 20Gi}""") + on_pool("/models/llama-70b", resources="{limits: {nvidia.com/gpu: 4}}"),
    # the pod does not land on the pool (it selects another pool's label): the disk is not known
    karpenter("20Gi") + on_pool("/models/llama-70b", resources="{limits: {nvidia.com/gpu: 4}}",
                                selector="{workload: batch}"),
    # the weights on a PVC and an image that fits
    karpenter("50Gi") + on_pool().replace("        resources:", """        volumeMounts: [{name: hf, mountPath: /root/.cache/huggingface}]
        resources:""") + "      volumes: [{name: hf, persistentVolumeClaim: {claimName: hf}}]\n",
])
def test_does_not_catch_node_disk(text):
    assert [f for f in lint(text) if f.value.startswith(("disk:", "image:"))] == []
