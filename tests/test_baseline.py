"""Baselines: written, read back, and matched by fingerprint as a multiset across unrelated edits."""
from __future__ import annotations

import json

import pytest

from vllmlint.baseline import BaselineError, load_baseline, write_baseline
from vllmlint.engine import LintOptions, lint_text

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: gateway}
spec:
  selector: {matchLabels: {app: gateway}}
  template:
    metadata: {labels: {app: gateway}}
    spec:
      containers:
      - name: gateway
        image: nginx:latest
      - name: exporter
        image: nginx/nginx-prometheus-exporter:1.4.2
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cache}
spec:
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers:
      - name: redis
        image: redis:7.4.1
"""


def findings(text: str, filename: str = "deploy.yaml"):
    result = lint_text(text, filename, LintOptions(select=["VL201"]))
    return [f for f in result.findings if f.code == "VL201"]


@pytest.fixture
def baseline(tmp_path):
    path = tmp_path / "vllmlint-baseline.json"
    assert write_baseline(path, findings(MANIFEST)) == 1
    return load_baseline(path)


def test_the_same_findings_are_all_known(baseline):
    new, known = baseline.filter(findings(MANIFEST))
    assert not new and len(known) == 1
    assert len(baseline) == 1 and baseline.stale_count(known) == 0


def test_a_finding_still_matches_after_lines_are_inserted_above(baseline):
    shifted = "# deployed by the platform team\n\n" + MANIFEST.replace(
        "      - name: gateway\n", "      - name: sidecar\n        image: busybox:1.37.0\n      - name: gateway\n")
    [moved] = findings(shifted)
    assert moved.span.line != findings(MANIFEST)[0].span.line
    new, known = baseline.filter([moved])
    assert not new and known == [moved]


def test_a_finding_still_matches_after_an_unrelated_object_changes(baseline):
    edited = MANIFEST.replace("redis:7.4.1", "redis:7.4.2").replace("name: redis", "name: valkey")
    new, known = baseline.filter(findings(edited))
    assert not new and len(known) == 1


def test_a_new_occurrence_in_another_object_is_new(baseline):
    edited = MANIFEST.replace("redis:7.4.1", "redis")
    new, known = baseline.filter(findings(edited))
    assert [f.subject.name for f in new] == ["cache"]
    assert [f.subject.name for f in known] == ["gateway"]


def test_another_value_or_file_is_new(baseline):
    new, _ = baseline.filter(findings(MANIFEST.replace("nginx:latest", "nginx")))
    assert len(new) == 1, "the offending value is part of the fingerprint"
    new, _ = baseline.filter(findings(MANIFEST, "other.yaml"))
    assert len(new) == 1, "the file is part of the fingerprint"


def test_matching_counts_like_a_multiset(tmp_path):
    [finding] = findings(MANIFEST)
    path = tmp_path / "baseline.json"
    write_baseline(path, [finding, finding])
    baseline = load_baseline(path)
    new, known = baseline.filter([finding, finding, finding])
    assert len(known) == 2 and len(new) == 1
    assert baseline.stale_count([finding]) == 1
    new, known = baseline.filter([finding])
    assert len(known) == 1 and not new, "filter does not use the baseline up"


def test_the_file_is_stable_readable_json(tmp_path):
    found = findings(MANIFEST.replace("redis:7.4.1", "redis"))
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert write_baseline(first, found) == 2
    write_baseline(second, list(reversed(found)))
    assert first.read_text() == second.read_text(), "order of the input must not matter"
    document = json.loads(first.read_text())
    assert document["version"] == 1 and document["tool"] == "vllmlint"
    entry = document["findings"][0]
    assert set(entry) == {"fingerprint", "code", "path", "subject", "value", "message"}
    assert entry["fingerprint"] == found[[f.subject.name for f in found].index(entry["subject"]["name"])].fingerprint()
    assert entry["subject"]["kind"] == "Deployment" and entry["code"] == "VL201" and entry["path"] == "deploy.yaml"


def test_an_empty_baseline(tmp_path):
    path = tmp_path / "baseline.json"
    assert write_baseline(path, []) == 0
    new, known = load_baseline(path).filter(findings(MANIFEST))
    assert len(new) == 1 and not known


@pytest.mark.parametrize("content,expected", [
    (None, "cannot read baseline"),
    ("{not json", "not valid JSON (line 1"),
    ("[]", "not a vllmlint baseline"),
    ('{"version": 1}', "not a vllmlint baseline"),
    ('{"version": 7, "findings": []}', "version 7"),
    ('{"version": 1, "findings": [{"code": "VL201"}]}', "entry 1 has no fingerprint"),
    ('{"version": 1, "findings": ["abc"]}', "entry 1 has no fingerprint"),
    (b"\xff\xfe\x00", "not UTF-8"),
])
def test_unusable_files_raise_one_line_errors(tmp_path, content, expected):
    path = tmp_path / "baseline.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(BaselineError) as error:
        load_baseline(path)
    message = str(error.value)
    assert expected in message and "\n" not in message and str(path) in message
