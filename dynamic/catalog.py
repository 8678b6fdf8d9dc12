"""Metadata of the dynamic findings (RA701..RA708 and whatever a registered probe adds).

Each rule is declared by the probe module that owns it
(:class:`~resume_audit.dynamic.probes.base.DynamicRule`); this module lists
them for the SARIF reporter, ``resume-audit explain`` and the docs, which
read static :class:`resume_audit.rules.Rule` classes and these descriptors
through the same attributes, so a SARIF run can mix static and dynamic
results under one rule table.
"""

from __future__ import annotations

from typing import Any

from resume_audit.dynamic.probes import registry
from resume_audit.dynamic.probes.base import DynamicRule

__all__ = ["DYNAMIC_RULES", "DynamicRule", "all_dynamic_rules", "dynamic_rule"]


def all_dynamic_rules() -> tuple[DynamicRule, ...]:
    """Every dynamic rule descriptor of the registered probes, sorted by id."""
    return tuple(sorted((rule for probe in registry() for rule in probe.catalog), key=lambda r: r.id))


def dynamic_rule(rule_id: str) -> DynamicRule | None:
    wanted = rule_id.upper()
    return next((rule for rule in all_dynamic_rules() if rule.id == wanted), None)


def __getattr__(name: str) -> Any:
    if name == "DYNAMIC_RULES":  # read when asked, so a probe registered later is in it
        return all_dynamic_rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
