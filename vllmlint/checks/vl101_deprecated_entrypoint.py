from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from vllmlint.vllm.invocation import DEMO_API_SERVER, OPENAI_API_SERVER, Invocation
from vllmlint.finding import Finding, Severity
from vllmlint.vllm.release import version_key
from vllmlint.checks import Context

if TYPE_CHECKING:
    from vllmlint.fix.edits import Edit, Fix

SHIM_SINCE = "0.29.0"  # the release that turned the module into a deprecated shim (audited chapter)


def check(ctx: Context) -> Iterator[Finding | None]:
    for invocation in ctx.world.invocations:
        module = invocation.entry[-1] if invocation.entry else None
        if module is None or module.source is None:
            continue  # the image's own entrypoint: not something the manifest wrote
        if invocation.kind == OPENAI_API_SERVER:
            release = invocation.release
            fix = ctx.lazy_fix(serve_fix, invocation)  # built only if shown and fixes are used
            if release and version_key(release) < version_key(SHIM_SINCE):
                yield ctx.finding(module, f"`vllm.entrypoints.openai.api_server` still works on vLLM {release}, "
                                  "but it is a deprecated shim from 0.29.0 on: prefer `vllm serve MODEL`.",
                                  about=invocation, value=module.text, severity=Severity.INFO, fix=fix)
            else:
                yield ctx.finding(module, "`python -m vllm.entrypoints.openai.api_server` is deprecated: use "
                                  "`vllm serve MODEL` (the model becomes its first argument instead of `--model`).",
                                  about=invocation, value=module.text, fix=fix)
        elif invocation.kind == DEMO_API_SERVER:
            # No fix: the demo server has another API, so `vllm serve` is not the same program.
            yield ctx.finding(module, "`vllm.entrypoints.api_server` is vLLM's demo server (only `/generate`, "
                              "not the OpenAI API): serve with `vllm serve MODEL` and move clients to `/v1`.",
                              about=invocation, value=module.text)


def _oldest_catalogued() -> str:
    from vllmlint.vllm.catalog import releases

    return releases()[0]


def serve_fix(invocation: Invocation) -> Fix | None:
    """`python -m vllm.entrypoints.openai.api_server [...] --model X` -> `vllm serve X [...]`.

    Safe: the shim runs the same server with the same parser, and `vllm serve` takes the model as its
    first argument. No fix when the model is ambiguous (two `--model`s, or `--model` beside a positional)
    or a positional is not first (argparse would take an optional positional too early). Errors are
    the caller's (the engine reports them, as `ctx.build_fix` does): a form it cannot edit returns None."""
    from vllmlint.fix.edits import SAFE, UNSAFE, Keep, Word, argv_editor, make_fix

    editor = argv_editor(invocation)
    if editor is None or len(invocation.entry) != 3:
        return None  # `python -u -m ...`: `vllm` would drop the interpreter options
    if invocation.release and version_key(invocation.release) < version_key(_oldest_catalogued()):
        return None  # older than any release whose `vllm serve` was examined
    models = invocation.option("--model")
    positionals = [t for t in invocation.positionals if not t.dynamic]
    if len(models) > 1 or (models and positionals):
        return None
    if positionals and (not invocation.tokens or invocation.tokens[0] is not positionals[0]):
        return None
    words: list[Word] = ["vllm", "serve"]
    edits: list[Edit] = []
    if models:
        option = models[0]
        if option.value_token is None:
            return None
        if editor.mode == "list" and invocation.tokens and invocation.tokens[0] is option.token:
            # `--model X` right after the module: drop `--model` and X is in place (the list keeps
            # its items where they are, so `args: [--model, X]` never ends up empty).
            if option.inline:
                part = editor.replace([option.token], [Keep(option.token, option.name + "=")])
            else:
                part = editor.delete([option.token])
        else:
            words.append(Keep(option.value_token, option.name + "=" if option.inline else ""))
            part = editor.delete_options([option])
        if not part:
            return None
        edits.extend(part)
    replacement = editor.replace(invocation.entry, words)
    if replacement is None:
        return None
    edits.extend(replacement)
    # `/opt/venv/bin/python -m ...` names its environment; plain `vllm` is whatever PATH finds.
    pinned_interpreter = "/" in invocation.entry[0].text
    return make_fix(edits, UNSAFE if pinned_interpreter else SAFE,
                    "run `vllm serve MODEL` instead of the deprecated api_server module"
                    + (" (`vllm` from PATH instead of that interpreter)" if pinned_interpreter else ""))
