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
from typing import IO, TYPE_CHECKING, NoReturn

from vllmlint.finding import Severity

if TYPE_CHECKING:
    from vllmlint.baseline import Baseline

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


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
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def _usage_error(message: str) -> NoReturn:
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


def _did_you_mean(word: str, choices: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def run_check(paths, formats, output_formats, outputs, exit_zero, show_files, fail_on, select, ignore,
              extend_select, extend_ignore, exclude, vllm_version, config_path, no_config,
              stdin_filename, color, quiet, show_notes, statistics, sarif_category, max_file_size, upgrade_to,
              show_suppressed, require_suppression_reason, baseline_path, write_baseline_path,
              apply_fixes, show_diff, unsafe_fixes, follow_links, require_workloads, render, helm_values,
              hf_cache=None, online=None, no_cache=False, jobs=None, format_order=(), show_fixes=False) -> NoReturn:
    """`vllmlint check`: lint PATHS (files, folders, or - for standard input) and exit. The parameters are
    check_command's, from click's parsing or check_options.parse_check_argv; `format_order` is the command-line
    order of --format/--output-format/--output (`_targets`)."""
    from vllmlint.config import Config, ConfigError, find_config, load_config
    from vllmlint.engine import Linter, LintOptions, lint
    from vllmlint.registry import all_rules, unknown_selectors
    from vllmlint.source.files import CHART_FILE, TooLarge, collect, read_stream

    if not paths:
        _usage_error("no paths given: try `vllmlint manifests/`, or `-` to read standard input")
    if formats and output_formats:
        _usage_error("give --format or its alias --output-format, not both")
    targets = _targets(formats or output_formats, outputs,
                       list(format_order))
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
    options.stream = True  # large runs in chunks (vllmlint.stream): same result, a bounded model
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
    to_lint, rendered, render_notices = files, [], []  # type: ignore[var-annotated]  # render's types, unimported
    # Without --render, the renderer's module has work only for a chart (its notice).
    if not show_files and (render or any(f.name == CHART_FILE for f in files)):
        from vllmlint.render import prepare

        to_lint, rendered, render_notices = prepare(files, render, list(helm_values))
    if not (show_files or apply_fixes or show_diff):
        from vllmlint.progress import for_run

        options.progress = for_run(len(to_lint), quiet, sys.stderr)  # erased before anything else is printed
    # --stdin-filename names the text as a path on the command line would: repository-relative in
    # findings, per-file-ignores and fingerprints, relative to the current folder in text output.
    stdin_shown = _display_name(stdin_filename) if stdin_filename else None
    if show_files:
        for linted in files:
            echo(terminal_safe(_local_name(linted)))
        if "-" in paths:
            echo(terminal_safe(_local_name(stdin_filename) if stdin_filename else "-"))
        for absent in missing:
            echo(f"vllmlint: error: {absent}: no such file or directory", err=True)
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
            from vllmlint.render import feed_rendered

            feed_rendered(linter, folder)
        if stdin_too_large:
            linter.skip_too_large(stdin_shown or "-", None)
        elif stdin is not None:
            linter.add_stdin(stdin, stdin_shown)

    if (apply_fixes or show_diff) and stdin is not None and not upgrade_to:
        _fix_stdin(stdin, stdin_shown, options, paths, unsafe_fixes, show_diff, targets[0][0], targets[0][1],
                   Severity.parse(fail_on), exit_zero, color, local=_local_paths([], stdin_filename), quiet=quiet,
                   show_fixes=show_fixes)
    if (apply_fixes or show_diff) and (stdin is not None or upgrade_to):
        _usage_error("--fix and --diff edit files: they cannot be combined with `-` or --upgrade-to")
    stale = False
    replay: _Shown | None = None  # the output kept to be written again (`_Shown`)
    if apply_fixes or show_diff:
        from vllmlint.fix.apply import fixes_listing, run_fixes

        # Never through a link that leaves the given paths (--follow-links lints them, no fix writes them).
        outcome = run_fixes([str(f) for f in files], options, unsafe=unsafe_fixes, write=not show_diff,
                            roots=[p for p in paths if p != "-"], outside=collection.outside)
        local = _local_paths(files, stdin_filename)
        for shown, reason in outcome.refused:
            echo(f"vllmlint: warning: {local.get(shown, shown)}: fix not applied: {reason}", err=True)
        if show_fixes:
            echo(fixes_listing(outcome.fixes, show_diff, local), err=True, nl=False)
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
                echo(f"vllmlint: {outcome.applied} fix(es) available in {len(outcome.files)} file(s)", err=True)
            sys.exit(EXIT_ERROR if missing or collection.failed
                     else (EXIT_FINDINGS if outcome.applied and not exit_zero else EXIT_CLEAN))
        if not quiet:  # -q hides notes
            echo(f"vllmlint: fixed {outcome.applied} problem(s) in {len(outcome.files)} file(s)", err=True)
        assert outcome.result is not None  # run_fixes always lints
        result = outcome.result
        stale = bool(outcome.stale)
    else:
        if _replayable(options, targets, baseline, write_baseline_path, upgrade_to):
            replay = _Shown.prepare(feed, options, collection, fail_on, require_workloads)
        result = lint(feed, options)
        if options.progress is not None:
            options.progress.close()
    if result.upgrade is not None and not quiet:
        echo(f"vllmlint: note: --upgrade-to {result.upgrade.release}: {result.upgrade.added} new finding(s), "
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
        echo(f"vllmlint: wrote {count} finding(s) to the baseline {write_baseline_path}", err=True)
        sys.exit(EXIT_ERROR if missing or result.internal_error else EXIT_CLEAN)
    if baseline is not None and not quiet:
        stale_entries = result.baseline_stale
        echo(f"vllmlint: note: {len(result.known)} finding(s) in the baseline not shown"
                   + (f"; {stale_entries} baseline entr{'y no longer matches' if stale_entries == 1 else 'ies no longer match'}"
                      if stale_entries else ""), err=True)

    threshold = Severity.parse(fail_on)
    from vllmlint.formatters import Report, render, render_pieces
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
                pieces = render_pieces(fmt, report)
                if options.cache_dir is not None and fmt == "text":  # the text of a cached result, kept with it
                    from vllmlint.cache import rendered as kept_text

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
    if unchecked is not None and (not result.findings or require_workloads):
        _echo_err(replay, unchecked)
    for path in missing:
        _echo_err(replay, f"vllmlint: error: {path}: no such file or directory")
    if missing or result.internal_error:
        sys.exit(EXIT_ERROR)
    if exit_zero:
        code = EXIT_CLEAN
    elif stale:  # a file changed while --fix ran: its fixes were not written, which is not a clean run
        code = EXIT_FINDINGS
    elif require_workloads and result.understood_nothing:
        code = EXIT_FINDINGS
    else:
        code = EXIT_FINDINGS if any(f.severity >= threshold for f in result.findings) else EXIT_CLEAN
    if replay is not None:
        replay.keep(code)
    sys.exit(code)


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
    def prepare(cls, feed, options, collection, fail_on, require_workloads) -> _Shown | None:
        """None when the run cannot be kept; exits when it was kept before (writing it again)."""
        from vllmlint import cache

        key = cache.result_key(feed, options)
        if key is None:
            return None
        streams = [(getattr(s, "encoding", None), getattr(s, "errors", None), _is_terminal(s))
                   for s in (sys.stdout, sys.stderr)]
        environment = {name: os.environ.get(name) for name in _SHOWN_ENVIRONMENT}
        how = repr((key, sys.argv[1:], os.getcwd(), streams, environment, fail_on, require_workloads,
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
        from vllmlint import cache

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
    echo(f"vllmlint: warning: {shown}: not fixed, printed unchanged: {too_large_message(None, limit)}", err=True)
    sys.exit(EXIT_CLEAN)


def _fix_stdin(data: bytes, filename: str | None, options, paths, unsafe: bool, show_diff: bool, fmt: str,
               output: str | None, threshold: Severity, exit_zero: bool = False, color: str = "auto",
               local: dict[str, str] | None = None, quiet: bool = False, show_fixes: bool = False) -> NoReturn:
    """`vllmlint --fix --stdin-filename x.yaml -`: the fixed text on stdout (for editors that fix on
    save), the findings that remain on stderr (or --output); `--diff -` prints the diff instead."""
    from vllmlint.engine import split_helm_output
    from vllmlint.fix.apply import fix_text, fixes_listing
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
