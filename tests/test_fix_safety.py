"""`--fix` never damages a file, stays linear in the number of fixes, and `--diff` is honest (issue 8):
read-only files, owners, hard links, symlinks, files edited meanwhile, 1,000 fixes in one command,
byte-order marks and terminal escape sequences."""
import os
import shutil
import stat
import subprocess
import sys
import time

import pytest

from conftest import ROOT, run_cli
from vllmlint.engine import LintOptions
from vllmlint.fix import apply
from vllmlint.fix.apply import run_fixes

BEFORE = "vllm serve Qwen/Qwen3-8B --swap-space 4\n"
AFTER = "vllm serve Qwen/Qwen3-8B\n"


@pytest.fixture
def script(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "serve.sh"
    path.write_text(BEFORE)
    return path


# --- permissions and ownership ------------------------------------------------------------------------------
def test_a_read_only_file_is_left_alone_even_for_root(script):
    os.chmod(script, 0o444)
    inode = script.stat().st_ino
    outcome = run_fixes(["serve.sh"], LintOptions())
    # Old code: rewritten through a temporary file and a rename (root may write anything), still 0444.
    assert script.read_text() == BEFORE and script.stat().st_ino == inode
    assert stat.S_IMODE(script.stat().st_mode) == 0o444
    assert outcome.refused == [("serve.sh", "read-only (mode 0444): left as it is")]
    assert outcome.files == [] and outcome.applied == 0


def test_the_read_only_note_on_the_command_line(script, tmp_path):
    os.chmod(script, 0o444)
    code, out, err = run_cli("--fix", "serve.sh", cwd=tmp_path)
    assert code == 1  # the finding is still there
    assert "vllmlint: warning: serve.sh: fix not applied: read-only (mode 0444): left as it is\n" in err
    assert "serve.sh:1:26: VL102" in out


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give files away")
def test_owner_group_and_mode_are_kept(script):
    os.chown(script, 4321, 4322)
    os.chmod(script, 0o664)
    outcome = run_fixes(["serve.sh"], LintOptions())
    assert outcome.applied == 1 and script.read_text() == AFTER
    info = script.stat()
    # Old code: the temporary file made it root's.
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4321, 4322, 0o664)
    assert sorted(p.name for p in script.parent.iterdir()) == ["serve.sh"]


def test_an_owner_that_cannot_be_kept_means_an_in_place_write(script, monkeypatch):
    os.chmod(script, 0o640)
    inode = script.stat().st_ino
    real_stat = os.stat

    def other_owner(path, *args, **kwargs):  # the file looks like someone else's: chown must fail
        info = real_stat(path, *args, **kwargs)
        if str(path).endswith("serve.sh"):
            return os.stat_result((info.st_mode, info.st_ino, info.st_dev, info.st_nlink, 4321, 4322,
                                   info.st_size, int(info.st_atime), int(info.st_mtime), int(info.st_ctime)))
        return info

    def refuse(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(apply.os, "lstat", other_owner)
    monkeypatch.setattr(apply.os, "chown", refuse)
    outcome = run_fixes(["serve.sh"], LintOptions())
    assert outcome.applied == 1 and outcome.refused == []
    assert script.read_text() == AFTER and script.stat().st_ino == inode  # same file, so same owner
    assert sorted(p.name for p in script.parent.iterdir()) == ["serve.sh"]


# --- links ------------------------------------------------------------------------------------------------------
HARD_LINKS = ("the file has 2 hard links (another name may be outside the linted paths): left as it is")


def test_a_hard_linked_file_is_left_alone(script, tmp_path):
    # Issue 27 (fix-through-hard-link-writes-outside): the other name may be outside the linted paths,
    # where nothing may be written. Old code: rewritten in place, so elsewhere.txt changed too.
    other = tmp_path / "elsewhere.txt"
    os.link(script, other)
    outcome = run_fixes(["serve.sh"], LintOptions())
    assert outcome.applied == 0 and outcome.files == [] and outcome.diff == ""
    assert outcome.refused == [("serve.sh", HARD_LINKS)]
    assert script.read_text() == BEFORE and other.read_text() == BEFORE and script.stat().st_nlink == 2
    assert [(f.code, f.value) for f in outcome.result.findings] == [("VL102", "--swap-space")]
    # --diff shows what --fix writes: nothing for that file, and the same one line
    shown = run_fixes(["serve.sh"], LintOptions(), write=False)
    assert shown.diff == "" and shown.refused == [("serve.sh", HARD_LINKS)]


def test_a_hard_link_to_a_file_outside_the_tree_is_never_written(tmp_path):
    # The reproducer of issue 27, through the command line: tree/linked.yaml is outside/shared.yaml.
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
           "    image: vllm/vllm-openai:v0.29.0\n    args: [\"--swap-space=4\", \"--model\", \"m\"]\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "tree").mkdir()
    (tmp_path / "outside" / "shared.yaml").write_text(pod)
    os.link(tmp_path / "outside" / "shared.yaml", tmp_path / "tree" / "linked.yaml")
    (tmp_path / "tree" / "own.yaml").write_text(pod.replace("name: p}", "name: q}"))
    code, out, err = run_cli("--no-cache", "--fix", ".", cwd=tmp_path / "tree")
    assert (tmp_path / "outside" / "shared.yaml").read_text() == pod
    assert f"vllmlint: warning: linked.yaml: fix not applied: {HARD_LINKS}\n" in err
    assert "fixed 1 problem(s) in 1 file(s)" in err  # the tree's own file is fixed
    assert "--swap-space" not in (tmp_path / "tree" / "own.yaml").read_text()
    assert code == 1 and "linked.yaml:8:12: VL102" in out


def test_a_file_in_a_linked_folder_outside_the_paths_is_not_written(tmp_path, monkeypatch):
    # A regular file whose folder is a link that leaves the given paths: its real path decides.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "serve.sh").write_text(BEFORE)
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "sub").symlink_to(tmp_path / "outside")
    assert apply._write_refusal("tree/sub/serve.sh", apply._write_roots(["tree"])) == (
        "reached through a symbolic link to outside the linted paths: vllmlint does not write it")
    assert apply._write_refusal("outside/serve.sh", apply._write_roots(["outside"])) is None


def test_a_symlink_is_refused_with_a_note_on_the_command_line(tmp_path):
    (tmp_path / "real.sh").write_text(BEFORE)
    (tmp_path / "link.sh").symlink_to(tmp_path / "real.sh")
    code, out, err = run_cli("--fix", "link.sh", cwd=tmp_path)
    assert code == 1
    assert ("vllmlint: warning: link.sh: fix not applied: a symbolic link to outside the linted paths: vllmlint "
            "does not write through it (fix the file it points to)\n") in err
    assert (tmp_path / "real.sh").read_text() == BEFORE and (tmp_path / "link.sh").is_symlink()


# --- a file edited while --fix runs --------------------------------------------------------------------------
EDITED = "vllm serve Qwen/Qwen3-8B --swap-space 8  # saved by an editor meanwhile\n"


def test_a_file_changed_since_it_was_read_is_not_overwritten(script, monkeypatch):
    verify = apply._verify

    def edit_meanwhile(*args):
        script.write_text(EDITED)
        return verify(*args)

    monkeypatch.setattr(apply, "_verify", edit_meanwhile)
    outcome = run_fixes(["serve.sh"], LintOptions())
    assert script.read_text() == EDITED  # old code: the editor's change was overwritten with the fix
    assert outcome.stale == ["serve.sh"] and outcome.files == [] and outcome.applied == 0
    assert outcome.refused == [("serve.sh", "the file changed since vllmlint read it: not written "
                                            "(run --fix again)")]
    assert outcome.result is not None
    assert [(f.code, f.value) for f in outcome.result.findings] == [("VL102", "--swap-space")]


def test_a_file_changed_meanwhile_exits_1_with_one_line(tmp_path):
    (tmp_path / "serve.sh").write_text(BEFORE)
    # The edit happens inside the run: a sitecustomize wraps the verification step.
    (tmp_path / "sitecustomize.py").write_text(
        "import vllmlint.fix.apply as a\n"
        "_verify = a._verify\n"
        "def _edit(*args):\n"
        "    open('serve.sh', 'w').write('vllm serve Qwen/Qwen3-8B\\n')\n"  # the user fixed it by hand
        "    return _verify(*args)\n"
        "a._verify = _edit\n")
    code, out, err = run_cli("--fix", "serve.sh", cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert code == 1, out + err  # nothing left to report, but the fix was not written: not a clean run
    assert [line for line in err.splitlines() if line.startswith("vllmlint: warning")] == [
        "vllmlint: warning: serve.sh: fix not applied: the file changed since vllmlint read it: not written "
        "(run --fix again)"]
    assert (tmp_path / "serve.sh").read_text() == AFTER


# --- speed ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,text,fixed", [
    ("many.sh", "vllm serve Qwen/Qwen3-8B" + " --swap-space 4" * 1000 + "\n", AFTER),
    ("many.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
     "    image: vllm/vllm-openai:v0.29.0\n    command: [bash, -c]\n    args:\n    - |\n"
     "      vllm serve Qwen/Qwen3-8B \\\n" + "        --swap-space 4 \\\n" * 1000 + "        --port 8000\n",
     "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
     "    image: vllm/vllm-openai:v0.29.0\n    command: [bash, -c]\n    args:\n    - |\n"
     "      vllm serve Qwen/Qwen3-8B \\\n        --port 8000\n"),
])
def test_a_thousand_fixes_in_one_command_take_seconds(tmp_path, monkeypatch, name, text, fixed):
    # Old code: 15-50 s (an argv editor rebuilt, reading every token, for each of the 1,000 findings).
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    started = time.monotonic()
    outcome = run_fixes([name], LintOptions())
    assert time.monotonic() - started < 5
    assert outcome.applied == 1000 and outcome.refused == []
    assert (tmp_path / name).read_text() == fixed
    second = run_fixes([name], LintOptions())
    assert second.applied == 0 and (tmp_path / name).read_text() == fixed


# --- --diff: the byte-order mark and control characters -------------------------------------------------------
def _patch_applies(tmp_path, name: str, diff: str, expected: bytes) -> None:
    """Apply the diff to a copy with `patch` (or by hand when it is missing) and compare bytes."""
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(tmp_path / name, copy / name)
    (tmp_path / "fix.diff").write_bytes(diff.encode("utf-8"))
    if shutil.which("patch") is None:
        pytest.skip("patch is not installed")
    check = subprocess.run(["patch", "--dry-run", "-p0", "-i", str(tmp_path / "fix.diff")], cwd=copy,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    subprocess.run(["patch", "-s", "-p0", "-i", str(tmp_path / "fix.diff")], cwd=copy, check=True)
    assert (copy / name).read_bytes() == expected


def test_diff_keeps_the_byte_order_mark_and_patch_applies_it(tmp_path):
    (tmp_path / "serve.sh").write_bytes(b"\xef\xbb\xbf" + BEFORE.encode())
    code, out, err = run_cli("--diff", "serve.sh", cwd=tmp_path)
    assert code == 1, err
    # Old code: `-vllm serve ...` without the mark, so `patch` found no line 1 to change.
    assert "-\ufeffvllm serve Qwen/Qwen3-8B --swap-space 4\n+\ufeffvllm serve Qwen/Qwen3-8B\n" in out
    _patch_applies(tmp_path, "serve.sh", out, b"\xef\xbb\xbf" + AFTER.encode())
    assert run_cli("--fix", "serve.sh", cwd=tmp_path)[0] == 0
    assert (tmp_path / "serve.sh").read_bytes() == b"\xef\xbb\xbf" + AFTER.encode()  # the fixed file keeps it


ESCAPES = "# \x1b[2J\x1b]0;owned\x07 title\rhidden\nvllm serve Qwen/Qwen3-8B --swap-space 4\n"


def test_diff_to_a_pipe_is_raw_and_applies(tmp_path):
    (tmp_path / "serve.sh").write_text(ESCAPES, newline="")
    code, out, _ = run_cli("--diff", "serve.sh", cwd=tmp_path)
    assert code == 1 and "\x1b[2J" in out  # a pipe gets the bytes of the file: `patch` needs them
    _patch_applies(tmp_path, "serve.sh", out, ESCAPES.replace(" --swap-space 4", "").encode())


def test_diff_to_a_terminal_shows_escape_sequences_instead_of_obeying_them(tmp_path):
    pty = pytest.importorskip("pty")
    (tmp_path / "serve.sh").write_text(ESCAPES, newline="")
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "vllmlint", "--diff", "serve.sh"], cwd=tmp_path,
                            stdout=follower, stderr=subprocess.DEVNULL, env=dict(os.environ, NO_COLOR="1"))
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=120) == 1
    shown = b"".join(chunks).decode().replace("\r\n", "\n")  # the terminal turns \n into \r\n
    assert "\x1b" not in shown and "\x07" not in shown
    assert " # \\x1b[2J\\x1b]0;owned\\x07 title\\x0dhidden\n" in shown
    assert "-vllm serve Qwen/Qwen3-8B --swap-space 4\n+vllm serve Qwen/Qwen3-8B\n" in shown


def test_terminal_safe_keeps_tabs_newlines_and_crlf():
    from vllmlint.check import terminal_safe

    assert terminal_safe("a\tb\r\nc\n") == "a\tb\r\nc\n"
    assert terminal_safe("\x1b[31mred\x9b\x7f\x00") == "\\x1b[31mred\\x9b\\x7f\\x00"
    assert terminal_safe("llama \U0001f999 ü") == "llama \U0001f999 ü"


def test_readme_documents_the_diff_escaping():
    readme = (ROOT / "README.md").read_text()
    assert "control characters" in readme and "--diff" in readme
