"""The rules of a large run checked by forked copies of this process, on the model already built (`--jobs`).

The engine asks its `Linter.checker` (set by the runner) for the outcomes of the rules checked elsewhere; any rule
not reported is checked by the engine itself, so the result never depends on who checked what.
"""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Callable

from vllmlint.engine import RuleOutcome, check_rule, rule_severity
from vllmlint.finding import Notice

if TYPE_CHECKING:
    from vllmlint.engine import LintOptions
    from vllmlint.k8s.objects import World
    from vllmlint.progress import Progress
    from vllmlint.registry import Rule


# Below this many files, `jobs=0` (automatic: the console script's default) checks in one process. Measured on
# 1,000 files of bench/bench.py's corpus (2026-12-01, a loaded 2-core machine, CPU seconds): the rules take 2.43 s
# in one process; with two, this process's share took 1.17 s and the copy's about 1.4 s (rules no longer share
# what they compute lazily: +11% CPU), plus a fork of ~10 ms. At 200 files the rules take ~0.5 s, where the
# second core starts to win back more than the copy costs.
PARALLEL_MIN_FILES = 200
MAX_AUTO_JOBS = 4


def parallel_jobs(options: LintOptions, files: int) -> int:
    """How many processes check the rules of a run of `files` files: `options.jobs` (0: automatic; None: one,
    the library's default, so that an embedding process is never forked behind its back)."""
    if options.jobs is None or options.jobs == 1 or (options.jobs == 0 and files < PARALLEL_MIN_FILES):
        return 1
    import threading  # only here: a one-file run never forks

    if not hasattr(os, "fork") or sys.platform != "linux" or threading.active_count() > 1:
        return 1  # forking is safe only in a single-threaded process on Linux (macOS frameworks are not)
    if options.jobs == 0:
        # Cores other programs keep busy are no help: on a loaded machine a copy costs more than it saves (the
        # bench measured --jobs 2 at 0.82x on 1,000 files with a load of 4 on 2 cores).
        idle = (os.cpu_count() or 1) - int(os.getloadavg()[0] if hasattr(os, "getloadavg") else 0)
        return max(1, min(idle, MAX_AUTO_JOBS))
    return options.jobs


def checks_in_processes(world: World, rules: list[Rule], options: LintOptions) -> dict[str, RuleOutcome]:
    """The outcomes of `rules`, checked by this process and forked copies of it on the model already built
    (nothing is read or parsed twice; the copies run no code of the linted tree, only the rules). Each process
    takes the next rule not yet taken (a counter in shared memory), so a slow rule does not leave the others
    idle. The result is the same as one process's: the caller merges the outcomes back in rule order, and checks
    itself any rule a copy that failed did not report."""
    jobs = parallel_jobs(options, len(world.sources))
    checked = [r for r in rules if r.kind == "result" and r.code != "VL001"]
    if jobs < 2 or len(checked) < 2:
        return {}
    import pickle

    take = rule_counter()
    if take is None:
        return {}

    def work(progress: Progress | None = None) -> dict[str, RuleOutcome]:
        outcomes: dict[str, RuleOutcome] = {}
        number = take()
        while number < len(checked):
            rule = checked[number]
            outcome = check_rule(world, rule, rule_severity(rule, options))
            outcomes[rule.code] = fixes_built(outcome, options.fixes) if progress is None else outcome
            if progress is not None:
                progress.rules(number + 1, len(checked))
            number = take()
        return outcomes

    children: list[tuple[int, int]] = []
    for _ in range(jobs - 1):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the copy: check what it takes, send the outcomes, leave without running anything else
            code = 0
            try:
                os.close(read)
                outcomes = work()
                with os.fdopen(write, "wb") as out:
                    pickle.dump(outcomes, out, protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(write)
        children.append((pid, read))
    done = work(options.progress)
    for pid, read in children:
        try:
            with os.fdopen(read, "rb") as stream:
                done.update(pickle.load(stream))
        except Exception:  # noqa: S110  (the copy died: the caller checks its rules here)
            pass
        finally:
            os.waitpid(pid, 0)
    return done


def rule_counter() -> Callable[[], int] | None:
    """The number of the next rule to check, shared by the processes (a counter in shared memory); None where
    shared memory is not available (no /dev/shm in some containers): the run stays in one process."""
    try:
        import multiprocessing

        counter = multiprocessing.get_context("fork").Value("i", 0)
    except Exception:
        return None

    def take() -> int:
        with counter.get_lock():
            number = counter.value
            counter.value = number + 1
        return number

    return take


def fixes_built(outcome: RuleOutcome, needed: bool) -> RuleOutcome:
    """A forked copy's outcome with its pending fixes (`Context.lazy_fix`) built, or dropped when the run uses no
    fixes: a pending fix holds the model it reads, which must not cross the pipe. The copy builds them for every
    finding (it does not know which ones the user is shown); the fixes are the same as the serial run's."""
    from vllmlint.checks import PendingFix

    findings, notices = outcome
    notices = list(notices)
    for finding in findings:
        if isinstance(finding.fix, PendingFix):
            finding.fix, failure = finding.fix.build() if needed else (None, None)
            if failure is not None:
                notices.append(Notice(finding.code, f"internal error in rule {finding.code} building a fix: {failure}",
                                      "", 0, "error"))
    return findings, notices
