"""The engine: finds input files, builds one world from all of them, runs the selected rules.

Input problems (a file that does not parse, a binary file, an unrendered template) become findings or
notices with a file and line; they never stop the other files from being linted.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from vllmlint.records import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from vllmlint.finding import Finding, Notice, Severity
from vllmlint.vllm.invocation import find_invocations, script_invocations
from vllmlint.k8s.objects import World
from vllmlint.registry import Rule, select_rules
from vllmlint.source.comments import MARKER, record_parse
from vllmlint.source.files import (  # noqa: F401  (collect_files, git_ignored: the engine's API)
    is_dockerfile,
    MARKDOWN_SUFFIXES, SCAN_SUFFIXES, SHELL_SUFFIXES, YAML_SUFFIXES, TooLarge, collect_files, display_path, git_ignored,
    is_kustomization, read_limited, read_text, sniff_suffix, too_large_message)
from vllmlint.source.helm import split_helm_output  # noqa: F401  (a reader; also the engine's API)
from vllmlint.source.yamlmodel import SourceFile, parse_documents

if TYPE_CHECKING:
    from vllmlint.baseline import Baseline
    from vllmlint.progress import Progress

_HELM = re.compile(r"\{\{-?\s*(\.Values|\.Release|\.Chart|\.Capabilities|\.Files|include\b|template\b|if\b|"
                   r"else\b|range\b|with\b|define\b|toYaml\b|tpl\b|end\b|/\*)")


@dataclass
class LintOptions:
    select: list[str] | None = None
    ignore: list[str] | None = None
    severity: dict[str, str] = field(default_factory=dict)  # code -> severity override
    vllm_version: str | None = None  # assumed where a workload's own release is unknown
    max_file_size: int = 10 * 1024 * 1024  # bytes; 0 means no limit
    upgrade_to: str | None = None  # check every workload as if it ran this release (`lint` compares)
    require_suppression_reason: bool = True
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)  # path glob -> rule selectors
    baseline: Baseline | None = None  # findings it holds are not reported (nor fixed)
    fixes: bool = True  # build the fixes of the findings shown (False: no output or --fix uses them)
    # How the run is carried out: read by the runner (vllmlint.run), never by the engine; none changes the result.
    # One-shot process (the console script): the model built from the files lives to the end of the run, so it is
    # moved out of the cyclic GC's sight (gc.freeze) once built, and given back when the rules are done.
    freeze_gc: bool = False
    cache_dir: str | None = None  # the result cache's folder (vllmlint.run.cache); None: no cache
    jobs: int | None = None  # processes for the rules (None: automatic, on large runs only); never changes the result
    progress: Progress | None = None  # a progress line (vllmlint.progress): files read, rules checked
    stream: bool = False  # no longer read: every run is linted in one piece (kept: callers still set it)
    # --follow-links: the runner adds the local resources of the run's Kustomizations the paths did not hold
    # (vllmlint.run.runner); without it each is noted, not read, as a symbolic link out of the paths is
    follow_links: bool = False


@dataclass
class UpgradeSummary:
    """`--upgrade-to`: what moving every workload to `release` changes."""
    release: str
    added: int  # findings the move adds (the result's findings)
    resolved: int  # findings of today that the move makes go away


@dataclass
class LintResult:
    findings: list[Finding] = field(default_factory=list)  # what the user is shown: after suppressions,
    # per-file ignores and the baseline
    suppressed: list[Finding] = field(default_factory=list)  # hidden by a suppression, with its reason
    notices: list[Notice] = field(default_factory=list)
    sources: dict[str, SourceFile] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    files_checked: int = 0
    internal_error: bool = False
    ignored: list[Finding] = field(default_factory=list)  # hidden by the config's per-file-ignores
    known: list[Finding] = field(default_factory=list)  # hidden because the baseline holds them
    baseline_stale: int = 0  # baseline entries no finding matches any more
    upgrade: UpgradeSummary | None = None  # set by `lint` when the options ask for --upgrade-to
    # What the run understood (the summary line says it; a run that understood nothing must not pass as clean):
    workloads: int = 0  # vLLM workloads: objects (or Compose services) with a vLLM container, and scripts' servers
    invocations: int = 0  # vLLM server command lines found (a workload may hold several)
    objects: int = 0  # Kubernetes objects and Compose services read
    skipped: dict[str, str] = field(default_factory=dict)  # file (display path) -> why it was not read (SKIP_*)

    @property
    def understood_nothing(self) -> bool:
        """No vLLM invocation and no Kubernetes or Compose object in everything given: nothing was checked."""
        return not self.invocations and not self.objects

    def skipped_counts(self) -> dict[str, int]:
        """Reason -> number of files skipped for it, in the order first seen."""
        return dict(Counter(self.skipped.values()))


# Why a file was not read (LintResult.skipped): the summary line counts them.
SKIP_TEMPLATE = "unrendered template"
SKIP_TOO_LARGE = "over --max-file-size"
SKIP_NOT_TEXT = "not text"


def _template_action(text: str, documents) -> int | None:
    """Offset of the first Helm/Go template action that makes this file a template, or None. Actions
    inside block scalars or comments of a file that parses are data (an alert template in a ConfigMap, a doc
    string, `# rendered from {{ .Values.image }}`)."""
    if "{{" not in text:
        return None
    from vllmlint.source.comments import template_action

    return template_action(text, documents, _HELM)  # comments and block scalars are text, not structure


def _chart_values(documents) -> bool:
    """Whether a file that parses is the values file of a chart read natively (vllmlint.source.helm_values)."""
    from vllmlint.source.helm_values import recognise

    return any(recognise(document.root) is not None for document in documents)


class Linter:
    """One run's inputs turned into a result: files are read as they are added, `build` makes the world of all of
    them, `check` runs the rules and finishes the result. How the run is carried out (which files, processes, the
    cache, the garbage collector) is the runner's (vllmlint.run): it sets the hooks below."""

    # Parsed YAML kept between runs by a long-lived caller (the language server, `vllmlint.server.project`):
    # an object with `parse(source) -> (documents, error)`, None to parse every time.
    parse_cache = None

    def __init__(self, options: LintOptions | None = None):
        self.options = options or LintOptions()
        self.result = LintResult()
        self.world = World()
        self._errors: list[Finding] = []
        self._shell_sources: list[SourceFile] = []
        self._dockerfile_sources: list[SourceFile] = []
        self.real_paths: dict[str, str] = {}  # display path -> absolute path on disk (vllmlint.source.kustomize)
        self.render_mappings: list = []  # vllmlint.render.RenderedText: `--render` output -> the files as written
        # and what moves the findings' positions by them (the feed that adds them sets it: render.feed_rendered)
        self.map_positions: Callable[[LintResult, list], None] | None = None
        self._files_read = 0  # files read by add_file (the progress line counts them)
        # The runner's hooks: called with the number of files read after each one; and given the world and the
        # rules, the outcomes of the rules it checked elsewhere (code -> (findings, notices): other processes).
        self.on_read: Callable[[int], None] | None = None
        self.checker: Callable[[World, list[Rule], LintOptions], dict[str, RuleOutcome]] | None = None

    # inputs
    def add_file(self, path: Path, shown: str | None = None) -> None:
        self.read_file(path, shown or display_path(path))

    def add_file_bytes(self, data: bytes, shown: str, suffix: str, name: str) -> None:
        """The bytes of a file `read_file` read (or the result cache replays)."""
        self.add_bytes(data, shown, suffix, name)

    def read_file(self, path: Path, shown: str) -> None:
        self.real_paths.setdefault(shown, os.path.abspath(path))
        limit = self.options.max_file_size
        try:
            data = read_limited(path, limit)
        except TooLarge as exc:
            self.skip_too_large(shown, exc.size)
            return
        except OSError as exc:
            self.result.notices.append(Notice("VL001", f"cannot read file: {exc.strerror or exc}", shown, 0, "error"))
            self.result.internal_error = True
            return
        self.add_file_bytes(data, shown, path.suffix.lower(), path.name)
        self._after_read()

    def _after_read(self) -> None:
        self._files_read += 1
        if self.on_read is not None:
            self.on_read(self._files_read)
        if self.options.progress is not None:
            self.options.progress.files(self._files_read)

    def skip_too_large(self, shown: str, size: int | None) -> None:
        """A file (size in bytes) or a stream (size None) over --max-file-size: a VL005 notice, not linted."""
        self.result.notices.append(Notice("VL005", too_large_message(size, self.options.max_file_size), shown, 0,
                                          "warning"))
        self.result.skipped.setdefault(shown, SKIP_TOO_LARGE)

    def add_bytes(self, data: bytes, shown: str, suffix: str = ".yaml", name: str = "") -> None:
        self.result.files_checked += 1
        text, problem = read_text(data)
        source = SourceFile(shown, text if text is not None else "", shown)
        self.result.sources[shown] = source
        if problem or text is None:
            self._error(source, problem or "not text", 1, 1)
            self.result.skipped.setdefault(shown, SKIP_NOT_TEXT)
            return
        self.add_text(text, shown, suffix, name)

    def add_text(self, text: str, shown: str, suffix: str = ".yaml", name: str = "") -> None:
        source = SourceFile(shown, text, shown)
        self.result.sources[shown] = source
        if suffix in MARKDOWN_SUFFIXES:
            self._add_markdown(text, shown)
            return
        if is_dockerfile(name or Path(shown).name):
            self._dockerfile_sources.append(source)
            return
        if (name or Path(shown).name) == ".env" or suffix == ".env":  # files.is_env_file
            return  # a Compose `.env` / `env_file`: read by vllmlint.source.compose for the services beside it
        self._add_source(source, suffix)

    def _add_markdown(self, text: str, shown: str) -> None:
        from vllmlint.source.markdown import fenced_blocks

        markdown = self.result.sources[shown]
        noted: set[int] = set()  # here-documents already said to be skipped (one note, not one per document)
        view = SourceFile(shown, text, shown)  # the YAML blocks' nodes: regions of the file's own text, not copies
        shell_lines: list[int] | None = None  # the shell blocks' text has the file's lines: one index for all
        for block in fenced_blocks(text):
            if not self._markdown_block_readable(block, view, noted):
                continue
            # Same path, same offsets: findings land on the Markdown file's own lines.
            region = (block.first_offset, block.end_offset)
            if block.language == "shell":
                script = SourceFile(shown, block.text, shown)  # the text shared by the file's shell blocks
                script.region = region
                if shell_lines is None:
                    shell_lines = script.line_starts
                script._line_starts = shell_lines
                self._add_source(script, ".sh", error_limit=block.end_offset, owner=markdown, region=region)
            else:
                self._add_source(view, ".yaml", error_limit=block.end_offset, owner=markdown, region=region,
                                 within=region)

    def _script_manifests(self, source: SourceFile) -> SourceFile:
        """A shell script's here-documents fed to `kubectl apply -f -` are linted as manifests (at the script's
        own lines, as in a Markdown shell block); the script itself is read without them."""
        from vllmlint.source.markdown import script_manifests

        shown = source.display_path
        blocks, script = script_manifests(source.text)
        if not blocks:
            return source
        noted: set[int] = set()
        view = SourceFile(shown, source.text, shown)
        for block in blocks:
            if self._markdown_block_readable(block, view, noted):
                region = (block.first_offset, block.end_offset)
                self._add_source(view, ".yaml", error_limit=block.end_offset, owner=source, region=region,
                                 within=region)
        return SourceFile(shown, script, shown)

    def _markdown_block_readable(self, block, view: SourceFile, noted: set[int]) -> bool:
        """Whether a Markdown block (or a script's here-document manifest) is linted: an unlabelled fence only
        when it parses (else it was a snippet), a here-document fed to kubectl only when the shell leaves it as
        written (a note says so otherwise). `view`: the file's text, whose regions YAML blocks are."""
        from vllmlint.source.yamlmodel import parse_region

        shown = view.display_path
        if block.sniffed:
            _, error = parse_region(view, block.first_offset, block.end_offset)
            return error is None
        applied = block.applied
        if applied is not None and applied.expanded:
            if applied.operator in noted:
                return False
            noted.add(applied.operator)
            self.result.notices.append(Notice(
                "VL005", f"manifest in the here-document `<<{applied.delimiter}` not linted: the shell expands its "
                f"`$` and backquote expressions before kubectl reads it, so its values are unknown (quote the "
                f"delimiter, `<<'{applied.delimiter}'`, when nothing in it is meant to be expanded)", shown,
                block.text.count("\n", 0, applied.operator) + 1, "note",
                summary=("here-document manifest with shell expansions not linted",
                         "here-document manifests with shell expansions not linted")))
            return False
        return True

    def _add_source(self, source: SourceFile, suffix: str, error_limit: int | None = None,
                    owner: SourceFile | None = None, region: tuple[int, int] | None = None,
                    within: tuple[int, int] | None = None) -> None:
        """`within`: only that region of the text is YAML (a Markdown block; `parse_region`)."""
        text, shown = source.text, source.display_path
        if within is None and (suffix in SHELL_SUFFIXES or (suffix not in YAML_SUFFIXES and text.startswith("#!"))):
            self._shell_sources.append(source if owner is not None else self._script_manifests(source))
            return
        if within is None:
            documents, error = self._parse(source)
        else:
            from vllmlint.source.yamlmodel import parse_region

            documents, error = parse_region(source, *within)
            # Template actions are looked for in the region only (the prefix blanked keeps their offsets).
            text = " " * within[0] + text[within[0]:within[1]] if "{{" in text[within[0]:within[1]] else ""
        # Comments (for suppressions) are indexed from this parse; `owner`: the Markdown file of a block.
        record_parse(owner or source, documents, error.index if error is not None else None, region)
        template = _template_action(text, documents if error is None else None)
        if template is not None and error is None and _chart_values(documents):
            template = None  # a chart's values file: its `{{ }}` are strings the chart's templates pass to `tpl`
        if template is not None:
            line, _ = source.line_col(template)
            self.result.notices.append(Notice(
                "VL002", "unrendered Helm template skipped: lint the output of `helm template` instead "
                f"(`helm template {_chart_of(shown)} | vllmlint -`)", shown, line, "note",
                summary=("unrendered Helm template skipped (lint `helm template` output)",
                         "unrendered Helm templates skipped (lint `helm template` output)")))
            if owner is None:  # a Markdown file is still read when one of its blocks is a template
                self.result.skipped.setdefault(shown, SKIP_TEMPLATE)
            return
        for document in documents:
            self.world.add_document(document)
        for start, _end, key in source.duplicate_keys:
            line, col = source.line_col(start)
            self._error(source, f"duplicate key `{key}`: kubectl rejects the document (`mapping key \"{key}\" "
                        "already defined`), and other tools silently keep one of the two: remove one", line, col, start)
        if error is not None:
            if error_limit is not None and error.index > error_limit:
                # The parser ran past a Markdown block to the end of the file: the block is what ended early.
                error.index = error_limit
                error.line, error.col = source.line_col(error_limit)
            message = f"YAML syntax error: {error.message}"
            if "\t" in error.message or "'\\t'" in error.message:
                message += " (a tab character: kubectl's parser may accept it, this YAML parser does not; use spaces)"
            self._error(source, message, error.line, error.col, error.index)

    def add_stdin(self, data: bytes, filename: str | None) -> None:
        text, problem = read_text(data)
        shown = filename or "-"
        if problem or text is None:
            self.add_bytes(data, shown)
            return
        chunks = split_helm_output(text, shown)
        if chunks:
            self.result.files_checked += 1
            for chunk_source, chunk in chunks:
                self.add_text(chunk, chunk_source, Path(chunk_source).suffix.lower() or ".yaml")
            return
        self.result.files_checked += 1
        # Without --stdin-filename (or with a name without a suffix), the content says what it is:
        # `cat serve.sh | vllmlint -` reads a script, `cat runbook.md | vllmlint -` Markdown, anything else YAML.
        suffix = Path(shown).suffix.lower() if filename else ""
        self.add_text(text, shown, suffix or sniff_suffix(text))

    def _error(self, source: SourceFile, message: str, line: int, col: int, index: int | None = None) -> None:
        from vllmlint.finding import Span

        if index is None:
            index = source.line_starts[line - 1] + col - 1 if line - 1 < len(source.line_starts) else 0
        self._errors.append(Finding("VL001", Severity.ERROR, message, source.display_path,
                                    Span(index, index, line, col, line, col), value=message))

    def _note_outside(self, invocation, seen: set) -> None:
        """Once per release: it is not catalogued, so a neighbouring release's knowledge stands in."""
        from vllmlint.vllm.release import version_key

        from vllmlint.vllm import catalog

        release, stand_in = invocation.release, invocation.catalog.version
        known = catalog.releases()
        inside = version_key(known[0]) <= version_key(release) <= version_key(known[-1])
        tokens = [t for t in invocation.entry + invocation.tokens if t.source is not None]
        path, line = (tokens[0].source.display_path, tokens[0].span.line) if tokens else ("", 0)
        # Once per release and file here; `ordered_notices` keeps the run's first (a run in chunks makes the same).
        if ("outside", release, path) in seen or inside and version_key(release)[:2] == version_key(stand_in)[:2]:
            return  # a patch of a catalogued minor release: close enough to say nothing
        seen.add(("outside", release, path))
        where = "newer than the" if version_key(release) > version_key(known[-1]) else "not among the"
        self.result.notices.append(Notice(
            "VL006", f"vLLM {release} is {where} releases vllmlint knows ({known[0]} to {known[-1]}): its flags are "
            f"checked against {stand_in}", path, line, "note",
            summary=OUTSIDE_SUMMARY))

    def _note_assumed(self, invocation, seen: set) -> None:
        """Once per workload: its release is unknown, so the newest catalog is assumed."""
        container = invocation.container
        owner = container.pod.owner if container is not None else invocation.owner
        key = id(owner) if owner is not None else invocation.source.display_path
        if key in seen:
            return
        seen.add(key)
        tokens = [t for t in invocation.entry + invocation.tokens if t.source is not None]
        where = tokens[0] if tokens else (container.image or container.node)
        line = where.source.line_col(where.start)[0]
        version = invocation.catalog.version
        if owner is not None:
            fork = f", {invocation.fork}" if getattr(invocation, "fork", None) else ""
            image = f" (image {invocation.image.raw}{fork})" if invocation.image is not None else ""
            ref = invocation.image
            if ref is not None and ref.digest and not ref.tag:
                # A digest names bytes, not a release: nothing in the reference or the image table says which
                # vLLM it holds, so the annotation is the one way to tell (vllm.workload_release).
                message = (f"{_owner_words(owner)}: vLLM release unknown{image}; assuming vLLM {version}: the "
                           "image is pinned by digest, so vllmlint can learn its release only from the "
                           "`vllmlint.io/vllm-version` annotation: add it to the workload's or the pod template's "
                           "metadata with the release the digest holds (e.g. `vllmlint.io/vllm-version: \"0.29.0\"`)")
            else:
                message = (f"{_owner_words(owner)}: vLLM release unknown{image}; assuming vLLM {version}: pin "
                           "the image to a release tag, or annotate `vllmlint.io/vllm-version`")
        elif invocation.via == "dockerfile":  # vllm.dockerfile.VIA_DOCKERFILE
            image = f" (FROM {invocation.image.raw})" if invocation.image is not None else ""
            message = (f"vLLM release unknown for this image{image}; assuming vLLM {version}: pin the base image's "
                       "tag or `RUN pip install vllm==X`, or pass --vllm-version")
        else:
            message = (f"vLLM release unknown for this script; assuming vLLM {version}: pass --vllm-version "
                       "(or set `vllm-version` in .vllmlint.yaml)")
        noun = "workload" if owner is not None else "image" if invocation.via == "dockerfile" else "script"
        summary = (f"{noun} assumes vLLM {version} (release unknown)", f"{noun}s assume vLLM {version} (release unknown)")
        self.result.notices.append(Notice("VL006", message, where.source.display_path, line, "note", summary))

    def _note_entrypoint_assumed(self, invocation, seen: set) -> None:
        """Once per workload: its image is not in the image table, and its `args` are read as vLLM's."""
        container = invocation.container
        if container is None or invocation.image is None:
            return
        key = ("entrypoint", id(container.pod.owner))
        if key in seen:
            return
        seen.add(key)
        where = next((t for t in invocation.tokens if t.source is not None), None)
        if where is None:
            return
        owner = container.pod.owner
        name = _owner_words(owner)
        message = (f"{name}: image {invocation.image.raw} is not in vllmlint's image table; its arguments are checked "
                   "as the arguments of vLLM's OpenAI server because the repository name contains `vllm` (annotate "
                   "`vllmlint.io/vllm-version` to pin the release it runs)")
        summary = ("workload's arguments read as vLLM's (image not in the table)",
                   "workloads' arguments read as vLLM's (images not in the table)")
        self.result.notices.append(Notice("VL006", message, where.source.display_path, where.span.line, "note",
                                          summary))

    # running
    def build(self) -> World:
        """The world of everything added so far, with every vLLM invocation found and parsed."""
        if any(is_kustomization(shown) for shown in self.result.sources):  # the reader only for Kustomizations
            from vllmlint.source.kustomize import apply_kustomizations

            apply_kustomizations(self)
        world = self.world
        world.sources = list(self.result.sources.values())
        if world.of_kind("ComposeService"):  # the Compose reader is imported only for Compose files
            from vllmlint.source.compose import apply_extends, bind_projects

            apply_extends(world)  # a Compose service's `extends` base merged in, before anything reads it
            for source, line, message in bind_projects(world):  # what the Compose reader refused
                self.result.notices.append(Notice("VL005", message, source.display_path, line, "note",
                                                  ("Compose value not read", "Compose values not read")))
        builds = None
        if self._dockerfile_sources and world.of_kind("ComposeService"):
            from vllmlint.vllm.dockerfile import compose_build

            found = ((id(o), compose_build(o, world.sources)) for o in world.of_kind("ComposeService"))
            builds = {key: built for key, built in found if built is not None}
        building = [o for o in world.of_kind("ComposeService") if "build" in o.node and id(o) not in (builds or {})]
        if building:  # services that run an image built from a Dockerfile the run does not read: say so
            from vllmlint.vllm.dockerfile import unread_build

            for service in building:
                unread = unread_build(service, world.sources)
                if unread is not None:
                    self.result.notices.append(Notice(
                        "VL005", unread[0], service.source.display_path, unread[1], "note",
                        ("Compose build not read", "Compose builds not read")))
        world.invocations = find_invocations(world, self.options.upgrade_to, builds)
        for source in self._shell_sources:
            world.invocations.extend(script_invocations(source, world.shell_commands))
        if self._dockerfile_sources:  # the Dockerfile reader is imported only for Dockerfiles
            from vllmlint.vllm.dockerfile import dockerfile_invocations

            # A Dockerfile a Compose service of the run builds is judged as that service runs it (its build args,
            # its `command`), not a second time on its own.
            built = {b.path for b in (builds or {}).values()}
            for source in self._dockerfile_sources:
                if source.display_path not in built:
                    world.invocations.extend(dockerfile_invocations(source, world.shell_commands))
        if world.chart_values:  # the Helm values reader is imported only for values files (vllm.helm_values)
            from vllmlint.vllm.helm_values import chart_values_invocations

            world.invocations.extend(chart_values_invocations(world))
        from vllmlint.vllm.flags import resolve_invocation
        from vllmlint.vllm.workload_release import workload_release
        from vllmlint.vllm.invocation import mark_vendor_build

        world.default_release = self.options.upgrade_to or self.options.vllm_version
        assumed_for: set = set()
        for invocation in world.invocations:
            mark_vendor_build(invocation)
            if invocation.entrypoint_assumed:
                self._note_entrypoint_assumed(invocation, assumed_for)
            invocation.release, invocation.release_origin = workload_release(invocation)
            if invocation.release is None and self.options.vllm_version:
                invocation.release, invocation.release_origin = self.options.vllm_version, "--vllm-version"
            if self.options.upgrade_to:
                invocation.release, invocation.release_origin = self.options.upgrade_to, "--upgrade-to"
            resolve_invocation(invocation, None)
            if invocation.assumed:
                self._note_assumed(invocation, assumed_for)
            elif invocation.release and invocation.release != invocation.catalog.version:
                self._note_outside(invocation, assumed_for)
        from vllmlint.k8s.objects import seal

        seal(world)  # complete: containers may keep what rules ask of them again and again
        return world

    def _count_understood(self, world: World) -> None:
        self.result.invocations = len(world.invocations)
        self.result.workloads = _workload_count(world)
        self.result.objects = len(world.objects)

    def run(self) -> LintResult:
        """The result of everything added: the world built, the rules checked, the result finished."""
        from vllmlint.source.shell import scripts_read_once

        with scripts_read_once():  # the build and the rules read a script once between them
            return self.check(self.build())

    def check(self, world: World) -> LintResult:
        """The rules checked on `world` (from `build`), and the result finished."""
        self._count_understood(world)
        rules = with_syntax_errors(select_rules(self.options.select, self.options.ignore), self.options)
        self.result.rules = rules
        self.result.notices.extend(_moved_ignores(self.options))
        findings: list[Finding] = []
        # code -> outcome of the rules the runner checked elsewhere (large runs, --jobs: other processes)
        elsewhere = self.checker(world, rules, self.options) if self.checker is not None else {}
        for rule in rules:
            severity = rule_severity(rule, self.options)
            if rule.code == "VL001":
                for error in self._errors:
                    error.severity = severity
                findings.extend(self._errors)
                continue
            if rule.kind != "result":
                continue
            found, notices = elsewhere.pop(rule.code) if rule.code in elsewhere else check_rule(world, rule, severity)
            findings.extend(found)
            self.result.notices.extend(notices)
            self.result.internal_error = self.result.internal_error or bool(notices)
            if self.options.progress is not None:
                self.options.progress.rules(rules.index(rule) + 1, len(rules))
        findings.sort(key=lambda f: f.sort_key)
        findings = _dedupe(findings)
        if _may_suppress(self.result.sources, world):
            from vllmlint.suppressions import apply_suppressions

            outcome = apply_suppressions(findings, self.result.sources, world,
                                         require_reason=self.options.require_suppression_reason,
                                         active_codes={r.code for r in rules})
            for problem in outcome.problems:
                problem.severity = Severity.parse(self.options.severity.get(problem.code, problem.severity.label))
            self.result.findings = sorted(outcome.kept + outcome.problems, key=lambda f: f.sort_key)
            self.result.suppressed = outcome.suppressed
            self.result.notices.extend(outcome.notices)
        else:
            self.result.findings = findings  # sorted above
        if self.render_mappings and self.map_positions is not None:  # `--render` output: to the files as written
            self.map_positions(self.result, self.render_mappings)
            self.result.findings = _dedupe(self.result.findings)
        # What the user asked not to see is gone before anything (a formatter, `--fix`) looks at the
        # result. After suppressions, so that a suppression hiding an ignored finding is still used.
        if self.options.per_file_ignores:
            self.result.findings, self.result.ignored = _split_ignored(self.result.findings,
                                                                       self.options.per_file_ignores,
                                                                       self.result.notices)
        if self.options.baseline is not None:
            apply_baseline(self.result, self.options.baseline)
        resolve_fixes(self.result, self.options.fixes)
        self.result.notices = ordered_notices(selected_notices(self.result.notices, rules), self.result.sources)
        return self.result

    def _parse(self, source: SourceFile):
        cache = self.parse_cache
        return parse_documents(source) if cache is None else cache.parse(source)


def _owner_words(owner) -> str:
    """A workload as the notes name it: `Deployment vllm`, `Compose service vllm` (as Compose's messages say),
    `modelSpec llama3` (a values file's entry)."""
    kind = "Compose service" if owner.kind == "ComposeService" else owner.kind
    return f"{kind} {owner.name}" if owner.name else kind


def _workload_count(world: World) -> int:
    """vLLM workloads: each object (a Deployment, a Compose service...) with a vLLM container counts once, however
    many vLLM containers or command lines it holds; outside containers (a script, a Markdown runbook's shell block),
    each vLLM command line is a server of its own."""
    owners: set[int] = set()
    scripts = 0
    for invocation in world.invocations:
        container = invocation.container
        if container is not None:
            owners.add(id(container.pod.owner))
        else:
            scripts += 1
    return len(owners) + scripts


def with_syntax_errors(rules: list[Rule], options: LintOptions) -> list[Rule]:
    """`--select` never hides VL001: a file that does not parse was not linted, whatever rules were
    chosen, and must not pass as clean. Only an explicit `--ignore` of it (or of VL0) leaves it out."""
    from vllmlint.registry import all_rules, matches

    if not options.select or any(rule.code == "VL001" for rule in rules):
        return rules
    syntax = all_rules().get("VL001")
    if syntax is None or any(matches(s, syntax) for s in options.ignore or []):
        return rules
    return [syntax, *rules]


OUTSIDE_SUMMARY = ("vLLM release outside vllmlint's catalog checked against a neighbour",
                   "vLLM releases outside vllmlint's catalog checked against neighbours")


def ordered_notices(notices: list[Notice], sources: dict[str, SourceFile]) -> list[Notice]:
    """The notes in the order of the files they are about (the order the files were given; within a file, the
    order they were made), then those about a file not given, then those about no file. A release outside the
    catalog is noted once per run, at the first file that runs it: the order depends on the files only."""
    rank = {shown: index for index, shown in enumerate(sources)}
    outside = len(rank)
    ordered = sorted(notices, key=lambda n: rank.get(n.path, outside) if n.path else outside + 1)
    said: set[str] = set()
    kept = []
    for notice in ordered:
        if notice.summary == OUTSIDE_SUMMARY:
            if notice.message in said:
                continue
            said.add(notice.message)
        kept.append(notice)
    return kept


def selected_notices(notices: list[Notice], rules: list[Rule]) -> list[Notice]:
    """The notices whose code is selected: `--ignore VL006` (or a `--select` that leaves it out) hides
    the notes of a notification rule. Errors about the run (an unreadable file, an internal error) stay."""
    from vllmlint.registry import all_rules

    chosen = {rule.code for rule in rules}
    known = all_rules()
    return [n for n in notices if n.level == "error" or n.code in chosen or n.code not in known]


def _moved_ignores(options: LintOptions) -> list[Notice]:
    """VL008 notes for the rules `ignore` leaves out only under the code they moved from."""
    if not options.ignore:
        return []  # before the imports: most runs ignore nothing
    from vllmlint.registry import all_rules, moved_ignore, select_rules
    from vllmlint.registry import moved_notice
    from vllmlint.renames import old_codes

    if not old_codes():
        return []
    wanted = {r.code for r in select_rules(options.select, None)}
    rules = all_rules()
    notes = []
    for code in old_codes():
        rule = rules.get(code)
        old = moved_ignore(options.ignore, rule) if rule is not None and code in wanted else None
        if old is not None:
            notes.append(moved_notice(old, code))
    return notes


def _split_ignored(findings: list[Finding], ignores: dict[str, list[str]],
                   notices: list[Notice] | None = None) -> tuple[list[Finding], list[Finding]]:
    """(kept, ignored) under the config's `per-file-ignores` (path glob -> rule selectors). A selector
    naming the code a finding moved from still hides it (data/renamed-codes.yaml), with a VL008 note."""
    from vllmlint.source.wildmatch import path_matches
    from vllmlint.registry import all_rules, matches
    from vllmlint.registry import legacy_match, moved_notice

    rules = all_rules()
    kept: list[Finding] = []
    ignored: list[Finding] = []
    moved: dict[tuple[str, str], None] = {}
    for finding in findings:
        rule = rules.get(finding.code)
        hidden = False
        for glob, selectors in ignores.items():
            if rule is None or not path_matches(glob, finding.path):
                continue
            if any(matches(s, rule) for s in selectors):
                hidden = True
                break
            old = legacy_match(selectors, rule)
            if old is not None:
                hidden = True
                moved[(old, rule.code)] = None
                break
        (ignored if hidden else kept).append(finding)
    if notices is not None:
        notices.extend(moved_notice(old, new) for old, new in moved)
    return kept, ignored


def apply_baseline(result: LintResult, baseline: Baseline) -> None:
    from vllmlint.registry import moved_notice

    result.baseline_stale = baseline.stale_count(result.findings)
    moved: list[tuple[str, str]] = []
    result.findings, result.known = baseline.filter(result.findings, moved)
    result.notices.extend(moved_notice(old, new) for old, new in moved)


def upgrade_result(today: LintResult, after: LintResult, options: LintOptions) -> LintResult:
    """`--upgrade-to`: of `after` (the inputs checked as if every workload ran `options.upgrade_to`, without the
    baseline), only the findings that `today` (the same inputs as they are, without the baseline) lacks, compared
    by fingerprint; then the baseline."""
    assert options.upgrade_to is not None
    before = Counter(f.fingerprint() for f in today.findings)
    added = []
    for finding in after.findings:
        key = finding.fingerprint()
        if before[key]:
            before[key] -= 1
        else:
            finding.message = f"after an upgrade to vLLM {options.upgrade_to}: {finding.message}"
            added.append(finding)
    everything_after = after.findings
    after.findings = added
    after.upgrade = UpgradeSummary(options.upgrade_to, len(added), sum(before.values()))
    if options.baseline is not None:
        apply_baseline(after, options.baseline)
        # Stale means no finding of the upgraded run matches the entry any more, not only the added ones.
        after.baseline_stale = options.baseline.stale_count(everything_after)
    return after


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen = set()
    unique = []
    for finding in findings:
        key = (finding.code, finding.path, finding.span.start, finding.span.end, finding.message)
        if key not in seen:
            seen.add(key)
            unique.append(finding)
    return unique


def lint_paths(paths: list[str], options: LintOptions | None = None) -> tuple[LintResult, list[str]]:
    """The files under `paths` linted in this process (the library's simplest call; the runner's `lint` adds the
    result cache, processes and the garbage collector's policy), and the paths that do not exist."""
    linter = Linter(options)
    files, missing = collect_files(paths)
    for path in files:
        linter.add_file(path)
    return linter.run(), missing


def lint_text(text: str, filename: str = "example.yaml", options: LintOptions | None = None) -> LintResult:
    """Lint one in-memory file (tests, rule examples)."""
    linter = Linter(options)
    linter.result.files_checked += 1
    linter.add_text(text, filename, Path(filename).suffix.lower())
    return linter.run()


def _chart_of(shown: str) -> str:
    """The chart folder a template sits in, for the command a VL002 note suggests: the path before its
    `templates/` folder (`.` when the path starts there), else a placeholder."""
    head, sep, _ = ("/" + shown).rpartition("/templates/")
    return (head.lstrip("/") or ".") if sep else "CHART"


def resolve_fixes(result: LintResult, needed: bool = True) -> None:
    """Build the pending fixes (`Context.lazy_fix`) of the findings shown (and of the suppressed ones, which
    `--show-suppressed` and SARIF show), only when `needed`; every other pending fix is dropped unbuilt. A
    builder that raises costs the fix, never the finding, and is reported as an internal error of its rule."""
    from vllmlint.checks import PendingFix

    rules = {rule.code: rule for rule in result.rules}
    for findings, build in ((result.findings, needed), (result.suppressed, needed), (result.ignored, False),
                            (result.known, False)):
        for finding in findings:
            pending = finding.fix
            if not isinstance(pending, PendingFix):
                continue
            finding.fix, failure = pending.build() if build else (None, None)
            if failure is not None:
                rule = rules.get(finding.code)
                name = f" ({rule.name})" if rule is not None else ""
                result.internal_error = True
                result.notices.append(Notice(finding.code, f"internal error in rule {finding.code}{name} building a "
                                             f"fix: {failure}", "", 0, "error"))


def _may_suppress(sources: dict[str, SourceFile], world: World) -> bool:
    """Whether a file of the run holds the word every suppression directive holds (a comment or an annotation:
    `source.comments.MARKER`); without it the suppressions module is not even imported."""
    seen: set[int] = set()
    for source in [*sources.values(), *(obj.source for obj in world.objects)]:
        if id(source) not in seen:
            seen.add(id(source))
            if MARKER in source.text:
                return True
    return False


RuleOutcome = tuple[list[Finding], list[Notice]]  # a rule's findings, and its internal errors (exit 2)


def check_rule(world: World, rule: Rule, severity: Severity) -> RuleOutcome:
    """Run one rule: its findings (those yielded before a crash of the rule too) and the notices of its bugs."""
    from vllmlint.checks import Context

    findings: list[Finding] = []
    try:
        check = rule.load_check()
        if check is None:
            return findings, []
        context = Context(world, rule, severity)
        findings.extend(f for f in check(context) if f is not None)
    except Exception:  # a bug of ours: say where, keep going, exit 2
        import traceback  # only a bug of ours needs it: not imported at every start

        detail = traceback.format_exc(limit=-3).strip().splitlines()
        return findings, [Notice(rule.code, f"internal error in rule {rule.code} ({rule.name}): {detail[-1]}", "", 0,
                                 "error")]
    # The finding stands without its fix; the run says so.
    return findings, [Notice(rule.code, f"internal error in rule {rule.code} ({rule.name}) building a fix: {failure}",
                             "", 0, "error") for failure in context.fix_errors]


def rule_severity(rule: Rule, options: LintOptions) -> Severity:
    return Severity.parse(options.severity.get(rule.code, rule.severity.label))


