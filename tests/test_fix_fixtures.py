"""`--fix` on the project's own examples (issue 24, item 1): each fix is verified on its own, a fix that would add
a finding is skipped alone with one short line, every other fix applies, and a second run changes nothing.
`--diff` shows exactly what `--fix` writes."""
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

SKIPPED_VL301 = ("fix not applied: VL301 at line 12: the fix would add VL805 at {prefix}network-policy.yaml:10")


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("vllmlint: warning")]


@pytest.mark.parametrize("given,prefix,at_least", [
    # 27 apply under --ignore VL301, plus the VL301 fix that adds nothing. (Two more were safe before the release of
    # a fork's or private image could be guessed: own/opea-vllm-gaudi.yaml and own/args-only-unlisted-vllm-image.yaml
    # now get unsafe fixes, test_fix_safety_on_assumed_releases.)
    ("fixtures", "original/", 28),
    ("fixtures/original", "", 4),
])
def test_fix_on_the_fixtures_applies_every_fix_but_the_one_that_adds_a_finding(tmp_path, given, prefix, at_least):
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / given, copy)
    before = _tree(copy)
    code, out, err = run_cli("--no-cache", "--fix", ".", cwd=copy)
    assert code == 1, err  # findings without a fix remain
    # Old code: one ~580-character warning per file (23 of them) and `fixed 0 problem(s) in 0 file(s)`.
    assert _warnings(err) == [f"vllmlint: warning: {prefix}metrics-service-monitor.yaml: "
                              + SKIPPED_VL301.format(prefix=prefix)]
    fixed = next(line for line in err.splitlines() if line.startswith("vllmlint: fixed "))
    applied = int(fixed.split()[2])
    assert applied >= at_least, fixed
    after = _tree(copy)
    changed = sorted(name for name in after if after[name] != before[name])
    assert f"fixed {applied} problem(s) in {len(changed)} file(s)" in fixed
    assert f"{prefix}metrics-service-monitor.yaml" not in changed  # its only fix is the skipped one
    # what remains fixable is that one fix, and on the whole fixtures the two fixes made unsafe by a guessed release
    assert ("[*] 1 fixable with `--fix` (2 more with `--fix --unsafe-fixes`)." if prefix
            else "[*] 1 fixable with `--fix`.") in out
    if prefix:
        assert "prometheus.io/port: \"8000\"" in (copy / "own/prometheus-annotations.yaml").read_text()  # VL301
    # A second run changes nothing (and says the same one line).
    code, _, err = run_cli("--no-cache", "--fix", ".", cwd=copy)
    assert "vllmlint: fixed 0 problem(s) in 0 file(s)" in err
    assert len(_warnings(err)) == 1
    assert _tree(copy) == after


def test_a_finding_of_an_ignored_rule_still_counts_as_added(tmp_path):
    # The verification counts findings of every rule, selected or not: with VL805 ignored the VL301 fix
    # still adds it, so it stays skipped (a fix never trades a shown finding for a hidden one).
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "fixtures" / "original", copy)
    code, out, err = run_cli("--no-cache", "--fix", "--ignore", "VL805", ".", cwd=copy)
    assert _warnings(err) == ["vllmlint: warning: metrics-service-monitor.yaml: " + SKIPPED_VL301.format(prefix="")]


def test_diff_is_exactly_what_fix_writes(tmp_path):
    if shutil.which("patch") is None:
        pytest.skip("patch is not installed")
    patched, fixed = tmp_path / "patched", tmp_path / "fixed"
    shutil.copytree(ROOT / "fixtures", patched)
    shutil.copytree(ROOT / "fixtures", fixed)
    code, diff, err = run_cli("--no-cache", "--diff", ".", cwd=patched)
    assert code == 1 and diff.count("\n--- ") + diff.startswith("--- ") >= 20, err
    assert _warnings(err) == ["vllmlint: warning: original/metrics-service-monitor.yaml: "
                              + SKIPPED_VL301.format(prefix="original/")]
    available = next(line for line in err.splitlines() if "fix(es) available" in line)
    _, _, err = run_cli("--no-cache", "--fix", ".", cwd=fixed)
    applied = next(line for line in err.splitlines() if line.startswith("vllmlint: fixed "))
    assert available.split()[1] == applied.split()[2]  # `vllmlint: N fix(es) available` / `vllmlint: fixed N`
    assert _tree(patched) != _tree(fixed)
    (tmp_path / "fix.diff").write_text(diff)
    subprocess.run(["patch", "-s", "-p0", "-i", str(tmp_path / "fix.diff")], cwd=patched, check=True)
    assert _tree(patched) == _tree(fixed)


LISTING = """\
{verb} 4 problem(s):
- multi-node-statefulset.yaml:
    1 \u00d7 VL101 (run `vllm serve MODEL` instead of the deprecated api_server module)
- single-node-deployment.yaml:
    1 \u00d7 VL101 (run `vllm serve MODEL` instead of the deprecated api_server module)
- speculative-decoding.sh:
    1 \u00d7 VL101 (run `vllm serve MODEL` instead of the deprecated api_server module)
    1 \u00d7 VL102 (fold the old speculative-decoding flags into `--speculative-config`)
"""


def test_show_fixes_lists_them_per_file_and_rule_as_ruff_does(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "fixtures" / "original", copy)
    before = _tree(copy)
    code, diff, err = run_cli("--no-cache", "--diff", "--show-fixes", ".", cwd=copy)
    assert LISTING.format(verb="Would fix") in err and diff.startswith("--- multi-node-statefulset.yaml\n")
    assert _tree(copy) == before
    code, _, err = run_cli("--no-cache", "--fix", "--show-fixes", ".", cwd=copy)
    assert LISTING.format(verb="Fixed") + "vllmlint: fixed 4 problem(s) in 3 file(s)\n" in err
    code, _, err = run_cli("--no-cache", "--fix", "--show-fixes", ".", cwd=copy)
    assert "No fixes applied.\nvllmlint: fixed 0 problem(s) in 0 file(s)\n" in err
    code, _, err = run_cli("--no-cache", "--fix", ".", cwd=copy)
    assert "problem(s):" not in err  # only when asked


def test_show_fixes_and_diff_on_standard_input():
    text = b"vllm serve Qwen/Qwen3-8B --swap-space 4\n"
    code, out, err = run_cli("--no-cache", "--fix", "--show-fixes", "--stdin-filename", "serve.sh", "-", input=text)
    assert out == "vllm serve Qwen/Qwen3-8B\n"
    assert "Fixed 1 problem(s):\n- serve.sh:\n    1 \u00d7 VL102 (delete the removed flag `--swap-space`)\n" in err
    code, out, err = run_cli("--no-cache", "--diff", "--stdin-filename", "serve.sh", "-", input=text)
    assert code == 1 and out == ("--- serve.sh\n+++ serve.sh\n@@ -1 +1 @@\n-vllm serve Qwen/Qwen3-8B --swap-space 4\n"
                                 "+vllm serve Qwen/Qwen3-8B\n")
