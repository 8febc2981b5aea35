"""The language server (`vllmlint server`): pygls 2 over stdio.

Each workspace folder is a `Project`. Opening, changing (after a short debounce per document) or saving a
document lints its folder with the unsaved buffers of every open document of it standing in for the files
on disk, and publishes diagnostics for each open document whose diagnostics changed (an edit of a Deployment
changes what an open HPA file says). Runs happen in one worker thread, one per project at a time, so the
server keeps answering while a large folder is linted. Requests (hover, code actions) first lint again when
a buffer changed since the last run; completion reads the last run when it is current, else the document alone.
"""
from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import from_fs_path, to_fs_path

from vllmlint import __version__
from vllmlint.records import dataclass
from vllmlint.server import features
from vllmlint.server.positions import UTF8, UTF16, LineIndex, offset_at
from vllmlint.server.project import CONFIG_FILES, Project, Run

log = logging.getLogger("vllmlint.server")
DEFAULT_DEBOUNCE = 0.0  # seconds after the last change of a document before it is linted


_UNREADABLE = object()  # a message that did not deserialize (answered already when it was a request)


@dataclass
class Document:
    """An open document: the client's URI as it wrote it, the text, the version."""

    uri: str
    text: str
    version: int | None


class _Protocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]):
        """A request whose parameters do not validate (a position of -1 or 2**31) is answered with -32602, as
        JSON-RPC says: pygls logs it and never answers, and the client waits forever."""
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            msg_id = data.get("id")
            if "method" in data and isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
                cause = _why(exc.__cause__ or exc)
                self._send_response(msg_id, None, JsonRpcInvalidParams(
                    f"Invalid Params for {str(data.get('method'))[:100]}: {cause}").to_response_error())
            return _UNREADABLE

    def handle_message(self, message):
        if message is _UNREADABLE:
            return None
        return super().handle_message(message)

    @property
    def vllmlint(self) -> VllmlintServer:
        assert isinstance(self._server, VllmlintServer)
        return self._server

    # Open documents are kept by the server (`VllmlintServer.documents`), not in pygls's workspace: pygls applies
    # an incremental change with a Python loop over every character before it (seconds per keystroke in a 5 MiB
    # line) and splits lines where LSP does not (form feeds, U+2028).
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        item = params.text_document
        self.vllmlint.documents[item.uri] = Document(item.uri, item.text, item.version)
        yield from self._user(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        document = self.vllmlint.documents.get(params.text_document.uri)
        if document is None:
            return  # not open: nothing to change
        encoding = self.vllmlint.encoding
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                text = document.text
                start = offset_at(text, change.range.start.line, change.range.start.character, encoding)
                end = max(start, offset_at(text, change.range.end.line, change.range.end.character, encoding))
                document.text = "".join((text[:start], change.text, text[end:]))
            else:
                document.text = change.text
        document.version = params.text_document.version
        yield from self._user(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        self.vllmlint.documents.pop(params.text_document.uri, None)
        yield from self._user(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def _user(self, method: str, params):
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        # pygls takes the client's first supported encoding; vllmlint takes UTF-8 whenever it is offered, else
        # UTF-16 (which every client supports), never UTF-32 alone.
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            general.position_encodings = [types.PositionEncodingKind.Utf8] \
                if UTF8 in general.position_encodings else None
        return (yield from super().lsp_initialize(params))


class VllmlintServer(LanguageServer):
    def __init__(self, debounce: float = DEFAULT_DEBOUNCE):
        super().__init__("vllmlint", __version__, protocol_cls=_Protocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.debounce = debounce
        self.documents: dict[str, Document] = {}  # uri -> the open document
        self.projects: list[Project] = []
        self.loose: dict[str, Project] = {}  # absolute path -> the project of a file outside every folder
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.pending: dict[int, set[str]] = {}  # id(project) -> documents changed since a run was queued for it
        self.published: dict[str, list[types.Diagnostic]] = {}
        self.locks: dict[int, asyncio.Lock] = {}
        self.tasks: set[asyncio.Future] = set()
        # One thread lints (one run at a time: the engine's caches are shared), so that requests are answered
        # while a large folder is linted.
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vllmlint-lint")

    # helpers
    @property
    def disabled_actions(self) -> bool:
        """The client shows a code action greyed out with its reason (`codeAction.disabledSupport`)."""
        document = self.client_capabilities.text_document
        action = document.code_action if document is not None else None
        return bool(action is not None and action.disabled_support)

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or UTF16)

    def project_for(self, path: Path) -> Project:
        for project in self.projects:
            if project.contains(path):
                return project
        key = str(path)
        if key not in self.loose:
            self.loose[key] = Project(path.parent, single=path)
        return self.loose[key]

    def all_projects(self) -> list[Project]:
        return [*self.projects, *self.loose.values()]

    def open_documents(self, project: Project) -> dict[str, str]:
        """uri -> absolute path of the open documents of `project`."""
        found = {}
        for uri in list(self.documents):
            path = _path(uri)
            if path is not None and project.contains(path):
                found[uri] = str(path)
        return found

    def snapshot(self, project: Project) -> dict[str, tuple[str, str, int | None]]:
        """uri -> (absolute path, text, version) of the open documents of `project`, as they are now."""
        found = {}
        for uri, path in self.open_documents(project).items():
            document = self.documents[uri]
            found[uri] = (path, document.text, document.version)
        return found

    def overlays(self, project: Project) -> dict[str, str]:
        return {path: text for path, text, _ in self.snapshot(project).values()}

    def is_current(self, project: Project) -> bool:
        run = project.last
        return run is not None and all(run.texts.get(path) == text for path, text in self.overlays(project).items())

    async def fresh(self, project: Project) -> Run | None:
        """The project's last run if every open buffer is what it linted, else a new run (published)."""
        if self.is_current(project):
            return project.last
        return await self.lint(project)

    # linting
    def schedule(self, uri: str, delay: float) -> None:
        timer = self.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        path = _path(uri)
        if path is None:
            return
        project = self.project_for(path)
        loop = asyncio.get_running_loop()
        self.timers[uri] = loop.call_later(delay, self._fire, uri, project)

    def _fire(self, uri: str, project: Project) -> None:
        """Queue a run of the project for this change: one run waits at most, whatever the number of changes
        made while another runs (a run takes the buffers as they are when it starts)."""
        self.timers.pop(uri, None)
        key = id(project)
        queued = key in self.pending
        self.pending.setdefault(key, set()).add(uri)
        if not queued:
            self.spawn(self.lint(project, queued=True))

    def spawn(self, coroutine) -> None:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def lock(self, project: Project) -> asyncio.Lock:
        return self.locks.setdefault(id(project), asyncio.Lock())

    async def lint(self, project: Project, queued: bool = False, force: bool = False) -> Run | None:
        """Lint `project` in the worker thread (the server keeps answering meanwhile) and publish what changed;
        one run per project at a time. `queued`: the run of the changes `_fire` collected (their documents'
        diagnostics are published even when unchanged, with the version linted). An error of ours is logged,
        never fatal."""
        async with self.lock(project):
            changed = self.pending.pop(id(project), set()) if queued else set()
            if not force and not changed and self.is_current(project):
                return project.last  # a run that finished while this one waited covered it
            for uri in self.open_documents(project):
                timer = self.timers.pop(uri, None)
                if timer is not None:
                    timer.cancel()  # this run covers their change
                    changed.add(uri)
            snapshot = self.snapshot(project)
            overlays = {path: text for path, text, _ in snapshot.values()}
            try:
                run = await asyncio.get_running_loop().run_in_executor(self.worker, project.lint, overlays)
            except Exception as exc:  # a bug of ours: the editor keeps working, the log says what
                log.exception("lint failed")
                self.window_log_message(types.LogMessageParams(
                    types.MessageType.Error, f"vllmlint: internal error: {type(exc).__name__}: {exc}"))
                return None
            for notice in run.result.notices:
                if notice.level == "error" and not notice.path:
                    self.window_log_message(types.LogMessageParams(types.MessageType.Error,
                                                                   f"vllmlint: {notice.message}"))
            self.publish(run, snapshot, changed)
            return run

    def publish(self, run: Run, snapshot: dict[str, tuple[str, str, int | None]],
                changed: set[str] | None = None) -> None:
        """Diagnostics of each open document whose diagnostics changed, with the version that was linted."""
        for uri, (path, _text, version) in snapshot.items():
            if uri not in self.documents:
                continue  # closed while the run went on
            shown = run.shown.get(path)
            diagnostics = features.diagnostics(run, shown, self.encoding) if shown is not None else []
            if uri not in (changed or ()) and self.published.get(uri) == diagnostics:
                continue
            self.published[uri] = diagnostics
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=diagnostics, version=version))

    async def reload_config(self, project: Project) -> None:
        async with self.lock(project):
            await asyncio.get_running_loop().run_in_executor(self.worker, project.load_config)
        if project.config_error:
            self.window_show_message(types.ShowMessageParams(
                types.MessageType.Error, f"vllmlint: {project.config_error} (the defaults apply until it is fixed)"))
        await self.lint(project, force=True)

    def uri_of(self, run: Run):
        def find(shown: str) -> str | None:
            path = run.paths.get(shown)
            return from_fs_path(path) if path else None
        return find


def _why(error: BaseException) -> str:
    """What did not validate, in one short line ("invalid value @ $.params.position")."""
    try:
        from cattrs.v import transform_error

        found = "; ".join(transform_error(error))
    except Exception:  # another kind of error, or a cattrs without `transform_error`
        found = ""
    if not found:
        text = str(error)
        found = text.splitlines()[0] if text else type(error).__name__
    return found[:200]


def _path(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def build_server(debounce: float = DEFAULT_DEBOUNCE) -> VllmlintServer:
    server = VllmlintServer(debounce)

    @server.feature(types.INITIALIZE)
    def initialize(ls: VllmlintServer, params: types.InitializeParams) -> None:
        folders = [f.uri for f in params.workspace_folders or []] or ([params.root_uri] if params.root_uri else [])
        roots = [p for p in (_path(uri) for uri in folders) if p is not None]
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        if isinstance(options.get("debounce"), (int, float)):
            ls.debounce = max(0.0, float(options["debounce"]) / 1000)
        if roots:
            os.chdir(roots[0])  # paths and configuration as for `vllmlint .` run in the (first) folder
        ls.projects = [Project(root) for root in roots]
        for project in ls.projects:
            if project.config_error:
                ls.window_show_message(types.ShowMessageParams(
                    types.MessageType.Error, f"vllmlint: {project.config_error} (the defaults apply until it is fixed)"))

    @server.feature(types.INITIALIZED)
    def initialized(ls: VllmlintServer, params: types.InitializedParams) -> None:
        capabilities = ls.client_capabilities.workspace
        watched = capabilities.did_change_watched_files if capabilities is not None else None
        if watched is not None and watched.dynamic_registration:
            patterns = [f"**/{name}" for name in CONFIG_FILES] + ["**/*.{yaml,yml,json,sh,bash,md,markdown}"]
            ls.client_register_capability(types.RegistrationParams([types.Registration(
                id="vllmlint-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    [types.FileSystemWatcher(glob_pattern=p) for p in patterns]))]))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: VllmlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: VllmlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: VllmlintServer, params: types.DidSaveTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is None:
            return
        for project in ls.all_projects():
            if project.is_config_file(path):
                await ls.reload_config(project)
                return
        project = ls.project_for(path)
        if path not in project.files():
            project.forget_files()
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: VllmlintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        timer = ls.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        ls.published.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        path = _path(uri)
        if path is not None:
            project = ls.project_for(path)
            if ls.open_documents(project):  # the file on disk stands in for the closed buffer again
                ls.spawn(ls.lint(project, force=True))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched(ls: VllmlintServer, params: types.DidChangeWatchedFilesParams) -> None:
        touched: dict[int, Project] = {}
        reload: dict[int, Project] = {}
        for change in params.changes:
            path = _path(change.uri)
            if path is None:
                continue
            for project in ls.all_projects():
                if project.is_config_file(path):
                    reload[id(project)] = project
                elif project.contains(path):
                    if change.type != types.FileChangeType.Changed:
                        project.forget_files()
                    touched[id(project)] = project
        for project in reload.values():
            await ls.reload_config(project)
        for key, project in touched.items():
            if key not in reload:
                await ls.lint(project, force=True)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: VllmlintServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        removed = {p for p in (_path(f.uri) for f in params.event.removed or []) if p is not None}
        ls.projects = [p for p in ls.projects if not any(p.root == r.resolve() for r in removed)]
        for folder in params.event.added or []:
            path = _path(folder.uri)
            if path is not None:
                ls.projects.append(Project(path))
        ls.loose.clear()  # a lone file may belong to a new folder now
        for project in ls.projects:
            if ls.open_documents(project):
                ls.spawn(ls.lint(project, force=True))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]))
    async def code_action(ls: VllmlintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        path = _path(uri)
        if path is None:
            return None
        project = ls.project_for(path)
        run = await ls.fresh(project)
        shown = run.shown.get(str(path)) if run is not None else None
        if run is None or shown is None or shown not in run.result.sources:
            return None  # (not in `sources`: skipped, over the size limit)
        index = LineIndex(features.source_text(run, shown), ls.encoding)
        start = index.offset(params.range.start.line, params.range.start.character)
        end = index.offset(params.range.end.line, params.range.end.character)
        only = params.context.only or []
        actions: list[types.CodeAction] = []
        kinds = [str(getattr(kind, "value", kind)) for kind in only]
        if not kinds or "quickfix" in kinds:
            # In the worker: checking that a fix leaves its file readable lints (one run at a time).
            actions.extend(await asyncio.get_running_loop().run_in_executor(
                ls.worker, features.code_actions, run, shown, start, end, ls.encoding, ls.uri_of(run),
                ls.disabled_actions))
        if any(kind in ("source", "source.fixAll", "source.fixAll.vllmlint") for kind in kinds):
            from vllmlint.fix.apply import fix_text

            assert project.options is not None
            outcome = await asyncio.get_running_loop().run_in_executor(
                ls.worker, fix_text, features.source_text(run, shown), shown, project.options)
            if outcome.applied and not outcome.refused:
                actions.append(features.fix_all_action(run, shown, outcome.text, outcome.applied, uri, ls.encoding))
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: VllmlintServer, params: types.HoverParams) -> types.Hover | None:
        path = _path(params.text_document.uri)
        if path is None:
            return None
        run = await ls.fresh(ls.project_for(path))
        shown = run.shown.get(str(path)) if run is not None else None
        if run is None or shown is None or shown not in run.result.sources:
            return None  # (not in `sources`: skipped, over the size limit)
        index = LineIndex(features.source_text(run, shown), ls.encoding)
        offset = index.offset(params.position.line, params.position.character)
        return features.hover(run, run.world, shown, offset, ls.encoding)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["-", "="]))
    def completion(ls: VllmlintServer, params: types.CompletionParams) -> types.CompletionList | None:
        path = _path(params.text_document.uri)
        if path is None:
            return None
        project = ls.project_for(path)
        document = ls.documents.get(params.text_document.uri)
        if document is None or project.too_large(document.text):
            return None  # not open, or not linted (over the size limit)
        text = document.text
        run = project.last
        world: Any = None
        shown = run.shown.get(str(path)) if run is not None else None
        if run is not None and shown is not None and run.texts.get(str(path)) == text:
            world = run.world
        else:  # typing: the document alone says what its invocation is, without linting the folder
            world, shown = _document_world(project, path, text)
        if world is None or shown is None:
            return None
        offset = LineIndex(text, ls.encoding).offset(params.position.line, params.position.character)
        items = features.completion(world, shown, text, offset, ls.encoding)
        return types.CompletionList(is_incomplete=False, items=items)

    return server


def _document_world(project: Project, path: Path, text: str):
    from vllmlint.engine import Linter
    from vllmlint.source.files import display_path

    try:
        linter = Linter(project.options)
        shown = display_path(path)
        linter.add_text(text, shown, path.suffix.lower(), path.name)
        return linter.build(), shown
    except Exception:  # a bug of ours: no completion, never a crash
        log.exception("completion failed")
        return None, None


def main(debounce: float = DEFAULT_DEBOUNCE) -> None:
    build_server(debounce).start_io()
