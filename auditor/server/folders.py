"""One workspace folder of the editor: its warm scan, the unsaved text of its open files, and what
was last published for it.

The scan is the one ``resume-audit scan FOLDER`` runs -- the folder's ``[tool.resume-audit]``
(and each sub-package's own, hierarchical), the same cache directory -- kept warm by
:class:`~resume_audit.engine.live.LiveScan`. Everything here that scans runs on the analysis
thread (:mod:`resume_audit.server.worker`); nothing here speaks the protocol.
"""

from __future__ import annotations

import gc
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from resume_audit.api import ScanRequest, config_source, scan_options
from resume_audit.cache.results import default_cache_dir
from resume_audit.config.settings import ConfigError
from resume_audit.config.tree import root_config
from resume_audit.discovery.repo_root import RepoPaths
from resume_audit.engine.live import LiveScan, LiveUpdate
from resume_audit.engine.options import Progress
from resume_audit.findings import ScanResult

log = logging.getLogger(__name__)

#: files whose change means the configuration may have changed: the folder is scanned again
CONFIG_FILE_NAMES = frozenset({"pyproject.toml"})


@dataclass
class FolderState:
    """What the editor sees of one folder: the last combined result, and why there is none."""

    result: ScanResult | None = None
    #: a configuration error (a bad ``[tool.resume-audit]``), shown to the user instead of findings
    problem: str | None = None


@dataclass
class ProjectFolder:
    """A workspace folder and its warm scan."""

    root: Path
    #: ``resume-audit scan --no-cache``'s equivalent: keep no per-file cache (tests, read-only homes)
    use_cache: bool = True
    live: LiveScan | None = None
    #: the text of every open editor buffer of the folder's files (resolved path -> bytes)
    buffers: dict[Path, bytes] = field(default_factory=dict)
    state: FolderState = field(default_factory=FolderState)

    def contains(self, path: Path) -> bool:
        return path == self.root or self.root in path.parents

    # -- on the analysis thread ------------------------------------------------------------------
    def index(self, progress: Progress | None = None) -> FolderState:
        """Scan the folder from the start (a warm start when the cache has it), then apply the open
        buffers' unsaved text."""
        request = ScanRequest(
            paths=[self.root], root=self.root, cache_dir=default_cache_dir(self.root) if self.use_cache else None
        )
        try:
            source = config_source(request)
            config = root_config(source, [self.root])
        except ConfigError as exc:
            self.live = None
            self.state = FolderState(problem=str(exc))
            return self.state
        options = scan_options(request, config, RepoPaths.for_scan(self.root, config.base_dir), progress)
        self.live = None  # the previous scan's state, freed before the new one is built
        self.live = LiveScan.start([self.root], source, self.root, options)
        _settle_heap()
        if self.buffers:
            self._apply(dict(self.buffers), restart=False)
        self.state = FolderState(result=self.live.result())
        return self.state

    def edit(self, texts: dict[Path, bytes], progress: Progress | None = None) -> FolderState:
        """Files of the folder now hold these bytes (an unsaved buffer, a save, a change on disk)."""
        if self.live is None:
            return self.index(progress)
        if self._apply(texts, restart=True):
            return self.index(progress)
        self.state = FolderState(result=self.live.result())
        return self.state

    def _apply(self, texts: dict[Path, bytes], restart: bool) -> bool:
        """Update the warm scan; True when it asks for a new start (and ``restart`` allows one).
        A file the project does not hold (excluded, or outside it) is left out, with a log line."""
        assert self.live is not None
        live = self.live
        known = {path: raw for path, raw in texts.items() if live.knows(path)}
        for path in texts.keys() - known.keys():
            log.info(
                "%s is not a file of the scan of %s (excluded, ignored by git, or new): not analysed", path, self.root
            )
        update: LiveUpdate = live.update(known)
        if update.analysed:
            log.info(
                "re-analysed %d file(s) after an edit: %s", len(update.analysed), ", ".join(map(str, update.analysed))
            )
        return update.restart and restart

    def text_of(self, path: Path) -> bytes | None:
        """The file's text as the editor has it (its buffer), else as on disk."""
        raw = self.buffers.get(path)
        if raw is not None:
            return raw
        try:
            return path.read_bytes()
        except OSError:
            return None


def _settle_heap() -> None:
    """After indexing, the project's syntax trees and indexes live as long as the server: move
    them out of the cyclic collector's view (``gc.freeze``), so the collections an edit's
    analysis triggers walk only what the edit made -- a full collection over a 5,000-file
    project's heap costs more than the analysis of one file."""
    gc.collect()
    gc.freeze()


def folder_for(folders: list[ProjectFolder], path: Path) -> ProjectFolder | None:
    """The innermost folder holding ``path``."""
    holding = [f for f in folders if f.contains(path)]
    return max(holding, key=lambda f: len(f.root.parts)) if holding else None


def project_root_of(
    path: Path, is_marker: Callable[[Path], bool] = lambda d: (d / "pyproject.toml").is_file() or (d / ".git").exists()
) -> Path:
    """The folder to scan for a file opened outside every workspace folder: the nearest folder
    above it with a ``pyproject.toml`` or a ``.git``, else the file's own folder."""
    for folder in path.parents:
        if is_marker(folder):
            return folder
    return path.parent
