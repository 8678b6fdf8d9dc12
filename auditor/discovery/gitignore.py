"""What git ignores: ``.gitignore`` files and ``.git/info/exclude``, with git's own semantics.

A scan skips what the repository says is not source (generated clients,
vendored copies, build output under an unusual name), as ruff does. The
patterns are interpreted by :mod:`pathspec` (negation, anchoring, ``**``,
directory-only patterns), never by a hand-written matcher. As in git:

* a ``.gitignore`` applies to the folder it sits in and everything below;
  a deeper file's verdict wins over a shallower one's, and within a file the
  last matching pattern wins;
* ``.gitignore`` files count only inside a git work tree (a folder with a
  ``.git`` above it), and only up to the nearest such folder: a nested
  repository or submodule is not governed by its parent's files;
* ``.git/info/exclude`` is the weakest source (consulted when no
  ``.gitignore`` has a matching pattern).

The user's global excludes file (``core.excludesFile``) is not read: it is
personal, and a scan must find the same files on every machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


def _read_spec(path: str) -> GitIgnoreSpec | None:
    """The patterns of one ignore file (None when absent, unreadable or empty)."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    from pathspec import GitIgnoreSpec  # imported once there is a pattern to compile

    spec = GitIgnoreSpec.from_lines([matchable(line) for line in lines])
    return spec if len(spec) else None


@dataclass(frozen=True)
class _Chain:
    """The ignore sources that apply to the entries of one folder."""

    repo: str
    #: (folder, its .gitignore), from the entry's own folder up to the repository root
    specs: tuple[tuple[str, GitIgnoreSpec], ...]
    info: GitIgnoreSpec | None


class GitIgnore:
    """Answers "does git ignore this path?" for paths in any number of repositories.

    Ignore files are read once each and repository roots found once per folder: the
    discovery walk asks about every entry it meets."""

    def __init__(self) -> None:
        self._repos: dict[str, str | None] = {}
        self._specs: dict[str, GitIgnoreSpec | None] = {}
        self._info: dict[str, GitIgnoreSpec | None] = {}
        self._chains: dict[str, _Chain | None] = {}

    def _repo_root(self, directory: str) -> str | None:
        """The nearest folder at or above ``directory`` holding ``.git`` (a folder, or the file
        a worktree or submodule has)."""
        visited: list[str] = []
        current: str | None = directory
        found: str | None = None
        while current is not None:
            if current in self._repos:
                found = self._repos[current]
                break
            visited.append(current)
            if os.path.lexists(os.path.join(current, ".git")):
                found = current
                break
            parent = os.path.dirname(current)
            current = parent if parent != current else None
        for folder in visited:
            self._repos[folder] = found
        return found

    def _spec(self, directory: str) -> GitIgnoreSpec | None:
        if directory not in self._specs:
            self._specs[directory] = _read_spec(os.path.join(directory, ".gitignore"))
        return self._specs[directory]

    def _info_exclude(self, repo: str) -> GitIgnoreSpec | None:
        if repo not in self._info:
            git = os.path.join(repo, ".git")
            # a worktree's or submodule's ``.git`` is a file; its info/exclude is not worth chasing
            self._info[repo] = _read_spec(os.path.join(git, "info", "exclude")) if os.path.isdir(git) else None
        return self._info[repo]

    def _chain(self, parent: str) -> _Chain | None:
        """What decides about the entries of folder ``parent``: the repository, the ignore files
        from ``parent`` up to it (deepest first) and ``.git/info/exclude``; None outside a
        repository. Worked out once per folder: a walk asks about every entry of it."""
        if parent in self._chains:
            return self._chains[parent]
        repo = self._repo_root(parent)
        chain = None
        if repo is not None:
            specs: list[tuple[str, GitIgnoreSpec]] = []
            folder = parent
            while True:
                spec = self._spec(folder)
                if spec is not None:
                    specs.append((folder, spec))
                if folder == repo:
                    break
                folder = os.path.dirname(folder)
            chain = _Chain(repo, tuple(specs), self._info_exclude(repo))
        self._chains[parent] = chain
        return chain

    def ignored(self, path: Path | str, is_dir: bool) -> bool:
        """Whether git ignores ``path`` itself (its folders are the caller's business: a
        walk never enters an ignored folder)."""
        absolute = os.path.abspath(path)
        return self.ignored_in(os.path.dirname(absolute), absolute, is_dir)

    def ignored_in(self, parent: str, absolute: str, is_dir: bool) -> bool:
        """:meth:`ignored` for ``absolute`` (normalised), an entry of the folder ``parent``."""
        chain = self._chain(parent)
        if chain is None or absolute == chain.repo or os.path.basename(absolute) == ".git":
            return False
        suffix = "/" if is_dir else ""
        for folder, spec in chain.specs:
            verdict = spec.check_file(matchable(relative_posix(absolute, folder)) + suffix).include
            if verdict is not None:
                return verdict
        if chain.info is not None:
            return bool(chain.info.check_file(matchable(relative_posix(absolute, chain.repo)) + suffix).include)
        return False


def relative_posix(absolute: str, folder: str) -> str:
    """``absolute`` (normalised, inside ``folder``) relative to ``folder``, with ``/``: what
    ``Path(os.path.relpath(absolute, folder)).as_posix()`` gives, without its cost per entry."""
    rel = absolute[len(folder) :] if folder.endswith(os.sep) else absolute[len(folder) + 1 :]
    return rel if os.sep == "/" else rel.replace(os.sep, "/")


def matchable(name: str) -> str:
    """``name`` as the pattern matcher can take it. A file name that is not UTF-8 reaches Python
    with its bad bytes as surrogates, which pathspec's regex engine refuses (the whole scan used
    to fail on such a name in any repository with a ``.gitignore``); each bad byte becomes
    U+FFFD -- one character, as git's ``?`` matches one byte -- in names and patterns alike."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
