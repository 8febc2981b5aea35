"""`vllmlint check` without click: the body of the command, which click's `check_command` (cli.py) and the
console script's fast path (entry.py, for the common command line) both call with the same parameters.

Nothing here imports click, except `echo` when click is already loaded (then it is click's own echo) or for an
output stream it does not handle as plainly as a terminal or a pipe.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

from vllmlint.check_options import _did_you_mean
from vllmlint.finding import Severity
from vllmlint.gc_policy import GC_THRESHOLD, gc_tuned

if TYPE_CHECKING:
    from vllmlint.baseline import Baseline

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

def lint_command_line(argv: list[str]) -> None:
    """`vllmlint check ARGV`: parsed by check_options.parse (its help, its usage errors), then run."""
    from vllmlint.check_options import UsageError, help_text, parse

    try:
        args = parse(argv)
    except UsageError as exc:
        usage_error(str(exc))
    if args is None:
        echo(help_text(group=True), nl=False)
        return
    run_check(args)


def run_guarded(function) -> None:
    """Run `function` as the console script runs a command: a bug of ours is one line and exit 2, never a
    traceback read as "findings"."""
    import atexit
    import gc

    if gc_tuned():
        gc.set_threshold(*GC_THRESHOLD)
        # At exit the interpreter collects garbage over every object still alive: the whole model and result of
        # the run (the engine gives them back to the GC when the rules are done), a fifth of a 1,000-file run for
        # nothing. Frozen, they are left to the process's end (atexit runs before that collection).
        atexit.register(gc.freeze)
    try:
        function()
    except Exception as exc:  # click handles usage errors and exits itself; anything else is our bug
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"
        echo(f"vllmlint: internal error: {type(exc).__name__}: {exc} ({where}); please report it, with the "
             "input if you can (VLLMLINT_DEBUG=1 shows the traceback)", err=True)
        if os.environ.get("VLLMLINT_DEBUG"):
            traceback.print_exc()
        sys.exit(EXIT_ERROR)


def echo(message: str, err: bool = False, nl: bool = True) -> None:
    """`click.echo(message, err=err, nl=nl)` for the text this package prints, without importing click: on a
    text stream with a real encoding, outside Windows, a message with no escape sequence is written and flushed as
    click writes it. Anything else (click already loaded, an ASCII-only stream, an escape sequence that click
    strips when not on a terminal...) is click's own echo."""
    stream = sys.stderr if err else sys.stdout
    if "click" in sys.modules or not _plain_stream(stream) or "\x1b" in message:
        import click

        click.echo(message, err=err, nl=nl)
        return
    if stream is None:  # no standard stream (pythonw): click writes nothing
        return
    out = message + "\n" if nl else message
    if out:
        stream.write(out)
    stream.flush()


def _plain_stream(stream) -> bool:
    """Whether click.echo would write to `stream` itself, unchanged: its `_default_text_stdout/stderr` keep a text
    stream that declares an encoding other than ASCII and its error handling; not on Windows, not in Jupyter."""
    import codecs
    import io

    if stream is None:
        return True
    if sys.platform.startswith("win") or type(stream) is not io.TextIOWrapper or hasattr(stream, "color"):
        return False
    encoding = getattr(stream, "encoding", None)
    if not encoding or getattr(stream, "errors", None) is None:
        return False
    try:
        return codecs.lookup(encoding).name != "ascii"
    except LookupError:
        return True


def _split(values: tuple[str, ...]) -> list[str] | None:
    items = [v.strip() for value in values for v in value.split(",") if v.strip()]
    return items or None


def _use_color(choice: str, stream) -> bool:
    """--color always/never; else NO_COLOR (set and not empty) turns colour off, FORCE_COLOR (set and not empty)
    turns it on where it is not a terminal (CI logs), and a terminal gets it."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def usage_error(message: str) -> NoReturn:
    echo(f"vllmlint: error: {message}", err=True)
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




def run_check(args) -> NoReturn:
    """`vllmlint check`: lint the paths and exit. `args`: check_options.parse's `Args`. Three steps: `resolve`
    the command line and the configuration into a `Plan` (every usage error), `run` the linter (or the fixes),
    `present` the result (the reports, the notes, the exit code)."""
    plan = resolve(args)
    if args.show_files:
        sys.exit(_show_files(plan))
    sys.exit(present(plan, run(plan)))


class Plan:
    """What a run does, every option resolved (command line over configuration over defaults)."""

    def __init__(self, args, config, targets: list[tuple[str, str | None]]):
        self.args, self.config, self.targets = args, config, targets
        self.fail_on = args.fail_on or config.fail_on or "warning"
        self.threshold = Severity.parse(self.fail_on)
        min_level = args.min_level or getattr(config, "min_level", None)
        self.min_level = Severity.parse(min_level) if min_level else None
        self.require_workloads = config.require_workloads if args.require_workloads is None else args.require_workloads
        self.fixing = bool(args.apply_fixes or args.show_diff)
        self.baseline: Baseline | None = None
        self.options: Any = None  # engine.LintOptions
        self.collection: Any = None  # source.files.Collection of the paths (the files reported on)
        self.context_files: list = []  # --context: files read as context only
        self.to_lint: list = []
        self.rendered: list = []
        self.render_notices: list = []
        self.stdin: bytes | None = None
        self.stdin_too_large = False
        self.stdin_shown: str | None = None

    @property
    def files(self) -> list:
        return self.collection.files

    def feed(self, linter) -> None:
        """The engine's input: the files (and the context), the rendered output, standard input."""
        for path in self.to_lint:
            linter.add_file(path)
        for path in self.context_files:
            linter.add_file(path)
        linter.result.notices.extend(self.render_notices)
        for folder in self.rendered:
            from vllmlint.render import feed_rendered

            feed_rendered(linter, folder)
        if self.stdin_too_large:
            linter.skip_too_large(self.stdin_shown or "-", None)
        elif self.stdin is not None:
            linter.add_stdin(self.stdin, self.stdin_shown)


def resolve(args) -> Plan:
    """The run's `Plan` from the command line and the configuration file; exits 2 on a usage error. Reads standard
    input when `-` is given."""
    from vllmlint.engine import LintOptions
    from vllmlint.registry import all_rules, unknown_selectors
    from vllmlint.source.files import CHART_FILE, collect

    paths = args.paths
    config = _config(args)
    plan = Plan(args, config, _reports(args))
    targets = plan.targets
    selected, ignored = config.selection(_split(args.select), _split(args.ignore), _split(args.extend_select),
                                         _split(args.extend_ignore))
    bad = unknown_selectors((selected or []) + (ignored or []))
    if bad:
        names = [r.code for r in all_rules().values()] + [r.name for r in all_rules().values()]
        usage_error(f"unknown rule `{bad[0]}`{_did_you_mean(bad[0], names)}: see `vllmlint rules`")
    vllm_version = _release(args.vllm_version or config.vllm_version, "--vllm-version", "0.29.0")
    upgrade_to = _release(args.upgrade_to, "--upgrade-to", "0.31.0")
    if config.models or config.gpus:
        from vllmlint.capacity import register_extra

        register_extra(models=config.models, gpus=config.gpus)
    require_reason = args.require_suppression_reason
    if require_reason is None:
        require_reason = config.require_suppression_reason
    if args.context and (plan.fixing or "-" in paths or upgrade_to):
        usage_error("--context reports on PATHS with the folder as context: it cannot be combined with --fix, "
                     "--diff, `-` or --upgrade-to")
    render = config.render if args.render is None else args.render
    follow_links = config.follow_links if args.follow_links is None else args.follow_links
    exclude = list(config.exclude) + list(args.exclude)
    collection = collect([p for p in paths if p != "-"], exclude=exclude,
                         respect_gitignore=config.respect_gitignore, follow_links=follow_links)
    plan.collection = collection
    plan.baseline = _baseline(args, config)
    from vllmlint.config import ConfigError

    try:
        max_file_size = config.file_size_limit(args.max_file_size)
    except ConfigError as exc:  # `--max-file-size inf`, `nan`, `1e400`
        usage_error(str(exc))
    options = LintOptions(select=selected, ignore=ignored, vllm_version=vllm_version,
                          severity=config.severity, max_file_size=max_file_size, follow_links=bool(follow_links),
                          require_suppression_reason=require_reason, upgrade_to=upgrade_to,
                          per_file_ignores=dict(config.per_file_ignores), baseline=plan.baseline,
                          fixes=_uses_fixes(targets, plan.fixing, bool(args.write_baseline_path)))
    options.freeze_gc = gc_tuned()  # a one-shot process: the model lives to the end of the run
    _run_options(options, args.no_cache or bool(render), args.jobs)
    plan.options = options
    if args.context:
        reported = {os.path.abspath(f) for f in collection.files}
        context = collect(list(args.context), exclude=exclude, respect_gitignore=config.respect_gitignore,
                          follow_links=follow_links)
        if context.missing:
            usage_error(f"--context {context.missing[0]}: no such file or directory")
        plan.context_files = [f for f in context.files if os.path.abspath(f) not in reported]
    from vllmlint.capacity.hfconfig import online_problem, set_sources

    online = config.online if args.online is None else args.online
    if online and online_problem():
        usage_error(str(online_problem()))
    set_sources(hf_cache=config.hf_cache if args.hf_cache is None else args.hf_cache, online=online)
    if render and plan.fixing:
        usage_error("--render lints rendered output, which --fix and --diff cannot edit: drop --render to fix")
    plan.to_lint = collection.files
    # Without --render, the renderer's module has work only for a chart (its notice).
    if not args.show_files and (render or any(f.name == CHART_FILE for f in collection.files)):
        from vllmlint.render import prepare

        plan.to_lint, plan.rendered, plan.render_notices = prepare(collection.files, render, list(args.helm_values))
    if not (args.show_files or plan.fixing):
        from vllmlint.progress import for_run

        options.progress = for_run(len(plan.to_lint), args.quiet, sys.stderr)  # erased before anything is printed
    # --stdin-filename names the text as a path on the command line would: repository-relative in
    # findings, per-file-ignores and fingerprints, relative to the current folder in text output.
    plan.stdin_shown = _display_name(args.stdin_filename) if args.stdin_filename else None
    if "-" in paths and not args.show_files:
        _read_stdin(plan)
    return plan


def _reports(args) -> list[tuple[str, str | None]]:
    """(format, file or None) per report (`_targets`), checked against --diff and --statistics."""
    targets = _targets(args.formats, args.outputs, list(args.format_order))
    given = list(args.formats)
    if args.statistics and not given and targets[0][0] == "github":  # the GITHUB_ACTIONS default: counts are text
        targets = [("text", output) for _, output in targets]
    if args.show_diff and (any(fmt not in _TEXT_FORMATS for fmt in given) or len(targets) > 1):
        usage_error("--diff prints a unified diff, in no other format: drop --format (`--diff -o FILE` writes "
                    "the diff to FILE)")
    if args.statistics and any(fmt not in (*_TEXT_FORMATS, "json") for fmt in given):
        usage_error("--statistics counts findings in text or json only: drop --format, or use --format json")
    return targets


def _config(args):
    """The configuration: none (--no-config), the file given (--config), else the nearest one, else defaults."""
    from vllmlint.config import ConfigError, load_settings

    try:
        # The linted paths decide which configuration files are the tree's own (they cannot switch on what runs
        # programs, reaches the network or reads outside the tree: vllmlint.config).
        config = load_settings([p for p in args.paths if p != "-"], args.config_path, args.no_config)
    except ConfigError as exc:
        usage_error(str(exc))
    note = config.refusal_note()
    if note and not args.quiet:
        echo(f"vllmlint: {note}", err=True)
    for error in config.errors:  # a `baseline:`/`extend:` that is no regular file of the tree: one line each
        echo(f"vllmlint: error: {error}", err=True)
    return config


def _baseline(args, config) -> Baseline | None:
    """The baseline to hide known findings with (--baseline, else the configuration's), limited to the entries of
    files under the linted paths; None when writing one (it records every finding)."""
    if args.write_baseline_path:
        return None
    path = args.baseline_path or (str(config.baseline) if config.baseline else None)
    if not path:
        return None
    from vllmlint.baseline import BaselineError, load_baseline

    try:
        baseline = load_baseline(Path(path))
    except BaselineError as exc:
        usage_error(str(exc))
    # Entries of files outside the linted paths cannot match: they are not stale, only out of this run's view.
    roots = [_display_name(p) for p in args.paths if p != "-"]
    if "-" in args.paths:
        roots.append(_display_name(args.stdin_filename) if args.stdin_filename else "-")
    return baseline.within(roots)


def _read_stdin(plan: Plan) -> None:
    """Standard input, up to --max-file-size (`--fix -` over it prints the input unchanged and exits)."""
    from vllmlint.source.files import TooLarge, read_stream

    args, options = plan.args, plan.options
    try:
        # sys.stdin.buffer: what click.get_binary_stream returns, which click 8.5 deprecates
        plan.stdin = read_stream(sys.stdin.buffer, options.max_file_size)
    except TooLarge as exc:
        plan.stdin, plan.stdin_too_large = b"", True
        if args.apply_fixes and not args.show_diff and not options.upgrade_to:
            _echo_unfixed_stdin(exc.head, _local_name(args.stdin_filename) if args.stdin_filename else "-",
                                options.max_file_size)


def _release(value: str | None, option: str, example: str) -> str | None:
    """A release number as given (`v0.10.1` -> `0.10.1`); exits 2 when it is not one."""
    if not value:
        return value
    from vllmlint.vllm.release import is_version

    if not is_version(value):
        usage_error(f"{option} {value!r} is not a release number such as {example}")
    return value.strip().lstrip("v")


def _show_files(plan: Plan) -> int:
    """--show-files: the files a run would lint, one a line; the exit code."""
    args, collection = plan.args, plan.collection
    from vllmlint.formatters.text import line_start_path  # never `::` first: GitHub would read a command

    for linted in collection.files:
        echo(terminal_safe(line_start_path(_local_name(linted))))
    if "-" in args.paths:
        echo(terminal_safe(line_start_path(_local_name(args.stdin_filename)) if args.stdin_filename else "-"))
    for absent in collection.missing:
        echo(f"vllmlint: error: {absent}: no such file or directory", err=True)
    return EXIT_ERROR if collection.missing or collection.failed else EXIT_CLEAN


class Ran:
    """What `run` gives `present`: the result, whether --fix met a file that changed, the output kept to replay."""

    def __init__(self, result, stale: bool = False, replay: _Shown | None = None):
        self.result, self.stale, self.replay = result, stale, replay


def run(plan: Plan) -> Ran:
    """Lint (or fix) as planned. --diff, --fix of standard input and --write-baseline end here (they exit)."""
    from vllmlint.engine import selected_notices
    from vllmlint.run import lint

    args, options, collection = plan.args, plan.options, plan.collection
    assert options is not None and collection is not None
    if plan.fixing and plan.stdin is not None and not options.upgrade_to:
        _fix_stdin(plan.stdin, plan.stdin_shown, options, args.paths, args.unsafe_fixes, args.show_diff,
                   plan.targets[0][0], plan.targets[0][1], plan.threshold, args.exit_zero, args.color,
                   local=_local_paths([], args.stdin_filename), quiet=args.quiet, show_fixes=args.show_fixes)
    if plan.fixing and (plan.stdin is not None or options.upgrade_to):
        usage_error("--fix and --diff edit files: they cannot be combined with `-` or --upgrade-to")
    ran = Ran(None)
    if plan.fixing:
        ran.result, ran.stale = _run_fixes(plan)
    else:
        if _replayable(options, plan.targets, plan.baseline, args.write_baseline_path, options.upgrade_to):
            ran.replay = _Shown.prepare(plan.feed, options, collection, plan.fail_on, plan.require_workloads,
                                        plan.min_level)
        ran.result = lint(plan.feed, options)
        if options.progress is not None:
            options.progress.close()
    result = ran.result
    if plan.context_files:
        _only_reported(plan, result)
    if result.upgrade is not None and not args.quiet:
        echo(f"vllmlint: note: --upgrade-to {result.upgrade.release}: {result.upgrade.added} new finding(s), "
             f"{result.upgrade.resolved} that the upgrade resolves", err=True)
    # Broken links, folders that cannot be listed: selected like the engine's notices (`--ignore VL005`).
    result.notices[:0] = selected_notices(collection.notices, result.rules)
    result.internal_error = result.internal_error or collection.failed
    if args.write_baseline_path:
        sys.exit(_write_baseline(plan, result))
    return ran


def _run_fixes(plan: Plan):
    """--fix and --diff: (the result after the fixes, whether a file changed meanwhile); --diff exits."""
    from vllmlint.fix.apply import fixes_listing, run_fixes

    args, files = plan.args, plan.files
    # Never through a link that leaves the given paths (--follow-links lints them, no fix writes them).
    outcome = run_fixes([str(f) for f in files], plan.options, unsafe=args.unsafe_fixes, write=not args.show_diff,
                        roots=[p for p in args.paths if p != "-"], outside=plan.collection.outside)
    local = _local_paths(files, args.stdin_filename)
    for shown, reason in outcome.refused:
        echo(f"vllmlint: warning: {local.get(shown, shown)}: fix not applied: {reason}", err=True)
    if args.show_fixes:
        echo(fixes_listing(outcome.fixes, args.show_diff, local), err=True, nl=False)
    if args.show_diff:
        # Raw when piped, so that `patch` applies it; a terminal sees the file's control characters
        # as escapes instead of obeying them.
        diff = _local_diff(outcome.diff, _local_paths(files))
        output = plan.targets[0][1]
        diff_stream = _open_output(output) if output else sys.stdout
        try:
            diff = terminal_safe(diff) if _is_terminal(diff_stream) else diff
            diff_stream.write(color_diff(diff) if _use_color(args.color, diff_stream) else diff)
        finally:
            if diff_stream is not sys.stdout:
                diff_stream.close()
        if not args.quiet:
            echo(f"vllmlint: {outcome.applied} fix(es) available in {len(outcome.files)} file(s)", err=True)
        sys.exit(EXIT_ERROR if plan.collection.missing or plan.collection.failed
                 else (EXIT_FINDINGS if outcome.applied and not args.exit_zero else EXIT_CLEAN))
    if not args.quiet:  # -q hides notes
        echo(f"vllmlint: fixed {outcome.applied} problem(s) in {len(outcome.files)} file(s)", err=True)
    assert outcome.result is not None  # run_fixes always lints
    return outcome.result, bool(outcome.stale)


def _only_reported(plan: Plan, result) -> None:
    """--context: keep what concerns the files given (findings, suppressed findings, notices, counts); the
    context's files were read so that cross-file rules see them, not to be reported on."""
    reported = {_display_name(f) for f in plan.files}
    if plan.stdin_shown:
        reported.add(plan.stdin_shown)
    result.findings = [f for f in result.findings if f.path in reported]
    result.suppressed = [f for f in result.suppressed if f.path in reported]
    result.known = [f for f in result.known if f.path in reported]
    result.notices = [n for n in result.notices if not n.path or n.path in reported]
    result.skipped = {path: why for path, why in result.skipped.items() if path in reported}
    result.files_checked = len(plan.to_lint) + len(plan.rendered)


def _write_baseline(plan: Plan, result) -> int:
    from vllmlint.baseline import write_baseline

    path = plan.args.write_baseline_path
    folder = os.path.dirname(path)
    try:  # its folder created, as --output's; a path that cannot be written is one line, exit 2
        if folder:
            os.makedirs(folder, exist_ok=True)
        count = write_baseline(Path(path), result.findings)
    except OSError as exc:
        usage_error(f"--write-baseline {path}: {exc.strerror or exc}")
    echo(f"vllmlint: wrote {count} finding(s) to the baseline {path}", err=True)
    return EXIT_ERROR if plan.collection.missing or result.internal_error else EXIT_CLEAN


def present(plan: Plan, ran: Ran) -> int:
    """Write the reports, then the notes and the summary (stderr); the exit code."""
    from vllmlint.formatters import Report, render_pieces
    from vllmlint.formatters.text import nothing_checked_line, notice_lines, summary_lines

    args, result, replay, missing = plan.args, ran.result, ran.replay, plan.collection.missing
    if plan.baseline is not None and not args.quiet:
        stale_entries = result.baseline_stale
        echo(f"vllmlint: note: {len(result.known)} finding(s) in the baseline not shown"
             + (f"; {stale_entries} baseline entr{'y no longer matches' if stale_entries == 1 else 'ies no longer match'}"
                if stale_entries else ""), err=True)
    local = _local_paths(plan.files, args.stdin_filename)
    notes = notice_lines(result.notices, local, show_notes=args.show_notes, quiet=args.quiet)
    nothing = missing and result.files_checked == 0  # no "All checks passed" for nothing
    # Nothing vLLM or Kubernetes in what was given (an empty folder, a chart's templates, a file over the size
    # limit, unrelated YAML): one line on stderr says what was not checked, instead of a summary that reads as a
    # pass. Exit 0 (pre-commit passes unrelated YAML files by name), 1 with --require-workloads.
    unchecked = None if nothing else nothing_checked_line(
        Report(files_checked=result.files_checked, workloads=result.workloads, invocations=result.invocations,
               objects=result.objects, skipped=result.skipped_counts()),
        "error" if plan.require_workloads else "warning")
    shown = result.findings
    if plan.min_level is not None:
        shown = [f for f in shown if f.severity >= plan.min_level]
    notes_printed = False
    for fmt, output in plan.targets:
        stream = _open_output(output) if output else sys.stdout
        text = fmt in _TEXT_FORMATS
        report = Report(findings=shown, suppressed=result.suppressed, notices=result.notices,
                        rules=result.rules, sources=result.sources, files_checked=result.files_checked,
                        color=text and _use_color(args.color, stream), quiet=args.quiet,
                        statistics=args.statistics, sarif_category=args.sarif_category,
                        show_suppressed=args.show_suppressed, failed=bool(missing or result.internal_error),
                        errors=[f"{path}: no such file or directory" for path in missing],
                        local_paths=local if text else {}, unsafe_fixes=args.unsafe_fixes, fail_on=plan.threshold,
                        show_notes=args.show_notes, invocations=result.invocations,
                        # --context: the engine counted the context's workloads too; the summary names the files
                        workloads=None if plan.context_files else result.workloads,
                        objects=result.objects, skipped=result.skipped_counts(),
                        below_min_level=len(result.findings) - len(shown))
        # Text on the terminal: findings, then the notes (stderr), then the summary line, so that the
        # summary is what the user reads last.
        summary_after_notes = text and not output and not args.quiet
        report.summary = not summary_after_notes
        try:
            if not (text and nothing):
                pieces = render_pieces(fmt, report)
                if plan.options.cache_dir is not None and fmt == "text":  # the text of a cached result, kept with it
                    from vllmlint.run.cache import rendered as kept_text

                    pieces = kept_text(fmt, report, pieces)
                for piece in pieces:
                    _write(replay, stream, piece)
                stream.flush()
            if summary_after_notes:
                for line in notes:
                    _echo_err(replay, line)
                notes_printed = True
                if unchecked is not None and not result.findings:
                    _echo_err(replay, unchecked)  # instead of a summary that would read as a pass
                    unchecked = None
                elif not nothing:
                    sys.stderr.flush()
                    _write(replay, stream, "".join(line + "\n" for line in summary_lines(report)))
        finally:
            if output:
                stream.close()
    if not notes_printed:
        for line in notes:
            _echo_err(replay, line)
        # The github format on standard output (GitHub Actions' default) annotates; the log still ends with the
        # summary a reader of the job's log looks for (as ruff prints "Found N errors." after its annotations).
        if any(fmt == "github" and not output for fmt, output in plan.targets) and not args.quiet and not nothing \
                and (unchecked is None or result.findings):
            summary = Report(findings=shown, files_checked=result.files_checked, fail_on=plan.threshold,
                             invocations=result.invocations, objects=result.objects,
                             workloads=None if plan.context_files else result.workloads,
                             skipped=result.skipped_counts(), below_min_level=len(result.findings) - len(shown),
                             suppressed=result.suppressed)
            for line in summary_lines(summary):
                _echo_err(replay, line)
    if unchecked is not None and (not result.findings or plan.require_workloads):
        _echo_err(replay, unchecked)
    for path in missing:
        _echo_err(replay, f"vllmlint: error: {path}: no such file or directory")
    if missing or result.internal_error:
        return EXIT_ERROR
    if args.exit_zero:
        code = EXIT_CLEAN
    elif ran.stale:  # a file changed while --fix ran: its fixes were not written, which is not a clean run
        code = EXIT_FINDINGS
    elif plan.require_workloads and result.understood_nothing:
        code = EXIT_FINDINGS
    else:  # every finding counts, also those under --min-level (a display threshold)
        code = EXIT_FINDINGS if any(f.severity >= plan.threshold for f in result.findings) else EXIT_CLEAN
    if replay is not None:
        replay.keep(code)
    return code


# The text format's names: `text` (= `full`, excerpts and help) and `concise` (one line per finding).
_TEXT_FORMATS = ("text", "full", "concise")


# --- a cached run's output, shown again --------------------------------------------------------------------
# A run over unchanged inputs replays its result (vllmlint.cache); rebuilding the 7,667 findings of 1,000 files
# from the entry costs more than the rest of the run. Their text report on standard output is a function of the
# result and of how it is shown (the command line, the current folder, the terminals, the configuration's
# fail-on, the collection's notices), so the whole output of such a run (what it wrote, in order) and its exit
# code are kept under the result's key and all of those, and a run with the same key writes them again without
# reading the result. Only for the plain case: text on standard output, no fix, diff, baseline or --upgrade-to.
def _replayable(options, targets, baseline, write_baseline_path, upgrade_to) -> bool:
    return (options.cache_dir is not None and targets == [("text", None)] and baseline is None
            and not write_baseline_path and not upgrade_to and options.progress is None)


class _Shown:
    """What a run writes (standard output, and the lines it echoes to standard error), kept to be written again."""

    def __init__(self, key: str, result_key: str, folder: str):
        self.key, self.result_key, self.folder = key, result_key, folder
        self.writes: list[tuple[int, str]] = []

    @classmethod
    def prepare(cls, feed, options, collection, fail_on, require_workloads, min_level=None) -> _Shown | None:
        """None when the run cannot be kept; exits when it was kept before (writing it again)."""
        from vllmlint.run import cache

        key = cache.result_key(feed, options)
        if key is None:
            return None
        streams = [(getattr(s, "encoding", None), getattr(s, "errors", None), _is_terminal(s))
                   for s in (sys.stdout, sys.stderr)]
        environment = {name: os.environ.get(name) for name in _SHOWN_ENVIRONMENT}
        how = repr((key, sys.argv[1:], os.getcwd(), streams, environment, fail_on, require_workloads, min_level,
                    [(n.code, n.message, n.path, n.line, n.level) for n in collection.notices],
                    collection.missing, collection.failed, "click" in sys.modules))
        kept = cache.shown(options.cache_dir, how, key)
        replay = cls(cache.shown_key(how), key, options.cache_dir)
        if kept is not None:
            writes, code = kept
            for where, text in writes:
                if where:
                    sys.stdout.flush()  # in the order written
                    echo(text, err=True)
                else:
                    write_in_pieces(sys.stdout, text)
            sys.stdout.flush()
            sys.exit(code)
        return replay

    def keep(self, code: int) -> None:
        from vllmlint.run import cache

        cache.keep_shown(self.folder, self.key, self.result_key, self.writes, code)


# Environment variables that change how the text is written (colour, click's terminal handling).
_SHOWN_ENVIRONMENT = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "COLUMNS", "GITHUB_ACTIONS")


def _write(shown: _Shown | None, stream, text: str) -> None:
    write_in_pieces(stream, text)
    if shown is not None:
        shown.writes.append((0, text))


def _echo_err(shown: _Shown | None, line: str) -> None:
    echo(line, err=True)
    if shown is not None:
        shown.writes.append((1, line))


def _run_options(options, no_cache: bool, jobs: int | None) -> None:
    """The cache (off with --no-cache or VLLMLINT_NO_CACHE=1, and under --render: it runs tools) and the processes
    of a run."""
    if not no_cache and os.environ.get("VLLMLINT_NO_CACHE", "") in ("", "0"):
        from vllmlint.run.cache import cache_dir

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
    fmts = [("text" if fmt == "full" else fmt) for fmt in formats] or [default]
    outs: list[str | None] = list(outputs)
    if len(fmts) == 1 and len(outs) <= 1:
        return [(fmts[0], outs[0] if outs else None)]
    if not formats:
        usage_error(f"{len(outs)} --output and no --format: give each --output the --format it writes "
                     "(`--format json --output r.json`)")
    if order is None or len(order) != len(fmts) + len(outs):
        order = ["formats"] * len(fmts) + ["outputs"] * len(outs)  # called without the command line
    targets: list[list] = []
    next_format, next_output = iter(fmts), iter(outs)
    for name in order:
        if name == "outputs":
            output = next(next_output)
            if not targets or targets[-1][1] is not None:
                usage_error(f"--output {output} follows no --format of its own: write `--format X --output FILE`")
            targets[-1][1] = output
        else:
            targets.append([next(next_format), None])
    if sum(1 for _, output in targets if output is None) > 1:
        usage_error(f"{len(fmts)} --format and {len(outs)} --output: give each --format its --output "
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
        usage_error(f"--output {path}: {exc.strerror or exc}")


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
    echo(f"vllmlint: warning: {shown}: not fixed, printed unchanged: {too_large_message(None, limit)}", err=True)
    sys.exit(EXIT_CLEAN)


def _fix_stdin(data: bytes, filename: str | None, options, paths, unsafe: bool, show_diff: bool, fmt: str,
               output: str | None, threshold: Severity, exit_zero: bool = False, color: str = "auto",
               local: dict[str, str] | None = None, quiet: bool = False, show_fixes: bool = False) -> NoReturn:
    """`vllmlint --fix --stdin-filename x.yaml -`: the fixed text on stdout (for editors that fix on
    save), the findings that remain on stderr (or --output); `--diff -` prints the diff instead."""
    from vllmlint.source.helm import split_helm_output
    from vllmlint.fix.apply import fix_text, fixes_listing
    from vllmlint.formatters import Report, render
    from vllmlint.source.files import read_text

    if len(paths) > 1:
        usage_error("--fix on standard input (`-`) fixes that one text: give no other path")
    text, problem = read_text(data)
    if text is None or problem:
        usage_error(f"--fix on standard input: {problem or 'not text'}")
    if data.startswith(b"\xef\xbb\xbf"):  # read_text drops a byte-order mark; fix_text keeps one it sees
        text = "\ufeff" + text
    if split_helm_output(text):
        usage_error("--fix on standard input fixes one file, not `helm template` output: fix the chart's sources")
    shown = filename or "-"
    local = local or {}
    outcome = fix_text(text, shown, options, unsafe=unsafe)
    if outcome.refused:
        echo(f"vllmlint: warning: {local.get(shown, shown)}: fix not applied: {outcome.refused}", err=True)
    result = outcome.result
    if show_fixes:
        echo(fixes_listing([(shown, code, why) for code, why in outcome.fixes], show_diff, local), err=True, nl=False)
    fixed = outcome.diff if show_diff else outcome.text  # the diff built from the edits: linear in their number
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
        echo(f"vllmlint: {'fixable' if show_diff else 'fixed'} {outcome.applied} problem(s) in "
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


def write_in_pieces(stream: IO[str], text: str, piece: int = 1 << 20) -> None:
    """`stream.write(text)` a megabyte of characters at a time: a text stream encodes what it is given in one
    piece, so a large report (36 MB of text for 10,000 files) was in memory twice, as text and as bytes."""
    if len(text) <= piece:
        stream.write(text)
        return
    for start in range(0, len(text), piece):
        stream.write(text[start:start + piece])
