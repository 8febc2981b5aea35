"""ruff's habits on the command line (issue 24, item 8): bare `vllmlint` lints `.` (tests/test_cli.py), `--help`
lists the lint options (tests/test_fastcli.py), FORCE_COLOR/NO_COLOR, `--output-format concise|full`, a header in
`vllmlint rules`, baseline entries outside the linted paths not called stale; and `--min-level`."""
import re

from conftest import run_cli

POD = """apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: [vllm, serve, Qwen/Qwen3-0.6B, --swap-space, "4"]
"""
FINDING = re.compile(r"^\S+:\d+:\d+: VL\d+ \[(\w+)\]", re.M)


def tree(tmp_path):
    for folder in ("k8s", "other"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "pod.yaml").write_text(POD.format(name=folder))
    return tmp_path


def test_force_color_colours_a_pipe_and_no_color_wins(tmp_path):
    tree(tmp_path)
    _, plain, _ = run_cli("k8s", cwd=tmp_path, env={"NO_COLOR": ""})
    _, forced, _ = run_cli("k8s", cwd=tmp_path, env={"NO_COLOR": "", "FORCE_COLOR": "1"})
    _, both, _ = run_cli("k8s", cwd=tmp_path, env={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    _, never, _ = run_cli("--color", "never", "k8s", cwd=tmp_path, env={"NO_COLOR": "", "FORCE_COLOR": "1"})
    assert "\x1b[" not in plain and "\x1b[1;31mVL102" in forced
    assert both == never == plain
    assert re.sub(r"\x1b\[[\d;]*m", "", forced) == plain


def test_output_format_concise_is_one_line_per_finding_and_full_is_the_text_format(tmp_path):
    tree(tmp_path)
    code, full, _ = run_cli("--output-format", "full", "k8s", cwd=tmp_path)
    assert (code, full) == run_cli("k8s", cwd=tmp_path)[:2] and " | " in full
    code, concise, _ = run_cli("--output-format", "concise", "k8s", cwd=tmp_path)
    lines = concise.splitlines()
    findings = FINDING.findall(full)
    assert code == 1 and len(findings) >= 2
    assert [FINDING.match(line).group(1) for line in lines[:len(findings)]] == findings  # one line each
    assert lines[len(findings)] == "" and lines[len(findings) + 1].startswith("Found ")
    assert " | " not in concise and "= help:" not in concise
    # each finding's first line of `full` (the message's first sentence; the rest is its help line there)
    assert lines[:len(findings)] == [line for line in full.splitlines() if FINDING.match(line)]


def test_rules_has_a_header():
    code, out, _ = run_cli("rules")
    header, first = out.splitlines()[:2]
    assert code == 0 and header.split() == ["CODE", "NAME", "SEVERITY", "FIX", "SUMMARY"]
    assert first.startswith("VL001  syntax-error") and first.index("syntax-error") == header.index("NAME")


def test_baseline_entries_of_files_outside_the_linted_paths_are_not_stale(tmp_path):
    tree(tmp_path)
    code, _, err = run_cli("--write-baseline", "baseline.json", ".", cwd=tmp_path)
    assert code == 0 and "wrote 6 finding(s)" in err  # 3 a pod
    code, out, err = run_cli("--baseline", "baseline.json", "k8s/", cwd=tmp_path)
    assert code == 0 and "3 finding(s) in the baseline not shown" in err and "no longer match" not in err
    code, out, err = run_cli("--baseline", "baseline.json", "k8s/pod.yaml", cwd=tmp_path)
    assert code == 0 and "no longer match" not in err
    (tmp_path / "k8s" / "pod.yaml").write_text(POD.format(name="k8s").replace(', --swap-space, "4"', ""))
    code, out, err = run_cli("--baseline", "baseline.json", "k8s/", cwd=tmp_path)
    assert code == 0 and "1 baseline entry no longer matches" in err  # the fixed one, inside k8s/
    code, out, err = run_cli("--baseline", "baseline.json", cwd=tmp_path)  # `.`: every entry is in view
    assert code == 0 and "1 baseline entry no longer matches" in err


def test_min_level_hides_findings_below_it_and_says_how_many(tmp_path):
    tree(tmp_path)
    code, everything, _ = run_cli("k8s", cwd=tmp_path)
    levels = FINDING.findall(everything)
    assert "info" in levels and "error" in levels
    code_w, shown, _ = run_cli("--min-level", "warning", "k8s", cwd=tmp_path)
    assert "info" not in FINDING.findall(shown) and FINDING.findall(shown) == [x for x in levels if x != "info"]
    assert f"; {levels.count('info')} below --min-level not shown)." in shown
    assert code_w == code == 1
    # a display threshold: the exit code still follows --fail-on, on every finding
    assert run_cli("--min-level", "error", "--fail-on", "info", "k8s", cwd=tmp_path)[0] == 1
    _, json_out, _ = run_cli("--min-level", "error", "--format", "json", "k8s", cwd=tmp_path)
    assert '"severity": "info"' not in json_out and '"severity": "error"' in json_out
    code, _, err = run_cli("--min-level", "bogus", "k8s", cwd=tmp_path)
    assert code == 2 and err.startswith("vllmlint: error: --min-level 'bogus': use one of error, warning, info")


def test_info_findings_take_one_line_in_text(tmp_path):
    tree(tmp_path)
    _, out, _ = run_cli("k8s", cwd=tmp_path)
    lines = out.splitlines()
    infos = [i for i, line in enumerate(lines) if FINDING.match(line) and "[info]" in line]
    assert infos
    for i in infos:  # followed by another finding or a blank line, never an excerpt or a help line
        assert lines[i + 1] == "" or FINDING.match(lines[i + 1])


def test_min_level_from_the_configuration_and_the_command_line_wins(tmp_path):
    tree(tmp_path)
    (tmp_path / ".vllmlint.yaml").write_text("min-level: error\n")
    _, out, _ = run_cli("k8s", cwd=tmp_path)
    assert set(FINDING.findall(out)) == {"error"} and "below --min-level not shown" in out
    _, out, _ = run_cli("--min-level", "info", "k8s", cwd=tmp_path)
    assert "info" in FINDING.findall(out)
    (tmp_path / ".vllmlint.yaml").write_text("min-level: loud\n")
    code, _, err = run_cli("k8s", cwd=tmp_path)
    assert code == 2 and "min-level" in err


def test_a_cached_run_shown_again_follows_a_changed_min_level(tmp_path):
    """The result cache writes a run's output again when nothing changed: a configuration's min-level is part of
    how it is shown."""
    tree(tmp_path)
    env = {"VLLMLINT_NO_CACHE": "", "VLLMLINT_CACHE_DIR": str(tmp_path / "cache")}
    (tmp_path / ".vllmlint.yaml").write_text("min-level: info\n")
    first = run_cli("k8s", cwd=tmp_path, env=env)
    assert run_cli("k8s", cwd=tmp_path, env=env) == first  # shown again
    (tmp_path / ".vllmlint.yaml").write_text("min-level: error\n")
    code, out, _ = run_cli("k8s", cwd=tmp_path, env=env)
    assert set(FINDING.findall(out)) == {"error"} and "below --min-level not shown" in out


def test_github_annotations_end_with_the_summary(tmp_path):
    """Under GitHub Actions the default format is `github`: annotations on standard output, and the summary line
    on standard error, as ruff ends its annotations with "Found N errors." (not with --quiet)."""
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                                       "  - name: vllm\n    image: vllm/vllm-openai:v0.29.0\n"
                                       "    args: [Qwen/Qwen3-8B, --swap-space, '4']\n")
    code, out, err = run_cli("--no-cache", "--select", "VL102", "pod.yaml", cwd=tmp_path,
                             env={"GITHUB_ACTIONS": "true"})
    assert code == 1 and out.startswith("::error file=pod.yaml,line=8")
    assert "Found 1 problem (1 error) in 1 file" in err
    code, out, err = run_cli("--no-cache", "--quiet", "--select", "VL102", "pod.yaml", cwd=tmp_path,
                             env={"GITHUB_ACTIONS": "true"})
    assert code == 1 and "Found" not in err
