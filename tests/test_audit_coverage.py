"""The audited chapter's corrections, one row each, and the rule that catches each one at its line.

`docs/audit-coverage.md` is the table for readers; ROWS below is the same table for the test, which lints the
April edition's fixtures (`fixtures/original/`, `fixtures/own/`) or a small snippet shaped like the April
chapter's fragment and asserts that every rule a row claims fires at the stated line. A second test keeps the
Markdown table and ROWS in step, so neither can rot alone.

The audited chapter: /work/shared/seeds/000_d6394d35322d2264.txt (vLLM 0.29.0, October 2026); the April edition
with the mistakes: 002_e72ac218b61572f0.txt. Snippets pin `vllm/vllm-openai:v0.29.0`, the audit's baseline, so
that the release is known and nothing is assumed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pytest

from vllmlint.engine import Linter, LintOptions

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "docs" / "audit-coverage.md"


def deployment(args: str, container: str = "", pod: str = "", gpus: int = 1) -> str:
    """The April chapter's single-node Deployment (`vLLM Deployment / Single Node Deployment`), pinned to the
    audit's release and with `vllm serve`, so that each snippet shows one correction only. Line 21 is the model
    (the first `args` line), 23 with a `nodeSelector`; the container's extra fields follow `resources`."""
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-inference
spec:
  replicas: 1
  selector:
    matchLabels:
      app: vllm-inference
  template:
    metadata:
      labels:
        app: vllm-inference
    spec:
{pod}      containers:
      - name: vllm-server
        image: vllm/vllm-openai:v0.29.0
        command:
        - vllm
        - serve
{args}
        ports:
        - containerPort: 8000
        resources:
          limits:
            nvidia.com/gpu: {gpus}
{container}"""


def node_type(instance_type: str) -> str:
    return f"      nodeSelector:\n        node.kubernetes.io/instance-type: {instance_type}\n"


SNIPPETS = {
    # "Dynamic LoRA Adapter Loading": `--enable-lora --max-loras 4 --max-lora-rank 64`, no adapter registered.
    "lora": deployment("        - meta-llama/Llama-3.1-8B-Instruct\n        - --enable-lora\n"
                       "        - --max-loras=4\n        - --max-lora-rank=64"),
    # "Tool Calling" needs the server's --tool-call-parser beside --enable-auto-tool-choice.
    "tool-choice": deployment("        - meta-llama/Llama-3.1-8B-Instruct\n        - --enable-auto-tool-choice"),
    # "Vision-Language Model (VLM) Serving": an image model with no media allowlist, the April chapter's
    # llava-hf/llava-v1.6-mistral-7b-hf and the audit's Qwen2.5-VL (both catalogued with their modalities).
    "vlm": deployment("        - Qwen/Qwen2.5-VL-7B-Instruct"),
    "vlm-llava": deployment("        - llava-hf/llava-v1.6-mistral-7b-hf"),
    # "FP8 Quantization" on the chapter's NodePool types (p3.16xlarge: V100).
    "fp8": deployment("        - meta-llama/Llama-3.1-8B-Instruct\n        - --quantization=fp8\n"
                      "        - --kv-cache-dtype=fp8", pod=node_type("p3.16xlarge")),
    # "Quantization Application: --quantization awq" on the chapter's unquantized Llama 3.1 70B.
    "awq": deployment("        - meta-llama/Llama-3.1-70B-Instruct\n        - --tensor-parallel-size=4\n"
                      "        - --quantization=awq", gpus=4),
    # "Modelo 70B: mínimo 80 GB de memoria GPU": 70B in BF16 on one 80 GB H100.
    "70b-on-80gb": deployment("        - meta-llama/Llama-3.1-70B-Instruct", pod=node_type("p5.48xlarge")),
    # "p4d.24xlarge: 8x NVIDIA A100 GPU, 40 GB u 80 GB": p4d's A100s have 40 GB (p4de: 80 GB).
    "p4d": deployment("        - meta-llama/Llama-3.1-70B-Instruct\n        - --tensor-parallel-size=2",
                      pod=node_type("p4d.24xlarge"), gpus=2),
    # "trn1.32xlarge: 16x AWS Trainium": a CUDA image is no drop-in Trainium/Inferentia deployment.
    "trn1": deployment("        - meta-llama/Llama-3.1-8B-Instruct", pod=node_type("trn1.32xlarge")),
    "inf2": deployment("        - meta-llama/Llama-3.1-8B-Instruct", pod=node_type("inf2.48xlarge")),
    # "EFA (Elastic Fabric Adapter) Utilization": `vpc.amazonaws.com/efa: 1` on the NodePool's p3.16xlarge (no
    # EFA), and more interfaces than p4d.24xlarge has (4).
    "efa-none": deployment("        - meta-llama/Llama-3.1-8B-Instruct",
                           "            vpc.amazonaws.com/efa: 1\n", node_type("p3.16xlarge")),
    "efa-count": deployment("        - meta-llama/Llama-3.1-70B-Instruct\n        - --tensor-parallel-size=8",
                            "            vpc.amazonaws.com/efa: 8\n", node_type("p4d.24xlarge"), gpus=8),
    # "EFA (Elastic Fabric Adapter) Utilization" as the chapter writes it: its `resources` fragment in its own
    # single-node Deployment, run with its NodePool (p3.16xlarge has the 8 GPUs but no EFA, g5.12xlarge the EFA
    # but 4 GPUs).
    "efa-april": (ROOT / "fixtures" / "original" / "single-node-deployment.yaml").read_text().replace(
        "            nvidia.com/gpu: 8\n", "            nvidia.com/gpu: 8\n            vpc.amazonaws.com/efa: 1\n"),
    # "NCCL Settings Optimization": the chapter's env fragment.
    "nccl": deployment("        - meta-llama/Llama-3.1-8B-Instruct", """        env:
        - name: NCCL_DEBUG
          value: "INFO"
        - name: NCCL_MIN_NCHANNELS
          value: "4"
        - name: NCCL_SOCKET_IFNAME
          value: "^lo,docker"
        - name: NCCL_ASYNC_ERROR_HANDLING
          value: "1"
"""),
    # "Security Context": the chapter's fragment, placed where it says ("the security context of the container").
    "security-context": deployment("        - meta-llama/Llama-3.1-8B-Instruct", """        securityContext:
          runAsUser: 1000
          runAsGroup: 1000
          fsGroup: 1000
          allowPrivilegeEscalation: false
          capabilities:
            drop:
            - ALL
"""),
    # The audit pins its model with --revision; a served repository id without one.
    "revision": deployment("        - meta-llama/Llama-3.1-8B-Instruct"),
    # "Do not invent a separate 8001 port or --enable-metrics=true".
    "enable-metrics": deployment("        - meta-llama/Llama-3.1-8B-Instruct\n        - --enable-metrics=true"),
    # "Multi-Node Distributed Deployment" rewritten with the audit's flags (--nnodes/--node-rank), one script
    # for both pods (no --headless on rank 1), and a readiness probe under the default OrderedReady.
    "multi-node": """apiVersion: v1
kind: ConfigMap
metadata:
  name: vllm-config
data:
  run_server.sh: |
    #!/bin/bash
    RANK=${HOSTNAME##*-}
    vllm serve /models/llama-3.1-70b \\
      --distributed-executor-backend mp \\
      --tensor-parallel-size 8 --pipeline-parallel-size 2 \\
      --nnodes 2 --node-rank $RANK \\
      --master-addr vllm-inference-0.vllm-inference --master-port 29500
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: vllm-inference
spec:
  serviceName: "vllm-inference"
  replicas: 2
  selector:
    matchLabels:
      app: vllm-inference
  template:
    metadata:
      labels:
        app: vllm-inference
    spec:
      containers:
      - name: vllm-server
        image: vllm/vllm-openai:v0.29.0
        command:
        - bash
        - /config/run_server.sh
        readinessProbe: {httpGet: {path: /health, port: 8000}}
        ports:
        - containerPort: 8000
        - containerPort: 29500
        resources:
          limits:
            nvidia.com/gpu: 8
        volumeMounts:
        - name: config-volume
          mountPath: /config
        - name: shm
          mountPath: /dev/shm
      volumes:
      - name: config-volume
        configMap:
          name: vllm-config
          defaultMode: 0755
      - name: shm
        emptyDir:
          medium: Memory
---
apiVersion: v1
kind: Service
metadata:
  name: vllm-inference
spec:
  selector:
    app: vllm-inference
  ports:
  - port: 8000
    targetPort: 8000
    name: api
  - port: 29500
    targetPort: 29500
    name: nccl
  clusterIP: None
""",
}

CAUGHT, PARTLY, NOT_CAUGHT, NOT_CHECKABLE = "caught", "partly", "not caught", "not checkable"
ORIGINAL = tuple(f"original/{p.name}" for p in sorted((ROOT / "fixtures" / "original").iterdir()))


@dataclass(frozen=True)
class Row:
    id: str
    section: str
    point: str
    status: str
    hits: tuple[tuple[str, str, int], ...] = ()  # (rule code, input name, line)
    inputs: tuple[str, ...] = ()  # linted together; () = the whole April edition (fixtures/original)
    select: tuple[str, ...] = ()  # lint with only these rules (to turn on an off-by-default one)
    note: str = ""
    gap: str = field(default="", compare=False)  # what is missing, for partly / not caught


ROWS: tuple[Row, ...] = (
    # --- Lab environment, system requirements -----------------------------------------------------------
    Row("A01", "Lab Environment Setup", "compute capability 7.5+, V100 (Volta, the NodePool's p3.16xlarge) excluded",
        CAUGHT, (("VL607", "original/single-node-deployment.yaml", 17),
                 ("VL607", "original/multi-node-statefulset.yaml", 57))),
    Row("A02", "Lab Environment Setup", "a CUDA image is no drop-in Trainium deployment (trn1.32xlarge)", CAUGHT,
        (("VL607", "snippet:trn1", 19),), ("snippet:trn1",)),
    Row("A03", "Lab Environment Setup", "nor an Inferentia one (inf2)", CAUGHT, (("VL607", "snippet:inf2", 19),),
        ("snippet:inf2",)),
    Row("A04", "Lab Environment Setup", "g5.2xlarge and 50 GB are no universal minimums", NOT_CHECKABLE,
        note="prose sizing advice, no manifest; the capacity rules (VL601-VL609) size the model that is deployed"),
    Row("A05", "Lab Environment Setup", "Python >=3.10 (April: 3.9), PyTorch and CUDA versions", NOT_CHECKABLE,
        note="prose; the chapter installs no vLLM into a Python image of its choosing"),
    Row("A06", "Lab Environment Setup", "0.29.0's default image is CUDA 13.0, with a separate -cu129 variant",
        NOT_CHECKABLE, note="no node driver is named in the chapter; VL722 judges the variant where it is"),
    # --- Capabilities, current CLI ---------------------------------------------------------------------
    Row("B01", "Current CLI Feature Configuration", "`vllm serve`, not the deprecated api_server module", CAUGHT,
        (("VL101", "original/speculative-decoding.sh", 1), ("VL101", "original/single-node-deployment.yaml", 21),
         ("VL101", "original/multi-node-statefulset.yaml", 19))),
    Row("B02", "Current CLI Feature Configuration", "`--speculative-model` replaced by --speculative-config", CAUGHT,
        (("VL102", "original/speculative-decoding.sh", 3),)),
    Row("B03", "Current CLI Feature Configuration", "`--num-speculative-tokens` replaced by --speculative-config",
        CAUGHT, (("VL102", "original/speculative-decoding.sh", 4),)),
    Row("B04", "Memory, Scheduler and Communication Options", "`--swap-space` is absent from the current CLI",
        CAUGHT, (("VL102", "own/original-deployment-with-removed-flags.yaml", 30),),
        ("own/original-deployment-with-removed-flags.yaml",)),
    Row("B05", "Memory, Scheduler and Communication Options",
        "prefix caching defaults on: `--enable-prefix-caching` is redundant", CAUGHT,
        (("VL113", "original/single-node-deployment.yaml", 26),)),
    Row("B06", "Memory, Scheduler and Communication Options",
        "chunked prefill is the default too: `--enable-chunked-prefill` is redundant", CAUGHT,
        (("VL113", "original/single-node-deployment.yaml", 27),)),
    Row("B07", "Current CLI Feature Configuration",
        "LoRA needs adapter registration (`--lora-modules`, or the runtime-loading opt-in)", CAUGHT,
        (("VL108", "snippet:lora", 22),), ("snippet:lora",)),
    Row("B08", "Current CLI Feature Configuration", "`--enable-auto-tool-choice` needs a `--tool-call-parser`",
        CAUGHT, (("VL108", "snippet:tool-choice", 22),), ("snippet:tool-choice",)),
    Row("B09", "Current CLI Feature Configuration", "multimodal URLs need SSRF controls (allowed media domains)",
        CAUGHT, (("VL804", "snippet:vlm", 21), ("VL804", "snippet:vlm-llava", 21)),
        ("snippet:vlm", "snippet:vlm-llava")),
    Row("B10", "Capabilities and Support Boundaries", "FP8 needs device support (V100 has none)", CAUGHT,
        (("VL607", "snippet:fp8", 24),), ("snippet:fp8",)),
    Row("B11", "Capabilities and Support Boundaries",
        "AWQ is a checkpoint format: `--quantization awq` on unquantized weights", CAUGHT,
        (("VL716", "snippet:awq", 23),), ("snippet:awq",)),
    Row("B12", "Capabilities and Support Boundaries", "structured outputs / tool calls are client requests",
        NOT_CHECKABLE, note="Python client code; vllmlint reads no Python client"),
    Row("B13", "Introduction / Capabilities", "\"Vector Language Model\", 10x/2x/2-3x speed-up claims, model table",
        NOT_CHECKABLE, note="prose claims"),
    # --- System requirements ------------------------------------------------------------------------------
    Row("C01", "System Requirements", "70B in FP16/BF16 is about 140 GB: 80 GB is not enough", CAUGHT,
        (("VL601", "snippet:70b-on-80gb", 23),), ("snippet:70b-on-80gb",)),
    Row("C02", "System Requirements", "p4d.24xlarge has 40 GB A100s (p4de: 80 GB)", CAUGHT,
        (("VL601", "snippet:p4d", 23),), ("snippet:p4d",)),
    Row("C03", "System Requirements", "no fixed rules such as 4 CPU cores per GPU or RAM twice the weights",
        NOT_CHECKABLE, note="prose advice; nothing in a manifest is wrong by it"),
    # --- Storage and model preparation --------------------------------------------------------------------
    Row("D01", "Storage and Model Preparation", "`fsx.aws.k8s.io/v1beta1 Lustre` is no API anything serves",
        CAUGHT, (("VL809", "original/fsx-lustre.yaml", 1),)),
    Row("D02", "Storage and Model Preparation", "static FSx PV/PVC vs dynamic provisioning (StorageClass parameters)",
        CAUGHT, (("VL809", "original/fsx-lustre.yaml", 19), ("VL809", "original/fsx-lustre.yaml", 20),
                 ("VL809", "original/fsx-lustre.yaml", 21))),
    Row("D03", "Storage and Model Preparation", "`snapshot_download` downloads from Hugging Face, not S3",
        NOT_CHECKABLE, note="the error is the section's title, not the Job"),
    Row("D04", "Storage and Model Preparation", "record the repository revision (`snapshot_download` without one)",
        CAUGHT, (("VL114", "original/model-download-job.yaml", 22),), select=("VL114",),
        note="VL114 is off by default (a reproducibility policy): select it"),
    Row("D05", "Storage and Model Preparation", "gated-model token as a file, not an env var", CAUGHT,
        (("VL803", "original/model-download-job.yaml", 27),)),
    Row("D06", "Storage and Model Preparation", "`huggingface/transformers:latest` is unpinned", CAUGHT,
        (("VL201", "original/model-download-job.yaml", 10),)),
    # --- Single-GPU / single-node Deployment --------------------------------------------------------------
    Row("E01", "Single-GPU Configuration Example", "digest-pinned image, not `:latest`", CAUGHT,
        (("VL201", "original/single-node-deployment.yaml", 17),
         ("VL201", "original/multi-node-statefulset.yaml", 57))),
    Row("E02", "Single-GPU Configuration Example", "ClusterIP Service, no public LoadBalancer", CAUGHT,
        (("VL501", "original/single-node-deployment.yaml", 55),)),
    Row("E03", "Single-GPU Configuration Example", "startup and readiness probes", CAUGHT,
        (("VL702", "original/single-node-deployment.yaml", 16),)),
    Row("E04", "Single-GPU Configuration Example",
        "non-root, no privilege escalation, capabilities dropped, seccomp, no API token", CAUGHT,
        (("VL810", "original/single-node-deployment.yaml", 16),)),
    Row("E05", "Single-GPU Configuration Example", "Recreate: a rolling update needs a spare GPU set", CAUGHT,
        (("VL707", "original/single-node-deployment.yaml", 6),)),
    Row("E06", "Single-GPU Configuration Example", "memory-backed /dev/shm for the workers", CAUGHT,
        (("VL608", "original/single-node-deployment.yaml", 23),
         ("VL608", "original/multi-node-statefulset.yaml", 21))),
    Row("E07", "Single-GPU Configuration Example", "no hand-set CUDA_VISIBLE_DEVICES (the device plugin picks)",
        CAUGHT, (("VL708", "original/single-node-deployment.yaml", 39),)),
    Row("E08", "Single-GPU Configuration Example", "CPU and memory requests and limits on the GPU container",
        CAUGHT, (("VL705", "original/single-node-deployment.yaml", 33),
                 ("VL705", "original/multi-node-statefulset.yaml", 66)),
        note="info: no memory requested, the pod is BestEffort"),
    Row("E09", "Single-GPU Configuration Example", "pin the served repository with `--revision`", CAUGHT,
        (("VL114", "snippet:revision", 21),), ("snippet:revision",), select=("VL114",),
        note="VL114 is off by default: select it; the April Deployment serves a local path (no revision needed)"),
    Row("E10", "Size GPU, RAM and disk for the model", "70B on the NodePool's V100s does not fit", CAUGHT,
        (("VL601", "original/single-node-deployment.yaml", 22),)),
    Row("E11", "Size GPU, RAM and disk for the model", "TP 8 on the NodePool's 4-GPU g5.12xlarge", CAUGHT,
        (("VL606", "original/single-node-deployment.yaml", 33),)),
    Row("E12", "Client Request", "the request's model must match --served-model-name", NOT_CHECKABLE,
        note="the client is a Python script; vllmlint reads no Python client (VL719 checks clients in manifests)"),
    Row("E13", "Storage and Model Preparation", "record the revision: the chapter's shell command serves a Hub id",
        CAUGHT, (("VL114", "original/speculative-decoding.sh", 2),), ("original/speculative-decoding.sh",),
        select=("VL114",), note="VL114 is off by default: select it"),
    # --- Multi-node ---------------------------------------------------------------------------------------
    Row("F01", "Multi-Node Sharding", "`--rank` is no vLLM option (use --nnodes/--node-rank)", CAUGHT,
        (("VL103", "original/multi-node-statefulset.yaml", 28),)),
    Row("F02", "Multi-Node Sharding", "TP 16 over two 8-GPU pods needs --nnodes 2", CAUGHT,
        (("VL606", "original/multi-node-statefulset.yaml", 66),)),
    Row("F03", "Multi-Node Sharding", "the worker starts no duplicate API server (`--headless`)", CAUGHT,
        (("VL811", "snippet:multi-node", 12),), ("snippet:multi-node",),
        note="on the April script vLLM is not multi-node at all (no --nnodes): F02 reports that first"),
    Row("F04", "Multi-Node Sharding", "concurrent worker creation and pre-readiness DNS", CAUGHT,
        (("VL713", "snippet:multi-node", 13), ("VL713", "snippet:multi-node", 36)), ("snippet:multi-node",)),
    Row("F05", "Multi-Node Sharding", "keep internal communication ports private (LoadBalancer on pod 0)", CAUGHT,
        (("VL501", "original/multi-node-statefulset.yaml", 119),)),
    Row("F06", "EFA / NCCL", "no arbitrary IB/GID settings on AWS (no InfiniBand)", CAUGHT,
        (("VL808", "original/multi-node-statefulset.yaml", 77), ("VL808", "original/multi-node-statefulset.yaml", 79))),
    Row("F07", "EFA / NCCL", "current PyTorch variables (NCCL_ASYNC_ERROR_HANDLING was renamed)", CAUGHT,
        (("VL808", "snippet:nccl", 34),), ("snippet:nccl",)),
    Row("F08", "EFA / NCCL", "EFA needs a supported EC2 type (p3.16xlarge has none)", CAUGHT,
        (("VL718", "snippet:efa-none", 29),), ("snippet:efa-none",)),
    Row("F09", "EFA / NCCL", "no more EFA interfaces than the type has", CAUGHT,
        (("VL718", "snippet:efa-count", 30),), ("snippet:efa-count",)),
    Row("F10", "EFA / NCCL", "`vpc.amazonaws.com/efa` is a resource, not a node label (NodePool requirement)",
        CAUGHT, (("VL718", "original/karpenter-nodepool.yaml", 22),)),
    Row("F11", "EFA / NCCL", "the chapter's EFA request on its own Deployment and NodePool: no type has both",
        CAUGHT, (("VL718", "snippet:efa-april", 34), ("VL606", "snippet:efa-april", 33)),
        ("snippet:efa-april", "original/karpenter-nodepool.yaml")),
    # --- Monitoring and logging ---------------------------------------------------------------------------
    Row("G01", "Metrics and Logs", "/metrics is on the API port 8000, not 8001", CAUGHT,
        (("VL301", "original/metrics-service-monitor.yaml", 12), ("VL301", "original/metrics-service-monitor.yaml", 25))),
    Row("G02", "Metrics and Logs", "no invented `--enable-metrics=true`", CAUGHT,
        (("VL103", "snippet:enable-metrics", 22),), ("snippet:enable-metrics",)),
    Row("G03", "Metrics and Logs", "ServiceMonitor namespace selection", CAUGHT,
        (("VL806", "original/metrics-service-monitor.yaml", 22),)),
    Row("G04", "Metrics and Logs", "CRI framing of container logs (fluentd `@type json`)", CAUGHT,
        (("VL812", "original/fluentd-configmap.yaml", 15),)),
    # --- Autoscaling --------------------------------------------------------------------------------------
    Row("H01", "Autoscaling and Availability", "no CPU-utilization HPA without CPU requests", CAUGHT,
        (("VL401", "original/hpa.yaml", 15),)),
    Row("H02", "Autoscaling and Availability", "validate the adapter's request/queue signals (`requests_per_second`)",
        CAUGHT, (("VL807", "original/hpa.yaml", 22),)),
    Row("H03", "Autoscaling and Availability", "one capacity owner (Karpenter vs Cluster Autoscaler)", NOT_CHECKABLE,
        note="cluster add-ons, not in the chapter's files"),
    Row("H04", "Node Autoscaling with Karpenter", "karpenter v1 `nodeClassRef` needs group and kind", CAUGHT,
        (("VL809", "original/karpenter-nodepool.yaml", 26),)),
    Row("H05", "Node Autoscaling with Karpenter", "EC2NodeClass v1 selector terms (not subnetSelector...)", CAUGHT,
        (("VL809", "original/karpenter-nodepool.yaml", 35), ("VL809", "original/karpenter-nodepool.yaml", 36),
         ("VL809", "original/karpenter-nodepool.yaml", 38))),
    Row("H06", "Node Autoscaling with Karpenter", "`ttlSecondsAfterEmpty` is pre-v1 (v1: disruption)", CAUGHT,
        (("VL809", "original/karpenter-nodepool.yaml", 40),)),
    # --- Security -----------------------------------------------------------------------------------------
    Row("I01", "Security Configuration", "NetworkPolicy: DNS", CAUGHT, (("VL805", "original/network-policy.yaml", 11),)),
    Row("I02", "Security Configuration", "NetworkPolicy: scrape direction and the ranks' traffic", CAUGHT,
        (("VL805", "original/network-policy.yaml", 10),)),
    Row("I03", "Security Configuration", "`fsGroup` belongs in the pod's securityContext", CAUGHT,
        (("VL809", "snippet:security-context", 30),), ("snippet:security-context",)),
    Row("I04", "Security Configuration", "the security fragment lacks runAsNonRoot and seccomp", CAUGHT,
        (("VL810", "snippet:security-context", 27),), ("snippet:security-context",)),
    Row("I05", "Security Configuration", "an authenticated gateway, not nginx forwarding /v1/ openly", CAUGHT,
        (("VL501", "original/api-gateway.yaml", 38),)),
    Row("I06", "Security Configuration", "`nginx:latest` is unpinned", CAUGHT, (("VL201", "original/api-gateway.yaml", 17),)),
    Row("I07", "Security Configuration", "regex blocking of prompt injection, CORS is no authentication", NOT_CHECKABLE,
        note="prose; the April chapter configures neither"),
)


def text_of(name: str) -> str:
    if name.startswith("snippet:"):
        return SNIPPETS[name[len("snippet:"):]]
    return (ROOT / "fixtures" / name).read_text()


@lru_cache(maxsize=None)
def found(inputs: tuple[str, ...], select: tuple[str, ...]) -> frozenset[tuple[str, str, int]]:
    """(code, input name, line) of every finding when `inputs` are linted together."""
    linter = Linter(LintOptions(select=list(select)) if select else LintOptions())  # select: only those rules
    names = {}
    for name in inputs or ORIGINAL:
        # One folder for the inputs of a row, as the chapter's files would sit: a NodePool is taken to be meant
        # for the pods of its own folder (capacity.workload._pool_meant_for).
        base = name.rsplit("/", 1)[-1].replace("snippet:", "snippet-")
        path = "chapter/" + base + ("" if "." in base else ".yaml")
        names[path] = name
        linter.add_text(text_of(name), path, Path(path).suffix.lower())
    result = linter.run()
    assert not result.internal_error, [n.message for n in result.notices]
    return frozenset((f.code, names.get(f.path, f.path), f.span.line) for f in result.findings)


@pytest.mark.parametrize("row", [r for r in ROWS if r.hits], ids=lambda r: r.id)
def test_the_rule_fires_at_the_stated_line(row):
    got = found(row.inputs, row.select)
    missing = [hit for hit in row.hits if hit not in got]
    assert not missing, f"{row.id} ({row.point}): no {missing}; found {sorted(g for g in got if g[0] in {h[0] for h in row.hits})}"


def test_a_row_not_caught_or_partly_says_what_is_missing():
    for row in ROWS:
        if row.status in (NOT_CAUGHT, PARTLY):
            assert row.gap, row.id


def test_every_row_is_classified_once():
    ids = [r.id for r in ROWS]
    assert len(ids) == len(set(ids))
    for row in ROWS:
        assert row.status in (CAUGHT, PARTLY, NOT_CAUGHT, NOT_CHECKABLE), row.id
        assert bool(row.hits) == (row.status in (CAUGHT, PARTLY)), row.id
        assert (row.status == NOT_CHECKABLE) == bool(row.note and not row.hits and not row.gap), row.id


def _cell_codes(row: Row) -> str:
    by_code: dict[str, list[str]] = {}
    for code, name, line in row.hits:
        by_code.setdefault(code, []).append(f"{name.split('/')[-1]}:{line}")
    return "; ".join(f"{code} ({', '.join(places)})" for code, places in by_code.items())


def table_rows() -> list[str]:
    """The rows of docs/audit-coverage.md's table, as the test expects them."""
    lines = []
    for row in ROWS:
        detail = _cell_codes(row)
        why = row.gap or row.note
        lines.append(f"| {row.id} | {row.point} | {row.section} | {row.status} | {detail} | {why} |")
    return lines


def test_the_markdown_table_matches_the_rows():
    text = TABLE.read_text()
    written = [line for line in text.splitlines() if re.match(r"^\| [A-I]\d\d \|", line)]
    assert written == table_rows(), "regenerate the table: python -m tests.test_audit_coverage > rows"
    counts = {s: sum(r.status == s for r in ROWS) for s in (CAUGHT, PARTLY, NOT_CAUGHT, NOT_CHECKABLE)}
    said = (f"{counts[CAUGHT]} caught, {counts[PARTLY]} partly, {counts[NOT_CAUGHT]} not caught, "
            f"{counts[NOT_CHECKABLE]} not checkable")
    assert said in text and f"({len(ROWS)} rows)" in text


if __name__ == "__main__":  # print the table's rows (to paste into docs/audit-coverage.md)
    print("\n".join(table_rows()))
