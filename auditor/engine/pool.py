"""The analysis in a process pool: two phases, and chunks claimed by the worker that holds them.

* **Phase one, summaries.** The per-module summaries every file's whole-project questions read
  (which functions some checkpointed graph runs as nodes...) are split across the workers and
  handed to all of them: a summary is computed once per scan, not once per worker.
* **Phase two, files.** The files are analysed in chunks; each task is a *claim*
  (:class:`Claim`): the worker that runs it takes the first chunk not yet taken that it
  summarised itself (it holds those files' parsed modules), else the first not yet taken. The
  pool hands tasks to whichever worker is free, and a worker given a chunk another one summarised
  parses its files again -- a third of a 5,000-file scan's analysis went there.

Forked workers (Linux) inherit the scan's read text and word index as they are; spawned ones are
sent the text and index words themselves. The pool's modules (:mod:`resume_audit.engine.processpool`,
``multiprocessing``) are imported when a pool starts, never before: a warm scan does without them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from resume_audit.cache.fileresult import FileResult
from resume_audit.cache.summaries import SummaryStore
from resume_audit.discovery.modulenames import SourceFile
from resume_audit.discovery.repo_root import RepoPaths
from resume_audit.engine.analyzer import Analyzer
from resume_audit.engine.cached import ScanCache
from resume_audit.engine.grouping import Group, GroupAnalyzers
from resume_audit.engine.workspace import Workspace
from resume_audit.reading.sourcebytes import Mentions, SourceBytes

if TYPE_CHECKING:
    from multiprocessing.sharedctypes import SynchronizedArray

#: a task's files: (configuration group, resolved path)
Items = list[tuple[int, Path]]
#: per group, (summary kind, module path) -> value: what the first phase computed
SharedSummaries = dict[int, dict[tuple[str, Path], object]]


@dataclass(frozen=True)
class WorkerSetup:
    """What every pool worker analyses with. Forked workers inherit it as it is -- the scan's
    read text and word index included, so no worker reads the tree again; elsewhere it is
    pickled, and ``mentions`` (its text may be spilled to an open temporary file) is None: each
    worker then searches words in the files it reads from disk."""

    files: Sequence[SourceFile]
    groups: Sequence[Group]
    time_limit: float | None
    hashes: dict[str, str]
    texts: SourceBytes | dict[Path, bytes]
    max_file_bytes: int
    in_scan: frozenset[str]
    repo: RepoPaths
    cache_dir: Path | None
    cache_keys: list[str] | None
    mentions: Mentions | None

    @classmethod
    def of(
        cls,
        workspace: Workspace,
        groups: Sequence[Group],
        cache_dir: Path | None,
        cache_keys: list[str] | None,
        forked: bool,
    ) -> WorkerSetup:
        return cls(
            workspace.files,
            groups,
            workspace.time_limit,
            workspace.hashes,
            workspace.texts if forked else workspace.texts.loaded,
            workspace.max_file_bytes,
            workspace.in_scan,
            workspace.repo,
            cache_dir,
            cache_keys,
            workspace.mentions if forked else None,
        )

    def analyzer(self, group: Group) -> Analyzer:
        """A worker's analyser of ``group``'s files."""
        if isinstance(self.texts, SourceBytes) and self.mentions is not None:
            texts, mentions = self.texts, self.mentions
        else:
            texts = SourceBytes(
                dict(self.texts) if isinstance(self.texts, dict) else dict(self.texts.loaded), self.hashes
            )
            mentions = Mentions(self.files, texts)
        store = (
            SummaryStore(self.cache_dir, self.cache_keys[group.index], self.hashes, mentions)
            if self.cache_dir is not None and self.cache_keys is not None
            else None
        )
        return Analyzer(
            self.files,
            group.config,
            group.rule_ids,
            self.time_limit,
            self.hashes,
            texts,
            self.max_file_bytes,
            mentions,
            in_scan=self.in_scan,
            repo=self.repo,
            summaries=store,
        )


@dataclass(frozen=True)
class Summarised:
    """What a worker's first-phase task computed and kept: (group, kind, module path, value), and
    which worker it was (its process id: it still holds the modules it parsed for them)."""

    values: list[tuple[int, str, Path, object]]
    worker: int


@dataclass(frozen=True)
class Analysed:
    """A worker's second-phase answer: the results, and which files mention each word they
    relied on (the result cache records those; the scan's own process need not search again)."""

    results: list[FileResult]
    mentions: dict[str, list[str]]


@dataclass(frozen=True)
class Chunk:
    """A worker's second-phase task: files to analyse, with every summary the first phase kept."""

    items: Items
    shared: SharedSummaries


@dataclass(frozen=True)
class Claim:
    """A second-phase task that picks its files when a worker runs it: the first chunk not yet
    taken that this worker summarised, else the first not yet taken (what is taken: the pool's
    shared table, ``TAKEN``). As many claims as chunks are sent, so every chunk is analysed once."""

    chunks: list[Items]
    #: per chunk, the process id of the worker that summarised it
    summarised_by: list[int]
    shared: SharedSummaries


#: this worker's analysers (set by :func:`init_worker`; None outside a pool worker)
WORKER: GroupAnalyzers | None = None
#: per second-phase chunk, whether a worker took it (shared by the scan's workers; None: no pool)
TAKEN: SynchronizedArray[int] | None = None


def init_worker(setup: WorkerSetup, taken: SynchronizedArray[int] | None = None) -> None:
    global WORKER, TAKEN
    TAKEN = taken
    WORKER = GroupAnalyzers(setup.groups, setup.analyzer)


def summarise(items: Items) -> Summarised:
    """First phase: the summaries of these files (see :meth:`Analyzer.summarise`)."""
    assert WORKER is not None
    values: list[tuple[int, str, Path, object]] = []
    for group, path in items:
        analyzer = WORKER.of(group)
        complete = analyzer.summarise(path)
        values.extend((group, kind, where, value) for (kind, where), value in analyzer.summaries.kept.items())
        analyzer.summaries.kept.clear()
        if not complete:
            del WORKER.built[group]  # its memos rest on a partial project: the next file starts afresh
    return Summarised(values, os.getpid())


def work(chunk: Chunk) -> Analysed:
    """Second phase: analyse a chunk's files, with the summaries the first phase kept."""
    assert WORKER is not None
    for group, values in chunk.shared.items():
        WORKER.shared.setdefault(group, {}).update(values)
    results: list[FileResult] = []
    mentions: dict[str, list[str]] = {}
    for group, path in chunk.items:
        result = WORKER.analyse(group, path)
        results.append(result)
        mentions.update((word, WORKER.of(group).mentions(word)) for word in result.mention_words)
    return Analysed(results, mentions)


def work_claimed(claim: Claim) -> Analysed:
    """Second phase, for a :class:`Claim`: take a chunk (under the shared table's lock) and analyse it."""
    assert TAKEN is not None
    me = os.getpid()
    with TAKEN.get_lock():
        taken = TAKEN.get_obj()
        free = [i for i in range(len(claim.chunks)) if not taken[i]]
        index = next((i for i in free if claim.summarised_by[i] == me), free[0])
        taken[index] = 1
    return work(Chunk(claim.chunks[index], claim.shared))


def chunks_of(items: Items, workers: int) -> list[Items]:
    """About four chunks per worker: small enough to balance, large enough to keep a group's analyser busy."""
    size = max(1, -(-len(items) // (workers * 4)))
    return [items[i : i + size] for i in range(0, len(items), size)]


def analyse_in_pool(
    todo: Items,
    workspace: Workspace,
    groups: Sequence[Group],
    cache: ScanCache,
    workers: int,
    on_result: Callable[[Path, FileResult], None],
    tell: Callable[[str, int, int | None], None],
) -> None:
    """Analyse ``todo`` in a pool of ``workers`` processes, the two phases in turn; each result is
    handed to ``on_result`` as it arrives."""
    import concurrent.futures

    from resume_audit.engine.processpool import pool_context, stop_pool

    context = pool_context()
    setup = WorkerSetup.of(workspace, groups, cache.directory, cache.keys, forked=context.get_start_method() == "fork")
    chunks = chunks_of(todo, workers)
    taken: SynchronizedArray[int] = context.Array("b", len(chunks))
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=init_worker, initargs=(setup, taken)
    )
    try:
        by_display = {f.display: f.path for f in setup.files}
        # first the per-module summaries every file's whole-project questions read, split
        # across the workers; then the files, each worker handed every summary and analysing
        # the files it summarised (it holds their parsed modules) before any other's
        shared: SharedSummaries = {}
        summarised_by: list[int] = []
        summarised_files = 0
        for items, summarised in zip(chunks, pool.map(summarise, chunks)):
            for index, kind, where, value in summarised.values:
                shared.setdefault(index, {})[(kind, where)] = value
            summarised_by.append(summarised.worker)
            summarised_files += len(items)
            tell("summarising", summarised_files, len(todo))
        claim = Claim(chunks, summarised_by, shared)
        for analysed in pool.map(work_claimed, [claim] * len(chunks)):
            workspace.mentions.remember(analysed.mentions)
            for result in analysed.results:
                on_result(by_display[result.display], result)
    except BaseException:
        # Ctrl-C, SIGTERM (the CLI raises it here), a failure: stop the workers now rather than
        # letting the executor's exit wait for every queued chunk
        stop_pool(pool)
        raise
    pool.shutdown()
