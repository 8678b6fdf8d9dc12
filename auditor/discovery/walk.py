"""Which files a scan reads.

Python files under the given paths, recursively, skipping what is never the
user's own code: virtualenvs (any directory holding a ``pyvenv.cfg``),
``site-packages``, ``node_modules``, VCS and tool caches, build output,
whatever ``exclude`` patterns name and whatever git ignores
(:mod:`resume_audit.discovery.pathfilter`). Symlinked directories are not followed, so a
symlink loop cannot trap the walk.

A path named on the command line is scanned even if ``exclude`` or
``.gitignore`` would skip it (a folder: walked, the filter applying to what it
holds) -- unless ``force_exclude``, for callers that pass every file by name
(pre-commit, editors), where the filter must apply to the names themselves.

Hostile trees cost a notification, never the scan: a symlink loop named
``*.py``, a folder that cannot be listed, a file name that is not UTF-8 (shown
with its undecodable bytes escaped), and a ``*.py`` symlink that points out of
the scanned folder (skipped unless ``follow_symlinks``: the report would show
a file outside the tree under the link's name).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from resume_audit.cache.filetable import Signature, stat_signature
from resume_audit.discovery.pathfilter import PathFilter
from resume_audit.findings import Notification, NotificationKind

if TYPE_CHECKING:
    from resume_audit.config.tree import ConfigSource

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "node_modules",
        "site-packages",
        "dist-packages",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        "build",
        "dist",
        ".direnv",
        ".idea",
        ".vscode",
        ".resume-audit-cache",
    }
)


#: files in a folder whose content decides what the walk skips (its configuration's ``exclude``,
#: what git ignores); their creation or removal shows in the folder's own signature
FOLDER_GUARDS = ("pyproject.toml", ".gitignore", os.path.join(".git", "info", "exclude"))
#: and in the folders above a scanned path, whose listings are not recorded, the entries whose
#: presence alone counts (``.git`` makes a repository root, ``__init__.py`` a package, which names
#: modules): by presence, not signature -- git rewrites files inside ``.git`` at every command
ABOVE_PRESENCE = (".git", "__init__.py")


def presence(path: str) -> Signature | None:
    """Whether something is at ``path`` (and whether a folder), as a signature that changes only
    when that does; None when nothing is there."""
    try:
        return (int(os.path.isdir(path)), 0, 0, 0, 0) if os.path.lexists(path) else None
    except (OSError, ValueError):
        return None


@dataclass
class WalkRecord:
    """What one walk's answer rested on, so a later scan can tell it would find the same files
    without walking (:mod:`resume_audit.engine.replay`): the signature of every folder it listed or
    looked into, taken before it did (an entry added or removed changes it), and of every file
    whose content decides what is skipped or how modules are named. ``linked``: a ``*.py``
    symlink was met, whose target no signature here covers; ``troubled``: the walk reported a
    problem (a folder it could not list), which a walk not taken would not report again."""

    folders: dict[str, Signature | None] = field(default_factory=dict)
    guards: dict[str, Signature | None] = field(default_factory=dict)
    #: paths whose presence counts, with :func:`presence`
    present: dict[str, Signature | None] = field(default_factory=dict)
    linked: bool = False
    troubled: bool = False

    def listing(self, folder: str) -> None:
        """``folder`` (absolute) is about to be listed."""
        self.folders[folder] = stat_signature(folder)
        for name in FOLDER_GUARDS:
            guard = os.path.join(folder, name)
            self.guards[guard] = stat_signature(guard)

    def looked_into(self, folder: str) -> None:
        """Whether ``folder`` is a virtualenv was decided from what it holds."""
        self.folders[folder] = stat_signature(folder)

    def above(self, path: str) -> None:
        """The folders above ``path`` (absolute), to the file system's root."""
        current = os.path.dirname(path)
        while True:
            for name in FOLDER_GUARDS:
                guard = os.path.join(current, name)
                if guard not in self.guards:
                    self.guards[guard] = stat_signature(guard)
            for name in ABOVE_PRESENCE:
                entry = os.path.join(current, name)
                if entry not in self.present:
                    self.present[entry] = presence(entry)
            parent = os.path.dirname(current)
            if parent == current:
                return
            current = parent


class PathNotFound(Exception):
    """A path given to scan does not exist (usage error, exit 2)."""


@dataclass(frozen=True)
class SourcePath:
    path: Path
    #: as shown to users: relative to the report root (POSIX) when inside it
    display: str
    #: symlinks and ``..`` resolved (the file's identity: each is scanned once)
    resolved: Path


def display_path(path: Path, root: Path) -> str:
    """Path as shown to users. Symlinks are not resolved: a link is reported under its own name."""
    absolute = os.path.abspath(path)
    for base in _bases(os.path.abspath(root)):
        if absolute == base:
            return "."
        prefix = base if base.endswith(os.sep) else base + os.sep
        if absolute.startswith(prefix):
            return printable(Path(absolute[len(prefix) :]).as_posix())
    return printable(Path(absolute).as_posix())


def printable(name: str) -> str:
    """A file name as valid text: the bytes of a non-UTF-8 name (surrogate escapes, as the OS
    hands them to Python) shown as ``\\xff`` -- a report must stay valid UTF-8 JSON."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def real_path(path: Path) -> Path:
    """Symlinks and ``..`` resolved, never raising: a symlink loop resolves to itself (and then
    fails to read, which is reported), where ``Path.resolve`` raises on 3.11."""
    return Path(os.path.realpath(path))


def _is_venv(folder: str) -> bool:
    try:
        return os.path.exists(os.path.join(folder, "pyvenv.cfg"))
    except OSError:  # a folder that cannot be searched: the walk reports it
        return False


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@lru_cache(maxsize=64)
def _bases(given: str) -> tuple[str, ...]:
    """The root as given (made absolute: a relative root is keyed by what it meant in the
    directory of the day) and with symlinks resolved: a path is shown relative to whichever
    contains it. Cached: every discovered folder asks."""
    resolved = str(Path(given).resolve())
    return (given,) if given == resolved else (given, resolved)


def discover(
    paths: Iterable[Path],
    root: Path,
    exclude: Iterable[str] = (),
    *,
    follow_symlinks: bool = False,
    problems: list[Notification] | None = None,
    configs: "ConfigSource | None" = None,
    respect_gitignore: bool = True,
    force_exclude: bool = False,
    record: WalkRecord | None = None,
) -> Iterator[SourcePath]:
    """Yield every Python file to scan, each once, in a stable order.

    ``exclude``: gitignore patterns relative to ``root`` (``--exclude``); ``configs``: where each
    folder's configured ``exclude`` comes from; ``respect_gitignore``: skip what git ignores;
    ``force_exclude``: apply all of it to the ``paths`` themselves too.

    What could not be walked (an unlistable folder, an out-of-tree symlink) is appended to
    ``problems`` as a notification, so the scan reports it instead of silently scanning less.
    ``record``: told what the answer rests on (:class:`WalkRecord`).
    """
    skip = PathFilter(root, list(exclude), configs, respect_gitignore)
    seen: set[Path] = set()
    notes: list[Notification] = problems if problems is not None else []
    for given in paths:
        if not given.exists() and not given.is_symlink():
            raise PathNotFound(f"path does not exist: {given}")
        if record is not None:  # (its own signature follows links: a re-pointed one differs)
            absolute = os.path.abspath(given)
            record.above(absolute)
            record.guards[absolute] = stat_signature(absolute)
        if force_exclude and skip.excluded_with_parents(given):
            continue
        if given.is_file() or (given.is_symlink() and not given.is_dir()):
            resolved = real_path(given)
            if resolved not in seen:
                seen.add(resolved)
                yield SourcePath(given, display_path(given, root), resolved)
            continue
        yield from _walk(given, real_path(given), root, skip, follow_symlinks, seen, notes, record)


def _walk(
    given: Path,
    tree: Path,
    root: Path,
    skip: PathFilter,
    follow_symlinks: bool,
    seen: set[Path],
    notes: list[Notification],
    record: WalkRecord | None = None,
) -> Iterator[SourcePath]:
    """The files under folder ``given`` (``tree``: resolved), as ``os.walk`` from the top would
    find them -- each folder's files in name order, then its kept subfolders in name order, never
    into a symlinked folder -- but from one ``scandir`` per folder: an entry's kind comes with
    the listing, and names, display paths and resolved paths are joined as strings per folder
    rather than worked out per file."""

    def unlistable(error: OSError) -> None:
        if record is not None:
            record.troubled = True
        where = display_path(Path(error.filename), root) if error.filename else display_path(given, root)
        notes.append(
            Notification(
                NotificationKind.UNREADABLE,
                f"cannot list this folder ({error.strerror or error}); the files in it were not scanned",
                where,
            )
        )

    # (folder as walked, its resolved path once known): a subfolder that is no symlink resolves
    # to its parent's resolved path joined with its name, so realpath runs once, not per folder
    stack: list[tuple[str, str | None]] = [(os.fspath(given), None)]
    while stack:
        dirpath, resolved_dir = stack.pop()
        if record is not None:
            record.listing(os.path.abspath(dirpath))
        listed = _list(dirpath, unlistable)
        if listed is None:
            continue
        dirnames, filenames = listed
        folder = os.path.abspath(dirpath)
        kept = []
        for d in sorted(dirnames):
            subfolder = os.path.join(dirpath, d)
            if d in SKIP_DIRS or d.endswith(".egg-info"):
                continue
            if _is_venv(subfolder):
                if record is not None:
                    record.looked_into(os.path.abspath(subfolder))
                continue
            if skip.excluded_in(folder, os.path.join(folder, d), is_dir=True):
                continue
            kept.append(subfolder)
        # the folder's display path, as given and resolved: worked out once per folder, each
        # file's joined to them (``folder_path / name`` parses only the name)
        shown: str | None = None
        folder_path: Path | None = None
        resolved_folder: Path | None = None
        for name, is_link in sorted(filenames):
            if not name.endswith(".py"):
                continue
            if skip.excluded_in(folder, os.path.join(folder, name), is_dir=False):
                continue
            if shown is None or folder_path is None:
                shown, folder_path = display_path(Path(folder), root), Path(dirpath)
            full = folder_path / name
            # as display_path(full) gives it: the folder's, joined by a "/" unless it ends in one (the root)
            rel = printable(name) if shown == "." else shown + ("" if shown.endswith("/") else "/") + printable(name)
            if is_link:
                if record is not None:
                    record.linked = True
                resolved = real_path(full)
                if not follow_symlinks and not _inside(resolved, tree):
                    notes.append(
                        Notification(
                            NotificationKind.SKIPPED,
                            "a symlink to a file outside the scanned folder; skipped (scan it with --follow-symlinks)",
                            rel,
                        )
                    )
                    continue
            else:
                if resolved_folder is None:
                    resolved_dir = resolved_dir or os.path.realpath(folder)
                    resolved_folder = Path(resolved_dir)
                resolved = resolved_folder / name
            if resolved in seen:
                continue
            seen.add(resolved)
            yield SourcePath(full, rel, resolved)
        # walked depth first in name order: the stack pops the first subfolder next
        if kept:
            resolved_dir = resolved_dir or os.path.realpath(folder)
            stack.extend(
                (sub, os.path.join(resolved_dir, os.path.basename(sub)))
                for sub in reversed(kept)
                if not os.path.islink(sub)
            )


def _list(dirpath: str, onerror: Callable[[OSError], None]) -> tuple[list[str], list[tuple[str, bool]]] | None:
    """A folder's subfolders (symlinks to folders included, as ``os.walk`` lists them) and its
    other entries with whether each is a symlink; None (and ``onerror`` told) when it cannot be
    listed."""
    dirnames: list[str] = []
    filenames: list[tuple[str, bool]] = []
    try:
        with os.scandir(dirpath) as entries:
            while True:
                try:
                    entry = next(entries)
                except StopIteration:
                    break
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    dirnames.append(entry.name)
                else:
                    try:
                        is_link = entry.is_symlink()
                    except OSError:
                        is_link = False
                    filenames.append((entry.name, is_link))
    except OSError as error:
        onerror(error)
        return None
    return dirnames, filenames
