"""Issue 27: the linted tree does not decide what vllmlint may do. Its configuration cannot switch on what runs
programs, reaches the network or reads outside the tree; what it names is read only when it is a regular file in
the tree; `python -m vllmlint` in it imports none of its modules; its file names start no output line with `::`;
its globs cannot make matching exponential. Each test failed before its fix."""
import os
import subprocess
import sys

import pytest

from conftest import DEPLOYMENT, run_cli
from vllmlint.config import ConfigError, POWERFUL_KEYS, load_config, load_settings


@pytest.fixture
def repo(tmp_path, monkeypatch):
    tree = tmp_path / "repo"
    tree.mkdir()
    (tree / ".git").mkdir()
    (tree / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    monkeypatch.chdir(tree)
    monkeypatch.delenv("VLLMLINT_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return tree


# --- 1. repo-config-enables-render-and-follow-links --------------------------------------------------
def test_the_trees_configuration_cannot_switch_on_powerful_keys(repo):
    (repo / ".vllmlint.yaml").write_text("render: true\nfollow-links: true\nonline: true\nhf-cache: true\n"
                                         "fail-on: error\n")
    config = load_settings(["."])
    assert (config.render, config.follow_links, config.online, config.hf_cache) == (False, False, False, False)
    assert config.fail_on == "error"  # the rest of the file applies
    assert config.refused == [f"{key}: true" for key in POWERFUL_KEYS]
    assert config.refusal_note() == ("note: .vllmlint.yaml asks for render: true, follow-links: true, online: true, "
                                     "hf-cache: true; ignored: only the command line or your own config can turn "
                                     "them on")
    # the same through the loader the CLI and the language server call today, and for pyproject.toml
    assert load_config(repo / ".vllmlint.yaml").render is False
    (repo / ".vllmlint.yaml").unlink()
    (repo / "pyproject.toml").write_text("[tool.vllmlint]\nrender = true\n")
    config = load_settings(["."])
    assert config.render is False and config.refused == ["render: true"]
    # a file in a subfolder of the linted path, or of the repository around it, is the tree's too
    (repo / "sub").mkdir()
    (repo / "sub" / "c.yaml").write_text("follow-links: true\n")
    assert load_settings(["sub"], config_path="sub/c.yaml").follow_links is False
    assert load_config(repo / "sub" / "c.yaml", ["sub"]).follow_links is False
    # turning them off is always allowed, and a file that asks for nothing gets no note
    (repo / "sub" / "c.yaml").write_text("render: false\n")
    assert load_settings(["."], config_path="sub/c.yaml").refusal_note() is None


def test_the_users_own_configuration_can_switch_them_on(repo, tmp_path, monkeypatch):
    (repo / ".vllmlint.yaml").write_text("render: true\nfail-on: error\n")
    mine = tmp_path / "xdg" / "vllmlint" / "config.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_text("render: true\nfollow-links: true\nfail-on: info\n")
    config = load_settings(["."])
    assert config.render is True and config.follow_links is True and config.fail_on == "error"
    assert config.refused == ["render: true"]  # asked for, refused, then granted by the user's file
    monkeypatch.setenv("VLLMLINT_CONFIG", str(tmp_path / "other.yaml"))
    (tmp_path / "other.yaml").write_text("online: false\nhf-cache: true\n")
    config = load_settings(["."])
    assert (config.render, config.hf_cache) == (False, True)
    # --config outside the tree is the user's own; VLLMLINT_CONFIG naming a file of the tree is not
    assert load_settings(["."], config_path=mine).follow_links is True
    monkeypatch.setenv("VLLMLINT_CONFIG", str(repo / ".vllmlint.yaml"))
    assert load_settings(["."]).render is False
    assert load_settings(["."], no_config=True).render is False


def test_a_config_link_leaving_the_tree_is_not_read(repo, tmp_path):
    (tmp_path / "secret").write_text("Name: x\n")
    (repo / ".vllmlint.yaml").symlink_to(tmp_path / "secret")
    with pytest.raises(ConfigError, match="a link to a file outside the linted tree"):
        load_settings(["."])


def test_cli_does_not_follow_links_out_of_the_tree_for_its_config(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "credentials").write_text("[default]\naws_access_key_id = AKIAFAKE\n")
    tree = tmp_path / "repo"
    tree.mkdir()
    (tree / ".git").mkdir()
    (tree / "notes.yaml").symlink_to(outside / "credentials")
    (tree / ".vllmlint.yaml").write_text("follow-links: true\n")
    code, out, err = run_cli("--no-cache", ".", cwd=tree)
    assert "AKIA" not in out + err and "symbolic link to outside the linted paths" in err


# --- 2. config-paths-block-or-exhaust-memory ---------------------------------------------------------
@pytest.mark.parametrize("named", ["/dev/zero", "/proc/self/pagemap", "/proc/self/status", "FIFO", "OUTSIDE",
                                   "LINK"])
@pytest.mark.parametrize("key", ["baseline", "extend"])
def test_named_files_must_be_regular_files_in_the_tree(repo, tmp_path, key, named):
    if named == "FIFO":
        os.mkfifo(repo / "pipe.json")
        named = "pipe.json"
    elif named in ("OUTSIDE", "LINK"):
        (tmp_path / "outside.yaml").write_text("select: [VL102]\n")
        (repo / "link.yaml").symlink_to(tmp_path / "outside.yaml")  # in the tree, leading out of it
        named = "link.yaml" if named == "LINK" else str(tmp_path / "outside.yaml")
    (repo / ".vllmlint.yaml").write_text(f"{key}: {named}\nfail-on: error\n")
    config = load_settings(["."])  # returns: no hang, no MemoryError, no OSError
    assert config.fail_on == "error" and config.baseline is None and config.select is None
    assert len(config.errors) == 1 and f"`{key}`: {named}: " in config.errors[0], config.errors
    assert "\n" not in config.errors[0]


def test_named_files_in_the_tree_are_read(repo):
    (repo / "ci").mkdir()
    (repo / "ci" / "base.yaml").write_text("select: [VL102]\nbaseline: b.json\n")
    (repo / "ci" / "b.json").write_text('{"version": 1, "findings": []}')
    (repo / ".vllmlint.yaml").write_text("extend: ci/base.yaml\n")
    config = load_settings(["."])
    assert config.errors == [] and config.select == ["VL102"] and config.baseline == repo / "ci" / "b.json"
    (repo / "ci" / "b.json").write_bytes(b" " * (64 * 1024 * 1024 + 1))  # the size cap
    assert "over 64 MiB" in load_settings(["."]).errors[0]


def test_a_fifo_config_or_index_never_blocks(repo):
    os.mkfifo(repo / "pyproject.toml")  # find_config reads pyproject.toml to look for [tool.vllmlint]
    assert load_settings(["."]).path is None
    os.mkfifo(repo / ".vllmlint.yaml")  # is_file() is False for a FIFO: not a config file at all
    assert load_settings(["."]).path is None
    (repo / ".vllmlint.yaml").unlink()
    from vllmlint.source.files import _tracked_paths

    os.mkfifo(repo / ".git" / "index")
    assert _tracked_paths(str(repo / ".git"), str(repo / ".git")) == frozenset()
    (repo / ".git" / "index").unlink()
    (repo / ".git" / "index").symlink_to("/dev/zero")
    assert _tracked_paths(str(repo / ".git"), str(repo / ".git")) == frozenset()


def test_read_regular_refuses_what_is_not_a_regular_file(tmp_path):
    from vllmlint.source.files import NotRegular, TooLarge, read_regular

    with pytest.raises(NotRegular):
        read_regular("/dev/zero", 100)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotRegular):
        read_regular(tmp_path / "fifo", 100)
    (tmp_path / "f").write_bytes(b"x" * 101)
    with pytest.raises(TooLarge):
        read_regular(tmp_path / "f", 100)
    assert read_regular(tmp_path / "f", 100, truncate=True) == b"x" * 100
    assert read_regular(tmp_path / "f", 101) == b"x" * 101


# --- 6. config-values-internal-errors ----------------------------------------------------------------
@pytest.mark.parametrize("value", [".inf", ".nan", "1e400", "-.inf", "2e6"])
def test_max_file_size_out_of_range_is_a_config_error(repo, value):
    (repo / ".vllmlint.yaml").write_text(f"max-file-size: {value}\n")
    with pytest.raises(ConfigError, match=r"\.vllmlint\.yaml:1: `max-file-size`: "):
        load_settings(["."])


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_max_file_size_out_of_range_in_pyproject(repo, value):
    (repo / "pyproject.toml").write_text(f"[tool.vllmlint]\nmax-file-size = {value}\n")
    with pytest.raises(ConfigError, match="max-file-size"):
        load_settings(["."])


def test_max_file_size_from_the_command_line_is_checked():
    from vllmlint.config import Config

    for value in (float("inf"), float("nan"), 1e300):
        with pytest.raises(ConfigError, match="--max-file-size"):
            Config().file_size_limit(value)
    assert Config().file_size_limit(0) == 0 and Config().file_size_limit(None) == 10 * 1024 * 1024


def test_deeply_nested_toml_is_a_config_error(repo):
    (repo / "pyproject.toml").write_text("[tool.vllmlint]\nexclude = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_settings(["."])


def test_config_value_errors_through_the_cli(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    (tmp_path / ".vllmlint.yaml").write_text("max-file-size: .inf\n")
    code, _, err = run_cli("--no-cache", ".", cwd=tmp_path)
    assert code == 2 and "internal error" not in err and "`max-file-size`" in err and len(err.splitlines()) == 1


# --- 3. python-m-runs-tree-code ----------------------------------------------------------------------
def test_python_m_imports_no_module_of_the_current_folder(tmp_path):
    """`python -m vllmlint` started in the linted tree: the tree's json.py, re.py, yaml.py, click.py... (modules
    vllmlint imports after start-up) are never imported. (runpy's own imports, before vllmlint runs, are out of
    any package's reach: docs/security.md says to use the console script or `python -P`.)"""
    (tmp_path / "pod.yaml").write_text(DEPLOYMENT.replace("v0.29.0", "latest"))
    names = ("json", "re", "yaml", "click", "difflib", "hashlib", "pathlib", "vllmlint_helpers", "typing", "enum")
    for name in names:
        (tmp_path / f"{name}.py").write_text(f"open({str(tmp_path / ('ran-' + name))!r}, 'w').write('x')\n")
    env = dict(os.environ, NO_COLOR="1")
    env.pop("GITHUB_ACTIONS", None)
    for args in (["check", "--format", "sarif", "--output", "out.sarif", "."], ["--no-cache", "."], ["rules"]):
        proc = subprocess.run([sys.executable, "-m", "vllmlint", *args], cwd=tmp_path, capture_output=True, env=env,
                              timeout=120)
        assert proc.returncode in (0, 1), proc.stderr.decode()
        assert sorted(p.name for p in tmp_path.glob("ran-*")) == [], args
    assert "VL201" in (tmp_path / "out.sarif").read_text()  # the lint itself ran


# --- 4. filename-starts-text-line-with-workflow-command ----------------------------------------------
_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.29.0\n    args: [\"--swap-space=4\", \"--x\\n::stop-commands::tok\"]\n")


@pytest.mark.parametrize("args", [[], ["-q"], ["--statistics"], ["--show-notes"], ["--show-suppressed"],
                                  ["--diff"], ["--format", "github"], ["--format", "github", "--show-notes"],
                                  ["--format", "junit"], ["--format", "json"], ["--format", "sarif"]])
def test_no_output_line_of_the_tree_starts_with_a_workflow_command(tmp_path, args):
    (tmp_path / ".git").mkdir()
    (tmp_path / "::stop-commands::pwn.yaml").write_text(_POD)
    (tmp_path / "::warning::broken.yaml").symlink_to(tmp_path / "absent")  # a notice naming the file
    code, out, err = run_cli("--no-cache", "--color", "never", *args, ".", cwd=tmp_path)
    assert code in (0, 1), err
    assert "pwn.yaml" in out + err or "--statistics" in args
    for line in (out + err).splitlines():
        if line.startswith("::"):  # the github format's own commands, the tree's text escaped inside them
            assert args[:2] == ["--format", "github"] and line.split(" ", 1)[0] in ("::error", "::warning", "::notice")
            assert "::stop-commands::pwn" not in line and "::warning::broken" not in line  # file= escaped
    assert "./::stop-commands::pwn.yaml:" in out or len(args) > 1 or "--statistics" in args or "--diff" in args


def test_line_start_path():
    from vllmlint.formatters.text import line_start_path

    assert line_start_path("::a.yaml") == "./::a.yaml" and line_start_path("a::b.yaml") == "a::b.yaml"


# --- 5. template-comment-hides-file ------------------------------------------------------------------
def test_a_template_looking_comment_does_not_hide_a_manifest(tmp_path):
    bad = DEPLOYMENT.replace("v0.29.0", "latest")
    (tmp_path / "deploy.yaml").write_text(bad + "# rendered from {{ .Values.image }}\n")
    (tmp_path / "inline.yaml").write_text(bad.replace("kind: Deployment", "kind: Deployment  # {{- if .Values.x }}"))
    code, out, err = run_cli("--no-cache", "--select", "VL201", ".", cwd=tmp_path)
    assert code == 1 and "deploy.yaml:" in out and "inline.yaml:" in out and "template" not in err, out + err


def test_template_actions_in_structure_or_quoted_values_still_make_a_template():
    import re

    from vllmlint.engine import _HELM
    from vllmlint.source.comments import template_action
    from vllmlint.source.yamlmodel import SourceFile, parse_documents

    def action(text):
        documents, error = parse_documents(SourceFile("t.yaml", text))
        return template_action(text, documents if error is None else None, _HELM)

    assert action("a: 1\n# {{ .Values.x }}\nb: '#'  # {{ .Release.Name }}\n") is None
    assert action("a: |\n  {{ .Values.x }}\n") is None  # a block scalar's text
    assert action('a: "{{ .Values.x }}"  # {{ .Values.y }}\n') == 4  # a quoted value: a chart's value
    assert action("a: 'x # {{ .Values.x }}'\n") == 8  # a `#` inside a quoted scalar starts no comment
    assert action("{{- if .Values.x }}\na: 1\n{{- end }}\n") == 0  # does not parse: any action
    # linear: 20,000 actions in comments and block scalars are one pass
    text = "".join(f"k{i}: |\n  {{{{ .Values.v }}}}\n# {{{{ .Values.w }}}}\n" for i in range(20_000))
    calls = 0
    original = re.Pattern.finditer

    documents, _ = parse_documents(SourceFile("t.yaml", text))

    class Counting:
        def finditer(self, text):
            nonlocal calls
            for match in original(_HELM, text):
                calls += 1
                yield match

    assert template_action(text, documents, Counting()) is None and calls == 40_000


# --- 7. glob-pattern-catastrophic-backtracking -------------------------------------------------------
class _Counting:
    """Counts the work of a wildmatch run: component matches, and regex calls inside them (each one is a search
    of a fixed-length chunk, linear in the name)."""

    def __init__(self, monkeypatch):
        from vllmlint.source import wildmatch

        self.components = self.regex_calls = 0
        original = wildmatch.Component.match
        counter = self

        class Chunk:
            def __init__(self, regex):
                self.regex = regex

            def __getattr__(self, name):
                method = getattr(self.regex, name)

                def call(*args):
                    counter.regex_calls += 1
                    return method(*args)
                return call

        def match(component, name):
            counter.components += 1
            component.chunks = [c if isinstance(c, Chunk) else Chunk(c) for c in component.chunks]
            return original(component, name)

        monkeypatch.setattr(wildmatch.Component, "match", match)


def test_many_stars_are_matched_in_bounded_work(monkeypatch):
    from vllmlint.config import path_matches
    from vllmlint.source.wildmatch import Glob, IgnoreRules

    count = _Counting(monkeypatch)
    long = "a" * 200
    star_pattern = "*a" * 30 + "*b"
    assert not Glob(star_pattern).match(long)
    assert Glob(star_pattern).match(long + "b")
    assert count.components == 2 and count.regex_calls <= 2 * 32  # one search per chunk, not one per way to split
    count.components = count.regex_calls = 0
    path = "/".join(["a"] * 300) + "/c.yaml"
    deep = "**/a/" * 20 + "b.yaml"
    assert not Glob(deep).match(path)
    assert Glob("**/a/**/a/**/c.yaml").match(path)
    assert count.components <= 2 * 301 * 41  # components x pattern components, not exponential
    count.components = 0
    assert not path_matches(star_pattern, f"{long}/deploy.yaml") and not path_matches(deep, path)
    assert path_matches(star_pattern, f"{long}b/deploy.yaml")  # a folder matched: everything below it
    rules = IgnoreRules([star_pattern, "!" + deep])
    assert rules.decide(long, True) is None and rules.decide(long + "b", True) is True
    assert count.components <= 4 * 301 * 41


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("*.yaml", "a/b.yaml", True), ("b.yaml", "a/b.yaml", True), ("a/*.yaml", "a/b.yaml", True),
    ("a/*.yaml", "x/a/b.yaml", False), ("/a/*.yaml", "a/b.yaml", True), ("k8s/", "k8s/x/y.yaml", True),
    ("k8s", "k8s/x.yaml", True), ("**/gen/*.yaml", "a/b/gen/x.yaml", True), ("a/**/b.yaml", "a/b.yaml", True),
    ("a/**/b.yaml", "a/x/y/b.yaml", True), ("a/**", "a/x.yaml", True), ("a/**", "a", False),
    ("a?.yaml", "ab.yaml", True), ("a?.yaml", "a/.yaml", False), ("[ab].yaml", "b.yaml", True),
    ("[!ab].yaml", "b.yaml", False), ("a*b", "a/b", False), ("a**b", "a/x/b", False), ("a**b", "axxb", True),
    ("\\*.yaml", "*.yaml", True), ("\\*.yaml", "a.yaml", False), ("[a", "[a", False), ("a\\", "a\\", False),
    ("**", "a/b/c", True), ("*", "a/b/c.yaml", True),
])
def test_config_globs_keep_their_meaning(pattern, path, expected):
    from vllmlint.config import path_matches

    assert path_matches(pattern, path) is expected


def test_the_users_own_configuration_through_the_cli(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "pod.yaml").write_text(DEPLOYMENT)
    tree = tmp_path / "repo"
    tree.mkdir()
    (tree / ".git").mkdir()
    (tree / "pod.yaml").symlink_to(outside / "pod.yaml")
    xdg = tmp_path / "xdg"
    (xdg / "vllmlint").mkdir(parents=True)
    (xdg / "vllmlint" / "config.yaml").write_text("follow-links: true\n")
    env = {"XDG_CONFIG_HOME": str(xdg)}
    code, out, err = run_cli("--no-cache", ".", cwd=tree, env=env)  # no project configuration: the user's
    assert code == 1 and "pod.yaml:12:49" in out, err
    (tree / ".vllmlint.yaml").write_text("follow-links: false\nfail-on: error\n")  # the tree can turn it off
    code, out, err = run_cli("--no-cache", ".", cwd=tree, env=env)
    assert code == 0 and "symbolic link to outside the linted paths" in err
    (tree / ".vllmlint.yaml").write_text("fail-on: error\n")  # and the rest of its settings apply over the user's
    code, out, err = run_cli("--no-cache", ".", cwd=tree, env=env)
    assert code == 1 and "pod.yaml:12:49" in out
    code, out, err = run_cli("--no-cache", "--no-config", ".", cwd=tree, env=env)
    assert code == 0 and "pod.yaml:12:49" not in out


def test_run_from_home_or_a_home_kept_in_git_the_users_config_stays_the_users(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)  # dotfiles in git
    (home / ".config" / "vllmlint").mkdir(parents=True)
    (home / ".config" / "vllmlint" / "config.yaml").write_text("render: true\n")
    (home / "project").mkdir()
    (home / "project" / ".git").mkdir()
    (home / "project" / ".vllmlint.yaml").write_text("follow-links: true\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("VLLMLINT_CONFIG", raising=False)
    for cwd, paths in ((home, ["project"]), (home / "project", ["."]), (tmp_path, [str(home / "project")])):
        monkeypatch.chdir(cwd)
        config = load_settings(paths, config_path=home / "project" / ".vllmlint.yaml")
        assert (config.render, config.follow_links, config.refused) == (True, False, ["follow-links: true"]), cwd


def test_python_m_with_interpreter_options_is_guarded_too(tmp_path):
    (tmp_path / "json.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('x')\n")
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    for prefix in (["-W", "ignore", "-X", "utf8", "-m", "vllmlint"], ["-mvllmlint"], ["-m", "vllmlint.cli"]):
        proc = subprocess.run([sys.executable, *prefix, "--no-cache", "--format", "json", "."], cwd=tmp_path,
                              capture_output=True, timeout=120)
        assert proc.returncode == 0 and not (tmp_path / "ran").exists(), (prefix, proc.stderr.decode())


# --- suppressions in Markdown: HTML comments and fences in linear time -------------------------------
class _ScanCounting(str):
    """A text whose `find` counts the characters it looks at."""

    scanned = 0

    def find(self, sub, start=0, end=None):
        found = str.find(self, sub, start, end)
        stop = (len(self) if end is None else end) if found == -1 else found + len(sub)
        type(self).scanned += max(0, stop - start)
        return found


def test_html_comments_are_found_as_the_regex_finds_them_in_one_pass():
    import random
    import re

    from vllmlint.suppressions import html_comments

    rng = random.Random(7)
    for _ in range(2000):
        text = "".join(rng.choice(["<!--", "-->", "-", ">", "<", "!", "a", "\n"]) for _ in range(rng.randint(0, 14)))
        expected = [(m.start(), m.start(1), m.end(1), m.end()) for m in re.finditer(r"<!--(.*?)-->", text, re.S)]
        assert list(html_comments(text)) == expected, text
    text = _ScanCounting("<!--" * 100_000 + "vllmlint")
    assert list(html_comments(text)) == [] and _ScanCounting.scanned <= 2 * len(text)


def test_many_unclosed_comments_in_markdown(tmp_path):
    """100,000 unclosed `<!--` before the directives (the regex scanned to the end of the file from each): the
    run ends, and the directives apply as before."""
    pod = DEPLOYMENT.replace("v0.29.0", "latest")
    block = f"<!-- vllmlint: disable=VL201 -- demo -->\n```yaml\n{pod}```\n"
    (tmp_path / "a.md").write_text("<!--" * 100_000 + "\n" + block * 5 + f"```yaml\n{pod}```\n")
    code, out, err = run_cli("--no-cache", "--select", "VL201", "-q", "a.md", cwd=tmp_path)
    # the first `<!--` opens a comment that ends with the first directive's `-->` (as in HTML): that directive is
    # swallowed; the next four apply; the last block has none
    assert code == 1 and out.count("VL201") == 2 and "a.md:14:16" in out, out + err


class _IndexCounting(str):
    reads = 0

    def __getitem__(self, key):
        type(self).reads += 1
        return str.__getitem__(self, key)


def test_comments_after_a_syntax_error_are_found_in_one_pass_per_line():
    import random

    from vllmlint.source.comments import _AfterError, _after_error_heuristic

    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice(["#", " ", "'", '"', "a", "\n", "[", ":"]) for _ in range(rng.randint(1, 16)))
        start = rng.randint(0, len(text) - 1)
        scanner = _AfterError(text, start)
        for pos in range(start, len(text)):
            if text[pos] == "#":
                assert scanner(pos) == _after_error_heuristic(text, pos, start), (text, start, pos)
    line = _IndexCounting('key: "open ' + " #" * 50_000 + "\n")
    scanner = _AfterError(line, 0)
    assert not any(scanner(pos) for pos in range(len(line)) if str.__getitem__(line, pos) == "#")
    assert _IndexCounting.reads <= 3 * len(line)


@pytest.mark.parametrize("text", ['"a\\n::stop-commands::tok": 1\n', 'select: ["VL1\\n::warning::x"]\n',
                                  'severity: {"VL1\\n::warning::x": error}\n', 'vllm-version: "1\\n::warning::x"\n',
                                  'baseline: "x\\n::warning::y"\n', 'extend: "x\\r\\n::warning::y"\n'])
def test_config_messages_quoting_the_tree_stay_one_line(tmp_path, text):
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    (tmp_path / ".vllmlint.yaml").write_text(text)
    code, out, err = run_cli("--no-cache", ".", cwd=tmp_path)
    assert not any(line.startswith("::") for line in (out + err).splitlines()), err
    here = os.getcwd()
    try:
        os.chdir(tmp_path)
        try:
            config = load_settings(["."])
        except ConfigError as exc:
            assert "\n" not in str(exc) and "\r" not in str(exc)
        else:
            assert len(config.errors) == 1 and "\n" not in config.errors[0] and "\r" not in config.errors[0]
    finally:
        os.chdir(here)
