"""Streamlit pages: which ``thread_id`` a page gives every browser session.

Streamlit re-runs a page's top-level code for every interaction, one run at a time per session
(:data:`resume_audit.handlers.known.apps.STREAMLIT_RUN`). A thread kept per session in
``st.session_state`` is therefore never resumed from two runs at once; a thread every session
shares is. RA302 and RA303 ask which one a page has.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from resume_audit.facts.model import FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import string_value
from resume_audit.facts.walk import visit_fast

if TYPE_CHECKING:
    from resume_audit.analysis.project import Project


def session_state_values(module: ModuleFacts, key: str) -> list[cst.BaseExpression]:
    """Values a Streamlit page stores under ``key`` in ``st.session_state`` (attribute or item
    assignment, ``setdefault``)."""
    out: list[cst.BaseExpression] = []

    def is_session_state(expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Attribute) and expr.attr.value == "session_state"

    class _V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                tgt = t.target
                if isinstance(tgt, cst.Attribute) and tgt.attr.value == key and is_session_state(tgt.value):
                    out.append(node.value)
                elif isinstance(tgt, cst.Subscript) and is_session_state(tgt.value) and tgt.slice:
                    el = tgt.slice[0].slice
                    if isinstance(el, cst.Index) and string_value(el.value) == key:
                        out.append(node.value)

        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if (
                isinstance(f, cst.Attribute)
                and f.attr.value == "setdefault"
                and is_session_state(f.value)
                and len(node.args) == 2
            ):
                if string_value(node.args[0].value) == key:
                    out.append(node.args[1].value)

    visit_fast(module.tree, _V())
    return out


def session_shared(
    value: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: "Project",
    depth: int = 0,
) -> bool:
    """Is a Streamlit page's ``thread_id`` the same for every browser session: a literal, a
    module constant, or a ``st.session_state`` entry only ever set to a literal? A per-session
    value (``str(uuid4())`` kept in session state) is not: Streamlit runs one script run per
    session at a time, so such a thread is never resumed from two runs at once."""
    if value is None or depth > 5:
        return False
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.Integer)):
        return isinstance(value, cst.Integer) or string_value(value) is not None
    if isinstance(value, cst.Name):
        found = project.resolver(module).binding_value(value.value, scope, module.order(value))
        return (
            found is not None
            and found[0].kind == "assign"
            and session_shared(found[0].value, found[1], module, project, depth + 1)
        )
    key = None
    if (
        isinstance(value, cst.Attribute)
        and isinstance(value.value, cst.Attribute)
        and value.value.attr.value == "session_state"
    ):
        key = value.attr.value
    elif (
        isinstance(value, cst.Subscript)
        and isinstance(value.value, cst.Attribute)
        and value.value.attr.value == "session_state"
        and value.slice
    ):
        el = value.slice[0].slice
        key = string_value(el.value) if isinstance(el, cst.Index) else None
    if key is not None:
        values = session_state_values(module, key)
        return bool(values) and all(session_shared(v, None, module, project, depth + 1) for v in values)
    return False
