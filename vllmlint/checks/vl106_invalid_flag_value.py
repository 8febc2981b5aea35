"""VL106: a flag value the target release's parser or config validation rejects.

The release catalog is a JSON Schema (`schemas/vllm/<version>.json`): each option is a property with
its type, enforced choices (`enum`) and range. The known values of an invocation become one instance
{option name: typed value}, validated against that schema; each error goes back to the value's token.
What the schema cannot say (a value given to a switch, JSON that does not parse, JSON keys and methods,
values vLLM knows but does not enforce at parse time) is checked from the options' `x-vllm` data.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, Iterator

from vllmlint.finding import Finding, Severity
from vllmlint.vllm.catalog import OptionSpec
from vllmlint.vllm.flags import JSON_ONLY_PARSERS, OK, is_key_value_text
from vllmlint.vllm.invocation import Invocation, Option, Token
from vllmlint.checks import Context
from vllmlint.checks.messages import value_of, version_label
from vllmlint.lazyre import lazy_compile

# vLLM's `human_readable_int` (vllm/utils/argparse_utils.py, 0.10+): 25.6k, 1K, 2M, 8G.
_HUMAN_INT = re.compile(r"^(\d+(?:\.\d+)?)([kKmMgGtT])$")
_MULTIPLIER = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_TRUTHY = {"true", "false", "yes", "no", "on", "off", "1", "0"}


@lru_cache(maxsize=None)
def _validator(version: str) -> Any:
    import jsonschema  # only when this rule runs: the import costs ~50 ms

    from vllmlint.vllm import catalog

    schema = catalog.load(version).schema
    return jsonschema.validators.validator_for(schema)(schema)


_PLAIN_KEYWORDS = {"type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "x-vllm"}
_PLAIN_TYPES = {"integer": (int,), "number": (int, float), "string": (str,)}


def _plainly_valid(prop: Any, value: Any) -> bool:
    """True only when a property schema made of plain keywords obviously accepts the value; anything
    else (other keywords, a doubt) goes to jsonschema, which has the last word."""
    if isinstance(prop, dict) and prop.get("type") == "array" and isinstance(value, list):
        items = prop.get("items")
        return set(prop) <= _PLAIN_KEYWORDS | {"items"} and all(_plainly_valid(items, v) for v in value)
    if not isinstance(prop, dict) or not set(prop) <= _PLAIN_KEYWORDS:
        return False
    kind = prop.get("type")
    kinds = _PLAIN_TYPES.get(kind) if isinstance(kind, str) else None
    if "type" in prop and (kinds is None or isinstance(value, bool) or not isinstance(value, kinds)):
        return False
    if "enum" in prop and value not in prop["enum"]:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in prop and not value >= prop["minimum"]:
            return False
        if "maximum" in prop and not value <= prop["maximum"]:
            return False
        if "exclusiveMinimum" in prop and not value > prop["exclusiveMinimum"]:
            return False
        if "exclusiveMaximum" in prop and not value < prop["exclusiveMaximum"]:
            return False
    elif any(k in prop for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return False
    return True


def _typed(option: OptionSpec, text: str) -> Any:
    """The value as argparse hands it to vLLM; the text itself when it does not convert (the schema
    then reports the type). None for values vLLM reads as None ("None", "")."""
    if text in ("None", ""):
        return None
    kind = option.type
    if kind == "int":
        match = _HUMAN_INT.match(text.strip())
        if match:
            return int(float(match.group(1)) * _MULTIPLIER[match.group(2)])
        if text.strip().lower() == "auto" and option.name == "max-model-len":
            return -1
        try:
            return int(text)
        except ValueError:
            return text
    if kind == "float":
        try:
            number = float(text)
        except ValueError:
            return text
        return number if math.isfinite(number) else text  # `nan`/`inf` are not a number vLLM can use
    if kind == "json":
        return None  # checked separately: its own parse errors and keys
    if kind in ("str",):
        return text
    return None


def _open_json(ctx: Context) -> set[str]:
    data = ctx.rule.data if isinstance(ctx.rule.data, dict) else {}
    return {entry["option"] for entry in data.get("open_json", [])}


def _describe_range(prop: dict[str, Any]) -> str:
    low = "" if prop.get("minimum") is None else f">= {prop['minimum']}"
    low = low or ("" if prop.get("exclusiveMinimum") is None else f"> {prop['exclusiveMinimum']}")
    high = "" if prop.get("maximum") is None else f"<= {prop['maximum']}"
    high = high or ("" if prop.get("exclusiveMaximum") is None else f"< {prop['exclusiveMaximum']}")
    return " and ".join(p for p in (low, high) if p)


def _schema_message(error: Any, option: Option, release_text: str, via: str = "") -> str:
    prop = error.schema if isinstance(error.schema, dict) else {}
    shown = f"`{option.name} {option.value}`" if not option.inline else f"`{option.token.text}`"
    if error.validator == "enum":
        choices = ", ".join(str(c) for c in error.validator_value)
        import difflib  # here, not at start-up: only a near miss needs it
        near = difflib.get_close_matches(str(error.instance), [str(c) for c in error.validator_value], n=1)
        hint = f" Did you mean `{near[0]}`?" if near else ""
        return (f"{shown}: `{error.instance}` is not one of the choices of {release_text}: {choices}. "
                f"argparse exits with \"invalid choice\".{hint}")
    if error.validator == "type":
        wanted = {"integer": "an integer", "number": "a number", "string": "a string",
                  "boolean": "a boolean"}.get(str(error.validator_value), str(error.validator_value))
        number = _go_float_integer(str(error.instance)) if via == "chart-values" else None
        if number is not None:
            # A chart's values file (vllm.helm_values): Helm reads its numbers as float64, and a template prints
            # `1000000` the way Go prints a float64, `1e+06`.
            return (f"{shown}: quote the number in the values file (`\"{number}\"`). Helm reads every number of "
                    f"a values file as a float64, and the chart's template prints {number} the way Go prints one, "
                    f"`{error.instance}`, which is not {wanted}: vLLM's argument parser exits with an invalid-value "
                    "error before the server starts (helm/helm#12195). A quoted value is printed as written.")
        return (f"{shown}: give {wanted}. `{error.instance}` is not {wanted}, so vLLM's argument parser exits "
                "with an invalid-value error before the server starts, and the container restarts in a loop.")
    if error.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return (f"{shown} is out of range: {release_text} accepts values {_describe_range(prop)}, and "
                f"refuses to start otherwise. {_help_hint(option)}").rstrip()
    return f"{shown}: {error.message} ({release_text})."


def _go_float_integer(text: str) -> int | None:
    """The whole number Go's `%v` of a float64 wrote in exponent form (`1e+06` -> 1000000), or None."""
    mantissa, e, exponent = text.partition("e+")
    if not e or not exponent.isdigit() or not mantissa.replace(".", "", 1).isdigit():
        return None
    number = float(text)
    return int(number) if number.is_integer() and number < 1e18 else None


def _help_hint(option: Option) -> str:
    help_text = (option.spec.help if option.spec is not None else "") or ""
    return f"vLLM's help: \"{help_text}\"" if help_text else ""


def check(ctx: Context) -> Iterator[Finding | None]:
    open_json = _open_json(ctx)
    for invocation in ctx.world.invocations:
        release_catalog = invocation.catalog
        release_text = f"vLLM {version_label(invocation)}"
        # argparse converts every occurrence of a repeated flag: one instance per repetition.
        instances: list[dict[str, tuple[Any, Option]]] = []
        positionals = {id(t) for t in invocation.positionals}
        next_tokens: dict[int, Token] | None = None  # made when the first switch needs it
        for option in invocation.options:
            known = option.spec
            if known is None or option.status is None or option.status.kind != OK or known.positional:
                continue
            if not known.takes_value:
                if next_tokens is None:
                    next_tokens = _next_tokens(invocation)
                yield from _switch_value(ctx, invocation, option, known, positionals, next_tokens)
                continue
            if value_of(option) != option.value:
                continue  # `-O3`: the level is part of the flag (argparse-side, vLLM rewrites it to a number)
            if option.value is None and option.next_flag is not None:
                if known.nargs not in ("?", "*"):  # argparse leaves a following flag alone for nargs="?"
                    yield ctx.finding(option.token, f"`{option.name}` expects a value but is followed by the flag "
                                      f"`{option.next_flag}`: argparse exits with \"expected one argument\".",
                                      about=invocation, value=known.name)
                continue
            if option.value is None:
                if known.nargs not in ("?", "*") and option.resolution is not None \
                        and option.resolution.value is None:
                    yield ctx.finding(option.token, f"`{option.name}` expects a value and none follows: argparse "
                                      "exits with \"expected one argument\".", about=invocation, value=known.name)
                continue
            if not option.value_known or "$" in option.value:
                continue  # `$VAR`: the value is not known here
            if not option.inline and re.match(r"^--?[A-Za-z]", option.value):
                if known.nargs != "?":  # argparse leaves a following flag alone for nargs="?"
                    yield ctx.finding(option.token, f"`{option.name}` expects a value but is followed by the flag "
                                      f"`{option.value}`: argparse exits with \"expected one argument\".",
                                      about=invocation, value=known.name)
                continue
            if known.json:
                yield from _json_value(ctx, invocation, option, known, open_json, release_text)
                continue
            if known.type == "bool" and option.value.lower() not in ("true", "false"):
                # vLLM's old StoreBoolean action (0.6.x, nargs="?") takes only true/false, any case.
                yield ctx.finding(option.value_token or option.token, f"`{option.name}` takes `true` or `false` in "
                                  f"{release_text}, not `{option.value}`: vLLM raises \"Invalid boolean value\".",
                                  about=invocation, value=f"{known.name}={option.value}")
                continue
            if known.nargs in ("+", "*"):
                # argparse applies `type` to each word of an nargs='+' list (vLLM's get_kwargs: a list[int]
                # field gets type=int, nargs="+"; 0.9.2 vllm/engine/arg_utils.py lines 241-242, 0.11.1 line 194).
                items = _list_items(option)
                if items is None:
                    continue
                typed = [_typed(known, text) for text, _ in items]
                if any(item is None for item in typed):
                    continue
            else:
                typed = _typed(known, option.value)
                if typed is None:
                    continue
            if isinstance(typed, str) and typed in invocation.plugin_values.get(option.canonical, ()):
                continue  # a value the image's vendor plugin registers (data/image-entrypoints.yaml)
            layer = next((i for i in instances if known.name not in i), None)
            if layer is None:
                layer = {}
                instances.append(layer)
            layer[known.name] = (typed, option)
            if known.known_values and not known.choices_enforced and isinstance(typed, str) \
                    and typed not in known.known_values:
                yield _unknown_value(ctx, invocation, option, known, release_text)
        for layer in instances:
            instance = {name: typed for name, (typed, _) in layer.items()}
            properties = release_catalog.schema["properties"]
            if all(_plainly_valid(properties.get(name), value) for name, value in instance.items()):
                continue  # the usual case; importing jsonschema costs more than linting a file
            for error in _validator(release_catalog.version).iter_errors(instance):
                if not error.path or error.path[0] not in layer:
                    continue
                option = layer[error.path[0]][1]
                where = option.value_token or option.token
                if len(error.path) > 1 and isinstance(error.path[1], int):
                    items = _list_items(option) or []
                    where = items[error.path[1]][1] if error.path[1] < len(items) else where
                yield ctx.finding(where, _schema_message(error, option, release_text, invocation.via),
                                  about=invocation, value=f"{option.canonical}={option.value}")


def _list_items(option: Option) -> list[tuple[str, Token]] | None:
    """(text, token) of each item of an nargs='+' option's list (`--flag=1` is one item, its token the whole
    `--flag=1`); None when one is not known here (`$VAR`)."""
    if option.value is None or option.value_token is None:
        return None
    if option.inline:
        return [(option.value, option.value_token)]
    words = [option.value_token, *option.extra_values]
    if any(word.dynamic or "$" in word.text for word in words):
        return None
    return [(word.text, word) for word in words]


def _switch_value(ctx: Context, invocation: Invocation, option: Option, known: OptionSpec,
                  positionals: set[int], next_tokens: dict[int, Token]) -> Iterator[Finding | None]:
    """`--enable-chunked-prefill=false`, or `--enable-chunked-prefill false` (the word becomes a positional)."""
    negative = [f for f in known.flags if f.startswith("--no-")]
    off = f" or `{negative[0]}` to turn it off" if negative else ""
    if option.inline:
        yield ctx.finding(option.token, f"`{option.name}` is a switch and takes no value, so `{option.token.text}` "
                          f"stops vLLM with \"ignored explicit argument '{option.value}'\": write `{option.name}`"
                          f"{off}.", about=invocation, value=option.token.text)
        return
    following = next_tokens.get(id(option.token))
    if following is not None and id(following) in positionals and following.text.lower() in _TRUTHY:
        yield ctx.finding(following, f"`{option.name}` is a switch and takes no value: `{following.text}` "
                          "after it is read as a stray positional argument (\"unrecognized arguments\", or "
                          f"taken as the model): drop `{following.text}`{off}.",
                          about=invocation, value=f"{option.name} {following.text}")


def _next_tokens(invocation: Invocation) -> dict[int, Token]:
    """id(token) -> the token after it in the command (the first occurrence of a token object), made once per
    invocation: a scan of the command per switch is quadratic when one is repeated thousands of times."""
    tokens = invocation.tokens
    following: dict[int, Token] = {}
    for i in range(len(tokens) - 1):
        following.setdefault(id(tokens[i]), tokens[i + 1])
    return following


def _unknown_value(ctx: Context, invocation: Invocation, option: Option, known: OptionSpec,
                   release_text: str) -> Finding | None:
    value = option.value or ""
    known_values = [str(v) for v in known.known_values or ()]
    import difflib  # here, not at start-up: only a near miss needs it
    near = difflib.get_close_matches(value, known_values, n=1)
    hint = f" Did you mean `{near[0]}`?" if near else ""
    return ctx.finding(option.value_token or option.token,
                       f"`{option.name} {option.value}`: `{option.value}` is not among the values {release_text} "
                       f"knows: use one of {', '.join(known_values)}; vLLM checks it at start-up and fails unless a "
                       f"plugin registers it.{hint}", about=invocation, value=f"{known.name}={option.value}",
                       severity=min(ctx.severity, Severity.WARNING))


def _json_value(ctx: Context, invocation: Invocation, option: Option, known: OptionSpec, open_json: set[str],
                release_text: str) -> Iterator[Finding | None]:
    path = option.resolution.json_path if option.resolution is not None else ()
    where = option.value_token or option.token
    keys: dict[str, Any]
    if path:  # --speculative-config.method ngram
        keys = {path[0]: option.value}
    else:
        text = (option.value or "").strip()
        if not text.startswith(("{", "[")):
            # a plain string (a path, a name): vLLM accepts it where the option also takes a string
            yield from _not_json(ctx, invocation, option, known, text, release_text)
            return
        import json  # here, not at start-up: only some inputs need it

        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            yield ctx.finding(where, f"`{option.name}` is not valid JSON ({exc.msg} at character {exc.pos}), so "
                              "vLLM's parser exits: quote the whole JSON as one argument, with double-quoted keys.",
                              about=invocation, value=known.name)
            return
        if not isinstance(value, dict):
            return
        keys = value
    if known.name in open_json or not known.json_keys:
        return
    for key, value in keys.items():
        if key not in known.json_keys:
            import difflib  # here, not at start-up: only a near miss needs it
            near = difflib.get_close_matches(key, known.json_keys, n=1)
            hint = f" Did you mean `{near[0]}`?" if near else ""
            yield ctx.finding(where, f"`{option.name}` has key `{key}`, which {release_text} does not know: its "
                              f"config class rejects unknown keys at start-up.{hint}", about=invocation,
                              value=f"{known.name}.{key}")
            continue
        allowed = known.json_key_values.get(key)
        if allowed and isinstance(value, str) and value not in allowed:
            import difflib  # here, not at start-up: only a near miss needs it
            near = difflib.get_close_matches(value, allowed, n=1)
            hint = f" Did you mean `{near[0]}`?" if near else ""
            yield ctx.finding(where, f"`{option.name}` sets `{key}` to `{value}`, which {release_text} does not "
                              f"accept: use one of {', '.join(allowed)}.{hint}", about=invocation,
                              value=f"{known.name}.{key}={value}")


# Text that starts like `key=value`: `json-or-kvs` parsers (0.8.x-0.9.x nullable_kvs fallback) may take it.
_KEY_VALUE = lazy_compile(r"^[A-Za-z_][\w.-]*=")
# Parsers that reject text that is not JSON (sync's `x-vllm.json_parser`): `json.loads` or a pydantic
# validate_json (`json`), get_kwargs' parse_dataclass (`dataclass`), and parse_type(json.loads) of
# 0.8.x-0.9.x, which also takes `key=value` pairs (`json-or-kvs`). `dict-or-str` (union_dict_and_str)
# keeps any other text as a string; `from-cli` and `unknown` may accept more.
_STRICT = {"json": "with `json.loads`", "dataclass": "as JSON",
           "json-or-kvs": "as JSON or as `key=value` pairs"}


def _not_json(ctx: Context, invocation: Invocation, option: Option, known: OptionSpec, text: str,
              release_text: str) -> Iterator[Finding | None]:
    """`--speculative-config notjson`: text a JSON-only option cannot parse."""
    how = _STRICT.get(known.json_parser)
    if how is None or text in ("", "None") or is_key_value_text(text) or re.match(r"^<.*>$", text):
        return  # `None` is no value (optional_type); `<json>` a placeholder; `key=value[,...]` on a JSON-only
        # parser is malformed-argv's (VL714 reports exactly this text, vllmlint.vllm.flags.is_key_value_text)
    if known.json_parser not in JSON_ONLY_PARSERS and _KEY_VALUE.match(text):
        return  # `json-or-kvs`: the old form may still be converted
    if known.json_parser == "dataclass" and text.isdigit():
        return  # CompilationConfig.from_cli: a bare optimization level
    import json  # here, not at start-up: only some inputs need it

    try:
        json.loads(text)
    except ValueError:
        pass
    else:
        return  # a JSON number, string or literal: parsed; what the config makes of it is checked later
    where = option.value_token or option.token
    yield ctx.finding(where, f"`{option.name} {text}`: {release_text} parses this value {how}, and `{text}` is not "
                      "JSON, so its parser exits with an invalid-value error. Give a JSON object quoted as one "
                      "argument (`'{\"key\": \"value\"}'`).", about=invocation, value=f"{known.name}:not-json")
