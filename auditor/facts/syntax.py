"""Small, pure helpers over LibCST nodes: arguments, literals, statements."""

from __future__ import annotations

from typing import Callable, Iterator

import libcst as cst

from resume_audit.facts.walk import visit_fast


def receiver(call: cst.Call) -> cst.BaseExpression | None:
    """The object a method is called on -- ``client`` in ``client.post(...)``, ``get_store()`` in
    ``get_store().save(x)`` -- or None when the callee is no attribute (``post(...)``)."""
    func = call.func
    return func.value if isinstance(func, cst.Attribute) else None


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call, index: int) -> cst.Arg | None:
    i = 0
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            if i == index:
                return arg
            i += 1
    return None


def argument(call: cst.Call, index: int, name: str) -> cst.BaseExpression | None:
    """The value passed as positional ``index`` or keyword ``name``."""
    arg = keyword(call, name) or positional(call, index)
    return arg.value if arg is not None else None


def string_value(expr: cst.BaseExpression | None) -> str | None:
    """The text of a string literal, implicit concatenation, or the static parts of an f-string."""
    if expr is None:
        return None
    if isinstance(expr, cst.SimpleString):
        try:
            value = expr.evaluated_value
        except Exception:  # malformed escape sequences: treat as unknown
            return None
        return value if isinstance(value, str) else value.decode("latin-1")
    if isinstance(expr, cst.ConcatenatedString):
        left, right = string_value(expr.left), string_value(expr.right)
        if left is None or right is None:
            return None
        return left + right
    if isinstance(expr, cst.FormattedString):
        return "".join(p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in expr.parts)
    return None


def bool_value(expr: cst.BaseExpression | None) -> bool | None:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def is_none(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def dict_items(expr: cst.Dict) -> Iterator[tuple[str | None, cst.BaseExpression]]:
    """(literal key or None, value) pairs of a dict display; ``**x`` yields (None, x)."""
    for el in expr.elements:
        if isinstance(el, cst.DictElement):
            yield string_value(el.key), el.value
        elif isinstance(el, cst.StarredDictElement):
            yield None, el.value


#: a node's parent, or None at the top (``ModuleFacts.parent``)
Parents = Callable[[cst.CSTNode], "cst.CSTNode | None"]


def statement_of(node: cst.CSTNode, parents: Parents) -> cst.CSTNode:
    """The innermost statement (simple statement or compound) containing ``node``."""
    cur: cst.CSTNode | None = node
    while cur is not None and not isinstance(cur, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
        cur = parents(cur)
    return cur if cur is not None else node


def iter_subtree_calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    """Every call inside ``node`` (including nested defs: callers filter as they need)."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.Call):
            yield cur
        stack.extend(reversed(cur.children))


def contains(outer: cst.CSTNode, inner: cst.CSTNode, parents: Parents) -> bool:
    cur: cst.CSTNode | None = inner
    while cur is not None:
        if cur is outer:
            return True
        cur = parents(cur)
    return False


def names_in(node: cst.CSTNode, *, self_attributes: bool = False) -> set[str]:
    """Every bare name used anywhere in ``node``'s subtree; with ``self_attributes`` also
    every ``self.<attr>`` as the string ``"self.<attr>"``."""
    out: set[str] = set()
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.Name):
            out.add(cur.value)
        elif (
            self_attributes
            and isinstance(cur, cst.Attribute)
            and isinstance(cur.value, cst.Name)
            and cur.value.value == "self"
        ):
            out.add(f"self.{cur.attr.value}")
        stack.extend(cur.children)
    return out


def subscript_keys_assigned(body: cst.CSTNode, name: str) -> list[str]:
    """Literal keys assigned as ``name["key"] = ...`` anywhere in ``body``."""
    keys: list[str] = []

    class _V:
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            t = node.target
            if isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) and t.value.value == name and t.slice:
                el = t.slice[0].slice
                if isinstance(el, cst.Index):
                    key = string_value(el.value)
                    if key is not None:
                        keys.append(key)

    visit_fast(body, _V())
    return keys


def contains_node(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    """Is ``inner`` ``outer`` itself or somewhere below it (a walk, no parent map needed)?"""
    stack = [outer]
    while stack:
        cur = stack.pop()
        if cur is inner:
            return True
        stack.extend(cur.children)
    return False
