"""The progress line (vllmlint.progress): on a terminal's standard error for long runs, never in a pipe or
with --quiet, erased before the report."""
import io
import os
import pty
import subprocess
import sys

import pytest

from conftest import ROOT
from conftest import bench_module
from vllmlint.progress import Progress, for_run


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_drawn_after_the_delay_rewritten_in_place_and_erased():
    stream, clock = Terminal(), Clock()
    progress = Progress(1000, stream, clock)
    progress.files(10)
    assert stream.getvalue() == ""  # the first half second: a short run never shows it
    clock.now = 0.6
    progress.files(523)
    clock.now = 0.65
    progress.files(524)  # within the interval: not redrawn
    clock.now = 0.8
    progress.rules(12, 60)
    progress.close()
    assert stream.getvalue() == ("\r\x1b[Kvllmlint: 523/1000 files read"
                                 "\r\x1b[Kvllmlint: 524 files read; rules 12/60\r\x1b[K")


def test_only_on_a_terminal_and_not_quiet():
    assert for_run(10, False, io.StringIO()) is None  # a pipe or a file
    assert for_run(10, True, Terminal()) is None  # --quiet
    assert isinstance(for_run(10, False, Terminal()), Progress)


def test_close_without_drawing_writes_nothing():
    stream = Terminal()
    Progress(5, stream, Clock()).close()
    assert stream.getvalue() == ""


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
@pytest.mark.parametrize("quiet", [False, True])
def test_a_long_run_on_a_terminal_shows_it(tmp_path, quiet):
    bench_module().generate(tmp_path / "tree", 300, seed=3)
    master, slave = pty.openpty()
    env = dict(os.environ, NO_COLOR="1")
    # The line waits DELAY seconds and redraws every INTERVAL: both 0 here, so what is drawn does not depend on how
    # fast the machine is (300 files took under DELAY on a quiet one, and nothing was drawn).
    run = ("import sys, vllmlint.progress as p; p.DELAY = p.INTERVAL = 0; sys.argv = ['vllmlint', *sys.argv[1:]]; "
           "from vllmlint.entry import main; main()")
    args = [sys.executable, "-c", run, "--no-cache", *(["-q"] if quiet else []), str(tmp_path / "tree")]
    report = tmp_path / "report.txt"
    with open(report, "wb") as stdout:
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=stdout, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=300)
    os.close(master)
    out = report.read_text()
    assert proc.returncode == 1 and "VL102" in out
    text = seen.decode()
    if quiet:
        assert "files read" not in text
    else:
        assert "300 files read" in text  # "N/300 files read" while reading (a slow machine), then "300 files read"
        assert "rules " in text
        # Erased before the notes (and the summary) were printed.
        last = text.rindex("files read") if "rules" not in text else text.rindex("rules ")
        assert "\r\x1b[K" in text[last:]
        assert "vllmlint: note:" in text[last:]


def test_not_in_a_pipe(tmp_path):
    bench_module().generate(tmp_path, 300, seed=3)
    proc = subprocess.run([sys.executable, "-m", "vllmlint", "--no-cache", str(tmp_path)], cwd=ROOT,
                          capture_output=True, timeout=300)
    assert b"files read" not in proc.stderr
    assert b"\x1b" not in proc.stderr
