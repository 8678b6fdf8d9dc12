"""The rule catalog: one module per rule, discovered by name (``raNNN_*.py``).

Ids are stable: rules are added, never renumbered.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from resume_audit.rules.base import Example, Rule, RuleContext, Trigger

__all__ = ["Example", "Rule", "RuleContext", "Trigger", "all_rules", "rule_by_id"]


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class, sorted by id."""
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("ra"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
            ):
                found.append(value)
    ids = [r.id for r in found]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise RuntimeError(f"duplicate rule ids: {sorted(duplicates)}")
    return tuple(sorted(found, key=lambda r: r.id))


def rule_by_id(rule_id: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.id == rule_id.upper():
            return rule
    return None
