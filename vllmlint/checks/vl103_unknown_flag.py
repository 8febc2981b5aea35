from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator

from vllmlint.finding import Finding, Severity
from vllmlint.vllm.flags import AMBIGUOUS, UNKNOWN
from vllmlint.vllm.flagtable import first_sentence
from vllmlint.vllm.invocation import SERVE, Invocation, Option, Token
from vllmlint.checks import Context
from vllmlint.checks.messages import keyword_advice
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.fix.edits import Fix

# Flags whose removal loses nothing: the server already does what they ask for.
_DROP_SAFELY = {"--enable-metrics": "metrics are always served on the API port"}


def check(ctx: Context) -> Iterator[Finding | None]:
    for invocation in ctx.world.invocations:
        for option in invocation.options:
            status = option.status
            # A flag and its value in one item (`"--quantization awq"`) has status JOINED: malformed-argv
            # (VL714) reports it, so the item gets one finding, not also "unknown flag".
            if status is None or status.kind not in (UNKNOWN, AMBIGUOUS) or option.joined:
                continue
            release = invocation.catalog.version
            if status.kind == AMBIGUOUS:
                message = (f"`{option.name}` is an ambiguous abbreviation for vLLM {release}'s parser (it could be "
                           f"{', '.join(f'`{c}`' for c in status.candidates[:4])}), which refuses to start: "
                           "write the option out in full.")
            else:
                which = f"vLLM {release}" if invocation.assumed else _which(invocation)
                message = f"`{option.name}` is not an option of the vLLM server ({which}), which refuses " \
                          "to start with it."
                if invocation.assumed:
                    message += f" The release is unknown: it was checked against {release}, the newest known release."
                if status.hint:
                    message += " " + first_sentence(status.hint)
                elif status.candidates:
                    message += f" Did you mean `{status.candidates[0]}`?"
            severity = None
            if invocation.beyond_catalog:
                severity = Severity.WARNING  # the flag may be newer than the newest release vllmlint knows
                message += f" (vLLM {invocation.release} is newer than the newest release vllmlint knows, " \
                           f"{release}: the flag may be new)"
            yield ctx.finding(option.token, message, about=invocation, value=status.spelling, severity=severity,
                              fix=ctx.build_fix(_fix, invocation, option))
        yield from _stray_positionals(ctx, invocation)


def _which(invocation: Invocation) -> str:
    release = invocation.catalog.version
    if invocation.assumed:
        return f"checked against {release}, the newest known release"
    if invocation.beyond_catalog:
        return f"in no release up to {release}"
    if invocation.release and invocation.release != release:  # a patch vllmlint does not catalogue stands in
        return f"vLLM {invocation.release}, checked against {release}, the closest catalogued release"
    return f"vLLM {release}"


def _fix(invocation: Invocation, option: Option) -> Fix | None:
    reason = _DROP_SAFELY.get(option.status.spelling) if option.status is not None else None
    if reason is None:
        return None
    from vllmlint.fix.edits import SAFE, drop_options_fix

    if option.value is not None and not option.inline:
        return None  # `--enable-metrics X`: X may be the model; the parse cannot know
    return drop_options_fix(invocation, [option], SAFE, f"delete `{option.name}`: {reason}")


# A shell operator left as a word, and the placeholders of documentation (`vllm serve MODEL [options]`).
_SHELL_OPERATORS = {"&&", "||", "|", ";", "&", ">", ">>", "<", "2>&1", "|&"}
_PLACEHOLDER = lazy_compile(r"^(\[.*\]|<.*>|\.\.\.|…)$")
# Words VL106 already reports as the value given to a switch (`--enable-chunked-prefill false`).
_TRUTHY = {"true", "false", "yes", "no", "on", "off", "1", "0"}


def _stray_positionals(ctx: Context, invocation: Invocation) -> Iterator[Finding | None]:
    """Words after the model of `vllm serve`: its parser has one positional (`model_tag`, nargs="?"
    from 0.8.0, required before), so every further one stops it with "unrecognized arguments"."""
    if invocation.kind != SERVE:
        return  # the api_server entrypoint has no positional at all: positional-model-ignored (VL715)
    positionals = invocation.model_positionals
    if not positionals or positionals[0].text in ("serve", "vllm"):
        return  # `vllm serve serve MODEL`: conflicting-args (VL107)
    # (`--model X` next to a positional is conflicting-args (VL107): the first positional counts as the model.)
    strays = positionals[1:]
    after_switch = _switch_values(invocation)
    position = {id(t): i for i, t in enumerate(invocation.tokens)}
    guessed = [position.get(id(o.token), 0) for o in invocation.options
               if o.status is not None and o.status.kind in (UNKNOWN, AMBIGUOUS)]
    for token in strays:
        text = token.text
        if text in _SHELL_OPERATORS or re.match(r"^\d?>", text):
            break  # a shell operator in an argv with no shell: malformed-argv (VL714); the rest is not vLLM's
        if guessed and min(guessed) < position.get(id(token), 0):
            continue  # after an unknown flag, which may take more values than the parse guessed
        if _PLACEHOLDER.match(text):
            continue  # `[options]`, `<args>`, `...` in documentation
        if token.source is None or token.dynamic or not text or "$" in text or "{{" in text or "{%" in text:
            continue  # synthetic, or a value only known when the container runs (`$EXTRA_ARGS`)
        if id(token) in after_switch and text.lower() in _TRUTHY:
            continue  # invalid-flag-value (VL106) reports it, as the value given to the switch
        message = (f"`{text}` is an extra positional argument after the model `{positionals[0].text}`: "
                   f"`vllm serve` takes only one, so its parser exits with \"unrecognized arguments: {text}\".")
        yield ctx.finding(token, message + _instead(invocation, text), about=invocation, value=text)


def _instead(invocation: Invocation, text: str) -> str:
    return " " + (keyword_advice(invocation, text) or "Remove it, or make it the value of the option it belongs to.")


def _switch_values(invocation: Invocation) -> set[int]:
    """Positionals that directly follow a switch (an option that takes no value)."""
    by_token = {id(o.token): o for o in invocation.options}
    result: set[int] = set()
    tokens: list[Token] = invocation.tokens
    for i, token in enumerate(tokens[:-1]):
        option = by_token.get(id(token))
        if option is not None and option.spec is not None and not option.spec.takes_value and not option.inline:
            result.add(id(tokens[i + 1]))
    return result
