"""Parsed YAML kept between lint runs of the language server, so that an edit re-parses only what changed.

Keyed by the file's display path and its text (an open document's version changes its text; a file on disk
is read again, and its unchanged text finds its parse): the documents, the syntax error and the duplicate keys
the parse found. The engine asks through `Linter.parse_cache`; entries not asked for by a run are dropped
after it (`sweep`), so closed or deleted files do not stay in memory.

A run may change the nodes of what it read: Kustomize's `images` and patches are merged into the resources'
container nodes (`vllmlint.source.kustomize`), and those resources are files in the Kustomization's folder
or below it (a base is a Kustomization of its own; a resource file outside the folder is not read). After a
run, the server drops the parses of every file under a Kustomization's folder (`drop_under`), so they are
parsed afresh next time: correct, not incremental, for those folders; the rest stay.
"""
from __future__ import annotations

from vllmlint.records import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vllmlint.source.yamlmodel import Document, SourceFile, YAMLSyntaxError


@dataclass
class _Entry:
    documents: list[Document]
    error: YAMLSyntaxError | None
    duplicate_keys: list
    error_at: tuple[int, int, int] | None  # (index, line, col) as parsed: the engine may move a block's error


class ParseCache:
    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._used: set[tuple[str, str]] = set()
        self.hits = 0
        self.misses = 0

    def parse(self, source: SourceFile) -> tuple[list[Document], YAMLSyntaxError | None]:
        from vllmlint.source.yamlmodel import parse_documents

        key = (source.display_path, source.text)
        self._used.add(key)
        entry = self._entries.get(key)
        if entry is not None:
            self.hits += 1
            source.duplicate_keys = list(entry.duplicate_keys)
            if entry.error is not None and entry.error_at is not None:
                entry.error.index, entry.error.line, entry.error.col = entry.error_at
            return entry.documents, entry.error
        self.misses += 1
        documents, error = parse_documents(source)
        at = (error.index, error.line, error.col) if error is not None else None
        self._entries[key] = _Entry(documents, error, list(source.duplicate_keys), at)
        return documents, error

    def sweep(self) -> None:
        """Drop what the last run did not ask for."""
        self._entries = {key: entry for key, entry in self._entries.items() if key in self._used}
        self._used = set()

    def drop_under(self, folders: set[str]) -> None:
        """Drop the parses of files in these folders (display paths; "" is the top) and below them."""
        if "" in folders:
            self.clear()
            return
        prefixes = tuple(folder.rstrip("/") + "/" for folder in folders)
        self._entries = {key: entry for key, entry in self._entries.items() if not key[0].startswith(prefixes)}

    def clear(self) -> None:
        self._entries.clear()
        self._used = set()

    def __len__(self) -> int:
        return len(self._entries)
