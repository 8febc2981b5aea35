from __future__ import annotations

from typing import Iterator

from vllmlint.finding import Finding
from vllmlint.vllm.images import parse_image
from vllmlint.source.yamlmodel import scalar_str
from vllmlint.checks import Context


def check(ctx: Context) -> Iterator[Finding | None]:
    for container in ctx.world.containers:
        node = container.image
        text = scalar_str(node)
        if node is None or not text:
            continue
        image = parse_image(text)
        if image is None or image.pinned:
            continue
        what = "`:latest`" if image.tag == "latest" else "no tag (so `:latest`)"
        example = " (e.g. `vllm/vllm-openai:v0.29.0`)" if image.repository.endswith("vllm/vllm-openai") else ""
        yield ctx.finding(node, f"Image `{text}` has {what}, which changes under you and differs between "
                          f"nodes: pin a release tag{example} or a digest `@sha256:...`.",
                          about=container, value=text)
