"""The value-flow engine: which objects an expression may hold, across the whole scanned project.

Rules ask about objects -- "is this a compiled graph, and with which checkpointer?", "is this
``thread_id`` a constant?", "is this run's input a ``Command(resume=...)``?" -- and real code hands
objects around before it uses them: a registry (``AGENTS = {"a": graph}``; ``AGENTS[agent_id]``), a
constructor argument kept on ``self``, a checkpointer assigned as an attribute at start-up, a config
built in a helper and passed as ``**kwargs``, a graph returned by ``await get_graph()``. The engine
follows values through all of these -- assignments, attributes (``self.x`` and ``obj.x``), container
literals and their stores and lookups, returns, parameters (from every call site's arguments,
keywords and ``**kwargs`` dicts, and the default), lambdas, ``functools.partial``, context managers
that ``yield`` their object, class hierarchies, module globals and imports (function-local ones
included) -- and answers in :mod:`~resume_audit.analysis.flow.values`' abstract objects.

It is the CodeQL idea of type tracking, small: flow-insensitive (every binding of a name counts,
wherever it is), field-sensitive (``x.a`` and ``x.b`` are apart; all instances of one project class
share their fields), context-insensitive (a parameter holds what any caller passes), demand-driven
(a question parses only the modules its answer runs through) and memoised in the project
(:meth:`Project.cached`), so the per-file cache learns every module and text search an answer rested on.
A cycle (``a = b``, ``b = a``) contributes nothing new; an answer too deep to follow is cut at
:data:`MAX_DEPTH` and is then smaller, never wrong about what it does contain.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Hashable, Iterable, Iterator, TypeVar

import libcst as cst

from resume_audit.analysis.flow.callsites import CallSites
from resume_audit.analysis.flow.values import (
    Bound,
    Class,
    Constant,
    Container,
    External,
    Function,
    Instance,
    Lambda,
    Made,
    Member,
    Module,
    Partial,
    Value,
)
from resume_audit.analysis.queries import ProjectQueries
from resume_audit.facts.model import BUILTIN_NAMES, Binding, CallInfo, ClassInfo, FunctionInfo, ModuleFacts

Values = frozenset[Value]
T = TypeVar("T")
EMPTY: Values = frozenset()

#: nested questions followed for one answer before it is cut
MAX_DEPTH = 48
#: values kept per answer: past this a name holds "anything" for the rules' purposes
MAX_VALUES = 64

#: library calls that return (one of) their argument(s) unchanged
_IDENTITY_CALLS = frozenset({"typing.cast", "copy.copy", "copy.deepcopy", "builtins.dict.copy"})
_PARTIAL = frozenset({"functools.partial"})
_GETATTR = "builtins.getattr"
#: decorators that make a generator function a context manager whose ``as`` target is what it yields
_CONTEXT_MANAGERS = frozenset({"contextlib.contextmanager", "contextlib.asynccontextmanager"})
#: library methods that return the object they are called on (a fluent builder, a configured runnable):
#: type -> methods. Filled by each framework's knowledge module (:func:`returns_receiver`), so the engine
#: itself names no framework.
_FLUENT: dict[str, frozenset[str]] = {}


def returns_receiver(types: Iterable[str], methods: Iterable[str]) -> None:
    """Declare that ``methods`` of objects of ``types`` return the object itself
    (``StateGraph(S).add_node(...).add_edge(...)`` is still the builder)."""
    methods = frozenset(methods)
    for t in types:
        _FLUENT[t] = _FLUENT.get(t, frozenset()) | methods


_DICT_READS = frozenset({"get", "pop", "setdefault"})


class Flow:
    """The engine over one :class:`~resume_audit.analysis.project.Project` (one scan). Get it with
    :func:`flow_of`; every question is memoised in the project."""

    def __init__(self, project: ProjectQueries) -> None:
        self.project = project
        self._depth = 0
        #: the questions being answered, outermost first: (namespace, key) -> its place on the stack
        self._asking: dict[tuple[str, Hashable], int] = {}
        #: per question on the stack: the outermost place on the stack of a question whose answer it
        #: read while that answer was still being computed (a cycle), or None
        self._tainted: list[int | None] = []
        #: per question on the stack: the provisional answers to drop when it is answered
        self._pending: list[list[tuple[str, Hashable]]] = []
        #: provisional answers (computed inside a cycle) -> the place of the cycle's head on the stack
        self._provisional: dict[tuple[str, Hashable], int] = {}
        #: each module's calls by spelled name and its calls of local names (who may call a function)
        self._sites = CallSites()
        #: per module: its assignments list and the subscript stores worked out from it
        self._subscripts: dict[
            Path,
            tuple[list[_Assignment], list[tuple[cst.Subscript, Value | None, cst.BaseExpression, FunctionInfo | None]]],
        ] = {}

    # -- the questions -----------------------------------------------------------------------
    def values(self, expr: cst.BaseExpression | None, scope: FunctionInfo | None, module: ModuleFacts) -> Values:
        """The objects ``expr`` (evaluated in ``scope`` of ``module``; None: module level) may hold."""
        if expr is None:
            return EMPTY
        return self._ask(
            "flow-values", (id(expr), id(scope)), lambda: self._values(expr, scope, module), in_progress=EMPTY
        )

    def call_values(self, call: CallInfo) -> Values:
        """The objects ``call`` may return."""
        return self.values(call.node, call.function, call.module)

    def callees(self, call: CallInfo) -> list[FunctionInfo]:
        """The project functions ``call`` may invoke: functions and bound methods it names, a class's
        ``__init__``, a partial's target, an instance's ``__call__``."""
        out: list[FunctionInfo] = []
        for value in self.values(call.node.func, call.function, call.module):
            for fn in self._functions_called(value):
                if all(f is not fn for f in out):
                    out.append(fn)
        return out

    def returns(self, fn: FunctionInfo) -> Values:
        """What ``fn`` returns (an ``async def``'s awaited value; a generator's yields are not returns)."""
        return self._ask(
            "flow-returns",
            id(fn),
            lambda: self._union(self.values(r.value, fn, fn.module) for r in fn.returns if r.value is not None),
            in_progress=EMPTY,
        )

    def parameter(self, fn: FunctionInfo, name: str) -> Values:
        """What ``fn``'s parameter ``name`` may hold: ``self``/``cls``, the annotation's type, the
        default, and what every call site in the project passes."""
        return self._ask("flow-parameter", (id(fn), name), lambda: self._parameter(fn, name), in_progress=EMPTY)

    def arguments(
        self, fn: FunctionInfo, name: str
    ) -> list[tuple[cst.BaseExpression, FunctionInfo | None, ModuleFacts, CallInfo]]:
        """Every argument expression a call site passes to ``fn``'s parameter ``name`` (positional,
        keyword, or a key of a ``**kwargs`` dict literal), with its scope, module and call."""
        return self._ask("flow-arguments", (id(fn), name), lambda: list(self._arguments(fn, name)), in_progress=[])

    def callers(self, fn: FunctionInfo) -> list[CallInfo]:
        """Calls anywhere in the project that may invoke ``fn`` (directly, as a bound method, through a
        partial or a name bound to it)."""
        return self._ask("flow-callers", id(fn), lambda: list(self._callers(fn)), in_progress=[])

    def attribute(self, owner: Value, name: str) -> Values:
        """``owner.name``: a stored field, a method, a module or class member."""
        return self._ask("flow-attribute", (owner, name), lambda: self._attribute(owner, name), in_progress=EMPTY)

    def items(self, owner: Value, key: Value | None) -> Values:
        """``owner[key]`` (``key`` None: any key) of a container literal, with the stores into it."""
        return self._ask("flow-items", (owner, key), lambda: self._items(owner, key), in_progress=EMPTY)

    def stored(self, owner: Value, name: str) -> Values:
        """What the project assigns to ``owner.name`` anywhere (``agent.checkpointer = saver``)."""
        return self._ask(
            "flow-stored",
            (owner, name),
            lambda: self._union(self.values(value, scope, module) for value, scope, module in self.stores(owner, name)),
            in_progress=EMPTY,
        )

    def stores(self, owner: Value, name: str) -> list[tuple[cst.BaseExpression, FunctionInfo | None, ModuleFacts]]:
        """The assignments ``x.name = value`` anywhere in the project where ``x`` may be ``owner``:
        (value, its scope, its module)."""
        return self._ask("flow-stores", (owner, name), lambda: list(self._stores(owner, name)), in_progress=[])

    def method_calls(self, owner: Value, method: str) -> list[CallInfo]:
        """Calls ``x.method(...)`` anywhere in the project where ``x`` may be ``owner``
        (``builder.add_node(...)`` in a helper the builder was handed to)."""
        return self._ask(
            "flow-method-calls", (owner, method), lambda: list(self._method_calls(owner, method)), in_progress=[]
        )

    # -- memo --------------------------------------------------------------------------------
    def _ask(self, namespace: str, key: Hashable, compute: Callable[[], T], in_progress: T) -> T:
        """``compute()`` memoised in the project. A question that meets itself (``a = b``, ``b = a``;
        a function handed to a caller of itself) gets ``in_progress`` there, and every answer on the
        way from it is incomplete: *provisional*. A provisional answer is reused while the question
        that heads its cycle is still being answered (dropping it at once made every sibling ask it
        again, which grows exponentially with the size of a cycle of calls, parameters and
        callers), and is dropped when that head has its answer, so a later question asks again.
        An answer that used a provisional one is provisional under the same head; an answer cut at
        :data:`MAX_DEPTH` is provisional under the outermost question."""
        token = (namespace, key)
        place = self._asking.get(token)
        if place is not None:
            self._taint_above(place)
            return in_progress
        head_of = self._provisional.get(token)
        if head_of is not None:
            self._taint_above(head_of)
        head: int | None = None
        mine: list[tuple[str, Hashable]] = []
        cut = False

        def bounded() -> T:
            nonlocal head, mine, cut
            if self._depth > MAX_DEPTH:
                cut = True
                self._taint_above(0)
                return in_progress
            self._depth += 1
            self._asking[token] = len(self._tainted)
            self._tainted.append(None)
            self._pending.append([])
            try:
                return compute()
            finally:
                self._depth -= 1
                head = self._tainted.pop()
                mine = self._pending.pop()
                del self._asking[token]

        value: T = self.project.cached(namespace, key, bounded, in_progress=in_progress)
        if cut and self._pending:
            head = 0
        if head is not None:
            for provisional in [token, *mine]:
                self._provisional[provisional] = head
            self._pending[head].append(token)
            self._pending[head].extend(mine)
        else:
            for provisional in mine:
                self._provisional.pop(provisional, None)
                self.project.forget(*provisional)
        return value

    def _taint_above(self, place: int) -> None:
        """Mark every question above ``place`` on the stack as resting on an answer of the question
        at ``place`` that is not final yet."""
        for i in range(place + 1, len(self._tainted)):
            current = self._tainted[i]
            self._tainted[i] = place if current is None else min(current, place)

    @staticmethod
    def _union(parts: Iterable[Values]) -> Values:
        out: set[Value] = set()
        for part in parts:
            out.update(part)
            if len(out) >= MAX_VALUES:
                break
        return frozenset(out)

    # -- expressions -------------------------------------------------------------------------
    def _values(self, expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts) -> Values:
        if isinstance(expr, cst.Name):
            if expr.value in ("None", "True", "False"):
                return frozenset({Constant({"None": None, "True": True, "False": False}[expr.value])})
            return self._name(expr.value, scope, module)
        if isinstance(expr, cst.Attribute):
            return self._union(self.attribute(v, expr.attr.value) for v in self.values(expr.value, scope, module))
        if isinstance(expr, cst.Call):
            return self._call(expr, scope, module)
        if isinstance(expr, cst.Await):
            return self.values(expr.expression, scope, module)
        if isinstance(expr, cst.Subscript):
            key = _subscript_key(expr)
            return self._union(self.items(v, key) for v in self.values(expr.value, scope, module))
        if isinstance(expr, cst.IfExp):
            return self.values(expr.body, scope, module) | self.values(expr.orelse, scope, module)
        if isinstance(expr, cst.BooleanOperation):
            return self.values(expr.left, scope, module) | self.values(expr.right, scope, module)
        if isinstance(expr, cst.NamedExpr):
            return self.values(expr.value, scope, module)
        if isinstance(expr, cst.Lambda):
            return frozenset({Lambda(expr, module, scope, id(expr))})
        if isinstance(expr, cst.Dict) or isinstance(expr, cst.DictComp):
            return frozenset({Container("dict", expr, module, scope, id(expr))})
        if isinstance(expr, (cst.List, cst.ListComp)):
            return frozenset({Container("list", expr, module, scope, id(expr))})
        if isinstance(expr, cst.Tuple):
            return frozenset({Container("tuple", expr, module, scope, id(expr))})
        if isinstance(expr, (cst.Set, cst.SetComp)):
            return frozenset({Container("set", expr, module, scope, id(expr))})
        constant = literal(expr)
        if constant is not _NOT_LITERAL:
            return frozenset({Constant(constant)})  # type: ignore[arg-type]
        if isinstance(expr, (cst.FormattedString, cst.ConcatenatedString, cst.BinaryOperation)):
            return frozenset({Made("builtins.str", None, module, scope, id(expr))}) if _is_text(expr) else EMPTY
        return EMPTY

    # -- names -------------------------------------------------------------------------------
    def _name(self, name: str, scope: FunctionInfo | None, module: ModuleFacts) -> Values:
        fn = scope
        while fn is not None:
            own = [b for b in fn.bindings if b.name == name]
            if own:
                return self._union(self._binding(b, fn, module) for b in own)
            if fn.param(name) is not None:
                return self.parameter(fn, name)
            nested = module.find_function(f"{fn.qualname}.{name}")
            if nested is not None:
                return frozenset({Function.of(nested)})
            fn = fn.parent
        return self._global(name, module)

    def _global(self, name: str, module: ModuleFacts) -> Values:
        """A module-level name of ``module``: every module-level binding of it (and the bindings of
        functions that declare it ``global``), a def or class, an import, a builtin."""
        return self._ask("flow-global", (module.path, name), lambda: self._find_global(name, module), in_progress=EMPTY)

    def _find_global(self, name: str, module: ModuleFacts) -> Values:
        parts: list[Values] = []
        bindings = [b for b in module.module_bindings if b.name == name]
        parts.extend(self._binding(b, None, module) for b in bindings)
        if name in module.rebound_names:
            for fn in module.functions:
                if _declares_global(fn, name):
                    parts.extend(self._binding(b, None, module) for b in fn.bindings if b.name == name)
        local_fn = module.find_function(name)
        if local_fn is not None:
            parts.append(frozenset({Function.of(local_fn)}))
        local_cls = module.find_class(name)
        if local_cls is not None:
            parts.append(frozenset({Class.of(local_cls)}))
        if name in module.imports and not bindings:
            parts.append(self.qualified(module.imports[name], module))
        if not parts and name in BUILTIN_NAMES:
            return frozenset({External(f"builtins.{name}")})
        return self._union(parts)

    def _binding(self, binding: Binding, scope: FunctionInfo | None, module: ModuleFacts) -> Values:
        kind = binding.kind
        if kind == "assign":
            return self.values(binding.value, scope, module)
        if kind == "import":
            return self.qualified(binding.qualified or "", module)
        if kind == "with":
            return self._entered(binding.value, scope, module)
        if kind in ("for", "unpack"):
            return self._union(self.items(v, None) for v in self.values(binding.value, scope, module))
        if kind == "param-annotation":
            return self._typed(binding.value, scope, module)
        return EMPTY

    def qualified(self, qualified: str, near: ModuleFacts) -> Values:
        """What an absolute dotted name denotes: a project function, class, module variable or module,
        else a name outside the project."""
        return self._ask(
            "flow-qualified", (qualified, near.path), lambda: self._qualified(qualified, near), in_progress=EMPTY
        )

    def _qualified(self, qualified: str, near: ModuleFacts) -> Values:
        if not qualified:
            return EMPTY
        project = self.project
        found = project.lookup(qualified, near=near)
        if isinstance(found, FunctionInfo):
            return frozenset({Function.of(found)})
        if isinstance(found, ClassInfo):
            return frozenset({Class.of(found)})
        owner, _, var = qualified.rpartition(".")
        if owner:
            for entry in project.entries_imported(owner, near.path):
                target = project.load(entry)
                if (
                    target is not None
                    and target is not near
                    and (any(b.name == var for b in target.module_bindings) or var in target.imports)
                ):
                    return self._global(var, target)
        if project.entries_imported(qualified, near.path):
            return frozenset({Module(qualified, str(near.path))})
        return frozenset({External(qualified)})

    def _typed(self, annotation: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts) -> Values:
        """An object known by its declared type (``client: httpx.Client``, ``Optional[Agent]``)."""
        out: set[Value] = set()
        for kind in _annotation_names(annotation):
            for value in self.values(kind, scope, module):
                if isinstance(value, Class):
                    out.add(Instance.of(value.cls))
                elif isinstance(value, External) and value.name not in _NOT_TYPES:
                    out.add(Made(value.name))
        return frozenset(out)

    # -- calls -------------------------------------------------------------------------------
    def _call(self, call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts) -> Values:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("__enter__", "__aenter__") and not call.args:
            # ``ctx = Saver.from_conn_string(url); saver = await ctx.__aenter__()``: a ``with`` spelled out
            return self._entered(func.value, scope, module)
        parts: list[Values] = []
        for callee in self.values(call.func, scope, module):
            parts.append(self._result(callee, call, scope, module))
        return self._union(parts)

    def _result(self, callee: Value, call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts) -> Values:
        if isinstance(callee, Function):
            return self.returns(callee.fn)
        if isinstance(callee, Bound):
            if callee.fn.name == "__init__":
                return EMPTY
            return self.returns(callee.fn)
        if isinstance(callee, Class):
            return frozenset({Instance.of(callee.cls)})
        if isinstance(callee, Partial):
            return self._result(callee.target, call, scope, module)
        if isinstance(callee, Lambda):
            return self.values(callee.node.body, callee.scope, callee.module)
        if isinstance(callee, Instance):
            method = self.attribute(callee, "__call__")
            return self._union(self.returns(v.fn) for v in method if isinstance(v, Bound))
        if isinstance(callee, External):
            return self._external_call(callee.name, call, scope, module)
        if isinstance(callee, Member):
            if callee.name in _FLUENT.get(self.type_name(callee.owner), ()):
                return frozenset({callee.owner})
            if isinstance(callee.owner, Container) and callee.owner.kind == "dict" and callee.name in _DICT_READS:
                return self.items(callee.owner, self._key_value(call, scope, module))
            if isinstance(callee.owner, Container) and callee.name == "copy":
                return frozenset({callee.owner})
            return frozenset({Made(self.type_name(callee), call, module, scope, id(call))})
        if isinstance(callee, Made):
            return frozenset({Made(f"{callee.type}()", call, module, scope, id(call))})
        return EMPTY

    def _external_call(self, name: str, call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts) -> Values:
        if name in _PARTIAL and call.args:
            targets = self.values(call.args[0].value, scope, module)
            return frozenset(Partial(t, call, id(call)) for t in targets)
        if name in _IDENTITY_CALLS and call.args:
            return self.values(call.args[-1].value, scope, module)
        if name == _GETATTR and len(call.args) >= 2:
            attr = literal(call.args[1].value)
            if isinstance(attr, str):
                owners = self.values(call.args[0].value, scope, module)
                found = self._union(self.attribute(o, attr) for o in owners)
                if len(call.args) >= 3:
                    found |= self.values(call.args[2].value, scope, module)
                return found
            return EMPTY
        if name == "builtins.dict":
            return frozenset({Container("dict", call, module, scope, id(call))})
        if name in ("builtins.list", "builtins.tuple", "builtins.set"):
            return frozenset({Container(name.rpartition(".")[2], call, module, scope, id(call))})
        if name in ("builtins.str", "builtins.repr"):
            return frozenset({Made("builtins.str", call, module, scope, id(call))})
        return frozenset({Made(name, call, module, scope, id(call))})

    def _key_value(self, call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts) -> Value | None:
        if not call.args:
            return None
        keys = self.values(call.args[0].value, scope, module)
        return next(iter(keys)) if len(keys) == 1 and isinstance(next(iter(keys)), Constant) else None

    def type_name(self, value: Value) -> str:
        """:func:`type_name`, and for an instance of a project class its first library base class
        (``class Graph(StateGraph)``: an instance is known as a ``langgraph.graph.StateGraph``)."""
        if isinstance(value, Instance):
            bases = self.external_bases(value.cls)
            return bases[0] if bases else value.cls.full_name
        if isinstance(value, Member):
            return f"{self.type_name(value.owner)}.{value.name}"
        return type_name(value)

    def _functions_called(self, value: Value) -> list[FunctionInfo]:
        if isinstance(value, (Function, Bound)):
            return [value.fn]
        if isinstance(value, Class):
            init = self._method(value.cls, "__init__")
            return [init] if init is not None else []
        if isinstance(value, Partial):
            return self._functions_called(value.target)
        if isinstance(value, Instance):
            call = self._method(value.cls, "__call__")
            return [call] if call is not None else []
        return []

    # -- context managers --------------------------------------------------------------------
    def _entered(self, item: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts) -> Values:
        """``with <item> as x``: what ``x`` holds. A project generator decorated ``@contextmanager`` /
        ``@asynccontextmanager`` gives what it yields; a project class with ``__enter__`` /
        ``__aenter__`` what that returns; anything else (a library context manager such as
        ``SqliteSaver.from_conn_string(...)``) is taken to enter as itself."""
        out: set[Value] = set()
        called = item.func if isinstance(item, cst.Call) else None
        for value in self.values(item, scope, module):
            if isinstance(value, Instance):
                enter = self._method(value.cls, "__aenter__") or self._method(value.cls, "__enter__")
                if enter is not None:
                    out.update(self.returns(enter))
                    continue
            out.add(value)
        if called is not None:
            for callee in self.values(called, scope, module):
                if isinstance(callee, (Function, Bound)) and self._is_context_generator(callee.fn):
                    out.update(self._yields(callee.fn))
        return frozenset(out)

    def _is_context_generator(self, fn: FunctionInfo) -> bool:
        for dec in fn.decorators:
            for value in self.values(dec.target, fn.parent, fn.module):
                if isinstance(value, External) and value.name in _CONTEXT_MANAGERS:
                    return True
        return False

    def _yields(self, fn: FunctionInfo) -> Values:
        return self._ask(
            "flow-yields",
            id(fn),
            lambda: self._union(
                self.values(y.value, fn, fn.module) for y in _own_yields(fn) if isinstance(y.value, cst.BaseExpression)
            ),
            in_progress=EMPTY,
        )

    # -- attributes --------------------------------------------------------------------------
    def _attribute(self, owner: Value, name: str) -> Values:
        if isinstance(owner, External):
            return frozenset({External(f"{owner.name}.{name}")})
        if isinstance(owner, Module):
            return self._module_member(owner, name)
        if isinstance(owner, Class):
            return self._class_member(owner.cls, name, None)
        if isinstance(owner, Instance):
            found = self._class_member(owner.cls, name, owner) | self.stored(owner, name)
            if not found and self.external_bases(owner.cls):
                return frozenset({Member(owner, name)})  # a library base class's method
            return found
        if isinstance(owner, (Made, Member)):
            return self.stored(owner, name) | frozenset({Member(owner, name)})
        if isinstance(owner, Container):
            return frozenset({Member(owner, name)})
        if isinstance(owner, (Function, Bound)) and name == "__call__":
            return frozenset({owner})
        return EMPTY

    def _module_member(self, owner: Module, name: str) -> Values:
        importer = Path(owner.importer) if owner.importer else None
        parts: list[Values] = []
        for entry in self.project.entries_imported(owner.name, importer):
            target = self.project.load(entry)
            if target is not None:
                parts.append(self._global(name, target))
        found = self._union(parts)
        submodule = f"{owner.name}.{name}"
        if not found and self.project.entries_imported(submodule, importer):
            return frozenset({Module(submodule, owner.importer)})
        return found

    def _class_member(self, cls: ClassInfo, name: str, instance: Instance | None) -> Values:
        """A method (bound to ``instance``), a class-body value or an attribute the class's (or a base
        class's, or a project subclass's) methods store on ``self``."""
        out: set[Value] = set()
        for klass in self._mro(cls):
            method = klass.methods.get(name)
            if method is not None:
                if _is_static(method):
                    out.add(Function.of(method))
                else:
                    out.add(
                        Bound.of(method, instance)
                        if instance is not None or _is_classmethod(method)
                        else Function.of(method)
                    )
                break
            body = [b for b in klass.body_bindings if b.name == name and b.kind == "assign"]
            if body:
                out.update(self._union(self.values(b.value, None, klass.module) for b in body))
                break
        if instance is not None:
            for klass in (*self._mro(cls), *self._subclasses(cls)):
                for binding in klass.attributes.get(name, []):
                    scope = klass.module.enclosing_function(binding.value)
                    out.update(self.values(binding.value, scope, klass.module))
        return frozenset(out)

    def _method(self, cls: ClassInfo, name: str) -> FunctionInfo | None:
        for klass in self._mro(cls):
            if name in klass.methods:
                return klass.methods[name]
        return None

    def _mro(self, cls: ClassInfo) -> list[ClassInfo]:
        """``cls`` and its project base classes, depth first (enough for the rules' questions)."""
        return self._ask("flow-mro", id(cls), lambda: list(self._bases_of(cls, 0)), in_progress=[cls])

    def _bases_of(self, cls: ClassInfo, depth: int) -> Iterator[ClassInfo]:
        yield cls
        if depth > 8:
            return
        for base in cls.node.bases:
            for value in self._base_values(base.value, cls):
                if isinstance(value, Class) and value.cls is not cls:
                    yield from self._bases_of(value.cls, depth + 1)

    def _base_values(self, expr: cst.BaseExpression, cls: ClassInfo) -> Values:
        """What a class statement's base may be, read statically: the names it resolves to through
        imports, definitions and aliases (``class Agent(Base)``, ``class G(langgraph.graph.StateGraph)``).
        A base is spelled, not computed, in real code; following a computed one through calls,
        parameters and their callers walked whole vendored libraries for nothing (issue 35)."""
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        module = cls.module
        out: set[Value] = set()
        for name in self.project.resolver(module).names(expr, None):
            found = self.project.lookup(name, near=module)
            if isinstance(found, ClassInfo):
                out.add(Class.of(found))
            elif found is None:
                out.add(External(name))
        return frozenset(out)

    def external_bases(self, cls: ClassInfo) -> list[str]:
        """Library classes ``cls`` derives from, through project bases (``class MyGraph(StateGraph)``), sorted."""
        return self._ask("flow-external-bases", id(cls), lambda: sorted(self._external_bases(cls)), in_progress=[])

    def _external_bases(self, cls: ClassInfo) -> set[str]:
        out: set[str] = set()
        for klass in self._mro(cls):
            for base in klass.node.bases:
                for value in self._base_values(base.value, klass):
                    if isinstance(value, External):
                        out.add(value.name)
        return out

    def _subclasses(self, cls: ClassInfo) -> list[ClassInfo]:
        """Project classes deriving from ``cls`` (modules that mention its name are searched)."""

        def find() -> list[ClassInfo]:
            out = []
            for module in self._near(Class.of(cls), [f"{cls.name})", f"{cls.name},", f"{cls.name}["]):
                for klass in module.classes:
                    if klass is not cls and any(k is cls for k in self._mro(klass)[1:]):
                        out.append(klass)
            return out

        return self._ask("flow-subclasses", id(cls), find, in_progress=[])

    # -- stores ------------------------------------------------------------------------------
    def _stores(self, owner: Value, name: str) -> Iterator[tuple[cst.BaseExpression, FunctionInfo | None, ModuleFacts]]:
        for module in self._near(owner, [f".{name} =", f".{name}="]):
            for target, value, scope in self._assignments(module):
                if (
                    isinstance(target, cst.Attribute)
                    and target.attr.value == name
                    and owner in self.values(target.value, scope, module)
                ):
                    yield value, scope, module

    def _assignments(self, module: ModuleFacts) -> list[_Assignment]:
        return self._ask("flow-assignments", module.path, lambda: _assignments(module), in_progress=[])

    def _subscript_assignments(
        self, module: ModuleFacts
    ) -> list[tuple[cst.Subscript, Value | None, cst.BaseExpression, FunctionInfo | None]]:
        """The module's ``x[k] = v`` stores, with their literal key (None: not a literal), worked out
        once per list of assignments: every question about a container's items walked all the
        assignments again. (The list itself is asked as before, at the asker's depth.)"""
        assignments = self._assignments(module)
        kept = self._subscripts.get(module.path)
        if kept is not None and kept[0] is assignments:
            return kept[1]
        stores = [
            (target, _subscript_key(target), value, scope)
            for target, value, scope in assignments
            if isinstance(target, cst.Subscript)
        ]
        self._subscripts[module.path] = (assignments, stores)
        return stores

    def _items(self, owner: Value, key: Value | None) -> Values:
        if isinstance(owner, Container):
            return self._container_items(owner, key)
        if isinstance(owner, (Made, Instance)):
            return self._subscript_stores(owner, key)
        return EMPTY

    def _container_items(self, owner: Container, key: Value | None) -> Values:
        node, scope, module = owner.node, owner.scope, owner.module
        parts: list[Values] = []
        if isinstance(node, cst.Dict):
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    if (
                        key is None
                        or not isinstance(key, Constant)
                        or literal(element.key) in (key.value, _NOT_LITERAL)
                    ):
                        parts.append(self.values(element.value, scope, module))
                elif isinstance(element, cst.StarredDictElement):
                    parts.append(self._union(self.items(v, key) for v in self.values(element.value, scope, module)))
        elif isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    parts.append(self._union(self.items(v, None) for v in self.values(el.value, scope, module)))
                else:
                    parts.append(self.values(el.value, scope, module))
        elif isinstance(node, (cst.ListComp, cst.SetComp)):
            parts.append(self.values(node.elt, scope, module))
        elif isinstance(node, cst.DictComp):
            parts.append(self.values(node.value, scope, module))
        elif isinstance(node, cst.Call):  # dict(a=1, **base)
            for arg in node.args:
                if arg.keyword is not None and (
                    key is None or not isinstance(key, Constant) or key.value == arg.keyword.value
                ):
                    parts.append(self.values(arg.value, scope, module))
                elif arg.star == "**":
                    parts.append(self._union(self.items(v, key) for v in self.values(arg.value, scope, module)))
                elif arg.star == "" and arg.keyword is None:
                    parts.append(self._union(self.items(v, key) for v in self.values(arg.value, scope, module)))
        parts.append(self._subscript_stores(owner, key))
        return self._union(parts)

    def _subscript_stores(self, owner: Value, key: Value | None) -> Values:
        """``x[k] = v`` and ``x.update({...})`` / ``x.setdefault(k, v)`` / ``x.append(v)`` where ``x``
        may be ``owner``: searched in the module that made it, and for a module-level container in
        the modules that import it by name."""
        module = (
            owner.module
            if isinstance(owner, (Container, Made))
            else owner.cls.module
            if isinstance(owner, Instance)
            else None
        )
        if module is None:
            return EMPTY
        parts: list[Values] = []
        for target, store_key, value, scope in self._subscript_assignments(module):
            if key is not None and store_key is not None and isinstance(key, Constant) and store_key != key:
                continue
            if owner in self.values(target.value, scope, module):
                parts.append(self.values(value, scope, module))
        for call in self._sites.container_stores(module):
            func = call.node.func
            assert isinstance(func, cst.Attribute)  # (what container_stores lists)
            if owner not in self.values(func.value, call.function, module):
                continue
            method = func.attr.value
            args = [a.value for a in call.node.args]
            if method == "update":
                parts.extend(
                    self._union(self.items(v, key) for v in self.values(a, call.function, module)) for a in args
                )
                parts.extend(
                    self.values(a.value, call.function, module) for a in call.node.args if a.keyword is not None
                )
            elif method == "setdefault" and len(args) >= 2:
                parts.append(self.values(args[1], call.function, module))
            elif method in ("append", "add") and args:
                parts.append(self.values(args[0], call.function, module))
            elif method == "insert" and len(args) >= 2:
                parts.append(self.values(args[1], call.function, module))
            elif method == "extend" and args:
                parts.append(self._union(self.items(v, None) for v in self.values(args[0], call.function, module)))
        return self._union(parts)

    # -- parameters and call sites ------------------------------------------------------------
    def _parameter(self, fn: FunctionInfo, name: str) -> Values:
        parts: list[Values] = []
        names = fn.param_names()
        owner = fn.class_info if fn.parent is None else None
        if owner is not None and names and names[0] == name and not _is_static(fn):
            cls_value: Value = Class.of(owner) if _is_classmethod(fn) else Instance.of(owner)
            return frozenset({cls_value})
        param = fn.param(name)
        if param is None:
            return EMPTY
        if param.annotation is not None:
            parts.append(self._typed(param.annotation.annotation, fn.parent, fn.module))
        if param.default is not None:
            parts.append(self.values(param.default, fn.parent, fn.module))
        for expr, scope, module, _ in self.arguments(fn, name):
            parts.append(self.values(expr, scope, module))
        return self._union(parts)

    def _arguments(
        self, fn: FunctionInfo, name: str
    ) -> Iterator[tuple[cst.BaseExpression, FunctionInfo | None, ModuleFacts, CallInfo]]:
        names = fn.param_names()
        if name not in names:
            return
        param = fn.param(name)
        kw_only = param is not None and param in fn.node.params.kwonly_params
        positional_names = [n for n in names if fn.param(n) not in fn.node.params.kwonly_params]
        for call in self.callers(fn):
            bound_self = self._binds_self(call, fn)
            index = positional_names.index(name) - (1 if bound_self else 0) if not kw_only else -1
            yielded = False
            for arg in call.node.args:
                if arg.keyword is not None and arg.keyword.value == name:
                    yield arg.value, call.function, call.module, call
                    yielded = True
            if yielded:
                continue
            positional = [a for a in call.node.args if a.keyword is None and not a.star]
            if 0 <= index < len(positional) and not any(a.star == "*" for a in call.node.args[: index + 1]):
                yield positional[index].value, call.function, call.module, call
                continue
            for arg in call.node.args:
                if arg.star == "**":
                    for spread in self.values(arg.value, call.function, call.module):
                        if isinstance(spread, Container) and spread.kind == "dict":
                            for item in _dict_entries(spread, name):
                                yield item, spread.scope, spread.module, call

    def _binds_self(self, call: CallInfo, fn: FunctionInfo) -> bool:
        """Does ``call`` pass ``self`` implicitly (``obj.method(...)``, ``Class(...)`` for ``__init__``)?"""
        if fn.class_info is None or fn.parent is not None or _is_static(fn):
            return False
        func = call.node.func
        if fn.name == "__init__":
            return True
        if isinstance(func, cst.Attribute):
            owners = self.values(func.value, call.function, call.module)
            return not any(isinstance(o, Class) and not _is_classmethod(fn) for o in owners)
        return any(isinstance(v, Bound) for v in self.values(func, call.function, call.module))

    def _callers(self, fn: FunctionInfo) -> Iterator[CallInfo]:
        spelled = fn.class_info.name if fn.name == "__init__" and fn.class_info is not None else fn.name
        seen: set[int] = set()
        # only modules that can resolve a name to fn's module (the import graph) can call it by name
        for module in self.project.modules_calling_into(fn.module, _call_words(spelled), spelled):
            for call in self._sites.named(module, spelled):
                if any(f is fn for f in self.callees(call)):
                    seen.add(id(call.node))
                    yield call
        # a function handed on as a value and called under another name (``streamer=stream_run``;
        # ``streamer(...)``): calls of local names and parameters where it is mentioned
        if fn.class_info is not None and fn.parent is None:
            return
        for module in self._near(Function.of(fn), [spelled]):
            for call in self._sites.of_locals(module):
                func = call.node.func
                if id(call.node) in seen or not isinstance(func, cst.Name) or func.value == spelled:
                    continue
                if any(f is fn for f in self.callees(call)):
                    yield call

    # -- where an object can be ------------------------------------------------------------------
    def modules_near(self, owner: Value, words: list[str]) -> list[ModuleFacts]:
        """The parsed modules holding one of ``words`` where ``owner`` can be in scope (see :meth:`_near`)."""
        return self._near(owner, words)

    def _near(self, owner: Value, words: list[str]) -> list[ModuleFacts]:
        """The modules holding one of ``words`` where ``owner`` can be in scope: the module that made
        it, the modules it imports (it may hand the object to their functions) and the modules that
        import it (they may read it from its globals, calls and returns). Every other module is
        neither parsed nor a dependency of the answer."""
        home = _home(owner)
        if home is None:
            return []
        hood = self._neighbourhood(home)
        found: dict[object, ModuleFacts] = {}
        for word in words:
            for entry in self.project.files_mentioning_among(word, hood):
                if entry.path not in found:
                    module = self.project.load(entry)
                    if module is not None:
                        found[entry.path] = module
        return [found[p] for p in sorted(found, key=str)]

    def _neighbourhood(self, module: ModuleFacts) -> frozenset[Path]:
        def compute() -> frozenset[Path]:
            paths = {module.path}
            for imported in module.imported_modules:
                for name in (imported, imported.rpartition(".")[0]):
                    for entry in self.project.entries_imported(name, module.path) if name else ():
                        paths.add(entry.path)
            tail = module.module_name.rpartition(".")[2] or module.path.parent.name
            if module.is_package or tail == "__init__":
                tail = module.path.parent.name
            for entry in self.project.files_mentioning(tail):
                paths.add(entry.path)
            return frozenset(paths)

        return self._ask("flow-neighbourhood", module.path, compute, in_progress=frozenset({module.path}))

    def _method_calls(self, owner: Value, method: str) -> Iterator[CallInfo]:
        for module in self._near(owner, [f".{method}("]):
            for call in module.all_calls:
                func = call.node.func
                if (
                    isinstance(func, cst.Attribute)
                    and func.attr.value == method
                    and owner in self.values(func.value, call.function, module)
                ):
                    yield call


# -- small syntax helpers ------------------------------------------------------------------------
_NOT_LITERAL = object()
_NOT_TYPES = frozenset({"builtins.None", "typing.Any", "builtins.object", "typing.Optional", "typing.Union"})


def literal(expr: cst.BaseExpression | None) -> object:
    """The Python value of a literal expression, or ``_NOT_LITERAL``."""
    if isinstance(expr, cst.SimpleString):
        try:
            return expr.evaluated_value
        except Exception:  # pragma: no cover - a string LibCST cannot evaluate
            return _NOT_LITERAL
    if isinstance(expr, cst.ConcatenatedString):
        left, right = literal(expr.left), literal(expr.right)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        return _NOT_LITERAL
    if isinstance(expr, cst.Integer):
        return expr.evaluated_value
    if isinstance(expr, cst.Float):
        return expr.evaluated_value
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = literal(expr.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else _NOT_LITERAL
    return _NOT_LITERAL


def _is_text(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Modulo)):
        return _is_text(expr.left) or isinstance(expr.left, cst.SimpleString)
    return False


def _subscript_key(expr: cst.Subscript) -> Value | None:
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    value = literal(expr.slice[0].slice.value)
    return Constant(value) if value is not _NOT_LITERAL else None  # type: ignore[arg-type]


def _dict_entries(container: Container, key: str) -> Iterator[cst.BaseExpression]:
    node = container.node
    if isinstance(node, cst.Dict):
        for element in node.elements:
            if isinstance(element, cst.DictElement) and literal(element.key) == key:
                yield element.value
    elif isinstance(node, cst.Call):
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == key:
                yield arg.value


def _annotation_names(annotation: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The type expressions an annotation names: ``Optional[Agent]`` -> ``Agent``; ``A | None`` -> ``A``."""
    if isinstance(annotation, cst.Subscript):
        head = annotation.value
        head_text = (
            head.attr.value if isinstance(head, cst.Attribute) else head.value if isinstance(head, cst.Name) else ""
        )
        if head_text in ("Optional", "Union", "Annotated", "Type", "type"):
            for element in annotation.slice:
                if isinstance(element.slice, cst.Index):
                    yield from _annotation_names(element.slice.value)
                    if head_text == "Annotated":
                        break
            return
        yield head
        return
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        yield from _annotation_names(annotation.left)
        yield from _annotation_names(annotation.right)
        return
    if isinstance(annotation, (cst.Name, cst.Attribute)):
        yield annotation


def _call_words(name: str) -> list[str]:
    """Text a module must hold to call ``name`` or hand it to a runner (as the project's caller search)."""
    return [f"{name}(", f"{name},", f"{name})", f"={name}"]


def _home(value: Value) -> ModuleFacts | None:
    """The module an object was made in (where the search for its uses starts)."""
    if isinstance(value, (Made, Container)):
        return value.module
    if isinstance(value, (Instance, Class)):
        return value.cls.module
    if isinstance(value, (Function, Bound)):
        return value.fn.module
    if isinstance(value, Member):
        return _home(value.owner)
    if isinstance(value, Partial):
        return _home(value.target)
    if isinstance(value, Lambda):
        return value.module
    return None


def _decorator_names(fn: FunctionInfo) -> set[str]:
    out = set()
    for dec in fn.decorators:
        target = dec.target
        out.add(
            target.attr.value
            if isinstance(target, cst.Attribute)
            else target.value
            if isinstance(target, cst.Name)
            else ""
        )
    return out


def _is_static(fn: FunctionInfo) -> bool:
    return "staticmethod" in _decorator_names(fn)


def _is_classmethod(fn: FunctionInfo) -> bool:
    return "classmethod" in _decorator_names(fn)


def _declares_global(fn: FunctionInfo, name: str) -> bool:
    for node in _own_nodes(fn.node.body):
        if isinstance(node, cst.Global) and any(n.name.value == name for n in node.names):
            return True
    return False


def _own_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Nodes of a function body, not of defs, classes or lambdas nested in it."""
    stack = [root]
    while stack:
        cur = stack.pop()
        yield cur
        for child in cur.children:
            if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                stack.append(child)


def _own_yields(fn: FunctionInfo) -> Iterator[cst.Yield]:
    for node in _own_nodes(fn.node.body):
        if isinstance(node, cst.Yield):
            yield node


_Assignment = tuple[cst.BaseAssignTargetExpression | cst.BaseExpression, cst.BaseExpression, "FunctionInfo | None"]


def _assignments(module: ModuleFacts) -> list[_Assignment]:
    """Every ``target = value`` of the module (all targets of chained and annotated assignments),
    with the function it runs in."""
    out: list[_Assignment] = []
    for node in module._meta:
        if isinstance(node, cst.Assign):
            for t in node.targets:
                out.append((t.target, node.value, module.enclosing_function(node)))
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            out.append((node.target, node.value, module.enclosing_function(node)))
    return out


def type_name(value: Value) -> str:
    """The qualified type an external object is known by: ``httpx.Client`` for ``httpx.Client()``,
    ``openai.OpenAI.chat.completions`` for a member chain off a client. (An instance of a project
    class deriving from a library class is known by the engine: :meth:`Flow.type_name`.)"""
    if isinstance(value, Made):
        return value.type
    if isinstance(value, Member):
        return f"{type_name(value.owner)}.{value.name}"
    if isinstance(value, External):
        return value.name
    if isinstance(value, Container):
        return f"builtins.{value.kind}"
    return ""


def flow_of(project: ProjectQueries) -> Flow:
    """The project's engine (one per scan)."""
    return project.cached("flow-engine", "engine", lambda: Flow(project))
