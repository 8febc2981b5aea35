"""Issue 13, "Output that respects the user", checked again as a new user would (helper review13): the
bullets that had no test pinning them, and what that check found wrong."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, run_cli

CHART = {"Chart.yaml": "apiVersion: v2\nname: vllm\nversion: 0.1.0\n",
         "templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
                                      "  name: {{ .Release.Name }}\n"}


def _chart_repo(tmp_path):
    repo = tmp_path / "repo"
    chart = repo / "sub" / "chart"
    (chart / "templates").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name, text in CHART.items():
        (chart / name).write_text(text)
    return repo


# --- paths inside notes: the command a note suggests works from where the user ran vllmlint ----------------
def test_the_unrendered_chart_note_names_the_chart_from_the_current_folder(tmp_path):
    # Before: from `sub/`, the note said `vllmlint --render sub/chart`, a folder that does not exist there.
    repo = _chart_repo(tmp_path)
    _, _, err = run_cli("chart", cwd=repo / "sub")
    [warning] = [line for line in err.splitlines() if "Helm chart not rendered" in line]
    assert warning.startswith("vllmlint: warning: chart/Chart.yaml: Helm chart not rendered")
    assert "run `vllmlint --render chart` (runs" in warning and "`helm template chart | vllmlint -`" in warning
    assert "sub/chart" not in err
    _, _, err = run_cli(".", cwd=repo / "sub" / "chart")
    assert "warning: Chart.yaml: Helm chart not rendered" in err and "`vllmlint --render .`" in err
    assert "`helm template . | vllmlint -`" in err
    # the machine formats keep the repository-relative path, in the message too
    _, out, _ = run_cli("--format", "json", "chart", cwd=repo / "sub")
    [notice] = [n for n in json.loads(out)["notices"] if n["level"] == "warning"]
    assert notice["path"] == "sub/chart/Chart.yaml" and "`vllmlint --render sub/chart`" in notice["message"]
    _, out, _ = run_cli("--format", "github", "chart", cwd=repo / "sub")
    assert "file=sub/chart/Chart.yaml,title=VL002::Helm chart not rendered" in out and "--render sub/chart`" in out


def test_local_message_rewrites_the_folder_only_as_a_whole_word():
    from vllmlint.formatters.text import local_message

    message = "run `vllmlint --render sub/chart` or `helm template sub/chart | vllmlint -` (not sub/charts, x/sub/chart)"
    assert local_message(message, "sub/chart/Chart.yaml", "chart/Chart.yaml") == (
        "run `vllmlint --render chart` or `helm template chart | vllmlint -` (not sub/charts, x/sub/chart)")
    assert local_message(message, "sub/chart/Chart.yaml", "Chart.yaml").startswith("run `vllmlint --render .`")
    assert local_message(message, "sub/chart/Chart.yaml", "sub/chart/Chart.yaml") == message  # nothing to do
    assert local_message("run `vllmlint --render .`", "Chart.yaml", "/abs/Chart.yaml") == "run `vllmlint --render .`"


def test_ignoring_template_skipped_hides_both_chart_notes(tmp_path):
    repo = _chart_repo(tmp_path)
    for selector in ("VL002", "template-skipped"):
        _, _, err = run_cli("--ignore", selector, "chart", cwd=repo / "sub")
        assert "VL002" not in err and "Helm" not in err and "unrendered Helm template" not in err, selector
        assert err.startswith("vllmlint: warning: nothing checked:")  # what was not checked is still said


def test_ignoring_vl007_hides_the_sarif_truncation_notice(monkeypatch):
    from vllmlint.finding import Finding, Severity, Span
    from vllmlint.formatters import Report, render, sarif
    from vllmlint.registry import select_rules

    monkeypatch.setattr(sarif, "MAX_RESULTS", 2)
    span = Span(0, 1, 1, 1, 1, 2)
    findings = [Finding("VL201", Severity.WARNING, f"w{i}.", "a.yaml", span) for i in range(3)]

    def notes(rules):
        run = json.loads(render("sarif", Report(findings=findings, rules=rules)))["runs"][0]
        assert len(run["results"]) == 2  # truncated either way: GitHub would reject the upload
        return [n["message"]["text"] for n in run["invocations"][0].get("toolExecutionNotifications", [])]

    assert notes(select_rules(None, None)) == [
        "1 results left out of the SARIF log: GitHub code scanning accepts at most 2 per run (the most severe "
        "are kept)."]
    assert notes(select_rules(None, ["VL007"])) == []
    assert notes(select_rules(None, ["results-truncated"])) == []


# --- messages: a short first line, the rest on `help:` ------------------------------------------------------
def test_a_long_first_sentence_is_cut_before_its_consequence():
    from vllmlint.formatters import split_message

    # VL809's shape: "X is not a field of Y, so the API server rejects Z (...). What to do."
    text = ("`subnetSelector` is not a field of `spec` in the karpenter.k8s.aws/v1 EC2NodeClass CRD schema, so the "
            "API server rejects EC2NodeClass vllm-gpu-class (kubectl's strict field validation). Use "
            "`subnetSelectorTerms`.")
    assert split_message(text) == (
        "`subnetSelector` is not a field of `spec` in the karpenter.k8s.aws/v1 EC2NodeClass CRD schema",
        "So the API server rejects EC2NodeClass vllm-gpu-class (kubectl's strict field validation). Use "
        "`subnetSelectorTerms`.")
    # cut at `: ` first, then before `, so `: the colon joins the two pieces of the help again
    text = ("`spec` has no `amiSelectorTerms`, `securityGroupSelectorTerms`, `subnetSelectorTerms`, which the "
            "karpenter.k8s.aws/v1 EC2NodeClass CRD schema requires, so the API server rejects EC2NodeClass x: add them.")
    assert split_message(text)[1] == "So the API server rejects EC2NodeClass x: add them."
    # a short first sentence keeps its `, so `; `, but` / `, which` never cut (the problem may follow them)
    assert split_message("`--x` is a switch, so `--x=1` fails. Drop the value.") == (
        "`--x` is a switch, so `--x=1` fails", "Drop the value.")
    long_but = "Services a, b, c send traffic to this vLLM container, but " + "it has no readiness probe " * 5
    assert split_message(long_but) == (long_but.strip(), None)


def test_the_fixtures_hpa_finding_has_a_short_first_line_and_a_help_line():
    code, out, _ = run_cli("--select", "VL401", "fixtures/original/hpa.yaml", "fixtures/original/single-node-deployment.yaml")
    lines = out.splitlines()
    assert code == 1 and lines[0] == (
        "fixtures/original/hpa.yaml:15:13: VL401 [warning] HPA vllm-inference-hpa scales on CPU utilization, but "
        "container `vllm-server` sets no CPU request (hpa-cpu-without-requests)")
    assert lines[3].startswith("    = help: So utilization is unknown and the HPA never scales Deployment "
                               "vllm-inference: set `resources.requests.cpu`")


def test_first_lines_on_the_fixtures_are_short():
    # A ratchet, measured 2026-12-01 on the fixtures: 187 findings, 35 first lines over 120 characters (41
    # before the `, so ` cut), the longest 260 (VL805's, VL706's: long object names in one sentence, which only
    # their checks can shorten); 183 carry a `help:` line. After the checks' messages were reworded (the
    # problem first, object names and figures in the following sentences): none over 120, the longest 115,
    # 185 `help:` lines (0 over 120 on the shared corpus too, the longest 119). More long lines fail.
    _, out, _ = run_cli("--color", "never", "fixtures/")
    firsts = [re.sub(r"^.*?: VL\d+ \[\w+\] (\[\*\] )?", "", line).rsplit(" (", 1)[0]
              for line in out.splitlines() if re.match(r"^\S+:\d+:\d+: VL\d+ ", line)]
    assert len(firsts) > 150
    assert max(map(len, firsts)) <= 120
    assert [first for first in firsts if len(first) > 120] == []
    helps = [line for line in out.splitlines() if line.lstrip().startswith("= help: ")]
    # Info findings are one line each in text (`explain CODE` and the JSON/SARIF reports carry the rest): a
    # `help:` line under every warning and error but 2 (96 and 94 on 2026-12-07).
    shown = [line for line in out.splitlines() if re.match(r"^\S+:\d+:\d+: VL\d+ \[(warning|error)\]", line)]
    assert len(shown) > 80 and len(helps) >= len(shown) - 2
    assert not any(line.startswith("= help:") or " | " in line
                   for info in re.finditer(r"^\S+:\d+:\d+: VL\d+ \[info\].*\n(.*)$", out, re.M)
                   for line in [info.group(1)])  # nothing under an info finding's line but another finding


# --- coloured --diff on a terminal, NO_COLOR ----------------------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_diff_is_coloured_on_a_terminal_unless_no_color(tmp_path):
    (tmp_path / "c.yaml").write_text('services:\n  vllm:\n    image: vllm/vllm-openai:v0.29.0\n'
                                     '    command: ["--model", "Qwen/Qwen3-0.6B", "--swap-space", "4"]\n')

    def on_a_terminal(**env):
        main, child = os.openpty()
        full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GITHUB_ACTIONS")}
        proc = subprocess.run([sys.executable, "-m", "vllmlint", "--diff", "c.yaml"], stdout=child,
                              stderr=subprocess.PIPE, cwd=tmp_path, env=dict(full, PYTHONPATH=str(ROOT), **env),
                              timeout=120)
        os.close(child)
        data = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        os.close(main)
        assert proc.returncode == 1
        return data.decode()

    coloured = on_a_terminal()
    assert coloured.startswith("\x1b[1m--- c.yaml\x1b[0m\r\n\x1b[1m+++ c.yaml\x1b[0m\r\n\x1b[36m@@")
    plain = on_a_terminal(NO_COLOR="1")
    assert plain.startswith("--- c.yaml\r\n+++ c.yaml\r\n@@") and "\x1b[" not in plain
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


# --- configuration: README's example and the schema ---------------------------------------------------------
def _readme_config_example() -> str:
    page = (ROOT / "docs" / "configuration.md").read_text()  # the reference moved out of README.md
    return page.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_readme_config_example_is_valid_against_the_schema_and_loads(tmp_path):
    import jsonschema
    import yaml

    from vllmlint.config import load_config

    schema = json.loads((ROOT / "schemas" / "config.schema.json").read_text())
    example = yaml.safe_load(_readme_config_example())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(example)) == []
    assert set(example) == set(schema["properties"])  # the example shows every key the schema knows
    # what the loader makes of it, with the shared file it extends
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "vllmlint.yaml").write_text("extend-ignore: [VL803]\n")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / ".vllmlint.yaml").write_text(_readme_config_example())
    config = load_config(tmp_path / "project" / ".vllmlint.yaml")
    assert config.select == ["VL1", "VL3", "public-exposure"] and config.extend_select == ["VL708"]
    assert config.extend_ignore == ["VL803", "VL006"] and config.vllm_version == "0.29.0"
    # a wrong value in it is an error the schema reports too
    broken = dict(example, **{"fail-on": "fatal"})
    assert [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(broken)] != []


def test_the_config_schema_is_schemastore_ready():
    schema = json.loads((ROOT / "schemas" / "config.schema.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == ("https://raw.githubusercontent.com/vllmlint/vllmlint/main/schemas/"
                             "config.schema.json")
    assert schema["title"] == "vllmlint configuration" and schema["description"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    for name, definition in schema["$defs"].items():
        assert definition.get("description"), name
    page = (ROOT / "docs" / "configuration.md").read_text()
    assert f"# yaml-language-server: $schema={schema['$id']}" in page


# --- pre-commit: the whole-repository hook is documented as shipped ------------------------------------------
def test_readme_documents_the_hooks_that_ship():
    import yaml

    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    readme = (ROOT / "README.md").read_text()
    # the hook ids of the README's pre-commit snippets (a workflow's step `id:` is not a hook)
    snippets = [block for block in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "repos:" in block]
    documented = [hook for block in snippets for hook in re.findall(r"^\s+- id: (\S+)", block, re.M)]
    assert set(documented) <= set(hooks) and {"vllmlint", "vllmlint-repo"} <= set(documented)
    assert "`vllmlint-repo`, lints and reports the whole repository\n(`pass_filenames: false`)" in readme
    assert "--context ." in hooks["vllmlint"]["entry"] and "`vllmlint --context . FILES`" in readme
    assert hooks["vllmlint-repo"]["pass_filenames"] is False


# --- --write-baseline into a missing folder (it was "internal error ... please report it", as --output was) ---
def test_write_baseline_into_a_missing_folder_creates_it(tmp_path):
    (tmp_path / "c.yaml").write_text('services:\n  vllm:\n    image: vllm/vllm-openai:v0.29.0\n'
                                     '    command: ["--model", "Qwen/Qwen3-0.6B", "--swap-space", "4"]\n')
    code, _, err = run_cli("--write-baseline", "ci/base/b.json", "c.yaml", cwd=tmp_path)
    assert code == 0 and "internal error" not in err and "to the baseline ci/base/b.json" in err
    assert [f["code"] for f in json.loads((tmp_path / "ci/base/b.json").read_text())["findings"]] == ["VL102", "VL112", "VL704"]
    (tmp_path / "file").write_text("")
    code, _, err = run_cli("--write-baseline", "file/b.json", "c.yaml", cwd=tmp_path)
    assert code == 2 and err.startswith("vllmlint: error: --write-baseline file/b.json:") and "internal error" not in err


# --- GITHUB_ACTIONS picks `github` only where a format is chosen: --statistics still counts ----------------
def test_statistics_under_github_actions_are_the_counts(tmp_path):
    # Before: with GITHUB_ACTIONS=true and no --format, --statistics printed the annotations instead.
    (tmp_path / "c.yaml").write_text('services:\n  vllm:\n    image: vllm/vllm-openai:v0.29.0\n'
                                     '    command: ["--model", "Qwen/Qwen3-0.6B", "--swap-space", "4"]\n')
    code, out, _ = run_cli("--statistics", "--select", "VL102,VL112", "c.yaml", cwd=tmp_path,
                           env={"GITHUB_ACTIONS": "true"})
    assert code == 1 and out.splitlines()[:2] == ["  1  VL102  [*]  removed-flag", "  1  VL112       model-option-deprecated"]
    assert "::" not in out
    code, out, err = run_cli("--statistics", "--format", "github", "c.yaml", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    assert (code, out) == (2, "") and "--statistics" in err  # asked for by name: still refused


def test_the_template_note_names_the_chart_folder(tmp_path):
    from vllmlint.engine import _chart_of
    assert _chart_of("deploy/chart/templates/deployment.yaml") == "deploy/chart"
    assert _chart_of("templates/deployment.yaml") == "."
    assert _chart_of("manifests/odd.yaml") == "CHART"
    chart = tmp_path / "deploy" / "chart" / "templates"
    chart.mkdir(parents=True)
    (chart / "d.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n")
    from vllmlint.engine import lint_paths
    result, _ = lint_paths([str(chart / "d.yaml")])
    [note] = [n for n in result.notices if n.code == "VL002"]
    assert note.message.endswith("chart | vllmlint -`)") and "helm template . |" not in note.message


def test_local_names_are_what_relpath_gives_under_the_current_folder_and_absolute_elsewhere(tmp_path, monkeypatch):
    import os

    from vllmlint.check import _local_name

    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a")
    for given in ["b/x.yaml", "./b/../b/x.yaml", str(tmp_path / "a" / "b" / "x.yaml"), ".", str(tmp_path / "a") + "/"]:
        assert _local_name(given) == os.path.relpath(os.path.abspath(given)), given
    assert _local_name("../c.yaml") == str(tmp_path / "c.yaml")  # outside: absolute, never `../`
    assert _local_name(str(tmp_path / "ab" / "c.yaml")) == str(tmp_path / "ab" / "c.yaml")  # a prefix, not a parent


def test_first_lines_of_the_rules_examples_ratchet():
    # A ratchet, measured 2026-12-07 on every rule's failing examples (the fixtures, above, are all within 120):
    # 56 first lines over 120 characters, 42 after VL104, VL201, VL608, VL609, VL701, VL707, VL711, VL712,
    # VL716, VL721, VL723, VL802 and VL804 put their figures after the first `: `, and 0 once VL106-VL108,
    # VL111, VL501, VL605, VL607, VL608, VL702, VL708, VL710, VL713-VL717, VL719, VL804-VL809 and VL811 said
    # the problem and the fix first (VL106's list of accepted values after the cut). None may come back.
    from vllmlint.engine import LintOptions, lint_text
    from vllmlint.formatters.report import split_message
    from vllmlint.registry import all_rules

    long = []
    for rule in all_rules().values():
        if rule.kind != "result":
            continue
        for example in rule.examples.get("fails") or []:
            options = LintOptions(select=[rule.code], vllm_version=example.get("vllm_version"))
            result = lint_text(example["source"], example.get("filename", "example.yaml"), options)
            long += [f.code for f in result.findings if len(split_message(f.message)[0]) > 120]
    assert long == [], sorted(long)
