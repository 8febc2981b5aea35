"""The rule documentation pages in docs/rules/: current with the rule YAML, complete, and where SARIF points."""
from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest

from vllmlint import registry
from vllmlint_dev import docsgen
from vllmlint.formatters import sarif
from vllmlint.formatters.rule_docs import help_markdown

from conftest import ROOT

COMMITTED = ROOT / "docs" / "rules"
REGENERATE = "run `python -m vllmlint_dev.docsgen` and commit docs/rules/"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("rules-docs")
    docsgen.write(out)
    return out


def test_committed_pages_match_the_rule_files(generated):
    fresh = {p.name: p.read_text(encoding="utf-8") for p in generated.iterdir()}
    committed = {p.name: p.read_text(encoding="utf-8") for p in COMMITTED.glob("*.md")} if COMMITTED.is_dir() else {}
    missing = sorted(set(fresh) - set(committed))
    extra = sorted(set(committed) - set(fresh))
    stale = sorted(name for name in set(fresh) & set(committed) if fresh[name] != committed[name])
    assert not (missing or extra or stale), (
        f"docs/rules/ is out of date with rules/*.yaml (missing {missing}, extra {extra}, stale {stale}): {REGENERATE}")


def test_every_rule_has_a_page_and_an_index_row(generated):
    rules = registry.all_rules()
    assert rules
    index = (generated / "README.md").read_text(encoding="utf-8")
    linked = re.findall(r"^\| \[(VL\d+)\]\((VL\d+\.md)\) \|", index, flags=re.MULTILINE)
    assert [code for code, _ in linked] == list(rules), "one index row per rule, in code order"
    for code, target in linked:
        assert target == f"{code}.md" and (generated / target).is_file()
    assert f"{len(rules)} rules." in index


def test_each_page_has_the_header_and_the_rule_documentation(generated):
    for rule in registry.all_rules().values():
        page = (generated / f"{rule.code}.md").read_text(encoding="utf-8")
        assert page.splitlines()[2] == f"# {rule.code} {rule.name}"
        assert f"| Default severity | {rule.severity.label} |" in page
        assert f"| Enabled by default | {'yes' if rule.enabled else 'no'}" in page
        assert f"rules/{rule.path.name}" in page
        for tag in rule.tags:
            assert f"`{tag}`" in page
        # The page body is the shared rendering, so explain, SARIF help and the page say the same.
        assert page.endswith(help_markdown(rule))
        for key in ("example", "use_instead"):
            snippet = rule.docs[key].strip("\n").rstrip()
            assert snippet, f"{rule.code} has no docs.{key}"
            assert f"\n{snippet}\n```" in page, f"{rule.code}: docs.{key} is not shown as a code block"


def test_header_says_off_by_default_and_unsafe_fix():
    base = registry.rule("VL101")
    odd = dataclasses.replace(base, code="VL999", enabled=False, fix="unsafe", tags=[],
                              summary="A summary with a | pipe.")
    page = docsgen.rule_page(odd)
    assert "| Enabled by default | no (select it: `--select VL999`) |" in page
    assert "| Fixable | yes (unsafe" in page
    assert "| Tags | - |" in page
    row = [line for line in docsgen.index_page([base, odd]).splitlines() if line.startswith("| [VL999]")]
    assert row == ["| [VL999](VL999.md) | deprecated-entrypoint | warning | unsafe | *off* | A summary with a \\| pipe. |"]


def test_sarif_names_no_address_that_does_not_exist():
    """vllmlint is not published: the SARIF log links nowhere (no helpUri, no informationUri) and carries each
    rule's documentation in `help`; the committed page of every rule exists for `vllmlint explain`'s readers."""
    import json

    from vllmlint.formatters import Report

    log = json.loads(sarif.render(Report(rules=list(registry.all_rules().values()))))
    driver = log["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver and all("helpUri" not in rule for rule in driver["rules"])
    assert all(rule["help"]["markdown"] for rule in driver["rules"])
    for rule in registry.all_rules().values():
        assert (ROOT / "docs" / "rules" / docsgen.page_name(rule.code)).is_file(), REGENERATE


def run_docsgen(*args):
    proc = subprocess.run([sys.executable, "-m", "vllmlint_dev.docsgen", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def test_check_reports_stale_missing_and_extra_pages_and_write_repairs_them(tmp_path):
    code, _, _ = run_docsgen(tmp_path)
    assert code == 0
    assert run_docsgen("--check", tmp_path)[0] == 0

    first, second = list(registry.all_rules())[:2]
    first_page = tmp_path / f"{first}.md"
    first_page.write_text(first_page.read_text(encoding="utf-8") + "hand edited\n", encoding="utf-8")
    (tmp_path / f"{second}.md").unlink()
    (tmp_path / "VL999.md").write_text(docsgen.GENERATED_NOTE.format(source="rules/VL999-gone.yaml") + "\n",
                                       encoding="utf-8")  # a page of a rule that was removed since
    (tmp_path / "notes.txt").write_text("not ours\n", encoding="utf-8")

    code, _, err = run_docsgen("--check", tmp_path)
    assert code == 1
    assert f"{first}.md: stale" in err
    assert f"{second}.md: missing" in err
    assert "VL999.md: extra" in err
    assert "notes.txt" not in err
    assert "python -m vllmlint_dev.docsgen" in err
    assert first_page.read_text(encoding="utf-8").endswith("hand edited\n")  # --check writes nothing

    code, out, _ = run_docsgen(tmp_path)
    assert code == 0 and "3 page(s)" in out
    assert run_docsgen("--check", tmp_path)[0] == 0
    assert not (tmp_path / "VL999.md").exists()
    assert (tmp_path / "notes.txt").exists()  # files the generator does not own are left alone


def test_check_on_the_checkout_uses_docs_rules_by_default():
    code, _, err = run_docsgen("--check")
    assert code == 0, f"{err}\n{REGENERATE}"


def test_write_refuses_to_replace_files_it_did_not_write(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# My project\n", encoding="utf-8")
    code, _, err = run_docsgen(tmp_path)
    assert code == 2 and "README.md not written by vllmlint_dev.docsgen" in err
    assert readme.read_text(encoding="utf-8") == "# My project\n"
    assert not list(tmp_path.glob("VL*.md"))
