"""vLLM release numbers: parsing, ordering, and reading them off image tags and pip pins."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.vllm.invocation import Invocation

# What a release number looks like where a manifest names one (an annotation, `--vllm-version`).
_VERSION = lazy_compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:\.?(post|rc|dev)(\d*))?$")
# What `version_key` orders: also PEP 440 pre-releases (a, b) and a local part (`+cu129`), as wheels
# and the catalogs' own file names spell them.
_ORDERABLE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[.-]?(a|b|rc|dev)(\d*))?(?:[.-]?(post)(\d*))?"
                        r"(?:\+[0-9A-Za-z.]*)?$")
_PRE_RANK = {"dev": 0, "a": 1, "b": 2, "rc": 3, None: 4}
# A tag may carry a build variant after the release: v0.29.0-cu129, 0.10.1.1-ubuntu2404.
_TAG = re.compile(r"^v?(\d+\.\d+(?:\.\d+){0,2}(?:\.?(?:post|rc)\d*)?)(?:-(?:cu\d+|cuda[\d.]+|rocm[\d.]*|ubuntu\d+|x86_64|amd64|arm64|aarch64|cpu|py3\d*|torch[\d.]+))*$")
_PIP_PIN = lazy_compile(r"(?:^|[\s'\"])vllm(?:\[[^\]]*\])?==(\d+\.\d+(?:\.\d+){0,2}(?:\.?post\d+)?)(?=$|[\s'\";&|])")


def version_key(version: str) -> tuple[int, ...]:
    """The one parser of vLLM release numbers, as a sort key: 0.6.4 < 0.6.4.post1 < 0.6.5 < 0.10.1 <
    0.10.1.1 < 0.29.0 = 0.29; dev < a < b < rc sort before the release, post after it. The key is flat,
    `key[:2]` is the minor release and `key[:3]` the (major, minor, patch) triple. ValueError when the
    text is no release number (`latest`, `nightly`)."""
    if isinstance(version, str):
        return _version_key(version)
    raise ValueError(f"not a vLLM release number: {version!r}")


@lru_cache(maxsize=4096)  # a run sorts and compares the same few release numbers tens of thousands of times
def _version_key(version: str) -> tuple[int, ...]:
    match = _ORDERABLE.match(version.strip())
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
    owner = getattr(invocation, "owner", None)
    if container is None and owner is not None:  # an operator's resource (VLLMRuntime)
        value = owner.annotations.get(ANNOTATION)
        if value and is_version(value):
            return value.strip().lstrip("v"), f"annotation {ANNOTATION}"
    pinned = getattr(invocation, "operator_release", None)
    if pinned:  # the vLLM an operator's release pins (KAITO: data/operator-flags.yaml)
        return pinned
    installed = installed_release(invocation)  # what the script installs over the image's own vLLM
    if installed is not None:
        return installed
    image = invocation.image
    if image is not None and _UPSTREAM.match(image.name):
        release = release_from_tag(image.tag)
        if release:
            launched = invocation.launched.origin if invocation.launched is not None else ""
            return release, (f"image tag {image.raw}{getattr(invocation, 'image_note', '')}"
                             + (f", from {launched}" if launched else ""))
    if image is not None:
        from vllmlint.vllm.images import tag_release

        vendor = tag_release(image)  # a vendor tag naming its upstream release (data/image-entrypoints.yaml)
        if vendor is not None:
            return vendor.release, f"image tag {image.raw}, based on vLLM {vendor.release}"
    # (`pinned_in_shell`, a search of the script's text, also took a pin from a comment, an `echo` or a line
    # after the server starts: `installed_release` reads the commands instead.)
    return None, ""


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


def installed_release(invocation: Invocation) -> tuple[str, str] | None:
    """(release, origin) when the script that starts vLLM installs a release before it, in the container it
    runs in: a `pip install vllm==X` (or wheel) command earlier in the same shell script or container command
    (the last one before vLLM wins). It replaces the image's own vLLM, so it comes before the image tag. A
    `docker run` launched from the script runs the image's vLLM, not the host's: no pin applies to it."""
    from vllmlint.source.shell import read_script, split_commands
    from vllmlint.vllm.invocation import VIA_SCRIPT, expand_variables, script_variables

    if invocation.launched is not None:
        return None
    scalar = invocation.script
    if scalar is not None:
        text, source = scalar.text, scalar.source
    elif invocation.via == VIA_SCRIPT and invocation.source is not None:
        text, source = invocation.source.text, invocation.source
    else:
        return None
    if "install" not in text or "vllm" not in text:
        return None
    anchor = invocation.anchor.start
    variables = None
    pinned = None
    region = source.region if scalar is None else None  # a Markdown shell block: its own commands only
    for command in (read_script(text, *region).commands if region is not None else split_commands(text)):
        start = scalar.source_index(command.start) if scalar is not None else command.start
        if start >= anchor:
            break
        words = [w.text for w in command.words]
        if any(w.dynamic for w in command.words):
            if variables is None:
                variables = script_variables(text, scalar, None if scalar is not None else source, region)
            above = {name: v for name, v in variables.items() if v.token.start < start}
            words = [expand_variables(w.text, above) or w.text if w.dynamic else w.text for w in command.words]
        pin = install_pin(words)
        if pin is not None:
            line = source.line_col(start)[0]
            install = words.index("install")
            spelled = " ".join([words[0].rsplit("/", 1)[-1]] + words[1:install + 1] + [pin[1].rsplit("/", 1)[-1]])
            pinned = pin[0], f"`{spelled}` on line {line}"
    return pinned
