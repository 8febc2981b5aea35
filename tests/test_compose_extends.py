"""Issue 9: Compose `extends` merged as compose-go does (loader/extends.go, override/merge.go at e70e961): the base
service (same file, or `file:` when that file is in the run) under the extending one, mappings key by key (the
extending service wins), `command`/`entrypoint` replaced, `environment` merged by name, other lists appended.
Inherited values keep the base file's positions. `include`d files in the run are read as Compose files."""
from pathlib import Path

from vllmlint.engine import LintOptions, lint_paths

BASE = """services:
  vllm-base:
    image: vllm/vllm-openai:v0.11.0
    command: ["--model", "m", "--num-scheduler-steps", "8"]
    environment:
      VLLM_LOGGING_LEVL: DEBUG
    ports:
      - "8000:8000"
"""


def _lint(tmp_path: Path, files: dict[str, str], select: list[str], names: list[str] | None = None):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    paths = [str(tmp_path / n) for n in (names or list(files))]
    result, _ = lint_paths(paths, LintOptions(select=select))
    assert not result.internal_error, [n.message for n in result.notices]
    return [(Path(f.path).name, f.span.line, f.span.col, f.code, f.subject.name) for f in result.findings]


def test_extends_from_another_file_in_the_run(tmp_path):
    compose = "services:\n  web:\n    extends:\n      file: base.yaml\n      service: vllm-base\n"
    found = _lint(tmp_path, {"base.yaml": BASE, "compose.yaml": compose}, ["VL102"])
    # the inherited command is base.yaml's: the finding is there, once per service that runs it
    assert found == [("base.yaml", 4, 31, "VL102", "vllm-base"), ("base.yaml", 4, 31, "VL102", "web")]


def test_extends_file_not_in_the_run_leaves_the_service_as_written(tmp_path):
    compose = "services:\n  web:\n    extends: {file: base.yaml, service: vllm-base}\n    image: vllm/vllm-openai:v0.11.0\n"
    (tmp_path / "base.yaml").write_text(BASE)
    assert _lint(tmp_path, {"compose.yaml": compose}, ["VL102"], ["compose.yaml"]) == []


def test_extends_in_the_same_file_the_extending_service_wins(tmp_path):
    compose = BASE + ("  old:\n    extends: vllm-base\n    image: vllm/vllm-openai:v0.10.1\n"
                      "  replaced:\n    extends: vllm-base\n    command: [\"--model\", \"m\", \"--swap-space\", \"4\"]\n")
    found = _lint(tmp_path, {"compose.yaml": compose}, ["VL102"])
    # `old` runs 0.10.1 (its own image) with the base's command; `replaced` has its own command (0.11.0 accepts
    # --swap-space): nothing from the base's command for it
    assert [(f[1], f[2], f[4]) for f in found] == [(4, 31, "old"), (4, 31, "vllm-base")]


def test_extends_environment_merged_by_name(tmp_path):
    compose = BASE + ("  web:\n    extends: vllm-base\n    environment:\n      VLLM_LOGGING_LEVL: INFO\n"
                      "      VLLM_ATTENTION_BACKND: FLASHINFER\n")
    found = _lint(tmp_path, {"compose.yaml": compose}, ["VL109"])
    # web's own VLLM_LOGGING_LEVL wins over the base's; its other typo is its own; the base's is the base's
    # (at the names: the environment map's keys)
    assert [(f[1], f[2], f[4]) for f in found] == [(6, 7, "vllm-base"), (12, 7, "web"), (13, 7, "web")]


def test_extends_lists_appended(tmp_path):
    compose = BASE + "  web:\n    extends: vllm-base\n    ports: [\"127.0.0.1:9000:9000\"]\n"
    found = _lint(tmp_path, {"compose.yaml": compose}, ["VL501"])
    assert [(f[1], f[2]) for f in found] == [(8, 9)]  # the base's 8000 on every interface, reported once


def test_extends_cycle_is_no_error(tmp_path):
    compose = ("services:\n  a:\n    extends: b\n    image: vllm/vllm-openai:v0.11.0\n"
               "  b:\n    extends: a\n    command: [\"--model\", \"m\", \"--num-scheduler-steps\", \"8\"]\n")
    found = _lint(tmp_path, {"compose.yaml": compose}, ["VL102"])
    assert [(f[1], f[4]) for f in found] == [(7, "a"), (7, "b")]


def test_included_file_in_the_run_is_read(tmp_path):
    found = _lint(tmp_path, {"compose.yaml": "include:\n  - vllm/compose.yaml\n", "vllm/compose.yaml": BASE},
                  ["VL102"])
    assert found == [("compose.yaml", 4, 31, "VL102", "vllm-base")]
