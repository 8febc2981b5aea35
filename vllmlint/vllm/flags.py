"""How each flag of a vLLM invocation reads on the release it targets: the one place that consults the
release catalogs (`schemas/vllm/`) and the curated flag table, so rules only read `option.status`."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache

from vllmlint.vllm import catalog
from vllmlint.vllm.flagtable import never_existed, removed
from vllmlint.vllm.release import version_key

OK, REMOVED, TOO_NEW, UNKNOWN, AMBIGUOUS, ABSORBED = "ok", "removed", "too-new", "unknown", "ambiguous", "absorbed"
MANY = "many"  # takes_value answer for nargs='+' / '*' options: every following non-flag token


@dataclass(frozen=True)
class FlagStatus:
    kind: str
    spelling: str  # the flag as the parser sees it (underscores folded)
    last_release: str | None = None  # removed: the last release that accepted it
    first_release: str | None = None  # too new: the first release that has it
    removed_in: str | None = None  # from the curated table, when known
    hint: str = ""  # what to do instead (curated)
    candidates: tuple[str, ...] = ()  # ambiguous prefix matches, or did-you-mean suggestions
    absorbed_by: str | None = None  # a removed flag now read as a prefix of this option


@lru_cache(maxsize=None)
def target_release(release: str | None, default: str | None) -> tuple[object, bool, bool]:
    """(catalog Release, assumed, beyond_catalog) for a workload's release (or the default, else the newest)."""
    wanted = release or default
    newest = catalog.newest()
    if wanted is None:
        return catalog.load(newest), True, False
    if version_key(wanted) > version_key(newest):
        return catalog.load(newest), False, True
    return catalog.load(_closest_catalog(wanted)), False, False


def _closest_catalog(version: str) -> str:
    """The catalog that stands for `version`: itself, else the nearest later patch of the same minor
    release (patches rarely change flags; an older minor would miss the flags the minor added), else the
    newest older release, else the oldest catalog."""
    known = catalog.releases()
    if version in known:
        return version
    minor = version_key(version)[:2]
    same_minor = [r for r in known if version_key(r)[:2] == minor]
    if same_minor:
        later = [r for r in same_minor if version_key(r) >= version_key(version)]
        return later[0] if later else same_minor[-1]
    return catalog.nearest_release(version) or known[0]


def takes_value_for(release):
    """A `takes_value(flag)` answer for option parsing from the release's parser."""
    @lru_cache(maxsize=None)
    def takes_value(flag: str):
        resolution = release.resolve(flag)
        option = resolution.option
        if option is None or resolution.kind not in ("exact", "alias", "prefix"):
            return _former_takes_value(flag)
        if resolution.implied_value is not None or resolution.value is not None:
            return False  # `--no-x`, or `-O3` carrying its own value
        if option.nargs == "?":
            return None  # an optional value: the next token is one unless it looks like a flag
        if option.nargs in ("+", "*"):
            return MANY
        return bool(option.takes_value)
    return takes_value


@lru_cache(maxsize=None)
def _takes_value(version: str):
    return takes_value_for(catalog.load(version))


@lru_cache(maxsize=None)
def _former_takes_value(flag: str) -> bool | None:
    """For a flag the target release does not know: whether the last release that had it took a value
    (so that `--use-v2-block-manager MODEL` keeps its model). None when no release had it."""
    spelling = _spelling(flag)
    history = catalog.history(spelling)
    if history is None:
        return None
    option = catalog.load(history["last"]).option(spelling)
    if option is None or option.nargs in ("?", "+", "*"):
        return None
    return bool(option.takes_value) and option.implied_value(spelling) is None


def _spelling(flag: str) -> str:
    head, dot, rest = flag.partition(".")
    return head.replace("_", "-") if head.startswith("--") else head


@lru_cache(maxsize=4096)
def classify(flag: str, release) -> tuple[object, FlagStatus]:
    """(Resolution, FlagStatus) for one flag (without `=value`) on a catalogued release (cached: a run
    sees the same few flags over and over)."""
    resolution = release.resolve(flag)
    spelling = _spelling(flag)
    if resolution.kind in ("exact", "alias", "positional"):
        return resolution, FlagStatus(OK, spelling)  # the common case: no table is even loaded
    curated = removed().get(spelling)
    hint = (curated or {}).get("replacement", "") or (never_existed().get(spelling) or {}).get("instead", "")
    history = catalog.history(spelling)
    if resolution.kind == "prefix":
        gone = catalog.removed_between(spelling, release.version) if history else None
        if gone is not None and gone.status == "removed":
            return resolution, FlagStatus(ABSORBED, spelling, gone.last_release, None,
                                          (curated or {}).get("removed_in"), hint,
                                          absorbed_by=resolution.option.canonical_flag)
        return resolution, FlagStatus(OK, spelling)
    if history is not None:
        gone = catalog.removed_between(spelling, release.version)
        if gone.status == "removed":
            # The curated table names the exact releases; the catalogs only the catalogued ones around them.
            last = (curated or {}).get("last_accepted") or gone.last_release
            return resolution, FlagStatus(REMOVED, spelling, last, None,
                                          (curated or {}).get("removed_in"), hint, resolution.candidates)
        if gone.status == "too_new":
            return resolution, FlagStatus(TOO_NEW, spelling, None, gone.first_release, hint=hint)
    if curated is not None and (not curated.get("removed_in")
                                or version_key(str(curated["removed_in"])) <= version_key(release.version)):
        return resolution, FlagStatus(REMOVED, spelling, curated.get("last_accepted"), None,
                                      curated.get("removed_in"), hint, resolution.candidates)
    if resolution.kind == "ambiguous":
        return resolution, FlagStatus(AMBIGUOUS, spelling, hint=hint, candidates=resolution.candidates)
    suggestions = tuple(difflib.get_close_matches(spelling, [s for s in release.spellings if s.startswith("--")],
                                                  n=1, cutoff=0.75))
    return resolution, FlagStatus(UNKNOWN, spelling, hint=hint, candidates=suggestions)


def resolve_invocation(invocation, default_release: str | None) -> None:
    """Pick the catalog for an invocation, parse its options with that release's parser, classify each."""
    release, assumed, beyond = target_release(invocation.release, default_release)
    invocation.catalog, invocation.assumed, invocation.beyond_catalog = release, assumed, beyond
    invocation.parse(_takes_value(release.version))
    for option in invocation.options:
        if option.token.dynamic and "$" in option.name:
            continue  # the flag itself is unknown text
        option.resolution, option.status = classify(option.name, release)
