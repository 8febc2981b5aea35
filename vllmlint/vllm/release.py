"""vLLM release numbers: parsing, ordering, and reading them off image tags and pip pins."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vllmlint.vllm.invocation import Invocation

# What a release number looks like where a manifest names one (an annotation, `--vllm-version`).
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?(post|rc|dev)(\d*))?$")
# What `version_key` orders: also PEP 440 pre-releases (a, b) and a local part (`+cu129`), as wheels
# and the catalogs' own file names spell them.
_ORDERABLE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[.-]?(a|b|rc|dev)(\d*))?(?:[.-]?(post)(\d*))?"
                        r"(?:\+[0-9A-Za-z.]*)?$")
_PRE_RANK = {"dev": 0, "a": 1, "b": 2, "rc": 3, None: 4}
# A tag may carry a build variant after the release: v0.29.0-cu129, 0.10.1.1-ubuntu2404.
_TAG = re.compile(r"^v?(\d+\.\d+(?:\.\d+){0,2}(?:\.?(?:post|rc)\d*)?)(?:-(?:cu\d+|cuda[\d.]+|rocm[\d.]*|ubuntu\d+|x86_64|amd64|arm64|aarch64|cpu|py3\d*|torch[\d.]+))*$")
_PIP_PIN = re.compile(r"(?:^|[\s'\"])vllm(?:\[[^\]]*\])?==(\d+\.\d+(?:\.\d+){0,2}(?:\.?post\d+)?)(?=$|[\s'\";&|])")


def version_key(version: str) -> tuple[int, ...]:
    """The one parser of vLLM release numbers, as a sort key: 0.6.4 < 0.6.4.post1 < 0.6.5 < 0.10.1 <
    0.10.1.1 < 0.29.0 = 0.29; dev < a < b < rc sort before the release, post after it. The key is flat,
    `key[:2]` is the minor release and `key[:3]` the (major, minor, patch) triple. ValueError when the
    text is no release number (`latest`, `nightly`)."""
    match = _ORDERABLE.match(version.strip()) if isinstance(version, str) else None
    if not match:
        raise ValueError(f"not a vLLM release number: {version!r}")
    major, minor, patch, extra, pre, pre_number, post, post_number = match.groups()
    return (int(major), int(minor), int(patch or 0), int(extra or 0), _PRE_RANK[pre], int(pre_number or 0),
            int(post_number or 0) if post else -1)


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as a is older than, equal to or newer than b."""
    ka, kb = version_key(a), version_key(b)
    return (ka > kb) - (ka < kb)


def release_numbers(version: str | tuple[int, ...] | None) -> tuple[int, int, int]:
    """(major, minor, patch) of a release: 'v0.6.4.post1' -> (0, 6, 4); None, or a text that is no release
    number ('latest'), -> the newest catalogued release, which is what an unpinned image runs."""
    if isinstance(version, tuple):
        padded = (tuple(version) + (0, 0, 0))[:3]
        return padded[0], padded[1], padded[2]
    if version is not None:
        try:
            key = version_key(version)
            return key[0], key[1], key[2]
        except ValueError:
            pass
    from vllmlint.vllm.catalog import newest

    key = version_key(newest())
    return key[0], key[1], key[2]


def is_version(text: str) -> bool:
    return bool(_VERSION.match(text.strip()))


def release_from_tag(tag: str | None) -> str | None:
    """`v0.29.0-cu129` -> `0.29.0`; fork tags (`v0.7.3.self.post1`), dates, `latest`, `nightly` -> None."""
    if not tag:
        return None
    match = _TAG.match(tag)
    return match.group(1) if match else None


def pinned_in_shell(text: str) -> str | None:
    """The release of a `pip install vllm==X` (or `uv pip install`) in a shell string."""
    if "install" not in text:
        return None
    match = _PIP_PIN.search(text)
    return match.group(1) if match else None


ANNOTATION = "vllmlint.io/vllm-version"
# Repositories whose tags are vLLM release numbers; a mirror keeps the path under its own host.
_UPSTREAM = re.compile(r"(^|.*/)vllm/vllm-(openai|openai-rocm|openai-cpu|tpu|xpu|neuron)$")


def workload_release(invocation: Invocation) -> tuple[str | None, str]:
    """(release, where it came from) for one invocation, by precedence: the workload's annotation,
    the image tag of an upstream vLLM image or a `vllm==X` pin in its shell script; else (None, "")."""
    container = invocation.container
    if container is not None:
        for found in (container.pod.owner.annotations, container.pod.annotations):
            value = found.get(ANNOTATION)
            if value and is_version(value):
                return value.strip().lstrip("v"), f"annotation {ANNOTATION}"
    image = invocation.image
    if image is not None and _UPSTREAM.match(image.name):
        release = release_from_tag(image.tag)
        if release:
            return release, f"image tag {image.raw}"
    if image is not None:
        from vllmlint.vllm.images import tag_release

        vendor = tag_release(image)  # a vendor tag naming its upstream release (data/image-entrypoints.yaml)
        if vendor is not None:
            return vendor.release, f"image tag {image.raw}, based on vLLM {vendor.release}"
    if invocation.script is not None:
        release = pinned_in_shell(invocation.script.text)
        if release:
            return release, "pip pin vllm==" + release
    return None, ""


def upstream_image(image: object) -> bool:
    """Whether an image (an `ImageRef`) is one of vLLM's own published images (vllm/vllm-openai and its
    ROCm/CPU/TPU/XPU/Neuron siblings, any mirror keeping the path): images that hold no model weights."""
    name = getattr(image, "name", None)
    return isinstance(name, str) and bool(_UPSTREAM.match(name))
