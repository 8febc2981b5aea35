"""VL112: `vllm serve --model X` on a release that accepts it with a deprecation warning.

Split out of conflicting-args (VL107, issue 13): a deprecation is not a conflict, and ignoring it must not
hide the errors VL107 reports. VL107 suppressions and ignores still cover it for one release
(data/renamed-codes.yaml). Which releases warn and which reject: vllmlint/checks/model_option.py.
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.finding import Finding
from vllmlint.checks import Context
from vllmlint.checks.model_option import lone_model_option


def check(ctx: Context) -> Iterator[Finding | None]:
    for invocation in ctx.world.invocations:
        lone = lone_model_option(invocation)
        if lone is None or lone[1]:
            continue  # no lone `--model`, or a release that rejects it: conflicting-args (VL107)
        option = lone[0]
        model = option.value or "MODEL"
        yield ctx.finding(option.token, f"`vllm serve {option.name} ...` is deprecated: vLLM warns \"The `--model` "
                          "option will be removed in a future version\". Give the model as the positional argument: "
                          f"`vllm serve {model} ...`.", about=invocation, value="--model")
