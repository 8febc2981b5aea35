"""The vLLM server a Dockerfile's image runs: its last stage's `ENTRYPOINT` and `CMD` (inherited through the stages
it continues, or the base image's own entrypoint from `data/image-entrypoints.yaml`), the release its base image
tag names or a `RUN pip install vllm==X` of the stage installs over it.

Only what the file says: a build argument given on the command line, the base image's own `ENV`, and where the
image runs (GPUs, ports, probes) are not in a Dockerfile, so the rules that judge those stay silent on it.
"""
from __future__ import annotations

from typing import Final

from vllmlint.source.dockerfile import Command, Dockerfile, Stage, read_dockerfile, split_words
from vllmlint.source.shell import read_script
from vllmlint.source.yamlmodel import SourceFile
from vllmlint.vllm.images import parse_image
from vllmlint.vllm.invocation import (Invocation, ShellCommand, Token, _match_vllm, image_entrypoint)

VIA_DOCKERFILE: Final = "dockerfile"  # a Dockerfile's ENTRYPOINT/CMD (and the base image's entrypoint)
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh"})


def dockerfile_invocations(source: SourceFile, commands: list[ShellCommand] | None = None) -> list[Invocation]:
    """The vLLM server invocations the image a Dockerfile builds runs (zero or one); its commands are appended to
    `commands` (for the rules that read every command the run executes)."""
    dockerfile = read_dockerfile(source.text)
    stage = dockerfile.final
    if stage is None:
        return []
    base = stage.base_image
    image = parse_image(base.text) if base is not None and not base.dynamic else None
    argvs = _argvs(source, stage, image)
    found: list[Invocation] = []
    pin = _installed(source, dockerfile, stage)
    for tokens in argvs:
        if commands is not None:
            commands.append(ShellCommand(tokens, None, VIA_DOCKERFILE))
        match = _match_vllm(tokens)
        if not match:
            continue
        kind, size = match
        invocation = Invocation(kind, tokens[:size], tokens[size:], None, VIA_DOCKERFILE, image)
        if pin is not None:
            # (release, origin) pinned outside the image tag: a `RUN pip install vllm==X` of the image's stages.
            invocation.operator_release = pin
        found.append(invocation)
    return found


def _tokens(source: SourceFile, command: Command) -> list[list[Token]]:
    """The argv of an exec-form command, or the simple commands of a shell-form one or of `sh -c SCRIPT`."""
    if command.exec_form:
        words = command.words
        if _is_shell(command) and len(words) >= 3 and words[1].text in ("-c", "-lc", "-ec"):
            script = words[2]
            # A JSON string without escapes stands in the file as written: its words keep their own offsets;
            # otherwise they point at the whole string.
            plain = script.end - script.start == len(script.text) + 2
            return [[Token(w.text, source, script.start + 1 + w.start if plain else script.start,
                           script.start + 1 + w.end if plain else script.end, w.dynamic) for w in c.words]
                    for c in read_script(script.text).commands]
        return [[Token(w.text, source, w.start, w.end, "$" in w.text) for w in words]]
    if command.script is None or not command.script_offsets:
        return []
    start, end = command.script_offsets[0], command.script_offsets[-1] + 1
    # The shell form's text, continuation lines included, is read where it stands in the file: its offsets are the
    # file's (a backslash-newline is a continuation to the shell too).
    return [[Token(w.text, source, w.start, w.end, w.dynamic) for w in c.words]
            for c in read_script(source.text, start, end).commands]


def _argvs(source: SourceFile, stage: Stage, image) -> list[list[Token]]:
    """The commands the image runs: an exec-form `ENTRYPOINT` with an exec-form `CMD` as its arguments; a shell
    (shell form, or `sh -c SCRIPT`) runs its script's commands; no `ENTRYPOINT`: the base image's own (from the
    image table) with `CMD` as its arguments, or `CMD` alone."""
    entrypoint = stage.effective_entrypoint()
    cmd = stage.effective_cmd()
    if entrypoint is not None:
        if not entrypoint.exec_form or _is_shell(entrypoint):
            return _tokens(source, entrypoint)  # Docker hands a shell-form ENTRYPOINT no CMD
        (entry,) = _tokens(source, entrypoint) or [[]]
        return [entry + _cmd_args(source, cmd)] if entry else []
    if cmd is None:
        return []
    if image is not None and cmd.exec_form:
        inherited = image_entrypoint(image)
        if inherited:
            return [[Token(text, None) for text in inherited] + _cmd_args(source, cmd)]
    return _tokens(source, cmd)


def _is_shell(command: Command) -> bool:
    return bool(command.words) and command.words[0].text.rsplit("/", 1)[-1] in _SHELLS


def _cmd_args(source: SourceFile, cmd: Command | None) -> list[Token]:
    """`CMD` as the arguments of an exec-form `ENTRYPOINT` (a shell-form `CMD` is handed over as `/bin/sh -c TEXT`,
    which no server reads: left out)."""
    if cmd is None or not cmd.exec_form:
        return []
    return [Token(w.text, source, w.start, w.end, "$" in w.text) for w in cmd.words]


def _installed(source: SourceFile, dockerfile: Dockerfile, stage: Stage) -> tuple[str, str] | None:
    """(release, origin) of the last `RUN pip install vllm==X` in the stages the image is built from."""
    from vllmlint.vllm.release import install_pin

    chain: list[Stage] = []
    current: Stage | None = stage
    while current is not None and len(chain) < 1000:
        chain.append(current)
        current = current.parent
    pin = None
    for part in reversed(chain):
        for instruction in part.instructions:
            if instruction.keyword != "RUN" or "vllm" not in instruction.args:
                continue
            for command in read_script(instruction.args).commands:
                found = install_pin([w.text for w in command.words])
                if found is not None:
                    line, _ = source.line_col(instruction.start)
                    pin = (found[0], f"`RUN pip install {found[1]}` at line {line}")
    return pin


__all__ = ["VIA_DOCKERFILE", "dockerfile_invocations", "split_words"]


# --- a Compose service that builds its image --------------------------------------------------------------
class Built:
    """What a Compose service's `build:` gives it, from a Dockerfile of the run: the image the build starts from,
    the Dockerfile's `ENTRYPOINT` and `CMD` (exec form) as tokens in the Dockerfile, a release it installs, and
    the image's `ENV` (name -> the source Stage.effective_env's value) with the Dockerfile it is written in."""

    def __init__(self, path: str, image, entry: list[Token] | None, cmd: list[Token], pin: tuple[str, str] | None,
                 source: SourceFile | None = None, env: dict | None = None):
        self.path, self.image, self.entry, self.cmd, self.pin = path, image, entry, cmd, pin
        self.source, self.env = source, env or {}

    @property
    def note(self) -> str:
        return f", built from {self.path}"


def compose_build(service, sources) -> Built | None:
    """The `Built` of a Compose service (a `K8sObject` of kind ComposeService) whose `build:` names a Dockerfile
    among `sources` (the run's files); None without `build:`, for a context elsewhere (a URL, a folder outside the
    run) or an inline Dockerfile. Compose runs the image it builds (also when `image:` names it)."""
    import posixpath

    from vllmlint.source.yamlmodel import Mapping, scalar_str

    found = _build_file(service)
    if found is None:
        return None
    node, context, name = found
    build_args = node.get("args") if isinstance(node, Mapping) else None
    home = posixpath.dirname(service.source.path.replace("\\", "/"))
    wanted = posixpath.normpath(posixpath.join(home, context, name))
    source = next((s for s in sources if posixpath.normpath(s.path.replace("\\", "/")) == wanted), None)
    if source is None:
        return None
    dockerfile = read_dockerfile(source.text)
    if isinstance(build_args, Mapping):  # `args:` override the ARG defaults the FROM lines use
        overrides = {key: scalar_str(value) for key, value in build_args.pairs()}
        if any(value is None or "$" in value for value in overrides.values()):
            return None  # a value from the shell's environment: the base image is not known here
        dockerfile = read_dockerfile(source.text, overrides)
    stage = dockerfile.final
    if stage is None:
        return None
    base = stage.base_image
    image = parse_image(base.text) if base is not None and not base.dynamic else None
    entrypoint, cmd = stage.effective_entrypoint(), stage.effective_cmd()
    entry = None
    if entrypoint is not None:
        argvs = _tokens(source, entrypoint)
        if not entrypoint.exec_form or _is_shell(entrypoint) or len(argvs) != 1:
            return None  # a shell runs the service's command: not followed here
        entry = argvs[0]
    return Built(source.display_path, image, entry, _cmd_args(source, cmd), _installed(source, dockerfile, stage),
                 source, stage.effective_env())


def _build_file(service):
    """(the `build` node, its context, the Dockerfile's name) of a Compose service that builds from a local folder;
    None without `build:`, for a URL or git context, `dockerfile_inline` or a name holding a variable."""
    from vllmlint.source.yamlmodel import Mapping, Scalar, scalar_str

    node = service.node.get("build") if isinstance(service.node, Mapping) else None
    if isinstance(node, Scalar):
        context, name = scalar_str(node), "Dockerfile"
    elif isinstance(node, Mapping) and node.get("dockerfile_inline") is None:
        context = scalar_str(node.get("context")) or "."
        name = scalar_str(node.get("dockerfile")) or "Dockerfile"
    else:
        return None
    if not context or "://" in context or context.startswith("git@") or "$" in context + name:
        return None
    return node, context, name


def unread_build(service, sources) -> tuple[str, int] | None:
    """(a note, its line) for a Compose service that builds its image from a local Dockerfile the run does not
    read: the service runs that image, so nothing about its vLLM can be checked."""
    import posixpath

    found = _build_file(service)
    if found is None or compose_build(service, sources) is not None:
        return None
    node, context, name = found
    home = posixpath.dirname(service.source.display_path.replace("\\", "/"))
    shown = posixpath.normpath(posixpath.join(home, context, name))
    if any(posixpath.normpath(s.display_path.replace("\\", "/")) == shown for s in sources):
        return None  # read, but it holds no final stage or a shell ENTRYPOINT (compose_build says why not)
    key = service.node.key_node("build")
    line = service.source.line_col((key if key is not None else node).start)[0]
    return (f"Compose service {service.name} runs an image built from {shown}, which is not among the linted files: "
            f"its vLLM is not checked (lint it too: `vllmlint {service.source.display_path} {shown}`)", line)
