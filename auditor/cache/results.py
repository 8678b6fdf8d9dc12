"""The per-file result cache: an unchanged tree rescans at I/O speed.

One JSON file per analysed source file, valid only while everything the
result depended on is unchanged: the tool version, the active rules, the
configuration, the set of module names in the project, the file's own
content, the content of every project module its analysis looked into, and
the set of files mentioning each word a rule searched the project for, and the
value of every per-module summary part it read (:mod:`resume_audit.facts.summaries`:
the early cut-off -- a module whose bytes changed but whose summary did not
invalidates nothing that only read its summary). JSON,
not pickle: the cache must never be a way to run code.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Callable

from resume_audit import serialize
from resume_audit.cache.fileresult import FileResult
from resume_audit.cache.jsonfile import write_json_atomically
from resume_audit.cache.validity import rests_unchanged
from resume_audit.processes import pid_alive

#: 2: entries carry the file's suppression comments and the suppressions each analysis used
#: 3: entries carry the summary parts each analysis read, by value
CACHE_FORMAT = 3


def default_cache_dir(root: Path) -> Path:
    """``$XDG_CACHE_HOME/resume-audit/<hash of the root>`` (``~/.cache`` by default): outside
    the scanned tree, so a scanned repository cannot plant cache entries."""
    base = Path(os.environ.get("RESUME_AUDIT_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    if not os.environ.get("RESUME_AUDIT_CACHE_DIR"):
        base = base / "resume-audit"
    return base / hashlib.blake2b(str(root.resolve()).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


class ResultCache:
    """Entries are written as each file's analysis finishes (a scan killed half-way keeps what it
    did), through a temporary file named after the writing process; temporary files of writers
    that died are removed when the next scan opens the cache. Every entry is checked for shape
    as well as key: a damaged one is a miss, never a crash of every later scan."""

    def __init__(self, directory: Path, key_parts: list[str]) -> None:
        self.directory: Path | None = directory
        self.key = hashlib.blake2b(
            "\x1f".join([str(CACHE_FORMAT), *key_parts]).encode("utf-8", "surrogatepass"), digest_size=16
        ).hexdigest()
        self.hits = 0
        self.misses = 0
        try:
            directory.mkdir(parents=True, exist_ok=True)
            tag = directory / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# resume-audit cache\n")
        except OSError:
            self.directory = None  # unwritable: run uncached
            return
        _remove_orphaned_temporaries(directory)

    def _entry(self, path: str) -> Path:
        assert self.directory is not None
        digest = hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return self.directory / f"{digest}.json"

    def get(
        self,
        path: str,
        display: str,
        hashes: dict[str, str],
        mentions: Callable[[str], list[str]],
        summary_digest: Callable[[str], str | None] = lambda key: None,
    ) -> FileResult | None:
        """The cached result for ``path`` if still valid. ``summary_digest`` gives the current
        digest of a summary part (it may compute it: only modules whose summary is stale are parsed)."""
        if self.directory is None:
            return None
        try:
            data = json.loads(self._entry(path).read_text(encoding="utf-8"))
            result = self._valid(data, path, display, hashes, mentions, summary_digest)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):  # unreadable or damaged: a miss
            result = None
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
        return result

    def _valid(
        self,
        data: object,
        path: str,
        display: str,
        hashes: dict[str, str],
        mentions: Callable[[str], list[str]],
        summary_digest: Callable[[str], str | None],
    ) -> FileResult | None:
        if not (
            isinstance(data, dict)
            and data.get("key") == self.key
            and data.get("path") == path
            and data.get("display") == display
            and data.get("hash") == hashes.get(path)
        ):
            return None
        deps, words, parts = data["deps"], data["mentions"], data["summaries"]
        if not (isinstance(deps, dict) and isinstance(words, dict) and isinstance(parts, dict)):
            return None
        if not rests_unchanged(deps, words, parts, hashes, mentions, summary_digest):
            return None
        return FileResult(
            display=display,
            findings=[serialize.finding_from_dict(f) for f in data["findings"]],
            notifications=[serialize.notification_from_dict(n) for n in data["notifications"]],
            suppressed=int(data["suppressed"]),
            suppression_comments=[serialize.suppression_comment_from_dict(c) for c in data["suppression_comments"]],
            suppressions_used=[serialize.suppression_use_from_list(u) for u in data["suppressions_used"]],
            deps=dict(deps),
            mention_words=list(words),
            summary_deps=dict(parts),
        )

    def put(self, path: str, content_hash: str, result: FileResult, mentions: Callable[[str], list[str]]) -> None:
        if self.directory is None:
            return
        if not result.complete or any(n.kind.value in ("timeout", "internal-error") for n in result.notifications):
            return  # do not pin a transient failure (its own, or a dependency's that timed out)
        data = {
            "key": self.key,
            "path": path,
            "hash": content_hash,
            "display": result.display,
            "deps": result.deps,
            "mentions": {word: mentions(word) for word in result.mention_words},
            "summaries": result.summary_deps,
            "findings": [serialize.finding_to_dict(f) for f in result.findings],
            "notifications": [serialize.notification_to_dict(n) for n in result.notifications],
            "suppressed": result.suppressed,
            "suppression_comments": [serialize.suppression_comment_to_dict(c) for c in result.suppression_comments],
            "suppressions_used": [list(u) for u in result.suppressions_used],
        }
        write_json_atomically(self._entry(path), data)


def _remove_orphaned_temporaries(directory: Path) -> None:
    """``<pid>-*.tmp`` files whose writer is gone (a scan killed mid-write)."""
    for tmp in directory.glob("*.tmp"):
        pid = tmp.name.split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and pid_alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            tmp.unlink()
