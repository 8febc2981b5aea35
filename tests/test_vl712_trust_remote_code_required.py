"""VL712 trust-remote-code-required, and the one function it shares with VL801 (needs_trust_remote_code)."""
import json
from pathlib import Path

import jsonschema
import pytest

from vllmlint.capacity.remote_code import needs_trust_remote_code, release_range
from vllmlint.capacity.specs import ModelSpec, RemoteCodeFacts, models
from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm.release import version_key


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL712"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL712"]


def found(text):
    return [(f.span.line, f.span.col, f.severity, f.value) for f in lint(text)]


def pod(image="vllm/vllm-openai:v0.7.3", command="[vllm, serve, deepseek-ai/DeepSeek-V3, --tensor-parallel-size, '8']"):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: {image}
    command: {command}
    resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""


def model(model_id):
    return next(m for m in models() if model_id in m.names)


# --- catches -----------------------------------------------------------------------------------------
def test_deepseek_v3_on_the_0_7_3_image():
    assert found(pod()) == [(8, 28, Severity.ERROR, "deepseek-ai/DeepSeek-V3@0.7.3")]
    (finding,) = lint(pod())
    assert "requires you to execute the configuration file" in finding.message
    assert "configuration_deepseek.DeepseekV3Config" in finding.message and "4.51.0" in finding.message
    from vllmlint.formatters.report import split_message

    assert split_message(finding.message)[0] == ("deepseek-ai/DeepSeek-V3 is served without --trust-remote-code, but "
                                                 "its config.json is code in the repository")
    assert "0.8.3 or later" in finding.message and "image built 2025-03-25" in finding.message


@pytest.mark.parametrize("tag", ["v0.6.6", "v0.6.6.post1", "v0.7.0", "v0.7.1", "v0.7.2", "v0.8.0", "v0.8.2"])
def test_every_image_before_0_8_3(tag):
    assert len(found(pod(image=f"vllm/vllm-openai:{tag}"))) == 1


@pytest.mark.parametrize("flags,expected", [
    ("--revision, main", 1), ("--code-revision, main", 1),
    ("--revision, v2", 0), ("--revision=0123abcd", 0), ("--code-revision, dev", 0), ('--revision, "$(REV)"', 0),
])
def test_a_revision_other_than_main_is_not_what_the_catalog_read(flags, expected):
    findings = found(pod(command=f"[vllm, serve, deepseek-ai/DeepSeek-V3, {flags}]"))
    assert findings == [(8, 28, Severity.ERROR, "deepseek-ai/DeepSeek-V3@0.7.3")] * expected


@pytest.mark.parametrize("tag", ["v0.6.3", "v0.6.4", "v0.6.4.post1", "v0.6.5"])
def test_before_the_architecture_the_fix_is_upgrading(tag):
    (finding,) = lint(pod(image=f"vllm/vllm-openai:{tag}"))
    assert (finding.span.line, finding.span.col, finding.severity) == (8, 28, Severity.ERROR)
    assert "--trust-remote-code alone does not help" in finding.message
    assert "no DeepseekV3ForCausalLM in its model registry (first in 0.6.6)" in finding.message
    assert "upgrade to vLLM 0.6.6 or later" in finding.message and "Add --trust-remote-code" not in finding.message


def test_from_the_architecture_on_the_flag_is_the_fix():
    (finding,) = lint(pod(image="vllm/vllm-openai:v0.6.6"))
    assert "Add --trust-remote-code" in finding.message and "does not help" not in finding.message


def test_architecture_since_is_a_release_of_the_tables():
    for spec in models():
        facts = spec.needs_trust_remote_code
        if facts is not None and facts.architecture_since:
            assert release_range(facts.architecture_since) is not None, spec.id


@pytest.mark.parametrize("name", ["deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3-0324", "deepseek-ai/deepseek-r1"])
def test_aliases_and_case(name):
    assert [v for *_, v in found(pod(command=f"[vllm, serve, {name}]"))] == [f"{model(name.replace('deepseek-r1', 'DeepSeek-R1')).id}@0.7.3"]


def test_api_server_module_with_model_option():
    text = pod(command="[python3, -m, vllm.entrypoints.openai.api_server, --model, deepseek-ai/DeepSeek-R1]")
    assert [(line, col) for line, col, *_ in found(text)] == [(8, 73)]


# --- does not catch ----------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    "[vllm, serve, deepseek-ai/DeepSeek-V3, --trust-remote-code]",
    "[vllm, serve, deepseek-ai/DeepSeek-V3, --config-format, mistral]",
    "[vllm, serve, deepseek-ai/DeepSeek-V3, --hf-config-path, /configs/dsv3]",
    "[vllm, serve, Qwen/Qwen2.5-7B-Instruct]",
    "[vllm, serve, microsoft/Phi-3-mini-4k-instruct]",
    "[vllm, serve, cognitivecomputations/DeepSeek-V3-AWQ]",
    "[vllm, serve, /models/DeepSeek-V3]",
    "[vllm, serve, unsloth/DeepSeek-V3]",
])
def test_flag_given_or_not_needed_or_not_the_repository(command):
    assert found(pod(command=command)) == []


@pytest.mark.parametrize("image", ["vllm/vllm-openai:v0.8.3", "vllm/vllm-openai:v0.9.2", "vllm/vllm-openai:latest",
                                   "vllm/vllm-openai:nightly", "my-registry.example.com/vllm:0.7.3"])
def test_release_whose_transformers_knows_it_or_unknown(image):
    assert found(pod(image=image)) == []


def test_pip_install_first_means_unknown_transformers():
    text = pod(command='[sh, -c, "pip install -U transformers && vllm serve deepseek-ai/DeepSeek-V3"]')
    assert found(text) == []


def test_pip_installed_release_is_unknown():
    text = pod(image="python:3.11", command='[sh, -c, "pip install vllm==0.7.3 && vllm serve deepseek-ai/DeepSeek-V3"]')
    assert found(text) == []


# --- the function VL712 and VL801 share: both sides --------------------------------------------------
DEEPSEEK = "deepseek-ai/DeepSeek-V3"


@pytest.mark.parametrize("release, image, expected", [
    ("0.7.3", True, True), ("0.8.2", True, True), ("0.6.6", True, True),
    ("0.7.3", False, None),  # pip: a newer transformers may be installed
    ("0.8.3", True, False), ("0.8.3", False, False), ("0.11.0", False, False), ("0.33.0", True, False),
    ("0.5.4", True, None), ("0.99.0", True, None), (None, True, None), ("latest", True, None),
])
def test_deepseek_v3_needs_the_flag_only_before_0_8_3(release, image, expected):
    assert needs_trust_remote_code(model(DEEPSEEK), release, release_image=image) is expected


@pytest.mark.parametrize("model_id", ["Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B-Instruct",
                                      "google/gemma-2-9b-it", "microsoft/Phi-3-mini-4k-instruct", "Qwen/Qwen3-8B"])
@pytest.mark.parametrize("release", ["0.6.3", "0.7.3", "0.10.1", "0.33.0"])
def test_models_that_never_need_it(model_id, release):
    """The answer VL801 will act on: False on every catalogued release, whatever the image."""
    for image in (True, False):
        assert needs_trust_remote_code(model(model_id), release, release_image=image) is False


def _spec(**facts):
    return ModelSpec(id="x/y", family="x", architecture="X", parameters=10**9, num_hidden_layers=1, hidden_size=1,
                     intermediate_size=1, num_attention_heads=1, num_key_value_heads=1, head_dim=1, vocab_size=1,
                     tie_word_embeddings=False, max_position_embeddings=1,
                     needs_trust_remote_code=RemoteCodeFacts(**facts) if facts else None)


def test_unknown_model_and_facts():
    assert needs_trust_remote_code(_spec(), "0.7.3", release_image=True) is None


def test_vllm_registry_wins():
    # chatglm: vLLM's own ChatGLMConfig in every release of the data, so the config never needs the flag
    facts = dict(value=False, model_type="chatglm", remote_config="configuration_chatglm.ChatGLMConfig")
    assert needs_trust_remote_code(_spec(**facts), "0.7.3", release_image=True) is False


def test_a_model_type_no_transformers_knows():
    facts = dict(value=True, model_type="made_up", remote_config="configuration_x.XConfig", transformers_since=None)
    assert needs_trust_remote_code(_spec(**facts), "0.7.3") is True
    assert needs_trust_remote_code(_spec(**facts), "0.99.0") is None


def test_a_cap_below_the_transformers_that_knows_it():
    # 0.31.0 requires transformers<5.18.0: a model_type known only from 5.18.0 cannot load there, pip or image
    facts = dict(value=True, model_type="made_up", remote_config="c.C", transformers_since="5.18.0")
    assert needs_trust_remote_code(_spec(**facts), "0.31.0") is True
    assert needs_trust_remote_code(_spec(**facts), "0.30.0") is None


def test_catalog_vllm_since_agrees_with_the_function():
    """The release recorded in the catalog as the first that no longer needs the flag is the first release of
    the data for which the function says False, and the one before it says True for the release image."""
    ranges = load_yaml_data(knowledge_dir() / "config-registry.yaml")["releases"]
    releases = sorted({r["first"] for r in ranges} | {r["last"] for r in ranges}, key=version_key)
    for spec in models():
        facts = spec.needs_trust_remote_code
        assert facts is not None, spec.id
        answers = [needs_trust_remote_code(spec, r, release_image=True) for r in releases]
        if not facts.value:
            assert set(answers) == {False}, spec.id
            assert facts.vllm_since is None
            continue
        first_false = next(r for r, a in zip(releases, answers, strict=True) if a is False)
        assert first_false == facts.vllm_since, spec.id
        assert all(a is True for r, a in zip(releases, answers, strict=True) if version_key(r) < version_key(first_false))


def test_data_file_is_schema_valid_and_contiguous():
    data = load_yaml_data(knowledge_dir() / "config-registry.yaml")
    jsonschema.validate(data, json.loads((schemas_dir() / "config-registry.schema.json").read_text()))
    ranges = data["releases"]
    for before, after in zip(ranges, ranges[1:], strict=False):
        assert version_key(before["last"]) < version_key(after["first"])
    assert release_range("0.7.2").first == "0.7.1" and release_range("0.7.2").transformers == ">=4.48.2"
    assert release_range("0.6.2") is None


def test_every_catalogued_model_has_sourced_access_facts():
    entries = load_yaml_data(knowledge_dir() / "capacity" / "models.yaml")["models"]
    for entry in entries:
        assert "huggingface.co" in entry["needs_trust_remote_code"]["source"]
        if "gated" in entry:
            assert entry["gated"]["value"] is True and "huggingface.co" in entry["gated"]["source"]
    assert Path(knowledge_dir() / "config-registry.yaml").is_file()


# --- a --config file (vLLM inserts its options: vllm/utils/__init__.py 0.10.1.1 lines 1953-1980) --------
def test_a_config_file_may_set_trust_remote_code():
    command = "[vllm, serve, deepseek-ai/DeepSeek-V3, --config, /etc/vllm/config.yaml]"
    assert found(pod(command=command)) == []
    assert found(pod(command="[vllm, serve, deepseek-ai/DeepSeek-V3, --max-model-len, '4096']")) == [
        (8, 28, Severity.ERROR, "deepseek-ai/DeepSeek-V3@0.7.3")]


# --- repository tokenizer code (data/tokenizer-code.yaml) ----------------------------------------------
TOKENIZER_CAPPED = "vllm/vllm-openai:v0.14.1"  # transformers<5,>=4.56.0: every allowed release refuses it


@pytest.mark.parametrize("image,name,col", [
    # chatglm: vLLM's own config class loads the config without the flag; the tokenizer still needs it
    (TOKENIZER_CAPPED, "THUDM/chatglm3-6b", 28),
    ("vllm/vllm-openai:v0.12.0", "internlm/internlm2-7b", 28),
    ("vllm/vllm-openai:v0.19.0", "baichuan-inc/Baichuan2-7B-Chat-4bits", 28),
    (TOKENIZER_CAPPED, "THUDM/ChatGLM3-6B", 28),  # the Hub's ids are case-insensitive
])
def test_catches_a_tokenizer_that_is_repository_code(image, name, col):
    findings = lint(pod(image=image, command=f"[vllm, serve, {name}]"))
    assert [(f.span.line, f.span.col, f.severity) for f in findings] == [(8, col, Severity.ERROR)]
    assert findings[0].message.startswith("Add --trust-remote-code (after reading the repository's tokenization_")
    assert "auto_map.AutoTokenizer" in findings[0].message and "Failed to load the tokenizer" in findings[0].message


def test_catches_a_tokenizer_that_is_repository_code_with_the_model_option():
    text = pod(image=TOKENIZER_CAPPED, command="[python3, -m, vllm.entrypoints.openai.api_server, --model, "
                                               "THUDM/chatglm3-6b, --tokenizer, THUDM/chatglm3-6b]")
    assert [(f.span.line, f.span.col) for f in lint(text)] == [(8, 73)]


@pytest.mark.parametrize("image,command", [
    (TOKENIZER_CAPPED, "[vllm, serve, THUDM/chatglm3-6b, --trust-remote-code]"),
    ("vllm/vllm-openai:v0.29.0", "[vllm, serve, THUDM/chatglm3-6b]"),  # transformers 5 decides otherwise: not judged
    ("vllm/vllm-openai:v0.10.1.1", "[vllm, serve, THUDM/chatglm3-6b]"),  # uncapped: a transformers 5 may be installed
    (TOKENIZER_CAPPED, "[vllm, serve, THUDM/chatglm3-6b, --tokenizer, my-org/glm-tokenizer]"),  # another tokenizer
    (TOKENIZER_CAPPED, "[vllm, serve, THUDM/chatglm3-6b, --tokenizer-revision, v1.0]"),
    (TOKENIZER_CAPPED, "[vllm, serve, THUDM/chatglm3-6b, --revision, 0123abcd]"),  # the tokenizer follows --revision
    (TOKENIZER_CAPPED, "[vllm, serve, THUDM/chatglm3-6b, --skip-tokenizer-init]"),  # no tokenizer loaded
    (TOKENIZER_CAPPED, "[vllm, serve, THUDM/chatglm2-6b]"),  # not listed: no source read
    (TOKENIZER_CAPPED, "[sh, -c, 'pip install transformers==5.25.0 && vllm serve THUDM/chatglm3-6b']"),
])
def test_does_not_catch_a_tokenizer_not_known_to_be_refused(image, command):
    assert lint(pod(image=image, command=command)) == []


def test_tokenizer_code_table_matches_its_schema_and_is_sourced():
    schema = json.loads((schemas_dir() / "tokenizer-code.schema.json").read_text(encoding="utf-8"))
    data = load_yaml_data(knowledge_dir() / "tokenizer-code.yaml")
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(data)
    for repo in data["repositories"]:
        assert repo["auto_map"].split(".")[1] == repo["tokenizer_class"], repo["id"]
        assert repo["id"].split("/")[1] in repo["source"] or repo["id"] in repo["source"], repo["id"]
