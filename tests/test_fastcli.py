"""The console script's fast path (vllmlint/entry.py, check_options.parse_check_argv): it reads the common command
line without click, and must either decline (then click reads it) or get exactly what click's own parsing gets."""
from __future__ import annotations

import gc
import os
import subprocess
import sys

import click
import pytest

from vllmlint.check_options import CHECK_PARAMS, COMMANDS, parse_check_argv
from vllmlint.cli import DefaultGroup, _did_you_mean, cli

from conftest import ROOT

MANIFEST = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


def click_reads(argv: list[str]):
    """(parameters, format order) click passes `check_command` for `vllmlint ARGV`; "other" for another command;
    None where click refuses the command line (a usage error, --help, --version)."""
    try:
        group = cli.make_context("vllmlint", list(argv))
        name, command, rest = cli.resolve_command(group, [*group._protected_args, *group.args])
        if name != "check":
            return "other"
        assert command is not None
        context = command.make_context(name, rest, parent=group)
    except (click.exceptions.ClickException, click.exceptions.Exit, SystemExit):
        return None
    return context.params, context.meta["vllmlint.format_order"]


def _comparable(parsed):
    params, order = parsed
    return repr(sorted(params.items())), order  # repr: 1 and 1.0 differ, nan equals itself


@pytest.fixture
def tree(tmp_path, monkeypatch):
    for name in ("a.yaml", "b.yaml", "-q.yaml"):
        (tmp_path / name).write_text(MANIFEST, encoding="utf-8")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "c.yaml").write_text(MANIFEST, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return tmp_path


def _values(kind):
    """Valid and invalid values for an option of this type."""
    if kind is None:
        return ["VL1", "VL101,VL102", "", "--quiet", "a.yaml", "x=y"]
    if kind[0] == "choice":
        return [*kind[1], kind[1][0].upper(), "bogus", "", "--quiet"]
    if kind[0] == "path":
        return ["out.json", "a.yaml", "folder", "folder/", "", "--quiet", "-", "missing/dir/r.json"]
    if kind[0] == "float":
        return ["0", "1.5", "10", "-1", "-0.0", "nan", "inf", "1e3", "1_0", " 2 ", "x", "", "0x10"]
    return ["1", "2", "0", "-3", "x", "2_0", " 4", "+3", "1.0", ""]


def _matrix() -> list[list[str]]:
    argvs = [
        ["a.yaml"], ["check", "a.yaml"], ["a.yaml", "b.yaml", "folder"], ["-"], ["check", "-"], ["folder/"], ["."],
        ["--", "--quiet"], ["a.yaml", "--", "-q", "--format=json"], ["--", "-q.yaml"], ["-q.yaml"], ["--", "-"],
        ["-", "--stdin-filename", "x.yaml"], ["--stdin-filename=x.yaml", "-"], ["check", "check"],
        ["check", "--", "rules"], ["a.yaml", "rules"], ["--quiet", "a.yaml"], ["-q", "a.yaml"], ["a.yaml", "-q", "-q"],
        # format order: each --output pairs with the --format before it
        ["--format", "json", "-o", "r.json", "--format", "text", "a.yaml"], ["-o", "r.json", "--format", "json", "a.yaml"],
        ["--format=sarif", "--output=r.sarif", "--output-format", "json", "a.yaml"], ["--output-format", "github", "a.yaml"],
        ["--format", "json", "--format", "json", "-o", "1.json", "-o", "2.json", "a.yaml"],
        ["--select", "VL1,VL2", "--select", "VL3", "--ignore", "VL4", "--extend-select=VL5", "a.yaml", "b.yaml"],
        ["--require-suppression-reason", "--no-require-suppression-reason", "a.yaml"],
        ["--no-require-suppression-reason", "a.yaml", "--require-suppression-reason"],
        ["--max-file-size", "-1", "--max-file-size", "2", "a.yaml"], ["--max-file-size", "2", "--max-file-size", "-1", "a.yaml"],
        ["--jobs", "0", "-j", "3", "a.yaml"], ["--no-cache", "--jobs", "1", "a.yaml"], ["--fix", "--diff", "--unsafe-fixes", "a.yaml"],
        ["--color", "always", "--color=never", "a.yaml"], ["--helm-values", "v.yaml", "--helm-values=w.yaml", "--render", "a.yaml"],
        # declined or refused: not certain to read as click would, or click's error
        [], ["check"], ["--quiet"], ["chek"], ["chek", "a.yaml"], ["rules"], ["explain", "VL101"], ["flag", "--model"],
        ["--help"], ["-h"], ["a.yaml", "--help"], ["check", "-h"], ["-V"], ["--version"], ["a.yaml", "-V"], ["nothere"],
        ["nothere.yaml"], ["--frobnicate", "a.yaml"], ["---quiet", "a.yaml"], ["--no-quiet", "a.yaml"], ["-x", "a.yaml"],
        ["-qj2", "a.yaml"], ["-j2", "a.yaml"], ["-oout.json", "a.yaml"], ["-o=out.json", "a.yaml"], ["-q=1", "a.yaml"],
        ["--quiet=1", "a.yaml"], ["--quiet=", "a.yaml"], ["--format"], ["a.yaml", "--format"], ["a.yaml", "-o"],
        ["--form", "json", "a.yaml"], ["--Quiet", "a.yaml"], ["a.yaml", "--"], ["--", "--"], ["--", "--help"],
        [""], ["a.yaml", ""], ["--", ""], ["folder", "-", "a.yaml", "-"],
    ]
    for declarations, spec in CHECK_PARAMS[1:]:
        options = [d for d in declarations if d.startswith("-")]
        for option in [part for d in options for part in d.split("/")]:
            if spec.get("is_flag") or "/" in options[0]:
                argvs += [["a.yaml", option], [option, "a.yaml"], ["a.yaml", option, option], ["a.yaml", f"{option}=1"]]
                continue
            for value in _values(spec.get("type")):
                if option.startswith("--"):
                    argvs += [["a.yaml", option, value], [f"{option}={value}", "a.yaml"], [option, value]]
                else:
                    argvs += [[option, value, "a.yaml"], [f"{option}{value}", "a.yaml"]]
            argvs += [["a.yaml", option]]
    return argvs


MATRIX = _matrix()


def test_the_fast_parser_declines_or_reads_every_command_line_as_click_does(tree):
    read = declined = 0
    for argv in MATRIX:
        fast = parse_check_argv(argv)
        if fast is None:
            declined += 1
            continue
        read += 1
        by_click = click_reads(argv)
        assert by_click not in (None, "other"), argv
        assert _comparable(fast) == _comparable(by_click), argv
    assert read > 300 and declined > 150  # both sides of the matrix are exercised


def test_the_common_command_lines_take_the_fast_path(tree, monkeypatch):
    common = [["a.yaml"], ["check", "a.yaml", "b.yaml"], ["-q", "a.yaml"], ["--no-cache", "--jobs", "1", "a.yaml"],
              ["--format", "json", "-o", "r.json", "a.yaml"], ["--stdin-filename", "x.yaml", "-"], ["folder"],
              ["--select=VL1", "--ignore", "VL101", "--fail-on", "error", "a.yaml"], ["--max-file-size", "0.5", "a.yaml"],
              ["--", "-q.yaml"], ["--no-require-suppression-reason", "a.yaml"], ["--fix", "a.yaml"]]
    for env in ({}, {"GITHUB_ACTIONS": "true"}):
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        for argv in common:
            fast = parse_check_argv(argv)
            assert fast is not None, argv
            assert _comparable(fast) == _comparable(click_reads(argv)), argv
    params, order = parse_check_argv(["--format", "json", "-o", "r.json", "--format", "text", "a.yaml"])
    assert params["formats"] == ("json", "text") and params["outputs"] == ("r.json",)
    assert order == ["formats", "outputs", "formats"]
    params, _ = parse_check_argv(["--max-file-size", "2", "-j", "3", "a.yaml", "--follow-links"])
    assert params["max_file_size"] == 2.0 and params["jobs"] == 3 and params["follow_links"] is True
    assert params["render"] is None and params["quiet"] is False and params["select"] == () and params["color"] == "auto"
    monkeypatch.setenv("_VLLMLINT_COMPLETE", "bash_complete")  # click's shell completion
    assert parse_check_argv(["a.yaml"]) is None


def test_the_fast_parser_knows_the_groups_commands_and_no_option_reads_as_a_typo_of_one():
    context = click.Context(cli)
    assert isinstance(cli, DefaultGroup) and list(COMMANDS) == cli.list_commands(context)
    # DefaultGroup asks `did you mean` of a first word that looks like a command: never of these.
    words = ["-", "--"] + [part for declarations, _ in CHECK_PARAMS[1:] for d in declarations if d.startswith("-")
                           for part in d.split("/")]
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
    ["--format", "json", "--output-format", "json", "bad.yaml"],  # a usage error of the body: exit 2
    ["--select", "VL999", "bad.yaml"], ["--vllm-version", "x", "bad.yaml"], ["--diff", "bad.yaml"],
    ["--format", "junit", "-o", "out/r.xml", "bad.yaml"], ["--stdin-filename", "x.yaml", "-"],
    ["--show-files", "odd\x1b[31mname.yaml"],  # click strips escape sequences from what it echoes to a pipe
])
def test_the_fast_path_prints_what_click_prints_and_imports_no_click(tree, argv):
    (tree / "bad.yaml").write_text(BAD, encoding="utf-8")
    (tree / "odd\x1b[31mname.yaml").write_text(MANIFEST, encoding="utf-8")
    fast_code, fast_out, fast_err, modules = _run(argv, tree, input=BAD.encode())
    assert parse_check_argv(argv) is not None and "click" not in modules and "vllmlint.engine" in modules
    click_code, click_out, click_err, _ = _run(argv, tree, through_click=True, input=BAD.encode())
    assert (fast_code, fast_out, fast_err) == (click_code, click_out, click_err)


def test_other_command_lines_still_run_through_click(tree):
    code, out, err, modules = _run(["rules"], tree)
    assert code == 0 and out.startswith("VL001  syntax-error") and "click" in modules
    code, out, err, modules = _run(["--help"], tree)
    assert code == 0 and out.startswith("Usage: vllmlint [OPTIONS] COMMAND [ARGS]...") and "click" in modules
    code, out, err, _ = _run(["chek"], tree)
    assert code == 2 and err.startswith("vllmlint: error: `chek` is neither a command nor a file or folder (did you "
                                        "mean `check`?)")
    code, out, err, _ = _run(["--jobs", "0", "a.yaml"], tree)  # click's own message for a value it refuses
    assert code == 2 and "Invalid value for '--jobs' / '-j': 0 is not in the range x>=1." in err


def test_the_console_script_is_the_click_free_entry_point():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"]["vllmlint"] == "vllmlint.entry:main"
    assert (ROOT / "vllmlint" / "__main__.py").read_text(encoding="utf-8") == "from vllmlint.entry import main\n\nmain()\n"


def _ended(monkeypatch, capsys, raised: BaseException, through_click: bool):
    """(exit code, stderr) when `check`'s body raises `raised`, run by click's standalone main or the fast path."""
    from vllmlint import cli as cli_module
    from vllmlint import entry

    def body(**_):
        raise raised

    monkeypatch.setattr(sys, "stdout", sys.stdout)  # restored after a broken pipe replaced them
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    monkeypatch.setattr(cli_module, "run_check", body)
    monkeypatch.setattr("vllmlint.check.run_check", body)
    with pytest.raises(SystemExit) as exit_info:
        if through_click:
            cli.main(["a.yaml"], prog_name="vllmlint")
        else:
            parsed = parse_check_argv(["a.yaml"])
            assert parsed is not None
            entry._run_check(*parsed)
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
