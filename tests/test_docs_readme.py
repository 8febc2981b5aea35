"""README.md is the user's first stop: short, true on a fresh machine, and a way into docs/ where the reference is."""
import re
from pathlib import Path

import pytest

from conftest import ROOT

README = ROOT / "README.md"
# The reference pages this project's docs/ holds, and the front pages; every link in them must resolve.
PAGES = [README, ROOT / "CONTRIBUTING.md", *(ROOT / "docs" / name for name in (
    "usage.md", "configuration.md", "readers.md", "formats.md", "speed.md"))]
# Pages written in other branches of the same round (README and usage.md link to them): tolerated missing.
PENDING = {ROOT / "docs" / "fixes.md", ROOT / "docs" / "security.md"}
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def test_readme_is_a_short_front_page():
    assert len(README.read_bytes()) < 15_000
    headings = re.findall(r"^## (.+)$", readme(), re.M)
    for section in ("Install", "Quick start", "pre-commit", "GitHub Actions", "Editors", "Configuration", "Rules",
                    "Security", "Documentation", "Running the tests"):
        assert section in headings, section


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    command = ci.strip().splitlines()[-1]
    assert command == "python3 -m venv .venv && . .venv/bin/activate && pip install -q -e '.[test]' && pytest -q"
    assert f"```sh\n{command}\n```" in readme()


def test_readme_install_and_run_command_lints_the_fixtures(tmp_path):
    """The first command: install from the checkout, run on the fixtures, exit 1 (the original edition's
    mistakes). The install itself is what CI does for the tests; here the installed console script runs."""
    import subprocess
    import sys

    command = "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/vllmlint fixtures/"
    assert f"```sh\n{command}\n```" in readme()
    script = Path(sys.executable).parent / "vllmlint"
    proc = subprocess.run([str(script), "--no-cache", "--format", "json", "fixtures/"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr
    assert '"findings"' in proc.stdout


def test_readme_links_the_rule_index_that_lists_every_rule():
    from vllmlint.registry import all_rules

    assert "[docs/rules/README.md](docs/rules/README.md)" in readme()
    index = (ROOT / "docs" / "rules" / "README.md").read_text(encoding="utf-8")
    missing = [code for code in all_rules() if f"| [{code}]({code}.md) |" not in index]
    assert not missing


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_between_pages_resolve(page):
    assert page.is_file(), page
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # an address outside the repository
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if resolved in PENDING and not resolved.exists():
            continue
        assert resolved.exists(), f"{page.name}: {target} does not exist"
        if anchor:
            assert anchor in anchors(resolved), f"{page.name}: no heading for #{anchor} in {resolved.name}"


def test_long_reference_pages_have_a_table_of_contents():
    for page in PAGES[2:]:
        text = page.read_text(encoding="utf-8")
        sections = re.findall(r"^## (.+)$", text, re.M)
        if len(text) > 10_000:
            for section in sections:
                assert f"](#{slug(section)})" in text, f"{page.name}: {section} is not in its table of contents"


INSTALL_PAGES = [README, ROOT / "CONTRIBUTING.md", ROOT / "action.yml", *PAGES[2:]]


@pytest.mark.parametrize("page", INSTALL_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_install_instructions_use_what_exists(page):
    """No PyPI release and nothing published at github.com/vllmlint/vllmlint: every instruction works from a
    checkout or a wheel built from it; the public address appears only marked as planned."""
    text = page.read_text(encoding="utf-8")
    assert "git+https://github.com/vllmlint" not in text
    assert not re.search(r"pip install ['\"]?vllmlint\b", text), "vllmlint is not on PyPI"
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if re.search(r"github(usercontent)?\.com/vllmlint/vllmlint|vllmlint/vllmlint@", line):
            # said on the line, or on the comment line just above it
            assert "planned" in line or "planned" in lines[number - 1], f"{page.name}: {line.strip()}"


def yaml_blocks(text: str) -> list[str]:
    return re.findall(r"^ *```yaml\n(.*?)^ *```", text, re.M | re.S)


def test_readme_configuration_example_is_valid_and_loads(tmp_path):
    import json

    import jsonschema
    import yaml

    from vllmlint.config import load_config

    section = readme().split("\n## Configuration\n", 1)[1]
    example = yaml_blocks(section)[0]
    schema = json.loads((ROOT / "schemas" / "config.schema.json").read_text())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(example))) == []
    (tmp_path / ".vllmlint.yaml").write_text(example)
    config = load_config(tmp_path / ".vllmlint.yaml")
    assert config.select == ["VL1", "VL3", "public-exposure"] and config.vllm_version == "0.29.0"


def test_pre_commit_snippets_name_hooks_that_ship():
    import textwrap

    import yaml

    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    for page in (README, ROOT / "docs" / "usage.md"):
        configs = [yaml.safe_load(textwrap.dedent(block)) for block in yaml_blocks(page.read_text(encoding="utf-8"))
                   if "repos:" in block]
        assert configs, page
        for config in configs:
            for repo in config["repos"]:
                assert repo["repo"] == "local" or repo["rev"] == "<commit SHA>"
                for hook in repo["hooks"]:
                    assert hook["id"] in hooks
                    if repo["repo"] == "local":  # the shipped hook's settings, run from PATH
                        shipped = hooks[hook["id"]]
                        assert hook["entry"] == shipped["entry"] and hook["types_or"] == shipped["types_or"]
                        assert hook["require_serial"] is True and hook["language"] == "system"


def test_pre_commit_snippets_run_as_written(tmp_path):
    """The README's pre-commit snippet (a clone's path and a commit SHA) and the usage page's `repo: local`
    one, run by the real pre-commit in a temporary repository, report a removed flag."""
    import os
    import shutil
    import subprocess
    import sys
    import textwrap

    pytest.importorskip("pre_commit")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copy(ROOT / "fixtures" / "own" / "original-deployment-with-removed-flags.yaml", repo / "deploy.yaml")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")

    def run(config: str):
        (repo / ".pre-commit-config.yaml").write_text(textwrap.dedent(config), encoding="utf-8")
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--files", "deploy.yaml"], cwd=repo,
                              env=env, capture_output=True, text=True, timeout=600)

    snippet = next(block for block in yaml_blocks(readme()) if "repos:" in block)
    proc = run(snippet.replace("/path/to/vllmlint", str(ROOT)).replace("<commit SHA>", head.stdout.strip()))
    assert proc.returncode == 1 and "VL102" in proc.stdout, proc.stdout + proc.stderr
    local = next(block for block in yaml_blocks((ROOT / "docs" / "usage.md").read_text(encoding="utf-8"))
                 if "repo: local" in block)
    proc = run(local)
    assert proc.returncode == 1 and "VL102" in proc.stdout, proc.stdout + proc.stderr
