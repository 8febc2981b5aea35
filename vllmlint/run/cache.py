"""The result cache: a run over inputs it has seen before replays that run's result instead of linting again.

What is cached is the whole result of a run (findings, notices, counts, the texts the formatters quote), keyed by
everything the result depends on: each input's name and content hash (in the order given), the options of the
run, vllmlint's version and a fingerprint of its code and data (the release catalogs, rules, capacity tables),
models and GPUs the configuration adds. So a cross-file result is never stale: an edit to any file (the
Deployment an HPA in another file targets) is a new key, and the run is linted again whole. Runs whose result
depends on what the key cannot see are not cached: a kustomization (its build reads files from disk that were
not given), a render (`--render` runs tools), a run that hit an error, and anything that calls
`note_external_read` (a file read outside the inputs) without it still matching on the next run.

Entries are JSON (never pickle: a cache folder may sit in a checkout a pull request can write to) after a line with
their digest, written to a temporary file and moved into place (`os.replace`), so concurrent runs never read half an
entry; an entry whose digest does not match, that does not decode, or comes from another version of the cache, is
ignored (the run lints, and rewrites it). The cache writes only in a folder it created or marked as its own
(CACHEDIR.TAG), and deletes only names it makes.
The folder is `VLLMLINT_CACHE_DIR`, else the platform's user cache folder plus `vllmlint`; results live under
its `results/`, at most MAX_ENTRIES of them (the oldest go first).
"""
from __future__ import annotations

from vllmlint import records
import enum
import functools
import importlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from vllmlint.cache import ENV, cache_dir  # noqa: F401  (where the folder is: the runner's API too)

if TYPE_CHECKING:
    from vllmlint.engine import Linter, LintOptions, LintResult

FORMAT = "vllmlint-result-cache 4"  # 4: entries start with their digest (CHECK); 3: sources keep no text of inputs
MAX_ENTRIES = 32


# --- files read outside the inputs ------------------------------------------------------------------------
_external: list[tuple[str, str]] | None = None  # (path, stamp) read during the run being cached


def note_external_read(path: str | os.PathLike) -> None:
    """Code that reads a file the run was not given (a model's config.json from a local folder or the Hugging
    Face cache) calls this, so that a cached result is replayed only while that file is unchanged."""
    if _external is not None:
        _external.append((os.path.abspath(path), _stamp(os.path.abspath(path))))


def _stamp(path: str) -> str:
    try:
        info = os.stat(path)
    except OSError:
        return "missing"
    return f"{info.st_size}:{info.st_mtime_ns}"


# --- the key --------------------------------------------------------------------------------------------
_fingerprint: str | None = None


def tool_fingerprint() -> str:
    """vllmlint's version and the size and time of every file of its code and data: a new release, an edited
    catalog or rule (in a checkout) gives new keys."""
    global _fingerprint
    if _fingerprint is None:
        from vllmlint import __version__
        from vllmlint.data import _PACKAGE, data_dir

        digest = _digest(f"{FORMAT}\0{__version__}\0{sys.version}".encode())
        folders = [_PACKAGE]
        for name in ("rules", "data", "schemas"):
            try:
                folders.append(data_dir(name))
            except FileNotFoundError:
                pass
        for folder in folders:
            for root, dirs, files in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    path = os.path.join(root, name)
                    digest.update(f"{path}\0{_stamp(path)}\0".encode())
        _fingerprint = digest.hexdigest()
    return _fingerprint


def _options_key(options: LintOptions) -> str:
    from vllmlint.engine import LintOptions

    plain = records.replace(options, freeze_gc=False, cache_dir=None, progress=None, jobs=None)
    assert isinstance(plain, LintOptions)
    extra = ""
    specs = sys.modules.get("vllmlint.capacity.specs")
    extras = (getattr(specs, "_extra_models", None), getattr(specs, "_extra_gpus", None)) if specs else (None, None)
    if any(extras):  # models and GPUs of the configuration (`models:`, `gpus:`); not imported: none
        extra = repr(extras)
    return repr(plain) + "\0" + extra


def _hash(value: Any) -> str:
    if isinstance(value, bytes):
        return "b" + _digest(value).hexdigest()
    if isinstance(value, str) and len(value) > 256:
        return "s" + _digest(value.encode("utf-8", "surrogatepass")).hexdigest()
    return repr(value)


# --- what a feed adds -------------------------------------------------------------------------------------
class _Calls(list):
    """`result.notices` of the recorder: notices a feed adds directly are replayed in their place."""

    def __init__(self, calls: list):
        super().__init__()
        self._calls = calls

    def append(self, notice) -> None:
        self._calls.append(("notices", [notice]))

    def extend(self, notices) -> None:
        self._calls.append(("notices", list(notices)))


def recorder(options: LintOptions) -> Linter:
    """A Linter that records what a feed adds (files read, standard input, notices) without linting it."""
    from vllmlint.engine import Linter

    class Recorder(Linter):
        def __init__(self, options):
            super().__init__(options)
            self.calls: list[tuple] = []
            self.result.notices = _Calls(self.calls)

        def add_bytes(self, data, shown, suffix=".yaml", name=""):
            self.calls.append(("add_bytes", data, shown, suffix, name))

        def add_file(self, path, shown=None):  # read now (never deferred): the key hashes the bytes
            from vllmlint.source.files import display_path

            self.read_file(path, shown or display_path(path))

        def add_file_bytes(self, data, shown, suffix, name):
            self.calls.append(("add_file_bytes", data, shown, suffix, name))

        def add_stdin(self, data, filename):
            self.calls.append(("add_stdin", data, filename))

        def add_text(self, text, shown, suffix=".yaml", name=""):
            self.calls.append(("add_text", text, shown, suffix, name))

        def skip_too_large(self, shown, size):
            self.calls.append(("skip_too_large", shown, size))

    return Recorder(options)


def _replay(recorded: Linter, once: bool) -> Callable[[Linter], None]:
    """A feed that adds what `recorded` recorded; `once`: it runs once (no --upgrade-to, which lints twice), so the
    recorded inputs are released once added."""
    calls: list[tuple] = recorded.calls  # type: ignore[attr-defined]

    def feed(linter: Linter) -> None:
        linter.real_paths.update(recorded.real_paths)
        for name, *args in calls:
            if name == "notices":
                linter.result.notices.extend(args[0])
            else:
                getattr(linter, name)(*args)
        if once:
            calls.clear()  # the bytes read are parsed now: the rules need not keep them alive
    return feed


def _cacheable(recorded: Linter) -> bool:
    from vllmlint.source.kustomize import NAMES

    result = recorded.result
    if result.files_checked or result.internal_error or result.skipped or result.sources:
        return False  # the feed changed the result itself (a render): a replay of its calls would not
    return not any(os.path.basename(shown) in NAMES for shown in recorded.real_paths) and not _machine_dependent()


def _machine_dependent() -> bool:
    """`--hf-cache` / `--online` (vllmlint.capacity.hfconfig, when present): models sized from this machine's
    Hugging Face cache or the Hub, which the key cannot see. Unset unless that module was imported and told so."""
    hfconfig = sys.modules.get("vllmlint.capacity.hfconfig")
    sources = getattr(hfconfig, "sources", None)
    if not callable(sources):
        return False
    chosen = sources()
    return bool(getattr(chosen, "hf_cache", False) or getattr(chosen, "online", False))


def _key(recorded: Linter, options: LintOptions) -> str:
    digest = _digest(tool_fingerprint().encode())
    digest.update(_options_key(options).encode("utf-8", "surrogatepass"))
    for shown, real in recorded.real_paths.items():
        digest.update(f"\0path\0{shown}\0{real}".encode("utf-8", "surrogatepass"))
    for call in recorded.calls:  # type: ignore[attr-defined]
        text = call[0] + "\0" + "\0".join(_hash(a) for a in call[1:])
        digest.update(b"\1" + text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


# --- the run ----------------------------------------------------------------------------------------------
_prepared: list = []  # [(feed, recorder, key)] of `result_key`: `cached_lint` of the same feed reads nothing again


def _recorded(feed: Callable[[Linter], None], uncached: LintOptions) -> tuple[Linter, str | None]:
    """The recorder of `feed` and the result's key (None: not cacheable)."""
    if _prepared and _prepared[0][0] is feed:
        _, recorded, key = _prepared.pop()
        return recorded, key
    recorded = recorder(uncached)
    feed(recorded)
    return recorded, _key(recorded, uncached) if _cacheable(recorded) else None


def result_key(feed: Callable[[Linter], None], options: LintOptions) -> str | None:
    """The key `cached_lint(feed, options)` reads its result under (None: not cacheable). The feed runs now,
    once: the next `cached_lint` of the same feed uses what it recorded."""
    recorded, key = _recorded(feed, records.replace(options, cache_dir=None))
    _prepared[:] = [(feed, recorded, key)]
    return key


_shown_how: dict[str, str] = {}  # shown_key -> how, for keep_shown


def shown_key(how: str) -> str:
    key = _digest(how.encode("utf-8", "surrogatepass")).hexdigest()
    _shown_how[key] = how
    return key


def shown(folder: str, how: str, key: str) -> tuple[list[tuple[int, str]], int] | None:
    """What a run shown as `how` (vllmlint.check._Shown) wrote, and its exit code, or None. Only while the
    result it showed (`key`) is the entry it was: an entry removed, pruned or rewritten takes the kept output
    with it."""
    entry = Path(folder) / "shown" / f"{shown_key(how)}.json"
    try:
        raw = json.loads(_read(entry))
        if raw.get("format") != FORMAT or raw.get("how") != how or raw.get("code") not in (0, 1) \
                or raw.get("result") != _stamp(str(Path(folder) / "results" / f"{key}.json")):
            return None
        writes = [(int(where), text) for where, text in raw["writes"] if isinstance(text, str)]
        for _, text in writes:
            text.encode("utf-8")  # UnicodeEncodeError: a lone surrogate no output may carry
        return writes, raw["code"]
    except Exception:  # missing, truncated, foreign: the run is shown as usual
        return None


def keep_shown(folder: str, key: str, result_key: str, writes: list[tuple[int, str]], code: int) -> None:
    """Keep what a run wrote (`shown`), beside the result entry of `result_key` it showed."""
    result = Path(folder) / "results" / f"{result_key}.json"
    if code not in (0, 1) or sum(len(text) for _, text in writes) > RENDER_MAX or not result.is_file():
        return
    # `how` again in the entry: a key that collides never shows another run's output
    how = _shown_how.get(key)
    if how is None:
        return
    text = json.dumps({"format": FORMAT, "how": how, "result": _stamp(str(result)), "writes": writes, "code": code},
                      ensure_ascii=False, separators=(",", ":"))
    _write(Path(folder) / "shown" / f"{key}.json", text)


def cached_lint(feed: Callable[[Linter], None], options: LintOptions,
                lint: Callable[[Callable[[Linter], None], LintOptions], LintResult]) -> LintResult:
    """`lint(feed, options)` (the runner's run without a cache) through the cache in `options.cache_dir`."""
    global _external

    uncached = records.replace(options, cache_dir=None)
    recorded, key = _recorded(feed, uncached)
    if key is None:
        return lint(feed, uncached)  # as if there were no cache: the feed runs on a real Linter
    assert options.cache_dir is not None
    folder = Path(options.cache_dir) / "results"
    entry = folder / f"{key}.json"
    inputs = _inputs(recorded)
    result = load(entry, inputs)
    if result is not None:
        _remember(result, key, Path(options.cache_dir))
        return result
    _external = []
    try:
        result = lint(_replay(recorded, once=not uncached.upgrade_to), uncached)
        external = list(_external)
    finally:
        _external = None
    if not result.internal_error:
        store(entry, result, external, inputs)
        _remember(result, key, Path(options.cache_dir))
    return result


# --- the text output of a cached result ------------------------------------------------------------------------
# A run over unchanged inputs replays its result; printing 7,667 findings with their excerpts then costs more than
# the replay itself. The text a formatter made of a cached result is a function of that result and of the report's
# other settings (colour, the paths relative to the current folder, --statistics...), so it is kept beside the
# result, keyed by both, and written again as it was.
RENDER_MAX = 16 << 20  # characters: a larger output is rendered every time
_remembered: tuple[LintResult, str, Path] | None = None


def _remember(result: LintResult, key: str, folder: Path) -> None:
    global _remembered
    _remembered = (result, key, folder)


def rendered(fmt: str, report, pieces: Iterator[str]) -> Iterator[str]:
    """`pieces` (the formatter's output for `report`), or the text kept for the same result and settings."""
    entry = _render_entry(fmt, report)
    if entry is None:
        yield from pieces
        return
    try:
        kept = _read(entry)
        kept.encode("utf-8")
    except (OSError, ValueError):  # missing or damaged (UnicodeError is a ValueError): rendered again
        kept = None
    if kept is not None:
        yield kept
        return
    made: list[str] = []
    size = 0
    for piece in pieces:
        size += len(piece)
        if size <= RENDER_MAX:
            made.append(piece)
        yield piece
    if size <= RENDER_MAX:
        _write(entry, "".join(made))


def _render_entry(fmt: str, report) -> Path | None:
    if _remembered is None:
        return None
    result, key, folder = _remembered
    if report.findings is not result.findings or report.suppressed is not result.suppressed \
            or report.sources is not result.sources:
        return None  # a report of something else than the cached result
    settings = {f.name: getattr(report, f.name) for f in records.fields(report)
                if f.name not in ("findings", "suppressed", "sources", "rules")}
    digest = _digest(f"{key}\0{fmt}\0{len(report.findings)}\0{len(report.suppressed)}\0".encode())
    digest.update(repr(settings).encode("utf-8", "surrogatepass"))
    return folder / "renders" / f"{digest.hexdigest()}.txt"


def _inputs(recorded: Linter) -> dict[str, bytes]:
    """Display path -> bytes of each file the feed read: what the key hashed, so what a stored result read too."""
    return {call[2]: call[1] for call in recorded.calls if call[0] == "add_file_bytes"}  # type: ignore[attr-defined]


def load(entry: Path, inputs: dict[str, bytes] | None = None) -> LintResult | None:
    """The result stored in `entry`, or None when there is none, it does not decode, or a file it read outside
    the inputs changed. `inputs`: the bytes of the files read this run (the texts an entry does not copy)."""
    try:
        raw = json.loads(_read(entry), object_hook=_decode)
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            return None
        if any(_stamp(path) != stamp for path, stamp in raw["external"]):
            return None
        return _result_from(raw["result"], inputs or {})
    except Exception:  # missing, truncated, foreign, from another version: lint instead
        return None


def store(entry: Path, result: LintResult, external: list[tuple[str, str]] | None = None,
          inputs: dict[str, bytes] | None = None) -> None:
    """Write `result` to `entry` (a temporary file moved into place); a cache that cannot be written is no error."""
    try:
        text = json.dumps({"format": FORMAT, "external": external or [], "result": _result_to(result, inputs or {})},
                          default=_encode, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return
    _write(entry, text)


# Every entry starts with a line of its own: CHECK and the digest of the rest of the file. An entry whose digest does
# not match (a truncated write, a flipped byte, an edit by anything but vllmlint) is a miss: one run lints again and
# rewrites it; it is never trusted, so never an error of a later run.
CHECK = "vllmlint-cache-entry "
# The folder's own names and its mark: vllmlint.cache (the data loader writes there too).
from vllmlint.cache import _OWN_NAME, TAG, TAG_NAME, owned  # noqa: E402,F401


def _read(entry: Path) -> str:
    """The text of an entry whose digest matches; ValueError when it does not (OSError: no entry)."""
    raw = entry.read_bytes()
    head, newline, body = raw.partition(b"\n")
    if not newline or head != (CHECK + _digest(body).hexdigest()).encode():
        raise ValueError(f"damaged cache entry: {entry.name}")
    return body.decode("utf-8", errors="surrogatepass")


def _write(entry: Path, text: str) -> None:
    """`text` into `entry` (in a subfolder of the cache folder), through a temporary file moved into place
    (concurrent runs never read half of it), after its digest line; the subfolder keeps its MAX_ENTRIES newest
    entries. Only in a folder the cache owns (`owned`). A cache that cannot be written is no error."""
    try:
        if not owned(entry.parent.parent):
            return
        body = text.encode("utf-8", "surrogatepass")
        entry.parent.mkdir(parents=True, exist_ok=True)
        # tempfile.mkstemp's way, without importing tempfile (it brings shutil, random, bz2, lzma: ~5 ms)
        temporary = str(entry.parent / f".tmp-{os.getpid()}-{os.urandom(6).hex()}{entry.suffix}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        handle = os.open(temporary, flags, 0o600)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write((CHECK + _digest(body).hexdigest() + "\n").encode() + body)
            os.replace(temporary, entry)
        except BaseException:
            os.unlink(temporary)
            raise
        _prune(entry.parent)
    except OSError:
        pass


def _prune(folder: Path) -> None:
    """The oldest entries the cache made beyond MAX_ENTRIES deleted: only names it makes (`_OWN_NAME`)."""
    entries = sorted((p for p in folder.iterdir() if _OWN_NAME.match(p.name) and not p.is_symlink()),
                     key=lambda p: _mtime(p))
    for old in entries[:-MAX_ENTRIES]:
        try:
            old.unlink()
        except OSError:
            pass


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


# --- the result as JSON -----------------------------------------------------------------------------------
def _result_to(result: LintResult, inputs: dict[str, bytes]) -> dict:
    """The result as JSON data. A source whose text is the decoded bytes of an input of the key (nearly all)
    is kept without it (null): a run with the same key read the same bytes (1,000 files: 3.7 of 4.3 MB)."""
    from vllmlint.source.files import read_text

    fields = {f.name: getattr(result, f.name) for f in records.fields(result)}
    fields["sources"] = {shown: [source.path, None if shown in inputs and read_text(inputs[shown])[0] == source.text
                                 else source.text] for shown, source in result.sources.items()}
    fields["rules"] = [rule.code for rule in result.rules]
    _compact_findings(fields)
    return fields


def _result_from(fields: dict, inputs: dict[str, bytes]) -> LintResult:
    from vllmlint.engine import LintResult
    from vllmlint.registry import all_rules
    from vllmlint.source.files import read_text
    from vllmlint.source.yamlmodel import SourceFile

    rules = all_rules()
    _expand_findings(fields)

    def text_of(shown: str, text: str | None) -> str:
        if text is not None:
            return text
        decoded = read_text(inputs[shown])[0]  # KeyError: an input of the key is missing (load lints instead)
        if decoded is None:
            raise ValueError(f"{shown}: the input is not text")
        return decoded

    fields["sources"] = {shown: SourceFile(path, text_of(shown, text), shown)
                         for shown, (path, text) in fields["sources"].items()}
    fields["rules"] = [rules[code] for code in fields["rules"]]
    return LintResult(**fields)


def _encode(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return {"__enum__": _name(type(value)), "v": value.value}
    if records.is_record(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in records.fields(value)}
        return {"__dc__": _name(type(value)), "f": {k: _tuples(v) for k, v in fields.items()}}
    raise TypeError(f"not cacheable: {type(value).__name__}")


def _tuples(value: Any) -> Any:
    if isinstance(value, enum.Enum):  # an IntEnum (Severity) would be written as a plain number
        return {"__enum__": _name(type(value)), "v": value.value}
    if isinstance(value, tuple):
        return {"__tuple__": [_tuples(v) for v in value]}
    if isinstance(value, list):
        return [_tuples(v) for v in value]
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


_RESULT_MODULES = frozenset({"vllmlint.finding", "vllmlint.engine", "vllmlint.fix.edits"})


@functools.lru_cache(maxsize=None)
def _class(name: str) -> Any:
    """Only vllmlint's own dataclasses and enums are built from an entry, of a module already imported (or of the
    few modules a result holds classes of): loading an entry never imports anything else."""
    module, _, qualname = name.partition(":")
    if not module.startswith("vllmlint.") or "." in qualname or not qualname.isidentifier():
        raise ValueError(f"foreign class in the cache: {name}")
    loaded = sys.modules.get(module) or (importlib.import_module(module) if module in _RESULT_MODULES else None)
    if loaded is None:
        raise ValueError(f"class of a module not imported in the cache: {name}")
    cls = getattr(loaded, qualname)
    if not (records.is_record(cls) or (isinstance(cls, type) and issubclass(cls, enum.Enum))):
        raise ValueError(f"foreign class in the cache: {name}")
    return cls


def _decode(raw: dict) -> Any:
    if "__tuple__" in raw and len(raw) == 1:
        return tuple(raw["__tuple__"])
    if "__enum__" in raw:
        return _class(raw["__enum__"])(raw["v"])
    if "__dc__" in raw:
        cls = _class(raw["__dc__"])
        init = _init_fields(cls)
        values = raw["f"]
        if init.issuperset(values):
            return cls(**values)
        obj = cls(**{k: v for k, v in values.items() if k in init})
        for k, v in values.items():
            if k not in init:
                object.__setattr__(obj, k, v)
        return obj
    return raw


@functools.lru_cache(maxsize=None)
def _init_fields(cls: Any) -> frozenset[str]:
    return frozenset(f.name for f in records.fields(cls) if f.init)


# --- findings, compactly ----------------------------------------------------------------------------------
# A 1,000-file tree has thousands of findings: one generic `__dc__` object per finding, span and subject made the
# entry 9 MB and its decoding most of a cached run. The finding lists of a result are stored as rows instead:
# [code, severity, message, path, *span, subject, value, fix, suppressed_by, redact], the strings (messages repeat)
# and subjects as indexes into tables stored once; fields other than those keep the generic encoding.
_FINDING_FIELDS = ("code", "severity", "message", "path", "span", "subject", "value", "fix", "suppressed_by", "redact")
_SPAN_FIELDS = ("start", "end", "line", "col", "end_line", "end_col")
_SUBJECT_FIELDS = ("kind", "namespace", "name", "container")
_FIX_FIELDS = ("edits", "safety", "description")  # a fix: [safety, description, [[path, start, end, text], ...]]
_EDIT_FIELDS = ("path", "start", "end", "replacement")
_TABLES = "__findings__"  # the key of the tables in an entry's result, removed when the result is built


def _layout_known() -> bool:
    """The classes still have the fields the rows hold, all of them set by `__init__` (else: the generic form)."""
    from vllmlint.finding import Finding, Span, Subject
    from vllmlint.fix.edits import Edit, Fix

    return all(tuple(f.name for f in records.fields(cls)) == names and _init_fields(cls) == frozenset(names)
               for cls, names in ((Finding, _FINDING_FIELDS), (Span, _SPAN_FIELDS), (Subject, _SUBJECT_FIELDS),
                                  (Fix, _FIX_FIELDS), (Edit, _EDIT_FIELDS)))


def _compact_findings(fields: dict) -> None:
    """The lists of findings in `fields` (a result's fields) as rows, the tables under _TABLES."""
    from vllmlint.finding import Finding, Severity, Span, Subject

    if not _layout_known():
        return
    strings: dict[str, int] = {}
    subjects: dict[Subject, int] = {}

    def text(value: str) -> int:
        index = strings.get(value)
        if index is None:
            index = strings[value] = len(strings)
        return index

    def row(finding: Finding) -> list:
        span, subject = finding.span, finding.subject
        if type(span) is not Span or type(subject) is not Subject or type(finding.severity) is not Severity:
            raise TypeError("not cacheable: a finding with a foreign span, subject or severity")
        number = subjects.get(subject)
        if number is None:
            number = subjects[subject] = len(subjects)
        return [text(finding.code), int(finding.severity), text(finding.message), text(finding.path),
                span.start, span.end, span.line, span.col, span.end_line, span.end_col, number,
                _tuples(finding.value), _fix_row(finding.fix), finding.suppressed_by, finding.redact]

    compacted = []
    for name, value in fields.items():
        if isinstance(value, list) and value and all(type(item) is Finding for item in value):
            compacted.append(name)
            fields[name] = [row(finding) for finding in value]
    if compacted:
        fields[_TABLES] = {"lists": compacted, "strings": list(strings),
                           "subjects": [[s.kind, s.namespace, s.name, s.container] for s in subjects]}


def _expand_findings(fields: dict) -> None:
    """The inverse of `_compact_findings`, in place."""
    tables = fields.pop(_TABLES, None)
    if tables is None:
        return
    from vllmlint.finding import Finding, Severity, Span, Subject

    if not _layout_known():
        raise ValueError("the entry's findings do not match this version's classes")
    from vllmlint.fix.edits import Edit, Fix

    def fix_of(row: list) -> Fix:  # the inverse of _fix_row
        safety, description, edits = row
        return Fix([Edit(*edit) for edit in edits], safety, description)

    strings = tables["strings"]
    subjects = [Subject(*row) for row in tables["subjects"]]
    severities = {level.value: level for level in Severity}
    for name in tables["lists"]:
        fields[name] = [Finding(strings[r[0]], severities[r[1]], strings[r[2]], strings[r[3]],
                                Span(r[4], r[5], r[6], r[7], r[8], r[9]), subjects[r[10]], r[11],
                                r[12] if type(r[12]) is not list else fix_of(r[12]), r[13], r[14])
                        for r in fields[name]]


def _fix_row(fix: Any) -> Any:
    """A fix as [safety, description, [[path, start, end, replacement], ...]]; anything else (None, a fix of
    another class) as it is, for the generic encoding (an object, never a list)."""
    from vllmlint.fix.edits import Edit, Fix

    if type(fix) is not Fix or not isinstance(fix.edits, list) or any(type(e) is not Edit for e in fix.edits):
        return fix
    return [fix.safety, fix.description, [[e.path, e.start, e.end, e.replacement] for e in fix.edits]]



def _digest(data: bytes = b""):
    """A BLAKE2b digest of 32 bytes of `data` (the keys' hash): CPython's own `_blake2`, which hashes the 1,000
    inputs of a cached run in a third of the time of its `_sha256`, and needs no OpenSSL (importing hashlib loads
    it: ~3 ms of every cached run)."""
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    return blake2b(data, digest_size=32)
