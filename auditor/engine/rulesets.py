"""Which rules a configuration runs, and the pre-filter that decides which files they need parsed.

Two forms of the same answer: the rule classes (what the analysis runs; importing them imports
LibCST) and their :class:`~resume_audit.catalog.ruleindex.RuleInfo` (what the scan's set-up needs:
read from a snapshot in the cache when there is one, so a warm scan imports no rule module).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from resume_audit.catalog.ruleindex import RuleInfo, static_rules
from resume_audit.config.settings import Config
from resume_audit.reading.prefilter import Prefilter, prefilter_for

if TYPE_CHECKING:
    from resume_audit.rules import Rule


def prefilter_of(rules: Sequence[Rule | RuleInfo]) -> Prefilter:
    """The pre-filter for these (active) rules: instances of the rule classes, or their
    :class:`~resume_audit.catalog.ruleindex.RuleInfo` (what a scan has before it analyses anything)."""
    return prefilter_for(tuple(r if isinstance(r, RuleInfo) else type(r) for r in rules))


def active_rules(config: Config) -> list[Rule]:
    """Instances of the rules ``config`` enables, in catalog order."""
    from resume_audit.rules import all_rules

    return [rule() for rule in all_rules() if config.rule_enabled(rule.id)]


def active_rule_infos(config: Config, cache_dir: Path | None = None) -> list[RuleInfo]:
    """:func:`active_rules` as the scan's set-up needs them, without importing the rules."""
    return [rule for rule in static_rules(cache_dir) if config.rule_enabled(rule.id)]
