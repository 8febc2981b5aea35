"""The curated table of vLLM server flags that were removed or never existed (`rules/data/removed-flags.yaml`):
release bounds read from vLLM's wheels and a replacement users can act on, for VL102 and VL103."""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _table() -> dict:
    from .data import load_yaml_data, rules_dir

    return load_yaml_data(rules_dir() / "data" / "removed-flags.yaml") or {}


@lru_cache(maxsize=1)
def removed() -> dict[str, dict]:
    """flag -> {removed_in, last_accepted, replacement, note, source}"""
    return {entry["flag"]: entry for entry in _table().get("removed", [])}


@lru_cache(maxsize=1)
def never_existed() -> dict[str, dict]:
    """flag -> {instead, source}"""
    return {entry["flag"]: entry for entry in _table().get("never_existed", [])}


def first_sentence(text: str) -> str:
    """The first sentence of a hint, for a message; `explain` and the table keep the whole text."""
    text = " ".join(text.split())
    aside = text.find(" (")
    if aside > 0 and aside < (text.find(". ") % 10_000):
        text = text[:aside].rstrip() + "."  # drop the parenthetical detail, keep the instruction
    for end in (". ", "; "):
        cut = text.find(end)
        if 0 < cut < 200:
            return text[:cut + 1].rstrip(";") + ("" if end == ". " else ".")
    return text
