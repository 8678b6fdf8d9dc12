"""One pass over a parsed module that records what every rule asks about.

Rules never walk the tree for the basics themselves: the functions and
classes (with their decorators, parameters, returns and the calls their own
bodies make), the local bindings used for light type inference, and the
positions. Building these once per module keeps rules small and the scan
fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Union

import libcst as cst
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedName,
    QualifiedNameProvider,
    QualifiedNameSource,
)

Pos = tuple[int, int]  # (line, column), 1-based line, 0-based column as LibCST reports


@dataclass(eq=False)
class Binding:
    """``name = value`` (or ``with value as name``, ``for name in value``) seen in a scope."""

    name: str
    value: cst.BaseExpression
    pos: Pos
    #: "assign", "with", "for", "param-annotation", "import"
    kind: str = "assign"


@dataclass(eq=False)
class DecoratorInfo:
    node: cst.Decorator
    #: the expression naming the decorator, without call parentheses
    target: cst.BaseExpression
    call: cst.Call | None


@dataclass(eq=False)
class CallInfo:
    """A call evaluated by a function's own body (nested defs and lambdas excluded)."""

    node: cst.Call
    function: "FunctionInfo | None"
    start: Pos
    end: Pos


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    name: str
    qualname: str
    full_name: str
    module: "ModuleFacts"
    methods: dict[str, "FunctionInfo"] = field(default_factory=dict)
    #: ``self.attr = value`` assignments found in any method
    attributes: dict[str, list[Binding]] = field(default_factory=dict)
    #: class-body assignments (``model_config = ...``, ``x: int = 0``)
    body_bindings: list[Binding] = field(default_factory=list)


@dataclass(eq=False)
class FunctionInfo:
    node: cst.FunctionDef
    name: str
    qualname: str
    full_name: str
    module: "ModuleFacts"
    class_info: ClassInfo | None
    parent: "FunctionInfo | None"
    decorators: list[DecoratorInfo]
    is_async: bool
    calls: list[CallInfo] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    returns: list[cst.Return] = field(default_factory=list)
    awaits: list[cst.Await] = field(default_factory=list)

    @property
    def is_method(self) -> bool:
        return self.class_info is not None and self.parent is None

    def param_names(self) -> list[str]:
        p = self.node.params
        return [x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)]

    def param(self, name: str) -> cst.Param | None:
        p = self.node.params
        for x in (*p.posonly_params, *p.params, *p.kwonly_params):
            if x.name.value == name:
                return x
        if isinstance(p.star_arg, cst.Param) and p.star_arg.name.value == name:
            return p.star_arg
        if p.star_kwarg is not None and p.star_kwarg.name.value == name:
            return p.star_kwarg
        return None


Scope = Union[FunctionInfo, None]


@dataclass(eq=False)
class ModuleFacts:
    """Everything the rules and the project index need to know about one module."""

    path: Path
    display_path: str
    module_name: str
    is_package: bool
    source: str
    tree: cst.Module
    wrapper: MetadataWrapper
    functions: list[FunctionInfo] = field(default_factory=list)
    classes: list[ClassInfo] = field(default_factory=list)
    module_calls: list[CallInfo] = field(default_factory=list)
    module_bindings: list[Binding] = field(default_factory=list)
    #: every call in the module, in source order, wherever it sits
    all_calls: list[CallInfo] = field(default_factory=list)
    #: names imported at module level: local name -> absolute qualified name
    imports: dict[str, str] = field(default_factory=dict)
    #: top-level imported module names, for cheap "does this file use X" checks
    imported_modules: set[str] = field(default_factory=set)
    _positions: object = None
    _parents: object = None
    _qnames: object = None
    _lines: list[str] | None = None

    # -- metadata ---------------------------------------------------------
    def position(self, node: cst.CSTNode) -> tuple[Pos, Pos]:
        rng = self._positions[node]  # type: ignore[index]
        return (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)  # type: ignore[union-attr]

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        cur = self.parent(node)
        while cur is not None:
            yield cur
            cur = self.parent(cur)

    def raw_qualified_names(self, node: cst.CSTNode) -> set[QualifiedName]:
        """LibCST's qualified names for ``node`` (import-aware, relative names left relative)."""
        value = self._qnames.get(node)  # type: ignore[union-attr]
        if value is None:
            return set()
        if callable(value):  # LibCST computes qualified names lazily
            value = value()
        return set(value)

    def absolute_import_names(self, node: cst.CSTNode) -> set[str]:
        """Qualified names that come from imports or builtins, made absolute."""
        out: set[str] = set()
        for q in self.raw_qualified_names(node):
            if q.source is QualifiedNameSource.IMPORT:
                out.add(self.absolutize(q.name))
            elif q.source is QualifiedNameSource.BUILTIN:
                out.add(q.name)
        return out

    def absolutize(self, name: str) -> str:
        """Turn ``.tools.charge`` (relative import) into ``pkg.tools.charge``."""
        if not name.startswith("."):
            return name
        level = len(name) - len(name.lstrip("."))
        rest = name[level:]
        package_parts = self.module_name.split(".") if self.is_package else self.module_name.split(".")[:-1]
        if level > 1:
            package_parts = package_parts[: len(package_parts) - (level - 1)]
        base = ".".join(p for p in package_parts if p)
        return f"{base}.{rest}" if base and rest else (base or rest)

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.source.splitlines()
        return self._lines

    def code(self, node: cst.CSTNode) -> str:
        return self.tree.code_for_node(node)

    # -- lookups ----------------------------------------------------------
    def enclosing_function(self, node: cst.CSTNode) -> FunctionInfo | None:
        for anc in self.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                return self._function_by_node.get(anc)
        return None

    def function_for(self, node: cst.FunctionDef) -> FunctionInfo | None:
        return self._function_by_node.get(node)

    def class_for(self, node: cst.ClassDef) -> ClassInfo | None:
        return self._class_by_node.get(node)

    def call_info(self, node: cst.Call) -> CallInfo | None:
        return self._call_by_node.get(node)

    def find_function(self, qualname: str) -> FunctionInfo | None:
        return self._function_by_qualname.get(qualname)

    def find_class(self, qualname: str) -> ClassInfo | None:
        return self._class_by_qualname.get(qualname)

    def uses_any(self, prefixes: tuple[str, ...]) -> bool:
        """Does the module import anything from one of these top-level packages?"""
        return any(m == p or m.startswith(p + ".") for m in self.imported_modules for p in prefixes)

    _function_by_node: dict = field(default_factory=dict)
    _class_by_node: dict = field(default_factory=dict)
    _call_by_node: dict = field(default_factory=dict)
    _function_by_qualname: dict = field(default_factory=dict)
    _class_by_qualname: dict = field(default_factory=dict)


def build_module_facts(
    path: Path, display_path: str, module_name: str, is_package: bool, source: str, tree: cst.Module
) -> ModuleFacts:
    """Resolve metadata once and run the collecting visitor."""
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
    resolved = wrapper.resolve_many([PositionProvider, ParentNodeProvider, QualifiedNameProvider])
    facts._positions = resolved[PositionProvider]
    facts._parents = resolved[ParentNodeProvider]
    facts._qnames = resolved[QualifiedNameProvider]
    wrapper.module.visit(_Collector(facts))
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


class _Collector(cst.CSTVisitor):
    """Fills a ModuleFacts: scopes, bindings, calls, returns, imports."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.f = facts
        self.func_stack: list[FunctionInfo] = []
        self.class_stack: list[ClassInfo] = []
        #: lambda bodies run later, when (and if) the lambda is called: their calls are not the function's own
        self.lambda_depth = 0

    # -- scopes -----------------------------------------------------------
    _scope_chain: list[str]

    def visit_Module(self, node: cst.Module) -> None:
        self._scope_chain = []

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
        self.class_stack.append(info)
        self._scope_chain.append(node.name.value)
        for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else []:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for t in small.targets:
                            for n in _target_names(t.target):
                                info.body_bindings.append(Binding(n.value, small.value, self._pos(small)))
                    elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        info.body_bindings.append(
                            Binding(small.target.value, small.value or small.annotation.annotation, self._pos(small),
                                    "assign" if small.value is not None else "annotation")
                        )

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.class_stack.pop()
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
        self.func_stack.append(info)
        self._scope_chain.append(node.name.value)
        p = node.params
        for param in (*p.posonly_params, *p.params, *p.kwonly_params):
            if param.annotation is not None:
                info.bindings.append(
                    Binding(param.name.value, param.annotation.annotation, self._pos(param), "param-annotation")
                )

    def _directly_in_class(self, node: cst.FunctionDef) -> bool:
        parent = self.f.parent(node)
        # FunctionDef -> IndentedBlock -> ClassDef
        if isinstance(parent, cst.IndentedBlock):
            grand = self.f.parent(parent)
            return isinstance(grand, cst.ClassDef)
        return False

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.func_stack.pop()
        self._scope_chain.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.lambda_depth += 1

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.lambda_depth -= 1

    # -- facts ------------------------------------------------------------
    def _pos(self, node: cst.CSTNode) -> Pos:
        return self.f.position(node)[0]

    def _bindings(self) -> list[Binding]:
        return self.func_stack[-1].bindings if self.func_stack else self.f.module_bindings

    def visit_Call(self, node: cst.Call) -> None:
        start, end = self.f.position(node)
        fn = self.func_stack[-1] if self.func_stack else None
        info = CallInfo(node=node, function=fn, start=start, end=end)
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
                Binding(node.target.value, node.annotation.annotation, self._pos(node), "param-annotation")
            )

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node.value, node)

    def _bind_target(self, target: cst.BaseExpression, value: cst.BaseExpression, at: cst.CSTNode) -> None:
        pos = self._pos(at)
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
                self._bindings().append(Binding(n.value, cst.Name("__unknown__"), pos))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for n in _target_names(node.asname.name):
                self._bindings().append(Binding(n.value, node.item, self._pos(node), "with"))

    def visit_For(self, node: cst.For) -> None:
        for n in _target_names(node.target):
            self._bindings().append(Binding(n.value, node.iter, self._pos(node), "for"))

    def visit_Import(self, node: cst.Import) -> None:
        if self.func_stack or self.class_stack:
            return
        for alias in node.names:
            dotted = self.f.code(alias.name)
            self.f.imported_modules.add(dotted)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.f.imports[alias.asname.name.value] = dotted
            else:
                self.f.imports[dotted.split(".")[0]] = dotted.split(".")[0]

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = self.f.code(node.module) if node.module is not None else ""
        dots = "." * len(node.relative)
        absolute = self.f.absolutize(dots + module) if dots else module
        if absolute:
            self.f.imported_modules.add(absolute)
        if self.func_stack or self.class_stack or isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = self.f.code(alias.name)
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            self.f.imports[local] = f"{absolute}.{name}" if absolute else name
            if absolute:
                self.f.imported_modules.add(f"{absolute}.{name}")
