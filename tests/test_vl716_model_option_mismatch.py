"""VL716 model-option-mismatch: catches / does-not-catch, every finding pinned at line, column and severity."""
import json

import pytest

from vllmlint.engine import Linter, LintOptions, lint_text
from vllmlint.finding import Severity


def pod(image, lines):
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n  containers:\n  - name: vllm\n"
            f"    image: {image}\n" + "".join(f"    {line}\n" for line in lines))


def findings(text, codes=("VL716",), filename="example.yaml", **options):
    result = lint_text(text, filename, LintOptions(select=list(codes), **options))
    assert not result.internal_error, result.notices
    return [f for f in result.findings if f.code in codes]


def where(text, **kw):
    return [(f.span.line, f.span.col, f.severity) for f in findings(text, **kw)]


E, N = Severity.ERROR, Severity.INFO
NEW, OLD = "vllm/vllm-openai:v0.29.0", "vllm/vllm-openai:v0.8.5"
QWEN, LLAMA, R1 = "Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "deepseek-ai/DeepSeek-R1"

CATCHES = [
    ("awq on an unquantized checkpoint", pod(NEW, [f"args: [{QWEN}, --quantization, awq]"]), [(8, 54, E)]),
    ("gptq written inline", pod(NEW, [f"args: [{QWEN}, --quantization=gptq]"]), [(8, 38, E)]),
    ("-q awq_marlin", pod(NEW, [f"args: [{QWEN}, -q, awq_marlin]"]), [(8, 42, E)]),
    ("upper-case GPTQ_MARLIN", pod(NEW, [f"args: [{QWEN}, --quantization, GPTQ_MARLIN]"]), [(8, 54, E)]),
    ("the last --quantization counts", pod(NEW, [f"args: [{QWEN}, --quantization, fp8, --quantization, awq]"]),
     [(8, 75, E)]),
    ("a renamed id listed in `also`", pod(NEW, ["args: [meta-llama/Meta-Llama-3.1-8B-Instruct, --quantization, awq]"]),
     [(8, 67, E)]),
    ("awq on an FP8 checkpoint", pod(NEW, [f"args: [{R1}, --quantization, awq, -tp, '8']"]), [(8, 53, E)]),
    ("gptq_marlin on an FP8 alias", pod(NEW, ["args: [deepseek-ai/DeepSeek-R1-0528, --quantization, gptq_marlin]"]),
     [(8, 58, E)]),
    ("an old release", pod("vllm/vllm-openai:v0.6.4", [f"args: [--model, {QWEN}, --quantization, awq]"]), [(8, 63, E)]),
    ("--limit-mm-per-prompt refused in 0.8.5", pod(OLD, [f"args: [--model, {LLAMA}, --limit-mm-per-prompt, image=2]"]),
     [(8, 55, E)]),
    ("--limit-mm-per-prompt refused in 0.10.0", pod("vllm/vllm-openai:v0.10.0",
                                                   [f"args: [--model, {LLAMA}, --limit-mm-per-prompt, "
                                                    "'{\"image\": 2}']"]), [(8, 55, E)]),
    ("--mm-processor-kwargs refused in 0.9.2", pod("vllm/vllm-openai:v0.9.2",
                                                  [f"args: [--model, {LLAMA}, --mm-processor-kwargs, "
                                                   "'{\"num_crops\": 4}']"]), [(8, 55, E)]),
    ("--disable-mm-preprocessor-cache refused in 0.9.2", pod("vllm/vllm-openai:v0.9.2",
                                                           [f"args: [--model, {LLAMA}, "
                                                            "--disable-mm-preprocessor-cache]"]), [(8, 55, E)]),
    ("--disable-mm-preprocessor-cache refused in 0.10.0", pod("vllm/vllm-openai:v0.10.0",
                                                            [f"args: [--model, {LLAMA}, "
                                                             "--disable-mm-preprocessor-cache]"]), [(8, 55, E)]),
    ("--revision main is the catalog's branch", pod(NEW, [f"args: [{QWEN}, --revision, main, --quantization, awq]"]),
     [(8, 72, E)]),
    ("--limit-mm-per-prompt ignored in 0.29.0: info", pod(NEW, [f"args: [{LLAMA}, --limit-mm-per-prompt, "
                                                              "'{\"image\": 2}']"]), [(8, 46, N)]),
    ("two options, two findings", pod(NEW, [f"args: [{LLAMA}, --limit-mm-per-prompt, '{{\"image\": 2}}', "
                                            "--mm-processor-kwargs, '{\"a\": 1}']"]), [(8, 46, N), (8, 85, N)]),
    ("quantization and multimodal at once", pod(OLD, [f"args: [--model, {QWEN}, --quantization, awq, "
                                                      "--limit-mm-per-prompt, image=1]"]), [(8, 63, E), (8, 68, E)]),
    # official quantized copies listed in models.yaml `repositories` with their own quant_method
    ("awq on Qwen's GPTQ-Int4 copy", pod(NEW, ["args: [Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4, --quantization, awq]"]),
     [(8, 64, E)]),
    ("gptq on Qwen's AWQ copy", pod(NEW, ["args: [Qwen/Qwen2.5-72B-Instruct-AWQ, --quantization, gptq, -tp, '4']"]),
     [(8, 59, E)]),
    ("gptq on a compressed-tensors FP8 copy", pod(NEW, ["args: [RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8, "
                                                        "--quantization, gptq]"]), [(8, 69, E)]),
    ("awq on RedHatAI's w4a16 (GPTQ) copy", pod(OLD, ["args: [--model, RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized"
                                                      ".w4a16, --quantization, awq]"]), [(8, 90, E)]),
    ("awq_marlin on Qwen's FP8 copy", pod(NEW, ["args: [Qwen/Qwen3-4B-FP8, --quantization, awq_marlin]"]),
     [(8, 47, E)]),
]
SILENT = [
    ("fp8 quantizes while loading", pod(NEW, [f"args: [{QWEN}, --quantization, fp8]"])),
    ("bitsandbytes quantizes while loading", pod(NEW, [f"args: [{QWEN}, --quantization, bitsandbytes]"])),
    ("a method the table does not list", pod(NEW, [f"args: [{QWEN}, --quantization, compressed-tensors]"])),
    ("fp8 on the FP8 checkpoint", pod(NEW, [f"args: [{R1}, --quantization, fp8]"])),
    ("an AWQ copy is not the catalogued repository", pod(NEW, ["args: [Qwen/Qwen2.5-7B-Instruct-AWQ, "
                                                               "--quantization, awq]"])),
    ("a base variant the fact is not about", pod(NEW, ["args: [Qwen/Qwen2.5-7B, --quantization, awq]"])),
    ("awq_marlin on Qwen's AWQ copy", pod(NEW, ["args: [Qwen/Qwen2.5-7B-Instruct-AWQ, --quantization, awq_marlin]"])),
    ("gptq_marlin on RedHatAI's w4a16 copy", pod(NEW, ["args: [RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16, "
                                                       "--quantization, gptq_marlin]"])),
    ("gptq on Qwen's GPTQ-Int4 copy", pod(NEW, ["args: [Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4, --quantization, gptq]"])),
    ("a quantized copy not listed", pod(NEW, ["args: [Qwen/Qwen2.5-3B-Instruct-GPTQ-Int8, --quantization, awq]"])),
    ("a local path matched by its words", pod(NEW, ["args: [/models/qwen2.5-7b-instruct, --quantization, awq]"])),
    ("a model not in the catalog", pod(NEW, ["args: [TheBloke/Llama-2-7B-AWQ, --quantization, awq]"])),
    ("--quantization from an unresolved $(VAR)", pod(NEW, [f'args: [{QWEN}, --quantization, "$(QUANT)"]'])),
    ("a release before the tables", pod("vllm/vllm-openai:v0.5.4", [f"command: [vllm, serve, {QWEN}, "
                                                                     "--quantization, awq]"])),
    ("an empty multimodal limit", pod(NEW, [f"args: [{LLAMA}, --limit-mm-per-prompt, '{{}}']"])),
    ("a limit from $(VAR)", pod(NEW, [f'args: [{LLAMA}, --limit-mm-per-prompt, "$(LIMITS)"]'])),
    ("--disable-mm-preprocessor-cache from 0.10.1 only sizes the cache",
     pod("vllm/vllm-openai:v0.10.1.1", [f"args: [--model, {LLAMA}, --disable-mm-preprocessor-cache]"])),
    ("--revision of another branch may hold an AWQ checkpoint",
     pod(NEW, [f"args: [{QWEN}, --revision, awq, --quantization, awq]"])),
    ("--revision from a $(VAR)", pod(NEW, [f'args: [{QWEN}, --revision, "$(REV)", --quantization, awq]'])),
    ("--revision on a multimodal option", pod(OLD, [f"args: [--model, {LLAMA}, --revision=v2, "
                                                    "--limit-mm-per-prompt, image=2]"])),
    ("a cache setting is harmless", pod(NEW, [f"args: [{LLAMA}, --mm-processor-cache-gb, '0']"])),
    ("a release between the ones read", pod("vllm/vllm-openai:v0.9.0", [f"args: [--model, {LLAMA}, "
                                                                        "--mm-processor-kwargs, '{\"a\": 1}']"])),
    ("a multimodal model is not text-only", pod(NEW, ["args: [Qwen/Qwen2.5-VL-7B-Instruct, --limit-mm-per-prompt, "
                                                      "'{\"image\": 2}']"])),
]


@pytest.mark.parametrize("title,text,expected", CATCHES, ids=[c[0] for c in CATCHES])
def test_catches(title, text, expected):
    assert where(text) == expected


@pytest.mark.parametrize("title,text", SILENT, ids=[c[0] for c in SILENT])
def test_does_not_catch(title, text):
    assert where(text) == []


def test_messages_quote_vllms_errors_and_say_what_to_do():
    [unquantized] = findings(pod(NEW, [f"args: [{QWEN}, --quantization, awq]"]))
    assert unquantized.message.startswith("`--quantization awq` needs a checkpoint quantized with AWQ")
    assert "Cannot find the config file for awq" in unquantized.message and "`fp8`" in unquantized.message
    [mismatch] = findings(pod(NEW, [f"args: [{R1}, --quantization, gptq]"]))
    assert "quantized with `fp8`" in mismatch.message and "does not match" in mismatch.message
    from vllmlint.formatters.report import split_message

    assert split_message(mismatch.message)[0] == ("`--quantization gptq` does not load `deepseek-ai/DeepSeek-R1`, "
                                                  "quantized with `fp8`")
    assert split_message(unquantized.message)[0] == ("`--quantization awq` needs a checkpoint quantized with AWQ, and "
                                                     "`Qwen/Qwen2.5-7B-Instruct` is not quantized")
    assert "pass `--quantization fp8`" in mismatch.message
    [refused] = findings(pod(OLD, [f"args: [--model, {LLAMA}, --limit-mm-per-prompt, image=2]"]))
    assert "`limit_mm_per_prompt` is only supported for multimodal models" in refused.message
    assert "vLLM 0.8.5 exits" in refused.message
    [ignored] = findings(pod(NEW, [f"args: [{LLAMA}, --limit-mm-per-prompt, '{{\"image\": 2}}']"]))
    assert "ignores it" in ignored.message


def test_a_local_checkpoint_with_its_config_json_in_the_run():
    config = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "num_hidden_layers": 28,
              "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28, "num_key_value_heads": 4,
              "vocab_size": 152064, "max_position_embeddings": 32768, "torch_dtype": "float16",
              "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}
    manifest = pod(NEW, ["args: [/models/qwen-awq-checkpoint, --quantization, gptq]"])
    linter = Linter(LintOptions(select=["VL716"]))
    linter.add_text(manifest, "deploy.yaml")
    linter.add_text(json.dumps(config), "qwen-awq-checkpoint/config.json", ".json")
    result = linter.run()
    assert [(f.path, f.span.line, f.span.col) for f in result.findings] == [("deploy.yaml", 8, 57)]
    assert "quantized with `awq`" in result.findings[0].message
    fine = Linter(LintOptions(select=["VL716"]))
    fine.add_text(pod(NEW, ["args: [/models/qwen-awq-checkpoint, --quantization, awq_marlin]"]), "deploy.yaml")
    fine.add_text(json.dumps(config), "qwen-awq-checkpoint/config.json", ".json")
    assert fine.run().findings == []


def test_a_config_file_may_set_the_quantization_or_revision():
    # vLLM inserts the file's options: vllm/utils/__init__.py 0.10.1.1 lines 1953-1980.
    assert where(pod(NEW, [f"args: [{QWEN}, --quantization, awq, --config, /etc/vllm/config.yaml]"])) == []
    assert where(pod(NEW, [f"args: [{QWEN}, --config, /etc/vllm/c.yaml, --limit-mm-per-prompt, image=2]"])) == []
    assert where(pod(NEW, [f"args: [{QWEN}, --quantization, awq, --max-model-len, '4096']"])) == [(8, 54, E)]


def _on(accelerator, image, args):
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: vllm}\nspec:\n"
            f"  nodeSelector: {{cloud.google.com/gke-accelerator: {accelerator}}}\n  containers:\n  - name: vllm\n"
            f"    image: {image}\n    args: {args}\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n")


@pytest.mark.parametrize("accelerator, image, online", [
    ("nvidia-tesla-t4", "vllm/vllm-openai:v0.10.1", "(`bitsandbytes`)"),  # fp8 needs 8.0 up to 0.12 (fp8.py 109)
    ("nvidia-l4", "vllm/vllm-openai:v0.10.1", "(`fp8`, `bitsandbytes`)"),
    ("nvidia-tesla-t4", NEW, "(`fp8`)"),  # fp8 7.5 from 0.14.1; bitsandbytes is gone from 0.28.0
])
def test_online_methods_are_only_those_the_gpu_and_release_run(accelerator, image, online):
    text = _on(accelerator, image, f"[--model, {QWEN}, --quantization, awq_marlin]")
    (finding,) = findings(text)
    assert (finding.span.line, finding.span.col, finding.severity) == (9, 63, E)
    assert f"use a method that quantizes while loading {online}." in finding.message


def test_no_online_method_fits_the_gpu():
    text = _on("nvidia-tesla-v100", NEW, f"[--model, {QWEN}, --quantization, awq]")
    (finding,) = findings(text)
    assert (finding.span.line, finding.span.col, finding.severity) == (9, 63, E)
    assert "quantizes while loading" not in finding.message and "fp8" not in finding.message
