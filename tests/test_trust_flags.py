"""The options that run programs, read outside the tree or use the network (issue 27): each has an on and an off
form (`--render/--no-render`, `--follow-links/--no-follow-links`, `--online/--no-online`, `--hf-cache/--no-hf-cache`,
also `--render=false`), and the command line always beats the configuration file."""
import os
import stat

import pytest

from conftest import ROOT, run_cli


@pytest.fixture
def chart_tree(tmp_path):
    """A chart to lint, a configuration outside it that turns rendering on, and a fake `helm` that logs its calls."""
    import shutil

    chart = ROOT / "fixtures" / "own" / "helm-chart"
    work = tmp_path / "work"
    shutil.copytree(chart, work / "chart")
    bin_dir, log = tmp_path / "bin", tmp_path / "helm-calls.log"
    bin_dir.mkdir()
    helm = bin_dir / "helm"
    helm.write_text(f"#!/bin/sh\necho \"$@\" >> '{log}'\ncat '{chart / 'rendered.txt'}'\n", encoding="utf-8")
    helm.chmod(helm.stat().st_mode | stat.S_IXUSR)
    config = tmp_path / "config.yaml"
    config.write_text("render: true\n", encoding="utf-8")
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return work, config, log, env


@pytest.mark.parametrize("off", [["--no-render"], ["--render=false"], ["--render", "--no-render"]])
def test_no_render_beats_the_configurations_render(chart_tree, off):
    work, config, log, env = chart_tree
    _, out, err = run_cli("--config", config, *off, "--select", "VL102", "chart", cwd=work, env=env)
    assert not log.exists() and "vllmlint --render" in out + err  # not rendered: the run says how to
    code, out, err = run_cli("--config", config, "--select", "VL102", "chart", cwd=work, env=env)
    assert log.exists() and code == 1 and "chart/templates/deployment.yaml" in out  # the configuration renders


def test_render_on_the_command_line_beats_a_configurations_no(chart_tree, tmp_path):
    work, config, log, env = chart_tree
    config.write_text("render: false\n", encoding="utf-8")
    code, out, _ = run_cli("--config", config, "--render=true", "--select", "VL102", "chart", cwd=work, env=env)
    assert log.exists() and code == 1 and "chart/templates/deployment.yaml" in out


def test_no_follow_links_beats_the_configuration(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deploy.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "link").symlink_to(outside, target_is_directory=True)
    config = tmp_path / "config.yaml"
    config.write_text("follow-links: true\n", encoding="utf-8")
    _, listed, _ = run_cli("--config", config, "--show-files", ".", cwd=work)
    assert "link/deploy.yaml" in listed
    for off in ("--no-follow-links", "--follow-links=false"):
        _, listed, _ = run_cli("--config", config, "--show-files", off, ".", cwd=work)
        assert "link/deploy.yaml" not in listed, off
    config.write_text("follow-links: false\n", encoding="utf-8")
    _, listed, _ = run_cli("--config", config, "--show-files", "--follow-links", ".", cwd=work)
    assert "link/deploy.yaml" in listed


def test_no_online_beats_the_configuration(tmp_path):
    pytest.importorskip("vllmlint.capacity.hfconfig")
    from vllmlint.capacity.hfconfig import online_problem

    tree, home = tmp_path / "tree", tmp_path / "home"
    tree.mkdir(), home.mkdir()
    (tree / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    # The user's own configuration, outside the linted tree (a file of the tree cannot turn these on at all).
    config = home / "config.yaml"
    config.write_text("online: true\nhf-cache: true\n", encoding="utf-8")
    if online_problem():  # huggingface_hub absent: the configuration's `online: true` is a usage error...
        code, _, err = run_cli("--config", config, "cm.yaml", cwd=tree)
        assert code == 2 and "--online needs huggingface_hub" in err
    for off in (["--no-online"], ["--online=false", "--no-hf-cache"]):  # ...which the command line turns off
        code, _, err = run_cli("--config", config, *off, "cm.yaml", cwd=tree)
        assert code == 0 and "huggingface_hub" not in err, off


def test_every_trust_option_has_both_forms_in_help():
    code, out, _ = run_cli("--help", env={"COLUMNS": "200"})
    for name in ("render", "follow-links", "online", "hf-cache"):
        assert f"--{name} / --no-{name}" in out
