"""Container image references, parsed the way container runtimes read them."""
from __future__ import annotations

import re
from vllmlint.records import dataclass
from functools import lru_cache
from typing import Any

from vllmlint.vllm.release import release_from_tag, version_key
from vllmlint.lazyre import lazy_compile

_DIGEST = lazy_compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$")


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


# --- rows of data/image-entrypoints.yaml ----------------------------------------------------------------
_SPECIAL = frozenset(".^$*+?{}[]\\|()")  # characters that make a pattern more than its own text
_plain: dict[str, bool] = {}


def _names(pattern: str, image: ImageRef) -> bool:
    """Whether a row's `repository` pattern fully matches the image's repository or registry/path. Most rows name
    one repository as plain text (`vllm/vllm-openai`): compared as text, they cost no compiled pattern (a one-file
    run compiled two dozen)."""
    plain = _plain.get(pattern)
    if plain is None:
        plain = _plain[pattern] = not _SPECIAL.intersection(pattern)
    if plain:
        return pattern in (image.repository, image.name)
    return bool(re.fullmatch(pattern, image.repository) or re.fullmatch(pattern, image.name))


def entry_applies(entry: Any, image: ImageRef, release: str | None) -> bool:
    """Whether a row of data/image-entrypoints.yaml (`images` or `builds`) covers this image and release:
    `repository` matches the path (or registry/path), `tag` (if any) the whole tag, and `releases` bounds
    contain the release (an untagged or floating image is the newest: only open-ended rows apply)."""
    if not isinstance(entry, dict):
        return False
    pattern = entry.get("repository", "")
    if not _names(pattern, image):
        return False
    tag_pattern = entry.get("tag")
    if tag_pattern and not re.fullmatch(tag_pattern, image.tag or "latest"):
        return False
    bounds = entry.get("releases") or {}
    if bounds:
        if release is None:
            if bounds.get("to"):
                return False  # an untagged or floating image runs the newest entrypoint
        else:
            if bounds.get("from") and version_key(release) < version_key(str(bounds["from"])):
                return False
            if bounds.get("to") and version_key(release) > version_key(str(bounds["to"])):
                return False
    return True


# --- which build an image is, and which user it runs as ------------------------------------------------
@lru_cache(maxsize=1)
def _build_table() -> list[dict[str, Any]]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    path = knowledge_dir() / "image-entrypoints.yaml"
    data = load_yaml_data(path) if path.exists() else None
    rows = data.get("builds", []) if isinstance(data, dict) else []
    return [row for row in rows if isinstance(row, dict)]


@dataclass(frozen=True)
class ImageBuild:
    """The `builds` row of data/image-entrypoints.yaml for an image: its accelerator build, the uid it runs
    as without `runAsUser`, and the HOME of each uid in its /etc/passwd."""

    accelerator: str  # cuda, rocm, cpu, xpu, tpu, neuron, hpu
    user: int | None  # the image's USER as a uid; None when not verified
    passwd: dict[int, str]
    home_writable: frozenset[int]
    passwd_complete: bool
    source: str
    workdir: str | None = None  # the image's WORKDIR; None when not recorded

    def home(self, uid: int) -> str | None:
        """HOME of `uid` in this image: its passwd entry, `/` for a uid of 1000 or more without one (when the
        table lists every such entry); None when unknown (system accounts, unverified images)."""
        if uid in self.passwd:
            return self.passwd[uid]
        if self.passwd_complete and uid >= 1000:
            return "/"
        return None


def _image_build(row: dict[str, Any]) -> ImageBuild:
    passwd: dict[int, str] = {}
    for uid, home in (row.get("passwd") or {}).items():
        try:
            passwd[int(uid)] = str(home)
        except (TypeError, ValueError):
            continue
    user = row.get("user")
    return ImageBuild(str(row.get("accelerator", "")), int(user) if isinstance(user, int) else None,
                      passwd, frozenset(int(u) for u in row.get("home_writable") or ()),
                      bool(row.get("passwd_complete")), str(row.get("source", "")),
                      str(row["workdir"]) if row.get("workdir") else None)


def image_build(image: ImageRef, release: str | None = None) -> ImageBuild | None:
    """The build and user facts of an image (data/image-entrypoints.yaml `builds`, matched like `images`
    by `image_entry`); None when the image is not in the table."""
    return _image_build_for(image, release or release_from_tag(image.tag))


@lru_cache(maxsize=4096)
def _image_build_for(image: ImageRef, release: str | None) -> ImageBuild | None:
    for row in _build_table():
        if entry_applies(row, image, release):
            return _image_build(row)
    return None


def image_builds(image: ImageRef, release: str | None = None) -> list[ImageBuild]:
    """Every build an image may be: the one `image_build` finds, except for a reference pinned by digest
    alone with no release from elsewhere, which may be any release: then every row of its repository and
    tag, whatever their release bounds (callers judge only what all of them agree on)."""
    release = release or release_from_tag(image.tag)
    if release is not None or image.tag is not None or not image.digest:
        found = image_build(image, release)
        return [found] if found is not None else []
    return list(_digest_builds(image))


def _any_release_builds(image: ImageRef) -> list[ImageBuild]:
    result: list[ImageBuild] = []
    for row in _build_table():
        if entry_applies({k: v for k, v in row.items() if k != "releases"}, image, None):
            result.append(_image_build(row))
    return result


# --- vendor builds: the release a fork's tag names, and args read as vLLM's on unlisted images (issue 9) ----
@lru_cache(maxsize=1)
def _image_table() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    path = knowledge_dir() / "image-entrypoints.yaml"
    data = load_yaml_data(path) if path.exists() else None
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class TagRelease:
    """A `tag_releases` row of data/image-entrypoints.yaml that matches an image: the upstream vLLM release its
    tag names, the build's name (a fork or rebuild), and option values its plugin registers."""

    release: str
    fork: str
    plugin_values: dict[str, frozenset[str]]
    source: str


def tag_release(image: ImageRef) -> TagRelease | None:
    """The upstream release a vendor image's tag names (`aibrix/vllm-openai:v0.7.3.self.post1` -> 0.7.3,
    `quay.io/ascend/vllm-ascend:v0.9.1rc1` -> 0.9.1); None when no row matches."""
    return _tag_release(image)


@lru_cache(maxsize=4096)
def _tag_release(image: ImageRef) -> TagRelease | None:
    if not image.tag:
        return None
    for row in _image_table().get("tag_releases") or []:
        if not isinstance(row, dict):
            continue
        pattern = str(row.get("repository", ""))
        if not _names(pattern, image):
            continue
        match = re.fullmatch(str(row.get("tag", "")), image.tag)
        if match is None or not match.groups() or not match.group(1):
            continue
        values = {str(flag): frozenset(str(v) for v in vals or ())
                  for flag, vals in (row.get("plugin_values") or {}).items()}
        release = vendor_release(row, match.group(1))
        if release is None:
            return None  # the vendor's release is not mapped to a vLLM release: unknown
        return TagRelease(release, str(row.get("fork", "")), values, str(row.get("source", "")))
    return None


def image_fork(image: ImageRef, row: dict[str, Any] | None) -> str | None:
    """The vendor build an image is (`fork` of its `images` row, else of its `tag_releases` row); None for
    vLLM's own images and unknown ones."""
    if isinstance(row, dict) and row.get("fork"):
        return str(row["fork"])
    found = tag_release(image)
    return found.fork if found is not None else None


def assumed_entrypoint(image: ImageRef) -> list[str] | None:
    """For an image not in `images`: the entrypoint its `args` are read with (the api_server) when its repository
    path contains `vllm` (data/image-entrypoints.yaml `assumed_entrypoint`) and it is not listed as another
    program; None otherwise."""
    table = _image_table().get("assumed_entrypoint")
    if not isinstance(table, dict):
        return None
    needle = str(table.get("contains") or "")
    if not needle or needle not in image.repository.lower():
        return None
    for row in table.get("not_vllm") or []:
        pattern = str(row.get("repository", "")) if isinstance(row, dict) else ""
        if pattern and _names(pattern, image):
            return None
    entry = table.get("entrypoint")
    return [str(word) for word in entry] if isinstance(entry, list) and entry else None


def vendor_release(row: dict[str, Any], found: str) -> str | None:
    """The vLLM release a `tag_releases` row gives for the first group of its tag: the group itself, or, for a row
    with `vendor_releases` (the tag names the vendor's release: Ray, NGC, Red Hat), the vLLM release the vendor
    documents for it; None when the map does not list it or lists it as unknown (`vllm: null`)."""
    table = row.get("vendor_releases")
    if not isinstance(table, dict):
        return found
    entry = table.get(found)
    release = entry.get("vllm") if isinstance(entry, dict) else None
    return str(release) if release else None


@lru_cache(maxsize=4096)
def _digest_builds(image: ImageRef) -> tuple[ImageBuild, ...]:
    """The builds of an image pinned by digest alone (`image_builds`), once per image: the table is scanned whole."""
    return tuple(_any_release_builds(image))
