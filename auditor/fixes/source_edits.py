"""Edits that several rules' automatic fixes make: add an import, add a parameter, add a keyword.

Each returns an :class:`~resume_audit.findings.Edit` that changes only the text it must -- an
inserted line, an inserted parameter, an inserted keyword argument (the call around it keeps its
comments and layout) -- or ``None`` when the edit cannot be made without guessing (the name is
already bound to something else, a call passes ``**kwargs``). A fix that gets ``None`` for any
of its edits is not offered.
"""

from __future__ import annotations

import libcst as cst

from resume_audit.facts.model import FunctionInfo, ModuleFacts
from resume_audit.findings import Edit, Span


def local_name_of(module: ModuleFacts, qualified: frozenset[str] | set[str]) -> str | None:
    """The name the module binds, by import, to one of ``qualified`` (``RunnableConfig`` imported
    from ``langchain_core.runnables``), or None."""
    return next((name for name, target in sorted(module.imports.items()) if target in qualified), None)


def is_bound(module: ModuleFacts, name: str) -> bool:
    """Whether ``name`` means something at module level already (import, assignment, def, class)."""
    return (
        name in module.imports
        or any(b.name == name for b in module.module_bindings)
        or any(c.name == name for c in module.classes)
        or any(f.name == name and f.parent is None and f.class_info is None for f in module.functions)
    )


def import_edit(module: ModuleFacts, statement: str, binds: str) -> Edit | None:
    """``statement`` (``import hashlib``, ``from crewai import CheckpointConfig``) as a line of its
    own after the module's last top-level import, or -- in a module with none -- after its
    docstring. None when ``binds`` is already bound to something else (the fix would shadow it)."""
    if is_bound(module, binds):
        return None
    line = None
    for statement_node in module.tree.body:
        if isinstance(statement_node, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement_node.body
        ):
            line = module.span(statement_node.body[-1]).end_line + 1
    if line is None:
        body = module.tree.body
        docstring = (
            body
            and isinstance(body[0], cst.SimpleStatementLine)
            and len(body[0].body) == 1
            and isinstance(body[0].body[0], cst.Expr)
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        )
        line = module.span(body[0]).end_line + 1 if docstring else 1
    return Edit(Span(module.display_path, line, 1, line, 1), f"{statement}\n")


def add_parameter_edit(fn: FunctionInfo, text: str) -> Edit | None:
    """Insert ``text`` (``config``, ``config: RunnableConfig``) as a positional parameter after the
    function's last positional one: before ``*args`` and keyword-only parameters, so callers that
    pass those are unaffected. None when the function has no positional parameter to follow, the
    last one has a default (a required parameter cannot follow it) or is positional-only."""
    params = fn.node.params
    if not params.params or params.params[-1].default is not None:
        return None
    last = params.params[-1]
    end = fn.module.span(last.annotation.annotation if last.annotation is not None else last.name)
    return Edit(Span(fn.module.display_path, end.end_line, end.end_col, end.end_line, end.end_col), f", {text}")


def add_keyword_edit(module: ModuleFacts, call: cst.Call, keyword: str, value: str) -> Edit | None:
    """Insert ``keyword=value`` after the call's last argument, as an insertion (nothing else in the
    call is rewritten: comments and layout stay). One argument per line stays one per line: after
    a trailing comma that ends a line, the new argument is a line of its own, indented like the
    last one. None when the call has no arguments, already passes ``keyword`` or unpacks
    ``**kwargs`` (which might hold it)."""
    args = call.args
    if (
        not args
        or any(a.keyword is not None and a.keyword.value == keyword for a in args)
        or any(a.star == "**" for a in args)
    ):
        return None
    last = args[-1]
    text = f"{keyword}={value}"
    if isinstance(last.comma, cst.Comma):
        comma = module.span(last.comma)
        if isinstance(last.comma.whitespace_after, cst.ParenthesizedWhitespace):
            indent = " " * (module.span(last).start_col - 1)
            line = comma.end_line + 1  # after the line the comma ends (and any comment on it)
            return Edit(Span(module.display_path, line, 1, line, 1), f"{indent}{text},\n")
        return Edit(
            Span(module.display_path, comma.end_line, comma.end_col, comma.end_line, comma.end_col), f" {text},"
        )
    end = module.span(last)
    return Edit(Span(module.display_path, end.end_line, end.end_col, end.end_line, end.end_col), f", {text}")
