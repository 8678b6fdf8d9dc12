"""What the project's own code does with the programs discovery found: the calls that build them.

A factory is swept as the project calls it. Two things are read off those calls (on the scan's parse,
nothing is imported):

- **the arguments**: ``build_graph(checkpointer=saver, interrupt_before=["approve"])`` in the project's
  server means the deployed graph pauses before ``approve``; a sweep that called the factory with nothing
  would never see that pause. The *literal* keyword arguments callers pass (strings, numbers, booleans,
  ``None`` and lists, tuples and dicts of those) are passed to the factory by the sweep, beside its own
  checkpointer; when callers disagree on a value, the first caller's (in file and line order) is used.
- **module-level results**: ``graph = create_graph()`` in another module is the program as the project
  serves it: it is its own entry point (a *built graph*), and the factory it calls is then not swept
  again -- one program, one sweep, one report of each hazard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

import libcst as cst

from resume_audit.audit.syntax import dotted

if TYPE_CHECKING:
    from resume_audit.facts.collect import ModuleFacts

#: a literal the parser could not evaluate
_NOT_LITERAL = object()


def literal(expr: cst.BaseExpression) -> Any:
    """The value of a literal expression, or :data:`_NOT_LITERAL`."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else _NOT_LITERAL
    if isinstance(expr, cst.ConcatenatedString):
        left, right = literal(expr.left), literal(expr.right)
        return left + right if isinstance(left, str) and isinstance(right, str) else _NOT_LITERAL
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0)
    if isinstance(expr, cst.Float):
        return float(expr.value)
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = literal(expr.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else _NOT_LITERAL
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        items = [literal(e.value) for e in expr.elements if isinstance(e, cst.Element)]
        if len(items) != len(expr.elements) or any(i is _NOT_LITERAL for i in items):
            return _NOT_LITERAL
        return items  # JSON-able: a sweep option crosses into the child as data
    if isinstance(expr, cst.Dict):
        out = {}
        for el in expr.elements:
            if not isinstance(el, cst.DictElement):
                return _NOT_LITERAL
            key, value = literal(el.key), literal(el.value)
            if not isinstance(key, str) or value is _NOT_LITERAL:
                return _NOT_LITERAL
            out[key] = value
        return out
    return _NOT_LITERAL


def resolve_callee(facts: ModuleFacts, call: cst.Call) -> str | None:
    """The qualified name a call's callee resolves to through the module's imports (or the module's own
    definitions): ``build_graph(...)`` after ``from app.graph import build_graph`` -> ``app.graph.build_graph``."""
    name = dotted(call.func)
    if not name:
        return None
    head, _, rest = name.partition(".")
    qualified = facts.imports.get(head)
    if qualified is None:
        qualified = f"{facts.module_name}.{head}"
    return f"{qualified}.{rest}" if rest else qualified


@dataclass(frozen=True)
class Call:
    """A call of a known program-building function somewhere in the project."""

    #: the qualified name of the function called
    callee: str
    #: the literal keyword arguments it passes
    kwargs: tuple[tuple[str, Any], ...]
    node: cst.Call = field(repr=False)
    facts: ModuleFacts = field(repr=False)
    line: int = 0


def calls_of(functions: set[str], modules: Iterable[ModuleFacts], skip: Iterable[str] = ()) -> list[Call]:
    """Every call of one of ``functions`` (qualified names) in ``modules``, in module and line order;
    ``skip``: keyword arguments not to collect (the checkpointer, which the sweep passes itself)."""
    skipped = set(skip)
    out: list[Call] = []
    for facts in modules:
        for info in facts.all_calls:
            qualified = resolve_callee(facts, info.node)
            if qualified not in functions:
                continue
            kwargs = tuple(
                (a.keyword.value, value)
                for a in info.node.args
                if a.keyword is not None and a.keyword.value not in skipped
                for value in [literal(a.value)]
                if value is not _NOT_LITERAL
            )
            out.append(Call(qualified, kwargs, info.node, facts, info.line))
    return out


def first_kwargs(calls: Iterable[Call]) -> dict[str, Any]:
    """The keyword arguments callers pass, the first caller's value for each name."""
    out: dict[str, Any] = {}
    for call in calls:
        for key, value in call.kwargs:
            out.setdefault(key, value)
    return out
