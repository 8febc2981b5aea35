"""The version `vllmlint --version` prints: the release (`__version__`), plus the commit it was built from as a
PEP 440 local label (`0.1.0+g1a2b3c4d5e6f`): read from the checkout's `.git` when the package runs from one (an
editable install, `python -m vllmlint` in a clone), or recorded in a wheel built from a checkout
(`vllmlint/_data/commit.txt`, written by hatch_build.py). No program is run: the files are read as git writes them.
"""
from __future__ import annotations

from pathlib import Path

from vllmlint import __version__

COMMIT_FILE = "commit.txt"  # under vllmlint/_data/ in a wheel


def _is_sha(text: str) -> bool:
    """A full SHA-1 or SHA-256 object name, as git writes it (no regular expression: nothing compiled at import)."""
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def version() -> str:
    """`0.1.0+g<12 hex digits of the commit>`, or the release alone when the commit is unknown."""
    package = Path(__file__).resolve().parent
    commit = recorded_commit(package) or checkout_commit(package.parent)
    return f"{__version__}+g{commit[:12]}" if commit else __version__


def recorded_commit(package: Path) -> str | None:
    try:
        text = (package / "_data" / COMMIT_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if _is_sha(text) else None


def checkout_commit(root: Path) -> str | None:
    """The commit checked out at `root` (a clone or a worktree of vllmlint), or None: not a checkout, or refs
    that cannot be read."""
    if not (root / "pyproject.toml").is_file():
        return None
    try:
        gitdir = _gitdir(root)
        if gitdir is None:
            return None
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head if _is_sha(head) else None  # a detached HEAD
        ref = head[4:].strip()
        common = gitdir
        if (gitdir / "commondir").is_file():  # a worktree: its refs are the main repository's
            common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        for base in (gitdir, common):
            if (base / ref).is_file():
                sha = (base / ref).read_text(encoding="utf-8").strip()
                return sha if _is_sha(sha) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                sha, _, name = line.partition(" ")
                if name == ref and _is_sha(sha):
                    return sha
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _gitdir(root: Path) -> Path | None:
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # `gitdir: PATH` (a worktree or a submodule)
        text = dot_git.read_text(encoding="utf-8").strip()
        if text.startswith("gitdir:"):
            return (root / text[len("gitdir:"):].strip()).resolve()
    return None
