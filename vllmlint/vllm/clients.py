"""Who sends requests to which vLLM server: the links between clients and servers that are certain.

Shared by served-name-mismatch (VL719) and chat-template-missing (VL711), so both link a client to a
server the same way:
- `reached_templates()`: the pod templates (and container ports) that `host:port` certainly reaches from a
  client: localhost in the client's own pod, or a Service of the run (its short name, `name.namespace` or
  `name.namespace.svc[.cluster.local]`) with a selector that selects pods of the run and a port that
  resolves to a container port;
- vLLM's benchmark client (`vllm bench serve`, `benchmark_serving.py`): its target and the model names it
  asks for (vllm/benchmarks/serve.py in 0.10.1.1);
- `curl URL -d '{"model": ...}'`: the URL and the model of the request body;
- `runtime_lora()`: VLLM_ALLOW_RUNTIME_LORA_UPDATING on (or unknown), so adapters may be loaded later.
"""
from __future__ import annotations


from vllmlint.k8s.objects import PodTemplate
from vllmlint.k8s.pod import CONFIG_MAP, LITERAL
from vllmlint.k8s.quantity import digits_int
from vllmlint.k8s.services import resolve_port, service_ports, service_selector
from vllmlint.source.yamlmodel import Mapping
from vllmlint.vllm.invocation import Invocation, Token

_TRUE = ("1", "true")  # vllm/envs.py: os.environ.get("VLLM_ALLOW_RUNTIME_LORA_UPDATING", "0").strip().lower() in ("1", "true")
LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]")
_CURL_DATA = ("-d", "--data", "--data-raw", "--data-binary", "--json")


def value_text(token: Token, flag: str) -> str:
    """A value token's text; for `--flag=value` the part after `=`."""
    text = token.text
    if text.startswith("-") and "=" in text:
        return text.partition("=")[2]
    return text


def runtime_lora(invocation: Invocation, world) -> bool:
    """VLLM_ALLOW_RUNTIME_LORA_UPDATING on, or set to a value not in the run: adapters may come later."""
    container = invocation.container
    if container is None:
        return True  # a script: its environment is not in the run
    for var in container.resolved_env(world):
        if var.name != "VLLM_ALLOW_RUNTIME_LORA_UPDATING":
            continue
        if var.origin not in (LITERAL, CONFIG_MAP) or var.value is None:
            return True
        return var.value.strip().lower() in _TRUE
    return False


def bench_argv(words: list[str]) -> int | None:
    """Index of the first argument of `vllm bench serve` / `python .../benchmark_serving.py`."""
    if len(words) >= 3 and words[0].rsplit("/", 1)[-1] == "vllm" and words[1] == "bench" and words[2] == "serve":
        return 3
    if words and words[0].rsplit("/", 1)[-1].startswith("python"):
        for i, word in enumerate(words[1:3], start=1):
            if word.rsplit("/", 1)[-1] == "benchmark_serving.py":
                return i + 1
    return None


def bench_options(tokens: list[Token]) -> dict[str, list[Token]] | None:
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


def first_value(options: dict[str, list[Token]], flag: str) -> Token | None:
    values = options.get(flag)
    return values[0] if values else None


def bench_asked(options: dict[str, list[Token]]) -> list[tuple[str, Token]]:
    """The model names the client puts in its requests (vllm/benchmarks/serve.py): its `--lora-modules`
    names when given (one at random per request), else `--served-model-name`, else `--model`."""
    loras = options.get("--lora-modules")
    if loras:
        return [(value_text(t, "--lora-modules"), t) for t in loras]
    for flag in ("--served-model-name", "--model"):
        token = first_value(options, flag)
        if token is not None:
            text = value_text(token, flag)
            return [(text, token)] if text else []
        if flag in options:
            return []  # written without a value
    return []


BENCH_ENDPOINT = "/v1/completions"  # `--endpoint`'s default (vllm/benchmarks/serve.py:719 in 0.10.1.1, :1666 in 0.33.0)


def bench_target(options: dict[str, list[Token]]) -> tuple[str, int, str, str] | None:
    """(host, port, as written, request path) the client sends to: `--base-url`, else `--host` (127.0.0.1) and
    `--port` (8000); the path is the base URL's path followed by `--endpoint` (default /v1/completions)."""
    endpoint_token = first_value(options, "--endpoint")
    if "--endpoint" in options and endpoint_token is None:
        return None
    endpoint = value_text(endpoint_token, "--endpoint") if endpoint_token is not None else BENCH_ENDPOINT
    base = first_value(options, "--base-url")
    if base is not None:
        text = value_text(base, "--base-url")
        target = url_target(text)
        if target is None:
            return None
        from urllib.parse import urlsplit  # here: importing urllib.parse is 2 ms of a one-file run

        return target[0], target[1], text, urlsplit(text).path.rstrip("/") + endpoint
    host_token = first_value(options, "--host")
    port_token = first_value(options, "--port")
    host = value_text(host_token, "--host") if host_token is not None else "127.0.0.1"
    port = digits_int(value_text(port_token, "--port")) if port_token is not None else 8000
    if port is None or not host:
        return None
    return host, port, f"{host}:{port}", endpoint


def curl_request(tokens: list[Token]) -> tuple[str, str, Token] | None:
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
    import json  # here, not at start-up: only some inputs need it

    try:
        data = json.loads(body.text)
    except ValueError:
        return None
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, str) or not model or "$" in model:
        return None
    return url, model, body


def flag_values(invocation: Invocation, flag: str) -> list[Token] | None:
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


def served_names(invocation: Invocation) -> list[str] | None:
    """The model names a vLLM server answers to besides its LoRA adapters: `--served-model-name`, else
    the model (vllm/config.py `served_model_name`); None when not all known."""
    if any(t.dynamic for t in invocation.tokens) or invocation.option("--config"):
        return None  # `$(ARGS)`, `"$@"` or a config file may name other models
    names_tokens = flag_values(invocation, "--served-model-name")
    if names_tokens is None:
        return None
    names = [value_text(t, "--served-model-name") for t in names_tokens]
    if not names:
        model = invocation.model
        if model is None or model.dynamic:
            return None  # the release's default model: not judged
        models = invocation.option("--model")
        if models and invocation.model_positionals and models[-1].value != invocation.model_positionals[0].text:
            return None  # `vllm serve A --model B`: which one wins depends on the release
        names = [invocation.model_name or model.text]
    return names


def reached_templates(world, namespace: str, local: PodTemplate | None, host: str,
                      port: int) -> list[tuple[PodTemplate, int]] | None:
    """(pod template, container port) pairs that `host:port` certainly reaches from a client in `namespace`
    (`local`: the client's own pod, which localhost reaches; None when not known), or None when not certain:
    an external host, a Service not in the run or without selector, a port no Service port names."""
    if host in LOCAL_HOSTS:
        return [(local, port)] if local is not None else None
    parts = host.rstrip(".").split(".")
    if len(parts) == 1:
        name, wanted = parts[0], namespace
    elif len(parts) == 2 or len(parts) >= 3 and parts[2] == "svc" and (len(parts) == 3 or parts[3:] == ["cluster", "local"]):
        name, wanted = parts[0], parts[1]
    else:
        return None  # an external host, or another cluster domain: not judged
    service = world.find("Service", name, wanted)
    if service is None or service.spec is None:
        return None
    if len(parts) > 1 and (service.namespace or namespace) != wanted:
        return None  # `name.other` may be a public domain: only a namespace the run states links it
    selector = service_selector(service)
    if not isinstance(selector, Mapping) or not selector.items:
        return None  # no selector: the endpoints are managed elsewhere
    target = next((p for p in service_ports(service) if p.port == port and p.protocol == "TCP"), None)
    if target is None:
        return None
    result: list[tuple[PodTemplate, int]] = []
    for template in world.selected_templates(selector, service.namespace):
        number, _ = resolve_port(template, target.target)
        if number is None:
            return None
        result.append((template, number))
    return result or None


def url_target(text: str) -> tuple[str, int] | None:
    """(host, port) of an http(s) URL, or None (not a URL with a host, or a bad port)."""
    from urllib.parse import urlsplit  # here: importing urllib.parse is 2 ms of a one-file run

    try:
        url = urlsplit(text)
        port = url.port
    except ValueError:
        return None
    if url.scheme not in ("http", "https") or not url.hostname:
        return None
    return url.hostname, port or (443 if url.scheme == "https" else 80)


__all__ = ["LOCAL_HOSTS", "bench_argv", "bench_asked", "bench_options", "bench_target", "curl_request",
           "first_value", "flag_values", "reached_templates", "runtime_lora", "served_names", "url_target",
           "value_text"]
