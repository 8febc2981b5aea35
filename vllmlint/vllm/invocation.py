"""The one place that turns containers and scripts into vLLM invocations: argv tokens with positions.

Rules never split shell strings or walk `command`/`args` themselves: they read `Invocation` objects.
Only invocations recognised as vLLM's server are produced; other programs in the same pod (benchmark
clients, nginx, init containers) never become invocations, so their flags are never checked as vLLM's.
"""
from __future__ import annotations

import re
from vllmlint.records import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Final, Iterator, Literal, Union

from vllmlint.finding import Span
from vllmlint.vllm.images import ImageRef, entry_applies, parse_image
from vllmlint.k8s.objects import Container, World
from vllmlint.vllm.release import release_from_tag
from vllmlint.source.shell import split_commands, script_from_shell_args
from vllmlint.source.yamlmodel import Mapping, Node, Scalar, Sequence, SourceFile, field_at, scalar_str
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.vllm.catalog import OptionSpec, ReleaseCatalog, Resolution
    from vllmlint.vllm.flags import FlagStatus

# `Invocation.kind`: which vLLM server program runs.
SERVE: Final = "serve"
OPENAI_API_SERVER: Final = "openai-api-server"  # python -m vllm.entrypoints.openai.api_server
DEMO_API_SERVER: Final = "demo-api-server"  # python -m vllm.entrypoints.api_server: /generate only

# `Invocation.via`: where its argv came from.
VIA_COMMAND: Final = "command"  # the container's `command` (+ `args`), or a Compose command string
VIA_IMAGE_ENTRYPOINT: Final = "image-entrypoint"  # the image's entrypoint (from the table) + `args`
VIA_SHELL: Final = "shell"  # a `sh -c` / `bash -c` string in `command`/`args`
VIA_CONFIGMAP_SCRIPT: Final = "configmap-script"  # a script mounted from a ConfigMap and run by the container
VIA_SCRIPT: Final = "script"  # a standalone shell script (`*.sh`)
VIA_CONFIGMAP: Final = "configmap"  # a ConfigMap script no container is seen running (shell commands only)

MANY: Final = "many"  # takes_value answer for nargs='+' / '*' options: every following non-flag token
# What option parsing asks of a flag: True/False (takes a value or not), None (unknown: the next token is
# a value unless it looks like a flag) or MANY.
TakesValue = Union[bool, None, Literal["many"]]

_MODULES = {
    "vllm.entrypoints.openai.api_server": OPENAI_API_SERVER,
    "vllm.entrypoints.api_server": DEMO_API_SERVER,
}
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_K8S_VAR = lazy_compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
DEFAULT_PORT = 8000


@dataclass
class Token:
    text: str
    source: SourceFile | None  # None for tokens that come from an image's entrypoint
    start: int = 0  # character offsets into source.text
    end: int = 0
    dynamic: bool = False  # the value is unknown (shell expansion, unresolved $(VAR))
    node: Scalar | None = None  # the YAML scalar holding the token (for fixes)

    @property
    def span(self) -> Span | None:
        return self.source.span(self.start, self.end) if self.source else None

    def __repr__(self) -> str:
        return f"Token({self.text!r})"


@dataclass
class ShellCommand:
    """One command the run can see being executed: its words as tokens with file positions.

    From a container's exec-form `command` list (via "command"), a simple command of its `sh -c` script
    ("shell"), of a ConfigMap script it runs ("configmap-script"), of a Compose command string
    ("command"), of a ConfigMap script no container is seen running ("configmap"), or of a `*.sh` file or
    Markdown shell block ("script"). `exec`/`env`/assignment prefixes are already stripped.
    """

    tokens: list[Token]
    container: Container | None  # None for a standalone script or an unmounted ConfigMap script
    via: str
    script: Scalar | None = None  # the shell-string scalar holding the tokens, if any

    @property
    def words(self) -> list[str]:
        return [token.text for token in self.tokens]


@dataclass
class Option:
    """One option of an invocation's argv as written (what the release catalog's `OptionSpec` describes)."""

    token: Token  # the token holding the flag (`--port` or `--port=8000`)
    name: str  # the flag as written, without any `=value`
    value: str | None
    value_token: Token | None  # the token holding the value (the same token for `--flag=value`)
    inline: bool = False
    extra_values: list[Token] = field(default_factory=list)  # further value tokens of a nargs='+' option
    resolution: Resolution | None = None  # how the target release's parser reads the flag
    status: FlagStatus | None = None  # ok, removed, too-new, unknown, ambiguous, absorbed (flags.OK, ...)
    # `--port --served-model-name x`: the flag-looking word that followed an option needing a value. argparse
    # never takes it as the value (it stops with "expected one argument"), so it is read as the next option.
    next_flag: str | None = None

    @property
    def spec(self) -> OptionSpec | None:
        """The release's option this flag resolves to (None when unknown, ambiguous or not resolved)."""
        return self.resolution.option if self.resolution is not None else None

    @property
    def canonical(self) -> str:
        """The option the release's parser maps this flag to (`--max_model_len` -> `--max-model-len`)."""
        spec = self.spec
        return spec.canonical_flag if spec is not None else self.name.replace("_", "-")

    @property
    def value_known(self) -> bool:
        return self.value is not None and not (self.value_token and self.value_token.dynamic)

    @property
    def joined(self) -> bool:
        """A flag and more in one argv item (`"--quantization awq"`): argparse never splits an item at a
        blank, so it reads no option here (a stray positional, or `-q` with the value " awq")."""
        return is_joined(self.name)


def is_joined(flag: str) -> bool:
    """Whether a flag as written (without `=value`) holds blanks: one argv item with several words."""
    if not flag:
        return False
    words = flag.split(None, 1)  # str.split's blanks are str.isspace's: no generator per character
    return len(words) != 1 or words[0] != flag


@dataclass
class Invocation:
    kind: str  # SERVE, OPENAI_API_SERVER or DEMO_API_SERVER
    entry: list[Token]  # the tokens that start vLLM (synthetic when they come from the image)
    tokens: list[Token]  # the arguments after the entrypoint
    container: Container | None  # None for a standalone shell script
    via: str  # VIA_COMMAND, VIA_IMAGE_ENTRYPOINT, VIA_SHELL, VIA_CONFIGMAP_SCRIPT or VIA_SCRIPT
    image: ImageRef | None = None
    release: str | None = None  # the vLLM release it runs, when the manifest says (image tag, pin, annotation)
    release_origin: str = ""  # where `release` came from
    # The release catalog the flags are checked against (the release's, or the one assumed): set by
    # `flags.resolve_invocation`, which the engine runs on every invocation before any rule reads it.
    catalog: ReleaseCatalog = field(init=False, repr=False)
    assumed: bool = False  # True when the release is unknown and `catalog` is an assumption
    beyond_catalog: bool = False  # the release is newer than the newest catalog: new flags may be missing
    options: list[Option] = field(default_factory=list)
    positionals: list[Token] = field(default_factory=list)
    script: Scalar | None = None  # the shell-string scalar holding the tokens, if any
    owner: Any = None  # the object (K8sObject) of an invocation without a container: an operator's resource
    operator_release: tuple[str, str] | None = None  # (release, origin) an operator pins (KAITO's vLLM)
    image_note: str = ""  # how a Compose `image` was interpolated (`, ${TAG:-v0.8.5} at its default`)
    built: Any = None  # the Dockerfile a Compose service's `build:` runs (vllm.dockerfile.Built): its ENV
    # `docker run`/`podman run ... IMAGE` in a script started it: the image it runs and, when the image was
    # a variable the script sets (`IMAGE=...; docker run "$IMAGE"`), where (see `launched_image`).
    launched: LaunchedImage | None = None
    # Vendor builds (data/image-entrypoints.yaml, set by `mark_vendor_build`): the fork or rebuild the image is,
    # the option values its plugin registers, and whether the entrypoint is assumed (an image not in the
    # table whose repository name contains `vllm`: its `args` are read as vLLM's OpenAI server's).
    fork: str | None = None
    plugin_values: dict[str, frozenset[str]] = field(default_factory=dict)
    entrypoint_assumed: bool = False
    _option_index: tuple | None = field(default=None, repr=False)  # (options list, name -> positions): option()

    def parse(self, takes_value: Callable[[str], TakesValue] | None = None) -> None:
        self.options, self.positionals = parse_options(self.tokens, takes_value or default_takes_value)

    def option(self, *names: str) -> list[Option]:
        """Options by canonical name: `--max_model_len`, `--max-model` (a prefix) and `-tp` all count."""
        index = self._option_index
        if index is None or index[0] is not self.options:
            index = self._option_index = (self.options, _options_by_name(self.options))
        by_name = index[1]
        if len(names) == 1:
            return [self.options[i] for i in by_name.get(names[0], ())]
        positions = sorted({i for name in names for i in by_name.get(name, ())})
        return [self.options[i] for i in positions]

    @property
    def config_file(self) -> Option | None:
        """`--config FILE`: vLLM inserts the options of a YAML file (any of them: `download-dir`,
        `enforce-eager`, ...) before the command line's (FlexibleArgumentParser.parse_args ->
        _pull_args_from_config: vllm/utils.py 0.6.2 lines 1126-1127, vllm/utils/__init__.py 0.10.1.1 lines
        1784-1785, vllm/utils/argparse_utils.py 0.33.0 lines 371-372). The run does not read that file:
        whatever an option there may set is unknown. Only the exact word `--config` triggers it (`'--config'
        in args`): `--config=FILE` is parsed as an option and the file is never read."""
        for option in self.options:
            if option.name == "--config" and not option.inline:
                return option
        return None

    @property
    def source(self) -> SourceFile | None:
        for token in self.entry + self.tokens:
            if token.source is not None:
                return token.source
        return None

    @property
    def anchor(self) -> Token:
        """The token a finding about the whole invocation points at."""
        for token in self.entry + self.tokens:
            if token.source is not None:
                return token
        # The image's own entrypoint and no word from a file (a container of only `image:`): the container's
        # image, else the container itself, is where the server is written.
        container = self.container
        for node in (container.image, container.node) if container is not None else ():
            if node is not None and node.source is not None:
                scalar = node if isinstance(node, Scalar) else None
                return Token(scalar.text if scalar is not None else "", node.source, node.start, node.end, node=scalar)
        raise ValueError("invocation without any token from a file")

    @property
    def model_positionals(self) -> list[Token]:
        """Positionals argparse would read as such: not the further words of an `nargs='+'` option
        (`--served-model-name a b`), which the generic option parser leaves as positionals."""
        by_token = {id(o.token): o for o in self.options}
        positional_ids = {id(t) for t in self.positionals}
        result: list[Token] = []
        in_list = False
        for token in self.tokens:
            option = by_token.get(id(token))
            if option is not None:
                spec = option.spec
                in_list = spec is not None and spec.nargs in ("+", "*") and option.value is not None
            elif id(token) in positional_ids and not in_list:
                result.append(token)
        return result

    @property
    def model(self) -> Token | None:
        """The token naming the model. `vllm serve serve MODEL` (conflicting-args, VL107) means MODEL: the rules
        that need the model judge the one the author meant."""
        if self.kind == SERVE and self.positionals:
            positionals = self.positionals
            if positionals[0].text == "serve" and len(positionals) > 1:
                return positionals[1]
            return positionals[0]
        for option in self.option("--model"):
            return option.value_token
        # `args: [MODEL]` written for `vllm serve` to an image running the api_server (positional-model-ignored,
        # VL715): the rules that need the model judge the one the author meant.
        meant = [t for t in self.model_positionals if t.text not in ("serve", "vllm")]
        if meant and not meant[0].dynamic and meant[0].text[:1].isalnum() and "=" not in meant[0].text:
            return meant[0]
        return None

    @property
    def model_name(self) -> str | None:
        """The model as vLLM reads it: the text after `=` for `--model=X`; None without a model token."""
        token = self.model
        if token is None:
            return None
        text = token.text
        return text.partition("=")[2] if text.startswith("-") and "=" in text else text

    @property
    def api_port(self) -> int | None:
        """The port the API (and /metrics) listens on: `--port`, default 8000; None when unknown (a value not in
        the manifest, or a `--config` file that may set `port`: the command line wins over the file)."""
        ports = self.option("--port")
        if not ports:
            return None if self.config_file is not None else DEFAULT_PORT
        last = ports[-1]
        if not last.value_known or last.value is None:
            return None
        try:
            return int(last.value)
        except (TypeError, ValueError):
            return None


# --- option parsing -------------------------------------------------------------------------------
# Switches that take no value, for when no release catalog says otherwise.
_SWITCHES = {
    "--enable-prefix-caching", "--enable-chunked-prefill", "--trust-remote-code", "--enforce-eager",
    "--disable-log-requests", "--enable-log-requests", "--disable-log-stats", "--enable-lora",
    "--headless", "--enable-auto-tool-choice", "--use-v2-block-manager", "--worker-use-ray",
    "--engine-use-ray", "--enable-metrics", "--disable-custom-all-reduce", "--disable-frontend-multiprocessing",
    "--enable-reasoning", "--skip-tokenizer-init", "--disable-sliding-window", "--enable-expert-parallel",
    "--no-enable-prefix-caching", "--no-enable-chunked-prefill", "--enable-sleep-mode", "--async-scheduling",
    "--disable-fastapi-docs", "--enable-prompt-tokens-details", "--enable-server-load-tracking",
    "--return-tokens-as-token-ids", "--disable-async-output-proc", "--enable-prompt-adapter",
    "--multi-step-stream-outputs", "--disable-uvicorn-access-log", "--trust-request-mm-kwargs",
}


def default_takes_value(name: str) -> bool | None:
    return False if name.replace("_", "-") in _SWITCHES else None


def _looks_like_flag(text: str) -> bool:
    return text.startswith("-") and len(text) > 1 and not re.match(r"^-\d", text)


def parse_options(tokens: list[Token], takes_value: Callable[[str], TakesValue]) -> tuple[list[Option], list[Token]]:
    """Split arguments into options and positionals. `takes_value(flag)` answers True/False, or None
    when it does not know: then the next token is a value unless it looks like a flag."""
    options: list[Option] = []
    positionals: list[Token] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        text = token.text
        if text == "--":
            positionals.extend(tokens[i + 1:])
            break
        if not _looks_like_flag(text) or token.dynamic and not text.split("=", 1)[0].startswith("-"):
            positionals.append(token)
            i += 1
            continue
        name, eq, value = text.partition("=")
        if eq:
            options.append(Option(token, name, value, token, inline=True))
            i += 1
            continue
        # A joined item (`"--quantization awq"`) is not an option to argparse: it takes no next token.
        answer = False if is_joined(name) else takes_value(name)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if answer == MANY:  # nargs='+': every following token up to the next flag
            j = i + 1
            while j < len(tokens) and not _looks_like_flag(tokens[j].text):
                j += 1
            values = tokens[i + 1:j]
            option = Option(token, name, " ".join(t.text for t in values) if values else None,
                            values[0] if values else None)
            option.extra_values = values[1:]
            options.append(option)
            i = j
            continue
        flag_next = nxt is not None and _looks_like_flag(nxt.text) and not nxt.dynamic
        if nxt is not None and (answer is True and not flag_next or answer is None and not _looks_like_flag(nxt.text)):
            options.append(Option(token, name, nxt.text, nxt))
            i += 2
        else:
            options.append(Option(token, name, None, None, next_flag=nxt.text if answer is True and flag_next
                                  and nxt is not None else None))
            i += 1
    return options, positionals


# --- recognising vLLM -----------------------------------------------------------------------------
def _match_vllm(tokens: list[Token]) -> tuple[str, int] | None:
    """(kind, number of entry tokens) when `tokens` starts the vLLM server."""
    if not tokens:
        return None
    program = tokens[0].text.rsplit("/", 1)[-1]
    if program == "vllm" and len(tokens) > 1 and tokens[1].text == "serve":
        return SERVE, 2
    if _PYTHON.match(program):
        i = 1
        while i < len(tokens) and tokens[i].text.startswith("-") and tokens[i].text != "-m":
            i += 1  # interpreter options such as -u
        if i + 1 < len(tokens) and tokens[i].text == "-m":
            module = tokens[i + 1].text
            if module in _MODULES:
                return _MODULES[module], i + 2
            if module == "vllm.entrypoints.cli.main" and i + 2 < len(tokens) and tokens[i + 2].text == "serve":
                return SERVE, i + 3
    return None


def joined_vllm_command(token: Token) -> str | None:
    """The server kind (SERVE, ...) when one argv item holds a whole vLLM command line
    (`"vllm serve Qwen/Qwen3-8B --port 8000"`): an exec-form item is one word, never split at blanks."""
    words = token.text.split()
    if len(words) < 2:
        return None
    match = _match_vllm([Token(word, None) for word in words])
    return match[0] if match else None


@lru_cache(maxsize=1)
def _entrypoint_table() -> list[dict[str, Any]]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    path = knowledge_dir() / "image-entrypoints.yaml"
    if not path.exists():
        return []
    data = load_yaml_data(path) or {}
    return data.get("images", []) if isinstance(data, dict) else data


def image_entrypoint(image: ImageRef, release: str | None = None) -> list[str] | None:
    """The command an image runs before its `args`, from the sourced table; None when unknown.
    `release` overrides the tag (to ask what the image would run after an upgrade)."""
    entry = image_entry(image, release)
    return None if entry is None else list(entry.get("entrypoint") or [])


def image_entry(image: ImageRef, release: str | None = None) -> dict[str, Any] | None:
    """The row of data/image-entrypoints.yaml that applies to an image (its entrypoint, `model_positional`,
    `positional_arg`, note and source); None when the image is not in the table."""
    release = release or release_from_tag(image.tag) or _vendor_release(image)
    for entry in _entrypoint_table():
        if entry_applies(entry, image, release):
            return entry if isinstance(entry, dict) else None
    return None


def _scalar_tokens(node: Node | None, container: Container | None) -> list[Token]:
    """Tokens of a `command`/`args` list, with Kubernetes `$(VAR)` expansion from the container env."""
    env = container.env if container is not None and not container.is_compose else {}
    tokens: list[Token] = []
    items = node.items if isinstance(node, Sequence) else []
    for item in items:
        if not isinstance(item, Scalar):
            continue
        text = scalar_str(item) or ""
        dynamic = False
        substituted = item.value is None and _substituted(item)
        if substituted:
            text = item.text  # an OpenShift Template parameter: unknown until `oc process`
        if "$" in text and env is not None:
            text, dynamic = _expand_k8s(text, env)
        dynamic = dynamic or substituted
        tokens.append(Token(text, item.source, item.start, item.end, dynamic, item))
    return tokens


def _expand_k8s(text: str, env: dict[str, str | None]) -> tuple[str, bool]:
    unresolved = False

    def replace(match: re.Match[str]) -> str:
        nonlocal unresolved
        if match.group(0) == "$$":
            return "$"
        value = env.get(match.group(1))
        if value is None:
            unresolved = True
            return match.group(0)
        return value

    return _K8S_VAR.sub(replace, text), unresolved


def _shell_tokens(script: str, scalar: Scalar | None, source: SourceFile,
                 region: tuple[int, int] | None = None) -> list[list[Token]]:
    """Commands of a shell script (of script[region] when given) as token lists; offsets map into the file
    through the scalar."""
    from vllmlint.source.shell import read_script

    result: list[list[Token]] = []
    offsets = scalar.source_indexes() if scalar is not None else None  # `source_index`, looked up once
    last = len(scalar.text) if scalar is not None else 0
    for command in (read_script(script, *region).commands if region is not None else split_commands(script)):
        tokens: list[Token] = []
        for word in command.words:
            if offsets is not None:
                start, end = offsets[min(max(word.start, 0), last)], offsets[min(max(word.end, 0), last)]
            else:
                start, end = word.start, word.end
            tokens.append(Token(word.text, source, start, end, word.dynamic, scalar))
        result.append(tokens)
    return result


def _invocations_in_commands(commands: list[list[Token]], container: Container | None, via: str,
                             image: ImageRef | None, script: Scalar | None,
                             variables: dict[str, ScriptVariable] | None = None) -> Iterator[Invocation]:
    for written in commands:
        tokens, run_image = _unwrap_launcher(written, variables)
        match = _match_vllm(tokens)
        if match:
            kind, size = match
            invocation = Invocation(kind, tokens[:size], tokens[size:], container, via, run_image or image,
                                    script=script)
            if run_image is not None:
                invocation.launched = launched_image(written, run_image, variables)
            yield invocation


# `docker run` options that take a value (the next word, unless written `--opt=value`).
_DOCKER_VALUE_OPTIONS = {
    "-p", "--publish", "-v", "--volume", "-e", "--env", "--env-file", "--name", "--gpus", "--runtime", "--ipc",
    "--shm-size", "--network", "--net", "-w", "--workdir", "--entrypoint", "--mount", "--device", "-u", "--user",
    "-m", "--memory", "--cpus", "-l", "--label", "--platform", "--pull", "--restart", "-h", "--hostname",
    "--add-host", "--ulimit", "--cap-add", "--cap-drop", "--security-opt", "--log-driver", "--log-opt", "--tmpfs",
    "--pid", "--userns", "--cgroupns", "--stop-signal", "--cidfile", "--dns", "--expose", "--group-add",
    "--health-cmd", "--memory-swap", "--cpuset-cpus", "--annotation",
}
_UV_VALUE_OPTIONS = {"--with", "--python", "-p", "--project", "--directory", "--extra", "--group", "--env-file",
                     "--index", "--index-url", "--from", "--with-requirements"}


def _unwrap_launcher(tokens: list[Token], variables: dict[str, ScriptVariable] | None = None
                     ) -> tuple[list[Token], ImageRef | None]:
    """`uv run vllm serve ...` -> `vllm serve ...`; `docker run [opts] IMAGE ARGS` -> what the image runs
    with ARGS (its entrypoint from the table, or `--entrypoint`), and the image. Anything else unchanged."""
    if len(tokens) < 3 or tokens[1].text != "run":
        return tokens, None
    program = tokens[0].text.rsplit("/", 1)[-1]
    if program == "uv":
        rest = _skip_options(tokens[2:], _UV_VALUE_OPTIONS)
        return rest, None
    if program not in ("docker", "podman", "nerdctl"):
        return tokens, None
    entrypoint = None
    i = 2
    while i < len(tokens) and tokens[i].text.startswith("-"):
        text = tokens[i].text
        name, eq, value = text.partition("=")
        takes = name in _DOCKER_VALUE_OPTIONS and not eq
        if name == "--entrypoint":
            entrypoint = value if eq else (tokens[i + 1].text if i + 1 < len(tokens) else None)
        i += 2 if takes else 1
    if i >= len(tokens):
        return tokens, None
    image = parse_image(tokens[i].text)
    if image is None and tokens[i].dynamic and variables:
        # `docker run "$IMAGE"`, with IMAGE set on a line above (a line below has not run yet).
        above = {name: v for name, v in variables.items() if v.token.start < tokens[i].start}
        image = parse_image(expand_variables(tokens[i].text, above) or "")
    if image is None:
        return tokens, None
    args = tokens[i + 1:]
    if not args:
        # `docker run IMAGE` alone (vLLM's docs show it): nothing of vLLM's is written, so nothing to check,
        # and no word of the file to point a finding at.
        return tokens, None
    entry = [entrypoint] if entrypoint else image_entrypoint(image)
    if not entry:
        return tokens, None
    return [Token(text, None) for text in entry] + args, image


def _skip_options(tokens: list[Token], value_options: set[str]) -> list[Token]:
    i = 0
    while i < len(tokens) and tokens[i].text.startswith("-"):
        name, eq, _ = tokens[i].text.partition("=")
        i += 2 if name in value_options and not eq else 1
    return tokens[i:]


def _mounted_script(container: Container, path: str, world: World) -> Scalar | None:
    """The ConfigMap value a container runs as a script (`bash /config/run_server.sh`), if mounted."""
    mounts = container.node.get("volumeMounts")
    volumes = container.pod.spec.get("volumes")
    if not isinstance(mounts, Sequence) or not isinstance(volumes, Sequence):
        return None
    for mount in mounts.items:
        if not isinstance(mount, Mapping):
            continue
        mount_path = (scalar_str(mount.get("mountPath")) or "").rstrip("/")
        volume_name = scalar_str(mount.get("name"))
        sub_path = scalar_str(mount.get("subPath"))
        if not mount_path or not volume_name:
            continue
        if sub_path and path == mount_path:
            key = sub_path
        elif not sub_path and path.startswith(mount_path + "/"):
            key = path[len(mount_path) + 1:]
        else:
            continue
        for volume in volumes.items:
            if not isinstance(volume, Mapping) or scalar_str(volume.get("name")) != volume_name:
                continue
            config_map = volume.get("configMap")
            if not isinstance(config_map, Mapping):
                return None
            items = config_map.get("items")
            if isinstance(items, Sequence):
                for item in items.items:
                    if isinstance(item, Mapping) and scalar_str(item.get("path")) == key:
                        key = scalar_str(item.get("key")) or key
            target = world.find("ConfigMap", scalar_str(config_map.get("name")) or "", container.pod.namespace)
            data = target.node.get("data") if target is not None else None
            value = data.get(key) if isinstance(data, Mapping) else None
            return value if isinstance(value, Scalar) and isinstance(value.value, str) else None
    return None


def container_invocations(container: Container, world: World, upgrade_to: str | None = None,
                          commands: list[ShellCommand] | None = None, builds: dict | None = None
                          ) -> Iterator[Invocation]:
    """The vLLM server invocations a container runs (usually zero or one). Every command it runs (exec
    form, and the commands of the shell scripts it runs) is appended to `commands` when given."""
    # `build:` of a Compose service: what the engine read of that Dockerfile (vllm.dockerfile.compose_build).
    built = builds.get(id(container.pod.owner)) if builds and container.is_compose else None
    for invocation in _container_invocations(container, world, upgrade_to, commands, built):
        if built is not None:
            invocation.built = built
            if built.pin is not None:
                invocation.operator_release = built.pin  # `RUN pip install vllm==X` in the Dockerfile it builds
        yield invocation


def _container_invocations(container: Container, world: World, upgrade_to: str | None,
                           commands: list[ShellCommand] | None, built) -> Iterator[Invocation]:
    seen: list[ShellCommand] = commands if commands is not None else []
    image_scalar = container.image
    image = parse_image(scalar_str(image_scalar) or "") if image_scalar is not None else None
    command_node, args_node = container.command, container.args
    image_note = ""
    if container.is_compose:
        # Compose interpolates `image`, `entrypoint` and `command`, and splits their strings into words.
        image, image_note = compose_image(container)
        composed = compose_argv(container)
        if composed is None:
            return  # Compose refuses the service (an unbalanced quote, an invalid `${...}`)
        command, args = composed
        if built is not None:
            # `build:` a Dockerfile of the run: its base image, ENTRYPOINT and CMD run unless the service's own
            # `entrypoint` / `command` replace them.
            image, image_note = built.image, built.note
            if command is None and built.entry is not None:
                command = built.entry
            if command_node is None and args_node is None and not args:
                args = built.cmd
    elif isinstance(command_node, Scalar) or isinstance(args_node, Scalar):
        yield from _compose_string_invocations(container, command_node, args_node, image, upgrade_to, seen)
        return
    else:
        command = _scalar_tokens(command_node, container) if command_node is not None else None
        args = _scalar_tokens(args_node, container) if args_node is not None else []
    operator = operator_command(container) if not command else None
    if operator is not None:
        seen.append(ShellCommand(operator + args, container, VIA_COMMAND))
        argv, via = operator + args, VIA_COMMAND
    elif command:
        seen.append(ShellCommand(command + args, container, VIA_COMMAND))
        argv, via = command + args, VIA_COMMAND
    elif container.pod.owner.kind in ("RayCluster", "RayService", "RayJob", "RayClusterFleet"):
        return  # KubeRay replaces the image's entrypoint with its own `ray start` command
    elif image is not None:
        entry = image_entrypoint(image, upgrade_to)
        assumed = False
        if entry is None:
            entry, assumed = _assumed_entry(image, args), True
            if entry is None:
                return
        argv = [Token(text, None) for text in entry] + launcher_args(container) + args
        via = VIA_IMAGE_ENTRYPOINT if entry else VIA_COMMAND  # no ENTRYPOINT: `args` are the command
        if not argv:
            return
        if not entry:
            seen.append(ShellCommand(args, container, VIA_COMMAND))
        served = _served_by_entry(image, entry, upgrade_to)
        if served is not None:
            yield Invocation(served, argv[:len(entry)], argv[len(entry):], container, via, image)
            return
        if assumed:
            match = _match_vllm(argv)
            if match:
                found = Invocation(match[0], argv[:match[1]], argv[match[1]:], container, via, image)
                found.entrypoint_assumed = True
                yield found
            return
    else:
        return
    if container.is_compose and via == VIA_IMAGE_ENTRYPOINT and isinstance(args_node, Scalar):
        via = VIA_COMMAND  # a Compose command string: one text (as the shell-mode fixes edit it)
    match = _match_vllm(argv)
    if match:
        kind, size = match
        yield Invocation(kind, argv[:size], argv[size:], container, via, image, image_note=image_note)
        return
    script_index = script_from_shell_args([t.text for t in argv])
    if script_index is not None and script_index < len(argv):
        holder = argv[script_index]
        scalar = holder.node
        if scalar is not None:
            split = _shell_tokens(scalar.text, scalar, scalar.source)
            seen.extend(ShellCommand(tokens, container, VIA_SHELL, scalar) for tokens in split)
            for found in _invocations_in_commands(split, container, VIA_SHELL, image, scalar,
                                                  _launch_variables(scalar.text, scalar)):
                if found.image is image:
                    found.image_note = image_note
                yield found
        return
    # `bash /config/run_server.sh` or `/config/run_server.sh`: a script mounted from a ConfigMap.
    script_path = None
    program = argv[0].text.rsplit("/", 1)[-1] if argv else ""
    if program in ("sh", "bash", "dash") and len(argv) > 1 and not argv[1].text.startswith("-"):
        script_path = argv[1].text
    elif argv and argv[0].text.startswith("/") and argv[0].text.endswith(".sh"):
        script_path = argv[0].text
    if script_path:
        scalar = _mounted_script(container, script_path, world)
        if scalar is not None:
            split = _shell_tokens(scalar.text, scalar, scalar.source)
            seen.extend(ShellCommand(tokens, container, VIA_CONFIGMAP_SCRIPT, scalar) for tokens in split)
            yield from _invocations_in_commands(split, container, VIA_CONFIGMAP_SCRIPT, image, scalar,
                                                _launch_variables(scalar.text, scalar))


def _compose_string_invocations(container: Container, command_node: Node | None, args_node: Node | None,
                                image: ImageRef | None, upgrade_to: str | None = None,
                                seen: list[ShellCommand] | None = None) -> Iterator[Invocation]:
    tokens: list[Token] = []
    for node in (command_node, args_node):
        if isinstance(node, Scalar) and isinstance(node.value, str):
            for command in _shell_tokens(node.text, node, node.source):
                tokens.extend(command)
                if seen is not None and node is command_node:
                    seen.append(ShellCommand(command, container, VIA_COMMAND, node))
        elif isinstance(node, Sequence):
            listed = _scalar_tokens(node, container)
            tokens.extend(listed)
            if seen is not None and node is command_node:
                seen.append(ShellCommand(listed, container, VIA_COMMAND))
    assumed = False
    if command_node is None and image is not None:
        entry = image_entrypoint(image, upgrade_to)
        if entry is None:
            entry, assumed = _assumed_entry(image, tokens), True
            if entry is None:
                return
        served = _served_by_entry(image, entry, upgrade_to)
        tokens = [Token(text, None) for text in entry] + tokens
        if served is not None:
            yield Invocation(served, tokens[:len(entry)], tokens[len(entry):], container, VIA_COMMAND, image)
            return
    match = _match_vllm(tokens)
    if match:
        kind, size = match
        found = Invocation(kind, tokens[:size], tokens[size:], container, VIA_COMMAND, image)
        found.entrypoint_assumed = assumed
        yield found


def script_invocations(source: SourceFile, commands: list[ShellCommand] | None = None) -> list[Invocation]:
    """vLLM invocations in a standalone shell script (`*.sh`); its commands are appended to `commands`."""
    split = _shell_tokens(source.text, None, source, source.region)
    if commands is not None:
        commands.extend(ShellCommand(tokens, None, VIA_SCRIPT) for tokens in split)
    return list(_invocations_in_commands(split, None, VIA_SCRIPT, None, None,
                                         _launch_variables(source.text, None, source, source.region)))


_SCRIPT_KEY = re.compile(r"\.(sh|bash)$")


def find_invocations(world: World, upgrade_to: str | None = None, builds: dict | None = None) -> list[Invocation]:
    """The vLLM invocations of every container; sets `world.shell_commands` to the commands they run,
    then those of the ConfigMap scripts no container was seen running (a head started from a script).
    `builds`: id of a Compose service -> the image its `build:` makes from a Dockerfile of the run."""
    from vllmlint.k8s.objects import add_operator_templates

    add_operator_templates(world)
    result: list[Invocation] = []
    commands: list[ShellCommand] = []
    for container in world.containers:
        result.extend(container_invocations(container, world, upgrade_to, commands, builds))
    read = {id(command.script) for command in commands if command.script is not None}
    for config_map in world.of_kind("ConfigMap"):
        data = config_map.node.get("data")
        if not isinstance(data, Mapping):
            continue
        for key, value in data.pairs():
            if (isinstance(value, Scalar) and isinstance(value.value, str) and id(value) not in read
                    and (_SCRIPT_KEY.search(key) or value.text.startswith("#!"))):
                read.add(id(value))
                commands.extend(ShellCommand(tokens, None, VIA_CONFIGMAP, value)
                                for tokens in _shell_tokens(value.text, value, value.source))
    world.shell_commands = commands
    result.extend(operator_invocations(world))
    result.extend(ray_invocations(world))
    result.extend(config_file_invocations(world))
    result.extend(llmaz_invocations(world))
    return result


# `exec` and the like only replace the shell: they set nothing in vLLM's environment.
_HARMLESS_PREFIXES = frozenset({"exec", "nohup", "time", "command", "builtin"})


def runs_alone(invocation: Invocation) -> bool:
    """Whether the shell script holding an invocation (`sh -c`, a mounted script) runs nothing but vLLM: one
    simple command, without `VAR=value` or `env` prefixes. Then the script sets no variable, writes no token
    file and fetches nothing before vLLM starts. Exec-form invocations (no script) run alone by definition."""
    script = invocation.script
    if script is None:
        return True
    commands = split_commands(script.text)
    if len(commands) != 1:
        return False
    command = commands[0]
    prefix = script.text[command.start:command.words[0].start].split() if command.words else []
    return all(word in _HARMLESS_PREFIXES for word in prefix)


def own_entrypoint_row(invocation: Invocation) -> dict[str, Any] | None:
    """The image table row (data/image-entrypoints.yaml) when the invocation runs its image's own entrypoint
    (no `command` written, or `docker run IMAGE ...` in a script: the entry tokens come from the table); None
    otherwise."""
    if invocation.image is None or any(t.source is not None for t in invocation.entry):
        return None
    release = invocation.release if invocation.release_origin == "--upgrade-to" else None
    entry = image_entry(invocation.image, release)
    if entry is None or [t.text for t in invocation.entry] != list(entry.get("entrypoint") or []):
        return None
    return entry


@dataclass
class ShellAssignment:
    """A variable a shell script of the run sets: `NAME=value` before a command or on its own line, `env
    NAME=value`, `export NAME=value` (and declare/typeset/readonly/local), or a container engine's `-e
    NAME=value` / `--env NAME=value`. `token` is the whole `NAME=value` word, in its file."""

    name: str
    value: str
    token: Token
    container: Container | None  # the container whose script it is; None for a standalone script
    via: str


_EXPORTS = frozenset({"export", "declare", "typeset", "readonly", "local"})
_ENV_OPTIONS = frozenset({"-e", "--env"})


def _split_assignment(text: str) -> tuple[str, str] | None:
    name, eq, value = text.partition("=")
    if not eq or not name or not name.replace("_", "a").isalnum() or name[:1].isdigit():
        return None
    return name, value


def script_assignments(world: World, needles: tuple[str, ...] = ()) -> list[ShellAssignment]:
    """Every variable assignment in the shell commands of the run (`world.shell_commands` and the scripts
    they come from). With `needles`, only scripts whose text holds one of them are read again for their
    leading and standalone assignments (which `ShellCommand.tokens` leave out)."""
    in_commands, scripts = world.fact(_command_assignments)
    found = list(in_commands)
    read = world.fact(_script_assignment_words)
    for holder, container, via in scripts:
        text = holder.text
        region = holder.region if isinstance(holder, SourceFile) else None  # a Markdown shell block: its own part
        if needles and not any(needle in (text if region is None else text[region[0]:region[1]])
                               for needle in needles):
            continue
        assigned = read.get(id(holder))
        if assigned is None:
            assigned = read[id(holder)] = _assignment_words(holder, region)
        for name, value, token in assigned:
            found.append(ShellAssignment(name, value, token, container, via))
    return found


def _command_assignments(world: World) -> tuple[list[ShellAssignment], list[tuple[Scalar | SourceFile,
                                                                                   Container | None, str]]]:
    """(the assignments the words of the run's commands make: `export NAME=value`, `-e NAME=value`,
    `--env=NAME=value`; the scripts those commands come from, each once, in run order): what
    `script_assignments` reads whatever it looks for, once per world."""
    found: list[ShellAssignment] = []
    scripts: dict[int, tuple[Scalar | SourceFile, Container | None, str]] = {}
    for command in world.shell_commands:
        tokens = command.tokens
        words = command.words
        if command.script is not None:
            scripts.setdefault(id(command.script), (command.script, command.container, command.via))
        elif command.via == VIA_SCRIPT and tokens and tokens[0].source is not None:
            scripts.setdefault(id(tokens[0].source), (tokens[0].source, None, command.via))
        for index, token in enumerate(tokens):
            text = token.text
            if index == 0:
                continue
            if words[0] in _EXPORTS and not text.startswith("-"):
                pair = _split_assignment(text)
            elif words[index - 1] in _ENV_OPTIONS:
                pair = _split_assignment(text)
            elif text.startswith("--env="):
                pair = _split_assignment(text[len("--env="):])
            else:
                continue
            if pair is not None:
                found.append(ShellAssignment(pair[0], pair[1], token, command.container, command.via))
    return found, list(scripts.values())


def _script_assignment_words(world: World) -> dict[int, list[tuple[str, str, Token]]]:
    """The memo of `_assignment_words` per script of the world (filled as rules ask: VL109, VL802 and VL721
    ask for the same scripts, which are then read once)."""
    return {}


def _assignment_words(holder: Scalar | SourceFile, region: tuple[int, int] | None) -> list[tuple[str, str, Token]]:
    """The leading and standalone `NAME=value` words of one script, as (name, value, token in its file)."""
    from vllmlint.source.shell import read_script

    text = holder.text
    scalar = holder if isinstance(holder, Scalar) else None
    source = holder.source if isinstance(holder, Scalar) else holder
    words: list[tuple[str, str, Token]] = []
    offsets = scalar.source_indexes() if scalar is not None else None  # `source_index`, looked up once
    last = len(scalar.text) if scalar is not None else 0
    for word in (read_script(text, *region) if region is not None else read_script(text)).assignments:
        pair = _split_assignment(word.text)
        if pair is None:
            continue
        if offsets is not None:
            start, end = offsets[min(max(word.start, 0), last)], offsets[min(max(word.end, 0), last)]
        else:
            start, end = word.start, word.end
        words.append((pair[0], pair[1], Token(word.text, source, start, end, word.dynamic, scalar)))
    return words


def operator_command(container: Container) -> list[Token] | None:
    """The command and leading flags an operator writes for the container it builds (KubeAI's model
    controller: `python3 -m vllm.entrypoints.openai.api_server --model=REF --served-model-name=NAME`, before
    `spec.args`), as synthetic tokens; None for containers a manifest writes itself."""
    from vllmlint.k8s.operators import is_kubeai_model, kubeai_prefix

    owner = container.pod.owner
    if not is_kubeai_model(owner):
        return _kserve_preset(container)
    prefix = kubeai_prefix(owner)
    if prefix is None:
        return None
    command, flags = prefix
    tokens = [Token(word, None) for word in command]
    for flag, value in flags:
        tokens.append(Token(f"{flag}={value if value is not None else ''}", None, dynamic=value is None))
    return tokens


def _kserve_preset(container: Container) -> list[Token] | None:
    """KServe's single-node LLMInferenceService preset: `vllm serve /mnt/models --served-model-name NAME`, then
    what its script adds (`launcher_args`). The model is the repository spec.model.uri names (`hf://ORG/NAME`,
    which the storage initializer downloads to /mnt/models), positioned at the uri; another scheme leaves the
    local path /mnt/models. The served name points at spec.model.name (unknown when it is absent)."""
    from vllmlint.k8s.operators import kserve_preset_command

    found = kserve_preset_command(container)
    if found is None:
        return None
    command, uri, model, name = found
    tokens = [Token(word, None) for word in command]
    if model is not None:
        tokens.append(Token(model, uri.source, uri.start, uri.end))
    else:
        tokens.append(Token("/mnt/models", None))
    tokens.append(Token("--served-model-name", None))
    if name is not None and scalar_str(name):
        tokens.append(Token(scalar_str(name) or "", name.source, name.start, name.end))
    else:
        tokens.append(Token("", None, dynamic=True))
    return tokens + launcher_args(container)


def launcher_args(container: Container) -> list[Token]:
    """Flags an operator's launch script passes to vLLM before the container's `args` when the manifest
    writes no `command` (data/operator-workloads.yaml `kserve_llmisvc`): KServe's LLMInferenceService presets
    run `vllm serve ... --tensor-parallel-size {spec.parallelism.tensor} [--api-server-count
    ${VLLM_API_SERVER_COUNT}] ${VLLM_ADDITIONAL_ARGS} $@`. The env value is split as the script's `eval`
    splits it, with positions inside the value; the others point at the field that gives them."""
    from vllmlint.k8s.operators import kserve_launcher_args

    found = kserve_launcher_args(container)
    if not found:
        return []
    tokens: list[Token] = []
    for flag, value in found:
        if isinstance(value, Scalar) and flag is None:  # an argv string
            for command in _shell_tokens(value.text, value, value.source):
                tokens.extend(command)
        elif flag is not None and isinstance(value, Scalar):
            tokens.append(Token(flag, None))
            tokens.append(Token(scalar_str(value) or "", value.source, value.start, value.end))
    return tokens


def _substituted(item: Scalar) -> bool:
    from vllmlint.source.yamlmodel import UnknownScalar

    return isinstance(item, UnknownScalar)


# --- operator resources whose fields the operator turns into vLLM flags (data/operator-flags.yaml) --------
VIA_OPERATOR: Final = "operator"  # an operator's resource (VLLMRuntime): flags made from its fields


@lru_cache(maxsize=1)
def _operator_table() -> list[dict[str, Any]]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    path = knowledge_dir() / "operator-flags.yaml"
    data = load_yaml_data(path) if path.exists() else None
    return list(data.get("operators") or []) if isinstance(data, dict) else []


def _field_token(node: Node, text: str | None = None) -> Token:
    """A token at a manifest field (its key or its value); no YAML scalar of an argv, so no fix edits it."""
    return Token((scalar_str(node) or "") if text is None else text, node.source, node.start, node.end)


def operator_entry(kind: str, api_version: str) -> dict[str, Any] | None:
    """The row of data/operator-flags.yaml for an object's kind and API group, if any."""
    group = api_version.split("/", 1)[0]
    return next((e for e in _operator_table() if e.get("kind") == kind and e.get("api_group") == group), None)


def operator_argv(obj: Any, entry: dict[str, Any]) -> list[Token]:
    """The arguments an operator's controller gives vLLM for `obj`, in its order: the flag token sits at the
    field's key, the value token at its value; what the manifest does not write has no token (or, for the
    controller's constants, a token without a position)."""
    root = obj.node
    tokens: list[Token] = []
    model = entry.get("model")
    if model:
        _, value = field_at(root, model["path"])
        if isinstance(value, Scalar) and scalar_str(value):
            tokens.append(_field_token(value))
    for arg in entry.get("args") or []:
        form = arg["form"]
        if form == "constant":
            tokens.extend(Token(text, None) for text in arg.get("values") or [])
            continue
        key, value = field_at(root, arg["path"])
        if key is None or value is None:
            continue
        if form == "list":
            if isinstance(value, Sequence):
                tokens.extend(_field_token(item) for item in value.items if isinstance(item, Scalar))
            continue
        if not isinstance(value, Scalar):
            continue
        if form == "switch":
            if value.value is True:
                tokens.append(_field_token(key, arg["flag"]))
            elif value.value is False and arg.get("off_flag"):
                tokens.append(_field_token(key, arg["off_flag"]))
            continue
        text = scalar_str(value) or ""
        if not text or (not arg.get("always") and isinstance(value.value, int) and value.value <= 0):
            continue  # the controller writes the flag only when the field is set (`> 0`, `!= ""`)
        tokens += [_field_token(key, arg["flag"]), _field_token(value, text)]
    return tokens


def operator_env(obj: Any) -> list[tuple[str, str | None, Node]]:
    """(name, literal value or None, the name's node) of each variable an operator copies from the resource into
    the vLLM container's env (production-stack's `spec.vllmConfig.env`: data/operator-flags.yaml `env`)."""
    if hasattr(obj, "chart"):  # a Helm chart's values (vllm.helm_values.ChartWorkload): read with the file
        return list(obj.env)
    entry = operator_entry(obj.kind, obj.api_version)
    spec = entry.get("env") if entry else None
    if not spec:
        return []
    _, items = field_at(obj.node, spec["path"])
    return env_entries(items)


def env_entries(node: Node | None, text: Callable[[Scalar], str | None] = scalar_str
                ) -> list[tuple[str, str | None, Node]]:
    """(name, literal value or None, name node) of each `{name, value}` item of a Kubernetes-style env list;
    `text` renders a value scalar (a Helm values file: as the chart's template prints it)."""
    found: list[tuple[str, str | None, Node]] = []
    for item in node.items if isinstance(node, Sequence) else []:
        if not isinstance(item, Mapping):
            continue
        name_node, value = item.get("name"), item.get("value")
        name = scalar_str(name_node)
        if name and name_node is not None:
            found.append((name, text(value) if isinstance(value, Scalar) else None, name_node))
    return found


def operator_image(obj: Any, entry: dict[str, Any]) -> ImageRef | None:
    """The image the operator runs (`registry` + "/" + `name` for VLLMRuntime)."""
    spec = entry.get("image")
    if not spec:
        return None
    _, name = field_at(obj.node, spec["name"])
    _, registry = field_at(obj.node, spec["registry"]) if spec.get("registry") else (None, None)
    name_text = scalar_str(name) if isinstance(name, Scalar) else None
    if not name_text:
        return None
    registry_text = scalar_str(registry) if isinstance(registry, Scalar) else None
    return parse_image(f"{registry_text}/{name_text}" if registry_text else name_text)


def operator_invocations(world: World) -> list[Invocation]:
    """vLLM invocations of operator resources the table maps (production-stack's VLLMRuntime): the argv the
    controller builds from the resource's fields. No container: the operator builds the pod, which the run
    does not show (its probes, volumes and security context are the controller's), so pod-level rules stay
    silent on it."""
    result: list[Invocation] = []
    for entry in _operator_table():
        for obj in world.of_kind(entry["kind"]):
            if operator_entry(obj.kind, obj.api_version) is not entry:
                continue
            argv = [Token(text, None) for text in entry["entrypoint"]] + operator_argv(obj, entry)
            match = _match_vllm(argv)
            if match is None or not any(token.source is not None for token in argv):
                continue
            kind, size = match
            result.append(Invocation(kind, argv[:size], argv[size:], None, VIA_OPERATOR, operator_image(obj, entry),
                                     owner=obj))
    return result


# --- KubeRay: a RayJob's entrypoint, Ray Serve LLM's engine_kwargs in a RayService's serveConfigV2 ---------------
VIA_RAY_JOB: Final = "ray-job-entrypoint"  # RayJob `spec.entrypoint`: a shell command line run as the job's driver
VIA_SERVE_CONFIG: Final = "ray-serve-engine-kwargs"  # `engine_kwargs` of a Ray Serve LLM config: vLLM engine args


def _ray_image(cluster: Node | None) -> ImageRef | None:
    """The image every group of a RayCluster spec runs (head and workers), when they agree; else None."""
    images: set[str] = set()
    groups = [_node_at(cluster, "headGroupSpec")]
    workers = _node_at(cluster, "workerGroupSpecs")
    if isinstance(workers, Sequence):
        groups.extend(workers.items)
    for group in groups:
        containers = _node_at(group, "template", "spec", "containers")
        first = containers.items[0] if isinstance(containers, Sequence) and containers.items else None
        image = scalar_str(first.get("image")) if isinstance(first, Mapping) else None
        if not image:
            return None
        images.add(image)
    return parse_image(images.pop()) if len(images) == 1 else None


def _node_at(node: Node | None, *keys: str) -> Node | None:
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def _string_field(node: Node | None) -> Scalar | None:
    return node if isinstance(node, Scalar) and isinstance(node.value, str) and node.value.strip() else None


def _mentions_vllm(node: Node | None) -> bool:
    """A Ray runtime env (`runtimeEnvYAML`, an application's `runtime_env`) that installs something named vllm:
    then the image does not say which vLLM runs."""
    from vllmlint.source.yamlmodel import walk

    if isinstance(node, Scalar):
        return "vllm" in (node.text or "").lower()
    return any(isinstance(n, Scalar) and "vllm" in (n.text or "").lower() for n in walk(node))


def ray_invocations(world: World) -> list[Invocation]:
    """vLLM invocations of KubeRay resources that are not in a container's command: a RayJob's `entrypoint`
    (a shell command line, run as the job's driver on the cluster; its commands join `world.shell_commands`)
    and the `engine_kwargs` of Ray Serve LLM applications in a RayService's `serveConfigV2`. No container:
    which pod runs them is Ray's choice; the image is the cluster's when all its groups run the same one and
    no runtime env installs vLLM."""
    result: list[Invocation] = []
    for obj in world.of_kind("RayJob"):
        spec = obj.spec
        script = _string_field(spec.get("entrypoint")) if spec is not None else None
        if spec is None or script is None or obj.api_version.split("/", 1)[0] != "ray.io":
            continue
        image = None if _mentions_vllm(spec.get("runtimeEnvYAML")) else _ray_image(spec.get("rayClusterSpec"))
        split = _shell_tokens(script.text, script, script.source)
        world.shell_commands.extend(ShellCommand(tokens, None, VIA_RAY_JOB, script) for tokens in split)
        for invocation in _invocations_in_commands(split, None, VIA_RAY_JOB, image, script):
            invocation.owner = obj
            result.append(invocation)
    for obj in world.of_kind("RayService"):
        spec = obj.spec
        config = _string_field(spec.get("serveConfigV2")) if spec is not None else None
        if spec is None or config is None or obj.api_version.split("/", 1)[0] != "ray.io":
            continue
        result.extend(serve_llm_invocations(obj, config, _ray_image(spec.get("rayClusterConfig"))))
    return result


def serve_llm_invocations(obj: Any, config: Scalar, image: ImageRef | None) -> list[Invocation]:
    """One invocation per `llm_configs` entry with `engine_kwargs` in a serveConfigV2 string: each key is a vLLM
    engine argument in Python spelling (Ray Serve passes them to vLLM's AsyncEngineArgs), read as the flag
    `--key-with-dashes` at the key, its value at the value (a mapping as JSON, a list as several values); `true`
    is the bare switch, `false` and null give no token (the engine's default). `model_source` is the model."""
    import json

    from vllmlint.source.yamlmodel import SourceFile, parse_documents, to_python

    documents, _ = parse_documents(SourceFile(config.source.path, config.text, config.source.display_path))
    root = documents[0].root if documents else None
    applications = _node_at(root, "applications")
    if not isinstance(applications, Sequence):
        return []

    def token(node: Node, text: str) -> Token:
        return Token(text, config.source, config.source_index(node.start), config.source_index(node.end))

    result: list[Invocation] = []
    for application in applications.items:
        llm_configs = _node_at(application, "args", "llm_configs")
        if not isinstance(llm_configs, Sequence):
            continue
        app_image = None if _mentions_vllm(_node_at(application, "runtime_env")) else image
        for llm in llm_configs.items:
            kwargs = _node_at(llm, "engine_kwargs")
            if not isinstance(kwargs, Mapping) or not kwargs.items:
                continue
            llm_image = None if _mentions_vllm(_node_at(llm, "runtime_env")) else app_image
            tokens: list[Token] = []
            source_node = _node_at(llm, "model_loading_config", "model_source")
            if isinstance(source_node, Scalar) and scalar_str(source_node):
                tokens.append(token(source_node, scalar_str(source_node) or ""))
            for key, value in kwargs.items:
                if not isinstance(key, Scalar) or not key.text:
                    continue
                flag = "--" + key.text.replace("_", "-")
                if isinstance(value, Scalar):
                    if value.value is True:
                        tokens.append(token(key, flag))
                    elif value.value is not False and value.value is not None:
                        tokens += [token(key, flag), token(value, scalar_str(value) or "")]
                elif isinstance(value, Mapping):
                    try:
                        text = json.dumps(to_python(value))
                    except (ValueError, TypeError):
                        continue
                    tokens += [token(key, flag), token(value, text)]
                elif isinstance(value, Sequence):
                    values = [item for item in value.items if isinstance(item, Scalar)]
                    if values:
                        tokens += [token(key, flag)] + [token(item, scalar_str(item) or "") for item in values]
            if not tokens:
                continue  # nothing written that vLLM reads (only false/null values): no place for a finding
            entry = [Token("vllm", None), Token("serve", None)]
            result.append(Invocation(SERVE, entry, tokens, None, VIA_SERVE_CONFIG, llm_image, owner=obj))
    return result


# --- operators that read vLLM flags from a ConfigMap (KAITO's inference_config.yaml `vllm:` keys) ------------------
VIA_OPERATOR_CONFIG: Final = "operator-config"  # a ConfigMap key whose entries an operator passes on as flags


@lru_cache(maxsize=1)
def _config_file_table() -> list[dict[str, Any]]:
    from vllmlint.data import knowledge_dir, load_yaml_data

    path = knowledge_dir() / "operator-flags.yaml"
    data = load_yaml_data(path) if path.exists() else None
    return list(data.get("config_files") or []) if isinstance(data, dict) else []


def _nested_yaml(scalar: Scalar) -> Node | None:
    """The root of a YAML document held in a string scalar (positions are the string's: map them with
    `scalar.source_index`)."""
    from vllmlint.source.yamlmodel import SourceFile, parse_documents

    documents, _ = parse_documents(SourceFile(scalar.source.path, scalar.text, scalar.source.display_path))
    return documents[0].root if documents else None


def config_file_invocations(world: World) -> list[Invocation]:
    """vLLM invocations of operators that pass a ConfigMap's entries on as flags (KAITO's Workspace
    `inference.config` -> its `inference_config.yaml`, each key of `vllm:` as `--key value`): only a ConfigMap a
    resource of the run names. The release is the newest operator release's pin (data/operator-flags.yaml)."""
    result: list[Invocation] = []
    for entry in _config_file_table():
        newest = entry["releases"][-1]
        for obj in world.of_kind(entry["kind"]):
            if obj.api_version.split("/", 1)[0] != entry["api_group"]:
                continue
            name = scalar_str(_node_at(obj.node, *entry["config_ref"].split(".")))
            config_map = world.find("ConfigMap", name, obj.namespace) if name else None
            value = _node_at(config_map.node, "data", entry["configmap_key"]) if config_map is not None else None
            text = _string_field(value)
            section = _node_at(_nested_yaml(text), entry["section"]) if text is not None else None
            if text is None or not isinstance(section, Mapping):
                continue
            tokens: list[Token] = []
            for key, item in section.items:
                if not isinstance(key, Scalar) or not key.text or not isinstance(item, Scalar) or item.value is None:
                    continue  # a mapping or list is passed as its Python repr: not read
                if item.value is False:
                    continue  # passed as `--flag False`: not read
                tokens.append(Token("--" + key.text, text.source, text.source_index(key.start), text.source_index(key.end)))
                if item.value is not True:
                    tokens.append(Token(scalar_str(item) or "", text.source, text.source_index(item.start),
                                        text.source_index(item.end)))
            if not tokens:
                continue
            invocation = Invocation(SERVE, [Token("vllm", None), Token("serve", None)], tokens, None,
                                    VIA_OPERATOR_CONFIG, None, script=None, owner=obj)
            invocation.operator_release = (newest["vllm"], f"{entry['kind']} {obj.name}: KAITO {newest['operator']} "
                                           f"pins vllm=={newest['vllm']}" if entry["api_group"] == "kaito.sh" else
                                           f"{entry['kind']} {obj.name}: {newest['operator']} pins {newest['vllm']}")
            result.append(invocation)
    return result


# --- llmaz: BackendRuntime (command + a recommended config's args) and the Playgrounds that use it -------------
VIA_BACKEND_RUNTIME: Final = "backend-runtime"  # llmaz: BackendRuntime command + recommendedConfigs[].args (+ Playground args)
_LLMAZ_GROUP = "inference.llmaz.io"


def _listed_tokens(node: Node | None) -> list[Token]:
    """Tokens of a YAML list of argv items; llmaz's `{{ .ModelPath }}` placeholders are unknown values."""
    tokens: list[Token] = []
    for item in node.items if isinstance(node, Sequence) else []:
        if isinstance(item, Scalar):
            text = scalar_str(item) or ""
            tokens.append(Token(text, item.source, item.start, item.end, "{{" in text, item))
    return tokens


def _playground_config(playground: Any) -> tuple[str, str]:
    """(BackendRuntime name, recommended config name) a Playground uses: `backendRuntimeConfig.backendName`
    (default vllm) and `configName`, else `speculative-decoding` when a claimed model has the draft role, else
    `default` (llmaz pkg/controller_helper/helper.go RecommendedConfigName / DetectArgFrom)."""
    config = _node_at(playground.spec, "backendRuntimeConfig")
    backend = scalar_str(_node_at(config, "backendName")) or "vllm"
    name = scalar_str(_node_at(config, "configName"))
    if not name:
        models = _node_at(playground.spec, "modelClaims", "models")
        draft = isinstance(models, Sequence) and any(scalar_str(_node_at(m, "role")) == "draft" for m in models.items)
        name = "speculative-decoding" if draft and _node_at(playground.spec, "modelClaim") is None else "default"
    return backend, name


def llmaz_invocations(world: World) -> list[Invocation]:
    """llmaz builds the vLLM container from a BackendRuntime: `spec.command` + the args of one of its
    `recommendedConfigs` (+ the Playground's `backendRuntimeConfig.args`), image `spec.image:version` (the
    Playground's `version` wins) (llmaz api/inference/v1alpha1/backendruntime_types.go; pkg/controller/inference/
    playground_controller.go buildTemplate). One invocation per Playground that uses a BackendRuntime of the run,
    and one per recommended config no Playground of the run uses. No container: the controller builds the pod."""
    result: list[Invocation] = []
    runtimes = [o for o in world.of_kind("BackendRuntime") if o.api_version.split("/", 1)[0] == _LLMAZ_GROUP]
    used: set[tuple[int, str]] = set()

    def invocation(runtime: Any, config: Node, extra: Node | None, owner: Any, version: Node | None) -> None:
        command = _listed_tokens(_node_at(runtime.spec, "command"))
        argv = command + _listed_tokens(_node_at(config, "args")) + _listed_tokens(extra)
        match = _match_vllm(argv)
        if match is None:
            return
        image_name = scalar_str(_node_at(runtime.spec, "image"))
        tag = scalar_str(version) or scalar_str(_node_at(runtime.spec, "version"))
        image = parse_image(f"{image_name}:{tag}" if image_name and tag else image_name or "") if image_name else None
        kind, size = match
        result.append(Invocation(kind, argv[:size], argv[size:], None, VIA_BACKEND_RUNTIME, image, owner=owner))

    def configs(runtime: Any) -> list[tuple[str, Node]]:
        found = _node_at(runtime.spec, "recommendedConfigs")
        return [(scalar_str(_node_at(c, "name")) or "", c) for c in found.items] if isinstance(found, Sequence) else []

    for playground in world.of_kind("Playground"):
        if playground.api_version.split("/", 1)[0] != _LLMAZ_GROUP or playground.spec is None:
            continue
        backend, name = _playground_config(playground)
        runtime = next((r for r in runtimes if r.name == backend and r.spec is not None), None)
        config = next((c for n, c in configs(runtime) if n == name), None) if runtime is not None else None
        if runtime is None or config is None:
            continue  # the BackendRuntime (llmaz's Helm chart installs it) is not in the run
        used.add((id(runtime), name))
        settings = _node_at(playground.spec, "backendRuntimeConfig")
        invocation(runtime, config, _node_at(settings, "args"), playground, _node_at(settings, "version"))
    for runtime in runtimes:
        if runtime.spec is None:
            continue
        for name, config in configs(runtime):
            if (id(runtime), name) not in used:
                invocation(runtime, config, None, runtime, None)
    return result


# --- Compose ---------------------------------------------------------------------------------------
def compose_image(container: Container) -> tuple[ImageRef | None, str]:
    """A Compose service's `image` after interpolation (`vllm/vllm-openai:${TAG:-v0.8.5}` is
    vllm/vllm-openai:v0.8.5 where TAG is unset), with a note saying where the values came from; (None, "")
    when a variable without a value leaves the image unknown."""
    from vllmlint.source.compose import interpolated_value, project

    done = interpolated_value(container.image, project(container.pod.owner).variables)
    if done is None or done.unresolved or done.invalid:
        raw = scalar_str(container.image) if done is None else None
        return (parse_image(raw) if raw else None), ""
    return parse_image(done.text), done.note()


def compose_argv(container: Container) -> tuple[list[Token] | None, list[Token]] | None:
    """(entrypoint tokens or None, command tokens) of a Compose service as Compose builds its argv:
    interpolated, strings split by go-shellwords (vllmlint.source.compose). None when Compose refuses them."""
    from vllmlint.source.compose import argv_words, project

    variables = project(container.pod.owner).variables
    node = container.node
    entry_node, command_node = node.get("entrypoint"), node.get("command")
    if isinstance(entry_node, Scalar) and entry_node.value is None:
        entry_node = None  # `entrypoint:` with no value: unset
    if isinstance(command_node, Scalar) and command_node.value is None:
        command_node = None
    entry = argv_words(entry_node, variables) if entry_node is not None else None
    command = argv_words(command_node, variables) if command_node is not None else []
    if entry_node is not None and entry is None or command is None:
        return None
    source = container.node.source

    def tokens(words) -> list[Token]:  # in the file that wrote them (an `extends` base's, when inherited)
        return [Token(w.text, w.node.source or source, w.start, w.end, w.dynamic, w.node) for w in words or ()]

    return (tokens(entry) if entry is not None else None), tokens(command)


# --- variables a script sets, and the image a `docker run` in it launches ---------------------------------
@dataclass
class ScriptVariable:
    """A variable a script sets once, to a literal value, on a line of its own (`IMAGE=vllm/vllm-openai:v0.9.2`
    or `export IMAGE=...`): what `$IMAGE` expands to below it, unless the environment overrides it (a script
    that sets it does not read it from there)."""

    name: str
    value: str
    token: Token  # the `NAME=value` word, in its file


_VARIABLE_REFERENCE = lazy_compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def script_variables(text: str, scalar: Scalar | None = None, source: SourceFile | None = None,
                     region: tuple[int, int] | None = None) -> dict[str, ScriptVariable]:
    """The variables a script sets exactly once to a literal value (no `$`, no command substitution), on a line
    of their own or with `export`/`readonly`/`declare`. A name set twice (two branches of an `if`), from an
    expansion (`IMAGE=${IMAGE:-...}`) or only before one command (`IMAGE=x docker run ...`, which sets it for
    that command only, after its words are expanded) is left out: its value is unknown."""
    from vllmlint.source.shell import read_script

    if "=" not in text:
        return {}
    script = read_script(text, *region) if region is not None else read_script(text)
    spans = [(c.start, c.end) for c in script.commands]
    candidates: list[tuple[str, str, int, int, bool]] = []
    for word in script.assignments:
        pair = _split_assignment(word.text)
        if pair is not None:
            standalone = not any(start <= word.start < end for start, end in spans)
            candidates.append((pair[0], pair[1], word.start, word.end, word.dynamic or not standalone))
    for command in script.commands:
        if command.words and command.words[0].text in _EXPORTS:
            for word in command.words[1:]:
                pair = _split_assignment(word.text)
                if pair is not None and not word.text.startswith("-"):
                    candidates.append((pair[0], pair[1], word.start, word.end, word.dynamic))
    counts: dict[str, int] = {}
    for name, *_ in candidates:
        counts[name] = counts.get(name, 0) + 1
    holder = scalar.source if scalar is not None else source
    found: dict[str, ScriptVariable] = {}
    for name, value, start, end, unknown in candidates:
        if counts[name] != 1 or unknown or not value:
            continue
        if scalar is not None:
            start, end = scalar.source_index(start), scalar.source_index(end)
        found[name] = ScriptVariable(name, value, Token(f"{name}={value}", holder, start, end, False, scalar))
    return found


def expand_variables(text: str, variables: dict[str, ScriptVariable]) -> str | None:
    """A word with every `$NAME` / `${NAME}` replaced by the value the script sets; None when any other
    expansion is left (an unknown variable, `${NAME:-default}`, `$(...)`, a backquote)."""
    unknown = False

    def replace(match: re.Match[str]) -> str:
        nonlocal unknown
        variable = variables.get(match.group(1) or match.group(2))
        if variable is None:
            unknown = True
            return match.group(0)
        return variable.value

    expanded = _VARIABLE_REFERENCE.sub(replace, text)
    if unknown or "$" in expanded or "`" in expanded:
        return None
    return expanded


@dataclass
class LaunchedImage:
    """The image a `docker run` / `podman run` line of a script launches, and the variables it was spelled with."""

    program: str  # docker, podman, nerdctl
    image: ImageRef
    variables: list[ScriptVariable]  # the script's assignments the image word expanded (empty: written out)

    @property
    def origin(self) -> str:
        """`IMAGE=vllm/vllm-openai:v0.9.2` on line 3: where a variable image came from ("" when written out)."""
        parts = []
        for variable in self.variables:
            where = variable.token.span
            parts.append(f"`{variable.name}={variable.value}` on line {where.line}" if where else
                         f"`{variable.name}={variable.value}`")
        return ", ".join(parts)


def launched_image(tokens: list[Token], image: ImageRef, variables: dict[str, ScriptVariable] | None
                   ) -> LaunchedImage:
    """What `_unwrap_launcher` read off a `docker run` command: the program, the image and the variables used."""
    program = tokens[0].text.rsplit("/", 1)[-1] if tokens else "docker"
    used: list[ScriptVariable] = []
    for token in tokens[2:]:
        if token.dynamic and variables and expand_variables(token.text, variables) == image.raw:
            used = [variables[m.group(1) or m.group(2)] for m in _VARIABLE_REFERENCE.finditer(token.text)]
            break
    return LaunchedImage(program, image, used)


def _launch_variables(text: str, scalar: Scalar | None = None, source: SourceFile | None = None,
                      region: tuple[int, int] | None = None) -> dict[str, ScriptVariable] | None:
    """`script_variables` of a script that launches a container (`docker`/`podman`/`nerdctl run`); None for
    the others, which have no image word to expand (and need not be read again)."""
    probe = text if region is None else text[region[0]:region[1]]  # a Markdown shell block: its own text
    if "docker" not in probe and "podman" not in probe and "nerdctl" not in probe:
        return None  # the plain test first: `\b` searched over long blank runs is slow
    if not _LAUNCHERS.search(probe):
        return None
    return script_variables(text, scalar, source, region)


_LAUNCHERS = lazy_compile(r"\b(docker|podman|nerdctl)\b")


# --- vendor builds (issue 9) ---------------------------------------------------------------------------
def _assumed_entry(image: ImageRef, args: list[Token]) -> list[str] | None:
    """The entrypoint `args` are read with on an image not in the table (the api_server, when the repository name
    contains `vllm` and the first argument is a `--` flag: data/image-entrypoints.yaml `assumed_entrypoint`)."""
    from vllmlint.vllm.images import assumed_entrypoint

    if not args or not args[0].text.startswith("--") or args[0].dynamic:
        return None
    return assumed_entrypoint(image)


def _served_by_entry(image: ImageRef, entry: list[str], upgrade_to: str | None) -> str | None:
    """The server kind of an entrypoint whose words do not say it (`python3 /workspace/api_server.py`), from
    the `server` field of its image row; None otherwise."""
    if not entry:
        return None
    row = image_entry(image, upgrade_to)
    if row is None:
        return None
    server = row.get("server")
    if server in (SERVE, OPENAI_API_SERVER, DEMO_API_SERVER) and list(row.get("entrypoint") or []) == entry:
        return str(server)
    return None


def mark_vendor_build(invocation: Invocation) -> None:
    """Set `fork` and `plugin_values` from data/image-entrypoints.yaml (`fork` of the image's row, else of the
    `tag_releases` row its tag matches)."""
    from vllmlint.vllm.images import image_fork, tag_release

    image = invocation.image
    if image is None:
        return
    invocation.fork = image_fork(image, image_entry(image))
    found = tag_release(image)
    if found is not None:
        invocation.plugin_values = dict(found.plugin_values)


def _vendor_release(image: ImageRef) -> str | None:
    """The upstream release a vendor tag names (data/image-entrypoints.yaml `tag_releases`), if any."""
    from vllmlint.vllm.images import tag_release

    found = tag_release(image)
    return found.release if found is not None else None


def operator_gpu(obj: Any) -> tuple[str, int, Node] | None:
    """(resource, count, YAML node) of the accelerator an operator's controller requests for the pod it builds
    from `obj` (production-stack's VLLMRuntime: `spec.deploymentConfig.resources.gpu` of `gpuType`, default
    nvidia.com/gpu, as requests and limits; data/operator-flags.yaml `gpu`), like a container's request."""
    from vllmlint.k8s.quantity import quantity_int

    if hasattr(obj, "chart"):  # a Helm chart's values (vllm.helm_values.ChartWorkload): read with the file
        return obj.gpu
    entry = operator_entry(obj.kind, obj.api_version)
    spec = entry.get("gpu") if entry is not None else None
    if not spec:
        return None
    _, count_node = field_at(obj.node, spec["count"])
    if not isinstance(count_node, Scalar) or not scalar_str(count_node):
        return None  # the controller adds no GPU request when the field is empty
    count = quantity_int(count_node)
    if count is None:
        return None
    _, resource_node = field_at(obj.node, spec["resource"]) if spec.get("resource") else (None, None)
    resource = scalar_str(resource_node) if isinstance(resource_node, Scalar) else None
    return resource or spec["default_resource"], count, count_node


@dataclass(eq=False)
class OperatorPod:
    """What the capacity rules read of the pod an operator builds for a resource: the resource (`owner`) and
    the placement its controller gives the pod (data/operator-flags.yaml `placement`)."""

    owner: Any
    placement: Any


def operator_pod(obj: Any) -> OperatorPod | None:
    """The placement of the pod an operator's controller builds for `obj`, when the table maps its fields."""
    from vllmlint.k8s.placement import placement_of_fields

    if hasattr(obj, "chart"):  # a Helm chart's values (vllm.helm_values.ChartWorkload): read with the file
        return obj.pod
    entry = operator_entry(obj.kind, obj.api_version)
    spec = entry.get("placement") if entry is not None else None
    if not spec:
        return None
    terms = field_at(obj.node, spec["node_selector_terms"])[1] if spec.get("node_selector_terms") else None
    tolerations = field_at(obj.node, spec["tolerations"])[1] if spec.get("tolerations") else None
    return OperatorPod(obj, placement_of_fields(terms, tolerations))


def _options_by_name(options: list[Option]) -> dict[str, list[int]]:
    """Canonical name and spelling (`_` as `-`) -> positions of the options answering to it, in argv order
    (`Invocation.option`: rules ask an invocation for its options tens of times each). Built once the release's
    resolutions are set (`flags.resolve_invocation` parses and resolves in one go; nothing asks in between)."""
    by_name: dict[str, list[int]] = {}
    for position, option in enumerate(options):
        canonical, spelled = option.canonical, option.name.replace("_", "-")
        by_name.setdefault(canonical, []).append(position)
        if spelled != canonical:
            by_name.setdefault(spelled, []).append(position)
    return by_name
