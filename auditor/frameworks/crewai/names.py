"""Everything resume-audit knows about CrewAI Flows' resume plane, in one place.

Checked against the installed source of crewai 1.15.30 (2026-12-02):

* ``crewai/flow/flow.py`` -- the historical import path; re-exports ``Flow``
  (a subclass of ``crewai.flow.runtime.Flow``) and the ``start`` / ``listen``
  / ``router`` decorators, which are defined in ``crewai.flow.dsl._start`` /
  ``_listen`` / ``_router`` and re-exported by ``crewai.flow.dsl`` and
  ``crewai.flow``. ``from crewai import Flow`` re-exports the same class.
* ``crewai/flow/persistence/__init__.py`` -- ``persist`` (defined in
  ``crewai.flow.persistence.decorators``), ``SQLiteFlowPersistence``
  (``.sqlite``) and ``FlowPersistence`` (``.base``); ``crewai.flow`` also
  re-exports ``persist``.
* ``crewai/state/checkpoint_config.py`` -- ``CheckpointConfig`` (re-exported
  by ``crewai`` and ``crewai.state``): ``on_events`` defaults to
  ``["task_completed"]``, ``"*"`` triggers on every event.
* ``crewai/state/checkpoint_listener.py`` -- ``_find_checkpoint(source)``
  chooses the config by the *event source*: a Flow's own events use
  ``flow.checkpoint``; a task event walks Task -> Agent -> Crew and never
  reaches the Flow the crew runs in.
* ``crewai/flow/runtime/__init__.py`` -- ``Flow.checkpoint`` field,
  ``Flow.from_checkpoint`` / ``Flow.fork`` classmethods, ``kickoff`` /
  ``kickoff_async`` / ``akickoff`` / ``stream_events`` / ``astream`` taking
  ``inputs=`` (an ``"id"`` key reloads ``@persist`` state),
  ``from_checkpoint=`` and ``restore_from_state_id=``; ``from_pending`` /
  ``resume`` for async human feedback.
* ``crewai/crew.py`` -- ``Crew(checkpoint=...)``, ``Crew.from_checkpoint``.

Rules ask this module; they never spell CrewAI module paths themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from resume_audit.analysis.queries import ProjectQueries
from resume_audit.facts.model import ClassInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import (
    argument,
    bool_value,
    dict_items,
    is_none,
    keyword,
    string_value,
    subscript_keys_assigned,
)
from resume_audit.facts.walk import visit_fast
from resume_audit.frameworks.classes import extends, module_constant, named_class, project_bases

PACKAGES = ("crewai",)

#: ``Flow`` where it is defined and every path users import it from.
FLOW = frozenset(
    {
        "crewai.Flow",
        "crewai.flow.Flow",
        "crewai.flow.flow.Flow",
        "crewai.flow.runtime.Flow",
    }
)

_DECORATOR_ROOTS = ("crewai.flow", "crewai.flow.flow", "crewai.flow.dsl")
#: ``@start()`` / ``@listen(...)`` / ``@router(...)``: the methods of a flow.
START = frozenset({*(f"{r}.start" for r in _DECORATOR_ROOTS), "crewai.flow.dsl._start.start"})
LISTEN = frozenset({*(f"{r}.listen" for r in _DECORATOR_ROOTS), "crewai.flow.dsl._listen.listen"})
ROUTER = frozenset({*(f"{r}.router" for r in _DECORATOR_ROOTS), "crewai.flow.dsl._router.router"})
FLOW_METHOD_DECORATORS = START | LISTEN | ROUTER

#: ``@persist(...)`` on the class (reloads state on ``kickoff(inputs={"id": ...})``
#: but re-runs completed methods) or on a method (saves after it, never reloads).
PERSIST = frozenset(
    {
        "crewai.flow.persistence.persist",
        "crewai.flow.persistence.decorators.persist",
        "crewai.flow.persist",
    }
)
FLOW_PERSISTENCE = frozenset(
    {
        "crewai.flow.persistence.FlowPersistence",
        "crewai.flow.persistence.base.FlowPersistence",
        "crewai.flow.persistence.SQLiteFlowPersistence",
        "crewai.flow.persistence.sqlite.SQLiteFlowPersistence",
    }
)

CHECKPOINT_CONFIG = frozenset(
    {
        "crewai.CheckpointConfig",
        "crewai.state.CheckpointConfig",
        "crewai.state.checkpoint_config.CheckpointConfig",
    }
)

CREW = frozenset({"crewai.Crew", "crewai.crew.Crew"})
AGENT = frozenset({"crewai.Agent", "crewai.agent.Agent", "crewai.agent.core.Agent"})

#: Methods that run a flow (all take ``inputs=``; all but the streaming ones are awaited or blocking).
KICKOFF_METHODS = frozenset({"kickoff", "kickoff_async", "akickoff", "stream_events", "astream"})
#: ``MyFlow.from_checkpoint(CheckpointConfig(restore_from=...))`` / ``MyFlow.fork(...)``.
RESTORE_CLASSMETHODS = frozenset({"from_checkpoint", "fork"})
#: ``MyFlow.from_pending(flow_id, persistence)`` then ``flow.resume(feedback)``.
FROM_PENDING = "from_pending"
RESUME_METHODS = frozenset({"resume", "resume_async"})

#: ``CheckpointConfig.on_events`` default (checkpoint_config.py: ``default=["task_completed"]``).
DEFAULT_ON_EVENTS = ("task_completed",)
#: Restoring a flow constructs it, which fires ``flow_created``; with these in
#: ``on_events`` the fresh state is checkpointed over the saved progress.
RESTORE_CLOBBERING_EVENTS = frozenset({"flow_created", "*"})
#: The event a flow checkpoint should be written on: after each method (measured on crewai
#: 1.15.30: one checkpoint per method, and a restore resumes after the last completed one).
PROGRESS_EVENT = "method_execution_finished"
#: Event types whose *source* is the Flow itself, so ``flow.checkpoint`` is the
#: config ``_find_checkpoint`` consults (emitted from crewai/flow/runtime with
#: ``crewai_event_bus.emit(self, ...)``). Task/crew/agent/LLM events have other
#: sources and only ever use the crew's or agent's own config; the signal
#: events (``SIGTERM``...) come from telemetry.
FLOW_SOURCED_EVENTS = frozenset(
    {
        "*",
        "flow_created",
        "flow_started",
        "flow_finished",
        "flow_failed",
        "flow_paused",
        "method_execution_started",
        "method_execution_finished",
        "method_execution_failed",
        "method_execution_paused",
        "human_feedback_requested",
        "human_feedback_received",
        "flow_input_requested",
        "flow_input_received",
    }
)


# -- classes and methods -------------------------------------------------------


def is_flow_class(cls: ClassInfo, project: ProjectQueries) -> bool:
    return extends(cls, FLOW, project)


def flow_classes(module: ModuleFacts, project: ProjectQueries) -> list[ClassInfo]:
    return [c for c in module.classes if is_flow_class(c, project)]


def _decorated_by(fn: FunctionInfo, names: frozenset[str], project: ProjectQueries) -> bool:
    resolver = project.resolver(fn.module)
    scope = fn.parent
    return any(resolver.names(d.target, scope) & names for d in fn.decorators)


def is_flow_method(fn: FunctionInfo, project: ProjectQueries) -> bool:
    """A ``@start``/``@listen``/``@router`` method of a Flow subclass."""
    return fn.class_info is not None and fn.parent is None and _decorated_by(fn, FLOW_METHOD_DECORATORS, project)


def flow_methods(cls: ClassInfo, project: ProjectQueries) -> list[FunctionInfo]:
    """Flow methods of ``cls`` including those inherited from project base classes."""
    out: list[FunctionInfo] = []
    seen: set[str] = set()
    for klass in project_bases(cls, project):
        for name, fn in klass.methods.items():
            if name in seen:
                continue
            seen.add(name)
            if is_flow_method(fn, project):
                out.append(fn)
    return out


@dataclass
class Persistence:
    """How a flow class persists its state with ``@persist``."""

    #: the class-level ``@persist`` decorator, if any (state reloads on ``inputs={"id": ...}``)
    class_level: cst.Decorator | None = None
    #: method-level ``@persist`` decorators by method name (state never reloads)
    method_level: dict[str, cst.Decorator] = field(default_factory=dict)
    #: the module each decorator above is written in
    modules: dict[int, ModuleFacts] = field(default_factory=dict)

    @property
    def any(self) -> bool:
        return self.class_level is not None or bool(self.method_level)


def persistence_of(cls: ClassInfo, project: ProjectQueries) -> Persistence:
    """``@persist`` on the class (or a project base class) and on its methods."""
    out = Persistence()
    for klass in project_bases(cls, project):
        resolver = project.resolver(klass.module)
        for dec in klass.node.decorators:
            target = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
            if out.class_level is None and resolver.names(target, None) & PERSIST:
                out.class_level = dec
                out.modules[id(dec)] = klass.module
        for name, fn in klass.methods.items():
            for d in fn.decorators:
                if name not in out.method_level and resolver.names(d.target, None) & PERSIST:
                    out.method_level[name] = d.node
                    out.modules[id(d.node)] = klass.module
    return out


# -- checkpoint configs ---------------------------------------------------------


@dataclass
class OnEvents:
    """What a ``CheckpointConfig``'s ``on_events`` is known to contain."""

    #: literal event names found (``None`` when the value could not be read)
    events: frozenset[str] | None
    #: the expression to point at (the ``on_events=`` value, or the config call when defaulted)
    node: cst.CSTNode
    module: ModuleFacts
    explicit: bool


def _literal_strings(
    expr: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int = 0,
) -> list[tuple[str, cst.CSTNode]] | None:
    """String elements of a list/tuple/set display (following names, ``+`` and ``*spread``)."""
    if depth > 6:
        return None
    if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
        out: list[tuple[str, cst.CSTNode]] = []
        for el in expr.elements:
            if isinstance(el, cst.StarredElement):
                inner = _literal_strings(el.value, scope, module, project, depth + 1)
                if inner is None:
                    return None
                out.extend(inner)
                continue
            text = _string_of(el.value, scope, module, project, depth + 1)
            if text is None:
                return None
            out.append((text, el.value))
        return out
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        left = _literal_strings(expr.left, scope, module, project, depth + 1)
        right = _literal_strings(expr.right, scope, module, project, depth + 1)
        if left is None or right is None:
            return None
        return left + right
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value in ("list", "tuple", "set", "frozenset")
    ):
        if not expr.args:
            return []
        return _literal_strings(expr.args[0].value, scope, module, project, depth + 1)
    if isinstance(expr, cst.Name):
        found = project.resolver(module).binding_value(expr.value, scope, module.order(expr))
        if found is not None and found[0].kind == "assign":
            return _literal_strings(found[0].value, found[1], module, project, depth + 1)
        if found is not None:
            return None
    if isinstance(expr, (cst.Name, cst.Attribute)):
        # ALL_EVENTS imported from a project settings module
        for name in project.resolver(module).names(expr, scope):
            value = module_constant(name, project)
            if value is not None:
                return _literal_strings(value[0], None, value[1], project, depth + 1)
    return None


def _string_of(
    expr: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int,
) -> str | None:
    text = string_value(expr) if not isinstance(expr, cst.FormattedString) else None
    if text is not None:
        return text
    if isinstance(expr, cst.Name) and depth < 6:
        found = project.resolver(module).binding_value(expr.value, scope, module.order(expr))
        if found is not None and found[0].kind == "assign":
            return _string_of(found[0].value, found[1], module, project, depth + 1)
        for name in project.resolver(module).names(expr, scope):
            value = module_constant(name, project)
            if value is not None:
                return _string_of(value[0], None, value[1], project, depth + 1)
    return None


def checkpoint_config_call(
    expr: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int = 0,
) -> tuple[cst.Call, FunctionInfo | None, ModuleFacts] | None:
    """The ``CheckpointConfig(...)`` call an expression's value comes from, with its scope and module:
    inline, through a variable, or returned by a project helper."""
    if depth > 6 or expr is None:
        return None
    if isinstance(expr, cst.Await):
        expr = expr.expression
    resolver = project.resolver(module)
    if isinstance(expr, cst.Call):
        names = resolver.call_names(expr, scope)
        if names & CHECKPOINT_CONFIG:
            return expr, scope, module
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("model_validate", "model_copy"):
            base = resolver.names(expr.func.value, scope)
            if base & CHECKPOINT_CONFIG:
                return expr, scope, module
            if expr.func.attr.value == "model_copy":
                return checkpoint_config_call(expr.func.value, scope, module, project, depth + 1)
        for name in names:
            fn = project.function(name, near=module)
            if fn is None or fn.class_info is not None and fn.name == "__init__":
                continue
            for ret in fn.returns:
                if ret.value is not None:
                    found = checkpoint_config_call(ret.value, fn, fn.module, project, depth + 1)
                    if found is not None:
                        return found
        return None
    if isinstance(expr, cst.Name):
        bound = resolver.binding_value(expr.value, scope, module.order(expr))
        if bound is None or bound[0].kind not in ("assign", "with"):
            return None
        return checkpoint_config_call(bound[0].value, bound[1], module, project, depth + 1)
    return None


def on_events(call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries) -> OnEvents:
    """``on_events`` of a ``CheckpointConfig(...)`` call (or ``CheckpointConfig.model_validate({...})``),
    including ``**options`` dicts and a later ``cfg.on_events = [...]`` on the bound variable."""
    value = _on_events_expr(call, scope, module, project)
    if value is None:
        value = _assigned_on_events(call, scope, module)
    if value is None:
        return OnEvents(frozenset(DEFAULT_ON_EVENTS), call, module, explicit=False)
    strings = _literal_strings(value, scope, module, project)
    return OnEvents(frozenset(s for s, _ in strings) if strings is not None else None, value, module, explicit=True)


def _on_events_expr(
    call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> cst.BaseExpression | None:
    """The ``on_events`` value given to the call: a keyword, or a key of its options dict."""
    arg = keyword(call, "on_events")
    if arg is not None:
        return arg.value
    dicts = []
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "model_validate" and call.args:
        dicts.append(call.args[0].value)
    dicts.extend(a.value for a in call.args if a.star == "**")
    for d in dicts:
        if isinstance(d, cst.Name):
            found = project.resolver(module).binding_value(d.value, scope, module.order(d))
            if found is None or found[0].kind != "assign":
                continue
            d = found[0].value
        if isinstance(d, cst.Dict):
            for key, value in dict_items(d):
                if key == "on_events":
                    return value
        if isinstance(d, cst.Call) and isinstance(d.func, cst.Name) and d.func.value == "dict":
            arg = keyword(d, "on_events")
            if arg is not None:
                return arg.value
    return None


def _assigned_on_events(call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts) -> cst.BaseExpression | None:
    """``cfg = CheckpointConfig(); cfg.on_events = [...]`` in the same scope."""
    parent = module.parent(call)
    if not (
        isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)
    ):
        return None
    var = parent.targets[0].target.value
    body = scope.node.body if scope is not None else module.tree
    found: list[cst.BaseExpression] = []

    class _V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                tgt = t.target
                if (
                    isinstance(tgt, cst.Attribute)
                    and tgt.attr.value == "on_events"
                    and isinstance(tgt.value, cst.Name)
                    and tgt.value.value == var
                ):
                    found.append(node.value)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return scope is not None and node is scope.node

    visit_fast(body, _V())
    return found[-1] if found else None


def checkpoint_enabled(expr: cst.BaseExpression | None) -> bool | None:
    """``checkpoint=`` value: False for ``None``/``False``, True for ``True``, None when it is a config."""
    if expr is None or is_none(expr):
        return False
    b = bool_value(expr)
    if b is not None:
        return b
    return None


def inputs_carry_id(
    expr: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int = 0,
) -> cst.CSTNode | None:
    """The ``"id"`` value in a kickoff's ``inputs=`` (dict display, ``dict(id=...)``, a variable,
    ``{**base, "id": ...}``, ``inputs["id"] = ...``), or None."""
    if expr is None or depth > 5:
        return None
    if isinstance(expr, cst.Dict):
        for key, value in dict_items(expr):
            if key == "id":
                return value
            if key is None:
                inner = inputs_carry_id(value, scope, module, project, depth + 1)
                if inner is not None:
                    return inner
        return None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "dict":
        arg = keyword(expr, "id")
        if arg is not None:
            return arg.value
        for a in expr.args:
            if a.keyword is None:
                inner = inputs_carry_id(a.value, scope, module, project, depth + 1)
                if inner is not None:
                    return inner
        return None
    if isinstance(expr, cst.Name):
        found = project.resolver(module).binding_value(expr.value, scope, module.order(expr))
        if found is not None and found[0].kind == "assign":
            inner = inputs_carry_id(found[0].value, found[1], module, project, depth + 1)
            if inner is not None:
                return inner
        if scope is not None:
            return _subscript_id_assignment(scope, expr.value)
    return None


def inputs_only_id(
    expr: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int = 0,
) -> bool:
    """Do a kickoff's ``inputs=`` carry the persisted id and nothing else (``{"id": flow_id}``)?
    A dict that also brings new inputs (``{"id": sid, "message": text}``) is a new turn of a
    long-lived flow rather than a resume of an interrupted one."""
    if expr is None or depth > 5:
        return False
    if isinstance(expr, cst.Dict):
        keys = [k for k, _ in dict_items(expr)]
        return keys == ["id"]
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "dict":
        return [a.keyword.value for a in expr.args if a.keyword is not None] == ["id"] and all(
            a.keyword is not None for a in expr.args
        )
    if isinstance(expr, cst.Name):
        found = project.resolver(module).binding_value(expr.value, scope, module.order(expr))
        if found is not None and found[0].kind == "assign":
            if scope is not None and _subscript_keys_assigned(scope, expr.value) - {"id"}:
                return False
            return inputs_only_id(found[0].value, found[1], module, project, depth + 1)
    return False


def _subscript_keys_assigned(fn: FunctionInfo, name: str) -> set[str]:
    return set(subscript_keys_assigned(fn.node.body, name))


def _subscript_id_assignment(fn: FunctionInfo, name: str) -> cst.CSTNode | None:
    found: list[cst.CSTNode] = []

    class _V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                tgt = t.target
                if (
                    isinstance(tgt, cst.Subscript)
                    and isinstance(tgt.value, cst.Name)
                    and tgt.value.value == name
                    and tgt.slice
                ):
                    el = tgt.slice[0].slice
                    if isinstance(el, cst.Index) and string_value(el.value) == "id":
                        found.append(node.value)

    visit_fast(fn.node.body, _V())
    return found[0] if found else None


def is_kickoff(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in KICKOFF_METHODS


def rekick_id(
    call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> cst.CSTNode | None:
    """The persisted id a kickoff runs a flow with: ``inputs={"id": ...}`` or ``restore_from_state_id=``."""
    if not is_kickoff(call):
        return None
    found = inputs_carry_id(argument(call, 0, "inputs"), scope, module, project)
    if found is not None:
        return found
    fork = keyword(call, "restore_from_state_id")
    if fork is not None and not is_none(fork.value):
        return fork.value
    return None


@dataclass(frozen=True)
class Hydration:
    """A hand-rolled restore: a new Flow instance whose ``state`` is filled from stored data."""

    flow: ClassInfo
    #: the first assignment that copies stored data into the state
    node: cst.CSTNode


def _root_name(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _state_owner(target: cst.BaseExpression) -> str | None:
    """``flow`` for ``flow.state`` / ``flow.state.field``; None otherwise."""
    cur = target
    while isinstance(cur, cst.Attribute):
        if cur.attr.value == "state" and isinstance(cur.value, cst.Name):
            return cur.value.value
        cur = cur.value
    return None


def hydration_in(block: cst.CSTNode, fn: FunctionInfo, project: ProjectQueries) -> Hydration | None:
    """Does ``block`` (in ``fn``) restore a Flow's state by hand? Apps that keep a flow's state in
    their own store (Redis, a leads table, a JSON snapshot) rebuild it as ``flow = MyFlow()``
    followed by ``flow.state.stage = row.stage`` or ``setattr(flow.state, key, value)`` over the
    stored fields -- CrewAI's persistence is not involved, but it is a restore all the same, and
    a fallback to a bare ``MyFlow()`` forgets the user's progress. Copying a bare parameter or a
    constant (``flow.state.user = user_id``) initialises rather than restores, so it does not count;
    a field of a record (``row.stage``, ``saved["stage"]``) does."""
    module = fn.module
    resolver = project.resolver(module)
    params = set(fn.param_names())
    found: list[tuple[str, cst.CSTNode]] = []

    def loaded(value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Call):
            # ``str(row.stage)``, ``Model(**data)``: what the call is given
            return any(loaded(a.value) or a.star == "**" for a in value.args)
        if not isinstance(value, (cst.Attribute, cst.Subscript, cst.Name)):
            return False
        root = _root_name(value)
        if root is None or root == "self":
            return False
        if root in params:
            # ``row.stage`` of a record handed in is stored data; the bare parameter is an input
            return not isinstance(value, cst.Name)
        if isinstance(value, cst.Name):
            # a loop variable over stored items: ``for key, value in data.items()``
            bound = resolver.binding_value(root, fn, None)
            return bound is not None and bound[0].kind == "for"
        bound = resolver.binding_value(root, fn, None)
        return bound is not None and bound[0].kind in ("assign", "for", "with")

    class _V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                owner = _state_owner(t.target)
                if owner is not None and loaded(node.value):
                    found.append((owner, node))

        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "setattr" and len(node.args) == 3:
                owner = _state_owner(node.args[0].value)
                key, value = node.args[1].value, node.args[2].value
                if owner is not None and string_value(key) is None and loaded(value):
                    found.append((owner, node))

    visit_fast(block, _V())
    for owner, node in found:
        bound = resolver.binding_value(owner, fn, None)
        if bound is None or not isinstance(bound[0].value, cst.Call):
            continue
        cls = named_class(bound[0].value.func, bound[1], module, project)
        if cls is not None and is_flow_class(cls, project):
            return Hydration(cls, node)
    return None
