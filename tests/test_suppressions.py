"""Suppressions: comments (YAML, shell, Markdown) and annotations, reasons, VL003 and VL004.

Findings are real: each text is linted by the real rules, then `apply_suppressions` runs on the result.
The raw findings are computed the way the engine computes them before any suppression, so these tests
hold whether or not the engine itself applies suppressions."""
from __future__ import annotations

import dataclasses
from pathlib import PurePosixPath

import pytest

from vllmlint import suppressions
from vllmlint.checks import Context
from vllmlint.engine import Linter, LintOptions
from vllmlint.finding import Subject
from vllmlint.registry import all_rules, select_rules
from vllmlint.source import comments
from vllmlint.suppressions import apply_suppressions


@dataclasses.dataclass
class Run:
    findings: list
    outcome: suppressions.SuppressionOutcome

    def kept(self, code=None):
        return [f for f in self.outcome.kept if code is None or f.code == code]

    def suppressed(self, code=None):
        return [f for f in self.outcome.suppressed if code is None or f.code == code]

    def problems(self, code=None):
        return [f for f in self.outcome.problems if code is None or f.code == code]


def raw_lint(files: dict[str, str], select=None):
    """(findings before any suppression, sources, world, codes of the rules that ran)."""
    linter = Linter(LintOptions(select=select))
    for name, text in files.items():
        linter.result.files_checked += 1
        linter.add_text(text, name, PurePosixPath(name).suffix.lower())
    world = linter.build()
    rules = select_rules(select)
    findings = []
    for rule in rules:
        check = rule.load_check() if rule.kind == "result" else None
        if check is not None:
            findings.extend(f for f in check(Context(world, rule, rule.severity)) if f is not None)
    findings.sort(key=lambda f: f.sort_key)
    return findings, linter.result.sources, world, {r.code for r in rules}


def run(text_or_files, filename="example.yaml", *, select=None, active=None, require_reason=True) -> Run:
    files = text_or_files if isinstance(text_or_files, dict) else {filename: text_or_files}
    findings, sources, world, codes = raw_lint(files, select)
    outcome = apply_suppressions(findings, sources, world, require_reason=require_reason,
                                 active_codes=codes if active is None else active)
    return Run(findings, outcome)


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: web}}
spec:
  containers:
  - name: web
{body}
"""


def pod(body: str) -> str:
    return POD.format(body=body)


# --- the plain case: no suppression ----------------------------------------------------------------
def test_without_any_comment_findings_pass_through():
    result = run(pod("    image: nginx:latest"))
    assert [f.code for f in result.findings] == ["VL201"]
    assert result.kept() == result.findings
    assert not result.outcome.suppressed and not result.outcome.problems


def test_a_file_without_the_marker_is_never_parsed_again(monkeypatch):
    def boom(*_):
        raise AssertionError("files without `vllmlint` must be skipped by one substring check")

    monkeypatch.setattr(suppressions, "comment_directives", boom)
    monkeypatch.setattr(suppressions, "yaml_comments", boom)
    monkeypatch.setattr(suppressions, "read_script", boom)
    monkeypatch.setattr(comments, "_scalar_spans", boom)  # nor are their nodes walked for a comment index
    result = run({"a.yaml": pod("    image: nginx:latest"), "run.sh": "#!/bin/sh\nvllm serve m --swap-space 4\n"})
    assert {f.code for f in result.kept()} == {"VL201", "VL102"}


# --- disable (same line) -----------------------------------------------------------------------------
def test_disable_on_the_line_suppresses_with_its_reason():
    result = run(pod("    image: nginx:latest  # vllmlint: disable=VL201 -- lab mirror, OPS-12"))
    assert not result.kept("VL201")
    [hidden] = result.suppressed("VL201")
    assert hidden.suppressed_by == "lab mirror, OPS-12"
    assert not result.outcome.problems


def test_disable_by_rule_name_and_by_all():
    by_name = run(pod("    image: nginx:latest  # vllmlint: disable=image-unpinned -- lab mirror"))
    assert by_name.suppressed("VL201") and not by_name.kept("VL201") and not by_name.problems()
    by_all = run(pod("    image: nginx:latest  # vllmlint: disable=all -- lab mirror"))
    assert by_all.suppressed("VL201") and not by_all.kept("VL201") and not by_all.problems()


def test_disable_for_another_rule_does_not_suppress_and_is_unused():
    text = pod("    image: nginx:latest  # vllmlint: disable=VL102 -- wrong rule")
    result = run(text)
    assert result.kept("VL201")
    [unused] = result.problems("VL003")
    assert "`VL102`" in unused.message and "suppresses nothing" in unused.message
    assert unused.span.line == line_of(text, "disable=VL102")
    assert unused.span.col == text.splitlines()[unused.span.line - 1].index("VL102") + 1


def test_disable_on_another_line_does_not_suppress():
    text = pod("    # vllmlint: disable=VL201 -- on its own line it covers only itself\n    image: nginx:latest")
    result = run(text)
    assert result.kept("VL201") and result.problems("VL003")


def test_a_finding_spanning_lines_is_covered_by_its_first_line_only():
    text = pod("    image: nginx:latest  # vllmlint: disable=VL201 -- lab mirror\n"
               "    command: [sleep, infinity]  # vllmlint: disable=VL201 -- on the last line")
    findings, sources, world, codes = raw_lint({"example.yaml": text})
    [finding] = [f for f in findings if f.code == "VL201"]
    two_lines = dataclasses.replace(finding, span=dataclasses.replace(finding.span, end_line=finding.span.line + 1))
    outcome = apply_suppressions([two_lines], sources, world, active_codes=codes)
    assert [f.suppressed_by for f in outcome.suppressed] == ["lab mirror"]
    # Moved one line down, only the second comment reaches its first line; the first one is unused.
    lower = dataclasses.replace(finding, span=dataclasses.replace(finding.span, line=finding.span.line + 1,
                                                                  end_line=finding.span.line + 3))
    outcome = apply_suppressions([lower], sources, world, active_codes=codes)
    assert [f.suppressed_by for f in outcome.suppressed] == ["on the last line"]
    assert [p.span.line for p in outcome.problems if p.code == "VL003"] == [finding.span.line]


def test_several_rules_each_judged_on_its_own():
    text = pod("    image: nginx:latest  # vllmlint: disable=VL201, VL501 -- lab mirror")
    result = run(text)
    assert result.suppressed("VL201")
    [unused] = result.problems("VL003")
    assert "`VL501`" in unused.message
    assert unused.span.col == text.splitlines()[unused.span.line - 1].index("VL501") + 1


# --- only comments are comments ---------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    '  - {name: web, image: nginx:latest, command: [echo, "# vllmlint: disable=VL201 -- in quotes"]}',
    "  - {name: web, image: nginx:latest, command: [echo, '# vllmlint: disable=VL201 -- in quotes']}",
    "  - {name: web, image: nginx:latest, command: [echo, a#vllmlint: disable=VL201]}",
])
def test_a_hash_inside_a_yaml_scalar_is_not_a_comment(line):
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n" + line + "\n"
    result = run(text)
    assert result.kept("VL201"), "the directive is text inside a value, not a comment"
    assert not result.outcome.suppressed and not result.outcome.problems


def test_the_same_line_with_a_real_comment_after_the_quotes_suppresses():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n"
            '  - {name: web, image: nginx:latest, command: [echo, "#1"]}  # vllmlint: disable=VL201 -- lab\n')
    result = run(text)
    assert result.suppressed("VL201") and not result.kept("VL201") and not result.problems()


def test_a_comment_after_a_syntax_error_is_still_read():
    text = pod("    image: nginx:latest") + "---\nkey: [unclosed\n# vllmlint: disable-file=VL201 -- lab mirror\n"
    result = run(text)
    assert result.suppressed("VL201") and not result.kept("VL201")


def test_a_comment_that_only_mentions_vllmlint_is_ignored():
    result = run(pod("    image: nginx:latest  # vllmlint: see docs/linting.md"))
    assert result.kept("VL201") and not result.problems()


def test_a_malformed_directive_is_reported():
    text = pod("    image: nginx:latest  # vllmlint: disable VL201 -- missing equals sign")
    result = run(text)
    assert result.kept("VL201")
    [problem] = result.problems("VL003")
    assert "not a suppression vllmlint understands" in problem.message


# --- disable-next-line ---------------------------------------------------------------------------------
def test_disable_next_line_covers_the_next_line_skipping_blank_and_comment_lines():
    text = pod("    # vllmlint: disable-next-line=VL201 -- lab mirror\n\n    # the mirror is rebuilt nightly\n"
               "    image: nginx:latest")
    result = run(text)
    assert [f.suppressed_by for f in result.suppressed("VL201")] == ["lab mirror"]
    assert not result.kept("VL201") and not result.problems()


def test_disable_next_line_two_lines_above_does_not_reach():
    text = pod("    # vllmlint: disable-next-line=VL201 -- lab mirror\n    imagePullPolicy: Always\n"
               "    image: nginx:latest")
    result = run(text)
    assert result.kept("VL201")
    [unused] = result.problems("VL003")
    assert unused.span.line == line_of(text, "disable-next-line") and "on the next line" in unused.message


def test_disable_next_line_for_another_rule_does_not_suppress():
    result = run(pod("    # vllmlint: disable-next-line=VL102 -- wrong rule\n    image: nginx:latest"))
    assert result.kept("VL201") and result.problems("VL003")


# --- disable-file -------------------------------------------------------------------------------------
def test_disable_file_covers_the_whole_file_and_only_that_file():
    first = ("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: a\n"
             "    image: nginx:latest\n  - name: b\n    image: redis\n"
             "# vllmlint: disable-file=VL201 -- lab images, rebuilt nightly\n")
    second = pod("    image: nginx:latest")
    result = run({"lab.yaml": first, "prod.yaml": second})
    assert sorted(f.path for f in result.suppressed("VL201")) == ["lab.yaml", "lab.yaml"]
    assert [f.path for f in result.kept("VL201")] == ["prod.yaml"]
    assert not result.problems()


def test_disable_file_for_another_rule_does_not_suppress():
    result = run(pod("    image: nginx:latest") + "# vllmlint: disable-file=VL301 -- no monitoring here\n")
    assert result.kept("VL201")
    assert "in this file" in result.problems("VL003")[0].message


# --- reasons: VL004 -------------------------------------------------------------------------------------
def test_a_suppression_without_reason_still_suppresses_but_is_reported():
    text = pod("    image: nginx:latest  # vllmlint: disable=VL201")
    result = run(text)
    [hidden] = result.suppressed("VL201")
    assert hidden.suppressed_by == ""
    [problem] = result.problems("VL004")
    assert problem.span.line == line_of(text, "vllmlint:") and "no reason" in problem.message
    assert not result.problems("VL003")


def test_an_empty_reason_is_no_reason():
    result = run(pod("    image: nginx:latest  # vllmlint: disable=VL201 --   "))
    assert result.suppressed("VL201") and result.problems("VL004")


def test_reasons_can_be_turned_off():
    result = run(pod("    image: nginx:latest  # vllmlint: disable=VL201"), require_reason=False)
    assert result.suppressed("VL201") and not result.outcome.problems


def test_vl004_is_hidden_by_another_suppression_naming_it_but_not_by_all():
    named = run(pod("    image: nginx:latest  # vllmlint: disable=VL201") +
                "# vllmlint: disable-file=suppression-without-reason -- this team writes reasons in the PR\n")
    assert not named.problems(), [p.message for p in named.problems()]
    assert [f.suppressed_by for f in named.suppressed("VL004")] == ["this team writes reasons in the PR"]
    everything = run(pod("    image: nginx:latest  # vllmlint: disable=VL201") +
                     "# vllmlint: disable-file=all -- lab\n")
    assert everything.problems("VL004") and not everything.suppressed("VL004")


def test_a_suppression_cannot_hide_its_own_problem():
    comment = run(pod("    image: nginx:latest  # vllmlint: disable=VL201,VL004"))
    assert comment.suppressed("VL201") and comment.problems("VL004") and not comment.suppressed("VL004")
    annotation = run(ANNOTATED.replace("    vllmlint.io/ignore-reason: lab cluster, images mirrored nightly\n", "")
                     .replace('"VL201,removed-flag"', '"VL201,VL004"'))
    assert annotation.suppressed("VL201") and annotation.problems("VL004")


def test_a_suppression_of_vl004_that_hides_nothing_is_unused():
    result = run(pod("    image: nginx:latest  # vllmlint: disable=VL201 -- lab") +
                 "# vllmlint: disable-file=VL004 -- no longer needed\n")
    [unused] = result.problems("VL003")
    assert "`VL004`" in unused.message


# --- VL003 and the rules that ran ------------------------------------------------------------------------
def test_a_suppression_for_a_rule_that_did_not_run_is_not_unused():
    text = pod("    image: nginx:1.27.3  # vllmlint: disable=VL201 -- lab mirror")
    assert run(text).problems("VL003"), "with VL201 active the comment is stale"
    assert not run(text, select=["VL003"]).problems("VL003")
    assert not run(text, active={"VL102", "VL003", "VL004"}).problems("VL003")


def test_vl003_and_vl004_are_reported_only_when_active():
    text = pod("    image: nginx:1.27.3  # vllmlint: disable=VL201")
    result = run(text, active={"VL201"})
    assert not result.outcome.problems


def test_an_unknown_rule_name_names_no_rule_whatever_ran():
    text = pod("    image: nginx:latest  # vllmlint: disable=image-unpined -- typo")
    result = run(text, select=["VL003"])
    [problem] = result.problems("VL003")
    assert "names no rule" in problem.message and "image-unpinned" in problem.message


def test_all_is_unused_only_when_every_default_rule_ran():
    text = pod("    image: nginx:1.27.3  # vllmlint: disable=all -- lab")
    assert run(text).problems("VL003")
    assert not run(text, select=["VL201", "VL003"]).problems("VL003")


# --- shell scripts inside YAML block scalars ---------------------------------------------------------------
SCRIPT_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: vllm}}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.29.0
    command: [/bin/sh, -c]
    args:
    - |
{script}
  runtimeClassName: nvidia
"""


def script_pod(script: str) -> str:
    return SCRIPT_POD.format(script="\n".join("      " + line if line else "" for line in script.splitlines()))


def test_a_shell_comment_covers_the_whole_continued_command():
    text = script_pod("""\
echo starting
# vllmlint: disable-next-line=removed-flag -- patched image keeps it, OPS-31
exec vllm serve Qwen/Qwen3-0.6B \\
  --port 8000 \\
  --swap-space 16""")
    result = run(text)
    assert [f.span.line for f in result.findings if f.code == "VL102"] == [line_of(text, "--swap-space")]
    assert [f.suppressed_by for f in result.suppressed("VL102")] == ["patched image keeps it, OPS-31"]
    assert not result.kept("VL102") and not result.problems()


def test_the_shell_comment_covers_only_the_next_command():
    text = script_pod("""\
# vllmlint: disable-next-line=removed-flag -- only the warm-up
echo warm-up
exec vllm serve Qwen/Qwen3-0.6B \\
  --swap-space 16""")
    result = run(text)
    assert result.kept("VL102")
    assert "in the next command" in result.problems("VL003")[0].message


def test_a_command_that_is_not_continued_ends_at_its_line():
    text = script_pod("""\
# vllmlint: disable-next-line=removed-flag -- first server only
vllm serve Qwen/Qwen3-0.6B --port 8000 &
vllm serve Qwen/Qwen3-0.6B --port 8001 --swap-space 16""")
    result = run(text)
    assert result.kept("VL102") and result.problems("VL003")


def test_a_hash_inside_a_shell_word_is_not_a_comment():
    text = script_pod("""\
echo "# vllmlint: disable-next-line=removed-flag -- quoted"
exec vllm serve Qwen/Qwen3-0.6B --swap-space 16""")
    result = run(text)
    assert result.kept("VL102") and not result.problems()


def test_a_yaml_comment_above_the_block_scalar_does_not_reach_into_it():
    too_far = "    # vllmlint: disable-next-line=removed-flag -- too far\n    - |\n"
    text = SCRIPT_POD.replace("    - |\n", too_far).format(
        script="      exec vllm serve Qwen/Qwen3-0.6B \\\n        --swap-space 16")
    result = run(text)
    assert result.kept("VL102") and result.problems("VL003")


def test_end_of_line_shell_comment_in_a_block_scalar():
    text = script_pod("exec vllm serve Qwen/Qwen3-0.6B --swap-space 16  # vllmlint: disable=VL102 -- patched")
    result = run(text)
    assert result.suppressed("VL102") and not result.kept("VL102") and not result.problems()


# --- shell scripts --------------------------------------------------------------------------------------------
def test_shell_script_forms():
    script = """\
#!/bin/bash
set -e
# vllmlint: disable-next-line=VL102 -- patched image, OPS-31

exec vllm serve Qwen/Qwen3-0.6B \\
  --port 8000 \\
  --swap-space 16
"""
    result = run(script, "start.sh")
    assert result.suppressed("VL102") and not result.kept("VL102") and not result.problems()
    wrong_rule = run(script.replace("VL102 --", "VL101 --"), "start.sh")
    assert wrong_rule.kept("VL102")
    same_line = run("#!/bin/sh\nvllm serve m --swap-space 4  # vllmlint: disable=VL102 -- patched\n", "run.sh")
    assert same_line.suppressed("VL102") and not same_line.problems()
    in_word = run("#!/bin/sh\nvllm serve m --swap-space 4 --served-model-name a#vllmlint:disable=VL102\n", "run.sh")
    assert in_word.kept("VL102") and not in_word.problems()


# --- Markdown -----------------------------------------------------------------------------------------------
README = """\
# Serving

<!-- vllmlint: disable=VL102 -- the docs show the old flag on purpose -->
```bash
vllm serve Qwen/Qwen3-0.6B \\
  --swap-space 16
```

And the current way:

```bash
vllm serve Qwen/Qwen3-0.6B --swap-space 8
```
"""


def test_markdown_comment_covers_the_next_fenced_block_only():
    result = run(README, "README.md")
    assert [f.span.line for f in result.suppressed("VL102")] == [line_of(README, "--swap-space 16")]
    assert [f.span.line for f in result.kept("VL102")] == [line_of(README, "--swap-space 8")]
    assert not result.problems()


def test_markdown_comment_separated_by_prose_covers_nothing():
    text = README.replace("-->\n```bash", "-->\nThe old way:\n\n```bash", 1)
    result = run(text, "README.md")
    assert len(result.kept("VL102")) == 2
    assert "in the next code block" in result.problems("VL003")[0].message


def test_markdown_disable_file_and_comments_inside_blocks():
    whole = run(README.replace("disable=VL102", "disable-file=VL102"), "README.md")
    assert len(whole.suppressed("VL102")) == 2 and not whole.kept("VL102")
    inside = README.replace("--swap-space 8", "--swap-space 8  # vllmlint: disable=VL102 -- also old")
    result = run(inside, "README.md")
    assert not result.kept("VL102") and len(result.suppressed("VL102")) == 2
    yaml_block = ("Example:\n\n```yaml\n" + pod("    image: nginx:latest  # vllmlint: disable=VL201 -- demo") +
                  "```\n")
    result = run(yaml_block, "README.md")
    assert result.suppressed("VL201") and not result.kept("VL201")


def test_an_html_comment_inside_a_code_block_is_not_a_directive():
    text = "```bash\n<!-- vllmlint: disable-file=VL102 -- text -->\nvllm serve m --swap-space 4\n```\n"
    result = run(text, "README.md")
    assert result.kept("VL102") and not result.problems()


# --- annotations -----------------------------------------------------------------------------------------------
ANNOTATED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: lab
  annotations:
    vllmlint.io/ignore: "VL201,removed-flag"
    vllmlint.io/ignore-reason: lab cluster, images mirrored nightly
spec:
  selector: {matchLabels: {app: lab}}
  template:
    metadata: {labels: {app: lab}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:latest
        args: [--model, Qwen/Qwen3-0.6B, --swap-space, "4"]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: prod}
spec:
  selector: {matchLabels: {app: prod}}
  template:
    metadata: {labels: {app: prod}}
    spec:
      containers:
      - name: web
        image: nginx:latest
"""


def test_annotation_suppresses_findings_of_its_object_and_pod_template():
    result = run(ANNOTATED)
    hidden = result.suppressed()
    assert {f.code for f in hidden} == {"VL201", "VL102"}
    assert {f.subject.name for f in hidden} == {"lab"}
    assert {f.suppressed_by for f in hidden} == {"lab cluster, images mirrored nightly"}
    assert [f.subject.name for f in result.kept("VL201")] == ["prod"]
    assert not result.problems()


def test_annotation_covers_findings_located_inside_the_object():
    findings, sources, world, codes = raw_lint({"example.yaml": ANNOTATED})
    lab = next(f for f in findings if f.code == "VL201" and f.subject.name == "lab")
    prod = next(f for f in findings if f.code == "VL201" and f.subject.name == "prod")
    anonymous = [dataclasses.replace(lab, subject=Subject()), dataclasses.replace(prod, subject=Subject())]
    outcome = apply_suppressions(anonymous, sources, world, active_codes=codes)
    assert [f.span.line for f in outcome.suppressed] == [lab.span.line]
    assert [f.span.line for f in outcome.kept] == [prod.span.line]


def test_annotation_without_reason_and_with_a_stale_rule():
    text = ANNOTATED.replace("    vllmlint.io/ignore-reason: lab cluster, images mirrored nightly\n", "").replace(
        '"VL201,removed-flag"', '"VL201,VL301"')
    result = run(text)
    assert result.suppressed("VL201") and result.kept("VL102")
    [no_reason] = result.problems("VL004")
    assert no_reason.span.line == line_of(text, "vllmlint.io/ignore:") and "ignore-reason" in no_reason.message
    [unused] = result.problems("VL003")
    assert "`VL301`" in unused.message and "Deployment/lab" in unused.message
    assert unused.span.col == text.splitlines()[unused.span.line - 1].index("VL301") + 1
    assert unused.subject.name == "lab"


# --- the rule files' own examples, with every rule running -----------------------------------------------------
def _meta_examples():
    for code in ("VL003", "VL004"):
        rule = all_rules()[code]
        yield pytest.param(code, "fails", {"source": rule.docs["example"]}, id=f"{code}-docs-example")
        yield pytest.param(code, "passes", {"source": rule.docs["use_instead"]}, id=f"{code}-docs-use-instead")
        for outcome in ("fails", "passes"):
            for number, example in enumerate(rule.examples.get(outcome) or []):
                yield pytest.param(code, outcome, example, id=f"{code}-{outcome}-{number}")


@pytest.mark.parametrize("code,outcome,example", list(_meta_examples()))
def test_rule_examples_with_all_rules(code, outcome, example):
    result = run(example["source"], example.get("filename", "example.yaml"))
    found = result.problems(code)
    if outcome == "fails":
        assert found, example.get("title")
        assert len(found) == example.get("count", len(found))
    else:
        assert not found, [f.message for f in found]


def test_findings_given_are_not_modified():
    text = pod("    image: nginx:latest  # vllmlint: disable=VL201 -- x")
    findings, sources, world, codes = raw_lint({"example.yaml": text})
    outcome = apply_suppressions(findings, sources, world, active_codes=codes)
    assert outcome.suppressed[0].suppressed_by == "x"
    assert all(f.suppressed_by is None for f in findings)
