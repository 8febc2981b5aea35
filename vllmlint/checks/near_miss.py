"""A misspelt name: the one real name it is closest to, as the rules that catch typos in variable names judge
it (VL109 for vLLM's `VLLM_*`, VL723 for the model streamer's `RUNAI_STREAMER_*` and `AWS_*`)."""
from __future__ import annotations

from typing import Sequence

# difflib's ratio from which a name counts as a typo of another: one or two letters dropped, doubled or swapped in a
# long name (`VLLM_LOGGING_LEVL`, `AWS_SECRET_ACCES_KEY`), never a different word.
CUTOFF = 0.85


def near_miss(name: str, names: Sequence[str], cutoff: float = CUTOFF) -> str | None:
    """The name of `names` that `name` most likely misspells, or None."""
    import difflib  # here, not at start-up: only a name nobody reads needs it

    near = difflib.get_close_matches(name, names, n=1, cutoff=cutoff)
    return near[0] if near else None
