"""VL714: argv items that Kubernetes passes to vLLM as written but that only a shell would split.

Kubernetes (and Compose list form) runs `command` + `args` with no shell: each list item is one argv
word ("The command and arguments that you define in the configuration file override the default
command and arguments provided by the container image"; no shell unless you run one). argparse never
splits a word at a blank: `"--quantization awq"` has a space, so `_parse_optional` reads it as a
positional (Python's argparse: "if it contains a space, it was meant to be a positional"), and a short
option with a blank (`"-q awq"`) gets the value " awq". A `command` item holding a whole command line
names an executable that does not exist; `&&`, `|`, `>` ... as items reach vLLM as stray arguments.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from vllmlint.finding import Finding
from vllmlint.source.yamlmodel import Scalar, Sequence, scalar_str
from vllmlint.vllm.invocation import (OPENAI_API_SERVER, DEMO_API_SERVER, VIA_COMMAND, VIA_IMAGE_ENTRYPOINT,
                                      Invocation, Option, Token, joined_vllm_command, own_entrypoint_row)
from vllmlint.vllm.flags import JSON_ONLY_PARSERS, OK, is_key_value_text
from vllmlint.vllm.release import version_key
from vllmlint.checks import Context

if TYPE_CHECKING:
    from vllmlint.fix.edits import Fix

# Words only a shell gives a meaning to (POSIX Shell Command Language 2.9: lists, pipelines, redirections).
_OPERATORS = {"&&", "||", "|", ";", ">", ">>", "<", "&", "|&", "2>&1", "2>", "&>"}
# vLLM's shared parser gained an optional positional `model_tag` in 0.10.0, which the api_server module
# never reads (data/image-entrypoints.yaml, `positional_arg: ignored`): there a stray word starts nothing.
_API_SERVER_MODEL_TAG_FROM = "0.10.0"
_PLAIN_WORD = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:@%+=,-")


def check(ctx: Context) -> Iterator[Finding | None]:
    yield from _whole_command_lines(ctx)
    for invocation in ctx.world.invocations:
        for option in invocation.options:
            if option.joined and _literal_blank(option.token):
                yield _joined(ctx, invocation, option)
            elif option.status is not None and option.status.kind == OK:
                yield from _key_value_for_json(ctx, invocation, option)
        yield from _operators(ctx, invocation)


def _key_value_for_json(ctx: Context, invocation: Invocation, option: Option) -> Iterator[Finding | None]:
    """`--speculative-config method=ngram` where the release's parser reads the flag as JSON only (the
    catalog's per-option `json_parser`: `json` or `dataclass`)."""
    spec = option.spec
    if spec is None or not spec.json or spec.json_parser not in JSON_ONLY_PARSERS or not option.value_known \
            or option.value is None:
        return
    if option.resolution is not None and option.resolution.json_path:
        return  # `--limit-mm-per-prompt.image 4`: vLLM's dotted form, fine
    if "$" in option.value or not is_key_value_text(option.value):
        return
    release = invocation.release or invocation.catalog.version
    pairs = {}
    for part in option.value.split(","):
        key, _, value = part.partition("=")
        text = value.strip()
        pairs[key.strip()] = int(text) if text.isdigit() else text
    import json  # here, not at start-up: only some inputs need it

    suggestion = json.dumps(pairs)
    where = option.value_token or option.token
    if spec.json_parser == "json":
        how, error = "parsed with `json.loads`", f"\"Value {option.value} cannot be converted ...\""
    else:
        how, error = "validated as JSON by its config class", "(an invalid-value error)"
    # The problem and the fix on the first line; how the release reads the value follows.
    yield ctx.finding(where, f"`{option.name}` takes JSON only on vLLM {release}, and `{option.value}` is the "
                      f"`key=value` form: write `{suggestion}` (quoted as one argument). The value is {how}, and "
                      f"argparse exits with a usage error {error}.",
                      about=invocation, value=f"{spec.name}={option.value}")


def _raw(token: Token) -> str:
    """The item as written (before Kubernetes' `$(VAR)` expansion) when the token is a whole list item."""
    node = token.node
    if isinstance(node, Scalar) and (token.start, token.end) == (node.start, node.end):
        return scalar_str(node) or token.text
    return token.text


def _literal_blank(token: Token) -> bool:
    """The blank is written in the item itself, not brought in by a `$(VAR)` expansion (never reported)."""
    raw = _raw(token)
    head = raw.split("=", 1)[0]
    return any(c.isspace() for c in head) and not head.startswith("$(")


def _is_list_item(token: Token) -> bool:
    node = token.node
    return isinstance(node, Scalar) and (token.start, token.end) == (node.start, node.end)


def _joined(ctx: Context, invocation: Invocation, option: Option) -> Finding | None:
    token = option.token
    words = _raw(token).split()
    head, rest = words[0], " ".join(words[1:])
    fate = _positional_fate(invocation, token)
    if len(words) == 1:  # `"--enforce-eager "`: a stray blank makes it a positional as well
        return ctx.finding(token, f"`{token.text}` has a blank around the flag, and argparse reads an argument "
                           f"with a blank as a positional, not as an option: vLLM {fate}. Fix: write `{head}` "
                           "without the blank.",
                           about=invocation, value=head, fix=ctx.build_fix(_split_fix, invocation, option))
    if _is_list_item(token):
        carrier = "Kubernetes passes each list item to vLLM as one argument"
        split = f"write them as separate items (`{head}`, `{words[1]}`{', ...' if len(words) > 2 else ''})"
    else:
        carrier = "the quotes make it one argument"
        split = f"drop the quotes around them (`{head} {words[1]}`{' ...' if len(words) > 2 else ''})"
    if " " not in _raw(token).split("=", 1)[0]:  # only line breaks or tabs: argparse checks for a space
        reading = ("reads it as an option no parser has (its name holds a line break or tab), not `{head}` set to "
                   "`{rest}`: it exits with \"unrecognized arguments\"").format(head=head, rest=rest)
    elif len(head) == 2 and head[1] != "-":  # `-q awq`: argparse takes the rest of a short option as its value
        reading = (f"reads `{head}` with the value \" {rest}\" (leading blank included), not `{rest}`: it exits "
                   "on the value or uses it as written")
    else:
        reading = (f"reads the whole item as one positional argument, not `{head}` set to `{rest}`: it "
                   + fate)
    inline = f" or as one `{head}={rest}`" if len(words) == 2 else ""
    message = (f"`{token.text}` is a flag and its value in one argument: {carrier}, and argparse never splits "
               f"an argument at a blank, so vLLM {reading}. Fix: {split}{inline}.")
    return ctx.finding(token, message, about=invocation, value=head, fix=ctx.build_fix(_split_fix, invocation, option))


def _positional_fate(invocation: Invocation, token: Token) -> str:
    """What the api_server image does with a stray positional (data/image-entrypoints.yaml `positional_arg`):
    `rejected` (no positional up to 0.9.2) exits; `ignored` (0.10.0-0.11.0: one optional `model_tag`,
    nargs="?", 0.10.0 vllm/entrypoints/openai/cli_args.py l.214-218, that only `vllm serve` reads) fills
    it and starts, unless a positional came first (then "unrecognized arguments"). Elsewhere: unknown."""
    vague = "exits with \"unrecognized arguments\" or takes the item as the model"
    entry = own_entrypoint_row(invocation) if invocation.via == VIA_IMAGE_ENTRYPOINT else None
    kind = entry.get("positional_arg") if entry is not None else None
    if kind == "rejected":
        return "exits with \"unrecognized arguments\" (this image's api_server parser has no positional argument)"
    if kind != "ignored":
        return vague
    earlier = []
    for candidate in invocation.tokens:
        if candidate is token:
            break
        if any(candidate is p for p in invocation.model_positionals):
            earlier.append(candidate)
    if any(t.dynamic for t in earlier):
        return vague
    if earlier:
        return (f"exits with \"unrecognized arguments\" (`{earlier[0].text}` already fills the api_server's "
                "one optional positional, `model_tag`)")
    models = invocation.option("--model")
    if models:
        serves = f"the model of `{models[0].name}`"
    else:
        spec = invocation.catalog.option("--model")
        serves = f"its default model ({spec.default})" if spec is not None and spec.default else "its default model"
    return (f"takes it as the optional positional `model_tag`, which the api_server never reads: the server "
            f"starts without the flag and serves {serves}")



def _split_fix(invocation: Invocation, option: Option) -> Fix | None:
    """`"--quantization awq"` -> `--quantization`, `awq`: only for plain words (no quotes, `$`, braces: a
    chat template or JSON with blanks is not a list of words), never for a `$(VAR)` item."""
    from vllmlint.fix.edits import SAFE, UNSAFE, argv_editor, make_fix

    token = option.token
    if token.dynamic or _raw(token) != token.text:
        return None
    words = token.text.split()
    if not words or not all(set(word) <= _PLAIN_WORD for word in words):
        return None
    editor = argv_editor(invocation)
    if editor is None:
        return None
    edits = editor.replace([token], words)
    # Safe where the item stops vLLM (an extra positional, or a model named "--quantization awq"); the
    # api_server module of 0.10.0 and later takes it as its ignored `model_tag` and starts: splitting it
    # then changes what runs (the flag takes effect).
    release = invocation.release or invocation.catalog.version
    ignored = invocation.kind in (OPENAI_API_SERVER, DEMO_API_SERVER) and \
        version_key(release) >= version_key(_API_SERVER_MODEL_TAG_FROM)
    what = f"split `{token.text}` into {len(words)} arguments" if len(words) > 1 else f"write `{words[0]}`"
    return make_fix(edits, UNSAFE if ignored else SAFE, what)


def _operators(ctx: Context, invocation: Invocation) -> Iterator[Finding | None]:
    """The first shell operator among the positionals of an exec-form invocation (no shell runs it)."""
    if invocation.via not in (VIA_COMMAND, VIA_IMAGE_ENTRYPOINT) or invocation.script is not None:
        return
    for token in invocation.positionals:
        if token.text in _OPERATORS and _is_list_item(token) and not token.dynamic:
            yield ctx.finding(token, f"`{token.text}` is a shell operator, but no shell runs this container: "
                              "Kubernetes starts the program with each list item as one argument, so vLLM gets "
                              f"`{token.text}` and the words after it as arguments and exits with \"unrecognized "
                              "arguments\". Fix: drop it, or run the command line through a shell "
                              "(`command: [sh, -c, \"vllm serve ... > /tmp/vllm.log 2>&1\"]`; put `exec` only "
                              "before the last command of the line, since nothing after an `exec`ed command runs)."
                              ,
                              about=invocation, value=token.text)
            return


def _whole_command_lines(ctx: Context) -> Iterator[Finding | None]:
    """`command: ["vllm serve MODEL --port 8000"]`: the runtime looks for an executable of that name."""
    for container in ctx.world.containers:
        command = container.command
        if not isinstance(command, Sequence) or not command.items:
            continue
        first = command.items[0]
        if not isinstance(first, Scalar) or not isinstance(first.value, str):
            continue
        token = Token(first.value, first.source, first.start, first.end, False, first)
        if "$(" in first.value or joined_vllm_command(token) is None:
            continue
        key = "entrypoint" if container.is_compose else "command"
        words = first.value.split()
        yield ctx.finding(first, f"`{key}` starts with the single item `{first.value}`: exec form runs no shell, "
                          f"so the container runtime looks for an executable named \"{first.value}\" and the "
                          "container fails to start (\"executable file not found in $PATH\"). Fix: one item per "
                          f"word (`[{', '.join(words[:3])}{', ...' if len(words) > 3 else ''}]`).",
                          about=container, value=words[0])
