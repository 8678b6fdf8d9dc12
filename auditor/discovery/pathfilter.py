"""Which paths a scan leaves out: ``exclude`` patterns and what git ignores.

Every pattern has gitignore semantics (through :mod:`pathspec`), relative to a
base folder: a config file's ``exclude`` to that file's folder, ``--exclude``
to the report root. So ``migrations/`` names a folder at any depth,
``/scripts/one_off.py`` one file beside the config, ``*.gen.py`` any such file,
``!keep.py`` re-includes, and ``*`` does not cross a ``/`` (``**`` does). A
pattern only ever matches paths inside its base folder: a file outside it is
not excluded because some folder above the project happens to share a name.

The discovery walk asks :meth:`PathFilter.excluded` about each entry it meets
(never entering a skipped folder); :meth:`PathFilter.excluded_with_parents`
is the ``--force-exclude`` question for a path named on the command line,
which no walk reached.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from resume_audit.config.settings import Config
from resume_audit.config.tree import ConfigSource
from resume_audit.discovery.gitignore import GitIgnore, matchable, relative_posix

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


@functools.lru_cache(maxsize=256)
def _compile(patterns: tuple[str, ...]) -> GitIgnoreSpec:
    from pathspec import GitIgnoreSpec  # only once there are patterns

    return GitIgnoreSpec.from_lines(patterns)


@dataclass(frozen=True)
class PatternSet:
    """Exclude patterns (gitignore syntax) and the folder they are relative to."""

    base: str
    patterns: tuple[str, ...]

    def matches(self, absolute: str, is_dir: bool) -> bool:
        if not self.patterns or absolute == self.base:
            return False
        prefix = self.base if self.base.endswith(os.sep) else self.base + os.sep
        if not absolute.startswith(prefix):
            return False
        rel = matchable(relative_posix(absolute, self.base)) + ("/" if is_dir else "")
        return _compile(self.patterns).match_file(rel)


class PathFilter:
    """The exclusion rules of one scan: ``--exclude`` (relative to ``root``), each folder's
    configured ``exclude`` (the configuration that applies to the folder an entry sits in),
    and, when ``respect_gitignore``, git's ignore files."""

    def __init__(
        self, root: Path, exclude: Sequence[str], configs: ConfigSource | None, respect_gitignore: bool
    ) -> None:
        self.root = os.path.abspath(root)
        self.extra = PatternSet(self.root, tuple(exclude))
        self.configs = configs
        self.gitignore = GitIgnore() if respect_gitignore else None
        self._config_sets: dict[int, PatternSet] = {}
        self._folder_configs: dict[str, Config] = {}

    def _configured(self, config: Config) -> PatternSet:
        key = id(config)
        if key not in self._config_sets:
            base = os.path.abspath(config.base_dir) if config.base_dir is not None else self.root
            self._config_sets[key] = PatternSet(base, tuple(config.exclude))
        return self._config_sets[key]

    def excluded(self, path: Path | str, is_dir: bool) -> bool:
        """Whether the walk skips ``path`` (a folder: and everything in it)."""
        absolute = os.path.abspath(path)
        return self.excluded_in(os.path.dirname(absolute), absolute, is_dir)

    def excluded_in(self, folder: str, absolute: str, is_dir: bool) -> bool:
        """:meth:`excluded` for ``absolute`` (normalised), an entry of ``folder``: what is worked
        out per folder (its configuration, the ignore files above it) is worked out once."""
        if self.extra.matches(absolute, is_dir):
            return True
        if self.configs is not None:
            config = self._folder_configs.get(folder)
            if config is None:
                config = self._folder_configs[folder] = self.configs.for_dir(Path(folder))
            if config.exclude and self._configured(config).matches(absolute, is_dir):
                return True
        return self.gitignore is not None and self.gitignore.ignored_in(folder, absolute, is_dir)

    def excluded_with_parents(self, path: Path) -> bool:
        """Whether ``path`` or any folder above it is skipped: what a walk from the top would
        have decided about a path named on the command line (``--force-exclude``)."""
        absolute = os.path.abspath(path)
        is_dir = os.path.isdir(absolute)
        current = absolute
        while True:
            if self.excluded(Path(current), is_dir):
                return True
            parent = os.path.dirname(current)
            if parent == current:
                return False
            current, is_dir = parent, True
