"""Suppressions and baselines end to end through the command line."""
import json

from conftest import run_cli

POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: web
    image: nginx:latest{comment}
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: [vllm, serve, Qwen/Qwen3-0.6B, --swap-space, "4"]
    securityContext: {{allowPrivilegeEscalation: false, capabilities: {{drop: [ALL]}}}}
    env: [{{name: HOME, value: /tmp}}]
  runtimeClassName: nvidia
  automountServiceAccountToken: false
  securityContext: {{runAsUser: 1000, seccompProfile: {{type: RuntimeDefault}}}}
"""


def lint(tmp_path, text, *args):
    (tmp_path / "pod.yaml").write_text(text)
    return run_cli(*args, "pod.yaml", cwd=tmp_path)


def test_inline_suppression_with_reason_hides_the_finding(tmp_path):
    code, out, _ = lint(tmp_path, POD.format(comment="  # vllmlint: disable=VL201 -- vendor image, pinned upstream"))
    assert "VL201" not in out and "VL102" in out and code == 1
    _, out, _ = lint(tmp_path, POD.format(comment="  # vllmlint: disable=VL201 -- vendor image, pinned upstream"),
                     "--show-suppressed")
    assert "VL201" in out and "vendor image, pinned upstream" in out


def test_suppression_without_reason_is_reported(tmp_path):
    _, out, _ = lint(tmp_path, POD.format(comment="  # vllmlint: disable=image-unpinned"))
    assert "VL201" not in out and "VL004" in out
    _, out, _ = lint(tmp_path, POD.format(comment="  # vllmlint: disable=image-unpinned"),
                     "--no-require-suppression-reason")
    assert "VL004" not in out and "VL201" not in out


def test_unused_suppression_is_reported(tmp_path):
    text = POD.format(comment="").replace("v0.29.0\n", "v0.29.0  # vllmlint: disable=VL201 -- stale\n")
    _, out, _ = lint(tmp_path, text)
    assert "VL003" in out and "pod.yaml:10:" in out


def test_sarif_carries_suppressed_results_with_justification(tmp_path):
    _, out, _ = lint(tmp_path, POD.format(comment="  # vllmlint: disable=VL201 -- vendor image"), "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    suppressed = [r for r in results if r.get("suppressions")]
    assert [r["ruleId"] for r in suppressed] == ["VL201"]
    assert suppressed[0]["suppressions"][0]["justification"] == "vendor image"


def test_annotation_suppression(tmp_path):
    text = POD.format(comment="").replace(
        "  name: p\n", '  name: p\n  annotations:\n    vllmlint.io/ignore: "VL201,removed-flag"\n'
        '    vllmlint.io/ignore-reason: "legacy pod, replaced in Q3"\n')
    code, out, _ = lint(tmp_path, text)
    assert code == 0, out


def test_baseline_reports_only_new_findings_and_survives_line_shifts(tmp_path):
    code, _, err = lint(tmp_path, POD.format(comment=""), "--write-baseline", "baseline.json")
    assert code == 0 and "wrote 2 finding(s)" in err
    shifted = "# a comment added on top\n# and another\n" + POD.format(comment="")
    code, out, err = lint(tmp_path, shifted, "--baseline", "baseline.json")
    assert code == 0 and "VL" not in out and "2 finding(s) in the baseline not shown" in err
    worse = shifted.replace('"4"]', '"4", --use-v2-block-manager]')
    code, out, _ = lint(tmp_path, worse, "--baseline", "baseline.json")
    assert code == 1 and "`--use-v2-block-manager` was removed" in out and "`--swap-space`" not in out


def test_broken_baseline_is_a_usage_error(tmp_path):
    (tmp_path / "baseline.json").write_text("{not json")
    code, _, err = lint(tmp_path, POD.format(comment=""), "--baseline", "baseline.json")
    assert code == 2 and "baseline.json" in err and "Traceback" not in err


FIXABLE = """apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    # the server, started the old way
    command:
    - python3
    - -m
    - vllm.entrypoints.openai.api_server
    - --model=Qwen/Qwen3-0.6B
    - --swap-space=4       # left over from 0.6
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
    env: [{name: HOME, value: /tmp}]
  runtimeClassName: nvidia
  automountServiceAccountToken: false
  securityContext: {runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
"""


def test_diff_shows_fixes_without_writing_and_fix_writes_them(tmp_path):
    (tmp_path / "pod.yaml").write_text(FIXABLE)
    code, out, err = run_cli("--diff", "pod.yaml", cwd=tmp_path)
    assert code == 1 and (tmp_path / "pod.yaml").read_text() == FIXABLE
    assert "-    - python3\n" in out and "+    - vllm\n" in out and "-    - --swap-space=4" in out
    code, out, err = run_cli("--fix", "pod.yaml", cwd=tmp_path)
    fixed = (tmp_path / "pod.yaml").read_text()
    assert code == 0, out + err
    assert "fixed 2 problem(s) in 1 file(s)" in err
    assert "    # the server, started the old way\n    command:\n    - vllm\n    - serve\n    - Qwen/Qwen3-0.6B\n" in fixed
    assert "swap-space" not in fixed and fixed.endswith("Qwen/Qwen3-0.6B\n" + FIXABLE.split("# left over from 0.6\n")[1])
    code, out, err = run_cli("--fix", "pod.yaml", cwd=tmp_path)
    assert "fixed 0 problem(s)" in err and (tmp_path / "pod.yaml").read_text() == fixed


def test_fix_on_standard_input_prints_the_fixed_text_and_refuses_upgrade_to(tmp_path):
    code, out, err = run_cli("--fix", "-", input=FIXABLE.encode())
    assert code == 0 and "vllm.entrypoints" not in out and out.startswith("apiVersion: v1\n")
    code, _, err = run_cli("--fix", "--upgrade-to", "0.29.0", "-", input=FIXABLE.encode())
    assert code == 2 and "cannot be combined with `-`" in err


def test_github_statistics_and_quiet_through_the_cli(tmp_path):
    (tmp_path / "pod.yaml").write_text(FIXABLE)
    _, out, _ = run_cli("--format", "github", "pod.yaml", cwd=tmp_path)
    assert out.splitlines()[0].startswith("::warning file=pod.yaml,line=13,col=7,")
    assert any(line.startswith("::error file=pod.yaml,line=15,col=7,") for line in out.splitlines())
    _, out, _ = run_cli("--statistics", "pod.yaml", cwd=tmp_path)
    assert "VL101" in out and "VL102" in out and "pod.yaml:" not in out
    _, out, _ = run_cli("--quiet", "pod.yaml", cwd=tmp_path)
    assert all(line.startswith("pod.yaml:") for line in out.splitlines())
