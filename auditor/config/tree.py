"""Which configuration applies to which file.

A monorepo's packages keep their own settings: each file is checked under the
nearest ``pyproject.toml`` at or above its folder that has a
``[tool.resume-audit]`` table (up to the filesystem root; defaults when there
is none), whatever order the paths were given in -- ruff's rule. Settings are
not merged between files: the nearest one is the whole configuration.
``--config FILE`` (or a :class:`~resume_audit.config.settings.Config` handed to the
Python API) is :class:`FixedConfig`: one configuration for every file.

Command-line flags (:class:`Overrides`) apply on top of every file's
configuration. Which settings can differ per file and which are scan-wide is
decided here and in :func:`root_config`:

* per file: ``select``, ``ignore``, ``per-path-ignores``, ``effect-sinks``,
  ``safe-calls``, ``safe-urls``, ``read-only-tools``, and ``exclude`` (the
  config of the folder an entry sits in decides whether the walk skips it);
* scan-wide, from the root configuration: ``fail-on`` (one exit code),
  ``respect-gitignore`` and ``force-exclude`` (how the walk itself behaves).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol, Sequence

from resume_audit.config.settings import Config, has_table, load_config


@dataclass(frozen=True)
class Overrides:
    """Command-line values (already validated) that replace every file's own."""

    select: list[str] | None = None
    ignore: list[str] | None = None
    fail_on: str | None = None
    fail_on_unused_suppressions: bool | None = None

    def apply(self, config: Config) -> Config:
        """A copy of ``config`` with these values in force (lists copied: never shared)."""
        return dataclasses.replace(
            config,
            select=list(self.select)
            if self.select is not None
            else (None if config.select is None else list(config.select)),
            ignore=list(self.ignore) if self.ignore is not None else list(config.ignore),
            fail_on=self.fail_on if self.fail_on is not None else config.fail_on,
            fail_on_unused_suppressions=(
                config.fail_on_unused_suppressions
                if self.fail_on_unused_suppressions is None
                else self.fail_on_unused_suppressions
            ),
            exclude=list(config.exclude),
            per_path_ignores={k: list(v) for k, v in config.per_path_ignores.items()},
            effect_sinks=list(config.effect_sinks),
            safe_calls=list(config.safe_calls),
            safe_urls=list(config.safe_urls),
            read_only_tools=list(config.read_only_tools),
        )


class ConfigSource(Protocol):
    """Where a scan gets each folder's configuration. The same object comes back for every
    folder under one configuration: the engine groups files by it."""

    def for_dir(self, directory: Path) -> Config: ...


class FixedConfig:
    """One configuration for every file (``--config FILE``, or a Config given to the API)."""

    def __init__(self, config: Config) -> None:
        self.config = config

    def for_dir(self, directory: Path) -> Config:
        return self.config


class ConfigTree:
    """The nearest ``[tool.resume-audit]`` above each folder, loaded once per file and with the
    command-line overrides applied. Folders are looked up once each (one ``stat`` per folder on
    the way up), so asking for every file of a large tree costs little."""

    def __init__(self, known_rule_ids: Iterable[str], overrides: Overrides = Overrides()) -> None:
        self.known = list(known_rule_ids)
        self.overrides = overrides
        self._by_dir: dict[str, Config] = {}
        self._by_file: dict[str, Config] = {}
        self._default: Config | None = None

    def for_dir(self, directory: Path) -> Config:
        visited: list[str] = []
        current: str | None = os.path.abspath(directory)
        found: Config | None = None
        while current is not None:
            if current in self._by_dir:
                found = self._by_dir[current]
                break
            visited.append(current)
            candidate = os.path.join(current, "pyproject.toml")
            if has_table(Path(candidate)):
                found = self._load(candidate)
                break
            parent = os.path.dirname(current)
            current = parent if parent != current else None
        if found is None:
            found = self._defaults()
        for folder in visited:
            self._by_dir[folder] = found
        return found

    def _load(self, pyproject: str) -> Config:
        if pyproject not in self._by_file:
            self._by_file[pyproject] = self.overrides.apply(load_config(Path(pyproject), self.known))
        return self._by_file[pyproject]

    def _defaults(self) -> Config:
        if self._default is None:
            self._default = self.overrides.apply(Config())
        return self._default


def common_dir(paths: Sequence[Path]) -> Path:
    """The deepest folder containing every path (a file stands for its folder)."""
    dirs = [str(p.resolve() if p.is_dir() else p.resolve().parent) for p in paths]
    return Path(os.path.commonpath(dirs))


def root_config(source: ConfigSource, paths: Sequence[Path]) -> Config:
    """The configuration whose scan-wide settings (``fail-on``, ``respect-gitignore``,
    ``force-exclude``) the scan uses: the one for the deepest folder containing every scanned
    path. Argument order does not change it; for a single path it is that path's own."""
    return source.for_dir(common_dir(paths))
