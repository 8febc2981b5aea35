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
