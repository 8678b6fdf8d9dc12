"""Per-module summaries kept between scans, so a warm or one-change scan parses no unchanged module.

One JSON file per (kind, module) in the cache directory, beside the per-file results, valid
while everything the summary rested on is unchanged: the cache key of the configuration group
(tool, rules, configuration, module set...), the content of every module its computation
parsed, the files mentioning each word it searched for, and the value of every other summary
part it read. JSON, never pickle: the cache must never be a way to run code. A damaged or
foreign entry is a miss, never a crash.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from resume_audit.cache.jsonfile import write_json_atomically
from resume_audit.cache.validity import rests_unchanged
from resume_audit.facts.summaries import SELECT, PartsIndex, SummarySource, parts_digest, split_summary_key

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project


@dataclass(frozen=True)
class KeptSummary:
    """A module's summary with what it rested on: the modules parsed (path -> content hash), the
    files mentioning each word searched, the digest of each summary part read."""

    value: Any
    deps: dict[str, str | None]
    words: dict[str, list[str]]
    parts: dict[str, str]

    def holds(self, hashes: dict[str, str], mentions: Callable[[str], list[str]], project: "Project") -> bool:
        """Whether everything it rested on is unchanged (``project`` answers the summary digests)."""
        return rests_unchanged(self.deps, self.words, self.parts, hashes, mentions, project.summary_digest)


class SummaryStore(SummarySource["Project"]):
    """``lookup``/``record`` against ``directory`` for one configuration group (``key``)."""

    def __init__(self, directory: Path, key: str, hashes: dict[str, str], mentions: Callable[[str], list[str]]) -> None:
        self.directory = directory
        self.key = key
        self.hashes = hashes
        self.mentions = mentions
        self.hits = 0
        self.misses = 0

    def _entry(self, kind: str, path: Path) -> Path:
        name = "\x1f".join((self.key, kind, str(path)))
        return (
            self.directory
            / f"s-{hashlib.blake2b(name.encode('utf-8', 'surrogatepass'), digest_size=16).hexdigest()}.json"
        )

    def lookup(self, kind: str, path: Path, project: "Project") -> Any | None:
        entry = self.entry(kind, path)
        try:
            value = entry.value if entry is not None and entry.holds(self.hashes, self.mentions, project) else None
        except (ValueError, TypeError, KeyError, AttributeError):  # a damaged entry: a miss
            value = None
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def entry(self, kind: str, path: Path) -> KeptSummary | None:
        """The stored summary of ``kind`` of the module at ``path`` with what it rested on, valid
        or not (None: none stored, or damaged or foreign)."""
        try:
            data = json.loads(self._entry(kind, path).read_text(encoding="utf-8"))
            if not (
                isinstance(data, dict)
                and data.get("key") == self.key
                and data.get("kind") == kind
                and data.get("path") == str(path)
            ):
                return None
            deps, words, parts = data["deps"], data["mentions"], data["summaries"]
            if not (isinstance(deps, dict) and isinstance(words, dict) and isinstance(parts, dict)):
                return None
            return KeptSummary(data["value"], deps, words, parts)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None

    def record(
        self,
        kind: str,
        path: Path,
        value: Any,
        paths: set[Path],
        words: set[str],
        summaries: dict[str, str],
        project: "Project",
    ) -> None:
        deps = {str(p): self.hashes.get(str(p)) for p in sorted(paths)}
        if any(h is None for h in deps.values()):
            return  # rests on a file outside the scan: never trusted later
        data = {
            "key": self.key,
            "kind": kind,
            "path": str(path),
            "deps": deps,
            "mentions": {w: self.mentions(w) for w in sorted(words)},
            "summaries": summaries,
            "value": value,
        }
        write_json_atomically(self._entry(kind, path), data)


class StaleSummary(Exception):
    """A summary part cannot be had from the store alone: the analysis must compute it."""


class StoredDigests:
    """The digest of a summary part (:meth:`Project.summary_digest`'s answer) from stored
    summaries alone, so a warm scan checks its cached results without importing LibCST or the
    rules. Raises :class:`StaleSummary` when a summary it needs is missing or no longer valid;
    the caller then asks the analysis, which computes the same value the same way."""

    def __init__(self, store: SummaryStore, files_mentioning: Callable[[str], list[str]]) -> None:
        self.store = store
        self.files_mentioning = files_mentioning
        self._digests: dict[str, str | None] = {}
        #: each module's stored summary is read and checked once per scan, whatever the part asked
        self._values: dict[tuple[str, Path], Any] = {}
        #: (kind, words) with a stale module: every select of them goes to the analysis
        self._stale_questions: set[tuple[str, tuple[str, ...]]] = set()
        #: (kind, words) -> the stored summaries of the modules mentioning them, by select
        self._indexes: dict[tuple[str, tuple[str, ...]], PartsIndex] = {}

    def summary_digest(self, key: str) -> str | None:
        if key in self._digests:
            return self._digests[key]
        kind, words, select = split_summary_key(key)
        if kind not in SELECT:
            raise StaleSummary(key)  # not a kind this version knows: the analysis decides
        if (kind, tuple(words)) in self._stale_questions:
            raise StaleSummary(key)
        index = self._indexes.get((kind, tuple(words)))
        if index is None:
            values = []
            for path in sorted({Path(p) for word in words for p in self.files_mentioning(word)}):
                # a stored summary is checked against the digests of the parts it read: this object
                # answers those too (it stands in for the project the store is normally given)
                if (kind, path) not in self._values:
                    self._values[kind, path] = self.store.lookup(kind, path, self)  # type: ignore[arg-type]
                value = self._values[kind, path]
                if value is None:
                    self._stale_questions.add((kind, tuple(words)))
                    raise StaleSummary(key)
                values.append((path, value))
            # every cached result asks the same question with its own select: indexed once
            index = self._indexes[kind, tuple(words)] = PartsIndex(kind, values)
        digest = self._digests[key] = parts_digest(index.parts(select))
        return digest
