"""What the last scan learned about every file, so an unchanged file is only ``stat``-ed.

A warm scan used to read, hash and pre-filter every file of the tree and search all
their text again for each word the cached results depended on ("which files mention
``charge``"): on a 5,000-file tree that was most of a warm run. The table keeps, per
file, what those steps produced -- the content hash, what the pre-filter saw, a
decode failure, and which of the searched-for words the file contains -- valid while
the file's ``stat`` signature (size, mtime, ctime, inode, device) is unchanged, as
ruff and mypy do. A file changed within the last two seconds is never trusted on its
signature (its timestamp may not have ticked since: git's "racily clean" problem);
it is read and hashed again next time.

Word membership is kept only for words a cached result depended on in the last run;
a word seen for the first time is answered by a search of every file's text, and
learned. JSON, as the result cache: the table must never be a way to run code.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from resume_audit.cache.jsonfile import write_json_atomically
from resume_audit.findings import Notification, NotificationKind, Severity
from resume_audit.reading.prefilter import NO_MATCH, FileMatch

TABLE_FORMAT = 1
#: a file modified this recently is re-read next time whatever its signature says
RACY_SECONDS = 2.0

Signature = tuple[int, int, int, int, int]


def signature(info: os.stat_result) -> Signature:
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


def is_racy(sig: Signature, started: float) -> bool:
    """Whether ``sig`` (its mtime or ctime) changed within ``RACY_SECONDS`` before ``started``: a
    later change in the same timestamp tick could leave it as it is, so it is not to be trusted."""
    threshold = started - RACY_SECONDS
    return sig[1] / 1e9 > threshold or sig[2] / 1e9 > threshold


def stat_signature(path: str) -> Signature | None:
    """The signature of ``path`` (symlinks followed), None when there is nothing there to stat."""
    try:
        return signature(os.stat(path))
    except (OSError, ValueError):
        return None


@dataclass
class FileState:
    """One file as the scan last saw it."""

    signature: Signature | None  # None: not to be trusted (modified too recently)
    hash: str
    size: int
    match: FileMatch
    #: the decode failure (kind and message; the path is the display path of the day)
    problem: tuple[str, str] | None
    #: the tracked words the file's text contains
    words: set[str]

    def notification(self, display: str) -> Notification | None:
        if self.problem is None:
            return None
        return Notification(NotificationKind(self.problem[0]), self.problem[1], display, level=Severity.WARNING)


class FileTable:
    """Per-file facts of the last scan, keyed by resolved path (as str)."""

    def __init__(self, directory: Path | None, key_parts: Iterable[str]) -> None:
        key = hashlib.blake2b(
            "\x1f".join([str(TABLE_FORMAT), *key_parts]).encode("utf-8", "surrogatepass"), digest_size=12
        ).hexdigest()
        self.path = directory / f"filetable-{key}.json" if directory is not None else None
        self.states: dict[str, FileState] = {}
        #: words whose membership every state records
        self.tracked: set[str] = set()
        self.started = time.time()
        self._asked: set[str] = set()
        self._index: dict[str, list[str]] | None = None
        #: something to write back: a file read, a word learned, a file or word no longer there
        self._dirty = False
        #: the rows as loaded, for the files whose state has not changed since, and the word list
        #: their word ids index: saving an unchanged file's row writes it back as it was read
        self._rows: dict[str, list[Any]] = {}
        self._row_words: list[str] = []
        if self.path is not None:
            self._load()

    def _load(self) -> None:
        assert self.path is not None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("format") != TABLE_FORMAT:
                return
            words: list[str] = [str(w) for w in data["words"]]
            states: dict[str, FileState] = {}
            rows: dict[str, list[Any]] = data["files"]
            for path, (sig, digest, size, frameworks, triggers, problem, word_ids) in rows.items():
                states[str(path)] = FileState(
                    tuple(int(x) for x in sig) if sig is not None else None,  # type: ignore[arg-type]
                    str(digest),
                    int(size),
                    # most files of a big tree match nothing: one shared empty match for them
                    FileMatch(frozenset(map(str, frameworks)), frozenset(int(t) for t in triggers))
                    if frameworks or triggers
                    else NO_MATCH,
                    (str(problem[0]), str(problem[1])) if problem else None,
                    {words[i] for i in word_ids},
                )
        except (OSError, ValueError, TypeError, KeyError, IndexError):  # unreadable or damaged: start afresh
            return
        self.states, self.tracked = states, set(words)
        self._rows, self._row_words = rows, words

    # -- files ----------------------------------------------------------------------------
    def known(self, path: str, info: os.stat_result) -> FileState | None:
        """The state of ``path`` if its signature is unchanged since it was recorded."""
        state = self.states.get(path)
        if state is None or state.signature is None or state.signature != signature(info):
            return None
        return state

    def record(
        self, path: str, info: os.stat_result, digest: str, raw: bytes, match: FileMatch, problem: Notification | None
    ) -> FileState:
        """What this scan read of ``path`` (``info``: the signature taken before reading)."""
        sig = signature(info)
        state = FileState(
            None if is_racy(sig, self.started) else sig,
            digest,
            len(raw),
            match,
            (problem.kind.value, problem.message) if problem is not None else None,
            {w for w in self.tracked if w.encode() in raw},
        )
        self.states[path] = state
        self._rows.pop(path, None)
        self._index = None
        self._dirty = True
        return state

    # -- word membership --------------------------------------------------------------------
    def mentions(self, word: str, paths: Iterable[str]) -> list[str] | None:
        """Of ``paths``, those whose text contains ``word`` -- None when the word is not tracked."""
        if word not in self.tracked:
            return None
        self._asked.add(word)
        if self._index is None:  # inverted once: a warm run asks hundreds of words
            self._index = {}
            for p, state in self.states.items():
                for w in state.words:
                    self._index.setdefault(w, []).append(p)
        present = paths if isinstance(paths, (set, frozenset, dict)) else set(paths)
        return sorted(p for p in self._index.get(word, ()) if p in present)

    def learn(self, word: str, found: Iterable[str], paths: Iterable[str]) -> None:
        """A search of every file (``paths``) found ``word`` in ``found``: remember it per file."""
        hits = set(found)
        for p in paths:
            state = self.states.get(p)
            if state is None:
                continue
            if p in hits:
                state.words.add(word)
            else:
                state.words.discard(word)
        self.tracked.add(word)
        self._asked.add(word)
        self._index = None
        self._dirty = True
        self._rows = {}  # every file's word set may have changed

    # -- saving --------------------------------------------------------------------------------
    def save(self, present: Iterable[str]) -> None:
        """Write the states of the files of this scan and the words it asked about."""
        if self.path is None:
            return
        present = set(present)
        if not self._dirty and self._asked == self.tracked and present == set(self.states):
            return  # nothing learned: the file on disk already says all this
        words = sorted(self._asked)
        index = {w: i for i, w in enumerate(words)}
        kept = self._rows if words == self._row_words else {}
        files = {}
        for p in present:
            row = kept.get(p)
            if row is not None:
                files[p] = row
                continue
            s = self.states.get(p)
            if s is None:
                continue
            files[p] = [
                list(s.signature) if s.signature is not None else None,
                s.hash,
                s.size,
                sorted(s.match.frameworks),
                sorted(s.match.triggers),
                list(s.problem) if s.problem else None,
                sorted(index[w] for w in s.words if w in index),
            ]
        write_json_atomically(self.path, {"format": TABLE_FORMAT, "words": words, "files": files})
