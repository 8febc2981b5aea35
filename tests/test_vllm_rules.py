"""The release-aware vLLM rules VL104-VL111 on cases beyond their documented examples: positions,
severities, messages, and the fixtures they must leave alone."""
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity

ROOT = Path(__file__).resolve().parent.parent
VL1 = ["VL104", "VL105", "VL106", "VL107", "VL108", "VL109", "VL110", "VL111", "VL112"]


def lint(text, codes, version=None, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=list(codes), vllm_version=version))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code in codes]


def at(text, finding):
    return text[finding.span.start:finding.span.end]


def deployment(image, args, extra=""):
    items = ", ".join(f'"{a}"' for a in args)
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm, namespace: bench}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: {image}
        args: [{items}]
{extra}"""


# --- the historical benchmark and the parser's spellings -------------------------------------------

def test_benchmark_fixture_passes_against_its_own_release():
    text = (ROOT / "fixtures" / "audited" / "benchmark-reproduce.yaml").read_text()
    findings = lint(text, VL1, filename="benchmark-reproduce.yaml")
    assert [f for f in findings if f.severity >= Severity.WARNING] == []


def test_audited_fixtures_have_no_vl1_findings_at_warning_or_above():
    for path in sorted((ROOT / "fixtures" / "audited").iterdir()):
        findings = lint(path.read_text(), VL1, filename=path.name)
        assert [f.message for f in findings if f.severity >= Severity.WARNING] == [], path.name


@pytest.mark.parametrize("version", ["0.6.4.post1", "0.29.0", "0.33.0"])
def test_abbreviations_and_underscores_are_not_reported(version):
    text = "vllm serve Qwen/Qwen3-8B --max-num-seq 8 --max_model_len 4096 --gpu_memory_utilization 0.8\n"
    assert lint(text, VL1, version, "serve.sh") == []


def test_kv_cache_memory_bytes_on_the_benchmark_release_is_too_new():
    text = deployment("vllm/vllm-openai:v0.6.4.post1", ["--model", "Qwen/Qwen2.5-7B-Instruct",
                                                       "--kv-cache-memory-bytes", "8000000000"])
    [finding] = lint(text, ["VL105"])
    assert at(text, finding) == '"--kv-cache-memory-bytes"'
    assert finding.severity == Severity.ERROR
    assert "0.6.4.post1" in finding.message and "image tag vllm/vllm-openai:v0.6.4.post1" in finding.message
    assert finding.message.startswith("`--kv-cache-memory-bytes` first appears in vLLM 0.10.2, newer than 0.6.4.post1. ")


def test_an_uncatalogued_patch_is_checked_against_its_minor_release():
    # 0.11.1 is not catalogued: 0.11.2 stands in (not 0.10.2, which lacks what 0.11 added).
    text = "vllm serve Qwen/Qwen3-8B --kv-offloading-size 8\n"
    assert lint(text, ["VL105"], "0.11.1", "serve.sh") == []
    assert len(lint(text, ["VL105"], "0.10.2", "serve.sh")) == 1


# --- VL104 ------------------------------------------------------------------------------------------

def test_deprecated_flag_quotes_vllm_and_names_the_removal():
    text = "vllm serve Qwen/Qwen3-8B --disable-log-requests\n"
    [finding] = lint(text, ["VL104"], "0.12.0", "serve.sh")
    assert at(text, finding) == "--disable-log-requests"
    assert finding.severity == Severity.WARNING
    assert "[DEPRECATED] Disable logging requests." in finding.message
    assert "removed in vLLM 0.17.0" in finding.message


def test_deprecated_flag_first_line_is_the_flag_and_the_release():
    from vllmlint.formatters.report import split_message

    text = 'FROM vllm/vllm-openai:v0.10.1\nCMD ["--model", "Qwen/Qwen3-8B", "--disable-log-requests"]\n'
    [finding] = lint(text, ["VL104"], None, "Dockerfile")
    assert (finding.span.line, finding.span.col) == (2, 34)
    head, rest = split_message(finding.message)
    assert head == "`--disable-log-requests` is deprecated in vLLM 0.10.1"
    assert rest.startswith("It is the release this image runs (image tag vllm/vllm-openai:v0.10.1) (checked against "
                           "0.10.2, the closest catalogued release after it). vLLM says:"), rest


def test_deprecated_flag_is_quiet_on_a_release_before_the_deprecation():
    assert lint("vllm serve Qwen/Qwen3-8B --disable-log-requests\n", ["VL104"], "0.9.2", "serve.sh") == []


# --- VL106 ------------------------------------------------------------------------------------------

def test_tokenizer_mode_slow_is_fine_on_0_29_and_a_warning_on_0_31():
    text = "vllm serve Qwen/Qwen3-8B --tokenizer-mode slow\n"
    assert lint(text, ["VL106"], "0.29.0", "serve.sh") == []
    [finding] = lint(text, ["VL106"], "0.31.0", "serve.sh")
    assert finding.severity == Severity.WARNING and at(text, finding) == "slow"


def test_dtype_float17_is_an_error_at_the_value():
    text = deployment("vllm/vllm-openai:v0.29.0", ["Qwen/Qwen3-8B", "--dtype", "float17"])
    [finding] = lint(text, ["VL106"])
    assert finding.severity == Severity.ERROR
    assert at(text, finding) == '"float17"'
    assert "float16" in finding.message  # the did-you-mean


def test_gpu_memory_utilization_above_one_is_an_error():
    text = "vllm serve Qwen/Qwen3-8B --gpu-memory-utilization=1.5\n"
    [finding] = lint(text, ["VL106"], "0.29.0", "serve.sh")
    assert finding.severity == Severity.ERROR and "<= 1" in finding.message
    assert at(text, finding) == "--gpu-memory-utilization=1.5"


def test_every_occurrence_of_a_repeated_flag_is_converted():
    text = "vllm serve Qwen/Qwen3-8B --max-num-seqs abc --max-num-seqs 8\n"
    [finding] = lint(text, ["VL106"], "0.29.0", "serve.sh")
    assert at(text, finding) == "abc"


def test_a_value_flag_followed_by_a_flag():
    text = "vllm serve Qwen/Qwen3-8B --max-model-len --port 8000\n"
    [finding] = lint(text, ["VL106"], "0.29.0", "serve.sh")
    assert at(text, finding) == "--max-model-len" and "expected one argument" in finding.message


def test_values_from_variables_and_none_are_skipped():
    text = "vllm serve Qwen/Qwen3-8B --gpu-memory-utilization $UTIL --max-model-len None --dtype ${DTYPE}\n"
    assert lint(text, ["VL106"], "0.29.0", "serve.sh") == []


def test_kubernetes_env_expansion_is_checked_when_resolved():
    text = deployment("vllm/vllm-openai:v0.29.0", ["Qwen/Qwen3-8B", "--tensor-parallel-size", "$(TP)"],
                      "        env:\n        - {name: TP, value: \"0\"}\n")
    [finding] = lint(text, ["VL106"])
    assert "--tensor-parallel-size" in finding.message


def test_dotted_json_key_is_checked():
    text = "vllm serve Qwen/Qwen3-8B --speculative-config.methd ngram\n"
    [finding] = lint(text, ["VL106"], "0.29.0", "serve.sh")
    assert "`method`" in finding.message


def test_old_store_boolean_takes_true_or_false():
    # 0.6.x declared --enable-chunked-prefill with nargs="?" and StoreBoolean: `=False` is right there.
    assert lint("vllm serve m --enable-chunked-prefill=False\n", ["VL106"], "0.6.4.post1", "serve.sh") == []
    [finding] = lint("vllm serve m --enable-chunked-prefill=yes\n", ["VL106"], "0.6.4.post1", "serve.sh")
    assert "Invalid boolean value" in finding.message
    assert lint("vllm serve m --enable-chunked-prefill --max-model-len 4096\n", ["VL106"], "0.6.4.post1",
                "serve.sh") == []
    [finding] = lint("vllm serve m --enable-chunked-prefill=False\n", ["VL106"], "0.8.5.post1", "serve.sh")
    assert "takes no value" in finding.message


def test_switch_value_on_an_old_release_without_no_form():
    text = "vllm serve Qwen/Qwen2.5-7B-Instruct --enforce-eager=true\n"
    [finding] = lint(text, ["VL106"], "0.6.4.post1", "serve.sh")
    assert "takes no value" in finding.message


# --- VL107 ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,code,severity", [("0.6.4.post1", "VL107", Severity.ERROR),
                                                   ("0.8.5.post1", "VL107", Severity.ERROR),
                                                   ("0.10.2", "VL107", Severity.ERROR),
                                                   ("0.11.2", "VL112", Severity.WARNING),
                                                   ("0.29.0", "VL112", Severity.WARNING)])
def test_model_option_with_vllm_serve_by_release(version, code, severity):
    # Where vLLM only warns, the deprecation is model-option-deprecated (VL112, split out by issue 13).
    text = "vllm serve --model Qwen/Qwen3-8B\n"
    [finding] = lint(text, ["VL107", "VL112"], version, "serve.sh")
    assert (finding.code, finding.severity) == (code, severity) and at(text, finding) == "--model"


def test_inline_model_option_passed_the_check_of_0_8_to_0_11():
    # 0.8.x - 0.11.0 only rejected a bare `--model` token: `--model=X` went through (a deprecation, VL112).
    text = "vllm serve --model=Qwen/Qwen3-8B\n"
    assert lint(text, ["VL107"], "0.10.2", "serve.sh") == []
    [finding] = lint(text, ["VL112"], "0.10.2", "serve.sh")
    assert finding.severity == Severity.WARNING


def test_serve_serve_on_an_entrypoint_image():
    text = deployment("vllm/vllm-openai:v0.29.0", ["serve", "Qwen/Qwen3-8B"])
    [finding] = lint(text, ["VL107"])
    assert at(text, finding) == '"serve"' and "vllm serve serve" in finding.message


def test_serve_args_on_an_old_image_are_not_serve_serve():
    # The 0.6.4.post1 image runs the api_server module; `serve` is its (ignored) positional, not VL107's.
    text = deployment("vllm/vllm-openai:v0.6.4.post1", ["--model", "Qwen/Qwen2.5-7B-Instruct"])
    assert lint(text, ["VL107"]) == []


def test_on_and_off_switch_conflict():
    text = "vllm serve Qwen/Qwen3-8B --enable-prefix-caching --no-enable-prefix-caching\n"
    [finding] = lint(text, ["VL107"], "0.29.0", "serve.sh")
    assert at(text, finding) == "--no-enable-prefix-caching"


# --- VL108 ------------------------------------------------------------------------------------------

def test_tool_choice_without_parser():
    text = "vllm serve Qwen/Qwen3-8B --enable-auto-tool-choice\n"
    [finding] = lint(text, ["VL108"], "0.29.0", "serve.sh")
    assert finding.severity == Severity.ERROR and "--tool-call-parser" in finding.message


def test_ray_backend_with_kuberay_in_the_world_is_fine():
    text = deployment("vllm/vllm-openai:v0.29.0", ["m", "-tp", "8", "-pp", "2",
                                                   "--distributed-executor-backend", "ray"],
                      "        resources: {limits: {nvidia.com/gpu: \"8\"}}\n") + \
        "---\napiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: ray}\nspec: {}\n"
    assert lint(text, ["VL108"]) == []


def test_ray_backend_beyond_the_pod_without_ray_is_reported():
    text = deployment("vllm/vllm-openai:v0.29.0", ["m", "-tp", "8", "-pp", "2",
                                                   "--distributed-executor-backend", "ray"],
                      "        resources: {limits: {nvidia.com/gpu: \"8\"}}\n")
    [finding] = lint(text, ["VL108"])
    assert at(text, finding) == '"ray"' and "16" in finding.message


# --- VL109 ------------------------------------------------------------------------------------------

def test_env_typo_points_at_the_name():
    text = deployment("vllm/vllm-openai:v0.29.0", ["Qwen/Qwen3-8B"],
                      "        env:\n        - {name: VLLM_LOGGING_LEVL, value: DEBUG}\n")
    [finding] = lint(text, ["VL109"])
    assert at(text, finding) == "VLLM_LOGGING_LEVL" and "VLLM_LOGGING_LEVEL" in finding.message
    assert finding.severity == Severity.WARNING


def test_env_stale_is_info_and_current_on_its_release():
    text = deployment("vllm/vllm-openai:v0.29.0", ["Qwen/Qwen3-8B"],
                      "        env:\n        - {name: VLLM_USE_V1, value: \"1\"}\n")
    [finding] = lint(text, ["VL109"])
    assert finding.severity == Severity.INFO
    old = text.replace("v0.29.0", "v0.8.5.post1").replace('["Qwen/Qwen3-8B"]', '["--model", "Qwen/Qwen3-8B"]')
    assert lint(old, ["VL109"]) == []


def test_env_bad_int():
    text = deployment("vllm/vllm-openai:v0.29.0", ["Qwen/Qwen3-8B"],
                      "        env:\n        - {name: VLLM_ENGINE_ITERATION_TIMEOUT_S, value: abc}\n")
    [finding] = lint(text, ["VL109"])
    assert "int()" in finding.message


# --- VL110 ------------------------------------------------------------------------------------------

def test_service_named_vllm_points_at_its_name():
    text = deployment("vllm/vllm-openai:v0.29.0", ["Qwen/Qwen3-8B"]) + \
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: vllm, namespace: bench}\nspec:\n  ports: [{port: 8000}]\n"
    [finding] = lint(text, ["VL110"])
    assert at(text, finding) == "vllm" and finding.span.line == 16
    assert "enableServiceLinks: false" in finding.message
    assert finding.message.startswith("A Service named `vllm` makes vLLM's pods in namespace bench refuse to start. "
                                      "It makes the kubelet set `VLLM_PORT=tcp://<cluster IP>:<port>` (and ")


def test_external_name_service_sets_no_port_variable():
    text = deployment("vllm/vllm-openai:v0.29.0", ["Qwen/Qwen3-8B"]) + \
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: vllm, namespace: bench}\n" \
        "spec: {type: ExternalName, externalName: vllm.example.com}\n"
    assert lint(text, ["VL110"]) == []


# --- VL111 ------------------------------------------------------------------------------------------

RULE = """apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: vllm}
spec:
  groups:
  - name: vllm
    rules:
    - alert: Full
      expr: |
        max(vllm:gpu_cache_usage_perc) > 0.9
        and rate(vllm:request_success_total[5m]) > 0
"""


def test_renamed_metric_points_inside_the_expression_and_names_the_replacement():
    [finding] = lint(RULE, ["VL111"], "0.29.0")
    assert at(RULE, finding) == "vllm:gpu_cache_usage_perc"
    assert "vllm:kv_cache_usage_perc" in finding.message and "0.11.2" in finding.message


def test_the_old_name_is_fine_next_to_a_workload_that_exports_it():
    text = RULE + "---\n" + deployment("vllm/vllm-openai:v0.8.5.post1", ["--model", "m"])
    assert lint(text, ["VL111"]) == []


def test_too_new_metric_for_the_workload():
    text = deployment("vllm/vllm-openai:v0.6.4.post1", ["--model", "m"]) + """---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: vllm, namespace: bench}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  maxReplicas: 3
  metrics:
  - type: Pods
    pods:
      metric: {name: "vllm:kv_cache_usage_perc"}
      target: {type: AverageValue, averageValue: "0.8"}
"""
    [finding] = lint(text, ["VL111"])
    assert "first appears in 0.9.2" in finding.message and at(text, finding) == "vllm:kv_cache_usage_perc"


def test_service_monitor_regex_names_are_checked_but_prefixes_accepted():
    text = """apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  endpoints:
  - port: http
    metricRelabelings:
    - sourceLabels: [__name__]
      regex: "vllm:gpu_cache_usage_perc|vllm:num_requests_.*|vllm:e2e_request_latency_seconds_bucket"
      action: keep
"""
    [finding] = lint(text, ["VL111"], "0.29.0")
    assert at(text, finding) == "vllm:gpu_cache_usage_perc"


def test_unknown_name_never_exported_is_only_a_warning():
    text = RULE.replace("vllm:gpu_cache_usage_perc", "vllm:requests_per_second_custom")
    [finding] = lint(text, ["VL111"], "0.29.0")
    assert finding.severity == Severity.WARNING


def test_plain_values_skip_jsonschema_but_doubtful_ones_reach_it():
    """The shortcut only ever says "valid" for what jsonschema would accept too."""
    import jsonschema

    from vllmlint.vllm import catalog
    from vllmlint.checks.vl106_invalid_flag_value import _plainly_valid

    schema = catalog.load("0.29.0").schema
    samples = {"max-model-len": [4096, -1, -2, "abc", 4096.5], "gpu-memory-utilization": [0.9, 1.5, 0, 1, "x"],
               "dtype": ["bfloat16", "float17", 3], "tensor-parallel-size": [8, 0, True], "port": [8000, "8000"]}
    for name, values in samples.items():
        prop = schema["properties"][name]
        for value in values:
            if _plainly_valid(prop, value):
                assert jsonschema.Draft202012Validator(prop).is_valid(value), (name, value)
    assert not _plainly_valid(schema["properties"]["gpu-memory-utilization"], 1.5)
    assert not _plainly_valid(schema["properties"]["dtype"], "float17")
