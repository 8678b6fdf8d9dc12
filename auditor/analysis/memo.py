"""Memoised answers, and the dependencies each one rests on: the per-file cache's bookkeeping.

A scan answers the same project-wide question for many files ("does this helper reach a
sink?"), so answers are kept for the scan. But the per-file cache must know what every file's
findings rest on: the modules parsed, the project-wide word searches, the per-module summary
values read. An answer computed while analysing ``a1.py`` and reused for ``a2.py`` is charged
to both, or an edit of the helper module would leave ``a2.py``'s stale finding in the cache.
The :class:`Ledger` keeps the answers with their dependencies and charges them to the file
under analysis and to every computation running around the one asked.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any, Callable, Hashable, Iterator, TypeVar

T = TypeVar("T")

#: :meth:`Ledger.cached`'s "no placeholder" marker
COMPUTING: Any = object()


@dataclass
class Dependencies:
    """What one computation (or one file's analysis) has depended on so far."""

    paths: set[Path] = field(default_factory=set)
    words: set[str] = field(default_factory=set)
    #: summary key -> digest of the value seen (see :mod:`resume_audit.facts.summaries`)
    summaries: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Memoised:
    """A memoised answer with the modules, word searches and summary values it depended on."""

    value: Any
    paths: frozenset[Path]
    words: frozenset[str]
    summaries: frozenset[tuple[str, str]] = frozenset()


class Ledger:
    """Memoised answers for one scan, and the dependencies of the file under analysis."""

    def __init__(self) -> None:
        #: resolved paths of the modules an analysis looked into (cache dependencies)
        self.touched: set[Path] = set()
        #: words whose project-wide mentions an analysis relied on (cache dependencies)
        self.mention_words: set[str] = set()
        #: summary key -> digest of the value an analysis relied on (cache dependencies that stay
        #: valid while the value does, whatever happened to the bytes behind it)
        self.summary_deps: dict[str, str] = {}
        self._memos: dict[str, dict[Hashable, _Memoised]] = {}
        #: the dependencies of the memoised computations now running, innermost last
        self._frames: list[Dependencies] = []

    def begin_file(self) -> None:
        """Start recording one file's dependencies afresh (the engine calls it per analysed file)."""
        self.touched = set()
        self.mention_words = set()
        self.summary_deps = {}
        self._frames = []

    def cached(self, namespace: str, key: Hashable, compute: Callable[[], T], *, in_progress: Any = COMPUTING) -> T:
        """``compute()``, once per project (one scan) and key -- with what it depended on.

        Analyses that answer the same question for many files keep the answer here (never in
        module globals). The modules the computation loaded and the project-wide word searches
        it relied on are recorded with the answer and charged again to every later file that
        reuses it: the per-file cache must know that ``a2.py``'s finding rests on ``h2.py``
        even when ``a1.py``'s analysis did the work (a stale finding otherwise survives an
        edit of ``h2.py``). ``in_progress`` is what a recursive question about the same key
        sees while the answer is computed (a cycle contributes nothing new).
        """
        memo = self._memos.setdefault(namespace, {})
        found = memo.get(key)
        if found is not None:
            if found.paths or found.words or found.summaries:
                self.charge(found.paths, found.words, dict(found.summaries))
            value: T = found.value
            return value
        if in_progress is not COMPUTING:
            memo[key] = _Memoised(in_progress, frozenset(), frozenset())
        frame = Dependencies()
        self._frames.append(frame)
        try:
            value = compute()
        except BaseException:
            memo.pop(key, None)  # a time limit mid-way must not leave the placeholder as the answer
            raise
        finally:
            # frames nest (a computation ends before the one that started it), so the innermost
            # is this one; found by identity -- two frames with equal contents are different frames
            while self._frames and self._frames.pop() is not frame:
                pass
        memo[key] = _Memoised(value, frozenset(frame.paths), frozenset(frame.words), frozenset(frame.summaries.items()))
        if frame.paths or frame.words or frame.summaries:
            self.charge(frame.paths, frame.words, frame.summaries)
        return value

    def charge(
        self, paths: AbstractSet[Path], words: AbstractSet[str], summaries: dict[str, str] | None = None
    ) -> None:
        """Record dependencies for the file under analysis and the computation now running."""
        self.touched.update(paths)
        self.mention_words.update(words)
        if summaries:
            self.summary_deps.update(summaries)
        if self._frames:
            top = self._frames[-1]
            top.paths.update(paths)
            top.words.update(words)
            if summaries:
                top.summaries.update(summaries)

    @contextmanager
    def apart(self) -> Iterator[Dependencies]:
        """Record a computation's dependencies on their own, charged to no file and no running
        computation: a per-module summary rests on what *its* computation parsed, never on the
        file whose analysis happened to ask first. The dependencies yielded fill up while the
        block runs; the file's own recording resumes after it."""
        saved = (self.touched, self.mention_words, self.summary_deps, self._frames)
        deps = Dependencies()
        self.touched, self.mention_words, self.summary_deps, self._frames = deps.paths, deps.words, deps.summaries, []
        try:
            yield deps
        finally:
            self.touched, self.mention_words, self.summary_deps, self._frames = saved
