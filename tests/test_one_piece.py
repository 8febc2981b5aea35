"""Findings no run mode can lose: every rule's examples and every fixture give the same findings and notes linted
alone as inside a run of 2,000 unrelated files (issue 23). A run is linted in one piece, one world of every file
(vllmlint.run): no file's findings may depend on which other, unrelated files the run holds, or on their order."""
import shutil
from pathlib import PurePosixPath

import pytest

from conftest import FIXTURES
from vllmlint.engine import LintOptions
from vllmlint.registry import all_rules
from vllmlint.run import lint_paths

FILLER_FILES = 2000


def _examples() -> dict[str | None, list[tuple[str, str, str]]]:
    """vllm_version -> [(folder name, file name, text)]: every example of every rule (the docs' too)."""
    groups: dict[str | None, list[tuple[str, str, str]]] = {}
    for rule in all_rules().values():
        if rule.kind != "result":
            continue
        cases = [(f"{rule.code}-docs-example", {"source": rule.docs["example"]}),
                 (f"{rule.code}-docs-use-instead", {"source": rule.docs["use_instead"]})]
        for outcome in ("fails", "passes"):
            cases += [(f"{rule.code}-{outcome}-{n}", e) for n, e in enumerate(rule.examples.get(outcome) or [])]
        for name, example in cases:
            filename = PurePosixPath(example.get("filename", "example.yaml")).name
            groups.setdefault(example.get("vllm_version"), []).append((name, filename, example["source"]))
    return groups


def _filler(folder):
    """FILLER_FILES small files of every kind the engine reads, each in a namespace of its own: unrelated to any
    example or fixture (no name, label, namespace or port of theirs)."""
    for i in range(FILLER_FILES):
        part = folder / f"{'am'[i % 2]}-{i % 16:02d}"  # folders that sort before and after the units
        part.mkdir(parents=True, exist_ok=True)
        kind = i % 10
        if kind == 7:
            (part / f"s{i}.sh").write_text(f"#!/bin/sh\necho filler {i}\n")
        elif kind == 8:
            (part / f"r{i}.md").write_text(f"# Filler {i}\n\n```yaml\nkey: {i}\n```\n")
        elif kind == 9:
            (part / f"svc{i}.yaml").write_text(
                f"apiVersion: v1\nkind: Service\nmetadata:\n  name: filler-svc-{i}\n  namespace: filler-{i}\n"
                f"spec:\n  selector:\n    filler: f{i}\n  ports:\n  - port: {20000 + i}\n")
        else:
            (part / f"cm{i}.yaml").write_text(
                f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: filler-{i}\n  namespace: filler-{i}\n"
                f"data:\n  key: value-{i}\n")


@pytest.fixture(scope="module")
def filler(tmp_path_factory):
    folder = tmp_path_factory.mktemp("filler")
    _filler(folder)
    return folder


def _seen(result, under: str) -> tuple[list, list]:
    findings = sorted((f.path, f.span.line, f.span.col, f.span.end_line, f.span.end_col, f.code, f.severity.label,
                       f.message) for f in result.findings if f.path.startswith(under))
    notices = sorted((n.path, n.line, n.code, n.level, n.message) for n in result.notices if n.path.startswith(under))
    return findings, notices


@pytest.mark.parametrize("version", sorted(_examples(), key=str))
def test_examples_and_fixtures_alone_and_among_unrelated_files(version, filler, tmp_path, monkeypatch):
    units = tmp_path / "m-units"
    for name, filename, text in _examples()[version]:
        (units / name).mkdir(parents=True)
        (units / name / filename).write_text(text)
    if version is None:
        shutil.copytree(FIXTURES, units / "fixtures")
    monkeypatch.chdir(tmp_path)
    options = LintOptions(vllm_version=version)
    alone, _ = lint_paths(["m-units"], options)
    # Unrelated files among the units' own too: in every folder of theirs, between their files in the run's order.
    folders = [units, *(p for p in units.rglob("*") if p.is_dir())]
    for number, folder in enumerate(folders):
        (folder / f"k-filler-{number}.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k-filler-{number}\n  namespace: k-filler-{number}\n")
    among, _ = lint_paths(_interleaved(filler, "m-units"), options)
    assert among.files_checked == alone.files_checked + FILLER_FILES + len(folders)
    assert not alone.internal_error and not among.internal_error
    found_alone = _seen(alone, "m-units/")
    assert found_alone[0] or version is not None, "the comparison compares something"
    if version is not None:
        assert alone.files_checked == len(_examples()[version])  # every example was read
    assert _seen(among, "m-units/") == found_alone


def _interleaved(filler, units: str) -> list[str]:
    """The filler's folders with the units in the middle of the run's order."""
    parts = sorted(str(p) for p in filler.iterdir())
    return parts[:len(parts) // 2] + [units] + parts[len(parts) // 2:]


_FOLDERS = sorted(str(p.relative_to(FIXTURES)) for p in [*FIXTURES.iterdir(), *FIXTURES.glob("*/*")]
                  if p.is_dir() and sum(1 for f in p.rglob("*") if f.is_file()) > 1)


@pytest.mark.parametrize("folder", _FOLDERS)
def test_each_multi_file_fixture_alone_and_among_unrelated_files(folder, filler, tmp_path, monkeypatch):
    """Each fixture folder of several files (a Kustomize base and overlay, a Compose project, a chart...) on its own,
    and with the 2,000 unrelated files around it and in it."""
    shutil.copytree(FIXTURES / folder, tmp_path / "m-unit")
    monkeypatch.chdir(tmp_path)
    alone, _ = lint_paths(["m-unit"], LintOptions())
    (tmp_path / "m-unit" / "k-filler.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k-filler\n  namespace: k-filler\n")
    among, _ = lint_paths(_interleaved(filler, "m-unit"), LintOptions())
    assert among.files_checked == alone.files_checked + FILLER_FILES + 1
    assert _seen(among, "m-unit/") == _seen(alone, "m-unit/")
    assert _seen(alone, "m-unit/") != ([], [])  # the comparison compares something
