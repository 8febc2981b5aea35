import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def run_cli(*args, input: bytes | None = None, cwd=None, env=None):
    """Run the real command line in a subprocess: exit code, stdout, stderr."""
    full_env = dict(os.environ, NO_COLOR="1")
    if env:
        full_env.update(env)
    proc = subprocess.run([sys.executable, "-m", "vllmlint", *map(str, args)], input=input, capture_output=True,
                          cwd=cwd or ROOT, env=full_env, timeout=120)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture
def cli():
    return run_cli
