"""The VS Code client (editors/vscode): its activation code run under node with `vscode` and
`vscode-languageclient` mocked (editors/vscode/test/), and its manifest consistent with the server."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = ROOT / "editors" / "vscode"


def test_activation_and_deactivation_under_node():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    proc = subprocess.run([node, "--test", str(EXTENSION / "test")], cwd=EXTENSION, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "# pass 4" in proc.stdout and "# fail 0" in proc.stdout


def test_manifest_starts_the_server_subcommand():
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    assert manifest["main"] == "./extension.js"
    assert manifest["dependencies"]["vscode-languageclient"].startswith("^9.")
    assert manifest["engines"]["vscode"] == "^1.82.0"  # what vscode-languageclient 9 requires
    settings = manifest["contributes"]["configuration"]["properties"]
    assert settings["vllmlint.path"]["default"] == "vllmlint"
    assert settings["vllmlint.debounce"]["default"] == 0
    source = (EXTENSION / "extension.js").read_text(encoding="utf-8")
    assert "'server'" in source and "TransportKind.stdio" in source


def test_the_program_is_a_user_setting_only():
    """A workspace's .vscode/settings.json must not choose the program VS Code runs (issue 27)."""
    settings = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))["contributes"]["configuration"][
        "properties"]
    assert settings["vllmlint.path"]["scope"] == "machine"
    assert settings["vllmlint.args"]["scope"] == "machine"
    source = (EXTENSION / "extension.js").read_text(encoding="utf-8")
    assert "inspect(key)" in source and "globalValue" in source  # and the extension reads no workspace value


def test_compose_documents_and_dockerfiles_are_served():
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    assert {"onLanguage:dockercompose", "onLanguage:dockerfile"} <= set(manifest["activationEvents"])
    source = (EXTENSION / "extension.js").read_text(encoding="utf-8")
    languages = re.search(r"const LANGUAGES = \[(.*?)\];", source).group(1)
    assert re.findall(r"'([a-z]+)'", languages) == ["yaml", "json", "dockercompose", "dockerfile", "shellscript",
                                                    "markdown"]


def _ignored(path: str, patterns: list[str]) -> bool:
    """vsce's .vscodeignore test for the patterns used here (minimatch: `**` any folders, `*` within one)."""
    def regex(pattern: str) -> str:
        out = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
        return f"^{out}$"

    return any(re.match(regex(p), path) for p in patterns)


def test_the_package_leaves_the_tests_out():
    lines = (EXTENSION / ".vscodeignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    files = [p.relative_to(EXTENSION).as_posix() for p in EXTENSION.rglob("*") if p.is_file()
             and "node_modules" not in p.parts]
    tests = [f for f in files if f.startswith("test/")]
    assert tests and all(_ignored(f, patterns) for f in tests)
    for shipped in ("extension.js", "package.json"):
        assert not _ignored(shipped, patterns), shipped


def test_install_hints_are_true():
    """vllmlint is not on PyPI: no hint may tell to install it from there, or from an address it is not at."""
    manifest = (EXTENSION / "package.json").read_text(encoding="utf-8")
    source = (EXTENSION / "extension.js").read_text(encoding="utf-8")
    command = (ROOT / "vllmlint" / "server" / "command.py").read_text(encoding="utf-8")
    for text in (manifest, source, command):
        assert "pip install 'vllmlint[server]'" not in text
        assert "/path/to/vllmlint[server]" in text
    doc = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    assert "git+https://github.com/vllmlint" not in doc and "/path/to/vllmlint[server]" in doc
