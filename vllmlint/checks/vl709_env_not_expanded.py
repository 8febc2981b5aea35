"""VL709: `$VAR` / `${VAR}` in a Kubernetes env value, command or args item, where Kubernetes expands only `$(VAR)`.

Kubernetes' expansion (third_party/forked/golang/expansion/expand.go in kubernetes/kubernetes) reads `$$` as an
escaped `$`, `$(NAME)` as a reference, and keeps `$` followed by anything else as it is: `$HF_TOKEN` and
`${LD_LIBRARY_PATH}` reach the process as those characters. The API reference (EnvVar.value, Container.command
and args) documents only `$(VAR_NAME)`. Which pods, fields and markers of pre-apply substitution count is
described in rules/VL709-env-not-expanded.yaml.
"""
from __future__ import annotations

import os
import re
from vllmlint.records import dataclass
from functools import lru_cache
from typing import Iterator

from vllmlint.finding import Finding, Severity
from vllmlint.k8s.objects import Container, K8sObject, PodTemplate, World
from vllmlint.k8s.operators import kserve_script_variables
from vllmlint.source.yamlmodel import Mapping, Scalar, Sequence
from vllmlint.source.shell import script_from_shell_args
from vllmlint.vllm.invocation import (VIA_COMMAND, VIA_CONFIGMAP_SCRIPT, VIA_IMAGE_ENTRYPOINT, VIA_SCRIPT, VIA_SHELL,
                                     ShellCommand, Token)
from vllmlint.checks import Context
from vllmlint.lazyre import lazy_compile

_NAME = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UPPER_NAME = lazy_compile(r"[A-Z_][A-Z0-9_]*")
# What may follow the name inside `${...}` in the shell/envsubst syntax: the end, or an operator. A `:` counts
# only before `-`, `=`, `?` or `+`: `${env:HOME}`, `${sys:user.home}` and Spring's `${VAR:default}` are
# placeholders that Log4j, the OpenTelemetry collector and Spring resolve themselves.
_BRACE_FOLLOW = set("}-=?+#%/^,")
_COLON_FOLLOW = set("-=?+")
_SHELLS = {"sh", "bash", "dash", "ash", "zsh", "ksh"}
_ENVSUBST_WORD = re.compile(r"(^|[^A-Za-z0-9_-])envsubst($|[^A-Za-z0-9_-])")
_PARTS = lazy_compile(r"[_.-]")
_FLUX_API = "kustomize.toolkit.fluxcd.io/"
_FLUX_DISABLED = "kustomize.toolkit.fluxcd.io/substitute"


@dataclass
class Reference:
    """One `$NAME` or `${NAME...}` that Kubernetes leaves as text: offsets into the scalar's text."""

    name: str
    start: int
    end: int
    braced: bool

    @property
    def written(self) -> str:
        return f"${{{self.name}}}" if self.braced else f"${self.name}"


def references(text: str) -> list[Reference]:
    """The shell-style references in `text` that Kubernetes' expansion leaves alone, scanned the way the
    kubelet scans (`$$` is an escape, `$(...)` a reference of its own). A `$` inside a word (`s3cr$t`) or an
    unbraced lower-case name inside a longer value (`{"$defs": ...}`) is not taken for a reference."""
    found: list[Reference] = []
    i, n = 0, len(text)
    closers = {")": 0, "}": 0}  # the next `)` / `}` at or after the last search (-1: none): linear on any input

    def closer(char: str, start: int) -> int:
        at = closers[char]
        if at != -1 and at < start:
            at = closers[char] = text.find(char, start)
        return at

    while i < n:
        if text[i] != "$" or i + 1 >= n:
            i += 1
            continue
        following = text[i + 1]
        if following == "$":  # `$$`: an escaped `$`, whatever follows it
            i += 2
            continue
        if following == "(":  # `$(NAME)`: Kubernetes' own syntax, expanded or left unresolved
            close = closer(")", i + 2)
            i = close + 1 if close >= 0 else i + 2
            continue
        if following == "{":
            match = _NAME.match(text, i + 2)
            after = match.end() if match else n
            if match and after < n and (text[after] in _BRACE_FOLLOW
                                        or text[after] == ":" and after + 1 < n and text[after + 1] in _COLON_FOLLOW):
                close = closer("}", match.end())
                if close >= 0:
                    found.append(Reference(match.group(), i, close + 1, True))
                    i = close + 1
                    continue
            i += 2
            continue
        match = _NAME.match(text, i + 1)
        if match is not None:
            inside_word = i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")
            whole = i == 0 and match.end() == n
            if not inside_word and (whole or _UPPER_NAME.fullmatch(match.group())):
                found.append(Reference(match.group(), i, match.end(), False))
            i = match.end()
            continue
        i += 2  # the kubelet consumes the character after a lone `$`
    return found


# --- rule data ----------------------------------------------------------------------------------------
@dataclass
class _Data:
    credential_words: tuple[str, ...]
    expanded_by_reader: frozenset[str]
    loader_variables: frozenset[str]
    loader_tokens: frozenset[str]
    template_names: frozenset[str]


def _data(ctx: Context) -> _Data:
    data = ctx.rule.data if isinstance(ctx.rule.data, dict) else {}
    loader = data.get("loader_tokens") or {}
    return _Data(
        tuple(w.upper() for w in data.get("credential_words", [])),
        frozenset(name for entry in data.get("expanded_by_reader", []) for name in entry.get("names", [])),
        frozenset(loader.get("variables", [])),
        frozenset(loader.get("tokens", [])),
        frozenset(s.lower() for s in data.get("template_names", [])),
    )


@lru_cache(maxsize=4096)
def _credential(name: str, words: tuple[str, ...]) -> bool:
    """A name with a part (split at `_`, `-`, `.`) ending in TOKEN, KEY, SECRET or PASSWORD: `HF_TOKEN`,
    `OPENAI_APIKEY`, `S3_SECRET_ACCESS_KEY`; not `MAX_TOKENS` or `TOKENIZER_PATH`."""
    return any(part.endswith(words) for part in _PARTS.split(name.upper()) if part)


# --- evidence that the files are substituted before they are applied ------------------------------------
@dataclass
class _Substitution:
    files: set[str]  # display paths substituted as a whole (template names, envsubst, unusable `$` fields)
    flux: bool  # a Flux Kustomization with postBuild substitution in the run: `${VAR}` forms only


def _has_reference(text: str | None) -> bool:
    return bool(text) and bool(references(text or ""))


def _unappliable(obj: K8sObject) -> bool:
    """A `$VAR` where the API server or the kubelet rejects it as written, so the file cannot be applied
    before something substitutes it: an object's name or namespace (DNS-1123), a label value (label syntax),
    a Secret's `data` value (base64), a container image (image reference grammar: InvalidImageName)."""
    if _has_reference(obj.name) or _has_reference(obj.namespace):
        return True
    if any(_has_reference(value) for value in obj.labels.values()):
        return True
    if obj.kind == "Secret":
        data = obj.node.get("data")
        if isinstance(data, Mapping) and any(isinstance(v, Scalar) and isinstance(v.value, str)
                                             and _has_reference(v.value) for _, v in data.pairs()):
            return True
    return False


def _under(path: str, directory: str) -> bool:
    path, directory = os.path.normpath(path), os.path.normpath(directory)
    if directory in ("", "."):
        return not os.path.isabs(path)
    return path.startswith(directory.rstrip(os.sep) + os.sep)


def _substitution(world: World, names: frozenset[str]) -> _Substitution:
    files: set[str] = set()
    paths = {obj.source.display_path for obj in world.objects}
    for shown in paths:
        parts = os.path.basename(shown).lower().split(".")[1:]
        if any(part in names for part in parts):
            files.add(shown)
    for obj in world.objects:
        if _unappliable(obj):
            files.add(obj.source.display_path)
    for container in world.containers:
        image = container.image
        if image is not None and isinstance(image.value, str) and _has_reference(image.value):
            files.add(container.pod.owner.source.display_path)
    # A script or a Markdown shell block that runs envsubst: the files in its folder (and below it), and the
    # files its commands name (`cat ../deploy/lws.yaml | envsubst | kubectl apply -f -`).
    scripts: dict[str, set[str]] = {}
    runs_envsubst: set[str] = set()
    for command in world.shell_commands:
        if command.via != VIA_SCRIPT or command.container is not None:
            continue
        script = next((t.source.display_path for t in command.tokens if t.source is not None), None)
        if script is None:
            continue
        scripts.setdefault(script, set()).update(os.path.basename(w) for w in command.words if w)
        if any(_ENVSUBST_WORD.search(word) for word in command.words):
            runs_envsubst.add(script)
    for script in runs_envsubst:
        folder = os.path.dirname(script)
        named = scripts.get(script, set())
        files.update(p for p in paths if _under(p, folder) or os.path.basename(p) in named)
    flux = False
    for obj in world.of_kind("Kustomization"):
        post_build = obj.spec.get("postBuild") if obj.api_version.startswith(_FLUX_API) and obj.spec else None
        if isinstance(post_build, Mapping) and ("substitute" in post_build or "substituteFrom" in post_build):
            flux = True
    return _Substitution(files, flux)


def _substituted(obj: K8sObject, reference: Reference, substitution: _Substitution) -> bool:
    if obj.source.display_path in substitution.files:
        return True
    # Flux substitutes `${var}` only ("use the format $var instead of ${var}" to avoid it), and never in an
    # object annotated `kustomize.toolkit.fluxcd.io/substitute: disabled`.
    return substitution.flux and reference.braced and obj.annotations.get(_FLUX_DISABLED) != "disabled"


# --- the containers --------------------------------------------------------------------------------------
def _exec_argv_scalars(world: World) -> dict[int, list[Scalar]]:
    """By container (id): the `command`/`args` items of the containers whose exec-form argv runs vLLM directly
    (no shell in between)."""
    result: dict[int, list[Scalar]] = {}
    seen: set[int] = set()
    for invocation in world.invocations:
        if invocation.container is None or invocation.via not in (VIA_COMMAND, VIA_IMAGE_ENTRYPOINT):
            continue
        scalars = result.setdefault(id(invocation.container), [])
        for token in invocation.entry + invocation.tokens:
            node = token.node
            if node is not None and id(node) not in seen and isinstance(node.value, str):
                seen.add(id(node))
                scalars.append(node)
    return result


def _own_commands(world: World) -> dict[int, list[ShellCommand]]:
    """By container (id): the commands it runs (its exec-form command line, the commands of its scripts)."""
    result: dict[int, list[ShellCommand]] = {}
    for command in world.shell_commands:
        if command.container is not None:
            result.setdefault(id(command.container), []).append(command)
    return result


def _rewrites_env(commands: list[ShellCommand]) -> bool:
    """The container's own script may expand its variables' values again: `eval`, `envsubst`, or a shell
    started from the script (`bash -c "$CMD"`). Their text is then that shell's business."""
    for command in commands:
        words = command.words
        if not words:
            continue
        if words[0] == "eval" or any(_ENVSUBST_WORD.search(w) for w in words):
            return True
        if command.via in (VIA_SHELL, VIA_CONFIGMAP_SCRIPT) and script_from_shell_args(words) is not None:
            return True
    return False


def _exported(commands: list[ShellCommand]) -> set[str]:
    """Names the container's script sets itself (`export HF_TOKEN=...`), replacing the env value."""
    names: set[str] = set()
    for command in commands:
        words = command.words
        if words and words[0] in ("export", "declare", "typeset", "readonly"):
            names.update(w.split("=", 1)[0] for w in words[1:] if "=" in w)
    return names


def _is_shell(container: Container) -> bool:
    command = container.command
    first = command.items[0] if isinstance(command, Sequence) and command.items else None
    return isinstance(first, Scalar) and isinstance(first.value, str) and first.value.rsplit("/", 1)[-1] in _SHELLS


def _at(scalar: Scalar, reference: Reference) -> Token:
    return Token(reference.written, scalar.source, scalar.source_index(reference.start),
                 scalar.source_index(reference.end))


def _vllm_workload_templates(world: World) -> list[PodTemplate]:
    """Every pod template of the objects that run vLLM in any of theirs: an LWS worker or a Ray worker group
    starts no server itself, but its pods are the same vLLM deployment (they load the same weights)."""
    owners = {id(template.owner) for template in world.vllm_templates()}
    return [template for template in world.templates if id(template.owner) in owners]


def check(ctx: Context) -> Iterator[Finding | None]:
    world = ctx.world
    templates = _vllm_workload_templates(world)
    if not templates:
        return
    data = _data(ctx)
    substitution = _substitution(world, data.template_names)
    warning, info = min(ctx.severity, Severity.WARNING), min(ctx.severity, Severity.INFO)
    argv_scalars, own_commands = _exec_argv_scalars(world), _own_commands(world)
    for template in templates:
        if template.owner.kind == "ComposeService":
            continue  # Compose interpolates `$VAR` and `${VAR}` itself
        owner = template.owner
        for container in template.containers:
            commands = own_commands.get(id(container), [])
            variables = container.resolved_env(world)
            defined = {var.name: index for index, var in enumerate(variables)}
            evaluated = kserve_script_variables(container)  # KServe's preset script evals these
            if not _rewrites_env(commands):
                exported = _exported(commands)
                for index, var in enumerate(variables):
                    scalar = var.value_scalar
                    if scalar is None or "$" not in scalar.text or var.name in data.expanded_by_reader \
                            or var.name in exported or var.name in evaluated:
                        continue
                    for reference in references(scalar.text):
                        if _substituted(owner, reference, substitution):
                            continue
                        if var.name in data.loader_variables and reference.name in data.loader_tokens:
                            continue  # ld.so expands $ORIGIN, $LIB and $PLATFORM in these itself
                        yield _env_finding(ctx, container, var.name, index, scalar, reference, defined, data,
                                           warning, info)
            if _is_shell(container):
                continue  # `sh -c`: the shell expands the script's variables
            evaluated_values = {id(var.value_scalar) for var in variables if var.name in evaluated}
            for scalar in argv_scalars.get(id(container), []):
                if "$" not in scalar.text or id(scalar) in evaluated_values:
                    continue  # no `$`, or an env value the preset's shell reads
                for reference in references(scalar.text):
                    if _substituted(owner, reference, substitution):
                        continue
                    yield _argv_finding(ctx, container, scalar, reference, defined, data, warning, info)


def _env_finding(ctx: Context, container: Container, name: str, index: int, scalar: Scalar, reference: Reference,
                 defined: dict[str, int], data: _Data, warning: Severity, info: Severity) -> Finding | None:
    ref, written = reference.name, reference.written
    rule = ("Kubernetes expands only `$(NAME)` references to variables defined earlier in the container's "
            "env, never `$NAME` or `${NAME}`")
    if _credential(ref, data.credential_words) or _credential(name, data.credential_words):
        message = (f"`{name}` gets the literal text `{written}`, not a credential: {rule}. Take the value from a "
                   f"Secret (`valueFrom.secretKeyRef`), or substitute the file before applying it (envsubst).")
        severity = warning
    elif ref in defined and ref != name:
        order = "" if defined[ref] < index else f" and define `{ref}` before `{name}`"
        message = (f"`{written}` in `{name}` stays literal text: {rule}. Write `$({ref})`{order}.")
        severity = warning
    elif ref == name:
        message = (f"`{written}` in `{name}` stays literal text: {rule}, and not the image's own `{name}`, so "
                   f"this value replaces the image's instead of extending it. Write the complete value.")
        severity = info
    else:
        message = (f"`{written}` in `{name}` stays literal text: {rule}. Define `{ref}` in the env and write "
                   f"`$({ref})`, or write the value itself (ignore this if the file is substituted before it "
                   f"is applied).")
        severity = info
    return ctx.finding(_at(scalar, reference), message, about=container, value=f"env:{name}:{written}",
                       severity=severity)


def _argv_finding(ctx: Context, container: Container, scalar: Scalar, reference: Reference,
                  defined: dict[str, int], data: _Data, warning: Severity, info: Severity) -> Finding | None:
    ref, written = reference.name, reference.written
    args = container.args
    field = "args" if isinstance(args, Sequence) and any(scalar is item for item in args.items) else "command"
    rule = ("Kubernetes expands only `$(NAME)` in `command` and `args`, and no shell runs in between, so vLLM "
            f"receives `{written}` as written")
    if ref in defined:
        message = f"`{written}` in {field}: {rule}. Write `$({ref})`."
        severity = warning
    elif _credential(ref, data.credential_words):
        message = (f"`{written}` in {field}: {rule}. Define `{ref}` from a Secret (`valueFrom.secretKeyRef`) and "
                   f"write `$({ref})`.")
        severity = warning
    else:
        message = (f"`{written}` in {field}: {rule}. Define `{ref}` in the container's env and write `$({ref})`, "
                   f"or write the value itself (ignore this if the file is substituted before it is applied).")
        severity = info
    return ctx.finding(_at(scalar, reference), message, about=container, value=f"{field}:{written}",
                       severity=severity)
