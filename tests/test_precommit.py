"""The default pre-commit hook judges the staged files with the rest of the repository as read-only context
(issue 24, item 3): committing only an HPA still sees the Deployment it scales (VL401 is cross-file), and only the
staged files are reported on. Driven through the real `pre-commit` package in a temporary git repository."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

import pytest
import yaml

from conftest import ROOT, run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
HOOKS = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def local_config(hook_id: str) -> str:
    """A `repo: local` configuration running the shipped hook as it is declared (entry, args, types, file
    passing), with this checkout's interpreter as `vllmlint` (offline and fast: no hook environment to build)."""
    hook = dict(HOOKS[hook_id])
    words = shlex.split(hook["entry"])
    assert words[0] == "vllmlint"
    hook["entry"] = shlex.join([sys.executable, "-m", "vllmlint", *words[1:]])
    hook["language"] = "system"
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": [hook]}]}, sort_keys=False)


def git(repo, *args):
    subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "k8s").mkdir(parents=True)
    git(tmp_path, "init", "-q", str(repo))
    (repo / "k8s" / "deployment.yaml").write_text((ROOT / "fixtures/original/single-node-deployment.yaml").read_text())
    git(repo, "add", "k8s/deployment.yaml")
    git(repo, "commit", "-qm", "the Deployment, committed before")
    (repo / "k8s" / "hpa.yaml").write_text((ROOT / "fixtures/original/hpa.yaml").read_text())
    (repo / "k8s" / "unrelated.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    git(repo, "add", "k8s/hpa.yaml")  # only the HPA is staged
    return repo


def pre_commit(repo, tmp_path, hook_id: str, *args):
    (repo / ".pre-commit-config.yaml").write_text(local_config(hook_id))
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), NO_COLOR="1", VLLMLINT_NO_CACHE="1")
    env.pop("GITHUB_ACTIONS", None)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", *args], cwd=repo, capture_output=True,
                          text=True, env=env, timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def test_the_default_hook_sees_the_deployment_when_only_the_hpa_is_committed(repo, tmp_path):
    code, out = pre_commit(repo, tmp_path, "vllmlint")
    assert code == 1, out
    assert "k8s/hpa.yaml:15:13: VL401" in out  # cross-file: read from the Deployment, which is not staged
    assert "k8s/deployment.yaml:" not in out  # context only: its own findings are not this commit's
    assert "in 1 file (1 file checked)." in out  # the context's workloads are not counted as this commit's


def test_the_whole_repository_hook_reports_every_file(repo, tmp_path):
    code, out = pre_commit(repo, tmp_path, "vllmlint-repo")
    assert code == 1 and "k8s/hpa.yaml:15:13: VL401" in out and "k8s/deployment.yaml:" in out, out


def test_context_keeps_suppressions_and_notes_of_the_reported_files_only(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "hpa.yaml").write_text((ROOT / "fixtures/original/hpa.yaml").read_text())
    deployment = (ROOT / "fixtures/original/single-node-deployment.yaml").read_text()
    # an unused suppression in the context file (VL003 there) and a finding it would report
    (tmp_path / "deploy.yaml").write_text("# vllmlint: disable-file=VL301 -- not used\n" + deployment)
    code, out, err = run_cli("--context", ".", "hpa.yaml", cwd=tmp_path)
    assert code == 1 and "hpa.yaml:15:13: VL401" in out
    assert "deploy.yaml" not in out + err
    whole = run_cli(".", cwd=tmp_path)[1]
    assert "deploy.yaml:1:" in whole and "VL003" in whole  # linted whole: the unused suppression is reported
    alone = run_cli("hpa.yaml", "--select", "VL401", cwd=tmp_path)
    assert alone[0] == 0  # without its context the HPA's target is unknown and the rule says nothing
    code, _, err = run_cli("--context", ".", "--fix", "hpa.yaml", cwd=tmp_path)
    assert code == 2 and "--context" in err
    code, _, err = run_cli("--context", "nowhere", "hpa.yaml", cwd=tmp_path)
    assert code == 2 and err == "vllmlint: error: --context nowhere: no such file or directory\n"
