"""The language server's incremental runs (`vllmlint.server.project`, `parse_cache`): an edit re-parses only
the edited file, and a run from kept parses finds exactly what a fresh run finds. In-process, no pygls."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vllmlint.server.positions import UTF8, UTF16, UTF32, LineIndex, choose_encoding
from vllmlint.server.project import Project

ROOT = Path(__file__).resolve().parent.parent


def _key(result):
    return [(f.code, f.path, f.span.start, f.span.end, f.severity, f.message, f.fix.key() if f.fix else None)
            for f in result.findings]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The fixtures without the Kustomize folder (a run that reads one parses everything afresh)."""
    root = tmp_path / "tree"
    shutil.copytree(ROOT / "fixtures", root, ignore=shutil.ignore_patterns("kustomize"))
    return root


def test_an_edit_reparses_only_that_file_and_finds_what_a_fresh_run_finds(tree: Path):
    project = Project(tree)
    first = project.lint({})
    parsed = project.cache.misses
    assert parsed > 40 and project.cache.hits == 0
    again = project.lint({})
    assert project.cache.misses == parsed  # nothing changed: every parse kept
    assert _key(again.result) == _key(first.result)

    deployment = tree / "original" / "single-node-deployment.yaml"
    edited = deployment.read_text(encoding="utf-8").replace("--enable-chunked-prefill", "--enable-chunked-prefil-typo")
    assert edited != deployment.read_text(encoding="utf-8")
    run = project.lint({str(deployment): edited})
    assert project.cache.misses == parsed + 1  # the edited buffer only
    fresh = Project(tree).lint({str(deployment): edited})
    assert _key(run.result) == _key(fresh.result)
    assert _key(run.result) != _key(first.result)
    shown = run.shown[str(deployment)]
    assert any(f.code == "VL103" and f.path == shown for f in run.result.findings)
    assert run.texts == {str(deployment): edited}

    # Back to the file on disk: its old parse is gone (swept), it is parsed again, the findings are the first run's.
    back = project.lint({})
    assert project.cache.misses == parsed + 2
    assert _key(back.result) == _key(first.result)


def test_a_kustomization_drops_the_kept_parses_of_its_folder_only(tmp_path: Path):
    root = tmp_path / "tree"
    shutil.copytree(ROOT / "fixtures" / "own", root)
    project = Project(root)
    first = project.lint({})
    kept = {shown for shown, _ in project.cache._entries}
    # Its patches were merged into the nodes of the files under its folder: those are parsed afresh next time.
    assert kept and not [shown for shown in kept if "/kustomize/" in shown]
    assert [shown for shown in first.result.sources if "/kustomize/" in shown]
    misses = project.cache.misses
    again = project.lint({})
    assert _key(again.result) == _key(first.result)
    assert project.cache.misses - misses == len([s for s in first.result.sources if "/kustomize/" in s
                                                 and s.endswith((".yaml", ".yml"))])


def test_a_syntax_error_kept_in_the_cache_is_reported_again(tmp_path: Path):
    (tmp_path / "bad.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n", encoding="utf-8")
    project = Project(tmp_path)
    first = [(f.code, f.span.line, f.span.col) for f in project.lint({}).result.findings]
    assert first and first[0][0] == "VL001"
    assert [(f.code, f.span.line, f.span.col) for f in project.lint({}).result.findings] == first
    assert project.cache.hits == 1


@pytest.mark.parametrize("encoding, expected", [(UTF16, 5), (UTF8, 11), (UTF32, 4)])
def test_positions_count_code_units_of_the_encoding(encoding: str, expected: int):
    text = "a\r\n中文😀 x\rlast"
    index = LineIndex(text, encoding)
    offset = text.index("x")
    assert index.position(offset) == (1, expected)
    assert index.offset(1, expected) == offset
    assert index.position(text.index("last")) == (2, 0)  # a lone CR ends a line too
    assert index.offset(1, 999) == text.index("\r", 3)  # past the end of the line: its end
    assert index.offset(9, 0) == len(text)


def test_utf8_only_when_offered():
    assert choose_encoding(None) == UTF16
    assert choose_encoding([UTF32, UTF16]) == UTF16
    assert choose_encoding([UTF16, UTF8]) == UTF8


# --- suppression comments: wherever the finding is, the inserted comment hides it (checked by linting again) ---
LITERAL = """\
apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: [bash, -c]
    args:
    - |
      echo starting
      vllm serve Qwen/Qwen2.5-7B-Instruct \\
        --swap-space 4 \\
        --port 8000
"""
RUNBOOK = """\
# Runbook

```bash
vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000 \\
  --swap-space 4
```

```yaml
apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    args: [Qwen/Qwen2.5-7B-Instruct, --swap-space=4]
```
"""


@pytest.mark.parametrize("name, text", [("pod.yaml", LITERAL), ("runbook.md", RUNBOOK)])
def test_suppression_actions_hide_the_finding_where_it_is(tmp_path: Path, name: str, text: str):
    from lsprotocol import types

    from tests.lsp_client import apply_text_edits
    from vllmlint.server.features import code_actions

    (tmp_path / ".vllmlint.yaml").write_text("vllm-version: 0.29.0\n", encoding="utf-8")
    (tmp_path / name).write_text(text, encoding="utf-8")
    project = Project(tmp_path)
    run = project.lint({})
    removed = [f for f in run.result.findings if f.code == "VL102"]
    assert removed, [f.code for f in run.result.findings]
    path = str(tmp_path / name)
    for finding in removed:
        actions = code_actions(run, finding.path, finding.span.start, finding.span.start, UTF16,
                               lambda shown, path=finding.path: "file:///x" if shown == path else None)
        titles = [a.title for a in actions]
        assert titles[0] == "VL102: delete the removed flag `--swap-space`", titles
        for action in actions[1:3]:
            assert isinstance(action.edit, types.WorkspaceEdit) and action.edit.changes
            edited = apply_text_edits(text, list(action.edit.changes["file:///x"]))
            after = project.lint({path: edited.replace("VL102 -- ", "VL102 -- reviewed")}).result
            left = [(f.code, f.span.line) for f in after.findings if f.code in ("VL102", "VL001", "VL003", "VL004")]
            # This finding is hidden; the comment is used (no VL003), has its reason, and breaks nothing.
            assert (finding.code, finding.span.line + 1) not in left and not [c for c, _ in left if c != "VL102"], \
                (action.title, left, edited)
    fixed = apply_text_edits(text, list(code_actions(run, removed[0].path, removed[0].span.start, removed[0].span.start,
                                                     UTF16, lambda shown: "file:///x")[0].edit.changes["file:///x"]))
    assert "--swap-space" not in fixed.split("\n")[removed[0].span.line - 1]


def test_completion_of_a_flag_not_yet_a_token():
    """`- -` is a nested YAML list, not a word: the flags of the command line it continues are offered."""
    from vllmlint.engine import Linter, LintOptions
    from vllmlint.server.features import completion

    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: vllm\n"
            "    image: vllm/vllm-openai:v0.29.0\n    command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct]\n"
            "    args:\n    - --port=8000\n    - -\n")
    linter = Linter(LintOptions())
    linter.add_text(text, "pod.yaml", ".yaml")
    world = linter.build()
    items = completion(world, "pod.yaml", text, len(text) - 1, UTF16)
    labels = [i.label for i in items]
    assert "--max-model-len" in labels and "--swap-space" not in labels
    assert items[0].text_edit is not None and items[0].text_edit.range.start.character == 6
    assert completion(world, "pod.yaml", text, text.index("kind"), UTF16) == []


def test_open_buffers_of_new_files_and_scripts_without_a_suffix_are_linted(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("vllm serve x --swap-space 4\n", encoding="utf-8")
    project = Project(tmp_path)
    script = "#!/bin/sh\nvllm serve Qwen/Qwen2.5-7B-Instruct --swap-space 4\n"
    run = project.lint({str(tmp_path / "serve"): script, str(tmp_path / "new.yaml"): "kind: [\n",
                        str(tmp_path / "notes.txt"): "vllm serve x --swap-space 4\n"})
    by_file = {(run.shown.get(p), f.code) for p in run.shown for f in run.result.findings if f.path == run.shown[p]}
    assert (run.shown[str(tmp_path / "serve")], "VL102") in by_file
    assert (run.shown[str(tmp_path / "new.yaml")], "VL001") in by_file
    assert str(tmp_path / "notes.txt") not in run.shown  # neither a file vllmlint reads nor a script


def test_json_gets_fixes_but_no_comment_suppressions(tmp_path: Path):
    import json

    from vllmlint.server.features import code_actions

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
           "spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.29.0",
                                    "args": ["Qwen/Qwen2.5-7B-Instruct", "--swap-space=4"]}]}}
    (tmp_path / "pod.json").write_text(json.dumps(pod, indent=2), encoding="utf-8")
    run = Project(tmp_path).lint({})
    finding = next(f for f in run.result.findings if f.code == "VL102")
    actions = code_actions(run, finding.path, finding.span.start, finding.span.end, UTF16, lambda shown: "file:///p")
    assert [a.title for a in actions] == ["VL102: delete the removed flag `--swap-space`"]


def test_a_quick_fix_that_would_break_the_file_is_offered_disabled_with_the_reason(tmp_path: Path):
    """As `--fix` refuses a fix whose text no longer parses, the editor's quick fix is greyed out with why."""
    import dataclasses

    from vllmlint.fix.apply import edit_problem
    from vllmlint.server.features import code_actions

    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: vllm\n"
            "    image: vllm/vllm-openai:v0.29.0\n    args: [Qwen/Qwen2.5-7B-Instruct, --swap-space=4]\n")
    (tmp_path / "pod.yaml").write_text(text, encoding="utf-8")
    run = Project(tmp_path).lint({})
    finding = next(f for f in run.result.findings if f.code == "VL102")
    good = code_actions(run, finding.path, finding.span.start, finding.span.start, UTF16, lambda shown: "file:///p")[0]
    assert good.edit is not None and good.disabled is None and good.is_preferred
    # The same finding with a fix whose edit leaves an unclosed flow sequence.
    edit = dataclasses.replace(finding.fix.edits[0], replacement="[")
    finding.fix = dataclasses.replace(finding.fix, edits=[edit])
    bad = code_actions(run, finding.path, finding.span.start, finding.span.start, UTF16, lambda shown: "file:///p")[0]
    assert bad.title == good.title and bad.edit is None and not bad.is_preferred
    assert bad.disabled is not None and bad.disabled.reason.startswith("the fixed text would not parse (")
    # A client that cannot show disabled actions is not offered it; the suppressions stay.
    others = code_actions(run, finding.path, finding.span.start, finding.span.start, UTF16, lambda shown: "file:///p",
                          disabled=False)
    assert others and all(a.title != good.title for a in others)
    # One vLLM command turned into none is refused too; an edit that keeps it readable is not.
    assert edit_problem("pod.yaml", text, text.replace("image: vllm/vllm-openai", "image: nginx")) == \
        "the fixed text runs 0 vLLM command(s) instead of 1"
    assert edit_problem("pod.yaml", text, text.replace(", --swap-space=4", "")) is None
