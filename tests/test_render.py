"""Issue 9, Helm charts and the opt-in --render: a chart without --render is reported with a warning-level notice
(and the "nothing checked" line, never "All checks passed"); with --render, `helm template` is run when on PATH
and its documents are linted under the template files their `# Source:` names (repository-relative); a
kustomization folder is never built (read natively in every mode). Nothing is run without --render.
The tools here are fake scripts on PATH (no network, no real Helm)."""
import json
import os
import shutil
import stat

from conftest import FIXTURES, run_cli

CHART = FIXTURES / "own" / "helm-chart"


def _fake(bin_dir, name, output_file, log):
    """A fake `name` on PATH: logs its arguments to `log`, prints `output_file`."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\necho \"$@\" >> '{log}'\ncat '{output_file}'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _setup(tmp_path):
    shutil.copytree(CHART, tmp_path / "chart")
    log = tmp_path / "calls.log"
    _fake(tmp_path / "bin", "helm", CHART / "rendered.txt", log)
    env = {"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    return log, env


def _findings(out):
    return [(f["path"], f["line"], f["column"], f["code"], f["severity"]) for f in json.loads(out)["findings"]]


def test_chart_without_render_runs_nothing_and_warns(tmp_path):
    log, env = _setup(tmp_path)
    code, out, err = run_cli("chart", cwd=tmp_path, env=env)
    assert code == 0 and not log.exists()  # the fake helm was not called
    assert ("vllmlint: warning: chart/Chart.yaml: Helm chart not rendered, its templates were not checked: run "
            "`vllmlint --render chart` (runs `helm template`; values from --helm-values FILE) or "
            "`helm template chart | vllmlint -`") in err.splitlines()
    # the notice and the "nothing checked" line agree: both say --render
    assert "`vllmlint --render CHART`" in err.splitlines()[-1] and "All checks passed" not in out + err


def test_render_runs_helm_and_maps_findings_to_the_template(tmp_path):
    log, env = _setup(tmp_path)
    (tmp_path / "prod.yaml").write_text("replicaCount: 2\n")
    code, out, err = run_cli("--render", "--helm-values", "prod.yaml", "--helm-values", "chart/values.yaml",
                             "--select", "VL102", "--format", "json", "chart", cwd=tmp_path, env=env)
    assert code == 1, err
    # the flag comes from values.yaml (`toYaml .Values.extraArgs`): not in the template, so at its first line
    assert _findings(out) == [("chart/templates/deployment.yaml", 1, 1, "VL102", "error")]
    call = log.read_text().split()
    assert call[:2] == ["template", str(tmp_path / "chart")]
    assert call[2:] == ["--values", str(tmp_path / "prod.yaml"), "--values", str(tmp_path / "chart" / "values.yaml")]
    assert "unrendered Helm template" not in err and "not rendered" not in err


def test_render_config_key(tmp_path):
    """`render: true` in the user's own configuration (outside the linted tree) runs helm; in the tree's, never
    (issue 27: the linted tree does not decide what runs)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    log, env = _setup(repo)
    (repo / ".vllmlint.yaml").write_text("render: true\n")
    code, out, _ = run_cli("--select", "VL102", "--format", "json", "chart", cwd=repo, env=env)
    assert not log.exists() and _findings(out) == []
    (tmp_path / "mine.yaml").write_text("render: true\n")
    code, out, _ = run_cli("--config", tmp_path / "mine.yaml", "--select", "VL102", "--format", "json", "chart",
                           cwd=repo, env=env)
    assert code == 1 and _findings(out) == [("chart/templates/deployment.yaml", 1, 1, "VL102", "error")]
    assert log.exists()


def test_render_without_helm_on_path_says_so(tmp_path):
    shutil.copytree(CHART, tmp_path / "chart")
    empty = tmp_path / "nothing"
    empty.mkdir()
    code, _, err = run_cli("--render", "chart", cwd=tmp_path, env={"PATH": str(empty)})
    assert code == 0
    assert ("vllmlint: warning: chart/Chart.yaml: --render: `helm` is not on PATH, the chart's templates were not "
            "checked: install Helm, or lint `helm template chart | vllmlint -`") in err.splitlines()


def test_render_failure_is_an_error(tmp_path):
    shutil.copytree(CHART, tmp_path / "chart")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "helm").write_text("#!/bin/sh\necho 'Error: template: bad' >&2\nexit 1\n")
    (bin_dir / "helm").chmod(0o755)
    code, _, err = run_cli("--render", "chart", cwd=tmp_path, env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert code == 2
    assert "vllmlint: error: chart/Chart.yaml: --render: `helm template` failed, not checked: Error: template: bad" in err


def test_render_refuses_fix(tmp_path):
    _, env = _setup(tmp_path)
    code, _, err = run_cli("--render", "--fix", "chart", cwd=tmp_path, env=env)
    assert code == 2 and "--render" in err


def test_kustomize_is_never_run_even_with_render(tmp_path):
    """Kustomize folders are read natively in every mode: with --render nothing is built, the flag an overlay's patch
    sets is reported in the patch (with its fix), and the base's objects are linted once."""
    base, overlay = tmp_path / "base", tmp_path / "overlay"
    base.mkdir(), overlay.mkdir()
    (base / "kustomization.yaml").write_text("resources: [deployment.yaml]\n")
    (base / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  selector: {matchLabels: {app: v}}\n"
        "  template:\n    metadata: {labels: {app: v}}\n    spec:\n      containers:\n      - name: vllm\n"
        "        image: vllm/vllm-openai:v0.29.0\n        args: [Qwen/Qwen3-8B]\n")
    (overlay / "kustomization.yaml").write_text("resources: [../base]\npatches:\n  - path: args.yaml\n")
    (overlay / "args.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        args: [Qwen/Qwen3-8B, --swap-space, '4']\n")
    log = tmp_path / "calls.log"
    for tool in ("kustomize", "kubectl"):
        _fake(tmp_path / "bin", tool, base / "deployment.yaml", log)
    env = {"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    for extra in ([], ["--render"]):
        code, out, err = run_cli(*extra, "--no-cache", "--select", "VL102,VL810", "--format", "json", ".",
                                 cwd=tmp_path, env=env)
        assert code == 1, err
        found = _findings(out)
        assert ("overlay/args.yaml", 9, 31, "VL102", "error") in found, found
        assert [f for f in found if f[3] == "VL810"] == [("base/deployment.yaml", 10, 15, "VL810", "info")]
    assert not log.exists()  # no kustomize and no kubectl was run


def test_source_paths_map_to_the_chart_folder():
    from pathlib import Path

    from vllmlint.render import chart_part, chart_roots, helm_source_path

    assert helm_source_path("chart-vllm/templates/deployment.yaml", "deploy/chart") == "deploy/chart/templates/deployment.yaml"
    assert helm_source_path("top/charts/sub/templates/svc.yaml", "") == "charts/sub/templates/svc.yaml"
    files = [Path("c/Chart.yaml"), Path("c/charts/sub/Chart.yaml"), Path("c/templates/d.yaml"), Path("c/values.yaml"),
             Path("other.yaml")]
    assert chart_roots(files) == [Path("c")]  # the subchart is rendered by its parent
    assert [f for f in files if chart_part(f, Path("c"))] == [Path("c/Chart.yaml"), Path("c/charts/sub/Chart.yaml"),
                                                               Path("c/templates/d.yaml")]
