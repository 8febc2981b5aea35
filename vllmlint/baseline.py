"""Baselines: record today's findings so that only new ones fail a build.

Findings are matched by `Finding.fingerprint()` (rule, file, object kind/namespace/name, container and
offending value), which survives line shifts and edits elsewhere. Matching counts: a baseline holding a
fingerprint twice absorbs two such findings, and a third one is new.
"""
from __future__ import annotations

from vllmlint import records

import json
from collections import Counter
from vllmlint.records import dataclass, field
from pathlib import Path

from vllmlint.finding import Finding

FORMAT_VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be used; the message is one line, fit for the command line."""


@dataclass
class Baseline:
    fingerprints: Counter = field(default_factory=Counter)
    entries: list[dict] = field(default_factory=list)  # as read, for tools that want to show them

    def __len__(self) -> int:
        return sum(self.fingerprints.values())

    def filter(self, findings: list[Finding], moved: list[tuple[str, str]] | None = None
               ) -> tuple[list[Finding], list[Finding]]:
        """(new, known): known findings used up one baseline entry each, in the order given. An entry
        recorded under the code a finding moved from (data/renamed-codes.yaml) still matches it, for one
        release; `moved` collects (old code, new code) for the VL008 note."""
        remaining = Counter(self.fingerprints)
        new, known = [], []
        for finding in findings:
            fingerprint = finding.fingerprint()
            if remaining[fingerprint] > 0:
                remaining[fingerprint] -= 1
                known.append(finding)
                continue
            old = next((o for o, p in _old_prints(finding) if remaining[p] > 0), None)
            if old is None:
                new.append(finding)
                continue
            remaining[dict(_old_prints(finding))[old]] -= 1
            known.append(finding)
            if moved is not None and (old, finding.code) not in moved:
                moved.append((old, finding.code))
        return new, known

    def within(self, roots: list[str]) -> Baseline:
        """The entries of files at or under `roots` (display paths of the linted paths; "." is the whole
        repository): a run over `k8s/` cannot match, nor call stale, the entries of files elsewhere."""
        if any(root in (".", "") for root in roots):
            return self
        inside = Baseline()
        for entry in self.entries:
            path = entry.get("path")
            if not isinstance(path, str) or any(path == root or path.startswith(root.rstrip("/") + "/")
                                                 for root in roots):
                inside.fingerprints[entry["fingerprint"]] += 1
                inside.entries.append(entry)
        return inside

    def stale_count(self, findings: list[Finding]) -> int:
        """Baseline entries that no finding matches any more (fixed problems: rewrite the baseline)."""
        prints = Counter(f.fingerprint() for f in findings)
        prints.update(p for f in findings for _, p in _old_prints(f))
        return sum((self.fingerprints - prints).values())


def _old_prints(finding: Finding) -> list[tuple[str, str]]:
    """(old code, the finding's fingerprint under it) for each code the finding's rule moved from."""
    from vllmlint.renames import covering

    return [(old, records.replace(finding, code=old).fingerprint()) for old in covering(finding.code)]


def _entry(finding: Finding) -> dict:
    subject = finding.subject
    return {
        "fingerprint": finding.fingerprint(),
        "code": finding.code,
        "path": finding.path,
        "subject": {"kind": subject.kind, "namespace": subject.namespace, "name": subject.name,
                    "container": subject.container},
        "value": finding.value,
        "message": finding.message,  # for humans reading a diff of the baseline; not used to match
    }


def write_baseline(path: Path, findings: list[Finding]) -> int:
    """Write `findings` as a baseline (no line numbers: they would churn on every edit); the count."""
    entries = sorted((_entry(f) for f in findings),
                     key=lambda e: (e["path"], e["code"], e["subject"]["kind"], e["subject"]["namespace"],
                                    e["subject"]["name"], e["subject"]["container"], e["value"],
                                    e["fingerprint"], e["message"]))
    document = {"version": FORMAT_VERSION, "tool": "vllmlint", "findings": entries}
    Path(path).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(entries)


def load_baseline(path: Path) -> Baseline:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BaselineError(f"baseline {path} is not UTF-8 text") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"baseline {path} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                            f"{exc.msg})") from None
    if not isinstance(document, dict) or not isinstance(document.get("findings"), list):
        raise BaselineError(f"baseline {path} is not a vllmlint baseline (no `findings` list)")
    if document.get("version") != FORMAT_VERSION:
        raise BaselineError(f"baseline {path} has version {document.get('version')!r}; this vllmlint reads "
                            f"version {FORMAT_VERSION}: regenerate it")
    baseline = Baseline()
    for number, entry in enumerate(document["findings"], 1):
        fingerprint = entry.get("fingerprint") if isinstance(entry, dict) else None
        if not isinstance(fingerprint, str) or not fingerprint:
            raise BaselineError(f"baseline {path}: entry {number} has no fingerprint")
        baseline.fingerprints[fingerprint] += 1
        baseline.entries.append(entry)
    return baseline
