"""Which vLLM release a workload runs: its annotation, an operator's pin, a `pip install` in its script, its image
tag (vllmlint.vllm.release parses the numbers)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from vllmlint.vllm.release import ANNOTATION, _UPSTREAM, install_pin, is_version, release_from_tag

if TYPE_CHECKING:
    from vllmlint.vllm.invocation import Invocation


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
