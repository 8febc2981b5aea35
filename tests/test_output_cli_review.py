"""Issue 13, "Output that respects the user": review findings on the command line and formatters."""
import json

from conftest import run_cli
from test_output_cli import FIXABLE, FIXED


# 1. --fix on standard input never prints less than its input
def test_fix_on_stdin_over_the_size_limit_echoes_the_input():
    data = FIXABLE.encode() * 4
    code, out, err = run_cli("--fix", "--max-file-size", "0.0001", "--stdin-filename", "x.yaml", "-", input=data)
    assert out.encode() == data and code == 0
    assert "x.yaml: not fixed, printed unchanged: skipped: the stream is over" in err
