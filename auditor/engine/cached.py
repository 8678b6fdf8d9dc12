"""Stage 3: the results the cache still vouches for.

Per-file results are cached as JSON (:mod:`resume_audit.cache.results`) keyed by the tool
version, the configuration that applied to the file, the file's content, the content of every
module its analysis touched, and the *value* of every per-module summary it read
(:mod:`resume_audit.facts.summaries`: which functions a module makes checkpointed, which names it
calls...), so an unchanged tree rescans at I/O speed and an edit that changes no summary
re-analyses only the edited file (early cut-off). Summaries are stored too
(:mod:`resume_audit.cache.summaries`): checking them parses only the modules that changed, and a
warm scan whose summaries are all still valid imports no analysis at all.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Sequence

from resume_audit.cache.fileresult import FileResult
from resume_audit.cache.results import ResultCache
from resume_audit.cache.summaries import StoredDigests, SummaryStore
from resume_audit.catalog.ruleindex import tool_fingerprint
from resume_audit.discovery.modulenames import SourceFile
from resume_audit.engine.analyzer import IncompleteSummary
from resume_audit.engine.grouping import Group, GroupAnalyzers
from resume_audit.engine.options import ScanOptions
from resume_audit.engine.scope import ScanScope
from resume_audit.engine.workspace import Workspace
from resume_audit.version import __version__


class ScanCache:
    """The result cache and the summary store of each configuration group of one scan (none
    without a cache directory)."""

    def __init__(self, scope: ScanScope, options: ScanOptions, groups: Sequence[Group], workspace: Workspace) -> None:
        self.workspace = workspace
        #: the cache directory (None: no cache)
        self.directory = options.cache_dir or None
        self.results: list[ResultCache] | None = None
        self.stores: dict[int, SummaryStore] = {}
        if not options.cache_dir:
            return
        # everything a cached result depends on beyond its file and dependencies: the analysing
        # code, the rules, the configuration, which modules exist, the size limit (an oversized
        # dependency is not parsed), the report root (findings carry paths relative to it), the
        # repository root (fingerprints hash paths relative to it) and whether links are followed;
        # the configuration is the group's: a file's entry is keyed on the settings that applied to it
        module_set = _module_set(workspace.files)
        self.results = [
            ResultCache(
                options.cache_dir,
                key_parts=[
                    __version__,
                    tool_fingerprint(),
                    ",".join(g.rule_ids),
                    g.config.fingerprint(),
                    module_set,
                    str(options.max_file_bytes),
                    str(scope.root.resolve()),
                    str(options.follow_symlinks),
                    ",".join(sorted(workspace.in_scan)),
                    scope.repo.anchor,
                ],
            )
            for g in groups
        ]
        self.stores = (
            {
                g.index: SummaryStore(
                    options.cache_dir, self.results[g.index].key, workspace.hashes, workspace.mentions
                )
                for g in groups
            }
            if self.results
            else {}
        )

    @property
    def keys(self) -> list[str] | None:
        """Each group's cache key (what a pool worker opens its summary store with)."""
        return [c.key for c in self.results] if self.results else None

    def lookup(
        self, candidates: Sequence[Path], group_of: dict[Path, Group], analyzers: GroupAnalyzers, options: ScanOptions
    ) -> tuple[dict[Path, FileResult], list[tuple[int, Path]]]:
        """The cached results still valid, and what is left to analyse: (group, path), by group
        (a worker's chunk then mostly needs one group's analyser)."""
        results: dict[Path, FileResult] = {}
        todo: list[tuple[int, Path]] = []
        caches = self.results
        workspace = self.workspace
        displays = {f.path: f.display for f in workspace.files}
        # first from the stored summaries alone: a warm scan then imports no analysis at all
        stored = {index: StoredDigests(store, workspace.mentions) for index, store in self.stores.items()}
        for checked, path in enumerate(candidates, 1):
            if caches and checked % 256 == 0:
                options.tell("checking the cache", checked, len(candidates))
            index = group_of[path].index
            cached = (
                caches[index].get(
                    str(path),
                    displays[path],
                    workspace.hashes,
                    workspace.mentions,
                    functools.partial(_summary_digest, analyzers, stored.get(index), index),
                )
                if caches
                else None
            )
            if cached is not None:
                results[path] = cached
            else:
                todo.append((index, path))
        todo.sort(key=lambda item: item[0])
        return results, todo

    def put(self, group: int, path: Path, result: FileResult) -> None:
        """Keep a result as it arrives: a scan killed half-way keeps what it did."""
        if self.results:
            self.results[group].put(str(path), self.workspace.hashes[str(path)], result, self.workspace.mentions)


def _summary_digest(analyzers: GroupAnalyzers, stored: StoredDigests | None, group: int, key: str) -> str | None:
    """The current digest of a summary part a cached result of ``group`` depended on: from the
    stored summaries when they are all still valid, else from the group's analysis. Computing a
    stale summary parses the modules it rests on: on the per-file time limit, and a module that
    is too slow, or a bug, makes the result a miss (its analysis then reports the problem)."""
    if group in analyzers.unsure:
        return None
    if stored is not None:
        try:
            return stored.summary_digest(key)
        except Exception:  # StaleSummary, or a damaged entry: the analysis decides
            pass
    try:
        return analyzers.of(group).summary_digest(key)
    except IncompleteSummary:
        # the project now holds answers computed without that module: no later check of this
        # group's cached results may rest on them
        analyzers.unsure.add(group)
        return None


def _module_set(files: Sequence[SourceFile]) -> str:
    """Fingerprint of which module names exist: a new module can resolve an import that
    did not resolve before, which must invalidate cached results."""
    return hashlib.blake2b(
        "\n".join(sorted({f.module_name for f in files})).encode("utf-8", "surrogatepass"), digest_size=16
    ).hexdigest()
