"""One workspace folder as the language server lints it: its configuration, its files, the last result.

A lint run reads every file of the folder the way `vllmlint FOLDER` would (the same search, the config's
`exclude`, .gitignore), except that an open document's unsaved text stands in for the file on disk, as
`--stdin-filename` does on the command line. So an HPA open in the editor is judged against the Deployment
in another file. Parsed YAML is kept between runs (`ParseCache`): only what changed is parsed again.

Nothing here imports pygls: the server (`vllmlint.server.server`) turns results into LSP messages.
"""
from __future__ import annotations

import os
import posixpath
from vllmlint.records import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from vllmlint.server.parse_cache import ParseCache

if TYPE_CHECKING:
    from vllmlint.config import Config
    from vllmlint.engine import LintOptions, LintResult
    from vllmlint.k8s.objects import World

CONFIG_FILES = (".vllmlint.yaml", ".vllmlint.yml", "pyproject.toml")


def options_from_config(config: Config) -> LintOptions:
    """The LintOptions `vllmlint check` builds from a configuration file when no option overrides it (the file's
    selectors and release were checked when it was read: `vllmlint.config`)."""
    from vllmlint.config import ConfigError
    from vllmlint.engine import LintOptions

    selected, ignored = config.selection()
    baseline = None
    if config.baseline:
        from vllmlint.baseline import BaselineError, load_baseline

        try:
            baseline = load_baseline(Path(config.baseline))
        except BaselineError as exc:
            raise ConfigError(str(exc)) from None
    return LintOptions(select=selected, ignore=ignored, vllm_version=config.vllm_version, severity=dict(config.severity),
                       max_file_size=config.file_size_limit(),
                       require_suppression_reason=config.require_suppression_reason,
                       per_file_ignores=dict(config.per_file_ignores), baseline=baseline)


@dataclass
class Run:
    """The last lint run of a project: its result, its world, and the text each file was linted as."""

    result: LintResult
    world: World
    texts: dict[str, str] = field(default_factory=dict)  # absolute path -> text linted (open documents)
    shown: dict[str, str] = field(default_factory=dict)  # absolute path -> display path
    paths: dict[str, str] = field(default_factory=dict)  # display path -> absolute path


class Project:
    """A workspace folder (`root`), or a lone file opened outside every folder (`single`)."""

    def __init__(self, root: Path, single: Path | None = None):
        self.root = root.resolve()
        self.single = single
        self.cache = ParseCache()
        self.config: Config | None = None
        self.config_error: str | None = None
        self.options: LintOptions | None = None
        self._files: list[Path] | None = None
        self.last: Run | None = None
        self.load_config()

    # configuration
    def load_config(self) -> None:
        """(Re)read the folder's `.vllmlint.yaml` / `pyproject.toml` with the loader the CLI uses. A broken file
        leaves the defaults in force and says why (`config_error`), as one line with its file and line."""
        from vllmlint.config import Config, ConfigError, find_config, load_config

        self.config_error = None
        try:
            found = find_config(self.root)
            config = load_config(found, [self.root]) if found else Config()  # the workspace is the tree
            options = options_from_config(config)
        except ConfigError as exc:
            self.config_error = str(exc)
            config = Config()
            options = options_from_config(config)
        self.config, self.options = config, options
        self._register_models(config)
        self._files = None  # `exclude` may have changed
        self.cache.clear()

    @staticmethod
    def _register_models(config: Config) -> None:
        from vllmlint.capacity.specs import clear_extra, register_extra

        clear_extra()
        if config.models or config.gpus:
            register_extra(models=config.models, gpus=config.gpus)

    def is_config_file(self, path: Path) -> bool:
        """Whether `path` is a configuration file this project reads, or would read were it created (in the
        folder or above it: the search goes up to the repository root)."""
        if path.name not in CONFIG_FILES:
            return False
        resolved = path.resolve()
        config = self.config
        if config is not None and config.path is not None:
            if resolved in {Path(config.path).resolve(), *(Path(e).resolve() for e in config.extends)}:
                return True
        return self.root == resolved.parent or self.root.is_relative_to(resolved.parent)

    # files
    def contains(self, path: Path) -> bool:
        if self.single is not None:
            return path.resolve() == self.single.resolve()
        try:
            path.resolve().relative_to(self.root)
            return True
        except ValueError:
            return False

    def files(self) -> list[Path]:
        """The files `vllmlint ROOT` would lint (searched once, again after `forget_files`)."""
        if self._files is None:
            if self.single is not None:
                self._files = [self.single] if self.single.is_file() else []
            else:
                from vllmlint.source.files import collect

                config = self.config
                assert config is not None
                found = collect([str(self.root)], exclude=list(config.exclude),
                                respect_gitignore=config.respect_gitignore, follow_links=config.follow_links)
                self._files = found.files
        return self._files

    def forget_files(self) -> None:
        """Files were created or deleted: search again at the next run."""
        self._files = None

    def excluded(self, path: Path) -> bool:
        """An open document the folder search would skip for the config's `exclude` (a new, unsaved file is
        linted when nothing excludes it)."""
        from vllmlint.config import path_matches
        from vllmlint.source.files import display_path

        config = self.config
        shown = display_path(path)
        return config is not None and any(path_matches(glob, shown) for glob in config.exclude)

    # linting
    def lint(self, overlays: dict[str, str]) -> Run:
        """Lint the folder; `overlays`: absolute path -> the unsaved text of an open document of it."""
        from vllmlint.engine import Linter
        from vllmlint.source.files import SCAN_SUFFIXES, display_path, is_dockerfile

        assert self.options is not None
        linter = Linter(self.options)
        linter.parse_cache = self.cache  # type: ignore[assignment]  # (Linter.parse_cache: any object with parse)
        run_texts: dict[str, str] = {}
        shown_of: dict[str, str] = {}
        on_disk = self.files()
        listed = {os.path.abspath(p) for p in on_disk}
        for path in on_disk:
            absolute = os.path.abspath(path)
            text = overlays.get(absolute)
            if text is None:
                linter.add_file(path)
                shown_of[absolute] = display_path(path)
            else:
                shown_of[absolute] = self._add_overlay(linter, Path(absolute), text)
                run_texts[absolute] = text
        for absolute, text in sorted(overlays.items()):
            if absolute in listed:
                continue
            path = Path(absolute)
            # A new, unsaved file; a script without a suffix (`#!`) as a file named on the command line would be.
            if (path.suffix.lower() in SCAN_SUFFIXES or text.startswith("#!") or is_dockerfile(path.name)) \
                    and not self.excluded(path):
                shown_of[absolute] = self._add_overlay(linter, path, text)
                run_texts[absolute] = text
        result = linter.run()
        self._after_run(result)
        run = Run(result, linter.world, run_texts, shown_of, {shown: path for path, shown in shown_of.items()})
        self.last = run
        return run

    def too_large(self, text: str) -> int | None:
        """The size in bytes (UTF-8) of an open document over the configuration's `max-file-size` (the limit
        `vllmlint` applies to files), else None."""
        limit = self.options.max_file_size if self.options is not None else 0
        if not limit or len(text) * 4 <= limit:
            return None  # no limit, or within it whatever the characters (at most 4 bytes each)
        if len(text) > limit:
            return len(text)  # over it in characters alone (the exact size would encode all of it)
        size = len(text.encode("utf-8", "surrogatepass"))
        return size if size > limit else None

    def _add_overlay(self, linter, path: Path, text: str) -> str:
        """An open document: its buffer, read as the file would be (`--stdin-filename`); one over the size limit
        is skipped with the notice a file over it gets (VL005)."""
        from vllmlint.source.files import display_path

        shown = display_path(path)
        size = self.too_large(text)
        if size is not None:
            linter.real_paths[shown] = str(path)
            linter.skip_too_large(shown, size)
            return shown
        linter.real_paths[shown] = str(path)
        linter.result.files_checked += 1
        if text.startswith("\ufeff"):
            text = text[1:]  # read_text drops a byte-order mark from a file
        linter.add_text(text, shown, path.suffix.lower(), path.name)
        return shown

    def _after_run(self, result: LintResult) -> None:
        from vllmlint.source.kustomize import NAMES

        self.cache.sweep()
        # The run merged Kustomize patches into nodes it parsed, of files under each Kustomization's folder.
        folders = {posixpath.dirname(shown) for shown in result.sources if posixpath.basename(shown) in NAMES}
        if folders:
            self.cache.drop_under(folders)
