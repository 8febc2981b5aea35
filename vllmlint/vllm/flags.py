"""How each flag of a vLLM invocation reads on the release it targets: the one place that consults the
release catalogs (`schemas/vllm/`) and the curated flag table, so rules only read `option.status`."""
from __future__ import annotations


from vllmlint.records import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Final

from vllmlint.vllm import catalog
from vllmlint.vllm.catalog import ReleaseCatalog, RemovalStatus, Resolution, ResolutionKind
from vllmlint.vllm.flagtable import never_existed, removed
from vllmlint.vllm.invocation import MANY, TakesValue
from vllmlint.vllm.release import version_key
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.vllm.invocation import Invocation

# `FlagStatus.kind`: how the target release reads a flag of the invocation.
OK: Final = "ok"  # accepted (as written, as an alias, or as a prefix of an option it still has)
REMOVED: Final = "removed"  # an older release accepted it; this one refuses to start (VL102)
TOO_NEW: Final = "too-new"  # only newer releases accept it (VL105)
UNKNOWN: Final = "unknown"  # no release had it (VL103)
AMBIGUOUS: Final = "ambiguous"  # an abbreviation of several options (VL103)
ABSORBED: Final = "absorbed"  # removed, and now silently read as a prefix of another option (VL102)
JOINED: Final = "joined"  # a flag and its value in one argv item: argparse reads no option there (VL714)


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
def target_catalog(release: str | None, default: str | None) -> tuple[ReleaseCatalog, bool, bool]:
    """(release catalog, assumed, beyond_catalog) for a workload's release (or the default, else the newest)."""
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


def takes_value_for(release_catalog: ReleaseCatalog) -> Callable[[str], TakesValue]:
    """A `takes_value(flag)` answer for option parsing from the release's parser."""
    @lru_cache(maxsize=None)
    def takes_value(flag: str) -> TakesValue:
        resolution = release_catalog.resolve(flag)
        option = resolution.option
        if option is None or resolution.kind not in (ResolutionKind.EXACT, ResolutionKind.ALIAS,
                                                     ResolutionKind.PREFIX):
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
def _takes_value(version: str) -> Callable[[str], TakesValue]:
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
def classify(flag: str, release_catalog: ReleaseCatalog) -> tuple[Resolution, FlagStatus]:
    """(Resolution, FlagStatus) for one flag (without `=value`) on a catalogued release (cached: a run
    sees the same few flags over and over)."""
    resolution = release_catalog.resolve(flag)
    spelling = _spelling(flag)
    if resolution.kind in (ResolutionKind.EXACT, ResolutionKind.ALIAS, ResolutionKind.POSITIONAL):
        return resolution, FlagStatus(OK, spelling)  # the common case: no table is even loaded
    curated = removed().get(spelling)
    hint = (curated or {}).get("replacement", "") or (never_existed().get(spelling) or {}).get("instead", "")
    history = catalog.history(spelling)
    if resolution.kind == ResolutionKind.PREFIX:
        gone = catalog.removed_between(spelling, release_catalog.version) if history else None
        if gone is not None and gone.status == RemovalStatus.REMOVED and resolution.option is not None:
            return resolution, FlagStatus(ABSORBED, spelling, gone.last_release, None,
                                          (curated or {}).get("removed_in"), hint,
                                          absorbed_by=resolution.option.canonical_flag)
        return resolution, FlagStatus(OK, spelling)
    if history is not None:
        gone = catalog.removed_between(spelling, release_catalog.version)
        if gone.status == RemovalStatus.REMOVED:
            # The curated table names the exact releases; the catalogs only the catalogued ones around them.
            last = (curated or {}).get("last_accepted") or gone.last_release
            return resolution, FlagStatus(REMOVED, spelling, last, None,
                                          (curated or {}).get("removed_in"), hint, resolution.candidates)
        if gone.status == RemovalStatus.TOO_NEW:
            return resolution, FlagStatus(TOO_NEW, spelling, None, gone.first_release, hint=hint)
    if curated is not None and (not curated.get("removed_in")
                                or version_key(str(curated["removed_in"])) <= version_key(release_catalog.version)):
        return resolution, FlagStatus(REMOVED, spelling, curated.get("last_accepted"), None,
                                      curated.get("removed_in"), hint, resolution.candidates)
    if resolution.kind == ResolutionKind.AMBIGUOUS:
        return resolution, FlagStatus(AMBIGUOUS, spelling, hint=hint, candidates=resolution.candidates)
    import difflib  # here, not at start-up: only a near miss needs it
    suggestions = tuple(difflib.get_close_matches(spelling, [s for s in release_catalog.spellings
                                                             if s.startswith("--")], n=1, cutoff=0.75))
    return resolution, FlagStatus(UNKNOWN, spelling, hint=hint, candidates=suggestions)


def resolve_invocation(invocation: Invocation, default_release: str | None) -> None:
    """Pick the catalog for an invocation, parse its options with that release's parser, classify each."""
    release_catalog, assumed, beyond = target_catalog(invocation.release, default_release)
    invocation.catalog, invocation.assumed, invocation.beyond_catalog = release_catalog, assumed, beyond
    invocation.parse(_takes_value(release_catalog.version))
    for option in invocation.options:
        if option.token.dynamic and "$" in option.name:
            continue  # the flag itself is unknown text
        if option.joined:
            option.status = FlagStatus(JOINED, _spelling(option.name.split()[0]))  # no resolution: no option
            continue
        option.resolution, option.status = classify(option.name, release_catalog)
        if option.status is not None and option.status.kind == REMOVED and _accepted_by_exact_release(
                option.status.spelling, invocation.release, release_catalog.version, assumed):
            option.status = None  # the release that runs is older than its catalog and still had it: unknown


def _accepted_by_exact_release(spelling: str, release: str | None, catalog_version: str, assumed: bool) -> bool:
    """True when the invocation runs a release that is not catalogued itself (checked against a later patch's
    catalog, e.g. 0.10.0 against 0.10.2) and the curated removal table says that release still accepted the
    flag (`--num-scheduler-steps`: last accepted by 0.10.0). Nothing is known of its parser then."""
    if assumed or not release or release == catalog_version:
        return False
    last = (removed().get(spelling) or {}).get("last_accepted")
    try:
        return bool(last) and version_key(release) <= version_key(str(last))
    except ValueError:
        return False


# `key=value[,key=value]`: the old text form of JSON options. malformed-argv (VL714) reports it where the
# release's parser is JSON-only; invalid-flag-value (VL106) leaves exactly this text to it.
KEY_VALUE_TEXT = lazy_compile(r"^\s*[A-Za-z_][\w.-]*\s*=\s*[^,=]*(,\s*[A-Za-z_][\w.-]*\s*=\s*[^,=]*)*$")
# Catalog `json_parser` values (sync's `x-vllm.json_parser`) whose parser rejects `key=value` text:
# `json` (optional_type(json.loads): "Value method=ngram cannot be converted ...", 0.10.1.1
# vllm/engine/arg_utils.py l.70-76 and l.843) and `dataclass` (get_kwargs' parse_dataclass,
# TypeAdapter(cls).validate_json, 0.11.1 vllm/engine/arg_utils.py l.273-277). `json-or-kvs` (0.8.x-0.9.x
# parse_type with the nullable_kvs fallback) still converts it; `dict-or-str` keeps it as a string.
JSON_ONLY_PARSERS: Final = ("json", "dataclass")


def is_key_value_text(text: str) -> bool:
    return bool(KEY_VALUE_TEXT.match(text))

