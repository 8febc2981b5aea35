"""click's command line: the subcommands (`rules`, `explain`, `flag`, `capacity`, `server`) and `check`, whose
arguments go unparsed to check_options.parse, the one parser of the lint command line (entry.py calls it without
click for the common case).

Exit codes: 0 no finding at or above --fail-on; 1 findings; 2 usage error or internal error.
"""
from __future__ import annotations

import click

from vllmlint.check import echo, lint_command_line, run_guarded, usage_error
from vllmlint.check_options import CHECK_PARAMS, COMMANDS, _did_you_mean, help_text, looks_like_a_command

def _print_version(ctx, _param, value) -> None:
    if not value or ctx.resilient_parsing:
        return
    from vllmlint.version import version

    click.echo(f"vllmlint, version {version()}")
    ctx.exit()


class DefaultGroup(click.Group):
    """`vllmlint PATH...` (or nothing: `.`) runs `check`; a first word that names a subcommand runs that instead;
    `--help` lists the lint options and the commands (check_options.help_text)."""

    def parse_args(self, ctx, args):
        if args and args[0] in ("-h", "--help"):
            echo(help_text(group=True), nl=False)
            ctx.exit(0)
        if not args or (args[0] not in self.list_commands(ctx) and args[0] not in ("-V", "--version")):
            if args and looks_like_a_command(args[0]):
                commands = self.list_commands(ctx)
                hint = _did_you_mean(args[0], commands)
                if hint:  # `vllmlint chek`: a typo of a subcommand, not a path that does not exist
                    usage_error(f"`{args[0]}` is neither a command nor a file or folder{hint}: commands are "
                                f"{', '.join(commands)}; paths are linted (`vllmlint check PATH`)")
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        """The click command of `name`, from where check_options.COMMANDS says it is (imported when first asked:
        start-up time matters)."""
        if name in COMMANDS and name not in self.commands:
            import importlib

            module_name, attribute = COMMANDS[name][1].split(":")
            self.add_command(getattr(importlib.import_module(module_name), attribute), name)
        return self.commands.get(name)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]},
             help="Lint vLLM deployments: " + COMMANDS["check"][0])
@click.option("-V", "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version (and the commit it was built from) and exit.")
def cli():
    """Lint vLLM deployments."""


class _Unparsed(click.Command):
    """`check`: its arguments as given, for check_options.parse (click reads none of them, `--` included)."""

    def parse_args(self, ctx, args):
        ctx.params["argv"] = list(args)
        return []

    def shell_complete(self, ctx, incomplete):
        """Shell completion: the options of the declaration (click parses none of them), else file names."""
        from click.shell_completion import CompletionItem

        if not incomplete.startswith("-"):
            return [CompletionItem(incomplete, type="file")]
        options = [(option, param.help) for param in CHECK_PARAMS for option in param.options]
        options += [("--no-" + p.options[0][2:], p.help) for p in CHECK_PARAMS if p.kind == "switch"]
        return [CompletionItem(option, help=text) for option, text in options if option.startswith(incomplete)]


@click.command("check", cls=_Unparsed, add_help_option=False, help=COMMANDS["check"][0])
def check_command(argv):
    lint_command_line(argv)


@click.command("rules", help=COMMANDS["rules"][0])
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(fmt):
    import json

    from vllmlint.registry import all_rules

    rules = list(all_rules().values())
    if fmt == "json":
        click.echo(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity.label, "fix": r.fix,
                                "enabled": r.enabled, "kind": r.kind, "summary": r.summary} for r in rules], indent=2))
        return
    click.echo(f"{'CODE':5s}  {'NAME':32s} {'SEVERITY':8s} {'FIX':10s} SUMMARY")
    for r in rules:
        fix = {"safe": "fix", "unsafe": "fix*"}.get(r.fix, "")
        flags = fix + ("" if r.enabled else " (off)")
        click.echo(f"{r.code}  {r.name:32s} {r.severity.label:8s} {flags:10s} {r.summary}")


@click.command("explain", context_settings={"ignore_unknown_options": True},  # `explain --swap-space`: a flag
               help=COMMANDS["explain"][0])
@click.argument("rule")
def explain_command(rule):
    from vllmlint.formatters.rule_docs import help_text as rule_help
    from vllmlint.registry import all_rules
    from vllmlint.registry import rule as find_rule

    try:
        found = find_rule(rule)
    except KeyError:
        names = [r.code for r in all_rules().values()] + [r.name for r in all_rules().values()]
        flag = _flag_named(rule)
        if flag is not None and rule.startswith("-"):
            usage_error(f"`{rule}` is a flag, not a rule: `vllmlint flag {flag}` shows its history across vLLM "
                        "releases; `vllmlint rules` lists the rules")
        also = f"; `vllmlint flag {flag}` shows the flag" if flag is not None else ""
        usage_error(f"unknown rule `{rule}`{_did_you_mean(rule, names)}: see `vllmlint rules`{also}")
    click.echo(rule_help(found), nl=False)


def _flag_named(text: str) -> str | None:
    """`--name` when `text` (`--swap-space`, `swap-space`) names an option of a vLLM release vllmlint knows."""
    from vllmlint.vllm import catalog

    name = "--" + text.lstrip("-")
    return name if catalog.history(name) is not None else None


def main():
    """click's command line, as the console script runs it (entry.py sends it what is not the lint command)."""
    run_guarded(lambda: cli())


if __name__ == "__main__":
    main()
