"""VL105: a flag that only releases newer than the one the workload runs accept."""
from __future__ import annotations

from vllmlint.checks import Context, describe_workload


def release_phrase(invocation) -> str:
    """'vLLM 0.6.4.post1, the release Deployment x runs (image tag ...)', for messages of the VL1xx rules."""
    version = invocation.release or invocation.catalog.version
    if invocation.release is None or invocation.assumed:
        return f"vLLM {invocation.catalog.version} (assumed: the release {describe_workload(invocation)} runs is unknown)"
    origin = f" ({invocation.release_origin})" if invocation.release_origin else ""
    return f"vLLM {version}, the release {describe_workload(invocation)} runs{origin}"


def catalog_note(invocation) -> str:
    """When the release itself is not catalogued, say which catalogued release stood in for it."""
    if invocation.release and invocation.release != invocation.catalog.version and not invocation.beyond_catalog:
        from vllmlint.vllm.release import version_key

        side = "before" if version_key(invocation.catalog.version) < version_key(invocation.release) else "after"
        return f" (checked against {invocation.catalog.version}, the closest catalogued release {side} it)"
    return ""


def check(ctx: Context):
    for invocation in ctx.world.invocations:
        for option in invocation.options:
            status = option.status
            if status is None or status.kind != "too-new":
                continue
            exact = not catalog_note(invocation)
            yield ctx.finding(
                option.token,
                f"`{status.spelling}` does not exist in {release_phrase(invocation)}{catalog_note(invocation)}; "
                f"it first appears in {status.first_release}. vLLM exits with \"unrecognized arguments\" and the "
                f"pod crash-loops: upgrade the image to {status.first_release} or later, or drop the flag.",
                about=invocation, value=status.spelling,
                severity=None if exact else min(ctx.severity, _warning()))


def _warning():
    from vllmlint.finding import Severity

    return Severity.WARNING


def value_of(option) -> str | None:
    """The option's value as vLLM reads it: `-O3` carries its own value (the generic argv parser may
    have taken the next token as the value as well)."""
    resolution = option.resolution
    if resolution is not None and getattr(resolution, "value", None) is not None and not option.inline:
        return resolution.value
    return option.value


def version_label(invocation) -> str:
    """`0.29.0`, or `0.33.0 (assumed: the release is unknown)` when nothing in the manifest says."""
    if invocation.release is None or invocation.assumed:
        return f"{invocation.catalog.version} (assumed: the release is unknown)"
    return invocation.release
