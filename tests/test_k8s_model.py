"""The typed Kubernetes layer (vllmlint/k8s): every accessor returns values with the nodes (positions) they
were read from, reads malformed-but-parseable input as absent (never raises), and never expands aliases."""
from __future__ import annotations

import itertools
import time
from decimal import Decimal

import pytest

from vllmlint.k8s.autoscaling import hpa_metrics, keda_triggers, metric_targets, scale_target
from vllmlint.k8s.objects import World
from vllmlint.k8s.placement import node_pool
from vllmlint.k8s.quantity import int_value, parse_quantity, quantity_int
from vllmlint.k8s.selectors import Requirement, label_selector
from vllmlint.k8s.services import resolve_port, service_ports
from vllmlint.source.yamlmodel import Node, SourceFile, parse_documents


def world_of(text: str) -> World:
    source = SourceFile("k.yaml", text)
    documents, error = parse_documents(source)
    assert error is None, error
    world = World(sources=[source])
    for document in documents:
        world.add_document(document)
    return world


def at(node: Node | None) -> tuple[int, int]:
    assert node is not None
    span = node.span
    return span.line, span.col


def loc(text: str, line: int, needle: str) -> tuple[int, int]:
    """(line, column) of `needle` on a line of `text`: where a node holding it must start."""
    return line, text.splitlines()[line - 1].index(needle) + 1


def text_at(node: Node | None) -> str:
    """The source text of a node (what a finding placed there underlines)."""
    assert node is not None
    return node.source.text[node.start:node.end]


def container_of(text: str, index: int = 0):
    world = world_of(text)
    return world, world.containers[index]


# --- quantities -------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,value", [
    ("32Gi", 32 * 2**30), ("500m", Decimal("0.5")), ("1e3", 1000), ("1.5", Decimal("1.5")), ("100M", 10**8),
    ("0.5Ki", 512), ("8G", 8 * 10**9), ("1Ei", 2**60), (".5", Decimal("0.5")), ("5.", 5), ("+1k", 1000),
    ("-2", -2), ("1E3", 1000), ("1e-3", Decimal("0.001")), (" 4Gi ", 4 * 2**30), (3, 3), (2.5, Decimal("2.5")),
])
def test_quantities_follow_the_kubernetes_grammar(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", [
    "", "lots", "1.2.3", "Gi", "1Gb", "1gi", "1e3Gi", "1 Gi", "0x10", "1e400", "1e31", ".nan", ".inf", "NaN", "inf",
    float("inf"), float("nan"), -float("inf"), True, None, 10**30, "99999999999999999999", "9Ei", [], {},
])
def test_garbage_and_absurd_quantities_are_none(text):
    assert parse_quantity(text) is None


def test_quantities_round_up_as_quantity_value_does():
    assert quantity_int("0.5") == 1 and quantity_int("100m") == 1 and quantity_int("2") == 2
    assert quantity_int("-0.5") == -1 and quantity_int("garbage") is None


def test_quantities_read_yaml_nodes():
    world = world_of("a: {gpu: 2, mem: 8Gi, inf: .inf, q: '3', t: true, l: [1]}\n")
    root = world.sources[0]
    documents, _ = parse_documents(root)
    values = dict(documents[0].root.get("a").pairs())  # type: ignore[union-attr]
    assert parse_quantity(values["gpu"]) == 2 and parse_quantity(values["mem"]) == 8 * 2**30
    assert parse_quantity(values["q"]) == 3
    assert parse_quantity(values["inf"]) is None and parse_quantity(values["t"]) is None
    assert parse_quantity(values["l"]) is None
    assert int_value(values["gpu"], minimum=0) == 2 and int_value(values["q"]) is None
    assert int_value(values["gpu"], maximum=1) is None and int_value(values["t"]) is None


# --- selectors --------------------------------------------------------------------------------------
def _selector(text: str):
    documents, error = parse_documents(SourceFile("s.yaml", text))
    assert error is None
    return label_selector(documents[0].root)


def test_label_selector_match_labels_and_expressions_with_positions():
    selector = _selector("matchLabels: {app: vllm, tier: 'true'}\nmatchExpressions:\n"
                         "- {key: zone, operator: In, values: [a, b]}\n- {key: gpu, operator: Exists}\n"
                         "- {key: old, operator: DoesNotExist}\n- {key: env, operator: NotIn, values: [dev]}\n")
    assert selector.valid
    app, tier = selector.match_labels
    assert (app.key, app.operator, app.values) == ("app", "In", ("vllm",))
    assert text_at(app.node) == "vllm" and text_at(app.key_node) == "app" and at(app.key_node) == (1, 15)
    assert tier.values == ("true",)
    zone, gpu, old, env = selector.match_expressions
    assert zone.values == ("a", "b") and at(zone.node) == (3, 3) and at(zone.key_node) == (3, 9)
    assert text_at(zone.key_node) == "zone" and text_at(zone.node).startswith("{key: zone")
    labels = {"app": "vllm", "tier": "true", "zone": "b", "gpu": "1"}
    assert selector.matches(labels)
    assert not selector.matches({**labels, "zone": "c"})
    assert not selector.matches({**labels, "old": "x"})
    assert not selector.matches({**labels, "env": "dev"})
    assert selector.matches({**labels, "env": "prod"})
    assert not selector.matches({k: v for k, v in labels.items() if k != "gpu"})
    assert selector.first_pair() == ("app", "vllm") and selector.first_pair({"app"}) == ("tier", "true")


def test_plain_map_selector_and_yaml_scalars_as_label_text():
    selector = _selector("app: vllm\nenabled: true\nversion: 2\n")
    assert selector.matches({"app": "vllm", "enabled": "true", "version": "2"})
    assert not selector.matches({"app": "vllm", "enabled": "True", "version": "2"})


def test_implicit_labels_answer_for_absent_keys():
    selector = _selector("matchLabels: {app: vllm, pod-template-hash: abc}\n")
    assert not selector.matches({"app": "vllm"})
    assert selector.matches({"app": "vllm"}, lambda key, value: key == "pod-template-hash")


@pytest.mark.parametrize("text", [
    "{}", "[]", "x", "~", "matchLabels: [a]", "matchLabels: x", "matchExpressions: x", "matchExpressions: {a: b}",
    "matchExpressions: [x]", "matchLabels: {a: [b]}", "app: {nested: x}", "matchLabels: {}\nmatchExpressions: []",
    "matchLabels: ~", "matchExpressions: ''",
])
def test_malformed_or_empty_selectors_select_nothing(text):
    selector = _selector(text + "\n")
    assert not selector.matches({"app": "vllm", "a": "b", "x": "y"})


def test_node_semantics_fold_case_and_compare_numbers():
    product = Requirement("nvidia.com/gpu.product", "In", ("NVIDIA-A10G",))
    assert product.holds_for(["nvidia-a10g"], fold_case=True) and not product.holds_for(["nvidia-a10g"])
    assert not product.holds_for(None, fold_case=True)
    assert Requirement("k", "NotIn", ("a",)).holds_for(None)
    gt = Requirement("karpenter.k8s.aws/instance-gpu-count", "Gt", ("3",))
    assert gt.holds_for(["4"], number=4) and not gt.holds_for(["3"], number=3) and not gt.holds_for(None)
    assert Requirement("k", "Lt", ("8",)).holds_for(["4"], number=4)
    for bound in ("nan", "inf", "x", "1e400"):
        assert not Requirement("k", "Gt", (bound,)).holds_for(["4"], number=4)
    assert not Requirement("k", "Gt", ()).holds_for(["4"], number=4)
    assert not Requirement("k", "Bogus", ("a",)).holds_for(["a"])  # node readers: unknown operators fail
    # ... a label selector ignores operators it does not have (Gt/Lt decide nothing there)
    assert Requirement("k", "Gt", ("9",)).matches({"k": "1"})


def test_pod_and_pool_requirements_compatibility():
    pod_in = Requirement("t", "In", ("a", "b"))
    assert pod_in.compatible(Requirement("t", "In", ("b", "c")))
    assert not pod_in.compatible(Requirement("t", "In", ("c",)))
    assert not pod_in.compatible(Requirement("t", "NotIn", ("a", "b", "c")))
    assert pod_in.compatible(Requirement("t", "NotIn", ("a",)))
    assert not pod_in.compatible(Requirement("t", "DoesNotExist"))
    assert not Requirement("t", "DoesNotExist").compatible(Requirement("t", "Exists"))
    assert Requirement("t", "Exists").compatible(Requirement("t", "Gt", ("2",)))


def test_a_selector_of_aliases_does_not_expand():
    # Each level doubles what a `to_python` copy would build: 2^40 values if expanded.
    lines = ["l0: &l0 [a, b]"] + [f"l{i}: &l{i} [*l{i - 1}, *l{i - 1}]" for i in range(1, 41)]
    text = "\n".join(lines) + "\nsel:\n  matchLabels: &m {app: vllm}\n  matchExpressions:\n" \
        "  - {key: zone, operator: In, values: *l40}\n  - {key: app, operator: In, values: [vllm]}\n"
    documents, error = parse_documents(SourceFile("a.yaml", text))
    assert error is None
    start = time.monotonic()
    selector = label_selector(documents[0].root.get("sel"))  # type: ignore[union-attr]
    assert not selector.matches({"app": "vllm", "zone": "a"})  # the values are lists, not label values
    assert selector.matches({"app": "vllm", "zone": "a"}) is False
    assert time.monotonic() - start < 1


def test_alias_bombs_in_a_pod_spec_and_a_service_selector_do_not_hang():
    # One `kind: List`, so the Service can alias the pod's node selector: 3^29 nodes if anything expanded them.
    lines = ["x0: &x0 {a: b}"] + [f"x{i}: &x{i} [*x{i - 1}, *x{i - 1}, *x{i - 1}]" for i in range(1, 30)]
    bomb = "\n".join("      " + line for line in lines)
    text = f"""\
apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: d
    bomb:
{bomb}
  spec:
    template:
      metadata:
        labels: {{app: vllm, tier: *x29}}
      spec:
        nodeSelector: &sel {{app: vllm, x: *x29}}
        affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: *x29}}}}}}
        tolerations: *x29
        volumes: *x29
        securityContext: {{runAsUser: *x29}}
        containers: [{{name: c, image: i, env: *x29, envFrom: *x29, volumeMounts: *x29, ports: *x29,
                       livenessProbe: {{httpGet: *x0, periodSeconds: *x29}}, resources: {{limits: *x0}}}}]
- apiVersion: v1
  kind: Service
  metadata: {{name: s}}
  spec:
    selector: *sel
    ports: *x29
- apiVersion: v1
  kind: Service
  metadata: {{name: t}}
  spec:
    selector: {{matchLabels: {{app: vllm}}, matchExpressions: *x29}}
"""
    start = time.monotonic()
    world = world_of(text)
    s, t = world.of_kind("Service")
    template = world.templates[0]
    assert [r.key for r in template.placement.node_selector] == ["app"]  # `x` is a list: no label value
    assert world.selected_templates(s.spec.get("selector"), "") == []  # type: ignore[union-attr]
    assert world.selected_templates(t.spec.get("selector"), "") == []  # type: ignore[union-attr]
    _read_everything(world)
    assert time.monotonic() - start < 5


# --- volumes and mounts -----------------------------------------------------------------------------
VOLUMES = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  volumes:
  - name: shm
    emptyDir: {medium: Memory, sizeLimit: 16Gi}
  - name: scratch
    emptyDir:
  - name: cache
    emptyDir: {sizeLimit: 100G}
  - {name: host, hostPath: {path: /dev/shm, type: Directory}}
  - {name: models, persistentVolumeClaim: {claimName: weights, readOnly: true}}
  - {name: s3, csi: {driver: s3.csi.aws.com}}
  - name: bundle
    projected:
      sources:
      - secret: {name: token}
      - configMap: {name: settings}
  - {name: creds, secret: {secretName: hf}}
  - {name: conf, configMap: {name: vllm-config}}
  - {nameless: true, emptyDir: {}}
  containers:
  - name: c
    image: i
    volumeMounts:
    - {name: cache, mountPath: /root/.cache/}
    - {name: models, mountPath: /root/.cache/huggingface/hub, subPath: hub/v1}
    - {name: shm, mountPath: /dev/shm}
    - {name: ghost, mountPath: /ghost, readOnly: true}
"""


def test_volumes_by_kind_with_their_sources():
    world = world_of(VOLUMES)
    template = world.templates[0]
    volumes = {v.name: v for v in template.volumes}
    assert list(volumes) == ["shm", "scratch", "cache", "host", "models", "s3", "bundle", "creds", "conf"]
    shm = volumes["shm"]
    assert (shm.kind, shm.medium, shm.size_limit) == ("emptyDir", "Memory", 16 * 2**30)
    assert at(shm.node) == (6, 5) and at(shm.name_node) == loc(VOLUMES, 6, "shm")
    assert at(shm.size_limit_node) == loc(VOLUMES, 7, "16Gi")
    assert (volumes["scratch"].kind, volumes["scratch"].source, volumes["scratch"].size_limit) == ("emptyDir", None, None)
    assert volumes["cache"].size_limit == 100 * 10**9 and volumes["cache"].medium == ""
    assert volumes["host"].host_path == "/dev/shm" and volumes["host"].kind == "hostPath"
    assert volumes["models"].claim_name == "weights" and volumes["s3"].csi_driver == "s3.csi.aws.com"
    assert [kind for kind, _ in volumes["bundle"].projected_sources] == ["secret", "configMap"]
    assert volumes["creds"].referenced_name == "hf" and volumes["conf"].referenced_name == "vllm-config"
    assert template.volume("models") is volumes["models"] and template.volume("nope") is None


def test_mounts_and_the_volume_behind_a_path():
    world = world_of(VOLUMES)
    container = world.containers[0]
    mounts = container.volume_mounts
    assert [(m.name, m.mount_path, m.sub_path, m.read_only) for m in mounts] == [
        ("cache", "/root/.cache", "", False), ("models", "/root/.cache/huggingface/hub", "hub/v1", False),
        ("shm", "/dev/shm", "", False), ("ghost", "/ghost", "", True)]
    assert at(mounts[1].path_node) == loc(VOLUMES, 28, "/root/.cache/huggingface/hub")
    # the most specific mountPath wins
    hub = container.backing("/root/.cache/huggingface/hub/models--x")
    assert hub.mount is not None and hub.mount.name == "models" and hub.volume is not None
    assert hub.volume.claim_name == "weights" and at(hub.mount.node) == at(mounts[1].node)
    assert hub.volume_path == "hub/v1/models--x"
    other = container.backing("/root/.cache/pip")
    assert other.volume is not None and other.volume.name == "cache" and other.volume_path == "pip"
    assert at(container.backing("/root/.cache").mount.node) == at(mounts[0].node)  # type: ignore[union-attr]
    assert container.backing("/root/.cachex").mount is None  # a prefix of the name is not a parent
    nothing = container.backing("/tmp/x")
    assert nothing.mount is None and nothing.volume is None and nothing.volume_path == "/tmp/x"
    ghost = container.backing("/ghost/a")
    assert ghost.mount is not None and ghost.mount.name == "ghost" and ghost.volume is None


# --- env --------------------------------------------------------------------------------------------
ENV = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {HF_HOME: /data/hf, LOG: debug, TP: "4"}
---
apiVersion: v1
kind: Secret
metadata: {name: tokens}
stringData: {HF_TOKEN: hf_x}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: i
    envFrom:
    - configMapRef: {name: settings}
    - prefix: S_
      secretRef: {name: tokens}
    - configMapRef: {name: elsewhere}
    env:
    - {name: LOG, value: info}
    - {name: PORT, value: 8000}
    - name: MODEL_DIR
      valueFrom: {configMapKeyRef: {name: settings, key: HF_HOME}}
    - name: MISSING
      valueFrom: {configMapKeyRef: {name: elsewhere, key: X}}
    - name: TOKEN
      valueFrom: {secretKeyRef: {name: tokens, key: HF_TOKEN}}
    - name: POD_IP
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
    - name: MEM
      valueFrom: {resourceFieldRef: {containerName: c, resource: limits.memory}}
    - {name: EMPTY}
    - name: ODD
      valueFrom: {somethingElse: {}}
"""


def test_env_resolved_with_its_origins():
    world, container = container_of(ENV)
    env = {v.name: v for v in container.resolved_env(world)}
    assert list(env) == ["HF_HOME", "TP", "S_HF_TOKEN", "LOG", "PORT", "MODEL_DIR", "MISSING", "TOKEN", "POD_IP",
                         "MEM", "EMPTY", "ODD"]
    assert (env["HF_HOME"].value, env["HF_HOME"].origin, env["HF_HOME"].ref_name) == ("/data/hf", "configmap",
                                                                                      "settings")
    assert at(env["HF_HOME"].source) == loc(ENV, 4, "/data/hf")  # the ConfigMap's value node
    assert at(env["HF_HOME"].node) == loc(ENV, 19, "configMapRef")  # the envFrom entry it came through
    assert (env["S_HF_TOKEN"].value, env["S_HF_TOKEN"].origin) == (None, "secret")
    assert (env["LOG"].value, env["LOG"].origin) == ("info", "literal")  # env wins over envFrom
    assert at(env["LOG"].source) == loc(ENV, 24, "info")
    assert env["PORT"].value == "8000"
    assert (env["MODEL_DIR"].value, env["MODEL_DIR"].origin, env["MODEL_DIR"].ref_key) == ("/data/hf", "configmap",
                                                                                          "HF_HOME")
    assert at(env["MODEL_DIR"].source) == loc(ENV, 4, "/data/hf")
    assert (env["MISSING"].value, env["MISSING"].origin) == (None, "unknown")
    assert (env["TOKEN"].origin, env["TOKEN"].ref_name, env["TOKEN"].ref_key) == ("secret", "tokens", "HF_TOKEN")
    assert (env["POD_IP"].origin, env["POD_IP"].ref_key) == ("field", "status.podIP")
    assert (env["MEM"].origin, env["MEM"].ref_key) == ("resource", "limits.memory")
    assert (env["EMPTY"].value, env["EMPTY"].origin) == ("", "literal")
    assert env["ODD"].origin == "unknown"


def test_env_without_a_world_knows_no_configmap():
    _, container = container_of(ENV)
    env = {v.name: v for v in container.resolved_env()}
    assert env["MODEL_DIR"].origin == "unknown" and "HF_HOME" not in env


def test_literal_env_dict_is_unchanged():
    _, container = container_of(ENV)
    assert container.env == {"LOG": "info", "PORT": "8000", "MODEL_DIR": None, "MISSING": None, "TOKEN": None,
                             "POD_IP": None, "MEM": None, "EMPTY": None, "ODD": None}


@pytest.mark.parametrize("environment,expected", [
    ("{HF_HOME: /hf, TP: 4}", {"HF_HOME": "/hf", "TP": "4"}),
    ("[HF_HOME=/hf, TP=4, BARE]", {"HF_HOME": "/hf", "TP": "4", "BARE": None}),
])
def test_compose_environment_forms(environment, expected):
    world, container = container_of(f"services:\n  vllm:\n    image: i\n    environment: {environment}\n")
    assert container.env == expected
    resolved = {v.name: v.value for v in container.resolved_env(world)}
    assert resolved == expected


# --- probes -----------------------------------------------------------------------------------------
PROBES = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: i
    ports: [{name: http, containerPort: 8000}, {name: grpc, containerPort: 9000, protocol: TCP}]
    livenessProbe:
      httpGet:
        path: /health
        port: http
        scheme: HTTPS
        httpHeaders: [{name: X-Probe, value: "1"}]
      periodSeconds: 30
      failureThreshold: 5
    readinessProbe:
      tcpSocket: {port: 8000}
      initialDelaySeconds: -1
    startupProbe:
      grpc: {port: 9000}
      timeoutSeconds: "3"
  - name: d
    image: i
    livenessProbe:
      exec: {command: [cat, /tmp/ok]}
    readinessProbe:
      httpGet: {port: nope}
"""


def test_probes_with_handlers_ports_and_defaults():
    world = world_of(PROBES)
    first, second = world.containers
    live, ready, start = first.probes
    assert (live.kind, live.handler, live.port, live.path, live.scheme) == ("liveness", "httpGet", 8000, "/health",
                                                                           "HTTPS")
    assert at(live.node) == (10, 7) and at(live.port_node) == loc(PROBES, 12, "http")
    assert [(n, v) for n, v, _ in live.headers] == [("X-Probe", "1")]
    assert live.timing("periodSeconds") == 30 and at(live.timings["periodSeconds"].node) == loc(PROBES, 15, "30")
    assert live.timing("failureThreshold") == 5
    assert live.timing("initialDelaySeconds") == 0 and live.timings["initialDelaySeconds"].node is None
    assert live.timing("timeoutSeconds") == 1 and live.timing("successThreshold") == 1
    assert (ready.kind, ready.handler, ready.port) == ("readiness", "tcpSocket", 8000)
    assert ready.timing("initialDelaySeconds") == 0  # -1 is invalid: the default stands
    assert (start.kind, start.handler, start.port, start.timing("timeoutSeconds")) == ("startup", "grpc", 9000, 1)
    assert start.timing("periodSeconds") == 10
    exec_probe, bad_port = second.probes
    assert exec_probe.handler == "exec" and exec_probe.command == ["cat", "/tmp/ok"] and exec_probe.port is None
    assert bad_port.port is None and at(bad_port.port_node) == loc(PROBES, 28, "nope")
    assert first.probe("startup").handler == "grpc" and second.probe("startup") is None  # type: ignore[union-attr]
    assert [(p.name, p.number, p.protocol) for p in first.container_ports] == [("http", 8000, "TCP"),
                                                                              ("grpc", 9000, "TCP")]


# --- security contexts ------------------------------------------------------------------------------
SECURITY = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  securityContext: {runAsUser: 1000, runAsGroup: 3000, runAsNonRoot: true, fsGroup: 2000}
  containers:
  - name: c
    image: i
    securityContext:
      runAsUser: 0
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
      privileged: false
      capabilities: {add: [SYS_ADMIN], drop: [ALL]}
  - name: d
    image: i
"""


def test_security_contexts_merge_pod_into_container():
    world = world_of(SECURITY)
    first, second = world.containers
    merged = first.security_context
    assert merged.run_as_user == 0 and merged.level("runAsUser") == "container" and at(merged.node("runAsUser")) == loc(SECURITY, 10, "0")
    assert merged.run_as_group == 3000 and merged.level("runAsGroup") == "pod" and at(merged.node("runAsGroup")) == loc(SECURITY, 5, "3000")
    assert merged.run_as_non_root is True and merged.fs_group == 2000 and merged.level("fsGroup") == "pod"
    assert merged.read_only_root_filesystem is True and merged.allow_privilege_escalation is False
    assert merged.privileged is False
    assert [c for c, _ in merged.capabilities("add")] == ["SYS_ADMIN"] and [c for c, _ in merged.capabilities("drop")] == ["ALL"]
    inherited = second.security_context
    assert inherited.run_as_user == 1000 and inherited.level("runAsUser") == "pod"
    assert inherited.privileged is None and inherited.read_only_root_filesystem is None and inherited.level("privileged") == ""
    assert world.templates[0].security_context.run_as_user == 1000


# --- resources, replicas, strategies ------------------------------------------------------------------
WORKLOADS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 3
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 50%}}
  template:
    spec:
      containers:
      - name: c
        image: i
        resources:
          requests: {cpu: 500m, memory: 32Gi}
          limits: {nvidia.com/gpu: 2, memory: lots, ephemeral-storage: 100G}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  updateStrategy: {rollingUpdate: {partition: 2}}
  template: {spec: {containers: [{name: c, image: i}]}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: r}
spec:
  replicas: .inf
  strategy: {type: Recreate}
  template: {spec: {containers: [{name: c, image: i}]}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec:
  template: {spec: {containers: [{name: c, image: i}]}}
"""


def test_resources_parsed_once_with_nodes():
    world = world_of(WORKLOADS)
    resources = world.containers[0].resources
    assert resources.requests["cpu"].value == Decimal("0.5")
    assert at(resources.requests["cpu"].node) == loc(WORKLOADS, 13, "500m")
    assert resources.requests["memory"].value == 32 * 2**30
    assert resources.limits["nvidia.com/gpu"].value == 2 and resources.limits["memory"].value is None
    assert resources.request("nvidia.com/gpu") is resources.limits["nvidia.com/gpu"]  # a limit is the request
    assert resources.request("cpu") is resources.requests["cpu"] and resources.request("tpu") is None


def test_replicas_and_update_strategies_with_defaults():
    world = world_of(WORKLOADS)
    deployment, statefulset, recreate = world.of_kind("Deployment")[0], world.of_kind("StatefulSet")[0], \
        world.of_kind("Deployment")[1]
    replicas = deployment.replicas
    assert replicas is not None and replicas.value == 3 and at(replicas.node) == loc(WORKLOADS, 5, "3")
    strategy = deployment.strategy
    assert strategy is not None and strategy.type.value == "RollingUpdate" and at(strategy.type.node) == loc(WORKLOADS, 6, "RollingUpdate")
    assert strategy.max_surge is not None and strategy.max_surge.value == 0
    assert strategy.max_unavailable is not None and strategy.max_unavailable.value == "50%"
    assert statefulset.replicas is not None and statefulset.replicas.value == 1 and statefulset.replicas.node is None
    sts = statefulset.strategy
    assert sts is not None and sts.type.value == "RollingUpdate" and sts.type.node is None
    assert sts.partition is not None and sts.partition.value == 2
    assert recreate.replicas is None  # .inf is no replica count
    assert recreate.strategy is not None and recreate.strategy.type.value == "Recreate"
    assert recreate.strategy.max_surge is None
    ds = world.of_kind("DaemonSet")[0]
    assert ds.replicas is None and ds.strategy is not None and ds.strategy.max_unavailable.value == 1  # type: ignore[union-attr]


# --- placement and NodePools ------------------------------------------------------------------------
PLACED = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {node.kubernetes.io/instance-type: g5.12xlarge, team: ml, bad: [x]}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: ["3"]}
          - {key: zone, values: [a]}
        - matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-A10G]}]
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  - {operator: Exists}
  containers: [{name: c, image: i}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    metadata: {labels: {team: ml}}
    spec:
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g5.12xlarge, g5.48xlarge]}
      taints:
      - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
"""


def test_placement_reads_selector_affinity_and_tolerations_with_nodes():
    world = world_of(PLACED)
    placement = world.templates[0].placement
    assert [(r.key, r.values) for r in placement.node_selector] == [
        ("node.kubernetes.io/instance-type", ("g5.12xlarge",)), ("team", ("ml",))]
    assert at(placement.node_selector[0].node) == loc(PLACED, 5, "g5.12xlarge")
    first, second = placement.terms
    assert [(r.key, r.operator, r.values) for r in first.requirements] == [
        ("karpenter.k8s.aws/instance-gpu-count", "Gt", ("3",)), ("zone", "In", ("a",))]
    assert at(first.requirements[0].node) == loc(PLACED, 11, "{key: karpenter") and at(second.node) == loc(PLACED, 13, "matchExpressions")
    assert [len(s) for s in placement.requirement_sets()] == [4, 3]
    assert [r.key for r in placement.deciding("node.kubernetes.io/instance-type")] == ["node.kubernetes.io/instance-type"]
    tolerate, everything = placement.tolerations
    assert (tolerate.key, tolerate.operator, tolerate.effect) == ("nvidia.com/gpu", "Exists", "NoSchedule")
    assert at(tolerate.node) == loc(PLACED, 15, "{key") and everything.key is None
    pool = node_pool(world.of_kind("NodePool")[0])
    assert [(r.key, r.values) for r in pool.labels] == [("team", ("ml",))]
    [requirement] = pool.requirements
    assert requirement.values == ("g5.12xlarge", "g5.48xlarge") and at(requirement.node) == loc(PLACED, 27, "{key")
    [taint] = pool.taints
    assert (taint.key, taint.value, taint.effect, taint.repels) == ("nvidia.com/gpu", "true", "NoSchedule", True)
    assert tolerate.tolerates(taint) and everything.tolerates(taint)


def test_no_constraints_is_one_empty_term():
    world = world_of("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n")
    placement = world.templates[0].placement
    assert placement.node_selector == [] and [t.requirements for t in placement.terms] == [[]]


# --- Services ---------------------------------------------------------------------------------------
SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: s}
spec:
  type: NodePort
  selector: {app: vllm}
  ports:
  - {name: http, port: 80, targetPort: api, nodePort: 30080}
  - {name: metrics, port: 9090, targetPort: 8001, protocol: UDP}
  - {port: 8000}
---
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: vllm}}
spec:
  containers:
  - name: c
    image: i
    ports: [{name: api, containerPort: 8000}]
"""


def test_service_ports_typed_with_nodes_and_resolved_targets():
    world = world_of(SERVICE)
    service = world.of_kind("Service")[0]
    http, metrics, plain = service_ports(service)
    assert (http.name, http.port, http.target, http.node_port, http.protocol) == ("http", 80, "api", 30080, "TCP")
    assert at(http.target_node) == loc(SERVICE, 8, "api") and at(http.node_port_node) == loc(SERVICE, 8, "30080")
    assert at(http.name_node) == loc(SERVICE, 8, "http")
    assert (metrics.protocol, metrics.target) == ("UDP", 8001)
    assert plain.target == 8000 and at(plain.target_node) == loc(SERVICE, 10, "8000")
    template = world.templates[0]
    number, node = resolve_port(template, http.target)
    assert number == 8000 and at(node) == loc(SERVICE, 19, "8000")  # the containerPort the name resolves to
    assert resolve_port(template, "nope") == (None, None) and resolve_port(template, 8001) == (8001, None)


# --- autoscalers ------------------------------------------------------------------------------------
HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: h}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  - type: Pods
    pods: {metric: {name: vllm:num_requests_waiting}, target: {type: AverageValue, averageValue: "5"}}
  - type: ContainerResource
    containerResource: {name: memory, container: vllm, target: {type: AverageValue, averageValue: 30Gi}}
  - type: External
    external: {metric: {name: queue}, target: {type: Value, value: "100"}}
  - type: Bogus
  - just text
---
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: v1}
spec:
  scaleTargetRef: {kind: Deployment, name: vllm}
  targetCPUUtilizationPercentage: 80
---
apiVersion: autoscaling/v2beta1
kind: HorizontalPodAutoscaler
metadata: {name: beta}
spec:
  metrics:
  - {type: Resource, resource: {name: cpu, targetAverageUtilization: 60}}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: k}
spec:
  scaleTargetRef: {name: vllm}
  triggers:
  - type: prometheus
    metadata: {serverAddress: http://p, query: 'sum(vllm:num_requests_waiting)', threshold: "10"}
  - type: cpu
    metricType: Utilization
    metadata: {value: "60"}
"""


def test_hpa_and_keda_metric_targets():
    world = world_of(HPA)
    v2, v1, beta = world.of_kind("HorizontalPodAutoscaler")
    target = scale_target(v2)
    assert target is not None and (target.kind, target.name, target.api_version) == ("Deployment", "vllm", "apps/v1")
    cpu, pods, memory, external = hpa_metrics(v2)
    assert (cpu.type, cpu.metric, cpu.target_type, cpu.target) == ("Resource", "cpu", "Utilization", "70")
    assert at(cpu.name_node) == loc(HPA, 8, "cpu") and at(cpu.target_node) == loc(HPA, 8, "70")
    assert (pods.metric, pods.target_type, pods.target) == ("vllm:num_requests_waiting", "AverageValue", "5")
    assert (memory.container, memory.target) == ("vllm", "30Gi")
    assert (external.type, external.metric, external.target_type, external.target) == ("External", "queue", "Value",
                                                                                       "100")
    [old] = hpa_metrics(v1)
    assert (old.metric, old.target_type, old.target) == ("cpu", "Utilization", "80") and at(old.node) == loc(HPA, 23, "targetCPU")
    [legacy] = hpa_metrics(beta)
    assert (legacy.metric, legacy.target_type, legacy.target) == ("cpu", "Utilization", "60")
    assert scale_target(beta) is None
    keda = world.of_kind("ScaledObject")[0]
    ref = scale_target(keda)
    assert ref is not None and (ref.kind, ref.name) == ("Deployment", "vllm")  # KEDA's default kind
    prometheus, cpu_trigger = keda_triggers(keda)
    assert (prometheus.type, prometheus.metric, prometheus.target_type, prometheus.target) == (
        "prometheus", "sum(vllm:num_requests_waiting)", "AverageValue", "10")
    assert at(prometheus.target_node) == loc(HPA, 39, '"10"')
    assert (cpu_trigger.metric, cpu_trigger.target_type, cpu_trigger.target) == ("cpu", "Utilization", "60")
    assert metric_targets(keda) == keda_triggers(keda) or len(metric_targets(keda)) == 2
    assert metric_targets(world.of_kind("HorizontalPodAutoscaler")[0])[0].metric == "cpu"


# --- malformed but parseable: wrong types everywhere ---------------------------------------------
WRONG = ["x", "7", "true", "~", "[]", "{}", "[x, 1]", "{a: b}", ".inf", ".nan", "-1"]
FIELDS = ["volumes", "nodeSelector", "affinity", "tolerations", "securityContext", "containers"]
CONTAINER_FIELDS = ["env", "envFrom", "ports", "volumeMounts", "livenessProbe", "resources", "securityContext",
                    "readinessProbe", "startupProbe"]


def _read_everything(world: World) -> None:
    for obj in world.objects:
        obj.replicas, obj.strategy, scale_target(obj), metric_targets(obj), service_ports(obj)  # noqa: B018
        if obj.kind == "NodePool":
            node_pool(obj)
    for template in world.templates:
        template.volumes, template.placement, template.security_context  # noqa: B018
        for container in template.containers:
            container.env, container.resolved_env(world), container.volume_mounts, container.probes  # noqa: B018
            container.security_context, container.resources, container.ports  # noqa: B018
            container.backing("/root/.cache/huggingface")
            for port in ("http", 8000, "8000", None):
                resolve_port(template, port)
            world.selected_templates(template.spec.get("nodeSelector"), "")


@pytest.mark.parametrize("field_name,wrong", list(itertools.product(FIELDS, WRONG)))
def test_wrong_types_in_the_pod_spec_never_raise(field_name, wrong):
    text = f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: d}}
spec:
  replicas: {wrong}
  strategy: {wrong}
  template:
    metadata: {{labels: {wrong}}}
    spec:
      {field_name}: {wrong}
      containers: [{{name: c, image: i}}]
"""
    if field_name == "containers":
        text = text.replace("      containers: [{name: c, image: i}]\n", "")
    _read_everything(world_of(text))


@pytest.mark.parametrize("field_name,wrong", list(itertools.product(CONTAINER_FIELDS, WRONG)))
def test_wrong_types_in_a_container_never_raise(field_name, wrong):
    text = f"""\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  volumes: [{{name: v, emptyDir: {wrong}}}, {{name: w, hostPath: {wrong}}}, {wrong}]
  containers:
  - name: c
    image: i
    {field_name}: {wrong}
  - name: d
    image: i
    {field_name}: [{wrong}, {{name: {wrong}, value: {wrong}, valueFrom: {wrong}, mountPath: {wrong}}}]
  - name: e
    image: i
    {field_name}: {{httpGet: {wrong}, tcpSocket: {{port: {wrong}}}, requests: {wrong}, limits: {{cpu: {wrong}}},
      capabilities: {wrong}, periodSeconds: {wrong}, runAsUser: {wrong}}}
---
apiVersion: v1
kind: Service
metadata: {{name: s}}
spec: {{ports: [{wrong}, {{port: {wrong}, targetPort: {wrong}, nodePort: {wrong}}}], selector: {wrong}}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: h}}
spec: {{scaleTargetRef: {wrong}, metrics: [{wrong}, {{type: Resource, resource: {wrong}}},
  {{type: Pods, pods: {{metric: {wrong}, target: {wrong}}}}}], targetCPUUtilizationPercentage: {wrong}}}
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {{name: k}}
spec: {{scaleTargetRef: {wrong}, triggers: [{wrong}, {{type: {wrong}, metadata: {wrong}}}]}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: n}}
spec: {{template: {{metadata: {{labels: {wrong}}}, spec: {{requirements: [{wrong}, {{key: {wrong}, values: {wrong}}}],
  taints: [{wrong}, {{key: {wrong}, effect: {wrong}}}]}}}}}}
"""
    _read_everything(world_of(text))
