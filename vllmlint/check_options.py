"""The parameters of `vllmlint check`, declared once: `cli.py` builds click's decorators from `CHECK_PARAMS`, and
`parse_check_argv` reads the same table to parse the common command line (`vllmlint [check] PATH... [OPTIONS]`)
without importing click, which costs a fifth of a one-file run.

`parse_check_argv` answers only when it is certain to get what click would get; anything else (another command,
--help, an unknown option, a value click would refuse, combined short options, no path...) is None and the
caller hands the command line to click, which parses it and reports any error exactly as it always has. So this
module has no error message of its own. tests/test_fastcli.py checks both parsers against each other.

Each entry: (declarations as click takes them, keyword arguments of `click.option`). A `type` is data here:
("choice", values), ("path", dir_okay), ("float", min), ("int", min); cli.py turns it into click's type.
"""
from __future__ import annotations

import os
import sys
from typing import Any

from vllmlint.formatters import FORMATS

# The positional argument `paths` first (click.argument), then the options in the order `--help` lists them.
CHECK_PARAMS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("paths",), dict(nargs=-1, type=("path", True))),
    (("--format", "formats"), dict(type=("choice", FORMATS), multiple=True,
     help="Output format [default: text; github under GitHub Actions]. Repeat with --output for several reports "
     "in one run.")),
    (("--output-format", "output_formats"), dict(type=("choice", FORMATS), multiple=True,
     help="Same as --format (ruff's name for it).")),
    (("--output", "-o", "outputs"), dict(type=("path", False), multiple=True,
     help="Write the report to FILE (the folder is created); pairs with the --format before it.")),
    (("--exit-zero",), dict(is_flag=True, help="Exit 0 even when findings are reported (2 still means an error).")),
    (("--show-files",), dict(is_flag=True, help="List the files that would be linted, and exit.")),
    (("--fail-on",), dict(type=("choice", ("error", "warning", "info")),
     help="Exit 1 when a finding is at least this severe [default: warning].")),
    (("--select",), dict(multiple=True, help="Rules to run: codes, names or prefixes (VL1), comma-separated.")),
    (("--ignore",), dict(multiple=True, help="Rules to skip: codes, names or prefixes, comma-separated.")),
    (("--extend-select",), dict(multiple=True, help="Rules to run as well as the selected (or default) ones.")),
    (("--extend-ignore",), dict(multiple=True, help="Rules to skip as well as the ignored ones.")),
    (("--exclude",), dict(multiple=True, help="Globs of files to skip (added to the config file's).")),
    (("--vllm-version",), dict(help="vLLM release assumed where a workload's own release is unknown.")),
    (("--config", "config_path"), dict(type=("path", False), help="Configuration file to use.")),
    (("--no-config",), dict(is_flag=True, help="Ignore configuration files.")),
    (("--stdin-filename",), dict(help="Name to report for input read from `-`, resolved as a path on the command "
     "line.")),
    (("--color",), dict(type=("choice", ("auto", "always", "never")), default="auto", help="Colour in text output.")),
    (("--quiet", "-q"), dict(is_flag=True, help="Only the finding lines: no excerpts, no summary.")),
    (("--show-notes",), dict(is_flag=True, help="List every note about the run (by default, one line per kind).")),
    (("--statistics",), dict(is_flag=True, help="Count findings per rule instead of listing them (text, or JSON with "
     "--format json).")),
    (("--sarif-category",), dict(help="SARIF automationDetails id (leave unset to let the upload action decide).")),
    (("--max-file-size",), dict(type=("float", 0), help="Skip files larger than this many MiB (0: no limit) "
     "[default: 10].")),
    (("--upgrade-to",), dict(metavar="VERSION", help="Report what would break if every workload moved to this vLLM "
     "release.")),
    (("--show-suppressed",), dict(is_flag=True, help="Also list findings hidden by suppressions.")),
    (("--require-suppression-reason/--no-require-suppression-reason",), dict(default=None,
     help="Report suppressions without a `-- reason` (VL004) [default: yes].")),
    (("--baseline", "baseline_path"), dict(type=("path", False),
     help="Report only findings that are not in this baseline file.")),
    (("--write-baseline", "write_baseline_path"), dict(type=("path", False),
     help="Record today's findings in FILE and exit 0.")),
    (("--fix", "apply_fixes"), dict(is_flag=True, help="Apply safe fixes in place, then report what remains.")),
    (("--diff", "show_diff"), dict(is_flag=True, help="Print the fixes as a unified diff; change no file.")),
    (("--unsafe-fixes",), dict(is_flag=True, help="Also apply fixes that change behaviour (see `explain`).")),
    (("--show-fixes",), dict(is_flag=True, help="With --fix or --diff, list the fixes per file and rule (on stderr).")),
    (("--follow-links",), dict(is_flag=True, default=None,
     help="Follow symbolic links that lead out of the given paths (never written by --fix).")),
    (("--require-workloads",), dict(is_flag=True, default=None,
     help="Exit 1 when no vLLM invocation and no Kubernetes or Compose object is found in the given paths.")),
    (("--render",), dict(is_flag=True, default=None,
     help="Run `helm template` on Helm charts and `kustomize build` on kustomizations (when on PATH) and lint the "
     "output: runs a tool on files the linted tree controls; kustomize may fetch remote bases.")),
    (("--helm-values",), dict(multiple=True, type=("path", False), metavar="FILE",
     help="Values file for `helm template` under --render (repeatable).")),
    (("--hf-cache",), dict(is_flag=True, default=None,
     help="Size models the catalog lacks from their config.json in this machine's Hugging Face cache (opt-in: "
     "findings then depend on the machine).")),
    (("--online",), dict(is_flag=True, default=None,
     help="Fetch the config.json of models the catalog lacks from the Hugging Face Hub (needs vllmlint[hub]; "
     "HF_TOKEN, HF_HUB_OFFLINE). Never the default: no network call without it.")),
    (("--no-cache",), dict(is_flag=True, help="Lint everything again: neither read nor write the result cache "
     "(VLLMLINT_CACHE_DIR, else the user cache folder).")),
    (("--jobs", "-j"), dict(type=("int", 1), help="Processes for the rules [default: automatic, 2 or more on large "
     "runs only]; the output is the same whatever the number.")),
)

# The options whose command-line order pairs each --output with the --format before it (`format_order`).
PAIRED = ("formats", "output_formats", "outputs")

# The group's own first words: a command line starting with one of these is not the default command's. COMMANDS
# are the group's subcommands (tests/test_fastcli.py checks them against click's list).
GROUP_WORDS = ("-h", "--help", "-V", "--version")
COMMANDS = ("capacity", "check", "explain", "flag", "rules", "server")


def param_name(declarations: tuple[str, ...]) -> str:
    """The keyword click passes the value as: the declared name, else the first long option's (as click names it)."""
    names = [d for d in declarations if d.isidentifier()]
    if names:
        return names[0]
    first = [d.split("/")[0] for d in declarations if d.startswith("--")][0]
    return first[2:].replace("-", "_").lower()


def defaults() -> dict[str, Any]:
    """What click passes for each parameter not given: () for a multiple, False for a flag, else `default`."""
    out: dict[str, Any] = {}
    for declarations, spec in CHECK_PARAMS:
        if spec.get("multiple") or spec.get("nargs") == -1:
            out[param_name(declarations)] = ()
        else:
            out[param_name(declarations)] = spec.get("default", False if spec.get("is_flag") else None)
    return out


def _option_table() -> dict[str, tuple[str, Any, dict[str, Any]]]:
    """Each option string -> (parameter name, the value a flag stores or None when it takes one, its spec)."""
    table: dict[str, tuple[str, Any, dict[str, Any]]] = {}
    for declarations, spec in CHECK_PARAMS[1:]:
        name = param_name(declarations)
        for declaration in declarations:
            if not declaration.startswith("-"):
                continue
            if "/" in declaration:  # --x/--no-x: a pair of flags
                on, off = declaration.split("/")
                table[on], table[off] = (name, True, spec), (name, False, spec)
            else:
                table[declaration] = (name, True if spec.get("is_flag") else None, spec)
    return table


class _Decline(Exception):
    """Not certain to read the command line as click would: leave it to click."""


def _converted(value: str, kind: Any) -> Any:
    """`value` as click's type would convert it; _Decline where click would refuse it."""
    if kind is None:
        return value
    if kind[0] == "choice":
        if value not in kind[1]:
            raise _Decline
        return value
    if kind[0] == "path":  # click.Path(exists=False, readable=True, dir_okay=kind[1]): os.stat, then its checks
        try:
            mode = os.stat(value).st_mode
        except OSError:
            return value
        except ValueError:
            raise _Decline from None
        import stat

        if (not kind[1] and stat.S_ISDIR(mode)) or not os.access(value, os.R_OK):
            raise _Decline
        return value
    try:  # FloatRange(min=...) / IntRange(min=...): the number, then the closed lower bound
        number = float(value) if kind[0] == "float" else int(value)
    except ValueError:
        raise _Decline from None
    if number < kind[1]:
        raise _Decline
    return number


def _looks_like_a_command(word: str) -> bool:
    """A bare word (no option, no path separator, no suffix) that names nothing on disk."""
    return (word.isidentifier() or word.replace("-", "_").isidentifier()) and not os.path.lexists(word)


def parse_check_argv(argv: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """(the keyword arguments click would pass `check_command`, the `format_order` `_CheckCommand` records) for
    `vllmlint ARGV`, or None when click must read it (see the module's docstring)."""
    if sys.platform.startswith("win") or any(key.startswith("_") and key.endswith("_COMPLETE") and value
                                             for key, value in os.environ.items()):
        return None  # click expands wildcards on Windows and answers shell completion
    args = list(argv)
    if args and args[0] == "check":
        args = args[1:]
    elif not args or args[0] in GROUP_WORDS or args[0] in COMMANDS:
        return None
    elif not args[0].startswith("-") and _looks_like_a_command(args[0]):
        return None  # another command, a typo of one (`vllmlint chek`) or a missing path: click says which
    table = _option_table()
    given: dict[str, list[Any]] = {}
    paths: list[str] = []
    order: list[str] = []
    try:
        while args:
            arg = args.pop(0)
            if arg == "--":
                paths += args
                break
            if arg[:1] != "-" or len(arg) == 1:
                paths.append(arg)
                continue
            option, has_value, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
            if option not in table:
                raise _Decline  # unknown, combined (-qj2), attached (-j2), --help: click's to handle
            name, flag, spec = table[option]
            if flag is not None:
                if has_value:
                    raise _Decline  # `--quiet=1`: click refuses a value for a flag
                given.setdefault(name, []).append(flag)
            else:
                if not has_value:
                    if not args:
                        raise _Decline  # the option lacks its value
                    value = args.pop(0)  # click takes the next word whatever it is (`--select --quiet`)
                given.setdefault(name, []).append(value)
            if name in PAIRED:
                order.append(name)
        if not paths:
            return None
        params = defaults()
        specs = {param_name(declarations): spec for declarations, spec in CHECK_PARAMS}
        for name, values in given.items():
            spec = specs[name]
            if spec.get("multiple"):
                params[name] = tuple(_converted(v, spec.get("type")) for v in values)
            elif isinstance(values[-1], bool):  # a flag, or one of a --x/--no-x pair
                params[name] = values[-1]
            else:
                params[name] = _converted(values[-1], spec.get("type"))  # the last one given, as click keeps
        params["paths"] = tuple(_converted(path, ("path", True)) for path in paths)
    except _Decline:
        return None
    return params, order
