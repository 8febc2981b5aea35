"""VL711: a model whose tokenizer has no chat template, served without `--chat-template`.

The catalog's `has_chat_template` fact (the repository's tokenizer_config.json) says the tokenizer has no
template; `data/chat-templates.yaml` says from which release vLLM refuses such a chat request ("As of
transformers v4.44, default chat template is no longer allowed ...") and which model types get a fallback
template of vLLM's own. Warning when the run shows chat use that reaches this server, info otherwise: a
completions-only server is fine. Chat use (a client, route, benchmark or probe naming /v1/chat/completions)
is linked to the server as VL719 links clients (vllmlint/vllm/clients.py): a URL whose host is a Service
of the run selecting this server's pods on its API port, localhost in its own pod (or script), or evidence
naming no host when this is the only vLLM server near it; tool calling switched on counts too. With LoRA
adapters (`--lora-modules`, or runtime loading) a request naming an adapter may use the adapter's own
tokenizer and template (get_lora_tokenizer, vllm/transformers_utils/tokenizer.py): only linked evidence
naming the base model counts there.

Silent when the tokenizer is read at a revision not known to be `main` (`--tokenizer-revision`, else
`--revision`: the fact is main's tokenizer_config.json), when the fact is not about this repository (a variant, a quantized copy or a local path matched by
its words), when `--chat-template`, another `--tokenizer` or the Mistral tokenizer decides, for pooling
models (`--task`/`--runner`/`--convert`), for the demo api_server (no chat endpoint) and for releases the
table does not cover.
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass
from typing import Iterator

from vllmlint.capacity.specs import repository_fact
from vllmlint.capacity.workload import Workload, workloads
from vllmlint.checks import Context
from vllmlint.finding import Finding, Severity
from vllmlint.k8s.objects import PodTemplate, namespaces_compatible
from vllmlint.source.yamlmodel import Scalar, walk
from vllmlint.vllm.checkpoint import chat_template_fallback, chat_template_refusal, off_main
from vllmlint.vllm.clients import (LOCAL_HOSTS, bench_argv, bench_asked, bench_options, bench_target, curl_request,
                                   reached_templates, runtime_lora, served_names, url_target)
from vllmlint.vllm.invocation import DEMO_API_SERVER, Invocation

CHAT_PATH = "/chat/completions"
# Flags after which only the chat endpoint makes sense: tool calling exists in chat completions only.
_CHAT_FLAGS = ("--enable-auto-tool-choice", "--tool-call-parser")
# Values of --task / --runner / --convert that keep the generate runner (anything else is pooling).
_GENERATE = {"auto", "generate", "none"}


def check(ctx: Context) -> Iterator[Finding | None]:
    evidence: list[Chat] | None = None  # once, only for a candidate
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
        near = [chat for chat in evidence if namespaces_compatible(chat.namespace, namespace)]
        lora = _lora(invocation, ctx)
        base = set(served_names(invocation) or ()) if lora else set()
        shown = None
        for chat in near:
            if (not lora or chat.models & base) and _reaches(chat, invocation, ctx):
                shown = chat.what
                break
        if shown is None and not lora:
            shown = _chat_flag(invocation)
        yield _finding(ctx, work, release, shown, unlinked=bool(near), lora=lora)


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
    if invocation.config_file is not None:
        return None  # the --config file may set chat-template (or tokenizer, task): the run does not read it
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


@dataclass
class Chat:
    """One sign of requests to /v1/chat/completions, and where they go.

    `target`: (host, port) of the URL; None when the evidence names no host (a route's or probe's path,
    a bare `--endpoint`); `unresolved` when it names one that cannot be read (`$(HOST)`). `local`: the
    client's own pod (localhost reaches it); `script`: the file of a command outside any pod (a script),
    whose localhost reaches the servers the same file starts. `models`: the model names the requests send
    (a curl body's `model`, a benchmark's names), empty when not known."""

    namespace: str
    what: str
    target: tuple[str, int] | None = None
    unresolved: bool = False
    local: PodTemplate | None = None
    script: object | None = None
    models: frozenset[str] = frozenset()


def _chat_use(ctx: Context) -> list[Chat]:
    """Where the run shows requests to /v1/chat/completions: commands (curl, benchmark clients), and any
    value of a manifest (a route's path, a client's env or ConfigMap, a probe), in the order found; a
    script or Compose file has no namespace (it is near every server)."""
    found: list[Chat] = []
    for command in ctx.world.shell_commands:
        for token in command.tokens:
            if CHAT_PATH in token.text or token.text == "openai-chat":
                pod = command.container.pod if command.container is not None else None
                what = f"{pod.owner.kind} {pod.owner.name}".strip() if pod is not None else "a script"
                chat = Chat(pod.namespace if pod is not None else "", _at(token.span.line if token.span else 0,
                                                                            token, what),
                            local=pod, script=token.source if pod is None else None)
                _command_target(chat, command, token)
                found.append(chat)
                break
    for obj in ctx.world.objects:
        for node in walk(obj.node):
            if isinstance(node, Scalar) and isinstance(node.value, str) and CHAT_PATH in node.value:
                templates = ctx.world.templates_of(obj)
                chat = Chat(obj.namespace, _at(node.line, node, f"{obj.kind} {obj.name}".strip()),
                            local=templates[0] if len(templates) == 1 else None)
                _text_target(chat, node.value)
                found.append(chat)
                break
    return found


def _command_target(chat: Chat, command, token) -> None:
    """Where a command's chat request goes: a benchmark's target (`--base-url`, else `--host`/`--port`,
    default 127.0.0.1:8000), else the URL in the token; and the model names it sends."""
    start = bench_argv(command.words)
    if start is not None:
        options = bench_options(command.tokens[start:])
        target = bench_target(options) if options is not None else None
        if options is None or target is None:
            chat.unresolved = True
            return
        chat.models = frozenset(name for name, _ in bench_asked(options))
        chat.target = (target[0], target[1])
        return
    _text_target(chat, token.text)
    words = command.words
    if words and words[0].rsplit("/", 1)[-1] == "curl":
        request = curl_request(command.tokens)
        if request is not None and CHAT_PATH in request[0]:
            chat.models = frozenset((request[1],))


def _text_target(chat: Chat, text: str) -> None:
    """The host and port of the URL holding /chat/completions in `text`; none for a bare path."""
    word = next((w for w in re.split(r"[\s\"'`,;()\[\]{}<>]+", text) if CHAT_PATH in w), "")
    if word.startswith("/"):
        return  # a path: no host named
    target = url_target(word if "://" in word else "http://" + word)
    if target is None or "$" in target[0]:
        chat.unresolved = True
        return
    chat.target = target


def _reaches(chat: Chat, invocation: Invocation, ctx: Context) -> bool:
    """Whether the chat requests certainly go to this server: a URL whose host is a Service of the run that
    selects this server's pod on its API port, or localhost in its own pod (or script); evidence that names
    no host only when this is the only vLLM server near it."""
    if chat.unresolved:
        return False
    if chat.target is None:
        servers = [i for i in ctx.world.invocations
                   if namespaces_compatible(i.container.pod.namespace if i.container is not None else "",
                                            chat.namespace)]
        return len(servers) == 1 and servers[0] is invocation
    host, port = chat.target
    if invocation.api_port is None:
        return False
    if invocation.container is None:
        return host in LOCAL_HOSTS and port == invocation.api_port and chat.script is not None \
            and chat.script is invocation.source
    reached = reached_templates(ctx.world, chat.namespace, chat.local, host, port)
    return any(template is invocation.container.pod and number == invocation.api_port
               for template, number in reached or ())


def _lora(invocation: Invocation, ctx: Context) -> bool:
    """LoRA adapters are (or may be) served: `--lora-modules`, or `--enable-lora` with runtime loading
    (VLLM_ALLOW_RUNTIME_LORA_UPDATING on or unknown). A chat request naming an adapter uses the adapter's
    tokenizer when it has one (vllm/transformers_utils/tokenizer.py get_lora_tokenizer)."""
    if invocation.option("--lora-modules"):
        return True
    return bool(invocation.option("--enable-lora")) and runtime_lora(invocation, ctx.world)


def _at(line: int, where, what: str) -> str:
    path = where.source.display_path if where.source is not None else ""
    return f"{what} calls /v1/chat/completions ({path}:{line})"


def _finding(ctx: Context, work: Workload, release: str, shown: str | None, *, unlinked: bool = False,
             lora: bool = False) -> Finding | None:
    invocation = work.invocation
    name = work.model_name
    # An assumed release is said after the `: `, off the first line.
    assumed = (f"vLLM {release} is assumed (the workload's release is unknown); "
               if invocation.release is None or invocation.assumed else "")
    message = (f"`{name}` has no chat template and vLLM {release} has no fallback template for it: {assumed}its "
               "tokenizer_config.json defines none, and every /v1/chat/completions request is answered with an error "
               "(\"As of transformers v4.44, default chat template is no longer allowed\"). ")
    if shown:
        message += f"The run uses chat: {shown}. "
    elif lora:
        message += ("LoRA adapters are served (`--lora-modules` or runtime loading), and a chat request naming an "
                    "adapter uses the adapter's own tokenizer and template when it has one; nothing in the run "
                    "shows a chat request naming the base model. ")
    elif unlinked:
        message += ("Chat requests in the run are not certainly sent to this server (another host, or another "
                    "vLLM server nearby); a server only for /v1/completions is fine. ")
    else:
        message += "Nothing in the run shows chat use; a server only for /v1/completions is fine. "
    message += ("Fix: pass `--chat-template` with a template written for this model, or serve a chat-tuned "
                "variant of it.")
    severity = ctx.severity if shown else min(ctx.severity, Severity.INFO)
    return ctx.finding(work.model_anchor, message, about=invocation, value=name or "", severity=severity)
