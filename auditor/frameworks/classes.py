"""Class-hierarchy questions every framework module asks about project classes.

``class Poem(Flow[PoemState])``, ``class Review(Workflow)``, ``class Charge(BaseNode[S])``:
a framework knows user code by the class it extends, through generic
subscripts and through project base classes in other modules. This module
answers "does this project class extend one of these framework classes?"
and "which project class is this expression an instance of?" by reading
the code only.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from resume_audit.analysis.queries import ProjectQueries
from resume_audit.facts.model import ClassInfo, FunctionInfo, ModuleFacts


def _base_expr(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``Flow[State]`` -> ``Flow``; ``Generic[T]`` -> ``Generic``."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr


def class_scope(cls: ClassInfo) -> FunctionInfo | None:
    """The function a class is defined in (None for module-level classes)."""
    return cls.module.enclosing_function(cls.node)


def base_names(cls: ClassInfo, project: ProjectQueries) -> Iterator[tuple[cst.BaseExpression, set[str]]]:
    """Each base expression of ``cls`` with the qualified names it resolves to."""
    resolver = project.resolver(cls.module)
    scope = class_scope(cls)
    for base in cls.node.bases:
        if base.keyword is not None:
            continue
        expr = _base_expr(base.value)
        yield expr, resolver.names(expr, scope)


def extends(
    cls: ClassInfo, targets: frozenset[str], project: ProjectQueries, _depth: int = 0, _seen: set[int] | None = None
) -> bool:
    """Does ``cls`` extend one of ``targets`` (qualified names), directly or through project bases?"""
    if _depth > 8:
        return False
    seen = _seen if _seen is not None else set()
    if id(cls) in seen:
        return False
    seen.add(id(cls))
    for _, names in base_names(cls, project):
        if names & targets:
            return True
        for name in names:
            parent = project.lookup(name, near=cls.module)
            if isinstance(parent, ClassInfo) and extends(parent, targets, project, _depth + 1, seen):
                return True
    return False


def project_bases(cls: ClassInfo, project: ProjectQueries, _depth: int = 0) -> list[ClassInfo]:
    """``cls`` and its project base classes (nearest first), for inherited methods."""
    out = [cls]
    if _depth > 8:
        return out
    for _, names in base_names(cls, project):
        for name in names:
            parent = project.lookup(name, near=cls.module)
            if isinstance(parent, ClassInfo) and parent is not cls and parent not in out:
                out.extend(p for p in project_bases(parent, project, _depth + 1) if p not in out)
    return out


def subclasses_in(module: ModuleFacts, targets: frozenset[str], project: ProjectQueries) -> list[ClassInfo]:
    """Classes defined in ``module`` that extend one of ``targets``."""
    return [c for c in module.classes if extends(c, targets, project)]


def instance_class(
    expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> ClassInfo | None:
    """The project class ``expr`` is an instance of, when the code says so:
    ``MyFlow()``, ``flow`` after ``flow = MyFlow(...)``, ``self`` in a method,
    a parameter annotated ``flow: MyFlow``."""
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if isinstance(expr, cst.Call):
        names = project.resolver(module).call_names(expr, scope)
    else:
        names = project.resolver(module).names(expr, scope)
    for name in sorted(names):
        found = project.lookup(name, near=module)
        if isinstance(found, ClassInfo):
            return found
    return None


def named_class(
    expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> ClassInfo | None:
    """The project class an expression *names* (``MyFlow`` in ``MyFlow.from_checkpoint(...)``)."""
    for name in sorted(project.resolver(module).names(expr, scope)):
        found = project.lookup(name, near=module)
        if isinstance(found, ClassInfo):
            return found
    return None


def module_constant(qualified: str, project: ProjectQueries) -> tuple[cst.BaseExpression, ModuleFacts] | None:
    """The value of a module-level ``NAME = value`` in a project module (``settings.EVENTS``)."""
    mod_name, _, attr = qualified.rpartition(".")
    for m in project.by_name.get(mod_name, []):
        for b in reversed(m.module_bindings):
            if b.name == attr and b.kind == "assign":
                return b.value, m
    return None
