"""VL802: a literal credential committed with the deployment: an `hf_` token, an `sk-` key, a literal value of
`--api-key`/`--hf-token`, `HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN` or `VLLM_API_KEY`, or a Secret manifest holding one.

What counts as a credential, its formats and the placeholders documentation uses are data
(`data/credentials.yaml`, read through `vllmlint.k8s.secrets`). A real-looking value is a warning; a placeholder
or documentation sample (`token-abc123`, `REPLACE_WITH_TOKEN`, `hf_xxxx...`) is info with its own message; a
reference (`$(VAR)`, `${VAR}`, `{{ .Values.x }}`, a SOPS `ENC[...]` value) is how a credential should be passed and
is not reported. The value never reaches a message, a finding's `value` (fingerprints, baselines) or a fix: only
`secrets.mask()` (the known prefix and the length).
"""
from __future__ import annotations

from typing import Iterator

from vllmlint.finding import Finding, Severity
from vllmlint.k8s import secrets
from vllmlint.k8s.objects import Container
from vllmlint.k8s.pod import LITERAL, SECRET
from vllmlint.source.yamlmodel import Mapping, Node, Scalar
from vllmlint.vllm.invocation import VIA_IMAGE_ENTRYPOINT, Token, script_assignments
from vllmlint.checks import Context, About


class _Reporter:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.seen: dict[str, list[tuple[int, int]]] = {}  # reported spans per file

    def report(self, where: Token | Node, judgement: secrets.Judgement, value: str, what: str, about: About,
               label: str, fix_real: str) -> Iterator[Finding | None]:
        """One finding per place: the first (most specific) reader of a value wins over any later one whose span
        overlaps it (a ConfigMap script's token is seen as a ConfigMap value and as a shell word)."""
        if judgement.kind not in (secrets.REAL, secrets.PLACEHOLDER):
            return
        source = where.source
        if source is None:
            return
        spans = self.seen.setdefault(source.display_path, [])
        start, end = where.start, max(where.end, where.start + 1)
        if any(s < end and start < e for s, e in spans):
            return
        spans.append((start, end))
        if judgement.kind == secrets.REAL:
            # the mask after the `: `, off the first line (formatters.report.split_message)
            message = (f"{what} is {secrets.describe(judgement)} written as a literal: everyone who can read the "
                       f"repository or the object has it ({secrets.mask(value)}). "
                       f"{fix_real} Rotate it: it is already exposed.")
            finding = self.ctx.finding(where, message, about=about, value=f"{label}:real:{len(value.strip())}")
        else:
            if label.startswith(("VLLM_API_KEY", "--api-key")):
                effect = ("vLLM accepts it as its API key, and a key copied from documentation is known to every "
                          "reader")
            else:
                effect = "whatever runs with it sends this string as its credential and is refused"
            message = (f"{what} holds a placeholder, not a credential: nothing leaks, but {effect}. It reads as a "
                       f"placeholder ({judgement.reason}). Give the real value from a Secret created outside the "
                       "repository.")
            finding = self.ctx.finding(where, message, about=about, value=f"{label}:placeholder",
                                       severity=min(self.ctx.severity, Severity.INFO))
        if finding is not None:
            finding.redact = True  # the excerpt under the message masks the span (formatters/text.py)
        yield finding


_FROM_SECRET = ("Put it in a Secret created outside the repository (kubectl create secret, External Secrets, "
                "Sealed Secrets or SOPS) and reference it (valueFrom.secretKeyRef, or a mounted file).")


def _at(scalar: Node, start: int, end: int) -> Token | Node:
    """The position of text[start:end] of a scalar, in its file."""
    if isinstance(scalar, Scalar):
        return Token("", scalar.source, scalar.source_index(start), scalar.source_index(end))
    return scalar


def _scan(reporter: _Reporter, node: Node, text: str, what: str, about: About, label: str) -> Iterator[Finding | None]:
    """Tokens of a known format anywhere in a literal."""
    for start, end, fmt in secrets.find_tokens(text):
        value = text[start:end]
        yield from reporter.report(_at(node, start, end), secrets.judge(value), value, what, about,
                                   f"{label}:{fmt.prefix}", _FROM_SECRET)


def _owner(container: Container) -> str:
    owner = container.pod.owner
    kind = "Compose service" if owner.kind == "ComposeService" else owner.kind  # as Compose's messages say
    return f"{kind} {owner.name}".strip()


def _containers(ctx: Context, reporter: _Reporter) -> Iterator[Finding | None]:
    names = secrets.credential_variables()
    for container in ctx.world.containers:
        for var in container.resolved_env(ctx.world):
            if var.origin != LITERAL or var.value is None or var.source is None:
                continue  # a ConfigMap's value is reported at the ConfigMap; a Secret's is not written here
            value = var.value
            scalar = var.source
            if not isinstance(scalar, Scalar) or not isinstance(scalar.value, str):
                continue  # a number or a boolean: no credential
            written = scalar.value  # the value as written (a Compose list item holds `KEY=value`)
            where: Token | Node = scalar
            if container.is_compose and written.startswith(var.name + "="):
                where = _at(scalar, len(var.name) + 1, len(written))  # Compose `- KEY=value`: at the value
            what = f"{var.name} in {_owner(container)}"
            if var.name in names:
                yield from reporter.report(where, secrets.judge(value), value, what, container, var.name, _FROM_SECRET)
            else:
                yield from _scan(reporter, scalar, written, what, container, var.name)


def _chart_values(ctx: Context, reporter: _Reporter) -> Iterator[Finding | None]:
    """A Helm values file (vllm.helm_values): the strings the chart makes into the container's env, and the ones it
    stores in a Secret it renders itself (production-stack's `hf_token`, `vllmApiKey`), are in the repository."""
    names = secrets.credential_variables()
    for invocation in ctx.world.invocations:
        owner = invocation.owner
        literals = getattr(owner, "literals", None) if invocation.container is None else None
        if not literals:
            continue
        whose = f"{owner.kind} {owner.name}".strip()
        for kind, name, text, node in literals:
            if kind == "secret":  # vllm.helm_values.SECRET_VALUE; a root key (`servingEngineSpec.x`) by its path
                what = name if "." in name else f"{name} of {whose}"
                key = name.rsplit(".", 1)[-1]
                yield from reporter.report(node, secrets.judge(text), text, what, owner, key,
                                           f"The chart stores it in a Secret it renders from this file: create "
                                           f"the Secret outside the repository and name it instead "
                                           f"(`{key}: {{secretName: ..., secretKey: ...}}`).")
            elif name in names:
                yield from reporter.report(node, secrets.judge(text), text, f"{name} in {whose}", owner, name,
                                           _FROM_SECRET)
            else:
                yield from _scan(reporter, node, text, f"{name} in {whose}", owner, name)


def _config_maps(ctx: Context, reporter: _Reporter) -> Iterator[Finding | None]:
    keys = secrets.credential_keys()
    for config_map in ctx.world.of_kind("ConfigMap"):
        data = config_map.node.get("data")
        if not isinstance(data, Mapping):
            continue
        for key, node in data.pairs():
            if not isinstance(node, Scalar) or not isinstance(node.value, str):
                continue
            what = f"Key {key} of ConfigMap {config_map.name}"
            if key in keys:
                yield from reporter.report(node, secrets.judge(node.value), node.value, what, config_map, key,
                                           "A ConfigMap is not meant for credentials (it is readable by anyone "
                                           "who may read ConfigMaps, and not encrypted at rest): use a Secret "
                                           "created outside the repository.")
            else:
                yield from _scan(reporter, node, node.value, what, config_map, key)


def _referenced_keys(ctx: Context) -> set[tuple[str, str]]:
    """(Secret name, key) pairs that containers of the run read into a credential variable."""
    names = secrets.credential_variables()
    found: set[tuple[str, str]] = set()
    for container in ctx.world.containers:
        if container.is_compose:
            continue
        for var in container.resolved_env(ctx.world):
            if var.origin == SECRET and var.name in names and var.ref_name and var.ref_key:
                found.add((var.ref_name, var.ref_key))
    return found


def _secret_objects(ctx: Context, reporter: _Reporter) -> Iterator[Finding | None]:
    objects = ctx.world.of_kind("Secret")
    if not objects:
        return
    keys = secrets.credential_keys()
    referenced = _referenced_keys(ctx)
    for secret in objects:
        if secret.api_version != "v1":
            continue  # SealedSecret, ExternalSecret...: other kinds, encrypted or references
        for entry in secrets.secret_entries(secret):
            if entry.value is None:
                continue  # not base64 (a template placeholder) or not text (a certificate, a keystore)
            where = f"`{'data' if entry.encoded else 'stringData'}.{entry.key}` of Secret {secret.name}".strip()
            what = f"The value of {where}" + (" (decoded from base64)" if entry.encoded else "")
            fix = ("A Secret committed to a repository is not secret: create it from the cluster's secret store "
                   "(kubectl create secret, External Secrets, Sealed Secrets or SOPS) and keep only a reference "
                   "or an encrypted form in the repository.")
            if entry.key in keys or (secret.name, entry.key) in referenced:
                yield from reporter.report(entry.node, secrets.judge(entry.value), entry.value, what, secret,
                                           entry.key, fix)
            else:
                for start, end, fmt in secrets.find_tokens(entry.value):
                    value = entry.value[start:end]
                    node = entry.node if entry.encoded else _at(entry.node, start, end)
                    yield from reporter.report(node, secrets.judge(value), value, what, secret,
                                               f"{entry.key}:{fmt.prefix}", fix)


def _invocations(ctx: Context, reporter: _Reporter) -> Iterator[Finding | None]:
    options = secrets.credential_options()
    for invocation in ctx.world.invocations:
        about: About = invocation.container if invocation.container is not None else None
        for flag in options:
            for option in invocation.option(flag):
                token = option.value_token
                if option.value is None or token is None or token.dynamic:
                    continue  # `--hf-token` alone uses the stored token; `$VAR` comes from elsewhere
                if _expanded(token):
                    continue  # `$(VAR)` expanded from the container env: reported where VAR is written
                value = option.value
                yield from reporter.report(token, secrets.judge(value), value, f"The value of {option.name}",
                                           about, flag, "Give it from a Secret: `VLLM_API_KEY` from "
                                           "valueFrom.secretKeyRef for --api-key, HF_TOKEN for --hf-token.")
        if invocation.via != VIA_IMAGE_ENTRYPOINT:
            continue  # its tokens are in world.shell_commands, scanned below
        for token in invocation.tokens:
            if token.source is not None and not token.dynamic:
                yield from _scan_token(reporter, token, about)


def _expanded(token: Token) -> bool:
    """An exec-form `command`/`args` item holding `$(VAR)`: its text is VAR's value from the container env,
    reported (if literal) where VAR is written."""
    node = token.node
    return (node is not None and token.start == node.start and token.end == node.end and isinstance(node.value, str)
            and "$(" in node.value)


def _scan_token(reporter: _Reporter, token: Token, about: About) -> Iterator[Finding | None]:
    if _expanded(token):
        return
    for start, end, fmt in secrets.find_tokens(token.text):
        value = token.text[start:end]
        yield from reporter.report(token, secrets.judge(value), value, "A command-line word", about,
                                   f"argv:{fmt.prefix}", _FROM_SECRET)


def _scripts(ctx: Context, reporter: _Reporter) -> Iterator[Finding | None]:
    names = secrets.credential_variables()
    needles = tuple(names) + tuple(f.prefix for f in secrets.token_formats())
    for assignment in script_assignments(ctx.world, needles):
        about: About = assignment.container
        what = f"{assignment.name} set in a shell script"
        value = assignment.value
        if assignment.token.dynamic:
            continue  # `$VAR`, `$(cat file)`, a glob: the value is not written here
        if assignment.name in names:
            yield from reporter.report(assignment.token, secrets.judge(value), value, what, about,
                                       assignment.name, "Read it from a file or a secret store at run time "
                                       "(`export HF_TOKEN=$(cat /run/secrets/hf-token)`), or from a Secret in "
                                       "Kubernetes.")
        else:
            for start, end, fmt in secrets.find_tokens(value):
                token_value = value[start:end]
                yield from reporter.report(assignment.token, secrets.judge(token_value), token_value, what, about,
                                           f"{assignment.name}:{fmt.prefix}", _FROM_SECRET)
    options = secrets.credential_options()
    interesting = secrets.prefix_pattern()
    for command in ctx.world.shell_commands:
        tokens = command.tokens
        for index, token in enumerate(tokens):
            text = token.text
            if not text.startswith("--") and interesting.search(text) is None:
                continue  # neither a credential option nor a token of a known format: most words
            if token.source is None or token.dynamic or _expanded(token):
                continue
            # `--api-key VALUE` in a command no invocation was made of (a ConfigMap script no container of the run
            # mounts, a client or a benchmark): the value is a literal credential just the same.
            flag, eq, inline = text.partition("=") if text.startswith("--") else ("", "", "")
            if flag in options and (eq or index + 1 < len(tokens)):
                holder = token if eq else tokens[index + 1]
                value = inline if eq else holder.text
                if not holder.dynamic and not _expanded(holder) and not (not eq and value.startswith("-")):
                    yield from reporter.report(holder, secrets.judge(value), value, f"The value of {flag}",
                                               command.container, flag, "Give it from a Secret or read it from a "
                                               "file at run time.")
            yield from _scan_token(reporter, token, command.container)


def check(ctx: Context):
    reporter = _Reporter(ctx)
    yield from _secret_objects(ctx, reporter)
    yield from _config_maps(ctx, reporter)
    yield from _containers(ctx, reporter)
    yield from _chart_values(ctx, reporter)
    yield from _invocations(ctx, reporter)
    yield from _scripts(ctx, reporter)
