"""Command line: `vllmlint PATH...` lints; `vllmlint rules`, `vllmlint explain CODE` document the rules.

Exit codes: 0 no finding at or above --fail-on; 1 findings; 2 usage error or internal error.
"""
from __future__ import annotations

import click

from vllmlint import __version__
from vllmlint.check import (EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, _did_you_mean, _display_name, _echo_unfixed_stdin,
                            _fix_stdin, _is_terminal, _local_diff, _local_name, _local_paths, _open_output, _run_options,
                            _split, _targets, _use_color, _usage_error, _uses_fixes, color_diff, echo, run_check,
                            terminal_safe, write_in_pieces)
from vllmlint.check_options import CHECK_PARAMS, PAIRED, _looks_like_a_command
from vllmlint.entry import GC_THRESHOLD, run_guarded

__all__ = ["EXIT_CLEAN", "EXIT_ERROR", "EXIT_FINDINGS", "_display_name", "_echo_unfixed_stdin", "_fix_stdin",
           "_is_terminal", "_local_diff", "_local_name", "_local_paths", "_open_output", "_run_options", "_split",
           "_targets", "_use_color", "_uses_fixes", "GC_THRESHOLD", "check_command", "cli", "color_diff", "echo", "main", "run_check",
           "terminal_safe", "write_in_pieces"]  # the helpers moved to vllmlint.check, still importable from here


# Subcommands that live in their own modules, imported only when used (start-up time matters).
LAZY_COMMANDS = {
    "flag": "vllmlint.commands.flag:command",
    "capacity": "vllmlint.commands.capacity:command",
    "server": "vllmlint.server.command:command",  # the language server: pygls is imported only when it runs
}


class DefaultGroup(click.Group):
    """`vllmlint PATH...` runs `check`; a first word that names a subcommand runs that instead."""

    def parse_args(self, ctx, args):
        if not args or (args[0] not in self.list_commands(ctx) and args[0] not in ("--help", "-h", "--version", "-V")):
            if args and _looks_like_a_command(args[0]):
                commands = self.list_commands(ctx)
                hint = _did_you_mean(args[0], commands)
                if hint:  # `vllmlint chek`: a typo of a subcommand, not a path that does not exist
                    _usage_error(f"`{args[0]}` is neither a command nor a file or folder{hint}: commands are "
                                 f"{', '.join(commands)}; paths are linted (`vllmlint check PATH`)")
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx):
        return sorted(set(self.commands) | set(LAZY_COMMANDS))

    def get_command(self, ctx, name):
        if name in LAZY_COMMANDS and name not in self.commands:
            import importlib

            module_name, attribute = LAZY_COMMANDS[name].split(":")
            self.add_command(getattr(importlib.import_module(module_name), attribute), name)
        return self.commands.get(name)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="vllmlint")
def cli():
    """Lint vLLM deployments: Kubernetes manifests, Compose files and shell scripts that start vLLM.

    Run `vllmlint PATH...` (same as `vllmlint check PATH...`). Exit codes: 0 clean, 1 findings at or
    above --fail-on, 2 usage or internal error.
    """


class _CheckCommand(click.Command):
    """Records the command-line order of --format/--output-format and --output (click keeps one list per
    option), so that each --output pairs with the --format before it."""

    _PAIRED = PAIRED

    def parse_args(self, ctx, args):
        try:
            _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        except click.UsageError:
            order = []  # super() reports it
        ctx.meta["vllmlint.format_order"] = [p.name for p in order if getattr(p, "name", None) in self._PAIRED]
        return super().parse_args(ctx, args)


def _click_type(kind):
    """click's type for a `type` of check_options.CHECK_PARAMS."""
    if kind[0] == "choice":
        return click.Choice(kind[1])
    if kind[0] == "path":
        return click.Path() if kind[1] else click.Path(dir_okay=False)
    return click.FloatRange(min=kind[1]) if kind[0] == "float" else click.IntRange(min=kind[1])


def _check_params(function):
    """click's argument and options of `check`, from check_options.CHECK_PARAMS (the fast path reads it too)."""
    for declarations, spec in reversed(CHECK_PARAMS):
        spec = dict(spec)
        if "type" in spec:
            spec["type"] = _click_type(spec["type"])
        function = (click.argument if spec.get("nargs") == -1 else click.option)(*declarations, **spec)(function)
    return function


@cli.command("check", cls=_CheckCommand)
@_check_params
def check_command(**params):
    """Lint PATHS (files, folders, or - for standard input)."""
    run_check(**params, format_order=click.get_current_context().meta.get("vllmlint.format_order", []))


@cli.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(fmt):
    """List every rule: code, name, default severity, fixable, summary."""
    import json

    from vllmlint.registry import all_rules

    rules = list(all_rules().values())
    if fmt == "json":
        click.echo(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity.label, "fix": r.fix,
                                "enabled": r.enabled, "kind": r.kind, "summary": r.summary} for r in rules], indent=2))
        return
    for r in rules:
        fix = {"safe": "fix", "unsafe": "fix*"}.get(r.fix, "")
        flags = fix + ("" if r.enabled else " (off)")
        click.echo(f"{r.code}  {r.name:32s} {r.severity.label:8s} {flags:10s} {r.summary}")


@cli.command("explain")
@click.argument("rule")
def explain_command(rule):
    """Print a rule's documentation (by code or name)."""
    from vllmlint.registry import all_rules
    from vllmlint.registry import rule as find_rule
    from vllmlint.formatters.rule_docs import help_text

    try:
        found = find_rule(rule)
    except KeyError:
        names = [r.code for r in all_rules().values()] + [r.name for r in all_rules().values()]
        _usage_error(f"unknown rule `{rule}`{_did_you_mean(rule, names)}: see `vllmlint rules`")
    click.echo(help_text(found), nl=False)


def main():
    """click's command line, as the console script runs it (entry.py sends it what the fast path does not take)."""
    run_guarded(lambda: cli())


if __name__ == "__main__":
    main()
