"""A scan held warm between edits: the engine side of ``resume-audit server``.

:meth:`LiveScan.start` runs stages 1-4 of a scan exactly as ``resume-audit scan`` does (same
configuration, same cache) and keeps their state. :meth:`LiveScan.update` then takes new text for
files of the project -- an editor's unsaved buffer, or a file changed on disk -- and re-analyses
only what can have changed:

* the edited files themselves, when they are candidates (a file that gains or loses its framework
  import gains or loses its findings);
* every candidate whose last result rested on an edited file: the modules its analysis looked into
  (a helper's effect reaching a node in another file), the project-wide word searches whose answer
  the edit changed, and the per-module summary parts whose value it changed -- the same test the
  per-file result cache applies (:func:`~resume_audit.cache.validity.rests_unchanged`).

Each update analyses against a fresh project model (its memos rest on the old text), built from
the modules already parsed -- kept by content hash, so only edited modules are parsed again -- and
from per-module summaries kept in memory with what they rested on. A change that alters which
modules exist, or which frameworks the project uses, cannot be applied in place: the update says
so and the caller starts again (a warm start: the scan's cache answers the unchanged files).
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from resume_audit.cache.summaries import KeptSummary, SummaryStore
from resume_audit.cache.validity import rests_unchanged
from resume_audit.config.settings import Config
from resume_audit.config.tree import ConfigSource
from resume_audit.engine.analyzer import IncompleteSummary
from resume_audit.engine.candidates import oversized, worth_parsing
from resume_audit.engine.grouping import GroupAnalyzers
from resume_audit.engine.options import ScanOptions
from resume_audit.engine.replay import ReplayCheck
from resume_audit.engine.scan import run_stages
from resume_audit.engine.scope import ScanScope
from resume_audit.engine.stages import Stages
from resume_audit.facts.summaries import SummarySource
from resume_audit.findings import Notification, ScanResult
from resume_audit.reading.decoding import decode_source
from resume_audit.reading.prefilter import frameworks_in_scan
from resume_audit.reading.sourcebytes import content_hash

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project
    from resume_audit.facts.model import ModuleFacts


@dataclass(frozen=True)
class LiveUpdate:
    """What an update did: the candidate files analysed again (their results replaced), or that
    the change needs a new start (``restart``: a new or vanished module, a framework the project
    now uses or no longer uses)."""

    analysed: tuple[Path, ...] = ()
    restart: bool = False


class LiveSummaries(SummarySource["Project"]):
    """Per-module summaries kept in memory across updates, each with what it rested on, in front of
    the scan's summary store (read, never written: a summary of an unsaved buffer stays in memory)."""

    def __init__(
        self, store: SummarySource[Project] | None, hashes: dict[str, str], mentions: Callable[[str], list[str]]
    ) -> None:
        self.store = store
        self.hashes = hashes
        self.mentions = mentions
        self.kept: dict[tuple[str, Path], KeptSummary] = {}

    def lookup(self, kind: str, path: Path, project: Project) -> Any | None:
        kept = self.kept.get((kind, path))
        if kept is None and isinstance(self.store, SummaryStore):
            kept = self.store.entry(kind, path)
        if kept is None:
            return None
        try:
            holds = kept.holds(self.hashes, self.mentions, project)
        except (ValueError, TypeError, KeyError, AttributeError):  # a damaged stored entry
            holds = False
        if not holds:
            self.kept.pop((kind, path), None)
            return None
        self.kept[(kind, path)] = kept
        return kept.value

    def record(
        self,
        kind: str,
        path: Path,
        value: Any,
        paths: set[Path],
        words: set[str],
        summaries: dict[str, str],
        project: Project,
    ) -> None:
        deps = {str(p): self.hashes.get(str(p)) for p in sorted(paths)}
        if any(h is None for h in deps.values()):
            return  # rests on a file outside the project: never trusted later
        self.kept[(kind, path)] = KeptSummary(
            value, deps, {w: self.mentions(w) for w in sorted(words)}, dict(summaries)
        )


@dataclass
class _Edit:
    """One file's new text, as the inventory will see it."""

    path: Path
    raw: bytes
    problem: Notification | None = field(default=None)


class LiveScan:
    """One project's scan, kept warm: its result now, and updates as files change."""

    def __init__(self, stages: Stages, options: ScanOptions) -> None:
        self.stages = stages
        self.options = options
        workspace = stages.workspace
        #: modules parsed so far, by (path, content hash): what a fresh project starts from
        self.parsed: dict[tuple[Path, str], ModuleFacts] = {}
        self.summaries = {
            g.index: LiveSummaries(stages.cache.stores.get(g.index), workspace.hashes, workspace.mentions)
            for g in stages.inventory.groups.all
        }
        self.entries = {f.path: f for f in workspace.files}
        self._keep_parsed(stages.analyzers)
        stages.analyzers = self._analyzers()  # the scan's analysers' memos are dropped with them

    @classmethod
    def start(cls, paths: Sequence[Path], config: Config | ConfigSource, root: Path, options: ScanOptions) -> LiveScan:
        """Scan ``paths`` as :func:`~resume_audit.engine.scan.scan` does (without its replay
        record: the per-file results are needed, not only the combined one) and keep the state."""
        scope = ScanScope.of(paths, config, root, options.repo)
        was_enabled = gc.isenabled()
        gc.disable()  # as a scan does: the syntax trees it builds live on, nothing to collect
        try:
            stages = run_stages(scope, options, ReplayCheck(), recording=False)
        finally:
            if was_enabled:
                gc.enable()
        return cls(stages, options)

    @property
    def root(self) -> Path:
        return self.stages.scope.root

    def result(self) -> ScanResult:
        """The combined result of every candidate as it is now."""
        return self.stages.combined()

    def knows(self, path: Path) -> bool:
        """Whether ``path`` (resolved) is a file of this project."""
        return path in self.entries

    def display(self, path: Path) -> str | None:
        """How findings name the file at ``path`` (resolved), or None for a file outside the project."""
        entry = self.entries.get(path)
        return entry.display if entry is not None else None

    def update(self, texts: Mapping[Path, bytes]) -> LiveUpdate:
        """The files at these resolved paths now hold these bytes: re-analyse what that can change."""
        if any(path not in self.entries for path in texts):
            return LiveUpdate(restart=True)
        edits = [edit for path, raw in texts.items() if (edit := self._take(path, raw)) is not None]
        if not edits:
            return LiveUpdate()
        inventory, candidates = self.stages.inventory, self.stages.candidates
        in_scan = frameworks_in_scan(inventory.matches.values())
        if in_scan != candidates.in_scan:
            return LiveUpdate(restart=True)
        for edit in edits:
            self._reselect(edit, in_scan)
        edited = {str(edit.path) for edit in edits}
        changed_words: set[str] = set()
        for edit in edits:
            changed_words |= self.stages.workspace.mentions.replace(edit.path, edit.raw)
        analyzers = self.stages.analyzers = self._analyzers()
        stale = self._stale(edited, changed_words, analyzers)
        group_of = inventory.group_of
        for path in stale:
            self.stages.results[path] = analyzers.analyse(group_of[path].index, path)
        return LiveUpdate(tuple(stale))

    # -- the steps of an update -------------------------------------------------------------------
    def _take(self, path: Path, raw: bytes) -> _Edit | None:
        """Record the new text of one file in the scan's state (None: it is the text already known)."""
        workspace, inventory = self.stages.workspace, self.stages.inventory
        key = str(path)
        old = workspace.hashes.get(key)
        digest = content_hash(raw)
        if old == digest:
            return None
        self.parsed.pop((path, old or ""), None)
        workspace.hashes[key] = digest
        workspace.texts.loaded[path] = raw
        workspace.texts.changed.discard(path)
        inventory.sizes[path] = len(raw)
        display = self.entries[path].display
        decoded = decode_source(raw, path, display)
        problem = decoded if isinstance(decoded, Notification) else None
        # what the reading stage said of the old text no longer holds
        inventory.notifications = [n for n in inventory.notifications if n.path != display]
        if problem is not None:
            inventory.notifications.append(problem)
            inventory.matches.pop(path, None)
        else:
            match = inventory.prefilter.match(raw)
            if match.empty:
                inventory.matches.pop(path, None)
            else:
                inventory.matches[path] = match
        return _Edit(path, raw, problem)

    def _reselect(self, edit: _Edit, in_scan: frozenset[str]) -> None:
        """Make the edited file a candidate, or no longer one, as its new text says."""
        inventory, candidates, results = self.stages.inventory, self.stages.candidates, self.stages.results
        wanted = worth_parsing(inventory, edit.path, in_scan)
        if wanted:
            too_big = oversized(len(edit.raw), self.options.max_file_bytes, self.entries[edit.path].display)
            if too_big is not None:
                inventory.notifications.append(too_big)
                wanted = False
        if wanted and edit.path not in results:
            candidates.paths.append(edit.path)
        elif not wanted and edit.path in results:
            candidates.paths.remove(edit.path)
            del results[edit.path]

    def _stale(self, edited: set[str], changed_words: set[str], analyzers: GroupAnalyzers) -> list[Path]:
        """The candidates whose result may rest on an edit: every one the per-file cache would no
        longer vouch for, and the edited candidates without a result yet."""
        workspace, group_of = self.stages.workspace, self.stages.inventory.group_of
        stale: list[Path] = []
        for path in self.stages.candidates.paths:
            result = self.stages.results.get(path)
            if result is None or str(path) in edited or changed_words.intersection(result.mention_words):
                stale.append(path)
                continue
            group = group_of[path].index

            def digest(key: str, group: int = group) -> str | None:
                try:
                    return analyzers.of(group).summary_digest(key)
                except IncompleteSummary:
                    return None

            if not rests_unchanged(result.deps, {}, result.summary_deps, workspace.hashes, workspace.mentions, digest):
                stale.append(path)
        return stale

    def _analyzers(self) -> GroupAnalyzers:
        """Fresh analysers (their projects' memos rest on nothing old) over the kept parsed modules
        and summaries."""
        workspace = self.stages.workspace
        return GroupAnalyzers(
            self.stages.inventory.groups.all,
            lambda group: workspace.analyzer(group, self.summaries[group.index], self.parsed),
        )

    def _keep_parsed(self, analyzers: GroupAnalyzers) -> None:
        """The modules the scan's own analysers parsed (not a pool's workers'), for the next project."""
        hashes, changed = self.stages.workspace.hashes, self.stages.workspace.texts.changed
        for analyzer in analyzers.built.values():
            for path, module in analyzer.project.index.loaded.items():
                if module is not None and path not in changed and str(path) in hashes:
                    self.parsed[(path, hashes[str(path)])] = module
