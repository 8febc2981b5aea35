"""VL805 network-policy-gap: catches / does not catch, with the position of every finding."""
import json

import jsonschema
import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.k8s.networkpolicy import EGRESS, INGRESS, network_policies
from vllmlint.k8s.objects import World
from vllmlint.source.yamlmodel import SourceFile, parse_documents


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL805"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL805"]


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


def deployment(model="Qwen/Qwen3-8B", labels="{app: vllm}", env="[]", extra_args="", ns="", annotations="{}",
               ports="[{containerPort: 8000, name: http}]"):
    namespace = f", namespace: {ns}" if ns else ""
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm{namespace}}}
spec:
  selector: {{matchLabels: {labels}}}
  template:
    metadata: {{labels: {labels}, annotations: {annotations}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: [{model}, --port, "8000"{extra_args}]
        env: {env}
        ports: {ports}
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


# The first document is the Deployment (16 lines); policies start at line 17 after the `---`.
def policy(body, name="vllm", ns=""):
    namespace = f"\n  namespace: {ns}" if ns else ""
    return f"""---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {name}{namespace}
spec:
{body}"""


DENY_EGRESS = """  podSelector: {matchLabels: {app: vllm}}
  policyTypes:
  - Egress
"""
ALLOW_DNS = """  podSelector: {}
  policyTypes: [Egress]
  egress:
  - to:
    - namespaceSelector:
        matchLabels: {kubernetes.io/metadata.name: kube-system}
      podSelector:
        matchLabels: {k8s-app: kube-dns}
    ports:
    - {protocol: UDP, port: 53}
    - {protocol: TCP, port: 53}
"""


# --- the data file ---------------------------------------------------------------------------------------
def test_data_file_matches_its_schema():
    data = load_yaml_data(knowledge_dir() / "network-policy.yaml")
    schema = json.loads((schemas_dir() / "network-policy.schema.json").read_text())
    jsonschema.validate(data, schema)


# --- the model: Kubernetes' defaulting and union ------------------------------------------------------------
def world(text):
    documents, _ = parse_documents(SourceFile("x.yaml", text))
    w = World()
    for document in documents:
        w.add_document(document)
    return w


@pytest.mark.parametrize("body, types", [
    ("  podSelector: {}\n", (INGRESS,)),
    ("  podSelector: {}\n  egress: []\n", (INGRESS,)),  # an empty egress section does not make it Egress
    ("  podSelector: {}\n  egress: [{}]\n", (INGRESS, EGRESS)),
    ("  podSelector: {}\n  policyTypes: [Egress]\n", (EGRESS,)),
    ("  podSelector: {}\n  policyTypes: [Ingress, Egress]\n  ingress: [{}]\n", (INGRESS, EGRESS)),
])
def test_policy_types_default_like_the_api_server(body, types):
    (parsed,) = network_policies(world(policy(body)))
    assert parsed.types == types


def test_other_policy_kinds_are_not_read():
    text = policy(DENY_EGRESS).replace("networking.k8s.io/v1", "cilium.io/v2").replace("NetworkPolicy",
                                                                                         "CiliumNetworkPolicy")
    assert network_policies(world(text)) == []


# --- DNS ---------------------------------------------------------------------------------------------------
def test_default_deny_egress_with_a_hub_model():
    findings = lint(deployment() + policy(DENY_EGRESS))
    assert [(f.span.line, f.span.col, f.severity) for f in findings] == [(24, 5, Severity.WARNING)]
    assert "blocks DNS: no egress rule allows UDP port 53" in findings[0].message
    assert "downloads Qwen/Qwen3-8B from the Hugging Face hub" in findings[0].message


def test_default_deny_plus_allow_dns_is_the_normal_pattern():
    assert found(deployment() + policy(DENY_EGRESS, "deny") + policy(ALLOW_DNS, "allow-dns")) == []


def test_allow_dns_in_another_namespace_does_not_count():
    text = deployment(ns="serving") + policy(DENY_EGRESS, "deny", "serving") + policy(ALLOW_DNS, "dns", "other")
    assert [v for *_, v in found(text)] == ["dns:deny"]


def test_egress_defaulted_from_rules_points_at_the_egress_key():
    body = """  podSelector: {matchLabels: {app: vllm}}
  egress:
  - ports: [{protocol: TCP, port: 443}]
"""
    assert found(deployment() + policy(body)) == [(23, 3, Severity.WARNING, "dns:vllm")]


def test_tcp_only_53():
    body = DENY_EGRESS + """  egress:
  - to: [{namespaceSelector: {}}]
    ports: [{port: 53}]
"""
    (finding,) = lint(deployment() + policy(body))
    assert "allowed over TCP only" in finding.message


def test_kube_dns_selected_without_a_namespace_selector():
    body = DENY_EGRESS + """  egress:
  - to: [{podSelector: {matchLabels: {k8s-app: kube-dns}}}]
    ports: [{protocol: UDP, port: 53}]
"""
    (finding,) = lint(deployment() + policy(body))
    assert "reaches only pods of the policy's own namespace" in finding.message
    assert finding.severity == Severity.WARNING


def test_multi_node_peer_by_name():
    args = ', --nnodes, "2", --node-rank, "0", --master-addr, vllm-0.vllm-headless, --tensor-parallel-size, "2"'
    (finding,) = lint(deployment(model="/models/llama", extra_args=args) + policy(DENY_EGRESS))
    assert finding.severity == Severity.WARNING and "`--master-addr vllm-0.vllm-headless`" in finding.message


def test_udp_53_to_pods_of_the_own_namespace_only():
    body = DENY_EGRESS + """  egress:
  - to: [{podSelector: {}}]
    ports: [{protocol: UDP, port: 53}]
"""
    (finding,) = lint(deployment() + policy(body))
    assert "reaches only pods of the policy's own namespace" in finding.message


def test_all_ports_to_the_own_pods_is_not_a_dns_rule():
    body = DENY_EGRESS + "  egress:\n  - to: [{podSelector: {matchLabels: {app: vllm}}}]\n"
    (finding,) = lint(deployment() + policy(body))
    assert "no egress rule allows UDP port 53" in finding.message


def test_remote_tokenizer_needs_dns():
    (finding,) = lint(deployment(model="/models/llama", extra_args=", --tokenizer, meta-llama/Llama-3.1-8B")
                      + policy(DENY_EGRESS))
    assert finding.severity == Severity.WARNING and "tokenizer meta-llama/Llama-3.1-8B" in finding.message


def test_host_network_pods_are_not_judged():
    text = deployment().replace("    spec:\n      containers:", "    spec:\n      hostNetwork: true\n      containers:")
    assert "hostNetwork" in text
    assert found(text + policy(DENY_EGRESS)) == []


LWS = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      metadata: {labels: {app: vllm}}
      spec:
        containers:
        - name: leader
          image: vllm/vllm-openai:v0.29.0
          command: [sh, -c, "vllm serve /models/llama --tensor-parallel-size 8 --nnodes 2 --node-rank 0 --master-addr $(LWS_LEADER_ADDRESS)"]
          resources: {limits: {nvidia.com/gpu: 8}}
    workerTemplate:
      metadata: {labels: {app: vllm}}
      spec:
        containers:
        - name: worker
          image: vllm/vllm-openai:v0.29.0
          command: [sh, -c, "vllm serve /models/llama --tensor-parallel-size 8 --nnodes 2 --node-rank 1 --master-addr $(LWS_LEADER_ADDRESS) --headless"]
          resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_lws_leader_address_is_a_name():
    (finding,) = [f for f in lint(LWS + policy(DENY_EGRESS)) if f.value.startswith("dns:")]
    assert finding.severity == Severity.WARNING and "LWS_LEADER_ADDRESS" in finding.message
    assert "LeaderWorkerSet vllm (leader) and LeaderWorkerSet vllm (worker)" in finding.message


def test_local_model_is_info():
    assert found(deployment(model="/models/llama") + policy(DENY_EGRESS)) == [(24, 5, Severity.INFO, "dns:vllm")]


def test_local_model_and_offline_is_silent():
    env = "[{name: HF_HUB_OFFLINE, value: '1'}]"
    assert found(deployment(model="/models/llama", env=env) + policy(DENY_EGRESS)) == []


def test_offline_hub_id_from_a_cache_is_silent():
    env = "[{name: HF_HUB_OFFLINE, value: '1'}]"
    assert found(deployment(env=env) + policy(DENY_EGRESS)) == []


@pytest.mark.parametrize("egress", [
    "  egress: [{}]\n",  # allow all
    "  egress: [{ports: [{protocol: UDP, port: 53}]}]\n",  # UDP 53 anywhere
    "  egress: [{to: [{ipBlock: {cidr: 169.254.20.10/32}}], ports: [{protocol: UDP, port: 53}]}]\n",  # node-local DNS
    "  egress: [{to: [{namespaceSelector: {}}], ports: [{protocol: UDP, port: 1, endPort: 1024}]}]\n",  # a range
    "  egress: [{to: [{namespaceSelector: {}}], ports: [{protocol: UDP, port: dns}]}]\n",  # a named port
    # DNS pods that listen on another port behind the Service (Gardener: 8053)
    "  egress: [{to: [{namespaceSelector: {}, podSelector: {matchLabels: {k8s-app: kube-dns}}}],"
    " ports: [{protocol: UDP, port: 8053}]}]\n",
])
def test_dns_allowed(egress):
    assert found(deployment() + policy(DENY_EGRESS + egress)) == []


@pytest.mark.parametrize("body", [
    "  podSelector: {matchLabels: {app: vllm}}\n  ingress: [{}]\n",  # Ingress only (defaulted)
    "  podSelector: {matchLabels: {app: vllm}}\n  egress: []\n",  # empty egress: Ingress only
    "  podSelector: {matchLabels: {app: other}}\n  policyTypes: [Egress]\n",  # another pod
])
def test_not_isolated_for_egress(body):
    assert found(deployment() + policy(body)) == []


def test_policy_in_another_namespace_does_not_select():
    assert found(deployment(ns="serving") + policy(DENY_EGRESS, ns="other")) == []


def test_a_cilium_policy_in_the_run_may_allow_dns():
    cilium = """---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: dns}
spec:
  endpointSelector: {}
  egress:
  - toEndpoints: [{matchLabels: {k8s:io.kubernetes.pod.namespace: kube-system, k8s-app: kube-dns}}]
    toPorts: [{ports: [{port: "53", protocol: ANY}]}]
"""
    assert found(deployment() + policy(DENY_EGRESS) + cilium) == []


def test_compose_and_policies_alone_are_silent():
    assert found(policy(DENY_EGRESS).lstrip("-\n")) == []


# --- Prometheus ------------------------------------------------------------------------------------------------
POD_MONITOR = """---
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata: {name: vllm, namespace: monitoring}
spec:
  namespaceSelector: {any: true}
  selector: {matchLabels: {app: vllm}}
  podMetricsEndpoints:
  - port: http
"""
DENY_INGRESS = """  podSelector: {matchLabels: {app: vllm}}
  policyTypes: [Ingress]
  ingress:
  - from: [{podSelector: {matchLabels: {app: api-gateway}}}]
    ports: [{protocol: TCP, port: 8000}]
"""


def test_scrape_blocked():
    findings = lint(deployment() + policy(DENY_INGRESS) + POD_MONITOR)
    assert [(f.span.line, f.span.col, f.severity, f.value) for f in findings] == \
        [(23, 17, Severity.WARNING, "scrape:8000")]
    assert "PodMonitor vllm scrapes" in findings[0].message


def test_scrape_annotation_blocked_by_default_deny():
    annotations = '{prometheus.io/scrape: "true", prometheus.io/port: "8000"}'
    body = "  podSelector: {}\n  policyTypes: [Ingress]\n"
    assert found(deployment(annotations=annotations) + policy(body)) == [(23, 17, Severity.WARNING, "scrape:8000")]


def test_scrape_port_not_the_api_port_says_so():
    annotations = '{prometheus.io/scrape: "true", prometheus.io/port: "8001"}'
    (finding,) = lint(deployment(annotations=annotations) + policy("  podSelector: {}\n  policyTypes: [Ingress]\n"))
    assert "Allow TCP 8000" in finding.message and "see VL301" in finding.message


@pytest.mark.parametrize("rule", [
    "  - from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}}]\n"
    "    ports: [{port: 8000}]\n",
    "  - from: [{podSelector: {matchLabels: {app.kubernetes.io/name: prometheus}}}]\n    ports: [{port: http}]\n",
    "  - ports: [{port: 8000}]\n",  # any source
    "  - from: [{ipBlock: {cidr: 10.0.0.0/8}}]\n",  # addresses: Prometheus may be there
])
def test_scrape_allowed(rule):
    assert found(deployment() + policy(DENY_INGRESS + rule) + POD_MONITOR) == []


def test_scrape_open_only_to_a_namespace_named_for_something_else_is_info():
    rule = ("  - from: [{namespaceSelector: {matchLabels: {name: ingress-nginx}}}]\n"
            "    ports: [{port: 8000}]\n")
    (finding,) = lint(deployment() + policy(DENY_INGRESS + rule) + POD_MONITOR)
    assert finding.severity == Severity.INFO and "opens scraped port 8000 only to namespace(s) ingress-nginx" in finding.message


def test_hub_model_with_a_cache_volume_is_info():
    text = deployment().replace("        resources:", "        volumeMounts: [{name: c, mountPath: /root/.cache/huggingface}]\n"
                                "        resources:") + "      volumes: [{name: c, persistentVolumeClaim: {claimName: c}}]\n"
    (finding,) = lint(text + policy(DENY_EGRESS))
    assert finding.severity == Severity.INFO and "unless a volume already holds it" in finding.message


def test_unnamed_model_is_info():
    text = deployment().replace('args: [Qwen/Qwen3-8B, --port, "8000"]', "args: []")
    (finding,) = lint(text + policy(DENY_EGRESS))
    assert finding.severity == Severity.INFO and "not named in the run" in finding.message


def test_scrape_allowed_by_a_second_policy():
    second = "  podSelector: {}\n  ingress: [{from: [{namespaceSelector: {}}]}]\n"
    assert found(deployment() + policy(DENY_INGRESS, "a") + policy(second, "b") + POD_MONITOR) == []


def test_no_monitor_no_scrape_finding():
    assert found(deployment() + policy(DENY_INGRESS)) == []


# --- distributed ports -------------------------------------------------------------------------------------
RAY = """apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: vllm-ray}
spec:
  headGroupSpec:
    rayStartParams: {dashboard-host: 0.0.0.0}
    template:
      metadata: {labels: {app: vllm-ray}}
      spec:
        containers:
        - name: head
          image: vllm/vllm-openai:v0.29.0
          command: [sh, -c, "ray start --head && vllm serve Qwen/Qwen3-8B --distributed-executor-backend ray"]
          ports: [{containerPort: 6379, name: gcs}, {containerPort: 8265, name: dashboard}, {containerPort: 8000}]
"""


def test_ray_ports_open_to_every_namespace():
    body = """  podSelector: {matchLabels: {app: vllm-ray}}
  ingress:
  - from: [{namespaceSelector: {}}]
    ports: [{port: 8000}, {port: 10001}]
  - from: [{ipBlock: {cidr: 0.0.0.0/0}}]
    ports: [{port: gcs}]
"""
    text = RAY + policy(body)
    assert [(line, col, value) for line, col, _, value in found(text)] == [(24, 27, "open:10001"), (26, 13, "open:6379")]


def test_torch_port_open_to_any_source():
    body = """  podSelector: {}
  ingress:
  - ports: [{port: 8000}, {port: 29500}]
"""
    assert found(deployment() + policy(body)) == [(24, 27, Severity.WARNING, "open:29500")]


def test_all_ports_from_every_namespace_on_a_ray_head():
    body = "  podSelector: {matchLabels: {app: vllm-ray}}\n  ingress:\n  - from: [{namespaceSelector: {}}]\n"
    (finding,) = lint(RAY + policy(body))
    assert (finding.span.line, finding.span.col, finding.value) == (23, 12, "open:6379,8265,10001")
    assert "opens ports 6379 (Ray's GCS server port" in finding.message


@pytest.mark.parametrize("body", [
    # the group's own pods only
    "  podSelector: {}\n  ingress:\n  - from: [{podSelector: {matchLabels: {app: vllm}}}]\n    ports: [{port: 29500}]\n",
    # all namespaces, but only pods with a label
    "  podSelector: {}\n  ingress:\n  - from: [{namespaceSelector: {}, podSelector: {matchLabels: {app: vllm}}}]\n"
    "    ports: [{port: 29500}]\n",
    # an allow-all rule is no isolation at all
    "  podSelector: {}\n  ingress: [{}]\n",
    # every namespace, but a pod that listens on no distributed port
    "  podSelector: {}\n  ingress:\n  - from: [{namespaceSelector: {}}]\n",
])
def test_distributed_ports_not_open(body):
    assert found(deployment() + policy(body)) == []


# --- a selector typo ----------------------------------------------------------------------------------------
def test_selector_typo():
    body = "  podSelector: {matchLabels: {app: vllm-inferense}}\n  policyTypes: [Ingress]\n"
    text = deployment(labels="{app: vllm-inference}") + policy(body)
    findings = lint(text)
    assert [(f.span.line, f.span.col, f.severity) for f in findings] == [(22, 36, Severity.WARNING)]
    assert "`app=vllm-inference`" in findings[0].message


def test_selector_key_typo():
    body = "  podSelector: {matchLabels: {app.kubernetes.io/nme: vllm}}\n  policyTypes: [Ingress]\n"
    assert [v for *_, v in found(deployment(labels="{app.kubernetes.io/name: vllm}") + policy(body))] == \
        ["typo:app.kubernetes.io/nme=vllm"]


@pytest.mark.parametrize("selector", [
    "{app: vllm-2}",  # another workload, not a typo
    "{app: vllm-b}",
    "{app: frontend}",  # nothing near
    "{app: vllm-inference, tier: gpu}",  # two labels off
])
def test_no_typo(selector):
    body = f"  podSelector: {{matchLabels: {selector}}}\n  policyTypes: [Ingress]\n"
    label = "{app: vllm-1}" if "vllm-2" in selector else "{app: vllm-a}" if "vllm-b" in selector else "{app: vllm-x}"
    assert found(deployment(labels=label) + policy(body)) == []


GATEWAY = """---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api-gateway}
spec:
  selector: {matchLabels: {app: api-gateway}}
  template:
    metadata: {labels: {app: api-gateway}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27"}]
"""


def test_peer_typo():
    body = """  podSelector: {matchLabels: {app: vllm}}
  ingress:
  - from: [{podSelector: {matchLabels: {app: api-gatway}}}]
"""
    findings = lint(deployment() + GATEWAY + policy(body))
    assert [(f.span.line, f.span.col, f.value) for f in findings] == [(34, 46, "typo:app=api-gatway")]
    assert "traffic from them to the vLLM pods is blocked" in findings[0].message


def test_peer_selecting_a_pod_of_the_run_is_no_typo():
    body = """  podSelector: {matchLabels: {app: vllm}}
  ingress:
  - from: [{podSelector: {matchLabels: {app: api-gateway}}}]
"""
    assert found(deployment() + GATEWAY + policy(body)) == []


def test_typo_in_another_namespace_is_silent():
    body = "  podSelector: {matchLabels: {app: vllm-inferense}}\n  policyTypes: [Ingress]\n"
    assert found(deployment(labels="{app: vllm-inference}", ns="a") + policy(body, ns="b")) == []


# --- the chapters --------------------------------------------------------------------------------------------
def test_original_chapter_fires():
    from pathlib import Path

    from vllmlint.engine import lint_paths

    root = Path(__file__).resolve().parent.parent / "fixtures" / "original"
    result, _ = lint_paths([str(root)], LintOptions(select=["VL805"]))
    got = sorted((Path(f.path).name, f.span.line, f.span.col, f.severity, f.value) for f in result.findings)
    # The audit: DNS blocked, Prometheus's scrape blocked, and the ranks of the StatefulSet (TP 16 over two pods
    # of 8 GPUs) allowed to reach each other only on 29500.
    assert got == [("network-policy.yaml", 10, 5, Severity.WARNING, "group:Ingress:vllm-inference"),
                   ("network-policy.yaml", 10, 5, Severity.WARNING, "scrape:8001"),
                   ("network-policy.yaml", 11, 5, Severity.WARNING, "dns:vllm-network-policy"),
                   ("network-policy.yaml", 11, 5, Severity.WARNING, "group:Egress:vllm-inference")]


# --- traffic between the ranks of one server ---------------------------------------------------------------
GROUP_INGRESS = """  podSelector: {matchLabels: {app: vllm}}
  policyTypes: [Ingress]
  ingress:
  - from: [{podSelector: {matchLabels: {app: vllm}}}]
"""


def test_ranks_limited_to_one_port():
    body = GROUP_INGRESS + "    ports: [{port: 29500}]\n"
    findings = lint(LWS + policy(body))
    assert [(f.span.line, f.span.col, f.severity, f.value) for f in findings] == \
        [(30, 17, Severity.WARNING, "group:Ingress:vllm")]
    assert "only on port(s) 29500" in findings[0].message


def test_ranks_with_no_rule_between_them():
    (finding,) = [f for f in lint(LWS + policy("  podSelector: {}\n  policyTypes: [Ingress]\n"))]
    assert finding.value == "group:Ingress:vllm" and "only on port(s) none" in finding.message


@pytest.mark.parametrize("body", [
    GROUP_INGRESS,  # every port between the ranks
    GROUP_INGRESS + "    ports: [{protocol: TCP, port: 1024, endPort: 65535}]\n",  # a range over the free ports
    "  podSelector: {}\n  policyTypes: [Ingress]\n  ingress: [{from: [{namespaceSelector: {}}]}]\n",
])
def test_ranks_may_reach_each_other(body):
    assert found(LWS + policy(body)) == []


def test_a_single_pod_server_is_not_a_group():
    body = "  podSelector: {}\n  policyTypes: [Ingress]\n  ingress: [{ports: [{port: 8000}]}]\n"
    assert found(deployment(extra_args=', --tensor-parallel-size, "8"') + policy(body)) == []
