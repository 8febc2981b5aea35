"""The command line as users run it: exit codes, inputs, bad inputs, output destinations."""
import json

from conftest import CLEAN_DEPLOYMENT as CLEAN, DEPLOYMENT, FIXTURES, run_cli


def test_clean_file_exits_zero(tmp_path):
    (tmp_path / "ok.yaml").write_text(CLEAN)
    code, out, err = run_cli(tmp_path / "ok.yaml")
    assert code == 0, out + err
    assert "All checks passed" in out


def test_findings_exit_one_with_exact_position(tmp_path):
    (tmp_path / "bad.yaml").write_text(DEPLOYMENT)
    code, out, _ = run_cli("bad.yaml", cwd=tmp_path)
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith("bad.yaml:12:49: VL102 [error] [*] `--swap-space`")
    assert first.endswith("(removed-flag)")


def test_fail_on_error_ignores_warnings(tmp_path):
    (tmp_path / "w.yaml").write_text(CLEAN.replace("v0.29.0", "latest"))
    assert run_cli("--fail-on", "error", tmp_path / "w.yaml")[0] == 0
    assert run_cli(tmp_path / "w.yaml")[0] == 1


def test_select_and_ignore_accept_codes_names_and_prefixes(tmp_path):
    (tmp_path / "bad.yaml").write_text(DEPLOYMENT.replace("v0.29.0", "latest"))
    _, out, _ = run_cli("--select", "removed-flag", "bad.yaml", cwd=tmp_path)
    assert "VL102" in out and "VL201" not in out
    _, out, _ = run_cli("--ignore", "VL1", "bad.yaml", cwd=tmp_path)
    assert "VL102" not in out and "VL201" in out


def test_unknown_rule_is_a_usage_error_with_a_suggestion(tmp_path):
    code, _, err = run_cli("--select", "removed-flags", tmp_path)
    assert code == 2
    assert "unknown rule `removed-flags`" in err and "removed-flag" in err


def test_missing_path_is_an_error_but_other_files_are_linted(tmp_path):
    (tmp_path / "bad.yaml").write_text(DEPLOYMENT)
    code, out, err = run_cli("bad.yaml", "nope.yaml", cwd=tmp_path)
    assert code == 2
    assert "VL102" in out
    assert "nope.yaml: no such file or directory" in err


def test_only_missing_paths_do_not_claim_all_checks_passed(tmp_path):
    code, out, err = run_cli("nope.yaml", cwd=tmp_path)
    assert code == 2 and out == "" and "nope.yaml: no such file or directory" in err


def test_bare_vllmlint_lints_the_current_folder_as_ruff_does(tmp_path):
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "bad.yaml").write_text(DEPLOYMENT)
    code, out, _ = run_cli(cwd=tmp_path)
    assert code == 1 and out.startswith("deploy/bad.yaml:12:49: VL102")
    assert run_cli("-q", cwd=tmp_path)[:2] == (code, run_cli("-q", ".", cwd=tmp_path)[1])


def test_stdin_with_filename(tmp_path):
    code, out, _ = run_cli("-", "--stdin-filename", "deploy/vllm.yaml", input=DEPLOYMENT.encode())
    assert code == 1
    assert out.startswith("deploy/vllm.yaml:12:49: VL102")


def test_helm_template_output_points_at_the_source_file():
    rendered = "---\n# Source: chart/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n" \
               "spec: {selector: {app: vllm}, ports: [{port: 8000}]}\n---\n# Source: chart/templates/deploy.yaml\n" \
               + DEPLOYMENT
    code, out, _ = run_cli("-", input=rendered.encode())
    assert code == 1
    assert "chart/templates/deploy.yaml:13:49: VL102" in out


def test_explicit_file_is_linted_whatever_its_extension(tmp_path):
    (tmp_path / "deploy.yaml.template").write_text(DEPLOYMENT)
    (tmp_path / "notes.txt").write_text(DEPLOYMENT)
    _, out, _ = run_cli("deploy.yaml.template", cwd=tmp_path)
    assert "deploy.yaml.template:12:49: VL102" in out
    _, out, _ = run_cli(".", cwd=tmp_path)  # a folder only recurses into known extensions
    assert "notes.txt" not in out and "deploy.yaml.template" not in out


def test_folders_skip_hidden_dirs_and_survive_symlink_loops(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "bad.yaml").write_text(DEPLOYMENT)
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "bad.yaml").write_text(DEPLOYMENT)
    (tmp_path / "a" / "loop").symlink_to(tmp_path / "a")
    code, out, _ = run_cli(".", cwd=tmp_path)
    assert code == 1
    assert out.count("VL102") == 1 and ".hidden" not in out


def test_bad_inputs_give_one_line_errors_and_the_rest_is_linted(tmp_path):
    (tmp_path / "bad.yaml").write_text(DEPLOYMENT)
    (tmp_path / "broken.yaml").write_text("a: [1, 2\n")
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "binary.yaml").write_bytes(b"\x00\x01\x02PK\x03\x04")
    (tmp_path / "latin1.yaml").write_bytes("name: caf\xe9\n".encode("latin-1"))
    (tmp_path / "helm.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Values.name }}\n")
    code, out, err = run_cli(".", cwd=tmp_path)
    assert code == 1
    assert "Traceback" not in out + err
    assert "bad.yaml:12:49: VL102" in out
    assert "broken.yaml:2:1: VL001 [error] YAML syntax error" in out
    assert "binary.yaml:1:1: VL001 [error] binary file" in out
    assert "latin1.yaml:1:1: VL001 [error] not UTF-8 text (invalid byte at line 1)" in out
    assert "empty.yaml" not in out
    assert "helm.yaml:4: unrendered Helm template skipped" in err
    assert "helm.yaml" not in out


def test_a_20_mb_file_is_skipped_with_a_notice_and_the_rest_is_linted(tmp_path):
    (tmp_path / "big.yaml").write_text("# filler\n" * (20 * 1024 * 1024 // 9) + DEPLOYMENT)
    (tmp_path / "bad.yaml").write_text(DEPLOYMENT)
    code, out, err = run_cli(".", cwd=tmp_path)
    assert code == 1
    assert "bad.yaml:12:49: VL102" in out and "big.yaml" not in out
    assert "vllmlint: warning: big.yaml: skipped: 20.0 MiB is over the 10 MiB limit" in err


def test_a_large_file_is_linted_when_the_limit_allows(tmp_path):
    docs = [DEPLOYMENT.replace("name: vllm}", f"name: vllm-{i}}}") for i in range(600)]
    (tmp_path / "big.yaml").write_text("---\n".join(docs))
    code, out, _ = run_cli("--max-file-size", "0", "--statistics", "big.yaml", cwd=tmp_path)
    assert code == 1
    assert "600" in out and "VL102" in out


def test_output_file_and_formats(tmp_path):
    (tmp_path / "bad.yaml").write_text(DEPLOYMENT)
    code, out, _ = run_cli("--format", "json", "--output", "report.json", "bad.yaml", cwd=tmp_path)
    assert code == 1 and out == ""
    report = json.loads((tmp_path / "report.json").read_text())
    assert [f["code"] for f in report["findings"]] == ["VL102"]
    code, out, _ = run_cli("--format", "sarif", "bad.yaml", cwd=tmp_path)
    sarif = json.loads(out)
    assert sarif["runs"][0]["results"][0]["ruleId"] == "VL102"


def test_rules_and_explain():
    code, out, _ = run_cli("rules")
    assert code == 0 and "VL102  removed-flag" in out
    code, out, _ = run_cli("rules", "--format", "json")
    listed = {entry["code"]: entry for entry in json.loads(out)}
    assert {"name": "deprecated-entrypoint", "severity": "warning", "fix": "safe"}.items() <= listed["VL101"].items()
    code, out, _ = run_cli("explain", "removed-flag")
    assert code == 0 and out.startswith("VL102 removed-flag (error") and "Why is this bad" in out
    code, _, err = run_cli("explain", "VL999")
    assert code == 2 and "unknown rule" in err
    # a vLLM flag is not a rule: say which command explains it
    code, _, err = run_cli("explain", "--swap-space")
    assert code == 2 and "`--swap-space` is a flag, not a rule: `vllmlint flag --swap-space`" in err, err
    code, _, err = run_cli("explain", "swap-space")
    assert code == 2 and "`vllmlint flag --swap-space` shows the flag" in err, err


def test_the_fixtures_folder_from_another_directory(tmp_path):
    code, out, err = run_cli(FIXTURES, cwd=tmp_path)
    assert code == 1 and "Traceback" not in err
    assert "fixtures/original/single-node-deployment.yaml" in out


def test_upgrade_to_reports_what_the_move_would_break(tmp_path):
    old = DEPLOYMENT.replace("vllm/vllm-openai:v0.29.0", "vllm/vllm-openai:v0.17.1")
    (tmp_path / "old.yaml").write_text(old)
    code, out, _ = run_cli("old.yaml", cwd=tmp_path)
    assert code == 0 and "VL102" not in out  # --swap-space is still accepted by 0.17.1
    code, out, err = run_cli("--upgrade-to", "0.29.0", "old.yaml", cwd=tmp_path)
    assert code == 1
    assert "old.yaml:12:49: VL102 [error] [*] after an upgrade to vLLM 0.29.0: `--swap-space` was removed" in out
    assert "--upgrade-to 0.29.0: 1 new finding(s)" in err
    assert run_cli("--upgrade-to", "banana", "old.yaml", cwd=tmp_path)[0] == 2


def test_release_assumed_notice_once_per_workload(tmp_path):
    (tmp_path / "latest.yaml").write_text(DEPLOYMENT.replace("v0.29.0", "latest"))
    _, _, err = run_cli("latest.yaml", cwd=tmp_path)
    notes = [line for line in err.splitlines() if "vLLM release unknown" in line]
    assert len(notes) == 1 and "assuming vLLM 0.33.0" in notes[0] and "Deployment vllm" in notes[0]
    _, _, err = run_cli("--vllm-version", "0.29.0", "latest.yaml", cwd=tmp_path)
    assert "release unknown" not in err


def test_template_text_inside_a_block_scalar_is_data_not_a_helm_chart(tmp_path):
    alerting = ('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: alerts}\ndata:\n  rules.tmpl: |\n'
                '    {{ if .Alerts }}{{ range .Alerts }}{{ .Labels.alertname }}{{ end }}{{ end }}\n---\n' + DEPLOYMENT)
    (tmp_path / "cm.yaml").write_text(alerting)
    code, out, err = run_cli("cm.yaml", cwd=tmp_path)
    assert "template skipped" not in err and "cm.yaml:19:49: VL102" in out
    (tmp_path / "cm.yaml").write_text(DEPLOYMENT.replace("image: vllm/vllm-openai:v0.29.0",
                                                          'image: "{{ .Values.image }}"'))
    code, out, err = run_cli("cm.yaml", cwd=tmp_path)
    # Nothing else was read: no "All checks passed", one line on stderr says what was not checked (issue 9).
    assert "unrendered Helm template skipped" in err and out == ""
    assert err.splitlines()[-1].startswith("vllmlint: warning: nothing checked: ") and "All checks passed" not in err


def test_a_nodepool_in_another_folder_does_not_place_unrelated_pods(tmp_path):
    """One run often mixes clusters: a pool counts for pods that point at it or share its folder."""
    import shutil

    (tmp_path / "cluster-a").mkdir()
    (tmp_path / "cluster-b").mkdir()
    for name in ("single-node-deployment.yaml", "karpenter-nodepool.yaml"):
        shutil.copy(FIXTURES / "original" / name, tmp_path / "cluster-a" / name)
    _, out, _ = run_cli("--select", "VL601", ".", cwd=tmp_path)
    assert "cluster-a/single-node-deployment.yaml" in out and "VL601" in out
    shutil.move(tmp_path / "cluster-a" / "karpenter-nodepool.yaml", tmp_path / "cluster-b" / "nodepool.yaml")
    code, out, _ = run_cli("--select", "VL601", ".", cwd=tmp_path)
    assert code == 0 and "VL601" not in out


def test_control_characters_from_a_manifest_cannot_forge_output(tmp_path):
    """A name with a newline and an escape sequence must not start a fake GitHub command or move the cursor."""
    text = DEPLOYMENT.replace("v0.29.0", "latest").replace("name: vllm}", 'name: "x\\n::error file=README.md::forged\\u001b]0;t\\u0007"}')
    (tmp_path / "evil.yaml").write_text(text)
    _, out, err = run_cli("--format", "github", "evil.yaml", cwd=tmp_path)
    assert not any(line.startswith("::error file=README.md") for line in (out + err).splitlines())
    assert "\x1b" not in out + err and "\x07" not in out + err


def test_a_bug_of_ours_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    import pytest

    from vllmlint import cli, engine

    def broken(self):
        raise RuntimeError("simulated bug")

    (tmp_path / "ok.yaml").write_text(CLEAN)
    monkeypatch.setattr(engine.Linter, "build", broken)
    monkeypatch.setattr("sys.argv", ["vllmlint", str(tmp_path / "ok.yaml")])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.startswith("vllmlint: internal error: RuntimeError: simulated bug") and "Traceback" not in err


def test_the_console_script_raises_the_gc_threshold_for_its_one_shot_run(monkeypatch):
    import gc

    from vllmlint import cli as cli_module

    before = gc.get_threshold()
    monkeypatch.setattr(cli_module, "cli", lambda: None)
    try:
        cli_module.main()
        from vllmlint.entry import GC_THRESHOLD

        assert gc.get_threshold() == GC_THRESHOLD
    finally:
        gc.set_threshold(*before)
