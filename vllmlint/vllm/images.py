"""Container image references, parsed the way container runtimes read them."""
from __future__ import annotations

import re
from dataclasses import dataclass

_DIGEST = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$")


@dataclass(frozen=True)
class ImageRef:
    raw: str
    registry: str  # "" for Docker Hub
    repository: str  # e.g. "vllm/vllm-openai" (Docker Hub "library/" prefix removed)
    tag: str | None
    digest: str | None

    @property
    def pinned(self) -> bool:
        return bool(self.digest) or (self.tag is not None and self.tag != "latest")

    @property
    def name(self) -> str:
        return f"{self.registry}/{self.repository}" if self.registry else self.repository


def parse_image(raw: str) -> ImageRef | None:
    """Split `registry:5000/ns/repo:tag@sha256:...`; None for references that are not images (templates)."""
    text = raw.strip()
    if not text or any(c in text for c in " {}$\t\n") or text.startswith(("-", ":", "@")):
        return None
    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
        if not _DIGEST.match(digest):
            return None
    tag = None
    last_slash = text.rfind("/")
    colon = text.rfind(":")
    if colon > last_slash:
        text, tag = text[:colon], text[colon + 1:]
        if not tag:
            return None
    registry = ""
    first, _, rest = text.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, text = first, rest
    if registry in ("docker.io", "index.docker.io", "registry-1.docker.io"):
        registry = ""
    if not registry and text.startswith("library/"):
        text = text[len("library/"):]
    if not text:
        return None
    return ImageRef(raw, registry, text, tag, digest)
