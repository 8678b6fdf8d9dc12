"""Grouping by configuration: each file is analysed under the configuration that applies to it.

A monorepo's packages keep their own rules and effect sinks (:mod:`resume_audit.config.tree`):
files sharing one configuration form a :class:`Group`, with its own rules, cache key and
analyser; the project every analysis looks into is still the whole scan.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from resume_audit.catalog.ruleindex import RuleInfo, static_rules
from resume_audit.config.settings import Config
from resume_audit.config.tree import ConfigSource
from resume_audit.engine.rulesets import active_rule_infos

if TYPE_CHECKING:
    from resume_audit.cache.fileresult import FileResult
    from resume_audit.engine.analyzer import Analyzer


@dataclass(frozen=True)
class Group:
    """The files analysed under one configuration: its rules and its cache key part."""

    index: int
    config: Config
    rule_ids: tuple[str, ...]

    @property
    def rule_types(self) -> tuple[RuleInfo, ...]:
        """The group's rules as the pre-filter takes them (their classes are not needed to read files)."""
        return tuple(r for r in static_rules() if r.id in self.rule_ids)


class Groups:
    """The configuration groups of one scan, in the order their first file was met."""

    def __init__(self, source: ConfigSource) -> None:
        self.source = source
        self.all: list[Group] = []
        self._by_config: dict[int, Group] = {}
        self._by_dir: dict[str, Group] = {}
        self._by_spelling: dict[str, Group] = {}

    def of(self, path: Path) -> Group:
        """The group of the file at ``path`` (the configuration of the folder it sits in)."""
        # by the folder as the path spells it first: a walk hands over a folder's files one after
        # another, and ``abspath`` (the working directory, normalising) costs more than the lookup
        spelled = os.path.dirname(path)
        group = self._by_spelling.get(spelled)
        if group is None:
            folder = os.path.dirname(os.path.abspath(path))
            group = self._by_spelling[spelled] = self._by_dir.get(folder) or self.of_dir(Path(folder))
        return group

    def of_dir(self, directory: Path) -> Group:
        folder = os.path.abspath(directory)
        group = self._by_dir.get(folder)
        if group is None:
            config = self.source.for_dir(Path(folder))
            group = self._by_config.get(id(config))
            if group is None:
                group = Group(len(self.all), config, tuple(r.id for r in active_rule_infos(config)))
                self.all.append(group)
                self._by_config[id(config)] = group
            self._by_dir[folder] = group
        return group

    def rule_ids(self) -> list[str]:
        """Every rule some group runs, in catalog order."""
        wanted = {i for g in self.all for i in g.rule_ids}
        return [r.id for r in static_rules() if r.id in wanted]


class GroupAnalyzers:
    """One :class:`~resume_audit.engine.analyzer.Analyzer` per configuration group, built when the
    group's first file comes: a worker handed only one package's files never builds the others'."""

    def __init__(self, groups: Sequence[Group], make: Callable[[Group], Analyzer]) -> None:
        self.groups = groups
        self.make = make
        self.built: dict[int, Analyzer] = {}
        #: groups whose summaries could not all be computed while checking the cache (a module
        #: timed out): their remaining cached results are not trusted this scan
        self.unsure: set[int] = set()
        #: per group, the summaries other pool workers computed this scan (see :mod:`resume_audit.engine.pool`)
        self.shared: dict[int, dict[tuple[str, Path], object]] = {}

    def of(self, group: int) -> Analyzer:
        if group not in self.built:
            analyzer = self.built[group] = self.make(self.groups[group])
            analyzer.summaries.shared = self.shared.setdefault(group, {})
        return self.built[group]

    def analyse(self, group: int, path: Path) -> FileResult:
        return self.of(group).analyse(path)
