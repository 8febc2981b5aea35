"""The console script and `python -m vllmlint`: the lint command line (`vllmlint [check] [PATH...] [OPTIONS]`, also
`vllmlint --help`) is read by check_options.parse and run without importing click, which costs a fifth of a
one-file run; the other commands go to click's command line (cli.py), whose `check` calls the same parser.
"""
from __future__ import annotations

import os
import sys

from vllmlint.gc_policy import GC_THRESHOLD, gc_tuned

__all__ = ["GC_THRESHOLD", "main"]


def main() -> None:
    """The console script: the lint command line on its own, anything else through click."""
    import gc

    if gc_tuned():
        gc.set_threshold(*GC_THRESHOLD)  # before the run's imports: the modules' code, functions and classes live on
    from vllmlint.check import run_guarded

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


def _run_check(argv: list[str]) -> None:
    """`check` with click's parameters, ended as click's standalone `main` ends a command: an interrupt (or end of
    input) prints a blank line and `Aborted!` and exits 1; a closed pipe exits 1 and silences later flushes."""
    from vllmlint.check import echo, lint_command_line

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
