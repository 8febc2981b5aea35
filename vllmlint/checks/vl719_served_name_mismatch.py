"""VL719: a client in the run asks a vLLM server for a model name the server does not serve.

vLLM answers a request whose `model` is neither one of its served names nor a loaded LoRA adapter with
404 "The model `x` does not exist." (`_check_model`, vllm/entrypoints/openai/serving_engine.py in 0.6.3
and 0.10.1.1; served names: `--served-model-name`, default `[--model]`, vllm/config.py
`served_model_name`; adapters: `--lora-modules`). With VLLM_ALLOW_RUNTIME_LORA_UPDATING on, an unknown name
may be an adapter loaded later (or resolved by a LoRA resolver plugin): then nothing is judged.

Clients are linked to a server only where the link is certain:
- the AIBrix label `model.aibrix.ai/name` on the vLLM pod itself (AIBrix's gateway sends requests for that
  model name to pods with the label; its quickstart: "The `--served-model-name` argument value must also
  match ... the Deployment label `model.aibrix.ai/name`");
- an InferenceModel whose `poolRef` names an InferencePool of the run that selects vLLM pods (its
  `targetModels` names when given, since the endpoint picker rewrites the request to them; else `modelName`);
- vLLM's own benchmark client (`vllm bench serve`, `benchmark_serving.py`) whose `--base-url` or
  `--host`/`--port` names a Service of the run (or localhost in the server's own pod) that sends that port to
  vLLM's API port. It sends `--served-model-name`, else `--model`, or one of its `--lora-modules` names
  (vllm/benchmarks/serve.py in 0.10.1.1).
The benchmark client and curl count only for an endpoint that checks the name on the server's release
(`model_checked` in `data/server-endpoints.yaml`: from 0.18.0 the pooling endpoints ignore `_check_model`'s
result but `_maybe_get_adapters` raises VLLMNotFoundError, the same 404).
"""
from __future__ import annotations

from vllmlint.records import dataclass, field
from typing import Iterator

from vllmlint.finding import Finding
from vllmlint.k8s.objects import PodTemplate
from vllmlint.source.yamlmodel import Mapping, Node, Sequence, scalar_str
from vllmlint.vllm.clients import bench_argv as _bench_argv
from vllmlint.vllm.clients import bench_asked as _bench_asked
from vllmlint.vllm.clients import bench_options as _options
from vllmlint.vllm.clients import bench_target as _bench_target
from vllmlint.vllm.clients import curl_request as _curl_request
from vllmlint.vllm.clients import flag_values as _flag_values
from vllmlint.vllm.clients import reached_templates, runtime_lora, served_names
from vllmlint.vllm.clients import value_text as _value_text
from vllmlint.vllm.endpoints import checks_model
from vllmlint.vllm.invocation import DEMO_API_SERVER, Invocation
from vllmlint.checks import Context

_AIBRIX_LABEL = "model.aibrix.ai/name"


@dataclass
class Served:
    """What one vLLM server answers to: its names, adapters, and its API port."""

    invocation: Invocation
    names: list[str]
    adapters: list[str] = field(default_factory=list)
    port: int | None = None

    @property
    def release(self) -> str | None:
        return None if self.invocation.assumed else self.invocation.release

    def serves(self, name: str) -> bool:
        return name in self.names or name in self.adapters

    def describe(self) -> str:
        said = ", ".join(f"`{n}`" for n in self.names)
        if self.adapters:
            said += " and the LoRA adapters " + ", ".join(f"`{a}`" for a in self.adapters)
        return said


def _describe(servers: list[Served]) -> str:
    """The names every server answers to, once each, in order."""
    names: list[str] = []
    adapters: list[str] = []
    for server in servers:
        names.extend(n for n in server.names if n not in names)
        adapters.extend(a for a in server.adapters if a not in adapters)
    return Served(servers[0].invocation, names, adapters).describe()


def _lora_name(text: str) -> str | None:
    """The name of one `--lora-modules` item: `name=path`, or JSON with a `name` (vllm/entrypoints/openai/
    cli_args.py `LoRAParserAction`)."""
    if text.startswith("{"):
        import json  # here, not at start-up: only some inputs need it

        try:
            data = json.loads(text)
        except ValueError:
            return None
        name = data.get("name") if isinstance(data, dict) else None
        return name if isinstance(name, str) and name else None
    name, eq, path = text.partition("=")
    return name if eq and name and path else None


def served(invocation: Invocation, ctx: Context) -> Served | None:
    """The names a vLLM server answers to, or None when they are not all known."""
    if invocation.kind == DEMO_API_SERVER or invocation.container is None:
        return None  # the demo server's /generate takes no model name
    if runtime_lora(invocation, ctx.world):
        return None
    names = served_names(invocation)
    if names is None:
        return None
    lora_tokens = _flag_values(invocation, "--lora-modules")
    if lora_tokens is None:
        return None
    adapters = []
    for token in lora_tokens:
        name = _lora_name(_value_text(token, "--lora-modules"))
        if name is None:
            return None
        adapters.append(name)
    return Served(invocation, names, adapters, invocation.api_port)


def _template_servers(ctx: Context, template: PodTemplate, cache: dict) -> list[Served] | None:
    """Every vLLM server of a pod template, or None when one of them is not known."""
    key = id(template)
    if key not in cache:
        result: list[Served] | None = []
        invocations = ctx.world.vllm_templates().get(template, [])
        for invocation in invocations:
            one = served(invocation, ctx)
            if one is None:
                result = None
                break
            assert result is not None
            result.append(one)
        cache[key] = result if result else None
    return cache[key]


def check(ctx: Context) -> Iterator[Finding | None]:
    cache: dict = {}
    yield from _aibrix(ctx, cache)
    yield from _inference_models(ctx, cache)
    yield from _routes(ctx, cache)
    yield from _bench_clients(ctx, cache)
    yield from _curl_clients(ctx, cache)


# --- AIBrix: the model label on the vLLM pod -----------------------------------------------------------
def _aibrix(ctx: Context, cache: dict) -> Iterator[Finding | None]:
    for template in ctx.world.vllm_templates():
        value = template.labels.get(_AIBRIX_LABEL)
        if not value:
            continue
        servers = _template_servers(ctx, template, cache)
        if servers is None or any(s.serves(value) for s in servers):
            continue
        labels = template.metadata.get("labels") if template.metadata is not None else None
        node = labels.get(_AIBRIX_LABEL) if isinstance(labels, Mapping) else None
        if node is None:
            continue
        # The problem and the fix first (the first line ends at the first `: `); the names served follow.
        yield ctx.finding(node, f"vLLM here does not serve `{value}`, the model of its AIBrix label: add "
                          f"`--served-model-name {value}`, or change the label to a name vLLM serves. The AIBrix "
                          f"label `{_AIBRIX_LABEL}: {value}` sends requests for model `{value}` to this pod, but "
                          f"vLLM here serves only {_describe(servers)}: every request through the AIBrix gateway "
                          f"gets 404 \"The model `{value}` does not exist\".",
                          about=template, value=f"{_AIBRIX_LABEL}={value}")


# --- Gateway API Inference Extension: InferenceModel -> InferencePool -> vLLM pods --------------------------
def _inference_models(ctx: Context, cache: dict) -> Iterator[Finding | None]:
    for model in ctx.world.of_kind("InferenceModel", "InferenceObjective"):
        spec = model.spec
        if spec is None:
            continue
        pool_ref = spec.get("poolRef")
        pool_name = scalar_str(pool_ref.get("name")) if isinstance(pool_ref, Mapping) else None
        if not pool_name:
            continue
        if isinstance(pool_ref, Mapping) and (scalar_str(pool_ref.get("kind")) or "InferencePool") != "InferencePool":
            continue
        pool = ctx.world.find("InferencePool", pool_name, model.namespace)
        if pool is None or pool.spec is None:
            continue  # the pool is not in the run
        servers = _pool_servers(ctx, pool, cache)
        if not servers:
            continue  # a pod of the pool that is not (known) vLLM, or no pod of the run: not judged
        targets = spec.get("targetModels")
        asked: list[tuple[str, Node]] = []
        if isinstance(targets, Sequence) and targets.items:
            for item in targets.items:
                name_node = item.get("name") if isinstance(item, Mapping) else None
                name = scalar_str(name_node)
                if name and name_node is not None:
                    asked.append((name, name_node))
            role = "a target model of"
        else:
            name_node = spec.get("modelName")
            name = scalar_str(name_node)
            if name and name_node is not None:
                asked.append((name, name_node))
            role = "the model name of"
        for name, node in asked:
            if any(s.serves(name) for s in servers):
                continue
            yield ctx.finding(node, f"The pool's vLLM pods do not serve `{name}`, {role} {model.kind} {model.name}: "
                              "serve it (`--served-model-name`, `--lora-modules`), or name a model the pool serves. "
                              f"`{name}` is {role} {model.kind} {model.name}, whose InferencePool {pool.name} "
                              f"selects vLLM pods that serve only {_describe(servers)}: requests routed to it "
                              f"get 404 \"The model `{name}` does not exist\".",
                              about=model, value=f"{model.name}:{name}")


# --- Gateway API: an HTTPRoute that routes a model name (body-based routing's header) to an InferencePool -----
_MODEL_HEADER = "x-gateway-model-name"  # set from the request body's `model` by body-based routing


def _pool_servers(ctx: Context, pool, cache: dict) -> list[Served] | None:
    """The vLLM servers of every pod an InferencePool selects, or None when one of them is not known."""
    if pool.spec is None:
        return None
    templates = ctx.world.selected_templates(pool.spec.get("selector"), pool.namespace)
    servers: list[Served] = []
    for template in templates:
        found = _template_servers(ctx, template, cache)
        if found is None:
            return None
        servers.extend(found)
    return servers or None


def _rewritten(ctx: Context, pool) -> bool:
    """An InferenceModel (with targetModels) or InferenceModelRewrite for this pool may change the model name."""
    for kind in ("InferenceModelRewrite", "InferenceModel", "InferenceObjective"):
        for obj in ctx.world.of_kind(kind):
            ref = obj.spec.get("poolRef") if obj.spec is not None else None
            if isinstance(ref, Mapping) and scalar_str(ref.get("name")) == pool.name \
                    and (kind == "InferenceModelRewrite" or obj.spec is not None and "targetModels" in obj.spec):
                return True
    return False


def _routes(ctx: Context, cache: dict) -> Iterator[Finding | None]:
    for route in ctx.world.of_kind("HTTPRoute"):
        rules = route.spec.get("rules") if route.spec is not None else None
        if not isinstance(rules, Sequence):
            continue
        for rule in rules.items:
            if not isinstance(rule, Mapping):
                continue
            refs = rule.get("backendRefs")
            pools = []
            for ref in refs.items if isinstance(refs, Sequence) else ():
                if isinstance(ref, Mapping) and scalar_str(ref.get("kind")) == "InferencePool":
                    name = scalar_str(ref.get("name"))
                    pool = ctx.world.find("InferencePool", name, route.namespace) if name else None
                    pools.append(pool)
            known = [p for p in pools if p is not None]
            if not known or len(known) < len(pools):
                continue  # not (only) pools of the run
            matches = rule.get("matches")
            for match in matches.items if isinstance(matches, Sequence) else ():
                headers = match.get("headers") if isinstance(match, Mapping) else None
                for header in headers.items if isinstance(headers, Sequence) else ():
                    if not isinstance(header, Mapping):
                        continue
                    if (scalar_str(header.get("name")) or "").lower() != _MODEL_HEADER \
                            or (scalar_str(header.get("type")) or "Exact") != "Exact":
                        continue
                    value_node = header.get("value")
                    name = scalar_str(value_node)
                    if not name or value_node is None:
                        continue
                    for pool in known:
                        servers = _pool_servers(ctx, pool, cache)
                        if servers is None or _rewritten(ctx, pool) or any(s.serves(name) for s in servers):
                            continue
                        yield ctx.finding(value_node, f"The pool's vLLM pods do not serve `{name}`, a model "
                                          f"HTTPRoute {route.name} routes to: serve it (`--served-model-name`, "
                                          "`--lora-modules`), or match the name the pool serves. HTTPRoute "
                                          f"{route.name} sends requests for model `{name}` to InferencePool "
                                          f"{pool.name}, whose vLLM pods serve only {_describe(servers)}: the "
                                          f"request keeps its model name and gets 404 \"The model `{name}` does "
                                          "not exist\".",
                                          about=route, value=f"{route.name}:{name}")


# --- vLLM's benchmark client -----------------------------------------------------------------------------
def _bench_clients(ctx: Context, cache: dict) -> Iterator[Finding | None]:
    for command in ctx.world.shell_commands:
        container = command.container
        if container is None or container.is_compose:
            continue
        start = _bench_argv(command.words)
        if start is None:
            continue
        options = _options(command.tokens[start:])
        if options is None:
            continue
        asked = _bench_asked(options)
        if not asked:
            continue
        target = _bench_target(options)
        if target is None:
            continue
        servers = _servers_at(ctx, container, target[0], target[1], cache)
        if not servers or not all(checks_model(target[3], s.release) for s in servers):
            continue
        for name, token in asked:
            if any(s.serves(name) for s in servers):
                continue
            yield ctx.finding(token, f"The vLLM server the benchmark client sends to does not serve `{name}`: pass "
                              "`--served-model-name` with a name the server serves (the client's `--model` is also "
                              f"its tokenizer). The benchmark client asks for model `{name}`, but the vLLM server it "
                              f"sends to ({target[2]}) serves only {_describe(servers)}: every request gets 404 "
                              f"\"The model `{name}` does not exist\".",
                              about=container, value=f"{target[2]}:{name}")


def _servers_at(ctx: Context, client, host: str, port: int, cache: dict) -> list[Served] | None:
    """The vLLM servers that certainly answer `host:port` from the client's pod, or None."""
    reached = reached_templates(ctx.world, client.pod.namespace, client.pod, host, port)
    if reached is None:
        return None
    result: list[Served] = []
    for template, number in reached:
        found = _template_servers(ctx, template, cache)
        if found is None:
            return None  # a selected pod that is not (known) vLLM
        at_port = [s for s in found if s.port == number]
        if not at_port:
            return None  # the port goes to something else in the pod
        result.extend(at_port)
    return result or None


# --- curl with an OpenAI request body -------------------------------------------------------------------


def _curl_clients(ctx: Context, cache: dict) -> Iterator[Finding | None]:
    for command in ctx.world.shell_commands:
        container = command.container
        if container is None or container.is_compose or not command.tokens:
            continue
        if command.tokens[0].text.rsplit("/", 1)[-1] != "curl":
            continue
        request = _curl_request(command.tokens)
        if request is None:
            continue
        url_text, model, body = request
        from urllib.parse import urlsplit  # here, not at start-up (2 ms of a one-file run)

        try:
            url = urlsplit(url_text)
            port = url.port
        except ValueError:
            continue
        if url.scheme not in ("http", "https") or not url.hostname:
            continue
        servers = _servers_at(ctx, container, url.hostname, port or (443 if url.scheme == "https" else 80), cache)
        if not servers or any(s.serves(model) for s in servers):
            continue
        if not all(checks_model(url.path, s.release) for s in servers):
            continue  # an endpoint not known to check the name (data/server-endpoints.yaml `model_checked`)
        yield ctx.finding(body, f"The vLLM server does not serve `{model}`, the model this request asks for: ask "
                          f"for a name the server serves. The vLLM server at {url_text} serves only "
                          f"{_describe(servers)}: the request gets 404 \"The model `{model}` does not exist\".", about=container, value=f"{url.hostname}:{model}")


__all__ = ["served", "Served"]
