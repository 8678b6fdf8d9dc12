"""The static scan: a short sequence of named stages, each in a module of its own.

0. **Scope and replay** (:mod:`~resume_audit.engine.scope`, :mod:`~resume_audit.engine.replay`):
   what is scanned, under which configuration; a tree where nothing changed since the last scan
   returns the last result from ``stat`` calls alone.
1. **Inventory** (:mod:`~resume_audit.engine.inventory`): the files found (or the last scan's
   list, when only contents changed), each read once as bytes, hashed, decoded, pre-filtered and
   put in its configuration group (:mod:`~resume_audit.engine.grouping`).
2. **Candidates** (:mod:`~resume_audit.engine.candidates`): the files worth parsing for the rules
   their folder's configuration runs; oversized ones are reported and skipped.
3. **Cache** (:mod:`~resume_audit.engine.cached`): the per-file results still valid -- keyed on
   the file, everything its analysis touched and the value of every summary it read.
4. **Analysis** (:mod:`~resume_audit.engine.analysing`): the rest, by one
   :class:`~resume_audit.engine.analyzer.Analyzer` per configuration group against a lazily loaded
   project, on a per-file time limit, in this process or a process pool
   (:mod:`~resume_audit.engine.pool`: summaries first, then files, chunks claimed by the worker
   that holds them).
5. **Combination** (:mod:`~resume_audit.engine.combine`): one result, duplicates dropped, unused
   suppression comments reported, sorted by location whatever the schedule.

How a scan runs (workers, cache, limits, exclusions) travels as one
:class:`~resume_audit.engine.options.ScanOptions`. Nothing here imports or executes scanned code,
and a warm scan whose every result comes from the cache imports neither LibCST nor the rules nor
``multiprocessing``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

from resume_audit.config.settings import Config
from resume_audit.config.tree import ConfigSource
from resume_audit.engine.options import DEFAULT_MAX_FILE_BYTES, DEFAULT_TIME_LIMIT, ScanOptions, ScanSettings
from resume_audit.engine.replay import ReplayCheck, replay_for
from resume_audit.engine.scope import ScanScope
from resume_audit.findings import ScanResult

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from resume_audit.cache.fileresult import FileResult
    from resume_audit.engine.analyzer import Analyzer
    from resume_audit.engine.loading import index_source, load_module
    from resume_audit.engine.rulesets import active_rule_infos, active_rules, prefilter_of
    from resume_audit.engine.stages import Stages

#: what other packages import from here, and the module each lives in (imported on first use, as
#: the stages are: a scan answered by its replay record defines none of their classes)
_ELSEWHERE = {
    "Analyzer": "resume_audit.engine.analyzer",
    "FileResult": "resume_audit.cache.fileresult",
    "index_source": "resume_audit.engine.loading",
    "load_module": "resume_audit.engine.loading",
    "active_rule_infos": "resume_audit.engine.rulesets",
    "active_rules": "resume_audit.engine.rulesets",
    "prefilter_of": "resume_audit.engine.rulesets",
}

__all__ = [
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_TIME_LIMIT",
    "ScanOptions",
    "ScanSettings",
    "run_stages",
    "scan",
    # (from _ELSEWHERE)
    "Analyzer",
    "FileResult",
    "index_source",
    "load_module",
    "active_rule_infos",
    "active_rules",
    "prefilter_of",
]


def __getattr__(name: str) -> object:
    module = _ELSEWHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


@contextlib.contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Run a scan with the cyclic garbage collector off, as it was before afterwards.

    A scan builds hundreds of thousands of objects (syntax trees, indexes) that live until it
    ends: every automatic full collection walks them all again and finds nothing to free, 8-10 %
    of a cold scan of 5,000 files. Reference counting still frees everything outside a cycle
    (peak memory 177 -> 180 MB on that tree); what is left in cycles is collected once, after
    the scan. Forked pool workers inherit the setting."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@_cyclic_gc_paused()
def scan(
    paths: Sequence[Path],
    config: Config | ConfigSource,
    root: Path,
    options: ScanOptions | None = None,
    **settings: Unpack[ScanSettings],
) -> ScanResult:
    """Scan ``paths`` and return findings and notifications (never raises for bad files).

    ``config``: one configuration for every file, or a source giving each folder its own
    (:class:`~resume_audit.config.tree.ConfigTree`). ``root``: what reported paths are relative to.
    ``options``: how to scan; ``settings``: fields of it to change (``scan(..., jobs=1)``).
    """
    options = dataclasses.replace(options or ScanOptions(), **settings)
    scope = ScanScope.of(paths, config, root, options.repo)
    replay = replay_for(scope, options)
    check = replay.check() if replay is not None else ReplayCheck()
    if check.result is not None:  # nothing changed since the last scan
        return check.result
    stages = run_stages(scope, options, check, recording=replay is not None)
    result = stages.combined()
    if replay is not None:
        stages.inventory.record(replay, result, complete=all(r.complete for r in stages.results.values()))
    return result


def run_stages(scope: ScanScope, options: ScanOptions, check: ReplayCheck, recording: bool) -> Stages:
    """Stages 1-4 of a scan not answered by its replay record: what combining (stage 5) needs,
    kept together so that a caller holding the project warm between edits
    (:mod:`~resume_audit.engine.live`) starts from exactly the scan's state."""
    # the stages, imported here: a scan answered by its replay record needs none of them
    from resume_audit.engine.analysing import analyse_files
    from resume_audit.engine.cached import ScanCache
    from resume_audit.engine.candidates import select_candidates
    from resume_audit.engine.grouping import GroupAnalyzers
    from resume_audit.engine.inventory import take_inventory
    from resume_audit.engine.stages import Stages
    from resume_audit.engine.workspace import Workspace

    inventory = take_inventory(scope, options, check, recording=recording)
    candidates = select_candidates(inventory, options.max_file_bytes)
    workspace = Workspace.of(inventory, candidates, scope.repo, options)
    cache = ScanCache(scope, options, inventory.groups.all, workspace)
    # built on first need: checking a cached result's summary dependencies asks the group's project
    # (which reads the stored summaries, and parses only modules whose summaries are stale)
    analyzers = GroupAnalyzers(
        inventory.groups.all, lambda group: workspace.analyzer(group, cache.stores.get(group.index))
    )
    results, todo = cache.lookup(candidates.paths, inventory.group_of, analyzers, options)
    analyse_files(todo, results, len(candidates.paths), analyzers, inventory.groups.all, workspace, cache, options)
    inventory.save_table()
    return Stages(scope, inventory, candidates, workspace, cache, analyzers, results)
