"""One pass over a parsed module that records what every rule asks about.

Rules never walk the tree for the basics themselves: the functions and
classes (with their decorators, parameters, returns and the calls their own
bodies make), the local bindings used for light type inference, and the
positions. Building these once per module keeps rules small and the scan
fast.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Union
import builtins

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

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
        return self.module._meta[self.node][2]

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
    #: node -> [parent, enter index, leave index], filled by the collector
    _meta: dict = field(default_factory=dict)
    _positions: object = None
    #: module-level statement -> (its nodes' positions counted from its own first line, line offset),
    #: or False where the statement could not be placed (the whole module's positions are used)
    _statement_positions: dict = field(default_factory=dict)
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
        return self._meta[node][1]

    def done(self, node: cst.CSTNode) -> Order:
        return self._meta[node][2]

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
            placed = (self._placed_in(line, node, self._indents_of(line)) if line is not None else None) \
                or self._placed_in(top, node, [])
            if placed is not None:
                return placed
        if self._positions is None:
            self._positions = _positions_of(self.tree, self.wrapper)
        rng = self._positions[node]  # type: ignore[index]
        return (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)

    def _placed_in(self, stmt: cst.CSTNode, node: cst.CSTNode, indents: list[str]) -> tuple[Pos, Pos] | None:
        """``node``'s position from generating ``stmt`` alone (memoised per statement), or None
        when that statement's code cannot be placed (see :func:`_statement_positions`)."""
        placed: Any = self._statement_positions.get(stmt)
        if placed is None:
            placed = self._statement_positions[stmt] = _statement_positions(self.tree, self.source, stmt, indents) or False
        if not placed or node not in placed[0]:
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

    def _indents_of(self, line: cst.CSTNode) -> list[str]:
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
            node = cst.FunctionDef(name=cst.Name("__module__"), params=cst.Parameters(), body=cst.IndentedBlock(body=list(self.tree.body)))
            self._script_body = FunctionInfo(
                node=node, name="<module>", qualname="<module>", full_name=f"{self.module_name}.<module>", module=self,
                class_info=None, parent=None, decorators=[], is_async=False,
                calls=self.module_calls, bindings=self.module_bindings,
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

    _function_by_node: dict = field(default_factory=dict)
    _class_by_node: dict = field(default_factory=dict)
    _call_by_node: dict = field(default_factory=dict)
    _function_by_qualname: dict = field(default_factory=dict)
    _class_by_qualname: dict = field(default_factory=dict)


_NEWLINE = re.compile(r"\r\n|\r|\n")
_FINAL_NEWLINE = re.compile(r"(?:\r\n|\r|\n)\Z")


def _statement_positions(tree: cst.Module, source: str, stmt: cst.CSTNode, indents: list[str] | None = None):
    """Positions of the nodes of one statement, without generating the whole module: the
    statement's code (leading comments and blank lines included) is generated alone, found in
    the source -- it must occur exactly once, at the start of a line -- and its lines are
    shifted by the lines before it. Columns need no shift: a module-level statement starts at
    column 0, and a nested one (``indents``: the indentation its enclosing blocks push, as
    :meth:`ModuleFacts._indents_of` gives it) is generated with that indentation, on its first
    line and on the continuation lines LibCST indents. None when the statement's code is not
    found exactly once (the caller falls back to a bigger statement, then the whole module), so
    a wrong position is never reported."""
    try:
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=tree.default_indent, default_newline=tree.default_newline, provider=provider
        )
        for indent in indents or ():
            state.increase_indent(indent)
        stmt._codegen(state)
        code = "".join(state.tokens)
    except Exception:  # pragma: no cover - a LibCST that reorganised its codegen
        return None
    if not code:
        return None
    needle = code
    if not tree.has_trailing_newline:
        # the file's last line has no newline, so the last statement's code (which ends with
        # one) is not in the source as generated: without its final newline, that statement
        # counts as an occurrence too, or "x = 1" at the end would be placed on an earlier "x = 1"
        final = _FINAL_NEWLINE.search(code)
        needle = code[: final.start()] if final is not None else code
    at = source.find(needle)
    if at < 0 or source.find(needle, at + 1) >= 0 or (at > 0 and source[at - 1] not in "\r\n"):
        return None
    return provider._computed, len(_NEWLINE.findall(source, 0, at))


def _positions_of(tree: cst.Module, wrapper: MetadataWrapper):
    """Line/column ranges of every node. PositionProvider's own code generation, run directly:
    going through ``MetadataWrapper.resolve`` adds a full (and here useless) batched visit of
    the tree, which costs as much again."""
    provider = PositionProvider()
    try:
        provider._gen_impl(tree)
        return provider._computed
    except AttributeError:  # pragma: no cover - a LibCST that reorganised its providers
        return wrapper.resolve(PositionProvider)


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


#: Fields that only hold whitespace, punctuation or comments: never walked.
_SKIP_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header", "footer",
        "newline", "equal", "colon", "dot", "star", "asynchronous", "operator", "lbracket", "rbracket",
        "lbrace", "rbrace", "default_comma", "star_tok", "whitespace", "trailing_whitespace", "indent",
    }
)
_TOKEN_TYPES = (
    cst.BaseParenthesizableWhitespace, cst.Newline, cst.EmptyLine, cst.TrailingWhitespace, cst.Comma,
    cst.Semicolon, cst.LeftParen, cst.RightParen, cst.AssignEqual, cst.Colon, cst.Dot,
)
_FIELDS: dict[type, tuple[str, ...]] = {}
#: Children walked in the enclosing scope before a def/class body (decorators, defaults,
#: annotations and bases are evaluated where the def statement runs, not in the new scope).
_HEADER_FIELDS: dict[type, tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "params", "returns"),
    cst.ClassDef: ("decorators", "bases", "keywords"),
}
_BODY = "body"


def _fields(tp: type) -> tuple[str, ...]:
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


def _children(node: cst.CSTNode, names: tuple[str, ...]) -> list[cst.CSTNode]:
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
            found_handlers = handlers[tp] = (getattr(visitor, "visit_" + name, None),
                                             getattr(visitor, "leave_" + name, None), _fields(tp))
        visit, leave, fields = found_handlers
        if leaving:
            leave(cur)
            continue
        if visit is not None and visit(cur) is False:
            continue
        if leave is not None:
            push((True, cur))
        for child in reversed(_children(cur, fields)):
            push((False, child))


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
    return _Plan(getattr(_Collector, "visit_" + tp.__name__, None), getattr(_Collector, "leave_" + tp.__name__, None),
                 header, header if header is not None else _fields(tp))


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
        stack: list[tuple] = [(module, None)]
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
            for child in reversed(_children(node, plan.fields)):
                push((child, node))
        self._counter = counter

    def _order(self, node: cst.CSTNode) -> Order:
        return self.f._meta[node][1]

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

    def _enter_scope(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.ClassDef):
            self.class_stack.append(self.f._class_by_node[node])
        else:
            self.func_stack.append(self.f._function_by_node[node])
        self._scope_chain.append(node.name.value)  # type: ignore[attr-defined]

    def _leave_scope(self, node: cst.CSTNode) -> None:
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
                info.bindings.append(Binding(param.name.value, param.annotation.annotation, self._order(node), "param-annotation"))

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
            self._bindings().append(Binding(node.target.value, node.annotation.annotation, self._order(node), "param-annotation"))

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
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            qualified = f"{absolute}.{name}" if absolute else name
            self._record_import(local, qualified, node)
            if absolute:
                self.f.imported_modules.add(qualified)
