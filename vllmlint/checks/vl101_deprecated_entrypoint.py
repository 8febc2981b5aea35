from ..invocation import DEMO_API_SERVER, OPENAI_API_SERVER
from ..finding import Severity
from ..release import version_key
from . import Context

SHIM_SINCE = "0.29.0"  # the release that turned the module into a deprecated shim (audited chapter)


def check(ctx: Context):
    for invocation in ctx.world.invocations:
        module = invocation.entry[-1] if invocation.entry else None
        if module is None or module.source is None:
            continue  # the image's own entrypoint: not something the manifest wrote
        if invocation.kind == OPENAI_API_SERVER:
            release = invocation.release
            if release and version_key(release) < version_key(SHIM_SINCE):
                yield ctx.finding(module, f"`vllm.entrypoints.openai.api_server` still works on vLLM {release}, "
                                  "but it is a deprecated shim from 0.29.0 on: prefer `vllm serve MODEL`.",
                                  about=invocation, value=module.text, severity=Severity.INFO)
            else:
                yield ctx.finding(module, "`python -m vllm.entrypoints.openai.api_server` is deprecated: use "
                                  "`vllm serve MODEL` (the model becomes its first argument instead of `--model`).",
                                  about=invocation, value=module.text)
        elif invocation.kind == DEMO_API_SERVER:
            yield ctx.finding(module, "`vllm.entrypoints.api_server` is vLLM's demo server (only `/generate`, "
                              "not the OpenAI API): serve with `vllm serve MODEL` and move clients to `/v1`.",
                              about=invocation, value=module.text)
