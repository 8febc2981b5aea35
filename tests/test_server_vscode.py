"""The VS Code client (editors/vscode): its activation code run under node with `vscode` and
`vscode-languageclient` mocked (editors/vscode/test/), and its manifest consistent with the server."""
from __future__ import annotations

import json
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
    assert "# pass 3" in proc.stdout and "# fail 0" in proc.stdout


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
