"""VL104: a flag the target release still accepts but has deprecated."""
from __future__ import annotations

import re
from typing import Iterator

from vllmlint.finding import Finding
from vllmlint.vllm import catalog
from vllmlint.vllm.flags import OK
from vllmlint.vllm.flagtable import first_sentence, removed
from vllmlint.vllm.release import version_key
from vllmlint.checks import Context, describe_workload
from vllmlint.checks.messages import catalog_note
from vllmlint.lazyre import lazy_compile

_REMOVED_IN = lazy_compile(r"removed in v?(\d+\.\d+(?:\.\d+)?)", re.I)


def _not_deprecated(ctx: Context) -> set[str]:
    """Options whose help text mentions deprecation without the option itself being deprecated."""
    data = ctx.rule.data if isinstance(ctx.rule.data, dict) else {}
    return {entry["option"] for entry in data.get("not_deprecated", [])}


def removal_release(spelling: str, text: str) -> tuple[str | None, str]:
    """(release, how sure) for the release that drops the spelling: the curated table (checked against
    every wheel), else the first catalogued release without it (the catalogs skip some releases, so it
    is gone *by* then), else what vLLM's own deprecation text announces."""
    curated = removed().get(spelling)
    if curated and curated.get("removed_in"):
        return str(curated["removed_in"]), "removed in"
    row = catalog.history(spelling)
    if row is not None and row["last"] != catalog.newest():
        later = [r for r in catalog.releases() if catalog.compare_versions(r, row["last"]) > 0]
        if later:
            return later[0], "gone by"
    match = _REMOVED_IN.search(text or "")
    return (match.group(1), "announced for removal in") if match else (None, "")


def check(ctx: Context) -> Iterator[Finding | None]:
    skip = _not_deprecated(ctx)
    for invocation in ctx.world.invocations:
        for option in invocation.options:
            resolution, status = option.resolution, option.status
            known = option.spec
            if resolution is None or known is None or status is None or status.kind != OK or not known.deprecated \
                    or known.name in skip:
                continue
            spelling = resolution.spelling or status.spelling
            text = " ".join((known.deprecation or "").split())
            gone, how = removal_release(spelling, text)
            target = invocation.release or invocation.catalog.version
            if gone and version_key(gone) <= version_key(target):
                gone = None  # an announced removal that did not happen on schedule: say nothing about it
            said = f" vLLM says: \"{_clip(text)}\"" if text else ""
            when = ""
            if gone and how == "announced for removal in":
                when = f" vLLM announces its removal for {gone}."
            elif gone:
                when = f" It was removed in vLLM {gone}, which refuses to start with it." if how == "removed in" \
                    else f" It is gone by vLLM {gone}, which refuses to start with it."
            hint = (removed().get(spelling) or {}).get("replacement", "")
            instead = f" Instead: {first_sentence(hint)}" if hint else " Switch to its replacement before upgrading."
            # The first line is the flag and the release (`: ` cuts it); which workload runs it follows.
            yield ctx.finding(option.token, f"`{option.name}` is deprecated in vLLM {target}: {_whose(invocation)}"
                              f"{catalog_note(invocation)}.{said}{when}{instead}", about=invocation, value=spelling)


def _whose(invocation) -> str:
    """Whose release it is: 'it is the release Deployment x runs (image tag ...)', or that it is assumed."""
    if invocation.release is None or invocation.assumed:
        return f"the release {describe_workload(invocation)} runs is unknown, and this one is assumed"
    origin = f" ({invocation.release_origin})" if invocation.release_origin else ""
    return f"it is the release {describe_workload(invocation)} runs{origin}"


def _clip(text: str, limit: int = 320) -> str:
    """vLLM's deprecation text, whole when short: the replacement is often in its second sentence."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."
