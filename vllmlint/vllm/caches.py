"""Where vLLM and its libraries write caches (data/caches.yaml), resolved for one container's env and HOME.

Not a model of the filesystem: `directory()` only applies the libraries' own rules (the first variable that
is set wins, else the default under HOME or the temporary directory), as their sources read them.
"""
from __future__ import annotations

from vllmlint.records import dataclass
from functools import lru_cache
from typing import Any

from vllmlint.vllm.release import version_key


@dataclass(frozen=True)
class Cache:
    id: str
    name: str
    written: str  # hub-download, compile, jit, eager-jit, background, request
    locations: tuple[dict[str, str], ...]
    moved_by: str
    releases: dict[str, str]
    source: str

    def applies(self, release: str | None) -> bool:
        """Whether the release writes it (None: the newest release, which does)."""
        low = self.releases.get("from")
        return release is None or not low or version_key(release) >= version_key(low)

    def directory(self, env: dict[str, str], home: str) -> tuple[str, str] | None:
        """(directory, the variable that set it or "HOME") for a container's literal env and HOME; None when a
        variable is set but its value is not known (the key is present with value "")."""
        for location in self.locations:
            name = location.get("env")
            if name:
                if name not in env:
                    continue
                value = env[name]
                if not value:
                    return None
                return _join(value, location.get("suffix", "")), name
            if "home" in location:
                return _join(home, "/" + location["home"]), "HOME"
            if "tmp" in location:
                return _join(env.get("TMPDIR") or "/tmp", "/" + location["tmp"]), "TMPDIR"
        return None


def _join(base: str, suffix: str) -> str:
    path = base.rstrip("/") + suffix
    return path or "/"


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    data = load_yaml_data(knowledge_dir() / "caches.yaml")
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=1)
def caches() -> tuple[Cache, ...]:
    result = []
    for row in _data().get("caches") or ():
        if isinstance(row, dict):
            result.append(Cache(str(row["id"]), str(row.get("name", row["id"])), str(row["written"]),
                                tuple(dict(loc) for loc in row.get("locations") or () if isinstance(loc, dict)),
                                str(row.get("moved_by", "")), dict(row.get("releases") or {}), str(row.get("source", ""))))
    return tuple(result)


def compile_off_by_default(release: str | None) -> frozenset[str] | None:
    """Architectures for which the release compiles nothing by default; None when the release has no such list."""
    names: set[str] = set()
    found = False
    for row in _data().get("compile_off_by_default") or ():
        if not isinstance(row, dict):
            continue
        low = (row.get("releases") or {}).get("from")
        if release is None or not low or version_key(release) >= version_key(str(low)):
            found = True
            names.update(str(n) for n in row.get("architectures") or ())
    return frozenset(names) if found else None


def may_fall_back_to_v0(release: str | None) -> bool:
    """The release falls back to the V0 engine, which does not torch.compile, when VLLM_USE_V1 is unset and V1
    lacks something in use (data/caches.yaml `v0_fallback`); None (the newest release) does not."""
    if release is None:
        return False
    for row in _data().get("v0_fallback") or ():
        releases = (row.get("releases") or {}) if isinstance(row, dict) else {}
        low, high = releases.get("from"), releases.get("to")
        if (not low or version_key(release) >= version_key(str(low))) and \
                (not high or version_key(release) <= version_key(str(high))):
            return True
    return False
