"""The per-file cache of a run in chunks (vllmlint.stream): each file's share of the result, kept by its content.

A file's share (findings, notes, counts, text) and its link keys are kept when no other file of the run could change
them: its component under the keys (vllmlint.links) was the file alone. A file linked to others keeps only its keys:
the next run lints it once, with its component, instead of in its chunk first. The share then depends on the file's own
bytes, the options, vllmlint's code and data, and the facts its chunk read (`links.FACTS`): that is the key, plus the
facts kept with the entry. On the next run a file with the same key is not read again: its keys join the run's, and
its share stands only if its component is still the file alone and the run's facts read as they did; otherwise it is
linted again with its component, like a file of two chunks. So an edit to a Deployment re-lints the HPA in another
file that scales it (they share a key), and a file nobody links to is never linted twice.

One index per set of options and code (`files/<key>.json` in the cache folder, next to the whole-run results):
written whole at the end of the run (a temporary file moved into place), holding the entries of that run's files
only. JSON, never pickle, like the result cache; an entry that does not decode is a miss. Only used where the whole
run is cached too (the cache recorded the files' bytes), and never when the run read a file outside its inputs.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vllmlint.engine import Linter
    from vllmlint.stream import _Share

FORMAT = "vllmlint-file-cache 1"


class FileCache:
    def __init__(self, linter: Linter, folder: Path):
        from vllmlint import cache

        self._linter = linter
        digest = cache._digest(f"{FORMAT}\0{cache.tool_fingerprint()}\0".encode())
        digest.update(cache._options_key(linter.options).encode("utf-8", "surrogatepass"))
        self._base = digest.copy()
        self.path = folder / "files" / f"{digest.hexdigest()}.json"
        self._old: dict[str, Any] = {}
        self._new: dict[str, Any] = {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8", errors="surrogatepass"), object_hook=cache._decode)
            if isinstance(raw, dict) and raw.get("format") == FORMAT and isinstance(raw.get("files"), dict):
                self._old = raw["files"]
        except (OSError, ValueError):
            pass

    def key(self, shown: str) -> str | None:
        """The key of a deferred file whose bytes the run holds (None: read from disk, not keyed)."""
        held = self._linter._held.get(shown)
        if held is None:
            return None
        digest = self._base.copy()
        real = self._linter.real_paths.get(shown, "")
        digest.update(f"{shown}\0{real}\0{held[1]}\0{held[2]}\0".encode("utf-8", "surrogatepass"))
        digest.update(held[0])
        return digest.hexdigest()

    def get(self, key: str | None, shown: str) -> tuple[_Share | None, tuple, tuple, set[tuple]] | None:
        """(share or None for keys only, provides, wants, facts its chunk had) of file `shown` kept under `key`."""
        if key is None or key not in self._old:
            return None
        try:
            return _share_from(self._old[key], shown)
        except Exception:  # foreign or damaged: lint the file instead
            return None

    def put(self, key: str | None, share: _Share | None, provides, wants, facts) -> None:
        """Keep a file's share (None: only its keys, for a file linked to others: its share depends on them, but
        its keys say what to lint it with, without reading it first)."""
        if key is None:
            return
        if share is None:
            self._new[key] = {"provides": [list(k) for k in provides], "wants": [list(k) for k in wants]}
            return
        self._new[key] = _share_to(share, provides, wants, facts)

    def write(self) -> None:
        from vllmlint import cache

        try:
            text = json.dumps({"format": FORMAT, "files": self._new}, default=cache._encode, ensure_ascii=False,
                              separators=(",", ":"))
        except (TypeError, ValueError):
            return
        cache._write(self.path, text)


def _share_to(share: _Share, provides, wants, facts) -> dict:
    source = share.source
    return {"findings": share.findings, "suppressed": share.suppressed, "ignored": share.ignored,
            "notices": share.notices, "checked": share.checked,
            "skipped": share.skipped, "counts": [share.workloads, share.invocations, share.objects],
            "source": None if source is None else [source.path, source.text],
            "provides": [list(k) for k in provides], "wants": [list(k) for k in wants],
            "facts": [list(k) for k in facts]}


def _share_from(raw: dict, shown: str):
    from vllmlint.source.yamlmodel import SourceFile
    from vllmlint.stream import _Share

    if "findings" not in raw:  # keys only
        return None, tuple(tuple(k) for k in raw["provides"]), tuple(tuple(k) for k in raw["wants"]), set()
    share = _Share()
    share.findings, share.suppressed = list(raw["findings"]), list(raw["suppressed"])
    share.ignored, share.notices = list(raw["ignored"]), list(raw["notices"])
    share.checked, share.skipped = int(raw["checked"]), raw["skipped"]
    share.workloads, share.invocations, share.objects = (int(n) for n in raw["counts"])
    if raw["source"] is not None:
        path, text = raw["source"]
        share.source = SourceFile(path, text, shown)
    provides = tuple(tuple(k) for k in raw["provides"])
    wants = tuple(tuple(k) for k in raw["wants"])
    return share, provides, wants, {tuple(k) for k in raw["facts"]}
