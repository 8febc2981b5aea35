"""VL109: `VLLM_*` variables in a vLLM container that the release does not read, or reads a bad value of."""
from __future__ import annotations

from typing import Any, Iterator

from vllmlint.vllm import catalog
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.objects import Container
from vllmlint.source.yamlmodel import Mapping, Node
from vllmlint.checks import Context
from vllmlint.checks.messages import version_label
from vllmlint.checks.near_miss import near_miss

_BOOL_WORDS = {"0", "1", "true", "false"}


def _allowed(ctx: Context) -> set[str]:
    data = ctx.rule.data if isinstance(ctx.rule.data, dict) else {}
    return {entry["name"] for entry in data.get("not_vllm", [])}


def _where(container: Container, name: str) -> Node:
    item = container.env_node(name)
    key = item.get("name") if isinstance(item, Mapping) else None
    if key is not None:
        return key
    return item if item is not None else container.node


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
    seen: set[int] = set()
    reads: dict[int, list[str]] = {}  # id of a release catalog -> the VLLM_ variables it reads, sorted once
    for invocation in ctx.world.invocations:
        container = invocation.container
        if container is None or id(container) in seen:
            continue
        seen.add(id(container))
        for name, value in container.env.items():
            if name.startswith("VLLM_") and name not in allowed:
                yield _judge(ctx, invocation, name, value, _where(container, name), container, every, reads)
    yield from _script_variables(ctx, allowed, every, reads)
    for invocation in ctx.world.invocations:
        if invocation.container is None and invocation.owner is not None:
            from vllmlint.vllm.invocation import operator_env

            # An operator's resource: the variables its controller copies into the vLLM container it builds.
            for name, value, node in operator_env(invocation.owner):
                if name.startswith("VLLM_") and name not in allowed:
                    yield _judge(ctx, invocation, name, value, node, invocation.owner, every, reads)


def _script_variables(ctx: Context, allowed: set[str], every: dict, reads: dict[int, list[str]]
                      ) -> Iterator[Finding | None]:
    """`VLLM_USE_V1=0 vllm serve ...`, `export VLLM_...=...` in a script: judged against the release the script's
    own vLLM runs, when it says which (an image tag, a pinned install); silent when the release is assumed."""
    if not any(invocation.container is None or invocation.script is not None for invocation in ctx.world.invocations):
        return
    from vllmlint.vllm.invocation import script_assignments

    runs: dict[int, list] = {}  # the script's source file (standalone) or container -> its invocations
    for invocation in ctx.world.invocations:
        if invocation.launched is not None:
            continue  # `docker run`: the script's variables set the docker client's environment, not vLLM's
        if invocation.container is None:
            source = invocation.anchor.source
            runs.setdefault(id(source), []).append(invocation)
        elif invocation.script is not None:
            runs.setdefault(id(invocation.container), []).append(invocation)
    for assignment in script_assignments(ctx.world, ("VLLM_",)):
        name = assignment.name
        if not name.startswith("VLLM_") or name in allowed:
            continue
        key = id(assignment.container) if assignment.container is not None else id(assignment.token.source)
        invocations = runs.get(key, [])
        releases = {invocation.release for invocation in invocations}
        if len(releases) != 1 or None in releases or any(i.assumed for i in invocations):
            continue  # no vLLM in that script, several releases, or one only assumed: not judged
        if assignment.container is not None and name in assignment.container.env:
            continue  # the container's own env already names it (judged above)
        value = None if assignment.token.dynamic else assignment.value
        yield _judge(ctx, invocations[0], name, value, assignment.token, assignment.container or invocations[0],
                     every, reads)


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
