"""Finding and reading input files, safely: nothing the linted tree controls is ever executed or followed
out of the tree.

- Folders are searched for regular files only: a FIFO, socket or device found in a scan is never opened
  (opening a FIFO blocks until something writes to it). A file named explicitly is read whatever it is,
  a FIFO or `/dev/stdin` as a stream, never more than the size limit.
- Symbolic links found in a scan are followed only while they stay inside the folders and files given on
  the command line; a link that leaves them is skipped with a one-line note unless `follow_links` is set,
  and a broken link is reported in one line. Files reached through a link that leaves the given paths are
  listed in `Collection.outside`: nothing may be written through them (see `leaves_roots`).
- `.gitignore` files (every level, negations, `.git/info/exclude`, `core.excludesFile` or `git/ignore`) are
  matched by `vllmlint.source.wildmatch`, git's wildmatch rules in polynomial time (a pattern of many `*` is not
  a reason to hang), instead of running `git check-ignore`: git runs commands named by the repository's own `.git/config` (`core.fsmonitor`), and
  the repository being linted is not trusted. Files git tracks are never ignored, as `git check-ignore`
  does not report them: their names are read from `.git/index` (format: git's
  Documentation/gitformat-index.txt).
"""
from __future__ import annotations

import errno
import re
import os
import stat
from vllmlint.records import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Iterable

from vllmlint.finding import Notice
from vllmlint.lazyre import lazy_compile

if TYPE_CHECKING:
    from vllmlint.source.wildmatch import IgnoreRules

YAML_SUFFIXES = {".yaml", ".yml", ".json"}
SHELL_SUFFIXES = {".sh", ".bash"}
MARKDOWN_SUFFIXES = {".md", ".markdown"}
SCAN_SUFFIXES = YAML_SUFFIXES | SHELL_SUFFIXES | MARKDOWN_SUFFIXES


def is_dockerfile(name: str) -> bool:
    """`Dockerfile`, `Containerfile`, `*.Dockerfile`, `Dockerfile.*` (vllmlint.source.dockerfile reads them)."""
    lower = name.lower()
    if lower in ("dockerfile", "containerfile") or lower.endswith((".dockerfile", ".containerfile")):
        return True
    # `Dockerfile.gpu`, `Containerfile.rocm`; not `Dockerfile.md` or `Dockerfile.yaml`, which are what they end in.
    return lower.startswith(("dockerfile.", "containerfile.")) and os.path.splitext(lower)[1] not in SCAN_SUFFIXES
SKIPPED_FOLDERS = ("node_modules", "__pycache__")
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")  # what `kustomize build` reads
CHART_FILE = "Chart.yaml"  # a Helm chart's folder (vllmlint.render)


def is_kustomization(shown: str) -> bool:
    """A Kustomization file by its name (a display path): the Kustomize reader is imported only for one."""
    return shown.replace("\\", "/").rpartition("/")[2] in KUSTOMIZATION_NAMES


# stat() errors that mean "there is nothing there" (what pathlib's is_file() swallows); any other error is
# a file that exists but cannot be read, and is reported as such.
_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EBADF, errno.ENAMETOOLONG)


@dataclass
class Collection:
    """What a search of the given paths found."""

    files: list[Path] = field(default_factory=list)  # in a stable order, independent of the argument order
    missing: list[str] = field(default_factory=list)  # given paths that do not exist
    notices: list[Notice] = field(default_factory=list)  # broken links, unlistable folders, skipped links
    outside: set[Path] = field(default_factory=set)  # reached through a link that leaves the given paths
    failed: bool = False  # something given could not be searched: the run exits 2

    def note(self, code: str, message: str, path: str, level: str) -> None:
        self.notices.append(Notice(code, message, path, 0, level))
        if level == "error":
            self.failed = True


def collect(paths: Iterable[str], *, follow_links: bool = False, exclude: Iterable[str] = (),
            respect_gitignore: bool = False) -> Collection:
    """Files to lint under `paths`. Folders recurse into YAML/JSON/shell/Markdown files, skipping hidden
    folders and files, `node_modules`, symlink loops, files matching `exclude` globs (gitignore-style, on
    display paths) and, with `respect_gitignore`, files git ignores. A file named explicitly is linted
    whatever its name (but `exclude` still applies to it)."""
    paths = list(paths)
    found = Collection()
    seen: dict[str, int] = {}
    roots = [os.path.realpath(p) for p in paths]
    for raw in paths:
        try:
            info = os.stat(raw)
        except OSError as exc:
            if exc.errno in _ABSENT:
                found.missing.append(raw)
            else:  # it exists but cannot be looked at (a folder on the way denies search): "cannot read"
                _add(found, seen, Path(raw), os.path.abspath(raw))
            continue
        if stat.S_ISDIR(info.st_mode):
            _scan(Path(raw), found, seen, roots, follow_links)
        else:
            _add(found, seen, Path(raw), os.path.realpath(raw))
    globs = list(exclude)
    ignore = _GitIgnore() if respect_gitignore else None
    if globs or ignore is not None:
        def skipped(path: Path, is_dir: bool = False) -> bool:
            if globs:
                from vllmlint.source.wildmatch import path_matches  # only a run with `exclude` globs needs it

                shown = display_path(path)
                if any(path_matches(glob, shown) for glob in globs):
                    return True
            return ignore is not None and ignore.ignored(path, is_dir)

        found.files = [f for f in found.files if not skipped(f)]
        found.notices = [n for n in found.notices if not skipped(Path(n.path), n.message.startswith("cannot list"))]
        found.failed = any(n.level == "error" for n in found.notices)
    found.files.sort(key=_order)
    return found


def collect_files(paths: list[str], follow_links: bool = False) -> tuple[list[Path], list[str]]:
    """Files to lint and the paths that do not exist (see `collect`)."""
    found = collect(paths, follow_links=follow_links)
    return found.files, found.missing


def _order(path: Path) -> tuple:
    """The order of a folder walk (a folder's files by name, then its subfolders by name), on absolute
    paths: the same files in any argument order give the same world and the same output."""
    parts = os.path.abspath(path).split(os.sep)
    return tuple((1, part) for part in parts[:-1]) + ((0, parts[-1]),)


def _add(found: Collection, seen: dict[str, int], path: Path, key: str, leaves: bool = False) -> None:
    """Add `path` unless its file (`key`, its real path) is there already. A file reached by several names
    is linted under one, whatever the order they were met in: a name inside the given paths before one
    through a link that leaves them, then its real name before a name through a link, then walk order."""
    index = seen.get(key)
    if index is None:
        seen[key] = len(found.files)
        found.files.append(path)
        if leaves:
            found.outside.add(path)
        return
    kept = found.files[index]
    if _rank(path, key, leaves) < _rank(kept, key, kept in found.outside):
        found.files[index] = path
        found.outside.discard(kept)
        if leaves:
            found.outside.add(path)


def _rank(path: Path, real: str, leaves: bool) -> tuple:
    return (leaves, os.path.abspath(path) != real, _order(path))


def _within(real: str, roots: list[str]) -> bool:
    for root in roots:
        if real == root or real.startswith(root if root.endswith(os.sep) else root + os.sep):
            return True
    return False


def leaves_roots(path: Path | str, roots: Iterable[str]) -> bool:
    """True when `path`, with every link resolved, is outside all of `roots` (paths as given): a fixer
    must not write such a file, a formatter must not quote it."""
    real_roots = [os.path.realpath(r) for r in roots]
    return not _within(os.path.realpath(path), real_roots)


def _scan(top: Path, found: Collection, seen: dict[str, int], roots: list[str], follow_links: bool) -> None:
    """Depth first, a folder's files (sorted) before its subfolders (sorted), as `os.walk` walks."""
    stack: list[tuple[str, str, bool]] = [(str(top), os.path.realpath(top), False)]
    visited: set[str] = set()
    while stack:
        folder, real_folder, outside = stack.pop()
        if real_folder in visited:
            continue  # a symlink loop, or a folder reached twice
        visited.add(real_folder)
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            found.note("VL001", f"cannot list folder: {exc.strerror or exc}; its files were not linted",
                       display_path(Path(folder)), "error")
            continue
        files: list[tuple[str, str, bool]] = []
        folders: list[tuple[str, str, bool]] = []
        for entry in entries:
            name = entry.name
            if name.startswith(".") and name != ".env":
                continue
            wanted = os.path.splitext(name)[1].lower() in SCAN_SUFFIXES or is_env_file(name) or is_dockerfile(name)
            try:
                if entry.is_symlink():
                    real = os.path.realpath(entry.path)
                    try:
                        info = os.stat(entry.path)
                    except OSError:
                        if wanted:
                            found.note("VL005", "skipped: broken symbolic link (its target does not exist)",
                                       display_path(Path(entry.path)), "warning")
                        continue
                    is_dir, is_file = stat.S_ISDIR(info.st_mode), stat.S_ISREG(info.st_mode)
                    leaves = not _within(real, roots)
                    if leaves and not follow_links and (is_dir or (is_file and wanted)):
                        found.note("VL005", "skipped: symbolic link to outside the linted paths (--follow-links "
                                   "lints it)", display_path(Path(entry.path)), "note")
                        continue
                    leaves = leaves or outside
                else:
                    real = os.path.join(real_folder, name)
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_file = entry.is_file(follow_symlinks=False)  # FIFOs, sockets, devices are never opened
                    leaves = outside
            except OSError:
                continue  # vanished while we looked
            if is_dir:
                if name not in SKIPPED_FOLDERS:
                    folders.append((entry.path, real, leaves))
            elif is_file and wanted:
                files.append((entry.path, real, leaves))
        for path, real, leaves in sorted(files):
            _add(found, seen, Path(path), real, leaves)
        stack.extend(sorted(folders, reverse=True))


# --- reading -------------------------------------------------------------------------------------
class TooLarge(Exception):
    """A file over the size limit; `size` in bytes, or None for a stream (only the limit is known)."""

    def __init__(self, size: int | None, head: bytes = b""):
        super().__init__(size)
        self.size = size
        self.head = head  # a stream: what was read of it before the limit was passed (the rest is unread)


def read_limited(path: Path, limit: int) -> bytes:
    """The file's bytes; TooLarge when over `limit` bytes (0: no limit). A regular file's size is known
    before reading it; anything else (a FIFO, `/dev/stdin`, a device) is read as a stream, at most limit+1
    bytes. OSError when it cannot be read."""
    with open(path, "rb") as handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISREG(info.st_mode):
            if limit and info.st_size > limit:
                raise TooLarge(info.st_size)
            return handle.read()
        return read_stream(handle, limit)


SMALL_FILE_LIMIT = 4 * 1024 * 1024  # ignore files, git config files, vllmlint's own configuration files


class NotRegular(OSError):
    """Not a regular file: a FIFO, a device, a socket or a folder (what `read_regular` refuses to read)."""


def read_regular(path: str | Path, limit: int, truncate: bool = False) -> bytes:
    """The bytes of a regular file named by something the linted tree controls (a configuration file, the names
    it gives, `.git/index`): opened without blocking (O_NONBLOCK: a FIFO never waits for a writer), refused
    unless fstat says it is a regular file (no device, no FIFO), and never more than `limit` bytes: over it,
    TooLarge, or the first `limit` bytes with `truncate`. A procfs file that would block (`/proc/kmsg`) fails
    with EAGAIN. OSError (NotRegular for a file that is not regular) when it cannot be read."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with open(descriptor, "rb", buffering=0) as handle:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file")
        if info.st_size > limit and not truncate:
            raise TooLarge(info.st_size)
        chunks, size = [], 0
        while size <= limit:  # procfs files say 0 bytes and have more; a file may grow while it is read
            chunk = handle.read(min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        if not truncate:
            raise TooLarge(None)
        data = data[:limit]
    return data


def read_stream(stream: BinaryIO, limit: int) -> bytes:
    """At most `limit` bytes of a stream (0: all of it); TooLarge when there is more."""
    if not limit:
        return stream.read()
    data = stream.read(limit + 1)  # a buffered reader loops until it has them or the stream ends
    if len(data) > limit:
        raise TooLarge(None, data)
    return data


def too_large_message(size: int | None, limit: int) -> str:
    what = f"{size / 1048576:.1f} MiB is" if size is not None else "the stream is"
    return f"skipped: {what} over the {limit / 1048576:g} MiB limit (raise it with --max-file-size, 0 for none)"


def read_text(data: bytes) -> tuple[str | None, str | None]:
    """Decoded text, or why it is not text."""
    if b"\x00" in data[:8192]:
        return None, "binary file (it contains NUL bytes), not YAML or shell"
    if not data.startswith(b"\xef\xbb\xbf"):  # no BOM: what "utf-8-sig" decodes, without importing its codec
        try:
            return data.decode("utf-8"), None
        except UnicodeDecodeError:
            pass  # the error below, as it always was
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        return None, f"not UTF-8 text (invalid byte at line {line})"


# --- where a file is shown ------------------------------------------------------------------------
_TOPLEVEL_CACHE: dict[str, str | None] = {}


def git_toplevel(directory: str) -> str | None:
    """The enclosing git work tree, found by looking for `.git` (no subprocess: start-up matters, and git
    must not run in an untrusted repository)."""
    if directory in _TOPLEVEL_CACHE:
        return _TOPLEVEL_CACHE[directory]
    current = directory
    result = None
    visited = []  # the folders on the way up share the answer: sibling folders then stop at their parent
    while True:
        if current in _TOPLEVEL_CACHE:
            result = _TOPLEVEL_CACHE[current]
            break
        visited.append(current)
        if os.path.exists(os.path.join(current, ".git")):
            result = current
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for folder in visited:
        _TOPLEVEL_CACHE[folder] = result
    return result


_DISPLAYED: dict[tuple[str, str], str] = {}  # (path, current folder) -> display_path: a run asks twice per file


def display_path(path: Path) -> str:
    """Relative to the git top level when inside a repository, else to the current folder."""
    here = os.getcwd()
    key = (os.fspath(path), here)
    found = _DISPLAYED.get(key)
    if found is None:
        absolute = os.path.abspath(path)
        top = git_toplevel(os.path.dirname(absolute))
        relative = _below(absolute, top or here)
        if relative.startswith(".."):
            relative = _below(absolute, here)
        found = _DISPLAYED[key] = relative.replace(os.sep, "/")
    return found


def _below(absolute: str, base: str) -> str:
    """os.path.relpath(absolute, base) for two absolute, normalised paths; a prefix test where one is below the
    other (nearly always), which costs a tenth of relpath's splitting and joining."""
    prefix = base if base.endswith(os.sep) else base + os.sep
    if absolute.startswith(prefix) and os.path.normcase(absolute) == absolute and os.path.normcase(base) == base:
        return absolute[len(prefix):] or "."
    return os.path.relpath(absolute, base)


# --- .gitignore -----------------------------------------------------------------------------------
def git_ignored(files: list[Path]) -> set[Path]:
    """The files git would ignore, decided from the ignore files alone (git is never run)."""
    ignore = _GitIgnore()
    return {path for path in files if ignore.ignored(path)}


class _GitIgnore:
    """Ignore rules of every repository met, read once each."""

    def __init__(self) -> None:
        self._repos: dict[str, _Repository] = {}

    def ignored(self, path: Path, is_dir: bool = False) -> bool:
        absolute = os.path.abspath(path)
        top = git_toplevel(absolute if is_dir else os.path.dirname(absolute))
        if top is None:
            return False
        if top == absolute:  # the work tree itself (a folder notice about the top)
            return False
        repo = self._repos.get(top)
        if repo is None:
            repo = self._repos[top] = _Repository(top)
        return repo.ignored(os.path.relpath(absolute, top).replace(os.sep, "/"), is_dir)


def _read_lines(path: str) -> list[str] | None:
    """A regular file's lines; None for anything else (a config file may name a FIFO or a device)."""
    try:
        data = read_regular(path, SMALL_FILE_LIMIT, truncate=True)  # an ignore file of megabytes is not one
    except OSError:
        return None
    return data.decode("utf-8", errors="replace").splitlines()


def _spec(lines: list[str] | None) -> IgnoreRules | None:
    """The patterns of an ignore file; None when it has none (empty lines and comments only: git's own
    `info/exclude`). A malformed pattern (`[z`, `a\\`) never matches, as in git."""
    if not lines or all(not line or line[0] == "#" for line in lines):
        return None
    from vllmlint.source.wildmatch import IgnoreRules

    rules = IgnoreRules(lines)
    return rules or None


def _config_excludes_file(paths: list[str], top: str) -> str | None:
    """`core.excludesFile` from the git config files `paths` (later wins), as git would open it: `~`
    expanded, a relative path taken from the work tree top (where git runs); None when none sets it. Only
    plain `[core]` sections are read: `include` and `includeIf` are not followed (a setting only an included
    file makes is missed), the system config is not read, and nothing is executed."""
    value = None
    for path in paths:
        found = _core_excludes_file(_read_lines(path) or [])
        if found is not None:
            value = found
    if value is None or value == "":
        return value  # set to nothing: git reads no global excludes file at all
    return os.path.join(top, os.path.expanduser(value))


def _core_excludes_file(lines: list[str]) -> str | None:
    """The last `excludesFile` of a `[core]` section in a git config file (git-config(1) "Syntax"): a small
    strict reader; a line it does not understand is skipped."""
    value = None
    in_core = False
    index = 0
    while index < len(lines):
        line = lines[index].lstrip(" \t")
        index += 1
        if line.startswith("["):
            end = line.find("]")
            header = line[1:end].strip() if end > 0 else ""
            # `[core]` only: `[core "x"]` and `[core.x]` are subsections (`core.x.excludesFile`)
            in_core = header.lower() == "core"
            if end < 0:
                continue
            line = line[end + 1:].lstrip(" \t")  # a key may follow the header on the same line
        if not line or line[0] in "#;":
            continue
        key, sep, rest = line.partition("=")
        if not sep:
            continue
        # every value is read, so that a value continued on the next line is not taken for a key
        parsed, index = _config_value(rest, lines, index)
        if in_core and key.strip().lower() == "excludesfile" and parsed is not None:
            value = parsed
    return value


def _config_value(text: str, lines: list[str], index: int) -> tuple[str | None, int]:
    r"""A config value (after the `=`): quotes, `\\ \" \n \t \b` escapes, comments, a trailing `\` that
    continues on the next line. None for a malformed value."""
    out = ""
    spaces = ""
    quoted = False
    position = 0
    text = text.lstrip(" \t")
    while True:
        if position >= len(text):
            if quoted:
                return None, index
            return out, index
        char = text[position]
        position += 1
        if not quoted and char in " \t":
            if out:
                spaces += " "
            continue
        if not quoted and char in "#;":
            return out, index
        out += spaces
        spaces = ""
        if char == '"':
            quoted = not quoted
        elif char == "\\":
            if position >= len(text):  # continued on the next line
                if index >= len(lines):
                    return None, index
                text, position, index = lines[index], 0, index + 1
                continue
            escaped = text[position]
            position += 1
            mapped = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "b": "\b"}.get(escaped)
            if mapped is None:
                return None, index
            out += mapped
        else:
            out += char


def _git_dirs(top: str) -> tuple[str, str]:
    """The repository's git folder and its common folder (they differ for a `git worktree`): `.git` is a
    folder, or a file `gitdir: PATH` (worktrees, submodules), and the git folder may hold `commondir`."""
    dot_git = os.path.join(top, ".git")
    git_dir = dot_git
    if os.path.isfile(dot_git):
        lines = _read_lines(dot_git) or []
        first = lines[0] if lines else ""
        if first.startswith("gitdir:"):
            git_dir = os.path.join(top, first[len("gitdir:"):].strip())
    common = git_dir
    common_lines = _read_lines(os.path.join(git_dir, "commondir"))
    if common_lines:
        common = os.path.join(git_dir, common_lines[0].strip())
    return git_dir, common


class _Repository:
    def __init__(self, top: str):
        self.top = top
        git_dir, common = _git_dirs(top)
        self.tracked = _tracked_paths(git_dir, common)
        config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        # The user's global excludes: `core.excludesFile` when a config file sets it (the user's, then the
        # repository's own `.git/config`, which is only read), else `$XDG_CONFIG_HOME/git/ignore`.
        excludes = _config_excludes_file([os.path.join(config_home, "git", "config"),
                                          os.path.join(os.path.expanduser("~"), ".gitconfig"),
                                          os.path.join(common, "config")], top)
        if excludes is None:
            excludes = os.path.join(config_home, "git", "ignore")
        # Lowest precedence first: the user's global excludes, then .git/info/exclude, then .gitignore files
        # from the top down (gitignore(5): "the last matching pattern decides", deeper files take precedence).
        self._base_files = (excludes, os.path.join(common, "info", "exclude"))  # read by `base`
        self._specs: dict[str, IgnoreRules | None] = {}
        self._folders: dict[str, bool] = {}

    @cached_property
    def base(self) -> list[IgnoreRules]:
        """The global excludes and `.git/info/exclude`, read when a file git does not track is first judged (a
        pre-commit run's files are tracked: it needs no pattern)."""
        return [s for s in (_spec(_read_lines(path) if path else None) for path in self._base_files) if s is not None]

    def _folder_spec(self, folder: str) -> IgnoreRules | None:
        if folder not in self._specs:
            self._specs[folder] = _spec(_read_lines(os.path.join(self.top, folder, ".gitignore")))
        return self._specs[folder]

    def _decide(self, parts: list[str], is_dir: bool) -> bool:
        decision: bool | None = None
        full = "/".join(parts)
        for spec in self.base:
            result = spec.decide(full, is_dir)
            if result is not None:
                decision = result
        for depth in range(len(parts)):
            level = self._folder_spec("/".join(parts[:depth]))
            if level is not None:
                result = level.decide("/".join(parts[depth:]), is_dir)
                if result is not None:
                    decision = result
        return bool(decision)

    def _folder_ignored(self, parts: list[str]) -> bool:
        key = "/".join(parts)
        if key not in self._folders:
            # "It is not possible to re-include a file if a parent directory of that file is excluded"
            self._folders[key] = (len(parts) > 1 and self._folder_ignored(parts[:-1])) or self._decide(parts, True)
        return self._folders[key]

    def ignored(self, relative: str, is_dir: bool = False) -> bool:
        if relative in self.tracked or relative.startswith("../"):
            return False
        parts = relative.split("/")
        if len(parts) > 1 and self._folder_ignored(parts[:-1]):
            return True
        return self._decide(parts, is_dir)


INDEX_LIMIT = 256 * 1024 * 1024  # a git index of a million paths is about 100 MiB


def _tracked_paths(git_dir: str, common: str) -> frozenset[str]:
    """The paths in `.git/index` (versions 2 to 4; gitformat-index(5)). An index that cannot be read
    means nothing is known to be tracked."""
    try:  # a FIFO or a link to /dev/zero in place of the index (an archive, a copied workspace) is not read
        data = read_regular(os.path.join(git_dir, "index"), INDEX_LIMIT)
    except (OSError, TooLarge):
        return frozenset()
    try:
        return frozenset(_index_entries(data, _hash_size(common)))
    except (ValueError, IndexError, UnicodeDecodeError):
        return frozenset()


def _hash_size(common: str) -> int:
    """20 bytes (SHA-1), or 32 in a repository whose config says `objectformat = sha256`."""
    for line in _read_lines(os.path.join(common, "config")) or []:
        key, _, value = line.partition("=")
        if key.strip().lower() == "objectformat" and value.strip().lower() == "sha256":
            return 32
    return 20


def _index_entries(data: bytes, hash_size: int) -> list[str]:
    if data[:4] != b"DIRC":
        raise ValueError("not an index")
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        raise ValueError(f"index version {version}")
    names: list[str] = []
    pos = 12
    previous = b""
    fixed = 40 + hash_size + 2  # stat data (10 32-bit fields), object name, flags
    for _ in range(count):
        start = pos
        flags = int.from_bytes(data[pos + fixed - 2:pos + fixed], "big")
        pos += fixed
        if version >= 3 and flags & 0x4000:
            pos += 2  # extended flags
        if version == 4:
            # the name is the previous one minus N bytes, plus a NUL-terminated suffix (no padding)
            strip, pos = _varint(data, pos)
            end = data.index(b"\0", pos)
            name = previous[:len(previous) - strip] + data[pos:end]
            pos = end + 1
        else:
            end = data.index(b"\0", pos)
            name = data[pos:end]
            pos = start + ((end - start) // 8 + 1) * 8  # 1 to 8 NULs pad the entry to a multiple of 8
        previous = name
        names.append(name.decode("utf-8"))
    return names


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset encoding (varint.c): big-endian 7-bit groups, each continuation adding one."""
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos


def is_env_file(name: str) -> bool:
    """A Compose `.env` file or an `env_file` named `*.env`: found by folder searches, read only by the Compose
    reader (vllmlint/source/compose.py) for the services beside it, never parsed as YAML."""
    return name == ".env" or name.lower().endswith(".env")


# A line that only YAML (or JSON) starts this way: a document marker or directive, a list item, a flow
# collection, or a `key:` (plain or quoted) followed by a space or the end of the line. A shell line starts
# with a command word (`vllm serve`, `export A=b`, `docker run`) and none of these.
_YAML_LINE = lazy_compile(r"""[ \t]*(?:---|\.\.\.|%YAML|%TAG|-(?:[ \t]|$)|[{\[]|"[^"\n]*"[ \t]*:|'[^'\n]*'[ \t]*:|"""
                        r"""[^\s#:'"\-{\[][^\s:]*[ \t]*:(?:[ \t]|$))""")
_MARKDOWN_FENCE = lazy_compile(r"^(?:```|~~~)", re.M)


def sniff_suffix(text: str) -> str:
    """What standard input holds when no --stdin-filename names it, as the suffix a file of that kind would
    have: `.sh` for a shell script (a `#!` line; or text whose first line is no YAML and whose YAML parse holds
    no mapping or list, such as `vllm serve MODEL --flag`), `.md` for Markdown (fence lines at the start of a
    line: YAML has none outside block scalars), else `.yaml` (YAML and JSON, Helm output included)."""
    if text.startswith("#!"):
        return ".sh"
    if len(_MARKDOWN_FENCE.findall(text)) >= 2:
        return ".md"
    first = next((line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")), None)
    if first is None or _YAML_LINE.match(first):
        return ".yaml"
    from vllmlint.source.yamlmodel import Mapping, Sequence, SourceFile, parse_documents

    documents, error = parse_documents(SourceFile("-", text, "-"))
    if any(isinstance(d.root, (Mapping, Sequence)) for d in documents):
        return ".yaml"
    return ".sh"
