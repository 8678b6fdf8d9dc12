"""The CrewAI programs ``audit`` can sweep, read off a module: each module-level ``Flow`` subclass."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from resume_audit.audit.entrypoints import Discovery, Found
from resume_audit.audit.syntax import base_names, top_level_statements

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts


def find(facts: ModuleFacts) -> list[Found]:
    """The module's ``Flow`` subclasses (``class Refunds(Flow[State])``), in statement order."""
    return [
        Found(s.name.value, "flow", facts.line(s))
        for s in top_level_statements(facts)
        if isinstance(s, cst.ClassDef) and "Flow" in base_names(s)
    ]


DISCOVERY = Discovery(find)
