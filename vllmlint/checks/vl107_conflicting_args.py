"""VL107: arguments of one vLLM invocation that contradict each other."""
from __future__ import annotations

from typing import Any, Iterator

from vllmlint.finding import Finding, Severity
from vllmlint.vllm.flags import OK
from vllmlint.vllm.invocation import SERVE, VIA_IMAGE_ENTRYPOINT, Invocation, Option
from vllmlint.vllm.release import version_key
from vllmlint.checks import Context
from vllmlint.checks.messages import release_phrase, value_of, version_label
from vllmlint.checks.model_option import MODEL_OPTION_WARNS_FROM, lone_model_option

# `vllm serve --model X` without a positional model: vllmlint/checks/model_option.py (the releases that
# reject it are reported here, those that only warn by model-option-deprecated, VL112).
# The first release seen whose FlexibleArgumentParser raises on `serve` + a `--model` item (0.8.5 vllm/utils.py
# l.1339; the 0.8.0 parse_args has no such check).
SERVE_MODEL_RAISES_FROM = "0.8.5"


def _effective(option: Option) -> Any:
    """What the option sets, for comparing repetitions; None when unknown."""
    resolution = option.resolution
    known = option.spec
    if resolution is not None and known is not None and not known.takes_value:
        return resolution.implied_value
    if not option.value_known:
        return None
    return value_of(option)


def check(ctx: Context) -> Iterator[Finding | None]:
    for invocation in ctx.world.invocations:
        yield from _repeated(ctx, invocation)
        yield from _model_twice(ctx, invocation)
        yield from _serve_serve(ctx, invocation)
        yield from _kv_bytes_and_utilization(ctx, invocation)
        yield from _batched_below_model_len(ctx, invocation)


def _repeated(ctx: Context, invocation: Invocation) -> Iterator[Finding | None]:
    seen: dict[str, Option] = {}
    for option in invocation.options:
        known = option.spec
        if option.resolution is None or known is None or option.status is None or option.status.kind != OK \
                or option.resolution.json_path:
            continue
        value = _effective(option)
        first = seen.get(known.name)
        if first is None:
            seen[known.name] = option
            continue
        earlier = _effective(first)
        if value is None or earlier is None or value == earlier:
            continue
        shown = lambda o: o.token.text if o.inline or value_of(o) is None or value_of(o) != o.value \
            else f"{o.name} {o.value}"  # noqa: E731
        yield ctx.finding(option.token, f"`{known.canonical_flag}` is given twice with different values "
                          f"(`{shown(first)}` and `{shown(option)}`); the last one wins and the other is silently "
                          "ignored: keep one.", about=invocation, value=known.canonical_flag)


def _model_twice(ctx: Context, invocation: Invocation) -> Iterator[Finding | None]:
    models = invocation.option("--model")
    positionals = invocation.model_positionals
    if invocation.kind != SERVE or positionals and positionals[0].text in ("serve", "vllm"):
        return  # `vllm serve serve`: reported on its own
    if models and positionals:
        given = f"{models[0].name} {models[0].value or ''}".strip() if not models[0].inline else models[0].token.text
        yield ctx.finding(models[0].token, f"The model is given twice: positional `{positionals[0].text}` and "
                          f"`{given}`; `vllm serve` rejects `--model` next to "
                          "a positional model (or ignores one of them on some releases): keep only the positional "
                          "model.", about=invocation, value="--model")
        return
    lone = lone_model_option(invocation)
    if lone is None or not lone[1]:
        return  # accepted with a deprecation warning: model-option-deprecated (VL112)
    option = lone[0]
    model = option.value or "MODEL"
    yield ctx.finding(option.token, f"vLLM {version_label(invocation)} rejects `vllm serve {option.name} ...`: it "
                      f"wants the model as the positional argument. That is {release_phrase(invocation)}. "
                      f"Write `vllm serve {model} ...`.",
                      about=invocation, value="--model")


def _serve_serve(ctx: Context, invocation: Invocation) -> Iterator[Finding | None]:
    """`vllm serve serve MODEL`: the image's entrypoint (or `command`) already says `vllm serve`."""
    if invocation.kind != SERVE:
        return
    positionals = invocation.model_positionals
    if not positionals or positionals[0].text not in ("serve", "vllm"):
        return
    first = positionals[0]
    if first.text == "vllm" and (len(positionals) < 2 or positionals[1].text != "serve"):
        return
    positionals = positionals[1:] if first.text == "serve" else positionals[2:]
    positionals = [first] + positionals
    entry = " ".join(t.text for t in invocation.entry)
    container = invocation.container
    if container is not None and container.is_compose and container.command is None and invocation.entry \
            and all(t.source is None for t in invocation.entry):
        # Compose: `command` (string or list) replaces only the image's CMD; the ENTRYPOINT stays.
        image = f" `{invocation.image.raw}`" if invocation.image is not None else ""
        # What to do on the first line (up to the sentence's end); the rest of the why follows.
        stray = "vllm serve" if first.text == "vllm" else "serve"
        said = f"The image{image} already runs `{entry}` (its entrypoint): drop `{stray}` from `command`. A " \
               "Compose `command` replaces only the image's CMD, so this service runs"
        where = ""
    elif invocation.via == VIA_IMAGE_ENTRYPOINT:
        image = f" `{invocation.image.raw}`" if invocation.image is not None else ""
        said, where = f"The image{image} already runs `{entry}`, so these `args` run", "from `args`, or set `command`"
    else:
        said, where = "This runs", "after `vllm serve`"
    drop = f"Drop `{'vllm serve' if first.text == 'vllm' else 'serve'}` {where}." if where \
        else "Or set `entrypoint` to run something else."
    # `vllm serve` has one positional, `model_tag` (nargs="?", 0.11.1 vllm/entrypoints/openai/cli_args.py
    # l.251-256): the stray word fills it, and argparse reports every further positional and exits.
    rest = positionals[1:]
    target = invocation.release or invocation.catalog.version
    tokens = invocation.tokens
    if version_key(target) >= version_key(MODEL_OPTION_WARNS_FROM):
        model_item = any(t.text == "--model" or t.text.startswith("--model=") for t in tokens)
    elif version_key(target) >= version_key(SERVE_MODEL_RAISES_FROM):
        model_item = any(t.text == "--model" for t in tokens)
    else:  # ServeSubcommand.cmd raises after argparse when --model is set (0.8.0 cli/serve.py l.25-28)
        model_item = bool(invocation.option("--model")) and not rest
    if model_item and version_key(target) < version_key(MODEL_OPTION_WARNS_FROM):
        # 0.8.5-0.11.0 FlexibleArgumentParser.parse_args: argv[1] == "serve" and a `--model` item raise
        # ValueError before argparse (0.8.5 vllm/utils.py l.1339-1344, 0.11.0 vllm/utils/__init__.py
        # l.1857-1861); before 0.8.5 `vllm serve` raises it once argparse is done.
        yield ctx.finding(first, f"{said} `{entry} {first.text} ...` with `--model`: vLLM raises \"ValueError: "
                          "With `vllm serve`, you should provide the model as a positional argument ...\" and "
                          f"exits. {drop}", about=invocation, value=first.text)
        return
    if model_item:
        # 0.11.1+ moves the `--model` value to the front (vllm/utils/argparse_utils.py l.196-227): the
        # stray word then follows the model and is reported.
        rest = [first] + rest
    if rest and not any(t.dynamic for t in rest):
        extra = " ".join(t.text for t in rest)
        yield ctx.finding(first, f"{said} `{entry} {first.text} ...`: `vllm serve` takes one positional model, "
                          f"so argparse stops with \"unrecognized arguments: {extra}\" and vLLM exits. {drop}",
                          about=invocation, value=first.text)
        return
    if rest:
        return  # `$(ARGS)` may be flags only
    yield ctx.finding(first, f"{said} `{entry} {first.text} ...`: vLLM tries to load a model called "
                      f"\"{first.text}\" and fails. {drop}", about=invocation, value=first.text)


def _kv_bytes_and_utilization(ctx: Context, invocation: Invocation) -> Iterator[Finding | None]:
    explicit = invocation.option("--kv-cache-memory-bytes")
    fraction = invocation.option("--gpu-memory-utilization")
    if not explicit or not fraction:
        return
    yield ctx.finding(fraction[-1].token, "`--gpu-memory-utilization` has no effect next to "
                      "`--kv-cache-memory-bytes`: vLLM sizes the KV cache from the byte count and ignores the "
                      "fraction. Keep one of them.", about=invocation, value="--gpu-memory-utilization",
                      severity=min(ctx.severity, Severity.WARNING))


_POOLING_TASKS = {"embed", "embedding", "reward", "classify", "score", "pooling"}


def _chunked_prefill(invocation: Invocation) -> bool | None:
    """What `--enable-chunked-prefill` (`=false`, `--no-...`) asks for; None when not given or unknown."""
    options = [o for o in invocation.option("--enable-chunked-prefill") if o.status is not None
               and o.status.kind == OK]
    if not options:
        return None
    option = options[-1]
    value = _effective(option)
    if isinstance(value, bool):
        return value
    if option.value is None:
        return True  # `--enable-chunked-prefill` (0.6.x StoreBoolean, nargs="?")
    if not option.value_known:
        return None
    text = option.value.strip().lower()
    return True if text == "true" else False if text == "false" else None


def _period(ctx: Context, release: str) -> dict[str, Any] | None:
    data = ctx.rule.data if isinstance(ctx.rule.data, dict) else {}
    key = version_key(release)
    for period in data.get("chunked_prefill", []):
        if version_key(str(period["from"])) <= key and ("before" not in period
                                                        or key < version_key(str(period["before"]))):
            return period
    return None


def _batched_below_model_len(ctx: Context, invocation: Invocation) -> Iterator[Finding | None]:
    """`--max-num-batched-tokens` below `--max-model-len` with chunked prefill off: SchedulerConfig
    raises "max_num_batched_tokens (N) is smaller than max_model_len (M)" at start-up."""
    from vllmlint.capacity.workload import human_int

    batched, length = invocation.option("--max-num-batched-tokens"), invocation.option("--max-model-len")
    if not batched or not length:
        return
    if not batched[-1].value_known or not length[-1].value_known:
        return
    tokens, model_len = human_int(batched[-1].value or ""), human_int(length[-1].value or "")
    if tokens is None or model_len is None or tokens >= model_len:
        return
    tasks = {o.value for o in invocation.option("--task", "--runner", "--convert") if o.value}
    if tasks & _POOLING_TASKS:
        return  # pooling models: the default differs per model (bidirectional attention, pooling type)
    release = invocation.release or invocation.catalog.version
    period = _period(ctx, release)
    if period is None:
        return
    chunked = _chunked_prefill(invocation)
    env = invocation.container.env if invocation.container is not None else {}
    default = period["default"]
    if default == "forced-on" and period.get("v0_env") and "=" in str(period["v0_env"]):
        name, _, value = str(period["v0_env"]).partition("=")
        if env.get(name) == value:
            default = "off"  # the V0 engine, chosen by the environment (VLLM_USE_V1=0)
    if chunked is True or default == "forced-on":
        return  # on, or forced on by the V1 engine whatever the flag says
    if chunked is None:
        if default == "on":
            return
        # V0 ("off"): on by default above 32K tokens for most CUDA models; in 0.7.x VLLM_USE_V1=1 forces it
        # on (an unknown value: silent).
        if model_len > int(period.get("on_above", 32768)):
            return
        use_v1 = env.get("VLLM_USE_V1", "0") if "VLLM_USE_V1" in env else "0"
        if use_v1 is None or use_v1.strip() == "1":
            return
        why = f"{release_phrase(invocation)} leaves chunked prefill off by default at this length"
    else:
        why = "chunked prefill is turned off"
    option = batched[-1]
    yield ctx.finding(option.value_token or option.token,
                      f"Raise `--max-num-batched-tokens {option.value}` to at least `--max-model-len "
                      f"{length[-1].value}`: it is below it and {why}, and vLLM refuses to start "
                      f"(\"max_num_batched_tokens ({tokens}) is smaller than "
                      f"max_model_len ({model_len})\"). Or lower `--max-model-len`, or enable chunked prefill "
                      "(`--enable-chunked-prefill`).",
                      about=invocation, value=f"batched<{model_len}")
