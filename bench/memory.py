"""Where a run's memory goes, per file: the traced Python memory after reading the files, building the model and
checking the rules (tracemalloc), the largest allocation sites, and the live objects by type.

    python bench/memory.py DIR     # e.g. a tree of bench/bench.py's generator or of ../shared/tools/gen-corpus
    python bench/memory.py --streamed DIR

`--streamed` measures the floor of a design that keeps only findings: each file of DIR linted alone, one after
the other in one process, its findings kept and everything else let go; it prints the peak resident memory
(RSS, no tracemalloc) and the findings kept. It is not a way to lint: a file linted alone loses the findings
that need another file (docs/design/memory.md).

One process, the engine's own steps (no cache, no forked processes). Reported per file of DIR, so that a tree of
2,000 files tells what 10,000 would hold. Allocations made once per run (the data read at start) are divided by
the file count too: they shrink as the tree grows. Nothing of this runs in CI.
"""
from __future__ import annotations

import argparse
import collections
import gc
import tracemalloc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree")
    parser.add_argument("--top", type=int, default=15, help="allocation sites and types shown [default: 15]")
    parser.add_argument("--streamed", action="store_true", help="each file alone, only findings kept: peak RSS")
    options = parser.parse_args()
    if options.streamed:
        streamed(options.tree)
        return
    tracemalloc.start(1)
    from vllmlint.engine import Linter, LintOptions
    from vllmlint.source.files import collect_files

    files, _ = collect_files([options.tree], follow_links=False)
    count = max(len(files), 1)
    start = tracemalloc.get_traced_memory()[0]
    linter = Linter(LintOptions())
    for path in files:
        linter.add_file(path)
    gc.collect()
    read = tracemalloc.get_traced_memory()[0]
    world = linter.build()
    gc.collect()
    built = tracemalloc.get_traced_memory()[0]
    result = linter.check(world)
    gc.collect()
    checked = tracemalloc.get_traced_memory()[0]
    findings = len(result.findings)
    print(f"{len(files)} files: read {(read - start) / count / 1024:.1f} KB a file, model built +"
          f"{(built - read) / count / 1024:.1f} KB, rules checked +{(checked - built) / count / 1024:.1f} KB "
          f"({findings / count:.1f} findings a file); traced peak {tracemalloc.get_traced_memory()[1] / 2**20:.0f} MiB")
    for stat in tracemalloc.take_snapshot().statistics("filename")[:options.top]:
        print(f"{stat.size / count / 1024:7.2f} KB a file  {stat.count / count:7.1f} blocks  "
              f"{stat.traceback[0].filename}")
    types = collections.Counter(type(o).__name__ for o in gc.get_objects())
    print("live objects a file (the cyclic GC's view):",
          ", ".join(f"{name} {n / count:.0f}" for name, n in types.most_common(options.top)))


def streamed(tree: str) -> None:
    import resource

    from vllmlint.engine import Linter, LintOptions
    from vllmlint.source.files import collect_files

    files, _ = collect_files([tree], follow_links=False)
    kept = []
    for path in files:
        linter = Linter(LintOptions())
        linter.add_file(path)
        kept.extend(linter.check(linter.build()).findings)
        del linter
    gc.collect()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"{len(files)} files linted one at a time: {len(kept)} findings kept, peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
