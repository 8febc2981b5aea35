from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from vllmlint.finding import Finding, Severity
from vllmlint.vllm.flags import AMBIGUOUS, UNKNOWN
from vllmlint.vllm.flagtable import first_sentence
from vllmlint.vllm.invocation import Invocation, Option
from vllmlint.checks import Context

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
                message = f"`{option.name}` is not an option of the vLLM server ({_which(invocation)}), which refuses " \
                          "to start with it."
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


def _which(invocation: Invocation) -> str:
    release = invocation.catalog.version
    if invocation.assumed:
        return f"checked against {release}, the newest known release"
    return f"in no release up to {release}" if invocation.beyond_catalog else f"vLLM {release}"


def _fix(invocation: Invocation, option: Option) -> Fix | None:
    reason = _DROP_SAFELY.get(option.status.spelling) if option.status is not None else None
    if reason is None:
        return None
    from vllmlint.fix.edits import SAFE, drop_options_fix

    if option.value is not None and not option.inline:
        return None  # `--enable-metrics X`: X may be the model; the parse cannot know
    return drop_options_fix(invocation, [option], SAFE, f"delete `{option.name}`: {reason}")
