"""Config-class defaults (data/capacity/config-defaults.yaml): a real config.json that leaves keys to its class."""
from __future__ import annotations

import json

import jsonschema

from vllmlint.capacity.hfconfig import config_defaults
from vllmlint.capacity.hfconfig import model_from_config_json
from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint_dev.models_catalog import entry, stored

# google/gemma-3-4b-it's config.json as the repository has it: its text_config names six keys.
GEMMA3_4B = {
    "architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999, "eoi_token_index": 256000,
    "eos_token_id": [1, 106], "image_token_index": 262144, "initializer_range": 0.02, "mm_tokens_per_image": 256,
    "model_type": "gemma3",
    "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text", "num_hidden_layers": 34,
                    "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
    "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
    "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304, "model_type": "siglip_vision_model",
                      "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": False},
}


def test_defaults_table_matches_its_schema():
    data = load_yaml_data(knowledge_dir() / "capacity" / "config-defaults.yaml")
    jsonschema.validate(data, json.loads((schemas_dir() / "config-defaults.schema.json").read_text(encoding="utf-8")))


def test_real_gemma3_config_is_read_with_the_class_defaults():
    model = model_from_config_json(GEMMA3_4B, "google/gemma-3-4b-it")
    assert model is not None  # without the defaults: no heads, no vocabulary size, no model
    assert (model.num_hidden_layers, model.hidden_size, model.intermediate_size) == (34, 2560, 10240)
    # Gemma3TextConfig defaults (transformers 4.50.0 configuration_gemma3.py lines 172-200)
    assert (model.num_attention_heads, model.num_key_value_heads, model.head_dim) == (8, 4, 256)
    assert (model.vocab_size, model.max_position_embeddings, model.tie_word_embeddings) == (262_208, 131_072, True)
    assert model.sliding_window == 1024  # the file's own value wins over the class's 4096


def test_text_config_without_model_type_is_typed_by_its_parent():
    config = {**GEMMA3_4B, "text_config": {k: v for k, v in GEMMA3_4B["text_config"].items() if k != "model_type"}}
    assert config_defaults(config)["vocab_size"] == 262_208
    assert config_defaults({"model_type": "llama", "hidden_size": 8}) == {}


def test_stored_gemma3_configs_give_the_same_entries_as_the_full_ones():
    # The stored configs keep only the keys of the repositories' files; the defaults fill the rest, so the
    # catalog entry is what a fully spelled-out config gives.
    items = {item["id"]: item for item in stored()}
    item = items["google/gemma-3-27b-it"]
    assert "vocab_size" not in item["config"]["text_config"]
    full = {**item, "config": {**item["config"], "text_config": {**item["config"]["text_config"], "vocab_size": 262_208,
                                                                 "max_position_embeddings": 131_072}}}
    assert entry(item) == entry(full)
    assert entry(item)["head_dim"] == 128 and entry(item)["vocab_size"] == 262_208


def test_every_generated_entry_says_where_it_was_verified():
    for item in stored():
        verified = entry(item)["verified"]
        assert verified == "not verified against a copy" or verified.startswith("verified against "), item["id"]
    items = {item["id"]: item for item in stored()}
    assert entry(items["Qwen/Qwen3-30B-A3B-Instruct-2507"])["verified"].startswith("verified against github.com/gogongxt/python")
    assert items["Qwen/Qwen3-30B-A3B-Instruct-2507"]["config"]["rope_theta"] == 10_000_000


def test_llava_next_text_config_takes_mistral_defaults_and_keeps_the_top_level_class():
    # llava-hf/llava-v1.6-mistral-7b-hf: its text_config (model_type mistral) names no hidden size, heads or
    # layers, and names its language model's class; vLLM looks up the checkpoint's own class.
    item = {item["id"]: item for item in stored()}["llava-hf/llava-v1.6-mistral-7b-hf"]
    assert "hidden_size" not in item["config"]["text_config"]
    model = model_from_config_json(item["config"], item["id"])
    assert model is not None
    assert model.architecture == "LlavaNextForConditionalGeneration"
    # MistralConfig defaults (4096, 32 layers, 32 heads); the file's own 32064 vocabulary and 8 KV heads win
    assert (model.hidden_size, model.num_hidden_layers, model.num_attention_heads) == (4096, 32, 32)
    assert (model.vocab_size, model.num_key_value_heads, model.head_dim) == (32_064, 8, 128)
    assert model.sliding_window is None  # the file's explicit null wins over the class's 4096
    assert entry(item)["modalities"]["value"] == ["text", "image"]
