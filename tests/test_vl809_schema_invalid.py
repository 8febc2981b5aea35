"""VL809 schema-invalid: catches / does not catch, with the position of every finding; the vendored schemas,
their fast path and the data files."""
import gzip
import json
from pathlib import Path

import jsonschema
import pytest

from conftest import FIXTURES
from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, lint_paths, lint_text
from vllmlint.finding import Severity
from vllmlint.k8s import schemas as sch
from vllmlint.k8s.objects import World
from vllmlint.source.yamlmodel import SourceFile, parse_documents

ROOT = Path(__file__).resolve().parent.parent


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL809"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL809"]


def found(text, filename="example.yaml"):
    return [(f.span.line, f.span.col, f.severity) for f in lint(text, filename)]


def deployment(pod_extra="", container_extra="", top="", spec_extra="", name="vllm"):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
{top}spec:
{spec_extra}  selector:
    matchLabels: {{app: vllm}}
  template:
    metadata:
      labels: {{app: vllm}}
    spec:
{pod_extra}      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: [Qwen/Qwen3-0.6B]
{container_extra}"""


E, W = Severity.ERROR, Severity.WARNING


# --- catches -----------------------------------------------------------------------------------------------
def test_top_level_labels_belong_under_metadata():
    (finding,) = lint(deployment(top="labels:\n  app: vllm\n"))
    assert (finding.span.line, finding.span.col, finding.severity) == (5, 1, E)
    assert finding.message.startswith("`labels` is not a field of the top level")
    assert "Move it under `metadata` (`metadata.labels`)" in finding.message


def test_allow_privilege_escalation_in_the_pod_security_context():
    text = deployment(pod_extra="      securityContext:\n        runAsUser: 1000\n        allowPrivilegeEscalation: false\n")
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col) == (14, 9)
    assert "`spec.template.spec.containers[].securityContext`: move it there" in finding.message


def test_typo_gets_the_close_name():
    text = deployment(container_extra="        securityContext: {allowPrivilegedEscalation: false}\n")
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col) == (16, 27)
    assert "Did you mean `allowPrivilegeEscalation`?" in finding.message


@pytest.mark.parametrize("extra, line, col, words", [
    ('        ports: [{containerPort: "8000"}]\n', 16, 33, "must be an integer, not a string"),
    ("        env: [{name: VLLM_PORT_X, value: 8000}]\n", 16, 42, 'quote it (`"8000"`)'),
    ("        env: [{name: VLLM_FLAG, value: true}]\n", 16, 40, "must be a string, not a boolean"),
    ("        resources: {limits: {memory: 32GB}}\n", 16, 38, "`32G` if `32GB` was meant"),
    ("        resources: {requests: {cpu: 2 cores}}\n", 16, 37, "not a Kubernetes quantity"),
])
def test_values_the_api_server_rejects(extra, line, col, words):
    (finding,) = lint(deployment(container_extra=extra))
    assert (finding.span.line, finding.span.col, finding.severity) == (line, col, E)
    assert words in finding.message


def test_string_replicas_and_integer_label_value():
    text = deployment(spec_extra='  replicas: "2"\n').replace("labels: {app: vllm}", "labels: {app: vllm, v: 2}")
    assert found(text) == [(6, 13, E), (11, 30, E)]


def test_required_field_points_at_the_mapping():
    text = """apiVersion: v1
kind: Service
metadata: {name: vllm}
spec:
  selector: {app: vllm}
  ports:
  - name: http
    targetPort: 8000
"""
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col) == (7, 5)
    assert finding.message == ("`spec.ports[0]` lacks the required field `port`. Kubernetes 1.37's v1 Service schema "
                               "requires it, so the API server rejects Service vllm: add it.")


def test_original_chapter_karpenter_and_fsx():
    result, _ = lint_paths([str(FIXTURES / "original")], LintOptions(select=["VL809"]))
    got = sorted((Path(f.path).name, f.span.line, f.span.col, f.severity.label) for f in result.findings)
    assert got == [
        ("fsx-lustre.yaml", 1, 13, "error"),  # fsx.aws.k8s.io/v1beta1 Lustre: nothing defines it
        ("fsx-lustre.yaml", 19, 1, "error"),  # StorageClass without subnetId/securityGroupIds
        ("fsx-lustre.yaml", 20, 3, "warning"),  # fileSystemId: not a parameter
        ("fsx-lustre.yaml", 21, 3, "warning"),  # mountName: not a parameter
        ("karpenter-nodepool.yaml", 26, 7, "error"),  # nodeClassRef without group/kind
        ("karpenter-nodepool.yaml", 35, 1, "error"),  # EC2NodeClass without the *SelectorTerms
        ("karpenter-nodepool.yaml", 36, 3, "error"),  # subnetSelector
        ("karpenter-nodepool.yaml", 38, 3, "error"),  # securityGroupSelector
        ("karpenter-nodepool.yaml", 40, 3, "error"),  # ttlSecondsAfterEmpty
    ]
    messages = " ".join(f.message for f in result.findings)
    assert "since v1beta1 it is `subnetSelectorTerms`" in messages
    assert "lacks 2 required fields: `group`, `kind`." in messages
    # issue 13: the problem first, the driver release checked and the consequence after it
    assert ("`fileSystemId` is not a StorageClass parameter of `fsx.csi.aws.com`, which ignores it. Checked against "
            "Amazon FSx for Lustre CSI driver helm-chart-aws-fsx-csi-driver-1.17.0.") in messages
    assert ("StorageClass fsx-lustre-sc has no `subnetId`, `securityGroupIds` parameters, which `fsx.csi.aws.com` "
            "needs. It needs them to create a file system, so every PersistentVolumeClaim") in messages
    assert "`consolidationPolicy: WhenEmpty`" in messages
    assert "static PersistentVolume" in messages


def test_audited_chapter_is_silent():
    result, _ = lint_paths([str(FIXTURES / "audited")], LintOptions(select=["VL809"]))
    assert result.findings == []


@pytest.mark.parametrize("api_version, kind, col, severity, words", [
    ("v1", "Deployment", 13, E, "Deployment is `apiVersion: apps/v1`"),
    ("apps/v1", "Service", 13, E, "Service is `apiVersion: v1`"),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler", 13, W, "was removed in Kubernetes 1.26"),
    ("networking.k8s.io/v1beta1", "Ingress", 13, W, "use `apiVersion: networking.k8s.io/v1`"),
    ("serving.kserve.io/v1alpha2", "InferenceService", 13, W, "`apiVersion: serving.kserve.io/v1beta1`"),
    ("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration", 13, W, "admissionregistration.k8s.io/v1`"),
])
def test_api_version_kind_that_does_not_exist(api_version, kind, col, severity, words):
    (finding,) = lint(f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\n")
    assert (finding.span.line, finding.span.col, finding.severity) == (1, col, severity)
    assert words in finding.message


@pytest.mark.parametrize("api_version, kind, hint", [
    ("apps/v1", "deployment", "did you mean `Deployment`?"),
    ("karpenter.sh/v1", "Provisioner", ""),
])
def test_unknown_kind_in_a_known_version(api_version, kind, hint):
    (finding,) = lint(f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\n")
    assert (finding.span.line, finding.span.col, finding.severity) == (2, 7, E)
    assert hint in finding.message


def test_crd_int_or_string_rejects_a_float():
    text = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: qwen3}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      resources: {requests: {cpu: 0.5}}
"""
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col, finding.severity) == (8, 35, E)
    assert 'must be an integer or a string, not a number' in finding.message and 'quote it (`"0.5"`)' in finding.message


def test_crd_pattern_and_custom_resource_metadata():
    text = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
  labels: {tier: 1}
spec:
  template:
    spec:
      requirements: []
      nodeClassRef: {group: karpenter.k8s.aws/v1, kind: EC2NodeClass, name: gpu}
"""
    assert found(text) == [(5, 18, E), (10, 29, E)]


def test_fsx_storage_class_parameters():
    text = """apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fsx}
provisioner: fsx.csi.aws.com
parameters:
  subnetId: subnet-0123
  securityGroupIds: sg-0123
  deploymentType: PERSISTENT_2
  perUnitStorageThroughputs: "250"
  csi.storage.k8s.io/fstype: lustre
"""
    (finding,) = lint(text)
    assert (finding.span.line, finding.span.col, finding.severity) == (9, 3, W)
    assert "Did you mean `perUnitStorageThroughput`?" in finding.message


def test_fsx_storage_class_parameter_must_be_a_string():
    text = """apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fsx}
provisioner: fsx.csi.aws.com
parameters: {subnetId: subnet-0123, securityGroupIds: sg-0123, perUnitStorageThroughput: 250}
"""
    assert found(text) == [(5, 90, E)]


# --- does not catch ------------------------------------------------------------------------------------------
def test_valid_deployment_is_silent():
    text = deployment(
        spec_extra="  replicas: 2\n  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 0}}\n",
        container_extra=('        ports: [{containerPort: 8000, name: http}]\n'
                         '        env: [{name: VLLM_PORT_X, value: "8000"}, {name: T, valueFrom: {secretKeyRef: {name: hf, key: t}}}]\n'
                         '        resources: {limits: {memory: 32Gi, cpu: 4, nvidia.com/gpu: 1}, requests: {cpu: 500m, memory: 1.5e3}}\n'
                         '        readinessProbe: {httpGet: {path: /health, port: 8000}}\n'
                         '        livenessProbe: {httpGet: {path: /health, port: http}}\n'
                         '        volumeMounts: [{name: shm, mountPath: /dev/shm}]\n'),
        pod_extra="      volumes: [{name: shm, emptyDir: {medium: Memory, sizeLimit: 16Gi}}]\n")
    assert lint(text) == []


@pytest.mark.parametrize("extra", [
    "        resources: {limits: {memory: ${MEMORY}}}\n",
    '        resources: {limits: {memory: "{{ .memory }}"}}\n',
    "        ports: [{containerPort: $PORT}]\n",
    "        ports: [{containerPort: <port>}]\n",
    "        env: [{name: HF_TOKEN, value: {{HF_TOKEN}}}]\n",
    "        ports: [...]\n",
])
def test_templated_values_are_not_judged(extra):
    assert lint(deployment(container_extra=extra)) == []


def test_placeholder_flow_mapping_is_not_judged():
    text = """apiVersion: v1
kind: PersistentVolume
metadata: {name: models}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  awsElasticBlockStore:
    volumeID: {volume-id}
"""
    assert lint(text) == []


def test_kustomize_patch_files_skip_required(tmp_path):
    (tmp_path / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [deploy.yaml]\n"
        "patches:\n- path: patches/replicas.yaml\npatchesStrategicMerge: [gpu.yaml]\n")
    (tmp_path / "patches").mkdir()
    patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  replicas: 2\n"
    (tmp_path / "patches" / "replicas.yaml").write_text(patch)
    (tmp_path / "gpu.yaml").write_text(patch)
    (tmp_path / "deploy.yaml").write_text(patch)  # a resource, not a patch: its missing fields count
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL809"]))
    assert [(Path(f.path).name, f.span.line) for f in result.findings] == [("deploy.yaml", 4)]


@pytest.mark.parametrize("filename", ["config/metadata/s3-env-patch.yaml", "manager_image_patch.yaml",
                                      "overlays/prod/patches/gpu.yaml", "patch.yaml"])
def test_files_named_as_patches_skip_required(filename):
    patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  replicas: 2\n"
    assert lint(patch, filename) == []
    assert len(lint(patch, "config/metadata/dispatcher.yaml")) == 1


def test_strategic_merge_directives_and_nameless_excerpts():
    patch = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n"
             "      containers:\n      - name: vllm\n        $patch: delete\n")
    assert lint(patch) == []
    assert lint("apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 1\n") == []


def test_markdown_excerpt_skips_required_but_not_unknown_fields():
    text = ("# Deploy\n\n```yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n"
            "  replicas: 1\n  replica: 2\n```\n")
    assert [(f.span.line, f.span.col) for f in lint(text, "README.md")] == [(9, 3)]


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n",  # a kubeconfig
    "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: labels}\n",  # a Kustomize plugin's config
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
    "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec: {anything: 1}\n",
    "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nstatus: {weird: 1}\nspec:\n  headGroupSpec:\n"
    "    rayStartParams: {}\n    template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.49.0}]}}\n",
    "apiVersion: keda.sh/v1\nkind: ScaledObject\nmetadata: {name: m}\nspec: {}\n",  # a CRD version not vendored
])
def test_silent_where_it_cannot_know(text):
    assert lint(text) == []


def test_kuberay_defaults_are_not_missing_fields():
    text = """apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: vllm}
spec:
  headGroupSpec:
    rayStartParams: {}
    template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.49.0}]}}
  workerGroupSpecs:
  - groupName: gpu
    replicas: 2
    rayStartParams: {}
    template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.49.0}]}}
"""
    assert lint(text) == []


# --- the schemas, their fast path, the data ------------------------------------------------------------------
def _objects():
    paths = [p for p in sorted(FIXTURES.rglob("*")) if p.suffix in (".yaml", ".yml", ".json")]
    texts = [(str(p), p.read_text(encoding="utf-8")) for p in paths]
    for rule_file in sorted((ROOT / "rules").glob("*.yaml")):
        rule = load_yaml_data(rule_file)
        for outcome in ("fails", "passes"):
            for example in (rule.get("examples") or {}).get(outcome, ()):
                texts.append((f"{rule_file.name}:{example.get('title')}", example["source"]))
    for name, text in texts:
        documents, _ = parse_documents(SourceFile(name, text))
        world = World()
        for document in documents:
            world.add_document(document)
        yield from ((name, obj) for obj in world.objects)


def test_fast_path_agrees_with_jsonschema():
    checked = 0
    for name, obj in _objects():
        fast = sch.fast_valid(obj.api_version, obj.kind, obj.node)
        if fast is None:
            continue
        errors = list(sch.validate(obj.api_version, obj.kind, sch.instance(obj.node)))
        assert fast == (not errors), (name, obj.kind, [e.error.message for e in errors][:3])
        checked += 1
    assert checked > 100


def test_index_records_versions_and_sources():
    index = sch.index()
    assert index["kubernetes"] == "1.37" and index["core_source"]["package"] == "kubernetes-validate"
    for key, bundle in index["schemas"].items():
        assert (schemas_dir() / "k8s" / bundle).is_file(), key
        if sch.is_crd(key.rsplit("/", 1)[0]):
            source = index["crd_sources"][key]
            assert source["repository"].startswith("https://github.com/") and len(source["commit"]) == 40
    assert {"karpenter.sh/v1/NodePool", "karpenter.k8s.aws/v1/EC2NodeClass", "leaderworkerset.x-k8s.io/v1/LeaderWorkerSet",
            "serving.kserve.io/v1beta1/InferenceService", "ray.io/v1/RayService", "monitoring.coreos.com/v1/ServiceMonitor",
            "keda.sh/v1alpha1/ScaledObject", "apps/v1/Deployment", "v1/Service"} <= set(index["schemas"])


def test_vendored_schemas_stay_small_and_use_only_compiled_keywords():
    """Every `$ref` resolves inside its bundle and every keyword is one the fast path compiles (jsonschema's
    `check_schema` over the bundles takes minutes, so the structure is checked here instead)."""
    folder = schemas_dir() / "k8s"
    assert sum(p.stat().st_size for p in folder.iterdir()) < 400_000
    keywords = {"type", "properties", "additionalProperties", "$ref", "items", "required", "enum", "pattern", "anyOf",
                "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "minProperties",
                "maxProperties", "format"}
    for path in folder.glob("*.json.gz"):
        bundle = json.loads(gzip.decompress(path.read_bytes()))
        defs = bundle["$defs"]
        stack = list(bundle["kinds"].values()) + list(defs.values())
        while stack:
            schema = stack.pop()
            if isinstance(schema, bool):
                continue
            assert set(schema) <= keywords, (path.name, set(schema) - keywords)
            if "$ref" in schema:
                assert schema["$ref"].startswith("#/$defs/") and schema["$ref"][8:] in defs, schema["$ref"]
            stack.extend((schema.get("properties") or {}).values())
            stack.extend(schema.get("anyOf") or ())
            stack.extend(schema[key] for key in ("items", "additionalProperties") if isinstance(schema.get(key), dict))
        jsonschema.Draft202012Validator.check_schema({"$defs": {}, **bundle["kinds"][next(iter(bundle["kinds"]))]})


@pytest.mark.parametrize("data_name, schema_name", [
    ("api-groups.yaml", "api-groups.schema.json"),
    ("storage-parameters.yaml", "storage-parameters.schema.json"),
])
def test_data_files_are_schema_valid(data_name, schema_name):
    data = load_yaml_data(knowledge_dir() / data_name)
    schema = json.loads((schemas_dir() / schema_name).read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)


def test_generator_converts_crd_schemas_as_the_api_server_reads_them():
    from vllmlint_dev.k8s_schemas import crd_schema

    converted = crd_schema({"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "integer", "default": 1}, "b": {"x-kubernetes-int-or-string": True},
        "c": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"d": {"type": "string"}}},
        "e": {"type": "string", "description": "dropped", "x-kubernetes-validations": [{"rule": "self != ''"}]}}})
    assert converted["required"] == ["b"]  # `a` has a default: the API server fills it in before validating
    assert converted["additionalProperties"] is False
    assert converted["properties"]["b"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert "additionalProperties" not in converted["properties"]["c"]
    assert converted["properties"]["e"] == {"type": "string"}
