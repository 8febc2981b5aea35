"""`.gitignore` handling against what real `git check-ignore` says (git runs here only in repositories the
test made itself). Each test failed before its fix."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import DEPLOYMENT, run_cli

GIT = shutil.which("git")
NAMES = ["secret.yaml", "other.yaml", "a.gen.yaml", "keep.gen.yaml", "plain.yaml"]


def _repo(tmp_path):
    repo = tmp_path / "repo"
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    if GIT:
        subprocess.run([GIT, "init", "-q", str(repo)], check=True, env=_env(home))
    else:
        (repo / ".git").mkdir(parents=True)
    for name in NAMES:
        (repo / name).write_text(DEPLOYMENT)
    return repo, home


def _env(home):
    # the same user configuration for git and vllmlint; no system config, no GIT_CONFIG_GLOBAL override
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), GIT_CONFIG_NOSYSTEM="1")
    return env


def _linted(repo, home):
    _, out, _ = run_cli(".", "--format", "json", cwd=repo, env=_env(home))
    linted = {f["path"] for f in json.loads(out)["findings"]}
    if GIT:  # what git ignores is exactly what is not linted
        proc = subprocess.run([GIT, "check-ignore", "--no-index", *NAMES], cwd=repo, env=_env(home),
                              capture_output=True, text=True)
        assert proc.returncode in (0, 1), proc.stderr
        assert linted == set(NAMES) - set(proc.stdout.split())
    return linted


@pytest.mark.parametrize("bad", ["!", "a\\", "[z-a]"])
def test_a_bad_gitignore_line_drops_only_that_line(tmp_path, bad):
    repo, home = _repo(tmp_path)
    (repo / ".gitignore").write_text(f"secret.yaml\n{bad}\n*.gen.yaml\n{bad}\n!keep.gen.yaml\n{bad}\n")
    assert _linted(repo, home) == {"other.yaml", "keep.gen.yaml", "plain.yaml"}


CASES = {
    # where: (config file under home or in the repository, its text)
    "gitconfig": ([(".gitconfig", "[core]\n\texcludesFile = ~/gi\n")], "gi"),
    "xdg-config-quoted": ([(".config/git/config", '[user]\n\tname = x\n[Core]\n\tExcludesFile = "{home}/g i" ; c\n')],
                          "g i"),
    "gitconfig-wins-over-xdg": ([(".config/git/config", "[core]\n\texcludesfile = ~/nothing\n"),
                                 (".gitconfig", "[core] excludesFile = ~/gi # comment\n")], "gi"),
    "repository-config-relative": ([("REPO/.git/config", "[core]\n\texcludesFile = gi-rel\n")], "REPO/gi-rel"),
    "continued-value": ([(".gitconfig", "[core]\n\tpager = less \\\n excludesFile = ~/wrong\n"
                                        "\texcludesFile = ~/g\\\ni\n")], "gi"),
    "subsection-is-not-core": ([(".gitconfig", '[core "x"]\n\texcludesFile = ~/gi\n')], None),
    "empty-value-disables-xdg": ([(".gitconfig", "[core]\n\texcludesFile =\n")], None),
}


@pytest.mark.parametrize("case", CASES)
def test_core_excludes_file_is_honoured(tmp_path, case):
    repo, home = _repo(tmp_path)
    configs, excludes = CASES[case]
    # the default global excludes file: replaced by core.excludesFile when that is set
    (home / ".config" / "git" / "ignore").write_text("other.yaml\n")
    for where, text in configs:
        target = repo / where[len("REPO/"):] if where.startswith("REPO/") else home / where
        with open(target, "a") as handle:
            handle.write(text.replace("{home}", str(home)))
    if excludes:
        target = repo / excludes[len("REPO/"):] if excludes.startswith("REPO/") else home / excludes
        target.write_text("secret.yaml\n")
    linted = _linted(repo, home)
    if case == "subsection-is-not-core":
        assert linted == set(NAMES) - {"other.yaml"}
    elif case == "empty-value-disables-xdg":
        assert linted == set(NAMES)
    else:
        assert linted == set(NAMES) - {"secret.yaml"}


def test_core_excludes_file_naming_a_fifo_is_not_opened(tmp_path):
    repo, home = _repo(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    with open(repo / ".git" / "config", "a") as handle:
        handle.write(f"[core]\n\texcludesFile = {tmp_path / 'fifo'}\n")
    code, out, _ = run_cli(".", cwd=repo, env=_env(home))  # would block forever opening the FIFO
    assert code == 1 and "secret.yaml:12:49" in out


ATOMS = ["a", "b", "ab", "*", "?", "[ab]", "[!a]", "**", "/", "[a-b]", "\\*", "x", ".", "[]a]", "[^b]", "[[:alpha:]]"]


@pytest.mark.skipif(GIT is None, reason="git is not installed")
@pytest.mark.parametrize("seed", range(3))
def test_random_patterns_ignore_what_git_ignores(tmp_path, monkeypatch, seed):
    """vllmlint's own wildmatch (issue 27: no backtracking regex) against `git check-ignore` on random patterns of
    stars, `**`, classes, ranges, escapes, negations and trailing slashes, at several depths."""
    import random

    from vllmlint.source import files

    rng = random.Random(seed)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for trial in range(15):
        repo = tmp_path / f"r{trial}"
        subprocess.run([GIT, "init", "-q", str(repo)], check=True, env=_env(home))
        paths = set()
        for _ in range(12):
            parts = ["".join(rng.choice("abx.") for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 3))]
            parts = [part if part.strip(".") else part + "z" for part in parts]
            path = "/".join(parts) + ".yaml"
            if not (repo / path).exists():
                try:
                    (repo / path).parent.mkdir(parents=True, exist_ok=True)
                    (repo / path).write_text("")
                    paths.add(path)
                except OSError:  # a file where a folder is wanted
                    pass
        patterns = []
        for _ in range(rng.randint(1, 3)):
            pattern = "".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 6)))
            patterns.append(("!" if rng.random() < 0.2 else "") + pattern + ("/" if rng.random() < 0.15 else ""))
        (repo / ".gitignore").write_text("\n".join(patterns) + "\n")
        paths = sorted(paths)
        proc = subprocess.run([GIT, "check-ignore", "--no-index", "--stdin"], cwd=repo, input="\n".join(paths),
                              capture_output=True, text=True, env=_env(home))
        assert proc.returncode in (0, 1), proc.stderr
        files._TOPLEVEL_CACHE.clear()
        ignore = files._GitIgnore()
        mine = {p for p in paths if ignore.ignored(repo / p)}
        assert mine == set(proc.stdout.split()), patterns
