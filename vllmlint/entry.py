"""The console script and `python -m vllmlint`: the common command line (`vllmlint [check] PATH... [OPTIONS]`, the
pre-commit case) runs the check without importing click; anything else goes to click's command line (cli.py).

check_options.parse_check_argv decides: it answers only where it reads the command line exactly as click would,
so errors, help and the other commands are click's, unchanged. click costs a fifth of a one-file run.
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
    """The console script: `check` on its own when the command line is one the fast parser is sure of, else click."""
    import gc

    gc.set_threshold(*GC_THRESHOLD)  # before the imports too: the modules' code, functions and classes live on
    from vllmlint.check_options import parse_check_argv

    parsed = parse_check_argv(sys.argv[1:])
    if parsed is None:
        from vllmlint.cli import main as click_main

        click_main()
        return
    params, order = parsed
    run_guarded(lambda: _run_check(params, order))


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


def _run_check(params: dict, order: list[str]) -> None:
    """`check` with click's parameters, ended as click's standalone `main` ends a command: an interrupt (or end of
    input) prints a blank line and `Aborted!` and exits 1; a closed pipe exits 1 and silences later flushes."""
    from vllmlint.check import echo, run_check

    try:
        try:
            run_check(**params, format_order=order)
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
