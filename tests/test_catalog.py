"""Landmark facts of the per-release vLLM CLI catalog (schemas/vllm/*.json), read offline."""
from __future__ import annotations

import json

import pytest

from vllmlint.vllm import catalog
from vllmlint.data import schemas_dir
from vllmlint.vllm.release import version_key

OLD, V10, V17, V18, CURRENT, LATEST_CHECKED, NEWEST = (
    "0.6.4.post1", "0.10.2", "0.17.1", "0.18.1", "0.29.0", "0.31.0", "0.33.0")


# ---------------------------------------------------------------- versions


def test_version_ordering():
    ordered = ["0.6.4", "0.6.4.post1", "0.6.6", "0.6.6.post1", "0.10.1", "0.10.1.1", "0.10.2", "0.29.0"]
    assert sorted(reversed(ordered), key=version_key) == ordered
    assert catalog.compare_versions("0.6.4.post1", "0.6.6") == -1
    assert catalog.compare_versions("0.10.1.1", "0.29.0") == -1
    assert catalog.compare_versions("0.29.0", "0.29") == 0
    assert catalog.compare_versions("0.31.0", "0.29.0") == 1
    assert catalog.compare_versions("v0.29.0", "0.29.0") == 0
    with pytest.raises(ValueError):
        version_key("latest")


def test_release_list():
    releases = catalog.releases()
    assert releases == sorted(releases, key=version_key)
    for version in (OLD, "0.6.6.post1", "0.8.5.post1", V10, V17, CURRENT, LATEST_CHECKED, NEWEST):
        assert version in releases
    assert catalog.newest() == NEWEST
    # every minor from 0.6 to 0.33 is there
    minors = {version_key(r)[:2] for r in releases}
    assert {(0, m) for m in range(6, 34)} <= minors


def test_nearest_release():
    assert catalog.nearest_release("0.29.0") == "0.29.0"
    assert catalog.nearest_release("0.29.5") == "0.29.0"
    assert catalog.nearest_release("0.6.5") == OLD
    assert catalog.nearest_release("0.5.0") is None
    assert catalog.nearest_release("1.0.0") == NEWEST


def test_unknown_release_raises_key_error():
    with pytest.raises(KeyError):
        catalog.load("0.0.1")
    with pytest.raises(KeyError):
        catalog.load(None)
    assert catalog.nearest_release(None) is None


def test_load_is_cached():
    assert catalog.load(CURRENT) is catalog.load(CURRENT)


# ---------------------------------------------------------------- landmark options


def accepts(version: str, spelling: str) -> bool:
    return catalog.load(version).option(spelling) is not None


def test_swap_space_removed_after_0_17():
    assert accepts(OLD, "--swap-space")
    assert accepts(V17, "--swap-space")
    assert not accepts(V18, "--swap-space")
    assert not accepts(CURRENT, "--swap-space")
    assert catalog.history("--swap-space")["last"] == V17


def test_speculative_model_replaced_by_speculative_config():
    assert accepts(OLD, "--speculative-model")
    assert not accepts(CURRENT, "--speculative-model")
    assert not accepts(OLD, "--speculative-config")
    assert catalog.history("--speculative-config")["first"] == "0.8.5.post1"
    spec = catalog.load(CURRENT).options["speculative-config"]
    assert spec.json and spec.type == "json"
    assert {"method", "model", "num_speculative_tokens"} <= set(spec.json_keys)
    assert "draft_model" in spec.json_key_values["method"]
    assert spec.flags == ("--speculative-config", "-sc")


def test_json_config_options():
    options = catalog.load(CURRENT).options
    for name in ("compilation-config", "kv-transfer-config", "hf-overrides", "speculative-config"):
        assert options[name].json, name
    assert not options["max-model-len"].json


def test_options_added_later():
    assert not accepts(OLD, "--kv-cache-memory-bytes")
    assert accepts(CURRENT, "--kv-cache-memory-bytes")
    for flag in ("--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless", "--api-server-count"):
        assert accepts(CURRENT, flag), flag
    assert not accepts(OLD, "--nnodes")


def test_serve_subparser_options_and_positional():
    release_catalog = catalog.load(CURRENT)
    assert release_catalog.options["model_tag"].positional
    assert release_catalog.option("--config") is not None
    assert release_catalog.option("-asc") is release_catalog.options["api-server-count"]
    # vllm.scripts added model_tag and --config in the old layout
    old = catalog.load(OLD)
    assert old.options["model_tag"].positional and old.option("--config") is not None


def test_boolean_optional_action_generates_no_forms():
    release_catalog = catalog.load(CURRENT)
    option = release_catalog.options["enable-prefix-caching"]
    assert "--no-enable-prefix-caching" in option.flags and not option.takes_value
    # store_true in the old release: no --no- form
    assert catalog.load(OLD).option("--no-enable-prefix-caching") is None
    assert not catalog.load(OLD).options["enable-prefix-caching"].takes_value


def test_disable_log_requests_history():
    assert accepts(OLD, "--disable-log-requests")
    assert not accepts(CURRENT, "--disable-log-requests")
    # 0.33 registers an EnableDisableAction: --enable-x also accepts --disable-x
    release_catalog = catalog.load(NEWEST)
    res = release_catalog.resolve("--disable-log-requests")
    assert res.kind == "alias" and res.option.name == "enable-log-requests"
    assert res.implied_value is False
    assert catalog.removed_between("--disable-log-requests", CURRENT).status == "removed"


def test_tokenizer_mode_known_values_not_enforced():
    current = catalog.load(CURRENT).options["tokenizer-mode"]
    assert not current.choices_enforced and current.choices is None
    assert "slow" in current.known_values
    assert "slow" not in catalog.load(LATEST_CHECKED).options["tokenizer-mode"].known_values
    old = catalog.load(OLD).options["tokenizer-mode"]
    assert old.choices_enforced and "slow" in old.choices


def test_enforced_choices_become_enum():
    prop = catalog.load(CURRENT).schema["properties"]["dtype"]
    assert "bfloat16" in prop["enum"]
    assert catalog.load(CURRENT).options["dtype"].choices_enforced


def test_types_and_defaults():
    options = catalog.load(CURRENT).options
    assert options["max-model-len"].type == "int"
    assert options["gpu-memory-utilization"].type == "float"
    assert options["port"].type == "int" and options["port"].default == 8000
    assert options["enforce-eager"].type == "bool" and not options["enforce-eager"].takes_value
    assert options["max-num-seqs"].takes_value


def test_default_gpu_memory_utilization():
    assert catalog.load(OLD).default_gpu_memory_utilization == 0.9
    assert catalog.load(CURRENT).default_gpu_memory_utilization == 0.92


def test_env_and_metrics():
    for version in (OLD, CURRENT):
        release_catalog = catalog.load(version)
        assert release_catalog.env["VLLM_PORT"]["type"] == "int"
        assert "vllm:num_requests_waiting" in release_catalog.metrics
    assert catalog.load(CURRENT).metrics["vllm:num_requests_waiting"] == "gauge"
    assert catalog.env_history("VLLM_PORT")["first"] == OLD
    assert catalog.metric_history("vllm:num_requests_waiting")["last"] == NEWEST


def test_deprecated_options_carry_vllm_text():
    option = catalog.load(OLD).options["use-v2-block-manager"]
    assert option.deprecated and "DEPRECATED" in option.deprecation
    assert catalog.history("--use-v2-block-manager")["deprecated_in"] == OLD


# ---------------------------------------------------------------- resolve()


def test_resolve_exact_and_value_split():
    res = catalog.load(CURRENT).resolve("--max-model-len=4096")
    assert res.kind == "exact" and res.option.name == "max-model-len" and res.value == "4096"


def test_resolve_underscores_fold_to_dashes():
    for version in (OLD, CURRENT):
        release_catalog = catalog.load(version)
        assert release_catalog.underscore_to_dash
        res = release_catalog.resolve("--max_model_len")
        assert res.option.name == "max-model-len" and res.normalized == "--max-model-len"


def test_resolve_unique_prefix():
    for version in (OLD, CURRENT):
        release_catalog = catalog.load(version)
        assert release_catalog.allow_abbrev
        res = release_catalog.resolve("--max-num-seq")
        assert res.kind == "prefix" and res.option.name == "max-num-seqs"
        assert res.candidates == ("--max-num-seqs",)


def test_resolve_ambiguous_and_unknown():
    release_catalog = catalog.load(CURRENT)
    res = release_catalog.resolve("--max")
    assert res.kind == "ambiguous" and "--max-model-len" in res.candidates and "--max-num-seqs" in res.candidates
    assert release_catalog.resolve("--swap-space").kind == "unknown"
    assert release_catalog.resolve("--definitely-not-a-flag").kind == "unknown"
    assert release_catalog.resolve("Qwen/Qwen3-8B").kind == "positional"
    assert release_catalog.resolve("-1").kind == "positional"      # a negative number is a value for argparse


def test_resolve_no_form_is_alias_with_implied_value():
    res = catalog.load(CURRENT).resolve("--no-enable-prefix-caching")
    assert res.kind == "alias" and res.option.name == "enable-prefix-caching" and res.implied_value is False


def test_resolve_dotted_json_keys():
    release_catalog = catalog.load(CURRENT)
    assert release_catalog.dotted_keys
    res = release_catalog.resolve("--compilation-config.mode=3")
    assert res.option.name == "compilation-config" and res.json_path == ("mode",) and res.value == "3"
    assert not catalog.load(OLD).dotted_keys
    assert catalog.load(OLD).resolve("--compilation-config.level").kind == "unknown"


def test_resolve_o_shorthand():
    current = catalog.load(CURRENT)
    res = current.resolve("-O3")
    assert res.option.name == "optimization-level" and res.value == "3"
    older = catalog.load(V10)
    res = older.resolve("-O3")
    assert res.option.name == "compilation-config" and res.value == "3"
    assert catalog.load(OLD).resolve("-O3").kind == "unknown"


def test_removed_between_distinguishes_removed_from_too_new():
    removed = catalog.removed_between("--swap-space", CURRENT)
    assert removed.status == "removed" and removed.last_release == V17
    too_new = catalog.removed_between("--kv-cache-memory-bytes", OLD)
    assert too_new.status == "too_new" and too_new.first_release == V10
    assert catalog.removed_between("--no-such-flag", CURRENT).status == "never"


# ---------------------------------------------------------------- the files themselves


def test_files_are_json_schemas_that_validate_invocations():
    jsonschema = pytest.importorskip("jsonschema")
    schema = catalog.load(CURRENT).schema
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors({"max-model-len": 4096, "dtype": "bfloat16"}))
    assert list(validator.iter_errors({"swap-space": 4}))          # removed option
    assert list(validator.iter_errors({"dtype": "bf16"}))          # not an enforced choice
    assert list(validator.iter_errors({"max-model-len": "4k"}))    # wrong type


def test_files_are_compact_and_sorted():
    folder = schemas_dir() / "vllm"
    for path in folder.glob("*.json"):
        text = path.read_text()
        assert json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n" == text


# ---------------------------------------------------------------- the static extractor on a tiny fake vLLM

FAKE_UTILS = '''
import argparse
from argparse import ArgumentParser, BooleanOptionalAction

class EnableDisableAction(BooleanOptionalAction):
    _inverse_prefixes = {"--enable-": "--disable-", "--disable-": "--enable-"}

class FlexibleArgumentParser(ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", BooleanOptionalAction, EnableDisableAction)

    def parse_args(self, args=None, namespace=None):
        processed = []
        for arg in args:
            if arg.startswith("--"):
                processed.append(arg.replace("_", "-"))
            elif arg.startswith("-O"):
                processed.append("--optimization-level")
        return super().parse_args(processed, namespace)
'''

FAKE_CONFIG = '''
from dataclasses import dataclass, field
from typing import Literal
from pydantic import Field

Mode = Literal["auto", "slow"]
Method = Literal["ngram", "eagle"]

@dataclass
class ModelConfig:
    tokenizer_mode: Mode | str = "auto"
    """How to tokenize."""
    dtype: Literal["auto", "half"] = "auto"
    """Data type."""
    max_model_len: int = Field(default=None, ge=-1)
    """Context length."""
    enforce_eager: bool = False
    """Eager mode."""

@dataclass
class SpeculativeConfig:
    method: Method | None = None
    """Method."""
    num_speculative_tokens: int = 0
    """Tokens."""

@dataclass
class VllmConfig:
    speculative_config: SpeculativeConfig | None = None
    """Speculative decoding configuration."""
'''

FAKE_ARG_UTILS = '''
import argparse
import json
from vllm.config import ModelConfig, VllmConfig
from vllm.utils.argparse_utils import FlexibleArgumentParser

def get_kwargs(cls):
    # emulated by the extractor; these two lines select the behaviour of newer releases
    kwarg = "metavar" if contains_type(type_hints, str) else "choices"
    dataclass_cls = next(th for th in type_hints if is_dataclass(th))
    return {}

def optional_type(return_type):
    def _optional_type(val):
        return return_type(val)
    return _optional_type

class EngineArgs:
    @staticmethod
    def add_cli_args(parser):
        model_kwargs = get_kwargs(ModelConfig)
        group = parser.add_argument_group(title="ModelConfig")
        for name in ("tokenizer_mode", "dtype", "max_model_len", "enforce_eager"):
            group.add_argument(f"--{name.replace('_', '-')}", **model_kwargs[name])
        vllm_kwargs = get_kwargs(VllmConfig)
        vllm_kwargs["speculative_config"]["type"] = optional_type(json.loads)
        parser.add_argument("--speculative-config", "-sc", **vllm_kwargs["speculative_config"])
        parser.add_argument("--swap-space", type=float, default=4, help="[DEPRECATED] Swap space. Ignored.")
        parser.add_argument("--enable-log-requests", action=argparse.BooleanOptionalAction, default=False)
        parser.add_argument("--optimization-level", type=int, default=2)
        return parser
'''

FAKE_SERVE = '''
from vllm.engine.arg_utils import EngineArgs

class ServeSubcommand:
    name = "serve"

    def subparser_init(self, subparsers):
        serve_parser = subparsers.add_parser("serve")
        serve_parser.add_argument("model_tag", type=str, nargs="?")
        serve_parser.add_argument("--headless", action="store_true")
        if unknown_condition():
            serve_parser.add_argument("--only-sometimes", type=int)
        return EngineArgs.add_cli_args(serve_parser)
'''


def fake_release():
    from vllmlint_dev import sync
    files = {
        "vllm/__init__.py": "",
        "vllm/config/__init__.py": FAKE_CONFIG,
        "vllm/utils/__init__.py": "",
        "vllm/utils/argparse_utils.py": FAKE_UTILS,
        "vllm/engine/__init__.py": "",
        "vllm/engine/arg_utils.py": FAKE_ARG_UTILS,
        "vllm/entrypoints/__init__.py": "",
        "vllm/entrypoints/cli/__init__.py": "",
        "vllm/entrypoints/cli/serve.py": FAKE_SERVE,
        "vllm/envs.py": 'import os\nenvironment_variables = {"VLLM_PORT": lambda: int(os.getenv("VLLM_PORT", "0"))}\n',
        "vllm/metrics.py": 'from prometheus_client import Gauge\nG = Gauge(name="vllm:num_requests_waiting", documentation="x")\n',
    }
    return sync.extract_release(files, "9.9.9")


def test_extractor_replays_dataclass_driven_parser():
    doc = fake_release()
    props = doc["properties"]
    meta = doc["x-vllm-release"]
    assert meta["underscore_to_dash"] and meta["o_shorthand"] and meta["o_target"] == "--optimization-level"
    assert meta["env"] == {"VLLM_PORT": {"type": "int"}}
    assert meta["metrics"] == {"vllm:num_requests_waiting": "gauge"}
    # Literal | str: argparse only shows the values (metavar), the model config checks them later
    assert props["tokenizer-mode"]["x-vllm"]["known_values"] == ["auto", "slow"]
    assert "enum" not in props["tokenizer-mode"]
    # plain Literal: enforced choices
    assert props["dtype"]["enum"] == ["auto", "half"]
    assert props["max-model-len"]["type"] == "integer" and props["max-model-len"]["minimum"] == -1
    assert props["enforce-eager"]["x-vllm"]["flags"] == ["--enforce-eager", "--no-enforce-eager"]
    spec = props["speculative-config"]["x-vllm"]
    assert spec["json"] and spec["flags"] == ["--speculative-config", "-sc"]
    assert spec["json_keys"] == ["method", "num_speculative_tokens"]
    assert spec["json_key_values"] == {"method": ["ngram", "eagle"]}
    assert props["swap-space"]["deprecated"] and "DEPRECATED" in props["swap-space"]["x-vllm"]["deprecation"]
    # EnableDisableAction registered for BooleanOptionalAction adds the --disable- spelling
    assert "--disable-log-requests" in props["enable-log-requests"]["x-vllm"]["flags"]
    # both sides of an unknown condition count; the positional is kept
    assert "only-sometimes" in props and props["model_tag"]["x-vllm"]["positional"]
    assert props["headless"]["x-vllm"]["takes_value"] is False


def test_resolve_short_option_with_attached_value():
    release_catalog = catalog.load(CURRENT)
    res = release_catalog.resolve("-qfp8")     # one-letter short option: argparse splits the value off
    assert res.kind == "alias" and res.option.name == "quantization" and res.value == "fp8"
    assert release_catalog.resolve("-tp").kind == "alias"
    assert release_catalog.resolve("-tp4").kind == "unknown"   # multi-letter short options cannot carry a value
    # -O in 0.6.6 is argparse's own short option of --compilation-config: -O3 is -O with value 3
    res = catalog.load("0.6.6.post1").resolve("-O3")
    assert res.option.name == "compilation-config" and res.value == "3"


def test_run_time_choices_are_known_values_not_an_enum():
    release_catalog = catalog.load(CURRENT)
    reasoning = release_catalog.options["reasoning-parser"]
    assert "qwen3" in reasoning.known_values and reasoning.known_values_source == "registry"
    assert "enum" not in release_catalog.schema["properties"]["reasoning-parser"]
    # choices=["auto", "cpu"] + [current_platform.device_type]: known head, machine-dependent tail
    device = release_catalog.options["mm-processor-device"]
    assert device.choices_unknown and set(device.known_values) == {"auto", "cpu"}
    assert "enum" not in release_catalog.schema["properties"]["mm-processor-device"]
    # 0.10.2 enforces choices from the reasoning-parser registry at parse time
    old = catalog.load(V10).options["reasoning-parser"]
    assert old.choices_enforced and old.choices_unknown and "deepseek_r1" in old.known_values


def test_facts_confirmed_by_the_real_parsers():
    """Behaviour seen when the real parsers were built (docs/catalog.md), pinned offline."""
    # 0.10.2: -O3 is rewritten to -O.level=3 (compilation_config.level == 3)
    res = catalog.load(V10).resolve("-O3")
    assert res.option.name == "compilation-config" and res.json_path == ("level",) and res.value == "3"
    # 0.10.2: QuantizationMethods is `Any` at run time, so argparse enforces nothing; the Literal is known
    quantization = catalog.load(V10).options["quantization"]
    assert not quantization.choices_enforced and "awq" in quantization.known_values
    # 0.6.4.post1: the same option enforces its 20 choices, "None" included
    old = catalog.load(OLD).options["quantization"]
    assert old.choices_enforced and len(old.choices) == 20 and "None" in old.choices
    # 0.10.2: --disable-log-requests still parses but is deprecated, with vLLM's warning text
    disable = catalog.load(V10).options["disable-log-requests"]
    assert disable.deprecated and "--enable-log-requests" in disable.deprecation
    # 0.33.0: hidden --no-enable-x spellings are still accepted
    assert catalog.load(NEWEST).option("--no-enable-log-requests") is not None
    row = catalog.history("--disable-log-requests")
    assert row["first"] == OLD and row["last"] == NEWEST and CURRENT in row["missing"]
    # collect-detailed-traces: list[Literal] plus the permutations vLLM appends
    traces = catalog.load(CURRENT).options["collect-detailed-traces"]
    assert traces.choices_enforced and "worker,model" in traces.choices and len(traces.choices) == 10


def test_landmark_boundaries():
    assert catalog.load("0.19.1").default_gpu_memory_utilization == 0.9
    assert catalog.load("0.20.2").default_gpu_memory_utilization == 0.92
    assert catalog.load("0.11.2").options["tokenizer-mode"].choices_enforced
    assert not catalog.load("0.12.0").options["tokenizer-mode"].choices_enforced
    assert not catalog.load("0.8.5.post1").dotted_keys and catalog.load("0.9.2").dotted_keys
    assert catalog.load("0.11.2").o_target == "-O" and catalog.load("0.12.0").o_target == "--optimization-level"
    for version in catalog.releases():
        release_catalog = catalog.load(version)
        assert release_catalog.allow_abbrev and release_catalog.underscore_to_dash, version
        assert release_catalog.env and release_catalog.metrics, version
        assert "max-model-len" in release_catalog.options and "model_tag" in release_catalog.options, version
