"""Issue 13, "Output that respects the user": what the command line prints, tried as a new user would."""
import json
import re
import subprocess

from conftest import run_cli

COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:latest
    command: ["--model", "Qwen/Qwen3-0.6B", "--swap-space", "4"]
    gpus: all
"""


def _repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "sub" / "compose.yaml").write_text(COMPOSE)
    return repo


# --- 1. paths -------------------------------------------------------------------------------------
def test_text_paths_are_relative_to_the_current_folder(tmp_path):
    repo = _repo(tmp_path)
    _, out, err = run_cli("compose.yaml", cwd=repo / "sub")
    assert out.splitlines()[0].startswith("compose.yaml:3:")
    assert "sub/compose.yaml" not in out + err
    _, out, _ = run_cli("sub/compose.yaml", cwd=repo)
    assert out.splitlines()[0].startswith("sub/compose.yaml:3:")


def test_diff_headers_are_relative_to_the_current_folder(tmp_path):
    repo = _repo(tmp_path)
    code, out, _ = run_cli("--diff", "compose.yaml", cwd=repo / "sub")
    assert code == 1 and out.startswith("--- compose.yaml\n+++ compose.yaml\n")
    patched = subprocess.run(["patch", "-p0", "--dry-run"], input=out.encode(), cwd=repo / "sub", capture_output=True)
    assert patched.returncode == 0, patched.stdout + patched.stderr


def test_machine_formats_stay_repository_relative(tmp_path):
    repo = _repo(tmp_path)
    _, out, _ = run_cli("--format", "json", "compose.yaml", cwd=repo / "sub")
    assert {f["path"] for f in json.loads(out)["findings"]} == {"sub/compose.yaml"}
    _, out, _ = run_cli("--format", "sarif", "compose.yaml", cwd=repo / "sub")
    location = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "sub/compose.yaml", "uriBaseId": "%SRCROOT%"}
    _, out, _ = run_cli("--format", "github", "compose.yaml", cwd=repo / "sub")
    assert "file=sub/compose.yaml," in out
    _, out, _ = run_cli("--format", "junit", "compose.yaml", cwd=repo / "sub")
    assert 'file="sub/compose.yaml"' in out
    run_cli("--write-baseline", repo / "b.json", "compose.yaml", cwd=repo / "sub")
    assert "sub/compose.yaml" in (repo / "b.json").read_text()


# --- 2. notes -------------------------------------------------------------------------------------
def _unpinned(tmp_path, count=3):
    for i in range(count):
        (tmp_path / f"c{i}.yaml").write_text(COMPOSE.replace("vllm:", f"vllm{i}:"))
    return [f"c{i}.yaml" for i in range(count)]


def test_notes_are_summarised_one_line_per_kind(tmp_path):
    _, _, err = run_cli(*_unpinned(tmp_path), cwd=tmp_path)
    assert err.splitlines() == ["vllmlint: note: 3 workloads assume vLLM 0.33.0 (release unknown): --show-notes to list"]


def test_show_notes_lists_every_note(tmp_path):
    _, _, err = run_cli("--show-notes", *_unpinned(tmp_path), cwd=tmp_path)
    lines = err.splitlines()
    assert len(lines) == 3 and all("vLLM release unknown (image vllm/vllm-openai:latest)" in line for line in lines)
    assert [line.split(":")[2].strip() for line in lines] == ["c0.yaml", "c1.yaml", "c2.yaml"]


def test_github_format_annotates_one_note_per_kind(tmp_path):
    _, out, _ = run_cli("--format", "github", *_unpinned(tmp_path), cwd=tmp_path)
    assert [line for line in out.splitlines() if "VL006" in line] == [
        "::notice title=VL006::3 workloads assume vLLM 0.33.0 (release unknown): --show-notes to list "
        "(the first at c0.yaml:4)"]
    _, out, _ = run_cli("--format", "github", "--show-notes", *_unpinned(tmp_path), cwd=tmp_path)
    assert [line.split("::")[1] for line in out.splitlines() if "VL006" in line] == [
        f"notice file=c{i}.yaml,line=4,title=VL006" for i in range(3)]


def test_one_note_of_a_kind_is_printed_in_full(tmp_path):
    _, _, err = run_cli(*_unpinned(tmp_path, 1), cwd=tmp_path)
    assert err.startswith("vllmlint: note: c0.yaml:4: Compose service vllm0: vLLM release unknown")


def test_ignoring_a_notice_code_hides_it(tmp_path):
    files = _unpinned(tmp_path)
    for args in (["--ignore", "VL006"], ["--ignore", "release-assumed"], ["--select", "VL102"]):
        _, out, err = run_cli(*args, *files, cwd=tmp_path)
        assert err == "", args
    _, out, _ = run_cli("--ignore", "VL006", "--format", "json", *files, cwd=tmp_path)
    assert json.loads(out)["notices"] == []
    _, out, _ = run_cli("--select", "VL102,VL006", "--format", "json", *files, cwd=tmp_path)
    assert len(json.loads(out)["notices"]) == 3


def test_notes_come_before_the_summary_and_quiet_hides_them(tmp_path):
    files = _unpinned(tmp_path)
    from conftest import ROOT
    import os
    import sys

    proc = subprocess.run([sys.executable, "-m", "vllmlint", *files], cwd=tmp_path, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT)))
    lines = proc.stdout.decode().splitlines()
    assert lines[-3].startswith("vllmlint: note: 3 workloads assume") and lines[-2].startswith("Found 9 problems")
    assert lines[-1] == "[*] 3 fixable with `--fix`."
    _, _, err = run_cli("-q", *files, cwd=tmp_path)
    assert err == ""
    _, _, err = run_cli("-q", "--show-notes", *files, cwd=tmp_path)
    assert len(err.splitlines()) == 3


# --- 4. fixes -------------------------------------------------------------------------------------
FIXABLE = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.29.0
          command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
          args: ["--model", "Qwen/Qwen3-0.6B", "--swap-space", "4"]
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
          env: [{name: HOME, value: /tmp}]
      runtimeClassName: nvidia
      automountServiceAccountToken: false
      securityContext: {runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
  selector: {matchLabels: {app: vllm}}
"""
FIXED = FIXABLE.replace('["python3", "-m", "vllm.entrypoints.openai.api_server"]', '["vllm", "serve"]').replace(
    '["--model", "Qwen/Qwen3-0.6B", "--swap-space", "4"]', '["Qwen/Qwen3-0.6B"]')


def test_fixable_findings_are_marked_and_counted(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    _, out, _ = run_cli("fx.yaml", cwd=tmp_path)
    lines = out.splitlines()
    assert lines[0].startswith("fx.yaml:10:38: VL101 [warning] [*] `python -m vllm.entrypoints.openai.api_server`")
    assert any(line.startswith("fx.yaml:11:48: VL102 [error] [*]") for line in lines)
    assert lines[-1] == "[*] 2 fixable with `--fix`."
    _, out, _ = run_cli("-q", "fx.yaml", cwd=tmp_path)
    assert out.splitlines()[0].startswith("fx.yaml:10:38: VL101 [warning] [*]")
    _, out, _ = run_cli("--statistics", "fx.yaml", cwd=tmp_path)
    assert out.splitlines()[:2] == ["  1  VL101  [*]  deprecated-entrypoint", "  1  VL102  [*]  removed-flag"]
    (tmp_path / "fx.yaml").write_text(FIXABLE.replace(", \"--swap-space\", \"4\"", "").replace("v0.29.0", "latest"))
    _, out, _ = run_cli("--statistics", "fx.yaml", cwd=tmp_path)
    assert "  1  VL201       image-unpinned" in out.splitlines()  # fixable column blank: no fix


def test_statistics_in_json_count_per_rule(tmp_path):
    # Issue 13: `--statistics --format json` was a usage error; it is the counts, as JSON.
    (tmp_path / "fx.yaml").write_text(FIXABLE + "---\n" + FIXABLE.replace("name: vllm}", "name: two}"))
    code, out, _ = run_cli("--statistics", "--format", "json", "--select", "VL101,VL102,VL201", "fx.yaml",
                           cwd=tmp_path)
    data = json.loads(out)
    assert code == 1 and "findings" not in data and data["files_checked"] == 1
    assert data["statistics"] == [
        {"code": "VL101", "name": "deprecated-entrypoint", "count": 2,
         "severity": {"error": 0, "warning": 2, "info": 0}, "fixable": 2},
        {"code": "VL102", "name": "removed-flag", "count": 2,
         "severity": {"error": 2, "warning": 0, "info": 0}, "fixable": 2},
    ]
    assert data["summary"] == {"error": 2, "warning": 2, "info": 0}
    (tmp_path / "fx.yaml").write_text(FIXABLE.replace("v0.29.0", "latest"))
    _, out, _ = run_cli("--statistics", "--format", "json", "--select", "VL201", "fx.yaml", cwd=tmp_path)
    assert json.loads(out)["statistics"] == [{"code": "VL201", "name": "image-unpinned", "count": 1,
                                              "severity": {"error": 0, "warning": 1, "info": 0}, "fixable": 0}]
    # the other machine formats have no statistics: still refused
    code, out, err = run_cli("--statistics", "--format", "sarif", "fx.yaml", cwd=tmp_path)
    assert (code, out) == (2, "") and "--statistics" in err


def test_json_carries_the_edits_and_they_apply(tmp_path):
    from vllmlint.fix.apply import apply_edits
    from vllmlint.fix.edits import Edit

    (tmp_path / "fx.yaml").write_text(FIXABLE)
    _, out, _ = run_cli("--format", "json", "fx.yaml", cwd=tmp_path)
    findings = json.loads(out)["findings"]
    assert [f["fix"] for f in findings] == ["safe", "safe"]
    deletion = findings[1]["edits"]
    assert deletion == [{"path": "fx.yaml", "line": 11, "column": 46, "end_line": 11, "end_column": 67,
                         "start": 289, "end": 310, "replacement": ""}]
    assert FIXABLE[289:310] == ', "--swap-space", "4"'
    edits = [Edit(e["path"], e["start"], e["end"], e["replacement"]) for f in findings for e in f["edits"]]
    assert apply_edits(FIXABLE, edits) == FIXED


def test_sarif_fixes_are_valid_and_match_the_edits(tmp_path):
    from jsonschema import validators

    from vllmlint.data import schemas_dir

    (tmp_path / "fx.yaml").write_text(FIXABLE)
    _, out, _ = run_cli("--format", "sarif", "fx.yaml", cwd=tmp_path)
    log = json.loads(out)
    schema = json.loads((schemas_dir() / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    assert [e.message for e in validators.validator_for(schema)(schema).iter_errors(log)] == []
    fix = log["runs"][0]["results"][1]["fixes"]
    assert fix == [{"description": {"text": fix[0]["description"]["text"]}, "artifactChanges": [{
        "artifactLocation": {"uri": "fx.yaml", "uriBaseId": "%SRCROOT%"},
        "replacements": [{"deletedRegion": {"startLine": 11, "startColumn": 46, "endLine": 11, "endColumn": 67},
                          "insertedContent": {"text": ""}}]}]}]


def test_fix_on_standard_input_prints_the_fixed_text(tmp_path):
    code, out, err = run_cli("--fix", "--stdin-filename", "x.yaml", "-", input=FIXABLE.encode())
    assert out == FIXED and code == 0
    assert "fixed 2 problem(s) in x.yaml" in err
    code, out, err = run_cli("--fix", "--stdin-filename", "x.yaml", "-", input=FIXABLE.replace("v0.29.0", "latest").encode())
    assert code == 1 and "x.yaml:9:18: VL201 [warning]" in err  # what is left, on stderr
    code, out, _ = run_cli("--fix", "--stdin-filename", "x.yaml", "-", input=b"kind: Pod\n")
    assert (code, out) == (0, "kind: Pod\n")  # nothing to fix: the text as it came
    assert run_cli("--fix", "-", "other.yaml", input=FIXABLE.encode())[0] == 2


# --- 5. flags -------------------------------------------------------------------------------------
def test_exit_zero_keeps_errors_of_the_run(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    assert run_cli("fx.yaml", cwd=tmp_path)[0] == 1
    assert run_cli("--exit-zero", "fx.yaml", cwd=tmp_path)[0] == 0
    assert run_cli("--exit-zero", "fx.yaml", "nope.yaml", cwd=tmp_path)[0] == 2


def test_output_format_is_an_alias_of_format(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    _, out, _ = run_cli("--output-format", "json", "fx.yaml", cwd=tmp_path)
    assert len(json.loads(out)["findings"]) == 2


def test_several_reports_in_one_run(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    code, out, _ = run_cli("--format", "json", "--output", "r/a.json", "--format", "sarif", "-o", "r/b.sarif",
                           "--format", "github", "fx.yaml", cwd=tmp_path)
    assert code == 1
    assert len(json.loads((tmp_path / "r/a.json").read_text())["findings"]) == 2
    assert len(json.loads((tmp_path / "r/b.sarif").read_text())["runs"][0]["results"]) == 2
    assert out.startswith("::warning file=fx.yaml,line=10,")
    code, _, err = run_cli("--format", "json", "--format", "sarif", "fx.yaml", cwd=tmp_path)
    assert code == 2 and "give each --format its --output" in err


def test_github_format_by_default_under_github_actions(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    _, out, _ = run_cli("fx.yaml", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert out.startswith("::warning file=fx.yaml,line=10,")
    _, out, _ = run_cli("--format", "text", "fx.yaml", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert out.startswith("fx.yaml:10:38:")


def test_diff_is_coloured_on_request_only(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    _, plain, _ = run_cli("--diff", "fx.yaml", cwd=tmp_path)
    assert "\x1b[" not in plain and plain.startswith("--- fx.yaml\n")
    _, coloured, _ = run_cli("--diff", "--color", "always", "fx.yaml", cwd=tmp_path)
    assert coloured.startswith("\x1b[1m--- fx.yaml\x1b[0m\n")
    assert "\x1b[31m-          args: [\"--model\"" in coloured and "\x1b[32m+          args: [\"Qwen" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


def test_version_short_flag():
    code, out, _ = run_cli("-V")
    assert code == 0 and out.startswith("vllmlint, version ")


def test_show_files_lists_what_would_be_linted(tmp_path):
    repo = _repo(tmp_path)
    (repo / "sub" / "notes.txt").write_text("x")
    code, out, _ = run_cli("--show-files", ".", cwd=repo / "sub")
    assert (code, out) == (0, "compose.yaml\n")


def test_a_typo_of_a_subcommand_suggests_it(tmp_path):
    code, out, err = run_cli("chek", cwd=tmp_path)
    assert code == 2 and "did you mean `check`?" in err and out == ""
    (tmp_path / "chek").write_text("kind: Pod\n")  # a file of that name is linted
    assert run_cli("chek", cwd=tmp_path)[0] == 0


# --- 6. outputs, JUnit, VL001 ---------------------------------------------------------------------
def test_output_into_a_missing_folder_creates_it(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    code, _, err = run_cli("--format", "sarif", "--output", "reports/ci/vllmlint.sarif", "fx.yaml", cwd=tmp_path)
    assert code == 1 and "internal error" not in err
    assert json.loads((tmp_path / "reports/ci/vllmlint.sarif").read_text())["runs"][0]["results"]
    (tmp_path / "file").write_text("")
    code, _, err = run_cli("--output", "file/x.txt", "fx.yaml", cwd=tmp_path)
    assert code == 2 and err.startswith("vllmlint: error: --output file/x.txt:") and "internal error" not in err


def test_junit_fails_only_at_or_above_fail_on(tmp_path):
    import xml.etree.ElementTree as ET

    (tmp_path / "fx.yaml").write_text(FIXABLE)  # one warning (VL101), one error (VL102)
    _, out, _ = run_cli("--format", "junit", "fx.yaml", cwd=tmp_path)
    suite = ET.fromstring(out).find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("2", "2")
    code, out, _ = run_cli("--format", "junit", "--fail-on", "error", "fx.yaml", cwd=tmp_path)
    suite = ET.fromstring(out).find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    passed = [case for case in suite.findall("testcase") if case.find("failure") is None]
    assert [case.get("name") for case in passed] == ["VL101 deprecated-entrypoint 10:38"]
    assert "VL101 [warning]" in passed[0].find("system-out").text
    assert code == 1  # the error still fails the run, as its testcase does


def test_select_never_hides_syntax_errors(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    (tmp_path / "broken.yaml").write_text("kind: Pod\nspec: [unclosed\n")
    code, out, _ = run_cli("--select", "VL201", "-q", "fx.yaml", "broken.yaml", cwd=tmp_path)
    assert code == 1 and out.startswith("broken.yaml:3:1: VL001 [error] YAML syntax error")
    code, out, _ = run_cli("--select", "VL201", "--ignore", "VL001", "-q", "broken.yaml", cwd=tmp_path)
    assert (code, out) == (0, "")  # an explicit --ignore still counts


# --- 7. pre-commit --------------------------------------------------------------------------------
def test_pre_commit_ships_a_whole_repository_hook(tmp_path):
    import yaml

    from conftest import ROOT

    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert list(hooks) == ["vllmlint", "vllmlint-repo"]  # the per-file hook stays first, the default
    assert hooks["vllmlint"].get("pass_filenames", True) is True
    repo = hooks["vllmlint-repo"]
    assert repo["pass_filenames"] is False and repo["require_serial"] is True and repo["args"] == ["."]
    assert repo["language"] == "python" and repo["types_or"] == hooks["vllmlint"]["types_or"]
    # What pre-commit runs: entry + args, no file names. A commit touching only the HPA still sees the
    # Deployment it scales (VL401 is cross-file).
    (tmp_path / ".git").mkdir()
    (tmp_path / "hpa.yaml").write_text((ROOT / "fixtures/original/hpa.yaml").read_text())
    (tmp_path / "deploy.yaml").write_text((ROOT / "fixtures/original/single-node-deployment.yaml").read_text())
    code, out, _ = run_cli(*repo["args"], "--select", "VL401", "-q", cwd=tmp_path)
    assert code == 1 and out.startswith("hpa.yaml:15:13: VL401")
    # The default hook: its entry's options and the staged file; the rest of the tree is context
    words = hooks["vllmlint"]["entry"].split()
    assert words[:1] == ["vllmlint"] and "--context" in words
    code, out, _ = run_cli(*words[1:], "--select", "VL401", "-q", "hpa.yaml", cwd=tmp_path)
    assert code == 1 and out.startswith("hpa.yaml:15:13: VL401")
    assert run_cli("hpa.yaml", "--select", "VL401", "-q", cwd=tmp_path)[1] == ""  # the file alone: no context
