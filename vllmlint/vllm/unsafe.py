"""vLLM options and environment variables that widen what a request can do, or that log prompts and outputs,
per release (`data/unsafe-options.yaml`, validated by `schemas/unsafe-options.schema.json`). Read by VL804.

`entries()` gives the table as `UnsafeEntry` rows; `UnsafeEntry.applies(release)` says whether a release is in
the entry's range, `UnsafeEntry.span(release)` which refinement (`ranges`) describes it, and
`UnsafeEntry.enabled_by(value)` whether a variable's value turns the behaviour on, as vLLM (or Python) parses it.
"""
from __future__ import annotations

import posixpath
from vllmlint.records import dataclass, field
from functools import lru_cache
from typing import Any

from vllmlint.vllm.release import version_key


@dataclass(frozen=True)
class Span:
    """One refinement of an entry from release `first` on (until the next span): what it adds or logs."""
    first: str
    endpoints: tuple[str, ...] = ()
    logs: str = ""
    requires_env: tuple[str, tuple[str, ...]] | None = None  # (variable, upper-cased values)
    source: str = ""


@dataclass(frozen=True)
class UnsafeEntry:
    id: str
    env: str | None
    flag: str | None
    enabled: str  # lower-in, int-nonzero, equals, switch, path, absent
    values: tuple[str, ...]
    broad_paths: dict[str, str]  # directory -> what a request reaches below it
    first: str | None  # None: not a vLLM name (no release range)
    last: str | None
    severity: str
    api_key_severity: str | None
    requires_flags: tuple[str, ...]
    spans: tuple[Span, ...]
    problem: str
    instead: str
    sources: tuple[str, ...] = field(default=())
    modalities: tuple[str, ...] = ()  # for `absent`: the inputs that make the missing flag matter

    def applies(self, release: str | None) -> bool:
        """Whether `release` is in the entry's range (True for an entry with no range)."""
        if self.first is None:
            return True
        key = _key(release)
        if key is None:
            return False
        if key[:3] < version_key(self.first)[:3]:
            return False
        return self.last is None or key[:3] <= version_key(self.last)[:3]

    def span(self, release: str | None) -> Span | None:
        """The newest span starting at or before `release` (None: no spans, or the release is unknown)."""
        key = _key(release)
        if key is None:
            return None
        found = None
        for span in self.spans:
            if version_key(span.first)[:3] <= key[:3]:
                found = span
        return found

    def enabled_by(self, value: str | None) -> bool:
        """Whether a variable's literal value turns the behaviour on (False for None: not in the run)."""
        if value is None:
            return False
        if self.enabled == "lower-in":
            return value.strip().lower() in self.values
        if self.enabled == "equals":
            return value in self.values
        if self.enabled == "int-nonzero":
            try:
                return int(value.strip()) != 0  # `bool(int(os.getenv(...)))`; int() strips whitespace too
            except ValueError:
                return False  # vLLM fails at start-up on it: VL109's finding
        return False

    def broad(self, path: str) -> str | None:
        """The broad directory `path` names (normalised: `/etc/` and `//` count), or None. What a request
        reaches there is `broad_paths[result]`."""
        text = path.strip()
        if not text.startswith("/"):
            return None
        normal = posixpath.normpath(text)
        if normal.startswith("//"):
            normal = "/" + normal.lstrip("/")  # POSIX keeps a leading `//`; Linux treats it as `/`
        return normal if normal in self.broad_paths else None


def _key(release: str | None) -> tuple[int, ...] | None:
    if not release:
        return None
    try:
        return version_key(str(release))
    except ValueError:
        return None


def _span(row: dict[str, Any]) -> Span:
    env = row.get("requires_env")
    return Span(first=str(row["from"]), endpoints=tuple(str(e) for e in row.get("endpoints") or ()),
                logs=str(row.get("logs") or ""),
                requires_env=(str(env["name"]), tuple(str(v).upper() for v in env["values"])) if env else None,
                source=str(row.get("source") or ""))


@lru_cache(maxsize=1)
def entries() -> tuple[UnsafeEntry, ...]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "unsafe-options.yaml") or {}
    result = []
    for row in data.get("entries") or ():
        releases = row.get("releases") or {}
        result.append(UnsafeEntry(
            id=str(row["id"]), env=row.get("env"), flag=row.get("flag"), enabled=str(row["enabled"]),
            values=tuple(str(v) for v in row.get("values") or ()),
            broad_paths={str(p["path"]): str(p["reads"]) for p in row.get("broad_paths") or ()},
            first=str(releases["from"]) if releases.get("from") else None,
            last=str(releases["to"]) if releases.get("to") else None,
            severity=str(row["severity"]), api_key_severity=row.get("api_key_severity"),
            requires_flags=tuple(str(f) for f in row.get("requires_flags") or ()),
            spans=tuple(_span(r) for r in row.get("ranges") or ()),
            problem=" ".join(str(row["problem"]).split()), instead=" ".join(str(row["instead"]).split()),
            sources=tuple(str(s) for s in row.get("sources") or ()),
            modalities=tuple(str(m) for m in row.get("modalities") or ())))
    return tuple(result)
