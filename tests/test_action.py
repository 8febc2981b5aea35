"""action.yml, the composite GitHub Action: its structure, and its shell steps run locally.

The steps run with bash as the runner would run them: each step's `env:` is evaluated from the inputs
(defaults overridden per test) and earlier steps' outputs, `$GITHUB_OUTPUT` is a temporary file, and the
installed step outputs are this interpreter and the `vllmlint` console script beside it. The install step
itself needs a package index for the dependencies and ~15 s, so it runs only with VLLMLINT_TEST_INSTALL=1.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from vllmlint.formatters import FORMATS

from conftest import FIXTURES, ROOT

ACTION = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
# Outputs of the actions the composite uses, from their action.yml.
KNOWN_ACTION_OUTPUTS = {"actions/setup-python": {"python-version", "python-path", "cache-hit"},
                        "actions/cache": {"cache-hit"}, "github/codeql-action/upload-sarif": {"sarif-id"}}
REMOVED_FLAGS = FIXTURES / "own" / "original-deployment-with-removed-flags.yaml"
# Clean under every default rule, notices included (hpa-cpu-ok.yaml now has a VL707 info: its 1-replica GPU
# Deployment surges on rollout); a NetworkPolicy gives no rule anything to report, alone or with the other file.
CLEAN = FIXTURES / "own" / "benchmark-client.yaml"  # no findings, alone or next to a vLLM Deployment
# The console script of the environment the tests run in: what the install step's `vllmlint` output names.
VLLMLINT = str(Path(sys.executable).parent / ("vllmlint.exe" if os.name == "nt" else "vllmlint"))
PINNED = re.compile(r"^\s+uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40})  # (v\d+\.\d+\.\d+) \(tag (v\d+)\)$", re.M)


@pytest.fixture(scope="module")
def action() -> dict:
    return YAML(typ="safe").load(ACTION.read_text(encoding="utf-8"))


def steps(action) -> list[dict]:
    return action["runs"]["steps"]


def step(action, step_id: str) -> dict:
    found = [s for s in steps(action) if s.get("id") == step_id]
    assert len(found) == 1, f"one step with id {step_id!r}"
    return found[0]


def strings(node):
    """Every string value in the parsed action, recursively."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)


@pytest.fixture(scope="module")
def check_help() -> str:
    proc = subprocess.run([sys.executable, "-m", "vllmlint", "check", "--help"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, env=dict(os.environ, COLUMNS="200"))
    assert proc.returncode == 0
    return proc.stdout


def help_choices(check_help: str, flag: str) -> list[str]:
    match = re.search(rf"{flag} \[([a-z|]+)\]", check_help)
    assert match, f"{flag} has no choices in `vllmlint check --help`"
    return match.group(1).split("|")


# --- structure -------------------------------------------------------------------------------------------
def test_is_a_composite_action_with_the_documented_inputs_and_outputs(action):
    assert action["runs"]["using"] == "composite"
    assert action["name"] and action["description"]
    inputs = action["inputs"]
    for name in ("paths", "format", "fail-on", "select", "ignore", "args", "config", "vllm-version", "sarif-file",
                 "upload-sarif", "category", "render", "helm-values", "job-summary"):
        assert name in inputs and inputs[name].get("description"), name
    assert inputs["paths"]["default"] == "."
    assert inputs["sarif-file"]["default"] == "vllmlint.sarif"
    assert inputs["upload-sarif"]["default"] == "true"
    assert "version" not in inputs  # it installed from PyPI, where vllmlint has never been published
    assert set(action["outputs"]) == {"sarif-file", "exit-code"}
    for output in action["outputs"].values():
        assert output["description"] and EXPRESSION.fullmatch(output["value"])


def test_every_input_referenced_exists_and_every_input_is_used(action):
    referenced = set()
    for text in strings(action["runs"]):
        referenced |= set(re.findall(r"\binputs\.([A-Za-z0-9_-]+)", text))
    for output in action["outputs"].values():
        referenced |= set(re.findall(r"\binputs\.([A-Za-z0-9_-]+)", output["value"]))
    assert referenced - set(action["inputs"]) == set(), "references to inputs that do not exist"
    assert set(action["inputs"]) - referenced == set(), "inputs that nothing uses"


def test_step_outputs_referenced_are_produced_by_earlier_steps(action):
    earlier: dict[str, set[str]] = {}
    for s in steps(action):
        texts = list(strings({k: v for k, v in s.items() if k != "run"}))
        for step_id, output in (m for t in texts for m in re.findall(r"\bsteps\.([\w-]+)\.outputs\.([\w-]+)", t)):
            assert step_id in earlier, f"step {s.get('name')!r} reads steps.{step_id} before it ran"
            assert output in earlier[step_id], f"steps.{step_id} has no output {output!r}"
        if "id" in s:
            if "run" in s:
                # Outputs are written as `echo "name=value"` (into $GITHUB_OUTPUT), or by Python as
                # `out.write(f"name={value}\nname={value}")` into the file that variable names.
                produced = set(re.findall(r'echo "([\w-]+)=', s["run"]))
                produced |= set(re.findall(r'(?:write\(f"|\\n)([\w-]+)=\{', s["run"]))
                assert produced and "$GITHUB_OUTPUT" in s["run"]
            else:
                produced = KNOWN_ACTION_OUTPUTS[s["uses"].split("@")[0]]
            earlier[s["id"]] = produced
    for output in action["outputs"].values():
        step_id, name = re.search(r"steps\.([\w-]+)\.outputs\.([\w-]+)", output["value"]).groups()
        assert name in earlier[step_id]


def test_shell_steps_take_inputs_only_through_env(action):
    for s in steps(action):
        if "run" in s:
            assert s["shell"] == "bash"
            # An expression inside the script would be pasted into it as shell code (script injection).
            assert "${{" not in s["run"], f"step {s['name']!r} expands an expression inside run:"
        else:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", s["uses"]), f"{s['uses']} is not pinned to a commit"


def test_actions_used_are_pinned_to_commits_with_their_tag_beside():
    text = ACTION.read_text(encoding="utf-8")
    uses = re.findall(r"^\s+uses: (.*)$", text, re.M)
    pinned = PINNED.findall(text)
    assert len(pinned) == len(uses) == 3, uses
    # Each SHA is the commit its tag named when it was pinned (read with `git rev-parse TAG^{commit}`).
    assert {(name, sha, tag) for name, sha, _, tag in pinned} == {
        ("actions/setup-python", "a26af69be951a213d495a4c3e4e4022e16d87065", "v5"),
        ("actions/cache", "0057852bfaa89a56745cba8c7296529d2fc39830", "v4"),
        ("github/codeql-action/upload-sarif", "8aad20d150bbac5944a9f9d289da16a4b0d87c1e", "v4")}
    for _, _, version, tag in pinned:
        assert version.startswith(tag + ".")


def test_python_never_runs_with_the_workspace_on_its_path(action):
    """The job's working folder is the linted checkout: `python -m X` or `python -c` there puts it first on
    sys.path, so a `json.py` of the tree would run. Every Python call uses -I; vllmlint is the console script."""
    counted = 0
    for s in steps(action):
        script = "\n".join(line.split("#", 1)[0] for line in s.get("run", "").splitlines())
        assert "-m vllmlint" not in script, s["name"]
        # a command's first word: at the start of a line, in `$(...)`, or after an assignment `X="..." `
        calls = re.findall(r'(?:^\s*|\$\(|" )"\$(PYTHON|venv_python|VLLMLINT_PYTHON)" (\S+)', script, re.M)
        for variable, first_argument in calls:
            assert first_argument == "-I", f"{s['name']}: ${variable} runs without -I"
        counted += len(calls)
    assert counted == 6  # pip cache dir, the version, the digest, venv, pip install, the summary


def test_sarif_is_uploaded_with_the_category_before_the_step_that_fails(action):
    ordered = steps(action)
    uploads = [i for i, s in enumerate(ordered) if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert len(uploads) == 1
    upload = ordered[uploads[0]]
    assert upload["uses"] == "github/codeql-action/upload-sarif@8aad20d150bbac5944a9f9d289da16a4b0d87c1e"
    # A token without security-events: write fails the upload, not the job; a step after it says why.
    assert upload["continue-on-error"] is True
    explain = ordered[uploads[0] + 1]
    assert explain["if"] == f"steps.{upload['id']}.outcome == 'failure'"
    assert "security-events: write" in explain["run"] and "actions: read" in explain["run"]
    assert upload["with"]["category"] == "${{ inputs.category }}"
    assert upload["with"]["sarif_file"] == "${{ steps.lint.outputs.sarif-file }}"
    assert "inputs.upload-sarif == 'true'" in upload["if"]
    assert "steps.summary.outputs.too-large != 'true'" in upload["if"]  # GitHub would reject it
    lint_index = ordered.index(step(action, "lint"))
    exit_steps = [i for i, s in enumerate(ordered) if "exit \"$STATUS\"" in s.get("run", "")]
    assert lint_index < uploads[0] < exit_steps[0] == len(ordered) - 1
    # The lint step itself must not fail on findings, or the upload would be skipped.
    assert step(action, "lint")["run"].rstrip().endswith("exit 0")


def test_flags_passed_to_vllmlint_exist(action, check_help):
    script = step(action, "lint")["run"]
    code_lines = "\n".join(line.split("#", 1)[0] for line in script.splitlines())
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", code_lines))
    assert {"--format", "--output", "--fail-on", "--select", "--ignore", "--vllm-version"} <= flags
    missing = sorted(f for f in flags if not re.search(rf"(?<![\w-]){re.escape(f)}\b", check_help))
    assert not missing, f"action.yml passes flags `vllmlint check` does not have: {missing}"
    # The fixed option values the script uses are ones the CLI accepts.
    assert {"sarif", "github"} <= set(help_choices(check_help, "--format"))
    assert "always" in help_choices(check_help, "--color")


def test_input_descriptions_list_the_cli_choices(action, check_help):
    inputs = action["inputs"]
    assert inputs["format"]["default"] in FORMATS
    for fmt in help_choices(check_help, "--format"):
        assert fmt in inputs["format"]["description"], f"format input does not mention {fmt}"
    assert inputs["fail-on"]["default"] == ""  # so a configuration file's fail-on is not overridden
    for level in help_choices(check_help, "--fail-on"):
        assert level in inputs["fail-on"]["description"]


# --- running the shell steps -------------------------------------------------------------------------
def evaluate(value: str, context: dict) -> str:
    """`${{ x.y }}` expressions in an env value: plain lookups only, which is all the action should need."""
    def lookup(match):
        key = match.group(1)
        assert key in context, f"unsupported or unknown expression ${{{{ {key} }}}}"
        return context[key]
    return EXPRESSION.sub(lookup, str(value))


def run_step(action, the_step: dict, context: dict, cwd: Path, tmp: Path, extra_env: dict | None = None):
    """Run one `run:` step with bash, as the runner does (`bash --noprofile --norc -eo pipefail`);
    return (exit code, stdout, stderr, outputs it wrote)."""
    output_file = tmp / f"output-{the_step.get('id', 'step')}"
    output_file.write_text("", encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(tmp)), "NO_COLOR": "",
           "GITHUB_OUTPUT": str(output_file), "RUNNER_TEMP": str(tmp), **(extra_env or {})}
    env.update({name: evaluate(value, context) for name, value in (the_step.get("env") or {}).items()})
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", the_step["run"]],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    outputs = dict(line.split("=", 1) for line in output_file.read_text(encoding="utf-8").splitlines() if line)
    return proc.returncode, proc.stdout, proc.stderr, outputs


def run_action(action, tmp_path: Path, cwd: Path, **inputs):
    """The lint step then the exit step, as the runner would after a successful install."""
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update({name.replace("_", "-"): value for name, value in inputs.items()})
    context = {f"inputs.{name}": value for name, value in values.items()}
    context["steps.install.outputs.python"] = sys.executable
    context["steps.install.outputs.vllmlint"] = VLLMLINT
    code, out, err, outputs = run_step(action, step(action, "lint"), context, cwd, tmp_path)
    assert code == 0, f"the lint step must not fail, even on findings:\n{err}"
    context.update({f"steps.lint.outputs.{k}": v for k, v in outputs.items()})
    exit_step = steps(action)[-1]
    final_code, final_out, _, _ = run_step(action, exit_step, context, cwd, tmp_path)
    return final_code, out + final_out, err, outputs


@pytest.fixture()
def workspace(tmp_path):
    """A repository checkout with one manifest with findings and one without."""
    space = tmp_path / "workspace"
    (space / "deploy").mkdir(parents=True)
    (space / ".git").mkdir()  # the configuration lookup stops at the repository root
    shutil.copy(REMOVED_FLAGS, space / "deploy" / "vllm.yaml")
    shutil.copy(CLEAN, space / "deploy" / "hpa.yaml")
    return space


def test_findings_write_sarif_annotate_and_fail_after_the_lint_step(action, tmp_path, workspace):
    code, out, err, outputs = run_action(action, tmp_path, workspace)
    assert outputs["exit-code"] == "1" and code == 1
    assert outputs["sarif-file"] == "vllmlint.sarif" and outputs["sarif-written"] == "true"
    log = json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))
    assert log["version"] == "2.1.0"
    results = log["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"VL101", "VL102"}
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {"deploy/vllm.yaml"}
    assert "::error file=deploy/vllm.yaml,line=" in out  # annotations
    assert "deploy/vllm.yaml:" in out and "VL102" in out  # the text report in the log
    assert "exited with status 1" in out


def test_clean_paths_pass_and_still_write_sarif(action, tmp_path, workspace):
    code, out, _, outputs = run_action(action, tmp_path, workspace, paths="deploy/hpa.yaml",
                                       sarif_file="reports/lint/out.sarif")
    assert (code, outputs["exit-code"]) == (0, "0")
    log = json.loads((workspace / "reports" / "lint" / "out.sarif").read_text(encoding="utf-8"))
    assert log["runs"][0]["results"] == []
    assert outputs["sarif-written"] == "true"
    assert "::" not in out


def test_fail_on_none_and_fail_on_error(action, tmp_path, workspace):
    code, _, _, outputs = run_action(action, tmp_path, workspace, fail_on="none")
    assert outputs["exit-code"] == "1" and code == 0
    # Only the unpinned-image warning selected: below fail-on error, so the step passes.
    code, _, _, outputs = run_action(action, tmp_path, workspace, select="VL201", fail_on="error")
    assert (code, outputs["exit-code"]) == (0, "0")
    results = json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
    assert results and {r["ruleId"] for r in results} == {"VL201"}
    code, _, _, outputs = run_action(action, tmp_path, workspace, select="VL201", fail_on="warning")
    assert (code, outputs["exit-code"]) == (1, "1")


def test_ignore_and_several_paths(action, tmp_path, workspace):
    code, _, _, _ = run_action(action, tmp_path, workspace, paths="deploy/hpa.yaml\n  deploy/vllm.yaml ",
                               ignore="VL102,VL201")
    log = json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))
    rule_ids = {r["ruleId"] for r in log["runs"][0]["results"]}
    assert "VL101" in rule_ids and not rule_ids & {"VL102", "VL201"}
    assert code == 1


def test_usage_errors_fail_even_with_fail_on_none(action, tmp_path, workspace):
    code, _, err, outputs = run_action(action, tmp_path, workspace, vllm_version="not-a-version", fail_on="none")
    assert (code, outputs["exit-code"]) == (2, "2")
    assert "--vllm-version" in err
    code, _, _, outputs = run_action(action, tmp_path, workspace, paths="deploy/missing.yaml")
    assert (code, outputs["exit-code"]) == (2, "2")


def test_a_configuration_files_fail_on_holds_unless_the_input_sets_one(action, tmp_path, workspace):
    (workspace / ".vllmlint.yaml").write_text("fail-on: error\nselect: [VL201]\n", encoding="utf-8")
    code, _, _, outputs = run_action(action, tmp_path, workspace)
    assert (code, outputs["exit-code"]) == (0, "0")  # a warning, below the file's fail-on
    results = json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"VL201"}
    code, _, _, outputs = run_action(action, tmp_path, workspace, fail_on="warning")
    assert (code, outputs["exit-code"]) == (1, "1")


def test_config_input_names_the_file(action, tmp_path, workspace):
    (workspace / "ci").mkdir()
    (workspace / "ci" / "lint.yaml").write_text("ignore: [VL101, VL102]\n", encoding="utf-8")
    run_action(action, tmp_path, workspace, config="ci/lint.yaml")
    results = json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
    assert results and not {r["ruleId"] for r in results} & {"VL101", "VL102"}
    code, _, err, outputs = run_action(action, tmp_path, workspace, config="ci/missing.yaml")
    assert (code, outputs["exit-code"]) == (2, "2") and "missing.yaml" in err


def test_inputs_are_data_not_shell_code(action, tmp_path, workspace):
    code, _, _, outputs = run_action(action, tmp_path, workspace, paths='$(touch pwned) "; touch pwned2',
                                     select="VL1$(touch pwned3)")
    assert not list(workspace.glob("pwned*"))
    assert code == 2 and outputs["exit-code"] == "2"  # no such rule / no such paths: a usage error


def test_log_format_and_no_annotations(action, tmp_path, workspace):
    code, out, _, _ = run_action(action, tmp_path, workspace, format="junit", annotations="false")
    assert "<testsuites" in out and "::error" not in out
    assert code == 1
    code, out, _, _ = run_action(action, tmp_path, workspace, format="github")
    assert out.count("::error file=deploy/vllm.yaml") == 3  # printed once, not twice


# Stands in for Python in the install step: `-I -m venv DIR` makes DIR/bin/python (a copy of this script) and
# DIR/bin/vllmlint; every other call is logged, so the test sees what would have been installed without an index.
FAKE_PYTHON = """#!/bin/bash
if [ "$1 $2 $3" = "-I -m venv" ]; then
  mkdir -p "$4/bin" && cp "$0" "$4/bin/python"
  printf '#!/bin/bash\\n(IFS="|"; echo "vllmlint|$*") >> "$FAKE_PYTHON_LOG"\\necho "vllmlint, version 0.0.0"\\n' > "$4/bin/vllmlint"
  chmod +x "$4/bin/vllmlint"; exit 0
fi
(IFS="|"; echo "$*") >> "$FAKE_PYTHON_LOG"  # arguments joined by |
"""


def test_install_step_installs_the_actions_own_checkout(action, tmp_path):
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON, encoding="utf-8")
    fake.chmod(0o755)
    log = tmp_path / "calls.log"
    action_path = tmp_path / "action checkout"  # a space, to see the path stays one argument
    context = {"steps.python.outputs.python-path": str(fake), "github.action_path": str(action_path),
               "runner.temp": str(tmp_path)}
    code, out, err, outputs = run_step(action, step(action, "install"), context, tmp_path, tmp_path,
                                       {"FAKE_PYTHON_LOG": str(log)})
    assert code == 0, err
    venv = tmp_path / "vllmlint-venv" / "bin"
    assert outputs == {"python": str(venv / "python"), "vllmlint": str(venv / "vllmlint")}
    calls = log.read_text(encoding="utf-8").splitlines()
    assert calls == [f"-I|-m|pip|install|--quiet|--disable-pip-version-check|{action_path}",
                     "vllmlint|--version"]  # the console script, not `python -m vllmlint`
    assert "vllmlint, version" in out


@pytest.mark.skipif(os.environ.get("VLLMLINT_TEST_INSTALL") != "1",
                    reason="needs a package index for the dependencies; set VLLMLINT_TEST_INSTALL=1")
def test_install_step_installs_the_actions_checkout(action, tmp_path):
    context = {"steps.python.outputs.python-path": sys.executable, "github.action_path": str(ROOT),
               "runner.temp": str(tmp_path)}
    code, out, err, outputs = run_step(action, step(action, "install"), context, tmp_path, tmp_path)
    assert code == 0, err
    assert "vllmlint, version" in out
    installed = subprocess.run([outputs["vllmlint"], "--format", "json", str(REMOVED_FLAGS)],
                               capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert installed.returncode == 1 and json.loads(installed.stdout)["findings"]


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_shell_steps_pass_shellcheck(action, tmp_path):
    for number, the_step in enumerate(s for s in steps(action) if "run" in s):
        script = tmp_path / f"step{number}.sh"
        # The runner's own prologue: bash -eo pipefail.
        script.write_text("#!/bin/bash\nset -eo pipefail\n" + the_step["run"], encoding="utf-8")
        proc = subprocess.run(["shellcheck", "--shell=bash", str(script)], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, f"{the_step['name']}:\n{proc.stdout}"


# --- one lint per job, the pip cache, the README's workflow ------------------------------------------------
COUNTING_VLLMLINT = """#!/bin/bash
(IFS="|"; echo "$*") >> "$CALLS_LOG"
exec "$REAL_VLLMLINT" "$@"
"""


def test_the_lint_step_runs_vllmlint_once_for_every_report(action, tmp_path, workspace):
    wrapper = tmp_path / "vllmlint"
    wrapper.write_text(COUNTING_VLLMLINT, encoding="utf-8")
    wrapper.chmod(0o755)
    calls = tmp_path / "calls.log"
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    context = {f"inputs.{name}": value for name, value in values.items()}
    context["steps.install.outputs.vllmlint"] = str(wrapper)
    code, out, err, outputs = run_step(action, step(action, "lint"), context, workspace, tmp_path,
                                       {"CALLS_LOG": str(calls), "REAL_VLLMLINT": VLLMLINT})
    assert code == 0, err
    runs = calls.read_text(encoding="utf-8").splitlines()
    assert len(runs) == 1, runs  # before: three runs (SARIF, the log, the annotations)
    assert runs[0].split("|--|")[0] == ("check|--format|sarif|--output|vllmlint.sarif|--format|github|"
                                        f"--output|{tmp_path}/" + runs[0].split(f"--output|{tmp_path}/")[1].split("|")[0]
                                        + "|--format|text|--color|always")
    # Every report of that one run: the SARIF log, the text log, the annotations (after it), notes once.
    results = json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"VL101", "VL102"}
    assert out.index("deploy/vllm.yaml:") < out.index("::error file=deploy/vllm.yaml,line=")
    assert outputs["exit-code"] == "1" and outputs["sarif-written"] == "true"
    assert not list(tmp_path.glob("vllmlint-annotations.*"))  # the annotations file is removed


def test_pip_cache_is_keyed_by_runner_python_and_dependencies(action, tmp_path):
    cache = [s for s in steps(action) if s.get("uses", "").startswith("actions/cache@")]
    assert len(cache) == 1 and cache[0]["uses"] == "actions/cache@0057852bfaa89a56745cba8c7296529d2fc39830"
    ordered = steps(action)
    assert ordered.index(step(action, "pip-cache")) < ordered.index(cache[0]) < ordered.index(step(action, "install"))
    assert cache[0]["if"] == "steps.pip-cache.outputs.dir != ''"
    assert cache[0]["with"] == {"path": "${{ steps.pip-cache.outputs.dir }}", "key": "${{ steps.pip-cache.outputs.key }}",
                                "restore-keys": "${{ steps.pip-cache.outputs.restore-prefix }}"}
    context = {"steps.python.outputs.python-path": sys.executable, "github.action_path": str(ROOT)}
    code, _, err, outputs = run_step(action, step(action, "pip-cache"), context, tmp_path, tmp_path,
                                     {"RUNNER_OS": "Linux"})
    assert code == 0, err
    python = "%d.%d" % sys.version_info[:2]
    assert outputs["restore-prefix"] == f"vllmlint-pip-Linux-py{python}-"
    assert re.fullmatch(rf"vllmlint-pip-Linux-py{python}-[0-9a-f]{{16}}-checkout", outputs["key"])
    assert outputs["dir"] and Path(outputs["dir"]).is_absolute()


def usage_section(title: str) -> str:
    """A section of docs/usage.md, where the README's GitHub Actions reference moved."""
    text = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    return text[start:text.index("\n## ", start + 1)]


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    return text[start:text.index("\n## ", start + 1)]


def test_documented_workflows_have_complete_permissions_and_lint_once(action):
    section = usage_section("GitHub Actions")
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    workflow = YAML(typ="safe").load(blocks[0])
    assert workflow["permissions"] == {"contents": "read", "security-events": "write", "actions": "read"}
    # vllmlint is not published: the action is used by path, from a copy in the user's repository
    assert workflow["jobs"]["vllmlint"]["steps"][1]["uses"] == "./tools/vllmlint"
    assert set(workflow["jobs"]["vllmlint"]["steps"][1]["with"]) <= set(action["inputs"])
    front = YAML(typ="safe").load(re.findall(r"```yaml\n(.*?)```", readme_section("GitHub Actions"), re.S)[0])
    assert front["permissions"] == workflow["permissions"]
    assert front["jobs"]["vllmlint"]["steps"][1]["uses"] == "./tools/vllmlint"
    assert set(front["jobs"]["vllmlint"]["steps"][1]["with"]) <= set(action["inputs"])
    by_hand = YAML(typ="safe").load(blocks[1])
    runs = [s["run"] for s in by_hand if "run" in s]
    assert sum(run.count("vllmlint --") + run.count("vllmlint check") for run in runs) == 1  # one lint
    assert runs[0].startswith("pip install ./tools/vllmlint")  # from the copy: not on PyPI
    assert "python -m vllmlint" not in "\n".join(runs)
    upload = [s for s in by_hand if s.get("uses", "").startswith("github/codeql-action/upload-sarif")]
    assert upload[0]["uses"] == "github/codeql-action/upload-sarif@8aad20d150bbac5944a9f9d289da16a4b0d87c1e"
    assert upload[0]["continue-on-error"] is True
    # every input the action has is documented
    for name in action["inputs"]:
        assert f"`{name}`" in section, name


def test_by_hand_workflow_runs(tmp_path, workspace):
    """The documented by-hand steps run as written (vllmlint on PATH as `vllmlint`)."""
    by_hand = YAML(typ="safe").load(re.findall(r"```yaml\n(.*?)```", usage_section("GitHub Actions"), re.S)[1])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "vllmlint").write_text(f'#!/bin/bash\nexec "{sys.executable}" -m vllmlint "$@"\n', encoding="utf-8")
    (bin_dir / "vllmlint").chmod(0o755)
    outputs: dict[str, str] = {}
    codes = []
    for the_step in by_hand:
        if "run" not in the_step or the_step["run"].lstrip().startswith("pip install"):
            continue
        context = {f"steps.lint.outputs.{k}": v for k, v in outputs.items()}
        env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
        code, out, err, written = run_step({}, the_step, context, workspace, tmp_path, env)
        outputs.update(written)
        codes.append((code, out))
    assert codes[0][0] == 0 and "::error file=deploy/vllm.yaml" in codes[0][1]  # the lint step records, passes
    assert outputs["status"] == "1" and codes[-1][0] == 1  # the last step fails the job after the upload
    assert (workspace / "vllmlint.sarif").is_file()


def test_render_input_renders_charts_only_when_set(action, tmp_path, workspace):
    """`render: true` passes --render (and each `helm-values` file) so a chart's templates are checked; by
    default nothing the repository controls is run and the chart is reported as not rendered."""
    import stat

    chart = ROOT / "fixtures" / "own" / "helm-chart"
    shutil.copytree(chart, workspace / "chart")
    (workspace / "prod.yaml").write_text("replicaCount: 2\n", encoding="utf-8")
    bin_dir, log = tmp_path / "bin", tmp_path / "helm-calls.log"
    bin_dir.mkdir()
    helm = bin_dir / "helm"
    helm.write_text(f"#!/bin/sh\necho \"$@\" >> '{log}'\ncat '{chart / 'rendered.txt'}'\n", encoding="utf-8")
    helm.chmod(helm.stat().st_mode | stat.S_IXUSR)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"

    def lint(**inputs):
        values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
        values.update({name.replace("_", "-"): value for name, value in inputs.items()})
        context = {f"inputs.{name}": value for name, value in values.items()}
        context["steps.install.outputs.vllmlint"] = VLLMLINT
        return run_step(action, step(action, "lint"), context, workspace, tmp_path, {"PATH": path})

    _, out, err, _ = lint(paths="chart", select="VL102")
    assert not log.exists() and "vllmlint --render" in out + err  # not rendered: the run says how to
    # `render: false` is passed on (`--no-render`): it beats a configuration file's `render: true`
    config = tmp_path / "vllmlint.yaml"
    config.write_text("render: true\n", encoding="utf-8")
    _, out, err, _ = lint(paths="chart", select="VL102", render="false", config=str(config))
    assert not log.exists() and "vllmlint --render" in out + err
    _, out, err, outputs = lint(paths="chart", select="VL102", render="true", helm_values="prod.yaml")
    assert outputs["exit-code"] == "1", err
    assert log.read_text(encoding="utf-8").split()[2:] == ["--values", str(workspace / "prod.yaml")]
    results = json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {
        "chart/templates/deployment.yaml"}


# --- args, the job summary, the upload's failures, a hostile workspace -----------------------------------
def test_args_input_passes_baseline_exclude_and_select(action, tmp_path, workspace):
    vllmlint = subprocess.run([VLLMLINT, "--write-baseline", "base.json", "deploy/vllm.yaml"], cwd=workspace,
                              capture_output=True, text=True, timeout=120)
    assert vllmlint.returncode == 0, vllmlint.stderr
    # Everything is in the baseline: nothing new, the step passes.
    code, _, err, outputs = run_action(action, tmp_path, workspace, args="--baseline base.json")
    assert (code, outputs["exit-code"]) == (0, "0"), err
    assert json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"] == []
    # Several arguments, split on spaces and newlines.
    code, _, _, outputs = run_action(action, tmp_path, workspace, args="--exclude deploy/hpa.yaml\n --select VL201")
    results = json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
    assert results and {r["ruleId"] for r in results} == {"VL201"} and code == 1
    # Words are data: no expansion, no command substitution; an unknown option is a usage error.
    code, _, err, outputs = run_action(action, tmp_path, workspace, args='$(touch pwned) --select="VL1;touch pwned2"')
    assert not list(workspace.glob("pwned*")) and (code, outputs["exit-code"]) == (2, "2")


def run_summary(action, tmp_path, workspace, status="1", **inputs):
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update({name.replace("_", "-"): value for name, value in inputs.items()})
    context = {f"inputs.{name}": value for name, value in values.items()}
    context.update({"steps.install.outputs.python": sys.executable, "steps.lint.outputs.exit-code": status,
                    "steps.lint.outputs.sarif-file": values["sarif-file"]})
    summary = tmp_path / "step-summary.md"
    summary.write_text("", encoding="utf-8")
    code, out, err, outputs = run_step(action, step(action, "summary"), context, workspace, tmp_path,
                                       {"GITHUB_STEP_SUMMARY": str(summary)})
    assert code == 0, err
    return out, outputs, summary.read_text(encoding="utf-8")


def test_job_summary_counts_findings_per_rule_and_level(action, tmp_path, workspace):
    run_action(action, tmp_path, workspace)
    results = json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
    out, outputs, summary = run_summary(action, tmp_path, workspace)
    assert outputs["too-large"] == "false" and 0 < int(outputs["compressed-bytes"]) < 10_000_000
    assert "::warning" not in out
    expected: dict[str, int] = {}
    for result in results:
        expected[result["ruleId"].split("/")[0]] = expected.get(result["ruleId"].split("/")[0], 0) + 1
    rows = {line.split(" | ")[0][2:]: line for line in summary.splitlines() if line.startswith("| VL")}
    assert set(rows) == set(expected)
    for code, count in expected.items():
        assert rows[code].endswith(f" | {count} |"), rows[code]
    assert "| VL102 | removed-flag | " in summary
    errors = [int(line.split(" | ")[2]) for line in summary.splitlines() if line.startswith("| VL")]
    assert errors == sorted(errors, reverse=True) and errors[0] > 0  # the rules with errors first
    assert f"**{len(results)} finding(s)** in 1 file(s)" in summary and "Exit code 1" in summary
    # job-summary: false writes nothing; a clean run says so.
    assert run_summary(action, tmp_path, workspace, job_summary="false")[2] == ""
    run_action(action, tmp_path, workspace, paths="deploy/hpa.yaml")
    assert "No findings." in run_summary(action, tmp_path, workspace, status="0")[2]


def test_a_log_over_githubs_size_limit_is_not_uploaded(action, tmp_path, workspace):
    import base64

    run_action(action, tmp_path, workspace)
    log = json.loads((workspace / "vllmlint.sarif").read_text(encoding="utf-8"))
    # 14 MB of base64 random bytes compress to about 10.6 MB: over the 10 MB limit.
    log["runs"][0]["properties"] = {"padding": base64.b64encode(os.urandom(10_500_000)).decode()}
    (workspace / "vllmlint.sarif").write_text(json.dumps(log), encoding="utf-8")
    out, outputs, summary = run_summary(action, tmp_path, workspace)
    assert outputs["too-large"] == "true" and int(outputs["compressed-bytes"]) > 10_000_000
    assert "::warning title=vllmlint::The SARIF log is over code scanning's 10 MB limit" in out
    assert "| VL102 | removed-flag |" in summary  # the summary is still written
    assert "::warning" not in run_summary(action, tmp_path, workspace, upload_sarif="false")[0]


@pytest.mark.parametrize("event, head, actor, private, cause", [
    ("pull_request", "someone/fork", "someone", "false", "a pull request from a fork"),
    ("pull_request", "owner/repo", "dependabot[bot]", "false", "started by Dependabot"),
    ("pull_request", "owner/repo", "owner", "true", "code scanning must be enabled"),
    ("push", "", "owner", "false", "needs `permissions: {security-events: write}`"),
    # pull_request_target runs with the base repository's token: a fork is not the reason there
    ("pull_request_target", "someone/fork", "someone", "false", "needs `permissions: {security-events: write}`"),
])
def test_a_failed_upload_names_its_likely_cause(action, tmp_path, event, head, actor, private, cause):
    ordered = steps(action)
    explain = ordered[ordered.index(step(action, "upload")) + 1]
    context = {"github.event_name": event, "github.event.pull_request.head.repo.full_name": head,
               "github.repository": "owner/repo", "github.actor": actor, "github.event.repository.private": private}
    code, out, err, _ = run_step(action, explain, context, tmp_path, tmp_path)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("::warning title=vllmlint::SARIF not uploaded: ")
    assert cause in lines[0] and "upload-sarif: false" in lines[0]


def test_files_of_the_workspace_never_run(action, tmp_path, workspace):
    """A checkout holding modules named like the standard library's (and like vllmlint) runs none of them."""
    marker = tmp_path / "ran"
    for name in ("json", "gzip", "hashlib", "collections", "sys", "os", "vllmlint", "pip", "venv", "re"):
        (workspace / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r})\n", encoding="utf-8")
    (workspace / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('site')\n", encoding="utf-8")
    context = {"steps.python.outputs.python-path": sys.executable, "github.action_path": str(ROOT)}
    code, _, err, outputs = run_step(action, step(action, "pip-cache"), context, workspace, tmp_path)
    assert code == 0 and outputs["key"].endswith("-checkout"), err
    code, out, _, outputs = run_action(action, tmp_path, workspace)
    assert code == 1 and "VL102" in out
    run_summary(action, tmp_path, workspace)
    assert not marker.exists(), marker.read_text(encoding="utf-8")
