"""VL711: a model whose tokenizer has no chat template, served without `--chat-template`.

The catalog's `has_chat_template` fact (the repository's tokenizer_config.json) says the tokenizer has no
template; `data/chat-templates.yaml` says from which release vLLM refuses such a chat request ("As of
transformers v4.44, default chat template is no longer allowed ...") and which model types get a fallback
template of vLLM's own. Warning when the run shows chat use (a client, route, benchmark or probe naming
/v1/chat/completions, or tool calling switched on), info otherwise: a completions-only server is fine.

Silent when the tokenizer is read at a revision not known to be `main` (`--tokenizer-revision`, else
`--revision`: the fact is main's tokenizer_config.json), when the fact is not about this repository (a variant, a quantized copy or a local path matched by
its words), when `--chat-template`, another `--tokenizer` or the Mistral tokenizer decides, for pooling
models (`--task`/`--runner`/`--convert`), for the demo api_server (no chat endpoint) and for releases the
table does not cover.
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.capacity.specs import repository_fact
from vllmlint.capacity.workload import Workload, workloads
from vllmlint.checks import Context
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.objects import namespaces_compatible
from vllmlint.source.yamlmodel import Scalar, walk
from vllmlint.vllm.checkpoint import chat_template_fallback, chat_template_refusal, off_main
from vllmlint.vllm.invocation import DEMO_API_SERVER, Invocation

CHAT_PATH = "/chat/completions"
# Flags after which only the chat endpoint makes sense: tool calling exists in chat completions only.
_CHAT_FLAGS = ("--enable-auto-tool-choice", "--tool-call-parser")
# Values of --task / --runner / --convert that keep the generate runner (anything else is pooling).
_GENERATE = {"auto", "generate", "none"}


def check(ctx: Context) -> Iterator[Finding | None]:
    evidence: list[tuple[str, str]] | None = None  # (namespace, description): once, only for a candidate
    for work in workloads(ctx.world):
        invocation = work.invocation
        fact = _missing_template(work)
        if fact is None:
            continue
        release = _release(invocation)
        refusal = chat_template_refusal(release)
        if refusal is None or chat_template_fallback(fact.model_type, release) is not None:
            continue
        if evidence is None:
            evidence = _chat_use(ctx)
        namespace = invocation.container.pod.namespace if invocation.container is not None else ""
        near = [what for where, what in evidence if namespaces_compatible(where, namespace)]
        shown = near[0] if near else _chat_flag(invocation)
        yield _finding(ctx, work, release, shown)


def _release(invocation: Invocation) -> str:
    return invocation.release if invocation.release and not invocation.assumed else invocation.catalog.version


def _missing_template(work: Workload):
    """The catalog's has_chat_template fact when it says this repository has none and nothing else decides."""
    invocation = work.invocation
    if invocation.kind == DEMO_API_SERVER or work.model is None or work.model_name is None:
        return None
    fact = repository_fact(work.model, work.model_name, "has_chat_template")
    if fact is None or fact.value is not False:
        return None
    if invocation.option("--chat-template"):
        return None  # given (even as $VAR): the user chose a template
    if off_main(invocation, "--tokenizer-revision"):
        return None  # the tokenizer of another revision (it defaults to --revision): its template may differ
    for tokenizer in invocation.option("--tokenizer"):
        if not tokenizer.value_known or (tokenizer.value or "").strip() != work.model_name:
            return None  # another tokenizer's template is used
    for mode in invocation.option("--tokenizer-mode"):
        if not mode.value_known or (mode.value or "").strip().lower() == "mistral":
            return None  # mistral_common renders its own chat format
    for flag in ("--task", "--runner", "--convert"):
        for option in invocation.option(flag):
            if not option.value_known or (option.value or "").strip().lower() not in _GENERATE:
                return None  # a pooling model (embed, classify, reward ...) or unknown: no chat
    return fact


def _chat_flag(invocation: Invocation) -> str | None:
    for flag in _CHAT_FLAGS:
        if invocation.option(flag):
            return f"`{flag}` is set, and tool calls exist only in chat completions"
    return None


def _chat_use(ctx: Context) -> list[tuple[str, str]]:
    """Where the run shows requests to /v1/chat/completions: commands (curl, benchmark clients), and any
    value of a manifest (a route's path, a client's env or ConfigMap, a probe). (namespace, description)
    pairs, in the order found; a script or Compose file has no namespace (it is near every server)."""
    found: list[tuple[str, str]] = []
    for command in ctx.world.shell_commands:
        for token in command.tokens:
            if CHAT_PATH in token.text or token.text == "openai-chat":
                pod = command.container.pod if command.container is not None else None
                what = f"{pod.owner.kind} {pod.owner.name}".strip() if pod is not None else "a script"
                found.append((pod.namespace if pod is not None else "",
                              _at(token.span.line if token.span else 0, token, what)))
                break
    for obj in ctx.world.objects:
        for node in walk(obj.node):
            if isinstance(node, Scalar) and isinstance(node.value, str) and CHAT_PATH in node.value:
                found.append((obj.namespace, _at(node.line, node, f"{obj.kind} {obj.name}".strip())))
                break
    return found


def _at(line: int, where, what: str) -> str:
    path = where.source.display_path if where.source is not None else ""
    return f"{what} calls /v1/chat/completions ({path}:{line})"


def _finding(ctx: Context, work: Workload, release: str, shown: str | None) -> Finding | None:
    invocation = work.invocation
    name = work.model_name
    assumed = " (assumed: the workload's release is unknown)" if invocation.release is None or invocation.assumed else ""
    message = (f"`{name}` has no chat template (its tokenizer_config.json defines none) and vLLM {release}{assumed} "
               "has no fallback template for it: every /v1/chat/completions request is answered with an error "
               "(\"As of transformers v4.44, default chat template is no longer allowed\"). ")
    if shown:
        message += f"The run uses chat: {shown}. "
    else:
        message += "Nothing in the run shows chat use; a server only for /v1/completions is fine. "
    message += ("Fix: pass `--chat-template` with a template written for this model, or serve a chat-tuned "
                "variant of it.")
    severity = ctx.severity if shown else min(ctx.severity, Severity.INFO)
    return ctx.finding(work.model_anchor, message, about=invocation, value=name or "", severity=severity)
