"""The text, JSON and GitHub formats, rendered from hand-built findings over real source files."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import vllmlint
from vllmlint import registry
from vllmlint.finding import Finding, Notice, Severity, Span, Subject
from vllmlint.formatters import FORMATS, Report, render
from vllmlint.source.yamlmodel import SourceFile

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: vllm}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: [python3, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen3-0.6B]
"""

BIG = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: big
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.29.0
        args: ["--swap-space", "4"]
"""

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def rule_like(code: str, name: str, severity: Severity):
    return dataclasses.replace(registry.rule("VL101"), code=code, name=name, severity=severity)


RULES = [registry.rule("VL101"), rule_like("VL902", "removed-flag", Severity.ERROR),
         rule_like("VL903", "exposed-port", Severity.INFO)]


def finding_at(source: SourceFile, needle: str, code="VL101", severity=Severity.WARNING, message="msg",
               nth: int = 0, **kwargs) -> Finding:
    start = -1
    for _ in range(nth + 1):
        start = source.text.index(needle, start + 1)
    return Finding(code, severity, message, source.display_path, source.span(start, start + len(needle)),
                   **kwargs)


@pytest.fixture()
def two_files():
    pod = SourceFile("deploy/vllm.yaml", POD)
    big = SourceFile("serve/big.yaml", BIG)
    findings = [
        finding_at(pod, "vllm.entrypoints.openai.api_server",
                   message="Use `vllm serve` instead of the deprecated module."),
        finding_at(big, "--swap-space", code="VL902", severity=Severity.ERROR,
                   message="Flag --swap-space was removed in vLLM 0.12.0."),
    ]
    return Report(findings=findings, rules=RULES, sources={"deploy/vllm.yaml": pod, "serve/big.yaml": big},
                  files_checked=3)


# --- text ------------------------------------------------------------------------------------------
def test_text_lines_excerpts_carets_and_summary(two_files):
    assert render("text", two_files).splitlines() == [
        "deploy/vllm.yaml:8:28: VL101 [warning] Use `vllm serve` instead of the deprecated module. "
        "(deprecated-entrypoint)",
        " 8 |     command: [python3, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen3-0.6B]",
        "   |                            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "",
        "serve/big.yaml:11:17: VL902 [error] Flag --swap-space was removed in vLLM 0.12.0. (removed-flag)",
        ' 11 |         args: ["--swap-space", "4"]',
        "    |                 ^^^^^^^^^^^^",
        "",
        "Found 2 problems (1 error, 1 warning) in 2 files (3 files checked).",
    ]


def test_text_output_ends_with_a_newline(two_files):
    assert render("text", two_files).endswith(".\n")


def caret_columns(lines: list[str]) -> tuple[str, int, int]:
    """(excerpt text after the gutter, first caret index, caret count) from an excerpt's two lines."""
    shown, carets = lines
    prefix = shown.index("| ") + 2
    assert carets.index("| ") + 2 == prefix
    start = carets.index("^")
    return shown[prefix:], start - prefix, carets.count("^")


def test_tabs_do_not_misalign_the_caret():
    text = "a: 1\n\tx:\tvalue\n"
    source = SourceFile("t.yaml", text)
    finding = finding_at(source, "value")
    assert (finding.span.line, finding.span.col) == (2, 5)
    lines = render("text", Report(findings=[finding], sources={"t.yaml": source}, quiet=False)).splitlines()
    shown, start, count = caret_columns(lines[1:3])
    assert shown == "    x:  value"  # tab stops every 4 columns
    assert shown[start:start + count] == "value"


def test_wide_characters_and_control_characters_keep_the_caret_aligned():
    text = 'name: "模型"\nnote: "\x1b[31mred"  # end\n'
    source = SourceFile("w.yaml", text)
    wide = finding_at(source, '"模型"')
    lines = render("text", Report(findings=[wide], sources={"w.yaml": source})).splitlines()
    shown, start, count = caret_columns(lines[1:3])
    assert shown == 'name: "模型"'
    assert (start, count) == (6, 6)  # two double-width characters and two quotes
    control = finding_at(source, "# end")
    lines = render("text", Report(findings=[control], sources={"w.yaml": source})).splitlines()
    assert "\x1b" not in "".join(lines)  # the manifest's escape sequence cannot colour the terminal
    shown, start, count = caret_columns(lines[1:3])
    assert shown[start:start + count] == "# end"


@pytest.mark.parametrize("index", [0, 2, 20, 59])
def test_long_lines_are_cut_around_the_span(index):
    """Minified or flow-style YAML: show at most ~120 columns, the caret still under the span."""
    words = [f"k{i:03d}: v{i:03d}" for i in range(60)]  # 60 items of 10 characters
    line = "{" + ", ".join(words) + "}"
    needle = words[index]
    source = SourceFile("long.yaml", line + "\n")
    finding = finding_at(source, needle)
    lines = render("text", Report(findings=[finding], sources={"long.yaml": source})).splitlines()
    shown, start, count = caret_columns(lines[1:3])
    assert len(shown) <= 122
    assert shown[start:start + count] == needle
    assert shown.startswith("\u2026") == (finding.span.col > 40)
    assert shown.endswith("\u2026") == (index < 50)


def test_a_span_longer_than_the_window_is_underlined_to_its_edge():
    line = "x: " + "a" * 300
    source = SourceFile("l.yaml", line + "\n")
    finding = Finding("VL101", Severity.WARNING, "m", "l.yaml", source.span(3, 303))
    lines = render("text", Report(findings=[finding], sources={"l.yaml": source})).splitlines()
    shown, start, count = caret_columns(lines[1:3])
    assert (start, shown[start:start + count]) == (3, "a" * 117)
    assert shown.endswith("\u2026")


def test_multiline_span_underlines_to_the_end_of_its_first_line():
    source = SourceFile("m.yaml", POD)
    start = POD.index("- name: vllm")
    end = POD.index("image:")
    finding = Finding("VL101", Severity.WARNING, "m", "m.yaml", source.span(start, end))
    lines = render("text", Report(findings=[finding], sources={"m.yaml": source})).splitlines()
    assert lines[1:3] == [" 6 |   - name: vllm", "   |   ^^^^^^^^^^^^"]


def test_zero_width_span_gets_one_caret_and_missing_sources_get_no_excerpt():
    source = SourceFile("z.yaml", "key: value\n")
    point = Finding("VL101", Severity.WARNING, "m", "z.yaml", Span.point(1, 11, 10))
    elsewhere = Finding("VL101", Severity.WARNING, "m", "gone.yaml", Span.point(3, 1))
    lines = render("text", Report(findings=[point, elsewhere], sources={"z.yaml": source})).splitlines()
    assert lines[1:3] == [" 1 | key: value", "   |           ^"]
    assert lines[4:6] == ["gone.yaml:3:1: VL101 [warning] m (deprecated-entrypoint)", ""]


def test_summary_counts_severities_files_and_checked_files():
    source = SourceFile("a.yaml", POD)
    plan = [("a.yaml", Severity.ERROR), ("a.yaml", Severity.ERROR), ("b.yaml", Severity.ERROR),
            ("b.yaml", Severity.WARNING), ("c.yaml", Severity.WARNING), ("d.yaml", Severity.WARNING),
            ("d.yaml", Severity.INFO)]
    findings = [Finding("VL101", sev, "m", path, source.span(0, 3)) for path, sev in plan]
    output = render("text", Report(findings=findings, files_checked=12))
    assert output.splitlines()[-1] == "Found 7 problems (3 errors, 3 warnings, 1 info) in 4 files (12 files checked)."
    one = render("text", Report(findings=findings[:1], files_checked=1))
    assert one.splitlines()[-1] == "Found 1 problem (1 error) in 1 file (1 file checked)."
    assert render("text", Report(files_checked=12)) == "All checks passed (12 files checked).\n"


def test_statistics_count_per_rule_instead_of_findings():
    source = SourceFile("a.yaml", BIG)
    findings = ([finding_at(source, "vllm", code="VL902", severity=Severity.ERROR, nth=i) for i in range(3)]
                + [finding_at(source, "image", code="VL903", severity=Severity.INFO),
                   finding_at(source, "args", code="VL903", severity=Severity.INFO),
                   finding_at(source, "kind")])
    report = Report(findings=findings, rules=RULES, sources={"a.yaml": source}, files_checked=2, statistics=True)
    assert render("text", report).splitlines() == [
        "  3  VL902  removed-flag",
        "  2  VL903  exposed-port",
        "  1  VL101  deprecated-entrypoint",
        "",
        "Found 6 problems (3 errors, 1 warning, 2 info) in 1 file (2 files checked).",
    ]
    report.quiet = True
    assert render("text", report).splitlines() == ["  3  VL902  removed-flag", "  2  VL903  exposed-port",
                                                   "  1  VL101  deprecated-entrypoint"]


def test_quiet_prints_only_the_finding_lines(two_files):
    two_files.quiet = True
    assert render("text", two_files) == (
        "deploy/vllm.yaml:8:28: VL101 [warning] Use `vllm serve` instead of the deprecated module. "
        "(deprecated-entrypoint)\n"
        "serve/big.yaml:11:17: VL902 [error] Flag --swap-space was removed in vLLM 0.12.0. (removed-flag)\n")
    assert render("text", Report(quiet=True, files_checked=4)) == ""


def test_colour_only_when_asked(two_files):
    plain = render("text", two_files)
    assert "\x1b" not in plain
    two_files.color = True
    coloured = render("text", two_files)
    assert "\x1b[" in coloured
    assert ANSI.sub("", coloured) == plain


def test_suppressed_findings_are_counted_and_shown_only_on_request(two_files):
    source = two_files.sources["deploy/vllm.yaml"]
    two_files.suppressed = [finding_at(source, "image", message="Old image.", suppressed_by="pinned on purpose")]
    hidden = render("text", two_files)
    assert "Old image." not in hidden
    assert hidden.splitlines()[-1] == (
        "Found 2 problems (1 error, 1 warning) in 2 files (3 files checked; 1 suppressed not shown).")
    two_files.show_suppressed = True
    shown = render("text", two_files).splitlines()
    assert ("deploy/vllm.yaml:7:5: VL101 [warning] Old image. (deprecated-entrypoint) "
            "[suppressed: pinned on purpose]") in shown
    assert shown[-1] == "Found 2 problems (1 error, 1 warning) in 2 files (3 files checked)."


def test_messages_cannot_break_the_one_line_layout():
    source = SourceFile("a.yaml", POD)
    finding = finding_at(source, "kind", message="two\nlines\x1b[2J")
    first = render("text", Report(findings=[finding], quiet=True))
    assert first == "a.yaml:2:1: VL101 [warning] two\u240alines\u241b[2J (deprecated-entrypoint)\n"


def test_rule_names_come_from_the_registry_when_the_rule_did_not_run():
    source = SourceFile("a.yaml", POD)
    output = render("text", Report(findings=[finding_at(source, "kind")], rules=[], quiet=True))
    assert output.rstrip().endswith("(deprecated-entrypoint)")


# --- github ----------------------------------------------------------------------------------------
def test_github_commands_with_levels_positions_and_titles(two_files):
    source = two_files.sources["deploy/vllm.yaml"]
    two_files.findings.append(finding_at(source, "image", code="VL903", severity=Severity.INFO, message="i"))
    assert render("github", two_files).splitlines() == [
        "::warning file=deploy/vllm.yaml,line=8,col=28,endLine=8,endColumn=62,title=VL101 deprecated-entrypoint"
        "::Use `vllm serve` instead of the deprecated module.",
        "::error file=serve/big.yaml,line=11,col=17,endLine=11,endColumn=29,title=VL902 removed-flag"
        "::Flag --swap-space was removed in vLLM 0.12.0.",
        "::notice file=deploy/vllm.yaml,line=7,col=5,endLine=7,endColumn=10,title=VL903 exposed-port::i",
    ]


def test_github_escaping_of_data_and_properties():
    source = SourceFile("odd,dir/a:b%.yaml", POD)
    finding = finding_at(source, "kind", message="100% sure:\r\nline two, ok")
    line = render("github", Report(findings=[finding], rules=RULES))
    assert line == ("::warning file=odd%2Cdir/a%3Ab%25.yaml,line=2,col=1,endLine=2,endColumn=5,"
                    "title=VL101 deprecated-entrypoint::100%25 sure:%0D%0Aline two, ok\n")


def test_github_paths_use_forward_slashes_without_dot_prefix():
    source = SourceFile("x", POD, display_path=".\\deploy\\vllm.yaml")
    line = render("github", Report(findings=[finding_at(source, "kind")], rules=RULES))
    assert line.startswith("::warning file=deploy/vllm.yaml,line=2,")


def test_github_multiline_span_has_no_columns_and_notices_are_annotated():
    source = SourceFile("m.yaml", POD)
    finding = Finding("VL101", Severity.ERROR, "m", "m.yaml",
                      source.span(POD.index("- name"), POD.index("image")))
    notices = [Notice("VL002", "Skipped, template", path="c/t.yaml", line=3), Notice("VL003", "assumed", level="warning")]
    assert render("github", Report(findings=[finding], notices=notices, rules=RULES)).splitlines() == [
        "::error file=m.yaml,line=6,endLine=7,title=VL101 deprecated-entrypoint::m",
        "::notice file=c/t.yaml,line=3,title=VL002::Skipped, template",
        "::warning title=VL003::assumed",
    ]


def test_github_notes_of_one_kind_are_one_annotation():
    # Issue 13: 200 VL006 notes on a 1,000-file tree were 200 annotations, crowding out the findings.
    unknown = ("workload assumes vLLM 0.33.0 (release unknown)", "workloads assume vLLM 0.33.0 (release unknown)")
    skipped = ("unrendered Helm template skipped", "unrendered Helm templates skipped")
    notices = [Notice("VL006", f"Deployment d{i}: vLLM release unknown", path=f"k/d{i}.yaml", line=4, summary=unknown)
               for i in range(200)]
    notices += [Notice("VL002", "unrendered Helm template skipped", path="c/t.yaml", line=3, summary=skipped),
                Notice("VL003", "assumed", level="warning"), Notice("VL002", "x", path="c/u.yaml", summary=skipped)]
    assert render("github", Report(notices=notices, rules=RULES)).splitlines() == [
        "::notice title=VL006::200 workloads assume vLLM 0.33.0 (release unknown): --show-notes to list "
        "(the first at k/d0.yaml:4)",
        "::notice title=VL002::2 unrendered Helm templates skipped: --show-notes to list (the first at c/t.yaml:3)",
        "::warning title=VL003::assumed",
    ]
    # a kind seen once is annotated in full, at its place; --show-notes annotates every note
    one = render("github", Report(notices=notices[:1], rules=RULES))
    assert one == "::notice file=k/d0.yaml,line=4,title=VL006::Deployment d0: vLLM release unknown\n"
    listed = render("github", Report(notices=notices, rules=RULES, show_notes=True)).splitlines()
    assert len(listed) == 203 and listed[0] == one.strip()


# --- json ------------------------------------------------------------------------------------------
def test_json_structure(two_files):
    source = two_files.sources["deploy/vllm.yaml"]
    two_files.findings[0].subject = Subject("Pod", "default", "vllm", "vllm")
    from vllmlint.fix.edits import Fix

    two_files.findings[0].fix = Fix([], "safe", "rewrite the entrypoint")
    two_files.suppressed = [finding_at(source, "image", message="Old image.", suppressed_by="pinned")]
    two_files.notices = [Notice("VL002", "Skipped a template", path="c/t.yaml", line=3)]
    two_files.tool_version = "9.9.9"
    data = json.loads(render("json", two_files))
    assert list(data) == ["version", "tool", "files_checked", "findings", "suppressed", "notices", "summary"]
    assert data["version"] == 1
    assert data["tool"] == {"name": "vllmlint", "version": "9.9.9"}
    assert data["files_checked"] == 3
    first = two_files.findings[0]
    assert data["findings"][0] == {
        "code": "VL101", "name": "deprecated-entrypoint", "severity": "warning",
        "message": "Use `vllm serve` instead of the deprecated module.", "path": "deploy/vllm.yaml",
        "line": 8, "column": 28, "end_line": 8, "end_column": 62, "fingerprint": first.fingerprint(),
        "subject": {"kind": "Pod", "namespace": "default", "name": "vllm", "container": "vllm"},
        "fixable": True, "fix": "safe", "fix_description": "rewrite the entrypoint", "edits": [],
        "suppressed": False}
    assert data["findings"][1]["severity"] == "error" and data["findings"][1]["fixable"] is False
    assert data["findings"][1]["fix"] is None and "edits" not in data["findings"][1]
    assert data["suppressed"][0]["suppressed"] is True
    assert data["suppressed"][0]["justification"] == "pinned"
    assert data["suppressed"][0]["line"] == 7
    assert data["notices"] == [{"code": "VL002", "message": "Skipped a template", "path": "c/t.yaml", "line": 3,
                                "level": "note"}]
    assert data["summary"] == {"error": 1, "warning": 1, "info": 0}


def test_json_marks_everything_under_suppressed_as_suppressed():
    source = SourceFile("a.yaml", POD)
    data = json.loads(render("json", Report(suppressed=[finding_at(source, "kind")])))  # no reason given
    assert (data["suppressed"][0]["suppressed"], data["suppressed"][0]["justification"]) == (True, "")


def test_json_of_a_clean_run():
    data = json.loads(render("json", Report(files_checked=2)))
    assert data["findings"] == [] and data["suppressed"] == [] and data["notices"] == []
    assert data["summary"] == {"error": 0, "warning": 0, "info": 0}


# --- dispatch and import cost ------------------------------------------------------------------------
def test_unknown_format_is_rejected():
    assert FORMATS == ("text", "json", "sarif", "github", "junit")
    with pytest.raises(ValueError, match="unknown output format"):
        render("xml", Report())


def test_no_format_imports_sarif_om():
    root = Path(vllmlint.__file__).resolve().parent.parent
    code = ("import sys\n"
            "from vllmlint.formatters import Report, render\n"
            "for fmt in ('text', 'json', 'github'):\n"
            "    render(fmt, Report())\n"
            "assert 'sarif_om' not in sys.modules and 'jsonschema' not in sys.modules, sorted(sys.modules)\n"
            "render('sarif', Report())\n"
            "assert 'sarif_om' not in sys.modules, 'the SARIF formatter writes plain JSON data'\n")
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


# --- issue 13: a short first line, the why / how-to-fix on a `help:` line ---------------------------
def test_split_message_at_the_first_sentence_end():
    from vllmlint.formatters import split_message

    assert split_message("`--swap-space` was removed in vLLM 0.18.0 (last accepted by 0.17.1). Delete it.") == (
        "`--swap-space` was removed in vLLM 0.18.0 (last accepted by 0.17.1)", "Delete it.")
    # not at an abbreviation, nor inside backticks, brackets or quotes
    assert split_message("Image `a. B` is old (see e.g. Kubernetes. Docs) \"x. Y\"") == (
        "Image `a. B` is old (see e.g. Kubernetes. Docs) \"x. Y\"", None)
    assert split_message("pin a tag (e.g. `v0.29.0`) now. vLLM warns") == ("pin a tag (e.g. `v0.29.0`) now", "vLLM warns.")


def test_split_message_cuts_a_long_first_sentence_at_its_colon():
    from vllmlint.formatters import split_message

    long = ("Image `nginx:latest` has `:latest`, which changes under you and differs between nodes in "
            "every cluster you run: pin a release tag or a digest `@sha256:...`")
    assert split_message(long) == (long.split(": pin")[0], "Pin a release tag or a digest `@sha256:...`.")
    short = "ServiceMonitor scrapes port 8001: scrape the API port."
    assert split_message(short) == (short, None)  # short enough: one line



def test_split_message_keeps_the_colon_when_it_cuts_again_at_a_semicolon():
    from vllmlint.formatters import split_message

    image = "vault.habana.ai/gaudi-docker/1.18.0/ubuntu22.04/habanalabs/pytorch-installer-2.4.0:latest"
    message = (f"Image `{image}` has `:latest`; it changes under you and differs between nodes: pin a release tag "
               "or a digest `@sha256:...`.")
    assert split_message(message) == (
        f"Image `{image}` has `:latest`",
        "It changes under you and differs between nodes: pin a release tag or a digest `@sha256:...`.")


def test_text_output_prints_help_under_the_excerpt():
    source = SourceFile("t.yaml", "image: nginx:latest\n", "t.yaml")
    message = "Image `nginx:latest` has `:latest`, which changes under you. Pin a release tag."
    finding = Finding("VL201", Severity.WARNING, message, "t.yaml", Span(7, 19, 1, 8, 1, 20))
    lines = render("text", Report(findings=[finding], sources={"t.yaml": source}, rules=RULES)).splitlines()
    assert lines[:4] == [
        "t.yaml:1:8: VL201 [warning] Image `nginx:latest` has `:latest`, which changes under you (image-unpinned)",
        " 1 | image: nginx:latest",
        "   |        ^^^^^^^^^^^^",
        "   = help: Pin a release tag.",
    ]
    quiet = render("text", Report(findings=[finding], sources={"t.yaml": source}, rules=RULES, quiet=True))
    assert quiet == f"t.yaml:1:8: VL201 [warning] {message} (image-unpinned)\n"  # one line, whole message


def test_split_message_cuts_a_long_first_sentence_at_its_semicolon():
    from vllmlint.formatters import split_message

    long = ("A Service named `vllm` makes the kubelet set `VLLM_PORT=tcp://<cluster IP>:<port>` in every pod of "
            "namespace inference, including Deployment/vllm; vLLM reads `VLLM_PORT` as a port number and stops. "
            "Rename the Service.")
    assert split_message(long) == (long.split("; ")[0],
                                   "vLLM reads `VLLM_PORT` as a port number and stops. Rename the Service.")
    assert split_message("A short one; it stays. Then more.") == ("A short one; it stays", "Then more.")


def test_split_message_capitalises_a_help_line_that_starts_with_a_word_and_a_comma():
    from vllmlint.formatters import split_message

    assert split_message("`CUDA_VISIBLE_DEVICES` is set by hand. redundant, and wrong the day it changes.") == (
        "`CUDA_VISIBLE_DEVICES` is set by hand", "Redundant, and wrong the day it changes.")


def test_local_message_never_rewrites_a_relative_path_the_message_quotes():
    from vllmlint.formatters.text import local_message

    message = "Kustomize resource `../../base` not read: it is not among the linted files"
    # a file outside the current folder's repository: its repository-relative path starts with `../..`
    assert local_message(message, "../../tmp/k/overlays/prod/kustomization.yaml",
                         "/tmp/k/overlays/prod/kustomization.yaml") == message
    assert local_message("run `vllmlint --render fixtures/chart`", "fixtures/chart/Chart.yaml", "chart/Chart.yaml") \
        == "run `vllmlint --render chart`"
