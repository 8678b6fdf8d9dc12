"""A scan of a tree where nothing changed only stats: the last scan's whole result, replayed.

The file table (:mod:`resume_audit.cache.filetable`) spares an unchanged file its reading, and the
result cache its analysis, but a warm scan still walked the tree, filtered every entry, named
every module and checked every cached result: ~0.2 s of a 0.4 s warm scan of 5,000 files, all
to arrive at the answer it gave last time. What that answer rested on is small and can be
checked with ``stat`` alone:

* the files found: the same while every folder the walk listed has the signature it had before
  it was listed (an entry added, removed or renamed changes a folder's mtime -- what git's
  untracked cache relies on), and every file that decides what is skipped or how modules are
  named (``pyproject.toml``, ``.gitignore``, ``.git/info/exclude`` in those folders and above the
  scanned paths) has its own, and ``.git`` and ``__init__.py`` above them are still there or still
  absent (by presence: git rewrites files inside ``.git`` at every command);
* their content: the same while every file's signature (size, mtime, ctime, inode, device) is;
* everything else a result depends on: the key -- the tool and its rules, the scanned paths, the
  root, the configuration given on the command line, every option.

A scan whose answer might rest on something else is never recorded: one that met a ``*.py``
symlink (its target is not covered), a folder it could not list, a timeout or an internal error
(machine-dependent), or a folder or guard changed within the file table's racy window (a change
in the same timestamp tick would go unseen). A file changed within that window is recorded
without its signature: the result is not replayed until a later scan sees the file settled.
JSON, as the rest of the cache: loading it must never run code, and a damaged entry is a miss.

When only files' contents changed (every folder and guard as recorded: the edit-and-rescan loop),
the record still says which files there are: the scan takes that list instead of walking the
tree again, and reads, analyses and records as usual.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from resume_audit import serialize
from resume_audit.cache.filetable import Signature, is_racy, stat_signature
from resume_audit.cache.jsonfile import write_json_atomically
from resume_audit.catalog.ruleindex import tool_fingerprint
from resume_audit.config.tree import ConfigSource, ConfigTree, FixedConfig
from resume_audit.discovery.walk import SourcePath, WalkRecord, presence
from resume_audit.engine.options import ScanOptions
from resume_audit.engine.scope import ScanScope
from resume_audit.findings import NotificationKind, ScanResult
from resume_audit.version import __version__

#: 2: files carry their display and walked paths (the walk is reused when only contents changed)
#: 3: and their module names; 4: presence-only guards (``.git``, ``__init__.py`` above)
REPLAY_FORMAT = 4
#: what a result with one of these says depends on the machine's load, not on the tree
TRANSIENT = (NotificationKind.TIMEOUT, NotificationKind.INTERNAL_ERROR)


def source_fingerprint(source: ConfigSource) -> str | None:
    """What a configuration source contributes beyond the files the walk guards: the command
    line's values for a tree of ``pyproject.toml`` files, the whole configuration when one is
    given for every file. None for a source this module does not know (never replayed)."""
    if isinstance(source, ConfigTree):
        return repr(("tree", source.known, source.overrides))
    if isinstance(source, FixedConfig):
        return repr(("fixed", source.config.fingerprint()))
    return None


@dataclass
class ReplayCheck:
    """What a record still vouches for: the whole result (nothing changed), or only which files
    there are (some changed: ``paths`` as the walk would yield them, ``walk`` what that rests on,
    still valid and to be recorded again), or nothing."""

    result: ScanResult | None = None
    paths: list[SourcePath] | None = None
    walk: WalkRecord | None = None
    #: each listed file's module name and whether it is a package, by resolved path (as the
    #: folders above and around it, unchanged, still say)
    modules: dict[str, tuple[str, bool]] | None = None


class ScanReplay:
    """The last result of one scan (the key: what was scanned, how, by which tool) and what it
    rested on, in ``directory``."""

    def __init__(self, directory: Path, key_parts: Iterable[str]) -> None:
        self.key = hashlib.blake2b(
            "\x1f".join([str(REPLAY_FORMAT), *key_parts]).encode("utf-8", "surrogatepass"), digest_size=16
        ).hexdigest()
        self.path = directory / f"replay-{self.key}.json"

    def check(self) -> ReplayCheck:
        """What the record still vouches for (see :class:`ReplayCheck`)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not (isinstance(data, dict) and data.get("format") == REPLAY_FORMAT and data.get("key") == self.key):
                return ReplayCheck()
            folders, guards, present, files = data["folders"], data["guards"], data["present"], data["files"]
            if not (_same(folders) and _same(guards) and _same(present, presence)):
                return ReplayCheck()
            if _same(files):
                return ReplayCheck(result=serialize.scan_result_from_dict(data["result"]))
            walk = WalkRecord(
                {str(p): _signature(s) for p, s in folders},
                {str(p): _signature(s) for p, s in guards},
                {str(p): _signature(s) for p, s in present},
            )
            paths, modules = [], {}
            for resolved, _, display, walked, module, is_package in files:
                identity = Path(resolved)
                # (a file found under its own absolute path: one Path for both, as one costs ~3 us)
                paths.append(SourcePath(identity if walked is None else Path(walked), str(display), identity))
                if module is not None:
                    modules[str(resolved)] = (str(module), bool(is_package))
            return ReplayCheck(paths=paths, walk=walk, modules=modules)
        except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError):  # absent or damaged: a miss
            return ReplayCheck()

    def save(
        self,
        result: ScanResult,
        walk: WalkRecord,
        files: Sequence[tuple[SourcePath, Signature | None, tuple[str, bool] | None]],
        started: float,
        complete: bool,
    ) -> None:
        """Record ``result`` with what it rested on -- ``files``: every file found, in the order
        found, with its signature before it was read and its module name (and whether a package) --
        unless it may rest on more (see the module's docstring): then any earlier record is
        removed, as it no longer describes this tree."""
        folders = list(walk.folders.values())
        walked_as = _WalkedAs()
        if (
            not complete
            or walk.linked
            or walk.troubled
            or any(n.kind in TRANSIENT for n in result.notifications)
            or any(s is None for s in folders)
            or _recent([*folders, *walk.guards.values()], started)
        ):
            self.discard()
            return
        # a file changed within the racy window (the one just edited) is recorded without a signature:
        # the result is then not replayed until a scan sees it settled, but the file list still serves
        write_json_atomically(
            self.path,
            {
                "format": REPLAY_FORMAT,
                "key": self.key,
                "folders": _rows(walk.folders),
                "guards": _rows(walk.guards),
                "present": _rows(walk.present),
                "files": [
                    [
                        str(sp.resolved),
                        list(sig) if sig is not None and not _recent([sig], started) else None,
                        sp.display,
                        walked_as(sp),
                        *(module if module is not None else (None, False)),
                    ]
                    for sp, sig, module in files
                ],
                "result": serialize.scan_result_to_dict(result),
            },
        )

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()


def replay_for(scope: ScanScope, options: ScanOptions) -> ScanReplay | None:
    """Where this scan's result is kept for a scan of the same, unchanged tree (None: no cache, or
    a configuration source whose inputs cannot be told unchanged)."""
    fingerprint = source_fingerprint(scope.source) if options.cache_dir is not None else None
    if options.cache_dir is None or fingerprint is None:
        return None
    settings = [
        options.time_limit,
        options.max_file_bytes,
        options.follow_symlinks,
        options.exclude,
        options.respect_gitignore,
        options.force_exclude,
    ]
    return ScanReplay(
        options.cache_dir,
        replay_key(
            __version__,
            tool_fingerprint(),
            scope.paths,
            scope.root,
            fingerprint,
            scope.repo.anchor,
            [tuple(o) if isinstance(o, (list, tuple)) else o for o in settings],
        ),
    )


def replay_key(
    version: str, tool: str, paths: Sequence[Path], root: Path, source: str, repo_anchor: str, options: Sequence[object]
) -> list[str]:
    """The key parts: paths as given, made absolute (not resolved: a symlinked path is another
    scan), the root, the configuration source's fingerprint and every other option."""
    return [
        version,
        tool,
        "\x1e".join(os.path.abspath(p) for p in paths),
        os.path.abspath(root),
        source,
        repo_anchor,
        repr(tuple(options)),
    ]


def _rows(signatures: dict[str, Signature | None]) -> list[list[Any]]:
    return [[path, list(sig) if sig is not None else None] for path, sig in signatures.items()]


class _WalkedAs:
    """The path the walk found a file under, when it is not the file's own absolute path (a relative
    root: the scan's working directory is part of the key, so it means the same file next time).
    Worked out per folder: ``abspath`` per file cost more than the rest of a record's row."""

    def __init__(self) -> None:
        self._folders: dict[tuple[str, str], bool] = {}

    def __call__(self, found: SourcePath) -> str | None:
        if found.path is found.resolved:  # (the list was taken from a record: the same Path)
            return None
        walked, resolved = str(found.path), str(found.resolved)
        folders = (os.path.dirname(walked), os.path.dirname(resolved))
        same = self._folders.get(folders)
        if same is None:
            same = self._folders[folders] = os.path.abspath(folders[0]) == folders[1]
        return None if same and os.path.basename(walked) == os.path.basename(resolved) else walked


def _signature(row: list[int] | None) -> Signature | None:
    return None if row is None else (int(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4]))


def _same(rows: list[list[Any]], signature: Callable[[str], Signature | None] = stat_signature) -> bool:
    """Whether every path (a row's first item) still has its recorded signature (the second;
    None: still nothing there)."""
    for row in rows:
        now = signature(row[0])
        if (list(now) if now is not None else None) != row[1]:
            return False
    return True


def _recent(signatures: Iterable[Signature | None], started: float) -> bool:
    """Whether any of them changed within the racy window before the scan started."""
    return any(s is not None and is_racy(s, started) for s in signatures)
