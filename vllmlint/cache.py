"""Where vllmlint's own cache folder is (the result cache, vllmlint.run.cache; the checkout's pre-parsed data,
vllmlint.data; models fetched from the Hub), the names it makes there and its mark (CACHEDIR.TAG)."""
from __future__ import annotations

import os
import re
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


# Names the cache makes: 64 hexadecimal digits (a BLAKE2b digest) and its suffix. Nothing else is ever deleted.
_OWN_NAME = re.compile(r"^[0-9a-f]{64}\.(?:json|txt)$")
_DATA_NAME = re.compile(r"^[0-9a-f]{32}-compiled-(?:data|docs)\.json$")  # vllmlint.data's checkout copies
# The cache folder's mark (https://bford.info/cachedir/, as pip and ruff write it): the cache writes (and prunes)
# only in a folder it created, or that holds this mark from an earlier run; a folder of other files is left alone.
TAG_NAME = "CACHEDIR.TAG"
TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
       "# This file is a cache directory tag created by vllmlint.\n"
       "# For information about cache directory tags, see:\n#\thttps://bford.info/cachedir/\n")


def owned(root: Path) -> bool:
    """Whether the cache may write in `root`: it holds vllmlint's CACHEDIR.TAG, or it is created now (or found
    empty, or holding only what an earlier version wrote) and marked so. A folder of other files
    (`VLLMLINT_CACHE_DIR=.` in a project, a `results/` of one's own) is never written to."""
    tag = root / TAG_NAME
    try:
        if tag.is_file() and not tag.is_symlink():
            return tag.read_text(encoding="utf-8", errors="replace") == TAG
        root.mkdir(parents=True, exist_ok=True)
        if not _only_entries(root):
            return False
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(tag, flags, 0o644), "w", encoding="utf-8") as out:
            out.write(TAG)
        return True
    except OSError:
        return False


_SUBFOLDERS = ("results", "shown", "renders", "files", "checkout-data")  # "files": the per-file cache of earlier
# versions; "checkout-data": the pre-parsed data of a checkout (vllmlint.data), which marks the folder the same way


def _only_entries(root: Path, most: int = 4096) -> bool:
    """`root` holds nothing but the cache's own subfolders of names it makes (empty, or a folder an earlier version
    wrote before it marked its folders): then it is the cache's to mark. Any other file or folder: not."""
    seen = 0
    for child in root.iterdir():
        if child.name not in _SUBFOLDERS or child.is_symlink() or not child.is_dir():
            return False
        for entry in child.iterdir():
            seen += 1
            if seen > most or not (_OWN_NAME.match(entry.name) or _DATA_NAME.match(entry.name)
                                   or entry.name.startswith(".tmp-")):
                return False
    return True
