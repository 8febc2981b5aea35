"""Static checks in CI: mypy and ruff (pyflakes, bugbear; see pyproject.toml) report nothing.

Both are in the `test` extra, so a missing one is a failure here, not a skip.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_mypy_reports_nothing_on_the_package():
    proc = _run("mypy", "--no-error-summary")  # files and options from [tool.mypy]
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_ruff_reports_nothing_on_the_package_and_the_maintainer_tools():
    proc = _run("ruff", "check", "--no-cache", "vllmlint", "vllmlint_dev")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
