"""The ToyFlow programs ``audit`` can sweep: each module-level ``Pipeline`` subclass."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from resume_audit.audit.entrypoints import Discovery, Found
from resume_audit.audit.syntax import base_names, top_level_statements

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts


def find(facts: ModuleFacts) -> list[Found]:
    return [Found(s.name.value, "pipeline", facts.line(s)) for s in top_level_statements(facts)
            if isinstance(s, cst.ClassDef) and "Pipeline" in base_names(s)]


DISCOVERY = Discovery(find)
