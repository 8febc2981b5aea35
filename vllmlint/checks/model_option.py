"""`vllm serve --model X` without a positional model: shared by conflicting-args (VL107), which reports the
releases that reject it, and model-option-deprecated (VL112), which reports the releases that only warn.

argparse required the positional `model_tag` and scripts.py / cli/serve.py raised "With `vllm serve`, you
should provide the model as a positional argument instead of via the `--model` option" (0.6.x - 0.7.x);
FlexibleArgumentParser.parse_args raised the same for an `--model` token from 0.8.0 to 0.11.0; from 0.11.1
it only warns that "The `--model` option will be removed in v0.13." (0.11.1 - 0.19.0), "... in a future
version." (0.20.0 - 0.33.0), and moves the value to the front (vllm/utils/argparse_utils.py: 0.11.1 l.203-208,
0.29.0 l.276-281, 0.33.0 l.330-335).
"""
from __future__ import annotations

from vllmlint.vllm.invocation import SERVE, Invocation, Option
from vllmlint.vllm.release import version_key

MODEL_OPTION_WARNS_FROM = "0.11.1"
# Before 0.8.0 the positional was required: any `--model` spelling failed, not only the bare token.
POSITIONAL_OPTIONAL_FROM = "0.8.0"


def lone_model_option(invocation: Invocation) -> tuple[Option, bool] | None:
    """(the `--model` option, whether the release rejects it) for `vllm serve --model X` without a
    positional model; None otherwise (not `vllm serve`, `vllm serve serve`, no `--model`, or a positional)."""
    positionals = invocation.model_positionals
    if invocation.kind != SERVE or positionals:
        return None
    models = invocation.option("--model")
    if not models:
        return None
    option = models[0]
    target = invocation.release or invocation.catalog.version
    if version_key(target) < version_key(POSITIONAL_OPTIONAL_FROM):
        return option, True
    if version_key(target) < version_key(MODEL_OPTION_WARNS_FROM):
        return option, not option.inline and option.name == "--model"
    return option, False
