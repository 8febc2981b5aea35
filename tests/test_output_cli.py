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


def test_one_note_of_a_kind_is_printed_in_full(tmp_path):
    _, _, err = run_cli(*_unpinned(tmp_path, 1), cwd=tmp_path)
    assert err.startswith("vllmlint: note: c0.yaml:4: ComposeService vllm0: vLLM release unknown")


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
    assert lines[-2].startswith("vllmlint: note: 3 workloads assume") and lines[-1].startswith("Found 9 problems")
    _, _, err = run_cli("-q", *files, cwd=tmp_path)
    assert err == ""
