"""One reader per language: the shell reader's typed result (comments, continuations, here-documents),
CRLF continuations, every shell command of the run in the world (VL108 reads those, not file text),
and suppressions reading comments from the model's own parse."""
from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from vllmlint.engine import Linter, LintOptions, lint_text
from vllmlint.source.comments import yaml_comments
from vllmlint.source.shell import read_script, split_commands


def lint(files: dict[str, str], codes, version="0.29.0"):
    linter = Linter(LintOptions(select=list(codes), vllm_version=version))
    for name, text in files.items():
        linter.result.files_checked += 1
        linter.add_text(text, name, PurePosixPath(name).suffix.lower())
    result = linter.run()
    assert not result.internal_error, [n.message for n in result.notices]
    return result


def where(result, code):
    return [(f.path, f.span.line, f.span.col) for f in result.findings if f.code == code]


# --- CRLF line endings ------------------------------------------------------------------------------
CRLF_SCRIPT = "#!/bin/sh\r\nvllm serve m \\\r\n  --port 8000 \\\r\n  --swap-space 4\r\n"
CRLF_POD = ("apiVersion: v1\r\nkind: Pod\r\nmetadata: {name: p}\r\nspec:\r\n  containers:\r\n  - name: v\r\n"
            "    image: vllm/vllm-openai:v0.29.0\r\n    command: [/bin/bash, -c]\r\n    args:\r\n    - |\r\n"
            "      vllm serve m \\\r\n        --port 8000 \\\r\n        --swap-space 4\r\n")
CRLF_README = "# Run\r\n\r\n```bash\r\nvllm serve m \\\r\n  --port 8000 \\\r\n  --swap-space 4\r\n```\r\n"


def test_a_backslash_before_crlf_continues_the_command():
    [command] = split_commands("vllm serve m \\\r\n  --port 8000 \\\r\n  --swap-space 4\r\n")
    assert [w.text for w in command.words] == ["vllm", "serve", "m", "--port", "8000", "--swap-space", "4"]


@pytest.mark.parametrize("name, text, line, col", [
    ("run.sh", CRLF_SCRIPT, 4, 3),
    ("pod.yaml", CRLF_POD, 13, 9),  # YAML normalises a block scalar's line breaks: this worked before too
    ("README.md", CRLF_README, 6, 3),
])
def test_flags_after_a_crlf_continuation_are_checked_at_their_place(name, text, line, col):
    result = lint({name: text}, ["VL102"])
    assert where(result, "VL102") == [(name, line, col)]
    [finding] = result.findings
    assert text[finding.span.start:finding.span.end] == "--swap-space"


def test_disable_next_line_covers_a_command_continued_with_crlf():
    script = ("#!/bin/sh\r\n# vllmlint: disable-next-line=VL102 -- patched image\r\nvllm serve m \\\r\n"
              "  --swap-space 4\r\n")
    result = lint({"run.sh": script}, ["VL102", "VL003"])
    assert result.findings == [] and [f.code for f in result.suppressed] == ["VL102"]


# --- the shell reader's typed result -----------------------------------------------------------------
def test_comments_continuations_and_heredocs_come_with_the_commands():
    script = ("set -e  # strict\n"
              "cat > /tmp/run.sh <<'EOF'\n"
              "# it's the server\n"
              "vllm serve m \\\n"
              "  --port 8000\n"
              "EOF\n"
              "echo '#not a comment' # a comment\n")
    read = read_script(script)
    assert [[w.text for w in c.words] for c in read.commands] == [
        ["set", "-e"], ["cat"], ["vllm", "serve", "m", "--port", "8000"], ["echo", "#not a comment"]]
    assert [c.text for c in read.comments] == ["# strict", "# it's the server", "# a comment"]
    assert [script[c.start:c.end] for c in read.comments] == [c.text for c in read.comments]
    [continuation] = read.continuations
    assert script[continuation.start:continuation.end] == "\\\n" and script[continuation.newline] == "\n"
    [doc] = read.heredocs
    assert (doc.delimiter, doc.quoted, doc.strip_tabs, doc.closed) == ("EOF", True, False, True)
    assert script[doc.operator:doc.operator + 2] == "<<"
    assert script[doc.start:doc.end] == "# it's the server\nvllm serve m \\\n  --port 8000\n"
    vllm = read.commands[2]
    assert vllm.heredoc is doc and read.comments[1].heredoc is doc and read.commands[3].heredoc is None
    assert script[vllm.start:vllm.end] == "vllm serve m \\\n  --port 8000"


def test_a_quote_in_a_heredoc_body_does_not_swallow_the_commands_after_it():
    script = "cat <<EOF\nit's data\nEOF\nvllm serve m --port 8000\n"
    commands = [[w.text for w in c.words] for c in split_commands(script)]
    assert commands[-1] == ["vllm", "serve", "m", "--port", "8000"]


def test_heredoc_with_tabs_stripped_and_unterminated():
    script = "cat <<-END\n\tbody\n\tEND\necho after\ncat <<X\nno end"
    read = read_script(script)
    first, second = read.heredocs
    assert first.strip_tabs and first.closed and script[first.start:first.end] == "\tbody\n"
    assert not second.closed and script[second.start:second.end] == "no end"
    assert ["echo", "after"] in [[w.text for w in c.words] for c in read.commands]


# --- every shell command of the run in the world ------------------------------------------------------
def build(files: dict[str, str]):
    linter = Linter(LintOptions())
    for name, text in files.items():
        linter.add_text(text, name, PurePosixPath(name).suffix.lower())
    return linter.build()


def test_the_world_holds_every_command_with_positions():
    pod = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: head
    image: rayproject/ray:2.40.0
    command: [bash, -c, "ray start --head && sleep infinity"]
  - name: exec
    image: rayproject/ray:2.40.0
    command: [ray, start, --address=head:6379]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: scripts}
data:
  start.sh: |
    # ray start in a comment is not a command
    ray start --head
"""
    world = build({"pod.yaml": pod, "run.sh": "#!/bin/sh\nexport X=1\nvllm serve m\n"})
    found = [(c.via, c.words) for c in world.shell_commands]
    assert ("command", ["bash", "-c", "ray start --head && sleep infinity"]) in found
    assert ("shell", ["ray", "start", "--head"]) in found and ("shell", ["sleep", "infinity"]) in found
    assert ("command", ["ray", "start", "--address=head:6379"]) in found
    assert ("configmap", ["ray", "start", "--head"]) in found
    assert ("script", ["export", "X=1"]) in found and ("script", ["vllm", "serve", "m"]) in found
    shell = next(c for c in world.shell_commands if c.via == "shell" and c.words[0] == "ray")
    assert shell.container is not None and shell.container.name == "head"
    assert pod[shell.tokens[0].start:shell.tokens[-1].end] == "ray start --head"
    assert shell.tokens[0].span.line == 8


# --- VL108: a Ray head is a command, not a word in a file ----------------------------------------------
RAY_SERVE = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: ["m", "-tp", "8", "-pp", "2", "--distributed-executor-backend", "ray"]
        resources: {limits: {nvidia.com/gpu: "8"}}
"""


@pytest.mark.parametrize("files", [
    {"deploy.yaml": RAY_SERVE + "# TODO: ray start a head in a LeaderWorkerSet\n"},
    {"deploy.yaml": RAY_SERVE, "notes.sh": "#!/bin/sh\n# TODO: ray start --head on the big node\necho todo\n"},
    {"deploy.yaml": RAY_SERVE, "README.md": "Later we will ray start a head; see run_cluster.sh.\n"},
    {"deploy.yaml": RAY_SERVE, "run.sh": "#!/bin/sh\necho 'ray start --head'\n"},
    {"deploy.yaml": RAY_SERVE, "notes.sh": "#!/bin/sh\ncat <<EOT\nray start --head\nEOT\n"},
    {"deploy.yaml": RAY_SERVE, "notes.sh": "#!/bin/sh\ncat <<EOT 2>&1\nray start --head\nEOT\n"},
], ids=["yaml-comment", "script-comment", "markdown-prose", "echoed-string", "printed-heredoc",
        "printed-heredoc-to-stderr"])
def test_a_mention_of_ray_start_does_not_silence_vl108(files):
    result = lint(files, ["VL108"])
    [finding] = result.findings
    assert (finding.path, finding.span.line, finding.span.col) == ("deploy.yaml", 12, 79)
    assert RAY_SERVE[finding.span.start:finding.span.end] == '"ray"'


@pytest.mark.parametrize("files", [
    {"deploy.yaml": RAY_SERVE, "head.sh": "#!/bin/sh\nexec ray start --head --port=6379\n"},
    {"deploy.yaml": RAY_SERVE, "README.md": "```bash\nray start --head\n```\n"},
    {"deploy.yaml": RAY_SERVE + """---
apiVersion: v1
kind: Pod
metadata: {name: head}
spec:
  containers:
  - {name: head, image: rayproject/ray:2.40.0, command: [/bin/sh, -c, "ray start --head --block"]}
"""},
    {"deploy.yaml": RAY_SERVE + """---
apiVersion: v1
kind: Pod
metadata: {name: head}
spec:
  containers:
  - name: head
    image: rayproject/ray:2.40.0
    command: [ray, start]
    args: [--head, --block]
"""},
    {"deploy.yaml": RAY_SERVE + """---
apiVersion: v1
kind: Pod
metadata: {name: leader}
spec:
  containers:
  - name: leader
    image: vllm/vllm-openai:v0.29.0
    command: [sh, -c]
    args: ["bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader --ray_cluster_size=2"]
"""},
    {"deploy.yaml": RAY_SERVE, "head.sh": "#!/bin/sh\nbash <<EOT\nray start --head\nEOT\n"},
    {"deploy.yaml": RAY_SERVE, "head.sh": "#!/bin/sh\ncat <<EOT | sh\nray start --head\nEOT\n"},
    {"deploy.yaml": RAY_SERVE, "head.sh": "#!/bin/sh\ncat > /tmp/head.sh <<'EOT'\nray start --head\nEOT\n"
                                          "sh /tmp/head.sh\n"},
], ids=["script", "markdown-block", "sh-c", "command-list", "multi-node-helper", "heredoc-to-bash",
        "heredoc-piped-to-sh", "heredoc-written-to-a-script"])
def test_a_real_ray_start_command_still_counts(files):
    assert lint(files, ["VL108"]).findings == []


# --- suppressions read the comments of the model's parse -------------------------------------------------
POD = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: web
    image: nginx:latest  # vllmlint: disable=VL201 -- lab mirror
    command: [echo, "# vllmlint: disable=VL201 -- text", 'a #b']
"""


def test_the_comment_index_comes_from_the_parse_and_skips_scalars():
    linter = Linter(LintOptions())
    linter.add_text(POD, "pod.yaml", ".yaml")
    index = yaml_comments(linter.result.sources["pod.yaml"])
    assert index is not None
    assert [POD[c.start:c.end] for c in index.comments] == ["# vllmlint: disable=VL201 -- lab mirror"]


def test_suppressions_do_not_parse_yaml_again(monkeypatch):
    linter = Linter(LintOptions(select=["VL201", "VL003"]))
    linter.add_text(POD, "pod.yaml", ".yaml")
    linter.add_text("Intro\n\n```yaml\n" + POD + "```\n", "README.md", ".md")
    linter.build()
    import ruamel.yaml

    def no_second_parse(*_args, **_kwargs):
        raise AssertionError("suppressions must read the comments of the parse the model came from")

    for name in ("parse", "compose_all", "compose", "load", "load_all"):
        monkeypatch.setattr(ruamel.yaml.YAML, name, no_second_parse)
    result = linter.run()
    assert result.findings == []
    assert sorted((f.path, f.span.line) for f in result.suppressed) == [("README.md", 10), ("pod.yaml", 7)]


def test_a_file_never_parsed_as_yaml_has_no_yaml_comments():
    from vllmlint.source.yamlmodel import SourceFile

    assert yaml_comments(SourceFile("x.yaml", "a: 1  # vllmlint: disable=VL201\n")) is None
    assert lint_text(POD, "pod.yaml", LintOptions(select=["VL201"])).findings == []


def test_each_markdown_yaml_block_reads_only_its_own_literal_block_scripts():
    # A block scalar's span runs over the blank lines after it, past the closing fence: the shell
    # comments of the blocks below must not be read again as this block's.
    block = ("```yaml\nkind: ConfigMap\napiVersion: v1\nmetadata: {name: s}\ndata:\n  run.sh: |\n"
             "    # vllmlint: disable-next-line=VL102 -- y\n    echo hi\n```\n\n")
    text = block * 3
    result = lint({"README.md": text}, ["VL102", "VL003"])
    assert [(f.code, f.span.line) for f in result.findings] == [("VL003", 7), ("VL003", 17), ("VL003", 27)]
