"""The lint command line: declared once (check_options.CHECK_PARAMS), read by one parser (check_options.parse) that
both ways in use: the console script's fast path (vllmlint/entry.py, without click) and click's `check` (cli.py)."""
from __future__ import annotations

import gc
import os
import subprocess
import sys

import click
import pytest

from vllmlint.check_options import CHECK_PARAMS, COMMANDS, UsageError, help_text, parse
from vllmlint.cli import DefaultGroup, _did_you_mean, cli

from conftest import ROOT

MANIFEST = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


def parse_check_argv(argv: list[str]):
    return parse(argv[1:] if argv[:1] == ["check"] else argv)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    for name in ("a.yaml", "b.yaml", "-q.yaml"):
        (tmp_path / name).write_text(MANIFEST, encoding="utf-8")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "c.yaml").write_text(MANIFEST, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return tmp_path


def test_click_hands_check_its_arguments_unparsed(tree):
    """click's `check` gets the words as typed, `--` and `--help` included: the parser is check_options.parse."""
    for argv in (["--", "-q.yaml"], ["-q", "--", "--help"], ["--format=json", "-o", "r.json", "a.yaml"], []):
        group = cli.make_context("vllmlint", ["check", *argv])
        name, command, rest = cli.resolve_command(group, [*group._protected_args, *group.args])
        assert name == "check" and command is not None
        assert command.make_context(name, rest, parent=group).params == {"argv": argv}


def test_the_parser_reads_values_order_and_separators(tree):
    params = parse(["--format", "json", "-o", "r.json", "--output-format", "text", "a.yaml"])
    assert params.formats == ("json", "text") and params.outputs == ("r.json",)
    assert params.format_order == ["formats", "outputs", "formats"]
    params = parse(["--max-file-size", "2", "-j", "3", "a.yaml", "--follow-links"])
    assert params.max_file_size == 2.0 and params.jobs == 3 and params.follow_links is True
    assert params.render is None and params.quiet is False and params.select == () and params.color == "auto"
    assert parse(["-qj2", "a.yaml"]).jobs == 2 and parse(["-qj2", "a.yaml"]).quiet is True
    assert parse(["-oout.json", "a.yaml"]).outputs == ("out.json",)
    assert parse(["--", "-q.yaml", "--quiet"]).paths == ("-q.yaml", "--quiet") and parse(["-"]).paths == ("-",)
    assert parse([]).paths == (".",) and parse(["-q"]).paths == (".",)  # ruff's habit: the current folder
    assert parse(["--select", "--quiet", "a.yaml"]).select == ("--quiet",)  # a value is the next word, whatever
    assert parse(["--jobs", "1", "--jobs", "4", "a.yaml"]).jobs == 4  # the last one counts
    assert parse(["a.yaml", "--help"]) is None and parse(["-h"]) is None


@pytest.mark.parametrize("option", ["--render", "--follow-links", "--online", "--hf-cache", "--require-workloads",
                                    "--require-suppression-reason"])
def test_switches_take_a_no_form_and_true_or_false(tree, option):
    name = option[2:].replace("-", "_")
    assert parse([option])[name] is True and parse(["--no-" + option[2:]])[name] is False
    assert parse([])[name] is None  # neither: the configuration decides
    assert parse([option + "=false"])[name] is False and parse([option + "=true"])[name] is True
    assert parse([option, "--no-" + option[2:]])[name] is False  # the last one counts
    with pytest.raises(UsageError, match="takes no value"):
        parse([option + "=maybe"])


@pytest.mark.parametrize("argv, message", [
    (["--frobnicate", "a.yaml"], "no such option --frobnicate"), (["--quiet=1"], "--quiet takes no value"),
    (["-q=1"], "-q takes no value"),
    (["--format"], "--format needs a value"), (["--format", "bogus"], "--format 'bogus': use one of text"),
    (["--jobs", "0"], "-j 0: must be at least 1".replace("-j", "--jobs")), (["-j", "x"], "-j 'x': not a whole number"),
    (["--max-file-size", "nan"], "must be at least 0"), (["-o", "folder"], "-o folder: is a folder"),
    (["--Quiet"], "no such option --Quiet (did you mean `--quiet`?)"), (["-x"], "no such option -x"),
])
def test_a_bad_command_line_is_one_usage_error(tree, argv, message):
    with pytest.raises(UsageError) as error:
        parse(argv)
    assert message in str(error.value)


def test_help_lists_every_option_and_every_command():
    text = help_text(width=200)
    for param in CHECK_PARAMS:
        for option in param.options:
            assert option in text, option
    for command in COMMANDS:
        assert f"  {command} " in text
    assert "--format [text|json|sarif|github|junit|concise|full]" in text
    assert "--output-format [text|json|sarif|github|junit|concise|full]" in text
    assert "--render / --no-render" in text


def test_the_parser_knows_the_groups_commands_and_no_option_reads_as_a_typo_of_one():
    context = click.Context(cli)
    assert isinstance(cli, DefaultGroup) and list(COMMANDS) == cli.list_commands(context)
    # One declaration: each command's click command is where check_options.COMMANDS says, under its name, and
    # click knows no command the declaration does not list.
    for name in COMMANDS:
        command = cli.get_command(context, name)
        assert isinstance(command, click.Command) and command.name == name, name
    assert set(cli.commands) == set(COMMANDS)
    # DefaultGroup asks `did you mean` of a first word that looks like a command: never of these.
    words = ["-", "--"] + [o for param in CHECK_PARAMS for o in param.options]
    assert [w for w in words if _did_you_mean(w, list(COMMANDS))] == []


def _run(argv, cwd, through_click=False, input=None):
    env = dict(os.environ, NO_COLOR="1")
    env.pop("GITHUB_ACTIONS", None)
    code = ("import sys\nfrom vllmlint.cli import main\nsys.argv[0] = 'vllmlint'\nmain()\n" if through_click else
            "import sys, runpy\nsys.argv[0] = 'vllmlint'\ntry:\n    runpy.run_module('vllmlint', run_name='__main__')\n"
            "finally:\n    print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, env=env, capture_output=True, input=input,
                          timeout=120)
    err = proc.stderr.decode()
    modules = set()
    if not through_click:
        err, _, listed = err.rpartition("MODULES ")
        modules = set(listed.split())
    return proc.returncode, proc.stdout.decode(), err, modules


BAD = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: llm}\nspec:\n  template:\n    spec:\n      containers:\n"
       "      - name: vllm\n        image: vllm/vllm-openai:v0.10.0\n        args: [--model, m, --disable-log-requests]\n")


@pytest.mark.parametrize("argv", [
    ["bad.yaml"], ["-q", "bad.yaml"], ["--format", "json", "bad.yaml", "a.yaml"], ["--statistics", "bad.yaml"],
    ["--show-files", "bad.yaml", "folder", "nothere.yaml"], ["bad.yaml", "nothere.yaml"],
    ["--format", "json", "--output-format", "json", "bad.yaml"], ["--jobs", "0", "bad.yaml"], ["--frobnicate"],
    ["--help"], ["--statistics", "--format", "sarif", "bad.yaml"],  # usage errors: exit 2
    ["--select", "VL999", "bad.yaml"], ["--vllm-version", "x", "bad.yaml"], ["--diff", "bad.yaml"],
    ["--format", "junit", "-o", "out/r.xml", "bad.yaml"], ["--stdin-filename", "x.yaml", "-"],
    ["--show-files", "odd\x1b[31mname.yaml"],  # click strips escape sequences from what it echoes to a pipe
])
def test_the_fast_path_prints_what_click_prints_and_imports_no_click(tree, argv):
    (tree / "bad.yaml").write_text(BAD, encoding="utf-8")
    (tree / "odd\x1b[31mname.yaml").write_text(MANIFEST, encoding="utf-8")
    fast_code, fast_out, fast_err, modules = _run(argv, tree, input=BAD.encode())
    assert "click" not in modules
    assert "vllmlint.engine" in modules or fast_code != 1
    click_code, click_out, click_err, _ = _run(argv, tree, through_click=True, input=BAD.encode())
    assert (fast_code, fast_out, fast_err) == (click_code, click_out, click_err)


def test_other_command_lines_still_run_through_click(tree):
    code, out, err, modules = _run(["rules"], tree)
    assert code == 0 and out.startswith("CODE   NAME") and "\nVL001  syntax-error" in out and "click" in modules
    code, out, err, modules = _run(["--help"], tree)
    assert code == 0 and out.startswith("Usage: vllmlint [OPTIONS] [PATHS]...") and "click" not in modules
    assert "--min-level" in out and "Commands:" in out
    code, out, err, _ = _run(["chek"], tree)
    assert code == 2 and err.startswith("vllmlint: error: `chek` is neither a command nor a file or folder (did you "
                                        "mean `check`?)")
    code, out, err, _ = _run(["--jobs", "0", "a.yaml"], tree)
    assert code == 2 and err == "vllmlint: error: --jobs 0: must be at least 1\n"


def test_the_console_script_is_the_click_free_entry_point():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"]["vllmlint"] == "vllmlint.entry:main"
    assert (ROOT / "vllmlint" / "__main__.py").read_text(encoding="utf-8") == "from vllmlint.entry import main\n\nmain()\n"


def _ended(monkeypatch, capsys, raised: BaseException, through_click: bool):
    """(exit code, stderr) when `check`'s body raises `raised`, run by click's standalone main or the fast path."""
    from vllmlint import entry

    def body(*_):
        raise raised

    monkeypatch.setattr(sys, "stdout", sys.stdout)  # restored after a broken pipe replaced them
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    monkeypatch.setattr("vllmlint.check.run_check", body)
    with pytest.raises(SystemExit) as exit_info:
        if through_click:
            cli.main(["a.yaml"], prog_name="vllmlint")
        else:
            entry._run_check(["a.yaml"])
    return exit_info.value.code, capsys.readouterr().err


@pytest.mark.parametrize("raised", [KeyboardInterrupt(), EOFError(), BrokenPipeError(32, "Broken pipe")])
def test_an_interrupt_or_a_closed_pipe_ends_the_fast_path_as_click_ends_a_command(tree, monkeypatch, capsys, raised):
    fast = _ended(monkeypatch, capsys, raised, through_click=False)
    assert fast == _ended(monkeypatch, capsys, raised, through_click=True)
    assert fast == ((1, "") if isinstance(raised, OSError) else (1, "\nAborted!\n"))


def test_a_bug_of_ours_on_the_fast_path_is_one_line_and_exit_2(tree, monkeypatch, capsys):
    from vllmlint import engine, entry

    def broken(self):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(engine.Linter, "build", broken)
    monkeypatch.setattr("sys.argv", ["vllmlint", "a.yaml"])
    monkeypatch.setattr("vllmlint.cli.main", lambda: pytest.fail("the fast path went to click"))
    monkeypatch.setattr("atexit.register", lambda function: None)  # the console script's GC settings, undone
    before = gc.get_threshold()
    try:
        with pytest.raises(SystemExit) as exit_info:
            entry.main()
    finally:
        gc.set_threshold(*before)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.startswith("vllmlint: internal error: RuntimeError: simulated bug") and "Traceback" not in err


def test_the_command_line_modules_import_in_one_direction():
    """entry (the console script) -> cli (click) -> check (the command's body) -> check_options (the declaration),
    counting imports inside functions too: no module of the command line imports one above it (issue 23 named a
    cli/entry circle)."""
    import ast

    order = ["entry", "cli", "check", "check_options"]
    for rank, name in enumerate(order):
        tree = ast.parse((ROOT / "vllmlint" / f"{name}.py").read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        above = {f"vllmlint.{other}" for other in order[:rank]}
        assert not imported & above, (name, imported & above)


def test_shell_completion_offers_the_declared_options():
    from click.shell_completion import ShellComplete

    complete = ShellComplete(cli, {}, "vllmlint", "_VLLMLINT_COMPLETE")
    for args in ([], ["check"], ["a.yaml"]):
        offered = [item.value for item in complete.get_completions(args, "--min")]
        assert offered == ["--min-level"], args
    assert "--no-render" in [item.value for item in complete.get_completions(["check"], "--no-r")]
    assert [item.type for item in complete.get_completions(["check"], "fix")] == ["file"]
