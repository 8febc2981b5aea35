"""Machine-readable output: one JSON object, indented, keys in a fixed order.

Structure (version 1; new keys may be added, existing ones keep their meaning):

    {
      "version": 1,                        # of this structure
      "tool": {"name": "vllmlint", "version": "0.1.0"},
      "files_checked": 12,
      "findings": [                        # in the linter's order (path, line, column, code)
        {
          "code": "VL101",
          "name": "deprecated-entrypoint", # rule name; "" if the code has no rule file
          "severity": "warning",           # error | warning | info (after any config override)
          "message": "...",
          "path": "deploy/vllm.yaml",      # as displayed: relative to the git top level (else the working directory)
          "line": 9, "column": 28,         # 1-based; columns count Unicode code points
          "end_line": 9, "end_column": 62, # 1-based; end_column is exclusive (just past the span)
          "fingerprint": "3f1c...",        # 32 hex digits, stable across line shifts (baselines)
          "subject": {"kind": "Deployment", "namespace": "", "name": "vllm", "container": "vllm"},
          "fixable": true,                 # `vllmlint --fix` can repair it (a safe fix)
          "fix": "safe",                   # safe | unsafe (needs --unsafe-fixes) | null (no fix)
          "fix_description": "...",        # only with a fix: what it does
          "edits": [                       # only with a fix: the text edits `--fix` would apply
            {"path": "deploy/vllm.yaml", "line": 9, "column": 28, "end_line": 9, "end_column": 62,
             "start": 210, "end": 244, "replacement": "vllm serve"}   # start/end: 0-based character
          ],                               # offsets, end exclusive; line/column as the finding's
          "suppressed": false
        }
      ],
      "suppressed": [                      # findings hidden by a suppression: same keys, plus
        {..., "suppressed": true, "justification": "..."}
      ],
      "notices": [                         # about the run, not the code (skipped files, assumptions)
        {"code": "VL002", "message": "...", "path": "chart/templates/x.yaml", "line": 0, "level": "note"}
      ],                                   # line 0 / path "" when not tied to a place; level note|warning|error
      "summary": {"error": 1, "warning": 3, "info": 0},  # counts over "findings" only
      "understood": {                      # what the run read (from the command line; absent when not counted)
        "vllm_workloads": 2,               # objects or Compose services with a vLLM container, scripts' servers
        "vllm_invocations": 3,             # vLLM server command lines
        "objects": 10,                     # Kubernetes objects and Compose services
        "skipped": {"unrendered template": 1}   # files not read, by reason
      }
    }

With `--statistics`, counts per rule instead of the findings (the text format's `count  CODE  name`):

    {
      "version": 1, "tool": {...}, "files_checked": 12,
      "statistics": [                      # most frequent first, then by code; findings only (not suppressed)
        {"code": "VL101", "name": "deprecated-entrypoint", "count": 3,
         "severity": {"error": 0, "warning": 3, "info": 0},
         "fixable": 3}                     # how many `--fix` repairs (with --unsafe-fixes: unsafe ones too)
      ],
      "summary": {"error": 0, "warning": 3, "info": 0}
    }
"""
from __future__ import annotations

from collections import Counter

from vllmlint.finding import Finding, Severity
from vllmlint.formatters.report import Report, edit_positions, is_fixable, rule_name, rules_by_code

FORMAT_VERSION = 1


def finding_dict(finding: Finding, name: str, sources: dict | None = None) -> dict:
    span, subject = finding.span, finding.subject
    entry = {
        "code": finding.code,
        "name": name,
        "severity": finding.severity.label,
        "message": finding.message,
        "path": finding.path,
        "line": span.line,
        "column": span.col,
        "end_line": span.end_line,
        "end_column": span.end_col,
        "fingerprint": finding.fingerprint(),
        "subject": {"kind": subject.kind, "namespace": subject.namespace, "name": subject.name,
                    "container": subject.container},
        "fixable": getattr(finding.fix, "safety", None) == "safe",
        "fix": getattr(finding.fix, "safety", None),
        "suppressed": finding.suppressed_by is not None,
    }
    if finding.fix is not None:
        entry["fix_description"] = finding.fix.description
        entry["edits"] = [edit_positions(edit, sources or {}) for edit in finding.fix.edits]
    if finding.suppressed_by is not None:
        entry["justification"] = finding.suppressed_by
    return entry


def build(report: Report) -> dict:
    rules = rules_by_code(report)
    counts = Counter(f.severity for f in report.findings)
    suppressed = []
    for finding in report.suppressed:
        entry = finding_dict(finding, rule_name(rules, finding.code), report.sources)
        # Listed under "suppressed" means suppressed, even if the caller did not fill in a reason.
        entry["suppressed"] = True
        entry.setdefault("justification", finding.suppressed_by or "")
        suppressed.append(entry)
    return {
        "version": FORMAT_VERSION,
        "tool": {"name": "vllmlint", "version": report.tool_version},
        "files_checked": report.files_checked,
        "findings": [finding_dict(f, rule_name(rules, f.code), report.sources) for f in report.findings],
        "suppressed": suppressed,
        "notices": [{"code": n.code, "message": n.message, "path": n.path, "line": n.line, "level": n.level}
                    for n in report.notices],
        "summary": {s.label: counts[s] for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)},
        **understood(report),
    }


def understood(report: Report) -> dict:
    """`{"understood": {...}}`: the engine's counts of what the run read, when the report carries them."""
    if report.workloads is None:
        return {}
    return {"understood": {"vllm_workloads": report.workloads, "vllm_invocations": report.invocations,
                           "objects": report.objects, "skipped": dict(report.skipped)}}


def statistics(report: Report) -> dict:
    """`--statistics --format json`: per rule, its findings counted by severity and how many are fixable."""
    rules = rules_by_code(report)
    counts = Counter(f.severity for f in report.findings)
    per_rule = Counter(f.code for f in report.findings)
    by_severity = Counter((f.code, f.severity) for f in report.findings)
    fixable = Counter(f.code for f in report.findings if is_fixable(f, report.unsafe_fixes))
    levels = (Severity.ERROR, Severity.WARNING, Severity.INFO)
    return {
        "version": FORMAT_VERSION,
        "tool": {"name": "vllmlint", "version": report.tool_version},
        "files_checked": report.files_checked,
        "statistics": [{"code": code, "name": rule_name(rules, code), "count": count,
                        "severity": {s.label: by_severity[code, s] for s in levels}, "fixable": fixable[code]}
                       for code, count in sorted(per_rule.items(), key=lambda item: (-item[1], item[0]))],
        "summary": {s.label: counts[s] for s in levels},
        **understood(report),
    }


def render(report: Report) -> str:
    from vllmlint.formatters.report import dumps_indented  # json.dumps(..., indent=2, ensure_ascii=False), faster

    return dumps_indented(statistics(report) if report.statistics else build(report)) + "\n"
