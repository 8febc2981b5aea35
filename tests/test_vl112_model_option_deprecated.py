"""VL112 model-option-deprecated: `vllm serve --model X` where vLLM only warns; split out of VL107 (issue 13),
whose suppressions and ignores still cover it for one release, with a VL008 note."""
import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity

NOTE = "VL107 suppressions cover VL112 model-option-deprecated for this release only: write VL112"


def run(text, version="0.29.0", filename="serve.sh", **options):
    result = lint_text(text, filename, LintOptions(vllm_version=version, **options))
    assert not result.internal_error, [n.message for n in result.notices]
    return result


def found(text, version="0.29.0", filename="serve.sh"):
    result = run(text, version, filename, select=["VL107", "VL112"])
    return [(f.code, f.span.line, f.span.col, f.severity) for f in result.findings if f.code in ("VL107", "VL112")]


def notes(result):
    return [(n.code, n.path, n.line, n.message) for n in result.notices if n.code == "VL008"]


# --- catches: the same position and level VL107 had -----------------------------------------------------
@pytest.mark.parametrize("version", ["0.11.1", "0.11.2", "0.20.0", "0.29.0", "0.33.0"])
def test_model_option_where_vllm_warns(version):
    text = "vllm serve --model Qwen/Qwen3-8B --port 8000\n"
    assert found(text, version) == [("VL112", 1, 12, Severity.WARNING)]
    [finding] = [f for f in run(text, version, select=["VL112"]).findings]
    assert "will be removed in a future version" in finding.message
    assert finding.fix is None


def test_inline_model_option_on_0_8_to_0_11():
    # 0.8.x - 0.11.0 only rejected a bare `--model` token: `--model=X` went through.
    assert found("vllm serve --model=Qwen/Qwen3-8B\n", "0.10.2") == [("VL112", 1, 12, Severity.WARNING)]


def test_in_a_deployment():
    text = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: [--model, Qwen/Qwen3-8B]
"""
    assert found(text, None, "deploy.yaml") == [("VL112", 12, 16, Severity.WARNING)]


# --- does not catch: VL107's errors stay VL107's ------------------------------------------------------
@pytest.mark.parametrize("version", ["0.6.4.post1", "0.8.5.post1", "0.10.2"])
def test_rejecting_releases_are_vl107(version):
    assert found("vllm serve --model Qwen/Qwen3-8B\n", version) == [("VL107", 1, 12, Severity.ERROR)]


@pytest.mark.parametrize("text", [
    "vllm serve Qwen/Qwen3-8B --port 8000\n",
    "vllm serve Qwen/Qwen3-8B --model Qwen/Qwen3-8B\n",  # VL107: the model twice
    "python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B\n",
])
def test_not_vl112(text):
    assert [c for c, *_ in found(text)] in ([], ["VL107"])


def test_ignoring_vl112_does_not_hide_vl107_errors():
    text = "vllm serve Qwen/Qwen3-8B --max-model-len 4096 --max_model_len 8192\nvllm serve --model Qwen/Qwen3-8B\n"
    result = run(text, ignore=["VL112"])
    assert [(f.code, f.span.line) for f in result.findings if f.code in ("VL107", "VL112")] == [("VL107", 1)]


# --- compatibility: VL107 suppressions and ignores cover VL112 for this release, with a note -----------------
@pytest.mark.parametrize("name", ["VL107", "conflicting-args"])
def test_a_vl107_comment_hides_vl112_with_a_note(name):
    text = f"vllm serve --model Qwen/Qwen3-8B  # vllmlint: disable={name} -- later\n"
    result = run(text)
    assert [f.code for f in result.findings] == []
    assert [f.code for f in result.suppressed] == ["VL112"]
    assert notes(result) == [("VL008", "serve.sh", 1, NOTE)]


def test_a_vl107_annotation_hides_vl112_with_a_note():
    text = """apiVersion: v1
kind: Pod
metadata:
  name: vllm
  annotations: {vllmlint.io/ignore: "VL107", vllmlint.io/ignore-reason: "later"}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    args: [--model, Qwen/Qwen3-8B]
"""
    result = run(text, None, "pod.yaml")
    assert [f.code for f in result.suppressed] == ["VL112"]
    assert not [f for f in result.findings if f.code in ("VL003", "VL112")]
    assert [n[0] for n in notes(result)] == ["VL008"]


def test_a_vl112_comment_needs_no_note():
    result = run("vllm serve --model Qwen/Qwen3-8B  # vllmlint: disable=VL112 -- later\n")
    assert [f.code for f in result.suppressed] == ["VL112"] and notes(result) == []


def test_a_comment_naming_both_leaves_the_vl107_entry_unused():
    result = run("vllm serve --model Qwen/Qwen3-8B  # vllmlint: disable=VL112,VL107 -- later\n")
    assert [f.code for f in result.suppressed] == ["VL112"] and notes(result) == []
    assert [f.code for f in result.findings] == ["VL003"]


def test_a_vl107_comment_still_hides_vl107():
    result = run("vllm serve --model Qwen/Qwen3-8B  # vllmlint: disable=VL107 -- later\n", "0.10.2")
    assert [f.code for f in result.suppressed] == ["VL107"] and notes(result) == []


@pytest.mark.parametrize("selector", ["VL107", "conflicting-args", "VL10"])
def test_ignore_vl107_hides_vl112_with_a_note(selector):
    result = run("vllm serve --model Qwen/Qwen3-8B\n", ignore=[selector])
    assert [f.code for f in result.findings] == []
    assert "VL112" not in {r.code for r in result.rules}
    # VL715 positional-model-ignored moved out of VL107 too, VL714 out of VL103/VL106 (data/renamed-codes.yaml):
    # one note for each code the selector still covers through a move.
    said = notes(result)
    assert said[0] == ("VL008", "", 0, NOTE)
    assert [m.rsplit(" ", 1)[-1] for *_, m in said] == ["VL112", "VL714", "VL715"][:1] + (
        ["VL714", "VL715"] if selector == "VL10" else ["VL715"])


def test_ignore_vl112_itself_needs_no_note():
    result = run("vllm serve --model Qwen/Qwen3-8B\n", ignore=["VL112"])
    assert result.findings == [] and notes(result) == []


def test_per_file_ignores_of_vl107_hide_vl112_with_a_note():
    result = run("vllm serve --model Qwen/Qwen3-8B\n", per_file_ignores={"*.sh": ["VL107"]})
    assert result.findings == [] and [f.code for f in result.ignored] == ["VL112"]
    assert notes(result) == [("VL008", "", 0, NOTE)]
    other = run("vllm serve --model Qwen/Qwen3-8B\n", per_file_ignores={"*.yaml": ["VL107"]})
    assert [f.code for f in other.findings] == ["VL112"] and notes(other) == []


def test_ignoring_vl008_silences_the_note():
    result = run("vllm serve --model Qwen/Qwen3-8B  # vllmlint: disable=VL107 -- later\n", ignore=["VL008"])
    assert [f.code for f in result.suppressed] == ["VL112"] and notes(result) == []


# --- the data ------------------------------------------------------------------------------------------
def test_renamed_codes_data_is_schema_valid_and_names_real_rules():
    import json

    import jsonschema

    from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
    from vllmlint.registry import all_rules

    data = load_yaml_data(knowledge_dir() / "renamed-codes.yaml")
    jsonschema.validate(data, json.loads((schemas_dir() / "renamed-codes.schema.json").read_text()))
    rules = all_rules()
    for entry in data["moved"]:
        assert rules[entry["code"]].name == entry["name"]
        assert all(old in rules and old != entry["code"] for old in entry["from"])
    assert {"code": "VL112", "from": ["VL107"]}.items() <= {k: data["moved"][0][k] for k in ("code", "from")}.items()


def test_a_baseline_entry_recorded_as_vl107_still_matches_vl112():
    import dataclasses
    from collections import Counter

    from vllmlint.baseline import Baseline

    text = "vllm serve --model Qwen/Qwen3-8B\n"
    [finding] = run(text, select=["VL112"]).findings
    old = dataclasses.replace(finding, code="VL107").fingerprint()  # what 0.1.0 wrote in the baseline
    result = run(text, baseline=Baseline(fingerprints=Counter({old: 1})))
    assert [f.code for f in result.known] == ["VL112"] and result.baseline_stale == 0
    assert not [f for f in result.findings if f.code == "VL112"]
    assert notes(result) == [("VL008", "", 0, NOTE)]
