"""The pydantic-graph programs ``audit`` can sweep, read off a module: each module-level
``graph = Graph(nodes=(...))``, swept from its first node (the sweep's ``start``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from resume_audit.audit.entrypoints import Discovery, Found
from resume_audit.audit.syntax import assigned, callee, positional, top_level_statements

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts


def _first_node(call: cst.BaseExpression) -> str | None:
    """The first of ``Graph(nodes=(A, B))`` (or ``Graph((A, B))``): where a run starts."""
    if not isinstance(call, cst.Call):
        return None
    args = positional(call)
    nodes = next(
        (a.value for a in call.args if a.keyword is not None and a.keyword.value == "nodes"),
        args[0].value if args and not args[0].star else None,
    )
    if isinstance(nodes, (cst.Tuple, cst.List)) and nodes.elements:
        first = nodes.elements[0]
        if isinstance(first, cst.Element) and isinstance(first.value, cst.Name):
            return first.value.value
    return None


def find(facts: ModuleFacts) -> list[Found]:
    """The module's ``Graph(...)`` assignments, in statement order."""
    out = []
    for statement in top_level_statements(facts):
        names, value = assigned(statement)
        if names and value is not None and callee(value) == "Graph":
            start = _first_node(value)
            out.append(Found(names[0], "graph", facts.line(statement), run_config=(("start", start),) if start else ()))
    return out


DISCOVERY = Discovery(find)
