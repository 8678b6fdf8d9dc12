"""Walking a LibCST tree fast: over each node's dataclass fields, skipping whitespace and tokens.

LibCST's own visitor machinery rebuilds and re-validates every node it passes, which costs
about as much as parsing; walking the fields directly is ~5x cheaper. The collector
(:mod:`resume_audit.facts.collect`) walks every module a scan loads this way, and
:func:`visit_fast` runs any ``visit_X`` / ``leave_X`` visitor over a subtree the same way. This is
the scan's hot path (benchmarks/README.md): the per-type memos are read inline on purpose.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import libcst as cst

#: Fields that only hold whitespace, punctuation or comments: never walked.
_SKIP_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "comma",
        "semicolon",
        "leading_lines",
        "lines_after_decorators",
        "header",
        "footer",
        "newline",
        "equal",
        "colon",
        "dot",
        "star",
        "asynchronous",
        "operator",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "default_comma",
        "star_tok",
        "whitespace",
        "trailing_whitespace",
        "indent",
    }
)
_TOKEN_TYPES = (
    cst.BaseParenthesizableWhitespace,
    cst.Newline,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Comma,
    cst.Semicolon,
    cst.LeftParen,
    cst.RightParen,
    cst.AssignEqual,
    cst.Colon,
    cst.Dot,
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def fields_of(tp: type) -> tuple[str, ...]:
    """The fields of node type ``tp`` that can hold nodes worth walking (memoised per type)."""
    names = _FIELDS.get(tp)
    if names is None:
        names = _FIELDS[tp] = tuple(
            f.name for f in dataclasses.fields(tp) if f.name not in _SKIP_FIELDS and "whitespace" not in f.name
        )
    return names


_IS_TOKEN: dict[type, bool] = {}


def _walkable(value: object) -> bool:
    """A CST node worth walking (not whitespace or punctuation); memoised per type because
    ``isinstance`` against LibCST's abstract base classes is slow."""
    tp = type(value)
    verdict = _IS_TOKEN.get(tp)
    if verdict is None:
        verdict = _IS_TOKEN[tp] = isinstance(value, cst.CSTNode) and not isinstance(value, _TOKEN_TYPES)
    return verdict


def children(node: cst.CSTNode, names: tuple[str, ...]) -> list[cst.CSTNode]:
    """The walkable values of ``node``'s fields ``names``, in order. Called once per node of every
    module a scan loads: the per-type verdicts are read inline rather than through a call per child."""
    is_token = _IS_TOKEN
    out: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name, None)
        if value is None:
            continue
        kind = type(value)
        if kind is list or kind is tuple:
            for child in value:
                walk = is_token.get(type(child))
                if walk is None:
                    walk = _walkable(child)
                if walk:
                    out.append(child)
        else:
            walk = is_token.get(kind)
            if walk is None:
                walk = _walkable(value)
            if walk:
                out.append(value)
    return out


def visit_fast(node: cst.CSTNode, visitor: object) -> None:
    """Run a visitor's ``visit_X`` / ``leave_X`` methods over ``node``'s subtree without
    LibCST's rebuilding visit machinery (a ``visit_X`` returning False skips the children).
    A node type's handlers and fields are looked up once per walk, and a node is revisited on the
    way out only when its type has a ``leave_X``."""
    handlers: dict[type, tuple[Any, Any, tuple[str, ...]]] = {}
    stack: list[tuple[bool, cst.CSTNode]] = [(False, node)]
    pop, push = stack.pop, stack.append
    while stack:
        leaving, cur = pop()
        tp = type(cur)
        found_handlers = handlers.get(tp)
        if found_handlers is None:
            name = tp.__name__
            found_handlers = handlers[tp] = (
                getattr(visitor, "visit_" + name, None),
                getattr(visitor, "leave_" + name, None),
                fields_of(tp),
            )
        visit, leave, fields = found_handlers
        if leaving:
            leave(cur)
            continue
        if visit is not None and visit(cur) is False:
            continue
        if leave is not None:
            push((True, cur))
        for child in reversed(children(cur, fields)):
            push((False, child))
