"""The catalog's per-repository facts (has_chat_template, quantization, modalities) and the per-release tables
VL711 and VL716 read with them: schema-valid, sourced, reconciled with checkpoint_quantization."""
from __future__ import annotations

import json

import pytest

from vllmlint.capacity import model_from_config_json, models, resolve_model
from vllmlint.capacity.specs import ModelFact, repository_fact
from vllmlint.data import knowledge_dir, schemas_dir
from vllmlint.vllm.checkpoint import (chat_template_fallback, chat_template_refusal, in_range, multimodal_option,
                                      prequantized_method)

TABLES = [("chat-templates.yaml", "chat-templates.schema.json"),
          ("quantization-methods.yaml", "quantization-methods.schema.json"),
          ("multimodal-options.yaml", "multimodal-options.schema.json")]


def _yaml(path):
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=False).load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("data,schema", TABLES)
def test_tables_match_their_schemas(data, schema):
    import jsonschema

    schema_doc = json.loads((schemas_dir() / schema).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema_doc)
    jsonschema.Draft202012Validator(schema_doc).validate(_yaml(knowledge_dir() / data))


def test_every_catalogued_repository_has_the_three_facts_with_a_hugging_face_source():
    for model in models():
        for attribute in ("has_chat_template", "quantization", "modalities"):
            fact = getattr(model, attribute)
            assert isinstance(fact, ModelFact), (model.id, attribute)
            assert fact.source.startswith(f"https://huggingface.co/{model.id}/"), (model.id, attribute)
            assert set(fact.also) <= set(model.aliases), (model.id, attribute, fact.also)


def test_quantization_is_reconciled_with_checkpoint_quantization():
    # checkpoint_quantization (the capacity code's weight size) and the quantization fact never disagree.
    for model in models():
        assert model.quantization is not None
        assert model.quantization.value == model.checkpoint_quantization, model.id
        if model.checkpoint_quantization:
            assert set(model.quantization.also) == set(model.aliases), model.id  # every published name ships it


def test_the_base_model_has_no_template_and_its_model_type():
    llama2 = resolve_model("meta-llama/Llama-2-7b-hf").model
    assert llama2.has_chat_template.value is False and llama2.has_chat_template.model_type == "llama"
    mistral = resolve_model("mistralai/Mistral-7B-v0.1").model
    assert mistral.has_chat_template.value is False and mistral.has_chat_template.model_type == "mistral"
    chat = [m.id for m in models() if m.has_chat_template.value is False]
    assert sorted(chat) == ["meta-llama/Llama-2-7b-hf", "mistralai/Mistral-7B-v0.1"]


def test_repository_facts_apply_to_the_repository_only():
    llama = resolve_model("meta-llama/Llama-3.1-8B-Instruct").model
    assert repository_fact(llama, "meta-llama/Llama-3.1-8B-Instruct", "has_chat_template").value is True
    assert repository_fact(llama, "META-LLAMA/Meta-Llama-3.1-8B-Instruct", "quantization").value is None
    assert repository_fact(llama, "meta-llama/Llama-3.1-8B", "has_chat_template") is None  # the base variant
    assert repository_fact(llama, "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", "quantization") is None
    r1 = resolve_model("deepseek-ai/DeepSeek-R1").model
    assert repository_fact(r1, "deepseek-ai/DeepSeek-R1-Zero", "quantization").value == "fp8"
    assert repository_fact(r1, "deepseek-ai/DeepSeek-R1-Zero", "has_chat_template") is None  # not read for it
    assert repository_fact(r1, "deepseek-ai/DeepSeek-R1", "missing_attribute") is None


def test_config_json_gives_the_checkpoints_own_quant_method():
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 2,
              "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
              "quantization_config": {"quant_method": "GPTQ", "bits": 4}}
    model = model_from_config_json(config, "/models/x")
    # sized as the checkpoint's own GPTQ 4-bit (it was left unquantized, at bf16, before config quantization was read)
    assert model.quantization.value == "gptq" and model.checkpoint_quantization == "gptq-int4"
    del config["quantization_config"]
    assert model_from_config_json(config, "/models/x").quantization.value is None
    fp8 = model_from_config_json({**config, "quantization_config": {"quant_method": "fp8"}}, "/models/x")
    assert fp8.quantization.value == fp8.checkpoint_quantization == "fp8"


def test_release_ranges():
    assert in_range("0.10.0", {"from": "0.6.2", "to": "0.10.0"}) and not in_range("0.10.1", {"from": "0.6.2", "to": "0.10.0"})
    assert in_range("0.6.4.post1", {"from": "0.6.2"}) and not in_range("0.5.4", {"from": "0.6.2"})
    assert not in_range("0.9.0", None)


def test_table_lookups():
    assert chat_template_refusal("0.6.2") is not None and chat_template_refusal("0.5.4") is None
    assert chat_template_fallback("paligemma", "0.9.2") is not None and chat_template_fallback("paligemma", "0.8.5") is None
    assert chat_template_fallback("fuyu", "0.22.0") is not None and chat_template_fallback("fuyu", "0.26.0") is None
    assert chat_template_fallback("llama", "0.33.0") is None and chat_template_fallback(None, "0.33.0") is None
    assert prequantized_method("AWQ", "0.29.0")["checkpoint_methods"] == ["awq"]
    assert prequantized_method("fp8", "0.29.0") is None and prequantized_method("awq", "0.5.4") is None
    assert multimodal_option("--limit-mm-per-prompt", "0.8.5")[0] == "refused"
    assert multimodal_option("--limit-mm-per-prompt", "0.10.1")[0] == "ignored"
    assert multimodal_option("--mm-processor-kwargs", "0.9.0") is None  # between the releases read
    assert multimodal_option("--mm-processor-cache-gb", "0.29.0") is None
