"""The LlamaIndex programs ``audit`` can sweep, read off a module: each module-level ``Workflow`` subclass."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from resume_audit.audit.entrypoints import Discovery, Found
from resume_audit.audit.syntax import base_names, top_level_statements

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts


def find(facts: ModuleFacts) -> list[Found]:
    """The module's ``Workflow`` subclasses, in statement order."""
    return [
        Found(s.name.value, "workflow", facts.line(s))
        for s in top_level_statements(facts)
        if isinstance(s, cst.ClassDef) and "Workflow" in base_names(s)
    ]


DISCOVERY = Discovery(find)
