"""Maintainer command: build `schemas/k8s/`, the object schemas VL809 (schema-invalid) validates against.

    python -m vllmlint_dev.k8s_schemas --kubernetes 1.37 [--wheel kubernetes_validate-X-py3-none-any.whl] \
        [--repos DIR]

Two kinds of input, neither needed at run time:

- the core kinds vllmlint reads (`CORE_KINDS`), for ONE Kubernetes minor version, from the strict JSON
  schemas that the `kubernetes-validate` wheel ships (generated from Kubernetes' own OpenAPI document;
  `additionalProperties: false` everywhere, as `kubectl apply`'s default strict field validation). Without
  `--wheel` the wheel is fetched with `pip download --no-deps kubernetes-validate`. The wheel holds every
  minor from 1.25 on: the group/version/kind lists of all of them are kept (`served`), so that a version
  Kubernetes removed (`autoscaling/v2beta2`) is told apart from one that never existed;
- the custom resources vllmlint reads (`CRDS`), from the CRD manifests their projects publish in their
  repositories: `openAPIV3Schema` of every served version, turned into JSON Schema as the API server reads
  a structural schema (unknown fields are rejected by strict field validation unless
  `x-kubernetes-preserve-unknown-fields`; `x-kubernetes-int-or-string` is an integer or a string). `--repos
  DIR` reads each repository from a git checkout or mirror `DIR/<owner>+<name>[/repo]` (else it is cloned,
  `--depth 1`); the commit read is recorded.

Descriptions, defaults, examples, formats and CEL rules (`x-kubernetes-validations`, which need a CEL
interpreter) are dropped; identical sub-schemas (the PodSpec that KServe, KubeRay, LWS and KEDA each embed
several times) are stored once under `$defs`; each bundle is written as gzip-compressed JSON (`mtime=0`,
so regenerating gives the same bytes). `schemas/k8s/index.json` (plain JSON) says which bundle holds each
apiVersion/kind and where every part came from. Run it again to move to another Kubernetes minor or newer
CRDs, review the diff of `index.json`, and commit.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

# Core kinds read by vllmlint's rules (and the ones users put next to them), as (apiVersion, kind).
CORE_KINDS = [
    ("v1", "Pod"), ("v1", "Service"), ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "PersistentVolumeClaim"),
    ("v1", "PersistentVolume"), ("v1", "ServiceAccount"), ("v1", "Namespace"), ("v1", "ReplicationController"),
    ("v1", "ResourceQuota"), ("v1", "LimitRange"), ("v1", "Endpoints"),
    ("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"), ("apps/v1", "DaemonSet"), ("apps/v1", "ReplicaSet"),
    ("batch/v1", "Job"), ("batch/v1", "CronJob"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("networking.k8s.io/v1", "Ingress"), ("networking.k8s.io/v1", "IngressClass"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("autoscaling/v1", "HorizontalPodAutoscaler"), ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ("policy/v1", "PodDisruptionBudget"),
    ("scheduling.k8s.io/v1", "PriorityClass"), ("node.k8s.io/v1", "RuntimeClass"),
    ("rbac.authorization.k8s.io/v1", "Role"), ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"), ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
]

# (repository, path of the CRD manifest in it, bundle name). The AWS provider's copy of the NodePool CRD is
# the one its Helm chart installs on EKS (it adds AWS's requirement keys to kubernetes-sigs/karpenter's).
CRDS = [
    ("aws/karpenter-provider-aws", "pkg/apis/crds/karpenter.sh_nodepools.yaml", "karpenter"),
    ("aws/karpenter-provider-aws", "pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml", "karpenter"),
    ("kubernetes-sigs/lws", "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml", "lws"),
    ("kserve/kserve", "config/crd/full/serving.kserve.io_inferenceservices.yaml", "kserve"),
    ("kserve/kserve", "config/crd/full/serving.kserve.io_servingruntimes.yaml", "kserve"),
    ("kserve/kserve", "config/crd/full/serving.kserve.io_clusterservingruntimes.yaml", "kserve"),
    ("kserve/kserve", "config/crd/full/llmisvc/serving.kserve.io_llminferenceservices.yaml", "kserve-llmisvc"),
    ("ray-project/kuberay", "ray-operator/config/crd/bases/ray.io_rayclusters.yaml", "kuberay"),
    ("ray-project/kuberay", "ray-operator/config/crd/bases/ray.io_rayservices.yaml", "kuberay"),
    ("ray-project/kuberay", "ray-operator/config/crd/bases/ray.io_rayjobs.yaml", "kuberay"),
    ("prometheus-operator/prometheus-operator",
     "example/prometheus-operator-crd-full/monitoring.coreos.com_servicemonitors.yaml", "prometheus-operator"),
    ("prometheus-operator/prometheus-operator",
     "example/prometheus-operator-crd-full/monitoring.coreos.com_podmonitors.yaml", "prometheus-operator"),
    ("prometheus-operator/prometheus-operator",
     "example/prometheus-operator-crd-full/monitoring.coreos.com_prometheusrules.yaml", "prometheus-operator"),
    ("kedacore/keda", "config/crd/bases/keda.sh_scaledobjects.yaml", "keda"),
    ("kedacore/keda", "config/crd/bases/keda.sh_scaledjobs.yaml", "keda"),
    ("kedacore/keda", "config/crd/bases/keda.sh_triggerauthentications.yaml", "keda"),
    ("kedacore/keda", "config/crd/bases/keda.sh_clustertriggerauthentications.yaml", "keda"),
]

# Folders holding every CRD of each project: only their group/version/kind names are kept (`served`), so that
# a kind the project does not define (`karpenter.sh/v1 Provisioner`) is told apart from one not vendored.
CRD_FOLDERS = [
    ("aws/karpenter-provider-aws", "pkg/apis/crds/"),
    ("kubernetes-sigs/lws", "config/crd/bases/"),
    ("kserve/kserve", "config/crd/full/"),
    ("ray-project/kuberay", "ray-operator/config/crd/bases/"),
    ("prometheus-operator/prometheus-operator", "example/prometheus-operator-crd-full/"),
    ("kedacore/keda", "config/crd/bases/"),
]

_DROP = {"description", "default", "example", "examples", "externalDocs", "format", "title", "nullable",
         "x-kubernetes-validations", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
         "x-kubernetes-map-type", "x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key",
         "x-kubernetes-group-version-kind", "x-kubernetes-unions", "x-kubernetes-embedded-resource",
         "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string", "$schema", "$id"}
_QUANTITY_DEF = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING_DEF = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_MIN_SHARED = 400  # bytes of JSON: smaller sub-schemas stay inline


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


# --- core kinds ------------------------------------------------------------------------------------------
def _core_schema(node: Any) -> Any:
    """A kubernetes-validate schema without what validation does not need; refs made local."""
    if isinstance(node, list):
        return [_core_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP:
            continue
        if key == "$ref":
            out[key] = "#/$defs/" + value.rsplit("/", 1)[-1]
        elif key == "properties":
            out[key] = {name: _core_schema(sub) for name, sub in value.items()}
        else:
            out[key] = _core_schema(value)
    return out


def _group_version(gvk: dict) -> str:
    return f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]


def core_bundle(wheel: Path, minor: str) -> tuple[dict, dict, dict]:
    """(bundle, served kinds of `minor`, history: apiVersion -> kind -> [first, last] minor served)."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        folders = sorted({m.group(1) for n in names
                          if (m := re.search(r"kubernetes-json-schema/v(\d+\.\d+)\.0-local-strict/_definitions\.json$",
                                             n))}, key=lambda v: tuple(map(int, v.split("."))))
        if minor not in folders:
            raise SystemExit(f"Kubernetes {minor} is not in {wheel.name} (it has {', '.join(folders)})")
        history: dict[str, dict[str, list[str]]] = {}
        chosen: dict = {}
        for version in folders:
            path = next(n for n in names if n.endswith(f"v{version}.0-local-strict/_definitions.json"))
            defs = json.loads(archive.read(path))["$defs"]
            for schema in defs.values():
                for gvk in schema.get("x-kubernetes-group-version-kind", ()):
                    if gvk["kind"].endswith("List") or gvk["kind"] in ("DeleteOptions", "WatchEvent") or "properties" not in schema or \
                            "apiVersion" not in schema["properties"]:
                        continue
                    span = history.setdefault(_group_version(gvk), {}).setdefault(gvk["kind"], [version, version])
                    span[1] = version
            if version == minor:
                chosen = defs
    kinds: dict[str, str] = {}
    for name, schema in chosen.items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            if (_group_version(gvk), gvk["kind"]) in CORE_KINDS:
                kinds[f"{_group_version(gvk)}/{gvk['kind']}"] = name
    missing = {f"{a}/{k}" for a, k in CORE_KINDS} - set(kinds)
    if missing:
        raise SystemExit(f"not in Kubernetes {minor}: {sorted(missing)}")
    defs = {name: _core_schema(schema) for name, schema in chosen.items()}
    # Quantity and IntOrString are `oneOf` two types with null in both (null matches both: oneOf fails), and the
    # API decodes a quantity string with its parser: the grammar is checked by the `k8s-quantity` format.
    defs[_QUANTITY_DEF] = {"anyOf": [{"type": "string", "format": "k8s-quantity"}, {"type": "number"}]}
    defs[_INT_OR_STRING_DEF] = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    roots = {key: {"$ref": f"#/$defs/{name}"} for key, name in kinds.items()}
    served = {}
    for api_version, by_kind in history.items():
        for kind, span in by_kind.items():
            if _served_in(span, minor):
                served.setdefault(api_version, []).append(kind)
    return _bundle(roots, defs), {k: sorted(v) for k, v in sorted(served.items())}, history


def _served_in(span: list[str], minor: str) -> bool:
    key = tuple(map(int, minor.split(".")))
    return tuple(map(int, span[0].split("."))) <= key <= tuple(map(int, span[1].split(".")))


# --- CRDs ---------------------------------------------------------------------------------------------
def crd_schema(node: Any, root: bool = False) -> Any:
    """An `openAPIV3Schema` node as JSON Schema, read the way the API server reads a structural schema."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP:
            continue
        if key == "properties":
            out[key] = {name: crd_schema(sub) for name, sub in value.items()}
        elif key in ("items", "not"):
            out[key] = crd_schema(value)
        elif key == "additionalProperties":
            out[key] = value if isinstance(value, bool) else crd_schema(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [crd_schema(sub) for sub in value]
        elif key == "required":
            # The API server applies a CRD's defaults before it validates: a required field with a default
            # is never missing (KubeRay's workerGroupSpecs[].minReplicas / maxReplicas).
            props = node.get("properties") or {}
            kept = [name for name in value if "default" not in (props.get(name) or {})]
            if kept:
                out[key] = kept
        elif key == "pattern":
            try:
                re.compile(value)
            except re.error:
                continue  # a Go (RE2) construct Python's re does not know: not checked
            out[key] = value
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)  # controller-gen also writes `anyOf: [{type: integer}, {type: string}]`: the same
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("x-kubernetes-embedded-resource") and "properties" in out:
        for name in ("apiVersion", "kind"):
            out["properties"].setdefault(name, {"type": "string"})
        out["properties"].setdefault("metadata", {"type": "object"})
    if root:
        out.setdefault("properties", {})
        for name in ("apiVersion", "kind"):
            out["properties"].setdefault(name, {"type": "string"})
        out["properties"]["metadata"] = {"type": "object"}  # ObjectMeta: checked against the core schema
    if out.get("type") == "object" and "properties" in out and "additionalProperties" not in out \
            and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False  # pruned, and rejected by strict field validation
    return out


def _git(repo_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo_dir), *args], check=True, capture_output=True,
                          text=True).stdout


def _repo_dir(repo: str, roots: list[Path], clones: Path) -> Path:
    owner, name = repo.split("/")
    for root in roots:
        for candidate in (root / f"{owner}+{name}" / "repo", root / f"{owner}+{name}", root / name):
            if candidate.exists():
                return candidate
    target = clones / f"{owner}+{name}"
    if not target.exists():
        subprocess.run(["git", "clone", "--quiet", "--depth", "1", f"https://github.com/{repo}", str(target)],
                       check=True)
    return target


def crd_bundles(roots: list[Path]) -> tuple[dict, dict, dict]:
    """(bundles by name, served kinds: apiVersion -> [kind], sources: apiVersion/kind -> where from)."""
    from vllmlint.source.yamlmodel import SourceFile, parse_documents, to_python

    def load_all(text: str) -> list:
        # vllmlint's own reader: libyaml's composer, scalars as Kubernetes reads them (an enum value `=` is
        # the string `=`; ruamel's safe constructor tags it `value` and fails)
        documents, error = parse_documents(SourceFile("crd.yaml", text))
        if error is not None:
            raise ValueError(error.message)
        return [to_python(d.root) for d in documents]
    per_bundle: dict[str, dict] = {}
    served: dict[str, list[str]] = {}
    sources: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="vllmlint-crds-") as clones:
        for repo, path, bundle in CRDS:
            repo_dir = _repo_dir(repo, roots, Path(clones))
            commit = _git(repo_dir, "rev-parse", "HEAD").strip()
            date = _git(repo_dir, "log", "-1", "--format=%cs", "HEAD").strip()
            tag = subprocess.run(["git", "-C", str(repo_dir), "describe", "--tags", "--abbrev=0", "HEAD"],
                                 capture_output=True, text=True).stdout.strip()
            for crd in load_all(_git(repo_dir, "show", f"HEAD:{path}")):
                if not crd or crd.get("kind") != "CustomResourceDefinition":
                    continue
                group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
                for version in crd["spec"]["versions"]:
                    if not version.get("served", True):
                        continue
                    schema = (version.get("schema") or {}).get("openAPIV3Schema")
                    api_version = f"{group}/{version['name']}"
                    served.setdefault(api_version, []).append(kind)
                    if schema is None:
                        continue
                    per_bundle.setdefault(bundle, {})[f"{api_version}/{kind}"] = crd_schema(schema, root=True)
                    sources[f"{api_version}/{kind}"] = {
                        "repository": f"https://github.com/{repo}", "path": path, "commit": commit, "date": date,
                        "after_tag": tag, "deprecated": bool(version.get("deprecated"))}
        for repo, folder in CRD_FOLDERS:
            repo_dir = _repo_dir(repo, roots, Path(clones))
            for path in _git(repo_dir, "ls-tree", "-r", "--name-only", "HEAD", folder).split():
                if not path.endswith(".yaml"):
                    continue
                for crd in load_all(_git(repo_dir, "show", f"HEAD:{path}")):
                    if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition" or "spec" not in crd:
                        continue
                    for version in crd["spec"].get("versions") or ():
                        if version.get("served", True):
                            served.setdefault(f"{crd['spec']['group']}/{version['name']}", []).append(
                                crd["spec"]["names"]["kind"])
    bundles = {name: _bundle(roots_, {}) for name, roots_ in per_bundle.items()}
    return bundles, {k: sorted(set(v)) for k, v in sorted(served.items())}, sources


# --- dedupe and write -------------------------------------------------------------------------------------
def _bundle(roots: dict[str, Any], defs: dict[str, Any]) -> dict:
    """`{"kinds": {apiVersion/kind: schema}, "$defs": {...}}` with every sub-schema of at least
    _MIN_SHARED bytes that occurs twice or more moved to `$defs` (named by its hash) and referenced."""
    counts: dict[str, int] = {}
    maps = ("properties", "patternProperties")  # name -> schema maps: their values are schemas, they are not

    def count(node: Any) -> None:
        if isinstance(node, dict):
            text = _compact(node)
            if len(text) >= _MIN_SHARED:
                counts[text] = counts.get(text, 0) + 1
            for key, value in node.items():
                for sub in (value.values() if key in maps and isinstance(value, dict) else [value]):
                    count(sub)
        elif isinstance(node, list):
            for value in node:
                count(value)

    for schema in list(roots.values()) + list(defs.values()):
        count(schema)
    shared: dict[str, str] = {}
    new_defs: dict[str, Any] = {}

    def inner(node: dict) -> dict:
        return {k: ({p: share(s) for p, s in v.items()} if k in maps and isinstance(v, dict) else share(v))
                for k, v in node.items()}

    def share(node: Any, top: bool = False) -> Any:
        if isinstance(node, dict):
            text = "" if top else _compact(node)
            if counts.get(text, 0) > 1:
                name = shared.get(text)
                if name is None:
                    name = shared[text] = "s" + hashlib.sha256(text.encode()).hexdigest()[:12]
                    new_defs[name] = inner(node)
                return {"$ref": f"#/$defs/{name}"}
            return inner(node)
        if isinstance(node, list):
            return [share(v) for v in node]
        return node

    kinds = {key: share(schema, top=True) for key, schema in roots.items()}
    for name, schema in defs.items():
        new_defs[name] = share(schema, top=True)
    return {"kinds": kinds, "$defs": new_defs}


def write_bundle(folder: Path, name: str, bundle: dict) -> str:
    data = _compact(bundle).encode()
    path = folder / f"{name}.json.gz"
    path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    return path.name


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m vllmlint_dev.k8s_schemas", description=__doc__.split("\n")[0])
    parser.add_argument("--kubernetes", required=True, help="the Kubernetes minor version, such as 1.37")
    parser.add_argument("--wheel", type=Path, help="a kubernetes-validate wheel (default: pip download it)")
    parser.add_argument("--repos", type=Path, action="append", default=[],
                        help="a folder of git checkouts or mirrors named <owner>+<name> (default: clone)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "schemas" / "k8s")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vllmlint-kv-") as tmp:
        wheel = args.wheel
        if wheel is None:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "kubernetes-validate",
                            "-d", tmp], check=True)
            wheel = next(Path(tmp).glob("kubernetes_validate-*.whl"))
        wheel_version = wheel.name.split("-")[1]
        wheel_sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
        core, core_served, history = core_bundle(wheel, args.kubernetes)
    crds, crd_served, crd_sources = crd_bundles(args.repos)
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("*.json.gz"):
        old.unlink()
    files = {f"kubernetes-{args.kubernetes}": write_bundle(args.out, f"kubernetes-{args.kubernetes}", core)}
    for name, bundle in sorted(crds.items()):
        files[name] = write_bundle(args.out, name, bundle)
    schemas = {key: files[f"kubernetes-{args.kubernetes}"] for key in core["kinds"]}
    for name, bundle in crds.items():
        schemas.update({key: files[name] for key in bundle["kinds"]})
    removed = {}
    for api_version, by_kind in sorted(history.items()):
        for kind, span in sorted(by_kind.items()):
            if not _served_in(span, args.kubernetes):
                removed.setdefault(api_version, {})[kind] = span
    index = {
        "kubernetes": args.kubernetes,
        "generated_by": "python -m vllmlint_dev.k8s_schemas",
        "core_source": {"package": "kubernetes-validate", "version": wheel_version, "sha256": wheel_sha,
                        "url": "https://pypi.org/project/kubernetes-validate/",
                        "path": f"kubernetes_validate/kubernetes-json-schema/v{args.kubernetes}.0-local-strict/",
                        "origin": "Kubernetes' OpenAPI document (api/openapi-spec), converted by kubernetes-validate"},
        "history_minors": sorted({v for by_kind in history.values() for span in by_kind.values() for v in span},
                                 key=lambda v: tuple(map(int, v.split(".")))),
        "served": {**core_served, **crd_served},  # every kind each apiVersion serves (schema vendored or not)
        "crd_groups": sorted({key.split("/")[0] for key in crd_served}),
        "removed": removed,  # core apiVersion/kinds served by earlier minors only: [first, last] minor
        "schemas": dict(sorted(schemas.items())),
        "crd_sources": dict(sorted(crd_sources.items())),
    }
    (args.out / "index.json").write_text(json.dumps(index, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    total = sum(p.stat().st_size for p in args.out.iterdir())
    print(f"wrote {len(files)} bundles + index.json to {args.out} ({total:,} bytes)")


if __name__ == "__main__":
    main()
