"""The curated table of vLLM server flags that were removed or never existed (`data/removed-flags.yaml`):
release bounds read from vLLM's wheels and a replacement users can act on, for VL102 and VL103."""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _table() -> dict:
    from vllmlint.data import knowledge_dir, load_yaml_data

    return load_yaml_data(knowledge_dir() / "removed-flags.yaml") or {}


@lru_cache(maxsize=1)
def removed() -> dict[str, dict]:
    """flag -> {removed_in, last_accepted, replacement, note, source}"""
    return {entry["flag"]: entry for entry in _table().get("removed", [])}


@lru_cache(maxsize=1)
def never_existed() -> dict[str, dict]:
    """flag -> {instead, source}"""
    return {entry["flag"]: entry for entry in _table().get("never_existed", [])}


def first_sentence(text: str, limit: int = 240) -> str:
    """The first sentence of a hint, for a message; `explain` and the table keep the whole text.
    Parentheses and quotes (JSON examples) never end a sentence; asides go when it is too long."""
    text = " ".join(text.split())
    depth, quoted, end = 0, None, len(text)
    for i, ch in enumerate(text):
        if quoted:
            quoted = None if ch == quoted else quoted
        elif ch in "'\"`":
            quoted = ch
        elif ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth = max(0, depth - 1)
        elif ch in ".;" and depth == 0 and (i + 1 == len(text) or text[i + 1] == " "):
            end = i + 1
            break
    sentence = text[:end].rstrip(";").rstrip()
    if len(sentence) > limit:
        import re

        sentence = re.sub(r" \([^()]*\)", "", sentence)
    return sentence if sentence.endswith(".") else sentence + "."
