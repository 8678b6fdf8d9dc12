"""The language server's state and its work: the workspace folders, edits waiting out their
debounce, scans sent to the analysis thread, and diagnostics published when they changed.

Everything here runs on the protocol thread (pygls' event loop) except the jobs handed to
:class:`~resume_audit.server.worker.AnalysisThread`; their results come back as futures awaited here.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from resume_audit.findings import NotificationKind, ScanResult
from resume_audit.server.diagnostics import Located, diagnostics_by_file
from resume_audit.server.folders import FolderState, ProjectFolder, folder_for, project_root_of
from resume_audit.server.worker import AnalysisThread
from resume_audit.version import __version__

if TYPE_CHECKING:
    from pygls.server import ServerErrors

log = logging.getLogger(__name__)

#: seconds an edit waits for the next keystroke before it is analysed
DEFAULT_DEBOUNCE = 0.25

#: notifications worth a line in the editor's log as well as a diagnostic: the file went unanalysed
_LOGGED_KINDS = frozenset(
    {
        NotificationKind.INTERNAL_ERROR,
        NotificationKind.TIMEOUT,
        NotificationKind.PARSE_ERROR,
        NotificationKind.DECODE_ERROR,
        NotificationKind.SKIPPED,
        NotificationKind.UNREADABLE,
    }
)


@dataclass
class ServerSettings:
    """What the client may set in ``initializationOptions``: ``{"debounce": 0.25, "cache": true}``."""

    debounce: float = DEFAULT_DEBOUNCE
    #: keep the per-file cache ``resume-audit scan`` keeps (off: nothing written outside the editor)
    cache: bool = True

    @classmethod
    def of(cls, options: object) -> ServerSettings:
        settings = cls()
        if isinstance(options, dict):
            debounce = options.get("debounce")
            if isinstance(debounce, (int, float)) and 0 <= debounce <= 10:
                settings.debounce = float(debounce)
            if isinstance(options.get("cache"), bool):
                settings.cache = bool(options["cache"])
        return settings


@dataclass
class _Pending:
    """A folder's edits waiting out the debounce."""

    paths: set[Path] = field(default_factory=set)
    timer: asyncio.TimerHandle | None = None


class AuditServer(LanguageServer):
    """``resume-audit server``: pygls' server with the folders it keeps warm."""

    def __init__(self, analysis: AnalysisThread) -> None:
        super().__init__("resume-audit", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.analysis = analysis
        self.settings = ServerSettings()
        self.folders: list[ProjectFolder] = []
        #: what was last published per URI (a URI with nothing published is absent)
        self.published: dict[str, list[lsp.Diagnostic]] = {}
        #: the notifications already written to the client's log, so each is written once
        self.logged: set[tuple[str, str | None, str]] = set()
        self._pending: dict[Path, _Pending] = {}
        self._tokens = itertools.count(1)
        #: set while an error is being reported to the client (see :meth:`report_server_error`)
        self._reporting_error = False

    def report_server_error(self, error: Exception, source: ServerErrors) -> None:
        """pygls reports an error to the client by sending it a message -- and reports a failure to
        send the same way. After ``exit`` has closed the stream, a task still finishing (an index
        cancelled at exit, a publish) fails to send; reporting that sent again, failed again, and so
        on until the recursion limit, megabytes of tracebacks on stderr: a client that does not drain
        the server's stderr then blocked the exit for good. A failure while reporting is only logged."""
        if self._reporting_error:
            log.warning("could not report a server error to the client: %s", error)
            return
        self._reporting_error = True
        try:
            super().report_server_error(error, source)
        finally:
            self._reporting_error = False

    # -- folders ----------------------------------------------------------------------------------
    def add_folder(self, root: Path) -> ProjectFolder:
        folder = ProjectFolder(root.resolve(), use_cache=self.settings.cache)
        self.folders.append(folder)
        return folder

    def folder_of(self, path: Path, create: bool = True) -> ProjectFolder | None:
        """The workspace folder of a file; a file outside all of them gets a folder of its own
        (its project root), indexed now."""
        folder = folder_for(self.folders, path)
        if folder is None and create and path.suffix == ".py":
            folder = self.add_folder(project_root_of(path))
            asyncio.ensure_future(self.index(folder))
        return folder

    # -- scans --------------------------------------------------------------------------------------
    async def index(self, folder: ProjectFolder) -> None:
        """Scan a folder from the start, in the background, reporting ``$/progress``."""
        report = await self._begin_progress(f"resume-audit: scanning {folder.root.name}")
        loop = asyncio.get_running_loop()

        def progress(phase: str, done: int, total: int | None) -> None:  # (on the analysis thread)
            if report is not None:
                try:
                    loop.call_soon_threadsafe(report, phase, done, total)
                except RuntimeError:  # the loop closed at ``exit`` while indexing: nobody left to tell
                    pass

        stopping = False
        try:
            stopping = not await self._run(folder, lambda: folder.index(progress))
        finally:
            if report is not None and not stopping:  # (stopping: the stream is closed, the client gone)
                report("done", 0, None)

    async def _run(self, folder: ProjectFolder, job: Callable[[], FolderState]) -> bool:
        """Run a scan job on the analysis thread, then publish what changed; False when the server is
        stopping (the job was cancelled at ``exit``)."""
        try:
            state = await asyncio.wrap_future(self.analysis.submit(job))
        except asyncio.CancelledError:
            return False  # the server is stopping
        except Exception as exc:  # a bug in the engine: said, and the server goes on
            log.exception("analysis of %s failed", folder.root)
            self.window_log_message(
                lsp.LogMessageParams(lsp.MessageType.Error, f"resume-audit: analysis of {folder.root} failed: {exc!r}")
            )
            return True
        if state.problem is not None:
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, f"resume-audit: {state.problem}"))
        self.publish(folder)
        return True

    def edited(self, path: Path, immediately: bool = False) -> None:
        """A file's text changed (buffer or disk): analyse it once the edits pause."""
        folder = self.folder_of(path)
        if folder is None:
            return
        pending = self._pending.setdefault(folder.root, _Pending())
        pending.paths.add(path)
        if pending.timer is not None:
            pending.timer.cancel()
        delay = 0.0 if immediately else self.settings.debounce
        pending.timer = asyncio.get_running_loop().call_later(delay, lambda: asyncio.ensure_future(self._flush(folder)))

    async def _flush(self, folder: ProjectFolder) -> None:
        pending = self._pending.pop(folder.root, None)
        if pending is None or not pending.paths:
            return
        texts = {path: raw for path in pending.paths if (raw := folder.text_of(path)) is not None}
        await self._run(folder, lambda: folder.edit(texts))

    def reindex(self, folder: ProjectFolder) -> None:
        """Scan a folder again (its configuration, or its set of files, changed)."""
        asyncio.ensure_future(self.index(folder))

    # -- publishing -------------------------------------------------------------------------------
    def lines_of(self, folder: ProjectFolder) -> Callable[[Path], Sequence[str] | None]:
        """Each file's lines as the editor has them, read once per publication."""
        seen: dict[Path, Sequence[str] | None] = {}

        def lines(path: Path) -> Sequence[str] | None:
            if path not in seen:
                raw = folder.text_of(path)
                seen[path] = raw.decode("utf-8", "replace").splitlines(keepends=True) if raw is not None else None
            return seen[path]

        return lines

    def publish(self, folder: ProjectFolder) -> None:
        """Publish the diagnostics of every file of the folder whose diagnostics changed (an empty
        list for a file that has none left)."""
        result = folder.state.result
        codec = self.workspace.position_codec
        now = (
            diagnostics_by_file(result, Located(folder.root), self.lines_of(folder), codec)
            if result is not None
            else {}
        )
        mine = {uri for uri in self.published if folder_for(self.folders, Path(_path_of(uri))) is folder}
        for uri in sorted(mine | now.keys()):
            diagnostics = now.get(uri, [])
            if self.published.get(uri, []) == diagnostics:
                continue
            if diagnostics:
                self.published[uri] = diagnostics
            else:
                self.published.pop(uri, None)
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))
        if result is not None:
            self._log_notifications(result)

    def _log_notifications(self, result: ScanResult) -> None:
        """Write each new notice that a file went unanalysed (a rule crashed on it, it does not
        parse...) or that names no file to the client's log, once."""
        for note in result.notifications:
            if note.path is not None and note.kind not in _LOGGED_KINDS:
                continue
            ident = (note.kind.value, note.path, note.message)
            if ident in self.logged:
                continue
            self.logged.add(ident)
            where = f"{note.path}: " if note.path else ""
            kind = lsp.MessageType.Error if note.kind is NotificationKind.INTERNAL_ERROR else lsp.MessageType.Warning
            self.window_log_message(
                lsp.LogMessageParams(kind, f"resume-audit: {where}{note.kind.value}: {note.message}")
            )

    # -- progress ---------------------------------------------------------------------------------
    async def _begin_progress(self, title: str) -> Callable[[str, int, int | None], None] | None:
        """Start a ``$/progress`` the client shows (None when it cannot show one)."""
        window = self.client_capabilities.window
        if window is None or not window.work_done_progress:
            return None
        token = f"resume-audit-index-{next(self._tokens)}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception:  # the client refused: index without showing it
            return None
        self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, cancellable=False))

        def report(phase: str, done: int, total: int | None) -> None:
            if phase == "done":
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd(message="indexed"))
                return
            percentage = int(100 * done / total) if total else None
            message = f"{phase} {done}/{total}" if total else phase
            self.work_done_progress.report(token, lsp.WorkDoneProgressReport(message=message, percentage=percentage))

        return report


def _path_of(uri: str) -> str:
    return to_fs_path(uri) or uri
