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


def test_readme_rule_table_is_what_docsgen_writes():
    from vllmlint_dev import docsgen

    readme = (ROOT / "README.md").read_text()
    assert docsgen.readme_with_table(readme) == readme, "run `python -m vllmlint_dev.docsgen` and commit README.md"
    assert docsgen.readme_table(list(all_rules().values())) in readme


def test_docsgen_check_reports_a_stale_readme_table_and_write_repairs_it(tmp_path):
    import subprocess
    import sys

    readme = tmp_path / "README.md"
    original = (ROOT / "README.md").read_text()
    readme.write_text(original.replace("| [VL609](docs/rules/VL609.md)", "| [VL609](docs/rules/VL608.md)"))

    from vllmlint_dev.docsgen import write

    pages = tmp_path / "pages"
    write(pages)  # the pages are up to date: only the README's table is not

    def docsgen(*args):
        proc = subprocess.run([sys.executable, "-m", "vllmlint_dev.docsgen", str(pages), *args, "--readme", str(readme)],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr

    code, _, err = docsgen("--check")
    assert code == 1 and f"{readme}: stale rule table" in err
    code, out, _ = docsgen()
    assert code == 0 and f"{readme}: rule table rewritten" in out
    assert readme.read_text() == original
    assert docsgen("--check")[0] == 0
    readme.write_text("# no markers\n")
    code, _, err = docsgen("--check")
    assert code == 2 and "no single" in err
