"""Where the shipped data lives: `rules/` and `schemas/` at the top of a checkout, `vllmlint/_data/` in a wheel."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def data_dir(name: str) -> Path:
    """Return the folder `rules` or `schemas`, from the wheel or from the source checkout."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"vllmlint data folder {name!r} is missing from this installation")


def rules_dir() -> Path:
    return data_dir("rules")


def schemas_dir() -> Path:
    return data_dir("schemas")


def load_yaml_data(path: Path):
    """A shipped YAML data file as plain Python data, read through the linter's own YAML model (about
    twice as fast as ruamel's constructor: start-up time is most of a pre-commit run)."""
    from .yamlmodel import SourceFile, parse_documents, to_python

    documents, error = parse_documents(SourceFile(str(path), path.read_text(encoding="utf-8")))
    if error is not None:
        raise ValueError(f"{path}:{error.line}:{error.col}: invalid data file: {error.message}")
    return to_python(documents[0].root) if documents else None
