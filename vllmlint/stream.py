"""Large runs in chunks: the same result as one run over every file, without holding every file's model at once.

A run of STREAM_MIN_FILES files or more from the console script (`LintOptions.stream`) is linted in chunks of
CHUNK_FILES files, in the order given. Each chunk is read, built and checked like a run of its own; what is kept of
it is each file's share of the result (findings, notices, counts, the text the formatters quote) and the file's link
keys (`vllmlint.links`); its model is dropped before the next chunk is read. Once every chunk is done, the keys of
the whole run say which files' findings can depend on a file of another chunk: those files' connected components
(under the keys) are linted again, together, with a provider of each fact their chunk saw differently from the run.
Every other file's share stands as its chunk found it: no file outside its chunk can change it.

Where the keys cannot speak for the run, the run is linted in one piece as before (`_Serial`): a Kustomization (its
build reads files from disk, whichever chunk asks) and a finding or note about a file the chunk was not given.
"""
from __future__ import annotations

import gc
from typing import TYPE_CHECKING

# The sizes are the engine's, which decides before importing this module.
from vllmlint.engine import CHUNK_FILES, STREAM_MIN_FILES, STREAM_SIZES_ENV as SIZES_ENV  # noqa: F401
from vllmlint.engine import stream_sizes as _sizes
from vllmlint.records import replace
from vllmlint.source.files import is_kustomization

if TYPE_CHECKING:
    from pathlib import Path

    from vllmlint.engine import Linter, LintResult
    from vllmlint.finding import Finding, Notice
    from vllmlint.source.yamlmodel import SourceFile



class _Serial(Exception):
    """The run cannot be linted in chunks: lint it in one piece."""


class _Share:
    """One file's part of a chunk's result."""

    __slots__ = ("source", "findings", "suppressed", "ignored", "notices", "checked", "skipped", "workloads", "invocations",
                 "objects")

    def __init__(self) -> None:
        self.source: SourceFile | None = None
        self.findings: list[Finding] = []
        self.suppressed: list[Finding] = []
        self.ignored: list[Finding] = []  # hidden by the config's per-file-ignores (applied in the chunk: by path)
        self.notices: list[Notice] = []
        self.checked = 0
        self.skipped: str | None = None
        self.workloads = self.invocations = self.objects = 0


class _Batch:
    """A chunk (or a second pass) linted: each file's share, the notes about no file, and the run's flags."""

    def __init__(self) -> None:
        self.shares: dict[str, _Share] = {}
        self.general: list[Notice] = []  # notices without a path (internal errors, moved codes)
        self.internal_error = False
        self.rules: list = []


def streamable(linter: Linter, entries: list[tuple[Path | None, str]]) -> bool:
    if len(entries) < _sizes()[0] or linter.render_mappings or linter.result.sources:
        return False
    return not any(is_kustomization(shown) for _, shown in entries)


def run(linter: Linter, entries: list[tuple[Path | None, str]]) -> LintResult | None:
    """The result of linting `entries` (path, display path) in chunks, or None where it must be one run."""
    enabled = gc.isenabled()
    gc.collect()
    gc.freeze()  # what is alive now (modules, data) is never walked again; the chunks' models are collected alone
    gc.disable()
    try:
        return _run(linter, entries)
    except _Serial:
        return None
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def _run(linter: Linter, entries: list[tuple[Path | None, str]]) -> LintResult:
    from vllmlint.links import FACTS

    options = linter.options
    size = _sizes()[1]
    chunk_options = replace(options, stream=False, baseline=None, freeze_gc=False, progress=None, jobs=None,
                            cache_dir=None)
    order = {shown: index for index, (_, shown) in enumerate(entries)}
    shares: dict[str, _Share] = {}
    chunk_of: dict[str, int] = {}
    provides: dict[str, tuple[tuple, ...]] = {}
    wants: dict[str, tuple[tuple, ...]] = {}
    interned: dict[tuple, tuple] = {}
    by_number: dict[int, _Batch] = {}

    def keep(number: int, batch: _Batch, found_provides: dict, found_wants: dict) -> None:
        by_number[number] = batch
        for _, shown in misses[number * size:(number + 1) * size]:
            shares[shown] = batch.shares[shown]
            chunk_of[shown] = number
        for table, found in ((provides, found_provides), (wants, found_wants)):
            for shown, own in found.items():  # one tuple per file, one object per key of the run: kept to the end
                table[shown] = tuple(interned.setdefault(key, key) for key in own)

    # A file the per-file cache holds (vllmlint.filecache) is not read: it is a chunk of its own (a negative number)
    # with the facts its chunk had when it was linted; its share stands on the same terms as any chunk's.
    batch_facts: dict[int, set[tuple]] = {}  # a batch not of the first pass -> the facts it read
    files = _file_cache(linter)
    file_keys: dict[str, str | None] = {}
    needed: set[str] = set()  # files whose keys the cache held, not their share
    misses = entries
    if files is not None:
        misses = []
        for index, (path, shown) in enumerate(entries):
            file_keys[shown] = key = files.key(shown)
            found = files.get(key, shown)
            if found is None:
                misses.append((path, shown))
                continue
            share, found_provides, found_wants, batch_facts[-1 - index] = found
            if share is None:
                needed.add(shown)  # keys only: linted with its component below
            else:
                shares[shown] = share
            chunk_of[shown] = -1 - index
            provides[shown] = tuple(interned.setdefault(k, k) for k in found_provides)
            wants[shown] = tuple(interned.setdefault(k, k) for k in found_wants)
    _first_pass(linter, misses, size, chunk_options, keep)
    batches = [by_number[number] for number in sorted(by_number)]
    # Which files' shares stand: their component lies in their chunk, and each fact it wants reads as in the run.
    # The others are linted again, with what they link to; their keys are then read from that fuller batch, which
    # may show links a chunk could not (an invocation a mounted script of another file starts): until none is new.
    next_number = len(batches)
    for _round in range(MAX_ROUNDS):
        again, providers, component_of = _unsettled(entries, provides, wants, chunk_of, batch_facts, needed)
        if not again:
            if files is not None:
                _keep_alone(files, file_keys, component_of, shares, provides, wants, chunk_of, by_number,
                            batch_facts, entries)
            return _merged(linter, entries, shares, batches)
        for chosen_files, extra in _second_batches(again, providers, wants, order, size, component_of):
            chosen = sorted(chosen_files + extra, key=order.__getitem__)
            batch, keys = _lint(chunk_options, [entries[order[s]] for s in chosen], linter, None, None)
            batches.append(batch)
            number, next_number = next_number, next_number + 1
            by_number[number] = batch
            batch_facts[number] = {f for s in chosen for f in FACTS.intersection(keys.provides.get(s, ()))}
            for shown in chosen_files:
                shares[shown] = batch.shares[shown]
                needed.discard(shown)
                chunk_of[shown] = number
                provides[shown] = tuple(interned.setdefault(k, k) for k in keys.provides.get(shown, ()))
                wants[shown] = tuple(interned.setdefault(k, k) for k in keys.wants.get(shown, ()))
    raise _Serial("the links between files did not settle")


MAX_ROUNDS = 4  # of second passes; then the run is linted in one piece


def _keep_alone(files, file_keys, component_of, shares, provides, wants, chunk_of, by_number, batch_facts, entries):
    """The shares of the files whose component is the file alone, into the per-file cache, with the facts their
    batch read; of the others, only their keys (a file linked to another is linted again every run: its share
    depends on the other). Not when the run read a file outside its inputs (the result cache keeps that run apart)."""
    from vllmlint import cache
    from vllmlint.links import FACTS

    if cache._external:
        return
    in_chunk: dict[int, set[tuple]] = {}  # a chunk of the first pass -> what its files provide
    for _, shown in entries:
        in_chunk.setdefault(chunk_of[shown], set()).update(FACTS.intersection(provides.get(shown, ())))
    in_chunk.update(batch_facts)
    for _, shown in entries:
        number = chunk_of[shown]
        if number >= 0 and by_number[number].internal_error:
            continue
        alone = len(component_of[shown]) == 1
        files.put(file_keys.get(shown), shares[shown] if alone else None, provides.get(shown, ()),
                  wants.get(shown, ()), in_chunk.get(number, set()))
    files.write()


def _file_cache(linter: Linter):
    """The per-file cache of this run: where the whole run is cached (the result cache recorded the files' bytes)."""
    from vllmlint import cache

    folder = cache.files_folder()
    if folder is None or not linter._held:
        return None
    from vllmlint.filecache import FileCache

    return FileCache(linter, folder)


def _unsettled(entries, provides, wants, chunk_of, batch_facts, needed):
    """(the components whose shares do not stand, the providers of each fact in the run, file -> its component)."""
    from vllmlint.links import FACTS, components

    members = components(provides, wants, [shown for _, shown in entries])
    providers: dict[tuple, list[str]] = {fact: [] for fact in FACTS}
    in_chunk: dict[int, set[tuple]] = {}  # chunk -> the facts one of its files provides
    for _, shown in entries:
        for fact in FACTS.intersection(provides.get(shown, ())):
            providers[fact].append(shown)
            in_chunk.setdefault(chunk_of[shown], set()).add(fact)
    in_chunk.update(batch_facts)
    again: list[list[str]] = []
    for group in members:
        number = chunk_of[group[0]]
        facts = {fact for s in group for fact in wants.get(s, ()) if fact in FACTS}
        if not needed.intersection(group) and all(chunk_of[s] == number for s in group) and all(
                (fact in in_chunk.get(number, ())) == bool(providers[fact]) for fact in facts):
            continue
        again.append(group)
    return again, providers, {shown: group for group in members for shown in group}


def _second_batches(groups: list[list[str]], providers: dict[tuple, list[str]], wants: dict[str, tuple],
                    order: dict[str, int], size: int, component_of: dict[str, list[str]]):
    """(files, extra files) to lint again: components packed up to `size` files, with one provider of each
    fact a member wants that the batch lacks and the run has, and that provider's component (with which it
    provides it); the extra files' own shares are not taken from that batch."""
    pending: list[str] = []

    def close():
        mine = set(pending)
        extra: list[str] = []
        for fact, found in providers.items():
            if found and any(fact in wants.get(s, ()) for s in pending) and not any(p in mine for p in found):
                lent = [s for s in component_of.get(found[0], [found[0]]) if s not in mine]
                extra.extend(lent)
                mine.update(lent)
        return list(pending), extra

    for group in sorted(groups, key=lambda g: min(order[s] for s in g)):
        if pending and len(pending) + len(group) > size:
            yield close()
            pending.clear()
        pending.extend(group)
    if pending:
        yield close()


def _first_pass(linter: Linter, entries: list[tuple[Path | None, str]], size: int, chunk_options, keep) -> None:
    """Every chunk linted, given to `keep(number, batch, provides, wants)` as soon as it is here. Where the run may fork
    (`engine.parallel_jobs`: large runs on Linux, idle cores, `--jobs`), forked copies of this process lint some of
    the chunks: each process takes the next chunk not yet taken (a counter in shared memory) and a copy sends back
    what it kept. A copy that fails leaves its chunks to this process; the result never depends on who linted what."""
    import os

    from vllmlint.engine import _rule_counter, parallel_jobs

    count = (len(entries) + size - 1) // size
    jobs = parallel_jobs(linter.options, len(entries)) if count > 1 else 1
    take = _rule_counter() if jobs > 1 else None
    if take is None:
        jobs, numbers = 1, iter(range(count + 1))
        take = numbers.__next__
    progress = linter.options.progress

    done: set[int] = set()

    def work(shown_progress, give) -> None:
        number = take()
        while number < count:
            start = number * size
            batch, keys = _lint(chunk_options, entries[start:start + size], linter, start, shown_progress)
            give(number, batch, keys.provides, keys.wants)
            done.add(number)
            number = take()

    children: list[tuple[int, int]] = []
    if jobs > 1:
        import pickle

        for _ in range(jobs - 1):
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the copy: lint what it takes, send it, leave without running anything else
                code = 0
                try:
                    os.close(read)
                    kept: list[tuple] = []
                    try:
                        work(None, _collector(kept))
                        outcome: object = kept
                    except _Serial:
                        outcome = "serial"
                    with os.fdopen(write, "wb") as out:
                        pickle.dump(outcome, out, protocol=pickle.HIGHEST_PROTOCOL)
                except BaseException:
                    code = 1
                finally:
                    os._exit(code)
            os.close(write)
            children.append((pid, read))
    try:
        work(progress, keep)
    finally:
        serial = False
        for pid, read in children:
            try:
                with os.fdopen(read, "rb") as stream:
                    outcome = pickle.load(stream)
                if outcome == "serial":
                    serial = True
                elif isinstance(outcome, list):
                    for item in outcome:
                        keep(*item)
                        done.add(item[0])
            except Exception:  # noqa: S110  (the copy died: its chunks are linted here below)
                pass
            finally:
                os.waitpid(pid, 0)
    if serial:
        raise _Serial("a copy")
    for number in range(count):
        if number not in done:
            start = number * size
            batch, keys = _lint(chunk_options, entries[start:start + size], linter, start, progress)
            keep(number, batch, keys.provides, keys.wants)


def _collector(kept: list[tuple]):
    """A forked copy's `keep`: what it linted, to send in one piece (sets as tuples: smaller to send)."""
    def give(number: int, batch: _Batch, provides: dict, wants: dict) -> None:
        kept.append((number, batch, {f: tuple(k) for f, k in provides.items()}, {f: tuple(k) for f, k in wants.items()}))
    return give


def _lint(options, chunk: list[tuple[Path | None, str]], linter: Linter, read: int | None, progress):
    """One batch linted as a run of its own: each file's share, and the files' link keys. `read`: the files before
    the chunk (None: a second pass), for the progress line."""
    from vllmlint.engine import Linter as Engine
    from vllmlint.links import file_keys

    sub = Engine(options)
    sub.parse_cache = linter.parse_cache
    batch = _Batch()
    for number, (path, shown) in enumerate(chunk):
        share = batch.shares[shown] = _Share()
        before = sub.result.files_checked
        sub.read_entry(path, shown, linter)
        share.checked = sub.result.files_checked - before
        if progress is not None and read is not None:
            progress.files(read + number + 1)
    world = sub.build()
    result = sub._run(world)
    keys = file_keys(world, sub.real_paths)
    _count(world, batch)
    batch.rules = result.rules
    batch.internal_error = result.internal_error
    for shown, source in result.sources.items():
        if shown not in batch.shares:
            raise _Serial(shown)
        source._line_starts = None  # recomputed from the text if a formatter quotes the file (it seldom does)
        source.scalar_offsets = None  # the model's, not the text's
        batch.shares[shown].source = source
    for shown, why in result.skipped.items():
        batch.shares[shown].skipped = why
    for findings, name in ((result.findings, "findings"), (result.suppressed, "suppressed"),
                           (result.ignored, "ignored")):
        for finding in findings:
            owner = batch.shares.get(finding.path)
            if owner is None:
                raise _Serial(finding.path)
            getattr(owner, name).append(finding)
    for notice in result.notices:
        if not notice.path:
            batch.general.append(notice)
        elif notice.path in batch.shares:
            batch.shares[notice.path].notices.append(notice)
        else:
            raise _Serial(notice.path)
    _release(world)
    del world, result, sub
    gc.collect(0)  # what is left of the chunk: only what was made since the last chunk is walked
    return batch, keys


def _release(world) -> None:
    """The chunk's model taken apart once its share is kept: its objects refer to each other (a container to its
    pod, a command to its container, the world's lookups to all of them), so without this only the cyclic GC could
    free them, walking every node of the chunk (a fifth of a second per 256 files). Once these links are gone,
    each is freed as soon as nothing refers to it. Nothing kept refers to the model: findings hold positions and
    text edits, sources hold text."""
    containers = [c for t in world.templates for c in (getattr(t, "_containers", None) or ())]
    for group in (world.objects, world.templates, world.invocations, world.shell_commands, containers):
        for thing in group:
            inner = getattr(thing, "__dict__", None)
            if inner is not None:
                inner.clear()
    world.__dict__.clear()


def _count(world, batch: _Batch) -> None:
    """Each file's vLLM workloads, invocations and objects (LintResult's counts, file by file)."""
    owners: set[int] = set()
    for obj in world.objects:
        share = batch.shares.get(obj.source.display_path)
        if share is not None:
            share.objects += 1
    for invocation in world.invocations:
        container = invocation.container
        if container is not None:
            owner = container.pod.owner
            share = batch.shares.get(owner.source.display_path)
            if share is not None:
                share.invocations += 1
                if id(owner) not in owners:
                    owners.add(id(owner))
                    share.workloads += 1
            continue
        source = invocation.source if invocation.source is not None else getattr(invocation.owner, "source", None)
        share = batch.shares.get(source.display_path) if source is not None else None
        if share is None:
            raise _Serial("an invocation of no file")
        share.invocations += 1
        share.workloads += 1


def _merged(linter: Linter, entries, shares: dict[str, _Share], batches: list[_Batch]) -> LintResult:
    """The shares in the run's order, as one run's result (engine.Linter._run's last steps on the whole)."""
    from vllmlint.engine import _apply_baseline, ordered_notices, selected_notices

    result = linter.result
    if batches:
        result.rules = batches[0].rules
    else:  # every share came from the per-file cache
        from vllmlint.engine import _moved_ignores, with_syntax_errors
        from vllmlint.registry import select_rules

        options = linter.options
        result.rules = with_syntax_errors(select_rules(options.select, options.ignore), options)
        result.notices.extend(_moved_ignores(options))
    findings: list[Finding] = []
    suppressed: list[Finding] = []
    ignored: list[Finding] = []
    notices: list[Notice] = []
    for _, shown in entries:
        share = shares[shown]
        if share.source is not None:
            result.sources[shown] = share.source
        result.files_checked += share.checked
        if share.skipped is not None:
            result.skipped[shown] = share.skipped
        result.workloads += share.workloads
        result.invocations += share.invocations
        result.objects += share.objects
        findings.extend(share.findings)
        suppressed.extend(share.suppressed)
        ignored.extend(share.ignored)
        notices.extend(share.notices)
    general: dict[tuple, Notice] = {}
    for batch in batches:
        result.internal_error = result.internal_error or batch.internal_error
        for notice in batch.general:
            general.setdefault((notice.code, notice.message, notice.level), notice)
    result.findings = sorted(findings, key=lambda f: f.sort_key)
    result.suppressed = sorted(suppressed, key=lambda f: f.sort_key)
    result.ignored = sorted(ignored, key=lambda f: f.sort_key)
    result.notices = result.notices + notices + list(general.values())  # after those the feed added (render's)
    if linter.options.baseline is not None:
        _apply_baseline(result, linter.options.baseline)
        for finding in result.known:
            finding.fix = None  # as the one-piece run leaves them: the baseline hides them, nobody applies them
    result.notices = ordered_notices(selected_notices(result.notices, result.rules), result.sources)
    return result
