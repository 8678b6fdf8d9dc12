"""The protocol: which LSP messages the server answers, and what each does with the session.

Lifecycle (``initialize`` / ``initialized`` / ``shutdown`` / ``exit``) is pygls'; this module adds
what happens on start (a warm scan per workspace folder, in the background), on edits (open,
change -- debounced, on the unsaved text --, save, close), on changes made outside the editor
(watched files, configuration), and the requests: code actions and hover.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from resume_audit.findings import Finding
from resume_audit.server.actions import fix_action, hover_text, suppress_action
from resume_audit.server.diagnostics import Located, findings_at
from resume_audit.server.folders import CONFIG_FILE_NAMES, ProjectFolder
from resume_audit.server.session import AuditServer, ServerSettings


def path_of(uri: str) -> Path | None:
    """The resolved file path of a ``file:`` URI (None for any other scheme: an untitled buffer)."""
    if not uri.startswith("file:"):
        return None
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs else None


def register(server: AuditServer) -> None:
    """Attach every handler to ``server``."""

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: AuditServer, params: lsp.InitializeParams) -> None:
        ls.settings = ServerSettings.of(params.initialization_options)
        roots = [path_of(f.uri) for f in params.workspace_folders or []]
        if not roots and params.root_uri:
            roots = [path_of(params.root_uri)]
        for root in roots:
            if root is not None and root.is_dir():
                ls.add_folder(root)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: AuditServer, params: lsp.InitializedParams) -> None:
        watched = ls.client_capabilities.workspace
        if (
            watched is not None
            and watched.did_change_watched_files is not None
            and watched.did_change_watched_files.dynamic_registration
        ):
            options = lsp.DidChangeWatchedFilesRegistrationOptions(
                watchers=[
                    lsp.FileSystemWatcher(glob_pattern="**/*.py"),
                    lsp.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                ]
            )
            await ls.client_register_capability_async(
                lsp.RegistrationParams(
                    registrations=[
                        lsp.Registration(
                            id="resume-audit-watched-files",
                            method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=options,
                        )
                    ]
                )
            )
        for folder in list(ls.folders):
            ls.reindex(folder)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AuditServer, params: lsp.DidOpenTextDocumentParams) -> None:
        _buffer_changed(ls, params.text_document.uri, immediately=True)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AuditServer, params: lsp.DidChangeTextDocumentParams) -> None:
        _buffer_changed(ls, params.text_document.uri, immediately=False)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AuditServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        if path.name in CONFIG_FILE_NAMES:
            _config_changed(ls, path)
            return
        _buffer_changed(ls, params.text_document.uri, immediately=True)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AuditServer, params: lsp.DidCloseTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        folder = ls.folder_of(path, create=False) if path is not None else None
        if path is None or folder is None:
            return
        if folder.buffers.pop(path, None) is not None:
            ls.edited(path, immediately=True)  # back to the text on disk

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: AuditServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = path_of(change.uri)
            folder = ls.folder_of(path, create=False) if path is not None else None
            if path is None or folder is None:
                continue
            if path.name in CONFIG_FILE_NAMES:
                _config_changed(ls, path)
            elif change.type != lsp.FileChangeType.Changed:
                ls.reindex(folder)  # a module appeared or vanished: imports resolve differently
            elif path not in folder.buffers:
                ls.edited(path)  # (an open buffer's text is the editor's, not the disk's)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: AuditServer, params: lsp.DidChangeConfigurationParams) -> None:
        for folder in ls.folders:
            ls.reindex(folder)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix])
    )
    def code_action(ls: AuditServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        found = _findings(ls, params.text_document.uri, params.range.start.line, params.range.end.line)
        if found is None:
            return None
        folder, path, findings = found
        codec = ls.workspace.position_codec
        text = (folder.text_of(path) or b"").decode("utf-8", "replace")
        where = Located(folder.root)
        lines_of = ls.lines_of(folder)
        actions: list[lsp.CodeAction] = []
        for finding in findings:
            diagnostic = next(
                (
                    d
                    for d in params.context.diagnostics
                    if d.code == finding.rule_id and d.range.start.line == finding.span.start_line - 1
                ),
                None,
            )
            if finding.autofix is not None:
                uris = {where.uri(e.span.path): lines_of(where.path(e.span.path)) for e in finding.autofix.edits}
                actions.append(fix_action(finding, finding.autofix, where, uris, codec, diagnostic))
            suppress = suppress_action(finding, text, params.text_document.uri, codec, diagnostic)
            if suppress is not None:
                actions.append(suppress)
        # safe fixes first, then unsafe ones, then suppressions: the order editors list them in
        actions.sort(key=lambda a: (not a.is_preferred, a.title.startswith("Suppress")))
        return actions

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: AuditServer, params: lsp.HoverParams) -> lsp.Hover | None:
        line = params.position.line
        found = _findings(ls, params.text_document.uri, line, line)
        if found is None or not found[2]:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=hover_text(found[2])))


def _buffer_changed(ls: AuditServer, uri: str, immediately: bool) -> None:
    """Take the editor's text of a document and have it analysed."""
    path = path_of(uri)
    if path is None:
        return
    folder = ls.folder_of(path)
    if folder is None:
        return
    document = ls.workspace.get_text_document(uri)
    folder.buffers[path] = document.source.encode("utf-8", "surrogatepass")
    ls.edited(path, immediately=immediately)


def _config_changed(ls: AuditServer, path: Path) -> None:
    """A ``pyproject.toml`` changed: every folder it can configure is scanned again (the nearest
    one with a ``[tool.resume-audit]`` table wins, so a folder above or below may be affected)."""
    for folder in ls.folders:
        if folder.contains(path) or path.parent in folder.root.parents:
            ls.reindex(folder)


def _findings(ls: AuditServer, uri: str, first: int, last: int) -> tuple[ProjectFolder, Path, list[Finding]] | None:
    path = path_of(uri)
    folder = ls.folder_of(path, create=False) if path is not None else None
    if path is None or folder is None or folder.state.result is None:
        return None
    return folder, path, findings_at(folder.state.result, Located(folder.root), path, first, last)
