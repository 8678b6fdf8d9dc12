"""One pass over a parsed module that records what every rule asks about.

Rules never walk the tree for the basics themselves: the functions and
classes (with their decorators, parameters, returns and the calls their own
bodies make), the local bindings used for light type inference, and the
positions. Building these once per module keeps rules small and the scan
fast. What is recorded is :mod:`resume_audit.facts.model`; how the tree is walked is
:mod:`resume_audit.facts.walk`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import libcst as cst
from libcst.metadata import MetadataWrapper

from resume_audit.facts.model import (
    BUILTIN_NAMES,
    Binding,
    CallInfo,
    ClassInfo,
    DecoratorInfo,
    FunctionInfo,
    ModuleFacts,
    Order,
    Pos,
    Scope,
)
from resume_audit.facts.walk import children, fields_of, visit_fast

# the model and the walk are importable from here as they were before they had modules of their own
__all__ = [
    "BUILTIN_NAMES",
    "Binding",
    "CallInfo",
    "ClassInfo",
    "DecoratorInfo",
    "FunctionInfo",
    "ModuleFacts",
    "Order",
    "Pos",
    "Scope",
    "build_module_facts",
    "visit_fast",
]

#: Children walked in the enclosing scope before a def/class body (decorators, defaults,
#: annotations and bases are evaluated where the def statement runs, not in the new scope).
_HEADER_FIELDS: dict[type, tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "params", "returns"),
    cst.ClassDef: ("decorators", "bases", "keywords"),
}
_BODY = "body"


def build_module_facts(
    path: Path, display_path: str, module_name: str, is_package: bool, source: str, tree: cst.Module
) -> ModuleFacts:
    """Run the collecting visitor: one walk over the tree, no LibCST metadata providers
    (qualified names come from the module's own import table, see :mod:`resume_audit.analysis.resolve`)."""
    wrapper = MetadataWrapper(tree, unsafe_skip_copy=True)
    facts = ModuleFacts(
        path=path,
        display_path=display_path,
        module_name=module_name,
        is_package=is_package,
        source=source,
        tree=wrapper.module,
        wrapper=wrapper,
    )
    _Collector(facts).run(wrapper.module)
    return facts


def _target_names(target: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        out: list[cst.Name] = []
        for el in target.elements:
            out.extend(_target_names(el.value))
        return out
    return []


@dataclass(frozen=True)
class _Plan:
    """How :class:`_Collector` handles one node type: its ``visit_X`` / ``leave_X`` (unbound, or
    None), the fields walked before a def's or class's body in the enclosing scope (None for
    other nodes), and the fields whose children are walked. Worked out once per type."""

    visit: Callable[["_Collector", Any], Any] | None
    leave: Callable[["_Collector", Any], Any] | None
    header: tuple[str, ...] | None
    fields: tuple[str, ...]


_PLANS: dict[type, _Plan] = {}


def _plan(tp: type) -> _Plan:
    header = _HEADER_FIELDS.get(tp)
    return _Plan(
        getattr(_Collector, "visit_" + tp.__name__, None),
        getattr(_Collector, "leave_" + tp.__name__, None),
        header,
        header if header is not None else fields_of(tp),
    )


_ENTER_SCOPE, _LEAVE_SCOPE, _LEAVE = 0, 1, 2


class _Collector:
    """Fills a ModuleFacts: structure (parents, Euler-tour order), scopes, bindings, calls, imports.

    It walks the tree itself, over each node's dataclass fields, rather than through
    ``CSTNode.visit``: LibCST's visitor machinery rebuilds and re-validates every node
    it passes, which costs about as much as parsing; this walk is ~5x cheaper. Children
    are visited in source order, except that a def's decorators, defaults and
    annotations are walked first, in the enclosing scope, where Python evaluates them.
    """

    def __init__(self, facts: ModuleFacts) -> None:
        self.f = facts
        self.func_stack: list[FunctionInfo] = []
        self.class_stack: list[ClassInfo] = []
        #: lambda bodies run later, when (and if) the lambda is called: their calls are not the function's own
        self.lambda_depth = 0
        self._scope_chain: list[str] = []
        self._counter = 0

    def run(self, module: cst.Module) -> None:
        meta = self.f._meta
        plans = _PLANS
        # stack items: (node, parent) to enter, or (marker, node)
        stack: list[tuple[Any, Any]] = [(module, None)]
        pop, push = stack.pop, stack.append
        counter = self._counter
        while stack:
            item, other = pop()
            if item is _LEAVE:
                counter += 1
                meta[other][2] = counter
                leave = plans[type(other)].leave
                if leave is not None:
                    leave(self, other)
                continue
            if item is _ENTER_SCOPE:
                self._enter_scope(other)
                continue
            if item is _LEAVE_SCOPE:
                self._leave_scope(other)
                continue
            node = item
            tp = type(node)
            plan = plans.get(tp)
            if plan is None:
                plan = plans[tp] = _plan(tp)
            counter += 1
            meta[node] = [other, counter, 0]
            if plan.visit is not None:
                plan.visit(self, node)
            push((_LEAVE, node))
            if plan.header is not None:
                push((_LEAVE_SCOPE, node))
                push((getattr(node, _BODY), node))
                push((_ENTER_SCOPE, node))
            for child in reversed(children(node, plan.fields)):
                push((child, node))
        self._counter = counter

    def _order(self, node: cst.CSTNode) -> Order:
        order: Order = self.f._meta[node][1]
        return order

    # -- scopes -----------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        qual = ".".join([*self._scope_chain, node.name.value])
        info = ClassInfo(
            node=node,
            name=node.name.value,
            qualname=qual,
            full_name=f"{self.f.module_name}.{qual}" if self.f.module_name else qual,
            module=self.f,
        )
        self.f.classes.append(info)
        self.f._class_by_node[node] = info
        self.f._class_by_qualname[qual] = info
        for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else []:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for t in small.targets:
                            for n in _target_names(t.target):
                                info.body_bindings.append(Binding(n.value, small.value, self._order(node)))
                    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        info.body_bindings.append(
                            Binding(
                                small.target.value,
                                small.value or small.annotation.annotation,
                                self._order(node),
                                "assign" if small.value is not None else "annotation",
                            )
                        )

    def _enter_scope(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        if isinstance(node, cst.ClassDef):
            self.class_stack.append(self.f._class_by_node[node])
        else:
            self.func_stack.append(self.f._function_by_node[node])
        self._scope_chain.append(node.name.value)

    def _leave_scope(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        if isinstance(node, cst.ClassDef):
            self.class_stack.pop()
        else:
            self.func_stack.pop()
        self._scope_chain.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        qual = ".".join([*self._scope_chain, node.name.value])
        parent_fn = self.func_stack[-1] if self.func_stack else None
        cls = self.class_stack[-1] if self.class_stack and self._directly_in_class(node) else None
        decorators = []
        for dec in node.decorators:
            expr = dec.decorator
            call = expr if isinstance(expr, cst.Call) else None
            decorators.append(DecoratorInfo(dec, call.func if call else expr, call))
        info = FunctionInfo(
            node=node,
            name=node.name.value,
            qualname=qual,
            full_name=f"{self.f.module_name}.{qual}" if self.f.module_name else qual,
            module=self.f,
            class_info=cls,
            parent=parent_fn,
            decorators=decorators,
            is_async=node.asynchronous is not None,
        )
        if cls is not None:
            cls.methods[node.name.value] = info
        self.f.functions.append(info)
        self.f._function_by_node[node] = info
        self.f._function_by_qualname[qual] = info
        p = node.params
        for param in (*p.posonly_params, *p.params, *p.kwonly_params):
            if param.annotation is not None:
                info.bindings.append(
                    Binding(param.name.value, param.annotation.annotation, self._order(node), "param-annotation")
                )

    def _directly_in_class(self, node: cst.FunctionDef) -> bool:
        parent = self.f.parent(node)
        # FunctionDef -> IndentedBlock -> ClassDef
        return isinstance(parent, cst.IndentedBlock) and isinstance(self.f.parent(parent), cst.ClassDef)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.lambda_depth += 1

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.lambda_depth -= 1

    # -- facts ------------------------------------------------------------
    def _bindings(self) -> list[Binding]:
        return self.func_stack[-1].bindings if self.func_stack else self.f.module_bindings

    def visit_Call(self, node: cst.Call) -> None:
        fn = self.func_stack[-1] if self.func_stack else None
        info = CallInfo(node=node, function=fn, module=self.f, order=self._order(node))
        self.f._call_by_node[node] = info
        self.f.all_calls.append(info)
        if self.lambda_depth:
            return
        if fn is not None:
            fn.calls.append(info)
        else:
            self.f.module_calls.append(info)

    def visit_Return(self, node: cst.Return) -> None:
        if self.func_stack and not self.lambda_depth:
            self.func_stack[-1].returns.append(node)

    def visit_Await(self, node: cst.Await) -> None:
        if self.func_stack and not self.lambda_depth:
            self.func_stack[-1].awaits.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind_target(t.target, node.value, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node.value, node)
        elif isinstance(node.target, cst.Name) and self.func_stack:
            self._bindings().append(
                Binding(node.target.value, node.annotation.annotation, self._order(node), "param-annotation")
            )

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node.value, node)

    def _bind_target(self, target: cst.BaseExpression, value: cst.BaseExpression, at: cst.CSTNode) -> None:
        pos = self._order(at)
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            cls = self.class_stack[-1] if self.class_stack else None
            if cls is not None:
                cls.attributes.setdefault(target.attr.value, []).append(Binding(target.attr.value, value, pos))
            return
        names = _target_names(target)
        if len(names) == 1 and isinstance(target, cst.Name):
            self._bindings().append(Binding(names[0].value, value, pos))
        else:
            for n in names:  # tuple unpacking: the value is not this name's value
                self._bindings().append(Binding(n.value, value, pos, "unpack"))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for n in _target_names(node.asname.name):
                self._bindings().append(Binding(n.value, node.item, self._order(node), "with"))

    def visit_For(self, node: cst.For) -> None:
        for n in _target_names(node.target):
            self._bindings().append(Binding(n.value, node.iter, self._order(node), "for"))

    def _record_import(self, local: str, qualified: str, node: cst.CSTNode) -> None:
        if self.func_stack:
            self._bindings().append(Binding(local, cst.Name(local), self._order(node), "import", qualified))
        elif not self.class_stack:
            self.f.imports[local] = qualified

    def visit_Global(self, node: cst.Global) -> None:
        self.f.rebound_names.update(n.name.value for n in node.names)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.f.rebound_names.add(node.target.value)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted = self.f.code(alias.name)
            self.f.imported_modules.add(dotted)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._record_import(alias.asname.name.value, dotted, node)
            else:
                top = dotted.split(".")[0]
                self._record_import(top, top, node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = self.f.code(node.module) if node.module is not None else ""
        dots = "." * len(node.relative)
        absolute = self.f.absolutize(dots + module) if dots else module
        if absolute:
            self.f.imported_modules.add(absolute)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = self.f.code(alias.name)
            local = (
                alias.asname.name.value
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                else name
            )
            qualified = f"{absolute}.{name}" if absolute else name
            self._record_import(local, qualified, node)
            if absolute:
                self.f.imported_modules.add(qualified)
