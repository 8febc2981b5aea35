"""The `lint` entry: a run's inputs (a feed) to its result, through the result cache, the processes and the GC policy."""
from __future__ import annotations

import gc
from typing import Callable

from vllmlint.engine import Linter, LintOptions, LintResult, upgrade_result
from vllmlint.records import replace
from vllmlint.run.processes import checks_in_processes
from vllmlint.source.files import collect_files, is_kustomization
from vllmlint.source.shell import scripts_read_once

# adds the run's inputs (files, standard input) to a fresh Linter. `Linter`, not "Linter": a string becomes a
# ForwardRef, whose compile() sets up the compiler's AST types at every start (9 M instructions, measured).
Feed = Callable[[Linter], None]


def lint(feed: Feed, options: LintOptions) -> LintResult:
    """The whole result of a run, as the command line shows it: the rules, suppressions, per-file
    ignores and the baseline; with `options.upgrade_to`, only the findings that moving every workload
    to that release adds (two runs over the same inputs, compared by fingerprint)."""
    if options.cache_dir is not None:
        from vllmlint.run.cache import cached_lint

        return cached_lint(feed, options, uncached_lint)
    return uncached_lint(feed, options)


def uncached_lint(feed: Feed, options: LintOptions) -> LintResult:
    if not options.upgrade_to:
        return _model_released(lint_once(feed, options), options)
    today = lint_once(feed, replace(options, upgrade_to=None, baseline=None))
    after = lint_once(feed, replace(options, baseline=None))
    return upgrade_result(today, after, options)


def lint_once(feed: Feed, options: LintOptions) -> LintResult:
    """One run in one piece: every input read into one world, the rules checked on it (in forked copies too, on
    large runs: `processes`). The readers, the build and the rules read each script once between them."""
    with scripts_read_once():
        return _lint_once(feed, options)


def _lint_once(feed: Feed, options: LintOptions) -> LintResult:
    linter = Linter(options)
    linter.checker = checks_in_processes
    if options.freeze_gc:
        linter.on_read = _freeze_every
    feed(linter)
    if options.follow_links:
        add_kustomize_resources(linter)
    world = linter.build()
    if not options.freeze_gc:
        return linter.check(world)
    gc.freeze()
    try:
        return linter.check(world)
    finally:
        gc.unfreeze()  # the model is garbage once the result is rendered: the GC may take it back


def add_kustomize_resources(linter: Linter) -> None:
    """--follow-links: the local resources the run's Kustomizations build from, added to the run as a link the
    paths lead out through is followed (without it, the engine notes each one not read)."""
    from vllmlint.source.kustomize import files_to_add

    for _ in range(MAX_KUSTOMIZE_DEPTH):
        if not any(is_kustomization(shown) for shown in linter.result.sources):
            return
        extra = files_to_add(linter.result.sources, linter.real_paths)
        if not extra:
            return
        for path in extra:
            linter.add_file(path)


MAX_KUSTOMIZE_DEPTH = 20  # bases of bases followed


def lint_paths(paths: list[str], options: LintOptions | None = None) -> tuple[LintResult, list[str]]:
    """`lint` of the files under `paths` (files and folders), and the paths that do not exist."""
    options = options or LintOptions()
    files, missing = collect_files(paths, follow_links=options.follow_links)

    def feed(linter: Linter) -> None:
        for path in files:
            linter.add_file(path)
    return lint(feed, options), missing


# Files: while a one-shot run reads, the models of the files read so far are moved out of the cyclic GC's sight every
# this many files (gc.freeze): 1,000 files of the bench corpus peak at 152 MB RSS.
FREEZE_EVERY = 64


def _freeze_every(files_read: int) -> None:
    """The models of the files read so far moved out of the cyclic GC's sight (gc.freeze): a large run allocates
    millions of nodes that all live to the end, and the collector's passes over them found nothing. Reading a file
    leaves no garbage cycle to collect first (ruamel's compose_all made a class and a self-referring loader per
    file: `yamlmodel._composed` does not), so no collection walks them either."""
    if files_read % FREEZE_EVERY == 0:
        gc.freeze()


# Files: from this many, a one-shot run collects its model before the output. Measured on bench/bench.py's corpus
# (2026-12-01, wheel): the collection takes 0.38 s of a 3 s run at 1,000 files and 3.1 s of a 28 s run at 10,000
# (11%), and lowers the peak by 7 MiB and 115 MiB (721 -> 606 MiB). The console script freezes the GC at exit, so
# without it the model is never walked at all: below this size the CPU time is worth more than the memory.
RELEASE_MIN_FILES = 20_000


def _model_released(result: LintResult, options: LintOptions) -> LintResult:
    """The result, with the model of the run given back first in a one-shot process (`freeze_gc`, the console
    script) of RELEASE_MIN_FILES files or more: the model (nodes, objects, invocations) is garbage once the rules
    are done, but its objects are in cycles (a container and its pod) that only the cyclic GC frees, and none runs
    before the output is rendered. Collected now, the output is rendered in the model's memory instead of on top
    of it, at the price of one pass over every object (about 11% of the run: see RELEASE_MIN_FILES)."""
    if options.freeze_gc and result.files_checked >= RELEASE_MIN_FILES:
        gc.collect()
    return result
