"""A real LSP client (pygls') driving ``resume-audit server`` in a child process over stdio, for
the language server's end-to-end tests and its latency benchmark."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient


class ServerSession:
    """``async with ServerSession(root) as s:`` -- a started, initialised server on ``root``."""

    def __init__(
        self,
        root: Path,
        *,
        env: dict[str, str] | None = None,
        debounce: float = 0.05,
        command: list[str] | None = None,
        cache: bool = True,
    ) -> None:
        self.root = root
        self.env = {**os.environ, **(env or {})}
        self.debounce = debounce
        self.cache = cache
        self.command = command or [sys.executable, "-m", "resume_audit", "server"]
        self.client = LanguageClient("resume-audit-tests", "1")
        #: the last diagnostics published per URI, and when each arrived
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self.arrivals: list[tuple[float, str]] = []
        self.logs: list[str] = []
        self.progress: list[Any] = []
        self.versions: dict[str, int] = {}
        self._register()

    def _register(self) -> None:
        client = self.client

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = params.diagnostics
            self.arrivals.append((time.perf_counter(), params.uri))

        @client.feature(lsp.WINDOW_LOG_MESSAGE)
        def log_message(params: lsp.LogMessageParams) -> None:
            self.logs.append(params.message)

        @client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def show_message(params: lsp.ShowMessageParams) -> None:
            self.logs.append(params.message)

        @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress_create(params: lsp.WorkDoneProgressCreateParams) -> None:
            return None

        @client.feature(lsp.PROGRESS)
        def progress(params: lsp.ProgressParams) -> None:
            self.progress.append(params.value)

        @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def register_capability(params: lsp.RegistrationParams) -> None:
            return None

    async def __aenter__(self) -> ServerSession:
        await self.client.start_io(*self.command, env=self.env)
        capabilities = lsp.ClientCapabilities(
            window=lsp.WindowClientCapabilities(work_done_progress=True),
            workspace=lsp.WorkspaceClientCapabilities(
                did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
            ),
            text_document=lsp.TextDocumentClientCapabilities(
                publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(related_information=True)
            ),
        )
        await self.client.initialize_async(
            lsp.InitializeParams(
                capabilities=capabilities,
                root_uri=self.root.as_uri(),
                workspace_folders=[lsp.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)],
                initialization_options={"debounce": self.debounce, "cache": self.cache},
            )
        )
        self.client.initialized(lsp.InitializedParams())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.client._server is not None and self.client._server.returncode is None:
            self.client._server.kill()
        await self.client.stop()

    # -- documents --------------------------------------------------------------------------
    def uri(self, relative: str) -> str:
        return (self.root / relative).resolve().as_uri()

    def open(self, relative: str, text: str | None = None) -> str:
        uri = self.uri(relative)
        self.versions[uri] = 1
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                lsp.TextDocumentItem(
                    uri=uri,
                    language_id="python",
                    version=1,
                    text=text if text is not None else (self.root / relative).read_text(),
                )
            )
        )
        return uri

    def change(self, relative: str, text: str) -> None:
        """Replace the whole buffer (unsaved)."""
        uri = self.uri(relative)
        self.versions[uri] = self.versions.get(uri, 1) + 1
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                [lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; diagnostics now: {self.codes()}; logs: {self.logs[-5:]}")
            await asyncio.sleep(0.01)

    def codes(self, relative: str | None = None) -> dict[str, list[str | int | None]] | list[str | int | None]:
        if relative is not None:
            return [d.code for d in self.diagnostics.get(self.uri(relative), [])]
        return {uri: [d.code for d in ds] for uri, ds in self.diagnostics.items()}

    async def shutdown(self) -> int:
        """The shutdown / exit sequence; the server's exit code."""
        await self.client.shutdown_async(None)
        self.client.exit(None)
        server = self.client._server
        assert server is not None
        return await asyncio.wait_for(server.wait(), 20)
