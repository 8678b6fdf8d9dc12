"""What one pass over a parsed module records: its functions, classes, calls, bindings and imports.

The collector (:mod:`resume_audit.facts.collect`) fills a :class:`ModuleFacts` in a single
walk; every rule and the project's analysis read it instead of walking the tree again. Besides
the structure it answers where a node is: the Euler-tour order of the walk (cheap, exact for
"does ``a`` complete before ``b`` starts") and, for findings, line and column positions, computed
only for the modules that have a finding and only for the statement that holds it
(:mod:`resume_audit.facts.positions`).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Union

import libcst as cst
from libcst.metadata import MetadataWrapper

from resume_audit.facts.libcst_internals import Positions, module_positions
from resume_audit.facts.positions import Placed, statement_positions
from resume_audit.findings import Span

#: An Euler-tour index: every node gets one number when the walk enters it and a
#: larger one when it leaves, from a single counter. ``a`` completes before ``b``
#: starts iff ``done(a) < order(b)``; ``a`` contains ``b`` iff
#: ``order(a) < order(b)`` and ``done(b) < done(a)``. Cheap ordering without
#: computing line/column positions, which LibCST makes expensive.
Order = int
Pos = tuple[int, int]  # (line, column), 1-based line, 0-based column as LibCST reports

BUILTIN_NAMES = frozenset(dir(builtins))


@dataclass(eq=False)
class Binding:
    """``name = value`` (or ``with value as name``, ``for name in value``) seen in a scope."""

    name: str
    value: cst.BaseExpression
    pos: Order
    #: "assign", "with", "for", "param-annotation", "annotation", "import"
    kind: str = "assign"
    #: for ``kind == "import"``: the absolute qualified name imported
    qualified: str | None = None


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
    module: "ModuleFacts"
    #: Euler-tour enter index (see :data:`Order`)
    order: Order

    @property
    def done(self) -> Order:
        """Euler-tour leave index: when the call's value is available."""
        leave: Order = self.module._meta[self.node][2]
        return leave

    @property
    def line(self) -> int:
        return self.module.line(self.node)


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
    #: names rebound at run time anywhere in the module: declared ``global`` in a function, or
    #: the target of an augmented assignment (``n += 1``)
    rebound_names: set[str] = field(default_factory=set)
    #: node -> [parent, enter index, leave index], filled by the collector (lists: the leave
    #: index is set when the walk leaves the node)
    _meta: dict[cst.CSTNode, list[Any]] = field(default_factory=dict)
    _positions: Positions | None = None
    #: statement -> (its nodes' positions counted from its own first line, line offset),
    #: or False where the statement could not be placed (a bigger statement's are used)
    _statement_positions: dict[cst.CSTNode, Placed | bool] = field(default_factory=dict)
    _lines: list[str] | None = None

    # -- structure and order ----------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        meta = self._meta.get(node)
        return meta[0] if meta is not None else None

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        cur = self.parent(node)
        while cur is not None:
            yield cur
            cur = self.parent(cur)

    def order(self, node: cst.CSTNode) -> Order:
        enter: Order = self._meta[node][1]
        return enter

    def done(self, node: cst.CSTNode) -> Order:
        leave: Order = self._meta[node][2]
        return leave

    # -- positions (computed on first use: only modules with findings pay) ---
    def span(self, node: cst.CSTNode) -> Span:
        """Where ``node`` is, as findings and edits name places (1-based columns, end exclusive)."""
        (sl, sc), (el, ec) = self.position(node)
        return Span(self.display_path, sl, sc + 1, el, ec + 1)

    def position(self, node: cst.CSTNode) -> tuple[Pos, Pos]:
        top = self._top_statement(node)
        if top is not None and self._positions is None:
            # first the simple statement line the node is on, when it is nested in a block: a
            # finding in a node's body then costs the code of one line, not of the whole def
            line = self._nested_line(node, top)
            placed = (
                self._placed_in(line, node, self.indents_of(line)) if line is not None else None
            ) or self._placed_in(top, node, [])
            if placed is not None:
                return placed
        if self._positions is None:
            self._positions = module_positions(self.tree, self.wrapper)
        rng = self._positions[node]
        return (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)

    def _placed_in(self, stmt: cst.CSTNode, node: cst.CSTNode, indents: list[str]) -> tuple[Pos, Pos] | None:
        """``node``'s position from generating ``stmt`` alone (memoised per statement), or None
        when that statement's code cannot be placed (see :func:`~resume_audit.facts.positions.statement_positions`)."""
        placed = self._statement_positions.get(stmt)
        if placed is None:
            placed = self._statement_positions[stmt] = (
                statement_positions(self.tree, self.source, stmt, indents) or False
            )
        if isinstance(placed, bool) or node not in placed[0]:
            return None
        computed, offset = placed
        rng = computed[node]
        return (rng.start.line + offset, rng.start.column), (rng.end.line + offset, rng.end.column)

    def _nested_line(self, node: cst.CSTNode, top: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The ``SimpleStatementLine`` that is or holds ``node``, when it is not itself the
        module-level statement (None for a def's name, a decorator, an ``if`` test...)."""
        for cur in (node, *self.ancestors(node)):
            if cur is top:
                return None
            if isinstance(cur, cst.SimpleStatementLine):
                return cur
        return None

    def indents_of(self, line: cst.CSTNode) -> list[str]:
        """The indentation LibCST's code generation has pushed when it reaches ``line``: one
        entry per enclosing ``IndentedBlock`` and ``match`` (whose cases are indented), outermost
        first."""
        indents = []
        for anc in self.ancestors(line):
            if isinstance(anc, (cst.IndentedBlock, cst.Match)):
                indents.append(self.tree.default_indent if anc.indent is None else anc.indent)
        return indents[::-1]

    def _top_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The module-level statement ``node`` is (in), or None for the module itself."""
        if node is self.tree:
            return None
        child = node
        for anc in self.ancestors(node):
            if anc is self.tree:
                return child
            child = anc
        return None

    def line(self, node: cst.CSTNode) -> int:
        return self.position(node)[0][0]

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

    @property
    def script_body(self) -> FunctionInfo:
        """The module's top-level code as a function body: a script's ``while True:`` loop, its
        ``if __name__ == "__main__":`` block, or a Streamlit page (which re-runs top to bottom
        on every interaction) runs like the body of a function called once per run. Its calls
        and bindings are the module-level ones; its node is a synthetic ``def <module>()`` over
        the module's own statements (the same node objects), never part of the tree."""
        if self._script_body is None:
            node = cst.FunctionDef(
                name=cst.Name("__module__"), params=cst.Parameters(), body=cst.IndentedBlock(body=list(self.tree.body))
            )
            self._script_body = FunctionInfo(
                node=node,
                name="<module>",
                qualname="<module>",
                full_name=f"{self.module_name}.<module>",
                module=self,
                class_info=None,
                parent=None,
                decorators=[],
                is_async=False,
                calls=self.module_calls,
                bindings=self.module_bindings,
            )
        return self._script_body

    _script_body: "FunctionInfo | None" = None

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

    _function_by_node: dict[cst.FunctionDef, FunctionInfo] = field(default_factory=dict)
    _class_by_node: dict[cst.ClassDef, ClassInfo] = field(default_factory=dict)
    _call_by_node: dict[cst.Call, CallInfo] = field(default_factory=dict)
    _function_by_qualname: dict[str, FunctionInfo] = field(default_factory=dict)
    _class_by_qualname: dict[str, ClassInfo] = field(default_factory=dict)
