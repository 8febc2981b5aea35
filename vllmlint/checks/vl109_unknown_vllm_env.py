"""VL109: `VLLM_*` variables in a vLLM container that the release does not read, or reads a bad value of."""
from __future__ import annotations

from typing import Any, Iterator

from vllmlint.vllm import catalog
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.pod import CONFIG_MAP, LITERAL
from vllmlint.vllm.invocation_env import SCRIPT, invocation_env
from vllmlint.checks import Context
from vllmlint.checks.messages import version_label
from vllmlint.checks.near_miss import near_miss

_BOOL_WORDS = {"0", "1", "true", "false"}


def _allowed(ctx: Context) -> set[str]:
    data = ctx.rule.data if isinstance(ctx.rule.data, dict) else {}
    return {entry["name"] for entry in data.get("not_vllm", [])}


def _bad_value(spec: dict[str, Any], value: str) -> str | None:
    """Why vLLM cannot use this value, or None."""
    kind = spec.get("type")
    text = value.strip()
    if kind == "bool" and text.lower() not in _BOOL_WORDS:
        return "vLLM reads its switches as `1`/`0` (most also accept `true`/`false`); other words are false or crash"
    if kind == "int":
        try:
            int(text)
        except ValueError:
            return "vLLM converts it with int() and fails at start-up"
    if kind == "float":
        try:
            float(text)
        except ValueError:
            return "vLLM converts it with float() and fails at start-up"
    choices = spec.get("choices")
    if kind == "choices" and choices and text.lower() not in {str(c).lower() for c in choices}:
        return f"vLLM accepts one of {', '.join(map(str, choices))}"
    return None


def check(ctx: Context) -> Iterator[Finding | None]:
    allowed = _allowed(ctx)
    every = catalog._index()["env"]
    reads: dict[int, list[str]] = {}  # id of a release catalog -> the VLLM_ variables it reads, sorted once
    for seen in invocation_env(ctx.world, ("VLLM_",)):
        if seen.name in allowed:
            continue
        invocations = seen.invocations
        if seen.kind == SCRIPT:
            # A script's `VLLM_USE_V1=0 vllm serve ...`: judged against the release the script's own vLLM runs,
            # when it says which (an image tag, a pinned install); silent when the release is assumed.
            releases = {invocation.release for invocation in invocations}
            if len(releases) != 1 or None in releases or any(i.assumed for i in invocations):
                continue
        value = seen.value if seen.origin in (LITERAL, CONFIG_MAP) else None
        yield _judge(ctx, invocations[0], seen.name, value, seen.where, seen.about, every, reads)


def _judge(ctx: Context, invocation, name: str, value: str | None, where, about, every: dict,
           reads: dict[int, list[str]]) -> Finding | None:
    """The finding for one `VLLM_*` variable the invocation's vLLM sees, or None."""
    release_catalog = invocation.catalog
    version = invocation.release or release_catalog.version
    label = version_label(invocation)
    if name in release_catalog.env:
        problem = _bad_value(release_catalog.env[name], value) if value is not None and "$" not in value else None
        if problem:
            return ctx.finding(where, f"`{name}={value}`: {problem}. Give a valid value.", about=about,
                               value=f"{name}={value}", severity=min(ctx.severity, Severity.WARNING))
        return None
    row = every.get(name)
    if row is not None:
        if catalog.compare_versions(row["last"], version) < 0:
            why = f"vLLM read it from {row['first']} to {row['last']}; {label} ignores it"
        else:
            why = f"vLLM reads it only from {row['first']} on; {label} ignores it"
        return ctx.finding(where, f"`{name}` has no effect: {why}. Delete it (or upgrade, if it was meant "
                           "for a newer release).", about=about, value=name,
                           severity=min(ctx.severity, Severity.INFO))
    if id(release_catalog) not in reads:
        reads[id(release_catalog)] = sorted(n for n in release_catalog.env if n.startswith("VLLM_"))
    near = near_miss(name, reads[id(release_catalog)])
    if near:
        return ctx.finding(where, f"`{name}` is read by no vLLM release: did you mean `{near}`, which vLLM "
                           f"{label} reads? As written it is silently ignored.", about=about,
                           value=name, severity=min(ctx.severity, Severity.WARNING))
    stale = near_miss(name, sorted(every))
    if stale and stale.startswith("VLLM_"):
        return ctx.finding(where, f"`{name}` is read by no vLLM release; it looks like `{stale}`, which "
                           f"{label} does not read either (vLLM {every[stale]['first']} to "
                           f"{every[stale]['last']}). Delete it.", about=about, value=name,
                           severity=min(ctx.severity, Severity.INFO))
    return None
