"""Which build a tag of vLLM's CUDA image is (data/image-variants.yaml): its CUDA version, the CPU architectures
it is published for, the compute capabilities its kernels are compiled for, and the image's size on disk.

`image_variant(image)` reads `vllm/vllm-openai:v<release><tag>` (Docker Hub only: a mirror may copy some tags
and not others); None for another image, a floating tag (`latest`, `nightly`), a release no period of the
table covers or a tag suffix the table does not list: never a guess.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from vllmlint.lazyre import lazy_compile
from vllmlint.records import dataclass

if TYPE_CHECKING:
    from vllmlint.vllm.images import ImageRef

_HUB_NAME = lazy_compile(r"(?:(?:docker\.io|registry-1\.docker\.io|index\.docker\.io)/)?vllm/vllm-openai")
_RELEASE_TAG = lazy_compile(r"v(\d+\.\d+\.\d+(?:\.\d+)?)((?:-[A-Za-z0-9_]+)*)")
_ARCH_TAGS = {"-x86_64": "amd64", "-aarch64": "arm64"}
_ENTRY = lazy_compile(r"(\d+)\.(\d+)[af]?(\+PTX)?")


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    path = knowledge_dir() / "image-variants.yaml"
    data = load_yaml_data(path) if path.exists() else None
    return data if isinstance(data, dict) else {}


def _key(release: str) -> tuple[int, ...] | None:
    from vllmlint.vllm.versions import version_key

    try:
        return version_key(release)
    except ValueError:
        return None


def _within(release: str, start: str | None, end: str | None) -> bool:
    key = _key(release)
    if key is None:
        return False
    low = _key(start) if start else None
    high = _key(end) if end else None
    return (low is None or key >= low) and (high is None or key <= high)


@dataclass(frozen=True)
class Variant:
    """One tag of vllm/vllm-openai: the release, the variant's suffix (`-cu129`), the CUDA version it is built
    with, the architectures this tag holds (one for `-x86_64`/`-aarch64` tags) and the compiled capabilities
    per architecture (`torch_cuda_arch_list` as the release pipeline passes it)."""

    release: str
    tag: str
    cuda: str
    arches: tuple[str, ...]
    capabilities: tuple[tuple[str, str], ...]  # (arch, "7.5 8.0 ... 12.0+PTX")
    also_runs: tuple[str, ...]
    lacks: tuple[str, ...]
    source: str
    others: tuple[tuple[str, str, tuple[str, ...]], ...]  # the release's other variants: (tag, cuda, arches)
    arch_tags: bool

    @property
    def cuda_major(self) -> int:
        return int(self.cuda.split(".", 1)[0])

    def capability_list(self, arch: str) -> str | None:
        return next((text for name, text in self.capabilities if name == arch), None)

    def runs_on(self, capability: tuple[int, int], arch: str) -> bool | None:
        """Whether this build has kernels a GPU of `capability` can run, on nodes of `arch`; None when the list
        for that arch is not known. Compiled code for X.y runs on X.z with z >= y (CUDA's binary compatibility),
        PTX for a lower capability is compiled by the driver; the table's `lacks` (targets the pipeline says it
        skips) and `also_runs` (targets it says a family build covers) decide first."""
        text = f"{capability[0]}.{capability[1]}"
        if text in self.also_runs:
            return True
        if text in self.lacks:
            return False
        listed = self.capability_list(arch)
        if listed is None:
            return None
        for entry in listed.split():
            match = _ENTRY.fullmatch(entry)
            if match is None:
                return None
            major, minor, ptx = int(match.group(1)), int(match.group(2)), bool(match.group(3))
            if (major, minor) == capability or (major == capability[0] and minor <= capability[1]):
                return True
            if ptx and (major, minor) <= capability:
                return True
        return False


def image_variant(image: ImageRef | None) -> Variant | None:
    """The variant of a vllm/vllm-openai tag (see the module's docstring); None when not known."""
    if image is None or not image.tag or not _HUB_NAME.fullmatch(image.name):
        return None
    match = _RELEASE_TAG.fullmatch(image.tag)
    if match is None:
        return None
    release, rest = match.group(1), match.group(2)
    for period in _table().get("periods", []):
        if not _within(release, period.get("from"), period.get("to")):
            continue
        only = None
        if period.get("arch_tags"):
            for prefix, arch in _ARCH_TAGS.items():
                if rest.startswith(prefix):
                    only, rest = arch, rest[len(prefix):]
                    break
        rows = [row for row in period.get("variants", []) if isinstance(row, dict)]
        row = next((r for r in rows if r.get("tag") == rest), None)
        if row is None:
            return None
        arches = tuple(a for a in row.get("arches", []) if only is None or a == only)
        if not arches:
            return None  # an -aarch64 tag of a build published for amd64 only: not a tag the table knows
        others = tuple((str(r.get("tag")), str(r.get("cuda")), tuple(r.get("arches", []))) for r in rows if r is not row)
        return Variant(release, rest, str(row.get("cuda")), arches,
                       tuple((str(k), str(v)) for k, v in (row.get("capabilities") or {}).items()),
                       tuple(row.get("also_runs", [])), tuple(row.get("lacks", [])), str(row.get("source", "")),
                       others, bool(period.get("arch_tags")))
    return None


def hub_release(image: ImageRef | None) -> str | None:
    """The release of a `vllm/vllm-openai:v<release>...` tag on Docker Hub (any variant), else None."""
    if image is None or not image.tag or not _HUB_NAME.fullmatch(image.name):
        return None
    match = _RELEASE_TAG.fullmatch(image.tag)
    return match.group(1) if match else None


def min_driver_major(cuda_major: int) -> int | None:
    """The oldest driver (its major number) that runs code of this CUDA major release (NVIDIA's minor version
    compatibility table), None when the table does not list it."""
    table = _table().get("driver_minimums") or {}
    return next((row["min_driver_major"] for row in table.get("cuda", []) if row.get("cuda_major") == cuda_major),
                None)


def driver_label_keys() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(driver-major label keys, CUDA-major label keys) that GPU feature discovery writes on GPU nodes."""
    labels = _table().get("driver_labels") or {}
    return tuple(labels.get("driver_major", [])), tuple(labels.get("cuda_major", []))


def image_min_bytes(release: str | None) -> tuple[int, str] | None:
    """(a lower bound of the unpacked vllm/vllm-openai image of this release in bytes, its source), the largest
    bound the table gives for the release; None when no entry covers it."""
    if not release:
        return None
    best: tuple[int, str] | None = None
    for row in _table().get("image_sizes", []):
        if isinstance(row, dict) and _within(release, row.get("from"), row.get("to")):
            size = int(float(row.get("min_gb", 0)) * 10**9)
            if best is None or size > best[0]:
                best = (size, str(row.get("source", "")))
    return best


__all__ = ["Variant", "image_variant", "hub_release", "min_driver_major", "driver_label_keys", "image_min_bytes"]
