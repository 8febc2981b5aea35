"""Where vllmlint's own cache folder is (the result cache, vllmlint.run.cache; models fetched from the Hub)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

ENV = "VLLMLINT_CACHE_DIR"


def cache_dir(env: dict[str, str] | None = None) -> Path:
    """vllmlint's own cache folder: VLLMLINT_CACHE_DIR, else the platform's user cache folder."""
    env = dict(os.environ) if env is None else env
    if env.get(ENV):
        return Path(env[ENV]).expanduser()
    if sys.platform == "win32" and env.get("LOCALAPPDATA"):
        return Path(env["LOCALAPPDATA"]) / "vllmlint" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "vllmlint"
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "vllmlint"
