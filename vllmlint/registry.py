"""The rules: metadata and documentation from `rules/VLnnn-name.yaml`, checks from `vllmlint/checks/`.

A rule's YAML is its single source of truth: `vllmlint rules`, `vllmlint explain`, the docs pages, SARIF
descriptions and the generic example test all read it. Check modules are imported only when selected.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from vllmlint.data import load_yaml_data, rules_dir
from vllmlint.finding import Severity


@dataclass
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    docs: dict
    examples: dict
    path: Path
    enabled: bool = True
    kind: str = "result"
    tags: list = field(default_factory=list)
    precision: str = "high"
    security_severity: float | None = None
    fix: str = "none"
    data: object = None

    @property
    def module_name(self) -> str:
        return f"vllmlint.checks.{self.code.lower()}_{self.name.replace('-', '_')}"

    def load_check(self):
        """The rule's `check(world)` function, or None for engine rules (VL0xx) that have no module."""
        try:
            module = importlib.import_module(self.module_name)
        except ModuleNotFoundError as exc:
            if exc.name == self.module_name:
                return None
            raise
        return module.check


def _load_yaml(path: Path) -> dict:
    return load_yaml_data(path)


@lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    """Every rule, keyed by code, in code order."""
    rules: dict[str, Rule] = {}
    for path in sorted(rules_dir().glob("VL*.yaml")):
        raw = _load_yaml(path)
        rules[raw["code"]] = Rule(
            code=raw["code"],
            name=raw["name"],
            severity=Severity.parse(raw["severity"]),
            summary=raw["summary"],
            docs=raw["docs"],
            examples=raw.get("examples") or {},
            path=path,
            enabled=raw.get("enabled", True),
            kind=raw.get("kind", "result"),
            tags=raw.get("tags") or [],
            precision=raw.get("precision", "high"),
            security_severity=raw.get("security_severity"),
            fix=raw.get("fix", "none"),
            data=raw.get("data"),
        )
    return rules


def rule(code_or_name: str) -> Rule:
    """Look a rule up by code (`VL102`, any case) or name (`removed-flag`)."""
    key = code_or_name.strip()
    rules = all_rules()
    if key.upper() in rules:
        return rules[key.upper()]
    for candidate in rules.values():
        if candidate.name == key.lower():
            return candidate
    raise KeyError(code_or_name)


def matches(selector: str, candidate: Rule) -> bool:
    """A selector is a code, a code prefix (`VL1`, `VL10`) or a rule name; `ALL` selects everything."""
    sel = selector.strip()
    if sel.upper() == "ALL":
        return True
    if sel.lower() == candidate.name:
        return True
    return sel.upper().startswith("VL") and candidate.code.startswith(sel.upper())


def select_rules(select: list[str] | None = None, ignore: list[str] | None = None) -> list[Rule]:
    """Rules to run: the enabled ones (or those selected), minus those ignored. Rules off by default
    (enabled: false) run only when a selector names them by code or name, not by a broad prefix."""
    chosen = []
    for candidate in all_rules().values():
        if select:
            picked = any(matches(s, candidate) for s in select)
            if picked and not candidate.enabled:
                picked = any(s.strip().upper() == candidate.code or s.strip().lower() == candidate.name
                             for s in select)
        else:
            picked = candidate.enabled
        if picked and ignore and any(matches(s, candidate) for s in ignore):
            picked = False
        if picked:
            chosen.append(candidate)
    return chosen


def unknown_selectors(selectors: list[str]) -> list[str]:
    """Selectors that match no rule, for a usage error."""
    rules = list(all_rules().values())
    return [s for s in selectors if not any(matches(s, r) for r in rules)]
