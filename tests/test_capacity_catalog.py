"""The capacity catalogs: schema-valid, internally consistent, parameter counts that add up, and name resolution."""
from __future__ import annotations

import copy
import json

import pytest

from vllmlint.capacity import (
    count_parameters,
    find_gpu,
    gpus,
    gpus_for_node_constraints,
    instance_types,
    model_from_config_json,
    models,
    resolve_model,
    split_quantization,
)
from vllmlint.data import knowledge_dir, schemas_dir

CATALOGS = [
    ("models.yaml", "models.schema.json"),
    ("gpus.yaml", "gpus.schema.json"),
    ("instance-types.yaml", "instance-types.schema.json"),
    ("mig-profiles.yaml", "mig-profiles.schema.json"),
]


def _yaml(name):
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=False).load((knowledge_dir() / "capacity" / name).read_text(encoding="utf-8"))


def _validator(schema_name):
    import jsonschema

    schema = json.loads((schemas_dir() / schema_name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


# --------------------------------------------------------------------------- schemas


@pytest.mark.parametrize("data_name, schema_name", CATALOGS)
def test_catalog_matches_its_schema(data_name, schema_name):
    errors = sorted(_validator(schema_name).iter_errors(_yaml(data_name)), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])


@pytest.mark.parametrize(
    "data_name, schema_name, section, broken",
    [
        ("models.yaml", "models.schema.json", "models", {"attention": {"kind": "mla"}}),  # MLA needs its ranks
        ("models.yaml", "models.schema.json", "models", {"num_key_value_heads": 0}),
        ("models.yaml", "models.schema.json", "models", {"id": "not a repo id"}),
        ("gpus.yaml", "gpus.schema.json", "gpus", {"compute_capability": 8.9}),
        ("gpus.yaml", "gpus.schema.json", "gpus", {"labels": {"gpu_product": ["NVIDIA L4"], "gke_accelerator": [], "karpenter_gpu_name": []}}),
        ("instance-types.yaml", "instance-types.schema.json", "instance_types", {"provider": "oci"}),
        ("instance-types.yaml", "instance-types.schema.json", "instance_types", {"gpu_count": 0}),
    ],
)
def test_schemas_reject_broken_entries(data_name, schema_name, section, broken):
    data = copy.deepcopy(_yaml(data_name))
    data[section][0].update(broken)
    assert list(_validator(schema_name).iter_errors(data)), f"schema accepted {broken}"


# --------------------------------------------------------------------------- model catalog


def test_catalog_covers_the_widely_deployed_families():
    ids = {model.id for model in models()}
    assert len(ids) >= 25
    for wanted in [
        "Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen3-0.6B", "Qwen/Qwen3-32B",
        "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-235B-A22B", "meta-llama/Llama-3.1-8B-Instruct",
        "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Llama-3.2-1B-Instruct",
        "meta-llama/Llama-3.2-3B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3",
        "mistralai/Mixtral-8x7B-Instruct-v0.1", "google/gemma-2-2b-it", "google/gemma-2-9b-it", "google/gemma-2-27b-it",
        "microsoft/Phi-3-mini-4k-instruct", "microsoft/phi-4", "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1",
        "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
    ]:
        assert wanted in ids, wanted


def test_model_names_are_unique_across_the_catalog():
    seen = {}
    for model in models():
        for name in model.names:
            assert name.lower() not in seen, f"{name} is listed by {seen.get(name.lower())} and {model.id}"
            seen[name.lower()] = model.id


def test_every_model_cites_its_config():
    for model in models():
        assert model.source.startswith("https://huggingface.co/") and model.source.endswith("config.json"), model.id


@pytest.mark.parametrize("model", models(), ids=lambda m: m.id)
def test_parameter_count_recomputed_from_architecture(model):
    recomputed = count_parameters(model)
    assert abs(recomputed / model.parameters - 1) <= 0.03, (
        f"{model.id}: architecture gives {recomputed / 1e9:.2f}B, catalog says {model.parameters / 1e9:.2f}B"
    )


def test_parameter_count_by_hand_for_qwen2_5_7b():
    # embed 152064*3584 (x2, untied) + 28 * (q,k,v,o + qkv bias + gated MLP + 2 norms) + final norm
    layer = 3584 * 3584 + 2 * 3584 * 512 + 3584 * 3584 + (3584 + 2 * 512) + 3 * 3584 * 18944 + 2 * 3584
    expected = 2 * 152064 * 3584 + 28 * layer + 3584
    model = resolve_model("Qwen/Qwen2.5-7B-Instruct").model
    assert count_parameters(model) == expected == 7_615_616_512


def test_mla_and_moe_parameter_formula_for_deepseek_v3():
    model = resolve_model("deepseek-ai/DeepSeek-V3").model
    attention = (7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168)
    dense_mlp = 3 * 7168 * 18432
    moe = 257 * 3 * 7168 * 2048 + 7168 * 256 + 256
    expected = 2 * 129280 * 7168 + 61 * (attention + 2 * 7168) + 3 * dense_mlp + 58 * moe + 7168
    assert count_parameters(model) == expected
    assert 670e9 < expected < 672e9


# --------------------------------------------------------------------------- GPUs and instance types


def test_gpu_memory_figures_match_the_cited_reports():
    assert find_gpu("V100-16GB").nvidia_smi_total_mib == 16160
    assert find_gpu("V100-16GB").cuda_total_gib == pytest.approx(15.8, abs=0.05)
    assert find_gpu("H100-80GB").nvidia_smi_total_mib == 81559
    assert find_gpu("H100-80GB").cuda_total_gib == pytest.approx(79.2, abs=0.05)
    assert find_gpu("L4").cuda_total_gib == pytest.approx(22.0, abs=0.05)
    for gpu in gpus():
        if gpu.nvidia_smi_total_mib:
            # CUDA never reports more than nvidia-smi, and not more than ~1 GiB less
            assert 0 <= gpu.nvidia_smi_total_mib / 1024 - gpu.cuda_total_gib < 1.0, gpu.id
        assert gpu.fp8 == (gpu.capability >= (8, 9)), gpu.id
        assert gpu.bf16 == (gpu.capability >= (8, 0)), gpu.id


def test_required_gpus_are_catalogued_and_found_by_label():
    for gpu_id in ["T4", "V100-16GB", "V100-32GB", "A10G", "L4", "L40S", "A100-40GB", "A100-80GB", "H100-80GB", "H200", "B200"]:
        assert find_gpu(gpu_id) is not None, gpu_id
    assert find_gpu("NVIDIA-A10G").id == "A10G"
    assert find_gpu("Tesla-V100-SXM2-16GB").id == "V100-16GB"
    assert find_gpu("NVIDIA-H100-80GB-HBM3").id == "H100-80GB"
    assert find_gpu("nvidia-a100-80gb").id == "A100-80GB"
    assert find_gpu("nvidia-tesla-a100").id == "A100-40GB"
    assert find_gpu("l4").id == "L4"  # karpenter name, unique
    assert find_gpu("a100") is None  # karpenter's a100 covers 40 GB and 80 GB
    assert find_gpu("RTX-9999") is None
    assert find_gpu("RTX-4090").id == "RTX-4090"  # catalogued since the planner work (issue 12)


def test_label_spellings_do_not_collide():
    for attribute in ("gpu_product_labels", "gke_accelerator_labels"):
        seen = {}
        for gpu in gpus():
            for label in getattr(gpu, attribute):
                assert label.lower() not in seen, f"{label} on {seen.get(label.lower())} and {gpu.id}"
                seen[label.lower()] = gpu.id


@pytest.mark.parametrize(
    "instance, gpu_id, count",
    [
        ("p3.2xlarge", "V100-16GB", 1), ("p3.8xlarge", "V100-16GB", 4), ("p3.16xlarge", "V100-16GB", 8),
        ("p3dn.24xlarge", "V100-32GB", 8), ("p4d.24xlarge", "A100-40GB", 8), ("p4de.24xlarge", "A100-80GB", 8),
        ("p5.48xlarge", "H100-80GB", 8), ("p5e.48xlarge", "H200", 8), ("p5en.48xlarge", "H200", 8),
        ("p6-b200.48xlarge", "B200", 8), ("g4dn.12xlarge", "T4", 4), ("g5.48xlarge", "A10G", 8),
        ("g6.2xlarge", "L4", 1), ("g6e.12xlarge", "L40S", 4), ("a2-highgpu-8g", "A100-40GB", 8),
        ("a2-ultragpu-1g", "A100-80GB", 1), ("a3-megagpu-8g", "H100-80GB", 8), ("a3-ultragpu-8g", "H200", 8),
        ("g2-standard-96", "L4", 8), ("Standard_ND96isr_H100_v5", "H100-80GB", 8),
        ("Standard_ND96asr_v4", "A100-40GB", 8), ("Standard_NC24ads_A100_v4", "A100-80GB", 1),
    ],
)
def test_instance_types(instance, gpu_id, count):
    entry = instance_types()[instance]
    assert (entry.gpu.id, entry.gpu_count) == (gpu_id, count)


def test_aws_families_list_every_size():
    names = set(instance_types())
    for family, sizes in {
        "g4dn": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "metal"],
        "g5": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"],
        "g6": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"],
        "g6e": ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge"],
    }.items():
        for size in sizes:
            assert f"{family}.{size}" in names


# --------------------------------------------------------------------------- name resolution


@pytest.mark.parametrize(
    "name, model_id, how, quantization",
    [
        ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "exact id", None),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "exact id", None),
        ("qwen/QWEN2.5-7B-instruct", "Qwen/Qwen2.5-7B-Instruct", "case-insensitive id", None),
        ("Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B-Instruct", "variant of Qwen/Qwen2.5-7B-Instruct (-Instruct/-it)", None),
        ("google/gemma-2-9b", "google/gemma-2-9b-it", "variant of google/gemma-2-9b-it (-Instruct/-it)", None),
        ("Qwen/Qwen2.5-72B-Instruct-AWQ", "Qwen/Qwen2.5-72B-Instruct",
         "quantized variant (AWQ) of Qwen/Qwen2.5-72B-Instruct", "awq"),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen/Qwen2.5-7B-Instruct",
         "quantized variant (GPTQ-Int4) of Qwen/Qwen2.5-7B-Instruct", "gptq-int4"),
        ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "Qwen/Qwen2.5-7B-Instruct",
         "quantized variant (GPTQ-Int8) of Qwen/Qwen2.5-7B-Instruct", "gptq-int8"),
        ("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "meta-llama/Llama-3.1-8B-Instruct",
         "quantized variant (FP8) of meta-llama/Llama-3.1-8B-Instruct", "fp8"),
        ("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "meta-llama/Llama-3.1-70B-Instruct",
         "quantized variant (AWQ) of meta-llama/Llama-3.1-70B-Instruct", "awq"),
        ("unsloth/Llama-3.2-3B-Instruct-bnb-4bit", "meta-llama/Llama-3.2-3B-Instruct",
         "quantized variant (bnb-4bit) of meta-llama/Llama-3.2-3B-Instruct", "bnb-4bit"),
        ("someone/Qwen3-8B-int4", "Qwen/Qwen3-8B", "quantized variant (int4) of Qwen/Qwen3-8B", "int4"),
        ("/models/llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct",
         "local path /models/llama-3.1-70b matched meta-llama/Llama-3.1-70B-Instruct", None),
        ("/mnt/models/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct",
         "local path /mnt/models/Qwen2.5-7B-Instruct matched Qwen/Qwen2.5-7B-Instruct", None),
        ("/models/qwen3-0.6b/", "Qwen/Qwen3-0.6B", "local path /models/qwen3-0.6b/ matched Qwen/Qwen3-0.6B", None),
        ("/models/deepseek-r1-distill-qwen-7b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
         "local path /models/deepseek-r1-distill-qwen-7b matched deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", None),
        ("/root/.cache/huggingface/hub/models--Qwen--Qwen2.5-7B-Instruct-AWQ/snapshots/a1b2c3", "Qwen/Qwen2.5-7B-Instruct",
         "local path /root/.cache/huggingface/hub/models--Qwen--Qwen2.5-7B-Instruct-AWQ/snapshots/a1b2c3"
         " matched Qwen/Qwen2.5-7B-Instruct", "awq"),
        ("/models/qwen-2.5-72b-instruct-awq", "Qwen/Qwen2.5-72B-Instruct",
         "local path /models/qwen-2.5-72b-instruct-awq matched Qwen/Qwen2.5-72B-Instruct", "awq"),
    ],
)
def test_resolve_model(name, model_id, how, quantization):
    match = resolve_model(name)
    assert match is not None, name
    assert (match.model.id, match.how, match.quantization) == (model_id, how, quantization)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "facebook/opt-125m",  # unknown
        "Qwen/Qwen3-4B-Thinking-2507",  # a different checkpoint (longer context), not a variant suffix
        "NousResearch/Hermes-3-Llama-3.1-8B",  # a fine-tune: ids are never matched fuzzily
        "meta-llama/Llama-3.1-8B-Instruct:latest",
        "/models/llama-70b",  # 3.1? 3.3? R1 distill? ambiguous, so unknown
        "/models/qwen2.5",  # no size token
        "/models/qwen-7b",  # Qwen2.5-7B or the R1 Qwen distill: neither spelled out
        "/models/mistral-7b",  # v0.3 is catalogued, v0.1/v0.2 are different checkpoints
        "/models/Qwen3-0.6B-ish-70b",  # the path's size 70b is not this model's
        "/hf/hub/models--acme--secret-model/snapshots/abc",  # a cache directory of an unknown repo
    ],
)
def test_resolve_model_unknown_or_ambiguous(name):
    assert resolve_model(name) is None


def test_ambiguous_exact_leaf_returns_none():
    clone = models()[3]  # Qwen2.5-7B-Instruct
    from dataclasses import replace

    other = replace(clone, id="acme/Qwen2.5-7B-Instruct", aliases=())
    assert resolve_model("/srv/Qwen2.5-7B-Instruct", extra_models=[other]) is None
    assert resolve_model("acme/Qwen2.5-7B-Instruct", extra_models=[other]).model is other


def test_split_quantization():
    assert split_quantization("Qwen2.5-7B-Instruct-AWQ") == ("Qwen2.5-7B-Instruct", "awq")
    assert split_quantization("Meta-Llama-3.1-8B-Instruct-FP8-dynamic") == ("Meta-Llama-3.1-8B-Instruct", "fp8")
    assert split_quantization("Llama-3.2-3B") == ("Llama-3.2-3B", None)


# --------------------------------------------------------------------------- config.json


QWEN2_5_7B_CONFIG = {  # Qwen/Qwen2.5-7B-Instruct config.json (abridged to the fields that matter)
    "architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584, "intermediate_size": 18944,
    "max_position_embeddings": 32768, "max_window_layers": 28, "model_type": "qwen2", "num_attention_heads": 28,
    "num_hidden_layers": 28, "num_key_value_heads": 4, "sliding_window": 131072, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "use_sliding_window": False, "vocab_size": 152064,
}


def test_model_from_config_json_qwen():
    model = model_from_config_json(QWEN2_5_7B_CONFIG, "Qwen/Qwen2.5-7B-Instruct")
    assert model.parameters_estimated
    assert model.head_dim == 128 and model.attention_kind == "gqa" and model.qkv_bias
    assert model.sliding_window is None  # use_sliding_window is false
    assert model.parameters == count_parameters(resolve_model("Qwen/Qwen2.5-7B-Instruct").model)


def test_model_from_config_json_mla_moe_and_fp8():
    config = {
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
        "intermediate_size": 18432, "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
        "num_experts_per_tok": 8, "first_k_dense_replace": 3, "num_hidden_layers": 61, "num_attention_heads": 128,
        "num_key_value_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 129280, "max_position_embeddings": 163840,
        "topk_method": "noaux_tc", "torch_dtype": "bfloat16", "tie_word_embeddings": False,
        "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
    }
    model = model_from_config_json(config)
    assert model.is_mla and model.is_moe and model.checkpoint_quantization == "fp8"
    assert model.parameters == count_parameters(resolve_model("deepseek-ai/DeepSeek-V3").model)


def test_model_from_config_json_gemma2_sliding_and_text_config():
    gemma = {"model_type": "gemma2", "architectures": ["Gemma2ForCausalLM"], "hidden_size": 3584,
             "intermediate_size": 14336, "num_hidden_layers": 42, "num_attention_heads": 16,
             "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192,
             "sliding_window": 4096}
    model = model_from_config_json(gemma)
    assert (model.sliding_window, model.sliding_window_layers, model.tie_word_embeddings) == (4096, "even", True)
    assert abs(model.parameters / 9.24e9 - 1) < 0.03
    wrapped = model_from_config_json({"architectures": ["Foo"], "text_config": gemma})
    assert wrapped.num_hidden_layers == 42


def test_model_from_config_json_rejects_incomplete():
    assert model_from_config_json({"model_type": "llama", "hidden_size": 4096}) is None
    assert model_from_config_json("not a dict") is None


# --------------------------------------------------------------------------- node constraints


def _summary(candidates):
    return None if candidates is None else sorted((c.instance_type, c.gpu.id, c.gpu_count) for c in candidates)


def test_node_selector_instance_type():
    assert _summary(gpus_for_node_constraints({"node.kubernetes.io/instance-type": "p3.16xlarge"})) == [
        ("p3.16xlarge", "V100-16GB", 8)]


def test_node_selector_gpu_labels():
    assert _summary(gpus_for_node_constraints({"nvidia.com/gpu.product": "NVIDIA-A10G"})) == [(None, "A10G", None)]
    assert _summary(gpus_for_node_constraints({"cloud.google.com/gke-accelerator": "nvidia-l4"})) == [(None, "L4", None)]
    assert _summary(gpus_for_node_constraints({"nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"})) == [
        (None, "V100-16GB", None)]


def test_karpenter_requirements():
    family = gpus_for_node_constraints(requirements=[
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5", "g6"]},
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["1"]},
    ])
    assert _summary(family) == sorted([
        ("g5.12xlarge", "A10G", 4), ("g5.24xlarge", "A10G", 4), ("g5.48xlarge", "A10G", 8),
        ("g6.12xlarge", "L4", 4), ("g6.24xlarge", "L4", 4), ("g6.48xlarge", "L4", 8)])
    names = gpus_for_node_constraints(requirements=[
        {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["a100"]}])
    assert _summary(names) == [(None, "A100-40GB", None), (None, "A100-80GB", None)]
    memory = gpus_for_node_constraints(requirements=[
        {"key": "karpenter.k8s.aws/instance-gpu-memory", "operator": "Lt", "values": ["20000"]}])
    assert {c.gpu.id for c in memory} == {"T4", "V100-16GB"}
    not_in = gpus_for_node_constraints(requirements=[
        {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["l4"]},
        {"key": "node.kubernetes.io/instance-type", "operator": "NotIn", "values": ["g6.xlarge", "g6.2xlarge"]},
    ])
    assert all(c.gpu.id == "L4" and c.instance_type.startswith(("g6.", "gr6.")) for c in not_in)
    assert "g6.xlarge" not in {c.instance_type for c in not_in} and "g6.4xlarge" in {c.instance_type for c in not_in}


def test_unconstrained_or_unknown_gives_none():
    assert gpus_for_node_constraints() is None
    assert gpus_for_node_constraints({"kubernetes.io/os": "linux", "node-type": "bench-gpu"}) is None
    assert gpus_for_node_constraints({"node.kubernetes.io/instance-type": "m5.large"}) is None
    assert gpus_for_node_constraints({"nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-2080-Ti"}) is None


def test_catalogued_repositories_name_an_entry_the_resolver_picks():
    from vllmlint.capacity.specs import catalogued_repositories

    listed = catalogued_repositories()
    assert "meta-llama/llama-3.2-1b" in listed
    ids = {m.id for m in models()}
    for name, (model_id, facts) in listed.items():
        assert model_id in ids, name
        assert facts, name  # every listed repository carries at least one sourced fact
        match = resolve_model(name)
        assert match is not None and match.model.id == model_id, name
        assert name not in {n.lower() for n in ids}, name  # an entry's own id holds its facts on the entry


# The weight format a repository name's suffix announces (what sizing uses, names.split_quantization) against
# the quant_method config.json states (the catalogued fact): a listed copy whose name says another width is a
# data error, since VL601 would size it by its name.
_NAME_FORMATS = {"awq": {"awq"}, "gptq": {"gptq-int4", "gptq-int8", "int4", "int8"}, "fp8": {"fp8"},
                 "compressed-tensors": {"fp8", "int8", "int4"}}


def test_quantized_repositories_agree_with_the_width_their_name_announces():
    from vllmlint.capacity.names import split_quantization
    from vllmlint.capacity.specs import catalogued_repositories

    quantized = {name: facts["quantization"] for name, (_m, facts) in catalogued_repositories().items()
                 if "quantization" in facts}
    assert {"qwen/qwen2.5-7b-instruct-awq", "qwen/qwen2.5-7b-instruct-gptq-int4", "qwen/qwen3-4b-fp8",
            "redhatai/meta-llama-3.1-8b-instruct-fp8", "redhatai/meta-llama-3.1-8b-instruct-quantized.w4a16"} <= set(quantized)
    for name, fact in quantized.items():
        suffix = split_quantization(name)[1]
        assert suffix in _NAME_FORMATS[fact.value], (name, suffix, fact.value)
        assert fact.source.startswith("https://"), name


def test_a_listed_quantized_copy_gives_its_own_quant_method():
    from vllmlint.capacity.specs import repository_fact

    qwen = next(m for m in models() if m.id == "Qwen/Qwen2.5-7B-Instruct")
    assert repository_fact(qwen, "Qwen/Qwen2.5-7B-Instruct-AWQ", "quantization").value == "awq"
    assert repository_fact(qwen, "qwen/qwen2.5-7b-instruct-gptq-int4", "quantization").value == "gptq"
    assert repository_fact(qwen, "Qwen/Qwen2.5-7B-Instruct", "quantization").value is None  # the entry's own
    assert repository_fact(qwen, "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "quantization") is None  # not listed
    assert repository_fact(qwen, "Qwen/Qwen2.5-7B-Instruct-AWQ", "has_chat_template") is None  # not read for it
    llama = next(m for m in models() if m.id == "meta-llama/Llama-3.1-8B-Instruct")
    assert repository_fact(llama, "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "quantization").value \
        == "compressed-tensors"


def test_a_repository_fact_is_about_that_repository_only():
    from vllmlint.capacity.specs import repository_fact

    instruct = next(m for m in models() if m.id == "meta-llama/Llama-3.2-1B-Instruct")
    assert repository_fact(instruct, "meta-llama/Llama-3.2-1B", "has_chat_template").value is False
    assert repository_fact(instruct, "META-LLAMA/llama-3.2-1b", "has_chat_template").value is False
    assert repository_fact(instruct, "meta-llama/Llama-3.2-1B-Instruct", "has_chat_template").value is True
    assert repository_fact(instruct, "meta-llama/Llama-3.2-1B", "quantization") is None  # not read for it
    other = next(m for m in models() if m.id == "meta-llama/Llama-3.2-3B-Instruct")
    assert repository_fact(other, "meta-llama/Llama-3.2-1B", "has_chat_template") is None
