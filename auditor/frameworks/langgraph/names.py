"""Everything resume-audit knows about LangGraph's names, in one place.

Checked against the installed source of langgraph 1.2.24,
langgraph-checkpoint 4.3.2, langgraph-checkpoint-sqlite 3.1.2 and
langgraph-checkpoint-postgres 3.2.0 (2026-12-02); every name below is either
where the object is defined or a documented re-export users import from.
Rules ask this module, never spell framework names themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst

from resume_audit.analysis.deployments import Deployment, deployment_of
from resume_audit.analysis.flow.engine import flow_of, returns_receiver
from resume_audit.analysis.flow.values import Bound, Container, Function, Made, Partial, Value
from resume_audit.analysis.queries import ProjectQueries
from resume_audit.facts.model import CallInfo, DecoratorInfo, FunctionInfo, ModuleFacts
from resume_audit.facts.syntax import argument, bool_value, is_none, receiver, string_value

PACKAGES = ("langgraph",)

#: ``interrupt(value)`` parks the run; on resume the whole node re-runs from its start.
#: ``raise NodeInterrupt(...)`` is the legacy dynamic interrupt (langgraph.errors): it parks the
#: run the same way and the node re-runs from its start on resume
INTERRUPT = frozenset({"langgraph.types.interrupt", "langgraph.errors.NodeInterrupt"})

#: ``Command(resume=...)`` delivers a human's answer.
COMMAND = frozenset({"langgraph.types.Command"})

#: The graph builder (defined in langgraph.graph.state, re-exported by langgraph.graph).
STATE_GRAPH = frozenset({"langgraph.graph.StateGraph", "langgraph.graph.state.StateGraph"})

#: Functional API. ``@entrypoint`` bodies re-run on resume; only ``@task`` results are memoised.
ENTRYPOINT = frozenset({"langgraph.func.entrypoint"})
TASK = frozenset({"langgraph.func.task"})

#: In-process savers: parked runs die with the process. ``MemorySaver`` is the
#: older name of ``InMemorySaver`` (same class in 1.2.24).
IN_MEMORY_SAVERS = frozenset({"langgraph.checkpoint.memory.InMemorySaver", "langgraph.checkpoint.memory.MemorySaver"})
#: RA601's fix: the durable saver of the same (sync) family, where its checkpoints are kept, and
#: the package it comes from. ``SqliteSaver`` creates its tables on first use (langgraph-checkpoint-sqlite
#: 3.x: ``setup()`` runs inside ``cursor()``); the connection is shared by the executor's threads.
DURABLE_SAVER_IMPORT = "from langgraph.checkpoint.sqlite import SqliteSaver"
DURABLE_SAVER_PACKAGE = "langgraph-checkpoint-sqlite"
DURABLE_SAVER_ENV = "LANGGRAPH_CHECKPOINT_DB"
DURABLE_SAVER_DEFAULT_PATH = "checkpoints.sqlite"
#: a sync saver raises NotImplementedError on these: a program that calls them needs the async saver
ASYNC_GRAPH_CALL_WORDS = (".ainvoke(", ".astream(", ".astream_events(", ".abatch(", ".aget_state(", ".aupdate_state(")

DURABLE_SAVERS = frozenset(
    {
        "langgraph.checkpoint.sqlite.SqliteSaver",
        "langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver",
        "langgraph.checkpoint.postgres.PostgresSaver",
        "langgraph.checkpoint.postgres.aio.AsyncPostgresSaver",
    }
)

BASE_SAVER = frozenset({"langgraph.checkpoint.base.BaseCheckpointSaver"})

#: builder methods that return the builder (``StateGraph(S).add_node(...).add_edge(...)``), and a compiled
#: graph's that return a configured copy of it (checked against langgraph 1.2.24: ``StateGraph.add_node`` and
#: friends end in ``return self``; ``Pregel.with_config`` returns a copy with the same nodes and saver)
BUILDER_METHODS = (
    "add_node",
    "add_edge",
    "add_conditional_edges",
    "add_sequence",
    "set_entry_point",
    "set_finish_point",
    "set_conditional_entry_point",
    "validate",
)
GRAPH_COPY_METHODS = ("with_config", "with_retry", "with_listeners", "with_types", "copy")

#: Methods of a compiled graph that take ``(input, config)`` and run it.
RUN_METHODS = frozenset({"invoke", "ainvoke", "stream", "astream", "astream_events", "astream_log"})

#: Read-only (in stock LangGraph) inspection of a thread's latest checkpoint.
GET_STATE_METHODS = frozenset({"get_state", "aget_state"})

#: ``builder.compile(checkpointer=...)``; ``add_node(name, fn)`` / ``add_node(fn)``.
COMPILE_METHOD = "compile"
ADD_NODE_METHOD = "add_node"

#: remit-contract 0.1.2 (``import remit; remit.wrap(SaverClass, ...)``) repairs
#: FD when a config names a checkpoint_id (or, with
#: ``fork_on_explicit_checkpoint=False``, when it carries ``remit_fork``),
#: validates state with ``validator=``, and gates consumption across processes
#: with ``cross_process_gate=True`` (inspection then needs ``remit_inspect``).
REMIT_WRAP = frozenset({"remit.wrap", "remit.langgraph_shim.wrap"})
REMIT_FORK_KEY = "remit_fork"
REMIT_INSPECT_KEY = "remit_inspect"


returns_receiver(STATE_GRAPH, BUILDER_METHODS)
returns_receiver({f"{t}.compile" for t in STATE_GRAPH}, GRAPH_COPY_METHODS)


def is_fork_discriminator(configurable_key: str) -> bool:
    """A configurable key that tells a saver "this resume is a fork, not a retry"."""
    return configurable_key == REMIT_FORK_KEY or "fork" in configurable_key.lower()


# -- graph structure ---------------------------------------------------------
# Which expression is a compiled graph, with which checkpointer, built from
# which StateGraph and state schema, with which node functions.


@dataclass(frozen=True)
class CompiledGraph:
    """``builder.compile(checkpointer=...)`` and what we could learn about it."""

    compile_call: cst.Call
    module: ModuleFacts
    scope: FunctionInfo | None
    #: the checkpointer expression, None when compiled without one
    checkpointer: cst.BaseExpression | None
    #: the ``StateGraph(...)`` construction, when the builder could be followed
    builder_call: cst.Call | None
    #: the variable the builder is bound to (for finding ``add_node`` calls)
    builder_name: str | None
    #: the deployment manifest entry serving this module (``langgraph.json``), if any
    deployment: Deployment | None = None
    #: what the builder may be (the value-flow engine's objects: ``StateGraph(...)``, an instance of a subclass)
    builders: tuple[Value, ...] = ()
    #: where ``checkpointer`` is evaluated when it is not the compile call's own argument (a saver assigned
    #: as ``graph.checkpointer = ...`` at start-up)
    checkpointer_scope: FunctionInfo | None = None
    checkpointer_module: ModuleFacts | None = None

    @property
    def saver_scope(self) -> FunctionInfo | None:
        return self.checkpointer_scope if self.checkpointer_module is not None else self.scope

    @property
    def saver_module(self) -> ModuleFacts:
        return self.checkpointer_module or self.module

    @property
    def state_schema(self) -> cst.BaseExpression | None:
        if self.builder_call is None:
            return None
        return argument(self.builder_call, 0, "state_schema")

    @property
    def persisted(self) -> bool:
        """Compiled with a checkpointer (``None``/``False`` mean none), or deployed on the
        LangGraph server, which supplies a durable one."""
        if self.deployment is not None and (self.checkpointer is None or is_none(self.checkpointer)):
            return True
        cp = self.checkpointer
        return cp is not None and not is_none(cp) and bool_value(cp) is not False


def _follow_to_call(
    expr: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int = 0,
) -> tuple[cst.Call, FunctionInfo | None] | None:
    """Follow names (and awaits) to the call that produced the value, with that call's scope."""
    if depth > 6:
        return None
    if isinstance(expr, cst.Await):
        expr = expr.expression
    if isinstance(expr, cst.Call):
        return expr, scope
    if isinstance(expr, cst.Name):
        found = project.resolver(module).binding_value(expr.value, scope, None)
        if found is None:
            return None
        binding, owner = found
        if binding.kind not in ("assign", "with"):
            return None
        return _follow_to_call(binding.value, owner, module, project, depth + 1)
    return None


def constructor_call(
    expr: cst.BaseExpression | None, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> tuple[cst.Call, FunctionInfo | None] | None:
    """The call an expression's value came from (``saver = SqliteSaver(conn)`` -> that call) and its scope."""
    return _follow_to_call(expr, scope, module, project)


def made_values(
    expr: cst.BaseExpression | None, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> list[Made]:
    """The library-made objects ``expr`` may hold, wherever they were made (value-flow engine), in a
    stable order (by module and position)."""
    if expr is None:
        return []
    flow = flow_of(project)
    made = [v for v in flow.values(expr, scope, module) if isinstance(v, Made) and v.call is not None]
    return sorted(
        made,
        key=lambda m: (
            (str(m.module.path), m.module.order(m.call)) if m.module is not None and m.call is not None else ("", 0)
        ),
    )


def is_compile_call(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == COMPILE_METHOD


def _is_builder(value: Value, project: ProjectQueries) -> bool:
    return flow_of(project).type_name(value) in STATE_GRAPH


def compiled_graph(
    call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> CompiledGraph | None:
    """Describe ``call`` if it is ``<StateGraph builder>.compile(...)``: the builder may reach the
    call any way the value-flow engine follows (a parameter, a factory, a subclass of StateGraph).
    A compile with no checkpointer whose graph is given one as an attribute at start-up
    (``graph.checkpointer = saver``) is checkpointed by that saver."""
    builder = receiver(call)
    if builder is None or not is_compile_call(call):
        return None
    flow = flow_of(project)
    builders = tuple(v for v in flow.values(builder, scope, module) if _is_builder(v, project))
    if not builders:
        return None
    builder_call = next(
        (b.call for b in builders if isinstance(b, Made) and b.call is not None and b.module is module), None
    )
    builder_name = builder.value if isinstance(builder, cst.Name) else None
    cp = argument(call, 0, "checkpointer")
    cp_scope: FunctionInfo | None = None
    cp_module: ModuleFacts | None = None
    if cp is not None and _parameter_never_given(cp, scope, project):
        cp = None
    if cp is None or is_none(cp):
        compiled = next((v for v in flow.values(call, scope, module) if isinstance(v, Made) and v.call is call), None)
        stores = flow.stores(compiled, "checkpointer") if compiled is not None else []
        for value, store_scope, store_module in stores:
            if not is_none(value):
                cp, cp_scope, cp_module = value, store_scope, store_module
                break
    return CompiledGraph(
        call,
        module,
        scope,
        cp,
        builder_call,
        builder_name,
        deployment_of(module, project, "langgraph-server"),
        builders,
        cp_scope,
        cp_module,
    )


def _parameter_never_given(expr: cst.BaseExpression, scope: FunctionInfo | None, project: ProjectQueries) -> bool:
    """``def create_graph(checkpointer=None): return builder.compile(checkpointer=checkpointer)`` and
    every call of the factory in the project leaves the parameter out or passes ``None``: the graphs it
    builds have no checkpointer. A factory nothing in the project calls (a library's API) keeps its
    parameter, and so does one called with ``**kwargs`` the engine cannot read."""
    if scope is None or not isinstance(expr, cst.Name):
        return False
    param = scope.param(expr.value)
    if param is None or param.star or param.default is None or not is_none(param.default):
        return False
    if any(b.name == expr.value and b.kind == "assign" for b in scope.bindings):
        return False
    flow = flow_of(project)
    callers = flow.callers(scope)
    if not callers or any(a.star == "**" and not isinstance(a.value, cst.Dict) for c in callers for a in c.node.args):
        return False
    return all(is_none(value) for value, *_ in flow.arguments(scope, expr.value))


def graph_of(
    expr: cst.BaseExpression, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> CompiledGraph | None:
    """The compiled graph an expression (``graph`` in ``graph.invoke``) may hold: whatever way the
    value-flow engine follows it there (names, factories, registries, attributes, parameters)."""
    for made in made_values(expr, scope, module, project):
        if made.call is not None and made.module is not None and is_compile_call(made.call):
            graph = compiled_graph(made.call, made.scope, made.module, project)
            if graph is not None:
                return graph
    return None


def node_target(add_node: cst.Call) -> cst.BaseExpression | None:
    """What an ``add_node`` call registers: ``add_node("name", fn)`` / ``add_node("name", action=fn)``
    or ``add_node(fn)`` (named after the function)."""
    action = argument(add_node, 1, "action")
    if action is not None:
        return action
    positional = [a.value for a in add_node.args if a.keyword is None]
    return positional[0] if len(positional) == 1 else None


def node_functions(graph: CompiledGraph, project: ProjectQueries) -> list[tuple[cst.Call, FunctionInfo | None]]:
    """``add_node`` calls on the graph's builder in the same scope, with the node function when resolvable."""
    if graph.builder_name is None:
        return []
    fn_calls = graph.scope.calls if graph.scope is not None else graph.module.module_calls
    out: list[tuple[cst.Call, FunctionInfo | None]] = []
    resolver = project.resolver(graph.module)
    for info in fn_calls:
        f = info.node.func
        if not (isinstance(f, cst.Attribute) and f.attr.value == ADD_NODE_METHOD):
            continue
        if not (isinstance(f.value, cst.Name) and f.value.value == graph.builder_name):
            continue
        target = node_target(info.node)
        fn = None
        if target is not None:
            for name in resolver.names(target, graph.scope):
                fn = project.function(name, near=graph.module)
                if fn is not None:
                    break
        out.append((info.node, fn))
    return out


def remit_wrap_call(
    expr: cst.BaseExpression | None, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> cst.Call | None:
    """The ``remit.wrap(...)`` call a checkpointer expression comes from, if it does."""
    for made in made_values(expr, scope, module, project):
        if made.type in REMIT_WRAP:
            return made.call
    return None


# -- durability, functional API, node discovery (added for RA103/RA104/RA106/RA501/RA601) ------
# Checked against langgraph 1.2.24 / langgraph-checkpoint 4.3.2 (2026-12-02):
# ``Pregel.stream/astream/invoke/ainvoke`` take ``durability: "sync" | "async" |
# "exit"`` (default: ``config["configurable"]["__pregel_durability"]``, else
# ``"async"``); the deprecated ``checkpoint_during=False`` means ``"exit"``.
# ``StateGraph.compile()`` has no ``durability`` parameter (TypeError), and
# ``graph.with_config(durability="exit")`` puts a top-level config key that the
# loop never reads (measured: the run still checkpoints every step); only the
# configurable key reaches the loop. ``batch``/``abatch`` pass their kwargs to
# ``invoke``; ``stream_events``/``astream_events`` to ``astream``.

DURABILITY_KWARG = "durability"
CHECKPOINT_DURING_KWARG = "checkpoint_during"
#: ``CONFIG_KEY_DURABILITY`` in langgraph._internal._constants
DURABILITY_CONFIG_KEY = "__pregel_durability"
DURABILITY_EXIT = "exit"
DURABILITY_RUN_METHODS = RUN_METHODS | frozenset(
    {"batch", "abatch", "batch_as_completed", "abatch_as_completed", "stream_events"}
)
ADD_SEQUENCE_METHOD = "add_sequence"
#: ``update_state`` / ``aupdate_state`` / ``bulk_update_state``: with ``invoke(None, config)`` a resume form.
UPDATE_STATE_METHODS = frozenset({"update_state", "aupdate_state", "bulk_update_state", "abulk_update_state"})
#: ``BaseCheckpointSaver.put_writes`` / ``aput_writes`` and ``put`` / ``aput``.
PUT_WRITES_METHODS = ("put_writes", "aput_writes")
PUT_METHODS = ("put", "aput")
#: Stock savers users subclass (their ``put_writes`` is synchronous and durable on return).
STOCK_SAVERS = (
    BASE_SAVER
    | IN_MEMORY_SAVERS
    | DURABLE_SAVERS
    | frozenset(
        {
            "langgraph.checkpoint.base.BaseCheckpointSaver",
            "langgraph.checkpoint.sqlite.aio.AsyncSqliteSaver",
            "langgraph.checkpoint.postgres.base.BasePostgresSaver",
            "langgraph.checkpoint.postgres.shallow.ShallowPostgresSaver",
        }
    )
)


def decorator_names(fn: FunctionInfo, project: ProjectQueries) -> list[tuple[set[str], DecoratorInfo]]:
    """(qualified names of the decorator, DecoratorInfo) for each decorator of ``fn``."""
    resolver = project.resolver(fn.module)
    return [(resolver.names(d.target, fn.parent), d) for d in fn.decorators]


def is_task(fn: FunctionInfo, project: ProjectQueries) -> bool:
    """Is ``fn`` decorated with ``@task`` / ``@task(...)`` (langgraph.func.task)?"""
    return any(names & TASK for names, _ in decorator_names(fn, project))


def calls_task(call: cst.Call, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries) -> bool:
    """Does ``call`` invoke a task: a project function decorated ``@task``, or a
    name bound to ``task(fn)`` / ``task(...)(fn)``? (Its result is memoised.)"""
    names = project.resolver(module).call_names(call, scope)
    if names & TASK:
        return True
    for name in names:
        fn = project.function(name, near=module)
        if fn is not None and is_task(fn, project):
            return True
    return False


@dataclass(frozen=True)
class Entrypoint:
    """A function turned into a workflow by ``@entrypoint(checkpointer=...)``."""

    function: FunctionInfo
    #: the decorator's call, or the ``entrypoint(...)(fn)`` call
    node: cst.CSTNode
    checkpointer: cst.BaseExpression | None

    @property
    def persisted(self) -> bool:
        cp = self.checkpointer
        return cp is not None and not is_none(cp) and bool_value(cp) is not False


def entrypoint_of(fn: FunctionInfo, project: ProjectQueries) -> Entrypoint | None:
    """``fn`` decorated ``@entrypoint(...)`` (or wrapped by ``entrypoint(...)(fn)`` at module level)."""
    for names, dec in decorator_names(fn, project):
        if names & ENTRYPOINT:
            cp = argument(dec.call, 0, "checkpointer") if dec.call is not None else None
            return Entrypoint(fn, dec.node, cp)
    resolver = project.resolver(fn.module)
    for info in fn.module.module_calls:
        outer = info.node
        if not (isinstance(outer.func, cst.Call) and outer.args):
            continue
        inner = outer.func
        if not (resolver.call_names(inner, None) & ENTRYPOINT):
            continue
        target = outer.args[0].value
        if isinstance(target, cst.Name) and fn.parent is None and fn.class_info is None and target.value == fn.name:
            return Entrypoint(fn, outer, argument(inner, 0, "checkpointer"))
    return None


@dataclass(frozen=True)
class NodeTarget:
    """One node a builder is given (``add_node`` / ``add_sequence``): the registering call, what it
    registers, and the project function that runs, when it is one."""

    call: CallInfo
    target: cst.BaseExpression
    function: FunctionInfo | None


def node_targets(graph: CompiledGraph, project: ProjectQueries) -> list[NodeTarget]:
    """Every node registered on the graph's builder, wherever the builder was handed (a helper in
    another module that adds nodes to the builder it is given counts)."""
    flow = flow_of(project)
    out: list[NodeTarget] = []
    seen: set[int] = set()
    calls = [
        c
        for b in graph.builders
        for method in (ADD_NODE_METHOD, ADD_SEQUENCE_METHOD)
        for c in flow.method_calls(b, method)
    ]
    for info in sorted({id(c.node): c for c in calls}.values(), key=lambda c: (str(c.module.path), c.order)):
        method = info.node.func.attr.value if isinstance(info.node.func, cst.Attribute) else ""
        targets: list[cst.BaseExpression] = []
        if method == ADD_NODE_METHOD:
            target = node_target(info.node)
            if target is not None:
                targets.append(target)
        else:
            seq = argument(info.node, 0, "nodes")
            if isinstance(seq, (cst.List, cst.Tuple)):
                for el in seq.elements:
                    v = el.value
                    if isinstance(v, cst.Tuple) and len(v.elements) == 2:
                        v = v.elements[1].value
                    targets.append(v)
        for target in targets:
            fn = _node_function(flow.values(target, info.function, info.module))
            if fn is not None and id(fn) in seen:
                continue
            if fn is not None:
                seen.add(id(fn))
            out.append(NodeTarget(info, target, fn))
    return out


def _node_function(values: frozenset[Value]) -> FunctionInfo | None:
    """The project function a node value runs: a function, a bound method, a partial of one."""
    for value in sorted(values, key=lambda v: type(v).__name__):
        while isinstance(value, Partial):
            value = value.target
        if isinstance(value, (Function, Bound)):
            return value.fn
    return None


def all_node_functions(graph: CompiledGraph, project: ProjectQueries) -> list[tuple[cst.Call, FunctionInfo | None]]:
    """(``add_node`` / ``add_sequence`` call, node function when it is a project function) for every
    node of the graph's builder (see :func:`node_targets`)."""
    return [(t.call.node, t.function) for t in node_targets(graph, project)]


#: Prebuilt tool execution: a ``ToolNode(tools)`` node runs each tool call of the last
#: AI message; ``create_react_agent(model, tools, checkpointer=...)`` builds a graph with one.
#: A tool's effect re-runs like any node's when the tools node re-runs on resume.
TOOL_NODE = frozenset({"langgraph.prebuilt.ToolNode", "langgraph.prebuilt.tool_node.ToolNode"})
CREATE_REACT_AGENT = frozenset(
    {
        "langgraph.prebuilt.create_react_agent",
        "langgraph.prebuilt.chat_agent_executor.create_react_agent",
        # LangChain 1.x builds the same LangGraph agent (checked against langchain 1.5.2:
        # ``create_agent(model, tools=None, *, middleware=(), checkpointer=None, interrupt_before=None, ...)``)
        "langchain.agents.create_agent",
        "langchain.agents.factory.create_agent",
    }
)
#: LangChain 1.x middleware that parks the agent with ``interrupt()`` before gated tool
#: calls (langchain 1.5.2, ``langchain.agents.middleware.human_in_the_loop``).
HITL_MIDDLEWARE = frozenset(
    {
        "langchain.agents.middleware.HumanInTheLoopMiddleware",
        "langchain.agents.middleware.human_in_the_loop.HumanInTheLoopMiddleware",
    }
)


def tool_functions(
    expr: cst.BaseExpression | None,
    scope: FunctionInfo | None,
    module: ModuleFacts,
    project: ProjectQueries,
    depth: int = 0,
) -> list[FunctionInfo]:
    """Project functions in a tools list (``[send_email, search]``, anything the value-flow engine
    follows to one: a variable, a module constant, a registry, ``ToolNode(<that>)``)."""
    if expr is None:
        return []
    flow = flow_of(project)
    out: list[FunctionInfo] = []

    def add(values: frozenset[Value], depth: int) -> None:
        if depth > 4:
            return
        for value in sorted(values, key=lambda v: type(v).__name__):
            while isinstance(value, Partial):
                value = value.target
            if isinstance(value, (Function, Bound)):
                if all(f is not value.fn for f in out):
                    out.append(value.fn)
            elif isinstance(value, Container):
                add(flow.items(value, None), depth + 1)
            elif (
                isinstance(value, Made)
                and value.type in TOOL_NODE
                and value.call is not None
                and value.module is not None
            ):
                add(flow.values(argument(value.call, 0, "tools"), value.scope, value.module), depth + 1)

    add(flow.values(expr, scope, module), depth)
    return out


def interrupt_classifier(project: ProjectQueries) -> Callable[[CallInfo, ModuleFacts], str | None]:
    """Classifier for ``project.reach``: is this call LangGraph's ``interrupt()``?"""

    def classify(call: CallInfo, module: ModuleFacts) -> str | None:
        if project.resolver(module).call_names(call.node, call.function) & INTERRUPT:
            return "interrupt"
        return None

    return classify


def saver_kind(graph: CompiledGraph | None, project: ProjectQueries) -> str | None:
    """ "memory" / "durable" for a compiled graph's checkpointer, None when unknown. The checkpointer
    may be one of several savers (a factory's parameter given a durable saver by one caller and left
    to its in-memory default by another): durable when any may be, since that one keeps the state."""
    if graph is None or not graph.persisted:
        return None
    return checkpointer_kind(graph.checkpointer, graph.saver_scope, graph.saver_module, project)


def checkpointer_kind(
    expr: cst.BaseExpression | None, scope: FunctionInfo | None, module: ModuleFacts, project: ProjectQueries
) -> str | None:
    """:func:`saver_kind` of a checkpointer expression (``create_react_agent(..., checkpointer=...)``)."""
    kinds = {_kind_of(saver, project) for saver in made_values(expr, scope, module, project)}
    return "durable" if "durable" in kinds else "memory" if "memory" in kinds else None


def _kind_of(saver: Made, project: ProjectQueries) -> str | None:
    names = {saver.type}
    if saver.type in REMIT_WRAP and saver.call is not None and saver.call.args and saver.module is not None:
        names = {m.type for m in made_values(saver.call.args[0].value, saver.scope, saver.module, project)}
        names |= project.resolver(saver.module).names(saver.call.args[0].value, saver.scope)
    if names & IN_MEMORY_SAVERS:
        return "memory"
    for n in names:
        if (
            n.endswith(".from_conn_string")
            and saver.call is not None
            and string_value(argument(saver.call, 0, "conn_string")) == ":memory:"
        ):
            return "memory"
        if any(n == d or n.startswith(d + ".") for d in DURABLE_SAVERS):
            return "durable"
        if n.startswith("langgraph.checkpoint.") and "Saver" in n:
            return "durable"
    return None
