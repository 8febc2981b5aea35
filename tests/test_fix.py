"""`--fix`: exact before/after text for every form a fix can take, and the guarantees around them
(verification, refusal, second run is a no-op, permissions, atomic writes)."""
import json
import os
import stat
from pathlib import Path

import pytest

from vllmlint.engine import LintOptions, lint_text
from vllmlint.fix.apply import apply_edits, run_fixes
from vllmlint.fix.edits import SAFE, UNSAFE, Edit, Fix, _conflict

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fix_text(tmp_path, monkeypatch, name, text, unsafe=False, options=None):
    """Write `text` to tmp_path/name, run the fixer on it, return (new text, outcome)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    outcome = run_fixes([name], options or LintOptions(), unsafe=unsafe)
    return path.read_text(), outcome


MINE = {"VL101", "VL102", "VL103", "VL301"}  # the rules with fixes (and VL103, which has none); others come and go


def codes(outcome):
    return sorted(f"{f.code}:{f.value}" for f in outcome.result.findings if f.code in MINE)


# --- each form, exact text --------------------------------------------------------------------------
def test_block_list_fixture_entrypoint_removed_flag_and_speculative(tmp_path, monkeypatch):
    before = (FIXTURES / "own/original-deployment-with-removed-flags.yaml").read_text()
    after, outcome = fix_text(tmp_path, monkeypatch, "deploy.yaml", before)
    expected = before.replace(
        "        - python\n"
        "        - -m\n"
        "        - vllm.entrypoints.openai.api_server\n"
        "        - --model=/models/llama-3.1-70b\n",
        "        - vllm\n"
        "        - serve\n"
        "        - /models/llama-3.1-70b\n",
    ).replace(
        "        - --swap-space=16\n"
        "        - --speculative-model=meta-llama/Llama-3.1-8B-Instruct\n"
        "        - --num-speculative-tokens=5\n",
        "        - '--speculative-config={\"model\": \"meta-llama/Llama-3.1-8B-Instruct\", "
        "\"num_speculative_tokens\": 5, \"method\": \"draft_model\"}'\n",
    )
    assert after == expected
    assert after.startswith("# own: the April 2026 edition")  # the comment line survives
    assert outcome.applied == 3  # entrypoint, --swap-space, the speculative pair (one fix)
    assert outcome.files == ["deploy.yaml"] and outcome.refused == []
    assert codes(outcome) == []
    assert "VL201" in {f.code for f in outcome.result.findings}  # not fixable: which tag to pin is a choice
    assert "-        - --swap-space=16\n" in outcome.diff and outcome.diff.startswith("--- deploy.yaml\n+++ deploy.yaml\n")


FLOW = """\
apiVersion: v1
kind: Pod
metadata: {name: vllm}  # flow style stays flow style
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    # the server
    command: [python3, -m, vllm.entrypoints.openai.api_server, --swap-space, "16", --model, Qwen/Qwen3-8B]
    args: [--port, "8000", --use-v2-block-manager]
"""


def test_flow_lists(tmp_path, monkeypatch):
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", FLOW)
    assert after == FLOW.replace(
        '[python3, -m, vllm.entrypoints.openai.api_server, --swap-space, "16", --model, Qwen/Qwen3-8B]',
        "[vllm, serve, Qwen/Qwen3-8B]").replace('[--port, "8000", --use-v2-block-manager]', '[--port, "8000"]')
    assert outcome.applied == 3 and codes(outcome) == []


def test_json_keeps_json(tmp_path, monkeypatch):
    before = (FIXTURES / "own/manifest.json").read_text()
    after, outcome = fix_text(tmp_path, monkeypatch, "manifest.json", before)
    assert after == before.replace(
        '"command": ["python3", "-m", "vllm.entrypoints.openai.api_server"],', '"command": ["vllm", "serve"],').replace(
        '"args": ["--model", "Qwen/Qwen3-0.6B", "--port", "8000"],', '"args": ["Qwen/Qwen3-0.6B", "--port", "8000"],')
    container = json.loads(after)["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["vllm", "serve"] and container["args"] == ["Qwen/Qwen3-0.6B", "--port", "8000"]


def test_speculative_in_a_json_flow_list_is_valid_json(tmp_path, monkeypatch):
    before = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{
        "name": "vllm", "image": "vllm/vllm-openai:v0.29.0", "command": ["vllm", "serve"],
        "args": ["Qwen/Qwen3-8B", "--num-speculative-tokens", "4", "--speculative-model", "Qwen/Qwen3-0.6B"]}]}},
        indent=2)
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.json", before)
    args = json.loads(after)["spec"]["containers"][0]["args"]
    assert args == ["Qwen/Qwen3-8B", "--speculative-config",
                    '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4, "method": "draft_model"}']
    assert outcome.applied == 1 and codes(outcome) == []


BASH_C = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm-bash  # the server
spec:
  selector:
    matchLabels: {app: vllm-bash}
  template:
    metadata:
      labels: {app: vllm-bash}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.29.0
          command:
            - /bin/bash
            - -c
            - |
              # start the server
              exec python3 -m vllm.entrypoints.openai.api_server \\
                --port 8000 \\
                --num-speculative-tokens=5 \\
                --swap-space 4 \\
                --model Qwen/Qwen3-8B \\
                --speculative-model Qwen/Qwen3-0.6B \\
                --use-v2-block-manager
          # trailing comment
"""


def test_bash_c_block_scalar_with_continuations(tmp_path, monkeypatch):
    after, outcome = fix_text(tmp_path, monkeypatch, "deploy.yaml", BASH_C)
    assert after == BASH_C.replace("""\
              exec python3 -m vllm.entrypoints.openai.api_server \\
                --port 8000 \\
                --num-speculative-tokens=5 \\
                --swap-space 4 \\
                --model Qwen/Qwen3-8B \\
                --speculative-model Qwen/Qwen3-0.6B \\
                --use-v2-block-manager
""", """\
              exec vllm serve Qwen/Qwen3-8B \\
                --port 8000 \\
                --speculative-config '{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 5, "method": "draft_model"}'
""")
    assert codes(outcome) == [] and outcome.refused == []


def test_fixture_bash_c_inline_flag(tmp_path, monkeypatch):
    before = (FIXTURES / "own/bash-c-vllm.yaml").read_text()
    after, _ = fix_text(tmp_path, monkeypatch, "bash.yaml", before)
    assert after == before.replace("Qwen/Qwen3-0.6B --swap-space 4 \\\n", "Qwen/Qwen3-0.6B \\\n")


def test_configmap_script(tmp_path, monkeypatch):
    before = (FIXTURES / "original/multi-node-statefulset.yaml").read_text()
    after, outcome = fix_text(tmp_path, monkeypatch, "multi.yaml", before)
    assert after == before.replace(
        "    python -m vllm.entrypoints.openai.api_server \\\n      --model=/models/llama-3.1-70b \\\n",
        "    vllm serve /models/llama-3.1-70b \\\n")
    assert "VL101:vllm.entrypoints.openai.api_server" not in codes(outcome)
    assert "VL103:--rank" in codes(outcome)  # no fix: multi-node needs other flags, not a deletion


def test_shell_script(tmp_path, monkeypatch):
    before = (FIXTURES / "original/speculative-decoding.sh").read_text()
    after, outcome = fix_text(tmp_path, monkeypatch, "serve.sh", before)
    assert after == (
        "vllm serve meta-llama/Llama-3.1-70B-Instruct \\\n"
        "  --speculative-config '{\"model\": \"meta-llama/Llama-3.1-8B-Instruct\", \"num_speculative_tokens\": 5, "
        "\"method\": \"draft_model\"}'\n")
    assert outcome.applied == 2 and codes(outcome) == []


def test_one_line_double_quoted_shell_string(tmp_path, monkeypatch):
    before = ('apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n'
              '    image: vllm/vllm-openai:v0.29.0\n'
              '    command: ["/bin/sh", "-c", "exec vllm serve Qwen/Qwen3-8B --speculative-model Qwen/Qwen3-0.6B '
              '--num-speculative-tokens 3 --disable-log-requests"]\n')
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", before)
    assert after.endswith('"exec vllm serve Qwen/Qwen3-8B --speculative-config \'{\\"model\\": \\"Qwen/Qwen3-0.6B\\", '
                          '\\"num_speculative_tokens\\": 3, \\"method\\": \\"draft_model\\"}\'"]\n')
    assert codes(outcome) == []


def test_args_after_the_image_entrypoint(tmp_path, monkeypatch):
    before = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
              "    image: vllm/vllm-openai:v0.29.0\n"
              "    args:\n    - --model\n    - Qwen/Qwen3-0.6B\n    - --worker-use-ray  # old Ray switch\n"
              "    - --max-seq-len-to-capture=8192\n")
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", before)
    assert after == before.replace("    - --worker-use-ray  # old Ray switch\n    - --max-seq-len-to-capture=8192\n",
                                   "    - --distributed-executor-backend  # old Ray switch\n    - ray\n")
    assert outcome.applied == 2


@pytest.mark.parametrize("name,source", [
    ("deploy.yaml", (FIXTURES / "own/original-deployment-with-removed-flags.yaml").read_text()),
    ("pod.yaml", FLOW), ("deploy.yaml", BASH_C),
    ("manifest.json", (FIXTURES / "own/manifest.json").read_text()),
    ("multi.yaml", (FIXTURES / "original/multi-node-statefulset.yaml").read_text()),
    ("serve.sh", (FIXTURES / "original/speculative-decoding.sh").read_text()),
])
def test_second_run_changes_nothing(tmp_path, monkeypatch, name, source):
    first, outcome = fix_text(tmp_path, monkeypatch, name, source, unsafe=True)
    assert outcome.applied > 0
    again = run_fixes([name], LintOptions(), unsafe=True)
    assert again.applied == 0 and again.diff == "" and again.files == []
    assert (tmp_path / name).read_text() == first


# --- what is and is not fixed -------------------------------------------------------------------------
POD_MONITOR = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata:
      labels: {app: vllm}
      annotations:
        prometheus.io/port: "8001"   # wrong port
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        command: [vllm, serve, Qwen/Qwen3-8B, --rope-scaling, '{"type": "yarn"}']
        ports:
        - {name: http, containerPort: 8000}
        - {name: metrics, containerPort: 8001}
---
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata: {name: vllm}
spec:
  selector:
    matchLabels: {app: vllm}
  podMetricsEndpoints:
  - port: metrics
"""


def test_unsafe_fixes_only_when_asked(tmp_path, monkeypatch):
    after, outcome = fix_text(tmp_path, monkeypatch, "mon.yaml", POD_MONITOR)
    # safe: the numeric annotation; left: the named PodMonitor port and dropping --rope-scaling
    assert after == POD_MONITOR.replace('prometheus.io/port: "8001"', 'prometheus.io/port: "8000"')
    assert codes(outcome) == ["VL102:--rope-scaling", "VL301:8001"]
    assert all(f.fix.safety == UNSAFE for f in outcome.result.findings if f.code in MINE)

    after, outcome = fix_text(tmp_path, monkeypatch, "mon.yaml", POD_MONITOR, unsafe=True)
    assert after == POD_MONITOR.replace('prometheus.io/port: "8001"', 'prometheus.io/port: "8000"').replace(
        "  - port: metrics\n", "  - port: http\n").replace(", --rope-scaling, '{\"type\": \"yarn\"}'", "")
    assert codes(outcome) == []


def test_service_target_port(tmp_path, monkeypatch):
    from vllmlint.registry import rule

    example = rule("VL301").docs["example"]
    after, outcome = fix_text(tmp_path, monkeypatch, "svc.yaml", example)
    assert after == example.replace("  - port: 8001\n    targetPort: 8001\n", "  - port: 8001\n    targetPort: 8000\n")
    assert [f for f in outcome.result.findings if f.code == "VL301"] == []


DEMO = """\
apiVersion: v1
kind: Pod
metadata: {name: demo}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: ["python3", "-m", "vllm.entrypoints.api_server", "--model", "Qwen/Qwen3-0.6B", "--swap-space", "4"]
"""


def test_demo_server_is_never_rewritten(tmp_path, monkeypatch):
    after, outcome = fix_text(tmp_path, monkeypatch, "demo.yaml", DEMO, unsafe=True)
    # Its removed flag goes (the same parser rejects it); the module stays: another API.
    assert after == DEMO.replace(', "--swap-space", "4"]', "]")
    demo = [f for f in outcome.result.findings if f.code == "VL101"]
    assert len(demo) == 1 and demo[0].fix is None and demo[0].value == "vllm.entrypoints.api_server"


SPECULATIVE_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: spec{annotation}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:{tag}
    command: [vllm, serve, Qwen/Qwen3-8B, --speculative-model, Qwen/Qwen3-0.6B, --num-speculative-tokens, "4"]
"""


@pytest.mark.parametrize("tag,annotation,fixed", [
    ("v0.8.4", "", False),
    ("latest", "\n  annotations: {vllmlint.io/vllm-version: 0.8.4}", False),
    ("v0.8.5.post1", "", True),
    # 0.8.5 is not catalogued: 0.8.5.post1 stands in, and both have --speculative-config
    ("v0.8.5", "", True),
    ("latest", "", True),  # unknown release: the newest
])
def test_speculative_config_only_from_0_8_5(tmp_path, monkeypatch, tag, annotation, fixed):
    before = SPECULATIVE_POD.format(tag=tag, annotation=annotation)
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", before, unsafe=True)
    if fixed:
        assert after == before.replace(
            '--speculative-model, Qwen/Qwen3-0.6B, --num-speculative-tokens, "4"]',
            '--speculative-config, \'{"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4, '
            '"method": "draft_model"}\']')
    else:
        assert after == before
        assert "VL102:--speculative-model" in codes(outcome)


def test_no_speculative_fix_for_a_draft_model_of_another_method(tmp_path, monkeypatch):
    before = SPECULATIVE_POD.format(tag="v0.29.0", annotation="").replace("Qwen/Qwen3-0.6B", "yuhuili/EAGLE-LLaMA3-8B")
    after, _ = fix_text(tmp_path, monkeypatch, "pod.yaml", before, unsafe=True)
    assert after == before


def test_removed_flag_on_a_release_that_still_has_it_is_left_alone(tmp_path, monkeypatch):
    before = SPECULATIVE_POD.format(tag="v0.17.1", annotation="").replace(
        '--speculative-model, Qwen/Qwen3-0.6B, --num-speculative-tokens, "4"', '--swap-space, "4"')
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", before, unsafe=True)
    assert after == before and outcome.applied == 0


# --- verification and writing -----------------------------------------------------------------------------
FLOW_ENTRYPOINT_ONLY = FLOW.replace(
    '[python3, -m, vllm.entrypoints.openai.api_server, --swap-space, "16", --model, Qwen/Qwen3-8B]',
    '[vllm, serve, Qwen/Qwen3-8B, --swap-space, "16"]')


def test_refuses_a_fix_that_breaks_parsing(tmp_path, monkeypatch):
    from vllmlint.checks import vl102_removed_flag

    def broken_fix(invocation, option, entry):
        token = option.token
        return Fix([Edit(token.source.display_path, token.start, token.end, "[unclosed")], SAFE, "broken on purpose")

    monkeypatch.setattr(vl102_removed_flag, "_drop_fix", broken_fix)
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", FLOW)
    # Each broken fix is skipped alone, with one line; the entrypoint fix of the same file still applies
    # (old code: the whole file was refused).
    assert after == FLOW_ENTRYPOINT_ONLY
    assert outcome.files == ["pod.yaml"] and outcome.applied == 1
    assert [path for path, _ in outcome.refused] == ["pod.yaml", "pod.yaml"]
    assert outcome.refused[0][1].startswith("VL102 at line 9: the fixed text would not parse (line 10: YAML")
    assert outcome.refused[1][1].startswith("VL102 at line 10: the fixed text would not parse (line 11: YAML")
    assert all(len(reason) < 140 for _, reason in outcome.refused)
    assert codes(outcome) == ["VL102:--swap-space", "VL102:--use-v2-block-manager"]  # the file as it is now


def test_refuses_a_fix_that_adds_a_finding(tmp_path, monkeypatch):
    from vllmlint.checks import vl102_removed_flag

    def pin_to_latest(invocation, option, entry):
        image = invocation.container.image
        return Fix([Edit(image.source.display_path, image.start, image.end, "vllm/vllm-openai:latest")], SAFE, "bad")

    monkeypatch.setattr(vl102_removed_flag, "_drop_fix", pin_to_latest)
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", FLOW)
    assert after == FLOW_ENTRYPOINT_ONLY  # one fix shared by the two findings: skipped once, the other applies
    assert outcome.refused == [("pod.yaml", "VL102 at line 9: the fix would add VL201 at pod.yaml:7")]


def test_one_refused_file_does_not_block_another(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.sh").write_text("vllm serve Qwen/Qwen3-8B --swap-space 4\n")
    (tmp_path / "bad.yaml").write_text(FLOW)
    from vllmlint.checks import vl101_deprecated_entrypoint

    def breaking(invocation):
        token = invocation.entry[-1]
        return Fix([Edit(token.source.display_path, token.start, token.end, "{")], SAFE, "broken on purpose")

    monkeypatch.setattr(vl101_deprecated_entrypoint, "serve_fix", breaking)
    outcome = run_fixes(["."], LintOptions())
    # bad.yaml's broken entrypoint fix is skipped; its two flag fixes and good.sh's apply.
    assert outcome.files == ["bad.yaml", "good.sh"] and outcome.applied == 3
    assert [path for path, _ in outcome.refused] == ["bad.yaml"]
    assert outcome.refused[0][1].startswith("VL101 at line 9: the fixed text would not parse")
    assert (tmp_path / "good.sh").read_text() == "vllm serve Qwen/Qwen3-8B\n"
    assert (tmp_path / "bad.yaml").read_text() == FLOW.replace(', --swap-space, "16"', "").replace(
        ", --use-v2-block-manager", "")


def test_write_false_only_reports(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(FLOW)
    outcome = run_fixes(["pod.yaml"], LintOptions(), write=False)
    assert (tmp_path / "pod.yaml").read_text() == FLOW
    assert outcome.files == ["pod.yaml"] and outcome.applied == 3 and "+    args: [--port, \"8000\"]\n" in outcome.diff
    assert codes(outcome) == []  # what would remain after writing


def test_mode_kept_and_no_temporary_file_left(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "serve.sh"
    path.write_text("#!/bin/sh\nexec vllm serve Qwen/Qwen3-8B --swap-space 4\n")
    os.chmod(path, 0o751)
    outcome = run_fixes(["serve.sh"], LintOptions())
    assert outcome.applied == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_text() == "#!/bin/sh\nexec vllm serve Qwen/Qwen3-8B\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["serve.sh"]


def test_a_link_inside_the_tree_fixes_the_file_it_points_to(tmp_path, monkeypatch):
    # A file reached by its own name and through a link inside the tree is linted once, under its own
    # name, whichever name the scan meets first; the fix writes it, and the link stays a link.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "serve.sh"
    real.write_text("vllm serve Qwen/Qwen3-8B --swap-space 4\n")
    (tmp_path / "link.sh").symlink_to(real)
    outcome = run_fixes(["."], LintOptions())
    assert (tmp_path / "link.sh").is_symlink()
    assert real.read_text() == "vllm serve Qwen/Qwen3-8B\n"
    assert outcome.files == ["real/serve.sh"] and outcome.refused == []


def test_a_link_inside_the_tree_is_written_through(tmp_path, monkeypatch):
    # The target is not scanned by its own name (a hidden folder): the link is the linted name, and the
    # fix replaces its target, atomically, keeping its mode.
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".shared").mkdir()
    real = tmp_path / ".shared" / "serve.sh"
    real.write_text("vllm serve Qwen/Qwen3-8B --swap-space 4\n")
    os.chmod(real, 0o750)
    (tmp_path / "serve.sh").symlink_to(Path(".shared") / "serve.sh")
    outcome = run_fixes(["."], LintOptions())
    assert outcome.files == ["serve.sh"] and outcome.refused == []
    assert (tmp_path / "serve.sh").is_symlink() and real.read_text() == "vllm serve Qwen/Qwen3-8B\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o750
    assert sorted(p.name for p in (tmp_path / ".shared").iterdir()) == ["serve.sh"]
    real.write_text("vllm serve Qwen/Qwen3-8B --swap-space 4\n")
    os.chmod(real, 0o444)  # the usual checks apply to the target
    outcome = run_fixes(["."], LintOptions())
    assert real.read_text() == "vllm serve Qwen/Qwen3-8B --swap-space 4\n"
    assert outcome.refused == [("serve.sh", "read-only (mode 0444): left as it is")]


def test_a_link_out_of_the_linted_paths_is_never_written_through(tmp_path, monkeypatch):
    # Issue 8: a link's target outside what was linted is never written. A link named on the command
    # line leaves the given paths, whatever it points to; the link stays, its target stays as it was,
    # and the refusal says why in one line.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "serve.sh"
    real.write_text("vllm serve Qwen/Qwen3-8B --swap-space 4\n")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "link.sh").symlink_to(real)
    for given in (["link.sh"], ["tree/link.sh"]):
        if given == ["link.sh"]:
            (tmp_path / "link.sh").symlink_to(real)
        outcome = run_fixes(given, LintOptions())
        assert real.read_text() == "vllm serve Qwen/Qwen3-8B --swap-space 4\n"
        assert outcome.refused == [(given[0], "a symbolic link to outside the linted paths: vllmlint does not "
                                              "write through it (fix the file it points to)")]
        assert outcome.files == [] and outcome.applied == 0
        assert codes(outcome) == ["VL102:--swap-space"]
    # followed with --follow-links (the CLI passes them as `outside`): linted, never fixed
    outcome = run_fixes(["tree/link.sh"], LintOptions(), roots=["tree"], outside=["tree/link.sh"])
    assert real.read_text() == "vllm serve Qwen/Qwen3-8B --swap-space 4\n"
    assert outcome.refused == [("tree/link.sh", "reached through a symbolic link that leaves the linted paths: "
                                                "--follow-links lints it, no fix writes it")]
    assert codes(outcome) == ["VL102:--swap-space"]


def test_crlf_and_bom_survive(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = FLOW.replace("\n", "\r\n")
    (tmp_path / "pod.yaml").write_bytes(b"\xef\xbb\xbf" + text.encode())
    run_fixes(["pod.yaml"], LintOptions())
    data = (tmp_path / "pod.yaml").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\n" not in data.replace(b"\r\n", b"")
    assert b"command: [vllm, serve, Qwen/Qwen3-8B]\r\n" in data


def test_unfixable_forms_get_no_fix():
    folded = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
              "    image: vllm/vllm-openai:v0.29.0\n    command:\n    - sh\n    - -c\n    - >\n"
              "      vllm serve Qwen/Qwen3-8B\n      --swap-space 4\n")
    findings = [f for f in lint_text(folded).findings if f.code == "VL102"]
    assert findings and findings[0].fix is None  # folded scalar: a file line is not a script line


# --- edit helpers -------------------------------------------------------------------------------------------
def test_edit_conflicts():
    a = Edit("f", 0, 5, "")
    assert _conflict(a, Edit("f", 4, 6, "x"))
    assert not _conflict(a, Edit("f", 5, 6, ""))  # touching is fine
    assert _conflict(Edit("f", 3, 3, "x"), a)  # an insertion inside a range
    assert not _conflict(Edit("f", 5, 5, "x"), a)
    assert _conflict(Edit("f", 5, 5, "x"), Edit("f", 5, 5, "y"))  # two insertions: order unknown
    assert apply_edits("abcdef", [Edit("f", 0, 1, "X"), Edit("f", 3, 3, "-"), Edit("f", 5, 6, "")]) == "Xbc-de"


SHIM = """\
apiVersion: v1
kind: Pod
metadata: {name: shim}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: [{python}, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen3-8B]
"""


def test_interpreter_options_and_paths(tmp_path, monkeypatch):
    with_option = SHIM.replace("{python}", "python3, -u")
    after, _ = fix_text(tmp_path, monkeypatch, "pod.yaml", with_option, unsafe=True)
    assert after == with_option  # `vllm` would drop `-u`

    venv = SHIM.replace("{python}", "/opt/venv/bin/python")
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", venv)
    assert after == venv and [f.fix.safety for f in outcome.result.findings if f.code == "VL101"] == [UNSAFE]
    after, _ = fix_text(tmp_path, monkeypatch, "pod.yaml", venv, unsafe=True)
    assert after == venv.replace("[/opt/venv/bin/python, -m, vllm.entrypoints.openai.api_server, --model, ",
                                 "[vllm, serve, ")


def test_a_narrow_selection_is_still_verified_against_every_rule(tmp_path, monkeypatch):
    from vllmlint.checks import vl102_removed_flag

    def pin_to_latest(invocation, option, entry):
        image = invocation.container.image
        return Fix([Edit(image.source.display_path, image.start, image.end, "vllm/vllm-openai:latest")], SAFE, "bad")

    monkeypatch.setattr(vl102_removed_flag, "_drop_fix", pin_to_latest)
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", FLOW, options=LintOptions(select=["VL102"]))
    assert after == FLOW and outcome.refused and "VL201" in outcome.refused[0][1]
    assert {f.code for f in outcome.result.findings} == {"VL102"}  # the result keeps the selection


def test_selection_limits_what_is_fixed(tmp_path, monkeypatch):
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", FLOW, options=LintOptions(select=["VL102"]))
    assert after == FLOW.replace(', --swap-space, "16"', "").replace(", --use-v2-block-manager]", "]")
    assert outcome.applied == 2


SERVICE_MONITOR = """\
apiVersion: apps/v1
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
        command: [vllm, serve, Qwen/Qwen3-8B]
---
apiVersion: v1
kind: Service
metadata:
  name: vllm
  labels: {app: vllm}
spec:
  selector: {app: vllm}
  ports:
  - {name: http, port: 8000, targetPort: 8000}
  - {name: scrape, port: 9090, targetPort: 9090}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: vllm}
spec:
  selector:
    matchLabels: {app: vllm}
  endpoints:
  - port: scrape  # the sidecar that never was
"""


def test_service_monitor_named_port_is_an_unsafe_fix(tmp_path, monkeypatch):
    after, outcome = fix_text(tmp_path, monkeypatch, "mon.yaml", SERVICE_MONITOR)
    assert after == SERVICE_MONITOR
    assert [(f.code, f.fix.safety) for f in outcome.result.findings if f.code == "VL301"] == [("VL301", UNSAFE)]
    after, outcome = fix_text(tmp_path, monkeypatch, "mon.yaml", SERVICE_MONITOR, unsafe=True)
    assert after == SERVICE_MONITOR.replace("  - port: scrape  #", "  - port: http  #")
    assert codes(outcome) == []


def test_a_failed_write_leaves_the_file_and_no_temporary(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "serve.sh").write_text("vllm serve Qwen/Qwen3-8B --swap-space 4\n")

    def failing_replace(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    outcome = run_fixes(["serve.sh"], LintOptions())
    assert outcome.refused == [("serve.sh", "cannot write the fixed file: disk full")]
    assert outcome.files == [] and outcome.applied == 0 and outcome.diff == ""
    assert codes(outcome) == ["VL102:--swap-space"]  # the result describes the file as it is
    assert (tmp_path / "serve.sh").read_text() == "vllm serve Qwen/Qwen3-8B --swap-space 4\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["serve.sh"]


@pytest.mark.parametrize("flags,fixed", [
    ("--multi-step-stream-outputs, Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),  # a switch: the model stays
    ("--swap-space, '4', Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),  # a value: it goes with its flag
    ("--guided-decoding-disable-fallback, Qwen/Qwen3-8B", None),  # took a value: was that the model?
])
def test_a_removed_flag_takes_its_value_as_its_last_release_read_it(tmp_path, monkeypatch, flags, fixed):
    before = SPECULATIVE_POD.format(tag="v0.29.0", annotation="").replace(
        'Qwen/Qwen3-8B, --speculative-model, Qwen/Qwen3-0.6B, --num-speculative-tokens, "4"', flags)
    after, _ = fix_text(tmp_path, monkeypatch, "pod.yaml", before, unsafe=True)
    assert after == (before if fixed is None else before.replace(flags, fixed))


def test_plain_shell_string_gets_compact_json_or_no_fix(tmp_path, monkeypatch):
    block = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
             "    image: vllm/vllm-openai:v0.29.0\n    command:\n    - sh\n    - -c\n"
             "    - exec vllm serve Qwen/Qwen3-8B --speculative-model Qwen/Qwen3-0.6B --num-speculative-tokens 2\n")
    after, _ = fix_text(tmp_path, monkeypatch, "pod.yaml", block)
    # ": " would end a plain scalar: the compact JSON keeps the scalar plain and the same string
    assert after == block.replace("--speculative-model Qwen/Qwen3-0.6B --num-speculative-tokens 2",
                                  "--speculative-config '{\"model\":\"Qwen/Qwen3-0.6B\",\"num_speculative_tokens\":2,"
                                  "\"method\":\"draft_model\"}'")
    flow = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
            "    image: vllm/vllm-openai:v0.29.0\n"
            "    command: [sh, -c, exec vllm serve Qwen/Qwen3-8B --speculative-model Qwen/Qwen3-0.6B "
            "--num-speculative-tokens 2]\n")
    after, outcome = fix_text(tmp_path, monkeypatch, "pod.yaml", flow, unsafe=True)
    assert after == flow  # `,` and `{}` would end a plain item of a flow list: no fix
    assert "VL102:--speculative-model" in codes(outcome)


# --- each fix verified on its own (issue 24) ------------------------------------------------------------------
def _pods(count):
    return "---\n".join(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  containers:\n  - name: vllm\n"
        f"    image: vllm/vllm-openai:v0.29.0\n    args: [--swap-space=4, --model, m]\n" for i in range(count))


def _break_pods(monkeypatch, broken):
    """VL102's fix of the Pods named in `broken` leaves an unclosed flow list; the others are real."""
    from vllmlint.checks import vl102_removed_flag

    real = vl102_removed_flag._drop_fix

    def maybe_broken(invocation, option, entry):
        token = option.token
        line = token.source.line_col(token.start)[0]  # Pod i's args are on line 8 + 9 i
        if f"p{(line - 8) // 9}" in broken:
            return Fix([Edit(token.source.display_path, token.start, token.end, "[")], SAFE, "broken on purpose")
        return real(invocation, option, entry)

    monkeypatch.setattr(vl102_removed_flag, "_drop_fix", maybe_broken)


def _count_lints(monkeypatch):
    from vllmlint.fix import apply

    calls = []
    real = apply._lint_texts

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(apply, "_lint_texts", counted)
    return calls


def test_the_fixes_that_break_a_file_are_found_and_skipped_alone(tmp_path, monkeypatch):
    _break_pods(monkeypatch, {"p3", "p17"})
    calls = _count_lints(monkeypatch)
    text = _pods(40)
    after, outcome = fix_text(tmp_path, monkeypatch, "pods.yaml", text)
    assert outcome.applied == 38 and outcome.files == ["pods.yaml"]
    assert [reason.split(":")[0] for _, reason in outcome.refused] == ["VL102 at line 35", "VL102 at line 161"]
    assert all("the fixed text would not parse (line" in reason for _, reason in outcome.refused)
    assert after.count("--swap-space=4") == 2 and "name: p3}" in after.split("--swap-space=4")[0]
    # two bisections over 40 fixes: about 2 x log2(40) lints, far fewer than one per fix
    assert len(calls) <= 16, len(calls)
    again = run_fixes(["pods.yaml"], LintOptions())
    assert again.applied == 0 and len(again.refused) == 2 and (tmp_path / "pods.yaml").read_text() == after


def test_checking_one_by_one_is_bounded(tmp_path, monkeypatch):
    # Every fix breaks the file: after MAX_CHECKS lints the rest of the round is dropped with one line per file.
    from vllmlint.fix.apply import MAX_CHECKS

    _break_pods(monkeypatch, {f"p{i}" for i in range(200)})
    calls = _count_lints(monkeypatch)
    text = _pods(200)
    after, outcome = fix_text(tmp_path, monkeypatch, "pods.yaml", text)
    assert after == text and outcome.applied == 0
    assert len(calls) <= MAX_CHECKS + 4, len(calls)
    assert 2 <= len(outcome.refused) <= MAX_CHECKS // 7 + 1
    assert outcome.refused[-1][1] == (f"{200 - (len(outcome.refused) - 1)} fix(es) here not applied: too many fixes "
                                      "of this run would add a finding or break a file to check each one")


def test_a_fix_that_adds_a_finding_in_another_file_is_blamed_alone(tmp_path, monkeypatch):
    # The VL301 fix of the Service makes the NetworkPolicy's VL805 appear in another file: only that fix is
    # skipped (old code: every changed file of the run was refused with the same 580-character reason).
    monkeypatch.chdir(tmp_path)
    for name in ("metrics-service-monitor.yaml", "network-policy.yaml", "single-node-deployment.yaml",
                 "speculative-decoding.sh"):
        (tmp_path / name).write_text((FIXTURES / "original" / name).read_text())
    outcome = run_fixes(["."], LintOptions())
    assert outcome.refused == [("metrics-service-monitor.yaml",
                                "VL301 at line 12: the fix would add VL805 at network-policy.yaml:10")]
    assert outcome.files == ["single-node-deployment.yaml", "speculative-decoding.sh"] and outcome.applied == 3
    assert (tmp_path / "metrics-service-monitor.yaml").read_text() == \
        (FIXTURES / "original" / "metrics-service-monitor.yaml").read_text()


def test_giving_up_is_one_line_for_the_whole_run(tmp_path, monkeypatch):
    _break_pods(monkeypatch, {"p0"})
    monkeypatch.chdir(tmp_path)
    for number in range(120):
        (tmp_path / f"pod{number:03}.yaml").write_text(_pods(1))
    outcome = run_fixes(["."], LintOptions())
    assert outcome.applied == 0 and 2 <= len(outcome.refused) <= 6
    path, reason = outcome.refused[-1]
    skipped = len(outcome.refused) - 1
    assert reason == (f"{120 - skipped} fix(es) here and in {120 - skipped - 1} other file(s) not applied: too many "
                      "fixes of this run would add a finding or break a file to check each one")


def test_a_file_a_kustomization_names_is_fixed_once(tmp_path, monkeypatch):
    # The fixed text must reach the Kustomization that names the file. Old code: it read the disk's text as
    # well, saw two vLLM commands instead of one, and refused the fix of every base.
    monkeypatch.chdir(tmp_path)
    for number in range(3):
        (tmp_path / f"b{number}").mkdir()
        (tmp_path / f"b{number}" / "pod.yaml").write_text(_pods(1).replace("name: p0", f"name: p{number}"))
        (tmp_path / f"b{number}" / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    (tmp_path / "kustomization.yaml").write_text("resources: [b0, b1, b2]\n")
    outcome = run_fixes(["."], LintOptions())
    assert outcome.refused == [] and outcome.applied == 3
    assert outcome.files == ["b0/pod.yaml", "b1/pod.yaml", "b2/pod.yaml"]
    assert "--swap-space" not in (tmp_path / "b1" / "pod.yaml").read_text()
    assert run_fixes(["."], LintOptions()).applied == 0
