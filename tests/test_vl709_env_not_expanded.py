"""VL709 env-not-expanded: catches and near misses, with the line, column, level and exact text of every finding."""
from __future__ import annotations

import pytest

from vllmlint.checks.vl709_env_not_expanded import references
from vllmlint.engine import LintOptions, lint_paths, lint_text

CODE = "VL709"


def run(text: str, filename: str = "deploy.yaml") -> list[tuple[int, int, str, str]]:
    result = lint_text(text, filename, LintOptions(select=[CODE]))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.severity.label, text[f.span.start:f.span.end])
            for f in result.findings if f.code == CODE]


def messages(text: str, filename: str = "deploy.yaml") -> list[str]:
    return [f.message for f in lint_text(text, filename, LintOptions(select=[CODE])).findings if f.code == CODE]


def deployment(env: str = "", command: str = "[vllm, serve, Qwen/Qwen3-8B]", extra: str = "") -> str:
    """A vLLM Deployment: `command` on line 12, the env items from line 14 on (one per line)."""
    items = "".join(f"        - {item}\n" for item in env.split("\n") if item) if env else ""
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n"
            "  selector: {matchLabels: {app: vllm}}\n  template:\n    metadata: {labels: {app: vllm}}\n"
            "    spec:\n      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.10.0\n"
            f"        command: {command}\n        env:\n{items}{extra}")


# --- what Kubernetes leaves alone, scanned like the kubelet ---------------------------------------------
@pytest.mark.parametrize("text, found", [
    ("$HF_TOKEN", ["$HF_TOKEN"]),
    ("${LD_LIBRARY_PATH}:/usr/local/nvidia/lib64", ["${LD_LIBRARY_PATH}"]),
    ("/opt/lib:$LD_LIBRARY_PATH", ["$LD_LIBRARY_PATH"]),
    ("--model=${MODEL:-Qwen/Qwen3-8B}", ["${MODEL:-Qwen/Qwen3-8B}"]),
    ("${A}/${B}", ["${A}", "${B}"]),
    ("$http_proxy", ["$http_proxy"]),  # a whole value: a reference whatever its case
    ("$(MODEL_ID)", []),  # Kubernetes' own syntax
    ("$$HOME", []),  # the escape: `$HOME` on purpose
    ("$$(MODEL_ID)", []),
    ("$(echo ${X})", []),  # inside `$(...)`: Kubernetes reads it as one (unresolved) reference
    ("s3cr$T0KEN", []),  # a `$` inside a word: a literal such as a password
    ('{"$defs": {"x": 1}}', []),  # a lower-case name inside a longer value
    ("--model=$model", []),
    ("price 5$", []),
    ("$", []),
    ("${}", []),
    ("${1}", []),
    ("$1 $@", []),
    ("${UNCLOSED", []),
    ("${A:=x}/${B:?unset}/${C:+y}/${D#pre}", ["${A:=x}", "${B:?unset}", "${C:+y}", "${D#pre}"]),
    ("${env:HOME}", []),  # Log4j / OpenTelemetry collector lookups, resolved by the program
    ("${sys:user.home}", []),
    ("jdbc:postgresql://${DB_HOST:localhost}/db", []),  # Spring's `${VAR:default}`
])
def test_references(text, found):
    assert [r.written if not r.braced else text[r.start:r.end] for r in references(text)] == found


# --- catches --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env, expected", [
    ("{name: HF_TOKEN, value: $HF_TOKEN}", [(14, 35, "warning", "$HF_TOKEN")]),
    ('{name: HUGGING_FACE_HUB_TOKEN, value: "${HF_TOKEN}"}', [(14, 50, "warning", "${HF_TOKEN}")]),
    ('{name: OPENAI_APIKEY, value: "$FROM_CI"}', [(14, 41, "warning", "$FROM_CI")]),  # the variable set is one
    ('{name: DB_PASSWORD, value: "${DB_PASSWORD}"}', [(14, 39, "warning", "${DB_PASSWORD}")]),
    ('{name: LD_LIBRARY_PATH, value: "${LD_LIBRARY_PATH}:/usr/local/nvidia/lib64"}',
     [(14, 43, "info", "${LD_LIBRARY_PATH}")]),
    ('{name: PATH, value: "/opt/bin:$PATH"}', [(14, 41, "info", "$PATH")]),
    ('{name: MAX_TOKENS, value: "${MAX_TOKENS}"}', [(14, 38, "info", "${MAX_TOKENS}")]),  # not a credential
    ('{name: TOKENIZER_DIR, value: "$MODEL_DIR/tok"}', [(14, 41, "info", "$MODEL_DIR")]),
    ('{name: NO_PROXY, value: $http_proxy}', [(14, 35, "info", "$http_proxy")]),
    ('{name: MODEL_ID, value: Qwen/Qwen3-8B}\n{name: SERVED, value: "$MODEL_ID"}',
     [(15, 34, "warning", "$MODEL_ID")]),  # defined in the container: `$(MODEL_ID)` was meant
    ('{name: SERVED, value: "$MODEL_ID"}\n{name: MODEL_ID, value: Qwen/Qwen3-8B}',
     [(14, 34, "warning", "$MODEL_ID")]),
    ('{name: URL, value: "${SCHEME}://${HOST}:8000"}', [(14, 31, "info", "${SCHEME}"), (14, 43, "info", "${HOST}")]),
])
def test_env_values(env, expected):
    assert run(deployment(env)) == expected


def test_messages_say_what_to_write():
    [token] = messages(deployment("{name: HF_TOKEN, value: $HF_TOKEN}"))
    assert "literal text `$HF_TOKEN`" in token and "secretKeyRef" in token and "$(NAME)" in token
    [later] = messages(deployment('{name: SERVED, value: "$MODEL_ID"}\n{name: MODEL_ID, value: Qwen/Qwen3-8B}'))
    assert "Write `$(MODEL_ID)` and define `MODEL_ID` before `SERVED`" in later
    [own] = messages(deployment('{name: LD_LIBRARY_PATH, value: "${LD_LIBRARY_PATH}:/x"}'))
    assert "not the image's own `LD_LIBRARY_PATH`" in own and "complete value" in own


@pytest.mark.parametrize("command, env, expected", [
    ("[vllm, serve, $MODEL_ID]", "{name: MODEL_ID, value: Qwen/Qwen3-8B}", [(12, 32, "warning", "$MODEL_ID")]),
    ('[vllm, serve, "--model=${MODEL_ID}"]', "{name: MODEL_ID, value: Qwen/Qwen3-8B}",
     [(12, 41, "warning", "${MODEL_ID}")]),
    ("[vllm, serve, Qwen/Qwen3-8B, --api-key, $VLLM_API_KEY]", "", [(12, 58, "warning", "$VLLM_API_KEY")]),
    ("[vllm, serve, Qwen/Qwen3-8B, --served-model-name, $NAME]", "", [(12, 68, "info", "$NAME")]),
    ("[python3, -m, vllm.entrypoints.openai.api_server, --port, $PORT]", "{name: PORT, value: '8000'}",
     [(12, 76, "warning", "$PORT")]),
])
def test_exec_form_vllm_command(command, env, expected):
    assert run(deployment(env, command)) == expected


def test_args_after_the_image_entrypoint():
    text = deployment("{name: MODEL, value: Qwen/Qwen3-8B}", "[]").replace(
        "        command: []\n", "        args: [--model, $MODEL, --port, '8000']\n")
    assert run(text) == [(12, 25, "warning", "$MODEL")]
    assert "in args" in messages(text)[0]


def test_a_block_scalar_value_is_pinned_inside_the_block():
    text = deployment(extra="        - name: HF_TOKEN\n          value: |-\n            prefix-$HF_TOKEN\n")
    assert run(text) == [(16, 20, "warning", "$HF_TOKEN")]


def test_a_double_quoted_value_with_escapes_is_pinned_after_them():
    text = deployment('{name: PATH, value: "\\t/opt:$PATH"}')
    assert run(text) == [(14, 39, "info", "$PATH")]


def test_every_container_of_a_vllm_pod_sidecars_and_init_containers():
    text = deployment("{name: HF_TOKEN, value: $HF_TOKEN}", extra=(
        "      - name: sidecar\n        image: busybox\n        env:\n        - {name: API_KEY, value: $API_KEY}\n"
        "      initContainers:\n      - name: fetch\n        image: python:3.12\n        command: [python, f.py]\n"
        "        env:\n        - {name: HF_TOKEN, value: \"${HF_TOKEN}\"}\n"))
    assert run(text) == [(14, 35, "warning", "$HF_TOKEN"), (18, 34, "warning", "$API_KEY"),
                         (24, 36, "warning", "${HF_TOKEN}")]


LWS = """apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  leaderWorkerTemplate:
    size: 2
    leaderTemplate:
      spec:
        containers:
        - name: vllm-leader
          image: vllm/vllm-openai:v0.8.5
          command: [sh, -c, "bash multi-node-serving.sh leader; python3 -m vllm.entrypoints.openai.api_server --port 8080"]
          env:
          - {name: HF_TOKEN, value: $HF_TOKEN}
    workerTemplate:
      spec:
        containers:
        - name: vllm-worker
          image: vllm/vllm-openai:v0.8.5
          command: [sh, -c, "bash multi-node-serving.sh worker --ray_address=$(LWS_LEADER_ADDRESS)"]
          env:
          - {name: HF_TOKEN, value: $HF_TOKEN}
"""


def test_the_lws_example_leader_and_worker():
    # kubernetes-sigs/lws docs/examples/vllm/GPU/lws.yaml: its README applies the file as it is.
    assert run(LWS) == [(14, 37, "warning", "$HF_TOKEN"), (22, 37, "warning", "$HF_TOKEN")]


def test_flux_substitutes_braces_only():
    flux = ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps}\n"
            "spec:\n  path: ./apps\n  postBuild:\n    substitute: {HF_TOKEN: x}\n---\n")
    text = flux + deployment("{name: HF_TOKEN, value: $HF_TOKEN}\n{name: TOKEN2, value: \"${HF_TOKEN}\"}")
    assert run(text) == [(22, 35, "warning", "$HF_TOKEN")]  # `$var` is Flux's way to keep it literal
    disabled = text.replace("metadata: {name: vllm}", "metadata:\n  name: vllm\n  annotations:\n"
                            "    kustomize.toolkit.fluxcd.io/substitute: disabled")
    assert [f[2:] for f in run(disabled)] == [("warning", "$HF_TOKEN"), ("warning", "${HF_TOKEN}")]


def test_an_envsubst_script_in_another_folder_that_does_not_name_the_file(tmp_path):
    (tmp_path / "deploy").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "deploy" / "vllm.yaml").write_text(deployment("{name: HF_TOKEN, value: $HF_TOKEN}"))
    (tmp_path / "scripts" / "render.sh").write_text("#!/bin/sh\nenvsubst < other.yaml | kubectl apply -f -\n")
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=[CODE]))
    assert [(f.span.line, f.span.col) for f in result.findings if f.code == CODE] == [(14, 35)]


# --- near misses that stay silent ----------------------------------------------------------------------
@pytest.mark.parametrize("env", [
    '{name: SERVED, value: "$(MODEL_ID)"}',
    '{name: LITERAL, value: "$$HOME"}',
    '{name: ESCAPED, value: "$$(MODEL_ID)"}',
    '{name: DB_PASSWORD, value: "s3cr$T0KEN"}',  # a `$` inside a literal password
    '{name: HF_HOME, value: "$HOME/.cache/huggingface"}',  # huggingface_hub calls os.path.expandvars
    '{name: HF_TOKEN_PATH, value: "${HOME}/token"}',
    '{name: LD_LIBRARY_PATH, value: "$ORIGIN/../lib"}',  # ld.so's own token
    '{name: LD_PRELOAD, value: "${LIB}/libjemalloc.so"}',
    '{name: CONFIG, value: "{\\"$defs\\": {}}"}',
    "{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: hf, key: token}}}",
])
def test_env_values_that_are_fine(env):
    assert run(deployment(env)) == []


@pytest.mark.parametrize("command", [
    '[sh, -c, "exec vllm serve $MODEL_ID --api-key ${VLLM_API_KEY}"]',
    '[/bin/bash, -exc, "vllm serve ${MODEL_ID} --port ${PORT}"]',  # production-stack's decode pod
    '[sh, -c, "exec vllm serve \\"$@\\"", --, $MODEL_ID]',  # arguments after a shell script: the shell's
    "[/bin/sh]",
    "[vllm, serve, $(MODEL_ID)]",
])
def test_commands_that_are_fine(command):
    text = deployment("{name: MODEL_ID, value: Qwen/Qwen3-8B}", command)
    if command == "[/bin/sh]":
        text = text.replace("        env:\n", '        args: [-c, "vllm serve $MODEL_ID"]\n        env:\n')
    assert run(text) == []


def test_shell_scripts_that_reread_or_replace_the_variables():
    exported = deployment("{name: HF_TOKEN, value: $HF_TOKEN}",
                          '[sh, -c, "export HF_TOKEN=$(cat /secrets/token); exec vllm serve Qwen/Qwen3-8B"]')
    evaluated = deployment('{name: PRE, value: "cd $WORKDIR"}',
                           '[sh, -c, "eval \\"$PRE\\"; exec vllm serve Qwen/Qwen3-8B"]')
    nested = deployment('{name: PRE, value: "mkdir -p $CACHE_DIR"}',
                        '[sh, -c, "bash -c \\"$PRE\\"; exec vllm serve Qwen/Qwen3-8B"]')
    assert run(exported) == [] and run(evaluated) == [] and run(nested) == []
    # The same pods without the export or the eval: the values reach vLLM as written.
    assert len(run(exported.replace("export HF_TOKEN=$(cat /secrets/token); ", ""))) == 1
    assert len(run(evaluated.replace('eval \\"$PRE\\"; ', ""))) == 1
    assert len(run(nested.replace('bash -c \\"$PRE\\"; ', ""))) == 1


@pytest.mark.parametrize("filename", ["deploy.yaml.template", "lws.tpl.yaml", "vllm.tmpl.yml", "vllm.yaml.tftpl"])
def test_template_file_names(filename):
    assert run(deployment("{name: HF_TOKEN, value: $HF_TOKEN}"), filename) == []


@pytest.mark.parametrize("marker", [
    "apiVersion: v1\nkind: Secret\nmetadata: {name: hf}\ndata: {token: $HF_TOKEN_B64}\n---\n",
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: $NAMESPACE}\n---\n",
    "apiVersion: v1\nkind: Service\nmetadata: {name: vllm, labels: {env: $ENV}}\nspec: {ports: [{port: 80}]}\n---\n",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: x, image: $REGISTRY/x:1}]}\n---\n",
])
def test_a_file_that_cannot_be_applied_as_written_is_a_template(marker):
    assert run(marker + deployment("{name: HF_TOKEN, value: $HF_TOKEN}")) == []


def test_flux_postbuild_silences_braces():
    flux = ("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps}\n"
            "spec:\n  postBuild:\n    substituteFrom: [{kind: ConfigMap, name: vars}]\n---\n")
    assert run(flux + deployment('{name: HF_TOKEN, value: "${HF_TOKEN}"}')) == []


def test_envsubst_in_a_readme_of_the_same_folder(tmp_path):
    (tmp_path / "lws.yaml").write_text(LWS)
    (tmp_path / "README.md").write_text("# Deploy\n\n```bash\nexport HF_TOKEN=hf_xxx\n"
                                        "envsubst < lws.yaml | kubectl apply -f -\n```\n")
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=[CODE]))
    assert [f for f in result.findings if f.code == CODE] == []


def test_envsubst_script_elsewhere_naming_the_file(tmp_path):
    (tmp_path / "deploy").mkdir()
    (tmp_path / "scripts").mkdir()
    (tmp_path / "deploy" / "vllm.yaml").write_text(deployment("{name: HF_TOKEN, value: $HF_TOKEN}"))
    (tmp_path / "scripts" / "render.sh").write_text(
        "#!/bin/sh\ncat ../deploy/vllm.yaml | envsubst | kubectl apply -f -\n")
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=[CODE]))
    assert [f for f in result.findings if f.code == CODE] == []


def test_compose_interpolates_itself():
    text = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.10.0\n    command: --model ${MODEL:-Qwen/Qwen3-8B}\n"
            "    environment:\n      HF_TOKEN: ${HF_TOKEN}\n      LD_LIBRARY_PATH: $LD_LIBRARY_PATH:/x\n")
    assert run(text, "compose.yaml") == []


def test_a_pod_that_does_not_run_vllm():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: client}\nspec:\n  containers:\n  - name: bench\n"
            "    image: python:3.12\n    command: [python, bench.py, --token, $HF_TOKEN]\n"
            "    env:\n    - {name: HF_TOKEN, value: $HF_TOKEN}\n")
    assert run(text) == []


def test_sidecar_arguments_are_not_vllm_arguments():
    # `$` is jq's (or awk's, Perl's) own syntax in a program's arguments.
    text = deployment(extra=("      - name: metrics\n        image: ghcr.io/jqlang/jq\n"
                             "        command: [jq, -n, $ENV.PATH, --arg, X, $X]\n"
                             "        env: [{name: X, value: '1'}]\n"))
    assert run(text) == []


def test_the_scanner_is_linear_on_hostile_values():
    import time

    start = time.perf_counter()
    for text in ("$(" * 100_000, "${A:-" * 100_000, "${A}$(x)" * 50_000):
        references(text)
    assert time.perf_counter() - start < 5
