"""The console script's policy for the cyclic garbage collector, in a module of its own that imports nothing: the
console script (entry.py) sets the threshold before it imports the rest of vllmlint, whose modules' code,
functions and classes all live to the end of the process (the collections they caused were 1.3% of a one-file
run's instructions on CPython 3.13, measured with callgrind on 2026-12-07)."""
from __future__ import annotations

# The cyclic GC runs a generation-0 pass every 700 new container objects by default; a run builds hundreds of
# thousands of YAML nodes that all live to the end, so those passes find nothing. A larger threshold for this
# one-shot process: 1,000 files of bench/bench.py's corpus 4.16 s -> 2.87 s, peak memory 139 -> 146 MB
# (measured 2026-12-01). Only the console script sets it; the library leaves the embedding process alone.
GC_THRESHOLD = (100_000, 50, 100)


def gc_tuned() -> bool:
    """Whether the console script tunes the cyclic GC (GC_THRESHOLD, the model frozen while the rules run and at
    exit). `VLLMLINT_GC_DEFAULT=1` leaves Python's defaults, to measure what the tuning saves (bench/FIGURES.md)."""
    import os

    return not os.environ.get("VLLMLINT_GC_DEFAULT")
