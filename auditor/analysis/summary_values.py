"""The project's per-module summaries: computed, read back from the store, and charged as values.

A project-wide question ("which functions does some checkpointed graph run as nodes?") is
answered from every mentioning module's summary (:mod:`resume_audit.facts.summaries`), and a
file's cached result depends on the *value* of those summaries, not on the bytes behind them
(early cut-off). This module is the project's side of that: it gathers the summaries of the
modules a question names, computes a missing one with its dependencies recorded apart from
the file that asked, and charges the question's digest to the ledger.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Generic, Sequence, TypeVar

from resume_audit.analysis.memo import Ledger
from resume_audit.analysis.modules import ModuleIndex
from resume_audit.discovery.modulenames import SourceFile
from resume_audit.facts.summaries import (
    SUMMARY_KINDS,
    PartsIndex,
    SummarySource,
    parts_digest,
    split_summary_key,
    summary_key,
)

#: what a kind's computation and the store are handed: the project
Host = TypeVar("Host")


class ProjectSummaries(Generic[Host]):
    """Per-module summaries of one scan. ``host`` is what a kind's computation and the store are
    handed (the project, which answers :meth:`digest` to the store as ``summary_digest``)."""

    def __init__(self, ledger: Ledger, index: ModuleIndex, source: SummarySource[Host] | None, host: Host) -> None:
        self._ledger = ledger
        self._index = index
        #: per-module summaries: computed here, or read back from a previous scan's store
        self._source: SummarySource[Host] = source if source is not None else SummarySource()
        self._host = host
        self._values: dict[tuple[str, Path], Any] = {}
        self._digests: dict[str, str | None] = {}
        #: (kind, words) -> the modules' summaries indexed by select, and the modules by path
        self._parts_indexes: dict[tuple[str, tuple[str, ...]], tuple[PartsIndex, dict[Path, SourceFile]]] = {}
        #: summaries being computed right now (their memo holds a placeholder meanwhile)
        self._computing = 0

    def over(self, kind: str, words: Sequence[str], select: str = "") -> list[tuple[SourceFile, Any]]:
        """The part ``select`` of the ``kind`` summary of every file whose text holds one of
        ``words`` (by path) -- e.g. what every langgraph module makes checkpointed -- charged as
        one *value* (see :mod:`resume_audit.facts.summaries`): the analysis depends on what the
        summaries say, not on the bytes they were computed from, so an edit of a module that
        leaves its summary unchanged invalidates no cached result that only asked this. One
        dependency for the whole question, not one per module: a result's cache entry stays small
        however many modules answer."""
        parts = self._parts_over(kind, words, select)
        self._ledger.charge(
            frozenset(),
            frozenset(),
            {summary_key(kind, words, select): parts_digest((e.path, part) for e, part in parts)},
        )
        return parts

    def _parts_over(self, kind: str, words: Sequence[str], select: str) -> list[tuple[SourceFile, Any]]:
        """The non-empty parts ``select`` of the ``kind`` summaries of the files mentioning
        ``words``, in path order. The modules' values are gathered once per scan and question
        (every file asks the same one with its own select), unless a summary of the kind is being
        computed meanwhile: its placeholder must not be kept as its value."""
        key = (kind, tuple(words))
        built = self._parts_indexes.get(key)
        if built is not None:
            index, entries = built
            self._ledger.charge(frozenset(), frozenset(words))  # as files_mentioning charges a first asker
        else:
            entries = {}
            self._index.search_together(words)
            for word in words:
                for entry in self._index.files_mentioning(word):
                    entries.setdefault(entry.path, entry)
            index = PartsIndex(kind, [(p, self.value(kind, e)) for p, e in entries.items()])
            if not self._computing:  # (the values it just computed are final by now)
                self._parts_indexes[key] = (index, entries)
        return [(entries[p], part) for p, part in index.parts(select)]

    def digest(self, key: str) -> str | None:
        """The current digest of the summaries' value ``key`` names (None: an unknown kind)."""
        if key in self._digests:
            return self._digests[key]
        kind, words, select = split_summary_key(key)
        digest: str | None = None
        if kind in SUMMARY_KINDS:
            digest = parts_digest((e.path, part) for e, part in self._parts_over(kind, words, select))
        self._digests[key] = digest  # summaries are fixed for the scan: every cached result asks the same
        return digest

    def known_digest(self, key: str) -> tuple[str | None] | None:
        """``(digest,)`` when :meth:`digest` already answered ``key`` this scan, else None."""
        return (self._digests[key],) if key in self._digests else None

    def value(self, kind: str, entry: SourceFile) -> Any:
        """Module ``entry``'s whole summary of ``kind``: from this scan's memo, else from the
        store (valid while every module and word search it rested on is unchanged), else
        computed -- its dependencies recorded apart (:meth:`Ledger.apart`), so the modules the
        computation parsed are charged to the summary, never to the file whose analysis asked."""
        memo_key = (kind, entry.path)
        if memo_key in self._values:
            return self._values[memo_key]
        stored = self._source.lookup(kind, entry.path, self._host)
        if stored is not None:
            self._values[memo_key] = stored
            return stored
        summary = SUMMARY_KINDS[kind]
        self._values[memo_key] = summary.empty  # a cycle sees nothing new
        self._computing += 1
        try:
            with self._ledger.apart() as deps:
                module = self._index.load(entry)
                value = summary.compute(self._host, module) if module is not None else summary.empty
        except BaseException:
            self._values.pop(memo_key, None)
            raise
        finally:
            self._computing -= 1
        self._values[memo_key] = value
        self._source.record(kind, entry.path, value, deps.paths, deps.words, deps.summaries, self._host)
        return value
