"""A progress line on standard error for long runs on a terminal: `vllmlint: 5230/10000 files read`, then
`vllmlint: 10000 files read; rules 12/60`, rewritten in place and erased before the report is printed.

Shown only when standard error is a terminal, the run is not `--quiet`, and the run has lasted DELAY seconds
(a pre-commit run on a few files never draws it); redrawn at most every INTERVAL seconds.
"""
from __future__ import annotations

import time
from typing import IO

DELAY = 0.5
INTERVAL = 0.1


class Progress:
    def __init__(self, total: int, stream: IO[str], clock=time.monotonic):
        self.total = total
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.last = 0.0
        self.drawn = False
        self.read = 0

    def files(self, done: int) -> None:
        """`done` files of the run read and parsed so far."""
        self.read = done
        self._draw(f"{min(done, self.total) if self.total else done}/{self.total} files read")

    def rules(self, done: int, total: int) -> None:
        """`done` of `total` rules checked (by this process)."""
        self._draw(f"{self.read} file{'' if self.read == 1 else 's'} read; rules {done}/{total}")

    def close(self) -> None:
        """Erase the line (before anything else is printed)."""
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False

    def _draw(self, text: str) -> None:
        now = self.clock()
        if now - self.started < DELAY or now - self.last < INTERVAL:
            return
        self.last = now
        self.stream.write(f"\r\x1b[Kvllmlint: {text}")
        self.stream.flush()
        self.drawn = True


def for_run(total: int, quiet: bool, stream: IO[str]) -> Progress | None:
    """A progress line for a run of `total` files, or None: `--quiet`, or standard error is no terminal."""
    if quiet or not (hasattr(stream, "isatty") and stream.isatty()):
        return None
    return Progress(total, stream)
