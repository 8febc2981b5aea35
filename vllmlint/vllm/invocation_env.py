"""The environment variables each vLLM invocation of the run sees, from every place the run writes them: one
function the rules that judge variables by name share (VL109 the `VLLM_*` ones, VL723 the model streamer's).

- a container's `env`/`envFrom` (Kubernetes, with ConfigMaps of the run resolved) and a Compose service's
  `environment`/`env_file` (`Container.resolved_env`);
- the assignments of the container's shell script, of a standalone script or a Markdown shell block
  (`export NAME=value`, `NAME=value vllm serve ...`: `script_assignments`), seen by the vLLM that script runs
  (not by a `docker run` it launches: those set the docker client's environment);
- a `docker run -e NAME=value` / `--env NAME=value` of the command that launches the vLLM image;
- a Dockerfile's `ENV` (the final stage and the stages it continues), seen by the server its image runs, and
  by a Compose service that builds it (unless the service's own `environment`/`env_file` sets the variable);
- an operator's resource: what its controller copies into the container it builds (production-stack's
  `VLLMRuntime` `spec.vllmConfig.env`, a Helm chart's values: `operator_env`).

Each variable comes with where its name and value are written, so a rule points at either.
"""
from __future__ import annotations

from typing import Any

from vllmlint.records import dataclass

from vllmlint.k8s.pod import LITERAL, UNKNOWN, EnvVar
from vllmlint.source.yamlmodel import Mapping

CONTAINER, SCRIPT, DOCKER_RUN, DOCKERFILE, OPERATOR = "container", "script", "docker-run", "dockerfile", "operator"


@dataclass(frozen=True)
class SeenVar:
    """One variable a vLLM invocation sees and where the run writes it."""

    name: str
    value: str | None  # the value when the run knows it (a literal, a ConfigMap's key), else None
    origin: str  # vllmlint.k8s.pod's LITERAL, CONFIG_MAP, SECRET, FIELD, RESOURCE, UNKNOWN
    where: Any  # the name's node or token: what a finding about the name points at
    value_at: Any  # the value's node or token (the name's when the value is not written)
    about: Any  # the container, the operator's resource, or the invocation (a script's)
    scope: Any  # what holds the whole environment: the container, the script's file, the resource, the invocation
    invocations: tuple  # the vLLM invocations that see it
    kind: str  # CONTAINER, SCRIPT, DOCKER_RUN, DOCKERFILE or OPERATOR
    var: EnvVar | None = None  # a container's own variable (with its envFrom/valueFrom origin)


def invocation_env(world: Any, prefixes: tuple[str, ...]) -> list[SeenVar]:
    """Every variable whose name starts with one of `prefixes` that a vLLM invocation of the run sees."""
    found: list[SeenVar] = []
    by_container: dict[int, list] = {}
    for invocation in world.invocations:
        if invocation.container is not None:
            by_container.setdefault(id(invocation.container), []).append(invocation)
    for invocations in by_container.values():
        container = invocations[0].container
        own = container.resolved_env(world)
        for var in own:
            if var.name.startswith(prefixes):
                found.append(SeenVar(var.name, var.value, var.origin, _name_node(container, var),
                                     var.source if var.source is not None else var.node, container, container,
                                     tuple(invocations), CONTAINER, var))
        built = invocations[0].built  # a Compose service's `build:`: the image's ENV, unless the service sets it
        if built is not None and built.source is not None:
            written = {var.name for var in own}
            for seen in _stage_env(built.env, built.source, prefixes, container, container, tuple(invocations)):
                if seen.name not in written:
                    found.append(seen)
    found.extend(_script_env(world, prefixes, by_container))
    found.extend(_docker_run_env(world, prefixes))
    for invocation in world.invocations:
        # "dockerfile": vllm.dockerfile.VIA_DOCKERFILE, not imported for it (a run without Dockerfiles loads no
        # Dockerfile reader)
        if invocation.via == "dockerfile" and invocation.container is None:
            found.extend(_dockerfile_env(invocation, prefixes))
        elif invocation.container is None and invocation.owner is not None:
            from vllmlint.vllm.invocation import operator_env

            for name, value, node in operator_env(invocation.owner):
                if name.startswith(prefixes):
                    found.append(SeenVar(name, value, LITERAL if value is not None else UNKNOWN, node, node,
                                         invocation.owner, invocation.owner, (invocation,), OPERATOR))
    return found


def _name_node(container: Any, var: EnvVar) -> Any:
    """The name of a container's variable (`name:` of a Kubernetes entry, the key of a Compose `environment` map;
    a Compose list entry `NAME=value` is its own node)."""
    if container.is_compose:
        environment = container.node.get("environment")
        key = environment.key_node(var.name) if isinstance(environment, Mapping) else None
        if key is not None:
            return key
    item = container.env_node(var.name)
    key = item.get("name") if isinstance(item, Mapping) else None
    if key is not None:
        return key
    return item if item is not None else var.node


def _script_env(world: Any, prefixes: tuple[str, ...], by_container: dict[int, list]) -> list[SeenVar]:
    """The assignments of shell scripts: a container's (seen by its vLLM, unless its own env names the variable)
    and standalone scripts' (seen by the vLLM the same file runs itself, not one a `docker run` launches)."""
    if not any(invocation.container is None or invocation.script is not None for invocation in world.invocations):
        return []
    from vllmlint.vllm.invocation import script_assignments

    runs: dict[int, list] = {}  # the script's source file (standalone) or container -> its invocations
    for invocation in world.invocations:
        if invocation.launched is not None:
            continue  # `docker run`: the script's variables set the docker client's environment, not vLLM's
        if invocation.container is None:
            runs.setdefault(id(invocation.anchor.source), []).append(invocation)
        elif invocation.script is not None:
            runs.setdefault(id(invocation.container), []).append(invocation)
    found: list[SeenVar] = []
    for assignment in script_assignments(world, prefixes):
        name = assignment.name
        if not name.startswith(prefixes):
            continue
        container = assignment.container
        if container is not None and name in container.env:
            continue  # the container's own env names it (seen above)
        key = id(container) if container is not None else id(assignment.token.source)
        invocations = runs.get(key)
        if not invocations:
            continue  # no vLLM that this script runs itself
        token = assignment.token
        value = None if token.dynamic else assignment.value
        found.append(SeenVar(name, value, LITERAL if value is not None else UNKNOWN, token, token,
                             container if container is not None else invocations[0],
                             container if container is not None else token.source, tuple(invocations), SCRIPT))
    return found


def _docker_run_env(world: Any, prefixes: tuple[str, ...]) -> list[SeenVar]:
    """`-e NAME=value` / `--env NAME=value` of the `docker run` command that launches a vLLM image."""
    launched = [invocation for invocation in world.invocations if invocation.launched is not None]
    if not launched:
        return []
    from vllmlint.vllm.invocation import script_assignments

    assignments = [a for a in script_assignments(world, prefixes) if a.name.startswith(prefixes)]
    found: list[SeenVar] = []
    for invocation in launched:
        command = _command_of(world, invocation)
        if command is None:
            continue
        first, last = command.tokens[0], command.tokens[-1]
        for assignment in assignments:
            token = assignment.token
            if token.source is first.source and first.start <= token.start and token.end <= last.end:
                value = None if token.dynamic else assignment.value
                found.append(SeenVar(assignment.name, value, LITERAL if value is not None else UNKNOWN, token,
                                     token, invocation, invocation, (invocation,), DOCKER_RUN))
    return found


def _command_of(world: Any, invocation: Any) -> Any:
    """The shell command (`docker run ... IMAGE ARGS`) whose words hold the invocation's first written word."""
    word = next((token for token in invocation.entry + invocation.tokens if token.source is not None), None)
    if word is None:
        return None
    for command in world.shell_commands:
        tokens = command.tokens
        if (tokens and tokens[0].source is word.source and tokens[0].start <= word.start
                and word.end <= tokens[-1].end):
            return command
    return None


def _dockerfile_env(invocation: Any, prefixes: tuple[str, ...]) -> list[SeenVar]:
    """The `ENV` of the Dockerfile stage whose `ENTRYPOINT`/`CMD` is the invocation."""
    source = invocation.source
    if source is None:
        return []
    from vllmlint.source.dockerfile import read_dockerfile

    stage = read_dockerfile(source.text).final
    if stage is None:
        return []
    return _stage_env(stage.effective_env(), source, prefixes, invocation, source, (invocation,))


def _stage_env(effective: dict, source: Any, prefixes: tuple[str, ...], about: Any, scope: Any,
               invocations: tuple) -> list[SeenVar]:
    """A Dockerfile stage's `ENV` (`Stage.effective_env`), written in `source`, as the variables `invocations` see
    (`scope`: the Dockerfile alone, or the Compose service whose environment the image's joins)."""
    from vllmlint.vllm.invocation import Token

    found: list[SeenVar] = []
    for name, env in effective.items():
        if not name.startswith(prefixes):
            continue
        word, value_word = env.name_word, env.value_word
        where = Token(name, source, word.start, word.end)
        value_at = Token(value_word.text, source, value_word.start, value_word.end, value_word.dynamic)
        value = None if value_word.dynamic else env.value
        found.append(SeenVar(name, value, LITERAL if value is not None else UNKNOWN, where, value_at, about,
                             scope, invocations, DOCKERFILE))
    return found


__all__ = ["SeenVar", "invocation_env", "CONTAINER", "SCRIPT", "DOCKER_RUN", "DOCKERFILE", "OPERATOR"]
