"""Hostile and broken input (issue 8): never hang, crash, lie or execute. Each test failed on the code before
the fix; subprocess runs stand in where a failure would be a hang or a segfault of the test process."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import CLEAN_DEPLOYMENT, DEPLOYMENT, run_cli
from vllmlint.engine import lint_paths
from vllmlint.source.yamlmodel import SourceFile, parse_documents, to_python

# --- no command from the linted repository runs ----------------------------------------------------


def test_git_config_of_the_linted_repository_is_never_executed(tmp_path):
    marker = tmp_path / "fsmonitor-ran"
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    repo = tmp_path / "repo"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    with open(repo / ".git" / "config", "a") as config:
        config.write(f"[core]\n\tfsmonitor = {hook}\n")
    (repo / ".gitignore").write_text("generated/\n")
    (repo / "generated").mkdir()
    (repo / "generated" / "bad.yaml").write_text(DEPLOYMENT)
    (repo / "bad.yaml").write_text(DEPLOYMENT)
    code, out, _ = run_cli(".", cwd=repo)
    assert not marker.exists(), "a command named by the linted repository's .git/config ran"
    assert code == 1 and "bad.yaml:12:49" in out and "generated/" not in out


def test_gitignore_levels_negations_and_info_exclude(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("*.gen.yaml\n!keep.gen.yaml\nbuild/\n")
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("local.yaml\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("/only-here.yaml\n!again.gen.yaml\n")
    (tmp_path / "build").mkdir()
    names = ["a.gen.yaml", "keep.gen.yaml", "local.yaml", "build/x.yaml", "sub/only-here.yaml",
             "sub/again.gen.yaml", "sub/deep/only-here.yaml", "plain.yaml"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(DEPLOYMENT)
    _, out, _ = run_cli(".", "--format", "json", cwd=tmp_path)
    linted = {f["path"] for f in json.loads(out)["findings"]}
    assert linted == {"keep.gen.yaml", "sub/again.gen.yaml", "sub/deep/only-here.yaml", "plain.yaml"}
    # a tracked file is never ignored (what `git check-ignore` did: it does not report tracked files)
    subprocess.run(["git", "-C", str(tmp_path), "add", "-f", "a.gen.yaml"], check=True)
    _, out, _ = run_cli(".", "--format", "json", cwd=tmp_path)
    assert "a.gen.yaml" in {f["path"] for f in json.loads(out)["findings"]}


# --- filesystem ------------------------------------------------------------------------------------


def test_fifo_in_a_scanned_folder_is_not_opened(tmp_path):
    (tmp_path / "pod.yaml").write_text(DEPLOYMENT)
    os.mkfifo(tmp_path / "pipe.yaml")
    code, out, err = run_cli(".", cwd=tmp_path)  # blocked forever before (run_cli times out at 120 s)
    assert code == 1 and "pod.yaml:12:49" in out and "pipe" not in out + err


def test_fifo_named_explicitly_is_read_as_a_stream_with_the_size_limit(tmp_path):
    fifo = tmp_path / "in.yaml"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat /dev/zero > {fifo}"], stderr=subprocess.DEVNULL)
    try:
        code, _, err = run_cli("--max-file-size", "1", str(fifo), cwd=tmp_path)
    finally:
        writer.kill()
        writer.wait()
    assert "in.yaml: skipped: the stream is over the 1 MiB limit" in err and code == 0
    fifo.unlink()
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat > {fifo}"], stdin=subprocess.PIPE)
    writer.stdin.write(DEPLOYMENT.encode())
    writer.stdin.close()
    code, out, _ = run_cli(str(fifo), cwd=tmp_path)
    writer.wait()
    assert code == 1 and "in.yaml:12:49" in out


def test_standard_input_has_the_size_limit():
    started = time.perf_counter()
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run([sys.executable, "-m", "vllmlint", "--max-file-size", "1", "-"], stdin=zero,
                              capture_output=True, timeout=60)
    assert time.perf_counter() - started < 30
    assert proc.returncode == 0
    assert "-: skipped: the stream is over the 1 MiB limit" in proc.stderr.decode()


def _unprivileged():
    """A way to run the command line as someone the permissions apply to: as root (who bypasses them),
    `setpriv` to nobody; None when there is none."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


def _world_readable_tmp():
    folder = Path(tempfile.mkdtemp(prefix="vllmlint-perm-"))
    folder.chmod(0o755)
    return folder


def test_file_under_a_folder_that_cannot_be_searched_is_one_line():
    """Real permissions, as an unprivileged user (root bypasses them)."""
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("no way to drop privileges here")
    folder = _world_readable_tmp()
    try:
        (folder / "locked").mkdir()
        (folder / "locked" / "pod.yaml").write_text(DEPLOYMENT)
        (folder / "ok.yaml").write_text(DEPLOYMENT)
        (folder / "locked").chmod(0o600)  # readable, not searchable
        proc = subprocess.run(prefix + [sys.executable, "-m", "vllmlint", "locked/pod.yaml", "ok.yaml"],
                              cwd=folder, capture_output=True, timeout=60, env=dict(os.environ, NO_COLOR="1"))
        out, err = proc.stdout.decode(), proc.stderr.decode()
        if "No module named" in err:
            pytest.skip("the unprivileged user cannot import vllmlint here")
        assert "internal error" not in err and "Traceback" not in err
        assert "vllmlint: error: locked/pod.yaml: cannot read file: Permission denied" in err
        assert "ok.yaml:12:49" in out and proc.returncode == 2  # an unreadable file fails the run, as before
        # a folder that cannot be listed inside a scan: said in one line, and the run does not pass
        (folder / "locked").chmod(0o300)  # searchable, not listable
        proc = subprocess.run(prefix + [sys.executable, "-m", "vllmlint", "."], cwd=folder, capture_output=True,
                              timeout=60, env=dict(os.environ, NO_COLOR="1"))
        err = proc.stderr.decode()
        assert "vllmlint: error: locked: cannot list folder: Permission denied; its files were not linted" in err
        assert proc.returncode == 2
    finally:
        (folder / "locked").chmod(0o700)
        shutil.rmtree(folder)


def test_file_under_an_unsearchable_folder_simulated(tmp_path, monkeypatch):
    """The same with stat() and open() made to fail as they do for a non-root user (what this proves: the
    error path, not the kernel's permission check)."""
    (tmp_path / "locked").mkdir()
    locked = tmp_path / "locked" / "pod.yaml"
    locked.write_text(DEPLOYMENT)
    (tmp_path / "ok.yaml").write_text(DEPLOYMENT)
    real_stat, real_open = os.stat, open

    def denied(path):
        return str(path).endswith(os.path.join("locked", "pod.yaml"))

    def fake_stat(path, *args, **kwargs):
        if denied(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    def fake_open(path, *args, **kwargs):
        if denied(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", fake_stat)
    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr("io.open", fake_open)
    monkeypatch.chdir(tmp_path)
    result, missing = lint_paths(["locked/pod.yaml", "ok.yaml"])
    assert missing == []
    assert [(n.code, n.path, n.message, n.level) for n in result.notices if n.code == "VL001"] == [
        ("VL001", "locked/pod.yaml", "cannot read file: Permission denied", "error")]
    assert result.internal_error  # exit 2, as for any unreadable file
    assert [(f.path, f.span.line) for f in result.findings if f.code == "VL102"] == [("ok.yaml", 12)]


def test_unlistable_folder_in_a_scan_is_said_simulated(tmp_path, monkeypatch):
    from vllmlint.source import files

    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "pod.yaml").write_text(DEPLOYMENT)
    (tmp_path / "ok.yaml").write_text(DEPLOYMENT)
    real_scandir = os.scandir

    def fake_scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(files.os, "scandir", fake_scandir)
    monkeypatch.chdir(tmp_path)
    found = files.collect(["."])
    assert [str(f) for f in found.files] == ["ok.yaml"]
    assert [(n.path, n.message, n.level) for n in found.notices] == [
        ("locked", "cannot list folder: Permission denied; its files were not linted", "error")]
    assert found.failed


# --- symlinks --------------------------------------------------------------------------------------

BROKEN_SECRET = "apiVersion: v1\npassword: hunter2: x\n"  # a syntax error on the line of the secret


def test_links_out_of_the_tree_are_not_followed_quoted_or_fixed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(BROKEN_SECRET)
    (outside / "serve.sh").write_text("vllm serve Qwen/Qwen3-8B --swap-space 4\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pod.yaml").write_text(DEPLOYMENT)
    (tree / "creds.yaml").symlink_to(outside / "secret.yaml")
    (tree / "serve.sh").symlink_to(outside / "serve.sh")
    (tree / "elsewhere").symlink_to(outside)
    code, out, err = run_cli("tree", cwd=tmp_path)
    assert "hunter2" not in out + err  # never a line of an outside file
    assert "tree/pod.yaml:12:49" in out and code == 1
    assert "vllmlint: note: tree/creds.yaml: skipped: symbolic link to outside the linted paths" in err
    run_cli("--fix", "tree", cwd=tmp_path)
    assert (outside / "serve.sh").read_text() == "vllm serve Qwen/Qwen3-8B --swap-space 4\n"
    # asked: --follow-links lints them, and still never writes through them
    code, out, err = run_cli("--follow-links", "tree", cwd=tmp_path)
    assert "tree/creds.yaml:2:18: VL001" in out and "hunter2" in out and "tree/serve.sh:1:26: VL102" in out
    run_cli("--fix", "--follow-links", "tree", cwd=tmp_path)
    assert (outside / "serve.sh").read_text() == "vllm serve Qwen/Qwen3-8B --swap-space 4\n"


def test_links_inside_the_tree_are_still_followed(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "pod.yaml").write_text(DEPLOYMENT)
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    (tmp_path / "loop").symlink_to(tmp_path)
    code, out, err = run_cli(".", cwd=tmp_path)
    assert code == 1 and out.count("VL102") == 1 and "skipped" not in err


def test_fix_keeps_reporting_followed_files_and_repairs_links_inside_the_tree(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.yaml").write_text(DEPLOYMENT)
    (outside / "more").mkdir()
    (outside / "more" / "serve.sh").write_text("vllm serve Qwen/Qwen3-8B --swap-space 4\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pod.yaml").write_text(DEPLOYMENT)
    (tree / "real.sh").write_text("vllm serve Qwen/Qwen3-8B --swap-space 4\n")
    (tree / "a-link.sh").symlink_to("real.sh")  # inside the tree, met before real.sh
    (tree / "link.yaml").symlink_to(outside / "x.yaml")
    (tree / "linkdir").symlink_to(outside / "more")
    _, out, _ = run_cli("--follow-links", "--vllm-version", "0.29.0", ".", cwd=tree)
    assert "(4 files checked, 4 vLLM workloads)" in out
    code, out, err = run_cli("--fix", "--follow-links", "--vllm-version", "0.29.0", ".", cwd=tree)
    assert "(4 files checked, 4 vLLM workloads)" in out  # the followed files are still linted and reported
    assert "link.yaml:12:49" in out and "linkdir/serve.sh:1:26: VL102" in out and code == 1
    assert "a-link.sh" not in out + err and (tree / "a-link.sh").is_symlink()
    assert (tree / "real.sh").read_text() == "vllm serve Qwen/Qwen3-8B\n"
    assert (outside / "more" / "serve.sh").read_text() == "vllm serve Qwen/Qwen3-8B --swap-space 4\n"
    assert (outside / "x.yaml").read_text() == DEPLOYMENT
    for shown in ("link.yaml", "linkdir/serve.sh"):
        assert (f"vllmlint: warning: {shown}: fix not applied: reached through a symbolic link that leaves the "
                "linted paths" in err)


def test_dangling_link_is_one_line_and_the_scan_goes_on(tmp_path):
    (tmp_path / "pod.yaml").write_text(DEPLOYMENT)
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    code, out, err = run_cli(".", cwd=tmp_path)
    assert code == 1 and "pod.yaml:12:49" in out
    assert err.splitlines() == ["vllmlint: warning: gone.yaml: skipped: broken symbolic link (its target does not "
                                "exist)"]


# --- YAML reader -----------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [150, 30_000, 100_000])
def test_deep_nesting_is_an_error_at_its_position_not_a_crash(tmp_path, depth):
    text = "apiVersion: v1\nkind: ConfigMap\ndata:\n  x: " + "[" * depth + "]" * depth + "\n"
    (tmp_path / "deep.yaml").write_text(text)
    started = time.perf_counter()
    code, out, err = run_cli("deep.yaml", cwd=tmp_path)  # a segfault was exit 139
    assert time.perf_counter() - started < 20
    assert code == 1, err
    # the collection at level 101 (the mappings are levels 1 and 2, the first bracket level 3): column 6 + 98
    assert "deep.yaml:4:104: VL001 [error] YAML syntax error: nesting deeper than 100 levels" in out


def test_deep_block_nesting_keeps_the_documents_before():
    text = "a: 1\n---\n" + "".join("  " * i + f"k{i}:\n" for i in range(300)) + "  " * 300 + "v\n"
    documents, error = parse_documents(SourceFile("t.yaml", text))
    assert [d.root.keys() for d in documents] == [["a"]]
    assert (error.line, error.col) == (4 + 99, 1 + 2 * 100)  # the mapping under k99 and "deeper than 100" in error.message


def test_alias_bombs_inside_the_model_do_not_hang(tmp_path):
    lines = ["  a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    bomb = "\n".join(lines)
    selector = bomb.replace("  a", "    a")
    node_selector = bomb.replace("  a", "        a")
    deployment = DEPLOYMENT.replace("spec:\n      containers:",
                                    "spec:\n      nodeSelector:\n" + node_selector + "\n      containers:")
    text = f"""apiVersion: v1
kind: Service
metadata: {{name: vllm}}
spec:
  selector:
{selector}
    app: vllm
  ports: [{{port: 8000}}]
---
{deployment}
---
kind: Pod
apiVersion: v1
metadata: {{name: loop, labels: &l {{app: *l}}}}
spec: {{containers: &c [*c]}}
"""
    (tmp_path / "bomb.yaml").write_text(text)
    started = time.perf_counter()
    code, out, err = run_cli("bomb.yaml", cwd=tmp_path)
    assert time.perf_counter() - started < 30
    assert code in (0, 1) and "internal error" not in err, err


def test_to_python_bounds_aliases_and_stops_at_cycles():
    (doc,), _ = parse_documents(SourceFile("t", "a: &a [*a, *a, 1]\nb: &b {x: *b}\n"))
    assert to_python(doc.root) == {"a": [None, None, 1], "b": {"x": None}}
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 12)]
    (doc,), _ = parse_documents(SourceFile("t", "\n".join(lines) + "\n"))
    started = time.perf_counter()
    to_python(doc.root)
    assert time.perf_counter() - started < 1


def test_config_exclude_with_a_self_referencing_alias(tmp_path):
    (tmp_path / ".vllmlint.yaml").write_text("exclude: &a [*a]\n")
    (tmp_path / "pod.yaml").write_text(DEPLOYMENT)
    code, _, err = run_cli("pod.yaml", cwd=tmp_path)
    assert code == 2 and ".vllmlint.yaml:1: an alias refers to the collection that contains it" in err
    assert "None" not in err and "Traceback" not in err
    lines = ["x0: &x0 [a, a, a, a, a, a, a, a, a, a]"]
    lines += [f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 10)}]" for i in range(1, 10)]
    (tmp_path / ".vllmlint.yaml").write_text("exclude: *x9\n".join(["\n".join(lines) + "\n", ""]))
    code, _, err = run_cli("pod.yaml", cwd=tmp_path)
    assert code == 2 and ".vllmlint.yaml" in err and "Traceback" not in err


EMOJI = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "vllm-\U0001f999", "annotations": {"team": "llama \U0001f999"}},
         "spec": {"selector": {"matchLabels": {"app": "vllm"}}, "template": {
             "metadata": {"labels": {"app": "vllm"}},
             "spec": {"containers": [{"name": "vllm", "image": "vllm/vllm-openai:v0.29.0",
                                      "command": ["vllm", "serve", "Qwen/Qwen3-0.6B", "--swap-space", "4"],
                                      "env": [{"name": "GREETING", "value": "hi \U0001f999 \ud83e"}]}]}}}}


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_emoji_escaped_as_surrogate_pairs_in_json(tmp_path, fmt):
    (tmp_path / "deploy.json").write_text(json.dumps(EMOJI, indent=2))  # ensure_ascii: "\ud83e\udd99"
    code, out, err = run_cli("--format", fmt, "deploy.json", cwd=tmp_path)
    assert code == 1 and "internal error" not in err, err
    (doc,), _ = parse_documents(SourceFile("d.json", json.dumps(EMOJI)))
    metadata = doc.root.get("metadata")
    assert metadata.get("annotations").get("team").value == "llama \U0001f999"


def test_emoji_in_json_with_fix_diff_and_baseline(tmp_path):
    (tmp_path / "deploy.json").write_text(json.dumps(EMOJI, indent=2))
    code, out, err = run_cli("--diff", "deploy.json", cwd=tmp_path)
    assert code == 1 and "internal error" not in err and "--swap-space" in out
    code, _, err = run_cli("--write-baseline", "b.json", "deploy.json", cwd=tmp_path)
    assert code == 0 and "internal error" not in err
    assert "Deployment vllm-\U0001f999 runs" in (tmp_path / "b.json").read_text(encoding="utf-8")
    code, _, err = run_cli("--fix", "deploy.json", cwd=tmp_path)
    assert "internal error" not in err and "swap-space" not in (tmp_path / "deploy.json").read_text()



@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_a_lone_surrogate_a_check_decoded_itself_is_written(tmp_path, fmt):
    # VL106 json.loads() a `--speculative-config` value: `"\\ud83e"` there is a lone surrogate that the
    # YAML reader never saw. Before: UnicodeEncodeError in Finding.fingerprint, exit 2.
    (tmp_path / "serve.sh").write_text("#!/bin/sh\nvllm serve /models/target --speculative-config "
                                        "'{\"\\ud83emodel\": \"/models/draft\"}'\n")
    code, out, err = run_cli("--format", fmt, "--vllm-version", "0.29.0", "serve.sh", cwd=tmp_path)
    assert code == 1 and "internal error" not in err, err
    if fmt == "json":
        (finding,) = json.loads(out)["findings"]
        assert (finding["code"], finding["line"], finding["column"]) == ("VL106", 2, 48)
        assert "`\ufffdmodel`" in finding["message"]

def _scalar(text, key="a"):
    source = SourceFile("t.yaml", text)
    (doc,), error = parse_documents(source)
    assert error is None
    return source, doc.root.get(key)


def _where(source, scalar, token):
    return source.line_col(scalar.source_index(scalar.text.index(token)))


@pytest.mark.parametrize("escape", ["\\n", "\\t", '\\"', "\\\\", "\\/", "\\x41", "\\u00e9", "\\U0001F999",
                                    "\\0", "\\a", "\\b", "\\e", "\\f", "\\r", "\\v", "\\N", "\\_", "\\L", "\\P",
                                    "\\ud83e\\udd99", "\\ "])
def test_positions_after_every_double_quoted_escape(escape):
    text = f'a: "vllm serve m {escape} --port 8000 {escape}{escape} --x 1"\n'
    source, scalar = _scalar(text)
    port = text.index("--port")
    assert _where(source, scalar, "--port") == (1, port + 1)
    assert _where(source, scalar, "--x") == (1, text.index("--x") + 1)
    assert text[scalar.source_index(scalar.text.index("--port")):].startswith("--port")


def test_positions_after_escaped_line_breaks_and_folding():
    text = 'a: "vllm serve m \\\n    --port 8000\n\n    --x 1 \\\n  --y"\nb: \'it\'\'s --z\n  --w\'\n'
    source, scalar = _scalar(text)
    assert scalar.text == "vllm serve m --port 8000\n--x 1 --y"
    assert _where(source, scalar, "--port") == (2, 5)
    assert _where(source, scalar, "--x") == (4, 5)
    assert _where(source, scalar, "--y") == (5, 3)
    source, quoted = _scalar(text, "b")
    assert quoted.text == "it's --z --w"
    assert _where(source, quoted, "--z") == (6, 11) and _where(source, quoted, "--w") == (7, 3)
    source, plain = _scalar("a: vllm serve\n  --port 1\n\n  --x\n")
    assert _where(source, plain, "--port") == (2, 3) and _where(source, plain, "--x") == (4, 3)


@pytest.mark.parametrize("header", ["|", "|-", "|+", "|2", "|2-", ">", ">-", ">+", ">2"])
def test_positions_in_block_scalars(header):
    text = f"a: {header}\n    vllm serve m\n    --port 1\n\n    --x 2\n      --more\n    --y\n\n"
    source, scalar = _scalar(text)
    indent = 2 if "2" in header else 0
    for token, line in (("--port", 3), ("--x", 5), ("--more", 6), ("--y", 7)):
        col = 5 + (2 if token == "--more" else 0)
        assert _where(source, scalar, token) == (line, col), (token, scalar.text)
    assert scalar.text.startswith(" " * indent + "vllm serve m")


def test_positions_with_crlf_line_breaks():
    text = 'a: "x \\t\r\n  --port 1"\r\nb: |\r\n  y\r\n  --q\r\n'
    source, scalar = _scalar(text)
    assert _where(source, scalar, "--port") == (2, 3)
    source, block = _scalar(text, "b")
    assert _where(source, block, "--q") == (5, 3)


def test_offset_map_is_linear():
    body = " ".join(["--flag\\u00e9x\\n\\t"] * 14000)  # about 200 KB of source with 42,000 escapes
    text = f'a: "{body} --last"\n'
    assert len(text) > 200_000
    source, scalar = _scalar(text)
    started = time.perf_counter()
    where = scalar.source_index(scalar.text.index("--last"))
    assert time.perf_counter() - started < 0.5
    assert text[where:where + 6] == "--last"


def test_duplicate_anchor_warning_does_not_leak(tmp_path):
    # An object (kind and apiVersion), so that the run understands something and stderr stays empty.
    (tmp_path / "a.yaml").write_text('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n'
                                     '  a: &x "1"\n  b: &x "2"\n  c: *x\n')
    code, out, err = run_cli("a.yaml", cwd=tmp_path)
    assert code == 0 and err == "" and "All checks passed" in out
    (doc,), _ = parse_documents(SourceFile("a.yaml", "a: &x 1\nb: &x 2\nc: *x\n"))
    assert doc.root.get("c").value == 2  # the later anchor wins


# --- honest output ---------------------------------------------------------------------------------


def test_no_all_checks_passed_on_a_run_that_exits_2(tmp_path):
    (tmp_path / "ok.yaml").write_text(CLEAN_DEPLOYMENT)
    code, out, err = run_cli("ok.yaml", "missing.yaml", cwd=tmp_path)
    assert code == 2 and "All checks passed" not in out
    assert out == "No problems found, but the run had errors (1 file checked, 1 vLLM workload).\n"
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere")
    code, out, _ = run_cli("ok.yaml", "gone.yaml", cwd=tmp_path)
    assert code == 2 and "All checks passed" not in out
    code, out, _ = run_cli("ok.yaml", cwd=tmp_path)
    assert code == 0 and out == "All checks passed (1 file checked, 1 vLLM workload).\n"


# --- determinism -----------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_argument_order_does_not_change_the_output(tmp_path, fmt):
    (tmp_path / "a.yaml").write_text(DEPLOYMENT)
    (tmp_path / "b.yaml").write_text(DEPLOYMENT.replace("name: vllm}", "name: other}").replace("--swap-space",
                                                                                            "--disable-log-requests"))
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "svc.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: vllm}\n"
                                             "spec: {type: LoadBalancer, selector: {app: vllm}, ports: [{port: 8000}]}\n")
    one = run_cli("--format", fmt, "b.yaml", "a.yaml", "c", cwd=tmp_path)
    two = run_cli("--format", fmt, "c", "a.yaml", "b.yaml", cwd=tmp_path)
    assert one == two and one[0] == 1


@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n", "\u2028", "\x85"])
def test_deep_block_nesting_with_any_yaml_line_break(newline):
    """YAML 1.1 (libyaml) also breaks lines at CR, NEL, LS and PS: the cheap depth bound must see them."""
    text = "a:" + "".join(newline + " " * i + f"k{i}:" for i in range(1, 150)) + " 1" + newline
    documents, error = parse_documents(SourceFile("t.yaml", text))
    assert error is not None and "deeper than 100" in error.message
    assert text[error.index:].lstrip().startswith("k100:")


def test_finding_after_an_escape_in_a_bash_c_string_is_placed_on_the_flag(tmp_path):
    line = '        command: ["bash", "-c", "echo \\u00e9t\\u00e9\\nexec vllm serve Qwen/Qwen3-0.6B --swap-space 4"]\n'
    text = DEPLOYMENT.replace('        command: [vllm, serve, Qwen/Qwen3-0.6B, --swap-space, "4"]\n', line)
    (tmp_path / "pod.yaml").write_text(text)
    code, out, _ = run_cli("--format", "json", "pod.yaml", cwd=tmp_path)
    (finding,) = [f for f in json.loads(out)["findings"] if f["code"] == "VL102"]
    assert (finding["line"], finding["column"]) == (12, line.index("--swap-space") + 1)


def test_deep_nesting_only_the_pure_parser_reaches_is_placed_too():
    """libyaml rejects `{image: repo:tag}` (valid YAML 1.2) and stops; the pure-Python retry goes on, and
    its RecursionError was an error at 1:1."""
    text = "x: 1\n---\na: {image: repo:tag}\nb: " + "[" * 5000 + "]" * 5000 + "\n"
    documents, error = parse_documents(SourceFile("t.yaml", text))
    assert [d.root.keys() for d in documents] == [["x"]]
    assert (error.line, error.col) == (4, 4 + 99) and "deeper than 100" in error.message


@pytest.mark.parametrize("escape", ["\\UFFFFFFFF", "\\U00110000"])
def test_escape_past_unicode_is_a_syntax_error_not_a_crash(tmp_path, escape):
    """Found by the fuzz test: libyaml reports it, then the pure-Python retry's chr() raised."""
    (tmp_path / "a.yaml").write_text(f'a: 1\nb: "{escape}"\n')
    code, out, err = run_cli("a.yaml", cwd=tmp_path)
    assert code == 1 and "internal error" not in err
    assert "a.yaml:2:7: VL001 [error] YAML syntax error: while parsing a quoted scalar: found invalid Unicode" in out


def test_pure_parser_retry_starts_at_the_document_libyaml_stopped_in(monkeypatch):
    """libyaml rejects `{image: repo:tag}`; the pure-Python retry (20 times slower) re-reads only from that
    document, and positions, document numbers and duplicate keys stay those of the whole file."""
    from vllmlint.source import yamlmodel

    seen = []
    real = yamlmodel._compose_text

    def spy(source, text, pure):
        seen.append((pure, len(text)))
        return real(source, text, pure)

    monkeypatch.setattr(yamlmodel, "_compose_text", spy)
    text = "a: 1\na: 2\n---\n" * 200 + "b: {image: repo:tag}\nb: 3\n---\nc: 3\n"
    source = SourceFile("t.yaml", text)
    documents, error = parse_documents(source)
    assert error is None and len(documents) == 202 and [d.index for d in documents] == list(range(202))
    assert [pure for pure, _ in seen] == [False, True] and seen[1][1] == len("---\nb: {image: repo:tag}\nb: 3\n---\nc: 3\n")
    image = documents[200].root.get("b").get("image")
    assert source.line_col(image.start) == (601, 12) and text[image.start:image.end] == "repo:tag"
    assert len(source.duplicate_keys) == 201 and source.line_col(source.duplicate_keys[-1][0]) == (602, 1)


def test_follow_links_from_the_configuration(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pod.yaml").write_text(DEPLOYMENT)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pod.yaml").symlink_to(outside / "pod.yaml")
    code, out, err = run_cli(".", cwd=tree)
    assert code == 0 and "skipped: symbolic link to outside the linted paths" in err
    (tree / ".vllmlint.yaml").write_text("follow-links: true\n")  # the tree's own: refused (issue 27)
    code, out, err = run_cli(".", cwd=tree)
    assert code == 0 and "skipped: symbolic link to outside the linted paths" in err
    (tmp_path / "mine.yaml").write_text("follow-links: true\n")  # the user's, outside the tree
    code, out, err = run_cli("--config", tmp_path / "mine.yaml", ".", cwd=tree)
    assert code == 1 and "pod.yaml:12:49" in out and "skipped" not in err
    code, out, err = run_cli("--no-config", "--follow-links", ".", cwd=tree)
    assert code == 1 and "pod.yaml:12:49" in out


def test_deep_nesting_after_a_libyaml_only_complaint_is_found_before_the_slow_composer():
    """Found by the fuzz test (6 s for 3 KB): libyaml stops at a lone surrogate escape; the pure-Python
    scanner, quadratic in the flow depth, then went 1,700 levels down twice (events, then composing)."""
    text = 'a:\n  b: "\\udd990,1"\nx: ' + "[" * 1700 + "]" * 1700 + "\n"
    started = time.process_time()
    documents, error = parse_documents(SourceFile("t.yaml", text))
    assert time.process_time() - started < 2
    assert (error.line, error.col) == (3, 4 + 99) and "deeper than 100" in error.message
