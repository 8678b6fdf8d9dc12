"""When a kept answer (a file's result, a module's summary) still holds: everything it rested on
is unchanged -- the content of every module it looked into, the files mentioning each word it
searched for, and the value of every summary part it read.

One check for the per-file result cache, the stored summaries and the summaries a warm language
server keeps in memory (:mod:`resume_audit.engine.live`): they cannot disagree on what "unchanged" means.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence


def rests_unchanged(
    deps: Mapping[str, object],
    words: Mapping[str, Sequence[str]],
    parts: Mapping[str, object],
    hashes: Mapping[str, str],
    mentions: Callable[[str], list[str]],
    summary_digest: Callable[[str], str | None],
) -> bool:
    """``deps``: resolved path -> content hash seen; ``words``: word -> files that mentioned it;
    ``parts``: summary key -> digest seen. Checked cheapest first: a changed module's hash ends
    it before any summary digest (which may have to be computed) is asked."""
    if not all(hashes.get(dep) == h for dep, h in deps.items()):
        return False
    if not all(mentions(word) == list(files) for word, files in words.items()):
        return False
    return all(summary_digest(key) == digest for key, digest in parts.items())
