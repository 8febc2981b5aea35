"""Findings that moved to another rule code (`data/renamed-codes.yaml`): for one release, what names the
old code (a suppression, `ignore`, `per-file-ignores`) still covers the new one, and the run says so (VL008)."""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from vllmlint.data import knowledge_dir, load_yaml_data
from vllmlint.finding import Notice, NoticeLevel

if TYPE_CHECKING:
    from vllmlint.registry import Rule

MOVED = "VL008"  # code-moved: the notice's code


@lru_cache(maxsize=1)
def old_codes() -> dict[str, tuple[str, ...]]:
    """New code -> the old codes whose suppressions and ignores still cover it."""
    data = load_yaml_data(knowledge_dir() / "renamed-codes.yaml") or {}
    return {str(entry["code"]): tuple(str(c) for c in entry["from"]) for entry in data.get("moved") or []}


def covering(code: str) -> tuple[str, ...]:
    return old_codes().get(code, ())


def legacy_match(selectors: list[str], candidate: Rule) -> str | None:
    """The old code a selector names when it covers `candidate` only through the move: None when a
    selector matches `candidate` itself, or none matches an old code."""
    from vllmlint.registry import all_rules, matches

    olds = covering(candidate.code)
    if not olds or any(matches(s, candidate) for s in selectors):
        return None
    rules = all_rules()
    for old in olds:
        rule = rules.get(old)
        if rule is not None and any(matches(s, rule) for s in selectors):
            return old
    return None


def moved_notice(old: str, new: str, path: str = "", line: int = 0) -> Notice:
    from vllmlint.registry import all_rules

    rule = all_rules().get(new)
    name = f" {rule.name}" if rule is not None else ""
    return Notice(MOVED, f"{old} suppressions cover {new}{name} for this release only: write {new}", path, line,
                  NoticeLevel.NOTE,
                  summary=(f"{old} suppression covers {new} for this release only (write {new})",
                           f"{old} suppressions cover {new} for this release only (write {new})"))
