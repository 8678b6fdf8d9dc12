"""Stage 4: analyse the candidate files the cache could not answer -- in this process, or by a
process pool (:mod:`resume_audit.engine.pool`) when there are enough of them to pay for one.

Each result is kept in the cache as it arrives (a scan killed half-way keeps what it did); the
output order is decided later, by location (:mod:`resume_audit.engine.combine`), whatever the
schedule.
"""

from __future__ import annotations

from pathlib import Path

from resume_audit.cache.fileresult import FileResult
from resume_audit.engine.cached import ScanCache
from resume_audit.engine.grouping import Group, GroupAnalyzers
from resume_audit.engine.options import ScanOptions
from resume_audit.engine.workspace import Workspace

#: Below this many files to analyse a pool costs more than it saves: starting a worker, and its
#: import of the analysis, is a third of a second. Measured on two cores: no faster at 5 to 10
#: agent files, 7 % faster at 20, 35 % at 80.
PARALLEL_THRESHOLD = 16


def analyse_files(
    todo: list[tuple[int, Path]],
    results: dict[Path, FileResult],
    candidates: int,
    analyzers: GroupAnalyzers,
    groups: list[Group],
    workspace: Workspace,
    cache: ScanCache,
    options: ScanOptions,
) -> None:
    """Analyse every ``(group, path)`` of ``todo`` into ``results`` (which holds the cached ones:
    progress counts them, out of ``candidates``)."""

    def arrived(path: Path, result: FileResult, group: int) -> None:
        results[path] = result
        options.tell("analysing", len(results), candidates)
        cache.put(group, path, result)

    if options.workers > 1 and len(todo) >= PARALLEL_THRESHOLD:
        from resume_audit.engine.pool import analyse_in_pool  # (its classes: only when a pool runs)

        group_of = dict((path, group) for group, path in todo)
        analyse_in_pool(
            todo,
            workspace,
            groups,
            cache,
            options.workers,
            lambda path, result: arrived(path, result, group_of[path]),
            options.tell,
        )
    else:
        for group, path in todo:
            arrived(path, analyzers.analyse(group, path), group)
