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
        yield ctx.finding(node, _message(image, text), about=container, value=text)
    for invocation in ctx.world.invocations:
        # A Helm chart's values file (vllm.helm_values): the image the chart writes from it, at the value that
        # names the tag (production-stack's `tag`, an llm-d container's `image`).
        node = getattr(invocation.owner, "image_node", None) if invocation.container is None else None
        image = invocation.image
        if node is None or image is None or image.pinned:
            continue
        yield ctx.finding(node, _message(image, image.raw), about=invocation, value=image.raw)


def _message(image, text: str) -> str:
    what = "`:latest`" if image.tag == "latest" else "no tag (so `:latest`)"
    example = " (e.g. `vllm/vllm-openai:v0.29.0`)" if image.repository.endswith("vllm/vllm-openai") else ""
    # "; it changes": a long image name leaves the why for the next line (formatters.report.split_message).
    return (f"Image `{text}` has {what}; it changes under you and differs between nodes: pin a release "
            f"tag{example} or a digest `@sha256:...`.")
