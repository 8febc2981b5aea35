"""What each vLLM release's `vllm serve` accepts, from `schemas/vllm/<version>.json`.

The files are written by `python -m vllmlint_dev.sync` (static extraction from the
release wheels). This module is stdlib only and loads a release file only when
asked for it.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from vllmlint.records import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from vllmlint.data import load_json, schemas_dir
from vllmlint.vllm.versions import compare_versions, version_key


# --------------------------------------------------------------------------- data model


class ResolutionKind:
    """How a release's parser reads an argv token (`Resolution.kind`)."""

    EXACT: Final = "exact"            # the option's canonical spelling
    ALIAS: Final = "alias"            # another accepted spelling (`-tp`, `--no-x`, `-O3`)
    PREFIX: Final = "prefix"          # a unique abbreviation argparse expands (allow_abbrev)
    AMBIGUOUS: Final = "ambiguous"    # an abbreviation of several options: argparse exits
    UNKNOWN: Final = "unknown"        # no option of the release
    POSITIONAL: Final = "positional"  # not an option at all (a value, a model, a negative number)


class RemovalStatus:
    """`Removal.status`: what the catalogs say about a spelling the target release does not accept."""

    REMOVED: Final = "removed"  # an older release accepted it (VL102)
    TOO_NEW: Final = "too_new"  # only newer releases accept it (VL105)
    NEVER: Final = "never"      # no catalogued release had it


@dataclass(frozen=True)
class OptionSpec:
    """One option of a release's `vllm serve` parser, as the catalog describes it (what the parsed argv
    options of an invocation, `invocation.Option`, are checked against)."""

    name: str                      # canonical long name without dashes, e.g. "max-model-len"
    flags: tuple[str, ...]         # every accepted spelling, e.g. ("--enable-x", "--no-enable-x")
    takes_value: bool
    type: str                      # int | float | str | bool | json | none | unknown
    nargs: Any = None
    choices: tuple | None = None   # argparse-enforced choices
    choices_enforced: bool = False
    known_values: tuple | None = None  # values vLLM knows but only checks later at start-up
    choices_unknown: bool = False  # choices computed at run time (plugin registry, current platform)
    known_values_source: str = ""  # "registry" when known_values come from a plugin registry
    default: Any = None
    json: bool = False
    json_keys: tuple[str, ...] = ()
    json_key_values: dict = field(default_factory=dict)
    deprecated: bool = False
    deprecation: str = ""
    help: str = ""
    positional: bool = False
    minimum: float | None = None
    exclusive_minimum: float | None = None
    maximum: float | None = None
    exclusive_maximum: float | None = None
    # How a JSON option's text is parsed (sync's `json_parser`): json | json-or-kvs | dict-or-str |
    # dataclass | from-cli | unknown; "" in catalogs built before the field existed.
    json_parser: str = ""

    @property
    def canonical_flag(self) -> str:
        return self.name if self.positional else "--" + self.name

    def implied_value(self, spelling: str) -> bool | None:
        """For value-less boolean spellings: what the flag sets (--no-x / --disable-x give False)."""
        if self.takes_value or self.type != "bool":
            return None
        if spelling == self.canonical_flag:
            return True
        if spelling.startswith("--no-") or (spelling.startswith("--disable-") and not self.name.startswith("disable-")) \
                or (spelling.startswith("--enable-") and self.name.startswith("disable-")):
            return False
        return True


@dataclass(frozen=True)
class Resolution:
    """How a release's parser reads one argv token."""

    token: str
    kind: str                      # a ResolutionKind
    option: OptionSpec | None = None
    spelling: str | None = None    # the accepted spelling the token ended up as
    value: str | None = None       # from --flag=value or -O3
    implied_value: Any = None      # for --no-x style aliases
    candidates: tuple[str, ...] = ()
    json_path: tuple[str, ...] = ()  # --compilation-config.level -> ("level",)
    normalized: str | None = None  # after underscore folding


def _option_from_json(name: str, prop: dict) -> OptionSpec:
    x = prop.get("x-vllm", {})

    def tup(v):
        return tuple(v) if isinstance(v, list) else v

    return OptionSpec(
        name=name, flags=tuple(x.get("flags") or ()), takes_value=bool(x.get("takes_value")),
        type=x.get("type", "unknown"), nargs=x.get("nargs"), choices=tup(x.get("choices")),
        choices_enforced=bool(x.get("choices_enforced")), known_values=tup(x.get("known_values")),
        choices_unknown=bool(x.get("choices_unknown")), known_values_source=x.get("known_values_source", ""),
        default=x.get("default"), json=bool(x.get("json")), json_keys=tuple(x.get("json_keys") or ()),
        json_key_values=x.get("json_key_values") or {}, deprecated=bool(x.get("deprecated")),
        deprecation=x.get("deprecation", ""), help=x.get("help", ""), positional=bool(x.get("positional")),
        minimum=prop.get("minimum"), exclusive_minimum=prop.get("exclusiveMinimum"),
        maximum=prop.get("maximum"), exclusive_maximum=prop.get("exclusiveMaximum"),
        json_parser=x.get("json_parser", ""),
    )


class _Options(Mapping):
    """A release's options by name, each `OptionSpec` made when first read: a run reads a few dozen of the
    catalog's 300 (making them all cost 1.6 ms of a one-file run, measured 2026-12-02)."""

    __slots__ = ("_properties", "_made")

    def __init__(self, properties: dict):
        self._properties = properties
        self._made: dict[str, OptionSpec] = {}

    def __getitem__(self, name: str) -> OptionSpec:
        made = self._made.get(name)
        if made is None:
            made = self._made[name] = _option_from_json(name, self._properties[name])
        return made

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self._properties else default

    def __contains__(self, name: object) -> bool:
        return name in self._properties

    def __iter__(self):
        return iter(self._properties)

    def __len__(self) -> int:
        return len(self._properties)


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class ReleaseCatalog:
    """What one release's `vllm serve` accepts (`schemas/vllm/<version>.json`); `version` is its release
    number. Named apart from a release itself: elsewhere `release` is always a version string."""

    def __init__(self, doc: dict):
        meta = doc["x-vllm-release"]
        self.version: str = meta["version"]
        self.allow_abbrev: bool = meta.get("allow_abbrev", True)
        self.underscore_to_dash: bool = meta.get("underscore_to_dash", False)
        self.dotted_keys: bool = meta.get("dotted_keys", False)
        self.o_shorthand: bool = meta.get("o_shorthand", False)
        self.o_target: str | None = meta.get("o_target")
        self.default_gpu_memory_utilization = meta.get("default_gpu_memory_utilization")
        self.env: dict[str, dict] = meta.get("env", {})
        self.metrics: dict[str, str] = meta.get("metrics", {})
        self.schema = doc
        properties = doc["properties"]
        self.options: Mapping[str, OptionSpec] = _Options(properties)
        self._names: dict[str, str] = {}  # spelling -> option name
        for name, prop in properties.items():
            for spelling in prop.get("x-vllm", {}).get("flags") or ():
                self._names.setdefault(spelling, name)

    def __repr__(self) -> str:
        return f"ReleaseCatalog({self.version!r}, {len(self.options)} options)"

    def option(self, spelling: str) -> OptionSpec | None:
        """Exact lookup of a spelling (`--max-model-len`, `-tp`, `--no-enable-prefix-caching`)."""
        name = self._names.get(spelling)
        return None if name is None else self.options[name]

    @property
    def spellings(self) -> list[str]:
        return sorted(self._names)

    def resolve(self, token: str) -> Resolution:
        """Resolve one argv token the way this release's `vllm serve` parser would."""
        raw = token
        if not token.startswith("-") or token == "-" or token == "--" or _NEGATIVE_NUMBER.match(token):
            return Resolution(raw, ResolutionKind.POSITIONAL)   # argparse reads "-1" / "-0.5" as values, not options
        value = None
        if self.o_shorthand and token == "-O":
            target = self.o_target or "-O"
            opt = self.option(target)
            if opt is not None:
                return Resolution(raw, ResolutionKind.ALIAS, opt, target)
        # -O3 / -O=3 / -Odecode shorthand (FlexibleArgumentParser rewrites it before argparse sees it)
        if self.o_shorthand and token.startswith("-O") and not token.startswith("--") and token != "-O" \
                and token[2:3] != ".":
            level = token[2:].lstrip("=")
            target = self.o_target or "-O"
            opt = self.option(target)
            if opt is not None:
                path = ("level",) if target == "-O" and self.dotted_keys else ()
                return Resolution(raw, ResolutionKind.ALIAS, opt, target, level, candidates=(), json_path=path)
        if "=" in token:
            token, value = token.split("=", 1)
        normalized = token
        if self.underscore_to_dash and token.startswith("--"):
            # vLLM folds underscores only in the part before the first '.'
            head, dot, rest = token[2:].partition(".")
            normalized = "--" + head.replace("_", "-") + dot + rest
        json_path: tuple[str, ...] = ()
        lookup = normalized
        if self.dotted_keys and "." in normalized:
            head, _, rest = normalized.partition(".")
            json_path = tuple(p for p in rest.split(".") if p)
            lookup = head
        opt = self.option(lookup)
        if opt is not None:
            kind = ResolutionKind.EXACT if lookup == opt.canonical_flag else ResolutionKind.ALIAS
            return Resolution(raw, kind, opt, lookup, value, opt.implied_value(lookup), (), json_path,
                              normalized if normalized != token else None)
        if not lookup.startswith("--") and len(lookup) > 2 and not json_path:
            # argparse: "-q" + "awq" written together, or a prefix of a longer single-dash option ("-as" of "-asc")
            found: list[tuple[OptionSpec, str, str | None]] = []
            short = self.option(lookup[:2])
            if short is not None and short.takes_value:
                found.append((short, lookup[:2], lookup[2:]))
            if self.allow_abbrev:
                found += [(self.options[self._names[s]], s, value) for s in sorted(self._names)
                          if s.startswith(lookup) and not s.startswith("--")]
            if len(found) == 1:
                opt, spelling, attached = found[0]
                kind = ResolutionKind.ALIAS if spelling == lookup[:2] else ResolutionKind.PREFIX
                return Resolution(raw, kind, opt, spelling, attached, opt.implied_value(spelling), (spelling,))
            if len(found) > 1:
                return Resolution(raw, ResolutionKind.AMBIGUOUS, None, None, value, None,
                                  tuple(s for _, s, _ in found))
        if self.allow_abbrev and lookup.startswith("--"):
            matches = sorted(s for s in self._names if s.startswith(lookup) and s.startswith("--"))
            if len(matches) == 1:
                opt = self.options[self._names[matches[0]]]
                return Resolution(raw, ResolutionKind.PREFIX, opt, matches[0], value, opt.implied_value(matches[0]),
                                  (matches[0],), json_path, normalized if normalized != token else None)
            if len(matches) > 1:
                return Resolution(raw, ResolutionKind.AMBIGUOUS, None, None, value, None, tuple(matches), json_path,
                                  normalized if normalized != token else None)
        return Resolution(raw, ResolutionKind.UNKNOWN, None, None, value, None, (), json_path,
                          normalized if normalized != token else None)


# --------------------------------------------------------------------------- loading


def _catalog_dir() -> Path:
    return schemas_dir() / "vllm"


@lru_cache(maxsize=1)
def _index() -> dict:
    return load_json(_catalog_dir() / "index.json")


def releases() -> list[str]:
    """Catalogued releases, oldest first (a copy: sorted once per run, `_sorted_releases`)."""
    return list(_sorted_releases())


@lru_cache(maxsize=1)
def _sorted_releases() -> tuple[str, ...]:
    return tuple(sorted(_index()["releases"], key=version_key))


def newest() -> str:
    return releases()[-1]


@lru_cache(maxsize=None)
def load(version: str) -> ReleaseCatalog:
    """The catalog of one release; KeyError for a release that is not catalogued."""
    if version not in _index()["releases"]:
        raise KeyError(f"vLLM {version} is not in the catalog (known: {', '.join(releases())})")
    return ReleaseCatalog(load_json(_catalog_dir() / f"{version}.json"))


@lru_cache(maxsize=None)
def nearest_release(version: str | None) -> str | None:
    """The newest catalogued release that is not newer than `version`, or None."""
    if version is None:
        return None
    key = version_key(version)
    older = [r for r in _sorted_releases() if version_key(r) <= key]
    return older[-1] if older else None


def history(flag: str) -> dict | None:
    """First and last catalogued release accepting this exact spelling, with deprecation and help."""
    row = _index()["flags"].get(flag)
    return dict(row) if row else None


def env_history(name: str) -> dict | None:
    row = _index()["env"].get(name)
    return dict(row) if row else None


def metric_history(name: str) -> dict | None:
    row = _index()["metrics"].get(name)
    return dict(row) if row else None


@dataclass(frozen=True)
class Removal:
    flag: str
    target: str
    last_release: str | None       # newest catalogued release that accepted the spelling before target
    first_release: str | None      # first catalogued release that accepted it (may be after target)
    status: str                    # a RemovalStatus


def removed_between(flag: str, target: str) -> Removal:
    """For a spelling unknown to `target`: was it removed before, or only added after?"""
    row = history(flag)
    if row is None:
        return Removal(flag, target, None, None, RemovalStatus.NEVER)
    first, last = row["first"], row["last"]
    if compare_versions(last, target) < 0:
        return Removal(flag, target, last, first, RemovalStatus.REMOVED)
    if compare_versions(first, target) > 0:
        return Removal(flag, target, None, first, RemovalStatus.TOO_NEW)
    # Present in releases on both sides of target but missing in target itself: find the gap.
    before = [r for r in releases() if compare_versions(r, target) < 0 and flag in load(r)._names]
    return Removal(flag, target, before[-1] if before else None, first,
                   RemovalStatus.REMOVED if before else RemovalStatus.TOO_NEW)
