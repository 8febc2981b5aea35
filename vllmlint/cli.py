"""Command line: `vllmlint PATH...` lints; `vllmlint rules`, `vllmlint explain CODE` document the rules.

Exit codes: 0 no finding at or above --fail-on; 1 findings; 2 usage error or internal error.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, NoReturn

import click

from vllmlint import __version__
from vllmlint.finding import Severity
from vllmlint.formatters import FORMATS

if TYPE_CHECKING:
    from vllmlint.baseline import Baseline

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


# Subcommands that live in their own modules, imported only when used (start-up time matters).
LAZY_COMMANDS = {
    "flag": "vllmlint.commands.flag:command",
    "capacity": "vllmlint.commands.capacity:command",
    "server": "vllmlint.server.command:command",  # the language server: pygls is imported only when it runs
}


def _looks_like_a_command(word: str) -> bool:
    """A bare word (no option, no path separator, no suffix) that names nothing on disk."""
    return (word.isidentifier() or word.replace("-", "_").isidentifier()) and not os.path.lexists(word)


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


def _split(values: tuple[str, ...]) -> list[str] | None:
    items = [v.strip() for value in values for v in value.split(",") if v.strip()]
    return items or None


def _use_color(choice: str, stream) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def _usage_error(message: str) -> NoReturn:
    click.echo(f"vllmlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


# What a terminal would act on rather than show: C0 controls but tab and newline (a carriage return only
# where it ends a CRLF line), DEL and the C1 controls (ECMA-48: ESC and CSI start escape sequences that
# move the cursor, recolour, retitle the window or rewrite what was printed before).
_TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")


def terminal_safe(text: str) -> str:
    """`text` with terminal control characters written as visible escapes (`\\x1b`)."""
    return _TERMINAL_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _is_terminal(stream: IO[str]) -> bool:
    return hasattr(stream, "isatty") and stream.isatty()


_DIFF_COLORS = (("+++", "\x1b[1m"), ("---", "\x1b[1m"), ("@@", "\x1b[36m"), ("+", "\x1b[32m"), ("-", "\x1b[31m"))


def color_diff(diff: str) -> str:
    """A unified diff coloured as git colours it: headers bold, hunks cyan, removals red, additions green."""
    out = []
    for line in diff.splitlines(keepends=True):
        body, end = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        style = next((color for prefix, color in _DIFF_COLORS if body.startswith(prefix)), None)
        out.append(f"{style}{body}\x1b[0m{end}" if style and body else line)
    return "".join(out)


def _display_name(path: str | Path) -> str:
    """The repository-relative name findings carry for `path` (a file or --stdin-filename)."""
    from vllmlint.source.files import display_path

    return display_path(Path(path))


def _local_name(path: str | Path, here: str | None = None) -> str:
    """`path` as the user can open it from where they ran the command (`here`, the current folder): relative
    to it when under it, else absolute (as ruff prints it: no `../../` chains)."""
    absolute, here = os.path.abspath(path), here or os.getcwd()
    inside = os.path.normcase(absolute)
    base = os.path.normcase(here)
    if inside == base:
        return "."
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not inside.startswith(prefix):  # both normalised by abspath: a prefix test is `commonpath` (and cheaper)
        return absolute.replace(os.sep, "/")
    return absolute[len(prefix):].replace(os.sep, "/")


def _local_paths(files, stdin_filename: str | None = None) -> dict[str, str]:
    """Display path (repository-relative) -> path relative to the current folder, where they differ: the
    text format prints what the user can open from where they ran the command, as ruff and yamllint do."""
    mapping: dict[str, str] = {}
    here = os.getcwd()
    for path in [*files, *([stdin_filename] if stdin_filename else [])]:
        shown, local = _display_name(path), _local_name(path, here)
        if local != shown:
            mapping[shown] = local
    return mapping


def _local_diff(diff: str, local: dict[str, str]) -> str:
    """The diff's `---`/`+++` headers relative to the current folder, so `patch -p0` applies it from there."""
    if not local:
        return diff
    out = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(("--- ", "+++ ")) and line[4:].rstrip("\n") in local:
            line = line[:4] + local[line[4:].rstrip("\n")] + "\n"
        out.append(line)
    return "".join(out)


def _did_you_mean(word: str, choices: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


class _CheckCommand(click.Command):
    """Records the command-line order of --format/--output-format and --output (click keeps one list per
    option), so that each --output pairs with the --format before it."""

    _PAIRED = ("formats", "output_formats", "outputs")

    def parse_args(self, ctx, args):
        try:
            _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        except click.UsageError:
            order = []  # super() reports it
        ctx.meta["vllmlint.format_order"] = [p.name for p in order if getattr(p, "name", None) in self._PAIRED]
        return super().parse_args(ctx, args)


@cli.command("check", cls=_CheckCommand)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "formats", type=click.Choice(FORMATS), multiple=True,
              help="Output format [default: text; github under GitHub Actions]. Repeat with --output for "
              "several reports in one run.")
@click.option("--output-format", "output_formats", type=click.Choice(FORMATS), multiple=True,
              help="Same as --format (ruff's name for it).")
@click.option("--output", "-o", "outputs", type=click.Path(dir_okay=False), multiple=True,
              help="Write the report to FILE (the folder is created); pairs with the --format before it.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings are reported (2 still means an error).")
@click.option("--show-files", is_flag=True, help="List the files that would be linted, and exit.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]),
              help="Exit 1 when a finding is at least this severe [default: warning].")
@click.option("--select", multiple=True, help="Rules to run: codes, names or prefixes (VL1), comma-separated.")
@click.option("--ignore", multiple=True, help="Rules to skip: codes, names or prefixes, comma-separated.")
@click.option("--extend-select", multiple=True, help="Rules to run as well as the selected (or default) ones.")
@click.option("--extend-ignore", multiple=True, help="Rules to skip as well as the ignored ones.")
@click.option("--exclude", multiple=True, help="Globs of files to skip (added to the config file's).")
@click.option("--vllm-version", help="vLLM release assumed where a workload's own release is unknown.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file to use.")
@click.option("--no-config", is_flag=True, help="Ignore configuration files.")
@click.option("--stdin-filename", help="Name to report for input read from `-`, resolved as a path on the command line.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", help="Colour in text output.")
@click.option("--quiet", "-q", is_flag=True, help="Only the finding lines: no excerpts, no summary.")
@click.option("--show-notes", is_flag=True, help="List every note about the run (by default, one line per kind).")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them (text, or JSON with --format json).")
@click.option("--sarif-category", help="SARIF automationDetails id (leave unset to let the upload action decide).")
@click.option("--max-file-size", type=click.FloatRange(min=0), help="Skip files larger than this many MiB "
              "(0: no limit) [default: 10].")
@click.option("--upgrade-to", metavar="VERSION", help="Report what would break if every workload moved to this "
              "vLLM release.")
@click.option("--show-suppressed", is_flag=True, help="Also list findings hidden by suppressions.")
@click.option("--require-suppression-reason/--no-require-suppression-reason", default=None,
              help="Report suppressions without a `-- reason` (VL004) [default: yes].")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False),
              help="Report only findings that are not in this baseline file.")
@click.option("--write-baseline", "write_baseline_path", type=click.Path(dir_okay=False),
              help="Record today's findings in FILE and exit 0.")
@click.option("--fix", "apply_fixes", is_flag=True, help="Apply safe fixes in place, then report what remains.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; change no file.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that change behaviour (see `explain`).")
@click.option("--follow-links", is_flag=True, default=None,
              help="Follow symbolic links that lead out of the given paths (never written by --fix).")
@click.option("--require-workloads", is_flag=True, default=None,
              help="Exit 1 when no vLLM invocation and no Kubernetes or Compose object is found in the given paths.")
@click.option("--render", is_flag=True, default=None,
              help="Run `helm template` on Helm charts and `kustomize build` on kustomizations (when on PATH) and lint "
              "the output: runs a tool on files the linted tree controls; kustomize may fetch remote bases.")
@click.option("--helm-values", multiple=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="Values file for `helm template` under --render (repeatable).")
@click.option("--hf-cache", is_flag=True, default=None,
              help="Size models the catalog lacks from their config.json in this machine's Hugging Face cache (opt-in: "
              "findings then depend on the machine).")
@click.option("--online", is_flag=True, default=None,
              help="Fetch the config.json of models the catalog lacks from the Hugging Face Hub (needs vllmlint[hub]; "
              "HF_TOKEN, HF_HUB_OFFLINE). Never the default: no network call without it.")
@click.option("--no-cache", is_flag=True, help="Lint everything again: neither read nor write the result cache "
              "(VLLMLINT_CACHE_DIR, else the user cache folder).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Processes for the rules [default: automatic, "
              "2 or more on large runs only]; the output is the same whatever the number.")
def check_command(paths, formats, output_formats, outputs, exit_zero, show_files, fail_on, select, ignore,
                  extend_select, extend_ignore, exclude, vllm_version, config_path, no_config,
                  stdin_filename, color, quiet, show_notes, statistics, sarif_category, max_file_size, upgrade_to,
                  show_suppressed, require_suppression_reason, baseline_path, write_baseline_path,
                  apply_fixes, show_diff, unsafe_fixes, follow_links, require_workloads, render, helm_values,
                  hf_cache=None, online=None, no_cache=False, jobs=None):
    """Lint PATHS (files, folders, or - for standard input)."""
    from vllmlint.config import Config, ConfigError, find_config, load_config
    from vllmlint.engine import Linter, LintOptions, lint
    from vllmlint.registry import all_rules, unknown_selectors
    from vllmlint.source.files import TooLarge, collect, read_stream

    if not paths:
        _usage_error("no paths given: try `vllmlint manifests/`, or `-` to read standard input")
    if formats and output_formats:
        _usage_error("give --format or its alias --output-format, not both")
    targets = _targets(formats or output_formats, outputs,
                       click.get_current_context().meta.get("vllmlint.format_order", []))
    given = [fmt for fmt in formats or output_formats]
    if statistics and not given and targets[0][0] == "github":  # the GITHUB_ACTIONS default: counts are text
        targets = [("text", output) for _, output in targets]
    if show_diff and (any(fmt != "text" for fmt in given) or len(targets) > 1):
        _usage_error("--diff prints a unified diff, in no other format: drop --format (`--diff -o FILE` writes "
                     "the diff to FILE)")
    if statistics and any(fmt not in ("text", "json") for fmt in given):
        _usage_error("--statistics counts findings in text or json only: drop --format, or use --format json")
    try:
        if no_config:
            config = Config()
        elif config_path:
            config = load_config(Path(config_path))
        else:
            found = find_config(Path.cwd())
            config = load_config(found) if found else Config()
    except ConfigError as exc:
        _usage_error(str(exc))
    selected, ignored = config.selection(_split(select), _split(ignore), _split(extend_select), _split(extend_ignore))
    bad = unknown_selectors((selected or []) + (ignored or []))
    if bad:
        names = [r.code for r in all_rules().values()] + [r.name for r in all_rules().values()]
        _usage_error(f"unknown rule `{bad[0]}`{_did_you_mean(bad[0], names)}: see `vllmlint rules`")
    vllm_version = vllm_version or config.vllm_version
    if vllm_version:
        from vllmlint.vllm.release import is_version

        if not is_version(vllm_version):
            _usage_error(f"--vllm-version {vllm_version!r} is not a release number such as 0.29.0")
        vllm_version = vllm_version.strip().lstrip("v")
    fail_on = fail_on or config.fail_on or "warning"
    if config.models or config.gpus:
        from vllmlint.capacity import register_extra

        register_extra(models=config.models, gpus=config.gpus)

    if upgrade_to:
        from vllmlint.vllm.release import is_version

        if not is_version(upgrade_to):
            _usage_error(f"--upgrade-to {upgrade_to!r} is not a release number such as 0.31.0")
        upgrade_to = upgrade_to.strip().lstrip("v")
    if require_suppression_reason is None:
        require_suppression_reason = config.require_suppression_reason
    if require_workloads is None:
        require_workloads = config.require_workloads
    baseline: Baseline | None = None
    baseline_path = baseline_path or (str(config.baseline) if config.baseline and not write_baseline_path else None)
    if baseline_path:
        from vllmlint.baseline import BaselineError, load_baseline

        try:
            baseline = load_baseline(Path(baseline_path))
        except BaselineError as exc:
            _usage_error(str(exc))
    if write_baseline_path:
        baseline = None  # the baseline being written records every finding
    options = LintOptions(select=selected, ignore=ignored, vllm_version=vllm_version,
                          severity=config.severity, max_file_size=config.file_size_limit(max_file_size),
                          require_suppression_reason=require_suppression_reason, upgrade_to=upgrade_to,
                          per_file_ignores=dict(config.per_file_ignores), baseline=baseline,
                          fixes=_uses_fixes(targets, apply_fixes or show_diff, bool(write_baseline_path)))
    options.freeze_gc = True  # a one-shot process: the model lives to the end of the run
    _run_options(options, no_cache or bool(render), jobs)
    collection = collect([p for p in paths if p != "-"], exclude=list(config.exclude) + list(exclude),
                         respect_gitignore=config.respect_gitignore,
                         follow_links=follow_links if follow_links is not None else config.follow_links)
    files, missing = collection.files, collection.missing
    if render is None:
        render = config.render
    from vllmlint.capacity.hfconfig import online_problem, set_sources

    online = config.online if online is None else online
    if online and online_problem():
        _usage_error(str(online_problem()))
    set_sources(hf_cache=config.hf_cache if hf_cache is None else hf_cache, online=online)
    if render and (apply_fixes or show_diff):
        _usage_error("--render lints rendered output, which --fix and --diff cannot edit: drop --render to fix")
    from vllmlint.render import feed_rendered, prepare

    to_lint, rendered, render_notices = prepare(files, render, list(helm_values)) if not show_files else (files, [], [])
    if not (show_files or apply_fixes or show_diff):
        from vllmlint.progress import for_run

        options.progress = for_run(len(to_lint), quiet, sys.stderr)  # erased before anything else is printed
    # --stdin-filename names the text as a path on the command line would: repository-relative in
    # findings, per-file-ignores and fingerprints, relative to the current folder in text output.
    stdin_shown = _display_name(stdin_filename) if stdin_filename else None
    if show_files:
        for linted in files:
            click.echo(terminal_safe(_local_name(linted)))
        if "-" in paths:
            click.echo(terminal_safe(_local_name(stdin_filename) if stdin_filename else "-"))
        for absent in missing:
            click.echo(f"vllmlint: error: {absent}: no such file or directory", err=True)
        sys.exit(EXIT_ERROR if missing or collection.failed else EXIT_CLEAN)
    stdin, stdin_too_large = None, False
    if "-" in paths:
        try:
            # sys.stdin.buffer: what click.get_binary_stream returns, which click 8.5 deprecates
            stdin = read_stream(sys.stdin.buffer, options.max_file_size)
        except TooLarge as exc:
            stdin, stdin_too_large = b"", True
            if apply_fixes and not show_diff and not upgrade_to:
                _echo_unfixed_stdin(exc.head, _local_name(stdin_filename) if stdin_filename else "-",
                                    options.max_file_size)

    def feed(linter: Linter) -> None:
        for path in to_lint:
            linter.add_file(path)
        linter.result.notices.extend(render_notices)
        for folder in rendered:
            feed_rendered(linter, folder)
        if stdin_too_large:
            linter.skip_too_large(stdin_shown or "-", None)
        elif stdin is not None:
            linter.add_stdin(stdin, stdin_shown)

    if (apply_fixes or show_diff) and stdin is not None and not upgrade_to:
        _fix_stdin(stdin, stdin_shown, options, paths, unsafe_fixes, show_diff, targets[0][0], targets[0][1],
                   Severity.parse(fail_on), exit_zero, color, local=_local_paths([], stdin_filename), quiet=quiet)
    if (apply_fixes or show_diff) and (stdin is not None or upgrade_to):
        _usage_error("--fix and --diff edit files: they cannot be combined with `-` or --upgrade-to")
    stale = False
    if apply_fixes or show_diff:
        from vllmlint.fix.apply import run_fixes

        # Never through a link that leaves the given paths (--follow-links lints them, no fix writes them).
        outcome = run_fixes([str(f) for f in files], options, unsafe=unsafe_fixes, write=not show_diff,
                            roots=[p for p in paths if p != "-"], outside=collection.outside)
        local = _local_paths(files, stdin_filename)
        for shown, reason in outcome.refused:
            click.echo(f"vllmlint: warning: {local.get(shown, shown)}: fix not applied: {reason}", err=True)
        if show_diff:
            # Raw when piped, so that `patch` applies it; a terminal sees the file's control characters
            # as escapes instead of obeying them.
            diff = _local_diff(outcome.diff, _local_paths(files))
            diff_stream = _open_output(targets[0][1]) if targets[0][1] else sys.stdout
            try:
                diff = terminal_safe(diff) if _is_terminal(diff_stream) else diff
                diff_stream.write(color_diff(diff) if _use_color(color, diff_stream) else diff)
            finally:
                if diff_stream is not sys.stdout:
                    diff_stream.close()
            if not quiet:
                click.echo(f"vllmlint: {outcome.applied} fix(es) available in {len(outcome.files)} file(s)", err=True)
            sys.exit(EXIT_ERROR if missing or collection.failed
                     else (EXIT_FINDINGS if outcome.applied and not exit_zero else EXIT_CLEAN))
        if not quiet:  # -q hides notes
            click.echo(f"vllmlint: fixed {outcome.applied} problem(s) in {len(outcome.files)} file(s)", err=True)
        assert outcome.result is not None  # run_fixes always lints
        result = outcome.result
        stale = bool(outcome.stale)
    else:
        result = lint(feed, options)
        if options.progress is not None:
            options.progress.close()
    if result.upgrade is not None and not quiet:
        click.echo(f"vllmlint: note: --upgrade-to {result.upgrade.release}: {result.upgrade.added} new finding(s), "
                   f"{result.upgrade.resolved} that the upgrade resolves", err=True)
    from vllmlint.engine import selected_notices

    # Broken links, folders that cannot be listed: selected like the engine's notices (`--ignore VL005`).
    result.notices[:0] = selected_notices(collection.notices, result.rules)
    result.internal_error = result.internal_error or collection.failed

    if write_baseline_path:
        from vllmlint.baseline import write_baseline

        folder = os.path.dirname(write_baseline_path)
        try:  # its folder created, as --output's; a path that cannot be written is one line, exit 2
            if folder:
                os.makedirs(folder, exist_ok=True)
            count = write_baseline(Path(write_baseline_path), result.findings)
        except OSError as exc:
            _usage_error(f"--write-baseline {write_baseline_path}: {exc.strerror or exc}")
        click.echo(f"vllmlint: wrote {count} finding(s) to the baseline {write_baseline_path}", err=True)
        sys.exit(EXIT_ERROR if missing or result.internal_error else EXIT_CLEAN)
    if baseline is not None and not quiet:
        stale_entries = result.baseline_stale
        click.echo(f"vllmlint: note: {len(result.known)} finding(s) in the baseline not shown"
                   + (f"; {stale_entries} baseline entr{'y no longer matches' if stale_entries == 1 else 'ies no longer match'}"
                      if stale_entries else ""), err=True)

    threshold = Severity.parse(fail_on)
    from vllmlint.formatters import Report, render
    from vllmlint.formatters.text import nothing_checked_line, notice_lines, summary_lines

    local = _local_paths(files, stdin_filename)
    notes = notice_lines(result.notices, local, show_notes=show_notes, quiet=quiet)
    nothing = missing and result.files_checked == 0  # no "All checks passed" for nothing
    # Nothing vLLM or Kubernetes in what was given (an empty folder, a chart's templates, a file over the size
    # limit, unrelated YAML): one line on stderr says what was not checked, instead of a summary that reads as a
    # pass. Exit 0 (pre-commit passes unrelated YAML files by name), 1 with --require-workloads.
    unchecked = None if nothing else nothing_checked_line(
        Report(files_checked=result.files_checked, workloads=result.workloads, invocations=result.invocations,
               objects=result.objects, skipped=result.skipped_counts()), "error" if require_workloads else "warning")
    notes_printed = False
    for fmt, output in targets:
        stream = _open_output(output) if output else sys.stdout
        report = Report(findings=result.findings, suppressed=result.suppressed, notices=result.notices,
                        rules=result.rules, sources=result.sources, files_checked=result.files_checked,
                        color=_use_color(color, stream) and fmt == "text", quiet=quiet, statistics=statistics,
                        sarif_category=sarif_category, show_suppressed=show_suppressed,
                        failed=bool(missing or result.internal_error),
                        errors=[f"{path}: no such file or directory" for path in missing],
                        local_paths=local if fmt == "text" else {}, unsafe_fixes=unsafe_fixes, fail_on=threshold,
                        show_notes=show_notes, workloads=result.workloads, invocations=result.invocations,
                        objects=result.objects, skipped=result.skipped_counts())
        # Text on the terminal: findings, then the notes (stderr), then the summary line, so that the
        # summary is what the user reads last.
        summary_after_notes = fmt == "text" and not output and not quiet
        report.summary = not summary_after_notes
        try:
            if not (fmt == "text" and nothing):
                write_in_pieces(stream, render(fmt, report))
                stream.flush()
            if summary_after_notes:
                for line in notes:
                    click.echo(line, err=True)
                notes_printed = True
                if unchecked is not None and not result.findings:
                    click.echo(unchecked, err=True)  # instead of a summary that would read as a pass
                    unchecked = None
                elif not nothing:
                    sys.stderr.flush()
                    stream.write("".join(line + "\n" for line in summary_lines(report)))
        finally:
            if output:
                stream.close()
    if not notes_printed:
        for line in notes:
            click.echo(line, err=True)
    if unchecked is not None and (not result.findings or require_workloads):
        click.echo(unchecked, err=True)
    for path in missing:
        click.echo(f"vllmlint: error: {path}: no such file or directory", err=True)
    if missing or result.internal_error:
        sys.exit(EXIT_ERROR)
    if exit_zero:
        sys.exit(EXIT_CLEAN)
    if stale:  # a file changed while --fix ran: its fixes were not written, which is not a clean run
        sys.exit(EXIT_FINDINGS)
    if require_workloads and result.understood_nothing:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_FINDINGS if any(f.severity >= threshold for f in result.findings) else EXIT_CLEAN)


def _run_options(options, no_cache: bool, jobs: int | None) -> None:
    """The cache (off with --no-cache or VLLMLINT_NO_CACHE=1, and under --render: it runs tools) and the processes
    of a run."""
    if not no_cache and os.environ.get("VLLMLINT_NO_CACHE", "") in ("", "0"):
        from vllmlint.cache import cache_dir

        options.cache_dir = str(cache_dir())
    options.jobs = 0 if jobs is None else jobs  # 0: automatic (2 or more processes on large runs only)


def _targets(formats: tuple[str, ...], outputs: tuple[str, ...],
             order: list[str] | None = None) -> list[tuple[str, str | None]]:
    """(format, file or None for standard output) per report to write. Each `--output FILE` pairs with the
    `--format` before it on the command line (`order`: the option names as given); a format without an
    --output goes to standard output, at most one of them. One format and one output pair whatever their
    order (`-o r.json --format json`). Without `--format`: text, or `github` when run by GitHub Actions
    (GITHUB_ACTIONS=true), as ruff does."""
    default = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    fmts = list(formats) or [default]
    outs: list[str | None] = list(outputs)
    if len(fmts) == 1 and len(outs) <= 1:
        return [(fmts[0], outs[0] if outs else None)]
    if not formats:
        _usage_error(f"{len(outs)} --output and no --format: give each --output the --format it writes "
                     "(`--format json --output r.json`)")
    if order is None or len(order) != len(fmts) + len(outs):
        order = ["formats"] * len(fmts) + ["outputs"] * len(outs)  # called without the command line
    targets: list[list] = []
    next_format, next_output = iter(fmts), iter(outs)
    for name in order:
        if name == "outputs":
            output = next(next_output)
            if not targets or targets[-1][1] is not None:
                _usage_error(f"--output {output} follows no --format of its own: write `--format X --output FILE`")
            targets[-1][1] = output
        else:
            targets.append([next(next_format), None])
    if sum(1 for _, output in targets if output is None) > 1:
        _usage_error(f"{len(fmts)} --format and {len(outs)} --output: give each --format its --output "
                     "(one format may go to standard output)")
    return [(fmt, output) for fmt, output in targets]


# Formats that never show a fix (GitHub annotations, JUnit): a run writing only these builds none.
_FIXLESS_FORMATS = ("github", "junit")


def _uses_fixes(targets: list[tuple[str, str | None]], fixing: bool, writing_baseline: bool) -> bool:
    """Whether the run needs the findings' fixes: --fix and --diff do, and so does any report that shows them
    (text marks them `[*]`, JSON and SARIF hold their edits); a baseline written records no fix."""
    if fixing:
        return True
    return not writing_baseline and any(fmt not in _FIXLESS_FORMATS for fmt, _ in targets)


def _open_output(path: str) -> IO[str]:
    """The report file, its folder created when missing (`--output reports/vllmlint.sarif` in CI)."""
    folder = os.path.dirname(path)
    try:
        if folder:
            os.makedirs(folder, exist_ok=True)
        return open(path, "w", encoding="utf-8")
    except OSError as exc:
        _usage_error(f"--output {path}: {exc.strerror or exc}")


def _echo_unfixed_stdin(head: bytes, shown: str, limit: int) -> NoReturn:
    """`--fix -` on input over --max-file-size: the input unchanged on stdout (an editor that fixes on save
    replaces its buffer with what it reads back, so printing less would lose the user's text), a warning
    on stderr, exit 0 as when the same input is linted without --fix (the skip is a warning note)."""
    import shutil

    from vllmlint.source.files import too_large_message

    sys.stdout.flush()
    out = sys.stdout.buffer
    out.write(head)
    shutil.copyfileobj(sys.stdin.buffer, out)
    out.flush()
    click.echo(f"vllmlint: warning: {shown}: not fixed, printed unchanged: {too_large_message(None, limit)}", err=True)
    sys.exit(EXIT_CLEAN)


def _fix_stdin(data: bytes, filename: str | None, options, paths, unsafe: bool, show_diff: bool, fmt: str,
               output: str | None, threshold: Severity, exit_zero: bool = False, color: str = "auto",
               local: dict[str, str] | None = None, quiet: bool = False) -> NoReturn:
    """`vllmlint --fix --stdin-filename x.yaml -`: the fixed text on stdout (for editors that fix on
    save), the findings that remain on stderr (or --output); `--diff -` prints the diff instead."""
    from vllmlint.engine import split_helm_output
    from vllmlint.fix.apply import fix_text, unified_diff
    from vllmlint.formatters import Report, render
    from vllmlint.source.files import read_text

    if len(paths) > 1:
        _usage_error("--fix on standard input (`-`) fixes that one text: give no other path")
    text, problem = read_text(data)
    if text is None or problem:
        _usage_error(f"--fix on standard input: {problem or 'not text'}")
    if data.startswith(b"\xef\xbb\xbf"):  # read_text drops a byte-order mark; fix_text keeps one it sees
        text = "\ufeff" + text
    if split_helm_output(text):
        _usage_error("--fix on standard input fixes one file, not `helm template` output: fix the chart's sources")
    shown = filename or "-"
    local = local or {}
    outcome = fix_text(text, shown, options, unsafe=unsafe)
    if outcome.refused:
        click.echo(f"vllmlint: warning: {local.get(shown, shown)}: fix not applied: {outcome.refused}", err=True)
    result = outcome.result
    fixed = unified_diff(text, outcome.text, shown) if show_diff else outcome.text
    out = _open_output(output) if show_diff and output else sys.stdout  # `--diff -o FILE -`: the diff there
    try:
        fixed = terminal_safe(fixed) if _is_terminal(out) else fixed
        out.write(color_diff(fixed) if show_diff and _use_color(color, out) else fixed)
        out.flush()
    finally:
        if out is not sys.stdout:
            out.close()
    if show_diff:
        output = None  # the findings that remain go to stderr
    if not quiet:
        click.echo(f"vllmlint: {'fixable' if show_diff else 'fixed'} {outcome.applied} problem(s) in "
                   f"{local.get(shown, shown)}", err=True)
    stream = _open_output(output) if output else sys.stderr
    report = Report(findings=result.findings, suppressed=result.suppressed, notices=result.notices,
                    rules=result.rules, sources=result.sources, files_checked=result.files_checked,
                    quiet=True, failed=result.internal_error, unsafe_fixes=unsafe, fail_on=threshold,
                    local_paths=local if fmt == "text" else {})
    try:
        stream.write(render(fmt, report))
    finally:
        if output:
            stream.close()
    if result.internal_error:
        sys.exit(EXIT_ERROR)
    if exit_zero:
        sys.exit(EXIT_CLEAN)
    if show_diff:
        sys.exit(EXIT_FINDINGS if outcome.applied else EXIT_CLEAN)
    sys.exit(EXIT_FINDINGS if any(f.severity >= threshold for f in result.findings) else EXIT_CLEAN)


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


# The cyclic GC runs a generation-0 pass every 700 new container objects by default; a run builds hundreds of
# thousands of YAML nodes that all live to the end, so those passes find nothing. A larger threshold for this
# one-shot process: 1,000 files of bench/bench.py's corpus 4.16 s -> 2.87 s, peak memory 139 -> 146 MB
# (measured 2026-12-01). Only the console script sets it; the library leaves the embedding process alone.
GC_THRESHOLD = (100_000, 50, 100)


def main():
    """The console script: a bug of ours is one line and exit 2, never a traceback read as "findings"."""
    import atexit
    import gc

    gc.set_threshold(*GC_THRESHOLD)
    # At exit the interpreter collects garbage over every object still alive: the whole model and result of the
    # run (the engine gives them back to the GC when the rules are done), a fifth of a 1,000-file run for nothing.
    # Frozen, they are left to the process's end (atexit runs before that collection).
    atexit.register(gc.freeze)
    try:
        cli()
    except Exception as exc:  # click handles usage errors and exits itself; anything else is our bug
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"
        click.echo(f"vllmlint: internal error: {type(exc).__name__}: {exc} ({where}); please report it, with the "
                   "input if you can (VLLMLINT_DEBUG=1 shows the traceback)", err=True)
        if os.environ.get("VLLMLINT_DEBUG"):
            traceback.print_exc()
        sys.exit(EXIT_ERROR)


def write_in_pieces(stream: IO[str], text: str, piece: int = 1 << 20) -> None:
    """`stream.write(text)` a megabyte of characters at a time: a text stream encodes what it is given in one
    piece, so a large report (36 MB of text for 10,000 files) was in memory twice, as text and as bytes."""
    if len(text) <= piece:
        stream.write(text)
        return
    for start in range(0, len(text), piece):
        stream.write(text[start:start + piece])


if __name__ == "__main__":
    main()
