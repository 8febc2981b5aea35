"""Configuration: `.vllmlint.yaml` (or `[tool.vllmlint]` in pyproject.toml) in the current folder or a parent,
up to the repository root. Validated against `schemas/config.schema.json`; a mistake is a usage error that
names the file, the line (YAML) or key path (TOML), and the key, with a did-you-mean.

Trust (docs/security.md): a configuration file inside the linted tree (under a linted path, the current folder,
or their git repositories) is part of what is linted, so it cannot switch on what runs programs, reaches the
network or reads outside the tree (`POWERFUL_KEYS`): those keys are refused (`Config.refused`) and only the
command line, the environment or the user's own configuration (`user_config_path`) can turn them on. What it
names (`extend`, `baseline`) must be a regular file inside the tree, read without blocking and with a size cap;
anything else is dropped with a one-line error (`Config.errors`) and the run goes on."""
from __future__ import annotations

import math
import os
from typing import Iterable
from vllmlint.records import dataclass, field
from pathlib import Path

from vllmlint.data import schemas_dir
from vllmlint.lazyre import lazy_compile

CONFIG_NAMES = (".vllmlint.yaml", ".vllmlint.yml")
# Keys that run programs (`render`: helm, kustomize), reach the network (`online`) or read outside the tree
# (`follow-links`, `hf-cache`): a configuration inside the linted tree may turn them off, never on.
POWERFUL_KEYS = ("render", "follow-links", "online", "hf-cache")
MAX_FILE_SIZE_MIB = 1024 * 1024  # `max-file-size` above 1 TiB is a mistake (and .inf or .nan cannot be a size)
BASELINE_LIMIT = 64 * 1024 * 1024  # bytes of a baseline a configuration file may name


class ConfigError(Exception):
    """A one-line, user-facing problem with a configuration file. Its text quotes the tree's keys and values:
    control characters are written as escapes (`\\n`), so that it stays one line and no line of the tree's text
    starts with `::` (a GitHub workflow command)."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


def one_line(text: str) -> str:
    """`text` with control characters (line breaks included) written as `\\xNN` escapes."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == "\t" else repr(ch)[1:-1] for ch in text)


@dataclass
class Config:
    path: Path | None = None
    select: list[str] | None = None
    ignore: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)  # added to `select` (or to the default rules)
    extend_ignore: list[str] = field(default_factory=list)  # added to `ignore`
    extends: list[Path] = field(default_factory=list)  # the shared files `extend` read, nearest first
    severity: dict[str, str] = field(default_factory=dict)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    respect_gitignore: bool = True
    follow_links: bool = False
    require_workloads: bool = False  # exit 1 when nothing vLLM or Kubernetes was found in what was given
    render: bool = False  # run `helm template` on charts (opt-in); Kustomize folders are always read natively
    fail_on: str | None = None
    min_level: str | None = None  # the least severe finding shown (`--min-level`); the exit code follows fail-on
    vllm_version: str | None = None
    require_suppression_reason: bool = True
    max_file_size: float | None = None
    baseline: Path | None = None
    models: list[dict] = field(default_factory=list)
    gpus: list[dict] = field(default_factory=list)
    hf_cache: bool = False  # size models from this machine's Hugging Face cache (opt-in: machine-dependent)
    online: bool = False  # fetch models' config.json from the Hugging Face Hub (opt-in: network)
    refused: list[str] = field(default_factory=list)  # `POWERFUL_KEYS` the linted tree's configuration asked for
    refused_by: list[Path] = field(default_factory=list)  # the files that asked for them
    errors: list[str] = field(default_factory=list)  # one-line errors: an `extend`/`baseline` dropped, the run goes on

    def refusal_note(self) -> str | None:
        """The one line to print (on standard error) when the tree's configuration asked for `POWERFUL_KEYS`."""
        if not self.refused:
            return None
        files = ", ".join(dict.fromkeys(_shown(p) for p in self.refused_by))
        which = "it" if len(self.refused) == 1 else "them"
        return one_line(f"note: {files} asks for {', '.join(self.refused)}; ignored: only the command line or your "
                        f"own config can turn {which} on")

    def selection(self, select: list[str] | None = None, ignore: list[str] | None = None,
                  extend_select: list[str] | None = None,
                  extend_ignore: list[str] | None = None) -> tuple[list[str] | None, list[str] | None]:
        """(select, ignore) of a run, as `vllmlint check` and the language server build them: the command line's
        `select` / `ignore` replace the file's; `extend-select` / `extend-ignore` of the file, then of the command
        line, add to them (`ALL` stands for the rules run by default when nothing is selected)."""
        selected, ignored = select or self.select, ignore or self.ignore
        extra = self.extend_select + (extend_select or [])
        if extra:  # rules off by default still need their code or name
            selected = (selected or ["ALL"]) + extra
        skipped = self.extend_ignore + (extend_ignore or [])
        if skipped:
            ignored = (ignored or []) + skipped
        return selected, ignored

    def file_size_limit(self, mib: float | None = None) -> int:
        """--max-file-size (MiB, the command line's first) in bytes; 10 MiB unless set, 0 for no limit."""
        size = mib if mib is not None else (self.max_file_size if self.max_file_size is not None else 10)
        if not _size_ok(size):
            raise ConfigError(f"--max-file-size {size}: give a number of MiB from 0 to {MAX_FILE_SIZE_MIB} "
                              "(0: no limit)")
        return int(size * 1024 * 1024)


def _size_ok(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and 0 <= value <= MAX_FILE_SIZE_MIB)


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def find_config(start: Path, user: bool = True) -> Path | None:
    """The nearest config file from `start` upwards, stopping at the repository root; when there is none, the
    user's own (`user_config_path`) unless `user` is False."""
    current = start.resolve()
    while True:
        for name in CONFIG_NAMES:
            if (current / name).is_file():
                return current / name
        pyproject = current / "pyproject.toml"
        if pyproject.is_file() and b"[tool.vllmlint" in _read_bytes(pyproject, quiet=True):
            return pyproject
        if (current / ".git").exists() or current.parent == current:
            return user_config_path() if user else None
        current = current.parent


MAX_EXTEND_DEPTH = 10  # `extend` chains longer than this are a mistake (or a cycle through links)


def user_config_path() -> Path | None:
    """The user's own configuration, outside every linted tree: `$VLLMLINT_CONFIG` when set, else
    `$XDG_CONFIG_HOME/vllmlint/config.yaml` (`~/.config/vllmlint/config.yaml`) when it exists."""
    named = os.environ.get("VLLMLINT_CONFIG")
    if named:
        return Path(named)
    home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    path = Path(home) / "vllmlint" / "config.yaml"
    return path if os.path.isfile(path) else None  # a folder that cannot be searched: no configuration


def load_settings(paths: Iterable[str | Path], config_path: str | Path | None = None,
                  no_config: bool = False) -> Config:
    """The configuration of a run over `paths`: `--config FILE`, else the file found from the current folder,
    else the user's own; with `no_config`, none. ConfigError (one line) for a file that cannot be used."""
    if no_config:
        return Config()
    found = Path(config_path) if config_path else find_config(Path.cwd())
    return load_config(found, paths) if found is not None else Config()


def load_config(path: Path, tree: Iterable[str | Path] | None = None, *, trusted: bool = False) -> Config:
    """The settings of `path` and of the files it extends, over those of the user's own configuration
    (`user_config_path`, when it is another file, outside the tree). `tree`: the linted paths (the current
    folder when None); a file under them, under the current folder or in their git repositories is the tree's
    own (see the module's docstring), unless `trusted`."""
    roots = _tree_roots(tree if tree is not None else ())
    user = user_config_path()
    if user is not None and (os.path.realpath(user) == os.path.realpath(path) or _in_tree(str(user), roots)):
        user = None  # the file itself; or `VLLMLINT_CONFIG` naming a file of the tree, which is the tree's
    data, locate, extends, notes = _load_chain(path, [], roots, trusted=trusted)
    if user is not None:
        mine, my_locate, my_extends, my_notes = _load_chain(user, [], roots, trusted=True)
        data, locate = _merge(mine, my_locate, data, locate)
        extends = [*extends, user, *my_extends]
        notes["errors"] += my_notes["errors"]
    config = _to_config(data, path, locate)
    config.extends = extends
    _note(config, notes)
    return config


def _note(config: Config, notes: dict) -> None:
    config.refused = notes["refused"]
    config.refused_by = notes["refused_by"]
    config.errors = notes["errors"]


def _tree_roots(paths: Iterable[str | Path]) -> list[str]:
    """The folders that make the linted tree: the linted paths and the current folder, each as given and with
    its links resolved, and the git work tree each is in (found by its `.git`, git is not run). The current
    folder and the work trees count only below the home folder (or elsewhere): run from `~` or `/`, or in a home
    kept in git, the whole home is not the tree, and the user's own configuration stays the user's."""
    from vllmlint.source.files import git_toplevel

    home = os.path.realpath(os.path.expanduser("~"))

    def above_home(folder: str) -> bool:
        real = os.path.realpath(folder)
        return real == home or home.startswith(real.rstrip(os.sep) + os.sep)

    roots: list[str] = []
    for item, given in [*((p, True) for p in paths), (os.getcwd(), False)]:
        for form in (os.path.abspath(item), os.path.realpath(item)):
            folder = form if os.path.isdir(form) else os.path.dirname(form)
            top = git_toplevel(folder)
            candidates = [form if given or not above_home(form) else None]
            if top and not above_home(top):
                candidates += [top, os.path.realpath(top)]
            for root in candidates:
                if root and root not in roots:
                    roots.append(root)
    return roots


def _in_tree(path: str, roots: list[str]) -> bool:
    """The file, as named or with its links resolved, is in the tree."""
    from vllmlint.source.files import _within

    return _within(os.path.abspath(path), roots) or _within(os.path.realpath(path), roots)


def _read_bytes(path: Path, limit: int | None = None, quiet: bool = False) -> bytes:
    """A configuration file's bytes: a regular file only, opened without blocking, at most `limit` bytes
    (`SMALL_FILE_LIMIT`). ConfigError otherwise; b"" when `quiet`."""
    from vllmlint.source.files import SMALL_FILE_LIMIT, NotRegular, TooLarge, read_regular

    limit = limit or SMALL_FILE_LIMIT
    try:
        return read_regular(path, limit)
    except NotRegular:
        problem = "not a regular file"
    except TooLarge:
        problem = f"over {limit // (1024 * 1024)} MiB"
    except OSError as exc:
        problem = f"cannot read it: {exc.strerror or exc}"
    if quiet:
        return b""
    raise ConfigError(f"{path}: {problem}")


def _load_one(path: Path):
    if not path.is_file():
        raise ConfigError(f"{path}: no such configuration file")
    if path.name == "pyproject.toml":
        data, locate = _read_pyproject(path)
    else:
        data, locate = _read_yaml(path)
    _validate(data, path, locate)
    return data, locate


def _named_file(path: Path, key: str, name: str, locate, roots: list[str], trusted: bool,
                limit: int | None = None) -> str | None:
    """Why the file `key` names (`path`) cannot be used, or None: a file the tree's configuration names must be
    in the tree; any file must be a regular file, readable without blocking, under the size cap."""
    where = f"{locate([key])}: `{key}`: {name}"
    if not name.isprintable():  # a line break in a file name would end up alone at the start of a line
        return f"{where}: a file name with control characters"
    if not os.path.exists(path):
        return None  # the usual error: `extend` below, a baseline when it is loaded
    from vllmlint.source.files import _within

    if not trusted and not _within(os.path.realpath(path), roots):  # a link in the tree to outside is outside
        return f"{where}: outside the linted tree; a configuration in the tree can only name files in it"
    try:
        _read_bytes(path, limit)
    except ConfigError as exc:
        return f"{where}: {str(exc).partition(': ')[2]}"
    return None


def _load_chain(path: Path, seen: list[Path], roots: list[str], trusted: bool = False):
    """The file's settings over those of the file its `extend` names (relative to it), recursively:
    keys of the nearer file win; `severity` and `per-file-ignores` merge key by key; `extend-select`,
    `extend-ignore`, `models` and `gpus` add up. A `baseline` stays relative to the file that names it.
    A file in the tree (`roots`) and not `trusted` loses its `POWERFUL_KEYS` set to true, and what it names
    must be in the tree: the fourth value says what was refused and dropped."""
    notes: dict = {"refused": [], "refused_by": [], "errors": []}
    if not trusted and seen == [] and _in_tree(str(path), roots) and not _in_tree(os.path.realpath(path), roots):
        raise ConfigError(f"{path}: a link to a file outside the linted tree; not read")
    data, locate = _load_one(path)
    data = dict(data)
    # The first file is trusted when the caller says so (the user's own), any file when it is outside the tree.
    mine = trusted or not _in_tree(str(path), roots)
    if not mine:
        for key in POWERFUL_KEYS:
            if data.get(key) is True:
                del data[key]
                notes["refused"].append(f"{key}: true")
                if path not in notes["refused_by"]:
                    notes["refused_by"].append(path)
    if data.get("baseline"):
        baseline = path.parent / data["baseline"]
        problem = _named_file(baseline, "baseline", data["baseline"], locate, roots, mine, BASELINE_LIMIT)
        if problem:
            notes["errors"].append(one_line(f"{problem}; no baseline used"))
            del data["baseline"]
        else:
            data["baseline"] = str(baseline)
    base_name = data.pop("extend", None)
    if base_name is None:
        return data, locate, [], notes
    base_path = (path.parent / base_name)
    resolved = base_path.resolve()
    chain = [*seen, path.resolve()]
    if resolved in chain:
        raise ConfigError(f"{locate(['extend'])}: `extend`: {base_name} extends back to this file (a cycle)")
    if len(chain) > MAX_EXTEND_DEPTH:
        raise ConfigError(f"{locate(['extend'])}: `extend`: more than {MAX_EXTEND_DEPTH} files extend each other")
    problem = _named_file(base_path, "extend", base_name, locate, roots, mine)
    if problem:
        notes["errors"].append(one_line(f"{problem}; its settings were not used"))
        return data, locate, [], notes
    if not base_path.is_file():
        raise ConfigError(f"{locate(['extend'])}: `extend`: {base_path}: no such configuration file")
    base, base_locate, extends, base_notes = _load_chain(base_path, chain, roots)
    for key, value in base_notes.items():
        notes[key] += [v for v in value if v not in notes[key]]
    merged, merged_locate = _merge(base, base_locate, data, locate)
    return merged, merged_locate, [base_path, *extends], notes


def _merge(base: dict, base_locate, data: dict, locate):
    """`data` (a nearer file's settings) over `base`'s, and where each key now comes from."""
    merged = dict(base)
    for key, value in data.items():
        if key in ("severity", "per-file-ignores") and isinstance(base.get(key), dict):
            merged[key] = {**base[key], **value}
        elif key in ("extend-select", "extend-ignore") and key in base:
            merged[key] = split_selectors(base[key]) + split_selectors(value)
        elif key in ("models", "gpus") and key in base:
            merged[key] = list(base[key]) + list(value)
        else:
            merged[key] = value

    def merged_locate(keys: list) -> str:
        return locate(keys) if keys and keys[0] in data else base_locate(keys)

    return merged, merged_locate


def _read_yaml(path: Path):
    from vllmlint.source.yamlmodel import Mapping, Node, Sequence, SourceFile, parse_documents, to_python

    try:
        text = _read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    source = SourceFile(str(path), text)
    documents, error = parse_documents(source)
    if error is not None:
        raise ConfigError(f"{path}:{error.line}:{error.col}: invalid YAML: {error.message}")
    root = documents[0].root if documents else None
    if root is None:
        return {}, lambda keys: f"{path}"
    if not isinstance(root, Mapping):
        raise ConfigError(f"{path}:1: the configuration must be a mapping of keys")

    def locate(keys: list) -> str:
        node: Node | None = root
        line = 1
        for key in keys:
            key_node = node.key_node(str(key)) if isinstance(node, Mapping) else None
            if isinstance(node, Mapping) and key_node is not None:
                line = key_node.line
                node = node.get(str(key))
            elif isinstance(node, Sequence) and isinstance(key, int) and key < len(node.items):
                node = node.items[key]
                line = node.line
            else:
                break
        return f"{path}:{line}"

    from vllmlint.source.yamlmodel import AliasExpansionError

    try:
        # Aliases are copied a bounded number of times, and a cycle (`exclude: &a [*a]`) is cut: a
        # configuration file is never a reason to hang.
        return to_python(root, strict=True), locate
    except AliasExpansionError as exc:
        raise ConfigError(f"{path}:1: {exc}: write the values out instead of aliasing them") from None


def _read_pyproject(path: Path):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(_read_bytes(path).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses into nested arrays and tables
        raise ConfigError(f"{path}: invalid TOML: arrays or tables nested too deeply") from None
    section = data.get("tool", {}).get("vllmlint", {})

    def locate(keys: list) -> str:
        return f"{path}: [tool.vllmlint]" + "".join(f".{k}" if isinstance(k, str) else f"[{k}]" for k in keys)

    return section, locate


_SEVERITIES = ("error", "warning", "info")
_VERSION = lazy_compile(r"^v?[0-9]+\.[0-9]+(\.[0-9]+){0,2}(\.?post[0-9]+)?$")


def _selectors_ok(value) -> bool:
    return isinstance(value, str) and bool(value) or isinstance(value, list) and all(
        isinstance(v, str) and v for v in value)


def _plainly_valid(data) -> bool:
    """A quick look that only ever says yes to what the schema accepts: most configuration files are a
    few plain keys, and importing jsonschema costs more than linting a file. Anything else, or any doubt,
    goes to jsonschema, which also words the error."""
    checks = {
        "select": _selectors_ok, "ignore": _selectors_ok, "extend-select": _selectors_ok,
        "extend-ignore": _selectors_ok, "extend": lambda v: isinstance(v, str) and bool(v),
        "severity": lambda v: isinstance(v, dict) and all(x in _SEVERITIES for x in v.values()),
        "per-file-ignores": lambda v: isinstance(v, dict) and all(_selectors_ok(x) for x in v.values()),
        "exclude": lambda v: isinstance(v, list) and all(isinstance(x, str) and x for x in v),
        "respect-gitignore": lambda v: isinstance(v, bool),
        "follow-links": lambda v: isinstance(v, bool),
        "require-workloads": lambda v: isinstance(v, bool),
        "render": lambda v: isinstance(v, bool),
        "hf-cache": lambda v: isinstance(v, bool),
        "online": lambda v: isinstance(v, bool),
        "require-suppression-reason": lambda v: isinstance(v, bool),
        "fail-on": lambda v: v in _SEVERITIES,
        "min-level": lambda v: v in _SEVERITIES,
        "vllm-version": lambda v: isinstance(v, str) and bool(_VERSION.match(v)),
        "max-file-size": _size_ok,
        "baseline": lambda v: isinstance(v, str) and bool(v),
        "models": lambda v: v == [],
        "gpus": lambda v: v == [],
    }
    return isinstance(data, dict) and all(k in checks and checks[k](v) for k, v in data.items())


def _validate(data, path: Path, locate) -> None:
    if _plainly_valid(data):
        return
    import json

    import jsonschema

    schema = json.loads((schemas_dir() / "config.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    error = errors[0]
    keys = list(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = list((error.schema or {}).get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        if extra:
            import difflib  # here, not at start-up: only a near miss needs it
            close = difflib.get_close_matches(str(extra[0]), allowed, n=1, cutoff=0.5)
            hint = f" (did you mean `{close[0]}`?)" if close else f" (known keys: {', '.join(allowed)})"
            raise ConfigError(f"{locate(keys + [extra[0]])}: unknown key `{extra[0]}`{hint}")
    where = ".".join(str(k) for k in keys) or "(top level)"
    message = error.message
    if error.validator in ("enum", "oneOf", "type", "pattern"):
        message = f"{error.instance!r} is not valid here: {_expectation(error)}"
        if keys == ["vllm-version"] and isinstance(error.instance, (int, float)):
            message += f" (quote it: YAML reads {error.instance!r} as a number)"
    raise ConfigError(f"{locate(keys)}: `{where}`: {message}")


def _expectation(error) -> str:
    schema = error.schema or {}
    if "enum" in schema:
        return "use one of " + ", ".join(map(str, schema["enum"]))
    if "pattern" in schema:
        return "a release number such as 0.29.0"
    if "oneOf" in schema:
        return "a list of rule codes or names, or one comma-separated string"
    return f"expected {schema.get('type', 'something else')}"


def split_selectors(value) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [part.strip() for item in items for part in str(item).split(",") if part.strip()]


def _to_config(data: dict, path: Path, locate) -> Config:
    from vllmlint.registry import rule, unknown_selectors

    config = Config(path=path)
    for key in ("select", "ignore", "extend-select", "extend-ignore"):
        selectors = split_selectors(data.get(key)) or None
        if selectors:
            bad = unknown_selectors(selectors)
            if bad:
                raise ConfigError(f"{locate([key])}: `{key}`: unknown rule `{bad[0]}`{_did_you_mean(bad[0])}")
        if key.startswith("extend-"):
            setattr(config, key.replace("-", "_"), selectors or [])
        else:
            setattr(config, key, selectors)
    for name, level in (data.get("severity") or {}).items():
        try:
            config.severity[rule(name).code] = level
        except KeyError:
            raise ConfigError(f"{locate(['severity', name])}: `severity`: unknown rule `{name}`"
                              f"{_did_you_mean(name)}") from None
    for glob, selectors in (data.get("per-file-ignores") or {}).items():
        codes = split_selectors(selectors)
        bad = unknown_selectors(codes)
        if bad:
            raise ConfigError(f"{locate(['per-file-ignores', glob])}: unknown rule `{bad[0]}`{_did_you_mean(bad[0])}")
        config.per_file_ignores[glob] = codes
    config.exclude = list(data.get("exclude") or [])
    config.respect_gitignore = data.get("respect-gitignore", True)
    config.follow_links = data.get("follow-links", False)
    config.require_workloads = data.get("require-workloads", False)
    config.render = data.get("render", False)
    config.hf_cache = data.get("hf-cache", False)
    config.online = data.get("online", False)
    config.fail_on = data.get("fail-on")
    config.min_level = data.get("min-level")
    config.vllm_version = str(data["vllm-version"]).lstrip("v") if data.get("vllm-version") else None
    config.require_suppression_reason = data.get("require-suppression-reason", True)
    config.max_file_size = data.get("max-file-size")
    if config.max_file_size is not None and not _size_ok(config.max_file_size):  # .inf, .nan (the schema cannot say)
        raise ConfigError(f"{locate(['max-file-size'])}: `max-file-size`: {config.max_file_size!r} is not valid here: "
                          f"a number of MiB from 0 to {MAX_FILE_SIZE_MIB} (0: no limit)")
    if data.get("baseline"):  # already relative to the file that named it (`_load_chain`)
        config.baseline = Path(data["baseline"])
    config.models = list(data.get("models") or [])
    config.gpus = list(data.get("gpus") or [])
    _check_capacity_entries(config, locate)
    return config


def _check_capacity_entries(config: Config, locate) -> None:
    """Extra models and GPUs must have the catalogs' shape (`schemas/models.schema.json`, `gpus.schema.json`)."""
    if not config.models and not config.gpus:
        return
    import json

    import jsonschema

    for key, schema_name, definition in (("models", "models.schema.json", "model"), ("gpus", "gpus.schema.json", "gpu")):
        entries = getattr(config, key)
        if not entries:
            continue
        schema = json.loads((schemas_dir() / schema_name).read_text(encoding="utf-8"))
        item_schema = {"$ref": f"#/$defs/{definition}", "$defs": schema.get("$defs", {})}
        validator = jsonschema.Draft202012Validator(item_schema)
        for index, entry in enumerate(entries):
            error = next(iter(sorted(validator.iter_errors(entry), key=lambda e: list(e.absolute_path))), None)
            if error is not None:
                keys = [key, index] + list(error.absolute_path)
                raise ConfigError(f"{locate(keys)}: `{key}[{index}]`: {error.message}")


def _did_you_mean(word: str) -> str:
    from vllmlint.registry import all_rules

    names = [r.code for r in all_rules().values()] + [r.name for r in all_rules().values()]
    import difflib  # here, not at start-up: only a near miss needs it
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


# --- globs ----------------------------------------------------------------------------------------
def path_matches(pattern: str, path: str) -> bool:
    """`vllmlint.source.wildmatch.path_matches` (kept here for the callers that read the configuration)."""
    from vllmlint.source.wildmatch import path_matches as matches

    return matches(pattern, path)