"""Where the shipped data lives: `rules/` (rule metadata and docs), `data/` (knowledge: capacity catalogs,
image entrypoints, the removed-flag table) and `schemas/` at the top of a checkout, `vllmlint/_data/` in a wheel."""
from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def data_dir(name: str) -> Path:
    """Return the folder `rules`, `data` or `schemas`, from the wheel or from the source checkout."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"vllmlint data folder {name!r} is missing from this installation")


def rules_dir() -> Path:
    return data_dir("rules")


def knowledge_dir() -> Path:
    """Sourced knowledge: `data/` (capacity catalogs, image entrypoints, removed flags)."""
    return data_dir("data")


def schemas_dir() -> Path:
    return data_dir("schemas")


@lru_cache(maxsize=1)
def _compiled() -> dict:
    """The YAML under `rules/` and `data/`, pre-parsed at wheel build time (`hatch_build.py`), without the rules'
    documentation (`compiled-docs.json`); {} in a checkout."""
    return _read_compiled("compiled-data.json")


@lru_cache(maxsize=1)
def _compiled_docs() -> dict:
    """The rules' `docs` and `examples`, pre-parsed: more than half of the data, and a run that prints findings
    never reads them (`vllmlint explain`, SARIF and the docs do)."""
    return _read_compiled("compiled-docs.json")


def _read_compiled(name: str) -> dict:
    path = _PACKAGE / "_data" / name
    copy = _marshalled(path)
    if copy is not _MISSING:
        return copy
    if not path.is_file():
        return _checkout_compiled(name)
    import json  # here: a wheel reads the marshal copy, without the json module

    return json.loads(path.read_text(encoding="utf-8"))


def _checkout_compiled(name: str) -> dict:
    """In a checkout (an editable install), the same pre-parsed data a wheel ships, kept in the user's cache folder
    under a digest of every `rules/` and `data/` YAML file's name, size and modification time: a development run
    reads JSON instead of parsing ~140 YAML files at every start. Any edit makes a new digest; {} (parse as
    before) when the checkout has no such folders or the cache cannot be written. `VLLMLINT_NO_DATA_CACHE=1` (or
    `VLLMLINT_NO_CACHE=1`) turns it off."""
    import os

    root = _PACKAGE.parent
    if os.environ.get("VLLMLINT_NO_DATA_CACHE") or os.environ.get("VLLMLINT_NO_CACHE") \
            or not (root / "rules").is_dir() or not (root / "data").is_dir():
        return {}
    try:
        try:
            from _blake2 import blake2b  # CPython's own: no hashlib (and no OpenSSL) to load at start-up
        except ImportError:  # pragma: no cover - other Pythons
            from hashlib import blake2b

        digest = blake2b(digest_size=16)
        for part in ("rules", "data"):
            for path in sorted((root / part).rglob("*.yaml")):
                stat = path.stat()
                digest.update(f"{path.relative_to(root).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
        from vllmlint.cache import ENV, cache_dir

        # The user's own cache folder, not VLLMLINT_CACHE_DIR: that one is the result cache a run is told to use
        # (or, with --no-cache, to leave alone), and this is no result.
        root_folder = cache_dir({k: v for k, v in os.environ.items() if k != ENV})
        folder = root_folder / "checkout-data"
        target = folder / f"{digest.hexdigest()}-{name}"
        import json

        if target.is_file():
            return json.loads(target.read_text(encoding="utf-8"))
        data, docs = split_compiled(compile_rules_data(root))
        from vllmlint.cache import owned  # the result cache's rule: write only in a folder it owns (CACHEDIR.TAG)

        if not owned(root_folder):
            return data if name == "compiled-data.json" else docs
        folder.mkdir(parents=True, exist_ok=True)
        for part, value in (("compiled-data.json", data), ("compiled-docs.json", docs)):
            written = folder / f"{digest.hexdigest()}-{part}"
            temporary = written.with_name(f"{written.name}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(value), encoding="utf-8")
            os.replace(temporary, written)
        return data if name == "compiled-data.json" else docs
    except (OSError, ValueError):
        return {}  # a cache that cannot be read or written: the YAML is parsed as before


DOC_KEYS = ("docs", "examples")  # the parts of a rule file that only its documentation reads


def split_compiled(compiled: dict) -> tuple[dict, dict]:
    """(the data without the rules' documentation, the documentation: path -> its DOC_KEYS), as the wheel ships them."""
    data: dict = {}
    docs: dict = {}
    for key, value in compiled.items():
        if key.startswith("rules/") and isinstance(value, dict):
            docs[key] = {k: value[k] for k in DOC_KEYS if k in value}
            value = {k: v for k, v in value.items() if k not in DOC_KEYS}
        data[key] = value
    return data, docs


def compile_rules_data(root: Path) -> dict:
    """Every YAML file under the `rules/` and `data/` folders of `root`, parsed, keyed by its path relative
    to `root` (`rules/VL101-deprecated-entrypoint.yaml`, `data/capacity/gpus.yaml`)."""
    return {p.relative_to(root).as_posix(): _parse_yaml_file(p)
            for name in ("rules", "data") for p in sorted((root / name).rglob("*.yaml"))}


def load_yaml_data(path: Path) -> Any:  # plain data: dicts, lists, scalars (or None for an empty file)
    """A shipped YAML data file as plain Python data: the build's pre-parsed copy when there is one,
    else read through the linter's own YAML model (start-up time is most of a pre-commit run)."""
    compiled = _compiled()
    if compiled:
        key = _compiled_key(str(path))
        if key is not None and key in compiled:
            docs = _compiled_docs().get(key) if key.startswith("rules/") else None
            return {**compiled[key], **docs} if docs else compiled[key]
    return _parse_yaml_file(path)


def load_rule_metadata(path: Path) -> dict:
    """A rule file as `load_yaml_data` reads it, except that `docs` and `examples` may be missing (a wheel keeps
    them apart: `rule_documentation` reads them)."""
    compiled = _compiled()
    if compiled:
        key = _compiled_key(str(path))
        if key in compiled:
            return compiled[key]
    return _parse_yaml_file(path)


def _compiled_key(path: str) -> str | None:
    """`rules/X.yaml` or `data/Y.yaml` for a file of the shipped folders, else None. Paths are compared as
    the loaders build them (`data_dir(name) / ...`) before anything is resolved: start-up reads ~80 files."""
    for name in ("rules", "data"):
        for folder in _folders(name):
            if path.startswith(folder):
                relative = path[len(folder):]
                if "/." in "/" + relative or "//" in relative or os.sep != "/":
                    relative = Path(relative).as_posix()  # what pathlib would write otherwise (./x, a//b, a\\b)
                return f"{name}/{relative}"
    resolved = str(Path(path).resolve())
    for name in ("rules", "data"):
        folder = _folders(name)[1]
        if resolved.startswith(folder):
            return f"{name}/{Path(resolved[len(folder):]).as_posix()}"
    return None


@lru_cache(maxsize=None)
def _folders(name: str) -> tuple[str, str]:
    """The folder `rules` or `data` as given and resolved, each with a trailing separator."""
    import os

    folder = data_dir(name)
    return str(folder) + os.sep, str(folder.resolve()) + os.sep


def _parse_yaml_file(path: Path) -> Any:
    from vllmlint.source.yamlmodel import SourceFile, parse_documents, to_python

    documents, error = parse_documents(SourceFile(str(path), path.read_text(encoding="utf-8")))
    if error is not None:
        raise ValueError(f"{path}:{error.line}:{error.col}: invalid data file: {error.message}")
    return to_python(documents[0].root) if documents else None


# --- the wheel's marshal copies of the JSON a run reads ------------------------------------------------
# `marshal.loads` builds the same dicts and lists about twice as fast as `json.loads` (the k8s bundle: 1.6 ms
# against 3.8 ms) and needs no import, but its format belongs to one Python version: `hatch_build.py` writes the
# copies under `_data/<sys.implementation.cache_tag>/` (`cpython-311/schemas/vllm/0.31.0.json.marshal`), and a
# Python whose tag has no copy (a wheel built by another version, an editable install) reads the JSON itself.
MARSHALLED = ("compiled-data.json", "compiled-docs.json", "schemas/vllm", "schemas/k8s")  # under `_data/`
_MISSING = object()
# `VLLMLINT_NO_MARSHAL=1`: read the JSON instead of the wheel's marshal copies (to measure what they save).
_NO_MARSHAL = bool(os.environ.get("VLLMLINT_NO_MARSHAL"))


def marshal_folder() -> str:
    """The folder of this Python's marshal copies, relative to `vllmlint/_data/`."""
    import sys

    return sys.implementation.cache_tag or "no-cache-tag"


def load_json(path: Path) -> Any:
    """A shipped JSON file (gzip-compressed when its name ends in `.gz`) as plain data: the wheel's marshal copy
    of it when there is one for this Python, else the file itself."""
    copy = _marshalled(path)
    if copy is not _MISSING:
        return copy
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        import zlib  # gzip's format without importing the gzip module (31: a gzip header and trailer)

        raw = zlib.decompress(raw, 31)
    import json  # here: a wheel reads the marshal copy, without the json module

    return json.loads(raw.decode("utf-8"))


def _marshalled(path: Path) -> Any:
    """The marshal copy of `path` (a file under `vllmlint/_data/`), or _MISSING."""
    text = str(path)
    shipped = _shipped_prefix()
    if not text.startswith(shipped) or _NO_MARSHAL:
        return _MISSING  # a checkout's file: no copy (or the copies turned off to measure them, bench/FIGURES.md)
    try:
        with open(f"{shipped}{marshal_folder()}/{text[len(shipped):]}.marshal", "rb") as handle:
            raw = handle.read()
    except OSError:
        return _MISSING
    import marshal  # built in: no file is read

    try:
        return unpack(marshal.loads(raw))
    except (EOFError, ValueError, TypeError):  # a damaged copy: the JSON says the same
        return _MISSING


@lru_cache(maxsize=1)
def _shipped_prefix() -> str:
    import os

    return str(_PACKAGE / "_data") + os.sep


# --- mappings unmarshalled per key -----------------------------------------------------------------------
# A one-file run reads a few entries of the large mappings: a handful of the 862 `$defs` of the Kubernetes
# bundle (3.3 ms to unmarshal whole, 0.3 ms as bytes per key), a few of the 568 flag histories of the vLLM
# index, some of the data files of `compiled-data.json` (measured 2026-12-02). So the copy of such a file keeps
# those mappings as {key: marshal bytes of the value}, unmarshalled when a key is first read (`Lazy`). `paths`
# name them: () the whole document, ("flags",) its `flags`.
_ENVELOPE = "vllmlint-lazy/1"  # a tuple: no JSON document reads back as one


def lazy_paths(relative: str) -> list[tuple[str, ...]]:
    """The mappings of the shipped JSON `relative` (under `_data/`) that its marshal copy keeps per key."""
    if relative in ("compiled-data.json", "compiled-docs.json"):
        return [()]
    if relative == "schemas/vllm/index.json":
        return [("flags",), ("env",), ("metrics",)]
    if relative.startswith("schemas/k8s/") and not relative.endswith("/index.json"):
        return [("$defs",)]
    return []


def pack(document: Any, paths: list[tuple[str, ...]]) -> Any:
    """What `hatch_build.py` marshals for `document`: itself, or an envelope whose mappings at `paths` hold the
    marshal bytes of each value (`unpack` reverses it)."""
    import marshal

    if not paths:
        return document

    def packed(node: Any, path: tuple[str, ...]) -> Any:
        if path in paths:
            return {key: marshal.dumps(value) for key, value in node.items()}
        if any(p[:len(path)] == path for p in paths) and isinstance(node, dict):
            return {key: packed(value, path + (key,)) for key, value in node.items()}
        return node

    return (_ENVELOPE, [list(p) for p in paths], packed(document, ()))


def unpack(copy: Any) -> Any:
    """The document of a marshal copy: plain data, with the packed mappings as `Lazy` ones."""
    if type(copy) is not tuple:
        return copy
    tag, paths, document = copy
    if tag != _ENVELOPE:
        raise ValueError(f"unknown marshal envelope {tag!r}")
    for path in sorted(paths, key=len, reverse=True):
        if not path:
            return Lazy(document)
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = Lazy(parent[path[-1]])
    return document


class Lazy(Mapping):
    """A read-only mapping whose values are unmarshalled from bytes when first read (see `pack`). It equals the
    dict it stands for; `dict(lazy)` makes that dict (jsonschema gets one)."""

    __slots__ = ("_raw", "_made")

    def __init__(self, raw: dict):
        self._raw = raw
        self._made: dict = {}

    def __getitem__(self, key: Any) -> Any:
        made = self._made
        if key in made:
            return made[key]
        import marshal

        value = made[key] = marshal.loads(self._raw[key])
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self._raw else default

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __iter__(self):
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return f"Lazy({len(self._raw)} keys)"
