"""`helm template` output: one stream of documents, each labelled with the chart file it came from."""
from __future__ import annotations

import re

from vllmlint.lazyre import lazy_compile

_HELM_SOURCE = lazy_compile(r"^# Source: (\S.*)$", re.M)


def split_helm_output(text: str, unlabelled: str = "-") -> list[tuple[str, str]] | None:
    """`helm template` output: (source file, document text) per document, or None if not Helm output."""
    if not _HELM_SOURCE.search(text):
        return None
    chunks = re.split(r"^---[ \t]*$", text, flags=re.M)
    by_source: dict[str, list[str]] = {}
    for chunk in chunks:
        match = _HELM_SOURCE.search(chunk)
        if chunk.strip():
            # One template may render several documents: they stay one multi-document file. Documents
            # without a `# Source:` (hand-written ones piped in with the chart) keep the stdin name.
            source = match.group(1).strip() if match else unlabelled
            by_source.setdefault(source, []).append(chunk.strip("\n") + "\n")
    return [(source, "---\n".join(parts)) for source, parts in by_source.items()] or None
