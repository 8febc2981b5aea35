"""Findings that moved to another rule code (`data/renamed-codes.yaml`): for one release, what names the
old code (a suppression, `ignore`, `per-file-ignores`) still covers the new one, and the run says so (VL008). The data only: `registry.legacy_match` and `registry.moved_notice` use it."""
from __future__ import annotations

from functools import lru_cache
from vllmlint.data import knowledge_dir, load_yaml_data

MOVED = "VL008"  # code-moved: the notice's code


@lru_cache(maxsize=1)
def old_codes() -> dict[str, tuple[str, ...]]:
    """New code -> the old codes whose suppressions and ignores still cover it."""
    data = load_yaml_data(knowledge_dir() / "renamed-codes.yaml") or {}
    return {str(entry["code"]): tuple(str(c) for c in entry["from"]) for entry in data.get("moved") or []}


def covering(code: str) -> tuple[str, ...]:
    return old_codes().get(code, ())
