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

import json
from dataclasses import dataclass, field
from typing import Iterator
from urllib.parse import urlsplit

from vllmlint.finding import Finding
from vllmlint.k8s.objects import PodTemplate
from vllmlint.k8s.pod import CONFIG_MAP, LITERAL
from vllmlint.k8s.quantity import digits_int
from vllmlint.k8s.services import resolve_port, service_ports, service_selector
from vllmlint.source.yamlmodel import Mapping, Node, Sequence, scalar_str
from vllmlint.vllm.endpoints import checks_model
from vllmlint.vllm.invocation import DEMO_API_SERVER, Invocation, Token
from vllmlint.checks import Context

_AIBRIX_LABEL = "model.aibrix.ai/name"
_TRUE = ("1", "true")  # vllm/envs.py: os.environ.get("VLLM_ALLOW_RUNTIME_LORA_UPDATING", "0").strip().lower() in ("1", "true")
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]")


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


def _flag_values(invocation: Invocation, flag: str) -> list[Token] | None:
    """The value tokens of every `flag` as vLLM's parser finds it (abbreviations and `_` spellings count;
    nargs '+': the words up to the next flag); None when one is written without a value."""
    tokens = invocation.tokens
    index = {id(t): i for i, t in enumerate(tokens)}
    values: list[Token] = []
    for option in invocation.option(flag):
        if option.inline:
            values.append(option.token)
            continue
        i = index.get(id(option.token))
        if i is None:
            return None
        j = i + 1
        while j < len(tokens) and not tokens[j].text.startswith("-"):
            values.append(tokens[j])
            j += 1
        if j == i + 1:
            return None
    return values


def _value_text(token: Token, flag: str) -> str:
    """A value token's text; for `--flag=value` the part after `=`."""
    text = token.text
    if text.startswith("-") and "=" in text:
        return text.partition("=")[2]
    return text


def _lora_name(text: str) -> str | None:
    """The name of one `--lora-modules` item: `name=path`, or JSON with a `name` (vllm/entrypoints/openai/
    cli_args.py `LoRAParserAction`)."""
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        name = data.get("name") if isinstance(data, dict) else None
        return name if isinstance(name, str) and name else None
    name, eq, path = text.partition("=")
    return name if eq and name and path else None


def _runtime_lora(invocation: Invocation, ctx: Context) -> bool:
    """VLLM_ALLOW_RUNTIME_LORA_UPDATING on, or set to a value not in the run: adapters may come later."""
    container = invocation.container
    if container is None:
        return True  # a script: its environment is not in the run
    for var in container.resolved_env(ctx.world):
        if var.name != "VLLM_ALLOW_RUNTIME_LORA_UPDATING":
            continue
        if var.origin not in (LITERAL, CONFIG_MAP) or var.value is None:
            return True
        return var.value.strip().lower() in _TRUE
    return False


def served(invocation: Invocation, ctx: Context) -> Served | None:
    """The names a vLLM server answers to, or None when they are not all known."""
    if invocation.kind == DEMO_API_SERVER or invocation.container is None:
        return None  # the demo server's /generate takes no model name
    if any(t.dynamic for t in invocation.tokens) or invocation.option("--config"):
        return None  # `$(ARGS)`, `"$@"` or a config file may name other models
    if _runtime_lora(invocation, ctx):
        return None
    names_tokens = _flag_values(invocation, "--served-model-name")
    if names_tokens is None:
        return None
    names = [_value_text(t, "--served-model-name") for t in names_tokens]
    if not names:
        model = invocation.model
        if model is None or model.dynamic:
            return None  # the release's default model: not judged
        models = invocation.option("--model")
        if models and invocation.model_positionals and models[-1].value != invocation.model_positionals[0].text:
            return None  # `vllm serve A --model B`: which one wins depends on the release
        names = [model.text]
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
        yield ctx.finding(node, f"The AIBrix label `{_AIBRIX_LABEL}: {value}` sends requests for model `{value}` "
                          f"to this pod, but vLLM here serves only {_describe(servers)}: every request through "
                          f"the AIBrix gateway gets 404 \"The model `{value}` does not exist\". Add "
                          f"`--served-model-name {value}`, or change the label to a name vLLM serves.",
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
            yield ctx.finding(node, f"`{name}` is {role} {model.kind} {model.name}, whose InferencePool {pool.name} "
                              f"selects vLLM pods that serve only {_describe(servers)}: requests routed to it "
                              f"get 404 \"The model `{name}` does not exist\". Serve it (`--served-model-name`, "
                              "`--lora-modules`), or name a model the pool serves.",
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
                        yield ctx.finding(value_node, f"HTTPRoute {route.name} sends requests for model `{name}` to "
                                          f"InferencePool {pool.name}, whose vLLM pods serve only "
                                          f"{_describe(servers)}: the request keeps its model name and gets 404 "
                                          f"\"The model `{name}` does not exist\". Serve it (`--served-model-name`, "
                                          "`--lora-modules`), or match the name the pool serves.",
                                          about=route, value=f"{route.name}:{name}")


# --- vLLM's benchmark client -----------------------------------------------------------------------------
def _bench_argv(words: list[str]) -> int | None:
    """Index of the first argument of `vllm bench serve` / `python .../benchmark_serving.py`."""
    if len(words) >= 3 and words[0].rsplit("/", 1)[-1] == "vllm" and words[1] == "bench" and words[2] == "serve":
        return 3
    if words and words[0].rsplit("/", 1)[-1].startswith("python"):
        for i, word in enumerate(words[1:3], start=1):
            if word.rsplit("/", 1)[-1] == "benchmark_serving.py":
                return i + 1
    return None


def _options(tokens: list[Token]) -> dict[str, list[Token]] | None:
    """flag -> value tokens (nargs '+' words follow), None when a token is dynamic."""
    result: dict[str, list[Token]] = {}
    current: str | None = None
    for token in tokens:
        if token.dynamic:
            return None
        if token.text.startswith("--"):
            name, eq, _ = token.text.partition("=")
            current = name.replace("_", "-")
            result.setdefault(current, [])
            if eq:
                result[current].append(token)
                current = None
        elif current is not None:
            result[current].append(token)
    return result


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
            yield ctx.finding(token, f"The benchmark client asks for model `{name}`, but the vLLM server it sends "
                              f"to ({target[2]}) serves only {_describe(servers)}: every request gets 404 "
                              f"\"The model `{name}` does not exist\". Pass `--served-model-name` with a name the "
                              "server serves (the client's `--model` is also its tokenizer).",
                              about=container, value=f"{target[2]}:{name}")


def _first_value(options: dict[str, list[Token]], flag: str) -> Token | None:
    values = options.get(flag)
    return values[0] if values else None


def _text(token: Token, flag: str) -> str:
    return _value_text(token, flag)


def _bench_asked(options: dict[str, list[Token]]) -> list[tuple[str, Token]]:
    """The model names the client puts in its requests (vllm/benchmarks/serve.py): its `--lora-modules`
    names when given (one at random per request), else `--served-model-name`, else `--model`."""
    loras = options.get("--lora-modules")
    if loras:
        return [(_text(t, "--lora-modules"), t) for t in loras]
    for flag in ("--served-model-name", "--model"):
        token = _first_value(options, flag)
        if token is not None:
            text = _text(token, flag)
            return [(text, token)] if text else []
        if flag in options:
            return []  # written without a value
    return []


_BENCH_ENDPOINT = "/v1/completions"  # `--endpoint`'s default (vllm/benchmarks/serve.py:719 in 0.10.1.1, :1666 in 0.33.0)


def _bench_target(options: dict[str, list[Token]]) -> tuple[str, int, str, str] | None:
    """(host, port, as written, request path) the client sends to: `--base-url`, else `--host` (127.0.0.1) and
    `--port` (8000); the path is the base URL's path followed by `--endpoint`."""
    endpoint_token = _first_value(options, "--endpoint")
    endpoint = _text(endpoint_token, "--endpoint") if endpoint_token is not None else _BENCH_ENDPOINT
    if "--endpoint" in options and endpoint_token is None:
        return None
    base = _first_value(options, "--base-url")
    if base is not None:
        text = _text(base, "--base-url")
        try:
            url = urlsplit(text)
            port = url.port
        except ValueError:
            return None
        if url.scheme not in ("http", "https") or not url.hostname:
            return None
        return url.hostname, port or (443 if url.scheme == "https" else 80), text, url.path.rstrip("/") + endpoint
    host_token = _first_value(options, "--host")
    port_token = _first_value(options, "--port")
    host = _text(host_token, "--host") if host_token is not None else "127.0.0.1"
    port = digits_int(_text(port_token, "--port")) if port_token is not None else 8000
    if port is None or not host:
        return None
    return host, port, f"{host}:{port}", endpoint


def _servers_at(ctx: Context, client, host: str, port: int, cache: dict) -> list[Served] | None:
    """The vLLM servers that certainly answer `host:port` from the client's pod, or None."""
    if host in _LOCAL_HOSTS:
        found = _template_servers(ctx, client.pod, cache)
        if found is None:
            return None
        at_port = [s for s in found if s.port == port]
        return at_port or None
    parts = host.rstrip(".").split(".")
    if len(parts) == 1:
        name, namespace = parts[0], client.pod.namespace
    elif len(parts) == 2 or len(parts) >= 3 and parts[2] == "svc" and (len(parts) == 3 or parts[3:] == ["cluster", "local"]):
        name, namespace = parts[0], parts[1]
    else:
        return None  # an external host, or another cluster domain: not judged
    service = ctx.world.find("Service", name, namespace)
    if service is None or service.spec is None:
        return None
    if len(parts) > 1 and (service.namespace or client.pod.namespace) != namespace:
        return None  # `name.other` may be a public domain: only a namespace the run states links it
    selector = service_selector(service)
    if not isinstance(selector, Mapping) or not selector.items:
        return None  # no selector: the endpoints are managed elsewhere
    target = next((p for p in service_ports(service) if p.port == port and p.protocol == "TCP"), None)
    if target is None:
        return None
    result: list[Served] = []
    for template in ctx.world.selected_templates(selector, service.namespace):
        found = _template_servers(ctx, template, cache)
        if found is None:
            return None  # a selected pod that is not (known) vLLM
        number, _ = resolve_port(template, target.target)
        if number is None:
            return None
        at_port = [s for s in found if s.port == number]
        if not at_port:
            return None  # the port goes to something else in the pod
        result.extend(at_port)
    return result or None



# --- curl with an OpenAI request body -------------------------------------------------------------------
_CURL_DATA = ("-d", "--data", "--data-raw", "--data-binary", "--json")


def _curl_request(tokens: list[Token]) -> tuple[str, str, Token] | None:
    """(url, model, the token holding the body) of `curl URL -d '{"model": ...}'`, or None."""
    url = body = None
    i = 1
    while i < len(tokens):
        token = tokens[i]
        text = token.text
        if token.dynamic:
            return None
        if text in _CURL_DATA and i + 1 < len(tokens):
            body = tokens[i + 1]
            i += 2
            continue
        if text == "--url" and i + 1 < len(tokens):
            url = tokens[i + 1].text
            i += 2
            continue
        if text.startswith(("http://", "https://")):
            if url is not None:
                return None  # several URLs: which one gets the body is not judged
            url = text
        i += 1
    if url is None or body is None or body.dynamic or body.text.startswith("@"):
        return None
    try:
        data = json.loads(body.text)
    except ValueError:
        return None
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, str) or not model or "$" in model:
        return None
    return url, model, body


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
        yield ctx.finding(body, f"This request asks for model `{model}`, but the vLLM server at {url_text} serves "
                          f"only {_describe(servers)}: it gets 404 \"The model `{model}` does not exist\". Ask for "
                          "a name the server serves.", about=container, value=f"{url.hostname}:{model}")


__all__ = ["served", "Served"]
