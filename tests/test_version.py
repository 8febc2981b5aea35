"""`vllmlint --version`: the release and, from a checkout or a wheel built from one, the commit (PEP 440 local
label `+g` and 12 hex digits), read from the files git writes (no program is run)."""
import subprocess
import sys

from vllmlint import __version__
from vllmlint.version import checkout_commit, recorded_commit

from conftest import ROOT, run_cli

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_version_names_the_checkouts_commit():
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    for flag in ("--version", "-V"):
        code, out, _ = run_cli(flag)
        assert code == 0
        if head.returncode == 0:
            assert out == f"vllmlint, version {__version__}+g{head.stdout.strip()[:12]}\n"
        else:
            assert out.startswith(f"vllmlint, version {__version__}")


def test_the_commit_is_read_from_branches_packed_refs_detached_heads_and_worktrees(tmp_path):
    checkout = tmp_path / "clone"
    (checkout / ".git" / "refs" / "heads").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("[project]\nname = 'vllmlint'\n")
    git = checkout / ".git"
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    assert checkout_commit(checkout) is None  # an unborn branch
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{SHA} refs/heads/main\n")
    assert checkout_commit(checkout) == SHA
    other = SHA[::-1]
    (git / "refs" / "heads" / "main").write_text(other + "\n")  # a loose ref wins over the packed one
    assert checkout_commit(checkout) == other
    (git / "HEAD").write_text(SHA + "\n")
    assert checkout_commit(checkout) == SHA  # detached
    worktree = tmp_path / "worktree"
    (worktree / "pyproject.toml").parent.mkdir()
    (worktree / "pyproject.toml").write_text("")
    private = git / "worktrees" / "wt"
    private.mkdir(parents=True)
    (private / "HEAD").write_text("ref: refs/heads/main\n")
    (private / "commondir").write_text("../..\n")
    (worktree / ".git").write_text(f"gitdir: {private}\n")
    assert checkout_commit(worktree) == other
    (git / "refs" / "heads" / "main").write_text("not a sha\n")
    assert checkout_commit(worktree) is None
    assert checkout_commit(tmp_path) is None  # not a checkout


def test_a_wheel_records_its_commit(tmp_path):
    (tmp_path / "_data").mkdir()
    assert recorded_commit(tmp_path) is None
    (tmp_path / "_data" / "commit.txt").write_text(SHA + "\n")
    assert recorded_commit(tmp_path) == SHA
    (tmp_path / "_data" / "commit.txt").write_text("../../etc\n")
    assert recorded_commit(tmp_path) is None


def test_no_git_program_is_run():
    code = ("import subprocess, sys\n"
            "def refuse(*a, **k):\n    raise AssertionError('ran a program')\n"
            "subprocess.Popen = refuse\n"
            "from vllmlint.version import version\nprint(version())\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith(__version__), done.stderr
