"""Issue 13, "Output that respects the user": what the command line prints, tried as a new user would."""
import json
import subprocess

from conftest import run_cli

COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:latest
    command: ["--model", "Qwen/Qwen3-0.6B", "--swap-space", "4"]
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
