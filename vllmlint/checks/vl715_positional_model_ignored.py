"""VL715: a positional model given as `args` to an image whose entrypoint is the api_server module.

`data/image-entrypoints.yaml` says, per image and release, what the entrypoint does with a bare
positional (`positional_arg`): `rejected` (vllm/vllm-openai up to 0.9.2: the api_server parser has no
positional, argparse exits with "unrecognized arguments") or `ignored` (0.10.0-0.11.0: the shared parser
accepts an optional `model_tag` that only `vllm serve` reads, so the server starts with its default model).
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.finding import Finding, Severity
from vllmlint.vllm.invocation import Invocation, Token, own_entrypoint_row
from vllmlint.vllm.release import version_key
from vllmlint.checks import Context
from vllmlint.checks.messages import keyword_advice

# The first release seen whose FlexibleArgumentParser raises on `serve` + `--model` (0.8.5 vllm/utils.py
# l.1339; the 0.8.0 parse_args has no such check).
_SERVE_MODEL_RAISES_FROM = "0.8.5"

_TRUTHY = {"true", "false", "yes", "no", "on", "off", "1", "0"}  # a switch's value: VL106 reports those


def check(ctx: Context) -> Iterator[Finding | None]:
    for invocation in ctx.world.invocations:
        entry = own_entrypoint_row(invocation)
        if entry is None or entry.get("positional_arg") not in ("rejected", "ignored"):
            continue
        positionals = invocation.model_positionals
        if not positionals:
            continue
        first = positionals[0]
        if first.dynamic or first.source is None or any(c.isspace() for c in first.text) \
                or _switch_value(invocation, first) or not first.text or not first.text[0].isalnum() \
                and first.text[0] not in "/~.":
            continue  # `$(ARGS)` may be flags; a blank or a shell operator is VL714's; `true` after a switch VL106's
        yield _finding(ctx, invocation, first, entry)



# Programs an author means to run when they write them first in `args` (the entrypoint receives them instead).
_PROGRAMS = frozenset({"sh", "bash", "dash", "zsh", "python", "python3", "env", "vllm", "exec"})


def _switch_value(invocation: Invocation, token: Token) -> bool:
    """`--enable-chunked-prefill false`: the word after a switch (VL106 reports it as a stray value)."""
    tokens = invocation.tokens
    for i, candidate in enumerate(tokens):
        if candidate is token and i > 0:
            before = next((o for o in invocation.options if o.token is tokens[i - 1]), None)
            spec = before.spec if before is not None else None
            return spec is not None and not spec.takes_value and token.text.lower() in _TRUTHY
    return False


def _finding(ctx: Context, invocation: Invocation, first: Token, entry: dict) -> Finding | None:
    image = invocation.image.raw if invocation.image is not None else "this image"
    runs = " ".join(t.text for t in invocation.entry)
    serve = first.text in ("serve", "vllm")
    keyword = keyword_advice(invocation, first.text)
    models = invocation.option("--model")
    if serve:
        what = f"`{first.text}` (args written for an image whose entrypoint is `vllm serve`)"
        instead = "pass the model as `--model MODEL` without `serve`"
    elif keyword is not None:
        what = f"the word `{first.text}`"
        instead = keyword[0].lower() + keyword[1:].rstrip(".")
    elif first.text.rsplit("/", 1)[-1] in _PROGRAMS:
        what = f"the program `{first.text}`"
        instead = (f"`args` are handed to the image's entrypoint `{runs}`; to run `{first.text}`, put that list in "
                   "`command` instead")
    elif models:
        what = f"the positional word `{first.text}`"
        instead = "drop it (`--model` already names the model)"
    else:
        what = f"the positional model `{first.text}`"
        instead = f"pass `--model {first.text}`"
    if keyword is None and first.text.rsplit("/", 1)[-1] not in _PROGRAMS:
        instead += ", or use an image whose entrypoint is `vllm serve` (vllm/vllm-openai 0.11.1 and later)"
    tokens = invocation.tokens
    release = invocation.release or invocation.catalog.version
    if version_key(release) >= version_key(_SERVE_MODEL_RAISES_FROM) and tokens and tokens[0] is first \
            and first.text == "serve" and any(t.text == "--model" for t in tokens):
        # FlexibleArgumentParser.parse_args: args[0] == "serve" and a `--model` item raise ValueError before
        # argparse runs (0.8.5 vllm/utils.py l.1339-1344; 0.9.2 vllm/utils/__init__.py l.1474-1478; 0.10.0
        # l.1703-1707; 0.10.1.1 l.1775-1779; 0.11.0 l.1857-1861); from 0.12.0 it only warns.
        message = (f"The image `{image}` runs `{runs}` with `serve` as its first argument and `--model` given: "
                   "vLLM's argument parser raises \"ValueError: With `vllm serve`, you should provide the model as "
                   "a positional argument or in a config file instead of via the `--model` option.\" and the "
                   "container exits. Fix: drop `serve`.")
        return ctx.finding(first, message, about=invocation, value=f"serve-model:{first.text}")
    if entry.get("positional_arg") == "rejected":
        # The problem and the fix on the first line (up to the first `: `); the parser's why follows.
        message = (f"The image `{image}` accepts no positional argument: {instead}. It runs `{runs}`, whose parser has "
                   f"no positional argument: {what} stops it with \"unrecognized arguments\" and the container "
                   "exits.")
        return ctx.finding(first, message, about=invocation, value=f"rejected:{first.text}")
    rest = invocation.model_positionals[1:]
    if rest:
        # One optional positional (`model_tag`, nargs="?": 0.10.0 vllm/entrypoints/openai/cli_args.py
        # l.214-218): the first word fills it, argparse reports every further one and exits.
        if any(t.dynamic for t in rest):
            return None  # `$(ARGS)` may expand to flags only
        extra = " ".join(t.text for t in rest)
        message = (f"The image `{image}` exits on a second positional argument: {instead}. It runs `{runs}`, "
                   "whose parser has one optional positional argument (`model_tag`, never read by the api_server): "
                   f"{what} fills it, and argparse stops the server with \"unrecognized arguments: {extra}\", so "
                   "the container exits.")
        return ctx.finding(first, message, about=invocation, value=f"extra:{first.text}")
    spec = invocation.catalog.option("--model")
    default = f" ({spec.default})" if spec is not None and spec.default else ""
    if models:
        message = (f"{what[0].upper() + what[1:]} is accepted but never read (only `vllm serve` reads it). The image "
                   f"`{image}` runs `{runs}`, which ignores it: the word does nothing, and `{models[0].name}` chooses "
                   "the model. Fix: drop it.")
        return ctx.finding(first, message, about=invocation, value=f"ignored:{first.text}",
                           severity=min(ctx.severity, Severity.WARNING))
    message = (f"{what[0].upper() + what[1:]} is accepted but never read (only `vllm serve` reads it). The image "
               f"`{image}` runs `{runs}`, which ignores it: the server starts and serves its default model{default} "
               f"instead. Fix: {instead}.")
    return ctx.finding(first, message, about=invocation, value=f"ignored:{first.text}")
