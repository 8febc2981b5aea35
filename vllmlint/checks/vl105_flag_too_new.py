"""VL105: a flag that only releases newer than the one the workload runs accept."""
from __future__ import annotations

from typing import Iterator

from vllmlint.finding import Finding, Severity
from vllmlint.vllm.flags import TOO_NEW
from vllmlint.checks import Context
from vllmlint.checks.messages import catalog_note, release_phrase, version_label


def check(ctx: Context) -> Iterator[Finding | None]:
    for invocation in ctx.world.invocations:
        for option in invocation.options:
            status = option.status
            if status is None or status.kind != TOO_NEW:
                continue
            exact = not catalog_note(invocation)
            yield ctx.finding(
                option.token,
                f"`{status.spelling}` first appears in vLLM {status.first_release}, newer than "
                f"{version_label(invocation)}. It does not exist in {release_phrase(invocation)}"
                f"{catalog_note(invocation)}. vLLM exits with \"unrecognized arguments\" and the "
                f"pod crash-loops: upgrade the image to {status.first_release} or later, or drop the flag.",
                about=invocation, value=status.spelling,
                severity=None if exact else min(ctx.severity, Severity.WARNING))
