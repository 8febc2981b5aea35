"""VL804 unsafe-server-option: catches / does not catch, with the position, severity and token of every finding."""
import json
from pathlib import Path

import jsonschema
import pytest

from vllmlint.data import knowledge_dir, load_yaml_data, schemas_dir
from vllmlint.engine import LintOptions, lint_text
from vllmlint.finding import Severity
from vllmlint.vllm import catalog
from vllmlint.vllm.unsafe import entries

ROOT = Path(__file__).resolve().parent.parent
W, INFO = Severity.WARNING, Severity.INFO


def lint(text, filename="example.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL804"]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [f for f in result.findings if f.code == "VL804"]


def pod(env="[]", args="[Qwen/Qwen3-8B]", image="vllm/vllm-openai:v0.29.0"):
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: {image}
    args: {args}
    env: {env}
"""


def found(text):
    """(line, col, severity, the text the finding points at, value) of every finding."""
    lines = text.split("\n")
    result = []
    for f in lint(text):
        line = lines[f.span.line - 1]
        end = f.span.end_col - 1 if f.span.end_line == f.span.line else len(line)
        result.append((f.span.line, f.span.col, f.severity, line[f.span.col - 1:end], f.value))
    return result


# --- catches: variables --------------------------------------------------------------------------------
@pytest.mark.parametrize("env, args, image, expected", [
    # runtime LoRA loading with --enable-lora, no key: warning at the value
    ('[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: "True"}]', "[m, --enable-lora]", "vllm/vllm-openai:v0.29.0",
     (9, 59, W, '"True"', "runtime-lora-updating:VLLM_ALLOW_RUNTIME_LORA_UPDATING")),
    ('[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: " 1 "}]', "[--model, m, --enable-lora]",
     "vllm/vllm-openai:v0.6.2", (9, 59, W, '" 1 "', "runtime-lora-updating:VLLM_ALLOW_RUNTIME_LORA_UPDATING")),
    # the same with an API key: info
    ('[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: "1"}]', "[m, --enable-lora, --api-key, $(KEY)]",
     "vllm/vllm-openai:v0.29.0", (9, 59, INFO, '"1"', "runtime-lora-updating:VLLM_ALLOW_RUNTIME_LORA_UPDATING")),
    ('[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: "1"}, {name: VLLM_API_KEY, valueFrom: {secretKeyRef: '
     '{name: k, key: k}}}]', "[m, --enable-lora]", "vllm/vllm-openai:v0.29.0",
     (9, 59, INFO, '"1"', "runtime-lora-updating:VLLM_ALLOW_RUNTIME_LORA_UPDATING")),
    # dev mode: always a warning, --api-key does not cover the dev endpoints
    ('[{name: VLLM_SERVER_DEV_MODE, value: "1"}]', "[m, --api-key, k]", "vllm/vllm-openai:v0.29.0",
     (9, 47, W, '"1"', "server-dev-mode:VLLM_SERVER_DEV_MODE")),
    ('[{name: VLLM_SERVER_DEV_MODE, value: "2"}]', "[--model, m]", "vllm/vllm-openai:v0.7.3",
     (9, 47, W, '"2"', "server-dev-mode:VLLM_SERVER_DEV_MODE")),
    # info
    ('[{name: VLLM_ALLOW_INSECURE_SERIALIZATION, value: "1"}]', "[m]", "vllm/vllm-openai:v0.29.0",
     (9, 60, INFO, '"1"', "insecure-serialization:VLLM_ALLOW_INSECURE_SERIALIZATION")),
    ('[{name: PYTHONHTTPSVERIFY, value: "0"}]', "[m]", "vllm/vllm-openai:v0.29.0",
     (9, 44, INFO, '"0"', "python-https-verify:PYTHONHTTPSVERIFY")),
])
def test_catches_variables(env, args, image, expected):
    assert found(pod(env, args, image)) == [expected]


# --- catches: flags ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, image, expected", [
    ("[m, --allowed-local-media-path, /]", "vllm/vllm-openai:v0.29.0",
     (8, 15, W, "--allowed-local-media-path", "broad-local-media-path:0.29.0")),
    ("[m, --allowed-local-media-path=/etc/]", "vllm/vllm-openai:v0.29.0",
     (8, 15, W, "--allowed-local-media-path=/etc/", "broad-local-media-path:0.29.0")),
    ("[--model, m, --allowed-local-media-path, //root]", "vllm/vllm-openai:v0.6.4.post1",
     (8, 24, W, "--allowed-local-media-path", "broad-local-media-path:0.6.4.post1")),
    ("[m, --trust-request-mm-kwargs]", "vllm/vllm-openai:v0.31.0",
     (8, 15, W, "--trust-request-mm-kwargs", "trust-request-mm-kwargs:0.31.0")),
    ("[m, --trust-request-mm-kwargs, --api-key, k]", "vllm/vllm-openai:v0.33.0",
     (8, 15, INFO, "--trust-request-mm-kwargs", "trust-request-mm-kwargs:0.33.0")),
    ("[--model, m, --enable-log-requests]", "vllm/vllm-openai:v0.10.1.1",
     (8, 24, INFO, "--enable-log-requests", "log-requests:0.10.1.1")),
    ("[m, --enable-log-requests, --enable-log-outputs]", "vllm/vllm-openai:v0.29.0",
     (8, 38, INFO, "--enable-log-outputs", "log-outputs:0.29.0")),
])
def test_catches_flags(args, image, expected):
    assert found(pod("[]", args, image)) == [expected]


def test_log_requests_from_0_11_1_only_with_debug_logging():
    text = pod('[{name: VLLM_LOGGING_LEVEL, value: debug}]', "[m, --enable-log-requests]")
    assert found(text) == [(8, 15, INFO, "--enable-log-requests", "log-requests:0.29.0")]
    assert "at DEBUG" in lint(text)[0].message
    assert found(pod('[{name: VLLM_LOGGING_LEVEL, value: INFO}]', "[m, --enable-log-requests]")) == []


def test_shell_string_flag():
    text = pod("[]", "['vllm serve m --allowed-local-media-path /home --port 8000']").replace(
        "    args:", "    command: [/bin/sh, -c]\n    args:")
    assert found(text) == [(9, 26, W, "--allowed-local-media-path", "broad-local-media-path:0.29.0")]


def test_from_a_config_map_points_at_the_env_entry():
    text = """apiVersion: v1
kind: ConfigMap
metadata: {name: vllm-env}
data:
  VLLM_SERVER_DEV_MODE: "1"
---
""" + pod("[{name: X, valueFrom: {configMapKeyRef: {name: vllm-env, key: VLLM_SERVER_DEV_MODE}}}]").replace(
        "name: X", "name: VLLM_SERVER_DEV_MODE")
    ((line, col, severity, _, value),) = found(text)
    assert (line, col, severity, value) == (15, 11, W, "server-dev-mode:VLLM_SERVER_DEV_MODE")
    assert "It comes from ConfigMap vllm-env, key VLLM_SERVER_DEV_MODE." in lint(text)[0].message


def test_compose_environment():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.29.0
    command: [Qwen/Qwen3-8B]
    environment:
      VLLM_SERVER_DEV_MODE: "1"
"""
    assert [(f.span.line, f.span.col, f.severity) for f in lint(text, "compose.yaml")] == [(6, 29, W)]


def test_messages_say_what_and_what_instead():
    (dev,) = lint(pod('[{name: VLLM_SERVER_DEV_MODE, value: "1"}]'))
    assert dev.message.startswith("`VLLM_SERVER_DEV_MODE=1` on vLLM 0.29.0 adds development endpoints")
    assert "POST /collective_rpc" in dev.message and "Remove it" in dev.message
    (old,) = lint(pod('[{name: VLLM_SERVER_DEV_MODE, value: "1"}]', "[--model, m]", "vllm/vllm-openai:v0.7.0"))
    assert ": POST /reset_prefix_cache." in old.message and "/sleep" not in old.message
    (lora,) = lint(pod('[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: "1"}]', "[m, --enable-lora]"))
    assert "no `--api-key`" in lora.message and "--lora-modules" in lora.message
    assert lora.message.startswith("`VLLM_ALLOW_RUNTIME_LORA_UPDATING=1` on vLLM 0.29.0 lets any caller load and "
                                   "unload LoRA adapters: it adds POST /v1/load_lora_adapter and ")
    # an unknown release: the one assumed is named after the problem, not in the first line (issue 13)
    (unpinned,) = lint(pod('[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: "1"}]', "[m, --enable-lora]",
                           "vllm/vllm-openai:latest"))
    from vllmlint.vllm.catalog import newest
    assert unpinned.message.startswith(f"`VLLM_ALLOW_RUNTIME_LORA_UPDATING=1` on vLLM {newest()} lets any caller ")
    assert f". The release is unknown: {newest()} is assumed. Register the adapters" in unpinned.message
    (media,) = lint(pod("[]", "[m, --allowed-local-media-path, /]"))
    assert "file:///dev/zero" in media.message and "dedicated volume" in media.message


# --- does not catch ------------------------------------------------------------------------------------
@pytest.mark.parametrize("env, args, image", [
    # switched off, or a value vLLM reads as off
    ('[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: "0"}]', "[m, --enable-lora]", "vllm/vllm-openai:v0.29.0"),
    ('[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: "yes"}]', "[m, --enable-lora]", "vllm/vllm-openai:v0.29.0"),
    ('[{name: VLLM_SERVER_DEV_MODE, value: "0"}]', "[m]", "vllm/vllm-openai:v0.29.0"),
    ('[{name: VLLM_SERVER_DEV_MODE, value: "true"}]', "[m]", "vllm/vllm-openai:v0.29.0"),  # int() fails: VL109
    ('[{name: PYTHONHTTPSVERIFY, value: "1"}]', "[m]", "vllm/vllm-openai:v0.29.0"),
    # runtime LoRA loading without --enable-lora: the engine refuses every load
    ('[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: "1"}]', "[m]", "vllm/vllm-openai:v0.29.0"),
    # ... or with a --config file that may enable it
    ('[{name: VLLM_ALLOW_RUNTIME_LORA_UPDATING, value: "1"}]', "[m, --config, /etc/vllm.yaml]",
     "vllm/vllm-openai:v0.29.0"),
    # a release that does not read the variable
    ('[{name: VLLM_SERVER_DEV_MODE, value: "1"}]', "[--model, m]", "vllm/vllm-openai:v0.6.6.post1"),
    ('[{name: VLLM_ALLOW_INSECURE_SERIALIZATION, value: "1"}]', "[--model, m]", "vllm/vllm-openai:v0.8.5.post1"),
    # a value from a Secret is not known
    ('[{name: VLLM_SERVER_DEV_MODE, valueFrom: {secretKeyRef: {name: s, key: k}}}]', "[m]",
     "vllm/vllm-openai:v0.29.0"),
    # narrow or dedicated media directories, the hub cache
    ("[]", "[m, --allowed-local-media-path, /data/images]", "vllm/vllm-openai:v0.29.0"),
    ("[]", "[m, --allowed-local-media-path, /root/.cache/huggingface]", "vllm/vllm-openai:v0.29.0"),
    ("[]", "[m, --allowed-local-media-path, /mnt/media]", "vllm/vllm-openai:v0.29.0"),
    ("[]", "[m, --allowed-local-media-path, $(MEDIA)]", "vllm/vllm-openai:v0.29.0"),
    # per-request mm kwargs on a model the catalog knows is text-only
    ("[]", "[Qwen/Qwen2.5-7B-Instruct, --trust-request-mm-kwargs]", "vllm/vllm-openai:v0.31.0"),
    # request logging from 0.11.1 writes no prompt at INFO; --disable-log-requests; the old default
    ("[]", "[m, --enable-log-requests]", "vllm/vllm-openai:v0.29.0"),
    ("[]", "[--model, m, --disable-log-requests]", "vllm/vllm-openai:v0.9.2"),
    ("[]", "[--model, m]", "vllm/vllm-openai:v0.9.2"),
    # a flag the release does not have (VL105's finding)
    ("[]", "[m, --trust-request-mm-kwargs]", "vllm/vllm-openai:v0.29.0"),
])
def test_does_not_catch(env, args, image):
    assert found(pod(env, args, image)) == []


def test_not_the_openai_server():
    text = pod('[{name: VLLM_SERVER_DEV_MODE, value: "1"}]', "[python3, -m, vllm.entrypoints.api_server, --model, m]")
    assert found(text.replace("    args:", "    command:")) == []


def test_not_a_vllm_container():
    text = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: web
    image: nginx:1.27
    env: [{name: VLLM_SERVER_DEV_MODE, value: "1"}, {name: PYTHONHTTPSVERIFY, value: "0"}]
"""
    assert found(text) == []


# --- the data ---------------------------------------------------------------------------------------------
def test_data_matches_its_schema():
    data = load_yaml_data(knowledge_dir() / "unsafe-options.yaml")
    schema = json.loads((schemas_dir() / "unsafe-options.schema.json").read_text())
    jsonschema.validate(data, schema)


def test_every_vllm_name_is_in_the_catalog_from_its_first_release():
    """Every catalogued release from an entry's `from` on reads its variable or has its flag, as the wheels'
    catalogs say; the catalogued release just before it does not (where `from` is not the oldest read)."""
    for entry in entries():
        if entry.first is None:
            continue
        before = [r for r in catalog.releases() if catalog.compare_versions(r, entry.first) < 0]
        for release in catalog.releases():
            spec = catalog.load(release)
            has = entry.env in spec.env if entry.env else entry.flag[2:] in spec.options
            if catalog.compare_versions(release, entry.first) >= 0:
                assert has, (entry.id, release)
        if before and entry.id not in ("runtime-lora-updating", "python-https-verify"):
            spec = catalog.load(before[-1])
            assert not (entry.env in spec.env if entry.env else entry.flag[2:] in spec.options), (entry.id, before[-1])


# --- a multimodal model without --allowed-media-domains ----------------------------------------------------
# No model of the catalog has a non-text `modalities` fact yet, so these tests give a catalogued repository
# one (the check reads the fact through `repository_fact`, as VL716 does).
@pytest.fixture
def qwen_takes_images(monkeypatch):
    from vllmlint.capacity.specs import ModelFact
    from vllmlint.checks import vl804_unsafe_server_option as vl804

    real = vl804.repository_fact

    def fake(model, name, attribute):
        if attribute == "modalities" and name == "Qwen/Qwen2.5-7B-Instruct":
            return ModelFact(("text", "image"), "test")
        return real(model, name, attribute)

    monkeypatch.setattr(vl804, "repository_fact", fake)


@pytest.mark.parametrize("args, image, expected", [
    ("[Qwen/Qwen2.5-7B-Instruct]", "vllm/vllm-openai:v0.29.0",
     [(8, 12, INFO, "Qwen/Qwen2.5-7B-Instruct", "media-domains-unrestricted:Qwen/Qwen2.5-7B-Instruct")]),
    ("[--model, Qwen/Qwen2.5-7B-Instruct]", "vllm/vllm-openai:v0.11.0",
     [(8, 21, INFO, "Qwen/Qwen2.5-7B-Instruct", "media-domains-unrestricted:Qwen/Qwen2.5-7B-Instruct")]),
    # given (any value), a --config file, a release without the flag, a text-only model
    ("[Qwen/Qwen2.5-7B-Instruct, --allowed-media-domains, upload.example.com]", "vllm/vllm-openai:v0.29.0", []),
    ("[Qwen/Qwen2.5-7B-Instruct, --config, /etc/vllm/config.yaml]", "vllm/vllm-openai:v0.29.0", []),
    ("[--model, Qwen/Qwen2.5-7B-Instruct]", "vllm/vllm-openai:v0.10.1.1", []),
    ("[Qwen/Qwen2.5-3B-Instruct]", "vllm/vllm-openai:v0.29.0", []),
    ("[/models/qwen2.5-7b-instruct]", "vllm/vllm-openai:v0.29.0", []),
])
def test_multimodal_without_allowed_media_domains(qwen_takes_images, args, image, expected):
    assert found(pod("[]", args, image)) == expected


def test_multimodal_message(qwen_takes_images):
    (finding,) = lint(pod("[]", "[Qwen/Qwen2.5-7B-Instruct]"))
    assert finding.message.startswith("Qwen/Qwen2.5-7B-Instruct takes image input and `--allowed-media-domains` "
                                      "is not set: on vLLM 0.29.0, every request may name")


def test_multimodal_message_first_line_leaves_an_assumed_release_out(qwen_takes_images):
    from vllmlint.formatters.report import split_message

    (finding,) = lint(pod("[]", "[Qwen/Qwen2.5-7B-Instruct]", "vllm/vllm-openai:latest"))
    head, rest = split_message(finding.message)
    assert head == "Qwen/Qwen2.5-7B-Instruct takes image input and `--allowed-media-domains` is not set"
    assert "(assumed: the release is unknown)" in rest
    assert "SSRF" in finding.message and "NetworkPolicy" in finding.message


def test_script_and_markdown_command_lines():
    script = "#!/bin/sh\nexec vllm serve Qwen/Qwen3-8B --allowed-local-media-path / --port 8000\n"
    assert [(f.span.line, f.span.col, f.severity) for f in lint(script, "serve.sh")] == [(2, 31, W)]
    markdown = "# Run\n\n```bash\nvllm serve Qwen/Qwen3-8B --enable-log-outputs --enable-log-requests\n```\n"
    assert [(f.span.line, f.span.col, f.severity) for f in lint(markdown, "README.md")] == [(4, 26, INFO)]


# --- variables exported by a script before the server starts ------------------------------------------------
def test_markdown_export_before_vllm_serve():
    # vLLM's LoRA guide's shape: export the variable in one block, start the server in the next.
    markdown = ("# Dynamic LoRA\n\n```bash\nexport VLLM_ALLOW_RUNTIME_LORA_UPDATING=True\n```\n\n```bash\n"
                "vllm serve meta-llama/Llama-3.1-8B-Instruct --enable-lora\n```\n")
    # Markdown documents a command rather than deploys it: info (vLLM's own LoRA pages do exactly this).
    findings = lint(markdown, "README.md")
    assert [(f.span.line, f.span.col, f.severity, f.value) for f in findings] == [
        (4, 8, INFO, "runtime-lora-updating:VLLM_ALLOW_RUNTIME_LORA_UPDATING")]
    assert "The script exports it." in findings[0].message
    markdown = "```bash\nvllm serve Qwen/Qwen3-8B --allowed-local-media-path /\n```\n"
    assert [(f.span.line, f.span.col, f.severity) for f in lint(markdown, "docs/run.md")] == [(2, 26, INFO)]
    manifest = "```yaml\n" + pod('[{name: VLLM_SERVER_DEV_MODE, value: "1"}]') + "```\n"
    assert [(f.span.line, f.span.col, f.severity) for f in lint(manifest, "RUNBOOK.markdown")] == [(10, 47, INFO)]


@pytest.mark.parametrize("script, expected", [
    ("#!/bin/sh\nexport VLLM_SERVER_DEV_MODE=1\nexec vllm serve m\n", [(2, 8, W)]),
    ("#!/bin/sh\nexport VLLM_ALLOW_RUNTIME_LORA_UPDATING=1 VLLM_API_KEY=abc\nvllm serve m --enable-lora\n", [(2, 8, INFO)]),
    # after the server, dynamic, off: nothing
    ("#!/bin/sh\nvllm serve m &\nexport VLLM_SERVER_DEV_MODE=1\n", []),
    ("#!/bin/sh\nexport VLLM_SERVER_DEV_MODE=$DEV\nvllm serve m\n", []),
    ("#!/bin/sh\nexport VLLM_SERVER_DEV_MODE=0\nvllm serve m\n", []),
])
def test_script_exports(script, expected):
    assert [(f.span.line, f.span.col, f.severity) for f in lint(script, "serve.sh")] == expected


def test_export_in_a_container_shell_string():
    text = pod("[]", "['export VLLM_SERVER_DEV_MODE=1 && vllm serve m --port 8000']").replace(
        "    args:", "    command: [/bin/bash, -c]\n    args:")
    assert found(text) == [(9, 20, W, "VLLM_SERVER_DEV_MODE=1", "server-dev-mode:VLLM_SERVER_DEV_MODE")]


# --- a model the catalog does not know, whose own --limit-mm-per-prompt admits media ---------------------
def test_a_media_limit_shows_the_model_takes_media():
    args = '[Qwen/Qwen2.5-VL-7B-Instruct, --limit-mm-per-prompt, \'{"image": 2, "video": 0}\']'
    text = pod(args=args)
    assert found(text) == [(8, 12, Severity.INFO, "Qwen/Qwen2.5-VL-7B-Instruct", "media-domains-unrestricted:Qwen/Qwen2.5-VL-7B-Instruct")]
    (finding,) = lint(text)
    assert "takes image input" in finding.message and "video" not in finding.message.split("input")[0]
    old_form = pod(args="[--model, llava-hf/llava-1.5-7b-hf, --limit-mm-per-prompt, 'image=1']")
    assert [f[2:4] for f in found(old_form)] == [(Severity.INFO, "llava-hf/llava-1.5-7b-hf")]


def test_a_media_limit_near_misses_stay_silent():
    # the domains are restricted; all limits zero (media turned off); a text-only model of the catalog (VL716's
    # case); a release without --allowed-media-domains (0.10.1.1)
    given = '[m, --limit-mm-per-prompt, \'{"image": 2}\', --allowed-media-domains, upload.example.com]'
    assert found(pod(args=given)) == []
    assert found(pod(args='[m, --limit-mm-per-prompt, \'{"image": 0, "video": 0}\']')) == []
    assert found(pod(args='[Qwen/Qwen2.5-7B-Instruct, --limit-mm-per-prompt, \'{"image": 2}\']')) == []
    assert found(pod(args="[--model, m, --limit-mm-per-prompt, 'image=2']", image="vllm/vllm-openai:v0.10.1.1")) == []
