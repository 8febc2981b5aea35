"""vLLM release numbers: parsing, ordering, and reading them off image tags and pip pins."""
from __future__ import annotations

import re
from vllmlint.lazyre import lazy_compile
from vllmlint.vllm.versions import compare_versions, version_key  # noqa: F401  (the module's API too)

# What a release number looks like where a manifest names one (an annotation, `--vllm-version`).
_VERSION = lazy_compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?(post|rc|dev)(\d*))?$")
# A tag may carry a build variant after the release: v0.29.0-cu129, 0.10.1.1-ubuntu2404.
_TAG = re.compile(r"^v?(\d+\.\d+(?:\.\d+){0,2}(?:\.?(?:post|rc)\d*)?)(?:-(?:cu\d+|cuda[\d.]+|rocm[\d.]*|ubuntu\d+|x86_64|amd64|arm64|aarch64|cpu|py3\d*|torch[\d.]+))*$")
_PIP_PIN = lazy_compile(r"(?:^|[\s'\"])vllm(?:\[[^\]]*\])?==(\d+\.\d+(?:\.\d+){0,2}(?:\.?post\d+)?)(?=$|[\s'\";&|])")


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


def upstream_image(image: object) -> bool:
    """Whether an image (an `ImageRef`) is one of vLLM's own published images (vllm/vllm-openai and its
    ROCm/CPU/TPU/XPU/Neuron siblings, any mirror keeping the path): images that hold no model weights."""
    name = getattr(image, "name", None)
    return isinstance(name, str) and bool(_UPSTREAM.match(name))


# `pip install` spellings: pip, pip3, pip3.12, `python -m pip`, `uv pip`.
_PIP = lazy_compile(r"^pip(\d+(\.\d+)?)?$")
_RELEASE = r"(\d+\.\d+(?:\.\d+){0,2}(?:\.?post\d+)?)"
_REQUIREMENT = lazy_compile(r"^vllm(?:\[[^\]]*\])?==" + _RELEASE + r"$")
# A wheel named by URL or path: vllm-0.9.2-cp38-abi3-manylinux1_x86_64.whl, vllm-0.9.2+cu118-...whl (also %2B).
_WHEEL = lazy_compile(r"(?:^|/)vllm-" + _RELEASE + r"(?:(?:\+|%2[Bb])[0-9A-Za-z.]+)?-[^/]*\.whl(?:[?#].*)?$")


def install_pin(words: list[str]) -> tuple[str, str] | None:
    """(release, the word naming it) when a command installs one vLLM release: `pip install vllm==0.9.2`,
    `pip3 install -U "vllm[audio]==0.9.2"`, `python3 -m pip install ...`, `uv pip install ...`, or a wheel of a
    release by URL or path (`.../vllm-0.9.2+cu118-cp38-abi3-manylinux1_x86_64.whl`). Development wheels
    (`vllm-0.10.2.dev5+g...`), ranges (`vllm>=0.9`) and requirement files name no one release: None."""
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if _PIP.match(program):
        rest = words[1:]
    elif program == "uv" and words[1:2] == ["pip"]:
        rest = words[2:]
    elif re.match(r"^python(\d+(\.\d+)?)?$", program) and words[1:3] in (["-m", "pip"],):
        rest = words[3:]
    else:
        return None
    if "install" not in rest:
        return None
    found = None
    for word in rest[rest.index("install") + 1:]:
        match = _REQUIREMENT.match(word) or _WHEEL.search(word)
        if match:
            found = (match.group(1), word)
    return found
