"""Issue 13, "Output that respects the user": review findings on the command line and formatters."""
import json

from conftest import run_cli
from test_output_cli import FIXABLE, FIXED


# 1. --fix on standard input never prints less than its input
def test_fix_on_stdin_over_the_size_limit_echoes_the_input():
    data = FIXABLE.encode() * 4
    code, out, err = run_cli("--fix", "--max-file-size", "0.0001", "--stdin-filename", "x.yaml", "-", input=data)
    assert out.encode() == data and code == 0
    assert "x.yaml: not fixed, printed unchanged: skipped: the stream is over" in err


# 2. --format X --output FILE pairs go by command-line order
def test_each_output_pairs_with_the_format_before_it(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    code, out, _ = run_cli("--format", "text", "--format", "json", "--output", "r.json", "fx.yaml", cwd=tmp_path)
    assert code == 1 and out.startswith("fx.yaml:")  # text on standard output
    assert len(json.loads((tmp_path / "r.json").read_text())["findings"]) == 2
    code, out, _ = run_cli("--format", "json", "-o", "a.json", "--format", "junit", "-o", "b.xml", "--format", "text",
                           "fx.yaml", cwd=tmp_path)
    assert out.startswith("fx.yaml:") and json.loads((tmp_path / "a.json").read_text())["findings"]
    assert (tmp_path / "b.xml").read_text().startswith("<?xml")
    assert run_cli("-o", "c.json", "--format", "json", "fx.yaml", cwd=tmp_path)[0] == 1  # one pair: any order
    assert json.loads((tmp_path / "c.json").read_text())["findings"]
    code, _, err = run_cli("--output", "d.json", "--format", "json", "--format", "text", "fx.yaml", cwd=tmp_path)
    assert code == 2 and "--output d.json follows no --format" in err


# 3. a byte-order mark on standard input is kept, as `--fix FILE` keeps it
def test_fix_on_stdin_keeps_a_byte_order_mark():
    bom = b"\xef\xbb\xbf"
    code, out, _ = run_cli("--fix", "--stdin-filename", "x.yaml", "-", input=bom + b"kind: Pod\n")
    assert (code, out.encode()) == (0, bom + b"kind: Pod\n")
    code, out, _ = run_cli("--fix", "--stdin-filename", "x.yaml", "-", input=bom + FIXABLE.encode())
    assert out.encode() == bom + FIXED.encode()


# 4. --stdin-filename is resolved as a path on the command line is
def test_stdin_filename_is_resolved_like_a_path_argument(tmp_path):
    from test_output_cli import COMPOSE, _repo

    repo = _repo(tmp_path)
    (repo / ".vllmlint.yaml").write_text("per-file-ignores:\n  sub/compose.yaml: [VL201]\n")
    _, expected, _ = run_cli("--format", "json", "compose.yaml", cwd=repo / "sub")
    paths = [f["path"] for f in json.loads(expected)["findings"]]
    assert paths and set(paths) == {"sub/compose.yaml"}
    assert "VL201" not in {f["code"] for f in json.loads(expected)["findings"]}  # the per-file-ignore applies
    for name in ("compose.yaml", repo / "sub" / "compose.yaml"):
        _, out, _ = run_cli("--format", "json", "--stdin-filename", name, "-", input=COMPOSE.encode(), cwd=repo / "sub")
        got = json.loads(out)["findings"]
        assert [(f["path"], f["code"], f["fingerprint"]) for f in got] == \
            [(f["path"], f["code"], f["fingerprint"]) for f in json.loads(expected)["findings"]]
        _, out, _ = run_cli("--stdin-filename", name, "-", input=COMPOSE.encode(), cwd=repo / "sub")
        assert out.startswith("compose.yaml:4:")  # text: relative to the current folder, as for the file


# 5. --exit-zero means exit 0 with findings, --diff included
def test_diff_with_exit_zero_exits_zero(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    assert run_cli("--diff", "fx.yaml", cwd=tmp_path)[0] == 1
    code, out, _ = run_cli("--diff", "--exit-zero", "fx.yaml", cwd=tmp_path)
    assert code == 0 and out.startswith("--- fx.yaml\n")
    assert run_cli("--diff", "--exit-zero", "-", input=FIXABLE.encode())[0] == 0
    assert run_cli("--diff", "--exit-zero", "fx.yaml", "nope.yaml", cwd=tmp_path)[0] == 2


# 6. -q hides notes: the baseline's, --upgrade-to's, "fixed N problem(s)"
def test_quiet_hides_every_note(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    run_cli("--write-baseline", "b.json", "fx.yaml", cwd=tmp_path)
    assert "in the baseline not shown" in run_cli("--baseline", "b.json", "fx.yaml", cwd=tmp_path)[2]
    assert run_cli("-q", "--baseline", "b.json", "fx.yaml", cwd=tmp_path)[2] == ""
    assert "--upgrade-to 0.33.0:" in run_cli("--upgrade-to", "0.33.0", "fx.yaml", cwd=tmp_path)[2]
    assert "--upgrade-to" not in run_cli("-q", "--upgrade-to", "0.33.0", "fx.yaml", cwd=tmp_path)[2]
    code, _, err = run_cli("-q", "--fix", "fx.yaml", cwd=tmp_path)
    assert code == 0 and "fixed" not in err and (tmp_path / "fx.yaml").read_text() == FIXED
    code, out, err = run_cli("-q", "--fix", "--stdin-filename", "x.yaml", "-", input=FIXABLE.encode())
    assert (code, out, err) == (0, FIXED, "")


# 7. SARIF: executionSuccessful is false when the run failed, with a notification naming the error
def _sarif_errors(log):
    from jsonschema import validators

    from vllmlint.data import schemas_dir

    schema = json.loads((schemas_dir() / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    assert [e.message for e in validators.validator_for(schema)(schema).iter_errors(log)] == []
    invocation = log["runs"][0]["invocations"][0]
    return invocation["executionSuccessful"], [n["message"]["text"] for n in
                                               invocation.get("toolExecutionNotifications", [])
                                               if n.get("level") == "error"]


def test_sarif_execution_fails_with_the_run(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    code, out, _ = run_cli("--format", "sarif", "fx.yaml", cwd=tmp_path)
    assert code == 1 and _sarif_errors(json.loads(out)) == (True, [])
    code, out, _ = run_cli("--format", "sarif", "fx.yaml", "nope.yaml", cwd=tmp_path)
    assert code == 2 and _sarif_errors(json.loads(out)) == (False, ["nope.yaml: no such file or directory."])
    (tmp_path / "locked.yaml").write_text("kind: Pod\n")
    (tmp_path / "locked.yaml").chmod(0)
    try:
        code, out, _ = run_cli("--format", "sarif", "locked.yaml", cwd=tmp_path)
        if code == 2:  # not when run as root, which reads it
            ok, errors = _sarif_errors(json.loads(out))
            assert not ok and errors and "cannot read file" in errors[0]
    finally:
        (tmp_path / "locked.yaml").chmod(0o644)


# 8. the search's notices (a broken link: VL005) are selected like the engine's
def test_ignore_hides_the_notice_of_a_broken_link(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "missing.yaml")
    _, _, err = run_cli("-q", ".", cwd=tmp_path)
    assert "vllmlint: warning: gone.yaml: skipped: broken symbolic link" in err
    code, _, err = run_cli("-q", "--ignore", "VL005", ".", cwd=tmp_path)
    assert code == 1 and "gone.yaml" not in err
    _, _, err = run_cli("-q", "--select", "VL201", ".", cwd=tmp_path)
    assert "gone.yaml" not in err


# 9. text paths outside the current folder are absolute, not ../../
def test_text_paths_outside_the_current_folder_are_absolute(tmp_path):
    from test_output_cli import _repo

    repo = _repo(tmp_path)
    (repo / "other").mkdir()
    target = (repo / "sub" / "compose.yaml").as_posix()
    code, out, _ = run_cli("-q", "../sub/compose.yaml", cwd=repo / "other")
    assert code == 1 and out.startswith(f"{target}:3:")
    _, out, _ = run_cli("--show-files", "../sub", cwd=repo / "other")
    assert out == f"{target}\n"
    _, out, _ = run_cli("--diff", "../sub/compose.yaml", cwd=repo / "other")
    assert out.startswith(f"--- {target}\n+++ {target}\n")
    _, out, _ = run_cli("--format", "json", "../sub/compose.yaml", cwd=repo / "other")
    assert {f["path"] for f in json.loads(out)["findings"]} == {"sub/compose.yaml"}  # machine formats unchanged


# 10. no option is silently ignored
def test_diff_output_statistics_format_are_honoured_or_refused(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    code, out, _ = run_cli("--diff", "-o", "x.diff", "fx.yaml", cwd=tmp_path)
    assert code == 1 and out == "" and (tmp_path / "x.diff").read_text().startswith("--- fx.yaml\n+++ fx.yaml\n")
    assert (tmp_path / "fx.yaml").read_text() == FIXABLE
    code, out, _ = run_cli("--diff", "-o", "y.diff", "--stdin-filename", "fx.yaml", "-", input=FIXABLE.encode(),
                           cwd=tmp_path)
    assert code == 1 and out == "" and (tmp_path / "y.diff").read_text().startswith("--- fx.yaml\n")
    for args in (["--statistics", "--format", "sarif"], ["--diff", "--format", "json"],
                 ["--diff", "--format", "sarif", "-o", "z.sarif"]):
        code, out, err = run_cli(*args, "fx.yaml", cwd=tmp_path)
        assert (code, out) == (2, "") and err.startswith("vllmlint: error: --"), args
    assert run_cli("--diff", "--format", "text", "fx.yaml", cwd=tmp_path)[0] == 1


# 11. the README's first example is what a run prints; no install path names a release that does not exist
def test_readme_first_example_is_a_real_run(tmp_path):
    import re
    import subprocess

    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    shown = readme.split("```console\n$ vllmlint manifests/\n", 1)[1].split("```", 1)[0]
    (tmp_path / "manifests").mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "manifests" / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\nspec:\n  replicas: 1\n"
        "  strategy: {type: Recreate}\n  selector:\n    matchLabels: {app: vllm}\n  template:\n"
        "    metadata:\n      labels: {app: vllm}\n    spec:\n      containers:\n        - name: vllm\n"
        "          image: vllm/vllm-openai:v0.29.0\n          args:\n            - Qwen/Qwen3-8B\n"
        "            - --swap-space=16\n          resources:\n            limits:\n              nvidia.com/gpu: 1\n")
    code, out, _ = run_cli("manifests/", cwd=tmp_path)
    assert code == 1 and out == shown
    assert "rev: v0.1.0" not in readme and "pip install vllmlint\n" not in readme
    assert re.search(r"no version of vllmlint is tagged or published", readme)
