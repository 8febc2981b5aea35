"""The command line of `vllmlint [check]`, declared once (`CHECK_PARAMS`) and read by one parser (`parse`).

The console script (entry.py) calls `parse` directly, without click, which costs a fifth of a one-file run; click's
`check` command (cli.py) hands its raw arguments to the same `parse`, so both ways in read a command line alike by
construction: there is no second parser to keep equal. `help_text` writes `vllmlint --help` (the group's commands
and the lint options) and `vllmlint check --help` from the same table.

Each `Param`: its option strings, the keyword `run_check` gets, its kind, a converter (our own functions: a bad
value is a usage error with the same message whichever way in) and the help line.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from vllmlint.records import dataclass

from vllmlint.formatters import FORMATS

OUTPUT_FORMATS = (*FORMATS, "concise", "full")  # concise/full: ruff's names for the text format's two forms


class UsageError(Exception):
    """A command line `check` cannot run: one line, exit 2."""


@dataclass(frozen=True)
class Param:
    options: tuple[str, ...]  # "--format", "-o"; a switch lists its on form: `--render` (and `--no-render`)
    name: str  # the keyword `run_check` receives
    kind: str  # "flag" (True when given), "switch" (--x/--no-x, None when neither), "value", "multi" (repeatable)
    help: str
    convert: Callable[[str, str], Any] | None = None  # (value, option) -> value; raises UsageError
    default: Any = None
    metavar: str = "TEXT"
    choices: tuple[str, ...] = ()  # shown in --help as [a|b|c]


def _choice(values: tuple[str, ...]) -> Callable[[str, str], str]:
    def convert(value: str, option: str) -> str:
        if value not in values:
            raise UsageError(f"{option} {value!r}: use one of {', '.join(values)}")
        return value
    return convert


def _file(value: str, option: str) -> str:
    """A file to write or read: anything but an existing folder."""
    if value and os.path.isdir(value):
        raise UsageError(f"{option} {value}: is a folder, give a file")
    return value


def _number(kind: type, low: float) -> Callable[[str, str], Any]:
    def convert(value: str, option: str) -> Any:
        try:
            number = kind(value)
        except ValueError:
            raise UsageError(f"{option} {value!r}: not a {'whole ' if kind is int else ''}number") from None
        if not number >= low:  # also refuses nan
            raise UsageError(f"{option} {value}: must be at least {low:g}")
        return number
    return convert


LEVELS = ("error", "warning", "info")
_P = Param
CHECK_PARAMS: tuple[Param, ...] = (
    _P(("--format", "--output-format"), "formats", "multi", "Output format [default: text (full); github under "
       "GitHub Actions]; concise: one line per finding. Repeat with --output for several reports in one run.",
       _choice(OUTPUT_FORMATS), metavar="FORMAT", choices=OUTPUT_FORMATS),
    _P(("--output", "-o"), "outputs", "multi", "Write the report to FILE (the folder is created); pairs with the "
       "--format before it.", _file, metavar="FILE"),
    _P(("--exit-zero",), "exit_zero", "flag", "Exit 0 even when findings are reported (2 still means an error)."),
    _P(("--show-files",), "show_files", "flag", "List the files that would be linted, and exit."),
    _P(("--fail-on",), "fail_on", "value", "Exit 1 when a finding is at least this severe [default: warning].",
       _choice(LEVELS), metavar="LEVEL", choices=LEVELS),
    _P(("--min-level",), "min_level", "value", "Show only findings at least this severe [default: info, all]; "
       "the exit code still follows --fail-on.", _choice(LEVELS), metavar="LEVEL", choices=LEVELS),
    _P(("--select",), "select", "multi", "Rules to run: codes, names or prefixes (VL1), comma-separated."),
    _P(("--ignore",), "ignore", "multi", "Rules to skip: codes, names or prefixes, comma-separated."),
    _P(("--extend-select",), "extend_select", "multi", "Rules to run as well as the selected (or default) ones."),
    _P(("--extend-ignore",), "extend_ignore", "multi", "Rules to skip as well as the ignored ones."),
    _P(("--exclude",), "exclude", "multi", "Globs of files to skip (added to the config file's)."),
    _P(("--vllm-version",), "vllm_version", "value", "vLLM release assumed where a workload's own release is unknown.",
       metavar="VERSION"),
    _P(("--config",), "config_path", "value", "Configuration file to use.", _file, metavar="FILE"),
    _P(("--no-config",), "no_config", "flag", "Ignore configuration files."),
    _P(("--context",), "context", "multi", "Lint this folder too, as read-only context: cross-file rules see its "
       "files, but findings, suppressions and fixes are only those of PATHS (the pre-commit hook's `--context .`).",
       metavar="DIR"),
    _P(("--stdin-filename",), "stdin_filename", "value", "Name to report for input read from `-`, resolved as a "
       "path on the command line.", metavar="NAME"),
    _P(("--color",), "color", "value", "Colour in text output (auto: on a terminal; NO_COLOR and FORCE_COLOR are "
       "honoured).", _choice(("auto", "always", "never")), default="auto", metavar="WHEN",
       choices=("auto", "always", "never")),
    _P(("--quiet", "-q"), "quiet", "flag", "Only the finding lines: no excerpts, no summary."),
    _P(("--show-notes",), "show_notes", "flag", "List every note about the run (by default, one line per kind)."),
    _P(("--statistics",), "statistics", "flag", "Count findings per rule instead of listing them (text, or JSON "
       "with --format json)."),
    _P(("--sarif-category",), "sarif_category", "value", "SARIF automationDetails id (leave unset to let the upload "
       "action decide).", metavar="ID"),
    _P(("--max-file-size",), "max_file_size", "value", "Skip files larger than this many MiB (0: no limit) "
       "[default: 10].", _number(float, 0), metavar="MIB"),
    _P(("--upgrade-to",), "upgrade_to", "value", "Report what would break if every workload moved to this vLLM "
       "release.", metavar="VERSION"),
    _P(("--show-suppressed",), "show_suppressed", "flag", "Also list findings hidden by suppressions."),
    _P(("--require-suppression-reason",), "require_suppression_reason", "switch", "Report suppressions without a "
       "`-- reason` (VL004) [default: yes]."),
    _P(("--baseline",), "baseline_path", "value", "Report only findings that are not in this baseline file.",
       _file, metavar="FILE"),
    _P(("--write-baseline",), "write_baseline_path", "value", "Record today's findings in FILE and exit 0.",
       _file, metavar="FILE"),
    _P(("--fix",), "apply_fixes", "flag", "Apply safe fixes in place, then report what remains."),
    _P(("--diff",), "show_diff", "flag", "Print the fixes as a unified diff; change no file."),
    _P(("--unsafe-fixes",), "unsafe_fixes", "flag", "Also apply fixes that change behaviour (see `explain`)."),
    _P(("--show-fixes",), "show_fixes", "flag", "With --fix or --diff, list the fixes per file and rule (on stderr)."),
    _P(("--follow-links",), "follow_links", "switch", "Follow symbolic links that lead out of the given paths "
       "(never written by --fix)."),
    _P(("--require-workloads",), "require_workloads", "switch", "Exit 1 when no vLLM invocation and no Kubernetes "
       "or Compose object is found in the given paths."),
    _P(("--render",), "render", "switch", "Run `helm template` on Helm charts (when on PATH) and lint the "
       "output: runs a tool on files the linted tree controls. Kustomize folders are always read natively."),
    _P(("--helm-values",), "helm_values", "multi", "Values file for `helm template` under --render (repeatable).",
       _file, metavar="FILE"),
    _P(("--hf-cache",), "hf_cache", "switch", "Size models the catalog lacks from their config.json in this "
       "machine's Hugging Face cache (opt-in: findings then depend on the machine)."),
    _P(("--online",), "online", "switch", "Fetch the config.json of models the catalog lacks from the Hugging Face "
       "Hub (needs huggingface_hub: the `hub` extra; HF_TOKEN, HF_HUB_OFFLINE). Never the default: no network call without it."),
    _P(("--no-cache",), "no_cache", "flag", "Lint everything again: neither read nor write the result cache "
       "(VLLMLINT_CACHE_DIR, else the user cache folder)."),
    _P(("--jobs", "-j"), "jobs", "value", "Processes for the rules [default: automatic, 2 or more on large runs "
       "only]; the output is the same whatever the number.", _number(int, 1), metavar="N"),
)

# The options whose command-line order pairs each --output with the --format before it (`format_order`).
PAIRED = ("formats", "outputs")

# The group's own first words, and its subcommands: the one list of them. Each has its one-line help and the click
# command that runs it (`module:attribute`, imported only when that command runs: cli.DefaultGroup). A command line
# starting with one of them is not the default command's.
GROUP_WORDS = ("-h", "--help", "-V", "--version")
COMMANDS = {
    "capacity": ("Estimate GPU memory and KV-cache capacity for a model on a GPU.", "vllmlint.commands.capacity:command"),
    "check": ("Lint PATHS (files, folders, or - for standard input) [the default].", "vllmlint.cli:check_command"),
    "explain": ("Print a rule's documentation (by code or name).", "vllmlint.cli:explain_command"),
    "flag": ("What vllmlint knows of a vLLM flag, across releases.", "vllmlint.commands.flag:command"),
    "rules": ("List every rule: code, name, default severity, fixable, summary.", "vllmlint.cli:rules_command"),
    # the language server: pygls is imported only when it runs
    "server": ("Run the language server (LSP) on standard input/output.", "vllmlint.server.command:command"),
}
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off", "")


class Args(dict):
    """The parsed command line: each parameter's value by name (`args.quiet`), plus `format_order`."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def defaults() -> Args:
    """Every parameter's value when not given: () for a repeatable option, False for a flag, else `default`."""
    args = Args(paths=(), format_order=[])
    for param in CHECK_PARAMS:
        args[param.name] = () if param.kind == "multi" else False if param.kind == "flag" else param.default
    return args


def _table() -> dict[str, tuple[Param, bool | None]]:
    """Each option string -> (its parameter, the value a flag or switch form stores; None when it takes a value)."""
    table: dict[str, tuple[Param, bool | None]] = {}
    for param in CHECK_PARAMS:
        for option in param.options:
            table[option] = (param, True if param.kind in ("flag", "switch") else None)
        if param.kind == "switch":
            table["--no-" + param.options[0][2:]] = (param, False)
    return table


def parse(argv: list[str]) -> Args | None:
    """`vllmlint [check] ARGV`'s parameters, or None for `--help` (the caller prints `help_text()`).
    Raises UsageError. No path: `.` (as ruff lints the current folder)."""
    args = defaults()
    table = _table()
    given: dict[str, list[Any]] = {}
    paths: list[str] = []
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            paths += rest
            break
        if arg[:1] != "-" or arg == "-":
            paths.append(arg)
            continue
        if arg in ("-h", "--help"):
            return None
        if arg.startswith("--"):
            option, has_value, value = arg.partition("=")
        else:  # `-q`, `-j2`, `-qj2`: the first letter, then a value or more short flags
            option, value = arg[:2], arg[2:]
            has_value = "=" if value else ""
            if value and option in table and table[option][1] is None:
                value = value.removeprefix("=")
            elif value and not value.startswith("="):  # `-q=1` stays whole: a flag takes no value
                rest.insert(0, "-" + value)
                has_value, value = "", ""
        if option not in table:
            raise UsageError(f"no such option {option}{_did_you_mean(option, list(table))}: see `vllmlint --help`")
        param, stored = table[option]
        if stored is not None:
            if has_value:
                if param.kind != "switch" or value.lower() not in _TRUE + _FALSE:
                    raise UsageError(f"{option} takes no value" + (" (or true/false)" if param.kind == "switch"
                                                                    else ""))
                stored = (value.lower() in _TRUE) == stored  # `--render=false`, `--no-render=true`
            given.setdefault(param.name, []).append(stored)
        else:
            if not has_value:
                if not rest:
                    raise UsageError(f"{option} needs a value")
                value = rest.pop(0)
            given.setdefault(param.name, []).append(param.convert(value, option) if param.convert else value)
        if param.name in PAIRED:
            args["format_order"].append(param.name)
    for name, values in given.items():
        args[name] = tuple(values) if isinstance(args[name], tuple) else values[-1]  # the last one given counts
    args["paths"] = tuple(paths) or (".",)
    return args


def _did_you_mean(word: str, choices: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def looks_like_a_command(word: str) -> bool:
    """A bare word (no option, no path separator, no suffix) that names nothing on disk."""
    return (word.isidentifier() or word.replace("-", "_").isidentifier()) and not os.path.lexists(word)


def help_text(group: bool = True, width: int | None = None) -> str:
    """`vllmlint --help` (group: the commands too) or `vllmlint check --help`, in click's layout."""
    import shutil
    import textwrap

    width = min(width or shutil.get_terminal_size((80, 24)).columns, 100) - 2
    rows: list[tuple[str, str]] = []
    for param in CHECK_PARAMS:
        longs = [o for o in param.options if o.startswith("--")]
        names = ", ".join([o for o in param.options if not o.startswith("--")] + longs[:1])
        value = ""
        if param.kind == "switch":
            names += " / --no-" + param.options[0][2:]
        elif param.kind in ("value", "multi"):
            value = " [" + "|".join(param.choices) + "]" if param.choices else " " + param.metavar
        rows.append((names + value, param.help))
        rows += [(alias + value, f"Same as {longs[0]}.") for alias in longs[1:]]  # --output-format: ruff's name
    rows.append(("-h, --help", "Show this message and exit."))
    if group:
        rows.append(("-V, --version", "Show the version and exit."))
    left = min(max(len(name) for name, _ in rows) + 2, 36)

    def table(items: list[tuple[str, str]]) -> list[str]:
        lines = []
        for name, text in items:
            body = textwrap.wrap(text, max(width - left - 2, 30)) or [""]
            if len(name) + 2 > left:
                lines += [f"  {name}", *[" " * (left + 2) + line for line in body]]
            else:
                lines += [f"  {name:<{left}}{body[0]}", *[" " * (left + 2) + line for line in body[1:]]]
        return lines

    usage = ("Usage: vllmlint [OPTIONS] [PATHS]...\n       vllmlint COMMAND [ARGS]..." if group else
             "Usage: vllmlint check [OPTIONS] [PATHS]...")
    out = [usage, "",
           "  Lint vLLM deployments: Kubernetes manifests, Compose files, shell scripts and Markdown that start vLLM.",
           "", "  PATHS: files, folders, or - for standard input [default: .]. Exit codes: 0 clean, 1 findings at",
           "  or above --fail-on, 2 usage or internal error.", "", "Options:", *table(rows)]
    if group:
        out += ["", "Commands:", *table([(name, text) for name, (text, _) in COMMANDS.items()])]
    return "\n".join(out) + "\n"
