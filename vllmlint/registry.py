"""The rules: metadata and documentation from `rules/VLnnn-name.yaml`, checks from `vllmlint/checks/`.

A rule's YAML is its single source of truth: `vllmlint rules`, `vllmlint explain`, the docs pages, SARIF
descriptions and the generic example test all read it. Check modules are imported only when selected.

The two halves must match, or the registry refuses to load (`RegistryError`): every rule outside the
engine's own (VL0xx: syntax errors, suppressions, notices) has a module `vllmlint/checks/vlNNN_name.py`,
and every module named like a rule module has a rule. Otherwise a misnamed module would silently never
run, and the run would say "All checks passed". Other modules in `checks/` (shared helpers) are free.
"""
from __future__ import annotations

import importlib
import os
import re
from vllmlint.records import dataclass, field
from functools import lru_cache
from pathlib import Path

from vllmlint.data import load_rule_metadata, load_yaml_data, rules_dir
from vllmlint.finding import Notice, NoticeLevel, Severity

CHECKS_DIR = Path(__file__).resolve().parent / "checks"
RULE_MODULE = re.compile(r"^(vl\d+)_\w+\.py$")  # `vl101_deprecated_entrypoint.py`; other names are helpers


class RegistryError(Exception):
    """The rule files and the check modules do not match: an installation or development error."""


@dataclass
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    path: Path
    enabled: bool = True
    kind: str = "result"
    tags: list = field(default_factory=list)
    precision: str = "high"
    security_severity: float | None = None
    fix: str = "none"
    data: object = None

    @property
    def docs(self) -> dict:
        """The rule's `docs` (what it does, why, how to fix, references), read when first asked."""
        return _documentation(self.path).get("docs") or {}

    @property
    def examples(self) -> dict:
        return _documentation(self.path).get("examples") or {}

    @property
    def module_name(self) -> str:
        return f"vllmlint.checks.{self.code.lower()}_{self.name.replace('-', '_')}"

    @property
    def engine_rule(self) -> bool:
        """VL0xx rules are the engine's own (syntax errors, suppressions, notices): no check module."""
        return self.code.startswith("VL0")

    def load_check(self):
        """The rule's `check(ctx)` function, or None for engine rules (VL0xx) that have no module."""
        if self.engine_rule:
            return None
        return importlib.import_module(self.module_name).check


def _load_yaml(path: Path) -> dict:
    return load_yaml_data(path)


_DOCUMENTATION: dict[Path, dict] = {}  # rule file -> its content with `docs` and `examples`


def _documentation(path: Path) -> dict:
    if path not in _DOCUMENTATION:
        _DOCUMENTATION[path] = _load_yaml(path)
    return _DOCUMENTATION[path]


@lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    """Every rule, keyed by code, in code order."""
    rules: dict[str, Rule] = {}
    folder = rules_dir()
    try:  # names, not pathlib's glob and sort (Path objects compare part by part): 1 ms of a one-file run on 3.13
        names = sorted(name for name in os.listdir(folder) if name.startswith("VL") and name.endswith(".yaml"))
    except OSError:
        names = []
    for name in names:
        path = folder / name
        raw = load_rule_metadata(path)
        if "docs" in raw:  # read from the YAML itself (a checkout): no second read for the documentation
            _DOCUMENTATION[path] = raw
        rules[raw["code"]] = Rule(
            code=raw["code"],
            name=raw["name"],
            severity=Severity.parse(raw["severity"]),
            summary=raw["summary"],
            path=path,
            enabled=raw.get("enabled", True),
            kind=raw.get("kind", "result"),
            tags=raw.get("tags") or [],
            precision=raw.get("precision", "high"),
            security_severity=raw.get("security_severity"),
            fix=raw.get("fix", "none"),
            data=raw.get("data"),
        )
    problems = mismatches(rules, check_modules())
    if problems:
        raise RegistryError("; ".join(problems))
    return rules


def check_modules(folder: Path = CHECKS_DIR) -> list[str]:
    """File names of the rule modules in `vllmlint/checks/` (by the naming convention)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(name for name in names if RULE_MODULE.match(name))


def mismatches(rules: dict[str, Rule], modules: list[str]) -> list[str]:
    """One line per rule without its check module and per rule module without its rule."""
    expected = {r.module_name.rsplit(".", 1)[1] + ".py": r for r in rules.values() if not r.engine_rule}
    problems = [f"rule {r.code} ({r.name}, rules/{r.path.name}) has no check module: expected "
                f"vllmlint/checks/{name}" for name, r in expected.items() if name not in modules]
    for name in modules:
        if name in expected:
            continue
        match = RULE_MODULE.match(name)
        code = match.group(1).upper() if match else ""
        rule = rules.get(code)
        hint = (f"rule {code} is named `{rule.name}`, so its module is {rule.module_name.rsplit('.', 1)[1]}.py"
                if rule is not None else f"no rules/{code}-*.yaml")
        problems.append(f"check module vllmlint/checks/{name} belongs to no rule ({hint})")
    return problems


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
        if picked and ignore and moved_ignore(ignore, candidate) is not None:
            picked = False  # ignored under the code it moved from (data/renamed-codes.yaml), for one release
        if picked:
            chosen.append(candidate)
    return chosen


def moved_ignore(ignore: list[str], candidate: Rule) -> str | None:
    """The old code in `ignore` that still covers `candidate`, a rule split out of it; None if none."""
    return legacy_match(ignore, candidate)


def unknown_selectors(selectors: list[str]) -> list[str]:
    """Selectors that match no rule, for a usage error."""
    rules = list(all_rules().values())
    return [s for s in selectors if not any(matches(s, r) for r in rules)]


def legacy_match(selectors: list[str], candidate: Rule) -> str | None:
    """The old code a selector names when it covers `candidate` only through the move: None when a
    selector matches `candidate` itself, or none matches an old code."""
    from vllmlint.renames import covering

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
    from vllmlint.renames import MOVED

    rule = all_rules().get(new)
    name = f" {rule.name}" if rule is not None else ""
    return Notice(MOVED, f"{old} suppressions cover {new}{name} for this release only: write {new}", path, line,
                  NoticeLevel.NOTE,
                  summary=(f"{old} suppression covers {new} for this release only (write {new})",
                           f"{old} suppressions cover {new} for this release only (write {new})"))
