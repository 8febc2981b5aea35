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


# 2. --format X --output FILE pairs go by command-line order
def test_each_output_pairs_with_the_format_before_it(tmp_path):
    (tmp_path / "fx.yaml").write_text(FIXABLE)
    code, out, _ = run_cli("--format", "text", "--format", "json", "--output", "r.json", "fx.yaml", cwd=tmp_path)
    assert code == 1 and out.startswith("fx.yaml:")  # text on standard output
    assert len(json.loads((tmp_path / "r.json").read_text())["findings"]) == 2
    code, out, _ = run_cli("--format", "json", "-o", "a.json", "--format", "junit", "-o", "b.xml", "--format", "text",
                           "fx.yaml", cwd=tmp_path)
    assert out.startswith("fx.yaml:") and json.loads((tmp_path / "a.json").read_text())["findings"]
    assert (tmp_path / "b.xml").read_text().startswith("<?xml")
    assert run_cli("-o", "c.json", "--format", "json", "fx.yaml", cwd=tmp_path)[0] == 1  # one pair: any order
    assert json.loads((tmp_path / "c.json").read_text())["findings"]
    code, _, err = run_cli("--output", "d.json", "--format", "json", "--format", "text", "fx.yaml", cwd=tmp_path)
    assert code == 2 and "--output d.json follows no --format" in err


# 3. a byte-order mark on standard input is kept, as `--fix FILE` keeps it
def test_fix_on_stdin_keeps_a_byte_order_mark():
    bom = b"\xef\xbb\xbf"
    code, out, _ = run_cli("--fix", "--stdin-filename", "x.yaml", "-", input=bom + b"kind: Pod\n")
    assert (code, out.encode()) == (0, bom + b"kind: Pod\n")
    code, out, _ = run_cli("--fix", "--stdin-filename", "x.yaml", "-", input=bom + FIXABLE.encode())
    assert out.encode() == bom + FIXED.encode()
