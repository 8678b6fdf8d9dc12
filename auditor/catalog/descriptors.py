"""Every rule id resume-audit can report, static and dynamic, with its metadata.

Reporters (SARIF ``tool.driver.rules``, ``resume-audit rules``, ``explain``)
read descriptors through this one function, so a rule is described the same
way everywhere.
"""

from __future__ import annotations

from typing import Protocol

from resume_audit.findings import Severity


class RuleDescriptor(Protocol):
    """Read-only rule metadata: a static rule (class attributes) or a frozen :class:`DynamicRule`."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def properties(self) -> tuple[str, ...]: ...

    @property
    def severity(self) -> Severity: ...

    @property
    def frameworks(self) -> tuple[str, ...]: ...

    @property
    def summary(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def runtime(self) -> str: ...

    @property
    def fix(self) -> str: ...


def descriptors() -> dict[str, RuleDescriptor]:
    """All rules by id, sorted by id: the static rule classes and the dynamic stage's RA701..RA708."""
    from resume_audit.dynamic.catalog import all_dynamic_rules
    from resume_audit.rules import all_rules

    found: dict[str, RuleDescriptor] = {r.id: r for r in all_rules()}
    found.update({r.id: r for r in all_dynamic_rules()})
    return dict(sorted(found.items()))


def rule_name(rule_id: str) -> str | None:
    """A rule's name (None: no such rule), for a report's finding lines. Looked up without
    importing the rule modules (:mod:`resume_audit.catalog.ruleindex`): a warm scan that analysed nothing
    should not import the analysis only to print names."""
    from resume_audit.catalog.ruleindex import rule_name as static_name
    from resume_audit.dynamic.catalog import all_dynamic_rules

    dynamic = next((r.name for r in all_dynamic_rules() if r.id == rule_id), None)
    return dynamic if dynamic is not None else static_name(rule_id)  # as descriptors(): a dynamic id wins
