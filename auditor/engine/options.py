"""How a scan runs: the settings that travel together from the command line (or the Python API)
through every stage of the engine, as one typed value.

What is scanned -- the paths, the configuration, the report root -- is given beside it
(:func:`resume_audit.engine.scan.scan`); everything here changes how, not what: worker processes,
the cache, the per-file limits, which files the walk leaves out, where fingerprints are anchored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence, TypedDict

from resume_audit.discovery.repo_root import RepoPaths

#: Candidate files larger than this are reported and skipped: generated code, and LibCST's
#: native parser cannot be interrupted by the per-file time limit.
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_TIME_LIMIT = 60.0

#: ``progress(phase, done, total)``: told as files are read and analysed; ``total`` is None while
#: it is not known yet (see :mod:`resume_audit.reporters.progress`, which draws it)
Progress = Callable[[str, int, "int | None"], None]


class ScanSettings(TypedDict, total=False):
    """:class:`ScanOptions`' fields as keyword arguments (``scan(..., jobs=1, cache_dir=None)``)."""

    jobs: int | None
    cache_dir: Path | None
    time_limit: float | None
    max_file_bytes: int
    follow_symlinks: bool
    progress: Progress | None
    exclude: Sequence[str]
    respect_gitignore: bool
    force_exclude: bool
    repo: RepoPaths | None


@dataclass(frozen=True)
class ScanOptions:
    """How to scan (the defaults: what ``resume-audit scan`` does with no options)."""

    #: worker processes (None: one per CPU; 1: in this process)
    jobs: int | None = None
    #: where per-file results, summaries, the file table and the replay record are kept (None: no cache)
    cache_dir: Path | None = None
    #: seconds one file's analysis may take (None: no limit)
    time_limit: float | None = DEFAULT_TIME_LIMIT
    #: candidate files larger than this are reported and skipped
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    #: scan ``*.py`` symlinks that point outside the scanned folder
    follow_symlinks: bool = False
    #: told ``(phase, done, total)`` as files are read and analysed
    progress: Progress | None = None
    #: gitignore-style patterns of paths to leave out, relative to the root
    exclude: Sequence[str] = ()
    #: skip what git ignores
    respect_gitignore: bool = True
    #: apply ``exclude`` and .gitignore to the scanned paths themselves too
    force_exclude: bool = False
    #: the repository root fingerprints name files relative to (None: found from the root and the
    #: root configuration, see :mod:`resume_audit.discovery.repo_root`)
    repo: RepoPaths | None = None

    @property
    def workers(self) -> int:
        """Worker processes to use."""
        return self.jobs if self.jobs is not None else (os.cpu_count() or 1)

    def tell(self, phase: str, done: int, total: int | None) -> None:
        """Report progress to the caller, if it asked."""
        if self.progress is not None:
            self.progress(phase, done, total)
