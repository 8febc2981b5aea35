"""VL804: server options and environment variables that widen what a request (or anything that reaches the
server's sockets) can do, or that write prompts and outputs to the log.

Every entry, its release range, its severity and its wording is data (`data/unsafe-options.yaml`, read through
`vllmlint.vllm.unsafe`); this module only matches the entries against a vLLM container's variables (`env`,
`envFrom`, ConfigMaps of the run: `resolved_env`) and its invocations' options. A variable from a Secret or a
ConfigMap not in the run has no known value: silent. A vLLM variable counts only where the release's catalog
says the release reads it, a flag only where the release's parser has it (otherwise VL105/VL109 speak).
"""
from __future__ import annotations

from vllmlint.records import dataclass
from pathlib import PurePosixPath
from typing import Iterator

from vllmlint.capacity.specs import repository_fact
from vllmlint.capacity.workload import workloads
from vllmlint.checks import Context
from vllmlint.checks.messages import version_label
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.pod import CONFIG_MAP, LITERAL
from vllmlint.source.files import MARKDOWN_SUFFIXES
from vllmlint.vllm.endpoints import api_key_set
from vllmlint.vllm.invocation import DEMO_API_SERVER, Invocation, Option, Token
from vllmlint.vllm.unsafe import UnsafeEntry, entries
from vllmlint.lazyre import lazy_compile

_OFF = ("false", "0", "no", "off")


def _release(invocation: Invocation) -> str:
    return invocation.release or invocation.catalog.version


def _level(ctx: Context, entry: UnsafeEntry, keyed: bool | None, where=None) -> Severity:
    """The entry's level (its `api_key_severity` when a key is or may be set); info in a Markdown file, which
    documents a command rather than deploys it (vLLM's own feature pages export these variables)."""
    name = entry.api_key_severity if entry.api_key_severity and keyed is not False else entry.severity
    level = min(ctx.severity, Severity.parse(name))
    source = where.source if where is not None else None
    if source is not None and PurePosixPath(source.display_path.lower()).suffix in MARKDOWN_SUFFIXES:
        level = min(level, Severity.INFO)
    return level


def _where(var):
    """The value's node for a literal; the env (or envFrom) entry for a ConfigMap's value, so the finding stays
    in the workload's file; the `NAME=value` word of an `export`."""
    if isinstance(var, _Exported):
        return var.token
    if var.origin == LITERAL and var.source is not None:
        return var.source
    return var.node


def _switch_on(option: Option) -> bool:
    if option.name.startswith("--no-"):
        return False
    return not (option.value_known and option.value is not None and option.value.strip().lower() in _OFF)


def _given(invocations, flags) -> bool | None:
    """Whether any invocation passes one of `flags` (None: a `--config` file may set it)."""
    for invocation in invocations:
        for option in invocation.option(*flags):
            if _switch_on(option):
                return True
    if any(invocation.config_file is not None for invocation in invocations):
        return None
    return False


def _key_phrase(entry: UnsafeEntry, keyed: bool | None) -> str:
    if not entry.api_key_severity:
        return ""
    if keyed:
        return ("; `--api-key` limits it to clients that hold the key, which are every client of the API "
                "(vLLM has one key for all of them)")
    if keyed is None:
        return "; whether an API key is set is not known from the run"
    return "; this server has no `--api-key` (or VLLM_API_KEY), so any client that reaches the port can do it"


def _detail(entry: UnsafeEntry, release: str, env) -> str | None:
    """What the release's span adds to the message; None when the span says nothing happens."""
    span = entry.span(release)
    if span is None:
        return ""
    if span.requires_env is not None:
        name, values = span.requires_env
        value = env.get(name)
        if value is None or value.strip().upper() not in values:
            return None
    if span.endpoints:
        return f": {', '.join(span.endpoints)}"
    if span.logs:
        return f": {span.logs}"
    return ""


def _modalities(ctx: Context, invocation: Invocation, memo: dict) -> tuple[str, tuple[str, ...]] | None:
    """(model name, the inputs the catalog says it takes) for the repository this invocation serves, named by
    its id; None for a model not catalogued, a variant or a local path (the fact is not about its files)."""
    if "works" not in memo:
        memo["works"] = {id(work.invocation): work for work in workloads(ctx.world)}
    work = memo["works"].get(id(invocation))
    if work is None or work.match is None:
        return None
    name = work.model_name or ""
    fact = repository_fact(work.match.model, name, "modalities")
    return (name, tuple(str(m) for m in fact.value or ())) if fact is not None else None


def _text_only(ctx: Context, invocation: Invocation, memo: dict) -> bool:
    """The catalog says the model this invocation serves, named by its repository id, takes text only."""
    found = _modalities(ctx, invocation, memo)
    return found is not None and found[1] == ("text",)


def _absent(ctx: Context, entry: UnsafeEntry, invocation: Invocation, keyed, memo: dict) -> Iterator[Finding | None]:
    """An option not given for a model that takes the inputs it is about (`--allowed-media-domains`)."""
    if entry.flag is None or invocation.option(entry.flag) or invocation.config_file is not None:
        return  # given (any value), or a --config file may give it
    if entry.flag[2:] not in invocation.catalog.options:
        return  # the release has no such option: nothing to add
    found = _modalities(ctx, invocation, memo)
    if found is None:
        found = _declared_media(invocation)  # a model the catalog does not know, serving media it asks for
    if found is None:
        return
    name, inputs = found
    matter = [m for m in inputs if m in entry.modalities]
    if not matter:
        return
    where = invocation.model if invocation.model is not None else invocation.anchor
    yield ctx.finding(
        where,
        # The release after the `: `, so that an assumed one ("(assumed: the release is unknown)") stays off the
        # first line.
        f"{name} takes {' and '.join(matter)} input and `{entry.flag}` is not set: on vLLM "
        f"{version_label(invocation)}, {entry.problem}{_key_phrase(entry, keyed)}. {entry.instead}.",
        about=invocation, value=f"{entry.id}:{name}", severity=_level(ctx, entry, keyed, where))


# `--limit-mm-per-prompt` entries, in its JSON (`{"image": 4}`) and its older `image=4,video=1` forms
# (vllm/engine/arg_utils.py: 0.6.2 `nullable_kvs`, 0.11.0 a JSON dict).
_MEDIA_LIMIT = lazy_compile(r'"?\b(image|video|audio)"?\s*[:=]\s*(\d+)')


def _declared_media(invocation: Invocation) -> tuple[str, tuple[str, ...]] | None:
    """(model, media) when the server's own `--limit-mm-per-prompt` admits image, video or audio items per
    prompt (a count above 0): the model takes them, whatever the catalog knows. All zeros turn media off."""
    for option in invocation.option("--limit-mm-per-prompt"):
        if not option.value_known or not option.value:
            continue
        media = tuple(kind for kind, count in _MEDIA_LIMIT.findall(option.value) if int(count) > 0)
        if media:
            model = invocation.model_name or "the model"
            return model, tuple(dict.fromkeys(media))
    return None


@dataclass
class _Exported:
    """`export NAME=value` in a script, seen as a variable of the vLLM commands after it."""
    name: str
    value: str
    token: Token
    origin: str = "export"
    ref_name: str | None = None
    ref_key: str | None = None


def _place(tokens) -> tuple[str, int] | None:
    """(file, offset) of the first token that stands in a file."""
    for token in tokens:
        if token.source is not None:
            return token.source.display_path, token.start
    return None


def _exports(ctx: Context) -> dict[tuple[int | None, str], list[tuple[int, _Exported]]]:
    """By (container id or None, file): the literal `export NAME=value` words of the run's shell commands,
    with their offsets. An assignment prefix (`NAME=value vllm serve`) is stripped by the shell reader and is
    not seen here."""
    result: dict[tuple[int | None, str], list[tuple[int, _Exported]]] = {}
    for command in ctx.world.shell_commands:
        if command.words[:1] != ["export"]:
            continue
        for token in command.tokens[1:]:
            name, eq, value = token.text.partition("=")
            if not eq or token.dynamic or token.source is None or not name.replace("_", "a").isalnum():
                continue
            key = (id(command.container) if command.container is not None else None, token.source.display_path)
            result.setdefault(key, []).append((token.start, _Exported(name, value, token)))
    return result


def _exported_before(exports, invocation: Invocation) -> list[_Exported]:
    """The variables exported in the invocation's script (same container, same file) before it."""
    place = _place([*invocation.entry, *invocation.tokens])
    if place is None:
        return []
    container = invocation.container
    key = (id(container) if container is not None else None, place[0])
    return [var for offset, var in exports.get(key, ()) if offset < place[1]]


def check(ctx: Context) -> Iterator[Finding | None]:
    table = entries()
    memo: dict = {}  # the run's workloads by invocation, built when first needed
    exports = _exports(ctx)
    by_container: dict[int, list[Invocation]] = {}
    containers = {}
    for invocation in ctx.world.invocations:
        if invocation.kind == DEMO_API_SERVER:
            continue  # the demo server (/generate only) adds none of the OpenAI server's routes or logging
        if invocation.container is None:
            # A standalone script or a Markdown block: its command line and what the script exports before it.
            shell_vars = _exported_before(exports, invocation)
            env = {v.name: v.value for v in shell_vars}
            keyed: bool | None = api_key_set(None, [invocation], ctx.world) or bool(env.get("VLLM_API_KEY", "").strip())
            yield from _env_entries(ctx, table, invocation, invocation, shell_vars, env, [invocation], keyed)
            yield from _flag_entries(ctx, table, invocation, env, keyed, memo)
            continue
        by_container.setdefault(id(invocation.container), []).append(invocation)
        containers[id(invocation.container)] = invocation.container
    for key, invocations in by_container.items():
        container = containers[key]
        first = invocations[0]
        env_vars: list = [v for v in container.resolved_env(ctx.world) if v.origin in (LITERAL, CONFIG_MAP)]
        seen = {id(v.token) for v in env_vars if isinstance(v, _Exported)}
        for invocation in invocations:
            for var in _exported_before(exports, invocation):
                if id(var.token) not in seen:
                    seen.add(id(var.token))
                    env_vars.append(var)
        env = {v.name: v.value for v in env_vars if v.value is not None}
        keyed = api_key_set(container, invocations, ctx.world)
        if not keyed and any(v.name == "VLLM_API_KEY" and (v.value or "").strip() for v in env_vars):
            keyed = True
        yield from _env_entries(ctx, table, container, first, env_vars, env, invocations, keyed)
        for invocation in invocations:
            yield from _flag_entries(ctx, table, invocation, env, keyed, memo)


def _env_entries(ctx, table, container, invocation, env_vars, env, invocations, keyed):
    release = _release(invocation)
    for entry in table:
        if entry.env is None:
            continue
        for var in env_vars:
            if var.name != entry.env or not entry.enabled_by(var.value):
                continue
            if entry.first is not None and (not entry.applies(release) or entry.env not in invocation.catalog.env):
                continue  # a release that does not read it (VL109 says so)
            if entry.requires_flags and _given(invocations, entry.requires_flags) is not True:
                continue  # without the flag the behaviour cannot happen (or a --config file may set it)
            detail = _detail(entry, release, env)
            if detail is None:
                continue
            # Where the value comes from follows the problem, off the first line (formatters.report.split_message).
            origin = (f" It comes from ConfigMap {var.ref_name}, key {var.ref_key}." if var.origin == CONFIG_MAP
                      else " The script exports it." if isinstance(var, _Exported) else "")
            where = f" on vLLM {version_label(invocation)}" if entry.first is not None else ""
            assumed = ""
            if where and (invocation.release is None or invocation.assumed):  # the assumption after the problem
                version = invocation.catalog.version
                where, assumed = f" on vLLM {version}", f"The release is unknown: {version} is assumed. "
            yield ctx.finding(
                _where(var),
                f"`{var.name}={(var.value or '').strip()}`{where} {entry.problem}{detail}"
                f"{_key_phrase(entry, keyed)}.{origin} {assumed}{entry.instead}.",
                about=container, value=f"{entry.id}:{var.name}", severity=_level(ctx, entry, keyed, _where(var)))


def _flag_entries(ctx, table, invocation, env, keyed, memo):
    release = _release(invocation)
    for entry in table:
        if entry.flag is None or not entry.applies(release):
            continue
        if entry.enabled == "absent":
            yield from _absent(ctx, entry, invocation, keyed, memo)
            continue
        options = [o for o in invocation.option(entry.flag) if o.spec is not None]
        if not options:
            continue
        option = options[-1]  # argparse keeps the last one
        detail_path = ""
        if entry.enabled == "switch":
            if not _switch_on(option):
                continue
            if entry.api_key_severity and _text_only(ctx, invocation, memo):
                continue  # per-request multimodal kwargs do nothing on a text-only model
            shown = option.name
        elif entry.enabled == "path":
            if not option.value_known or option.value is None:
                continue
            broad = entry.broad(option.value)
            if broad is None:
                continue
            shown = f"{option.name} {option.value}"
            detail_path = f": {entry.broad_paths[broad]}"
        else:
            continue
        detail = _detail(entry, release, env)
        if detail is None:
            continue
        yield ctx.finding(
            option.token,
            f"`{shown}` on vLLM {version_label(invocation)} {entry.problem}{detail_path}{detail}"
            f"{_key_phrase(entry, keyed)}. {entry.instead}.",
            about=invocation, value=f"{entry.id}:{release}", severity=_level(ctx, entry, keyed, option.token))
