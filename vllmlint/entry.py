"""The console script and `python -m vllmlint`: the lint command line (`vllmlint [check] [PATH...] [OPTIONS]`, also
`vllmlint --help`) is read by check_options.parse and run without importing click, which costs a fifth of a
one-file run; the other commands go to click's command line (cli.py), whose `check` calls the same parser.
"""
from __future__ import annotations

import os
import sys

# The cyclic GC runs a generation-0 pass every 700 new container objects by default; a run builds hundreds of
# thousands of YAML nodes that all live to the end, so those passes find nothing. A larger threshold for this
# one-shot process: 1,000 files of bench/bench.py's corpus 4.16 s -> 2.87 s, peak memory 139 -> 146 MB
# (measured 2026-12-01). Only the console script sets it; the library leaves the embedding process alone.
GC_THRESHOLD = (100_000, 50, 100)


def main() -> None:
    """The console script: the lint command line on its own, anything else through click."""
    import gc

    gc.set_threshold(*GC_THRESHOLD)  # before the imports too: the modules' code, functions and classes live on
    argv = sys.argv[1:]
    if argv[:1] == ["check"]:
        argv = argv[1:]
    elif _for_click(argv):
        from vllmlint.cli import main as click_main

        click_main()
        return
    elif argv[:1] in (["-h"], ["--help"]):
        argv = argv[:1]
    run_guarded(lambda: _run_check(argv))


def _for_click(argv: list[str]) -> bool:
    """Whether the command line is another command's (or `--version`, a typo of a command, shell completion)."""
    from vllmlint.check_options import COMMANDS, looks_like_a_command

    if any(key.startswith("_") and key.endswith("_COMPLETE") and value for key, value in os.environ.items()):
        return True  # click answers shell completion
    if not argv:
        return False
    first = argv[0]
    return first in ("-V", "--version") or first in COMMANDS or (first[:1] != "-" and looks_like_a_command(first))


def lint_command_line(argv: list[str]) -> None:
    """`vllmlint check ARGV`: parsed by check_options.parse (its help, its usage errors), then run."""
    from vllmlint.check import echo, run_check, usage_error
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

    from vllmlint.check import EXIT_ERROR, echo

    gc.set_threshold(*GC_THRESHOLD)
    # At exit the interpreter collects garbage over every object still alive: the whole model and result of the
    # run (the engine gives them back to the GC when the rules are done), a fifth of a 1,000-file run for nothing.
    # Frozen, they are left to the process's end (atexit runs before that collection).
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


def _run_check(argv: list[str]) -> None:
    """`check` with click's parameters, ended as click's standalone `main` ends a command: an interrupt (or end of
    input) prints a blank line and `Aborted!` and exits 1; a closed pipe exits 1 and silences later flushes."""
    from vllmlint.check import echo

    try:
        try:
            lint_command_line(argv)
        except (EOFError, KeyboardInterrupt):
            echo("", err=True)
            echo("Aborted!", err=True)
            sys.exit(1)
        except OSError as exc:
            import errno

            if exc.errno != errno.EPIPE:
                raise
            sys.stdout = _PipeClosed(sys.stdout)
            sys.stderr = _PipeClosed(sys.stderr)
            sys.exit(1)
    except (EOFError, KeyboardInterrupt):  # a second interrupt while reporting the first
        sys.exit(1)


class _PipeClosed:
    """A standard stream whose reader went away: flushing it again is not an error (click's PacifyFlushWrapper)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped

    def flush(self) -> None:
        import errno

        try:
            self.wrapped.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, attr):
        return getattr(self.wrapped, attr)
