"""The bytes of a scan's files, and which files mention a word.

A scan analyses exactly the bytes it hashed: a file read during discovery is kept,
and a file the file table vouched for by its ``stat`` signature (not read at all
on a warm run) is read on first use and checked against the recorded hash -- an
edit in between marks the file changed, so no result computed from the new bytes
is cached under the old hash.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import stat
from pathlib import Path
from typing import Sequence

from resume_audit.modulenames import SourceFile
from resume_audit.filetable import FileTable
from resume_audit.findings import Notification, NotificationKind


def content_hash(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def read_regular(path: Path, display: str) -> tuple[bytes, os.stat_result] | Notification:
    """A source file's bytes and the ``stat`` taken before reading -- only when it is a regular
    file. A FIFO named ``*.py`` would block the read forever and a ``*.py`` link to ``/dev/zero``
    would read until memory runs out; both are opened without blocking, seen for what they are,
    and reported instead."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return Notification(NotificationKind.UNREADABLE, f"cannot read file: {exc.strerror or exc}", display)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "not a regular file"
            return Notification(NotificationKind.SKIPPED, f"{kind}, not a source file; skipped", display)
        chunks, remaining = [], info.st_size
        while True:
            chunk = os.read(fd, max(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks), info
    except OSError as exc:
        return Notification(NotificationKind.UNREADABLE, f"cannot read file: {exc.strerror or exc}", display)
    finally:
        os.close(fd)


class Corpus:
    """The bytes of many files in one buffer, NUL-separated (no word a rule searches for holds a
    NUL): each word is then one C-level search over the tree, and a file's bytes exist once in
    memory rather than once per file and again in a joined copy (a 20,000-file tree held 344 MB
    twice)."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.spans: dict[Path, tuple[int, int]] = {}
        self._starts: list[int] = []
        self._keys: list[str] = []

    def add(self, path: Path, raw: bytes) -> None:
        start = len(self.buffer)
        self.buffer += raw
        self.buffer += b"\0"
        self.spans[path] = (start, start + len(raw))
        self._starts.append(start)
        self._keys.append(str(path))

    def get(self, path: Path) -> bytes | None:
        span = self.spans.get(path)
        return bytes(self.buffer[span[0]:span[1]]) if span is not None else None

    def find_all(self, needle: bytes) -> list[str]:
        """Files (resolved paths as str) whose text contains ``needle``; after a hit, the search
        resumes at the next file."""
        out = []
        blob, starts = self.buffer, self._starts
        at = blob.find(needle) if needle else -1
        while at >= 0:
            i = bisect.bisect_right(starts, at) - 1
            out.append(self._keys[i])
            if i + 1 >= len(starts):
                break
            at = blob.find(needle, starts[i + 1])
        return sorted(out)


class SourceBytes:
    """``path -> bytes`` for the files of one scan, read at most once: kept whole for the files
    the analysis will parse, found in the corpus for the others, read from disk for the files the
    file table vouched for."""

    def __init__(self, loaded: dict[Path, bytes], hashes: dict[str, str], corpus: Corpus | None = None) -> None:
        self.loaded = loaded
        self.hashes = hashes
        self.corpus = corpus if corpus is not None else Corpus()
        #: files whose bytes, read late, no longer match the hash the scan recorded
        self.changed: set[Path] = set()

    def get(self, path: Path) -> bytes | None:
        raw = self.loaded.get(path)
        if raw is not None:
            return raw
        raw = self.corpus.get(path)
        if raw is not None:
            return raw
        expected = self.hashes.get(str(path))
        if expected is None:
            return None  # not a file of this scan
        result = read_regular(path, str(path))
        if isinstance(result, Notification):
            self.changed.add(path)
            return None
        raw = result[0]
        if content_hash(raw) != expected:
            self.changed.add(path)
        self.loaded[path] = raw
        return raw


class Mentions:
    """``word -> files (resolved paths as str) whose text contains it``, memoised for one run.

    Answered from the file table when it tracks the word (no text is read); otherwise by one
    search of the corpus of every file of the scan (completed from disk when a warm run read only
    some), and the table learns the answer."""

    def __init__(self, files: Sequence[SourceFile], texts: SourceBytes, table: FileTable | None = None) -> None:
        self.files = files
        self.texts = texts
        self.table = table
        self._memo: dict[str, list[str]] = {}
        self._keys = [str(f.path) for f in files]
        self._present = set(self._keys)
        self._corpus: Corpus | None = None

    def __call__(self, word: str) -> list[str]:
        found = self._memo.get(word)
        if found is not None:
            return found
        if self.table is not None:
            found = self.table.mentions(word, self._present)
        if found is None:
            found = self._whole_corpus().find_all(word.encode())
            if self.table is not None:
                self.table.learn(word, found, self._keys)
        self._memo[word] = found
        return found

    def _whole_corpus(self) -> Corpus:
        if self._corpus is None:
            have = self.texts.corpus
            if all(f.path in have.spans for f in self.files) and len(have.spans) == len(self.files):
                self._corpus = have
            else:
                self._corpus = Corpus()
                for f in self.files:
                    self._corpus.add(f.path, self.texts.get(f.path) or b"")
        return self._corpus
