"""`vllmlint server` driven over its real stdio protocol (pygls's LanguageClient, a subprocess per session):
diagnostics across files with unsaved buffers, code actions applied, hover, completion, configuration
reload, and both position encodings with non-ASCII text before the token."""
from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402

from pygls.uris import from_fs_path  # noqa: E402

from tests.lsp_client import apply_text_edits, session  # noqa: E402

DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: g6.xlarge
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        # 中文注释 😀
        args: ["Qwen/Qwen2.5-7B-Instruct", "--served-model-name=名前😀", "--swap-space=16", "--dtype=auto"]
        resources:
          limits:
            nvidia.com/gpu: 1
"""
ARGS_LINE = 17  # 0-based line of `args:`
HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: vllm
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  minReplicas: 1
  maxReplicas: 3
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 70}
"""


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    (tmp_path / "hpa.yaml").write_text(HPA, encoding="utf-8")
    return tmp_path


def _codes(diagnostics) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


def _one(diagnostics, code: str) -> types.Diagnostic:
    found = [d for d in diagnostics if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in diagnostics]
    return found[0]


def _range(d: types.Diagnostic) -> tuple[int, int, int, int]:
    return d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character


def test_cross_file_diagnostics_follow_the_unsaved_buffer(workspace: Path):
    async def scenario():
        async with session(workspace) as s:
            s.open("hpa.yaml")
            hpa = await s.wait_diagnostics("hpa.yaml")
            # The HPA is judged against the Deployment in another file, read from disk.
            assert _range(_one(hpa, "VL401")) == (11, 12, 11, 15)  # `cpu` of `name: cpu`
            assert _one(hpa, "VL401").severity == types.DiagnosticSeverity.Warning
            assert _one(hpa, "VL401").source == "vllmlint"
            s.open("deploy.yaml")
            await s.wait_diagnostics("deploy.yaml")
            count = s.published[s.uri("hpa.yaml")]
            # An unsaved edit of the Deployment (a CPU request) clears the HPA's finding: the buffer overlays
            # the file on disk, and the HPA's diagnostics are published again because the change affects them.
            s.replace("deploy.yaml", DEPLOY.replace("            nvidia.com/gpu: 1\n",
                                                    "            nvidia.com/gpu: 1\n          requests: {cpu: 2}\n"))
            hpa = await s.wait_diagnostics("hpa.yaml", after=count)
            assert "VL401" not in _codes(hpa)
            assert (workspace / "deploy.yaml").read_text(encoding="utf-8") == DEPLOY  # nothing written
            # Closing the Deployment's buffer puts the file on disk back in the world.
            count = s.published[s.uri("hpa.yaml")]
            s.client.text_document_did_close(types.DidCloseTextDocumentParams(
                types.TextDocumentIdentifier(uri=s.uri("deploy.yaml"))))
            hpa = await s.wait_diagnostics("hpa.yaml", after=count)
            assert "VL401" in _codes(hpa)

    run(scenario())


@pytest.mark.parametrize("offered, encoding, column", [
    (None, "utf-16", 71),  # the emoji is 2 UTF-16 units, each CJK character 1
    (["utf-16", "utf-8"], "utf-8", 77),  # 2 CJK characters of 3 bytes, an emoji of 4
])
def test_positions_in_the_negotiated_encoding(workspace: Path, offered, encoding: str, column: int):
    line = DEPLOY.splitlines()[ARGS_LINE]
    points = line.index('"--swap-space=16"')
    assert points == 70  # code points before the token
    async def scenario():
        async with session(workspace, encodings=offered) as s:
            assert s.encoding == encoding
            s.open("deploy.yaml")
            diagnostics = await s.wait_diagnostics("deploy.yaml")
            removed = _one(diagnostics, "VL102")
            assert _range(removed) == (ARGS_LINE, column, ARGS_LINE, column + len('"--swap-space=16"'))
            # A position the client sends is read in the same encoding: hover in the middle of the token.
            hover = await s.hover("deploy.yaml", ARGS_LINE, column + 5)
            assert hover is not None and "**`--swap-space`**" in hover.contents.value
            # An incremental edit in that encoding: delete `, "--swap-space=16"` and the finding goes.
            count = s.published[s.uri("deploy.yaml")]
            s.edit("deploy.yaml", (ARGS_LINE, column - 2), (ARGS_LINE, column + len('"--swap-space=16"')), "")
            after = await s.wait_diagnostics("deploy.yaml", after=count)
            assert "VL102" not in _codes(after)
            assert "VL001" not in _codes(after)

    run(scenario())


def test_utf8_not_offered_means_utf16(workspace: Path):
    async def scenario():
        async with session(workspace, encodings=["utf-32", "utf-16"]) as s:
            assert s.encoding == "utf-16"

    run(scenario())


def test_quick_fix_and_suppression_actions(workspace: Path):
    async def scenario():
        async with session(workspace) as s:
            s.open("deploy.yaml")
            await s.wait_diagnostics("deploy.yaml")
            actions = await s.code_actions("deploy.yaml", (ARGS_LINE, 75), (ARGS_LINE, 75))
            titles = [a.title for a in actions]
            assert titles == ["VL102: delete the removed flag `--swap-space`",
                              "Suppress VL102 here (write the reason after `--`)",
                              "Suppress VL102 in this file (write the reason after `--`)"]
            fix = actions[0]
            assert fix.is_preferred is True and fix.kind == types.CodeActionKind.QuickFix
            assert fix.diagnostics and fix.diagnostics[0].code == "VL102"
            assert fix.edit is not None and fix.edit.changes is not None
            fixed = apply_text_edits(DEPLOY, list(fix.edit.changes[s.uri("deploy.yaml")]))
            assert fixed == DEPLOY.replace(', "--swap-space=16"', "")
            # The suppression comment goes on its own line above, indented like it.
            suppress = actions[1]
            assert suppress.edit is not None and suppress.edit.changes is not None
            suppressed = apply_text_edits(DEPLOY, list(suppress.edit.changes[s.uri("deploy.yaml")]))
            assert suppressed.splitlines()[ARGS_LINE] == "        # vllmlint: disable-next-line=VL102 -- "
            count = s.published[s.uri("deploy.yaml")]
            s.replace("deploy.yaml", suppressed)
            after = await s.wait_diagnostics("deploy.yaml", after=count)
            assert "VL102" not in _codes(after)
            # Until the reason is written, VL004 points at the comment.
            assert _range(_one(after, "VL004"))[0] == ARGS_LINE
            count = s.published[s.uri("deploy.yaml")]
            s.replace("deploy.yaml", suppressed.replace("VL102 -- ", "VL102 -- swap space set by the platform team"))
            after = await s.wait_diagnostics("deploy.yaml", after=count)
            assert "VL004" not in _codes(after) and "VL102" not in _codes(after)

    run(scenario())


SCRIPT = """\
#!/bin/sh
# serve the model
vllm serve Qwen/Qwen2.5-7B-Instruct \\
  --task embed \\
  --swap-space 4
"""


def test_unsafe_fix_labelled_and_script_suppression_before_the_command(tmp_path: Path):
    (tmp_path / ".vllmlint.yaml").write_text("vllm-version: 0.29.0\n", encoding="utf-8")
    (tmp_path / "serve.sh").write_text(SCRIPT, encoding="utf-8")

    async def scenario():
        async with session(tmp_path) as s:
            s.open("serve.sh", language="shellscript")
            diagnostics = await s.wait_diagnostics("serve.sh")
            assert [(_range(d), d.code) for d in diagnostics if d.code == "VL102"] == [
                ((3, 2, 3, 8), "VL102"), ((4, 2, 4, 14), "VL102")]
            actions = await s.code_actions("serve.sh", (3, 4), (3, 4))
            unsafe = actions[0]
            assert unsafe.title == "VL102: delete the removed flag `--task` (unsafe)"
            assert unsafe.is_preferred is False
            suppress = next(a for a in actions if a.title.startswith("Suppress VL102 here"))
            assert suppress.edit is not None and suppress.edit.changes is not None
            text = apply_text_edits(SCRIPT, list(suppress.edit.changes[s.uri("serve.sh")]))
            # Above the command, not inside its continuation lines (a comment there would end the command).
            assert text.splitlines()[2] == "# vllmlint: disable-next-line=VL102 -- "
            assert text.splitlines()[3].startswith("vllm serve")
            # source.fixAll: what `vllmlint --fix` does to the file (safe fixes only, verified).
            fix_all = await s.code_actions("serve.sh", (0, 0), (0, 0), only=["source.fixAll"])
            assert [a.title for a in fix_all] == ["Fix all safe vllmlint problems (1)"]
            assert fix_all[0].edit is not None and fix_all[0].edit.changes is not None
            fixed = apply_text_edits(SCRIPT, list(fix_all[0].edit.changes[s.uri("serve.sh")]))
            assert fixed == SCRIPT.replace(" \\\n  --swap-space 4", "")
            count = s.published[s.uri("serve.sh")]
            s.replace("serve.sh", text.replace("VL102 -- ", "VL102 -- pinned by the image"))
            after = await s.wait_diagnostics("serve.sh", after=count)
            assert "VL102" not in _codes(after) and "VL004" not in _codes(after)
            # The file-wide suppression goes after the shebang.
            whole = next(a for a in actions if a.title.startswith("Suppress VL102 in this file"))
            assert whole.edit is not None and whole.edit.changes is not None
            text = apply_text_edits(SCRIPT, list(whole.edit.changes[s.uri("serve.sh")]))
            assert text.splitlines()[:2] == ["#!/bin/sh", "# vllmlint: disable-file=VL102 -- "]

    run(scenario())


def test_hover_flag_rule_and_capacity(workspace: Path):
    async def scenario():
        async with session(workspace) as s:
            s.open("deploy.yaml")
            await s.wait_diagnostics("deploy.yaml")
            hover = await s.hover("deploy.yaml", ARGS_LINE, 75)
            assert hover is not None
            text = hover.contents.value
            assert hover.contents.kind == types.MarkupKind.Markdown
            assert text.startswith("**`--swap-space`** in vLLM 0.29.0, image tag vllm/vllm-openai:v0.29.0\n"
                                   "- not an option of vLLM 0.29.0\n")
            assert "- removed in 0.18.0 (last accepted by 0.17.1)" in text
            assert "### VL102 removed-flag" in text  # the finding under the cursor: the rule's explanation
            # A flag of the release: its type, default and values in 0.29.0.
            line = DEPLOY.splitlines()[ARGS_LINE]
            hover = await s.hover("deploy.yaml", ARGS_LINE, line.index("--dtype") + 3 + 1)  # +1: the emoji
            assert hover is not None
            assert hover.contents.value.startswith("**`--dtype`** in vLLM 0.29.0")
            assert "- type: str" in hover.contents.value and "`bfloat16`" in hover.contents.value
            # The model id: the capacity summary on the GPU the node selector names.
            hover = await s.hover("deploy.yaml", ARGS_LINE, line.index("Qwen/") + 3)
            assert hover is not None
            value = hover.contents.value
            assert value.startswith("**capacity of `Qwen/Qwen2.5-7B-Instruct`** (exact id), vLLM 0.29.0")
            assert "weights per GPU        14.19 GiB" in value
            assert "GPU                    g6.xlarge (1 x L4), from nodeSelector" in value
            assert await s.hover("deploy.yaml", 0, 3) is None  # `apiVersion`: nothing to say

    run(scenario())


def test_completion_of_flags_and_values_for_the_release(workspace: Path):
    typed = DEPLOY.replace('"--dtype=auto"', '"--max-mo", "--dtype=b"')
    line = typed.splitlines()[ARGS_LINE]

    async def scenario():
        async with session(workspace) as s:
            s.open("deploy.yaml", typed)
            await s.wait_diagnostics("deploy.yaml")
            column = line.index("--max-mo") + len("--max-mo") + 1  # UTF-16: +1 for the emoji
            items = await s.completion("deploy.yaml", ARGS_LINE, column)
            labels = [i.label for i in items]
            assert "--max-model-len" in labels
            assert "--swap-space" not in labels  # removed before 0.29.0, the workload's release
            item = next(i for i in items if i.label == "--max-model-len")
            assert item.detail is not None and item.detail.endswith("(vLLM 0.29.0)")
            assert isinstance(item.text_edit, types.TextEdit)
            assert _range_of(item.text_edit.range) == (ARGS_LINE, column - len("--max-mo"), ARGS_LINE, column)
            column = line.index("--dtype=b") + len("--dtype=b") + 1
            items = await s.completion("deploy.yaml", ARGS_LINE, column)
            values = [i.label for i in items]
            assert "bfloat16" in values and "auto" in values
            edit = next(i for i in items if i.label == "bfloat16").text_edit
            assert isinstance(edit, types.TextEdit)
            assert _range_of(edit.range) == (ARGS_LINE, column - 1, ARGS_LINE, column)
            # While typing (a buffer newer than the last run), the document alone answers.
            s.replace("deploy.yaml", typed.replace('"--dtype=b"', '"--dtype=b", "--kv-cache-d"'))
            column = line.index("--dtype=b") + len('--dtype=b", "--kv-cache-d') + 1
            items = await s.completion("deploy.yaml", ARGS_LINE, column)
            assert "--kv-cache-dtype" in [i.label for i in items]

    run(scenario())


def _range_of(r: types.Range) -> tuple[int, int, int, int]:
    return r.start.line, r.start.character, r.end.line, r.end.character


def test_config_reloaded_when_it_changes(workspace: Path):
    config = workspace / ".vllmlint.yaml"
    config.write_text("ignore: [VL102]\n", encoding="utf-8")

    async def scenario():
        async with session(workspace) as s:
            s.open("deploy.yaml")
            first = await s.wait_diagnostics("deploy.yaml")
            assert [r.method for r in s.registrations] == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
            assert "VL102" not in _codes(first) and "VL810" in _codes(first)
            # The file changes on disk: the client's watcher says so.
            config.write_text("ignore: [VL810]\n", encoding="utf-8")
            count = s.published[s.uri("deploy.yaml")]
            s.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
                [types.FileEvent(uri=s.uri(".vllmlint.yaml"), type=types.FileChangeType.Changed)]))
            after = await s.wait_diagnostics("deploy.yaml", after=count)
            assert "VL102" in _codes(after) and "VL810" not in _codes(after)
            # Saved in the editor: the same.
            config.write_text("ignore: [VL102, VL810]\n", encoding="utf-8")
            count = s.published[s.uri("deploy.yaml")]
            s.save(".vllmlint.yaml")
            after = await s.wait_diagnostics("deploy.yaml", after=count)
            assert "VL102" not in _codes(after) and "VL810" not in _codes(after)
            # A broken configuration: one line with its file and line, and the defaults apply meanwhile.
            config.write_text("ignore: [VL102]\nseverity: {VL810: loud}\n", encoding="utf-8")
            count = s.published[s.uri("deploy.yaml")]
            s.save(".vllmlint.yaml")
            after = await s.wait_diagnostics("deploy.yaml", after=count)
            assert "VL102" in _codes(after)
            assert any(".vllmlint.yaml" in m and "defaults apply" in m for m in s.messages)

    run(scenario())


def test_other_commands_do_not_import_pygls(tmp_path: Path):
    (tmp_path / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    code = ("import sys\nfrom vllmlint.cli import cli\n"
            "try:\n    cli(['check', '-q', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
            "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')"
            " or m.startswith('vllmlint.server.server')))\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "deploy.yaml")], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "server" in out.stdout  # listed by --help


def test_server_without_the_extra_says_how_to_install_it():
    code = ("import sys\nsys.modules['pygls'] = None\nfrom vllmlint.cli import cli\ncli(['server'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert out.returncode == 2
    assert out.stderr.strip() == ("vllmlint: error: `vllmlint server` needs the server extra (pygls 2 and "
                                  "lsprotocol); vllmlint is not on PyPI: install it from a checkout or a wheel "
                                  "built from one, pip install '/path/to/vllmlint[server]'")


def test_changes_in_quick_succession_are_linted_once(workspace: Path):
    async def scenario():
        async with session(workspace, debounce=400) as s:
            s.open("deploy.yaml")
            await s.wait_diagnostics("deploy.yaml")
            count = s.published[s.uri("deploy.yaml")]
            for flag in ("--swap-space=1", "--swap-space=2", "--swap-space=3"):  # typed within the debounce
                s.replace("deploy.yaml", DEPLOY.replace("--swap-space=16", flag))
            after = await s.wait_diagnostics("deploy.yaml", after=count)
            assert s.published[s.uri("deploy.yaml")] == count + 1
            assert _one(after, "VL102").message.startswith("`--swap-space` was removed")
            await asyncio.sleep(0.6)  # no second run for the earlier versions
            assert s.published[s.uri("deploy.yaml")] == count + 1
            # hpa.yaml is not open: nothing is published for it.
            assert s.uri("hpa.yaml") not in s.published

    run(scenario())


def test_changes_made_while_a_run_goes_on_are_linted_together_after_it():
    """Without a debounce (the default) a change is linted at once, but one run at a time: the changes that
    arrive meanwhile wait as one run, not one run each."""
    from types import SimpleNamespace

    from vllmlint.server.server import VllmlintServer

    class Folder:
        runs = 0

        def lint(self, overlays):
            Folder.runs += 1
            return SimpleNamespace(result=SimpleNamespace(notices=[]))

        def contains(self, path):
            return True

    async def scenario():
        server = VllmlintServer(0)
        folder = Folder()
        lock = server.lock(folder)  # type: ignore[arg-type]
        await lock.acquire()  # a run goes on
        for n in range(30):
            server._fire(f"file:///w/doc-{n % 3}.yaml", folder)  # type: ignore[arg-type]
        assert len(server.tasks) == 1 and server.pending[id(folder)] == {f"file:///w/doc-{n}.yaml" for n in range(3)}
        lock.release()
        await asyncio.gather(*server.tasks)
        assert Folder.runs == 1 and not server.pending
        server._fire("file:///w/doc-0.yaml", folder)  # type: ignore[arg-type]  # idle again: at once
        await asyncio.gather(*server.tasks)
        assert Folder.runs == 2

    run(scenario())


def test_the_last_of_many_quick_changes_is_what_the_diagnostics_say(workspace: Path):
    async def scenario():
        async with session(workspace, debounce=0) as s:
            s.open("deploy.yaml")
            await s.wait_diagnostics("deploy.yaml")
            for n in range(30):
                s.replace("deploy.yaml", DEPLOY.replace("--swap-space=16", f"--swap-space={n}"))
                await asyncio.sleep(0.005)
            s.replace("deploy.yaml", DEPLOY.replace(', "--swap-space=16"', ""))
            await s.wait_diagnostics("deploy.yaml", predicate=lambda d: "VL102" not in _codes(d))
            await asyncio.sleep(0.5)  # nothing older is published after it
            assert "VL102" not in _codes(s.diagnostics[s.uri("deploy.yaml")])

    run(scenario())


def test_a_folder_added_to_the_workspace_is_linted_as_one(workspace: Path, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    (other / "deploy.yaml").write_text(DEPLOY, encoding="utf-8")
    (other / "hpa.yaml").write_text(HPA, encoding="utf-8")

    async def scenario():
        async with session(workspace) as s:
            s.client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
                types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(uri=from_fs_path(str(other)),
                                                                               name="other")], removed=[])))
            uri = from_fs_path(str(other / "hpa.yaml"))
            s.client.text_document_did_open(types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=HPA)))
            await asyncio.wait_for(_published(s, uri), 20)
            # Judged against the Deployment of its own folder (a lone file would have no target to judge).
            assert _range(_one(s.diagnostics[uri], "VL401")) == (11, 12, 11, 15)

    run(scenario())


async def _published(s, uri: str) -> None:
    while uri not in s.published:
        s.changed.clear()
        await s.changed.wait()
