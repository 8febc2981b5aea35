"""Command line: `vllmlint PATH...` lints; `vllmlint rules`, `vllmlint explain CODE` document the rules.

Exit codes: 0 no finding at or above --fail-on; 1 findings; 2 usage error or internal error.
"""
from __future__ import annotations

import os
import sys

import click

from . import __version__
from .finding import Severity
from .formatters import FORMATS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


# Subcommands that live in their own modules, imported only when used (start-up time matters).
LAZY_COMMANDS = {
}


class DefaultGroup(click.Group):
    """`vllmlint PATH...` runs `check`; a first word that names a subcommand runs that instead."""

    def parse_args(self, ctx, args):
        if not args or (args[0] not in self.list_commands(ctx) and args[0] not in ("--help", "-h", "--version")):
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
@click.version_option(__version__, prog_name="vllmlint")
def main():
    """Lint vLLM deployments: Kubernetes manifests, Compose files and shell scripts that start vLLM.

    Run `vllmlint PATH...` (same as `vllmlint check PATH...`). Exit codes: 0 clean, 1 findings at or
    above --fail-on, 2 usage or internal error.
    """


def _split(values: tuple[str, ...]) -> list[str] | None:
    items = [v.strip() for value in values for v in value.split(",") if v.strip()]
    return items or None


def _use_color(choice: str, stream) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def _usage_error(message: str) -> None:
    click.echo(f"vllmlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _did_you_mean(word: str, choices: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


@main.command("check")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text",
              show_default=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write the report to FILE.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="warning", show_default=True,
              help="Exit 1 when a finding is at least this severe.")
@click.option("--select", multiple=True, help="Rules to run: codes, names or prefixes (VL1), comma-separated.")
@click.option("--ignore", multiple=True, help="Rules to skip: codes, names or prefixes, comma-separated.")
@click.option("--vllm-version", help="vLLM release assumed where a workload's own release is unknown.")
@click.option("--stdin-filename", help="Name to report for input read from `-`.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", help="Colour in text output.")
@click.option("--quiet", "-q", is_flag=True, help="Only the finding lines: no excerpts, no summary.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--sarif-category", help="SARIF automationDetails id (leave unset to let the upload action decide).")
@click.option("--max-file-size", type=click.FloatRange(min=0), default=10, show_default=True,
              help="Skip files larger than this many MiB (0: no limit).")
def check_command(paths, fmt, output, fail_on, select, ignore, vllm_version, stdin_filename, color, quiet,
                  statistics, sarif_category, max_file_size):
    """Lint PATHS (files, folders, or - for standard input)."""
    from .engine import Linter, LintOptions, collect_files
    from .registry import all_rules, unknown_selectors

    if not paths:
        _usage_error("no paths given: try `vllmlint manifests/`, or `-` to read standard input")
    selected, ignored = _split(select), _split(ignore)
    bad = unknown_selectors((selected or []) + (ignored or []))
    if bad:
        names = [r.code for r in all_rules().values()] + [r.name for r in all_rules().values()]
        _usage_error(f"unknown rule `{bad[0]}`{_did_you_mean(bad[0], names)}: see `vllmlint rules`")
    if vllm_version:
        from .release import is_version

        if not is_version(vllm_version):
            _usage_error(f"--vllm-version {vllm_version!r} is not a release number such as 0.29.0")

    linter = Linter(LintOptions(select=selected, ignore=ignored, vllm_version=vllm_version,
                                max_file_size=int(max_file_size * 1024 * 1024)))
    file_paths = [p for p in paths if p != "-"]
    files, missing = collect_files(file_paths)
    for path in files:
        linter.add_file(path)
    if "-" in paths:
        linter.add_stdin(click.get_binary_stream("stdin").read(), stdin_filename)
    result = linter.run()

    threshold = Severity.parse(fail_on)
    from .formatters import Report, render

    stream = open(output, "w", encoding="utf-8") if output else sys.stdout
    report = Report(findings=result.findings, notices=result.notices, rules=result.rules, sources=result.sources,
                    files_checked=result.files_checked, color=_use_color(color, stream) and fmt == "text",
                    quiet=quiet, statistics=statistics, sarif_category=sarif_category)
    try:
        stream.write(render(fmt, report))
    finally:
        if output:
            stream.close()
    for notice in result.notices:
        where = f"{notice.path}:{notice.line}: " if notice.path and notice.line else (f"{notice.path}: " if notice.path else "")
        click.echo(f"vllmlint: {notice.level}: {where}{notice.message}", err=True)
    for path in missing:
        click.echo(f"vllmlint: error: {path}: no such file or directory", err=True)
    if missing or result.internal_error:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if any(f.severity >= threshold for f in result.findings) else EXIT_CLEAN)


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(fmt):
    """List every rule: code, name, default severity, fixable, summary."""
    import json

    from .registry import all_rules

    rules = list(all_rules().values())
    if fmt == "json":
        click.echo(json.dumps([{"code": r.code, "name": r.name, "severity": r.severity.label, "fix": r.fix,
                                "enabled": r.enabled, "kind": r.kind, "summary": r.summary} for r in rules], indent=2))
        return
    for r in rules:
        fix = {"safe": "fix", "unsafe": "fix*"}.get(r.fix, "")
        flags = fix + ("" if r.enabled else " (off)")
        click.echo(f"{r.code}  {r.name:32s} {r.severity.label:8s} {flags:10s} {r.summary}")


@main.command("explain")
@click.argument("rule")
def explain_command(rule):
    """Print a rule's documentation (by code or name)."""
    from .registry import all_rules
    from .registry import rule as find_rule
    from .formatters.rule_docs import help_text

    try:
        found = find_rule(rule)
    except KeyError:
        names = [r.code for r in all_rules().values()] + [r.name for r in all_rules().values()]
        _usage_error(f"unknown rule `{rule}`{_did_you_mean(rule, names)}: see `vllmlint rules`")
    click.echo(help_text(found), nl=False)


if __name__ == "__main__":
    main()
