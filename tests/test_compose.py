"""Compose read the way Docker Compose reads it (vllmlint/source/compose.py): go-shellwords splitting of
`entrypoint`/`command` strings, interpolation with defaults and `.env`, `environment`/`env_file` feeding the env
rules, device reservations as the GPU count, published ports. Positions of every finding pinned."""
from pathlib import Path

import pytest

from conftest import FIXTURES
from vllmlint.engine import LintOptions, Linter, lint_paths, lint_text
from vllmlint.finding import Severity
from vllmlint.source.compose import interpolate, parse_dotenv, shell_words

E, W, INF = Severity.ERROR, Severity.WARNING, Severity.INFO


def found(text, select, filename="compose.yaml"):
    result = lint_text(text, filename, LintOptions(select=select))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(f.span.line, f.span.col, f.severity, f.code) for f in result.findings]


def found_files(tmp_path, files, select, given=None):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result, missing = lint_paths([str(tmp_path / name) for name in (given or files)], LintOptions(select=select))
    assert not missing and not result.internal_error
    return [(Path(f.path).name, f.span.line, f.span.col, f.severity, f.code) for f in result.findings]


# --- go-shellwords v1.0.12 Parse, as compose-go's ShellCommand calls it ------------------------------------
@pytest.mark.parametrize("line, words", [
    ("vllm serve m --port 8000", ["vllm", "serve", "m", "--port", "8000"]),
    ("a 'b c' \"d e\"", ["a", "b c", "d e"]),
    ('a "x\\"y" z\\ w', ["a", 'x"y', "z w"]),  # a backslash escapes inside double quotes too
    ("a 'x\\y'", ["a", "x\\y"]),  # but not inside single quotes
    ('a "" b', ["a", "", "b"]),  # an empty quoted word is a word
    ("a b; c d", ["a", "b"]),  # an unquoted ; ends the command line: the rest is dropped
    ("a && b", ["a"]),
    ("a 'x; y' | z", ["a", "x; y"]),
    ("a $(b c) d", ["a", "$(b c)", "d"]),  # no command substitution: the text stays
])
def test_shell_words(line, words):
    assert [w.text for w in shell_words(line)] == words


@pytest.mark.parametrize("line", ["a 'b", 'a "b', "a (b)", "a b\\"])
def test_shell_words_refused(line):
    assert shell_words(line) is None  # Compose refuses the file


def test_shell_word_spans_include_quotes():
    words = shell_words('bash -c "vllm serve m"')
    assert [(w.begin, w.end) for w in words] == [(0, 4), (5, 7), (8, 22)]
    assert words[2].chars[0] == 9  # the first character inside the quotes


# --- interpolation (compose-go template/template.go) ---------------------------------------------------------
ENV = {"TAG": ("v0.9.2", ".env"), "EMPTY": ("", ".env")}


@pytest.mark.parametrize("text, value, unresolved", [
    ("vllm/vllm-openai:${NOPE:-v0.8.5}", "vllm/vllm-openai:v0.8.5", False),
    ("vllm/vllm-openai:${NOPE-v0.8.5}", "vllm/vllm-openai:v0.8.5", False),
    ("x:${TAG:-v0.8.5}", "x:v0.9.2", False),  # .env first
    ("${EMPTY:-d}|${EMPTY-d}", "d|", False),  # `:-` also when empty, `-` only when unset
    ("${NOPE:-${TAG}}", "v0.9.2", False),  # nested
    ("$$HOME $$$$", "$HOME $$", False),
    ("${NOPE}", "${NOPE}", True),
    ("$NOPE", "$NOPE", True),
    ("${NOPE:?set it}", "${NOPE:?set it}", True),
    ("$TAG-x", "v0.9.2-x", False),
])
def test_interpolate(text, value, unresolved):
    done = interpolate(text, ENV)
    assert (done.text, done.unresolved) == (value, unresolved)


def test_interpolate_says_where_values_came_from():
    assert interpolate("a:${NOPE:-v1}", {}).note() == ", `${NOPE:-v1}` at its default"
    assert interpolate("a:${TAG:-v1}", ENV).note() == ", TAG from .env"
    assert interpolate("${bad name}", {}).invalid


def test_dotenv():
    text = '# comment\nexport TAG=v0.9.2 # trailing\nA="x\\ny ${TAG}"\nB=\'lit ${TAG}\'\nINHERITED\nC: 5\n'
    assert parse_dotenv(text) == {"TAG": "v0.9.2", "A": "x\ny v0.9.2", "B": "lit ${TAG}", "C": "5"}


# --- string entrypoint and command: the OPEA shape ------------------------------------------------------------
def test_opea_fixture_string_entrypoint_and_command():
    result, _ = lint_paths([str(FIXTURES / "own" / "compose-opea-vllm.yaml")],
                           LintOptions(select=["VL101", "VL102"]))
    assert [(f.span.line, f.span.col, f.severity, f.code) for f in result.findings] == [
        (17, 87, INF, "VL101"),  # inside the bash -c script of the string entrypoint
        (29, 44, E, "VL102"),  # --swap-space in the string command (0.18.0 from ${TAG:-v0.18.0})
        (29, 150, E, "VL102"),  # --num-scheduler-steps
    ]


ENTRYPOINT = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    entrypoint: {entry}
"""


def test_string_entrypoint_exec_form_words():
    text = ENTRYPOINT.format(entry="vllm serve Qwen/Qwen3-8B --num-scheduler-steps 4")
    assert found(text, ["VL102"]) == [(4, 42, E, "VL102")]


def test_string_entrypoint_quoted_script():
    text = ENTRYPOINT.format(entry="""sh -c 'exec vllm serve Qwen/Qwen3-8B --num-scheduler-steps 4'""")
    assert found(text, ["VL102"]) == [(4, 54, E, "VL102")]


def test_string_entrypoint_in_double_quoted_yaml():
    text = ENTRYPOINT.format(entry='''"bash -c \\"vllm serve m --num-scheduler-steps 4\\""''')
    assert found(text, ["VL102"]) == [(4, 41, E, "VL102")]


def test_string_command_stops_at_an_unquoted_semicolon():
    # Compose passes `vllm serve m` only: `--num-scheduler-steps` after `;` never reaches vLLM.
    text = ENTRYPOINT.format(entry="vllm serve m; --num-scheduler-steps 4")
    assert found(text, ["VL102"]) == []


def test_unbalanced_quote_is_no_invocation():
    text = ENTRYPOINT.format(entry="""vllm serve m --num-scheduler-steps '4""")
    assert found(text, ["VL102"]) == []


def test_dollar_dollar_is_a_literal_dollar_for_the_container_shell():
    text = ENTRYPOINT.format(entry="""bash -c 'vllm serve m --port $$PORT --num-scheduler-steps 4'""")
    assert found(text, ["VL102", "VL106"]) == [(4, 53, E, "VL102")]


def test_string_command_words_of_an_image_entrypoint_keep_their_fix():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.18.0
    command: --model m --swap-space 8
"""
    result = lint_text(text, "compose.yaml", LintOptions(select=["VL102"]))
    assert [(f.span.line, f.span.col, f.fix is not None) for f in result.findings] == [(4, 24, True)]


# --- interpolation of image, command, environment -------------------------------------------------------------
def test_image_default_pins_the_release_and_the_message_says_so():
    text = """services:
  vllm:
    image: vllm/vllm-openai:${VLLM_TAG:-v0.8.5}
    command: ["--model", "m", "--async-scheduling"]
"""
    result = lint_text(text, "compose.yaml", LintOptions(select=["VL105"]))
    assert [(f.span.line, f.span.col, f.code) for f in result.findings] == [(4, 31, "VL105")]
    assert "`${VLLM_TAG:-v0.8.5}` at its default" in result.findings[0].message


def test_image_without_value_is_unknown():
    text = """services:
  vllm:
    image: vllm/vllm-openai:${VLLM_TAG}
    command: ["--model", "m", "--async-scheduling"]
"""
    assert found(text, ["VL105"]) == []  # the release is unknown: the newest is assumed


def test_list_command_items_are_interpolated():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: ["--model", "m", "${OLD_FLAG:---num-scheduler-steps}", "4"]
"""
    assert found(text, ["VL102"]) == [(4, 31, E, "VL102")]


def test_dotenv_in_the_run_sets_the_release(tmp_path):
    compose = """services:
  vllm:
    image: vllm/vllm-openai:${VLLM_TAG:-v0.17.1}
    command: --model m --swap-space 8
"""
    files = {"compose.yaml": compose, ".env": "VLLM_TAG=v0.18.0\n"}
    assert found_files(tmp_path, files, ["VL102"]) == [("compose.yaml", 4, 24, E, "VL102")]
    assert found_files(tmp_path, files, ["VL102"], given=["compose.yaml"]) == []  # .env not in the run


def test_dotenv_is_not_read_as_yaml(tmp_path):
    files = {"compose.yaml": "services: {}\n", ".env": 'A="x: [y\n'}
    assert found_files(tmp_path, files, ["VL001"]) == []


def test_project_fixture_with_its_env_files():
    folder = FIXTURES / "own" / "compose-project"
    paths = [str(folder / name) for name in ("compose.yaml", ".env", "vllm.env")]
    result, _ = lint_paths(paths, LintOptions(select=["VL102", "VL109", "VL606"]))
    assert [(f.span.line, f.span.col, f.severity, f.code) for f in result.findings] == [
        (12, 15, W, "VL109"),  # from vllm.env, at the env_file entry
        (16, 81, E, "VL102"),  # --swap-space: .env says v0.18.0
        (25, 22, W, "VL606"),  # 4 GPUs reserved, TP 2
    ]
    alone, _ = lint_paths([str(folder / "compose.yaml")], LintOptions(select=["VL102", "VL109", "VL606"]))
    assert [(f.span.line, f.code) for f in alone.findings] == [(25, "VL606")]


# --- environment: map and list forms -------------------------------------------------------------------------
def test_environment_forms_feed_the_env_rules():
    text = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    environment:
      - VLLM_WORKER_MULTIPROC_METHODS=spawn
      - VLLM_LOGGING_LEVEL
    command: --model m
  other:
    image: vllm/vllm-openai:v0.10.1
    environment:
      VLLM_WORKER_MULTIPROC_METHODS: ${METHOD:-spawn}
    command: --model m
"""
    # Both at the name: the list entry, the map's key (as a Kubernetes `name:`), not the value.
    assert found(text, ["VL109"]) == [(5, 9, W, "VL109"), (11, 7, W, "VL109")]


def test_environment_values_are_interpolated():
    linter = Linter()
    linter.add_text("""services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    environment:
      A: ${A_VALUE:-one}
      B: ${B_VALUE}
      C: $$literal
      D:
    command: --model m
""", "compose.yaml")
    world = linter.build()
    assert world.containers[0].env == {"A": "one", "B": None, "C": "$literal", "D": None}


def test_env_file_not_in_the_run_gives_nothing(tmp_path):
    files = {"compose.yaml": """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    env_file: [vllm.env]
    command: --model m
""", "vllm.env": "VLLM_WORKER_MULTIPROC_METHODS=spawn\n"}
    assert found_files(tmp_path, files, ["VL109"], given=["compose.yaml"]) == []
    assert found_files(tmp_path, files, ["VL109"]) == [("compose.yaml", 4, 16, W, "VL109")]


# --- GPUs: deploy.resources.reservations.devices and gpus: -----------------------------------------------------
GPU = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    ipc: host
    command: --model Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2
{gpus}
"""


@pytest.mark.parametrize("gpus, expected", [
    ("    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}",
     [(6, 75, E, "VL606")]),
    ("    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 8, capabilities: [gpu]}]}}}",
     [(6, 75, W, "VL606")]),
    ("    deploy: {resources: {reservations: {devices: [{capabilities: [gpu], device_ids: ['0']}]}}}",
     [(6, 85, E, "VL606")]),
    ("    gpus:\n      - driver: nvidia\n        count: 4", [(8, 16, W, "VL606")]),
    # silent: the host decides (all), or the count fits, or not a GPU reservation
    ("    gpus: all", []),
    ("    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}", []),
    ("    deploy: {resources: {reservations: {devices: [{driver: nvidia, capabilities: [gpu]}]}}}", []),
    ("    deploy: {resources: {reservations: {devices: [{capabilities: [gpu], device_ids: ['0', '1']}]}}}", []),
    ("    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 2, capabilities: [gpu]}]}}}", []),
    ("    deploy: {resources: {reservations: {devices: [{driver: amd, count: 1, capabilities: [gpu]}]}}}", []),
])
def test_gpu_reservations_give_the_gpu_count(gpus, expected):
    assert found(GPU.format(gpus=gpus), ["VL606"]) == expected


# --- ports: published ports with the project's variables --------------------------------------------------------
def test_published_port_from_dotenv(tmp_path):
    compose = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: --model m
    ports:
      - "${BIND_ADDRESS:-127.0.0.1}:8000:8000"
"""
    files = {"compose.yaml": compose, ".env": "BIND_ADDRESS=0.0.0.0\n"}
    assert found_files(tmp_path, files, ["VL501"]) == [("compose.yaml", 6, 9, INF, "VL501")]
    assert found_files(tmp_path, files, ["VL501"], given=["compose.yaml"]) == []  # the default: loopback


def test_folder_search_reads_dotenv_and_env_files(tmp_path):
    (tmp_path / "compose.yaml").write_text("""services:
  vllm:
    image: vllm/vllm-openai:${VLLM_TAG:-v0.17.1}
    env_file: vllm.env
    command: --model m --swap-space 8
""")
    (tmp_path / ".env").write_text("VLLM_TAG=v0.18.0\n")
    (tmp_path / "vllm.env").write_text("VLLM_WORKER_MULTIPROC_METHODS=spawn\n")
    result, _ = lint_paths([str(tmp_path)], LintOptions(select=["VL001", "VL102", "VL109"]))
    assert [(Path(f.path).name, f.span.line, f.span.col, f.code) for f in result.findings] == [
        ("compose.yaml", 4, 15, "VL109"), ("compose.yaml", 5, 24, "VL102")]
    assert result.files_checked == 3


def test_messages_name_a_compose_service_as_compose_does():
    text = ("services:\n  vllm:\n    image: vllm/vllm-openai:v0.28.0\n"
            "    command: [--model, Qwen/Qwen3-8B, --swap-space, '4']\n")
    findings = lint_text(text, "compose.yaml", LintOptions(select=["VL102"])).findings
    assert [(f.span.line, f.span.col) for f in findings] == [(4, 39)]
    assert "Compose service vllm runs 0.28.0" in findings[0].message, findings[0].message
