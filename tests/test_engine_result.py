"""The engine owns the whole result (issue 8): per-file ignores, the baseline and `--upgrade-to` are applied
by the library, so `--fix` and `--diff` never repair a finding the user does not see; fix builders that
fail say so; the registry refuses a rule without a check module and a module without a rule."""
import json
from dataclasses import replace

import pytest

from conftest import DEPLOYMENT, run_cli
from vllmlint.baseline import load_baseline, write_baseline
from vllmlint.engine import Linter, LintOptions, lint_text
from vllmlint.run import lint
from vllmlint.fix.apply import run_fixes

IGNORE_VL102 = 'per-file-ignores:\n  "deploy.yaml": [VL102]\n'


# --- per-file ignores ---------------------------------------------------------------------------------
def test_diff_does_not_propose_a_fix_for_an_ignored_finding(tmp_path):
    (tmp_path / ".vllmlint.yaml").write_text(IGNORE_VL102)
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    code, out, err = run_cli("deploy.yaml", cwd=tmp_path)
    assert code == 0 and "VL102" not in out, out + err  # the check passes: the user ignored VL102 here
    code, out, err = run_cli("--diff", "deploy.yaml", cwd=tmp_path)
    assert (code, out) == (0, ""), out + err  # old code: exit 1 and a diff deleting `--swap-space, "4"`
    assert "0 fix(es) available in 0 file(s)" in err


def test_fix_does_not_apply_a_fix_for_an_ignored_finding(tmp_path):
    (tmp_path / ".vllmlint.yaml").write_text(IGNORE_VL102)
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    code, out, err = run_cli("--fix", "deploy.yaml", cwd=tmp_path)
    assert code == 0, out + err
    assert (tmp_path / "deploy.yaml").read_text() == DEPLOYMENT  # old code: `--swap-space, "4"` deleted
    assert "fixed 0 problem(s) in 0 file(s)" in err


def test_an_ignore_for_another_file_still_lets_the_fix_through(tmp_path):
    (tmp_path / ".vllmlint.yaml").write_text('per-file-ignores:\n  "other.yaml": [VL102]\n')
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    code, out, err = run_cli("--fix", "deploy.yaml", cwd=tmp_path)
    assert code == 0, out + err
    assert (tmp_path / "deploy.yaml").read_text() == DEPLOYMENT.replace(', --swap-space, "4"', "")


def test_the_engine_reports_ignored_findings_apart():
    options = LintOptions(per_file_ignores={"deploy.yaml": ["removed-flag"]})
    result = lint_text(DEPLOYMENT, "deploy.yaml", options)
    assert [f.code for f in result.findings] == []
    assert [(f.code, f.span.line, f.span.col) for f in result.ignored] == [("VL102", 12, 49)]


# --- the baseline ---------------------------------------------------------------------------------------
def test_fix_does_not_touch_findings_in_the_baseline(tmp_path):
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    assert run_cli("--write-baseline", "base.json", "deploy.yaml", cwd=tmp_path)[0] == 0
    code, out, err = run_cli("--baseline", "base.json", "--fix", "deploy.yaml", cwd=tmp_path)
    assert code == 0, out + err
    assert (tmp_path / "deploy.yaml").read_text() == DEPLOYMENT  # old code: the baselined flag deleted
    assert "1 finding(s) in the baseline not shown" in err
    code, out, err = run_cli("--baseline", "base.json", "--diff", "deploy.yaml", cwd=tmp_path)
    assert (code, out) == (0, ""), out + err


def test_run_fixes_honours_the_baseline_but_verifies_against_everything(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    two = DEPLOYMENT.replace('--swap-space, "4"]', '--swap-space, "4", --use-v2-block-manager]')
    (tmp_path / "deploy.yaml").write_text(two)
    everything = lint_text(two, "deploy.yaml").findings
    write_baseline(tmp_path / "base.json", [f for f in everything if f.value == "--swap-space"])
    outcome = run_fixes(["deploy.yaml"], LintOptions(baseline=load_baseline(tmp_path / "base.json")))
    assert (tmp_path / "deploy.yaml").read_text() == DEPLOYMENT  # only the flag not in the baseline went
    assert outcome.applied == 1
    assert outcome.result is not None and [f.value for f in outcome.result.known] == ["--swap-space"]
    assert outcome.result.findings == [] and outcome.result.baseline_stale == 0


# --- --upgrade-to -----------------------------------------------------------------------------------------
def test_lint_compares_the_upgrade_in_the_engine(tmp_path):
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT.replace("v0.29.0", "v0.8.5").replace(', --swap-space, "4"', ""))

    def feed(linter: Linter) -> None:
        linter.add_file(tmp_path / "deploy.yaml")

    today = lint(feed, LintOptions())
    upgraded = lint(feed, LintOptions(upgrade_to="0.29.0"))
    assert upgraded.upgrade is not None and upgraded.upgrade.release == "0.29.0"
    assert upgraded.upgrade.added == len(upgraded.findings)
    today_keys = {f.fingerprint() for f in today.findings}
    assert all(f.fingerprint() not in today_keys for f in upgraded.findings)
    assert all(f.message.startswith("after an upgrade to vLLM 0.29.0: ") for f in upgraded.findings)
    assert lint(feed, replace(LintOptions(), upgrade_to=None)).upgrade is None



def test_with_upgrade_to_the_baseline_is_stale_only_where_the_upgraded_run_no_longer_matches(tmp_path):
    # Before: the baseline was compared with the findings the upgrade adds only, so nearly every entry
    # was called stale ("41 baseline entries no longer match" on the fixtures).
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    code, _, err = run_cli("--write-baseline", "bl.json", "deploy.yaml", cwd=tmp_path)
    assert code == 0
    entries = len(json.loads((tmp_path / "bl.json").read_text())["findings"])
    assert entries >= 1
    code, _, err = run_cli("--baseline", "bl.json", "--upgrade-to", "0.31.0", "deploy.yaml", cwd=tmp_path)
    assert "no longer match" not in err, err

# --- fix builders report their errors --------------------------------------------------------------------
def test_a_failing_fix_builder_is_an_internal_error_naming_the_rule(monkeypatch):
    import vllmlint.checks.vl102_removed_flag as vl102

    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(vl102, "_fix_for", broken)
    result = lint_text(DEPLOYMENT, "deploy.yaml")
    # The finding stands (without its fix); the run says which rule's fix builder failed, and exits 2.
    assert [(f.code, f.span.line, f.span.col, f.fix) for f in result.findings] == [("VL102", 12, 49, None)]
    assert result.internal_error
    assert [n.message for n in result.notices if n.code == "VL102"] == [
        "internal error in rule VL102 (removed-flag) building a fix: broken: RuntimeError: boom"]


def test_a_failing_edit_primitive_is_reported_too(monkeypatch):
    import vllmlint.fix.edits as edits

    def broken(invocation):
        raise KeyError("no such token")

    # Old code: the bare `except Exception` around the builder dropped the fix without a word.
    monkeypatch.setattr(edits, "argv_editor", broken)
    result = lint_text(DEPLOYMENT.replace("vllm, serve", "python3, -m, vllm.entrypoints.openai.api_server"),
                       "deploy.yaml")
    assert result.internal_error
    messages = sorted(n.message for n in result.notices if n.level == "error")
    assert messages == [
        "internal error in rule VL101 (deprecated-entrypoint) building a fix: serve_fix: KeyError: 'no such token'",
        "internal error in rule VL102 (removed-flag) building a fix: _fix_for: KeyError: 'no such token'",
    ]
    assert {f.code for f in result.findings} >= {"VL101", "VL102"}


def test_a_failing_fix_builder_exits_2_on_the_command_line(tmp_path):
    # A plugin-free way to break a builder in a subprocess: a sitecustomize that patches it.
    (tmp_path / "sitecustomize.py").write_text(
        "import vllmlint.checks.vl102_removed_flag as m\n"
        "def _broken(*a):\n    raise RuntimeError('boom')\n"
        "m._fix_for = _broken\n")
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    import os

    code, out, err = run_cli("deploy.yaml", cwd=tmp_path,
                             env={"PYTHONPATH": str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", "")})
    assert code == 2, out + err
    assert "deploy.yaml:12:49: VL102" in out
    assert "internal error in rule VL102 (removed-flag) building a fix: _broken: RuntimeError: boom" in err


# --- JSON output keeps its shape -------------------------------------------------------------------------
def test_json_output_of_an_ignored_run_is_unchanged(tmp_path):
    (tmp_path / ".vllmlint.yaml").write_text(IGNORE_VL102)
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    code, out, _ = run_cli("--format", "json", "deploy.yaml", cwd=tmp_path)
    assert code == 0 and json.loads(out)["findings"] == []


@pytest.mark.parametrize("selector", ["VL102", "removed-flag", "VL1"])
def test_per_file_ignores_take_codes_names_and_prefixes(selector):
    result = lint_text(DEPLOYMENT, "deploy.yaml", LintOptions(per_file_ignores={"*.yaml": [selector]}))
    assert [f.code for f in result.ignored] == ["VL102"] and result.findings == []


# --- the registry fails loudly -----------------------------------------------------------------------------
def test_every_rule_has_its_module_and_every_module_its_rule():
    from vllmlint.registry import all_rules, check_modules, mismatches

    all_rules.cache_clear()
    rules = all_rules()  # raises RegistryError on the real package if anything is out of step
    assert mismatches(rules, check_modules()) == []
    # One module per non-engine rule (a count that does not need editing with every new rule).
    assert "vl102_removed_flag.py" in check_modules()
    assert len(check_modules()) == len([r for r in rules.values() if not r.engine_rule]) >= 24


def test_a_misnamed_module_and_a_rule_without_module_are_named(tmp_path):
    from vllmlint.registry import all_rules, check_modules, mismatches

    rules = all_rules()
    (tmp_path / "vl102_removed_flags.py").write_text("")  # a typo: the rule is `removed-flag`
    (tmp_path / "vl999_nothing.py").write_text("")
    (tmp_path / "messages.py").write_text("")  # a shared helper module: not a rule module
    (tmp_path / "__init__.py").write_text("")
    modules = [m for m in check_modules() if m != "vl102_removed_flag.py"] + check_modules(tmp_path)
    assert sorted(check_modules(tmp_path)) == ["vl102_removed_flags.py", "vl999_nothing.py"]
    assert mismatches(rules, sorted(modules)) == [
        "rule VL102 (removed-flag, rules/VL102-removed-flag.yaml) has no check module: expected "
        "vllmlint/checks/vl102_removed_flag.py",
        "check module vllmlint/checks/vl102_removed_flags.py belongs to no rule (rule VL102 is named "
        "`removed-flag`, so its module is vl102_removed_flag.py)",
        "check module vllmlint/checks/vl999_nothing.py belongs to no rule (no rules/VL999-*.yaml)",
    ]


def test_a_rule_without_its_module_stops_the_run_loudly(tmp_path):
    # Old code: a misnamed module meant the rule never ran, and the run said "All checks passed".
    import shutil
    import subprocess
    import sys

    from conftest import ROOT

    copy = tmp_path / "src"
    shutil.copytree(ROOT / "vllmlint", copy / "vllmlint", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("rules", "data", "schemas"):
        (copy / name).symlink_to(ROOT / name)
    module = copy / "vllmlint" / "checks" / "vl102_removed_flag.py"
    module.rename(module.with_name("vl102_removed_flags.py"))
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    proc = subprocess.run([sys.executable, "-m", "vllmlint", "deploy.yaml"], cwd=tmp_path, capture_output=True,
                          env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}, timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "All checks passed" not in proc.stdout.decode()
    assert "rule VL102 (removed-flag, rules/VL102-removed-flag.yaml) has no check module" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
