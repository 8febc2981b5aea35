"""Downloads of Hugging Face repositories the run shows outside vLLM's own loading: `snapshot_download(...)` in a
container's `python -c` script (read with `ast`, never run), and `huggingface-cli download` / `hf download`
commands. Each with the repository id, whether a revision is pinned, and a position in the file.

Only what is certain is kept: a repository id that is a literal (or a module-level name bound once to a literal),
a call without `**kwargs`, a script the scalar holds verbatim (an exec-form `command`/`args` item, whose offsets
map back into the file, also inside block scalars).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from vllmlint.records import dataclass
from vllmlint.vllm.invocation import Token

if TYPE_CHECKING:
    from vllmlint.k8s.objects import Container, World

_PYTHONS = ("python", "python3")
_HF_CLIS = ("huggingface-cli", "hf")
_MAX_SCRIPT = 100_000  # characters of one `python -c` script that are parsed


@dataclass(frozen=True)
class HubDownload:
    """One download of a Hugging Face repository: `how` is "snapshot_download" or the CLI command."""

    repo_id: str
    anchor: Token
    pinned: bool
    container: Container | None
    how: str


def hub_id(name: str) -> bool:
    """`org/name` of a Hugging Face repository, not a local path, URL or bucket."""
    if name.startswith(("/", ".", "~")) or "://" in name or name.count("/") != 1 or any(c.isspace() for c in name):
        return False
    org, repo = name.split("/")
    return bool(org) and bool(repo)


def hub_downloads(world: World) -> list[HubDownload]:
    """Every download of a Hub repository the run's commands show (computed once per world)."""
    return world.fact(_downloads)


def _downloads(world: World) -> list[HubDownload]:
    found: list[HubDownload] = []
    for command in world.shell_commands:
        tokens = command.tokens
        if not tokens:
            continue
        program = tokens[0].text.rsplit("/", 1)[-1]
        if program in _PYTHONS:
            found.extend(_python_c(tokens, command.container))
        elif program in _HF_CLIS and len(tokens) > 2 and tokens[1].text == "download":
            found.extend(_cli(tokens, command.container, f"{program} download"))
    return found


def _cli(tokens: list[Token], container: Container | None, how: str) -> list[HubDownload]:
    """`hf download REPO [FILES...] [--revision R]`: the first word that is not an option is the repository."""
    words = tokens[2:]
    if any(t.dynamic for t in words):
        return []
    pinned = any(t.text == "--revision" or t.text.startswith("--revision=") for t in words)
    takes_value = {"--revision", "--repo-type", "--local-dir", "--cache-dir", "--token", "--include", "--exclude",
                   "--max-workers", "--local-dir-use-symlinks", "--resume-download"}
    skip = False
    for token in words:
        if skip:
            skip = False
            continue
        if token.text.startswith("-"):
            skip = token.text in takes_value
            continue
        if not hub_id(token.text) or any(t.text in ("--repo-type",) for t in words):
            return []  # a dataset or space repository, or not a repository id
        return [HubDownload(token.text, token, pinned, container, how)]
    return []


def _python_c(tokens: list[Token], container: Container | None) -> list[HubDownload]:
    for index, token in enumerate(tokens[1:-1], start=1):
        if token.text != "-c":
            continue
        script = tokens[index + 1]
        node = script.node
        if node is None or script.dynamic or node.text != script.text or "snapshot_download" not in script.text \
                or len(script.text) > _MAX_SCRIPT:
            return []
        return _snapshot_calls(script, container)
    return []


def _snapshot_calls(script: Token, container: Container | None) -> list[HubDownload]:
    import ast

    text = script.text
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: dict[str, str | None] = {}
    for statement in tree.body:  # module-level `name = "literal"`; a name bound twice is not known
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    value = statement.value
                    literal = value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) \
                        else None
                    names[target.id] = literal if target.id not in names else None
    line_starts = [0]
    for text_line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(text_line))
    found = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name != "snapshot_download" or any(k.arg is None for k in call.keywords):
            continue
        repo = next((k.value for k in call.keywords if k.arg == "repo_id"), call.args[0] if call.args else None)
        repo_id = repo.value if isinstance(repo, ast.Constant) and isinstance(repo.value, str) \
            else names.get(repo.id) if isinstance(repo, ast.Name) else None
        if not repo_id or not hub_id(repo_id):
            continue
        pinned = any(k.arg == "revision" for k in call.keywords)
        where = func.end_col_offset if isinstance(func, ast.Attribute) else func.col_offset
        line: int = (func.end_lineno or func.lineno) if isinstance(func, ast.Attribute) else func.lineno
        if line - 1 >= len(line_starts) or where is None:
            continue
        # ast counts columns in UTF-8 bytes: ASCII lines only, where bytes and characters agree
        source_line = text[line_starts[line - 1]:line_starts[line] if line < len(line_starts) else len(text)]
        if not source_line.isascii():
            continue
        start = line_starts[line - 1] + (where - len(name) if isinstance(func, ast.Attribute) else where)
        node = script.node
        assert node is not None
        anchor = Token(name, script.source, node.source_index(start), node.source_index(start + len(name)))
        found.append(HubDownload(repo_id, anchor, pinned, container, "snapshot_download"))
    return found
