"""vLLM release numbers: parsing, ordering, and reading them off image tags and pip pins."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vllmlint.vllm.invocation import Invocation

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?(post|rc|dev)(\d*))?$")
# A tag may carry a build variant after the release: v0.29.0-cu129, 0.10.1.1-ubuntu2404.
_TAG = re.compile(r"^v?(\d+\.\d+(?:\.\d+){0,2}(?:\.?(?:post|rc)\d*)?)(?:-(?:cu\d+|cuda[\d.]+|rocm[\d.]*|ubuntu\d+|x86_64|amd64|arm64|aarch64|cpu|py3\d*|torch[\d.]+))*$")
_PIP_PIN = re.compile(r"(?:^|[\s'\"])vllm(?:\[[^\]]*\])?==(\d+\.\d+(?:\.\d+){0,2}(?:\.?post\d+)?)(?=$|[\s'\";&|])")


def version_key(version: str) -> tuple:
    """Sort key: 0.6.4 < 0.6.4.post1 < 0.6.5 < 0.10.1 < 0.10.1.1 < 0.29.0; rc/dev sort before the release."""
    match = _VERSION.match(version.strip())
    if not match:
        raise ValueError(f"not a vLLM release number: {version!r}")
    major, minor, patch, extra, label, label_number = match.groups()
    rank = {"dev": -2, "rc": -1, None: 0, "post": 1}[label]
    return (int(major), int(minor), int(patch or 0), int(extra or 0), rank, int(label_number or 0))


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
    if invocation.script is not None:
        release = pinned_in_shell(invocation.script.text)
        if release:
            return release, "pip pin vllm==" + release
    return None, ""
