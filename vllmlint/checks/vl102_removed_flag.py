from __future__ import annotations

from vllmlint import records
import re
from typing import TYPE_CHECKING, Any, Iterator

from vllmlint.finding import Finding
from vllmlint.vllm.flagtable import first_sentence, removed
from vllmlint.vllm.invocation import SERVE, Invocation, Option
from vllmlint.vllm.release import version_key
from vllmlint.vllm.flags import ABSORBED, REMOVED
from vllmlint.checks import Context, describe_workload
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.fix.edits import Fix

# `--speculative-config` with `"method": "draft_model"`: the method became a checked Literal that lists
# draft_model in 0.8.5 (vllm/config.py SpeculativeMethod; 0.8.4 had a free-form str).
SPECULATIVE_CONFIG_SINCE = "0.8.5"
# Old speculative flags and their keys inside --speculative-config (0.8.5 SpeculativeConfig fields).
_SPECULATIVE_KEYS = {
    "--num-speculative-tokens": ("num_speculative_tokens", int),
    "--speculative-draft-tensor-parallel-size": ("draft_tensor_parallel_size", int),
    "--speculative-max-model-len": ("max_model_len", int),
    "--speculative-model-quantization": ("quantization", str),
    "--ngram-prompt-lookup-max": ("prompt_lookup_max", int),
    "--ngram-prompt-lookup-min": ("prompt_lookup_min", int),
}
# Draft models that old vLLM recognised by name as another method: "draft_model" would change them.
_OTHER_METHOD = lazy_compile(r"eagle|medusa|mlp[_-]?speculator|mtp", re.I)
# Switches with a one-for-one spelling on every release that rejects them (0.6.6.post1 help: "Deprecated,
# use --distributed-executor-backend=ray.").
_RESPELLED = {"--worker-use-ray": ["--distributed-executor-backend", "ray"]}
# Removal hints that mean the flag changed nothing (or nothing that still exists): dropping it is safe.
_NOTHING_LOST = lazy_compile(r"^(Delete it|Remove it)\b")


def check(ctx: Context) -> Iterator[Finding | None]:
    for invocation in ctx.world.invocations:
        speculative: dict[int, Fix] | None = None
        for option in invocation.options:
            status = option.status
            if status is None or status.kind not in (REMOVED, ABSORBED):
                continue
            flag = status.spelling
            entry = removed().get(flag) or {}
            if speculative is None:
                speculative = ctx.build_fix(_speculative_fix, invocation) or {}
            fix = None if status.kind == ABSORBED else ctx.build_fix(_fix_for, invocation, option, entry, speculative)
            yield ctx.finding(option.token, _message(option, invocation), about=invocation, value=flag, fix=fix)


def _message(option: Option, invocation: Invocation) -> str:
    status = option.status
    assert status is not None  # only flags the release does not accept get here
    target = invocation.catalog.version
    if status.removed_in:
        when = f"was removed in vLLM {status.removed_in}"
    elif status.last_release:
        when = "was removed after vLLM " + status.last_release
    else:
        when = "was removed from vLLM"
    if status.last_release and status.removed_in:
        when += f" (last accepted by {status.last_release})"
    runs = f"{describe_workload(invocation)} runs {invocation.release}" if invocation.release and not invocation.assumed \
        else f"assuming vLLM {target}"
    if status.kind == ABSORBED:
        return (f"`{option.name}` {when}; on {target} the parser silently reads it as a prefix of "
                f"`{status.absorbed_by}` ({runs}). {first_sentence(status.hint) if status.hint else 'Remove it.'}")
    crash = "vLLM refuses to start with it"
    if status.candidates:
        crash += f" (it is an ambiguous prefix of {', '.join(status.candidates[:3])} there)"
    hint = first_sentence(status.hint) if status.hint else "Remove it."
    return f"`{option.name}` {when}; {runs}, and {crash}. {hint}"


def _fix_for(invocation: Invocation, option: Option, entry: dict[str, Any],
             speculative: dict[int, Fix]) -> Fix | None:
    flag = option.status.spelling if option.status is not None else option.name
    if id(option) in speculative:
        return speculative[id(option)]
    if flag == "--speculative-model" or flag in _SPECULATIVE_KEYS:
        return None  # dropping a part of the speculative setup would keep the rest half-configured
    return _drop_fix(invocation, option, entry)


def _drop_fix(invocation: Invocation, option: Option, entry: dict[str, Any]) -> Fix | None:
    """Delete the flag (and its value). Safe when the flag did nothing any more, or nothing that still
    exists ("Delete it", "Remove it"); unsafe when it asked for something that now has another spelling
    (speculative decoding, rope scaling, a task, a structured-output backend): dropping it starts the
    server without that."""
    from vllmlint.fix.edits import SAFE, UNSAFE, argv_editor, drop_options_fix, make_fix

    flag = option.name.replace("_", "-")
    words = _RESPELLED.get(flag)
    editor = argv_editor(invocation)
    if (editor and words and option.value is None and not invocation.option(words[0])
            and _catalog_accepts(invocation, words[0])):
        return make_fix(editor.replace([option.token], words), SAFE, f"write `{option.name}` as `{' '.join(words)}`")
    if option.value_token is not None and not option.inline:
        # The target release does not know the flag, so the parse guessed whether the next word is
        # its value; the release that last accepted it knows. A switch must not take the model along.
        takes_value = _took_value(flag)
        if takes_value is None:
            return None
        if not takes_value:
            option = records.replace(option, value=None, value_token=None, extra_values=[])
        elif invocation.kind == SERVE and not invocation.positionals and not invocation.option("--model"):
            return None  # `vllm serve --flag X`: X may well be the model the author meant
    lost_nothing = bool(_NOTHING_LOST.match(entry.get("replacement", "")))
    if flag == "--task" and option.value in ("generate", "auto"):
        lost_nothing = True  # text generation is what the server does without it
    return drop_options_fix(invocation, [option], SAFE if lost_nothing else UNSAFE,
                            f"delete the removed flag `{option.name}`")


def _took_value(flag: str) -> bool | None:
    """Whether the removed flag took a value in the last catalogued release that accepted it (None:
    unknown, or an optional value)."""
    from vllmlint.vllm import catalog
    from vllmlint.vllm.invocation import default_takes_value

    row = catalog.history(flag)
    option = catalog.load(row["last"]).option(flag) if row and row.get("last") else None
    if option is None:
        return default_takes_value(flag)
    if option.nargs == "?":
        return None
    return bool(option.takes_value)


def _catalog_accepts(invocation: Invocation, flag: str, config: dict[str, Any] | None = None) -> bool:
    """The release catalog the invocation is checked against has `flag` (and, for a JSON option, the
    keys and the `method` written): a fix must not write what the other rules would then reject."""
    release_catalog = getattr(invocation, "catalog", None)
    if release_catalog is None:
        return True  # no catalog: the release bounds above are all there is
    option = release_catalog.option(flag)
    if option is None:
        return False
    keys = set(option.json_keys or ())
    if config and keys and not set(config) <= keys:
        return False
    methods = (option.json_key_values or {}).get("method")
    return not (config and methods and config.get("method") not in methods)


def _literal(option: Option) -> bool:
    """The value is written out: no shell expansion, and no Kubernetes `$(VAR)` that the JSON would lose."""
    token = option.value_token
    if not option.value_known or token is None:
        return False
    node = token.node
    is_list_item = node is not None and (token.start, token.end) == (node.start, node.end)
    return not (is_list_item and node is not None and "$" in node.text)


def _speculative_fix(invocation: Invocation) -> dict[int, Fix]:
    """`--speculative-model X --num-speculative-tokens N` (and the other old speculative flags) -> one
    `--speculative-config '{"model": "X", "num_speculative_tokens": N, "method": "draft_model"}'`.
    Safe: the old flags no longer start at all, and the JSON asks for the same draft model and count.
    The same fix goes to every folded flag's finding (option id -> fix)."""
    from vllmlint.fix.edits import SAFE, argv_editor, make_fix

    release = invocation.release
    if release and version_key(release) < version_key(SPECULATIVE_CONFIG_SINCE):
        return {}
    models = invocation.option("--speculative-model")
    counts = invocation.option("--num-speculative-tokens")
    if len(models) != 1 or len(counts) != 1 or invocation.option("--speculative-config"):
        return {}
    folded = [o for o in invocation.options if o.name.replace("_", "-") in _SPECULATIVE_KEYS]
    config: dict[str, Any] = {}
    for option in folded:
        key, kind = _SPECULATIVE_KEYS[option.name.replace("_", "-")]
        if key in config or not _literal(option) or option.value is None:
            return {}
        if kind is int:
            try:
                config[key] = int(option.value)
            except ValueError:
                return {}  # `--num-speculative-tokens four`: VL106's to report, nothing to fold
        else:
            config[key] = option.value
    model = models[0]
    if not _literal(model) or model.value is None:
        return {}
    head: dict[str, Any]
    if model.value == "[ngram]":
        head = {"method": "ngram"}
    elif _OTHER_METHOD.search(model.value) or any(k.startswith("prompt_lookup") for k in config):
        return {}
    elif "num_speculative_tokens" not in config:
        return {}  # written as an abbreviation (`--num-speculative-token`): not folded
    else:
        head = {"model": model.value, "num_speculative_tokens": config.pop("num_speculative_tokens"),
                "method": "draft_model"}
    config = {**head, **config}
    if not _catalog_accepts(invocation, "--speculative-config", config):
        return {}
    editor = argv_editor(invocation)
    if editor is None:
        return {}
    if model.value_token is None:
        return {}
    tokens = [model.token] if model.inline else [model.token, model.value_token]
    edits = None
    # Readable JSON first; the compact form (no ": ") fits in a plain YAML scalar as well.
    for separators in ((", ", ": "), (",", ":")):
        import json  # here, not at start-up: only some inputs need it

        value = json.dumps(config, separators=separators)
        words = [f"--speculative-config={value}"] if model.inline else ["--speculative-config", value]
        edits = editor.replace(tokens, words)
        if edits is not None:
            break
    removal = editor.delete_options(folded)
    if edits is None or removal is None:
        return {}
    fix = make_fix(edits + removal, SAFE, "fold the old speculative-decoding flags into `--speculative-config`")
    if fix is None:
        return {}
    return {id(option): fix for option in [model] + folded}
