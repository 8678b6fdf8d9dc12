"""The bytes of a scan's files, and which files mention a word.

A scan analyses exactly the bytes it hashed: a file read during discovery is kept,
and a file the file table vouched for by its ``stat`` signature (not read at all
on a warm run) is read on first use and checked against the recorded hash -- an
edit in between marks the file changed, so no result computed from the new bytes
is cached under the old hash.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import IO, TYPE_CHECKING, Sequence

from resume_audit.discovery.modulenames import SourceFile
from resume_audit.findings import Notification, NotificationKind

if TYPE_CHECKING:  # the file table answers word questions when a scan has one; reading needs no cache
    from resume_audit.cache.filetable import FileTable


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
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(info.st_mode)
                else "a device"
                if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)
                else "not a regular file"
            )
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


#: bytes of file text a corpus holds in memory; the rest of a big tree's text waits in a spill
#: file (see :class:`Corpus`). A 5,000-file tree of ordinary modules is ~90 MB: held whole.
HELD_BYTES = 96 * 1024 * 1024

#: how much spilled text one read brings back for searching
_WINDOW_BYTES = 8 * 1024 * 1024


class Corpus:
    """The bytes of many files in one buffer, NUL-separated (no word a rule searches for holds a
    NUL): each word is then one C-level search over the tree, and a file's bytes exist once in
    memory rather than once per file and again in a joined copy (a 20,000-file tree held 344 MB
    twice).

    Memory is bounded: past ``budget`` bytes, text goes to an unlinked spill file in the
    system's temporary folder and a search reads it back a window at a
    time -- the exact bytes the scan hashed, never re-read from the tree. A search over spilled
    text costs a read of it, so several words are best asked together (:meth:`find_many`)."""

    def __init__(self, budget: int | None = None) -> None:
        self.buffer = bytearray()
        self.budget = HELD_BYTES if budget is None else budget
        self.spans: dict[Path, tuple[int, int]] = {}
        self._starts: list[int] = []
        self._keys: list[str] = []
        #: spilled files: offsets in the spill file, in order
        self._spill: "IO[bytes] | None" = None
        self._spill_size = 0
        self.spilled: dict[Path, tuple[int, int]] = {}
        self._spill_starts: list[int] = []
        self._spill_keys: list[str] = []

    def __contains__(self, path: Path) -> bool:
        return path in self.spans or path in self.spilled

    def __len__(self) -> int:
        return len(self.spans) + len(self.spilled)

    def add(self, path: Path, raw: bytes) -> None:
        if len(self.buffer) + len(raw) + 1 <= self.budget or not raw:
            start = len(self.buffer)
            self.buffer += raw
            self.buffer += b"\0"
            self.spans[path] = (start, start + len(raw))
            self._starts.append(start)
            self._keys.append(str(path))
            return
        if self._spill is None:
            self._spill = tempfile.TemporaryFile(prefix="resume-audit-corpus-")
        start = self._spill_size
        self._spill.write(raw)
        self._spill.write(b"\0")
        self._spill_size += len(raw) + 1
        self.spilled[path] = (start, start + len(raw))
        self._spill_starts.append(start)
        self._spill_keys.append(str(path))

    def get(self, path: Path) -> bytes | None:
        span = self.spans.get(path)
        if span is not None:
            return bytes(self.buffer[span[0] : span[1]])
        span = self.spilled.get(path)
        if span is None or self._spill is None:
            return None
        self._spill.flush()
        return os.pread(self._spill.fileno(), span[1] - span[0], span[0])

    def close(self) -> None:
        """Drop the spill file (also dropped when the corpus is collected or the process ends)."""
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def find_many(self, needles: Sequence[bytes]) -> dict[bytes, list[str]]:
        """Per needle, the files (resolved paths as str) whose text contains it: one pass over
        the spilled text for all of them."""
        found = _search(self.buffer, self._starts, self._keys, needles)
        if self._spill is not None and self._spill_keys:
            self._spill.flush()
            fd, starts, keys = self._spill.fileno(), self._spill_starts, self._spill_keys
            first = 0
            while first < len(starts):
                # a window of whole files: no needle (which holds no NUL) spans two of them
                last = bisect.bisect_right(starts, starts[first] + _WINDOW_BYTES) - 1
                last = max(last, first)
                end = starts[last + 1] if last + 1 < len(starts) else self._spill_size
                window = os.pread(fd, end - starts[first], starts[first])
                local = [st - starts[first] for st in starts[first : last + 1]]
                for n, hits in _search(window, local, keys[first : last + 1], needles).items():
                    found[n].extend(hits)
                first = last + 1
        return {n: sorted(keys) for n, keys in found.items()}


#: needles sharing a first word this often are searched by that word once (see :func:`_search`)
_GROUP_AT_LEAST = 4
#: a needle's rest after its first word and space, for grouping: a (dotted) name
_NAME_REST = re.compile(rb"[\w.]+\Z")
_NAME_RUN = re.compile(rb"[\w.]*")


def _search(
    blob: "bytes | bytearray", starts: list[int], keys: list[str], needles: Sequence[bytes]
) -> dict[bytes, list[str]]:
    """Per needle, the keys of the NUL-separated files of ``blob`` (starting at ``starts``)
    holding it.

    Most needles are import phrases -- ``import flask``, ``from flask``, ... 56 of them for the
    web index alone -- and each search reads the whole text (33 ms per needle over 77 MB), so
    needles that share a first word followed by a name are searched together: every occurrence
    of ``import `` is found once and the name run after it is matched against all of them. A
    needle ``P + R`` (R a dotted name) occurs exactly where ``P`` occurs and the run of name
    characters after it starts with ``R``, so the answer is the plain search's."""
    out: dict[bytes, list[str]] = {}
    groups: dict[bytes, list[bytes]] = {}
    for n in needles:
        space = n.find(b" ")
        if space > 0 and _NAME_REST.match(n, space + 1):
            groups.setdefault(n[: space + 1], []).append(n)
    grouped = {n for members in groups.values() if len(members) >= _GROUP_AT_LEAST for n in members}
    around = _around_a_name([n for n in needles if n not in grouped])
    grouped.update(n for shapes in around.values() for n, _, _ in shapes)
    for n in needles:
        if n not in grouped:
            out[n] = _find_in(blob, starts, keys, n)
    for name, shapes in around.items():
        holding: dict[bytes, set[int]] = {n: set() for n, _, _ in shapes}
        at = blob.find(name) if starts else -1
        while at >= 0:
            end = at + len(name)
            for n, before, after in shapes:
                if (
                    at >= len(before)
                    and blob[at - len(before) : at] == before
                    and blob[end : end + len(after)] == after
                ):
                    holding[n].add(bisect.bisect_right(starts, at) - 1)
            at = blob.find(name, at + 1)
        for n, _, _ in shapes:
            out[n] = [keys[i] for i in sorted(holding[n])]
    for prefix, members in groups.items():
        if len(members) < _GROUP_AT_LEAST:
            continue
        rests = {m[len(prefix) :]: m for m in members}
        # the lengths of the rests, by their first bytes (two, or one if some rest is one byte
        # long): most names after ``import `` (``os``, ``typing``) start no rest and cost one lookup
        key = min(2, *(len(r) for r in rests))
        lengths: dict[bytes, list[int]] = {}
        for rest in rests:
            lengths.setdefault(rest[:key], []).append(len(rest))
        for found in lengths.values():
            found.sort()
        hits: dict[bytes, set[int]] = {m: set() for m in members}
        # only the occurrences some rest follows: a tree's thousands of ``import os`` are passed
        # over by the regular expression engine, not looked at one by one here
        for occurrence in _followed_by_one_of(prefix, frozenset(rests)).finditer(blob) if starts else ():
            at = occurrence.start()
            run = _NAME_RUN.match(blob, at + len(prefix))
            name = run.group() if run is not None else b""
            for length in lengths.get(name[:key], ()):
                if length > len(name):
                    break
                member = rests.get(name[:length])
                if member is not None:
                    hits[member].add(bisect.bisect_right(starts, at) - 1)
        for m in members:
            out[m] = [keys[i] for i in sorted(hits[m])]
    return out


@functools.lru_cache(maxsize=64)
def _followed_by_one_of(prefix: bytes, rests: frozenset[bytes]) -> "re.Pattern[bytes]":
    """``prefix`` where one of ``rests`` follows it (a lookahead: the match is ``prefix`` alone).
    A rest is a dotted name, so it follows ``prefix`` exactly when it starts the run of name
    characters there -- the occurrences :func:`_search` looks at, and no others. ``prefix`` (a
    word and one space) cannot overlap itself, so no occurrence hides inside another match."""
    return re.compile(re.escape(prefix) + b"(?=" + b"|".join(re.escape(r) for r in sorted(rests)) + b")")


#: needles around one name this long or longer are searched by that name once (see :func:`_around_a_name`)
_NAME_AT_LEAST = 6
_NAME = re.compile(rb"[A-Za-z_][\w]*")


def _around_a_name(needles: Sequence[bytes]) -> dict[bytes, list[tuple[bytes, bytes, bytes]]]:
    """Needles that are one name with a little text around it -- the callers of ``change_answer``
    are searched as ``change_answer(``, ``change_answer,``, ``change_answer)`` and ``=change_answer``
    -- grouped by that name, as (needle, text before, text after), where two or more share it.

    Each search reads the whole text (a tree of 20,000 files: ~0.1 s per needle, in every worker
    that asks), so the name is searched once and the text around each occurrence compared. A
    needle ``B + N + A`` occurs exactly where ``N`` occurs with ``B`` before it and ``A`` after it,
    so the answer is the plain search's. Short names (``run``) occur too often to be worth it."""
    by_name: dict[bytes, list[tuple[bytes, bytes, bytes]]] = {}
    for n in needles:
        names = _NAME.findall(n)
        if len(names) != 1 or len(names[0]) < _NAME_AT_LEAST:
            continue
        name = names[0]
        start = n.find(name)
        by_name.setdefault(name, []).append((n, n[:start], n[start + len(name) :]))
    return {name: members for name, members in by_name.items() if len(members) >= 2}


def files_holding(texts: Sequence[bytes | None], words: Sequence[str]) -> list[frozenset[str]]:
    """Per text (None: a file that could not be read), which of ``words`` it holds: the answer
    :meth:`Corpus.find_many` gives for these files, by the same search over them NUL-joined."""
    present = [i for i, raw in enumerate(texts) if raw is not None]
    held: list[frozenset[str]] = [frozenset()] * len(texts)
    if not present or not words:
        return held
    starts: list[int] = []
    at = 0
    for i in present:
        starts.append(at)
        at += len(texts[i] or b"") + 1
    blob = b"\0".join(texts[i] or b"" for i in present)
    keys = [str(n) for n in range(len(present))]
    found: dict[int, set[str]] = {}
    for needle, hits in _search(blob, starts, keys, [w.encode() for w in words]).items():
        word = needle.decode()
        for key in hits:
            found.setdefault(present[int(key)], set()).add(word)
    for i, ws in found.items():
        held[i] = frozenset(ws)
    return held


def _find_in(blob: "bytes | bytearray", starts: list[int], keys: list[str], needle: bytes) -> list[str]:
    """The keys of the NUL-separated files of ``blob`` (starting at ``starts``) holding ``needle``;
    after a hit, the search resumes at the next file."""
    out: list[str] = []
    at = blob.find(needle) if needle and starts else -1
    while at >= 0:
        i = bisect.bisect_right(starts, at) - 1
        out.append(keys[i])
        if i + 1 >= len(starts):
            break
        at = blob.find(needle, starts[i + 1])
    return out


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

    def get(self, path: Path, keep: bool = True) -> bytes | None:
        """``keep=False``: a file read from disk is not kept (its caller keeps the bytes)."""
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
        if keep:
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
        #: files whose text changed after the corpus and the table took it (an editor's buffer):
        #: their answers come from these bytes
        self._edited: dict[str, bytes] = {}

    def __call__(self, word: str) -> list[str]:
        found = self._memo.get(word)
        if found is None:
            found = self.many([word])[word]
        return found

    def many(self, words: Sequence[str]) -> dict[str, list[str]]:
        """:meth:`__call__` for several words at once: the ones neither memoised nor tracked by
        the file table are searched together, in one pass over any spilled text."""
        out: dict[str, list[str]] = {}
        missing: list[str] = []
        for word in dict.fromkeys(words):
            found = self._memo.get(word)
            if found is None and self.table is not None:
                found = self.table.mentions(word, self._present)
            if found is None:
                missing.append(word)
            else:
                self._memo[word] = out[word] = found
        if missing:
            hits = self._whole_corpus().find_many([w.encode() for w in missing])
            for word in missing:
                out[word] = self._keep(word, self._as_edited(word, hits[word.encode()]))
        return out

    def replace(self, path: Path, raw: bytes) -> set[str]:
        """The text of ``path`` (a file of this run) is now ``raw``: every answer, kept or to come,
        says so. Returns the words kept so far whose answer changed -- the questions an analysis
        that relied on them must ask again."""
        key = str(path)
        self._edited[key] = raw
        self.table = None  # its answers are the files' as they were read: corrected below, not learned
        words = list(self._memo)
        held = files_holding([raw], words)[0]
        changed: set[str] = set()
        for word in words:
            found = self._memo[word]
            if (key in found) != (word in held):
                # a new list: whoever kept the old answer (a result checked later) still sees it
                self._memo[word] = sorted(set(found) ^ {key})
                changed.add(word)
        return changed

    def _as_edited(self, word: str, found: list[str]) -> list[str]:
        """A search's answer over the text as read, corrected for the files edited since."""
        if not self._edited:
            return found
        keys = list(self._edited)
        held = files_holding([self._edited[k] for k in keys], [word])
        corrected = set(found)
        for k, words in zip(keys, held):
            if word in words:
                corrected.add(k)
            else:
                corrected.discard(k)
        return sorted(corrected)

    def remember(self, answers: dict[str, list[str]]) -> None:
        """Answers another process of this scan found (a pool worker, searching the same text):
        kept as if searched here, so the result cache does not search every word again."""
        for word, found in answers.items():
            if word not in self._memo:
                self._keep(word, found)

    def _keep(self, word: str, found: list[str]) -> list[str]:
        """A search's answer over every file: memoised, and learned by the file table."""
        if self.table is not None:
            self.table.learn(word, found, self._keys)
        self._memo[word] = found
        return found

    def _whole_corpus(self) -> Corpus:
        if self._corpus is None:
            have = self.texts.corpus
            if all(f.path in have for f in self.files) and len(have) == len(self.files):
                self._corpus = have
            else:
                # a warm run read only the changed files: the rest come from disk, checked
                # against their hashes, into a corpus as bounded as the cold run's
                self._corpus = Corpus(have.budget)
                for f in self.files:
                    self._corpus.add(f.path, self.texts.get(f.path, keep=False) or b"")
        return self._corpus
