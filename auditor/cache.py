"""The per-file result cache: an unchanged tree rescans at I/O speed.

One JSON file per analysed source file, valid only while everything the
result depended on is unchanged: the tool version, the active rules, the
configuration, the set of module names in the project, the file's own
content, the content of every project module its analysis looked into, and
the set of files mentioning each word a rule searched the project for. JSON,
not pickle: the cache must never be a way to run code.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from auditor import serialize

if TYPE_CHECKING:
    from auditor.engine import FileResult

CACHE_FORMAT = 1


def default_cache_dir(root: Path) -> Path:
    """``$XDG_CACHE_HOME/resume-audit/<hash of the root>`` (``~/.cache`` by default): outside
    the scanned tree, so a scanned repository cannot plant cache entries."""
    base = Path(os.environ.get("RESUME_AUDIT_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    if not os.environ.get("RESUME_AUDIT_CACHE_DIR"):
        base = base / "resume-audit"
    return base / hashlib.blake2b(str(root.resolve()).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


class ResultCache:
    def __init__(self, directory: Path, key_parts: list[str]) -> None:
        self.directory = directory
        self.key = hashlib.blake2b("\x1f".join([str(CACHE_FORMAT), *key_parts]).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        self.hits = 0
        self.misses = 0
        try:
            directory.mkdir(parents=True, exist_ok=True)
            tag = directory / "CACHEDIR.TAG"
            if not tag.exists():
                tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# resume-audit cache\n")
        except OSError:
            self.directory = None  # type: ignore[assignment]  # unwritable: run uncached

    def _entry(self, path: str) -> Path:
        digest = hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return self.directory / f"{digest}.json"

    def get(self, path: str, hashes: dict[str, str], mentions: Callable[[str], list[str]]) -> "FileResult | None":
        from auditor.engine import FileResult

        if self.directory is None:
            return None
        try:
            data = json.loads(self._entry(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.misses += 1
            return None
        valid = (
            isinstance(data, dict)
            and data.get("key") == self.key
            and data.get("path") == path
            and data.get("hash") == hashes.get(path)
            and all(hashes.get(dep) == h for dep, h in data.get("deps", {}).items())
            and all(mentions(word) == files for word, files in data.get("mentions", {}).items())
        )
        if not valid:
            self.misses += 1
            return None
        try:
            result = FileResult(
                display=data["display"],
                findings=[serialize.finding_from_dict(f) for f in data["findings"]],
                notifications=[serialize.notification_from_dict(n) for n in data["notifications"]],
                suppressed=data["suppressed"],
                deps=data["deps"],
                mention_words=list(data.get("mentions", {})),
            )
        except (KeyError, TypeError, ValueError):
            self.misses += 1
            return None
        self.hits += 1
        return result

    def put(self, path: str, content_hash: str, result: "FileResult", mentions: Callable[[str], list[str]]) -> None:
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
            "findings": [serialize.finding_to_dict(f) for f in result.findings],
            "notifications": [serialize.notification_to_dict(n) for n in result.notifications],
            "suppressed": result.suppressed,
        }
        try:
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
            os.replace(tmp, self._entry(path))
        except OSError:
            pass
