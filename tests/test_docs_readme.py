"""README.md is the user's first stop: it must list every rule, and give the commands CI runs."""
from conftest import ROOT
from vllmlint.registry import all_rules


def test_readme_lists_every_rule():
    readme = (ROOT / "README.md").read_text()
    missing = [r.code for r in all_rules().values() if f"[{r.code}](docs/rules/{r.code}.md) | {r.name} |" not in readme]
    assert not missing, f"add these rules to the README's table: {missing}"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = ci.strip().splitlines()[-1]
    assert command in readme
