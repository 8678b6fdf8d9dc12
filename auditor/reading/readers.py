"""Reading the scan's files: bytes, content hash, decodability and the pre-filter's verdict.

Every file of a cold scan is read, hashed, checked for decodability and pre-filtered before
anything is analysed: on a tree of 20,000 ordinary modules most of a cold scan's time, all of it
in one process while the other cores wait. With many files to read (and worker processes
forked, so the pre-filter is inherited rather than sent), the files are read in chunks by a
process pool, a few chunks ahead of the scan taking them in discovery order: the scan sees the
same bytes, hashes and verdicts in the same order as from reading them itself, and holds no more
text at once than a few chunks (its corpus keeps its own memory bound). Readers also answer, for
their chunk, which files hold each of the words every scan searches the whole tree for
(:mod:`resume_audit.reading.treewords`), while they hold its bytes.
"""

from __future__ import annotations

import collections
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Generator, Iterator, Sequence

from resume_audit.findings import Notification
from resume_audit.reading.decoding import decode_source
from resume_audit.reading.prefilter import NO_MATCH, FileMatch, Prefilter
from resume_audit.reading.sourcebytes import content_hash, files_holding, read_regular

#: Fewer files to read than this are read in the scan's own process: starting readers costs more.
PARALLEL_READ_THRESHOLD = 1000
#: files per reader task, and tasks in flight per reader (what bounds the text held at once)
CHUNK_FILES = 128
AHEAD_PER_WORKER = 2


@dataclass(frozen=True)
class FileRead:
    """One file as read: its bytes and the ``stat`` taken before reading (both None when it
    could not be read: ``problem`` says why), its content hash, the problem that keeps it from
    being analysed (unreadable, undecodable) and what the pre-filter found in it."""

    raw: bytes | None
    info: os.stat_result | None
    digest: str
    problem: Notification | None
    match: FileMatch
    #: which of the words asked of the reader the file holds; None: none were asked (read in the
    #: scan's own process, which searches its corpus instead)
    words: frozenset[str] | None = None

    def __reduce__(self) -> tuple[type["FileRead"], tuple[object, ...]]:
        # a reader sends every file it read back pickled: by its fields, as the constructor takes
        # them, rather than as a dataclass's state (5,000 files: 0.13 -> 0.08 s to pickle and unpickle)
        return (type(self), tuple(getattr(self, f.name) for f in dataclasses.fields(self)))


def read_file(path: Path, resolved: Path, display: str, prefilter: Prefilter) -> FileRead:
    return _file_read(read_regular(path, display), resolved, display, prefilter)


def _file_read(
    read: tuple[bytes, os.stat_result] | Notification,
    resolved: Path,
    display: str,
    prefilter: Prefilter,
    imported: frozenset[str] | None = None,
    words: frozenset[str] | None = None,
) -> FileRead:
    """A :class:`FileRead` of what :func:`~resume_audit.reading.sourcebytes.read_regular` returned
    (``imported``, ``words``: see :meth:`Prefilter.match` and :attr:`FileRead.words`)."""
    if isinstance(read, Notification):
        return FileRead(None, None, "", read, NO_MATCH, words)
    raw, info = read
    decoded = decode_source(raw, resolved, display)  # a bad file is reported whatever it holds
    problem = decoded if isinstance(decoded, Notification) else None
    match = prefilter.match(raw, imported) if problem is None else NO_MATCH
    return FileRead(raw, info, content_hash(raw), problem, match, words)


#: the pre-filter of a reader process, and the words it answers per file (set by :func:`_init_reader`)
_PREFILTER: Prefilter | None = None
_WORDS: tuple[str, ...] = ()


def _init_reader(prefilter: Prefilter, words: tuple[str, ...]) -> None:
    global _PREFILTER, _WORDS
    _PREFILTER, _WORDS = prefilter, words


def _read_chunk(items: list[tuple[Path, Path, str]]) -> list[FileRead]:
    """The chunk's files read, and searched together for the words asked of the readers and the
    pre-filter's framework imports (found with the other import phrases, by one pass over each
    ``import`` and ``from`` of the chunk: five fewer passes over every file)."""
    assert _PREFILTER is not None
    reads = [read_regular(path, display) for path, _, display in items]
    phrases = frozenset(_PREFILTER.import_phrases)
    asked = frozenset(_WORDS)
    held = files_holding(
        [None if isinstance(read, Notification) else read[0] for read in reads],
        tuple(dict.fromkeys((*_WORDS, *_PREFILTER.import_phrases))),
    )
    return [
        _file_read(read, resolved, display, _PREFILTER, found & phrases, found & asked if _WORDS else None)
        for read, (_, resolved, display), found in zip(reads, items, held)
    ]


def read_files(
    items: Sequence[tuple[Path, Path, str]], prefilter: Prefilter, workers: int, words: Sequence[str] = ()
) -> Generator[FileRead, None, None]:
    """:func:`read_file` of each ``(path, resolved path, display path)``, in order: in this
    process, or by ``workers`` forked reader processes when there are enough files -- which also
    say which of ``words`` each file holds (:attr:`FileRead.words`)."""
    if workers > 1 and len(items) >= PARALLEL_READ_THRESHOLD:
        from resume_audit.engine.processpool import pool_context

        # only forked readers: a spawned one would be sent the pre-filter and import the package first
        if pool_context().get_start_method() == "fork":
            yield from _read_in_pool(items, prefilter, workers, tuple(words))
            return
    for path, resolved, display in items:
        yield read_file(path, resolved, display, prefilter)


def _read_in_pool(
    items: Sequence[tuple[Path, Path, str]], prefilter: Prefilter, workers: int, words: tuple[str, ...]
) -> Generator[FileRead, None, None]:
    import concurrent.futures

    from resume_audit.engine.processpool import pool_context, stop_pool, widen_result_pipe

    chunks: Iterator[list[tuple[Path, Path, str]]] = (
        list(items[i : i + CHUNK_FILES]) for i in range(0, len(items), CHUNK_FILES)
    )
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=pool_context(), initializer=_init_reader, initargs=(prefilter, words)
    )
    widen_result_pipe(pool)
    pending: collections.deque[concurrent.futures.Future[list[FileRead]]] = collections.deque()
    try:
        for chunk in chunks:
            pending.append(pool.submit(_read_chunk, chunk))
            if len(pending) >= workers * AHEAD_PER_WORKER:
                break
        while pending:
            done = pending.popleft().result()
            following = next(chunks, None)
            if following is not None:
                pending.append(pool.submit(_read_chunk, following))
            if not pending:
                # every chunk is in: the readers (and the pool's thread) are gone before the scan
                # takes the last files -- it forks its analysis workers next, and never asks again
                pool.shutdown()
            yield from done
    except BaseException:
        # Ctrl-C, SIGTERM, the scan stopping early (the generator closed): no queued chunk is waited for
        stop_pool(pool)
        raise
