"""Per-module summaries: the project-wide facts one module contributes, as plain JSON values.

Some questions are about the whole project -- which functions some checkpointed graph runs as
nodes, which modules call a function named ``change_answer`` -- and answering them parses every
module that could contribute. If a file's cached result depended on the *bytes* of all those
modules, editing one would invalidate every result that asked. Instead each module's
contribution is a summary (a JSON value, computed from that module and what its analysis
reached), and a result depends on the summary's *value*: an edit that leaves it unchanged (a
change inside a node's body that is still the same node) invalidates nothing else (early
cut-off). Summaries are stored between scans (:mod:`resume_audit.cache.summaries`),
so checking that a value is unchanged parses only the modules that changed.

A kind of summary is registered here by the analysis that owns it; the project
(:class:`~resume_audit.analysis.summary_values.ProjectSummaries`) computes, stores and charges them.
This module knows nothing of the project: what a kind's computation is handed is the
registering analysis's business (:class:`SummaryKind` is generic in it).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterable, Sequence, TypeVar

if TYPE_CHECKING:
    from resume_audit.facts.model import ModuleFacts

#: what a kind's computation, and a store checking a stored summary, are handed besides the
#: module: the project, for the analyses here (this module does not need to know it)
P = TypeVar("P")


def _whole(value: Any, select: str) -> Any:
    return value


def _holds(value: Any, name: str) -> Any:
    return name in value


def _indexes_at(value: Any, path: str) -> Any:
    return [index for where, index in value if where == path]


#: how each kind's part is picked (see :class:`SummaryKind`), declared here rather than with the
#: computation: a warm scan checks stored summaries without importing the analysis that computes them
SELECT: dict[str, Callable[[Any, str], Any]] = {
    "called-names": _holds,  # does the module call this name
    "langgraph-claims": _whole,
    "RA601-found": _indexes_at,  # the module's savers that land in this file
}


@dataclass(frozen=True)
class SummaryKind(Generic[P]):
    """One kind of per-module summary.

    ``compute`` must return JSON data made of lists, strings, numbers and booleans (never
    tuples or None), so a value read back from the store equals the one computed.
    Its ``select`` (in :data:`SELECT`) picks the part a question needs (``""``: all of it): a
    result depends only on that part, so a change elsewhere in the summary does not invalidate it."""

    name: str
    compute: Callable[[P, "ModuleFacts"], Any]
    empty: Any


#: every registered kind, by name
SUMMARY_KINDS: dict[str, SummaryKind[Any]] = {}


def register(kind: SummaryKind[P]) -> SummaryKind[P]:
    if kind.name not in SELECT:
        raise ValueError(f"summary kind {kind.name!r}: declare how its parts are picked in SELECT")
    SUMMARY_KINDS[kind.name] = kind
    return kind


def select_part(kind: str, value: Any, select: str) -> Any:
    return SELECT[kind](value, select) if select else value


def value_digest(value: Any) -> str:
    """A digest of a JSON value (tuples and lists alike)."""
    return _text_digest(json.dumps(value, sort_keys=True, separators=(",", ":")))


@lru_cache(maxsize=4096)
def _text_digest(text: str) -> str:
    """(memoised: most parts a result reads are the same few small values, ``[]`` and ``false``)"""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _by_place(value: Any) -> Iterable[tuple[str, Any]]:
    out: dict[str, list[Any]] = {}
    for where, index in value:
        out.setdefault(where, []).append(index)
    return out.items()


#: kinds whose part depends on the select (a file, a name): ``(select, part)`` for every select
#: whose part is non-empty, so a question's parts are looked up rather than picked from every
#: module once per select -- a scan asks one such question per file, which was files x modules
INVERT: dict[str, Callable[[Any], Iterable[tuple[str, Any]]]] = {
    "called-names": lambda value: ((name, True) for name in dict.fromkeys(value)),
    "RA601-found": _by_place,
}


class PartsIndex:
    """The non-empty parts of one kind's summaries of some modules, by select.

    An empty part (no claim, no saver landing here, the name not called) says nothing a
    question's answer uses, so questions and their digests are over the non-empty parts only:
    the project's analysis and the stored-summary check both build their answers here."""

    def __init__(self, kind: str, values: Sequence[tuple[Path, Any]]) -> None:
        self.kind = kind
        self.values = sorted(values, key=lambda item: item[0])
        self._by_select: dict[str, list[tuple[Path, Any]]] | None = None
        self._picked: dict[str, list[tuple[Path, Any]]] = {}

    def parts(self, select: str) -> list[tuple[Path, Any]]:
        invert = INVERT.get(self.kind)
        if invert is not None and select:
            if self._by_select is None:
                self._by_select = {}
                for path, value in self.values:
                    for key, part in invert(value):
                        self._by_select.setdefault(key, []).append((path, part))
            return self._by_select.get(select, [])
        if select not in self._picked:
            self._picked[select] = [
                (path, part) for path, value in self.values for part in (select_part(self.kind, value, select),) if part
            ]
        return self._picked[select]


def parts_digest(parts: Iterable[tuple[Path, Any]]) -> str:
    """The digest a cached result records for one question: every answering module's path and its
    (non-empty: :class:`PartsIndex`) part, in path order. The analysis and the stored-summary
    check (a warm scan) both call this, so the two cannot disagree on a value they agree on."""
    return value_digest([[str(path), part] for path, part in sorted(parts, key=lambda item: item[0])])


_SEP = "\x1f"
_WORD_SEP = "\x1e"


def summary_key(kind: str, words: Sequence[str], select: str) -> str:
    """How a cache entry names the summaries it depended on: those of ``kind`` of the files
    mentioning ``words``, part ``select``."""
    return _SEP.join((kind, _WORD_SEP.join(words), select))


def split_summary_key(key: str) -> tuple[str, list[str], str]:
    """``(kind, words, select)``."""
    kind, words, select = key.split(_SEP, 2)
    return kind, words.split(_WORD_SEP), select


class SummarySource(Generic[P]):
    """Where earlier scans' summaries come from: nowhere (every summary is computed). The
    persisted store (:class:`~resume_audit.cache.summaries.SummaryStore`) overrides both; it is
    handed the project, which answers the digest of every summary value a stored one rested on."""

    def lookup(self, kind: str, path: Path, project: P) -> Any | None:
        """A stored summary still valid for the scan, or None."""
        return None

    def record(
        self,
        kind: str,
        path: Path,
        value: Any,
        paths: set[Path],
        words: set[str],
        summaries: dict[str, str],
        project: P,
    ) -> None:
        """Keep a computed summary with what it depended on."""
