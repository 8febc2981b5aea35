"""A test client for `vllmlint server`: pygls's LanguageClient over the server's real stdio, in a subprocess.

`session(root, ...)` starts the server, initializes it on the folder `root` and yields a `Session` whose
methods wait for what the server sends (diagnostics per URI). Synchronous tests run each session's
coroutine with `asyncio.run`.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import AsyncIterator

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

TIMEOUT = 20.0


class Session:
    def __init__(self, client: LanguageClient, root: Path):
        self.client = client
        self.root = root
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.versions: dict[str, int] = {}
        self.published: dict[str, int] = {}  # uri -> how many times diagnostics were published
        self.changed = asyncio.Event()
        self.registrations: list[types.Registration] = []
        self.messages: list[str] = []
        self.encoding: str = "utf-16"

    def uri(self, name: str) -> str:
        return from_fs_path(str(self.root / name))

    async def wait_diagnostics(self, name: str, after: int = 0, predicate=None) -> list[types.Diagnostic]:
        """The diagnostics of `name` once published more than `after` times (and `predicate` holds)."""
        uri = self.uri(name)

        async def ready() -> list[types.Diagnostic]:
            while True:
                if self.published.get(uri, 0) > after and (predicate is None or predicate(self.diagnostics[uri])):
                    return self.diagnostics[uri]
                self.changed.clear()
                await self.changed.wait()

        return await asyncio.wait_for(ready(), TIMEOUT)

    def open(self, name: str, text: str | None = None, language: str = "yaml") -> None:
        uri = self.uri(name)
        if text is None:
            text = (self.root / name).read_text(encoding="utf-8")
        self.versions[uri] = 1
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))

    def replace(self, name: str, text: str) -> None:
        """A full-text change of the open document (unsaved)."""
        uri = self.uri(name)
        self.versions[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            [types.TextDocumentContentChangeWholeDocument(text=text)]))

    def edit(self, name: str, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        """An incremental change (positions in the session's encoding)."""
        uri = self.uri(name)
        self.versions[uri] += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            [types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(*start), types.Position(*end)), text=text)]))

    def save(self, name: str) -> None:
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(
            types.TextDocumentIdentifier(uri=self.uri(name))))

    async def hover(self, name: str, line: int, character: int) -> types.Hover | None:
        return await self.client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri=self.uri(name)), types.Position(line, character)))

    async def completion(self, name: str, line: int, character: int) -> list[types.CompletionItem]:
        result = await self.client.text_document_completion_async(types.CompletionParams(
            types.TextDocumentIdentifier(uri=self.uri(name)), types.Position(line, character)))
        if result is None:
            return []
        return list(result.items if isinstance(result, types.CompletionList) else result)

    async def code_actions(self, name: str, start: tuple[int, int], end: tuple[int, int],
                           only: list[str] | None = None) -> list[types.CodeAction]:
        result = await self.client.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri=self.uri(name)),
            types.Range(types.Position(*start), types.Position(*end)),
            types.CodeActionContext(diagnostics=[], only=only)))
        return [a for a in result or [] if isinstance(a, types.CodeAction)]


    async def raw_request(self, method: str, params) -> object:
        """A request sent as the JSON given (not checked against LSP's types, as a hostile or buggy client may
        send it): its result, or the server's error raised as pygls's JsonRpcException."""
        from concurrent.futures import Future

        protocol = self.client.protocol
        msg_id = f"raw-{len(protocol._request_futures)}-{id(params)}"
        future: Future = Future()
        protocol._request_futures[msg_id] = future
        protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await asyncio.wait_for(asyncio.wrap_future(future), TIMEOUT)


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str = "utf-16") -> str:
    """The text with LSP edits applied (positions in `encoding`), as an editor applies them."""
    from vllmlint.server.positions import LineIndex

    index = LineIndex(text, encoding)
    spans = sorted(((index.offset(e.range.start.line, e.range.start.character),
                     index.offset(e.range.end.line, e.range.end.character), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


@contextlib.asynccontextmanager
async def session(root: Path, encodings: list[str] | None = None, watch: bool = True,
                  debounce: int | None = 30) -> AsyncIterator[Session]:
    """`debounce` None: the server's default (no `--debounce`)."""
    client = LanguageClient("vllmlint-tests", "1")
    state = Session(client, root)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        state.diagnostics[params.uri] = list(params.diagnostics)
        state.published[params.uri] = state.published.get(params.uri, 0) + 1
        state.changed.set()

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        state.registrations.extend(params.registrations)

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def on_message(params: types.ShowMessageParams) -> None:
        state.messages.append(params.message)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        state.messages.append(params.message)

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    options = ["--debounce", str(debounce)] if debounce is not None else []
    await client.start_io(sys.executable, "-m", "vllmlint", "server", "--stdio", *options, cwd=str(root), env=env)
    capabilities = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=encodings) if encodings is not None else None,
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=watch)),
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)))
    result = await client.initialize_async(types.InitializeParams(
        capabilities=capabilities, root_uri=from_fs_path(str(root)),
        workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(str(root)), name=root.name)]))
    encoding = result.capabilities.position_encoding
    state.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
    client.initialized(types.InitializedParams())
    try:
        yield state
    finally:
        try:
            await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
            client.exit(None)
        finally:
            try:
                await asyncio.wait_for(client.stop(), TIMEOUT)
            finally:
                server = client._server
                if server is not None and server.returncode is None:
                    server.kill()  # a server that did not stop (a failed test) does not outlive it
