"""The rule files under rules/ are well formed: schema, naming, documentation shape and parseable snippets.

Whether each snippet yields (or does not yield) its rule is the generic example test's job; this file
checks that the files themselves are a usable spec.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from vllmlint.data import knowledge_dir, rules_dir, schemas_dir
from vllmlint.source.files import is_dockerfile
from vllmlint.source.yamlmodel import SourceFile, parse_documents

RULE_PATHS = sorted(rules_dir().glob("VL*.yaml"))
RULE_IDS = [path.stem for path in RULE_PATHS]

# VL001's failing snippets are broken on purpose; VL002's are Helm templates, which may or may not parse.
DELIBERATELY_BROKEN = {"VL001"}
TEMPLATES = {"VL002"}


def load_rule(path: Path) -> dict:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator():
    import jsonschema

    schema = json.loads((schemas_dir() / "rule.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def snippets(rule: dict):
    """(label, filename, source, expected_to_parse) for docs.example, docs.use_instead and every example."""
    docs = rule["docs"]
    yield "docs.example", "example.yaml", docs["example"], False
    yield "docs.use_instead", "example.yaml", docs["use_instead"], True
    examples = rule.get("examples") or {}
    for group, should_parse in (("fails", False), ("passes", True)):
        for number, example in enumerate(examples.get(group) or []):
            label = f"examples.{group}[{number}] {example.get('title', '')!r}"
            yield label, example.get("filename", "example.yaml"), example["source"], should_parse


def yaml_error(filename: str, text: str):
    """The project's own parser decides what parses: it is the one the linter runs."""
    _, error = parse_documents(SourceFile(filename, text))
    return error


def test_there_are_rule_files():
    assert RULE_PATHS, f"no rules/VL*.yaml under {rules_dir()}"


@pytest.mark.parametrize("path", RULE_PATHS, ids=RULE_IDS)
def test_rule_matches_schema(path, validator):
    errors = sorted(validator.iter_errors(load_rule(path)), key=lambda e: list(e.absolute_path))
    messages = [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors]
    assert not messages, "\n".join(messages)


@pytest.mark.parametrize("path", RULE_PATHS, ids=RULE_IDS)
def test_file_name_is_code_and_name(path):
    rule = load_rule(path)
    assert path.name == f"{rule['code']}-{rule['name']}.yaml"


def test_codes_and_names_are_unique():
    rules = [load_rule(path) for path in RULE_PATHS]
    codes = [r["code"] for r in rules]
    names = [r["name"] for r in rules]
    assert len(codes) == len(set(codes)), f"duplicate codes: {sorted(c for c in codes if codes.count(c) > 1)}"
    assert len(names) == len(set(names)), f"duplicate names: {sorted(n for n in names if names.count(n) > 1)}"


def test_registry_loads_every_rule_file():
    from vllmlint.registry import all_rules

    assert sorted(all_rules()) == sorted(load_rule(path)["code"] for path in RULE_PATHS)


@pytest.mark.parametrize("path", RULE_PATHS, ids=RULE_IDS)
def test_fixable_rules_explain_fix_safety(path):
    rule = load_rule(path)
    if rule.get("fix", "none") != "none":
        assert (rule["docs"].get("fix_safety") or "").strip(), "a fixable rule needs docs.fix_safety"


@pytest.mark.parametrize("path", RULE_PATHS, ids=RULE_IDS)
def test_summary_is_one_sentence(path):
    summary = load_rule(path)["summary"].strip()
    assert summary.endswith("."), summary
    assert "\n" not in summary, summary
    assert not re.search(r"[.!?]\s+[A-Z]", summary[:-1]), f"more than one sentence: {summary}"


@pytest.mark.parametrize("path", RULE_PATHS, ids=RULE_IDS)
def test_references_are_urls(path):
    references = load_rule(path)["docs"]["references"]
    assert references, "at least one reference"
    for url in references:
        assert re.match(r"^https://[^\s]+$", url), url


@pytest.mark.parametrize("path", RULE_PATHS, ids=RULE_IDS)
def test_result_rules_have_examples_both_ways(path):
    rule = load_rule(path)
    if rule.get("kind", "result") != "result":
        return
    docs, examples = rule["docs"], rule.get("examples") or {}
    assert docs["example"].strip() and docs["use_instead"].strip()
    assert examples.get("fails"), "at least one failing example"
    assert examples.get("passes"), "at least one passing example"


@pytest.mark.parametrize("path", RULE_PATHS, ids=RULE_IDS)
def test_examples_have_unique_titles_and_sane_counts(path):
    examples = load_rule(path).get("examples") or {}
    titles = []
    for group in ("fails", "passes"):
        for example in examples.get(group) or []:
            assert (example.get("title") or "").strip(), f"an example in {group} has no title"
            titles.append(example["title"])
            if group == "passes":
                assert "count" not in example, f"{example['title']!r}: count means findings, passes have none"
    assert len(titles) == len(set(titles)), "example titles repeat"


@pytest.mark.parametrize("path", RULE_PATHS, ids=RULE_IDS)
def test_snippets_parse_as_yaml(path):
    rule = load_rule(path)
    if rule["code"] in TEMPLATES:
        return
    problems = []
    for label, filename, source, should_parse in snippets(rule):
        if filename.endswith((".sh", ".md")) or is_dockerfile(filename):
            continue  # shell, Markdown and Dockerfile examples are not YAML
        error = yaml_error(filename, source)
        if rule["code"] in DELIBERATELY_BROKEN and not should_parse:
            if error is None:
                problems.append(f"{label}: meant to be broken YAML, but it parses")
        elif error is not None:
            problems.append(f"{label}: line {error.line} col {error.col}: {error.message}")
    assert not problems, "\n".join(problems)


def test_flag_table_is_complete():
    """`data/removed-flags.yaml` feeds VL102 (removed) and VL103 (never existed)."""
    from vllmlint.data import load_yaml_data

    table = load_yaml_data(knowledge_dir() / "removed-flags.yaml")
    removed = [entry["flag"] for entry in table["removed"]]
    never = [entry["flag"] for entry in table["never_existed"]]
    for entry in table["removed"]:
        assert re.match(r"^--[a-z0-9]+(-[a-z0-9]+)*$", entry["flag"]), entry["flag"]
        assert entry["replacement"].strip() and entry["source"].strip(), entry
    for entry in table["never_existed"]:
        assert entry["instead"].strip() and entry["source"].strip(), entry
    assert len(removed) == len(set(removed)) and len(never) == len(set(never)), "a flag is listed twice"
    assert not set(removed) & set(never), "listed as both removed and never existing"


@pytest.mark.parametrize("path", RULE_PATHS, ids=RULE_IDS)
def test_shell_snippets_are_valid_shell(path):
    """`bash -n` only parses, it runs nothing: a .sh example must be a script a shell would accept."""
    import shutil
    import subprocess

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    problems = []
    for label, filename, source, _ in snippets(load_rule(path)):
        if filename.endswith(".sh"):
            result = subprocess.run([bash, "-n"], input=source, capture_output=True, text=True, timeout=10)
            if result.returncode != 0:
                problems.append(f"{label}: {result.stderr.strip()}")
    assert not problems, "\n".join(problems)
